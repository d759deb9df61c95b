//! Trends: one metric of one test over time, per device, from the
//! history; with each run's spread (the range of its passes) and the
//! change points in the series.
//!
//! **Change points** (binary segmentation, documented in the README):
//! in a device's series of runs (oldest first), every split into a
//! "before" and an "after" of at least two runs each is tried; the split
//! with the largest Welch t statistic (on the logarithms of the per-run
//! values) is kept when the 99 % Welch interval of the change of the
//! geometric means lies wholly beyond ±threshold (default 5 %), the same
//! rule `compare` uses with a stricter confidence to allow for the many
//! splits tried. Then each side is searched the same way, until no split
//! qualifies. A series shorter than four runs has none.

use std::fmt::Write;

use super::{run::bins_percentile, Run, TestRun};
use crate::report::svg::esc;
use crate::results::dataset::{Metrics, METRICS};
use crate::results::stats::{self, RatioInterval};
use crate::results::units::BwUnit;

/// The confidence level change points are held to.
pub const CHANGE_ALPHA: f64 = 0.01;

/// What is drawn: a figure of the run, or a percentile of its merged
/// latency bins.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// Bandwidth, shown in this unit (MB/s for CrystalDiskMark-style
    /// tests, MiB/s otherwise, unless `--units`).
    Bw(BwUnit),
    /// IOPS, mean or p99 latency: an index in `METRICS`.
    Figure(usize),
    /// pNN from the merged histogram of the run's passes.
    Percentile(f64),
}

pub const METRIC_NAMES: &[&str] = &["bw", "iops", "lat", "p99", "pNN (e.g. p99.9)"];

impl Metric {
    pub fn parse(v: &str) -> Result<Metric, String> {
        match v {
            "bw" | "bandwidth" | "bw_bytes" => Ok(Metric::Bw(BwUnit::Mib)),
            "iops" => Ok(Metric::Figure(1)),
            "lat" | "mean" | "lat_mean_ns" => Ok(Metric::Figure(2)),
            "p99" | "lat_p99_ns" => Ok(Metric::Figure(3)),
            _ => match v.strip_prefix('p').and_then(|n| n.parse::<f64>().ok()) {
                Some(p) if p > 0.0 && p < 100.0 => Ok(Metric::Percentile(p)),
                _ => Err(format!(
                    "--metric: '{v}' is not one of: {}",
                    METRIC_NAMES.join(", ")
                )),
            },
        }
    }

    /// The metric with bandwidth in `unit`.
    pub fn in_unit(self, unit: BwUnit) -> Metric {
        match self {
            Metric::Bw(_) => Metric::Bw(unit),
            m => m,
        }
    }

    pub fn title(&self) -> String {
        match self {
            Metric::Bw(_) => METRICS[0].title.to_string(),
            Metric::Figure(i) => METRICS[*i].title.to_string(),
            Metric::Percentile(p) => format!("p{p} latency (merged bins)"),
        }
    }

    pub fn higher_is_better(&self) -> bool {
        match self {
            Metric::Bw(_) => true,
            Metric::Figure(i) => METRICS[*i].higher_is_better,
            Metric::Percentile(_) => false,
        }
    }

    /// Values in ns are latencies; others bytes/s or IOPS.
    pub fn unit(&self) -> &'static str {
        match self {
            Metric::Bw(u) => u.name(),
            Metric::Figure(1) => "IOPS",
            _ => "latency",
        }
    }

    fn of(&self, m: &Metrics) -> f64 {
        match self {
            Metric::Bw(_) => m.bw_bytes,
            Metric::Figure(i) => (METRICS[*i].get)(m),
            Metric::Percentile(_) => f64::NAN,
        }
    }

    /// The run's value and its passes' range.
    fn point(&self, t: &TestRun) -> (f64, Option<(f64, f64)>) {
        match self {
            Metric::Percentile(p) => (bins_percentile(&t.bins, *p).unwrap_or(f64::NAN), None),
            _ => {
                let v: Vec<f64> = t
                    .passes
                    .iter()
                    .map(|m| self.of(m))
                    .filter(|x| x.is_finite())
                    .collect();
                let s = stats::summarize(&v);
                let range = (v.len() > 1).then_some((s.min, s.max));
                (self.of(&t.value), range)
            }
        }
    }

    /// A value in its unit, for text.
    pub fn text(&self, v: f64) -> String {
        match self {
            Metric::Bw(u) => format!("{} {}", u.text(v), u.name()),
            Metric::Figure(1) => crate::results::units::iops(v),
            _ => crate::results::units::latency(v),
        }
    }

    /// The value axis's unit: MB/s or MiB/s, IOPS, ns.
    fn axis_unit(&self) -> &'static str {
        match self {
            Metric::Bw(u) => u.name(),
            Metric::Figure(1) => "IOPS",
            _ => "time",
        }
    }

    /// What a chart's value axis is divided by: the bandwidth unit's
    /// bytes, else 1.
    fn div(&self) -> f64 {
        match self {
            Metric::Bw(u) => u.bytes(),
            _ => 1.0,
        }
    }
}

/// One run's point.
#[derive(Clone, Debug)]
pub struct Point {
    pub id: i64,
    pub time: i64,
    pub label: String,
    pub value: f64,
    pub range: Option<(f64, f64)>,
}

/// A change point: the series changes between `points[index - 1]` and
/// `points[index]`.
#[derive(Clone, Debug)]
pub struct Change {
    pub index: usize,
    pub interval: RatioInterval,
}

/// One device's series.
#[derive(Clone, Debug)]
pub struct Series {
    /// "model (serial) on host".
    pub device: String,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

/// The device a run measured: model (serial) on host.
fn device_of(r: &Run) -> String {
    let mut s = r.device_shown();
    if s.is_empty() {
        s = "(unknown device)".into();
    }
    if !r.target.serial.is_empty() {
        s.push_str(&format!(" ({})", r.target.serial));
    }
    format!("{s} on {}", if r.host.is_empty() { "?" } else { &r.host })
}

/// The split of `v[from..to]` with the largest |t| that qualifies.
fn best_split(v: &[f64], from: usize, to: usize, threshold: f64) -> Option<Change> {
    let mut best: Option<(f64, Change)> = None;
    for k in from + 2..=to.saturating_sub(2) {
        let (a, b) = (&v[from..k], &v[k..to]);
        let Some(iv) = stats::ratio_interval(a, b, CHANGE_ALPHA) else {
            continue;
        };
        let beyond = iv.lo > threshold || iv.hi < -threshold;
        if !beyond {
            continue;
        }
        let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        let t = stats::welch(&la, &lb).map_or(f64::INFINITY, |w| w.t.abs());
        if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
            best = Some((
                t,
                Change {
                    index: k,
                    interval: iv,
                },
            ));
        }
    }
    best.map(|(_, c)| c)
}

/// The change points of a series of positive values (see the module
/// doc), by index, ascending.
pub fn change_points(v: &[f64], threshold: f64) -> Vec<Change> {
    let mut out = Vec::new();
    let mut stack = vec![(0, v.len())];
    while let Some((from, to)) = stack.pop() {
        if to - from < 4 {
            continue;
        }
        if let Some(c) = best_split(v, from, to, threshold) {
            stack.push((from, c.index));
            stack.push((c.index, to));
            out.push(c);
        }
    }
    out.sort_by_key(|c| c.index);
    out
}

/// The series of test `key` per device, oldest first.
pub fn series(runs: &[Run], key: &str, metric: &Metric, threshold_pct: f64) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in runs {
        let Some(t) = r.test(key) else {
            continue;
        };
        let (value, range) = metric.point(t);
        if !(value.is_finite() && value > 0.0) {
            continue;
        }
        let dev = device_of(r);
        let p = Point {
            id: r.id.unwrap_or(0),
            time: r.time,
            label: r.label.clone().unwrap_or_default(),
            value,
            range,
        };
        match out.iter_mut().find(|s| s.device == dev) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                device: dev,
                points: vec![p],
                changes: Vec::new(),
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by_key(|p| (p.time, p.id));
        let v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        s.changes = change_points(&v, threshold_pct / 100.0);
    }
    out
}

fn pct(v: f64) -> String {
    format!("{:+.1}%", v * 100.0)
}

/// The terminal summary.
pub fn text(title: &str, metric: &Metric, all: &[Series]) -> String {
    // Names as read back from the history, shown escaped: one line each.
    use crate::job::error::printable;
    let mut s = format!("iomark trend: {}, {}\n", printable(title), metric.title());
    for sr in all {
        let _ = writeln!(
            s,
            "\n{} ({} run(s))",
            printable(&sr.device),
            sr.points.len()
        );
        let lw = sr
            .points
            .iter()
            .map(|p| printable(&p.label).chars().count())
            .max()
            .unwrap_or(5)
            .clamp(5, 20);
        let _ = writeln!(
            s,
            "  {:>5}  {:<16}  {:<lw$}  {:>14}  passes",
            "run",
            "time",
            "label",
            metric.title()
        );
        for (i, p) in sr.points.iter().enumerate() {
            if let Some(c) = sr.changes.iter().find(|c| c.index == i) {
                let _ = writeln!(
                    s,
                    "  ---- change: {} [{}, {}] ----",
                    pct(c.interval.change),
                    pct(c.interval.lo),
                    pct(c.interval.hi)
                );
            }
            let range = p
                .range
                .map(|(a, b)| format!("{}–{}", metric.text(a), metric.text(b)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {:>5}  {:<16}  {:<lw$}  {:>14}  {range}",
                format!("#{}", p.id),
                super::time::short_local(p.time),
                printable(&p.label),
                metric.text(p.value),
            );
        }
        let v: Vec<f64> = sr.points.iter().map(|p| p.value).collect();
        let sum = stats::summarize(&v);
        let _ = writeln!(
            s,
            "  median {}, range {} to {}; {}",
            metric.text(sum.median),
            metric.text(sum.min),
            metric.text(sum.max),
            match sr.changes.len() {
                0 => "no change point".to_string(),
                n => format!("{n} change point(s)"),
            }
        );
    }
    s
}

/// One device's chart: each run a dot (its figure) with a bar over its
/// passes' range, joined in time order; change points as dashed
/// vertical lines with the change; the mean of each segment as a
/// horizontal line.
#[allow(clippy::too_many_lines)]
fn chart(metric: &Metric, sr: &Series) -> String {
    let (w, h) = (900.0, 360.0);
    let (l, r, t, b) = (80.0, 24.0, 52.0, 48.0);
    let div = metric.div();
    let vals = sr.points.iter().flat_map(|p| {
        let mut v = vec![p.value];
        if let Some((a, b)) = p.range {
            v.extend([a, b]);
        }
        v
    });
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in vals {
        lo = lo.min(v / div);
        hi = hi.max(v / div);
    }
    let pad = ((hi - lo) * 0.1).max(hi * 0.02).max(1e-9);
    // Round ticks, the axis from the first to the last.
    let (lo, hi, ticks) = crate::report::svg::round_ticks((lo - pad).max(0.0), hi + pad, false);
    let n = sr.points.len();
    let (t0, t1) = (sr.points[0].time as f64, sr.points[n - 1].time as f64);
    // Runs far apart and close together: spread evenly by order when the
    // times would pile points up, else by time.
    let by_time = t1 > t0;
    let x = |i: usize, time: i64| {
        let f = if by_time {
            (time as f64 - t0) / (t1 - t0)
        } else if n > 1 {
            i as f64 / (n - 1) as f64
        } else {
            0.5
        };
        l + f * (w - l - r)
    };
    let y = |v: f64| t + (1.0 - (v / div - lo) / (hi - lo)) * (h - t - b);
    let title = format!("{} — {}", metric.title(), sr.device);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         role=\"img\" font-family=\"sans-serif\" class=\"chart line-chart trend wide\"><title>{t2}</title>\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\
         <text class=\"chart-title\" x=\"{cx}\" y=\"18\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{t2}</text>\
         <text class=\"subtitle\" font-size=\"10\" fill=\"#444444\" text-anchor=\"middle\"><tspan x=\"{cx}\" y=\"33\">each run: its figure (dot) and the range of its passes (bar)</tspan></text>",
        t2 = esc(&title),
        cx = w / 2.0
    );
    // Axes, value ticks.
    let _ = write!(
        s,
        "<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{yb}\" stroke=\"#444\"/><line x1=\"{l}\" y1=\"{yb}\" x2=\"{xr}\" y2=\"{yb}\" stroke=\"#444\"/>",
        yb = h - b,
        xr = w - r
    );
    for v in ticks {
        let yy = y(v * div);
        let label = match metric.axis_unit() {
            "time" => crate::report::svg::nanos_label(v),
            _ => crate::report::svg::num(v),
        };
        let _ = write!(
            s,
            "<line x1=\"{l}\" y1=\"{yy:.1}\" x2=\"{xr}\" y2=\"{yy:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            l - 6.0,
            yy + 3.0,
            esc(&label),
            xr = w - r
        );
    }
    let _ = write!(
        s,
        "<text class=\"axis-title y\" transform=\"translate(14,{:.1}) rotate(-90)\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
        (t + h - b) / 2.0,
        esc(&format!("{} ({})", metric.title(), metric.axis_unit()))
    );
    let _ = write!(
        s,
        "<text class=\"axis-title x\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">time (runs {})</text>",
        (l + w - r) / 2.0,
        h - 8.0,
        if by_time { "at their dates" } else { "in order" }
    );
    // Segment means.
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(sr.changes.iter().map(|c| c.index));
    bounds.push(n);
    for win in bounds.windows(2) {
        let seg = &sr.points[win[0]..win[1]];
        let m = seg.iter().map(|p| p.value.ln()).sum::<f64>() / seg.len() as f64;
        let yy = y(m.exp());
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#7fb3d5\" stroke-width=\"2\"/>",
            x(win[0], seg[0].time),
            x(win[1] - 1, seg[seg.len() - 1].time)
        );
    }
    // Change points.
    for c in &sr.changes {
        let (a, bp) = (&sr.points[c.index - 1], &sr.points[c.index]);
        let xx = (x(c.index - 1, a.time) + x(c.index, bp.time)) / 2.0;
        let _ = write!(
            s,
            "<line x1=\"{xx:.1}\" y1=\"{t}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"#c0392b\" stroke-dasharray=\"5,4\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#c0392b\">{}</text>",
            h - b,
            xx + 4.0,
            t + 10.0,
            esc(&format!(
                "change {} [{}, {}]",
                pct(c.interval.change),
                pct(c.interval.lo),
                pct(c.interval.hi)
            ))
        );
    }
    // The runs.
    let path: Vec<String> = sr
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i, p.time), y(p.value)))
        .collect();
    let _ = write!(
        s,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f4e79\" stroke-width=\"1.5\"/>",
        path.join(" ")
    );
    for (i, p) in sr.points.iter().enumerate() {
        let xx = x(i, p.time);
        if let Some((a, bb)) = p.range {
            let _ = write!(
                s,
                "<line x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"#1f4e79\" stroke-width=\"1\"/>\
                 <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f4e79\"/>\
                 <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f4e79\"/>",
                y(a),
                y(bb),
                xx - 4.0,
                y(a),
                xx + 4.0,
                y(a),
                xx - 4.0,
                y(bb),
                xx + 4.0,
                y(bb)
            );
        }
        let _ = write!(
            s,
            "<circle cx=\"{xx:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#1f4e79\"><title>#{} {} {}: {}</title></circle>",
            y(p.value),
            p.id,
            esc(&super::time::short_local(p.time)),
            esc(&p.label),
            esc(&metric.text(p.value))
        );
    }
    // First and last dates under the axis.
    for (i, anchor) in [(0usize, "start"), (n - 1, "end")] {
        let p = &sr.points[i];
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"{anchor}\">{}</text>",
            x(i, p.time),
            h - b + 14.0,
            esc(&super::time::short_local(p.time))
        );
    }
    // Legend.
    let _ = write!(
        s,
        "<g class=\"legend\" font-size=\"10\"><line class=\"swatch\" x1=\"{l}\" y1=\"42\" x2=\"{:.0}\" y2=\"42\" stroke=\"#1f4e79\" stroke-width=\"2\"/>\
         <text x=\"{:.0}\" y=\"45\">runs</text><line class=\"swatch\" x1=\"{:.0}\" y1=\"42\" x2=\"{:.0}\" y2=\"42\" stroke=\"#7fb3d5\" stroke-width=\"2\"/>\
         <text x=\"{:.0}\" y=\"45\">segment mean</text><line class=\"swatch\" x1=\"{:.0}\" y1=\"42\" x2=\"{:.0}\" y2=\"42\" stroke=\"#c0392b\" stroke-dasharray=\"5,4\"/>\
         <text x=\"{:.0}\" y=\"45\">change point</text></g>",
        l + 18.0,
        l + 22.0,
        l + 60.0,
        l + 78.0,
        l + 82.0,
        l + 170.0,
        l + 188.0,
        l + 192.0
    );
    s.push_str("</svg>");
    s
}

/// The HTML page: per device its chart and its table.
pub fn html(title: &str, metric: &Metric, all: &[Series], method: &str) -> String {
    let mut b = format!(
        "<h1>iomark trend</h1><p class=\"meta\">{} — {}</p><p>{}</p>",
        esc(title),
        esc(&metric.title()),
        esc(method)
    );
    for sr in all {
        let _ = write!(
            b,
            "<h2>{}</h2><div class=\"grid\">{}</div>",
            esc(&sr.device),
            chart(metric, sr)
        );
        b.push_str("<table><thead><tr><th class=\"l\">run</th><th class=\"l\">time</th><th class=\"l\">label</th><th>value</th><th>passes</th></tr></thead><tbody>");
        for p in &sr.points {
            let range = p
                .range
                .map(|(a, c)| format!("{} – {}", metric.text(a), metric.text(c)))
                .unwrap_or_default();
            let _ = write!(
                b,
                "<tr><td class=\"l\">#{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                p.id,
                esc(&super::time::short_local(p.time)),
                esc(&p.label),
                esc(&metric.text(p.value)),
                esc(&range)
            );
        }
        b.push_str("</tbody></table>");
    }
    crate::report::html::page("iomark trend", &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_one_change_point_and_noise_none() {
        let flat = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.1, 99.8];
        assert!(change_points(&flat, 0.05).is_empty());
        let step = [100.0, 101.0, 99.0, 100.5, 80.0, 81.0, 79.5, 80.2];
        let c = change_points(&step, 0.05);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 4);
        assert!(c[0].interval.hi < -0.05, "{c:?}");
        // Two steps.
        let two = [100.0, 101.0, 99.0, 80.0, 81.0, 79.0, 120.0, 121.0, 119.0];
        let c = change_points(&two, 0.05);
        assert_eq!(
            c.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![3, 6],
            "{c:?}"
        );
        // Below the threshold: no change point.
        let small = [100.0, 100.5, 99.5, 100.0, 97.0, 97.5, 96.5, 97.0];
        assert!(change_points(&small, 0.05).is_empty());
        assert!(change_points(&[1.0, 2.0, 3.0], 0.05).is_empty());
    }

    #[test]
    fn metrics_parse() {
        assert_eq!(Metric::parse("iops"), Ok(Metric::Figure(1)));
        assert_eq!(Metric::parse("p99.9"), Ok(Metric::Percentile(99.9)));
        assert!(Metric::parse("p100").is_err());
        assert!(Metric::parse("speed").is_err());
    }
}
