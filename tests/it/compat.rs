//! fio compatibility suite: each case runs the same job under fio and
//! under iomark (in separate temporary directories, at the same time) and
//! compares what they did, per job and direction:
//!
//! - `Exact`: `total_ios` and `io_bytes` equal, the same number of syncs,
//!   the same files left behind with the same sizes;
//!   Block sizes and a mixed job's directions are drawn from fio's
//!   streams, so sequential jobs with `bsrange`/`bssplit` and mixed jobs
//!   are exact too;
//! - `Ios(p)`: I/O counts within `p` (random offsets meeting drawn block
//!   sizes: the offsets are iomark's own draws), bytes still exact;
//! - `Mix(p)`: counts and bytes within `p` (the same, with two
//!   directions);
//! - `Alloc(p)`: counts exact, the same files, and the space the written
//!   files occupy (the distinct blocks a distribution touched) within `p`;
//! - `Iops(p, asked)`: achieved IOPS within `p` of the rate the job asks
//!   for (`rate_iops`, `rate`), read and write; fio pacing itself to the
//!   same rate is the reference, but on a loaded machine fio falls short
//!   of it now and then (229 IOPS for 512 asked, with two busy loops
//!   beside), so iomark is held to the rate asked, fio's figure shown;
//! - `Runtime(p)`: each job's runtime within `p` of fio's;
//! - `RuntimeOf(p, ms)`: each job's runtime within `p` of what the job
//!   asks for (runtime, ramp_time, thinktime), fio's figure shown: on a
//!   loaded machine fio strays now and then (a 1 s run after a 1 s ramp
//!   reported as 1863 ms, with two busy loops beside);
//! - `Custom`: a check written for the case (exitall and friends).
//!
//! Every check also requires the same job list and the same error codes.
//! Sizes are MiBs and runtimes at most two seconds; cases run a few at a
//! time. The suite skips (with a message) when fio is not installed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::require_fio;

/// Where a run's output goes (inside its directory).
const OUT: &str = "out.json";
const ERR: &str = "err.txt";

/// Longest a single run may take.
const TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy)]
enum Check {
    Exact,
    Ios(f64),
    Mix(f64),
    Alloc(f64),
    Iops(f64, [f64; 2]),
    Runtime(f64),
    RuntimeOf(f64, f64),
    Custom(fn(&Outcome, &Outcome) -> Result<(), String>),
}
use Check::*;

/// A case: a command line (`--name=…` options) or a job file.
struct Case {
    name: &'static str,
    job: &'static str,
    check: Check,
    /// Directories made in each tool's directory before it runs.
    dirs: &'static [&'static str],
}

const fn case(name: &'static str, job: &'static str, check: Check) -> Case {
    Case {
        name,
        job,
        check,
        dirs: &[],
    }
}

/// A case whose files go in subdirectories made before the run.
const fn case_in(
    name: &'static str,
    dirs: &'static [&'static str],
    job: &'static str,
    check: Check,
) -> Case {
    Case {
        name,
        job,
        check,
        dirs,
    }
}

/// Cases that start with '[' are job files; the others are arguments.
const CASES: &[Case] = &[
    // Queue depth and batching.
    case("qd-libaio-16", "--ioengine=libaio --direct=1 --iodepth=16 --rw=randread --size=4m", Exact),
    case("qd-batch-submit-complete", "--ioengine=libaio --direct=1 --iodepth=16 --iodepth_batch_submit=8 --iodepth_batch_complete_min=4 --iodepth_batch_complete_max=16 --rw=randwrite --size=4m", Exact),
    case("qd-iodepth-low", "--ioengine=libaio --direct=1 --iodepth=16 --iodepth_low=4 --rw=read --size=4m", Exact),
    case("qd-complete-poll", "--ioengine=libaio --direct=1 --iodepth=8 --iodepth_batch_complete_min=0 --rw=randread --size=2m", Exact),
    case("qd-null-32", "--ioengine=null --iodepth=32 --rw=randrw --size=64m --norandommap", Exact),
    // Offsets and sizes.
    case("seq-read", "--rw=read --bs=4k --size=2m", Exact),
    case("size-over-nrfiles", "--rw=write --bs=4k --size=1m --nrfiles=3", Exact),
    case("last-partial-block", "--rw=write --bs=3k --size=1m", Exact),
    case("randmap-every-block-once", "--rw=randwrite --bs=3k --size=1m", Exact),
    case("norandommap", "--rw=randwrite --bs=3k --size=1m --norandommap", Exact),
    case("randread-nrfiles", "--rw=randread --size=1000k --nrfiles=3", Exact),
    case("io_size-beyond-size", "--rw=write --size=1m --io_size=2050k", Exact),
    case("io_size-and-loops", "--rw=write --size=1m --io_size=2560k --loops=2", Exact),
    case("io_size-below-size-loops", "--rw=randwrite --size=1m --io_size=768k --loops=3", Exact),
    case("number_ios-per-loop", "--rw=write --size=1m --number_ios=100 --loops=2", Exact),
    case("number_ios-stops-io_size", "--rw=write --size=1m --number_ios=100 --io_size=3m", Exact),
    case("loops", "--rw=randread --size=1m --loops=3", Exact),
    // The loops share the job's amount: a first loop whose random map
    // never fills does all of it, over one map (distinct blocks = I/Os).
    case("loops-number_ios-one-map", "--rw=randwrite --size=4m --number_ios=300 --loops=3 --fallocate=none --end_fsync=1", Alloc(0.0)),
    case("loops-io_limit-one-map", "--rw=randwrite --size=4m --io_limit=2m --loops=3 --fallocate=none --end_fsync=1", Alloc(0.0)),
    case("loops-seq-number_ios", "--rw=write --size=4m --number_ios=300 --loops=3 --fallocate=none --end_fsync=1", Alloc(0.0)),
    // With a queueing engine each loop stops at size and, with randrepeat,
    // repeats the first loop's offsets: a second loop adds no blocks.
    case("loops-libaio-repeat", "--ioengine=libaio --rw=randwrite --size=1m --norandommap --loops=3 --fallocate=none --end_fsync=1", Alloc(0.15)),
    case("loops-psync-norandommap", "--rw=randwrite --size=1m --norandommap --loops=3 --fallocate=none --end_fsync=1", Alloc(0.1)),
    case("offset-increment-shared-file", "--rw=write --size=1m --numjobs=3 --filename=shared --offset_increment=256k", Exact),
    case("offset-grows-files", "--rw=write --size=1m --numjobs=2 --offset=512k", Exact),
    case("filesize-with-size-cap", "--rw=write --size=200k --filesize=100k --nrfiles=4", Exact),
    case("filesize-fixed", "--rw=randwrite --filesize=96k --nrfiles=5", Exact),
    case("bs-read-write", "--ioengine=null --rw=rw --bs=4k,16k --size=64m", Exact),
    case("bsrange-seq", "--ioengine=null --rw=write --bsrange=4k-16k --size=64m", Exact),
    case("bsrange-rand", "--ioengine=null --rw=randwrite --bsrange=4k-16k --size=64m", Ios(0.03)),
    case("bsrange-top-not-multiple", "--ioengine=null --rw=write --bsrange=4k-10k --size=64m", Exact),
    case("bsrange-odd-low-end", "--ioengine=null --rw=randwrite --bsrange=3k-10k --size=64m", Mix(0.03)),
    case("bsrange-unaligned", "--ioengine=null --rw=write --bsrange=1k-9k --bs_unaligned=1 --size=64m", Exact),
    case("bsrange-per-direction", "--ioengine=null --rw=rw --bsrange=3k-10k,1k-9k --bs_unaligned=1 --size=64m", Exact),
    case("bsrange-per-direction-rand", "--ioengine=null --rw=randrw --bsrange=4k-10k,4k-9k --size=64m", Mix(0.04)),
    // A range or split wins over bs wherever bs stands.
    case("bssplit-then-bs", "[global]\nioengine=null\nbssplit=4k/50:16k/50\nrw=randwrite\nsize=64m\n[t]\nbs=4k\n", Ios(0.03)),
    case("bsrange-then-bs", "--ioengine=null --rw=write --bsrange=4k-16k --bs=8k --size=64m", Exact),
    case("bssplit-rand", "--ioengine=null --rw=randwrite --bssplit=4k/50:12k/50 --size=64m", Ios(0.03)),
    case("blockalign", "--rw=randwrite --bs=8k --blockalign=4k --size=1m", Exact),
    case("percentage_random", "--rw=randread --percentage_random=50 --size=1m", Exact),
    case("rw-holes", "--rw=write:4k --size=64k", Exact),
    case("rw-holes-end", "--rw=write:4k --size=60k", Exact),
    case("rw-backwards", "--rw=read:-8k --size=64k", Exact),
    case("rw-rand-runs", "--rw=randread:4 --size=256k", Exact),
    case("rw_sequencer-identical", "--rw=randwrite:4 --rw_sequencer=identical --size=256k", Exact),
    case("lfsr", "--rw=randwrite --random_generator=lfsr --size=1m --fallocate=none --end_fsync=1", Alloc(0.0)),
    case("zipf", "--rw=randwrite --random_distribution=zipf:1.2 --size=16m --fallocate=none --end_fsync=1", Alloc(0.05)),
    case("pareto", "--rw=randwrite --random_distribution=pareto:0.2 --size=16m --fallocate=none --end_fsync=1", Alloc(0.05)),
    case("normal", "--rw=randwrite --random_distribution=normal:10 --size=16m --fallocate=none --end_fsync=1", Alloc(0.05)),
    case("zoned", "--rw=randwrite --random_distribution=zoned:60/10:30/20:10/70 --size=16m --fallocate=none --end_fsync=1", Alloc(0.05)),
    case("zoned_abs", "--rw=randwrite --random_distribution=zoned_abs:50/1m:50/15m --size=16m --fallocate=none --end_fsync=1", Alloc(0.05)),
    case("zonemode-strided", "--rw=write --zonemode=strided --zonesize=16k --zonerange=64k --size=1m --fallocate=none --end_fsync=1", Alloc(0.0)),
    case("zoneskip", "--rw=randwrite --zonemode=strided --zonesize=16k --zoneskip=48k --size=1m --fallocate=none --end_fsync=1", Alloc(0.0)),
    case("zonemode-strided-random-revisits", "--rw=randwrite --zonemode=strided --zonesize=64k --zonerange=128k --zoneskip=128k --filesize=16m --io_size=8m --fallocate=none --end_fsync=1", Alloc(0.03)),
    case("zonemode-strided-randrw", "--rw=randrw --zonemode=strided --zonesize=64k --zonerange=128k --zoneskip=128k --filesize=16m --io_size=8m --fallocate=none --end_fsync=1", Custom(strided_mix)),
    case("file_service-random", "--rw=write --nrfiles=4 --size=1m --file_service_type=random", Exact),
    case("file_service-sequential", "--rw=randread --nrfiles=4 --size=1m --file_service_type=sequential", Exact),
    case("file_service-roundrobin-n", "--rw=write --nrfiles=3 --filesize=40k --file_service_type=roundrobin:2", Exact),
    case("openfiles", "--rw=write --nrfiles=4 --size=1m --openfiles=1", Exact),
    case("filename_format", "--rw=write --nrfiles=2 --numjobs=2 --size=256k --filename_format=data.$jobnum.$filenum.bin", Exact),
    case("size-percent-offset-percent", "[make]\nrw=write\nsize=1m\nfilename=f\n[part]\nstonewall\nrw=read\nfilename=f\nsize=50%\noffset=25%\n", Exact),
    case("file_append", "[make]\nrw=write\nsize=512k\nfilename=f\n[append]\nstonewall\nrw=write\nfilename=f\nsize=256k\nfile_append=1\n", Exact),
    // Regions: filesize with offsets (the region ends at the file's size),
    // filesize ranges (the same sizes drawn), percentage offsets (of the
    // file's size before the job, rounded up), offset_increment.
    case("filesize-offset", "--rw=write --bs=4k --filesize=16m --offset=4m", Exact),
    case("filesize-offset-size-randwrite", "--rw=randwrite --filesize=8m --offset=6m --size=4m", Exact),
    case("filesize-offset-size-randread", "--rw=randread --filesize=16m --offset=4m --size=4m", Exact),
    case("filesize-range-offset", "--rw=write --filesize=1m-2m --nrfiles=3 --offset=256k", Exact),
    case("filesize-range-numjobs-randwrite", "--rw=randwrite --filesize=1m-2m --nrfiles=2 --numjobs=2 --offset=128k", Exact),
    case("filesize-range-tausworthe64", "--rw=write --filesize=256k-1m --nrfiles=4 --random_generator=tausworthe64", Exact),
    case("filesize-in-range-existing", "[make]\nrw=write\nsize=1m\nfilename=f\n[again]\nstonewall\nrw=write\nfilename=f\nfilesize=512k-2m\noffset=256k\n", Exact),
    case("offset-percent-new-file", "--rw=write --size=1m --offset=50%", Exact),
    case("offset-percent-existing", "[make]\nrw=write\nsize=1m\nfilename=f\n[part]\nstonewall\nrw=randwrite\nfilename=f\nsize=256k\noffset=50%\n", Exact),
    case("offset-percent-rounds-up", "[make]\nrw=write\nsize=1m\nfilename=f\n[part]\nstonewall\nrw=read\nbs=64k\nfilename=f\noffset=10%\n", Exact),
    case("offset_increment-filesize", "--rw=write --filesize=1m --numjobs=3 --filename=shared --offset_increment=256k", Exact),
    case("offset_increment-percent-filesize", "--rw=write --filesize=1m --numjobs=3 --filename=shared --offset_increment=20%", Exact),
    case("filesize-range-numjobs3", "--rw=write --filesize=1m-2m --numjobs=3", Exact),
    case("offset_increment-filesize-own-files", "--rw=write --filesize=2m --numjobs=2 --offset=512k --offset_increment=1m", Exact),
    case("offset_increment-percent", "[make]\nrw=write\nsize=1m\nfilename=f\n[clones]\nstonewall\nrw=write\nfilename=f\nsize=256k\nnumjobs=2\noffset_increment=25%\n", Exact),
    case("io_size-percent-filesize-offset", "--rw=write --filesize=1m --offset=256k --io_size=50%", Exact),
    case("size-percent-filesize-offset", "--rw=read --size=50% --filesize=4m --nrfiles=2 --offset=1m --bs=64k", Exact),
    // directory= prefixes even an absolute filename; generated names go
    // in the clone's directory, given ones in the first.
    case("directory-absolute-filename", "--rw=write --size=64k --directory=. --filename=/abs.dat", Exact),
    case_in("directory-absolute-filename-subdir", &["dev"], "--rw=write --size=64k --directory=. --filename=/dev/sdz", Exact),
    case_in("directories-per-clone", &["a", "b"], "--rw=write --size=64k --nrfiles=2 --numjobs=2 --directory=a:b", Exact),
    case_in("filename_format-filenum-subdir", &["sub"], "--rw=write --size=256k --nrfiles=3 --filename_format=sub/$jobname.$filenum", Exact),
    // Timing and pacing.
    case("runtime-time_based", "--rw=randread --size=4m --runtime=1 --time_based", RuntimeOf(0.10, 1000.0)),
    case("ramp_time", "--rw=read --size=4m --runtime=1 --time_based --ramp_time=1", RuntimeOf(0.10, 1000.0)),
    case("startdelay", "--rw=read --size=256k --rate_iops=128 --startdelay=1", Custom(same_elapsed)),
    // Eight pauses of 100 ms each: 800 ms. A pause ends late on a loaded
    // machine (the thread waits for a CPU after its sleep): with two busy
    // loops beside, iomark took up to 1074 ms (25% over), fio up to
    // 1056 ms; quiet, 800-830 ms. 40% still tells a pause per block or
    // none at all (2x and more).
    case("thinktime", "--rw=read --size=32k --thinktime=100ms", RuntimeOf(0.40, 800.0)),
    case("thinktime_blocks", "--rw=write --size=128k --thinktime=100ms --thinktime_blocks=4", RuntimeOf(0.40, 800.0)),
    case("thinktime-issue-qd", "--ioengine=libaio --iodepth=4 --rw=read --size=256k --thinktime=100ms --thinktime_blocks=8 --thinktime_blocks_type=issue", RuntimeOf(0.40, 800.0)),
    case("rate_iops", "--ioengine=null --rw=randread --size=64m --rate_iops=500 --runtime=1", Iops(0.05, [500.0, 0.0])),
    // 2 MiB/s of 4 KiB writes
    case("rate-bytes", "--ioengine=null --rw=write --size=8m --rate=2m --runtime=1", Iops(0.05, [0.0, 512.0])),
    case("rate-per-direction", "--ioengine=null --rw=randrw --size=64m --rate_iops=400,200 --runtime=1", Iops(0.05, [400.0, 200.0])),
    case("rate_process-poisson", "--ioengine=null --rw=randread --size=64m --rate_iops=5000 --rate_process=poisson --runtime=2", Iops(0.05, [5000.0, 0.0])),
    case("rate_iops_min-fails", "--ioengine=null --rw=read --size=64m --time_based --runtime=4 --thinktime=10ms --rate_iops_min=200 --rate_cycle=100", Runtime(0.10)),
    // Sync and cache.
    case("fsync", "--rw=write --size=64k --fsync=4", Exact),
    case("fdatasync", "--rw=write --size=64k --fdatasync=4", Exact),
    case("fsync-and-fdatasync", "--rw=write --size=64k --fsync=4 --fdatasync=2", Exact),
    case("sync_file_range", "--rw=write --size=64k --sync_file_range=write:4", Exact),
    case("fsync-nrfiles", "--rw=write --size=64k --fsync=5 --nrfiles=2", Exact),
    case("fsync-across-passes", "--rw=write --size=16k --io_size=48k --fsync=2", Exact),
    case("end_fsync-fsync_on_close", "--rw=randwrite --size=256k --end_fsync=1 --fsync_on_close=1", Exact),
    case("direct", "--rw=randread --size=1m --direct=1", Exact),
    case("buffered-sync-dsync", "--rw=write --size=256k --buffered=1 --sync=dsync", Exact),
    case("sync-osync", "--rw=randwrite --size=256k --sync=sync", Exact),
    case("invalidate-off", "--rw=read --size=1m --invalidate=0", Exact),
    case("pre_read", "--rw=randread --size=1m --pre_read=1", Exact),
    case("create_on_open", "--rw=write --size=256k --nrfiles=2 --create_on_open=1", Exact),
    case("overwrite", "--rw=randwrite --size=256k --overwrite=1", Exact),
    case("fallocate-modes", "[global]\nrw=write\nsize=256k\n[none]\nfallocate=none\n[posix]\nfallocate=posix\n[keep]\nfallocate=keep\n[truncate]\nfallocate=truncate\n", Exact),
    case("unlink", "--rw=write --size=256k --nrfiles=2 --unlink=1", Exact),
    case("unlink_each_loop", "--rw=write --size=256k --loops=2 --unlink_each_loop=1", Exact),
    case("continue_on_error-enospc-is-fatal", "--rw=write --filename=/dev/full --size=64k --continue_on_error=all", Exact),
    case("size-percent-of-filesize", "[global]\nrw=read\nbs=64k\n[half]\nsize=50%\nfilesize=4m\nnrfiles=2\n[thirty]\nsize=30%\nfilesize=1m\nnrfiles=3\n", Exact),
    case("ignore_error-enospc-carries-on", "--rw=write --filename=/dev/full --size=64k --ignore_error=,ENOSPC --error_dump=0", Exact),
    case("fill_device", "--rw=write --filename=/dev/full --fill_device=1", Exact),
    case("create_fsync-fadvise_hint", "--rw=randread --size=1m --create_fsync=0 --fadvise_hint=sequential", Exact),
    case("mem-shm-lockmem", "--rw=randwrite --size=256k --mem=shm --lockmem=1m", Exact),
    case("iomem-mmapshared", "--rw=randread --size=256k --iomem=mmapshared", Exact),
    case("clocksource", "[global]\nrw=randread\nsize=256k\n[gtod]\nclocksource=gettimeofday\n[cgt]\nclocksource=clock_gettime\n[cpu]\nclocksource=cpu\n", Exact),
    case("create_only", "--rw=write --size=1m --nrfiles=2 --create_only=1", Exact),
    case("trimwrite", "--ioengine=null --rw=trimwrite --size=1m", Exact),
    // Per-I/O priorities: fio's draws, so fio's counts per priority.
    case("cmdprio-libaio", "--ioengine=libaio --direct=1 --iodepth=8 --rw=randread --size=2m --cmdprio_percentage=30 --numjobs=2", Custom(same_prios)),
    case("cmdprio-io_uring-loops", "--ioengine=io_uring --direct=1 --iodepth=4 --rw=write --size=1m --loops=2 --prio=5 --cmdprio_percentage=45 --cmdprio_class=2 --cmdprio=0", Custom(same_prios)),
    // Jobs and groups.
    case("numjobs", "--rw=randwrite --size=512k --numjobs=4", Exact),
    case("thread", "--rw=read --size=512k --numjobs=2 --thread", Exact),
    case("global-stonewall", "[global]\nbs=8k\nsize=512k\n[w]\nrw=write\nfilename=f\n[r]\nstonewall\nrw=randread\nfilename=f\n[rw]\nstonewall\nrw=randwrite\nnumjobs=2\n", Exact),
    case("mixed-engines", "[global]\nsize=512k\n[p]\nioengine=psync\nrw=write\n[s]\nioengine=sync\nrw=randwrite\n[n]\nioengine=null\nrw=randread\nsize=8m\n[a]\nioengine=libaio\niodepth=8\ndirect=1\nrw=randread\n", Exact),
    case("group_reporting", "[global]\nsize=256k\ngroup_reporting\n[a]\nrw=write\nnumjobs=2\n[b]\nnew_group\nrw=randwrite\nnumjobs=3\n", Exact),
    case("wait_for", "[global]\nsize=512k\nfilename=data\n[writers]\nrw=write\nbs=128k\n[readers]\nwait_for=writers\nrw=randread\nnumjobs=2\n", Exact),
    case("exitall", "[global]\nioengine=null\nsize=1g\nexitall=1\n[slow]\nrw=read\nnumber_ios=50\nthinktime=2000\n[fast]\nrw=randread\ntime_based\nruntime=5\n[later]\nstonewall\nrw=read\nsize=1m\n", Custom(exitall)),
    case("exit_what-all", "[global]\nioengine=null\nsize=1g\nexitall=1\nexit_what=all\n[slow]\nrw=read\nnumber_ios=50\nthinktime=2000\n[fast]\nrw=randread\ntime_based\nruntime=5\n[never]\nstonewall\nrw=read\nsize=1m\n", Custom(exitall)),
    case("exitall_on_error", "[bad]\nrw=write\nfilename=/dev/full\nsize=1m\nexitall_on_error=1\n[good]\nioengine=null\nrw=read\nsize=1g\ntime_based\nruntime=5\n", Custom(exitall_on_error)),
    case("cpus_allowed-split", "--rw=read --size=256k --numjobs=2 --cpus_allowed=0 --cpus_allowed_policy=split", Exact),
    case("nice-prio", "--rw=randread --size=256k --nice=5 --prio=4 --prioclass=2", Exact),
];

/// What one tool did for a case.
struct Outcome {
    json: Value,
    wall_ms: f64,
    /// Files left in the directory: name -> (size, allocated bytes).
    files: BTreeMap<String, (u64, u64)>,
}

fn parse_json(text: &str) -> Option<Value> {
    let start = text.find("{\n").or_else(|| text.find('{'))?;
    serde_json::from_str(&text[start..]).ok()
}

/// The files a run left, by path below `dir` (subdirectories included).
fn list_files(dir: &Path) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    list_below(dir, "", &mut out);
    out
}

fn list_below(dir: &Path, prefix: &str, out: &mut BTreeMap<String, (u64, u64)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if name == "job.fio" || name == OUT || name == ERR {
            continue;
        }
        if let Ok(m) = e.metadata() {
            if m.is_file() {
                out.insert(name, (m.len(), m.blocks() * 512));
            } else if m.is_dir() {
                list_below(&e.path(), &format!("{name}/"), out);
            }
        }
    }
}

fn run_tool(mut cmd: Command, dir: &Path, job: &str) -> Result<Outcome, String> {
    let args: Vec<String> = if job.starts_with('[') {
        std::fs::write(dir.join("job.fio"), job).map_err(|e| e.to_string())?;
        vec!["job.fio".into()]
    } else {
        let mut a = vec!["--name=job".to_string()];
        a.extend(job.split_whitespace().map(str::to_string));
        a
    };
    // Output goes to files: a full pipe must not stall a run.
    let out = std::fs::File::create(dir.join(OUT)).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(dir.join(ERR)).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut child = cmd
        .args(&args)
        .arg("--output-format=json")
        .current_dir(dir)
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run: {e}"))?;
    // Never hang the suite: a run that takes far too long is a failure.
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if t0.elapsed() > TIMEOUT {
            kill_group(&mut child);
            let _ = child.wait();
            return Err(format!("still running after {} s", TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    // Whatever the tool left running in its group goes with it.
    kill_group(&mut child);
    let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let stdout = std::fs::read_to_string(dir.join(OUT)).unwrap_or_default();
    let json = parse_json(&stdout).ok_or_else(|| {
        let stderr = std::fs::read_to_string(dir.join(ERR)).unwrap_or_default();
        format!("no JSON (exit {:?}): {}", status.code(), stderr.trim())
    })?;
    Ok(Outcome {
        json,
        wall_ms,
        files: list_files(dir),
    })
}

fn jobs(o: &Outcome) -> &Vec<Value> {
    static EMPTY: Vec<Value> = Vec::new();
    o.json["jobs"].as_array().unwrap_or(&EMPTY)
}

/// fio's jobs in clone order: fio lists a job's clones as 0, N-1, …, 1
/// (it makes them in that order), iomark as 0, 1, …, N-1. Runs of three
/// or more entries with one name are a job's clones in the cases here.
fn fio_jobs_in_clone_order(o: &Outcome) -> Vec<Value> {
    let all = jobs(o);
    let mut out = Vec::with_capacity(all.len());
    let mut i = 0;
    while i < all.len() {
        let name = &all[i]["jobname"];
        let n = all[i..]
            .iter()
            .take_while(|j| &j["jobname"] == name)
            .count();
        out.push(all[i].clone());
        if n >= 3 {
            out.extend(all[i + 1..i + n].iter().rev().cloned());
        } else {
            out.extend(all[i + 1..i + n].iter().cloned());
        }
        i += n;
    }
    out
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn within(a: f64, b: f64, frac: f64) -> bool {
    (a - b).abs() <= frac * a.abs().max(b.abs()) + 1e-9
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// Compares two runs of the same case.
#[allow(clippy::too_many_lines)]
fn compare(check: Check, fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    let (a, b) = (&fio_jobs_in_clone_order(fio), jobs(ours));
    if a.len() != b.len() {
        return Err(format!("fio reported {} jobs, iomark {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        let name = x["jobname"].as_str().unwrap_or("?");
        if x["error"] != y["error"] {
            return Err(format!(
                "job {name}: error {} (fio) vs {} (iomark)",
                x["error"], y["error"]
            ));
        }
        for key in ["total_err", "first_error"] {
            if x.get(key) != y.get(key) {
                return Err(format!(
                    "job {name}: {key} {:?} (fio) vs {:?} (iomark)",
                    x.get(key),
                    y.get(key)
                ));
            }
        }
        let counts = |frac_ios: f64, frac_bytes: f64| -> Result<(), String> {
            for d in DIRS {
                for (key, frac) in [("total_ios", frac_ios), ("io_bytes", frac_bytes)] {
                    let (p, q) = (num(&x[d][key]), num(&y[d][key]));
                    if !within(p, q, frac) {
                        return Err(format!("job {name}: {d} {key} {p} (fio) vs {q} (iomark)"));
                    }
                }
            }
            Ok(())
        };
        match check {
            Exact | Alloc(_) => {
                counts(0.0, 0.0)?;
                let (p, q) = (num(&x["sync"]["total_ios"]), num(&y["sync"]["total_ios"]));
                if p != q {
                    return Err(format!("job {name}: fsyncs {p} (fio) vs {q} (iomark)"));
                }
                let (p, q) = (
                    num(&x["sync"]["lat_ns"]["N"]),
                    num(&y["sync"]["lat_ns"]["N"]),
                );
                if p != q {
                    return Err(format!("job {name}: syncs timed {p} (fio) vs {q} (iomark)"));
                }
            }
            Ios(f) => counts(f, 0.0)?,
            Mix(f) => counts(f, f)?,
            Iops(f, asked) => {
                for (d, want) in ["read", "write"].into_iter().zip(asked) {
                    let (p, q) = (num(&x[d]["iops"]), num(&y[d]["iops"]));
                    if !within(want, q, f) {
                        return Err(format!(
                            "job {name}: {d} IOPS {q:.1} (iomark) for {want} asked (fio {p:.1})"
                        ));
                    }
                }
            }
            Runtime(f) => {
                let (p, q) = (num(&x["job_runtime"]), num(&y["job_runtime"]));
                if !within(p, q, f) {
                    return Err(format!(
                        "job {name}: runtime {p} ms (fio) vs {q} ms (iomark)"
                    ));
                }
            }
            RuntimeOf(f, want) => {
                let (p, q) = (num(&x["job_runtime"]), num(&y["job_runtime"]));
                if !within(want, q, f) {
                    return Err(format!(
                        "job {name}: runtime {q} ms (iomark) for {want} ms asked (fio {p} ms)"
                    ));
                }
            }
            Custom(_) => {}
        }
    }
    match check {
        Exact => {
            let sizes = |o: &Outcome| -> BTreeMap<String, u64> {
                o.files.iter().map(|(k, v)| (k.clone(), v.0)).collect()
            };
            if sizes(fio) != sizes(ours) {
                return Err(format!(
                    "files differ: fio {:?} vs iomark {:?}",
                    sizes(fio),
                    sizes(ours)
                ));
            }
        }
        Alloc(f) => {
            // Names must match; sizes follow the highest block written.
            let names = |o: &Outcome| o.files.keys().cloned().collect::<Vec<_>>();
            if names(fio) != names(ours) {
                return Err(format!(
                    "files differ: fio {:?} vs iomark {:?}",
                    names(fio),
                    names(ours)
                ));
            }
            let used = |o: &Outcome| o.files.values().map(|v| v.1).sum::<u64>() as f64;
            if !within(used(fio), used(ours), f) {
                return Err(format!(
                    "space used by written blocks {} (fio) vs {} (iomark)",
                    used(fio),
                    used(ours)
                ));
            }
        }
        Custom(c) => c(fio, ours)?,
        _ => {}
    }
    Ok(())
}

/// startdelay: the job's life (whole seconds, as fio reports it) includes
/// the delay: 1 s of delay and 0.5 s of I/O make 2 s, not 1.
fn same_elapsed(fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    let (p, q) = (
        num(&jobs(fio)[0]["elapsed"]),
        num(&jobs(ours)[0]["elapsed"]),
    );
    if p != q || p < 2.0 {
        return Err(format!("elapsed {p} s (fio) vs {q} s (iomark)"));
    }
    Ok(())
}

/// exitall: when `slow` (50 I/Os) ends, the job running beside it stops
/// long before its 5 s runtime; the stonewalled job after them runs
/// (or, with exit_what=all, never starts and reports nothing).
fn exitall(fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    for (tool, o) in [("fio", fio), ("iomark", ours)] {
        let j = jobs(o);
        if j.len() != 3 || num(&j[0]["read"]["total_ios"]) != 50.0 {
            return Err(format!("{tool}: expected 3 jobs, the first with 50 reads"));
        }
        let fast = num(&j[1]["job_runtime"]);
        if fast > 2500.0 {
            return Err(format!("{tool}: the second job ran {fast} ms, not stopped"));
        }
    }
    let later = |o: &Outcome| num(&jobs(o)[2]["read"]["total_ios"]);
    if later(fio) != later(ours) {
        return Err(format!(
            "stonewalled job: {} reads (fio) vs {} (iomark)",
            later(fio),
            later(ours)
        ));
    }
    Ok(())
}

/// exitall_on_error: the failing job's error stops the other job early.
fn exitall_on_error(fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    for (tool, o) in [("fio", fio), ("iomark", ours)] {
        let j = jobs(o);
        if j.len() != 2 || num(&j[0]["error"]) == 0.0 {
            return Err(format!("{tool}: expected the first job to fail"));
        }
        let good = num(&j[1]["job_runtime"]);
        if good > 2500.0 {
            return Err(format!("{tool}: the second job ran {good} ms, not stopped"));
        }
    }
    Ok(())
}

/// Random reads and writes in strided zones: the same I/O count, the
/// direction mix within 6 %, and the written blocks (the space the file
/// takes) within 5 %: each visit to a zone starts with an empty random
/// map in both tools.
/// Per-I/O priorities: each job's directions have the same `prios`
/// (class, level and count of each entry, in order) and I/O counts.
fn same_prios(fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    let prios = |j: &Value, d: &str| -> Vec<(u64, u64, u64)> {
        j[d]["prios"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        let n = p["clat_ns"]["N"].as_u64().unwrap_or(0);
                        (num(&p["prioclass"]) as u64, num(&p["prio"]) as u64, n)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for (x, y) in fio_jobs_in_clone_order(fio).iter().zip(jobs(ours)) {
        for d in DIRS {
            let (p, q) = (prios(x, d), prios(y, d));
            if p != q || x[d]["total_ios"] != y[d]["total_ios"] {
                return Err(format!("{d} prios {p:?} (fio) vs {q:?} (iomark)"));
            }
        }
    }
    if prios(&jobs(ours)[0], "read").is_empty() && prios(&jobs(ours)[0], "write").is_empty() {
        return Err("no prios reported".into());
    }
    Ok(())
}

fn strided_mix(fio: &Outcome, ours: &Outcome) -> Result<(), String> {
    let (a, b) = (&jobs(fio)[0], &jobs(ours)[0]);
    let total = |j: &Value| num(&j["read"]["total_ios"]) + num(&j["write"]["total_ios"]);
    if total(a) != total(b) {
        return Err(format!("I/Os {} (fio) vs {} (iomark)", total(a), total(b)));
    }
    let (p, q) = (num(&a["write"]["total_ios"]), num(&b["write"]["total_ios"]));
    if !within(p, q, 0.06) {
        return Err(format!("writes {p} (fio) vs {q} (iomark)"));
    }
    let used = |o: &Outcome| o.files.values().map(|v| v.1).sum::<u64>() as f64;
    if !within(used(fio), used(ours), 0.05) {
        return Err(format!(
            "space used by written blocks {} (fio) vs {} (iomark)",
            used(fio),
            used(ours)
        ));
    }
    Ok(())
}

fn run_case(c: &Case) -> Result<String, String> {
    let (d1, d2) = (tempdir(), tempdir());
    for d in c.dirs {
        for root in [d1.path(), d2.path()] {
            std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
        }
    }
    let (fio, ours) = std::thread::scope(|s| {
        let f = s.spawn(|| run_tool(Command::new("fio"), d1.path(), c.job));
        let o = run_tool(iomark(), d2.path(), c.job);
        (f.join().expect("fio runner"), o)
    });
    let fio = fio.map_err(|e| format!("fio: {e}"))?;
    let ours = ours.map_err(|e| format!("iomark: {e}"))?;
    compare(c.check, &fio, &ours)?;
    let total = |o: &Outcome| -> f64 {
        jobs(o)
            .iter()
            .map(|j| DIRS.iter().map(|d| num(&j[*d]["total_ios"])).sum::<f64>())
            .sum()
    };
    Ok(format!(
        "{} I/Os (fio {}), {:.0} ms (fio {:.0} ms){}",
        total(&ours),
        total(&fio),
        ours.wall_ms,
        fio.wall_ms,
        spread(c.check, &fio, &ours)
            .map(|d| format!(", timed figures apart by {:.1}%", d * 100.0))
            .unwrap_or_default()
    ))
}

/// For a timed check, how far apart fio's and iomark's figures were at
/// most (the fraction `within` compares with its bound): the margin a
/// bound leaves shows in the log.
fn spread(check: Check, fio: &Outcome, ours: &Outcome) -> Option<f64> {
    let apart = |p: f64, q: f64| (p - q).abs() / p.abs().max(q.abs()).max(1e-9);
    let pairs = jobs(fio).iter().zip(jobs(ours));
    match check {
        Iops(_, asked) => pairs
            .flat_map(|(_, y)| {
                ["read", "write"]
                    .into_iter()
                    .zip(asked)
                    .map(|(d, want)| apart(want, num(&y[d]["iops"])))
            })
            .reduce(f64::max),
        RuntimeOf(_, want) => pairs
            .map(|(_, y)| apart(want, num(&y["job_runtime"])))
            .reduce(f64::max),
        Runtime(_) => pairs
            .map(|(x, y)| apart(num(&x["job_runtime"]), num(&y["job_runtime"])))
            .reduce(f64::max),
        _ => None,
    }
}

/// Runs the cases a few at a time; reports every mismatch at the end.
fn run_all(cases: &[&Case]) {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = 3;
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = cases.get(i) else { break };
                match run_case(c) {
                    Ok(what) => eprintln!("compat ok   {:<32} {what}", c.name),
                    Err(e) => {
                        eprintln!("compat FAIL {:<32} {e}", c.name);
                        failures.lock().unwrap().push(format!("{}: {e}", c.name));
                    }
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "{} case(s) differ from fio:\n{}",
        f.len(),
        f.join("\n")
    );
}

/// Whether a case's verdict rests on time (runtimes, rates, delays): such
/// cases run in a test of their own, alone in the serial group.
fn timed(c: &Case) -> bool {
    matches!(c.check, Iops(..) | Runtime(_) | RuntimeOf(..)) || c.name == "startdelay"
}

/// The cases that `timed` picks (or not), narrowed by
/// `IOMARK_COMPAT=substring` when it is set.
fn picked(timed_ones: bool) -> Vec<&'static Case> {
    let only = std::env::var("IOMARK_COMPAT").ok();
    CASES
        .iter()
        .filter(|c| timed(c) == timed_ones)
        .filter(|c| only.as_deref().is_none_or(|f| c.name.contains(f)))
        .collect()
}

#[test]
fn iomark_does_the_same_io_as_fio() {
    let _serial = cpu_heavy();
    require_fio!();
    assert!(CASES.len() >= 40);
    run_all(&picked(false));
}

/// The timed cases (runtime, ramp_time, thinktime, rates, startdelay):
/// run while no other heavy test loads the CPUs, since fio and iomark
/// run side by side and each is measured against the other.
#[test]
fn iomark_keeps_the_same_time_and_rates_as_fio() {
    let _serial = timing_alone();
    require_fio!();
    assert!(picked(true).len() >= 10 || std::env::var("IOMARK_COMPAT").is_ok());
    run_all(&picked(true));
}

// Options fio 3.33 itself sometimes hangs on (thinktime_spin; offloaded
// submission), so they are checked against what the job asks for rather
// than against a fio run.

fn ours(job: &str) -> Outcome {
    let d = tempdir();
    run_tool(iomark(), d.path(), job).expect("iomark runs")
}

#[test]
fn thinktime_spin_is_part_of_the_pause() {
    let _serial = timing_alone();
    // 4 reads, each followed by 100 ms of think time of which 90 ms spin:
    // 400 ms when the spin is part of the pause, 760 ms were it added to
    // it. Only the 10 ms sleeps can end late on a loaded machine (the
    // spin ends at its clock time); the bound is the middle of the two.
    let o = ours("--rw=read --size=16k --thinktime=100ms --thinktime_spin=90ms");
    let rt = num(&jobs(&o)[0]["job_runtime"]);
    eprintln!("thinktime_spin: runtime {rt} ms");
    assert!(
        (395.0..580.0).contains(&rt),
        "runtime {rt} ms, want about 400"
    );
}

#[test]
fn offloaded_submission_does_the_same_io_and_keeps_the_rate() {
    let _serial = timing_alone();
    let o = ours("--ioengine=psync --iodepth=4 --io_submit_mode=offload --rw=randread --size=4m");
    assert_eq!(num(&jobs(&o)[0]["read"]["total_ios"]), 1024.0);
    assert_eq!(num(&jobs(&o)[0]["read"]["io_bytes"]), 4194304.0);
    let o = ours(
        "--ioengine=null --iodepth=8 --io_submit_mode=offload --rw=read --size=64m --rate_iops=500 --runtime=1",
    );
    let iops = num(&jobs(&o)[0]["read"]["iops"]);
    eprintln!("offloaded rate_iops=500: {iops}");
    // With two busy loops beside, 19 runs of 20 gave 498.5-499.5 IOPS and
    // one 462.3 (7.5% short: the submitting thread waited for a CPU);
    // 10% keeps a third over that and still fails a rate not kept.
    assert!(
        within(iops, 500.0, 0.10),
        "offloaded rate_iops=500 gave {iops}"
    );
}

/// rw=trim on a regular file: iomark punches holes (the blocks are freed,
/// the size stays); fio 3.33 fails the job with ENOTTY at the first trim.
/// The README lists this among the differences.
#[test]
fn trim_on_a_regular_file_punches_holes_where_fio_fails() {
    require_fio!();
    let job =
        "[w]\nrw=write\nsize=256k\nfilename=f\n[t]\nstonewall\nrw=trim\nfilename=f\nsize=256k\n";
    let o = ours(job);
    let t = &jobs(&o)[1];
    assert_eq!(
        (num(&t["error"]), num(&t["trim"]["total_ios"])),
        (0.0, 64.0)
    );
    assert_eq!(
        o.files["f"],
        (256 << 10, 0),
        "size and space of f after the trims"
    );
    let d = tempdir();
    let fio = run_tool(Command::new("fio"), d.path(), job).expect("fio runs");
    assert_eq!(num(&jobs(&fio)[1]["error"]), libc::ENOTTY as f64);
}

/// Per-file data I/O counts of an iolog v3 in `dir`, largest first.
fn per_file_counts(dir: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(dir.join("trace.log")).unwrap_or_default();
    let mut by_file: BTreeMap<String, u64> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && matches!(f[2], "read" | "write") {
            *by_file.entry(f[1].to_string()).or_default() += 1;
        }
    }
    let mut v: Vec<u64> = by_file.into_values().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

#[test]
fn skewed_file_choice_restarts_files_as_fio_does() {
    require_fio!();
    // fio starts a finished file over when the file choice is skewed, so
    // the hot files take most of the job; compared over three seeds (the
    // two tools draw differently): the mean share of the hottest file (and
    // of the two hottest), and the job's total.
    for (kind, top) in [("zipf:1.2", 1), ("pareto:0.9", 2), ("normal:20", 2)] {
        let mut share = [Vec::new(), Vec::new()];
        for seed in [1009, 2003, 3001] {
            let job = format!(
                "--rw=write --bs=4k --nrfiles=8 --filesize=256k --file_service_type={kind} \
                 --randrepeat=0 --randseed={seed} --write_iolog=trace.log"
            );
            let (d1, d2) = (tempdir(), tempdir());
            run_tool(Command::new("fio"), d1.path(), &job).expect("fio runs");
            run_tool(iomark(), d2.path(), &job).expect("iomark runs");
            for (i, d) in [d1.path(), d2.path()].into_iter().enumerate() {
                let c = per_file_counts(d);
                assert_eq!(c.iter().sum::<u64>(), 512, "{kind} seed {seed}: {c:?}");
                share[i].push(c.iter().take(top).sum::<u64>() as f64 / 512.0);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (f, o) = (mean(&share[0]), mean(&share[1]));
        eprintln!(
            "{kind}: top {top} share fio {share0:?} iomark {share1:?}",
            share0 = share[0],
            share1 = share[1]
        );
        assert!(
            (f - o).abs() < 0.1 && o > 0.5,
            "{kind}: the {top} hottest files' mean share: fio {f:.3}, iomark {o:.3}"
        );
    }
}
