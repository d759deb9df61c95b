//! One run pipeline: a preset runs the I/O of the job file it prints, and
//! a suite pass does what the command line does with the same job file
//! (I/O scheduler switched for the run and restored, the same notes).

use std::collections::BTreeSet;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::sync::{Arc, Mutex};
#[cfg(target_os = "linux")]
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// The jobs of a document by name (each name once).
fn jobs_by_name(doc: &Value) -> Vec<(String, Value)> {
    let jobs = doc["jobs"].as_array().expect("jobs");
    let v: Vec<(String, Value)> = jobs
        .iter()
        .map(|j| (j["jobname"].as_str().unwrap().to_string(), j.clone()))
        .collect();
    let names: BTreeSet<&String> = v.iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), v.len(), "one entry per job: {v:?}");
    v
}

/// (kind, job, message) of the warnings a result carries, but those
/// that depend on what else ran in the same process (a memory
/// filesystem is named once per run, overcommit per batch).
fn warnings_of(doc: &Value, job: &str) -> BTreeSet<(String, String)> {
    doc["iomark"]["warnings"]
        .as_array()
        .expect("iomark.warnings")
        .iter()
        .filter(|w| w["job"] == job)
        .filter(|w| w["kind"] != "memory-filesystem" && w["kind"] != "cpu-overcommit")
        .map(|w| {
            let kind = w["kind"].as_str().unwrap().to_string();
            // Free memory in a page-cache warning moves between runs.
            let text = if kind == "page-cache" {
                String::new()
            } else {
                w["message"].as_str().unwrap().to_string()
            };
            (kind, text)
        })
        .collect()
}

/// `4k`, `1m`, `512`: bytes.
fn size_of(s: &str) -> u64 {
    let (n, unit) = match s.strip_suffix('k') {
        Some(n) => (n, 1024),
        None => match s.strip_suffix('m') {
            Some(n) => (n, 1 << 20),
            None => (s, 1),
        },
    };
    n.parse::<u64>().unwrap_or_else(|_| panic!("bs '{s}'")) * unit
}

/// Compares one job as the preset ran it (`suite`) and as the command
/// line ran its printed job file (`cli`): options, directions that moved
/// data, whole blocks of the job's size, the read share of a mix.
fn same_io(preset: &str, name: &str, suite: &Value, cli: &Value) {
    let at = format!("{preset}/{name}");
    assert_eq!(suite["job options"], cli["job options"], "{at}: options");
    assert_eq!(suite["error"], 0, "{at}: {suite}");
    assert_eq!(cli["error"], 0, "{at}: {cli}");
    let opts = &cli["job options"];
    let bs: Option<u64> = opts["bs"].as_str().map(size_of);
    let mut ios = [[0u64; 3]; 2];
    for (side, doc) in [suite, cli].iter().enumerate() {
        for (d, dir) in ["read", "write", "trim"].iter().enumerate() {
            let n = doc[dir]["total_ios"].as_u64().unwrap();
            let bytes = doc[dir]["io_bytes"].as_u64().unwrap();
            ios[side][d] = n;
            if let Some(bs) = bs {
                assert_eq!(bytes, n * bs, "{at} {dir}: whole {bs}-byte blocks");
            }
        }
    }
    for (d, dir) in ["read", "write", "trim"].iter().enumerate() {
        assert_eq!(
            ios[0][d] > 0,
            ios[1][d] > 0,
            "{at} {dir}: the same directions move data ({:?} / {:?})",
            ios[0],
            ios[1]
        );
    }
    assert!(ios[0].iter().sum::<u64>() > 0, "{at}: no I/O");
    if let Some(mix) = opts["rwmixread"].as_str() {
        let want = mix.parse::<f64>().unwrap() / 100.0;
        for (side, n) in ios.iter().enumerate() {
            let total = (n[0] + n[1]) as f64;
            if total < 400.0 {
                continue;
            }
            let share = n[0] as f64 / total;
            assert!(
                (share - want).abs() < 0.1,
                "{at}: read share {share:.3} for rwmixread={mix} ({})",
                ["preset", "job file"][side]
            );
        }
    }
}

/// Runs `preset` (one pass, no warm-up) and its printed job file, and
/// compares what each job did.
fn preset_runs_its_job_file(dir: &Path, preset: &str) {
    let sizes = ["--size=4m", "--runtime=300ms"];
    let o = run_in(
        dir,
        &["suite", preset, "--print-jobfile", sizes[0], sizes[1]],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    let file = dir.join(format!("{preset}.fio"));
    std::fs::write(&file, &printed).unwrap();
    let o = run_in(
        dir,
        &[
            "suite",
            preset,
            sizes[0],
            sizes[1],
            "--no-warmup",
            "--passes=1",
            "--json",
            "bundle.json",
            "--eta=never",
        ],
    );
    assert!(o.status.success(), "{preset}: {}", stderr(&o));
    let bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bundle.json")).unwrap()).unwrap();
    assert_eq!(bundle["jobfile"].as_str(), Some(printed.as_str()));
    // The command line, after the preset removed its test file.
    let cli = run_json(dir, &[file.to_str().unwrap(), "--eta=never"]);
    let cli_jobs = jobs_by_name(&cli);
    let runs = bundle["runs"].as_array().unwrap();
    assert_eq!(runs.len(), cli_jobs.len(), "{preset}: one pass per section");
    for (name, cli_job) in &cli_jobs {
        let run = runs
            .iter()
            .find(|r| r["section"] == name.as_str())
            .unwrap_or_else(|| panic!("{preset}: no pass of {name}"));
        let doc = &run["result"];
        let suite_jobs = jobs_by_name(doc);
        assert_eq!(suite_jobs.len(), 1, "{preset}/{name}: {doc}");
        same_io(preset, name, &suite_jobs[0].1, cli_job);
        assert_eq!(doc["global options"], cli["global options"], "{preset}");
        assert_eq!(
            warnings_of(doc, name),
            warnings_of(&cli, name),
            "{preset}/{name}: warnings"
        );
        assert_eq!(
            doc["iomark"]["environment"]["targets"][0]["fs_type"],
            cli["iomark"]["environment"]["targets"][0]["fs_type"]
        );
    }
}

#[test]
fn a_preset_and_its_printed_job_file_do_the_same_io() {
    let handles: Vec<_> = ["patterns", "server-mix"]
        .into_iter()
        .map(|preset| {
            std::thread::spawn(move || {
                let dir = tempdir();
                preset_runs_its_job_file(dir.path(), preset);
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a preset differs from its job file");
    }
}

/// The scheduler in use (the bracketed word).
#[cfg(target_os = "linux")]
fn current(s: &str) -> Option<String> {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_string)
}

/// A suite pass (the code `iomark suite` runs, in process) switches the
/// I/O scheduler the job file asks for during the run and restores it,
/// and its result carries the notes the command line prints for the same
/// job file.
// A loop device's I/O scheduler.
#[cfg(target_os = "linux")]
#[test]
#[allow(clippy::too_many_lines)]
fn a_suite_pass_switches_the_scheduler_and_notes_like_the_command_line() {
    use iomark::run::monitor::StatusHook;
    use iomark::run::RunOptions;
    use iomark::suite::runner::{run_suite, SuiteRun, SuiteTest};

    let dir = tempdir();
    let Some(dev) = crate::loopdev::LoopDev::new(dir.path(), 8 << 20) else {
        return;
    };
    let name = dev.path.file_name().unwrap().to_string_lossy().into_owned();
    let sched = format!("/sys/block/{name}/queue/scheduler");
    let offered = std::fs::read_to_string(&sched).unwrap_or_default();
    let before = current(&offered);
    let Some(other) = offered
        .split_whitespace()
        .find(|w| !w.starts_with('['))
        .map(str::to_string)
    else {
        missing(&format!("{name} offers one scheduler only ({offered})"));
        return;
    };
    // `threads` is a note: accepted, has no effect.
    let jobfile = format!(
        "[s]\nfilename={}\nrw=read\nbs=4k\nsize=1m\nruntime=600ms\ntime_based\n\
         ioscheduler={other}\nthreads=2\n",
        dev.as_str()
    );
    // What the disk uses while the pass runs, seen by interim reports.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let during = seen.clone();
    let path = sched.clone();
    let hook = StatusHook {
        every: Duration::from_millis(100),
        report: Arc::new(move |_interim| {
            let s = std::fs::read_to_string(&path).unwrap_or_default();
            during.lock().unwrap().push(current(&s));
        }),
    };
    let tests = [SuiteTest {
        section: "s".into(),
        label: "s".into(),
    }];
    let run = SuiteRun {
        jobfile: &jobfile,
        jobfile_name: "s.fio",
        tests: &tests,
        passes: 1,
        warmup_us: 0,
        run_opts: RunOptions {
            quiet: true,
            status: Some(hook),
            ..RunOptions::default()
        },
        announce: false,
    };
    let out = run_suite(&run, &mut |_| {}).expect("the suite runs");
    assert!(out.error.is_none() && !out.interrupted, "{:?}", out.error);
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no interim report during the pass");
    assert!(
        seen.iter().all(|s| s.as_deref() == Some(other.as_str())),
        "switched to {other} for the pass: {seen:?}"
    );
    let after = std::fs::read_to_string(&sched).unwrap();
    assert_eq!(current(&after), before, "restored: {after}");
    let doc = &out.tests[0].runs[0];
    assert_eq!(
        doc["iomark"]["environment"]["targets"][0]["scheduler"],
        other.as_str()
    );

    // The command line with the same job file.
    std::fs::write(dir.path().join("s.fio"), &jobfile).unwrap();
    let o = run_in(
        dir.path(),
        &["s.fio", "--output-format=json", "--eta=never"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    let notes = |d: &Value| -> Vec<String> {
        d["iomark"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["kind"] == "note")
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect()
    };
    let cli_notes = notes(&cli);
    assert!(
        cli_notes
            .iter()
            .any(|n| n.contains("'threads' has no effect")),
        "{cli_notes:?}"
    );
    for n in &cli_notes {
        assert!(
            stderr(&o).contains(&format!("iomark: warning: {n}\n")),
            "printed once before the run: {n}\n{}",
            stderr(&o)
        );
    }
    assert_eq!(
        notes(doc),
        cli_notes,
        "the suite pass notes as the command line"
    );
}
