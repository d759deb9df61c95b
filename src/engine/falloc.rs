//! `falloc`: block allocation as the I/O. A read allocates the range
//! keeping the file size (`FALLOC_FL_KEEP_SIZE`), a write allocates it
//! (mode 0, which may grow the file), a trim punches a hole
//! (`FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`). Syncs are the usual
//! synchronous calls. Files are opened read-write even for a read job,
//! since fallocate needs write access.

use std::io;

use crate::sys::RawFd;

use super::file::{open_file, ret_or_errno, sync_op};
use super::{Engine, EngineKind, IoUnit, Op, OpenFile, Queued};

pub struct FallocEngine;

impl Engine for FallocEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Falloc
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        let flags = (f.flags & !libc::O_ACCMODE) | libc::O_RDWR;
        open_file(f, flags).map(|fd| (fd, 0))
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let mode = match io.op {
            Op::Read => libc::FALLOC_FL_KEEP_SIZE,
            Op::Write => 0,
            Op::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            _ => {
                io.result = sync_op(io);
                return Queued::Completed;
            }
        };
        // SAFETY: fallocate on an open descriptor with integer arguments.
        let r = unsafe {
            libc::fallocate(io.fd, mode, io.offset as libc::off_t, io.len as libc::off_t)
        };
        io.result = if r < 0 {
            ret_or_errno(-1)
        } else {
            io.len as i64
        };
        Queued::Completed
    }
}
