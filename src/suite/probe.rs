//! What the machine and the target directory allow: which asynchronous
//! engine works (io_uring, then libaio, among those iomark implements),
//! whether the filesystem accepts direct I/O, and what filesystem it is.
//!
//! Probes create nothing but one small file of their own, which they
//! remove at once.

use std::path::Path;

use crate::job::EngineKind;

/// The engine for a benchmark and, when it is a fallback, why.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineChoice {
    pub kind: EngineKind,
    pub note: Option<String>,
}

/// Whether the kernel lets this process set up an io_uring.
#[cfg(not(target_os = "linux"))]
pub fn io_uring_works() -> bool {
    false
}

/// Whether the kernel's native AIO (io_setup) is usable.
#[cfg(not(target_os = "linux"))]
pub fn libaio_works() -> bool {
    false
}

/// Whether the kernel lets this process set up an io_uring.
#[cfg(target_os = "linux")]
pub fn io_uring_works() -> bool {
    io_uring::IoUring::new(4).is_ok()
}

/// Whether the kernel's native AIO (io_setup) is usable.
#[cfg(target_os = "linux")]
pub fn libaio_works() -> bool {
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: io_setup writes the context id into `ctx`; it is destroyed
    // right after.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, 1 as libc::c_long, &mut ctx) };
    if r != 0 {
        return false;
    }
    // SAFETY: destroying the context just created.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
    true
}

/// Whether the kernel lets this process use the engine (io_uring and
/// libaio can be switched off; the others always work).
fn works(kind: EngineKind) -> bool {
    match kind {
        EngineKind::IoUring => io_uring_works(),
        EngineKind::Libaio => libaio_works(),
        k => k.info().here,
    }
}

/// The asynchronous engines this system has, best first: io_uring then
/// libaio on Linux, windowsaio on Windows, posixaio elsewhere.
const ASYNCHRONOUS: &[EngineKind] = if cfg!(target_os = "linux") {
    &[EngineKind::IoUring, EngineKind::Libaio]
} else if cfg!(windows) {
    &[EngineKind::WindowsAio]
} else {
    &[EngineKind::PosixAio]
};

/// Picks the engine: `requested` if given (it must exist), else the first
/// of `preferred`, io_uring, libaio that the kernel allows, else psync
/// with a note saying what that means for queue depth.
pub fn pick_engine(
    requested: Option<&str>,
    preferred: &[EngineKind],
) -> Result<EngineChoice, String> {
    if let Some(r) = requested {
        return Ok(EngineChoice {
            kind: EngineKind::parse(r)?,
            note: None,
        });
    }
    if let Some(&kind) = preferred.iter().chain(ASYNCHRONOUS).find(|k| works(**k)) {
        return Ok(EngineChoice { kind, note: None });
    }
    let fallback = EngineKind::Psync;
    let tried: Vec<String> = ASYNCHRONOUS.iter().map(ToString::to_string).collect();
    Ok(EngineChoice {
        kind: fallback,
        note: Some(format!(
            "{} {} not usable on this system (disabled by the kernel or a seccomp policy): \
             using {fallback}, which keeps one I/O in flight per job, so tests with a queue \
             depth above 1 run at depth 1",
            tried.join(" and "),
            if tried.len() == 1 { "is" } else { "are" }
        )),
    })
}

/// Tries an aligned O_DIRECT write of 4 KiB in `dir`. Ok(true) when the
/// filesystem accepts direct I/O, Ok(false) when it refuses it (EINVAL),
/// Err for other failures (permissions, full disk…).
///
/// The probe file is created exclusively (never through a link) in the
/// directory's handle, switched to direct I/O afterwards (`fcntl`), and
/// removed through the same handle only while its name still is that
/// file: nothing else is ever removed.
pub fn direct_io_works(dir: &Path) -> Result<bool, String> {
    use crate::sys::AsRawFd;
    // Host and process: MPI ranks on several hosts may probe one shared
    // directory at once.
    let name = format!(
        ".iomark-probe-{}-{}",
        crate::cluster::hostname(),
        std::process::id()
    );
    let failed = |e: &std::io::Error| {
        format!(
            "cannot create a file in '{}': {}",
            dir.display(),
            crate::job::jobfile::io_reason(e)
        )
    };
    let f = crate::outfile::open(&dir.join(&name), crate::outfile::Named::Iomark, false)
        .map_err(|e| failed(&e))?;
    if !f.name.created {
        // Someone else's file: left alone.
        return Err(failed(&crate::sys::from_errno(libc::EEXIST)));
    }
    let direct = match direct_handle(&f, &dir.join(&name)) {
        Ok(d) => d,
        Err(e) => {
            f.remove();
            return match crate::sys::errno_of(&e) {
                Some(libc::EINVAL) => Ok(false),
                _ => Err(failed(&e)),
            };
        }
    };
    let fd = direct.as_raw_fd();
    let layout = std::alloc::Layout::from_size_align(4096, 4096).expect("valid layout");
    // SAFETY: a zeroed 4 KiB allocation aligned to 4 KiB, freed below.
    let buf = unsafe { std::alloc::alloc_zeroed(layout) };
    // SAFETY: writing 4096 bytes from the buffer just allocated.
    let r = unsafe { crate::sys::pwrite(fd, buf, 4096, 0) };
    let err = std::io::Error::last_os_error();
    // SAFETY: freeing what was allocated above with the same layout.
    unsafe { std::alloc::dealloc(buf, layout) };
    f.remove();
    if r == 4096 {
        Ok(true)
    } else if crate::sys::errno_of(&err) == Some(libc::EINVAL) {
        Ok(false)
    } else {
        Err(format!(
            "cannot write a test file in '{}': {}",
            dir.display(),
            crate::job::jobfile::io_reason(&err)
        ))
    }
}

/// The probe file, with direct I/O: its own descriptor switched with
/// `fcntl` on Linux and FreeBSD (`F_NOCACHE` on macOS); on Windows a
/// second handle opened unbuffered by name (the first one created it
/// exclusively and is checked to be the same file).
#[cfg(unix)]
fn direct_handle(
    f: &crate::outfile::OutFile,
    _path: &Path,
) -> std::io::Result<crate::sys::OwnedFd> {
    use crate::sys::AsRawFd;
    let fd = f.file.try_clone()?;
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on the descriptor just duplicated.
    #[cfg(not(target_os = "macos"))]
    unsafe {
        let fl = libc::fcntl(raw, libc::F_GETFL);
        if libc::fcntl(raw, libc::F_SETFL, fl | libc::O_DIRECT) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: as above.
    #[cfg(target_os = "macos")]
    unsafe {
        if libc::fcntl(raw, libc::F_NOCACHE, 1) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(fd.into())
}

#[cfg(windows)]
fn direct_handle(f: &crate::outfile::OutFile, path: &Path) -> std::io::Result<crate::sys::OwnedFd> {
    use crate::sys::AsRawFd;
    let c = crate::engine::file::cstring(path)?;
    let flags = crate::sys::O_WRONLY | crate::sys::O_DIRECT | crate::sys::O_NOFOLLOW;
    let fd = crate::sys::open_at(crate::sys::AT_FDCWD, &c, flags, 0)?;
    let (a, b) = (
        crate::sys::fstat(fd.as_raw_fd())?,
        crate::sys::fstat(f.file.as_raw_fd())?,
    );
    if (a.dev, a.ino) != (b.dev, b.ino) {
        return Err(crate::sys::from_errno(libc::EEXIST));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requested_engine_must_exist() {
        assert!(pick_engine(Some("no-such-engine"), &[]).is_err());
        assert_eq!(
            pick_engine(Some("psync"), &[]).unwrap().kind,
            EngineKind::Psync
        );
    }

    #[test]
    // posixaio is Unix-only.
    #[cfg(unix)]
    fn a_preferred_engine_that_works_comes_first() {
        let c = pick_engine(None, &[EngineKind::PosixAio]).unwrap();
        assert_eq!(
            c,
            EngineChoice {
                kind: EngineKind::PosixAio,
                note: None
            }
        );
        let c = pick_engine(None, &[]).unwrap();
        assert_eq!(c.note.is_some(), c.kind == EngineKind::Psync, "{c:?}");
        assert_eq!(c.kind == EngineKind::IoUring, io_uring_works(), "{c:?}");
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn the_probe_removes_only_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let name = format!(
            ".iomark-probe-{}-{}",
            crate::cluster::hostname(),
            std::process::id()
        );
        // Someone's file, or a link, where the probe file goes: refused,
        // and left where it is.
        let theirs = dir.path().join(&name);
        std::fs::write(&theirs, b"precious").unwrap();
        assert!(direct_io_works(dir.path()).is_err());
        assert_eq!(std::fs::read(&theirs).unwrap(), b"precious");
        std::fs::remove_file(&theirs).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, &theirs).unwrap();
        assert!(direct_io_works(dir.path()).is_err());
        assert!(theirs.symlink_metadata().is_ok());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn direct_io_probe_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("iomark-probe-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = direct_io_works(&dir);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
