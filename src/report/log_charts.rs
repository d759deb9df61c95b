//! Charts of fio's per-interval logs (read by `results::logs`): bandwidth,
//! IOPS and latency over time, and latency percentiles over time from a
//! histogram log.

use crate::report::svg::{self, Axis, Format, LineChart, Scale, Series};
use crate::results::logs::{thin, JobLogs, Log, LogKind, HIST_PERCENTILES, MAX_POINTS};
use crate::results::units::BwUnit;

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// The caption of a chart of logs: which run and file(s), how the points
/// were taken.
fn caption(files: &[String], window: Option<f64>, epoch: bool) -> String {
    let mut s = format!("The run that wrote {}", files.join(", "));
    if let Some(w) = window {
        s.push_str(&format!(
            "; mean of the logged samples per {} window",
            super::html::duration_text((w * 1e6).round().max(1.0) as u64)
        ));
    }
    if epoch {
        s.push_str("; time from the first sample");
    }
    s.push('.');
    s
}

fn time_axis() -> Axis {
    Axis::new("time (s)", Scale::Linear, Format::Number)
}

/// One chart of the logs of `kinds` in a group: a series per direction
/// (and latency type).
fn value_chart(
    g: &JobLogs,
    want: fn(LogKind) -> bool,
    title: &str,
    y: Axis,
    div: f64,
) -> Option<String> {
    let logs: Vec<&Log> = g.logs.iter().filter(|l| want(l.name.kind)).collect();
    let mut series = Vec::new();
    let mut window: Option<f64> = None;
    for l in &logs {
        for (d, pts) in l.dirs.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
            let (pts, w) = thin(pts, MAX_POINTS);
            if let Some(w) = w {
                window = Some(window.map_or(w, |x: f64| x.max(w)));
            }
            let name = match l.name.kind {
                LogKind::Latency(t) => format!("{} {t}", DIRS[d]),
                _ => DIRS[d].to_string(),
            };
            series.push(Series {
                name,
                points: pts.iter().map(|(t, v)| (*t, v / div)).collect(),
                // Total latency dashed: it runs close to completion latency.
                dashed: l.name.kind == LogKind::Latency("lat"),
                color: Some(series.len()),
                ..Series::default()
            });
        }
    }
    if series.is_empty() {
        return None;
    }
    let files: Vec<String> = logs.iter().map(|l| l.file()).collect();
    Some(svg::line_chart(&LineChart {
        title: title.to_string(),
        subtitle: caption(&files, window, logs.iter().any(|l| l.from_epoch)),
        x: time_axis(),
        y,
        series,
        width: 460,
        height: 240,
    }))
}

/// Latency percentiles over time from a histogram log, one chart per
/// direction.
fn hist_charts(l: &Log) -> Vec<String> {
    let mut out = Vec::new();
    for (d, pts) in l.hist.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
        let series = HIST_PERCENTILES
            .iter()
            .enumerate()
            .map(|(i, p)| Series {
                name: format!("p{}", svg::digits(*p)),
                points: pts.iter().map(|(t, v)| (*t, v[i])).collect(),
                markers: pts.len() <= 60,
                color: Some(i),
                ..Series::default()
            })
            .collect();
        // A bin of `step` buckets spans step/64 of its value (above 128 ns).
        let within = l.hist_step as f64 / 64.0 / 2.0 * 100.0;
        let mut sub = caption(&[l.file()], None, l.from_epoch);
        sub.pop();
        sub.push_str(&format!(
            ": each point a percentile of the completions in one logged interval (bin \
             midpoints, within {within:.1}%)."
        ));
        out.push(svg::line_chart(&LineChart {
            title: format!("Completion latency percentiles over time — {}", DIRS[d]),
            subtitle: sub,
            x: time_axis(),
            y: Axis::new("completion latency (log)", Scale::Log10, Format::Nanos),
            series,
            width: 460,
            height: 240,
        }));
    }
    out
}

/// The charts of one job's logs: bandwidth (in `unit`), IOPS, latency,
/// and latency percentiles over time from its histogram log.
pub fn charts(g: &JobLogs, unit: BwUnit) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(value_chart(
        g,
        |k| k == LogKind::Bandwidth,
        "Bandwidth over time",
        Axis::new(unit.name(), Scale::Linear, Format::Number),
        // KiB/s in the log.
        unit.bytes() / 1024.0,
    ));
    out.extend(value_chart(
        g,
        |k| k == LogKind::Iops,
        "IOPS over time",
        Axis::new("IOPS", Scale::Linear, Format::Number),
        1.0,
    ));
    out.extend(value_chart(
        g,
        |k| matches!(k, LogKind::Latency(_)),
        "Latency over time",
        Axis::new("latency (log)", Scale::Log10, Format::Nanos),
        1.0,
    ));
    for l in g.logs.iter().filter(|l| l.name.kind == LogKind::Histogram) {
        out.extend(hist_charts(l));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::logs::parse;
    use crate::stats::histogram::{Histogram, NR};

    #[test]
    fn histogram_logs_draw_their_percentiles_per_direction() {
        let mut h = Histogram::new();
        for v in [100_000, 100_000, 1_000_000, 10_000_000] {
            h.record(v);
        }
        let bins: Vec<String> = h.buckets()[..NR].iter().map(|n| n.to_string()).collect();
        let l = parse(
            &format!("500, 0, 4096, {}\n", bins.join(", ")),
            "h_clat_hist.1.log",
        )
        .unwrap();
        let chart = hist_charts(&l).concat();
        assert!(
            chart.contains("p99.9") && chart.contains("— read"),
            "{chart}"
        );
    }
}
