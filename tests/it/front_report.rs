//! `iomark report`: HTML from fio's own JSON (json and json+), from
//! iomark's JSON (with its timeline), and cache-honesty warnings.

use serde_json::Value;

use crate::common::*;
use crate::html_check;
use crate::require_fio;

const FIO_JOB: &[&str] = &[
    "--name=mixed",
    "--rw=randrw",
    "--bs=4k",
    "--size=4m",
    "--runtime=1",
    "--time_based",
];

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn report_of_fio_json_plus_has_percentiles_and_histograms() {
    require_fio!();
    let dir = tempdir();
    for (fmt, name) in [("json+", "plus.json"), ("json", "plain.json")] {
        let mut args: Vec<String> = FIO_JOB.iter().map(|s| s.to_string()).collect();
        args.push(format!("--output-format={fmt}"));
        args.push(format!("--output={name}"));
        if fmt == "json+" {
            args.extend(
                [
                    "--write_bw_log=mixed",
                    "--write_lat_log=mixed",
                    "--log_avg_msec=200",
                ]
                .map(String::from),
            );
        }
        let o = fio_output(
            std::process::Command::new("fio")
                .args(&args)
                .current_dir(dir.path()),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = run_in(
        dir.path(),
        &[
            "report",
            "plus.json",
            "mixed_bw.1.log",
            "mixed_clat.1.log",
            "-o",
            "plus.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("plus.html")).unwrap();
    // fio's logs are drawn under the job that wrote them.
    assert!(
        html.contains("<h3>Logs of job mixed</h3>"),
        "grouped by job"
    );
    assert!(
        html.contains("The run that wrote mixed_bw.1.log."),
        "fio's bw log drawn"
    );
    assert!(
        html.contains("The run that wrote mixed_clat.1.log."),
        "fio's clat log drawn"
    );
    assert!(html.contains("Latency histogram (json+ bins)"));
    assert!(html.contains("Latency percentiles"));
    assert!(html.contains("mixed read") && html.contains("mixed write"));
    let charts = html_check::check_report(&dir.path().join("plus.html"));
    assert!(charts >= 2 + 2 * 2 + 2, "{charts}");

    // Plain json: no bins, so no histogram, but still a report; and two
    // files together.
    let o = run_in(
        dir.path(),
        &["report", "plain.json", "plus.json", "-o", "both.html"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let both = std::fs::read_to_string(dir.path().join("both.html")).unwrap();
    assert!(both.contains("plain.json") && both.contains("plus.json"));
    html_check::check_xml(&both, "both.html");
}

#[test]
fn report_of_iomark_json_shows_throughput_over_time_and_environment() {
    let dir = tempdir();
    let mut args = FIO_JOB.to_vec();
    args.push("--output-format=json+");
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.path().join("io.json"), &o.stdout).unwrap();
    let r = run_in(dir.path(), &["report", "io.json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(stdout(&r).contains("iomark-report.html"));
    let html = std::fs::read_to_string(dir.path().join("iomark-report.html")).unwrap();
    for s in [
        "Bandwidth over time",
        "IOPS over time",
        "Latency histogram",
        "Host",
        "filesystem",
        "kernel",
    ] {
        assert!(html.contains(s), "missing {s}");
    }
    html_check::check_report(&dir.path().join("iomark-report.html"));
}

#[test]
fn report_refuses_what_it_cannot_read() {
    let dir = tempdir();
    std::fs::write(dir.path().join("x.json"), "{\"hello\": 1}").unwrap();
    // A directory with nothing iomark can read (a non-result JSON, a
    // file of another kind).
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/x.json"), "{\"hello\": 1}").unwrap();
    std::fs::write(dir.path().join("d/readme.txt"), "hi").unwrap();
    for args in [
        vec!["report"],
        vec!["report", "x.json"],
        vec!["report", "missing.json"],
        vec!["report", "d/x.json_bw.1.log"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert!(!dir.path().join("iomark-report.html").exists());
    let o = run_in(dir.path(), &["report", "d"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(
        err.lines().last(),
        Some("iomark report: 'd' holds no results (*.json) or fio logs (*.log) iomark can read"),
        "{err}"
    );
    // d/x.json as the platform writes a path (d\x.json on Windows).
    let skipped = std::path::Path::new("d").join("x.json");
    assert!(
        err.contains(&format!(
            "note: skipped {}: not a fio/iomark JSON result",
            skipped.display()
        )),
        "{err}"
    );
    assert!(!err.contains("readme"), "{err}");
    assert!(!dir.path().join("iomark-report.html").exists());
}

#[test]
fn buffered_jobs_smaller_than_free_ram_get_a_cache_warning() {
    let dir = tempdir();
    let base = [
        "--name=small",
        "--rw=read",
        "--size=4m",
        "--output-format=json",
    ];
    let o = run_in(dir.path(), &base);
    assert!(o.status.success());
    assert!(stderr(&o).contains("page cache"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["iomark"]["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w["kind"] == "page-cache" && w["job"] == "small"),
        "{w:?}"
    );
    let mut direct = base.to_vec();
    direct.push("--direct=1");
    let o = run_in(dir.path(), &direct);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("page cache"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v["iomark"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "page-cache"));
}

// A tmpfs at /dev/shm.
#[cfg(target_os = "linux")]
#[test]
fn a_memory_filesystem_is_named_in_the_warnings() {
    let shm = std::path::Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|m| {
            m.lines()
                .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "))
        })
        .unwrap_or(false);
    if !shm.is_dir() || !is_tmpfs {
        crate::common::missing("/dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let o = run_in(
        dir.path(),
        &[
            "--name=ram",
            "--rw=write",
            "--size=1m",
            "--direct=1",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["iomark"]["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| w["kind"] == "memory-filesystem"), "{w:?}");
    assert_eq!(
        v["iomark"]["environment"]["targets"][0]["memory_backed"],
        true
    );
    // quick's eight tests on one file there: one warning line, not one
    // per test.
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=4m",
            "--runtime=100ms",
            "--passes=1",
            "--no-report",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = stderr(&o)
        .lines()
        .filter(|l| l.contains("is on tmpfs"))
        .count();
    assert_eq!(lines, 1, "{}", stderr(&o));
}

/// The cells' text of a table row, text nodes joined by spaces (so
/// "SEQ1M<br/>Q8T1" reads "SEQ1M Q8T1").
fn cells(row: &roxmltree::Node) -> Vec<String> {
    row.children()
        .filter(|n| n.is_element() && matches!(n.tag_name().name(), "th" | "td"))
        .map(|c| {
            c.descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn elements<'a, 'i>(
    n: &roxmltree::Node<'a, 'i>,
    tag: &'static str,
) -> Vec<roxmltree::Node<'a, 'i>> {
    n.descendants()
        .filter(|d| d.is_element() && d.tag_name().name() == tag)
        .collect()
}

fn parse_page(text: &str) -> roxmltree::Document<'_> {
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, opt).expect("well-formed")
}

/// The (name, value) rows of the key/value table after a heading that
/// starts with `heading`.
fn kv_after(doc: &roxmltree::Document, heading: &str) -> Vec<(String, String)> {
    let h = doc
        .descendants()
        .find(|n| {
            n.is_element()
                && n.tag_name().name().starts_with('h')
                && html_check::text_of(n).starts_with(heading)
        })
        .unwrap_or_else(|| panic!("no heading '{heading}'"));
    let table = h
        .next_siblings()
        .skip(1)
        .find(|n| n.is_element())
        .and_then(|n| elements(&n, "table").into_iter().next())
        .unwrap_or_else(|| panic!("no table after '{heading}'"));
    elements(&table, "tr")
        .iter()
        .map(|r| {
            let c = cells(r);
            (c[0].clone(), c.get(1).cloned().unwrap_or_default())
        })
        .collect()
}

/// As iomark's tables write IOPS.
fn iops_text(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[test]
#[allow(clippy::too_many_lines)]
fn a_quick_report_opens_on_crystaldiskmarks_grid_and_says_what_every_chart_shows() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=8m",
            "--runtime=1",
            "--passes=2",
            "--warmup=200ms",
            "--json",
            "q.json",
            "--eta=never",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("q.json")).unwrap()).unwrap();
    let html = dir.path().join("q.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let doc = parse_page(&text);

    // The first table is CrystalDiskMark's grid: tests down, Read and
    // Write across, MB/s as CrystalDiskMark shows it.
    let tables = elements(&doc.root(), "table");
    let grid = tables[0];
    assert_eq!(grid.attribute("class"), Some("cdm"));
    let rows = elements(&grid, "tr");
    assert_eq!(cells(&rows[0]), ["MB/s", "Read", "Write"]);
    let labels: Vec<String> = rows[1..].iter().map(|r| cells(r)[0].clone()).collect();
    assert_eq!(
        labels,
        ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
    );
    assert!(text.contains("1 MB = 1,000,000 bytes"), "the unit is said");
    // Its figures are the JSON's medians, not invented.
    let tests = v["tests"].as_array().unwrap();
    for r in &rows[1..] {
        let c = cells(r);
        for (col, dir) in [(1, "read"), (2, "write")] {
            let t = tests
                .iter()
                .find(|t| t["name"] == c[0].as_str() && t["direction"] == dir)
                .unwrap_or_else(|| panic!("{} {dir} not in the JSON", c[0]));
            let s = &t["summary"];
            let mb = format!("{:.2}", s["bw_bytes"]["median"].as_f64().unwrap() / 1e6);
            let iops = format!("{} IOPS", iops_text(s["iops"]["median"].as_f64().unwrap()));
            assert!(
                c[col].starts_with(&format!("{mb} {iops} mean ")),
                "{} {dir}: '{}' is not {mb} MB/s, {iops}",
                c[0],
                c[col]
            );
        }
    }

    // Every time chart says which passes it shows; both passes are drawn
    // and the warm-up is said to be discarded.
    let charts = html_check::check_charts(&text, "q.html");
    assert_eq!(charts.time_charts, 16, "bandwidth and IOPS for 8 tests");
    for c in &charts.time_captions {
        assert!(
            c.contains("all 2 measured passes") && c.contains("200 ms warm-up"),
            "{c}"
        );
    }
    assert!(charts.axes >= 16 * 2);
    assert!(text.contains(">pass 1</text>") && text.contains(">pass 2</text>"));

    // Settings and environment in human units, no empty header rows.
    html_check::check_tables(&text, "q.html");
    let settings = kv_after(&doc, "Settings");
    for want in [
        ("size", "8 MiB"),
        ("runtime (each measured pass)", "1 s"),
        ("warm-up pass (discarded)", "200 ms"),
        ("measured passes per test", "2"),
    ] {
        assert!(
            settings.iter().any(|(k, v)| k == want.0 && v == want.1),
            "{want:?} not in {settings:?}"
        );
    }
    let host = kv_after(&doc, "Host");
    let ram = host
        .iter()
        .find(|r| r.0 == "memory (RAM)")
        .expect("RAM row");
    assert!(
        ram.1.ends_with(" GiB") || ram.1.ends_with(" MiB"),
        "{ram:?}"
    );
    let target = kv_after(&doc, "Target");
    assert!(target.iter().any(|r| r.0 == "filesystem"), "{target:?}");
    // The parameters column has size and runtime.
    let summary = tables[1];
    let first = cells(&elements(&summary, "tr")[1]);
    assert!(
        first[2].contains("size=8m") && first[2].contains("runtime=1s"),
        "{first:?}"
    );
    // One unit for the whole page, as the grid: the summary's bandwidth is
    // in MB/s too, with the JSON's medians; the charts say MB/s.
    let head = cells(&elements(&summary, "tr")[0]);
    assert_eq!(head[3], "MB/s median (min–max)", "{head:?}");
    for r in &elements(&summary, "tr")[1..] {
        let c = cells(r);
        let t = tests
            .iter()
            .find(|t| t["name"] == c[0].as_str() && t["direction"] == c[1].as_str())
            .unwrap_or_else(|| panic!("{c:?} not in the JSON"));
        let mb = t["summary"]["bw_bytes"]["median"].as_f64().unwrap() / 1e6;
        let want = if mb >= 100.0 {
            format!("{mb:.1} (")
        } else {
            format!("{mb:.2} (")
        };
        assert!(c[3].starts_with(&want), "{c:?}: not {want}");
    }
    assert!(
        !text.contains("MiB/s"),
        "a second bandwidth unit in the page"
    );
    // The bandwidth chart's title names the unit (and the log scale when
    // the bars differ by more than 20×, as SEQ1M and RND4K Q1T1 do).
    assert!(
        text.contains(">Bandwidth (MB/s, median)<")
            || text.contains(">Bandwidth (MB/s, median) — log scale<"),
        "no bandwidth chart titled in MB/s"
    );
    assert!(text.contains("in MB/s of 1,000,000 bytes"));

    // Well-formed, self-contained, renders; no sideways scrolling at 390 px.
    html_check::check_report(&html);
    // Printed: the grid has a page to itself, fits, in black on white
    // with large figures; charts two to a row.
    if let Some(p) = html_check::probe(&html, 760, true) {
        assert_eq!(p["first"], "page", "{p}");
        assert!(p["sw"].as_f64() <= p["iw"].as_f64(), "{p}");
        let head = &p["cdm_head"];
        assert_eq!(head["color"], "rgb(0, 0, 0)", "{p}");
        assert_eq!(head["background"], "rgba(0, 0, 0, 0)", "{p}");
        for b in p["big"].as_array().unwrap() {
            assert!(b["font_px"].as_f64().unwrap() >= 20.0, "{b}");
            assert!(b["sw"].as_f64() <= b["cw"].as_f64(), "{b}");
        }
        let tops: Vec<i64> = p["charts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["top"].as_i64().unwrap())
            .collect();
        assert!(
            tops.windows(2).any(|w| w[0] == w[1]),
            "two per row: {tops:?}"
        );
    }

    // The widest figures still fit a phone: 99999.99 MB/s, 9999999 IOPS.
    let mut big = v.clone();
    for t in big["tests"].as_array_mut().unwrap() {
        for p in t["passes"].as_array_mut().unwrap() {
            p["bw_bytes"] = serde_json::json!(99_999_990_000.0);
            p["iops"] = serde_json::json!(9_999_999.0);
            p["lat_mean_ns"] = serde_json::json!(999_999_999.0);
        }
    }
    std::fs::write(dir.path().join("big.json"), big.to_string()).unwrap();
    let o = run_in(dir.path(), &["report", "big.json", "-o", "big.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let big_html = std::fs::read_to_string(dir.path().join("big.html")).unwrap();
    assert!(big_html.contains(">99999.99<"));
    if let Some(p) = html_check::probe(&dir.path().join("big.html"), 390, false) {
        html_check::check_narrow(&p, "big.html");
    }

    // Two results in one report: bar legends are filled squares, and the
    // single run's time charts name their file.
    let mut args = FIO_JOB.to_vec();
    args.push("--output-format=json");
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.path().join("io.json"), &o.stdout).unwrap();
    let o = run_in(
        dir.path(),
        &["report", "q.json", "io.json", "-o", "two.html"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let two = std::fs::read_to_string(dir.path().join("two.html")).unwrap();
    let st = html_check::check_charts(&two, "two.html");
    assert_eq!(st.bar_legends, 2, "{st:?}");
    assert!(
        st.time_captions
            .iter()
            .any(|c| c.contains("the run in io.json")),
        "{:?}",
        st.time_captions
    );
    html_check::check_tables(&two, "two.html");

    // compare's charts too.
    let o = run_in(
        dir.path(),
        &["compare", "q.json", "q.json", "--html", "cmp.html"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cmp = std::fs::read_to_string(dir.path().join("cmp.html")).unwrap();
    let st = html_check::check_charts(&cmp, "cmp.html");
    assert!(st.time_charts >= 8 && st.bar_legends >= 4, "{st:?}");
    assert!(st
        .time_captions
        .iter()
        .all(|c| c.contains("the pass with the median bandwidth")));
}

/// The legend entries of the bar charts of a page, chart by chart.
fn bar_legends(doc: &roxmltree::Document) -> Vec<Vec<String>> {
    doc.descendants()
        .filter(|n| {
            n.is_element()
                && n.tag_name().name() == "svg"
                && n.attribute("class")
                    .is_some_and(|c| c.split_whitespace().any(|c| c == "bar-chart"))
        })
        .map(|svg| {
            svg.descendants()
                .filter(|n| {
                    n.attribute("class")
                        .is_some_and(|c| c.split_whitespace().any(|c| c == "legend"))
                })
                .flat_map(|lg| {
                    lg.descendants()
                        .filter(|t| t.is_element() && t.tag_name().name() == "text")
                        .map(|t| html_check::text_of(&t))
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_report_of_several_runs_names_each_by_its_label_else_its_host_and_time() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=4m",
            "--runtime=100ms",
            "--passes=1",
            "--warmup=0",
            "--json",
            "q.json",
            "--eta=never",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("q.json")).unwrap();
    let q: Value = serde_json::from_str(&text).unwrap();
    let host = q["environment"]["host"]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    // Two labelled copies, two unlabelled ones (same host and time), and a
    // job's result with its label inside "iomark".
    for (name, label) in [("a.json", Some("before")), ("b.json", Some("after"))] {
        let mut v = q.clone();
        v["label"] = label.into();
        std::fs::write(dir.path().join(name), v.to_string()).unwrap();
    }
    std::fs::write(dir.path().join("c.json"), &text).unwrap();
    std::fs::write(dir.path().join("d.json"), &text).unwrap();
    let mut args = FIO_JOB.to_vec();
    args.push("--output-format=json");
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut job: Value = serde_json::from_slice(&o.stdout).unwrap();
    job["iomark"]["label"] = "job-run".into();
    std::fs::write(dir.path().join("job.json"), job.to_string()).unwrap();
    let o = run_in(
        dir.path(),
        &[
            "report",
            "a.json",
            "b.json",
            "c.json",
            "d.json",
            "job.json",
            "-o",
            "runs.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(dir.path().join("runs.html")).unwrap();
    let doc = parse_page(&page);
    // The summary's first column names the run of every row.
    let summary = elements(&doc.root(), "table")
        .into_iter()
        .find(|t| cells(&elements(t, "tr")[0]).first().map(String::as_str) == Some("run"))
        .expect("a summary with a run column");
    let mut runs: Vec<String> = elements(&summary, "tr")[1..]
        .iter()
        .map(|r| cells(r)[0].clone())
        .collect();
    runs.dedup();
    assert_eq!(runs.len(), 5, "{runs:?}");
    assert_eq!(&runs[..2], ["before", "after"]);
    assert_eq!(runs[4], "job-run");
    for (r, file) in [(&runs[2], "c.json"), (&runs[3], "d.json")] {
        assert!(
            r.starts_with(&format!("{host}, 20")) && r.ends_with(&format!(" ({file})")),
            "{r}"
        );
    }
    assert!(
        !runs.iter().any(|r| r.contains("CrystalDiskMark")),
        "{runs:?}"
    );
    // The bar charts' legends name the same runs; each run has a heading.
    let legends = bar_legends(&doc);
    assert_eq!(legends.len(), 2, "{legends:?}");
    for l in &legends {
        assert_eq!(l, &runs, "legend");
    }
    for r in &runs {
        assert!(page.contains(&format!("<h2>{r}</h2>")), "no heading {r}");
    }
    html_check::check_report(&dir.path().join("runs.html"));
}

/// The completions of a direction in a histogram log: the sum of its bins.
fn hist_total(text: &str, dir: u64) -> u64 {
    text.lines()
        .map(|l| {
            l.split(',')
                .map(|x| x.trim().parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|f| f[1] == dir)
        .map(|f| f[3..].iter().sum::<u64>())
        .sum()
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn a_directory_of_results_and_histogram_logs_is_one_report() {
    let dir = tempdir();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    // iomark's histogram log: every completion of the job, per direction.
    let mut args = FIO_JOB.to_vec();
    args.extend([
        "--name=ih",
        "--write_hist_log=ih",
        "--log_hist_msec=100",
        "--log_hist_coarseness=1",
        "--write_iops_log=ih",
        "--output-format=json",
    ]);
    let o = run_in(&run, &args[1..]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(run.join("iomark.json"), &o.stdout).unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hist = std::fs::read_to_string(run.join("ih_clat_hist.1.log")).unwrap();
    for (d, name) in [(0, "read"), (1, "write")] {
        assert_eq!(
            hist_total(&hist, d),
            v["jobs"][0][name]["clat_ns"]["N"].as_u64().unwrap(),
            "{name}: the log's intervals hold every completion"
        );
    }
    // A file that is no result is skipped with a note.
    std::fs::write(run.join("notes.json"), "{\"hello\": 1}").unwrap();
    require_fio!();
    // fio's: two jobs (numjobs=2), each with its own numbered logs.
    let o = fio_output(
        std::process::Command::new("fio")
            .args([
                "--name=fh",
                "--rw=randread",
                "--bs=4k",
                "--size=4m",
                "--runtime=1",
                "--time_based",
                "--numjobs=2",
                "--write_hist_log=fh",
                "--log_hist_msec=250",
                "--write_bw_log=fh",
                "--log_avg_msec=250",
                "--output-format=json",
                "--output=fio.json",
            ])
            .current_dir(&run),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fio_hist = std::fs::read_to_string(run.join("fh_clat_hist.2.log")).unwrap();
    assert_eq!(
        fio_hist.lines().next().unwrap().split(',').count(),
        3 + 1856,
        "fio 3.33's layout: time, direction, block size, 1856 bins"
    );
    // Test files of the runs are not results or logs: left alone.
    let o = run_in(dir.path(), &["report", "run", "-o", "r.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("note: skipped run/notes.json: not a fio/iomark JSON result"),
        "{err}"
    );
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    // Both results, and each job's logs under its name.
    assert!(page.contains("fio.json") && page.contains("iomark.json"));
    for want in [
        "<h3>Logs of job fh (number 1 in its run)</h3>",
        "<h3>Logs of job fh (number 2 in its run)</h3>",
        "<h3>Logs of job ih</h3>",
        "The run that wrote fh_clat_hist.2.log: each point a percentile",
        "The run that wrote ih_clat_hist.1.log: each point a percentile",
        "(bin midpoints, within 1.6%)",
        "(bin midpoints, within 0.8%)",
    ] {
        assert!(page.contains(want), "missing {want}");
    }
    let st = html_check::check_charts(&page, "r.html");
    let titles = |t: &str| page.matches(&format!(">{t}<")).count();
    // fio: two jobs, reads; iomark: reads and writes.
    assert_eq!(titles("Completion latency percentiles over time — read"), 3);
    assert_eq!(
        titles("Completion latency percentiles over time — write"),
        1
    );
    assert_eq!(titles("Bandwidth over time"), 2 + 2, "{st:?}");
    html_check::check_report(&dir.path().join("r.html"));
}
