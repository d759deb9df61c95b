//! The terminal results table: one row per test and direction with the
//! median of the measured passes, the min–max spread of bandwidth, IOPS,
//! mean and 99th-percentile latency.

use super::dataset::Metrics;
use super::stats;

/// `123ns`, `45.6µs`, `1.23ms`, `1.50s`.
pub fn latency(ns: f64) -> String {
    if !ns.is_finite() {
        "-".into()
    } else if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1}µs", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

pub fn mib(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() {
        return "-".into();
    }
    let v = bytes_per_s / 1048576.0;
    if v >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn iops(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub fn header(label_width: usize) -> String {
    format!(
        "{:<w$}  {:>9}  {:<19}  {:>9}  {:>9}  {:>9}\n",
        "Test",
        "MiB/s",
        "(min–max)",
        "IOPS",
        "mean lat",
        "p99 lat",
        w = label_width
    )
}

/// One row: medians over the passes, bandwidth spread as min–max.
pub fn row(label: &str, label_width: usize, passes: &[Metrics]) -> String {
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
        format!("({}–{})", mib(bw.min), mib(bw.max))
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
        na(&bw, mib),
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

/// The line under a row of a run on many ranks: the range of bandwidth
/// and IOPS over the hosts (or the ranks, on one host).
pub fn spread_row(label_width: usize, sp: &super::runner::Spread) -> String {
    format!(
        "{:<w$}  over {} {}s: MiB/s {}–{}, IOPS {}–{}\n",
        "",
        sp.clients,
        sp.unit,
        mib(sp.bw_bytes.0),
        mib(sp.bw_bytes.1),
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
        );
        assert!(r.starts_with("RND4K Q1T1 read "), "{r}");
        assert!(r.contains(" 11.00 "), "{r}");
        assert!(r.contains("(10.00–12.00)"), "{r}");
        assert!(r.contains("2816"), "{r}");
        assert!(r.contains("45.0µs"), "{r}");
        assert!(r.contains("90.0µs"), "{r}");
        assert_eq!(latency(1_500_000.0), "1.50ms");
        assert_eq!(latency(f64::NAN), "-");
    }
}
