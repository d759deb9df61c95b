//! `ftruncate`: each write sets the file's size to the write's offset
//! with `ftruncate(2)`; the block size only decides the offsets. Reads and
//! trims are refused before the job starts (`engine::preflight`); syncs
//! are the usual synchronous calls.

use super::file::{ret_or_errno, sync_op};
use super::{Engine, EngineError, EngineKind, IoUnit, Op, Queued};
use crate::job::spec::Ddir;
use crate::job::JobSpec;

pub struct FtruncateEngine;

/// ftruncate only writes: a job that reads or trims is refused before it
/// starts.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    if spec.io.rw.has(Ddir::Read) || spec.io.rw.has(Ddir::Trim) {
        return Err(EngineError::Unfit(format!(
            "ioengine=ftruncate only does writes (each write sets the file size to its offset); \
             rw={} reads or trims",
            spec.io.rw.name()
        )));
    }
    Ok(())
}

impl Engine for FtruncateEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Ftruncate
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        io.result = match io.op {
            Op::Write => {
                if crate::sys::ftruncate(io.fd, io.offset) < 0 {
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
