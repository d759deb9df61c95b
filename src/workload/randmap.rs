//! The random map: remembers which blocks of a file were done in this pass
//! so random I/O touches every block exactly once. A hierarchy of bitmaps
//! (each level marks full words of the level below) finds the next free
//! block from any position in a few word operations, even when the map is
//! nearly full.

#[derive(Clone, Debug)]
pub struct RandomMap {
    nblocks: u64,
    used: u64,
    /// levels[0] has one bit per block; levels[k+1] one bit per full word
    /// of levels[k].
    levels: Vec<Vec<u64>>,
}

impl RandomMap {
    pub fn new(nblocks: u64) -> Self {
        Self::try_new(nblocks).expect("memory for the random map")
    }

    /// The map, or None when its memory cannot be had (`softrandommap`
    /// then carries on without one).
    pub fn try_new(nblocks: u64) -> Option<Self> {
        let mut levels = Vec::new();
        let mut bits = nblocks.max(1);
        loop {
            let words = bits.div_ceil(64);
            let mut level: Vec<u64> = Vec::new();
            level.try_reserve_exact(usize::try_from(words).ok()?).ok()?;
            level.resize(words as usize, 0);
            levels.push(level);
            if words == 1 {
                break;
            }
            bits = words;
        }
        let mut m = RandomMap {
            nblocks,
            used: 0,
            levels,
        };
        m.mark_padding();
        Some(m)
    }

    /// Marks the bits past the end of each level as used so searches skip them.
    fn mark_padding(&mut self) {
        let mut bits = self.nblocks;
        for lvl in 0..self.levels.len() {
            let words = self.levels[lvl].len() as u64;
            let rem = bits % 64;
            if rem != 0 {
                let last = (words - 1) as usize;
                self.levels[lvl][last] |= !0u64 << rem;
                if self.levels[lvl][last] == !0 {
                    self.set_full_upwards(lvl, last as u64);
                }
            }
            bits = words;
        }
    }

    fn set_full_upwards(&mut self, lvl: usize, word: u64) {
        let mut lvl = lvl;
        let mut word = word;
        while lvl + 1 < self.levels.len() {
            let up = &mut self.levels[lvl + 1][(word / 64) as usize];
            *up |= 1u64 << (word % 64);
            if *up != !0 {
                break;
            }
            word /= 64;
            lvl += 1;
        }
    }

    pub fn nblocks(&self) -> u64 {
        self.nblocks
    }

    pub fn is_full(&self) -> bool {
        self.used >= self.nblocks
    }

    pub fn clear(&mut self) {
        for l in &mut self.levels {
            l.iter_mut().for_each(|w| *w = 0);
        }
        self.used = 0;
        self.mark_padding();
    }

    /// Frees every block below `n` (where all the used ones are), at the
    /// cost of those blocks' words rather than the whole map's.
    pub fn clear_below(&mut self, n: u64) {
        let n = n.min(self.nblocks);
        if n == 0 {
            return;
        }
        let mut words = n.div_ceil(64) as usize;
        let last = self.levels[0].len() - 1;
        let mut freed: u64 = self.levels[0][..words]
            .iter()
            .map(|w| w.count_ones() as u64)
            .sum();
        let rem = self.nblocks % 64;
        if words > last && rem != 0 {
            // The padding past the last block, set again below.
            freed -= 64 - rem;
        }
        for lvl in 0..self.levels.len() {
            let words_here = words.min(self.levels[lvl].len());
            self.levels[lvl][..words_here]
                .iter_mut()
                .for_each(|w| *w = 0);
            // The level above marks full words of this one.
            words = words.div_ceil(64);
        }
        self.used -= freed;
        self.mark_padding();
    }

    pub fn is_used(&self, b: u64) -> bool {
        self.levels[0][(b / 64) as usize] & (1u64 << (b % 64)) != 0
    }

    /// Marks a block used; returns false if it already was.
    pub fn mark(&mut self, b: u64) -> bool {
        if b >= self.nblocks {
            return false;
        }
        let w = (b / 64) as usize;
        let bit = 1u64 << (b % 64);
        if self.levels[0][w] & bit != 0 {
            return false;
        }
        self.levels[0][w] |= bit;
        self.used += 1;
        if self.levels[0][w] == !0 {
            self.set_full_upwards(0, w as u64);
        }
        true
    }

    /// Marks block `b`, which is below `nblocks` and free (as
    /// `next_free` and `is_used` say), used.
    #[inline(always)]
    pub fn set(&mut self, b: u64) {
        debug_assert!(b < self.nblocks && !self.is_used(b));
        let w = (b / 64) as usize;
        let word = &mut self.levels[0][w];
        *word |= 1u64 << (b % 64);
        self.used += 1;
        if *word == !0 {
            self.set_full_upwards(0, w as u64);
        }
    }

    /// First free block at or after `from`, wrapping to the start.
    pub fn next_free(&self, from: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        let from = if from >= self.nblocks { 0 } else { from };
        self.find_from(from).or_else(|| self.find_from(0))
    }

    fn find_from(&self, from: u64) -> Option<u64> {
        // Search the first word directly, then climb to find the next
        // non-full word, then descend.
        let w = from / 64;
        let word = self.levels[0][w as usize] | ((1u64 << (from % 64)) - 1);
        if word != !0 {
            let b = w * 64 + (!word).trailing_zeros() as u64;
            return (b < self.nblocks).then_some(b);
        }
        let word_idx = self.next_nonfull(0, w + 1)?;
        let b = word_idx * 64 + (!self.levels[0][word_idx as usize]).trailing_zeros() as u64;
        (b < self.nblocks).then_some(b)
    }

    /// Index of the first non-full word at level `lvl` at or after `start`.
    fn next_nonfull(&self, lvl: usize, start: u64) -> Option<u64> {
        let words = self.levels[lvl].len() as u64;
        if start >= words {
            return None;
        }
        if lvl + 1 >= self.levels.len() {
            return (start..words).find(|&i| self.levels[lvl][i as usize] != !0);
        }
        // Bits at level lvl+1 mark full words at level lvl.
        let up = &self.levels[lvl + 1];
        let uw = start / 64;
        let masked = up[uw as usize] | ((1u64 << (start % 64)) - 1);
        if masked != !0 {
            return Some(uw * 64 + (!masked).trailing_zeros() as u64).filter(|i| *i < words);
        }
        let next_up = self.next_nonfull(lvl + 1, uw + 1)?;
        let i = next_up * 64 + (!up[next_up as usize]).trailing_zeros() as u64;
        (i < words).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;

    #[test]
    fn every_block_once() {
        for n in [1u64, 63, 64, 65, 4096, 100_003] {
            let mut m = RandomMap::new(n);
            let mut r = Rng::new(n);
            let mut count = 0;
            while let Some(b) = m.next_free(r.below(n)) {
                assert!(m.mark(b));
                count += 1;
            }
            assert_eq!(count, n);
            assert!(m.is_full());
            m.clear();
            assert_eq!(m.next_free(0), Some(0));
        }
    }

    #[test]
    fn clearing_the_low_blocks_leaves_the_map_as_if_they_were_never_used() {
        for n in [10u64, 64, 100, 4096, 100_003] {
            let mut m = RandomMap::new(n);
            let low = (n / 3).max(1);
            for b in 0..low {
                m.mark(b);
            }
            m.clear_below(low);
            assert_eq!(m.next_free(0), Some(0), "{n}");
            // Still hands out every block exactly once.
            let mut r = Rng::new(n);
            let mut count = 0;
            while let Some(b) = m.next_free(r.below(n)) {
                assert!(m.mark(b));
                count += 1;
            }
            assert_eq!(count, n, "{n}");
            m.clear_below(n);
            assert_eq!((m.next_free(n - 1), m.is_full()), (Some(n - 1), false));
        }
    }

    #[test]
    fn next_free_wraps() {
        let mut m = RandomMap::new(10);
        for b in 5..10 {
            m.mark(b);
        }
        assert_eq!(m.next_free(7), Some(0));
        assert!(m.is_used(6));
    }
}
