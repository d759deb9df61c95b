//! Results as `report` and `compare` see them, read from any of:
//!
//! - fio's own JSON (`--output-format=json` or `json+`, any fio 3.x, also
//!   client/server output with its `client_stats`), with notices before
//!   the document tolerated and, for `--status-interval` streams, the last
//!   document taken;
//! - iomark's JSON (the same layout plus the "iomark" key: environment,
//!   warnings, per-job timeline);
//! - iomark's results bundles written by `quick`, `suite` and `sweep`
//!   (several passes per test, see `bundle`).
//!
//! Each job direction that did I/O becomes an `Item` with one `Metrics`
//! sample per pass (per input file for plain documents) and the details
//! (percentiles, json+ bins, timeline) of a representative pass.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{stats, ReadError};

/// The four figures compared and tabulated for every item.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    pub bw_bytes: f64,
    pub iops: f64,
    /// Mean total latency (submission + completion), ns.
    pub lat_mean_ns: f64,
    /// 99th percentile latency, ns: of total latency when the job reports
    /// its percentiles (lat_percentiles), else of completion latency.
    pub lat_p99_ns: f64,
    /// The latencies are of a write plus the sync that makes it durable.
    pub sync_write: bool,
}

/// A metric's name, unit and which direction is better.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    pub key: &'static str,
    pub title: &'static str,
    pub higher_is_better: bool,
    pub get: fn(&Metrics) -> f64,
}

pub const METRICS: [MetricDef; 4] = [
    MetricDef {
        key: "bw_bytes",
        title: "bandwidth",
        higher_is_better: true,
        get: |m| m.bw_bytes,
    },
    MetricDef {
        key: "iops",
        title: "IOPS",
        higher_is_better: true,
        get: |m| m.iops,
    },
    MetricDef {
        key: "lat_mean_ns",
        title: "mean latency",
        higher_is_better: false,
        get: |m| m.lat_mean_ns,
    },
    MetricDef {
        key: "lat_p99_ns",
        title: "p99 latency",
        higher_is_better: false,
        get: |m| m.lat_p99_ns,
    },
];

impl Metrics {
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "bw_bytes": round3(self.bw_bytes),
            "iops": round3(self.iops),
            "lat_mean_ns": round3(self.lat_mean_ns),
            "lat_p99_ns": round3(self.lat_p99_ns),
        });
        if self.sync_write {
            v["sync_write"] = Value::Bool(true);
        }
        v
    }

    pub fn from_json(v: &Value) -> Metrics {
        let g = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
        Metrics {
            bw_bytes: g("bw_bytes"),
            iops: g("iops"),
            lat_mean_ns: g("lat_mean_ns"),
            lat_p99_ns: g("lat_p99_ns"),
            sync_write: v.get("sync_write").and_then(Value::as_bool) == Some(true),
        }
    }
}

pub fn round3(v: f64) -> f64 {
    if v.is_finite() {
        (v * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

/// Throughput over time of one job direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Which run this is, for chart captions: "pass 2 of 3 …" or
    /// "the run in FILE".
    pub label: String,
    /// When the job started (its first sample), s since the run started.
    pub start_s: f64,
    /// End of each interval, s since the run started.
    pub t_s: Vec<f64>,
    pub bw_bytes: Vec<f64>,
    pub iops: Vec<f64>,
}

/// The latency detail of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detail {
    /// Which run the detail is of (see `Series::label`).
    pub pass_label: String,
    /// "lat" (total) or "clat" (completion): which latency the
    /// percentiles and bins describe.
    pub lat_kind: &'static str,
    /// (percentile, ns), ascending.
    pub percentiles: Vec<(f64, f64)>,
    /// json+ histogram bins: (latency ns, count), ascending.
    pub bins: Vec<(f64, f64)>,
    /// Time to first byte (engines that talk to a server: `ttfb_ns`):
    /// (percentile, ns), ascending; empty for other engines.
    pub ttfb: Vec<(f64, f64)>,
    pub timeline: Option<Series>,
}

impl Detail {
    /// The latency at percentile `p` of the curve `of` (NaN if absent).
    pub fn at(of: &[(f64, f64)], p: f64) -> f64 {
        of.iter()
            .find(|(q, _)| (*q - p).abs() < 1e-9)
            .map_or(f64::NAN, |x| x.1)
    }
}

/// What a job was asked to do: every option that defines its I/O, as
/// its options were written (the global ones, then its own overriding
/// them), in a fixed order for the usual ones (`LEAD`) and then as given.
/// Options that only name, place, group or report a job (its name, files
/// and directory, logs, percentiles, `group_reporting`, …: see
/// [`defines_the_test`]) are left out. A switch given bare (`time_based`)
/// has an empty value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(pub Vec<(String, String)>);

/// The options shown first, in this order.
const LEAD: [&str; 14] = [
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "iodepth",
    "numjobs",
    "size",
    "runtime",
    "time_based",
    "ioengine",
    "direct",
    "io_size",
];

/// Options that name, place, group or report a job without changing the
/// I/O it does.
const NOT_DEFINING: &[&str] = &[
    "name",
    "description",
    "filename",
    "directory",
    "opendir",
    "filename_format",
    "unique_filename",
    "allow_file_create",
    "allow_mounted_write",
    "allow_destroy_data",
    "allow_special_files",
    "unlink",
    "unlink_each_loop",
    "stonewall",
    "new_group",
    "wait_for",
    "group_reporting",
    "exitall",
    "exitall_on_error",
    "exit_what",
    "thread",
    "stats",
    "disk_util",
    "unified_rw_reporting",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "gtod_reduce",
    "significant_figures",
    "bwavgtime",
    "iopsavgtime",
    "write_iolog",
    "kb_base",
    "unit_base",
    "clocksource",
    "gtod_cpu",
];

/// The canonical name of an option (aliases resolved through the option
/// table; names it does not know stay as given).
fn canonical(name: &str) -> &str {
    crate::job::options::lookup(name).map_or(name, |d| d.name)
}

/// Whether an option changes the I/O a job does (and so tells two tests
/// apart): everything but what names, places, groups or reports a job,
/// and every log option.
pub fn defines_the_test(name: &str) -> bool {
    use crate::job::options::{lookup, Category};
    let c = canonical(name);
    !NOT_DEFINING.contains(&c) && lookup(c).is_none_or(|d| d.category != Category::Logs)
}

/// A value in fio's spelling with its unit: sizes as `8m`, times as `2s`
/// or `500ms` (fio takes a bare number in the option's own unit); other
/// text (percentages, lists) unchanged.
fn option_text(name: &str, v: &str) -> String {
    use crate::job::options::{lookup, Kind};
    match lookup(name).map(|d| d.kind) {
        Some(Kind::Size) => match crate::job::value::parse_size(v, 1024) {
            Ok(b) if b > 0 => super::units::size_text(b),
            _ => v.to_string(),
        },
        Some(Kind::Time(unit)) => match crate::job::value::parse_time_us(v, unit) {
            Ok(us) if us > 0 => super::units::time_text(us),
            _ => v.to_string(),
        },
        _ => v.to_string(),
    }
}

impl Params {
    /// From fio's `global options` and a job's `job options` objects.
    pub fn from_options(global: &Value, job: &Value) -> Params {
        let mut p = Params::default();
        for m in [global, job].into_iter().filter_map(Value::as_object) {
            for (k, v) in m {
                p.set(k, &s(v));
            }
        }
        p.sorted()
    }

    /// From an object of option names and text values (a results
    /// bundle's test `params`).
    pub fn from_json(v: &Value) -> Params {
        Params::from_options(&Value::Null, v)
    }

    pub fn to_json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }

    /// Sets an option that defines the test (others are ignored),
    /// replacing an earlier value of it or of an alias.
    fn set(&mut self, k: &str, v: &str) {
        if !defines_the_test(k) {
            return;
        }
        let c = canonical(k);
        match self.0.iter_mut().find(|(x, _)| canonical(x) == c) {
            Some(e) => *e = (k.to_string(), v.to_string()),
            None => self.0.push((k.to_string(), v.to_string())),
        }
    }

    fn sorted(mut self) -> Params {
        let rank = |k: &str| {
            LEAD.iter()
                .position(|l| *l == canonical(k))
                .unwrap_or(LEAD.len())
        };
        // Stable: options outside LEAD keep their order.
        self.0.sort_by_key(|(k, _)| rank(k));
        self
    }

    /// The value of an option (by its name or an alias), "" when not set.
    pub fn get(&self, k: &str) -> &str {
        let c = canonical(k);
        self.0
            .iter()
            .find(|(x, _)| canonical(x) == c)
            .map_or("", |(_, v)| v.as_str())
    }

    /// These options, with those of `other` this one lacks.
    pub fn or(mut self, other: &Params) -> Params {
        for (k, v) in &other.0 {
            if !self.0.iter().any(|(x, _)| canonical(x) == canonical(k)) {
                self.0.push((k.clone(), v.clone()));
            }
        }
        self.sorted()
    }

    /// The options as `name=value` in fio's spelling (sizes and times with
    /// their units), switches bare.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.clone()
                } else {
                    format!("{k}={}", option_text(k, v))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Job options that do not change the I/O a test does: names, where the
/// files are, how long it runs, logging and reporting, consent. Every
/// other option given to a job is one of its defining settings.
pub const SETTINGS_NOT_DEFINING: &[&str] = &[
    "name",
    "description",
    "filename",
    "directory",
    "filename_format",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "stonewall",
    "new_group",
    "wait_for",
    "group_reporting",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_compression",
    "log_store_compressed",
    "log_entries",
    "per_job_logs",
    "bwavgtime",
    "iopsavgtime",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "unified_rw_reporting",
    "significant_figures",
    "kb_base",
    "unit_base",
    "disk_util",
    "stats",
    "allow_destroy_data",
    "allow_mounted_write",
    "exec_prerun",
    "exec_postrun",
    "unlink",
    "unlink_each_loop",
    "thread",
    "error_dump",
];

/// What lies under the run's first target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetInfo {
    pub path: String,
    pub device: String,
    pub model: String,
    pub serial: String,
    pub firmware: String,
    pub fs_type: String,
    pub mount_options: String,
}

impl TargetInfo {
    /// The first target of an environment object.
    fn of(env: &Value) -> TargetInfo {
        let t = &env["targets"][0];
        TargetInfo {
            path: s(&t["path"]),
            device: s(&t["device"]),
            model: s(&t["device_model"]),
            serial: s(&t["device_serial"]),
            firmware: s(&t["device_firmware"]),
            fs_type: s(&t["fs_type"]),
            mount_options: s(&t["mount_options"]),
        }
    }
}

/// The defining settings of a job entry as written: the document's
/// global options overlaid with the job's own, less
/// [`SETTINGS_NOT_DEFINING`].
pub fn settings_of(job: &Value, global: &Value) -> BTreeMap<String, String> {
    settings_from(global, &job["job options"])
}

/// The defining settings of global options overlaid with a job's own.
fn settings_from(global: &Value, options: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for src in [global, options] {
        if let Some(m) = src.as_object() {
            for (k, v) in m {
                if !SETTINGS_NOT_DEFINING.contains(&k.as_str()) {
                    out.insert(k.clone(), s(v));
                }
            }
        }
    }
    out
}

#[derive(Clone, Debug, Default)]
pub struct Item {
    /// Unique within a data set; equal keys are compared across sets.
    pub key: String,
    pub name: String,
    pub dir: String,
    pub params: Params,
    pub samples: Vec<Metrics>,
    pub detail: Option<Detail>,
    /// Throughput over time of every measured pass (results bundles):
    /// (pass number from 1, series), in pass order.
    pub pass_timelines: Vec<(u64, Series)>,
    /// The defining settings as written (see [`settings_of`]): of the
    /// job, or of the first job of a bundle test's first pass.
    pub settings: BTreeMap<String, String>,
    /// Which latency `bins` count ("" when no entry said).
    pub lat_kind: &'static str,
    /// The json+ bins of every job entry of the direction: each pass,
    /// each clone reported on its own.
    pub bins: Vec<Pairs>,
}

impl Item {
    /// The test and its operation, as reports name them (`get GET`,
    /// `seq-read read`).
    pub fn label(&self) -> String {
        format!("{} {}", self.name, self.op())
    }

    /// The operation as reports name it: an object request by its
    /// method (GET, PUT, DELETE; reads of `http_op=head|list` HEAD or
    /// LIST), file I/O by fio's direction (read, write, trim).
    pub fn op(&self) -> String {
        let has = |key: &str, value: &str| {
            self.params
                .0
                .iter()
                .any(|(k, v)| k == key && v.eq_ignore_ascii_case(value))
        };
        if !has("ioengine", "http") {
            return self.dir.clone();
        }
        let meta = ["head", "list"]
            .into_iter()
            .find(|op| self.dir == "read" && has("http_op", op));
        match meta {
            Some(op) => op.to_ascii_uppercase(),
            None => super::units::method(&self.dir).to_string(),
        }
    }

    pub fn values(&self, m: &MetricDef) -> Vec<f64> {
        self.samples
            .iter()
            .map(m.get)
            .filter(|v| v.is_finite())
            .collect()
    }

    pub fn summary(&self, m: &MetricDef) -> stats::Summary {
        stats::summarize(&self.values(m))
    }
}

/// A warning carried by a result; `key` (kind and job) tells repeats of
/// the same warning apart from different ones (free RAM, in the text,
/// changes from pass to pass).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Warning {
    pub key: String,
    pub text: String,
}

/// Adds warnings not already present (by key).
pub fn add_warnings(to: &mut Vec<Warning>, from: impl IntoIterator<Item = Warning>) {
    for w in from {
        if !to.iter().any(|x| x.key == w.key) {
            to.push(w);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// Where it was read from.
    pub source: String,
    /// "fio", "iomark", "quick", "suite" or "sweep".
    pub kind: String,
    pub title: String,
    /// The run's label (`label` of a results bundle, `iomark.label` of a
    /// job's JSON), "" when it has none.
    pub label: String,
    /// The host it ran on, as it described itself ("" when unknown: fio's
    /// own JSON does not say).
    pub host: String,
    pub version: String,
    pub time: String,
    pub environment: Option<Value>,
    pub warnings: Vec<Warning>,
    pub notes: Vec<String>,
    pub items: Vec<Item>,
    pub sweep: Option<Value>,
    pub jobfile: Option<String>,
    pub settings: Option<Value>,
    pub interrupted: bool,
    /// A results bundle (`quick`, `suite`, `sweep`), not a job's JSON.
    pub bundle: bool,
    /// `timestamp`: seconds since the epoch (0 when absent).
    pub timestamp: i64,
    /// The version of the tool that wrote it (iomark's for iomark JSON,
    /// fio's for fio's).
    pub tool_version: String,
    pub kernel: String,
    pub target: TargetInfo,
    /// A run over several hosts: `iomark.cluster.summary` (per phase and
    /// direction, the slowest and fastest host and the spread).
    pub hosts_summary: Option<Value>,
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One job entry of a document as a data set needs it: its name, host
/// (client/server output), job options and each direction's figures.
#[derive(Clone, Debug)]
struct JobEntry {
    jobname: String,
    hostname: String,
    options: Value,
    dirs: Vec<(&'static str, Metrics, Detail)>,
}

impl JobEntry {
    fn of(job: &Value) -> JobEntry {
        JobEntry {
            jobname: s(&job["jobname"]),
            hostname: job.get("hostname").map(s).unwrap_or_default(),
            options: job.get("job options").cloned().unwrap_or(Value::Null),
            dirs: ["read", "write", "trim"]
                .into_iter()
                .filter_map(|d| dir_metrics(&job[d]).map(|(m, det)| (d, m, det)))
                .collect(),
        }
    }
}

/// A fio/iomark document or a results bundle, read so that it is never
/// held whole: each job entry (`jobs`, `client_stats`) is reduced to what
/// a data set takes of it as it is read, and each pass of a bundle
/// (`runs`) is read the same way; everything else is kept as it is.
#[derive(Clone, Debug, Default)]
pub struct Doc {
    rest: serde_json::Map<String, Value>,
    jobs: Option<Vec<JobEntry>>,
    client_stats: Option<Vec<JobEntry>>,
    /// A bundle's passes.
    runs: Option<Vec<Doc>>,
    /// A bundle pass's result.
    result: Option<Box<Doc>>,
}

impl Doc {
    /// A parsed document, read the same way.
    pub fn of(v: &Value) -> Doc {
        serde::Deserialize::deserialize(v).unwrap_or_default()
    }

    /// The top-level value `k` (Null when absent).
    fn get(&self, k: &str) -> &Value {
        self.rest.get(k).unwrap_or(&Value::Null)
    }

    /// A value by JSON pointer from the top (not into the job entries).
    fn pointer(&self, p: &str) -> Option<&Value> {
        let p = p.strip_prefix('/')?;
        let (first, more) = p.split_once('/').unwrap_or((p, ""));
        let v = self.rest.get(first)?;
        if more.is_empty() {
            Some(v)
        } else {
            v.pointer(&format!("/{more}"))
        }
    }

    /// The job entries: `jobs`, or `client_stats` in fio's client/server
    /// output.
    fn entries(&self) -> Option<&Vec<JobEntry>> {
        self.jobs.as_ref().or(self.client_stats.as_ref())
    }
}

/// Visitor methods that take any value but the one wanted as "none".
macro_rules! none_for_others {
    () => {
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            while map
                .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                .is_some()
            {}
            Ok(Default::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

/// `jobs` or `client_stats`: an array read entry by entry (anything
/// else is none).
struct Entries(Option<Vec<JobEntry>>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Option<Vec<JobEntry>>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("job entries")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(job) = seq.next_element::<Value>()? {
                    out.push(JobEntry::of(&job));
                }
                Ok(Some(out))
            }
            none_for_others!();
        }
        d.deserialize_any(V).map(Entries)
    }
}

/// A bundle's `runs`: an array of passes, each read as a [`Doc`]
/// (anything else is none).
struct Passes(Option<Vec<Doc>>);

impl<'de> serde::Deserialize<'de> for Passes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Option<Vec<Doc>>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("passes")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(p) = seq.next_element::<Doc>()? {
                    out.push(p);
                }
                Ok(Some(out))
            }
            none_for_others!();
        }
        d.deserialize_any(V).map(Passes)
    }
}

impl<'de> serde::Deserialize<'de> for Doc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Doc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON document")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let mut doc = Doc::default();
                while let Some(k) = map.next_key::<String>()? {
                    match k.as_str() {
                        "jobs" => doc.jobs = map.next_value::<Entries>()?.0,
                        "client_stats" => doc.client_stats = map.next_value::<Entries>()?.0,
                        "runs" => doc.runs = map.next_value::<Passes>()?.0,
                        "result" => doc.result = Some(Box::new(map.next_value::<Doc>()?)),
                        _ => {
                            let v = map.next_value::<Value>()?;
                            doc.rest.insert(k, v);
                        }
                    }
                }
                Ok(doc)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Doc::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_unit<E>(self) -> Result<Doc, E> {
                Ok(Doc::default())
            }
            fn visit_none<E>(self) -> Result<Doc, E> {
                Ok(Doc::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The bytes read through it go into a SHA-256 too.
struct Hashing<R> {
    inner: R,
    sha: sha2::Sha256,
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        sha2::Digest::update(&mut self.sha, &buf[..n]);
        Ok(n)
    }
}

/// Reads a results file as [`load`] does, but without the details
/// reports draw (percentiles, timelines: `Item::detail` is None), with
/// the hex SHA-256 of all its bytes: what the results history keeps.
pub fn load_with_digest(path: &Path) -> Result<(Dataset, String), ReadError> {
    read_stream(path, true)
}

/// Reads a results file document by document and job entry by job entry
/// (a file of hundreds of megabytes is never held whole); `lean`: without
/// the details reports draw, each job entry's bins moved into its items.
fn read_stream(path: &Path, lean: bool) -> Result<(Dataset, String), ReadError> {
    use std::io::{BufRead, Read};
    let source = path.display().to_string();
    let unreadable = |why: String| ReadError::Unreadable {
        path: source.clone(),
        why,
    };
    let file = crate::job::jobfile::open_readable(path).map_err(|e| unreadable(e.to_string()))?;
    let mut input = std::io::BufReader::with_capacity(
        1 << 16,
        Hashing {
            inner: file.take(super::MAX_INPUT_BYTES + 1),
            sha: <sha2::Sha256 as sha2::Digest>::new(),
        },
    );
    let io = |e: std::io::Error| unreadable(crate::job::jobfile::io_reason(&e));
    let no_json = || ReadError::malformed(&source, "no JSON document in the file");
    // Notices before the document (as fio prints) are passed over.
    loop {
        let buf = input.fill_buf().map_err(io)?;
        if buf.is_empty() {
            return Err(no_json());
        }
        match buf.iter().position(|b| *b == b'{') {
            Some(i) => {
                input.consume(i);
                break;
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
    let mut last: Option<Doc> = None;
    {
        let stream = serde_json::Deserializer::from_reader(&mut input).into_iter::<Doc>();
        for doc in stream {
            match doc {
                Ok(v) => last = Some(v),
                Err(e) if e.is_io() => return Err(unreadable(e.to_string())),
                Err(e) if last.is_some() && e.is_eof() => break,
                Err(e) => {
                    return Err(ReadError::malformed(
                        &source,
                        format!("not valid JSON: {e}"),
                    ))
                }
            }
        }
    }
    std::io::copy(&mut input, &mut std::io::sink()).map_err(io)?;
    let h = input.into_inner();
    if h.inner.limit() == 0 {
        return Err(unreadable(format!(
            "it is larger than {} bytes",
            super::MAX_INPUT_BYTES
        )));
    }
    let digest = sha2::Digest::finalize(h.sha);
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    let doc = last.ok_or_else(no_json)?;
    Ok((from_doc(doc, &source, lean)?, hex))
}

/// Parses the text of a result file (see the module doc for what it
/// accepts).
pub fn parse_text(text: &str, source: &str) -> Result<Dataset, ReadError> {
    let no_json = || ReadError::malformed(source, "no JSON document in the file");
    let start = text.find('{').ok_or_else(no_json)?;
    let mut last: Option<Doc> = None;
    let stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Doc>();
    for doc in stream {
        match doc {
            Ok(v) => last = Some(v),
            Err(e) if last.is_some() && e.is_eof() => break,
            Err(e) => return Err(ReadError::malformed(source, format!("not valid JSON: {e}"))),
        }
    }
    let v = last.ok_or_else(no_json)?;
    from_doc(v, source, false)
}

pub fn load(path: &Path) -> Result<Dataset, ReadError> {
    read_stream(path, false).map(|(d, _)| d)
}

pub fn from_value(v: &Value, source: &str) -> Result<Dataset, ReadError> {
    from_doc(Doc::of(v), source, false)
}

/// The data set of a document; `lean`: see [`read_stream`].
fn from_doc(mut v: Doc, source: &str, lean: bool) -> Result<Dataset, ReadError> {
    if v.get("tests").is_array() && v.rest.contains_key("kind") {
        return from_bundle(&v, source);
    }
    if v.entries().is_none() {
        return Err(ReadError::malformed(
            source,
            "not a fio/iomark JSON result (no \"jobs\" array) nor an iomark results file",
        ));
    }
    let mut d = Dataset {
        source: source.to_string(),
        kind: if v.rest.contains_key("iomark version") || v.rest.contains_key("iomark") {
            "iomark".into()
        } else {
            "fio".into()
        },
        version: s(v.get("fio version")),
        time: s(v.get("time")),
        environment: v.pointer("/iomark/environment").cloned(),
        label: v.pointer("/iomark/label").map(s).unwrap_or_default(),
        host: v
            .pointer("/iomark/environment/host/hostname")
            .map(s)
            .unwrap_or_default(),
        interrupted: v.get("interrupted").as_bool().unwrap_or(false),
        hosts_summary: v
            .pointer("/iomark/cluster/summary")
            .filter(|x| x.as_array().is_some_and(|a| !a.is_empty()))
            .cloned(),
        ..Dataset::default()
    };
    d.tool_version = if d.kind == "iomark" {
        s(v.get("iomark version"))
    } else {
        d.version.clone()
    };
    d.timestamp = v.get("timestamp").as_i64().unwrap_or(0);
    d.kernel = s(&v.get("iomark")["environment"]["host"]["kernel"]);
    d.target = TargetInfo::of(&v.get("iomark")["environment"]);
    d.title = Path::new(source)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string());
    d.warnings = warning_texts(v.pointer("/iomark/warnings"));
    if lean {
        d.items = lean_items(&mut v);
        return Ok(d);
    }
    let v = &v;
    let run = format!("the run in {}", d.title);
    d.items = items_of(v)
        .into_iter()
        .map(|(mut item, mut detail)| {
            detail.pass_label = run.clone();
            if let Some(t) = &mut detail.timeline {
                t.label = run.clone();
            }
            item.detail = Some(detail);
            item
        })
        .collect();
    Ok(d)
}

fn warning_texts(v: Option<&Value>) -> Vec<Warning> {
    let mut out = Vec::new();
    let list = v.and_then(Value::as_array).cloned().unwrap_or_default();
    add_warnings(
        &mut out,
        list.iter().map(|w| match w.get("message") {
            Some(m) => Warning {
                key: format!("{}/{}", s(&w["kind"]), s(&w["job"])),
                text: s(m),
            },
            None => Warning {
                key: s(w),
                text: s(w),
            },
        }),
    );
    out
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => s.parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// The percentile map and bins of a latency object, ascending.
/// (x, y) pairs: (percentile, ns) or (latency ns, count).
type Pairs = Vec<(f64, f64)>;

fn lat_detail(o: &Value) -> (Pairs, Pairs) {
    let mut p: Vec<(f64, f64)> = o
        .get("percentile")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, num(v))))
                .filter(|(_, v)| v.is_finite())
                .collect()
        })
        .unwrap_or_default();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bins: Vec<(f64, f64)> = o
        .get("bins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, num(v))))
                .filter(|(_, c)| c.is_finite() && *c > 0.0)
                .collect()
        })
        .unwrap_or_default();
    bins.sort_by(|a, b| a.0.total_cmp(&b.0));
    (p, bins)
}

/// Metrics and detail of one direction object (`job["read"]` …).
pub fn dir_metrics(d: &Value) -> Option<(Metrics, Detail)> {
    let ios = d.get("total_ios").map(num).unwrap_or(0.0);
    if ios.is_nan() || ios <= 0.0 {
        return None;
    }
    let bw_bytes = match d.get("bw_bytes").map(num) {
        Some(v) if v.is_finite() => v,
        _ => d.get("bw").map(num).unwrap_or(f64::NAN) * 1024.0,
    };
    let lat = &d["lat_ns"];
    let clat = &d["clat_ns"];
    let lat_mean_ns = if lat.get("N").map(num).unwrap_or(0.0) > 0.0 {
        num(&lat["mean"])
    } else {
        num(&clat["mean"])
    };
    let (lp, lb) = lat_detail(lat);
    let (cp, cb) = lat_detail(clat);
    let (kind, percentiles, bins) = if !lp.is_empty() {
        ("lat", lp, if lb.is_empty() { cb } else { lb })
    } else {
        ("clat", cp, cb)
    };
    let p99 = percentiles
        .iter()
        .find(|(p, _)| (*p - 99.0).abs() < 1e-9)
        .map(|x| x.1)
        .unwrap_or(f64::NAN);
    Some((
        Metrics {
            bw_bytes,
            iops: num(&d["iops"]),
            lat_mean_ns,
            lat_p99_ns: p99,
            sync_write: false,
        },
        Detail {
            pass_label: String::new(),
            lat_kind: kind,
            percentiles,
            bins,
            ttfb: lat_detail(&d["ttfb_ns"]).0,
            timeline: None,
        },
    ))
}

/// A job that syncs its writes: its latency figures become those of a
/// write plus the sync that makes it durable (`iomark.sync_writes`),
/// which is what a table about synchronous writes is about.
fn sync_write_latency(doc: &Doc, job_index: usize, m: &mut Metrics, detail: &mut Detail) {
    let Some(list) = doc.pointer("/iomark/sync_writes").and_then(Value::as_array) else {
        return;
    };
    let Some(w) = list
        .iter()
        .find(|w| w["job_index"].as_u64() == Some(job_index as u64))
    else {
        return;
    };
    let lat = &w["lat_ns"];
    let (percentiles, _) = lat_detail(lat);
    m.lat_mean_ns = num(&lat["mean"]);
    m.lat_p99_ns = percentiles
        .iter()
        .find(|(p, _)| (*p - 99.0).abs() < 1e-9)
        .map_or(f64::NAN, |x| x.1);
    m.sync_write = true;
    detail.lat_kind = "write+sync";
    detail.percentiles = percentiles;
    detail.bins.clear();
}

fn timeline_of(doc: &Doc, job_index: usize, dir: &str) -> Option<Series> {
    let j = doc.pointer(&format!("/iomark/timeline/jobs/{job_index}"))?;
    let t: Vec<f64> = j["t_ms"]
        .as_array()?
        .iter()
        .map(|v| num(v) / 1000.0)
        .collect();
    let d = j.get(dir)?;
    let bw: Vec<f64> = d["bw"]
        .as_array()?
        .iter()
        .map(|v| num(v) * 1024.0)
        .collect();
    let iops: Vec<f64> = d["iops"].as_array()?.iter().map(num).collect();
    let start_s = match j.get("start_ms") {
        Some(v) => num(v) / 1000.0,
        None => t[0] - t.get(1).map(|t1| t1 - t[0]).unwrap_or(0.0),
    };
    (t.len() == bw.len() && t.len() == iops.len() && !t.is_empty()).then_some(Series {
        label: String::new(),
        start_s,
        t_s: t,
        bw_bytes: bw,
        iops,
    })
}

/// The job entries: `jobs`, or `client_stats` in fio's client/server
/// output (each named job@host there).
pub fn jobs_of(doc: &Value) -> Option<&Vec<Value>> {
    doc.get("jobs")
        .and_then(Value::as_array)
        .or_else(|| doc.get("client_stats").and_then(Value::as_array))
}

/// The job entries of a document with the names they are shown by
/// (`#N` for repeated names, `@host` for client/server entries), each with
/// its index.
fn named_jobs(doc: &Doc) -> Vec<(usize, String, &JobEntry)> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (ji, job) in doc.entries().into_iter().flatten().enumerate() {
        let name = if job.hostname.is_empty() {
            job.jobname.clone()
        } else {
            format!("{}@{}", job.jobname, job.hostname)
        };
        let n = seen.iter().filter(|x| **x == name).count();
        seen.push(name.clone());
        let shown = if n == 0 {
            name
        } else {
            format!("{name}#{}", n + 1)
        };
        out.push((ji, shown, job));
    }
    out
}

/// Every job direction of a fio/iomark document that did I/O, each with
/// one sample; keys are `jobname/dir`, with `#N` for repeated names.
pub fn items_of_doc(doc: &Value) -> Vec<(Item, Detail)> {
    items_of(&Doc::of(doc))
}

fn items_of(doc: &Doc) -> Vec<(Item, Detail)> {
    let global = doc.get("global options");
    let mut out = Vec::new();
    for (ji, shown, job) in named_jobs(doc) {
        let p = Params::from_options(global, &job.options);
        let settings = settings_from(global, &job.options);
        for (dir, m, detail) in &job.dirs {
            let (dir, mut m, mut detail) = (*dir, *m, detail.clone());
            detail.timeline = timeline_of(doc, ji, dir);
            if dir == "write" {
                sync_write_latency(doc, ji, &mut m, &mut detail);
            }
            out.push((
                Item {
                    key: format!("{shown}/{dir}"),
                    name: shown.clone(),
                    dir: dir.to_string(),
                    params: p.clone(),
                    samples: vec![m],
                    detail: None,
                    pass_timelines: Vec::new(),
                    settings: settings.clone(),
                    lat_kind: detail.lat_kind,
                    bins: vec![detail.bins.clone()],
                },
                detail,
            ));
        }
    }
    out
}

/// The items of a document for the results history: each job entry
/// taken out of it (its bins moved, not copied), without the details
/// reports draw.
fn lean_items(doc: &mut Doc) -> Vec<Item> {
    let names: Vec<(usize, String)> = named_jobs(doc)
        .into_iter()
        .map(|(ji, shown, _)| (ji, shown))
        .collect();
    let entries = doc
        .jobs
        .take()
        .or_else(|| doc.client_stats.take())
        .unwrap_or_default();
    let global = doc.get("global options").clone();
    let mut out = Vec::new();
    for ((ji, shown), job) in names.into_iter().zip(entries) {
        let p = Params::from_options(&global, &job.options);
        let settings = settings_from(&global, &job.options);
        for (dir, mut m, mut detail) in job.dirs {
            if dir == "write" {
                sync_write_latency(doc, ji, &mut m, &mut detail);
            }
            out.push(Item {
                key: format!("{shown}/{dir}"),
                name: shown.clone(),
                dir: dir.to_string(),
                params: p.clone(),
                samples: vec![m],
                detail: None,
                pass_timelines: Vec::new(),
                settings: settings.clone(),
                lat_kind: detail.lat_kind,
                bins: vec![detail.bins],
            });
        }
    }
    out
}

/// The settings of the job whose name sorts first in a document.
fn first_job_settings(doc: &Doc) -> BTreeMap<String, String> {
    let global = doc.get("global options");
    named_jobs(doc)
        .into_iter()
        .min_by(|a, b| a.1.cmp(&b.1))
        .map(|(_, _, job)| settings_from(global, &job.options))
        .unwrap_or_default()
}

/// A bundle's run-wide fields: everything but its tests.
fn bundle_header(doc: &Doc, source: &str) -> Dataset {
    let v = &doc.rest;
    Dataset {
        source: source.to_string(),
        kind: s(doc.get("kind")),
        title: s(doc.get("title")),
        version: s(doc.get("iomark version")),
        time: s(doc.get("time")),
        environment: v.get("environment").cloned(),
        label: v.get("label").map(s).unwrap_or_default(),
        host: doc
            .pointer("/environment/host/hostname")
            .map(s)
            .unwrap_or_default(),
        warnings: warning_texts(v.get("warnings")),
        notes: doc
            .get("notes")
            .as_array()
            .map(|a| a.iter().map(s).collect())
            .unwrap_or_default(),
        sweep: v.get("sweep").cloned().filter(|x| !x.is_null()),
        jobfile: v.get("jobfile").map(s).filter(|x| !x.is_empty()),
        settings: v.get("settings").cloned(),
        interrupted: v
            .get("interrupted")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        bundle: true,
        timestamp: doc.get("timestamp").as_i64().unwrap_or(0),
        tool_version: s(doc.get("iomark version")),
        kernel: s(&doc.get("environment")["host"]["kernel"]),
        target: TargetInfo::of(doc.get("environment")),
        ..Dataset::default()
    }
}

fn from_bundle(v: &Doc, source: &str) -> Result<Dataset, ReadError> {
    let mut d = bundle_header(v, source);
    if let Some(e) = v.get("error").as_str() {
        d.notes.push(format!("The run stopped early: {e}"));
    }
    let none = Doc::default();
    let runs: &[Doc] = v.runs.as_deref().unwrap_or_default();
    fn result_of<'a>(r: &'a Doc, none: &'a Doc) -> &'a Doc {
        r.result.as_deref().unwrap_or(none)
    }
    let result = |r| result_of(r, &none);
    // A pass measured under Wine says so in its own result: the run's
    // figures are not Windows figures.
    for r in runs {
        let wine = warning_texts(result(r).pointer("/iomark/warnings"))
            .into_iter()
            .filter(|w| w.key.starts_with("wine/"));
        add_warnings(&mut d.warnings, wine);
    }
    for t in v.get("tests").as_array().into_iter().flatten() {
        let section = s(&t["section"]);
        let dir = s(&t["direction"]);
        let samples: Vec<Metrics> = t["passes"]
            .as_array()
            .map(|a| a.iter().map(Metrics::from_json).collect())
            .unwrap_or_default();
        if samples.is_empty() {
            continue;
        }
        // Details from the pass with the median bandwidth; throughput
        // over time from every pass.
        let rep = representative(&samples);
        let n = samples.len();
        let (mut settings, mut lat_kind, mut bins) = (BTreeMap::new(), "", Vec::new());
        let passes: Vec<(u64, Option<(Item, Detail)>)> = runs
            .iter()
            .filter(|r| s(r.get("section")) == section)
            .enumerate()
            .map(|(i, r)| {
                let no = r.get("pass").as_u64().unwrap_or(i as u64 + 1);
                let all = items_of(result(r));
                if settings.is_empty() {
                    settings = first_job_settings(result(r));
                }
                // Clones reported separately: every entry of the direction.
                for (_, d) in all.iter().filter(|(i, _)| i.dir == dir) {
                    lat_kind = d.lat_kind;
                    bins.push(d.bins.clone());
                }
                let found = all.into_iter().find(|(i, _)| i.dir == dir);
                (no, found)
            })
            .collect();
        let pass_label = |no: u64| format!("pass {no} of {n}");
        let detail = passes.get(rep).and_then(|(no, f)| {
            f.as_ref().map(|(_, d)| {
                let mut d = d.clone();
                d.pass_label = format!("{}, the pass with the median bandwidth", pass_label(*no));
                if let Some(t) = &mut d.timeline {
                    t.label = d.pass_label.clone();
                }
                d
            })
        });
        let pass_timelines: Vec<(u64, Series)> = passes
            .iter()
            .filter_map(|(no, f)| {
                let mut t = f.as_ref()?.1.timeline.clone()?;
                t.label = pass_label(*no);
                Some((*no, t))
            })
            .collect();
        // Every defining option comes from the pass's own job options;
        // the test's params (older results held only a few) fill gaps.
        let run_params = passes
            .iter()
            .find_map(|(_, f)| f.as_ref().map(|(i, _)| i.params.clone()))
            .unwrap_or_default();
        d.items.push(Item {
            key: format!("{section}/{dir}"),
            name: s(&t["name"]),
            dir,
            params: run_params.or(&Params::from_json(&t["params"])),
            samples,
            detail,
            pass_timelines,
            settings,
            lat_kind,
            bins,
        });
    }
    Ok(d)
}

/// A ctime date ("Thu Jul 10 12:34:56 2025", as fio and iomark write
/// `time`) as "2025-07-10 12:34:56"; other text unchanged.
pub fn short_time(t: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let f: Vec<&str> = t.split_whitespace().collect();
    let parsed = match f.as_slice() {
        [_, mon, day, hms, year] => MONTHS
            .iter()
            .position(|m| m == mon)
            .zip(day.parse::<u32>().ok())
            .filter(|_| hms.len() == 8 && year.len() == 4)
            .map(|(m, d)| format!("{year}-{:02}-{d:02} {hms}", m + 1)),
        _ => None,
    };
    parsed.unwrap_or_else(|| t.trim().to_string())
}

impl Dataset {
    /// Where and when it ran: "host, 2025-07-10 12:34:56" (either part
    /// alone when the other is unknown).
    pub fn host_time(&self) -> String {
        [self.host.clone(), short_time(&self.time)]
            .into_iter()
            .filter(|x| !x.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The file it was read from, without its directory.
    pub fn file_name(&self) -> String {
        Path::new(&self.source)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.source.clone())
    }

    /// Names for this run, from the shortest: its label, else where and
    /// when it ran; then with more detail (where and when, the file).
    fn run_name_candidates(&self) -> Vec<String> {
        let (l, ht, f) = (self.label.trim(), self.host_time(), self.file_name());
        let mut v = match (l.is_empty(), ht.is_empty()) {
            (false, false) => vec![
                l.to_string(),
                format!("{l} ({ht})"),
                format!("{l} ({ht}, {f})"),
            ],
            (false, true) => vec![l.to_string(), format!("{l} ({f})")],
            (true, false) => vec![ht.clone(), format!("{ht} ({f})")],
            (true, true) => vec![f],
        };
        v.dedup();
        v
    }
}

/// A name for each run of a report that tells them apart: its label,
/// else its host and time; runs that would share a name get more detail
/// (host and time after a label, then the file name), and any still alike
/// a number ("#2").
pub fn run_names(sets: &[Dataset]) -> Vec<String> {
    let cands: Vec<Vec<String>> = sets.iter().map(Dataset::run_name_candidates).collect();
    let mut level = vec![0usize; sets.len()];
    loop {
        let names: Vec<&String> = cands.iter().zip(&level).map(|(c, l)| &c[*l]).collect();
        let mut moved = false;
        for i in 0..sets.len() {
            let shared = names.iter().filter(|n| **n == names[i]).count() > 1;
            if shared && level[i] + 1 < cands[i].len() {
                level[i] += 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (c, l) in cands.iter().zip(&level) {
        let base = &c[*l];
        let n = out
            .iter()
            .filter(|x| *x == base || x.starts_with(&format!("{base} #")))
            .count();
        out.push(if n == 0 {
            base.clone()
        } else {
            format!("{base} #{}", n + 1)
        });
    }
    out
}

/// Index of the sample whose bandwidth is the (lower) median.
pub fn representative(samples: &[Metrics]) -> usize {
    let mut idx: Vec<usize> = (0..samples.len()).collect();
    idx.sort_by(|a, b| samples[*a].bw_bytes.total_cmp(&samples[*b].bw_bytes));
    idx.get((idx.len().saturating_sub(1)) / 2)
        .copied()
        .unwrap_or(0)
}

/// Several data sets of one side of a comparison, merged: items with the
/// same key pool their samples (repeated runs of the same job).
pub fn merge(sets: Vec<Dataset>) -> Dataset {
    let mut it = sets.into_iter();
    let Some(mut first) = it.next() else {
        return Dataset::default();
    };
    let mut sources = vec![first.source.clone()];
    for d in it {
        sources.push(d.source.clone());
        for item in d.items {
            match first.items.iter_mut().find(|i| i.key == item.key) {
                Some(x) => x.samples.extend(item.samples),
                None => first.items.push(item),
            }
        }
        add_warnings(&mut first.warnings, d.warnings);
        first.interrupted |= d.interrupted;
    }
    first.source = sources.join(", ");
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_synced_write_is_tabulated_with_the_cost_of_its_sync() {
        let doc: Value = serde_json::from_str(
            r#"{"jobs": [{"jobname": "s",
                 "write": {"total_ios": 10, "iops": 4000, "bw_bytes": 1,
                           "lat_ns": {"N": 10, "mean": 20000.0,
                                      "percentile": {"99.000000": 60000}}}}],
                "iomark": {"sync_writes": [{"job_index": 0, "jobname": "s",
                  "lat_ns": {"N": 10, "mean": 250000.0,
                             "percentile": {"99.000000": 400000}}}]}}"#,
        )
        .unwrap();
        let items = items_of_doc(&doc);
        let (item, detail) = &items[0];
        let m = item.samples[0];
        assert_eq!((m.lat_mean_ns, m.lat_p99_ns), (250000.0, 400000.0));
        assert!(m.sync_write);
        assert_eq!(detail.lat_kind, "write+sync");
        assert_eq!(Metrics::from_json(&m.to_json()), m);
    }

    const DOC: &str = r#"notice: something before the document
{
  "fio version" : "fio-3.33",
  "global options" : {"bs": "4k", "ioengine": "libaio"},
  "jobs" : [
    {"jobname": "a", "job options": {"rw": "randrw", "iodepth": "8"},
     "read": {"total_ios": 100, "bw_bytes": 409600, "bw": 400, "iops": 100.0,
              "lat_ns": {"N": 100, "mean": 2000.0},
              "clat_ns": {"N": 100, "mean": 1500.0,
                          "percentile": {"50.000000": 1400, "99.000000": 3000},
                          "bins": {"1400": 60, "3000": 40}}},
     "write": {"total_ios": 0, "bw_bytes": 0, "iops": 0.0},
     "trim": {"total_ios": 0}},
    {"jobname": "a", "job options": {"rw": "read"},
     "read": {"total_ios": 5, "bw": 20, "iops": 5.0,
              "lat_ns": {"N": 5, "mean": 10.0, "percentile": {"99.000000": 99}},
              "clat_ns": {"N": 5, "mean": 8.0, "percentile": {"99.000000": 50}}}}
  ]
}"#;

    #[test]
    fn fio_documents_become_items() {
        let d = parse_text(DOC, "x.json").unwrap();
        assert_eq!(d.kind, "fio");
        assert_eq!(d.items.len(), 2);
        let a = &d.items[0];
        assert_eq!(a.key, "a/read");
        assert_eq!(a.params.get("bs"), "4k");
        assert_eq!(a.params.get("iodepth"), "8");
        assert_eq!(
            a.params.describe(),
            "rw=randrw bs=4k iodepth=8 ioengine=libaio"
        );
        let m = a.samples[0];
        assert_eq!(m.bw_bytes, 409600.0);
        assert_eq!(m.lat_mean_ns, 2000.0);
        assert_eq!(m.lat_p99_ns, 3000.0);
        let det = a.detail.as_ref().unwrap();
        assert_eq!(det.lat_kind, "clat");
        assert_eq!(det.bins, vec![(1400.0, 60.0), (3000.0, 40.0)]);
        // The repeated name is told apart; total-latency percentiles win.
        let b = &d.items[1];
        assert_eq!(b.key, "a#2/read");
        assert_eq!(b.samples[0].bw_bytes, 20.0 * 1024.0);
        assert_eq!(b.samples[0].lat_p99_ns, 99.0);
        assert_eq!(b.detail.as_ref().unwrap().lat_kind, "lat");
    }

    #[test]
    fn the_parameters_are_every_option_that_defines_the_test() {
        let global = serde_json::json!({
            "ioengine": "libaio", "direct": "1", "size": "8388608", "runtime": "2",
            "filename": "/mnt/x/f", "group_reporting": "", "lat_percentiles": "1",
            "write_bw_log": "oltp", "log_avg_msec": "500", "ramp_time": "500ms"});
        let oltp = serde_json::json!({
            "rw": "randrw", "rwmixread": "70", "bssplit": "4k/50:8k/50",
            "iodepth": "16", "fdatasync": "4", "name": "ignored"});
        let plain = serde_json::json!({"readwrite": "randread", "bs": "4k", "iodepth": "16"});
        let a = Params::from_options(&global, &oltp);
        let b = Params::from_options(&global, &plain);
        assert_eq!(
            a.describe(),
            "rw=randrw rwmixread=70 bssplit=4k/50:8k/50 iodepth=16 size=8m runtime=2s \
             ioengine=libaio direct=1 ramp_time=500ms fdatasync=4"
        );
        assert_eq!(
            b.describe(),
            "readwrite=randread bs=4k iodepth=16 size=8m runtime=2s ioengine=libaio \
             direct=1 ramp_time=500ms"
        );
        assert_eq!(b.get("rw"), "randread", "aliases are the same option");
        // A job's own value wins over the global one.
        let own = Params::from_options(&global, &serde_json::json!({"direct": "0"}));
        assert_eq!(own.get("direct"), "0");
        // Round trip through a results bundle, gaps filled from older params.
        assert_eq!(Params::from_json(&a.to_json()), a);
        let old = Params::from_json(&serde_json::json!({"rw": "read", "bs": "1m"}));
        assert_eq!(Params::default().or(&old).describe(), "rw=read bs=1m",);
        assert!(!defines_the_test("write_hist_log") && !defines_the_test("log_hist_msec"));
        assert!(defines_the_test("rate_iops") && defines_the_test("verify"));
    }

    #[test]
    fn every_run_of_a_report_gets_a_name_that_tells_it_apart() {
        let run = |label: &str, host: &str, time: &str, source: &str| Dataset {
            label: label.into(),
            host: host.into(),
            time: time.into(),
            source: source.into(),
            title: "CrystalDiskMark-style quick test".into(),
            ..Dataset::default()
        };
        assert_eq!(
            short_time("Thu Jul 10 09:04:05 2025"),
            "2025-07-10 09:04:05"
        );
        assert_eq!(short_time("yesterday"), "yesterday");
        // Labels when they differ.
        let sets = [
            run("before", "db1", "Thu Jul 10 09:04:05 2025", "d/a.json"),
            run("after", "db1", "Fri Jul 11 09:04:05 2025", "d/b.json"),
        ];
        assert_eq!(run_names(&sets), ["before", "after"]);
        // Unlabelled runs by host and time; a shared label gets them too.
        let sets = [
            run("", "db1", "Thu Jul 10 09:04:05 2025", "a.json"),
            run("", "db2", "Thu Jul 10 09:04:05 2025", "b.json"),
            run("nightly", "db1", "Thu Jul 10 10:00:00 2025", "c.json"),
            run("nightly", "db1", "Fri Jul 11 10:00:00 2025", "d.json"),
            run("weekly", "db1", "Fri Jul 11 10:00:00 2025", "e.json"),
        ];
        assert_eq!(
            run_names(&sets),
            [
                "db1, 2025-07-10 09:04:05",
                "db2, 2025-07-10 09:04:05",
                "nightly (db1, 2025-07-10 10:00:00)",
                "nightly (db1, 2025-07-11 10:00:00)",
                "weekly",
            ]
        );
        // The same time on the same host: the file; the same file: a number.
        let sets = [
            run("", "h", "Thu Jul 10 09:04:05 2025", "x/a.json"),
            run("", "h", "Thu Jul 10 09:04:05 2025", "x/b.json"),
            run("", "h", "Thu Jul 10 09:04:05 2025", "x/b.json"),
            run("", "", "", "fio.json"),
        ];
        assert_eq!(
            run_names(&sets),
            [
                "h, 2025-07-10 09:04:05 (a.json)",
                "h, 2025-07-10 09:04:05 (b.json)",
                "h, 2025-07-10 09:04:05 (b.json) #2",
                "fio.json",
            ]
        );
    }

    #[test]
    fn labels_are_read_from_bundles_and_job_results() {
        let job: Value = serde_json::from_str(
            r#"{"jobs": [], "time": "Thu Jul 10 09:04:05 2025",
                "iomark": {"label": "fw-1.2", "environment": {"host": {"hostname": "db1"}}}}"#,
        )
        .unwrap();
        let d = from_value(&job, "j.json").unwrap();
        assert_eq!((d.label.as_str(), d.host.as_str()), ("fw-1.2", "db1"));
        let bundle: Value = serde_json::from_str(
            r#"{"kind": "quick", "tests": [], "label": "base", "time": "x",
                "environment": {"host": {"hostname": "h2"}}}"#,
        )
        .unwrap();
        let d = from_value(&bundle, "q.json").unwrap();
        assert_eq!((d.label.as_str(), d.host.as_str()), ("base", "h2"));
        let fio = parse_text(DOC, "f.json").unwrap();
        assert_eq!((fio.label.as_str(), fio.host.as_str()), ("", ""));
    }

    #[test]
    fn fio_client_server_output_is_read() {
        let doc = r#"{"fio version": "fio-3.33", "client_stats": [
            {"jobname": "cs", "hostname": "10.0.0.1",
             "read": {"total_ios": 10, "bw_bytes": 4096, "iops": 1.0,
                      "lat_ns": {"N": 10, "mean": 5.0}}}]}"#;
        let d = parse_text(doc, "c.json").unwrap();
        assert_eq!(d.items.len(), 1);
        assert_eq!(d.items[0].key, "cs@10.0.0.1/read");
    }

    #[test]
    fn non_results_are_refused() {
        assert!(parse_text("{\"a\": 1}", "y.json").is_err());
        assert!(parse_text("nothing", "y.json").is_err());
    }

    #[test]
    fn merging_pools_samples_by_key() {
        let a = parse_text(DOC, "1.json").unwrap();
        let b = parse_text(DOC, "2.json").unwrap();
        let m = merge(vec![a, b]);
        assert_eq!(m.items.len(), 2);
        assert_eq!(m.items[0].samples.len(), 2);
        assert_eq!(m.source, "1.json, 2.json");
    }

    #[test]
    fn representative_is_the_median_bandwidth_pass() {
        let m = |bw| Metrics {
            bw_bytes: bw,
            ..Metrics::default()
        };
        assert_eq!(representative(&[m(3.0), m(1.0), m(2.0)]), 2);
        assert_eq!(representative(&[m(3.0)]), 0);
    }
}
