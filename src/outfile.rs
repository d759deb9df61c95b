//! Opening the files iomark writes besides its targets — reports,
//! `--output`, log files, traces (`write_iolog`), `verify_dump` files,
//! charts — so that nothing is ever written through a link or a hard
//! link planted to make iomark overwrite someone else's file.
//!
//! - A name the user gave, opened when the command starts
//!   ([`Named::User`]: `--output`, the reports of `quick`, `suite`,
//!   `sweep`, `report`, `compare`): a link there is followed only to a
//!   terminal, a pipe or a device, or to one of the process's own
//!   descriptors (`--output=/dev/stdout`), never to a regular file; the
//!   file is held open from then on, so nothing planted during the run
//!   can redirect the writes.
//! - A name iomark makes up or opens during a run ([`Named::Iomark`]:
//!   logs, traces, dumps, charts, fresh report names): never through a
//!   link (`O_NOFOLLOW`), never a device or FIFO.
//! - Either way, never into a regular file with other hard links (the
//!   link count of the open file: `fstat`, `GetFileInformationByHandle`
//!   on Windows), nor through a reparse point of another kind (Windows).
//! - On Windows, a name Windows keeps for a device ([`crate::sys::names`]:
//!   `COM1`, `con.txt`, `nul.dat`) is refused, in the file's name or in a
//!   directory's; `NUL` itself is the null device, which discards what is
//!   written, as `/dev/null` does on Unix.
//!
//! Either way a missing file is created exclusively (`O_CREAT|O_EXCL`)
//! in its directory's handle, and an existing file is only truncated by
//! the first write ([`OutFile::truncate_once`]), through the descriptor.
//! [`OutFile::remove`] removes what was opened only while its name still
//! is that file.

use crate::sys::ext::OsStrExt;
use crate::sys::{AsRawFd, OwnedFd};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::path::Path;

/// Who named an output file (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    User,
    Iomark,
}

/// An output file held open, with what is needed to remove it safely.
#[derive(Debug)]
pub struct OutFile {
    pub file: File,
    pub name: OutName,
    /// Still to be truncated before the first write.
    pending_truncate: bool,
}

/// Where an output file is and which file it is: enough to remove it
/// later through its directory's handle, and only it.
#[derive(Debug)]
pub struct OutName {
    /// The handle of its directory and its name there (None for a file
    /// reached through a link the user named: never removed).
    at: Option<(OwnedFd, CString)>,
    /// Who the file opened is (device, inode, birth time).
    id: crate::sys::Ident,
    /// The open created it.
    pub created: bool,
    /// A regular file (not a device, FIFO or /proc file).
    pub regular: bool,
}

fn other(msg: String) -> io::Error {
    io::Error::other(msg)
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn open_at(dir: i32, name: &CString, flags: i32) -> io::Result<File> {
    crate::sys::open_at(dir, name, flags, 0o644).map(File::from)
}

/// Opens `path` for writing (see the module documentation); `append`
/// keeps what is there and writes at its end.
pub fn open(path: &Path, named: Named, append: bool) -> io::Result<OutFile> {
    #[cfg(windows)]
    if let Some(r) = crate::sys::names::reserved_in(path) {
        if r.is_null_device() {
            return null_device();
        }
        return Err(other(format!(
            "{}; name the file otherwise (NUL alone discards the output)",
            r.reason()
        )));
    }
    let dir_path = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = match path.file_name() {
        Some(n) => cstr(n.as_bytes())?,
        None => return Err(other(format!("'{}' names no file", path.display()))),
    };
    let dir_c = cstr(dir_path.as_os_str().as_bytes())?;
    let dir = open_at(
        crate::sys::AT_FDCWD,
        &dir_c,
        crate::sys::O_PATH | crate::sys::O_DIRECTORY,
    )?;
    let dir = OwnedFd::from(dir);
    let dfd = dir.as_raw_fd();
    let mode = crate::sys::O_WRONLY | crate::sys::O_NONBLOCK | crate::sys::O_NOCTTY;
    let append_flag = if append { crate::sys::O_APPEND } else { 0 };
    match open_at(
        dfd,
        &name,
        mode | append_flag | crate::sys::O_CREAT | crate::sys::O_EXCL | crate::sys::O_NOFOLLOW,
    ) {
        Ok(file) => return finish(file, Some((dir, name)), true, append),
        Err(e) if crate::sys::errno_of(&e) != Some(libc::EEXIST) => return Err(e),
        Err(_) => {}
    }
    // Something is there.
    let link = match open_at(dfd, &name, mode | append_flag | crate::sys::O_NOFOLLOW) {
        Ok(file) => return existing(file, Some((dir, name)), named, append, path),
        Err(e) if crate::sys::errno_of(&e) == Some(libc::ELOOP) => true,
        Err(e) => return Err(e),
    };
    if link && named == Named::Iomark {
        return Err(other(
            "it is a symbolic link, and iomark writes its files only where no link is".into(),
        ));
    }
    // A link the user named, as it is now: followed to a terminal, a pipe
    // or a device (`/dev/stdout`), or to one of this process's own
    // descriptors; never to a regular file, which a link planted there
    // would make iomark overwrite. Never removed.
    let file = open_at(dfd, &name, mode | append_flag)?;
    if file.metadata()?.is_file() && !own_descriptor(dfd, &name) {
        return Err(other(format!(
            "'{}' is a symbolic link to a regular file; name the file itself (iomark does not \
             write regular files through links)",
            path.display()
        )));
    }
    existing(file, None, named, append, path)
}

/// Windows' null device (`NUL`): what is written is discarded; nothing
/// is created, truncated or removed.
#[cfg(windows)]
fn null_device() -> io::Result<OutFile> {
    let c = cstr(br"\\.\NUL")?;
    let file = open_at(crate::sys::AT_FDCWD, &c, crate::sys::O_WRONLY)?;
    // No `metadata()`: a character device has none to give (Wine answers
    // "invalid parameter").
    Ok(OutFile {
        file,
        name: OutName {
            at: None,
            id: crate::sys::Ident::from((0, 0)),
            created: false,
            regular: false,
        },
        pending_truncate: false,
    })
}

/// Whether the link `name` in `dir` leads to one of this process's own
/// descriptors (`/dev/stdout` → `/proc/self/fd/1`, `/dev/fd/N`).
#[cfg(windows)]
fn own_descriptor(_dir: i32, _name: &CString) -> bool {
    false
}

/// Whether the link `name` in `dir` leads to one of this process's own
/// descriptors (`/dev/stdout` → `/proc/self/fd/1`, `/dev/fd/N`).
#[cfg(unix)]
fn own_descriptor(dir: i32, name: &CString) -> bool {
    let mut buf = [0u8; 256];
    // SAFETY: readlinkat writes at most buf.len() bytes into buf.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 {
        return false;
    }
    let target = &buf[..n as usize];
    ["/proc/self/fd/", "/dev/fd/", "/proc/thread-self/fd/"]
        .iter()
        .any(|p| target.starts_with(p.as_bytes()))
}

/// Checks and keeps an existing file just opened.
fn existing(
    file: File,
    at: Option<(OwnedFd, CString)>,
    named: Named,
    append: bool,
    path: &Path,
) -> io::Result<OutFile> {
    let m = file.metadata()?;
    if named == Named::Iomark && !m.is_file() {
        return Err(other(format!(
            "'{}' is not a regular file, and iomark writes its files only as regular files",
            path.display()
        )));
    }
    #[cfg(windows)]
    if let Some(why) = crate::sys::reparse_point(file.as_raw_fd()) {
        return Err(other(format!(
            "'{}' is {why}, which iomark does not write through",
            path.display()
        )));
    }
    // The open file's own count (std's metadata has none on Windows).
    if m.is_file() && crate::sys::fstat(file.as_raw_fd())?.nlink > 1 {
        return Err(other(format!(
            "'{}' has other hard links, so writing it would change another file too",
            path.display()
        )));
    }
    finish(file, at, false, append)
}

fn finish(
    file: File,
    at: Option<(OwnedFd, CString)>,
    created: bool,
    append: bool,
) -> io::Result<OutFile> {
    // Blocking again (a FIFO the user named waits for its reader).
    let _ = crate::sys::set_blocking(file.as_raw_fd());
    let m = file.metadata()?;
    let regular = m.is_file();
    let id = crate::sys::Ident::of(&crate::sys::fstat(file.as_raw_fd())?);
    Ok(OutFile {
        file,
        name: OutName {
            at,
            id,
            created,
            regular,
        },
        pending_truncate: regular && !created && !append,
    })
}

impl OutFile {
    /// Truncates an existing regular file before its first write (so a
    /// run that writes nothing leaves it as it was).
    pub fn truncate_once(&mut self) -> io::Result<()> {
        if self.pending_truncate {
            self.pending_truncate = false;
            self.file.set_len(0)?;
        }
        Ok(())
    }

    /// Whether the first write must truncate the file first.
    pub fn needs_truncate(&self) -> bool {
        self.pending_truncate
    }

    /// Removes the file (see [`OutName::remove`]).
    pub fn remove(&self) {
        self.name.remove();
    }
}

impl OutName {
    /// Removes the file, through its directory's handle, if its name
    /// still is the file opened (never a link the user named).
    pub fn remove(&self) {
        let Some((dir, name)) = &self.at else {
            return;
        };
        let _ = crate::sys::unlink_at(dir.as_raw_fd(), name, false, Some(self.id));
    }
}

/// Writes a whole file iomark names itself (a dump, a chart): see
/// [`open`] with [`Named::Iomark`].
pub fn write_new(path: &Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut f = open(path, Named::Iomark, false)?;
    f.truncate_once()?;
    let r = f.file.write_all(data);
    if r.is_err() && f.name.created {
        f.remove();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn no_file_is_written_through_a_planted_link_or_hard_link() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let p = t.path().join("out.log");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let e = open(&p, Named::Iomark, false).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        std::fs::remove_file(&p).unwrap();
        std::fs::hard_link(&victim, &p).unwrap();
        let e = open(&p, Named::Iomark, true).unwrap_err();
        assert!(e.to_string().contains("hard links"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // Named by the user: a link to a regular file is refused too; one
        // to a device is followed (and never removed).
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let e = open(&p, Named::User, false).unwrap_err();
        assert!(e.to_string().contains("link to a regular file"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/null", &p).unwrap();
        let f = open(&p, Named::User, false).unwrap();
        assert!(!f.name.created && !f.name.regular);
        f.remove();
        assert!(p.symlink_metadata().is_ok());
        // An existing regular file is truncated only by the first write.
        let q = t.path().join("old.json");
        std::fs::write(&q, b"old report").unwrap();
        let mut f = open(&q, Named::User, false).unwrap();
        assert_eq!(std::fs::read(&q).unwrap(), b"old report");
        f.truncate_once().unwrap();
        assert_eq!(std::fs::read(&q).unwrap(), b"");
    }

    #[test]
    fn a_new_file_is_created_and_removed_only_while_it_is_there() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("r.json");
        let f = open(&p, Named::User, false).unwrap();
        assert!(f.name.created && f.name.regular);
        // Replaced meanwhile: the other file stays.
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"someone else's").unwrap();
        f.remove();
        assert_eq!(std::fs::read(&p).unwrap(), b"someone else's");
        write_new(&t.path().join("d.bin"), b"abc").unwrap();
        assert_eq!(std::fs::read(t.path().join("d.bin")).unwrap(), b"abc");
    }
}
