//! A job's throughput over time: cumulative bytes and I/O counts per
//! direction, sampled by the run's progress thread at a fixed interval on a
//! grid shared by every job of the run (sample k is taken at about
//! k × interval after the run started).
//!
//! This is iomark's own per-interval record (written under the "iomark"
//! key of the JSON); it is separate from fio's bw/iops logs and from the
//! `bw_*`/`iops_*` sample statistics. It is never touched on the I/O hot
//! path: the sampler reads the workers' published atomics.

/// One sample: time since the run started and cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimelinePoint {
    /// Grid index (time ≈ index × interval).
    pub index: u32,
    /// Time since the run started when the sample was taken, ms.
    pub t_ms: u64,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
}

/// Samples of one job (or of merged jobs), in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    pub interval_ms: u64,
    pub points: Vec<TimelinePoint>,
}

/// Per-interval rates derived from consecutive samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rates {
    /// End time of each interval, ms since the run started.
    pub t_ms: Vec<u64>,
    /// Bytes per second per direction.
    pub bw_bytes: [Vec<f64>; 3],
    pub iops: [Vec<f64>; 3],
}

impl Timeline {
    pub fn is_empty(&self) -> bool {
        self.points.len() < 2
    }

    /// Adds another job's samples: counters taken at the same grid index
    /// are summed. Samples only one side has are kept as they are.
    pub fn merge(&mut self, o: &Timeline) {
        if o.points.is_empty() {
            return;
        }
        if self.points.is_empty() {
            *self = o.clone();
            return;
        }
        let mut out = Vec::with_capacity(self.points.len().max(o.points.len()));
        let (mut i, mut j) = (0, 0);
        while i < self.points.len() || j < o.points.len() {
            let a = self.points.get(i);
            let b = o.points.get(j);
            match (a, b) {
                (Some(a), Some(b)) if a.index == b.index => {
                    let mut p = *a;
                    for d in 0..3 {
                        p.bytes[d] += b.bytes[d];
                        p.ios[d] += b.ios[d];
                    }
                    out.push(p);
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.index < b.index => {
                    out.push(*a);
                    i += 1;
                }
                (Some(a), None) => {
                    out.push(*a);
                    i += 1;
                }
                (_, Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.points = out;
        self.interval_ms = self.interval_ms.max(o.interval_ms);
    }

    /// Rates over consecutive samples. A last interval shorter than half
    /// the sampling interval (the job ended just after a sample) is folded
    /// into the one before it, so a few I/Os over a few milliseconds do not
    /// show as a spike or a drop.
    pub fn rates(&self) -> Rates {
        let mut r = Rates::default();
        let mut pts: Vec<&TimelinePoint> = self.points.iter().collect();
        if pts.len() > 2 {
            let n = pts.len();
            let last = pts[n - 1].t_ms.saturating_sub(pts[n - 2].t_ms);
            if last * 2 < self.interval_ms {
                pts.remove(n - 2);
            }
        }
        for w in pts.windows(2) {
            let dt = w[1].t_ms.saturating_sub(w[0].t_ms);
            if dt == 0 {
                continue;
            }
            let s = dt as f64 / 1000.0;
            r.t_ms.push(w[1].t_ms);
            for d in 0..3 {
                r.bw_bytes[d].push(w[1].bytes[d].saturating_sub(w[0].bytes[d]) as f64 / s);
                r.iops[d].push(w[1].ios[d].saturating_sub(w[0].ios[d]) as f64 / s);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(index: u32, bytes: u64) -> TimelinePoint {
        TimelinePoint {
            index,
            t_ms: index as u64 * 500,
            bytes: [bytes, 0, 0],
            ios: [bytes / 4096, 0, 0],
        }
    }

    #[test]
    fn merge_sums_samples_on_the_same_grid_index() {
        let mut a = Timeline {
            interval_ms: 500,
            points: vec![pt(0, 0), pt(1, 4096), pt(2, 8192)],
        };
        let b = Timeline {
            interval_ms: 500,
            points: vec![pt(1, 0), pt(2, 4096), pt(3, 8192)],
        };
        a.merge(&b);
        let idx: Vec<u32> = a.points.iter().map(|p| p.index).collect();
        assert_eq!(idx, vec![0, 1, 2, 3]);
        assert_eq!(a.points[1].bytes[0], 4096);
        assert_eq!(a.points[2].bytes[0], 12288);
        assert_eq!(a.points[3].bytes[0], 8192);
    }

    #[test]
    fn rates_are_deltas_over_elapsed_time() {
        let t = Timeline {
            interval_ms: 500,
            points: vec![pt(0, 0), pt(1, 1 << 20), pt(2, 3 << 20)],
        };
        let r = t.rates();
        assert_eq!(r.t_ms, vec![500, 1000]);
        assert_eq!(r.bw_bytes[0], vec![2.0 * 1048576.0, 4.0 * 1048576.0]);
        assert_eq!(r.iops[0], vec![512.0, 1024.0]);
        assert!(r.bw_bytes[1].iter().all(|v| *v == 0.0));
    }

    #[test]
    fn a_short_last_interval_is_folded_into_the_previous_one() {
        let mut pts = vec![pt(0, 0), pt(1, 1 << 20), pt(2, 2 << 20)];
        pts.push(TimelinePoint {
            index: 3,
            t_ms: 1010,
            bytes: [(2 << 20) + 4096, 0, 0],
            ios: [513, 0, 0],
        });
        let t = Timeline {
            interval_ms: 500,
            points: pts,
        };
        let r = t.rates();
        assert_eq!(r.t_ms, vec![500, 1010]);
        assert!((r.bw_bytes[0][1] - ((1 << 20) + 4096) as f64 / 0.51).abs() < 1.0);
    }
}
