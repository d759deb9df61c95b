//! Latency histogram with fio's log-linear layout: values below 128 ns get
//! one bucket each; above that, every power of two is split into 64 equal
//! buckets, over 29 groups (so the top bucket starts near 17.2 s). A
//! percentile is reported as the midpoint of the bucket it falls in, which
//! keeps iomark's percentiles and json+ `bins` comparable with fio's.
//!
//! Recording is a handful of integer operations and no allocation; merging
//! is a bucket-wise sum, exact across clones, jobs and groups.
//!
//! Serialized (for results sent between hosts, `stats::wire`), a histogram
//! is its summary and its non-zero buckets as `[index, count]` pairs in
//! index order; reading one back refuses indexes out of range or out of
//! order, so a decoded histogram is exactly the one written.

use serde::{Deserialize, Serialize};

/// Bits of linear resolution per power of two.
pub const BITS: u32 = 6;
/// Buckets per group.
pub const PER_GROUP: usize = 1 << BITS;
/// Number of groups.
pub const GROUPS: usize = 29;
/// Total number of buckets.
pub const NR: usize = GROUPS * PER_GROUP;

/// Bucket index for a value (ns).
#[inline]
pub fn bucket_of(v: u64) -> usize {
    if v < (2 * PER_GROUP) as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - BITS;
    let idx = (shift as usize + 1) * PER_GROUP + ((v >> shift) as usize & (PER_GROUP - 1));
    idx.min(NR - 1)
}

/// Representative value (midpoint) of a bucket.
pub fn bucket_value(idx: usize) -> u64 {
    if idx < 2 * PER_GROUP {
        return idx as u64;
    }
    let shift = (idx / PER_GROUP - 1) as u32;
    let within = (idx % PER_GROUP) as f64;
    let base = 1u64 << (shift + BITS);
    base + ((within + 0.5) * (1u64 << shift) as f64) as u64
}

/// Smallest value of a bucket; `bucket_start(idx + 1)` ends it
/// (`bucket_start(NR)` ends the last one).
pub fn bucket_start(idx: usize) -> u64 {
    if idx < 2 * PER_GROUP {
        return idx as u64;
    }
    let shift = (idx / PER_GROUP - 1) as u32;
    let within = (idx % PER_GROUP) as u64;
    (1u64 << (shift + BITS)) + (within << shift)
}

/// Running min/max/mean/stddev of samples; exact and mergeable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub sum: u128,
    pub sumsq: u128,
}

impl Summary {
    #[inline]
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.n += 1;
        self.sum += v as u128;
        self.sumsq += (v as u128) * (v as u128);
    }

    pub fn merge(&mut self, o: &Summary) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 || o.min < self.min {
            self.min = o.min;
        }
        self.max = self.max.max(o.max);
        self.n += o.n;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Sample standard deviation (n - 1 in the denominator), as fio.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as u128;
        // n*sumsq - sum^2 is exact in u128 for any realistic run.
        let num = n
            .saturating_mul(self.sumsq)
            .saturating_sub(self.sum * self.sum);
        (num as f64 / (self.n as f64 * (self.n - 1) as f64)).sqrt()
    }
}

/// A latency histogram plus its summary statistics.
///
/// One that holds nothing may hold no buckets at all (as decoded from a
/// result of another host, or merged from such): it reads as zeros and
/// gets its buckets when something is added. Workers record into
/// histograms made by [`Histogram::new`], whose buckets exist from the
/// start, so recording never allocates.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "SparseHistogram")]
pub struct Histogram {
    /// `NR` buckets, or none while every count is 0.
    buckets: Box<[u64]>,
    pub summary: Summary,
}

/// The buckets of a histogram that holds none.
static ZEROS: [u64; NR] = [0; NR];

impl PartialEq for Histogram {
    fn eq(&self, o: &Histogram) -> bool {
        self.summary == o.summary && self.buckets() == o.buckets()
    }
}

impl Eq for Histogram {}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            buckets: vec![0u64; NR].into_boxed_slice(),
            summary: Summary::default(),
        }
    }

    /// A histogram that holds nothing and no buckets yet (see the type's
    /// documentation).
    pub fn empty() -> Self {
        Histogram {
            buckets: Box::new([]),
            summary: Summary::default(),
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.summary.add(v);
        let i = bucket_of(v);
        match self.buckets.get_mut(i) {
            Some(b) => *b += 1,
            None => self.grown()[i] += 1,
        }
    }

    /// The buckets, made when there were none.
    #[cold]
    fn grown(&mut self) -> &mut [u64] {
        if self.buckets.is_empty() {
            self.buckets = vec![0u64; NR].into_boxed_slice();
        }
        &mut self.buckets
    }

    pub fn count(&self) -> u64 {
        self.summary.n
    }

    pub fn merge(&mut self, o: &Histogram) {
        if !o.buckets.is_empty() {
            for (a, b) in self.grown().iter_mut().zip(o.buckets.iter()) {
                *a += *b;
            }
        }
        self.summary.merge(&o.summary);
    }

    /// Every bucket's count (`NR` of them).
    pub fn buckets(&self) -> &[u64] {
        if self.buckets.is_empty() {
            &ZEROS
        } else {
            &self.buckets
        }
    }

    /// Adds raw bucket counts (used when reading fio json+ `bins`).
    pub fn add_to_bucket(&mut self, idx: usize, count: u64) {
        if idx < NR && count > 0 {
            self.grown()[idx] += count;
        }
    }

    /// Copies `o` into `self` without allocating (status snapshots; both
    /// made by [`Histogram::new`]).
    pub fn copy_from(&mut self, o: &Histogram) {
        if self.buckets.len() == o.buckets.len() {
            self.buckets.copy_from_slice(&o.buckets);
        } else {
            self.buckets = o.buckets.clone();
        }
        self.summary = o.summary;
    }

    /// Clears all counts, keeping the allocation.
    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = 0);
        self.summary = Summary::default();
    }

    /// Percentile values for a sorted list of percentiles: for each, the
    /// midpoint of the first bucket where the running count reaches
    /// `p / 100 * N` (N being the sum of the buckets). The comparison is
    /// exact (rational arithmetic on the percentile's binary value), so
    /// the chosen bucket never depends on floating-point rounding.
    pub fn percentiles(&self, list: &[f64]) -> Vec<u64> {
        let total: u64 = self.buckets.iter().sum();
        let buckets = self.buckets();
        let mut out = vec![0u64; list.len()];
        if total == 0 || list.is_empty() {
            return out;
        }
        let targets: Vec<Threshold> = list.iter().map(|p| Threshold::new(*p, total)).collect();
        let mut j = 0;
        let mut cum = 0u64;
        for (i, &c) in buckets.iter().enumerate() {
            cum += c;
            while j < list.len() && targets[j].reached(cum) {
                out[j] = bucket_value(i);
                j += 1;
            }
            if j == list.len() {
                break;
            }
        }
        // A percentile that is never reached (only possible above 100)
        // takes the top bucket.
        if j < list.len() {
            let top = self.buckets.iter().rposition(|&c| c > 0).unwrap_or(0);
            for o in &mut out[j..] {
                *o = bucket_value(top);
            }
        }
        out
    }

    /// Non-empty buckets as (midpoint value, count): json+ `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (bucket_value(i), *c))
    }
}

/// A histogram as it is serialized: the summary and the non-zero
/// buckets, `(index, count)` in index order.
#[derive(Deserialize)]
struct SparseHistogram {
    summary: Summary,
    bins: Vec<(usize, u64)>,
}

/// A stored histogram that cannot be this build's (a bucket out of range).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadHistogram(pub String);

impl From<String> for BadHistogram {
    fn from(why: String) -> Self {
        BadHistogram(why)
    }
}

impl TryFrom<SparseHistogram> for Histogram {
    type Error = BadHistogram;

    fn try_from(w: SparseHistogram) -> Result<Histogram, BadHistogram> {
        // Nothing recorded: no buckets (see the type's documentation).
        let mut h = if w.bins.is_empty() {
            Histogram::empty()
        } else {
            Histogram::new()
        };
        let mut next = 0;
        for (idx, count) in w.bins {
            if idx >= NR {
                return Err(format!("histogram bucket {idx} out of range (0..{NR})").into());
            }
            if idx < next {
                return Err(format!("histogram bucket {idx} repeated or out of order").into());
            }
            h.buckets[idx] = count;
            next = idx + 1;
        }
        h.summary = w.summary;
        Ok(h)
    }
}

impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        /// The non-zero buckets as `[index, count]` pairs.
        struct Bins<'a>(&'a [u64]);
        impl Serialize for Bins<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(
                    self.0
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| **c > 0)
                        .map(|(i, c)| (i, *c)),
                )
            }
        }
        let mut st = s.serialize_struct("Histogram", 2)?;
        st.serialize_field("summary", &self.summary)?;
        st.serialize_field("bins", &Bins(&self.buckets))?;
        st.end()
    }
}

/// "The running count has reached `p` percent of `total`", decided
/// exactly: `p` is split into an integer mantissa and a power of two, and
/// `count * 100 >= p * total` is compared in 128-bit integers.
#[derive(Clone, Copy, Debug)]
struct Threshold {
    /// count * lhs_mul << lhs_shift  >=  rhs  <=>  reached
    lhs_shift: u32,
    rhs: u128,
    /// Fallback when the integers would overflow.
    approx: Option<f64>,
}

impl Threshold {
    fn new(p: f64, total: u64) -> Threshold {
        let approx = Some(p / 100.0 * total as f64);
        if !p.is_finite() || p <= 0.0 {
            return Threshold {
                lhs_shift: 0,
                rhs: 0,
                approx: None,
            };
        }
        let bits = p.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (mut m, mut e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), exp - 1075)
        };
        while m & 1 == 0 {
            m >>= 1;
            e += 1;
        }
        // count*100 * 2^-e >= m * total   (e < 0)
        // count*100 >= m * total * 2^e     (e >= 0)
        let mt = m as u128 * total as u128;
        if e >= 0 {
            match mt.checked_shl(e as u32).filter(|v| v >> e == mt) {
                Some(rhs) => Threshold {
                    lhs_shift: 0,
                    rhs,
                    approx: None,
                },
                None => Threshold {
                    lhs_shift: 0,
                    rhs: 0,
                    approx,
                },
            }
        } else if -e <= 60 {
            Threshold {
                lhs_shift: (-e) as u32,
                rhs: mt,
                approx: None,
            }
        } else {
            Threshold {
                lhs_shift: 0,
                rhs: 0,
                approx,
            }
        }
    }

    #[inline]
    fn reached(&self, count: u64) -> bool {
        if let Some(x) = self.approx {
            return count as f64 >= x;
        }
        // count*100 < 2^71 and the shift is at most 60: fits in u128 as
        // long as count < 2^57.
        let lhs = (count as u128 * 100) << self.lhs_shift;
        lhs >= self.rhs
    }
}

/// Index of the bucket whose midpoint is `v` (json+ `bins` keys), if any.
pub fn bucket_of_midpoint(v: u64) -> Option<usize> {
    let idx = bucket_of(v);
    (bucket_value(idx) == v).then_some(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_monotonic() {
        let mut last = 0;
        for v in 0..200_000u64 {
            let b = bucket_of(v);
            assert!(b == last || b == last + 1, "gap at {v}");
            last = b;
        }
        assert_eq!(bucket_of(127), 127);
        assert_eq!(bucket_of(128), 128);
        assert_eq!(bucket_of(u64::MAX), NR - 1);
    }

    #[test]
    fn bucket_starts_bound_their_buckets() {
        for idx in 0..NR - 1 {
            let (lo, hi) = (bucket_start(idx), bucket_start(idx + 1));
            assert_eq!(bucket_of(lo), idx, "start of {idx}");
            assert_eq!(bucket_of(hi - 1), idx, "end of {idx}");
            assert!(lo <= bucket_value(idx) && bucket_value(idx) < hi);
        }
        assert_eq!(bucket_start(NR), 1 << 34);
    }

    #[test]
    fn midpoints_sit_inside_their_buckets() {
        for idx in 0..NR - 1 {
            let v = bucket_value(idx);
            assert_eq!(bucket_of(v), idx, "midpoint of {idx} is {v}");
        }
        // Relative error of a midpoint stays under 1/128.
        for v in [1_000u64, 24_266, 1_000_000, 54_510_695, 9_000_000_000] {
            let m = bucket_value(bucket_of(v)) as f64;
            assert!((m - v as f64).abs() / (v as f64) < 1.0 / 64.0);
        }
    }

    #[test]
    fn percentiles_use_bucket_midpoints() {
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        let p = h.percentiles(&[50.0, 99.0, 100.0]);
        assert_eq!(p[0], bucket_value(bucket_of(50_000)));
        assert_eq!(p[1], bucket_value(bucket_of(99_000)));
        assert_eq!(p[2], bucket_value(bucket_of(100_000)));
        assert_eq!(h.summary.min, 1000);
        assert_eq!(h.summary.max, 100_000);
        assert!((h.summary.mean() - 50_500.0).abs() < 1e-9);
    }

    #[test]
    fn merge_equals_single_histogram() {
        let mut parts = vec![
            Histogram::new(),
            Histogram::new(),
            Histogram::new(),
            Histogram::new(),
        ];
        let mut all = Histogram::new();
        let mut x = 12345u64;
        for i in 0..40_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 40) % 5_000_000;
            parts[i % 4].record(v);
            all.record(v);
        }
        let mut merged = Histogram::new();
        for p in &parts {
            merged.merge(p);
        }
        assert_eq!(merged, all);
    }

    #[test]
    fn stddev_matches_two_pass() {
        let vals = [5u64, 7, 9, 100, 3000];
        let mut s = Summary::default();
        vals.iter().for_each(|v| s.add(*v));
        let mean = vals.iter().sum::<u64>() as f64 / 5.0;
        let var = vals.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / 4.0;
        assert!((s.stddev() - var.sqrt()).abs() < 1e-6);
    }
}
