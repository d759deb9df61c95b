//! `iomark compare`: repeated runs of the same job get no false verdict;
//! one run a side is inconclusive; a rate limit on one side is "not
//! comparable" (exit 3), and with --allow-different a regression with
//! its interval (exit 2); fio against iomark is not comparable; a CI gate
//! against the history's runs of a label.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;
use crate::html_check;
use crate::require_fio;

/// One run of a rate-limited job, saved as `name.json` in `dir`.
fn run_rated(dir: &Path, name: &str, rate_iops: u32) -> PathBuf {
    run_rated_with(dir, name, rate_iops, &[])
}

/// `run_rated` with more flags.
fn run_rated_with(dir: &Path, name: &str, rate_iops: u32, extra: &[&str]) -> PathBuf {
    let rate = format!("--rate_iops={rate_iops}");
    let mut args = vec![
        "--name=cmp",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--ioengine=psync",
        &rate,
        "--runtime=700ms",
        "--time_based",
        "--output-format=json",
    ];
    args.extend(extra);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

/// Three runs per side, interleaved so that load on the machine affects
/// both sides alike.
fn two_sides(dir: &Path, base_rate: u32, new_rate: u32) -> (Vec<String>, Vec<String>) {
    two_sides_with(dir, base_rate, new_rate, &[])
}

/// `two_sides` with more flags.
fn two_sides_with(
    dir: &Path,
    base_rate: u32,
    new_rate: u32,
    extra: &[&str],
) -> (Vec<String>, Vec<String>) {
    let mut base = Vec::new();
    let mut new = Vec::new();
    for i in 0..3 {
        base.push(
            run_rated_with(dir, &format!("base{i}"), base_rate, extra)
                .display()
                .to_string(),
        );
        new.push(
            run_rated_with(dir, &format!("new{i}"), new_rate, extra)
                .display()
                .to_string(),
        );
    }
    (base, new)
}

fn compare_args<'a>(base: &'a [String], new: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["compare", "--base"];
    a.extend(base.iter().map(String::as_str));
    a.push("--new");
    a.extend(new.iter().map(String::as_str));
    a.extend(extra);
    a
}

#[test]
fn repeated_runs_of_the_same_job_give_no_false_verdict() {
    let _serial = timing_alone();
    let dir = tempdir();
    let (base, new) = two_sides(dir.path(), 800, 800);
    let o = run_in(dir.path(), &compare_args(&base, &new, &["--json", "-"]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("--json - prints only JSON");
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["verdict"], "no regression", "{v}");
    assert_eq!(v["regressions"], 0, "{v}");
    assert_eq!(v["improvements"], 0, "{v}");
    assert_eq!(v["comparable"], true, "{v}");
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "one test: cmp/read");
    let metrics = tests[0]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 4, "{v}");
    for m in metrics {
        assert_eq!(m["base"].as_array().unwrap().len(), 3, "{m}");
        assert_eq!(m["new"].as_array().unwrap().len(), 3, "{m}");
        let iv = m["interval_pct"].as_array().expect("an interval");
        assert!(iv[0].as_f64().unwrap() <= iv[1].as_f64().unwrap(), "{m}");
    }
    // One line per test, within 80 columns.
    let text = run_in(dir.path(), &compare_args(&base, &new, &[]));
    let out = stdout(&text);
    assert_eq!(text.status.code(), Some(0), "{out}");
    // Plain words first, the statistics below: one line per test there.
    assert!(
        out.find("What changed:") < out.find("\nStatistics"),
        "{out}"
    );
    let lines: Vec<&str> = statistics(&out)
        .lines()
        .filter(|l| l.contains("cmp read"))
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    assert!(
        out.contains("Overall: 0 regression(s), 0 improvement(s)"),
        "{out}"
    );
    // --detail: every metric.
    let detail = stdout(&run_in(
        dir.path(),
        &compare_args(&base, &new, &["--detail"]),
    ));
    assert_eq!(
        statistics(&detail)
            .lines()
            .filter(|l| l.contains("cmp read"))
            .count(),
        4,
        "{detail}"
    );
}

#[test]
fn a_rate_limit_on_one_side_is_not_comparable_then_found_with_its_interval() {
    let _serial = timing_alone();
    let dir = tempdir();
    // The null engine: only the rate limits set the pace, so a file's
    // reads slowed by a busy machine do not blur the halved rate (with
    // psync, one base run of three at 30% under the others left the
    // change inconclusive, with two busy loops and builds beside).
    let (base, new) = two_sides_with(dir.path(), 800, 400, &["--ioengine=null"]);
    // Different job options: named as a diff, exit 3, no verdict.
    let o = run_in(dir.path(), &compare_args(&base, &new, &[]));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}\n{}", stderr(&o));
    assert!(out.contains("- rate_iops=800\n+ rate_iops=400"), "{out}");
    assert!(out.contains("@@ test cmp/read"), "{out}");
    assert!(out.contains("Overall: not comparable"), "{out}");
    assert!(!out.contains("REGRESSION"), "{out}");

    let mut extra = vec![
        "--allow-different",
        "--html",
        "cmp.html",
        "--json",
        "cmp.json",
    ];
    let o = run_in(dir.path(), &compare_args(&base, &new, &extra));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{}", stderr(&o));
    let line = statistics(&out)
        .lines()
        .find(|l| l.contains("cmp read"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("REGRESSION"), "{line}");
    // And in plain words first, with both sides' values in their unit.
    assert!(
        out.contains("REGRESSION cmp read: worse, ") && out.contains(" MiB/s)"),
        "{out}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cmp.json")).unwrap())
            .unwrap();
    assert_eq!(v["verdict"], "regression");
    assert_eq!(v["exit_status"], 2);
    let metric = |k: &str| {
        v["tests"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == k)
            .unwrap()
            .clone()
    };
    let iops = metric("iops");
    assert_eq!(iops["verdict"], "regression", "{iops}");
    let change = iops["change_pct"].as_f64().unwrap();
    // Halved, give or take a run slowed by the load of the machine.
    assert!((-60.0..-40.0).contains(&change), "{iops}");
    let iv = iops["interval_pct"].as_array().unwrap();
    assert!(
        iv[1].as_f64().unwrap() < -5.0,
        "the interval excludes -5%: {iops}"
    );
    // The tail latency has an interval of its own, from each run's p99.
    let p99 = metric("lat_p99_ns");
    assert_eq!(p99["base"].as_array().unwrap().len(), 3, "{p99}");
    assert!(p99["interval_pct"].is_array(), "{p99}");
    html_check::check_report(&dir.path().join("cmp.html"));

    // The other way round it is an improvement, and the exit code is 0.
    extra.truncate(1);
    let back = run_in(dir.path(), &compare_args(&new, &base, &extra));
    assert_eq!(back.status.code(), Some(0), "{}", stdout(&back));
    assert!(stdout(&back).contains("improvement"));
}

/// The statistics section of compare's text (below the plain words).
fn statistics(out: &str) -> &str {
    out.split("\nStatistics")
        .nth(1)
        .unwrap_or_else(|| panic!("no statistics section:\n{out}"))
}

#[test]
fn one_run_a_side_is_inconclusive_and_says_how_many_runs_would_do() {
    let _serial = timing_alone();
    let dir = tempdir();
    let a = run_rated(dir.path(), "a", 800).display().to_string();
    let b = run_rated(dir.path(), "b", 800).display().to_string();
    let o = run_in(dir.path(), &["compare", &a, &b]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let line = statistics(&out)
        .lines()
        .find(|l| l.contains("cmp read"))
        .unwrap();
    assert!(line.starts_with("inconclusive"), "{out}");
    assert!(line.contains("1 run a side"), "{out}");
    // A quick results file is one run too: its passes do not count as runs.
    let q = run_in(
        dir.path(),
        &[
            "quick",
            "--size=4m",
            "--runtime=100ms",
            "--passes=3",
            "--no-warmup",
            "--json=q.json",
            "--no-history",
        ],
    );
    assert!(q.status.success(), "{}", stderr(&q));
    let o = run_in(dir.path(), &["compare", "q.json", "q.json", "--json", "-"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["inconclusive"], 8, "{v}");
    assert_eq!(v["regressions"], 0);
    let m = &v["tests"][0]["metrics"][0];
    assert_eq!(m["base"].as_array().unwrap().len(), 1, "one run: {m}");
    // The passes' spread is measured; the runs it needs are a number (or
    // null: over 1000).
    assert!(m["spread_pct"].as_f64().is_some(), "{m}");
    assert!(
        m["runs_needed"].is_null() || m["runs_needed"].as_u64().unwrap() >= 2,
        "{m}"
    );
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn fio_and_iomark_results_are_not_comparable() {
    require_fio!();
    let dir = tempdir();
    let job = [
        "--name=cmp",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--ioengine=psync",
        "--runtime=300ms",
        "--time_based",
    ];
    let i = run_json(dir.path(), &job);
    let f = fio_json(dir.path(), &job);
    std::fs::write(dir.path().join("i.json"), i.to_string()).unwrap();
    std::fs::write(dir.path().join("f.json"), f.to_string()).unwrap();
    let o = run_in(dir.path(), &["compare", "i.json", "f.json"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("- tool=iomark"), "{out}");
    assert!(out.contains("+ tool=fio fio-3"), "{out}");
}

#[test]
fn a_ci_gate_against_the_history_of_main() {
    let _serial = timing_alone();
    let dir = tempdir();
    let db = history_db(dir.path());
    let db_arg = format!("--history-db={}", db.display());
    for i in 0..3 {
        let p = run_rated_with(
            dir.path(),
            &format!("main{i}"),
            800,
            // The null engine: only the rate limit sets the pace, so a
            // busy machine's disk does not make main's runs noisy.
            &["--label=main", &db_arg, "--ioengine=null"],
        );
        assert!(p.exists());
    }
    let gate = |new: &str| {
        let o = run_in(
            dir.path(),
            &[
                "compare",
                "--base",
                "@main",
                "--new",
                new,
                "--threshold",
                "5",
                &db_arg,
            ],
        );
        let out = stdout(&o);
        assert!(out.contains("base: @main (3 runs: #1 #2 #3)"), "{out}");
        assert!(out.contains("the new side has one run"), "{out}");
        (o.status.code(), out, stderr(&o))
    };
    // A fresh run of the same job is comparable with main's: the same
    // settings, so a verdict (no "not comparable", exit 0 or 2). Which
    // verdict is up to the machine: its latency moves with the load
    // beside it (a null engine's I/O takes microseconds, which a busy
    // CPU stretches), and a single new run cannot average that out.
    let fresh = run_rated_with(dir.path(), "run", 800, &["--ioengine=null"])
        .display()
        .to_string();
    let (code, out, err) = gate(&fresh);
    assert!(matches!(code, Some(0 | 2)), "{out}\n{err}");
    assert!(!out.contains("not comparable"), "{out}");
    // The gate passes a new run that is one of main's own (its result
    // file): whatever the spread of main's runs, one of them lies inside
    // the interval for a new run that the others give (for three runs
    // its distance to their mean is at most 1.16 standard deviations,
    // the interval's half-width t(2 df) x 1.16 of them, t > 2.9), so no
    // load can make this a verdict: exit 0, no REGRESSION.
    let same = dir.path().join("same.json");
    std::fs::copy(dir.path().join("main1.json"), &same).unwrap();
    let (code, out, err) = gate(&same.display().to_string());
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(!out.contains("REGRESSION"), "{out}");
    // Slower: a regression, exit 2 (the rate differs, allowed here).
    let slow = run_rated_with(dir.path(), "slow", 200, &["--ioengine=null"])
        .display()
        .to_string();
    let o = run_in(
        dir.path(),
        &[
            "compare",
            "--base",
            "@main",
            "--new",
            &slow,
            "--allow-different",
            &db_arg,
            "--json",
            "-",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(2), "{v}");
    assert_eq!(v["tests"][0]["verdict"], "regression", "{v}");
    // Unknown labels and ids are one clear line.
    for bad in ["@nope", "#99"] {
        let o = run_in(dir.path(), &["compare", bad, &fresh, &db_arg]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn compare_refuses_unrelated_or_bad_input() {
    let dir = tempdir();
    let a = dir.path().join("a.json");
    std::fs::write(&a, "{\"jobs\": []}").unwrap();
    let b = dir.path().join("b.json");
    std::fs::write(&b, "not json").unwrap();
    for args in [
        vec!["compare", a.to_str().unwrap()],
        vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        vec!["compare", a.to_str().unwrap(), a.to_str().unwrap()],
        vec![
            "compare",
            "--threshold=x",
            a.to_str().unwrap(),
            a.to_str().unwrap(),
        ],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
}
