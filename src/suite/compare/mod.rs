//! `iomark compare`: before and after, per test (job direction) and
//! metric (bandwidth, IOPS, mean and p99 latency), with a verdict that
//! cannot be fooled by noise or by comparing different things.
//!
//! A side is a list of runs: result files (fio or iomark JSON, iomark
//! quick/suite/sweep results: one file is one run), `@LABEL` (the latest
//! runs with that label in the results history) or `#ID` (a history
//! run). The settings that define each test are compared first
//! (`settings`); then each metric gets its estimate, interval and
//! verdict (`judge`).
//!
//! Exit status: 0 no regression (inconclusive included), 2 at least one
//! regression, 3 not comparable (the sides' defining settings differ and
//! `--allow-different` was not given), 1 bad input.

pub mod judge;
pub mod settings;

use std::fmt::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::svg::{self, esc, Axis, Format, Scale};
use super::{fail, html, write_file, EXIT_REGRESSION};
use crate::history::{self, Run};
use crate::job::error::printable;
use crate::results::dataset::round3;
use crate::results::dataset::{Dataset, Item, METRICS};
use crate::results::stats;
use crate::results::units::{self as table, BwUnit};
pub use judge::{Row, Rules, Verdict, DEFAULT_ALPHA, DEFAULT_THRESHOLD_PCT};

/// Exit status of a comparison whose sides ran different settings.
pub const EXIT_NOT_COMPARABLE: i32 = 3;

/// How many of a label's latest runs `@LABEL` takes by default.
pub const DEFAULT_LAST: usize = 10;

/// One side of a comparison.
pub struct Side {
    /// As given: files, `@LABEL`, `#ID`.
    pub spec: String,
    pub runs: Vec<Run>,
}

/// Reads a side: each item a file, `@LABEL` or `#ID`.
pub fn load_side(
    items: &[String],
    last: usize,
    db: Option<&std::path::Path>,
) -> Result<Side, String> {
    let mut runs: Vec<Run> = Vec::new();
    let mut store: Option<history::Store> = None;
    for item in items {
        let from_history = item.starts_with('@') || item.starts_with('#');
        if from_history && store.is_none() {
            let path = history::db_path(db).map_err(|e| e.to_string())?;
            if std::fs::symlink_metadata(&path).is_err() {
                return Err(format!(
                    "{item}: there is no results history at '{}' yet",
                    path.display()
                ));
            }
            store = Some(history::Store::open_read(&path).map_err(|e| e.to_string())?);
        }
        if let Some(label) = item.strip_prefix('@') {
            let f = history::Filter {
                label: Some(label.to_string()),
                last: Some(last),
                ..history::Filter::default()
            };
            let found = store
                .as_ref()
                .expect("opened")
                .runs(&f)
                .map_err(|e| e.to_string())?;
            if found.is_empty() {
                return Err(format!(
                    "{item}: no run in the history has the label '{label}'"
                ));
            }
            runs.extend(found);
        } else if let Some(id) = item.strip_prefix('#') {
            let id: i64 = id
                .parse()
                .map_err(|_| format!("'{item}' is not a run id (#N, as iomark history lists)"))?;
            let f = history::Filter {
                ids: vec![id],
                ..history::Filter::default()
            };
            let found = store
                .as_ref()
                .expect("opened")
                .runs(&f)
                .map_err(|e| e.to_string())?;
            if found.is_empty() {
                return Err(format!("{item}: no such run in the history"));
            }
            runs.extend(found);
        } else {
            runs.push(history::run::load(&PathBuf::from(item))?);
        }
    }
    Ok(Side {
        spec: items.join(" "),
        runs,
    })
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:+.1}%", v * 100.0)
    } else {
        "n/a".into()
    }
}

fn runs_word(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// "~6 runs a side would settle it (as no change)".
fn needed_text(n: &judge::Needed) -> String {
    let runs = match n.runs {
        Some(k) => format!("~{k} runs a side"),
        None => "over 1000 runs a side".into(),
    };
    let towards = match n.towards {
        Verdict::NoChange => "as no change".to_string(),
        v => format!("as {}", v.text()),
    };
    format!(
        "{runs} would settle it ({towards}, if the {} vary {:.1}% as here)",
        n.from,
        n.spread * 100.0
    )
}

/// The interval column (or, without one, why not), with the runs that
/// would settle an inconclusive row.
fn interval_text(r: &Row) -> String {
    let mut s = match &r.interval {
        Some(iv) => format!("[{}, {}]", pct(iv.lo), pct(iv.hi)),
        None => "no interval: 1 run a side".into(),
    };
    if r.verdict == Verdict::Inconclusive {
        match &r.needed {
            Some(n) => {
                s.push_str("; ");
                s.push_str(&needed_text(n));
            }
            None => s.push_str("; no spread measured: run each side 3 times or more"),
        }
    }
    s
}

/// A metric's value in the comparison's units: bandwidth in `unit`
/// (labelled), IOPS, latency.
fn value_text(metric: &crate::results::dataset::MetricDef, v: f64, unit: BwUnit) -> String {
    match metric.key {
        "bw_bytes" => format!("{} {}", unit.text(v), unit.name()),
        "iops" => format!("{} IOPS", table::iops(v)),
        _ => table::latency(v),
    }
}

/// "1,204 → 1,010 MB/s": the sides' geometric means.
fn from_to(r: &Row, unit: BwUnit) -> String {
    let (b, n) = (stats::gmean(&r.base), stats::gmean(&r.new));
    match r.metric.key {
        "bw_bytes" => format!("{} → {} {}", unit.text(b), unit.text(n), unit.name()),
        _ => format!(
            "{} → {}",
            value_text(r.metric, b, unit),
            value_text(r.metric, n, unit)
        ),
    }
}

/// The rows grouped by test, in order.
fn by_test(rows: &[Row]) -> Vec<(String, Vec<&Row>)> {
    let mut out: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(k, _)| *k == r.key) {
            Some((_, v)) => v.push(r),
            None => out.push((r.key.clone(), vec![r])),
        }
    }
    out
}

/// How the rows were judged (see [`judge::compare`]).
fn method(rules: Rules, m: usize) -> String {
    format!(
        "each change is the ratio of the geometric means of the per-run values; a \
         verdict only when its interval lies beyond ±{}% (--threshold). The {m} \
         quantities compared (a test's bandwidth and IOPS are one when its block size \
         is fixed) are tested with Holm's step-down procedure, so that identical sides \
         get a false regression or improvement anywhere with a chance of at most {}% \
         (--alpha {}); each interval is Welch's on the logarithms at the level its step \
         used, from {}% (first step) to {}% (one quantity left)",
        rules.threshold,
        round3(rules.alpha * 100.0),
        rules.alpha,
        round3((1.0 - rules.alpha / m.max(1) as f64) * 100.0),
        round3((1.0 - rules.alpha) * 100.0),
    )
}

/// What a comparison found, ready to print.
pub struct Outcome<'a> {
    pub base: &'a Side,
    pub new: &'a Side,
    pub rules: Rules,
    pub differences: Vec<settings::Difference>,
    pub context: Vec<String>,
    pub allowed: bool,
    pub rows: Vec<Row>,
    pub only_base: Vec<String>,
    pub only_new: Vec<String>,
    /// Both sides as data sets, when both are result files (for the
    /// HTML report's charts of the runs).
    pub datasets: Option<(Dataset, Dataset)>,
    /// Said with every output: figures measured (or compared) under Wine.
    pub wine: Option<String>,
    /// The bandwidth unit: as the runs were recorded (MB/s for
    /// CrystalDiskMark-style results, else MiB/s) unless `--units`.
    pub unit: BwUnit,
}

/// The Wine warning of a comparison: when a run's results say it was
/// measured under Wine, or when iomark runs under Wine (the history
/// does not keep where a run was measured).
fn wine_warning(base: &Side, new: &Side) -> Option<String> {
    if base.runs.iter().chain(&new.runs).any(|r| r.wine) {
        return Some(format!(
            "figures measured under Wine: {}",
            crate::host::WINE_WARNING.trim_start_matches("running under Wine: ")
        ));
    }
    crate::host::wine_warning().map(|w| w.message)
}

impl Outcome<'_> {
    pub fn comparable(&self) -> bool {
        self.differences.is_empty() || self.allowed
    }

    pub fn count(&self, v: Verdict) -> usize {
        by_test(&self.rows)
            .iter()
            .filter(|(_, rows)| judge::decisive(rows).map(|r| r.verdict) == Some(v))
            .count()
    }

    pub fn exit_code(&self) -> i32 {
        if !self.comparable() {
            EXIT_NOT_COMPARABLE
        } else if self.rows.iter().any(|r| r.verdict == Verdict::Regression) {
            EXIT_REGRESSION
        } else {
            0
        }
    }

    pub fn overall(&self) -> String {
        if !self.comparable() {
            return "not comparable: the sides ran different settings (see the diff; \
                    --allow-different compares them anyway)"
                .into();
        }
        let n = |v| self.count(v);
        format!(
            "{} regression(s), {} improvement(s), {} no change, {} inconclusive",
            n(Verdict::Regression),
            n(Verdict::Improvement),
            n(Verdict::NoChange),
            n(Verdict::Inconclusive),
        )
    }

    /// What changed, in plain words: one line per test with a verdict
    /// or an open question, then the tests without a change.
    pub fn plain(&self) -> Vec<(Verdict, String)> {
        let mut out = Vec::new();
        let mut same = 0;
        for (_, rows) in by_test(&self.rows) {
            let Some(d) = judge::decisive(&rows) else {
                continue;
            };
            let change = if d.change.is_finite() {
                let dir = if d.change >= 0.0 { "up" } else { "down" };
                format!(
                    "{} {dir} {:.1}% ({})",
                    d.metric.title,
                    d.change.abs() * 100.0,
                    from_to(d, self.unit)
                )
            } else {
                d.metric.title.to_string()
            };
            let label = printable(&d.label);
            match d.verdict {
                Verdict::Regression => out.push((d.verdict, format!("{label}: worse, {change}"))),
                Verdict::Improvement => out.push((d.verdict, format!("{label}: better, {change}"))),
                Verdict::Inconclusive => {
                    let how = match &d.needed {
                        Some(n) => needed_text(n),
                        None => "run each side 3 times or more to tell".into(),
                    };
                    out.push((
                        d.verdict,
                        format!("{label}: cannot tell yet, {change}; {how}"),
                    ));
                }
                Verdict::NoChange => same += 1,
            }
        }
        if same > 0 {
            out.push((
                Verdict::NoChange,
                format!(
                    "{same} test{} unchanged: every metric within ±{}%",
                    if same == 1 { "" } else { "s" },
                    self.rules.threshold
                ),
            ));
        }
        out
    }

    pub fn text(&self, detail: bool) -> String {
        let mut s = String::new();
        let side = |name: &str, sd: &Side| {
            let ids: Vec<String> = sd
                .runs
                .iter()
                .filter_map(|r| r.id.map(|i| format!("#{i}")))
                .collect();
            crate::report::text::wrap(
                &format!(
                    "{name}: {} ({}{})",
                    printable(&sd.spec),
                    runs_word(sd.runs.len()),
                    if sd.spec.starts_with('@') {
                        format!(": {}", ids.join(" "))
                    } else {
                        String::new()
                    }
                ),
                2,
                80,
            )
        };
        s.push_str("iomark compare\n");
        if let Some(w) = &self.wine {
            s.push_str(&crate::report::text::wrap(&format!("warning: {w}"), 2, 80));
        }
        s.push_str(&side("base", self.base));
        s.push_str(&side("new", self.new));
        if self.comparable() {
            s.push_str("\nWhat changed:\n");
            for (v, line) in self.plain() {
                let head = if v == Verdict::Inconclusive {
                    "undecided".to_string()
                } else {
                    v.shown().to_string()
                };
                let first = format!("{head:<11} {line}");
                s.push_str(&crate::report::text::wrap(&first, 2, 80));
            }
        }
        for c in &self.context {
            s.push_str(&crate::report::text::wrap(
                &format!("differs (not a setting): {}", printable(c)),
                2,
                80,
            ));
        }
        if !self.differences.is_empty() {
            let reference = self
                .base
                .runs
                .first()
                .map(|r| format!("base: {}", printable(&r.source)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "\nThe sides differ in settings that define what is measured{}:",
                if self.allowed {
                    " (--allow-different)"
                } else {
                    ""
                }
            );
            s.push_str(&settings::render_diff(&self.differences, &reference));
        }
        for (name, list) in [("base", &self.only_base), ("new", &self.only_new)] {
            if !list.is_empty() {
                let list: Vec<_> = list.iter().map(|k| printable(k)).collect();
                let _ = writeln!(s, "\nonly in {name}: {}", list.join(", "));
            }
        }
        if self.comparable() {
            s.push_str("\nStatistics");
            s.push_str(if detail {
                " (every metric):\n"
            } else {
                " (per test, the metric that decides; --detail for all):\n"
            });
            s.push_str(&self.table(detail));
            s.push_str(&crate::report::text::wrap(
                &format!(
                    "test: {}",
                    method(self.rules, judge::family_size(&self.rows))
                ),
                2,
                80,
            ));
            if let Some(n) = judge::noise_note(&self.rows) {
                s.push_str(&crate::report::text::wrap(&format!("note: {n}"), 2, 80));
            }
        }
        let _ = writeln!(s, "\nOverall: {}", self.overall());
        s
    }

    fn table(&self, detail: bool) -> String {
        let mut s = String::new();
        let w = self
            .rows
            .iter()
            .map(|r| printable(&r.label).chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 26);
        let _ = writeln!(
            s,
            "\n{:<14}  {:<w$}  {:<12} {:>7}  interval",
            "verdict", "test", "metric", "change"
        );
        let line = |r: &Row, verdict: &str| {
            let iv = match &r.interval {
                Some(iv) => format!("[{}, {}]", pct(iv.lo), pct(iv.hi)),
                None => "none: 1 run a side".into(),
            };
            let mut more = from_to(r, self.unit);
            if r.verdict == Verdict::Inconclusive {
                more.push_str("; ");
                more.push_str(&match &r.needed {
                    Some(n) => needed_text(n),
                    None => "no spread measured: run each side 3 times or more".into(),
                });
            }
            if r.same_as_bandwidth {
                more.push_str(" (one quantity with bandwidth: fixed block size)");
            }
            format!(
                "{:<14}  {:<w$}  {:<12} {:>7}  {}\n{}",
                verdict,
                printable(&r.label),
                r.metric.title,
                pct(r.change),
                iv,
                crate::report::text::wrap(&more, 18, 80)
            )
        };
        for (_, rows) in by_test(&self.rows) {
            let Some(d) = judge::decisive(&rows) else {
                continue;
            };
            s.push_str(&line(d, d.verdict.shown()));
            if detail {
                for r in rows.iter().filter(|r| r.metric.key != d.metric.key) {
                    s.push_str(&line(r, &format!("  {}", r.verdict.text())));
                }
            }
        }
        s
    }

    pub fn json(&self) -> Value {
        let side = |sd: &Side| {
            json!({
                "spec": sd.spec,
                "runs": sd.runs.iter().map(|r| json!({
                    "source": r.source, "id": r.id, "label": r.label,
                    "time": r.time, "tool": r.tool, "version": r.version,
                })).collect::<Vec<_>>(),
            })
        };
        let tests: Vec<Value> = by_test(&self.rows)
            .into_iter()
            .map(|(key, rows)| {
                let d = judge::decisive(&rows);
                json!({
                    "key": key,
                    "test": d.map(|r| r.label.clone()),
                    "verdict": d.map(|r| r.verdict.text()),
                    "metrics": rows.iter().map(|r| json!({
                        "metric": r.metric.key,
                        "base": r.base,
                        "new": r.new,
                        "change_pct": r.change.is_finite().then_some(r.change * 100.0),
                        "interval_pct": r.interval.map(|i| [i.lo * 100.0, i.hi * 100.0]),
                        "df": r.interval.map(|i| i.df),
                        "verdict": r.verdict.text(),
                        "base_gmean": round3(stats::gmean(&r.base)),
                        "new_gmean": round3(stats::gmean(&r.new)),
                        "shown": from_to(r, self.unit),
                        "confidence_pct": r.level.is_finite().then(|| round3((1.0 - r.level) * 100.0)),
                        "same_as_bandwidth": r.same_as_bandwidth,
                        "runs_needed": r.needed.as_ref().and_then(|n| n.runs),
                        "settles_as": r.needed.as_ref().map(|n| n.towards.text()),
                        "spread_pct": r.needed.as_ref().map(|n| n.spread * 100.0),
                        "spread_from": r.needed.as_ref().map(|n| n.from),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let verdict = if !self.comparable() {
            "not comparable"
        } else if self.count(Verdict::Regression) > 0 {
            "regression"
        } else {
            "no regression"
        };
        json!({
            "iomark version": env!("CARGO_PKG_VERSION"),
            "kind": "compare",
            "warnings": self.wine.iter().collect::<Vec<_>>(),
            "base": side(self.base),
            "new": side(self.new),
            "method": method(self.rules, judge::family_size(&self.rows)),
            "unit": self.unit.name(),
            "summary": if self.comparable() {
                self.plain().into_iter().map(|(v, l)| json!({"verdict": v.text(), "text": l})).collect::<Vec<_>>()
            } else {
                Vec::new()
            },
            "threshold_pct": self.rules.threshold,
            "confidence": 1.0 - self.rules.alpha,
            "comparable": self.comparable(),
            "differences": self.differences.iter().map(|d| json!({
                "scope": d.scope, "setting": d.key, "base": d.base, "other": d.other, "runs": d.runs,
            })).collect::<Vec<_>>(),
            "context": self.context,
            "tests": if self.comparable() { Value::Array(tests) } else { json!([]) },
            "only_in_base": self.only_base,
            "only_in_new": self.only_new,
            "regressions": self.count(Verdict::Regression),
            "improvements": self.count(Verdict::Improvement),
            "no_change": self.count(Verdict::NoChange),
            "inconclusive": self.count(Verdict::Inconclusive),
            "verdict": verdict,
            "exit_status": self.exit_code(),
        })
    }

    pub fn html(&self) -> String {
        let mut b = String::from("<h1>iomark compare</h1>");
        let _ = write!(
            b,
            "<p class=\"meta\">base: {} ({})<br/>new: {} ({})</p><p><strong>{}</strong></p>",
            esc(&self.base.spec),
            runs_word(self.base.runs.len()),
            esc(&self.new.spec),
            runs_word(self.new.runs.len()),
            esc(&self.overall())
        );
        if self.comparable() {
            b.push_str("<h2>What changed</h2><ul class=\"plain\">");
            for (v, line) in self.plain() {
                let class = match v {
                    Verdict::Regression => "regression",
                    Verdict::Improvement => "improvement",
                    _ => "same",
                };
                let _ = write!(b, "<li class=\"{class}\">{}</li>", esc(&line));
            }
            b.push_str("</ul><h2>Statistics</h2>");
            let _ = write!(
                b,
                "<p>{}</p>",
                esc(&method(self.rules, judge::family_size(&self.rows)))
            );
        }
        if let Some(w) = &self.wine {
            let _ = write!(b, "<p><strong>Warning:</strong> {}</p>", esc(w));
        }
        if let Some(n) = judge::noise_note(&self.rows) {
            let _ = write!(b, "<p>{}</p>", esc(n));
        }
        for c in &self.context {
            let _ = write!(b, "<p>Differs (not a setting): {}</p>", esc(c));
        }
        if !self.differences.is_empty() {
            let reference = self
                .base
                .runs
                .first()
                .map(|r| format!("base: {}", r.source))
                .unwrap_or_default();
            let _ = write!(
                b,
                "<h2>Settings that differ</h2><pre>{}</pre>",
                esc(&settings::render_diff(&self.differences, &reference))
            );
        }
        if self.comparable() {
            b.push_str("<table><thead><tr><th class=\"l\">test</th><th class=\"l\">metric</th><th>runs</th><th>base → new</th><th>change</th><th>interval</th><th class=\"l\">verdict</th></tr></thead><tbody>");
            for r in &self.rows {
                let class = match r.verdict {
                    Verdict::Regression => "regression",
                    Verdict::Improvement => "improvement",
                    _ => "same",
                };
                let _ = write!(
                    b,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l {class}\">{}</td></tr>",
                    esc(&r.label),
                    esc(r.metric.title),
                    r.base.len(),
                    r.new.len(),
                    esc(&from_to(r, self.unit)),
                    esc(&pct(r.change)),
                    esc(&interval_text(r)),
                    esc(r.verdict.text())
                );
            }
            b.push_str("</tbody></table>");
            b.push_str("<div class=\"grid\">");
            for m in &METRICS {
                let rows: Vec<&Row> = self.rows.iter().filter(|r| r.metric.key == m.key).collect();
                if rows.iter().any(|r| r.interval.is_some()) {
                    b.push_str(&forest(m.title, &rows, self.rules.threshold / 100.0));
                }
            }
            b.push_str("</div>");
        }
        if let Some((bd, nd)) = &self.datasets {
            b.push_str(&detail_charts(bd, nd, self.unit));
        }
        html::page("iomark compare", &b)
    }
}

/// The charts of the runs themselves, when both sides are result files:
/// base and new medians per metric, and per test the latency
/// percentiles and the throughput over time of a representative pass of
/// each side.
fn detail_charts(base: &Dataset, new: &Dataset, unit: BwUnit) -> String {
    let mut b = String::new();
    // Bars: base vs new medians per metric.
    let matched: Vec<(&Item, &Item)> = base
        .items
        .iter()
        .filter_map(|bi| {
            new.items
                .iter()
                .find(|n| n.key == bi.key)
                .map(|ni| (bi, ni))
        })
        .collect();
    if !matched.is_empty() {
        b.push_str("<h2>Base and new</h2><div class=\"grid\">");
        let cats: Vec<String> = matched.iter().map(|(i, _)| i.label()).collect();
        for m in &METRICS {
            let (div, unit, fmt) = match m.key {
                "bw_bytes" => (unit.bytes(), unit.name(), Format::Number),
                "iops" => (1.0, "IOPS", Format::Number),
                _ => (1.0, "latency", Format::Nanos),
            };
            let med = |i: &Item| {
                let s = i.summary(m);
                if s.n == 0 {
                    f64::NAN
                } else {
                    s.median / div
                }
            };
            let sets = vec![
                (
                    "base".to_string(),
                    matched.iter().map(|(x, _)| med(x)).collect(),
                ),
                (
                    "new".to_string(),
                    matched.iter().map(|(_, y)| med(y)).collect(),
                ),
            ];
            b.push_str(&svg::bar_chart(
                &format!("{} (median)", m.title),
                &Axis::new(unit, Scale::Linear, fmt),
                &cats,
                &sets,
                ((cats.len() * 90).clamp(460, 960)) as u32,
            ));
        }
        b.push_str("</div><h2>Per job</h2>");
        for (bi, ni) in &matched {
            let _ = write!(
                b,
                "<div class=\"item\"><h3>{}</h3><div class=\"grid\">",
                esc(&bi.label())
            );
            if let (Some(bd), Some(nd)) = (&bi.detail, &ni.detail) {
                if !bd.percentiles.is_empty() || !nd.percentiles.is_empty() {
                    b.push_str(&html::percentile_chart(
                        "Latency percentiles (base dashed)",
                        &[("base".into(), bd, true, 0), ("new".into(), nd, false, 1)],
                    ));
                }
                if let (Some(bt), Some(nt)) = (&bd.timeline, &nd.timeline) {
                    // Both from their own start.
                    let (bs, ns) = (html::from_zero(bt), html::from_zero(nt));
                    b.push_str(&html::timeline_chart(
                        "Bandwidth over time (base dashed)",
                        false,
                        &[("base".into(), &bs, true, 0), ("new".into(), &ns, false, 1)],
                    ));
                }
            }
            b.push_str("</div></div>");
        }
    }
    b
}

/// An interval chart: one line per test from the interval's low to high
/// end, a dot at the estimate, the ±threshold band shaded. The axis is
/// the logarithm of the ratio, so that halving and doubling are as far
/// from "no change".
#[allow(clippy::too_many_lines)]
fn forest(title: &str, rows: &[&Row], t: f64) -> String {
    let (w, left, right, top, rh) = (760.0, 230.0, 24.0, 40.0, 24.0);
    let h = top + rh * rows.len() as f64 + 52.0;
    let ln = |v: f64| (1.0 + v).max(1e-6).ln();
    let mut lo = ln(-t) * 2.0;
    let mut hi = ln(t) * 2.0;
    for r in rows {
        if let Some(iv) = &r.interval {
            lo = lo.min(ln(iv.lo));
            hi = hi.max(ln(iv.hi));
        }
    }
    let span = (hi - lo).max(1e-9);
    let x = |v: f64| left + (ln(v) - lo) / span * (w - left - right);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" \
         font-family=\"sans-serif\" class=\"chart interval-chart wide\"><title>{t2}: change and interval</title>\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\
         <text class=\"chart-title\" x=\"{cx}\" y=\"18\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{t2}: change and interval</text>\
         <rect x=\"{bx:.1}\" y=\"{top}\" width=\"{bw:.1}\" height=\"{bh:.1}\" fill=\"#e8f0e8\"/>\
         <line x1=\"{zx:.1}\" y1=\"{top}\" x2=\"{zx:.1}\" y2=\"{bot:.1}\" stroke=\"#888\"/>",
        t2 = esc(title),
        cx = w / 2.0,
        bx = x(-t),
        bw = x(t) - x(-t),
        bh = rh * rows.len() as f64,
        zx = x(0.0),
        bot = top + rh * rows.len() as f64,
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + rh * (i as f64 + 0.5);
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + 4.0,
            esc(&r.label)
        );
        let color = match r.verdict {
            Verdict::Regression => "#c0392b",
            Verdict::Improvement => "#1e8449",
            Verdict::NoChange => "#2e4053",
            Verdict::Inconclusive => "#b9770e",
        };
        if let Some(iv) = &r.interval {
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"3\"/>\
                 <circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{color}\"><title>{}: {} [{}, {}] {}</title></circle>",
                x(iv.lo),
                x(iv.hi),
                x(iv.change),
                esc(&r.label),
                pct(iv.change),
                pct(iv.lo),
                pct(iv.hi),
                r.verdict.text()
            );
        }
    }
    // Round ticks (a 1-2-5 step of percent) with 0 and ±threshold, none
    // crowding another; the axis's title under them.
    let by = top + rh * rows.len() as f64 + 18.0;
    let mut last: Option<f64> = None;
    let (_, _, round) = svg::round_ticks((lo.exp() - 1.0) * 100.0, (hi.exp() - 1.0) * 100.0, false);
    let mut ticks: Vec<f64> = vec![-t, 0.0, t];
    ticks.extend(
        round
            .into_iter()
            .map(|p| p / 100.0)
            .filter(|v| *v > lo.exp() - 1.0 - 1e-9 && *v < hi.exp() - 1.0 + 1e-9),
    );
    ticks.sort_by(f64::total_cmp);
    ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    // The threshold and 0 first, so that a round tick gives way to them.
    let mut placed: Vec<f64> = Vec::new();
    for v in [-t, 0.0, t].into_iter().chain(ticks.iter().copied()) {
        let xx = x(v);
        if placed.iter().any(|p| (p - xx).abs() < 44.0) {
            continue;
        }
        placed.push(xx);
    }
    placed.sort_by(f64::total_cmp);
    let _ = write!(
        s,
        "<text class=\"axis-title x\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">change, new against base (log scale of the ratio; shaded: within ±{}%)</text>",
        (left + w - right) / 2.0,
        by + 16.0,
        svg::digits(t * 100.0)
    );
    let keep = placed.clone();
    for v in ticks
        .into_iter()
        .filter(|v| keep.iter().any(|p| (p - x(*v)).abs() < 1e-6))
    {
        let xx = x(v);
        if last.is_some_and(|p| xx - p < 40.0) {
            continue;
        }
        last = Some(xx);
        let _ = write!(
            s,
            "<text x=\"{xx:.1}\" y=\"{by:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            esc(&pct(v))
        );
    }
    s.push_str("</svg>");
    s
}

/// Both sides as data sets when every item is a file (None otherwise, or
/// when one cannot be read as one).
fn file_datasets(base: &[String], new: &[String]) -> Option<(Dataset, Dataset)> {
    let load = |items: &[String]| -> Option<Dataset> {
        if items
            .iter()
            .any(|i| i.starts_with('@') || i.starts_with('#'))
        {
            return None;
        }
        let sets = items
            .iter()
            .map(|f| crate::results::dataset::load(std::path::Path::new(f)).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(crate::results::dataset::merge(sets))
    };
    Some((load(base)?, load(new)?))
}

/// The summary of `base` against `new` for the top of a report of
/// several labelled runs: what changed in plain words and one row per
/// test (its deciding metric, both sides' values, change, interval and
/// verdict), judged as `iomark compare` judges them.
pub fn summary_html(base: &Side, new: &Side, rules: Rules, units: Option<BwUnit>) -> String {
    let (rows, only_base, only_new) = judge::compare(&base.runs, &new.runs, rules);
    if rows.is_empty() {
        return String::new();
    }
    let out = Outcome {
        differences: settings::differences(&base.runs, &new.runs),
        context: Vec::new(),
        base,
        new,
        rules,
        allowed: false,
        rows,
        only_base,
        only_new,
        datasets: None,
        wine: None,
        unit: units.unwrap_or_else(|| recorded_unit(&base.runs, &new.runs)),
    };
    let mut b = format!(
        "<section class=\"groups\"><h2>{} against {} ({} against {})</h2><p><strong>{}</strong></p>",
        esc(&new.spec),
        esc(&base.spec),
        runs_word(new.runs.len()),
        runs_word(base.runs.len()),
        esc(&out.overall())
    );
    if out.comparable() {
        b.push_str("<ul class=\"plain\">");
        for (v, line) in out.plain() {
            let class = match v {
                Verdict::Regression => "regression",
                Verdict::Improvement => "improvement",
                _ => "same",
            };
            let _ = write!(b, "<li class=\"{class}\">{}</li>", esc(&line));
        }
        b.push_str(
            "</ul><table><thead><tr><th class=\"l\">test</th><th class=\"l\">metric</th><th>",
        );
        let _ = write!(b, "{}</th><th>{}</th>", esc(&base.spec), esc(&new.spec));
        b.push_str(
            "<th>change</th><th>interval</th><th class=\"l\">verdict</th></tr></thead><tbody>",
        );
        for (_, rs) in by_test(&out.rows) {
            let Some(d) = judge::decisive(&rs) else {
                continue;
            };
            let class = match d.verdict {
                Verdict::Regression => "regression",
                Verdict::Improvement => "improvement",
                _ => "same",
            };
            let iv = d
                .interval
                .map(|i| format!("[{}, {}]", pct(i.lo), pct(i.hi)))
                .unwrap_or_else(|| "–".into());
            let _ = write!(
                b,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l {class}\">{}</td></tr>",
                esc(&d.label),
                esc(d.metric.title),
                esc(&value_text(d.metric, stats::gmean(&d.base), out.unit)),
                esc(&value_text(d.metric, stats::gmean(&d.new), out.unit)),
                esc(&pct(d.change)),
                esc(&iv),
                esc(d.verdict.text())
            );
        }
        b.push_str("</tbody></table>");
        let _ = write!(
            b,
            "<p class=\"meta\">Geometric means of the runs; {}</p>",
            esc(&method(rules, judge::family_size(&out.rows)))
        );
    }
    b.push_str("</section>");
    b
}

/// The unit the runs were recorded in: MB/s when they are
/// CrystalDiskMark-style results (a test named as CrystalDiskMark's),
/// else MiB/s.
pub fn recorded_unit(base: &[Run], new: &[Run]) -> BwUnit {
    BwUnit::of_tests(
        base.iter()
            .chain(new)
            .flat_map(|r| r.tests.iter().map(|t| t.name.as_str())),
    )
}

/// Runs the comparison as asked (parsed by `cli::cmd::compare`).
pub fn run(a: CompareOpts) -> i32 {
    let (base, new) = match (
        load_side(&a.base, a.last, a.db.as_deref()),
        load_side(&a.new, a.last, a.db.as_deref()),
    ) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => return fail("compare", &e),
    };
    let (rows, only_base, only_new) = judge::compare(&base.runs, &new.runs, a.rules);
    if rows.is_empty() {
        return fail(
            "compare",
            "the two sides have no test in common (tests are matched by job or test name and direction)",
        );
    }
    let out = Outcome {
        differences: settings::differences(&base.runs, &new.runs),
        context: settings::context_differences(&base.runs, &new.runs),
        base: &base,
        new: &new,
        rules: a.rules,
        allowed: a.allow_different,
        rows,
        only_base,
        only_new,
        datasets: a.html.as_ref().and_then(|_| file_datasets(&a.base, &a.new)),
        wine: wine_warning(&base, &new),
        unit: a
            .units
            .unwrap_or_else(|| recorded_unit(&base.runs, &new.runs)),
    };
    let mut text = match a.json.as_deref() {
        Some("-") => crate::report::json::to_string(&out.json()),
        Some(path) => {
            if let Err(e) = write_file(path.as_ref(), &crate::report::json::to_string(&out.json()))
            {
                return fail("compare", &e);
            }
            out.text(a.detail)
        }
        None => out.text(a.detail),
    };
    if let Some(h) = &a.html {
        if let Err(e) = write_file(h, &out.html()) {
            return fail("compare", &e);
        }
        if a.json.as_deref() != Some("-") {
            text.push_str(&format!("HTML report: {}\n", h.display()));
        }
    }
    match super::print("compare", &text) {
        0 => out.exit_code(),
        code => code,
    }
}

/// What `iomark compare` was asked.
#[derive(Clone, Debug)]
pub struct CompareOpts {
    /// The runs before: files, `@LABEL` or `#ID`.
    pub base: Vec<String>,
    pub new: Vec<String>,
    pub rules: Rules,
    pub allow_different: bool,
    /// Runs `@LABEL` takes, the latest.
    pub last: usize,
    pub db: Option<PathBuf>,
    pub detail: bool,
    /// `--json FILE`, `-` for standard output.
    pub json: Option<String>,
    pub html: Option<PathBuf>,
    /// `--units`: the bandwidth unit; None: as the runs were recorded.
    pub units: Option<BwUnit>,
}

impl Default for CompareOpts {
    fn default() -> Self {
        CompareOpts {
            base: Vec::new(),
            new: Vec::new(),
            rules: Rules {
                threshold: DEFAULT_THRESHOLD_PCT,
                alpha: DEFAULT_ALPHA,
            },
            allow_different: false,
            last: DEFAULT_LAST,
            db: None,
            detail: false,
            json: None,
            html: None,
            units: None,
        }
    }
}
