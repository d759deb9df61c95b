//! The one way a job list is run, above the session: the command line,
//! `quick`, `suite` and `sweep` all come here, on one host or as one rank
//! of many (MPI). A [`Launch`] joins the ranks (or not), prepares a
//! session ([`Launch::prepare`]: plan, safety agreed by every rank),
//! runs it ([`Prepared::run`]: on many ranks, every rank's results merged
//! on rank 0), reports it ([`Launched::report`], [`Launched::document`]:
//! the same document, `iomark.cluster` and its phases included, whoever
//! asks) and ends with one exit code ([`Launch::end`]).
//!
//! Callers never see how ranks meet (`cluster`): they get a placement (a
//! value passed down to the session), agreements (typed: go, refused
//! with the line to say, refused elsewhere) and results.

use serde_json::Value;

use crate::cluster::{self, Agreement, Client, Merged, Ranks};
use crate::job::JobList;
use crate::report::{self, Outputs};
use crate::run::error::RunError;
use crate::run::place::Placement;
use crate::run::plan::Plan;
use crate::run::session::{Ready, SessionOptions};
use crate::run::{output, signals, RunResult};

pub use cluster::Options;

/// Where a job list runs: this host alone, or this rank of many.
pub struct Launch {
    ranks: Option<Ranks>,
}

/// A check that failed on some rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Say this line (this host's error, or on rank 0 every failing
    /// rank's).
    Say(String),
    /// Another rank's error, which rank 0 says: say nothing.
    Quiet,
}

impl From<String> for Refused {
    fn from(line: String) -> Refused {
        Refused::Say(line)
    }
}

impl From<RunError> for Refused {
    fn from(e: RunError) -> Refused {
        match e {
            RunError::RefusedElsewhere => Refused::Quiet,
            e => Refused::Say(e.to_string()),
        }
    }
}

impl Launch {
    /// A run on this host alone.
    pub fn alone() -> Launch {
        Launch { ranks: None }
    }

    /// Joins the ranks of an MPI job when asked (`--mpi`) or started by
    /// an MPI launcher; this host alone otherwise. The error is one line.
    pub fn join(opts: &Options) -> Result<Launch, String> {
        match cluster::join(opts) {
            Ok(ranks) => Ok(Launch { ranks }),
            Err(e) => Err(e.to_string()),
        }
    }

    /// This process among the ranks (one of one alone).
    pub fn place(&self) -> Placement {
        self.ranks
            .as_ref()
            .map(|r| r.place.clone())
            .unwrap_or_default()
    }

    /// The ranks, when there are several.
    pub fn ranks(&self) -> Option<&Ranks> {
        self.ranks.as_ref()
    }

    /// Rank 0 (or the one process) prints and reports.
    pub fn is_root(&self) -> bool {
        self.ranks.as_ref().is_none_or(Ranks::is_root)
    }

    /// Says `line` on standard error, once for every rank (rank 0 says
    /// it; the others say nothing).
    pub fn say(&self, line: &str) {
        if self.is_root() {
            output::stderr_line(line);
        }
    }

    /// A result each rank reached alone, agreed by every rank: an error
    /// on any rank is an error on every rank, said once by rank 0 (naming
    /// each failing rank and its host).
    pub fn agree<T>(&self, what: &str, r: Result<T, String>) -> Result<T, Refused> {
        let Some(ranks) = &self.ranks else {
            return r.map_err(Refused::Say);
        };
        match ranks.agree(what, r.as_ref().err().cloned()) {
            Agreement::Go => r.map_err(Refused::Say),
            Agreement::Refused(text) => Err(Refused::Say(text)),
            Agreement::RefusedElsewhere => Err(Refused::Quiet),
        }
    }

    /// After a pass of a command that runs many: whether any rank failed
    /// it (`mine`: this rank's first error), the same answer everywhere.
    pub fn agree_stop(&self, mine: Option<&str>) -> Option<String> {
        match &self.ranks {
            Some(r) => r.agree_stop(mine),
            None => mine.map(str::to_string),
        }
    }

    /// Prepares a session of `list`: planned, safety agreed by every
    /// rank. Nothing has been written when it fails;
    /// `RunError::RefusedElsewhere` means another rank says why.
    pub fn prepare(&self, list: JobList, opts: SessionOptions) -> Result<Prepared, RunError> {
        let inner = match &self.ranks {
            Some(r) => Inner::Spread(r.prepare(list, opts)?),
            None => Inner::Alone(crate::run::session::Session::new(list, opts).prepare()?),
        };
        Ok(Prepared {
            inner,
            ranks: self.ranks.as_ref().map_or(1, Ranks::size),
        })
    }

    /// Whether the run is stopping: a stop signal here, or (many ranks)
    /// anywhere, or a lost rank.
    pub fn stopping(&self) -> bool {
        signals::received() || self.ranks.as_ref().is_some_and(|r| r.stopped().is_some())
    }

    /// The name of this rank's own copy of a test file (`NAME.RANK.EXT`
    /// under MPI, `name` alone).
    pub fn own_file(&self, name: &str) -> String {
        match &self.ranks {
            Some(r) => r.own_file(name),
            None => name.to_string(),
        }
    }

    /// The end: every rank exits with rank 0's `code` (other ranks pass
    /// their own; rank 0's wins). Ranks that lost one of theirs are all
    /// ended here.
    pub fn end(self, code: i32) -> i32 {
        match self.ranks {
            Some(r) => {
                if r.is_root() {
                    let _ = output::finish_stdout();
                }
                r.end(code)
            }
            None => code,
        }
    }
}

/// Says `line` (an error found before the ranks joined, such as a bad
/// command line) and returns the exit code 1: once for every rank when
/// an MPI launcher started this process (the ranks join to say it once),
/// as is otherwise.
pub fn fail_once(line: &str) -> i32 {
    if !cluster::launched_by_mpi() {
        output::stderr_line(line);
        return 1;
    }
    match Launch::join(&Options::default()) {
        Ok(l) => {
            l.say(line);
            l.end(1)
        }
        Err(_) => {
            output::stderr_line(line);
            1
        }
    }
}

enum Inner {
    Alone(Ready),
    Spread(cluster::Spread),
}

/// A session ready to run (see [`Launch::prepare`]).
pub struct Prepared {
    inner: Inner,
    ranks: u32,
}

impl Prepared {
    pub fn ready(&self) -> &Ready {
        match &self.inner {
            Inner::Alone(r) => r,
            Inner::Spread(s) => &s.ready,
        }
    }

    pub fn ready_mut(&mut self) -> &mut Ready {
        match &mut self.inner {
            Inner::Alone(r) => r,
            Inner::Spread(s) => &mut s.ready,
        }
    }

    pub fn plan(&self) -> &Plan {
        self.ready().plan()
    }

    /// Runs it (see the module documentation). Fails (one line) only when
    /// the run could not start (an I/O scheduler that cannot be switched).
    pub fn run(self) -> Result<Launched, RunError> {
        let (result, merged) = match self.inner {
            Inner::Alone(r) => (r.run()?, None),
            Inner::Spread(s) => s.run()?,
        };
        Ok(Launched {
            result,
            merged,
            ranks: self.ranks,
            label: None,
        })
    }
}

/// A session that has run: this rank's result and, on rank 0 of many,
/// every rank's merged.
pub struct Launched {
    pub result: RunResult,
    pub merged: Option<Merged>,
    ranks: u32,
    /// `--label`: the run's name in the JSON (`iomark.label`).
    label: Option<String>,
}

impl Launched {
    /// Whether this rank reports (rank 0 of many, or alone).
    pub fn reports(&self) -> bool {
        self.ranks <= 1 || self.merged.is_some()
    }

    /// Names the run (`--label`): its JSON carries the name as `label`
    /// in its `iomark` object.
    pub fn with_label(mut self, label: Option<String>) -> Launched {
        self.label = label;
        self
    }

    /// Every requested format: the run's, or (many ranks) the cluster's.
    pub fn report(&self, out: &Outputs) -> String {
        match &self.merged {
            Some(m) => report::cluster::render(&self.cluster_report(m), out),
            None => report::render(&self.run_report(), out),
        }
    }

    /// The JSON document (json+ with `plus`), as `report` writes it.
    pub fn document(&self, plus: bool) -> Value {
        match &self.merged {
            Some(m) => report::cluster::document(&self.cluster_report(m), plus),
            None => report::json::document(&self.run_report(), plus),
        }
    }

    fn run_report(&self) -> report::Report {
        let mut rep = report::build(&self.result);
        rep.label = self.label.clone();
        rep
    }

    fn cluster_report(&self, m: &Merged) -> report::cluster::ClusterReport {
        let mut rep =
            report::cluster::build_with(&m.hosts, m.rest.as_ref(), m.briefs.clone(), &m.info);
        rep.jobs.label = self.label.clone();
        rep.all_clients.label = self.label.clone();
        rep
    }

    /// One line per job that failed: `job 'x': message`, with its host
    /// and clone under MPI.
    pub fn job_errors(&self) -> Vec<String> {
        match &self.merged {
            Some(m) if m.info.condensed => brief_errors(m),
            Some(m) => m
                .hosts
                .iter()
                .flat_map(|h| {
                    h.result
                        .jobs
                        .iter()
                        .filter_map(|j| error_line(j, Some(&h.hostname)))
                })
                .collect(),
            None => self
                .result
                .jobs
                .iter()
                .filter_map(|j| error_line(j, None))
                .collect(),
        }
    }

    /// Stopped early: by a signal (here or on another rank), by a lost
    /// rank; or some ranks' results are missing.
    pub fn interrupted(&self) -> bool {
        self.result.interrupted
            || self.merged.as_ref().is_some_and(|m| {
                m.stop_code.is_some()
                    || !m.info.missing.is_empty()
                    || m.hosts.iter().any(|h| h.result.interrupted)
                    || m.briefs.iter().any(|b| b.interrupted)
            })
    }

    /// A job failed (on any rank), or ranks' results are missing.
    pub fn failed(&self) -> bool {
        match &self.merged {
            Some(m) => {
                !m.info.missing.is_empty()
                    || m.hosts.iter().chain(&m.rest).any(|h| h.result.failed())
            }
            None => self.result.failed(),
        }
    }

    /// Why the run stopped early on the ranks, and who is missing, as
    /// lines to say (rank 0).
    pub fn stop_lines(&self) -> Vec<String> {
        let Some(m) = &self.merged else {
            return Vec::new();
        };
        let mut out: Vec<String> = m
            .info
            .stopped
            .iter()
            .map(|why| format!("{why}; stopping every rank"))
            .collect();
        for x in &m.info.missing {
            let ranks: Vec<String> = x.ranks.iter().map(u32::to_string).collect();
            out.push(format!(
                "no results from rank{} {} (host{} {}): {}",
                if x.ranks.len() == 1 { "" } else { "s" },
                ranks.join(", "),
                if x.hostnames.len() == 1 { "" } else { "s" },
                x.hostnames.join(", "),
                x.reason
            ));
        }
        out
    }

    /// Each client's result (hosts, or ranks on one host) under MPI.
    pub fn clients(&self) -> Vec<(Client, RunResult)> {
        self.merged
            .as_ref()
            .map(Merged::clients)
            .unwrap_or_default()
    }

    /// The exit code: 128 + the signal after a stop signal, 1 for a
    /// failed job, a lost rank or missing results, else 0.
    pub fn exit_code(&self) -> i32 {
        if let Some(code) = signals::exit_code() {
            return code;
        }
        if let Some(code) = self.merged.as_ref().and_then(|m| m.stop_code) {
            return code;
        }
        if self.result.interrupted && self.ranks <= 1 {
            return 128 + crate::sys::SIGINT;
        }
        i32::from(self.failed() || self.interrupted())
    }
}

/// The line naming a job's error (none when it ran clean): under MPI with
/// its host, and the rank and global clone that failed (the clones of a
/// host's ranks are merged; the failing one is named, not the lowest).
/// Rank 0's report is written: a stop that comes now (a rank lost) does
/// not say it could not be.
pub fn report_written() {
    cluster::report_written();
}

/// The error lines of hosts kept in brief: each host's failing job
/// sections, with the rank and clone that failed.
fn brief_errors(m: &Merged) -> Vec<String> {
    let plan = m.rest.as_ref().map(|r| &r.result.jobs);
    let mut out = Vec::new();
    for b in &m.briefs {
        for j in b
            .jobs
            .iter()
            .filter(|j| j.error != 0 || j.error_msg.is_some())
        {
            let planned = plan.and_then(|p| p.iter().find(|x| x.job.job_index == j.job as usize));
            let (name, n) = planned.map_or((String::new(), 1), |p| {
                (p.job.name().to_string(), p.job.spec.ctl.numjobs.max(1))
            });
            let msg = j
                .error_msg
                .clone()
                .unwrap_or_else(|| format!("error {}", j.error));
            out.push(format!(
                "job '{name}' on {} (rank {}, clone {}): {msg}",
                b.hostname,
                j.error_clone / n,
                j.error_clone
            ));
        }
    }
    out
}

fn error_line(j: &crate::run::JobRun, host: Option<&str>) -> Option<String> {
    let o = &j.outcome;
    let m = o
        .error_msg
        .clone()
        .or_else(|| (o.error != 0).then(|| format!("error {}", o.error)))?;
    Some(match host {
        Some(h) => {
            let c = j.error_clone.unwrap_or(j.job.clone);
            let rank = c / j.job.spec.ctl.numjobs.max(1);
            format!(
                "job '{}' on {h} (rank {rank}, clone {c}): {m}",
                j.job.name()
            )
        }
        None => format!("job '{}': {m}", j.job.name()),
    })
}

// These run a job: on Windows (Wine) the file ids of one test's files
// can come back for another's, so they run on Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_the_rank_and_clone_that_failed() {
        let text = "[j]\nioengine=null\nsize=64k\nbs=4k\nnumjobs=2\n";
        let mut r = crate::run::session::testing::run_text(text, Some(1000));
        let mut j = r.jobs.remove(0);
        assert_eq!(error_line(&j, Some("h1")), None, "a clean job has no line");
        j.outcome.error = 30; // EROFS
        j.outcome.error_msg = Some("read-only file system".into());
        // Clones 2..=5 of ranks 1 and 2 merged; clone 5 (rank 2) failed.
        j.job.clone = 2;
        j.error_clone = Some(5);
        assert_eq!(
            error_line(&j, Some("h1")).unwrap(),
            "job 'j' on h1 (rank 2, clone 5): read-only file system"
        );
        j.error_clone = None;
        assert!(error_line(&j, Some("h1"))
            .unwrap()
            .contains("(rank 1, clone 2)"));
        assert_eq!(
            error_line(&j, None).unwrap(),
            "job 'j': read-only file system"
        );
    }
}
