//! JSON and json+ output with fio's key names, nesting and units
//! (`bw` in KiB/s, `io_bytes` in bytes, latencies in ns, percentile keys
//! like "99.000000"), written in fio's layout (`"key" : value`, floats with
//! six decimals) so diffs against fio's output stay readable.

use serde_json::{json, Map, Value};

use super::{JobReport, Report};
use crate::stats::histogram::Histogram;
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

fn lat_obj(h: &Histogram, percentiles: Option<&[f64]>, plus: bool) -> Value {
    let s = &h.summary;
    let mut m = Map::new();
    m.insert("min".into(), json!(if s.n == 0 { 0 } else { s.min }));
    m.insert("max".into(), json!(s.max));
    m.insert("mean".into(), f(s.mean()));
    m.insert("stddev".into(), f(s.stddev()));
    m.insert("N".into(), json!(s.n));
    if let Some(list) = percentiles {
        if s.n > 0 {
            let vals = h.percentiles(list);
            let pm: Map<String, Value> = list
                .iter()
                .zip(vals)
                .map(|(p, v)| (pct_key(*p), json!(v)))
                .collect();
            m.insert("percentile".into(), Value::Object(pm));
        }
    }
    if plus && s.n > 0 {
        let bins: Map<String, Value> = h.bins().map(|(v, c)| (v.to_string(), json!(c))).collect();
        m.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(m)
}

fn dir_obj(r: &JobReport, d: usize, agg_bw: u64, plus: bool) -> Value {
    let ds: &DirStats = &r.stats.dir[d];
    let st = &r.spec.stat;
    let list = st.percentile_list.as_slice();
    let bw_bytes = r.bw_bytes(d);
    let bws = &ds.bw_samples;
    let is = &ds.iops_samples;
    let agg_kib = agg_bw as f64 / 1024.0;
    let bw_agg = if agg_kib > 0.0 && bws.n > 0 {
        bws.mean() * 100.0 / agg_kib
    } else {
        0.0
    };
    let mut m = Map::new();
    m.insert("io_bytes".into(), json!(ds.bytes));
    m.insert("io_kbytes".into(), json!(ds.bytes / 1024));
    m.insert("bw_bytes".into(), json!(bw_bytes));
    m.insert("bw".into(), json!(bw_bytes / 1024));
    m.insert("iops".into(), f(r.iops(d)));
    m.insert("runtime".into(), json!(ds.runtime_ms));
    m.insert("total_ios".into(), json!(ds.ios));
    m.insert("short_ios".into(), json!(ds.short_ios));
    m.insert("drop_ios".into(), json!(ds.drop_ios));
    m.insert(
        "slat_ns".into(),
        lat_obj(
            &ds.slat,
            st.slat_percentiles.then_some(list),
            plus && st.slat_percentiles,
        ),
    );
    m.insert(
        "clat_ns".into(),
        lat_obj(
            &ds.clat,
            st.clat_percentiles.then_some(list),
            plus && st.clat_percentiles,
        ),
    );
    m.insert(
        "lat_ns".into(),
        lat_obj(
            &ds.lat,
            st.lat_percentiles.then_some(list),
            plus && st.lat_percentiles,
        ),
    );
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

fn dist(vals: &[u64], total: u64, labels: &[&str]) -> Value {
    let m: Map<String, Value> = labels
        .iter()
        .zip(vals)
        .map(|(l, v)| {
            let pct = if total == 0 {
                0.0
            } else {
                *v as f64 * 100.0 / total as f64
            };
            (l.to_string(), f(pct))
        })
        .collect();
    Value::Object(m)
}

fn job_obj(r: &JobReport, report: &Report, plus: bool) -> Value {
    let s: &JobStats = &r.stats;
    let spec = &r.spec;
    let mut m = Map::new();
    m.insert("jobname".into(), json!(r.name));
    m.insert("groupid".into(), json!(r.groupid));
    m.insert("error".into(), json!(r.error));
    m.insert("eta".into(), json!(0));
    m.insert("elapsed".into(), json!(s.elapsed_ms.div_ceil(1000)));
    let opts: Map<String, Value> = spec
        .job_options
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    m.insert("job options".into(), Value::Object(opts));
    let group = report.group(r.groupid);
    for (d, name) in ["read", "write", "trim"].iter().enumerate() {
        let agg = group.map(|g| g.dir[d].agg_bw).unwrap_or(0);
        m.insert(name.to_string(), dir_obj(r, d, agg, plus));
    }
    let list = spec.stat.percentile_list.as_slice();
    m.insert(
        "sync".into(),
        json!({
            "total_ios": s.sync_ios,
            "lat_ns": lat_obj(&s.sync_lat, Some(list), plus),
        }),
    );
    let rt = (s.runtime_ms.max(1) * r.nr_jobs as u64) as f64;
    m.insert("job_runtime".into(), json!(s.runtime_ms));
    m.insert("usr_cpu".into(), f(s.usr_us as f64 / 10.0 / rt));
    m.insert("sys_cpu".into(), f(s.sys_us as f64 / 10.0 / rt));
    m.insert("ctx".into(), json!(s.ctx));
    m.insert("majf".into(), json!(s.majf));
    m.insert("minf".into(), json!(s.minf));
    m.insert(
        "iodepth_level".into(),
        dist(
            &s.depth,
            s.depth_total,
            &["1", "2", "4", "8", "16", "32", ">=64"],
        ),
    );
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    m.insert(
        "iodepth_submit".into(),
        dist(&s.submit, s.submit_calls, &batch),
    );
    m.insert(
        "iodepth_complete".into(),
        dist(&s.complete, s.complete_calls, &batch),
    );
    let total = s.lat_dist.total();
    let edges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    m.insert("latency_ns".into(), dist(&s.lat_dist.nsec, total, &edges));
    m.insert("latency_us".into(), dist(&s.lat_dist.usec, total, &edges));
    let ms_edges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    m.insert(
        "latency_ms".into(),
        dist(&s.lat_dist.msec, total, &ms_edges),
    );
    m.insert("latency_depth".into(), json!(spec.io.iodepth));
    m.insert(
        "latency_target".into(),
        json!(spec.stat.latency_target_us * 1000),
    );
    m.insert("latency_percentile".into(), f(spec.stat.latency_percentile));
    m.insert(
        "latency_window".into(),
        json!(spec.stat.latency_window_us * 1000),
    );
    if !spec.description.is_empty() {
        m.insert("desc".into(), json!(spec.description));
    }
    if let Some(msg) = &r.error_msg {
        // iomark addition: the error in words.
        m.insert("error_message".into(), json!(msg));
    }
    Value::Object(m)
}

/// The whole JSON document (json, or json+ with `plus`).
pub fn document(report: &Report, plus: bool) -> Value {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut top = Map::new();
    top.insert("fio version".into(), json!(version_string()));
    top.insert("iomark version".into(), json!(env!("CARGO_PKG_VERSION")));
    top.insert("timestamp".into(), json!(now_ms / 1000));
    top.insert("timestamp_ms".into(), json!(now_ms));
    top.insert("time".into(), json!(super::fmt::ctime(now_ms / 1000)));
    if !report.global_options.is_empty() {
        let g: Map<String, Value> = report
            .global_options
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        top.insert("global options".into(), Value::Object(g));
    }
    let jobs: Vec<Value> = report
        .jobs
        .iter()
        .map(|r| job_obj(r, report, plus))
        .collect();
    top.insert("jobs".into(), Value::Array(jobs));
    if report.interrupted {
        top.insert("interrupted".into(), json!(true));
    }
    top.insert("iomark".into(), super::env::iomark_section(report));
    Value::Object(top)
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
