//! Refusing to destroy data iomark did not create. Before any job starts,
//! every block device a job writes to or trims is checked:
//!
//! - **in use**: the device, one of its partitions, or a device stacked on
//!   it (holders: device-mapper, LVM, MD; loop devices whose backing file
//!   is the device or a device stacked on it, at any offset; recursively)
//!   is mounted or used as swap, or the kernel refuses an exclusive open
//!   (some driver holds it). Allowed only with `allow_mounted_write=1`.
//! - **holds data**: the device, or a device stacked on it, carries a
//!   filesystem, RAID, volume or partition-table signature where it
//!   lives: on Linux every type libblkid knows, on the whole device (its
//!   start and its end), in each partition of a table found (present, or
//!   by its GPT backup) and at 1 MiB and 2 MiB; everywhere, iomark's own
//!   list (at the start, at 1 MiB, at LUKS2's secondary header offsets
//!   and at the end; see `signatures`). Allowed only with
//!   `allow_destroy_data=1`.
//!
//! Regular files get the same care: a job that would overwrite, trim,
//! truncate or delete an existing, non-empty regular file that iomark did
//! not create is refused unless `allow_destroy_data=1`. iomark marks the
//! files it creates (only those: its exclusive create succeeded) with the
//! extended attribute `user.iomark`, so its own test files can be reused
//! freely from run to run.
//!
//! Special files: a FIFO never ends an open for reading until some other
//! process opens it, and a character device is not storage; both are
//! refused as targets unless the job sets `allow_special_files=1`. The
//! kernel's memory devices `/dev/null`, `/dev/zero` and `/dev/full` (major
//! 1, minors 3, 5, 7) are accepted, as fio accepts them (size= needed).
//!
//! **At open time, not only at plan time.** The plan records what the
//! check approved at each path ([`Seen`]: device, inode and file type, and
//! whether the path was a symbolic link). Files are then opened (see
//! `run::files::open_target`) so that the approval still holds:
//!
//! - links the plan did not see are not followed (`O_NOFOLLOW`); a link
//!   the user named and the plan resolved is followed, and must still lead
//!   to the file the plan approved;
//! - new files are created exclusively (`O_CREAT|O_EXCL`) and only those
//!   get the mark; iomark remembers what it created during the run, so a
//!   later job may reuse it;
//! - after the open, the file's identity must be the approved one (or one
//!   iomark created during this run); a file that appeared at a path that
//!   was empty at plan time is refused;
//! - every open is non-blocking until the file is known (`O_NONBLOCK`,
//!   cleared at once), so a FIFO swapped in cannot hang the run;
//! - for block devices a job writes to, the in-use check runs again right
//!   after the open (a mount can appear meanwhile).
//!
//! Every refusal is one line naming the path and what changed, before any
//! byte is written.
//!
//! The check only reads (the device where signatures live, /proc and
//! /sys, extended attributes); it never writes. Its error is one line
//! naming the target, the reason and the option that overrides it.

use crate::sys::ext::{FileTypeExt, MetadataExt};
use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::error::Refusal;
use super::plan::{Plan, TargetKind};

/// The extended attribute that marks files iomark created.
const MARK: &str = "iomark";

/// The attribute that names the run (over many MPI ranks) that created a
/// file, so that the other ranks of that run may use it.
const RUN_MARK: &str = "iomark.run";

/// Marks a file iomark has just created exclusively (best effort:
/// filesystems without user extended attributes simply keep no mark),
/// with the token of the run it belongs to (`PlannedFile::run_token`).
/// Takes the descriptor, so the mark cannot land on another file.
pub fn mark_created(fd: crate::sys::RawFd, run_token: Option<&str>) {
    crate::sys::set_mark(fd, MARK, b"1");
    if let Some(t) = run_token {
        crate::sys::set_mark(fd, RUN_MARK, t.as_bytes());
    }
}

/// The run token an open file carries (None: none, or no extended
/// attributes there).
fn token_of(fd: crate::sys::RawFd) -> Option<Vec<u8>> {
    let mut buf = [0u8; 64];
    let n = crate::sys::get_mark(fd, RUN_MARK, &mut buf)?;
    Some(buf[..n].to_vec())
}

/// Whether another rank (or worker) of the run `run_token` names created
/// the open file `fd` (it carries that token).
pub fn created_by_peer(fd: crate::sys::RawFd, run_token: Option<&str>) -> bool {
    let Some(t) = run_token else {
        return false;
    };
    token_of(fd).is_some_and(|v| v == t.as_bytes())
}

/// `created_by_peer` for the regular file `name` in directory `dir`,
/// not following a link (for a size check; opening checks the
/// descriptor).
pub fn created_by_peer_at(
    dir: crate::sys::RawFd,
    name: &std::ffi::CStr,
    run_token: Option<&str>,
) -> bool {
    let flags = crate::sys::O_RDONLY | crate::sys::O_NOFOLLOW | crate::sys::O_NONBLOCK;
    let Ok(fd) = super::dirs::open_at(dir, name, flags, 0) else {
        return false;
    };
    let f = std::fs::File::from(fd);
    f.metadata().is_ok_and(|m| m.is_file())
        && created_by_peer(crate::sys::AsRawFd::as_raw_fd(&f), run_token)
}

/// Whether the run token an open file carries, if it carries one, is
/// `run_token` (the one it was marked with when this run made it).
pub fn token_is(fd: crate::sys::RawFd, run_token: Option<&str>) -> bool {
    token_of(fd).is_none_or(|v| Some(v.as_slice()) == run_token.map(str::as_bytes))
}

/// Who a file is: the device and inode it lives on, its type, for
/// device nodes the device it stands for, and its birth time where the
/// filesystem records one (an inode number freed by a deletion is soon
/// given to the next new file; the birth time tells them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    /// The `S_IFMT` bits of the mode.
    pub fmt: u32,
    pub rdev: u64,
    pub born: Option<std::time::SystemTime>,
}

impl FileId {
    pub fn of_meta(m: &std::fs::Metadata) -> FileId {
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            fmt: m.mode() & crate::sys::S_IFMT,
            rdev: m.rdev(),
            born: m.created().ok(),
        }
    }

    /// The identity of `name` in `dir` whose metadata `m` is (as
    /// `dirs::stat_at` found it): from `m` on Unix; on Windows, where
    /// metadata holds no identity, from a handle opened on it.
    pub fn at(
        dir: crate::sys::RawFd,
        name: &std::ffi::CStr,
        follow: bool,
        m: &std::fs::Metadata,
    ) -> std::io::Result<FileId> {
        #[cfg(unix)]
        {
            let _ = (dir, name, follow);
            Ok(FileId::of_meta(m))
        }
        #[cfg(windows)]
        {
            let _ = m;
            let mut flags = crate::sys::O_PATH;
            if !follow {
                flags |= crate::sys::O_NOFOLLOW;
            }
            let fd = crate::sys::open_at(dir, name, flags, 0)?;
            FileId::of_fd(crate::sys::AsRawFd::as_raw_fd(&fd))
        }
    }

    /// The identity of an open descriptor.
    pub fn of_fd(fd: crate::sys::RawFd) -> std::io::Result<FileId> {
        crate::sys::fstat(fd).map(|st| FileId::of_stat(&st))
    }

    /// The identity in what [`crate::sys::fstat`] found (on Windows the
    /// volume serial number and file index).
    pub fn of_stat(st: &crate::sys::Stat) -> FileId {
        FileId {
            dev: st.dev,
            ino: st.ino,
            fmt: st.fmt,
            rdev: st.rdev,
            born: st.born,
        }
    }

    /// Device, inode and birth time, as a removal checks them.
    pub fn ident(&self) -> crate::sys::Ident {
        crate::sys::Ident {
            dev: self.dev,
            ino: self.ino,
            born: self.born,
        }
    }

    /// The type in words ("a regular file", "a FIFO", ...).
    pub fn kind(&self) -> &'static str {
        kind_name(self.fmt)
    }
}

fn kind_name(fmt: u32) -> &'static str {
    match fmt {
        crate::sys::S_IFREG => "a regular file",
        crate::sys::S_IFBLK => "a block device",
        crate::sys::S_IFCHR => "a character device",
        crate::sys::S_IFIFO => "a FIFO",
        crate::sys::S_IFDIR => "a directory",
        crate::sys::S_IFLNK => "a symbolic link",
        crate::sys::S_IFSOCK => "a socket",
        _ => "a special file",
    }
}

/// What the safety check saw at a target path when it approved it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// The path was a symbolic link the user named; the open may follow
    /// it, and must reach `id` through it.
    pub link: bool,
    /// The file found (through the link); `None` when nothing was there.
    pub id: Option<FileId>,
    /// The directory the path was found in, held open since the check:
    /// every later open, create and removal goes through it (None for
    /// targets nothing opens, such as the null engine's).
    pub dir: Option<std::sync::Arc<super::dirs::Dir>>,
}

pub use super::owned::created_this_run;

/// Checks that the file opened at `path` is the one the plan approved
/// (or one iomark created during this run). The refusal says what
/// changed.
pub fn check_identity(path: &Path, seen: &Seen, now: &FileId) -> Result<(), Refusal> {
    if seen.id.as_ref() == Some(now) || created_this_run(now) {
        return Ok(());
    }
    let p = path.display();
    let what = match seen.id {
        None => format!(
            "it did not exist when the run was checked and is now {} that iomark did not create",
            now.kind()
        ),
        Some(old) if old.fmt != now.fmt => format!(
            "it was {} when the run was checked and is now {}",
            old.kind(),
            now.kind()
        ),
        Some(old) if (old.dev, old.ino) != (now.dev, now.ino) => format!(
            "it is no longer the {} the run checked (device:inode {}:{} became {}:{})",
            &old.kind()[2..],
            old.dev,
            old.ino,
            now.dev,
            now.ino
        ),
        Some(old) => format!(
            "it is no longer the {} the run checked (it was deleted and another one \
             created, with the same inode number {})",
            &old.kind()[2..],
            now.ino
        ),
    };
    let via = if seen.link {
        " (the symbolic link now leads elsewhere)"
    } else {
        ""
    };
    Err(Refusal(format!("refusing to open '{p}': {what}{via}")))
}

/// The refusal for a path that became a symbolic link after the check
/// (the no-follow open failed with ELOOP).
pub fn link_refusal(path: &Path, seen: &Seen) -> String {
    let to = std::fs::read_link(path)
        .map(|t| format!(" to '{}'", t.display()))
        .unwrap_or_default();
    let was = match seen.id {
        None => "did not exist".to_string(),
        Some(id) => format!("was {}", id.kind()),
    };
    format!(
        "refusing to open '{}': it is now a symbolic link{to}, and it {was} when the run was \
         checked; iomark does not follow links it did not check",
        path.display()
    )
}

/// The kernel's memory devices fio users point jobs at: /dev/null,
/// /dev/zero and /dev/full.
fn memory_device(rdev: u64) -> bool {
    cfg!(target_os = "linux") && matches!(dev_of(rdev), (1, 3 | 5 | 7))
}

/// Kernel interfaces that look like filesystems (`statfs` magic, name):
/// never storage, and writing there changes the running system.
#[cfg(target_os = "linux")]
const PSEUDO_FILESYSTEMS: &[(u32, &str)] = &[
    (0x0000_9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_e0eb, "cgroupfs"),
    (0x6367_7270, "cgroup2"),
    (0x6265_6570, "configfs"),
    (0x7363_6673, "securityfs"),
    (0xde5e_81e4, "efivarfs"),
    (0x6165_676c, "pstore"),
    (0xcafe_4a11, "bpf"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6573_5543, "fusectl"),
    (0x6e73_6673, "nsfs"),
    (0x1980_0202, "mqueue"),
];

/// Elsewhere: none known.
#[cfg(not(target_os = "linux"))]
pub fn pseudo_filesystem(_fd: crate::sys::RawFd) -> Option<&'static str> {
    None
}

/// The pseudo-filesystem an open descriptor is on, if it is on one.
#[cfg(target_os = "linux")]
pub fn pseudo_filesystem(fd: crate::sys::RawFd) -> Option<&'static str> {
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs fills a zeroed struct.
    if unsafe { libc::fstatfs(fd, &mut st) } != 0 {
        return None;
    }
    let magic = st.f_type as u32;
    PSEUDO_FILESYSTEMS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, n)| *n)
}

/// Refuses a target on a pseudo-filesystem (procfs, sysfs, ...), for any
/// job: what is there is not storage (`/proc/sys/kernel/hostname`,
/// `/proc/sysrq-trigger`). The file itself is looked at (through a link
/// the user named), or its directory when it does not exist.
fn check_pseudo(spec: &crate::job::JobSpec, path: &Path, seen: &Seen) -> Result<(), Refusal> {
    let Some(dir) = &seen.dir else {
        return Ok(());
    };
    let own;
    let fd = match (seen.id, dir.resolved(), super::dirs::file_name(path)) {
        (Some(_), Some(d), Ok(name)) => {
            let mut flags = crate::sys::O_PATH;
            if !seen.link {
                flags |= crate::sys::O_NOFOLLOW;
            }
            match super::dirs::open_at(crate::sys::AsRawFd::as_raw_fd(&*d), &name, flags, 0) {
                Ok(fd) => {
                    own = fd;
                    crate::sys::AsRawFd::as_raw_fd(&own)
                }
                Err(_) => dir.base_fd(),
            }
        }
        _ => dir.base_fd(),
    };
    match pseudo_filesystem(fd) {
        Some(fs) => Err(Refusal(format!(
            "refusing to use '{}' (job '{}'): it is on {fs}, a kernel interface, not storage \
             (reading or writing there can change the running system)",
            path.display(),
            spec.name
        ))),
        None => Ok(()),
    }
}

/// Refuses a FIFO or a character device (other than the memory devices)
/// as a target unless the job says it is meant (`allow_special_files`),
/// anything but a block device for an engine that needs one, and any
/// target on a pseudo-filesystem.
pub fn check_special(
    spec: &crate::job::JobSpec,
    path: &Path,
    kind: TargetKind,
    seen: &Seen,
) -> Result<(), Refusal> {
    check_pseudo(spec, path, seen)?;
    check_engine_target(spec.io.ioengine.info(), spec, path, kind)?;
    if spec.file.allow_special_files {
        return Ok(());
    }
    let what = match (kind, seen.id) {
        (TargetKind::Fifo, _) => "a FIFO (named pipe): opening it waits until another \
                                  process opens the other end"
            .to_string(),
        (TargetKind::Char, Some(id)) if !memory_device(id.rdev) => format!(
            "a character device ({}:{}), not a file or a block device",
            dev_of(id.rdev).0,
            dev_of(id.rdev).1
        ),
        _ => return Ok(()),
    };
    Err(Refusal(format!(
        "refusing to use '{}' (job '{}'): it is {what}; set allow_special_files=1 if it is meant",
        path.display(),
        spec.name
    )))
}

/// Refuses a target the job's engine cannot use: an engine that needs a
/// block device (`EngineInfo::needs_block_device`) gets nothing else, the
/// NVMe passthrough engine only NVMe generic character devices, and those
/// go to no other engine.
fn check_engine_target(
    engine: &crate::engine::EngineInfo,
    spec: &crate::job::JobSpec,
    path: &Path,
    kind: TargetKind,
) -> Result<(), Refusal> {
    let refuse = |what: String| {
        Err(Refusal(format!(
            "job '{}': ioengine={} {what}",
            spec.name, engine.kind
        )))
    };
    if engine.nvme_passthrough && kind != TargetKind::Nvme {
        return refuse(format!(
            "needs an NVMe generic character device (/dev/ngXnY), and '{}' is not one",
            path.display()
        ));
    }
    if !engine.nvme_passthrough && kind == TargetKind::Nvme {
        let bdev = nvme_block_device(path)
            .ok()
            .flatten()
            .map(|b| format!(", or this engine on its block device {}", b.display()))
            .unwrap_or_default();
        return refuse(format!(
            "cannot do I/O to '{}': it is an NVMe generic character device, for NVMe commands \
             (use ioengine=io_uring_cmd{bdev})",
            path.display()
        ));
    }
    if !engine.needs_block_device || kind == TargetKind::Block {
        return Ok(());
    }
    refuse(format!(
        "needs a block device, and '{}' is not one",
        path.display()
    ))
}

/// The block device of the namespace whose generic character device is
/// `path` (`/dev/ng0n1` → `/dev/nvme0n1`), if it has one.
pub fn nvme_block_device(path: &Path) -> std::io::Result<Option<std::path::PathBuf>> {
    use crate::sys::AsRawFd;
    let f = crate::host::nvme::open_probe(path)?;
    let rdev = f.metadata()?.rdev();
    let nsid = crate::host::nvme::namespace_id(f.as_raw_fd())?;
    Ok(crate::host::nvme::block_device_of(rdev, nsid))
}

/// Why iomark cannot go on with a special file it is allowed to open, or
/// `None`: a FIFO opened for reading only waits (in steps, so a stop
/// signal ends the wait) until a writer opens it.
pub fn wait_for_peer(fd: crate::sys::RawFd, path: &Path, read_only: bool) -> Option<String> {
    if !read_only || cfg!(windows) {
        return None;
    }
    #[cfg(windows)]
    return {
        let _ = (fd, path);
        None
    };
    #[cfg(unix)]
    loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, a 100 ms timeout.
        let r = unsafe { libc::poll(&mut p, 1, 100) };
        if r > 0 {
            return None;
        }
        if r < 0 && Some(crate::sys::last_errno()) != Some(libc::EINTR) {
            return None;
        }
        if super::signals::received() {
            return Some(format!(
                "stopped while waiting for a writer to open FIFO '{}'",
                path.display()
            ));
        }
    }
}

/// Whether the open file carries iomark's mark.
pub fn marked(fd: crate::sys::RawFd) -> bool {
    let mut v = [0u8; 8];
    crate::sys::get_mark(fd, MARK, &mut v).is_some()
}

/// Whether iomark created this file (it carries the mark).
pub fn created_by_iomark(path: &Path) -> bool {
    let mut v = [0u8; 8];
    crate::sys::get_mark_path(path, MARK, &mut v).is_some()
}

/// Whether `path` (not followed if a link) is a file this process made
/// during this run: where the filesystem keeps no mark (no extended
/// attributes or alternate streams, Wine), the run's own record says.
fn made_this_run(path: &Path) -> bool {
    crate::sys::stat_path(path, false).is_ok_and(|st| created_this_run(&FileId::of_stat(&st)))
}

/// Whether a job changes or removes existing data in its regular files,
/// and how (for the refusal message).
fn destroys_file_data(spec: &crate::job::JobSpec) -> Option<&'static str> {
    use crate::engine::Destroys;
    let destroys = spec.io.ioengine.info().destroys;
    if destroys == Destroys::Deletes || spec.file.unlink || spec.file.unlink_each_loop {
        return Some("delete");
    }
    if destroys == Destroys::Truncates {
        return Some("truncate");
    }
    // verify_only reads what an earlier run wrote.
    if spec.io.rw.writes()
        && !spec.verify.verify_only
        && !spec.file.file_append
        && destroys == Destroys::WhenWriting
    {
        return Some("overwrite");
    }
    None
}

/// Checks every existing regular file a job would destroy data in.
fn check_regular_files(plan: &Plan) -> Result<(), Refusal> {
    let mut checked: HashSet<&Path> = HashSet::new();
    for job in &plan.jobs {
        let spec = &job.spec;
        if spec.file.allow_destroy_data {
            continue;
        }
        let Some(verb) = destroys_file_data(spec) else {
            continue;
        };
        for f in job.files.iter().filter(|f| f.kind == TargetKind::Regular) {
            if !checked.insert(&f.path) || created_by_iomark(&f.path) || made_this_run(&f.path) {
                continue;
            }
            // Deleting an empty file loses nothing; overwriting one neither.
            if f.existing_size == 0 {
                continue;
            }
            let done = match verb {
                "delete" => "deleted",
                "truncate" => "truncated",
                _ => "overwritten",
            };
            let fio_note = if fio_default_name(&f.path, &spec.name) {
                " (its name is the one fio gives this job's file: probably left by an earlier fio \
                 run)"
            } else {
                ""
            };
            return Err(Refusal(format!(
                "refusing to {verb} '{}' (job '{}'): the file already exists and iomark did not \
                 create it{fio_note}; delete it, or set allow_destroy_data=1 if you really want it \
                 {done}",
                f.path.display(),
                spec.name,
            )));
        }
    }
    Ok(())
}

/// Whether `path` is named as fio names a job's files by default:
/// `JOBNAME.JOBNUM.FILENUM`.
fn fio_default_name(path: &Path, job: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(rest) = name.strip_prefix(job).and_then(|r| r.strip_prefix('.')) else {
        return false;
    };
    let mut parts = rest.split('.');
    let number =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    number(parts.next()) && number(parts.next()) && parts.next().is_none()
}

/// Whether a job only reads its files: it neither writes nor trims (or
/// only verifies what is there), and its engine changes nothing on a
/// read. Such a job never creates a file that exists, extends it or
/// fills it.
pub fn only_reads(spec: &crate::job::JobSpec) -> bool {
    (!spec.io.rw.writes() || spec.verify.verify_only) && !spec.io.ioengine.info().reads_change_files
}

/// Why laying out `f` for `spec` would break the rule that a read never
/// writes: under `--readonly` nothing is created or extended; a job that
/// only reads never extends a file iomark did not create (unless
/// `allow_destroy_data=1`). `existing` is the file's size now (None: it
/// does not exist), `own` whether iomark created it.
pub fn read_refusal(
    spec: &crate::job::JobSpec,
    path: &Path,
    existing: Option<u64>,
    needed: u64,
    own: bool,
) -> Option<String> {
    use crate::job::value::human_bytes;
    let p = path.display();
    let job = &spec.name;
    let bytes = |n: u64| match n {
        0..=1023 => format!("{n} bytes"),
        _ => format!("{n} bytes ({})", human_bytes(n, false)),
    };
    match existing {
        None if spec.file.readonly => Some(format!(
            "job '{job}': '{p}' does not exist, and --readonly forbids creating it"
        )),
        Some(size) if size < needed && spec.file.readonly => Some(format!(
            "job '{job}': '{p}' is {}, shorter than the {} the job reads, and --readonly \
             forbids extending it",
            bytes(size),
            bytes(needed)
        )),
        Some(size)
            if size < needed && only_reads(spec) && !own && !spec.file.allow_destroy_data =>
        {
            Some(format!(
                "job '{job}': '{p}' is {}, shorter than the {} the job reads; a job that only \
                 reads never extends a file iomark did not create (lower size=, write the file \
                 first, or set allow_destroy_data=1)",
                bytes(size),
                bytes(needed)
            ))
        }
        _ => None,
    }
}

/// Refuses, before anything runs, a read that would have to create or
/// extend a file (see [`read_refusal`]); a file an earlier job of the
/// run writes to that size is not short.
fn check_reads(plan: &Plan) -> Result<(), Refusal> {
    for (i, job) in plan.jobs.iter().enumerate() {
        if !only_reads(&job.spec) || !job.spec.io.ioengine.info().lays_out_files() {
            continue;
        }
        if job.spec.log.read_iolog.is_some() {
            continue;
        }
        for f in &job.files {
            let existing = match f.kind {
                TargetKind::Regular => Some(f.existing_size),
                TargetKind::Missing => None,
                _ => continue,
            };
            let written_before = plan.jobs[..i].iter().any(|w| {
                !only_reads(&w.spec)
                    && w.files
                        .iter()
                        .any(|o| o.path == f.path && o.needed_size >= f.needed_size)
            });
            if written_before && !job.spec.file.readonly {
                continue;
            }
            let own = created_by_iomark(&f.path);
            if let Some(m) = read_refusal(&job.spec, &f.path, existing, f.needed_size, own) {
                return Err(Refusal(m));
            }
        }
    }
    Ok(())
}

/// Checks every block device (and NVMe namespace) and regular file the
/// plan would destroy data in.
pub fn check(plan: &Plan) -> Result<(), Refusal> {
    check_regular_files(plan)?;
    check_reads(plan)?;
    let mut checked: HashSet<&Path> = HashSet::new();
    let mut mounts: Option<HashMap<Dev, String>> = None;
    for job in &plan.jobs {
        let spec = &job.spec;
        if !writes_to_devices(spec) {
            continue;
        }
        for f in job.files.iter() {
            if !matches!(f.kind, TargetKind::Block | TargetKind::Nvme) || !checked.insert(&f.path) {
                continue;
            }
            check_device(spec, f, &mut mounts)?;
        }
    }
    Ok(())
}

/// The checks of one device a job writes to: in use (mounted, swap,
/// held), and holding a signature. An NVMe generic character device is
/// checked as its namespace's block device.
fn check_device(
    spec: &crate::job::JobSpec,
    f: &super::plan::PlannedFile,
    mounts: &mut Option<HashMap<Dev, String>>,
) -> Result<(), Refusal> {
    if cfg!(windows) {
        return check_windows_device(spec, f);
    }
    check_unix_device(spec, f, mounts)
}

/// [`check_device`] on Windows, for a disk (`\\.\PhysicalDriveN`) or a
/// volume (`\\.\X:`): a volume mounted (a drive letter or a folder), or
/// a disk one of whose volumes is, needs allow_mounted_write; partitions
/// on a disk, a filesystem the system recognises on a volume, or any
/// signature found by reading needs allow_destroy_data.
fn check_windows_device(
    spec: &crate::job::JobSpec,
    f: &super::plan::PlannedFile,
) -> Result<(), Refusal> {
    let what = if crate::sys::is_physical_drive(&f.path) {
        "disk"
    } else {
        "volume"
    };
    let refuse = |why: String, option: &str| {
        Refusal(format!(
            "refusing to write to {what} '{}' (job '{}'): {why}; set {option}=1 if you really \
             want it overwritten",
            f.path.display(),
            spec.name
        ))
    };
    if !spec.file.allow_mounted_write {
        if let Some(why) = crate::sys::device_in_use(&f.path) {
            return Err(refuse(why, "allow_mounted_write"));
        }
    }
    if spec.file.allow_destroy_data {
        return Ok(());
    }
    if let Some(why) = crate::sys::device_holds(&f.path) {
        return Err(refuse(why, "allow_destroy_data"));
    }
    let size = f.existing_size;
    let cannot = |e: std::io::Error| {
        Refusal(format!(
            "cannot read '{}' to check it holds no data ({e}); set allow_destroy_data=1 to \
             write to it without this check",
            f.path.display()
        ))
    };
    if let Some(sig) = super::signatures::probe_device(&f.path, size).map_err(cannot)? {
        return Err(refuse(format!("it holds {sig}"), "allow_destroy_data"));
    }
    if let Some(sig) = super::signatures::probe_inside(&f.path, size).map_err(cannot)? {
        return Err(refuse(format!("it holds {sig}"), "allow_destroy_data"));
    }
    Ok(())
}

/// [`check_device`] on Unix.
fn check_unix_device(
    spec: &crate::job::JobSpec,
    f: &super::plan::PlannedFile,
    mounts: &mut Option<HashMap<Dev, String>>,
) -> Result<(), Refusal> {
    let shown = f.path.display();
    let (node, what) = if f.kind == TargetKind::Nvme {
        match nvme_block_device(&f.path) {
            Ok(Some(b)) => {
                let what = format!("NVMe namespace '{shown}' (block device {})", b.display());
                (b, what)
            }
            Ok(None) if spec.file.allow_destroy_data => return Ok(()),
            Ok(None) => {
                return Err(Refusal(format!(
                    "refusing to write to NVMe namespace '{shown}' (job '{}'): it has no block \
                     device here, so iomark cannot check it for mounts and signatures; set \
                     allow_destroy_data=1 if you really want it overwritten",
                    spec.name
                )))
            }
            Err(e) => {
                return Err(Refusal(format!(
                    "cannot check NVMe namespace '{shown}' holds no data ({e}); set \
                     allow_destroy_data=1 to write to it without this check"
                )))
            }
        }
    } else {
        (f.path.clone(), format!("block device '{shown}'"))
    };
    let refuse = |why: String, option: &str| {
        Refusal(format!(
            "refusing to write to {what} (job '{}'): {why}; set {option}=1 if you really want \
             it overwritten",
            spec.name
        ))
    };
    if !spec.file.allow_mounted_write {
        let m = mounts.get_or_insert_with(mounted_devices);
        if let Some(why) = in_use(&node, m) {
            return Err(refuse(why, "allow_mounted_write"));
        }
    }
    if !spec.file.allow_destroy_data {
        // A namespace's block device is looked at with its own size (a
        // namespace with extended LBAs is larger by its metadata to
        // passthrough commands).
        let size = if f.kind == TargetKind::Nvme {
            super::plan::blockdev_size(&node).map_err(|e| {
                Refusal(format!(
                    "cannot get the size of '{}' to check it holds no data ({e}); set \
                     allow_destroy_data=1 to write to it without this check",
                    node.display()
                ))
            })?
        } else {
            f.existing_size
        };
        if size == 0 && f.kind == TargetKind::Nvme {
            return Err(Refusal(format!(
                "refusing to write to {what} (job '{}'): the kernel gives its block device no \
                 capacity (it cannot use the namespace's format, e.g. extended LBAs without \
                 protection information), so iomark cannot read it for signatures; set \
                 allow_destroy_data=1 if you really want it overwritten",
                spec.name
            )));
        }
        let sig = super::signatures::probe_device(&node, size).map_err(|e| {
            Refusal(format!(
                "cannot read '{}' to check it holds no data ({e}, e.g. protection information \
                 a checked read rejects); set allow_destroy_data=1 to write to it without \
                 this check",
                node.display()
            ))
        })?;
        if let Some(sig) = sig {
            return Err(refuse(format!("it holds {sig}"), "allow_destroy_data"));
        }
        let dev = std::fs::metadata(&node).map(|m| dev_of(m.rdev())).ok();
        if let Some(why) = dev.and_then(stacked_signature) {
            return Err(refuse(why, "allow_destroy_data"));
        }
        // Last, a filesystem at 1 MiB with nothing stacked there.
        if let Ok(Some(sig)) = super::signatures::probe_inside(&node, size) {
            return Err(refuse(format!("it holds {sig}"), "allow_destroy_data"));
        }
    }
    Ok(())
}

/// A device number as (major, minor).
type Dev = (u32, u32);

fn dev_of(rdev: u64) -> Dev {
    crate::sys::major_minor(rdev)
}

fn parse_dev(s: &str) -> Option<Dev> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Mounted devices (by number, and by the source path's device number,
/// since btrfs shows an anonymous number) and active swap devices, each
/// with a description ("mounted on /boot").
fn mounted_devices() -> HashMap<Dev, String> {
    let mut out = HashMap::new();
    for mount in crate::host::mounts::read() {
        let what = format!("mounted on {}", mount.point);
        if let Some(d) = mount.dev {
            out.entry(d).or_insert_with(|| what.clone());
        }
        if mount.source.starts_with('/') {
            if let Ok(m) = std::fs::metadata(&mount.source) {
                if m.file_type().is_block_device() {
                    out.entry(dev_of(m.rdev())).or_insert(what);
                }
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string("/proc/swaps") {
        for line in text.lines().skip(1) {
            let Some(name) = line.split_whitespace().next() else {
                continue;
            };
            if let Ok(m) = std::fs::metadata(crate::host::mounts::unescape(name)) {
                if m.file_type().is_block_device() {
                    out.insert(dev_of(m.rdev()), "in use as swap".to_string());
                }
            }
        }
    }
    out
}

/// Loop devices whose backing file is a block device: (backing device,
/// loop device). A loop device over a device is stacked on it whatever
/// its offset, though the kernel lists no holder for it.
fn loop_backings() -> Vec<(Dev, Dev)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return out;
    };
    for e in rd.flatten() {
        if !e.file_name().to_string_lossy().starts_with("loop") {
            continue;
        }
        let dir = e.path();
        let Some(backing) = std::fs::read_to_string(dir.join("loop/backing_file")).ok() else {
            continue;
        };
        let backing = backing.trim_end_matches('\n');
        let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
        let Ok(m) = std::fs::metadata(backing) else {
            continue;
        };
        if !m.file_type().is_block_device() {
            continue;
        }
        if let Some(d) = std::fs::read_to_string(dir.join("dev"))
            .ok()
            .and_then(|s| parse_dev(&s))
        {
            out.push((dev_of(m.rdev()), d));
        }
    }
    out
}

/// A device found on the way from a target to what is stacked on it.
struct Related {
    dev: Dev,
    name: String,
    /// Index (in the list) of the device it sits on; `None` for the target.
    on: Option<usize>,
}

impl Related {
    /// How the device relates to the target, for messages.
    fn describe(&self, all: &[Related]) -> String {
        match self.on {
            None | Some(0) => format!("{}, which is on it,", self.name),
            Some(i) => format!("{}, which is on {} (on it),", self.name, all[i].name),
        }
    }
}

/// The device, its partitions and everything stacked on them (holders,
/// loop devices over them), each with its kernel name, from /sys.
fn related_devices(dev: Dev) -> Vec<Related> {
    let loops = loop_backings();
    let mut seen = HashSet::new();
    let mut todo: Vec<(Dev, Option<usize>)> = vec![(dev, None)];
    let mut out: Vec<Related> = Vec::new();
    while let Some((d, on)) = todo.pop() {
        if !seen.insert(d) {
            continue;
        }
        let dir = Path::new("/sys/dev/block").join(format!("{}:{}", d.0, d.1));
        let name = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| format!("{}:{}", d.0, d.1));
        let me = out.len();
        out.push(Related { dev: d, name, on });
        // Partitions are subdirectories holding a `partition` file.
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let p = e.path();
                if p.join("partition").exists() {
                    if let Some(pd) = std::fs::read_to_string(p.join("dev"))
                        .ok()
                        .and_then(|s| parse_dev(&s))
                    {
                        todo.push((pd, Some(me)));
                    }
                }
            }
        }
        if let Ok(rd) = std::fs::read_dir(dir.join("holders")) {
            for e in rd.flatten() {
                let dev_file = Path::new("/sys/class/block")
                    .join(e.file_name())
                    .join("dev");
                if let Some(hd) = std::fs::read_to_string(dev_file)
                    .ok()
                    .and_then(|s| parse_dev(&s))
                {
                    todo.push((hd, Some(me)));
                }
            }
        }
        for (backing, lo) in &loops {
            if *backing == d {
                todo.push((*lo, Some(me)));
            }
        }
    }
    out
}

/// Why a block device is in use, if it is.
fn in_use(path: &Path, mounts: &HashMap<Dev, String>) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    in_use_dev(path, dev_of(meta.rdev()), mounts)
}

fn in_use_dev(path: &Path, dev: Dev, mounts: &HashMap<Dev, String>) -> Option<String> {
    let all = related_devices(dev);
    for (i, r) in all.iter().enumerate() {
        if let Some(what) = mounts.get(&r.dev) {
            return Some(if i == 0 {
                format!("it is {what}")
            } else {
                format!("{} is {what}", r.describe(&all))
            });
        }
    }
    // The kernel refuses an exclusive open of a device that a filesystem
    // or a driver (device-mapper, MD) holds, even one mounted elsewhere.
    // This probe's own exclusive open is as brief as it is, but the jobs
    // of one run that share the device probe it at the same moment and
    // can meet one another's: a holder is one that stays (tried again
    // over about 127 ms).
    let c = crate::engine::file::cstring(path).ok()?;
    let flags = crate::sys::O_RDONLY | crate::sys::O_EXCL | crate::sys::O_NONBLOCK;
    for wait in [1, 2, 4, 8, 16, 32, 64, 0] {
        match crate::sys::open_at(crate::sys::AT_FDCWD, &c, flags, 0) {
            Err(e) if crate::sys::errno_of(&e) == Some(libc::EBUSY) => {
                if wait == 0 {
                    return Some(
                        "it is in use (mounted, or held by device-mapper, LVM or MD RAID)"
                            .to_string(),
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(wait));
            }
            _ => return None,
        }
    }
    None
}

/// The first signature found on a device stacked on `dev` (a loop device
/// at an offset, a device-mapper target), described for a message.
fn stacked_signature(dev: Dev) -> Option<String> {
    let all = related_devices(dev);
    for r in all.iter().skip(1) {
        let node = Path::new("/dev").join(&r.name);
        let Ok(m) = std::fs::metadata(&node) else {
            continue;
        };
        if !m.file_type().is_block_device() || dev_of(m.rdev()) != r.dev {
            continue;
        }
        let Ok(size) = super::plan::blockdev_size(&node) else {
            continue;
        };
        if let Ok(Some(sig)) = super::signatures::probe_device(&node, size) {
            return Some(format!("{} holds {sig}", r.describe(&all)));
        }
    }
    None
}

/// Checks again, right after a block device (or an NVMe namespace's
/// generic character device) was opened for writing, that nothing on it
/// is mounted or used as swap (a mount can appear between the check and
/// the open). `rdev` is the opened device.
pub fn recheck_opened_block(
    spec: &crate::job::JobSpec,
    path: &Path,
    rdev: u64,
    nvme: bool,
) -> Result<(), Refusal> {
    if spec.file.allow_mounted_write || !writes_to_devices(spec) {
        return Ok(());
    }
    if cfg!(windows) {
        return match crate::sys::device_in_use(path) {
            Some(why) => Err(Refusal(format!(
                "refusing to write to '{}': {why} (checked again after opening it); set \
                 allow_mounted_write=1 if you really want it overwritten",
                path.display()
            ))),
            None => Ok(()),
        };
    }
    let (node, dev) = if nvme {
        let Some(b) = nvme_block_device(path).ok().flatten() else {
            return Ok(());
        };
        let Ok(m) = std::fs::metadata(&b) else {
            return Ok(());
        };
        (b, dev_of(m.rdev()))
    } else {
        (path.to_path_buf(), dev_of(rdev))
    };
    let what = if nvme {
        "NVMe namespace"
    } else {
        "block device"
    };
    match in_use_dev(&node, dev, &mounted_devices()) {
        Some(why) => Err(Refusal(format!(
            "refusing to write to {what} '{}': {why} (checked again after opening it); \
             set allow_mounted_write=1 if you really want it overwritten",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Whether a job writes to (or trims) its block devices.
fn writes_to_devices(spec: &crate::job::JobSpec) -> bool {
    // verify_only reads what an earlier run wrote.
    spec.io.rw.writes() && !spec.verify.verify_only
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_that_needs_a_block_device_gets_nothing_else() {
        let spec = crate::job::test_spec(&[]);
        let p = Path::new("/x");
        let info = spec.io.ioengine.info();
        assert!(!info.needs_block_device);
        assert_eq!(
            check_engine_target(info, &spec, p, TargetKind::Regular),
            Ok(())
        );
        let needs = crate::engine::EngineInfo {
            needs_block_device: true,
            ..*info
        };
        assert_eq!(
            check_engine_target(&needs, &spec, p, TargetKind::Block),
            Ok(())
        );
        for kind in [TargetKind::Regular, TargetKind::Missing, TargetKind::Char] {
            let e = check_engine_target(&needs, &spec, p, kind).unwrap_err().0;
            assert!(
                e.contains("needs a block device") && e.contains("'/x'"),
                "{e}"
            );
        }
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn fifos_and_character_devices_need_allow_special_files() {
        let id = |fmt, rdev| FileId {
            dev: 5,
            ino: 7,
            fmt,
            rdev,
            born: None,
        };
        let seen = |fmt, rdev| Seen {
            link: false,
            id: Some(id(fmt, rdev)),
            dir: None,
        };
        let spec = crate::job::test_spec(&[]);
        let p = Path::new("/x");
        let e = check_special(&spec, p, TargetKind::Fifo, &seen(crate::sys::S_IFIFO, 0))
            .unwrap_err()
            .0;
        assert!(
            e.contains("FIFO") && e.contains("allow_special_files=1"),
            "{e}"
        );
        let tty = libc::makedev(5, 0);
        let e = check_special(&spec, p, TargetKind::Char, &seen(crate::sys::S_IFCHR, tty))
            .unwrap_err()
            .0;
        assert!(e.contains("character device (5:0)"), "{e}");
        // /dev/null, /dev/zero, /dev/full are accepted, as fio does.
        for minor in [3, 5, 7] {
            let s = seen(crate::sys::S_IFCHR, libc::makedev(1, minor));
            assert_eq!(check_special(&spec, p, TargetKind::Char, &s), Ok(()));
        }
        let allowed = crate::job::test_spec(&[("allow_special_files", "1")]);
        let s = seen(crate::sys::S_IFIFO, 0);
        assert_eq!(check_special(&allowed, p, TargetKind::Fifo, &s), Ok(()));
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn identity_refusals_say_what_changed() {
        let reg = FileId {
            dev: 1,
            ino: 10,
            fmt: crate::sys::S_IFREG,
            rdev: 0,
            born: None,
        };
        let p = Path::new("/d/f");
        let was = Seen {
            link: false,
            id: Some(reg),
            dir: None,
        };
        assert_eq!(check_identity(p, &was, &reg), Ok(()));
        let e = check_identity(p, &Seen::default(), &reg).unwrap_err().0;
        assert!(
            e.starts_with("refusing to open '/d/f': it did not exist"),
            "{e}"
        );
        let other = FileId { ino: 11, ..reg };
        let e = check_identity(p, &was, &other).unwrap_err().0;
        assert!(e.contains("1:10 became 1:11"), "{e}");
        let fifo = FileId {
            fmt: crate::sys::S_IFIFO,
            ..other
        };
        let e = check_identity(p, &was, &fifo).unwrap_err().0;
        assert!(
            e.contains("was a regular file") && e.contains("now a FIFO"),
            "{e}"
        );
    }

    #[test]
    fn fio_default_file_names_are_recognised() {
        assert!(fio_default_name(Path::new("rw2.0.0"), "rw2"));
        assert!(fio_default_name(Path::new("/d/job.12.3"), "job"));
        assert!(!fio_default_name(Path::new("rw2.0"), "rw2"));
        assert!(!fio_default_name(Path::new("rw2.0.0.x"), "rw2"));
        assert!(!fio_default_name(Path::new("other.0.0"), "rw2"));
        assert!(!fio_default_name(Path::new("rw2.a.0"), "rw2"));
    }

    #[test]
    fn the_root_filesystem_device_counts_as_mounted() {
        // Read-only: looks for the device mounted on "/" and checks that
        // it is seen as in use. Skipped where / is not on a block device.
        let Some(source) = crate::host::mounts::read()
            .into_iter()
            .find(|m| m.point == "/" && m.source.starts_with("/dev/"))
            .map(|m| m.source)
        else {
            return;
        };
        let Ok(meta) = std::fs::metadata(&source) else {
            return;
        };
        if !meta.file_type().is_block_device() {
            return;
        }
        let why = in_use(Path::new(&source), &mounted_devices());
        assert!(why.is_some_and(|w| w.contains("mounted on /")), "{source}");
    }
}
