//! `iomark compare`: repeated runs of the same job show no significant
//! change; halving the IOPS with rate_iops is a regression with exit code
//! 2; JSON and HTML outputs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;
use crate::html_check;

/// One run of a rate-limited job, saved as `name.json` in `dir`.
fn run_rated(dir: &Path, name: &str, rate_iops: u32) -> PathBuf {
    let rate = format!("--rate_iops={rate_iops}");
    let o = run_in(
        dir,
        &[
            "--name=cmp",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--ioengine=psync",
            &rate,
            "--runtime=700ms",
            "--time_based",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

/// Three runs per side, interleaved so that load on the machine affects
/// both sides alike.
fn two_sides(dir: &Path, base_rate: u32, new_rate: u32) -> (Vec<String>, Vec<String>) {
    let mut base = Vec::new();
    let mut new = Vec::new();
    for i in 0..3 {
        base.push(
            run_rated(dir, &format!("base{i}"), base_rate)
                .display()
                .to_string(),
        );
        new.push(
            run_rated(dir, &format!("new{i}"), new_rate)
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

/// A test must not fail by chance: at α = 0.05 a true "no change" is
/// called significant 5 % of the time by design, so these tests ask for
/// α = 0.01 and a 25 % threshold (halving the rate is −50 %).
const STRICT: [&str; 2] = ["--alpha=0.01", "--threshold=25"];

#[test]
fn repeated_runs_of_the_same_job_show_no_significant_change() {
    let dir = tempdir();
    let (base, new) = two_sides(dir.path(), 800, 800);
    let mut extra = STRICT.to_vec();
    extra.extend(["--json", "-"]);
    let o = run_in(dir.path(), &compare_args(&base, &new, &extra));
    let v: Value = serde_json::from_slice(&o.stdout).expect("--json - prints only JSON");
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["verdict"], "no significant change", "{v}");
    assert_eq!(v["regressions"], 0);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "four metrics of cmp/read");
    for r in rows {
        assert_eq!(r["base"]["n"], 3);
        assert_eq!(r["new"]["n"], 3);
    }
    let text = run_in(dir.path(), &compare_args(&base, &new, &STRICT));
    assert!(
        stdout(&text).contains("Overall: no significant change"),
        "{}",
        stdout(&text)
    );
    // Each of the four rows gives its verdict once, and the report fits
    // 80 columns.
    let out = stdout(&text);
    let rows: Vec<&str> = out.lines().filter(|l| l.ends_with("  no change")).collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
}

#[test]
fn halving_iops_with_rate_iops_is_a_regression() {
    let dir = tempdir();
    let (base, new) = two_sides(dir.path(), 800, 400);
    let mut extra = STRICT.to_vec();
    extra.extend(["--html", "cmp.html", "--json", "cmp.json"]);
    let o = run_in(dir.path(), &compare_args(&base, &new, &extra));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{}", stderr(&o));
    let iops_row = out
        .lines()
        .find(|l| l.starts_with("cmp read") && l.contains("IOPS"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(iops_row.contains("REGRESSION"), "{iops_row}");
    assert!(
        iops_row.contains("-50") || iops_row.contains("-49"),
        "{iops_row}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cmp.json")).unwrap())
            .unwrap();
    assert_eq!(v["verdict"], "regression");
    let bw = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "bw_bytes")
        .unwrap();
    assert_eq!(bw["verdict"], "regression", "{bw}");
    assert!(bw["p_value"].as_f64().unwrap() < 0.01);
    html_check::check_report(&dir.path().join("cmp.html"));

    // The other way round it is an improvement, and the exit code is 0.
    let back = run_in(dir.path(), &compare_args(&new, &base, &STRICT));
    assert_eq!(back.status.code(), Some(0));
    assert!(stdout(&back).contains("improvement"));
    // Single files per side: the threshold alone decides, and says so.
    let single = run_in(dir.path(), &["compare", &base[0], &new[0]]);
    assert_eq!(single.status.code(), Some(2));
    assert!(
        stdout(&single).contains("single run"),
        "{}",
        stdout(&single)
    );
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
