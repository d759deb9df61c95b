//! One run as the history and `compare` see it: one result file is one
//! run. A run holds, per test (a job direction, or a quick/suite/sweep
//! test direction), its figures for the run (for a results bundle, the
//! median of its measured passes), each pass's figures (within-run
//! spread only: passes taken back to back are not independent samples of
//! run-to-run noise), the settings that define the test, and the merged
//! latency histogram bins of all its passes.
//!
//! Read from iomark's results bundles (`quick`, `suite`, `sweep`),
//! iomark's fio-format JSON (a job run, label in `iomark.label`) and
//! fio's own JSON/json+ (the last document of a `--status-interval`
//! stream).

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::Digest;

use crate::results::dataset::{self, Metrics, METRICS};
pub use crate::results::dataset::{settings_of, TargetInfo, SETTINGS_NOT_DEFINING as NOT_DEFINING};
use crate::results::stats;
use crate::results::ReadError;

/// One test of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TestRun {
    /// `section/direction` (bundles) or `job/direction` (job results).
    pub key: String,
    pub name: String,
    pub dir: String,
    /// The job options that define the test (see [`NOT_DEFINING`]).
    pub settings: BTreeMap<String, String>,
    /// The run's figures: the median of its passes.
    pub value: Metrics,
    /// Each measured pass's figures (one for a job result).
    pub passes: Vec<Metrics>,
    /// Which latency the bins count: "lat", "clat" (or "write+sync",
    /// whose bins are not kept).
    pub lat_kind: String,
    /// The latency histogram of every pass merged: (ns, count), by ns.
    pub bins: Vec<(f64, u64)>,
}

/// One run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Its row in the history (None when read from a file).
    pub id: Option<i64>,
    /// Where it came from, for messages: a file, or `history #ID`.
    pub source: String,
    pub label: Option<String>,
    /// "quick", "suite", "sweep" (bundles) or "job" (a job result).
    pub kind: String,
    pub title: String,
    /// Unix seconds.
    pub time: i64,
    /// "iomark" or "fio".
    pub tool: String,
    pub version: String,
    pub host: String,
    pub kernel: String,
    pub target: TargetInfo,
    pub jobfile: Option<String>,
    pub jobfile_digest: Option<String>,
    /// SHA-256 of the result document (the same result is kept once).
    pub digest: String,
    pub interrupted: bool,
    /// Measured under Wine (its results carry the `wine` warning; not
    /// kept in the history).
    pub wine: bool,
    pub tests: Vec<TestRun>,
}

impl Run {
    /// The bandwidth unit the run was recorded in: MB/s for
    /// CrystalDiskMark-style results (`quick`: tests named as
    /// CrystalDiskMark's), else MiB/s.
    pub fn recorded_unit(&self) -> crate::results::units::BwUnit {
        crate::results::units::BwUnit::of_tests(self.tests.iter().map(|t| t.name.as_str()))
    }

    pub fn test(&self, key: &str) -> Option<&TestRun> {
        self.tests.iter().find(|t| t.key == key)
    }

    /// The device as shown in lists: model, else device name.
    pub fn device_shown(&self) -> String {
        match (&self.target.model, &self.target.device) {
            (m, _) if !m.is_empty() => m.clone(),
            (_, d) => d.clone(),
        }
    }

    /// `label`, else `host time`: how a run is named in reports.
    pub fn name(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => format!(
                "{} {}",
                self.host,
                crate::report::fmt::ctime(self.time as u64)
            ),
        }
    }
}

/// Hex SHA-256 of `text`.
pub fn digest(text: &[u8]) -> String {
    let d = sha2::Sha256::digest(text);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a run from a result file's text; `source` names it.
pub fn from_text(text: &str, source: &str) -> Result<Run, ReadError> {
    let start = text
        .find('{')
        .ok_or_else(|| ReadError::malformed(source, "no JSON document in the file"))?;
    let mut last: Option<Value> = None;
    for doc in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match doc {
            Ok(v) => last = Some(v),
            Err(e) if last.is_some() && e.is_eof() => break,
            Err(e) => return Err(ReadError::malformed(source, format!("not valid JSON: {e}"))),
        }
    }
    let v = last.ok_or_else(|| ReadError::malformed(source, "no JSON document in the file"))?;
    let mut run = from_value(&v, source)?;
    run.digest = digest(text.as_bytes());
    Ok(run)
}

/// Reads a run from a file, document by document and job by job (a
/// file of hundreds of megabytes is never held whole); its digest is
/// that of the file's bytes, as [`from_text`] gives.
pub fn load(path: &std::path::Path) -> Result<Run, ReadError> {
    let (d, digest) = dataset::load_with_digest(path)?;
    let mut run = from_dataset(d);
    run.digest = digest;
    Ok(run)
}

/// A run from a parsed document (bundle or fio-format), read as every
/// results file is (`results::dataset`); its digest is that of the
/// document's compact text.
pub fn from_value(v: &Value, source: &str) -> Result<Run, ReadError> {
    let mut run = from_dataset(dataset::from_value(v, source)?);
    run.digest = digest(v.to_string().as_bytes());
    Ok(run)
}

/// The run a results file holds, from its typed reading.
pub fn from_dataset(d: dataset::Dataset) -> Run {
    let bundle = d.bundle;
    let tests = d
        .items
        .into_iter()
        .map(|item| {
            let mut bins = Vec::new();
            for b in &item.bins {
                add_bins(&mut bins, b);
            }
            TestRun {
                key: item.key,
                name: item.name,
                dir: item.dir,
                settings: item.settings,
                value: if bundle {
                    median_of(&item.samples)
                } else {
                    item.samples[0]
                },
                passes: item.samples,
                lat_kind: item.lat_kind.to_string(),
                bins,
            }
        })
        .collect();
    let jobfile = if bundle { d.jobfile } else { None };
    let wine = d.warnings.iter().any(|w| w.key.starts_with("wine/"));
    let tool = if bundle || d.kind == "iomark" {
        "iomark"
    } else {
        "fio"
    };
    Run {
        id: None,
        source: d.source,
        label: Some(d.label).filter(|l| !l.is_empty()),
        kind: if bundle { d.kind } else { "job".into() },
        title: d.title,
        time: d.timestamp,
        tool: tool.into(),
        version: d.tool_version,
        host: d.host,
        kernel: d.kernel,
        target: d.target,
        jobfile_digest: jobfile.as_deref().map(|j| digest(j.as_bytes())),
        jobfile,
        digest: String::new(),
        interrupted: d.interrupted,
        wine,
        tests,
    }
}

/// Adds json+ bins (`{"ns": count}`) to `to`, kept sorted by ns.
fn add_bins(to: &mut Vec<(f64, u64)>, from: &[(f64, f64)]) {
    for &(ns, c) in from {
        let c = c.max(0.0) as u64;
        match to.binary_search_by(|x| x.0.total_cmp(&ns)) {
            Ok(i) => to[i].1 += c,
            Err(i) => to.insert(i, (ns, c)),
        }
    }
}

/// The median of each metric over the passes.
pub fn median_of(passes: &[Metrics]) -> Metrics {
    let med = |f: fn(&Metrics) -> f64| {
        let v: Vec<f64> = passes.iter().map(f).filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            stats::summarize(&v).median
        }
    };
    Metrics {
        bw_bytes: med(METRICS[0].get),
        iops: med(METRICS[1].get),
        lat_mean_ns: med(METRICS[2].get),
        lat_p99_ns: med(METRICS[3].get),
        sync_write: passes.iter().any(|p| p.sync_write),
    }
}

/// The latency at percentile `p` (0–100) of histogram bins, as the
/// value of the bin where the cumulative count first reaches p % of all
/// (the bins' values are fio's bucket midpoints, so this is the
/// percentile fio would report for the same I/Os). None without I/O.
pub fn bins_percentile(bins: &[(f64, u64)], p: f64) -> Option<f64> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let want = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut acc = 0;
    for &(ns, c) in bins {
        acc += c;
        if acc >= want {
            return Some(ns);
        }
    }
    bins.last().map(|b| b.0)
}

/// Several histograms merged bin by bin.
pub fn merge_bins<'a>(all: impl IntoIterator<Item = &'a [(f64, u64)]>) -> Vec<(f64, u64)> {
    let mut out = Vec::new();
    for b in all {
        let f: Vec<(f64, f64)> = b.iter().map(|&(n, c)| (n, c as f64)).collect();
        add_bins(&mut out, &f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"fio version": "fio-3.33", "timestamp": 1700000000,
      "global options": {"bs": "4k", "directory": "/x", "runtime": "2s"},
      "jobs": [{"jobname": "a", "job options": {"rw": "randread", "rate_iops": "400"},
        "read": {"total_ios": 10, "bw_bytes": 4096, "iops": 1.0,
          "lat_ns": {"N": 10, "mean": 5.0},
          "clat_ns": {"N": 10, "mean": 4.0, "percentile": {"99.000000": 30},
                      "bins": {"10": 6, "30": 4}}}}]}"#;

    #[test]
    fn a_fio_document_is_one_run_with_its_defining_settings() {
        let r = from_text(DOC, "f.json").unwrap();
        assert_eq!(r.tool, "fio");
        assert_eq!(r.version, "fio-3.33");
        assert_eq!(r.time, 1700000000);
        assert_eq!(r.tests.len(), 1);
        let t = &r.tests[0];
        assert_eq!(t.key, "a/read");
        let want: BTreeMap<String, String> =
            [("bs", "4k"), ("rate_iops", "400"), ("rw", "randread")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(
            t.settings, want,
            "directory and runtime do not define the I/O"
        );
        assert_eq!(t.bins, vec![(10.0, 6), (30.0, 4)]);
        assert_eq!(t.value.lat_p99_ns, 30.0);
        assert_eq!(r.digest.len(), 64);
    }

    /// A file read as a stream (import) gives the run its text gives:
    /// the same digest, tests, figures and bins; for a fio status stream
    /// with a notice before it, the last document.
    #[test]
    fn a_file_read_as_a_stream_is_the_run_its_text_is() {
        let d = tempfile::tempdir().unwrap();
        let later = DOC
            .replace("1700000000", "1700000100")
            .replace("\"a\"", "\"b\"");
        for (name, text) in [
            (
                "bundle.json",
                include_str!("../../tests/fixtures/history/bundle.json").to_string(),
            ),
            (
                "job.json",
                include_str!("../../tests/fixtures/history/job.json").to_string(),
            ),
            ("stream.json", format!("note: a notice\n{DOC}\n{later}\n")),
        ] {
            let p = d.path().join(name);
            std::fs::write(&p, &text).unwrap();
            let src = p.display().to_string();
            let streamed = load(&p).unwrap();
            let whole = from_text(&text, &src).unwrap();
            assert_eq!(streamed, whole, "{name}");
            assert_eq!(streamed.digest, digest(text.as_bytes()));
            assert!(!streamed.tests.is_empty(), "{name}");
        }
        let s = load(&d.path().join("stream.json")).unwrap();
        assert_eq!((s.time, s.tests[0].key.as_str()), (1700000100, "b/read"));
    }

    #[test]
    fn percentiles_of_merged_bins_are_exact() {
        let a = [(10.0, 98u64), (20.0, 2)];
        let b = [(10.0, 50u64), (40.0, 50)];
        let m = merge_bins([&a[..], &b[..]]);
        assert_eq!(m, vec![(10.0, 148), (20.0, 2), (40.0, 50)]);
        // 200 I/Os: the 148th is the last at 10 ns, the 150th at 20.
        assert_eq!(bins_percentile(&m, 74.0), Some(10.0));
        assert_eq!(bins_percentile(&m, 75.0), Some(20.0));
        assert_eq!(bins_percentile(&m, 99.0), Some(40.0));
        assert_eq!(bins_percentile(&m, 0.0), Some(10.0));
        assert_eq!(bins_percentile(&[], 50.0), None);
    }

    #[test]
    fn the_median_of_passes_is_the_runs_figure() {
        let m = |x: f64| Metrics {
            bw_bytes: x,
            iops: x,
            lat_mean_ns: x,
            lat_p99_ns: x,
            sync_write: false,
        };
        assert_eq!(median_of(&[m(3.0), m(1.0), m(2.0)]).iops, 2.0);
    }
}
