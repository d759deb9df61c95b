//! The worker: one thread per job clone. It opens the files, allocates the
//! aligned buffer pool once, then runs the job's loops and passes: ask the
//! workload for the next I/O, pace it (`workload::pacing`: rate, think
//! time, minimum rate), queue it on the engine, submit in batches
//! (`iodepth_batch_submit`), reap completions when the queue is full
//! (`iodepth_batch_complete_min/max`, down to `iodepth_low`) and account
//! them in its own `JobStats`.
//!
//! Hot-path rules: no allocation, no lock, no syscall but the I/O itself
//! and the clock read. Progress is published through relaxed atomics.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::clock::{self, Clock};
use super::files::{self, OpenedFile};
use super::flow::FlowMember;
use super::memory::{BufferMemory, LockedMemory};
use super::offload::OffloadEngine;
use super::plan::PlannedJob;
use crate::engine::{self, Completion, Engine, IoUnit, Op, Queued};
use crate::job::spec::{ContinueOn, Ddir, ThinkBlocksType};
use crate::stats::recorder::{Action, Recorder};
use crate::stats::{batch_bucket, depth_bucket, JobStats};
use crate::workload::buffers::BufferFiller;
use crate::workload::fileservice::FileEvent;
use crate::workload::iolog::{FileAction, IologWriter, Replay};
use crate::workload::pacing::{MinRate, Pacer, Thinker};
use crate::workload::rng::Rng;
use crate::workload::{NextIo, Region, Workload};

mod short;
mod verify;
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
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Planned bytes and runtime, for the ETA.
    pub planned_bytes: AtomicU64,
    pub planned_runtime_us: AtomicU64,
    /// Stop requests (steady state, `exitall` of the job's group) and
    /// status snapshots shared with the runner and the monitor.
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

struct Worker<'a> {
    job: &'a PlannedJob,
    engine: Box<dyn Engine>,
    files: Vec<OpenedFile>,
    open_flags: i32,
    units: Vec<IoUnit>,
    free: Vec<u32>,
    /// Units queued or in flight (for `serialize_overlap`).
    busy: Vec<bool>,
    uncommitted: Vec<u32>,
    completions: Vec<Completion>,
    inflight: u32,
    depth: u32,
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    low: u32,
    serialize: bool,
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
    /// Some direction is rate limited.
    paced: bool,
    thinker: Thinker,
    /// Inside a pause (completions reaped then do not start another).
    thinking: bool,
    min_rate: Option<MinRate>,
    /// Bytes and I/Os done since the start (ramp included).
    done_bytes: [u64; 3],
    done_ios: [u64; 3],
    error: i32,
    error_msg: Option<String>,
    continue_on: ContinueOn,
    total_err: u64,
    /// `fill_device` met ENOSPC: the job is done.
    filled: bool,
    /// An I/O the engine answered `Busy` to, issued again after a reap.
    retry: Option<NextIo>,
    /// Length of the I/O whose transfer moved zero bytes, for its error
    /// message (0: none).
    eof_len: u64,
    /// Start of the first write since the last sync (0: none).
    sync_cover: u64,
    sfr_flags: u32,
    end_ns: u64,
    ramp_end_ns: u64,
    measure_start_ns: u64,
    /// Write buffer contents.
    filler: BufferFiller,
    /// `write_iolog`: records every issued I/O.
    iolog: Option<IologWriter>,
    /// Verification (`verify`), when the job does it.
    vfy: Option<Box<VerifyState>>,
    /// This job's place in its flow group (`flow`).
    flow: Option<FlowMember>,
    /// Dropped last: engines may hold registrations of these buffers.
    _pool: BufferMemory,
    /// `lockmem`: memory pinned while the job runs.
    _locked: Option<LockedMemory>,
}

fn errno_name(e: i32) -> String {
    std::io::Error::from_raw_os_error(e)
        .to_string()
        .split(" (os error")
        .next()
        .unwrap_or("")
        .to_lowercase()
}

/// What an error does to a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorFate {
    /// Counted; the job carries on.
    CarryOn,
    /// Counted (the job counts errors of this type), and the job stops.
    CountAndStop,
    /// The job stops.
    Stop,
}

/// The fate of error `errno` on `op`, by error type (EILSEQ is a verify
/// error, a read's error a read error, any other a write error): a job
/// counts the errors of the types `continue_on_error` names or
/// `ignore_error` lists, and carries on after those in the type's list
/// (by default the non-fatal EIO and EILSEQ).
pub(crate) fn error_fate(
    on: ContinueOn,
    ignore: &[Option<Vec<i32>>; 3],
    op: Op,
    errno: i32,
) -> ErrorFate {
    let kind = if errno == libc::EILSEQ {
        2
    } else if op == Op::Read {
        0
    } else {
        1
    };
    let counted = ignore[kind].is_some()
        || match on {
            ContinueOn::None => false,
            ContinueOn::Read => kind == 0,
            ContinueOn::Write => kind == 1,
            ContinueOn::Io => kind < 2,
            ContinueOn::Verify => kind == 2,
            ContinueOn::All => true,
        };
    let listed = match &ignore[kind] {
        Some(list) => list.contains(&errno),
        None => errno == libc::EIO || errno == libc::EILSEQ,
    };
    match (counted, listed) {
        (false, _) => ErrorFate::Stop,
        (true, true) => ErrorFate::CarryOn,
        (true, false) => ErrorFate::CountAndStop,
    }
}

/// Runs `exec_prerun`/`exec_postrun` (`what`) through `sh -c`, its output
/// and errors going to `JOB.WHAT.txt` in the current directory.
fn exec_hook(job: &str, what: &str, cmd: &str) -> Result<(), String> {
    let out_name = format!("{job}.{what}.txt");
    super::output::stderr_line(&format!(
        "{job}: saving the output of exec_{what} in {out_name}"
    ));
    // Never through a link: a link put there would make iomark truncate
    // whatever it points at.
    let out = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&out_name)
    }
    .map_err(|e| format!("cannot create {out_name} for exec_{what}: {e}"))?;
    let err = out.try_clone().map_err(|e| format!("{out_name}: {e}"))?;
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("cannot run exec_{what} '{cmd}': {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "exec_{what} '{cmd}' failed ({status}); its output is in {out_name}"
        ))
    }
}

fn ddir_of(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        Op::Trim => Some(2),
        _ => None,
    }
}

impl<'a> Worker<'a> {
    #[inline]
    fn prep(&mut self, idx: u32, next: &NextIo, now: u64) {
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
        u.moved = 0;
        u.sfr_flags = self.sfr_flags;
        if next.op == Op::SyncFileRange {
            u.offset = 0;
            u.len = 0;
        }
    }

    /// Write contents and the trace record of an I/O about to be queued;
    /// a retry (after `Busy`) refills the same contents, records nothing.
    #[inline]
    fn before_queue(&mut self, idx: u32, next: &NextIo, now: u64, retry: bool) {
        let stamped = self.verify_before_queue(idx, next, now, retry);
        if next.op == Op::Write && !stamped && self.filler.per_write() {
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
    /// Waits while this job is ahead of its share in its flow group,
    /// pausing `flow_sleep` (or yielding) between checks; false when the
    /// job must stop instead.
    #[cold]
    fn hold_for_flow(&mut self) -> bool {
        self.commit();
        let pause = self.job.spec.ctl.flow_sleep_us;
        while self.flow.as_ref().is_some_and(FlowMember::ahead) {
            let now = self.clock.now();
            if self.stopping(now) {
                return false;
            }
            if self.inflight > 0 {
                self.reap(0);
            }
            if pause > 0 {
                std::thread::sleep(std::time::Duration::from_micros(pause));
            } else {
                std::thread::yield_now();
            }
        }
        true
    }

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

    /// Handles an error as `fate` says: a counted one adds to the count
    /// (the first is the job's reported error; with `error_dump`, one the
    /// job carries on after is printed as it happens), any other stops it.
    #[cold]
    fn on_error(&mut self, fate: ErrorFate, errno: i32, msg: String) {
        if fate != ErrorFate::Stop {
            self.total_err += 1;
            if self.total_err == 1 && self.error == 0 {
                self.stats.first_error = errno;
            }
        }
        if fate != ErrorFate::CarryOn {
            self.fail(errno, msg);
            return;
        }
        if self.job.spec.ctl.error_dump {
            super::output::stderr_line(&format!(
                "iomark: job '{}': {msg} (error {}, carrying on)",
                self.job.spec.name, self.total_err
            ));
        }
        if self.total_err == 1 && self.error == 0 {
            self.error_msg = Some(msg);
        }
    }

    fn io_error_msg(&mut self, idx: u32, errno: i32) -> String {
        let u = &self.units[idx as usize];
        let eof = std::mem::take(&mut self.eof_len);
        let resid = if eof > 0 && errno == libc::EIO {
            format!(" (0 of {eof} bytes moved: nothing more there, the file is shorter than the job expects)")
        } else {
            String::new()
        };
        format!(
            "{} error on '{}' at offset {}{resid}: {}",
            match u.op {
                Op::Read => "read",
                Op::Write => "write",
                Op::Trim => "trim",
                _ => "sync",
            },
            self.job.files[u.file as usize].path.display(),
            u.offset,
            errno_name(errno)
        )
    }

    /// Accounts a unit the engine completed inside `queue` (a submit and
    /// a completion of one I/O at the current depth); returns the time.
    fn complete_inline(&mut self, idx: u32) -> u64 {
        let u = &self.units[idx as usize];
        let mut res = u.result;
        if short::is_short(u.op, u.len, res) {
            match self.short_transfer(idx, res) {
                short::Short::Account(r) => res = r,
                short::Short::Requeued => {
                    self.busy[idx as usize] = true;
                    return self.clock.now();
                }
            }
        }
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
        done
    }

    /// Accounts a finished I/O; `queued` is false when the engine did it
    /// inside `queue` (no submission latency to record).
    #[inline]
    fn account(&mut self, idx: u32, result: i64, now: u64, queued: bool) {
        let u = &self.units[idx as usize];
        let op = u.op;
        let lat = now.saturating_sub(u.start_ns);
        if result < 0 {
            let errno = (-result) as i32;
            // A failed I/O still counts as issued (no bytes), as in fio.
            if let Some(di) = ddir_of(op) {
                if self.measuring {
                    self.stats.dir[di].ios += 1;
                }
            }
            if errno == libc::ENOSPC && op == Op::Write && self.job.spec.file.fill_device {
                // fill_device: the target is full, which ends the job.
                self.filled = true;
                return;
            }
            let fate = error_fate(self.continue_on, &self.job.spec.ctl.ignore_error, op, errno);
            if self.error == 0 || fate == ErrorFate::CarryOn {
                let msg = self.io_error_msg(idx, errno);
                self.on_error(fate, errno, msg);
            }
            return;
        }
        let Some(di) = ddir_of(op) else {
            let covered = std::mem::take(&mut self.sync_cover);
            if self.measuring {
                // Only fsync counts as a sync I/O; the others are timed.
                if op == Op::Fsync {
                    self.rec.sync_io(&mut self.stats, lat);
                } else {
                    self.stats.sync_lat.record(lat);
                }
                if covered != 0 && op != Op::SyncFileRange {
                    self.stats
                        .write_sync_lat
                        .record(now.saturating_sub(covered));
                }
            }
            return;
        };
        if op == Op::Write && self.sync_cover == 0 {
            self.sync_cover = u.start_ns.max(1);
        }
        let bytes = result as u64;
        let (len, offset, start_ns, issue_ns) = (u.len, u.offset, u.start_ns, u.issue_ns);
        self.done_bytes[di] += bytes;
        self.done_ios[di] += 1;
        let p = self.progress;
        p.bytes[di].fetch_add(bytes, Ordering::Relaxed);
        p.ios[di].fetch_add(1, Ordering::Relaxed);
        self.verify_completed(idx, bytes);
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
    /// (depth change, stop, failure) and runs its periodic work; checks
    /// the minimum rate.
    #[inline]
    fn after_completion(&mut self, now: u64) {
        if let Some(m) = &mut self.min_rate {
            if m.due(now) {
                if let Err(msg) = m.check(now, self.done_bytes, self.done_ios) {
                    self.fail(libc::EIO, msg);
                }
            }
        }
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
                self.low = self.low.min(self.depth);
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
            || self.filled
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

    /// Reaps at least `min` completions (0: only what is already done).
    fn reap(&mut self, min: u32) {
        if self.inflight == 0 {
            return;
        }
        let max = self.complete_max.max(min).min(self.inflight);
        let mut comps = std::mem::take(&mut self.completions);
        let r = self.engine.reap(min.min(self.inflight), max, &mut comps);
        match r {
            Ok(n) => {
                if n > 0 {
                    let now = self.clock.now();
                    let mut requeued = false;
                    for c in comps.iter() {
                        let u = &self.units[c.idx as usize];
                        let result = if short::is_short(u.op, u.len, c.result) {
                            match self.short_transfer(c.idx, c.result) {
                                short::Short::Account(r) => r,
                                short::Short::Requeued => {
                                    requeued = true;
                                    continue;
                                }
                            }
                        } else {
                            self.reassemble(c.idx, c.result)
                        };
                        self.account(c.idx, result, now, true);
                        self.busy[c.idx as usize] = false;
                        self.free.push(c.idx);
                    }
                    self.inflight -= n;
                    if requeued {
                        // The rests of short transfers go out at once.
                        self.commit();
                    }
                    if self.measuring {
                        self.stats.complete[batch_bucket(n)] += 1;
                        self.stats.complete_calls += 1;
                    }
                    self.after_completion(now);
                    if !self.thinking && self.thinker.due(ThinkBlocksType::Complete, n as u64, now)
                    {
                        self.completions = comps;
                        self.think();
                        return;
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

    /// Submits what is queued and waits for everything in flight.
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

    /// Pauses for `thinktime` (after letting in-flight I/O complete).
    fn think(&mut self) {
        let (total, spin) = (self.thinker.total_ns, self.thinker.spin_ns);
        self.thinking = true;
        self.drain();
        self.thinking = false;
        let now = self.clock.now();
        if spin > 0 {
            self.clock.spin_until(now + spin);
        }
        // Like fio, a pause is not cut short by the end of the runtime.
        self.clock.sleep_until(now + total);
        if self.job.spec.time.rate_ignore_thinktime {
            self.pacer.shift(total);
        }
        let t = self.clock.now();
        self.thinker.paused(t);
    }

    /// Opens and closes files as the workload's file service asks
    /// (`openfiles`); in-flight I/O completes before a file is closed.
    fn file_events(&mut self) {
        let mut k = 0;
        while k < self.workload.file_events().len() {
            let ev = self.workload.file_events()[k];
            k += 1;
            match ev {
                FileEvent::Open(i) => {
                    let i = i as usize;
                    if self.files[i].fd < 0 && !self.engine.caps().diskless {
                        match files::open_one(self.job, self.engine.as_mut(), i, self.open_flags) {
                            Ok(f) => {
                                self.files[i] = f;
                                if let Some(log) = self.iolog.as_mut() {
                                    let now = self.clock.now();
                                    log.file(i as u32, FileAction::Open, now);
                                }
                            }
                            Err(e) => self.fail(e.errno, e.msg),
                        }
                    }
                }
                FileEvent::Close(i) => {
                    let i = i as usize;
                    if self.files[i].fd >= 0 {
                        self.drain();
                        self.close_file(i);
                    }
                }
            }
        }
        self.workload.file_events().clear();
    }

    fn close_file(&mut self, i: usize) {
        let f = std::mem::replace(&mut self.files[i], files::CLOSED);
        if f.fd < 0 && f.data == 0 {
            return;
        }
        if let Some(log) = self.iolog.as_mut() {
            let now = self.clock.now();
            log.file(i as u32, FileAction::Close, now);
        }
        if f.fd >= 0 && self.job.spec.sync.fsync_on_close {
            // SAFETY: fsync on an open descriptor.
            unsafe { libc::fsync(f.fd) };
        }
        let _ = self.engine.close(f.fd, f.data, f.size);
    }

    /// True when `next` overlaps an I/O that is queued or in flight.
    fn overlaps(&self, next: &NextIo) -> bool {
        let end = next.offset + next.len;
        self.busy.iter().enumerate().any(|(i, b)| {
            let u = &self.units[i];
            *b && u.file == next.file && u.offset < end && next.offset < u.offset + u.len
        })
    }

    /// Issues I/O until the pass is done or the job must stop.
    fn run_pass(&mut self) -> PassEnd {
        loop {
            let now = self.clock.now();
            if self.stopping(now) {
                return PassEnd::Stopped;
            }
            if !self.measuring && now >= self.ramp_end_ns {
                self.end_ramp(now);
            }
            if self.retry.is_none() && self.backlog_due() {
                self.run_backlog();
                continue;
            }
            let retried = self.retry.is_some();
            if self.paced {
                self.workload.set_ready(self.pacer.ready_mask(now));
            }
            let next = match self.retry.take() {
                Some(n) => n,
                None => match self.workload.next_io() {
                    Ok(n) => n,
                    Err(_) => {
                        self.drain();
                        return PassEnd::Done;
                    }
                },
            };
            if !self.workload.file_events().is_empty() {
                self.file_events();
                if self.error != 0 {
                    return PassEnd::Stopped;
                }
            }
            if let Some(d) = ddir_of(next.op) {
                let mut at = 0;
                if !retried && self.pacer.active(d) {
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
                        return PassEnd::Stopped;
                    }
                }
                if !retried
                    && self.flow.as_ref().is_some_and(FlowMember::ahead)
                    && !self.hold_for_flow()
                {
                    return PassEnd::Stopped;
                }
                if self.serialize {
                    while self.overlaps(&next) && self.error == 0 {
                        self.commit();
                        self.reap(1);
                    }
                }
            } else {
                // Syncs wait for the I/O before them.
                self.drain();
            }
            let idx = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.commit();
                    self.reap(self.complete_min.max(1));
                    match self.free.pop() {
                        Some(i) => i,
                        None => return PassEnd::Stopped,
                    }
                }
            };
            let now = self.clock.now();
            self.prep(idx, &next, now);
            self.before_queue(idx, &next, now, retried);
            if let (Some(f), false, Some(_)) = (self.flow.as_mut(), retried, ddir_of(next.op)) {
                f.issued();
            }
            let r = {
                let u = &mut self.units[idx as usize];
                self.engine.queue(u)
            };
            match r {
                Queued::Completed => {
                    let done = self.complete_inline(idx);
                    if self.thinker.due(ThinkBlocksType::Complete, 1, done) {
                        self.think();
                    }
                }
                Queued::Queued => {
                    self.busy[idx as usize] = true;
                    self.uncommitted.push(idx);
                    if self.uncommitted.len() as u32 >= self.batch_submit
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
                        return PassEnd::Stopped;
                    }
                    self.reap(1);
                    continue;
                }
            }
            if self.thinker.due(ThinkBlocksType::Issue, 1, now) {
                self.think();
            }
            if self.inflight + self.uncommitted.len() as u32 >= self.depth {
                // A full queue: reap at least one, then on down to iodepth_low.
                self.commit();
                let min = self.complete_min.max(1);
                loop {
                    self.reap(min);
                    if self.inflight <= self.low || self.error != 0 {
                        break;
                    }
                }
            } else if self.complete_min == 0 && self.inflight > 0 {
                // Collect whatever is done before queueing more.
                self.reap(0);
            }
        }
    }

    /// Measuring starts at the end of the ramp, for every clone of the
    /// batch at the same instant (`ramp_end_ns`), whenever this one
    /// noticed it (`now`): what completed between the two is left out.
    fn end_ramp(&mut self, now: u64) {
        self.measuring = true;
        let from = if self.clock.is_fake() {
            now
        } else {
            self.ramp_end_ns.min(now)
        };
        let clock = &mut self.clock;
        self.rec
            .start_measuring(&mut self.stats, from, &mut || clock.now(), true);
        self.measure_start_ns = from;
        self.progress.state.store(state::RUNNING, Ordering::Relaxed);
    }

    /// A new loop reads from the storage again, not from what the last
    /// loop left cached (`invalidate`, fio's default).
    fn invalidate(&mut self) {
        if drops_cache(&self.job.spec, self.engine.caps()) {
            self.drain();
            files::invalidate(self.job, &self.files);
        }
    }

    /// `unlink_each_loop`: the files go away after a loop and are laid
    /// out and opened again for the next.
    fn recreate_files(&mut self) {
        self.drain();
        for i in 0..self.files.len() {
            self.close_file(i);
        }
        files::unlink_all(self.job);
        let mut laid = Vec::new();
        if let Err(m) = files::layout(self.job, &mut laid) {
            self.fail(m.errno, m.msg);
            return;
        }
        for i in self.workload.initially_open() {
            match files::open_one(self.job, self.engine.as_mut(), i as usize, self.open_flags) {
                Ok(f) => self.files[i as usize] = f,
                Err(m) => {
                    self.fail(m.errno, m.msg);
                    return;
                }
            }
        }
        self.workload.file_events().clear();
    }

    /// The job's loops and passes: `loops` loops of up to `size` (or
    /// `io_size`) bytes each, then extra passes until `io_size` is done;
    /// time-based jobs go round until the runtime ends.
    fn run_loops(&mut self) {
        let spec = &self.job.spec;
        self.workload.start_loop();
        self.workload.file_events().clear();
        if spec.time.time_based {
            // Loops until the deadline; each new loop starts the files
            // over and drops their cached pages again, as fio does.
            loop {
                let before = self.workload.issued_bytes();
                if self.run_pass() == PassEnd::Stopped || self.workload.issued_bytes() == before {
                    return;
                }
                self.workload.start_loop();
                self.file_events();
                self.invalidate();
            }
        }
        let dry_run = self.vfy.as_deref().is_some_and(|v| v.dry_run());
        let reads_back = self.vfy.as_deref().is_some_and(|v| v.reads_back());
        let loops = spec.io.loops.max(1);
        for l in 0..loops {
            if l > 0 {
                if spec.file.unlink_each_loop {
                    self.recreate_files();
                    if self.error != 0 {
                        return;
                    }
                }
                self.workload.start_loop();
                self.file_events();
                self.invalidate();
            }
            let end = if dry_run {
                self.dry_run_pass()
            } else {
                self.run_pass()
            };
            if end == PassEnd::Stopped {
                return;
            }
            // do_verify: each loop's writes are read back after it.
            self.read_back();
        }
        // As fio does, a verified write job goes on looping (write, then
        // read back) until what it wrote and read reaches its size (or
        // io_size): a region with holes takes several loops.
        if reads_back && !dry_run {
            let target = self.job.limits.bytes;
            while self.done_bytes[0] + self.done_bytes[1] < target && self.error == 0 {
                let before = self.workload.issued_bytes();
                self.workload.start_loop();
                self.file_events();
                if self.run_pass() == PassEnd::Stopped || self.workload.issued_bytes() == before {
                    return;
                }
                self.read_back();
            }
        }
        // Extra passes would overwrite blocks before they are read back.
        while !reads_back && self.workload.wants_extra_pass() {
            let before = self.workload.issued_bytes();
            self.workload.start_extra_pass();
            self.file_events();
            if self.run_pass() == PassEnd::Stopped || self.workload.issued_bytes() == before {
                return;
            }
        }
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
    progress.state.store(state::SETUP, Ordering::Relaxed);
    let prerun = match &job.spec.ctl.exec_prerun {
        Some(cmd) => exec_hook(&job.spec.name, "prerun", cmd).map_err(|m| (libc::ECANCELED, m)),
        None => Ok(()),
    };
    let setup = prerun.and_then(|()| setup(job, shared, progress));
    let shared_start = start.wait();
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
    let spec = &job.spec;
    // Every clone of the batch counts from the gate's one start, whenever
    // it got a CPU after it (a fake clock has no common time base).
    let t0 = if w.clock.is_fake() {
        w.clock.now()
    } else {
        shared_start
    };
    let (lo, hi) = spec.time.startdelay_us;
    let mut begin = t0;
    if hi > 0 {
        let delay = if hi > lo {
            lo + Rng::stream(job.seed, 5).below(hi - lo + 1)
        } else {
            lo
        };
        begin = t0 + delay * 1000;
        w.clock.sleep_until(begin);
        if w.clock.is_fake() {
            begin = w.clock.now();
        }
    }
    let late_ns = w.clock.now().saturating_sub(begin);
    let start_unix_ms = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        .saturating_sub(late_ns))
        / 1_000_000;
    w.ramp_end_ns = begin + spec.time.ramp_time_us * 1000;
    w.end_ns = if spec.time.runtime_us > 0 {
        w.ramp_end_ns + spec.time.runtime_us * 1000
    } else {
        u64::MAX
    };
    w.pacer.start(begin);
    w.thinker.start(begin);
    if let Some(v) = w.vfy.as_deref_mut() {
        v.start(begin);
    }
    if let Some(m) = &mut w.min_rate {
        m.start(begin);
    }
    w.measure_start_ns = begin;
    // stats hook: the timed phase starts (see stats::live::timed_phase).
    crate::stats::live::set_timed_phase(true);
    w.rec.begin(t0, w.end_ns);
    if spec.time.ramp_time_us == 0 {
        w.measuring = true;
        // Nothing to clear: keeps what setup measured (file-op opens).
        let clock = &mut w.clock;
        w.rec
            .start_measuring(&mut w.stats, begin, &mut || clock.now(), false);
        progress.state.store(state::RUNNING, Ordering::Relaxed);
    } else {
        progress.state.store(state::RAMP, Ordering::Relaxed);
    }

    if !spec.file.create_only {
        w.run_loops();
    }
    w.drain();
    // Done issuing: stop holding back the rest of the flow group.
    w.flow = None;
    crate::stats::live::set_timed_phase(false);
    let dry_run = w.vfy.as_deref().is_some_and(|v| v.dry_run());
    if spec.sync.end_fsync && spec.io.rw.writes() && !dry_run && w.error == 0 {
        progress.state.store(state::FSYNC, Ordering::Relaxed);
        let fds: Vec<i32> = w.files.iter().map(|f| f.fd).filter(|fd| *fd >= 0).collect();
        for fd in fds {
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
    let end = w.clock.now();
    let mut stats = std::mem::take(&mut w.stats);
    stats.total_err = w.total_err;
    // stats hook: final log lines, runtimes and CPU usage. A job shorter
    // than its ramp_time measured nothing.
    let measuring = w.measuring;
    if let Err(e) = w.rec.finish(&mut stats, end, measuring) {
        w.fail(e.errno, e.msg);
    }
    if let Some(v) = w.vfy.as_deref() {
        // Reading back after the write phase is the reads' own time.
        if v.verify_ns > 0 && measuring {
            crate::stats::live::split_read_back(
                &mut stats,
                end.saturating_sub(w.measure_start_ns),
                v.verify_ns,
                spec.io.rw.has(Ddir::Read) || v.reads_while_writing(),
            );
        }
        if let (Some(msg), Some(more)) = (w.error_msg.as_mut(), v.summary()) {
            msg.push(' ');
            msg.push_str(&more);
        }
    }
    for i in 0..w.files.len() {
        w.close_file(i);
    }
    if let Some(log) = w.iolog.take() {
        if let Err(m) = log.finish() {
            w.fail(libc::EIO, m);
        }
    }
    if spec.file.unlink {
        files::unlink_all(job);
    }
    if let Some(cmd) = &spec.ctl.exec_postrun {
        if let Err(m) = exec_hook(&spec.name, "postrun", cmd) {
            super::output::stderr_line(&format!("iomark: warning: job '{}': {m}", spec.name));
        }
    }
    if w.error == 0 && w.total_err > 0 {
        // Errors carried on after: the job reports the first of them.
        w.error = if stats.first_error != 0 {
            stats.first_error
        } else {
            libc::EIO
        };
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

fn setup<'a>(
    job: &'a PlannedJob,
    shared: &'a RunShared,
    progress: &'a Progress,
) -> Result<Worker<'a>, (i32, String)> {
    let spec = &job.spec;
    let mut engine = engine::create(spec).map_err(|m| (libc::EINVAL, m))?;
    let offload = OffloadEngine::wanted(spec);
    let mut caps = engine.caps();
    // Offloaded, even a synchronous engine has iodepth I/Os in flight.
    let depth = if caps.sync && !offload {
        1
    } else {
        spec.io.iodepth.max(1)
    };
    let max_bs = spec.io.bs.iter().map(|b| b.max()).max().unwrap_or(4096);
    let align = engine::align::buffer_alignment(
        spec.sync.direct,
        spec.buf.iomem_align,
        job.files.iter().map(|f| f.path.as_path()),
    ) as usize;
    let unit_size = (max_bs as usize).div_ceil(align) * align;
    let mut pool = BufferMemory::new(
        depth as usize * unit_size,
        align,
        &spec.buf.mem,
        spec.buf.hugepage_size,
    )
    .map_err(|m| (libc::ENOMEM, m))?;
    let locked = match spec.buf.lockmem {
        0 => None,
        n => Some(LockedMemory::new(n as usize).map_err(|m| (libc::ENOMEM, m))?),
    };
    let data_bytes: u64 = job.files.iter().map(|f| f.region.len).sum();
    let mut filler = BufferFiller::shared(spec, unit_size, data_bytes, job.seed, job.dedupe_share);
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
    if offload {
        engine = Box::new(
            OffloadEngine::start(spec, depth, (pool.ptr, pool.size))
                .map_err(|m| (libc::EINVAL, m))?,
        );
        caps = engine.caps();
    } else {
        engine.init(depth, (pool.ptr, pool.size)).map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EIO),
                format!("{} engine setup failed: {e}", engine.name()),
            )
        })?;
    }
    let regions: Vec<Region> = job.files.iter().map(|f| f.region).collect();
    let mut workload = Workload::new(spec, &regions, job.limits, job.seed);
    match workload.random_map_failed() {
        0 => {}
        n if spec.io.softrandommap => super::output::stderr_line(&format!(
            "iomark: warning: job '{}': no memory for the random map of {n} blocks; \
             carrying on without one (softrandommap), so some blocks may be done twice and others not at all",
            spec.name
        )),
        n => {
            return Err((
                libc::ENOMEM,
                format!(
                    "no memory for the random map of {n} blocks: set norandommap=1, or softrandommap=1 to go on without it"
                ),
            ))
        }
    }
    workload.file_events().clear();
    if let Some(trace) = &job.trace {
        workload.set_replay(Replay::new(trace.clone(), spec.log.replay_no_stall));
    }
    if spec.file.pre_read && !caps.diskless {
        files::pre_read(job).map_err(|e| (e.errno, e.msg))?;
    }
    let open_flags = files::open_flags(job);
    let files = files::open_all(job, engine.as_mut(), &workload.initially_open())
        .map_err(|e| (e.errno, e.msg))?;
    if spec.sync.direct
        && !caps.diskless
        && !caps.file_op
        && job.trace.is_none()
        && spec.io.ioengine.info().direct_io
    {
        files::check_direct_alignment(job).map_err(|e| (e.errno, e.msg))?;
    }
    let fds: Vec<i32> = files.iter().map(|f| f.fd).collect();
    engine.files_opened(&fds).map_err(|e| {
        (
            e.raw_os_error().unwrap_or(libc::EIO),
            format!("{} engine setup failed: {e}", engine.name()),
        )
    })?;
    if drops_cache(spec, caps) {
        files::invalidate(job, &files);
    }
    let mut clock = match shared.fake_clock_step {
        Some(step) => Clock::fake(step),
        None => Clock::real(shared.base, clock::resolve(spec.time.clocksource).0),
    };
    let iolog = match &spec.log.write_iolog {
        Some(path) => {
            let now = clock.now();
            let paths: Vec<_> = job.files.iter().map(|f| f.path.clone()).collect();
            let mut log = IologWriter::create(std::path::Path::new(path), &paths, now)
                .map_err(|m| (libc::EIO, m))?;
            for (i, f) in files.iter().enumerate() {
                if f.fd >= 0 || f.data != 0 || caps.diskless {
                    log.file(i as u32, FileAction::Open, now);
                }
            }
            Some(log)
        }
        None => None,
    };
    // stats hook: the recorder (opens the job's log files).
    let rec = Recorder::new(
        spec,
        job.clone,
        &progress.link,
        depth,
        caps,
        shared.fake_clock_step.is_some(),
    )
    .map_err(|e| (e.errno, e.msg))?;
    let depth_now = rec.initial_depth(depth);
    let number = progress.link.number.load(Ordering::Relaxed).max(1) as u16;
    let vfy = VerifyState::new(
        spec,
        &workload,
        job.limits,
        number,
        job.seed,
        depth,
        caps.diskless,
    );
    let mut stats = JobStats::default();
    if caps.file_op && !spec.stat.disable_clat {
        // The open (create, stat, unlink) is what these engines measure.
        let d = if spec.io.rw.has(Ddir::Read) { 0 } else { 1 };
        for f in files.iter().filter(|f| f.fd >= 0 || f.open_ns > 0) {
            stats.dir[d].clat.record(f.open_ns);
        }
    }
    progress
        .planned_bytes
        .store(job.limits.bytes * spec.io.loops.max(1), Ordering::Relaxed);
    progress.planned_runtime_us.store(
        spec.time.runtime_us + spec.time.ramp_time_us,
        Ordering::Relaxed,
    );
    let io = &spec.io;
    let batch_submit = match io.iodepth_batch_submit {
        0 => depth,
        n => n.min(depth),
    };
    let complete_min = io.iodepth_batch_complete_min.min(depth);
    let complete_max = match io.iodepth_batch_complete_max {
        0 => complete_min.max(1),
        m => m.min(depth).max(1),
    };
    let low = match io.iodepth_low {
        0 => depth,
        l => l.min(depth),
    };
    Ok(Worker {
        job,
        engine,
        files,
        open_flags,
        units,
        free: (0..depth).rev().collect(),
        busy: vec![false; depth as usize],
        uncommitted: Vec::with_capacity(depth as usize),
        completions: Vec::with_capacity(depth as usize),
        inflight: 0,
        depth: depth_now,
        batch_submit,
        complete_min,
        complete_max,
        low,
        serialize: depth > 1
            && (io.serialize_overlap || vfy.as_deref().is_some_and(|v| v.needs_serial_writes())),
        clock,
        stats,
        measuring: false,
        rec,
        pending: Action::Continue,
        stop_job: false,
        progress,
        shared,
        workload,
        pacer: Pacer::new(spec, job.seed),
        paced: spec
            .time
            .rate
            .iter()
            .chain(&spec.time.rate_iops)
            .any(|r| *r > 0),
        thinker: Thinker::new(spec),
        thinking: false,
        min_rate: MinRate::new(spec),
        done_bytes: [0; 3],
        done_ios: [0; 3],
        error: 0,
        error_msg: None,
        continue_on: ContinueOn::from_name(&spec.ctl.continue_on_error),
        total_err: 0,
        filled: false,
        retry: None,
        eof_len: 0,
        sync_cover: 0,
        sfr_flags: spec.sync.sync_file_range.map(|(f, _)| f).unwrap_or(0),
        end_ns: u64::MAX,
        ramp_end_ns: 0,
        measure_start_ns: 0,
        filler,
        iolog,
        vfy,
        flow: (spec.ctl.flow > 0).then(|| shared.flows.join(spec.ctl.flow_id, spec.ctl.flow)),
        _pool: pool,
        _locked: locked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use ErrorFate::*;

    fn fate(on: ContinueOn, op: Op, errno: i32) -> ErrorFate {
        error_fate(on, &[None, None, None], op, errno)
    }

    #[test]
    fn ignore_error_lists_replace_the_default_per_type() {
        let w = [None, Some(vec![libc::ENOSPC, 122]), None];
        // Listed write errors carry on even without continue_on_error.
        assert_eq!(
            error_fate(ContinueOn::None, &w, Op::Write, libc::ENOSPC),
            CarryOn
        );
        assert_eq!(error_fate(ContinueOn::None, &w, Op::Fsync, 122), CarryOn);
        // The list replaces the default for its type: EIO is counted, fatal.
        assert_eq!(
            error_fate(ContinueOn::All, &w, Op::Write, libc::EIO),
            CountAndStop
        );
        // Other types keep the default.
        assert_eq!(
            error_fate(ContinueOn::All, &w, Op::Read, libc::EIO),
            CarryOn
        );
        assert_eq!(
            error_fate(ContinueOn::None, &w, Op::Read, libc::ENOSPC),
            Stop
        );
        let r = [Some(vec![libc::EAGAIN]), None, None];
        assert_eq!(
            error_fate(ContinueOn::None, &r, Op::Read, libc::EAGAIN),
            CarryOn
        );
        assert_eq!(
            error_fate(ContinueOn::None, &r, Op::Write, libc::EAGAIN),
            Stop
        );
    }

    #[test]
    fn only_non_fatal_errors_of_the_named_kind_are_carried_on_after() {
        assert_eq!(fate(ContinueOn::All, Op::Write, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Io, Op::Fsync, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Verify, Op::Read, libc::EILSEQ), CarryOn);
        assert_eq!(fate(ContinueOn::Read, Op::Read, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Read, Op::Write, libc::EIO), Stop);
        // A fatal error of a type the job counts is counted, then stops it.
        assert_eq!(
            fate(ContinueOn::Write, Op::Write, libc::ENOSPC),
            CountAndStop
        );
        assert_eq!(fate(ContinueOn::None, Op::Read, libc::EIO), Stop);
        assert_eq!(fate(ContinueOn::Verify, Op::Read, libc::EIO), Stop);
    }
}
