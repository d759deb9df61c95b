//! The Windows side of `sys`: descriptors are `HANDLE`s, and the calls
//! the rest of iomark makes are built on the native ones with the same
//! meaning (see the parent module).

use std::ffi::{CStr, OsStr, OsString};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle};
use std::path::{Path, PathBuf};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem as nt;
use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::IO::{DeviceIoControl, IO_STATUS_BLOCK, OVERLAPPED};

mod area;
pub mod console;
mod device;
mod errors;
mod map;
mod proc;

pub use area::{Area, HAS_HUGE_MAPS, HAS_SHM, PRIVATE_MAP_PAST_END};
pub use console::{exit_now, guard_std_streams, on_stop_signals};
pub use device::{device_holds, device_in_use, dio_alignment, is_device_path, is_physical_drive};
pub(super) use errors::{errno_to_os_code, os_code_to_errno};
pub use map::{alloc_granularity, MapAccess, View};
pub use proc::{
    clock_ms, pin_thread, set_mempolicy, set_thread_nice, shell, stdout_fd, wait_on, wake_all,
    wall_ns,
};

/// A descriptor: a `HANDLE`'s value in 32 bits. Kernel handles have 32
/// significant bits on 64-bit Windows (Microsoft documents that they may
/// be truncated and sign-extended, which 32-bit processes rely on), so
/// the rest of iomark keeps one descriptor type, `i32`, on every system.
pub type RawFd = i32;

/// The `HANDLE` a descriptor stands for (sign-extended).
#[inline]
pub fn handle(fd: RawFd) -> HANDLE {
    fd as isize as HANDLE
}

/// The descriptor of a `HANDLE` (its low 32 bits).
#[inline]
pub fn fd_of(h: HANDLE) -> RawFd {
    h as isize as RawFd
}

/// Opens relative to the current directory (`openat`'s `AT_FDCWD`).
pub const AT_FDCWD: RawFd = -100;

// `open(2)` flags with iomark's own values: `open_at` gives them their
// Windows meaning.
pub const O_RDONLY: i32 = 0;
pub const O_WRONLY: i32 = 1;
pub const O_RDWR: i32 = 2;
pub const O_ACCMODE: i32 = 3;
pub const O_CREAT: i32 = 0x40;
pub const O_EXCL: i32 = 0x80;
/// No meaning on Windows (no controlling terminals).
pub const O_NOCTTY: i32 = 0x100;
pub const O_TRUNC: i32 = 0x200;
pub const O_APPEND: i32 = 0x400;
/// No meaning on Windows: a FIFO cannot take a file's place there.
pub const O_NONBLOCK: i32 = 0x800;
/// Write-through (`FILE_FLAG_WRITE_THROUGH`).
pub const O_DSYNC: i32 = 0x1000;
/// Unbuffered I/O (`FILE_FLAG_NO_BUFFERING`): sizes, offsets and buffers
/// aligned to the sector size.
pub const O_DIRECT: i32 = 0x4000;
pub const O_DIRECTORY: i32 = 0x1_0000;
/// Handles are not inherited unless asked: nothing to add.
pub const O_CLOEXEC: i32 = 0;
/// Refuses a symbolic link or junction (or, with `O_PATH`, opens the
/// link itself).
pub const O_NOFOLLOW: i32 = 0x2_0000;
/// Write-through, as `O_DSYNC`.
pub const O_SYNC: i32 = 0x10_1000;
/// A handle that only names the file: attributes, no data.
pub const O_PATH: i32 = 0x20_0000;
/// An asynchronous handle (`FILE_FLAG_OVERLAPPED`), for the windowsaio
/// engine; other handles are synchronous.
pub const O_OVERLAPPED: i32 = 0x1000_0000;
/// The handle may delete the file.
pub const O_DELETE: i32 = 0x2000_0000;

/// Stop-signal numbers, as on Linux (for exit codes 128 + N): Ctrl-C and
/// Ctrl-Break are SIGINT, closing the console or logging off SIGHUP.
pub const SIGINT: i32 = 2;
pub const SIGTERM: i32 = 15;
pub const SIGHUP: i32 = 1;
pub const SIGPIPE: i32 = 13;

/// An owned handle, closed when dropped.
#[derive(Debug)]
pub struct OwnedFd(RawFd);

impl Drop for OwnedFd {
    fn drop(&mut self) {
        // SAFETY: the handle is owned here.
        unsafe { wf::CloseHandle(handle(self.0)) };
    }
}

impl OwnedFd {
    /// Another handle on the same file.
    pub fn try_clone(&self) -> io::Result<OwnedFd> {
        use windows_sys::Win32::System::Threading::GetCurrentProcess;
        let mut out: HANDLE = std::ptr::null_mut();
        // SAFETY: duplicates a handle this process owns.
        let ok = unsafe {
            wf::DuplicateHandle(
                GetCurrentProcess(),
                handle(self.0),
                GetCurrentProcess(),
                &mut out,
                0,
                0,
                wf::DUPLICATE_SAME_ACCESS,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd(fd_of(out)))
    }
}

/// A value holding a descriptor.
pub trait AsRawFd {
    fn as_raw_fd(&self) -> RawFd;
}

/// A value made from a descriptor it then owns.
pub trait FromRawFd {
    /// # Safety
    /// `fd` must be an open handle owned by the caller.
    unsafe fn from_raw_fd(fd: RawFd) -> Self;
}

/// A value giving up its descriptor.
pub trait IntoRawFd {
    fn into_raw_fd(self) -> RawFd;
}

impl AsRawFd for OwnedFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

impl FromRawFd for OwnedFd {
    unsafe fn from_raw_fd(fd: RawFd) -> Self {
        OwnedFd(fd)
    }
}

impl IntoRawFd for OwnedFd {
    fn into_raw_fd(self) -> RawFd {
        let fd = self.0;
        std::mem::forget(self);
        fd
    }
}

impl AsRawFd for std::fs::File {
    fn as_raw_fd(&self) -> RawFd {
        fd_of(self.as_raw_handle())
    }
}

impl FromRawFd for std::fs::File {
    unsafe fn from_raw_fd(fd: RawFd) -> Self {
        // SAFETY: the caller hands over an open handle it owns.
        unsafe { std::fs::File::from_raw_handle(handle(fd)) }
    }
}

impl IntoRawFd for std::fs::File {
    fn into_raw_fd(self) -> RawFd {
        fd_of(self.into_raw_handle())
    }
}

impl From<OwnedFd> for std::fs::File {
    fn from(fd: OwnedFd) -> Self {
        // SAFETY: the handle's ownership moves to the File.
        unsafe { std::fs::File::from_raw_fd(fd.into_raw_fd()) }
    }
}

impl From<std::fs::File> for OwnedFd {
    fn from(f: std::fs::File) -> Self {
        OwnedFd(f.into_raw_fd())
    }
}

/// A name as Windows takes it (UTF-16, NUL-terminated when `nul`).
fn wide(name: &OsStr, nul: bool) -> Vec<u16> {
    let mut w: Vec<u16> = name.encode_wide().collect();
    if nul {
        w.push(0);
    }
    w
}

/// The name a `CStr` holds (bytes of an `OsStr`, as iomark makes them).
pub fn os_name(name: &CStr) -> OsString {
    let b = name.to_bytes();
    match std::str::from_utf8(b) {
        Ok(s) => OsString::from(s),
        // SAFETY: iomark's names are made from `OsStr::as_encoded_bytes`.
        Err(_) => unsafe { OsStr::from_encoded_bytes_unchecked(b) }.to_os_string(),
    }
}

fn nt_error(status: i32) -> io::Error {
    // SAFETY: a pure conversion.
    io::Error::from_raw_os_error(unsafe { wf::RtlNtStatusToDosError(status) } as i32)
}

/// The error a symbolic link meets where none is followed (ELOOP).
fn loop_error() -> io::Error {
    io::Error::from_raw_os_error(wf::ERROR_CANT_RESOLVE_FILENAME as i32)
}

fn last_error_is(code: u32) -> bool {
    // SAFETY: reads the thread's last error.
    unsafe { wf::GetLastError() == code }
}

/// Access rights, and `NtCreateFile` disposition and options for `flags`.
struct Native {
    access: u32,
    disposition: u32,
    options: u32,
}

fn native(flags: i32) -> Native {
    let mut access = fs::FILE_READ_ATTRIBUTES | fs::SYNCHRONIZE;
    if flags & O_PATH == 0 {
        access |= match flags & O_ACCMODE {
            O_WRONLY => fs::FILE_GENERIC_WRITE,
            O_RDWR => fs::FILE_GENERIC_READ | fs::FILE_GENERIC_WRITE,
            _ => fs::FILE_GENERIC_READ,
        };
        if flags & O_APPEND != 0 {
            access &= !fs::FILE_WRITE_DATA;
        }
    }
    if flags & O_DIRECTORY != 0 {
        access |= fs::FILE_LIST_DIRECTORY | fs::FILE_TRAVERSE;
    }
    if flags & O_DELETE != 0 {
        access |= fs::DELETE;
    }
    let create = flags & O_CREAT != 0;
    let disposition = match (create, flags & O_EXCL != 0, flags & O_TRUNC != 0) {
        (true, true, _) => nt::FILE_CREATE,
        (true, false, true) => nt::FILE_OVERWRITE_IF,
        (true, false, false) => nt::FILE_OPEN_IF,
        (false, _, true) => nt::FILE_OVERWRITE,
        (false, _, false) => nt::FILE_OPEN,
    };
    let mut options = 0;
    if flags & O_OVERLAPPED == 0 {
        options |= nt::FILE_SYNCHRONOUS_IO_NONALERT;
    }
    if flags & O_DIRECTORY != 0 {
        options |= nt::FILE_DIRECTORY_FILE;
    } else if flags & O_PATH == 0 {
        options |= nt::FILE_NON_DIRECTORY_FILE;
    }
    if flags & O_DIRECT != 0 {
        options |= nt::FILE_NO_INTERMEDIATE_BUFFERING;
    }
    if flags & O_DSYNC != 0 {
        options |= nt::FILE_WRITE_THROUGH;
    }
    if flags & O_NOFOLLOW != 0 {
        options |= nt::FILE_OPEN_REPARSE_POINT;
    }
    Native {
        access,
        disposition,
        options,
    }
}

/// `NtCreateFile` of `name` relative to the open directory `dir`.
fn nt_open(dir: RawFd, name: &OsStr, n: &Native) -> io::Result<OwnedFd> {
    let w = wide(name, false);
    let bytes = u16::try_from(w.len() * 2)
        .map_err(|_| io::Error::from_raw_os_error(wf::ERROR_FILENAME_EXCED_RANGE as i32))?;
    let us = wf::UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: w.as_ptr() as *mut u16,
    };
    let oa = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: handle(dir),
        ObjectName: &us,
        Attributes: 0,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut h: HANDLE = std::ptr::null_mut();
    // SAFETY: zeroed plain-data status block.
    let mut iosb: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    let share = fs::FILE_SHARE_READ | fs::FILE_SHARE_WRITE | fs::FILE_SHARE_DELETE;
    // SAFETY: every pointer is valid for the call; the handle returned is
    // owned.
    let st = unsafe {
        nt::NtCreateFile(
            &mut h,
            n.access,
            &oa,
            &mut iosb,
            std::ptr::null(),
            fs::FILE_ATTRIBUTE_NORMAL,
            share,
            n.disposition,
            n.options,
            std::ptr::null(),
            0,
        )
    };
    if st < 0 {
        return Err(nt_error(st));
    }
    Ok(OwnedFd(fd_of(h)))
}

/// `CreateFileW` of a path (relative to the current directory or
/// absolute, or a device name such as `\\.\C:`).
fn path_open(path: &OsStr, flags: i32, n: &Native) -> io::Result<OwnedFd> {
    let w = wide(path, true);
    let disposition = match n.disposition {
        nt::FILE_CREATE => fs::CREATE_NEW,
        nt::FILE_OVERWRITE_IF => fs::CREATE_ALWAYS,
        nt::FILE_OPEN_IF => fs::OPEN_ALWAYS,
        nt::FILE_OVERWRITE => fs::TRUNCATE_EXISTING,
        _ => fs::OPEN_EXISTING,
    };
    let mut attrs = fs::FILE_ATTRIBUTE_NORMAL | fs::FILE_FLAG_BACKUP_SEMANTICS;
    if flags & O_OVERLAPPED != 0 {
        attrs |= fs::FILE_FLAG_OVERLAPPED;
    }
    if flags & O_DIRECT != 0 {
        attrs |= fs::FILE_FLAG_NO_BUFFERING;
    }
    if flags & O_DSYNC != 0 {
        attrs |= fs::FILE_FLAG_WRITE_THROUGH;
    }
    if flags & O_NOFOLLOW != 0 {
        attrs |= fs::FILE_FLAG_OPEN_REPARSE_POINT;
    }
    let share = fs::FILE_SHARE_READ | fs::FILE_SHARE_WRITE | fs::FILE_SHARE_DELETE;
    // SAFETY: a NUL-terminated wide path; the handle returned is owned.
    let h = unsafe {
        fs::CreateFileW(
            w.as_ptr(),
            n.access,
            share,
            std::ptr::null(),
            disposition,
            attrs,
            std::ptr::null_mut(),
        )
    };
    if h == wf::INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let fd = OwnedFd(fd_of(h));
    // CreateFileW opens a directory for any request with backup
    // semantics: keep the two kinds apart as NtCreateFile does.
    if !is_device_path(Path::new(path)) {
        let st = fstat(fd.0)?;
        if flags & O_DIRECTORY != 0 && !st.is_dir() {
            return Err(io::Error::from_raw_os_error(wf::ERROR_DIRECTORY as i32));
        }
        if flags & (O_DIRECTORY | O_PATH) == 0 && st.is_dir() {
            return Err(io::Error::from_raw_os_error(
                wf::ERROR_DIRECTORY_NOT_SUPPORTED as i32,
            ));
        }
    }
    Ok(fd)
}

/// Opens `name` in the directory `dir` (or relative to the current
/// directory with [`AT_FDCWD`]) with `open(2)`-style flags (see the
/// constants); `mode` has no meaning on Windows. With `O_NOFOLLOW`, a
/// symbolic link or junction fails with ELOOP unless `O_PATH` asks for
/// the link itself.
pub fn open_at(dir: RawFd, name: &CStr, flags: i32, _mode: u32) -> io::Result<OwnedFd> {
    let n = native(flags);
    let os = os_name(name);
    let fd = if dir == AT_FDCWD {
        path_open(&os, flags, &n)?
    } else {
        nt_open(dir, &os, &n)?
    };
    if flags & O_NOFOLLOW != 0 && flags & O_PATH == 0 && is_link(fd.0) {
        return Err(loop_error());
    }
    Ok(fd)
}

/// Whether the open handle is a symbolic link or junction itself (only
/// possible when it was opened without following it).
fn is_link(fd: RawFd) -> bool {
    reparse_tag(fd).is_some_and(super::is_name_surrogate)
}

/// The reparse tag of the open handle when it is a reparse point itself
/// (`FILE_ATTRIBUTE_REPARSE_POINT`; only seen on a handle opened without
/// following it, `O_NOFOLLOW`): symbolic links, junctions, and the
/// points filters keep (cloud files, deduplication, ...).
pub fn reparse_tag(fd: RawFd) -> Option<u32> {
    // SAFETY: a zeroed plain-data struct filled by the call.
    let mut tag: fs::FILE_ATTRIBUTE_TAG_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: the call fills `tag`, of the size given.
    let ok = unsafe {
        fs::GetFileInformationByHandleEx(
            handle(fd),
            fs::FileAttributeTagInfo,
            (&mut tag as *mut fs::FILE_ATTRIBUTE_TAG_INFO).cast(),
            std::mem::size_of::<fs::FILE_ATTRIBUTE_TAG_INFO>() as u32,
        )
    };
    (ok != 0 && tag.FileAttributes & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0)
        .then_some(tag.ReparseTag)
}

/// What the open handle is when it is a reparse point itself, in words
/// ("a symbolic link (a reparse point)"), or None.
pub fn reparse_point(fd: RawFd) -> Option<String> {
    reparse_tag(fd).map(super::reparse_kind)
}

/// The full path of an open file or directory (`GetFinalPathNameByHandleW`).
pub fn final_path(fd: RawFd) -> Option<PathBuf> {
    let mut buf = vec![0u16; 1024];
    loop {
        // SAFETY: the call writes at most `buf.len()` wide characters.
        let n = unsafe {
            fs::GetFinalPathNameByHandleW(handle(fd), buf.as_mut_ptr(), buf.len() as u32, 0)
        } as usize;
        if n == 0 {
            return None;
        }
        if n < buf.len() {
            return Some(PathBuf::from(OsString::from_wide(&buf[..n])));
        }
        buf.resize(n + 1, 0);
    }
}

/// Closes a handle this process opened.
pub fn close(fd: RawFd) -> io::Result<()> {
    // SAFETY: closing a handle this process opened.
    if unsafe { wf::CloseHandle(handle(fd)) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn filetime(ft: wf::FILETIME) -> Option<std::time::SystemTime> {
    let t = (u64::from(ft.dwHighDateTime) << 32) | u64::from(ft.dwLowDateTime);
    // 100 ns intervals since 1601-01-01.
    const TO_UNIX: u64 = 116_444_736_000_000_000;
    if t < TO_UNIX {
        return None;
    }
    let ns = (t - TO_UNIX) * 100;
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns))
}

/// The identity, type and size of an open handle: the volume serial
/// number and file index of a file or directory; a disk or volume (a
/// block device) by its device number and length.
pub fn fstat(fd: RawFd) -> io::Result<super::Stat> {
    let h = handle(fd);
    // SAFETY: a query on an open handle.
    match unsafe { fs::GetFileType(h) } {
        fs::FILE_TYPE_CHAR => return Ok(special(super::S_IFCHR)),
        fs::FILE_TYPE_PIPE => return Ok(special(super::S_IFIFO)),
        _ => {}
    }
    if let Some(len) = device::length(fd) {
        return Ok(super::Stat {
            dev: 0,
            ino: 0,
            fmt: super::S_IFBLK,
            rdev: device::number(fd).unwrap_or(0),
            size: len,
            nlink: 1,
            born: None,
        });
    }
    // SAFETY: a zeroed plain-data struct filled by the call.
    let mut info: fs::BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the call fills `info` for an open handle.
    if unsafe { fs::GetFileInformationByHandle(h, &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let attrs = info.dwFileAttributes;
    let fmt = if attrs & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0 && is_link(fd) {
        super::S_IFLNK
    } else if attrs & fs::FILE_ATTRIBUTE_DIRECTORY != 0 {
        super::S_IFDIR
    } else {
        super::S_IFREG
    };
    Ok(super::Stat {
        dev: u64::from(info.dwVolumeSerialNumber),
        ino: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        fmt,
        rdev: 0,
        size: (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
        nlink: u64::from(info.nNumberOfLinks),
        // Wine makes the creation time of the Unix file's change time,
        // which every write moves: no birth time there.
        born: if under_wine() {
            None
        } else {
            filetime(info.ftCreationTime)
        },
    })
}

fn special(fmt: u32) -> super::Stat {
    super::Stat {
        dev: 0,
        ino: 0,
        fmt,
        rdev: 0,
        size: 0,
        nlink: 1,
        born: None,
    }
}

/// [`fstat`] of what `std::fs` found: opens `path` to ask (Windows keeps
/// a file's identity in the handle, not in `std::fs::Metadata`).
pub fn stat_path(path: &Path, follow: bool) -> io::Result<super::Stat> {
    let mut flags = O_PATH;
    if !follow {
        flags |= O_NOFOLLOW;
    }
    let c = cname(path)?;
    let fd = open_at(AT_FDCWD, &c, flags, 0)?;
    fstat(fd.0)
}

/// A path as the `CStr` names `open_at` takes.
fn cname(path: &Path) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// The metadata of `name` in `dir`, not following a final link.
pub fn lstat_at(dir: RawFd, name: &CStr) -> io::Result<super::Stat> {
    let fd = open_at(dir, name, O_PATH | O_NOFOLLOW, 0)?;
    fstat(fd.0)
}

/// Creates the directory `name` in `dir`.
pub fn mkdir_at(dir: RawFd, name: &CStr, _mode: u32) -> io::Result<()> {
    let n = Native {
        access: fs::FILE_LIST_DIRECTORY | fs::SYNCHRONIZE,
        disposition: nt::FILE_CREATE,
        options: nt::FILE_DIRECTORY_FILE | nt::FILE_SYNCHRONOUS_IO_NONALERT,
    };
    let os = os_name(name);
    if dir == AT_FDCWD {
        let w = wide(&os, true);
        // SAFETY: a NUL-terminated wide path.
        if unsafe { fs::CreateDirectoryW(w.as_ptr(), std::ptr::null()) } == 0 {
            return Err(io::Error::last_os_error());
        }
        return Ok(());
    }
    nt_open(dir, &os, &n).map(drop)
}

/// Removes `name` from `dir` (an empty directory with `rmdir`), through a
/// handle on it: it is opened without following a link, checked to be
/// the file `expect` (volume, file index, creation time) names, and
/// deleted through that very handle, so nothing else can be removed in
/// its place.
pub fn unlink_at(
    dir: RawFd,
    name: &CStr,
    rmdir: bool,
    expect: Option<super::Ident>,
) -> io::Result<()> {
    let mut n = native(O_PATH | O_NOFOLLOW | O_DELETE);
    n.options |= if rmdir {
        nt::FILE_DIRECTORY_FILE
    } else {
        nt::FILE_NON_DIRECTORY_FILE
    };
    let os = os_name(name);
    let fd = if dir == AT_FDCWD {
        path_open(&os, O_PATH | O_NOFOLLOW | O_DELETE, &n)?
    } else {
        nt_open(dir, &os, &n)?
    };
    if let Some(id) = expect {
        let st = fstat(fd.0)?;
        if !id.same(&super::Ident::of(&st)) {
            // The name is no longer the file checked.
            return Err(super::from_errno(libc::EEXIST));
        }
    }
    delete_open(fd.0)
}

/// Deletes the file or empty directory of an open handle (opened with
/// `O_DELETE`). With POSIX semantics (`FileDispositionInfoEx`, Windows 10
/// 1709 and later on NTFS) its name goes at once, as `unlink` removes
/// it, while handles on it stay usable, so that its parent directory is
/// empty when it is removed next; elsewhere it is marked for deletion
/// and goes when its last handle closes.
pub fn delete_open(fd: RawFd) -> io::Result<()> {
    let ex = fs::FILE_DISPOSITION_INFO_EX {
        Flags: fs::FILE_DISPOSITION_FLAG_DELETE | fs::FILE_DISPOSITION_FLAG_POSIX_SEMANTICS,
    };
    // SAFETY: a plain-data struct of the size given.
    let ok = unsafe {
        fs::SetFileInformationByHandle(
            handle(fd),
            fs::FileDispositionInfoEx,
            (&ex as *const fs::FILE_DISPOSITION_INFO_EX).cast(),
            std::mem::size_of::<fs::FILE_DISPOSITION_INFO_EX>() as u32,
        )
    };
    if ok != 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let unsupported = [
        wf::ERROR_INVALID_PARAMETER,
        wf::ERROR_NOT_SUPPORTED,
        wf::ERROR_INVALID_FUNCTION,
    ];
    if !unsupported
        .iter()
        .any(|c| e.raw_os_error() == Some(*c as i32))
    {
        return Err(e);
    }
    let info = fs::FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: a plain-data struct of the size given.
    let ok = unsafe {
        fs::SetFileInformationByHandle(
            handle(fd),
            fs::FileDispositionInfo,
            (&info as *const fs::FILE_DISPOSITION_INFO).cast(),
            std::mem::size_of::<fs::FILE_DISPOSITION_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Nothing to do: handles are never opened non-blocking on Windows.
pub fn set_blocking(_fd: RawFd) -> io::Result<()> {
    Ok(())
}

/// One positioned transfer on a synchronous handle: bytes moved, or -1
/// with the error in the thread's last error. Reading at or past the end
/// moves 0 bytes, as `pread` does.
///
/// # Safety
/// `buf` must be valid for `len` bytes (of writes when reading, of reads
/// when writing) until the call returns.
unsafe fn transfer(fd: RawFd, buf: *mut u8, len: usize, off: Option<u64>, write: bool) -> isize {
    let len = len.min(u32::MAX as usize & !4095) as u32;
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    let ovp = match off {
        Some(o) => {
            ov.Anonymous.Anonymous.Offset = o as u32;
            ov.Anonymous.Anonymous.OffsetHigh = (o >> 32) as u32;
            &mut ov as *mut OVERLAPPED
        }
        None => std::ptr::null_mut(),
    };
    let mut done: u32 = 0;
    // SAFETY: the caller vouches for `buf` and `len`; `done` and the
    // OVERLAPPED live until the synchronous call returns.
    let ok = unsafe {
        if write {
            fs::WriteFile(handle(fd), buf, len, &mut done, ovp)
        } else {
            fs::ReadFile(handle(fd), buf, len, &mut done, ovp)
        }
    };
    if ok == 0 {
        if !write && last_error_is(wf::ERROR_HANDLE_EOF) {
            return 0;
        }
        return -1;
    }
    done as isize
}

/// `pread`: bytes read, or -1 with the error in the last error.
///
/// # Safety
/// `buf` must be valid for `len` bytes of writes.
#[inline]
pub unsafe fn pread(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> isize {
    // SAFETY: the caller keeps this function's contract, which is transfer's.
    unsafe { transfer(fd, buf, len, Some(off), false) }
}

/// `pwrite`: bytes written, or -1 with the error in the last error.
///
/// # Safety
/// `buf` must be valid for `len` bytes of reads.
#[inline]
pub unsafe fn pwrite(fd: RawFd, buf: *const u8, len: usize, off: u64) -> isize {
    // SAFETY: the caller keeps this function's contract; a write only
    // reads the buffer.
    unsafe { transfer(fd, buf as *mut u8, len, Some(off), true) }
}

/// Moves the file pointer, then reads at it (the `sync` engine).
///
/// # Safety
/// As [`pread`].
#[inline]
pub unsafe fn seek_read(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> isize {
    // SAFETY: a plain call on a handle (no new position asked back).
    if unsafe { fs::SetFilePointerEx(handle(fd), off as i64, std::ptr::null_mut(), fs::FILE_BEGIN) }
        == 0
    {
        return -1;
    }
    // SAFETY: the caller keeps this function's contract, which is transfer's.
    unsafe { transfer(fd, buf, len, None, false) }
}

/// Moves the file pointer, then writes at it.
///
/// # Safety
/// As [`pwrite`].
#[inline]
pub unsafe fn seek_write(fd: RawFd, buf: *const u8, len: usize, off: u64) -> isize {
    // SAFETY: a plain call on a handle (no new position asked back).
    if unsafe { fs::SetFilePointerEx(handle(fd), off as i64, std::ptr::null_mut(), fs::FILE_BEGIN) }
        == 0
    {
        return -1;
    }
    // SAFETY: the caller keeps this function's contract; a write only
    // reads the buffer.
    unsafe { transfer(fd, buf as *mut u8, len, None, true) }
}

/// Windows has no call to drop a file's cached pages (the page-cache
/// warnings say so): nothing.
pub fn drop_file_cache(_fd: RawFd) {}

/// `FlushFileBuffers`: 0, or -1 with the error in the last error.
pub fn fsync(fd: RawFd) -> isize {
    // SAFETY: a plain call on a handle.
    if unsafe { fs::FlushFileBuffers(handle(fd)) } == 0 {
        -1
    } else {
        0
    }
}

/// As [`fsync`]: Windows flushes data and metadata alike.
pub fn fdatasync(fd: RawFd) -> isize {
    fsync(fd)
}

/// Sets the end of the file: 0, or -1 with the error in the last error.
pub fn ftruncate(fd: RawFd, len: u64) -> isize {
    let info = fs::FILE_END_OF_FILE_INFO {
        EndOfFile: len as i64,
    };
    // SAFETY: a plain-data struct of the size given.
    let ok = unsafe {
        fs::SetFileInformationByHandle(
            handle(fd),
            fs::FileEndOfFileInfo,
            (&info as *const fs::FILE_END_OF_FILE_INFO).cast(),
            std::mem::size_of::<fs::FILE_END_OF_FILE_INFO>() as u32,
        )
    };
    if ok == 0 {
        -1
    } else {
        0
    }
}

fn system_info() -> windows_sys::Win32::System::SystemInformation::SYSTEM_INFO {
    // SAFETY: GetSystemInfo fills the zeroed struct.
    let mut si = unsafe { std::mem::zeroed() };
    // SAFETY: GetSystemInfo fills the struct it is given.
    unsafe { windows_sys::Win32::System::SystemInformation::GetSystemInfo(&mut si) };
    si
}

/// The size of a memory page.
pub fn page_size() -> u64 {
    u64::from(system_info().dwPageSize).max(4096)
}

/// The machine's memory in bytes (0 when unknown).
pub fn ram_bytes() -> u64 {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: the struct's length is set as the call requires.
    let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: the call fills `m`, whose length field is set.
    if unsafe { GlobalMemoryStatusEx(&mut m) } == 0 {
        return 0;
    }
    m.ullTotalPhys
}

/// The CPUs online.
pub fn online_cpus() -> usize {
    (system_info().dwNumberOfProcessors as usize).max(1)
}

/// A small named attribute of an open file (`name` is iomark's, e.g.
/// "iomark"): an NTFS alternate data stream `FILE:NAME`, opened relative
/// to the file's own handle. False where the filesystem keeps none.
pub fn set_mark(fd: RawFd, name: &str, value: &[u8]) -> bool {
    let stream = OsString::from(format!(":{name}"));
    let mut n = native(O_WRONLY | O_CREAT | O_TRUNC);
    n.options &= !nt::FILE_NON_DIRECTORY_FILE;
    let Ok(s) = nt_open(fd, &stream, &n) else {
        return false;
    };
    // SAFETY: a buffer of value.len() bytes.
    unsafe {
        transfer(s.0, value.as_ptr() as *mut u8, value.len(), Some(0), true) == value.len() as isize
    }
}

/// The attribute [`set_mark`] wrote, at most `buf.len()` bytes of it.
pub fn get_mark(fd: RawFd, name: &str, buf: &mut [u8]) -> Option<usize> {
    let stream = OsString::from(format!(":{name}"));
    let mut n = native(O_RDONLY);
    n.options &= !nt::FILE_NON_DIRECTORY_FILE;
    let s = nt_open(fd, &stream, &n).ok()?;
    // SAFETY: a buffer of buf.len() bytes.
    let r = unsafe { transfer(s.0, buf.as_mut_ptr(), buf.len(), Some(0), false) };
    (r > 0).then_some(r as usize)
}

/// [`get_mark`] of the file at `path`.
pub fn get_mark_path(path: &Path, name: &str, buf: &mut [u8]) -> Option<usize> {
    let c = cname(path).ok()?;
    let fd = open_at(AT_FDCWD, &c, O_RDONLY | O_NOFOLLOW, 0).ok()?;
    get_mark(fd.0, name, buf)
}

/// The broken-down time of `secs` since the epoch.
pub(super) fn calendar_impl(secs: i64, utc: bool) -> Option<super::Calendar> {
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: localtime_s/gmtime_s fill the zeroed tm.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let r = if utc {
        // SAFETY: gmtime_s fills the tm it is given.
        unsafe { libc::gmtime_s(&mut tm, &t) }
    } else {
        // SAFETY: localtime_s fills the tm it is given.
        unsafe { libc::localtime_s(&mut tm, &t) }
    };
    if r != 0 {
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

/// Issues a device I/O control returning a plain-data `T`.
fn ioctl_out<T: Copy>(fd: RawFd, code: u32, input: &[u8]) -> Option<T> {
    // SAFETY: T is plain data; the call writes at most size_of::<T>().
    let mut out: T = unsafe { std::mem::zeroed() };
    let mut got = 0u32;
    // SAFETY: `out` is writable for size_of::<T>() bytes and `got` lives
    // until the synchronous call returns.
    let ok = unsafe {
        DeviceIoControl(
            handle(fd),
            code,
            input.as_ptr().cast(),
            input.len() as u32,
            (&mut out as *mut T).cast(),
            std::mem::size_of::<T>() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(out)
}

/// The current directory joined with `p` where `p` is relative.
pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Wide-string helpers for the device module.
fn from_wide(w: &[u16]) -> OsString {
    let end = w.iter().position(|c| *c == 0).unwrap_or(w.len());
    OsString::from_wide(&w[..end])
}

/// The performance counter in nanoseconds (`QueryPerformanceCounter`,
/// the high-resolution clock; its frequency read once).
pub fn mono_ns() -> u64 {
    use std::sync::OnceLock;
    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };
    static FREQ: OnceLock<u64> = OnceLock::new();
    let freq = *FREQ.get_or_init(|| {
        let mut f = 0i64;
        // SAFETY: writes one i64.
        unsafe { QueryPerformanceFrequency(&mut f) };
        (f as u64).max(1)
    });
    let mut c = 0i64;
    // SAFETY: writes one i64.
    unsafe { QueryPerformanceCounter(&mut c) };
    ((c as u64 as u128) * 1_000_000_000 / freq as u128) as u64
}

/// The calling thread's user and kernel CPU time in microseconds
/// (`GetThreadTimes`).
pub fn thread_times_us() -> (u64, u64) {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let z = wf::FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (z, z, z, z);
    // SAFETY: four FILETIMEs written by the call on this thread's
    // pseudo-handle.
    if unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) } == 0 {
        return (0, 0);
    }
    let t =
        |f: wf::FILETIME| ((u64::from(f.dwHighDateTime) << 32) | u64::from(f.dwLowDateTime)) / 10;
    (t(u), t(k))
}

/// Committed, zeroed read-write pages (`VirtualAlloc`).
pub fn map_anon(len: usize) -> io::Result<*mut u8> {
    use windows_sys::Win32::System::Memory as m;
    // SAFETY: a new allocation; checked below.
    let p = unsafe {
        m::VirtualAlloc(
            std::ptr::null(),
            len,
            m::MEM_COMMIT | m::MEM_RESERVE,
            m::PAGE_READWRITE,
        )
    };
    if p.is_null() {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

/// Releases pages from [`map_anon`].
///
/// # Safety
/// `p` must come from [`map_anon`] and not be used afterwards.
pub unsafe fn unmap(p: *mut u8, _len: usize) {
    use windows_sys::Win32::System::Memory as m;
    // SAFETY: the caller hands back a mapping of map_anon's.
    unsafe { m::VirtualFree(p.cast(), 0, m::MEM_RELEASE) };
}

/// Pins pages in memory (`VirtualLock`).
pub fn lock(p: *mut u8, len: usize) -> io::Result<()> {
    use windows_sys::Win32::System::Memory as m;
    // SAFETY: pages this process mapped.
    if unsafe { m::VirtualLock(p.cast(), len) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The bytes the user may still write on the volume holding `dir`
/// (`GetDiskFreeSpaceExW`).
pub fn free_space(dir: &Path) -> Option<u64> {
    let w = wide(dir.as_os_str(), true);
    let mut avail = 0u64;
    // SAFETY: a NUL-terminated wide path; one u64 written.
    let ok = unsafe {
        fs::GetDiskFreeSpaceExW(
            w.as_ptr(),
            &mut avail,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(avail)
}

/// The volume holding `path`: its filesystem's name ("NTFS", "ReFS",
/// "FAT32"…) and its root (`C:\`, or a mount folder), from
/// `GetVolumePathNameW` and `GetVolumeInformationByHandleW` (through a
/// handle on `path` itself: the volume's device is not opened, which
/// needs a privilege).
pub fn volume_of(path: &Path) -> Option<(String, PathBuf)> {
    use std::os::windows::fs::OpenOptionsExt;
    let w = wide(path.as_os_str(), true);
    let mut root = [0u16; 1024];
    // SAFETY: a NUL-terminated wide path; at most root.len() units written.
    if unsafe { fs::GetVolumePathNameW(w.as_ptr(), root.as_mut_ptr(), root.len() as u32) } == 0 {
        return None;
    }
    // Directories too (backup semantics); no access asked but attributes.
    let f = std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(fs::FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    let mut name = [0u16; 64];
    // SAFETY: an open handle; the other outputs are not asked for.
    let ok = unsafe {
        fs::GetVolumeInformationByHandleW(
            f.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            name.as_mut_ptr(),
            name.len() as u32,
        )
    };
    let text = |b: &[u16]| {
        let n = b.iter().position(|c| *c == 0).unwrap_or(b.len());
        OsString::from_wide(&b[..n])
    };
    let fs_name = text(&name).to_string_lossy().into_owned();
    // The root as users write it: without the \\?\ of a canonical path.
    let root = text(&root).to_string_lossy().into_owned();
    let root = match root.strip_prefix(r"\\?\") {
        Some(r) => r
            .strip_prefix(r"UNC\")
            .map_or_else(|| r.to_string(), |u| format!(r"\\{u}")),
        None => root,
    };
    (ok != 0 && !fs_name.is_empty()).then(|| (fs_name, PathBuf::from(root)))
}

/// Whether this process runs under Wine (its ntdll exports
/// `wine_get_version`): figures measured there are Linux's, not
/// Windows'.
pub fn under_wine() -> bool {
    use std::sync::OnceLock;
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
    static WINE: OnceLock<bool> = OnceLock::new();
    *WINE.get_or_init(|| {
        // SAFETY: NUL-terminated names; ntdll is always loaded.
        unsafe {
            let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
            !ntdll.is_null() && GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast()).is_some()
        }
    })
}
