//! `ftruncate`: each write sets the file's size to the write's offset
//! with `ftruncate(2)`; the block size only decides the offsets. Reads and
//! trims are refused before the job starts (`engine::preflight`); syncs
//! are the usual synchronous calls.

use super::file::{ret_or_errno, sync_op};
use super::{Caps, Engine, IoUnit, Op, Queued};

pub struct FtruncateEngine;

impl Engine for FtruncateEngine {
    fn name(&self) -> &'static str {
        "ftruncate"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            ..Caps::default()
        }
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        io.result = match io.op {
            Op::Write => {
                // SAFETY: ftruncate on an open descriptor.
                let r = unsafe { libc::ftruncate(io.fd, io.offset as libc::off_t) };
                if r < 0 {
                    ret_or_errno(-1)
                } else {
                    io.len as i64
                }
            }
            Op::Read | Op::Trim => -(libc::EINVAL as i64),
            _ => sync_op(io),
        };
        Queued::Completed
    }
}
