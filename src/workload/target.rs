//! Offsets inside one file: sequential cursors (with `rw=…:N` holes and
//! backwards runs), random offsets (uniform with or without the random
//! map, `lfsr`, or a non-uniform distribution), and strided zones.
//!
//! A `FileTarget` keeps one file's cursors, map and generators for the
//! current pass. It decides nothing about directions, lengths or files;
//! the workload asks it for an offset for a given direction and length.

use super::dist::BlockPicker;
use super::lfsr::Lfsr;
use super::randmap::RandomMap;
use super::rng::Rng;
use super::Region;
use crate::job::spec::{Ddir, RandomDistribution};

/// Settings shared by every file of a job.
#[derive(Clone, Debug)]
pub struct TargetCfg {
    /// Granularity of random offsets and of the random map (the smallest
    /// block size or alignment the job uses).
    pub unit: u64,
    /// Alignment of random offsets per direction (`blockalign`).
    pub align: [u64; 3],
    /// Bytes added after each sequential I/O (negative: backwards).
    pub seq_add: i64,
    pub use_map: bool,
    pub use_lfsr: bool,
    /// `zonemode=strided`: (zonesize, zonerange, zoneskip).
    pub zones: Option<(u64, u64, u64)>,
}

#[derive(Clone, Debug)]
pub struct FileTarget {
    pub region: Region,
    nblocks: u64,
    /// Per direction, for the random map: blocks between aligned
    /// offsets, and how many aligned offsets there are.
    map_step: [u64; 3],
    map_slots: [u64; 3],
    /// Start and end of the last I/O of each direction.
    last_start: [u64; 3],
    last_end: [u64; 3],
    fresh: [bool; 3],
    map: Option<RandomMap>,
    /// The random map was wanted but its memory could not be had.
    pub map_failed: bool,
    lfsr: Option<Lfsr>,
    pickers: [Option<BlockPicker>; 3],
    zone_start: u64,
    zone_pos: u64,
    zone_done: u64,
    /// One past the highest block (from the zone's start) the random map
    /// marked since it was last cleared.
    zone_hi: u64,
}

impl FileTarget {
    /// Blocks of the region (in minimum block size units).
    pub fn blocks(&self) -> u64 {
        self.nblocks
    }

    pub fn new(
        region: Region,
        cfg: &TargetCfg,
        dists: &[RandomDistribution; 3],
        random: bool,
        seed: u64,
    ) -> Self {
        let nblocks = region.len / cfg.unit.max(1);
        let any_uniform = dists.iter().any(|d| d.is_uniform());
        let want_map = random && cfg.use_map && !cfg.use_lfsr && any_uniform;
        // In strided zones the map covers one zone, indexed from its start.
        let map_blocks = match cfg.zones {
            Some((_, range, _)) => (range / cfg.unit.max(1)).clamp(1, nblocks.max(1)),
            None => nblocks,
        };
        let map = want_map.then(|| RandomMap::try_new(map_blocks)).flatten();
        let lfsr = (random && cfg.use_lfsr).then(|| Lfsr::new(nblocks, seed));
        let map_step = cfg.align.map(|a| (a / cfg.unit.max(1)).max(1));
        let map_slots = map_step.map(|step| nblocks.div_ceil(step));
        let pickers = [0, 1, 2].map(|i| {
            (random && !dists[i].is_uniform())
                .then(|| BlockPicker::new(&dists[i], nblocks, cfg.unit, seed ^ i as u64))
        });
        let mut t = FileTarget {
            region,
            nblocks,
            map_step,
            map_slots,
            last_start: [region.start; 3],
            last_end: [region.start; 3],
            fresh: [true; 3],
            map_failed: want_map && map.is_none(),
            map,
            lfsr,
            pickers,
            zone_start: region.start,
            zone_pos: region.start,
            zone_done: 0,
            zone_hi: 0,
        };
        t.reset();
        t
    }

    /// Back to the start of the region for a new pass.
    pub fn reset(&mut self) {
        let s = self.region.start;
        self.last_start = [s; 3];
        self.last_end = [s; 3];
        self.fresh = [true; 3];
        if let Some(m) = &mut self.map {
            m.clear();
        }
        if let Some(l) = &mut self.lfsr {
            l.reset();
        }
        self.zone_start = s;
        self.zone_pos = s;
        self.zone_done = 0;
        self.zone_hi = 0;
    }

    /// Whether direction `d` has done nothing since the last reset.
    pub fn is_fresh(&self, d: Ddir) -> bool {
        self.fresh[d.idx()]
    }

    fn end(&self) -> u64 {
        self.region.start + self.region.len
    }

    /// Where the last I/O of direction `d` ended.
    pub fn last_end(&self, d: Ddir) -> u64 {
        self.last_end[d.idx()]
    }

    /// Sequential I/O of direction `d` goes on from `pos` (a zoned
    /// device's zone end past its capacity).
    pub fn skip_to(&mut self, d: Ddir, pos: u64) {
        let i = d.idx();
        self.last_end[i] = pos;
        self.fresh[i] = false;
    }

    /// The last I/O of direction `d` really went to `off` (moved there by
    /// the zones of `zonemode=zbd`).
    pub fn moved_to(&mut self, d: Ddir, off: u64, len: u64) {
        self.record(d, off, len);
    }

    fn record(&mut self, d: Ddir, off: u64, len: u64) -> Option<(u64, u64)> {
        let i = d.idx();
        self.last_start[i] = off;
        self.last_end[i] = off + len;
        self.fresh[i] = false;
        Some((off, len))
    }

    /// The next sequential I/O of a sequential pattern, or `None` when the
    /// file has nothing left in this pass. A length that does not fit
    /// before the region's end is replaced by `fit(room)` (another length
    /// of at most `room` bytes, or `None` when none fits).
    pub fn sequential(
        &mut self,
        d: Ddir,
        len: u64,
        cfg: &TargetCfg,
        fit: impl FnOnce(u64) -> Option<u64>,
    ) -> Option<(u64, u64)> {
        let (start, end) = (self.region.start, self.end());
        let i = d.idx();
        let pos = if self.fresh[i] {
            start
        } else {
            let last = self.last_end[i];
            if last >= end {
                return None;
            }
            let p = last as i64 + cfg.seq_add;
            // A hole past the end goes round to the start only when, as
            // in fio, it passes the file's size counted from the region's
            // start (the file ends at the region's end): with an offset the
            // run just ends with the region.
            if cfg.seq_add > 0 && p - start as i64 >= end as i64 {
                start
            } else if cfg.seq_add < 0 && p < start as i64 {
                // Backwards runs wrap to the end.
                (end as i64 + cfg.seq_add).max(start as i64) as u64
            } else {
                p as u64
            }
        };
        let mut len = len;
        if pos + len > end {
            len = fit(end.saturating_sub(pos))?;
        }
        self.record(d, pos, len)
    }

    /// A non-random I/O in a random job (`percentage_random`, `rw=randX:N`):
    /// it continues after the last I/O of the direction (or repeats its
    /// offset when `identical`), wrapping at the end of the region.
    pub fn follow(&mut self, d: Ddir, len: u64, identical: bool) -> Option<(u64, u64)> {
        let (start, end) = (self.region.start, self.end());
        let i = d.idx();
        let mut pos = if identical {
            self.last_start[i]
        } else {
            self.last_end[i]
        };
        let len = len.min(self.region.len);
        if pos + len > end {
            pos = start;
        }
        self.record(d, pos, len)
    }

    /// A random offset, or `None` when the random map (or lfsr) has given
    /// every block in this pass. A length that does not fit before the
    /// region's end is replaced by `fit(room)` as in `sequential`.
    #[inline(always)]
    pub fn random(
        &mut self,
        d: Ddir,
        len: u64,
        cfg: &TargetCfg,
        rng: &mut Rng,
        fit: impl FnOnce(u64) -> Option<u64>,
    ) -> Option<(u64, u64)> {
        let (start, end) = (self.region.start, self.end());
        let unit = cfg.unit.max(1);
        if self.region.len == 0 {
            return None;
        }
        let fitted = |off: u64| {
            let room = end - off;
            if len <= room {
                len
            } else {
                fit(room).unwrap_or(room)
            }
        };
        if let Some(l) = &mut self.lfsr {
            let b = l.next_block()?;
            let off = start + b * unit;
            return self.record(d, off, fitted(off));
        }
        if let Some(p) = &self.pickers[d.idx()] {
            let b = p.pick(rng);
            let off = start + b * unit;
            return self.record(d, off, fitted(off));
        }
        if let Some(map) = &mut self.map {
            if self.nblocks == 0 {
                return None;
            }
            let (step, slots) = (self.map_step[d.idx()], self.map_slots[d.idx()]);
            let b = map.next_free(rng.below(slots) * step)?;
            // A length that fits before the end, cut at the first block
            // already done; `b` itself is free.
            let len = fitted(start + b * unit);
            map.set(b);
            let mut run = 1;
            if len > unit {
                let want = len.div_ceil(unit);
                while run < want && b + run < self.nblocks && !map.is_used(b + run) {
                    map.set(b + run);
                    run += 1;
                }
            }
            let off = start + b * unit;
            let len = len.min(run * unit).min(end - off);
            return self.record(d, off, len);
        }
        let align = cfg.align[d.idx()].max(1);
        if len >= self.region.len {
            return self.record(d, start, self.region.len);
        }
        let slots = (self.region.len - len) / align + 1;
        let off = start + rng.below(slots) * align;
        self.record(d, off, len)
    }

    /// `zonemode=strided`: `zonesize` bytes of I/O in each zone of
    /// `zonerange` bytes, then on to the next zone `zoneskip` bytes further,
    /// back to the first after the last. Each visit (and each `zonerange`
    /// bytes of a longer one) starts the zone afresh, as fio does: a
    /// sequential pattern at the zone's start, a random one with an empty
    /// random map, so later visits may touch blocks earlier ones did.
    pub fn zoned(
        &mut self,
        d: Ddir,
        len: u64,
        random: bool,
        cfg: &TargetCfg,
        rng: &mut Rng,
        fit: impl FnOnce(u64) -> Option<u64>,
    ) -> Option<(u64, u64)> {
        let (size, range, skip) = cfg.zones?;
        let (start, end) = (self.region.start, self.end());
        if self.region.len == 0 {
            return None;
        }
        if self.zone_done >= size {
            self.zone_start += range + skip;
            if self.zone_start >= end {
                self.zone_start = start;
            }
            self.zone_done = 0;
        }
        if self.zone_done.is_multiple_of(range.max(1)) {
            self.zone_pos = self.zone_start;
            if let Some(m) = &mut self.map {
                m.clear_below(self.zone_hi);
                self.zone_hi = 0;
            }
        }
        let zs = self.zone_start;
        let ze = (zs + range).min(end);
        let (off, len) = if random {
            self.random_in_zone(d, len, range, cfg, rng, fit)?
        } else {
            let len = len.min(ze - zs);
            let mut pos = self.zone_pos;
            if pos + len > ze {
                pos = zs;
            }
            self.zone_pos = pos + len;
            (pos, len)
        };
        self.zone_done += len;
        self.record(d, off, len)
    }

    /// A random block among the zone's first `range` bytes, counted from
    /// the zone's start; with the random map (one zone's blocks), a block
    /// already done gives way to the next free one in the zone.
    fn random_in_zone(
        &mut self,
        d: Ddir,
        len: u64,
        range: u64,
        cfg: &TargetCfg,
        rng: &mut Rng,
        fit: impl FnOnce(u64) -> Option<u64>,
    ) -> Option<(u64, u64)> {
        let zs = self.zone_start;
        let end = self.end();
        let fitted = |off: u64| {
            let room = end - off;
            if len <= room {
                len
            } else {
                fit(room).unwrap_or(room)
            }
        };
        if let Some(map) = &mut self.map {
            let unit = cfg.unit.max(1);
            let mut b = map.next_free(rng.below((range / unit).max(1)))?;
            if zs + b * unit >= end {
                b = map.next_free(0)?;
            }
            let off = zs + b * unit;
            let len = fitted(off);
            let mut run = 0;
            while run < len.div_ceil(unit).max(1) && map.mark(b + run) {
                run += 1;
            }
            self.zone_hi = self.zone_hi.max(b + run);
            return Some((off, len.min(run * unit)));
        }
        let align = cfg.align[d.idx()].max(1);
        let off = zs + rng.below((range / align).max(1)) * align;
        if off >= end {
            return Some((zs, fitted(zs)));
        }
        Some((off, fitted(off)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TargetCfg {
        TargetCfg {
            unit: 4096,
            align: [4096; 3],
            seq_add: 0,
            use_map: true,
            use_lfsr: false,
            zones: None,
        }
    }

    const UNIFORM: [RandomDistribution; 3] = [
        RandomDistribution::Random,
        RandomDistribution::Random,
        RandomDistribution::Random,
    ];

    fn k(v: u64) -> u64 {
        v * 1024
    }

    fn seq_offsets(len_region: u64, add: i64, n: usize) -> Vec<u64> {
        let c = TargetCfg {
            seq_add: add,
            ..cfg()
        };
        let region = Region {
            start: 0,
            len: len_region,
        };
        let mut t = FileTarget::new(region, &c, &UNIFORM, false, 1);
        (0..n)
            .map_while(|_| t.sequential(Ddir::Read, 4096, &c, |_| None))
            .map(|(o, _)| o / 1024)
            .collect()
    }

    #[test]
    fn holes_wrap_to_the_start_but_stop_when_the_last_io_ends_at_the_end() {
        assert_eq!(
            seq_offsets(k(64), 4096, 10),
            [0, 8, 16, 24, 32, 40, 48, 56, 0, 8]
        );
        assert_eq!(seq_offsets(k(60), 4096, 10), [0, 8, 16, 24, 32, 40, 48, 56]);
    }

    #[test]
    fn backwards_runs_wrap_to_the_end() {
        assert_eq!(
            seq_offsets(k(32), -8192, 9),
            [0, 24, 20, 16, 12, 8, 4, 0, 24]
        );
    }

    #[test]
    fn variable_lengths_are_cut_at_the_end() {
        let c = cfg();
        let region = Region {
            start: 0,
            len: k(20),
        };
        let mut t = FileTarget::new(region, &c, &UNIFORM, false, 1);
        assert_eq!(
            t.sequential(Ddir::Write, k(16), &c, |room| Some(room / 4096 * 4096)
                .filter(|l| *l > 0)),
            Some((0, k(16)))
        );
        assert_eq!(
            t.sequential(Ddir::Write, k(16), &c, |room| Some(room / 4096 * 4096)
                .filter(|l| *l > 0)),
            Some((k(16), k(4)))
        );
        assert_eq!(
            t.sequential(Ddir::Write, k(16), &c, |room| Some(room / 4096 * 4096)
                .filter(|l| *l > 0)),
            None
        );
    }

    #[test]
    fn random_lengths_stop_at_blocks_already_done() {
        let c = cfg();
        let region = Region {
            start: 0,
            len: k(64),
        };
        let mut t = FileTarget::new(region, &c, &UNIFORM, true, 1);
        let mut rng = Rng::new(3);
        let mut total = 0;
        let mut covered = [false; 16];
        while let Some((off, len)) = t.random(Ddir::Write, k(12), &c, &mut rng, Some) {
            for b in off / 4096..(off + len) / 4096 {
                assert!(!covered[b as usize], "block {b} twice");
                covered[b as usize] = true;
            }
            total += len;
        }
        assert_eq!(total, k(64));
    }

    #[test]
    fn zones_do_zonesize_then_skip() {
        let c = TargetCfg {
            zones: Some((k(8), k(16), k(16))),
            ..cfg()
        };
        let region = Region {
            start: 0,
            len: k(96),
        };
        let mut t = FileTarget::new(region, &c, &UNIFORM, false, 1);
        let mut rng = Rng::new(1);
        let offs: Vec<u64> = (0..8)
            .map(|_| {
                t.zoned(Ddir::Read, 4096, false, &c, &mut rng, |_| None)
                    .unwrap()
                    .0
                    / 1024
            })
            .collect();
        assert_eq!(offs, [0, 4, 32, 36, 64, 68, 0, 4]);
    }

    /// Distinct 4k blocks among `n` random I/Os in strided zones over 16 MiB.
    fn distinct_in_zones(zones: (u64, u64, u64), n: usize) -> usize {
        let c = TargetCfg {
            zones: Some(zones),
            ..cfg()
        };
        let region = Region {
            start: 0,
            len: 16 << 20,
        };
        let mut t = FileTarget::new(region, &c, &UNIFORM, true, 1);
        let mut rng = Rng::new(8);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..n {
            let (off, len) = t
                .zoned(Ddir::Read, 4096, true, &c, &mut rng, |_| None)
                .unwrap();
            assert_eq!(len, 4096);
            let z = off % k(256);
            assert!(z < k(128), "offset {off} outside its zone");
            seen.insert(off / 4096);
        }
        seen.len()
    }

    #[test]
    fn each_visit_to_a_zone_starts_with_an_empty_random_map() {
        // Two visits of half a zone each: about 1 - 1/4 of the blocks are
        // new (fio: 74.0-75.5 % over five seeds).
        let d = distinct_in_zones((k(64), k(128), k(128)), 2048);
        assert!((1500..1560).contains(&d), "{d} distinct of 2048");
        // A visit twice the zone's range covers the zone twice, each time
        // every block once: exactly half are distinct.
        let d = distinct_in_zones((k(256), k(128), k(128)), 2048);
        assert_eq!(d, 1024);
    }
}
