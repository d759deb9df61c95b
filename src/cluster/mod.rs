//! One job list run on many hosts at once (MPI ranks): every rank runs the
//! whole job list on its host through the one run pipeline
//! (`run::session`), and the ranks meet at a few points:
//!
//! 1. **safety**: each rank's verdict is gathered on rank 0; one refusal
//!    anywhere stops every rank before any rank writes;
//! 2. **start of each batch** (the clones a stonewall phase starts): every
//!    rank lays out its files and sets its clones up, then all pass one
//!    barrier and open their start gates together;
//! 3. **the end**: each rank's results (counters and latency histograms,
//!    serialized exactly) are gathered on rank 0, which merges them and
//!    writes the reports (`report::cluster`).
//!
//! The meeting points are messages to and from rank 0 ([`Cluster::gather`],
//! [`Cluster::exchange`]), polled, never a blocking collective: a rank
//! that dies or hangs (sends nothing, not even the heartbeat a thread of
//! each rank sends twice a second) is named, with its host, after
//! `--mpi-timeout` seconds, and every rank stops instead of waiting for
//! ever.
//!
//! The transport is a trait: MPI point-to-point messages in the `mpi`
//! build (`mpi.rs`), in-process channels in tests (`local.rs`).

pub mod assemble;
pub mod command;
pub mod hooks;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Message tags.
pub const TAG_ARRIVE: i32 = 11;
pub const TAG_ANSWER: i32 = 12;
pub const TAG_BEAT: i32 = 13;
/// A rank's clones of a batch have all finished (to rank 0).
pub const TAG_DONE: i32 = 14;
/// The first rank has finished a batch: stop yours (from rank 0).
pub const TAG_FIRST: i32 = 15;
/// A rank's counters of the running batch (to rank 0, for its progress line).
pub const TAG_RATE: i32 = 16;

/// How a rank reaches the others. Implementations are thread safe: the
/// heartbeat thread sends while the main thread polls.
pub trait Transport: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Sends `data` to `to` (returns once the data is buffered).
    fn send(&self, to: u32, tag: i32, data: &[u8]);
    /// The next message that has arrived, if any: (from, tag, data).
    fn poll(&self) -> Option<(u32, i32, Vec<u8>)>;
    /// Stops every rank at once (after this rank has cleaned up).
    fn abort(&self, code: i32) -> !;
}

/// How long a rank may stay silent before the others give up on it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Heartbeat period.
const BEAT: Duration = Duration::from_millis(500);

/// Where this process stands among the ranks of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub rank: u32,
    pub ranks: u32,
    pub hostname: String,
    /// What this rank adds to the names of the logs it writes
    /// (`NAME.TAG`): its host, and its rank when the host runs several.
    /// Empty for a run on one host alone.
    pub tag: String,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            rank: 0,
            ranks: 1,
            hostname: String::new(),
            tag: String::new(),
        }
    }
}

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

/// Joins the MPI job this process is a rank of, when `--mpi` was given
/// or a launcher started it; `None` for a run on this host alone.
pub fn join(flag: bool, timeout_s: Option<u64>) -> Result<Option<Cluster>, String> {
    if !flag && !launched_by_mpi() {
        return Ok(None);
    }
    let timeout = timeout_s
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let c = join_mpi(timeout)?;
    // Logs and files of this rank: named apart, marked as this run's.
    crate::stats::logs::tag_logs(&c.place.tag);
    crate::run::safety::set_run_token(&c.token);
    Ok(Some(c))
}

#[cfg(feature = "mpi")]
fn join_mpi(timeout: Duration) -> Result<Cluster, String> {
    let t = mpi::Mpi::init()?;
    Cluster::new(Arc::new(t), timeout).map_err(|e| e.to_string())
}

#[cfg(not(feature = "mpi"))]
fn join_mpi(_timeout: Duration) -> Result<Cluster, String> {
    let under = if launched_by_mpi() {
        "started by an MPI launcher, but "
    } else {
        "--mpi: "
    };
    Err(format!("{under}{BUILD_HINT}"))
}

/// Why ranks could not meet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// A rank sent nothing for too long.
    #[error("rank {rank} (host {host}) sent nothing for {secs} s while the ranks waited for {what}; stopping every rank")]
    Silent {
        rank: u32,
        host: String,
        secs: u64,
        what: String,
    },
    /// A stop signal came while waiting.
    #[error("interrupted while the ranks waited for {0}")]
    Interrupted(String),
    /// Results that cannot be read.
    #[error("the results of rank {0} cannot be read: {1}")]
    Results(u32, String),
    /// A message that does not fit the protocol.
    #[error("rank {0} sent a malformed message while the ranks waited for {1}")]
    Malformed(u32, String),
}

/// This rank's end of the ranks' meetings. See the module documentation.
pub struct Cluster {
    t: Arc<dyn Transport>,
    pub place: Placement,
    /// Every rank's host name (known after [`Cluster::new`]).
    pub hosts: Vec<String>,
    /// This run's token, the same on every rank (rank 0 draws it): marks
    /// the files the run creates (`run::safety::set_run_token`).
    pub token: String,
    timeout: Duration,
    seq: u32,
    last_heard: Vec<Instant>,
    /// Arrivals and answers received before they were waited for.
    early: HashMap<(u32, i32, u32), Vec<u8>>,
    beating: Arc<AtomicBool>,
    beat_thread: Option<std::thread::JoinHandle<()>>,
}

impl Cluster {
    /// Joins the ranks behind `t`: starts the heartbeat and learns every
    /// rank's host name (the first meeting).
    pub fn new(t: Arc<dyn Transport>, timeout: Duration) -> Result<Cluster, ClusterError> {
        let rank = t.rank();
        let size = t.size();
        let beating = Arc::new(AtomicBool::new(true));
        let beat_thread = {
            let (t, beating) = (t.clone(), beating.clone());
            std::thread::Builder::new()
                .name("iomark:beat".into())
                .spawn(move || heartbeat(&*t, &beating))
                .ok()
        };
        let mut c = Cluster {
            t,
            place: Placement {
                rank,
                ranks: size,
                hostname: hostname(),
                tag: String::new(),
            },
            hosts: vec![String::new(); size as usize],
            token: String::new(),
            timeout,
            seq: 0,
            last_heard: vec![Instant::now(); size as usize],
            early: HashMap::new(),
            beating,
            beat_thread,
        };
        let me = c.place.hostname.clone().into_bytes();
        let all = c.exchange("every rank to start", me, |all| {
            let names: Vec<String> = all
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect();
            serde_json::to_vec(&(names, new_token())).unwrap_or_default()
        })?;
        (c.hosts, c.token) = serde_json::from_slice(&all)
            .map_err(|_| ClusterError::Malformed(0, "the host names".into()))?;
        let me = &c.place.hostname;
        c.place.tag = if c.hosts.iter().filter(|h| *h == me).count() > 1 {
            format!("{me}.{rank}")
        } else {
            me.clone()
        };
        Ok(c)
    }

    pub fn rank(&self) -> u32 {
        self.place.rank
    }

    pub fn size(&self) -> u32 {
        self.place.ranks
    }

    /// The host name of `rank`.
    pub fn host(&self, rank: u32) -> &str {
        self.hosts
            .get(rank as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// Every rank sends `mine`; rank 0 gets all of them, in rank order
    /// (`Some`), the others `None`. Every rank returns only once rank 0
    /// has them all.
    pub fn gather(
        &mut self,
        what: &str,
        mine: Vec<u8>,
    ) -> Result<Option<Vec<Vec<u8>>>, ClusterError> {
        let mut all = None;
        self.exchange(what, mine, |v| {
            all = Some(v);
            Vec::new()
        })?;
        Ok(all)
    }

    /// Every rank sends `mine`; rank 0 `decide`s one answer from all of
    /// them (in rank order), and every rank returns that answer.
    pub fn exchange(
        &mut self,
        what: &str,
        mine: Vec<u8>,
        decide: impl FnOnce(Vec<Vec<u8>>) -> Vec<u8>,
    ) -> Result<Vec<u8>, ClusterError> {
        self.seq += 1;
        let seq = self.seq;
        if self.rank() == 0 {
            let mut got: Vec<Option<Vec<u8>>> = vec![None; self.size() as usize];
            got[0] = Some(mine);
            for r in 1..self.size() {
                let body = self.wait_for(r, TAG_ARRIVE, seq, what)?;
                got[r as usize] = Some(body);
            }
            let answer = decide(got.into_iter().map(Option::unwrap_or_default).collect());
            let msg = frame(seq, &answer);
            for r in 1..self.size() {
                self.t.send(r, TAG_ANSWER, &msg);
            }
            Ok(answer)
        } else {
            self.t.send(0, TAG_ARRIVE, &frame(seq, &mine));
            self.wait_for(0, TAG_ANSWER, seq, what)
        }
    }

    /// Sends a note (no answer awaited) about batch `seq` to `to`.
    pub fn note(&self, to: u32, tag: i32, seq: u32, body: &[u8]) {
        self.t.send(to, tag, &frame(seq, body));
    }

    /// Takes a note with `tag` about batch `seq` that has arrived from
    /// any rank: (its rank, its body).
    pub fn take_note(&mut self, tag: i32, seq: u32) -> Option<(u32, Vec<u8>)> {
        let key = *self.early.keys().find(|(_, t, s)| *t == tag && *s == seq)?;
        self.early.remove(&key).map(|b| (key.0, b))
    }

    /// Handles whatever has arrived (heartbeats, early messages) without
    /// waiting: keeps the liveness clock of every rank current.
    pub fn pump(&mut self) -> Result<(), ClusterError> {
        while let Some((from, tag, data)) = self.t.poll() {
            self.take(from, tag, data)?;
        }
        Ok(())
    }

    fn take(&mut self, from: u32, tag: i32, data: Vec<u8>) -> Result<(), ClusterError> {
        if let Some(t) = self.last_heard.get_mut(from as usize) {
            *t = Instant::now();
        }
        if tag == TAG_BEAT {
            return Ok(());
        }
        let (seq, body) =
            unframe(&data).ok_or_else(|| ClusterError::Malformed(from, "a message".into()))?;
        self.early.insert((from, tag, seq), body.to_vec());
        Ok(())
    }

    /// Waits for message `(from, tag, seq)`, watching `from`'s liveness.
    fn wait_for(
        &mut self,
        from: u32,
        tag: i32,
        seq: u32,
        what: &str,
    ) -> Result<Vec<u8>, ClusterError> {
        let mut pause = Duration::from_micros(50);
        loop {
            self.pump()?;
            if let Some(body) = self.early.remove(&(from, tag, seq)) {
                return Ok(body);
            }
            if crate::run::signals::received() {
                return Err(ClusterError::Interrupted(what.into()));
            }
            let silent = self.last_heard[from as usize].elapsed();
            if silent > self.timeout {
                return Err(ClusterError::Silent {
                    rank: from,
                    host: self.host(from).to_string(),
                    secs: silent.as_secs(),
                    what: what.into(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
        }
    }

    /// Stops every rank (after this one's clean-up): the way out when
    /// the ranks can no longer agree.
    pub fn abort(&self, code: i32) -> ! {
        self.t.abort(code)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.beating.store(false, Ordering::SeqCst);
        if let Some(h) = self.beat_thread.take() {
            let _ = h.join();
        }
    }
}

/// Sends a heartbeat twice a second: to rank 0 from every other rank,
/// and from rank 0 to every other rank.
fn heartbeat(t: &dyn Transport, beating: &AtomicBool) {
    let mut last = Instant::now() - BEAT;
    while beating.load(Ordering::SeqCst) {
        if last.elapsed() >= BEAT {
            last = Instant::now();
            if t.rank() == 0 {
                for r in 1..t.size() {
                    t.send(r, TAG_BEAT, &[]);
                }
            } else {
                t.send(0, TAG_BEAT, &[]);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// 128 random bits, in hex.
fn new_token() -> String {
    let mut b = [0u8; 16];
    crate::sys::random_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn frame(seq: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + body.len());
    v.extend_from_slice(&seq.to_le_bytes());
    v.extend_from_slice(body);
    v
}

fn unframe(data: &[u8]) -> Option<(u32, &[u8])> {
    let seq = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    Some((seq, &data[4..]))
}

#[cfg(test)]
mod tests {
    use super::local::Local;
    use super::*;

    /// Runs `f` on `n` ranks (threads), each with its cluster end.
    fn on_ranks<T: Send + 'static>(
        n: u32,
        timeout: Duration,
        f: impl Fn(Result<Cluster, ClusterError>, Arc<AtomicBool>) -> T + Send + Sync + 'static,
    ) -> Vec<T> {
        let f = Arc::new(f);
        let handles: Vec<_> = Local::ranks(n)
            .into_iter()
            .map(|t| {
                let f = f.clone();
                std::thread::spawn(move || {
                    let mute = t.mute.clone();
                    f(Cluster::new(Arc::new(t), timeout), mute)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn every_rank_gets_rank_0s_answer_from_all_ranks_inputs() {
        let out = on_ranks(4, DEFAULT_TIMEOUT, |c, _| {
            let mut c = c.expect("joins");
            assert_eq!(c.hosts.len(), 4);
            let mine = vec![c.rank() as u8 * 10];
            let a = c
                .exchange("sum", mine, |all| {
                    vec![all.iter().map(|v| v[0]).sum::<u8>()]
                })
                .expect("answer");
            let g = c.gather("all", vec![c.rank() as u8]).expect("gathered");
            (c.rank(), a, g)
        });
        for (rank, a, g) in out {
            assert_eq!(a, vec![60]);
            match rank {
                0 => assert_eq!(g, Some(vec![vec![0], vec![1], vec![2], vec![3]])),
                _ => assert_eq!(g, None),
            }
        }
    }

    #[test]
    fn a_silent_rank_is_named_after_the_timeout() {
        let out = on_ranks(3, Duration::from_millis(1500), |c, mute| {
            let mut c = c.expect("joins");
            if c.rank() == 2 {
                // Hangs: sends nothing more, heartbeats included.
                mute.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2500));
                return (2, None);
            }
            let t = Instant::now();
            let e = c.exchange("the test", Vec::new(), |_| Vec::new()).err();
            assert!(t.elapsed() < Duration::from_secs(10));
            (c.rank(), e)
        });
        let e0 = out[0].1.clone().expect("rank 0 gives up");
        assert!(
            matches!(&e0, ClusterError::Silent { rank: 2, what, .. } if what == "the test"),
            "{e0}"
        );
        // Rank 1 waited on rank 0, which said nothing either: it gives up
        // too, within its own timeout.
        assert!(out[1].1.is_some());
    }

    #[test]
    fn heartbeats_keep_a_slow_rank_alive() {
        let out = on_ranks(2, Duration::from_millis(1500), |c, _| {
            let mut c = c.expect("joins");
            if c.rank() == 1 {
                // Busy (laying out files, say) for longer than the timeout.
                std::thread::sleep(Duration::from_millis(3000));
            }
            c.exchange("slow", Vec::new(), |_| Vec::new()).is_ok()
        });
        assert_eq!(out, vec![true, true]);
    }
}
