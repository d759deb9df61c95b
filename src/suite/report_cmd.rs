//! `iomark report RESULTS.json… -o report.html`: one self-contained HTML
//! report from fio JSON (json or json+), iomark JSON, iomark
//! quick/suite/sweep results, and fio's bw/iops/lat/histogram log files;
//! a directory stands for the results (`*.json`) and logs (`*.log`) in it.

use std::path::{Path, PathBuf};

use crate::run::output;

use super::{fail, write_file};
use crate::report::html;
use crate::results::dataset;

pub const DEFAULT_OUTPUT: &str = "iomark-report.html";

/// Writes the report as asked (parsed by `cli::cmd::report`).
pub fn run(opts: ReportOpts) -> i32 {
    let ReportOpts {
        inputs,
        output,
        title,
        units,
    } = opts;
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
    let lead = groups_summary(&sets, units);
    let page = html::report_page_in(&title, &sets, &logs, units, &lead);
    if let Err(e) = write_file(&output, &page) {
        return fail("report", &e);
    }
    super::print("report", &format!("HTML report: {}\n", output.display()))
}

/// With runs under two labels or more: the labelled groups compared as
/// `iomark compare` compares them (each label against the first), as
/// the page's opening section. Empty otherwise.
fn groups_summary(
    sets: &[dataset::Dataset],
    units: Option<crate::results::units::BwUnit>,
) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for d in sets {
        if !d.label.is_empty() && !labels.contains(&d.label.as_str()) {
            labels.push(&d.label);
        }
    }
    if labels.len() < 2 {
        return String::new();
    }
    let side = |label: &str| -> Result<super::compare::Side, String> {
        let runs = sets
            .iter()
            .filter(|d| d.label == label)
            .map(|d| crate::history::run::load(Path::new(&d.source)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(super::compare::Side {
            spec: label.to_string(),
            runs,
        })
    };
    let rules = super::compare::Rules {
        threshold: super::compare::DEFAULT_THRESHOLD_PCT,
        alpha: super::compare::DEFAULT_ALPHA,
    };
    let Ok(base) = side(labels[0]) else {
        return String::new();
    };
    let mut out = String::new();
    for other in &labels[1..] {
        let Ok(new) = side(other) else {
            continue;
        };
        out.push_str(&super::compare::summary_html(&base, &new, rules, units));
    }
    out
}

/// What the report is made of.
#[derive(Default)]
struct Inputs {
    sets: Vec<dataset::Dataset>,
    logs: Vec<crate::results::logs::Log>,
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
            self.logs.push(crate::results::logs::load(p)?);
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
                crate::results::logs::load(f).map(|l| self.logs.push(l))
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

/// What `iomark report` was asked.
#[derive(Clone, Debug)]
pub struct ReportOpts {
    /// Results files, log files and directories, in the order given.
    pub inputs: Vec<PathBuf>,
    pub output: PathBuf,
    pub title: Option<String>,
    /// `--units`: the bandwidth unit (None: MB/s when the report opens on
    /// CrystalDiskMark-style results, else MiB/s).
    pub units: Option<crate::results::units::BwUnit>,
}

impl Default for ReportOpts {
    fn default() -> Self {
        ReportOpts {
            inputs: Vec::new(),
            output: PathBuf::from(DEFAULT_OUTPUT),
            title: None,
            units: None,
        }
    }
}
