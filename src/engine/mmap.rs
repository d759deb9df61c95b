//! `mmap`: each file is mapped whole (shared) when opened; a read copies
//! from the mapping into the I/O buffer, a write copies the buffer into
//! the mapping. Syncs are `msync` of the mapping (of the range for
//! `sync_file_range`); trims use the shared synchronous helper on the
//! descriptor. `thp=1` asks for transparent huge pages on the mapping.
//!
//! The file must already have its full size (a mapping cannot grow it):
//! its registry entry says `Layout::Full`. Hot path: one bounds check and a copy.

use std::io;

use crate::sys::RawFd;

use super::file::{open_file, ret_or_errno, sync_op};
use super::{Engine, EngineKind, IoUnit, Op, OpenFile, Queued};
use crate::job::JobSpec;

/// One mapped file.
#[derive(Clone, Copy, Debug)]
struct Map {
    base: *mut u8,
    len: u64,
}

pub struct MmapEngine {
    maps: Vec<Map>,
    advice: libc::c_int,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    thp: bool,
}

// SAFETY: the mappings belong to this engine, used by one thread at a time.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    pub fn new(spec: &JobSpec) -> Self {
        MmapEngine {
            maps: Vec::new(),
            advice: match spec.file.fadvise_hint.random(spec.io.rw) {
                Some(true) => libc::MADV_RANDOM,
                Some(false) => libc::MADV_SEQUENTIAL,
                None => libc::MADV_NORMAL,
            },
            thp: spec.engine.thp,
        }
    }
}

impl Engine for MmapEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Mmap
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        let fd = open_file(f, f.flags)?;
        let fail = |e: io::Error| {
            // SAFETY: closing the descriptor opened above.
            unsafe { libc::close(fd) };
            e
        };
        if f.size == 0 {
            return Err(fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mmap needs a file with a known, non-zero size",
            )));
        }
        let mut prot = libc::PROT_READ;
        if f.flags & crate::sys::O_ACCMODE != crate::sys::O_RDONLY {
            prot |= libc::PROT_WRITE;
        }
        // SAFETY: maps `size` bytes of an open descriptor; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                f.size as usize,
                prot,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(fail(io::Error::new(
                io::Error::last_os_error().kind(),
                format!("mmap: {}", io::Error::last_os_error()),
            )));
        }
        // SAFETY: advice on the mapping just created.
        unsafe {
            libc::madvise(base, f.size as usize, self.advice);
        }
        // thp exists on Linux only (refused elsewhere before the job starts).
        #[cfg(target_os = "linux")]
        if self.thp {
            // SAFETY: as above.
            if unsafe { libc::madvise(base, f.size as usize, libc::MADV_HUGEPAGE) } < 0 {
                let e = io::Error::last_os_error();
                // SAFETY: undo the mapping before failing.
                unsafe { libc::munmap(base, f.size as usize) };
                return Err(fail(io::Error::new(
                    e.kind(),
                    format!("thp=1: madvise(MADV_HUGEPAGE) failed: {e}"),
                )));
            }
        }
        self.maps.push(Map {
            base: base as *mut u8,
            len: f.size,
        });
        Ok((fd, self.maps.len() - 1))
    }

    fn close(&mut self, fd: RawFd, data: usize, _size: u64) -> io::Result<()> {
        if let Some(m) = self.maps.get_mut(data) {
            if !m.base.is_null() {
                // SAFETY: unmaps the mapping created in `open`, once.
                unsafe { libc::munmap(m.base as *mut libc::c_void, m.len as usize) };
                m.base = std::ptr::null_mut();
            }
        }
        super::file::close_fd(fd)
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let m = self.maps[io.file_data];
        io.result = match io.op {
            Op::Read | Op::Write => {
                if io.offset.checked_add(io.len).is_none_or(|end| end > m.len) {
                    -(libc::EINVAL as i64)
                } else {
                    // SAFETY: the range lies inside the mapping (checked
                    // above) and the buffer holds `len` bytes.
                    unsafe {
                        let at = m.base.add(io.offset as usize);
                        if io.op == Op::Read {
                            std::ptr::copy_nonoverlapping(at, io.buf, io.len as usize);
                        } else {
                            std::ptr::copy_nonoverlapping(io.buf, at, io.len as usize);
                        }
                    }
                    io.len as i64
                }
            }
            Op::Fsync | Op::Fdatasync => {
                // SAFETY: msync of the whole live mapping.
                let r = unsafe {
                    libc::msync(m.base as *mut libc::c_void, m.len as usize, libc::MS_SYNC)
                };
                ret_or_errno(r as isize)
            }
            Op::SyncFileRange => {
                let page = crate::sys::page_size();
                let start = io.offset / page * page;
                let end = if io.len == 0 {
                    m.len
                } else {
                    (io.offset + io.len).min(m.len)
                };
                // SAFETY: a page-aligned range inside the mapping.
                let r = unsafe {
                    libc::msync(
                        m.base.add(start as usize) as *mut libc::c_void,
                        end.saturating_sub(start) as usize,
                        libc::MS_SYNC,
                    )
                };
                ret_or_errno(r as isize)
            }
            Op::Trim => sync_op(io),
        };
        Queued::Completed
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in &mut self.maps {
            if !m.base.is_null() {
                // SAFETY: a mapping still live (the file was not closed).
                unsafe { libc::munmap(m.base as *mut libc::c_void, m.len as usize) };
                m.base = std::ptr::null_mut();
            }
        }
    }
}
