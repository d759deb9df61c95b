//! The charts of a sweep (bandwidth, IOPS and p99 latency against the
//! swept value, with the knee of each series), drawn from the "sweep"
//! object of a results bundle, inline in the HTML report and as `--svg`
//! files.

use std::fmt::Write;

use serde_json::Value;

use super::svg::{self, Axis, Format, LineChart, Scale, Series};
use crate::results::units::BwUnit;

/// The share of the series' best median IOPS the knee reaches.
pub const KNEE_SHARE: f64 = 0.90;
pub const KNEE_RULE: &str =
    "the smallest value whose median IOPS reaches 90% of the best median IOPS of its series";

/// Points grouped by series name, each sorted by x, in first-seen order.
pub fn group(points: &[Value]) -> Vec<(String, Vec<Value>)> {
    let mut g: Vec<(String, Vec<Value>)> = Vec::new();
    for p in points {
        let name = p["series"].as_str().unwrap_or("").to_string();
        match g.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(p.clone()),
            None => g.push((name, vec![p.clone()])),
        }
    }
    for (_, v) in &mut g {
        v.sort_by(|a, b| {
            a["x"]
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b["x"].as_f64().unwrap_or(0.0))
        });
    }
    g
}

/// Charts of bandwidth, IOPS and p99 latency against the swept value,
/// one line per series with min–max bars: (file suffix, svg). They are
/// inline in the HTML report; `--svg` also writes them as files.
pub fn sweep_charts(sweep: &Value, unit: BwUnit) -> Vec<(&'static str, String)> {
    let x = sweep["x"].as_str().unwrap_or("iodepth");
    let (x_label, x_scale, x_fmt) = match x {
        "bs" => ("block size", Scale::Log2, Format::Bytes),
        "numjobs" => ("jobs (numjobs)", Scale::Log2, Format::Number),
        _ => ("queue depth (iodepth)", Scale::Log2, Format::Number),
    };
    let pts = sweep["points"].as_array().cloned().unwrap_or_default();
    let groups = group(&pts);
    let knees: Vec<(String, f64)> = sweep["knees"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| Some((k["series"].as_str()?.to_string(), k["knee"].as_f64()?)))
        .collect();
    let mut out = Vec::new();
    for (suffix, key, title, y_label, scale, fmt, div) in [
        (
            "bw",
            "bw_bytes",
            "Bandwidth",
            unit.name(),
            Scale::Linear,
            Format::Number,
            unit.bytes(),
        ),
        (
            "iops",
            "iops",
            "IOPS",
            "IOPS",
            Scale::Linear,
            Format::Number,
            1.0,
        ),
        (
            "lat",
            "lat_p99_ns",
            "p99 latency",
            "p99 latency (log)",
            Scale::Log10,
            Format::Nanos,
            1.0,
        ),
    ] {
        let mut series = Vec::new();
        for (i, (name, g)) in groups.iter().enumerate() {
            let val = |p: &Value, f: &str| p[key][f].as_f64().unwrap_or(f64::NAN) / div;
            series.push(Series {
                name: name.clone(),
                points: g
                    .iter()
                    .map(|p| (p["x"].as_f64().unwrap_or(0.0), val(p, "median")))
                    .collect(),
                ranges: g
                    .iter()
                    .filter(|p| p[key]["n"].as_u64().unwrap_or(0) > 1)
                    .map(|p| (p["x"].as_f64().unwrap_or(0.0), val(p, "min"), val(p, "max")))
                    .collect(),
                markers: true,
                color: Some(i),
                ..Series::default()
            });
            if key != "lat_p99_ns" {
                if let Some((_, k)) = knees.iter().find(|(n, _)| n == name) {
                    if let Some(p) = g.iter().find(|p| p["x"].as_f64() == Some(*k)) {
                        series.push(Series {
                            name: format!("knee ({name}): {k}"),
                            points: vec![(*k, val(p, "median"))],
                            markers: true,
                            color: Some(6),
                            ..Series::default()
                        });
                    }
                }
            }
        }
        let chart = LineChart {
            title: format!("{title} vs {x_label}"),
            subtitle: "Median of the measured passes at each point; bars: min–max.".into(),
            x: Axis::new(x_label, x_scale, x_fmt),
            y: Axis::new(y_label, scale, fmt),
            series,
            width: 480,
            height: 300,
        };
        out.push((suffix, svg::line_chart(&chart)));
    }
    out
}

/// The sweep part of the HTML report: knees and charts (bandwidth in
/// the report's unit).
pub fn sweep_html(sweep: &Value, unit: BwUnit) -> String {
    let mut s = String::new();
    let rows: Vec<Vec<String>> = sweep["knees"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            vec![
                k["series"].as_str().unwrap_or("").to_string(),
                k["note"].as_str().unwrap_or("").to_string(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        let _ = write!(
            s,
            "<p class=\"meta\">Knee: {}.</p>",
            svg::esc(sweep["knee_rule"].as_str().unwrap_or(KNEE_RULE))
        );
        s.push_str(&super::html::table(&["series", "knee"], &rows, 2));
    }
    s.push_str("<div class=\"grid\">");
    for (_, c) in sweep_charts(sweep, unit) {
        s.push_str(&c);
    }
    s.push_str("</div>");
    s
}
