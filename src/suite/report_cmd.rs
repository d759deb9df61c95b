//! `iomark report RESULTS.json… -o report.html`: one self-contained HTML
//! report from fio JSON (json or json+), iomark JSON, iomark
//! quick/suite/sweep results, and fio's bw/iops/lat log files.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{dataset, fail, write_file};
use crate::report::html;

pub const DEFAULT_OUTPUT: &str = "iomark-report.html";

pub fn usage() -> String {
    format!(
        "Usage: iomark report RESULTS.json… [-o report.html]\n\n\
         Writes one self-contained HTML file (inline SVG and CSS, no scripts, no\n\
         network) from fio JSON (--output-format=json or json+), iomark JSON, or the\n\
         results of iomark quick, suite and sweep: CrystalDiskMark's grid for quick\n\
         and crystaldiskmark results, a summary table, throughput over time (every\n\
         measured pass), latency percentile curves, latency histograms (json+), sweep\n\
         charts, the environment and the settings. fio log files (*.log) given too\n\
         are drawn over time.\n\n\
         Options:\n\
         \x20 -o, --output FILE   the HTML file (default {DEFAULT_OUTPUT})\n\
         \x20 --title TEXT        the report's title\n\
         \x20 -h, --help          this help\n\n\
         Examples:\n{}",
        [
            ("iomark report result.json -o report.html", "one result"),
            (
                "iomark report fio.json iomark-quick-*.json job_bw.1.log -o all.html",
                "fio and iomark results and a fio log in one page",
            ),
        ]
        .iter()
        .map(|(cmd, what)| crate::cli::help::example(cmd, what))
        .collect::<String>()
    )
}

pub fn main(argv: Vec<OsString>) -> i32 {
    use lexopt::Arg;
    let mut p = lexopt::Parser::from_args(argv);
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut output = PathBuf::from(DEFAULT_OUTPUT);
    let mut title: Option<String> = None;
    loop {
        let arg = match p.next() {
            Ok(Some(a)) => a,
            Ok(None) => break,
            Err(e) => return fail("report", &e.to_string()),
        };
        let r: Result<(), String> = match arg {
            Arg::Short('h') | Arg::Long("help") => {
                return super::print("report", &usage());
            }
            Arg::Short('o') | Arg::Long("output") => {
                super::args::value(&mut p, "output").map(|v| output = v.into())
            }
            Arg::Long("title") => super::args::value(&mut p, "title").map(|v| title = Some(v)),
            Arg::Value(v) => {
                inputs.push(v.into());
                Ok(())
            }
            Arg::Long(o) => Err(format!(
                "unknown option '--{o}' for iomark report (see iomark report --help)"
            )),
            Arg::Short(c) => Err(format!("unknown option '-{c}'")),
        };
        if let Err(e) = r {
            return fail("report", &e);
        }
    }
    if inputs.is_empty() {
        return fail(
            "report",
            "give at least one results file (see iomark report --help)",
        );
    }
    let mut sets = Vec::new();
    let mut logs = Vec::new();
    for i in &inputs {
        let r = if i.extension().is_some_and(|e| e == "log") {
            super::logs::load(i).map(|l| logs.push(l))
        } else {
            dataset::load(i).map(|d| sets.push(d))
        };
        if let Err(e) = r {
            return fail("report", &e);
        }
    }
    let title = title.unwrap_or_else(|| {
        if sets.len() == 1 && !sets[0].title.is_empty() {
            format!("iomark report: {}", sets[0].title)
        } else {
            format!("iomark report: {} file(s)", inputs.len())
        }
    });
    let page = html::report_page_with_logs(&title, &sets, &logs);
    if let Err(e) = write_file(&output, &page) {
        return fail("report", &e);
    }
    super::print("report", &format!("HTML report: {}\n", output.display()))
}
