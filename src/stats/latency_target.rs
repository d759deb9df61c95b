//! `latency_target`: searching for the deepest queue that keeps latency
//! under a target.
//!
//! The job starts at depth 1. Every `latency_window` the share of I/Os
//! whose total latency stayed within the target is compared with
//! `latency_percentile`. A good window raises the depth (doubling until the
//! first bad window, then bisecting towards the lowest depth known to be
//! bad); a bad window bisects down (in-flight I/O is drained first). With
//! `latency_percentile=100` a single slow I/O ends the window as bad at
//! once, and at depth 1 it fails the job (the target cannot be met).
//!
//! Without `latency_run` the search stops when the depth no longer
//! changes: statistics are reset, one more window runs at that depth, and
//! the job ends; with `latency_run` it keeps adjusting for the whole run.
//!
//! The worker asks this controller what to do; it issues no I/O itself.

use crate::job::spec::JobSpec;

/// What the worker must do after an I/O or a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    /// Change the queue depth; drain in-flight I/O first when `quiesce`.
    Depth {
        depth: u32,
        quiesce: bool,
        reset: bool,
    },
    /// The search is over (no `latency_run`): end the job.
    Done,
    /// The target cannot be met even at depth 1.
    Fail {
        lat_ns: u64,
        target_ns: u64,
    },
}

#[derive(Clone, Debug)]
pub struct LatencyTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_running: bool,
    max_depth: u32,
    depth: u32,
    low: u32,
    high: u32,
    window_start: u64,
    ios: u64,
    failed: u64,
    last_window: bool,
}

impl LatencyTarget {
    /// `None` when the job sets no target. `max_depth` is the job's
    /// `iodepth` (1 for synchronous engines).
    pub fn new(spec: &JobSpec, max_depth: u32) -> Option<LatencyTarget> {
        let st = &spec.stat;
        if st.latency_target_us == 0 {
            return None;
        }
        let max_depth = max_depth.max(1);
        Some(LatencyTarget {
            target_ns: st.latency_target_us * 1000,
            window_ns: st.latency_window_us * 1000,
            percentile: st.latency_percentile,
            keep_running: st.latency_run,
            max_depth,
            depth: 1,
            low: 1,
            high: max_depth,
            window_start: 0,
            ios: 0,
            failed: 0,
            last_window: false,
        })
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn start(&mut self, now: u64) {
        self.new_window(now);
    }

    fn new_window(&mut self, now: u64) {
        self.window_start = now;
        self.ios = 0;
        self.failed = 0;
    }

    /// When the current window ends (ns).
    pub fn next_due(&self) -> u64 {
        self.window_start.saturating_add(self.window_ns)
    }

    /// Accounts one I/O's total latency.
    #[inline]
    pub fn io(&mut self, now: u64, lat_ns: u64) -> Step {
        self.ios += 1;
        if lat_ns <= self.target_ns {
            return Step::Continue;
        }
        if self.percentile >= 100.0 {
            if self.depth == 1 {
                return Step::Fail {
                    lat_ns,
                    target_ns: self.target_ns,
                };
            }
            return self.failed_window(now);
        }
        self.failed += 1;
        Step::Continue
    }

    /// Ends the window if it is over.
    pub fn tick(&mut self, now: u64) -> Step {
        if now < self.next_due() || self.ios == 0 {
            return Step::Continue;
        }
        let ok = (self.ios - self.failed) as f64 * 100.0 / self.ios as f64;
        if ok >= self.percentile {
            self.good_window(now)
        } else if self.depth == 1 {
            self.new_window(now);
            Step::Continue
        } else {
            self.failed_window(now)
        }
    }

    fn failed_window(&mut self, now: u64) -> Step {
        self.high = self.depth;
        if self.depth == self.low {
            self.low = (self.low - 1).max(1);
        }
        self.depth = ((self.depth + self.low) / 2).max(1);
        self.last_window = false;
        self.new_window(now);
        Step::Depth {
            depth: self.depth,
            quiesce: true,
            reset: false,
        }
    }

    fn good_window(&mut self, now: u64) -> Step {
        let before = self.depth;
        self.low = self.depth;
        self.depth = if self.high != self.max_depth {
            (self.depth + self.high) / 2
        } else {
            self.depth.saturating_mul(2)
        }
        .clamp(1, self.max_depth);
        self.new_window(now);
        if !self.keep_running && self.depth == before {
            if self.last_window {
                return Step::Done;
            }
            self.last_window = true;
            return Step::Depth {
                depth: self.depth,
                quiesce: false,
                reset: true,
            };
        }
        Step::Depth {
            depth: self.depth,
            quiesce: false,
            reset: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(pct: f64, run: bool, depth: u32) -> LatencyTarget {
        let mut s = JobSpec::default();
        s.stat.latency_target_us = 100;
        s.stat.latency_window_us = 1000;
        s.stat.latency_percentile = pct;
        s.stat.latency_run = run;
        let mut t = LatencyTarget::new(&s, depth).unwrap();
        t.start(0);
        t
    }

    /// Runs windows where latency is fine up to depth `ok_upto`.
    fn settle(t: &mut LatencyTarget, ok_upto: u32) -> (u32, bool) {
        let mut now = 0;
        for _ in 0..100 {
            for _ in 0..10 {
                let lat = if t.depth() <= ok_upto {
                    50_000
                } else {
                    500_000
                };
                if let Step::Fail { .. } = t.io(now, lat) {
                    return (t.depth(), false);
                }
            }
            now += 1_000_000;
            if t.tick(now) == Step::Done {
                return (t.depth(), true);
            }
        }
        (t.depth(), false)
    }

    #[test]
    fn finds_the_deepest_good_depth() {
        let mut t = target(99.0, false, 64);
        assert_eq!(settle(&mut t, 12), (12, true));
        let mut t = target(99.0, false, 64);
        assert_eq!(settle(&mut t, 64), (64, true));
        let mut t = target(100.0, false, 64);
        assert_eq!(settle(&mut t, 5), (5, true));
    }

    #[test]
    fn depth_one_failure_is_fatal_at_100_percent() {
        let mut t = target(100.0, false, 8);
        assert!(matches!(t.io(0, 1_000_000), Step::Fail { .. }));
    }

    #[test]
    fn latency_run_keeps_going() {
        let mut t = target(99.0, true, 16);
        let (d, done) = settle(&mut t, 16);
        assert!(!done);
        assert_eq!(d, 16);
    }
}
