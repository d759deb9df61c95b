//! `io_uring`: Linux io_uring through the `io-uring` crate. Reads and
//! writes are pushed to the submission ring by `queue` and submitted with
//! one `io_uring_enter` per batch by `commit`; `reap` drains the
//! completion ring, waiting in the kernel only for the minimum asked.
//!
//! Options: `fixedbufs` (the worker's buffer pool is registered once and
//! I/O uses READ_FIXED/WRITE_FIXED), `registerfiles` (descriptors are
//! registered; implied by `sqthread_poll`), `sqthread_poll` and
//! `sqthread_poll_cpu` (a kernel thread polls the submission ring),
//! `hipri` (polled completions, IOPOLL), `nonvectored` (READ/WRITE rather
//! than READV/WRITEV; -1 picks what the kernel supports), `force_async`
//! (every Nth request is forced to the async worker pool), `uncached` and
//! `nowait` (per-I/O RWF flags). fsync and fdatasync are io_uring
//! operations; trims run synchronously once nothing is in flight.
//!
//! io_uring can be switched off (seccomp, `kernel.io_uring_disabled`), so
//! `preflight` probes it before a run and names the fallback engines.

use std::io;

use io_uring::{opcode, squeue, types, IoUring, Probe};

use super::file::sync_op;
use super::{Caps, Completion, Engine, IoUnit, Op, Queued};
use crate::job::JobSpec;

const RWF_NOWAIT: i32 = 0x8;
const RWF_UNCACHED: i32 = 0x80;

/// Why io_uring cannot be used, as one line naming the alternatives.
fn unavailable(e: &io::Error) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (blocked by a seccomp profile or the kernel.io_uring_disabled sysctl)"
        }
        Some(libc::ENOSYS) => " (this kernel does not provide it)",
        _ => "",
    };
    format!(
        "ioengine=io_uring is not available here: io_uring_setup failed: {e}{hint}; \
         use --ioengine=libaio or --ioengine=psync instead"
    )
}

/// Checks that io_uring works here and that the job's io_uring options
/// fit together. Called before anything is laid out.
pub fn preflight(spec: &JobSpec) -> Result<(), String> {
    IoUring::new(2).map_err(|e| unavailable(&e))?;
    let e = &spec.engine;
    if e.sqthread_poll_cpu.is_some() && !e.sqthread_poll {
        return Err("sqthread_poll_cpu only applies with sqthread_poll=1".into());
    }
    if e.hipri && !spec.sync.direct {
        return Err("hipri (polled completions) with ioengine=io_uring needs direct=1".into());
    }
    Ok(())
}

pub struct IoUringEngine {
    ring: IoUring,
    fixed_bufs: bool,
    fixed_files: bool,
    iopoll: bool,
    vectored: bool,
    /// One iovec per unit for READV/WRITEV.
    iovecs: Vec<libc::iovec>,
    rw_flags: i32,
    force_async: u32,
    counter: u32,
    /// Pushed to the submission ring, not yet submitted.
    queued: u32,
    /// Submitted, not yet reaped.
    inflight: u32,
    /// Completions taken while `commit` waited for room.
    stash: Vec<Completion>,
    nonvectored: i32,
}

// SAFETY: the iovecs point into the worker's buffer pool, which outlives
// the engine; the engine is used by one thread at a time.
unsafe impl Send for IoUringEngine {}

/// Builds a submission entry with either a registered file index or a
/// plain descriptor (the crate's two fd types are distinct types).
macro_rules! with_fd {
    ($self:ident, $io:ident, |$fd:ident| $body:expr) => {
        if $self.fixed_files {
            let $fd = types::Fixed($io.file);
            $body
        } else {
            let $fd = types::Fd($io.fd);
            $body
        }
    };
}

impl IoUringEngine {
    pub fn new(spec: &JobSpec) -> Result<Self, String> {
        let e = &spec.engine;
        let entries = spec.io.iodepth.max(1).next_power_of_two();
        let mut b = IoUring::builder();
        if e.hipri {
            b.setup_iopoll();
        }
        if e.sqthread_poll {
            b.setup_sqpoll(1000);
            if let Some(cpu) = e.sqthread_poll_cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        b.setup_cqsize(entries * 2);
        let ring = b.build(entries).map_err(|err| {
            if e.sqthread_poll || e.hipri {
                format!("io_uring setup with sqthread_poll/hipri failed: {err}")
            } else {
                unavailable(&err)
            }
        })?;
        let mut rw_flags = 0;
        if e.nowait {
            rw_flags |= RWF_NOWAIT;
        }
        if e.uncached != 0 {
            rw_flags |= RWF_UNCACHED;
        }
        Ok(IoUringEngine {
            ring,
            fixed_bufs: e.fixedbufs,
            fixed_files: e.registerfiles || e.sqthread_poll,
            iopoll: e.hipri,
            vectored: false,
            iovecs: Vec::new(),
            rw_flags,
            force_async: e.force_async,
            counter: 0,
            queued: 0,
            inflight: 0,
            stash: Vec::new(),
            nonvectored: e.nonvectored,
        })
    }

    #[inline]
    fn entry(&mut self, io: &IoUnit) -> squeue::Entry {
        let len = io.len as u32;
        let (off, flags) = (io.offset, self.rw_flags);
        let write = io.op == Op::Write;
        if self.fixed_bufs {
            return with_fd!(self, io, |fd| if write {
                opcode::WriteFixed::new(fd, io.buf, len, 0)
                    .offset(off)
                    .rw_flags(flags)
                    .build()
            } else {
                opcode::ReadFixed::new(fd, io.buf, len, 0)
                    .offset(off)
                    .rw_flags(flags)
                    .build()
            });
        }
        if self.vectored {
            let iov = &mut self.iovecs[io.idx as usize];
            iov.iov_base = io.buf as *mut libc::c_void;
            iov.iov_len = io.len as usize;
            let iov = iov as *const libc::iovec;
            return with_fd!(self, io, |fd| if write {
                opcode::Writev::new(fd, iov, 1)
                    .offset(off)
                    .rw_flags(flags)
                    .build()
            } else {
                opcode::Readv::new(fd, iov, 1)
                    .offset(off)
                    .rw_flags(flags)
                    .build()
            });
        }
        with_fd!(self, io, |fd| if write {
            opcode::Write::new(fd, io.buf, len)
                .offset(off)
                .rw_flags(flags)
                .build()
        } else {
            opcode::Read::new(fd, io.buf, len)
                .offset(off)
                .rw_flags(flags)
                .build()
        })
    }

    /// Moves up to `max - out.len()` completions from the ring to `out`.
    fn drain_cq(&mut self, max: u32, out: &mut Vec<Completion>) {
        let mut cq = self.ring.completion();
        while out.len() < max as usize {
            match cq.next() {
                Some(c) => {
                    out.push(Completion {
                        idx: c.user_data() as u32,
                        result: c.result() as i64,
                    });
                    self.inflight -= 1;
                }
                None => break,
            }
        }
    }
}

impl Engine for IoUringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn caps(&self) -> Caps {
        Caps {
            registers_buffers: self.fixed_bufs,
            ..Caps::default()
        }
    }

    fn init(&mut self, depth: u32, pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1) as usize;
        self.stash = Vec::with_capacity(depth);
        self.vectored = match self.nonvectored {
            0 => true,
            n if n > 0 => false,
            _ => {
                // Auto: non-vectored when the kernel has READ/WRITE.
                let mut probe = Probe::new();
                match self.ring.submitter().register_probe(&mut probe) {
                    Ok(()) => {
                        !(probe.is_supported(opcode::Read::CODE)
                            && probe.is_supported(opcode::Write::CODE))
                    }
                    Err(_) => true,
                }
            }
        };
        if self.vectored {
            self.iovecs = vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                depth
            ];
        }
        if self.fixed_bufs {
            let iov = libc::iovec {
                iov_base: pool.0 as *mut libc::c_void,
                iov_len: pool.1,
            };
            // SAFETY: the pool outlives the engine (the worker drops the
            // engine first), so the registered memory stays valid.
            unsafe { self.ring.submitter().register_buffers(&[iov]) }.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "fixedbufs: cannot register {} bytes of buffers: {e}{}",
                        pool.1,
                        if e.raw_os_error() == Some(libc::EFAULT) {
                            " (the kernel registers only anonymous or shared memory, not a mapped file: use mem=malloc, shm or mmap without a file)"
                        } else {
                            ""
                        }
                    ),
                )
            })?;
        }
        Ok(())
    }

    fn files_opened(&mut self, fds: &[std::os::fd::RawFd]) -> io::Result<()> {
        if self.fixed_files {
            self.ring
                .submitter()
                .register_files(fds)
                .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let entry = match io.op {
            Op::Read | Op::Write => self.entry(io),
            Op::Fsync | Op::Fdatasync if !self.iopoll => {
                let flags = if io.op == Op::Fdatasync {
                    types::FsyncFlags::DATASYNC
                } else {
                    types::FsyncFlags::empty()
                };
                with_fd!(self, io, |fd| opcode::Fsync::new(fd).flags(flags).build())
            }
            Op::SyncFileRange if !self.iopoll => {
                let (off, len, f) = (io.offset, io.len as u32, io.sfr_flags);
                with_fd!(self, io, |fd| opcode::SyncFileRange::new(fd, len)
                    .offset(off)
                    .flags(f)
                    .build())
            }
            _ => {
                // Trims (and syncs on a polled ring) run synchronously
                // once nothing is queued or in flight.
                if self.queued + self.inflight > 0 {
                    return Queued::Busy;
                }
                io.result = sync_op(io);
                return Queued::Completed;
            }
        };
        let mut entry = entry.user_data(io.idx as u64);
        if self.force_async > 0 {
            self.counter += 1;
            if self.counter >= self.force_async {
                self.counter = 0;
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        // SAFETY: the buffer, iovec and descriptor stay valid until the
        // completion is reaped.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            return Queued::Busy;
        }
        self.queued += 1;
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<u32> {
        let total = self.queued;
        while self.queued > 0 {
            match self.ring.submit() {
                Ok(0) => return Err(io::Error::other("io_uring accepted none of the requests")),
                Ok(n) => {
                    let n = (n as u32).min(self.queued);
                    self.queued -= n;
                    self.inflight += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN))
                        && self.inflight > 0 =>
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

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
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

    fn pending(&self) -> u32 {
        self.queued
    }
}

impl Drop for IoUringEngine {
    fn drop(&mut self) {
        // Wait for requests still in the kernel: their buffers belong to
        // the worker's pool, freed after the engine.
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
