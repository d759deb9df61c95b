//! The run plan: reporting groups and execution phases (stonewall), job
//! clones (numjobs), dependencies (`wait_for`), and for each clone the
//! files it uses, their sizes, the region of each it does I/O to and how
//! many bytes a loop does (size is spread evenly over `nrfiles`; with
//! `filesize` each file gets its own size and `size` only caps the I/O).
//!
//! Planning only looks at the targets (stat, device size); it creates and
//! writes nothing. Errors name the job and the file. It ends with the
//! engines' preflight checks and the data-safety checks (`safety`).

use crate::sys::ext::FileTypeExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::RunError;
use super::place::Placement;
use super::region::{self, Probed, FILL_UNBOUNDED};
use super::safety::{FileId, Seen};
use crate::job::spec::JobSpec;
use crate::workload::iolog::{self, Trace};
use crate::workload::{Limits, Region};

/// What a target path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    Regular,
    Block,
    /// An NVMe generic character device (`/dev/ngXnY`): its size is the
    /// namespace's (Identify Namespace), the safety check treats it as the
    /// namespace's block device, and only `ioengine=io_uring_cmd` uses it.
    Nvme,
    Char,
    /// A FIFO (named pipe): refused unless `allow_special_files=1`.
    Fifo,
    Missing,
    /// The null engine: nothing is opened.
    None,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlannedFile {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Size the target has now (0 when missing).
    pub existing_size: u64,
    /// Size the file must have before I/O (regular files are extended).
    pub needed_size: u64,
    pub region: Region,
    /// What the safety check saw at the path (identity, link): the open
    /// must find the same file there (see `safety`).
    pub seen: Seen,
    /// `zonemode=zbd`: the file's zone geometry (see `run::zoned`).
    pub zbd: Option<super::zoned::ZbdGeom>,
    /// The token of the run over many ranks this file belongs to
    /// (`Placement::run_token`): a file iomark creates carries it, and a
    /// file that carries it was made by another rank of this run.
    pub run_token: Option<Arc<str>>,
    /// Another rank of the run uses this file too (one shared file): the
    /// ranks lay it out in turn.
    pub shared: bool,
}

impl PlannedFile {
    /// The token of the run over many ranks this file belongs to, if any.
    pub fn run_token(&self) -> Option<&str> {
        self.run_token.as_deref()
    }
}

#[derive(Clone, Debug)]
pub struct PlannedJob {
    pub spec: Arc<JobSpec>,
    /// Index of the job (section) this clone belongs to.
    pub job_index: usize,
    pub clone: u32,
    /// Reporting group id (fio's groupid).
    pub group: u32,
    /// Execution phase: a stonewall starts a new one.
    pub phase: u32,
    pub files: Vec<PlannedFile>,
    /// How much I/O a loop does, and `io_size` when given.
    pub limits: Limits,
    /// Position of this clone among all the run's workers (CPU split).
    pub worker_index: u32,
    /// Index of the job (section) whose clones must all finish first.
    pub wait_for: Option<usize>,
    /// Seed for this clone's random streams.
    pub seed: u64,
    /// The clone's place among all the run's clones, from 1, as fio
    /// numbers its threads: it seeds the draws made as fio makes them
    /// (`workload::taus`).
    pub thread_number: u64,
    /// `read_iolog`: the trace to replay (loaded when the job's phase
    /// starts if an earlier job of the run writes it).
    pub trace: Option<Arc<Trace>>,
    /// `dedupe_global`: this clone's part in the run-wide dedupe set.
    pub dedupe_share: Option<crate::workload::buffers::DedupeShare>,
    /// The token of the run over many ranks (`Placement::run_token`),
    /// given to each of its files.
    pub run_token: Option<Arc<str>>,
}

impl PlannedJob {
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// A replay job whose trace is not loaded yet.
    pub fn needs_trace(&self) -> bool {
        self.spec.log.read_iolog.is_some() && self.trace.is_none()
    }
}

/// Loads a replay job's trace when its phase starts (an earlier phase
/// wrote it), with the checks `plan` makes for the other jobs.
pub fn resolve_deferred_replay(job: &mut PlannedJob) -> Result<(), RunError> {
    resolve_replay(job)?;
    super::safety::check(&Plan {
        jobs: vec![job.clone()],
        ..Plan::default()
    })?;
    Ok(())
}

/// Loads the trace of a replay job and plans its files from it: the
/// trace's files (or `replay_redirect`), used as they are, not laid out.
pub fn resolve_replay(job: &mut PlannedJob) -> Result<(), RunError> {
    let spec = &job.spec;
    let name = iolog::trace_name(&spec.log, job.clone)
        .ok_or_else(|| RunError::Plan(format!("job '{}': read_iolog names no file", spec.name)))?;
    let trace = iolog::load(&name, &spec.log)
        .map_err(|e| RunError::Plan(format!("job '{}': {e}", spec.name)))?;
    let mut s = (**spec).clone();
    iolog::adjust_spec(&mut s, &trace);
    crate::engine::preflight(&s)?;
    let diskless = s.io.ioengine.info().caps.diskless;
    let mut files = Vec::with_capacity(trace.files.len());
    for (i, path) in trace.files.iter().enumerate() {
        let (kind, existing, seen) = if diskless {
            (TargetKind::None, 0, Seen::default())
        } else {
            probe(path, s.engine.nvme.pi_act)?
        };
        super::safety::check_special(&s, path, kind, &seen)?;
        let extent = trace.extent(i as u32);
        files.push(PlannedFile {
            path: path.clone(),
            kind,
            existing_size: existing,
            needed_size: existing,
            region: Region {
                start: 0,
                len: extent.max(existing).max(1),
            },
            seen,
            zbd: None,
            run_token: job.run_token.clone(),
            shared: false,
        });
    }
    let bytes = trace.bytes().iter().sum();
    job.limits = Limits {
        bytes,
        io_size: None,
        size: bytes,
    };
    job.files = files;
    job.spec = Arc::new(s);
    job.trace = Some(Arc::new(trace));
    Ok(())
}

#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub jobs: Vec<PlannedJob>,
    /// Where the run stands among the ranks of a run over many hosts
    /// (one rank of one alone).
    pub place: Placement,
}

impl Plan {
    pub fn phases(&self) -> u32 {
        self.jobs.iter().map(|j| j.phase + 1).max().unwrap_or(0)
    }
}

/// Size of a block device in bytes.
#[cfg(not(target_os = "linux"))]
pub fn blockdev_size(path: &Path) -> std::io::Result<u64> {
    let c = crate::engine::file::cstring(path)?;
    let fd = crate::sys::open_at(crate::sys::AT_FDCWD, &c, crate::sys::O_RDONLY, 0)?;
    let mut f = std::fs::File::from(fd);
    // A disk or volume's length (Windows: its fstat; elsewhere the end).
    #[cfg(windows)]
    let _ = &mut f;
    #[cfg(windows)]
    return crate::sys::fstat(crate::sys::AsRawFd::as_raw_fd(&f)).map(|st| st.size);
    #[cfg(unix)]
    std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0))
}

/// Size of a block device in bytes.
#[cfg(target_os = "linux")]
pub fn blockdev_size(path: &Path) -> std::io::Result<u64> {
    use crate::sys::AsRawFd;
    // (libc::Ioctl: the request's type, an unsigned long with glibc, an
    // int with musl; the bits are the same.)
    const BLKGETSIZE64: libc::Ioctl = 0x8008_1272u32 as libc::Ioctl;
    let f = std::fs::File::open(path)?;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// The size in bytes of the NVMe namespace whose generic character
/// device is `path`, as passthrough commands address it (with extended
/// LBAs, the metadata that travels inline counts: fio's size too).
fn nvme_size(path: &Path, pi_act: bool) -> std::io::Result<u64> {
    use crate::sys::AsRawFd;
    let f = crate::host::nvme::open_probe(path)?;
    crate::host::nvme::identify_namespace(f.as_raw_fd()).map(|ns| ns.passthrough_bytes(pi_act))
}

/// A target the plan cannot look at, in one line.
fn access_error(path: &Path, e: std::io::Error) -> RunError {
    RunError::Plan(format!(
        "cannot access '{}': {}",
        crate::job::value::excerpt(&path.to_string_lossy()),
        crate::job::jobfile::io_reason(&e)
    ))
}

/// What is at a target path, its size, and what the safety check sees
/// there (identity, whether the path is a symbolic link, which the open
/// may then follow, and the handle of its directory, opened now: every
/// later look and open goes through it).
fn probe(path: &Path, pi_act: bool) -> Result<(TargetKind, u64, Seen), RunError> {
    #[cfg(windows)]
    if crate::sys::is_device_path(path) {
        return probe_windows_device(path);
    }
    // `COM1`, `con.txt`: Windows opens a device for these names.
    #[cfg(windows)]
    if let Some(r) = crate::sys::names::reserved_in(path) {
        return Err(RunError::Plan(format!(
            "refusing '{}': {}; name it otherwise",
            crate::job::value::excerpt(&path.to_string_lossy()),
            r.reason()
        )));
    }
    let access = |e| access_error(path, e);
    let dir = super::dirs::Dir::of(path).map_err(access)?;
    let name = super::dirs::file_name(path).map_err(|_| {
        RunError::Plan(format!(
            "'{}' is a directory (use directory= for a place to create files)",
            path.display()
        ))
    })?;
    let missing = Seen {
        dir: Some(dir.clone()),
        ..Seen::default()
    };
    let Some(fd) = dir.resolved() else {
        // Its directory does not exist yet: created with the file.
        return Ok((TargetKind::Missing, 0, missing));
    };
    let at = |follow| super::dirs::stat_at(crate::sys::AsRawFd::as_raw_fd(&*fd), &name, follow);
    let link = at(false).is_ok_and(|m| m.file_type().is_symlink());
    #[cfg(windows)]
    refuse_reparse_point(crate::sys::AsRawFd::as_raw_fd(&*fd), &name, path)?;
    match at(true) {
        Ok(m) => {
            let id = FileId::at(crate::sys::AsRawFd::as_raw_fd(&*fd), &name, true, &m)
                .map_err(access)?;
            let seen = Seen {
                link,
                id: Some(id),
                dir: Some(dir),
            };
            probed_kind(path, &m, seen, pi_act)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && link => Err(RunError::Plan(format!(
            "'{}' is a symbolic link to '{}', which does not exist: iomark creates files only \
             where nothing is, never through a link (name the file itself)",
            path.display(),
            std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((TargetKind::Missing, 0, missing)),
        Err(e) => Err(access(e)),
    }
}

/// Refuses a target that is a reparse point (a symbolic link, a
/// junction, or a point a filter keeps: cloud files, deduplication)
/// unless it is a link that leads to a file iomark created (it carries
/// iomark's mark, or this run made it): on Windows iomark does not go
/// through reparse points to other files.
#[cfg(windows)]
fn refuse_reparse_point(
    dir: crate::sys::RawFd,
    name: &std::ffi::CStr,
    path: &Path,
) -> Result<(), RunError> {
    use crate::sys::AsRawFd;
    let flags = crate::sys::O_PATH | crate::sys::O_NOFOLLOW;
    let Ok(point) = super::dirs::open_at(dir, name, flags, 0) else {
        return Ok(());
    };
    let Some(tag) = crate::sys::reparse_tag(point.as_raw_fd()) else {
        return Ok(());
    };
    let own = crate::sys::is_name_surrogate(tag)
        && super::dirs::open_at(dir, name, crate::sys::O_RDONLY, 0).is_ok_and(|f| {
            super::safety::marked(f.as_raw_fd())
                || FileId::of_fd(f.as_raw_fd()).is_ok_and(|id| super::safety::created_this_run(&id))
        });
    if own {
        return Ok(());
    }
    Err(RunError::Plan(format!(
        "refusing '{}': it is {}, and on Windows iomark goes through reparse points only to \
         files it created (name the file itself)",
        crate::job::value::excerpt(&path.to_string_lossy()),
        crate::sys::reparse_kind(tag)
    )))
}

/// A disk or volume on Windows (`\\.\PhysicalDriveN`, `\\.\X:`,
/// `\\?\Volume{…}`): a block device with no directory of its own,
/// opened by its name; its identity is its device number.
#[cfg(windows)]
fn probe_windows_device(path: &Path) -> Result<(TargetKind, u64, Seen), RunError> {
    let name = path.to_string_lossy();
    let shown = crate::job::value::excerpt(&name);
    let access = |e| access_error(path, e);
    let c = crate::engine::file::cstring(path).map_err(access)?;
    let fd =
        crate::sys::open_at(crate::sys::AT_FDCWD, &c, crate::sys::O_PATH, 0).map_err(access)?;
    let st = crate::sys::fstat(crate::sys::AsRawFd::as_raw_fd(&fd)).map_err(access)?;
    // Wine can back a drive letter with an image file (its
    // `dosdevices/x::` link), which it then shows as that file: the
    // volume is the file, as long as the file is.
    if st.fmt != crate::sys::S_IFBLK && st.fmt != crate::sys::S_IFREG {
        return Err(RunError::Plan(format!(
            "'{shown}' is not a disk or volume here (the system gives it no length): name a \
             disk as \\\\.\\PhysicalDriveN or a volume as \\\\.\\X\\: (the colon escaped)"
        )));
    }
    let seen = Seen {
        link: false,
        id: Some(FileId::of_stat(&st)),
        dir: None,
    };
    Ok((TargetKind::Block, st.size, seen))
}

/// The kind and size of what `probe` found at `path`.
fn probed_kind(
    path: &Path,
    m: &std::fs::Metadata,
    seen: Seen,
    pi_act: bool,
) -> Result<(TargetKind, u64, Seen), RunError> {
    let ft = m.file_type();
    if ft.is_block_device() {
        let size = blockdev_size(path).map_err(|e| {
            RunError::Plan(format!("cannot get the size of '{}': {e}", path.display()))
        })?;
        Ok((TargetKind::Block, size, seen))
    } else if ft.is_char_device()
        && crate::host::nvme::is_generic(crate::sys::ext::MetadataExt::rdev(m))
    {
        let size = nvme_size(path, pi_act).map_err(|e| {
            RunError::Plan(format!(
                "cannot identify the NVMe namespace of '{}': {e}",
                path.display()
            ))
        })?;
        Ok((TargetKind::Nvme, size, seen))
    } else if ft.is_char_device() {
        Ok((TargetKind::Char, 0, seen))
    } else if ft.is_fifo() {
        Ok((TargetKind::Fifo, 0, seen))
    } else if ft.is_socket() {
        Err(RunError::Plan(format!(
            "'{}' is a socket: iomark does I/O to files and devices",
            path.display()
        )))
    } else if ft.is_dir() {
        Err(RunError::Plan(format!(
            "'{}' is a directory (use directory= for a place to create files)",
            path.display()
        )))
    } else {
        Ok((TargetKind::Regular, m.len(), seen))
    }
}

/// A rank of a run over many hosts writes its own logs and
/// `write_iolog` traces (`NAME.TAG`), and a later job replaying one
/// reads the rank's own.
fn tag_files(jobs: &[JobSpec], tag: &str) -> Vec<JobSpec> {
    let written: Vec<String> = jobs
        .iter()
        .filter_map(|j| j.log.write_iolog.clone())
        .collect();
    let mut out = jobs.to_vec();
    for j in &mut out {
        j.log.file_tag = tag.to_string();
        if let Some(w) = &mut j.log.write_iolog {
            *w = format!("{w}.{tag}");
        }
        if let Some(r) = &mut j.log.read_iolog {
            if written.contains(r) {
                *r = format!("{r}.{tag}");
            }
        }
    }
    out
}

/// The same job on the next rank of a run over many (to find the files
/// ranks share).
struct Elsewhere {
    spec: Option<JobSpec>,
    rank: u32,
}

impl Elsewhere {
    fn of(jobs: &[JobSpec], ji: usize, place: &Placement) -> Elsewhere {
        if place.ranks < 2 {
            return Elsewhere {
                spec: None,
                rank: 0,
            };
        }
        let rank = (place.rank + 1) % place.ranks;
        let mut spec = jobs[ji].clone();
        let other = Placement {
            rank,
            ..place.clone()
        };
        spec.file.filename_format = place_names(&jobs[ji].file.filename_format, &other);
        Elsewhere {
            spec: Some(spec),
            rank,
        }
    }

    /// Gives the files of clone `local` of `job` this run's token, and
    /// marks those the same clone on the next rank uses too (`shared`).
    fn mark(&self, job: &mut PlannedJob, local: u32) {
        let theirs = match &self.spec {
            Some(s) => clone_paths(s, self.rank * s.ctl.numjobs + local),
            None => Vec::new(),
        };
        for f in &mut job.files {
            f.run_token = job.run_token.clone();
            f.shared = theirs.contains(&f.path);
        }
    }
}

/// The structure of a job list, one line per job: what must be the same
/// on every rank of a run over many hosts (sections, clones, groups,
/// stonewalls, directions, file naming; sizes and times may differ).
pub fn structure(jobs: &[JobSpec]) -> String {
    let mut out = String::new();
    for j in jobs {
        let f = &j.file;
        let c = &j.ctl;
        out.push_str(&format!(
            "job '{}': numjobs={} rw={}{}{}{}{} {}{}\n",
            j.name,
            c.numjobs,
            j.io.rw.name(),
            if c.stonewall { " stonewall" } else { "" },
            if c.new_group { " new_group" } else { "" },
            if j.stat.group_reporting {
                " group_reporting"
            } else {
                ""
            },
            c.wait_for
                .as_ref()
                .map(|w| format!(" wait_for={w}"))
                .unwrap_or_default(),
            // Names given outright may differ (each rank its own file, a
            // node-local path); how many may not.
            if f.filenames.is_empty() {
                format!(
                    "nrfiles={} filename_format={}",
                    f.nrfiles, f.filename_format
                )
            } else {
                format!("filenames={}", f.filenames.len())
            },
            if j.io.ioengine.info().caps.diskless {
                " (no files)"
            } else {
                ""
            },
        ));
    }
    out
}

/// Expands the rank's names in a `filename_format`.
fn place_names(fmt: &str, place: &Placement) -> String {
    let rank = place.rank.to_string();
    let host = if fmt.contains("$hostname") && place.hostname.is_empty() {
        crate::host::hostname()
    } else {
        place.hostname.clone()
    };
    fmt.replace("$rank", &rank)
        .replace("$clientuid", &rank)
        .replace("$hostname", &host)
}

/// Expands `filename_format` for one file.
fn format_name(fmt: &str, job: &str, clone: u32, filenum: u32) -> String {
    fmt.replace("$jobname", job)
        .replace("$jobnum", &clone.to_string())
        .replace("$filenum", &filenum.to_string())
        .replace("$clientuid", "0")
}

fn file_paths(spec: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let f = &spec.file;
    if !f.filenames.is_empty() {
        return f
            .filenames
            .iter()
            .map(|n| f.path_of(n, false, clone))
            .collect();
    }
    (0..f.nrfiles)
        .map(|i| {
            f.path_of(
                &format_name(&f.filename_format, &spec.name, clone, i),
                true,
                clone,
            )
        })
        .collect()
}

/// Free bytes on the filesystem that holds (or will hold) `path`.
fn free_space(path: &Path) -> u64 {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    crate::sys::free_space(dir).unwrap_or(FILL_UNBOUNDED)
}

/// Plans one clone's files and how much I/O it does (`region::layout`).
///
/// `created` holds the sizes earlier jobs (and earlier clones) will give
/// files that do not exist yet, so a later job's `size=N%`, percentage
/// offsets, `filesize` and `file_append` see the file as it will be when
/// that job starts. `thread_number` is the clone's place among all the
/// run's clones, from 1.
fn plan_files(
    spec: &JobSpec,
    clone: u32,
    thread_number: u64,
    seed: u64,
    created: &HashMap<PathBuf, u64>,
) -> Result<(Vec<PlannedFile>, Limits), RunError> {
    let paths = clone_paths(spec, clone);
    let (probed, seens) = probe_targets(spec, &paths, created)?;
    let fill = spec.file.fill_device && spec.file.size.is_none();
    let targets: Vec<Probed> = paths
        .iter()
        .zip(&probed)
        .map(|(path, (kind, size))| Probed {
            path,
            kind: *kind,
            size: *size,
            free: if fill { free_space(path) } else { 0 },
        })
        .collect();
    let layout = region::layout(spec, clone, thread_number, seed, &targets)?;
    let files = paths
        .into_iter()
        .zip(probed)
        .zip(seens)
        .zip(layout.files)
        .map(|(((path, (kind, existing)), seen), r)| PlannedFile {
            path,
            kind,
            existing_size: existing,
            needed_size: r.needed,
            region: Region {
                start: r.start,
                len: r.len,
            },
            seen,
            zbd: None,
            run_token: None,
            shared: false,
        })
        .collect();
    Ok((files, layout.limits))
}

/// The paths of one clone's files (names only for a diskless engine).
fn clone_paths(spec: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let diskless = spec.io.ioengine.info().caps.diskless;
    if diskless && spec.file.filenames.is_empty() {
        (0..spec.file.nrfiles)
            .map(|i| {
                PathBuf::from(format_name(
                    &spec.file.filename_format,
                    &spec.name,
                    clone,
                    i,
                ))
            })
            .collect()
    } else {
        file_paths(spec, clone)
    }
}

/// What each path is and its size (the size an earlier job will give it
/// when it does not exist yet), with what the safety check saw there;
/// special files are refused here unless allowed.
#[allow(clippy::type_complexity)]
fn probe_targets(
    spec: &JobSpec,
    paths: &[PathBuf],
    created: &HashMap<PathBuf, u64>,
) -> Result<(Vec<(TargetKind, u64)>, Vec<Seen>), RunError> {
    let diskless = spec.io.ioengine.info().caps.diskless;
    let mut probed = Vec::with_capacity(paths.len());
    let mut seens = Vec::with_capacity(paths.len());
    for p in paths {
        let (kind, size, seen) = if diskless {
            (TargetKind::None, 0, Seen::default())
        } else {
            probe(p, spec.engine.nvme.pi_act)?
        };
        super::safety::check_special(spec, p, kind, &seen)?;
        seens.push(seen);
        probed.push(match (kind, created.get(p)) {
            // Still missing (nothing exists yet), but with the size an
            // earlier job will give it.
            (TargetKind::Missing, Some(planned)) => (TargetKind::Missing, *planned),
            _ => (kind, size),
        });
    }
    Ok((probed, seens))
}

/// Builds the plan for a list of jobs.
pub fn plan(jobs: &[JobSpec]) -> Result<Plan, RunError> {
    plan_at(jobs, &Placement::default())
}

/// `plan` for one rank of a run spread over `place.ranks` ranks: across
/// ranks a job behaves as if its `numjobs` were multiplied by the ranks,
/// rank `r` running global clones `r × numjobs …`: their file names,
/// `offset_increment` and random seeds are those of that clone number,
/// and `filename_format` may name `$rank`, `$hostname` and `$clientuid`
/// (the rank).
pub fn plan_at(jobs: &[JobSpec], place: &Placement) -> Result<Plan, RunError> {
    let plan = build(jobs, place)?;
    super::safety::check(&plan)?;
    for j in jobs {
        super::memory::check_buffer_file(j).map_err(|r| RunError::Plan(r.0))?;
    }
    super::memory::check_plan(&plan, super::memory::ram_bytes())?;
    Ok(plan)
}

/// The regular files that already exist among the files `jobs` would
/// use at `place`, each once, without the safety checks: a preset's
/// runner asks so that it can say, in its own words, that a test file
/// was left behind before the checks refuse it in a job file's words.
pub fn existing_regular_files(
    jobs: &[JobSpec],
    place: &Placement,
) -> Result<Vec<PathBuf>, RunError> {
    let plan = build(jobs, place)?;
    let mut out: Vec<PathBuf> = Vec::new();
    for f in plan.jobs.iter().flat_map(|j| &j.files) {
        if f.kind == TargetKind::Regular && !out.contains(&f.path) {
            out.push(f.path.clone());
        }
    }
    Ok(out)
}

/// The plan of `jobs` at `place`, not yet checked for safety.
fn build(jobs: &[JobSpec], place: &Placement) -> Result<Plan, RunError> {
    let tagged;
    let jobs = if place.tag.is_empty() {
        jobs
    } else {
        tagged = tag_files(jobs, &place.tag);
        &tagged
    };
    let mut plan = Plan {
        jobs: Vec::new(),
        place: place.clone(),
    };
    // Clones of the jobs before this one, on all ranks (seed numbers).
    let mut clones_before = 0u64;
    let mut created: HashMap<PathBuf, u64> = HashMap::new();
    // write_iolog files of the jobs planned so far, with their phase.
    let mut iologs: Vec<(PathBuf, u32, String)> = Vec::new();
    let mut group = 0u32;
    let mut phase = 0u32;
    for (ji, spec) in jobs.iter().enumerate() {
        if ji > 0 {
            if spec.ctl.stonewall {
                phase += 1;
                group += 1;
            } else if spec.ctl.new_group {
                group += 1;
            }
        }
        let wait_for = wait_for_index(jobs, ji)?;
        check_numa_nodes(spec)?;
        let mut placed = spec.clone();
        placed.file.filename_format = place_names(&spec.file.filename_format, place);
        let spec = Arc::new(placed);
        let elsewhere = Elsewhere::of(jobs, ji, place);
        for local in 0..spec.ctl.numjobs {
            let clone = place.rank * spec.ctl.numjobs + local;
            let clones = spec.ctl.numjobs as u64 * place.ranks as u64;
            let thread_number = clones_before + fio_thread_number(clone as u64, clones);
            let mut job = PlannedJob {
                spec: spec.clone(),
                job_index: ji,
                clone,
                group,
                phase,
                files: Vec::new(),
                limits: Limits {
                    bytes: 0,
                    io_size: None,
                    size: 0,
                },
                worker_index: plan.jobs.len() as u32,
                wait_for,
                seed: clone_seed(&spec, (clones_before + clone as u64) as usize),
                thread_number,
                trace: None,
                dedupe_share: None,
                run_token: place.run_token.clone(),
            };
            plan_clone_io(&mut job, thread_number, &iologs, &created)?;
            super::zoned::plan_job(&mut job)?;
            elsewhere.mark(&mut job, local);
            note_created(&mut created, &job);
            note_write_iolog(&spec, phase, &mut iologs)?;
            plan.jobs.push(job);
        }
        clones_before += spec.ctl.numjobs as u64 * place.ranks as u64;
        crate::engine::preflight(&spec)?;
    }
    share_dedupe_sets(&mut plan);
    Ok(plan)
}

/// The place (from 1) fio gives clone `k` of a job's `n` clones among
/// them: the first clone, then the others from the last down (fio makes
/// clone `n - 1` second), so draws seeded by it (`filesize` ranges) are
/// the same for the same clone.
fn fio_thread_number(k: u64, n: u64) -> u64 {
    if k == 0 {
        1
    } else {
        1 + n - k
    }
}

/// `wait_for`: the index of the last job before job `ji` with that name.
fn wait_for_index(jobs: &[JobSpec], ji: usize) -> Result<Option<usize>, RunError> {
    let spec = &jobs[ji];
    match &spec.ctl.wait_for {
        Some(name) => Ok(Some(
            jobs[..ji]
                .iter()
                .rposition(|j| &j.name == name)
                .ok_or_else(|| {
                    RunError::Plan(format!(
                        "job '{}': wait_for={name} names no job defined before it",
                        spec.name
                    ))
                })?,
        )),
        None => Ok(None),
    }
}

/// The NUMA nodes a job names (`numa_cpu_nodes`, `numa_mem_policy`)
/// exist on this host.
fn check_numa_nodes(spec: &JobSpec) -> Result<(), RunError> {
    let numa_nodes = spec.ctl.numa_cpu_nodes.iter();
    let numa_mem = spec.ctl.numa_mem_policy.iter().map(|p| &p.nodes);
    let nodes: Vec<usize> = numa_nodes
        .chain(numa_mem)
        .flat_map(super::numa::resolve)
        .collect();
    super::numa::check_nodes(&nodes)
        .map_err(|e| RunError::Plan(format!("job '{}': {e}", spec.name)))
}

/// The seed of the clone planned after `planned` others: `randseed`, a
/// fixed one with `randrepeat`, else from the time and process id.
fn clone_seed(spec: &JobSpec, planned: usize) -> u64 {
    let base_seed = match spec.io.randseed {
        Some(s) => s,
        None if spec.io.randrepeat || spec.io.allrandrepeat => 0x89,
        None => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            t ^ (std::process::id() as u64) << 32
        }
    };
    base_seed.wrapping_add((planned as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A clone's files and limits: from its trace when it replays one (now,
/// or when its phase starts if an earlier phase writes the trace), else
/// planned from its options.
fn plan_clone_io(
    job: &mut PlannedJob,
    thread_number: u64,
    iologs: &[(PathBuf, u32, String)],
    created: &HashMap<PathBuf, u64>,
) -> Result<(), RunError> {
    let spec = job.spec.clone();
    if let Some(name) = iolog::trace_name(&spec.log, job.clone) {
        match iologs.iter().find(|(p, _, _)| *p == Path::new(&name)) {
            Some((_, ph, writer)) if *ph == job.phase => {
                return Err(RunError::Plan(format!(
                    "job '{}' replays '{name}' while job '{writer}' writes it; put a stonewall between them",
                    spec.name
                )))
            }
            // Written by an earlier phase: loaded when this one starts.
            Some(_) => {}
            None => resolve_replay(job)?,
        }
    } else {
        (job.files, job.limits) = plan_files(&spec, job.clone, thread_number, job.seed, created)?;
    }
    Ok(())
}

/// Remembers the size a clone gives the regular files it uses.
fn note_created(created: &mut HashMap<PathBuf, u64>, job: &PlannedJob) {
    for f in &job.files {
        if matches!(f.kind, TargetKind::Regular | TargetKind::Missing) {
            let e = created.entry(f.path.clone()).or_insert(0);
            *e = (*e).max(f.needed_size.max(f.existing_size));
        }
    }
}

/// `write_iolog`: its directory exists and no other clone of the same
/// phase writes the same file; remembered for the jobs after it.
fn note_write_iolog(
    spec: &JobSpec,
    phase: u32,
    iologs: &mut Vec<(PathBuf, u32, String)>,
) -> Result<(), RunError> {
    let Some(w) = &spec.log.write_iolog else {
        return Ok(());
    };
    if let Some(dir) = Path::new(w).parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(RunError::Plan(format!(
                "job '{}': write_iolog '{w}': directory '{}' does not exist",
                spec.name,
                dir.display()
            )));
        }
    }
    if let Some((_, _, other)) = iologs
        .iter()
        .find(|(p, ph, _)| *p == Path::new(w) && *ph == phase)
    {
        let who = if *other == spec.name {
            format!("every clone of job '{other}' (numjobs)")
        } else {
            format!("jobs '{other}' and '{}'", spec.name)
        };
        return Err(RunError::Plan(format!(
            "write_iolog '{w}' would be written by {who} at once; give each job its own file"
        )));
    }
    iologs.push((PathBuf::from(w), phase, spec.name.clone()));
    Ok(())
}

/// `dedupe_global`: the clones that set it share one set of duplicate
/// contents, as large as their working sets together, each clone
/// writing an even share of its new contents.
fn share_dedupe_sets(plan: &mut Plan) {
    use crate::workload::buffers::{working_set_blocks, DedupeShare};
    let members: Vec<usize> = (0..plan.jobs.len())
        .filter(|&i| {
            let b = &plan.jobs[i].spec.buf;
            b.dedupe_global && b.dedupe_mode == crate::job::spec::DedupeMode::WorkingSet
        })
        .collect();
    let total: u64 = members
        .iter()
        .map(|&i| {
            let j = &plan.jobs[i];
            working_set_blocks(&j.spec, j.files.iter().map(|f| f.region.len).sum())
        })
        .sum();
    for (k, &i) in members.iter().enumerate() {
        plan.jobs[i].dedupe_share = Some(DedupeShare {
            index: k as u64,
            count: members.len() as u64,
            blocks: total.max(1),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        crate::job::test_spec(opts)
    }

    #[test]
    fn a_rank_knows_which_files_other_ranks_use_too_and_marks_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let d = &crate::job::opt_path(dir.path());
        let place = Placement {
            rank: 1,
            ranks: 3,
            run_token: Some("t0k".into()),
            ..Placement::default()
        };
        // Names from the global clone number: each rank its own files.
        let own = spec(&[("size", "64k"), ("directory", d), ("numjobs", "2")]);
        let p = plan_at(&[own], &place).unwrap();
        assert_eq!(p.jobs[0].files[0].path, dir.path().join("t.2.0"));
        assert!(p.jobs.iter().all(|j| j.files.iter().all(|f| !f.shared)));
        assert_eq!(p.jobs[0].files[0].run_token(), Some("t0k"));
        // One file for every rank.
        let f = dir.path().join("shared");
        let one = spec(&[("size", "64k"), ("filename", &crate::job::opt_path(&f))]);
        assert!(plan_at(std::slice::from_ref(&one), &place).unwrap().jobs[0].files[0].shared);
        // $rank in the name: apart again.
        let fmt = spec(&[
            ("size", "64k"),
            ("directory", d),
            ("filename_format", "r$rank.$filenum"),
        ]);
        assert!(!plan_at(&[fmt], &place).unwrap().jobs[0].files[0].shared);
        // Alone, nothing is shared.
        assert!(!plan(&[one]).unwrap().jobs[0].files[0].shared);
    }

    #[test]
    fn the_structure_of_a_job_list_ignores_sizes_but_not_clones_or_names() {
        let a = spec(&[("size", "64k"), ("rw", "write")]);
        let b = spec(&[("size", "1g"), ("rw", "write"), ("runtime", "5")]);
        assert_eq!(structure(std::slice::from_ref(&a)), structure(&[b]));
        let c = spec(&[("size", "64k"), ("rw", "write"), ("numjobs", "3")]);
        assert_ne!(structure(std::slice::from_ref(&a)), structure(&[c]));
        let d = spec(&[("size", "64k"), ("rw", "read")]);
        assert_ne!(structure(std::slice::from_ref(&a)), structure(&[d]));
        let e = spec(&[
            ("size", "64k"),
            ("rw", "write"),
            ("filename_format", "x.$jobnum"),
        ]);
        assert_ne!(structure(std::slice::from_ref(&a)), structure(&[e]));
        // Names given outright may differ (each rank its own); their
        // number may not.
        let f1 = spec(&[("size", "64k"), ("rw", "write"), ("filename", "a.0")]);
        let f2 = spec(&[("size", "64k"), ("rw", "write"), ("filename", "a.1")]);
        let f3 = spec(&[("size", "64k"), ("rw", "write"), ("filename", "a:b")]);
        assert_eq!(structure(std::slice::from_ref(&f1)), structure(&[f2]));
        assert_ne!(structure(&[f1]), structure(&[f3]));
        assert_eq!(structure(&[a.clone(), a.clone()]).lines().count(), 2);
    }

    #[test]
    fn clones_get_their_own_files_and_groups_follow_stonewall() {
        let dir = tempfile::tempdir().unwrap();
        let d = &crate::job::opt_path(dir.path());
        let a = spec(&[
            ("size", "1m"),
            ("numjobs", "2"),
            ("directory", d),
            ("nrfiles", "2"),
        ]);
        let mut b = spec(&[("size", "1m"), ("directory", d), ("stonewall", "1")]);
        b.name = "b".into();
        let p = plan(&[a, b]).unwrap();
        assert_eq!(p.jobs.len(), 3);
        assert_eq!(p.jobs[1].files[1].path, dir.path().join("t.1.1"));
        assert_eq!(
            p.jobs[0].files[0].region,
            Region {
                start: 0,
                len: 512 << 10
            }
        );
        assert_eq!(p.jobs[0].limits.bytes, 1 << 20);
        assert_eq!((p.jobs[2].group, p.jobs[2].phase), (1, 1));
        assert_eq!(p.phases(), 2);
    }

    #[test]
    fn offset_shifts_the_region_and_grows_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let s = spec(&[
            ("size", "1m"),
            ("offset", "256k"),
            ("filename", &crate::job::opt_path(&f)),
            ("numjobs", "2"),
            ("offset_increment", "1m"),
        ]);
        let p = plan(&[s]).unwrap();
        assert_eq!(
            p.jobs[1].files[0].region,
            Region {
                start: (1 << 20) + (256 << 10),
                len: 1 << 20
            }
        );
        assert_eq!(p.jobs[0].files[0].needed_size, (1 << 20) + (256 << 10));
    }

    #[test]
    fn the_directory_prefixes_even_an_absolute_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = &crate::job::opt_path(dir.path());
        let s = spec(&[("size", "64k"), ("directory", d), ("filename", "/dev/null")]);
        let p = plan(&[s]).unwrap();
        assert_eq!(p.jobs[0].files[0].path, dir.path().join("dev/null"));
        assert_eq!(p.jobs[0].files[0].kind, TargetKind::Missing);
    }

    #[test]
    fn generated_names_go_in_the_clones_directory_given_names_in_the_first() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dirs = format!(
            "{}:{}",
            crate::job::opt_path(a.path()),
            crate::job::opt_path(b.path())
        );
        let s = spec(&[
            ("size", "64k"),
            ("directory", &dirs),
            ("nrfiles", "2"),
            ("numjobs", "2"),
        ]);
        let p = plan(&[s]).unwrap();
        let paths: Vec<_> = p
            .jobs
            .iter()
            .flat_map(|j| &j.files)
            .map(|f| &f.path)
            .collect();
        assert_eq!(
            paths,
            [
                &a.path().join("t.0.0"),
                &a.path().join("t.0.1"),
                &b.path().join("t.1.0"),
                &b.path().join("t.1.1")
            ]
        );
        let s = spec(&[("size", "64k"), ("directory", &dirs), ("filename", "x:y")]);
        let p = plan(&[s]).unwrap();
        let paths: Vec<_> = p.jobs[0].files.iter().map(|f| &f.path).collect();
        assert_eq!(paths, [&a.path().join("x"), &a.path().join("y")]);
    }

    #[test]
    fn missing_size_is_an_error_naming_the_file() {
        let s = spec(&[("filename", "/nonexistent/iomark/x")]);
        let e = plan(&[s]).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }
}
