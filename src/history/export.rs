//! `iomark history export`: the runs as CSV, JSON lines or InfluxDB
//! line protocol, one record per run and test.
//!
//! - CSV (RFC 4180 quoting): run id, ISO time (UTC), label, kind, host,
//!   device, model, serial, firmware, filesystem, kernel, tool, version,
//!   test key, name, direction, the run's figures (bytes/s, IOPS, mean and
//!   p99 latency in ns), the number of passes;
//! - JSON lines: the same plus the defining settings, every pass's
//!   figures and the merged latency histogram bins (`[[ns, count], …]`);
//! - InfluxDB line protocol (for Grafana): measurement `iomark`, tags
//!   `label`, `host`, `device`, `serial`, `kind`, `test`, `dir` (empty
//!   ones left out), fields `bw_bytes`, `iops`, `lat_mean_ns`,
//!   `lat_p99_ns` (those measured) and `run` (the run id, an integer), a
//!   timestamp in nanoseconds.
//!
//! Each format also gives the bandwidth in the unit the run was recorded
//! in (MB/s for CrystalDiskMark-style results such as `quick`, MiB/s for
//! fio jobs; `--units` chooses one for all): CSV columns `bw` and
//! `bw_unit` after `passes`, JSON fields `bw` and `bw_unit`, and in the
//! line protocol a field `bw` with a tag `bw_unit`.

use std::fmt::Write;

use serde_json::json;

use super::time::iso_utc;
use super::{Run, TestRun};
use crate::results::units::BwUnit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
    Influx,
}

pub const FORMATS: &[&str] = &["csv", "jsonl", "influx"];

impl Format {
    pub fn parse(v: &str) -> Result<Format, String> {
        match v {
            "csv" => Ok(Format::Csv),
            "jsonl" | "json-lines" => Ok(Format::Jsonl),
            "influx" | "influxdb" | "line-protocol" => Ok(Format::Influx),
            _ => Err(crate::report::text::not_one_of("format", v, FORMATS)),
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

const CSV_HEADER: &str = "run,time,label,kind,host,device,model,serial,firmware,filesystem,kernel,tool,version,test,name,dir,bw_bytes,iops,lat_mean_ns,lat_p99_ns,passes,bw,bw_unit";

/// The bandwidth in `unit`, as a number (NaN when not measured).
fn bw_in(t: &TestRun, unit: BwUnit) -> f64 {
    t.value.bw_bytes / unit.bytes()
}

fn csv_row(r: &Run, t: &TestRun, unit: BwUnit) -> String {
    let text = [
        r.id.unwrap_or(0).to_string(),
        iso_utc(r.time),
        r.label.clone().unwrap_or_default(),
        r.kind.clone(),
        r.host.clone(),
        r.target.device.clone(),
        r.target.model.clone(),
        r.target.serial.clone(),
        r.target.firmware.clone(),
        r.target.fs_type.clone(),
        r.kernel.clone(),
        r.tool.clone(),
        r.version.clone(),
        t.key.clone(),
        t.name.clone(),
        t.dir.clone(),
        num(t.value.bw_bytes),
        num(t.value.iops),
        num(t.value.lat_mean_ns),
        num(t.value.lat_p99_ns),
        t.passes.len().to_string(),
        num(bw_in(t, unit)),
        unit.name().to_string(),
    ];
    let fields: Vec<String> = text.iter().map(|s| csv_field(s)).collect();
    fields.join(",")
}

fn json_num(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

fn jsonl_row(r: &Run, t: &TestRun, unit: BwUnit) -> String {
    json!({
        "run": r.id,
        "time": iso_utc(r.time),
        "timestamp": r.time,
        "label": r.label,
        "kind": r.kind,
        "host": r.host,
        "kernel": r.kernel,
        "tool": r.tool,
        "version": r.version,
        "target": {
            "path": r.target.path,
            "device": r.target.device,
            "model": r.target.model,
            "serial": r.target.serial,
            "firmware": r.target.firmware,
            "fs_type": r.target.fs_type,
            "mount_options": r.target.mount_options,
        },
        "jobfile_digest": r.jobfile_digest,
        "test": t.key,
        "name": t.name,
        "dir": t.dir,
        "settings": t.settings,
        "bw_bytes": json_num(t.value.bw_bytes),
        "bw": json_num(bw_in(t, unit)),
        "bw_unit": unit.name(),
        "iops": json_num(t.value.iops),
        "lat_mean_ns": json_num(t.value.lat_mean_ns),
        "lat_p99_ns": json_num(t.value.lat_p99_ns),
        "passes": t.passes.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
        "lat_kind": t.lat_kind,
        "bins": t.bins,
    })
    .to_string()
}

/// Escapes a tag key or value of the line protocol (commas, equals
/// signs, spaces; line breaks become spaces).
fn tag(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
        .replace('\\', "\\\\")
        .replace(',', "\\,")
        .replace('=', "\\=")
        .replace(' ', "\\ ")
}

fn influx_row(r: &Run, t: &TestRun, unit: BwUnit) -> Option<String> {
    let mut line = String::from("iomark");
    let label = r.label.clone().unwrap_or_default();
    let device = r.device_shown();
    for (k, v) in [
        ("label", label.as_str()),
        ("host", r.host.as_str()),
        ("device", device.as_str()),
        ("serial", r.target.serial.as_str()),
        ("kind", r.kind.as_str()),
        ("test", t.key.as_str()),
        ("dir", t.dir.as_str()),
        ("bw_unit", unit.name()),
    ] {
        if !v.is_empty() {
            let _ = write!(line, ",{k}={}", tag(v));
        }
    }
    let mut fields: Vec<String> = [
        ("bw_bytes", t.value.bw_bytes),
        ("bw", bw_in(t, unit)),
        ("iops", t.value.iops),
        ("lat_mean_ns", t.value.lat_mean_ns),
        ("lat_p99_ns", t.value.lat_p99_ns),
    ]
    .iter()
    .filter(|(_, v)| v.is_finite())
    .map(|(k, v)| format!("{k}={v}"))
    .collect();
    if fields.is_empty() {
        return None;
    }
    fields.push(format!("run={}i", r.id.unwrap_or(0)));
    let _ = write!(
        line,
        " {} {}",
        fields.join(","),
        r.time as i128 * 1_000_000_000
    );
    Some(line)
}

/// The runs in `format`, one line per run and test; bandwidth also in
/// `units`, else in the unit each run was recorded in.
pub fn render(runs: &[Run], format: Format, units: Option<BwUnit>) -> String {
    let mut out = String::new();
    if format == Format::Csv {
        out.push_str(CSV_HEADER);
        out.push('\n');
    }
    for r in runs {
        let unit = units.unwrap_or_else(|| r.recorded_unit());
        for t in &r.tests {
            let line = match format {
                Format::Csv => Some(csv_row(r, t, unit)),
                Format::Jsonl => Some(jsonl_row(r, t, unit)),
                Format::Influx => influx_row(r, t, unit),
            };
            if let Some(l) = line {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::dataset::Metrics;

    fn sample() -> Run {
        Run {
            id: Some(7),
            label: Some("new kernel, take 2".into()),
            kind: "quick".into(),
            time: 1_700_000_000,
            host: "db 1".into(),
            tool: "iomark".into(),
            target: super::super::TargetInfo {
                model: "Disk=X".into(),
                ..Default::default()
            },
            tests: vec![TestRun {
                key: "rnd4k/read".into(),
                name: "RND4K \"Q1\"".into(),
                dir: "read".into(),
                value: Metrics {
                    bw_bytes: 4096.0,
                    iops: 1.5,
                    lat_mean_ns: 10.0,
                    lat_p99_ns: f64::NAN,
                    sync_write: false,
                },
                bins: vec![(10.0, 2)],
                ..TestRun::default()
            }],
            ..Run::default()
        }
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let out = render(&[sample()], Format::Csv, None);
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some(CSV_HEADER));
        let row = lines.next().unwrap();
        assert!(
            row.starts_with("7,2023-11-14T22:13:20Z,\"new kernel, take 2\",quick,db 1,"),
            "{row}"
        );
        assert!(
            row.contains(",\"RND4K \"\"Q1\"\"\",read,4096,1.5,10,,0,0.00390625,MiB/s"),
            "{row}"
        );
    }

    #[test]
    fn influx_lines_escape_tags_and_leave_out_the_unmeasured() {
        let out = render(&[sample()], Format::Influx, None);
        assert_eq!(
            out.trim_end(),
            "iomark,label=new\\ kernel\\,\\ take\\ 2,host=db\\ 1,device=Disk\\=X,kind=quick,\
             test=rnd4k/read,dir=read,bw_unit=MiB/s bw_bytes=4096,bw=0.00390625,iops=1.5,\
             lat_mean_ns=10,run=7i 1700000000000000000"
        );
        // In MB/s when asked.
        let out = render(&[sample()], Format::Influx, Some(BwUnit::Mb));
        assert!(
            out.contains("bw_unit=MB/s bw_bytes=4096,bw=0.004096,"),
            "{out}"
        );
    }

    #[test]
    fn json_lines_carry_the_bins() {
        let out = render(&[sample()], Format::Jsonl, None);
        let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(v["bins"], json!([[10.0, 2]]));
        assert_eq!(v["lat_p99_ns"], serde_json::Value::Null);
        assert_eq!(v["label"], "new kernel, take 2");
        assert_eq!(v["bw_unit"], "MiB/s");
        assert_eq!(v["bw"], 0.00390625);
    }
}
