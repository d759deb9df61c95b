//! The `std::os::unix` extension traits iomark uses, under one name on
//! every system: on Unix they are std's own; on Windows traits of the
//! same names give the same answers from what Windows has (no block or
//! character devices among `std::fs` file types, identities from
//! [`super::stat_path`] where they matter, positioned I/O on handles).

#[cfg(unix)]
pub use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(unix)]
pub use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};

#[cfg(windows)]
pub use self::windows::*;

#[cfg(windows)]
mod windows {
    use std::ffi::{OsStr, OsString};
    use std::io;

    /// `as_bytes`: the encoded bytes of an `OsStr` (UTF-8 for every name
    /// that is valid Unicode).
    pub trait OsStrExt {
        fn as_bytes(&self) -> &[u8];
        fn from_bytes(b: &[u8]) -> &Self;
    }

    impl OsStrExt for OsStr {
        fn as_bytes(&self) -> &[u8] {
            self.as_encoded_bytes()
        }
        fn from_bytes(b: &[u8]) -> &OsStr {
            match std::str::from_utf8(b) {
                Ok(s) => OsStr::new(s),
                // SAFETY: iomark's byte names come from `as_encoded_bytes`.
                Err(_) => unsafe { OsStr::from_encoded_bytes_unchecked(b) },
            }
        }
    }

    pub trait OsStringExt {
        fn from_vec(v: Vec<u8>) -> Self;
    }

    impl OsStringExt for OsString {
        fn from_vec(v: Vec<u8>) -> OsString {
            OsStr::from_bytes(&v).to_os_string()
        }
    }

    /// File types Unix has and `std::fs` on Windows does not show: none
    /// is ever true (disks and volumes are opened by their `\\.\` names,
    /// which [`super::super::is_device_path`] recognises).
    pub trait FileTypeExt {
        fn is_block_device(&self) -> bool;
        fn is_char_device(&self) -> bool;
        fn is_fifo(&self) -> bool;
        fn is_socket(&self) -> bool;
    }

    impl FileTypeExt for std::fs::FileType {
        fn is_block_device(&self) -> bool {
            false
        }
        fn is_char_device(&self) -> bool {
            false
        }
        fn is_fifo(&self) -> bool {
            false
        }
        fn is_socket(&self) -> bool {
            false
        }
    }

    /// The Unix fields of metadata: a mode made of the file type bits
    /// (and 0o644), no devices. Identity (`dev`, `ino`) and the link
    /// count are not in `std::fs::Metadata` on Windows: code that
    /// compares identities or counts links uses [`super::super::fstat`]
    /// on a handle instead (`GetFileInformationByHandle`); here `dev`
    /// and `ino` are 0, and there is no `nlink`, so that no code can take
    /// a made-up count for the file's.
    pub trait MetadataExt {
        fn dev(&self) -> u64;
        fn ino(&self) -> u64;
        fn rdev(&self) -> u64;
        fn mode(&self) -> u32;
        fn size(&self) -> u64;
        fn uid(&self) -> u32;
    }

    impl MetadataExt for std::fs::Metadata {
        fn dev(&self) -> u64 {
            0
        }
        fn ino(&self) -> u64 {
            0
        }
        fn rdev(&self) -> u64 {
            0
        }
        fn mode(&self) -> u32 {
            let t = if self.is_dir() {
                super::super::S_IFDIR
            } else if self.is_symlink() {
                super::super::S_IFLNK
            } else {
                super::super::S_IFREG
            };
            t | if self.permissions().readonly() {
                0o444
            } else {
                0o644
            }
        }
        fn size(&self) -> u64 {
            self.len()
        }
        fn uid(&self) -> u32 {
            0
        }
    }

    /// Positioned reads and writes on a file's handle.
    pub trait FileExt {
        fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
        fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize>;
        fn read_exact_at(&self, mut buf: &mut [u8], mut off: u64) -> io::Result<()> {
            while !buf.is_empty() {
                match self.read_at(buf, off)? {
                    0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                    n => {
                        buf = &mut buf[n..];
                        off += n as u64;
                    }
                }
            }
            Ok(())
        }
        fn write_all_at(&self, mut buf: &[u8], mut off: u64) -> io::Result<()> {
            while !buf.is_empty() {
                match self.write_at(buf, off)? {
                    0 => return Err(io::ErrorKind::WriteZero.into()),
                    n => {
                        buf = &buf[n..];
                        off += n as u64;
                    }
                }
            }
            Ok(())
        }
    }

    impl FileExt for std::fs::File {
        fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
            std::os::windows::fs::FileExt::seek_read(self, buf, off)
        }
        fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
            std::os::windows::fs::FileExt::seek_write(self, buf, off)
        }
    }

    /// `open(2)` flags and mode on `OpenOptions`: the flags iomark uses
    /// take their Windows meaning; the mode has none.
    pub trait OpenOptionsExt {
        fn mode(&mut self, mode: u32) -> &mut Self;
        fn custom_flags(&mut self, flags: i32) -> &mut Self;
    }

    impl OpenOptionsExt for std::fs::OpenOptions {
        fn mode(&mut self, _mode: u32) -> &mut Self {
            self
        }
        fn custom_flags(&mut self, flags: i32) -> &mut Self {
            use windows_sys::Win32::Storage::FileSystem as fs;
            let mut f = 0;
            if flags & super::super::O_DIRECT != 0 {
                f |= fs::FILE_FLAG_NO_BUFFERING;
            }
            if flags & super::super::O_DSYNC != 0 {
                f |= fs::FILE_FLAG_WRITE_THROUGH;
            }
            if flags & super::super::O_NOFOLLOW != 0 {
                f |= fs::FILE_FLAG_OPEN_REPARSE_POINT;
            }
            std::os::windows::fs::OpenOptionsExt::custom_flags(self, f)
        }
    }
}
