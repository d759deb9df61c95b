//! Directory handles: every file a run creates, opens or removes is named
//! relative to a handle on its directory, opened once when the run is
//! checked, never by its path again.
//!
//! - [`Dir::of`] opens the directory that holds a path (following the
//!   links the user named in it, as they are when the run is checked) and
//!   keeps the handle: a directory swapped or replaced by a link later
//!   changes nothing, since every later call (`openat`, `mkdirat`,
//!   `unlinkat`, `fstatat`) goes through the handle.
//! - Directories that do not exist yet (`filename=a/b/c.dat`, as fio
//!   creates them) are created by the run at first use, one component at a
//!   time below the deepest one that existed (`mkdirat`, then opened with
//!   `O_NOFOLLOW`): a link or a directory someone else put there meanwhile
//!   is refused. They are the run's own: [`remove_made_dirs`] removes them
//!   when they are empty, after checking each is still the directory the
//!   run made.
//! - [`stat_at`] looks at a name in a directory without following a link
//!   unless asked, with the same metadata as `std::fs`.
//!
//! Handles are shared: paths in the same directory (by name) get the same
//! handle while one is alive.

use crate::sys::ext::OsStrExt;
use crate::sys::{AsRawFd, OwnedFd, RawFd};
use std::ffi::{CStr, CString};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A directory held open, and the components below it still to create.
pub struct Dir {
    /// The directory as named (for messages); empty for the current one.
    path: PathBuf,
    /// The deepest ancestor that existed when the handle was made.
    base: OwnedFd,
    /// Components below `base` that did not exist then, each with its
    /// path (for messages).
    missing: Vec<(CString, PathBuf)>,
    /// The directory itself, once it exists (`base` when nothing was
    /// missing).
    full: Mutex<Option<Arc<OwnedFd>>>,
}

impl std::fmt::Debug for Dir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dir")
            .field("path", &self.path)
            .field("missing", &self.missing.len())
            .finish()
    }
}

impl PartialEq for Dir {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
            || (self.path == other.path
                && self.missing == other.missing
                && ident(self.base.as_raw_fd()) == ident(other.base.as_raw_fd()))
    }
}

impl Eq for Dir {}

/// A directory created by this run: where, and which it is.
struct MadeDir {
    parent: Arc<OwnedFd>,
    name: CString,
    id: (u64, u64),
}

static MADE: Mutex<Vec<MadeDir>> = Mutex::new(Vec::new());
static CACHE: Mutex<Vec<(PathBuf, Weak<Dir>)>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Opens `name` in `dir` with `flags` (and close-on-exec).
pub fn open_at(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    crate::sys::open_at(dir, name, flags, mode)
}

/// Device and inode of an open descriptor (0, 0 when fstat fails).
pub fn ident(fd: RawFd) -> (u64, u64) {
    crate::sys::fstat(fd).map_or((0, 0), |st| (st.dev, st.ino))
}

/// The metadata of `name` in `dir`, following a final link only when
/// `follow` is set (as `std::fs::metadata` and `symlink_metadata`).
pub fn stat_at(dir: RawFd, name: &CStr, follow: bool) -> io::Result<std::fs::Metadata> {
    let mut flags = crate::sys::O_PATH;
    if !follow {
        flags |= crate::sys::O_NOFOLLOW;
    }
    let fd = open_at(dir, name, flags, 0)?;
    std::fs::File::from(fd).metadata()
}

/// The last component of a target path, the name a directory handle
/// opens; an error for a path that names no file ("/", "a/..").
pub fn file_name(path: &Path) -> io::Result<CString> {
    match path.components().next_back() {
        Some(Component::Normal(n)) => cstr(n.as_bytes()),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        )),
    }
}

/// The directory part of a target path ("" for the current directory).
fn parent_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl Dir {
    /// The handle of the directory that holds `path` (shared with other
    /// paths in it while one is alive), opened now if it is not held yet.
    pub fn of(path: &Path) -> io::Result<Arc<Dir>> {
        let dir = parent_of(path);
        let mut cache = lock(&CACHE);
        cache.retain(|(_, w)| w.strong_count() > 0);
        if let Some(d) = cache
            .iter()
            .find(|(p, _)| *p == dir)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(d);
        }
        let d = Arc::new(Dir::open(&dir)?);
        cache.push((dir, Arc::downgrade(&d)));
        Ok(d)
    }

    /// Opens the deepest existing directory of `path` and notes the
    /// components below it that are missing.
    fn open(path: &Path) -> io::Result<Dir> {
        let mut at = path.to_path_buf();
        let mut missing = Vec::new();
        loop {
            let shown = if at.as_os_str().is_empty() {
                Path::new(".")
            } else {
                at.as_path()
            };
            let c = cstr(shown.as_os_str().as_bytes())?;
            let flags = crate::sys::O_PATH | crate::sys::O_DIRECTORY;
            match open_at(crate::sys::AT_FDCWD, &c, flags, 0) {
                Ok(base) => {
                    missing.reverse();
                    let full = if missing.is_empty() {
                        Some(Arc::new(base.try_clone()?))
                    } else {
                        None
                    };
                    return Ok(Dir {
                        path: path.to_path_buf(),
                        base,
                        missing,
                        full: Mutex::new(full),
                    });
                }
                Err(e) if crate::sys::errno_of(&e) == Some(libc::ENOENT) => {
                    let Some(Component::Normal(last)) = at.components().next_back() else {
                        return Err(e);
                    };
                    missing.push((cstr(last.as_bytes())?, at.clone()));
                    at = parent_of(&at);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The directory as named, for messages ("." for the current one).
    pub fn shown(&self) -> PathBuf {
        if self.path.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            self.path.clone()
        }
    }

    /// Whether the directory existed when the handle was made (or the run
    /// has created it since).
    pub fn exists(&self) -> bool {
        lock(&self.full).is_some()
    }

    /// The handle of the deepest directory that existed at the check
    /// (for what filesystem it is on).
    pub fn base_fd(&self) -> RawFd {
        self.base.as_raw_fd()
    }

    /// The directory's handle, if it exists.
    pub fn resolved(&self) -> Option<Arc<OwnedFd>> {
        lock(&self.full).clone()
    }

    /// The directory's handle, creating the missing components first
    /// (see the module documentation). Without `create`, a missing
    /// directory is ENOENT.
    pub fn get(&self, create: bool) -> Result<Arc<OwnedFd>, DirError> {
        let mut full = lock(&self.full);
        if let Some(fd) = full.as_ref() {
            return Ok(fd.clone());
        }
        if !create {
            return Err(DirError::Sys {
                path: self.shown(),
                source: crate::sys::from_errno(libc::ENOENT),
            });
        }
        let mut cur = Arc::new(self.base.try_clone().map_err(|e| self.err(e))?);
        for (name, shown) in &self.missing {
            cur = Arc::new(make_dir(&cur, name, shown)?);
        }
        *full = Some(cur.clone());
        Ok(cur)
    }

    fn err(&self, source: io::Error) -> DirError {
        DirError::Sys {
            path: self.shown(),
            source,
        }
    }
}

/// Why a directory of the run cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error("cannot create directory '{}': {}", path.display(), crate::job::jobfile::io_reason(source))]
    Sys { path: PathBuf, source: io::Error },
    /// Something other than the directory the run created is there.
    #[error("refusing to use directory '{}': {why}", path.display())]
    Refused { path: PathBuf, why: String },
}

impl DirError {
    pub fn errno(&self) -> i32 {
        match self {
            DirError::Sys { source, .. } => crate::sys::errno_of(source).unwrap_or(libc::EIO),
            DirError::Refused { .. } => libc::EEXIST,
        }
    }
}

/// Creates directory `name` in `parent` (or finds the one this run
/// created there) and opens it without following a link.
fn make_dir(parent: &Arc<OwnedFd>, name: &CString, shown: &Path) -> Result<OwnedFd, DirError> {
    let sys = |source: io::Error| DirError::Sys {
        path: shown.to_path_buf(),
        source,
    };
    let mut made = lock(&MADE);
    let r = crate::sys::mkdir_at(parent.as_raw_fd(), name, 0o755);
    let created = r.is_ok();
    if let Err(e) = r {
        if crate::sys::errno_of(&e) != Some(libc::EEXIST) {
            return Err(sys(e));
        }
    }
    let flags = crate::sys::O_PATH | crate::sys::O_DIRECTORY | crate::sys::O_NOFOLLOW;
    let fd =
        open_at(parent.as_raw_fd(), name, flags, 0).map_err(|e| {
            match crate::sys::errno_of(&e) {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => DirError::Refused {
            path: shown.to_path_buf(),
            why: "it is not the directory iomark was creating (a link or a file took its place)"
                .into(),
        },
        _ => sys(e),
    }
        })?;
    let id = ident(fd.as_raw_fd());
    let parent_id = ident(parent.as_raw_fd());
    if created {
        made.push(MadeDir {
            parent: parent.clone(),
            name: name.clone(),
            id,
        });
    } else if !made
        .iter()
        .any(|m| m.id == id && m.name == *name && ident(m.parent.as_raw_fd()) == parent_id)
    {
        return Err(DirError::Refused {
            path: shown.to_path_buf(),
            why: "it did not exist when the run was checked, and another process created it \
                  meanwhile"
                .into(),
        });
    }
    Ok(fd)
}

/// Removes the directories this run created that are empty, deepest
/// first, each only while its name still is the directory the run made.
///
/// The handles the run holds on a directory it removed are closed then:
/// on Windows a directory deleted while handles are open on it stays
/// until the last one closes (unless the filesystem deletes with POSIX
/// semantics), so its parent would not be empty yet; the parents are
/// tried again once those handles are gone.
pub fn remove_made_dirs() {
    loop {
        let removed = remove_empty_made_dirs();
        if removed.is_empty() {
            break;
        }
        release_handles(&removed);
    }
}

/// One pass of [`remove_made_dirs`]: the identities of the directories
/// removed.
fn remove_empty_made_dirs() -> Vec<(u64, u64)> {
    let mut made = lock(&MADE);
    let mut removed = Vec::new();
    let mut k = made.len();
    while k > 0 {
        k -= 1;
        let m = &made[k];
        let pfd = m.parent.as_raw_fd();
        let still = crate::sys::lstat_at(pfd, &m.name)
            .is_ok_and(|st| st.is_dir() && (st.dev, st.ino) == m.id);
        if !still {
            // Gone or replaced: not ours any more.
            made.remove(k);
            continue;
        }
        // Only an empty directory can be removed.
        if crate::sys::unlink_at(pfd, &m.name, true, Some(m.id.into())).is_ok() {
            removed.push(m.id);
            made.remove(k);
        }
    }
    removed
}

/// Closes the handles the run's directories hold on the directories
/// `ids` (removed: nothing can be created in them any more; a later
/// [`Dir::get`] makes them anew).
fn release_handles(ids: &[(u64, u64)]) {
    let live: Vec<Arc<Dir>> = lock(&CACHE)
        .iter()
        .filter_map(|(_, w)| w.upgrade())
        .collect();
    for d in live {
        let mut full = lock(&d.full);
        if full
            .as_ref()
            .is_some_and(|fd| ids.contains(&ident(fd.as_raw_fd())))
        {
            *full = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_directories_are_created_once_and_removed_when_empty() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("a/b/c.dat");
        let d = Dir::of(&file).unwrap();
        assert!(!d.exists());
        assert!(Arc::ptr_eq(&d, &Dir::of(&t.path().join("a/b/x")).unwrap()));
        let fd = d.get(true).unwrap();
        assert!(t.path().join("a/b").is_dir());
        let name = file_name(&file).unwrap();
        let f = open_at(
            fd.as_raw_fd(),
            &name,
            crate::sys::O_CREAT | crate::sys::O_EXCL | crate::sys::O_WRONLY,
            0o644,
        )
        .unwrap();
        drop(f);
        // Not empty: kept.
        remove_made_dirs();
        assert!(t.path().join("a/b/c.dat").exists());
        assert!(d.exists());
        std::fs::remove_file(&file).unwrap();
        // What the run holds (`d`, as its plan does) does not keep them;
        // a handle of the caller's own would on Windows.
        drop(fd);
        remove_made_dirs();
        assert!(!t.path().join("a").exists());
        assert!(!d.exists());
    }

    #[test]
    fn a_run_removes_the_directories_it_made_for_a_file_it_removes() {
        let t = tempfile::tempdir().unwrap();
        let file = crate::job::opt_path(&t.path().join("a/b/c.dat"));
        let text = format!("[j]\nfilename={file}\nrw=write\nbs=4k\nsize=64k\nunlink=1\n");
        let r = crate::run::session::testing::run_text(&text, None);
        assert_eq!(r.jobs[0].outcome.error, 0);
        assert_eq!(r.jobs[0].outcome.stats.dir[1].ios, 16);
        // Removed while the result (its plan, the directory handles)
        // is still alive.
        assert!(!t.path().join("a").exists());
        drop(r);
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_link_put_in_place_of_a_missing_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let file = t.path().join("new/c.dat");
        let d = Dir::of(&file).unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("new")).unwrap();
        let e = d.get(true).unwrap_err();
        assert!(e.to_string().contains("not the directory iomark"), "{e}");
        // Another process's directory is not the run's either.
        std::fs::remove_file(t.path().join("new")).unwrap();
        std::fs::create_dir(t.path().join("new")).unwrap();
        let e = d.get(true).unwrap_err();
        assert!(e.to_string().contains("another process created it"), "{e}");
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_swapped_directory_does_not_move_the_handle() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("sub")).unwrap();
        std::fs::create_dir(t.path().join("other")).unwrap();
        let d = Dir::of(&t.path().join("sub/f")).unwrap();
        std::fs::rename(t.path().join("sub"), t.path().join("sub.old")).unwrap();
        std::os::unix::fs::symlink(t.path().join("other"), t.path().join("sub")).unwrap();
        let fd = d.get(false).unwrap();
        let name = CString::new("f").unwrap();
        drop(
            open_at(
                fd.as_raw_fd(),
                &name,
                crate::sys::O_CREAT | crate::sys::O_WRONLY,
                0o644,
            )
            .unwrap(),
        );
        assert!(t.path().join("sub.old/f").exists());
        assert!(!t.path().join("other/f").exists());
    }
}
