//! The session hooks of one rank (`run::session::SessionHooks`): where a
//! rank's run meets the other ranks' (safety, each batch's start, the
//! end). See the module documentation of `cluster`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Cluster, ClusterError, TAG_DONE, TAG_FIRST, TAG_RATE};
use crate::run::gate::StartGate;
use crate::run::plan::Plan;
use crate::run::session::SessionHooks;
use crate::run::worker::Outcome;
use crate::run::{Live, RunResult};
use crate::stats::disk::DiskReport;

/// What one rank sends rank 0 at the end: each clone's outcome, in plan
/// order, and what the run saw around them.
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct RankResult {
    pub outcomes: Vec<Outcome>,
    pub interrupted: bool,
    pub start_unix: u64,
    pub disks: Vec<DiskReport>,
    /// Each batch this rank ran: how long, and its counters over time.
    pub phases: Vec<PhaseRecord>,
    /// This rank's host and targets as its run found them, and its
    /// warnings (kind, job, message).
    pub environment: crate::host::Environment,
    pub warnings: Vec<(String, String, String)>,
}

/// One batch (stonewall phase) on one rank: from the common start to its
/// last clone's end, with its clones' summed counters sampled on the way
/// (every `SAMPLE`, and at the end).
#[derive(Serialize, Deserialize, Debug, Default, Clone, PartialEq)]
pub struct PhaseRecord {
    pub batch: u32,
    pub duration_ms: u64,
    /// The longest `ramp_time` of the batch's clones: what it did before
    /// is not measured.
    #[serde(default)]
    pub ramp_ms: u64,
    pub samples: Vec<Sample>,
}

/// Summed counters of a rank's batch at `t_ms` after its start.
#[derive(Serialize, Deserialize, Debug, Default, Clone, Copy, PartialEq)]
pub struct Sample {
    pub t_ms: u64,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
}

/// How often a rank samples its batch's counters.
const SAMPLE: Duration = Duration::from_millis(20);
/// At most this many samples are kept per batch: past it every other one
/// is dropped and the sampling period doubles, so a long phase is sent as
/// 2,048–4,096 evenly spaced points rather than one per `SAMPLE`.
const MAX_SAMPLES: usize = 4096;
/// How often a rank tells rank 0 its counters (for the progress line).
const RATE: Duration = Duration::from_millis(500);

impl PhaseRecord {
    /// The counters at `t_ms`, read linearly between the samples around it
    /// (the last sample's once `t_ms` is past this rank's end).
    pub fn at(&self, t_ms: u64) -> ([u64; 3], [u64; 3]) {
        let s = &self.samples;
        let Some(last) = s.last() else {
            return ([0; 3], [0; 3]);
        };
        if t_ms >= last.t_ms {
            return (last.bytes, last.ios);
        }
        let i = s.partition_point(|p| p.t_ms <= t_ms);
        let (a, b) = match i {
            0 => (Sample::default(), s[0]),
            _ => (s[i - 1], s[i]),
        };
        let span = (b.t_ms - a.t_ms).max(1) as u128;
        let f = |x: u64, y: u64| -> u64 {
            (x as u128 + (y.saturating_sub(x) as u128) * (t_ms - a.t_ms) as u128 / span) as u64
        };
        (
            [0, 1, 2].map(|d| f(a.bytes[d], b.bytes[d])),
            [0, 1, 2].map(|d| f(a.ios[d], b.ios[d])),
        )
    }
}

/// The other ranks' counters of the running batch, summed, as rank 0 last
/// heard them: its progress line adds them to its own.
pub use crate::run::progress::RemoteCounters as Remote;

impl RankResult {
    /// What `r` (this rank's result, with `phases`) sends rank 0.
    pub fn of(r: &RunResult, phases: Vec<PhaseRecord>) -> RankResult {
        RankResult {
            outcomes: r.jobs.iter().map(|j| j.outcome.clone()).collect(),
            interrupted: r.interrupted,
            start_unix: r.start_unix,
            disks: r.disks.clone(),
            phases,
            environment: r.context.environment.clone(),
            warnings: r
                .context
                .warnings
                .iter()
                .map(|w| (w.kind.to_string(), w.job.clone(), w.message.clone()))
                .collect(),
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
    /// Rank 0: the other ranks' live counters (for the progress line).
    pub remote: Arc<Remote>,
    /// Stop every rank's batch when the first rank finishes it.
    pub stonewall: bool,
    batch: u32,
    current: Batch,
    phases: Vec<PhaseRecord>,
    /// Rank 0: the latest counters of each rank.
    latest: Vec<([u64; 3], [u64; 3])>,
}

/// The batch a rank is running.
#[derive(Default)]
struct Batch {
    clones: Vec<usize>,
    start: Option<Instant>,
    samples: Vec<Sample>,
    last_sample: Option<Instant>,
    last_rate: Option<Instant>,
    /// The sampling period now (`SAMPLE`, doubled by each `thin`).
    every: Duration,
    /// The longest `ramp_time` of its clones.
    ramp_ms: u64,
    /// Its duration, once every clone has ended.
    done_ms: Option<u64>,
    /// The first rank to finish is known (stonewall): clones stopped.
    first_seen: bool,
}

impl ClusterHooks {
    pub fn new(cluster: Arc<Mutex<Cluster>>) -> ClusterHooks {
        let ranks = cluster.lock().map(|c| c.size()).unwrap_or(1) as usize;
        ClusterHooks {
            cluster,
            gathered: Arc::new(Mutex::new(None)),
            remote: Arc::new(Remote::default()),
            stonewall: false,
            batch: 0,
            current: Batch::default(),
            phases: Vec::new(),
            latest: vec![([0; 3], [0; 3]); ranks],
        }
    }

    /// The meeting after rank 0's layout of the next batch.
    fn rank_0_laid_out(&mut self) {
        let mut c = self.cluster.lock().expect("cluster");
        let what = format!("rank 0 to lay out the files of batch {}", self.batch + 1);
        if let Err(e) = c.exchange(&what, Vec::new(), |_| Vec::new()) {
            if !matches!(e, ClusterError::Interrupted(_)) {
                give_up(&c, &e);
            }
        }
    }

    /// The running batch's summed counters now.
    fn counters(&self, live: &Live<'_>) -> ([u64; 3], [u64; 3]) {
        let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
        for &i in &self.current.clones {
            let (b, n) = live.counters(i);
            for d in 0..3 {
                bytes[d] += b[d];
                ios[d] += n[d];
            }
        }
        (bytes, ios)
    }

    fn sample(&mut self, live: &Live<'_>, start: Instant) {
        let (bytes, ios) = self.counters(live);
        let t_ms = start.elapsed().as_millis() as u64;
        self.current.samples.push(Sample { t_ms, bytes, ios });
        thin(&mut self.current.samples, &mut self.current.every);
    }

    /// The batch that ran is over: keep its record.
    fn close_batch(&mut self) {
        let b = std::mem::take(&mut self.current);
        if let Some(start) = b.start {
            let duration_ms = b
                .done_ms
                .unwrap_or_else(|| start.elapsed().as_millis() as u64);
            self.phases.push(PhaseRecord {
                batch: self.batch,
                duration_ms,
                ramp_ms: b.ramp_ms,
                samples: b.samples,
            });
        }
    }

    /// Rank 0 with a stonewall: the first rank done ends the batch on all.
    fn first_done(&mut self, c: &mut Cluster, live: &Live<'_>) {
        let seq = self.batch;
        if c.rank() == 0 {
            let someone = self.current.done_ms.is_some() || c.take_note(TAG_DONE, seq).is_some();
            if someone {
                for r in 1..c.size() {
                    c.note(r, TAG_FIRST, seq, &[]);
                }
                self.stop_batch(live);
            }
        } else if c.take_note(TAG_FIRST, seq).is_some() {
            self.stop_batch(live);
        }
    }

    fn stop_batch(&mut self, live: &Live<'_>) {
        self.current.first_seen = true;
        for &i in &self.current.clones {
            if !live.finished(i) {
                live.stop(i);
            }
        }
    }

    /// Rank 0 keeps each rank's latest counters, summed in `remote`.
    fn hear_rates(&mut self, c: &mut Cluster) {
        let mut changed = false;
        while let Some((from, body)) = c.take_note(TAG_RATE, self.batch) {
            if let Some(v) = decode_counters(&body) {
                if let Some(slot) = self.latest.get_mut(from as usize) {
                    *slot = v;
                    changed = true;
                }
            }
        }
        if changed {
            for d in 0..3 {
                let b: u64 = self.latest.iter().skip(1).map(|x| x.0[d]).sum();
                let n: u64 = self.latest.iter().skip(1).map(|x| x.1[d]).sum();
                self.remote.bytes[d].store(b, Ordering::Relaxed);
                self.remote.ios[d].store(n, Ordering::Relaxed);
            }
        }
    }
}

/// Past `MAX_SAMPLES`, drops every other sample (keeping the first and
/// the newest) and doubles the sampling period `every`.
fn thin(samples: &mut Vec<Sample>, every: &mut Duration) {
    if samples.len() > MAX_SAMPLES {
        *every = (*every).max(SAMPLE) * 2;
        let last = samples.len() - 1;
        let mut i = 0;
        samples.retain(|_| {
            i += 1;
            (i - 1) % 2 == 0 || i - 1 == last
        });
    }
}

fn encode_counters(bytes: [u64; 3], ios: [u64; 3]) -> Vec<u8> {
    bytes
        .iter()
        .chain(&ios)
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

fn decode_counters(b: &[u8]) -> Option<([u64; 3], [u64; 3])> {
    if b.len() != 48 {
        return None;
    }
    let v = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    Some(([v(0), v(1), v(2)], [v(3), v(4), v(5)]))
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

    fn before_layout(&mut self, _plan: &Plan, _batch: &[usize]) {
        // Rank 0 lays out first (a shared file is created once, by it);
        // the others then find its files and extend them as they need.
        if self.cluster.lock().expect("cluster").rank() != 0 {
            self.rank_0_laid_out();
        }
    }

    fn after_layout(&mut self, _plan: &Plan, _batch: &[usize]) {
        if self.cluster.lock().expect("cluster").rank() == 0 {
            self.rank_0_laid_out();
        }
    }

    fn before_start(&mut self, plan: &Plan, clones: &[usize], gate: &StartGate) {
        self.close_batch();
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
        for slot in &mut self.latest {
            *slot = ([0; 3], [0; 3]);
        }
        for d in 0..3 {
            self.remote.bytes[d].store(0, Ordering::Relaxed);
            self.remote.ios[d].store(0, Ordering::Relaxed);
        }
        let ramp_us = clones
            .iter()
            .map(|&i| plan.jobs[i].spec.time.ramp_time_us)
            .max();
        self.current = Batch {
            clones: clones.to_vec(),
            start: Some(Instant::now()),
            ramp_ms: ramp_us.unwrap_or(0) / 1000,
            ..Batch::default()
        };
    }

    fn tick(&mut self, live: &Live<'_>) {
        let Some(start) = self.current.start else {
            return;
        };
        if self.current.done_ms.is_some() && !self.stonewall {
            return;
        }
        let now = Instant::now();
        let every = self.current.every.max(SAMPLE);
        if self.current.last_sample.is_none_or(|t| now - t >= every) {
            self.current.last_sample = Some(now);
            self.sample(live, start);
        }
        let cluster = self.cluster.clone();
        let mut c = cluster.lock().expect("cluster");
        if self.current.done_ms.is_none() && self.current.clones.iter().all(|&i| live.finished(i)) {
            self.sample(live, start);
            self.current.done_ms = Some(start.elapsed().as_millis() as u64);
            if c.rank() != 0 {
                c.note(0, TAG_DONE, self.batch, &[]);
            }
        }
        if c.rank() != 0 && self.current.last_rate.is_none_or(|t| now - t >= RATE) {
            self.current.last_rate = Some(now);
            let (b, n) = self.counters(live);
            c.note(0, TAG_RATE, self.batch, &encode_counters(b, n));
        }
        if let Err(e) = c.pump() {
            give_up(&c, &e);
        }
        if c.rank() == 0 {
            self.hear_rates(&mut c);
        }
        if self.stonewall && !self.current.first_seen {
            self.first_done(&mut c, live);
        }
    }

    fn finish(&mut self, result: &mut RunResult) {
        self.close_batch();
        let mut c = self.cluster.lock().expect("cluster");
        let mine = RankResult::of(result, std::mem::take(&mut self.phases));
        let bytes = crate::stats::wire::encode(&mine);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_phase_keeps_a_bounded_even_record_with_its_ends() {
        // A 2,000 s phase, sampled as `tick` does: every `every`.
        let (mut s, mut every) = (Vec::new(), SAMPLE);
        let mut last: Option<u64> = None;
        for t in 0..100_000u64 {
            let t_ms = t * 20;
            if last.is_some_and(|l| t_ms - l < every.as_millis() as u64) && t != 99_999 {
                continue;
            }
            last = Some(t_ms);
            s.push(Sample {
                t_ms,
                bytes: [t * 4096, 0, 0],
                ios: [t, 0, 0],
            });
            thin(&mut s, &mut every);
            assert!(s.len() <= MAX_SAMPLES);
        }
        assert_eq!(s[0].t_ms, 0);
        assert_eq!(s.last().unwrap().t_ms, 99_999 * 20);
        assert!(s.len() > MAX_SAMPLES / 2, "{}", s.len());
        // Still in time order, and no gap much wider than the rest.
        let gaps: Vec<u64> = s.windows(2).map(|w| w[1].t_ms - w[0].t_ms).collect();
        assert!(gaps.iter().all(|&g| g > 0));
        let max = *gaps.iter().max().unwrap();
        // Evenly spaced: no gap wider than the period now.
        assert!(max <= every.as_millis() as u64, "{max} > {every:?}");
        // Counts read between samples stay exact for a steady rate.
        let p = PhaseRecord {
            batch: 1,
            duration_ms: 99_999 * 20,
            ramp_ms: 0,
            samples: s,
        };
        assert_eq!(p.at(1_000_000).1[0], 50_000);
    }
}
