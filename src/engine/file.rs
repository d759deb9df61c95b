//! File-descriptor helpers shared by the engines: open, close, and the
//! synchronous operations (trim, syncs) that several engines perform the
//! same way. The calls go through `sys`, so they mean the same on every
//! platform (on Windows a descriptor is a handle).

use std::ffi::CString;
use std::io;
use std::path::Path;

use super::{IoUnit, Op};
pub use crate::sys::ret_or_errno;
use crate::sys::RawFd;

pub fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Opens `path` with `flags` (relative to the current directory).
pub fn open_fd(path: &Path, flags: i32) -> io::Result<RawFd> {
    use crate::sys::IntoRawFd;
    let c = cstring(path)?;
    crate::sys::open_at(crate::sys::AT_FDCWD, &c, flags, 0o644).map(IntoRawFd::into_raw_fd)
}

/// Opens `f` (its name in its directory's handle) with `flags`.
pub fn open_file(f: &super::OpenFile, flags: i32) -> io::Result<RawFd> {
    use crate::sys::IntoRawFd;
    crate::sys::open_at(f.dir, f.name, flags, 0o644).map(IntoRawFd::into_raw_fd)
}

pub fn close_fd(fd: RawFd) -> io::Result<()> {
    crate::sys::close(fd)
}

/// Discards a range: `BLKDISCARD` on block devices, a punched hole on files.
#[cfg(target_os = "linux")]
pub fn trim(fd: RawFd, offset: u64, len: u64) -> i64 {
    // (libc::Ioctl: the request's type, an unsigned long with glibc, an
    // int with musl; the bits are the same.)
    const BLKDISCARD: libc::Ioctl = 0x1277u32 as libc::Ioctl;
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat into a zeroed stat buffer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return ret_or_errno(-1);
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
        let range = [offset, len];
        // SAFETY: BLKDISCARD takes a pointer to two u64s.
        let r = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
        if r < 0 {
            return ret_or_errno(-1);
        }
        return len as i64;
    }
    // SAFETY: plain fallocate call on an open descriptor.
    let r = unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if r < 0 {
        ret_or_errno(-1)
    } else {
        len as i64
    }
}

/// Trims exist on Linux only: jobs that trim are refused elsewhere
/// before they start (`run::platform`).
#[cfg(not(target_os = "linux"))]
pub fn trim(_fd: RawFd, _offset: u64, _len: u64) -> i64 {
    -(libc::EOPNOTSUPP as i64)
}

/// `sync_file_range(2)` (Linux).
#[cfg(target_os = "linux")]
fn sync_file_range(io: &IoUnit) -> isize {
    // SAFETY: a syscall on an open descriptor with integer arguments.
    unsafe {
        libc::sync_file_range(
            io.fd,
            io.offset as libc::off64_t,
            io.len as libc::off64_t,
            io.sfr_flags,
        ) as isize
    }
}

/// Refused elsewhere before the job starts (`run::platform`).
#[cfg(not(target_os = "linux"))]
fn sync_file_range(_io: &IoUnit) -> isize {
    -2
}

/// Performs a sync-type or trim unit synchronously; returns the result.
pub fn sync_op(io: &IoUnit) -> i64 {
    let r = match io.op {
        Op::Fsync => crate::sys::fsync(io.fd),
        Op::Fdatasync => crate::sys::fdatasync(io.fd),
        Op::SyncFileRange => match sync_file_range(io) {
            -2 => return -(libc::EOPNOTSUPP as i64),
            r => r,
        },
        Op::Trim => return trim(io.fd, io.offset, io.len),
        Op::Read | Op::Write => return -(libc::EINVAL as i64),
    };
    ret_or_errno(r)
}
