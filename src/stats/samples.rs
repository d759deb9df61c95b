//! Per-interval samples of bandwidth and IOPS (fio's `bwavgtime` and
//! `iopsavgtime` windows): min, max, mean, standard deviation and count.

/// Statistics over interval samples (running mean and sum of squared
/// deviations, as Welford's method keeps them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampleStats {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    #[serde(with = "super::wire::f64_bits")]
    mean: f64,
    /// Sum of squared deviations from the mean.
    #[serde(with = "super::wire::f64_bits")]
    s: f64,
}

impl SampleStats {
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.n += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.s += delta * (x - self.mean);
    }

    /// Merges samples of the same quantity (e.g. two runs of one job):
    /// the result describes the union of both sample sets.
    pub fn merge(&mut self, o: &SampleStats) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let n = (self.n + o.n) as f64;
        let delta = o.mean - self.mean;
        self.s += o.s + delta * delta * self.n as f64 * o.n as f64 / n;
        self.mean += delta * o.n as f64 / n;
        self.n += o.n;
    }

    /// Adds samples of parallel streams whose rates add up (jobs of a
    /// reporting group, or read and write for `unified_rw_reporting`):
    /// minimum, maximum, mean and deviation sums are added, and the sample
    /// counts too. This is how group figures such as `bw_mean` become the
    /// group's aggregate rate.
    pub fn add_parallel(&mut self, o: &SampleStats) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.s += o.s;
        self.n += o.n;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.mean
        }
    }

    /// Sample standard deviation (n - 1 in the denominator).
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        (self.s / (self.n - 1) as f64).max(0.0).sqrt()
    }
}

/// Turns running byte and I/O counters into one sample per window.
#[derive(Clone, Debug)]
pub struct IntervalSampler {
    pub window_ns: u64,
    next_ns: u64,
    last_ns: u64,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
}

impl IntervalSampler {
    pub fn new(window_ms: u64, start_ns: u64) -> Self {
        let window_ns = window_ms.max(1) * 1_000_000;
        IntervalSampler {
            window_ns,
            next_ns: start_ns + window_ns,
            last_ns: start_ns,
            last_bytes: [0; 3],
            last_ios: [0; 3],
        }
    }

    /// Restarts the window at `now` with the given counters (after ramp).
    pub fn restart(&mut self, now: u64, bytes: [u64; 3], ios: [u64; 3]) {
        self.next_ns = now + self.window_ns;
        self.last_ns = now;
        self.last_bytes = bytes;
        self.last_ios = ios;
    }

    #[inline]
    pub fn due(&self, now: u64) -> bool {
        now >= self.next_ns
    }

    /// When the current window ends.
    pub fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// If a window has ended, returns (elapsed ns, bytes per dir, ios per
    /// dir) since the last sample and starts the next window one window
    /// length after `now` (windows follow the actual sample times).
    pub fn take(
        &mut self,
        now: u64,
        bytes: [u64; 3],
        ios: [u64; 3],
    ) -> Option<(u64, [u64; 3], [u64; 3])> {
        if now < self.next_ns {
            return None;
        }
        let dt = now - self.last_ns;
        let db = [0, 1, 2].map(|i| bytes[i] - self.last_bytes[i]);
        let di = [0, 1, 2].map(|i| ios[i] - self.last_ios[i]);
        self.last_ns = now;
        self.last_bytes = bytes;
        self.last_ios = ios;
        self.next_ns = now + self.window_ns;
        Some((dt, db, di))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_stats() {
        let mut s = SampleStats::default();
        for v in [10, 20, 30] {
            s.add(v);
        }
        assert_eq!((s.min, s.max, s.n), (10, 30, 3));
        assert!((s.mean() - 20.0).abs() < 1e-9);
        assert!((s.stddev() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn sampler_windows() {
        let mut s = IntervalSampler::new(500, 0);
        assert!(s.take(100_000_000, [1, 0, 0], [1, 0, 0]).is_none());
        let (dt, db, di) = s.take(600_000_000, [1000, 0, 0], [10, 0, 0]).unwrap();
        assert_eq!((dt, db[0], di[0]), (600_000_000, 1000, 10));
        assert!(!s.due(1_000_000_000));
        assert!(s.due(1_100_000_000));
    }
}
