//! Job placement options take effect on the worker threads: CPU affinity
//! (`cpus_allowed`, `cpus_allowed_policy=split`), `nice`, and the I/O
//! priority (`prioclass`, `prio`), read back from /proc and ioprio_get
//! while the job runs.

use std::time::{Duration, Instant};

use crate::common::*;

/// (thread name, allowed CPUs, nice, ioprio) of each thread of `pid`.
fn threads(pid: u32) -> Vec<(String, String, i64, i64)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in rd.flatten() {
        let tid: i32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
        let dir = e.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        // Field 19 of stat is the nice value (after the parenthesised name).
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let nice = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(16))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        // SAFETY: ioprio_get(IOPRIO_WHO_PROCESS, tid) reads a priority.
        let prio = unsafe { libc::syscall(libc::SYS_ioprio_get, 1, tid) };
        out.push((comm.trim().to_string(), cpus, nice, prio));
    }
    out
}

#[test]
fn cpu_split_nice_and_io_priority_apply_to_each_clone() {
    let ncpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cpus = if ncpus >= 2 { "0-1" } else { "0" };
    let dir = tempdir();
    let mut child = iomark()
        .args([
            "--name=placed",
            "--ioengine=null",
            "--size=1g",
            "--rw=read",
            "--time_based",
            "--runtime=20",
            "--numjobs=2",
            &format!("--cpus_allowed={cpus}"),
            "--cpus_allowed_policy=split",
            "--nice=5",
            "--prioclass=2",
            "--prio=6",
            "--output-format=json",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start iomark");
    // Each clone sets its CPUs, nice and I/O priority one after the
    // other as it starts: wait until both show all three (a loaded
    // machine was seen between a clone's nice and its I/O priority).
    let prio = (2 << 13) | 6;
    let t0 = Instant::now();
    let mut seen = Vec::new();
    while t0.elapsed() < Duration::from_secs(15) {
        seen = threads(child.id())
            .into_iter()
            .filter(|t| t.0.starts_with("iomark:placed"))
            .collect();
        let placed =
            |t: &(String, String, i64, i64)| t.2 == 5 && t.3 == prio && !t.1.contains(['-', ',']);
        if seen.len() == 2 && seen.iter().all(placed) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen.len(), 2, "worker threads not found: {seen:?}");
    let mut cpu_lists: Vec<&str> = seen.iter().map(|t| t.1.as_str()).collect();
    cpu_lists.sort();
    if ncpus >= 2 {
        assert_eq!(cpu_lists, ["0", "1"], "split gives each clone its own CPU");
    } else {
        assert_eq!(cpu_lists, ["0", "0"]);
    }
    for t in &seen {
        assert_eq!(t.2, 5, "nice of {}", t.0);
        assert_eq!(t.3, prio, "I/O priority of {}", t.0);
    }
}
