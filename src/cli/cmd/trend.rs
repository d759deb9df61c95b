//! `iomark trend --test TEXT [--metric M] …`: its table. Running it is
//! `history::cmd::trend`.

use std::ffi::OsString;

use super::bench::parse_pct;
use super::history::{select_opts, test_opt, HasSelect, Select};
use super::{help_opt, opt, switch, Complete, Section, Spec};
pub use crate::history::cmd::TrendOpts;
use crate::history::trend::{self, Metric};

impl HasSelect for TrendOpts {
    fn select(&mut self) -> &mut Select {
        &mut self.select
    }
}

fn metrics() -> Vec<&'static str> {
    vec!["bw", "iops", "lat", "p99", "p99.9"]
}

pub fn spec() -> Spec<TrendOpts> {
    let mut o = vec![
        test_opt("the test: a part of its key or name that names one test"),
        opt(
            "metric",
            "M",
            "bw, iops (default), lat, p99 or pNN",
            Complete::Words(metrics),
            |t: &mut TrendOpts, v| {
                t.metric = Metric::parse(v)?;
                Ok(())
            },
        ),
        opt(
            "threshold",
            "PCT",
            "the smallest change point (default 5)",
            Complete::Nothing,
            |t: &mut TrendOpts, v| {
                t.threshold = parse_pct(v, "threshold", f64::INFINITY)?;
                Ok(())
            },
        ),
        opt(
            "html",
            "FILE",
            "also write the chart as an HTML page",
            Complete::File,
            |t: &mut TrendOpts, v| {
                t.html = Some(v.into());
                Ok(())
            },
        ),
        switch("json", "the series as JSON", |t: &mut TrendOpts, _| {
            t.json = true;
            Ok(())
        }),
    ];
    o.extend(select_opts(false));
    o.push(super::units_opt(|t: &mut TrendOpts, v| {
        t.units = Some(super::parse_units(v)?);
        Ok(())
    }));
    o.push(help_opt());
    Spec {
        name: "trend",
        usage: vec!["trend --test TEXT [--metric M] [SELECTION] [--html FILE] [--json]".into()],
        about: format!(
            "One metric of one test over time, per device (model, serial and host), from the \
             results history: each run's figure and the range of its passes, and the change \
             points of the series. Change points (binary segmentation): every split of a \
             device's runs into a before and an after of two runs or more is tried; the split \
             with the largest Welch t (logarithms of the per-run values) counts when the {}% \
             interval of the change lies wholly beyond ±threshold; then each side is searched \
             again. Metrics: bw, iops, lat (mean latency), p99, or any percentile pNN from each \
             run's merged latency histogram (exact over all its passes).",
            (1.0 - trend::CHANGE_ALPHA) * 100.0
        ),
        lists: Vec::new(),
        sections: vec![Section::new("Options", o)],
        after: String::new(),
        positionals: Vec::new(),
        examples: vec![
            (
                "iomark trend --test rnd4k-q1t1-read",
                "IOPS of CrystalDiskMark's RND4K Q1T1 read over time",
            ),
            (
                "iomark trend --test rnd4k-q32t1-write --metric p99.9 --html t.html",
                "its 99.9th percentile latency, charted",
            ),
        ],
        finish: |_, pos| {
            if !pos.is_empty() {
                return Err("trend takes no arguments (name the test with --test)".into());
            }
            // Without --test the runner names the tests it could draw.
            Ok(())
        },
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        TrendOpts::default(),
        argv,
        crate::history::cmd::trend,
    )
}
