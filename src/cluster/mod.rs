//! One job list run on many hosts at once (MPI ranks): every rank runs
//! the whole job list on its host through the one run pipeline
//! (`run::session`), and the ranks meet at a few points, along a tree
//! (`tree`: a host's ranks below its first rank, hosts below rank 0):
//!
//! 1. **joining**: every rank's host name goes up the tree, rank 0 sends
//!    every rank the host table and the run's token; host leaders measure
//!    their clock's offset to rank 0's;
//! 2. **safety, per session**: each rank's verdict and the structure of
//!    its job list go up; one refusal anywhere, or two ranks with
//!    different job lists, stops every rank before any writes, and rank 0
//!    says why in one line naming the ranks;
//! 3. **each batch** (the clones a stonewall phase starts): shared files
//!    are laid out by rank 0 first, a rank's own files at once; then a
//!    barrier released without sleeping (`hooks`);
//! 4. **the end of a session**: results merged up the tree (`merge`), so
//!    rank 0 holds one part per host; rank 0 rebuilds the report's hosts.
//!
//! No call waits without a deadline: messages are sent and received
//! without blocking (`transport`), each rank watches its tree neighbours
//! and a silent one stops every rank, a stop signal on one rank stops
//! every rank, and rank 0 reports whatever reached it (`node`).
//!
//! The launch (`launch`) drives this through [`Ranks`]; nothing outside
//! this module sees the hooks or the messages.

pub mod merge;
pub mod msg;
pub mod sim;
pub mod transport;
pub mod tree;

mod hooks;
#[cfg(feature = "mpi")]
mod mpi;
mod node;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use merge::{Client, Merged};
pub use node::report_written;
pub use transport::{Local, Transport};
pub use tree::{Hosts, RankSet};

use crate::job::JobList;
use crate::run::error::RunError;
use crate::run::place::Placement;
use crate::run::session::{Ready, Session, SessionOptions};
use crate::run::RunResult;
use hooks::{Hooks, Link};
use msg::{Down, Up, Verdicts};
use node::Node;

/// How long a rank that received a stop signal waits, its report done,
/// for the launcher to end it (see [`Ranks::end`]).
const LAUNCHER_GRACE: Duration = Duration::from_millis(1500);

/// How long a rank may stay silent before the others give up on it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// This host's name (uname's nodename).
pub use crate::host::hostname;

/// Whether the environment says this process was started by an MPI
/// launcher (Open MPI, MPICH/Hydra, PMIx launchers such as srun).
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// How to get an iomark that runs under MPI.
pub const BUILD_HINT: &str = "this iomark was built without MPI support; build it with \
`cargo build --release --features mpi` (Debian: apt-get install libopenmpi-dev openmpi-bin libclang-dev)";

/// `SIGTERM`, `SIGINT`, ... (for messages).
pub fn signal_name(sig: i32) -> String {
    match sig {
        crate::sys::SIGINT => "SIGINT".into(),
        crate::sys::SIGTERM => "SIGTERM".into(),
        crate::sys::SIGHUP => "SIGHUP".into(),
        crate::sys::SIGPIPE => "SIGPIPE".into(),
        n => format!("signal {n}"),
    }
}

/// How the ranks of a run meet.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--mpi`: join even when no launcher is detected.
    pub mpi: bool,
    /// `--mpi-timeout`.
    pub timeout: Option<Duration>,
    /// `--mpi-per-rank`: keep every rank's clones apart in the report.
    pub per_rank: bool,
    /// `--mpi-stonewall`: the first rank to finish a phase ends it on all.
    pub stonewall: bool,
    /// `--mpi-host-detail`: past this many hosts every host is kept in
    /// brief (`None`: [`HOST_DETAIL`]).
    pub host_detail: Option<u32>,
}

/// Hosts kept whole by default: past this many, rank 0 keeps each host
/// in brief (a few hundred bytes instead of some 100 KB).
pub const HOST_DETAIL: u32 = 100;

/// Why a rank could not join the others.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// No MPI in this build, or MPI cannot start.
    #[error("{0}")]
    Mpi(String),
    /// The ranks stopped before they had all joined (a signal, a lost
    /// rank).
    #[error("the ranks stopped before they had all joined")]
    Stopped,
}

/// Joins the MPI job this process is a rank of, when `--mpi` was given or
/// a launcher started it; `None` for a run on this host alone.
pub fn join(opts: &Options) -> Result<Option<Ranks>, JoinError> {
    if !opts.mpi && !launched_by_mpi() {
        return Ok(None);
    }
    join_mpi(opts).map(Some)
}

#[cfg(feature = "mpi")]
fn join_mpi(opts: &Options) -> Result<Ranks, JoinError> {
    let t = mpi::Mpi::init().map_err(JoinError::Mpi)?;
    Ranks::join_over(Arc::new(t), opts, hostname())
}

#[cfg(not(feature = "mpi"))]
fn join_mpi(_opts: &Options) -> Result<Ranks, JoinError> {
    let under = if launched_by_mpi() {
        "started by an MPI launcher, but "
    } else {
        "--mpi: "
    };
    Err(JoinError::Mpi(format!("{under}{BUILD_HINT}")))
}

/// The agreed outcome of a check each rank made alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// No rank failed it.
    Go,
    /// Failed, on rank 0: every failing rank named, one line.
    Refused(String),
    /// Failed on some rank, which rank 0 names: say nothing here.
    RefusedElsewhere,
}

/// This rank among the ranks of a run: what the launch uses.
pub struct Ranks {
    node: Arc<Mutex<Node>>,
    /// This rank's placement (its log tag and the run's token included).
    pub place: Placement,
    /// Every rank's host.
    pub hosts: Arc<Hosts>,
    opts: Options,
}

fn hosts_of(node: &Node) -> Arc<Hosts> {
    node.shared().hosts()
}

impl Ranks {
    /// Joins the ranks behind `t` (see the module documentation).
    pub fn join_over(
        t: Arc<dyn Transport>,
        opts: &Options,
        hostname: String,
    ) -> Result<Ranks, JoinError> {
        let rank = t.rank();
        let mut node = Node::new(t, opts.timeout.unwrap_or(DEFAULT_TIMEOUT), hostname.clone());
        let hello = Up::Hello(
            vec![(hostname.clone(), RankSet::one(rank))],
            vec![(rank, std::process::id())],
        );
        let welcome = node
            .meet("every rank to start", hello, false, |acc| match acc {
                Up::Hello(pairs, mut pids) => {
                    pids.sort_unstable();
                    Down::Welcome {
                        hosts: Hosts::of(pairs),
                        pids: pids.into_iter().map(|(_, p)| p).collect(),
                        token: crate::run::place::new_token(),
                    }
                }
                _ => Down::Empty,
            })
            .map_err(|_| JoinError::Stopped)?;
        let Down::Welcome {
            mut hosts,
            pids,
            token,
        } = welcome
        else {
            return Err(JoinError::Stopped);
        };
        hosts.index();
        let hosts = Arc::new(hosts);
        node.use_hosts(hosts.clone(), pids);
        node.clocks(&hosts).map_err(|_| JoinError::Stopped)?;
        let alone = hosts.ranks[hosts.host_of(rank)].len() == 1;
        let place = Placement {
            rank,
            ranks: hosts.size(),
            tag: if alone {
                hostname.clone()
            } else {
                format!("{hostname}.{rank}")
            },
            hostname,
            run_token: Some(token.into()),
        };
        Ok(Ranks {
            node: Arc::new(Mutex::new(node)),
            place,
            hosts,
            opts: opts.clone(),
        })
    }

    fn node(&self) -> std::sync::MutexGuard<'_, Node> {
        self.node.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn rank(&self) -> u32 {
        self.place.rank
    }

    pub fn size(&self) -> u32 {
        self.place.ranks
    }

    /// Rank 0 prints and reports; the others run quietly.
    pub fn is_root(&self) -> bool {
        self.place.rank == 0
    }

    /// Each rank's clones kept apart in the reports: asked for, or the
    /// ranks all run on one host (they are then the report's clients).
    pub fn detail(&self) -> bool {
        self.opts.per_rank || self.hosts.names.len() == 1
    }

    /// The hosts kept in brief: more of them than `--mpi-host-detail`.
    pub fn condensed(&self) -> bool {
        self.hosts.names.len() > self.host_detail() as usize
    }

    fn host_detail(&self) -> u32 {
        self.opts.host_detail.unwrap_or(HOST_DETAIL)
    }

    /// Agrees on a check each rank made alone (`mine`: its error).
    pub fn agree(&self, what: &str, mine: Option<String>) -> Agreement {
        let rank = self.rank();
        let hosts = self.hosts.clone();
        let up = Up::Verdicts(Verdicts::of(rank, mine, None));
        let answer = self.node().meet(what, up, false, |acc| {
            Down::Verdict(match acc {
                Up::Verdicts(v) => refusal_text(&v, &hosts, "no rank started"),
                _ => None,
            })
        });
        match answer {
            Ok(Down::Verdict(None)) => Agreement::Go,
            Ok(Down::Verdict(Some(text))) if rank == 0 => Agreement::Refused(text),
            Err(_) if rank == 0 => Agreement::Refused(stop_text(&self.node())),
            _ => Agreement::RefusedElsewhere,
        }
    }

    /// After a pass: whether any rank failed it (`mine`: this rank's
    /// first error). Every rank gets the same answer: rank 0's own error
    /// (which covers every rank's jobs once merged), else the first other
    /// rank's, named.
    pub fn agree_stop(&self, mine: Option<&str>) -> Option<String> {
        let hosts = self.hosts.clone();
        let up = Up::Verdicts(Verdicts::of(self.rank(), mine.map(str::to_string), None));
        let answer = self
            .node()
            .meet("every rank to end the pass", up, false, |acc| {
                Down::Verdict(match acc {
                    Up::Verdicts(v) => v.refusals.first().map(|(r, text)| {
                        if *r == 0 {
                            text.clone()
                        } else {
                            format!("rank {r} on {}: {text}", hosts.name_of(*r))
                        }
                    }),
                    _ => None,
                })
            });
        match answer {
            Ok(Down::Verdict(v)) => v,
            _ => Some(stop_text(&self.node())),
        }
    }

    /// The session of `list` on this rank, with the hooks that meet the
    /// other ranks, prepared (its safety verdict agreed by every rank).
    pub fn prepare(&self, list: JobList, mut opts: SessionOptions) -> Result<Spread, RunError> {
        let link = Arc::new(Link::default());
        let remote = Arc::new(crate::run::progress::RemoteCounters::default());
        opts.place = self.place.clone();
        opts.run.remote = Some(remote.clone());
        let hooks = Hooks::new(
            self.node.clone(),
            link.clone(),
            remote,
            (self.rank(), self.hosts.host_of(self.rank()) as u32),
            self.opts.stonewall,
            self.detail(),
            self.condensed(),
        );
        let ready = Session::new(list, opts)
            .with_hooks(Box::new(hooks))
            .prepare()?;
        Ok(Spread {
            ready,
            link,
            node: self.node.clone(),
            hosts: self.hosts.clone(),
            host_detail: self.host_detail(),
        })
    }

    /// Why the ranks stopped early, if they did, and whether a rank was
    /// lost (the ranks must then be ended: see [`Ranks::end`]).
    pub fn stopped(&self) -> Option<(String, bool)> {
        self.node()
            .stop()
            .map(|s| (s.cause.to_string(), !s.lost.is_empty()))
    }

    /// The end of the run with exit code `code` (rank 0's decides): the
    /// code every rank exits with. With a rank lost, rank 0 ends every
    /// rank here (a lost rank cannot leave MPI by itself); the others wait
    /// for that.
    pub fn end(self, code: i32) -> i32 {
        report_written();
        let mut node = self.node();
        if self.is_root() && node.stop().is_some_and(|s| !s.lost.is_empty()) {
            let _ = crate::run::output::finish_stdout();
            crate::run::signals::clean_up_now();
            node.end_all(if code == 0 { 1 } else { code });
        }
        let code = node.bye(code);
        if crate::run::signals::received() && launched_by_mpi() {
            // A launcher that passed a stop signal on ends the ranks
            // itself a second later; ranks leaving on their own meanwhile
            // race with it (Open MPI 4.1's mpirun can crash or hang then).
            std::thread::sleep(LAUNCHER_GRACE);
        }
        code
    }

    /// The name of this rank's own copy of a test file: `NAME.RANK.EXT`
    /// (`iomark-quick.tmp` → `iomark-quick.3.tmp`), so that ranks on
    /// shared storage each write their own file.
    pub fn own_file(&self, name: &str) -> String {
        own_file(name, self.rank(), self.size())
    }
}

/// `NAME.RANK.EXT` for rank `rank` of `ranks` (`name` alone for one rank).
pub fn own_file(name: &str, rank: u32, ranks: u32) -> String {
    if ranks <= 1 {
        return name.to_string();
    }
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{rank}.{ext}"),
        _ => format!("{name}.{rank}"),
    }
}

/// A session prepared on one rank, ready to run with the others.
pub struct Spread {
    pub ready: Ready,
    link: Arc<Link>,
    node: Arc<Mutex<Node>>,
    hosts: Arc<Hosts>,
    host_detail: u32,
}

impl Spread {
    /// Runs the session; rank 0 gets every rank's results merged too.
    pub fn run(self) -> Result<(RunResult, Option<Merged>), RunError> {
        let result = self.ready.run()?;
        let gathered = self
            .link
            .gathered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(g) = gathered else {
            return Ok((result, None));
        };
        let t0 = std::time::Instant::now();
        let (stop, decoded_ns) = {
            let node = self.node.lock().unwrap_or_else(|e| e.into_inner());
            (node.stop(), node.merge_ns())
        };
        let lost: Vec<(RankSet, String)> = stop
            .iter()
            .flat_map(|s| &s.lost)
            .map(|l| (RankSet::one(l.rank), l.reason()))
            .collect();
        let stopped = stop.as_ref().map(|s| s.cause.to_string());
        let mut merged = merge::merged(&result, g, &self.hosts, &lost, stopped, self.host_detail);
        merged.stop_code = stop.and_then(|s| match s.cause {
            msg::Cause::Signal { signal, .. } => Some(128 + signal),
            msg::Cause::Lost(_) => Some(1),
            // As on one host: the jobs' own errors say whether it failed.
            msg::Cause::Ended { .. } => None,
        });
        merged.info.merge_ns = decoded_ns + t0.elapsed().as_nanos() as u64;
        merged.info.peak_rss_bytes = crate::host::peak_rss_bytes();
        Ok((result, Some(merged)))
    }
}

/// Rank 0's one line for the refusals of `v` (each refusing rank named,
/// then how many more), or for ranks whose job lists differ; `None` when
/// every rank may go on.
fn refusal_text(v: &Verdicts, hosts: &Hosts, tail: &str) -> Option<String> {
    if v.refused > 0 {
        let named: Vec<String> = v
            .refusals
            .iter()
            .map(|(r, text)| format!("rank {r} on {}: {text}", hosts.name_of(*r)))
            .collect();
        let more = v.refused as usize - named.len();
        let more = if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        };
        return Some(if v.refused == 1 {
            format!("{}; {tail}", named[0])
        } else {
            format!(
                "{} ranks refused, so {tail}: {}{more}",
                v.refused,
                named.join("; ")
            )
        });
    }
    if v.digests.len() > 1 {
        return Some(mismatch_text(v, hosts, tail));
    }
    None
}

/// `ranks 1, 3 (host b) run another job list than rank 0 (host a): ...`.
fn mismatch_text(v: &Verdicts, hosts: &Hosts, tail: &str) -> String {
    let who = |set: &RankSet| {
        let mut names: Vec<&str> = Vec::new();
        for r in set.iter() {
            let n = hosts.name_of(r);
            if !names.contains(&n) {
                names.push(n);
            }
            if names.len() > 4 {
                break;
            }
        }
        format!(
            "rank{} {} (host{} {})",
            if set.len() == 1 { "" } else { "s" },
            set.text(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    };
    let base = &v.digests[0];
    let ours: Vec<&str> = base.text.lines().collect();
    let parts: Vec<String> = v.digests[1..]
        .iter()
        .map(|d| {
            let theirs: Vec<&str> = d.text.lines().collect();
            let i = (0..ours.len().max(theirs.len()))
                .find(|&i| ours.get(i) != theirs.get(i))
                .unwrap_or(0);
            let line = |l: Option<&&str>| l.map_or("no such job".to_string(), |s| s.to_string());
            let has = |set: &RankSet| if set.len() == 1 { "has" } else { "have" };
            format!(
                "{} {} {}, {} {} {}",
                who(&d.ranks),
                has(&d.ranks),
                line(theirs.get(i)),
                who(&base.ranks),
                has(&base.ranks),
                line(ours.get(i))
            )
        })
        .collect();
    format!(
        "the ranks do not all run the same job list: {}; {tail}",
        parts.join("; ")
    )
}

/// Rank 0's line when the ranks stopped before agreeing.
fn stop_text(node: &Node) -> String {
    match node.stop() {
        Some(s) => format!("{}; stopping every rank", s.cause),
        None => "the ranks stopped".into(),
    }
}

#[cfg(test)]
mod tests;
