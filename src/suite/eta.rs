//! How long a multi-test command still runs: an estimate of every pass
//! not yet run, from what the job file says and what the passes already
//! run measured — handed to each pass's progress line as
//! `PassContext::after_s` (see `run::progress`).
//!
//! A pass's estimate is its I/O time plus its set-up:
//!
//! - **I/O**: a time-based test runs `ramp_time` + `runtime` (the
//!   warm-up's length for the warm-up pass), the longest of its clones.
//!   A test that runs until its size is done takes what an earlier pass
//!   of the same test took (the same bytes at the rate it measured), else
//!   its `runtime` limit when it has one, else the mean I/O time of the
//!   passes measured so far (nothing before the first).
//! - **Set-up**: the median, over the passes that laid out no file, of
//!   the pass's wall time less its I/O time (planning, opening, reports;
//!   the median, so that one pass slowed by a busy machine does not move
//!   the estimate of all the others); and
//!   for the pass that first uses a test file, laying it out: the file's
//!   size at the rate measured while earlier files were laid out (nothing
//!   before a first layout has been measured — the first pass that lays
//!   out a file runs before any line is drawn).
//!
//! Estimates are never negative; a measured pass replaces its estimate.

use std::path::PathBuf;

use crate::run::plan::Plan;

/// One pass of the command, as planned.
#[derive(Clone, Debug, PartialEq)]
pub struct PassPlan {
    /// Index of the test.
    pub test: usize,
    pub warmup: bool,
    /// I/O time of a time-based pass, seconds (None: size-based).
    pub io_s: Option<f64>,
    /// The `runtime` limit of a size-based pass, seconds (None: none).
    pub cap_s: Option<f64>,
    /// Bytes of test files this pass lays out first.
    pub layout_bytes: u64,
}

/// The command's passes, in order, and what the finished ones took.
#[derive(Clone, Debug, Default)]
pub struct Forecast {
    passes: Vec<PassPlan>,
    /// Per pass: wall time and I/O time, seconds, once it has run.
    measured: Vec<Option<(f64, f64)>>,
}

impl Forecast {
    pub fn new(passes: Vec<PassPlan>) -> Forecast {
        let measured = vec![None; passes.len()];
        Forecast { passes, measured }
    }

    /// The passes of `tests` (section names, in order), each a warm-up
    /// of `warmup_us` (when not 0) and `passes` measured passes, from the
    /// plan of the whole job file; `created` are the files the command
    /// creates (each laid out by the first pass of the first test that
    /// uses it).
    pub fn of_plan(
        plan: &Plan,
        tests: &[String],
        passes: u32,
        warmup_us: u64,
        created: &[PathBuf],
    ) -> Forecast {
        let mut laid: Vec<&PathBuf> = Vec::new();
        let mut out = Vec::new();
        for (ti, section) in tests.iter().enumerate() {
            let jobs: Vec<_> = plan
                .jobs
                .iter()
                .filter(|j| j.spec.name == *section)
                .collect();
            let mut layout_bytes = 0;
            for f in jobs.iter().flat_map(|j| &j.files) {
                if created.contains(&f.path) && !laid.contains(&&f.path) {
                    laid.push(&f.path);
                    layout_bytes += f.needed_size;
                }
            }
            let time_based = jobs
                .iter()
                .all(|j| j.spec.time.time_based && j.spec.time.runtime_us > 0);
            let longest = |runtime: Option<u64>| -> f64 {
                jobs.iter()
                    .map(|j| {
                        let t = &j.spec.time;
                        t.ramp_time_us + runtime.unwrap_or(t.runtime_us)
                    })
                    .max()
                    .unwrap_or(0) as f64
                    / 1e6
            };
            let warm = u32::from(warmup_us > 0);
            for k in 0..(warm + passes) {
                let warmup = k < warm;
                let runtime = warmup.then_some(warmup_us);
                let limit = longest(runtime);
                out.push(PassPlan {
                    test: ti,
                    warmup,
                    io_s: time_based.then_some(limit),
                    cap_s: (!time_based && limit > 0.0).then_some(limit),
                    layout_bytes: if k == 0 { layout_bytes } else { 0 },
                });
            }
        }
        Forecast::new(out)
    }

    /// How many passes the command runs.
    pub fn len(&self) -> usize {
        self.passes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }

    /// Pass `i` ran: `wall_s` from its preparation to its result, of which
    /// `io_s` doing I/O (its longest job, ramp included).
    pub fn record(&mut self, i: usize, wall_s: f64, io_s: f64) {
        if let Some(m) = self.measured.get_mut(i) {
            *m = Some((wall_s.max(0.0), io_s.max(0.0)));
        }
    }

    /// Estimated seconds of the passes after pass `i`.
    pub fn after(&self, i: usize) -> f64 {
        let setup = self.setup_s();
        let rate = self.layout_rate();
        (i + 1..self.passes.len())
            .map(|j| {
                let p = &self.passes[j];
                let layout = match rate {
                    Some(r) if p.layout_bytes > 0 => p.layout_bytes as f64 / r,
                    _ => 0.0,
                };
                self.io_s(j) + setup + layout
            })
            .sum::<f64>()
            .max(0.0)
    }

    /// Median set-up time of the measured passes that laid out nothing.
    fn setup_s(&self) -> f64 {
        let mut v: Vec<f64> = self
            .runs()
            .filter(|(p, _)| p.layout_bytes == 0)
            .map(|(_, (wall, io))| (wall - io).max(0.0))
            .collect();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    /// Bytes per second of the layouts measured so far.
    fn layout_rate(&self) -> Option<f64> {
        let setup = self.setup_s();
        let (bytes, secs) = self
            .runs()
            .filter(|(p, _)| p.layout_bytes > 0)
            .fold((0.0, 0.0), |(b, s), (p, (wall, io))| {
                (b + p.layout_bytes as f64, s + (wall - io - setup).max(0.0))
            });
        (bytes > 0.0 && secs > 0.0).then(|| bytes / secs)
    }

    /// Estimated I/O time of pass `j`.
    fn io_s(&self, j: usize) -> f64 {
        let p = &self.passes[j];
        if let Some(t) = p.io_s {
            return t;
        }
        // Size-based: the same test's earlier pass of the same kind, then
        // of either kind (capped by this pass's limit).
        let same = |kind: bool| {
            self.runs()
                .filter(|(q, _)| q.test == p.test && (!kind || q.warmup == p.warmup))
                .map(|(_, (_, io))| io)
                .last()
        };
        let cap = |t: f64| p.cap_s.map_or(t, |c| t.min(c));
        if let Some(t) = same(true).or_else(|| same(false)) {
            return cap(t);
        }
        if let Some(c) = p.cap_s {
            return c;
        }
        let ios: Vec<f64> = self.runs().map(|(_, (_, io))| io).collect();
        if ios.is_empty() {
            0.0
        } else {
            ios.iter().sum::<f64>() / ios.len() as f64
        }
    }

    fn runs(&self) -> impl Iterator<Item = (&PassPlan, (f64, f64))> {
        self.passes
            .iter()
            .zip(&self.measured)
            .filter_map(|(p, m)| m.map(|m| (p, m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(test: usize, warmup: bool, io_s: Option<f64>, layout_bytes: u64) -> PassPlan {
        PassPlan {
            test,
            warmup,
            io_s,
            cap_s: None,
            layout_bytes,
        }
    }

    #[test]
    fn time_based_passes_add_up_and_shrink() {
        // Two tests: a 1 s warm-up and two 2 s passes each.
        let mut v = Vec::new();
        for t in 0..2 {
            v.push(pass(t, true, Some(1.0), 0));
            v.push(pass(t, false, Some(2.0), 0));
            v.push(pass(t, false, Some(2.0), 0));
        }
        let mut f = Forecast::new(v);
        assert_eq!(f.len(), 6);
        assert_eq!(f.after(0), 2.0 + 2.0 + 1.0 + 2.0 + 2.0);
        assert_eq!(f.after(5), 0.0);
        // Each pass took 0.5 s more than its I/O: later passes too.
        f.record(0, 1.5, 1.0);
        assert_eq!(f.after(0), 9.0 + 5.0 * 0.5);
        assert!(f.after(1) < f.after(0));
        // One slow pass among quick ones does not move the set-up time.
        f.record(1, 2.5, 2.0);
        f.record(2, 7.0, 2.0);
        assert_eq!(f.after(2), 5.0 + 3.0 * 0.5);
    }

    #[test]
    fn layout_is_estimated_from_the_measured_rate() {
        let mib = 1u64 << 20;
        let mut f = Forecast::new(vec![
            pass(0, false, Some(1.0), 100 * mib),
            pass(0, false, Some(1.0), 0),
            pass(1, false, Some(1.0), 200 * mib),
        ]);
        // Before a layout is measured it is not guessed.
        assert_eq!(f.after(0), 2.0);
        // 100 MiB laid out in 1 s (2 s wall, 1 s of I/O, no set-up known).
        f.record(0, 2.0, 1.0);
        assert!((f.after(0) - (2.0 + 2.0)).abs() < 1e-9, "{}", f.after(0));
        // A pass without layout shows 0.25 s of set-up: the layout took 0.75 s.
        f.record(1, 1.25, 1.0);
        let rate = 100.0 * mib as f64 / 0.75;
        let want = 1.0 + 0.25 + 200.0 * mib as f64 / rate;
        assert!((f.after(1) - want).abs() < 1e-9, "{} {want}", f.after(1));
    }

    #[test]
    fn size_based_passes_take_what_the_test_took_before() {
        let mut f = Forecast::new(vec![
            pass(0, false, None, 0),
            pass(0, false, None, 0),
            PassPlan {
                cap_s: Some(3.0),
                ..pass(1, false, None, 0)
            },
        ]);
        // Nothing measured: the limit where there is one.
        assert_eq!(f.after(0), 0.0 + 3.0);
        f.record(0, 5.0, 5.0);
        // The same test's pass: 5 s; the other test: its limit.
        assert_eq!(f.after(0), 5.0 + 3.0);
        assert!(f.after(1) >= 0.0);
    }
}
