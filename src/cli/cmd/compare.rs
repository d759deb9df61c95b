//! `iomark compare BASE NEW | --base RUN… --new RUN…`: its table.
//! Running it is `suite::compare`.

use std::ffi::OsString;

use super::bench::{parse_pct, parse_u32};
use super::{help_opt, opt, switch, Complete, Pos, Section, Spec};
pub use crate::suite::compare::CompareOpts;
use crate::suite::compare::{
    DEFAULT_ALPHA, DEFAULT_LAST, DEFAULT_THRESHOLD_PCT, EXIT_NOT_COMPARABLE,
};
use crate::suite::EXIT_REGRESSION;

fn finish(a: &mut CompareOpts, pos: Vec<OsString>) -> Result<(), String> {
    let mut pos = super::strings(pos)?;
    if a.base.is_empty() && a.new.is_empty() {
        if pos.len() != 2 {
            return Err("give BASE and NEW, or --base RUN… --new RUN… (see --help)".into());
        }
        a.new.push(pos.pop().expect("two"));
        a.base.push(pos.pop().expect("two"));
    } else if a.base.is_empty() || a.new.is_empty() || !pos.is_empty() {
        return Err("with --base/--new, give runs to both and nothing else".into());
    }
    Ok(())
}

#[allow(clippy::too_many_lines)]
fn options() -> Vec<super::Opt<CompareOpts>> {
    vec![
        opt(
            "base",
            "RUN",
            "the runs before: files, @LABEL or #ID",
            Complete::File,
            |a: &mut CompareOpts, v| {
                a.base.push(v.into());
                Ok(())
            },
        )
        .many(),
        opt(
            "new",
            "RUN",
            "the runs after",
            Complete::File,
            |a: &mut CompareOpts, v| {
                a.new.push(v.into());
                Ok(())
            },
        )
        .many(),
        opt(
            "threshold",
            "PCT",
            format!("the change that counts, percent (default {DEFAULT_THRESHOLD_PCT})"),
            Complete::Nothing,
            |a: &mut CompareOpts, v| {
                a.rules.threshold = parse_pct(v, "threshold", 1000.0)?;
                Ok(())
            },
        ),
        opt(
            "alpha",
            "A",
            format!("1 − the interval's confidence (default {DEFAULT_ALPHA})"),
            Complete::Nothing,
            |a: &mut CompareOpts, v| {
                a.rules.alpha = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| *x > 0.0 && *x < 1.0)
                    .ok_or_else(|| format!("--alpha: '{v}' is not between 0 and 1"))?;
                Ok(())
            },
        ),
        switch(
            "allow-different",
            "compare although the defining settings differ",
            |a: &mut CompareOpts, _| {
                a.allow_different = true;
                Ok(())
            },
        ),
        opt(
            "last",
            "N",
            format!("runs @LABEL takes, the latest (default {DEFAULT_LAST})"),
            Complete::Nothing,
            |a: &mut CompareOpts, v| {
                a.last = parse_u32(v, "last", 1)? as usize;
                Ok(())
            },
        ),
        opt(
            "history-db",
            "FILE",
            "the results history for @LABEL and #ID",
            Complete::File,
            |a: &mut CompareOpts, v| {
                a.db = Some(v.into());
                Ok(())
            },
        ),
        switch(
            "detail",
            "every metric of every test, not one line per test",
            |a: &mut CompareOpts, _| {
                a.detail = true;
                Ok(())
            },
        ),
        opt(
            "json",
            "FILE",
            "write the comparison as JSON (- for stdout)",
            Complete::File,
            |a: &mut CompareOpts, v| {
                a.json = Some(v.into());
                Ok(())
            },
        ),
        opt(
            "html",
            "FILE",
            "write an HTML report with the intervals drawn",
            Complete::File,
            |a: &mut CompareOpts, v| {
                a.html = Some(v.into());
                Ok(())
            },
        ),
        super::units_opt(|a: &mut CompareOpts, v| {
            a.units = Some(super::parse_units(v)?);
            Ok(())
        }),
        help_opt(),
    ]
}

pub fn spec() -> Spec<CompareOpts> {
    Spec {
        name: "compare",
        usage: vec![
            "compare BASE NEW [OPTIONS]".into(),
            "compare --base RUN… --new RUN… [OPTIONS]".into(),
        ],
        about: "Compares two sides, per test and metric (bandwidth, IOPS, mean and p99 \
                latency). A side is one or more runs: result files (fio or iomark JSON; a \
                quick/suite/sweep results file is one run, its passes only its within-run \
                spread), @LABEL (the latest runs with that label in the results history) or #ID \
                (a history run). The settings that define each test (job options that change \
                the I/O, engine, direct, block size, depth, jobs, device, filesystem, tool and \
                version) must match, or the verdict is \"not comparable\". Each change comes \
                with its interval (Welch, on the logarithms of the per-run values; p99 on each \
                run's own p99), made so that the intervals of all the metrics compared hold \
                together with 90% confidence (Bonferroni: with m metrics, each at 1 - 0.10/m, \
                each end a one-sided bound at half that); a regression or an \
                improvement only when the interval lies beyond the threshold, \"no change\" \
                when it lies within it, else \"inconclusive\". With one run a side there is no \
                interval: inconclusive, with the number of runs the observed spread needs. With \
                one run on one side, its noise is taken to be the other side's. One line per \
                test; --detail shows every metric."
            .into(),
        lists: Vec::new(),
        sections: vec![Section::new("Options", options())],
        after: format!(
            "Exit status: 0 no regression, {EXIT_REGRESSION} a regression, \
             {EXIT_NOT_COMPARABLE} not comparable, 1 bad input."
        ),
        positionals: vec![
            Pos {
                name: "BASE",
                complete: Complete::File,
            },
            Pos {
                name: "NEW",
                complete: Complete::File,
            },
        ],
        examples: vec![
            (
                "iomark compare --base a1.json a2.json a3.json --new b1.json b2.json b3.json",
                "three runs a side",
            ),
            (
                "iomark compare --base @before --new @after",
                "the runs labelled before and after in the history",
            ),
            (
                "iomark compare --base @main --new run.json --threshold 5",
                "a CI gate: exit 2 only on a change whose interval is beyond -5%",
            ),
        ],
        finish,
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        CompareOpts::default(),
        argv,
        crate::suite::compare::run,
    )
}
