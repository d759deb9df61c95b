//! The `null` engine: accepts every I/O and completes it without doing
//! anything. With `iodepth` > 1 it queues and completes in batches, so it
//! exercises the same queue/commit/reap path as the async engines; it
//! measures iomark's own overhead.

use std::io;

use crate::sys::RawFd;

use super::{Caps, Completion, Engine, EngineKind, IoUnit, OpenFile, Queued};
use crate::job::JobSpec;

pub struct NullEngine {
    depth: u32,
    queued: Vec<Completion>,
    committed: usize,
}

impl NullEngine {
    pub fn new(spec: &JobSpec) -> Self {
        NullEngine {
            depth: spec.io.iodepth,
            queued: Vec::with_capacity(spec.io.iodepth as usize),
            committed: 0,
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
        if self.queued.len() >= self.depth as usize {
            return Queued::Busy;
        }
        self.queued.push(Completion {
            idx: io.idx,
            result: done,
        });
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<u32> {
        let n = self.queued.len() - self.committed;
        self.committed = self.queued.len();
        Ok(n as u32)
    }

    fn reap(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let n = self.committed.min(max.max(1) as usize);
        out.extend(self.queued.drain(..n));
        self.committed -= n;
        Ok(n as u32)
    }

    fn pending(&self) -> u32 {
        (self.queued.len() - self.committed) as u32
    }
}
