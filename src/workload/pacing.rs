//! Pacing: when the next I/O may start (`rate`, `rate_iops`,
//! `rate_process`), when to pause (`thinktime` after `thinktime_blocks`
//! I/Os or `thinktime_iotime` of I/O), and whether the job keeps up with
//! `rate_min` / `rate_iops_min` (checked per `rate_cycle` window once the
//! job has run for two seconds; falling short ends the job).
//!
//! Pure bookkeeping on clock values the worker passes in: no clock reads,
//! no sleeping, no allocation.

use super::rng::Rng;
use crate::job::spec::{JobSpec, RateProcess, ThinkBlocksType};

/// Per-direction schedule for `rate` / `rate_iops`.
#[derive(Clone, Debug)]
pub struct Pacer {
    bps: [u64; 3],
    iops: [u64; 3],
    poisson: bool,
    next_ns: [u64; 3],
    rng: Rng,
}

impl Pacer {
    pub fn new(spec: &JobSpec, seed: u64) -> Self {
        Pacer {
            bps: spec.time.rate,
            iops: spec.time.rate_iops,
            poisson: spec.time.rate_process == RateProcess::Poisson,
            next_ns: [0; 3],
            rng: Rng::stream(seed, 21),
        }
    }

    /// The schedule starts at `t` (job start).
    pub fn start(&mut self, t: u64) {
        self.next_ns = [t; 3];
    }

    #[inline]
    pub fn active(&self, d: usize) -> bool {
        self.bps[d] > 0 || self.iops[d] > 0
    }

    /// True when some direction is rate limited.
    pub fn any(&self) -> bool {
        (0..3).any(|d| self.active(d))
    }

    /// Directions whose next I/O may start at `now` (bit per direction).
    #[inline]
    pub fn ready_mask(&self, now: u64) -> u8 {
        (0..3).fold(0, |m, d| {
            if !self.active(d) || self.next_ns[d] <= now {
                m | (1 << d)
            } else {
                m
            }
        })
    }

    /// Earliest time the next I/O of `len` bytes in direction `d` may
    /// start; advances the schedule by one I/O.
    #[inline]
    pub fn schedule(&mut self, d: usize, len: u64, now: u64) -> u64 {
        let mut gap = 0f64;
        if self.bps[d] > 0 {
            gap = gap.max(len as f64 * 1e9 / self.bps[d] as f64);
        }
        if self.iops[d] > 0 {
            gap = gap.max(1e9 / self.iops[d] as f64);
        }
        if self.poisson {
            // Exponentially distributed gaps with the same mean.
            gap *= -(1.0 - self.rng.f64()).ln();
        }
        let at = self.next_ns[d];
        // Do not bank more than one second of credit after a stall.
        let base = at.max(now.saturating_sub(1_000_000_000));
        self.next_ns[d] = base + gap as u64;
        at
    }

    /// Think time did not count against the rate (`rate_ignore_thinktime`):
    /// move the schedule on by the pause.
    pub fn shift(&mut self, ns: u64) {
        for n in &mut self.next_ns {
            *n += ns;
        }
    }
}

/// Think time: when a pause is due and how long it is.
#[derive(Clone, Debug)]
pub struct Thinker {
    pub total_ns: u64,
    pub spin_ns: u64,
    blocks: u64,
    kind: ThinkBlocksType,
    iotime_ns: u64,
    count: u64,
    /// Clock time of the end of the last pause (start of the I/O period).
    since_ns: u64,
}

impl Thinker {
    pub fn new(spec: &JobSpec) -> Self {
        let t = &spec.time;
        // With thinktime_iotime alone, the pause comes by time, not count.
        let blocks = if t.thinktime_iotime_us > 0 && !spec.set_options.contains(&"thinktime_blocks")
        {
            u64::MAX
        } else {
            t.thinktime_blocks.max(1)
        };
        Thinker {
            total_ns: t.thinktime_us * 1000,
            spin_ns: t.thinktime_spin_us.min(t.thinktime_us) * 1000,
            blocks,
            kind: t.thinktime_blocks_type,
            iotime_ns: t.thinktime_iotime_us * 1000,
            count: 0,
            since_ns: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.total_ns > 0
    }

    pub fn start(&mut self, t: u64) {
        self.since_ns = t;
    }

    /// Counts `n` I/Os issued or completed (`kind`); true when a pause is due.
    #[inline]
    pub fn due(&mut self, kind: ThinkBlocksType, n: u64, now: u64) -> bool {
        if self.total_ns == 0 || kind != self.kind {
            return false;
        }
        self.count += n;
        if self.count >= self.blocks
            || (self.iotime_ns > 0 && now.saturating_sub(self.since_ns) >= self.iotime_ns)
        {
            self.count = 0;
            return true;
        }
        false
    }

    /// The pause ended at `t`.
    pub fn paused(&mut self, t: u64) {
        self.since_ns = t;
    }
}

/// `rate_min` / `rate_iops_min`: a job that falls short fails.
#[derive(Clone, Debug)]
pub struct MinRate {
    min_bps: [u64; 3],
    min_iops: [u64; 3],
    cycle_ns: u64,
    next_check_ns: u64,
    window_start_ns: u64,
    window_bytes: [u64; 3],
    window_ios: [u64; 3],
    /// The first window has begun (after the grace period).
    opened: bool,
    used: [bool; 3],
}

/// No check before the job has run this long.
const GRACE_NS: u64 = 2_000_000_000;

impl MinRate {
    pub fn new(spec: &JobSpec) -> Option<Self> {
        let t = &spec.time;
        let used = [
            spec.io.rw.has(crate::job::spec::Ddir::Read),
            spec.io.rw.has(crate::job::spec::Ddir::Write),
            spec.io.rw.has(crate::job::spec::Ddir::Trim),
        ];
        let wanted = (0..3).any(|d| used[d] && (t.rate_min[d] > 0 || t.rate_iops_min[d] > 0));
        wanted.then(|| MinRate {
            min_bps: t.rate_min,
            min_iops: t.rate_iops_min,
            cycle_ns: t.rate_cycle_ms.max(1) * 1_000_000,
            next_check_ns: u64::MAX,
            window_start_ns: 0,
            window_bytes: [0; 3],
            window_ios: [0; 3],
            opened: false,
            used,
        })
    }

    /// The job's I/O started at `t`.
    pub fn start(&mut self, t: u64) {
        self.window_start_ns = t + GRACE_NS;
        self.next_check_ns = t + GRACE_NS;
    }

    /// Cheap test for the hot path.
    #[inline]
    pub fn due(&self, now: u64) -> bool {
        now >= self.next_check_ns
    }

    /// Checks the window that ends now; `bytes`/`ios` are the job's
    /// running totals. Returns the failure message when short.
    pub fn check(
        &mut self,
        now: u64,
        bytes: [u64; 3],
        ios: [u64; 3],
    ) -> Result<(), super::WorkloadError> {
        if now < self.next_check_ns {
            return Ok(());
        }
        let elapsed = now.saturating_sub(self.window_start_ns);
        if self.opened && elapsed > 0 {
            for d in 0..3 {
                if !self.used[d] {
                    continue;
                }
                let secs = elapsed as f64 / 1e9;
                let bps = ((bytes[d] - self.window_bytes[d]) as f64 / secs) as u64;
                let iops = ((ios[d] - self.window_ios[d]) as f64 / secs) as u64;
                if self.min_bps[d] > 0 && bps < self.min_bps[d] {
                    return Err(super::WorkloadError::RateMin {
                        min: self.min_bps[d],
                        got: bps,
                    });
                }
                if self.min_iops[d] > 0 && iops < self.min_iops[d] {
                    return Err(super::WorkloadError::RateIopsMin {
                        min: self.min_iops[d],
                        got: iops,
                    });
                }
            }
        }
        // Start the next window here.
        self.opened = true;
        self.window_start_ns = now;
        self.window_bytes = bytes;
        self.window_ios = ios;
        self.next_check_ns = now + self.cycle_ns;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        crate::job::test_spec(opts)
    }

    #[test]
    fn linear_rate_spaces_ios_evenly() {
        let mut p = Pacer::new(&spec(&[("rate_iops", "200")]), 1);
        p.start(0);
        let at: Vec<u64> = (0..4).map(|_| p.schedule(0, 4096, 0)).collect();
        assert_eq!(at, [0, 5_000_000, 10_000_000, 15_000_000]);
        let mut p = Pacer::new(&spec(&[("rate", "400k")]), 1);
        p.start(0);
        p.schedule(0, 4096, 0);
        assert_eq!(p.schedule(0, 4096, 0), 10_000_000);
    }

    #[test]
    fn poisson_keeps_the_mean() {
        let mut p = Pacer::new(
            &spec(&[("rate_iops", "1000"), ("rate_process", "poisson")]),
            1,
        );
        p.start(0);
        let mut last = 0;
        for _ in 0..10_000 {
            last = p.schedule(0, 4096, last);
        }
        // 10 000 I/Os at 1000/s: about 10 s.
        assert!((9.6e9..10.4e9).contains(&(last as f64)), "{last}");
    }

    #[test]
    fn think_after_blocks_or_iotime() {
        let mut t = Thinker::new(&spec(&[("thinktime", "1ms"), ("thinktime_blocks", "3")]));
        let due: Vec<bool> = (0..6)
            .map(|_| t.due(ThinkBlocksType::Complete, 1, 0))
            .collect();
        assert_eq!(due, [false, false, true, false, false, true]);
        assert!(!t.due(ThinkBlocksType::Issue, 5, 0));
        let mut t = Thinker::new(&spec(&[("thinktime", "1ms"), ("thinktime_iotime", "1s")]));
        t.start(0);
        assert!(!t.due(ThinkBlocksType::Complete, 1000, 999_999_999));
        assert!(t.due(ThinkBlocksType::Complete, 1, 1_000_000_000));
    }

    #[test]
    fn min_rate_checks_windows_after_the_grace_period() {
        let mut m =
            MinRate::new(&spec(&[("rate_iops_min", "100"), ("rate_cycle", "500")])).unwrap();
        m.start(0);
        assert!(!m.due(1_999_999_999));
        // Opening the first window never fails.
        m.check(2_000_000_000, [0; 3], [150, 0, 0]).unwrap();
        assert!(!m.due(2_400_000_000));
        // 100 I/Os in 0.5 s = 200 IOPS: fine.
        m.check(2_500_000_000, [0; 3], [250, 0, 0]).unwrap();
        // 20 in 0.5 s = 40 IOPS: short.
        let e = m.check(3_000_000_000, [0; 3], [270, 0, 0]).unwrap_err();
        assert_eq!(e.to_string(), "rate_iops_min=100 not met, got 40 IOPS");
    }
}
