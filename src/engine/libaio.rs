//! `libaio`: Linux native asynchronous I/O through the raw `io_setup`,
//! `io_submit`, `io_getevents` and `io_destroy` system calls (no libaio
//! library; the few kernel structures are defined here).
//!
//! Reads and writes are queued as iocbs and submitted in batches by
//! `commit`. Syncs and trims are done synchronously once nothing is in
//! flight (`queue` answers `Busy` until then), as fio does. With
//! `userspace_reap`, a reap that asks for no minimum reads the kernel's
//! completion ring directly instead of calling `io_getevents`.
//!
//! An I/O given a priority of its own (`cmdprio*`) carries it in its
//! iocb (`IOCB_FLAG_IOPRIO`).
//!
//! Hot path: iocbs, the submission pointer array and the event array are
//! allocated once in `init`; queue/commit/reap only fill them.

use std::io;
use std::sync::atomic::{fence, Ordering};

use super::file::sync_op;
use super::{Completion, Engine, EngineKind, IoUnit, Op, Queued};
use crate::job::JobSpec;

/// `struct io_event` from <linux/aio_abi.h>.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// `struct iocb` from <linux/aio_abi.h> (little-endian field order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
#[cfg(not(target_endian = "little"))]
compile_error!("the libaio iocb layout here is the little-endian one");

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `aio_reqprio` holds the I/O's priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// The header of the completion ring the kernel maps at the context
/// address (`struct aio_ring` in fs/aio.c); events follow it.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const RWF_NOWAIT: i32 = 0x8;

pub struct LibaioEngine {
    ctx: libc::c_ulong,
    /// One iocb per I/O unit, by unit index.
    iocbs: Vec<Iocb>,
    /// Queued iocbs not yet submitted, in queue order.
    pending: Vec<*mut Iocb>,
    /// How many of `pending` were already submitted (partial submits).
    submitted_head: usize,
    events: Vec<IoEvent>,
    /// Completions collected while `commit` waited for room.
    stash: Vec<Completion>,
    /// Submitted and not yet reaped.
    inflight: u32,
    rw_flags: i32,
    userspace_reap: bool,
    depth: u32,
}

// SAFETY: the raw pointers in `pending` point into `iocbs`, which this
// engine owns; the engine is used by one thread at a time.
unsafe impl Send for LibaioEngine {}

fn sys_result(r: libc::c_long) -> io::Result<libc::c_long> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl LibaioEngine {
    pub fn new(spec: &JobSpec) -> Self {
        LibaioEngine {
            ctx: 0,
            iocbs: Vec::new(),
            pending: Vec::new(),
            submitted_head: 0,
            events: Vec::new(),
            stash: Vec::new(),
            inflight: 0,
            rw_flags: if spec.engine.nowait { RWF_NOWAIT } else { 0 },
            userspace_reap: spec.engine.userspace_reap,
            depth: 0,
        }
    }

    fn queued_or_inflight(&self) -> bool {
        self.inflight > 0 || self.pending.len() > self.submitted_head
    }

    /// `io_getevents` for at least `min` and at most `max` events into
    /// `self.events`; retries on EINTR. Returns how many arrived.
    fn getevents(&mut self, min: u32, max: u32) -> io::Result<usize> {
        let max = max.min(self.events.len() as u32);
        loop {
            // SAFETY: `events` has room for `max` events; a null timeout
            // waits until `min` have completed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            match sys_result(r) {
                Ok(n) => return Ok(n as usize),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads up to `max` events from the completion ring in user space.
    fn ring_reap(&mut self, max: u32, out: &mut Vec<Completion>) -> u32 {
        let ring = self.ctx as *mut AioRing;
        // SAFETY: the context address is the kernel's ring mapping, checked
        // for its magic in `init`; head is ours to advance, tail is read
        // with acquire ordering before the events it publishes.
        unsafe {
            let nr = (*ring).nr;
            let mut head = std::ptr::read_volatile(&(*ring).head);
            let tail = std::ptr::read_volatile(&(*ring).tail);
            fence(Ordering::Acquire);
            let events = (ring as *mut u8).add((*ring).header_length as usize) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < max {
                let ev = std::ptr::read_volatile(events.add(head as usize));
                out.push(Completion {
                    idx: ev.data as u32,
                    result: ev.res,
                });
                head = (head + 1) % nr;
                n += 1;
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(&mut (*ring).head, head);
            n
        }
    }
}

impl Engine for LibaioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Libaio
    }

    fn init(&mut self, depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(if crate::sys::errno_of(&e) == Some(libc::EAGAIN) {
                io::Error::new(
                    e.kind(),
                    format!("io_setup: {e} (the system-wide limit fs.aio-max-nr is reached)"),
                )
            } else {
                io::Error::new(e.kind(), format!("io_setup: {e}"))
            });
        }
        self.ctx = ctx;
        self.depth = depth;
        self.iocbs = vec![Iocb::default(); depth as usize];
        self.pending = Vec::with_capacity(depth as usize);
        self.events = vec![IoEvent::default(); depth as usize];
        self.stash = Vec::with_capacity(depth as usize);
        if self.userspace_reap {
            // SAFETY: the context id is the address of the kernel's ring.
            let magic = unsafe { std::ptr::read_volatile(&(*(ctx as *const AioRing)).magic) };
            if magic != AIO_RING_MAGIC {
                return Err(io::Error::other(
                    "userspace_reap: the kernel's AIO completion ring has an unknown layout",
                ));
            }
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let opcode = match io.op {
            Op::Read => IOCB_CMD_PREAD,
            Op::Write => IOCB_CMD_PWRITE,
            _ => {
                // Syncs and trims wait for everything queued, then run
                // synchronously.
                if self.queued_or_inflight() {
                    return Queued::Busy;
                }
                io.result = sync_op(io);
                return Queued::Completed;
            }
        };
        if self.pending.len() + self.inflight as usize >= self.depth as usize {
            return Queued::Busy;
        }
        // An I/O given its own priority carries it; the others run at
        // the thread's (the job's `prio`/`prioclass`), as in fio.
        let (reqprio, flags) = if io.prio.per_io {
            (io.prio.value as i16, IOCB_FLAG_IOPRIO)
        } else {
            (0, 0)
        };
        let cb = &mut self.iocbs[io.idx as usize];
        *cb = Iocb {
            aio_data: io.idx as u64,
            aio_rw_flags: self.rw_flags,
            aio_lio_opcode: opcode,
            aio_reqprio: reqprio,
            aio_fildes: io.fd as u32,
            aio_buf: io.buf as u64,
            aio_nbytes: io.len,
            aio_offset: io.offset as i64,
            aio_flags: flags,
            ..Iocb::default()
        };
        self.pending.push(cb as *mut Iocb);
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<u32> {
        let total = self.pending.len() - self.submitted_head;
        while self.submitted_head < self.pending.len() {
            let n = self.pending.len() - self.submitted_head;
            // SAFETY: the pointers refer to iocbs owned by this engine that
            // stay valid until their completion is reaped.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    n as libc::c_long,
                    self.pending.as_mut_ptr().add(self.submitted_head),
                )
            };
            match sys_result(r) {
                Ok(done) => {
                    self.submitted_head += done as usize;
                    self.inflight += done as u32;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if crate::sys::errno_of(&e) == Some(libc::EAGAIN) && self.inflight > 0 => {
                    // No room in the kernel queue: wait for one completion
                    // and keep it for the next reap.
                    let got = self.getevents(1, self.depth - self.stash.len() as u32)?;
                    for ev in &self.events[..got] {
                        self.stash.push(Completion {
                            idx: ev.data as u32,
                            result: ev.res,
                        });
                    }
                    self.inflight -= got as u32;
                }
                Err(e) => {
                    // Drop what could not be submitted so it is not retried.
                    self.pending.clear();
                    self.submitted_head = 0;
                    return Err(e);
                }
            }
        }
        self.pending.clear();
        self.submitted_head = 0;
        Ok(total as u32)
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
        let have = out.len() as u32;
        if have >= max || self.inflight == 0 {
            return Ok(have);
        }
        let want_min = min.saturating_sub(have).min(self.inflight);
        let room = max - have;
        if self.userspace_reap && want_min == 0 {
            let n = self.ring_reap(room, out);
            self.inflight -= n;
            return Ok(have + n);
        }
        let got = self.getevents(want_min, room)?;
        for ev in &self.events[..got] {
            out.push(Completion {
                idx: ev.data as u32,
                result: ev.res,
            });
        }
        self.inflight -= got as u32;
        Ok(have + got as u32)
    }

    fn pending(&self) -> u32 {
        (self.pending.len() - self.submitted_head) as u32
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        if self.ctx != 0 {
            // SAFETY: destroys the context created in `init`; the kernel
            // waits for in-flight I/O, so buffers are not used afterwards.
            unsafe {
                libc::syscall(libc::SYS_io_destroy, self.ctx);
            }
        }
    }
}
