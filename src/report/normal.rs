//! The normal (human) text report, laid out like fio's: a block per job
//! with IOPS, bandwidth, latency summaries and percentiles, bandwidth and
//! IOPS samples, latency distribution, CPU, queue depths, then one
//! "Run status group" block per group and the disk statistics.
//!
//! Layout only: every figure comes from the report model.

use std::fmt::Write;

use super::fmt::{ctime_in, lat_unit, num2str, pct_unit, Units};
use super::{bw_bytes, GroupDir, GroupReport, JobReport, Report, Section, UNIFIED_MIXED};
use crate::job::spec::{BlockSizes, JobSpec};
use crate::stats::disk::DiskReport;
use crate::stats::histogram::Histogram;
use crate::stats::samples::SampleStats;
use crate::stats::steady::SteadyResult;
use crate::stats::{DirStats, JobStats};

const GROUP_LABELS: [&str; 4] = ["   READ", "  WRITE", "   TRIM", "  MIXED"];

fn bs_range(b: &BlockSizes, pow2: bool) -> String {
    let base = if pow2 { 1024 } else { 1000 };
    format!(
        "{}-{}",
        num2str(b.min() as f64, 4, base, "B"),
        num2str(b.max() as f64, 4, base, "B")
    )
}

/// The line printed for each job before it starts.
pub fn job_header(spec: &JobSpec, group: u32) -> String {
    let pow2 = spec.ctl.kb_base != 1000;
    format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
        spec.name,
        group,
        spec.io.rw.name(),
        bs_range(&spec.io.bs[0], pow2),
        bs_range(&spec.io.bs[1], pow2),
        bs_range(&spec.io.bs[2], pow2),
        spec.io.ioengine.name(),
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

/// `    clat (usec): min=21, max=18027, avg=75.15, stdev=441.80`
fn lat_line(out: &mut String, label: &str, h: &Histogram) {
    let s = &h.summary;
    if s.n == 0 {
        return;
    }
    let (div, unit) = lat_unit(s.min, s.max, s.stddev());
    let d = div as u64;
    let _ = writeln!(
        out,
        "    {label} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        num2str((s.min / d) as f64, 6, 1000, ""),
        num2str((s.max / d) as f64, 6, 1000, ""),
        s.mean() / div,
        s.stddev() / div
    );
}

/// The percentile block: values scaled to the largest unit that fits,
/// rounded up, as many per line as fit in 80 columns.
fn percentile_block(out: &mut String, label: &str, h: &Histogram, list: &[f64], precision: u32) {
    if h.count() == 0 || list.is_empty() {
        return;
    }
    let vals = h.percentiles(list);
    let minv = vals.iter().copied().min().unwrap_or(0);
    let maxv = vals.iter().copied().max().unwrap_or(0);
    let (div, unit) = pct_unit(minv, maxv);
    let scaled_max = maxv / div;
    let digits = if scaled_max == 0 {
        0
    } else {
        scaled_max.ilog10() as usize + 1
    };
    let time_width = digits.max(5);
    let prec = precision as usize;
    let per_line = (73 / (prec + 10 + time_width)).max(1);
    let _ = writeln!(out, "    {label} percentiles ({unit}):");
    for (j, (p, v)) in list.iter().zip(&vals).enumerate() {
        if j % per_line == 0 {
            out.push_str("     |");
        }
        let v = v.div_ceil(div);
        let last = j == list.len() - 1;
        let _ = write!(
            out,
            " {:w$.prec$}th=[{:tw$}]{}",
            p,
            v,
            if last { '\n' } else { ',' },
            w = prec + 3,
            tw = time_width
        );
        if !last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn samples_lines(
    out: &mut String,
    bws: &SampleStats,
    is: &SampleStats,
    agg_bw: u64,
    g: Units,
    kb_base: u64,
) {
    if bws.n > 0 {
        let mut per = 100.0;
        let agg_kib = agg_bw / 1024;
        if agg_kib > 0 {
            per = (bws.mean() * 100.0 / agg_kib as f64).min(100.0);
        }
        let (mut min, mut max, mut mean, mut dev) =
            (bws.min as f64, bws.max as f64, bws.mean(), bws.stddev());
        let mut unit = match (g.bits, g.pow2) {
            (true, true) => "Kibit",
            (true, false) => "kbit",
            (false, true) => "KiB",
            (false, false) => "kB",
        };
        if g.bits {
            min *= 8.0;
            max *= 8.0;
            mean *= 8.0;
            dev *= 8.0;
        }
        let kb = kb_base as f64;
        if mean > kb * kb {
            min /= kb;
            max /= kb;
            mean /= kb;
            dev /= kb;
            unit = if g.bits { "Mibit" } else { "MiB" };
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            min as u64, max as u64, bws.n
        );
    }
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

/// `CLASS/LEVEL` of a priority, as fio 3.33 names it; `CLASS/LEVEL/HINT`
/// (newer fio's form) when a priority of the direction has a hint.
fn prio_name(ds: &DirStats, v: u16) -> String {
    use crate::job::ioprio::{class, hint, level};
    if ds.prios.iter().any(|p| hint(p.ioprio) != 0) {
        format!("{}/{}/{}", class(v), level(v), hint(v))
    } else {
        format!("{}/{}", class(v), level(v))
    }
}

fn dir_block(out: &mut String, r: &JobReport, sec: &Section, report: &Report) {
    let ds: &DirStats = sec.stats;
    let spec = &r.spec;
    let st = &spec.stat;
    let units = Units::new(spec.ctl.kb_base, spec.ctl.unit_base, st.significant_figures);
    let runt = ds.runtime_ms.max(1);
    let bw = bw_bytes(ds);
    let iops = ds.ios * 1000 / runt;
    let zone = sec.label == "write";
    let resets = format!("; {} zone resets", r.stats.zone_resets);
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        sec.label,
        num2str(iops as f64, units.width, 1000, ""),
        units.rate(bw, false),
        units.rate(bw, true),
        units.bytes(ds.bytes, false),
        ds.runtime_ms,
        if zone { resets.as_str() } else { "" }
    );
    lat_line(out, "slat", &ds.slat);
    lat_line(out, "clat", &ds.clat);
    lat_line(out, " lat", &ds.lat);
    if let Some(t) = &ds.ttfb {
        lat_line(out, "ttfb", t);
    }
    if sec.label == "read" {
        object_op_line(out, r, ds);
    }
    let prios = ds.prios_with_samples() >= 2;
    let lat_type = if st.lat_percentiles { "lat" } else { "clat" };
    if prios {
        for p in ds.prios.iter().filter(|p| p.lat.count() > 0) {
            let label = format!("{lat_type} prio {}", prio_name(ds, p.ioprio));
            lat_line(out, &label, &p.lat);
        }
    }
    let list = st.percentile_list.as_slice();
    let prec = st.percentile_precision;
    if st.slat_percentiles {
        percentile_block(out, "slat", &ds.slat, list, prec);
    }
    if st.clat_percentiles {
        percentile_block(out, "clat", &ds.clat, list, prec);
    }
    if st.lat_percentiles {
        percentile_block(out, "lat", &ds.lat, list, prec);
    }
    if prios && (st.clat_percentiles || st.lat_percentiles) {
        let all = if st.lat_percentiles {
            &ds.lat
        } else {
            &ds.clat
        }
        .count();
        for p in ds.prios.iter().filter(|p| p.lat.count() > 0) {
            let label = format!(
                "{lat_type} prio {} ({:.2}% of IOs)",
                prio_name(ds, p.ioprio),
                100.0 * p.lat.count() as f64 / all.max(1) as f64
            );
            percentile_block(out, &label, &p.lat, list, prec);
        }
    }
    samples_lines(
        out,
        &ds.bw_samples,
        &ds.iops_samples,
        report.group_agg(r, sec.group_dir),
        units,
        spec.ctl.kb_base,
    );
}

const LAT_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

fn lat_dist_lines(out: &mut String, s: &JobStats) {
    let total = s.total_ios();
    if total == 0 {
        return;
    }
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
                let pct = (*c as f64 * 100.0 / total as f64).max(0.01);
                format!("{}={pct:3.2}%", LAT_LABELS[i])
            })
            .collect();
        for chunk in entries.chunks(5) {
            let _ = writeln!(out, "  lat ({unit})   : {}", chunk.join(", "));
        }
    }
}

/// Percentages of a distribution; a non-zero count shows at least 0.1%.
pub fn dist_pct(vals: &[u64], total: u64) -> Vec<f64> {
    vals.iter()
        .map(|v| {
            if total == 0 {
                0.0
            } else {
                let p = *v as f64 * 100.0 / total as f64;
                if p < 0.1 && *v > 0 {
                    0.1
                } else {
                    p
                }
            }
        })
        .collect()
}

fn dist_line(vals: &[u64; 7], total: u64, labels: [&str; 7]) -> String {
    labels
        .iter()
        .zip(dist_pct(vals, total))
        .map(|(l, pct)| format!("{l}={pct:3.1}%"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn steady_line(out: &mut String, ss: &SteadyResult, units: Units) {
    let (_, _, pct, slope, use_iops) = ss.parts();
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={}, iops={}, {}{}={:.3}{}",
        if ss.attained { "yes" } else { "no" },
        units.rate_pair(ss.bw_mean),
        num2str(ss.iops_mean as f64, units.width, 1000, ""),
        if use_iops { "iops" } else { "bw" },
        if slope { " slope" } else { " mean dev" },
        ss.criterion,
        if pct { "%" } else { "" }
    );
}

/// The block for one reported job.
pub fn job_block(r: &JobReport, report: &Report) -> String {
    block(r, report, false)
}

/// The block of an "All clients" entry (a group merged over the hosts of
/// a run spread over hosts): a job block without the latency-target line,
/// as fio's client mode writes it.
pub fn all_clients_block(r: &JobReport, report: &Report) -> String {
    block(r, report, true)
}

/// iomark addition for `http_op=head|list`: what the read figures count
/// (HEADs, or LIST pages with the objects they listed).
fn object_op_line(out: &mut String, r: &JobReport, ds: &DirStats) {
    use crate::job::spec::HttpOp;
    let _ = match super::object_op(&r.spec) {
        None | Some(HttpOp::Data) => return,
        Some(HttpOp::Head) => writeln!(
            out,
            "    requests: HEAD, {} (object metadata only: no data moved)",
            ds.ios
        ),
        Some(HttpOp::List) => writeln!(
            out,
            "    requests: LIST, {} pages of up to {} keys; objects listed={} ({:.0}/s)",
            ds.ios,
            r.spec.engine.http.list_max_keys,
            r.stats.objects_listed,
            super::listed_per_s(r.stats.objects_listed, ds)
        ),
    };
}

/// iomark addition for http jobs: the requests sent again because the
/// server said it was busy (their pauses are in the latencies).
fn retries_line(out: &mut String, r: &JobReport) {
    if r.spec.io.ioengine == crate::job::EngineKind::Http {
        let _ = writeln!(
            out,
            "  retries      : {} (requests the server answered busy: HTTP 429, 500, 502, 503 SlowDown, 504)",
            r.stats.retries
        );
    }
}

/// The job's CPU use over its run time (with the engine's own threads).
fn cpu_line(out: &mut String, s: &JobStats) {
    let rt = s.runtime_ms as f64;
    let (usr, sys) = if rt > 0.0 {
        (s.usr_us as f64 / 10.0 / rt, s.sys_us as f64 / 10.0 / rt)
    } else {
        (0.0, 0.0)
    };
    let _ = writeln!(
        out,
        "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf={}, minf={}",
        s.ctx, s.majf, s.minf
    );
}

fn block(r: &JobReport, report: &Report, summary: bool) -> String {
    let mut out = String::new();
    let s = &r.stats;
    let err = match (&r.error_msg, r.error) {
        (Some(m), e) if e != 0 => format!("{e:2} ({m})"),
        (_, e) => format!("{e:2}"),
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={}: pid={}: {}",
        r.name,
        r.groupid,
        r.nr_jobs,
        err,
        r.pid,
        ctime_in(r.start_unix_ms / 1000, report.fake_clock)
    );
    if !r.spec.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", r.spec.description);
    }
    // Reads of HEADs or LIST pages move no data but are requests.
    let requests = super::object_op(&r.spec).is_some();
    for sec in r.sections() {
        if sec.stats.bytes > 0 || (requests && sec.label == "read" && sec.stats.ios > 0) {
            dir_block(&mut out, r, &sec, report);
        }
    }
    lat_dist_lines(&mut out, s);
    let st = &r.spec.stat;
    if s.sync_lat.count() > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(&mut out, "sync", &s.sync_lat);
        percentile_block(
            &mut out,
            "sync",
            &s.sync_lat,
            &st.percentile_list,
            st.percentile_precision,
        );
    }
    retries_line(&mut out, r);
    cpu_line(&mut out, s);
    let data_ios = s.total_ios();
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        dist_line(&s.depth, data_ios, ["1", "2", "4", "8", "16", "32", ">=64"])
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
    let (ios, short, drop) = issued(r);
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        ios[0], ios[1], ios[2], s.sync_ios, short[0], short[1], short[2], drop[0], drop[1], drop[2]
    );
    if r.spec.ctl.counts_errors() {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            s.total_err,
            s.first_error,
            errno_text(s.first_error)
        );
    }
    if summary {
        return out;
    }
    let _ = writeln!(
        out,
        "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
        st.latency_target_us * 1000,
        st.latency_window_us,
        st.latency_percentile,
        s.latency_depth.max(1)
    );
    if let Some(ss) = &s.steady {
        let units = Units::new(
            r.spec.ctl.kb_base,
            r.spec.ctl.unit_base,
            st.significant_figures,
        );
        steady_line(&mut out, ss, units);
    }
    out
}

/// The error text of an errno (`Success` for 0).
pub fn errno_text(e: i32) -> String {
    crate::sys::errno_text(e)
}

/// Issued, short and dropped I/O per direction; with
/// `unified_rw_reporting=mixed` everything is counted as the first.
pub fn issued(r: &JobReport) -> ([u64; 3], [u64; 3], [u64; 3]) {
    let s = &r.stats;
    if r.unified() == UNIFIED_MIXED {
        let m = r.mixed.as_ref();
        let g = |f: fn(&DirStats) -> u64| [m.map(f).unwrap_or(0), 0, 0];
        return (g(|d| d.ios), g(|d| d.short_ios), g(|d| d.drop_ios));
    }
    (
        [0, 1, 2].map(|d| s.dir[d].ios),
        [0, 1, 2].map(|d| s.dir[d].short_ios),
        [0, 1, 2].map(|d| s.dir[d].drop_ios),
    )
}

/// The "Run status group" block.
pub fn group_block(g: &GroupReport) -> String {
    group_block_of(g, "all jobs")
}

/// The "Run status group" block, saying whose jobs it sums up (`all
/// jobs`; over the hosts of a run spread over hosts, `all clients`).
pub fn group_block_of(g: &GroupReport, whose: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Run status group {} ({whose}):", g.id);
    let units = Units::new(g.kb_base, g.unit_base, g.sig_figs);
    let dirs: &[usize] = match g.unified {
        UNIFIED_MIXED => &[3],
        super::UNIFIED_BOTH => &[0, 1, 2, 3],
        _ => &[0, 1, 2],
    };
    for &d in dirs {
        let gd: &GroupDir = &g.dir[d];
        if gd.max_run == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            GROUP_LABELS[d],
            units.rate(gd.agg_bw, false),
            units.rate(gd.agg_bw, true),
            units.rate(gd.min_bw, false),
            units.rate(gd.max_bw, false),
            units.rate(gd.min_bw, true),
            units.rate(gd.max_bw, true),
            units.bytes(gd.io_bytes, false),
            units.bytes(gd.io_bytes, true),
            gd.min_run,
            gd.max_run
        );
    }
    out
}

/// `Disk stats` lines: devices with underlying devices first-indented
/// deeper and followed by their aggregate figures.
pub fn disk_lines(disks: &[DiskReport]) -> String {
    let mut out = String::new();
    for d in disks {
        let c = &d.delta;
        let indent = if d.aggr.is_some() { "    " } else { "  " };
        let _ = write!(
            out,
            "{indent}{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
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
                ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
                a.ios[0], a.ios[1], a.merges[0], a.merges[1], a.ticks[0], a.ticks[1], a.in_queue, a.max_util
            );
        }
        out.push('\n');
    }
    out
}

/// The whole normal report (everything after the run).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    if !report.jobs.is_empty() {
        out.push('\n');
    }
    for r in &report.jobs {
        out.push_str(&job_block(r, report));
    }
    for g in &report.groups {
        out.push('\n');
        out.push_str(&group_block(g));
    }
    if !report.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        out.push_str(&disk_lines(&report.disks));
    }
    if report.interrupted {
        out.push_str("\nRun interrupted: the figures cover the time until the stop.\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_lines_match_fio_layout() {
        let mut h = Histogram::new();
        for v in [26_000u64, 28_000, 29_000, 5_473_000, 16_909_000] {
            for _ in 0..20 {
                h.record(v);
            }
        }
        let mut out = String::new();
        percentile_block(
            &mut out,
            "clat",
            &h,
            &crate::job::spec::DEFAULT_PERCENTILES,
            2,
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "    clat percentiles (usec):");
        assert_eq!(lines.len(), 6);
        assert!(lines[1].starts_with("     |  1.00th=[   26],  5.00th=[   26], 10.00th=[   26],"));
        assert!(lines[5].starts_with("     | 99.99th=[16909]"));
        let mut out = String::new();
        percentile_block(&mut out, "clat", &h, &[50.0, 99.999, 99.9999], 4);
        assert!(out.ends_with("     | 50.0000th=[   30], 99.9990th=[16909], 99.9999th=[16909]\n"));
    }

    #[test]
    fn distribution_minimum() {
        assert_eq!(dist_pct(&[1, 9999], 10000), vec![0.1, 99.99]);
    }
}
