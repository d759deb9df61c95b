//! Making a worker, step by step: the engine and the queue depth, the
//! aligned buffer pool (and `lockmem`), the engine started on it, the
//! workload, the files opened and checked, the clock, the trace
//! (`write_iolog`) and the recorder's logs, verification, then the queue
//! and the worker. Everything the hot path needs is allocated here. A
//! step that fails gives the errno and message the job reports.

use std::sync::atomic::Ordering;

use super::account::Done;
use super::errors::ErrorState;
use super::fileset::FileSet;
use super::pace::Pacing;
use super::phase::Phase;
use super::queue::{Batching, IoQueue};
use super::verify::VerifyState;
use super::{drops_cache, Progress, RunShared, Worker};
use crate::engine::{self, Caps, Engine, EngineError};
use crate::job::spec::Ddir;
use crate::run::clock::{self, Clock};
use crate::run::files::{self, FileError, OpenedFile};
use crate::run::memory::{BufferMemory, LockedMemory, MemoryError};
use crate::run::offload::OffloadEngine;
use crate::run::plan::PlannedJob;
use crate::stats::logs::LogError;
use crate::stats::recorder::{Action, Recorder};
use crate::stats::JobStats;
use crate::workload::buffers::BufferFiller;
use crate::workload::iolog::{FileAction, IologWriter, Replay, TraceError};
use crate::workload::prio::PrioChooser;
use crate::workload::{Region, Workload};

/// Why a job clone could not start: its errno ([`SetupError::errno`],
/// the job's `err=`) and the message (its `Display`).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `exec_prerun` could not run or failed (ECANCELED).
    #[error(transparent)]
    Prerun(#[from] super::HookError),
    /// The engine cannot be made for the job, or its submission threads
    /// started (reported as EINVAL, whatever the engine's errno).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The engine's setup on the buffers or files failed.
    #[error("{engine} engine setup failed: {source}")]
    EngineInit {
        engine: &'static str,
        source: std::io::Error,
    },
    /// The buffers or `lockmem`'s memory cannot be had (ENOMEM).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The random map of `0` blocks cannot be allocated (ENOMEM).
    #[error(
        "no memory for the random map of {0} blocks: set norandommap=1, or softrandommap=1 to go on without it"
    )]
    RandomMap(u64),
    /// The `write_iolog` trace cannot be created (EIO).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A file cannot be laid out, opened or pre-read.
    #[error(transparent)]
    File(#[from] FileError),
    /// A log file cannot be created.
    #[error(transparent)]
    Log(#[from] LogError),
    /// `zonemode=zbd`: the zones cannot be read.
    #[error("cannot read the zones of the job's files: {0}")]
    Zones(std::io::Error),
    /// The job's I/O priority (`prio`, `prioclass`) cannot be set.
    #[error(
        "cannot set the I/O priority class {class}, level {level} (prioclass, prio): {source}{why}"
    )]
    Priority {
        class: u32,
        level: u32,
        source: std::io::Error,
        why: &'static str,
    },
}

impl SetupError {
    /// The errno the job reports.
    pub fn errno(&self) -> i32 {
        match self {
            SetupError::Prerun(_) => libc::ECANCELED,
            SetupError::Engine(_) => libc::EINVAL,
            SetupError::EngineInit { source, .. } => {
                crate::sys::errno_of(source).unwrap_or(libc::EIO)
            }
            SetupError::Memory(_) | SetupError::RandomMap(_) => libc::ENOMEM,
            SetupError::Trace(_) => libc::EIO,
            SetupError::File(e) => e.errno(),
            SetupError::Log(e) => e.errno(),
            SetupError::Zones(e) => crate::sys::errno_of(e).unwrap_or(libc::EIO),
            SetupError::Priority { source, .. } => {
                crate::sys::errno_of(source).unwrap_or(libc::EPERM)
            }
        }
    }
}

/// The buffers: the pool the units are cut from, `lockmem`'s pinned
/// memory, and the write contents made in the pool.
struct Buffers {
    pool: BufferMemory,
    unit_size: usize,
    locked: Option<LockedMemory>,
    filler: BufferFiller,
}

/// The I/O side, ready: the engine started on the buffers, the
/// workload, the files open.
struct Io {
    engine: Box<dyn Engine>,
    caps: Caps,
    /// Units in the queue.
    depth: u32,
    buffers: Buffers,
    workload: Workload,
    files: Vec<OpenedFile>,
}

/// Makes the worker for `job` and its I/O queue.
pub(super) fn setup<'a>(
    job: &'a PlannedJob,
    shared: &'a RunShared,
    progress: &'a Progress,
) -> Result<(IoQueue, Worker<'a>), SetupError> {
    let spec = &job.spec;
    // As fio, before the engine starts.
    set_io_priority(spec)?;
    // The engine is declared last so it goes first (before its buffers)
    // when a step below fails.
    let Io {
        buffers,
        caps,
        depth,
        workload,
        files,
        engine,
    } = io(job)?;
    let mut clock = match shared.fake_clock_step {
        Some(step) => Clock::fake(step),
        None => Clock::real(shared.base, clock::resolve(spec.time.clocksource).0),
    };
    let iolog = match &spec.log.write_iolog {
        Some(path) => Some(trace(job, path, &files, caps, clock.now())?),
        None => None,
    };
    let mut rec = recorder(job, progress, depth, caps, shared.fake_clock_step.is_some())?;
    let number = progress.link.number.load(Ordering::Relaxed).max(1) as u16;
    let vfy = VerifyState::new(
        spec,
        &workload,
        job.limits,
        number,
        job.seed,
        depth,
        // (objects on a server are read back for real)
        caps.diskless && !caps.stores_data,
    );
    let (stats, prio) = priorities(job, opening_latencies(job, &files, caps));
    rec.shape_snapshots(&stats, &progress.link);
    rec.watch_first_byte(engine.first_byte());
    publish_plan(job, progress);
    let Buffers {
        pool,
        unit_size,
        locked,
        filler,
    } = buffers;
    let serialize = vfy.as_deref().is_some_and(|v| v.needs_serial_writes());
    let batch = Batching::new(&spec.io, depth, rec.initial_depth(depth));
    let q = queue(spec, engine, pool, unit_size, depth, batch, serialize, prio);
    let mut w = Worker {
        job,
        progress,
        shared,
        clock,
        files: FileSet {
            list: files,
            open_flags: files::open_flags(job),
        },
        workload,
        filler,
        iolog,
        stats,
        rec,
        pending: Action::Continue,
        done: Done::default(),
        sync_cover: 0,
        retry: None,
        stamp: None,
        stamps: false,
        plain: false,
        phase: Phase::new(),
        pace: Pacing::new(spec, job.seed, flow(spec, shared)),
        err: ErrorState::new(spec),
        vfy,
        _locked: locked,
    };
    w.stamps = !w.clock.is_fake() && w.vfy.is_none() && !w.pace.waits();
    w.plain = w.vfy.is_none() && w.iolog.is_none() && !w.pace.waits() && w.workload.unpaced();
    let mut q = q;
    q.reuse_commit_reading(w.stamps);
    Ok((q, w))
}

/// The engine and the queue depth, the buffers, the engine started on
/// them, the workload, the files.
fn io(job: &PlannedJob) -> Result<Io, SetupError> {
    let spec = &job.spec;
    let engine = engine::create(spec).map_err(SetupError::Engine)?;
    let offload = OffloadEngine::wanted(spec);
    // Offloaded, even a synchronous engine has iodepth I/Os in flight.
    let depth = if engine.caps().sync && !offload {
        1
    } else {
        spec.io.iodepth.max(1)
    };
    let buffers = buffers(job, depth)?;
    let (mut engine, caps) = start_engine(job, engine, offload, depth, &buffers.pool)?;
    let mut workload = workload(job)?;
    if !caps.sync && !offload {
        // fio ends a loop at `size` bytes only for I/O an engine queued.
        workload.cap_each_loop();
    }
    let files = open_files(job, engine.as_mut(), &workload, caps)?;
    if job.files.iter().any(|f| f.zbd.is_some()) {
        let zones = crate::run::zoned::zone_files(job).map_err(SetupError::Zones)?;
        workload.set_zbd(zones);
    }
    Ok(Io {
        engine,
        caps,
        depth,
        buffers,
        workload,
        files,
    })
}

/// The queue: `units` units of `unit_size` bytes of `pool`;
/// writes wait for I/O they overlap when verification `needs_serial`
/// writes, or with `serialize_overlap`; `prio` gives each I/O its
/// priority.
#[allow(clippy::too_many_arguments)]
fn queue(
    spec: &crate::job::JobSpec,
    engine: Box<dyn Engine>,
    pool: BufferMemory,
    unit_size: usize,
    units: u32,
    batch: Batching,
    needs_serial: bool,
    prio: PrioChooser,
) -> IoQueue {
    let serialize = units > 1 && (spec.io.serialize_overlap || needs_serial);
    let sfr_flags = spec.sync.sync_file_range.map(|(f, _)| f).unwrap_or(0);
    IoQueue::new(
        engine, pool, unit_size, units, batch, serialize, sfr_flags, prio,
    )
}

/// `prio`, `prioclass`: the worker thread's I/O priority, as fio sets
/// it (`ioprio_set` on the calling thread). Failing to set it fails the
/// job, as in fio (an unprivileged user asking for the real-time class).
fn set_io_priority(spec: &crate::job::JobSpec) -> Result<(), SetupError> {
    let ctl = &spec.ctl;
    if ctl.prioclass.is_none() && ctl.prio.is_none() {
        return Ok(());
    }
    let value = crate::job::ioprio::job_value(ctl.prioclass, ctl.prio);
    // SAFETY: ioprio_set(IOPRIO_WHO_PROCESS, 0 = this thread, value)
    // takes plain integers.
    #[cfg(target_os = "linux")]
    let failed = unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, libc::c_int::from(value)) } < 0;
    // Refused by the planner elsewhere (`run::platform`).
    #[cfg(not(target_os = "linux"))]
    let failed = true;
    if failed {
        #[cfg(target_os = "linux")]
        let source = std::io::Error::last_os_error();
        #[cfg(not(target_os = "linux"))]
        let source = crate::sys::from_errno(libc::EINVAL);
        let why = match crate::sys::errno_of(&source) {
            Some(libc::EPERM) => crate::job::ioprio::eperm_reason(value),
            _ => "",
        };
        return Err(SetupError::Priority {
            class: crate::job::ioprio::class(value),
            level: crate::job::ioprio::level(value),
            source,
            why,
        });
    }
    Ok(())
}

/// The chooser of each I/O's priority, and `stats` laid out for the
/// job's priorities: its own, and a latency histogram per priority for
/// each direction whose I/O may run at several (`cmdprio*`).
fn priorities(job: &PlannedJob, mut stats: JobStats) -> (JobStats, PrioChooser) {
    let spec = &job.spec;
    let prio = PrioChooser::new(spec, job.thread_number, job.seed);
    stats.ioprio = prio.own().value;
    stats.prio_lat = spec.stat.lat_percentiles;
    for (d, values) in prio.stat_values().iter().enumerate() {
        stats.dir[d].prios = values
            .iter()
            .map(|v| crate::stats::PrioStat {
                ioprio: *v,
                lat: Default::default(),
            })
            .collect();
    }
    (stats, prio)
}

/// What the progress line's ETA counts on: the planned bytes and time.
fn publish_plan(job: &PlannedJob, progress: &Progress) {
    let spec = &job.spec;
    progress
        .planned_bytes
        .store(job.limits.bytes * spec.io.loops.max(1), Ordering::Relaxed);
    progress.planned_runtime_us.store(
        spec.time.runtime_us + spec.time.ramp_time_us,
        Ordering::Relaxed,
    );
}

/// stats hook: the recorder (opens the job's log files).
fn recorder(
    job: &PlannedJob,
    progress: &Progress,
    depth: u32,
    caps: Caps,
    fake_clock: bool,
) -> Result<Recorder, SetupError> {
    Recorder::new(
        &job.spec,
        job.clone,
        &progress.link,
        depth,
        caps,
        fake_clock,
    )
    .map_err(SetupError::from)
}

/// The job's place in its flow group (`flow`), if it has one.
fn flow(spec: &crate::job::JobSpec, shared: &RunShared) -> Option<crate::run::flow::FlowMember> {
    (spec.ctl.flow > 0).then(|| shared.flows.join(spec.ctl.flow_id, spec.ctl.flow))
}

/// The buffer pool: `depth` units of the largest block size, aligned
/// for the job's files (`iomem_align`, direct I/O), from the memory
/// `mem` asks for; `lockmem`'s memory; the write contents.
fn buffers(job: &PlannedJob, depth: u32) -> Result<Buffers, SetupError> {
    let spec = &job.spec;
    let max_bs = spec.io.bs.iter().map(|b| b.max()).max().unwrap_or(4096);
    // Each unit is aligned for the targets (a page, or what direct I/O
    // needs); `iomem_align` aligns the start of the pool, as in fio.
    let unit_align = engine::align::buffer_alignment(
        spec.sync.direct,
        0,
        job.files.iter().map(|f| f.path.as_path()),
    ) as usize;
    let align = unit_align.max(spec.buf.iomem_align as usize);
    let unit_size = (max_bs as usize).div_ceil(unit_align) * unit_align;
    let mut pool = BufferMemory::with_consent(
        depth as usize * unit_size,
        align,
        &spec.buf.mem,
        spec.buf.hugepage_size,
        crate::run::memory::Consent {
            allow_destroy: spec.file.allow_destroy_data,
            run_token: job.run_token.as_deref(),
        },
    )
    .map_err(SetupError::Memory)?;
    let locked = match spec.buf.lockmem {
        0 => None,
        n => Some(LockedMemory::new(n as usize).map_err(SetupError::Memory)?),
    };
    let data_bytes: u64 = job.files.iter().map(|f| f.region.len).sum();
    let mut filler = BufferFiller::shared(spec, unit_size, data_bytes, job.seed, job.dedupe_share);
    filler.init(pool.as_mut_slice());
    Ok(Buffers {
        pool,
        unit_size,
        locked,
        filler,
    })
}

/// Starts the engine on the pool: in its own threads when offloaded
/// (`io_submit_mode=offload`), else in this one. Returns it with its
/// capabilities (as they were before `init`).
fn start_engine(
    job: &PlannedJob,
    mut engine: Box<dyn Engine>,
    offload: bool,
    depth: u32,
    pool: &BufferMemory,
) -> Result<(Box<dyn Engine>, Caps), SetupError> {
    if offload {
        let off = OffloadEngine::start(&job.spec, depth, (pool.ptr, pool.size))
            .map_err(SetupError::Engine)?;
        let caps = off.caps();
        return Ok((Box::new(off), caps));
    }
    let caps = engine.caps();
    engine
        .init(depth, (pool.ptr, pool.size))
        .map_err(|source| SetupError::EngineInit {
            engine: engine.name(),
            source,
        })?;
    Ok((engine, caps))
}

/// The workload over the job's regions (or its trace, `read_iolog`).
fn workload(job: &PlannedJob) -> Result<Workload, SetupError> {
    let spec = &job.spec;
    let regions: Vec<Region> = job.files.iter().map(|f| f.region).collect();
    let mut workload = Workload::new(spec, &regions, job.limits, job.seed);
    workload.number_clone(spec, job.thread_number, job.seed);
    match workload.random_map_failed() {
        0 => {}
        n if spec.io.softrandommap => crate::run::output::stderr_line(&format!(
            "iomark: warning: job '{}': no memory for the random map of {n} blocks; \
             carrying on without one (softrandommap), so some blocks may be done twice and others not at all",
            spec.name
        )),
        n => return Err(SetupError::RandomMap(n)),
    }
    workload.file_events().clear();
    if let Some(trace) = &job.trace {
        workload.set_replay(Replay::new(trace.clone(), spec.log.replay_no_stall));
    }
    Ok(workload)
}

/// Opens the files the workload starts with (after `pre_read`), checks
/// direct I/O alignment, tells the engine, drops cached pages.
fn open_files(
    job: &PlannedJob,
    engine: &mut dyn Engine,
    workload: &Workload,
    caps: Caps,
) -> Result<Vec<OpenedFile>, SetupError> {
    let spec = &job.spec;
    if spec.file.pre_read && !caps.diskless {
        files::pre_read(job)?;
    }
    let files = files::open_all(job, engine, &workload.initially_open())?;
    if spec.sync.direct
        && !caps.diskless
        && !caps.file_op
        && job.trace.is_none()
        && spec.io.ioengine.info().direct_io
    {
        files::check_direct_alignment(job)?;
    }
    let fds: Vec<i32> = files.iter().map(|f| f.fd).collect();
    engine
        .files_opened(&fds)
        .map_err(|source| SetupError::EngineInit {
            engine: engine.name(),
            source,
        })?;
    if drops_cache(spec, caps) {
        files::invalidate(job, &files);
    }
    Ok(files)
}

/// `write_iolog`: the trace, with the files open at `now`.
fn trace(
    job: &PlannedJob,
    path: &str,
    files: &[OpenedFile],
    caps: Caps,
    now: u64,
) -> Result<IologWriter, SetupError> {
    let paths: Vec<_> = job.files.iter().map(|f| f.path.clone()).collect();
    let mut log =
        IologWriter::create(std::path::Path::new(path), &paths, now).map_err(SetupError::Trace)?;
    for (i, f) in files.iter().enumerate() {
        if f.fd >= 0 || f.data != 0 || caps.diskless {
            log.file(i as u32, FileAction::Open, now);
        }
    }
    Ok(log)
}

/// The statistics a job starts with: for the file-operation engines,
/// the opens setup did, which are what they measure.
fn opening_latencies(job: &PlannedJob, files: &[OpenedFile], caps: Caps) -> JobStats {
    let spec = &job.spec;
    let mut stats = JobStats::default();
    if caps.file_op && !spec.stat.disable_clat {
        // The open (create, stat, unlink) is what these engines measure.
        let d = if spec.io.rw.has(Ddir::Read) { 0 } else { 1 };
        for f in files.iter().filter(|f| f.fd >= 0 || f.open_ns > 0) {
            stats.dir[d].clat.record(f.open_ns);
        }
    }
    stats
}
