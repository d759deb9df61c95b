//! The seed workloads from the foundation issue run end to end and print
//! fio-style text and valid JSON; deterministic jobs do the same I/O as fio.

use crate::common::*;
use crate::require_fio;

#[test]
fn random_write_with_end_fsync_prints_text_report() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=random-write",
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=4k",
            "--size=8m",
            "--numjobs=1",
            "--iodepth=1",
            "--runtime=1",
            "--time_based",
            "--end_fsync=1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B"),
        "{out}"
    );
    assert!(
        out.contains("random-write: (groupid=0, jobs=1): err= 0"),
        "{out}"
    );
    assert!(out.contains("  write: IOPS="), "{out}");
    assert!(out.contains("clat percentiles"), "{out}");
    assert!(out.contains("Run status group 0 (all jobs):"), "{out}");
    assert!(out.contains("  WRITE: bw="), "{out}");
}

#[test]
fn random_write_with_fsync_reports_syncs_in_json() {
    let dir = tempdir();
    let j = run_json(
        dir.path(),
        &[
            "--name=random-write",
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=4k",
            "--size=4m",
            "--numjobs=1",
            "--iodepth=1",
            "--runtime=1",
            "--time_based",
            "--end_fsync=1",
            "--fsync=1",
        ],
    );
    let job = &j["jobs"][0];
    let writes = job["write"]["total_ios"].as_u64().unwrap();
    let syncs = job["sync"]["total_ios"].as_u64().unwrap();
    assert!(writes > 0);
    // One fsync per write (the last write's fsync may be cut by the runtime).
    assert!(
        syncs + 1 >= writes && syncs <= writes,
        "writes={writes} syncs={syncs}"
    );
    assert_eq!(job["job options"]["fsync"], "1");
    assert!(job["sync"]["lat_ns"]["N"].as_u64().unwrap() == syncs);
}

#[test]
fn job_file_random_read_runs_and_reports_json() {
    let dir = tempdir();
    let jf = dir.path().join("rr.fio");
    std::fs::write(
        &jf,
        format!(
            "[random-read]\nrw=randread\nsize=32m\ndirectory={}\n",
            crate::common::opt_path(dir.path())
        ),
    )
    .unwrap();
    let j = run_json(dir.path(), &[jf.to_str().unwrap()]);
    let r = &j["jobs"][0]["read"];
    assert_eq!(r["total_ios"], 8192);
    assert_eq!(r["io_bytes"], 32 << 20);
    assert_eq!(j["jobs"][0]["jobname"], "random-read");
    assert!(r["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
}

fn counts(job: &serde_json::Value) -> [(u64, u64); 2] {
    ["read", "write"].map(|d| {
        (
            job[d]["total_ios"].as_u64().unwrap(),
            job[d]["io_bytes"].as_u64().unwrap(),
        )
    })
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn deterministic_jobs_match_fio_counts() {
    require_fio!();
    for rw in ["read", "write", "randread", "randwrite"] {
        for numjobs in ["1", "4"] {
            let dir = tempdir();
            let args = [
                "--name=det",
                "--ioengine=psync",
                "--bs=4k",
                "--size=2m",
                &format!("--rw={rw}"),
                &format!("--numjobs={numjobs}"),
            ];
            let ours = run_json(dir.path(), &args);
            let dir2 = tempdir();
            let theirs = fio_json(dir2.path(), &args);
            let (a, b) = (
                ours["jobs"].as_array().unwrap(),
                theirs["jobs"].as_array().unwrap(),
            );
            assert_eq!(a.len(), b.len(), "{rw} numjobs={numjobs}: job count");
            for (x, y) in a.iter().zip(b) {
                assert_eq!(
                    counts(x),
                    counts(y),
                    "{rw} numjobs={numjobs}: total_ios/io_bytes differ from fio"
                );
            }
        }
    }
}
