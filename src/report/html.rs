//! The self-contained HTML report: one file, inline CSS and SVG, no
//! scripts, no fonts, no images, no links to anything outside it — it
//! opens offline and prints cleanly. The markup is well-formed XML
//! (polyglot XHTML), so tests can parse it.
//!
//! Sections: for CrystalDiskMark-style results (`quick`, the
//! crystaldiskmark presets) a first screen laid out as CrystalDiskMark's
//! grid; notes and warnings, a summary table, bar charts per test, sweep
//! charts (for sweeps), per job direction throughput over time (every
//! measured pass overlaid), latency percentile curve (log scale) and
//! latency histogram (json+ bins), the environment and settings in
//! human units, and the job file. Every chart says which pass or run it
//! shows. Charts sit in a grid: two per row on wide screens, one on
//! narrow ones (a phone, 390 px wide, scrolls only down).

use std::fmt::Write;

use serde_json::Value;

use super::svg::{self, esc, Axis, Format, LineChart, Scale, Series};
use crate::results::dataset::{Dataset, Detail, Item, METRICS};
use crate::results::units::{self as table, cdm_label, BwUnit};

const CSS: &str = "\
*,*::before,*::after{box-sizing:border-box}\
body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;padding:0 1em;overflow-wrap:break-word}\
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
h3{font-size:1em;margin:1.2em 0 .4em}\
.meta{color:#555;font-size:.9em}\
table:not(.cdm){overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;overflow-wrap:normal}\
table:not(.cdm){display:block;width:max-content}\
table:not(.cdm) tr>:first-child{position:sticky;left:0;z-index:1;box-shadow:inset -1px 0 #ccc}\
table:not(.cdm) td:first-child{background:#fff}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f2f2f2}td.l,th.l{text-align:left}\
table.kv th{font-weight:normal;color:#444}\
.warn{background:#fff4d6;border:1px solid #e0b84c;padding:.5em 1em;margin:.5em 0}\
.note{background:#eef4fb;border:1px solid #9bbbe0;padding:.5em 1em;margin:.5em 0}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,400px),1fr));gap:10px;margin:.5em 0}\
.grid svg{display:block;width:100%;height:auto;border:1px solid #ddd}\
.grid svg.wide{grid-column:1/-1}\
.regression{color:#b00020;font-weight:bold}.improvement{color:#1b7f3b;font-weight:bold}\
pre{background:#f7f7f7;border:1px solid #ddd;padding:.6em;font-size:.8em;overflow-x:auto;white-space:pre-wrap}\
table.cdm{border-collapse:separate;border-spacing:4px;width:100%;max-width:640px;table-layout:fixed;font-size:1em;margin:.6em 0}\
.cdm th,.cdm td{border:1px solid #9cc3a2;padding:.3em .4em;overflow-wrap:normal}\
.cdm thead th{background:#1b7f3b;color:#fff;text-align:center}\
.cdm thead th.unit{background:#eef5ef;color:#1b5e2b;font-size:.85em;font-weight:normal}\
.cdm tbody th{background:#1b7f3b;color:#fff;text-align:center;width:26%;line-height:1.25}\
.cdm td{background:#f5faf5;text-align:right;position:relative}\
.cdm .bar{display:block;height:.35em;background:#1b7f3b;opacity:.55;margin:0 0 .2em auto;border-radius:2px}\
ul.plain li{margin:.2em 0}section.groups{border:1px solid #ccc;padding:.2em .8em;margin:.6em 0}\
.cdm .big{display:block;font-size:clamp(1.2em,6vw,2.1em);font-weight:bold;line-height:1.15;font-variant-numeric:tabular-nums;white-space:nowrap}\
.cdm .small{display:block;font-size:.78em;color:#444;white-space:nowrap}\
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}\
.first{break-after:page}\
.cdm th,.cdm td,.cdm thead th,.cdm thead th.unit,.cdm tbody th{background:none;color:#000;border:1px solid #000}\
.cdm .big{font-size:20pt}.cdm .small{color:#000}\
.grid{grid-template-columns:repeat(2,minmax(0,1fr))}.grid svg{border:none}\
table:not(.cdm){display:table;width:auto;overflow:visible}table:not(.cdm) tr>:first-child{position:static;box-shadow:none}.warn,.note{border:1px solid #000}\
h2,h3{break-after:avoid}.item,svg,table,tr{break-inside:avoid}}\
";

/// The page around a body.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n\
         <meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <meta name=\"generator\" content=\"iomark {}\"/>\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n{}\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title),
        CSS,
        body
    )
}

/// A table from header cells and rows; the first `left` columns are
/// left-aligned. Cells are escaped. (Wide tables scroll inside their box
/// on narrow screens instead of widening the page: see the CSS.)
pub fn table(headers: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut s = String::from("<table><thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        let c = if i < left { " class=\"l\"" } else { "" };
        let _ = write!(s, "<th{c}>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            let c = if i < left { " class=\"l\"" } else { "" };
            let _ = write!(s, "<td{c}>{}</td>", esc(cell));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// A two-column table of (name, value) rows: names are row headers, no
/// header row.
pub fn kv_table(rows: &[(String, String)]) -> String {
    let mut s = String::from("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(
            s,
            "<tr><th class=\"l\" scope=\"row\">{}</th><td class=\"l\">{}</td></tr>",
            esc(k),
            esc(v)
        );
    }
    s.push_str("</tbody></table>");
    s
}

pub fn boxes(class: &str, lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("<div class=\"{class}\">{}</div>", esc(l)))
        .collect()
}

pub fn warning_boxes(w: &[crate::results::dataset::Warning]) -> String {
    let texts: Vec<String> = w.iter().map(|w| w.text.clone()).collect();
    boxes("warn", &texts)
}

/// Bytes in binary units: `4 KiB`, `1 GiB`, `23.5 GiB`, `512 B`.
pub fn bytes_text(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut i = 0;
    let mut v = b as f64;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 || b.is_multiple_of(1u64 << (10 * i)) {
        format!("{v:.0} {}", units[i])
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// A duration in microseconds: `2 s`, `500 ms`, `1.5 s`, `250 µs`, `90 s`.
pub fn duration_text(us: u64) -> String {
    let f = |v: f64, u: &str| format!("{} {u}", svg::digits(v));
    if us >= 1_000_000 {
        f(us as f64 / 1e6, "s")
    } else if us >= 1000 {
        f(us as f64 / 1e3, "ms")
    } else {
        format!("{us} µs")
    }
}

/// A latency in ns with a space before its unit: `13.39 ms`, `96.1 µs`.
fn latency_text(ns: f64) -> String {
    let t = table::latency(ns);
    match t.find(|c: char| c.is_alphabetic() || c == 'µ') {
        Some(i) if i > 0 => format!("{} {}", &t[..i], &t[i..]),
        _ => t,
    }
}

/// "median (min–max)" of bandwidth in `unit`.
fn bw_cell(item: &Item, unit: BwUnit) -> String {
    let s = item.summary(&METRICS[0]);
    if s.n > 1 {
        format!(
            "{} ({}–{})",
            unit.text(s.median),
            unit.text(s.min),
            unit.text(s.max)
        )
    } else {
        unit.text(s.median)
    }
}

fn median(item: &Item, i: usize) -> f64 {
    let s = item.summary(&METRICS[i]);
    if s.n == 0 {
        f64::NAN
    } else {
        s.median
    }
}

fn summary_table(sets: &[Dataset], names: &[String], unit: BwUnit) -> String {
    let many = sets.len() > 1;
    let mut headers = vec!["test / job", "dir", "parameters"];
    if many {
        headers.insert(0, "run");
    }
    let bw = format!("{} median (min–max)", unit.name());
    headers.extend([bw.as_str(), "IOPS", "mean lat", "p99 lat"]);
    // Runs against a server (the http engine) also show the median and
    // the time to first byte, of the pass drawn below each test.
    let served = sets
        .iter()
        .flat_map(|d| &d.items)
        .any(|it| it.detail.as_ref().is_some_and(|d| !d.ttfb.is_empty()));
    if served {
        headers[if many { 5 } else { 4 }] = "IOPS (req/s)";
        headers.extend(["p50 lat", "p99 ttfb"]);
    }
    headers.push("passes");
    let mut rows = Vec::new();
    for (d, name) in sets.iter().zip(names) {
        for it in &d.items {
            // Object requests are named by their method (GET, PUT).
            let dir = it.op();
            let mut r = vec![it.name.clone(), dir, it.params.describe()];
            if many {
                r.insert(0, name.clone());
            }
            r.push(bw_cell(it, unit));
            r.push(table::iops(median(it, 1)));
            r.push(table::latency(median(it, 2)));
            r.push(table::latency(median(it, 3)));
            if served {
                let at = |f: fn(&Detail) -> &[(f64, f64)], p| {
                    it.detail.as_ref().map_or(f64::NAN, |d| Detail::at(f(d), p))
                };
                r.push(table::latency(at(|d| &d.percentiles, 50.0)));
                r.push(table::latency(at(|d| &d.ttfb, 99.0)));
            }
            r.push(it.samples.len().to_string());
            rows.push(r);
        }
    }
    table(&headers, &rows, if many { 4 } else { 3 })
}

/// Log10 when the positive values span more than 20×, else linear.
fn bar_scale(sets: &[(String, Vec<f64>)]) -> Scale {
    let v: Vec<f64> = sets
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    if !v.is_empty() && hi / lo > 20.0 {
        Scale::Log10
    } else {
        Scale::Linear
    }
}

/// Bar charts of median bandwidth and IOPS per item (several data sets
/// side by side).
fn bar_charts(sets: &[Dataset], names: &[String], unit: BwUnit) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    for d in sets {
        for it in &d.items {
            if !keys.iter().any(|k| k.0 == it.key) {
                keys.push((it.key.clone(), it.label()));
            }
        }
    }
    if keys.is_empty() {
        return String::new();
    }
    let cats: Vec<String> = keys.iter().map(|k| k.1.clone()).collect();
    let mut out = String::from("<div class=\"grid\">");
    let bw_title = format!("Bandwidth ({}, median)", unit.name());
    for (mi, title, ax) in [
        (0usize, bw_title.as_str(), unit.name()),
        (1, "IOPS (median)", "IOPS"),
    ] {
        let sets_v: Vec<(String, Vec<f64>)> = sets
            .iter()
            .zip(names)
            .map(|(d, n)| {
                let v = keys
                    .iter()
                    .map(|(k, _)| {
                        d.items
                            .iter()
                            .find(|i| &i.key == k)
                            .map(|i| {
                                let m = median(i, mi);
                                if mi == 0 {
                                    m / unit.bytes()
                                } else {
                                    m
                                }
                            })
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                (n.clone(), v)
            })
            .collect();
        let w = (cats.len() * 60 * sets.len().max(1)).clamp(460, 960) as u32;
        // Bars that differ by more than 20× (SEQ1M beside RND4K Q1T1) on a
        // log scale, said in the title, so that every bar shows.
        let scale = bar_scale(&sets_v);
        let shown_title = if scale == Scale::Log10 {
            format!("{title} — log scale")
        } else {
            title.to_string()
        };
        let axis_title = if scale == Scale::Log10 {
            format!("{ax} (log scale)")
        } else {
            ax.to_string()
        };
        out.push_str(&svg::bar_chart(
            &shown_title,
            &Axis::new(&axis_title, scale, Format::Number),
            &cats,
            &sets_v,
            w,
        ));
    }
    out.push_str("</div>");
    out
}

/// x position of a percentile on a "nines" axis: −log10(1 − p/100).
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

pub fn nines_ticks(max_p: f64) -> Vec<(f64, String)> {
    let mut t = vec![(0.0, "p0".to_string()), (nines(50.0), "p50".to_string())];
    for (p, l) in [
        (90.0, "p90"),
        (99.0, "p99"),
        (99.9, "p99.9"),
        (99.99, "p99.99"),
        (99.999, "p99.999"),
    ] {
        if p <= max_p + 1e-9 {
            t.push((nines(p), l.to_string()));
        }
    }
    t
}

/// A caption naming the run each curve is of: the label alone for one
/// curve (or when all agree), else "name: label" per curve.
fn runs_caption(curves: &[(&str, &str)]) -> String {
    let labelled: Vec<&(&str, &str)> = curves.iter().filter(|c| !c.1.is_empty()).collect();
    match labelled.as_slice() {
        [] => String::new(),
        [(_, l)] if curves.len() == 1 => format!("Shows {l}."),
        all if all.iter().all(|c| c.1 == all[0].1) => format!("Shows {}.", all[0].1),
        all => format!(
            "Shows {}.",
            all.iter()
                .map(|(n, l)| format!("{n}: {l}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// Latency percentile curve(s): one series per (name, detail, dashed).
pub fn percentile_chart(title: &str, curves: &[(String, &Detail, bool, usize)]) -> String {
    let mut max_p: f64 = 90.0;
    let series: Vec<Series> = curves
        .iter()
        .map(|(name, d, dashed, color)| {
            let pts: Vec<(f64, f64)> = d
                .percentiles
                .iter()
                .filter(|(p, v)| *p < 100.0 && *v > 0.0)
                .map(|(p, v)| (nines(*p), *v))
                .collect();
            if let Some((p, _)) = d.percentiles.iter().rfind(|(p, _)| *p < 100.0) {
                max_p = max_p.max(*p);
            }
            Series {
                name: name.clone(),
                points: pts,
                dashed: *dashed,
                markers: true,
                color: Some(*color),
                ..Series::default()
            }
        })
        .collect();
    let kind = curves
        .first()
        .map(|c| match c.1.lat_kind {
            "lat" => "total",
            "write+sync" => "write + sync",
            _ => "completion",
        })
        .unwrap_or("completion");
    let mut x = Axis::new("percentile", Scale::Linear, Format::Number);
    x.ticks = Some(nines_ticks(max_p));
    let caption: Vec<(&str, &str)> = curves
        .iter()
        .map(|c| (c.0.as_str(), c.1.pass_label.as_str()))
        .collect();
    svg::line_chart(&LineChart {
        title: title.to_string(),
        subtitle: runs_caption(&caption),
        x,
        y: Axis::new(
            &format!("{kind} latency (log)"),
            Scale::Log10,
            Format::Nanos,
        ),
        series,
        width: 460,
        height: 240,
    })
}

/// json+ bins grouped into 10 buckets per decade: (low, high, count).
pub fn histogram_bins(bins: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    let mut out: Vec<(f64, f64, f64)> = Vec::new();
    for (v, c) in bins {
        if *v <= 0.0 {
            continue;
        }
        let k = (v.log10() * 10.0).floor();
        let lo = 10f64.powf(k / 10.0);
        let hi = 10f64.powf((k + 1.0) / 10.0);
        match out.last_mut() {
            Some(last) if (last.0 - lo).abs() < lo * 1e-9 => last.2 += c,
            _ => out.push((lo, hi, *c)),
        }
    }
    out
}

/// A timeline shifted so that its job starts at 0 s.
pub fn from_zero(s: &crate::results::dataset::Series) -> crate::results::dataset::Series {
    crate::results::dataset::Series {
        start_s: 0.0,
        t_s: s.t_s.iter().map(|t| t - s.start_s).collect(),
        ..s.clone()
    }
}

/// Throughput over time (bandwidth in MiB/s): (name, series, dashed,
/// color) per curve; the caption names the run each curve is of
/// (`Series::label`).
pub fn timeline_chart(
    title: &str,
    iops: bool,
    curves: &[(String, &crate::results::dataset::Series, bool, usize)],
) -> String {
    timeline_chart_in(BwUnit::Mib, title, iops, curves)
}

/// [`timeline_chart`] with bandwidth in `unit`.
pub fn timeline_chart_in(
    unit: BwUnit,
    title: &str,
    iops: bool,
    curves: &[(String, &crate::results::dataset::Series, bool, usize)],
) -> String {
    let caption: Vec<(&str, &str)> = curves
        .iter()
        .map(|c| (c.0.as_str(), c.1.label.as_str()))
        .collect();
    timeline_chart_with(unit, title, &runs_caption(&caption), iops, curves)
}

/// Throughput over time with the given caption, bandwidth in `unit`.
pub fn timeline_chart_with(
    unit: BwUnit,
    title: &str,
    caption: &str,
    iops: bool,
    curves: &[(String, &crate::results::dataset::Series, bool, usize)],
) -> String {
    let series: Vec<Series> = curves
        .iter()
        .map(|(name, s, dashed, color)| Series {
            name: name.clone(),
            points: s
                .t_s
                .iter()
                .zip(if iops { &s.iops } else { &s.bw_bytes })
                .map(|(t, v)| (*t, if iops { *v } else { v / unit.bytes() }))
                .collect(),
            dashed: *dashed,
            color: Some(*color),
            ..Series::default()
        })
        .collect();
    let x = Axis::new("time (s)", Scale::Linear, Format::Number);
    svg::line_chart(&LineChart {
        title: title.to_string(),
        subtitle: caption.to_string(),
        x,
        y: Axis::new(
            if iops { "IOPS" } else { unit.name() },
            Scale::Linear,
            Format::Number,
        ),
        series,
        width: 460,
        height: 240,
    })
}

/// The caption of a chart overlaying the measured passes of a test,
/// saying what happened to the warm-up pass.
fn passes_caption(shown: &[u64], total: usize, warmup_us: Option<u64>) -> String {
    let which = match shown {
        [one] => format!("pass {one} of {total}, from its start"),
        _ if shown.len() == total => {
            format!("all {total} measured passes, each from its own start")
        }
        _ => format!(
            "measured passes {} of {total}, each from its own start",
            shown
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let warm = match warmup_us {
        Some(0) => "; no warm-up pass was run".to_string(),
        Some(us) => format!(
            "; the {} warm-up pass before them was discarded and is not recorded",
            duration_text(us)
        ),
        None => String::new(),
    };
    format!("Shows {which}{warm}.")
}

fn item_section(d: &Dataset, run: &str, it: &Item, unit: BwUnit) -> String {
    let mut s = String::from("<div class=\"item\">");
    let title = if run.is_empty() {
        it.label()
    } else {
        format!("{} — {}", it.label(), run)
    };
    let _ = write!(
        s,
        "<h3>{}</h3><p class=\"meta\">{}</p><div class=\"grid\">",
        esc(&title),
        esc(&it.params.describe())
    );
    let warmup = d
        .settings
        .as_ref()
        .and_then(|v| v.get("warmup_us"))
        .and_then(Value::as_u64);
    if !it.pass_timelines.is_empty() {
        let shifted: Vec<(u64, crate::results::dataset::Series)> = it
            .pass_timelines
            .iter()
            .map(|(n, t)| (*n, from_zero(t)))
            .collect();
        let curves: Vec<(String, &crate::results::dataset::Series, bool, usize)> = shifted
            .iter()
            .enumerate()
            .map(|(i, (n, t))| (format!("pass {n}"), t, false, i))
            .collect();
        let shown: Vec<u64> = shifted.iter().map(|(n, _)| *n).collect();
        let caption = passes_caption(&shown, it.samples.len().max(shown.len()), warmup);
        s.push_str(&timeline_chart_with(
            unit,
            "Bandwidth over time",
            &caption,
            false,
            &curves,
        ));
        s.push_str(&timeline_chart_with(
            unit,
            "IOPS over time",
            &caption,
            true,
            &curves,
        ));
    } else if let Some(tl) = it.detail.as_ref().and_then(|d| d.timeline.as_ref()) {
        let tl = from_zero(tl);
        let c = [(it.label(), &tl, false, 0usize)];
        s.push_str(&timeline_chart_in(unit, "Bandwidth over time", false, &c));
        s.push_str(&timeline_chart_in(unit, "IOPS over time", true, &c));
    }
    if let Some(det) = &it.detail {
        if !det.ttfb.is_empty() {
            // The time to first byte beside the latency: the gap between
            // the curves is the body's transfer.
            let first = Detail {
                percentiles: det.ttfb.clone(),
                ..det.clone()
            };
            s.push_str(&percentile_chart(
                "Latency and time to first byte percentiles",
                &[
                    (it.label(), det, false, 0),
                    ("time to first byte".to_string(), &first, true, 1),
                ],
            ));
            let _ = write!(
                s,
                "<p class=\"meta\">time to first byte: p50 {}, p99 {}, p99.9 {}</p>",
                latency_text(Detail::at(&det.ttfb, 50.0)),
                latency_text(Detail::at(&det.ttfb, 99.0)),
                latency_text(Detail::at(&det.ttfb, 99.9))
            );
        } else if !det.percentiles.is_empty() {
            s.push_str(&percentile_chart(
                "Latency percentiles",
                &[(it.label(), det, false, 0)],
            ));
        }
        if !det.bins.is_empty() {
            let kind = match det.lat_kind {
                "lat" => "total latency",
                "write+sync" => "write + sync latency",
                _ => "completion latency",
            };
            s.push_str(&svg::histogram(
                "Latency histogram (json+ bins)",
                &runs_caption(&[("", det.pass_label.as_str())]),
                kind,
                &histogram_bins(&det.bins),
                460,
                240,
            ));
        }
    }
    s.push_str("</div></div>");
    s
}

/// A JSON value as text: strings bare, arrays joined with ", ".
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join(", "),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A name and value of a recorded key in words and human units: keys
/// ending in `_bytes`, `_us`, `_ms` or `_ns` lose the suffix and show
/// their value in units; `names` gives known keys their words.
fn human_row(k: &str, v: &Value, names: &[(&str, &str)]) -> (String, String) {
    let named = |base: &str| {
        names
            .iter()
            .find(|(n, _)| *n == base || *n == k)
            .map(|(_, w)| w.to_string())
            .unwrap_or_else(|| base.replace('_', " "))
    };
    let num = v.as_u64().or_else(|| v.as_f64().map(|f| f as u64));
    for (suffix, to_us) in [("_bytes", 0u64), ("_us", 1), ("_ms", 1000), ("_ns", 0)] {
        if let (Some(base), Some(n)) = (k.strip_suffix(suffix), num) {
            let text = match suffix {
                "_bytes" => bytes_text(n),
                "_ns" => latency_text(n as f64),
                _ => duration_text(n * to_us),
            };
            return (named(base), text);
        }
    }
    (named(k), plain(v))
}

const HOST_NAMES: &[(&str, &str)] = &[
    ("hostname", "host name"),
    ("machine", "architecture"),
    ("cpu_model", "CPU model"),
    ("cpus", "CPUs"),
    ("ram", "memory (RAM)"),
    ("mem_available", "memory available at the start"),
    ("cpu_governor", "CPU frequency governor"),
];

const TARGET_NAMES: &[(&str, &str)] = &[
    ("fs_type", "filesystem"),
    ("mount_point", "mount point"),
    ("mount_source", "mounted from"),
    ("mount_options", "mount options"),
    ("slaves", "underlying devices"),
    ("device_model", "device model"),
    ("device_size", "device size"),
    ("scheduler", "I/O scheduler"),
    ("rotational", "rotational (as the kernel reports)"),
    ("memory_backed", "memory-backed"),
];

fn kv_rows(v: &Value, names: &[(&str, &str)]) -> Vec<(String, String)> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| human_row(k, v, names))
                .filter(|(_, v)| !v.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The environment record as tables.
pub fn environment(env: &Value) -> String {
    let mut s = String::new();
    if let Some(h) = env.get("host") {
        s.push_str("<h3>Host</h3>");
        s.push_str(&kv_table(&kv_rows(h, HOST_NAMES)));
    }
    for t in env["targets"].as_array().into_iter().flatten() {
        let _ = write!(
            s,
            "<h3>Target {}</h3>",
            esc(t["path"].as_str().unwrap_or(""))
        );
        s.push_str(&kv_table(&kv_rows(t, TARGET_NAMES)));
    }
    s
}

/// A benchmark's settings in human units, named as the fio options they
/// set where they are options (size, runtime, ioengine, direct, rw, bs,
/// iodepth, numjobs, directory).
pub fn settings_rows(st: &Value) -> Vec<(String, String)> {
    let Some(m) = st.as_object() else {
        return Vec::new();
    };
    let list = |v: &Value, f: &dyn Fn(&str) -> String| -> String {
        plain(v)
            .split(',')
            .map(|x| f(x.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let size = |x: &str| match crate::job::value::parse_size(x, 1024) {
        Ok(b) => bytes_text(b),
        Err(_) => x.to_string(),
    };
    m.iter()
        .map(|(k, v)| match k.as_str() {
            "path" => ("directory".into(), plain(v)),
            "direct" => {
                let on = v.as_bool().unwrap_or_else(|| plain(v) == "1");
                (
                    "direct".into(),
                    if on {
                        "1 (direct I/O, past the page cache)".into()
                    } else {
                        "0 (buffered I/O, through the page cache)".into()
                    },
                )
            }
            "size" => ("size".into(), size(&plain(v))),
            "size_bytes" => (
                "size".into(),
                v.as_u64().map(bytes_text).unwrap_or_else(|| plain(v)),
            ),
            "runtime_us" => (
                "runtime (each measured pass)".into(),
                v.as_u64().map(duration_text).unwrap_or_else(|| plain(v)),
            ),
            "passes" => ("measured passes per test".into(), plain(v)),
            "warmup_us" => (
                "warm-up pass (discarded)".into(),
                match v.as_u64() {
                    Some(0) => "none".into(),
                    Some(us) => duration_text(us),
                    None => plain(v),
                },
            ),
            "bs" => ("bs".into(), list(v, &size)),
            "rw" | "iodepth" | "numjobs" => (k.clone(), list(v, &|x| x.to_string())),
            _ => human_row(k, v, &[]),
        })
        .collect()
}

/// The grid's bar scale: logarithmic from a power of ten a decade below
/// the smallest bandwidth to the largest, so that RND4K Q1T1 shows beside
/// SEQ1M Q8T1. (log10 of the low end, log10 of the high end.)
#[derive(Clone, Copy)]
struct LogScale(f64, f64);

impl LogScale {
    fn of(values: &[f64]) -> Option<LogScale> {
        let v: Vec<f64> = values
            .iter()
            .copied()
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        if v.is_empty() {
            return None;
        }
        // A decade below the smallest's own, so that it shows as a bar.
        let lo = (lo.log10().floor() - 1.0).min(hi.log10() - 1.0);
        Some(LogScale(lo, hi.log10().max(lo + 1.0)))
    }

    /// The bar's length, percent of the cell.
    fn pct(self, v: f64) -> f64 {
        if !(v.is_finite() && v > 0.0) {
            return 0.0;
        }
        ((v.log10() - self.0) / (self.1 - self.0) * 100.0).clamp(1.0, 100.0)
    }
}

/// One cell of the CrystalDiskMark grid, bandwidth in `unit`, with its
/// bar on `scale` (of values in `unit`).
fn cdm_cell(it: Option<&Item>, unit: BwUnit, scale: Option<LogScale>) -> String {
    let Some(it) = it.filter(|i| i.summary(&METRICS[0]).n > 0) else {
        return "<td><span class=\"big\">–</span><span class=\"small\">not measured</span></td>"
            .into();
    };
    let mb = median(it, 0) / unit.bytes();
    let big = if mb >= 100_000.0 {
        format!("{mb:.0}")
    } else {
        format!("{mb:.2}")
    };
    let bar = scale.map_or(String::new(), |sc| {
        format!(
            "<span class=\"bar\" style=\"width:{:.1}%\"></span>",
            sc.pct(mb)
        )
    });
    let sync = it.samples.iter().any(|m| m.sync_write);
    format!(
        "<td>{bar}<span class=\"big\">{}</span><span class=\"small\">{} IOPS</span>\
         <span class=\"small\">{} {}</span></td>",
        esc(&big),
        esc(&table::iops(median(it, 1))),
        if sync { "write+sync" } else { "mean" },
        esc(&latency_text(median(it, 2))),
    )
}

/// The sentence under the grid saying how the figures were measured,
/// from the settings and the environment the results hold.
fn cdm_how(d: &Dataset, passes: usize, unit: BwUnit, scale: Option<LogScale>) -> String {
    let st = d.settings.clone().unwrap_or(Value::Null);
    let what = match unit {
        BwUnit::Mb => "MB/s (1 MB = 1,000,000 bytes, as CrystalDiskMark shows, as in the tables and charts below)",
        BwUnit::Mib => "MiB/s (1 MiB = 1,048,576 bytes, as asked with --units, as in the tables and charts below)",
    };
    let mut parts = vec![format!(
        "Big figures: {what}, the median of {passes} measured pass{}",
        if passes == 1 { "" } else { "es" }
    )];
    if let Some(us) = st.get("runtime_us").and_then(Value::as_u64) {
        parts[0].push_str(&format!(" of {} each", duration_text(us)));
    }
    match st.get("warmup_us").and_then(Value::as_u64) {
        Some(0) => parts[0].push_str(", no warm-up"),
        Some(us) => parts[0].push_str(&format!(" after a discarded {} warm-up", duration_text(us))),
        None => {}
    }
    parts[0].push_str(
        " (CrystalDiskMark shows the best pass). Beneath: median IOPS and mean latency \
         (submission to completion; for synced writes, write plus sync).",
    );
    let mut how = Vec::new();
    if let Some(b) = st.get("size_bytes").and_then(Value::as_u64) {
        how.push(format!("{} test file", bytes_text(b)));
    }
    if let Some(e) = st.get("ioengine").and_then(Value::as_str) {
        how.push(format!("ioengine {e}"));
    }
    if let Some(dr) = st.get("direct").and_then(Value::as_bool) {
        how.push(if dr { "direct I/O" } else { "buffered I/O" }.into());
    }
    if let Some(t) = d.environment.as_ref().and_then(|e| e.pointer("/targets/0")) {
        let mut w = plain(&t["path"]);
        let fs = plain(&t["fs_type"]);
        let dev = plain(&t["device"]);
        if !fs.is_empty() {
            w.push_str(&format!(": {fs}"));
        }
        if !dev.is_empty() {
            w.push_str(&format!(" on {dev}"));
        }
        if !w.is_empty() {
            how.push(w);
        }
    }
    if !how.is_empty() {
        parts.push(format!("{}.", how.join(", ")));
    }
    if let Some(sc) = scale {
        parts.push(format!(
            "Bars: bandwidth on a logarithmic scale from {} to {} {} (each step of ten \
             the same length), so that every test shows.",
            svg::num(10f64.powf(sc.0)),
            svg::num(10f64.powf(sc.1)),
            unit.name()
        ));
    }
    parts.join(" ")
}

/// The first screen of CrystalDiskMark-style results: rows = tests,
/// columns = Read and Write, as CrystalDiskMark lays them out. None when
/// the data set has no such tests.
pub fn cdm_grid(d: &Dataset) -> Option<String> {
    cdm_grid_in(d, BwUnit::Mb)
}

/// [`cdm_grid`] with bandwidth in `unit`.
pub fn cdm_grid_in(d: &Dataset, unit: BwUnit) -> Option<String> {
    let mut rows: Vec<(String, Option<&Item>, Option<&Item>)> = Vec::new();
    for it in &d.items {
        let Some(label) = cdm_label(&it.name) else {
            continue;
        };
        let i = match rows.iter().position(|r| r.0 == label) {
            Some(i) => i,
            None => {
                rows.push((label, None, None));
                rows.len() - 1
            }
        };
        match it.dir.as_str() {
            "read" => rows[i].1 = Some(it),
            "write" => rows[i].2 = Some(it),
            _ => {}
        }
    }
    if rows.is_empty() {
        return None;
    }
    let passes = d.items.iter().map(|i| i.samples.len()).max().unwrap_or(0);
    let shown: Vec<f64> = rows
        .iter()
        .flat_map(|(_, r, w)| [*r, *w])
        .flatten()
        .map(|i| median(i, 0) / unit.bytes())
        .collect();
    let scale = LogScale::of(&shown);
    let mut s = format!(
        "<table class=\"cdm\"><thead><tr><th class=\"unit\" scope=\"col\">{}</th>\
         <th scope=\"col\">Read</th><th scope=\"col\">Write</th></tr></thead><tbody>",
        unit.name()
    );
    for (label, r, w) in &rows {
        let (kind, queue) = label.split_once(' ').unwrap_or((label, ""));
        let _ = write!(
            s,
            "<tr><th scope=\"row\">{}<br/>{}</th>{}{}</tr>",
            esc(kind),
            esc(queue),
            cdm_cell(*r, unit, scale),
            cdm_cell(*w, unit, scale)
        );
    }
    s.push_str("</tbody></table>");
    let _ = write!(
        s,
        "<p class=\"meta\">{}</p>",
        esc(&cdm_how(d, passes, unit, scale))
    );
    Some(s)
}

/// The report of one or more result files.
pub fn report_page(title: &str, sets: &[Dataset]) -> String {
    report_page_with_logs(title, sets, &[])
}

/// What a run is and where it comes from: file, tool and version, host
/// and time, and its label (the title too when several runs share the
/// page, each under its own heading).
fn source_line(d: &Dataset, many: bool) -> String {
    let mut parts = Vec::new();
    if many && !d.title.is_empty() {
        parts.push(d.title.clone());
    }
    parts.push(d.source.clone());
    let mut tool = d.kind.clone();
    if !d.version.is_empty() {
        tool.push_str(&format!(", {}", d.version));
    }
    parts.push(tool);
    let ht = d.host_time();
    if !ht.is_empty() {
        parts.push(ht);
    }
    if !many && !d.label.is_empty() {
        parts.push(format!("label {}", d.label));
    }
    format!("<p class=\"meta\">{}</p>", esc(&parts.join(" — ")))
}

fn notices(d: &Dataset) -> String {
    let mut b = String::new();
    if d.interrupted {
        b.push_str(&boxes(
            "warn",
            &["This run was interrupted: figures cover only what was measured.".into()],
        ));
    }
    b.push_str(&warning_boxes(&d.warnings));
    b.push_str(&boxes("note", &d.notes));
    b
}

/// The report of result files and fio log files.
pub fn report_page_with_logs(
    title: &str,
    sets: &[Dataset],
    logs: &[crate::results::logs::Log],
) -> String {
    report_page_in(title, sets, logs, None, "")
}

/// [`report_page_with_logs`] with bandwidth in `units` (None: MB/s when
/// the page opens on CrystalDiskMark-style results, else MiB/s) and
/// `lead` (HTML: the labelled groups compared) right under the title.
pub fn report_page_in(
    title: &str,
    sets: &[Dataset],
    logs: &[crate::results::logs::Log],
    units: Option<BwUnit>,
    lead: &str,
) -> String {
    let many = sets.len() > 1;
    // Each run's name in headings, the summary and the legends: with
    // several runs, one that tells them apart (label, else host and time).
    let names: Vec<String> = if many {
        crate::results::dataset::run_names(sets)
    } else {
        sets.iter().map(|d| d.title.clone()).collect()
    };
    let mut b = String::new();
    let first = sets.iter().any(|d| cdm_grid(d).is_some());
    // One bandwidth unit for the whole page: CrystalDiskMark's MB/s when
    // it opens on its grid, else fio's MiB/s; or as asked.
    let unit = units.unwrap_or(if first { BwUnit::Mb } else { BwUnit::Mib });
    let grids: Vec<Option<String>> = sets.iter().map(|d| cdm_grid_in(d, unit)).collect();
    if first {
        b.push_str("<section class=\"first\">");
    }
    let _ = write!(b, "<h1>{}</h1>", esc(title));
    b.push_str(lead);
    for ((d, grid), name) in sets.iter().zip(&grids).zip(&names) {
        if many {
            let _ = write!(b, "<h2>{}</h2>", esc(name));
        }
        b.push_str(&source_line(d, many));
        b.push_str(&notices(d));
        if let Some(g) = grid {
            b.push_str(g);
        }
    }
    if first {
        b.push_str("</section>");
    }
    if !sets.is_empty() {
        b.push_str("<h2>Summary</h2>");
        b.push_str(&summary_table(sets, &names, unit));
    }
    let _ = write!(
        b,
        "<p class=\"meta\">Medians over the measured passes (min–max of bandwidth in \
         brackets). Bandwidth throughout this report is in {}. Mean latency is total \
         latency; p99 is of total latency when the job reports it, else of completion \
         latency.</p>",
        esc(unit.meaning())
    );
    b.push_str(&bar_charts(sets, &names, unit));
    for (d, name) in sets.iter().zip(&names) {
        if let Some(sw) = &d.sweep {
            let _ = write!(b, "<h2>Sweep — {}</h2>", esc(name));
            b.push_str(&super::sweep_charts::sweep_html(sw, unit));
        }
    }
    b.push_str(&logs_section(logs, unit));
    for (d, name) in sets.iter().zip(&names) {
        if let Some(v) = &d.hosts_summary {
            b.push_str(&super::hosts::summary_html(v, name));
        }
    }
    if !sets.is_empty() {
        b.push_str("<h2>Per test</h2>");
    }
    for (d, name) in sets.iter().zip(&names) {
        for it in &d.items {
            b.push_str(&item_section(d, name, it, unit));
        }
    }
    b.push_str(&run_details(sets, &names));
    let _ = write!(
        b,
        "<p class=\"meta\">Written by iomark {}.</p>",
        env!("CARGO_PKG_VERSION")
    );
    page(title, &b)
}

/// Charts of fio's log files, job by job.
fn logs_section(logs: &[crate::results::logs::Log], unit: BwUnit) -> String {
    use crate::results::logs;
    let mut b = String::new();
    if logs.is_empty() {
        return b;
    }
    b.push_str("<h2>Logs</h2>");
    for g in logs::by_job(logs) {
        let files: Vec<String> = g.logs.iter().map(|l| l.file()).collect();
        let _ = write!(
            b,
            "<div class=\"item\"><h3>Logs of {}</h3><p class=\"meta\">{}</p><div class=\"grid\">",
            esc(&g.title),
            esc(&files.join(", "))
        );
        for c in super::log_charts::charts(&g, unit) {
            b.push_str(&c);
        }
        b.push_str("</div></div>");
    }
    b
}

/// Each run's environment, settings and job file, under its name.
fn run_details(sets: &[Dataset], names: &[String]) -> String {
    let mut b = String::new();
    for (d, name) in sets.iter().zip(names) {
        if let Some(env) = &d.environment {
            let _ = write!(b, "<h2>Environment — {}</h2>", esc(name));
            b.push_str(&environment(env));
        }
        if let Some(st) = d.settings.as_ref().filter(|s| s.is_object()) {
            let _ = write!(b, "<h3>Settings — {}</h3>", esc(name));
            b.push_str(&kv_table(&settings_rows(st)));
        }
    }
    for (d, name) in sets.iter().zip(names) {
        if let Some(jf) = &d.jobfile {
            let _ = write!(b, "<h2>Job file — {}</h2><pre>{}</pre>", esc(name), esc(jf));
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_groups_bins_by_tenth_of_a_decade() {
        let b = histogram_bins(&[(1000.0, 1.0), (1100.0, 2.0), (5000.0, 3.0)]);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].2, 3.0);
        assert!((b[0].0 - 1000.0).abs() < 1e-6);
        assert_eq!(b[1].2, 3.0);
    }

    #[test]
    fn nines_axis() {
        assert!((nines(90.0) - 1.0).abs() < 1e-12);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines_ticks(99.0).last().unwrap().1, "p99");
    }

    #[test]
    fn units_are_human() {
        assert_eq!(bytes_text(4096), "4 KiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
        assert_eq!(bytes_text(25_276_063_744), "23.5 GiB");
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(duration_text(2_000_000), "2 s");
        assert_eq!(duration_text(200_000), "200 ms");
        assert_eq!(duration_text(1_500_000), "1.5 s");
        assert_eq!(latency_text(13_390_000.0), "13.39 ms");
    }

    #[test]
    fn settings_read_as_fio_options_in_human_units() {
        let st: Value = serde_json::json!({
            "preset": "crystaldiskmark", "path": "/mnt/x", "ioengine": "io_uring",
            "direct": true, "size_bytes": 1073741824u64, "runtime_us": 2000000,
            "passes": 3, "warmup_us": 1000000, "bs": "4k,1m", "odd_thing_us": 5000,
        });
        let rows = settings_rows(&st);
        let get = |k: &str| rows.iter().find(|r| r.0 == k).map(|r| r.1.clone());
        assert_eq!(get("size").as_deref(), Some("1 GiB"));
        assert_eq!(get("runtime (each measured pass)").as_deref(), Some("2 s"));
        assert_eq!(get("warm-up pass (discarded)").as_deref(), Some("1 s"));
        assert_eq!(get("bs").as_deref(), Some("4 KiB, 1 MiB"));
        assert_eq!(get("directory").as_deref(), Some("/mnt/x"));
        assert_eq!(get("odd thing").as_deref(), Some("5 ms"));
        assert!(get("direct").unwrap().starts_with("1 "));
        assert!(rows.iter().all(|r| !r.0.contains('_')), "{rows:?}");
    }

    #[test]
    fn crystaldiskmark_names_are_recognised_both_ways() {
        assert_eq!(cdm_label("SEQ1M Q8T1").as_deref(), Some("SEQ1M Q8T1"));
        assert_eq!(
            cdm_label("rnd4k-q32t16-write").as_deref(),
            Some("RND4K Q32T16")
        );
        assert_eq!(
            cdm_label("seq128k-q32t1-read").as_deref(),
            Some("SEQ128K Q32T1")
        );
        assert_eq!(cdm_label("database"), None);
        assert_eq!(cdm_label("SEQ1M Q8"), None);
        assert_eq!(cdm_label("randread 4k QD1 J1"), None);
    }

    #[test]
    fn captions_name_the_run() {
        assert_eq!(
            passes_caption(&[1, 2, 3], 3, Some(1_000_000)),
            "Shows all 3 measured passes, each from its own start; the 1 s warm-up pass \
             before them was discarded and is not recorded."
        );
        assert!(passes_caption(&[1], 1, Some(0)).contains("pass 1 of 1"));
        assert_eq!(
            runs_caption(&[("base", "pass 2 of 3"), ("new", "the run in b.json")]),
            "Shows base: pass 2 of 3; new: the run in b.json."
        );
    }
}
