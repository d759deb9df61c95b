//! Small statistics for repeated measurements: median and quartiles of a
//! few passes, and Welch's t-test for "is this change real or noise?".
//!
//! Written from the textbook definitions (Welch 1947; the Student t CDF
//! through the regularized incomplete beta function, evaluated by its
//! continued fraction with the modified Lentz method, and ln Γ by the
//! Lanczos approximation). Pure functions, no I/O.

/// Median, quartiles (linear interpolation between closest ranks, as
/// R's default type 7), min and max of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub sd: f64,
}

pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (h - lo as f64)
}

pub fn summarize(values: &[f64]) -> Summary {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Summary::default();
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Summary {
        n,
        median: quantile(&v, 0.5),
        q1: quantile(&v, 0.25),
        q3: quantile(&v, 0.75),
        min: v[0],
        max: v[n - 1],
        mean,
        sd,
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// Regularized incomplete beta I_x(a, b).
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Two-sided p-value of Student's t with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    if df <= 0.0 {
        return 1.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// Result of Welch's unequal-variance t-test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    pub p: f64,
}

/// Welch's t-test of the difference of means of `a` and `b` (each needs
/// at least two values; None otherwise).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let sa = summarize(a);
    let sb = summarize(b);
    let va = sa.sd * sa.sd / sa.n as f64;
    let vb = sb.sd * sb.sd / sb.n as f64;
    let diff = sb.mean - sa.mean;
    let se2 = va + vb;
    if se2 == 0.0 {
        // No spread at all: any difference is certain, none is none.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(diff)
        };
        return Some(Welch {
            t,
            df: (sa.n + sb.n - 2) as f64,
            p,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2
        / (va * va / (sa.n as f64 - 1.0) + vb * vb / (sb.n as f64 - 1.0)).max(f64::MIN_POSITIVE);
    Some(Welch {
        t,
        df,
        p: t_two_sided_p(t, df),
    })
}

/// Holm–Bonferroni adjusted p-values, in the input order: with the
/// p-values sorted ascending, the k-th (from 1) becomes
/// max over j ≤ k of min(1, (m − j + 1) · p(j)). Rejecting where the
/// adjusted value is below α bounds the family-wise error rate by α.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in idx.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// The two-sided critical value of Student's t: the t with
/// P(|T| > t) = `alpha` at `df` degrees of freedom (bisection on
/// [`t_two_sided_p`]).
pub fn t_critical(alpha: f64, df: f64) -> f64 {
    let valid = alpha > 0.0 && alpha < 1.0 && df > 0.0;
    if !valid {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_two_sided_p(hi, df) > alpha {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided_p(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Where the noise estimate of a [`RatioInterval`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Noise {
    /// Both sides' runs (Welch).
    BothSides,
    /// The base side's runs: the new side has one run, taken to vary as
    /// much as the base side's.
    BaseSide,
    /// The new side's runs (the base side has one).
    NewSide,
}

/// An interval on the relative change new/base − 1, from the per-run
/// values of each side on the log scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioInterval {
    /// exp(mean ln new − mean ln base) − 1: the change of the geometric
    /// means (0.1 = +10 %).
    pub change: f64,
    pub lo: f64,
    pub hi: f64,
    pub df: f64,
    pub noise: Noise,
}

/// The natural logarithms of the positive, finite values of `v`, in
/// their order.
fn logs(v: &[f64]) -> Vec<f64> {
    v.iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect()
}

/// The geometric mean of the positive values of `v` (NaN when there is
/// none): exp of the mean of their logarithms.
pub fn gmean(v: &[f64]) -> f64 {
    let l = logs(v);
    if l.is_empty() {
        f64::NAN
    } else {
        (l.iter().sum::<f64>() / l.len() as f64).exp()
    }
}

fn log_stats(v: &[f64]) -> Option<(usize, f64, f64)> {
    let l = logs(v);
    if l.is_empty() {
        return None;
    }
    let s = summarize(&l);
    Some((s.n, s.mean, s.sd))
}

/// The difference of the mean logarithms of `new` and `base` (per-run
/// values), with its standard error and degrees of freedom: Welch's when
/// both sides have at least two runs; when one side has a single run, its
/// noise is taken to be the other side's (the error of a new
/// observation, with that side's degrees of freedom). None when neither
/// side has two runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogDiff {
    /// mean ln new − mean ln base.
    pub d: f64,
    pub se: f64,
    pub df: f64,
    pub noise: Noise,
}

pub fn log_diff(base: &[f64], new: &[f64]) -> Option<LogDiff> {
    let (nb, mb, sb) = log_stats(base)?;
    let (nn, mn, sn) = log_stats(new)?;
    let d = mn - mb;
    let (se2, df, noise) = if nb >= 2 && nn >= 2 {
        let (vb, vn) = (sb * sb / nb as f64, sn * sn / nn as f64);
        let se2 = vb + vn;
        let df = if se2 > 0.0 {
            se2 * se2 / (vb * vb / (nb as f64 - 1.0) + vn * vn / (nn as f64 - 1.0))
        } else {
            (nb + nn - 2) as f64
        };
        (se2, df, Noise::BothSides)
    } else if nb >= 2 {
        (
            sb * sb * (1.0 / nb as f64 + 1.0 / nn as f64),
            (nb - 1) as f64,
            Noise::BaseSide,
        )
    } else if nn >= 2 {
        (
            sn * sn * (1.0 / nb as f64 + 1.0 / nn as f64),
            (nn - 1) as f64,
            Noise::NewSide,
        )
    } else {
        return None;
    };
    Some(LogDiff {
        d,
        se: se2.sqrt(),
        df,
        noise,
    })
}

impl LogDiff {
    /// The `1 − alpha` interval (each end a one-sided `alpha / 2` bound)
    /// as a relative change.
    pub fn interval(&self, alpha: f64) -> RatioInterval {
        let half = t_critical(alpha, self.df) * self.se;
        RatioInterval {
            change: self.d.exp() - 1.0,
            lo: (self.d - half).exp() - 1.0,
            hi: (self.d + half).exp() - 1.0,
            df: self.df,
            noise: self.noise,
        }
    }

    /// The one-sided p-value of "the change is above `bound`" (a relative
    /// change: 0.05 = +5 %) against the hypothesis that it is not.
    pub fn p_above(&self, bound: f64) -> f64 {
        one_sided_p((self.d - (1.0 + bound).ln()) / self.se, self.df)
    }

    /// The one-sided p-value of "the change is below `bound`".
    pub fn p_below(&self, bound: f64) -> f64 {
        one_sided_p(((1.0 + bound).ln() - self.d) / self.se, self.df)
    }
}

/// P(T ≥ t) for Student's t with `df` degrees of freedom; an infinite or
/// undefined t (no spread) is certain one way or the other.
pub fn one_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        // 0 / 0: the estimate sits on the bound with no spread.
        return 1.0;
    }
    let two = t_two_sided_p(t, df);
    if t > 0.0 {
        two / 2.0
    } else {
        1.0 - two / 2.0
    }
}

/// The `1 − alpha` confidence interval of the ratio of the geometric
/// means of `new` and `base` (per-run values, all positive), as a
/// relative change: [`log_diff`]'s interval.
pub fn ratio_interval(base: &[f64], new: &[f64], alpha: f64) -> Option<RatioInterval> {
    log_diff(base, new).map(|l| l.interval(alpha))
}

/// Runs per side for a `1 − alpha` interval whose half-width (on the
/// logarithms) is at most `margin` when runs vary by `sd` (standard
/// deviation of the logarithms): the smallest n ≥ 2 with
/// t(alpha, 2n − 2) · sd · √(2/n) ≤ margin. None past 1000.
pub fn runs_for_margin(sd: f64, margin: f64, alpha: f64) -> Option<usize> {
    if !(margin > 0.0 && sd.is_finite()) {
        return None;
    }
    // The half-width falls as n grows: a binary search.
    let fits = |n: usize| {
        let n_f = n as f64;
        t_critical(alpha, 2.0 * n_f - 2.0) * sd * (2.0 / n_f).sqrt() <= margin
    };
    if !fits(1000) {
        return None;
    }
    let (mut lo, mut hi) = (2usize, 1000usize);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Runs per side for a `1 − alpha` interval narrower than ±`target`
/// (relative, e.g. 0.05) when runs vary by `sd` (standard deviation of
/// the logarithms): the smallest n ≥ 2 with
/// t(alpha, 2n − 2) · sd · √(2/n) ≤ ln(1 + target). None past 1000 (or
/// without a target).
pub fn runs_needed(sd: f64, target: f64, alpha: f64) -> Option<usize> {
    let valid = target > 0.0 && sd.is_finite();
    if !valid {
        return None;
    }
    let goal = (1.0 + target).ln();
    (2..=1000).find(|&n| {
        let n_f = n as f64;
        t_critical(alpha, 2.0 * n_f - 2.0) * sd * (2.0 / n_f).sqrt() <= goal
    })
}

/// The standard deviation of the logarithms of values within groups
/// (each group's own mean taken out; pooled), e.g. of the passes inside
/// each run. None with no group of two.
pub fn pooled_log_sd(groups: &[Vec<f64>]) -> Option<f64> {
    let mut ss = 0.0;
    let mut df = 0usize;
    for g in groups {
        let l: Vec<f64> = g
            .iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln())
            .collect();
        if l.len() < 2 {
            continue;
        }
        let m = l.iter().sum::<f64>() / l.len() as f64;
        ss += l.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        df += l.len() - 1;
    }
    (df > 0).then(|| (ss / df as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn median_and_quartiles() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.q1, 2.0);
        assert_eq!(s.q3, 4.0);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        assert!(close(s.sd, 1.5811388, 1e-6));
        assert_eq!(summarize(&[1.0, 2.0]).median, 1.5);
        assert_eq!(summarize(&[]).n, 0);
    }

    #[test]
    fn gamma_matches_known_values() {
        assert!(close(ln_gamma(1.0), 0.0, 1e-12));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }

    #[test]
    fn t_distribution_tails() {
        // Critical values from standard t tables (two-sided 5%).
        assert!(close(t_two_sided_p(2.776, 4.0), 0.05, 5e-4));
        assert!(close(t_two_sided_p(12.706, 1.0), 0.05, 5e-4));
        assert!(close(t_two_sided_p(1.96, 1e6), 0.05, 5e-4));
        assert_eq!(t_two_sided_p(0.0, 3.0), 1.0);
    }

    #[test]
    fn critical_values_of_t() {
        // Standard t tables, two-sided 5 %.
        assert!(close(t_critical(0.05, 1.0), 12.706, 2e-3));
        assert!(close(t_critical(0.05, 4.0), 2.776, 1e-3));
        assert!(close(t_critical(0.05, 1e6), 1.960, 1e-3));
        assert!(close(t_critical(0.01, 10.0), 3.169, 1e-3));
    }

    #[test]
    fn intervals_of_the_ratio() {
        let base = [100.0, 102.0, 98.0];
        let half = [50.0, 51.0, 49.0];
        let r = ratio_interval(&base, &half, 0.05).unwrap();
        assert!(close(r.change, -0.5, 1e-3), "{r:?}");
        assert!(r.lo < r.change && r.change < r.hi && r.hi < -0.45, "{r:?}");
        assert_eq!(r.noise, Noise::BothSides);
        // One new run: the base side's noise, df = n − 1.
        let one = ratio_interval(&base, &[90.0], 0.05).unwrap();
        assert_eq!((one.noise, one.df), (Noise::BaseSide, 2.0));
        assert!(one.lo < -0.1 && one.hi > -0.1, "{one:?}");
        assert!(ratio_interval(&[1.0], &[2.0], 0.05).is_none());
        assert!(ratio_interval(&[0.0, -1.0], &[2.0, 3.0], 0.05).is_none());
    }

    #[test]
    fn runs_needed_grow_with_the_spread() {
        // 2 % spread, ±5 %: t(0.05, 4)·0.02·√(2/3) = 0.045 ≤ ln 1.05.
        assert_eq!(runs_needed(0.02, 0.05, 0.05), Some(3));
        assert!(runs_needed(0.05, 0.05, 0.05).unwrap() > 3);
        assert_eq!(runs_needed(0.0, 0.05, 0.05), Some(2));
        assert_eq!(runs_needed(1.0, 0.001, 0.05), None);
        let sd = pooled_log_sd(&[vec![1.0, 1.0], vec![2.0]]).unwrap();
        assert_eq!(sd, 0.0);
        assert!(pooled_log_sd(&[vec![1.0]]).is_none());
    }

    #[test]
    fn holm_adjustment() {
        // m = 4: 0.01·4 = 0.04, 0.02·3 = 0.06, 0.03·2 = 0.06, 0.5·1 = 0.5.
        let a = holm(&[0.03, 0.01, 0.5, 0.02]);
        let want = [0.06, 0.04, 0.5, 0.06];
        for (x, y) in a.iter().zip(want) {
            assert!(close(*x, y, 1e-12), "{a:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.2]), vec![0.2]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn welch_tells_a_shift_from_noise() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let same = [99.0, 101.0, 100.0, 98.5, 101.5];
        let half = [50.0, 51.0, 49.0, 50.5, 49.5];
        assert!(welch(&a, &same).unwrap().p > 0.5);
        let w = welch(&a, &half).unwrap();
        assert!(w.p < 1e-6 && w.t < 0.0, "{w:?}");
        // A textbook pair of samples: t ≈ 2.46, df ≈ 24.99, p ≈ 0.021.
        let x = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let y = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&x, &y).unwrap();
        assert!(close(w.t, 2.46, 0.01), "{w:?}");
        assert!(close(w.df, 24.99, 0.05), "{w:?}");
        assert!(close(w.p, 0.021, 0.002), "{w:?}");
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p, 0.0);
    }
}
