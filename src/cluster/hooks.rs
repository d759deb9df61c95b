//! The session hooks of one rank (`run::session::SessionHooks`): where a
//! rank's session meets the other ranks' — the safety verdict (with the
//! structure of its job list), each batch's layout and start, the
//! progress of a running batch, the end. Private to `cluster`: the launch
//! gets them through `Ranks::prepare`.
//!
//! **A batch's start** is a barrier released without sleeping: every
//! rank reports its clones set up (with the previous batch's end); rank 0
//! answers "armed" with when the first rank finished that batch; every
//! rank then polls without sleeping and says so; rank 0 notes its clock
//! (the batch's common start) and sends "go" down the tree. Each rank
//! knows how late it left (its lag, from the clock offsets measured when
//! the ranks joined): the spread of lags is the batch's start skew.
//!
//! **A batch's figures**: each rank samples its clones' counters (a zero
//! before the gate opens, then every 20 ms, thinned past 4,096 samples)
//! and its end is its last clone's own end instant. When rank 0 tells
//! when the first rank finished, each rank reads its counters at that
//! instant from its samples and keeps three sums (at the end of its
//! ramp, at the first end, at its own end), not the samples.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::merge::{Counters, Gathered, PhaseSum};
use super::msg::{Down, Ends, Up, Verdicts};
use super::node::Node;
use crate::job::JobSpec;
use crate::run::clock::mono_ns;
use crate::run::error::RunError;
use crate::run::gate::StartGate;
use crate::run::plan::Plan;
use crate::run::progress::RemoteCounters;
use crate::run::session::{Flow, SessionHooks, Verdict};
use crate::run::{Live, RunResult};

/// How often a rank samples its batch's counters.
const SAMPLE: Duration = Duration::from_millis(20);
/// At most this many samples are kept per batch: past it every other one
/// is dropped and the sampling period doubles.
const MAX_SAMPLES: usize = 4096;
/// How often a rank tells its parent its counters (for the progress line).
const RATE: Duration = Duration::from_millis(500);

/// Counters of a rank's batch `t_ns` after it left the start barrier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub t_ns: u64,
    pub c: Counters,
}

/// The counters at `t_ns`, read linearly between the samples around it
/// (the last sample's once `t_ns` is past it).
pub fn at(s: &[Sample], t_ns: u64) -> Counters {
    let Some(last) = s.last() else {
        return Counters::default();
    };
    if t_ns >= last.t_ns {
        return last.c;
    }
    let i = s.partition_point(|p| p.t_ns <= t_ns);
    let (a, b) = match i {
        0 => (Sample::default(), s[0]),
        _ => (s[i - 1], s[i]),
    };
    let span = (b.t_ns - a.t_ns).max(1) as u128;
    let f = |x: u64, y: u64| -> u64 {
        (x as u128 + (y.saturating_sub(x) as u128) * (t_ns - a.t_ns) as u128 / span) as u64
    };
    Counters {
        bytes: [0, 1, 2].map(|d| f(a.c.bytes[d], b.c.bytes[d])),
        ios: [0, 1, 2].map(|d| f(a.c.ios[d], b.c.ios[d])),
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

/// The batch a rank runs (or has run, until its figures are known).
#[derive(Default)]
struct Batch {
    number: u32,
    clones: Vec<usize>,
    /// When this rank left the barrier (local), and how late that was
    /// after the common start (ns, rank 0's clock).
    release: Option<Instant>,
    release_mono: u64,
    lag_ns: i64,
    samples: Vec<Sample>,
    every: Duration,
    last_sample: Option<Instant>,
    last_rate: Option<Instant>,
    ramp_ms: u64,
    /// When its last clone ended (ns after its release), once all have.
    done_ns: Option<u64>,
    first_seen: bool,
    interrupted: bool,
}

impl Batch {
    /// Its end from the common start (ns), if it ran clones.
    fn end(&self) -> Option<u64> {
        if self.clones.is_empty() {
            return None;
        }
        self.done_ns.map(|d| (d as i64 + self.lag_ns).max(0) as u64)
    }

    /// Its sums, the first rank having finished at `first_ns` from the
    /// common start (`None`: not known).
    fn sum(&self, first_ns: Option<u64>) -> PhaseSum {
        let ran = !self.clones.is_empty();
        let local = |common: u64| (common as i64 - self.lag_ns).max(0) as u64;
        let ramp = at(&self.samples, self.ramp_ms * 1_000_000);
        let end = self.samples.last().map(|s| s.c).unwrap_or_default();
        PhaseSum {
            batch: self.number,
            ranks: ran as u32,
            first_done_ns: self.end(),
            last_done_ns: self.end(),
            ramp_ms: self.ramp_ms,
            lag_min_ns: ran.then_some(self.lag_ns),
            lag_max_ns: ran.then_some(self.lag_ns),
            all_running: match (ran, first_ns) {
                (false, _) => Some(Counters::default()),
                (true, Some(f)) => Some(at(&self.samples, local(f)).since(&ramp)),
                (true, None) => None,
            },
            until_last: end.since(&ramp),
            interrupted: self.interrupted,
        }
    }
}

/// What rank 0 reads back once a session has run.
#[derive(Default)]
pub(super) struct Link {
    pub gathered: Mutex<Option<Gathered>>,
}

/// The hooks of one rank.
pub(super) struct Hooks {
    node: Arc<Mutex<Node>>,
    link: Arc<Link>,
    remote: Arc<RemoteCounters>,
    place: (u32, u32),
    stonewall: bool,
    detail: bool,
    /// Hosts kept in brief on the way up (see `merge::Gathered::condense`).
    condense: bool,
    batch: u32,
    cur: Batch,
    /// The previous batch, until its first end is known.
    ended: Option<Batch>,
    phases: Vec<PhaseSum>,
    interrupted: bool,
    /// The batches of the plan (stonewall phases).
    planned: u32,
}

impl Hooks {
    pub fn new(
        node: Arc<Mutex<Node>>,
        link: Arc<Link>,
        remote: Arc<RemoteCounters>,
        place: (u32, u32),
        stonewall: bool,
        detail: bool,
        condense: bool,
    ) -> Hooks {
        Hooks {
            node,
            link,
            remote,
            place,
            stonewall,
            detail,
            condense,
            batch: 0,
            cur: Batch::default(),
            ended: None,
            phases: Vec::new(),
            interrupted: false,
            planned: 0,
        }
    }

    fn node(&self) -> std::sync::MutexGuard<'_, Node> {
        self.node.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The running batch's summed counters now.
    fn counters(&self, live: &Live<'_>) -> Counters {
        let mut c = Counters::default();
        for &i in &self.cur.clones {
            let (b, n) = live.counters(i);
            c.add(&Counters { bytes: b, ios: n });
        }
        c
    }

    fn sample(&mut self, live: &Live<'_>) {
        let Some(start) = self.cur.release else {
            return;
        };
        let c = self.counters(live);
        let t_ns = start.elapsed().as_nanos() as u64;
        self.cur.samples.push(Sample { t_ns, c });
        thin(&mut self.cur.samples, &mut self.cur.every);
    }

    /// Closes the running batch: it waits for its figures in `ended`.
    fn close_batch(&mut self) {
        let b = std::mem::take(&mut self.cur);
        if b.release.is_some() {
            self.ended = Some(b);
        }
    }

    /// The ended batch's figures, now that when the first rank finished
    /// it is known (`None`: it will not be).
    fn settle(&mut self, first_ns: Option<u64>) {
        if let Some(b) = self.ended.take() {
            self.phases.push(b.sum(first_ns));
        }
    }

    fn ends(&self) -> Ends {
        self.ended
            .as_ref()
            .map(|b| Ends {
                batch: b.number,
                first_ns: b.end(),
                last_ns: b.end(),
            })
            .unwrap_or_default()
    }

    /// Waits until every clone of this rank has set up.
    fn set_up(&self, clones: &[usize], gate: &StartGate) -> Flow {
        let node = self.node();
        while gate.arrived() < clones.len() {
            node.pump();
            if node.stopping() {
                return Flow::Stop;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Flow::Go
    }

    /// The start barrier of the next batch (see the module
    /// documentation): the previous batch's figures settled, the release
    /// noted.
    fn release(&mut self) -> Result<(), super::node::Stopped> {
        let what = format!("every rank to set up batch {}", self.batch);
        let ends = self.ends();
        let armed = self
            .node()
            .meet(&what, Up::Arrived(ends), false, |acc| match acc {
                Up::Arrived(e) => Down::Armed(e.first_ns),
                _ => Down::Armed(None),
            })?;
        if let Down::Armed(first) = armed {
            self.settle(first);
        }
        let node = self.node.clone();
        let mut node = node.lock().unwrap_or_else(|e| e.into_inner());
        let offset = node.offset();
        let go = node.meet("the release", Up::Spinning, true, |_| Down::Go {
            t0: mono_ns(),
        })?;
        let release_mono = mono_ns();
        self.cur.release = Some(Instant::now());
        self.cur.release_mono = release_mono;
        if let Down::Go { t0 } = go {
            self.cur.lag_ns = release_mono as i64 + offset - t0 as i64;
        }
        node.set_during(&format!("during phase {}", self.batch));
        Ok(())
    }

    /// Rank 0 keeps the other ranks' summed counters for its progress
    /// line; the others send theirs with their children's up.
    fn rates(&mut self, live: &Live<'_>, node: &Node) {
        let now = Instant::now();
        let below = node.children_rates(self.batch);
        if node.rank() == 0 {
            for d in 0..3 {
                self.remote.bytes[d].store(below.bytes[d], Ordering::Relaxed);
                self.remote.ios[d].store(below.ios[d], Ordering::Relaxed);
            }
        } else if self.cur.last_rate.is_none_or(|t| now - t >= RATE) {
            self.cur.last_rate = Some(now);
            let mut c = self.counters(live);
            c.add(&below);
            node.send_rate(self.batch, c);
        }
    }

    /// The batch's last clone has ended: its end is that clone's own end.
    fn note_done(&mut self, live: &Live<'_>) {
        if self.cur.done_ns.is_some() || !self.cur.clones.iter().all(|&i| live.finished(i)) {
            return;
        }
        let last = self
            .cur
            .clones
            .iter()
            .filter_map(|&i| live.ended_ns(i))
            .max()
            .unwrap_or_else(mono_ns);
        let t_ns = last.saturating_sub(self.cur.release_mono);
        let c = self.counters(live);
        self.cur.samples.retain(|s| s.t_ns < t_ns);
        self.cur.samples.push(Sample { t_ns, c });
        self.cur.done_ns = Some(t_ns);
        if self.stonewall {
            self.node().done(self.batch);
        }
    }
}

impl SessionHooks for Hooks {
    fn safety_verdict(&mut self, jobs: &[JobSpec], mine: Result<(), RunError>) -> Verdict {
        let rank = self.place.0;
        let refusal = mine.as_ref().err().map(|e| e.to_string());
        let up = Up::Verdicts(Verdicts::of(
            rank,
            refusal,
            Some(crate::run::plan::structure(jobs)),
        ));
        let hosts = super::hosts_of(&self.node());
        let answer = self.node().meet("the safety checks", up, false, |acc| {
            Down::Verdict(match acc {
                Up::Verdicts(v) => super::refusal_text(&v, &hosts, "no rank started"),
                _ => None,
            })
        });
        match answer {
            Ok(Down::Verdict(None)) => mine.map_or_else(Verdict::Refused, |()| Verdict::Go),
            Ok(Down::Verdict(Some(text))) if rank == 0 => Verdict::Refused(RunError::Verdict(text)),
            _ if rank == 0 && self.node().stopping() => {
                Verdict::Refused(RunError::Verdict(super::stop_text(&self.node())))
            }
            _ => Verdict::RefusedElsewhere,
        }
    }

    fn before_layout(&mut self, plan: &Plan, batch: &[usize]) -> Flow {
        self.planned = plan.phases();
        // A file shared by ranks is laid out by rank 0 first; files of
        // their own the ranks lay out at once.
        if self.node().rank() != 0 && shares(plan, batch) {
            return self.rank_0_laid_out();
        }
        self.flow()
    }

    fn after_layout(&mut self, plan: &Plan, batch: &[usize]) -> Flow {
        if self.node().rank() == 0 && shares(plan, batch) {
            return self.rank_0_laid_out();
        }
        self.flow()
    }

    fn before_start(&mut self, plan: &Plan, clones: &[usize], gate: &StartGate) -> Flow {
        self.close_batch();
        self.batch += 1;
        if self.set_up(clones, gate) == Flow::Stop {
            return Flow::Stop;
        }
        let ramp_us = clones
            .iter()
            .map(|&i| plan.jobs[i].spec.time.ramp_time_us)
            .max();
        self.cur = Batch {
            number: self.batch,
            clones: clones.to_vec(),
            ramp_ms: ramp_us.unwrap_or(0) / 1000,
            every: SAMPLE,
            // Nothing is done before the gate opens.
            samples: vec![Sample::default()],
            ..Batch::default()
        };
        for d in 0..3 {
            self.remote.bytes[d].store(0, Ordering::Relaxed);
            self.remote.ios[d].store(0, Ordering::Relaxed);
        }
        match self.release() {
            Ok(()) => Flow::Go,
            Err(_) => {
                self.cur.release = None;
                Flow::Stop
            }
        }
    }

    fn tick(&mut self, live: &Live<'_>) {
        if self.node().stopping() && !self.interrupted {
            self.interrupted = true;
            self.cur.interrupted = true;
            live.interrupt();
        }
        let Some(_) = self.cur.release else {
            return;
        };
        let now = Instant::now();
        if self.cur.done_ns.is_none()
            && self
                .cur
                .last_sample
                .is_none_or(|t| now - t >= self.cur.every.max(SAMPLE))
        {
            self.cur.last_sample = Some(now);
            self.sample(live);
        }
        self.note_done(live);
        let node = self.node.clone();
        let node = node.lock().unwrap_or_else(|e| e.into_inner());
        node.pump();
        self.rates(live, &node);
        if self.stonewall && !self.cur.first_seen && node.first_done(self.batch) {
            self.cur.first_seen = true;
            for &i in &self.cur.clones {
                if !live.finished(i) {
                    live.stop(i);
                }
            }
        }
    }

    fn finish(&mut self, result: &mut RunResult) {
        if self.batch < self.planned {
            // Ended early here (exitall): the others, waiting at the next
            // batch's barrier, end theirs too.
            self.node().ended_early();
        }
        if self.node().stopping() || result.interrupted {
            self.cur.interrupted = true;
        }
        self.close_batch();
        if self.node().stopping() {
            self.settle(None);
        } else {
            let ends = self.ends();
            let first = self.node().meet(
                "every rank to end its last batch",
                Up::Ends(ends),
                false,
                |acc| {
                    Down::Ends(match acc {
                        Up::Ends(e) => e.first_ns,
                        _ => None,
                    })
                },
            );
            match first {
                Ok(Down::Ends(f)) => self.settle(f),
                _ => self.settle(None),
            }
        }
        let phases = std::mem::take(&mut self.phases);
        let mine = Gathered::of_rank(result, self.place, phases, self.detail);
        let got = self.node().gather_results(mine, self.condense);
        if let Some(g) = got {
            *self.link.gathered.lock().unwrap_or_else(|e| e.into_inner()) = Some(g);
        }
    }
}

impl Hooks {
    /// Go on unless the ranks stop.
    fn flow(&self) -> Flow {
        if self.node().stopping() {
            Flow::Stop
        } else {
            Flow::Go
        }
    }

    /// The meeting after rank 0's layout of shared files.
    fn rank_0_laid_out(&mut self) -> Flow {
        let what = format!(
            "rank 0 to lay out the shared files of batch {}",
            self.batch + 1
        );
        match self.node().meet(&what, Up::Empty, false, |_| Down::Empty) {
            Ok(_) => Flow::Go,
            Err(_) => Flow::Stop,
        }
    }
}

/// Whether a clone of `batch` uses a file another rank uses too.
fn shares(plan: &Plan, batch: &[usize]) -> bool {
    batch
        .iter()
        .any(|&i| plan.jobs[i].files.iter().any(|f| f.shared))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_phase_keeps_a_bounded_even_record_with_its_ends() {
        // A 2,000 s phase, sampled as `tick` does: every `every`.
        let (mut s, mut every) = (Vec::new(), SAMPLE);
        let mut last: Option<u64> = None;
        let ms = 1_000_000;
        for t in 0..100_000u64 {
            let t_ns = t * 20 * ms;
            if last.is_some_and(|l| t_ns - l < every.as_nanos() as u64) && t != 99_999 {
                continue;
            }
            last = Some(t_ns);
            s.push(Sample {
                t_ns,
                c: Counters {
                    bytes: [t * 4096, 0, 0],
                    ios: [t, 0, 0],
                },
            });
            thin(&mut s, &mut every);
            assert!(s.len() <= MAX_SAMPLES);
        }
        assert_eq!(s[0].t_ns, 0);
        assert_eq!(s.last().unwrap().t_ns, 99_999 * 20 * ms);
        assert!(s.len() > MAX_SAMPLES / 2, "{}", s.len());
        let gaps: Vec<u64> = s.windows(2).map(|w| w[1].t_ns - w[0].t_ns).collect();
        assert!(gaps.iter().all(|&g| g > 0));
        let max = *gaps.iter().max().unwrap();
        assert!(max <= every.as_nanos() as u64, "{max} > {every:?}");
        // Counts read between samples stay exact for a steady rate.
        assert_eq!(at(&s, 1_000_000 * ms).ios[0], 50_000);
    }

    fn batch(lag_ns: i64, ramp_ms: u64, points: &[(u64, u64)]) -> Batch {
        let ms = 1_000_000;
        Batch {
            number: 1,
            clones: vec![0],
            lag_ns,
            ramp_ms,
            samples: points
                .iter()
                .map(|&(t, n)| Sample {
                    t_ns: t * ms,
                    c: Counters {
                        bytes: [n * 4096, 0, 0],
                        ios: [n, 0, 0],
                    },
                })
                .collect(),
            done_ns: points.last().map(|p| p.0 * ms),
            release: Some(Instant::now()),
            ..Batch::default()
        }
    }

    #[test]
    fn figures_count_from_the_ramp_to_the_first_end_on_the_common_clock() {
        let ms = 1_000_000;
        // Rank a: 100 I/Os in 1 s; rank b left the barrier 100 ms late
        // and did 40 by 1 s after its own release.
        let a = batch(0, 0, &[(0, 0), (500, 50), (1000, 100)]);
        let b = batch(100 * ms as i64, 0, &[(0, 0), (1000, 40), (2000, 100)]);
        let mut sum = a.sum(Some(1000 * ms));
        sum.absorb(&b.sum(Some(1000 * ms)));
        assert_eq!(sum.first_done_ns, Some(1000 * ms));
        assert_eq!(sum.last_done_ns, Some(2100 * ms));
        // Rank a all its 100; rank b 36 by 0.9 s of its own time.
        assert_eq!(sum.all_running.unwrap().ios[0], 136);
        assert_eq!(sum.until_last.ios[0], 200);
        let f = sum.figures();
        assert_eq!(f.start_skew_ns, 100 * ms);
        assert_eq!(f.ranks, 2);
        // With a ramp of 500 ms, what came before is not counted.
        let a = batch(0, 500, &[(0, 0), (500, 50), (1000, 100)]);
        assert_eq!(a.sum(Some(1000 * ms)).all_running.unwrap().ios[0], 50);
        // Unknown first end (a stop): no figure while all ran.
        assert_eq!(a.sum(None).all_running, None);
    }
}
