//! `quick`, `suite` and `sweep` under MPI (`mpirun -np N iomark quick`):
//! every rank benchmarks the directory on its own test file, rank 0 alone
//! prints the table and writes the reports, whose figures are the sum
//! over every rank with the spread over the ranks (one host here), and
//! every rank removes its own file. Uses the MPI build of `mpi.rs`.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{self, tempdir, Bounded};
use crate::mpi::{mpi_iomark, mpirun};

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            common::stdout(o),
            common::stderr(o)
        )
    })
}

/// The files left in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The I/Os of direction `dir` in pass `pass` of `section`, from the
/// merged `jobs` of that pass's fio-format document.
fn merged_ios(doc: &Value, section: &str, pass: usize, dir: &str) -> u64 {
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["section"] == section && r["pass"] == pass)
        .unwrap_or_else(|| panic!("no run of {section} pass {pass}"));
    run["result"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j[dir]["total_ios"].as_u64().unwrap_or(0))
        .sum()
}

/// Every test of a bundle: two clients (the ranks), whose I/Os add up to
/// the merged figure of every pass, and a spread that holds them.
fn check_tests_sum_their_ranks(doc: &Value, passes: usize) {
    let tests = doc["tests"].as_array().expect("tests");
    assert!(!tests.is_empty(), "{doc}");
    for t in tests {
        let clients = t["clients"].as_array().unwrap_or_else(|| panic!("{t}"));
        assert_eq!(clients.len(), 2, "{t}");
        let names: Vec<&str> = clients
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["rank 0", "rank 1"], "{t}");
        let dir = t["direction"].as_str().unwrap();
        let section = t["section"].as_str().unwrap();
        for pass in 0..passes {
            let sum: u64 = clients
                .iter()
                .map(|c| c["passes"][pass]["total_ios"].as_u64().expect("total_ios"))
                .sum();
            let merged = merged_ios(doc, section, pass + 1, dir);
            assert!(merged > 0, "{section} {dir}: no I/O");
            assert_eq!(sum, merged, "{section} {dir} pass {}", pass + 1);
            // Both ranks did I/O.
            assert!(clients
                .iter()
                .all(|c| c["passes"][pass]["total_ios"].as_u64() > Some(0)));
        }
        let sp = &t["spread"];
        assert_eq!(sp["over"], "ranks", "{t}");
        assert_eq!(sp["clients"], 2, "{t}");
        let (lo, hi) = (
            sp["iops"]["min"].as_f64().unwrap(),
            sp["iops"]["max"].as_f64().unwrap(),
        );
        assert!(lo > 0.0 && lo <= hi, "{sp}");
        // The aggregate is the sum of both ranks over their common time,
        // so above the smallest rank figure of any pass. (Not always above
        // the largest: the spread's max is one rank's best pass, the
        // aggregate the median of the passes, and ranks that start apart
        // share less time; the I/O counts above are the exact check.)
        let agg = t["summary"]["iops"]["median"].as_f64().unwrap();
        assert!(agg >= lo, "aggregate {agg} below every rank's {lo}");
    }
}

/// How often the table's heading appears in `text`.
fn headings(text: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with("Test ") && l.contains("B/s") && l.contains("p99 lat"))
        .count()
}

#[test]
fn quick_on_two_ranks_reports_their_sum_and_spread_once_and_leaves_no_test_file() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
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
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let doc = json_of(&o);
    assert_eq!(doc["kind"], "quick");
    assert_eq!(doc["cluster"]["ranks"], 2, "{}", doc["cluster"]);
    assert_eq!(doc["cluster"]["spread_over"], "ranks");
    assert_eq!(doc["tests"].as_array().map(Vec::len), Some(8));
    check_tests_sum_their_ranks(&doc, 1);
    // Rank 0's job file names its own test file.
    assert!(
        doc["jobfile"]
            .as_str()
            .unwrap()
            .contains("filename=iomark-quick.0.tmp"),
        "{}",
        doc["jobfile"]
    );
    // The pass documents are fio's client-mode layout.
    let run = &doc["runs"][0]["result"];
    assert!(run["client_stats"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
    assert_eq!(run["iomark"]["cluster"]["ranks"], 2);
    // The same `iomark.cluster` as the command line writes, phases too
    // (one launch for both).
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let cli = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "--name=k",
            "--ioengine=null",
            "--size=64k",
            "--output-format=json",
        ],
    );
    assert!(cli.status.success(), "{}", common::stderr(&cli));
    let cli = json_of(&cli)["iomark"]["cluster"].clone();
    let pass = &run["iomark"]["cluster"];
    assert_eq!(keys(pass), keys(&cli), "{pass}\n{cli}");
    assert_eq!(keys(&pass["phases"][0]), keys(&cli["phases"][0]));
    assert_eq!(pass["phases"][0]["ranks"], 2);
    // The table (on stderr with --json -) once, with the spread lines.
    assert_eq!(headings(&err), 1, "{err}");
    assert!(err.contains("on 2 MPI ranks"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("over 2 ranks: ")).count(),
        8,
        "{err}"
    );
    // The HTML says how many ranks ran; no test file remains.
    let files = files_in(d.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("iomark-quick-") && files[0].ends_with(".html"));
    let html = std::fs::read_to_string(d.path().join(&files[0])).unwrap();
    assert!(html.contains("on 2 MPI ranks"), "the HTML names the ranks");
}

#[test]
fn a_test_file_left_on_one_rank_stops_every_rank_before_any_io() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let left = d.path().join("iomark-quick.1.tmp");
    std::fs::write(&left, b"not iomark's").unwrap();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "quick",
            "--size=8m",
            "--runtime=200ms",
            "--passes=1",
            "--warmup=0",
            "--eta=never",
            "--no-report",
        ],
    );
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    // Rank 0 says it, once, naming rank 1 and its file (the safety
    // check refuses it before the suite's own check of its test files).
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("iomark")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("iomark quick: rank 1 on ")
            && lines[0].contains("'iomark-quick.1.tmp'")
            && lines[0].ends_with("no rank started"),
        "{err}"
    );
    assert!(common::stdout(&o).is_empty(), "{}", common::stdout(&o));
    // The other file untouched; rank 0 wrote nothing.
    assert_eq!(std::fs::read(&left).unwrap(), b"not iomark's");
    assert_eq!(files_in(d.path()), ["iomark-quick.1.tmp"]);
}

#[test]
fn sweep_on_two_ranks_sums_every_point() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "sweep",
            "--iodepth=1,2",
            "--size=4m",
            "--runtime=150ms",
            "--eta=never",
            "--json",
            "-",
        ],
    );
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let doc = json_of(&o);
    assert_eq!(doc["kind"], "sweep");
    assert_eq!(doc["cluster"]["ranks"], 2);
    assert_eq!(doc["sweep"]["points"].as_array().map(Vec::len), Some(2));
    check_tests_sum_their_ranks(&doc, 1);
    assert_eq!(headings(&err), 1, "{err}");
    let files = files_in(d.path());
    assert!(
        files.iter().all(|f| !f.ends_with(".tmp")),
        "test files left: {files:?}"
    );
}

#[test]
fn a_preset_on_two_ranks_sums_every_test_and_removes_every_clones_file() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // `ars` names no shared file: each clone (16 of one test on each
    // rank) writes its own, named by its global clone number.
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "suite",
            "ars",
            "--size=4m",
            "--runtime=150ms",
            "--passes=1",
            "--warmup=0",
            "--eta=never",
            "--no-report",
        ],
    );
    let out = common::stdout(&o);
    assert!(o.status.success(), "{}\n{out}", common::stderr(&o));
    assert_eq!(headings(&out), 1, "{out}");
    assert_eq!(
        out.lines().filter(|l| l.contains("over 2 ranks: ")).count(),
        4,
        "{out}"
    );
    assert_eq!(files_in(d.path()), Vec::<String>::new());
    // The same, with the results: each test the sum of its two ranks.
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "suite",
            "ars",
            "--size=4m",
            "--runtime=150ms",
            "--passes=1",
            "--warmup=0",
            "--eta=never",
            "--json",
            "-",
            "--html",
            "r.html",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let doc = json_of(&o);
    assert_eq!(doc["cluster"]["ranks"], 2);
    check_tests_sum_their_ranks(&doc, 1);
    assert_eq!(files_in(d.path()), ["r.html"]);
}

/// A run over two ranks is one run in the results history: rank 0
/// records it (a job run with `--label`, and `quick`), the other rank
/// does not.
#[test]
fn runs_over_two_ranks_are_recorded_once_by_rank_0() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let db = d.path().join("h.sqlite");
    let db_arg = format!("--history-db={}", db.display());
    let job = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "--name=t",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            "--label=job",
            &db_arg,
            "--output-format=json",
        ],
    );
    assert!(job.status.success(), "{}", common::stderr(&job));
    let q = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "quick",
            "--size=8m",
            "--runtime=100ms",
            "--passes=1",
            "--warmup=0",
            "--eta=never",
            "--no-report",
            "--label=quick",
            &db_arg,
        ],
    );
    assert!(q.status.success(), "{}", common::stderr(&q));
    let recorded = |o: &Output| {
        common::stderr(o)
            .lines()
            .filter(|l| l.contains("recorded in the results history"))
            .count()
            + common::stdout(o)
                .lines()
                .filter(|l| l.starts_with("History:"))
                .count()
    };
    assert_eq!(recorded(&job), 1, "{}", common::stderr(&job));
    assert_eq!(recorded(&q), 1, "{}", common::stdout(&q));
    let list = common::iomark()
        .args(["history", "--json", &db_arg])
        .output_bounded()
        .unwrap();
    let v: Value = serde_json::from_slice(&list.stdout).expect("history --json");
    let mut labels: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap_or(""))
        .collect();
    labels.sort();
    assert_eq!(labels, ["job", "quick"], "{v}");
}
