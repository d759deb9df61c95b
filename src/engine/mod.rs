//! I/O engines behind one contract: queue → commit → reap.
//!
//! An engine turns `IoUnit`s into system calls. It owns no statistics and
//! no workload logic; the worker (`run::worker`) decides what to issue and
//! accounts what completes. On the hot path an engine must not allocate or
//! lock: completions are written into a caller-provided vector whose
//! capacity was reserved up front.

use std::io;
use std::os::fd::RawFd;

use crate::job::JobSpec;

pub mod align;
pub mod falloc;
pub mod file;
pub mod fileops;
pub mod ftruncate;
pub mod io_uring;
pub mod libaio;
pub mod mmap;
pub mod null;
pub mod posixaio;
pub mod sync;

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
#[derive(Debug)]
pub struct IoUnit {
    /// Position in the worker's pool; engines use it as the completion tag.
    pub idx: u32,
    pub op: Op,
    /// Index of the file in the worker's file table.
    pub file: u32,
    pub fd: RawFd,
    pub offset: u64,
    pub len: u64,
    pub buf: *mut u8,
    /// Capacity of `buf` in bytes.
    pub buf_cap: u64,
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
    pub moved: u64,
}

// SAFETY: the raw buffer pointer refers to memory owned by the worker that
// owns the unit; units never cross threads while a pointer is in use.
unsafe impl Send for IoUnit {}

impl IoUnit {
    pub fn new(idx: u32, buf: *mut u8, buf_cap: u64) -> Self {
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
        }
    }

    /// The data buffer for this I/O's length.
    ///
    /// # Safety
    /// `buf` must point to at least `len` valid bytes (the worker's pool
    /// guarantees `len <= buf_cap`).
    pub unsafe fn data(&mut self) -> &mut [u8] {
        std::slice::from_raw_parts_mut(self.buf, self.len as usize)
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

/// What an engine can and cannot do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caps {
    /// Every I/O completes inside `queue` (depth is effectively 1).
    pub sync: bool,
    /// Does no real I/O; files need not exist.
    pub diskless: bool,
    /// Needs the file laid out to its full size before I/O (mmap).
    pub no_extend: bool,
    /// A file-operation engine (filecreate, filestat, filedelete): opening
    /// a file is the measured operation, and its latency is recorded as
    /// a completion latency; the job's blocks are only counted.
    pub file_op: bool,
    /// Takes buffers of the whole pool at `init` (fixed buffers).
    pub registers_buffers: bool,
}

/// Per-file information an engine may need when opening.
#[derive(Debug)]
pub struct OpenFile<'a> {
    pub path: &'a std::path::Path,
    pub flags: i32,
    pub size: u64,
    pub is_blockdev: bool,
}

/// The engine contract.
pub trait Engine: Send {
    fn name(&self) -> &'static str;
    fn caps(&self) -> Caps;

    /// Called once in the worker thread before the run, with the unit pool
    /// buffer (for engines that register buffers) and the queue depth.
    fn init(&mut self, _depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        Ok(())
    }

    /// Opens a file; returns the descriptor and engine-private data.
    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        file::open_fd(f.path, f.flags).map(|fd| (fd, 0))
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
}

/// Engines iomark implements.
pub const IMPLEMENTED: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "io_uring",
    "posixaio",
    "mmap",
    "null",
    "filecreate",
    "filestat",
    "filedelete",
    "ftruncate",
    "falloc",
];

/// fio engines that iomark does not implement (named so the error is clear).
pub const NOT_IMPLEMENTED: &[&str] = &[
    "cpuio",
    "net",
    "netsplice",
    "exec",
    "e4defrag",
    "splice",
    "gfapi",
    "gfapi_async",
    "mtd",
    "sg",
    "io_uring_cmd",
    "nbd",
    "rdma",
    "rados",
    "rbd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "http",
    "nfs",
    "libiscsi",
    "libhdfs",
    "xnvme",
    "libzbc",
    "libcufile",
    "dfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "windowsaio",
    "solarisaio",
    "spdk",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "libblkio",
    "external",
    "guasi",
    "binject",
    "dircreate",
    "dirstat",
    "dirdelete",
];

/// Checks an `ioengine` value, with a clear reason when it cannot be used.
pub fn check_name(name: &str) -> Result<(), String> {
    if IMPLEMENTED.contains(&name) {
        return Ok(());
    }
    let base = name.split(':').next().unwrap_or(name);
    if NOT_IMPLEMENTED.contains(&base) || name.starts_with("external:") {
        return Err(format!(
            "ioengine '{name}' is not supported by iomark (supported: {})",
            IMPLEMENTED.join(", ")
        ));
    }
    Err(format!(
        "unknown ioengine '{name}' (supported: {})",
        IMPLEMENTED.join(", ")
    ))
}

/// Creates the engine a job asks for.
pub fn create(spec: &JobSpec) -> Result<Box<dyn Engine>, String> {
    Ok(match spec.io.ioengine.as_str() {
        "null" => Box::new(null::NullEngine::new(spec)),
        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => Box::new(sync::SyncEngine::new(spec)?),
        "libaio" => Box::new(libaio::LibaioEngine::new(spec)),
        "io_uring" => Box::new(io_uring::IoUringEngine::new(spec)?),
        "posixaio" => Box::new(posixaio::PosixAioEngine::new(spec)),
        "mmap" => Box::new(mmap::MmapEngine::new(spec)),
        "filecreate" | "filestat" | "filedelete" => Box::new(fileops::FileOpEngine::new(spec)?),
        "ftruncate" => Box::new(ftruncate::FtruncateEngine),
        "falloc" => Box::new(falloc::FallocEngine),
        other => return Err(format!("ioengine '{other}' is not supported by iomark")),
    })
}

/// Whether the runner lays out (creates and sizes) a job's files before
/// it starts. `filecreate` creates them itself, as its measured operation.
pub fn lays_out_files(ioengine: &str) -> bool {
    !matches!(ioengine, "filecreate" | "null")
}

/// Whether the engine cannot grow files during I/O (mmap maps a fixed
/// size), so the runner must lay them out in full, with data, first.
pub fn cannot_extend_files(ioengine: &str) -> bool {
    ioengine == "mmap"
}

/// Checks, before anything is laid out or started, that a job's engine
/// can run here and fits the job: io_uring is probed (seccomp or
/// `kernel.io_uring_disabled` can switch it off), engine-specific option
/// combinations are checked. Returns one line naming the problem.
pub fn preflight(spec: &JobSpec) -> Result<(), String> {
    let job = &spec.name;
    match spec.io.ioengine.as_str() {
        "io_uring" => io_uring::preflight(spec).map_err(|e| format!("job '{job}': {e}")),
        "ftruncate" => {
            use crate::job::spec::Ddir;
            if spec.io.rw.has(Ddir::Read) || spec.io.rw.has(Ddir::Trim) {
                return Err(format!(
                    "job '{job}': ioengine=ftruncate only does writes (each write sets the file size \
                     to its offset); rw={} reads or trims",
                    spec.io.rw.name()
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
