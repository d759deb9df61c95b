//! One pass of a job file's text through iomark's one run pipeline, in
//! process: `job::jobfile` parses it, `job::build_jobs` builds the jobs
//! (of one section when asked), `run::session` expands, checks, plans,
//! describes the host, switches schedulers and runs them exactly as the
//! command line does with that job file, `report` builds the model and
//! `report::json` writes the document (with json+ bins). Suites use only
//! this, so what they run is exactly the job file they print.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::job::{self, Entry, Origin, Section};
use crate::report;
use crate::run::plan::{Plan, TargetKind};
use crate::run::session::{Ready, Session, SessionOptions};
use crate::run::RunOptions;

/// Parses job file text; errors name the given file name and line.
pub fn sections(text: &str, name: &str) -> Result<Vec<Section>, String> {
    job::jobfile::parse_jobfile_text(text, Path::new(name)).map_err(|e| e.to_string())
}

/// Builds, checks and plans the jobs of `only` (a section name; None:
/// all), with `extra` options appended to the chosen sections (e.g. a
/// warm-up's shorter runtime), as a session that runs with `opts`.
pub fn prepare(
    sections: &[Section],
    name: &str,
    only: Option<&str>,
    extra: &[(&str, String)],
    opts: &RunOptions,
) -> Result<Ready, String> {
    let mut secs = sections.to_vec();
    if !extra.is_empty() {
        for s in secs.iter_mut().filter(|s| !s.is_global()) {
            if only.is_none_or(|o| o == s.name) {
                for (k, v) in extra {
                    s.entries.push(Entry {
                        key: k.to_string(),
                        value: Some(v.clone()),
                        origin: Origin::cli(),
                        unset_vars: Vec::new(),
                    });
                }
            }
        }
    }
    let src = job::JobSources {
        files: vec![(PathBuf::from(name), secs)],
        sections: only.map(|s| vec![s.to_string()]).unwrap_or_default(),
        ..Default::default()
    };
    let list = crate::workload::checked_jobs(&src).map_err(|e| e.to_string())?;
    let opts = SessionOptions {
        run: opts.clone(),
        ..SessionOptions::default()
    };
    Session::new(list, opts)
        .prepare()
        .map_err(|e| e.to_string())
}

/// Files a plan would create (missing now) and regular files it would
/// use that already exist, each once.
pub fn plan_files(plan: &Plan) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut new = Vec::new();
    let mut existing = Vec::new();
    for f in plan.jobs.iter().flat_map(|j| &j.files) {
        let list = match f.kind {
            TargetKind::Missing => &mut new,
            TargetKind::Regular => &mut existing,
            _ => continue,
        };
        if !list.contains(&f.path) {
            list.push(f.path.clone());
        }
    }
    (new, existing)
}

/// What one pass produced.
pub struct PassOutput {
    pub doc: Value,
    pub interrupted: bool,
    /// "job 'x': message" for each job that failed.
    pub errors: Vec<String>,
    /// Seconds the longest job ran, ramp included (not its file layout).
    pub io_s: f64,
}

/// Runs a prepared pass; fails (one line) only when the run could not
/// start (an I/O scheduler that cannot be switched).
pub fn run(p: Ready) -> Result<PassOutput, String> {
    let result = p.run().map_err(|e| e.to_string())?;
    let errors = result
        .jobs
        .iter()
        .filter_map(|j| {
            j.outcome
                .error_msg
                .as_ref()
                .map(|m| format!("job '{}': {m}", j.job.name()))
                .or_else(|| {
                    (j.outcome.error != 0)
                        .then(|| format!("job '{}': error {}", j.job.name(), j.outcome.error))
                })
        })
        .collect();
    let io_ms = result
        .jobs
        .iter()
        .map(|j| j.outcome.stats.elapsed_ms)
        .max()
        .unwrap_or(0);
    let rep = report::build(&result);
    Ok(PassOutput {
        doc: report::json::document(&rep, true),
        interrupted: result.interrupted,
        errors,
        io_s: io_ms as f64 / 1e3,
    })
}
