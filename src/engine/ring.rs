//! The io_uring ring driver both io_uring engines run on: `io_uring`
//! (64-byte submission and 16-byte completion entries) and `io_uring_cmd`
//! (128-byte and 32-byte ones, for NVMe passthrough). The engines build
//! the entries; the driver sets the ring up from the job's options
//! (`hipri`, `sqthread_poll`, `sqthread_poll_cpu`, `registerfiles`,
//! `force_async`), registers buffers and files, pushes entries, submits
//! them with one `io_uring_enter` per batch, and drains the completion
//! ring, waiting in the kernel only for the minimum asked.
//!
//! A completion leaves the driver as the kernel gave it: the entry's user
//! data (the unit's index) and its `res` (bytes done or `-errno` for
//! reads and writes; `io_uring_cmd` turns its NVMe status into an outcome
//! itself).

use std::io;

use io_uring::{cqueue, squeue, IoUring, Submitter};

use super::{Completion, Queued};
use crate::job::JobSpec;

/// A submission entry of either size.
pub trait Sqe: squeue::EntryMarker {
    /// The entry carrying `data` back in its completion.
    fn with_user_data(self, data: u64) -> Self;
    /// The entry forced to the kernel's async worker pool.
    fn forced_async(self) -> Self;
}

impl Sqe for squeue::Entry {
    #[inline]
    fn with_user_data(self, data: u64) -> Self {
        self.user_data(data)
    }
    #[inline]
    fn forced_async(self) -> Self {
        self.flags(squeue::Flags::ASYNC)
    }
}

impl Sqe for squeue::Entry128 {
    #[inline]
    fn with_user_data(self, data: u64) -> Self {
        self.user_data(data)
    }
    #[inline]
    fn forced_async(self) -> Self {
        self.flags(squeue::Flags::ASYNC)
    }
}

/// Builds a submission entry with either a registered file index or a
/// plain descriptor (the crate's two fd types are distinct types):
/// `with_fd!(fixed, io, |fd| entry)`.
macro_rules! with_fd {
    ($fixed:expr, $io:ident, |$fd:ident| $body:expr) => {
        if $fixed {
            let $fd = ::io_uring::types::Fixed($io.file);
            $body
        } else {
            let $fd = ::io_uring::types::Fd($io.fd);
            $body
        }
    };
}
pub(crate) use with_fd;

/// The ring a job's iodepth asks for: rounded up to a power of two, as
/// the kernel does (saturating, so an absurd depth is still "too large").
pub fn entries(spec: &JobSpec) -> u32 {
    spec.io
        .iodepth
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(u32::MAX)
}

/// Sets up the ring a job runs on (its depth, `hipri`, `sqthread_poll`),
/// with twice as many completion entries as submission entries.
pub fn build<S: Sqe, C: cqueue::EntryMarker>(spec: &JobSpec) -> io::Result<IoUring<S, C>> {
    let e = &spec.engine;
    let entries = entries(spec);
    let mut b = IoUring::<S, C>::builder();
    if e.hipri {
        b.setup_iopoll();
    }
    if e.sqthread_poll {
        b.setup_sqpoll(1000);
        if let Some(cpu) = e.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    b.setup_cqsize(entries.saturating_mul(2));
    b.build(entries)
}

/// A job's ring and what it has queued and in flight.
///
/// Dropping it waits for the requests still in the kernel, so an engine
/// that keeps memory its requests point into (iovecs, NVMe metadata)
/// declares its `Ring` before that memory: fields drop in order.
pub struct Ring<S: Sqe, C: cqueue::EntryMarker> {
    ring: IoUring<S, C>,
    /// Entries name registered files (`registerfiles`, `sqthread_poll`).
    fixed_files: bool,
    /// Completions come only from inside `io_uring_enter` (`hipri`).
    iopoll: bool,
    /// Every `force_async`th entry goes to the async worker pool.
    force_async: u32,
    counter: u32,
    /// Pushed to the submission ring, not yet submitted.
    queued: u32,
    /// Submitted, not yet reaped.
    inflight: u32,
    /// Completions taken while `commit` waited for room.
    stash: Vec<Completion>,
}

impl<S: Sqe, C: cqueue::EntryMarker> Ring<S, C> {
    /// Sets up the job's ring ([`build`]); the error is `io_uring_setup`'s.
    pub fn new(spec: &JobSpec) -> io::Result<Self> {
        let e = &spec.engine;
        Ok(Ring {
            ring: build(spec)?,
            fixed_files: e.registerfiles || e.sqthread_poll,
            iopoll: e.hipri,
            force_async: e.force_async,
            counter: 0,
            queued: 0,
            inflight: 0,
            stash: Vec::new(),
        })
    }

    /// Whether entries name registered files rather than descriptors.
    #[inline]
    pub fn fixed_files(&self) -> bool {
        self.fixed_files
    }

    /// Nothing queued or in flight.
    #[inline]
    pub fn idle(&self) -> bool {
        self.queued + self.inflight == 0
    }

    /// The ring's register interface (probes).
    pub fn submitter(&self) -> Submitter<'_> {
        self.ring.submitter()
    }

    /// Makes room for `depth` completions held back by `commit` and, with
    /// `fixedbufs`, registers the worker's buffer pool (`pool`: start and
    /// length) as buffer 0.
    pub fn init(&mut self, depth: usize, pool: Option<(*mut u8, usize)>) -> io::Result<()> {
        self.stash = Vec::with_capacity(depth);
        let Some((base, len)) = pool else {
            return Ok(());
        };
        let iov = libc::iovec {
            iov_base: base.cast(),
            iov_len: len,
        };
        // SAFETY: the pool outlives the engine (the worker drops the
        // engine first), so the registered memory stays valid.
        unsafe { self.ring.submitter().register_buffers(&[iov]) }.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "fixedbufs: cannot register {len} bytes of buffers: {e}{}",
                    if crate::sys::errno_of(&e) == Some(libc::EFAULT) {
                        " (the kernel registers only anonymous or shared memory, not a shared mapping of a file: use mem=malloc, shm, mmap or mmap:FILE)"
                    } else {
                        ""
                    }
                ),
            )
        })
    }

    /// Registers the job's open files (`registerfiles`, `sqthread_poll`).
    pub fn register_files(&mut self, fds: &[std::os::fd::RawFd]) -> io::Result<()> {
        if self.fixed_files {
            self.ring
                .submitter()
                .register_files(fds)
                .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
        }
        Ok(())
    }

    /// Pushes the entry of unit `idx`; `Busy` when the submission ring
    /// is full.
    ///
    /// # Safety
    ///
    /// Whatever the entry points to (buffer, iovec, command, descriptor)
    /// must stay valid until its completion is reaped (or the ring is
    /// dropped).
    #[inline]
    pub unsafe fn push(&mut self, entry: S, idx: u32) -> Queued {
        let mut entry = entry.with_user_data(idx as u64);
        if self.force_async > 0 {
            self.counter += 1;
            if self.counter >= self.force_async {
                self.counter = 0;
                entry = entry.forced_async();
            }
        }
        // SAFETY: the caller keeps what the entry points to valid until
        // its completion is reaped.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Queued::Busy;
        }
        self.queued += 1;
        Queued::Queued
    }

    /// Submits everything queued; returns how many that was.
    #[inline]
    pub fn commit(&mut self) -> io::Result<u32> {
        let total = self.queued;
        while self.queued > 0 {
            match self.ring.submit() {
                // With sqthread_poll the kernel's thread may have taken
                // every request before this call looked: none is left.
                Ok(0) if self.ring.submission().is_empty() => {
                    self.inflight += self.queued;
                    self.queued = 0;
                }
                Ok(0) => return Err(io::Error::other("io_uring accepted none of the requests")),
                Ok(n) => {
                    let n = (n as u32).min(self.queued);
                    self.queued -= n;
                    self.inflight += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        crate::sys::errno_of(&e),
                        Some(libc::EBUSY) | Some(libc::EAGAIN)
                    ) && self.inflight > 0 =>
                {
                    // The completion ring is full: keep its entries for
                    // the next reap, then submit again.
                    let mut tmp = std::mem::take(&mut self.stash);
                    let room = tmp.capacity() as u32;
                    self.drain_cq(room, &mut tmp);
                    self.stash = tmp;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(total)
    }

    /// Moves up to `max - out.len()` completions from the ring to `out`.
    #[inline]
    fn drain_cq(&mut self, max: u32, out: &mut Vec<Completion>) {
        let mut cq = self.ring.completion();
        while out.len() < max as usize {
            match cq.next() {
                Some(c) => {
                    let idx = c.user_data() as u32;
                    let c: cqueue::Entry = c.into();
                    out.push(Completion {
                        idx,
                        result: c.result() as i64,
                    });
                    self.inflight -= 1;
                }
                None => break,
            }
        }
    }

    /// Replaces `out` with between `min` and `max` completions (fewer than
    /// `min` only when fewer are queued or in flight), entering the kernel
    /// only to wait for the minimum (or once, on a polled ring, to find
    /// any).
    #[inline]
    pub fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let max = max.max(1);
        while out.len() < max as usize {
            match self.stash.pop() {
                Some(c) => out.push(c),
                None => break,
            }
        }
        let min = min.min(out.len() as u32 + self.inflight);
        let mut polled = false;
        loop {
            self.drain_cq(max, out);
            let have = out.len() as u32;
            if have >= max || self.inflight == 0 {
                return Ok(have);
            }
            let want = if have >= min {
                // A polled ring completes only inside io_uring_enter, so a
                // zero-minimum reap on one enters the kernel once.
                if have > 0 || !self.iopoll || polled {
                    return Ok(have);
                }
                polled = true;
                0
            } else {
                (min - have) as usize
            };
            match self.ring.submit_and_wait(want) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Pushed, not yet submitted.
    #[inline]
    pub fn pending(&self) -> u32 {
        self.queued
    }
}

impl<S: Sqe, C: cqueue::EntryMarker> Drop for Ring<S, C> {
    fn drop(&mut self) {
        // Wait for requests still in the kernel: their buffers belong to
        // the worker's pool (freed after the engine) and to the engine.
        let mut spins = 0;
        while self.inflight > 0 && spins < 10_000 {
            if self.ring.submit_and_wait(1).is_err() {
                spins += 1;
            }
            let mut cq = self.ring.completion();
            for _ in cq.by_ref() {
                self.inflight -= 1;
            }
        }
    }
}
