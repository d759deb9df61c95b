//! `iomark compare`: before/after, per job direction and metric
//! (bandwidth, IOPS, mean and p99 latency), with a verdict that tells a
//! real change from noise.
//!
//! Repeated runs are either several result files per side
//! (`--base A1.json A2.json --new B1.json B2.json`; the same job in each
//! file is one run) or results bundles of `quick`/`suite`/`sweep`, whose
//! measured passes are the runs.
//!
//! The verdict, per job direction and metric, with change
//! = (median(new) − median(base)) / median(base):
//!
//! - with at least two runs on each side, Welch's unequal-variance t-test
//!   on the per-run values (two-sided), its p-values adjusted with Holm's
//!   method over every comparison made (so α = 0.05, or `--alpha`, bounds
//!   the chance of *any* false verdict in the whole report): a change is
//!   *significant* when the adjusted p < α;
//! - a significant change of at least `--threshold` percent (default 5)
//!   is a **regression** when it is for the worse (less bandwidth or IOPS,
//!   more latency), an **improvement** otherwise; anything else is **no
//!   significant change**;
//! - with a single run on either side there is no noise estimate: a
//!   change of at least the threshold counts, and says so.
//!
//! Exit code: 0 without regressions, 2 (`EXIT_REGRESSION`) when at least
//! one metric regressed, 1 for bad input.

use std::ffi::OsString;
use std::fmt::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::dataset::{self, Dataset, Item, MetricDef, METRICS};
use super::html;
use super::stats::{self, Summary};
use super::svg::{self, esc, Axis, Format, Scale};
use super::{args, fail, table, write_file, EXIT_REGRESSION};

pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;
pub const DEFAULT_ALPHA: f64 = 0.05;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Regression,
    Improvement,
    NoChange,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no significant change",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub metric: &'static MetricDef,
    pub base: Summary,
    pub new: Summary,
    /// Relative change of the medians (0.1 = +10 %).
    pub change: f64,
    /// Welch's p-value (None: fewer than two runs on a side).
    pub p: Option<f64>,
    pub verdict: Verdict,
    pub why: String,
}

#[derive(Clone, Copy, Debug)]
pub struct Rules {
    pub threshold: f64,
    pub alpha: f64,
}

/// The relative change of the medians and whether it is for the worse.
fn change_of(metric: &MetricDef, b: &Summary, n: &Summary) -> (f64, bool) {
    let change = if b.median != 0.0 {
        (n.median - b.median) / b.median.abs()
    } else if n.median == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    let worse = if metric.higher_is_better {
        change < 0.0
    } else {
        change > 0.0
    };
    (change, worse)
}

/// The verdict from the change and the (adjusted) p-value.
fn decide(change: f64, worse: bool, p: Option<f64>, rules: Rules) -> (Verdict, String) {
    let big = change.abs() * 100.0 >= rules.threshold;
    let dir = if worse {
        Verdict::Regression
    } else {
        Verdict::Improvement
    };
    match p {
        Some(p) if p < rules.alpha && big => (dir, format!("p={p:.3} < {}", rules.alpha)),
        Some(p) if p < rules.alpha => (
            Verdict::NoChange,
            format!("p={p:.3}, but below the {}% threshold", rules.threshold),
        ),
        Some(p) => (Verdict::NoChange, format!("within noise (p={p:.3})")),
        None if big => (dir, "single run: no noise estimate".into()),
        None => (
            Verdict::NoChange,
            "single run: no noise estimate, below threshold".into(),
        ),
    }
}

/// Compares one metric of two sets of runs on its own (no correction
/// for other comparisons): change, p-value, verdict and reason.
pub fn judge(
    metric: &'static MetricDef,
    base: &[f64],
    new: &[f64],
    rules: Rules,
) -> (f64, Option<f64>, Verdict, String) {
    let (change, worse) = change_of(metric, &stats::summarize(base), &stats::summarize(new));
    let p = stats::welch(base, new).map(|w| w.p);
    let (v, why) = decide(change, worse, p, rules);
    (change, p, v, why)
}

/// Rows for every item present on both sides; also the keys found on one
/// side only. The p-values are Holm-adjusted over all rows that have one,
/// so that α bounds the chance of any false verdict in the whole
/// comparison, not of each row.
pub fn compare(
    base: &Dataset,
    new: &Dataset,
    rules: Rules,
) -> (Vec<Row>, Vec<String>, Vec<String>) {
    let mut rows = Vec::new();
    let mut raw: Vec<Option<f64>> = Vec::new();
    let mut worse_flags = Vec::new();
    for bi in &base.items {
        let Some(ni) = new.items.iter().find(|i| i.key == bi.key) else {
            continue;
        };
        for m in &METRICS {
            let (bv, nv) = (bi.values(m), ni.values(m));
            if bv.is_empty() || nv.is_empty() {
                continue;
            }
            let (bs, ns) = (stats::summarize(&bv), stats::summarize(&nv));
            let (change, worse) = change_of(m, &bs, &ns);
            raw.push(stats::welch(&bv, &nv).map(|w| w.p));
            worse_flags.push(worse);
            rows.push(Row {
                key: bi.key.clone(),
                label: bi.label(),
                metric: m,
                base: bs,
                new: ns,
                change,
                p: None,
                verdict: Verdict::NoChange,
                why: String::new(),
            });
        }
    }
    let tested: Vec<f64> = raw.iter().flatten().copied().collect();
    let mut adjusted = stats::holm(&tested).into_iter();
    for ((row, p), worse) in rows.iter_mut().zip(&raw).zip(worse_flags) {
        row.p = p.and_then(|_| adjusted.next());
        let (v, why) = decide(row.change, worse, row.p, rules);
        row.verdict = v;
        row.why = why;
    }
    let only_base = base
        .items
        .iter()
        .filter(|i| !new.items.iter().any(|n| n.key == i.key))
        .map(Item::label)
        .collect();
    let only_new = new
        .items
        .iter()
        .filter(|i| !base.items.iter().any(|b| b.key == i.key))
        .map(Item::label)
        .collect();
    (rows, only_base, only_new)
}

fn value_text(m: &MetricDef, v: f64) -> String {
    match m.key {
        "bw_bytes" => format!("{} MiB/s", table::mib(v)),
        "iops" => table::iops(v),
        _ => table::latency(v),
    }
}

fn pct(change: f64) -> String {
    if change.is_finite() {
        format!("{:+.1}%", change * 100.0)
    } else {
        "n/a".into()
    }
}

fn test_description(rules: Rules) -> String {
    format!(
        "Welch's t-test on per-run values (two-sided), p-values Holm-adjusted over all \
         comparisons, α = {}; a change counts when significant and at least {}% \
         (--threshold). With one run on a side, the threshold alone decides.",
        rules.alpha, rules.threshold
    )
}

/// `text` after `first`, in lines of at most `width` columns, the
/// following ones indented as far as `first`.
fn wrap(first: &str, text: &str, width: usize) -> String {
    let indent = " ".repeat(first.chars().count());
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

fn counts(rows: &[Row]) -> (usize, usize, usize) {
    let c = |v| rows.iter().filter(|r| r.verdict == v).count();
    (
        c(Verdict::Regression),
        c(Verdict::Improvement),
        c(Verdict::NoChange),
    )
}

fn overall(rows: &[Row]) -> String {
    let (r, i, n) = counts(rows);
    if r == 0 && i == 0 {
        format!("Overall: no significant change ({n} metrics compared)")
    } else {
        format!("Overall: {r} regression(s), {i} improvement(s), {n} with no significant change")
    }
}

pub fn text_report(
    base: &Dataset,
    new: &Dataset,
    rows: &[Row],
    only: (&[String], &[String]),
    rules: Rules,
) -> String {
    let runs = |d: &Dataset| d.items.iter().map(|i| i.samples.len()).max().unwrap_or(0);
    let (nb, nn) = (runs(base), runs(new));
    let mut s = String::from("iomark compare\n");
    s.push_str(&wrap(
        "  base: ",
        &format!("{} ({nb} run(s))", base.source),
        80,
    ));
    s.push_str(&wrap(
        "  new:  ",
        &format!("{} ({nn} run(s))", new.source),
        80,
    ));
    s.push_str(&wrap("  test: ", &test_description(rules), 80));
    s.push('\n');
    let w = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let _ = writeln!(
        s,
        "{:<w$}  {:<12} {:>13} {:>13} {:>7} {:>5}  verdict",
        "job", "metric", "base median", "new median", "change", "p"
    );
    // A side's run count shows in a row only when it differs from the
    // header's.
    let value = |m: &'static MetricDef, sum: &Summary, n: usize| {
        let v = value_text(m, sum.median);
        if sum.n == n {
            v
        } else {
            format!("{v} ({})", sum.n)
        }
    };
    let mut notes = Vec::new();
    for r in rows {
        let verdict = match r.verdict {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
        };
        let _ = writeln!(
            s,
            "{:<w$}  {:<12} {:>13} {:>13} {:>7} {:>5}  {verdict}",
            r.label,
            r.metric.title,
            value(r.metric, &r.base, nb),
            value(r.metric, &r.new, nn),
            pct(r.change),
            r.p.map(|p| format!("{p:.3}")).unwrap_or_else(|| "-".into()),
        );
        // Noise says nothing the p column does not; other reasons do.
        if !r.why.starts_with("within noise") {
            notes.push(format!(
                "{} {}: {verdict}, {}",
                r.label, r.metric.title, r.why
            ));
        }
    }
    if !notes.is_empty() {
        s.push('\n');
        for n in notes {
            s.push_str(&wrap("  ", &n, 80));
        }
    }
    for (side, list) in [("base", only.0), ("new", only.1)] {
        if !list.is_empty() {
            let _ = writeln!(s, "\nonly in {side}: {}", list.join(", "));
        }
    }
    let _ = writeln!(s, "\n{}", overall(rows));
    s
}

fn summary_json(s: &Summary) -> Value {
    json!({"n": s.n, "median": s.median, "mean": s.mean, "sd": s.sd, "min": s.min, "max": s.max})
}

pub fn json_report(
    base: &Dataset,
    new: &Dataset,
    rows: &[Row],
    only: (&[String], &[String]),
    rules: Rules,
) -> Value {
    let (r, i, n) = counts(rows);
    json!({
        "iomark version": env!("CARGO_PKG_VERSION"),
        "kind": "compare",
        "base": base.source,
        "new": new.source,
        "test": test_description(rules),
        "threshold_pct": rules.threshold,
        "alpha": rules.alpha,
        "rows": rows.iter().map(|x| json!({
            "key": x.key,
            "job": x.label,
            "metric": x.metric.key,
            "base": summary_json(&x.base),
            "new": summary_json(&x.new),
            "change_pct": if x.change.is_finite() { json!(x.change * 100.0) } else { Value::Null },
            "p_value": x.p,
            "verdict": x.verdict.text(),
            "reason": x.why,
        })).collect::<Vec<_>>(),
        "only_in_base": only.0,
        "only_in_new": only.1,
        "regressions": r,
        "improvements": i,
        "unchanged": n,
        "verdict": if r > 0 { "regression" } else if i > 0 { "improvement" } else { "no significant change" },
    })
}

pub fn html_report(
    base: &Dataset,
    new: &Dataset,
    rows: &[Row],
    only: (&[String], &[String]),
    rules: Rules,
) -> String {
    let mut b = String::new();
    b.push_str("<h1>iomark compare</h1>");
    let _ = write!(
        b,
        "<p class=\"meta\">base: {}<br/>new: {}</p><p>{}</p><p><strong>{}</strong></p>",
        esc(&base.source),
        esc(&new.source),
        esc(&test_description(rules)),
        esc(&overall(rows))
    );
    let mut warnings = base.warnings.clone();
    dataset::add_warnings(&mut warnings, new.warnings.clone());
    b.push_str(&html::warning_boxes(&warnings));
    b.push_str("<table><thead><tr><th class=\"l\">job</th><th class=\"l\">metric</th><th>base median (n)</th><th>new median (n)</th><th>change</th><th>p</th><th class=\"l\">verdict</th></tr></thead><tbody>");
    for r in rows {
        let class = match r.verdict {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "same",
        };
        let _ = write!(
            b,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{} ({})</td><td>{} ({})</td><td>{}</td><td>{}</td><td class=\"l {class}\">{} — {}</td></tr>",
            esc(&r.label),
            esc(r.metric.title),
            esc(&value_text(r.metric, r.base.median)),
            r.base.n,
            esc(&value_text(r.metric, r.new.median)),
            r.new.n,
            esc(&pct(r.change)),
            r.p.map(|p| format!("{p:.3}")).unwrap_or_else(|| "-".into()),
            esc(r.verdict.text()),
            esc(&r.why)
        );
    }
    b.push_str("</tbody></table>");
    for (side, list) in [("base", only.0), ("new", only.1)] {
        if !list.is_empty() {
            let _ = write!(b, "<p>Only in {side}: {}</p>", esc(&list.join(", ")));
        }
    }
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
                "bw_bytes" => (1048576.0, "MiB/s", Format::Number),
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
    for (name, d) in [("base", base), ("new", new)] {
        if let Some(env) = &d.environment {
            let _ = write!(b, "<h2>Environment — {name}</h2>");
            b.push_str(&html::environment(env));
        }
    }
    html::page("iomark compare", &b)
}

pub fn usage() -> String {
    use crate::cli::{help, text};
    let mut s = String::from(
        "Usage: iomark compare BASE.json NEW.json [OPTIONS]\n\
         \x20      iomark compare --base A.json… --new B.json… [OPTIONS]\n\n",
    );
    s.push_str(&text::wrap(
        &format!(
            "Compares per job direction the bandwidth, IOPS, mean and p99 latency of two \
             results (fio or iomark JSON, or iomark quick/suite/sweep results). Several files \
             per side are repeated runs of the same jobs; quick/suite/sweep results bring \
             their passes. The verdict uses Welch's t-test on the runs (two-sided, p-values \
             Holm-adjusted over all comparisons, α = {DEFAULT_ALPHA}): a change is a regression \
             or an improvement when it is significant and at least the threshold; with one \
             run on a side the threshold alone decides."
        ),
        0,
        text::WIDTH,
    ));
    s.push_str("\nOptions:\n");
    let threshold = format!("smallest change that counts (default {DEFAULT_THRESHOLD_PCT})");
    let alpha = format!("significance level (default {DEFAULT_ALPHA})");
    s.push_str(&text::options(
        &[
            ("--base FILE…", "the results before (with --new)"),
            ("--new FILE…", "the results after"),
            ("--threshold PCT", threshold.as_str()),
            ("--alpha A", alpha.as_str()),
            ("--json FILE", "write the comparison as JSON (- for stdout)"),
            (
                "--html FILE",
                "write an HTML report with both runs overlaid",
            ),
            ("-h, --help", "this help"),
        ],
        super::args::OPTION_COLUMN,
    ));
    s.push_str(&format!(
        "\nExit status: 0 no regression, {EXIT_REGRESSION} at least one regression, 1 bad input.\n"
    ));
    s.push_str("\nExamples:\n");
    for (cmd, what) in [
        ("iomark compare before.json after.json", "one run on each side"),
        (
            "iomark compare --base a1.json a2.json a3.json --new b1.json b2.json b3.json --threshold=3",
            "three runs a side: the t-test decides what is noise",
        ),
        (
            "iomark compare old.json new.json --json - > verdict.json",
            "the comparison as JSON on standard output",
        ),
    ] {
        s.push_str(&help::example(cmd, what));
    }
    s
}

pub fn main(argv: Vec<OsString>) -> i32 {
    use lexopt::Arg;
    let mut p = lexopt::Parser::from_args(argv);
    let mut positional: Vec<PathBuf> = Vec::new();
    let mut base: Vec<PathBuf> = Vec::new();
    let mut new: Vec<PathBuf> = Vec::new();
    let mut rules = Rules {
        threshold: DEFAULT_THRESHOLD_PCT,
        alpha: DEFAULT_ALPHA,
    };
    let mut json_out: Option<String> = None;
    let mut html_out: Option<PathBuf> = None;
    let mut help = false;
    let parsed: Result<(), String> = (|| {
        while let Some(arg) = p.next().map_err(|e| e.to_string())? {
            let long = match arg {
                Arg::Short('h') => {
                    help = true;
                    continue;
                }
                Arg::Short(c) => return Err(format!("unknown option '-{c}'")),
                Arg::Value(v) => {
                    positional.push(v.into());
                    continue;
                }
                Arg::Long(l) => l.to_string(),
            };
            match long.as_str() {
                "help" => help = true,
                "base" | "new" => {
                    let vals: Vec<PathBuf> = p
                        .values()
                        .map_err(|_| format!("--{long} needs at least one file"))?
                        .map(PathBuf::from)
                        .collect();
                    if long == "base" {
                        base.extend(vals);
                    } else {
                        new.extend(vals);
                    }
                }
                "threshold" => {
                    let v = args::value(&mut p, "threshold")?;
                    rules.threshold = v
                        .trim_end_matches('%')
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| format!("--threshold: '{v}' is not a percentage"))?;
                }
                "alpha" => {
                    let v = args::value(&mut p, "alpha")?;
                    rules.alpha = v
                        .parse::<f64>()
                        .ok()
                        .filter(|x| *x > 0.0 && *x < 1.0)
                        .ok_or_else(|| format!("--alpha: '{v}' is not between 0 and 1"))?;
                }
                "json" => json_out = Some(args::value(&mut p, "json")?),
                "html" => html_out = Some(args::value(&mut p, "html")?.into()),
                other => {
                    return Err(format!(
                        "unknown option '--{other}' for iomark compare (see iomark compare --help)"
                    ))
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = parsed {
        return fail("compare", &e);
    }
    if help {
        return super::print("compare", &usage());
    }
    if base.is_empty() && new.is_empty() {
        if positional.len() != 2 {
            return fail(
                "compare",
                "give BASE.json and NEW.json, or --base FILES… --new FILES… (see --help)",
            );
        }
        new.push(positional.pop().expect("two positionals"));
        base.push(positional.pop().expect("two positionals"));
    } else if base.is_empty() || new.is_empty() || !positional.is_empty() {
        return fail(
            "compare",
            "with --base/--new, give files to both and nothing else",
        );
    }
    let load = |files: &[PathBuf]| -> Result<Dataset, String> {
        let sets = files
            .iter()
            .map(|f| dataset::load(f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(dataset::merge(sets))
    };
    let (b, n) = match (load(&base), load(&new)) {
        (Ok(b), Ok(n)) => (b, n),
        (Err(e), _) | (_, Err(e)) => return fail("compare", &e),
    };
    let (rows, only_b, only_n) = compare(&b, &n, rules);
    if rows.is_empty() {
        return fail(
            "compare",
            "the two sides have no job in common (jobs are matched by name and direction)",
        );
    }
    let only = (only_b.as_slice(), only_n.as_slice());
    let mut text = match json_out.as_deref() {
        Some("-") => crate::report::json::to_string(&json_report(&b, &n, &rows, only, rules)),
        Some(path) => {
            if let Err(e) = write_file(
                path.as_ref(),
                &crate::report::json::to_string(&json_report(&b, &n, &rows, only, rules)),
            ) {
                return fail("compare", &e);
            }
            text_report(&b, &n, &rows, only, rules)
        }
        None => text_report(&b, &n, &rows, only, rules),
    };
    if let Some(h) = &html_out {
        if let Err(e) = write_file(h, &html_report(&b, &n, &rows, only, rules)) {
            return fail("compare", &e);
        }
        if json_out.as_deref() != Some("-") {
            text.push_str(&format!("HTML report: {}\n", h.display()));
        }
    }
    match super::print("compare", &text) {
        0 if rows.iter().any(|r| r.verdict == Verdict::Regression) => EXIT_REGRESSION,
        code => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            threshold: 5.0,
            alpha: 0.05,
        }
    }

    #[test]
    fn halved_iops_is_a_regression_and_noise_is_not() {
        let base = [1000.0, 1010.0, 990.0];
        let half = [500.0, 505.0, 495.0];
        let same = [1005.0, 995.0, 1002.0];
        let iops = &METRICS[1];
        assert_eq!(judge(iops, &base, &half, rules()).2, Verdict::Regression);
        assert_eq!(judge(iops, &half, &base, rules()).2, Verdict::Improvement);
        assert_eq!(judge(iops, &base, &same, rules()).2, Verdict::NoChange);
        // Latency: higher is worse.
        let lat = &METRICS[2];
        assert_eq!(judge(lat, &half, &base, rules()).2, Verdict::Regression);
    }

    #[test]
    fn single_runs_use_the_threshold_alone() {
        let iops = &METRICS[1];
        let (c, p, v, why) = judge(iops, &[100.0], &[90.0], rules());
        assert!((c + 0.1).abs() < 1e-12);
        assert_eq!(p, None);
        assert_eq!(v, Verdict::Regression);
        assert!(why.contains("single run"));
        assert_eq!(judge(iops, &[100.0], &[97.0], rules()).2, Verdict::NoChange);
    }

    #[test]
    fn large_noise_hides_a_shift() {
        let iops = &METRICS[1];
        let a = [100.0, 300.0, 50.0];
        let b = [120.0, 280.0, 60.0];
        assert_eq!(judge(iops, &a, &b, rules()).2, Verdict::NoChange);
    }
}
