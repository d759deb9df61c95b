//! The worker: one thread per job clone. It opens the files, allocates the
//! aligned buffer pool once, then runs the job's loops and passes: ask the
//! workload for the next I/O, pace it (`workload::pacing`: rate, think
//! time, minimum rate), queue it on the engine, submit in batches, reap
//! completions and account them in its own `JobStats`.
//!
//! It is made of parts with one job each:
//!
//! - `queue`: the I/O queue. The units and their buffers, the free, busy
//!   and uncommitted lists, the in-flight count, the batching rules
//!   (`iodepth_batch_submit`, `iodepth_batch_complete_min/max`,
//!   `iodepth_low`) and commit, reap and drain. The only code that hands
//!   I/O to the engine; data and verify I/O both go through it, and it
//!   hands what completes back through its `Completions` trait.
//! - `phase`: the phases and deadlines (start delay, ramp, measured
//!   runtime, stop requests) and the loops and passes (`loops`, extra
//!   passes for `io_size`, time-based rounds, verify rounds).
//! - `errors`: the error state (first error, `continue_on_error` and
//!   `ignore_error` fates, `total_err`, `fill_device`'s full target).
//! - `account`: what a completion does (statistics and the recorder's
//!   actions, progress counters, the minimum rate); `short`: short
//!   transfers finished or failed as fio does.
//! - `pass`: one pass of the data I/O loop; `pace`: rate, replay timing,
//!   think time and flow groups.
//! - `fileset`: the open files (`openfiles` events, `unlink_each_loop`,
//!   dropping cached pages between loops).
//! - `verify`: stamping, recording, reading back and checking writes.
//! - `setup`: the steps that make a worker (engine, buffers, workload,
//!   files, clock, logs, verification, queue).
//!
//! This file holds the `Worker` that ties the parts together and
//! `run_job`, the job's life from setup to its report.
//!
//! Hot-path rules: no allocation, no lock, no syscall but the I/O itself
//! and the clock read. Progress is published through relaxed atomics.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::clock::Clock;
use super::files;
use super::memory::LockedMemory;
use super::plan::PlannedJob;
use crate::job::spec::Ddir;
use crate::stats::recorder::{Action, Recorder};
use crate::stats::JobStats;
use crate::workload::buffers::BufferFiller;
use crate::workload::iolog::IologWriter;
use crate::workload::{NextIo, Workload};

mod account;
mod errors;
mod fileset;
mod pace;
mod pass;
mod phase;
mod queue;
mod setup;
mod short;
mod verify;

use account::Done;
use errors::ErrorState;
use fileset::FileSet;
use pace::Pacing;
use phase::Phase;
use queue::IoQueue;
use verify::VerifyState;

/// Job states shown in the progress line.
pub mod state {
    pub const NOT_STARTED: u8 = 0;
    pub const SETUP: u8 = 1;
    pub const RAMP: u8 = 2;
    pub const RUNNING: u8 = 3;
    pub const FSYNC: u8 = 4;
    pub const DONE: u8 = 5;
    pub const ERROR: u8 = 6;
}

/// Live counters a job publishes for the progress line.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes and I/Os done, per direction. The job's worker is their only
    /// writer (a relaxed load and store per I/O, no read-modify-write);
    /// everyone else only reads them.
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Planned bytes and runtime, for the ETA.
    pub planned_bytes: AtomicU64,
    pub planned_runtime_us: AtomicU64,
    /// Stop requests (steady state, `exitall` of the job's group) and
    /// status snapshots shared with the runner and the monitor.
    pub link: crate::stats::live::JobLink,
    /// When the clone ended, CLOCK_MONOTONIC ns (0 while it runs): its
    /// counters are final from then on.
    pub ended_ns: AtomicU64,
}

/// What a worker reports when it ends (serializable exactly, for results
/// sent between hosts: `stats::wire`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub stats: JobStats,
    /// errno of the first error (0 when none) and its message.
    pub error: i32,
    pub error_msg: Option<String>,
    pub interrupted: bool,
    /// Unix time (ms) when the job started I/O.
    pub start_unix_ms: u64,
}

/// Things every worker of a run shares.
pub struct RunShared {
    /// Set on Ctrl-C, SIGTERM or `exitall`: workers stop promptly.
    pub stop: AtomicBool,
    pub interrupted: AtomicBool,
    /// Use a fake clock with this step (ns) instead of the real one.
    pub fake_clock_step: Option<u64>,
    pub base: std::time::Instant,
    /// Flow groups (`flow`, `flow_id`).
    pub flows: super::flow::Flows,
}

impl RunShared {
    pub fn new(fake_clock_step: Option<u64>) -> Self {
        RunShared {
            stop: AtomicBool::new(false),
            interrupted: AtomicBool::new(false),
            fake_clock_step,
            base: std::time::Instant::now(),
            flows: Default::default(),
        }
    }
}

/// How a pass ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PassEnd {
    /// The workload had nothing more for this pass.
    Done,
    /// Time is up, the job was stopped, or it failed.
    Stopped,
}

/// A job clone's state while it runs, beside its I/O queue (which the
/// methods take as `q`, so the queue can hand completions back here).
struct Worker<'a> {
    job: &'a PlannedJob,
    progress: &'a Progress,
    shared: &'a RunShared,
    clock: Clock,
    files: FileSet,
    workload: Workload,
    /// Write buffer contents.
    filler: BufferFiller,
    /// `write_iolog`: records every issued I/O.
    iolog: Option<IologWriter>,
    stats: JobStats,
    /// Statistics, logs, latency target (src/stats/recorder.rs).
    rec: Recorder,
    /// What the recorder asked for during a completion, applied after it.
    pending: Action,
    /// Bytes and I/Os done since the start (ramp included).
    done: Done,
    /// Start of the first write since the last sync (0: none).
    sync_cover: u64,
    /// An I/O the engine answered `Busy` to, issued again after a reap.
    retry: Option<NextIo>,
    /// The clock reading of the last completion, when the next loop may
    /// take it for its own (`stamps`): nothing but bookkeeping happened
    /// since, so one read fewer per I/O. Taken at the loop's top; never
    /// the start, issue or completion time of an I/O.
    stamp: Option<u64>,
    /// Whether completions leave `stamp`: with a real clock, in a job
    /// that neither waits by choice (rate, pauses, flow) nor verifies.
    stamps: bool,
    /// Whether the job's passes take the plain loop (`run_plain_pass`):
    /// no verification, trace, rate, pause, flow group, replay or zones,
    /// so none of their per-I/O checks can ever answer yes.
    plain: bool,
    phase: Phase,
    pace: Pacing,
    err: ErrorState<'a>,
    /// Verification (`verify`), when the job does it.
    vfy: Option<Box<VerifyState>>,
    /// `lockmem`: memory pinned while the job runs.
    _locked: Option<LockedMemory>,
}

/// Why `exec_prerun`/`exec_postrun` (`what`) did not succeed; `out` is
/// the file that takes its output.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("cannot create {out} for exec_{what}: {source}")]
    Create {
        out: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{out}: {source}")]
    Output { out: String, source: std::io::Error },
    #[error("cannot run exec_{what} '{cmd}': {source}")]
    Spawn {
        what: &'static str,
        cmd: String,
        source: std::io::Error,
    },
    #[error("exec_{what} '{cmd}' failed ({status}); its output is in {out}")]
    Failed {
        what: &'static str,
        cmd: String,
        status: std::process::ExitStatus,
        out: String,
    },
}

/// Runs `exec_prerun`/`exec_postrun` (`what`) through the system's shell
/// ([`shell`]), its output and errors going to `JOB.WHAT.txt` in the
/// current directory.
fn exec_hook(job: &str, what: &'static str, cmd: &str) -> Result<(), HookError> {
    let out_name = format!("{job}.{what}.txt");
    super::output::stderr_line(&format!(
        "{job}: saving the output of exec_{what} in {out_name}"
    ));
    // Never through a link: a link put there would make iomark truncate
    // whatever it points at.
    let out = crate::outfile::open(
        std::path::Path::new(&out_name),
        crate::outfile::Named::Iomark,
        false,
    )
    .and_then(|mut f| f.truncate_once().map(|()| f.file))
    .map_err(|source| HookError::Create {
        out: out_name.clone(),
        what,
        source,
    })?;
    let err = out.try_clone().map_err(|source| HookError::Output {
        out: out_name.clone(),
        source,
    })?;
    // The system's shell, as fio's `system()`: `/bin/sh -c` on Unix,
    // `cmd.exe /C` on Windows.
    let status = crate::sys::shell(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|source| HookError::Spawn {
            what,
            cmd: cmd.to_string(),
            source,
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(HookError::Failed {
            what,
            cmd: cmd.to_string(),
            status,
            out: out_name,
        })
    }
}

/// Whether the job drops its files' cached pages before each loop.
/// Pre-read data stays cached: that is its point.
fn drops_cache(spec: &crate::job::JobSpec, caps: crate::engine::Caps) -> bool {
    spec.sync.invalidate && !spec.file.pre_read && !caps.diskless
}

/// Runs one job clone from setup to its final fsync; waits on `start`
/// after setup so all jobs started together begin together.
pub fn run_job(
    job: &PlannedJob,
    shared: &RunShared,
    progress: &Progress,
    start: &super::gate::StartGate,
) -> Outcome {
    let out = run_clone(job, shared, progress, start);
    progress
        .ended_ns
        .store(super::clock::mono_ns().max(1), Ordering::Release);
    out
}

/// [`run_job`] until the clone's end.
fn run_clone(
    job: &PlannedJob,
    shared: &RunShared,
    progress: &Progress,
    start: &super::gate::StartGate,
) -> Outcome {
    progress.state.store(state::SETUP, Ordering::Relaxed);
    let prerun = match &job.spec.ctl.exec_prerun {
        Some(cmd) => exec_hook(&job.spec.name, "prerun", cmd).map_err(setup::SetupError::Prerun),
        None => Ok(()),
    };
    let setup = prerun.and_then(|()| setup::setup(job, shared, progress));
    let shared_start = start.wait();
    let (mut q, mut w) = match setup {
        Ok(parts) => parts,
        Err(e) => {
            progress.state.store(state::ERROR, Ordering::Relaxed);
            return Outcome {
                error: e.errno(),
                error_msg: Some(e.to_string()),
                ..Outcome::default()
            };
        }
    };
    let start_unix_ms = w.start_io(shared_start);
    if !job.spec.file.create_only {
        w.run_loops(&mut q);
    }
    q.drain(&mut w);
    // Done issuing: stop holding back the rest of the flow group.
    w.pace.flow = None;
    crate::stats::live::set_timed_phase(false);
    w.end_fsync();
    w.finish(q, start_unix_ms)
}

impl Worker<'_> {
    /// `end_fsync`: the written files are synced before the job ends.
    fn end_fsync(&mut self) {
        let spec = &self.job.spec;
        let dry_run = self.vfy.as_deref().is_some_and(|v| v.dry_run());
        if !spec.sync.end_fsync || !spec.io.rw.writes() || dry_run || self.err.failed() {
            return;
        }
        self.progress.state.store(state::FSYNC, Ordering::Relaxed);
        for i in 0..self.files.list.len() {
            let fd = self.files.list[i].fd;
            // fsync(2); FlushFileBuffers on Windows.
            if fd >= 0 && crate::sys::fsync(fd) < 0 {
                let e = std::io::Error::last_os_error();
                self.err.fail(
                    crate::sys::errno_of(&e).unwrap_or(libc::EIO),
                    format!("end_fsync failed: {e}"),
                );
            }
        }
    }

    /// The job's final statistics: log lines, runtimes and CPU usage
    /// (stats hook), the read-back's share of the time, the error count.
    fn final_stats(&mut self, end: u64) -> JobStats {
        let spec = &self.job.spec;
        let mut stats = std::mem::take(&mut self.stats);
        stats.total_err = self.err.total();
        // A job shorter than its ramp_time measured nothing.
        let measuring = self.phase.measuring;
        if let Err(e) = self.rec.finish(&mut stats, end, measuring) {
            self.err.fail(e.errno(), e.to_string());
        }
        if let Some(v) = self.vfy.as_deref() {
            // Reading back after the write phase is the reads' own time.
            if v.verify_ns > 0 && measuring {
                crate::stats::live::split_read_back(
                    &mut stats,
                    end.saturating_sub(self.phase.measure_start_ns()),
                    v.verify_ns,
                    spec.io.rw.has(Ddir::Read) || v.reads_while_writing(),
                );
            }
            if let Some(more) = v.summary() {
                self.err.append(&more);
            }
        }
        stats
    }

    /// Closes the files, finishes the trace, unlinks, runs
    /// `exec_postrun`, and reports.
    fn finish(mut self, mut q: IoQueue, start_unix_ms: u64) -> Outcome {
        let spec = &self.job.spec;
        let end = self.clock.now();
        let mut stats = self.final_stats(end);
        q.add_side_counters(&mut stats);
        for i in 0..self.files.list.len() {
            self.close_file(&mut q, i);
        }
        if let Some(log) = self.iolog.take() {
            if let Err(m) = log.finish() {
                self.err.fail(libc::EIO, m.to_string());
            }
        }
        if spec.file.unlink {
            files::unlink_all(self.job);
        }
        if let Some(cmd) = &spec.ctl.exec_postrun {
            if let Err(m) = exec_hook(&spec.name, "postrun", cmd) {
                super::output::stderr_line(&format!("iomark: warning: job '{}': {m}", spec.name));
            }
        }
        let (error, error_msg) = self.err.finish(stats.first_error);
        let interrupted = self.shared.interrupted.load(Ordering::Relaxed);
        let end_state = if error != 0 {
            state::ERROR
        } else {
            state::DONE
        };
        self.progress.state.store(end_state, Ordering::Relaxed);
        Outcome {
            stats,
            error,
            error_msg,
            interrupted,
            start_unix_ms,
        }
    }
}
