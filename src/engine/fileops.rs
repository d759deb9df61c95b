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
use std::os::fd::RawFd;

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

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
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
        // The file is `name` in the directory handle `dir` (see OpenFile).
        let (dir, name) = (f.dir, f.name.as_ptr());
        match self.kind {
            Kind::Create => {
                // The runner's safety flags (exclusive create, no
                // following of links, no blocking) are kept.
                let safety = libc::O_EXCL | libc::O_NOFOLLOW | libc::O_NONBLOCK;
                let mut flags = libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC | (f.flags & safety);
                if self.direct {
                    flags |= libc::O_DIRECT;
                }
                // SAFETY: NUL-terminated name; mode used with O_CREAT.
                let fd = unsafe { libc::openat(dir, name, flags, 0o600 as libc::c_uint) };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok((fd, 0))
            }
            Kind::Stat(t) => {
                // SAFETY: stat-family calls filling zeroed buffers.
                unsafe {
                    match t {
                        StatType::Stat => {
                            let mut st: libc::stat = std::mem::zeroed();
                            check(libc::fstatat(dir, name, &mut st, 0))?;
                        }
                        StatType::Lstat => {
                            let mut st: libc::stat = std::mem::zeroed();
                            check(libc::fstatat(dir, name, &mut st, libc::AT_SYMLINK_NOFOLLOW))?;
                        }
                        StatType::Statx => {
                            let mut st: libc::statx = std::mem::zeroed();
                            check(libc::statx(dir, name, 0, libc::STATX_ALL, &mut st))?;
                        }
                    }
                }
                Ok((-1, 0))
            }
            Kind::Delete => {
                // The runner checked that the name is the file it may
                // delete (`run::files::open_target`) before this call.
                // SAFETY: unlinkat of a NUL-terminated name.
                check(unsafe { libc::unlinkat(dir, name, 0) })?;
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
