//! The worker: one thread per job clone. It opens the files, allocates the
//! aligned buffer pool once, then loops: ask the workload for the next I/O,
//! pace it (rate, think time), queue it on the engine, commit in batches,
//! reap completions and account them in its own `JobStats`.
//!
//! Hot-path rules: no allocation, no lock, no syscall but the I/O itself
//! and the clock read. Progress is published through relaxed atomics.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Barrier;

use super::clock::Clock;
use super::files::{self, OpenedFile};
use super::plan::PlannedJob;
use crate::engine::{self, Completion, Engine, IoUnit, Op, Queued};
use crate::job::spec::{Ddir, RateProcess, ThinkBlocksType};
use crate::stats::recorder::{Action, Recorder};
use crate::stats::{batch_bucket, depth_bucket, JobStats};
use crate::workload::buffers::BufferFiller;
use crate::workload::iolog::{FileAction, IologWriter, Replay};
use crate::workload::rng::Rng;
use crate::workload::{Region, Workload};

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
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Planned bytes and runtime, for the ETA.
    pub planned_bytes: AtomicU64,
    pub planned_runtime_us: AtomicU64,
    /// Stop requests and status snapshots shared with the monitor.
    pub link: crate::stats::live::JobLink,
}

/// What a worker reports when it ends.
#[derive(Debug, Default)]
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
}

impl RunShared {
    pub fn new(fake_clock_step: Option<u64>) -> Self {
        RunShared {
            stop: AtomicBool::new(false),
            interrupted: AtomicBool::new(false),
            fake_clock_step,
            base: std::time::Instant::now(),
        }
    }
}

/// Buffers for all I/O units, allocated and aligned once.
struct Pool {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Pool {
    fn new(units: usize, unit_size: usize, align: usize) -> Result<Pool, String> {
        let size = (units * unit_size).max(align);
        let layout = std::alloc::Layout::from_size_align(size, align).map_err(|e| e.to_string())?;
        // SAFETY: non-zero size, valid alignment.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(format!("cannot allocate {size} bytes of I/O buffers"));
        }
        Ok(Pool { ptr, layout })
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation is `layout.size()` bytes and owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Per-direction pacing for `rate` / `rate_iops`.
struct Pacer {
    bps: [u64; 3],
    iops: [u64; 3],
    poisson: bool,
    next_ns: [u64; 3],
    rng: Rng,
}

impl Pacer {
    fn active(&self, d: usize) -> bool {
        self.bps[d] > 0 || self.iops[d] > 0
    }

    /// Earliest time the next I/O of `len` bytes in `d` may start, and
    /// advances the schedule.
    fn schedule(&mut self, d: usize, len: u64, now: u64) -> u64 {
        let mut gap = 0f64;
        if self.bps[d] > 0 {
            gap = gap.max(len as f64 * 1e9 / self.bps[d] as f64);
        }
        if self.iops[d] > 0 {
            gap = gap.max(1e9 / self.iops[d] as f64);
        }
        if self.poisson {
            // Exponentially distributed gaps with the same mean.
            gap *= -(1.0 - self.rng.f64()).ln();
        }
        let at = self.next_ns[d];
        // Do not bank more than one second of credit after a stall.
        let base = at.max(now.saturating_sub(1_000_000_000));
        self.next_ns[d] = base + gap as u64;
        at
    }
}

struct Worker<'a> {
    job: &'a PlannedJob,
    engine: Box<dyn Engine>,
    files: Vec<OpenedFile>,
    units: Vec<IoUnit>,
    free: Vec<u32>,
    uncommitted: Vec<u32>,
    completions: Vec<Completion>,
    inflight: u32,
    depth: u32,
    clock: Clock,
    stats: JobStats,
    measuring: bool,
    /// Statistics, logs, latency target (src/stats/recorder.rs).
    rec: Recorder,
    /// What the recorder asked for during a completion, applied after it.
    pending: Action,
    /// The job was asked to end (latency target found, steady state).
    stop_job: bool,
    progress: &'a Progress,
    shared: &'a RunShared,
    workload: Workload,
    pacer: Pacer,
    think_count: u64,
    error: i32,
    error_msg: Option<String>,
    /// An I/O the engine answered `Busy` to, issued again after a reap.
    retry: Option<crate::workload::NextIo>,
    sfr_flags: u32,
    end_ns: u64,
    ramp_end_ns: u64,
    measure_start_ns: u64,
    /// Write buffer contents.
    filler: BufferFiller,
    /// `write_iolog`: records every issued I/O.
    iolog: Option<IologWriter>,
    /// Dropped last: engines may hold registrations of these buffers.
    _pool: Pool,
}

fn errno_name(e: i32) -> String {
    std::io::Error::from_raw_os_error(e)
        .to_string()
        .split(" (os error")
        .next()
        .unwrap_or("")
        .to_lowercase()
}

impl<'a> Worker<'a> {
    #[inline]
    fn prep(&mut self, idx: u32, next: &crate::workload::NextIo, now: u64) {
        let f = &self.files[next.file as usize];
        let u = &mut self.units[idx as usize];
        u.op = next.op;
        u.file = next.file;
        u.fd = f.fd;
        u.file_data = f.data;
        u.offset = next.offset;
        u.len = next.len;
        u.start_ns = now;
        u.issue_ns = now;
        u.result = 0;
        u.sfr_flags = self.sfr_flags;
        if next.op == Op::SyncFileRange {
            u.offset = 0;
            u.len = 0;
        }
    }

    /// Write contents and the trace record of an I/O about to be queued;
    /// a retry (after `Busy`) refills the same contents, records nothing.
    #[inline]
    fn before_queue(&mut self, idx: u32, next: &crate::workload::NextIo, now: u64, retry: bool) {
        if next.op == Op::Write && self.filler.per_write() {
            let u = &mut self.units[idx as usize];
            // SAFETY: the unit's buffer holds `len` <= buf_cap bytes.
            let buf = unsafe { u.data() };
            if retry {
                self.filler.fill_write_again(buf, next.offset);
            } else {
                self.filler.fill_write(buf, next.offset);
            }
        }
        if let Some(log) = self.iolog.as_mut().filter(|_| !retry) {
            log.io(next.op, next.file, next.offset, next.len, now);
        }
    }

    /// Sleeps until `t` in slices, so a stop request is seen within half
    /// a second. Returns false when stopping.
    fn wait_until(&mut self, t: u64) -> bool {
        loop {
            let now = self.clock.now();
            if self.stopping(now) {
                return false;
            }
            if now >= t {
                return true;
            }
            self.clock.sleep_until(t.min(now + 500_000_000));
        }
    }

    #[inline]
    /// Accounts a finished I/O; `queued` is false when the engine did it
    /// inside `queue` (no submission latency to record).
    fn account(&mut self, idx: u32, result: i64, now: u64, queued: bool) {
        let u = &self.units[idx as usize];
        let op = u.op;
        let lat = now.saturating_sub(u.start_ns);
        if result < 0 {
            if self.error == 0 {
                self.error = (-result) as i32;
                self.error_msg = Some(format!(
                    "{} error on '{}' at offset {}: {}",
                    match op {
                        Op::Read => "read",
                        Op::Write => "write",
                        Op::Trim => "trim",
                        _ => "sync",
                    },
                    self.job.files[u.file as usize].path.display(),
                    u.offset,
                    errno_name(self.error)
                ));
            }
            return;
        }
        let d = match op {
            Op::Read => Ddir::Read,
            Op::Write => Ddir::Write,
            Op::Trim => Ddir::Trim,
            _ => {
                if self.measuring {
                    self.rec.sync_io(&mut self.stats, lat);
                }
                return;
            }
        };
        let bytes = result as u64;
        let (len, offset, start_ns, issue_ns) = (u.len, u.offset, u.start_ns, u.issue_ns);
        let p = self.progress;
        let di = d.idx();
        p.bytes[di].fetch_add(bytes, Ordering::Relaxed);
        p.ios[di].fetch_add(1, Ordering::Relaxed);
        if !self.measuring {
            return;
        }
        // stats hook: histograms, logs, max_latency, latency_target.
        let a = self.rec.io(
            &mut self.stats,
            now,
            di,
            bytes,
            len,
            offset,
            start_ns,
            issue_ns,
            queued,
        );
        if a != Action::Continue {
            self.pending = a;
        }
    }

    /// stats hook: applies what the recorder asked for after completions
    /// (depth change, stop, failure) and runs its periodic work.
    #[inline]
    fn after_completion(&mut self, now: u64) {
        if !self.measuring {
            return;
        }
        if self.rec.due(now, &self.progress.link) {
            let a = self.rec.tick(&mut self.stats, now, &self.progress.link);
            if a != Action::Continue {
                self.pending = a;
            }
        }
        if self.pending != Action::Continue {
            let a = std::mem::replace(&mut self.pending, Action::Continue);
            self.apply_action(a);
        }
    }

    fn apply_action(&mut self, a: Action) {
        match a {
            Action::Continue => {}
            Action::Depth { depth, quiesce } => {
                if quiesce {
                    self.drain();
                }
                self.depth = depth.clamp(1, self.units.len() as u32);
            }
            Action::Stop => self.stop_job = true,
            Action::Fail(errno, _) => {
                let msg = self.rec.fail_message();
                self.fail(errno, msg);
            }
        }
    }

    fn stopping(&self, now: u64) -> bool {
        self.error != 0
            || now >= self.end_ns
            || self.stop_job
            || self.shared.stop.load(Ordering::Relaxed)
            || self.progress.link.stop_requested()
    }

    fn commit(&mut self) {
        if self.uncommitted.is_empty() {
            return;
        }
        let n = self.uncommitted.len() as u32;
        if let Err(e) = self.engine.commit() {
            self.fail(
                e.raw_os_error().unwrap_or(libc::EIO),
                format!("submit failed: {e}"),
            );
            return;
        }
        let now = self.clock.now();
        for &i in &self.uncommitted {
            self.units[i as usize].issue_ns = now;
        }
        self.uncommitted.clear();
        self.inflight += n;
        if self.measuring {
            self.stats.submit[batch_bucket(n)] += 1;
            self.stats.submit_calls += 1;
            self.stats.depth[depth_bucket(self.inflight)] += n as u64;
            self.stats.depth_total += n as u64;
        }
    }

    fn fail(&mut self, errno: i32, msg: String) {
        if self.error == 0 {
            self.error = errno;
            self.error_msg = Some(msg);
        }
    }

    /// Reaps at least `min` completions.
    fn reap(&mut self, min: u32) {
        if self.inflight == 0 {
            return;
        }
        // iodepth_batch_complete_max defaults to the minimum (at least 1).
        let io = &self.job.spec.io;
        let cmax = match io.iodepth_batch_complete_max {
            0 => io.iodepth_batch_complete_min.max(1),
            m => m,
        };
        let max = cmax.max(min).min(self.inflight);
        let mut comps = std::mem::take(&mut self.completions);
        let r = self.engine.reap(min.min(self.inflight), max, &mut comps);
        match r {
            Ok(n) => {
                if n > 0 {
                    let now = self.clock.now();
                    for c in comps.iter() {
                        self.account(c.idx, c.result, now, true);
                        self.free.push(c.idx);
                    }
                    self.inflight -= n;
                    if self.measuring {
                        self.stats.complete[batch_bucket(n)] += 1;
                        self.stats.complete_calls += 1;
                    }
                    self.after_completion(now);
                    if self.think_on(ThinkBlocksType::Complete, n as u64) {
                        self.think();
                    }
                }
            }
            Err(e) => self.fail(
                e.raw_os_error().unwrap_or(libc::EIO),
                format!("reaping completions failed: {e}"),
            ),
        }
        self.completions = comps;
    }

    fn drain(&mut self) {
        self.commit();
        while self.inflight > 0 && self.error == 0 {
            self.reap(1);
        }
        // After an error, still collect what is in flight so buffers are free.
        while self.inflight > 0 {
            let before = self.inflight;
            self.reap(1);
            if self.inflight == before {
                break;
            }
        }
    }

    fn think_on(&mut self, kind: ThinkBlocksType, n: u64) -> bool {
        let t = &self.job.spec.time;
        if t.thinktime_us == 0 || t.thinktime_blocks_type != kind {
            return false;
        }
        let before = self.think_count / t.thinktime_blocks;
        self.think_count += n;
        self.think_count / t.thinktime_blocks > before
    }

    fn think(&mut self) {
        let t = &self.job.spec.time;
        let (total, spin) = (
            t.thinktime_us * 1000,
            t.thinktime_spin_us.min(t.thinktime_us) * 1000,
        );
        self.drain();
        let now = self.clock.now();
        if spin > 0 {
            self.clock.spin_until(now + spin);
        }
        let end = (now + total).min(self.end_ns);
        self.clock.sleep_until(end);
        if t.rate_ignore_thinktime {
            for n in &mut self.pacer.next_ns {
                *n += total;
            }
        }
    }

    /// Issues I/O until the pass is done or time is up. Returns true when
    /// the pass finished (rather than being stopped).
    fn run_pass(&mut self) -> bool {
        loop {
            let now = self.clock.now();
            if self.stopping(now) {
                return false;
            }
            if !self.measuring && now >= self.ramp_end() {
                self.end_ramp(now);
            }
            // Queue while there is room.
            let retried = self.retry.is_some();
            let next = match self.retry.take() {
                Some(n) => n,
                None => match self.workload.next_io() {
                    Ok(n) => n,
                    Err(_) => {
                        self.drain();
                        return true;
                    }
                },
            };
            let d = match next.op {
                Op::Read => 0,
                Op::Write => 1,
                Op::Trim => 2,
                _ => 3,
            };
            let mut at = 0;
            if d < 3 && !retried && self.pacer.active(d) {
                at = self.pacer.schedule(d, next.len, now);
            }
            if !retried {
                if let Some(due) = self.workload.replay_due_ns(now) {
                    at = at.max(due);
                }
            }
            if at > now {
                self.commit();
                while self.inflight > 0 && self.clock.now() < at {
                    self.reap(1);
                }
                if !self.wait_until(at.min(self.end_ns)) {
                    return false;
                }
            }
            if !next.op.is_data() {
                // Syncs wait for the writes before them, as fio does.
                self.drain();
            }
            let idx = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.commit();
                    self.reap(1);
                    match self.free.pop() {
                        Some(i) => i,
                        None => return false,
                    }
                }
            };
            let now = self.clock.now();
            self.prep(idx, &next, now);
            self.before_queue(idx, &next, now, retried);
            let r = {
                let u = &mut self.units[idx as usize];
                self.engine.queue(u)
            };
            match r {
                Queued::Completed => {
                    let res = self.units[idx as usize].result;
                    let done = self.clock.now();
                    if self.measuring {
                        self.stats.submit[1] += 1;
                        self.stats.submit_calls += 1;
                        self.stats.complete[1] += 1;
                        self.stats.complete_calls += 1;
                        self.stats.depth[depth_bucket(self.inflight + 1)] += 1;
                        self.stats.depth_total += 1;
                    }
                    self.account(idx, res, done, false);
                    self.free.push(idx);
                    self.after_completion(done);
                    if self.think_on(ThinkBlocksType::Complete, 1) {
                        self.think();
                    }
                }
                Queued::Queued => {
                    self.uncommitted.push(idx);
                    let batch = self.job.spec.io.iodepth_batch_submit.max(1);
                    if self.uncommitted.len() as u32 >= batch
                        || self.inflight + self.uncommitted.len() as u32 >= self.depth
                    {
                        self.commit();
                    }
                }
                Queued::Busy => {
                    // Issue the same I/O again once something completed.
                    self.free.push(idx);
                    self.retry = Some(next);
                    self.commit();
                    if self.inflight == 0 {
                        self.fail(
                            libc::EIO,
                            format!(
                                "{} engine refused an I/O with nothing in flight",
                                self.engine.name()
                            ),
                        );
                        return false;
                    }
                    self.reap(1);
                    continue;
                }
            }
            if self.think_on(ThinkBlocksType::Issue, 1) {
                self.think();
            }
            // A full queue: reap down to the low-water mark.
            if self.inflight + self.uncommitted.len() as u32 >= self.depth {
                self.commit();
                let io = &self.job.spec.io;
                let low = if io.iodepth_low == 0 {
                    self.depth.saturating_sub(1)
                } else {
                    io.iodepth_low.min(self.depth - 1)
                };
                // 0 polls for completions without waiting.
                let min = io.iodepth_batch_complete_min;
                while self.inflight > low && self.error == 0 {
                    self.reap(min);
                }
            }
        }
    }

    fn ramp_end(&self) -> u64 {
        self.ramp_end_ns
    }

    fn end_ramp(&mut self, now: u64) {
        self.measuring = true;
        self.rec.start_measuring(&mut self.stats, now, true);
        self.measure_start_ns = now;
        self.progress.state.store(state::RUNNING, Ordering::Relaxed);
    }
}

/// Runs one job clone from setup to its final fsync; waits on `start`
/// after setup so all jobs of a phase begin together.
pub fn run_job(
    job: &PlannedJob,
    shared: &RunShared,
    progress: &Progress,
    start: &Barrier,
) -> Outcome {
    progress.state.store(state::SETUP, Ordering::Relaxed);
    let setup = setup(job, shared, progress);
    start.wait();
    let mut w = match setup {
        Ok(w) => w,
        Err((errno, msg)) => {
            progress.state.store(state::ERROR, Ordering::Relaxed);
            return Outcome {
                error: errno,
                error_msg: Some(msg),
                ..Outcome::default()
            };
        }
    };
    let start_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let spec = &job.spec;
    let t0 = w.clock.now();
    let (lo, hi) = spec.time.startdelay_us;
    if hi > 0 {
        let delay = if hi > lo {
            lo + Rng::stream(job.seed, 5).below(hi - lo + 1)
        } else {
            lo
        };
        w.clock.sleep_until(t0 + delay * 1000);
    }
    let begin = w.clock.now();
    w.ramp_end_ns = begin + spec.time.ramp_time_us * 1000;
    w.end_ns = if spec.time.runtime_us > 0 {
        w.ramp_end_ns + spec.time.runtime_us * 1000
    } else {
        u64::MAX
    };
    w.pacer.next_ns = [begin; 3];
    w.measure_start_ns = begin;
    // stats hook: the timed phase starts (see stats::live::timed_phase).
    crate::stats::live::set_timed_phase(true);
    w.rec.begin(t0, w.end_ns);
    if spec.time.ramp_time_us == 0 {
        w.measuring = true;
        // Nothing to clear: keeps what setup measured (file-op opens).
        w.rec.start_measuring(&mut w.stats, begin, false);
        progress.state.store(state::RUNNING, Ordering::Relaxed);
    } else {
        progress.state.store(state::RAMP, Ordering::Relaxed);
    }

    let loops = spec.io.loops.max(1);
    let mut done_loops = 0;
    loop {
        let finished = w.run_pass();
        if !finished || w.error != 0 {
            break;
        }
        done_loops += 1;
        let now = w.clock.now();
        if spec.time.time_based {
            if now >= w.end_ns {
                break;
            }
        } else if done_loops >= loops {
            break;
        }
        if spec.file.unlink_each_loop {
            // Files are recreated on the next pass by the planner's layout;
            // removing them mid-run is only done at the end.
        }
        w.workload.reset_pass();
    }
    w.drain();
    crate::stats::live::set_timed_phase(false);
    if spec.sync.end_fsync && spec.io.rw.writes() && w.error == 0 {
        progress.state.store(state::FSYNC, Ordering::Relaxed);
        let fds: Vec<i32> = w.files.iter().map(|f| f.fd).filter(|fd| *fd >= 0).collect();
        for fd in fds {
            {
                // SAFETY: fsync on an open descriptor.
                if unsafe { libc::fsync(fd) } < 0 {
                    let e = std::io::Error::last_os_error();
                    w.fail(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        format!("end_fsync failed: {e}"),
                    );
                }
            }
        }
    }
    let end = w.clock.now();
    let mut stats = std::mem::take(&mut w.stats);
    // stats hook: final log lines, runtimes and CPU usage. A job shorter
    // than its ramp_time measured nothing.
    if let Err(m) = w.rec.finish(&mut stats, end, w.measuring) {
        w.fail(libc::EIO, m);
    }
    close_files(&mut w);
    if let Some(log) = w.iolog.take() {
        if let Err(m) = log.finish() {
            w.fail(libc::EIO, m);
        }
    }
    if spec.file.unlink || spec.file.unlink_each_loop {
        for f in &job.files {
            if matches!(
                f.kind,
                super::plan::TargetKind::Regular | super::plan::TargetKind::Missing
            ) {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
    let interrupted = shared.interrupted.load(Ordering::Relaxed);
    progress.state.store(
        if w.error != 0 {
            state::ERROR
        } else {
            state::DONE
        },
        Ordering::Relaxed,
    );
    Outcome {
        stats,
        error: w.error,
        error_msg: w.error_msg.take(),
        interrupted,
        start_unix_ms,
    }
}

fn close_files(w: &mut Worker) {
    let on_close = w.job.spec.sync.fsync_on_close;
    let now = w.clock.now();
    for (i, f) in std::mem::take(&mut w.files).into_iter().enumerate() {
        if let Some(log) = w.iolog.as_mut() {
            log.file(i as u32, FileAction::Close, now);
        }
        if f.fd >= 0 && on_close {
            // SAFETY: fsync on an open descriptor.
            unsafe { libc::fsync(f.fd) };
        }
        let _ = w.engine.close(f.fd, f.data, f.size);
    }
}

fn setup<'a>(
    job: &'a PlannedJob,
    shared: &'a RunShared,
    progress: &'a Progress,
) -> Result<Worker<'a>, (i32, String)> {
    let spec = &job.spec;
    let mut engine = engine::create(spec).map_err(|m| (libc::EINVAL, m))?;
    let caps = engine.caps();
    let depth = if caps.sync { 1 } else { spec.io.iodepth.max(1) };
    let max_bs = spec.io.bs.iter().map(|b| b.max()).max().unwrap_or(4096);
    let align = engine::align::buffer_alignment(
        spec.sync.direct,
        spec.buf.iomem_align,
        job.files.iter().map(|f| f.path.as_path()),
    ) as usize;
    let unit_size = (max_bs as usize).div_ceil(align) * align;
    let mut pool = Pool::new(depth as usize, unit_size, align).map_err(|m| (libc::ENOMEM, m))?;
    let data_bytes: u64 = job.files.iter().map(|f| f.region.len).sum();
    let mut filler = BufferFiller::new(spec, unit_size, data_bytes, job.seed);
    filler.init(pool.as_mut_slice());
    let units: Vec<IoUnit> = (0..depth)
        // SAFETY: each unit's slice lies inside the pool allocation.
        .map(|i| {
            IoUnit::new(
                i,
                unsafe { pool.ptr.add(i as usize * unit_size) },
                unit_size as u64,
            )
        })
        .collect();
    engine
        .init(depth, (pool.ptr, pool.layout.size()))
        .map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EIO),
                format!("{} engine setup failed: {e}", engine.name()),
            )
        })?;
    let files = files::open_all(job, engine.as_mut()).map_err(|m| (libc::EIO, m))?;
    let fds: Vec<i32> = files.iter().map(|f| f.fd).collect();
    engine.files_opened(&fds).map_err(|e| {
        (
            e.raw_os_error().unwrap_or(libc::EIO),
            format!("{} engine setup failed: {e}", engine.name()),
        )
    })?;
    if spec.sync.invalidate && !caps.diskless {
        files::invalidate(job, &files);
    }
    let mut clock = match shared.fake_clock_step {
        Some(step) => Clock::fake(step),
        None => Clock::real(shared.base),
    };
    let iolog = match &spec.log.write_iolog {
        Some(path) => {
            let now = clock.now();
            let paths: Vec<_> = job.files.iter().map(|f| f.path.clone()).collect();
            let mut log = IologWriter::create(std::path::Path::new(path), &paths, now)
                .map_err(|m| (libc::EIO, m))?;
            for i in 0..paths.len() {
                log.file(i as u32, FileAction::Open, now);
            }
            Some(log)
        }
        None => None,
    };
    let regions: Vec<Region> = job.files.iter().map(|f| f.region).collect();
    let mut workload = Workload::new(spec, &regions, job.pass_bytes, job.seed);
    if let Some(trace) = &job.trace {
        workload.set_replay(Replay::new(trace.clone(), spec.log.replay_no_stall));
    }
    // stats hook: the recorder (opens the job's log files).
    let rec = Recorder::new(
        spec,
        job.clone,
        &progress.link,
        depth,
        caps,
        shared.fake_clock_step.is_some(),
    )
    .map_err(|m| (libc::EIO, m))?;
    let depth_now = rec.initial_depth(depth);
    let mut stats = JobStats::default();
    if caps.file_op && !spec.stat.disable_clat {
        // The open (create, stat, unlink) is what these engines measure.
        let d = if spec.io.rw.has(Ddir::Read) { 0 } else { 1 };
        for f in &files {
            stats.dir[d].clat.record(f.open_ns);
        }
    }
    progress
        .planned_bytes
        .store(job.pass_bytes * spec.io.loops.max(1), Ordering::Relaxed);
    progress.planned_runtime_us.store(
        spec.time.runtime_us + spec.time.ramp_time_us,
        Ordering::Relaxed,
    );
    Ok(Worker {
        job,
        engine,
        files,
        units,
        free: (0..depth).rev().collect(),
        uncommitted: Vec::with_capacity(depth as usize),
        completions: Vec::with_capacity(depth as usize),
        inflight: 0,
        depth: depth_now,
        clock,
        stats,
        measuring: false,
        rec,
        pending: Action::Continue,
        stop_job: false,
        progress,
        shared,
        workload,
        pacer: Pacer {
            bps: spec.time.rate,
            iops: spec.time.rate_iops,
            poisson: spec.time.rate_process == RateProcess::Poisson,
            next_ns: [0; 3],
            rng: Rng::stream(job.seed, 21),
        },
        think_count: 0,
        error: 0,
        error_msg: None,
        retry: None,
        sfr_flags: spec.sync.sync_file_range.map(|(f, _)| f).unwrap_or(0),
        end_ns: u64::MAX,
        ramp_end_ns: 0,
        measure_start_ns: 0,
        filler,
        iolog,
        _pool: pool,
    })
}
