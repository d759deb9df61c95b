//! `iomark suite`: presets listed, printed as fio job files that run under
//! fio unchanged, and run by iomark through the same job file.

use std::path::Path;

use serde_json::Value;

use crate::common::*;
use crate::front_quick::report_paths;
use crate::html_check;
use crate::require_fio;

const PRESETS: [&str; 5] = [
    "crystaldiskmark",
    "crystaldiskmark-nvme",
    "ars",
    "patterns",
    "server-mix",
];

#[test]
fn suite_list_names_every_preset_and_its_tests() {
    let dir = tempdir();
    let o = run_in(dir.path(), &["suite", "--list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for p in PRESETS {
        assert!(out.lines().any(|l| l == p), "{p} missing:\n{out}");
    }
    assert!(
        out.contains("ars-4k-randwrite-fsync") && out.contains("fsync=1"),
        "{out}"
    );
    let bad = run_in(dir.path(), &["suite", "no-such-preset"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("unknown preset 'no-such-preset'"));
}

fn print_jobfile(dir: &Path, preset: &str, size: &str, runtime: &str) -> String {
    let o = run_in(dir, &["suite", preset, "--print-jobfile", size, runtime]);
    assert!(o.status.success(), "{preset}: {}", stderr(&o));
    stdout(&o)
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn every_preset_job_file_runs_unchanged_under_fio() {
    require_fio!();
    let handles: Vec<_> = PRESETS
        .iter()
        .map(|preset| {
            std::thread::spawn(move || {
                let dir = tempdir();
                let text = print_jobfile(dir.path(), preset, "--size=4m", "--runtime=500ms");
                assert!(
                    text.contains("size=4m") && !text.contains("size=4g"),
                    "{text}"
                );
                let file = dir.path().join(format!("{preset}.fio"));
                std::fs::write(&file, &text).unwrap();
                let v = fio_json(dir.path(), &[file.to_str().unwrap()]);
                let jobs = v["jobs"].as_array().unwrap();
                let sections = text.matches("\n[").count() - 1;
                assert_eq!(jobs.len(), sections, "{preset}: one job per section");
                for j in jobs {
                    assert_eq!(j["error"], 0, "{preset}: {j}");
                    let ios: u64 = ["read", "write"]
                        .iter()
                        .map(|d| j[d]["total_ios"].as_u64().unwrap_or(0))
                        .sum();
                    assert!(ios > 0, "{preset}: job {} did no I/O", j["jobname"]);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a preset failed under fio");
    }
}

#[test]
fn a_preset_runs_through_its_job_file() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "suite",
            "server-mix",
            "--size=8m",
            "--runtime=300ms",
            "--no-warmup",
            "--json",
            "mix.json",
            "--eta=never",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    for row in [
        "database OLTP read",
        "database OLTP write",
        "database log write",
        "web server read",
        "file server write",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(row)),
            "{row} missing:\n{out}"
        );
    }
    let (json, html) = report_paths(dir.path(), &out);
    assert_eq!(json, dir.path().join("mix.json"));
    assert_eq!(html, dir.path().join("mix.html"));
    assert!(!dir.path().join("iomark-servermix.tmp").exists());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["kind"], "suite");
    assert_eq!(v["settings"]["preset"], "server-mix");
    // What ran is the printed job file.
    let printed = print_jobfile(dir.path(), "server-mix", "--size=8m", "--runtime=300ms");
    assert_eq!(v["jobfile"].as_str().unwrap(), printed);
    let oltp = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["section"] == "database-oltp")
        .unwrap();
    let job = &oltp["result"]["jobs"][0];
    assert_eq!(job["job options"]["rwmixread"], "70");
    assert_eq!(job["job options"]["numjobs"], "4");
    // Every option that defines a test is in its parameters (JSON and the
    // HTML summary), so OLTP 70/30 reads differently from a random read;
    // what only names, places or reports a job is not.
    let test = |name: &str| {
        v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no test {name}"))
            .clone()
    };
    let p = &test("database OLTP")["params"];
    assert_eq!(
        (&p["rw"], &p["rwmixread"]),
        (&"randrw".into(), &"70".into())
    );
    assert!(
        p.get("filename").is_none() && p.get("lat_percentiles").is_none(),
        "{p}"
    );
    assert_eq!(test("database log")["params"]["fdatasync"], "1");
    assert_eq!(
        test("web server")["params"]["bssplit"],
        "4k/20:16k/30:64k/30:256k/20"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for want in [
        "rw=randrw rwmixread=70 bs=8k iodepth=16 numjobs=4 size=8m runtime=300ms",
        "rw=write bs=8k iodepth=1 numjobs=1 size=8m runtime=300ms ioengine=",
        "rwmixread=95 bssplit=4k/20:16k/30:64k/30:256k/20 iodepth=4",
    ] {
        assert!(page.contains(want), "{want} not in the summary");
    }
    assert!(page.contains(" fdatasync=1<"), "fdatasync in the summary");
    html_check::check_report(&html);
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn quick_and_sweep_job_files_run_under_fio() {
    require_fio!();
    let dir = tempdir();
    for (name, args) in [
        (
            "quick",
            vec!["quick", "--print-jobfile", "--size=4m", "--runtime=300ms"],
        ),
        (
            "sweep",
            vec![
                "sweep",
                "--print-jobfile",
                "--iodepth=1,4",
                "--bs=4k,64k",
                "--size=4m",
                "--runtime=300ms",
            ],
        ),
    ] {
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let file = dir.path().join(format!("{name}.fio"));
        std::fs::write(&file, stdout(&o)).unwrap();
        let v = fio_json(dir.path(), &[file.to_str().unwrap()]);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), if name == "quick" { 8 } else { 4 }, "{name}");
        assert!(jobs.iter().all(|j| j["error"] == 0), "{name}: {v}");
    }
}

/// Runs iomark in `dir` on CPU 0 alone (sched_setaffinity in the child).
// sched_setaffinity in the child.
#[cfg(target_os = "linux")]
fn run_on_one_cpu(dir: &Path, args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = iomark();
    c.args(args).current_dir(dir);
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU 0 lies inside the set.
    unsafe { libc::CPU_SET(0, &mut set) };
    // SAFETY: the closure only calls sched_setaffinity, which is
    // async-signal-safe, on a set built before the fork.
    unsafe {
        c.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output_bounded().expect("run iomark")
}

// One allowed CPU (sched_setaffinity) makes the overcommit.
#[cfg(target_os = "linux")]
#[test]
fn warnings_a_suite_finds_while_running_are_printed_on_stderr() {
    // 16 CPU-bound clones (ars's 64K test, buffered into the page cache)
    // on one allowed CPU: the run notes the overcommit, which a job run
    // prints on stderr and a suite printed only into its reports.
    let dir = tempdir();
    let o = run_on_one_cpu(
        dir.path(),
        &[
            "suite",
            "ars",
            "--size=1m",
            "--runtime=200ms",
            "--no-warmup",
            "--json",
            "ars.json",
            "--eta=never",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("ars.json")).unwrap())
            .unwrap();
    let w = v["warnings"].as_array().unwrap();
    let over = w
        .iter()
        .find(|w| w["kind"] == "cpu-overcommit")
        .unwrap_or_else(|| panic!("no overcommit in the JSON: {w:?}"));
    let msg = over["message"].as_str().unwrap();
    assert!(msg.contains("16 CPU-bound clones"), "{msg}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(msg)).collect();
    assert_eq!(lines, [format!("iomark: note: {msg}")], "stderr:\n{err}");
    // The warnings known before the run are still said once each.
    let cache = err.lines().filter(|l| l.contains("page cache")).count();
    assert_eq!(cache, 4, "{err}");
    assert!(!stdout(&o).contains(msg), "the table stays clean");
}
