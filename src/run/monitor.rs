//! The run's statistics monitor, driven by the main thread's watch loop:
//! disk counters around the run, steady-state checks (stopping jobs that
//! reached it), and `--status-interval` reports built from worker
//! snapshots.
//!
//! It reads the workers' published counters and snapshots; it never
//! touches a worker's own statistics.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::plan::Plan;
use super::worker::{state, Outcome, Progress};
use super::{JobRun, RunContext, RunResult};
use crate::stats::disk::{DiskReport, DiskWatch};
use crate::stats::logs::LogError;
use crate::stats::steady::{JobCounters, SteadyMonitor};

/// Receives an interim result every `--status-interval`.
#[derive(Clone)]
pub struct StatusHook {
    pub every: Duration,
    pub report: Arc<dyn Fn(&RunResult) + Send + Sync>,
}

impl std::fmt::Debug for StatusHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StatusHook(every {:?})", self.every)
    }
}

/// `--bandwidth-log`: every 500 ms, the bandwidth of all jobs together per
/// direction, in `agg-read_bw.log`, `agg-write_bw.log`, `agg-trim_bw.log`.
struct AggregateLogs {
    files: Vec<std::fs::File>,
    start: Instant,
    last: Instant,
    last_bytes: [u64; 3],
}

pub struct Monitor {
    steady: SteadyMonitor,
    agg: Option<AggregateLogs>,
    disk_paths: Vec<std::path::PathBuf>,
    disks: Option<DiskWatch>,
    status: Option<StatusHook>,
    next_status: Option<Instant>,
    start_unix: u64,
    /// What interim results carry for their reports.
    context: Arc<RunContext>,
    /// What the aggregate logs add to their names (`Placement::tag`).
    tag: String,
}

impl Monitor {
    /// Prepares the monitor and tells every job its number and whether
    /// snapshots will be asked for. Reads the disk counters (unless the
    /// clock is fake).
    pub fn new(
        plan: &Plan,
        progresses: &[Arc<Progress>],
        status: Option<StatusHook>,
        fake_clock: bool,
        start_unix: u64,
        context: Arc<RunContext>,
    ) -> Monitor {
        for (i, p) in progresses.iter().enumerate() {
            p.link.number.store(i as u32 + 1, Ordering::Relaxed);
            p.link.snapshots.store(status.is_some(), Ordering::Relaxed);
        }
        let grouped: Vec<bool> = plan
            .jobs
            .iter()
            .map(|j| {
                plan.jobs
                    .iter()
                    .any(|o| o.group == j.group && o.spec.stat.group_reporting)
            })
            .collect();
        let ss: Vec<_> = plan
            .jobs
            .iter()
            .zip(&grouped)
            .map(|(j, g)| {
                let st = &j.spec.stat;
                (
                    st.steadystate
                        .filter(|_| st.ss_dur_us > 0)
                        .map(|s| (s, st.ss_dur_us, st.ss_ramp_us)),
                    j.group,
                    *g,
                )
            })
            .collect();
        let disk_paths = if fake_clock {
            Vec::new()
        } else {
            plan.jobs
                .iter()
                .filter(|j| !j.spec.io.ioengine.info().caps.diskless && j.spec.stat.disk_util)
                .flat_map(|j| j.files.iter().map(|f| f.path.clone()))
                .collect()
        };
        Monitor {
            steady: SteadyMonitor::new(&ss),
            agg: None,
            disk_paths,
            disks: None,
            next_status: status.as_ref().map(|s| Instant::now() + s.every),
            status,
            start_unix,
            context,
            tag: plan.place.tag.clone(),
        }
    }

    /// Creates the aggregate bandwidth logs in the current directory.
    pub fn open_aggregate_logs(&mut self) -> Result<(), LogError> {
        let mut files = Vec::new();
        for d in ["read", "write", "trim"] {
            let name = crate::stats::logs::tagged(&format!("agg-{d}_bw.log"), &self.tag);
            let opened = crate::outfile::open(
                std::path::Path::new(&name),
                crate::outfile::Named::Iomark,
                false,
            )
            .and_then(|mut f| f.truncate_once().map(|()| f.file));
            files.push(opened.map_err(|e| LogError::Io {
                what: "create",
                path: name.into(),
                errno: crate::sys::errno_of(&e).unwrap_or(libc::EIO),
                reason: e.to_string(),
            })?);
        }
        let now = Instant::now();
        self.agg = Some(AggregateLogs {
            files,
            start: now,
            last: now,
            last_bytes: [0; 3],
        });
        Ok(())
    }

    fn aggregate_tick(&mut self, now: Instant, progresses: &[Arc<Progress>], last: bool) {
        use std::io::Write;
        let Some(a) = &mut self.agg else { return };
        let ms = now.duration_since(a.last).as_millis() as u64;
        if ms < 500 && !(last && ms > 0) {
            return;
        }
        let t = now.duration_since(a.start).as_millis() as u64;
        for d in 0..3 {
            let bytes: u64 = progresses
                .iter()
                .map(|p| p.bytes[d].load(Ordering::Relaxed))
                .sum();
            let delta = bytes.saturating_sub(a.last_bytes[d]);
            let kib_s = delta * 1000 / ms / 1024;
            a.last_bytes[d] = bytes;
            // The closing tick only reports a tail that moved data.
            if bytes > 0 && !(last && delta == 0) {
                let _ = writeln!(a.files[d], "{t}, {kib_s}, {d}, 0, 0");
            }
        }
        a.last = now;
    }

    /// Called when a phase's files are laid out and its jobs are about to
    /// start: the first time, the disk counters are read.
    pub fn phase_ready(&mut self) {
        if self.disks.is_none() && !self.disk_paths.is_empty() {
            self.disks = Some(DiskWatch::start(
                self.disk_paths.iter().map(|p| p.as_path()),
            ));
        }
    }

    /// One turn of the watch loop.
    pub fn tick(
        &mut self,
        plan: &Plan,
        progresses: &[Arc<Progress>],
        outcomes: &[Option<Outcome>],
    ) {
        let now = Instant::now();
        self.aggregate_tick(now, progresses, false);
        if !self.steady.is_empty() {
            let stop = self.steady.tick(now, |i| {
                let p = &progresses[i];
                let st = p.state.load(Ordering::Relaxed);
                JobCounters {
                    started: st >= state::RAMP,
                    finished: st >= state::DONE || outcomes[i].is_some(),
                    bytes: p.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum(),
                    ios: p.ios.iter().map(|b| b.load(Ordering::Relaxed)).sum(),
                }
            });
            for i in stop {
                progresses[i].link.stop.store(true, Ordering::Relaxed);
            }
        }
        if let (Some(hook), Some(at)) = (&self.status, self.next_status) {
            if now >= at {
                self.next_status = Some(at + hook.every);
                let interim = self.interim(plan, progresses, outcomes);
                if !interim.jobs.is_empty() {
                    (hook.report)(&interim);
                }
            }
        }
    }

    /// Asks running jobs for snapshots (waiting briefly for them) and
    /// puts them together with the finished jobs' outcomes.
    fn interim(
        &self,
        plan: &Plan,
        progresses: &[Arc<Progress>],
        outcomes: &[Option<Outcome>],
    ) -> RunResult {
        let running: Vec<usize> = (0..plan.jobs.len())
            .filter(|&i| {
                let st = progresses[i].state.load(Ordering::Relaxed);
                outcomes[i].is_none() && (state::RAMP..state::DONE).contains(&st)
            })
            .collect();
        let asked: Vec<(usize, u64)> = running
            .iter()
            .map(|&i| (i, progresses[i].link.request()))
            .collect();
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline
            && !asked.iter().all(|(i, n)| {
                progresses[*i].link.served(*n)
                    || progresses[*i].state.load(Ordering::Relaxed) >= state::DONE
            })
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut jobs = Vec::new();
        for (i, job) in plan.jobs.iter().enumerate() {
            let stats = match &outcomes[i] {
                Some(o) => Some(o.stats.clone()),
                None if running.contains(&i) => progresses[i].link.take_snapshot(),
                None => None,
            };
            if let Some(stats) = stats {
                let (error, error_msg) = outcomes[i]
                    .as_ref()
                    .map(|o| (o.error, o.error_msg.clone()))
                    .unwrap_or((0, None));
                jobs.push(JobRun {
                    job: job.clone(),
                    outcome: Outcome {
                        stats,
                        error,
                        error_msg,
                        start_unix_ms: self.start_unix * 1000,
                        ..Outcome::default()
                    },
                    clones: 1,
                    error_clone: None,
                });
            }
        }
        RunResult {
            jobs,
            start_unix: self.start_unix,
            context: self.context.clone(),
            ..RunResult::default()
        }
    }

    /// Ends the run: disk figures, and the steady-state outcome of each
    /// job (by index).
    pub fn finish(
        &mut self,
        progresses: &[Arc<Progress>],
        n: usize,
    ) -> (
        Vec<DiskReport>,
        Vec<Option<crate::stats::steady::SteadyResult>>,
    ) {
        self.aggregate_tick(Instant::now(), progresses, true);
        let disks = self.disks.as_ref().map(|d| d.finish()).unwrap_or_default();
        let ss = (0..n).map(|i| self.steady.result_for(i)).collect();
        (disks, ss)
    }
}
