//! The terse (semicolon-separated) report, versions 2 to 5, one line per
//! reported job, laid out field for field as fio's: header, one status
//! section per direction (version 3 has no trim section), CPU, queue
//! depths, latency distribution, then the disks (version 3 and later),
//! error counts (with `continue_on_error`) and the description.
//!
//! Latencies are in µs, sizes in KiB, bandwidth in KiB/s.

use std::fmt::Write;

use super::{bw_bytes, JobReport, Report, UNIFIED_BOTH, UNIFIED_MIXED};
use crate::stats::histogram::Histogram;
use crate::stats::{DirStats, JobStats};

/// Versions iomark writes.
pub const VERSIONS: [u32; 4] = [2, 3, 4, 5];

/// Percentile fields per latency section, used or not.
const PCT_FIELDS: usize = 20;

fn lat_fields(out: &mut String, h: &Histogram) {
    let s = &h.summary;
    if s.n == 0 {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    let _ = write!(
        out,
        ";{};{};{:.6};{:.6}",
        s.min / 1000,
        s.max / 1000,
        s.mean() / 1000.0,
        s.stddev() / 1000.0
    );
}

fn dir_fields(out: &mut String, r: &JobReport, ds: &DirStats, agg_bw: u64, version: u32) {
    let st = &r.spec.stat;
    let bw = bw_bytes(ds) / 1024;
    let iops = (ds.ios * 1000).checked_div(ds.runtime_ms).unwrap_or(0);
    let _ = write!(out, ";{};{};{};{}", ds.bytes >> 10, bw, iops, ds.runtime_ms);
    lat_fields(out, &ds.slat);
    lat_fields(out, &ds.clat);
    let hist = if st.lat_percentiles {
        Some(&ds.lat)
    } else if st.clat_percentiles {
        Some(&ds.clat)
    } else {
        None
    };
    let list = &st.percentile_list;
    let vals = hist.map(|h| h.percentiles(list)).unwrap_or_default();
    for i in 0..PCT_FIELDS {
        match (list.get(i), vals.get(i)) {
            (Some(p), Some(v)) => {
                let _ = write!(out, ";{p:.6}%={}", v / 1000);
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat_fields(out, &ds.lat);
    let b = &ds.bw_samples;
    if b.n > 0 {
        let agg_kib = agg_bw / 1024;
        let per = if agg_kib > 0 {
            (b.mean() * 100.0 / agg_kib as f64).min(100.0)
        } else {
            100.0
        };
        let _ = write!(
            out,
            ";{};{};{per:.6}%;{:.6};{:.6}",
            b.min,
            b.max,
            b.mean(),
            b.stddev()
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if version >= 5 {
        let i = &ds.iops_samples;
        let _ = write!(
            out,
            ";{};{};{};{:.6};{:.6};{}",
            b.n,
            i.min,
            i.max,
            i.mean(),
            i.stddev(),
            i.n
        );
    }
}

fn pct(v: u64, total: u64, floor: f64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let p = v as f64 * 100.0 / total as f64;
    if p < floor && v > 0 {
        floor
    } else {
        p
    }
}

fn tail_fields(out: &mut String, s: &JobStats) {
    let rt = s.runtime_ms as f64;
    let (usr, sys) = if rt > 0.0 {
        (s.usr_us as f64 / 10.0 / rt, s.sys_us as f64 / 10.0 / rt)
    } else {
        (0.0, 0.0)
    };
    let _ = write!(out, ";{usr:.6}%;{sys:.6}%;{};{};{}", s.ctx, s.majf, s.minf);
    let total = s.total_ios();
    for v in &s.depth {
        let _ = write!(out, ";{:3.1}%", pct(*v, total, 0.1));
    }
    // Sub-microsecond latencies count in the first microsecond bucket.
    let mut usec = s.lat_dist.usec;
    usec[0] += s.lat_dist.nsec.iter().sum::<u64>();
    for v in usec.iter().chain(&s.lat_dist.msec) {
        let _ = write!(out, ";{:3.2}%", pct(*v, total, 0.01));
    }
}

/// The line for one job (with its trailing newline).
pub fn job_line(r: &JobReport, report: &Report, version: u32) -> String {
    let mut out = String::new();
    if version == 2 {
        let _ = write!(out, "2;{};{};{}", r.name, r.groupid, r.error);
    } else {
        let _ = write!(
            out,
            "{version};iomark-{};{};{};{}",
            env!("CARGO_PKG_VERSION"),
            r.name,
            r.groupid,
            r.error
        );
    }
    let unified = r.unified();
    if unified != UNIFIED_MIXED {
        let dirs: &[usize] = if version == 3 { &[0, 1] } else { &[0, 1, 2] };
        for &d in dirs {
            dir_fields(
                &mut out,
                r,
                &r.stats.dir[d],
                report.group_agg(r, d),
                version,
            );
        }
    }
    if unified == UNIFIED_MIXED || unified == UNIFIED_BOTH {
        if let Some(m) = &r.mixed {
            dir_fields(&mut out, r, m, report.group_agg(r, 3), version);
        }
    }
    tail_fields(&mut out, &r.stats);
    if version >= 3 {
        for d in &report.disks {
            let c = &d.delta;
            let _ = write!(
                out,
                ";{};{};{};{};{};{};{};{};{:3.2}%",
                d.name,
                c.ios[0],
                c.ios[1],
                c.merges[0],
                c.merges[1],
                c.ticks[0],
                c.ticks[1],
                c.time_in_queue,
                d.util
            );
            if let Some(a) = &d.aggr {
                let _ = write!(
                    out,
                    ";{};{};{};{};{};{};{};{:3.2}%",
                    a.ios[0],
                    a.ios[1],
                    a.merges[0],
                    a.merges[1],
                    a.ticks[0],
                    a.ticks[1],
                    a.in_queue,
                    a.max_util
                );
            }
        }
    }
    if r.spec.ctl.counts_errors() {
        let _ = write!(out, ";{};{}", r.stats.total_err, r.stats.first_error);
    }
    if !r.spec.description.is_empty() {
        if version == 2 {
            out.push('\n');
        }
        let _ = write!(out, ";{}", r.spec.description);
    }
    out.push('\n');
    out
}

/// All jobs' lines.
pub fn render(report: &Report, version: u32) -> String {
    report
        .jobs
        .iter()
        .map(|r| job_line(r, report, version))
        .collect()
}
