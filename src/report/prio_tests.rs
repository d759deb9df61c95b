//! The per-priority statistics in the reports: fio's `prios` array in
//! JSON (and json+ bins), and its per-priority lines in the text report,
//! shown when two or more priorities saw I/O.

use std::sync::Arc;

use serde_json::Value;

use super::json::{job_entry, Entry};
use super::normal::job_block;
use super::{JobReport, Report};
use crate::stats::histogram::Histogram;
use crate::stats::{JobStats, PrioStat};

/// A read job whose reads ran at the priorities `prios` (value, count,
/// latency in µs), and nothing else.
fn report(opts: &[(&str, &str)], prios: &[(u16, u64, u64)]) -> JobReport {
    let mut all = vec![("rw", "read"), ("ioengine", "libaio")];
    all.extend_from_slice(opts);
    let spec = crate::job::test_spec(&all);
    let mut stats = JobStats::default();
    let d = &mut stats.dir[0];
    for (v, n, us) in prios {
        let mut lat = Histogram::new();
        for k in 0..*n {
            let ns = us * 1000 + k;
            lat.record(ns);
            d.clat.record(ns);
            d.lat.record(ns + 500);
        }
        d.ios += n;
        d.bytes += n * 4096;
        d.prios.push(PrioStat { ioprio: *v, lat });
    }
    d.runtime_ms = 1000;
    JobReport {
        name: "j".into(),
        groupid: 0,
        nr_jobs: 1,
        error: 0,
        error_msg: None,
        stats,
        mixed: None,
        spec: Arc::new(spec),
        start_unix_ms: 0,
        pid: 1,
    }
}

fn read_json(r: &JobReport, plus: bool) -> Value {
    job_entry(r, &Report::default(), plus, Entry::Job)["read"].clone()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn the_prios_array_has_fios_keys_in_fios_place() {
    let r = report(&[], &[(0, 300, 50), (0x2000, 100, 20), (0x4003, 0, 1)]);
    let read = read_json(&r, false);
    let k = keys(&read);
    let at = k.iter().position(|k| *k == "prios").expect("prios");
    assert_eq!((k[at - 1], k[at + 1]), ("lat_ns", "bw_min"));
    let prios = read["prios"].as_array().unwrap();
    // Only the priorities that saw I/O, in the order they were counted.
    assert_eq!(prios.len(), 2);
    for (p, (class, level, n)) in prios.iter().zip([(0, 0, 300), (1, 0, 100)]) {
        assert_eq!(keys(p), ["prioclass", "prio", "clat_ns"]);
        assert_eq!(
            (p["prioclass"].as_u64(), p["prio"].as_u64()),
            (Some(class), Some(level))
        );
        let c = &p["clat_ns"];
        assert_eq!(keys(c), ["min", "max", "mean", "stddev", "N", "percentile"]);
        assert_eq!(c["N"].as_u64(), Some(n));
    }
    assert_eq!(prios[1]["clat_ns"]["min"].as_u64(), Some(20_000));
    // json+: the bins of each priority too, adding up to its count.
    let plus = read_json(&r, true);
    let bins = plus["prios"][0]["clat_ns"]["bins"].as_object().unwrap();
    assert_eq!(bins.values().map(|v| v.as_u64().unwrap()).sum::<u64>(), 300);
}

#[test]
fn one_priority_with_io_shows_no_prios() {
    let r = report(&[], &[(0, 300, 50), (0x2000, 0, 20)]);
    assert!(read_json(&r, false).get("prios").is_none());
    assert!(!job_block(&r, &Report::default()).contains(" prio "));
}

#[test]
fn total_latencies_and_hints_are_named() {
    let r = report(
        &[("lat_percentiles", "1")],
        &[(0x4003, 10, 50), (0x200a, 10, 20)],
    );
    let read = read_json(&r, false);
    let p = &read["prios"][1];
    // A hint (newer fio's priohint) is named when one is used.
    assert_eq!(keys(p), ["prioclass", "prio", "priohint", "lat_ns"]);
    assert_eq!(
        (
            p["prioclass"].as_u64(),
            p["prio"].as_u64(),
            p["priohint"].as_u64()
        ),
        (Some(1), Some(2), Some(1))
    );
    assert!(p["lat_ns"]["percentile"].is_object());
    let text = job_block(&r, &Report::default());
    assert!(
        text.contains("\n    lat prio 2/3/0 (nsec): min=50000, max=50009,"),
        "{text}"
    );
    assert!(
        text.contains("\n    lat prio 1/2/1 (50.00% of IOs) percentiles (nsec):\n"),
        "{text}"
    );
}

#[test]
fn text_lines_follow_fio() {
    let r = report(&[], &[(0x4003, 300, 60), (0x2001, 100, 20)]);
    let text = job_block(&r, &Report::default());
    let lines: Vec<&str> = text.lines().collect();
    let at = |p: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no line {p:?} in\n{text}"))
    };
    // The summaries after the lat line, in counting order.
    let lat = at("     lat (nsec)");
    assert_eq!(
        at("    clat prio 2/3 (nsec): min=60000, max=60299, avg=60149.50, stdev=86.75"),
        lat + 1
    );
    assert_eq!(
        at("    clat prio 1/1 (nsec): min=20000, max=20099, avg=20049.50,"),
        lat + 2
    );
    assert_eq!(at("    clat percentiles (nsec):"), lat + 3);
    // Then each priority's percentiles, with its share of the I/Os.
    let a = at("    clat prio 2/3 (75.00% of IOs) percentiles (nsec):");
    let b = at("    clat prio 1/1 (25.00% of IOs) percentiles (nsec):");
    assert_eq!(b, a + 6);
    assert!(
        lines[b + 1].starts_with("     |  1.00th=[20096],"),
        "{}",
        lines[b + 1]
    );
}
