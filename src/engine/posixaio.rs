//! `posixaio`: POSIX asynchronous I/O (`aio_read`, `aio_write`,
//! `aio_fsync`, polled with `aio_error`/`aio_return`, waited for with
//! `aio_suspend`), as the C library provides it.
//!
//! Each read or write starts when it is queued (the library has no batch
//! submit). Syncs are queued as `aio_fsync`; trims and `sync_file_range`
//! run synchronously once nothing is in flight. The control blocks and
//! the wait list are allocated once in `init`.

use std::io;

use super::file::sync_op;
use super::{Completion, Engine, EngineKind, IoUnit, Op, Queued};
use crate::job::JobSpec;

pub struct PosixAioEngine {
    /// One control block per I/O unit, by unit index.
    cbs: Vec<libc::aiocb>,
    /// Units started and not yet reaped.
    inflight: Vec<u32>,
    /// Scratch list for `aio_suspend`.
    wait: Vec<*const libc::aiocb>,
}

// SAFETY: the control blocks and pointers refer to memory this engine
// owns; the engine is used by one thread at a time.
unsafe impl Send for PosixAioEngine {}

impl PosixAioEngine {
    pub fn new(_spec: &JobSpec) -> Self {
        PosixAioEngine {
            cbs: Vec::new(),
            inflight: Vec::new(),
            wait: Vec::new(),
        }
    }

    fn errno() -> i64 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    }

    /// Moves finished units from `inflight` to `out`, at most `max`.
    fn collect(&mut self, max: u32, out: &mut Vec<Completion>) {
        let mut i = 0;
        while i < self.inflight.len() && out.len() < max as usize {
            let idx = self.inflight[i];
            let cb = &mut self.cbs[idx as usize];
            // SAFETY: `cb` is a control block this engine started.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            // SAFETY: as above; aio_return is called once per finished block.
            let r = unsafe { libc::aio_return(cb) };
            let result = if err != 0 {
                -(err as i64)
            } else if r < 0 {
                Self::errno()
            } else {
                r as i64
            };
            out.push(Completion { idx, result });
            self.inflight.swap_remove(i);
        }
    }
}

impl Engine for PosixAioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::PosixAio
    }

    fn init(&mut self, depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1) as usize;
        // SAFETY: aiocb is plain data; all-zero is its documented initial state.
        self.cbs = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        self.inflight = Vec::with_capacity(depth);
        self.wait = Vec::with_capacity(depth);
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        if matches!(io.op, Op::Trim | Op::SyncFileRange) {
            if !self.inflight.is_empty() {
                return Queued::Busy;
            }
            io.result = sync_op(io);
            return Queued::Completed;
        }
        let cb = &mut self.cbs[io.idx as usize];
        // SAFETY: reset to the zero state before reuse.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = io.fd;
        cb.aio_buf = io.buf as *mut libc::c_void;
        cb.aio_nbytes = io.len as usize;
        cb.aio_offset = io.offset as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the control block and buffer stay valid until reaped.
        let r = unsafe {
            match io.op {
                Op::Read => libc::aio_read(cb),
                Op::Write => libc::aio_write(cb),
                Op::Fsync => libc::aio_fsync(crate::sys::O_SYNC, cb),
                _ => libc::aio_fsync(crate::sys::O_DSYNC, cb),
            }
        };
        if r < 0 {
            let e = Self::errno();
            if e == -(libc::EAGAIN as i64) && !self.inflight.is_empty() {
                return Queued::Busy;
            }
            io.result = e;
            return Queued::Completed;
        }
        self.inflight.push(io.idx);
        Queued::Queued
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let max = max.max(1);
        let min = min.min(max);
        loop {
            self.collect(max, out);
            if out.len() as u32 >= min || self.inflight.is_empty() {
                return Ok(out.len() as u32);
            }
            self.wait.clear();
            for &i in &self.inflight {
                self.wait.push(&self.cbs[i as usize]);
            }
            // SAFETY: the list holds pointers to started control blocks; a
            // null timeout waits until one of them finishes.
            let r = unsafe {
                libc::aio_suspend(
                    self.wait.as_ptr(),
                    self.wait.len() as libc::c_int,
                    std::ptr::null(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted
                    && crate::sys::errno_of(&e) != Some(libc::EAGAIN)
                {
                    return Err(e);
                }
            }
        }
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        // Wait for anything still running so buffers are not used after
        // the worker frees them.
        let mut out = Vec::with_capacity(self.inflight.len());
        while !self.inflight.is_empty() {
            let n = self.inflight.len() as u32;
            if self.reap(n, n, &mut out).is_err() {
                break;
            }
        }
    }
}
