//! Block sizes: which length the next I/O has, from `bs` (fixed),
//! `bsrange` or `bssplit` (weighted choices), per direction or, with
//! `bs_is_seq_rand`, per sequential/random I/O.
//!
//! A `bsrange=LOW-HIGH` length is drawn as fio draws it: uniform over
//! `LOW .. LOW + HIGH`, rounded down to a multiple of LOW (unless
//! `bs_unaligned`), then capped at HIGH. Every multiple of LOW below HIGH
//! is equally likely and HIGH takes the rest, so with `4k-10k` the shares
//! are 4k 40 %, 8k 40 %, 10k 20 % (HIGH is issued even when it is not a
//! multiple of LOW). Where a length must fit in what is left of a region,
//! it is drawn again until it does (`pick_within`).
//!
//! Pure arithmetic on a caller's random stream; no allocation after `new`.

use super::rng::Rng;
use crate::job::spec::{BlockSizes, Ddir, IoOpts};

#[derive(Clone, Debug)]
pub struct BlockSizer {
    /// Indexed by direction, or by 0 = sequential / 1 = random.
    sizes: [BlockSizes; 3],
    by_seq_rand: bool,
    unaligned: bool,
}

impl BlockSizer {
    pub fn new(io: &IoOpts) -> Self {
        BlockSizer {
            sizes: io.bs.clone(),
            by_seq_rand: io.bs_is_seq_rand,
            unaligned: io.bs_unaligned,
        }
    }

    fn table(&self, d: Ddir, random: bool) -> &BlockSizes {
        if self.by_seq_rand {
            &self.sizes[usize::from(random)]
        } else {
            &self.sizes[d.idx()]
        }
    }

    /// Smallest length an I/O of direction `d` can have.
    pub fn min(&self, d: Ddir) -> u64 {
        if self.by_seq_rand {
            self.sizes[0].min().min(self.sizes[1].min())
        } else {
            self.sizes[d.idx()].min()
        }
        .max(1)
    }

    /// Largest length an I/O of direction `d` can have.
    pub fn max(&self, d: Ddir) -> u64 {
        if self.by_seq_rand {
            self.sizes[0].max().max(self.sizes[1].max())
        } else {
            self.sizes[d.idx()].max()
        }
        .max(1)
    }

    /// True when every I/O of `d` has the same length.
    pub fn is_fixed(&self, d: Ddir) -> bool {
        self.min(d) == self.max(d)
    }

    /// The one length every I/O of direction `d` (a random or a
    /// sequential one) has, when `pick` draws nothing for it.
    pub fn fixed(&self, d: Ddir, random: bool) -> Option<u64> {
        match self.table(d, random) {
            BlockSizes::Range { lo, hi } if *hi <= (*lo).max(1) => Some((*lo).max(1)),
            _ => None,
        }
    }

    /// Length of the next I/O.
    #[inline]
    pub fn pick(&self, rng: &mut Rng, d: Ddir, random: bool) -> u64 {
        match self.table(d, random) {
            BlockSizes::Range { lo, hi } => self.in_range(rng, *lo, *hi),
            BlockSizes::Split(entries) => {
                let p = rng.percent();
                let mut acc = 0.0;
                for e in entries {
                    acc += e.perc;
                    if p < acc {
                        return self.in_range(rng, e.lo, e.hi);
                    }
                }
                // Rounding left a sliver past the last share.
                entries
                    .last()
                    .map(|e| self.in_range(rng, e.lo, e.hi))
                    .unwrap_or(4096)
            }
        }
    }

    /// A length of at most `room` bytes: drawn again until one fits, or
    /// `None` when not even the smallest does.
    #[inline]
    pub fn pick_within(&self, rng: &mut Rng, d: Ddir, random: bool, room: u64) -> Option<u64> {
        if self.min(d) > room {
            return None;
        }
        loop {
            let len = self.pick(rng, d, random);
            if len <= room {
                return Some(len);
            }
        }
    }

    #[inline]
    fn in_range(&self, rng: &mut Rng, lo: u64, hi: u64) -> u64 {
        let lo = lo.max(1);
        if hi <= lo {
            return lo;
        }
        let len = lo + rng.below(hi);
        let len = if self.unaligned { len } else { len - len % lo };
        len.min(hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{apply, lookup};
    use crate::job::spec::JobSpec;

    fn sizer(opts: &[(&str, &str)]) -> BlockSizer {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            apply(&mut s, lookup(k).unwrap(), Some(v)).unwrap();
        }
        BlockSizer::new(&s.io)
    }

    /// Shares of each length in 100,000 draws.
    fn shares(opts: &[(&str, &str)], d: Ddir) -> std::collections::BTreeMap<u64, f64> {
        let b = sizer(opts);
        let mut rng = Rng::new(9);
        let mut n = std::collections::BTreeMap::new();
        for _ in 0..100_000 {
            *n.entry(b.pick(&mut rng, d, false)).or_insert(0.0) += 1e-3;
        }
        n
    }

    fn near(got: &std::collections::BTreeMap<u64, f64>, want: &[(u64, f64)]) {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (len, pct) in want {
            let g = got.get(len).copied().unwrap_or(0.0);
            assert!(
                (g - pct).abs() < 0.6,
                "{len}: {g:.1} %, want {pct} % ({got:?})"
            );
        }
    }

    #[test]
    fn a_range_whose_top_is_no_multiple_of_its_low_end_issues_its_top() {
        // Drawn over low..low+high, rounded down, capped at the top.
        near(
            &shares(&[("bsrange", "4k-10k")], Ddir::Write),
            &[(4096, 40.0), (8192, 40.0), (10240, 20.0)],
        );
        near(
            &shares(&[("bsrange", "3k-10k")], Ddir::Read),
            &[(3072, 30.0), (6144, 30.0), (9216, 30.0), (10240, 10.0)],
        );
        // Per direction: reads 4k-10k, writes 1k-3k.
        near(
            &shares(&[("bsrange", "4k-10k,1k-3k")], Ddir::Write),
            &[(1024, 33.3), (2048, 33.3), (3072, 33.3)],
        );
        // Unaligned: any length, the top taking low/high of the draws.
        let u = shares(&[("bsrange", "1k-9k"), ("bs_unaligned", "1")], Ddir::Write);
        let top = u[&9216];
        assert!((top - 100.0 / 9.0).abs() < 0.6, "{top}");
        assert!(u.len() > 7000, "{}", u.len());
    }

    #[test]
    fn a_length_that_must_fit_is_drawn_again() {
        let b = sizer(&[("bsrange", "4k-16k")]);
        let mut rng = Rng::new(4);
        for _ in 0..1000 {
            let l = b.pick_within(&mut rng, Ddir::Read, false, 9000).unwrap();
            assert!(l == 4096 || l == 8192, "{l}");
        }
        assert_eq!(b.pick_within(&mut rng, Ddir::Read, false, 4095), None);
    }

    #[test]
    fn range_gives_multiples_of_the_low_end_evenly() {
        let b = sizer(&[("bsrange", "4k-16k")]);
        let mut rng = Rng::new(1);
        let mut seen = [0u32; 5];
        for _ in 0..40_000 {
            let l = b.pick(&mut rng, Ddir::Read, false);
            assert_eq!(l % 4096, 0);
            seen[(l / 4096) as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        for c in &seen[1..] {
            assert!((9_000..11_000).contains(c), "{seen:?}");
        }
    }

    #[test]
    fn unaligned_range_gives_any_length() {
        let b = sizer(&[("bsrange", "1000-1003"), ("bs_unaligned", "1")]);
        let mut rng = Rng::new(2);
        let mut seen = [false; 4];
        for _ in 0..20_000 {
            seen[(b.pick(&mut rng, Ddir::Write, true) - 1000) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn split_follows_shares_and_seq_rand_indexes_by_randomness() {
        let b = sizer(&[("bssplit", "4k/25:64k/75")]);
        let mut rng = Rng::new(3);
        let big = (0..40_000)
            .filter(|_| b.pick(&mut rng, Ddir::Read, true) == 65536)
            .count();
        assert!((29_000..31_000).contains(&big), "{big}");
        let b = sizer(&[("bs", "4k,64k"), ("bs_is_seq_rand", "1")]);
        assert_eq!(b.pick(&mut rng, Ddir::Read, false), 4096);
        assert_eq!(b.pick(&mut rng, Ddir::Read, true), 65536);
        assert_eq!(b.pick(&mut rng, Ddir::Write, false), 4096);
        assert_eq!((b.min(Ddir::Write), b.max(Ddir::Read)), (4096, 65536));
    }
}
