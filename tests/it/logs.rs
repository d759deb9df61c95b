//! Log files (bw, iops, lat, hist): names and line layout as fio writes
//! them, per-I/O and averaged modes, and latency targets and limits.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;
use crate::require_fio;

const JOBFILE: &str = "[global]
ioengine=null
size=256k
bs=4k
rw=randrw
write_bw_log
write_iops_log=io
write_lat_log=lat
write_hist_log=hist
log_hist_msec=1

[a]
numjobs=2

[b]
log_offset=1

[c]
stonewall
per_job_logs=0
";

fn logs_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

/// Columns of the first line of each non-empty log.
fn columns(dir: &Path) -> Vec<(String, usize)> {
    logs_in(dir)
        .into_iter()
        .filter_map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap();
            let first = text.lines().next()?;
            Some((n, first.split(", ").count()))
        })
        .collect()
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn log_names_and_columns_match_fio() {
    require_fio!();
    let ours = tempdir();
    let theirs = tempdir();
    for d in [&ours, &theirs] {
        std::fs::write(d.path().join("logs.fio"), JOBFILE).unwrap();
    }
    let o = run_in(ours.path(), &["logs.fio"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = fio_output(
        std::process::Command::new("fio")
            .arg("logs.fio")
            .current_dir(theirs.path()),
    );
    assert!(f.status.success());
    let names = logs_in(ours.path());
    assert_eq!(names, logs_in(theirs.path()));
    assert!(names.contains("a_bw.1.log") && names.contains("a_bw.2.log"));
    assert!(names.contains("b_bw.3.log") && names.contains("c_bw.log"));
    assert!(names.contains("lat_clat.1.log") && names.contains("hist_clat_hist.3.log"));
    let ours_cols = columns(ours.path());
    let their_cols = columns(theirs.path());
    for (name, n) in &ours_cols {
        if let Some((_, m)) = their_cols.iter().find(|(t, _)| t == name) {
            assert_eq!(n, m, "columns of {name}");
        }
    }
    // Per-I/O lines: one per I/O of the job (64 I/Os of 4 KiB).
    let clat = std::fs::read_to_string(ours.path().join("lat_clat.1.log")).unwrap();
    assert_eq!(clat.lines().count(), 64);
    let iops = std::fs::read_to_string(ours.path().join("io_iops.1.log")).unwrap();
    assert!(
        iops.lines().all(|l| l.split(", ").nth(1) == Some("1")),
        "{iops}"
    );
    // Histogram lines: time, direction, block size, then 1856 bins.
    let hist = std::fs::read_to_string(ours.path().join("hist_clat_hist.1.log")).unwrap();
    for l in hist.lines() {
        assert_eq!(l.split(", ").count(), 3 + 1856, "{l}");
    }
}

#[test]
fn averaged_logs_have_one_line_per_direction_and_window() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--fake-clock=1000",
            "--name=w",
            "--ioengine=null",
            "--rw=randrw",
            "--size=1g",
            "--time_based",
            "--runtime=1",
            "--write_bw_log=w",
            "--write_iops_log=w",
            "--write_lat_log=w",
            "--log_avg_msec=100",
            "--log_unix_epoch=1",
            "--log_hist_coarseness=3",
            "--write_hist_log=w",
            "--log_hist_msec=250",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
    let bw = read("w_bw.1.log");
    let lines: Vec<Vec<u64>> = bw
        .lines()
        .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
        .collect();
    // 10 windows of 100 ms, a read and a write line each.
    assert_eq!(lines.len(), 20, "{bw}");
    let t0 = 1_700_000_000_000u64;
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.len(), 5);
        assert_eq!(l[2], (i % 2) as u64, "direction");
        assert_eq!(l[3], 0, "block size is 0 in averaged logs");
        assert!(l[0] >= t0 + 100 && l[0] <= t0 + 1000, "unix ms: {}", l[0]);
        assert!(l[1] > 0, "KiB/s");
    }
    // With the fake clock every I/O takes 1 µs: the mean latency is 1000 ns.
    let clat = read("w_clat.1.log");
    assert!(
        clat.lines().all(|l| l.split(", ").nth(1) == Some("1000")),
        "{clat}"
    );
    let hist = read("w_clat_hist.1.log");
    assert!(hist.lines().count() >= 6, "{hist}");
    for l in hist.lines() {
        assert_eq!(l.split(", ").count(), 3 + 1856 / 8, "coarseness 3: {l}");
    }
}

#[test]
fn log_files_that_cannot_be_created_are_a_clear_error() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=64k",
            "--write_bw_log=no/such/dir/x",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot create log file 'no/such/dir/x_bw.1.log'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn latency_target_finds_a_depth_and_stops() {
    let dir = tempdir();
    let j = run_json(
        dir.path(),
        &[
            "--name=lt",
            "--ioengine=null",
            "--rw=randread",
            "--size=1g",
            "--time_based",
            "--runtime=30",
            "--iodepth=16",
            "--latency_target=50ms",
            "--latency_window=50ms",
            "--latency_percentile=99",
        ],
    );
    let job = &j["jobs"][0];
    // Every null I/O is far below 50 ms: the search doubles to the job's
    // iodepth, runs one more window there, and ends long before 30 s.
    assert_eq!(job["latency_depth"], 16, "{job}");
    assert_eq!(job["latency_target"], 50_000_000u64);
    assert_eq!(job["latency_window"], 50_000u64);
    assert!(job["job_runtime"].as_u64().unwrap() < 5_000, "{job}");
    assert_eq!(job["error"], 0);
}

#[test]
fn max_latency_fails_the_job_with_etimedout() {
    let dir = tempdir();
    // Each I/O takes 2 µs on this fake clock; the limit is 1 µs.
    let o = run_in(
        dir.path(),
        &[
            "--name=ml",
            "--ioengine=null",
            "--size=1m",
            "--fake-clock=2000",
            "--max_latency=1",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("max_latency"), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON still complete");
    assert_eq!(j["jobs"][0]["error"], libc::ETIMEDOUT);
}

#[test]
fn bandwidth_log_aggregates_all_jobs() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--bandwidth-log",
            "--name=agg",
            "--ioengine=null",
            "--rw=randrw",
            "--size=1g",
            "--time_based",
            "--runtime=1500ms",
            "--numjobs=2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (d, name) in ["agg-read_bw.log", "agg-write_bw.log"].iter().enumerate() {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let lines: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect();
        assert!(lines.len() >= 2, "{name}: {text}");
        assert!(
            lines
                .iter()
                .all(|l| l.len() == 5 && l[2] == d as u64 && l[1] > 0),
            "{text}"
        );
    }
    let trim = std::fs::read_to_string(dir.path().join("agg-trim_bw.log")).unwrap();
    assert!(trim.is_empty());
}

/// log_store_compressed writes fio's `.fz` logs: zlib streams of binary
/// samples that `fio --inflate-log` turns back into exactly the lines
/// iomark writes without compression (same job, fake clock).
#[test]
fn compressed_logs_inflate_to_the_plain_ones() {
    let dir = tempdir();
    let (plain, packed) = (dir.path().join("plain"), dir.path().join("packed"));
    for (d, extra) in [
        (&plain, "--log_store_compressed=0"),
        (&packed, "--log_store_compressed=1"),
    ] {
        std::fs::create_dir(d).unwrap();
        let args = [
            "--fake-clock=1000",
            "--name=z",
            "--ioengine=null",
            "--rw=randrw",
            "--size=1m",
            "--write_lat_log=z",
            "--write_bw_log=z",
            "--log_offset=1",
            "--log_prio=1",
            "--prioclass=2",
            "--prio=5",
            extra,
        ];
        let o = run_in(d, &linux_prio_only(&args));
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let plain_logs = logs_in(&plain);
    let packed_logs: BTreeSet<String> = std::fs::read_dir(&packed)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fz"))
        .collect();
    let want: BTreeSet<String> = plain_logs.iter().map(|n| format!("{n}.fz")).collect();
    assert_eq!(packed_logs, want);
    for name in &plain_logs {
        let text = std::fs::read_to_string(plain.join(name)).unwrap();
        // 40 bytes a sample with log_offset.
        let mut raw = Vec::new();
        let data = std::fs::read(packed.join(format!("{name}.fz"))).unwrap();
        let mut rest: &[u8] = &data;
        while !rest.is_empty() {
            let mut z = flate2::Decompress::new(true);
            let mut out = Vec::with_capacity(1 << 22);
            z.decompress_vec(rest, &mut out, flate2::FlushDecompress::Finish)
                .unwrap();
            rest = &rest[z.total_in() as usize..];
            raw.extend_from_slice(&out);
        }
        assert_eq!(raw.len(), 40 * text.lines().count(), "{name}");
        if crate::common::fio_for_comparison() {
            let o = fio_output(std::process::Command::new("fio").arg(format!(
                "--inflate-log={}",
                packed.join(format!("{name}.fz")).display()
            )));
            if !text.is_empty() {
                assert!(
                    o.status.success(),
                    "{name}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            assert_eq!(String::from_utf8_lossy(&o.stdout), text, "{name}");
        }
    }
}

/// `iomark --inflate-log` turns a `.fz` log back into text: iomark's
/// own (the same lines as the uncompressed log, which fio's
/// `--inflate-log` also prints: the priority column included, here the
/// real-time class without log_prio) and fio's (the same lines as fio's
/// `--inflate-log`).
/// `args` without `--prio`/`--prioclass` on Windows, which refuses
/// these Linux-only options (the logs' priority column then shows none).
fn linux_prio_only<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter()
        .copied()
        .filter(|a| !(cfg!(windows) && a.starts_with("--prio")))
        .collect()
}

/// fio 3.33 writing compressed logs in `dir`. Its job process now and
/// then never finishes (seen waiting on a futex after its I/O, once in
/// many runs): such a run is killed with its process group after 60 s
/// and run again in an emptied directory, at most three times.
#[cfg(unix)]
fn fio_writing_compressed_logs(dir: &Path) {
    for attempt in 1..=3 {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            std::fs::remove_file(e.path()).unwrap();
        }
        let mut fio = std::process::Command::new("fio");
        fio.args([
            "--name=z",
            "--ioengine=null",
            "--rw=randrw",
            "--size=2m",
            "--write_lat_log=z",
            "--write_bw_log=z",
            "--log_offset=1",
            "--log_store_compressed=1",
        ])
        .current_dir(dir);
        match output_within(&mut fio, std::time::Duration::from_secs(60)) {
            Ok(o) => {
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                return;
            }
            Err(Ran::Hung(..)) => {
                eprintln!("fio hung writing compressed logs (attempt {attempt}); running it again");
            }
            Err(e) => panic!("fio: {e}"),
        }
    }
    panic!("fio hung writing compressed logs three times");
}

#[test]
fn inflate_log_prints_iomarks_and_fios_compressed_logs() {
    let dir = tempdir();
    let (plain, packed) = (dir.path().join("plain"), dir.path().join("packed"));
    for (d, c) in [(&plain, "0"), (&packed, "1")] {
        std::fs::create_dir(d).unwrap();
        let compressed = format!("--log_store_compressed={c}");
        let args = [
            "--fake-clock=1000",
            "--name=z",
            "--ioengine=null",
            "--rw=randrw",
            "--size=1m",
            "--write_lat_log=z",
            "--write_iops_log=z",
            "--prioclass=1",
            "--prio=3",
            &compressed,
        ];
        let o = run_in(d, &linux_prio_only(&args));
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let names = logs_in(&plain);
    assert!(names.len() >= 4, "{names:?}");
    let mut with_rt = 0;
    for name in &names {
        let want = std::fs::read_to_string(plain.join(name)).unwrap();
        with_rt += want.lines().filter(|l| l.ends_with(", 1")).count();
        let fz = packed.join(format!("{name}.fz"));
        let o = iomark()
            .arg(format!("--inflate-log={}", fz.display()))
            .output_bounded()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), want, "{name}");
        if crate::common::fio_for_comparison() {
            let f = fio_output(
                std::process::Command::new("fio").arg(format!("--inflate-log={}", fz.display())),
            );
            assert_eq!(stdout(&f), want, "fio --inflate-log {name}");
        }
    }
    // The I/O priority class is Linux's (refused on Windows).
    assert!(
        with_rt > 0 || cfg!(windows),
        "no line shows the real-time class"
    );

    // fio's own compressed logs: fio 3.33 runs on Linux.
    #[cfg(unix)]
    fio_logs_inflate_the_same(dir.path());
}

/// `iomark --inflate-log` prints fio's compressed logs as fio does.
#[cfg(unix)]
fn fio_logs_inflate_the_same(dir: &Path) {
    require_fio!();
    let f = dir.join("fio");
    std::fs::create_dir(&f).unwrap();
    fio_writing_compressed_logs(&f);
    let mut compared = 0;
    for e in std::fs::read_dir(&f).unwrap().flatten() {
        let path = e.path();
        if std::fs::metadata(&path).unwrap().len() == 0 {
            // fio leaves empty files for logs with no sample (slat here).
            continue;
        }
        let ours = iomark()
            .arg(format!("--inflate-log={}", path.display()))
            .output_bounded()
            .unwrap();
        let theirs = fio_output(
            std::process::Command::new("fio").arg(format!("--inflate-log={}", path.display())),
        );
        assert!(ours.status.success(), "{}", stderr(&ours));
        assert!(!theirs.stdout.is_empty(), "{}", path.display());
        assert_eq!(
            stdout(&ours),
            String::from_utf8_lossy(&theirs.stdout),
            "{}",
            path.display()
        );
        compared += 1;
    }
    assert!(compared >= 3, "{compared} fio logs compared");
}
