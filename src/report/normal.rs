//! The normal (human) text report, laid out like fio's: a block per job
//! with IOPS, bandwidth, latency summaries and percentiles, bandwidth and
//! IOPS samples, latency distribution, CPU, queue depths, then one
//! "Run status group" block per group.

use std::fmt::Write;

use super::fmt::{bw_pair, ctime, lat_unit, num2str, pct_unit};
use super::{GroupReport, JobReport, Report};
use crate::job::spec::{BlockSizes, JobSpec};
use crate::stats::histogram::Histogram;
use crate::stats::{DirStats, JobStats};

const DDIR_NAMES: [&str; 3] = ["read", "write", "trim"];
const DDIR_UPPER: [&str; 3] = ["READ", "WRITE", "TRIM"];

fn bs_range(b: &BlockSizes) -> String {
    format!(
        "{}-{}",
        num2str(b.min() as f64, 4, 1024, "B"),
        num2str(b.max() as f64, 4, 1024, "B")
    )
}

/// The line fio prints for each job before it starts.
pub fn job_header(spec: &JobSpec, group: u32) -> String {
    format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
        spec.name,
        group,
        spec.io.rw.name(),
        bs_range(&spec.io.bs[0]),
        bs_range(&spec.io.bs[1]),
        bs_range(&spec.io.bs[2]),
        spec.io.ioengine,
        spec.io.iodepth
    )
}

/// Header lines: one per job (clones shown as "..."), the version, and
/// how many workers start.
pub fn run_header(plan: &crate::run::plan::Plan) -> String {
    let mut out = String::new();
    let mut last_job = usize::MAX;
    let mut clones_noted = false;
    for j in &plan.jobs {
        if j.job_index != last_job {
            let _ = writeln!(out, "{}", job_header(&j.spec, j.group));
            last_job = j.job_index;
            clones_noted = false;
        } else if !clones_noted {
            out.push_str("...\n");
            clones_noted = true;
        }
    }
    let _ = writeln!(out, "iomark-{}", env!("CARGO_PKG_VERSION"));
    let n = plan.jobs.len();
    let _ = writeln!(out, "Starting {n} thread{}", if n == 1 { "" } else { "s" });
    out
}

fn lat_line(out: &mut String, label: &str, h: &Histogram) {
    let s = &h.summary;
    if s.n == 0 {
        return;
    }
    let (div, unit) = lat_unit(s.min, s.max, s.stddev());
    let _ = writeln!(
        out,
        "    {label} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        (s.min as f64 / div) as u64,
        (s.max as f64 / div) as u64,
        s.mean() / div,
        s.stddev() / div
    );
}

fn percentile_block(out: &mut String, label: &str, h: &Histogram, list: &[f64]) {
    if h.count() == 0 || list.is_empty() {
        return;
    }
    let vals = h.percentiles(list);
    let minv = vals.iter().copied().min().unwrap_or(0);
    let maxv = vals.iter().copied().max().unwrap_or(0);
    let (div, unit) = pct_unit(minv, maxv);
    let _ = writeln!(out, "    {label} percentiles ({unit}):");
    for (row, chunk) in list
        .iter()
        .zip(&vals)
        .collect::<Vec<_>>()
        .chunks(4)
        .enumerate()
    {
        out.push_str("     |");
        for (k, (p, v)) in chunk.iter().enumerate() {
            let _ = write!(out, " {:5.2}th=[{:5}]", p, **v / div);
            let last_overall = row * 4 + k + 1 == list.len();
            if !last_overall {
                out.push(',');
            }
        }
        out.push('\n');
    }
}

fn dir_block(out: &mut String, r: &JobReport, d: usize, group: Option<&GroupReport>) {
    let ds: &DirStats = &r.stats.dir[d];
    let spec = &r.spec;
    let kb = spec.ctl.kb_base;
    let bw = r.bw_bytes(d);
    let io = if kb == 1000 {
        num2str(ds.bytes as f64, 4, 1000, "B")
    } else {
        num2str(ds.bytes as f64, 4, 1024, "B")
    };
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={}({}/{}msec){}",
        DDIR_NAMES[d],
        num2str(r.iops(d), 4, 1000, ""),
        bw_pair(bw, kb),
        io,
        ds.runtime_ms,
        if d == 1 { "; 0 zone resets" } else { "" }
    );
    let st = &spec.stat;
    lat_line(out, "slat", &ds.slat);
    lat_line(out, "clat", &ds.clat);
    lat_line(out, " lat", &ds.lat);
    if st.slat_percentiles {
        percentile_block(out, "slat", &ds.slat, &st.percentile_list);
    }
    if st.clat_percentiles {
        percentile_block(out, "clat", &ds.clat, &st.percentile_list);
    }
    if st.lat_percentiles {
        percentile_block(out, " lat", &ds.lat, &st.percentile_list);
    }
    let bws = &ds.bw_samples;
    if bws.n > 0 {
        let agg_kib = group
            .map(|g| g.dir[d].agg_bw as f64 / 1024.0)
            .unwrap_or(0.0);
        let per = if agg_kib > 0.0 {
            bws.mean() * 100.0 / agg_kib
        } else {
            0.0
        };
        let (scale, unit) = if bws.max >= 1 << 20 {
            (1024.0, "MiB")
        } else {
            (1.0, "KiB")
        };
        let _ = writeln!(
            out,
            "   bw ({:>5}/s): min={:5}, max={:5}, per={:3.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
            unit,
            (bws.min as f64 / scale) as u64,
            (bws.max as f64 / scale) as u64,
            per,
            bws.mean() / scale,
            bws.stddev() / scale,
            bws.n
        );
    }
    let is = &ds.iops_samples;
    if is.n > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            is.min,
            is.max,
            is.mean(),
            is.stddev(),
            is.n
        );
    }
}

fn lat_dist_lines(out: &mut String, s: &JobStats) {
    let total = s.lat_dist.total() as f64;
    if total == 0.0 {
        return;
    }
    let labels = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let groups: [(&str, &[u64]); 3] = [
        ("nsec", &s.lat_dist.nsec),
        ("usec", &s.lat_dist.usec),
        ("msec", &s.lat_dist.msec),
    ];
    for (unit, counts) in groups {
        let entries: Vec<String> = counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| {
                let label = if i < 10 {
                    labels[i].to_string()
                } else if i == 10 {
                    "2000".to_string()
                } else {
                    ">=2000".to_string()
                };
                format!("{label}={:.2}%", (*c as f64 * 100.0 / total).max(0.01))
            })
            .collect();
        for chunk in entries.chunks(5) {
            let _ = writeln!(out, "  lat ({unit})   : {}", chunk.join(", "));
        }
    }
}

fn dist_line(vals: &[u64; 7], total: u64, labels: [&str; 7]) -> String {
    labels
        .iter()
        .zip(vals)
        .map(|(l, v)| {
            let pct = if total == 0 {
                0.0
            } else {
                *v as f64 * 100.0 / total as f64
            };
            format!("{l}={pct:.1}%")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The block for one reported job.
pub fn job_block(r: &JobReport, report: &Report, pid: u32) -> String {
    let mut out = String::new();
    let s = &r.stats;
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
        r.name,
        r.groupid,
        r.nr_jobs,
        r.error,
        pid,
        ctime(r.start_unix_ms / 1000)
    );
    if let Some(msg) = &r.error_msg {
        let _ = writeln!(out, "  error: {msg}");
    }
    if !r.spec.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", r.spec.description);
    }
    let group = report.group(r.groupid);
    for d in 0..3 {
        if s.dir[d].ios > 0 {
            dir_block(&mut out, r, d, group);
        }
    }
    lat_dist_lines(&mut out, s);
    if s.sync_ios > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(&mut out, "sync", &s.sync_lat);
        percentile_block(&mut out, "sync", &s.sync_lat, &r.spec.stat.percentile_list);
    }
    let rt = (s.runtime_ms.max(1) * r.nr_jobs as u64) as f64;
    let _ = writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
        s.usr_us as f64 / 10.0 / rt,
        s.sys_us as f64 / 10.0 / rt,
        s.ctx,
        s.majf,
        s.minf
    );
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        dist_line(
            &s.depth,
            s.depth_total,
            ["1", "2", "4", "8", "16", "32", ">=64"]
        )
    );
    let labels = ["0", "4", "8", "16", "32", "64", ">=64"];
    let _ = writeln!(
        out,
        "     submit    : {}",
        dist_line(&s.submit, s.submit_calls, labels)
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        dist_line(&s.complete, s.complete_calls, labels)
    );
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        s.dir[0].ios,
        s.dir[1].ios,
        s.dir[2].ios,
        s.sync_ios,
        s.dir[0].short_ios,
        s.dir[1].short_ios,
        s.dir[2].short_ios,
        s.dir[0].drop_ios,
        s.dir[1].drop_ios,
        s.dir[2].drop_ios
    );
    let st = &r.spec.stat;
    let _ = writeln!(
        out,
        "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
        st.latency_target_us * 1000,
        st.latency_window_us * 1000,
        st.latency_percentile,
        r.spec.io.iodepth
    );
    out
}

/// The "Run status group" block.
pub fn group_block(g: &GroupReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Run status group {} (all jobs):", g.id);
    let kb = g.kb_base;
    for d in 0..3 {
        let gd = &g.dir[d];
        if gd.max_run == 0 && gd.io_bytes == 0 {
            continue;
        }
        let (a, b) = (
            num2str(gd.min_bw as f64, 4, 1024, "B/s"),
            num2str(gd.max_bw as f64, 4, 1024, "B/s"),
        );
        let (c, e) = (
            num2str(gd.min_bw as f64, 4, 1000, "B/s"),
            num2str(gd.max_bw as f64, 4, 1000, "B/s"),
        );
        let range = if kb == 1000 {
            format!("{c}-{e} ({a}-{b})")
        } else {
            format!("{a}-{b} ({c}-{e})")
        };
        let _ = writeln!(
            out,
            "{:>7}: bw={}, {}, io={}, run={}-{}msec",
            DDIR_UPPER[d],
            bw_pair(gd.agg_bw, kb),
            range,
            super::fmt::bytes_pair(gd.io_bytes, kb),
            gd.min_run,
            gd.max_run
        );
    }
    out
}

/// The whole normal report (everything after the run).
pub fn render(report: &Report) -> String {
    let pid = std::process::id();
    let mut out = String::new();
    for r in &report.jobs {
        out.push('\n');
        out.push_str(&job_block(r, report, pid));
    }
    for g in &report.groups {
        out.push('\n');
        out.push_str(&group_block(g));
    }
    if report.interrupted {
        out.push_str("\nRun interrupted: the figures cover the time until the stop.\n");
    }
    out
}
