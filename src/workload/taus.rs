//! The combined Tausworthe generators of P. L'Ecuyer ("Maximally
//! equidistributed combined Tausworthe generators", Math. Comp. 65, 1996):
//! taus88 (three 32-bit components) and taus258 (five 64-bit ones), seeded
//! the way fio-compatible job files expect, so that where a job's layout
//! depends on a random draw (`filesize=LOW-HIGH`) iomark draws the very
//! numbers fio 3.33 draws for the same job and clone: the same file sizes.
//!
//! The same holds for the draws that give I/Os a priority of their own
//! (`cmdprio_percentage`): the n-th read or write drawn for gets the
//! priority fio's n-th does.
//!
//! And for block sizes drawn from `bsrange` or `bssplit`: the n-th
//! length of a direction is fio's n-th (see `bs`).
//!
//! And for the direction of a mixed job's I/Os (`rw=rw`, `randrw`): the
//! n-th direction drawn is fio's n-th (see `mix`).
//!
//! Offsets use iomark's own generator (`rng`); only their distribution
//! needs to match, not its sequence.

use crate::job::spec::IoOpts;

/// fio's default `randseed`.
const DEFAULT_RANDSEED: u64 = 0x89;
/// The base every stream is seeded from with `allrandrepeat`.
const ALLRANDREPEAT_BASE: u64 = 0xb189_9bed;
/// The multiplier that spreads one job seed over the job's streams.
const SPREAD: u64 = 0x9e37_0001;

/// The streams a job seeds, in the order their seeds are derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// Block sizes of reads (or of sequential I/O with `bs_is_seq_rand`).
    BlockSize = 0,
    /// Block sizes of writes (or of random I/O with `bs_is_seq_rand`).
    BlockSize1 = 1,
    /// Block sizes of trims.
    BlockSize2 = 2,
    /// The direction of the next I/O of a mixed job (`rwmixread`).
    Mix = 4,
    /// Sizes drawn from a `filesize` range.
    FileSize = 7,
    /// Which I/Os get a priority of their own (`cmdprio_percentage`,
    /// `cmdprio_bssplit`).
    PrioCmds = 19,
}

/// The seed of one stream of the clone numbered `thread_number` (1 for
/// the first clone of the first job, counting every clone of every job
/// before it), from `randseed` (fio's default when `None`).
pub fn stream_seed(
    randseed: Option<u64>,
    allrandrepeat: bool,
    thread_number: u64,
    s: Stream,
) -> u64 {
    let idx = s as u64;
    if allrandrepeat {
        return ALLRANDREPEAT_BASE
            .wrapping_mul(thread_number)
            .wrapping_add(idx);
    }
    let mut seed = randseed.unwrap_or(DEFAULT_RANDSEED);
    for _ in 0..4 + idx {
        seed = seed.wrapping_mul(SPREAD);
    }
    seed.wrapping_mul(thread_number).wrapping_add(idx)
}

/// The seed of stream `s` for the clone numbered `thread_number` when the
/// job asks for repeatable draws (`randrepeat`, `allrandrepeat` or a
/// `randseed`); `None` when it asks for unrepeatable ones, which each
/// caller seeds from its clone's own seed.
pub fn job_stream_seed(io: &IoOpts, thread_number: u64, s: Stream) -> Option<u64> {
    (io.randrepeat || io.allrandrepeat || io.randseed.is_some())
        .then(|| stream_seed(io.randseed, io.allrandrepeat, thread_number, s))
}

/// One generator: 32-bit (`random_generator=tausworthe`) or 64-bit
/// (`tausworthe64`).
#[derive(Clone, Debug)]
pub enum Taus {
    T32([u32; 3]),
    T64([u64; 5]),
}

/// A component must be at least this large (the low bits a component's
/// recurrence drops must not all be zero).
fn floor_at(x: u64, min: u64) -> u64 {
    if x < min {
        x + min
    } else {
        x
    }
}

/// The constant the first component is seeded from (`2^31 + 2^17 + 2^7`
/// as written in C, where `^` is exclusive or: 29 + 19 + 5).
const FIRST: u64 = 53;

impl Taus {
    pub fn new(seed: u64, wide: bool) -> Self {
        let mut t = if wide {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let mut s = [0u64; 5];
            let mins = [1, 7, 15, 33, 49];
            let mut prev = FIRST;
            for (i, m) in mins.iter().enumerate() {
                s[i] = floor_at(lcg(prev), *m);
                prev = s[i];
            }
            Taus::T64(s)
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69_069) ^ seed;
            let s1 = floor_at(lcg(FIRST as u32) as u64, 1) as u32;
            let s2 = floor_at(lcg(s1) as u64, 7) as u32;
            let s3 = floor_at(lcg(s2) as u64, 15) as u32;
            Taus::T32([s1, s2, s3])
        };
        for _ in 0..6 {
            t.draw();
        }
        t
    }

    /// The largest value `draw` returns.
    pub fn max(&self) -> u64 {
        match self {
            Taus::T32(_) => u32::MAX as u64,
            Taus::T64(_) => u64::MAX,
        }
    }

    pub fn draw(&mut self) -> u64 {
        match self {
            Taus::T32(s) => {
                // (mask, shift of the feedback, right shift, left shift)
                fn step(x: u32, a: u32, b: u32, mask: u32, d: u32) -> u32 {
                    ((x & mask) << d) ^ (((x << a) ^ x) >> b)
                }
                s[0] = step(s[0], 13, 19, 0xFFFF_FFFE, 12);
                s[1] = step(s[1], 2, 25, 0xFFFF_FFF8, 4);
                s[2] = step(s[2], 3, 11, 0xFFFF_FFF0, 17);
                (s[0] ^ s[1] ^ s[2]) as u64
            }
            Taus::T64(s) => {
                fn step(x: u64, a: u32, b: u32, mask: u64, d: u32) -> u64 {
                    ((x & mask) << d) ^ (((x << a) ^ x) >> b)
                }
                s[0] = step(s[0], 1, 53, !1, 10);
                s[1] = step(s[1], 24, 50, !511, 5);
                s[2] = step(s[2], 3, 23, !4095, 29);
                s[3] = step(s[3], 5, 24, !131_071, 23);
                s[4] = step(s[4], 3, 33, !8_388_607, 8);
                s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
            }
        }
    }

    /// `scaled(0, 100)` of a 32-bit generator, for a draw per I/O: the
    /// same number (r / 2^32 is exact, so multiplying by 2^-32 instead
    /// of dividing changes nothing) for a fraction of the work.
    #[inline]
    pub fn percent(&mut self) -> u32 {
        match self {
            Taus::T32(_) => {
                let r = self.draw() as u32;
                (100.0 * (f64::from(r) * (1.0 / 4_294_967_296.0))) as u32
            }
            Taus::T64(_) => self.scaled(0, 100) as u32,
        }
    }

    /// `lo + span × u` for a uniform `u` in [0, 1) from the next draw.
    pub fn scaled(&mut self, lo: u64, span: u64) -> u64 {
        let r = self.draw() as f64;
        let u = r / (self.max() as f64 + 1.0);
        lo + (span as f64 * u) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first sizes fio 3.33 gives `filesize=1m-2m nrfiles=3` (bs 4k)
    /// for its first clone, and for the first clone of the third.
    #[test]
    fn file_sizes_are_the_ones_fio_draws() {
        let draw = |tn: u64, n: usize| -> Vec<u64> {
            let mut t = Taus::new(stream_seed(None, false, tn, Stream::FileSize), false);
            (0..n)
                .map(|_| {
                    let v = t.scaled(1 << 20, 1 << 20);
                    v - v % 4096
                })
                .collect()
        };
        assert_eq!(draw(1, 3), [1_196_032, 1_372_160, 1_359_872]);
        assert_eq!(draw(2, 2), [1_343_488, 1_957_888]);
        assert_eq!(draw(3, 2), [1_691_648, 1_650_688]);
    }

    #[test]
    fn percent_is_scaled_to_a_hundred() {
        for wide in [false, true] {
            let (mut a, mut b) = (Taus::new(77, wide), Taus::new(77, wide));
            for _ in 0..100_000 {
                assert_eq!(a.percent() as u64, b.scaled(0, 100));
            }
        }
    }

    #[test]
    fn wide_generator_covers_64_bits_and_repeats_by_seed() {
        let mut a = Taus::new(5, true);
        let mut b = Taus::new(5, true);
        let va: Vec<u64> = (0..64).map(|_| a.draw()).collect();
        assert_eq!(va, (0..64).map(|_| b.draw()).collect::<Vec<_>>());
        assert!(va.iter().any(|v| *v > u32::MAX as u64));
        assert_ne!(va[0], Taus::new(6, true).draw());
    }
}
