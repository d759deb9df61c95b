//! Memory areas on Windows: committed pages (`VirtualAlloc`) and views
//! of the paging file or of a file ([`View`]), for I/O buffers (`mem=`)
//! and `lockmem`. Each [`Area`] is released when dropped. Windows has no
//! System V segments and iomark maps no huge pages here: those memory
//! types are refused before the run.

use std::io;

use super::map::{MapAccess, View};
use super::RawFd;
use crate::sys::ShmError;

/// Whether System V shared memory segments exist here ([`Area::shm`]).
pub const HAS_SHM: bool = false;
/// Whether anonymous mappings can use huge pages.
pub const HAS_HUGE_MAPS: bool = false;
/// Whether a private mapping of a file may be longer than the file:
/// Windows cannot map a file privately past its end without extending it.
pub const PRIVATE_MAP_PAST_END: bool = false;

/// How an [`Area`] is released.
#[derive(Debug)]
enum Kind {
    /// `VirtualFree`.
    Pages,
    /// Unmapped (and its section closed) when the view drops.
    View(#[allow(dead_code)] View),
}

/// Mapped memory, released when dropped.
#[derive(Debug)]
pub struct Area {
    ptr: *mut u8,
    len: usize,
    kind: Kind,
}

// SAFETY: the pages belong to this value; the memory is process-wide.
unsafe impl Send for Area {}

impl Area {
    fn pages(len: usize) -> io::Result<Area> {
        let ptr = super::map_anon(len)?;
        Ok(Area {
            ptr,
            len,
            kind: Kind::Pages,
        })
    }

    fn view(view: View, len: usize) -> Area {
        Area {
            ptr: view.ptr(),
            len,
            kind: Kind::View(view),
        }
    }

    /// `len` bytes of zeroed read-write pages (alignment padding).
    pub fn reserve(len: usize) -> io::Result<Area> {
        Area::pages(len)
    }

    /// `len` bytes of zeroed memory: a view of a new section of the
    /// paging file (shared or not alike); no huge pages.
    pub fn anonymous(len: usize, _shared: bool, huge: bool) -> io::Result<Area> {
        if huge {
            return Err(io::ErrorKind::Unsupported.into());
        }
        Ok(Area::view(View::map(None, 0, len, MapAccess::Write)?, len))
    }

    /// `len` bytes of the file open at `fd`: shared (writes reach the
    /// file) or private (copy-on-write: the file never changes). The
    /// section keeps the file open after its handle closes.
    pub fn of_file(fd: RawFd, _file_len: u64, len: usize, shared: bool) -> io::Result<Area> {
        let access = if shared {
            MapAccess::Write
        } else {
            MapAccess::Copy
        };
        Ok(Area::view(View::map(Some(fd), 0, len, access)?, len))
    }

    /// No System V segments on Windows ([`HAS_SHM`]).
    pub fn shm(_len: usize, _huge: bool) -> Result<Area, ShmError> {
        Err(ShmError::Get(io::ErrorKind::Unsupported.into()))
    }

    /// `len` bytes of committed, zeroed pages.
    pub fn committed(len: usize) -> io::Result<Area> {
        Area::pages(len)
    }

    /// Pins the area's pages in memory (`VirtualLock`, within the
    /// process's working set limits) until it is dropped.
    pub fn lock(&mut self) -> io::Result<()> {
        super::lock(self.ptr, self.len)
    }

    /// Where the area starts.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Whether the area is a view (of a file or of the paging file).
    pub fn is_view(&self) -> bool {
        matches!(self.kind, Kind::View(_))
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        if let Kind::Pages = self.kind {
            // SAFETY: pages from map_anon, released once.
            unsafe { super::unmap(self.ptr, self.len) };
        }
    }
}
