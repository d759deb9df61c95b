//! File-descriptor helpers shared by the engines: open, close, and the
//! synchronous operations (trim, syncs) that several engines perform the
//! same way.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{IoUnit, Op};

pub fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

pub fn open_fd(path: &Path, flags: i32) -> io::Result<RawFd> {
    let c = cstring(path)?;
    // SAFETY: `c` is a valid NUL-terminated path; mode is used only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644 as libc::c_uint) };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

/// Opens `f` (its name in its directory's handle) with `flags`.
pub fn open_file(f: &super::OpenFile, flags: i32) -> io::Result<RawFd> {
    // SAFETY: a NUL-terminated name relative to an open directory (or
    // AT_FDCWD); mode is used only with O_CREAT.
    let fd = unsafe {
        libc::openat(
            f.dir,
            f.name.as_ptr(),
            flags | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

pub fn close_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: closing a descriptor this process opened.
    if unsafe { libc::close(fd) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Returns the result of a raw syscall as bytes done or `-errno`.
#[inline]
pub fn ret_or_errno(r: isize) -> i64 {
    if r < 0 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        r as i64
    }
}

const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discards a range: `BLKDISCARD` on block devices, a punched hole on files.
pub fn trim(fd: RawFd, offset: u64, len: u64) -> i64 {
    // SAFETY: fstat into a zeroed stat buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
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

/// Performs a sync-type or trim unit synchronously; returns the result.
pub fn sync_op(io: &IoUnit) -> i64 {
    // SAFETY: syscalls on an open descriptor with plain integer arguments.
    let r = unsafe {
        match io.op {
            Op::Fsync => libc::fsync(io.fd) as isize,
            Op::Fdatasync => libc::fdatasync(io.fd) as isize,
            Op::SyncFileRange => libc::sync_file_range(
                io.fd,
                io.offset as libc::off64_t,
                io.len as libc::off64_t,
                io.sfr_flags,
            ) as isize,
            Op::Trim => return trim(io.fd, io.offset, io.len),
            Op::Read | Op::Write => return -(libc::EINVAL as i64),
        }
    };
    ret_or_errno(r)
}
