//! The engine registry: one entry per engine, holding what is known
//! about it before a job runs — its capabilities as data, how its files
//! are laid out, what its writes do to existing data, its preflight and
//! its constructor. Its name and description are in the name table
//! (`job::engine_kind`), the half of the entry the job language needs.
//!
//! Everything outside the engines asks about an engine here
//! (`kind.info().caps.diskless`, `kind.info().layout`, …) instead of
//! comparing names. `EngineKind::info` matches every kind, so an engine
//! added to the name table does not build until it has an entry here.
//!
//! Facts that depend on the job (null is synchronous only at iodepth=1,
//! io_uring registers buffers only with fixedbufs) are the engine's
//! `Engine::caps` method; the entry holds what is true for every job.

use super::mmap;
#[cfg(unix)]
use super::posixaio;
#[cfg(windows)]
use super::windowsaio;
#[cfg(target_os = "linux")]
use super::{falloc, io_uring, io_uring_cmd, libaio};
use super::{fileops, ftruncate, http, null, sync};
use super::{Caps, Engine, EngineError};
use crate::job::{EngineKind, JobSpec};

/// How the runner prepares a job's files before its I/O starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Not at all: the engine does no file I/O (null), or creating the
    /// files is its measured operation (filecreate).
    None,
    /// Created or extended to the job's size, with data only where the
    /// job reads it: I/O may extend a file.
    AsNeeded,
    /// Laid out in full, with data, first: the engine cannot extend a
    /// file during I/O (mmap maps a fixed size).
    Full,
}

/// What the engine's I/O does to data already in a job's files (the
/// safety check refuses it on files iomark did not create unless
/// `allow_destroy_data=1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destroys {
    /// Nothing: no data is written (null, filecreate, filestat).
    Nothing,
    /// Writes and trims replace or discard data.
    WhenWriting,
    /// Each write truncates the file (ftruncate).
    Truncates,
    /// Each file is deleted (filedelete).
    Deletes,
}

/// Checks, before anything is laid out, that an engine can run a job
/// here; one line naming the problem (the caller names the job).
pub type Preflight = fn(&JobSpec) -> Result<(), EngineError>;

/// Builds the engine for a job.
pub type Constructor = fn(&JobSpec) -> Result<Box<dyn Engine>, EngineError>;

/// One engine's registry entry.
#[derive(Debug)]
pub struct EngineInfo {
    pub kind: EngineKind,
    /// Capabilities true for every job (an engine may narrow or widen
    /// them for a given job in `Engine::caps`).
    pub caps: Caps,
    pub layout: Layout,
    pub destroys: Destroys,
    /// Reads and writes go through the descriptor, so `direct=1` makes
    /// them bypass the page cache and they must be aligned to the
    /// device's logical block size (checked before the run). False for
    /// mmap (a mapping ignores O_DIRECT), null and the file-op engines.
    pub direct_io: bool,
    /// Runs only on block devices (refused on files before the run).
    pub needs_block_device: bool,
    /// Sends NVMe commands to NVMe generic character devices
    /// (`/dev/ngXnY`) and to nothing else; no other engine may use such
    /// a device.
    pub nvme_passthrough: bool,
    /// Even its reads change the files (falloc allocates blocks): refused
    /// under `--readonly` whatever the job's `rw`.
    pub reads_change_files: bool,
    /// Exists on this operating system (elsewhere refused before the run
    /// by `engine::platform`, naming the system).
    pub here: bool,
    pub preflight: Preflight,
    pub create: Constructor,
}

impl EngineInfo {
    /// Whether the runner lays out (creates and sizes) a job's files.
    pub fn lays_out_files(&self) -> bool {
        self.layout != Layout::None
    }

    /// Whether the engine's I/O may extend a file; if not, files are laid
    /// out in full first.
    pub fn extends_files(&self) -> bool {
        self.layout != Layout::Full
    }
}

impl EngineKind {
    /// This engine's registry entry.
    pub fn info(self) -> &'static EngineInfo {
        use EngineKind as K;
        match self {
            K::Sync => &SYNC,
            K::Psync => &PSYNC,
            K::Vsync => &VSYNC,
            K::Pvsync => &PVSYNC,
            K::Pvsync2 => &PVSYNC2,
            K::Libaio => &LIBAIO,
            K::IoUring => &IO_URING,
            K::IoUringCmd => &IO_URING_CMD,
            K::PosixAio => &POSIXAIO,
            K::WindowsAio => &WINDOWSAIO,
            K::Mmap => &MMAP,
            K::Null => &NULL,
            K::FileCreate => &FILECREATE,
            K::FileStat => &FILESTAT,
            K::FileDelete => &FILEDELETE,
            K::Ftruncate => &FTRUNCATE,
            K::Falloc => &FALLOC,
            K::Http => &HTTP,
        }
    }
}

fn no_preflight(_: &JobSpec) -> Result<(), EngineError> {
    Ok(())
}

/// The constructor of an engine this system does not have (never called:
/// `engine::platform` refuses such a job first).
#[allow(dead_code)]
fn elsewhere(s: &JobSpec) -> Result<Box<dyn Engine>, EngineError> {
    Err(EngineError::Unfit(
        super::platform::refusal(s).unwrap_or_else(|| "engine not available here".to_string()),
    ))
}

/// `$make` where `$cfg` holds, [`elsewhere`] otherwise.
macro_rules! here {
    ($cfg:meta, $make:expr) => {{
        #[cfg($cfg)]
        let f: Constructor = $make;
        #[cfg(not($cfg))]
        let f: Constructor = elsewhere;
        f
    }};
}

/// An engine that reads and writes file data through the descriptor;
/// the entries below say how each differs.
const DATA_ENGINE: EngineInfo = EngineInfo {
    kind: EngineKind::Psync,
    caps: Caps::NONE,
    layout: Layout::AsNeeded,
    destroys: Destroys::WhenWriting,
    direct_io: true,
    needs_block_device: false,
    nvme_passthrough: false,
    reads_change_files: false,
    here: true,
    preflight: no_preflight,
    create: |s| Ok(Box::new(sync::SyncEngine::new(s, sync::Style::Psync))),
};

/// Every I/O completes inside `queue`.
const SYNCHRONOUS: Caps = Caps {
    sync: true,
    ..Caps::NONE
};

/// A file-operation engine: the measured operation is the open; no data
/// moves.
const FILE_OP: EngineInfo = EngineInfo {
    caps: Caps {
        sync: true,
        file_op: true,
        ..Caps::NONE
    },
    destroys: Destroys::Nothing,
    direct_io: false,
    ..DATA_ENGINE
};

static SYNC: EngineInfo = EngineInfo {
    kind: EngineKind::Sync,
    caps: SYNCHRONOUS,
    create: |s| Ok(Box::new(sync::SyncEngine::new(s, sync::Style::Sync))),
    ..DATA_ENGINE
};

static PSYNC: EngineInfo = EngineInfo {
    kind: EngineKind::Psync,
    caps: SYNCHRONOUS,
    create: |s| Ok(Box::new(sync::SyncEngine::new(s, sync::Style::Psync))),
    ..DATA_ENGINE
};

static VSYNC: EngineInfo = EngineInfo {
    kind: EngineKind::Vsync,
    caps: SYNCHRONOUS,
    here: cfg!(unix),
    create: here!(unix, |s| Ok(Box::new(sync::SyncEngine::new(
        s,
        sync::Style::Vsync
    )))),
    ..DATA_ENGINE
};

static PVSYNC: EngineInfo = EngineInfo {
    kind: EngineKind::Pvsync,
    caps: SYNCHRONOUS,
    here: cfg!(unix),
    create: here!(unix, |s| Ok(Box::new(sync::SyncEngine::new(
        s,
        sync::Style::Pvsync
    )))),
    ..DATA_ENGINE
};

static PVSYNC2: EngineInfo = EngineInfo {
    kind: EngineKind::Pvsync2,
    caps: SYNCHRONOUS,
    here: cfg!(target_os = "linux"),
    create: here!(target_os = "linux", |s| Ok(Box::new(
        sync::SyncEngine::new(s, sync::Style::Pvsync2)
    ))),
    ..DATA_ENGINE
};

static LIBAIO: EngineInfo = EngineInfo {
    kind: EngineKind::Libaio,
    here: cfg!(target_os = "linux"),
    create: here!(target_os = "linux", |s| Ok(Box::new(
        libaio::LibaioEngine::new(s)
    ))),
    ..DATA_ENGINE
};

static IO_URING: EngineInfo = EngineInfo {
    kind: EngineKind::IoUring,
    here: cfg!(target_os = "linux"),
    #[cfg(target_os = "linux")]
    preflight: io_uring::preflight,
    create: here!(target_os = "linux", |s| Ok(Box::new(
        io_uring::IoUringEngine::new(s)?
    ))),
    ..DATA_ENGINE
};

static IO_URING_CMD: EngineInfo = EngineInfo {
    kind: EngineKind::IoUringCmd,
    // The namespace is the target: nothing is laid out, and O_DIRECT
    // means nothing (commands bypass the page cache anyway).
    direct_io: false,
    nvme_passthrough: true,
    here: cfg!(target_os = "linux"),
    #[cfg(target_os = "linux")]
    preflight: io_uring_cmd::preflight,
    create: here!(target_os = "linux", |s| Ok(Box::new(
        io_uring_cmd::IoUringCmdEngine::new(s)?
    ))),
    ..DATA_ENGINE
};

static POSIXAIO: EngineInfo = EngineInfo {
    kind: EngineKind::PosixAio,
    here: cfg!(unix),
    create: here!(unix, |s| Ok(Box::new(posixaio::PosixAioEngine::new(s)))),
    ..DATA_ENGINE
};

static WINDOWSAIO: EngineInfo = EngineInfo {
    kind: EngineKind::WindowsAio,
    here: cfg!(windows),
    create: here!(windows, |s| Ok(Box::new(
        windowsaio::WindowsAioEngine::new(s)?
    ))),
    ..DATA_ENGINE
};

static MMAP: EngineInfo = EngineInfo {
    kind: EngineKind::Mmap,
    caps: SYNCHRONOUS,
    layout: Layout::Full,
    direct_io: false,
    // Windows: files only (`mmap::preflight`).
    #[cfg(windows)]
    preflight: mmap::preflight,
    create: |s| Ok(Box::new(mmap::MmapEngine::new(s))),
    ..DATA_ENGINE
};

static NULL: EngineInfo = EngineInfo {
    kind: EngineKind::Null,
    // Synchronous only at iodepth=1: `NullEngine::caps`.
    caps: Caps {
        diskless: true,
        ..Caps::NONE
    },
    layout: Layout::None,
    destroys: Destroys::Nothing,
    direct_io: false,
    create: |s| Ok(Box::new(null::NullEngine::new(s))),
    ..DATA_ENGINE
};

static FILECREATE: EngineInfo = EngineInfo {
    kind: EngineKind::FileCreate,
    layout: Layout::None,
    create: |s| {
        Ok(Box::new(fileops::FileOpEngine::new(
            s,
            fileops::Kind::Create,
        )))
    },
    ..FILE_OP
};

static FILESTAT: EngineInfo = EngineInfo {
    kind: EngineKind::FileStat,
    create: |s| {
        let stat = fileops::Kind::Stat(s.engine.stat_type);
        Ok(Box::new(fileops::FileOpEngine::new(s, stat)))
    },
    ..FILE_OP
};

static FILEDELETE: EngineInfo = EngineInfo {
    kind: EngineKind::FileDelete,
    destroys: Destroys::Deletes,
    create: |s| {
        Ok(Box::new(fileops::FileOpEngine::new(
            s,
            fileops::Kind::Delete,
        )))
    },
    ..FILE_OP
};

static FTRUNCATE: EngineInfo = EngineInfo {
    kind: EngineKind::Ftruncate,
    caps: SYNCHRONOUS,
    destroys: Destroys::Truncates,
    preflight: ftruncate::preflight,
    create: |_| Ok(Box::new(ftruncate::FtruncateEngine)),
    ..DATA_ENGINE
};

static FALLOC: EngineInfo = EngineInfo {
    kind: EngineKind::Falloc,
    caps: SYNCHRONOUS,
    reads_change_files: true,
    here: cfg!(target_os = "linux"),
    create: here!(target_os = "linux", |_| Ok(Box::new(falloc::FallocEngine))),
    ..DATA_ENGINE
};

static HTTP: EngineInfo = EngineInfo {
    kind: EngineKind::Http,
    // No local file: the targets are objects on a server. Synchronous
    // only at iodepth=1: `HttpEngine::caps`.
    caps: Caps {
        diskless: true,
        stores_data: true,
        ..Caps::NONE
    },
    layout: Layout::None,
    // Nothing local; what it does to objects is checked against the
    // server (`http::preflight`).
    destroys: Destroys::Nothing,
    direct_io: false,
    preflight: http::preflight,
    create: |s| Ok(Box::new(http::HttpEngine::new(s)?)),
    ..DATA_ENGINE
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_entry() {
        for &k in EngineKind::ALL {
            assert_eq!(k.info().kind, k, "{k}'s entry is another engine's");
        }
    }

    #[test]
    fn every_engine_builds_and_reports_its_kind_and_static_caps() {
        for &k in EngineKind::ALL {
            let mut spec = JobSpec::default();
            spec.io.ioengine = k;
            // Deep enough for null to queue; no fixedbufs: the job
            // changes no engine's caps.
            spec.io.iodepth = 8;
            if !k.info().here {
                continue;
            }
            let e = match (k.info().create)(&spec) {
                Ok(e) => e,
                // io_uring can be switched off (seccomp, sysctl).
                Err(m) if k == EngineKind::IoUring && m.to_string().contains("not available") => {
                    continue
                }
                Err(m)
                    if k == EngineKind::IoUringCmd && m.to_string().contains("io_uring_setup") =>
                {
                    continue
                }
                Err(m) => panic!("{k}: {m}"),
            };
            assert_eq!(e.kind(), k);
            assert_eq!(e.name(), k.name());
            assert_eq!(e.caps(), k.info().caps, "{k}");
        }
    }

    #[test]
    fn job_dependent_caps_stay_with_the_engine() {
        let mut spec = JobSpec::default();
        spec.io.ioengine = EngineKind::Null;
        spec.io.iodepth = 8;
        let e = (EngineKind::Null.info().create)(&spec).unwrap();
        assert!(!e.caps().sync && e.caps().diskless);
        spec.io.iodepth = 1;
        let e = (EngineKind::Null.info().create)(&spec).unwrap();
        assert!(e.caps().sync);
        spec.io.ioengine = EngineKind::IoUring;
        spec.engine.fixedbufs = true;
        if let Ok(e) = (EngineKind::IoUring.info().create)(&spec) {
            assert!(e.caps().registers_buffers);
            assert!(!EngineKind::IoUring.info().caps.registers_buffers);
        }
    }

    #[test]
    fn the_facts_the_runner_relies_on() {
        use EngineKind as K;
        let diskless: Vec<_> = K::ALL.iter().filter(|k| k.info().caps.diskless).collect();
        assert_eq!(diskless, [&K::Null, &K::Http]);
        let no_layout: Vec<_> = K::ALL
            .iter()
            .filter(|k| !k.info().lays_out_files())
            .collect();
        assert_eq!(no_layout, [&K::Null, &K::FileCreate, &K::Http]);
        let full: Vec<_> = K::ALL
            .iter()
            .filter(|k| !k.info().extends_files())
            .collect();
        assert_eq!(full, [&K::Mmap]);
        let file_ops: Vec<_> = K::ALL.iter().filter(|k| k.info().caps.file_op).collect();
        assert_eq!(file_ops, [&K::FileCreate, &K::FileStat, &K::FileDelete]);
        assert_eq!(K::FileDelete.info().destroys, Destroys::Deletes);
        assert_eq!(K::Ftruncate.info().destroys, Destroys::Truncates);
        for k in [K::Null, K::FileCreate, K::FileStat, K::Http] {
            assert_eq!(k.info().destroys, Destroys::Nothing, "{k}");
        }
        for k in [
            K::Psync,
            K::Libaio,
            K::IoUring,
            K::IoUringCmd,
            K::Mmap,
            K::Falloc,
            K::WindowsAio,
        ] {
            assert_eq!(k.info().destroys, Destroys::WhenWriting, "{k}");
        }
        assert!(!K::Mmap.info().direct_io && K::Psync.info().direct_io);
        assert!(!K::ALL.iter().any(|k| k.info().needs_block_device));
        let nvme: Vec<_> = K::ALL
            .iter()
            .filter(|k| k.info().nvme_passthrough)
            .collect();
        assert_eq!(nvme, [&K::IoUringCmd]);
    }
}
