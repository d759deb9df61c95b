//! The worker's statistics recorder: everything measured per I/O and per
//! time window goes through here, so the worker calls a handful of
//! methods and knows nothing of samples, logs or targets.
//!
//! Per I/O (`io`, `sync_io`): latencies into the histograms, the log
//! lines, the `max_latency` check and the `latency_target` accounting; no
//! allocation, no lock, no system call (log buffers are flushed in large
//! chunks). Per window (`tick`, when `due`): bandwidth and IOPS samples
//! (`bwavgtime`, `iopsavgtime`), averaged and histogram log lines, latency
//! target windows, and status snapshots for the monitor.

use std::sync::atomic::Ordering;

use super::latency_target::{LatencyTarget, Step};
use super::live::{finalize, JobLink, Span};
use super::logs::{JobLogs, LogError};
use super::samples::IntervalSampler;
use super::{IoLatency, JobStats, RecordFlags, ThreadUsage};
use crate::engine::IoPrio;
use crate::job::spec::{Ddir, JobSpec};

/// What the worker must do after `io` or `tick`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Continue,
    /// Run at this queue depth from now on; drain in-flight I/O first
    /// when `quiesce` is set.
    Depth {
        depth: u32,
        quiesce: bool,
        /// The statistics were cleared: measuring starts again.
        reset: bool,
    },
    /// End the job now (latency target found, or steady state reached).
    Stop,
    /// End the job with this error (errno, message).
    Fail(i32, &'static str),
}

/// Measures one job clone. Created at setup (log files open there).
#[derive(Debug)]
pub struct Recorder {
    flags: RecordFlags,
    ddirs: [bool; 3],
    sample: bool,
    bw: IntervalSampler,
    iops: IntervalSampler,
    logs: Option<Box<JobLogs>>,
    target: Option<LatencyTarget>,
    max_latency_ns: [u64; 3],
    /// Largest block size per direction, for histogram log lines.
    bs: [u64; 3],
    /// Samples due at or after this time are not taken (end of runtime).
    end_ns: u64,
    next_due: u64,
    measuring_from: u64,
    started: u64,
    usage0: ThreadUsage,
    snapshots: bool,
    served: u64,
    snap_buf: Option<JobStats>,
    /// Error detail for the last `Action::Fail`.
    fail_detail: Option<String>,
    depth: u32,
    /// Fake clock: wall-clock and CPU figures are fixed.
    fake: bool,
    /// Results are whole payloads, never short (`Caps::payload_results`).
    payload: bool,
    /// The engine's times to first byte, for snapshots (http engine).
    first_byte: Option<crate::engine::FirstBytes>,
}

impl Recorder {
    /// `depth` is the queue depth the engine allows (1 for synchronous
    /// engines); `caps` says which latencies exist.
    pub fn new(
        spec: &JobSpec,
        clone: u32,
        link: &JobLink,
        depth: u32,
        caps: crate::engine::Caps,
        fake_clock: bool,
    ) -> Result<Recorder, LogError> {
        let st = &spec.stat;
        let number = link.number.load(Ordering::Relaxed).max(1);
        // Rank r of a run over many hosts starts at clone r × numjobs.
        let first = clone.is_multiple_of(spec.ctl.numjobs.max(1));
        let logs = JobLogs::open(spec, number, first)?.map(Box::new);
        // With averaged logs, samples are taken at least as often.
        let avg = spec.log.log_avg_msec;
        let bw_ms = if avg > 0 && spec.log.write_bw_log.is_some() {
            st.bwavgtime_ms.min(avg)
        } else {
            st.bwavgtime_ms
        };
        let iops_ms = if avg > 0 && spec.log.write_iops_log.is_some() {
            st.iopsavgtime_ms.min(avg)
        } else {
            st.iopsavgtime_ms
        };
        let snapshots = link.snapshots.load(Ordering::Relaxed);
        if snapshots {
            // Allocated here so that serving a snapshot never allocates.
            if let Ok(mut slot) = link.snapshot.lock() {
                *slot = Some(JobStats::default());
            }
        }
        Ok(Recorder {
            // File-operation engines count operations and time only the
            // opens (recorded by the worker at setup).
            flags: RecordFlags {
                slat: !caps.sync && !caps.file_op && !st.disable_slat,
                clat: !caps.file_op && !st.disable_clat,
                lat: !caps.file_op && !st.disable_lat,
                dist: !caps.file_op && !st.disable_clat,
            },
            ddirs: Ddir::ALL.map(|d| spec.io.rw.has(d)),
            sample: !st.disable_bw,
            bw: IntervalSampler::new(bw_ms, 0),
            iops: IntervalSampler::new(iops_ms, 0),
            logs,
            target: LatencyTarget::new(spec, depth),
            max_latency_ns: st.max_latency_us.map(|us| us * 1000),
            bs: [0, 1, 2].map(|d| spec.io.bs[d].max()),
            end_ns: u64::MAX,
            next_due: u64::MAX,
            measuring_from: 0,
            started: 0,
            usage0: ThreadUsage::default(),
            snapshots,
            served: 0,
            snap_buf: snapshots.then(JobStats::default),
            fail_detail: None,
            depth,
            fake: fake_clock,
            payload: caps.payload_results,
            first_byte: None,
        })
    }

    pub fn flags(&self) -> RecordFlags {
        self.flags
    }

    /// The job's statistics are laid out (per-priority statistics): the
    /// snapshot buffers take the same layout now, so that serving a
    /// snapshot never allocates.
    pub fn shape_snapshots(&mut self, stats: &JobStats, link: &JobLink) {
        if let Some(buf) = &mut self.snap_buf {
            buf.copy_from(stats);
            if let Ok(mut slot) = link.snapshot.lock() {
                if let Some(s) = slot.as_mut() {
                    s.copy_from(stats);
                }
            }
        }
    }

    /// Status snapshots show the engine's times to first byte `live`
    /// (kept by the engine's threads until the job ends), when it has
    /// them.
    pub fn watch_first_byte(&mut self, live: Option<crate::engine::FirstBytes>) {
        if self.snapshots {
            self.first_byte = live;
        }
    }

    /// The depth to start at: 1 while a latency target is searched.
    pub fn initial_depth(&self, depth: u32) -> u32 {
        match &self.target {
            Some(t) => t.depth(),
            None => depth,
        }
    }

    /// The job starts (after `startdelay`); `end_ns` is when its runtime
    /// ends (`u64::MAX` without one).
    pub fn begin(&mut self, now: u64, end_ns: u64) {
        self.started = now;
        self.end_ns = end_ns;
        self.usage0 = self.usage();
        self.measuring_from = now;
    }

    fn usage(&self) -> ThreadUsage {
        if self.fake {
            ThreadUsage::default()
        } else {
            ThreadUsage::now()
        }
    }

    /// Measuring starts (immediately, or at the end of `ramp_time`):
    /// statistics are cleared and every window restarts at `now`, which
    /// may lie in the past (a clone that got a CPU after its batch's
    /// shared start still measures from that start, and dates its logs
    /// from it); `clock` reads the worker's clock, right after the log
    /// clock, to tell how far.
    pub fn start_measuring(
        &mut self,
        stats: &mut JobStats,
        now: u64,
        clock: &mut dyn FnMut() -> u64,
        reset: bool,
    ) {
        if reset {
            stats.reset();
        }
        self.measuring_from = now;
        self.bw.restart(now, [0; 3], [0; 3]);
        self.iops.restart(now, [0; 3], [0; 3]);
        if let Some(l) = &mut self.logs {
            let fake = self.fake;
            let unix_ms = l.epoch_clock().map(|id| {
                if fake {
                    super::live::FAKE_UNIX_S * 1000
                } else {
                    let unix = crate::sys::clock_ms(id);
                    unix.saturating_sub(clock().saturating_sub(now) / 1_000_000)
                }
            });
            l.start(now, unix_ms);
        }
        if let Some(t) = &mut self.target {
            t.start(now);
        }
        self.update_due();
    }

    fn update_due(&mut self) {
        let mut t = u64::MAX;
        if self.sample {
            t = t.min(self.bw.next_ns()).min(self.iops.next_ns());
        }
        if let Some(l) = &self.logs {
            t = t.min(l.next_due());
        }
        if let Some(tg) = &self.target {
            t = t.min(tg.next_due());
        }
        self.next_due = t;
    }

    /// Whether `tick` has work at `now` (one comparison per I/O, plus one
    /// relaxed load when status snapshots are on).
    #[inline]
    pub fn due(&self, now: u64, link: &JobLink) -> bool {
        now >= self.next_due || (self.snapshots && link.want.load(Ordering::Relaxed) != self.served)
    }

    /// Accounts one completed data I/O (`d`: 0 read, 1 write, 2 trim),
    /// issued at priority `prio`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn io(
        &mut self,
        stats: &mut JobStats,
        now: u64,
        d: usize,
        bytes: u64,
        len: u64,
        offset: u64,
        start_ns: u64,
        issue_ns: u64,
        queued: bool,
        prio: IoPrio,
    ) -> Action {
        let lat = IoLatency {
            slat: issue_ns.saturating_sub(start_ns),
            clat: now.saturating_sub(issue_ns),
            lat: now.saturating_sub(start_ns),
        };
        let mut f = self.flags;
        // Done inside `queue`: there was no submission to time.
        f.slat &= queued;
        let short = bytes < len && !self.payload;
        stats.record_io(d, bytes, short, lat, f, prio.stat);
        if let Some(l) = &mut self.logs {
            l.io(
                now,
                d,
                len,
                offset,
                prio.value,
                [
                    f.slat.then_some(lat.slat),
                    f.clat.then_some(lat.clat),
                    f.lat.then_some(lat.lat),
                ],
            );
        }
        let max = self.max_latency_ns[d];
        if max > 0 && f.lat && lat.lat > max {
            self.fail_detail = Some(format!(
                "latency of {} nsec exceeds the maximum of {} nsec (max_latency)",
                lat.lat, max
            ));
            return Action::Fail(libc::ETIMEDOUT, "max latency exceeded");
        }
        if let (Some(t), true) = (&mut self.target, f.lat) {
            let step = t.io(now, lat.lat);
            return self.apply(stats, now, step);
        }
        Action::Continue
    }

    /// Accounts one completed fsync/fdatasync/sync_file_range.
    #[inline]
    pub fn sync_io(&mut self, stats: &mut JobStats, lat_ns: u64) {
        stats.sync_lat.record(lat_ns);
        stats.sync_ios += 1;
    }

    fn apply(&mut self, stats: &mut JobStats, now: u64, step: Step) -> Action {
        match step {
            Step::Continue => Action::Continue,
            Step::Depth {
                depth,
                quiesce,
                reset,
            } => {
                stats.latency_depth = depth;
                if reset {
                    self.start_measuring(stats, now, &mut || now, true);
                }
                self.update_due();
                Action::Depth {
                    depth,
                    quiesce,
                    reset,
                }
            }
            Step::Done => Action::Stop,
            Step::Fail { lat_ns, target_ns } => {
                self.fail_detail = Some(format!(
                    "latency of {lat_ns} nsec exceeds the target of {target_ns} nsec even at queue depth 1 (latency_target)"
                ));
                Action::Fail(libc::ETIMEDOUT, "latency target not met")
            }
        }
    }

    /// The message for the last `Action::Fail`.
    pub fn fail_message(&mut self) -> String {
        self.fail_detail
            .take()
            .unwrap_or_else(|| "latency limit exceeded".into())
    }

    /// Does what is due at `now`: samples, log windows, latency target
    /// windows, snapshots. Call when `due` says so.
    pub fn tick(&mut self, stats: &mut JobStats, now: u64, link: &JobLink) -> Action {
        if self.sample && now < self.end_ns {
            let bytes = [0, 1, 2].map(|i| stats.dir[i].bytes);
            let ios = [0, 1, 2].map(|i| stats.dir[i].ios);
            if let Some((dt, db, _)) = self.bw.take(now, bytes, ios) {
                let ms = dt / 1_000_000;
                for d in 0..3 {
                    if self.ddirs[d] && ms > 0 {
                        stats.dir[d].bw_samples.add(db[d] * 1000 / ms / 1024);
                    }
                }
            }
            if let Some((dt, _, di)) = self.iops.take(now, bytes, ios) {
                let ms = dt / 1_000_000;
                for d in 0..3 {
                    if self.ddirs[d] && ms > 0 {
                        stats.dir[d].iops_samples.add(di[d] * 1000 / ms);
                    }
                }
            }
        }
        if let Some(l) = &mut self.logs {
            l.tick(
                now,
                [&stats.dir[0].clat, &stats.dir[1].clat, &stats.dir[2].clat],
                self.bs,
            );
        }
        let mut action = Action::Continue;
        if let Some(t) = &mut self.target {
            let step = t.tick(now);
            action = self.apply(stats, now, step);
        }
        if self.snapshots {
            let want = link.want.load(Ordering::Acquire);
            if want != self.served {
                self.snapshot(stats, now, link);
                self.served = want;
                link.served.store(want, Ordering::Release);
            }
        }
        self.update_due();
        action
    }

    fn snapshot(&mut self, stats: &JobStats, now: u64, link: &JobLink) {
        let usage = self.usage().since(self.usage0);
        let depth = self.current_depth();
        let Some(buf) = &mut self.snap_buf else {
            return;
        };
        buf.copy_from(stats);
        finalize(
            buf,
            Span {
                started: self.started,
                measured_from: self.measuring_from,
                until: now,
            },
            usage,
        );
        buf.latency_depth = depth;
        if let Some(live) = &self.first_byte {
            // A poisoned lock only means a sender panicked.
            let h = live.lock().unwrap_or_else(|e| e.into_inner());
            for (d, h) in buf.dir.iter_mut().zip(h.iter()) {
                if h.count() > 0 {
                    match &mut d.ttfb {
                        Some(own) => own.copy_from(h),
                        None => d.ttfb = Some(Box::new(h.clone())),
                    }
                }
            }
        }
        if let Ok(mut slot) = link.snapshot.lock() {
            if let Some(s) = slot.as_mut() {
                s.copy_from(buf);
            }
        }
    }

    /// The job's I/O is over at `now`: final log lines and flushes, then
    /// the time and CPU figures. Returns a log write error, if any.
    pub fn finish(
        &mut self,
        stats: &mut JobStats,
        now: u64,
        measured: bool,
    ) -> Result<(), LogError> {
        let r = match &mut self.logs {
            Some(l) => l.finish(
                now,
                [&stats.dir[0].clat, &stats.dir[1].clat, &stats.dir[2].clat],
                self.bs,
            ),
            None => Ok(()),
        };
        if !measured {
            stats.reset();
        }
        finalize(
            stats,
            Span {
                started: self.started,
                measured_from: self.measuring_from,
                until: now,
            },
            self.usage().since(self.usage0),
        );
        stats.latency_depth = self.current_depth();
        r
    }

    fn current_depth(&self) -> u32 {
        match &self.target {
            Some(t) => t.depth(),
            None => self.depth,
        }
    }
}
