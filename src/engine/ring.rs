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

mod raw;

pub use raw::RwSqe;

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

/// How the kernel runs a ring's completion work, from the fastest a
/// kernel may offer to none: the first set `io_uring_setup` takes is kept
/// (each retry only after EINVAL, the answer of a kernel that lacks one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// SINGLE_ISSUER + DEFER_TASKRUN (Linux 6.1): completion work runs
    /// only when the submitting thread enters to get events, nothing
    /// interrupts it. Created disabled (R_DISABLED), so the thread that
    /// first submits becomes the ring's one issuer, whichever made it.
    Deferred,
    /// COOP_TASKRUN (Linux 5.19): no interrupt to run completion work.
    Coop,
    /// What every io_uring kernel does.
    Plain,
}

/// Sets up the ring a job runs on (its depth, `hipri`, `sqthread_poll`),
/// with twice as many completion entries as submission entries, in the
/// fastest [`Mode`] the kernel takes (a polling kernel thread takes none
/// of them).
fn build_mode<S: Sqe, C: cqueue::EntryMarker>(spec: &JobSpec) -> io::Result<(IoUring<S, C>, Mode)> {
    let e = &spec.engine;
    let entries = entries(spec);
    let modes: &[Mode] = if e.sqthread_poll {
        &[Mode::Plain]
    } else {
        &[Mode::Deferred, Mode::Coop, Mode::Plain]
    };
    let mut last = None;
    for &mode in modes {
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
        match mode {
            Mode::Deferred => {
                b.setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_coop_taskrun()
                    .setup_taskrun_flag()
                    .setup_r_disabled();
            }
            Mode::Coop => {
                b.setup_coop_taskrun().setup_taskrun_flag();
            }
            Mode::Plain => {}
        }
        b.setup_cqsize(entries.saturating_mul(2));
        match b.build(entries) {
            Ok(r) => return Ok((r, mode)),
            Err(err) if mode != Mode::Plain && err.raw_os_error() == Some(libc::EINVAL) => {
                last = Some(err)
            }
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_REGISTERED_RING: u32 = 16;
const IORING_REGISTER_RING_FDS: u32 = 20;
const IORING_UNREGISTER_RING_FDS: u32 = 21;

/// `struct io_uring_rsrc_update`, for registering the ring's own fd.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// A job's ring and what it has queued and in flight.
///
/// Dropping it waits for the requests still in the kernel, so an engine
/// that keeps memory its requests point into (iovecs, NVMe metadata)
/// declares its `Ring` before that memory: fields drop in order.
pub struct Ring<S: Sqe, C: cqueue::EntryMarker> {
    ring: IoUring<S, C>,
    /// The same rings' memory, for pushing and draining in place.
    raw: raw::Raw<S, C>,
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
    /// How the kernel runs completion work for this ring.
    mode: Mode,
    /// A kernel thread polls the submission ring (`sqthread_poll`).
    sqpoll: bool,
    /// The ring has been enabled and its fd registered, by the thread
    /// that submits (see [`Ring::go_live`]).
    live: bool,
    /// What `io_uring_enter` is given: the ring's index among the
    /// submitting thread's registered rings (with `ENTER_REGISTERED_RING`
    /// in `enter_flags`), or its plain descriptor.
    enter_fd: i32,
    enter_flags: u32,
    /// The last `reap` entered the kernel for completions.
    waited: bool,
    /// The thread whose registered rings hold this one.
    registered_by: Option<std::thread::ThreadId>,
}

impl<C: cqueue::EntryMarker> Ring<squeue::Entry, C> {
    /// [`Ring::push`] of a read or write (`sqe` without its user data,
    /// which is `idx`), written into its slot in place.
    ///
    /// # Safety
    ///
    /// As [`Ring::push`].
    #[inline]
    pub unsafe fn push_rw(&mut self, mut sqe: RwSqe, idx: u32) -> Queued {
        sqe.user_data = idx as u64;
        if self.force_async_due() {
            sqe.flags |= squeue::Flags::ASYNC.bits();
        }
        // SAFETY: the caller keeps what the entry points to valid until
        // its completion is reaped.
        let pushed = unsafe { self.raw.push_rw(sqe) };
        self.pushed(pushed)
    }
}

impl<S: Sqe, C: cqueue::EntryMarker> Ring<S, C> {
    /// Sets up the job's ring ([`build`]); the error is `io_uring_setup`'s.
    pub fn new(spec: &JobSpec) -> io::Result<Self> {
        let e = &spec.engine;
        let (ring, mode) = build_mode(spec)?;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&ring);
        let raw = raw::Raw::new(&ring)?;
        Ok(Ring {
            ring,
            raw,
            fixed_files: e.registerfiles || e.sqthread_poll,
            iopoll: e.hipri,
            force_async: e.force_async,
            counter: 0,
            queued: 0,
            inflight: 0,
            stash: Vec::new(),
            mode,
            sqpoll: e.sqthread_poll,
            live: false,
            enter_fd: fd,
            enter_flags: 0,
            registered_by: None,
            waited: false,
        })
    }

    /// Before the first submission, on the thread that submits: enables
    /// a ring made disabled (it becomes that thread's ring alone) and
    /// registers its fd with that thread, so each `io_uring_enter` names
    /// it by index rather than by a descriptor the kernel looks up. A
    /// kernel without ring registration (before Linux 5.18) keeps the
    /// descriptor.
    #[cold]
    fn go_live(&mut self) -> io::Result<()> {
        self.live = true;
        if self.mode == Mode::Deferred {
            self.ring.submitter().register_enable_rings()?;
        }
        let fd = std::os::fd::AsRawFd::as_raw_fd(&self.ring);
        let mut up = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: fd as u64,
        };
        // SAFETY: `up` is a valid io_uring_rsrc_update for one entry.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                fd,
                IORING_REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1u32,
            )
        };
        if r == 1 {
            self.enter_fd = up.offset as i32;
            self.enter_flags = IORING_ENTER_REGISTERED_RING;
            self.registered_by = Some(std::thread::current().id());
        }
        Ok(())
    }

    /// Whether the kernel holds completion work only an enter that gets
    /// events runs (or completions that overflowed the ring).
    #[inline]
    fn kernel_has_work(&self) -> bool {
        self.raw.kernel_has_work()
    }

    /// `io_uring_enter`: submits `to_submit` and waits for `want`
    /// completions, getting events when waiting, polling, or when the
    /// kernel holds deferred work. A polling kernel thread goes through
    /// the crate, which knows when to wake it.
    #[inline]
    fn enter(&self, to_submit: u32, want: u32) -> io::Result<u32> {
        if self.sqpoll {
            return self.ring.submit_and_wait(want as usize).map(|n| n as u32);
        }
        let mut flags = self.enter_flags;
        if want > 0 || self.iopoll || self.kernel_has_work() {
            flags |= IORING_ENTER_GETEVENTS;
        }
        // SAFETY: the ring's descriptor (or its index among this thread's
        // registered rings, with ENTER_REGISTERED_RING) outlives the
        // call, and no argument structure is passed.
        unsafe {
            rustix::io_uring::io_uring_enter(
                std::os::fd::BorrowedFd::borrow_raw(self.enter_fd),
                to_submit,
                want,
                rustix::io_uring::IoringEnterFlags::from_bits_retain(flags),
            )
        }
        .map_err(io::Error::from)
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
        if self.force_async_due() {
            entry = entry.forced_async();
        }
        // SAFETY: the caller keeps what the entry points to valid until
        // its completion is reaped.
        let pushed = unsafe { self.raw.push(entry) };
        self.pushed(pushed)
    }

    /// `force_async`: whether the entry being pushed is the Nth, which
    /// goes to the kernel's async worker pool.
    #[inline]
    fn force_async_due(&mut self) -> bool {
        if self.force_async == 0 {
            return false;
        }
        self.counter += 1;
        if self.counter < self.force_async {
            return false;
        }
        self.counter = 0;
        true
    }

    /// After a push: counted as queued, or `Busy` when the submission
    /// ring was full.
    #[inline]
    fn pushed(&mut self, pushed: bool) -> Queued {
        if !pushed {
            return Queued::Busy;
        }
        self.queued += 1;
        Queued::Queued
    }

    /// Submits everything queued; returns how many that was.
    #[inline]
    pub fn commit(&mut self) -> io::Result<u32> {
        let total = self.queued;
        if total == 0 {
            return Ok(0);
        }
        // The usual case: one enter takes everything.
        if self.live && !self.sqpoll {
            if let Ok(n) = self.enter(total, 0) {
                let n = n.min(total);
                self.queued -= n;
                self.inflight += n;
                if n == total {
                    return Ok(total);
                }
            }
        }
        self.commit_rest(total)
    }

    /// [`Ring::commit`] for the first submission, a polling kernel
    /// thread, and what one enter left: submits what is still queued,
    /// making room in a full completion ring; returns `total`.
    #[cold]
    #[inline(never)]
    fn commit_rest(&mut self, total: u32) -> io::Result<u32> {
        if !self.live {
            self.go_live()?;
        }
        while self.queued > 0 {
            match self.enter(self.queued, 0) {
                // With sqthread_poll the kernel's thread may have taken
                // every request before this call looked: none is left.
                Ok(0) if self.raw.sq_len() == 0 => {
                    self.inflight += self.queued;
                    self.queued = 0;
                }
                Ok(0) => return Err(io::Error::other("io_uring accepted none of the requests")),
                Ok(n) => {
                    let n = n.min(self.queued);
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
        self.inflight -= self.raw.drain(max, out);
    }

    /// Replaces `out` with between `min` and `max` completions (fewer than
    /// `min` only when fewer are queued or in flight), entering the kernel
    /// only to wait for the minimum (or once, on a polled ring, to find
    /// any).
    #[inline]
    pub fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        self.waited = false;
        let max = max.max(1);
        if out.capacity() < max as usize {
            // Completions are written into spare capacity only.
            out.reserve(max as usize);
        }
        if self.stash.is_empty() {
            // The usual case: what is done is in the ring already.
            self.drain_cq(max, out);
            let have = out.len() as u32;
            if have >= max || self.inflight == 0 || (have > 0 && have >= min) {
                return Ok(have);
            }
        }
        self.reap_rest(min, max, out)
    }

    /// [`Ring::reap`] once what the ring held was not enough: takes the
    /// completions `commit` held back, then waits in the kernel (or, on
    /// a polled or deferred ring, enters once) for the rest.
    #[cold]
    #[inline(never)]
    fn reap_rest(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        if !self.stash.is_empty() {
            while out.len() < max as usize {
                match self.stash.pop() {
                    Some(c) => out.push(c),
                    None => break,
                }
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
                // A polled ring completes only inside io_uring_enter, and
                // a deferred one only posts what an enter runs: a
                // zero-minimum reap that found nothing enters once.
                if have > 0 || polled || !(self.iopoll || self.kernel_has_work()) {
                    return Ok(have);
                }
                polled = true;
                0
            } else {
                (min - have) as usize
            };
            self.waited = true;
            match self.enter(0, want as u32) {
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

    /// Whether the last `reap` entered the kernel for completions.
    #[inline]
    pub fn waited(&self) -> bool {
        self.waited
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
        // A thread's registered rings are its own: only the thread that
        // registered this one can take it back (a thread's end does too).
        if self.registered_by == Some(std::thread::current().id()) {
            let mut up = RsrcUpdate {
                offset: self.enter_fd as u32,
                resv: 0,
                data: 0,
            };
            let fd = std::os::fd::AsRawFd::as_raw_fd(&self.ring);
            // SAFETY: `up` names the slot `go_live` registered, on this
            // thread.
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    fd,
                    IORING_UNREGISTER_RING_FDS,
                    &mut up as *mut RsrcUpdate,
                    1u32,
                )
            };
        }
    }
}
