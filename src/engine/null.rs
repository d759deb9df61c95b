//! The `null` engine: accepts every I/O and completes it without doing
//! anything. With `iodepth` > 1 it queues and completes in batches, so it
//! exercises the same queue/commit/reap path as the async engines; it
//! measures iomark's own overhead.

use std::io;

use crate::sys::RawFd;

use super::{Caps, Completion, Engine, EngineKind, IoUnit, OpenFile, Queued};
use crate::job::JobSpec;

/// The queued I/Os are a ring of `depth` slots: the oldest at `head`,
/// `len` in all, the first `committed` of them submitted. A reap takes
/// from the head without moving the rest.
pub struct NullEngine {
    depth: u32,
    ring: Vec<Completion>,
    head: usize,
    len: usize,
    committed: usize,
}

impl NullEngine {
    pub fn new(spec: &JobSpec) -> Self {
        let depth = spec.io.iodepth.max(1);
        NullEngine {
            depth: spec.io.iodepth,
            ring: vec![Completion { idx: 0, result: 0 }; depth as usize],
            head: 0,
            len: 0,
            committed: 0,
        }
    }

    /// The ring slot `k` places after the head.
    #[inline]
    fn slot(&self, k: usize) -> usize {
        let i = self.head + k;
        if i >= self.ring.len() {
            i - self.ring.len()
        } else {
            i
        }
    }
}

impl Engine for NullEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: self.depth <= 1,
            ..EngineKind::Null.info().caps
        }
    }

    fn open(&mut self, _f: &OpenFile) -> io::Result<(RawFd, usize)> {
        Ok((-1, 0))
    }

    fn close(&mut self, _fd: RawFd, _data: usize, _size: u64) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let done = if io.op.is_data() { io.len as i64 } else { 0 };
        if self.depth <= 1 {
            io.result = done;
            return Queued::Completed;
        }
        if self.len >= self.ring.len() {
            return Queued::Busy;
        }
        let at = self.slot(self.len);
        self.ring[at] = Completion {
            idx: io.idx,
            result: done,
        };
        self.len += 1;
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<u32> {
        let n = self.len - self.committed;
        self.committed = self.len;
        Ok(n as u32)
    }

    fn reap(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let n = self.committed.min(max.max(1) as usize);
        // At most two runs: to the ring's end, then from its start.
        let first = n.min(self.ring.len() - self.head);
        out.extend_from_slice(&self.ring[self.head..self.head + first]);
        out.extend_from_slice(&self.ring[..n - first]);
        self.head = self.slot(n);
        self.len -= n;
        self.committed -= n;
        Ok(n as u32)
    }

    fn pending(&self) -> u32 {
        (self.len - self.committed) as u32
    }

    fn reap_waited(&self) -> bool {
        false
    }
}
