//! The file-operation engines, which measure metadata operations rather
//! than data transfer: `filecreate` (each file is created with
//! `open(O_CREAT)`), `filestat` (`stat`, `lstat` or `statx` per
//! `stat_type`) and `filedelete` (`unlink`).
//!
//! The operation happens when the worker opens the file; the worker times
//! that call and records it as a completion latency. `filecreate`'s files
//! are not laid out beforehand (`Layout::None` in its registry entry). The job's blocks are
//! then only counted, with no data moved, so `total_ios` and `io_bytes`
//! follow the job's size and block size as with any other engine.

use std::io;

use crate::sys::{IntoRawFd, RawFd};

use super::file::close_fd;
use super::{Engine, EngineKind, IoUnit, OpenFile, Queued};
use crate::job::spec::StatType;
use crate::job::JobSpec;

/// Which file operation is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Create,
    Stat(StatType),
    Delete,
}

pub struct FileOpEngine {
    kind: Kind,
    direct: bool,
}

impl FileOpEngine {
    pub fn new(spec: &JobSpec, kind: Kind) -> Self {
        FileOpEngine {
            kind,
            direct: spec.sync.direct,
        }
    }
}

/// The stat call `stat_type` names, of `name` in `dir`.
#[cfg(unix)]
fn stat(dir: RawFd, name: &std::ffi::CStr, t: StatType) -> io::Result<()> {
    let check = |r: libc::c_int| {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    let name = name.as_ptr();
    // SAFETY: stat-family calls filling zeroed buffers.
    unsafe {
        match t {
            StatType::Stat => {
                let mut st: libc::stat = std::mem::zeroed();
                check(libc::fstatat(dir, name, &mut st, 0))
            }
            StatType::Lstat => {
                let mut st: libc::stat = std::mem::zeroed();
                check(libc::fstatat(dir, name, &mut st, libc::AT_SYMLINK_NOFOLLOW))
            }
            #[cfg(target_os = "linux")]
            StatType::Statx => {
                let mut st: libc::statx = std::mem::zeroed();
                check(libc::statx(dir, name, 0, libc::STATX_ALL, &mut st))
            }
            // statx exists on Linux only (refused elsewhere before the
            // job starts).
            #[cfg(not(target_os = "linux"))]
            StatType::Statx => Err(crate::sys::from_errno(libc::EOPNOTSUPP)),
        }
    }
}

/// The stat call `stat_type` names on Windows: the file opened for its
/// attributes (following a link for `stat`), and its information read.
#[cfg(windows)]
fn stat(dir: RawFd, name: &std::ffi::CStr, t: StatType) -> io::Result<()> {
    use crate::sys;
    let flags = match t {
        StatType::Lstat => sys::O_PATH | sys::O_NOFOLLOW,
        _ => sys::O_PATH,
    };
    let fd = sys::open_at(dir, name, flags, 0)?;
    sys::fstat(sys::AsRawFd::as_raw_fd(&fd)).map(drop)
}

impl Engine for FileOpEngine {
    fn kind(&self) -> EngineKind {
        match self.kind {
            Kind::Create => EngineKind::FileCreate,
            Kind::Stat(_) => EngineKind::FileStat,
            Kind::Delete => EngineKind::FileDelete,
        }
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        use crate::sys;
        // The file is `name` in the directory handle `dir` (see OpenFile).
        let (dir, name) = (f.dir, f.name);
        match self.kind {
            Kind::Create => {
                // The runner's safety flags (exclusive create, no
                // following of links, no blocking) are kept.
                let safety = sys::O_EXCL | sys::O_NOFOLLOW | sys::O_NONBLOCK;
                let mut flags = sys::O_CREAT | sys::O_RDWR | (f.flags & safety);
                if self.direct {
                    flags |= sys::O_DIRECT;
                }
                let fd = sys::open_at(dir, name, flags, 0o600)?;
                Ok((fd.into_raw_fd(), 0))
            }
            Kind::Stat(t) => {
                stat(dir, name, t)?;
                Ok((-1, 0))
            }
            Kind::Delete => {
                // The runner checked that the name is the file it may
                // delete (`run::files::open_target`) before this call.
                sys::unlink_at(dir, name, false, None)?;
                Ok((-1, 0))
            }
        }
    }

    fn close(&mut self, fd: RawFd, _data: usize, _size: u64) -> io::Result<()> {
        if fd >= 0 {
            close_fd(fd)
        } else {
            Ok(())
        }
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        // Blocks are counted, not transferred.
        io.result = if io.op.is_data() { io.len as i64 } else { 0 };
        Queued::Completed
    }
}
