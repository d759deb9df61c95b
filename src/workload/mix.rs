//! The direction of a mixed job's next I/O (`rw=rw`, `rw=randrw`), as fio
//! chooses it: a direction is drawn (`rwmixread` percent of draws give
//! reads) and then kept for a run of I/Os. When a draw changes the
//! direction, the new one keeps going until it has issued as many I/Os in
//! this pass as the old one had, times the new one's share; a draw that
//! keeps the direction asks again at the next I/O. The draws come from
//! the stream fio seeds for this for the same clone (taus88), so a mixed
//! job issues fio's reads and writes in fio's order and counts.
//!
//! Pure arithmetic; no allocation.

use super::taus::{self, Taus};
use crate::job::spec::{Ddir, IoOpts};

#[derive(Clone, Debug)]
pub struct MixCycle {
    seed: u64,
    rng: Taus,
    /// `rwmixread`, in whole percent as fio keeps it.
    read_pct: u64,
    /// The direction of the current run.
    ddir: Ddir,
    /// The current direction's I/O count at which to draw again.
    until: u64,
    /// Reads and writes issued in this pass.
    issued: [u64; 2],
}

impl MixCycle {
    /// The cycle of the clone numbered `thread_number` (fio's count of
    /// clones from 1); `clone_seed` seeds it when the job asks for
    /// unrepeatable draws.
    pub fn new(io: &IoOpts, thread_number: u64, clone_seed: u64) -> Self {
        let seed = taus::job_stream_seed(io, thread_number, taus::Stream::Mix)
            .unwrap_or(clone_seed ^ 0x4D49_5843);
        MixCycle {
            seed,
            rng: Taus::new(seed, false),
            read_pct: io.rwmixread.round().clamp(0.0, 100.0) as u64,
            ddir: Ddir::Read,
            until: 0,
            issued: [0; 2],
        }
    }

    /// The direction of the next I/O.
    #[inline]
    pub fn next_ddir(&mut self) -> Ddir {
        let cur = self.ddir.idx();
        if self.issued[cur] >= self.until {
            // 1 + ⌊100 × r / 2^32⌋: a whole percent from 1 to 100.
            let v = 1 + (100.0 * (self.rng.draw() as f64 / 4_294_967_296.0)) as u64;
            let d = if v <= self.read_pct {
                Ddir::Read
            } else {
                Ddir::Write
            };
            if d != self.ddir {
                let share = if d == Ddir::Read {
                    self.read_pct
                } else {
                    100 - self.read_pct
                };
                self.until = self.issued[cur] * share / 100;
            }
            self.ddir = d;
        }
        self.ddir
    }

    /// An I/O of direction `d` was issued.
    #[inline]
    pub fn issued(&mut self, d: Ddir) {
        if let Some(n) = self.issued.get_mut(d.idx()) {
            *n += 1;
        }
    }

    /// A new pass: the counts start over (the direction stays).
    pub fn new_pass(&mut self) {
        self.issued = [0; 2];
        self.until = 0;
    }

    /// The draws start over (a new pass with `randrepeat`).
    pub fn reseed(&mut self) {
        self.rng = Taus::new(self.seed, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{apply, lookup};
    use crate::job::spec::JobSpec;

    fn cycle(opts: &[(&str, &str)]) -> MixCycle {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            apply(&mut s, lookup(k).unwrap(), Some(v)).unwrap();
        }
        MixCycle::new(&s.io, 1, 7)
    }

    fn run(c: &mut MixCycle, n: usize) -> Vec<Ddir> {
        (0..n)
            .map(|_| {
                let d = c.next_ddir();
                c.issued(d);
                d
            })
            .collect()
    }

    #[test]
    fn shares_follow_rwmixread_over_a_long_run() {
        for pct in [10u64, 50, 70, 90] {
            let mut c = cycle(&[("rw", "randrw"), ("rwmixread", &pct.to_string())]);
            let reads = run(&mut c, 200_000)
                .iter()
                .filter(|d| **d == Ddir::Read)
                .count();
            let got = reads as f64 / 2000.0;
            assert!(
                (got - pct as f64).abs() < 3.0,
                "rwmixread={pct}: {got:.1} % reads"
            );
        }
    }

    #[test]
    fn a_new_pass_starts_the_counts_and_the_draws_over() {
        let mut c = cycle(&[("rw", "rw"), ("rwmixread", "50")]);
        let seq = run(&mut c, 10_000);
        // The same clone draws the same directions; a new pass starts
        // the counts over and, reseeded, the draws.
        let mut again = cycle(&[("rw", "rw"), ("rwmixread", "50")]);
        assert_eq!(run(&mut again, 10_000), seq);
        again.new_pass();
        again.reseed();
        let mut fresh = cycle(&[("rw", "rw"), ("rwmixread", "50")]);
        fresh.ddir = again.ddir;
        assert_eq!(run(&mut again, 1000), run(&mut fresh, 1000));
    }

    #[test]
    fn directions_are_the_ones_fio_draws() {
        // fio 3.33's first 80 directions for rw=rw (rwmixread=50), first
        // clone, from its write_iolog.
        let fio =
            "rrrwrrwwwrwrwrrrwwrrwwwwrwrwwwwrrwrwwrrwwrwrrwwrwwwrrwrwrwwrrwwwwwrrrwrwwrwwwwrw";
        let mut s = JobSpec::default();
        apply(&mut s, lookup("rw").unwrap(), Some("rw")).unwrap();
        let mut c = MixCycle::new(&s.io, 1, 99);
        let got: String = run(&mut c, 80)
            .iter()
            .map(|d| if *d == Ddir::Read { 'r' } else { 'w' })
            .collect();
        assert_eq!(got, fio);
    }

    #[test]
    fn all_reads_or_all_writes() {
        let mut c = cycle(&[("rw", "rw"), ("rwmixread", "100")]);
        assert!(run(&mut c, 1000).iter().all(|d| *d == Ddir::Read));
        let mut c = cycle(&[("rw", "rw"), ("rwmixread", "0")]);
        assert!(run(&mut c, 1000).iter().all(|d| *d == Ddir::Write));
    }
}
