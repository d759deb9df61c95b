//! The report of a run over several hosts (`report::cluster`), without
//! MPI: two "hosts" are the same null job list run twice through a
//! `Session` in this process, and the checks are on what the formats
//! say about them — every host, and "All clients" merged exactly.

use std::collections::BTreeSet;
use std::path::PathBuf;

use iomark::report::cluster::{self, ClusterInfo, Host, ALL_CLIENTS};
use iomark::report::Outputs;
use iomark::run::session::{Session, SessionOptions};
use iomark::run::{RunOptions, RunResult};
use iomark::stats::histogram::Histogram;
use serde_json::Value;

/// Runs a job file's text through a session (quiet; with the fake clock
/// when `fake`).
fn run(text: &str, fake: bool) -> RunResult {
    let path = PathBuf::from("cluster.fio");
    let secs = iomark::job::jobfile::parse_jobfile_text(text, &path).expect("parses");
    let src = iomark::job::JobSources {
        files: vec![(path, secs)],
        ..Default::default()
    };
    let list = iomark::workload::checked_jobs(&src).expect("checks");
    let opts = SessionOptions {
        run: RunOptions {
            quiet: true,
            fake_clock_step: fake.then_some(1000),
            ..RunOptions::default()
        },
        ..SessionOptions::default()
    };
    let r = Session::new(list, opts)
        .prepare()
        .expect("prepares")
        .run()
        .expect("runs");
    assert!(!r.failed());
    r
}

fn two_hosts(text: &str, fake: bool) -> Vec<Host> {
    ["h1", "h2"]
        .iter()
        .enumerate()
        .map(|(i, name)| Host {
            hostname: name.to_string(),
            ranks: vec![2 * i as u32, 2 * i as u32 + 1],
            pid: 100 + i as u32,
            result: run(text, fake),
        })
        .collect()
}

fn outputs(terse: Option<u32>, json: bool, plus: bool, normal: bool) -> Outputs {
    Outputs {
        terse,
        json,
        json_plus: plus,
        normal,
    }
}

/// Two job sections, the first with two clones; real clock, so the
/// latencies spread over many histogram buckets.
const JOBS: &str = "[global]\nioengine=null\nbs=4k\nsize=1m\n\
                    [reader]\nrw=randread\nnumjobs=2\n[writer]\nrw=write\n";

#[test]
#[allow(clippy::too_many_lines)]
fn json_has_every_host_then_all_clients_merged_exactly() {
    let hosts = two_hosts(JOBS, false);
    let c = cluster::build(
        &hosts,
        &ClusterInfo {
            ranks: 4,
            ..Default::default()
        },
    );
    let text = cluster::render(&c, &outputs(None, false, true, false));
    let doc: Value = serde_json::from_str(&text).expect("one JSON document");
    let cs = doc["client_stats"].as_array().expect("client_stats");
    // Three clones on each host, then one All clients (one group).
    let names: Vec<(&str, &str)> = cs
        .iter()
        .map(|e| {
            (
                e["hostname"].as_str().unwrap(),
                e["jobname"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("h1", "reader"),
            ("h1", "reader"),
            ("h1", "writer"),
            ("h2", "reader"),
            ("h2", "reader"),
            ("h2", "writer"),
            ("h2", ALL_CLIENTS),
        ]
    );
    let (hosts_part, all) = cs.split_at(6);
    let all = &all[0];
    for dir in ["read", "write"] {
        let sum: u64 = hosts_part
            .iter()
            .map(|e| e[dir]["total_ios"].as_u64().unwrap())
            .sum();
        assert_eq!(all[dir]["total_ios"].as_u64().unwrap(), sum, "{dir}");
        let bytes: u64 = hosts_part
            .iter()
            .map(|e| e[dir]["io_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(all[dir]["io_bytes"].as_u64().unwrap(), bytes, "{dir}");
    }
    assert_eq!(all["read"]["total_ios"], 2 * 2 * 256);

    // The percentiles of a histogram merged by hand from every clone.
    let mut by_hand = Histogram::new();
    for h in &hosts {
        for j in &h.result.jobs {
            by_hand.merge(&j.outcome.stats.dir[0].clat);
        }
    }
    let list = iomark::job::spec::DEFAULT_PERCENTILES;
    let want = by_hand.percentiles(&list);
    let got = &all["read"]["clat_ns"]["percentile"];
    for (p, v) in list.iter().zip(&want) {
        assert_eq!(got[format!("{p:.6}")].as_u64(), Some(*v), "{p}th");
    }
    assert!(
        want.first() != want.last(),
        "the real clock spreads latencies: {want:?}"
    );
    // json+ bins: the bin-wise sum of the host entries' bins.
    let mut bins = std::collections::BTreeMap::<String, u64>::new();
    for e in hosts_part {
        if let Some(b) = e["read"]["clat_ns"]["bins"].as_object() {
            for (k, v) in b {
                *bins.entry(k.clone()).or_default() += v.as_u64().unwrap();
            }
        }
    }
    let all_bins: std::collections::BTreeMap<String, u64> = all["read"]["clat_ns"]["bins"]
        .as_object()
        .expect("All clients bins")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(all_bins, bins);
    assert_eq!(all["read"]["clat_ns"]["N"], 4 * 256);

    // The top-level jobs: one entry per section over both hosts.
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["jobname"], "reader");
    assert_eq!(jobs[0]["read"]["total_ios"], 4 * 256);
    assert_eq!(jobs[1]["write"]["total_ios"], 2 * 256);
    assert_eq!(
        jobs[0]["read"]["clat_ns"]["percentile"]["99.000000"].as_u64(),
        Some(
            {
                let mut h = Histogram::new();
                for host in &hosts {
                    for j in host.result.jobs.iter().filter(|j| j.job.job_index == 0) {
                        h.merge(&j.outcome.stats.dir[0].clat);
                    }
                }
                h
            }
            .percentiles(&[99.0])[0]
        )
    );
    let cl = &doc["iomark"]["cluster"];
    assert_eq!(cl["ranks"], 4);
    assert_eq!(cl["hosts"][1]["ranks"], serde_json::json!([2, 3]));
}

#[test]
fn all_clients_json_entry_has_fios_keys() {
    let c = cluster::build(
        &two_hosts(JOBS, true),
        &ClusterInfo {
            ranks: 2,
            ..Default::default()
        },
    );
    let doc = cluster::document(&c, false);
    let cs = doc["client_stats"].as_array().unwrap();
    let keys = |v: &Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    // The keys of fio 3.33's "All clients" entry (fio --client=A job
    // --client=B job --output-format=json, two servers).
    let fio_all: BTreeSet<String> = [
        "jobname",
        "groupid",
        "error",
        "read",
        "write",
        "trim",
        "sync",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "majf",
        "minf",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
        "hostname",
        "port",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(keys(cs.last().unwrap()), fio_all);
    // A host's entry: what fio's client entry has, and the job options.
    let host = keys(&cs[0]);
    let fio_client_extra = [
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ];
    for k in fio_all.iter().map(String::as_str).chain(fio_client_extra) {
        assert!(host.contains(k), "{k}");
    }
    assert!(host.contains("job options"));
    assert_eq!(cs[0]["port"], 0);
}

#[test]
fn text_and_terse_show_every_host_and_all_clients() {
    let text = "[global]\nioengine=null\nbs=4k\nsize=256k\ngroup_reporting\n\
                [g]\nrw=randread\nnumjobs=2\n[w]\nrw=write\nstonewall\n";
    let c = cluster::build(
        &two_hosts(text, true),
        &ClusterInfo {
            ranks: 2,
            ..Default::default()
        },
    );
    let normal = cluster::render(&c, &outputs(None, false, false, true));
    let h1 = normal
        .find("<h1> \ng: (groupid=0, jobs=2)")
        .expect("h1's block");
    let h2 = normal
        .find("<h2> \ng: (groupid=0, jobs=2)")
        .expect("h2's block");
    let a0 = normal
        .find("All clients: (groupid=0, jobs=4): err= 0: pid=0")
        .expect("All clients of group 0");
    let a1 = normal
        .find("All clients: (groupid=1, jobs=2)")
        .expect("All clients of group 1");
    assert!(h1 < h2 && h2 < a0 && a0 < a1, "{normal}");
    // Each host's own run status, then the one over both hosts.
    assert!(normal[a1..].contains("\nRun status group 0 (all clients):\n   READ: "));
    let status: Vec<&str> = normal
        .lines()
        .filter(|l| l.starts_with("   READ: "))
        .collect();
    assert_eq!(status.len(), 3, "{normal}");
    assert!(status[2].contains("io=1024KiB"), "{}", status[2]);
    assert!(status[0].contains("io=512KiB"), "{}", status[0]);
    assert!(normal[a0..].contains("issued rwts: total=256,0,0,0"));

    let terse = cluster::render(&c, &outputs(Some(3), false, false, false));
    let lines: Vec<Vec<&str>> = terse.lines().map(|l| l.split(';').collect()).collect();
    let names: Vec<(&str, &str)> = lines.iter().map(|f| (f[2], f[3])).collect();
    assert_eq!(
        names,
        vec![
            ("g", "0"),
            ("w", "1"),
            ("g", "0"),
            ("w", "1"),
            (ALL_CLIENTS, "0"),
            (ALL_CLIENTS, "1"),
        ]
    );
    // Field 6: read KiB; All clients holds both hosts'.
    assert_eq!(lines[4][5], "1024");
    assert!(lines.iter().all(|f| f.len() == lines[0].len()));

    // All formats at once: terse, then JSON, then text, as on one host.
    let all = cluster::render(&c, &outputs(Some(3), true, false, true));
    let j = all.find("{\n").unwrap();
    assert!(all[..j].lines().count() == 6 && all[j..].contains("\"client_stats\""));
    assert!(all.ends_with(&normal));
}

#[test]
fn snapshot_two_hosts() {
    let text = "[global]\nioengine=null\nbs=4k\nsize=256k\n\
                [r]\nrw=randread\nnumjobs=2\ngroup_reporting\n[w]\nrw=write\nstonewall\n";
    let c = cluster::build(
        &two_hosts(text, true),
        &ClusterInfo {
            ranks: 2,
            ..Default::default()
        },
    );
    let out = cluster::render(&c, &outputs(None, false, false, true));
    insta::assert_snapshot!("two_hosts", out);
}
