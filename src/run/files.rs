//! Laying out and opening a job's files: creating or extending regular
//! files before the timed phase (written with data when the job reads or
//! `overwrite` is set, otherwise preallocated as `fallocate` says), open
//! flags from the job's options (`direct`, `sync`), reading them into the
//! page cache (`pre_read`), dropping cached pages (`invalidate`) and
//! removing them (`unlink`).
//!
//! Every open of a target goes through [`open_target`], which keeps the
//! safety check's approval true at open time (no links the plan did not
//! see, exclusive creation, same identity as approved, non-blocking until
//! the file is known; see `safety`). Every open, create and removal is
//! relative to the handle of the file's directory opened when the run was
//! checked ([`Place`], `dirs`); missing parent directories are created
//! then, as fio creates them, and removed with the files when they are
//! empty.

use crate::sys::RawFd;
use crate::sys::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::ffi::CString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dirs::{self, DirError};
use super::error::RunError;
use super::owned::{self, NameKey, NameState};
use super::plan::{PlannedFile, PlannedJob, TargetKind};
use super::safety::FileId;
use crate::engine::file::close_fd;
use crate::engine::{Engine, OpenFile};
use crate::job::spec::{Ddir, FallocateMode, JobSpec, RwPattern};
use crate::job::value::human_bytes;
use crate::workload::buffers::BufferFiller;

/// A file open for I/O.
#[derive(Debug)]
pub struct OpenedFile {
    pub fd: RawFd,
    pub data: usize,
    pub size: u64,
    /// How long the engine's open took (ns): the measured operation of
    /// the file-operation engines.
    pub open_ns: u64,
}

/// Whether laying out a file must write its data (not only size it):
/// the job reads it, asks for it (`overwrite`), or its engine cannot
/// extend files (mmap).
fn layout_writes_data(job: &PlannedJob) -> bool {
    let s = &job.spec;
    s.io.rw.has(crate::job::spec::Ddir::Read)
        || s.file.overwrite
        || !s.io.ioengine.info().extends_files()
        || s.verify.verify_only
}

/// A failure while laying out, opening or pre-reading a file: the errno
/// a job reports (`err=`, from [`FileError::errno`]) and the message in
/// words (its `Display`).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A system call on the file failed; `what` says what was tried
    /// ("cannot open", "cannot lay out", …).
    #[error("{what} '{}': {}", path.display(), io_reason(source))]
    Sys {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// What the safety check approved no longer holds at open time (a
    /// link, another file, a mounted device, a FIFO without its peer):
    /// the refusal and its errno (ELOOP, EEXIST, EBUSY, EINTR).
    #[error("{msg}")]
    Refused { errno: i32, msg: String },
    /// The file must be created and `allow_file_create=0` forbids it.
    #[error("job '{job}': '{}' does not exist and allow_file_create=0", path.display())]
    NotAllowed { job: String, path: PathBuf },
    /// A signal stopped the layout.
    #[error("laying out '{}' was stopped by a signal", path.display())]
    Stopped { path: PathBuf },
    /// A parent directory cannot be created or is not the run's.
    #[error(transparent)]
    Dir(#[from] DirError),
    /// The file was deleted during the run by someone else: it is not
    /// created again (`made`: the run had created it).
    #[error(
        "'{}': no such file: it was deleted during the run ({}), and iomark does not create \
         it again",
        path.display(),
        if *made { "iomark had created it" } else { "it existed when the run was checked" }
    )]
    Vanished { path: PathBuf, made: bool },
    /// A job that only reads (or any job under --readonly) would have to
    /// create, extend or fill a file.
    #[error("{0}")]
    ReadOnly(String),
    /// `direct=1` on a filesystem that refuses `O_DIRECT`.
    #[error(
        "cannot open '{}' with direct=1: the filesystem does not support direct I/O (use direct=0)",
        path.display()
    )]
    NoDirectIo { path: PathBuf },
    /// `direct=1` with a block size (`what` = bs, bssplit) or region
    /// start (offset) that is not a multiple of the target's alignment.
    #[error(
        "{what}={value} is not a multiple of {align}, the direct I/O alignment of '{}' \
         (direct=1 needs aligned sizes and offsets)",
        path.display()
    )]
    Misaligned {
        what: &'static str,
        value: u64,
        align: u64,
        path: PathBuf,
    },
}

impl FileError {
    /// The errno the job reports.
    pub fn errno(&self) -> i32 {
        match self {
            FileError::Sys { source, .. } => crate::sys::errno_of(source).unwrap_or(libc::EIO),
            FileError::Refused { errno, .. } => *errno,
            FileError::NotAllowed { .. } | FileError::Vanished { .. } => libc::ENOENT,
            FileError::Stopped { .. } => libc::EINTR,
            FileError::Dir(e) => e.errno(),
            FileError::ReadOnly(_) => libc::EROFS,
            FileError::NoDirectIo { .. } | FileError::Misaligned { .. } => libc::EINVAL,
        }
    }

    fn refused(errno: i32, msg: String) -> Self {
        FileError::Refused { errno, msg }
    }
}

/// Where a planned file is: the handle of its directory (opened when the
/// run was checked) and its name there.
pub struct Place {
    dir: Option<Arc<OwnedFd>>,
    pub name: CString,
}

impl Place {
    /// The directory's descriptor (AT_FDCWD with the whole path as the
    /// name for a target that has no directory handle).
    pub fn fd(&self) -> RawFd {
        self.dir
            .as_ref()
            .map_or(crate::sys::AT_FDCWD, |d| d.as_raw_fd())
    }

    /// The name in its directory, for the run's records.
    pub fn key(&self) -> NameKey {
        NameKey::new(self.fd(), &self.name)
    }
}

/// The place of `f`. With `create`, missing parent directories are
/// created first (as fio creates them); without, a missing directory is
/// ENOENT.
pub fn place(f: &PlannedFile, create: bool) -> Result<Place, FileError> {
    let Some(dir) = &f.seen.dir else {
        let name = crate::engine::file::cstring(&f.path)
            .map_err(|e| sys_err("cannot open", &f.path, e))?;
        return Ok(Place { dir: None, name });
    };
    let name = dirs::file_name(&f.path).map_err(|e| sys_err("cannot open", &f.path, e))?;
    let fd = dir.get(create).map_err(|e| match e {
        DirError::Sys { source, .. } if !create => sys_err("cannot open", &f.path, source),
        e => FileError::Dir(e),
    })?;
    Ok(Place {
        dir: Some(fd),
        name,
    })
}

/// The place of `f` if its directory exists (None: nothing is there).
fn place_if_there(f: &PlannedFile) -> Option<Place> {
    match &f.seen.dir {
        Some(d) if !d.exists() => None,
        _ => place(f, false).ok(),
    }
}

/// How [`open_target`] opens a file at its place with the given flags
/// (the engine's open, or a plain one): descriptor and engine data.
pub type OpenAt<'a> = dyn FnMut(&Place, i32) -> std::io::Result<(RawFd, usize)> + 'a;

/// Opens `f` at its place with plain `open(2)` flags (close-on-exec).
fn open_plain(p: &Place, flags: i32) -> std::io::Result<RawFd> {
    dirs::open_at(p.fd(), &p.name, flags, 0o644).map(IntoRawFd::into_raw_fd)
}

fn io_reason(e: &std::io::Error) -> String {
    crate::job::jobfile::io_reason(e)
}

fn sys_err(what: &'static str, path: &Path, e: std::io::Error) -> FileError {
    FileError::Sys {
        what,
        path: path.to_path_buf(),
        source: e,
    }
}

/// `opendir`: adds every regular file below the directory, recursively
/// and in name order, to the job's file names (after any `filename`).
pub fn expand_opendir(spec: &mut JobSpec) -> Result<(), RunError> {
    let Some(dir) = spec.file.opendir.clone() else {
        return Ok(());
    };
    fn walk(dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let t = e.file_type()?;
            if t.is_dir() {
                walk(&e.path(), out)?;
            } else if t.is_file() {
                out.push(e.path().to_string_lossy().into_owned());
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(Path::new(&dir), &mut found).map_err(|e| {
        RunError::Plan(format!(
            "job '{}': opendir '{dir}': {}",
            spec.name,
            crate::job::jobfile::io_reason(&e)
        ))
    })?;
    if found.is_empty() {
        return Err(RunError::Plan(format!(
            "job '{}': opendir '{dir}' holds no regular files",
            spec.name
        )));
    }
    spec.file.filenames.extend(found);
    Ok(())
}

/// Creates or extends the regular files of a job that are too small.
/// Returns the notices to print ("Laying out IO file …").
pub fn layout(
    job: &PlannedJob,
    done: &mut Vec<std::path::PathBuf>,
) -> Result<Vec<String>, FileError> {
    let mut notes = Vec::new();
    let s = &job.spec;
    if s.log.read_iolog.is_some() {
        // A replay uses the trace's files as they are.
        return Ok(notes);
    }
    let todo = layout_todo(job, done)?;
    if todo.is_empty() {
        return Ok(notes);
    }
    let total: u64 = todo.iter().map(|f| f.needed_size).sum();
    notes.push(format!(
        "{}: Laying out IO file{} ({} file{} / {})",
        s.name,
        if todo.len() > 1 { "s" } else { "" },
        todo.len(),
        if todo.len() > 1 { "s" } else { "" },
        human_bytes(total, false)
    ));
    let mut writer = LayoutWriter::new(job, total);
    for f in todo {
        lay_out_file(job, f, &mut writer)?;
        done.push(f.path.clone());
    }
    Ok(notes)
}

/// The job's regular files that must be created or extended (not laid
/// out yet in this run, and not left to `create_on_open`).
fn layout_todo<'j>(
    job: &'j PlannedJob,
    done: &[std::path::PathBuf],
) -> Result<Vec<&'j PlannedFile>, FileError> {
    let s = &job.spec;
    let mut todo: Vec<&PlannedFile> = Vec::new();
    for f in &job.files {
        if done.contains(&f.path) {
            continue;
        }
        if !matches!(f.kind, TargetKind::Regular | TargetKind::Missing) {
            continue;
        }
        let existing = size_now(f)?;
        let needs = match f.kind {
            TargetKind::Regular | TargetKind::Missing => {
                existing.is_none_or(|sz| sz < f.needed_size)
            }
            _ => false,
        };
        if needs {
            let own = existing.is_some() && is_own(f);
            if let Some(m) = super::safety::read_refusal(s, &f.path, existing, f.needed_size, own) {
                return Err(FileError::ReadOnly(m));
            }
            if existing.is_none() && !s.file.allow_file_create {
                return Err(FileError::NotAllowed {
                    job: s.name.clone(),
                    path: f.path.clone(),
                });
            }
            if s.file.create_on_open && !layout_writes_data(job) {
                // Created when opened.
                continue;
            }
            todo.push(f);
        }
    }
    Ok(todo)
}

/// The size of a planned file now (None when there is none). Re-check:
/// an earlier job may have created it. What is there must still be what
/// the check approved (or iomark's own).
fn size_now(f: &PlannedFile) -> Result<Option<u64>, FileError> {
    let Some(p) = place_if_there(f) else {
        return Ok(None);
    };
    match dirs::stat_at(p.fd(), &p.name, f.seen.link) {
        Ok(m) if m.file_type().is_symlink() => Err(FileError::refused(
            libc::ELOOP,
            super::safety::link_refusal(&f.path, &f.seen),
        )),
        Ok(m) => {
            // Another rank of this run may have made it since the check.
            let peer = f.seen.id.is_none()
                && super::safety::created_by_peer_at(p.fd(), &p.name, f.run_token());
            if !peer {
                let id = FileId::at(p.fd(), &p.name, f.seen.link, &m)
                    .map_err(|e| sys_err("cannot stat", &f.path, e))?;
                super::safety::check_identity(&f.path, &f.seen, &id)
                    .map_err(|m| FileError::refused(libc::EEXIST, m.0))?;
            }
            Ok(Some(m.len()))
        }
        Err(_) => Ok(None),
    }
}

/// Whether the file at `f`'s place is iomark's: made during this run, or
/// marked as made by an earlier one.
fn is_own(f: &PlannedFile) -> bool {
    let Some(p) = place_if_there(f) else {
        return false;
    };
    let flags = crate::sys::O_RDONLY
        | crate::sys::O_NOFOLLOW
        | crate::sys::O_NONBLOCK
        | crate::sys::O_NOCTTY;
    let Ok(fd) = dirs::open_at(p.fd(), &p.name, flags, 0) else {
        return false;
    };
    FileId::of_fd(fd.as_raw_fd()).is_ok_and(|id| owned::created_this_run(&id))
        || super::safety::marked(fd.as_raw_fd())
}

/// What layout writes into files: the same contents the job's writes
/// would have, block by block, a chunk at a time.
struct LayoutWriter {
    write_data: bool,
    buf: Vec<u8>,
    bs: usize,
    filler: BufferFiller,
}

impl LayoutWriter {
    const CHUNK: usize = 1 << 20;

    fn new(job: &PlannedJob, total: u64) -> Self {
        let s = &job.spec;
        let chunk = Self::CHUNK;
        let d = if s.io.rw.has(Ddir::Write) {
            Ddir::Write
        } else {
            Ddir::Read
        };
        LayoutWriter {
            write_data: layout_writes_data(job),
            buf: vec![0u8; chunk],
            bs: (s.io.bs[d.idx()].min() as usize).clamp(1, chunk),
            filler: BufferFiller::new(s, chunk, total, job.seed ^ 77),
        }
    }

    /// Writes `file` from `from` to `to`, stopping on a signal.
    fn fill(
        &mut self,
        file: &mut std::fs::File,
        from: u64,
        to: u64,
        path: &Path,
    ) -> Result<(), FileError> {
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(from))
            .map_err(|e| sys_err("cannot seek in", path, e))?;
        let mut left = to - from;
        let mut pos = from;
        while left > 0 {
            if super::signals::received() {
                // Stopped: a large layout must not delay the stop.
                return Err(FileError::Stopped {
                    path: path.to_path_buf(),
                });
            }
            let n = left.min(Self::CHUNK as u64) as usize;
            self.filler.fill_layout(&mut self.buf[..n], pos, self.bs);
            pos += n as u64;
            file.write_all(&self.buf[..n])
                .map_err(|e| sys_err("cannot lay out", path, e))?;
            left -= n as u64;
        }
        Ok(())
    }
}

/// Creates or extends one file: written with data, or preallocated.
fn lay_out_file(
    job: &PlannedJob,
    f: &PlannedFile,
    writer: &mut LayoutWriter,
) -> Result<(), FileError> {
    let s = &job.spec;
    let mut flags = crate::sys::O_WRONLY;
    if s.file.allow_file_create {
        flags |= crate::sys::O_CREAT;
    }
    let (fd, _, _) = open_target(
        s,
        f,
        flags,
        "cannot create",
        &mut |p, fl| open_plain(p, fl).map(|fd| (fd, 0)),
        &mut |fd, _| {
            let _ = close_fd(fd);
        },
    )?;
    // SAFETY: the descriptor was just opened and is owned here.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    let existing = file.metadata().map(|m| m.len()).unwrap_or(0);
    if writer.write_data {
        writer.fill(&mut file, existing, f.needed_size, &f.path)?;
        if s.file.create_fsync {
            file.sync_all()
                .map_err(|e| sys_err("cannot sync", &f.path, e))?;
        }
    } else if !s.file.fill_device {
        // fill_device writes until the space runs out: reserve nothing.
        preallocate(&file, s.file.fallocate, existing, f.needed_size, &f.path)?;
    }
    Ok(())
}

/// Sizes a new or short file as `fallocate` says: `none` leaves it to
/// grow with the writes, `keep` reserves blocks without changing the
/// size, `truncate` only sets the size, `native`/`posix` reserve and size.
fn preallocate(
    file: &std::fs::File,
    mode: FallocateMode,
    from: u64,
    to: u64,
    path: &Path,
) -> Result<(), FileError> {
    let size = |f: &std::fs::File| f.set_len(to).map_err(|e| sys_err("cannot size", path, e));
    #[cfg(not(target_os = "linux"))]
    let _ = from;
    // Elsewhere the file is sized (preallocation calls are Linux's).
    #[cfg(not(target_os = "linux"))]
    match mode {
        FallocateMode::Native | FallocateMode::Posix | FallocateMode::Truncate => size(file)?,
        FallocateMode::Keep | FallocateMode::None => {}
    }
    #[cfg(target_os = "linux")]
    use crate::sys::AsRawFd;
    #[cfg(target_os = "linux")]
    let fd = file.as_raw_fd();
    #[cfg(target_os = "linux")]
    let len = (to - from) as libc::off_t;
    // SAFETY: plain syscalls on an open descriptor.
    #[cfg(target_os = "linux")]
    unsafe {
        match mode {
            FallocateMode::Native | FallocateMode::Posix => {
                let r = if mode == FallocateMode::Posix {
                    libc::posix_fallocate(fd, from as libc::off_t, len)
                } else if libc::fallocate(fd, 0, from as libc::off_t, len) == 0 {
                    0
                } else {
                    -1
                };
                if r != 0 {
                    // Filesystems without preallocation: fall back to size only.
                    size(file)?;
                }
            }
            FallocateMode::Keep => {
                libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, from as libc::off_t, len);
            }
            FallocateMode::Truncate => size(file)?,
            FallocateMode::None => {}
        }
    }
    Ok(())
}

/// Open flags for a job's files (`open_target` adds the safety flags).
pub fn open_flags(job: &PlannedJob) -> i32 {
    let s = &job.spec;
    // verify_only only reads.
    let writes = s.io.rw.writes() && s.io.rw != RwPattern::Read && !s.verify.verify_only;
    let mut flags = if writes {
        crate::sys::O_RDWR
    } else {
        crate::sys::O_RDONLY
    };
    // An engine whose files are not laid out for it creates them itself
    // (filecreate); the null engine opens nothing.
    let creates_itself = !s.io.ioengine.info().lays_out_files();
    if (writes && s.file.allow_file_create) || creates_itself {
        flags |= crate::sys::O_CREAT;
    }
    if s.sync.direct {
        flags |= crate::sys::O_DIRECT;
    }
    flags |= s.sync.sync_flags;
    flags
}

/// Opens a planned target so that what the safety check approved still
/// holds at open time (see `safety`), through `open` (the engine's open,
/// or a plain one), closing with `close` what must not be used.
///
/// - A path that was empty at plan time is created exclusively
///   (`O_CREAT|O_EXCL`, only for regular files and with `O_CREAT` in
///   `flags`); the file is then iomark's: marked, and remembered for the
///   rest of the run. If someone was quicker, what is there is checked.
/// - Links the plan did not see are not followed (`O_NOFOLLOW`): such a
///   link is refused. A link the user named (the plan resolved it) is
///   followed, and must lead to the approved file.
/// - The opened file must be the one approved (device, inode, type), or
///   one iomark created during this run.
/// - The open is non-blocking (`O_NONBLOCK`, cleared before any I/O), so
///   a FIFO put in a file's place cannot hang the run; an allowed FIFO
///   opened for reading then waits for a writer in steps a stop signal
///   ends.
/// - A block device the job writes to is checked again for mounts on it.
///
/// Returns the descriptor, the engine's data and how long the open call
/// that succeeded took (ns). Errors keep the errno; refusals are one line
/// naming the path and what changed.
pub fn open_target(
    spec: &JobSpec,
    f: &PlannedFile,
    flags: i32,
    what: &'static str,
    open: &mut OpenAt<'_>,
    close: &mut dyn FnMut(RawFd, usize),
) -> Result<(RawFd, usize, u64), FileError> {
    let opened = open_safely(f, flags, what, open, close)?;
    if opened.fd < 0 {
        // The engine opened nothing (filestat).
        return Ok((opened.fd, opened.data, opened.ns));
    }
    check_opened(spec, f, flags, &opened, close)?;
    Ok((opened.fd, opened.data, opened.ns))
}

/// An engine whose open deletes the file (filedelete): only when the
/// name still is the file the check approved or the run made (looked at
/// before the timed call), never through a link.
fn delete_target(f: &PlannedFile, open: &mut OpenAt<'_>) -> Result<(RawFd, usize, u64), FileError> {
    let p = place(f, false)?;
    let id = match owned::check_removable(p.fd(), &p.name, f.seen.id.as_ref()) {
        Ok(Some(id)) => id,
        Ok(None) => {
            return Err(sys_err(
                "cannot delete",
                &f.path,
                crate::sys::from_errno(libc::ENOENT),
            ))
        }
        Err(why) => {
            return Err(FileError::refused(
                libc::EEXIST,
                format!("refusing to delete '{}': {why}", f.path.display()),
            ))
        }
    };
    let t0 = std::time::Instant::now();
    let r = open(&p, 0);
    let ns = t0.elapsed().as_nanos() as u64;
    let (fd, data) = r.map_err(|e| sys_err("cannot delete", &f.path, e))?;
    owned::note_removed(&p.key(), &id);
    Ok((fd, data, ns))
}

/// A descriptor [`open_safely`] got, before [`check_opened`].
struct Opened {
    fd: RawFd,
    data: usize,
    /// How long the open that succeeded took.
    ns: u64,
    /// Created exclusively by this open: iomark's own file.
    created: bool,
}

impl Opened {
    fn new(fd: RawFd, data: usize, ns: u64, created: bool) -> Self {
        Opened {
            fd,
            data,
            ns,
            created,
        }
    }
}

/// The open itself: exclusive creation where nothing was at plan time
/// (or where the run removed its file), no links the plan did not see,
/// non-blocking (see [`open_target`]); a file that vanished during the
/// run is not made again.
fn open_safely(
    f: &PlannedFile,
    flags: i32,
    what: &'static str,
    open: &mut OpenAt<'_>,
    close: &mut dyn FnMut(RawFd, usize),
) -> Result<Opened, FileError> {
    let path = &f.path;
    let regular = matches!(f.kind, TargetKind::Regular | TargetKind::Missing);
    // Nothing is ever created through a link, nor in a device's place.
    let can_create = flags & crate::sys::O_CREAT != 0 && regular && !f.seen.link;
    let p = place(f, can_create)?;
    let mut plain = (flags & !(crate::sys::O_CREAT | crate::sys::O_EXCL | crate::sys::O_TRUNC))
        | crate::sys::O_NONBLOCK;
    if !f.seen.link {
        plain |= crate::sys::O_NOFOLLOW;
    }
    let mut timed = |fl: i32| {
        let t0 = std::time::Instant::now();
        let r = open(&p, fl);
        (r, t0.elapsed().as_nanos() as u64)
    };
    let errno = |e: &std::io::Error| crate::sys::errno_of(e).unwrap_or(libc::EIO);
    // What the run did with this name: a file it made must still be
    // there; one it removed (or an empty path) is created exclusively.
    let state = owned::name_state(&p.key());
    let vanished = match state {
        NameState::Made => Some(true),
        NameState::Unknown if f.seen.id.is_some() => Some(false),
        _ => None,
    };
    let mut create_first = state == NameState::Removed || f.seen.id.is_none() && vanished.is_none();
    let mut tries = 0;
    loop {
        tries += 1;
        if create_first && can_create {
            if let Some(o) = create_exclusively(&p, path, f.run_token(), plain, &mut timed, close)?
            {
                return Ok(o);
            }
        }
        match timed(plain) {
            (Ok((fd, data)), ns) => return Ok(Opened::new(fd, data, ns, false)),
            (Err(e), _) if errno(&e) == libc::ELOOP && !f.seen.link => {
                return Err(FileError::refused(
                    libc::ELOOP,
                    super::safety::link_refusal(path, &f.seen),
                ))
            }
            // Deleted by someone else during the run: not made again.
            (Err(e), _) if errno(&e) == libc::ENOENT && regular && vanished.is_some() => {
                return Err(FileError::Vanished {
                    path: path.clone(),
                    made: vanished == Some(true),
                })
            }
            // Someone was quicker and then removed it: try again.
            (Err(e), _) if errno(&e) == libc::ENOENT && can_create && tries < 3 => {
                create_first = true;
            }
            (Err(e), _) => return Err(sys_err(what, path, e)),
        }
    }
}

/// The exclusive create of `p`: the new file is iomark's (recorded,
/// marked, known to the signal clean-up). None when something is there
/// already (the caller opens and checks it).
fn create_exclusively(
    p: &Place,
    path: &Path,
    run_token: Option<&str>,
    plain: i32,
    timed: &mut dyn FnMut(i32) -> (std::io::Result<(RawFd, usize)>, u64),
    close: &mut dyn FnMut(RawFd, usize),
) -> Result<Option<Opened>, FileError> {
    let mut claim = owned::creating(p.key());
    match timed(plain | crate::sys::O_CREAT | crate::sys::O_EXCL) {
        (Ok((fd, data)), ns) if fd >= 0 => {
            let id = match FileId::of_fd(fd) {
                Ok(id) => id,
                Err(e) => {
                    close(fd, data);
                    return Err(sys_err("cannot stat", path, e));
                }
            };
            claim.made(id, run_token);
            super::safety::mark_created(fd, run_token);
            super::signals::note_created(p.fd(), &p.name, id.dev, id.ino);
            Ok(Some(Opened::new(fd, data, ns, true)))
        }
        (Ok((fd, data)), ns) => Ok(Some(Opened::new(fd, data, ns, false))),
        // Someone (maybe another clone) made it: checked by the caller.
        (Err(e), _) if crate::sys::errno_of(&e) == Some(libc::EEXIST) => Ok(None),
        (Err(e), _) => Err(sys_err("cannot create", path, e)),
    }
}

/// What was opened is what was approved (or iomark's own), an allowed
/// FIFO has its peer, the descriptor is blocking again, and a block
/// device written to is still unmounted; else it is closed and refused.
fn check_opened(
    spec: &JobSpec,
    f: &PlannedFile,
    flags: i32,
    o: &Opened,
    close: &mut dyn FnMut(RawFd, usize),
) -> Result<(), FileError> {
    let (path, fd, data) = (&f.path, o.fd, o.data);
    let refuse = |close: &mut dyn FnMut(RawFd, usize), errno: i32, msg: String| {
        close(fd, data);
        Err(FileError::refused(errno, msg))
    };
    let id = match FileId::of_fd(fd) {
        Ok(id) => id,
        Err(e) => {
            close(fd, data);
            return Err(sys_err("cannot stat", path, e));
        }
    };
    let peer = f.seen.id.is_none()
        && id.fmt == crate::sys::S_IFREG
        && super::safety::created_by_peer(fd, f.run_token());
    if !o.created && !peer {
        if let Err(m) = super::safety::check_identity(path, &f.seen, &id) {
            return refuse(close, libc::EEXIST, m.0);
        }
    }
    if id.fmt == crate::sys::S_IFIFO {
        let read_only = flags & crate::sys::O_ACCMODE == crate::sys::O_RDONLY;
        if let Some(m) = super::safety::wait_for_peer(fd, path, read_only) {
            return refuse(close, libc::EINTR, m);
        }
    }
    if let Err(e) = crate::sys::set_blocking(fd) {
        close(fd, data);
        return Err(sys_err("cannot set the flags of", path, e));
    }
    let nvme = f.kind == TargetKind::Nvme && id.fmt == crate::sys::S_IFCHR;
    if (id.fmt == crate::sys::S_IFBLK || nvme)
        && flags & crate::sys::O_ACCMODE != crate::sys::O_RDONLY
    {
        if let Err(m) = super::safety::recheck_opened_block(spec, path, id.rdev, nvme) {
            return refuse(close, libc::EBUSY, m.0);
        }
    }
    Ok(())
}

/// A file slot that is not open (with `openfiles`, until its turn).
pub const CLOSED: OpenedFile = OpenedFile {
    fd: -1,
    data: 0,
    size: 0,
    open_ns: 0,
};

/// Opens file `i` of the job through its engine (see [`open_target`]).
pub fn open_one(
    job: &PlannedJob,
    engine: &mut dyn Engine,
    i: usize,
    flags: i32,
) -> Result<OpenedFile, FileError> {
    let f = &job.files[i];
    let (fd, data, open_ns) = engine_open(job, engine, f, flags)?;
    advise(job, f, fd, data);
    #[cfg(target_os = "linux")]
    if fd >= 0 && job.spec.file.write_hint != 0 {
        const F_SET_RW_HINT: libc::c_int = 1036;
        let hint: u64 = job.spec.file.write_hint;
        // SAFETY: the kernel reads a u64 through the pointer.
        if unsafe { libc::fcntl(fd, F_SET_RW_HINT, &hint as *const u64) } < 0 {
            let e = std::io::Error::last_os_error();
            let _ = engine.close(fd, data, f.needed_size);
            return Err(sys_err("cannot set write_hint on", &f.path, e));
        }
    }
    if fd >= 0
        && f.kind == TargetKind::Regular
        && job.spec.file.create_on_open
        && crate::sys::fstat(fd).is_ok_and(|st| st.size < f.needed_size)
    {
        crate::sys::ftruncate(fd, f.needed_size);
    }
    Ok(OpenedFile {
        fd,
        data,
        size: f.needed_size,
        open_ns,
    })
}

/// What the engine is told of `f` at its place `p`.
fn open_file<'a>(f: &'a PlannedFile, p: &'a Place, flags: i32) -> OpenFile<'a> {
    OpenFile {
        path: &f.path,
        dir: p.fd(),
        name: &p.name,
        flags,
        size: f.needed_size,
        start: f.region.start,
        is_blockdev: f.kind == TargetKind::Block,
    }
}

/// The engine's open of `f` (through [`open_target`] unless nothing is
/// opened): descriptor, engine data and how long the open took (ns).
fn engine_open(
    job: &PlannedJob,
    engine: &mut dyn Engine,
    f: &PlannedFile,
    flags: i32,
) -> Result<(RawFd, usize, u64), FileError> {
    let opened = if f.kind == TargetKind::None {
        // The null engine: nothing is opened.
        let t0 = std::time::Instant::now();
        let p = place(f, false)?;
        let r = engine.open(&open_file(f, &p, flags));
        r.map(|(fd, data)| (fd, data, t0.elapsed().as_nanos() as u64))
            .map_err(|e| sys_err("cannot open", &f.path, e))
    } else if job.spec.io.ioengine.info().destroys == crate::engine::Destroys::Deletes {
        // The engine's open deletes the file (filedelete).
        delete_target(f, &mut |p, fl| engine.open(&open_file(f, p, fl)))
    } else {
        let eng = std::cell::RefCell::new(&mut *engine);
        open_target(
            &job.spec,
            f,
            flags,
            "cannot open",
            &mut |p, fl| eng.borrow_mut().open(&open_file(f, p, fl)),
            &mut |fd, data| {
                let _ = eng.borrow_mut().close(fd, data, f.needed_size);
            },
        )
    };
    opened.map_err(|e| {
        if e.errno() == libc::EINVAL && job.spec.sync.direct {
            FileError::NoDirectIo {
                path: f.path.clone(),
            }
        } else {
            e
        }
    })
}

/// `fadvise_hint`: tells the kernel how the file will be read. The mmap
/// engine (data != 0) advises its mapping itself.
fn advise(job: &PlannedJob, f: &PlannedFile, fd: RawFd, data: usize) {
    let advice = job.spec.file.fadvise_hint.random(job.spec.io.rw);
    if let (Some(random), true, 0) = (
        advice,
        fd >= 0
            && matches!(
                f.kind,
                TargetKind::Regular | TargetKind::Missing | TargetKind::Block
            ),
        data,
    ) {
        #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
        let _ = (random, fd);
        #[cfg(any(target_os = "linux", target_os = "freebsd"))]
        let how = if random {
            libc::POSIX_FADV_RANDOM
        } else {
            libc::POSIX_FADV_SEQUENTIAL
        };
        // SAFETY: advisory call on the descriptor just opened; a failure
        // changes no data, so it is ignored as fio ignores it. (Advice
        // exists on Linux and FreeBSD only.)
        #[cfg(any(target_os = "linux", target_os = "freebsd"))]
        unsafe {
            libc::posix_fadvise(
                fd,
                f.region.start as libc::off_t,
                f.region.len as libc::off_t,
                how,
            );
        }
    }
}

/// Opens the files listed in `which` (the others stay closed).
pub fn open_all(
    job: &PlannedJob,
    engine: &mut dyn Engine,
    which: &[u32],
) -> Result<Vec<OpenedFile>, FileError> {
    let flags = open_flags(job);
    let mut out: Vec<OpenedFile> = job.files.iter().map(|_| CLOSED).collect();
    for &i in which {
        out[i as usize] = open_one(job, engine, i as usize, flags)?;
    }
    Ok(out)
}

/// Reads the job's regions once so they are in the page cache
/// (`pre_read`). Uses its own buffered descriptor.
pub fn pre_read(job: &PlannedJob) -> Result<(), FileError> {
    use crate::sys::ext::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    for f in &job.files {
        if !matches!(
            f.kind,
            TargetKind::Regular | TargetKind::Block | TargetKind::Missing
        ) {
            continue;
        }
        let opened = open_target(
            &job.spec,
            f,
            crate::sys::O_RDONLY,
            "cannot pre-read",
            &mut |p, fl| open_plain(p, fl).map(|fd| (fd, 0)),
            &mut |fd, _| {
                let _ = close_fd(fd);
            },
        );
        let file = match opened {
            // SAFETY: the descriptor was just opened and is owned here.
            Ok((fd, _, _)) => unsafe { std::fs::File::from_raw_fd(fd) },
            // Created on open: nothing to read yet.
            Err(e) if e.errno() == libc::ENOENT => continue,
            Err(e) => return Err(e),
        };
        let (mut pos, end) = (f.region.start, f.region.start + f.region.len);
        while pos < end {
            let n = ((end - pos) as usize).min(buf.len());
            match file.read_at(&mut buf[..n], pos) {
                Ok(0) => break,
                Ok(k) => pos += k as u64,
                Err(e) => return Err(sys_err("cannot pre-read", &f.path, e)),
            }
        }
    }
    Ok(())
}

/// Removes the job's regular files (`unlink`, `unlink_each_loop`):
/// through their directory's handle, each only while its name still is
/// the file the check approved or the run made (see `owned::remove`);
/// what is left alone is said once on stderr.
pub fn unlink_all(job: &PlannedJob) {
    for f in &job.files {
        if !matches!(f.kind, TargetKind::Regular | TargetKind::Missing) {
            continue;
        }
        let Some(p) = place_if_there(f) else {
            continue;
        };
        if let Err(why) = owned::remove(p.fd(), &p.name, f.seen.id.as_ref()) {
            super::output::stderr_line(&format!(
                "iomark: warning: job '{}': left '{}' in place: {why}",
                job.spec.name,
                f.path.display()
            ));
        }
    }
}

/// Drops cached pages of the job's regions (regular files and devices).
pub fn invalidate(job: &PlannedJob, files: &[OpenedFile]) {
    for (pf, of) in job.files.iter().zip(files) {
        if of.fd < 0 {
            continue;
        }
        match pf.kind {
            TargetKind::Regular | TargetKind::Missing => {
                // Where there is no call to drop a file's cached pages,
                // the page-cache warnings say so.
                crate::sys::drop_file_cache(of.fd);
            }
            #[cfg(target_os = "linux")]
            TargetKind::Block => {
                // (libc::Ioctl: the request's type, an unsigned long with glibc, an
                // int with musl; the bits are the same.)
                const BLKFLSBUF: libc::Ioctl = 0x1261u32 as libc::Ioctl;
                // SAFETY: BLKFLSBUF takes no argument; failure is harmless.
                unsafe {
                    libc::ioctl(of.fd, BLKFLSBUF, 0);
                }
            }
            _ => {}
        }
    }
}

/// With `direct=1`, every block size and region start must be a multiple
/// of the target's direct I/O alignment, or the kernel fails the I/O with
/// EINVAL; say so before the first I/O, naming the value and the target.
pub fn check_direct_alignment(job: &PlannedJob) -> Result<(), FileError> {
    let s = &job.spec;
    let mut sizes: Vec<(&'static str, u64)> = Vec::new();
    for d in [Ddir::Read, Ddir::Write, Ddir::Trim] {
        if !s.io.rw.has(d) {
            continue;
        }
        match &s.io.bs[d.idx()] {
            crate::job::spec::BlockSizes::Range { lo, hi } => {
                sizes.push(("bs", *lo));
                sizes.push(("bs", *hi));
            }
            crate::job::spec::BlockSizes::Split(entries) => {
                for e in entries {
                    sizes.push(("bssplit", e.lo));
                    sizes.push(("bssplit", e.hi));
                }
            }
        }
    }
    for f in &job.files {
        let Some(a) = crate::engine::align::dio_alignment(&f.path) else {
            continue;
        };
        let mut values = sizes.clone();
        values.push(("offset", f.region.start));
        if let Some((what, v)) = values.iter().find(|(_, v)| v % a.offset != 0) {
            return Err(FileError::Misaligned {
                what,
                value: *v,
                align: a.offset,
                path: f.path.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Plans one job on `path` (options added) and returns it.
    fn planned(path: &Path, opts: &[(&str, &str)]) -> PlannedJob {
        let name = crate::job::opt_path(path);
        let mut all = vec![("filename", name.as_str()), ("size", "64k")];
        all.extend_from_slice(opts);
        let spec = crate::job::test_spec(&all);
        super::super::plan::plan(&[spec]).unwrap().jobs.remove(0)
    }

    /// Opens the job's first file as a worker would, with a plain open.
    fn open(job: &PlannedJob, flags: i32) -> Result<RawFd, FileError> {
        let f = &job.files[0];
        open_target(
            &job.spec,
            f,
            flags,
            "cannot open",
            &mut |p, fl| open_plain(p, fl).map(|fd| (fd, 0)),
            &mut |fd, _| {
                let _ = close_fd(fd);
            },
        )
        .map(|(fd, _, _)| {
            let _ = close_fd(fd);
            fd
        })
    }

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.dat");
        std::fs::write(&victim, b"precious").unwrap();
        let target = dir.path().join("later.dat");
        (dir, victim, target)
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_link_put_where_nothing_was_is_not_followed() {
        let (_d, victim, target) = setup();
        let job = planned(&target, &[("rw", "write")]);
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        let e = layout(&job, &mut Vec::new()).unwrap_err();
        assert_eq!(e.errno(), libc::ELOOP, "{e}");
        assert!(e.to_string().contains("now a symbolic link to"), "{e}");
        assert!(e.to_string().contains("later.dat"), "{e}");
        let e = open(&job, crate::sys::O_RDWR | crate::sys::O_CREAT).unwrap_err();
        assert_eq!(e.errno(), libc::ELOOP, "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!super::super::safety::created_by_iomark(&victim));
    }

    #[test]
    fn a_file_that_appears_after_the_check_is_refused() {
        let (_d, victim, target) = setup();
        let job = planned(&target, &[("rw", "write")]);
        std::fs::hard_link(&victim, &target).unwrap();
        let e = layout(&job, &mut Vec::new()).unwrap_err();
        assert_eq!(e.errno(), libc::EEXIST, "{e}");
        assert!(
            e.to_string()
                .contains("did not exist when the run was checked"),
            "{e}"
        );
        let e = open(&job, crate::sys::O_RDWR | crate::sys::O_CREAT).unwrap_err();
        assert!(e.to_string().contains("iomark did not create"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn new_files_are_created_exclusively_and_reused_in_the_run() {
        let (_d, _victim, target) = setup();
        let job = planned(&target, &[("rw", "write")]);
        layout(&job, &mut Vec::new()).unwrap();
        assert_eq!(std::fs::metadata(&target).unwrap().len(), 64 << 10);
        // The file's identity as the run records it (through a handle:
        // on Windows `std::fs::Metadata` holds no file index).
        let id = FileId::of_stat(&crate::sys::stat_path(&target, false).unwrap());
        assert!(super::super::safety::created_this_run(&id));
        // The job (and a later one) may open what iomark created.
        open(&job, crate::sys::O_RDWR | crate::sys::O_CREAT).unwrap();
        unlink_all(&job);
        assert!(!super::super::safety::created_this_run(&id));
        // Gone: created anew at open.
        open(&job, crate::sys::O_RDWR | crate::sys::O_CREAT).unwrap();
        assert!(target.exists());
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_replaced_file_is_refused_and_a_fifo_does_not_block() {
        let (_d, victim, _) = setup();
        let job = planned(&victim, &[("rw", "read"), ("size", "8"), ("bs", "8")]);
        std::fs::remove_file(&victim).unwrap();
        std::fs::write(&victim, b"another").unwrap();
        let e = open(&job, crate::sys::O_RDONLY).unwrap_err();
        assert!(e.to_string().contains("no longer the regular file"), "{e}");
        std::fs::remove_file(&victim).unwrap();
        let c = crate::engine::file::cstring(&victim).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // A read-only open of a FIFO would wait for a writer: it returns.
        let e = open(&job, crate::sys::O_RDONLY).unwrap_err();
        assert!(
            e.to_string().contains("was a regular file") && e.to_string().contains("is now a FIFO"),
            "{e}"
        );
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_link_the_user_named_is_followed_while_it_leads_to_the_checked_file() {
        let (d, victim, target) = setup();
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        let job = planned(&target, &[("rw", "read"), ("size", "8"), ("bs", "8")]);
        assert!(job.files[0].seen.link);
        open(&job, crate::sys::O_RDONLY).unwrap();
        let other = d.path().join("other.dat");
        std::fs::write(&other, b"other file").unwrap();
        std::fs::remove_file(&target).unwrap();
        std::os::unix::fs::symlink(&other, &target).unwrap();
        let e = open(&job, crate::sys::O_RDONLY).unwrap_err();
        assert!(e.to_string().contains("now leads elsewhere"), "{e}");
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_dangling_link_is_refused_when_planning() {
        let (d, _victim, target) = setup();
        std::os::unix::fs::symlink(d.path().join("nowhere"), &target).unwrap();
        let spec = crate::job::test_spec(&[
            ("filename", target.to_str().unwrap()),
            ("size", "64k"),
            ("rw", "write"),
        ]);
        let e = super::super::plan::plan(&[spec]).unwrap_err();
        assert!(e.to_string().contains("never through a link"), "{e}");
        assert!(!d.path().join("nowhere").exists());
    }
}
