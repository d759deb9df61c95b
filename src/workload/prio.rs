//! Per-I/O priorities: the priority each read and write is issued with.
//!
//! Without `cmdprio_percentage` or `cmdprio_bssplit`, every I/O runs at
//! the job's own priority (`prio`/`prioclass`, see `job::ioprio`). With
//! them, as fio 3.33 does: for a read or write whose direction (and, with
//! `cmdprio_bssplit`, block size) has a share, a number in 0..100 is
//! drawn; below the share the I/O gets the option's priority (with
//! `cmdprio_bssplit`, that of the entry the number falls in), otherwise
//! the job's. Trims and syncs draw nothing. The numbers come from fio's
//! generator seeded as fio seeds it (`taus`, stream `PrioCmds`) and start
//! over where fio's do (each new loop, and before the written blocks are
//! read back), so the n-th I/O drawn for gets the priority fio's n-th
//! gets.
//!
//! The choice for one I/O is a short table walk and at most one draw: no
//! allocation, no lock, no system call. The queue asks for it as it hands
//! each unit to the engine (`IoUnit::prio`), so data and verify I/O are
//! treated alike and every engine reads the same field.
//!
//! Statistics: a direction that can see a priority besides the job's
//! keeps latencies per priority (fio's `prios`); `stat_values` lists the
//! priorities of each direction, the job's own first, in the order
//! `IoPrio::stat` counts them.

use super::taus::{self, Stream, Taus};
use super::WorkloadError;
use crate::engine::{IoPrio, Op};
use crate::job::ioprio;
use crate::job::spec::{Ddir, JobSpec, PrioSplit};

/// A priority picked when the drawn number is below `below`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pick {
    below: u32,
    prio: IoPrio,
}

/// The picks for I/Os of one block size (`cmdprio_bssplit`), by
/// cumulative share; `total` is the sum of the shares.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BsRule {
    bs: u64,
    total: u32,
    picks: Vec<Pick>,
}

/// How the I/Os of one direction get their priority.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Rule {
    /// Always the job's own.
    Own,
    /// `cmdprio_percentage`: one share for every block size.
    Share(Pick),
    /// `cmdprio_bssplit`: shares by block size (other sizes: the job's).
    BySize(Vec<BsRule>),
}

/// Chooses each I/O's priority (see the module docs).
#[derive(Clone, Debug)]
pub struct PrioChooser {
    own: IoPrio,
    /// Some direction has a rule other than `Own` (the fast path skips
    /// the rules otherwise).
    active: bool,
    rules: [Rule; 2],
    seed: u64,
    /// Draws start over at each loop (`randrepeat`), as fio's do.
    repeat: bool,
    rng: Taus,
    /// Per direction: the priorities its statistics are kept for (empty:
    /// none kept), indexed by `IoPrio::stat`.
    values: [Vec<u16>; 3],
}

/// Checks `cmdprio_*` options that cannot work together.
pub fn check_job(spec: &JobSpec) -> Result<(), WorkloadError> {
    let cp = &spec.engine.cmdprio;
    if cp.bssplit.is_some() && cp.percentage.iter().any(|p| *p > 0) {
        return Err(WorkloadError::Options(
            "cmdprio_percentage and cmdprio_bssplit cannot be used together (each says which I/Os get a priority)"
                .into(),
        ));
    }
    Ok(())
}

/// The index of `value` in `values`, added when new.
fn index_of(values: &mut Vec<u16>, value: u16) -> u16 {
    match values.iter().position(|v| *v == value) {
        Some(i) => i as u16,
        None => {
            values.push(value);
            (values.len() - 1) as u16
        }
    }
}

/// A priority chosen by cmdprio, counted in `values`.
fn chosen(values: &mut Vec<u16>, value: u16) -> IoPrio {
    IoPrio {
        value,
        per_io: true,
        stat: index_of(values, value),
    }
}

/// The rules of `cmdprio_bssplit` entries `entries` (sorted by block
/// size); `implicit` is the priority of entries that name none.
fn size_rules(entries: &[PrioSplit], implicit: u16, values: &mut Vec<u16>) -> Vec<BsRule> {
    let mut rules: Vec<BsRule> = Vec::new();
    for e in entries {
        let value = match e.prio {
            Some((c, l, h)) => ioprio::value(c, l, h),
            None => implicit,
        };
        let prio = chosen(values, value);
        if rules.last().is_none_or(|r| r.bs != e.bs) {
            rules.push(BsRule {
                bs: e.bs,
                total: 0,
                picks: Vec::new(),
            });
        }
        let r = rules.last_mut().expect("pushed above");
        r.total += e.perc;
        r.picks.push(Pick {
            below: r.total,
            prio,
        });
    }
    rules
}

impl PrioChooser {
    /// The chooser of a clone: `thread_number` is its place among the
    /// run's clones (fio's, which seeds the draws), `clone_seed` its seed
    /// for unrepeatable runs (`randrepeat=0`).
    pub fn new(spec: &JobSpec, thread_number: u64, clone_seed: u64) -> PrioChooser {
        let own = IoPrio {
            value: ioprio::job_value(spec.ctl.prioclass, spec.ctl.prio),
            per_io: false,
            stat: 0,
        };
        let cp = &spec.engine.cmdprio;
        let mut values: [Vec<u16>; 3] = Default::default();
        let mut rules = [Rule::Own, Rule::Own];
        for (d, dir) in [Ddir::Read, Ddir::Write].into_iter().enumerate() {
            if !spec.io.rw.has(dir) {
                continue;
            }
            let class = match cp.class[d] {
                0 => ioprio::CLASS_RT,
                c => c,
            };
            let implicit = ioprio::value(class, cp.level[d], cp.hint[d]);
            let mut vals = vec![own.value];
            rules[d] = match &cp.bssplit {
                Some(split) if !split[d].is_empty() => {
                    Rule::BySize(size_rules(&split[d], implicit, &mut vals))
                }
                None if cp.percentage[d] > 0 => Rule::Share(Pick {
                    below: cp.percentage[d],
                    prio: chosen(&mut vals, implicit),
                }),
                _ => continue,
            };
            values[d] = vals;
        }
        let io = &spec.io;
        let seed = taus::job_stream_seed(io, thread_number, Stream::PrioCmds)
            .unwrap_or(clone_seed ^ 0x5052_494f);
        PrioChooser {
            own,
            active: rules.iter().any(|r| *r != Rule::Own),
            rules,
            seed,
            repeat: io.randrepeat || io.allrandrepeat,
            rng: Taus::new(seed, false),
            values,
        }
    }

    /// Whether some I/O may get a priority of its own.
    pub fn per_io(&self) -> bool {
        self.active
    }

    /// The job's own priority (`prio`/`prioclass`; 0 when not set).
    pub fn own(&self) -> IoPrio {
        self.own
    }

    /// Per direction (read, write, trim), the priorities whose latencies
    /// are kept, the job's own first; empty for a direction that only
    /// ever runs at the job's.
    pub fn stat_values(&self) -> &[Vec<u16>; 3] {
        &self.values
    }

    /// The priority of an I/O doing `op` on `len` bytes.
    #[inline]
    pub fn choose(&mut self, op: Op, len: u64) -> IoPrio {
        if !self.active {
            return self.own;
        }
        self.choose_by_rule(op, len)
    }

    /// `choose` for a job with per-I/O priorities (kept out of line so
    /// the common case stays one test).
    #[inline(never)]
    fn choose_by_rule(&mut self, op: Op, len: u64) -> IoPrio {
        let d = match op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return self.own,
        };
        match &self.rules[d] {
            Rule::Own => self.own,
            Rule::Share(p) => {
                if draw(&mut self.rng) < p.below {
                    p.prio
                } else {
                    self.own
                }
            }
            Rule::BySize(rules) => {
                let Some(r) = rules.iter().find(|r| r.bs == len) else {
                    return self.own;
                };
                let n = draw(&mut self.rng);
                r.picks
                    .iter()
                    .find(|p| n < p.below)
                    .map_or(self.own, |p| p.prio)
            }
        }
    }

    /// A new loop (or the read-back of what was written) starts: with
    /// repeatable draws they start over, as fio's do.
    pub fn restart(&mut self) {
        if self.repeat {
            self.rng = Taus::new(self.seed, false);
        }
    }
}

/// A number in 0..100, as fio draws it (`rand_between(0, 99)`).
#[inline]
fn draw(rng: &mut Taus) -> u32 {
    rng.percent()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        let mut all = vec![("ioengine", "libaio")];
        all.extend_from_slice(opts);
        crate::job::test_spec(&all)
    }

    fn picks(c: &mut PrioChooser, op: Op, len: u64, n: usize) -> Vec<IoPrio> {
        (0..n).map(|_| c.choose(op, len)).collect()
    }

    #[test]
    fn without_cmdprio_every_io_runs_at_the_jobs_priority() {
        let s = spec(&[("rw", "randrw"), ("prio", "3")]);
        let mut c = PrioChooser::new(&s, 1, 0);
        assert!(!c.per_io());
        let own = IoPrio {
            value: 0x4003,
            per_io: false,
            stat: 0,
        };
        assert_eq!(c.own(), own);
        assert!(picks(&mut c, Op::Read, 4096, 100).iter().all(|p| *p == own));
        assert!(c.stat_values().iter().all(Vec::is_empty));
    }

    /// The draws are fio's: `cmdprio_percentage=30` over 1024 reads gives
    /// fio 3.33's first clone (thread 1, default seed) 300 real-time ones.
    #[test]
    fn the_share_of_prioritized_ios_is_fios_draw_for_draw() {
        let s = spec(&[("rw", "randread"), ("cmdprio_percentage", "30")]);
        let mut c = PrioChooser::new(&s, 1, 0);
        assert!(c.per_io());
        let p = picks(&mut c, Op::Read, 4096, 1024);
        let rt: Vec<&IoPrio> = p.iter().filter(|p| p.per_io).collect();
        assert_eq!(rt.len(), 300);
        assert!(rt.iter().all(|p| p.value == 0x2000 && p.stat == 1));
        assert!(p
            .iter()
            .filter(|p| !p.per_io)
            .all(|p| p.value == 0 && p.stat == 0));
        assert_eq!(c.stat_values()[0], vec![0, 0x2000]);
        assert!(c.stat_values()[1].is_empty(), "no writes");
        // A new loop draws the same numbers again.
        c.restart();
        assert_eq!(picks(&mut c, Op::Read, 4096, 1024), p);
        // Writes and trims of a read job draw nothing.
        assert_eq!(c.choose(Op::Write, 4096), c.own());
        assert_eq!(c.choose(Op::Trim, 4096), c.own());
        assert_eq!(c.choose(Op::Fsync, 0), c.own());
    }

    #[test]
    fn shares_over_many_draws() {
        for pct in [0u32, 1, 25, 50, 99, 100] {
            let s = spec(&[("rw", "write"), ("cmdprio_percentage", &pct.to_string())]);
            let mut c = PrioChooser::new(&s, 3, 0);
            let n = picks(&mut c, Op::Write, 4096, 20_000)
                .iter()
                .filter(|p| p.per_io)
                .count() as f64;
            let share = n * 100.0 / 20_000.0;
            assert!((share - pct as f64).abs() < 1.0, "{pct}%: {share}%");
        }
    }

    #[test]
    fn per_direction_classes_levels_and_hints() {
        let s = spec(&[
            ("rw", "randrw"),
            ("prioclass", "2"),
            ("prio", "3"),
            ("cmdprio_percentage", "100,100"),
            ("cmdprio_class", "2,3"),
            ("cmdprio", "1,7"),
            ("cmdprio_hint", "0,2"),
        ]);
        let mut c = PrioChooser::new(&s, 1, 0);
        assert_eq!(c.choose(Op::Read, 4096).value, 0x4001);
        let w = c.choose(Op::Write, 4096);
        assert_eq!((w.value, w.per_io, w.stat), (0x6017, true, 1));
        assert_eq!(c.stat_values()[0], vec![0x4003, 0x4001]);
        assert_eq!(c.stat_values()[1], vec![0x4003, 0x6017]);
    }

    #[test]
    fn a_chosen_priority_equal_to_the_jobs_keeps_one_statistic() {
        let s = spec(&[
            ("rw", "read"),
            ("prioclass", "1"),
            ("cmdprio_percentage", "50"),
        ]);
        let mut c = PrioChooser::new(&s, 1, 0);
        assert_eq!(c.stat_values()[0], vec![0x2000]);
        assert!(picks(&mut c, Op::Read, 4096, 50)
            .iter()
            .all(|p| p.stat == 0));
    }

    #[test]
    fn bssplit_picks_by_block_size_and_entry() {
        let s = spec(&[
            ("rw", "randwrite"),
            ("bssplit", "4k/50:64k/50"),
            ("cmdprio_class", "2"),
            ("cmdprio", "5"),
            ("cmdprio_bssplit", "4k/30/1/0:4k/20:64k/100/3/0:8k/50"),
        ]);
        let mut c = PrioChooser::new(&s, 1, 0);
        // The job's own, then by entry order: 1/0, the implicit 2/5,
        // 3/0 (the 8k entry's implicit 2/5 is already counted).
        assert_eq!(c.stat_values()[1], vec![0, 0x2000, 0x4005, 0x6000]);
        let p = picks(&mut c, Op::Write, 4096, 10_000);
        let count = |v: u16| p.iter().filter(|p| p.value == v).count() as f64 / 100.0;
        assert!((count(0x2000) - 30.0).abs() < 2.0, "{}", count(0x2000));
        assert!((count(0x4005) - 20.0).abs() < 2.0, "{}", count(0x4005));
        assert!((count(0) - 50.0).abs() < 2.0, "{}", count(0));
        let big = c.choose(Op::Write, 65536);
        assert_eq!((big.value, big.stat), (0x6000, 3));
        // A size without entries runs at the job's priority, no draw.
        let before = c.clone().choose(Op::Write, 4096);
        assert_eq!(c.choose(Op::Write, 12288), c.own());
        assert_eq!(c.choose(Op::Write, 4096), before);
    }

    #[test]
    fn percentage_and_bssplit_exclude_each_other() {
        let s = spec(&[("cmdprio_percentage", "10"), ("cmdprio_bssplit", "4k/10")]);
        let e = check_job(&s).unwrap_err().to_string();
        assert!(e.contains("cannot be used together"), "{e}");
        assert!(check_job(&spec(&[("cmdprio_bssplit", "4k/10")])).is_ok());
    }
}
