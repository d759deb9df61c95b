//! `iomark report RESULTS.json… -o report.html`: one self-contained HTML
//! report from fio JSON (json or json+), iomark JSON, iomark
//! quick/suite/sweep results, and fio's bw/iops/lat/histogram log files;
//! a directory stands for the results (`*.json`) and logs (`*.log`) in it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::run::output;

use super::{dataset, fail, write_file};
use crate::report::html;

pub const DEFAULT_OUTPUT: &str = "iomark-report.html";

pub fn usage() -> String {
    format!(
        "Usage: iomark report RESULTS.json|LOG|DIR… [-o report.html]\n\n\
         Writes one self-contained HTML file (inline SVG and CSS, no scripts, no\n\
         network) from fio JSON (--output-format=json or json+), iomark JSON, or the\n\
         results of iomark quick, suite and sweep: CrystalDiskMark's grid for quick\n\
         and crystaldiskmark results, a summary table, throughput over time (every\n\
         measured pass), latency percentile curves, latency histograms (json+), sweep\n\
         charts, the environment and the settings. Several runs are each named by\n\
         their label, else their host and time. fio and iomark log files given too\n\
         (NAME_bw/iops/clat/slat/lat.N.log, and NAME_clat_hist.N.log from\n\
         write_hist_log, drawn as latency percentiles over time) are drawn job by\n\
         job. A directory stands for the *.json results and *.log files in it (files\n\
         there that are neither are skipped with a note).\n\n\
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
            (
                "iomark report results/ -o results.html",
                "every result and log in a directory",
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
    let mut inp = Inputs::default();
    for i in &inputs {
        if let Err(e) = inp.add(i) {
            return fail("report", &e);
        }
    }
    let Inputs { sets, logs } = inp;
    let title = title.unwrap_or_else(|| {
        if sets.len() == 1 && !sets[0].title.is_empty() {
            format!("iomark report: {}", sets[0].title)
        } else {
            format!("iomark report: {} file(s)", sets.len() + logs.len())
        }
    });
    let page = html::report_page_with_logs(&title, &sets, &logs);
    if let Err(e) = write_file(&output, &page) {
        return fail("report", &e);
    }
    super::print("report", &format!("HTML report: {}\n", output.display()))
}

/// What the report is made of.
#[derive(Default)]
struct Inputs {
    sets: Vec<dataset::Dataset>,
    logs: Vec<super::logs::Log>,
}

fn is_log(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "log")
}

impl Inputs {
    /// A results file, a log file, or a directory of them.
    fn add(&mut self, p: &Path) -> Result<(), String> {
        if p.is_dir() {
            return self.add_dir(p);
        }
        if is_log(p) {
            self.logs.push(super::logs::load(p)?);
        } else {
            self.sets.push(dataset::load(p)?);
        }
        Ok(())
    }

    /// The `*.json` results and `*.log` files of a directory (not its
    /// subdirectories), in name order; others there are skipped with a
    /// note. Err when it holds none.
    fn add_dir(&mut self, dir: &Path) -> Result<(), String> {
        let rd = std::fs::read_dir(dir).map_err(|e| {
            format!(
                "cannot read directory '{}': {}",
                dir.display(),
                crate::job::jobfile::io_reason(&e)
            )
        })?;
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| is_log(p) || p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        let before = self.sets.len() + self.logs.len();
        for f in &files {
            let r = if is_log(f) {
                super::logs::load(f).map(|l| self.logs.push(l))
            } else {
                dataset::load(f).map(|d| self.sets.push(d))
            };
            if let Err(e) = r {
                output::stderr_line(&format!("iomark report: note: skipped {e}"));
            }
        }
        if self.sets.len() + self.logs.len() == before {
            return Err(format!(
                "'{}' holds no results (*.json) or fio logs (*.log) iomark can read",
                dir.display()
            ));
        }
        Ok(())
    }
}
