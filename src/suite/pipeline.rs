//! One pass of a job file's text through iomark's one run pipeline, in
//! process: `job::jobfile` parses it, `job::build_jobs` builds the jobs
//! (of one section when asked), `run::session` expands, checks, plans,
//! describes the host, switches schedulers and runs them exactly as the
//! command line does with that job file, `report` builds the model and
//! `report::json` writes the document (with json+ bins). Suites use only
//! this, so what they run is exactly the job file they print.
//!
//! Each pass goes through the command's launch (`launch::Launch`): on one
//! host, or under MPI one session on every rank, whose rank 0 gets the
//! same document the command line writes (`report::cluster`: `jobs`
//! merged exactly over every rank, `client_stats` per host,
//! `iomark.cluster` with its phases) and each client's (host's, or rank's
//! on one host) own figures for the spread.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::results::dataset::Metrics;

use crate::cluster::Client;
use crate::job::{self, Entry, Origin, Section};
use crate::launch::{Launch, Prepared, Refused};
use crate::report;
use crate::run::plan::{Plan, TargetKind};
use crate::run::session::SessionOptions;
use crate::run::RunOptions;

/// Parses job file text; errors name the given file name and line.
pub fn sections(text: &str, name: &str) -> Result<Vec<Section>, String> {
    job::jobfile::parse_jobfile_text(text, Path::new(name)).map_err(|e| e.to_string())
}

/// Builds, checks and plans the jobs of `only` (a section name; None:
/// all), with `extra` options appended to the chosen sections (e.g. a
/// warm-up's shorter runtime), as a session on `launch` that runs with
/// `opts`: its safety verdict agreed by every rank (a refusal anywhere is
/// an error on every rank, said by rank 0 alone).
pub fn prepare_on(
    launch: &Launch,
    sections: &[Section],
    name: &str,
    only: Option<&str>,
    extra: &[(&str, String)],
    opts: &RunOptions,
) -> Result<Prepared, Refused> {
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
        place: launch.place(),
        ..SessionOptions::default()
    };
    Ok(launch.prepare(list, opts)?)
}

/// The regular files that already exist among those the jobs of
/// `sections` would use on this rank (none when they cannot be planned:
/// preparing them says why).
pub fn existing_files(launch: &Launch, sections: &[Section], name: &str) -> Vec<PathBuf> {
    let src = job::JobSources {
        files: vec![(PathBuf::from(name), sections.to_vec())],
        ..Default::default()
    };
    let Ok(list) = crate::workload::checked_jobs(&src) else {
        return Vec::new();
    };
    crate::run::plan::existing_regular_files(&list.jobs, &launch.place()).unwrap_or_default()
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
    /// Under MPI, on rank 0: each client's own figures (empty otherwise).
    pub clients: Vec<ClientPass>,
}

/// One client's (host's, or rank's) figures of a pass.
#[derive(Clone, Debug)]
pub struct ClientPass {
    pub client: Client,
    /// Per direction: its metrics and its number of I/Os.
    pub dirs: Vec<(String, Metrics, u64)>,
}

/// The I/Os of each direction over every job entry of a document.
pub fn dir_ios(doc: &Value, dir: &str) -> u64 {
    doc["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|j| j[dir]["total_ios"].as_u64().unwrap_or(0))
        .sum()
}

/// Runs a prepared pass (see the module documentation); fails (one
/// line) only when the run could not start (an I/O scheduler that cannot
/// be switched). Under MPI, another rank's output has its own errors only
/// (its document is null: rank 0 reports).
pub fn run_on(p: Prepared) -> Result<PassOutput, String> {
    let done = p.run().map_err(|e| e.to_string())?;
    let io_ms = done
        .result
        .jobs
        .iter()
        .map(|j| j.outcome.stats.elapsed_ms)
        .max()
        .unwrap_or(0);
    let clients = done
        .clients()
        .iter()
        .map(|(c, r)| {
            let d = report::json::document(&report::build(r), true);
            let dirs = super::runner::pass_metrics(&d)
                .1
                .into_iter()
                .map(|(dir, m)| {
                    let n = dir_ios(&d, &dir);
                    (dir, m, n)
                })
                .collect();
            ClientPass {
                client: c.clone(),
                dirs,
            }
        })
        .collect();
    Ok(PassOutput {
        doc: if done.reports() {
            done.document(true)
        } else {
            Value::Null
        },
        interrupted: done.interrupted(),
        errors: done.job_errors(),
        io_s: io_ms as f64 / 1e3,
        clients,
    })
}
