//! Figures that stay true where a machine is pushed hardest: many clones
//! on few CPUs share one start and one deadline; a short transfer is
//! finished or failed as fio does, never counted as a whole I/O.

use std::path::Path;
use std::process::Command;

use crate::common::{self, run_in, stderr, tempdir};
use crate::require_fio;

/// Unix-epoch times (ms) of every sample in the per-clone IOPS logs.
fn sample_times(dir: &Path, prefix: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(prefix) && name.ends_with(".log") {
            for line in std::fs::read_to_string(&p).unwrap().lines() {
                let t = line.split(',').next().unwrap().trim();
                out.push(t.parse().unwrap());
            }
        }
    }
    out
}

#[test]
fn many_clones_on_few_cpus_are_measured_over_one_shared_window() {
    let d = tempdir();
    let clones = 64;
    let o = run_in(
        d.path(),
        &[
            "--name=m",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=64m",
            &format!("--numjobs={clones}"),
            "--runtime=500ms",
            "--time_based",
            "--group_reporting",
            "--write_iops_log=m",
            "--log_avg_msec=100",
            "--log_unix_epoch=1",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let run_ms = doc["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    let times = sample_times(d.path(), "m_iops");
    assert!(times.len() >= clones, "{} samples", times.len());
    let span = times.iter().max().unwrap() - times.iter().min().unwrap();
    // Every clone measured inside the group's window: the I/O summed
    // over the clones was done in the `runtime` the group reports.
    assert!(
        span <= run_ms,
        "the clones' samples span {span} ms, but the group reports runtime={run_ms} ms"
    );
    assert!(
        (500..=1000).contains(&run_ms),
        "a 500 ms time-based group reported runtime={run_ms} ms"
    );
}

#[test]
fn more_cpu_bound_clones_than_cpus_is_said_once() {
    let d = tempdir();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = (cpus * 2 + 1).to_string();
    let args = |numjobs: &str| {
        vec![
            "--name=cpu".to_string(),
            "--ioengine=null".into(),
            "--rw=read".into(),
            "--bs=4k".into(),
            "--size=4m".into(),
            format!("--numjobs={numjobs}"),
            "--output-format=json".into(),
        ]
    };
    let many: Vec<String> = args(&n);
    let o = run_in(
        d.path(),
        &many.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("CPU-bound clones").count(), 1, "{err}");
    assert!(err.contains(&format!("{n} CPU-bound clones")), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = doc["iomark"]["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w["kind"] == "cpu-overcommit" && w["job"] == "cpu"),
        "{w:?}"
    );
    // As many clones as CPUs: nothing to say.
    let one: Vec<String> = args("1");
    let o = run_in(
        d.path(),
        &one.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    assert!(o.status.success());
    assert!(!stderr(&o).contains("CPU-bound"), "{}", stderr(&o));
}

fn read_counts(doc: &serde_json::Value, dir: &str) -> (i64, u64, u64, u64) {
    let j = &doc["jobs"][0];
    (
        j["error"].as_i64().unwrap(),
        j[dir]["total_ios"].as_u64().unwrap(),
        j[dir]["io_bytes"].as_u64().unwrap(),
        j[dir]["short_ios"].as_u64().unwrap(),
    )
}

#[test]
fn a_file_truncated_under_a_read_ends_the_job_with_eio() {
    let d = tempdir();
    let f = d.path().join("f");
    std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
    let child = common::iomark()
        .args([
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=4k",
            "--size=8m",
            "--rate_iops=200",
            "--output-format=json",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // At 200 reads a second the job is far from 1 MiB after 300 ms.
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len((1 << 20) + 2048)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success(), "a failed job must fail the run");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 256 whole reads, one short read of the last 2 KiB (what fio counts
    // as short), one read of nothing: EIO, as fio ends such a job.
    let (err, ios, bytes, short) = read_counts(&doc, "read");
    assert_eq!(err, 5, "{}", stderr(&o));
    assert_eq!((ios, short), (258, 1));
    assert_eq!(bytes, (1 << 20) + 2048);
    assert!(
        stderr(&o).contains("0 of 4096 bytes moved"),
        "{}",
        stderr(&o)
    );
}

/// A tmpfs of `size` bytes mounted on `dir`, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        if !common::is_root() {
            common::missing("mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::missing("cannot mount a tmpfs");
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_short_write_is_finished_or_failed_as_fio_counts_it() {
    require_fio!();
    let d = tempdir();
    let Some(fs) = Tmpfs::mount(&d.path().join("small"), "1m") else {
        return;
    };
    let file = fs.0.join("w");
    let file = file.to_str().unwrap();
    let args = [
        "--name=w",
        &format!("--filename={file}"),
        "--rw=write",
        "--bs=6k",
        "--size=1200k",
        "--fallocate=none",
        "--output-format=json",
    ];
    let run = |cmd: &str| {
        let _ = std::fs::remove_file(file);
        let o = Command::new(cmd)
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(!o.status.success(), "{cmd} wrote 1200k into 1m");
        let text = String::from_utf8_lossy(&o.stdout);
        let doc: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..])
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        read_counts(&doc, "write")
    };
    let fio = run("fio");
    let ours = run(env!("CARGO_BIN_EXE_iomark"));
    // The write that straddles the end of space moves part of its data;
    // the rest fails with ENOSPC: two I/Os, one of them short.
    assert_eq!(
        (ours.0, ours.1, ours.3),
        (fio.0, fio.1, fio.3),
        "iomark {ours:?}, fio {fio:?}"
    );
    assert_eq!(ours.0, 28);
    assert_eq!(ours.3, 1);
    // fio leaves the moved part out of io_bytes; iomark counts it.
    assert_eq!(ours.2, fio.2 + 4096);
}
