//! Block sizes: which length the next I/O has, from `bs` (fixed),
//! `bsrange` (multiples of the low end, or any byte count with
//! `bs_unaligned`) or `bssplit` (weighted choices), per direction or, with
//! `bs_is_seq_rand`, per sequential/random I/O.
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

    #[inline]
    fn in_range(&self, rng: &mut Rng, lo: u64, hi: u64) -> u64 {
        let lo = lo.max(1);
        if hi <= lo {
            return lo;
        }
        if self.unaligned {
            lo + rng.below(hi - lo + 1)
        } else {
            // A whole multiple of the low end, each equally likely.
            lo * (1 + rng.below(hi / lo))
        }
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
        for _ in 0..1000 {
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
