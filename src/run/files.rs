//! Laying out and opening a job's files: creating or extending regular
//! files before the timed phase (written with data when the job reads or
//! `overwrite` is set, otherwise preallocated as `fallocate` says), open
//! flags from the job's options (`direct`, `sync`), reading them into the
//! page cache (`pre_read`), dropping cached pages (`invalidate`) and
//! removing them (`unlink`).

use std::io::Write;
use std::os::fd::RawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::plan::{PlannedFile, PlannedJob, TargetKind};
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

/// Whether laying out a file must write its data (not only size it).
fn layout_writes_data(job: &PlannedJob, no_extend: bool) -> bool {
    let s = &job.spec;
    s.io.rw.has(crate::job::spec::Ddir::Read)
        || s.file.overwrite
        || no_extend
        || s.verify.verify_only
}

/// A failure while laying out, opening or pre-reading a file: the errno
/// a job reports (`err=`) and the message in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub errno: i32,
    pub msg: String,
}

impl FileError {
    pub fn new(errno: i32, msg: String) -> Self {
        FileError { errno, msg }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

fn sys_err(what: &str, path: &Path, e: std::io::Error) -> FileError {
    FileError::new(
        e.raw_os_error().unwrap_or(libc::EIO),
        format!(
            "{what} '{}': {}",
            path.display(),
            crate::job::jobfile::io_reason(&e)
        ),
    )
}

/// `opendir`: adds every regular file below the directory, recursively
/// and in name order, to the job's file names (after any `filename`).
pub fn expand_opendir(spec: &mut JobSpec) -> Result<(), String> {
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
        format!(
            "job '{}': opendir '{dir}': {}",
            spec.name,
            crate::job::jobfile::io_reason(&e)
        )
    })?;
    if found.is_empty() {
        return Err(format!(
            "job '{}': opendir '{dir}' holds no regular files",
            spec.name
        ));
    }
    spec.file.filenames.extend(found);
    Ok(())
}

/// Creates or extends the regular files of a job that are too small.
/// Returns the notices to print ("Laying out IO file …").
pub fn layout(
    job: &PlannedJob,
    no_extend: bool,
    done: &mut Vec<std::path::PathBuf>,
) -> Result<Vec<String>, FileError> {
    let mut notes = Vec::new();
    let s = &job.spec;
    if s.log.read_iolog.is_some() {
        // A replay uses the trace's files as they are.
        return Ok(notes);
    }
    let mut todo: Vec<&PlannedFile> = Vec::new();
    for f in &job.files {
        if done.contains(&f.path) {
            continue;
        }
        // Re-check: an earlier job may have created it.
        let existing = std::fs::metadata(&f.path).map(|m| m.len()).ok();
        let needs = match f.kind {
            TargetKind::Regular | TargetKind::Missing => {
                existing.is_none_or(|sz| sz < f.needed_size)
            }
            _ => false,
        };
        if needs {
            if existing.is_none() && !s.file.allow_file_create {
                return Err(FileError::new(
                    libc::ENOENT,
                    format!(
                        "job '{}': '{}' does not exist and allow_file_create=0",
                        s.name,
                        f.path.display()
                    ),
                ));
            }
            if s.file.create_on_open && !layout_writes_data(job, no_extend) {
                // Created when opened.
                continue;
            }
            todo.push(f);
        }
    }
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
    let write_data = layout_writes_data(job, no_extend);
    let chunk = 1usize << 20;
    let mut buf = vec![0u8; chunk];
    // The same contents the job's writes would have, block by block.
    let d = if s.io.rw.has(Ddir::Write) {
        Ddir::Write
    } else {
        Ddir::Read
    };
    let bs = (s.io.bs[d.idx()].min() as usize).clamp(1, chunk);
    let mut filler = BufferFiller::new(s, chunk, total, job.seed ^ 77);
    for f in todo {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&f.path)
            .map_err(|e| sys_err("cannot create", &f.path, e))?;
        let existing = file.metadata().map(|m| m.len()).unwrap_or(0);
        if existing == 0 {
            // The file holds nothing but what iomark writes: mark it ours.
            super::safety::mark_created(&f.path);
        }
        if write_data {
            use std::io::{Seek, SeekFrom};
            file.seek(SeekFrom::Start(existing))
                .map_err(|e| sys_err("cannot seek in", &f.path, e))?;
            let mut left = f.needed_size - existing;
            let mut pos = existing;
            while left > 0 {
                if super::signals::received() {
                    // Stopped: a large layout must not delay the stop.
                    return Err(FileError::new(
                        libc::EINTR,
                        format!("laying out '{}' was stopped by a signal", f.path.display()),
                    ));
                }
                let n = left.min(chunk as u64) as usize;
                filler.fill_layout(&mut buf[..n], pos, bs);
                pos += n as u64;
                file.write_all(&buf[..n])
                    .map_err(|e| sys_err("cannot lay out", &f.path, e))?;
                left -= n as u64;
            }
            if s.file.create_fsync {
                file.sync_all()
                    .map_err(|e| sys_err("cannot sync", &f.path, e))?;
            }
        } else if !s.file.fill_device {
            // fill_device writes until the space runs out: reserve nothing.
            preallocate(&file, s.file.fallocate, existing, f.needed_size, &f.path)?;
        }
        done.push(f.path.clone());
    }
    Ok(notes)
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
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let len = (to - from) as libc::off_t;
    let size = |f: &std::fs::File| f.set_len(to).map_err(|e| sys_err("cannot size", path, e));
    // SAFETY: plain syscalls on an open descriptor.
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

/// Open flags for a job's files.
pub fn open_flags(job: &PlannedJob) -> i32 {
    let s = &job.spec;
    // verify_only only reads.
    let writes = s.io.rw.writes() && s.io.rw != RwPattern::Read && !s.verify.verify_only;
    let mut flags = if writes { libc::O_RDWR } else { libc::O_RDONLY };
    if writes && s.file.allow_file_create {
        flags |= libc::O_CREAT;
    }
    if s.sync.direct {
        flags |= libc::O_DIRECT;
    }
    flags |= s.sync.sync_flags;
    flags
}

/// A file slot that is not open (with `openfiles`, until its turn).
pub const CLOSED: OpenedFile = OpenedFile {
    fd: -1,
    data: 0,
    size: 0,
    open_ns: 0,
};

/// Opens file `i` of the job through its engine.
pub fn open_one(
    job: &PlannedJob,
    engine: &mut dyn Engine,
    i: usize,
    flags: i32,
) -> Result<OpenedFile, FileError> {
    let f = &job.files[i];
    let of = OpenFile {
        path: &f.path,
        flags,
        size: f.needed_size,
        is_blockdev: f.kind == TargetKind::Block,
    };
    let t0 = std::time::Instant::now();
    let opened = engine.open(&of);
    let open_ns = t0.elapsed().as_nanos() as u64;
    if opened.is_ok() && f.kind == TargetKind::Missing {
        super::safety::mark_created(&f.path);
    }
    let (fd, data) = opened.map_err(|e| {
        if e.raw_os_error() == Some(libc::EINVAL) && job.spec.sync.direct {
            FileError::new(
                libc::EINVAL,
                format!(
                    "cannot open '{}' with direct=1: the filesystem does not support direct I/O (use direct=0)",
                    f.path.display()
                ),
            )
        } else {
            sys_err("cannot open", &f.path, e)
        }
    })?;
    // The mmap engine (data != 0) advises its mapping itself.
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
        let how = if random {
            libc::POSIX_FADV_RANDOM
        } else {
            libc::POSIX_FADV_SEQUENTIAL
        };
        // SAFETY: advisory call on the descriptor just opened; a failure
        // changes no data, so it is ignored as fio ignores it.
        unsafe {
            libc::posix_fadvise(
                fd,
                f.region.start as libc::off_t,
                f.region.len as libc::off_t,
                how,
            );
        }
    }
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
    if fd >= 0 && f.kind == TargetKind::Regular && job.spec.file.create_on_open {
        // SAFETY: fstat/ftruncate on the descriptor just opened.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } == 0 && (st.st_size as u64) < f.needed_size {
            unsafe { libc::ftruncate(fd, f.needed_size as libc::off_t) };
        }
    }
    Ok(OpenedFile {
        fd,
        data,
        size: f.needed_size,
        open_ns,
    })
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
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    for f in &job.files {
        if !matches!(
            f.kind,
            TargetKind::Regular | TargetKind::Block | TargetKind::Missing
        ) {
            continue;
        }
        let file = match std::fs::File::open(&f.path) {
            Ok(file) => file,
            // Created on open: nothing to read yet.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(sys_err("cannot pre-read", &f.path, e)),
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

/// Removes the job's regular files (`unlink`, `unlink_each_loop`).
pub fn unlink_all(job: &PlannedJob) {
    for f in &job.files {
        if matches!(f.kind, TargetKind::Regular | TargetKind::Missing) {
            let _ = std::fs::remove_file(&f.path);
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
                // SAFETY: advisory call on an open descriptor.
                unsafe {
                    libc::posix_fadvise(of.fd, 0, 0, libc::POSIX_FADV_DONTNEED);
                }
            }
            TargetKind::Block => {
                const BLKFLSBUF: libc::c_ulong = 0x1261;
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
    let mut sizes: Vec<(&str, u64)> = Vec::new();
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
            return Err(FileError::new(
                libc::EINVAL,
                format!(
                    "{what}={v} is not a multiple of {}, the direct I/O alignment of '{}' \
                     (direct=1 needs aligned sizes and offsets)",
                    a.offset,
                    f.path.display()
                ),
            ));
        }
    }
    Ok(())
}
