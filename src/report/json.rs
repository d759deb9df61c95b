//! JSON and json+ output with fio's key names, nesting and units
//! (`bw` in KiB/s, `io_bytes` in bytes, latencies in ns, percentile keys
//! like "99.000000"), written in fio's layout (`"key" : value`, floats with
//! six decimals) so diffs against fio's output stay readable.

use serde_json::{json, Map, Value};

use super::normal::dist_pct;
use super::{bw_bytes, iops, JobReport, Report, Section, UNIFIED_MIXED};
use crate::stats::disk::DiskReport;
use crate::stats::histogram::Histogram;
use crate::stats::steady::SteadyResult;
use crate::stats::{DirStats, JobStats};

/// The version key fio tools look for; it names iomark and the fio
/// output version it follows.
pub fn version_string() -> String {
    format!("iomark-{} (fio-3.33 compatible)", env!("CARGO_PKG_VERSION"))
}

fn pct_key(p: f64) -> String {
    format!("{p:.6}")
}

fn f(v: f64) -> Value {
    // Keep floats as floats even when whole (fio prints 0.000000).
    Value::from(if v.is_finite() { v } else { 0.0 })
}

/// `{min, max, mean, stddev, N[, percentile][, bins]}` in ns.
fn lat_obj(h: &Histogram, percentiles: Option<&[f64]>, plus: bool) -> Value {
    let s = &h.summary;
    let mut m = Map::new();
    m.insert("min".into(), json!(if s.n == 0 { 0 } else { s.min }));
    m.insert("max".into(), json!(s.max));
    m.insert("mean".into(), f(s.mean()));
    m.insert("stddev".into(), f(s.stddev()));
    m.insert("N".into(), json!(s.n));
    if let (Some(list), true) = (percentiles, s.n > 0) {
        let vals = h.percentiles(list);
        let pm: Map<String, Value> = list
            .iter()
            .zip(vals)
            .map(|(p, v)| (pct_key(*p), json!(v)))
            .collect();
        m.insert("percentile".into(), Value::Object(pm));
        if plus {
            let bins: Map<String, Value> =
                h.bins().map(|(v, c)| (v.to_string(), json!(c))).collect();
            m.insert("bins".into(), Value::Object(bins));
        }
    }
    Value::Object(m)
}

fn dir_obj(r: &JobReport, ds: &DirStats, agg_bw: u64, plus: bool) -> Value {
    let st = &r.spec.stat;
    let list = st.percentile_list.as_slice();
    let bw_bytes = bw_bytes(ds);
    let bws = &ds.bw_samples;
    let is = &ds.iops_samples;
    let mut bw_agg = 0.0;
    if bws.n > 0 {
        bw_agg = 100.0;
        let agg_kib = agg_bw / 1024;
        if agg_kib > 0 {
            bw_agg = (bws.mean() * 100.0 / agg_kib as f64).min(100.0);
        }
    }
    let mut m = Map::new();
    m.insert("io_bytes".into(), json!(ds.bytes));
    m.insert("io_kbytes".into(), json!(ds.bytes / 1024));
    m.insert("bw_bytes".into(), json!(bw_bytes));
    m.insert("bw".into(), json!(bw_bytes / 1024));
    m.insert("iops".into(), f(iops(ds)));
    m.insert("runtime".into(), json!(ds.runtime_ms));
    m.insert("total_ios".into(), json!(ds.ios));
    m.insert("short_ios".into(), json!(ds.short_ios));
    m.insert("drop_ios".into(), json!(ds.drop_ios));
    m.insert(
        "slat_ns".into(),
        lat_obj(&ds.slat, st.slat_percentiles.then_some(list), plus),
    );
    m.insert(
        "clat_ns".into(),
        lat_obj(&ds.clat, st.clat_percentiles.then_some(list), plus),
    );
    m.insert(
        "lat_ns".into(),
        lat_obj(&ds.lat, st.lat_percentiles.then_some(list), plus),
    );
    // iomark's own: time to first byte, for engines that talk to a server.
    if let Some(t) = ds.ttfb.as_deref().filter(|t| t.count() > 0) {
        m.insert(
            "ttfb_ns".into(),
            lat_obj(t, st.clat_percentiles.then_some(list), plus),
        );
    }
    if let Some(prios) = prios_array(r, ds, plus) {
        m.insert("prios".into(), prios);
    }
    m.insert("bw_min".into(), json!(bws.min));
    m.insert("bw_max".into(), json!(bws.max));
    m.insert("bw_agg".into(), f(bw_agg));
    m.insert("bw_mean".into(), f(bws.mean()));
    m.insert("bw_dev".into(), f(bws.stddev()));
    m.insert("bw_samples".into(), json!(bws.n));
    m.insert("iops_min".into(), json!(is.min));
    m.insert("iops_max".into(), json!(is.max));
    m.insert("iops_mean".into(), f(is.mean()));
    m.insert("iops_stddev".into(), f(is.stddev()));
    m.insert("iops_samples".into(), json!(is.n));
    Value::Object(m)
}

/// iomark addition for `http_op=head|list`: the read section's requests
/// were HEADs or LIST pages (`method`), its bytes what they moved (none),
/// and for LIST the objects listed, in all and per second of the run
/// time (as `iops` is per second).
fn object_op(d: &mut Value, r: &JobReport, ds: &DirStats) {
    let Some(op) = super::object_op(&r.spec) else {
        return;
    };
    d["method"] = json!(op.method());
    if op == crate::job::spec::HttpOp::List {
        let listed = r.stats.objects_listed;
        d["objects_listed"] = json!(listed);
        d["objects_listed_per_s"] = f(super::listed_per_s(listed, ds));
    }
}

/// fio's `prios` array: one object per priority that saw I/O
/// (`prioclass`, `prio`, and the latencies as `clat_ns`, or `lat_ns`
/// with `lat_percentiles`), when two or more did. `priohint` (newer fio's
/// key) is added when a priority carries a hint (`cmdprio_hint`).
fn prios_array(r: &JobReport, ds: &DirStats, plus: bool) -> Option<Value> {
    use crate::job::ioprio;
    if ds.prios_with_samples() < 2 {
        return None;
    }
    let st = &r.spec.stat;
    let key = if st.lat_percentiles {
        "lat_ns"
    } else {
        "clat_ns"
    };
    let list = (st.clat_percentiles || st.lat_percentiles).then_some(st.percentile_list.as_slice());
    let hints = ds.prios.iter().any(|p| ioprio::hint(p.ioprio) != 0);
    let arr = ds
        .prios
        .iter()
        .filter(|p| p.lat.count() > 0)
        .map(|p| {
            let mut o = Map::new();
            o.insert("prioclass".into(), json!(ioprio::class(p.ioprio)));
            o.insert("prio".into(), json!(ioprio::level(p.ioprio)));
            if hints {
                o.insert("priohint".into(), json!(ioprio::hint(p.ioprio)));
            }
            o.insert(key.into(), lat_obj(&p.lat, list, plus));
            Value::Object(o)
        })
        .collect();
    Some(Value::Array(arr))
}

/// Percentages keyed by labels (distributions use fio's minimums: 0.1%
/// for depths, 0.01% for latencies, when the count is not zero).
fn dist(vals: &[u64], total: u64, labels: &[&str], floor: f64) -> Value {
    let pcts: Vec<f64> = if floor >= 0.1 {
        dist_pct(vals, total)
    } else {
        vals.iter()
            .map(|v| {
                if total == 0 {
                    0.0
                } else {
                    let p = *v as f64 * 100.0 / total as f64;
                    if p < floor && *v > 0 {
                        floor
                    } else {
                        p
                    }
                }
            })
            .collect()
    };
    let m: Map<String, Value> = labels
        .iter()
        .zip(pcts)
        .map(|(l, p)| (l.to_string(), f(p)))
        .collect();
    Value::Object(m)
}

fn steady_obj(ss: &SteadyResult) -> Value {
    json!({
        "ss": ss.spec_text(),
        "duration": ss.duration_s,
        "attained": u8::from(ss.attained),
        "criterion": ss.criterion_text(),
        "max_deviation": f(ss.max_deviation),
        "slope": f(ss.slope),
        "data": {
            "bw_mean": ss.bw_mean,
            "iops_mean": ss.iops_mean,
            "iops": ss.iops,
            "bw": ss.bw,
        }
    })
}

/// What a job entry stands for, which decides a few of its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry<'a> {
    /// A job (or group) of this run: the `jobs` array.
    Job,
    /// A job of one host of a run spread over hosts (fio's client mode,
    /// `client_stats`): `hostname` and `port` (0: no port) added.
    Client { hostname: &'a str },
    /// The "All clients" summary of a group, as fio writes it: no job
    /// options, `eta`, `elapsed` or latency-target keys; `hostname` and
    /// `port` added.
    AllClients { hostname: &'a str },
}

/// One entry of `jobs` (or of `client_stats`, see `Entry`).
#[allow(clippy::too_many_lines)]
pub fn job_entry(r: &JobReport, report: &Report, plus: bool, entry: Entry) -> Value {
    let s: &JobStats = &r.stats;
    let spec = &r.spec;
    let st = &spec.stat;
    let summary = matches!(entry, Entry::AllClients { .. });
    let mut m = Map::new();
    m.insert("jobname".into(), json!(r.name));
    m.insert("groupid".into(), json!(r.groupid));
    m.insert("error".into(), json!(r.error));
    if !summary {
        m.insert("eta".into(), json!(0));
        m.insert("elapsed".into(), json!(s.elapsed_ms.div_ceil(1000)));
        let opts: Map<String, Value> = spec
            .job_options
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        m.insert("job options".into(), Value::Object(opts));
    }
    for Section {
        label,
        stats,
        group_dir,
    } in r.sections()
    {
        if label == "mixed" && r.unified() != UNIFIED_MIXED {
            add_sync(&mut m, r, plus);
        }
        let mut d = dir_obj(r, stats, report.group_agg(r, group_dir), plus);
        if label == "read" {
            object_op(&mut d, r, stats);
        }
        m.insert(label.to_string(), d);
    }
    if r.unified() == super::UNIFIED_NONE {
        add_sync(&mut m, r, plus);
    }
    m.insert("job_runtime".into(), json!(s.runtime_ms));
    let rt = s.runtime_ms as f64;
    let (usr, sys) = if rt > 0.0 {
        (s.usr_us as f64 / 10.0 / rt, s.sys_us as f64 / 10.0 / rt)
    } else {
        (0.0, 0.0)
    };
    m.insert("usr_cpu".into(), f(usr));
    m.insert("sys_cpu".into(), f(sys));
    m.insert("ctx".into(), json!(s.ctx));
    m.insert("majf".into(), json!(s.majf));
    m.insert("minf".into(), json!(s.minf));
    let data_ios = s.total_ios();
    m.insert(
        "iodepth_level".into(),
        dist(
            &s.depth,
            data_ios,
            &["1", "2", "4", "8", "16", "32", ">=64"],
            0.1,
        ),
    );
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    m.insert(
        "iodepth_submit".into(),
        dist(&s.submit, s.submit_calls, &batch, 0.1),
    );
    m.insert(
        "iodepth_complete".into(),
        dist(&s.complete, s.complete_calls, &batch, 0.1),
    );
    let edges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    m.insert(
        "latency_ns".into(),
        dist(&s.lat_dist.nsec, data_ios, &edges, 0.01),
    );
    m.insert(
        "latency_us".into(),
        dist(&s.lat_dist.usec, data_ios, &edges, 0.01),
    );
    let ms_edges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    m.insert(
        "latency_ms".into(),
        dist(&s.lat_dist.msec, data_ios, &ms_edges, 0.01),
    );
    if spec.ctl.counts_errors() {
        m.insert("total_err".into(), json!(s.total_err));
        m.insert("first_error".into(), json!(s.first_error));
    }
    if !summary {
        m.insert("latency_depth".into(), json!(s.latency_depth.max(1)));
        m.insert("latency_target".into(), json!(st.latency_target_us * 1000));
        m.insert("latency_percentile".into(), f(st.latency_percentile));
        m.insert("latency_window".into(), json!(st.latency_window_us));
    }
    if let Some(ss) = &s.steady {
        m.insert("steadystate".into(), steady_obj(ss));
    }
    if spec.io.zonemode == crate::job::spec::ZoneMode::Zbd {
        // as fio releases after 3.33 write it for zoned jobs
        m.insert("zone_resets".into(), json!(s.zone_resets));
    }
    if spec.io.ioengine == crate::job::EngineKind::Http {
        // iomark addition: requests sent again after a busy answer.
        m.insert("retries".into(), json!(s.retries));
    }
    if !spec.description.is_empty() {
        m.insert("desc".into(), json!(spec.description));
    }
    if let Some(msg) = &r.error_msg {
        // iomark addition: the error in words.
        m.insert("error_message".into(), json!(msg));
    }
    if let Entry::Client { hostname } | Entry::AllClients { hostname } = entry {
        m.insert("hostname".into(), json!(hostname));
        m.insert("port".into(), json!(0));
    }
    Value::Object(m)
}

/// The `sync` object: syncs counted and their latency.
fn add_sync(m: &mut Map<String, Value>, r: &JobReport, plus: bool) {
    let s = &r.stats;
    let st = &r.spec.stat;
    let show = st.clat_percentiles || st.lat_percentiles;
    m.insert(
        "sync".into(),
        json!({
            "total_ios": s.sync_ios,
            "lat_ns": lat_obj(&s.sync_lat, show.then_some(st.percentile_list.as_slice()), plus),
        }),
    );
}

/// One entry of `disk_util`; in a run spread over hosts, with the host's
/// name (and port 0), as fio's client mode writes it.
pub fn disk_entry(d: &DiskReport, hostname: Option<&str>) -> Value {
    let c = &d.delta;
    let mut m = Map::new();
    m.insert("name".into(), json!(d.name));
    m.insert("read_ios".into(), json!(c.ios[0]));
    m.insert("write_ios".into(), json!(c.ios[1]));
    m.insert("read_merges".into(), json!(c.merges[0]));
    m.insert("write_merges".into(), json!(c.merges[1]));
    m.insert("read_ticks".into(), json!(c.ticks[0]));
    m.insert("write_ticks".into(), json!(c.ticks[1]));
    m.insert("in_queue".into(), json!(c.time_in_queue));
    m.insert("util".into(), f(d.util));
    if let Some(a) = &d.aggr {
        m.insert("aggr_read_ios".into(), json!(a.ios[0]));
        m.insert("aggr_write_ios".into(), json!(a.ios[1]));
        m.insert("aggr_read_merges".into(), json!(a.merges[0]));
        // Spelt as fio spells it.
        m.insert("aggr_write_merge".into(), json!(a.merges[1]));
        m.insert("aggr_read_ticks".into(), json!(a.ticks[0]));
        m.insert("aggr_write_ticks".into(), json!(a.ticks[1]));
        m.insert("aggr_in_queue".into(), json!(a.in_queue));
        m.insert("aggr_util".into(), f(a.max_util));
    }
    if let Some(h) = hostname {
        m.insert("hostname".into(), json!(h));
        m.insert("port".into(), json!(0));
    }
    Value::Object(m)
}

/// The document's first keys: versions, time, global options.
pub fn head(report: &Report) -> Map<String, Value> {
    let now_ms = report.now_unix_ms;
    let mut top = Map::new();
    top.insert("fio version".into(), json!(version_string()));
    top.insert("iomark version".into(), json!(env!("CARGO_PKG_VERSION")));
    top.insert("timestamp".into(), json!(now_ms / 1000));
    top.insert("timestamp_ms".into(), json!(now_ms));
    top.insert(
        "time".into(),
        json!(super::fmt::ctime_in(now_ms / 1000, report.fake_clock)),
    );
    if !report.global_options.is_empty() {
        let g: Map<String, Value> = report
            .global_options
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        top.insert("global options".into(), Value::Object(g));
    }
    top
}

/// The "iomark" object: environment, warnings, timeline, sync writes.
pub fn iomark_object(report: &Report) -> Value {
    let mut iomark = super::env::iomark_section(report);
    if let Some(l) = &report.label {
        iomark["label"] = json!(l);
    }
    if let Some(w) = sync_writes(report) {
        iomark["sync_writes"] = w;
    }
    iomark
}

/// The `jobs` array.
pub fn job_entries(report: &Report, plus: bool) -> Value {
    Value::Array(
        report
            .jobs
            .iter()
            .map(|r| job_entry(r, report, plus, Entry::Job))
            .collect(),
    )
}

/// The whole JSON document (json, or json+ with `plus`).
pub fn document(report: &Report, plus: bool) -> Value {
    let mut top = head(report);
    top.insert("jobs".into(), job_entries(report, plus));
    if !report.disks.is_empty() {
        top.insert(
            "disk_util".into(),
            Value::Array(report.disks.iter().map(|d| disk_entry(d, None)).collect()),
        );
    }
    if report.interrupted {
        top.insert("interrupted".into(), json!(true));
    }
    top.insert("iomark".into(), iomark_object(report));
    Value::Object(top)
}

/// What a synchronous write costs, per job that syncs its writes
/// (`fsync`/`fdatasync`=N): from the start of the first write after a
/// sync to the end of the sync that makes it durable. `job_index` points
/// into `jobs`.
fn sync_writes(report: &Report) -> Option<Value> {
    let list: Vec<Value> = report
        .jobs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.stats.write_sync_lat.count() > 0)
        .map(|(i, r)| {
            json!({
                "job_index": i,
                "jobname": r.name,
                "lat_ns": lat_obj(&r.stats.write_sync_lat, Some(&r.spec.stat.percentile_list), false),
            })
        })
        .collect();
    (!list.is_empty()).then(|| Value::Array(list))
}

/// Serializes in fio's layout.
pub fn to_string(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, FioFormatter::default());
    serde::Serialize::serialize(v, &mut ser).expect("serializing a JSON value cannot fail");
    let mut s = String::from_utf8(out).expect("JSON output is UTF-8");
    s.push('\n');
    s
}

/// `"key" : value`, two-space indents, floats with six decimals.
#[derive(Default)]
struct FioFormatter {
    indent: usize,
    has_value: bool,
}

impl FioFormatter {
    fn newline_indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl serde_json::ser::Formatter for FioFormatter {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        write!(w, "{value:.6}")
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b" : ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_layout() {
        let v = json!({"a": 1, "b": {"c": 0.5, "d": []}, "e": [1, 2]});
        let s = to_string(&v);
        assert_eq!(s, "{\n  \"a\" : 1,\n  \"b\" : {\n    \"c\" : 0.500000,\n    \"d\" : []\n  },\n  \"e\" : [\n    1,\n    2\n  ]\n}\n");
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["b"]["c"], 0.5);
    }
}
