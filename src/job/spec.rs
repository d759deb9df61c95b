//! `JobSpec`: one job's fully parsed, validated description. Built by the
//! option table from defaults plus assignments; immutable once a run starts.
//!
//! Fields are grouped by family (files, I/O pattern, timing, …) so each
//! family's options live beside the fields they set. Defaults equal fio's.

use super::engine_kind::EngineKind;
use super::value::{SizeOrPercent, SplitEntry};

/// I/O direction, indexing per-direction arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];

    pub fn idx(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
        }
    }
}

/// The `rw` pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwPattern {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwPattern {
    pub const CHOICES: &'static [(&'static str, RwPattern)] = &[
        ("read", RwPattern::Read),
        ("write", RwPattern::Write),
        ("trim", RwPattern::Trim),
        ("randread", RwPattern::RandRead),
        ("randwrite", RwPattern::RandWrite),
        ("randtrim", RwPattern::RandTrim),
        ("rw", RwPattern::ReadWrite),
        ("readwrite", RwPattern::ReadWrite),
        ("randrw", RwPattern::RandRw),
        ("trimwrite", RwPattern::TrimWrite),
        ("randtrimwrite", RwPattern::RandTrimWrite),
    ];

    pub fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|(_, p)| *p == self)
            .map(|(n, _)| *n)
            .unwrap_or("read")
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwPattern::RandRead
                | RwPattern::RandWrite
                | RwPattern::RandTrim
                | RwPattern::RandRw
                | RwPattern::RandTrimWrite
        )
    }

    pub fn has(self, d: Ddir) -> bool {
        use RwPattern::*;
        match d {
            Ddir::Read => matches!(self, Read | RandRead | ReadWrite | RandRw),
            Ddir::Write => matches!(
                self,
                Write | RandWrite | ReadWrite | RandRw | TrimWrite | RandTrimWrite
            ),
            Ddir::Trim => matches!(self, Trim | RandTrim | TrimWrite | RandTrimWrite),
        }
    }

    /// True for patterns that mix reads and writes by `rwmixread`.
    pub fn is_mixed(self) -> bool {
        matches!(self, RwPattern::ReadWrite | RwPattern::RandRw)
    }

    pub fn writes(self) -> bool {
        self.has(Ddir::Write) || self.has(Ddir::Trim)
    }
}

/// `rw_sequencer`: how the `:N` suffix of `rw` is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwSequencer {
    Sequential,
    Identical,
}

/// `random_distribution` for one direction. The optional second value of
/// zipf, pareto and normal is the centre: where in the range (0 to 1) the
/// most likely offsets lie.
#[derive(Clone, Debug, PartialEq)]
pub enum RandomDistribution {
    Random,
    Zipf {
        theta: f64,
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    Normal {
        dev: f64,
        center: Option<f64>,
    },
    /// `zoned:` entries: (percent of accesses, percent of range).
    Zoned(Vec<(f64, f64)>),
    /// `zoned_abs:` entries: (percent of accesses, size in bytes).
    ZonedAbs(Vec<(f64, u64)>),
}

impl RandomDistribution {
    /// Non-uniform distributions pick offsets without the random map.
    pub fn is_uniform(&self) -> bool {
        matches!(self, RandomDistribution::Random)
    }
}

/// `random_generator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomGenerator {
    Tausworthe,
    Lfsr,
    Tausworthe64,
}

/// `file_service_type`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileService {
    Random(u32),
    RoundRobin(u32),
    Sequential(u32),
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
    Gauss(f64),
}

/// `exit_what`: which jobs `exitall` stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the finishing job's reporting group.
    Group,
    /// Every running job; later stonewalled jobs still run.
    Stonewall,
    /// Every job, running or not yet started.
    All,
}

/// `continue_on_error`: which errors a job counts and carries on after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContinueOn {
    None,
    Read,
    Write,
    Io,
    Verify,
    All,
}

impl ContinueOn {
    /// From the normalized option text.
    pub fn from_name(s: &str) -> ContinueOn {
        match s {
            "read" => ContinueOn::Read,
            "write" => ContinueOn::Write,
            "io" => ContinueOn::Io,
            "verify" => ContinueOn::Verify,
            "all" => ContinueOn::All,
            _ => ContinueOn::None,
        }
    }
}

/// `fallocate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FallocateMode {
    None,
    Native,
    Posix,
    Keep,
    Truncate,
}

/// `io_submit_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitMode {
    Inline,
    Offload,
}

/// `rate_process`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateProcess {
    Linear,
    Poisson,
}

/// A NUMA node list: `all` (the nodes of the machine that runs the job,
/// found when it runs) or numbers and ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nodes {
    All,
    List(Vec<usize>),
}

/// `numa_mem_policy`: MODE[:NODES].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemPolicy {
    pub mode: MemPolicyMode,
    pub nodes: Nodes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemPolicyMode {
    Default,
    Prefer,
    Bind,
    Interleave,
    Local,
}

/// `fadvise_hint`: the access pattern announced to the kernel at open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no advice.
    None,
    /// `1`: random for random `rw` patterns, sequential otherwise.
    Workload,
    Sequential,
    Random,
}

impl FadviseHint {
    /// The advice for a job of pattern `rw`: true for random access,
    /// false for sequential, None for none.
    pub fn random(self, rw: RwPattern) -> Option<bool> {
        match self {
            FadviseHint::None => None,
            FadviseHint::Workload => Some(rw.is_random()),
            FadviseHint::Sequential => Some(false),
            FadviseHint::Random => Some(true),
        }
    }
}

/// `clocksource`: which clock times the job's I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockSource {
    /// Not set: the CPU counter when the kernel trusts it, else clock_gettime.
    Auto,
    Gettimeofday,
    ClockGettime,
    Cpu,
}

/// `thinktime_blocks_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkBlocksType {
    Complete,
    Issue,
}

/// `zonemode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneMode {
    None,
    Strided,
    /// Zoned block devices: writes only at write pointers.
    Zbd,
}

/// `zonemode=zbd`'s options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZbdOpts {
    /// `zonecapacity`: usable bytes of each emulated zone (0: the zone size).
    pub zonecapacity: u64,
    pub read_beyond_wp: bool,
    /// Zones all jobs on a device may write at once (0: the device's limit).
    pub max_open_zones: u32,
    /// Zones one job may write at once (0: no job limit).
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    /// Share of written blocks (of the job's region) above which zones are
    /// reset, once per 1/frequency writes.
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
}

impl Default for ZbdOpts {
    fn default() -> Self {
        ZbdOpts {
            zonecapacity: 0,
            read_beyond_wp: false,
            max_open_zones: 0,
            job_max_open_zones: 0,
            ignore_zone_limits: false,
            zone_reset_threshold: 0.0,
            zone_reset_frequency: 0.0,
        }
    }
}

/// `cpus_allowed_policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpusPolicy {
    Shared,
    Split,
}

/// The option that gave a direction its block sizes, in order of
/// precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BsFrom {
    Bs,
    Range,
    Split,
}

/// Block size choice for one direction.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockSizes {
    /// `bs` (lo == hi) or `bsrange` (lo < hi).
    Range { lo: u64, hi: u64 },
    /// `bssplit`.
    Split(Vec<SplitEntry>),
}

impl BlockSizes {
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Range { lo, .. } => *lo,
            BlockSizes::Split(v) => v.iter().map(|e| e.lo).min().unwrap_or(4096),
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Range { hi, .. } => *hi,
            BlockSizes::Split(v) => v.iter().map(|e| e.hi).max().unwrap_or(4096),
        }
    }

    pub fn is_fixed(&self) -> bool {
        self.min() == self.max()
    }
}

/// `steadystate` criterion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SteadyState {
    Iops { limit: f64, percent: bool },
    IopsSlope { limit: f64, percent: bool },
    Bw { limit: f64, percent: bool },
    BwSlope { limit: f64, percent: bool },
}

/// `verify` method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyKind {
    None,
    Md5,
    Crc64,
    Crc32c,
    Crc32cIntel,
    Crc32,
    Crc16,
    Crc7,
    XxHash,
    Sha1,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Meta,
    Pattern,
    Null,
}

/// Targets and layout of the files a job does I/O to.
#[derive(Clone, Debug, PartialEq)]
pub struct FileOpts {
    /// `filename`: explicit targets (split on ':'), empty for generated names.
    pub filenames: Vec<String>,
    /// `directory`: ':'-separated directories for the files.
    pub directories: Vec<String>,
    /// `opendir`: every regular file below this directory is a target too.
    pub opendir: Option<String>,
    /// `ioscheduler`: the I/O scheduler the targets' disks switch to for
    /// the run.
    pub ioscheduler: Option<String>,
    pub filename_format: String,
    pub nrfiles: u32,
    pub openfiles: u32,
    pub file_service: FileService,
    /// `size`; `None` means "the existing file's size".
    pub size: Option<SizeOrPercent>,
    /// `io_size` / `io_limit`.
    pub io_size: Option<SizeOrPercent>,
    /// `filesize` range.
    pub filesize: Option<(u64, u64)>,
    pub offset: SizeOrPercent,
    /// Alignment of a percentage `offset` (0: the minimum block size).
    pub offset_align: u64,
    pub offset_increment: SizeOrPercent,
    pub number_ios: u64,
    pub fill_device: bool,
    pub file_append: bool,
    pub create_on_open: bool,
    pub create_only: bool,
    pub create_serialize: bool,
    pub allow_file_create: bool,
    pub allow_mounted_write: bool,
    /// iomark addition: allow writes to a device holding a filesystem or
    /// partition-table signature.
    pub allow_destroy_data: bool,
    /// iomark addition: allow a FIFO or a character device (other than
    /// /dev/null, /dev/zero, /dev/full) as a target.
    pub allow_special_files: bool,
    pub pre_read: bool,
    pub overwrite: bool,
    pub fallocate: FallocateMode,
    pub unlink: bool,
    pub unlink_each_loop: bool,
    pub unique_filename: bool,
    pub fadvise_hint: FadviseHint,
    /// `create_fsync`: fsync a file after laying it out.
    pub create_fsync: bool,
    /// `write_hint`: the lifetime hint set on each file (F_SET_RW_HINT
    /// value, 1 none … 5 extreme), 0 for none given.
    pub write_hint: u64,
    /// Set by the run flag `--readonly` (not a job option): the job's
    /// files are never created, extended, filled or removed.
    pub readonly: bool,
}

impl FileOpts {
    /// Where a file of the job lives. Names given with `filename` go in
    /// the first `directory`; generated names (`filename_format`) in the
    /// clone's, round robin over the directories. The directory prefixes
    /// even an absolute name, as in fio: with `directory=/mnt/t`,
    /// `filename=/dev/sdb` is the file `/mnt/t/dev/sdb`, not the device.
    pub fn path_of(&self, name: &str, generated: bool, clone: u32) -> std::path::PathBuf {
        if self.directories.is_empty() {
            return name.into();
        }
        let i = if generated {
            clone as usize % self.directories.len()
        } else {
            0
        };
        std::path::Path::new(&self.directories[i]).join(name.trim_start_matches('/'))
    }
}

impl Default for FileOpts {
    fn default() -> Self {
        FileOpts {
            filenames: Vec::new(),
            directories: Vec::new(),
            opendir: None,
            ioscheduler: None,
            filename_format: "$jobname.$jobnum.$filenum".into(),
            nrfiles: 1,
            openfiles: 0,
            file_service: FileService::RoundRobin(1),
            size: None,
            io_size: None,
            filesize: None,
            offset: SizeOrPercent::Bytes(0),
            offset_align: 0,
            offset_increment: SizeOrPercent::Bytes(0),
            number_ios: 0,
            fill_device: false,
            file_append: false,
            create_on_open: false,
            create_only: false,
            create_serialize: true,
            allow_file_create: true,
            allow_mounted_write: false,
            allow_destroy_data: false,
            allow_special_files: false,
            pre_read: false,
            overwrite: false,
            fallocate: FallocateMode::Native,
            unlink: false,
            unlink_each_loop: false,
            unique_filename: true,
            fadvise_hint: FadviseHint::Workload,
            create_fsync: true,
            write_hint: 0,
            readonly: false,
        }
    }
}

/// The I/O pattern: direction, sizes, offsets, randomness, depth.
#[derive(Clone, Debug, PartialEq)]
pub struct IoOpts {
    pub rw: RwPattern,
    /// The `:N` suffix of `rw` (0 when not given): for sequential patterns
    /// the bytes to add after each I/O (negative runs backwards), for
    /// random ones the number of I/Os per new random offset.
    pub rw_nr: i64,
    pub rw_sequencer: RwSequencer,
    pub rwmixread: f64,
    pub bs: [BlockSizes; 3],
    /// Which option set each direction's `bs`: a split (`bssplit`) wins
    /// over a range (`bsrange`), which wins over `bs`, wherever they stand,
    /// as in fio.
    pub bs_from: [BsFrom; 3],
    pub blockalign: [Option<u64>; 3],
    pub bs_unaligned: bool,
    pub bs_is_seq_rand: bool,
    pub norandommap: bool,
    /// `softrandommap`: carry on without the random map when it cannot
    /// be allocated.
    pub softrandommap: bool,
    pub randrepeat: bool,
    pub allrandrepeat: bool,
    pub randseed: Option<u64>,
    pub random_generator: RandomGenerator,
    /// Per direction (read, write, trim).
    pub random_distribution: [RandomDistribution; 3],
    pub percentage_random: [f64; 3],
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub io_submit_mode: SubmitMode,
    pub serialize_overlap: bool,
    pub zonemode: ZoneMode,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    pub zbd: ZbdOpts,
    pub loops: u64,
    pub ioengine: EngineKind,
    pub trim_percentage: f64,
    pub trim_backlog: u64,
}

impl Default for IoOpts {
    fn default() -> Self {
        let bs = BlockSizes::Range { lo: 4096, hi: 4096 };
        IoOpts {
            rw: RwPattern::Read,
            rw_nr: 0,
            rw_sequencer: RwSequencer::Sequential,
            rwmixread: 50.0,
            bs: [bs.clone(), bs.clone(), bs],
            blockalign: [None; 3],
            bs_from: [BsFrom::Bs; 3],
            bs_unaligned: false,
            bs_is_seq_rand: false,
            norandommap: false,
            softrandommap: false,
            randrepeat: true,
            allrandrepeat: false,
            randseed: None,
            random_generator: RandomGenerator::Tausworthe,
            random_distribution: [
                RandomDistribution::Random,
                RandomDistribution::Random,
                RandomDistribution::Random,
            ],
            percentage_random: [100.0; 3],
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            io_submit_mode: SubmitMode::Inline,
            serialize_overlap: false,
            zonemode: ZoneMode::None,
            zonesize: 0,
            zonerange: 0,
            zoneskip: 0,
            zbd: ZbdOpts::default(),
            loops: 1,
            ioengine: EngineKind::DEFAULT,
            trim_percentage: 0.0,
            trim_backlog: 0,
        }
    }
}

/// Run time and pacing: runtime, ramp, delays, rate limits, think time.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeOpts {
    /// All times in microseconds.
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    pub startdelay_us: (u64, u64),
    pub thinktime_us: u64,
    pub thinktime_spin_us: u64,
    pub thinktime_blocks: u64,
    pub thinktime_blocks_type: ThinkBlocksType,
    pub thinktime_iotime_us: u64,
    /// Bytes per second per direction.
    pub rate: [u64; 3],
    pub rate_min: [u64; 3],
    pub rate_iops: [u64; 3],
    pub rate_iops_min: [u64; 3],
    pub rate_process: RateProcess,
    pub rate_cycle_ms: u64,
    pub rate_ignore_thinktime: bool,
    pub clocksource: ClockSource,
}

impl Default for TimeOpts {
    fn default() -> Self {
        TimeOpts {
            runtime_us: 0,
            time_based: false,
            ramp_time_us: 0,
            startdelay_us: (0, 0),
            thinktime_us: 0,
            thinktime_spin_us: 0,
            thinktime_blocks: 1,
            thinktime_blocks_type: ThinkBlocksType::Complete,
            thinktime_iotime_us: 0,
            rate: [0; 3],
            rate_min: [0; 3],
            rate_iops: [0; 3],
            rate_iops_min: [0; 3],
            rate_process: RateProcess::Linear,
            rate_cycle_ms: 1000,
            rate_ignore_thinktime: false,
            clocksource: ClockSource::Auto,
        }
    }
}

/// Caching and durability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncOpts {
    pub direct: bool,
    pub invalidate: bool,
    /// `sync`: 0 none, or `crate::sys::O_SYNC` / `crate::sys::O_DSYNC`.
    pub sync_flags: i32,
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    pub sync_file_range: Option<(u32, u64)>,
}

impl Default for SyncOpts {
    fn default() -> Self {
        SyncOpts {
            direct: false,
            invalidate: true,
            sync_flags: 0,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            sync_file_range: None,
        }
    }
}

/// Contents of write buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferOpts {
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    pub buffer_pattern: Vec<u8>,
    pub buffer_compress_percentage: u32,
    pub buffer_compress_chunk: u64,
    pub dedupe_percentage: u32,
    pub dedupe_mode: DedupeMode,
    pub dedupe_working_set_percentage: u32,
    /// `dedupe_global`: share duplicate contents with the other jobs
    /// that set it.
    pub dedupe_global: bool,
    pub iomem_align: u64,
    /// `mem`/`iomem`: what the buffers are allocated from.
    pub mem: MemType,
    /// `hugepage-size`: huge page size for shmhuge and mmaphuge.
    pub hugepage_size: u64,
    /// `lockmem`: bytes to pin with mlock while the job runs.
    pub lockmem: u64,
}

/// `mem`: the memory I/O buffers come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemType {
    Malloc,
    Shm,
    ShmHuge,
    /// Anonymous, or the mapping of a file (`mmap:FILE`).
    Mmap(Option<std::path::PathBuf>),
    MmapHuge(Option<std::path::PathBuf>),
    MmapShared(Option<std::path::PathBuf>),
}

impl MemType {
    pub fn name(&self) -> &'static str {
        match self {
            MemType::Malloc => "malloc",
            MemType::Shm => "shm",
            MemType::ShmHuge => "shmhuge",
            MemType::Mmap(_) => "mmap",
            MemType::MmapHuge(_) => "mmaphuge",
            MemType::MmapShared(_) => "mmapshared",
        }
    }
}

/// `dedupe_mode`: where duplicate write contents come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DedupeMode {
    /// Repeat the most recent new contents.
    Repeat,
    /// Pick from the first new contents, a working set sized by
    /// `dedupe_working_set_percentage` of the files.
    WorkingSet,
}

impl Default for BufferOpts {
    fn default() -> Self {
        BufferOpts {
            zero_buffers: false,
            refill_buffers: false,
            scramble_buffers: true,
            buffer_pattern: Vec::new(),
            buffer_compress_percentage: 0,
            buffer_compress_chunk: 512,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
            iomem_align: 0,
            mem: MemType::Malloc,
            hugepage_size: 2 << 20,
            lockmem: 0,
        }
    }
}

/// `verify_pattern`: bytes written and checked, with 8-byte slots that
/// receive the block's offset (`%o`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyPattern {
    pub bytes: Vec<u8>,
    /// Positions in `bytes` where the little-endian block offset goes.
    pub offset_at: Vec<usize>,
}

impl VerifyPattern {
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Data integrity checking.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyOpts {
    pub verify: VerifyKind,
    pub do_verify: bool,
    pub verify_pattern: VerifyPattern,
    /// Bytes per verification header; 0: one per block.
    pub verify_interval: u64,
    /// Where in each interval the header is moved to; 0: at the start.
    pub verify_offset: u64,
    pub verify_fatal: bool,
    pub verify_dump: bool,
    /// Check written blocks after every this many writes (0: at the end).
    pub verify_backlog: u64,
    /// Blocks checked each time the backlog triggers (0: `verify_backlog`).
    pub verify_backlog_batch: u64,
    pub verify_only: bool,
    /// `verify_async`: accepted; iomark checks in the job's own thread.
    pub verify_async: u64,
}

impl Default for VerifyOpts {
    fn default() -> Self {
        VerifyOpts {
            verify: VerifyKind::None,
            do_verify: true,
            verify_pattern: VerifyPattern::default(),
            verify_interval: 0,
            verify_offset: 0,
            verify_fatal: false,
            verify_dump: false,
            verify_backlog: 0,
            verify_backlog_batch: 0,
            verify_only: false,
            verify_async: 0,
        }
    }
}

impl VerifyOpts {
    /// Whether writes carry verification data and reads are checked.
    pub fn enabled(&self) -> bool {
        self.verify != VerifyKind::None
    }
}

/// Statistics and reporting knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct StatOpts {
    /// `disk_util`: report the disks under the job's files.
    pub disk_util: bool,
    pub percentile_list: Vec<f64>,
    /// Decimals shown for percentile names in the text report (the most
    /// any entry of `percentile_list` was written with).
    pub percentile_precision: u32,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    pub gtod_reduce: bool,
    pub significant_figures: u32,
    pub bwavgtime_ms: u64,
    pub iopsavgtime_ms: u64,
    pub group_reporting: bool,
    pub unified_rw_reporting: u8,
    pub stats: bool,
    pub steadystate: Option<SteadyState>,
    pub ss_dur_us: u64,
    pub ss_ramp_us: u64,
    pub latency_target_us: u64,
    pub latency_window_us: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
    pub max_latency_us: [u64; 3],
}

pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl Default for StatOpts {
    fn default() -> Self {
        StatOpts {
            disk_util: true,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            gtod_reduce: false,
            significant_figures: 4,
            bwavgtime_ms: 500,
            iopsavgtime_ms: 500,
            group_reporting: false,
            unified_rw_reporting: 0,
            stats: true,
            steadystate: None,
            ss_dur_us: 0,
            ss_ramp_us: 0,
            latency_target_us: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
            latency_run: false,
            max_latency_us: [0; 3],
        }
    }
}

/// Time-series log files.
#[derive(Clone, Debug, PartialEq)]
pub struct LogOpts {
    pub write_bw_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_hist_log: Option<String>,
    pub log_avg_msec: u64,
    pub log_hist_msec: u64,
    pub log_hist_coarseness: u32,
    pub log_max_value: bool,
    pub log_offset: bool,
    /// `log_store_compressed`: write logs as fio's compressed `.fz` files.
    pub log_store_compressed: bool,
    /// `log_compression`: accepted; iomark streams logs to disk as it
    /// goes, so they never build up in memory.
    pub log_compression: u64,
    pub log_prio: bool,
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,
    /// Clock whose epoch Unix/alternate time stamps use (clock_gettime id).
    pub log_alternate_epoch_clock_id: i32,
    pub per_job_logs: bool,
    /// `log_entries`: validated only (logs stream through a fixed buffer).
    pub log_entries: u64,
    pub write_iolog: Option<String>,
    pub read_iolog: Option<String>,
    pub replay_no_stall: bool,
    pub replay_time_scale: u64,
    pub replay_redirect: Option<String>,
    pub replay_align: u64,
    pub replay_scale: u64,
    /// `replay_skip`: trace records not to replay, as a mask of
    /// `1 << Ddir::idx()` plus `REPLAY_SKIP_SYNC` for syncs.
    pub replay_skip: u8,
    /// Not an option: what the planner adds to the names of this job's
    /// log files (`NAME.TAG`) on one rank of a run over many hosts, so
    /// that ranks never share a log. Empty otherwise.
    pub file_tag: String,
}

/// `replay_skip` bit for sync records.
pub const REPLAY_SKIP_SYNC: u8 = 1 << 3;

impl Default for LogOpts {
    fn default() -> Self {
        LogOpts {
            write_bw_log: None,
            write_iops_log: None,
            write_lat_log: None,
            write_hist_log: None,
            log_avg_msec: 0,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            log_max_value: false,
            log_offset: false,
            log_store_compressed: false,
            log_compression: 0,
            log_prio: false,
            log_unix_epoch: false,
            log_alternate_epoch: false,
            log_alternate_epoch_clock_id: 0,
            per_job_logs: true,
            log_entries: 1024,
            write_iolog: None,
            read_iolog: None,
            replay_no_stall: false,
            replay_time_scale: 100,
            replay_redirect: None,
            replay_align: 0,
            replay_scale: 1,
            replay_skip: 0,
            file_tag: String::new(),
        }
    }
}

/// Job control: grouping, dependencies, CPU placement.
#[derive(Clone, Debug, PartialEq)]
pub struct JobControl {
    pub numjobs: u32,
    pub stonewall: bool,
    pub new_group: bool,
    pub wait_for: Option<String>,
    pub exitall: bool,
    pub exit_what: ExitWhat,
    pub exitall_on_error: bool,
    pub thread: bool,
    /// `threads` (fio's tiobench-profile option) was given: it has no
    /// effect, and the run warns.
    pub threads_given: bool,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_allowed_policy: CpusPolicy,
    pub nice: i32,
    pub prio: Option<u32>,
    pub prioclass: Option<u32>,
    /// `continue_on_error`, normalized: none, read, write, io, verify, all.
    pub continue_on_error: String,
    /// `ignore_error`: per error type (read, write, verify), the errors
    /// the job counts and carries on after; None keeps the default
    /// (EIO and EILSEQ, where `continue_on_error` names the type).
    pub ignore_error: [Option<Vec<i32>>; 3],
    /// `error_dump`: print every error, also those the job carries on after.
    pub error_dump: bool,
    /// `exec_prerun`/`exec_postrun`: shell commands run by each clone
    /// before it starts and after it ends.
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// `flow`: weight in its flow group (0: no flow control), `flow_id`,
    /// and `flow_sleep` (µs to pause when held back; 0: yield).
    pub flow: u64,
    pub flow_id: u32,
    pub flow_sleep_us: u64,
    /// `numa_cpu_nodes`: run on these nodes' CPUs.
    pub numa_cpu_nodes: Option<Nodes>,
    pub numa_mem_policy: Option<MemPolicy>,
    pub kb_base: u64,
    pub unit_base: u32,
}

impl JobControl {
    /// Whether the job carries on after some errors, so its report holds
    /// the error count and the first error (`continue_on_error` set, or
    /// an `ignore_error` list given).
    pub fn counts_errors(&self) -> bool {
        !matches!(self.continue_on_error.as_str(), "" | "none")
            || self.ignore_error.iter().any(Option::is_some)
    }
}

impl Default for JobControl {
    fn default() -> Self {
        JobControl {
            numjobs: 1,
            stonewall: false,
            new_group: false,
            wait_for: None,
            exitall: false,
            exit_what: ExitWhat::Group,
            exitall_on_error: false,
            thread: false,
            threads_given: false,
            cpus_allowed: None,
            cpus_allowed_policy: CpusPolicy::Shared,
            nice: 0,
            prio: None,
            prioclass: None,
            continue_on_error: "none".into(),
            ignore_error: [None, None, None],
            error_dump: true,
            exec_prerun: None,
            exec_postrun: None,
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            numa_cpu_nodes: None,
            numa_mem_policy: None,
            kb_base: 1024,
            unit_base: 0,
        }
    }
}

/// `stat_type` of the filestat engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatType {
    Stat,
    Lstat,
    Statx,
}

/// Options that belong to one engine (`hipri`, `fixedbufs`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOpts {
    pub hipri: bool,
    pub hipri_percentage: u32,
    pub uncached: u32,
    pub nowait: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    /// -1: pick non-vectored commands when the kernel has them.
    pub nonvectored: i32,
    pub force_async: u32,
    pub userspace_reap: bool,
    /// Per-I/O priorities (libaio, io_uring).
    pub cmdprio: CmdPrio,
    /// mmap: ask for transparent huge pages.
    pub thp: bool,
    pub stat_type: StatType,
    /// io_uring_cmd: protection information and data placement.
    pub nvme: NvmeOpts,
    /// The http engine (S3, WebDAV).
    pub http: HttpOpts,
}

/// A credential from a job (`http_s3_key`, `http_pass`, …): kept for the
/// request signer and never shown. `Debug` prints a placeholder, and the
/// "job options" echo holds [`Secret::SHOWN`] instead of the value
/// (`OptDef::secret`), so it reaches no report, log or history.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// What reports show in a secret's place.
    pub const SHOWN: &'static str = "<hidden>";

    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The value itself, for the signer only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Secret::SHOWN)
    }
}

/// `https`: plain HTTP, HTTPS, or HTTPS without checking the server's
/// certificate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Https {
    #[default]
    Off,
    On,
    Insecure,
}

/// `http_mode`: the protocol the http engine speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpMode {
    /// Plain HTTP PUT/GET/DELETE, with basic authentication when
    /// `http_user` and `http_pass` are given (fio's default).
    #[default]
    Webdav,
    /// S3, each request signed with AWS Signature Version 4.
    S3,
}

/// `http_object_mode`: how blocks map to objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ObjectMode {
    /// One object per block, named `FILENAME_OFFSET_LENGTH`.
    #[default]
    Block,
    /// One object per file; reads are ranged GETs, a write replaces the
    /// whole object with the block.
    Range,
}

/// `http_op`: what a read of the http engine asks the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpOp {
    /// GET for reads (PUT for writes, DELETE for trims), as fio.
    #[default]
    Data,
    /// HEAD of the object a GET would read: its metadata, no data.
    Head,
    /// One page of ListObjectsV2 over the path's prefix (S3).
    List,
}

impl HttpOp {
    /// The request's method as reports name it (`Data`: None, the
    /// direction says).
    pub fn method(self) -> Option<&'static str> {
        match self {
            HttpOp::Data => None,
            HttpOp::Head => Some("HEAD"),
            HttpOp::List => Some("LIST"),
        }
    }
}

/// The http engine's options (fio's `http_*` and `https`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOpts {
    /// `host` or `host:port` the URLs start with (for virtual-hosted S3,
    /// `bucket.endpoint`).
    pub host: String,
    pub https: Https,
    pub mode: HttpMode,
    pub user: Option<String>,
    pub pass: Option<Secret>,
    /// Access key id and secret key; None: from the environment or the
    /// shared credentials file.
    pub s3_keyid: Option<String>,
    pub s3_key: Option<Secret>,
    pub s3_security_token: Option<Secret>,
    /// None: `AWS_REGION`, else us-east-1.
    pub s3_region: Option<String>,
    /// Sent as `x-amz-storage-class` with each PUT when given.
    pub s3_storage_class: Option<String>,
    /// 1: one line per request on stderr; 2: also its headers.
    pub verbose: u32,
    pub object_mode: ObjectMode,
    /// How often a request the server answered "busy" (HTTP 429, 500,
    /// 502, 503, 504) is sent again, after a growing pause.
    pub retries: u32,
    /// PEM file of the certificate authorities HTTPS trusts instead of
    /// the built-in list (a private CA, a self-signed server).
    pub ca_file: Option<String>,
    /// S3 PUTs of objects larger than this are multipart uploads in
    /// parts of this size (0: one PUT whatever the size, as fio).
    pub s3_part_size: u64,
    /// What reads ask: GET, HEAD or a page of LIST (iomark's own).
    pub op: HttpOp,
    /// Most keys a LIST page asks for (`max-keys`).
    pub list_max_keys: u32,
}

impl Default for HttpOpts {
    fn default() -> Self {
        HttpOpts {
            host: "localhost".into(),
            https: Https::Off,
            mode: HttpMode::Webdav,
            user: None,
            pass: None,
            s3_keyid: None,
            s3_key: None,
            s3_security_token: None,
            s3_region: None,
            s3_storage_class: None,
            verbose: 0,
            object_mode: ObjectMode::Block,
            retries: 4,
            ca_file: None,
            s3_part_size: 0,
            op: HttpOp::Data,
            list_max_keys: 1000,
        }
    }
}

/// Which data placement directive writes carry (`dataplacement`, `fdp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    #[default]
    None,
    /// Flexible data placement: a placement identifier per write.
    Fdp,
    /// Streams: a stream identifier per write.
    Streams,
}

/// How each write's placement identifier is chosen (`plid_select`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlidSelect {
    /// The next of the job's identifiers, in turn (fio's default).
    #[default]
    RoundRobin,
    /// One of the job's identifiers at random (uniform).
    Random,
    /// By the write's offset, from the ranges of `dp_scheme`.
    Scheme,
}

/// The PRCHK bits of an NVMe read or write (command dword 12) that
/// `pi_chk` names.
pub mod pi_chk_bits {
    pub const GUARD: u32 = 1 << 28;
    pub const APPTAG: u32 = 1 << 27;
    pub const REFTAG: u32 = 1 << 26;
}

/// io_uring_cmd's NVMe options.
#[derive(Clone, Debug, PartialEq)]
pub struct NvmeOpts {
    /// Protection information action (PRACT): the controller inserts and
    /// strips the PI; 0: iomark writes and checks it.
    pub pi_act: bool,
    /// The PRCHK bits of command dword 12 (guard, application tag,
    /// reference tag) asked by `pi_chk`.
    pub pi_chk: u32,
    /// Bytes of separate metadata buffer per I/O.
    pub md_per_io_size: u64,
    pub apptag: u16,
    pub apptag_mask: u16,
    pub placement: Placement,
    /// Placement identifier indices (FDP) or stream ids (streams); empty:
    /// every handle the namespace has.
    pub plids: Vec<u16>,
    pub plid_select: PlidSelect,
    /// `dp_scheme`: the file of `start, end, index` lines.
    pub dp_scheme: Option<String>,
}

impl Default for NvmeOpts {
    fn default() -> Self {
        NvmeOpts {
            pi_act: true,
            pi_chk: 0,
            md_per_io_size: 0,
            apptag: 0x1234,
            apptag_mask: 0xffff,
            placement: Placement::None,
            plids: Vec::new(),
            plid_select: PlidSelect::RoundRobin,
            dp_scheme: None,
        }
    }
}

impl Default for EngineOpts {
    fn default() -> Self {
        EngineOpts {
            hipri: false,
            hipri_percentage: 100,
            uncached: 0,
            nowait: false,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            nonvectored: -1,
            force_async: 0,
            userspace_reap: false,
            cmdprio: CmdPrio::default(),
            thp: false,
            stat_type: StatType::Stat,
            nvme: NvmeOpts::default(),
            http: HttpOpts::default(),
        }
    }
}

/// Per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`,
/// `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit`), for reads (`[0]`) and
/// writes (`[1]`); trims take none.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CmdPrio {
    /// Share of the I/Os issued with the priority below, in percent.
    pub percentage: [u32; 2],
    /// Priority class (0: not given, which means real-time).
    pub class: [u32; 2],
    /// Priority level within the class.
    pub level: [u32; 2],
    /// Priority hint.
    pub hint: [u32; 2],
    /// `cmdprio_bssplit`, when given (not empty): per direction, the
    /// entries with a share, sorted by block size.
    pub bssplit: Option<[Vec<PrioSplit>; 2]>,
}

impl CmdPrio {
    /// Whether any I/O may get its own priority.
    pub fn in_use(&self) -> bool {
        self.bssplit.is_some() || self.percentage.iter().any(|p| *p > 0)
    }
}

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes, `perc` percent of
/// them issued with `prio` (class, level, hint), or with `cmdprio_class`,
/// `cmdprio` and `cmdprio_hint` when the entry names none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioSplit {
    pub bs: u64,
    pub perc: u32,
    pub prio: Option<(u32, u32, u32)>,
}

/// One job, as the options describe it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct JobSpec {
    pub name: String,
    pub description: String,
    pub file: FileOpts,
    pub io: IoOpts,
    pub time: TimeOpts,
    pub sync: SyncOpts,
    pub buf: BufferOpts,
    pub verify: VerifyOpts,
    pub stat: StatOpts,
    pub log: LogOpts,
    pub ctl: JobControl,
    pub engine: EngineOpts,
    /// Options set in this job's own section, in order, as
    /// (canonical name, value text): fio's "job options" echo.
    pub job_options: Vec<(String, String)>,
    /// Canonical names of every option assigned (globals included), for
    /// checks such as engine-specific options.
    pub set_options: Vec<&'static str>,
}

impl JobSpec {
    pub fn kb_base(&self) -> u64 {
        self.ctl.kb_base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fadvise_hint_follows_the_pattern_unless_told() {
        let w = FadviseHint::Workload;
        assert_eq!(w.random(RwPattern::RandRead), Some(true));
        assert_eq!(w.random(RwPattern::Read), Some(false));
        assert_eq!(
            FadviseHint::Sequential.random(RwPattern::RandWrite),
            Some(false)
        );
        assert_eq!(FadviseHint::Random.random(RwPattern::Write), Some(true));
        assert_eq!(FadviseHint::None.random(RwPattern::RandRead), None);
    }
}
