//! iomark's results file for `quick`, `suite` and `sweep`: one JSON
//! document holding what ran and everything measured.
//!
//! ```text
//! {
//!   "iomark version": "0.1.0",
//!   "schema_version": 1,
//!   "kind": "quick" | "suite" | "sweep",
//!   "label": "…",                          only with --label
//!   "title", "timestamp", "time",
//!   "settings": { … how it was run … },
//!   "jobfile": "the fio job file of one pass",
//!   "notes": [ "…" ],                      fallbacks worth knowing
//!   "warnings": [ {"kind", "job", "message"} ],   cache honesty
//!   "environment": { "host": {…}, "targets": [ {…} ] },
//!   "interrupted": false,
//!   "tests": [ { "name", "section", "direction", "params": {every job option
//!                that defines the test: rw, rwmixread, bs, bssplit, iodepth, numjobs,
//!                size, runtime, ioengine, direct, fdatasync, …},
//!                "passes": [ {"bw_bytes", "iops", "lat_mean_ns", "lat_p99_ns"} … ],
//!                "summary": { metric: {"n", "median", "q1", "q3", "min", "max"} } } ],
//!   "cluster": { "ranks", "hosts": [ {"hostname", "ranks"} ], "spread_over" }
//!                                          only under MPI: then each test also has
//!                "clients": [ {"name", "hostname", "ranks", "passes": [ {… "total_ios"} ]} ],
//!                "spread": {"over", "clients", "iops": {"min", "max"}, "bw_bytes": {…}},
//!              and each test's figures are the sum over every rank
//!   "sweep": { … only for sweeps … },
//!   "runs": [ { "section", "pass", "result": <fio-format JSON+ document> } ]
//! }
//! ```
//!
//! Each `runs[].result` is a complete fio-format document, so the raw
//! per-pass figures stay available to fio tools.

use serde_json::{json, Map, Value};

use super::runner::SuiteOutcome;
use crate::results::dataset::{round3, METRICS};
use crate::results::stats;

/// The version of this layout, written as `schema_version` (files
/// without the key are of the layout before it was versioned, which
/// lacked only `schema_version` and `label`).
pub const SCHEMA_VERSION: u32 = 1;

pub struct BundleInfo {
    pub kind: &'static str,
    /// `--label`: written as the top-level `label`.
    pub label: Option<String>,
    pub title: String,
    pub settings: Value,
    pub jobfile: String,
    pub notes: Vec<String>,
    /// Warnings known before running (e.g. no direct I/O).
    pub warnings: Vec<Value>,
    pub environment: Value,
    pub sweep: Option<Value>,
    /// Under MPI: the ranks and hosts ([`cluster_json`]).
    pub cluster: Option<Value>,
}

/// The `cluster` object of a benchmark run on many ranks.
pub fn cluster_json(r: &crate::cluster::Ranks) -> Value {
    let hosts: Vec<Value> = r
        .hosts
        .names
        .iter()
        .zip(&r.hosts.ranks)
        .map(|(h, ranks)| json!({"hostname": h, "ranks": ranks.iter().collect::<Vec<u32>>()}))
        .collect();
    let over = if hosts.len() > 1 { "hosts" } else { "ranks" };
    json!({"ranks": r.size(), "hosts": hosts, "spread_over": over})
}

/// Each client's figures of direction `dir` of a test, and their spread.
fn clients_json(t: &super::runner::TestOutcome, dir: &str) -> Option<(Value, Value)> {
    let sp = super::runner::client_spread(&t.clients, dir)?;
    let clients: Vec<Value> = t
        .clients
        .iter()
        .map(|c| {
            let passes: Vec<Value> = c
                .dirs
                .iter()
                .filter(|d| d.dir == dir)
                .flat_map(|d| {
                    d.passes.iter().zip(&d.ios).map(|(m, n)| {
                        let mut v = m.to_json();
                        v["total_ios"] = json!(n);
                        v
                    })
                })
                .collect();
            json!({
                "name": c.client.name,
                "hostname": c.client.hostname,
                "ranks": c.client.ranks,
                "passes": passes,
            })
        })
        .collect();
    let spread = json!({
        "over": format!("{}s", sp.unit),
        "clients": sp.clients,
        "iops": {"min": round3(sp.iops.0), "max": round3(sp.iops.1)},
        "bw_bytes": {"min": round3(sp.bw_bytes.0), "max": round3(sp.bw_bytes.1)},
    });
    Some((Value::Array(clients), spread))
}

fn summary_json(values: &[f64]) -> Value {
    let s = stats::summarize(values);
    json!({
        "n": s.n,
        "median": round3(s.median),
        "q1": round3(s.q1),
        "q3": round3(s.q3),
        "min": round3(s.min),
        "max": round3(s.max),
    })
}

pub fn build(info: BundleInfo, out: &SuiteOutcome) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut warnings = info.warnings;
    let mut tests = Vec::new();
    let mut runs = Vec::new();
    for t in &out.tests {
        for d in &t.dirs {
            let mut summary = Map::new();
            for m in METRICS {
                let v: Vec<f64> = d
                    .passes
                    .iter()
                    .map(m.get)
                    .filter(|x| x.is_finite())
                    .collect();
                summary.insert(m.key.into(), summary_json(&v));
            }
            let mut entry = json!({
                "name": t.test.label,
                "section": t.test.section,
                "direction": d.dir,
                "params": t.params.to_json(),
                "passes": d.passes.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
                "summary": summary,
            });
            if let Some((clients, spread)) = clients_json(t, &d.dir) {
                entry["clients"] = clients;
                entry["spread"] = spread;
            }
            tests.push(entry);
        }
        for (i, doc) in t.runs.iter().enumerate() {
            for w in doc
                .pointer("/iomark/warnings")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                // Once per kind and job: free RAM in the text varies.
                if !warnings
                    .iter()
                    .any(|x| x["kind"] == w["kind"] && x["job"] == w["job"])
                {
                    warnings.push(w.clone());
                }
            }
            runs.push(json!({"section": t.test.section, "pass": i + 1, "result": doc}));
        }
    }
    let mut m = Map::new();
    m.insert("iomark version".into(), json!(env!("CARGO_PKG_VERSION")));
    m.insert("schema_version".into(), json!(SCHEMA_VERSION));
    m.insert("kind".into(), json!(info.kind));
    if let Some(l) = &info.label {
        m.insert("label".into(), json!(l));
    }
    m.insert("title".into(), json!(info.title));
    m.insert("timestamp".into(), json!(now));
    m.insert("time".into(), json!(crate::report::fmt::ctime(now)));
    m.insert("settings".into(), info.settings);
    m.insert("jobfile".into(), json!(info.jobfile));
    m.insert("notes".into(), json!(info.notes));
    m.insert("warnings".into(), Value::Array(warnings));
    m.insert("environment".into(), info.environment);
    if let Some(c) = info.cluster {
        m.insert("cluster".into(), c);
    }
    m.insert("interrupted".into(), json!(out.interrupted));
    if let Some(e) = &out.error {
        m.insert("error".into(), json!(e));
    }
    m.insert("tests".into(), Value::Array(tests));
    if let Some(s) = info.sweep {
        m.insert("sweep".into(), s);
    }
    m.insert("runs".into(), Value::Array(runs));
    Value::Object(m)
}
