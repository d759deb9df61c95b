//! Steady-state detection (`steadystate`, `ss_dur`, `ss_ramp`).
//!
//! Once per second, after `ss_ramp`, the monitor turns each job's running
//! byte and I/O counters into a bandwidth (bytes/s) and IOPS sample and
//! keeps the last `ss_dur` seconds of them. When the window is full the
//! criterion is evaluated:
//! - `iops` / `bw`: the largest distance of a sample from the window's
//!   mean (as a percentage of the mean when the limit has `%`);
//! - `iops_slope` / `bw_slope`: the least-squares slope of the samples per
//!   second (as a percentage of the mean when the limit has `%`).
//!
//! The criterion is attained when that figure is below the limit; the job
//! (with `group_reporting`, every job of its group) is then asked to stop.
//!
//! This module decides; stopping is the worker's business.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::wire::f64_bits;
use crate::job::spec::SteadyState;

/// How a `SteadyState` goes on the wire (the job language's type stays
/// free of serialization).
#[derive(Serialize, Deserialize)]
#[serde(remote = "SteadyState")]
enum SteadyStateWire {
    Iops {
        #[serde(with = "f64_bits")]
        limit: f64,
        percent: bool,
    },
    IopsSlope {
        #[serde(with = "f64_bits")]
        limit: f64,
        percent: bool,
    },
    Bw {
        #[serde(with = "f64_bits")]
        limit: f64,
        percent: bool,
    },
    BwSlope {
        #[serde(with = "f64_bits")]
        limit: f64,
        percent: bool,
    },
}

/// The outcome reported in the `steadystate` JSON object and text line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyResult {
    #[serde(with = "SteadyStateWire")]
    pub spec: SteadyState,
    pub duration_s: u64,
    pub attained: bool,
    /// The evaluated figure (percent when the limit is a percentage).
    #[serde(with = "f64_bits")]
    pub criterion: f64,
    #[serde(with = "f64_bits")]
    pub max_deviation: f64,
    #[serde(with = "f64_bits")]
    pub slope: f64,
    pub bw_mean: u64,
    pub iops_mean: u64,
    /// Samples in the window, oldest first (bytes/s and I/O per s).
    pub bw: Vec<u64>,
    pub iops: Vec<u64>,
}

impl SteadyResult {
    /// (criterion name, limit, is a percentage, is a slope, uses IOPS)
    pub fn parts(&self) -> (&'static str, f64, bool, bool, bool) {
        match self.spec {
            SteadyState::Iops { limit, percent } => ("iops", limit, percent, false, true),
            SteadyState::IopsSlope { limit, percent } => ("iops_slope", limit, percent, true, true),
            SteadyState::Bw { limit, percent } => ("bw", limit, percent, false, false),
            SteadyState::BwSlope { limit, percent } => ("bw_slope", limit, percent, true, false),
        }
    }

    /// The `ss` text: `iops:5.000000%`.
    pub fn spec_text(&self) -> String {
        let (name, limit, pct, _, _) = self.parts();
        format!("{name}:{limit:.6}{}", if pct { "%" } else { "" })
    }

    /// The criterion as text: `4.745655%`.
    pub fn criterion_text(&self) -> String {
        let (_, _, pct, _, _) = self.parts();
        format!("{:.6}{}", self.criterion, if pct { "%" } else { "" })
    }
}

/// Rolling window and evaluation for one job or group.
#[derive(Clone, Debug)]
pub struct SteadyTracker {
    dur: usize,
    ramp_ns: u64,
    bw: VecDeque<u64>,
    iops: VecDeque<u64>,
    prev: Option<(u64, u64, u64)>,
    result: SteadyResult,
}

impl SteadyTracker {
    pub fn new(spec: SteadyState, dur_us: u64, ramp_us: u64) -> SteadyTracker {
        let dur = (dur_us / 1_000_000).max(1) as usize;
        SteadyTracker {
            dur,
            ramp_ns: ramp_us * 1000,
            bw: VecDeque::with_capacity(dur + 1),
            iops: VecDeque::with_capacity(dur + 1),
            prev: None,
            result: SteadyResult {
                spec,
                duration_s: dur_us / 1_000_000,
                attained: false,
                criterion: 0.0,
                max_deviation: 0.0,
                slope: 0.0,
                bw_mean: 0,
                iops_mean: 0,
                bw: Vec::new(),
                iops: Vec::new(),
            },
        }
    }

    pub fn attained(&self) -> bool {
        self.result.attained
    }

    pub fn result(&self) -> SteadyResult {
        self.result.clone()
    }

    /// Feeds the counters at `t_ns` since the job started (called about
    /// once per second). Returns true when the criterion is attained.
    pub fn sample(&mut self, t_ns: u64, bytes: u64, ios: u64) -> bool {
        if self.result.attained {
            return true;
        }
        if t_ns < self.ramp_ns {
            return false;
        }
        let Some((pt, pb, pi)) = self.prev.replace((t_ns, bytes, ios)) else {
            return false;
        };
        let ms = ((t_ns - pt) / 1_000_000).max(1);
        self.bw.push_back(bytes.saturating_sub(pb) * 1000 / ms);
        self.iops.push_back(ios.saturating_sub(pi) * 1000 / ms);
        if self.bw.len() > self.dur {
            self.bw.pop_front();
            self.iops.pop_front();
        }
        self.evaluate();
        self.result.attained
    }

    fn evaluate(&mut self) {
        let r = &mut self.result;
        r.bw = self.bw.iter().copied().collect();
        r.iops = self.iops.iter().copied().collect();
        let n = r.bw.len() as u64;
        if n == 0 {
            return;
        }
        r.bw_mean = r.bw.iter().sum::<u64>() / n;
        r.iops_mean = r.iops.iter().sum::<u64>() / n;
        if (n as usize) < self.dur {
            return;
        }
        let (_, limit, pct, slope, use_iops) = r.parts();
        let ys: &[u64] = if use_iops { &r.iops } else { &r.bw };
        let mean = ys.iter().map(|v| *v as f64).sum::<f64>() / ys.len() as f64;
        let figure = if slope {
            r.slope = least_squares_slope(ys);
            r.slope
        } else {
            r.max_deviation = ys
                .iter()
                .map(|v| (*v as f64 - mean).abs())
                .fold(0.0, f64::max);
            r.max_deviation
        };
        r.criterion = if pct {
            if mean > 0.0 {
                figure * 100.0 / mean
            } else {
                0.0
            }
        } else {
            figure
        };
        r.attained = r.criterion.abs() < limit;
    }
}

/// Steady-state checks for a whole run, driven by the run's monitor
/// thread about every 20 ms. Each job with `steadystate` is checked on its
/// own, except that jobs of a `group_reporting` group are checked together
/// (their rates summed) and stopped together.
#[derive(Debug, Default)]
pub struct SteadyMonitor {
    units: Vec<Unit>,
}

#[derive(Debug)]
struct Unit {
    members: Vec<usize>,
    tracker: SteadyTracker,
    started: Option<std::time::Instant>,
    next: Option<std::time::Instant>,
    stopped: bool,
}

/// A job as the monitor sees it: its steady-state settings (criterion,
/// `ss_dur` and `ss_ramp` in µs), its group, and whether the group merges
/// its jobs (`group_reporting`).
pub type MonitoredJob = (Option<(SteadyState, u64, u64)>, u32, bool);

/// What the monitor knows of a job at a tick.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobCounters {
    pub started: bool,
    pub finished: bool,
    pub bytes: u64,
    pub ios: u64,
}

impl SteadyMonitor {
    /// `jobs` lists, in run order, each job's steady-state settings and
    /// reporting group (with whether the group merges its jobs).
    pub fn new(jobs: &[MonitoredJob]) -> SteadyMonitor {
        let mut units: Vec<Unit> = Vec::new();
        for (i, (ss, group, grouped)) in jobs.iter().enumerate() {
            let Some((spec, dur, ramp)) = ss else {
                continue;
            };
            if *grouped {
                let same = units.iter_mut().find(|u| {
                    u.members
                        .first()
                        .is_some_and(|m| jobs[*m].1 == *group && jobs[*m].2)
                });
                if let Some(u) = same {
                    u.members.push(i);
                    continue;
                }
            }
            units.push(Unit {
                members: vec![i],
                tracker: SteadyTracker::new(*spec, *dur, *ramp),
                started: None,
                next: None,
                stopped: false,
            });
        }
        SteadyMonitor { units }
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Samples the units whose second is up; returns the jobs to stop.
    pub fn tick(
        &mut self,
        now: std::time::Instant,
        counters: impl Fn(usize) -> JobCounters,
    ) -> Vec<usize> {
        let mut stop = Vec::new();
        let second = std::time::Duration::from_secs(1);
        for u in &mut self.units {
            if u.stopped {
                continue;
            }
            let c: Vec<JobCounters> = u.members.iter().map(|m| counters(*m)).collect();
            if u.started.is_none() {
                if !c.iter().any(|c| c.started) {
                    continue;
                }
                u.started = Some(now);
                u.next = Some(now);
            }
            if c.iter().all(|c| c.finished) {
                u.stopped = true;
                continue;
            }
            let (Some(start), Some(next)) = (u.started, u.next) else {
                continue;
            };
            if now < next {
                continue;
            }
            u.next = Some(next + second);
            let bytes = c.iter().map(|c| c.bytes).sum();
            let ios = c.iter().map(|c| c.ios).sum();
            let t = now.duration_since(start).as_nanos() as u64;
            if u.tracker.sample(t, bytes, ios) {
                u.stopped = true;
                stop.extend(u.members.iter().copied());
            }
        }
        stop
    }

    /// The result to report for job `i`, if it has steady state set.
    pub fn result_for(&self, i: usize) -> Option<SteadyResult> {
        self.units
            .iter()
            .find(|u| u.members.contains(&i))
            .map(|u| u.tracker.result())
    }
}

/// Slope of the least-squares line through (i, ys[i]).
pub fn least_squares_slope(ys: &[u64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let sum_x: f64 = (0..ys.len()).map(|i| i as f64).sum();
    let sum_x2: f64 = (0..ys.len()).map(|i| (i * i) as f64).sum();
    let sum_y: f64 = ys.iter().map(|v| *v as f64).sum();
    let sum_xy: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, v)| i as f64 * *v as f64)
        .sum();
    (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviation_criterion() {
        let spec = SteadyState::Iops {
            limit: 5.0,
            percent: true,
        };
        let mut t = SteadyTracker::new(spec, 3_000_000, 0);
        let mut ios = 0;
        let mut bytes = 0;
        let mut attained = false;
        for (s, rate) in [1000u64, 1000, 2000, 1000, 1010, 1020].iter().enumerate() {
            attained = t.sample(s as u64 * 1_000_000_000, bytes, ios);
            ios += rate;
            bytes += rate * 4096;
        }
        assert!(!attained);
        attained = t.sample(6_000_000_000, bytes, ios);
        assert!(attained);
        let r = t.result();
        assert_eq!(r.iops, vec![1000, 1010, 1020]);
        assert_eq!(r.iops_mean, 1010);
        assert!((r.max_deviation - 10.0).abs() < 1e-9);
        assert_eq!(r.spec_text(), "iops:5.000000%");
        assert_eq!(r.criterion_text(), format!("{:.6}%", 10.0 * 100.0 / 1010.0));
    }

    #[test]
    fn slope_criterion() {
        assert!((least_squares_slope(&[1, 2, 3, 4]) - 1.0).abs() < 1e-12);
        assert_eq!(least_squares_slope(&[5, 5, 5]), 0.0);
        let spec = SteadyState::BwSlope {
            limit: 10.0,
            percent: false,
        };
        let mut t = SteadyTracker::new(spec, 2_000_000, 1_000_000);
        // Before the ramp ends nothing counts.
        assert!(!t.sample(500_000_000, 0, 0));
        assert!(!t.sample(1_000_000_000, 0, 0));
        assert!(!t.sample(2_000_000_000, 1000, 1));
        assert!(t.sample(3_000_000_000, 2005, 2));
        assert!((t.result().slope - 5.0).abs() < 1e-9);
    }
}
