//! Results on the wire: what one process measured, encoded so another
//! process (rank 0 of a run spread over hosts) can report it exactly.
//!
//! The encoding is a one-line header (`iomark-wire N VERSION`) and a
//! compact JSON body written with serde. The types say how they go on the
//! wire: latency histograms keep only their non-zero buckets, as
//! `[index, count]` pairs; floating-point figures travel as their IEEE
//! bits (`f64_bits`), so nothing is rounded and a decoded result equals
//! the one encoded, field for field (and every percentile computed from
//! it too). Both sides must run the same iomark: a header that names
//! another wire format or another version is refused, since its figures
//! might not mean the same.
//!
//! Any serializable result type goes through [`encode`] and [`decode`]:
//! a worker's `run::worker::Outcome`, a list of them, `disk::DiskReport`s.
//! This module reads and writes nothing itself.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Version of the wire format (the header's first number).
pub const WIRE_FORMAT: u32 = 1;

const MAGIC: &str = "iomark-wire";

/// Why bytes could not be decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("not an iomark result (no '{MAGIC}' header)")]
    NotWire,
    #[error(
        "results come from iomark {theirs} (wire format {theirs_format}); this is iomark \
         {ours} (wire format {WIRE_FORMAT}): run the same iomark everywhere"
    )]
    Version {
        theirs: String,
        theirs_format: u32,
        ours: &'static str,
    },
    #[error("damaged iomark result: {0}")]
    Body(String),
}

fn header() -> String {
    format!("{MAGIC} {WIRE_FORMAT} {}\n", env!("CARGO_PKG_VERSION"))
}

/// Encodes `v` (an `Outcome`, a `Vec<Outcome>`, …) with the header.
pub fn encode<T: Serialize + ?Sized>(v: &T) -> Vec<u8> {
    let mut out = header().into_bytes();
    // The result types have string keys only and no bare floats (they go
    // as bits), so serde_json cannot fail on them.
    serde_json::to_writer(&mut out, v).expect("results always serialize");
    out
}

/// Decodes what [`encode`] wrote, checking the header first.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, WireError> {
    let nl = bytes
        .iter()
        .position(|b| *b == b'\n')
        .ok_or(WireError::NotWire)?;
    let head = std::str::from_utf8(&bytes[..nl]).map_err(|_| WireError::NotWire)?;
    let mut words = head.split(' ');
    if words.next() != Some(MAGIC) {
        return Err(WireError::NotWire);
    }
    let format: u32 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or(WireError::NotWire)?;
    let version = words.next().unwrap_or("").to_string();
    let ours = env!("CARGO_PKG_VERSION");
    if format != WIRE_FORMAT || version != ours || words.next().is_some() {
        return Err(WireError::Version {
            theirs: version,
            theirs_format: format,
            ours,
        });
    }
    serde_json::from_slice(&bytes[nl + 1..]).map_err(|e| WireError::Body(e.to_string()))
}

/// `#[serde(with = "f64_bits")]`: an `f64` as its IEEE bits (a `u64`),
/// exact whatever its value (NaN and infinities too).
pub mod f64_bits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.to_bits())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        u64::deserialize(d).map(f64::from_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::worker::Outcome;
    use crate::stats::histogram::{bucket_of, Histogram};
    use crate::stats::JobStats;

    /// The stats of a real run: a null job through a session, with the
    /// real clock (so latencies spread over many buckets), submission
    /// latencies (iodepth 4), syncs, interval samples and two directions.
    fn real_run() -> Vec<Outcome> {
        let text = "[global]\nioengine=null\nrw=randrw\nbs=4k\nsize=4m\niodepth=4\n\
                    fsync=8\ntime_based\nruntime=300ms\nbwavgtime=50\niopsavgtime=50\n\
                    [a]\n[b]\nrw=write\niodepth=1\n";
        let r = crate::run::session::testing::run_text(text, None);
        assert!(!r.failed());
        r.jobs.into_iter().map(|j| j.outcome).collect()
    }

    /// Every field of `a` and `b`, compared one by one (so a failure
    /// names the field), then as a whole.
    fn same_stats(a: &JobStats, b: &JobStats) {
        let list = crate::job::spec::DEFAULT_PERCENTILES;
        for d in 0..3 {
            let (x, y) = (&a.dir[d], &b.dir[d]);
            assert_eq!(
                (x.bytes, x.ios, x.short_ios, x.drop_ios, x.runtime_ms),
                (y.bytes, y.ios, y.short_ios, y.drop_ios, y.runtime_ms)
            );
            for (h, k) in [(&x.slat, &y.slat), (&x.clat, &y.clat), (&x.lat, &y.lat)] {
                assert_eq!(h.summary, k.summary);
                assert_eq!(h.buckets(), k.buckets());
                assert_eq!(h.percentiles(&list), k.percentiles(&list));
                assert_eq!(h.summary.stddev().to_bits(), k.summary.stddev().to_bits());
            }
            assert_eq!(x.bw_samples, y.bw_samples);
            assert_eq!(x.bw_samples.mean().to_bits(), y.bw_samples.mean().to_bits());
            assert_eq!(
                x.iops_samples.stddev().to_bits(),
                y.iops_samples.stddev().to_bits()
            );
        }
        assert_eq!(a.sync_lat, b.sync_lat);
        assert_eq!(a.sync_lat.percentiles(&list), b.sync_lat.percentiles(&list));
        assert_eq!(a.write_sync_lat, b.write_sync_lat);
        assert_eq!(
            (a.depth, a.submit, a.complete),
            (b.depth, b.submit, b.complete)
        );
        assert_eq!(
            (a.submit_calls, a.complete_calls, a.depth_total, a.sync_ios),
            (b.submit_calls, b.complete_calls, b.depth_total, b.sync_ios)
        );
        assert_eq!(a.lat_dist, b.lat_dist);
        assert_eq!(
            (a.usr_us, a.sys_us, a.ctx, a.majf, a.minf),
            (b.usr_us, b.sys_us, b.ctx, b.majf, b.minf)
        );
        assert_eq!(
            (a.runtime_ms, a.elapsed_ms, a.latency_depth),
            (b.runtime_ms, b.elapsed_ms, b.latency_depth)
        );
        assert_eq!((a.total_err, a.first_error), (b.total_err, b.first_error));
        assert_eq!(a.steady, b.steady);
        assert_eq!(a.timeline, b.timeline);
        assert_eq!(a, b);
    }

    #[test]
    fn outcomes_of_a_real_run_round_trip_exactly() {
        let mut outs = real_run();
        // What a null job on this clock does not fill: a steady-state
        // verdict, a timeline, an error, and a float that JSON text would
        // round.
        outs[1].stats.steady = Some(crate::stats::steady::SteadyResult {
            spec: crate::job::spec::SteadyState::IopsSlope {
                limit: 0.1,
                percent: true,
            },
            duration_s: 3,
            attained: true,
            criterion: 1.0 / 3.0,
            max_deviation: 0.1 + 0.2,
            slope: -0.0,
            bw_mean: 7,
            iops_mean: 9,
            bw: vec![1, 2, 3],
            iops: vec![4, 5, 6],
        });
        outs[1].stats.timeline = crate::stats::timeline::Timeline {
            interval_ms: 100,
            points: vec![crate::stats::timeline::TimelinePoint {
                index: 1,
                t_ms: 101,
                bytes: [1, 2, 3],
                ios: [4, 5, 6],
            }],
        };
        outs[1].error = libc::ENOSPC;
        outs[1].error_msg = Some("No space left on device".into());
        outs[1].interrupted = true;
        let a = &outs[0].stats;
        assert!(a.dir[0].ios > 0 && a.dir[1].ios > 0, "both directions ran");
        assert!(a.dir[0].clat.buckets().iter().filter(|c| **c > 0).count() > 1);
        assert!(a.dir[0].slat.count() > 0, "iodepth 4 records slat");
        assert!(a.sync_ios > 0 && a.sync_lat.count() > 0, "fsync=8 syncs");
        assert!(a.dir[0].bw_samples.n > 0, "interval samples");

        let bytes = encode(&outs);
        let back: Vec<Outcome> = decode(&bytes).expect("decodes");
        assert_eq!(back.len(), outs.len());
        for (x, y) in outs.iter().zip(&back) {
            same_stats(&x.stats, &y.stats);
            assert_eq!(
                (x.error, &x.error_msg, x.interrupted, x.start_unix_ms),
                (y.error, &y.error_msg, y.interrupted, y.start_unix_ms)
            );
        }
        let s = back[1].stats.steady.as_ref().unwrap();
        assert_eq!(s.slope.to_bits(), (-0.0f64).to_bits());
        // One outcome alone goes the same way.
        let one: Outcome = decode(&encode(&outs[0])).expect("decodes");
        assert_eq!(one, outs[0]);
    }

    #[test]
    fn per_priority_latencies_travel_exactly() {
        let mut s = JobStats {
            ioprio: 0x4003,
            prio_lat: true,
            ..JobStats::default()
        };
        for (i, v) in [0x4003u16, 0x2000, 0x600a].into_iter().enumerate() {
            let mut lat = Histogram::new();
            for k in 0..(100 * (i as u64 + 1)) {
                lat.record(k * 7919 + i as u64);
            }
            s.dir[1]
                .prios
                .push(crate::stats::PrioStat { ioprio: v, lat });
        }
        let back: JobStats = decode(&encode(&s)).expect("decodes");
        same_stats(&s, &back);
        assert_eq!(back.dir[1].prios, s.dir[1].prios);
        assert_eq!((back.ioprio, back.prio_lat), (0x4003, true));
    }

    #[test]
    fn floats_travel_as_their_bits() {
        let d = crate::stats::disk::DiskReport {
            name: "vda".into(),
            delta: Default::default(),
            util: f64::NAN,
            aggr: Some(crate::stats::disk::DiskAggregate {
                max_util: f64::NEG_INFINITY,
                ..Default::default()
            }),
        };
        let back: crate::stats::disk::DiskReport = decode(&encode(&d)).unwrap();
        assert_eq!(back.util.to_bits(), d.util.to_bits());
        assert_eq!(back.aggr.unwrap().max_util, f64::NEG_INFINITY);
    }

    #[test]
    fn histograms_travel_as_their_non_zero_buckets() {
        let mut h = Histogram::new();
        for v in [5u64, 5, 1000, 77_000_000] {
            h.record(v);
        }
        let v: serde_json::Value = serde_json::to_value(&h).unwrap();
        let bins = v["bins"].as_array().unwrap();
        let want: Vec<serde_json::Value> = vec![
            serde_json::json!([5, 2]),
            serde_json::json!([bucket_of(1000), 1]),
            serde_json::json!([bucket_of(77_000_000), 1]),
        ];
        assert_eq!(bins, &want);
        let back: Histogram = serde_json::from_value(v).unwrap();
        assert_eq!(back, h);
        // An empty histogram is a few bytes, not a table of zeros.
        let empty = encode(&Histogram::new());
        assert!(empty.len() < 120, "{}", String::from_utf8_lossy(&empty));
    }

    #[test]
    fn bad_bins_are_refused() {
        let bad = [
            r#"{"summary":{"n":1,"min":1,"max":1,"sum":1,"sumsq":1},"bins":[[999999,1]]}"#,
            r#"{"summary":{"n":2,"min":1,"max":1,"sum":2,"sumsq":2},"bins":[[1,1],[1,1]]}"#,
            r#"{"summary":{"n":2,"min":1,"max":2,"sum":3,"sumsq":5},"bins":[[2,1],[1,1]]}"#,
        ];
        for b in bad {
            let e = serde_json::from_str::<Histogram>(b).expect_err(b);
            assert!(e.to_string().contains("bucket"), "{e}");
        }
    }

    #[test]
    fn sums_beyond_u64_survive() {
        let mut h = Histogram::new();
        for _ in 0..3 {
            h.record(u64::MAX / 2);
        }
        assert!(h.summary.sumsq > u64::MAX as u128);
        let back: Histogram = decode(&encode(&h)).unwrap();
        assert_eq!(back.summary, h.summary);
    }

    #[test]
    fn foreign_or_damaged_bytes_are_refused() {
        let good = encode(&Outcome::default());
        assert!(decode::<Outcome>(&good).is_ok());
        assert_eq!(decode::<Outcome>(b"{}"), Err(WireError::NotWire));
        assert_eq!(
            decode::<Outcome>(b"something else\n{}"),
            Err(WireError::NotWire)
        );
        let other = b"iomark-wire 1 0.0.1-other\n{}";
        let e = decode::<Outcome>(other).unwrap_err();
        assert!(matches!(e, WireError::Version { .. }), "{e}");
        assert!(e.to_string().contains("run the same iomark everywhere"));
        let newer = format!("iomark-wire 2 {}\n{{}}", env!("CARGO_PKG_VERSION"));
        assert!(matches!(
            decode::<Outcome>(newer.as_bytes()),
            Err(WireError::Version { .. })
        ));
        let cut = &good[..good.len() - 3];
        assert!(matches!(decode::<Outcome>(cut), Err(WireError::Body(_))));
    }
}
