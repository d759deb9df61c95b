//! Short transfers, as fio treats them: a read or write that moved fewer
//! bytes than asked is issued again for the rest (at the following offset,
//! into the rest of the buffer) and counted in `short_ios`. A read whose
//! rest starts at or past the end of a regular file ends there: one short
//! I/O of the bytes it moved (fio counts it as short too, but adds none of
//! its bytes to `io_bytes`); writes go on, as they extend files. When the
//! rest fails, what moved counts as one I/O and the failure as another. A
//! transfer of zero bytes ends the job with EIO: nothing more can be read
//! there (the file is shorter than the job expects, e.g. truncated while
//! it runs) or written. The I/O's latency runs from its first issue to
//! its last completion.
//!
//! Only a short transfer takes this path (a cold one): a full one costs
//! one comparison.

use super::queue::IoQueue;
use super::Worker;
use crate::engine::{Op, Queued};

/// What became of a short transfer.
pub(super) enum Short {
    /// Account the unit now with this result (bytes, or a negative errno).
    Account(i64),
    /// The rest is queued again (an asynchronous engine): the unit stays
    /// busy until it completes.
    Requeued,
}

/// Whether a completion with `result` for a unit of `len` bytes is short.
#[inline]
pub(super) fn is_short(op: Op, len: u64, result: i64) -> bool {
    result >= 0 && (result as u64) < len && matches!(op, Op::Read | Op::Write)
}

impl Worker<'_> {
    /// Handles a short completion of unit `idx` (see the module docs).
    #[cold]
    pub(super) fn short_transfer(&mut self, q: &mut IoQueue, idx: u32, mut result: i64) -> Short {
        loop {
            let got = result as u64;
            let u = q.unit_mut(idx);
            if got == 0 {
                self.err.note_eof(u.len());
                restore(u);
                return Short::Account(-(libc::EIO as i64));
            }
            u.advance(got);
            if u.op == Op::Read && at_end_of_file(u.fd, u.offset) {
                // Accounted as one short I/O of what it moved.
                let moved = restore(u);
                return Short::Account(moved as i64);
            }
            let di = if u.op == Op::Read { 0 } else { 1 };
            if self.phase.measuring {
                self.stats.dir[di].short_ios += 1;
            }
            match q.requeue(idx) {
                Queued::Completed => {
                    let u = q.unit(idx);
                    result = u.result;
                    if !is_short(u.op, u.len(), result) {
                        return Short::Account(self.reassemble(q, idx, result));
                    }
                }
                Queued::Queued => return Short::Requeued,
                Queued::Busy => {
                    restore(q.unit_mut(idx));
                    return Short::Account(-(libc::EAGAIN as i64));
                }
            }
        }
    }

    /// The result to account for a unit an asynchronous engine completed:
    /// the whole transfer when this completed the rest of a short one.
    #[inline]
    pub(super) fn reassemble(&mut self, q: &mut IoQueue, idx: u32, result: i64) -> i64 {
        let u = q.unit_mut(idx);
        if u.moved() == 0 {
            return result;
        }
        let moved = restore(u);
        if result >= 0 {
            return (moved + result as u64) as i64;
        }
        // The rest failed: what moved counts as an I/O of its own (as fio
        // counts it), the failure as another.
        let di = if u.op == Op::Read { 0 } else { 1 };
        self.count_done(di, moved);
        if self.phase.measuring {
            self.stats.dir[di].ios += 1;
            self.stats.dir[di].bytes += moved;
        }
        result
    }
}

/// Puts the unit back at its first offset and length; returns the bytes
/// its earlier parts moved.
fn restore(u: &mut crate::engine::IoUnit) -> u64 {
    u.rewind()
}

/// Whether `offset` is at or past the end of the regular file open on
/// `fd` (never for devices and for descriptors that cannot be examined).
fn at_end_of_file(fd: i32, offset: u64) -> bool {
    if fd < 0 {
        return false;
    }
    crate::sys::fstat(fd).is_ok_and(|st| st.is_file() && offset >= st.size)
}
