//! A job's phases and deadlines, and its loops and passes.
//!
//! Time: after `startdelay` the job begins; it measures from the end of
//! `ramp_time` (every clone of a batch at the same instant, whenever it
//! noticed), and its runtime ends `runtime` after that. It stops early
//! when it fails, fills its device, is asked to (latency target found,
//! steady state, `exitall`, a signal) or reaches its deadline.
//!
//! Work: `loops` loops of up to `size` (or `io_size`) bytes, each read
//! back when verified; a verified write job then goes on in rounds (write,
//! read back) until it wrote its size; other jobs take extra passes until
//! `io_size` is done. A time-based job goes round until the deadline.
//! Each new loop starts the files over and drops their cached pages.

use std::sync::atomic::Ordering;

use super::queue::IoQueue;
use super::{state, PassEnd, Worker};
use crate::job::spec::TimeOpts;
use crate::workload::rng::Rng;

/// The job's deadlines and whether it is measuring (see the module docs).
#[derive(Debug)]
pub(super) struct Phase {
    /// Past the ramp: statistics count.
    pub measuring: bool,
    ramp_end_ns: u64,
    /// End of the runtime (`u64::MAX`: none).
    end_ns: u64,
    /// When measuring started.
    measure_start_ns: u64,
    /// The job was asked to end (latency target found, steady state).
    stop_asked: bool,
}

impl Phase {
    pub fn new() -> Phase {
        Phase {
            measuring: false,
            ramp_end_ns: 0,
            end_ns: u64::MAX,
            measure_start_ns: 0,
            stop_asked: false,
        }
    }

    /// The job begins at `begin`: the ramp and the runtime count from
    /// there (the runtime after the ramp).
    pub fn begin(&mut self, begin: u64, t: &TimeOpts) {
        self.ramp_end_ns = begin + t.ramp_time_us * 1000;
        self.end_ns = if t.runtime_us > 0 {
            self.ramp_end_ns + t.runtime_us * 1000
        } else {
            u64::MAX
        };
        self.measure_start_ns = begin;
    }

    /// Measuring starts now (`from`).
    pub fn measure_from(&mut self, from: u64) {
        self.measuring = true;
        self.measure_start_ns = from;
    }

    /// The ramp is over at `now` and measuring has not started yet.
    #[inline]
    pub fn ramp_over(&self, now: u64) -> bool {
        !self.measuring && now >= self.ramp_end_ns
    }

    /// When measuring starts for a clone that noticed the end of the ramp
    /// at `now`: the batch's shared instant (a fake clock has none).
    pub fn ramp_end(&self, now: u64, fake: bool) -> u64 {
        if fake {
            now
        } else {
            self.ramp_end_ns.min(now)
        }
    }

    /// The runtime is over, or the job was asked to end.
    #[inline]
    pub fn over(&self, now: u64) -> bool {
        now >= self.end_ns || self.stop_asked
    }

    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }

    pub fn measure_start_ns(&self) -> u64 {
        self.measure_start_ns
    }

    /// Asks the job to end (latency target found, steady state).
    pub fn stop(&mut self) {
        self.stop_asked = true;
    }
}

/// `startdelay` (µs): a fixed delay, or one drawn from its range with the
/// job's seed; `None` without one.
pub(super) fn start_delay_us(t: &TimeOpts, seed: u64) -> Option<u64> {
    let (lo, hi) = t.startdelay_us;
    if hi == 0 {
        return None;
    }
    Some(if hi > lo {
        lo + Rng::stream(seed, 5).below(hi - lo + 1)
    } else {
        lo
    })
}

impl Worker<'_> {
    /// Starts the timed phase: every clone of the batch counts from the
    /// gate's one start (`shared_start`), whenever it got a CPU after it;
    /// waits out `startdelay`, sets the deadlines, and starts measuring
    /// unless there is a ramp. Returns the Unix time (ms) I/O started.
    pub(super) fn start_io(&mut self, shared_start: u64) -> u64 {
        let spec = &self.job.spec;
        // A fake clock has no common time base.
        let t0 = if self.clock.is_fake() {
            self.clock.now()
        } else {
            shared_start
        };
        let mut begin = t0;
        if let Some(delay) = start_delay_us(&spec.time, self.job.seed) {
            begin = t0 + delay * 1000;
            self.clock.sleep_until(begin);
            if self.clock.is_fake() {
                begin = self.clock.now();
            }
        }
        let late_ns = self.clock.now().saturating_sub(begin);
        let start_unix_ms = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            .saturating_sub(late_ns))
            / 1_000_000;
        self.phase.begin(begin, &spec.time);
        self.pace.start(begin);
        if let Some(v) = self.vfy.as_deref_mut() {
            v.start(begin);
        }
        // stats hook: the timed phase starts (see stats::live::timed_phase).
        crate::stats::live::set_timed_phase(true);
        self.rec.begin(t0, self.phase.end_ns());
        if spec.time.ramp_time_us == 0 {
            self.phase.measure_from(begin);
            // Nothing to clear: keeps what setup measured (file-op opens).
            let clock = &mut self.clock;
            self.rec
                .start_measuring(&mut self.stats, begin, &mut || clock.now(), false);
            self.progress.state.store(state::RUNNING, Ordering::Relaxed);
        } else {
            self.progress.state.store(state::RAMP, Ordering::Relaxed);
        }
        start_unix_ms
    }

    /// Measuring starts at the end of the ramp, for every clone of the
    /// batch at the same instant, whenever this one noticed it (`now`):
    /// what completed between the two is left out.
    pub(super) fn end_ramp(&mut self, now: u64, q: &mut IoQueue) {
        q.restart_side();
        let from = self.phase.ramp_end(now, self.clock.is_fake());
        self.phase.measure_from(from);
        let clock = &mut self.clock;
        self.rec
            .start_measuring(&mut self.stats, from, &mut || clock.now(), true);
        self.progress.state.store(state::RUNNING, Ordering::Relaxed);
    }

    /// The job must stop issuing I/O.
    #[inline]
    pub(super) fn stopping(&self, now: u64) -> bool {
        self.err.ended()
            || self.phase.over(now)
            || self.shared.stop.load(Ordering::Relaxed)
            || self.progress.link.stop_requested()
    }

    /// Sleeps until `t` in slices, so a stop request is seen within half
    /// a second. Returns false when stopping.
    pub(super) fn wait_until(&mut self, t: u64) -> bool {
        self.stamp = None;
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

    /// The job's loops and passes (see the module docs).
    pub(super) fn run_loops(&mut self, q: &mut IoQueue) {
        self.workload.start_loop();
        self.workload.file_events().clear();
        if self.job.spec.time.time_based {
            return self.time_based_loops(q);
        }
        if !self.counted_loops(q) {
            return;
        }
        let dry_run = self.vfy.as_deref().is_some_and(|v| v.dry_run());
        let reads_back = self.vfy.as_deref().is_some_and(|v| v.reads_back());
        if !reads_back {
            // Extra passes would overwrite blocks before they are read back.
            self.extra_passes(q);
        } else if !dry_run {
            self.verify_rounds(q);
        }
    }

    /// Runs a pass; whether it ended by itself having issued something
    /// (so another is worth starting).
    fn pass_did_io(&mut self, q: &mut IoQueue) -> bool {
        let before = self.workload.issued_bytes();
        self.run_pass(q) == PassEnd::Done && self.workload.issued_bytes() != before
    }

    /// A new loop: the files start over, their cached pages dropped.
    fn next_loop(&mut self, q: &mut IoQueue) {
        self.workload.start_loop();
        q.restart_prio();
        self.file_events(q);
        self.invalidate(q);
    }

    /// Loops until the deadline, as fio does.
    fn time_based_loops(&mut self, q: &mut IoQueue) {
        while self.pass_did_io(q) {
            self.next_loop(q);
        }
    }

    /// `loops` loops, each read back when verified (`do_verify`); false
    /// when the job stopped.
    fn counted_loops(&mut self, q: &mut IoQueue) -> bool {
        let spec = &self.job.spec;
        let dry_run = self.vfy.as_deref().is_some_and(|v| v.dry_run());
        for l in 0..spec.io.loops.max(1) {
            if l > 0 {
                if spec.file.unlink_each_loop {
                    self.recreate_files(q);
                    if self.err.failed() {
                        return false;
                    }
                }
                self.next_loop(q);
            }
            let end = if dry_run {
                self.dry_run_pass()
            } else {
                self.run_pass(q)
            };
            if end == PassEnd::Stopped {
                return false;
            }
            self.read_back(q);
        }
        true
    }

    /// As fio does, a verified write job goes on looping (write, then
    /// read back) until what it wrote and read reaches its size (or
    /// `io_size`): a region with holes takes several loops.
    fn verify_rounds(&mut self, q: &mut IoQueue) {
        let target = self.job.limits.bytes;
        while self.done.bytes[0] + self.done.bytes[1] < target && !self.err.failed() {
            self.workload.start_verify_round();
            q.restart_prio();
            self.file_events(q);
            if !self.pass_did_io(q) {
                return;
            }
            self.read_back(q);
        }
    }

    /// Extra passes until `io_size` is done.
    fn extra_passes(&mut self, q: &mut IoQueue) {
        while self.workload.wants_extra_pass() {
            self.workload.start_extra_pass();
            self.file_events(q);
            if !self.pass_did_io(q) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(ramp_s: u64, runtime_s: u64) -> TimeOpts {
        let mut t = crate::job::JobSpec::default().time;
        t.ramp_time_us = ramp_s * 1_000_000;
        t.runtime_us = runtime_s * 1_000_000;
        t
    }

    #[test]
    fn the_runtime_counts_from_the_end_of_the_ramp() {
        let mut p = Phase::new();
        p.begin(1_000, &times(2, 3));
        assert!(!p.ramp_over(1_000 + 1_999_999_999));
        assert!(p.ramp_over(1_000 + 2_000_000_000));
        assert!(!p.over(1_000 + 4_999_999_999));
        assert!(p.over(1_000 + 5_000_000_000));
        assert_eq!(p.end_ns(), 1_000 + 5_000_000_000);
        // Until measuring starts, it counts from the beginning.
        assert_eq!(p.measure_start_ns(), 1_000);
    }

    #[test]
    fn without_a_runtime_only_a_stop_ends_the_job() {
        let mut p = Phase::new();
        p.begin(0, &times(0, 0));
        assert!(!p.over(u64::MAX - 1));
        p.stop();
        assert!(p.over(0));
    }

    #[test]
    fn a_late_clone_measures_from_the_shared_end_of_the_ramp() {
        let mut p = Phase::new();
        p.begin(0, &times(1, 1));
        assert_eq!(p.ramp_end(1_500_000_000, false), 1_000_000_000);
        // A fake clock has no shared instant.
        assert_eq!(p.ramp_end(1_500_000_000, true), 1_500_000_000);
        p.measure_from(1_000_000_000);
        assert!(p.measuring && !p.ramp_over(2_000_000_000));
        assert_eq!(p.measure_start_ns(), 1_000_000_000);
    }

    #[test]
    fn startdelay_is_fixed_or_drawn_from_its_range_by_seed() {
        let mut t = times(0, 0);
        assert_eq!(start_delay_us(&t, 1), None);
        t.startdelay_us = (500, 500);
        assert_eq!(start_delay_us(&t, 1), Some(500));
        t.startdelay_us = (100, 200);
        let d = start_delay_us(&t, 7).unwrap();
        assert!((100..=200).contains(&d), "{d}");
        assert_eq!(start_delay_us(&t, 7), Some(d));
    }
}
