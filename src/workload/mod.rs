//! What to issue next: direction, file, offset and length of every I/O,
//! and when a sync is due. Owns the per-file cursors and random maps and
//! the counters that decide when a pass is done.
//!
//! It does no I/O and reads no clock except through arguments; the worker
//! (`run::worker`) asks it for the next I/O and tells it when a new pass
//! (loop, or time_based repeat) starts.

pub mod buffers;
pub mod iolog;
pub mod randmap;
pub mod rng;

use crate::engine::Op;
use crate::job::spec::{BlockSizes, Ddir, JobSpec, RwPattern, RwSequencer};
use randmap::RandomMap;
use rng::Rng;

/// The region of one file that the job does I/O to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    pub op: Op,
    pub file: u32,
    pub offset: u64,
    pub len: u64,
}

/// Why `next` returned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// This pass's bytes (or I/O count) are done.
    PassDone,
}

struct FileCursor {
    region: Region,
    last_pos: [u64; 3],
    map: Option<RandomMap>,
    /// No more I/O in this file for this pass.
    done: bool,
}

pub struct Workload {
    rw: RwPattern,
    rwmixread: f64,
    bs: [BlockSizes; 3],
    /// Granularity of random offsets and of the random map.
    align: [u64; 3],
    min_bs: u64,
    seq_skip: u64,
    rand_run: u64,
    sequencer: RwSequencer,
    percentage_random: [f64; 3],
    use_map: bool,
    files: Vec<FileCursor>,
    cur_file: usize,
    rng_dir: Rng,
    rng_off: Rng,
    rng_bs: Rng,
    rng_mix: Rng,
    /// Bytes to issue per pass (all directions).
    pass_bytes: u64,
    number_ios: u64,
    issued_bytes: u64,
    issued_ios: u64,
    /// Random run state for `rw=randX:N`.
    run_left: u64,
    run_pos: Option<(usize, u64)>,
    /// Sync scheduling.
    fsync_every: u64,
    fdatasync_every: u64,
    sfr: Option<(u32, u64)>,
    writes_since_sync: u64,
    sync_pending: Option<Op>,
    /// For trimwrite: the write that follows each trim.
    pending_write: Option<NextIo>,
    /// `read_iolog`: the I/O comes from a trace instead.
    replay: Option<iolog::Replay>,
}

/// Purposes for random streams.
const STREAM_DIR: u64 = 1;
const STREAM_OFF: u64 = 2;
const STREAM_BS: u64 = 3;
const STREAM_MIX: u64 = 4;

impl Workload {
    /// `regions` are the files' I/O regions; `pass_bytes` the bytes per pass.
    pub fn new(spec: &JobSpec, regions: &[Region], pass_bytes: u64, seed: u64) -> Self {
        let io = &spec.io;
        let min_bs = Ddir::ALL
            .iter()
            .filter(|d| io.rw.has(**d))
            .map(|d| io.bs[d.idx()].min())
            .min()
            .unwrap_or(4096)
            .max(1);
        let align = [0, 1, 2].map(|i| io.blockalign[i].unwrap_or(io.bs[i].min()).max(1));
        let use_map = io.rw.is_random() && !io.norandommap;
        let map_unit = align
            .iter()
            .copied()
            .min()
            .unwrap_or(min_bs)
            .min(min_bs)
            .max(1);
        let files = regions
            .iter()
            .map(|r| FileCursor {
                region: *r,
                last_pos: [r.start; 3],
                map: use_map.then(|| RandomMap::new(r.len / map_unit)),
                done: false,
            })
            .collect();
        Workload {
            rw: io.rw,
            rwmixread: io.rwmixread,
            bs: io.bs.clone(),
            align,
            min_bs: map_unit,
            seq_skip: if io.rw.is_random() { 0 } else { io.rw_nr },
            rand_run: io.rw_nr.max(1),
            sequencer: io.rw_sequencer,
            percentage_random: io.percentage_random,
            use_map,
            files,
            cur_file: 0,
            rng_dir: Rng::stream(seed, STREAM_DIR),
            rng_off: Rng::stream(seed, STREAM_OFF),
            rng_bs: Rng::stream(seed, STREAM_BS),
            rng_mix: Rng::stream(seed, STREAM_MIX),
            pass_bytes,
            number_ios: spec.file.number_ios,
            issued_bytes: 0,
            issued_ios: 0,
            run_left: 0,
            run_pos: None,
            fsync_every: spec.sync.fsync,
            fdatasync_every: spec.sync.fdatasync,
            sfr: spec.sync.sync_file_range,
            writes_since_sync: 0,
            sync_pending: None,
            pending_write: None,
            replay: None,
        }
    }

    /// Takes every I/O from a trace instead of generating it.
    pub fn set_replay(&mut self, replay: iolog::Replay) {
        self.replay = Some(replay);
    }

    /// When replaying with timing: the clock time (ns) at which the I/O
    /// last returned by `next_io` is due.
    #[inline]
    pub fn replay_due_ns(&mut self, now: u64) -> Option<u64> {
        self.replay.as_mut()?.due_ns(now)
    }

    /// Starts a new pass: cursors back to the start, random maps cleared.
    pub fn reset_pass(&mut self) {
        for f in &mut self.files {
            f.last_pos = [f.region.start; 3];
            f.done = false;
            if let Some(m) = &mut f.map {
                m.clear();
            }
        }
        self.issued_bytes = 0;
        self.issued_ios = 0;
        self.run_left = 0;
        self.run_pos = None;
        self.cur_file = 0;
        self.pending_write = None;
    }

    pub fn issued_bytes(&self) -> u64 {
        self.issued_bytes
    }

    /// The next I/O (or sync) to issue, or why there is none.
    pub fn next_io(&mut self) -> Result<NextIo, Exhausted> {
        if let Some(r) = self.replay.as_mut() {
            return r.next_io().ok_or(Exhausted::PassDone);
        }
        if let Some(op) = self.sync_pending.take() {
            let file = self.cur_file as u32;
            return Ok(NextIo {
                op,
                file,
                offset: 0,
                len: 0,
            });
        }
        if let Some(w) = self.pending_write.take() {
            return Ok(self.account(w));
        }
        if self.issued_bytes >= self.pass_bytes
            || (self.number_ios > 0 && self.issued_ios >= self.number_ios)
        {
            return Err(Exhausted::PassDone);
        }
        let ddir = self.pick_ddir();
        let nfiles = self.files.len();
        for _ in 0..nfiles.max(1) * 2 {
            if self.files.iter().all(|f| f.done) {
                // Every file finished before the byte budget: wrap for more.
                if self.issued_bytes == 0 {
                    return Err(Exhausted::PassDone);
                }
                self.rewind_files();
            }
            let fi = self.cur_file;
            if self.files[fi].done {
                self.cur_file = (self.cur_file + 1) % nfiles;
                continue;
            }
            match self.offset_in(fi, ddir) {
                Some((offset, len)) => {
                    if nfiles > 1 {
                        self.cur_file = (self.cur_file + 1) % nfiles;
                    }
                    let op = match ddir {
                        Ddir::Read => Op::Read,
                        Ddir::Write => Op::Write,
                        Ddir::Trim => Op::Trim,
                    };
                    let io = NextIo {
                        op,
                        file: fi as u32,
                        offset,
                        len,
                    };
                    if matches!(self.rw, RwPattern::TrimWrite | RwPattern::RandTrimWrite) {
                        self.pending_write = Some(NextIo {
                            op: Op::Write,
                            ..io
                        });
                    }
                    return Ok(self.account(io));
                }
                None => {
                    self.files[fi].done = true;
                }
            }
        }
        Err(Exhausted::PassDone)
    }

    /// Resets cursors (not counters) when the files are exhausted but the
    /// pass needs more bytes (io_size larger than size).
    fn rewind_files(&mut self) {
        for f in &mut self.files {
            f.last_pos = [f.region.start; 3];
            f.done = false;
            if let Some(m) = &mut f.map {
                m.clear();
            }
        }
    }

    fn account(&mut self, io: NextIo) -> NextIo {
        self.issued_bytes += io.len;
        self.issued_ios += 1;
        if io.op == Op::Write {
            self.writes_since_sync += 1;
            let n = self.writes_since_sync;
            if self.fsync_every > 0 && n % self.fsync_every == 0 {
                self.sync_pending = Some(Op::Fsync);
            } else if self.fdatasync_every > 0 && n % self.fdatasync_every == 0 {
                self.sync_pending = Some(Op::Fdatasync);
            } else if let Some((_, every)) = self.sfr {
                if n % every == 0 {
                    self.sync_pending = Some(Op::SyncFileRange);
                }
            }
        }
        io
    }

    fn pick_ddir(&mut self) -> Ddir {
        match self.rw {
            RwPattern::Read | RwPattern::RandRead => Ddir::Read,
            RwPattern::Write | RwPattern::RandWrite => Ddir::Write,
            RwPattern::Trim
            | RwPattern::RandTrim
            | RwPattern::TrimWrite
            | RwPattern::RandTrimWrite => Ddir::Trim,
            RwPattern::ReadWrite | RwPattern::RandRw => {
                if self.rwmixread >= 100.0 {
                    Ddir::Read
                } else if self.rwmixread <= 0.0 {
                    Ddir::Write
                } else if self.rng_dir.percent() < self.rwmixread {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    fn pick_len(&mut self, d: Ddir) -> u64 {
        match &self.bs[d.idx()] {
            BlockSizes::Range { lo, hi } if lo == hi => *lo,
            BlockSizes::Range { lo, hi } => {
                let v = lo + self.rng_bs.below(hi - lo + 1);
                // Keep lengths multiples of the minimum block size.
                (v / lo * lo).clamp(*lo, *hi)
            }
            BlockSizes::Split(entries) => {
                let p = self.rng_bs.percent();
                let mut acc = 0.0;
                for e in entries {
                    acc += e.perc;
                    if p < acc {
                        return if e.lo == e.hi {
                            e.lo
                        } else {
                            e.lo + self.rng_bs.below(e.hi - e.lo + 1) / e.lo * e.lo
                        };
                    }
                }
                entries.last().map(|e| e.hi).unwrap_or(4096)
            }
        }
    }

    fn is_random_io(&mut self, d: Ddir) -> bool {
        if !self.rw.is_random() {
            return false;
        }
        let p = self.percentage_random[d.idx()];
        p >= 100.0 || (p > 0.0 && self.rng_mix.percent() < p)
    }

    /// Offset and length for the next I/O of `d` in file `fi`, or `None`
    /// when the file has nothing left for this pass.
    fn offset_in(&mut self, fi: usize, d: Ddir) -> Option<(u64, u64)> {
        let mut len = self.pick_len(d);
        let region = self.files[fi].region;
        let end = region.start + region.len;
        if self.is_random_io(d) {
            // rw=randX:N: N I/Os per random offset, sequential or identical.
            if self.run_left > 0 {
                if let Some((rf, pos)) = self.run_pos {
                    if rf == fi {
                        self.run_left -= 1;
                        let off = match self.sequencer {
                            RwSequencer::Identical => pos,
                            RwSequencer::Sequential => pos,
                        };
                        if off + len <= end {
                            if self.sequencer == RwSequencer::Sequential {
                                self.run_pos = Some((fi, off + len));
                            }
                            return Some((off, len));
                        }
                    }
                }
            }
            let off = self.random_offset(fi, d, len)?;
            if off + len > end {
                len = end - off;
            }
            if self.rand_run > 1 {
                self.run_left = self.rand_run - 1;
                let next = match self.sequencer {
                    RwSequencer::Sequential => off + len,
                    RwSequencer::Identical => off,
                };
                self.run_pos = Some((fi, next));
            }
            return Some((off, len));
        }
        let f = &mut self.files[fi];
        let pos = f.last_pos[d.idx()];
        if pos >= end || pos + self.min_bs.min(len) > end {
            return None;
        }
        if pos + len > end {
            if self.bs[d.idx()].is_fixed() {
                return None;
            }
            len = (end - pos) / self.min_bs * self.min_bs;
            if len == 0 {
                return None;
            }
        }
        f.last_pos[d.idx()] = pos + len + self.seq_skip;
        Some((pos, len))
    }

    fn random_offset(&mut self, fi: usize, d: Ddir, len: u64) -> Option<u64> {
        let unit = self.min_bs;
        let align = self.align[d.idx()].max(unit);
        let f = &mut self.files[fi];
        let region = f.region;
        if self.use_map {
            let map = f.map.as_mut()?;
            let nblocks = map.nblocks();
            if nblocks == 0 {
                return None;
            }
            let step = (align / unit).max(1);
            let slots = nblocks.div_ceil(step);
            let start = self.rng_off.below(slots) * step;
            let b = map.next_free(start)?;
            let span = len.div_ceil(unit).max(1);
            for i in 0..span {
                map.mark(b + i);
            }
            return Some(region.start + b * unit);
        }
        let slots = region.len.saturating_sub(len) / align + 1;
        if region.len < unit {
            return None;
        }
        Some(region.start + self.rng_off.below(slots) * align)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{apply, lookup};

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            apply(&mut s, lookup(k).unwrap(), Some(v)).unwrap();
        }
        s
    }

    fn drain(w: &mut Workload) -> Vec<NextIo> {
        let mut v = Vec::new();
        while let Ok(io) = w.next_io() {
            v.push(io);
        }
        v
    }

    #[test]
    fn sequential_covers_region_in_order() {
        let s = spec(&[("rw", "read"), ("bs", "4k")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 64 << 10,
            }],
            64 << 10,
            1,
        );
        let ios = drain(&mut w);
        assert_eq!(ios.len(), 16);
        assert!(ios
            .iter()
            .enumerate()
            .all(|(i, io)| io.offset == i as u64 * 4096));
    }

    #[test]
    fn random_map_touches_each_block_once() {
        let s = spec(&[("rw", "randwrite"), ("bs", "4k")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 1 << 20,
            }],
            1 << 20,
            9,
        );
        let mut offs: Vec<u64> = drain(&mut w).iter().map(|i| i.offset).collect();
        assert_eq!(offs.len(), 256);
        offs.sort();
        offs.dedup();
        assert_eq!(offs.len(), 256);
    }

    #[test]
    fn fsync_every_n_writes() {
        let s = spec(&[("rw", "write"), ("fsync", "4")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 64 << 10,
            }],
            64 << 10,
            1,
        );
        let ios = drain(&mut w);
        assert_eq!(ios.iter().filter(|i| i.op == Op::Fsync).count(), 4);
        assert_eq!(ios[4].op, Op::Fsync);
    }

    #[test]
    fn mix_follows_rwmixread() {
        let s = spec(&[("rw", "randrw"), ("rwmixread", "70")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 64 << 20,
            }],
            64 << 20,
            3,
        );
        let ios = drain(&mut w);
        let reads = ios.iter().filter(|i| i.op == Op::Read).count() as f64;
        let share = reads / ios.len() as f64;
        assert!((share - 0.7).abs() < 0.02, "read share {share}");
    }

    #[test]
    fn io_size_beyond_size_wraps() {
        let s = spec(&[("rw", "read")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 16 << 10,
            }],
            64 << 10,
            1,
        );
        assert_eq!(drain(&mut w).len(), 16);
    }

    #[test]
    fn sequential_holes() {
        let s = spec(&[("rw", "write:4k")]);
        let mut w = Workload::new(
            &s,
            &[Region {
                start: 0,
                len: 32 << 10,
            }],
            16 << 10,
            1,
        );
        let offs: Vec<u64> = drain(&mut w).iter().map(|i| i.offset).collect();
        assert_eq!(offs, vec![0, 8192, 16384, 24576]);
    }
}
