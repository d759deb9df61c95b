//! Running a plan: start job clones as their dependencies finish (earlier
//! stonewall phases, `wait_for`), lay out their files, run one worker
//! thread per clone, watch for stop signals (`signals`), `exitall`
//! (scoped by `exit_what`) and `exitall_on_error`, show progress, and
//! collect each clone's outcome. Clones that never start (stopped run)
//! report zeros. After a second signal the run waits at most `HURRY` for
//! its workers; a clone still running then is reported from its live
//! counters (bytes and I/Os done, no latencies) with an error saying so.
//!
//! Runs start from a [`session::Session`]: it checks and plans the jobs,
//! describes the host once, switches the I/O scheduler, and calls [`run`].

pub mod clock;
pub mod files;
pub mod flow;
pub mod gate;
pub mod memory;
pub mod monitor;
pub mod numa;
pub mod offload;
pub mod output;
pub mod overcommit;
pub mod plan;
pub mod progress;
pub mod safety;
pub mod scheduler;
pub mod session;
pub mod signals;
pub mod worker;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::job::spec::ExitWhat;
use gate::StartGate;
use plan::{Plan, PlannedJob};
use worker::{Outcome, Progress, RunShared};

/// A finished clone: what was planned and what happened.
#[derive(Debug)]
pub struct JobRun {
    pub job: PlannedJob,
    pub outcome: Outcome,
}

/// What a session found and decided before its run, carried in the
/// result for the reports (which read nothing themselves).
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// Options of the job file's global sections, as written.
    pub global_options: Vec<(String, String)>,
    /// The host and the targets under the jobs, described once before
    /// the run (with the I/O scheduler the run uses).
    pub environment: crate::host::Environment,
    /// Cache warnings and run notes, as printed before the run.
    pub warnings: Vec<crate::host::Warning>,
}

/// Everything a run produced, for the reports.
#[derive(Debug, Default)]
pub struct RunResult {
    pub jobs: Vec<JobRun>,
    pub interrupted: bool,
    /// Unix time (s) when the run started.
    pub start_unix: u64,
    /// Disk statistics of the devices under the jobs' files.
    pub disks: Vec<crate::stats::disk::DiskReport>,
    /// The clock was fake: wall-clock figures must be fixed in reports.
    pub fake_clock: bool,
    /// Batches of clones that needed more CPUs than allowed.
    pub overcommit: Vec<overcommit::Overcommit>,
    /// What the session captured before the run (shared with interim
    /// results).
    pub context: Arc<RunContext>,
}

impl RunResult {
    pub fn failed(&self) -> bool {
        self.jobs.iter().any(|j| j.outcome.error != 0)
    }
}

/// Options for how a run behaves (not what it does).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Fake clock step in ns (deterministic output for tests).
    pub fake_clock_step: Option<u64>,
    /// Where "Laying out IO file" notices go: true means stdout.
    pub notices_to_stdout: bool,
    pub progress: progress::ProgressMode,
    pub eta_newline: bool,
    /// `--eta-newline=TIME`: a new line only this often (0: every update).
    pub eta_newline_ms: u64,
    /// `--eta-interval`: time between progress updates (0: one second).
    pub eta_interval_ms: u64,
    /// Stdout carries JSON or terse output: draw progress on stderr.
    pub progress_to_stderr: bool,
    /// Don't print notices at all.
    pub quiet: bool,
    /// `--status-interval`: interim results (see `monitor`).
    pub status: Option<monitor::StatusHook>,
    /// `--bandwidth-log`: aggregate bandwidth logs (see `monitor`).
    pub agg_bw_log: bool,
    /// `--max-jobs`: at most this many clones run at once; the others
    /// start, in order, as running ones finish.
    pub max_running: Option<u32>,
}

/// Where a job clone is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Waiting,
    Running,
    Finished,
}

/// Whether a waiting clone may start: every job of an earlier stonewall
/// phase has finished, and so has every clone of its `wait_for` job.
fn ready(plan: &Plan, stages: &[Stage], i: usize) -> bool {
    let job = &plan.jobs[i];
    plan.jobs.iter().zip(stages).all(|(other, st)| {
        let earlier_phase = other.phase < job.phase;
        let waited = job.wait_for == Some(other.job_index);
        !(earlier_phase || waited) || *st == Stage::Finished
    })
}

/// How long the run still waits for its workers after a second signal.
pub const HURRY: Duration = Duration::from_millis(250);

/// The outcome of a clone still running when the run stopped waiting
/// (second signal): what its live counters say it did since `since`.
fn counted_outcome(p: &Progress, since: Option<Instant>, start_ms: u64) -> Outcome {
    let mut stats = crate::stats::JobStats::default();
    let ms = since.map(|t| t.elapsed().as_millis() as u64).unwrap_or(0);
    for (d, dir) in stats.dir.iter_mut().enumerate() {
        dir.bytes = p.bytes[d].load(Ordering::Relaxed);
        dir.ios = p.ios[d].load(Ordering::Relaxed);
        dir.runtime_ms = if dir.ios > 0 { ms.max(1) } else { 0 };
    }
    stats.runtime_ms = ms;
    stats.elapsed_ms = ms;
    Outcome {
        stats,
        error: libc::EINTR,
        error_msg: Some(String::from(
            "still running when a second signal came, so not waited for: reported from \
             the bytes and I/Os it had counted (no latencies)",
        )),
        interrupted: true,
        start_unix_ms: start_ms,
    }
}

/// Runs the plan to completion (or interruption). `context` goes into
/// the result (and every interim result); `hooks` hears of each batch of
/// clones before its start gate can open. Called by `session::Session`,
/// which prepares all three.
pub fn run(
    mut plan: Plan,
    opts: &RunOptions,
    context: Arc<RunContext>,
    hooks: &mut dyn session::SessionHooks,
) -> RunResult {
    signals::install();
    let shared = Arc::new(RunShared::new(opts.fake_clock_step));
    let start_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let progresses: Vec<Arc<Progress>> = plan
        .jobs
        .iter()
        .map(|_| Arc::new(Progress::default()))
        .collect();
    let mut outcomes: Vec<Option<Outcome>> = plan.jobs.iter().map(|_| None).collect();
    let mut stages = vec![Stage::Waiting; plan.jobs.len()];
    let mut laid_out = Vec::new();
    let mut reporter = progress::Reporter::new(progress_config(opts), plan.jobs.len());
    // stats hook: disk counters, steady state, status snapshots.
    let mut monitor = monitor::Monitor::new(
        &plan,
        &progresses,
        opts.status.clone(),
        opts.fake_clock_step.is_some(),
        start_unix,
        context.clone(),
    );
    if opts.agg_bw_log {
        if let Err(m) = monitor.open_aggregate_logs() {
            output::stderr_line(&format!("iomark: {m}"));
        }
    }
    let mut handles: Vec<(usize, std::thread::JoinHandle<Outcome>)> = Vec::new();
    let cpus = overcommit::allowed_cpus();
    let mut cpu_check = overcommit::Checker::default();
    let mut overcommitted: Vec<overcommit::Overcommit> = Vec::new();
    // When each clone's thread started (for `counted_outcome`).
    let mut started_at: Vec<Option<Instant>> = vec![None; plan.jobs.len()];
    // After a second signal: when to stop waiting for the workers.
    let mut give_up: Option<Instant> = None;

    loop {
        if signals::received() && !shared.stop.load(Ordering::Relaxed) {
            shared.interrupted.store(true, Ordering::Relaxed);
            shared.stop.store(true, Ordering::Relaxed);
        }
        if give_up.is_none() && signals::hurry() {
            give_up = Some(Instant::now() + HURRY);
        }
        // Start every clone whose dependencies are done, together (as
        // many as --max-jobs leaves room for).
        let mut startable: Vec<usize> = (0..plan.jobs.len())
            .filter(|&i| stages[i] == Stage::Waiting && ready(&plan, &stages, i))
            .collect();
        let stopping = shared.stop.load(Ordering::Relaxed);
        if let Some(max) = opts.max_running.filter(|_| !stopping) {
            let running = stages.iter().filter(|s| **s == Stage::Running).count();
            startable.truncate((max as usize).saturating_sub(running));
        }
        if stopping {
            // Stopped: nothing new starts. After exitall (exit_what=all)
            // the jobs that never ran are reported with nothing done, as
            // fio does; after a signal they are left out.
            let signalled = shared.interrupted.load(Ordering::Relaxed);
            for i in startable {
                stages[i] = Stage::Finished;
                if !signalled {
                    outcomes[i] = Some(Outcome::default());
                }
            }
        } else if !startable.is_empty() {
            // A fake clock does not see CPUs taking turns: nothing to say.
            let check = opts.fake_clock_step.is_none();
            let env = &context.environment;
            if let Some(o) = cpu_check
                .check(&plan, &startable, cpus, env)
                .filter(|_| check)
            {
                if !opts.quiet && !overcommitted.contains(&o) {
                    output::stderr_line(&format!("iomark: note: {}", o.message()));
                }
                overcommitted.push(o);
            }
            start_batch(
                &mut plan,
                &startable,
                opts,
                &shared,
                &progresses,
                &mut laid_out,
                &mut stages,
                &mut outcomes,
                &mut handles,
                hooks,
            );
            let now = Instant::now();
            for &i in &startable {
                if stages[i] == Stage::Running {
                    started_at[i] = Some(now);
                }
            }
            monitor.phase_ready();
            continue;
        }
        if handles.is_empty() {
            if stages.iter().all(|s| *s == Stage::Finished) {
                break;
            }
            if !(0..plan.jobs.len())
                .any(|i| stages[i] == Stage::Waiting && ready(&plan, &stages, i))
            {
                // Cannot happen with a valid plan; never spin.
                break;
            }
            continue;
        }
        // Watch: finished clones, exitall, progress.
        let mut k = 0;
        while k < handles.len() {
            if !handles[k].1.is_finished() {
                k += 1;
                continue;
            }
            let (i, h) = handles.swap_remove(k);
            let out = h.join().unwrap_or_else(|_| Outcome {
                error: libc::EFAULT,
                error_msg: Some("worker thread panicked".into()),
                ..Outcome::default()
            });
            stages[i] = Stage::Finished;
            let spec = &plan.jobs[i].spec;
            if spec.ctl.exitall_on_error && out.error != 0 {
                shared.stop.store(true, Ordering::Relaxed);
            } else if spec.ctl.exitall {
                exit_all(&plan, i, &stages, &progresses, &shared);
            }
            outcomes[i] = Some(out);
        }
        if give_up.is_some_and(|t| Instant::now() >= t) {
            // Second signal and the grace is over: report the clones still
            // running from their counters and leave their threads behind
            // (they end with the process).
            for (i, _thread) in handles.drain(..) {
                stages[i] = Stage::Finished;
                outcomes[i] = Some(counted_outcome(
                    &progresses[i],
                    started_at[i],
                    start_unix * 1000,
                ));
            }
            continue;
        }
        reporter.tick(&plan, &progresses);
        monitor.tick(&plan, &progresses, &outcomes);
        std::thread::sleep(Duration::from_millis(10));
    }
    let timelines = reporter.finish(&progresses);
    let interrupted = shared.interrupted.load(Ordering::Relaxed);
    let (disks, mut steady) = monitor.finish(&progresses, plan.jobs.len());
    let jobs = plan
        .jobs
        .into_iter()
        .zip(outcomes)
        .zip(timelines)
        .enumerate()
        .filter_map(|(i, ((job, o), timeline))| {
            o.map(|mut outcome| {
                outcome.interrupted |= interrupted;
                outcome.stats.steady = steady[i].take();
                outcome.stats.timeline = timeline;
                JobRun { job, outcome }
            })
        })
        .collect();
    RunResult {
        jobs,
        interrupted,
        start_unix,
        disks,
        fake_clock: opts.fake_clock_step.is_some(),
        overcommit: overcommitted,
        context,
    }
}

/// `exitall`: job `i` finished; stop the jobs `exit_what` names.
fn exit_all(
    plan: &Plan,
    i: usize,
    stages: &[Stage],
    progresses: &[Arc<Progress>],
    shared: &RunShared,
) {
    let job = &plan.jobs[i];
    match job.spec.ctl.exit_what {
        ExitWhat::Group => {
            for (j, other) in plan.jobs.iter().enumerate() {
                if other.group == job.group && stages[j] == Stage::Running {
                    progresses[j].link.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        ExitWhat::Stonewall => {
            for (j, st) in stages.iter().enumerate() {
                if *st == Stage::Running {
                    progresses[j].link.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        ExitWhat::All => shared.stop.store(true, Ordering::Relaxed),
    }
}

/// Lays out the files of `batch` and starts one thread per clone; they
/// begin I/O together once all have set up and `hooks.before_start` has
/// returned (the gate cannot open before `expect`).
#[allow(clippy::too_many_arguments)]
fn start_batch(
    plan: &mut Plan,
    batch: &[usize],
    opts: &RunOptions,
    shared: &Arc<RunShared>,
    progresses: &[Arc<Progress>],
    laid_out: &mut Vec<std::path::PathBuf>,
    stages: &mut [Stage],
    outcomes: &mut [Option<Outcome>],
    handles: &mut Vec<(usize, std::thread::JoinHandle<Outcome>)>,
    hooks: &mut dyn session::SessionHooks,
) {
    // Lay out files before the clock starts.
    let mut ready = Vec::new();
    for &i in batch {
        if plan.jobs[i].needs_trace() {
            // A trace written by an earlier phase of this run.
            if let Err(m) = plan::resolve_deferred_replay(&mut plan.jobs[i]) {
                stages[i] = Stage::Finished;
                outcomes[i] = Some(Outcome {
                    error: libc::EINVAL,
                    error_msg: Some(m),
                    ..Outcome::default()
                });
                continue;
            }
        }
        let job = &plan.jobs[i];
        if !job.spec.io.ioengine.info().lays_out_files() {
            ready.push(i);
            continue;
        }
        match files::layout(job, laid_out) {
            Ok(notes) => {
                for n in notes {
                    if opts.quiet {
                    } else if opts.notices_to_stdout {
                        // A failure shows again when the report is written.
                        let _ = output::stdout(&format!("{n}\n"));
                    } else {
                        output::stderr_line(&n);
                    }
                }
                ready.push(i);
            }
            Err(e) => {
                stages[i] = Stage::Finished;
                outcomes[i] = Some(Outcome {
                    error: e.errno,
                    error_msg: Some(e.msg),
                    ..Outcome::default()
                });
            }
        }
    }
    let gate = Arc::new(StartGate::new(shared.base));
    let mut started = 0;
    for &i in &ready {
        let job = plan.jobs[i].clone();
        let shared = shared.clone();
        let progress = progresses[i].clone();
        let g = gate.clone();
        stages[i] = Stage::Running;
        let h = std::thread::Builder::new()
            .name(format!("iomark:{}", job.name()).replace('\0', " "))
            .spawn(move || {
                apply_placement(&job);
                worker::run_job(&job, &shared, &progress, &g)
            });
        match h {
            Ok(h) => {
                started += 1;
                handles.push((i, h));
            }
            Err(e) => {
                stages[i] = Stage::Finished;
                outcomes[i] = Some(Outcome {
                    error: libc::EAGAIN,
                    error_msg: Some(format!(
                        "cannot start a thread for job '{}': {e}",
                        plan.jobs[i].name()
                    )),
                    ..Outcome::default()
                });
            }
        }
    }
    // The release point of the batch: every clone started is setting up
    // or waiting at the gate, which stays shut until `expect`.
    let running: Vec<usize> = ready
        .iter()
        .copied()
        .filter(|&i| stages[i] == Stage::Running)
        .collect();
    hooks.before_start(plan, &running, &gate);
    gate.expect(started);
}

fn progress_config(opts: &RunOptions) -> progress::ProgressConfig {
    let d = progress::ProgressConfig::default();
    progress::ProgressConfig {
        mode: opts.progress,
        newline: opts.eta_newline,
        newline_every_ms: opts.eta_newline_ms,
        interval_ms: if opts.eta_interval_ms == 0 {
            d.interval_ms
        } else {
            opts.eta_interval_ms
        },
        to_stderr: opts.progress_to_stderr,
        // Real time does not advance with a fake clock: no timeline.
        timeline_ms: if opts.fake_clock_step.is_some() {
            0
        } else {
            d.timeline_ms
        },
    }
}

/// Warnings about a job that runs, but not quite as its options might
/// suggest (printed once each before the run).
pub fn notes(spec: &crate::job::JobSpec) -> Vec<String> {
    let mut out = crate::workload::verify::notes(spec);
    out.extend(clock::resolve(spec.time.clocksource).1.map(str::to_string));
    if spec.ctl.threads_given {
        out.push(format!(
            "job '{}': 'threads' has no effect: it is an option of fio's tiobench profile, \
             which fio ignores in other jobs (for 'thread': iomark always runs jobs as threads)",
            spec.name
        ));
    }
    if spec.log.log_store_compressed && spec.log.write_hist_log.is_some() {
        out.push(format!(
            "job '{}': log_store_compressed covers the bw, iops and latency logs; \
             the histogram log is written uncompressed",
            spec.name
        ));
    }
    if spec.buf.dedupe_global && spec.buf.dedupe_mode != crate::job::spec::DedupeMode::WorkingSet {
        out.push(format!(
            "job '{}': dedupe_global has no effect without dedupe_mode=working_set",
            spec.name
        ));
    }
    out
}

/// CPU affinity, memory policy, nice value and I/O priority for the
/// calling worker thread.
fn apply_placement(job: &PlannedJob) {
    let ctl = &job.spec.ctl;
    // numa_cpu_nodes replaces cpus_allowed, as in fio.
    let cpus: Option<Vec<usize>> = match (&ctl.numa_cpu_nodes, &ctl.cpus_allowed) {
        (Some(nodes), _) => Some(numa::node_cpus(&numa::resolve(nodes))),
        (None, Some(cpus)) => Some(match ctl.cpus_allowed_policy {
            crate::job::spec::CpusPolicy::Shared => cpus.clone(),
            crate::job::spec::CpusPolicy::Split => {
                vec![cpus[job.worker_index as usize % cpus.len()]]
            }
        }),
        (None, None) => None,
    };
    if let Some(cpus) = cpus {
        // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) applies to this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    if let Some(p) = &ctl.numa_mem_policy {
        if let Err(e) = numa::set_mem_policy(p) {
            output::stderr_line(&format!(
                "iomark: warning: job '{}': numa_mem_policy: {e}",
                job.spec.name
            ));
        }
    }
    if ctl.nice != 0 {
        // SAFETY: setpriority on this thread's id.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, ctl.nice);
        }
    }
    if let Some(class) = ctl.prioclass.or(ctl.prio.map(|_| 2)) {
        let level = ctl.prio.unwrap_or(4);
        let ioprio = (class << 13) | level;
        // SAFETY: ioprio_set(IOPRIO_WHO_PROCESS, 0 = this thread, value).
        unsafe {
            libc::syscall(libc::SYS_ioprio_set, 1, 0, ioprio);
        }
    }
}
