//! iomark's own additions to the JSON document, under the top-level
//! "iomark" key so fio's layout stays untouched:
//!
//! - `environment`: the host (kernel, CPU model and count, RAM, CPU
//!   governor) and, for each target, its filesystem, mount options, block
//!   device, device model, I/O scheduler and rotational flag — so a result
//!   says what it measured;
//! - `warnings`: cache honesty — buffered jobs whose working set fits in
//!   free RAM (the page cache probably served them), targets on
//!   memory-backed filesystems — the run's notes, and CPU overcommit;
//! - `timeline`: per-job throughput over time, parallel to `jobs`.
//!
//! Rendered from what the run captured (`host::Environment`, the
//! warnings) before it started; nothing here reads the system.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::Report;
use crate::host::{report_targets, Environment, Host, Target, Warning};

fn opt<T: Into<Value>>(m: &mut Map<String, Value>, k: &str, v: Option<T>) {
    if let Some(v) = v {
        m.insert(k.into(), v.into());
    }
}

pub fn host_json(h: &Host) -> Value {
    let mut m = Map::new();
    m.insert("hostname".into(), json!(h.hostname));
    m.insert("kernel".into(), json!(h.kernel));
    m.insert("machine".into(), json!(h.machine));
    m.insert("cpu_model".into(), json!(h.cpu_model));
    m.insert("cpus".into(), json!(h.cpus));
    m.insert("ram_bytes".into(), json!(h.ram_bytes));
    m.insert("mem_available_bytes".into(), json!(h.mem_available_bytes));
    opt(&mut m, "cpu_governor", h.cpu_governor.clone());
    Value::Object(m)
}

pub fn target_json(t: &Target) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), json!(t.path));
    opt(&mut m, "fs_type", t.fs_type.clone());
    opt(&mut m, "mount_point", t.mount_point.clone());
    opt(&mut m, "mount_source", t.mount_source.clone());
    opt(&mut m, "mount_options", t.mount_options.clone());
    opt(&mut m, "device", t.device.clone());
    if !t.slaves.is_empty() {
        m.insert("slaves".into(), json!(t.slaves));
    }
    opt(&mut m, "device_model", t.device_model.clone());
    opt(&mut m, "device_serial", t.device_serial.clone());
    opt(&mut m, "device_firmware", t.device_firmware.clone());
    opt(&mut m, "device_size_bytes", t.device_size_bytes);
    opt(&mut m, "scheduler", t.scheduler.clone());
    opt(&mut m, "rotational", t.rotational);
    if t.memory_backed() {
        m.insert("memory_backed".into(), json!(true));
    }
    Value::Object(m)
}

/// The environment record for a set of target paths (duplicates and
/// paths on the same filesystem and device are described once).
pub fn environment_json(env: &Environment, paths: &[PathBuf]) -> Value {
    let targets: Vec<Value> = env.distinct(paths).into_iter().map(target_json).collect();
    json!({
        "host": host_json(&env.host),
        "targets": targets,
    })
}

pub fn warnings_json(w: &[Warning]) -> Value {
    Value::Array(
        w.iter()
            .map(|w| json!({"kind": w.kind, "job": w.job, "message": w.message}))
            .collect(),
    )
}

fn timeline_json(report: &Report) -> Option<Value> {
    if report.jobs.iter().all(|j| j.stats.timeline.is_empty()) {
        return None;
    }
    let interval = report
        .jobs
        .iter()
        .map(|j| j.stats.timeline.interval_ms)
        .max()
        .unwrap_or(0);
    let jobs: Vec<Value> = report
        .jobs
        .iter()
        .map(|j| {
            let r = j.stats.timeline.rates();
            let mut m = Map::new();
            m.insert("jobname".into(), json!(j.name));
            let start = j.stats.timeline.points.first().map(|p| p.t_ms).unwrap_or(0);
            m.insert("start_ms".into(), json!(start));
            m.insert("t_ms".into(), json!(r.t_ms));
            for (d, name) in ["read", "write", "trim"].iter().enumerate() {
                if j.stats.dir[d].ios == 0 && r.iops[d].iter().all(|v| *v == 0.0) {
                    continue;
                }
                let kib: Vec<f64> = r.bw_bytes[d].iter().map(|b| (b / 1024.0).round()).collect();
                let iops: Vec<f64> = r.iops[d]
                    .iter()
                    .map(|v| (v * 10.0).round() / 10.0)
                    .collect();
                m.insert(name.to_string(), json!({"bw": kib, "iops": iops}));
            }
            Value::Object(m)
        })
        .collect();
    Some(json!({"interval_ms": interval, "jobs": jobs}))
}

/// The "iomark" object of a JSON document: environment, warnings and
/// timeline (the timeline's `jobs` run parallel to the document's `jobs`).
pub fn iomark_section(report: &Report) -> Value {
    let mut paths: Vec<PathBuf> = Vec::new();
    for j in &report.jobs {
        for p in report_targets(&j.spec) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let mut m = Map::new();
    let mut env = environment_json(&report.environment, &paths);
    if report.fake_clock {
        // A deterministic run (--fake-clock) reports no figure that moves
        // between two runs of the same job.
        env["host"]["mem_available_bytes"] = json!(0);
    }
    m.insert("environment".into(), env);
    let mut warnings = report.warnings.clone();
    warnings.extend(report.overcommit.iter().map(|o| Warning {
        kind: "cpu-overcommit",
        job: o.job.clone(),
        message: o.message(),
    }));
    m.insert("warnings".into(), warnings_json(&warnings));
    if let Some(t) = timeline_json(report) {
        m.insert("timeline".into(), t);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_rendered_from_what_was_captured() {
        let env = Environment {
            host: Host {
                hostname: "h1".into(),
                cpus: 3,
                ..Host::default()
            },
            targets: vec![
                Target {
                    path: "/a/f".into(),
                    fs_type: Some("tmpfs".into()),
                    mount_point: Some("/a".into()),
                    ..Target::default()
                },
                Target {
                    path: "/a/g".into(),
                    fs_type: Some("tmpfs".into()),
                    mount_point: Some("/a".into()),
                    ..Target::default()
                },
            ],
        };
        let v = environment_json(&env, &["/a/g".into(), "/a/f".into(), "/x".into()]);
        assert_eq!(v["host"]["hostname"], "h1");
        assert_eq!(v["host"]["cpus"], 3);
        // One filesystem: described once, by the first path that names it.
        let t = v["targets"].as_array().unwrap();
        assert_eq!(t.len(), 1, "{v}");
        assert_eq!(t[0]["path"], "/a/g");
        assert_eq!(t[0]["memory_backed"], true);
        assert!(t[0].get("device").is_none(), "unknown values are left out");
    }
}
