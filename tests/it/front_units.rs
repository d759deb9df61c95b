//! One unit per result: a quick run's bandwidth is the same number in
//! the same unit (MB/s, as it was recorded) in its table, `history`,
//! `trend`, `compare`, the exports and its HTML report; `--units MiB`
//! turns every one of them to MiB/s, labelled.

use serde_json::Value;

use crate::common::*;

fn json_of(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

/// The bandwidth column of the quick table's SEQ1M Q8T1 read row.
fn table_figure(table: &str) -> String {
    let line = table
        .lines()
        .find(|l| l.starts_with("SEQ1M Q8T1") && l.contains("read"))
        .unwrap_or_else(|| panic!("no SEQ1M Q8T1 read row:\n{table}"));
    line.split_whitespace()
        .nth(3)
        .expect("a figure")
        .to_string()
}

#[test]
#[allow(clippy::too_many_lines)]
fn a_quick_runs_bandwidth_is_one_figure_in_one_unit_everywhere() {
    let dir = tempdir();
    let d = dir.path();
    let quick = [
        "quick",
        "--size=4m",
        "--runtime=100ms",
        "--passes=2",
        "--no-warmup",
        "--eta=never",
        "--label=u",
        "--json=q.json",
        "--html=q.html",
    ];
    let o = run_with_history(d, &quick);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains(" MB/s "), "{table}");
    let fig = table_figure(&table);
    let mb: f64 = fig.parse().unwrap();

    // history: the same figure, labelled MB/s, in text and JSON.
    let h = run_with_history(d, &["history", "--test", "seq1m-q8t1"]);
    let ht = stdout(&h);
    let line = ht
        .lines()
        .find(|l| {
            l.contains("read") && l.contains("SEQ1M") || l.contains("seq1m") && l.contains("read")
        })
        .unwrap_or_else(|| panic!("{ht}"));
    assert!(line.contains(&format!(" {fig} MB/s ")), "{fig}: {line}");
    let hj = json_of(&run_with_history(
        d,
        &["history", "--test", "seq1m-q8t1", "--json"],
    ));
    let t = hj["runs"][0]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["dir"] == "read")
        .cloned()
        .unwrap();
    assert_eq!(t["bw_unit"], "MB/s", "{t}");
    let key = t["key"].as_str().unwrap().to_string();
    // The table's rounding (2 decimals below 100, 1 above) of the same number.
    let bw = t["bw"].as_f64().unwrap();
    let same = if bw >= 100.0 {
        format!("{bw:.1}")
    } else {
        format!("{bw:.2}")
    };
    assert_eq!(same, fig, "{t}");

    // trend: MB/s by default, in its text, JSON and chart axis.
    let tr = run_with_history(d, &["trend", "--test", &key, "--metric", "bw"]);
    assert!(
        stdout(&tr).contains(&format!("{fig} MB/s")),
        "{fig}: {}\n{}",
        stdout(&tr),
        stderr(&tr)
    );
    let tj = json_of(&run_with_history(
        d,
        &["trend", "--test", &key, "--metric", "bw", "--json"],
    ));
    assert_eq!(tj["unit"], "MB/s", "{tj}");

    // compare: the run against itself, its values in MB/s.
    let cj = json_of(&run_with_history(
        d,
        &["compare", "q.json", "q.json", "--json", "-"],
    ));
    assert_eq!(cj["unit"], "MB/s");
    let shown: Vec<String> = cj["tests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["metrics"].as_array().unwrap().clone())
        .filter(|m| m["metric"] == "bw_bytes")
        .map(|m| m["shown"].as_str().unwrap().to_string())
        .collect();
    assert!(
        shown.iter().any(|s| s == &format!("{fig} → {fig} MB/s")),
        "{fig}: {shown:?}"
    );
    let ct = stdout(&run_with_history(
        d,
        &["compare", "q.json", "q.json", "--detail"],
    ));
    assert!(ct.contains(&format!("{fig} → {fig} MB/s")), "{ct}");
    assert!(!ct.contains("MiB/s"), "{ct}");

    // The HTML report: the grid's figure, and MB/s named.
    let html = std::fs::read_to_string(d.join("q.html")).unwrap();
    // The grid's big figure: CrystalDiskMark's 2 decimals of the same
    // number, in MB/s.
    let big: f64 = html
        .split("<span class=\"big\">")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .and_then(|s| s.parse().ok())
        .expect("a big figure");
    let step = if mb >= 100.0 { 0.05 } else { 0.005 };
    assert!((big - mb).abs() <= step + 0.005, "grid {big}, table {fig}");
    assert!(html.contains(">MB/s</th>"), "the grid names MB/s");
    assert!(!html.contains("MiB/s"), "the page says MiB/s somewhere");

    // The exports: bw and bw_unit in the recorded unit.
    let csv = stdout(&run_with_history(
        d,
        &["history", "export", "--format", "csv"],
    ));
    assert!(
        csv.lines().next().unwrap().ends_with(",passes,bw,bw_unit"),
        "{csv}"
    );
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",MB/s")), "{csv}");

    // --units MiB: every command in MiB/s, labelled.
    let mib = mb * 1e6 / 1048576.0;
    let hj = json_of(&run_with_history(
        d,
        &[
            "history",
            "--test",
            "seq1m-q8t1",
            "--json",
            "--units",
            "MiB",
        ],
    ));
    let t = &hj["runs"][0]["tests"][0];
    assert_eq!(t["bw_unit"], "MiB/s", "{t}");
    let tj = json_of(&run_with_history(
        d,
        &[
            "trend", "--test", &key, "--metric", "bw", "--json", "--units", "MiB",
        ],
    ));
    assert_eq!(tj["unit"], "MiB/s");
    let v = tj["series"][0]["runs"][0]["value"].as_f64().unwrap();
    assert!((v / 1048576.0 - mib).abs() < 0.01 * mib, "{v} {mib}");
    let cj = json_of(&run_with_history(
        d,
        &[
            "compare", "q.json", "q.json", "--json", "-", "--units", "mib",
        ],
    ));
    assert_eq!(cj["unit"], "MiB/s");
    let o = run_with_history(d, &["report", "q.json", "-o", "r.html", "--units", "MiB/s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(page.contains(">MiB/s</th>"), "grid in MiB/s");
    let jl = stdout(&run_with_history(
        d,
        &["history", "export", "--format", "jsonl", "--units", "MiB"],
    ));
    assert!(
        jl.lines().all(|l| l.contains("\"bw_unit\":\"MiB/s\"")),
        "{jl}"
    );
    // A unit that is none: one line, exit 1.
    let o = run_with_history(d, &["history", "--units", "GB"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--units: 'GB' is not a unit"),
        "{}",
        stderr(&o)
    );
}
