//! What goes wrong in a run over many ranks, on one host
//! (`mpirun --oversubscribe`): a rank stopped mid-phase (rank 0 or
//! another), Ctrl-C to mpirun, SIGTERM to one rank, ranks with different
//! job files, a bad command line, a phase of a few milliseconds, layout.
//! Each test bounds what it waits for: nothing may hang. Uses the MPI
//! build of `mpi.rs`.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, tempdir};
use crate::mpi::{json_of, mpi_iomark, mpirun, rank_pid};

/// `mpirun -np N` of `cmd` in `dir`, running in the background (ended
/// after two minutes whatever happens).
fn start(dir: &Path, np: u32, cmd: &[&str]) -> Child {
    Command::new("timeout")
        .current_dir(dir)
        .args([
            "-k",
            "5",
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
        ])
        .args(["-np", &np.to_string()])
        .args(cmd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts")
}

/// The pids of ranks 0..n of `bin` below `child`, once all have started.
fn rank_pids(bin: &Path, child: &Child, n: u32) -> Vec<i32> {
    let t0 = Instant::now();
    loop {
        let pids: Vec<i32> = (0..n)
            .filter_map(|r| rank_pid(bin, r, child.id() as i32))
            .collect();
        if pids.len() == n as usize {
            return pids;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "ranks did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` is gone (or a zombie no one reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a pid this test found.
    unsafe { libc::kill(pid, sig) };
}

/// How soon after a rank is stopped (or SIGTERMed) every rank must be
/// gone: the 3 s timeout of [`LONG`] and the time Open MPI takes to end
/// the ranks. On a 2-core machine with two busy loops beside the tests,
/// 20 runs of each test took at most 3.75 s (rank 0 stopped), 4.70 s
/// (rank 2 stopped) and 4.16 s (SIGTERM): 7 s leaves 2.3 s over the worst
/// and still tells a stop apart from the 18 s a rank left running takes.
pub(crate) const STOP_BOUND: Duration = Duration::from_secs(7);

/// A 20 s time-based phase on every rank, with `--mpi-timeout=3`.
pub(crate) const LONG: [&str; 9] = [
    "--mpi-timeout=3",
    "--name=t",
    "--ioengine=null",
    "--rw=randread",
    "--bs=4k",
    "--size=1m",
    "--time_based",
    "--runtime=20",
    "--output-format=json",
];

/// Stops rank `victim` of 4 two seconds into the phase; returns mpirun's
/// output, how long after the stop every rank was gone, and the report.
fn stop_mid_phase(victim: u32) -> (Output, Duration, Option<Value>) {
    let bin = mpi_iomark().expect("built");
    let d = tempdir();
    let out = d.path().join("out.json");
    let mut cmd = vec![bin.to_str().unwrap()];
    cmd.extend(LONG);
    let output = format!("--output={}", out.display());
    cmd.push(&output);
    let child = start(d.path(), 4, &cmd);
    let pids = rank_pids(&bin, &child, 4);
    std::thread::sleep(Duration::from_secs(2));
    signal(pids[victim as usize], libc::SIGSTOP);
    let stopped = Instant::now();
    let o = child.wait_with_output().unwrap();
    // Every rank gone, the stopped one included.
    while !pids.iter().all(|&p| gone(p)) && stopped.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = stopped.elapsed();
    eprintln!("rank {victim} stopped: every rank gone {took:?} later");
    for &p in &pids {
        signal(p, libc::SIGKILL);
    }
    let report = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    (o, took, report)
}

#[test]
fn a_stopped_rank_0_mid_phase_is_named_and_every_rank_is_gone_within_the_timeout() {
    let _serial = common::timing_alone();
    if mpi_iomark().is_none() {
        return;
    }
    let (o, took, _) = stop_mid_phase(0);
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert_ne!(o.status.code(), Some(124), "mpirun had to be killed: {err}");
    assert!(
        err.contains("rank 0 (host ") && err.contains("sent nothing for 3 s during phase 1"),
        "{err}"
    );
    assert!(took < STOP_BOUND, "took {took:?}: {err}");
}

#[test]
fn a_stopped_rank_mid_phase_is_named_and_rank_0_reports_the_others_in_time() {
    let _serial = common::timing_alone();
    if mpi_iomark().is_none() {
        return;
    }
    let (o, took, report) = stop_mid_phase(2);
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert_ne!(o.status.code(), Some(124), "mpirun had to be killed: {err}");
    assert!(
        err.contains("iomark: rank 2 (host ")
            && err.contains("sent nothing for 3 s during phase 1"),
        "{err}"
    );
    assert!(took < STOP_BOUND, "took {took:?}: {err}");
    let v = report.expect("rank 0 wrote its report");
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["ranks_reported"], 3, "{c}");
    assert_eq!(c["missing"][0]["ranks"], serde_json::json!([2]), "{c}");
    assert_eq!(v["interrupted"], true);
    // What the three others did is there, merged.
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(ios > 0, "{v}");
}

/// The pid of the `mpirun` below `child` (`timeout`).
fn mpirun_pid(child: &Child) -> i32 {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if head.ends_with("(mpirun") && ppid == Some(child.id() as i32) {
            return pid;
        }
    }
    panic!("no mpirun below {}", child.id())
}

#[test]
fn ctrl_c_to_mpirun_mid_phase_leaves_a_report_of_the_ranks_heard_from() {
    let _serial = common::timing_alone();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let out = d.path().join("out.json");
    let output = format!("--output={}", out.display());
    let mut cmd = vec![bin.to_str().unwrap()];
    cmd.extend(LONG);
    cmd.push(&output);
    let child = start(d.path(), 4, &cmd);
    let pids = rank_pids(&bin, &child, 4);
    std::thread::sleep(Duration::from_secs(2));
    // Ctrl-C: mpirun resumes every rank at once, passes SIGTERM on a
    // second later and kills them a second after that. Rank 2, stopped
    // meanwhile, cannot answer.
    signal(mpirun_pid(&child), libc::SIGINT);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    signal(pids[2], libc::SIGSTOP);
    let o = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    eprintln!("Ctrl-C: mpirun ended {took:?} later");
    for &p in &pids {
        signal(p, libc::SIGKILL);
    }
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}\n{err}"));
    assert_eq!(v["interrupted"], true);
    let c = &v["iomark"]["cluster"];
    assert!(
        c["stopped"]
            .as_str()
            .unwrap_or("")
            .contains("received SIGTERM"),
        "{c}"
    );
    // The three that answered in time are reported, the stopped one
    // marked missing.
    assert_eq!(c["ranks_reported"], 3, "{c}");
    assert_eq!(c["missing"][0]["ranks"], serde_json::json!([2]), "{c}");
    assert_eq!(c["missing"][0]["reason"], "sent no results in time", "{c}");
    let hosts = v["client_stats"].as_array().unwrap();
    assert!(hosts
        .iter()
        .any(|h| h["read"]["total_ios"].as_u64() > Some(0)));
}

#[test]
fn sigterm_to_one_rank_stops_every_rank_and_rank_0_reports_them_all() {
    let _serial = common::timing_alone();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let out = d.path().join("out.json");
    let output = format!("--output={}", out.display());
    let mut cmd = vec![bin.to_str().unwrap()];
    cmd.extend(LONG);
    cmd.push(&output);
    let child = start(d.path(), 4, &cmd);
    let pids = rank_pids(&bin, &child, 4);
    std::thread::sleep(Duration::from_secs(2));
    signal(pids[1], libc::SIGTERM);
    let t0 = Instant::now();
    let o = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    eprintln!("SIGTERM to rank 1: mpirun ended {took:?} later");
    assert!(took < STOP_BOUND, "{took:?}");
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("rank 1 (host "), "{err}");
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("a report");
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["ranks_reported"], 4, "{c}");
    assert_eq!(c["missing"], serde_json::json!([]));
    assert!(c["stopped"].as_str().unwrap().ends_with("received SIGTERM"));
    assert_eq!(c["phases"][0]["interrupted"], true, "{c}");
}

#[test]
fn ranks_with_different_job_files_are_refused_in_one_line_and_nothing_is_written() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let job = |numjobs: u32| {
        format!("[a]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\nnumjobs={numjobs}\n")
    };
    for (r, n) in [(0, 1), (1, 3), (2, 1)] {
        std::fs::write(d.path().join(format!("j{r}.fio")), job(n)).unwrap();
    }
    let run = format!(
        "exec {} j$OMPI_COMM_WORLD_RANK.fio --output=out.json",
        bin.display()
    );
    let o = mpirun(Path::new("sh"), d.path(), 3, &[], &["-c", &run]);
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("iomark")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(
        ours[0].contains("rank 1 (host ")
            && ours[0].contains("has job 'a': numjobs=3")
            && ours[0].contains("ranks 0, 2 (host ")
            && ours[0].ends_with("no rank started"),
        "{err}"
    );
    // Nothing written: no data file, no report.
    let mut files: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["j0.fio", "j1.fio", "j2.fio"]);
}

#[test]
fn a_bad_command_line_is_said_once() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(&bin, d.path(), 3, &[], &["--name=x", "--bogus=1"]);
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("iomark:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].contains("bogus"), "{err}");
}

#[test]
fn a_phase_of_a_few_milliseconds_counts_every_io_from_one_start() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(
        &bin,
        d.path(),
        4,
        &[],
        &[
            "--name=s",
            "--ioengine=null",
            "--rw=read",
            "--bs=4k",
            "--size=4m",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    let p = &v["iomark"]["cluster"]["phases"][0];
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(ios, 4 * 1024);
    // Every I/O of every rank, the first ones too, in a time that is not 0.
    let last = &p["until_last_done"];
    assert_eq!(last["read"]["total_ios"].as_u64(), Some(ios), "{p}");
    assert!(last["runtime_ns"].as_u64() > Some(0), "{p}");
    assert!(last["read"]["bw_bytes"].as_u64() > Some(0), "{p}");
    let all = p["all_running"]["read"]["total_ios"].as_u64().unwrap();
    assert!(all <= ios, "{p}");
    assert!(p["start_skew_ns"].is_u64(), "{p}");
    assert!(
        p["first_done_ns"].as_u64() <= p["last_done_ns"].as_u64(),
        "{p}"
    );
}

#[test]
fn ranks_lay_out_their_own_files_at_once() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // Rank 0 lays out 32 MiB, rank 1 64 KiB: laid out in turn, rank 1
    // would start once rank 0 is done; at once, it starts meanwhile.
    std::fs::write(
        d.path().join("l.fio"),
        "[l]\nioengine=psync\nrw=read\nbs=64k\nsize=${SZ}\n",
    )
    .unwrap();
    let run = format!(
        "SZ=64k; [ \"$OMPI_COMM_WORLD_RANK\" = 0 ] && SZ=32m; export SZ; exec {} l.fio --output-format=json",
        bin.display()
    );
    let o = mpirun(Path::new("sh"), d.path(), 2, &[], &["-c", &run]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let meta = |f: &str| std::fs::metadata(d.path().join(f)).unwrap();
    let big_done = meta("l.0.0").modified().unwrap();
    let small_begun = meta("l.1.0").created().expect("birth times");
    assert!(
        small_begun < big_done,
        "rank 1 waited for rank 0's layout: {small_begun:?} >= {big_done:?}"
    );
}
