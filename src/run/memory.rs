//! Memory for a job's I/O buffers (`mem`/`iomem`, `hugepage-size`) and
//! memory pinned to shrink the machine (`lockmem`).

use std::path::PathBuf;

use crate::job::spec::MemType;

enum Backing {
    Heap(std::alloc::Layout),
    /// A mapping of `len` bytes (anonymous, shared, huge or of a file).
    Map(usize),
    /// An attached System V segment.
    Shm,
}

/// A zeroed, aligned area for `size` bytes of buffers.
pub struct BufferMemory {
    /// Start of the area the buffers use (aligned).
    pub ptr: *mut u8,
    pub size: usize,
    base: *mut u8,
    backing: Backing,
}

// SAFETY: the memory belongs to this value; one thread uses it at a time.
unsafe impl Send for BufferMemory {}

/// Why memory for buffers (`mem`) or `lockmem` cannot be had; the job
/// reports ENOMEM.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{0}")]
    Layout(#[from] std::alloc::LayoutError),
    #[error("cannot allocate {0} bytes of I/O buffers")]
    Heap(usize),
    #[error("mem={mem}: cannot get a {len}-byte shared memory segment: {source}{}", hint(*huge))]
    ShmGet {
        mem: &'static str,
        len: usize,
        source: std::io::Error,
        huge: bool,
    },
    #[error("mem={mem}: cannot attach the shared memory segment: {source}")]
    ShmAttach {
        mem: &'static str,
        source: std::io::Error,
    },
    #[error("mem={mem}: cannot map {len} bytes: {source}{}", hint(*huge))]
    Map {
        mem: &'static str,
        len: usize,
        source: std::io::Error,
        huge: bool,
    },
    /// The file behind `mem=mmap:FILE` cannot be opened or sized (`what`).
    #[error("mem={mem}: cannot {what} '{}': {source}", path.display())]
    Backing {
        mem: &'static str,
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("lockmem: cannot map {len} bytes: {source}")]
    LockMap { len: usize, source: std::io::Error },
    #[error("lockmem: cannot lock {len} bytes: {source} (see ulimit -l)")]
    Lock { len: usize, source: std::io::Error },
}

impl BufferMemory {
    /// Allocates `size` bytes aligned to `align` from `mem`; huge-page
    /// types round the area up to whole pages of `huge` bytes.
    pub fn new(size: usize, align: usize, mem: &MemType, huge: u64) -> Result<Self, MemoryError> {
        let size = size.max(align);
        if let MemType::Malloc = mem {
            return Self::heap(size, align);
        }
        // Mappings and segments start on a page: leave room to align further.
        let page = 4096usize;
        let mut len = size + if align > page { align } else { 0 };
        let is_huge = matches!(mem, MemType::ShmHuge | MemType::MmapHuge(_));
        if is_huge {
            let h = huge.max(page as u64) as usize;
            len = len.div_ceil(h) * h;
        }
        let (base, backing) = match mem {
            MemType::Malloc => unreachable!(),
            MemType::Shm | MemType::ShmHuge => shm_segment(mem, len, is_huge)?,
            MemType::Mmap(file) | MemType::MmapHuge(file) | MemType::MmapShared(file) => {
                mapping(mem, file.as_ref(), len, is_huge)?
            }
        };
        let off = base.align_offset(align);
        // SAFETY: `len` leaves room for the offset; a file-backed area
        // may hold old contents, so clear it like the others.
        let ptr = unsafe { base.add(off) };
        unsafe { std::ptr::write_bytes(ptr, 0, size) };
        Ok(BufferMemory {
            ptr,
            size,
            base,
            backing,
        })
    }

    /// `mem=malloc`: zeroed heap memory.
    fn heap(size: usize, align: usize) -> Result<Self, MemoryError> {
        let layout = std::alloc::Layout::from_size_align(size, align)?;
        // SAFETY: non-zero size, valid alignment.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(MemoryError::Heap(size));
        }
        Ok(BufferMemory {
            ptr,
            size,
            base: ptr,
            backing: Backing::Heap(layout),
        })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `size` bytes from `ptr` belong to self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }
}

/// `mem=shm`, `shmhuge`: a private System V segment of `len` bytes.
fn shm_segment(
    mem: &MemType,
    len: usize,
    is_huge: bool,
) -> Result<(*mut u8, Backing), MemoryError> {
    let flags = libc::IPC_CREAT | 0o600 | if is_huge { libc::SHM_HUGETLB } else { 0 };
    // SAFETY: plain System V calls; the segment is marked for
    // removal once attached, so it goes when detached.
    unsafe {
        let id = libc::shmget(libc::IPC_PRIVATE, len, flags);
        if id < 0 {
            return Err(MemoryError::ShmGet {
                mem: mem.name(),
                len,
                source: std::io::Error::last_os_error(),
                huge: is_huge,
            });
        }
        let p = libc::shmat(id, std::ptr::null(), 0);
        libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        if p as isize == -1 {
            return Err(MemoryError::ShmAttach {
                mem: mem.name(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok((p as *mut u8, Backing::Shm))
    }
}

/// `mem=mmap`, `mmaphuge`, `mmapshared`: an anonymous mapping of `len`
/// bytes, or one of `file` (shared).
fn mapping(
    mem: &MemType,
    file: Option<&PathBuf>,
    len: usize,
    is_huge: bool,
) -> Result<(*mut u8, Backing), MemoryError> {
    let shared = matches!(mem, MemType::MmapShared(_)) || file.is_some();
    let mut flags = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    let fd = match file {
        Some(path) => Some(open_backing(path, len, mem)?),
        None => {
            flags |= libc::MAP_ANONYMOUS;
            if is_huge {
                flags |= libc::MAP_HUGETLB;
            }
            None
        }
    };
    // SAFETY: a new mapping; checked below. The file (if any)
    // stays mapped after its descriptor is closed.
    let p = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd.unwrap_or(-1),
            0,
        );
        if let Some(fd) = fd {
            libc::close(fd);
        }
        p
    };
    if p == libc::MAP_FAILED {
        return Err(MemoryError::Map {
            mem: mem.name(),
            len,
            source: std::io::Error::last_os_error(),
            huge: is_huge,
        });
    }
    Ok((p as *mut u8, Backing::Map(len)))
}

/// What a failure with huge pages (`huge`) adds to its message.
fn hint(huge: bool) -> &'static str {
    if huge {
        " (huge pages must be reserved: see /proc/sys/vm/nr_hugepages and hugepage-size)"
    } else {
        ""
    }
}

/// Opens (creating) the file behind `mem=mmap:FILE` and sizes it.
fn open_backing(path: &PathBuf, len: usize, mem: &MemType) -> Result<i32, MemoryError> {
    use std::os::fd::IntoRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| MemoryError::Backing {
            mem: mem.name(),
            what: "open",
            path: path.clone(),
            source,
        })?;
    if f.metadata().map(|m| m.len()).unwrap_or(0) < len as u64 {
        f.set_len(len as u64)
            .map_err(|source| MemoryError::Backing {
                mem: mem.name(),
                what: "size",
                path: path.clone(),
                source,
            })?;
    }
    Ok(f.into_raw_fd())
}

impl Drop for BufferMemory {
    fn drop(&mut self) {
        // SAFETY: releases what `new` obtained, the way it was obtained.
        unsafe {
            match self.backing {
                Backing::Heap(layout) => std::alloc::dealloc(self.base, layout),
                Backing::Map(len) => {
                    libc::munmap(self.base as *mut libc::c_void, len);
                }
                Backing::Shm => {
                    libc::shmdt(self.base as *const libc::c_void);
                }
            }
        }
    }
}

/// `lockmem`: this many bytes pinned with mlock(2) while the job runs.
pub struct LockedMemory {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is owned and never accessed through the pointer.
unsafe impl Send for LockedMemory {}

impl LockedMemory {
    pub fn new(len: usize) -> Result<Self, MemoryError> {
        // SAFETY: a new anonymous mapping, then locked; undone in Drop.
        unsafe {
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if ptr == libc::MAP_FAILED {
                return Err(MemoryError::LockMap {
                    len,
                    source: std::io::Error::last_os_error(),
                });
            }
            if libc::mlock(ptr, len) != 0 {
                let e = std::io::Error::last_os_error();
                libc::munmap(ptr, len);
                return Err(MemoryError::Lock { len, source: e });
            }
            Ok(LockedMemory { ptr, len })
        }
    }
}

impl Drop for LockedMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe {
            libc::munlock(self.ptr, self.len);
            libc::munmap(self.ptr, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backing_gives_zeroed_aligned_memory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("buf");
        std::fs::write(&file, vec![7u8; 1 << 16]).unwrap();
        for mem in [
            MemType::Malloc,
            MemType::Shm,
            MemType::Mmap(None),
            MemType::MmapShared(None),
            MemType::Mmap(Some(file.clone())),
        ] {
            for align in [512usize, 4096, 65536] {
                let mut m = BufferMemory::new(40_000, align, &mem, 2 << 20).unwrap();
                assert_eq!(m.ptr as usize % align, 0, "{mem:?}");
                let s = m.as_mut_slice();
                assert!(s.len() >= 40_000);
                assert!(s.iter().all(|b| *b == 0), "{mem:?}");
                s.fill(0xa5);
            }
        }
        let locked = LockedMemory::new(1 << 20);
        // Pinning needs RLIMIT_MEMLOCK room (root has it).
        if unsafe { libc::geteuid() } == 0 {
            assert!(locked.is_ok(), "{:?}", locked.err());
        }
    }
}
