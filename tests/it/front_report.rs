//! `iomark report`: HTML from fio's own JSON (json and json+), from
//! iomark's JSON (with its timeline), and cache-honesty warnings.

use serde_json::Value;

use crate::common::*;
use crate::html_check;
use crate::require_fio;

const FIO_JOB: &[&str] = &[
    "--name=mixed",
    "--rw=randrw",
    "--bs=4k",
    "--size=4m",
    "--runtime=1",
    "--time_based",
];

#[test]
fn report_of_fio_json_plus_has_percentiles_and_histograms() {
    require_fio!();
    let dir = tempdir();
    for (fmt, name) in [("json+", "plus.json"), ("json", "plain.json")] {
        let mut args: Vec<String> = FIO_JOB.iter().map(|s| s.to_string()).collect();
        args.push(format!("--output-format={fmt}"));
        args.push(format!("--output={name}"));
        if fmt == "json+" {
            args.extend(
                [
                    "--write_bw_log=mixed",
                    "--write_lat_log=mixed",
                    "--log_avg_msec=200",
                ]
                .map(String::from),
            );
        }
        let o = std::process::Command::new("fio")
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = run_in(
        dir.path(),
        &[
            "report",
            "plus.json",
            "mixed_bw.1.log",
            "mixed_clat.1.log",
            "-o",
            "plus.html",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("plus.html")).unwrap();
    assert!(
        html.contains("mixed_bw.1.log — bandwidth"),
        "fio's bw log drawn"
    );
    assert!(
        html.contains("mixed_clat.1.log — latency"),
        "fio's clat log drawn"
    );
    assert!(html.contains("Latency histogram (json+ bins)"));
    assert!(html.contains("Latency percentiles"));
    assert!(html.contains("mixed read") && html.contains("mixed write"));
    let charts = html_check::check_report(&dir.path().join("plus.html"));
    assert!(charts >= 2 + 2 * 2 + 2, "{charts}");

    // Plain json: no bins, so no histogram, but still a report; and two
    // files together.
    let o = run_in(
        dir.path(),
        &["report", "plain.json", "plus.json", "-o", "both.html"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let both = std::fs::read_to_string(dir.path().join("both.html")).unwrap();
    assert!(both.contains("plain.json") && both.contains("plus.json"));
    html_check::check_xml(&both, "both.html");
}

#[test]
fn report_of_iomark_json_shows_throughput_over_time_and_environment() {
    let dir = tempdir();
    let mut args = FIO_JOB.to_vec();
    args.push("--output-format=json+");
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.path().join("io.json"), &o.stdout).unwrap();
    let r = run_in(dir.path(), &["report", "io.json"]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(stdout(&r).contains("iomark-report.html"));
    let html = std::fs::read_to_string(dir.path().join("iomark-report.html")).unwrap();
    for s in [
        "Bandwidth over time",
        "IOPS over time",
        "Latency histogram",
        "Host",
        "fs_type",
        "kernel",
    ] {
        assert!(html.contains(s), "missing {s}");
    }
    html_check::check_report(&dir.path().join("iomark-report.html"));
}

#[test]
fn report_refuses_what_it_cannot_read() {
    let dir = tempdir();
    std::fs::write(dir.path().join("x.json"), "{\"hello\": 1}").unwrap();
    for args in [
        vec!["report"],
        vec!["report", "x.json"],
        vec!["report", "missing.json"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert!(!dir.path().join("iomark-report.html").exists());
}

#[test]
fn buffered_jobs_smaller_than_free_ram_get_a_cache_warning() {
    let dir = tempdir();
    let base = [
        "--name=small",
        "--rw=read",
        "--size=4m",
        "--output-format=json",
    ];
    let o = run_in(dir.path(), &base);
    assert!(o.status.success());
    assert!(stderr(&o).contains("page cache"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["iomark"]["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w["kind"] == "page-cache" && w["job"] == "small"),
        "{w:?}"
    );
    let mut direct = base.to_vec();
    direct.push("--direct=1");
    let o = run_in(dir.path(), &direct);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("page cache"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v["iomark"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "page-cache"));
}

#[test]
fn a_memory_filesystem_is_named_in_the_warnings() {
    let shm = std::path::Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|m| {
            m.lines()
                .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "))
        })
        .unwrap_or(false);
    if !shm.is_dir() || !is_tmpfs {
        crate::common::missing("/dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let o = run_in(
        dir.path(),
        &[
            "--name=ram",
            "--rw=write",
            "--size=1m",
            "--direct=1",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["iomark"]["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| w["kind"] == "memory-filesystem"), "{w:?}");
    assert_eq!(
        v["iomark"]["environment"]["targets"][0]["memory_backed"],
        true
    );
}
