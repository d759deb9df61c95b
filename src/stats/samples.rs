//! Per-interval samples of bandwidth and IOPS (fio's `bwavgtime` and
//! `iopsavgtime` windows): min, max, mean, standard deviation and count.

/// Statistics over interval samples; mergeable.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStats {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub sum: f64,
    pub sumsq: f64,
}

impl SampleStats {
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.n += 1;
        self.sum += v as f64;
        self.sumsq += (v as f64) * (v as f64);
    }

    pub fn merge(&mut self, o: &SampleStats) {
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
            self.sum / self.n as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let var = (self.sumsq - self.sum * self.sum / n) / (n - 1.0);
        var.max(0.0).sqrt()
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

    /// If a window has ended, returns (elapsed ns, bytes per dir, ios per
    /// dir) since the last sample and starts the next window.
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
        while self.next_ns <= now {
            self.next_ns += self.window_ns;
        }
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
        assert!(!s.due(900_000_000));
        assert!(s.due(1_000_000_000));
    }
}
