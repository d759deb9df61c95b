//! One pass of a job file's text through iomark's one run pipeline, in
//! process: `job::jobfile` parses it, `job::build_jobs` builds the jobs
//! (of one section when asked), `run::session` expands, checks, plans,
//! describes the host, switches schedulers and runs them exactly as the
//! command line does with that job file, `report` builds the model and
//! `report::json` writes the document (with json+ bins). Suites use only
//! this, so what they run is exactly the job file they print.
//!
//! Under MPI (`prepare_on`/`run_on` with the command's `Ranks`) each pass
//! is one session on every rank, with fresh cluster hooks: rank 0's
//! document is the cluster report (`report::cluster`: `jobs` merged
//! exactly over every rank, `client_stats` per host), and it carries each
//! client's (host's, or rank's on one host) own figures for the spread.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::dataset::Metrics;

use crate::cluster::command::{self, Client, GatherSlot, Ranks};
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
    prepare_on(None, sections, name, only, extra, opts).map(|p| p.ready)
}

/// A pass ready to run, and where rank 0 finds every rank's results.
pub struct Pass {
    pub ready: Ready,
    gathered: Option<GatherSlot>,
}

/// [`prepare`] on `ranks` (None: this host alone): the session is this
/// rank's, its safety verdict agreed by every rank (a refusal anywhere is
/// an error on every rank, with an empty text except on rank 0).
pub fn prepare_on(
    ranks: Option<&Ranks>,
    sections: &[Section],
    name: &str,
    only: Option<&str>,
    extra: &[(&str, String)],
    opts: &RunOptions,
) -> Result<Pass, String> {
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
    let mut opts = SessionOptions {
        run: opts.clone(),
        place: ranks.map(|r| r.place.clone()).unwrap_or_default(),
        ..SessionOptions::default()
    };
    let mut hooks = None;
    let mut gathered = None;
    if let Some(r) = ranks {
        let (h, slot, remote) = r.hooks_with_rates();
        // Rank 0's progress line shows what every rank does.
        opts.run.remote = Some(remote);
        hooks = Some(h);
        gathered = Some(slot);
    }
    let mut session = Session::new(list, opts);
    if let Some(h) = hooks {
        session = session.with_hooks(h);
    }
    let ready = session.prepare().map_err(|e| e.to_string())?;
    Ok(Pass { ready, gathered })
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

/// Runs a prepared pass; fails (one line) only when the run could not
/// start (an I/O scheduler that cannot be switched).
pub fn run(p: Ready) -> Result<PassOutput, String> {
    run_on(
        Pass {
            ready: p,
            gathered: None,
        },
        None,
    )
}

/// [`run`] on `ranks`: rank 0's output is every rank's, merged (see the
/// module documentation); another rank's has its own errors only (its
/// document is null: it reports nothing).
pub fn run_on(p: Pass, ranks: Option<&Ranks>) -> Result<PassOutput, String> {
    let result = p.ready.run().map_err(|e| e.to_string())?;
    let io_ms = result
        .jobs
        .iter()
        .map(|j| j.outcome.stats.elapsed_ms)
        .max()
        .unwrap_or(0);
    let io_s = io_ms as f64 / 1e3;
    let (Some(ranks), Some(slot)) = (ranks, p.gathered) else {
        let mut out = alone(&result);
        out.io_s = io_s;
        return Ok(out);
    };
    let Some(all) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        // Not rank 0: its results went to rank 0, which reports them.
        let mut out = alone(&result);
        out.doc = Value::Null;
        out.io_s = io_s;
        return Ok(out);
    };
    let merged = command::merge(&result, all, &ranks.hosts);
    let mut errors = Vec::new();
    let mut interrupted = result.interrupted;
    for h in &merged.hosts {
        interrupted |= h.result.interrupted;
        for j in &h.result.jobs {
            let o = &j.outcome;
            if let Some(m) = o
                .error_msg
                .clone()
                .or_else(|| (o.error != 0).then(|| format!("error {}", o.error)))
            {
                errors.push(format!(
                    "job '{}' on {} (clone {}): {m}",
                    j.job.name(),
                    h.hostname,
                    j.job.clone
                ));
            }
        }
    }
    // The rest of the run's figures, if any, at their defaults.
    #[allow(clippy::needless_update)]
    let info = report::cluster::ClusterInfo {
        ranks: ranks.size(),
        ..Default::default()
    };
    let doc = report::cluster::document(&report::cluster::build(&merged.hosts, &info), true);
    let clients = merged
        .clients
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
        doc,
        interrupted,
        errors,
        io_s,
        clients,
    })
}

/// The output of a pass run on this host alone.
fn alone(result: &crate::run::RunResult) -> PassOutput {
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
    let rep = report::build(result);
    PassOutput {
        doc: report::json::document(&rep, true),
        interrupted: result.interrupted,
        errors,
        io_s: 0.0,
        clients: Vec::new(),
    }
}
