//! A command that runs many sessions one after another on every rank
//! (`quick`, `suite`, `sweep`): the ranks join once ([`Ranks::join`]),
//! and every session of the command gets fresh hooks ([`Ranks::hooks`])
//! on the one cluster, so the meetings of successive sessions stay in
//! lockstep (every rank runs the same sequence of sessions).
//!
//! Besides the sessions' own meetings, a command agrees on what each rank
//! finds alone: a rank-local error before the run (a missing directory, a
//! test file left behind) stops every rank, and rank 0 says it
//! ([`Ranks::agree`]); a failed pass on one rank stops every rank after
//! that pass ([`Ranks::agree_stop`]). A rank that cannot meet the others
//! (silent, or stopped by a signal while waiting) ends every rank
//! (`hooks::give_up`), after removing its own files.
//!
//! Rank 0 turns every rank's results of a session into the hosts of the
//! cluster report and into the "clients" a table spreads its figures
//! over ([`merge`]): the hosts when there are several, else the ranks.

use std::sync::{Arc, Mutex};

use super::hooks::{give_up, ClusterHooks, Gathered, RankResult};
use super::{Cluster, Placement};
use crate::report::cluster::Host;
use crate::run::session::SessionHooks;
use crate::run::RunResult;

/// This rank's place in a command run on many ranks.
pub struct Ranks {
    cluster: Arc<Mutex<Cluster>>,
    pub place: Placement,
    /// Every rank's host name, in rank order.
    pub hosts: Vec<String>,
}

/// What one session's hooks gathered (rank 0: every rank's results).
pub type GatherSlot = Arc<Mutex<Option<Gathered>>>;

impl Ranks {
    /// Joins the MPI job (see `cluster::join`); `None` for a run on this
    /// host alone.
    pub fn join(flag: bool, timeout_s: Option<u64>) -> Result<Option<Ranks>, String> {
        Ok(super::join(flag, timeout_s)?.map(Ranks::of))
    }

    /// The command's ranks, from a joined cluster.
    pub fn of(c: Cluster) -> Ranks {
        Ranks {
            place: c.place.clone(),
            hosts: c.hosts.clone(),
            cluster: Arc::new(Mutex::new(c)),
        }
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

    /// The distinct host names, in the order of their first rank.
    pub fn distinct_hosts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for h in &self.hosts {
            if !out.contains(h) {
                out.push(h.clone());
            }
        }
        out
    }

    /// Fresh hooks for one session of the command, and where rank 0
    /// finds every rank's results once the session has run.
    pub fn hooks(&self) -> (Box<dyn SessionHooks>, GatherSlot) {
        let (h, slot, _) = self.hooks_with_rates();
        (h, slot)
    }

    /// `hooks`, and the other ranks' live counters that rank 0's progress
    /// line adds to its own (`RunOptions::remote`).
    pub fn hooks_with_rates(
        &self,
    ) -> (
        Box<dyn SessionHooks>,
        GatherSlot,
        Arc<crate::run::progress::RemoteCounters>,
    ) {
        let h = ClusterHooks::new(self.cluster.clone());
        let slot = h.gathered.clone();
        let remote = h.remote.clone();
        (Box::new(h), slot, remote)
    }

    /// Every rank sends `mine`, rank 0 decides one answer, every rank
    /// gets it; ranks that cannot meet end the run (`give_up`).
    fn exchange(
        &self,
        what: &str,
        mine: Vec<u8>,
        decide: impl FnOnce(Vec<Vec<u8>>) -> Vec<u8>,
    ) -> Vec<u8> {
        let mut c = self.cluster.lock().unwrap_or_else(|e| e.into_inner());
        match c.exchange(what, mine, decide) {
            Ok(a) => a,
            Err(e) => give_up(&c, &e),
        }
    }

    /// Agrees on a verdict each rank reached alone (`mine`: its error).
    /// `None` on every rank when no rank failed; otherwise rank 0 gets
    /// every failure in one line (the ranks and hosts named) and the
    /// other ranks an empty text (rank 0 says it, once for all).
    pub fn agree(&self, what: &str, mine: Option<String>) -> Option<String> {
        let hosts = self.hosts.clone();
        let answer = self.exchange(what, mine.unwrap_or_default().into_bytes(), |all| {
            failures(&hosts, &all).into_bytes()
        });
        if answer.is_empty() {
            None
        } else if self.is_root() {
            Some(String::from_utf8_lossy(&answer).into_owned())
        } else {
            Some(String::new())
        }
    }

    /// After a pass: whether any rank failed it (`mine`: this rank's
    /// first error). Every rank gets the same answer: rank 0's own error
    /// (which covers every rank's jobs once merged), else the first other
    /// rank's, named.
    pub fn agree_stop(&self, mine: Option<&str>) -> Option<String> {
        let hosts = self.hosts.clone();
        let answer = self.exchange(
            "every rank to end the pass",
            mine.unwrap_or_default().as_bytes().to_vec(),
            |all| {
                all.iter()
                    .enumerate()
                    .find(|(_, b)| !b.is_empty())
                    .map(|(r, b)| {
                        let text = String::from_utf8_lossy(b);
                        if r == 0 {
                            text.into_owned()
                        } else {
                            let host = hosts.get(r).map(String::as_str).unwrap_or("?");
                            format!("rank {r} on {host}: {text}")
                        }
                    })
                    .unwrap_or_default()
                    .into_bytes()
            },
        );
        (!answer.is_empty()).then(|| String::from_utf8_lossy(&answer).into_owned())
    }

    /// The name of this rank's own copy of a test file: `NAME.RANK.EXT`
    /// (`iomark-quick.tmp` → `iomark-quick.3.tmp`), so that ranks on
    /// shared storage each write their own file. Unchanged for one rank.
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

/// Rank 0's text of every rank's failure, one line (empty: none).
fn failures(hosts: &[String], all: &[Vec<u8>]) -> String {
    let lines: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(r, b)| {
            let host = hosts.get(r).map(String::as_str).unwrap_or("?");
            format!("rank {r} on {host}: {}", String::from_utf8_lossy(b))
        })
        .collect();
    match lines.len() {
        0 => String::new(),
        1 => format!("{}; no rank started", lines[0]),
        n => format!("{n} ranks failed, so no rank started: {}", lines.join("; ")),
    }
}

/// Whom a table spreads its figures over: the hosts when the ranks run
/// on several, else the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Client {
    /// The host name, or `rank N` when every rank runs on one host.
    pub name: String,
    pub hostname: String,
    pub ranks: Vec<u32>,
    /// "host" or "rank": what the clients of this run are.
    pub unit: &'static str,
}

/// A session's results on rank 0, put back together.
pub struct Merged {
    /// One per host, for the cluster report (`report::cluster::build`).
    pub hosts: Vec<Host>,
    /// One result per client (see [`Client`]).
    pub clients: Vec<(Client, RunResult)>,
}

/// Rank 0: every rank's results (`all`, in rank order) of the session
/// whose own result is `result`, by host and by client.
pub fn merge(result: &RunResult, all: Gathered, names: &[String]) -> Merged {
    let distinct = {
        let mut d: Vec<&String> = Vec::new();
        for n in names {
            if !d.contains(&n) {
                d.push(n);
            }
        }
        d.len()
    };
    let by_rank = distinct <= 1 && names.len() > 1;
    let client_names: Vec<String> = if by_rank {
        (0..names.len()).map(|r| format!("rank {r}")).collect()
    } else {
        names.to_vec()
    };
    let copy: Gathered = all.iter().map(copy_of).collect();
    let clients = super::assemble::hosts(result, copy, &client_names)
        .into_iter()
        .map(|h| {
            let hostname = h
                .ranks
                .first()
                .and_then(|r| names.get(*r as usize))
                .cloned()
                .unwrap_or_default();
            let c = Client {
                name: h.hostname,
                hostname,
                ranks: h.ranks,
                unit: if by_rank { "rank" } else { "host" },
            };
            (c, h.result)
        })
        .collect();
    Merged {
        hosts: super::assemble::hosts(result, all, names),
        clients,
    }
}

/// An exact copy, through the encoding it travelled in (whatever fields
/// a rank's result gains).
fn copy_of(r: &RankResult) -> RankResult {
    crate::stats::wire::decode(&crate::stats::wire::encode(r)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rank_names_its_own_file() {
        assert_eq!(own_file("iomark-quick.tmp", 3, 8), "iomark-quick.3.tmp");
        assert_eq!(own_file("iomark-quick.tmp", 0, 1), "iomark-quick.tmp");
        assert_eq!(own_file("data", 1, 2), "data.1");
        assert_eq!(own_file(".hidden", 1, 2), ".hidden.1");
    }

    /// Runs `f` on `n` ranks (threads of this process).
    fn on_ranks<T: Send + 'static>(n: u32, f: fn(Ranks) -> T) -> Vec<T> {
        let handles: Vec<_> = super::super::local::Local::ranks(n)
            .into_iter()
            .map(|t| {
                std::thread::spawn(move || {
                    let c = Cluster::new(Arc::new(t), super::super::DEFAULT_TIMEOUT);
                    f(Ranks::of(c.expect("joins")))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn one_ranks_failure_stops_every_rank_and_rank_0_names_it() {
        let out = on_ranks(3, |r| {
            let mine = (r.rank() == 1).then(|| "no such directory".to_string());
            let agreed = r.agree("the check", mine);
            let fine = r.agree("the next check", None);
            let stop = r.agree_stop((r.rank() == 2).then_some("job 'x': EIO"));
            let go_on = r.agree_stop(None);
            (r.rank(), agreed, fine, stop, go_on)
        });
        for (rank, agreed, fine, stop, go_on) in out {
            let host = super::super::hostname();
            match rank {
                0 => assert_eq!(
                    agreed.as_deref(),
                    Some(format!("rank 1 on {host}: no such directory; no rank started").as_str())
                ),
                _ => assert_eq!(agreed.as_deref(), Some("")),
            }
            assert_eq!(fine, None);
            assert_eq!(stop, Some(format!("rank 2 on {host}: job 'x': EIO")));
            assert_eq!(go_on, None);
        }
    }

    /// One rank's result of a null job of 16 reads (a clone each).
    fn null_run() -> RunResult {
        let text = "[m]\nioengine=null\nrw=read\nbs=4k\nsize=64k\n";
        crate::run::session::testing::run_text(text, None)
    }

    fn ios(r: &RunResult) -> u64 {
        r.jobs.iter().map(|j| j.outcome.stats.dir[0].ios).sum()
    }

    #[test]
    fn clients_are_the_hosts_when_there_are_several_else_the_ranks() {
        let mine = null_run();
        let all = || -> Gathered {
            (0..3)
                .map(|_| RankResult::of(&null_run(), Vec::new()))
                .collect()
        };
        let names = |n: [&str; 3]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let m = merge(&mine, all(), &names(["a", "a", "b"]));
        let got: Vec<(&str, &str, Vec<u32>, &str)> = m
            .clients
            .iter()
            .map(|(c, _)| {
                (
                    c.name.as_str(),
                    c.hostname.as_str(),
                    c.ranks.clone(),
                    c.unit,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![("a", "a", vec![0, 1], "host"), ("b", "b", vec![2], "host")]
        );
        assert_eq!(m.hosts.len(), 2);
        assert_eq!(ios(&m.clients[0].1), 32);
        assert_eq!(ios(&m.clients[1].1), 16);
        let m = merge(&mine, all(), &names(["a", "a", "a"]));
        let got: Vec<(&str, &str, &str)> = m
            .clients
            .iter()
            .map(|(c, _)| (c.name.as_str(), c.hostname.as_str(), c.unit))
            .collect();
        assert_eq!(
            got,
            vec![
                ("rank 0", "a", "rank"),
                ("rank 1", "a", "rank"),
                ("rank 2", "a", "rank")
            ]
        );
        assert_eq!(m.hosts.len(), 1);
        assert_eq!(ios(&m.hosts[0].result), 48);
        assert!(m.clients.iter().all(|(_, r)| ios(r) == 16));
    }

    #[test]
    fn failures_name_every_failing_rank() {
        let hosts = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        assert_eq!(failures(&hosts, &[vec![], vec![], vec![]]), "");
        assert_eq!(
            failures(&hosts, &[vec![], b"no dir".to_vec(), vec![]]),
            "rank 1 on b: no dir; no rank started"
        );
        let two = failures(&hosts, &[b"x".to_vec(), vec![], b"y".to_vec()]);
        assert!(two.starts_with("2 ranks failed"), "{two}");
        assert!(two.contains("rank 0 on a: x") && two.contains("rank 2 on c: y"));
    }
}
