//! The results history: quick and labelled job runs are recorded (and
//! `--no-history` is not); two writers at once and a writer killed
//! midway leave a sound database; fio's JSON imports as one run; export
//! formats; a trend with a step finds its change point and its chart
//! renders in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;
use crate::html_check;
use crate::require_fio;

fn json_out(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

const QUICK: &[&str] = &[
    "quick",
    "--size=4m",
    "--runtime=100ms",
    "--passes=2",
    "--no-warmup",
    "--eta=never",
];

#[test]
#[allow(clippy::too_many_lines)]
fn quick_and_labelled_job_runs_are_recorded() {
    let dir = tempdir();
    let d = dir.path();
    let mut a: Vec<&str> = QUICK.to_vec();
    a.extend([
        "--label", "before", "--json", "q1.json", "--html", "q1.html",
    ]);
    let o = run_with_history(d, &a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("History:      run #1 in "),
        "{}",
        stdout(&o)
    );
    let bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("q1.json")).unwrap()).unwrap();
    assert_eq!(bundle["label"], "before");
    assert_eq!(bundle["schema_version"], 1);
    // --no-history: not recorded; no label: none in the file.
    let mut b: Vec<&str> = QUICK.to_vec();
    b.extend(["--no-history", "--no-report"]);
    let o = run_with_history(d, &b);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("History:"), "{}", stdout(&o));
    // A job run: recorded with --label only.
    let job = [
        "--name=j",
        "--ioengine=null",
        "--size=1m",
        "--output-format=json",
    ];
    let o = run_with_history(d, &job);
    assert!(o.status.success());
    assert!(json_out(&o)["iomark"].get("label").is_none());
    let mut labelled = job.to_vec();
    labelled.push("--label=after");
    let o = run_with_history(d, &labelled);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json_out(&o)["iomark"]["label"], "after");
    assert!(
        stderr(&o).contains("recorded in the results history: run #2"),
        "{}",
        stderr(&o)
    );

    let list = json_out(&run_with_history(d, &["history", "--json"]));
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{list}");
    assert_eq!(runs[0]["label"], "before");
    assert_eq!(runs[0]["kind"], "quick");
    assert_eq!(runs[0]["tests"].as_array().unwrap().len(), 8);
    assert_eq!(runs[0]["tests"][0]["passes"], 2);
    assert!(
        runs[0]["target"]["fs_type"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{list}"
    );
    assert!(runs[0]["jobfile_digest"]
        .as_str()
        .is_some_and(|s| s.len() == 64));
    assert_eq!(runs[1]["label"], "after");
    assert_eq!(runs[1]["kind"], "job");
    // Filters.
    let only = json_out(&run_with_history(
        d,
        &["history", "--json", "--label", "after"],
    ));
    assert_eq!(only["runs"].as_array().unwrap().len(), 1);
    // A test named as the tables show it ("RND4K Q32T1 read"): one test
    // in the history list, and the one series of trend.
    let named = json_out(&run_with_history(
        d,
        &["history", "--json", "--test", "RND4K Q32T1 read"],
    ));
    let tests = named["runs"][0]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{named}");
    assert_eq!(tests[0]["key"], "rnd4k-q32t1-read/read", "{named}");
    let o = run_with_history(d, &["trend", "--test", "rnd4k q32t1 READ", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let none = stdout(&run_with_history(d, &["history", "--since", "2099-01-01"]));
    assert!(none.contains("no run in the history matches"), "{none}");
    // The merged bins of the quick run give exact percentiles: the
    // export carries them, pass counts included.
    let lines = stdout(&run_with_history(
        d,
        &["history", "export", "--format", "jsonl", "--kind", "quick"],
    ));
    assert_eq!(lines.lines().count(), 8, "{lines}");
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    let bins = first["bins"].as_array().unwrap();
    assert!(!bins.is_empty(), "{first}");
    let counted: u64 = bins.iter().map(|b| b[1].as_u64().unwrap()).sum();
    let ios: u64 = bundle["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["section"] == "seq1m-q8t1-read")
        .map(|r| {
            r["result"]["jobs"][0]["read"]["total_ios"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(
        counted, ios,
        "every I/O of both passes is in the merged bins"
    );
    let csv = stdout(&run_with_history(
        d,
        &["history", "export", "--format", "csv"],
    ));
    assert!(
        csv.starts_with("run,time,label,kind,host,device,model,serial,firmware"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 9, "{csv}");
    let influx = stdout(&run_with_history(
        d,
        &["history", "export", "--format=influx", "--label=after"],
    ));
    assert!(influx.starts_with("iomark,label=after,host="), "{influx}");
    assert!(influx.trim_end().ends_with("000000000"), "{influx}");
    let o = run_with_history(d, &["history", "check"]);
    assert!(
        stdout(&o).contains("ok (2 runs, schema version 1)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_history_that_cannot_be_written_leaves_the_results_and_says_why() {
    let dir = tempdir();
    let d = dir.path();
    let mut a: Vec<&str> = QUICK.to_vec();
    a.extend(["--json", "q.json", "--history-db", "/dev/null/h.sqlite"]);
    let o = run_in(d, &a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.join("q.json").exists());
    let err = stderr(&o);
    assert!(
        err.contains("iomark quick: the run was not recorded in the results history: results history '/dev/null/h.sqlite'"),
        "{err}"
    );
}

/// A fio-format document of one job `name`, read side, with these
/// figures, at Unix time `t`.
fn doc(name: &str, iops: f64, t: i64) -> String {
    json!({
        "fio version": "fio-3.33",
        "timestamp": t,
        "global options": {"bs": "4k", "rw": "randread"},
        "jobs": [{
            "jobname": name,
            "job options": {"iodepth": "1"},
            "read": {
                "total_ios": 1000, "iops": iops, "bw_bytes": iops * 4096.0,
                "lat_ns": {"N": 1000, "mean": 1e9 / iops,
                           "percentile": {"99.000000": 2e9 / iops},
                           "bins": {"1000": 990, "5000": 10}}
            }
        }]
    })
    .to_string()
}

/// `n` result files in `dir`, names `prefix{i}.json`.
fn docs(dir: &Path, prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let p = dir.join(format!("{prefix}{i}.json"));
            std::fs::write(
                &p,
                doc(
                    &format!("{prefix}{i}"),
                    1000.0 + i as f64,
                    1_700_000_000 + i as i64,
                ),
            )
            .unwrap();
            p.display().to_string()
        })
        .collect()
}

fn import_cmd(dir: &Path, files: &[String]) -> Command {
    let mut c = iomark();
    history_in(&mut c, dir)
        .arg("history")
        .arg("import")
        .args(files)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn count_runs(db: &Path) -> i64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn two_writers_at_once_and_a_killed_writer_leave_a_sound_history() {
    let _serial = cpu_heavy();
    let dir = tempdir();
    let d = dir.path();
    let a = docs(d, "a", 60);
    let b = docs(d, "b", 60);
    // Two writers at once, each run in its own transaction.
    let ca = import_cmd(d, &a).spawn().unwrap();
    let cb = import_cmd(d, &b).spawn().unwrap();
    let (ea, eb) = (
        ca.wait_with_output().unwrap(),
        cb.wait_with_output().unwrap(),
    );
    assert!(ea.status.success(), "{}", stderr(&ea));
    assert!(eb.status.success(), "{}", stderr(&eb));
    let db = history_db(d);
    assert_eq!(count_runs(&db), 120);
    let o = run_with_history(d, &["history", "check"]);
    assert!(
        stdout(&o).contains(": ok (120 runs"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );

    // A writer killed while it writes: the runs it committed are whole,
    // the one it was writing is not there at all.
    // Enough runs that the writer is still writing when it is killed,
    // however late a loaded machine lets this test see the 125th run.
    let c = docs(d, "c", 3000);
    let mut child = import_cmd(d, &c).spawn().unwrap();
    let start = Instant::now();
    while count_runs(&db) < 125 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let after = count_runs(&db);
    assert!(after >= 125, "the writer had started: {after}");
    assert!(
        after < 3120,
        "the writer was killed before it finished: {after}"
    );
    let o = run_with_history(d, &["history", "check"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!(": ok ({after} runs")),
        "{}",
        stdout(&o)
    );
    // Importing again adds the rest, once each.
    let o = import_cmd(d, &c).output_bounded().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count_runs(&db), 3120);
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn fio_json_imports_as_one_run() {
    require_fio!();
    let dir = tempdir();
    let d = dir.path();
    let job = [
        "--name=f",
        "--rw=randread",
        "--bs=4k",
        "--size=2m",
        "--ioengine=psync",
        "--output-format=json+",
    ];
    let o = fio_output(Command::new("fio").args(job).current_dir(d));
    assert!(o.status.success());
    std::fs::write(d.join("fio.json"), &o.stdout).unwrap();
    let o = run_with_history(d, &["history", "import", "fio.json", "--label", "fio-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("#1  "), "{}", stdout(&o));
    // The same file again: kept once.
    let o = run_with_history(d, &["history", "import", "fio.json"]);
    assert!(
        stdout(&o).contains("already in the history"),
        "{}",
        stdout(&o)
    );
    let list = json_out(&run_with_history(d, &["history", "--json"]));
    let r = &list["runs"][0];
    assert_eq!(r["tool"], "fio", "{r}");
    assert!(r["version"].as_str().unwrap().starts_with("fio-3"), "{r}");
    assert_eq!(r["label"], "fio-run");
    assert_eq!(r["tests"][0]["key"], "f/read");
    let line = stdout(&run_with_history(
        d,
        &["history", "export", "--format", "jsonl"],
    ));
    let v: Value = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(v["settings"]["rw"], "randread", "{v}");
    assert_eq!(v["settings"]["ioengine"], "psync", "{v}");
    assert!(
        !v["bins"].as_array().unwrap().is_empty(),
        "json+ bins kept: {v}"
    );
    assert_eq!(v["passes"].as_array().unwrap().len(), 1);
    // Not a result: one line, nothing imported.
    std::fs::write(d.join("x.json"), "{\"a\": 1}").unwrap();
    let o = run_with_history(d, &["history", "import", "x.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn a_history_not_made_yet_lists_as_an_empty_one() {
    let dir = tempdir();
    let d = dir.path();
    let o = run_with_history(d, &["history", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_out(&o), serde_json::json!({"runs": []}));
    assert!(
        stderr(&o).contains("there is no results history at"),
        "{}",
        stderr(&o)
    );
    let o = run_with_history(d, &["history"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "no run in the history matches\n");
    // Listing made nothing.
    assert!(!history_db(d).exists());
}

#[test]
fn a_file_with_no_test_is_not_imported() {
    let dir = tempdir();
    let d = dir.path();
    // A result of jobs that did no I/O: well-formed, nothing to keep.
    std::fs::write(
        d.join("none.json"),
        r#"{"fio version": "fio-3.33", "jobs": []}"#,
    )
    .unwrap();
    let o = run_with_history(d, &["history", "import", "none.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        "iomark history import: 'none.json' holds no test result (no job with I/O to \
         record); nothing imported"
    );
    // Refused before the history is opened: none was made.
    assert!(!history_db(d).exists());
}

#[test]
fn a_trend_with_a_step_has_its_change_point_and_its_chart_renders() {
    let dir = tempdir();
    let d = dir.path();
    // Eight runs of one job, a day apart; IOPS drop by a fifth at the fifth.
    let iops = [1000.0, 1012.0, 990.0, 1005.0, 800.0, 806.0, 795.0, 802.0];
    let files: Vec<String> = iops
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p: PathBuf = d.join(format!("t{i}.json"));
            std::fs::write(&p, doc("t", *v, 1_700_000_000 + 86400 * i as i64)).unwrap();
            p.display().to_string()
        })
        .collect();
    let mut args = vec!["history", "import"];
    args.extend(files.iter().map(String::as_str));
    assert!(run_with_history(d, &args).status.success());
    let o = run_with_history(d, &["trend", "--test", "t/read", "--html", "trend.html"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("---- change: -20."), "{out}");
    assert!(out.contains("1 change point(s)"), "{out}");
    let v = json_out(&run_with_history(
        d,
        &["trend", "--test", "t/read", "--json"],
    ));
    let cps = v["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{v}");
    assert_eq!(cps[0]["before_run"], 5, "{v}");
    assert!(cps[0]["interval_pct"][1].as_f64().unwrap() < -5.0, "{v}");
    // A percentile of the merged bins.
    let v = json_out(&run_with_history(
        d,
        &["trend", "--test", "t/read", "--metric", "p99.5", "--json"],
    ));
    assert_eq!(v["series"][0]["runs"][0]["value"], 5000.0, "{v}");
    assert_eq!(html_check::check_report(&d.join("trend.html")), 1);
    // A flat series: none.
    let o = run_with_history(d, &["trend", "--test", "t/read", "--until", "2023-11-17"]);
    assert!(stdout(&o).contains("no change point"), "{}", stdout(&o));
    // A test name that names nothing, or no --test: one line.
    for bad in [vec!["trend", "--test", "zzz"], vec!["trend"]] {
        let o = run_with_history(d, &bad);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    // Without --test it names the tests it could draw.
    let o = run_with_history(d, &["trend"]);
    assert_eq!(
        stderr(&o).trim_end(),
        "iomark trend: name the test with --test; the history has 1: t/read"
    );
}

/// SHA-256 of a file's bytes, hex.
fn sha(p: &Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(std::fs::read(p).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The commands that read or write a history, each given `db`.
fn every_history_command(d: &Path, db: &Path) -> Vec<(String, std::process::Output)> {
    std::fs::write(d.join("r.json"), doc("r", 1000.0, 1_700_000_000)).unwrap();
    let db = db.display().to_string();
    let cmds: [&[&str]; 8] = [
        &["history"],
        &["history", "import", "r.json"],
        &["history", "check"],
        &["history", "export", "--format", "csv"],
        &["history", "delete", "1"],
        &["trend", "--test", "r/read"],
        &["compare", "--base", "@x", "--new", "r.json"],
        &[
            "quick",
            "--size=1m",
            "--runtime=10ms",
            "--passes=1",
            "--no-warmup",
            "--no-report",
        ],
    ];
    cmds.iter()
        .map(|args| {
            let o = run_in(d, &[*args, &["--history-db", &db][..]].concat());
            (args.join(" "), o)
        })
        .collect()
}

#[test]
fn files_that_are_not_a_history_are_refused_and_left_as_they_are() {
    let dir = tempdir();
    let d = dir.path();
    let text = d.join("notes.txt");
    std::fs::write(&text, "my notes\n").unwrap();
    let other = d.join("other.sqlite");
    {
        let c = rusqlite::Connection::open(&other).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=DELETE; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
    }
    // An iomark history of a newer schema.
    let newer = d.join("newer.sqlite");
    assert!(run_in(
        d,
        &[
            "history",
            "import",
            "--history-db",
            "newer.sqlite",
            &docs(d, "n", 1)[0]
        ]
    )
    .status
    .success());
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.execute_batch("PRAGMA user_version = 9; PRAGMA journal_mode=DELETE;")
            .unwrap();
    }
    for (file, why) in [
        (&text, "not an SQLite database"),
        (&other, "without iomark's tables"),
        (&newer, "written by a newer iomark"),
    ] {
        let before = sha(file);
        for (cmd, o) in every_history_command(d, file) {
            let err = stderr(&o);
            let quick = cmd.starts_with("quick");
            // quick measures and says the run was not recorded.
            assert_eq!(
                o.status.code(),
                Some(if quick { 0 } else { 1 }),
                "{cmd}: {err}"
            );
            let line = err.lines().find(|l| l.contains(why));
            assert!(line.is_some(), "{cmd} on {}: {err}", file.display());
            if !quick {
                assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
            }
            assert_eq!(sha(file), before, "{cmd} left {} as it was", file.display());
            for s in ["-wal", "-shm", "-journal"] {
                let mut b = file.as_os_str().to_owned();
                b.push(s);
                assert!(!Path::new(&b).exists(), "{cmd} made {b:?}");
            }
        }
    }
}

/// A hard link or a symbolic link planted where SQLite keeps its
/// `-wal`, `-shm` or `-journal`: every command refuses in one line naming
/// it, and the file it leads to is unchanged.
#[cfg(unix)]
#[test]
fn links_planted_beside_the_history_are_refused() {
    let dir = tempdir();
    let d = dir.path();
    let db = history_db(d);
    let files = docs(d, "a", 1);
    assert!(run_with_history(d, &["history", "import", &files[0]])
        .status
        .success());
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "someone else's file\n").unwrap();
    let before = sha(&victim);
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut at = db.as_os_str().to_owned();
        at.push(suffix);
        let at = PathBuf::from(at);
        for (hard, why) in [
            (true, "has other hard links"),
            (false, "is a symbolic link"),
        ] {
            if hard {
                std::fs::hard_link(&victim, &at).unwrap();
            } else {
                std::os::unix::fs::symlink(&victim, &at).unwrap();
            }
            for (cmd, o) in every_history_command(d, &db) {
                let err = stderr(&o);
                let want = format!("'{}' {why}", at.display());
                assert!(err.contains(&want), "{cmd} with {suffix}: {err}");
                assert_eq!(sha(&victim), before, "{cmd} with {suffix}");
            }
            std::fs::remove_file(&at).unwrap();
        }
    }
}

/// A history on read-only media (here a directory its user cannot write,
/// where SQLite can make no `-shm`): listed, trended and checked.
#[cfg(target_os = "linux")]
#[test]
fn a_history_on_read_only_media_can_be_read() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        missing("needs root to run iomark as another user (setpriv)");
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let files = docs(d, "r", 2);
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("h.sqlite");
    let dbs = db.display().to_string();
    let o = run_in(
        d,
        &[
            "history",
            "import",
            &files[0],
            &files[1],
            "--history-db",
            &dbs,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(d, 0o755);
    mode(&db, 0o644);
    mode(&ro, 0o555);
    let before = sha(&db);
    let as_nobody = |args: &[&str]| {
        output_of(
            Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_iomark"))
                .args(args)
                .args(["--history-db", &dbs])
                .current_dir(&ro),
        )
    };
    let o = as_nobody(&["history"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 run(s)"), "{}", stdout(&o));
    let o = as_nobody(&["trend", "--test", "r0/read"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = as_nobody(&["history", "check"]);
    assert!(
        stdout(&o).contains(": ok (2 runs"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    // Writing there fails in one line, and changes nothing.
    let o = as_nobody(&["history", "import", &files[0]]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    mode(&ro, 0o755);
    assert_eq!(sha(&db), before);
    assert_eq!(
        std::fs::read_dir(&ro).unwrap().count(),
        1,
        "no file made beside it"
    );
}

/// Job names and labels read back from an imported file, holding ESC,
/// NUL, BEL and line breaks: every command shows them escaped, one line
/// a record.
#[test]
fn names_read_back_are_shown_escaped() {
    let dir = tempdir();
    let d = dir.path();
    let mut v: Value =
        serde_json::from_str(&doc("j\u{1b}[31mred\0\nforged line", 1000.0, 1_700_000_000)).unwrap();
    v["iomark"] = json!({"label": "l\u{1b}]0;title\u{7}\nforged"});
    std::fs::write(d.join("bad.json"), v.to_string()).unwrap();
    let mut w: Value =
        serde_json::from_str(&doc("j\u{1b}[31mred\0\nforged line", 1100.0, 1_700_086_400)).unwrap();
    w["jobs"][0]["job options"]["iodepth"] = json!("4\u{1b}[2J\n+ forged");
    std::fs::write(d.join("other.json"), w.to_string()).unwrap();
    let o = run_with_history(d, &["history", "import", "bad.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let label = "@l\u{1b}]0;title\u{7}\nforged";
    let cmds: Vec<(Vec<&str>, usize)> = vec![
        (vec!["history"], 3),
        (vec!["history", "--test", "forged"], 4),
        (vec!["trend", "--test", "red"], 6),
        (vec!["compare", "--base", label, "--new", "bad.json"], 0),
        (
            vec!["compare", "--base", "bad.json", "--new", "other.json"],
            0,
        ),
        (vec!["history", "export", "--format", "jsonl"], 1),
        (vec!["trend"], 0),
    ];
    for (args, lines) in cmds {
        let o = run_with_history(d, &args);
        for (what, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            let raw: Vec<u8> = bytes
                .iter()
                .copied()
                .filter(|b| (*b < 0x20 && *b != b'\n') || *b == 0x7f)
                .collect();
            assert!(
                raw.is_empty(),
                "{args:?} {what}: raw control bytes {raw:?}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
        if lines > 0 {
            assert_eq!(
                stdout(&o).lines().count(),
                lines,
                "{args:?}:\n{}",
                stdout(&o)
            );
        }
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(
            !all.lines()
                .any(|l| l.starts_with("forged") || l.starts_with("+ forged")),
            "{args:?}:\n{all}"
        );
    }
    let o = run_with_history(d, &["history", "--test", "forged"]);
    assert!(
        stdout(&o).contains("j\\x1b[31mred\\0\\nforged line"),
        "{}",
        stdout(&o)
    );
    let o = run_with_history(d, &["compare", "--base", "bad.json", "--new", "other.json"]);
    assert!(
        stdout(&o).contains("iodepth=4\\x1b[2J\\n+ forged"),
        "{}",
        stdout(&o)
    );
}

/// Windows: with HOME, XDG_DATA_HOME and IOMARK_HISTORY_DB unset, quick
/// records in the local application-data folder and history lists it
/// (the run is deleted again, leaving the user's history as it was).
#[cfg(windows)]
#[test]
fn without_home_the_history_is_in_the_local_application_data_folder() {
    let dir = tempdir();
    let d = dir.path();
    let label = format!("appdata-{}", std::process::id());
    let bare = |args: &[&str]| {
        output_of(
            Command::new(env!("CARGO_BIN_EXE_iomark"))
                .env_remove("IOMARK_HISTORY_DB")
                .env_remove("HOME")
                .env_remove("XDG_DATA_HOME")
                .args(args)
                .current_dir(d),
        )
    };
    let mut a: Vec<&str> = QUICK.to_vec();
    a.extend(["--label", label.as_str(), "--no-report"]);
    let o = bare(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("History:      run #"), "{out}");
    assert!(
        out.contains("AppData\\Local\\iomark\\history.sqlite"),
        "{out}"
    );
    let o = bare(&["history", "--json", "--label", label.as_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_out(&o);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v}");
    let id = runs[0]["id"].to_string();
    assert!(bare(&["history", "delete", &id]).status.success());
}
