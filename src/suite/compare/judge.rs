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
    /// For an inconclusive row: runs a side that would settle it (None
    /// inside: more than 1000), and the spread (sd of logs) it assumes
    /// with its source. None when no spread was measured.
    pub needed: Option<Needed>,
    /// The two-sided α the interval was made at (the step of Holm's
    /// procedure that judged it).
    pub level: f64,
    /// IOPS of a fixed-block test: the same quantity as its bandwidth,
    /// judged once with it.
    pub same_as_bandwidth: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Needed {
    pub runs: Option<usize>,
    pub spread: f64,
    /// "runs" or "passes within runs".
    pub from: &'static str,
    /// Settles as: "no change" (an interval inside ±threshold) or the
    /// verdict the estimate points to.
    pub towards: Verdict,
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
/// estimate, each run's pass values), judged alone at the rules' α.
pub fn judge(
    key: &str,
    label: &str,
    metric: &'static MetricDef,
    base: (&[f64], &[Vec<f64>]),
    new: (&[f64], &[Vec<f64>]),
    rules: Rules,
) -> Row {
    let mut r = unjudged(key, label, metric, base, new);
    settle(&mut r, rules, rules.alpha, base.1, new.1);
    r
}

/// A row with its estimate and no verdict yet.
fn unjudged(
    key: &str,
    label: &str,
    metric: &'static MetricDef,
    base: (&[f64], &[Vec<f64>]),
    new: (&[f64], &[Vec<f64>]),
) -> Row {
    Row {
        key: key.to_string(),
        label: label.to_string(),
        metric,
        base: base.0.to_vec(),
        new: new.0.to_vec(),
        change: stats::gmean(new.0) / stats::gmean(base.0) - 1.0,
        interval: None,
        verdict: Verdict::Inconclusive,
        needed: None,
        level: f64::NAN,
        same_as_bandwidth: false,
    }
}

/// The row's p-value for "a change beyond ±threshold" (two-sided: twice
/// the smaller one-sided value, so that rejecting at α is the interval of
/// 1 − α clearing the threshold). 1 without an interval.
fn p_change(r: &Row, rules: Rules) -> f64 {
    let t = rules.threshold / 100.0;
    match stats::log_diff(&r.base, &r.new) {
        Some(l) => (2.0 * l.p_above(t).min(l.p_below(-t))).min(1.0),
        None => 1.0,
    }
}

/// Makes the row's interval at two-sided `level`, its verdict, and for an
/// inconclusive row the runs a side that would settle it.
fn settle(
    r: &mut Row,
    rules: Rules,
    level: f64,
    base_passes: &[Vec<f64>],
    new_passes: &[Vec<f64>],
) {
    r.level = level;
    let t = rules.threshold / 100.0;
    let diff = stats::log_diff(&r.base, &r.new);
    r.interval = diff.map(|l| l.interval(level));
    if let Some(iv) = &r.interval {
        r.change = iv.change;
        r.verdict = verdict_of(r.metric, iv, rules.threshold);
    }
    if r.verdict != Verdict::Inconclusive {
        return;
    }
    // The spread: the runs' own when a side has two or more, else the
    // passes within the runs (which understates run-to-run noise).
    let runs: Vec<Vec<f64>> = [&r.base, &r.new]
        .into_iter()
        .filter(|v| v.len() >= 2)
        .cloned()
        .collect();
    let (spread, from) = match stats::pooled_log_sd(&runs) {
        Some(sd) => (Some(sd), "runs"),
        None => {
            let groups: Vec<Vec<f64>> = base_passes.iter().chain(new_passes).cloned().collect();
            (stats::pooled_log_sd(&groups), "passes within runs")
        }
    };
    let Some(sd) = spread else {
        return;
    };
    // At the change observed: an interval clear of the nearer bound of
    // ±threshold on the side the estimate lies (inside: "no change"; beyond:
    // the verdict it points to).
    let d = r.change.max(-0.999_999).ln_1p();
    let (up, down) = ((1.0 + t).ln(), (1.0 - t).ln());
    let (margin, towards) = if d >= up || d <= down {
        let margin = if d >= up { d - up } else { down - d };
        let worse = (d > 0.0) != r.metric.higher_is_better;
        let v = if worse {
            Verdict::Regression
        } else {
            Verdict::Improvement
        };
        (margin, v)
    } else {
        ((up - d).min(d - down), Verdict::NoChange)
    };
    r.needed = Some(Needed {
        runs: stats::runs_for_margin(sd, margin, level),
        spread: sd,
        from,
        towards,
    });
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

/// Whether the IOPS and bandwidth of a test are one quantity: every
/// run of both sides moved the same bytes per I/O (a fixed block size),
/// so that their ratios of new to base are the same number.
fn fixed_block(base: &[Run], new: &[Run], key: &str) -> bool {
    let per_io: Vec<f64> = base
        .iter()
        .chain(new)
        .filter_map(|r| r.test(key))
        .map(|t| t.value.bw_bytes / t.value.iops)
        .collect();
    let Some(first) = per_io.first().copied() else {
        return false;
    };
    first.is_finite()
        && first > 0.0
        && per_io
            .iter()
            .all(|v| v.is_finite() && (v / first - 1.0).abs() < 1e-3)
}

/// Every row of the tests both sides have; and the tests found on one
/// side only.
///
/// The rules' confidence holds for the comparison as a whole: identical
/// sides get a regression or an improvement anywhere with a chance of at
/// most `alpha`, however many tests and metrics there are. The quantities
/// compared are each test's bandwidth (with its IOPS when the block size
/// is fixed: one quantity), IOPS otherwise, mean and p99 latency; each has
/// the p-value of a change beyond ±threshold, and Holm's step-down
/// procedure tests them: the smallest at `alpha / m`, the next at
/// `alpha / (m − 1)`, …, until one fails. The rows it rejects get their
/// interval at their step's level and a verdict; the others get their
/// interval at `alpha / (number left)`, simultaneous with Holm's
/// decisions (Strassburger and Bretz, 2008), and "no change" only when it
/// lies within ±threshold.
pub fn compare(base: &[Run], new: &[Run], rules: Rules) -> (Vec<Row>, Vec<String>, Vec<String>) {
    let bk = test_keys(base);
    let nk = test_keys(new);
    let mut rows = Vec::new();
    let mut passes = Vec::new();
    for (key, label) in &bk {
        if !nk.iter().any(|(k, _)| k == key) {
            continue;
        }
        let one = fixed_block(base, new, key);
        for m in &METRICS {
            let (bv, bp) = values(base, key, m);
            let (nv, np) = values(new, key, m);
            if bv.is_empty() || nv.is_empty() {
                continue;
            }
            let mut r = unjudged(key, label, m, (&bv, &bp), (&nv, &np));
            r.same_as_bandwidth = one && m.key == "iops";
            rows.push(r);
            passes.push((bp, np));
        }
    }
    // The family: one hypothesis per quantity with an interval.
    let family: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            !rows[i].same_as_bandwidth && stats::log_diff(&rows[i].base, &rows[i].new).is_some()
        })
        .collect();
    let m = family.len().max(1);
    let mut order: Vec<(usize, f64)> = family
        .iter()
        .map(|&i| (i, p_change(&rows[i], rules)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut level = vec![rules.alpha / m as f64; rows.len()];
    let mut step = 0;
    while step < order.len() {
        let at = rules.alpha / (m - step) as f64;
        if order[step].1 >= at {
            break;
        }
        level[order[step].0] = at;
        step += 1;
    }
    let left = (m - step).max(1);
    for &(i, _) in &order[step..] {
        level[i] = rules.alpha / left as f64;
    }
    for (i, r) in rows.iter_mut().enumerate() {
        if r.same_as_bandwidth {
            continue;
        }
        settle(r, rules, level[i], &passes[i].0, &passes[i].1);
        let rejected = order[..step].iter().any(|&(j, _)| j == i);
        if !rejected && matches!(r.verdict, Verdict::Regression | Verdict::Improvement) {
            // Rounding at the boundary: not rejected, no claim.
            r.verdict = Verdict::Inconclusive;
        }
    }
    // IOPS of a fixed-block test: its bandwidth's level and verdict.
    for i in 0..rows.len() {
        if !rows[i].same_as_bandwidth {
            continue;
        }
        let Some(bw) = rows
            .iter()
            .position(|b| b.key == rows[i].key && b.metric.key == "bw_bytes")
        else {
            rows[i].same_as_bandwidth = false;
            let lv = rules.alpha / m as f64;
            let (bp, np) = passes[i].clone();
            settle(&mut rows[i], rules, lv, &bp, &np);
            continue;
        };
        let (lv, verdict) = (rows[bw].level, rows[bw].verdict);
        let (bp, np) = passes[i].clone();
        settle(&mut rows[i], rules, lv, &bp, &np);
        rows[i].verdict = verdict;
        if verdict != Verdict::Inconclusive {
            rows[i].needed = None;
        }
    }
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

/// The number of quantities judged together (the size of Holm's family).
pub fn family_size(rows: &[Row]) -> usize {
    rows.iter()
        .filter(|r| !r.same_as_bandwidth && r.interval.is_some())
        .count()
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

    /// SplitMix64 with Box–Muller: a reproducible normal sample (also
    /// the `family` simulation's).
    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        pub(super) fn normal(&mut self) -> f64 {
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

/// A whole quick comparison, simulated: 8 tests × 4 metrics, 3 runs a
/// side, judged as before (every metric its own interval at α / 32,
/// Bonferroni) and now (Holm over the quantities, a fixed-block test's
/// IOPS and bandwidth one). Figures by `cargo test -- --nocapture`.
#[cfg(test)]
mod family {
    use super::*;
    use crate::history::TestRun;
    use crate::results::dataset::Metrics;

    use super::synthetic::Rng;

    const TESTS: [(&str, f64, f64); 8] = [
        ("seq1m-q8t1-read", 1048576.0, 2.0e9),
        ("seq1m-q8t1-write", 1048576.0, 1.5e9),
        ("seq1m-q1t1-read", 1048576.0, 1.2e9),
        ("seq1m-q1t1-write", 1048576.0, 1.0e9),
        ("rnd4k-q32t1-read", 4096.0, 4.0e8),
        ("rnd4k-q32t1-write", 4096.0, 3.0e8),
        ("rnd4k-q1t1-read", 4096.0, 4.0e7),
        ("rnd4k-q1t1-write", 4096.0, 1.2e8),
    ];

    /// One run: every test's bandwidth with noise `cv` (IOPS follows: a
    /// fixed block), mean latency its inverse with a little more noise,
    /// p99 with its own noise of 2 × cv; test 0 scaled by `shift`.
    fn run(rng: &mut Rng, cv: f64, shift: f64) -> Run {
        let tests = TESTS
            .iter()
            .enumerate()
            .map(|(i, (name, bs, bw))| {
                let f = if i == 0 { 1.0 + shift } else { 1.0 };
                let bw = bw * f * (cv * rng.normal()).exp();
                let iops = bw / bs;
                let lat = 1e9 / iops * (0.5 * cv * rng.normal()).exp();
                let p99 = 3.0 * lat * (2.0 * cv * rng.normal()).exp();
                let m = Metrics {
                    bw_bytes: bw,
                    iops,
                    lat_mean_ns: lat,
                    lat_p99_ns: p99,
                    sync_write: false,
                };
                let (n, d) = name.rsplit_once('-').unwrap();
                TestRun {
                    key: format!("{n}/{d}"),
                    name: n.into(),
                    dir: d.into(),
                    value: m,
                    passes: vec![m],
                    ..TestRun::default()
                }
            })
            .collect();
        Run {
            tests,
            ..Run::default()
        }
    }

    /// The old way: each row alone at α / rows.
    fn bonferroni(base: &[Run], new: &[Run], rules: Rules) -> Vec<Row> {
        let mut rows = Vec::new();
        for (key, label) in test_keys(base) {
            for m in &METRICS {
                let (bv, bp) = values(base, &key, m);
                let (nv, np) = values(new, &key, m);
                rows.push((key.clone(), label.clone(), m, bv, bp, nv, np));
            }
        }
        let each = Rules {
            alpha: rules.alpha / rows.len() as f64,
            ..rules
        };
        rows.iter()
            .map(|(k, l, m, bv, bp, nv, np)| judge(k, l, m, (bv, bp), (nv, np), each))
            .collect()
    }

    /// Of `n` comparisons: the share where test 0 is a regression, and the
    /// share with any regression or improvement elsewhere (false).
    fn rates(old: bool, seed: u64, n: usize, cv: f64, shift: f64) -> (f64, f64) {
        let mut rng = Rng(seed);
        let rules = Rules {
            threshold: DEFAULT_THRESHOLD_PCT,
            alpha: DEFAULT_ALPHA,
        };
        let (mut found, mut false_v) = (0, 0);
        for _ in 0..n {
            let b: Vec<Run> = (0..3).map(|_| run(&mut rng, cv, 0.0)).collect();
            let a: Vec<Run> = (0..3).map(|_| run(&mut rng, cv, shift)).collect();
            let rows = if old {
                bonferroni(&b, &a, rules)
            } else {
                compare(&b, &a, rules).0
            };
            let first = &rows[0].key;
            let t0: Vec<&Row> = rows.iter().filter(|r| &r.key == first).collect();
            if decisive(&t0).map(|r| r.verdict) == Some(Verdict::Regression) {
                found += 1;
            }
            let lo = if shift == 0.0 { 0 } else { 1 };
            let wrong = rows.iter().any(|r| {
                TESTS[lo..].iter().any(|(t, _, _)| {
                    let (nm, d) = t.rsplit_once('-').unwrap();
                    r.key == format!("{nm}/{d}")
                }) && matches!(r.verdict, Verdict::Regression | Verdict::Improvement)
            });
            if wrong {
                false_v += 1;
            }
        }
        (found as f64 / n as f64, false_v as f64 / n as f64)
    }

    #[test]
    fn holm_finds_more_with_no_more_false_verdicts() {
        for cv in [0.02, 0.03, 0.05] {
            let (old_found, _) = rates(true, 11, 200, cv, -0.15);
            let (new_found, _) = rates(false, 11, 200, cv, -0.15);
            let (_, old_false) = rates(true, 12, 200, cv, 0.0);
            let (_, new_false) = rates(false, 12, 200, cv, 0.0);
            eprintln!(
                "quick, 3 runs a side, {:.0}% noise: -15% on one test found {:.1}% before \
                 (Bonferroni, 32 intervals) and {:.1}% now (Holm, 24 quantities); noise only: \
                 false verdicts {:.2}% before, {:.2}% now (200 comparisons each)",
                cv * 100.0,
                old_found * 100.0,
                new_found * 100.0,
                old_false * 100.0,
                new_false * 100.0
            );
            assert!(new_found >= old_found, "cv {cv}: {new_found} < {old_found}");
            assert!(new_false <= DEFAULT_ALPHA, "cv {cv}: {new_false}");
        }
        // With 3 % noise, strictly more often than before (23 % → 32.5 %
        // with these seeds).
        let (old_found, _) = rates(true, 13, 200, 0.03, -0.15);
        let (found, _) = rates(false, 13, 200, 0.03, -0.15);
        assert!(found > old_found, "{found} <= {old_found}");
    }

    #[test]
    fn every_inconclusive_row_says_how_many_runs_would_settle_it() {
        let mut rng = Rng(21);
        let rules = Rules {
            threshold: DEFAULT_THRESHOLD_PCT,
            alpha: DEFAULT_ALPHA,
        };
        let b: Vec<Run> = (0..3).map(|_| run(&mut rng, 0.06, 0.0)).collect();
        let a: Vec<Run> = (0..3).map(|_| run(&mut rng, 0.06, -0.08)).collect();
        let (rows, _, _) = compare(&b, &a, rules);
        let open: Vec<&Row> = rows
            .iter()
            .filter(|r| r.verdict == Verdict::Inconclusive)
            .collect();
        assert!(!open.is_empty());
        for r in open {
            let n = r.needed.as_ref().unwrap_or_else(|| panic!("{r:?}"));
            assert_eq!(n.from, "runs", "{r:?}");
        }
        // IOPS of these fixed-block tests: one quantity with bandwidth.
        assert!(rows
            .iter()
            .filter(|r| r.metric.key == "iops")
            .all(|r| r.same_as_bandwidth));
        assert_eq!(family_size(&rows), 24);
    }
}
