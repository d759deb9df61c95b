//! The self-contained HTML report: one file, inline CSS and SVG, no
//! scripts, no fonts, no images, no links to anything outside it — it
//! opens offline and prints cleanly. The markup is well-formed XML
//! (polyglot XHTML), so tests can parse it.
//!
//! Sections: notes and warnings, a summary table, bar charts per test,
//! sweep charts (for sweeps), per job direction throughput over time,
//! latency percentile curve (log scale) and latency histogram (json+ bins),
//! the environment record and the job file.

use std::fmt::Write;

use serde_json::Value;

use super::dataset::{Dataset, Detail, Item, METRICS};
use super::svg::{self, esc, Axis, Format, LineChart, Scale, Series};
use super::table;

const CSS: &str = "\
body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;padding:0 1em}\
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
h3{font-size:1em;margin:1.2em 0 .4em}\
.meta{color:#555;font-size:.9em}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f2f2f2}td.l,th.l{text-align:left}\
.warn{background:#fff4d6;border:1px solid #e0b84c;padding:.5em 1em;margin:.5em 0}\
.note{background:#eef4fb;border:1px solid #9bbbe0;padding:.5em 1em;margin:.5em 0}\
.grid{display:flex;flex-wrap:wrap;gap:10px}\
.grid svg{border:1px solid #ddd}\
.regression{color:#b00020;font-weight:bold}.improvement{color:#1b7f3b;font-weight:bold}\
pre{background:#f7f7f7;border:1px solid #ddd;padding:.6em;font-size:.8em;overflow-x:auto;white-space:pre-wrap}\
@media print{body{max-width:none;margin:0}.grid svg{border:none}h2,h3{break-after:avoid}.item,svg,table{break-inside:avoid}}\
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
/// left-aligned. Cells are escaped.
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

pub fn boxes(class: &str, lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("<div class=\"{class}\">{}</div>", esc(l)))
        .collect()
}

pub fn warning_boxes(w: &[super::dataset::Warning]) -> String {
    let texts: Vec<String> = w.iter().map(|w| w.text.clone()).collect();
    boxes("warn", &texts)
}

/// "median (min–max)" of MiB/s.
fn bw_cell(item: &Item) -> String {
    let s = item.summary(&METRICS[0]);
    if s.n > 1 {
        format!(
            "{} ({}–{})",
            table::mib(s.median),
            table::mib(s.min),
            table::mib(s.max)
        )
    } else {
        table::mib(s.median)
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

fn summary_table(sets: &[Dataset]) -> String {
    let many = sets.len() > 1;
    let mut headers = vec!["test / job", "dir", "parameters"];
    if many {
        headers.insert(0, "source");
    }
    headers.extend([
        "MiB/s median (min–max)",
        "IOPS",
        "mean lat",
        "p99 lat",
        "passes",
    ]);
    let mut rows = Vec::new();
    for d in sets {
        for it in &d.items {
            let mut r = vec![it.name.clone(), it.dir.clone(), it.params.describe()];
            if many {
                r.insert(0, d.title.clone());
            }
            r.push(bw_cell(it));
            r.push(table::iops(median(it, 1)));
            r.push(table::latency(median(it, 2)));
            r.push(table::latency(median(it, 3)));
            r.push(it.samples.len().to_string());
            rows.push(r);
        }
    }
    table(&headers, &rows, if many { 4 } else { 3 })
}

/// Bar charts of median bandwidth and IOPS per item (several data sets
/// side by side).
fn bar_charts(sets: &[Dataset], names: &[String]) -> String {
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
    for (mi, title, ax) in [
        (0usize, "Bandwidth (MiB/s, median)", "MiB/s"),
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
                                    m / 1048576.0
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
        out.push_str(&svg::bar_chart(
            title,
            &Axis::new(ax, Scale::Linear, Format::Number),
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
    svg::line_chart(&LineChart {
        title: title.to_string(),
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
pub fn from_zero(s: &super::dataset::Series) -> super::dataset::Series {
    super::dataset::Series {
        start_s: 0.0,
        t_s: s.t_s.iter().map(|t| t - s.start_s).collect(),
        ..s.clone()
    }
}

/// Throughput over time: (name, series, dashed, color) per curve.
pub fn timeline_chart(
    title: &str,
    iops: bool,
    curves: &[(String, &super::dataset::Series, bool, usize)],
) -> String {
    let series: Vec<Series> = curves
        .iter()
        .map(|(name, s, dashed, color)| Series {
            name: name.clone(),
            points: s
                .t_s
                .iter()
                .zip(if iops { &s.iops } else { &s.bw_bytes })
                .map(|(t, v)| (*t, if iops { *v } else { v / 1048576.0 }))
                .collect(),
            dashed: *dashed,
            color: Some(*color),
            ..Series::default()
        })
        .collect();
    let x = Axis::new("time (s)", Scale::Linear, Format::Number);
    svg::line_chart(&LineChart {
        title: title.to_string(),
        x,
        y: Axis::new(
            if iops { "IOPS" } else { "MiB/s" },
            Scale::Linear,
            Format::Number,
        ),
        series,
        width: 460,
        height: 240,
    })
}

fn item_section(d: &Dataset, it: &Item) -> String {
    let mut s = String::from("<div class=\"item\">");
    let title = if d.title.is_empty() {
        it.label()
    } else {
        format!("{} — {}", it.label(), d.title)
    };
    let _ = write!(
        s,
        "<h3>{}</h3><p class=\"meta\">{}</p><div class=\"grid\">",
        esc(&title),
        esc(&it.params.describe())
    );
    if let Some(det) = &it.detail {
        if let Some(tl) = &det.timeline {
            let tl = from_zero(tl);
            let c = [(it.label(), &tl, false, 0usize)];
            s.push_str(&timeline_chart("Bandwidth over time", false, &c));
            s.push_str(&timeline_chart("IOPS over time", true, &c));
        }
        if !det.percentiles.is_empty() {
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

fn kv_rows(v: &Value) -> Vec<Vec<String>> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let val = match v {
                        Value::String(s) => s.clone(),
                        Value::Array(a) => a
                            .iter()
                            .map(|x| x.as_str().map(str::to_string).unwrap_or(x.to_string()))
                            .collect::<Vec<_>>()
                            .join(", "),
                        other => other.to_string(),
                    };
                    let val = if k.ends_with("bytes") {
                        v.as_u64()
                            .map(|b| format!("{} ({b})", crate::report::env::human(b)))
                            .unwrap_or(val)
                    } else {
                        val
                    };
                    vec![k.clone(), val]
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The environment record as tables.
pub fn environment(env: &Value) -> String {
    let mut s = String::new();
    if let Some(h) = env.get("host") {
        s.push_str("<h3>Host</h3>");
        s.push_str(&table(&["", ""], &kv_rows(h), 2));
    }
    for t in env["targets"].as_array().into_iter().flatten() {
        let _ = write!(
            s,
            "<h3>Target {}</h3>",
            esc(t["path"].as_str().unwrap_or(""))
        );
        s.push_str(&table(&["", ""], &kv_rows(t), 2));
    }
    s
}

/// The report of one or more result files.
pub fn report_page(title: &str, sets: &[Dataset]) -> String {
    report_page_with_logs(title, sets, &[])
}

/// The report of result files and fio log files.
pub fn report_page_with_logs(title: &str, sets: &[Dataset], logs: &[super::logs::Log]) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>{}</h1>", esc(title));
    for d in sets {
        let _ = write!(
            b,
            "<p class=\"meta\">{} — {}{}{}</p>",
            esc(&d.source),
            esc(&d.kind),
            if d.version.is_empty() {
                String::new()
            } else {
                format!(", {}", esc(&d.version))
            },
            if d.time.is_empty() {
                String::new()
            } else {
                format!(", {}", esc(&d.time))
            },
        );
        if d.interrupted {
            b.push_str(&boxes(
                "warn",
                &["This run was interrupted: figures cover only what was measured.".into()],
            ));
        }
        b.push_str(&boxes("note", &d.notes));
        b.push_str(&warning_boxes(&d.warnings));
    }
    if !sets.is_empty() {
        b.push_str("<h2>Summary</h2>");
        b.push_str(&summary_table(sets));
    }
    b.push_str(
        "<p class=\"meta\">Medians over the measured passes (min–max of bandwidth in \
         brackets). Mean latency is total latency; p99 is of total latency when the job \
         reports it, else of completion latency.</p>",
    );
    let names: Vec<String> = sets.iter().map(|d| d.title.clone()).collect();
    b.push_str(&bar_charts(sets, &names));
    for d in sets {
        if let Some(sw) = &d.sweep {
            let _ = write!(b, "<h2>Sweep — {}</h2>", esc(&d.title));
            b.push_str(&super::sweep::sweep_html(sw));
        }
    }
    if !logs.is_empty() {
        b.push_str("<h2>Logs</h2><div class=\"grid\">");
        for l in logs {
            b.push_str(&super::logs::chart(l));
        }
        b.push_str("</div>");
    }
    if !sets.is_empty() {
        b.push_str("<h2>Per test</h2>");
    }
    for d in sets {
        for it in &d.items {
            b.push_str(&item_section(d, it));
        }
    }
    for d in sets {
        if let Some(env) = &d.environment {
            let _ = write!(b, "<h2>Environment — {}</h2>", esc(&d.title));
            b.push_str(&environment(env));
        }
        if let Some(st) = d.settings.as_ref().filter(|s| s.is_object()) {
            let _ = write!(b, "<h3>Settings — {}</h3>", esc(&d.title));
            b.push_str(&table(&["", ""], &kv_rows(st), 2));
        }
    }
    for d in sets {
        if let Some(jf) = &d.jobfile {
            let _ = write!(
                b,
                "<h2>Job file — {}</h2><pre>{}</pre>",
                esc(&d.title),
                esc(jf)
            );
        }
    }
    let _ = write!(
        b,
        "<p class=\"meta\">Written by iomark {}.</p>",
        env!("CARGO_PKG_VERSION")
    );
    page(title, &b)
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
}
