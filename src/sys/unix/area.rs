//! Memory areas on Unix: anonymous mappings, System V segments and
//! mappings of files (`mmap`, `shmget`/`shmat`, `mlock`), for I/O buffers
//! (`mem=`) and `lockmem`. Each [`Area`] is released when dropped.

use std::io;

use super::RawFd;
use crate::sys::ShmError;

/// Huge pages for segments and mappings: Linux's flags (the huge memory
/// types are refused elsewhere before the run on other systems).
#[cfg(target_os = "linux")]
const SHM_HUGETLB: libc::c_int = libc::SHM_HUGETLB;
#[cfg(target_os = "linux")]
const MAP_HUGETLB: libc::c_int = libc::MAP_HUGETLB;
#[cfg(not(target_os = "linux"))]
const SHM_HUGETLB: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const MAP_HUGETLB: libc::c_int = 0;
/// No swap reserved for the alignment padding (FreeBSD has no flag:
/// it never reserves).
#[cfg(not(target_os = "freebsd"))]
const MAP_NORESERVE: libc::c_int = libc::MAP_NORESERVE;
#[cfg(target_os = "freebsd")]
const MAP_NORESERVE: libc::c_int = 0;

const PROT_RW: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;

/// Whether System V shared memory segments exist here ([`Area::shm`]).
pub const HAS_SHM: bool = true;
/// Whether anonymous mappings can use huge pages (the huge memory types
/// are refused before the run where the system has none).
pub const HAS_HUGE_MAPS: bool = true;
/// Whether a private mapping of a file may be longer than the file (the
/// rest zeroed memory), as [`Area::of_file`] maps it.
pub const PRIVATE_MAP_PAST_END: bool = true;

/// How an [`Area`] is released.
#[derive(Debug)]
enum Kind {
    /// `munmap` (and `munlock` first when locked).
    Map { locked: bool },
    /// `shmdt`.
    Shm,
}

/// Mapped memory, released when dropped.
#[derive(Debug)]
pub struct Area {
    ptr: *mut u8,
    len: usize,
    kind: Kind,
}

// SAFETY: the mapping belongs to this value; the memory is process-wide.
unsafe impl Send for Area {}

/// `mmap(2)` of `len` bytes with `flags` (anonymous with `fd` -1),
/// checked.
///
/// # Safety
/// With `MAP_FIXED`, `addr` must be an area this process owns and may
/// replace.
unsafe fn map(
    addr: *mut libc::c_void,
    len: usize,
    flags: libc::c_int,
    fd: RawFd,
) -> io::Result<*mut libc::c_void> {
    // SAFETY: the caller vouches for `addr` under MAP_FIXED; otherwise
    // the kernel picks a new place.
    let p = unsafe { libc::mmap(addr, len, PROT_RW, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p)
}

impl Area {
    fn mapped(p: *mut libc::c_void, len: usize) -> Area {
        Area {
            ptr: p.cast(),
            len,
            kind: Kind::Map { locked: false },
        }
    }

    /// `len` bytes of private, zeroed address space whose pages are only
    /// had when touched (no swap reserved: alignment padding).
    pub fn reserve(len: usize) -> io::Result<Area> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | MAP_NORESERVE;
        // SAFETY: a new mapping.
        let p = unsafe { map(std::ptr::null_mut(), len, flags, -1)? };
        Ok(Area::mapped(p, len))
    }

    /// `len` bytes of zeroed memory: shared (with child processes) or
    /// private, of huge pages or not.
    pub fn anonymous(len: usize, shared: bool, huge: bool) -> io::Result<Area> {
        let mut flags = libc::MAP_ANONYMOUS;
        flags |= if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        if huge {
            flags |= MAP_HUGETLB;
        }
        // SAFETY: a new anonymous mapping.
        let p = unsafe { map(std::ptr::null_mut(), len, flags, -1)? };
        Ok(Area::mapped(p, len))
    }

    /// `len` bytes of the file open at `fd` (`file_len` bytes long):
    /// shared (writes reach the file), or private (the file's own pages
    /// where it has any, zeroed memory beyond; the file never changes).
    pub fn of_file(fd: RawFd, file_len: u64, len: usize, shared: bool) -> io::Result<Area> {
        if shared {
            // SAFETY: a new mapping of an open descriptor; the file stays
            // mapped after the descriptor is closed.
            let p = unsafe { map(std::ptr::null_mut(), len, libc::MAP_SHARED, fd)? };
            return Ok(Area::mapped(p, len));
        }
        // Nothing past the file's end is mapped from it.
        let area = Area::reserve(len)?;
        let over = (file_len.min(len as u64) as usize).div_ceil(4096) * 4096;
        let over = over.min(len);
        if over > 0 {
            let flags = libc::MAP_PRIVATE | libc::MAP_FIXED;
            // SAFETY: over the start of the area just mapped, which this
            // function owns (dropped, and unmapped, on failure).
            unsafe { map(area.ptr.cast(), over, flags, fd)? };
        }
        Ok(area)
    }

    /// A private System V segment of `len` bytes (of huge pages or not),
    /// marked for removal once attached, so it goes when detached.
    pub fn shm(len: usize, huge: bool) -> Result<Area, ShmError> {
        let flags = libc::IPC_CREAT | 0o600 | if huge { SHM_HUGETLB } else { 0 };
        // SAFETY: plain System V calls on a new private segment.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, len, flags);
            if id < 0 {
                return Err(ShmError::Get(io::Error::last_os_error()));
            }
            let p = libc::shmat(id, std::ptr::null(), 0);
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            if p as isize == -1 {
                return Err(ShmError::Attach(io::Error::last_os_error()));
            }
            Ok(Area {
                ptr: p.cast(),
                len,
                kind: Kind::Shm,
            })
        }
    }

    /// `len` bytes of zeroed private memory, every page had now.
    pub fn committed(len: usize) -> io::Result<Area> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a new anonymous mapping.
        let p = unsafe { map(std::ptr::null_mut(), len, flags, -1)? };
        Ok(Area::mapped(p, len))
    }

    /// Pins the area's pages in memory (`mlock`) until it is dropped.
    pub fn lock(&mut self) -> io::Result<()> {
        // SAFETY: pages this value owns.
        if unsafe { libc::mlock(self.ptr.cast(), self.len) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.kind = Kind::Map { locked: true };
        Ok(())
    }

    /// Where the area starts.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: releases what the constructor obtained, the way it was
        // obtained; nothing uses the area afterwards.
        unsafe {
            match self.kind {
                Kind::Map { locked } => {
                    if locked {
                        libc::munlock(self.ptr.cast(), self.len);
                    }
                    libc::munmap(self.ptr.cast(), self.len);
                }
                Kind::Shm => {
                    libc::shmdt(self.ptr as *const libc::c_void);
                }
            }
        }
    }
}
