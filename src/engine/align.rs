//! Direct I/O alignment of a target: how the memory buffers and the file
//! offsets of O_DIRECT I/O must be aligned.
//!
//! Asked from the kernel with `statx(STATX_DIOALIGN)` where it reports it
//! (regular files on most local filesystems, block devices on recent
//! kernels), else from the logical block size of a block device
//! (`BLKSSZGET`). When neither is known the caller falls back to a page
//! (4096 bytes), which satisfies every common device. Only looks; never
//! writes.

use std::path::Path;

#[cfg(target_os = "linux")]
use super::file::cstring;

/// The page-sized alignment used when the target does not say.
pub const FALLBACK: u64 = 4096;

/// Alignment requirements for direct I/O, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DioAlign {
    /// Alignment of the memory buffer.
    pub mem: u64,
    /// Alignment of file offsets and lengths.
    pub offset: u64,
}

/// The direct I/O alignment of `path`, if the kernel or the device says.
#[cfg(target_os = "linux")]
pub fn dio_alignment(path: &Path) -> Option<DioAlign> {
    statx_dioalign(path).or_else(|| logical_block_size(path))
}

/// Windows: the sector size of the disk or volume (for a file, of the
/// volume holding it), which unbuffered I/O needs.
#[cfg(windows)]
pub fn dio_alignment(path: &Path) -> Option<DioAlign> {
    crate::sys::dio_alignment(path).map(|(mem, offset)| DioAlign { mem, offset })
}

/// macOS and FreeBSD: not asked (the page fallback applies).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn dio_alignment(_path: &Path) -> Option<DioAlign> {
    None
}

#[cfg(target_os = "linux")]
fn statx_dioalign(path: &Path) -> Option<DioAlign> {
    let c = cstring(path).ok()?;
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx fills a zeroed struct for a NUL-terminated path.
    let r = unsafe {
        libc::statx(
            crate::sys::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 || stx.stx_dio_offset_align == 0 {
        return None;
    }
    Some(DioAlign {
        mem: u64::from(stx.stx_dio_mem_align.max(1)),
        offset: u64::from(stx.stx_dio_offset_align),
    })
}

/// `BLKSSZGET` on a block device; `None` for anything else.
#[cfg(target_os = "linux")]
fn logical_block_size(path: &Path) -> Option<DioAlign> {
    use crate::sys::ext::FileTypeExt;
    use crate::sys::AsRawFd;
    if !std::fs::metadata(path).ok()?.file_type().is_block_device() {
        return None;
    }
    // (libc::Ioctl: the request's type, an unsigned long with glibc, an
    // int with musl; the bits are the same.)
    const BLKSSZGET: libc::Ioctl = 0x1268u32 as libc::Ioctl;
    let f = std::fs::File::open(path).ok()?;
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET, &mut size) };
    if r < 0 || size <= 0 {
        return None;
    }
    Some(DioAlign {
        mem: size as u64,
        offset: size as u64,
    })
}

/// The buffer alignment a job needs for its targets: at least a page, at
/// least `iomem_align`, and at least what each target asks for when the
/// job uses direct I/O.
pub fn buffer_alignment<'a>(
    direct: bool,
    iomem_align: u64,
    targets: impl Iterator<Item = &'a Path>,
) -> u64 {
    let mut align = FALLBACK.max(iomem_align).next_power_of_two();
    if direct {
        for p in targets {
            if let Some(a) = dio_alignment(p) {
                align = align.max(a.mem.next_power_of_two());
            }
        }
    }
    align
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_file_alignment_is_sane_when_reported() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        // tmpfs may not report it; when reported, it is a power of two.
        if let Some(a) = dio_alignment(&f) {
            assert!(
                a.offset.is_power_of_two() && a.mem.is_power_of_two(),
                "{a:?}"
            );
            assert!(a.offset <= 65536);
        }
        // Windows answers for the volume a missing file would be on.
        #[cfg(unix)]
        assert_eq!(dio_alignment(dir.path().join("missing").as_path()), None);
    }

    #[test]
    fn buffer_alignment_is_at_least_a_page_and_iomem_align() {
        let none: [&Path; 0] = [];
        assert_eq!(buffer_alignment(false, 0, none.iter().copied()), 4096);
        assert_eq!(buffer_alignment(true, 65536, none.iter().copied()), 65536);
        assert_eq!(buffer_alignment(false, 5000, none.iter().copied()), 8192);
    }
}
