//! The Unix side of `sys`: the system calls themselves, with what
//! differs between Linux, macOS and FreeBSD (direct I/O, `O_PATH`)
//! settled here.

use std::ffi::CStr;
use std::io;

pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

mod area;
mod proc;
mod stop;
pub use area::{Area, HAS_HUGE_MAPS, HAS_SHM, PRIVATE_MAP_PAST_END};
pub use proc::{
    clock_ms, mono_ns, pin_thread, set_mempolicy, set_thread_nice, shell, stdout_fd, wait_on,
    wake_all, wall_ns,
};
pub use stop::{exit_now, guard_std_streams, on_stop_signals};

/// Opens relative to the current directory (`openat`'s `AT_FDCWD`).
pub const AT_FDCWD: RawFd = libc::AT_FDCWD;

pub const O_RDONLY: i32 = libc::O_RDONLY;
pub const O_WRONLY: i32 = libc::O_WRONLY;
pub const O_RDWR: i32 = libc::O_RDWR;
pub const O_ACCMODE: i32 = libc::O_ACCMODE;
pub const O_CREAT: i32 = libc::O_CREAT;
pub const O_EXCL: i32 = libc::O_EXCL;
pub const O_TRUNC: i32 = libc::O_TRUNC;
pub const O_APPEND: i32 = libc::O_APPEND;
pub const O_SYNC: i32 = libc::O_SYNC;
pub const O_DSYNC: i32 = libc::O_DSYNC;
pub const O_NOFOLLOW: i32 = libc::O_NOFOLLOW;
pub const O_NONBLOCK: i32 = libc::O_NONBLOCK;
pub const O_NOCTTY: i32 = libc::O_NOCTTY;
pub const O_DIRECTORY: i32 = libc::O_DIRECTORY;
pub const O_CLOEXEC: i32 = libc::O_CLOEXEC;

/// Direct I/O, bypassing the page cache: `O_DIRECT` on Linux and
/// FreeBSD; on macOS a flag of iomark's own that [`open_at`] turns into
/// `fcntl(F_NOCACHE)` on the new descriptor.
#[cfg(not(target_os = "macos"))]
pub const O_DIRECT: i32 = libc::O_DIRECT;
#[cfg(target_os = "macos")]
pub const O_DIRECT: i32 = 0x4000_0000;

/// A handle that only names the file (no reading or writing): `O_PATH`
/// on Linux and FreeBSD; on macOS a read-only open (with `O_NOFOLLOW`, of
/// the link itself: `O_SYMLINK`).
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
pub const O_PATH: i32 = libc::O_PATH;
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
pub const O_PATH: i32 = 0x2000_0000;

/// `flags` as this system's `open(2)` takes them, and whether the new
/// descriptor needs `F_NOCACHE` (macOS direct I/O).
fn native_flags(flags: i32) -> (i32, bool) {
    let mut f = flags | libc::O_CLOEXEC;
    let mut nocache = false;
    if cfg!(target_os = "macos") && f & O_DIRECT != 0 {
        f &= !O_DIRECT;
        nocache = true;
    }
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    if f & O_PATH != 0 {
        f &= !O_PATH;
        #[cfg(target_os = "macos")]
        if f & libc::O_NOFOLLOW != 0 {
            f = (f & !libc::O_NOFOLLOW) | libc::O_SYMLINK;
        }
    }
    (f, nocache)
}

/// Opens `name` in the directory `dir` (or relative to the current
/// directory with [`AT_FDCWD`]) with `open(2)` flags (close-on-exec
/// added); `mode` is used only when creating.
pub fn open_at(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let (native, nocache) = native_flags(flags);
    // SAFETY: a NUL-terminated name; the descriptor returned is owned.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), native, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned here.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    if nocache {
        set_nocache(fd)?;
    }
    Ok(owned)
}

#[cfg(target_os = "macos")]
fn set_nocache(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor just opened.
    if unsafe { libc::fcntl(fd, libc::F_NOCACHE, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "macos"))]
fn set_nocache(_fd: RawFd) -> io::Result<()> {
    Ok(())
}

/// Closes a descriptor this process opened.
pub fn close(fd: RawFd) -> io::Result<()> {
    // SAFETY: closing a descriptor this process opened.
    if unsafe { libc::close(fd) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The identity, type and size of an open descriptor.
pub fn fstat(fd: RawFd) -> io::Result<super::Stat> {
    // SAFETY: borrows the open descriptor for one fstat/statx; the
    // ManuallyDrop never closes it.
    let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    f.metadata().map(|m| stat_of(&m))
}

/// [`fstat`] of what `std::fs` found.
pub fn stat_of(m: &std::fs::Metadata) -> super::Stat {
    use std::os::unix::fs::MetadataExt;
    super::Stat {
        dev: m.dev(),
        ino: m.ino(),
        fmt: m.mode() & super::S_IFMT,
        rdev: m.rdev(),
        size: m.len(),
        nlink: m.nlink(),
        born: m.created().ok(),
    }
}

/// The metadata of `name` in `dir`, not following a final link.
pub fn lstat_at(dir: RawFd, name: &CStr) -> io::Result<super::Stat> {
    // SAFETY: `stat` is plain data, for which all zero bytes are valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat into a stat buffer with a NUL-terminated name.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(super::Stat {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        fmt: st.st_mode as u32 & super::S_IFMT,
        rdev: st.st_rdev as u64,
        size: st.st_size as u64,
        nlink: st.st_nlink as u64,
        born: None,
    })
}

/// Creates the directory `name` in `dir`.
pub fn mkdir_at(dir: RawFd, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: a NUL-terminated name in an open directory.
    if unsafe { libc::mkdirat(dir, name.as_ptr(), mode as libc::mode_t) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Removes `name` from `dir` (an empty directory with `rmdir`) if it is
/// still the file `expect` (device, inode; `fstatat` has no birth time)
/// says, not following a link.
/// Between the look and the removal the name could change (POSIX has no
/// removal by handle); callers hold the directory's handle, so the name
/// is in the directory they checked.
pub fn unlink_at(
    dir: RawFd,
    name: &CStr,
    rmdir: bool,
    expect: Option<super::Ident>,
) -> io::Result<()> {
    if let Some(id) = expect {
        let st = lstat_at(dir, name)?;
        if !id.same(&super::Ident::of(&st)) {
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
    }
    let flags = if rmdir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: a NUL-terminated name in an open directory.
    if unsafe { libc::unlinkat(dir, name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a descriptor opened with `O_NONBLOCK` blocking again.
pub fn set_blocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an open descriptor.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl < 0
        // SAFETY: fcntl on an open descriptor.
        || unsafe { libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK) } < 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `pread(2)`: bytes read, or -1 with the error in errno.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes.
#[inline]
pub unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> isize {
    // SAFETY: the caller vouches for `buf` and `len`.
    unsafe { libc::pread(fd, buf.cast(), len, off as libc::off_t) }
}

/// `pwrite(2)`: bytes written, or -1 with the error in errno.
///
/// # Safety
/// `buf` must be valid for `len` bytes of reads.
#[inline]
pub unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, off: u64) -> isize {
    // SAFETY: the caller vouches for `buf` and `len`.
    unsafe { libc::pwrite(fd, buf.cast(), len, off as libc::off_t) }
}

/// `lseek(fd, off, SEEK_SET)` then `read(2)`.
///
/// # Safety
/// As [`pread`].
#[inline]
pub unsafe fn seek_read(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> isize {
    // SAFETY: a plain call on a descriptor.
    if unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) } < 0 {
        return -1;
    }
    // SAFETY: the caller vouches for `buf` and `len`.
    unsafe { libc::read(fd, buf.cast(), len) }
}

/// `lseek(fd, off, SEEK_SET)` then `write(2)`.
///
/// # Safety
/// As [`pwrite`].
#[inline]
pub unsafe fn seek_write(fd: RawFd, buf: *const u8, len: usize, off: u64) -> isize {
    // SAFETY: a plain call on a descriptor.
    if unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) } < 0 {
        return -1;
    }
    // SAFETY: the caller vouches for `buf` and `len`.
    unsafe { libc::write(fd, buf.cast(), len) }
}

/// `fsync(2)`: 0, or -1 with the error in errno.
pub fn fsync(fd: RawFd) -> isize {
    // SAFETY: a plain call on a descriptor.
    unsafe { libc::fsync(fd) as isize }
}

/// `fdatasync(2)` where the system has it (fsync on macOS, which has
/// none): 0, or -1 with the error in errno.
pub fn fdatasync(fd: RawFd) -> isize {
    #[cfg(target_os = "macos")]
    // SAFETY: a plain call on a descriptor.
    let r = unsafe { libc::fsync(fd) };
    #[cfg(not(target_os = "macos"))]
    // SAFETY: a plain call on a descriptor.
    let r = unsafe { libc::fdatasync(fd) };
    r as isize
}

/// Drops a regular file's clean cached pages (`POSIX_FADV_DONTNEED`).
/// The kernel skips a page (a large folio: many) that something else
/// holds at that instant, and says nothing; where Linux can count a
/// file's cached pages (`cachestat`, 6.5 and later), the drop is asked
/// again, at most three times, while some remain. Another reader of the
/// same file may bring pages back at once: the retries are bounded and
/// do not wait. Elsewhere (no call to drop a file's pages), nothing.
pub fn drop_file_cache(fd: RawFd) {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    for attempt in 0..4 {
        if attempt > 0 {
            // SAFETY: a plain call.
            unsafe { libc::sched_yield() };
        }
        // SAFETY: advisory call on an open descriptor.
        unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
        if cached_pages(fd).is_none_or(|n| n == 0) {
            break;
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    let _ = fd;
}

/// How many of a file's pages are in the page cache (Linux 6.5's
/// `cachestat`); None where the kernel cannot say.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
fn cached_pages(fd: RawFd) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // The range and result of cachestat(2) (include/uapi/linux/mman.h).
        #[repr(C)]
        struct Range {
            off: u64,
            len: u64,
        }
        #[repr(C)]
        #[derive(Default)]
        struct Stat {
            nr_cache: u64,
            nr_dirty: u64,
            nr_writeback: u64,
            nr_evicted: u64,
            nr_recently_evicted: u64,
        }
        // The number every architecture but alpha gives the call.
        const SYS_CACHESTAT: libc::c_long = 451;
        let range = Range { off: 0, len: 0 };
        let mut st = Stat::default();
        // SAFETY: both structures live across the call and have the
        // kernel's layout; len 0 means to the end of the file.
        let r = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                fd,
                &range as *const Range,
                &mut st as *mut Stat,
                0u32,
            )
        };
        (r == 0).then_some(st.nr_cache)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        None
    }
}

/// `ftruncate(2)`: 0, or -1 with the error in errno.
pub fn ftruncate(fd: RawFd, len: u64) -> isize {
    // SAFETY: a plain call on a descriptor.
    unsafe { libc::ftruncate(fd, len as libc::off_t) as isize }
}

/// The size of a memory page.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as u64
    } else {
        4096
    }
}

/// The machine's memory in bytes (0 when unknown).
pub fn ram_bytes() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    {
        // SAFETY: sysconf has no preconditions.
        let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
        if pages <= 0 {
            return 0;
        }
        (pages as u64).saturating_mul(page_size())
    }
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    {
        let mut v: u64 = 0;
        let mut len = std::mem::size_of::<u64>();
        // SAFETY: hw.memsize is a u64; len says how much room there is.
        let r = unsafe {
            libc::sysctlbyname(
                c"hw.memsize".as_ptr(),
                (&mut v as *mut u64).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if r == 0 {
            v
        } else {
            0
        }
    }
}

/// The CPUs online.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}

/// Whether `path` names a raw device only by its syntax (Windows'
/// `\\.\` names); on Unix devices are files like others.
pub fn is_device_path(_path: &std::path::Path) -> bool {
    false
}

/// Windows' whole disks (`\\.\PhysicalDriveN`); none on Unix.
pub fn is_physical_drive(_path: &std::path::Path) -> bool {
    false
}

/// Why writing to a Windows disk or volume would write under a mounted
/// filesystem; on Unix the safety check asks the kernel instead.
pub fn device_in_use(_path: &std::path::Path) -> Option<String> {
    None
}

/// What a Windows disk or volume holds (partitions, a filesystem); on
/// Unix the safety check reads signatures instead.
pub fn device_holds(_path: &std::path::Path) -> Option<String> {
    None
}

/// The calling thread's errno (async-signal-safe).
#[inline]
pub fn errno_location() -> *mut i32 {
    // SAFETY: the C library's per-thread errno location.
    unsafe {
        #[cfg(target_os = "linux")]
        {
            libc::__errno_location()
        }
        #[cfg(any(target_os = "macos", target_os = "freebsd"))]
        {
            libc::__error()
        }
    }
}

/// Stop-signal numbers (for exit codes 128 + N).
pub const SIGINT: i32 = libc::SIGINT;
pub const SIGTERM: i32 = libc::SIGTERM;
pub const SIGHUP: i32 = libc::SIGHUP;
pub const SIGPIPE: i32 = libc::SIGPIPE;

/// Unix error codes are errno values.
pub(super) fn os_code_to_errno(code: i32) -> i32 {
    code
}

pub(super) fn errno_to_os_code(errno: i32) -> i32 {
    errno
}

pub(super) fn calendar_impl(secs: i64, utc: bool) -> Option<super::Calendar> {
    // (time_t by inference: the name is deprecated on musl, whose
    // time_t is 64 bits as here.)
    let t = secs as _;
    // SAFETY: `tm` is plain data, for which all zero bytes are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let r = if utc {
        // SAFETY: gmtime_r writes into the tm it is given.
        unsafe { libc::gmtime_r(&t, &mut tm) }
    } else {
        // SAFETY: localtime_r writes into the tm it is given.
        unsafe { libc::localtime_r(&t, &mut tm) }
    };
    if r.is_null() {
        return None;
    }
    Some(super::Calendar {
        year: tm.tm_year + 1900,
        month: (tm.tm_mon + 1) as u32,
        day: tm.tm_mday as u32,
        hour: tm.tm_hour as u32,
        minute: tm.tm_min as u32,
        second: tm.tm_sec as u32,
        weekday: tm.tm_wday.rem_euclid(7) as u32,
    })
}

/// The extended attribute a mark is kept in: `user.NAME` (Linux,
/// macOS), or NAME in the user namespace (FreeBSD).
fn mark_name(name: &str) -> std::ffi::CString {
    let full = if cfg!(target_os = "freebsd") {
        name.to_string()
    } else {
        format!("user.{name}")
    };
    std::ffi::CString::new(full).unwrap_or_default()
}

/// Sets a small named attribute (`name` is iomark's, e.g. "iomark") on
/// an open file: an extended attribute. False where the filesystem keeps
/// none.
pub fn set_mark(fd: RawFd, name: &str, value: &[u8]) -> bool {
    let n = mark_name(name);
    // SAFETY: an open descriptor, a NUL-terminated name, a value of the
    // length given.
    let r = unsafe {
        #[cfg(target_os = "linux")]
        {
            libc::fsetxattr(fd, n.as_ptr(), value.as_ptr().cast(), value.len(), 0) as isize
        }
        #[cfg(target_os = "macos")]
        {
            libc::fsetxattr(fd, n.as_ptr(), value.as_ptr().cast(), value.len(), 0, 0) as isize
        }
        #[cfg(target_os = "freebsd")]
        {
            let r = libc::extattr_set_fd(
                fd,
                libc::EXTATTR_NAMESPACE_USER,
                n.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
            );
            if r < 0 {
                -1
            } else {
                0
            }
        }
    };
    r == 0
}

/// The attribute [`set_mark`] set, at most `buf.len()` bytes of it.
pub fn get_mark(fd: RawFd, name: &str, buf: &mut [u8]) -> Option<usize> {
    let n = mark_name(name);
    // SAFETY: reads at most buf.len() bytes into buf.
    let r = unsafe {
        #[cfg(target_os = "linux")]
        {
            libc::fgetxattr(fd, n.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
        }
        #[cfg(target_os = "macos")]
        {
            libc::fgetxattr(fd, n.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), 0, 0)
        }
        #[cfg(target_os = "freebsd")]
        {
            libc::extattr_get_fd(
                fd,
                libc::EXTATTR_NAMESPACE_USER,
                n.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        }
    };
    (r > 0).then_some(r as usize)
}

/// [`get_mark`] of the file at `path` (following links).
pub fn get_mark_path(path: &std::path::Path, name: &str, buf: &mut [u8]) -> Option<usize> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let n = mark_name(name);
    // SAFETY: valid NUL-terminated path and name; reads at most
    // buf.len() bytes into buf.
    let r = unsafe {
        #[cfg(target_os = "linux")]
        {
            libc::getxattr(c.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
        }
        #[cfg(target_os = "macos")]
        {
            libc::getxattr(
                c.as_ptr(),
                n.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                0,
                0,
            )
        }
        #[cfg(target_os = "freebsd")]
        {
            libc::extattr_get_file(
                c.as_ptr(),
                libc::EXTATTR_NAMESPACE_USER,
                n.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        }
    };
    (r > 0).then_some(r as usize)
}

/// [`fstat`] of the file at `path` (following a final link when
/// `follow`).
pub fn stat_path(path: &std::path::Path, follow: bool) -> io::Result<super::Stat> {
    let m = if follow {
        std::fs::metadata(path)?
    } else {
        std::fs::symlink_metadata(path)?
    };
    Ok(stat_of(&m))
}

/// The free bytes of the filesystem holding `dir` (statvfs), the blocks
/// reserved for root included: what a writer running as root may still
/// fill (an unprivileged one meets ENOSPC at the reserve).
pub fn free_space(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `statvfs` is plain data, for which all zero bytes are valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs fills the struct for a valid C path.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bfree as u64).saturating_mul(st.f_frsize as u64))
}

/// Whether this process runs under Wine: never on Unix itself.
pub fn under_wine() -> bool {
    false
}
