//! `random_generator=lfsr`: a maximal-length Galois linear feedback shift
//! register. Its state runs through every non-zero value of its width
//! exactly once per period, so mapping state `v` to block `v - 1` (and
//! skipping values past the last block) visits every block exactly once
//! per pass without a random map.

/// Feedback masks of primitive polynomials for widths 2..=64 (bit i set
/// for a tap at position i + 1), from the well-known maximal-length tap
/// tables; a unit test checks the short ones reach their full period.
const MASKS: [u64; 63] = [
    0x3,
    0x6,
    0xc,
    0x14,
    0x30,
    0x60,
    0xb8,
    0x110,
    0x240,
    0x500,
    0x829,
    0x100d,
    0x2015,
    0x6000,
    0xd008,
    0x12000,
    0x20400,
    0x40023,
    0x90000,
    0x140000,
    0x300000,
    0x420000,
    0xe10000,
    0x1200000,
    0x2000023,
    0x4000013,
    0x9000000,
    0x14000000,
    0x20000029,
    0x48000000,
    0x80200003,
    0x100080000,
    0x204000003,
    0x500000000,
    0x801000000,
    0x100000001f,
    0x2000000031,
    0x4400000000,
    0xa000140000,
    0x12000000000,
    0x300000c0000,
    0x63000000000,
    0xc0000030000,
    0x1b0000000000,
    0x300003000000,
    0x420000000000,
    0xc00000180000,
    0x1008000000000,
    0x3000000c00000,
    0x6000c00000000,
    0x9000000000000,
    0x18003000000000,
    0x30000000030000,
    0x40000040000000,
    0xc0000600000000,
    0x102000000000000,
    0x200004000000000,
    0x600003000000000,
    0xc00000000000000,
    0x1800300000000000,
    0x3000000000000030,
    0x6000000000000000,
    0xd800000000000000,
];

#[derive(Clone, Debug)]
pub struct Lfsr {
    /// Number of blocks.
    n: u64,
    mask: u64,
    start: u64,
    state: u64,
    /// Blocks handed out in this pass.
    given: u64,
}

impl Lfsr {
    /// A sequence over `0..n` starting at a point chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        // Width so that values 1..=n fit: n + 1 <= 2^width.
        let width = (64 - n.leading_zeros()).max(2);
        let mask = MASKS[(width - 2) as usize];
        let top = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let start = 1 + seed % top;
        Lfsr {
            n,
            mask,
            start,
            state: start,
            given: 0,
        }
    }

    #[inline]
    fn step(&mut self) {
        let lsb = self.state & 1;
        self.state >>= 1;
        if lsb != 0 {
            self.state ^= self.mask;
        }
    }

    /// The next block, or `None` once every block was given this pass.
    #[inline]
    pub fn next_block(&mut self) -> Option<u64> {
        if self.given >= self.n {
            return None;
        }
        loop {
            let v = self.state;
            self.step();
            if v <= self.n {
                self.given += 1;
                return Some(v - 1);
            }
        }
    }

    /// Starts a new pass from the same point.
    pub fn reset(&mut self) {
        self.state = self.start;
        self.given = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_widths_have_full_period() {
        for width in 2u32..=20 {
            let mask = MASKS[(width - 2) as usize];
            let mut s = 1u64;
            let mut period = 0u64;
            loop {
                let lsb = s & 1;
                s >>= 1;
                if lsb != 0 {
                    s ^= mask;
                }
                period += 1;
                if s == 1 {
                    break;
                }
                assert!(period < (1 << width), "width {width} does not cycle");
            }
            assert_eq!(period, (1u64 << width) - 1, "width {width}");
        }
    }

    #[test]
    fn every_block_exactly_once_per_pass() {
        for n in [1u64, 2, 3, 7, 8, 1000, 65_537] {
            let mut l = Lfsr::new(n, 12345);
            for _ in 0..2 {
                let mut seen = vec![false; n as usize];
                while let Some(b) = l.next_block() {
                    assert!(!seen[b as usize], "n={n}: block {b} twice");
                    seen[b as usize] = true;
                }
                assert!(seen.iter().all(|s| *s), "n={n}: a block was missed");
                l.reset();
            }
        }
    }
}
