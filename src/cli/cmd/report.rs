//! `iomark report RESULTS|LOG|DIR… [-o FILE]`: its table. Running it is
//! `suite::report_cmd`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{help_opt, opt, Complete, Pos, Section, Spec};
pub use crate::suite::report_cmd::ReportOpts;
use crate::suite::report_cmd::DEFAULT_OUTPUT;

pub fn spec() -> Spec<ReportOpts> {
    Spec {
        name: "report",
        usage: vec!["report RESULTS.json|LOG|DIR… [-o report.html]".into()],
        about: "Writes one self-contained HTML file (inline SVG and CSS, no scripts, no \
                network) from fio JSON (--output-format=json or json+), iomark JSON, or the \
                results of iomark quick, suite and sweep: CrystalDiskMark's grid for quick \
                and crystaldiskmark results, a summary table, throughput over time (every \
                measured pass), latency percentile curves, latency histograms (json+), sweep \
                charts, the environment and the settings. Several runs are each named by \
                their label, else their host and time. fio and iomark log files given too \
                (NAME_bw/iops/clat/slat/lat.N.log, and NAME_clat_hist.N.log from \
                write_hist_log, drawn as latency percentiles over time) are drawn job by \
                job. A directory stands for the *.json results and *.log files in it (files \
                there that are neither are skipped with a note)."
            .into(),
        lists: Vec::new(),
        sections: vec![Section::new(
            "Options",
            vec![
                opt(
                    "output",
                    "FILE",
                    format!("the HTML file (default {DEFAULT_OUTPUT})"),
                    Complete::File,
                    |o: &mut ReportOpts, v| {
                        o.output = v.into();
                        Ok(())
                    },
                )
                .short('o'),
                opt(
                    "title",
                    "TEXT",
                    "the report's title",
                    Complete::Nothing,
                    |o: &mut ReportOpts, v| {
                        o.title = Some(v.into());
                        Ok(())
                    },
                ),
                super::units_opt(|o: &mut ReportOpts, v| {
                    o.units = Some(super::parse_units(v)?);
                    Ok(())
                }),
                help_opt(),
            ],
        )],
        after: String::new(),
        positionals: vec![Pos {
            name: "RESULTS",
            complete: Complete::File,
        }],
        examples: vec![
            ("iomark report result.json -o report.html", "one result"),
            (
                "iomark report fio.json iomark-quick-*.json job_bw.1.log -o all.html",
                "fio and iomark results and a fio log in one page",
            ),
            (
                "iomark report results/ -o results.html",
                "every result and log in a directory",
            ),
        ],
        finish: |o, pos| {
            if pos.is_empty() {
                return Err("give at least one results file (see iomark report --help)".into());
            }
            o.inputs = pos.into_iter().map(PathBuf::from).collect();
            Ok(())
        },
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        ReportOpts::default(),
        argv,
        crate::suite::report_cmd::run,
    )
}
