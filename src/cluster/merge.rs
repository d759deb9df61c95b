//! What ranks measured, merged on the way to rank 0.
//!
//! Each rank turns its session's result into a [`Gathered`]: one
//! [`HostPart`] (its clones' outcomes, merged per job section, or kept
//! per clone with per-rank detail) and one [`PhaseSum`] per batch (its
//! counters at the few instants the phase figures need, not its samples).
//! A rank merges its children's into its own ([`Gathered::absorb`]):
//! parts of one host into one part (counters summed, latency histograms
//! merged bucket by bucket), phase sums summed. So a host's leader sends
//! one part for its host, and rank 0 ends with one part per host,
//! whatever the number of ranks.
//!
//! The merge does not depend on the order in which parts arrive: what
//! only one part can give (a host's environment and pid, a job's first
//! error) is taken from the lowest rank or clone. A tree of merges gives
//! exactly what one flat merge of every rank gives (checked by
//! `sim`'s tests for 10,000 ranks).
//!
//! Rank 0 then rebuilds the report's hosts from its own plan and the
//! parts ([`merged`]).

use serde::{Deserialize, Serialize};

use super::tree::{Hosts, RankSet};
use crate::report::cluster::{ClusterInfo, Host, MissingRanks, PhaseFigures};
use crate::report::hosts::{HostBrief, JobBrief, PhaseBrief};
use crate::run::worker::Outcome;
use crate::run::{JobRun, RunContext, RunResult};
use crate::stats::disk::DiskReport;

/// Bytes and I/Os per direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        for d in 0..3 {
            self.bytes[d] += o.bytes[d];
            self.ios[d] += o.ios[d];
        }
    }

    /// `self - o`, each figure at least 0.
    pub fn since(&self, o: &Counters) -> Counters {
        Counters {
            bytes: [0, 1, 2].map(|d| self.bytes[d].saturating_sub(o.bytes[d])),
            ios: [0, 1, 2].map(|d| self.ios[d].saturating_sub(o.ios[d])),
        }
    }
}

/// One batch (stonewall phase) over a set of ranks, all instants in ns
/// from the batch's common start (rank 0's release from the barrier).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSum {
    /// 1 for the first batch.
    pub batch: u32,
    /// Ranks that ran clones in it.
    pub ranks: u32,
    /// When the first and the last of those ranks had all their clones
    /// done.
    pub first_done_ns: Option<u64>,
    pub last_done_ns: Option<u64>,
    /// The longest `ramp_time` of the batch's clones.
    pub ramp_ms: u64,
    /// How late (or early, below 0) ranks left the start barrier, from
    /// the common start: its spread is the start skew.
    pub lag_min_ns: Option<i64>,
    pub lag_max_ns: Option<i64>,
    /// Counted from the end of each rank's ramp until the first rank was
    /// done (`None`: not known on some rank, as when the run stopped).
    pub all_running: Option<Counters>,
    /// ... and until each rank was done.
    pub until_last: Counters,
    /// A rank stopped it early (a signal, a lost rank).
    pub interrupted: bool,
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) | (None, x) => x,
    }
}

impl PhaseSum {
    pub fn absorb(&mut self, o: &PhaseSum) {
        let had = self.ranks > 0;
        self.ranks += o.ranks;
        self.first_done_ns = min_opt(self.first_done_ns, o.first_done_ns);
        self.last_done_ns = max_opt(self.last_done_ns, o.last_done_ns);
        self.ramp_ms = self.ramp_ms.max(o.ramp_ms);
        self.lag_min_ns = min_opt(self.lag_min_ns, o.lag_min_ns);
        self.lag_max_ns = max_opt(self.lag_max_ns, o.lag_max_ns);
        self.all_running = match (&self.all_running, &o.all_running) {
            (Some(a), Some(b)) => {
                let mut s = *a;
                s.add(b);
                Some(s)
            }
            // A rank that ran nothing knows no counters and needs none.
            (a, _) if o.ranks == 0 => *a,
            (_, b) if !had => *b,
            _ => None,
        };
        self.until_last.add(&o.until_last);
        self.interrupted |= o.interrupted;
    }

    /// The report's figures of this phase over every rank.
    pub fn figures(&self) -> PhaseFigures {
        let skew = match (self.lag_min_ns, self.lag_max_ns) {
            (Some(a), Some(b)) => (b - a).max(0) as u64,
            _ => 0,
        };
        PhaseFigures {
            phase: self.batch,
            ranks: self.ranks,
            first_done_ns: self.first_done_ns.unwrap_or(0),
            last_done_ns: self.last_done_ns.unwrap_or(0),
            ramp_ms: self.ramp_ms,
            start_skew_ns: skew,
            all_running: self.all_running.map(|c| (c.bytes, c.ios)),
            until_last: (self.until_last.bytes, self.until_last.ios),
            interrupted: self.interrupted,
        }
    }
}

/// A job's outcome on part of the ranks: one clone, or (without per-rank
/// detail) every clone of one job section, merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobPart {
    /// The job section (index into the job list).
    pub job: u32,
    /// The lowest global clone number merged in.
    pub clone: u32,
    /// How many clones are merged in.
    pub clones: u32,
    /// The clone whose error `outcome` keeps (the lowest that failed).
    pub error_clone: u32,
    /// Its reporting group and stonewall phase (from 0) in the plan.
    pub group: u32,
    pub phase: u32,
    pub outcome: Outcome,
}

impl JobPart {
    fn key(&self, detail: bool) -> (u32, u32) {
        (self.job, if detail { self.clone } else { 0 })
    }

    /// Merges `o` in: figures exactly, the lowest clone's error, start,
    /// steady state and first error count kept.
    fn absorb(&mut self, mut o: JobPart) {
        if o.clone < self.clone {
            std::mem::swap(self, &mut o);
        }
        self.outcome.stats.merge(&o.outcome.stats);
        let fails = |p: &JobPart| p.outcome.error != 0;
        if fails(&o) && (!fails(self) || o.error_clone < self.error_clone) {
            self.outcome.error = o.outcome.error;
            self.outcome.error_msg = o.outcome.error_msg.take();
            self.error_clone = o.error_clone;
        }
        self.outcome.interrupted |= o.outcome.interrupted;
        let start = |v: u64| if v == 0 { u64::MAX } else { v };
        let s = start(self.outcome.start_unix_ms).min(start(o.outcome.start_unix_ms));
        self.outcome.start_unix_ms = if s == u64::MAX { 0 } else { s };
        self.clones += o.clones;
    }
}

/// What some ranks of one host measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostPart {
    /// The host (index into the run's `Hosts`).
    pub host: u32,
    pub ranks: RankSet,
    /// The process id of its lowest rank (shown in its report).
    pub pid: u32,
    pub interrupted: bool,
    pub start_unix: u64,
    pub disks: Vec<DiskReport>,
    /// The host and targets as its lowest rank found them, and that
    /// rank's warnings (kind, job, message).
    pub environment: crate::host::Environment,
    pub warnings: Vec<(String, String, String)>,
    /// Sorted by job and (with per-rank detail) clone.
    pub jobs: Vec<JobPart>,
    /// Kept per clone (per-rank detail) rather than per job section.
    pub detail: bool,
}

impl HostPart {
    /// This host in brief: per phase its jobs merged, per job section
    /// what the run status needs and its error (see `report::hosts`).
    pub fn brief(&self) -> HostBrief {
        let mut phases: Vec<u32> = self.jobs.iter().map(|j| j.phase).collect();
        phases.sort_unstable();
        phases.dedup();
        HostBrief {
            host: self.host,
            hostname: String::new(),
            ranks: self.ranks.iter().collect(),
            pid: self.pid,
            interrupted: self.interrupted,
            warnings: self.warnings.clone(),
            phases: phases
                .into_iter()
                .map(|ph| {
                    let of = self.jobs.iter().filter(|j| j.phase == ph);
                    PhaseBrief::of(ph + 1, of.map(|j| &j.outcome))
                })
                .collect(),
            jobs: self
                .jobs
                .iter()
                .map(|j| {
                    let d = &j.outcome.stats.dir;
                    JobBrief {
                        job: j.job,
                        group: j.group,
                        clones: j.clones,
                        bytes: [d[0].bytes, d[1].bytes, d[2].bytes],
                        runtime_ms: [d[0].runtime_ms, d[1].runtime_ms, d[2].runtime_ms],
                        error: j.outcome.error,
                        error_clone: j.error_clone,
                        error_msg: j.outcome.error_msg.clone(),
                    }
                })
                .collect(),
        }
    }

    fn absorb(&mut self, mut o: HostPart) {
        if o.ranks.first() < self.ranks.first() {
            std::mem::swap(self, &mut o);
        }
        self.ranks.union(&o.ranks);
        self.interrupted |= o.interrupted;
        self.start_unix = self.start_unix.min(o.start_unix);
        for d in o.disks {
            if !self.disks.iter().any(|x| x.name == d.name) {
                self.disks.push(d);
            }
        }
        let detail = self.detail;
        let mut out = Vec::with_capacity(self.jobs.len().max(o.jobs.len()));
        let mut a = std::mem::take(&mut self.jobs).into_iter().peekable();
        let mut b = o.jobs.into_iter().peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.key(detail).cmp(&y.key(detail)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => break,
            };
            match next {
                std::cmp::Ordering::Less => out.extend(a.next()),
                std::cmp::Ordering::Greater => out.extend(b.next()),
                std::cmp::Ordering::Equal => {
                    let (mut x, y) = (a.next().expect("peeked"), b.next().expect("peeked"));
                    x.absorb(y);
                    out.push(x);
                }
            }
        }
        self.jobs = out;
    }
}

/// What a set of ranks measured in one session: one part per host, one
/// sum per batch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gathered {
    /// Sorted by host.
    pub hosts: Vec<HostPart>,
    /// Sorted by batch.
    pub phases: Vec<PhaseSum>,
    /// Hosts kept in brief (past `--mpi-host-detail` hosts), sorted by
    /// host and first rank; their jobs are merged into `total`.
    pub briefs: Vec<HostBrief>,
    /// The jobs of the hosts in `briefs`, merged per job section.
    pub total: Vec<JobPart>,
}

impl Gathered {
    /// One rank's: its session's `result` (clones in plan order, `numjobs`
    /// per job on each rank) and its batches.
    pub fn of_rank(
        result: &RunResult,
        place: (u32, u32),
        phases: Vec<PhaseSum>,
        detail: bool,
    ) -> Gathered {
        let (rank, host) = place;
        let mut part = HostPart {
            host,
            ranks: RankSet::one(rank),
            pid: std::process::id(),
            interrupted: result.interrupted,
            start_unix: result.start_unix,
            disks: result.disks.clone(),
            environment: result.context.environment.clone(),
            warnings: result
                .context
                .warnings
                .iter()
                .map(|w| (w.kind.to_string(), w.job.clone(), w.message.clone()))
                .collect(),
            jobs: Vec::new(),
            detail,
        };
        for j in &result.jobs {
            let p = JobPart {
                job: j.job.job_index as u32,
                clone: j.job.clone,
                clones: j.clones,
                error_clone: j.job.clone,
                group: j.job.group,
                phase: j.job.phase,
                outcome: j.outcome.clone(),
            };
            match part
                .jobs
                .iter_mut()
                .find(|x| x.key(detail) == p.key(detail))
            {
                Some(x) => x.absorb(p),
                None => part.jobs.push(p),
            }
        }
        part.jobs.sort_by_key(|x| x.key(detail));
        Gathered {
            hosts: vec![part],
            phases,
            ..Gathered::default()
        }
    }

    /// Keeps every host part of these results in brief (see
    /// `report::hosts`): its figures merged into `total`, exactly.
    pub fn condense(&mut self) {
        for h in std::mem::take(&mut self.hosts) {
            let b = h.brief();
            let at = self
                .briefs
                .partition_point(|x| (x.host, x.ranks.first()) < (b.host, b.ranks.first()));
            self.briefs.insert(at, b);
            for j in h.jobs {
                absorb_job(&mut self.total, j);
            }
        }
    }

    /// Merges another set of ranks' results in (see the module
    /// documentation).
    pub fn absorb(&mut self, o: Gathered) {
        let mut hosts = std::mem::take(&mut self.hosts);
        for h in o.hosts {
            match hosts.binary_search_by_key(&h.host, |x| x.host) {
                Ok(i) => hosts[i].absorb(h),
                Err(i) => hosts.insert(i, h),
            }
        }
        self.hosts = hosts;
        for b in o.briefs {
            let at = self
                .briefs
                .partition_point(|x| (x.host, x.ranks.first()) < (b.host, b.ranks.first()));
            self.briefs.insert(at, b);
        }
        for j in o.total {
            absorb_job(&mut self.total, j);
        }
        for p in o.phases {
            match self.phases.binary_search_by_key(&p.batch, |x| x.batch) {
                Ok(i) => self.phases[i].absorb(&p),
                Err(i) => self.phases.insert(i, p),
            }
        }
    }

    /// Merges a child's results `g` in, unless they cover ranks already
    /// merged (`covered`: results sent twice, after a stop); what a rank
    /// does with every result message it receives.
    pub fn absorb_new(&mut self, covered: &mut RankSet, g: Gathered) -> bool {
        let theirs = g.ranks();
        if theirs.minus(covered) != theirs {
            return false;
        }
        covered.union(&theirs);
        self.absorb(g);
        true
    }

    /// Every rank these results cover.
    pub fn ranks(&self) -> RankSet {
        let mut s = RankSet::default();
        for h in &self.hosts {
            s.union(&h.ranks);
        }
        for b in &self.briefs {
            for r in &b.ranks {
                s.add(*r);
            }
        }
        s
    }
}

/// Merges `j` into the entry of its job section in `jobs` (sorted by job).
fn absorb_job(jobs: &mut Vec<JobPart>, j: JobPart) {
    match jobs.binary_search_by_key(&j.job, |x| x.job) {
        Ok(i) => jobs[i].absorb(j),
        Err(i) => jobs.insert(i, j),
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
#[derive(Clone, Debug)]
pub struct Merged {
    /// One per host that sent results and is kept whole, for the
    /// cluster report.
    pub hosts: Vec<Host>,
    /// The jobs of the hosts kept in brief, merged (a nameless host).
    pub rest: Option<Host>,
    /// Every host that sent results in brief (the operator's summary),
    /// by host.
    pub briefs: Vec<HostBrief>,
    /// The run as a whole: ranks, phases, missing ranks.
    pub info: ClusterInfo,
    /// Every rank's own result, when all ran on one host (the ranks are
    /// then the clients: see [`Merged::clients`]).
    pub rank_clients: Vec<(Client, RunResult)>,
    /// The exit code a stop of the ranks calls for (128 + a signal, or 1
    /// for a lost rank), when they stopped.
    pub stop_code: Option<i32>,
}

/// Rank 0: the report's hosts and clients from its own session's
/// `result` (its plan: every rank planned the same jobs) and every
/// rank's results `g`. `lost` names the ranks found silent, `why` what
/// stopped the run early, if anything did. Past `detail_hosts` hosts
/// every host is kept in brief (those still whole are made so here).
pub fn merged(
    result: &RunResult,
    mut g: Gathered,
    hosts: &Hosts,
    lost: &[(RankSet, String)],
    stopped: Option<String>,
    detail_hosts: u32,
) -> Merged {
    let covered = g.ranks();
    let missing = missing(hosts, &covered, lost);
    let condensed = hosts.names.len() > detail_hosts as usize || !g.briefs.is_empty();
    if condensed {
        g.condense();
    }
    let info = ClusterInfo {
        ranks: hosts.size(),
        phases: g.phases.iter().map(PhaseSum::figures).collect(),
        reported: covered.len(),
        missing,
        stopped,
        condensed,
        ..ClusterInfo::default()
    };
    let by_rank = hosts.names.len() == 1 && hosts.size() > 1;
    let mut ranks = Vec::new();
    let mut out = Vec::with_capacity(g.hosts.len());
    let mut briefs = Vec::with_capacity(g.hosts.len() + g.briefs.len());
    for part in g.hosts {
        if by_rank {
            ranks.extend(rank_clients(result, &part, hosts));
        }
        briefs.push(part.brief());
        out.push(host_of(result, part, hosts));
    }
    briefs.append(&mut g.briefs);
    briefs.sort_by_key(|b| (b.host, b.ranks.first().copied()));
    for b in &mut briefs {
        b.hostname = hosts
            .names
            .get(b.host as usize)
            .cloned()
            .unwrap_or_default();
    }
    let rest = (!g.total.is_empty()).then(|| rest_of(result, g.total, hosts));
    Merged {
        hosts: out,
        rest,
        briefs,
        info,
        rank_clients: ranks,
        stop_code: None,
    }
}

/// The jobs of the hosts kept in brief, merged, as one nameless host
/// (each error already naming the host of its failing clone).
fn rest_of(result: &RunResult, mut total: Vec<JobPart>, hosts: &Hosts) -> Host {
    for p in &mut total {
        let n = result
            .jobs
            .iter()
            .find(|x| x.job.job_index == p.job as usize)
            .map_or(1, |x| x.job.spec.ctl.numjobs.max(1));
        let failed = p.outcome.error != 0 || p.outcome.error_msg.is_some();
        if failed {
            let host = hosts.name_of(p.error_clone / n);
            let msg = p
                .outcome
                .error_msg
                .take()
                .unwrap_or_else(|| crate::report::normal::errno_text(p.outcome.error));
            p.outcome.error_msg = Some(format!("{host}: {msg}"));
        }
    }
    let jobs = runs_of(result, total);
    Host {
        hostname: String::new(),
        ranks: Vec::new(),
        pid: 0,
        result: RunResult {
            jobs,
            fake_clock: result.fake_clock,
            context: result.context.clone(),
            ..RunResult::default()
        },
    }
}

impl Merged {
    /// One result per client (see [`Client`]): the hosts, or when every
    /// rank ran on one host, the ranks.
    pub fn clients(&self) -> Vec<(Client, RunResult)> {
        if !self.rank_clients.is_empty() {
            return self.rank_clients.clone();
        }
        self.hosts
            .iter()
            .map(|h| {
                let c = Client {
                    name: h.hostname.clone(),
                    hostname: h.hostname.clone(),
                    ranks: h.ranks.clone(),
                    unit: "host",
                };
                (c, h.result.clone())
            })
            .collect()
    }
}

/// The ranks not covered, grouped by why.
fn missing(hosts: &Hosts, covered: &RankSet, lost: &[(RankSet, String)]) -> Vec<MissingRanks> {
    let all = RankSet::range(0, hosts.size());
    let mut left = all.minus(covered);
    let mut out = Vec::new();
    let mut group = |set: RankSet, why: String| {
        if set.is_empty() {
            return;
        }
        let mut names: Vec<String> = Vec::new();
        for r in set.iter() {
            let n = hosts.name_of(r);
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
        out.push(MissingRanks {
            ranks: set.iter().collect(),
            hostnames: names,
            reason: why,
        });
    };
    for (set, why) in lost {
        let here = set.minus(&set.minus(&left));
        left = left.minus(&here);
        group(here, why.clone());
    }
    group(left, "sent no results in time".into());
    out
}

/// The result of one host from its part, with rank 0's plan.
fn host_of(result: &RunResult, part: HostPart, hosts: &Hosts) -> Host {
    let name = hosts
        .names
        .get(part.host as usize)
        .cloned()
        .unwrap_or_default();
    let context = RunContext {
        global_options: result.context.global_options.clone(),
        environment: part.environment,
        warnings: part
            .warnings
            .iter()
            .map(|(k, j, m)| crate::host::Warning::of_kind(k, j.clone(), m.clone()))
            .collect(),
    };
    let jobs = runs_of(result, part.jobs);
    Host {
        hostname: name,
        ranks: part.ranks.iter().collect(),
        pid: part.pid,
        result: RunResult {
            jobs,
            interrupted: part.interrupted,
            start_unix: part.start_unix,
            disks: part.disks,
            fake_clock: result.fake_clock,
            overcommit: if part.ranks.contains(0) {
                result.overcommit.clone()
            } else {
                Vec::new()
            },
            context: std::sync::Arc::new(context),
        },
    }
}

/// The job runs of `parts`, each with the planned job of its section in
/// rank 0's plan (its clone number the part's).
fn runs_of(result: &RunResult, parts: Vec<JobPart>) -> Vec<JobRun> {
    parts
        .into_iter()
        .filter_map(|p| {
            let planned = result
                .jobs
                .iter()
                .find(|j| j.job.job_index == p.job as usize)?;
            let mut job = planned.job.clone();
            job.clone = p.clone;
            let failed = p.outcome.error != 0 || p.outcome.error_msg.is_some();
            Some(JobRun {
                job,
                error_clone: failed.then_some(p.error_clone),
                outcome: p.outcome,
                clones: p.clones,
            })
        })
        .collect()
}

/// Every rank of one host as its own client (per-rank detail: the part
/// keeps each clone).
fn rank_clients(result: &RunResult, part: &HostPart, hosts: &Hosts) -> Vec<(Client, RunResult)> {
    part.ranks
        .iter()
        .map(|r| {
            let mine: Vec<JobPart> = part
                .jobs
                .iter()
                .filter(|j| {
                    let n = result
                        .jobs
                        .iter()
                        .find(|x| x.job.job_index == j.job as usize)
                        .map_or(1, |x| x.job.spec.ctl.numjobs.max(1));
                    j.clone / n == r
                })
                .cloned()
                .collect();
            let c = Client {
                name: format!("rank {r}"),
                hostname: hosts.name_of(r).to_string(),
                ranks: vec![r],
                unit: "rank",
            };
            let rr = RunResult {
                jobs: runs_of(result, mine),
                interrupted: part.interrupted,
                start_unix: part.start_unix,
                fake_clock: result.fake_clock,
                context: result.context.clone(),
                ..RunResult::default()
            };
            (c, rr)
        })
        .collect()
}

// These run a job: on Windows (Wine) the file ids of one test's files
// can come back for another's, so they run on Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_host_keeps_the_failing_clone_not_the_lowest() {
        let result = crate::run::session::testing::run_text(
            "[j]\nioengine=null\nsize=64k\nbs=4k\n",
            Some(1000),
        );
        let part = |clone: u32, error: i32| JobPart {
            job: 0,
            clone,
            clones: 1,
            error_clone: clone,
            group: 0,
            phase: 0,
            outcome: Outcome {
                error,
                error_msg: (error != 0).then(|| "read-only file system".to_string()),
                ..Outcome::default()
            },
        };
        // Ranks 2 and 3 of one host (one clone each); rank 3's failed.
        let mut host = part(2, 0);
        host.absorb(part(3, 30)); // EROFS
        let runs = runs_of(&result, vec![host]);
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].job.clone, runs[0].clones), (2, 2));
        assert_eq!(runs[0].error_clone, Some(3));
        assert_eq!(runs[0].outcome.error, 30);
        // A clean host names no failing clone.
        let mut clean = part(2, 0);
        clean.absorb(part(3, 0));
        assert_eq!(runs_of(&result, vec![clean])[0].error_clone, None);
    }
}
