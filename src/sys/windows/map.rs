//! Views of files and of the paging file: the Windows form of `mmap`
//! (`CreateFileMappingW` + `MapViewOfFile`), for the mmap engine and
//! `mem=mmap`.
//!
//! A view starts at a multiple of the allocation granularity (64 KiB):
//! [`View::map`] rounds the offset asked for down to one and says where
//! the offset asked for lies in the view.

use std::io;

use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::System::Memory as m;

use super::{handle, RawFd};

/// How a view may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapAccess {
    /// Read only (`PAGE_READONLY`, `FILE_MAP_READ`).
    Read,
    /// Read and write, shared with the file: writes reach it
    /// (`PAGE_READWRITE`, `FILE_MAP_WRITE`).
    Write,
    /// Read and write, private: a written page is copied first and the
    /// file never changes (`PAGE_WRITECOPY`, `FILE_MAP_COPY`).
    Copy,
}

/// A mapped view and its section, unmapped and closed when dropped.
#[derive(Debug)]
pub struct View {
    section: wf::HANDLE,
    view: *mut u8,
    /// Where the offset asked for lies in the view (below the
    /// granularity).
    skew: usize,
}

// SAFETY: the view and its section belong to this value; the memory is
// process-wide.
unsafe impl Send for View {}

/// The granularity of view offsets (`dwAllocationGranularity`, 64 KiB).
pub fn alloc_granularity() -> u64 {
    u64::from(super::system_info().dwAllocationGranularity).max(4096)
}

impl View {
    /// Maps `len` bytes of the file `fd` from `offset` (`fd` None: of the
    /// paging file, zeroed, `offset` 0). The section spans the file up to
    /// `offset + len`, which must not pass its end unless `access` is
    /// `Write` (Windows would extend the file to it).
    pub fn map(fd: Option<RawFd>, offset: u64, len: usize, access: MapAccess) -> io::Result<View> {
        if len == 0 {
            return Err(io::Error::from_raw_os_error(
                wf::ERROR_INVALID_PARAMETER as i32,
            ));
        }
        let start = offset / alloc_granularity() * alloc_granularity();
        let skew = (offset - start) as usize;
        let end = offset + len as u64;
        let (protect, want) = match access {
            MapAccess::Read => (m::PAGE_READONLY, m::FILE_MAP_READ),
            MapAccess::Write => (m::PAGE_READWRITE, m::FILE_MAP_WRITE),
            MapAccess::Copy => (m::PAGE_WRITECOPY, m::FILE_MAP_COPY),
        };
        let file = fd.map_or(wf::INVALID_HANDLE_VALUE, handle);
        let protect = if fd.is_none() {
            m::PAGE_READWRITE
        } else {
            protect
        };
        // SAFETY: a new, unnamed section of an open handle (or of the
        // paging file); checked below.
        let section = unsafe {
            m::CreateFileMappingW(
                file,
                std::ptr::null(),
                protect,
                (end >> 32) as u32,
                end as u32,
                std::ptr::null(),
            )
        };
        if section.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a view of the section just made, inside its size.
        let view = unsafe {
            m::MapViewOfFile(
                section,
                want,
                (start >> 32) as u32,
                start as u32,
                skew + len,
            )
        };
        if view.Value.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: closes the section made above.
            unsafe { wf::CloseHandle(section) };
            return Err(e);
        }
        Ok(View {
            section,
            view: view.Value.cast(),
            skew,
        })
    }

    /// The first byte of what was asked for (the offset given to
    /// [`View::map`]).
    pub fn ptr(&self) -> *mut u8 {
        // SAFETY: `skew` is inside the view.
        unsafe { self.view.add(self.skew) }
    }

    /// Writes the view's changed pages to the file (`FlushViewOfFile`),
    /// then the file's buffers to the storage (`FlushFileBuffers` on
    /// `fd`): 0, or -1 with the error in the thread's last error.
    pub fn sync(&self, fd: RawFd) -> isize {
        // SAFETY: flushes this view (0: all of it).
        if unsafe { m::FlushViewOfFile(self.view.cast(), 0) } == 0 {
            return -1;
        }
        super::fsync(fd)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: unmaps the view and closes the section made in `map`,
        // once.
        unsafe {
            m::UnmapViewOfFile(m::MEMORY_MAPPED_VIEW_ADDRESS {
                Value: self.view.cast(),
            });
            wf::CloseHandle(self.section);
        }
    }
}
