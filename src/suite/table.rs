//! The terminal results table: one row per test and direction with the
//! median of the measured passes, the min–max spread of bandwidth, IOPS,
//! mean and 99th-percentile latency.
//!
//! **Units**: one bandwidth unit per report, named in the table's header
//! ([`BwUnit`]): CrystalDiskMark-style results (`quick`, the
//! crystaldiskmark presets: tests named like `SEQ1M Q8T1`) are in MB/s of
//! 10⁶ bytes, as CrystalDiskMark shows them, in the terminal and in every
//! table and chart of their HTML report; everything else is in MiB/s of
//! 2²⁰ bytes, as fio's figures.

use crate::results::dataset::Metrics;
use crate::results::stats;
pub use crate::results::units::{iops, latency, method, mib, BwUnit};

pub fn header(label_width: usize, unit: BwUnit) -> String {
    format!(
        "{:<w$}  {:>9}  {:<19}  {:>9}  {:>9}  {:>9}\n",
        "Test",
        unit.name(),
        "(min–max)",
        "IOPS",
        "mean lat",
        "p99 lat",
        w = label_width
    )
}

/// One row: medians over the passes, bandwidth spread as min–max.
pub fn row(label: &str, label_width: usize, passes: &[Metrics], unit: BwUnit) -> String {
    let s = |f: fn(&Metrics) -> f64| {
        stats::summarize(
            &passes
                .iter()
                .map(f)
                .filter(|v| v.is_finite())
                .collect::<Vec<_>>(),
        )
    };
    let bw = s(|m| m.bw_bytes);
    let spread = if bw.n > 1 {
        format!("({}–{})", unit.text(bw.min), unit.text(bw.max))
    } else {
        String::new()
    };
    let lat = s(|m| m.lat_mean_ns);
    let p99 = s(|m| m.lat_p99_ns);
    let io = s(|m| m.iops);
    let na =
        |x: &stats::Summary, f: fn(f64) -> String| if x.n == 0 { "-".into() } else { f(x.median) };
    let mut out = format!(
        "{:<w$}  {:>9}  {:<19}  {:>9}  {:>9}  {:>9}\n",
        label,
        if bw.n == 0 {
            "-".into()
        } else {
            unit.text(bw.median)
        },
        spread,
        na(&io, iops),
        na(&lat, latency),
        na(&p99, latency),
        w = label_width
    );
    if passes.iter().any(|m| m.sync_write) {
        out.push_str(&format!(
            "{:<w$}  (latency: a write plus the sync that makes it durable)\n",
            "",
            w = label_width
        ));
    }
    out
}

/// The header of an object run's table: requests, not I/Os, with the
/// median latency and the time to first byte.
pub fn object_header(label_width: usize, unit: BwUnit) -> String {
    format!(
        "{:<w$}  {:>9}  {:<19}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "Test",
        unit.name(),
        "(min–max)",
        "req/s",
        "p50 lat",
        "p99 lat",
        "p99 ttfb",
        w = label_width
    )
}

/// One row of an object run: medians over the passes of bandwidth,
/// requests per second, p50 and p99 latency and p99 time to first byte
/// (`p50` and `ttfb99` by pass, NaN where a pass has none).
pub fn object_row(
    label: &str,
    label_width: usize,
    passes: &[Metrics],
    p50: &[f64],
    ttfb99: &[f64],
    unit: BwUnit,
) -> String {
    let med = |v: Vec<f64>| {
        let s = stats::summarize(&v.into_iter().filter(|x| x.is_finite()).collect::<Vec<_>>());
        (s.n > 0).then_some(s)
    };
    let bw = med(passes.iter().map(|m| m.bw_bytes).collect());
    let spread = match &bw {
        Some(s) if s.n > 1 => format!("({}–{})", unit.text(s.min), unit.text(s.max)),
        _ => String::new(),
    };
    let text =
        |s: Option<stats::Summary>, f: fn(f64) -> String| s.map_or("-".into(), |s| f(s.median));
    format!(
        "{:<w$}  {:>9}  {:<19}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        label,
        bw.map_or("-".into(), |s| unit.text(s.median)),
        spread,
        text(med(passes.iter().map(|m| m.iops).collect()), iops),
        text(med(p50.to_vec()), latency),
        text(med(passes.iter().map(|m| m.lat_p99_ns).collect()), latency),
        text(med(ttfb99.to_vec()), latency),
        w = label_width
    )
}

/// The line under a LIST row: the objects the pages listed, per second
/// (median over the passes) and in all.
pub fn listed_row(label_width: usize, listed: &[(u64, f64)]) -> String {
    let rate = stats::summarize(&listed.iter().map(|l| l.1).collect::<Vec<_>>());
    let total: u64 = listed.iter().map(|l| l.0).sum();
    format!(
        "{:<w$}  objects listed: {}/s, {total} in all\n",
        "",
        iops(rate.median),
        w = label_width
    )
}

/// The line under a row of a run on many ranks: the range of bandwidth
/// and IOPS over the hosts (or the ranks, on one host).
pub fn spread_row(label_width: usize, sp: &super::runner::Spread, unit: BwUnit) -> String {
    format!(
        "{:<w$}  over {} {}s: {} {}–{}, IOPS {}–{}\n",
        "",
        sp.clients,
        sp.unit,
        unit.name(),
        unit.text(sp.bw_bytes.0),
        unit.text(sp.bw_bytes.1),
        iops(sp.iops.0),
        iops(sp.iops.1),
        w = label_width
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_show_medians_and_spread() {
        let m = |bw: f64, lat: f64| Metrics {
            bw_bytes: bw * 1048576.0,
            iops: bw * 256.0,
            lat_mean_ns: lat,
            lat_p99_ns: lat * 2.0,
            sync_write: false,
        };
        let r = row(
            "RND4K Q1T1 read",
            20,
            &[m(10.0, 50_000.0), m(12.0, 40_000.0), m(11.0, 45_000.0)],
            BwUnit::Mib,
        );
        assert!(r.starts_with("RND4K Q1T1 read "), "{r}");
        assert!(r.contains(" 11.00 "), "{r}");
        assert!(r.contains("(10.00–12.00)"), "{r}");
        assert!(r.contains("2816"), "{r}");
        assert!(r.contains("45.0µs"), "{r}");
        assert!(r.contains("90.0µs"), "{r}");
        assert_eq!(latency(1_500_000.0), "1.50ms");
        // The same figures in MB/s: 11 MiB/s is 11.53 MB/s.
        let mb = row("RND4K Q1T1 read", 20, &[m(11.0, 45_000.0)], BwUnit::Mb);
        assert!(mb.contains(" 11.53 "), "{mb}");
        assert!(header(20, BwUnit::Mb).contains(" MB/s "));
        assert!(header(20, BwUnit::Mib).contains(" MiB/s "));
        let quick = ["SEQ1M Q8T1", "RND4K Q1T1"];
        assert_eq!(BwUnit::of_tests(quick.into_iter()), BwUnit::Mb);
        let sweep = ["randread 4k QD1 J1"];
        assert_eq!(BwUnit::of_tests(sweep.into_iter()), BwUnit::Mib);
        assert_eq!(latency(f64::NAN), "-");
    }
}
