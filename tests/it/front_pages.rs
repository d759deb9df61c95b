//! Pages that read at a glance: a report of runs under two labels opens
//! with the one label against the other, with `compare`'s verdicts; the
//! quick grid's bars are on a log scale that shows every test, and the
//! page says so.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::*;
use crate::html_check;

/// One short quick run's results (`q.json`), not in the history.
fn quick_json(d: &Path) -> Value {
    let o = run_in(
        d,
        &[
            "quick",
            "--size=4m",
            "--runtime=100ms",
            "--passes=2",
            "--no-warmup",
            "--eta=never",
            "--no-history",
            "--json",
            "q.json",
            "--html",
            "q.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(d.join("q.json")).unwrap()).unwrap()
}

/// `q` labelled `label`, every pass of a test (name, direction) `f`
/// times as fast.
fn scaled(q: &Value, label: &str, f: impl Fn(&str, &str) -> f64) -> Value {
    let mut v = q.clone();
    v["label"] = label.into();
    for t in v["tests"].as_array_mut().unwrap() {
        let k = f(
            t["name"].as_str().unwrap(),
            t["direction"].as_str().unwrap(),
        );
        for p in t["passes"].as_array_mut().unwrap() {
            for (m, by) in [
                ("bw_bytes", k),
                ("iops", k),
                ("lat_mean_ns", 1.0 / k),
                ("lat_p99_ns", 1.0 / k),
            ] {
                if let Some(x) = p[m].as_f64() {
                    p[m] = serde_json::json!(x * by);
                }
            }
        }
    }
    v
}

/// The cells' text of a table row.
fn cells(row: &roxmltree::Node) -> Vec<String> {
    row.children()
        .filter(|c| c.is_element() && matches!(c.tag_name().name(), "td" | "th"))
        .map(|c| html_check::text_of(&c))
        .collect()
}

fn has_class(n: &roxmltree::Node, class: &str) -> bool {
    n.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

#[test]
#[allow(clippy::too_many_lines)]
fn a_six_run_report_opens_with_the_labelled_groups_compared_as_compare_does() {
    let dir = tempdir();
    let d = dir.path();
    let q = quick_json(d);
    // Three runs a side with 0.3% run-to-run noise; under b, SEQ1M Q8T1
    // read is half as fast, RND4K Q1T1 write twice, and RND4K Q32T1
    // write varies ±50% from run to run.
    let noise = [1.0, 1.003, 0.997];
    let wild = [0.6, 1.5, 1.1];
    let mut files = Vec::new();
    for (side, label) in ["a", "b"].iter().enumerate() {
        for (run, n) in noise.iter().enumerate() {
            let v = scaled(&q, label, |name, dir| {
                let change = match (side, name, dir) {
                    (1, "SEQ1M Q8T1", "read") => 0.5,
                    (1, "RND4K Q1T1", "write") => 2.0,
                    (1, "RND4K Q32T1", "write") => wild[run],
                    _ => 1.0,
                };
                change * n
            });
            let f = format!("{label}{}.json", run + 1);
            std::fs::write(d.join(&f), v.to_string()).unwrap();
            files.push(f);
        }
    }
    let mut args = vec!["compare", "--base"];
    args.extend(files[..3].iter().map(String::as_str));
    args.push("--new");
    args.extend(files[3..].iter().map(String::as_str));
    args.extend(["--json", "-"]);
    let o = run_in(d, &args);
    // Exit 2: a regression.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let cj: Value = serde_json::from_slice(&o.stdout).unwrap();
    let verdicts: BTreeMap<String, String> = cj["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["test"].as_str().unwrap().to_string(),
                t["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(verdicts.len(), 8, "{verdicts:?}");
    for (test, v) in [
        ("SEQ1M Q8T1 read", "regression"),
        ("RND4K Q1T1 write", "improvement"),
        ("RND4K Q32T1 write", "inconclusive"),
        ("SEQ1M Q1T1 read", "no change"),
    ] {
        assert_eq!(verdicts[test], v, "{test}: {verdicts:?}");
    }

    let mut args = vec!["report"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", "six.html"]);
    let o = run_in(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = d.join("six.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .expect("well-formed");
    // The page opens with it: right under the title, before the first
    // run's heading and grid.
    let body = doc
        .descendants()
        .find(|n| n.tag_name().name() == "body")
        .unwrap();
    let top: Vec<roxmltree::Node> = body
        .descendants()
        .filter(|n| {
            n.is_element() && (matches!(n.tag_name().name(), "h1" | "h2") || has_class(n, "cdm"))
        })
        .take(3)
        .collect();
    assert_eq!(top[0].tag_name().name(), "h1");
    assert_eq!(
        html_check::text_of(&top[1]),
        "b against a (3 runs against 3 runs)"
    );
    let section = top[1].parent().unwrap();
    assert!(has_class(&section, "groups"), "not in the groups section");
    assert_eq!(
        text.matches("<section class=\"groups\">").count(),
        1,
        "one a-against-b summary"
    );
    let sec = &text[text.find("<section class=\"groups\">").unwrap()..];
    assert!(
        text.find("<section class=\"groups\">") < text.find("class=\"cdm\""),
        "the summary comes before the first grid"
    );
    // Its counts are compare's.
    let counts = format!(
        "{} regression(s), {} improvement(s), {} no change, {} inconclusive",
        cj["regressions"], cj["improvements"], cj["no_change"], cj["inconclusive"]
    );
    assert!(sec.contains(&counts), "{counts} not at the top");
    // Its table: one row a test, with compare's verdict.
    let table = section
        .descendants()
        .find(|n| n.tag_name().name() == "table")
        .expect("a table in the summary");
    let rows: Vec<Vec<String>> = table
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .map(|r| cells(&r))
        .collect();
    assert_eq!(
        rows[0],
        ["test", "metric", "a", "b", "change", "interval", "verdict"]
    );
    let shown: BTreeMap<String, String> = rows[1..]
        .iter()
        .map(|r| (r[0].clone(), r[6].clone()))
        .collect();
    assert_eq!(shown, verdicts, "the report's verdicts are not compare's");
    // The halved test's figures, as compare shows them.
    let halved = rows
        .iter()
        .find(|r| r[0] == "SEQ1M Q8T1 read")
        .expect("its row");
    assert_eq!(halved[4], "-50.0%", "{halved:?}");
    html_check::check_report(&html);
}

/// The widths (percent) of the grid's bars, by test and direction.
fn grid_bars(text: &str) -> BTreeMap<(String, String), f64> {
    let doc = roxmltree::Document::parse_with_options(
        text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .unwrap();
    let grid = doc
        .descendants()
        .find(|n| n.tag_name().name() == "table" && has_class(n, "cdm"))
        .expect("the grid");
    let mut out = BTreeMap::new();
    for row in grid
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .skip(1)
    {
        let tds: Vec<roxmltree::Node> = row
            .children()
            .filter(|c| c.is_element() && c.tag_name().name() == "td")
            .collect();
        let th = row
            .children()
            .find(|c| c.tag_name().name() == "th")
            .unwrap();
        // "SEQ1M<br/>Q8T1": its text nodes with a space between.
        let name = th
            .descendants()
            .filter_map(|n| n.text().filter(|_| n.is_text()))
            .collect::<Vec<_>>()
            .join(" ");
        for (td, dir) in tds.iter().zip(["read", "write"]) {
            let bar = td
                .descendants()
                .find(|n| has_class(n, "bar"))
                .unwrap_or_else(|| panic!("{name} {dir}: no bar"));
            let style = bar.attribute("style").unwrap();
            let w: f64 = style
                .strip_prefix("width:")
                .and_then(|s| s.strip_suffix('%'))
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{style}"));
            out.insert((name.clone(), dir.to_string()), w);
        }
    }
    out
}

#[test]
fn the_quick_grids_bars_show_every_test_on_a_log_scale_said_on_the_page() {
    let dir = tempdir();
    let d = dir.path();
    let q = quick_json(d);
    // SEQ1M at 5000 MB/s beside RND4K Q1T1 at 5: a thousandfold.
    let want: BTreeMap<(&str, &str), f64> = [
        (("SEQ1M Q8T1", "read"), 5000.0),
        (("SEQ1M Q1T1", "read"), 2000.0),
        (("RND4K Q32T1", "read"), 300.0),
        (("RND4K Q1T1", "read"), 5.0),
        (("SEQ1M Q8T1", "write"), 4000.0),
        (("SEQ1M Q1T1", "write"), 1500.0),
        (("RND4K Q32T1", "write"), 250.0),
        (("RND4K Q1T1", "write"), 8.0),
    ]
    .into_iter()
    .collect();
    let mut v = q.clone();
    for t in v["tests"].as_array_mut().unwrap() {
        let key = (
            t["name"].as_str().unwrap().to_string(),
            t["direction"].as_str().unwrap().to_string(),
        );
        let mb = want[&(key.0.as_str(), key.1.as_str())];
        for p in t["passes"].as_array_mut().unwrap() {
            p["bw_bytes"] = serde_json::json!(mb * 1e6);
        }
    }
    std::fs::write(d.join("far.json"), v.to_string()).unwrap();
    let o = run_in(d, &["report", "far.json", "-o", "far.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = d.join("far.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let bars = grid_bars(&text);
    assert_eq!(bars.len(), 8, "{bars:?}");
    // Every bar shows (a linear scale would draw 5 MB/s as 0.1%), and
    // lengths go by the logarithm: equal ratios, equal steps.
    let per_decade = (bars[&("SEQ1M Q8T1".into(), "read".into())]
        - bars[&("RND4K Q1T1".into(), "read".into())])
        / 3.0;
    assert!(per_decade > 10.0, "{bars:?}");
    for ((name, dir), w) in &bars {
        assert!(*w >= 10.0, "{name} {dir}: a {w}% bar");
        let mb = want[&(name.as_str(), dir.as_str())];
        let from_top = bars[&("SEQ1M Q8T1".into(), "read".into())] - w;
        let decades = (5000.0f64 / mb).log10();
        assert!(
            (from_top - decades * per_decade).abs() <= 0.3,
            "{name} {dir}: {w}% is not on the log scale ({bars:?})"
        );
    }
    // The page says so, under the grid and in the bar chart.
    assert!(
        text.contains("Bars: bandwidth on a logarithmic scale from "),
        "the grid's scale is not said"
    );
    assert!(text.contains(">Bandwidth (MB/s, median) — log scale<"));
    assert!(text.contains(">MB/s (log scale)<"));
    // The chart's bars: each at least a tenth of the tallest.
    let chart = &text[text.find(">Bandwidth (MB/s, median) — log scale<").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    let heights: Vec<f64> = chart
        .split("<rect class=\"bar\"")
        .skip(1)
        .map(|r| {
            let h = &r[r.find("height=\"").unwrap() + 8..];
            h[..h.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(heights.len(), 8, "{chart}");
    let tallest = heights.iter().copied().fold(0.0, f64::max);
    assert!(heights.iter().all(|h| *h >= tallest / 10.0), "{heights:?}");
    html_check::check_report(&html);

    // Figures within 20× of each other: a linear scale from zero, and
    // no scale note.
    let mut near = q.clone();
    for t in near["tests"].as_array_mut().unwrap() {
        let mb = if t["direction"] == "read" {
            100.0
        } else {
            400.0
        };
        for p in t["passes"].as_array_mut().unwrap() {
            p["bw_bytes"] = serde_json::json!(mb * 1e6);
        }
    }
    std::fs::write(d.join("near.json"), near.to_string()).unwrap();
    let o = run_in(d, &["report", "near.json", "-o", "near.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.join("near.html")).unwrap();
    assert!(text.contains(">Bandwidth (MB/s, median)<"), "linear");
    assert!(!text.contains(">MB/s (log scale)<"));
}
