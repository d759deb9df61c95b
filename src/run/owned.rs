//! The files a run made, and their removal.
//!
//! A file is the run's when its exclusive create succeeded (see
//! `files::open_target`). The run remembers each by identity (device,
//! inode, birth time: [`created_this_run`]) and by name in its directory
//! ([`NameKey`]: what the run made there, or removed), so that
//!
//! - a later job may reuse what an earlier one created;
//! - a file the run made that vanished is not silently created again
//!   ([`name_state`]);
//! - a file is removed ([`remove`]) only through its directory's handle,
//!   after checking that the name still is the file the run made (or the
//!   one the check approved), not a link, and carries this run's token
//!   where the filesystem keeps one.

use crate::sys::{AsRawFd, RawFd};
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, CString};

use super::dirs;
use super::safety::FileId;

/// A name in a directory, the directory known by device and inode.
#[derive(Clone, Debug)]
pub struct NameKey {
    dir: (u64, u64),
    name: CString,
    /// The directory's full path (Windows, not part of the key): where a
    /// file made there is looked for again when its identity has no
    /// creation time (see [`created_this_run`]).
    #[cfg(windows)]
    dir_path: Option<std::sync::Arc<std::path::Path>>,
}

impl PartialEq for NameKey {
    fn eq(&self, other: &NameKey) -> bool {
        (self.dir, &self.name) == (other.dir, &other.name)
    }
}

impl Eq for NameKey {}

impl std::hash::Hash for NameKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.dir, &self.name).hash(h)
    }
}

impl NameKey {
    pub fn new(dir: RawFd, name: &CStr) -> NameKey {
        NameKey {
            dir: dirs::ident(dir),
            name: name.to_owned(),
            #[cfg(windows)]
            dir_path: (dir != crate::sys::AT_FDCWD)
                .then(|| crate::sys::final_path(dir))
                .flatten()
                .map(Into::into),
        }
    }

    /// Where the file made under this name is (Windows: for
    /// [`created_this_run`]'s second look).
    fn made_at(&self) -> Option<std::path::PathBuf> {
        #[cfg(windows)]
        {
            let name = crate::sys::os_name(&self.name);
            match &self.dir_path {
                Some(d) => Some(d.join(name)),
                None => Some(std::path::PathBuf::from(name)),
            }
        }
        #[cfg(unix)]
        None
    }
}

/// What the run did with a name so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameState {
    /// Nothing: what is there was there before the run (or nothing).
    Unknown,
    /// The run created the file there (and has not removed it).
    Made,
    /// The run removed the file there.
    Removed,
}

/// The files made during this run, the names they were made under, and
/// the names being created right now (so a clone that finds the file
/// already there waits for its creator to record it).
#[derive(Default)]
struct Registry {
    /// Each file made, with the run token it was marked with.
    ids: HashMap<FileId, Made>,
    names: HashMap<NameKey, bool>,
    busy: HashSet<NameKey>,
}

static REGISTRY: std::sync::Mutex<Option<Registry>> = std::sync::Mutex::new(None);
static CHANGED: std::sync::Condvar = std::sync::Condvar::new();

fn registry() -> std::sync::MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file the run made: the token it was marked with, and where it was
/// made (for an identity without a creation time, see
/// [`created_this_run`]).
#[derive(Clone)]
struct Made {
    token: Option<std::sync::Arc<str>>,
    at: Option<std::path::PathBuf>,
}

/// Holds a name while iomark tries to create it (see [`creating`]).
pub struct Creating {
    key: NameKey,
    made: Option<(FileId, Option<std::sync::Arc<str>>)>,
}

/// Claims `key` for an exclusive create: waits while another worker of
/// this run is creating the same name, so that when the create fails
/// with EEXIST, the file found is already recorded if iomark made it.
pub fn creating(key: NameKey) -> Creating {
    let mut g = registry();
    loop {
        let r = g.get_or_insert_with(Registry::default);
        if !r.busy.contains(&key) {
            r.busy.insert(key.clone());
            break;
        }
        g = CHANGED.wait(g).unwrap_or_else(|e| e.into_inner());
    }
    Creating { key, made: None }
}

impl Creating {
    /// The exclusive create succeeded: this file is iomark's, marked
    /// with `run_token` (`safety::mark_created`).
    pub fn made(&mut self, id: FileId, run_token: Option<&str>) {
        self.made = Some((id, run_token.map(Into::into)));
    }
}

impl Drop for Creating {
    fn drop(&mut self) {
        let mut g = registry();
        let r = g.get_or_insert_with(Registry::default);
        r.busy.remove(&self.key);
        if let Some((id, token)) = self.made.take() {
            let at = self.key.made_at();
            r.ids.insert(id, Made { token, at });
            r.names.insert(self.key.clone(), true);
        }
        CHANGED.notify_all();
    }
}

/// Whether iomark created this file during this run.
///
/// A file's identity is its device and inode (volume serial number and
/// file index on Windows) and its creation time. Where the system gives
/// no creation time (Wine reports the Unix change time, which every
/// write moves, so iomark takes none there), a deleted file's inode
/// number can be a new file's: then the file made must still be where
/// it was made, with that inode. The caller holds the file it asks
/// about open, so an inode found at the place made is that very file,
/// not a deleted one's number reused.
pub fn created_this_run(id: &FileId) -> bool {
    made_with(id).is_some()
}

/// The run token iomark marked the file `id` with when it created it
/// during this run (None: it did not create it).
fn made_with(id: &FileId) -> Option<Option<std::sync::Arc<str>>> {
    let made = registry().as_ref().and_then(|r| r.ids.get(id).cloned())?;
    if id.born.is_some() {
        return Some(made.token);
    }
    let Some(at) = &made.at else {
        return Some(made.token);
    };
    let there = crate::sys::stat_path(at, false).is_ok_and(|st| FileId::of_stat(&st) == *id);
    if there {
        return Some(made.token);
    }
    // Gone (or another file now): the inode number may be anyone's.
    if let Some(r) = registry().as_mut() {
        r.ids.remove(id);
    }
    None
}

/// What the run did with the name `key` so far.
pub fn name_state(key: &NameKey) -> NameState {
    match registry().as_ref().and_then(|r| r.names.get(key)) {
        None => NameState::Unknown,
        Some(true) => NameState::Made,
        Some(false) => NameState::Removed,
    }
}

/// The run removed the file `id` that was at `key`.
pub fn note_removed(key: &NameKey, id: &FileId) {
    let mut g = registry();
    let r = g.get_or_insert_with(Registry::default);
    // Its inode number may soon be another file's.
    r.ids.remove(id);
    r.names.insert(key.clone(), false);
    drop(g);
    super::signals::note_removed(key.dir, &key.name);
}

/// The file `name` in `dir`, if it may be removed: it is the one the
/// run created there (carrying this run's token where the filesystem
/// keeps one) or the one the check approved (`approved`); never a link.
/// `Ok(None)` when nothing is there; `Err` says why what is there is
/// left alone.
pub fn check_removable(
    dir: RawFd,
    name: &CStr,
    approved: Option<&FileId>,
) -> Result<Option<FileId>, String> {
    let flags = crate::sys::O_RDONLY
        | crate::sys::O_NOFOLLOW
        | crate::sys::O_NONBLOCK
        | crate::sys::O_NOCTTY;
    let fd = match dirs::open_at(dir, name, flags, 0) {
        Ok(fd) => fd,
        Err(e) if crate::sys::errno_of(&e) == Some(libc::ENOENT) => return Ok(None),
        Err(e) if crate::sys::errno_of(&e) == Some(libc::ELOOP) => {
            return Err("it is now a symbolic link, which iomark did not create".into())
        }
        // Not readable: look at it without reading (no token to check).
        Err(e)
            if matches!(
                crate::sys::errno_of(&e),
                Some(libc::EACCES) | Some(libc::EPERM)
            ) =>
        {
            dirs::open_at(dir, name, crate::sys::O_PATH | crate::sys::O_NOFOLLOW, 0)
                .map_err(|e| crate::job::jobfile::io_reason(&e))?
        }
        Err(e) => return Err(crate::job::jobfile::io_reason(&e)),
    };
    let id = FileId::of_fd(fd.as_raw_fd()).map_err(|e| crate::job::jobfile::io_reason(&e))?;
    if approved == Some(&id) {
        return Ok(Some(id));
    }
    if let Some(token) = made_with(&id) {
        if super::safety::token_is(fd.as_raw_fd(), token.as_deref()) {
            return Ok(Some(id));
        }
    }
    Err(format!(
        "it is no longer the file iomark {} there (it is now {}, device:inode {}:{})",
        if approved.is_some() {
            "checked"
        } else {
            "created"
        },
        id.kind(),
        id.dev,
        id.ino
    ))
}

/// What `unlink_at` answers when the name is no longer the file meant.
#[cfg(unix)]
const STALE: i32 = libc::ESTALE;
#[cfg(windows)]
const STALE: i32 = libc::EEXIST;

/// Removes `name` from `dir` if [`check_removable`] allows it; Ok(true)
/// when it was removed, Ok(false) when nothing was there.
pub fn remove(dir: RawFd, name: &CStr, approved: Option<&FileId>) -> Result<bool, String> {
    let Some(id) = check_removable(dir, name, approved)? else {
        return Ok(false);
    };
    // Still that file (on Windows looked at and deleted through one
    // handle).
    if let Err(e) = crate::sys::unlink_at(dir, name, false, Some(id.ident())) {
        match crate::sys::errno_of(&e) {
            Some(libc::ENOENT) => return Ok(false),
            Some(e) if e == libc::EEXIST || e == STALE => {
                return Err("it was replaced by another file meanwhile".into())
            }
            _ => return Err(crate::job::jobfile::io_reason(&e)),
        }
    }
    note_removed(&NameKey::new(dir, name), &id);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(dir: RawFd, name: &CStr) -> FileId {
        let key = NameKey::new(dir, name);
        let mut c = creating(key);
        let flags = crate::sys::O_CREAT | crate::sys::O_EXCL | crate::sys::O_WRONLY;
        let fd = dirs::open_at(dir, name, flags, 0o644).unwrap();
        let id = FileId::of_fd(fd.as_raw_fd()).unwrap();
        super::super::safety::mark_created(fd.as_raw_fd(), Some("t0k"));
        c.made(id, Some("t0k"));
        id
    }

    /// A file the run made, deleted by someone else, and a user's file
    /// that gets its inode number (file index): the user's file is not
    /// the run's. Where the system gives a creation time (Linux, NTFS)
    /// the identity differs by it; where it gives none (Wine), the file
    /// made is no longer where it was made. The reuse itself is up to
    /// the filesystem: new files are made until one gets the number, and
    /// the same identity is also asked for directly (what a reused
    /// number looks like), so the test never depends on the reuse.
    #[test]
    fn a_deleted_files_number_given_to_a_users_file_is_not_the_runs() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs::Dir::of(&t.path().join("x")).unwrap();
        let fd = d.get(false).unwrap();
        let name = CString::new("made.dat").unwrap();
        let id = make(fd.as_raw_fd(), &name);
        assert!(created_this_run(&id));
        // Deleted behind iomark's back (not through `remove`).
        std::fs::remove_file(t.path().join("made.dat")).unwrap();
        let reused = FileId {
            born: id.born.map(|b| b + std::time::Duration::from_millis(1)),
            ..id
        };
        assert!(!created_this_run(&reused), "{reused:?}");
        let mut seen_reuse = false;
        for i in 0..200 {
            let p = t.path().join(format!("user{i}.db"));
            std::fs::write(&p, b"precious").unwrap();
            let f = std::fs::File::open(&p).unwrap();
            let now = FileId::of_fd(f.as_raw_fd()).unwrap();
            if (now.dev, now.ino) == (id.dev, id.ino) {
                seen_reuse = true;
                assert!(!created_this_run(&now), "user{i}.db: {now:?}");
                break;
            }
        }
        eprintln!("inode number reused by a new file: {seen_reuse}");
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn only_the_file_the_run_made_is_removed() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs::Dir::of(&t.path().join("x")).unwrap();
        let fd = d.get(false).unwrap();
        let name = CString::new("mine").unwrap();
        let key = NameKey::new(fd.as_raw_fd(), &name);
        assert_eq!(name_state(&key), NameState::Unknown);
        make(fd.as_raw_fd(), &name);
        assert_eq!(name_state(&key), NameState::Made);
        // Replaced by someone else's file: left alone.
        std::fs::remove_file(t.path().join("mine")).unwrap();
        std::fs::write(t.path().join("other"), b"precious").unwrap();
        std::fs::hard_link(t.path().join("other"), t.path().join("mine")).unwrap();
        let e = remove(fd.as_raw_fd(), &name, None).unwrap_err();
        assert!(e.contains("no longer the file iomark created"), "{e}");
        assert_eq!(std::fs::read(t.path().join("mine")).unwrap(), b"precious");
        // A link: left alone.
        std::fs::remove_file(t.path().join("mine")).unwrap();
        std::os::unix::fs::symlink(t.path().join("other"), t.path().join("mine")).unwrap();
        let e = remove(fd.as_raw_fd(), &name, None).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_file(t.path().join("mine")).unwrap();
        // Its own file: removed, and remembered as removed.
        make(fd.as_raw_fd(), &name);
        assert_eq!(remove(fd.as_raw_fd(), &name, None), Ok(true));
        assert_eq!(name_state(&key), NameState::Removed);
        assert_eq!(remove(fd.as_raw_fd(), &name, None), Ok(false));
        assert!(t.path().join("other").exists());
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_file_with_another_runs_token_is_not_this_runs() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs::Dir::of(&t.path().join("x")).unwrap();
        let fd = d.get(false).unwrap();
        let name = CString::new("f").unwrap();
        let id = make(fd.as_raw_fd(), &name);
        let p = t.path().join("f");
        let c = CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and attribute name.
        let r = unsafe {
            libc::setxattr(
                c.as_ptr(),
                c"user.iomark.run".as_ptr(),
                b"other".as_ptr().cast(),
                5,
                0,
            )
        };
        if r != 0 {
            // No user extended attributes here: nothing to check.
            return;
        }
        assert!(created_this_run(&id));
        assert!(remove(fd.as_raw_fd(), &name, None).is_err());
        assert!(p.exists());
    }
}
