//! I/O engines behind one contract: queue → commit → reap.
//!
//! An engine turns `IoUnit`s into system calls. It owns no statistics and
//! no workload logic; the worker (`run::worker`) decides what to issue and
//! accounts what completes. On the hot path an engine must not allocate or
//! lock: completions are written into a caller-provided vector whose
//! capacity was reserved up front.
//!
//! Which engines exist, what each can do and how each is built is the
//! registry (`registry`, reached with `kind.info()`); code outside it asks
//! the registry and never compares engine names.

use std::io;

pub use crate::sys::RawFd;

use crate::histogram::Histogram;
pub use crate::job::EngineKind;
use crate::job::JobSpec;
pub use error::EngineError;
pub use registry::{Destroys, EngineInfo, Layout};

pub mod align;
pub mod error;
#[cfg(target_os = "linux")]
pub mod falloc;
pub mod file;
pub mod fileops;
pub mod ftruncate;
pub mod http;
#[cfg(target_os = "linux")]
pub mod io_uring;
#[cfg(target_os = "linux")]
pub mod io_uring_cmd;
#[cfg(target_os = "linux")]
pub mod libaio;
#[cfg(unix)]
pub mod mmap;
#[cfg(windows)]
#[path = "mmap_windows.rs"]
pub mod mmap;
pub mod null;
pub mod platform;
#[cfg(unix)]
pub mod posixaio;
pub mod registry;
#[cfg(target_os = "linux")]
mod ring;
pub mod sync;
#[cfg(windows)]
pub mod windowsaio;

/// What an I/O unit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
    Fsync,
    Fdatasync,
    SyncFileRange,
}

impl Op {
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write | Op::Trim)
    }
}

/// One I/O in flight or being prepared. The buffer is owned by the worker's
/// aligned pool and stays valid for the whole job.
///
/// The buffer, its capacity, the length and the bytes a short transfer
/// moved are private: only `IoUnit::new` (an `unsafe fn`, whose caller
/// vouches for the buffer) sets the buffer, and the methods below keep
/// `len <= buf_cap`, so safe code cannot hand an engine a buffer that is
/// not there. Engines (this module's children) read the fields directly.
#[derive(Debug)]
pub struct IoUnit {
    /// Position in the worker's pool; engines use it as the completion tag.
    pub idx: u32,
    pub op: Op,
    /// Index of the file in the worker's file table.
    pub file: u32,
    pub fd: RawFd,
    pub offset: u64,
    /// Bytes to move, at most `buf_cap`.
    len: u64,
    buf: *mut u8,
    /// Capacity of `buf` in bytes (from `buf` on: a short transfer's rest
    /// starts further in and has less).
    buf_cap: u64,
    /// Clock (ns) when the unit was prepared, submitted.
    pub start_ns: u64,
    pub issue_ns: u64,
    /// Bytes done, or a negative errno.
    pub result: i64,
    /// `sync_file_range` flags, for `Op::SyncFileRange`.
    pub sfr_flags: u32,
    /// Engine-private per-file data (e.g. the mmap base address).
    pub file_data: usize,
    /// Bytes earlier parts of a short transfer moved: `offset`, `buf` and
    /// `len` then describe the rest (the worker's business, not engines').
    moved: u64,
    /// The I/O priority of this unit (set by the queue, from
    /// `workload::prio`): engines that take a priority per command send
    /// it with reads and writes.
    pub prio: IoPrio,
}

/// The I/O priority a unit is issued with and accounted under. The
/// workload decides it per I/O (`workload::prio::PrioChooser`) before the
/// unit reaches the engine; engines only read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoPrio {
    /// The priority value (`class << 13 | hint << 3 | level`, see
    /// `job::ioprio`): the job's own (`prio`/`prioclass`, 0 when not
    /// set) unless `per_io`.
    pub value: u16,
    /// The value was chosen for this I/O (`cmdprio*`): an engine must
    /// send it with the command (libaio sets `IOCB_FLAG_IOPRIO`).
    /// Otherwise the I/O runs at the thread's priority, which the job
    /// set with `ioprio_set`; engines whose commands always carry a
    /// priority (io_uring's `sqe->ioprio`) send `value` then too, as a
    /// kernel submission thread does not inherit the job's.
    pub per_io: bool,
    /// Index of the per-priority statistics of the I/O's direction this
    /// I/O counts in (0: the job's own priority).
    pub stat: u16,
}

// SAFETY: the raw buffer pointer refers to memory owned by the worker that
// owns the unit; units never cross threads while a pointer is in use.
unsafe impl Send for IoUnit {}

impl IoUnit {
    /// A unit at position `idx` of a pool whose buffer is `buf_cap` bytes
    /// at `buf`.
    ///
    /// # Safety
    /// `buf` must be valid for reads and writes of `buf_cap` bytes, and
    /// used by nothing else than this unit, for as long as the unit (or an
    /// engine it was queued to) can use it.
    pub unsafe fn new(idx: u32, buf: *mut u8, buf_cap: u64) -> Self {
        IoUnit {
            idx,
            op: Op::Read,
            file: 0,
            fd: -1,
            offset: 0,
            len: 0,
            buf,
            buf_cap,
            start_ns: 0,
            issue_ns: 0,
            result: 0,
            sfr_flags: 0,
            file_data: 0,
            moved: 0,
            prio: IoPrio::default(),
        }
    }

    /// Bytes this I/O moves.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether this I/O moves no byte (a sync, or an empty transfer).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets the bytes this I/O moves.
    ///
    /// # Panics
    /// If `len` exceeds the buffer's capacity (the worker sizes its units
    /// for the job's largest block, so this never happens in a run).
    #[inline]
    pub fn set_len(&mut self, len: u64) {
        assert!(len <= self.buf_cap, "I/O of {len} bytes exceeds its buffer");
        self.len = len;
    }

    /// The buffer's address (for code that passes it on, e.g. to another
    /// thread's unit; it makes no unit by itself).
    #[inline]
    pub fn buf_ptr(&self) -> *mut u8 {
        self.buf
    }

    /// Capacity of the buffer from `buf_ptr` on, in bytes.
    #[inline]
    pub fn buf_cap(&self) -> u64 {
        self.buf_cap
    }

    /// Bytes earlier parts of a short transfer moved.
    #[inline]
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// Steps past `n` bytes a short transfer moved: `offset`, the buffer
    /// and `len` then describe the rest.
    ///
    /// # Panics
    /// If `n` exceeds `len`.
    pub fn advance(&mut self, n: u64) {
        assert!(n <= self.len, "short transfer of {n} bytes exceeds the I/O");
        self.moved += n;
        self.offset += n;
        // SAFETY: n <= len <= buf_cap, so the rest lies inside the buffer.
        self.buf = unsafe { self.buf.add(n as usize) };
        self.buf_cap -= n;
        self.len -= n;
    }

    /// Undoes every `advance`: the unit is back at its first offset and
    /// length. Returns the bytes the earlier parts moved.
    pub fn rewind(&mut self) -> u64 {
        let moved = std::mem::take(&mut self.moved);
        self.offset -= moved;
        // SAFETY: undoes advances made inside the same buffer.
        self.buf = unsafe { self.buf.sub(moved as usize) };
        self.buf_cap += moved;
        self.len += moved;
        moved
    }

    /// The data buffer for this I/O's length.
    #[inline]
    pub fn data(&mut self) -> &mut [u8] {
        // SAFETY: `new`'s contract makes `buf` valid for `buf_cap` bytes,
        // and every method keeps `len <= buf_cap`.
        unsafe { std::slice::from_raw_parts_mut(self.buf, self.len as usize) }
    }
}

/// Outcome of `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Done synchronously; `result` is set.
    Completed,
    /// Accepted; it completes later through `reap`.
    Queued,
    /// Cannot take this one now (no room, or a sync/trim that must wait
    /// for queued I/O). The worker commits, reaps, then offers the same
    /// I/O again. Only valid while the engine has I/O queued or in flight.
    Busy,
}

/// A completion reported by `reap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub idx: u32,
    pub result: i64,
}

/// What an engine does with I/O, as the worker needs to know it. The
/// registry holds each engine's caps for every job
/// (`kind.info().caps`); `Engine::caps` gives them for the job at hand.
/// How files are laid out and what writes destroy are registry facts
/// too (`EngineInfo::layout`, `EngineInfo::destroys`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caps {
    /// Every I/O completes inside `queue` (depth is effectively 1).
    pub sync: bool,
    /// Does no real I/O; files need not exist.
    pub diskless: bool,
    /// A file-operation engine (filecreate, filestat, filedelete): opening
    /// a file is the measured operation, and its latency is recorded as
    /// a completion latency; the job's blocks are only counted.
    pub file_op: bool,
    /// Takes buffers of the whole pool at `init` (fixed buffers).
    pub registers_buffers: bool,
    /// Diskless, yet what it writes is stored and read back (objects on
    /// a server): verify checks its reads.
    pub stores_data: bool,
    /// A completion's result is the payload its request moved, which
    /// may be less than the block (or none: an object's HEAD) and is
    /// whole: it is counted as it is, never issued again as short.
    pub payload_results: bool,
}

impl Caps {
    /// No capability set (what `Default` gives, usable in constants).
    pub const NONE: Caps = Caps {
        sync: false,
        diskless: false,
        file_op: false,
        registers_buffers: false,
        stores_data: false,
        payload_results: false,
    };
}

/// Per-file information an engine may need when opening. The file is
/// `name` in the directory `dir` (a handle the run holds; `AT_FDCWD` with
/// the whole path as `name` when there is none): engines open it with
/// `openat` ([`file::open_file`]; on Windows its equivalent), never by
/// `path`, which is for messages.
#[derive(Debug)]
pub struct OpenFile<'a> {
    pub path: &'a std::path::Path,
    pub dir: RawFd,
    pub name: &'a std::ffi::CStr,
    pub flags: i32,
    pub size: u64,
    /// The lowest offset the job's I/O uses in the file (where its
    /// region starts): an engine may leave what lies below alone.
    pub start: u64,
    pub is_blockdev: bool,
}

/// The engine contract.
pub trait Engine: Send {
    /// Which engine this is (its registry entry is `kind().info()`).
    fn kind(&self) -> EngineKind;

    /// The engine's fio name.
    fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// What the engine does for this job: its registry caps unless the
    /// job changes them (null at iodepth>1, io_uring with fixedbufs).
    fn caps(&self) -> Caps {
        self.kind().info().caps
    }

    /// Called once in the worker thread before the run, with the unit pool
    /// buffer (for engines that register buffers) and the queue depth.
    fn init(&mut self, _depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        Ok(())
    }

    /// Opens a file; returns the descriptor and engine-private data.
    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        file::open_file(f, f.flags).map(|fd| (fd, 0))
    }

    /// Called once after all files are open (e.g. to register them).
    fn files_opened(&mut self, _fds: &[RawFd]) -> io::Result<()> {
        Ok(())
    }

    fn close(&mut self, fd: RawFd, _data: usize, _size: u64) -> io::Result<()> {
        file::close_fd(fd)
    }

    /// Starts (or, for sync engines, does) one I/O.
    fn queue(&mut self, io: &mut IoUnit) -> Queued;

    /// Submits what `queue` accepted. Returns how many were submitted.
    fn commit(&mut self) -> io::Result<u32> {
        Ok(0)
    }

    /// Waits for at least `min` completions and collects up to `max` into
    /// `out` (cleared first). Never allocates: `out` has enough capacity.
    fn reap(&mut self, _min: u32, _max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        Ok(0)
    }

    /// How many units are queued but not yet committed.
    fn pending(&self) -> u32 {
        0
    }

    /// Whether the last `reap` waited for a completion (in the kernel or
    /// otherwise) rather than only collecting what was already done.
    /// One that did not wait right after a commit ends when the commit
    /// did, so the worker times it with the commit's clock reading.
    fn reap_waited(&self) -> bool {
        true
    }

    /// What the device said about the failed I/O of unit `idx`, beyond
    /// its errno (an NVMe status and its name), for the error message.
    /// Cold: called only for a failed I/O.
    fn error_detail(&self, _idx: u32) -> Option<String> {
        None
    }

    /// What the engine did besides the job's thread: CPU time its own
    /// threads used, and requests it sent again. Read once, when the
    /// job ends (cold).
    fn side_counters(&self) -> SideCounters {
        SideCounters::default()
    }

    /// Times to first byte by direction (read, write, trim) as the
    /// engine records them, shared: status snapshots read them while the
    /// job runs, the job's figures when it ends (cold both). None for
    /// engines that do not talk to a server.
    fn first_byte(&self) -> Option<FirstBytes> {
        None
    }

    /// Measuring starts again (end of `ramp_time`, a latency-target
    /// step): what the engine measured on its own side so far is dropped.
    fn restart_side(&mut self) {}
}

/// Times to first byte by direction (read, write, trim), recorded by
/// an engine's own threads ([`Engine::first_byte`]).
pub type FirstBytes = std::sync::Arc<std::sync::Mutex<[Histogram; 3]>>;

/// Work an engine did outside the job's thread ([`Engine::side_counters`]),
/// over the whole job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideCounters {
    /// CPU time of the engine's own threads, in microseconds.
    pub usr_us: u64,
    pub sys_us: u64,
    /// Their context switches.
    pub ctx: u64,
    /// Requests sent again after the server answered busy.
    pub retries: u64,
    /// Objects the job's LIST requests listed (while measuring).
    pub listed: u64,
}

/// Creates the engine a job asks for, through its registry entry.
pub fn create(spec: &JobSpec) -> Result<Box<dyn Engine>, EngineError> {
    (spec.io.ioengine.info().create)(spec)
}

/// Checks, before anything is laid out or started, that a job's engine
/// can run here and fits the job (its registry entry's preflight: io_uring
/// is probed, since seccomp or `kernel.io_uring_disabled` can switch it
/// off; ftruncate only writes). Returns one line naming the job and the
/// problem.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    if let Some(why) = platform::refusal(spec) {
        return Err(EngineError::Job {
            job: spec.name.clone(),
            source: Box::new(EngineError::Unfit(why)),
        });
    }
    (spec.io.ioengine.info().preflight)(spec).map_err(|e| EngineError::Job {
        job: spec.name.clone(),
        source: Box::new(e),
    })
}
