//! Figures that stay true where a machine is pushed hardest: many clones
//! on few CPUs share one start and one deadline; a short transfer is
//! finished or failed as fio does, never counted as a whole I/O.

use std::path::Path;
use std::process::Command;

use crate::common::{self, cpu_heavy, run_in, stderr, tempdir, timing_alone, Bounded};
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
    let _serial = timing_alone();
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
    eprintln!("64 clones: runtime {run_ms} ms, samples span {span} ms");
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
    let _serial = cpu_heavy();
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
    use std::io::Read;
    let d = tempdir();
    let f = d.path().join("f");
    std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
    let mut child = common::iomark()
        .args([
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=4k",
            "--size=8m",
            "--rate_iops=100",
            "--eta=always",
            "--output-format=json",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The file is cut once the job reads: its progress line shows it
    // running ("R(1)"), not at a fixed time after the start, which a
    // loaded machine (or Wine) may spend starting the program. At 100
    // reads a second the job is then far from 1 MiB (2.56 s of reads).
    let mut err_pipe = child.stderr.take().unwrap();
    let (running_tx, running_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        let mut told = false;
        while let Ok(n) = err_pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            if !told && all.windows(4).any(|w| w == b"R(1)") {
                told = true;
                let _ = running_tx.send(());
            }
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let running = running_rx.recv_timeout(std::time::Duration::from_secs(120));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len((1 << 20) + 2048)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = reader.join().unwrap();
    assert!(
        running.is_ok(),
        "no progress line showed the job running: {err}"
    );
    assert!(!o.status.success(), "a failed job must fail the run");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {err}"));
    // 256 whole reads, one short read of the last 2 KiB (what fio counts
    // as short), one read of nothing: EIO, as fio ends such a job.
    let (code, ios, bytes, short) = read_counts(&doc, "read");
    assert_eq!(code, 5, "{err}");
    assert_eq!((ios, short), (258, 1));
    assert_eq!(bytes, (1 << 20) + 2048);
    assert!(err.contains("0 of 4096 bytes moved"), "{err}");
}

/// A tmpfs of `size` bytes mounted on `dir`, unmounted when dropped.
#[cfg(unix)]
struct Tmpfs(std::path::PathBuf);

#[cfg(unix)]
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

#[cfg(unix)]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

// A full tmpfs, and fio 3.33 side by side.
#[cfg(unix)]
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
            .output_bounded()
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

#[test]
fn a_synchronous_write_costs_the_write_plus_its_sync() {
    let d = tempdir();
    let doc = common::run_json(
        d.path(),
        &[
            "--name=s",
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--fsync=1",
        ],
    );
    let job = &doc["jobs"][0];
    let w = &doc["iomark"]["sync_writes"][0];
    assert_eq!(w["job_index"], 0);
    let lat = &w["lat_ns"];
    assert_eq!(
        lat["N"], job["sync"]["total_ios"],
        "one sample per sync: {lat}"
    );
    assert!(lat["N"].as_u64().unwrap() >= 255);
    let mean = lat["mean"].as_f64().unwrap();
    let write = job["write"]["lat_ns"]["mean"].as_f64().unwrap();
    let sync = job["sync"]["lat_ns"]["mean"].as_f64().unwrap();
    // From a write's start to its sync's end: at least both, and no more
    // than the time each write took in the job (one at a time).
    assert!(mean >= (write + sync) * 0.99, "{mean} < {write} + {sync}");
    let per_write = 1e9 / job["write"]["iops"].as_f64().unwrap();
    assert!(mean <= per_write * 1.01, "{mean} > {per_write} per write");
    assert!(lat["percentile"]["99.000000"].as_u64().unwrap() > 0);
}

/// Counts of each I/O length in a `write_iolog` trace.
fn lengths(trace: &Path) -> std::collections::BTreeMap<u64, u64> {
    let mut out = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        // [time] file action offset length
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && f[f.len() - 3] == "write" {
            *out.entry(f[f.len() - 1].parse().unwrap()).or_insert(0) += 1;
        }
    }
    assert!(!out.is_empty(), "no writes in {}", trace.display());
    out
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn block_size_ranges_and_splits_are_drawn_as_fio_draws_them() {
    require_fio!();
    let d = tempdir();
    let trace = |cmd: &str, name: &str, args: &[&str]| {
        let log = format!("--write_iolog={name}");
        let o = Command::new(cmd)
            .args(["--name=b", "--ioengine=null", "--output-format=json"])
            .args(args)
            .arg(&log)
            .current_dir(d.path())
            .output_bounded()
            .unwrap();
        assert!(
            o.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        lengths(&d.path().join(name))
    };
    let iomark = env!("CARGO_BIN_EXE_iomark");
    // bsrange: each multiple of the low end equally likely.
    let range = ["--rw=write", "--bsrange=4k-16k", "--size=64m"];
    let (ours, fio) = (trace(iomark, "r1", &range), trace("fio", "r2", &range));
    let total = |m: &std::collections::BTreeMap<u64, u64>| m.values().sum::<u64>() as f64;
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        fio.keys().collect::<Vec<_>>()
    );
    for (len, n) in &ours {
        let (a, b) = (*n as f64 / total(&ours), fio[len] as f64 / total(&fio));
        assert!((a - b).abs() < 0.03, "{len}: iomark {a:.3}, fio {b:.3}");
    }
    // bssplit in a random write with a random map: the lengths cut to fit
    // the free runs of the map come out alike, and so does the count.
    let split = ["--rw=randwrite", "--bssplit=4k/50:64k/50", "--size=64m"];
    let (ours, fio) = (trace(iomark, "s1", &split), trace("fio", "s2", &split));
    let (a, b) = (total(&ours), total(&fio));
    assert!((a / b - 1.0).abs() < 0.12, "I/Os: iomark {a}, fio {b}");
    let small = |m: &std::collections::BTreeMap<u64, u64>| m[&4096] as f64 / total(m);
    assert!(
        (small(&ours) - small(&fio)).abs() < 0.05,
        "4k share: iomark {}, fio {}",
        small(&ours),
        small(&fio)
    );
}

/// Every data I/O of a `write_iolog` trace: (direction, offset, length).
fn trace_ios(trace: &Path) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        // [time] file action offset length
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && ["read", "write", "trim"].contains(&f[f.len() - 3]) {
            let n = |s: &str| s.parse::<u64>().unwrap();
            out.push((
                f[f.len() - 3].to_string(),
                n(f[f.len() - 2]),
                n(f[f.len() - 1]),
            ));
        }
    }
    assert!(!out.is_empty(), "no I/O in {}", trace.display());
    out
}

/// Runs `cmd` (fio or iomark) on one job in `dir`, recording its trace.
fn traced(cmd: &str, dir: &Path, name: &str, args: &[&str]) -> Vec<(String, u64, u64)> {
    let o = Command::new(cmd)
        .args(["--name=b", "--output-format=json"])
        .args(args)
        .arg(format!("--write_iolog={name}"))
        .current_dir(dir)
        .output_bounded()
        .unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    trace_ios(&dir.join(name))
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn block_size_ranges_whose_top_is_no_multiple_of_the_low_end_are_drawn_as_fio_draws_them() {
    require_fio!();
    let d = tempdir();
    let iomark = env!("CARGO_BIN_EXE_iomark");
    // Each length's share (per direction) within 2 points of fio's, and
    // the I/O count within 3 %; fio's own spread over five seeds at 16 MiB
    // is up to 5 points, so 256 MiB runs keep the noise well below 2.
    let cases: [&[&str]; 4] = [
        &["--rw=write", "--bsrange=4k-10k"],
        &["--rw=randwrite", "--bsrange=3k-10k"],
        &["--rw=rw", "--bsrange=4k-10k,3k-10k"],
        &["--rw=write", "--bsrange=1k-9k", "--bs_unaligned=1"],
    ];
    for (i, case) in cases.iter().enumerate() {
        let mut args = vec!["--ioengine=null", "--size=256m"];
        args.extend_from_slice(case);
        let ours = traced(iomark, d.path(), &format!("o{i}"), &args);
        let fio = traced("fio", d.path(), &format!("f{i}"), &args);
        let (a, b) = (ours.len() as f64, fio.len() as f64);
        assert!(
            (a / b - 1.0).abs() < 0.03,
            "{case:?}: I/Os iomark {a}, fio {b}"
        );
        let shares = |ios: &[(String, u64, u64)]| {
            let mut m = std::collections::BTreeMap::new();
            let mut per_dir = std::collections::BTreeMap::new();
            for (dir, _, len) in ios {
                *m.entry((dir.clone(), *len)).or_insert(0.0f64) += 1.0;
                *per_dir.entry(dir.clone()).or_insert(0.0f64) += 1.0;
            }
            for ((dir, _), v) in m.iter_mut() {
                *v *= 100.0 / per_dir[dir];
            }
            m
        };
        let (s_ours, s_fio) = (shares(&ours), shares(&fio));
        // Unaligned: thousands of lengths, each rare; compare the top's
        // share and the mean length instead.
        let keys: Vec<_> = if case.contains(&"--bs_unaligned=1") {
            vec![("write".to_string(), 9216)]
        } else {
            s_fio.keys().chain(s_ours.keys()).cloned().collect()
        };
        for k in keys {
            let (p, q) = (
                s_ours.get(&k).copied().unwrap_or(0.0),
                s_fio.get(&k).copied().unwrap_or(0.0),
            );
            assert!(
                (p - q).abs() < 2.0,
                "{case:?} {k:?}: iomark {p:.1} %, fio {q:.1} %"
            );
        }
        let mean = |ios: &[(String, u64, u64)]| {
            ios.iter().map(|x| x.2).sum::<u64>() as f64 / ios.len() as f64
        };
        let (p, q) = (mean(&ours), mean(&fio));
        assert!(
            (p / q - 1.0).abs() < 0.03,
            "{case:?}: mean length iomark {p:.0}, fio {q:.0}"
        );
    }
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn filesize_with_an_offset_is_the_region_from_the_offset_to_the_files_end_as_in_fio() {
    require_fio!();
    let iomark = env!("CARGO_BIN_EXE_iomark");
    // (options, I/Os, lowest offset, end of the highest I/O, file size);
    // random reads of a quarter of the region stay inside it.
    let cases: [(&[&str], u64, u64, u64); 3] = [
        (
            &["--rw=write", "--filesize=16m", "--offset=4m"],
            3072,
            4 << 20,
            16 << 20,
        ),
        (
            &[
                "--rw=randwrite",
                "--filesize=8m",
                "--offset=6m",
                "--size=4m",
            ],
            512,
            6 << 20,
            8 << 20,
        ),
        (
            &[
                "--rw=randread",
                "--filesize=16m",
                "--offset=4m",
                "--size=4m",
            ],
            1024,
            4 << 20,
            16 << 20,
        ),
    ];
    for (args, ios, lo, hi) in cases {
        for cmd in [iomark, "fio"] {
            let d = tempdir();
            let mut all = vec!["--ioengine=psync", "--filename=f"];
            all.extend_from_slice(args);
            let t = traced(cmd, d.path(), "t", &all);
            let first = t.iter().map(|x| x.1).min().unwrap();
            let end = t.iter().map(|x| x.1 + x.2).max().unwrap();
            let size = std::fs::metadata(d.path().join("f")).unwrap().len();
            assert_eq!(t.len() as u64, ios, "{cmd} {args:?}: I/Os");
            assert_eq!(size, hi, "{cmd} {args:?}: file size");
            assert!(
                first >= lo && end <= hi,
                "{cmd} {args:?}: offsets {first}..{end}"
            );
            if !args[0].contains("rand") || args[0] == "--rw=randwrite" {
                assert_eq!((first, end), (lo, hi), "{cmd} {args:?}: region");
            }
        }
    }
}

#[test]
fn a_block_size_larger_than_the_size_is_refused() {
    let d = tempdir();
    let o = run_in(
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--rw=read",
            "--bs=64k",
            "--size=16k",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("smaller than the smallest block size"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn sequential_holes_with_an_offset_end_with_the_region_as_in_fio() {
    require_fio!();
    let d = tempdir();
    let counts = |cmd: &str, extra: &[&str]| {
        let _ = std::fs::remove_file(d.path().join("h"));
        let o = Command::new(cmd)
            .args([
                "--name=h",
                "--filename=h",
                "--ioengine=psync",
                "--rw=write:112k",
                "--bs=16k",
                "--size=4m",
                "--output-format=json",
            ])
            .args(extra)
            .current_dir(d.path())
            .output_bounded()
            .unwrap();
        assert!(
            o.status.success(),
            "{cmd} {extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        let doc: serde_json::Value =
            serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        let j = &doc["jobs"][0];
        (
            j["write"]["total_ios"].as_u64().unwrap(),
            j["read"]["total_ios"].as_u64().unwrap(),
        )
    };
    let iomark = env!("CARGO_BIN_EXE_iomark");
    for extra in [
        &[][..],
        &["--offset=120k"],
        &["--offset=120k", "--loops=2"],
        &["--offset=120k", "--io_size=3952k"],
        &["--offset=120k", "--io_size=3952k", "--verify=crc32c"],
        &[
            "--offset=120k",
            "--io_size=3952k",
            "--verify=crc32c",
            "--verify_backlog=1",
        ],
        &["--offset=120k", "--io_size=3m", "--verify=crc32c"],
        &["--verify=crc32c"],
    ] {
        assert_eq!(counts(iomark, extra), counts("fio", extra), "{extra:?}");
    }
}

/// Bytes read from a block device so far (/sys/block/NAME/stat).
#[cfg(target_os = "linux")]
fn device_read_bytes(dev: &Path) -> u64 {
    let name = dev.file_name().unwrap().to_string_lossy().into_owned();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let sectors: u64 = stat.split_whitespace().nth(2).unwrap().parse().unwrap();
    sectors * 512
}

// A loop device, ext4 and /sys/block.
#[cfg(target_os = "linux")]
#[test]
fn every_loop_reads_from_the_storage_not_from_the_last_loops_cache() {
    use crate::loopdev::{LoopDev, Mount};
    if !common::is_root() {
        common::missing("loop devices and mounts need root");
        return;
    }
    let d = tempdir();
    let Some(dev) = LoopDev::new(d.path(), 32 << 20) else {
        common::missing("cannot attach a loop device");
        return;
    };
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F", dev.as_str()])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        common::missing("mkfs.ext4 failed or is not installed");
        return;
    }
    let mnt = d.path().join("mnt");
    let Some(_m) = Mount::new(&dev.path, &mnt) else {
        common::missing("cannot mount the loop device");
        return;
    };
    let job = [
        "--name=c",
        "--ioengine=psync",
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--output-format=json",
    ];
    let read_in = |extra: &[&str]| -> (u64, u64) {
        let mut args = job.to_vec();
        args.extend_from_slice(extra);
        let before = device_read_bytes(&dev.path);
        let o = run_in(&mnt, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let io = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
        (io, device_read_bytes(&dev.path) - before)
    };
    // Three loops over a file the layout just wrote (so it is cached):
    // fio drops the cache before each loop, so all three reach the disk.
    let (io, disk) = read_in(&["--loops=3"]);
    assert_eq!(io, 3 << 20);
    assert!(disk >= io * 9 / 10, "read {io} bytes, the device {disk}");
    // Time-based jobs go round in loops of `size` bytes, each uncached.
    let (io, disk) = read_in(&["--runtime=1", "--time_based"]);
    assert!(io > 2 << 20, "only {io} bytes in a second");
    assert!(disk >= io * 9 / 10, "read {io} bytes, the device {disk}");
    // invalidate=0 keeps what the layout cached.
    let (io, disk) = read_in(&["--loops=3", "--invalidate=0"]);
    assert_eq!(io, 3 << 20);
    assert!(disk < 1 << 20, "read {io} bytes, the device {disk}");
}
