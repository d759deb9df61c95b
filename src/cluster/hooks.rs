//! The session hooks of one rank (`run::session::SessionHooks`): where a
//! rank's run meets the other ranks' (safety, each batch's start, the
//! end). See the module documentation of `cluster`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Cluster, ClusterError};
use crate::run::gate::StartGate;
use crate::run::plan::Plan;
use crate::run::session::SessionHooks;
use crate::run::worker::Outcome;
use crate::run::RunResult;
use crate::stats::disk::DiskReport;

/// What one rank sends rank 0 at the end: each clone's outcome, in plan
/// order, and what the run saw around them.
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct RankResult {
    pub outcomes: Vec<Outcome>,
    pub interrupted: bool,
    pub start_unix: u64,
    pub disks: Vec<DiskReport>,
}

impl RankResult {
    pub fn of(r: &mut RunResult) -> RankResult {
        RankResult {
            outcomes: r
                .jobs
                .iter_mut()
                .map(|j| std::mem::take(&mut j.outcome))
                .collect(),
            interrupted: r.interrupted,
            start_unix: r.start_unix,
            disks: r.disks.clone(),
        }
    }

    /// Puts the outcomes back into `r` (whose jobs are the same plan).
    pub fn restore(self, r: &mut RunResult) {
        for (j, o) in r.jobs.iter_mut().zip(self.outcomes) {
            j.outcome = o;
        }
    }
}

/// Every rank's result, on rank 0, in rank order.
pub type Gathered = Vec<RankResult>;

/// The hooks of one rank.
pub struct ClusterHooks {
    pub cluster: Arc<Mutex<Cluster>>,
    /// Rank 0: every rank's result once the run has ended.
    pub gathered: Arc<Mutex<Option<Gathered>>>,
    batch: u32,
}

impl ClusterHooks {
    pub fn new(cluster: Arc<Mutex<Cluster>>) -> ClusterHooks {
        ClusterHooks {
            cluster,
            gathered: Arc::new(Mutex::new(None)),
            batch: 0,
        }
    }
}

/// The ranks can no longer meet: say why (rank 0 names the silent rank,
/// another rank names rank 0) and stop every rank.
pub fn give_up(c: &Cluster, e: &ClusterError) -> ! {
    crate::run::output::stderr_line(&format!("iomark: rank {}: {e}", c.rank()));
    crate::run::signals::clean_up_now();
    c.abort(1)
}

/// Rank 0's text of every refusal, one line each (`iomark: ` goes before
/// the first by whoever prints it).
fn refusals(c_hosts: &[String], all: &[Vec<u8>]) -> String {
    let lines: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(r, b)| {
            let host = c_hosts.get(r).map(String::as_str).unwrap_or("?");
            format!("rank {r} on {host}: {}", String::from_utf8_lossy(b))
        })
        .collect();
    match lines.len() {
        0 => String::new(),
        1 => format!("{}; no rank started", lines[0]),
        n => format!(
            "{n} ranks refused, so no rank started: {}",
            lines.join("; ")
        ),
    }
}

impl SessionHooks for ClusterHooks {
    fn safety_verdict(&mut self, verdict: Result<(), String>) -> Result<(), String> {
        let mut c = self.cluster.lock().expect("cluster");
        let mine = verdict.err().unwrap_or_default().into_bytes();
        let hosts = c.hosts.clone();
        let answer = match c.exchange("the safety checks", mine, |all| {
            refusals(&hosts, &all).into_bytes()
        }) {
            Ok(a) => a,
            Err(e) => give_up(&c, &e),
        };
        if answer.is_empty() {
            Ok(())
        } else if c.rank() == 0 {
            Err(String::from_utf8_lossy(&answer).into_owned())
        } else {
            // Rank 0 says it, once for all.
            Err(String::new())
        }
    }

    fn before_start(&mut self, _plan: &Plan, clones: &[usize], gate: &StartGate) {
        self.batch += 1;
        let mut c = self.cluster.lock().expect("cluster");
        // Every clone of this rank set up (files open, buffers ready)...
        while gate.arrived() < clones.len() {
            if let Err(e) = c.pump() {
                give_up(&c, &e);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        // ... then every rank's, and all start at once.
        let what = format!("every rank to set up batch {} of its jobs", self.batch);
        if let Err(e) = c.exchange(&what, Vec::new(), |_| Vec::new()) {
            if !matches!(e, ClusterError::Interrupted(_)) {
                give_up(&c, &e);
            }
        }
    }

    fn finish(&mut self, result: &mut RunResult) {
        let mut c = self.cluster.lock().expect("cluster");
        let mine = RankResult::of(result);
        let bytes = crate::stats::wire::encode(&mine);
        mine.restore(result);
        let all = match c.gather("every rank's results", bytes) {
            Ok(a) => a,
            Err(e) => give_up(&c, &e),
        };
        if let Some(all) = all {
            let mut out = Vec::with_capacity(all.len());
            for (r, b) in all.iter().enumerate() {
                match crate::stats::wire::decode::<RankResult>(b) {
                    Ok(rr) => out.push(rr),
                    Err(e) => give_up(&c, &ClusterError::Results(r as u32, e.to_string())),
                }
            }
            *self.gathered.lock().expect("gathered") = Some(out);
        }
    }
}
