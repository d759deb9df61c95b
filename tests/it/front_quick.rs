//! `iomark quick`: the table, the JSON and HTML reports it leaves, the
//! test file it removes (also on Ctrl-C), and its refusal to touch a file
//! it did not create.

use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::html_check;

pub const LABELS: [&str; 8] = [
    "SEQ1M Q8T1 read",
    "SEQ1M Q1T1 read",
    "RND4K Q32T1 read",
    "RND4K Q1T1 read",
    "SEQ1M Q8T1 write",
    "SEQ1M Q1T1 write",
    "RND4K Q32T1 write",
    "RND4K Q1T1 write",
];

/// The paths printed after "JSON results:" and "HTML report:".
pub fn report_paths(dir: &Path, out: &str) -> (PathBuf, PathBuf) {
    let find = |tag: &str| {
        let line = out
            .lines()
            .find(|l| l.starts_with(tag))
            .unwrap_or_else(|| panic!("no '{tag}' line in:\n{out}"));
        dir.join(line[tag.len()..].trim())
    };
    (find("JSON results:"), find("HTML report:"))
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn quick_prints_the_table_and_leaves_reports_but_no_test_file() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=16m",
            "--runtime=300ms",
            "--passes=2",
            "--warmup=100ms",
            "--eta=never",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    // CrystalDiskMark's unit, as its grid in the HTML report, said once.
    let head = out.lines().find(|l| l.starts_with("Test ")).unwrap();
    assert!(head.contains(" MB/s ") && head.contains("p99 lat"), "{out}");
    assert!(out.contains("in MB/s of 1,000,000 bytes"), "{out}");
    let (json, html) = report_paths(dir.path(), &out);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for l in LABELS {
        let row = out
            .lines()
            .find(|r| r.starts_with(l))
            .unwrap_or_else(|| panic!("no row '{l}' in:\n{out}"));
        // median MB/s, spread, IOPS, two latencies
        assert!(
            row.contains('–') && row.split_whitespace().count() >= 7,
            "{row}"
        );
        // The median is the JSON's, in MB/s of 10^6 bytes.
        let (name, dir) = l.rsplit_once(' ').unwrap();
        let t = v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name && t["direction"] == dir)
            .unwrap();
        let mb = t["summary"]["bw_bytes"]["median"].as_f64().unwrap() / 1e6;
        let want = if mb >= 100.0 {
            format!("{mb:.1}")
        } else {
            format!("{mb:.2}")
        };
        let shown = row[l.len()..].split_whitespace().next().unwrap();
        assert_eq!(shown, want, "{row}");
    }
    let mut expected: Vec<String> = [&json, &html]
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    assert_eq!(
        files_in(dir.path()),
        expected,
        "only the two reports remain"
    );
    assert_eq!(v["kind"], "quick");
    assert_eq!(v["interrupted"], false);
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 8);
    for t in tests {
        assert_eq!(t["passes"].as_array().unwrap().len(), 2, "{t}");
        assert!(t["summary"]["bw_bytes"]["median"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["runs"].as_array().unwrap().len(), 16);
    assert!(v["environment"]["host"]["cpus"].as_u64().unwrap() >= 1);
    assert!(v["environment"]["targets"][0]["fs_type"].is_string());
    assert!(v["jobfile"]
        .as_str()
        .unwrap()
        .contains("[rnd4k-q1t1-write]"));
    let charts = html_check::check_report(&html);
    assert!(charts >= 8 * 3, "{charts} charts");

    // A re-run does not overwrite: new names, both printed.
    let o2 = run_in(
        dir.path(),
        &[
            "quick",
            "--size=8m",
            "--runtime=100ms",
            "--passes=1",
            "--no-warmup",
        ],
    );
    assert!(o2.status.success(), "{}", stderr(&o2));
    let (json2, _) = report_paths(dir.path(), &stdout(&o2));
    assert_ne!(json, json2);
    assert!(json.exists() && json2.exists());

    // Comparing a run with itself: one run a side, so no verdict
    // (its passes are not runs).
    let c = run_in(
        dir.path(),
        &["compare", json.to_str().unwrap(), json.to_str().unwrap()],
    );
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    assert!(
        stdout(&c)
            .contains("Overall: 0 regression(s), 0 improvement(s), 0 no change, 8 inconclusive"),
        "{}",
        stdout(&c)
    );
}

#[test]
fn quick_will_not_use_a_file_it_did_not_create() {
    // Each preset command names the file in its own words, with advice
    // it can follow: allow_destroy_data=1 is a job file's option, which
    // these commands do not take.
    for (args, file) in [
        (&["quick"][..], "iomark-quick.tmp"),
        (&["sweep", "--rw=randread"][..], "iomark-sweep.tmp"),
        (&["suite", "ars"][..], "ars-4k-randwrite-qd1.0.0"),
    ] {
        let dir = tempdir();
        let mine = dir.path().join(file);
        std::fs::write(&mine, b"precious").unwrap();
        let mut a = args.to_vec();
        a.extend(["--size=8m", "--runtime=100ms"]);
        let o = run_in(dir.path(), &a);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        let want = format!("iomark {}: test file '{file}' already exists", args[0]);
        assert!(err.starts_with(&want), "{args:?}: {err}");
        assert!(err.contains("delete it"), "{err}");
        assert!(!err.contains("allow_destroy_data"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(std::fs::read(&mine).unwrap(), b"precious");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{args:?} left {left:?}");
    }
}

#[test]
fn quick_rejects_bad_options_in_one_line() {
    let dir = tempdir();
    for args in [
        vec!["quick", "--passes=0"],
        vec!["quick", "--size=banana"],
        vec!["quick", "--frobnicate"],
        vec!["quick", "no-such-dir"],
        vec!["quick", "--engine=warp"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("iomark quick: "), "{err}");
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn quick_prints_a_job_file_that_iomark_runs() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &["quick", "--print-jobfile", "--size=4m", "--runtime=200ms"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("[global]") && text.contains("size=4m") && text.contains("runtime=200ms")
    );
    assert_eq!(text.matches("\n[").count(), 9, "{text}");
    let f = dir.path().join("q.fio");
    std::fs::write(&f, &text).unwrap();
    let j = run_json(dir.path(), &["q.fio", "--section=rnd4k-q1t1-read"]);
    assert_eq!(j["jobs"][0]["jobname"], "rnd4k-q1t1-read");
}

// SIGINT from another process (Windows' Ctrl-C is checked under Wine\nby .ci/portable, through Wine's console).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_quick_removes_the_test_file_and_exits_130() {
    let dir = tempdir();
    let child = iomark()
        .args([
            "quick",
            "--size=8m",
            "--runtime=20s",
            "--passes=1",
            "--no-warmup",
            "--eta=never",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let test_file = dir.path().join("iomark-quick.tmp");
    let t0 = Instant::now();
    while !test_file.exists() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(test_file.exists(), "the test file never appeared");
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let stopped = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "took {:?}",
        stopped.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!test_file.exists(), "test file left behind");
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    let (json, html) = report_paths(dir.path(), &stdout(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(html.exists());
}

/// `--json -` sends the JSON results to standard output (alone there; the
/// table goes to standard error), as `compare --json -` does, and writes
/// no file named '-'.
#[test]
fn quick_json_dash_writes_the_results_to_standard_output() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=8m",
            "--runtime=200ms",
            "--passes=1",
            "--warmup=0",
            "--eta=never",
            "--json",
            "-",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout holds only the JSON");
    assert_eq!(doc["kind"], "quick");
    assert_eq!(doc["tests"].as_array().map(Vec::len), Some(8), "{doc}");
    let err = stderr(&o);
    assert!(
        err.contains("RND4K Q1T1 write"),
        "the table is on stderr: {err}"
    );
    assert!(err.contains("JSON results: standard output"), "{err}");
    let files = files_in(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("iomark-quick-") && files[0].ends_with(".html"));

    let o = run_in(dir.path(), &["quick", "--json", "-", "--html", "-"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "iomark quick: --json - and --html - cannot both go to standard output\n"
    );
}
