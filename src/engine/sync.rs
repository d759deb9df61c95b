//! The synchronous engines: `sync` (lseek + read/write), `psync`
//! (pread/pwrite), `vsync` (readv/writev), `pvsync` (preadv/pwritev) and
//! `pvsync2` (preadv2/pwritev2 with `hipri` on `hipri_percentage` of the
//! I/Os, spread evenly, `uncached` (RWF_DONTCACHE) and `nowait`).
//! Every I/O completes inside `queue`.

use super::file::{ret_or_errno, sync_op};
use super::{Engine, EngineKind, IoUnit, Op, Queued};
use crate::job::JobSpec;

/// Which system calls move the data: each is its own engine kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Sync,
    Psync,
    Vsync,
    Pvsync,
    Pvsync2,
}

impl Style {
    fn kind(self) -> EngineKind {
        match self {
            Style::Sync => EngineKind::Sync,
            Style::Psync => EngineKind::Psync,
            Style::Vsync => EngineKind::Vsync,
            Style::Pvsync => EngineKind::Pvsync,
            Style::Pvsync2 => EngineKind::Pvsync2,
        }
    }
}

pub struct SyncEngine {
    style: Style,
    /// RWF_* flags for pvsync2.
    rwf: i32,
    hipri_percentage: u32,
    counter: u32,
}

const RWF_HIPRI: i32 = 0x1;
const RWF_NOWAIT: i32 = 0x8;
const RWF_UNCACHED: i32 = 0x80;

impl SyncEngine {
    pub fn new(spec: &JobSpec, style: Style) -> Self {
        let e = &spec.engine;
        let mut rwf = 0;
        if e.hipri {
            rwf |= RWF_HIPRI;
        }
        if e.nowait {
            rwf |= RWF_NOWAIT;
        }
        if e.uncached != 0 {
            rwf |= RWF_UNCACHED;
        }
        SyncEngine {
            style,
            rwf,
            hipri_percentage: if e.hipri { e.hipri_percentage } else { 0 },
            counter: 0,
        }
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn flags_for_this_io(&mut self) -> i32 {
        let mut f = self.rwf & !RWF_HIPRI;
        if self.hipri_percentage > 0 {
            self.counter = (self.counter + 1) % 100;
            if self.counter < self.hipri_percentage {
                f |= RWF_HIPRI;
            }
        }
        f
    }

    #[inline]
    fn rw(&mut self, io: &mut IoUnit) -> i64 {
        let write = io.op == Op::Write;
        let (buf, len, off) = (io.buf, io.len as usize, io.offset);
        // SAFETY: `buf` points into the worker's aligned pool with at least
        // `len` bytes; the descriptor is open for the duration of the call.
        let r = unsafe {
            match self.style {
                Style::Sync if write => crate::sys::seek_write(io.fd, buf, len, off),
                Style::Sync => crate::sys::seek_read(io.fd, buf, len, off),
                Style::Psync if write => crate::sys::pwrite(io.fd, buf, len, off),
                Style::Psync => crate::sys::pread(io.fd, buf, len, off),
                _ => return self.vectored(io),
            }
        };
        ret_or_errno(r)
    }

    /// The vectored styles (Unix only; refused elsewhere before the job
    /// starts).
    #[cfg(unix)]
    #[inline]
    fn vectored(&mut self, io: &mut IoUnit) -> i64 {
        let write = io.op == Op::Write;
        let buf = io.buf as *mut libc::c_void;
        let len = io.len as usize;
        let off = io.offset as libc::off_t;
        let iov = libc::iovec {
            iov_base: buf,
            iov_len: len,
        };
        // SAFETY: `buf` points into the worker's aligned pool with at least
        // `len` bytes; the descriptor is open for the duration of the call.
        let r = unsafe {
            match self.style {
                Style::Vsync => {
                    if libc::lseek(io.fd, off, libc::SEEK_SET) < 0 {
                        return ret_or_errno(-1);
                    }
                    if write {
                        libc::writev(io.fd, &iov, 1)
                    } else {
                        libc::readv(io.fd, &iov, 1)
                    }
                }
                Style::Pvsync => {
                    if write {
                        libc::pwritev(io.fd, &iov, 1, off)
                    } else {
                        libc::preadv(io.fd, &iov, 1, off)
                    }
                }
                #[cfg(target_os = "linux")]
                Style::Pvsync2 => {
                    let flags = self.flags_for_this_io();
                    if write {
                        libc::pwritev2(io.fd, &iov, 1, off, flags)
                    } else {
                        libc::preadv2(io.fd, &iov, 1, off, flags)
                    }
                }
                _ => return -(libc::EOPNOTSUPP as i64),
            }
        };
        ret_or_errno(r)
    }

    #[cfg(not(unix))]
    fn vectored(&mut self, _io: &mut IoUnit) -> i64 {
        -(libc::EOPNOTSUPP as i64)
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        self.style.kind()
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        io.result = match io.op {
            Op::Read | Op::Write => self.rw(io),
            _ => sync_op(io),
        };
        Queued::Completed
    }
}
