//! Block sizes: which length the next I/O has, from `bs` (fixed),
//! `bsrange` or `bssplit` (weighted choices), per direction or, with
//! `bs_is_seq_rand`, per sequential/random I/O.
//!
//! Lengths are drawn as fio draws them, from the same numbers: one
//! taus88 (or taus258) stream per direction, seeded as fio seeds its
//! block-size streams for the same clone (the write stream takes the
//! read stream's seed when the job verifies, the trim stream the write
//! stream's under trimwrite), so a job that draws its lengths gives the
//! lengths fio gives, in the same order.
//!
//! - `bsrange=LOW-HIGH`: `LOW + HIGH × u` for a uniform `u` in [0, 1),
//!   rounded down to a multiple of LOW (unless `bs_unaligned`), capped
//!   at HIGH. Every multiple of LOW below HIGH is equally likely and HIGH
//!   takes the rest, so with `4k-10k` the shares are 4k 40 %, 8k 40 %,
//!   10k 20 %.
//! - `bssplit`: the entries in order of their share (smallest first, as
//!   given among equal ones); a draw takes the first entry whose running
//!   total of shares covers it and that fits before the region's end.
//!   Its size is issued as written (fio rounds it down to a multiple of
//!   the smallest size; the same for the usual sizes, which are such
//!   multiples).
//! - A length that does not fit before the end is drawn again.
//!
//! Pure arithmetic; no allocation after `new`.

use super::taus::{self, Taus};
use crate::job::spec::{BlockSizes, Ddir, IoOpts, RandomGenerator, RwPattern, VerifyKind};
use crate::job::value::SplitEntry;

/// The streams block sizes are drawn from, one per fio direction (read,
/// write, trim; or sequential, random with `bs_is_seq_rand`).
#[derive(Clone, Debug)]
pub struct BsDraws {
    seeds: [u64; 3],
    wide: bool,
    streams: [Taus; 3],
}

impl BsDraws {
    /// The streams of the clone numbered `thread_number` (fio's count of
    /// clones from 1); `clone_seed` seeds them when the job asks for
    /// unrepeatable draws (`randrepeat=0` without `randseed`).
    pub fn new(io: &IoOpts, verify: VerifyKind, thread_number: u64, clone_seed: u64) -> Self {
        let seed = |s: taus::Stream| {
            taus::job_stream_seed(io, thread_number, s)
                .unwrap_or_else(|| clone_seed ^ (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        };
        let read = seed(taus::Stream::BlockSize);
        let mut write = seed(taus::Stream::BlockSize1);
        let mut trim = seed(taus::Stream::BlockSize2);
        if verify != VerifyKind::None {
            write = read;
        }
        if matches!(io.rw, RwPattern::TrimWrite | RwPattern::RandTrimWrite) {
            trim = write;
        }
        let wide = io.random_generator == RandomGenerator::Tausworthe64;
        let seeds = [read, write, trim];
        BsDraws {
            seeds,
            wide,
            streams: seeds.map(|s| Taus::new(s, wide)),
        }
    }

    /// Starts every stream over (a new pass with `randrepeat`).
    pub fn restart(&mut self) {
        self.streams = self.seeds.map(|s| Taus::new(s, self.wide));
    }
}

#[derive(Clone, Debug)]
pub struct BlockSizer {
    /// Indexed by direction, or by 0 = sequential / 1 = random; split
    /// entries in the order fio walks them.
    sizes: [BlockSizes; 3],
    by_seq_rand: bool,
    unaligned: bool,
}

impl BlockSizer {
    pub fn new(io: &IoOpts) -> Self {
        let mut sizes = io.bs.clone();
        for b in &mut sizes {
            if let BlockSizes::Split(v) = b {
                // fio sorts by share (a sort that keeps equal shares in
                // the order given, for the few entries a split has).
                v.sort_by(|a, b| a.perc.total_cmp(&b.perc));
            }
        }
        BlockSizer {
            sizes,
            by_seq_rand: io.bs_is_seq_rand,
            unaligned: io.bs_unaligned,
        }
    }

    /// The table and stream index of an I/O of direction `d`.
    #[inline]
    fn slot(&self, d: Ddir, random: bool) -> usize {
        if self.by_seq_rand {
            usize::from(random)
        } else {
            d.idx()
        }
    }

    fn table(&self, d: Ddir, random: bool) -> &BlockSizes {
        &self.sizes[self.slot(d, random)]
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

    /// Length of the next I/O, when nothing limits it.
    #[inline]
    pub fn pick(&self, draws: &mut BsDraws, d: Ddir, random: bool) -> u64 {
        self.pick_within(draws, d, random, u64::MAX).unwrap_or(4096)
    }

    /// A length of at most `room` bytes: drawn again until one fits, or
    /// `None` when not even the smallest does.
    #[inline]
    pub fn pick_within(
        &self,
        draws: &mut BsDraws,
        d: Ddir,
        random: bool,
        room: u64,
    ) -> Option<u64> {
        let slot = self.slot(d, random);
        let table = &self.sizes[slot];
        let (min, max) = (table.min().max(1), table.max().max(1));
        if min >= max {
            return (min <= room).then_some(min);
        }
        if min > room {
            return None;
        }
        let rng = &mut draws.streams[slot];
        let top = rng.max();
        loop {
            let r = rng.draw();
            let len = match table {
                BlockSizes::Range { .. } if self.unaligned => min + scale(max, r, top),
                BlockSizes::Range { .. } => {
                    let len = min + scale(max, r, top);
                    len - len % min
                }
                // Issued as written: fio also rounds a split's sizes down
                // to a multiple of the smallest (`4k/50:6k/50` would give
                // only 4k), which is not the I/O the job asks for. Sizes
                // that are multiples, the usual case, are the same.
                BlockSizes::Split(entries) => split_pick(entries, r, top, room, rng),
            };
            let len = len.min(max);
            if len <= room {
                return Some(len);
            }
        }
    }
}

/// `span × r / (top + 1)`: a uniform share of `span` from a draw `r` of a
/// stream whose largest value is `top`, in double precision as fio
/// computes it.
#[inline]
fn scale(span: u64, r: u64, top: u64) -> u64 {
    (span as f64 * (r as f64 / (top as f64 + 1.0))) as u64
}

/// The entry of a split that draw `r` lands in: the first whose running
/// total of shares covers `r` (`r / total <= top / 100` in integers, as
/// fio tests it) and that fits in `room`; the last entry with a share
/// when none does. An entry that is a range (iomark's `LOW-HIGH/PERC`)
/// takes its length from the next draw.
#[inline]
fn split_pick(entries: &[SplitEntry], r: u64, top: u64, room: u64, rng: &mut Taus) -> u64 {
    let bound = top / 100;
    let mut total = 0.0f64;
    let mut pick = None;
    for e in entries {
        if e.perc <= 0.0 {
            continue;
        }
        total += e.perc;
        pick = Some(e);
        let covered = if total.fract() == 0.0 {
            r / (total as u64) <= bound
        } else {
            (r as f64 / total).floor() <= bound as f64
        };
        if covered && e.lo <= room {
            break;
        }
    }
    match pick {
        Some(e) if e.hi > e.lo => {
            let v = e.lo.max(1) + scale(e.hi - e.lo + 1, rng.draw(), rng.max());
            v.min(e.hi)
        }
        Some(e) => e.lo,
        None => entries.first().map_or(4096, |e| e.lo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{apply, lookup};
    use crate::job::spec::JobSpec;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            apply(&mut s, lookup(k).unwrap(), Some(v)).unwrap();
        }
        s
    }

    fn sizer(opts: &[(&str, &str)]) -> BlockSizer {
        BlockSizer::new(&spec(opts).io)
    }

    /// The streams of clone `n` of a job with `opts`.
    fn draws(opts: &[(&str, &str)], n: u64) -> BsDraws {
        let s = spec(opts);
        BsDraws::new(&s.io, s.verify.verify, n, n)
    }

    /// Shares of each length in 100,000 draws.
    fn shares(opts: &[(&str, &str)], d: Ddir) -> std::collections::BTreeMap<u64, f64> {
        let b = sizer(opts);
        let mut rng = draws(opts, 9);
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

    /// The first lengths (in KiB) the first clone of a job draws.
    fn first_kib(opts: &[(&str, &str)], d: Ddir, n: usize) -> Vec<u64> {
        let b = sizer(opts);
        let mut rng = draws(opts, 1);
        (0..n).map(|_| b.pick(&mut rng, d, false) / 1024).collect()
    }

    #[test]
    fn lengths_are_the_ones_fio_draws() {
        // fio 3.33's first lengths for the same jobs (from its
        // write_iolog): bssplit, bssplit with verify (the write stream
        // takes the read stream's seed), bsrange.
        assert_eq!(
            first_kib(
                &[("rw", "write"), ("bssplit", "4k/50:16k/50")],
                Ddir::Write,
                24
            ),
            [4, 4, 4, 16, 16, 4, 16, 4, 16, 16, 16, 4, 16, 4, 4, 4, 4, 4, 4, 16, 4, 16, 4, 4]
        );
        assert_eq!(
            first_kib(
                &[
                    ("rw", "write"),
                    ("bssplit", "4k/50:16k/50"),
                    ("verify", "crc32c")
                ],
                Ddir::Write,
                12
            ),
            [4, 16, 16, 4, 16, 4, 16, 4, 4, 4, 4, 4]
        );
        assert_eq!(
            first_kib(&[("rw", "read"), ("bsrange", "4k-64k")], Ddir::Read, 16),
            [12, 44, 52, 24, 60, 8, 64, 12, 16, 12, 16, 24, 12, 4, 4, 48]
        );
    }

    #[test]
    fn split_sizes_are_issued_as_written() {
        // Not rounded down to a multiple of the smallest (fio would
        // issue only 4k here).
        near(
            &shares(&[("bssplit", "4k/50:6k/50")], Ddir::Write),
            &[(4096, 50.0), (6144, 50.0)],
        );
        // Shares left unset are whole percents: 33 each, the last entry
        // taking the draws beyond 99 %.
        near(
            &shares(&[("bssplit", "4k:8k:16k")], Ddir::Write),
            &[(4096, 33.0), (8192, 33.0), (16384, 34.0)],
        );
    }

    #[test]
    fn a_split_entry_that_does_not_fit_gives_way_to_the_next_that_does() {
        // With 9000 bytes left a 16k share falls to the next entry that
        // fits; the smallest share first, as fio orders them.
        let opts = [("bssplit", "8k/60:16k/30:4k/10")];
        let b = sizer(&opts);
        let mut rng = draws(&opts, 1);
        for _ in 0..1000 {
            let l = b.pick_within(&mut rng, Ddir::Read, false, 9000).unwrap();
            assert!(l == 4096 || l == 8192, "{l}");
        }
        assert_eq!(b.pick_within(&mut rng, Ddir::Read, false, 4095), None);
    }

    #[test]
    fn a_new_pass_draws_the_same_lengths_again() {
        let opts = [("rw", "write"), ("bsrange", "4k-64k")];
        let b = sizer(&opts);
        let mut rng = draws(&opts, 3);
        let first: Vec<u64> = (0..50)
            .map(|_| b.pick(&mut rng, Ddir::Write, false))
            .collect();
        rng.restart();
        let again: Vec<u64> = (0..50)
            .map(|_| b.pick(&mut rng, Ddir::Write, false))
            .collect();
        assert_eq!(first, again);
        // Another clone draws others.
        let mut other = draws(&opts, 4);
        let theirs: Vec<u64> = (0..50)
            .map(|_| b.pick(&mut other, Ddir::Write, false))
            .collect();
        assert_ne!(first, theirs);
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
        let mut rng = draws(&[], 4);
        for _ in 0..1000 {
            let l = b.pick_within(&mut rng, Ddir::Read, false, 9000).unwrap();
            assert!(l == 4096 || l == 8192, "{l}");
        }
        assert_eq!(b.pick_within(&mut rng, Ddir::Read, false, 4095), None);
    }

    #[test]
    fn range_gives_multiples_of_the_low_end_evenly() {
        let b = sizer(&[("bsrange", "4k-16k")]);
        let mut rng = draws(&[], 1);
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
        let mut rng = draws(&[], 2);
        let mut seen = [false; 4];
        for _ in 0..20_000 {
            seen[(b.pick(&mut rng, Ddir::Write, true) - 1000) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn split_follows_shares_and_seq_rand_indexes_by_randomness() {
        let b = sizer(&[("bssplit", "4k/25:64k/75")]);
        let mut rng = draws(&[], 3);
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
