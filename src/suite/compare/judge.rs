//! The verdicts of a comparison: per test and metric, an estimate of the
//! change with its confidence interval, and a verdict only when the
//! interval lies beyond the threshold.
//!
//! **Runs.** One result file is one run; a history run is one run. The
//! value of a run for a test is its figure (for quick/suite/sweep
//! results, the median of its measured passes). Passes inside a run are
//! taken back to back and share the run's state (the device's
//! temperature, its cache, the file's layout): they are not independent
//! samples of run-to-run noise, and serve only as the within-run spread.
//!
//! **Interval.** On the logarithms of the per-run values, the change is
//! the ratio of the two sides' geometric means, with Welch's interval
//! (1 − α, default 90 %: each end a one-sided 95 % bound, since each
//! verdict is a one-sided claim) when both sides have two runs or more. When one
//! side has a single run (a CI job's fresh run against the history's
//! runs of `main`), its noise is taken to be the other side's: the
//! interval for a new observation, with that side's degrees of freedom.
//! Tail latency (p99) is compared the same way, on each run's own p99,
//! with its own interval.
//!
//! **Verdict**, with T the threshold (default 5 %): a **regression** when
//! the whole interval is beyond T for the worse (below −T for bandwidth
//! and IOPS, above +T for latency), an **improvement** when it is beyond T
//! for the better, **no change** when it lies within ±T, and
//! **inconclusive** otherwise — also when neither side has two runs, in
//! which case it says how many runs a side would give an interval of ±T
//! at the spread observed (the runs' own spread when a side has several,
//! else the spread of the passes within the runs, which understates
//! run-to-run noise).

use crate::history::{Run, TestRun};
use crate::results::dataset::{MetricDef, METRICS};
use crate::results::stats::{self, Noise, RatioInterval};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    NoChange,
    Inconclusive,
    Improvement,
    Regression,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// As shown in the text report's first column.
    pub fn shown(self) -> &'static str {
        match self {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    /// Percent.
    pub threshold: f64,
    /// 1 − confidence.
    pub alpha: f64,
}

pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;
/// A 90 % interval: each of its ends is a one-sided 95 % bound, and a
/// verdict is a one-sided claim (worse than −T, or better than +T).
pub const DEFAULT_ALPHA: f64 = 0.10;

/// One metric of one test.
#[derive(Clone, Debug)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub metric: &'static MetricDef,
    pub base: Vec<f64>,
    pub new: Vec<f64>,
    /// The change of the geometric means (single runs: of the values).
    pub change: f64,
    pub interval: Option<RatioInterval>,
    pub verdict: Verdict,
    /// For an inconclusive row without an interval: runs a side that
    /// would give an interval of ±threshold at the observed spread (None:
    /// no spread observed), and that spread (sd of logs) with its source.
    pub needed: Option<Needed>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Needed {
    pub runs: Option<usize>,
    pub spread: f64,
    /// "runs" or "passes within runs".
    pub from: &'static str,
}

/// The verdict of an interval against the threshold.
pub fn verdict_of(metric: &MetricDef, iv: &RatioInterval, threshold_pct: f64) -> Verdict {
    let t = threshold_pct / 100.0;
    let (worse_lo, worse_hi) = if metric.higher_is_better {
        (-iv.hi, -iv.lo)
    } else {
        (iv.lo, iv.hi)
    };
    // worse_lo..worse_hi: how much worse, as an interval.
    if worse_lo > t {
        Verdict::Regression
    } else if worse_hi < -t {
        Verdict::Improvement
    } else if iv.lo >= -t && iv.hi <= t {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

/// One metric's row from the per-run values (and, for the runs-needed
/// estimate, each run's pass values).
pub fn judge(
    key: &str,
    label: &str,
    metric: &'static MetricDef,
    base: (&[f64], &[Vec<f64>]),
    new: (&[f64], &[Vec<f64>]),
    rules: Rules,
) -> Row {
    let interval = stats::ratio_interval(base.0, new.0, rules.alpha);
    let change = match &interval {
        Some(iv) => iv.change,
        None => stats::gmean(new.0) / stats::gmean(base.0) - 1.0,
    };
    let (verdict, needed) = match &interval {
        Some(iv) => (verdict_of(metric, iv, rules.threshold), None),
        None => {
            let groups: Vec<Vec<f64>> = base.1.iter().chain(new.1).cloned().collect();
            let needed = stats::pooled_log_sd(&groups).map(|sd| Needed {
                runs: stats::runs_needed(sd, rules.threshold / 100.0, rules.alpha),
                spread: sd,
                from: "passes within runs",
            });
            (Verdict::Inconclusive, needed)
        }
    };
    Row {
        key: key.to_string(),
        label: label.to_string(),
        metric,
        base: base.0.to_vec(),
        new: new.0.to_vec(),
        change,
        interval,
        verdict,
        needed,
    }
}

/// Each run's value of `metric` for `key`, and its pass values.
fn values(runs: &[Run], key: &str, metric: &MetricDef) -> (Vec<f64>, Vec<Vec<f64>>) {
    let tests: Vec<&TestRun> = runs.iter().filter_map(|r| r.test(key)).collect();
    let per_run = tests
        .iter()
        .map(|t| (metric.get)(&t.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let passes = tests
        .iter()
        .map(|t| t.passes.iter().map(metric.get).collect())
        .collect();
    (per_run, passes)
}

/// The tests of a side in first-seen order: (key, label).
pub fn test_keys(runs: &[Run]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in runs {
        for t in &r.tests {
            if !out.iter().any(|(k, _)| *k == t.key) {
                out.push((t.key.clone(), format!("{} {}", t.name, t.dir)));
            }
        }
    }
    out
}

/// Every row of the tests both sides have; and the tests found on one
/// side only.
///
/// The rules' confidence holds for the comparison as a whole: with `m`
/// metrics of tests compared, each interval is made at `alpha / m`
/// (Bonferroni), so that identical sides get any verdict at all with a
/// chance of at most `alpha`, however many tests and metrics there are.
pub fn compare(base: &[Run], new: &[Run], rules: Rules) -> (Vec<Row>, Vec<String>, Vec<String>) {
    let bk = test_keys(base);
    let nk = test_keys(new);
    let mut pairs = Vec::new();
    for (key, label) in &bk {
        if !nk.iter().any(|(k, _)| k == key) {
            continue;
        }
        for m in &METRICS {
            let (bv, bp) = values(base, key, m);
            let (nv, np) = values(new, key, m);
            if bv.is_empty() || nv.is_empty() {
                continue;
            }
            pairs.push((key, label, m, (bv, bp), (nv, np)));
        }
    }
    let each = Rules {
        alpha: rules.alpha / pairs.len().max(1) as f64,
        ..rules
    };
    let rows = pairs
        .iter()
        .map(|(key, label, m, (bv, bp), (nv, np))| judge(key, label, m, (bv, bp), (nv, np), each))
        .collect();
    let only_b = bk
        .iter()
        .filter(|(k, _)| !nk.iter().any(|(n, _)| n == k))
        .map(|(_, l)| l.clone())
        .collect();
    let only_n = nk
        .iter()
        .filter(|(k, _)| !bk.iter().any(|(b, _)| b == k))
        .map(|(_, l)| l.clone())
        .collect();
    (rows, only_b, only_n)
}

/// The row that decides a test's line: the worst verdict (regression,
/// improvement, inconclusive, no change), the first metric with it
/// (bandwidth, IOPS, mean latency, p99 latency).
pub fn decisive<'a>(rows: &[&'a Row]) -> Option<&'a Row> {
    let worst = rows.iter().map(|r| r.verdict).max()?;
    rows.iter().copied().find(|r| r.verdict == worst)
}

/// Where the noise came from, in words (None: both sides).
pub fn noise_note(rows: &[Row]) -> Option<&'static str> {
    match rows.iter().find_map(|r| r.interval.map(|i| i.noise)) {
        Some(Noise::BaseSide) => {
            Some("the new side has one run: its run-to-run noise is taken to be the base side's")
        }
        Some(Noise::NewSide) => {
            Some("the base side has one run: its run-to-run noise is taken to be the new side's")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules = Rules {
        threshold: 5.0,
        alpha: 0.05,
    };

    fn row(metric: usize, base: &[f64], new: &[f64]) -> Row {
        let none: Vec<Vec<f64>> = Vec::new();
        judge(
            "k",
            "k",
            &METRICS[metric],
            (base, &none),
            (new, &none),
            RULES,
        )
    }

    #[test]
    fn a_verdict_only_when_the_interval_clears_the_threshold() {
        let base = [1000.0, 1010.0, 990.0];
        assert_eq!(
            row(1, &base, &[500.0, 505.0, 495.0]).verdict,
            Verdict::Regression
        );
        assert_eq!(
            row(1, &[500.0, 505.0, 495.0], &base).verdict,
            Verdict::Improvement
        );
        assert_eq!(
            row(1, &base, &[1005.0, 995.0, 1002.0]).verdict,
            Verdict::NoChange
        );
        // Latency: higher is worse.
        assert_eq!(
            row(2, &[500.0, 505.0, 495.0], &base).verdict,
            Verdict::Regression
        );
        // Noisy runs: the interval straddles −5 %.
        let noisy = row(1, &[100.0, 300.0, 50.0], &[90.0, 250.0, 60.0]);
        assert_eq!(noisy.verdict, Verdict::Inconclusive);
        // A real −3 % change: inside ±5 %, no verdict of regression.
        let small = row(1, &base, &[970.0, 980.0, 960.0]);
        assert_ne!(small.verdict, Verdict::Regression);
    }

    #[test]
    fn single_runs_are_inconclusive_and_say_how_many_would_do() {
        let none: Vec<Vec<f64>> = Vec::new();
        let r = judge(
            "k",
            "k",
            &METRICS[1],
            (&[100.0], &none),
            (&[89.0], &none),
            RULES,
        );
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.interval.is_none() && r.needed.is_none());
        assert!((r.change + 0.11).abs() < 1e-9);
        let passes = vec![vec![100.0, 102.0, 98.0]];
        let newp = vec![vec![89.0, 90.0, 88.0]];
        let r = judge(
            "k",
            "k",
            &METRICS[1],
            (&[100.0], &passes),
            (&[89.0], &newp),
            RULES,
        );
        assert_eq!(r.verdict, Verdict::Inconclusive);
        let n = r.needed.unwrap();
        assert_eq!(n.from, "passes within runs");
        assert!(n.runs.unwrap() >= 2, "{n:?}");
    }

    #[test]
    fn the_decisive_row_is_the_worst() {
        let a = row(1, &[1000.0, 1010.0, 990.0], &[500.0, 505.0, 495.0]);
        let b = row(0, &[1000.0, 1010.0, 990.0], &[1000.0, 1010.0, 990.0]);
        assert_eq!(decisive(&[&b, &a]).unwrap().verdict, Verdict::Regression);
    }
}

/// Synthetic series: how often identical sides get a verdict, and how
/// often a real shift is found (figures reported by `cargo test -- --nocapture`).
#[cfg(test)]
mod synthetic {
    use super::*;

    /// SplitMix64 with Box–Muller: a reproducible normal sample.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.next(), self.next());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }

        /// `n` runs around `mean` with a relative spread `cv`.
        fn series(&mut self, n: usize, mean: f64, cv: f64) -> Vec<f64> {
            (0..n).map(|_| mean * (1.0 + cv * self.normal())).collect()
        }
    }

    /// Of `pairs` comparisons of IOPS, the share with each verdict.
    fn rates(seed: u64, pairs: usize, runs: (usize, usize), shift: f64, cv: f64) -> [f64; 4] {
        let mut rng = Rng(seed);
        let mut n = [0usize; 4];
        let none: Vec<Vec<f64>> = Vec::new();
        for _ in 0..pairs {
            let b = rng.series(runs.0, 10_000.0, cv);
            let a = rng.series(runs.1, 10_000.0 * (1.0 + shift), cv);
            let r = judge("k", "k", &METRICS[1], (&b, &none), (&a, &none), RULES);
            n[r.verdict as usize] += 1;
        }
        n.map(|c| c as f64 / pairs as f64)
    }

    const RULES: Rules = Rules {
        threshold: 5.0,
        alpha: DEFAULT_ALPHA,
    };
    const NO: usize = Verdict::NoChange as usize;
    const INC: usize = Verdict::Inconclusive as usize;
    const IMP: usize = Verdict::Improvement as usize;
    const REG: usize = Verdict::Regression as usize;

    #[test]
    fn identical_series_rarely_get_a_verdict() {
        for cv in [0.03, 0.05] {
            let r = rates(1, 100, (3, 3), 0.0, cv);
            eprintln!(
                "identical, 3 runs a side, {:.0}% noise: false verdicts {:.0}% (no change {:.0}%, inconclusive {:.0}%)",
                cv * 100.0,
                (r[REG] + r[IMP]) * 100.0,
                r[NO] * 100.0,
                r[INC] * 100.0
            );
            assert!(r[REG] + r[IMP] < 0.05, "cv {cv}: {r:?}");
        }
        // The CI gate: ten runs of main against one new run.
        let r = rates(2, 100, (10, 1), 0.0, 0.03);
        eprintln!(
            "identical, 10 runs against 1, 3% noise: false verdicts {:.0}%",
            (r[REG] + r[IMP]) * 100.0
        );
        assert!(r[REG] + r[IMP] < 0.05, "{r:?}");
        // A larger sample: the rate stays well under α.
        let r = rates(3, 10_000, (3, 3), 0.0, 0.03);
        eprintln!(
            "identical, 10,000 pairs, 3 runs a side, 3% noise: false verdicts {:.2}%",
            (r[REG] + r[IMP]) * 100.0
        );
        assert!(r[REG] + r[IMP] < 0.05, "{r:?}");
    }

    #[test]
    fn a_fifteen_percent_drop_is_found_with_three_runs_a_side() {
        let r = rates(4, 100, (3, 3), -0.15, 0.03);
        eprintln!(
            "-15% shift, 3 runs a side, 3% noise: detected {:.0}% (inconclusive {:.0}%)",
            r[REG] * 100.0,
            r[INC] * 100.0
        );
        assert!(r[REG] > 0.90, "{r:?}");
        assert_eq!(r[IMP], 0.0);
        let r = rates(5, 100, (3, 3), -0.15, 0.05);
        eprintln!(
            "-15% shift, 3 runs a side, 5% noise: detected {:.0}% (inconclusive {:.0}%)",
            r[REG] * 100.0,
            r[INC] * 100.0
        );
        let r = rates(6, 100, (10, 1), -0.15, 0.03);
        eprintln!(
            "-15% shift, 10 runs against 1, 3% noise: detected {:.0}%",
            r[REG] * 100.0
        );
        assert!(r[REG] > 0.90, "{r:?}");
    }
}
