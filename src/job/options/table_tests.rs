//! One parser test per implemented option (DESIGN §5): a valid, non-default
//! value sets the expected field, and a garbage value is rejected. The
//! table must name every implemented option, so a new option cannot be
//! added without its test.

use super::{all, apply, lookup, Kind};
use crate::job::engine_kind::EngineKind;
use crate::job::spec::*;
use crate::job::validate::engine_mismatch;
use crate::job::value::{SizeOrPercent, SplitEntry};
use crate::job::JobError;

type Check = fn(&JobSpec) -> bool;

const fn rng(lo: u64, hi: u64) -> BlockSizes {
    BlockSizes::Range { lo, hi }
}

/// (option, valid value, what it must set). Values exercise the special
/// forms: units, expressions, per-direction lists, aliases of choices.
const SAMPLES: &[(&str, &str, Check)] = &[
    // Job control.
    ("name", "renamed", |s| s.name == "renamed"),
    ("description", "a test", |s| s.description == "a test"),
    ("numjobs", "(2*2)", |s| s.ctl.numjobs == 4),
    ("stonewall", "1", |s| s.ctl.stonewall),
    ("new_group", "1", |s| s.ctl.new_group),
    ("wait_for", "other", |s| {
        s.ctl.wait_for.as_deref() == Some("other")
    }),
    ("exitall", "1", |s| s.ctl.exitall),
    ("exitall_on_error", "1", |s| s.ctl.exitall_on_error),
    ("exit_what", "stonewall", |s| {
        s.ctl.exit_what == ExitWhat::Stonewall
    }),
    ("ignore_error", "EAGAIN,ENOSPC:122", |s| {
        s.ctl.ignore_error == [Some(vec![11]), Some(vec![28, 122]), None]
    }),
    ("error_dump", "0", |s| !s.ctl.error_dump),
    ("flow", "8", |s| s.ctl.flow == 8),
    ("dedupe_global", "1", |s| s.buf.dedupe_global),
    ("mem", "mmap:/dev/shm/iomark-buf", |s| {
        s.buf.mem == MemType::Mmap(Some("/dev/shm/iomark-buf".into()))
    }),
    ("hugepage-size", "1g", |s| s.buf.hugepage_size == 1 << 30),
    ("lockmem", "64m", |s| s.buf.lockmem == 64 << 20),
    ("numa_cpu_nodes", "0", |s| {
        s.ctl.numa_cpu_nodes == Some(Nodes::List(vec![0]))
    }),
    ("numa_mem_policy", "bind:0", |s| {
        s.ctl.numa_mem_policy
            == Some(MemPolicy {
                mode: MemPolicyMode::Bind,
                nodes: Nodes::List(vec![0]),
            })
    }),
    ("flow_id", "2", |s| s.ctl.flow_id == 2),
    ("flow_sleep", "1000", |s| s.ctl.flow_sleep_us == 1000),
    ("threads", "1", |s| s.ctl.threads_given),
    (
        "exec_prerun",
        "sync; echo 3 > /proc/sys/vm/drop_caches",
        |s| s.ctl.exec_prerun.as_deref() == Some("sync; echo 3 > /proc/sys/vm/drop_caches"),
    ),
    ("exec_postrun", "echo done", |s| {
        s.ctl.exec_postrun.as_deref() == Some("echo done")
    }),
    ("continue_on_error", "1", |s| {
        s.ctl.continue_on_error == "all"
    }),
    ("thread", "1", |s| s.ctl.thread),
    ("kb_base", "1000", |s| s.ctl.kb_base == 1000),
    ("unit_base", "8", |s| s.ctl.unit_base == 8),
    ("cpus_allowed", "0,2-3", |s| {
        s.ctl.cpus_allowed.as_deref() == Some(&[0, 2, 3][..])
    }),
    ("cpumask", "0x5", |s| {
        s.ctl.cpus_allowed.as_deref() == Some(&[0, 2][..])
    }),
    ("cpus_allowed_policy", "split", |s| {
        s.ctl.cpus_allowed_policy == CpusPolicy::Split
    }),
    ("nice", "-5", |s| s.ctl.nice == -5),
    ("prio", "3", |s| s.ctl.prio == Some(3)),
    ("prioclass", "2", |s| s.ctl.prioclass == Some(2)),
    // Files.
    ("filename", "a\\:b:c", |s| s.file.filenames == ["a:b", "c"]),
    ("directory", "/tmp/x:/tmp/y", |s| {
        s.file.directories == ["/tmp/x", "/tmp/y"]
    }),
    ("filename_format", "f.$jobnum", |s| {
        s.file.filename_format == "f.$jobnum"
    }),
    ("unique_filename", "0", |s| !s.file.unique_filename),
    ("create_fsync", "0", |s| !s.file.create_fsync),
    ("ioscheduler", "mq-deadline", |s| {
        s.file.ioscheduler.as_deref() == Some("mq-deadline")
    }),
    ("opendir", "/srv/data", |s| {
        s.file.opendir.as_deref() == Some("/srv/data")
    }),
    ("write_hint", "long", |s| s.file.write_hint == 4),
    ("fadvise_hint", "random", |s| {
        s.file.fadvise_hint == FadviseHint::Random
    }),
    ("nrfiles", "4", |s| s.file.nrfiles == 4),
    ("openfiles", "2", |s| s.file.openfiles == 2),
    ("file_service_type", "sequential:8", |s| {
        s.file.file_service == FileService::Sequential(8)
    }),
    ("size", "1.5m", |s| {
        s.file.size == Some(SizeOrPercent::Bytes(1_572_864))
    }),
    ("io_size", "50%", |s| {
        s.file.io_size == Some(SizeOrPercent::Percent(50.0))
    }),
    ("filesize", "16k:4k", |s| {
        s.file.filesize == Some((4096, 16384))
    }),
    ("offset_align", "64k", |s| s.file.offset_align == 65536),
    ("offset", "(1m+4k)", |s| {
        s.file.offset == SizeOrPercent::Bytes(1_052_672)
    }),
    ("offset_increment", "1g", |s| {
        s.file.offset_increment == SizeOrPercent::Bytes(1 << 30)
    }),
    ("number_ios", "1k", |s| s.file.number_ios == 1024),
    ("fill_device", "1", |s| s.file.fill_device),
    ("file_append", "1", |s| s.file.file_append),
    ("create_on_open", "1", |s| s.file.create_on_open),
    ("create_only", "1", |s| s.file.create_only),
    ("create_serialize", "0", |s| !s.file.create_serialize),
    ("allow_file_create", "0", |s| !s.file.allow_file_create),
    ("allow_mounted_write", "1", |s| s.file.allow_mounted_write),
    ("allow_destroy_data", "1", |s| s.file.allow_destroy_data),
    ("allow_special_files", "1", |s| s.file.allow_special_files),
    ("pre_read", "1", |s| s.file.pre_read),
    ("overwrite", "1", |s| s.file.overwrite),
    ("fallocate", "keep", |s| {
        s.file.fallocate == FallocateMode::Keep
    }),
    ("unlink", "1", |s| s.file.unlink),
    ("unlink_each_loop", "1", |s| s.file.unlink_each_loop),
    // I/O pattern.
    ("rw", "randrw:4", |s| {
        s.io.rw == RwPattern::RandRw && s.io.rw_nr == 4
    }),
    ("rw_sequencer", "identical", |s| {
        s.io.rw_sequencer == RwSequencer::Identical
    }),
    ("rwmixread", "70", |s| s.io.rwmixread == 70.0),
    ("rwmixwrite", "30", |s| s.io.rwmixread == 70.0),
    ("bs", "(2*4k),64k", |s| {
        s.io.bs == [rng(8192, 8192), rng(65536, 65536), rng(8192, 8192)]
    }),
    ("bsrange", "1k-8k,,512-1k", |s| {
        s.io.bs == [rng(1024, 8192), rng(4096, 4096), rng(512, 1024)]
    }),
    ("bssplit", "4k/75:64k/", |s| {
        s.io.bs[0]
            == BlockSizes::Split(vec![
                SplitEntry {
                    lo: 4096,
                    hi: 4096,
                    perc: 75.0,
                },
                SplitEntry {
                    lo: 65536,
                    hi: 65536,
                    perc: 25.0,
                },
            ])
    }),
    ("blockalign", "8k,16k", |s| {
        s.io.blockalign == [Some(8192), Some(16384), Some(8192)]
    }),
    ("bs_unaligned", "1", |s| s.io.bs_unaligned),
    ("bs_is_seq_rand", "1", |s| s.io.bs_is_seq_rand),
    ("norandommap", "1", |s| s.io.norandommap),
    ("softrandommap", "1", |s| s.io.softrandommap),
    ("randrepeat", "0", |s| !s.io.randrepeat),
    ("allrandrepeat", "1", |s| s.io.allrandrepeat),
    ("randseed", "0x10", |s| s.io.randseed == Some(16)),
    ("random_generator", "lfsr", |s| {
        s.io.random_generator == RandomGenerator::Lfsr
    }),
    ("random_distribution", "pareto:0.3", |s| {
        s.io.random_distribution[0]
            == RandomDistribution::Pareto {
                h: 0.3,
                center: None,
            }
    }),
    ("percentage_random", "10,20", |s| {
        s.io.percentage_random == [10.0, 20.0, 10.0]
    }),
    ("percentage_sequential", "30", |s| {
        s.io.percentage_random == [70.0, 70.0, 70.0]
    }),
    ("iodepth", "32", |s| s.io.iodepth == 32),
    ("iodepth_batch_submit", "8", |s| {
        s.io.iodepth_batch_submit == 8
    }),
    ("iodepth_batch_complete_min", "4", |s| {
        s.io.iodepth_batch_complete_min == 4
    }),
    ("iodepth_batch_complete_max", "16", |s| {
        s.io.iodepth_batch_complete_max == 16
    }),
    ("iodepth_low", "2", |s| s.io.iodepth_low == 2),
    ("io_submit_mode", "offload", |s| {
        s.io.io_submit_mode == SubmitMode::Offload
    }),
    ("serialize_overlap", "1", |s| s.io.serialize_overlap),
    ("zonemode", "strided", |s| {
        s.io.zonemode == ZoneMode::Strided
    }),
    ("zonesize", "1m", |s| s.io.zonesize == 1 << 20),
    ("zonecapacity", "768k", |s| {
        s.io.zbd.zonecapacity == 768 << 10
    }),
    ("read_beyond_wp", "1", |s| s.io.zbd.read_beyond_wp),
    ("max_open_zones", "8", |s| s.io.zbd.max_open_zones == 8),
    ("job_max_open_zones", "2", |s| {
        s.io.zbd.job_max_open_zones == 2
    }),
    ("ignore_zone_limits", "1", |s| s.io.zbd.ignore_zone_limits),
    ("zone_reset_threshold", "0.5", |s| {
        s.io.zbd.zone_reset_threshold == 0.5
    }),
    ("zone_reset_frequency", "0.25", |s| {
        s.io.zbd.zone_reset_frequency == 0.25
    }),
    ("zonerange", "4m", |s| s.io.zonerange == 4 << 20),
    ("zoneskip", "2m", |s| s.io.zoneskip == 2 << 20),
    ("loops", "3", |s| s.io.loops == 3),
    ("ioengine", "sync", |s| s.io.ioengine == EngineKind::Sync),
    // Engine options.
    ("hipri", "1", |s| s.engine.hipri),
    ("hipri_percentage", "30", |s| {
        s.engine.hipri_percentage == 30
    }),
    ("uncached", "1", |s| s.engine.uncached == 1),
    ("nowait", "1", |s| s.engine.nowait),
    ("fixedbufs", "1", |s| s.engine.fixedbufs),
    // The http engine.
    ("http_host", "127.0.0.1:8333", |s| {
        s.engine.http.host == "127.0.0.1:8333"
    }),
    ("https", "insecure", |s| {
        s.engine.http.https == Https::Insecure
    }),
    ("http_mode", "s3", |s| s.engine.http.mode == HttpMode::S3),
    ("http_user", "u", |s| {
        s.engine.http.user.as_deref() == Some("u")
    }),
    ("http_pass", "p", |s| {
        s.engine.http.pass.as_ref().map(Secret::expose) == Some("p")
    }),
    ("http_s3_keyid", "AKID", |s| {
        s.engine.http.s3_keyid.as_deref() == Some("AKID")
    }),
    ("http_s3_key", "SK", |s| {
        s.engine.http.s3_key.as_ref().map(Secret::expose) == Some("SK")
    }),
    ("http_s3_security_token", "TOK", |s| {
        s.engine.http.s3_security_token.as_ref().map(Secret::expose) == Some("TOK")
    }),
    ("http_s3_region", "eu-central-1", |s| {
        s.engine.http.s3_region.as_deref() == Some("eu-central-1")
    }),
    ("http_s3_storage_class", "STANDARD_IA", |s| {
        s.engine.http.s3_storage_class.as_deref() == Some("STANDARD_IA")
    }),
    ("http_verbose", "2", |s| s.engine.http.verbose == 2),
    ("http_object_mode", "range", |s| {
        s.engine.http.object_mode == ObjectMode::Range
    }),
    ("http_retries", "7", |s| s.engine.http.retries == 7),
    ("http_op", "list", |s| {
        s.engine.http.op == crate::job::spec::HttpOp::List
    }),
    ("http_list_max_keys", "7", |s| {
        s.engine.http.list_max_keys == 7
    }),
    ("http_s3_part_size", "8m", |s| {
        s.engine.http.s3_part_size == 8 << 20
    }),
    ("http_ca_file", "/etc/ca.pem", |s| {
        s.engine.http.ca_file.as_deref() == Some("/etc/ca.pem")
    }),
    ("registerfiles", "1", |s| s.engine.registerfiles),
    ("sqthread_poll", "1", |s| s.engine.sqthread_poll),
    ("sqthread_poll_cpu", "1", |s| {
        s.engine.sqthread_poll_cpu == Some(1)
    }),
    ("nonvectored", "0", |s| s.engine.nonvectored == 0),
    ("force_async", "4", |s| s.engine.force_async == 4),
    ("userspace_reap", "1", |s| s.engine.userspace_reap),
    ("cmdprio_percentage", "10,(2*20)", |s| {
        s.engine.cmdprio.percentage == [10, 40]
    }),
    ("cmdprio_class", "2", |s| s.engine.cmdprio.class == [2, 2]),
    ("cmdprio", "3,5", |s| s.engine.cmdprio.level == [3, 5]),
    ("cmdprio_hint", "1", |s| s.engine.cmdprio.hint == [1, 1]),
    ("cmdprio_bssplit", "4k/20/2/3:8k/10", |s| {
        s.engine
            .cmdprio
            .bssplit
            .as_ref()
            .is_some_and(|b| b[0].len() == 2 && b[1] == b[0] && b[0][0].prio == Some((2, 3, 0)))
    }),
    ("thp", "1", |s| s.engine.thp),
    ("cmd_type", "nvme", |_| true),
    ("pi_act", "0", |s| !s.engine.nvme.pi_act),
    ("pi_chk", "GUARD,APPTAG", |s| {
        s.engine.nvme.pi_chk == (1 << 28) | (1 << 27)
    }),
    ("md_per_io_size", "64", |s| {
        s.engine.nvme.md_per_io_size == 64
    }),
    ("apptag", "0x42", |s| s.engine.nvme.apptag == 0x42),
    ("apptag_mask", "0xf0", |s| s.engine.nvme.apptag_mask == 0xf0),
    ("fdp", "1", |s| s.engine.nvme.placement == Placement::Fdp),
    ("dataplacement", "streams", |s| {
        s.engine.nvme.placement == Placement::Streams
    }),
    ("plid_select", "random", |s| {
        s.engine.nvme.plid_select == PlidSelect::Random
    }),
    ("plids", "1-3", |s| s.engine.nvme.plids == [1, 2, 3]),
    ("dp_scheme", "s.txt", |s| {
        s.engine.nvme.dp_scheme.as_deref() == Some("s.txt")
    }),
    ("stat_type", "lstat", |s| {
        s.engine.stat_type == StatType::Lstat
    }),
    // Timing and rates.
    ("runtime", "1m", |s| s.time.runtime_us == 60_000_000),
    ("time_based", "1", |s| s.time.time_based),
    ("ramp_time", "(1500000)", |s| {
        s.time.ramp_time_us == 1_500_000
    }),
    ("startdelay", "1-3s", |s| {
        s.time.startdelay_us == (1_000_000, 3_000_000)
    }),
    ("thinktime", "2ms", |s| s.time.thinktime_us == 2000),
    ("thinktime_spin", "500", |s| s.time.thinktime_spin_us == 500),
    ("thinktime_blocks", "8", |s| s.time.thinktime_blocks == 8),
    ("thinktime_blocks_type", "issue", |s| {
        s.time.thinktime_blocks_type == ThinkBlocksType::Issue
    }),
    ("thinktime_iotime", "2s", |s| {
        s.time.thinktime_iotime_us == 2_000_000
    }),
    ("rate", "1m,,2m", |s| s.time.rate == [1 << 20, 0, 2 << 20]),
    ("rate_min", "512k", |s| s.time.rate_min == [524_288; 3]),
    ("rate_iops", "100,200", |s| {
        s.time.rate_iops == [100, 200, 100]
    }),
    ("rate_iops_min", "10", |s| s.time.rate_iops_min == [10; 3]),
    ("rate_process", "poisson", |s| {
        s.time.rate_process == RateProcess::Poisson
    }),
    ("clocksource", "gettimeofday", |s| {
        s.time.clocksource == ClockSource::Gettimeofday
    }),
    ("rate_cycle", "250", |s| s.time.rate_cycle_ms == 250),
    ("rate_ignore_thinktime", "1", |s| {
        s.time.rate_ignore_thinktime
    }),
    // Caching and sync.
    ("direct", "1", |s| s.sync.direct),
    ("buffered", "0", |s| s.sync.direct),
    ("invalidate", "0", |s| !s.sync.invalidate),
    ("sync", "dsync", |s| {
        s.sync.sync_flags == crate::sys::O_DSYNC
    }),
    ("fsync", "32", |s| s.sync.fsync == 32),
    ("fdatasync", "16", |s| s.sync.fdatasync == 16),
    ("end_fsync", "1", |s| s.sync.end_fsync),
    ("fsync_on_close", "1", |s| s.sync.fsync_on_close),
    ("sync_file_range", "wait_before,write:8", |s| {
        s.sync.sync_file_range == Some((1 | 2, 8))
    }),
    // Buffer contents.
    ("zero_buffers", "1", |s| s.buf.zero_buffers),
    ("refill_buffers", "1", |s| s.buf.refill_buffers),
    ("scramble_buffers", "0", |s| !s.buf.scramble_buffers),
    ("buffer_pattern", "0xab\"c\"", |s| {
        s.buf.buffer_pattern == [0xab, b'c']
    }),
    ("buffer_compress_percentage", "70", |s| {
        s.buf.buffer_compress_percentage == 70
    }),
    ("buffer_compress_chunk", "4k", |s| {
        s.buf.buffer_compress_chunk == 4096
    }),
    ("dedupe_percentage", "30", |s| s.buf.dedupe_percentage == 30),
    ("dedupe_mode", "working_set", |s| {
        s.buf.dedupe_mode == DedupeMode::WorkingSet
    }),
    ("dedupe_working_set_percentage", "20", |s| {
        s.buf.dedupe_working_set_percentage == 20
    }),
    ("iomem_align", "64k", |s| s.buf.iomem_align == 65536),
    // Verification.
    ("verify", "crc32c-intel", |s| {
        s.verify.verify == VerifyKind::Crc32cIntel
    }),
    ("do_verify", "0", |s| !s.verify.do_verify),
    ("verify_only", "1", |s| s.verify.verify_only),
    ("verify_backlog", "(2*8)", |s| s.verify.verify_backlog == 16),
    ("verify_backlog_batch", "4", |s| {
        s.verify.verify_backlog_batch == 4
    }),
    ("verify_offset", "1k", |s| s.verify.verify_offset == 1024),
    ("verify_interval", "512", |s| {
        s.verify.verify_interval == 512
    }),
    ("verify_pattern", "0xaa%o", |s| {
        s.verify.verify_pattern.bytes == [0xaa, 0, 0, 0, 0, 0, 0, 0, 0]
            && s.verify.verify_pattern.offset_at == [1]
    }),
    ("verify_fatal", "1", |s| s.verify.verify_fatal),
    ("verify_dump", "1", |s| s.verify.verify_dump),
    ("verify_async", "4", |s| s.verify.verify_async == 4),
    ("verify_state_save", "0", |s| {
        s.verify == VerifyOpts::default()
    }),
    ("verify_state_load", "0", |s| {
        s.verify == VerifyOpts::default()
    }),
    // Traces.
    ("write_iolog", "w.log", |s| {
        s.log.write_iolog.as_deref() == Some("w.log")
    }),
    ("read_iolog", "a.log:b.log", |s| {
        s.log.read_iolog.as_deref() == Some("a.log:b.log")
    }),
    ("replay_no_stall", "1", |s| s.log.replay_no_stall),
    ("replay_time_scale", "50", |s| s.log.replay_time_scale == 50),
    ("replay_redirect", "/dev/loop0", |s| {
        s.log.replay_redirect.as_deref() == Some("/dev/loop0")
    }),
    ("replay_align", "4k", |s| s.log.replay_align == 4096),
    ("replay_scale", "8", |s| s.log.replay_scale == 8),
    ("replay_skip", "write,sync", |s| {
        s.log.replay_skip == (1 << Ddir::Write.idx() | REPLAY_SKIP_SYNC)
    }),
    // Statistics.
    ("group_reporting", "1", |s| s.stat.group_reporting),
    ("disk_util", "0", |s| !s.stat.disk_util),
    // Logs.
    ("write_bw_log", "bw", |s| {
        s.log.write_bw_log.as_deref() == Some("bw")
    }),
    ("write_iops_log", "io", |s| {
        s.log.write_iops_log.as_deref() == Some("io")
    }),
    ("write_lat_log", "l", |s| {
        s.log.write_lat_log.as_deref() == Some("l")
    }),
    ("write_hist_log", "h", |s| {
        s.log.write_hist_log.as_deref() == Some("h")
    }),
    ("log_avg_msec", "250", |s| s.log.log_avg_msec == 250),
    ("log_hist_msec", "(2*50)", |s| s.log.log_hist_msec == 100),
    ("log_hist_coarseness", "3", |s| {
        s.log.log_hist_coarseness == 3
    }),
    ("log_max_value", "1", |s| s.log.log_max_value),
    ("log_store_compressed", "1", |s| s.log.log_store_compressed),
    ("log_compression", "4k", |s| s.log.log_compression == 4096),
    ("log_offset", "1", |s| s.log.log_offset),
    ("log_prio", "1", |s| s.log.log_prio),
    ("log_unix_epoch", "1", |s| s.log.log_unix_epoch),
    ("log_alternate_epoch", "1", |s| s.log.log_alternate_epoch),
    ("log_alternate_epoch_clock_id", "1", |s| {
        s.log.log_alternate_epoch_clock_id == 1
    }),
    ("per_job_logs", "0", |s| !s.log.per_job_logs),
    ("log_entries", "4096", |s| s.log.log_entries == 4096),
    ("stats", "0", |s| !s.stat.stats),
    ("unified_rw_reporting", "both", |s| {
        s.stat.unified_rw_reporting == 2
    }),
    ("percentile_list", "99.9:50", |s| {
        s.stat.percentile_list == [50.0, 99.9]
    }),
    ("clat_percentiles", "0", |s| !s.stat.clat_percentiles),
    ("lat_percentiles", "1", |s| s.stat.lat_percentiles),
    ("slat_percentiles", "1", |s| s.stat.slat_percentiles),
    ("disable_lat", "1", |s| s.stat.disable_lat),
    ("disable_clat", "1", |s| s.stat.disable_clat),
    ("disable_slat", "1", |s| s.stat.disable_slat),
    ("disable_bw_measurement", "1", |s| s.stat.disable_bw),
    ("gtod_reduce", "1", |s| {
        s.stat.gtod_reduce && s.stat.disable_clat
    }),
    ("significant_figures", "6", |s| {
        s.stat.significant_figures == 6
    }),
    ("bwavgtime", "1000", |s| s.stat.bwavgtime_ms == 1000),
    ("iopsavgtime", "250", |s| s.stat.iopsavgtime_ms == 250),
    ("steadystate", "iops_slope:0.5%", |s| {
        s.stat.steadystate
            == Some(SteadyState::IopsSlope {
                limit: 0.5,
                percent: true,
            })
    }),
    ("steadystate_duration", "30", |s| {
        s.stat.ss_dur_us == 30_000_000
    }),
    ("steadystate_ramp_time", "5s", |s| {
        s.stat.ss_ramp_us == 5_000_000
    }),
    ("latency_target", "10ms", |s| {
        s.stat.latency_target_us == 10_000
    }),
    ("latency_window", "(2*1000)", |s| {
        s.stat.latency_window_us == 2000
    }),
    ("latency_percentile", "99.5", |s| {
        s.stat.latency_percentile == 99.5
    }),
    ("latency_run", "1", |s| s.stat.latency_run),
    ("max_latency", "1s,2s", |s| {
        s.stat.max_latency_us == [1_000_000, 2_000_000, 1_000_000]
    }),
];

/// Values that must be rejected for options whose kind is `Str` (garbage
/// is not an error for a plain string).
const STR_BAD: &[(&str, &str)] = &[
    ("name", ""),
    ("filename", ":"),
    ("directory", ""),
    ("filename_format", " "),
    ("file_service_type", "@@@"),
    ("random_distribution", "@@@"),
    ("ioengine", "@@@"),
    ("sync_file_range", "@@@"),
    ("steadystate", "@@@"),
    ("write_bw_log", "logs/"),
    ("cmdprio_bssplit", "4k/200"),
    ("http_host", "http://host/"),
    ("http_host", "user@host"),
];

fn set(spec: &mut JobSpec, name: &str, value: &str) -> Result<(), JobError> {
    apply(spec, lookup(name).expect("option in table"), Some(value))
}

#[test]
fn samples_name_every_implemented_option_once() {
    let mut missing = Vec::new();
    for d in all().filter(|d| d.is_supported()) {
        let n = SAMPLES
            .iter()
            .filter(|(name, _, _)| *name == d.name)
            .count();
        if n != 1 {
            missing.push(d.name);
        }
    }
    assert!(
        missing.is_empty(),
        "options without exactly one sample: {missing:?}"
    );
    for (name, _, _) in SAMPLES {
        let d = lookup(name).unwrap_or_else(|| panic!("sample for unknown option {name}"));
        assert!(d.is_supported(), "sample for unsupported option {name}");
        assert_eq!(d.name, *name, "samples use canonical names");
    }
}

/// Options that only accept "off" (or, for cmd_type, "nvme"), which is
/// what iomark always does (so setting them changes nothing); "1" must
/// be rejected.
const OFF_ONLY: &[&str] = &["verify_state_save", "verify_state_load", "cmd_type"];

#[test]
fn each_sample_sets_its_field() {
    for (name, value, check) in SAMPLES {
        let mut spec = JobSpec::default();
        set(&mut spec, name, value).unwrap_or_else(|e| panic!("{name}={value}: {e}"));
        assert!(
            check(&spec),
            "{name}={value} did not set the expected field"
        );
        if OFF_ONLY.contains(name) {
            assert!(set(&mut spec, name, "1").is_err(), "{name}=1 was accepted");
            continue;
        }
        assert_ne!(spec, JobSpec::default(), "{name}={value} changed nothing");
    }
}

#[test]
fn garbage_is_rejected() {
    for d in all().filter(|d| d.is_supported() && !matches!(d.kind, Kind::Str | Kind::OptStr)) {
        let mut spec = JobSpec::default();
        assert!(
            set(&mut spec, d.name, "@@@").is_err(),
            "{}=@@@ was accepted",
            d.name
        );
        assert!(
            set(&mut spec, d.name, "").is_err(),
            "{}= (empty) was accepted",
            d.name
        );
    }
    for (name, value) in STR_BAD {
        let mut spec = JobSpec::default();
        assert!(
            set(&mut spec, name, value).is_err(),
            "{name}={value:?} was accepted"
        );
    }
}

/// fio's S3 examples give `http_s3_key=${S3_KEY}`: with the variable
/// unset the value is empty, which means not given (the AWS_* variables
/// and the credentials file are tried next), not an error.
#[test]
fn an_empty_http_credential_is_not_given() {
    let mut spec = JobSpec::default();
    for k in [
        "http_s3_key",
        "http_s3_keyid",
        "http_s3_security_token",
        "http_user",
        "http_pass",
    ] {
        set(&mut spec, k, "").unwrap_or_else(|e| panic!("{k}= refused: {e:?}"));
    }
    assert!(spec.engine.http.s3_key.is_none() && spec.engine.http.s3_keyid.is_none());
    assert!(spec.engine.http.s3_security_token.is_none());
    assert!(spec.engine.http.user.is_none() && spec.engine.http.pass.is_none());
    set(&mut spec, "http_s3_keyid", "AKID").unwrap();
    assert_eq!(spec.engine.http.s3_keyid.as_deref(), Some("AKID"));
}

#[test]
fn bare_keys_are_on_only_for_switches() {
    for d in all().filter(|d| d.is_supported()) {
        let mut spec = JobSpec::default();
        let r = apply(&mut spec, d, None);
        // Switches mean "on"; optional strings take their default.
        assert_eq!(
            r.is_ok(),
            matches!(d.kind, Kind::Switch | Kind::OptStr),
            "bare '{}' (kind {:?}): {r:?}",
            d.name,
            d.kind
        );
    }
}

#[test]
fn unsupported_options_name_themselves_and_their_reason() {
    let d = lookup("trim_percentage").unwrap();
    let e = apply(&mut JobSpec::default(), d, Some("10")).unwrap_err();
    assert_eq!(
        e,
        "option 'trim_percentage' is not supported by iomark: iomark does not trim written blocks to check they read back as zeroes".into()
    );
    let d = lookup("proto").unwrap();
    let e = apply(&mut JobSpec::default(), d, Some("tcp")).unwrap_err();
    assert!(e
        .message
        .starts_with("option 'protocol' is not supported by iomark: it belongs to the net"));
    for d in all().filter(|d| !d.is_supported()) {
        let e = apply(&mut JobSpec::default(), d, Some("1")).unwrap_err();
        assert!(e.message.contains(&format!("'{}'", d.name)), "{e}");
    }
}

#[test]
fn options_of_engines_iomark_lacks_name_fio_engines() {
    // `--enghelp=ENGINE` lists them; a misspelt name would hide them.
    for d in all() {
        for e in d.fio_engines {
            assert!(
                crate::job::engine_kind::is_fio_only(e),
                "{}: '{e}' is not in NOT_IMPLEMENTED",
                d.name
            );
        }
    }
}

#[test]
fn engine_options_are_refused_with_other_engines() {
    let def = lookup("fixedbufs").unwrap();
    assert_eq!(engine_mismatch(def, EngineKind::IoUring), None);
    assert_eq!(
        engine_mismatch(def, EngineKind::Libaio).unwrap(),
        "option 'fixedbufs' only applies to ioengine=io_uring,io_uring_cmd (this job uses ioengine=libaio)"
    );
    let def = lookup("nowait").unwrap();
    let e = engine_mismatch(def, EngineKind::Mmap).unwrap();
    assert!(
        e.contains("ioengine=io_uring,libaio,pvsync2 (this job uses ioengine=mmap)"),
        "{e}"
    );
    assert_eq!(
        engine_mismatch(lookup("bs").unwrap(), EngineKind::Null),
        None
    );
    // per-I/O priorities with passthrough: the reason is given
    for name in ["cmdprio_percentage", "cmdprio_bssplit", "cmdprio_class"] {
        let e = engine_mismatch(lookup(name).unwrap(), EngineKind::IoUringCmd).unwrap();
        assert!(
            e.contains(&format!(
                "'{name}' only applies to ioengine=io_uring,libaio"
            )) && e.contains("passthrough commands that carry an I/O priority (EINVAL)"),
            "{e}"
        );
    }
    let e = engine_mismatch(lookup("cmdprio").unwrap(), EngineKind::Psync).unwrap();
    assert!(!e.contains("passthrough"), "{e}");
}

#[test]
fn kb_base_applies_to_later_sizes() {
    let mut spec = JobSpec::default();
    set(&mut spec, "kb_base", "1000").unwrap();
    set(&mut spec, "bs", "4k").unwrap();
    assert_eq!(spec.io.bs[0], rng(4000, 4000));
    set(&mut spec, "size", "1kib").unwrap();
    assert_eq!(spec.file.size, Some(SizeOrPercent::Bytes(1024)));
}

#[test]
fn times_take_units_and_expressions_in_microseconds() {
    let mut spec = JobSpec::default();
    for (v, us) in [
        ("10", 10_000_000),
        ("1h", 3_600_000_000),
        ("250ms", 250_000),
        ("(250)", 250),
        ("(1s+500ms)", 1_500_000),
    ] {
        set(&mut spec, "runtime", v).unwrap();
        assert_eq!(spec.time.runtime_us, us, "runtime={v}");
    }
    set(&mut spec, "thinktime", "(2*50)").unwrap();
    assert_eq!(spec.time.thinktime_us, 100);
    set(&mut spec, "max_latency", "(1000),(2ms)").unwrap();
    assert_eq!(spec.stat.max_latency_us, [1000, 2000, 1000]);
}

#[test]
fn expressions_in_per_direction_and_range_values() {
    let mut spec = JobSpec::default();
    set(&mut spec, "rate", "(1m/2),(2*1m)").unwrap();
    assert_eq!(spec.time.rate, [524_288, 2 << 20, 524_288]);
    set(&mut spec, "bsrange", "(1k*2)-(4k*2)").unwrap();
    assert_eq!(spec.io.bs[0], rng(2048, 8192));
    assert!(set(&mut spec, "rate", "(1m/0)").is_err());
}
