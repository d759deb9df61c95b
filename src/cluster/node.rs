//! One rank's end of the ranks' meetings, and the thread that watches
//! its neighbours.
//!
//! **Meetings** ([`Node::meet`]): each rank sends its contribution up the
//! tree once its children's are merged in; rank 0 decides an answer, and
//! the answer comes back down, each rank forwarding it to its children as
//! soon as it arrives. Waiting is polling with short sleeps (or none, for
//! the release from a start barrier), never a blocking call.
//!
//! **Watching** (one thread per rank, every 5 ms): it receives whatever
//! has arrived (so forwarding never waits for the main thread, however
//! busy), sends a heartbeat twice a second to the rank's tree neighbours,
//! and checks how long each neighbour has been silent. A neighbour silent
//! for longer than `--mpi-timeout` is lost: the ranks stop ([`Stop`],
//! sent to rank 0 and down the tree). When rank 0 itself is lost, a rank
//! that finds it so names it and ends every rank at once (nobody is left
//! to report). A neighbour on this rank's host whose process is gone (a
//! rank killed or crashed) is lost at once, not after the timeout: Open
//! MPI's launcher ends every rank about 2 s after one dies (SIGTERM after
//! 1 s, SIGKILL a second later), and the report must be written by then.
//! A stop signal on any rank stops every rank the same way.
//!
//! **Stopping**: every meeting in progress ends with [`Stopped`]; each
//! rank sends what it measured up the tree (a lost rank's children to
//! its nearest live ancestor) by a deadline that is shorter the deeper
//! the rank, so rank 0 has what it can get 650 ms after the stop and
//! reports it, naming the ranks it misses. With a lost rank, rank 0 then
//! ends every rank (the lost one cannot leave MPI by itself): it tells
//! the live ranks to leave, each first ending a lost rank of its own host
//! (a stopped process, which the launcher would wait seconds to kill),
//! and aborts; if its report is not written 0.9 s after the stop, its
//! watch thread ends them all anyway (and says so; not once the report
//! is written). A rank that was itself stopped past
//! the timeout leaves as soon as it resumes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::merge::{Counters, Gathered};
use super::msg::{self, Cause, Down, Key, Lost, Msg, Stop, Up};
use super::transport::Transport;
use super::tree::{Hosts, RankSet, Tree};
use crate::run::clock::mono_ns;
use crate::run::{output, signals};

/// Heartbeat period.
const BEAT: Duration = Duration::from_millis(500);
/// How often the watch thread looks.
const WATCH: Duration = Duration::from_millis(5);
/// How long after a stop rank 0 waits for results.
const STOP_BUDGET: Duration = Duration::from_millis(650);
/// ... and each level of the tree less than its parent.
const STOP_STEP: Duration = Duration::from_millis(100);
/// When rank 0's watch thread ends every rank after a lost rank, whatever
/// its main thread is doing.
const HARD_STOP: Duration = Duration::from_millis(900);

/// The ranks are stopping (see [`Node::stop`] for why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped;

/// What the watch thread and the main thread share.
pub(crate) struct Shared {
    t: Arc<dyn Transport>,
    pub rank: u32,
    timeout: Duration,
    hostname: String,
    st: Mutex<State>,
    stopping: AtomicBool,
    quit: AtomicBool,
    /// This process itself was stopped for longer than half the timeout
    /// (and has resumed): the others have likely given up on it.
    stalled: AtomicBool,
    /// The run is ending (the end was sent or received): ranks leave
    /// from now on, which is not a loss.
    ending: AtomicBool,
    /// When this rank last looked for neighbours whose process is gone.
    last_gone_look: Mutex<Instant>,
}

/// Rank 0's report is written (see [`report_written`]).
static REPORT_WRITTEN: AtomicBool = AtomicBool::new(false);

/// Rank 0 has written its report: a stop after this does not say it
/// could not be.
pub fn report_written() {
    REPORT_WRITTEN.store(true, Ordering::SeqCst);
}

/// How often a rank looks whether its host's neighbours still live.
const GONE_LOOK: Duration = Duration::from_millis(100);

struct State {
    tree: Tree,
    hosts: Option<Arc<Hosts>>,
    /// Every rank's process id (by rank).
    pids: Vec<u32>,
    heard: Vec<Instant>,
    ups: HashMap<(Key, u32), Up>,
    downs: HashMap<Key, Down>,
    /// Each child's latest counters: (batch, counters).
    rates: HashMap<u32, (u32, Counters)>,
    /// Batches whose end was sent up (`Done`) or, on rank 0, whose first
    /// finisher is known (`first`).
    done_sent: HashSet<u32>,
    first: HashSet<u32>,
    stop: Option<(Stop, Instant)>,
    pongs: Vec<(u64, u64, u64)>,
    offset: Option<i64>,
    /// What the ranks are doing, for messages (`during phase 2`).
    during: String,
    /// This rank's results as last sent up, and to whom.
    results_sent: Option<(u32, Vec<u8>)>,
    last_beat: Instant,
    /// The watch thread's last look.
    last_look: Instant,
    /// Time spent decoding and merging results (rank 0's merge cost).
    merge_ns: u64,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, to: u32, m: &Msg) {
        self.t.send(to, msg::encode(m));
    }

    fn send_bytes(&self, to: &[u32], bytes: &[u8]) {
        for &c in to {
            self.t.send(c, bytes.to_vec());
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Every rank's host, once known.
    pub fn hosts(&self) -> Arc<Hosts> {
        self.state().hosts.clone().unwrap_or_default()
    }

    /// Handles everything that has arrived.
    pub fn pump(&self) {
        while let Some((from, bytes)) = self.t.poll() {
            let t0 = Instant::now();
            // Bytes that are not a message of this iomark are dropped: a
            // rank that sends only such falls silent and is named.
            if let Ok(m) = msg::decode(&bytes) {
                let mut st = self.state();
                if matches!(m, Msg::Up(_, Up::Results(_))) {
                    st.merge_ns += t0.elapsed().as_nanos() as u64;
                }
                if let Some(h) = st.heard.get_mut(from as usize) {
                    *h = Instant::now();
                }
                self.handle(&mut st, from, m, &bytes);
            }
        }
    }

    fn handle(&self, st: &mut State, from: u32, m: Msg, bytes: &[u8]) {
        match m {
            Msg::Beat => {}
            Msg::Up(key, up) => {
                st.ups.insert((key, from), up);
            }
            Msg::Down(key, down) => {
                if matches!(down, Down::Bye { .. } | Down::End { .. }) {
                    self.ending.store(true, Ordering::SeqCst);
                }
                // Down the tree at once: the release of a barrier must
                // not wait for this rank's main thread.
                let kids = st.tree.live_children(self.rank, &lost_of(st));
                self.send_bytes(&kids, bytes);
                if let Down::End { code } = down {
                    self.end_lost_peers(st);
                    self.leave(code);
                }
                st.downs.insert(key, down);
            }
            Msg::Rate { batch, counters } => {
                st.rates.insert(from, (batch, counters));
            }
            Msg::Done { batch } => self.done(st, batch),
            Msg::First { batch } => {
                if st.first.insert(batch) {
                    let kids = st.tree.live_children(self.rank, &lost_of(st));
                    self.send_bytes(&kids, bytes);
                }
            }
            Msg::Stop(s) => self.stop_with(st, s),
            Msg::Ping { t } => self.send(from, &Msg::Pong { t, at: mono_ns() }),
            Msg::Pong { t, at } => st.pongs.push((t, at, mono_ns())),
            Msg::Offset { ns } => st.offset = Some(ns),
        }
    }

    /// A rank of this subtree (or this rank) finished `batch`: rank 0
    /// tells every rank the first is done; the others tell their parent,
    /// once per batch.
    fn done(&self, st: &mut State, batch: u32) {
        if self.rank == 0 {
            if st.first.insert(batch) {
                let kids = st.tree.live_children(0, &lost_of(st));
                for k in kids {
                    self.send(k, &Msg::First { batch });
                }
            }
        } else if st.done_sent.insert(batch) {
            if let Some(p) = st.tree.live_parent(self.rank, &lost_of(st)) {
                self.send(p, &Msg::Done { batch });
            }
        }
    }

    /// Takes in a stop: the first cause stays, lost ranks add up. New
    /// news goes down the tree (and, from a rank below, to rank 0).
    fn stop_with(&self, st: &mut State, s: Stop) {
        let before = st.stop.as_ref().map(|(x, _)| x.lost.len());
        match &mut st.stop {
            Some((have, _)) => {
                for l in s.lost {
                    if !have.lost.iter().any(|x| x.rank == l.rank) {
                        have.lost.push(l);
                    }
                }
            }
            None => st.stop = Some((s, Instant::now())),
        }
        self.stopping.store(true, Ordering::SeqCst);
        let after = st.stop.as_ref().map(|(x, _)| x.lost.len());
        if before == after {
            return;
        }
        let Some((stop, _)) = st.stop.clone() else {
            return;
        };
        let lost = stop.lost_ranks();
        // Ranks this one now hangs below, or that now hang below it, have
        // not been heard from as neighbours: their silence counts from now.
        let now = Instant::now();
        let mut near = st.tree.live_children(self.rank, &lost);
        near.extend(st.tree.live_parent(self.rank, &lost));
        for r in near {
            if let Some(h) = st.heard.get_mut(r as usize) {
                *h = (*h).max(now);
            }
        }
        let m = Msg::Stop(stop);
        if self.rank != 0 && !lost.contains(0) {
            self.send(0, &m);
        }
        for k in st.tree.live_children(self.rank, &lost) {
            self.send(k, &m);
        }
        // Results sent to a rank now lost go to the nearest live one.
        if let Some((to, bytes)) = &st.results_sent {
            if lost.contains(*to) {
                if let Some(p) = st.tree.live_parent(self.rank, &lost) {
                    self.t.send(p, bytes.clone());
                    st.results_sent = Some((p, bytes.clone()));
                }
            }
        }
    }

    /// Ends the lost ranks of this host (stopped processes, which only a
    /// kill ends): the launcher would wait seconds before killing them.
    fn end_lost_peers(&self, st: &State) {
        let Some(hosts) = &st.hosts else {
            return;
        };
        let here = hosts.host_of(self.rank);
        let me = std::fs::read_link("/proc/self/exe").ok();
        for r in lost_of(st).iter().filter(|&r| hosts.host_of(r) == here) {
            let Some(&pid) = st.pids.get(r as usize) else {
                continue;
            };
            // Still this program (not a process that took the pid since).
            if me.is_some() && std::fs::read_link(format!("/proc/{pid}/exe")).ok() == me {
                // SAFETY: kill(2) on the process of a lost rank of this run.
                // (MPI runs are Linux's: /proc names the program.)
                #[cfg(unix)]
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL)
                };
                #[cfg(not(unix))]
                let _ = pid;
            }
        }
    }

    /// Leaves at once (its messages sent, its test files removed): rank
    /// 0 is ending every rank, or gave up on this one.
    fn leave(&self, code: i32) -> ! {
        let t0 = Instant::now();
        while self.t.sending() > 0 && t0.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(1));
        }
        signals::clean_up_now();
        let _ = output::finish_stdout();
        std::process::exit(code)
    }

    /// This rank starts a stop.
    pub fn stop(&self, cause: Cause) {
        let lost = match &cause {
            Cause::Lost(l) => vec![l.clone()],
            Cause::Signal { .. } | Cause::Ended { .. } => Vec::new(),
        };
        let mut st = self.state();
        self.stop_with(&mut st, Stop { cause, lost });
    }

    fn stop_on_signal(&self) {
        if !self.stopping() && signals::received() {
            self.stop(Cause::Signal {
                rank: self.rank,
                host: self.hostname.clone(),
                signal: signals::which(),
            });
        }
    }

    /// One look of the watch thread.
    fn watch(&self) {
        {
            let mut st = self.state();
            // This process itself was stopped (and has just resumed): the
            // silence it sees is its own, nobody else's.
            let gap = st.last_look.elapsed();
            if gap > self.timeout / 2 {
                let now = Instant::now();
                st.heard.iter_mut().for_each(|h| *h = now);
                self.stalled.store(true, Ordering::SeqCst);
            }
            st.last_look = Instant::now();
            if gap > self.timeout + BEAT {
                // Silent past the timeout: the others have gone on
                // without this rank.
                drop(st);
                output::stderr_line(&format!(
                    "iomark: rank {}: this rank was stopped for {} s; the other ranks went on without it",
                    self.rank,
                    gap.as_secs()
                ));
                self.leave(1);
            }
        }
        self.pump();
        self.leave_on_teardown();
        self.stop_on_signal();
        let (neighbours, lost_now) = {
            let mut st = self.state();
            let lost = lost_of(&st);
            let mut n = st.tree.live_children(self.rank, &lost);
            n.extend(st.tree.live_parent(self.rank, &lost));
            if st.last_beat.elapsed() >= BEAT {
                st.last_beat = Instant::now();
                for &r in &n {
                    self.send(r, &Msg::Beat);
                }
            }
            let silent: Vec<(u32, Duration)> = n
                .iter()
                .map(|&r| (r, st.heard[r as usize].elapsed()))
                .filter(|(_, d)| *d > self.timeout)
                .collect();
            let lost_now: Vec<Lost> = silent
                .into_iter()
                .map(|(r, d)| Lost {
                    rank: r,
                    host: st
                        .hosts
                        .as_ref()
                        .map_or("?".into(), |h| h.name_of(r).to_string()),
                    secs: d.as_secs(),
                    during: st.during.clone(),
                    gone: false,
                })
                .collect();
            (n, lost_now)
        };
        let lost_now = if lost_now.is_empty() {
            self.gone_neighbours(&neighbours)
        } else {
            lost_now
        };
        for l in lost_now {
            if l.rank == 0 {
                self.rank_0_lost(l);
            }
            self.stop(Cause::Lost(l));
        }
        self.hard_stop();
    }

    /// The neighbours of this rank's host (of `near`) whose process is
    /// gone: a rank killed, or crashed, is known at once by the ranks of
    /// its host (the launcher reaps it), not only after the timeout.
    /// Looked at every [`GONE_LOOK`] until the ranks stop (the ranks
    /// leave from then on, once their results are sent) or the run ends.
    fn gone_neighbours(&self, near: &[u32]) -> Vec<Lost> {
        if self.stopping() || self.ending.load(Ordering::SeqCst) {
            return Vec::new();
        }
        {
            let mut last = self
                .last_gone_look
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.elapsed() < GONE_LOOK {
                return Vec::new();
            }
            *last = Instant::now();
        }
        let st = self.state();
        let Some(hosts) = &st.hosts else {
            return Vec::new();
        };
        let here = hosts.host_of(self.rank);
        let Some(me) = std::fs::read_link("/proc/self/exe").ok() else {
            return Vec::new();
        };
        near.iter()
            .filter(|&&r| hosts.host_of(r) == here)
            .filter_map(|&r| {
                let pid = *st.pids.get(r as usize)?;
                // Gone: no such process, a zombie (no program any more),
                // or another program that took its pid.
                let alive =
                    std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == me);
                (!alive).then(|| Lost {
                    rank: r,
                    host: hosts.name_of(r).to_string(),
                    secs: 0,
                    during: st.during.clone(),
                    gone: true,
                })
            })
            .collect()
    }

    /// Rank 0 is lost: nobody is left to report. Says who, tells the
    /// ranks it can reach (so that they leave at once when the launcher
    /// ends them), and ends every rank.
    fn rank_0_lost(&self, l: Lost) -> ! {
        output::stderr_line(&format!(
            "iomark: rank {}: {l}; stopping every rank",
            self.rank
        ));
        let lost = RankSet::one(0);
        let near = {
            let st = self.state();
            let mut n = st.tree.live_children(0, &lost);
            n.extend(st.tree.live_children(self.rank, &lost));
            n
        };
        let m = Msg::Stop(Stop {
            cause: Cause::Lost(l.clone()),
            lost: vec![l],
        });
        for r in near.into_iter().filter(|&r| r != self.rank) {
            self.send(r, &m);
        }
        let t0 = Instant::now();
        while self.t.sending() > 0 && t0.elapsed() < Duration::from_millis(50) {
            std::thread::sleep(Duration::from_millis(1));
        }
        signals::clean_up_now();
        self.t.abort(1)
    }

    /// The launcher is ending the ranks (a stop signal after one of them
    /// was lost, or after this one was stopped): leave at once, rather
    /// than be killed a second later. Rank 0 stays to write its report,
    /// unless it is the one that was stopped.
    fn leave_on_teardown(&self) {
        if !signals::received() {
            return;
        }
        let lost = self
            .state()
            .stop
            .as_ref()
            .is_some_and(|(s, _)| !s.lost.is_empty());
        if self.stalled.load(Ordering::SeqCst) || lost && self.rank != 0 {
            signals::clean_up_now();
            std::process::exit(signals::exit_code().unwrap_or(1));
        }
    }

    /// Rank 0, a rank lost: every rank ends `HARD_STOP` after the stop,
    /// report written or not.
    fn hard_stop(&self) {
        if self.rank != 0 {
            return;
        }
        let late = {
            let st = self.state();
            match &st.stop {
                Some((s, at))
                    if !s.lost.is_empty()
                        && at.elapsed() > HARD_STOP
                        && !REPORT_WRITTEN.load(Ordering::SeqCst) =>
                {
                    Some(s.cause.clone())
                }
                _ => None,
            }
        };
        if let Some(cause) = late {
            output::stderr_line(&format!(
                "iomark: rank 0: {cause}; the report could not be written in time; stopping every rank"
            ));
            signals::clean_up_now();
            self.t.abort(1);
        }
    }
}

fn lost_of(st: &State) -> RankSet {
    st.stop
        .as_ref()
        .map(|(s, _)| s.lost_ranks())
        .unwrap_or_default()
}

/// See the module documentation.
pub(crate) struct Node {
    sh: Arc<Shared>,
    watcher: Option<std::thread::JoinHandle<()>>,
    seq: u32,
    /// Sessions run so far (each one's results are one meeting).
    pub session: u32,
}

impl Node {
    /// A rank's node over `t`, meeting along the tree of rank numbers
    /// until the hosts are known; its watch thread runs.
    pub fn new(t: Arc<dyn Transport>, timeout: Duration, hostname: String) -> Node {
        let (rank, size) = (t.rank(), t.size());
        let now = Instant::now();
        let sh = Arc::new(Shared {
            t,
            rank,
            timeout,
            hostname,
            st: Mutex::new(State {
                tree: Tree::by_rank(size),
                hosts: None,
                pids: Vec::new(),
                heard: vec![now; size as usize],
                ups: HashMap::new(),
                downs: HashMap::new(),
                rates: HashMap::new(),
                done_sent: HashSet::new(),
                first: HashSet::new(),
                stop: None,
                pongs: Vec::new(),
                offset: None,
                during: "while the ranks started".into(),
                results_sent: None,
                last_beat: now - BEAT,
                last_look: now,
                merge_ns: 0,
            }),
            stopping: AtomicBool::new(false),
            quit: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            ending: AtomicBool::new(false),
            last_gone_look: Mutex::new(now),
        });
        let w = sh.clone();
        let watcher = std::thread::Builder::new()
            .name("iomark:watch".into())
            .spawn(move || {
                while !w.quit.load(Ordering::SeqCst) {
                    w.watch();
                    std::thread::sleep(WATCH);
                }
            })
            .ok();
        Node {
            sh,
            watcher,
            seq: 0,
            session: 0,
        }
    }

    pub fn rank(&self) -> u32 {
        self.sh.rank
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.sh
    }

    /// Meets along the tree of `hosts` from now on (`pids`: every rank's
    /// process id).
    pub fn use_hosts(&self, hosts: Arc<Hosts>, pids: Vec<u32>) {
        let mut st = self.sh.state();
        st.tree = Tree::by_host(&hosts);
        st.hosts = Some(hosts);
        st.pids = pids;
        let now = Instant::now();
        st.heard.iter_mut().for_each(|h| *h = now);
    }

    /// What the ranks are doing, for the message naming a lost rank.
    pub fn set_during(&self, what: &str) {
        self.sh.state().during = what.to_string();
    }

    pub fn stopping(&self) -> bool {
        self.sh.stopping()
    }

    /// Why the ranks stop, when they do, and every rank found lost.
    pub fn stop(&self) -> Option<Stop> {
        self.sh.state().stop.as_ref().map(|(s, _)| s.clone())
    }

    /// Waits, polling, until `take` finds what it looks for; ends when
    /// the ranks stop (unless `through_stop`). `spin`: never sleeps.
    fn wait<T>(
        &self,
        spin: bool,
        through_stop: bool,
        mut take: impl FnMut(&mut State) -> Option<T>,
    ) -> Result<T, Stopped> {
        let mut pause = Duration::from_micros(20);
        loop {
            self.sh.pump();
            if let Some(v) = take(&mut self.sh.state()) {
                return Ok(v);
            }
            self.sh.stop_on_signal();
            if self.sh.stopping() && !through_stop {
                return Err(Stopped);
            }
            if spin {
                std::thread::yield_now();
            } else {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }
    }

    /// One meeting (see the module documentation): every rank gives
    /// `mine`; rank 0 `decide`s the answer from all of them merged;
    /// every rank returns it.
    pub fn meet(
        &mut self,
        what: &str,
        mine: Up,
        spin: bool,
        decide: impl FnOnce(Up) -> Down,
    ) -> Result<Down, Stopped> {
        self.seq += 1;
        let key = Key::Meeting(self.seq);
        self.set_during(&format!("while the ranks waited for {what}"));
        let kids = {
            let st = self.sh.state();
            st.tree.live_children(self.rank(), &lost_of(&st))
        };
        let mut acc = mine;
        let mut left = kids;
        while !left.is_empty() {
            let got: Vec<(u32, Up)> = self.wait(spin, false, |st| {
                let got: Vec<(u32, Up)> = left
                    .iter()
                    .filter_map(|c| st.ups.remove(&(key, *c)).map(|u| (*c, u)))
                    .collect();
                (!got.is_empty()).then_some(got)
            })?;
            left.retain(|c| !got.iter().any(|(g, _)| g == c));
            for (_, up) in got {
                acc.absorb(up);
            }
        }
        if self.rank() == 0 {
            let d = decide(acc);
            self.down(key, &d);
            return Ok(d);
        }
        self.up(key, acc);
        self.wait(spin, false, |st| st.downs.remove(&key))
    }

    /// This session's results, merged up the tree: rank 0 gets every
    /// rank's it can (`Some`), the others send theirs (`None`). Waits as
    /// long as the children live; once the ranks stop, until the
    /// deadline of this rank's depth (see the module documentation).
    pub fn gather_results(&mut self, mine: Gathered, condense: bool) -> Option<Gathered> {
        self.session += 1;
        let key = Key::Results(self.session);
        self.set_during("while the ranks sent their results");
        let mut acc = mine;
        let mut covered = acc.ranks();
        let mut pause = Duration::from_micros(50);
        loop {
            self.sh.pump();
            self.sh.stop_on_signal();
            let (arrived, left, deadline) = {
                let mut st = self.sh.state();
                let lost = lost_of(&st);
                let kids = st.tree.live_children(self.rank(), &lost);
                // Whoever sends this rank results for this session: a
                // child, or a lost child's child.
                let from: Vec<u32> = st
                    .ups
                    .keys()
                    .filter(|(k, _)| *k == key)
                    .map(|(_, r)| *r)
                    .collect();
                let arrived: Vec<Up> = from
                    .iter()
                    .filter_map(|r| st.ups.remove(&(key, *r)))
                    .collect();
                let depth = st.tree.depth(self.rank());
                let deadline = st.stop.as_ref().map(|(_, at)| {
                    *at + STOP_BUDGET
                        .saturating_sub(STOP_STEP * depth)
                        .max(Duration::from_millis(150))
                });
                (arrived, kids, deadline)
            };
            let t0 = Instant::now();
            for up in arrived {
                if let Up::Results(g) = up {
                    // Sent twice (resent after a stop): counted once.
                    acc.absorb_new(&mut covered, *g);
                }
            }
            self.sh.state().merge_ns += t0.elapsed().as_nanos() as u64;
            if left.iter().all(|c| covered.contains(*c)) {
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
        if self.rank() == 0 {
            return Some(acc);
        }
        let other_host = {
            let st = self.sh.state();
            let parent = st.tree.live_parent(self.rank(), &lost_of(&st));
            match (&st.hosts, parent) {
                (Some(h), Some(p)) => h.host_of(p) != h.host_of(self.rank()),
                _ => true,
            }
        };
        if condense && other_host {
            // Past `--mpi-host-detail` hosts: every host in brief from
            // here up (a host's ranks merged whole at its leader first).
            acc.condense();
        }
        let bytes = msg::encode(&Msg::Up(key, Up::Results(Box::new(acc))));
        let mut st = self.sh.state();
        if let Some(p) = st.tree.live_parent(self.rank(), &lost_of(&st)) {
            self.sh.t.send(p, bytes.clone());
            st.results_sent = Some((p, bytes));
        }
        None
    }

    /// The end of the run, with its exit code: rank 0 sends it down, the
    /// others wait for it (as long as rank 0 lives) and return it.
    pub fn bye(&mut self, code: i32) -> i32 {
        self.sh.ending.store(true, Ordering::SeqCst);
        if self.rank() == 0 {
            self.down(Key::Bye, &Down::Bye { code });
            return self.flushed(code);
        }
        self.set_during("while rank 0 wrote its reports");
        let lost = self.stop().is_some_and(|s| !s.lost.is_empty());
        let bye = self.wait(false, true, |st| {
            // The launcher ends the ranks (after rank 0 ended them all,
            // or on a second signal): leave now.
            if signals::received() && lost || signals::hurry() {
                signals::clean_up_now();
                std::process::exit(signals::exit_code().unwrap_or(1));
            }
            st.downs.remove(&Key::Bye)
        });
        match bye {
            Ok(Down::Bye { code }) => self.flushed(code),
            _ => self.flushed(code),
        }
    }

    /// Waits (at most a second) for this rank's messages to leave it.
    fn flushed(&self, code: i32) -> i32 {
        let t0 = Instant::now();
        while self.sh.t.sending() > 0 && t0.elapsed() < Duration::from_secs(1) {
            self.sh.pump();
            std::thread::sleep(Duration::from_millis(1));
        }
        code
    }

    /// Time this rank spent decoding and merging results (ns).
    pub fn merge_ns(&self) -> u64 {
        self.sh.state().merge_ns
    }

    /// Rank 0: ends every rank at once (a lost rank cannot leave MPI by
    /// itself): the live ones are told to leave, the launcher ends the
    /// others.
    pub fn end_all(&self, code: i32) -> ! {
        self.sh.ending.store(true, Ordering::SeqCst);
        self.sh.end_lost_peers(&self.sh.state());
        self.down(Key::Bye, &Down::End { code });
        let t0 = Instant::now();
        while self.sh.t.sending() > 0 && t0.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.sh.t.abort(code)
    }

    /// This rank's clock offset to rank 0's (ns to add), measured by its
    /// host's leader (`clocks`).
    pub fn offset(&self) -> i64 {
        self.sh.state().offset.unwrap_or(0)
    }

    /// Measures clock offsets (the second meeting): each host's leader
    /// (on a host other than rank 0's) asks rank 0 its time a few times
    /// and keeps the answer of the shortest round trip; it tells its
    /// host's ranks, which share its clock. Rank 0 spins meanwhile, so
    /// answers are prompt.
    pub fn clocks(&mut self, hosts: &Hosts) -> Result<(), Stopped> {
        let me = self.rank();
        let host = hosts.host_of(me);
        let leader = hosts.leader(host);
        if me == leader {
            let offset = if host == hosts.host_of(0) {
                0
            } else {
                self.ping_rank_0()?
            };
            self.sh.state().offset = Some(offset);
            for r in hosts.ranks[host].iter().filter(|&r| r != me) {
                self.sh.send(r, &Msg::Offset { ns: offset });
            }
        } else {
            self.wait(true, false, |st| st.offset)?;
        }
        self.meet("every rank to time its clock", Up::Empty, true, |_| {
            Down::Empty
        })
        .map(|_| ())
    }

    fn ping_rank_0(&self) -> Result<i64, Stopped> {
        let mut best: Option<(u64, i64)> = None;
        for _ in 0..6 {
            let t = mono_ns();
            self.sh.send(0, &Msg::Ping { t });
            let (t, at, back) = self.wait(true, false, |st| {
                let i = st.pongs.iter().position(|p| p.0 == t)?;
                Some(st.pongs.remove(i))
            })?;
            let rtt = back.saturating_sub(t);
            // Rank 0 read its clock half way through, on average.
            let offset = at as i64 - (t / 2 + back / 2) as i64;
            if best.is_none_or(|(r, _)| rtt < r) {
                best = Some((rtt, offset));
            }
        }
        Ok(best.map_or(0, |(_, o)| o))
    }

    /// This rank's counters of `batch` and its children's latest, summed;
    /// sent to its parent (the others' progress for rank 0's line).
    pub fn children_rates(&self, batch: u32) -> Counters {
        let st = self.sh.state();
        let mut c = Counters::default();
        for (b, x) in st.rates.values() {
            if *b == batch {
                c.add(x);
            }
        }
        c
    }

    pub fn send_rate(&self, batch: u32, counters: Counters) {
        let st = self.sh.state();
        if let Some(p) = st.tree.live_parent(self.rank(), &lost_of(&st)) {
            self.sh.send(p, &Msg::Rate { batch, counters });
        }
    }

    /// Every clone of this rank finished `batch` (`--mpi-stonewall`).
    pub fn done(&self, batch: u32) {
        let mut st = self.sh.state();
        self.sh.done(&mut st, batch);
    }

    /// Whether the first rank has finished `batch` (`--mpi-stonewall`).
    pub fn first_done(&self, batch: u32) -> bool {
        self.sh.pump();
        self.sh.state().first.contains(&batch)
    }

    /// Handles whatever has arrived.
    pub fn pump(&self) {
        self.sh.pump();
        self.sh.stop_on_signal();
    }

    /// This rank's run ended before its last batch: every rank ends its.
    pub fn ended_early(&self) {
        if !self.stopping() {
            self.sh.stop(Cause::Ended {
                rank: self.rank(),
                host: self.sh.hostname.clone(),
            });
        }
    }

    fn up(&self, key: Key, up: Up) {
        let st = self.sh.state();
        if let Some(p) = st.tree.live_parent(self.rank(), &lost_of(&st)) {
            self.sh.send(p, &Msg::Up(key, up));
        }
    }

    /// Rank 0: sends an answer down.
    fn down(&self, key: Key, d: &Down) {
        let st = self.sh.state();
        let bytes = msg::encode(&Msg::Down(key, d.clone()));
        let kids = st.tree.live_children(0, &lost_of(&st));
        self.sh.send_bytes(&kids, &bytes);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.sh.quit.store(true, Ordering::SeqCst);
        if let Some(h) = self.watcher.take() {
            let _ = h.join();
        }
    }
}
