//! The rings' shared memory, mapped a second time for the hot path: a
//! submission entry is written straight into its slot and a completion
//! read straight from its own, with one release store of the tail or
//! head per batch. The `io-uring` crate keeps setting the ring up and
//! registering buffers and files; it reads the rings' heads and tails
//! from this same memory whenever it looks, so the two views agree.

use std::io;
use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::{cqueue, squeue, IoUring};
use rustix::io_uring::{io_uring_params, IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_SQ_RING};

use super::{Completion, Sqe};

/// `IORING_SQ_CQ_OVERFLOW` and `IORING_SQ_TASKRUN` in the ring's flags.
const SQ_CQ_OVERFLOW: u32 = 1 << 1;
const SQ_TASKRUN: u32 = 1 << 2;
/// `IORING_FEAT_SINGLE_MMAP`: one mapping holds both rings.
const FEAT_SINGLE_MMAP: u32 = 1 << 0;

// The crate's `Parameters` is a transparent wrapper of the kernel's
// `struct io_uring_params`, as rustix's `io_uring_params` is that struct.
const _: () = assert!(size_of::<io_uring::Parameters>() == size_of::<io_uring_params>());
const _: () = assert!(size_of::<io_uring_params>() == 120);

/// A read or write as the kernel's 64-byte `struct io_uring_sqe` lays
/// it out (the fields the read and write opcodes use; the rest zero), so
/// that one is written into its slot whole rather than built beside it
/// and copied.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RwSqe {
    pub opcode: u8,
    pub flags: u8,
    pub ioprio: u16,
    /// The descriptor, or the registered file's index with
    /// `IOSQE_FIXED_FILE`.
    pub fd: i32,
    pub off: u64,
    /// The buffer, or the iovec of a vectored read or write.
    pub addr: u64,
    /// Bytes, or the number of iovecs.
    pub len: u32,
    pub rw_flags: i32,
    pub user_data: u64,
    /// The registered buffer of READ_FIXED and WRITE_FIXED.
    pub buf_index: u16,
    pub personality: u16,
    pub file_index: u32,
    pub addr3: u64,
    pub pad: u64,
}

const _: () = assert!(size_of::<RwSqe>() == size_of::<squeue::Entry>());
const _: () = assert!(size_of::<RwSqe>() == 64);

/// One mapping of the ring's memory.
struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    fn new(fd: i32, offset: u64, len: usize) -> io::Result<Map> {
        // SAFETY: a fresh shared mapping of the ring's fd at one of the
        // offsets io_uring defines, of the length its parameters give.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The `u32` at byte `off` of the mapping, shared with the kernel.
    ///
    /// # Safety
    ///
    /// `off` is a 4-aligned offset the ring's parameters give, inside
    /// the mapping.
    unsafe fn word(&self, off: u32) -> *const AtomicU32 {
        // SAFETY: the caller's offset lies inside the mapping.
        unsafe { self.ptr.add(off as usize) as *const AtomicU32 }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The submission and completion rings of one `IoUring`, as raw memory.
/// Only the thread that runs the job uses it (the worker owns the ring).
pub struct Raw<S: Sqe, C: cqueue::EntryMarker> {
    sq_head: *const AtomicU32,
    sq_tail: *const AtomicU32,
    sq_flags: *const AtomicU32,
    sq_mask: u32,
    sq_entries: u32,
    sqes: *mut S,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cqes: *const C,
    /// Kept for their lifetime: the rings, the completion ring when it
    /// is a mapping of its own, the submission entries.
    _maps: (Map, Option<Map>, Map),
    _types: PhantomData<(S, C)>,
}

impl<C: cqueue::EntryMarker> Raw<squeue::Entry, C> {
    /// [`Raw::push`] of a read or write written into its slot in place.
    ///
    /// # Safety
    ///
    /// Whatever the entry points to stays valid until its completion.
    #[inline(always)]
    pub unsafe fn push_rw(&mut self, sqe: RwSqe) -> bool {
        // SAFETY: the caller's promise; `RwSqe` is a 64-byte entry.
        unsafe { self.put(sqe) }
    }
}

impl<S: Sqe, C: cqueue::EntryMarker> Raw<S, C> {
    /// Maps `ring`'s memory again, at the offsets its parameters give.
    pub fn new(ring: &IoUring<S, C>) -> io::Result<Self> {
        // SAFETY: `Parameters` is `#[repr(transparent)]` over the kernel's
        // `struct io_uring_params`, which `io_uring_params` is too (same
        // size, asserted above).
        let p =
            unsafe { &*(ring.params() as *const io_uring::Parameters as *const io_uring_params) };
        let fd = std::os::fd::AsRawFd::as_raw_fd(ring);
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * size_of::<u32>();
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * size_of::<C>();
        let sqe_len = p.sq_entries as usize * size_of::<S>();
        let (sq_map, cq_map) = if p.features.bits() & FEAT_SINGLE_MMAP != 0 {
            (Map::new(fd, IORING_OFF_SQ_RING, sq_len.max(cq_len))?, None)
        } else {
            (
                Map::new(fd, IORING_OFF_SQ_RING, sq_len)?,
                Some(Map::new(fd, IORING_OFF_CQ_RING, cq_len)?),
            )
        };
        let sqe_map = Map::new(fd, IORING_OFF_SQES, sqe_len)?;
        let cq = cq_map.as_ref().unwrap_or(&sq_map);
        let (so, co) = (&p.sq_off, &p.cq_off);
        // SAFETY: the offsets are the kernel's, inside the mappings; the
        // masks are written once at set-up.
        unsafe {
            Ok(Raw {
                sq_head: sq_map.word(so.head),
                sq_tail: sq_map.word(so.tail),
                sq_flags: sq_map.word(so.flags),
                sq_mask: (*sq_map.word(so.ring_mask)).load(Ordering::Relaxed),
                sq_entries: p.sq_entries,
                sqes: sqe_map.ptr.cast(),
                cq_head: cq.word(co.head),
                cq_tail: cq.word(co.tail),
                cq_mask: (*cq.word(co.ring_mask)).load(Ordering::Relaxed),
                cqes: cq.ptr.add(co.cqes as usize).cast(),
                _maps: (sq_map, cq_map, sqe_map),
                _types: PhantomData,
            })
        }
    }

    /// Writes `entry` into the next free slot of the submission ring and
    /// publishes it; false when the ring is full.
    ///
    /// # Safety
    ///
    /// Whatever the entry points to stays valid until its completion.
    #[inline(always)]
    pub unsafe fn push(&mut self, entry: S) -> bool {
        // SAFETY: the caller's promise.
        unsafe { self.put(entry) }
    }

    /// [`Raw::push`] of any form of the ring's entry (`T` is an entry of
    /// the ring's size: checked at compile time).
    ///
    /// # Safety
    ///
    /// As [`Raw::push`]; `T` is laid out as the kernel's entry.
    #[inline(always)]
    unsafe fn put<T>(&mut self, entry: T) -> bool {
        const { assert!(size_of::<T>() == size_of::<S>()) };
        // SAFETY: the words and slots are inside the live mappings; this
        // thread is the only writer of the tail; a slot holds one entry
        // of `T`'s size.
        unsafe {
            let tail = (*self.sq_tail).load(Ordering::Relaxed);
            let head = (*self.sq_head).load(Ordering::Acquire);
            if tail.wrapping_sub(head) >= self.sq_entries {
                return false;
            }
            let slot = self.sqes.add((tail & self.sq_mask) as usize);
            slot.cast::<T>().write(entry);
            (*self.sq_tail).store(tail.wrapping_add(1), Ordering::Release);
        }
        true
    }

    /// Moves up to `max - out.len()` completions to `out` (no more than
    /// its spare capacity: it never grows); how many.
    #[inline(always)]
    pub fn drain(&mut self, max: u32, out: &mut Vec<Completion>) -> u32 {
        let len = out.len();
        let room = (max as usize).saturating_sub(len).min(out.capacity() - len) as u32;
        // SAFETY: as in `push`; this thread is the only writer of the
        // completion ring's head, and the kernel wrote every entry
        // before the tail it published. At most `room` completions go
        // into `out`'s spare capacity.
        let n = unsafe {
            let head = (*self.cq_head).load(Ordering::Relaxed);
            let tail = (*self.cq_tail).load(Ordering::Acquire);
            let n = tail.wrapping_sub(head).min(room);
            let dst = out.as_mut_ptr().add(len);
            for k in 0..n {
                // The first 16 bytes of either entry size: user data,
                // result, flags.
                let e = self
                    .cqes
                    .add((head.wrapping_add(k) & self.cq_mask) as usize)
                    as *const u64;
                dst.add(k as usize).write(Completion {
                    idx: e.read() as u32,
                    result: (e.add(1) as *const i32).read() as i64,
                });
            }
            if n > 0 {
                (*self.cq_head).store(head.wrapping_add(n), Ordering::Release);
            }
            n
        };
        // SAFETY: the first `n` spare slots were written above.
        unsafe { out.set_len(len + n as usize) };
        n
    }

    /// The kernel holds completion work only an enter that gets events
    /// runs, or completions that overflowed the ring.
    #[inline(always)]
    pub fn kernel_has_work(&self) -> bool {
        // SAFETY: the flags word inside the live mapping.
        let f = unsafe { (*self.sq_flags).load(Ordering::Acquire) };
        f & (SQ_TASKRUN | SQ_CQ_OVERFLOW) != 0
    }

    /// Entries written and not yet taken by the kernel.
    pub fn sq_len(&self) -> u32 {
        // SAFETY: as in `push`.
        unsafe {
            (*self.sq_tail)
                .load(Ordering::Relaxed)
                .wrapping_sub((*self.sq_head).load(Ordering::Acquire))
        }
    }
}
