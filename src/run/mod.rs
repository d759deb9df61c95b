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
pub mod dirs;
pub mod error;
pub mod files;
pub mod flow;
pub mod gate;
pub mod memory;
pub mod monitor;
pub mod numa;
pub mod offload;
pub mod output;
pub mod overcommit;
pub mod owned;
pub mod place;
pub mod plan;
pub mod progress;
pub mod region;
#[cfg(test)]
mod region_tests;
pub mod safety;
pub mod scheduler;
pub mod session;
pub mod signals;
pub mod signatures;
pub mod worker;
pub mod zoned;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::job::spec::ExitWhat;
use gate::StartGate;
use plan::{Plan, PlannedJob};
use worker::{Outcome, Progress, RunShared};

/// A finished clone: what was planned and what happened (or several
/// clones of one job, merged: see `clones`).
#[derive(Clone, Debug)]
pub struct JobRun {
    pub job: PlannedJob,
    pub outcome: Outcome,
    /// How many clones `outcome` stands for: 1, or more for the clones of
    /// a job on the ranks of one host, merged (a run over many hosts).
    pub clones: u32,
    /// The global clone whose error `outcome` holds, where that is not
    /// `job.clone` (clones of several ranks merged: the failing one, not
    /// the lowest).
    pub error_clone: Option<u32>,
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
#[derive(Clone, Debug, Default)]
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

/// The clones of a run as they run, for `SessionHooks::tick`: their live
/// counters (relaxed atomics, as the progress line reads them), whether
/// each has finished, and a way to stop one.
pub struct Live<'a> {
    progresses: &'a [Arc<Progress>],
    stages: &'a [Stage],
    shared: &'a RunShared,
}

impl Live<'_> {
    /// Whether clone `i` (an index into the plan's jobs) has ended.
    pub fn finished(&self, i: usize) -> bool {
        self.stages.get(i) == Some(&Stage::Finished)
    }

    /// Bytes and I/Os clone `i` has done so far, per direction.
    pub fn counters(&self, i: usize) -> ([u64; 3], [u64; 3]) {
        let p = &self.progresses[i];
        (
            [0, 1, 2].map(|d| p.bytes[d].load(Ordering::Relaxed)),
            [0, 1, 2].map(|d| p.ios[d].load(Ordering::Relaxed)),
        )
    }

    /// Asks clone `i` to stop (as `exitall` of its group does): it ends
    /// its I/O and reports what it did.
    pub fn stop(&self, i: usize) {
        self.progresses[i].link.stop.store(true, Ordering::Relaxed);
    }

    /// When clone `i` ended (CLOCK_MONOTONIC ns), once it has.
    pub fn ended_ns(&self, i: usize) -> Option<u64> {
        Some(self.progresses[i].ended_ns.load(Ordering::Acquire)).filter(|&t| t > 0)
    }

    /// Stops the whole run as a stop signal does: every clone ends and
    /// reports what it measured, nothing more starts, the result is
    /// marked interrupted.
    pub fn interrupt(&self) {
        self.shared.interrupted.store(true, Ordering::Relaxed);
        self.shared.stop.store(true, Ordering::Relaxed);
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
    /// The pass of a multi-test command (quick, suite, sweep) this run
    /// is, for the progress line; None for a plain run.
    pub pass: Option<Arc<progress::PassContext>>,
    /// The other ranks' live counters, for the progress line of rank 0
    /// of a run over many hosts.
    pub remote: Option<Arc<progress::RemoteCounters>>,
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
///
/// Each turn of the loop: note signals; start the clones that may start
/// (a batch, released together) or, once the run is stopping, settle
/// those that never will; reap finished clones (acting on `exitall`);
/// after a second signal's grace, abandon the clones still running; else
/// tick progress and the monitor. The result is built at the end.
pub fn run(
    plan: Plan,
    opts: &RunOptions,
    context: Arc<RunContext>,
    hooks: &mut dyn session::SessionHooks,
) -> RunResult {
    signals::install();
    let mut run = Runner::new(plan, opts, context);
    loop {
        run.note_signals();
        let startable = run.startable();
        if run.stopping() {
            run.settle_unstarted(startable);
        } else if !startable.is_empty() {
            run.start_batch(&startable, hooks);
            continue;
        }
        if run.handles.is_empty() {
            if run.nothing_left() {
                break;
            }
            continue;
        }
        run.reap_finished();
        hooks.tick(&run.live());
        if run.grace_over() {
            run.abandon_running();
            continue;
        }
        run.tick();
        std::thread::sleep(Duration::from_millis(10));
    }
    // Directories the run created for its files go once empty.
    dirs::remove_made_dirs();
    run.finish()
}

/// The state of a run in progress: the plan, each clone's stage, live
/// counters and outcome, the running threads, and what watches them.
struct Runner<'a> {
    plan: Plan,
    opts: &'a RunOptions,
    context: Arc<RunContext>,
    shared: Arc<RunShared>,
    /// Unix time (s) when the run started.
    start_unix: u64,
    stages: Vec<Stage>,
    progresses: Vec<Arc<Progress>>,
    outcomes: Vec<Option<Outcome>>,
    /// When each clone's thread started (for `counted_outcome`).
    started_at: Vec<Option<Instant>>,
    /// The threads of the running clones, by clone index.
    handles: Vec<(usize, std::thread::JoinHandle<Outcome>)>,
    /// Files laid out so far (each once per run).
    laid_out: Vec<std::path::PathBuf>,
    reporter: progress::Reporter,
    /// Stats hook: disk counters, steady state, status snapshots.
    monitor: monitor::Monitor,
    cpus: usize,
    cpu_check: overcommit::Checker,
    overcommitted: Vec<overcommit::Overcommit>,
    /// After a second signal: when to stop waiting for the workers.
    give_up: Option<Instant>,
}

impl<'a> Runner<'a> {
    fn new(plan: Plan, opts: &'a RunOptions, context: Arc<RunContext>) -> Self {
        let shared = Arc::new(RunShared::new(opts.fake_clock_step));
        let start_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let n = plan.jobs.len();
        let progresses: Vec<Arc<Progress>> =
            (0..n).map(|_| Arc::new(Progress::default())).collect();
        let mut reporter = progress::Reporter::new(progress_config(opts), n);
        reporter.remote = opts.remote.clone();
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
        Runner {
            plan,
            opts,
            context,
            shared,
            start_unix,
            stages: vec![Stage::Waiting; n],
            progresses,
            outcomes: (0..n).map(|_| None).collect(),
            started_at: vec![None; n],
            handles: Vec::new(),
            laid_out: Vec::new(),
            reporter,
            monitor,
            cpus: overcommit::allowed_cpus(),
            cpu_check: overcommit::Checker::default(),
            overcommitted: Vec::new(),
            give_up: None,
        }
    }

    /// A signal stops the run (marked interrupted); a second one starts
    /// the grace after which running clones are no longer waited for.
    fn note_signals(&mut self) {
        if signals::received() && !self.stopping() {
            self.shared.interrupted.store(true, Ordering::Relaxed);
            self.shared.stop.store(true, Ordering::Relaxed);
        }
        if self.give_up.is_none() && signals::hurry() {
            self.give_up = Some(Instant::now() + HURRY);
        }
    }

    fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// The waiting clones whose dependencies are done, as many as
    /// `--max-jobs` leaves room for (all of them once stopping).
    fn startable(&self) -> Vec<usize> {
        let mut startable: Vec<usize> = (0..self.plan.jobs.len())
            .filter(|&i| self.stages[i] == Stage::Waiting && ready(&self.plan, &self.stages, i))
            .collect();
        if let Some(max) = self.opts.max_running.filter(|_| !self.stopping()) {
            let running = self.stages.iter().filter(|s| **s == Stage::Running).count();
            startable.truncate((max as usize).saturating_sub(running));
        }
        startable
    }

    /// Stopped: nothing new starts. After exitall (exit_what=all) the
    /// jobs that never ran are reported with nothing done, as fio does;
    /// after a signal they are left out.
    fn settle_unstarted(&mut self, startable: Vec<usize>) {
        let signalled = self.shared.interrupted.load(Ordering::Relaxed);
        for i in startable {
            self.stages[i] = Stage::Finished;
            if !signalled {
                self.outcomes[i] = Some(Outcome::default());
            }
        }
    }

    /// Clone `i` ended before it could start, with this error.
    fn fail(&mut self, i: usize, error: i32, msg: String) {
        self.stages[i] = Stage::Finished;
        self.outcomes[i] = Some(Outcome {
            error,
            error_msg: Some(msg),
            ..Outcome::default()
        });
    }

    /// Starts `batch` together: notes CPU overcommit, lays out files,
    /// starts one thread per clone; they begin I/O together once all have
    /// set up and `hooks.before_start` has returned (the gate cannot open
    /// before `expect`).
    fn start_batch(&mut self, batch: &[usize], hooks: &mut dyn session::SessionHooks) {
        self.check_overcommit(batch);
        if hooks.before_layout(&self.plan, batch) == session::Flow::Stop {
            return self.interrupt();
        }
        let ready = self.lay_out(batch);
        if hooks.after_layout(&self.plan, batch) == session::Flow::Stop {
            self.interrupt();
        }
        let gate = Arc::new(StartGate::new(self.shared.base));
        let started = self.spawn(&ready, &gate);
        // The release point of the batch: every clone started is setting
        // up or waiting at the gate, which stays shut until `expect`.
        let running: Vec<usize> = ready
            .iter()
            .copied()
            .filter(|&i| self.stages[i] == Stage::Running)
            .collect();
        if hooks.before_start(&self.plan, &running, &gate) == session::Flow::Stop {
            // The clones find the run stopping when the gate opens.
            self.interrupt();
        }
        // The disk counters are read before the gate can open: read after
        // it, a clone could already have done I/O (one of 1,024 reads was
        // missing from a loop device's counts under load).
        self.monitor.phase_ready();
        gate.expect(started);
        let now = Instant::now();
        for &i in batch {
            if self.stages[i] == Stage::Running {
                self.started_at[i] = Some(now);
            }
        }
    }

    /// The run stops, as on a stop signal (a hook asked for it).
    fn interrupt(&mut self) {
        self.shared.interrupted.store(true, Ordering::Relaxed);
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    /// A batch needing more CPUs than allowed gets a note (once each).
    fn check_overcommit(&mut self, batch: &[usize]) {
        // A fake clock does not see CPUs taking turns: nothing to say.
        let check = self.opts.fake_clock_step.is_none();
        let env = &self.context.environment;
        if let Some(o) = self
            .cpu_check
            .check(&self.plan, batch, self.cpus, env)
            .filter(|_| check)
        {
            if !self.opts.quiet && !self.overcommitted.contains(&o) {
                output::stderr_line(&format!("iomark: note: {}", o.message()));
            }
            self.overcommitted.push(o);
        }
    }

    /// Lays out the files of `batch` before the clock starts; returns the
    /// clones ready to start (the others have failed).
    fn lay_out(&mut self, batch: &[usize]) -> Vec<usize> {
        let mut ready = Vec::new();
        for &i in batch {
            if self.plan.jobs[i].needs_trace() {
                // A trace written by an earlier phase of this run.
                if let Err(e) = plan::resolve_deferred_replay(&mut self.plan.jobs[i]) {
                    self.fail(i, libc::EINVAL, e.to_string());
                    continue;
                }
            }
            let job = &self.plan.jobs[i];
            if !job.spec.io.ioengine.info().lays_out_files() {
                ready.push(i);
                continue;
            }
            match files::layout(job, &mut self.laid_out) {
                Ok(notes) => {
                    self.print_notices(notes);
                    ready.push(i);
                }
                Err(e) => self.fail(i, e.errno(), e.to_string()),
            }
        }
        ready
    }

    /// "Laying out IO file" notices, where the options send them.
    fn print_notices(&self, notes: Vec<String>) {
        for n in notes {
            if self.opts.quiet {
            } else if self.opts.notices_to_stdout {
                // A failure shows again when the report is written.
                let _ = output::stdout(&format!("{n}\n"));
            } else {
                output::stderr_line(&n);
            }
        }
    }

    /// Starts one worker thread per clone of `ready`, each waiting at
    /// `gate`; returns how many started.
    fn spawn(&mut self, ready: &[usize], gate: &Arc<StartGate>) -> usize {
        let mut started = 0;
        for &i in ready {
            let job = self.plan.jobs[i].clone();
            let shared = self.shared.clone();
            let progress = self.progresses[i].clone();
            let g = gate.clone();
            self.stages[i] = Stage::Running;
            let h = std::thread::Builder::new()
                .name(format!("iomark:{}", job.name()).replace('\0', " "))
                .spawn(move || {
                    apply_placement(&job);
                    worker::run_job(&job, &shared, &progress, &g)
                });
            match h {
                Ok(h) => {
                    started += 1;
                    self.handles.push((i, h));
                }
                Err(e) => {
                    let msg = format!(
                        "cannot start a thread for job '{}': {e}",
                        self.plan.jobs[i].name()
                    );
                    self.fail(i, libc::EAGAIN, msg);
                }
            }
        }
        started
    }

    /// No thread runs: the run is over when every clone has finished (or
    /// none can start any more, which a valid plan never leaves: never
    /// spin).
    fn nothing_left(&self) -> bool {
        self.stages.iter().all(|s| *s == Stage::Finished)
            || !(0..self.plan.jobs.len())
                .any(|i| self.stages[i] == Stage::Waiting && ready(&self.plan, &self.stages, i))
    }

    /// Collects the outcome of each clone whose thread has ended and acts
    /// on its `exitall_on_error` / `exitall`.
    fn reap_finished(&mut self) {
        let mut k = 0;
        while k < self.handles.len() {
            if !self.handles[k].1.is_finished() {
                k += 1;
                continue;
            }
            let (i, h) = self.handles.swap_remove(k);
            let out = h.join().unwrap_or_else(|_| Outcome {
                error: libc::EFAULT,
                error_msg: Some("worker thread panicked".into()),
                ..Outcome::default()
            });
            self.stages[i] = Stage::Finished;
            let spec = &self.plan.jobs[i].spec;
            if spec.ctl.exitall_on_error && out.error != 0 {
                self.shared.stop.store(true, Ordering::Relaxed);
            } else if spec.ctl.exitall {
                exit_all(&self.plan, i, &self.stages, &self.progresses, &self.shared);
            }
            self.outcomes[i] = Some(out);
        }
    }

    /// A second signal came and its grace is over.
    fn grace_over(&self) -> bool {
        self.give_up.is_some_and(|t| Instant::now() >= t)
    }

    /// Reports the clones still running from their counters and leaves
    /// their threads behind (they end with the process).
    fn abandon_running(&mut self) {
        for (i, _thread) in self.handles.drain(..) {
            self.stages[i] = Stage::Finished;
            self.outcomes[i] = Some(counted_outcome(
                &self.progresses[i],
                self.started_at[i],
                self.start_unix * 1000,
            ));
        }
    }

    /// What the hooks may see and do while clones run.
    fn live(&self) -> Live<'_> {
        Live {
            progresses: &self.progresses,
            stages: &self.stages,
            shared: &self.shared,
        }
    }

    /// Progress line, steady state, disk counters, interim results.
    fn tick(&mut self) {
        self.reporter.tick(&self.plan, &self.progresses);
        self.monitor
            .tick(&self.plan, &self.progresses, &self.outcomes);
    }

    /// The result: each clone that has an outcome, with its steady-state
    /// figures and timeline.
    fn finish(mut self) -> RunResult {
        let timelines = self.reporter.finish(&self.progresses);
        let interrupted = self.shared.interrupted.load(Ordering::Relaxed);
        let (disks, mut steady) = self.monitor.finish(&self.progresses, self.plan.jobs.len());
        let jobs = self
            .plan
            .jobs
            .into_iter()
            .zip(self.outcomes)
            .zip(timelines)
            .enumerate()
            .filter_map(|(i, ((job, o), timeline))| {
                o.map(|mut outcome| {
                    outcome.interrupted |= interrupted;
                    outcome.stats.steady = steady[i].take();
                    outcome.stats.timeline = timeline;
                    JobRun {
                        job,
                        outcome,
                        clones: 1,
                        error_clone: None,
                    }
                })
            })
            .collect();
        RunResult {
            jobs,
            interrupted,
            start_unix: self.start_unix,
            disks,
            fake_clock: self.opts.fake_clock_step.is_some(),
            overcommit: self.overcommitted,
            context: self.context,
        }
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
        pass: opts.pass.clone(),
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

/// CPU affinity, memory policy and nice value for the calling worker
/// thread (its I/O priority is set by the worker's setup, where failing
/// to set it fails the job).
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
    // Linux's (elsewhere the planner refused these options, `run::platform`).
    if let Some(cpus) = cpus {
        crate::sys::pin_thread(&cpus);
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
        crate::sys::set_thread_nice(ctl.nice);
    }
}
