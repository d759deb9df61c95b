//! The operating system underneath, in one place: file handles, opening
//! a name relative to a directory's handle, a file's identity, removal
//! by handle, positioned I/O, syncs, errno values, the machine's memory
//! and CPUs, randomness.
//!
//! On Unix (Linux, macOS, FreeBSD) these are the system calls themselves
//! (`openat`, `fstat`, `unlinkat`, `pread`, ...), under the names the
//! rest of iomark already uses. On Windows they are built on the native
//! calls with the same meaning: a descriptor is a `HANDLE`; `open_at`
//! opens a name relative to a directory's handle with `NtCreateFile`
//! (the `openat` of Windows), `O_DIRECT` is unbuffered I/O
//! (`FILE_FLAG_NO_BUFFERING`), `O_SYNC`/`O_DSYNC` write-through,
//! `O_NOFOLLOW` refuses a symbolic link or junction; a file's identity
//! is its volume serial number and file index; a file is removed through
//! a handle on it, after checking that it is the file meant; Windows
//! error codes become the errno values fio reports (`err=`).
//!
//! This module imports nothing from the rest of iomark, so every layer
//! (the job language included) may use it.

use std::io;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

pub mod ext;
pub mod names;

#[cfg(target_os = "linux")]
pub mod blkid;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use self::windows::*;

/// The operating system's name as messages give it ("Linux",
/// "Windows", "macOS", "FreeBSD").
pub const OS_NAME: &str = if cfg!(target_os = "linux") {
    "Linux"
} else if cfg!(windows) {
    "Windows"
} else if cfg!(target_os = "macos") {
    "macOS"
} else if cfg!(target_os = "freebsd") {
    "FreeBSD"
} else {
    std::env::consts::OS
};

/// A stop request as the stop handler sees it: a signal (Unix), or a
/// console control event (Windows: Ctrl-C and Ctrl-Break as SIGINT, the
/// console closed, log-off and shutdown as SIGHUP).
#[derive(Clone, Copy, Debug)]
pub struct StopEvent {
    pub sig: i32,
    /// The process sent the signal to itself (`kill`, `raise`: a SIGPIPE
    /// of one of its own writes).
    pub from_self: bool,
    /// The system ends the process once the handler returns.
    pub closing: bool,
}

/// A stop handler ([`on_stop_signals`]); on Unix it runs in signal
/// context and must be async-signal-safe.
pub type StopHandler = fn(StopEvent);

/// Why a System V shared memory segment could not be had.
#[derive(Debug)]
pub enum ShmError {
    /// Getting the segment (`shmget`) failed.
    Get(io::Error),
    /// Attaching it (`shmat`) failed.
    Attach(io::Error),
}

/// File type bits of [`Stat::fmt`], with the values POSIX gives them on
/// every platform (so that a type has one name in messages).
pub const S_IFMT: u32 = 0o170000;
pub const S_IFSOCK: u32 = 0o140000;
pub const S_IFLNK: u32 = 0o120000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFBLK: u32 = 0o060000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFCHR: u32 = 0o020000;
pub const S_IFIFO: u32 = 0o010000;

/// What is known of an open file: where it lives and who it is, its type
/// and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The device (Unix) or volume serial number (Windows) holding it.
    pub dev: u64,
    /// The inode (Unix) or file index (Windows).
    pub ino: u64,
    /// The type: one of the `S_IF*` values.
    pub fmt: u32,
    /// For a device, which device it stands for.
    pub rdev: u64,
    pub size: u64,
    pub nlink: u64,
    /// When the file was created, where the filesystem records it.
    pub born: Option<std::time::SystemTime>,
}

impl Stat {
    pub fn is_file(&self) -> bool {
        self.fmt == S_IFREG
    }
    pub fn is_dir(&self) -> bool {
        self.fmt == S_IFDIR
    }
    pub fn is_symlink(&self) -> bool {
        self.fmt == S_IFLNK
    }
    pub fn is_block_device(&self) -> bool {
        self.fmt == S_IFBLK
    }
    pub fn is_char_device(&self) -> bool {
        self.fmt == S_IFCHR
    }
    pub fn is_fifo(&self) -> bool {
        self.fmt == S_IFIFO
    }
    pub fn is_socket(&self) -> bool {
        self.fmt == S_IFSOCK
    }
    pub fn len(&self) -> u64 {
        self.size
    }
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
}

/// Who a file is, as a removal by name checks it: the device (volume
/// serial number) and inode (file index) holding it, and its birth time
/// where the filesystem records one (an inode number or file index freed
/// by a deletion can be the next new file's; the birth time tells them
/// apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub dev: u64,
    pub ino: u64,
    pub born: Option<std::time::SystemTime>,
}

impl Ident {
    pub fn of(st: &Stat) -> Ident {
        Ident {
            dev: st.dev,
            ino: st.ino,
            born: st.born,
        }
    }

    /// Whether `other` is the same file: the same device and inode, and
    /// the same birth time where both know it.
    pub fn same(&self, other: &Ident) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
            && match (self.born, other.born) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// A device and inode alone (no birth time known).
impl From<(u64, u64)> for Ident {
    fn from((dev, ino): (u64, u64)) -> Ident {
        Ident {
            dev,
            ino,
            born: None,
        }
    }
}

/// Whether a Windows reparse tag is a name surrogate: the point stands
/// for another file or directory (symbolic links, junctions).
pub fn is_name_surrogate(tag: u32) -> bool {
    tag & 0x2000_0000 != 0
}

/// A Windows reparse point in words, from its tag: "a symbolic link (a
/// reparse point)", "a junction (a reparse point)", or "a reparse point
/// (tag 0x9000001A)" for the points filters keep (cloud files,
/// deduplication, ...).
pub fn reparse_kind(tag: u32) -> String {
    match tag {
        0xA000_000C => "a symbolic link (a reparse point)".into(),
        0xA000_0003 => "a junction (a reparse point)".into(),
        0x8000_001B => "an app execution alias (a reparse point)".into(),
        t if is_name_surrogate(t) => format!("a link (a reparse point, tag {t:#010X})"),
        t => format!("a reparse point (tag {t:#010X})"),
    }
}

/// The errno a failed call stands for (what a job reports as `err=`):
/// the error's own code on Unix, the POSIX equivalent of a Windows
/// error; EIO when there is none.
pub fn errno(e: &io::Error) -> i32 {
    errno_of(e).unwrap_or(libc::EIO)
}

/// The system's text for an error, without the " (os error N)" that
/// `io::Error` appends ("No space left on device"). The one place that
/// turns an errno into words.
pub fn error_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The system's text for an errno ("Success" for 0).
pub fn errno_text(errno: i32) -> String {
    if errno == 0 {
        return "Success".into();
    }
    error_text(&from_errno(errno))
}

/// [`errno`] without the EIO default.
pub fn errno_of(e: &io::Error) -> Option<i32> {
    let raw = e.raw_os_error()?;
    Some(os_code_to_errno(raw))
}

/// The errno of the last failed system call.
pub fn last_errno() -> i32 {
    errno(&io::Error::last_os_error())
}

/// An error standing for `errno` (its message in this system's words).
pub fn from_errno(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno_to_os_code(errno))
}

/// Bytes done, or `-errno` of the last failed call when `r` is negative
/// (the engines' result convention).
#[inline]
pub fn ret_or_errno(r: isize) -> i64 {
    if r < 0 {
        -(last_errno() as i64)
    } else {
        r as i64
    }
}

/// A device number as (major, minor): Linux's encoding; elsewhere the
/// high and low halves (device numbers only name devices on Linux in
/// iomark's messages and probing).
pub fn major_minor(rdev: u64) -> (u32, u32) {
    #[cfg(target_os = "linux")]
    {
        (libc::major(rdev), libc::minor(rdev))
    }
    #[cfg(not(target_os = "linux"))]
    {
        ((rdev >> 32) as u32, rdev as u32)
    }
}

/// Fills `buf` with random bytes from the system (a seed for tokens,
/// not for keys).
pub fn random_bytes(buf: &mut [u8]) {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the system's randomness once per
    // process and per new state.
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        let v = h.finish().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

/// The local time of `secs` since the epoch broken down (`utc`: in
/// UTC), as `localtime_r`/`gmtime_r` give it.
pub fn calendar(secs: i64, utc: bool) -> Option<Calendar> {
    calendar_impl(secs, utc)
}

/// A broken-down time (see [`calendar`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calendar {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Days since Sunday.
    pub weekday: u32,
}

/// -1, with "operation not supported" as the last error: what a call
/// this system does not have (a Linux ioctl) answers.
pub fn not_supported() -> i32 {
    let e = from_errno(libc::EOPNOTSUPP);
    #[cfg(unix)]
    // SAFETY: the calling thread's errno.
    unsafe {
        *errno_location() = e.raw_os_error().unwrap_or(libc::EOPNOTSUPP)
    };
    #[cfg(windows)]
    // SAFETY: sets the calling thread's last error.
    unsafe {
        windows_sys::Win32::Foundation::SetLastError(e.raw_os_error().unwrap_or(50) as u32)
    };
    -1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_values_round_trip_through_errors() {
        for e in [
            libc::ENOENT,
            libc::EEXIST,
            libc::EACCES,
            libc::EINVAL,
            libc::ENOSPC,
            libc::ELOOP,
            libc::ENOTDIR,
            libc::EISDIR,
            libc::EBUSY,
            libc::EROFS,
        ] {
            assert_eq!(errno(&from_errno(e)), e, "{e}");
        }
        assert_eq!(errno(&io::Error::other("x")), libc::EIO);
    }

    #[test]
    fn reparse_points_in_words() {
        assert_eq!(
            reparse_kind(0xA000_000C),
            "a symbolic link (a reparse point)"
        );
        assert_eq!(reparse_kind(0xA000_0003), "a junction (a reparse point)");
        assert_eq!(
            reparse_kind(0x9000_001A),
            "a reparse point (tag 0x9000001A)"
        );
        assert_eq!(
            reparse_kind(0xA000_001D),
            "a link (a reparse point, tag 0xA000001D)"
        );
        assert!(is_name_surrogate(0xA000_000C) && is_name_surrogate(0xA000_0003));
        assert!(!is_name_surrogate(0x8000_0013) && !is_name_surrogate(0x9000_001A));
    }

    #[test]
    fn an_identity_with_a_birth_time_is_another_file_when_it_differs() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let a = Ident {
            dev: 1,
            ino: 7,
            born: Some(t),
        };
        // The index of a deleted file given to a new one: another file.
        let b = Ident {
            born: Some(t + std::time::Duration::from_nanos(100)),
            ..a
        };
        assert!(a.same(&a) && !a.same(&b));
        // Where one side knows no birth time, device and inode decide.
        assert!(a.same(&Ident::from((1, 7))) && !a.same(&Ident::from((1, 8))));
    }

    #[test]
    fn random_bytes_differ() {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        random_bytes(&mut a);
        random_bytes(&mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn the_epoch_in_utc() {
        let c = calendar(0, true).unwrap();
        assert_eq!((c.year, c.month, c.day, c.hour), (1970, 1, 1, 0));
        assert_eq!(c.weekday, 4);
        let c = calendar(1_700_000_000, true).unwrap();
        assert_eq!((c.year, c.month, c.day), (2023, 11, 14));
        assert_eq!((c.hour, c.minute, c.second), (22, 13, 20));
    }
}
