//! Every message ranks exchange: one enum ([`Msg`]), one encoding (the
//! results wire codec, `stats::wire`: a versioned header and an exact
//! body), so a rank of another iomark is refused, not misread.
//!
//! Meetings ([`Key`]) go up the tree ([`Up`]: each rank's contribution,
//! merged with its children's on the way) and come back down ([`Down`]:
//! rank 0's answer, forwarded by every rank to its children). The other
//! messages are notes: liveness, progress, a phase's first finisher,
//! stopping, clock offsets.

use serde::{Deserialize, Serialize};

use super::merge::{Counters, Gathered};
use super::tree::{Hosts, RankSet};

/// Which meeting a message belongs to; the same on every rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Key {
    /// The n-th meeting since the ranks joined.
    Meeting(u32),
    /// The results of the n-th session (a stop may catch ranks at
    /// different meetings; the session's results are still one).
    Results(u32),
    /// The end: rank 0 has written its reports.
    Bye,
}

/// See the module documentation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Msg {
    /// "Still here" (twice a second, to the tree neighbours).
    Beat,
    Up(Key, Up),
    Down(Key, Down),
    /// A rank's (subtree's) counters of the running batch, for rank 0's
    /// progress line.
    Rate {
        batch: u32,
        counters: Counters,
    },
    /// Every clone of a rank of the subtree has finished `batch`
    /// (`--mpi-stonewall`).
    Done {
        batch: u32,
    },
    /// The first rank has finished `batch`: end it (`--mpi-stonewall`).
    First {
        batch: u32,
    },
    /// Stop now (and send what was measured).
    Stop(Stop),
    /// Clock offset measurement: a host leader's time, rank 0's answer.
    Ping {
        t: u64,
    },
    Pong {
        t: u64,
        at: u64,
    },
    /// A leader tells its host's ranks how far its clock is from rank 0's.
    Offset {
        ns: i64,
    },
}

/// A meeting's contribution of one rank and the ranks below it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Up {
    /// Host names (the first meeting): each host with its ranks, and
    /// each rank's process id.
    Hello(Vec<(String, RankSet)>, Vec<(u32, u32)>),
    Verdicts(Verdicts),
    /// Arrived at a batch's start barrier, with the previous batch's end.
    Arrived(Ends),
    /// Waiting for the release without sleeping.
    Spinning,
    /// The last batch's end (at the end of a session).
    Ends(Ends),
    Results(Box<Gathered>),
    Empty,
}

/// Rank 0's answer to a meeting.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Down {
    /// Every rank's host and process id, and the run's token.
    Welcome {
        hosts: Hosts,
        pids: Vec<u32>,
        token: String,
    },
    /// The agreed verdict: `None` to go on, else the refusal (every
    /// refusing rank named).
    Verdict(Option<String>),
    /// Every rank has arrived: start waiting without sleeping. Carries
    /// when the first rank finished the previous batch.
    Armed(Option<u64>),
    /// Go: rank 0's clock at the release.
    Go {
        t0: u64,
    },
    /// When the first rank finished the last batch.
    Ends(Option<u64>),
    /// The end, with the exit code of the run.
    Bye {
        code: i32,
    },
    /// Rank 0 ends every rank now (a rank was lost): leave at once.
    End {
        code: i32,
    },
    Empty,
}

/// When the ranks of a subtree finished a batch (ns from its common
/// start): the earliest and the latest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ends {
    pub batch: u32,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
}

impl Ends {
    pub fn absorb(&mut self, o: &Ends) {
        self.batch = self.batch.max(o.batch);
        self.first_ns = match (self.first_ns, o.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ns = self.last_ns.max(o.last_ns);
    }
}

/// Verdicts of a subtree: its refusals (the first few, by rank, and how
/// many), and the digests of its job lists (each with its ranks).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdicts {
    pub refusals: Vec<(u32, String)>,
    pub refused: u32,
    pub digests: Vec<Digest>,
}

/// Refusals named one by one; the others are counted.
pub const NAMED_REFUSALS: usize = 8;

/// One job list's structure and the ranks that have it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// A hash of `text`.
    pub hash: String,
    /// The structure itself (`run::plan::structure`), for the message.
    pub text: String,
    pub ranks: RankSet,
}

impl Verdicts {
    pub fn of(rank: u32, refusal: Option<String>, structure: Option<String>) -> Verdicts {
        let digests = structure
            .map(|text| {
                vec![Digest {
                    hash: hash(&text),
                    text,
                    ranks: RankSet::one(rank),
                }]
            })
            .unwrap_or_default();
        Verdicts {
            refused: refusal.is_some() as u32,
            refusals: refusal.map(|r| vec![(rank, r)]).unwrap_or_default(),
            digests,
        }
    }

    pub fn absorb(&mut self, o: Verdicts) {
        self.refused += o.refused;
        self.refusals.extend(o.refusals);
        self.refusals.sort_by_key(|(r, _)| *r);
        self.refusals.truncate(NAMED_REFUSALS);
        for d in o.digests {
            match self.digests.iter_mut().find(|x| x.hash == d.hash) {
                Some(x) => x.ranks.union(&d.ranks),
                None => self.digests.push(d),
            }
        }
        self.digests.sort_by_key(|d| d.ranks.first());
    }
}

fn hash(text: &str) -> String {
    use sha2::Digest as _;
    let h = sha2::Sha256::digest(text.as_bytes());
    h.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

impl Up {
    /// Merges a child's contribution to the same meeting into this one.
    pub fn absorb(&mut self, o: Up) {
        match (self, o) {
            (Up::Hello(a, ap), Up::Hello(b, bp)) => {
                ap.extend(bp);
                for (name, set) in b {
                    match a.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, s)) => s.union(&set),
                        None => a.push((name, set)),
                    }
                }
            }
            (Up::Verdicts(a), Up::Verdicts(b)) => a.absorb(b),
            (Up::Arrived(a), Up::Arrived(b)) | (Up::Ends(a), Up::Ends(b)) => a.absorb(&b),
            (Up::Results(a), Up::Results(b)) => a.absorb(*b),
            _ => {}
        }
    }
}

/// What a stop is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cause {
    /// A stop signal (Ctrl-C, SIGTERM) reached a rank.
    Signal {
        rank: u32,
        host: String,
        signal: i32,
    },
    /// A rank sent nothing for too long.
    Lost(Lost),
    /// A rank's run ended before its last batch (`exitall`,
    /// `exitall_on_error`): the others end theirs too.
    Ended { rank: u32, host: String },
}

/// A rank found silent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    pub rank: u32,
    pub host: String,
    pub secs: u64,
    /// What the ranks were doing (`during phase 2`).
    pub during: String,
    /// Its process is gone (seen by a rank of its host), rather than
    /// silent.
    pub gone: bool,
}

impl Lost {
    /// Why it is missing: `sent nothing for 3 s during phase 1`.
    pub fn reason(&self) -> String {
        if self.gone {
            format!("ended {} (its process is gone)", self.during)
        } else {
            format!("sent nothing for {} s {}", self.secs, self.during)
        }
    }
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rank {} (host {}) {}",
            self.rank,
            self.host,
            self.reason()
        )
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Signal { rank, host, signal } => write!(
                f,
                "rank {rank} (host {host}) received {}",
                crate::cluster::signal_name(*signal)
            ),
            Cause::Lost(l) => l.fmt(f),
            Cause::Ended { rank, host } => write!(
                f,
                "rank {rank} (host {host}) ended its run before its last phase (exitall)"
            ),
        }
    }
}

/// A stop: what caused it first, and every rank known lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    pub cause: Cause,
    pub lost: Vec<Lost>,
}

impl Stop {
    pub fn lost_ranks(&self) -> RankSet {
        let mut s = RankSet::default();
        for l in &self.lost {
            s.add(l.rank);
        }
        s
    }
}

/// Encodes a message.
pub fn encode(m: &Msg) -> Vec<u8> {
    crate::stats::wire::encode(m)
}

/// Decodes a message; `None` for bytes that are not one of this iomark.
pub fn decode(b: &[u8]) -> Result<Msg, crate::stats::wire::WireError> {
    crate::stats::wire::decode(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_another_version_is_refused() {
        let m = Msg::Up(
            Key::Meeting(3),
            Up::Verdicts(Verdicts::of(2, Some("no".into()), Some("[a]".into()))),
        );
        let b = encode(&m);
        match decode(&b).unwrap() {
            Msg::Up(Key::Meeting(3), Up::Verdicts(v)) => {
                assert_eq!(v.refusals, vec![(2, "no".to_string())]);
                assert_eq!(v.digests[0].ranks, RankSet::one(2));
            }
            other => panic!("{other:?}"),
        }
        let mut other = b.clone();
        let at = other.iter().position(|&c| c == b' ').unwrap() + 1;
        other[at] = b'9';
        assert!(decode(&other).is_err());
    }

    #[test]
    fn verdicts_keep_the_first_refusals_and_group_digests() {
        let mut v = Verdicts::of(0, None, Some("x".into()));
        for r in (1..20).rev() {
            let text = if r == 5 { "y" } else { "x" };
            v.absorb(Verdicts::of(r, Some(format!("r{r}")), Some(text.into())));
        }
        assert_eq!(v.refused, 19);
        assert_eq!(v.refusals.len(), NAMED_REFUSALS);
        assert_eq!(v.refusals[0], (1, "r1".to_string()));
        assert_eq!(v.digests.len(), 2);
        assert_eq!(v.digests[0].ranks.text(), "0-4, 6-19");
        assert_eq!(v.digests[1].ranks.text(), "5");
    }
}
