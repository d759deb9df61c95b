//! What to issue next: direction, file, offset and length of every I/O,
//! and when a sync is due. Owns the per-file targets (cursors, random
//! maps, generators), the file chooser and the counters that decide when
//! a pass and a loop are done.
//!
//! The rules follow what fio does for the same job: a loop issues I/O
//! while fewer than `size` (or `io_size`) bytes and `number_ios` I/Os were
//! issued and some file still has work; after `loops` loops, further
//! passes run while `io_size` is not yet reached. A sync (`fsync`,
//! `fdatasync`, `sync_file_range`) takes the slot of the next I/O when the
//! write count is a multiple of its interval and the previous operation
//! was not a sync; it goes to the file of that next I/O.
//!
//! It does no I/O and reads no clock; the worker (`run::worker`) asks it
//! for the next I/O and tells it when a loop or extra pass starts. Nothing
//! here allocates after `new`.

pub mod bs;
pub mod buffers;
pub mod dist;
pub mod fileservice;
pub mod iolog;
pub mod lfsr;
pub mod mix;
pub mod pacing;
pub mod prio;
pub mod randmap;
pub mod rng;
pub mod target;
pub mod taus;
pub mod verify;
pub mod zbd;

use crate::engine::Op;
use crate::job::spec::{Ddir, JobSpec, RandomGenerator, RwPattern, RwSequencer, ZoneMode};
use bs::{BlockSizer, BsDraws};
use fileservice::{FileChooser, FileEvent};
use rng::Rng;
use target::{FileTarget, TargetCfg};

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

/// Why `next_io` returned nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    /// This pass's bytes (or I/O count) are done, or every file is.
    PassDone,
    /// `zonemode=zbd`: the next write needs a zone another job is
    /// writing: the worker completes its I/O, calls
    /// [`Workload::zbd_wait`] and asks again (for the same write).
    ZoneWait,
}

/// Builds the jobs of `src` (the job language) and checks each for what
/// running it needs (`check_job`); errors name where the job was defined.
pub fn checked_jobs(
    src: &crate::job::JobSources,
) -> Result<crate::job::JobList, crate::job::error::JobError> {
    let list = crate::job::build_jobs(src)?;
    list.check_each(check_job)?;
    Ok(list)
}

/// The workload layer's error: options that cannot work together, or a
/// trace that cannot be replayed or written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// Options of one job that cannot work together (one line).
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Trace(#[from] iolog::TraceError),
    /// A window of the job fell below `rate_min` (bytes/s).
    #[error("rate_min={min}B/s not met, got {got}B/s")]
    RateMin { min: u64, got: u64 },
    /// A window of the job fell below `rate_iops_min`.
    #[error("rate_iops_min={min} not met, got {got} IOPS")]
    RateIopsMin { min: u64, got: u64 },
}

/// Checks combinations of workload options that cannot work together;
/// returns a one-line reason.
pub fn check_job(spec: &JobSpec) -> Result<(), WorkloadError> {
    verify::check_job(spec)?;
    prio::check_job(spec)?;
    let io = &spec.io;
    if io.zonemode == ZoneMode::None && (io.zonesize > 0 || io.zonerange > 0 || io.zoneskip > 0) {
        return Err(WorkloadError::Options(
            "zonesize, zonerange and zoneskip need zonemode=strided".into(),
        ));
    }
    if io.zonemode == ZoneMode::Strided && io.zonesize == 0 {
        return Err(WorkloadError::Options(
            "zonemode=strided needs zonesize".into(),
        ));
    }
    if let Some(crate::job::value::SizeOrPercent::Bytes(size)) = spec.file.size {
        let min_bs = Ddir::ALL
            .into_iter()
            .filter(|d| io.rw.has(*d))
            .map(|d| io.bs[d.idx()].min())
            .min();
        if let Some(min_bs) = min_bs.filter(|m| size > 0 && size < *m) {
            return Err(WorkloadError::Options(format!(
                "size={size} is smaller than the smallest block size ({min_bs}): no I/O would fit"
            )));
        }
    }
    let t = &spec.time;
    for d in Ddir::ALL {
        let i = d.idx();
        if t.rate[i] > 0 && t.rate_min[i] > t.rate[i] {
            return Err(WorkloadError::Options(format!(
                "rate_min ({}) is above rate ({}) for {}s",
                t.rate_min[i],
                t.rate[i],
                d.name()
            )));
        }
        if t.rate_iops[i] > 0 && t.rate_iops_min[i] > t.rate_iops[i] {
            return Err(WorkloadError::Options(format!(
                "rate_iops_min ({}) is above rate_iops ({}) for {}s",
                t.rate_iops_min[i],
                t.rate_iops[i],
                d.name()
            )));
        }
    }
    Ok(())
}

/// How much a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes per loop: `io_size` when given, else `size`.
    pub bytes: u64,
    /// `io_size`, when given: passes continue after the loops until the
    /// job has issued this much.
    pub io_size: Option<u64>,
    /// `size` (capped by the regions): with an engine that queues, no loop
    /// issues more than this (`cap_each_loop`).
    pub size: u64,
}

pub struct Workload {
    rw: RwPattern,
    rwmixread: f64,
    sizer: BlockSizer,
    files: Vec<FileTarget>,
    chooser: FileChooser,
    cfg: TargetCfg,
    random_pct: [f64; 3],
    /// `rw=randX:N`: I/Os per random offset, and how many follow-ups remain.
    rand_run: u64,
    run_left: u64,
    identical: bool,
    mix: mix::MixCycle,
    rng_off: Rng,
    rng_bs: BsDraws,
    rng_mix: Rng,
    rng_file: Rng,
    limits: Limits,
    number_ios: u64,
    time_based: bool,
    loop_bytes: u64,
    loop_ios: u64,
    /// What this loop may still issue (see `start_loop`).
    loop_limit: u64,
    loop_ios_limit: u64,
    /// `loops`, at least 1.
    loops: u64,
    /// Bytes any one loop may issue (`cap_each_loop`; else no cap).
    loop_cap: u64,
    /// Seed the random streams start again from at each loop
    /// (`randrepeat`).
    reseed: Option<u64>,
    total_bytes: u64,
    total_ios: u64,
    pass_ios: u64,
    max_bs: u64,
    fsync_every: u64,
    fdatasync_every: u64,
    sfr_every: u64,
    writes: u64,
    last_was_sync: bool,
    /// The write that follows a trimwrite's trim.
    pending: Option<NextIo>,
    /// Directions the rate limiter lets go now (bits 0..3).
    ready: u8,
    /// `read_iolog`: the I/O comes from a trace instead.
    replay: Option<iolog::Replay>,
    /// Every direction's offsets are uniformly random.
    uniform: bool,
    /// Times the files started over (loops, passes, time-based rounds).
    passes: u32,
    /// `zonemode=zbd`: each file's zones (empty otherwise).
    zbd: Vec<zbd::ZbdFile>,
    /// Why the zones allow no further I/O: the job fails with it.
    zbd_fail: Option<(i32, String)>,
    /// Zone resets already handed to the worker.
    zbd_counted: u64,
    /// The write (or trim) that waits for a zone: (file, direction,
    /// offset, length).
    zbd_retry: Option<(usize, Ddir, u64, u64)>,
    /// The questions whose answers the job's options fix, answered once
    /// at set-up (see [`Fast`]); `None` when some answer can change.
    fast: Option<Fast>,
}

/// A job whose every I/O goes in one direction, to its one file, with
/// one length, each at a new random offset (or each after the last): no
/// zones, trims paired with writes, syncs, runs of `rw=randX:N`,
/// `percentage_random`, skewed file choice, replay. `next_io` then asks
/// only what can change (the budget, the file's next offset, whether the
/// file is done) and draws exactly the numbers the general path draws.
#[derive(Clone, Copy, Debug)]
struct Fast {
    ddir: Ddir,
    op: Op,
    len: u64,
    random: bool,
}

/// Purposes for random streams.
const STREAM_OFF: u64 = 2;
const STREAM_MIX: u64 = 4;
const STREAM_FILE: u64 = 6;

impl Workload {
    /// Blocks of the files whose random map could not be allocated
    /// (they run without one, as with `norandommap`); 0 when all have one.
    pub fn random_map_failed(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.map_failed)
            .map(|f| f.blocks())
            .sum()
    }

    /// Seeds the block-size streams as fio seeds them for the clone
    /// numbered `thread_number` (counting every clone of the run from 1;
    /// `new` takes the first).
    pub fn number_clone(&mut self, spec: &JobSpec, thread_number: u64, seed: u64) {
        self.rng_bs = BsDraws::new(&spec.io, spec.verify.verify, thread_number, seed);
        self.mix = mix::MixCycle::new(&spec.io, thread_number, seed);
    }

    #[allow(clippy::too_many_lines)]
    pub fn new(spec: &JobSpec, regions: &[Region], limits: Limits, seed: u64) -> Self {
        let io = &spec.io;
        let sizer = BlockSizer::new(io);
        let used: Vec<Ddir> = Ddir::ALL
            .iter()
            .copied()
            .filter(|d| io.rw.has(*d))
            .collect();
        let min_bs = used
            .iter()
            .map(|d| sizer.min(*d))
            .min()
            .unwrap_or(4096)
            .max(1);
        let max_bs = used
            .iter()
            .map(|d| sizer.max(*d))
            .max()
            .unwrap_or(4096)
            .max(1);
        let align = [Ddir::Read, Ddir::Write, Ddir::Trim].map(|d| {
            io.blockalign[d.idx()]
                .filter(|a| *a > 0)
                .unwrap_or_else(|| sizer.min(d))
        });
        let unit = used
            .iter()
            .map(|d| align[d.idx()])
            .min()
            .unwrap_or(min_bs)
            .min(min_bs)
            .max(1);
        let random = io.rw.is_random();
        let cfg = TargetCfg {
            unit,
            align,
            seq_add: if random { 0 } else { io.rw_nr },
            // Like fio, any blockalign turns the random map off.
            use_map: !io.norandommap && io.blockalign.iter().all(|a| a.is_none()),
            use_lfsr: io.random_generator == RandomGenerator::Lfsr,
            zones: (io.zonemode == ZoneMode::Strided).then(|| {
                let size = io.zonesize.max(1);
                let range = if io.zonerange > 0 { io.zonerange } else { size };
                (size, range, io.zoneskip)
            }),
        };
        let files: Vec<FileTarget> = regions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                FileTarget::new(
                    *r,
                    &cfg,
                    &io.random_distribution,
                    random,
                    seed ^ (i as u64).wrapping_mul(0x9E37_79B9),
                )
            })
            .collect();
        let chooser = FileChooser::new(
            spec.file.file_service,
            files.len(),
            spec.file.openfiles,
            seed ^ 0xF11E,
        );
        let fast = Self::fast_plan(spec, &sizer, &cfg, files.len(), &chooser);
        Workload {
            fast,
            rw: io.rw,
            rwmixread: io.rwmixread,
            sizer,
            files,
            chooser,
            cfg,
            random_pct: io.percentage_random,
            rand_run: if random { io.rw_nr.max(1) as u64 } else { 1 },
            run_left: 0,
            identical: io.rw_sequencer == RwSequencer::Identical,
            mix: mix::MixCycle::new(io, 1, seed),
            rng_off: Rng::stream(seed, STREAM_OFF),
            rng_bs: BsDraws::new(io, spec.verify.verify, 1, seed),
            rng_mix: Rng::stream(seed, STREAM_MIX),
            rng_file: Rng::stream(seed, STREAM_FILE),
            limits,
            number_ios: spec.file.number_ios,
            time_based: spec.time.time_based,
            loop_bytes: 0,
            loop_ios: 0,
            loop_limit: 0,
            loop_ios_limit: 0,
            loops: io.loops.max(1),
            loop_cap: u64::MAX,
            reseed: io.randrepeat.then_some(seed),
            total_bytes: 0,
            total_ios: 0,
            pass_ios: 0,
            max_bs,
            fsync_every: spec.sync.fsync,
            fdatasync_every: spec.sync.fdatasync,
            sfr_every: spec.sync.sync_file_range.map(|(_, n)| n).unwrap_or(0),
            writes: 0,
            last_was_sync: false,
            pending: None,
            ready: 0b111,
            replay: None,
            uniform: io.random_distribution.iter().all(|d| d.is_uniform()),
            passes: 0,
            zbd: Vec::new(),
            zbd_fail: None,
            zbd_counted: 0,
            zbd_retry: None,
        }
    }

    /// The fast path's answers when the job's options fix them (see
    /// [`Fast`]).
    fn fast_plan(
        spec: &JobSpec,
        sizer: &BlockSizer,
        cfg: &TargetCfg,
        nfiles: usize,
        chooser: &FileChooser,
    ) -> Option<Fast> {
        let io = &spec.io;
        let (ddir, op) = match io.rw {
            RwPattern::Read | RwPattern::RandRead => (Ddir::Read, Op::Read),
            RwPattern::Write | RwPattern::RandWrite => (Ddir::Write, Op::Write),
            RwPattern::Trim | RwPattern::RandTrim => (Ddir::Trim, Op::Trim),
            _ => return None,
        };
        let random = io.rw.is_random();
        let syncs = spec.sync.fsync > 0
            || spec.sync.fdatasync > 0
            || spec.sync.sync_file_range.is_some_and(|(_, n)| n > 0);
        let plain = nfiles == 1
            && !chooser.restarts_files()
            && !chooser.limits_open()
            && cfg.zones.is_none()
            && io.zonemode != ZoneMode::Zbd
            && !(ddir == Ddir::Write && syncs)
            && (!random || (io.rw_nr <= 1 && io.percentage_random[ddir.idx()] >= 100.0));
        if !plain {
            return None;
        }
        Some(Fast {
            ddir,
            op,
            len: sizer.fixed(ddir, random)?,
            random,
        })
    }

    /// `next_io` of a job with a [`Fast`] plan: what the general path
    /// does for such a job, without the questions whose answers are
    /// fixed.
    #[inline]
    fn next_fast(&mut self, p: Fast) -> Result<NextIo, Exhausted> {
        if !self.budget_left() {
            return Err(Exhausted::PassDone);
        }
        loop {
            if self.chooser.all_done() {
                // Time-based jobs go round again until the time is up.
                if self.time_based && self.pass_ios > 0 {
                    self.reset_files();
                    continue;
                }
                return Err(Exhausted::PassDone);
            }
            let f = &mut self.files[0];
            let (sizer, rng_bs) = (&self.sizer, &mut self.rng_bs);
            let fit = |room| sizer.pick_within(rng_bs, p.ddir, p.random, room);
            let at = if p.random {
                f.random(p.ddir, p.len, &self.cfg, &mut self.rng_off, fit)
            } else {
                f.sequential(p.ddir, p.len, &self.cfg, fit)
            };
            match at {
                Some((offset, len)) => {
                    return Ok(self.issue(NextIo {
                        op: p.op,
                        file: 0,
                        offset,
                        len,
                    }))
                }
                None => self.chooser.file_done(0),
            }
        }
    }

    /// `zonemode=zbd`: the zones of each file (in file order).
    pub fn set_zbd(&mut self, files: Vec<zbd::ZbdFile>) {
        self.fast = None;
        self.zbd = files;
        let writes = self.rw.has(Ddir::Write);
        for z in &mut self.zbd {
            z.pass_start(writes);
        }
    }

    /// Whether zone resets are waiting for the worker (checked per I/O on
    /// zoned jobs only).
    #[inline]
    pub fn zbd_pending(&self) -> bool {
        !self.zbd.is_empty()
            && self.zbd.iter().map(|z| z.reset_count).sum::<u64>() != self.zbd_counted
    }

    /// Hands the pending zone resets to `reset(file, start, len)`; returns
    /// how many zones were reset since the last call (emulated zones are
    /// counted, not sent).
    pub fn take_zone_resets(&mut self, reset: &mut dyn FnMut(u32, u64, u64)) -> u64 {
        for (i, z) in self.zbd.iter_mut().enumerate() {
            for (start, len) in z.take_resets() {
                reset(i as u32, start, len);
            }
        }
        let total: u64 = self.zbd.iter().map(|z| z.reset_count).sum();
        let n = total - self.zbd_counted;
        self.zbd_counted = total;
        n
    }

    /// Why the zones ended the job, if they did (errno, message).
    pub fn take_failure(&mut self) -> Option<(i32, String)> {
        self.zbd_fail.take()
    }

    /// The zones of file `fi`, as tracked (zoned jobs).
    pub fn zones(&self, fi: usize) -> Option<Vec<zbd::ZoneState>> {
        self.zbd.get(fi).map(|z| z.zones())
    }

    /// After [`Exhausted::ZoneWait`], with none of this job's I/O in
    /// flight: waits a little for the zone the write needs.
    #[cold]
    pub fn zbd_wait(&mut self) {
        for z in &mut self.zbd {
            z.wait();
        }
    }

    /// `zonemode=zbd`: a trim of file `fi` at `offset` is a zone reset
    /// (already done), not an I/O for the engine.
    #[cold]
    pub fn zbd_trim_is_reset(&self, fi: u32, offset: u64) -> bool {
        self.zbd
            .get(fi as usize)
            .is_some_and(|z| z.trim_is_reset(offset))
    }

    /// `zonemode=zbd`: a write to file `fi` ended (`ok`: it succeeded).
    #[inline]
    pub fn zbd_completed(&mut self, fi: u32, offset: u64, len: u64, ok: bool) {
        if let Some(z) = self.zbd.get_mut(fi as usize) {
            z.completed(offset, len, ok);
        }
    }

    /// Whether no block can be written twice in a pass: random I/O over
    /// the random map, with nothing following a random offset. Verified
    /// blocks are then read back in write order.
    pub fn writes_never_repeat(&self) -> bool {
        self.rw.is_random()
            && self.cfg.use_map
            && self.cfg.zones.is_none()
            && self.uniform
            && self.rand_run <= 1
            && self.random_pct.iter().all(|p| *p >= 100.0)
            && self.replay.is_none()
    }

    /// Takes every I/O from a trace instead of generating it.
    /// Whether nothing but the offsets paces this workload: no trace is
    /// replayed at its recorded times and no zone is managed (the
    /// worker's plain pass needs neither check).
    pub fn unpaced(&self) -> bool {
        self.replay.is_none() && self.zbd.is_empty()
    }

    pub fn set_replay(&mut self, replay: iolog::Replay) {
        self.fast = None;
        self.replay = Some(replay);
    }

    /// When replaying with timing: the clock time (ns) at which the I/O
    /// last returned by `next_io` is due.
    #[inline]
    pub fn replay_due_ns(&mut self, now: u64) -> Option<u64> {
        self.replay.as_mut()?.due_ns(now)
    }

    /// With an engine that queues its I/O, each loop (and extra pass)
    /// stops at `size` bytes, as fio's does; with one that completes I/O
    /// as it is issued, only the job's total stops a loop (fio counts the
    /// bytes a loop issued only for queued I/O).
    pub fn cap_each_loop(&mut self) {
        let io = self.limits.size;
        // A random overwrite without a map may go on to io_size.
        let norandommap_writes =
            self.rw.is_random() && self.rw.has(Ddir::Write) && !self.cfg.use_map;
        self.loop_cap = if norandommap_writes {
            io.max(self.limits.io_size.unwrap_or(0))
        } else {
            io
        };
    }

    /// Starts a loop (the first, or one from `loops`): every file starts
    /// over and, with `randrepeat`, every random stream too (a later loop
    /// repeats the first one's choices, as in fio). As in fio, the loops
    /// share the job's amount (`loops` times `size` or `io_size`, and
    /// `loops` times `number_ios`): a loop goes on until its files have
    /// nothing left or the job's amount is reached, so a first loop whose
    /// files never run out does it all.
    pub fn start_loop(&mut self) {
        self.new_round();
    }

    /// A verify round (write then read back, again until the size is
    /// reached): the round may issue `size` (or `io_size`) bytes.
    pub fn start_verify_round(&mut self) {
        self.loop_bytes = 0;
        self.loop_ios = 0;
        self.loop_limit = self.limits.bytes;
        self.loop_ios_limit = if self.number_ios == 0 {
            u64::MAX
        } else {
            self.number_ios
        };
        self.reset_files();
    }

    fn new_round(&mut self) {
        self.loop_bytes = 0;
        self.loop_ios = 0;
        let job_bytes = self.limits.bytes.saturating_mul(self.loops);
        self.loop_limit = job_bytes
            .saturating_sub(self.total_bytes)
            .min(self.loop_cap);
        self.loop_ios_limit = if self.number_ios == 0 {
            u64::MAX
        } else {
            (self.number_ios * self.loops).saturating_sub(self.total_ios)
        };
        if self.passes > 0 && !self.time_based {
            if let Some(seed) = self.reseed {
                self.seed_streams(seed);
            }
        }
        self.reset_files();
    }

    fn seed_streams(&mut self, seed: u64) {
        self.mix.reseed();
        self.rng_off = Rng::stream(seed, STREAM_OFF);
        self.rng_bs.restart();
        self.rng_mix = Rng::stream(seed, STREAM_MIX);
        self.rng_file = Rng::stream(seed, STREAM_FILE);
    }

    /// Whether another pass is due after the loops: `io_size` is set, the
    /// job's I/O count is not reached and at least a maximum-size block
    /// of `io_size` is still to do.
    pub fn wants_extra_pass(&self) -> bool {
        let Some(io_size) = self.limits.io_size else {
            return false;
        };
        if self.number_ios > 0 && self.total_ios >= self.number_ios * self.loops {
            return false;
        }
        self.total_bytes < io_size && io_size - self.total_bytes >= self.max_bs
    }

    /// Starts an extra pass: like a loop, within what is left of the
    /// job's amount.
    pub fn start_extra_pass(&mut self) {
        self.new_round();
    }

    /// How many times the files started over so far.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    fn reset_files(&mut self) {
        self.passes = self.passes.wrapping_add(1);
        for f in &mut self.files {
            f.reset();
        }
        let writes = self.rw.has(Ddir::Write);
        for z in &mut self.zbd {
            z.pass_start(writes);
        }
        self.chooser.reset();
        self.run_left = 0;
        self.pass_ios = 0;
        self.mix.new_pass();
        self.pending = None;
        self.last_was_sync = false;
    }

    /// I/Os issued in the current pass.
    pub fn pass_ios(&self) -> u64 {
        self.pass_ios
    }

    /// Bytes issued since the job started.
    pub fn issued_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The largest block the job issues.
    pub fn max_bs(&self) -> u64 {
        self.max_bs
    }

    /// Files to open before the first I/O (all, unless `openfiles`).
    pub fn initially_open(&self) -> Vec<u32> {
        if self.chooser.limits_open() {
            self.chooser
                .initially_open()
                .iter()
                .map(|f| *f as u32)
                .collect()
        } else {
            (0..self.files.len() as u32).collect()
        }
    }

    /// Files the worker must open or may close now (only with `openfiles`).
    #[inline]
    pub fn file_events(&mut self) -> &mut Vec<FileEvent> {
        self.chooser.events()
    }

    fn budget_left(&self) -> bool {
        if self.time_based {
            // A time-based job goes round in loops of `size` (or
            // `io_size`) bytes, as fio's do: the worker starts the next.
            return self.limits.bytes == 0 || self.loop_bytes < self.limits.bytes;
        }
        self.loop_bytes < self.loop_limit && self.loop_ios < self.loop_ios_limit
    }

    /// The next I/O (or sync) to issue, or why there is none.
    #[inline]
    pub fn next_io(&mut self) -> Result<NextIo, Exhausted> {
        if let Some(p) = self.fast {
            return self.next_fast(p);
        }
        self.next_general()
    }

    /// `next_io` for every job.
    fn next_general(&mut self) -> Result<NextIo, Exhausted> {
        if let Some(r) = self.replay.as_mut() {
            return r.next_io().ok_or(Exhausted::PassDone);
        }
        if let Some(p) = self.pending.take() {
            return Ok(self.issue(p));
        }
        if !self.budget_left() {
            return Err(Exhausted::PassDone);
        }
        if let Some(op) = self.sync_due() {
            // A sync takes the next file's turn.
            let Some(fi) = self.choose_file() else {
                return Err(Exhausted::PassDone);
            };
            return Ok(self.issue(NextIo {
                op,
                file: fi as u32,
                offset: 0,
                len: 0,
            }));
        }
        let io = self.next_data_io()?;
        if matches!(self.rw, RwPattern::TrimWrite | RwPattern::RandTrimWrite) {
            self.pending = Some(NextIo {
                op: Op::Write,
                ..io
            });
        }
        Ok(self.issue(io))
    }

    /// Directions the rate limiter lets go now (bit per direction); a
    /// mixed job picks a ready direction over one that must wait.
    #[inline]
    pub fn set_ready(&mut self, mask: u8) {
        self.ready = mask;
    }

    fn choose_file(&mut self) -> Option<usize> {
        loop {
            match self.chooser.choose(&mut self.rng_file) {
                Some(f) => return Some(f),
                None if self.time_based && self.pass_ios > 0 => self.reset_files(),
                None => return None,
            }
        }
    }

    fn sync_due(&self) -> Option<Op> {
        if self.writes == 0 || self.last_was_sync {
            return None;
        }
        let n = self.writes;
        if self.fsync_every > 0 && n.is_multiple_of(self.fsync_every) {
            Some(Op::Fsync)
        } else if self.fdatasync_every > 0 && n.is_multiple_of(self.fdatasync_every) {
            Some(Op::Fdatasync)
        } else if self.sfr_every > 0 && n.is_multiple_of(self.sfr_every) {
            Some(Op::SyncFileRange)
        } else {
            None
        }
    }

    fn data_io(ddir: Ddir, fi: usize, offset: u64, len: u64) -> NextIo {
        let op = match ddir {
            Ddir::Read => Op::Read,
            Ddir::Write => Op::Write,
            Ddir::Trim => Op::Trim,
        };
        NextIo {
            op,
            file: fi as u32,
            offset,
            len,
        }
    }

    /// `zonemode=zbd`: where the I/O of `len` bytes at `offset` of file
    /// `fi` really goes (`None`: the file is done).
    #[cold]
    fn zbd_adjust(
        &mut self,
        fi: usize,
        ddir: Ddir,
        offset: u64,
        len: u64,
    ) -> Result<Option<(u64, u64)>, Exhausted> {
        let Some(z) = self.zbd.get_mut(fi) else {
            return Ok(Some((offset, len)));
        };
        let r = match ddir {
            Ddir::Write => z.write(offset, len),
            Ddir::Trim => z.trim(offset, len),
            Ddir::Read => z.read(offset, len),
        };
        match r {
            Ok((o, l)) => {
                self.files[fi].moved_to(ddir, o, l);
                Ok(Some((o, l)))
            }
            Err(zbd::ZbdEnd::Done) => Ok(None),
            Err(zbd::ZbdEnd::Wait) => {
                self.zbd_retry = Some((fi, ddir, offset, len));
                Err(Exhausted::ZoneWait)
            }
            Err(zbd::ZbdEnd::Fail(e, m)) => {
                self.zbd_fail = Some((e, m));
                Err(Exhausted::PassDone)
            }
        }
    }

    fn next_data_io(&mut self) -> Result<NextIo, Exhausted> {
        if let Some((fi, ddir, offset, len)) = self.zbd_retry.take() {
            match self.zbd_adjust(fi, ddir, offset, len)? {
                Some((o, l)) => return Ok(Self::data_io(ddir, fi, o, l)),
                None => self.chooser.file_done(fi),
            }
        }
        let mut ddir = self.pick_ddir();
        if ddir == Ddir::Read && self.zbd.iter().any(|z| z.read_needs_data()) {
            // nothing written yet: nothing could be read
            ddir = Ddir::Write;
        }
        let random = self.is_random_io(ddir);
        let len = self.sizer.pick(&mut self.rng_bs, ddir, random);
        // A random file started over is asked again (a sequential one
        // gives its turn back to the chooser), as in fio.
        let mut again = None;
        loop {
            // Time-based jobs go round again until the time is up.
            let Some(fi) = again.take().or_else(|| self.choose_file()) else {
                return Err(Exhausted::PassDone);
            };
            if !self.zbd.is_empty() && ddir == Ddir::Write && !self.rw.is_random() {
                let last = self.files[fi].last_end(ddir);
                if let Some(p) = self.zbd[fi].seq_skip(last) {
                    self.files[fi].skip_to(ddir, p);
                }
            }
            let at = self.offset_in(fi, ddir, len, random);
            let at = match at {
                Some((o, l)) if !self.zbd.is_empty() => self.zbd_adjust(fi, ddir, o, l)?,
                at => at,
            };
            match at {
                Some((offset, len)) => {
                    self.mix.issued(ddir);
                    return Ok(Self::data_io(ddir, fi, offset, len));
                }
                // A skewed file choice starts a finished file over (one
                // that has no room even from its start is done).
                None if self.chooser.restarts_files()
                    && self.zbd.is_empty()
                    && !self.files[fi].is_fresh(ddir) =>
                {
                    self.files[fi].reset();
                    if random {
                        again = Some(fi);
                    }
                }
                None => self.chooser.file_done(fi),
            }
        }
    }

    fn offset_in(&mut self, fi: usize, d: Ddir, len: u64, random: bool) -> Option<(u64, u64)> {
        let f = &mut self.files[fi];
        // A length that does not fit before the end is drawn again.
        let (sizer, rng_bs) = (&self.sizer, &mut self.rng_bs);
        let fit = |room| sizer.pick_within(rng_bs, d, random, room);
        if self.cfg.zones.is_some() {
            return f.zoned(d, len, random, &self.cfg, &mut self.rng_off, fit);
        }
        if !self.rw.is_random() {
            return f.sequential(d, len, &self.cfg, fit);
        }
        if random {
            f.random(d, len, &self.cfg, &mut self.rng_off, fit)
        } else {
            f.follow(d, len, self.identical && self.rand_run > 1)
        }
    }

    fn issue(&mut self, io: NextIo) -> NextIo {
        if io.op.is_data() {
            // The write that repeats a trimwrite's trim does not count again.
            let paired = io.op == Op::Write
                && matches!(self.rw, RwPattern::TrimWrite | RwPattern::RandTrimWrite);
            if !paired {
                self.loop_bytes += io.len;
                self.total_bytes += io.len;
                self.loop_ios += 1;
                self.total_ios += 1;
            }
            self.pass_ios += 1;
            if io.op == Op::Write {
                self.writes += 1;
            }
            self.last_was_sync = false;
        } else {
            self.last_was_sync = true;
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
                let d = self.mix.next_ddir();
                // A rate-limited direction that must wait yields to one
                // that may go now.
                let other = if d == Ddir::Read {
                    Ddir::Write
                } else {
                    Ddir::Read
                };
                let ready = |x: Ddir| self.ready & (1 << x.idx()) != 0;
                if !ready(d) && ready(other) && self.rwmixread > 0.0 && self.rwmixread < 100.0 {
                    other
                } else {
                    d
                }
            }
        }
    }

    /// Whether this I/O of a random pattern takes a new random offset (as
    /// opposed to following the last one: `rw=randX:N`, `percentage_random`).
    fn is_random_io(&mut self, d: Ddir) -> bool {
        if !self.rw.is_random() {
            return false;
        }
        if self.rand_run > 1 {
            if self.run_left > 0 {
                self.run_left -= 1;
                return false;
            }
            self.run_left = self.rand_run - 1;
        }
        let p = self.random_pct[d.idx()];
        p >= 100.0 || (p > 0.0 && self.rng_mix.percent() < p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        crate::job::test_spec(opts)
    }

    fn one(len: u64) -> Vec<Region> {
        vec![Region { start: 0, len }]
    }

    fn limits(bytes: u64) -> Limits {
        Limits {
            bytes,
            io_size: None,
            size: bytes,
        }
    }

    fn drain(w: &mut Workload) -> Vec<NextIo> {
        let mut v = Vec::new();
        while let Ok(io) = w.next_io() {
            v.push(io);
        }
        v
    }

    fn run(opts: &[(&str, &str)], regions: &[Region], lim: Limits) -> Vec<NextIo> {
        let s = spec(opts);
        let mut w = Workload::new(&s, regions, lim, 1);
        w.start_loop();
        drain(&mut w)
    }

    #[test]
    fn sequential_covers_region_in_order() {
        let ios = run(&[("rw", "read")], &one(64 << 10), limits(64 << 10));
        assert_eq!(ios.len(), 16);
        assert!(ios
            .iter()
            .enumerate()
            .all(|(i, io)| io.offset == i as u64 * 4096));
    }

    #[test]
    fn no_partial_last_block_with_a_fixed_size() {
        let ios = run(
            &[("rw", "write"), ("bs", "3k")],
            &one(1 << 20),
            limits(1 << 20),
        );
        assert_eq!(ios.len(), 341);
    }

    #[test]
    fn norandommap_issues_until_the_bytes_are_reached() {
        let ios = run(
            &[("rw", "randwrite"), ("bs", "3k"), ("norandommap", "1")],
            &one(1 << 20),
            limits(1 << 20),
        );
        assert_eq!(ios.len(), 342);
        let ios = run(
            &[("rw", "randwrite"), ("bs", "3k")],
            &one(1 << 20),
            limits(1 << 20),
        );
        assert_eq!(ios.len(), 341);
    }

    #[test]
    fn random_map_touches_each_block_once() {
        let ios = run(
            &[("rw", "randwrite"), ("bs", "4k")],
            &one(1 << 20),
            limits(1 << 20),
        );
        let mut offs: Vec<u64> = ios.iter().map(|i| i.offset).collect();
        assert_eq!(offs.len(), 256);
        offs.sort();
        offs.dedup();
        assert_eq!(offs.len(), 256);
    }

    #[test]
    fn lfsr_touches_each_block_once_without_a_map() {
        let ios = run(
            &[
                ("rw", "randread"),
                ("random_generator", "lfsr"),
                ("norandommap", "1"),
            ],
            &one(1 << 20),
            limits(1 << 20),
        );
        let mut offs: Vec<u64> = ios.iter().map(|i| i.offset).collect();
        offs.sort();
        offs.dedup();
        assert_eq!(offs.len(), 256);
    }

    #[test]
    fn fsync_every_n_writes_but_not_after_the_last() {
        let ios = run(
            &[("rw", "write"), ("fsync", "4")],
            &one(64 << 10),
            limits(64 << 10),
        );
        assert_eq!(ios.iter().filter(|i| i.op == Op::Fsync).count(), 3);
        assert_eq!(ios[4].op, Op::Fsync);
    }

    #[test]
    fn a_due_sync_repeats_after_reads_until_the_next_write() {
        // After the 2nd write a sync is due; reads that follow do not clear it.
        let s = spec(&[("rw", "randrw"), ("fsync", "2"), ("rwmixread", "50")]);
        let mut w = Workload::new(&s, &one(1 << 20), limits(1 << 20), 5);
        w.start_loop();
        let ios = drain(&mut w);
        let mut writes = 0;
        let mut last = Op::Read;
        for io in &ios {
            if io.op.is_data() && last != Op::Fsync && writes > 0 && writes % 2 == 0 {
                panic!("a sync was due before {io:?}");
            }
            if io.op == Op::Write {
                writes += 1;
            }
            last = io.op;
        }
    }

    #[test]
    fn mix_follows_rwmixread() {
        let ios = run(
            &[("rw", "randrw"), ("rwmixread", "70")],
            &one(64 << 20),
            limits(64 << 20),
        );
        let reads = ios.iter().filter(|i| i.op == Op::Read).count() as f64;
        let share = reads / ios.len() as f64;
        assert!((share - 0.7).abs() < 0.02, "read share {share}");
    }

    #[test]
    fn io_size_continues_in_extra_passes() {
        let s = spec(&[("rw", "read")]);
        let lim = Limits {
            bytes: 1536 << 10,
            io_size: Some(1536 << 10),
            size: 1 << 20,
        };
        let mut w = Workload::new(&s, &one(1 << 20), lim, 1);
        w.start_loop();
        let mut n = drain(&mut w).len();
        while w.wants_extra_pass() {
            w.start_extra_pass();
            n += drain(&mut w).len();
        }
        assert_eq!(n, 384);
    }

    #[test]
    fn sequential_holes() {
        let ios = run(&[("rw", "write:4k")], &one(32 << 10), limits(16 << 10));
        let offs: Vec<u64> = ios.iter().map(|i| i.offset).collect();
        assert_eq!(offs, vec![0, 8192, 16384, 24576]);
    }

    #[test]
    fn random_runs_follow_the_random_offset() {
        let ios = run(&[("rw", "randread:4")], &one(1 << 20), limits(64 << 10));
        for run in ios.chunks(4) {
            for (i, io) in run.iter().enumerate() {
                assert_eq!(io.offset, run[0].offset + i as u64 * 4096);
            }
        }
        let ios = run(
            &[("rw", "randread:4"), ("rw_sequencer", "identical")],
            &one(1 << 20),
            limits(64 << 10),
        );
        for run in ios.chunks(4) {
            assert!(run.iter().all(|io| io.offset == run[0].offset));
        }
    }

    #[test]
    fn files_are_served_round_robin_and_finish_independently() {
        let regions = [
            Region {
                start: 0,
                len: 8 << 10,
            },
            Region {
                start: 0,
                len: 12 << 10,
            },
        ];
        let ios = run(&[("rw", "read")], &regions, limits(20 << 10));
        let files: Vec<u32> = ios.iter().map(|i| i.file).collect();
        assert_eq!(files, [0, 1, 0, 1, 1]);
    }

    #[test]
    fn number_ios_ends_a_loop() {
        let ios = run(
            &[("rw", "write"), ("number_ios", "10")],
            &one(1 << 20),
            limits(1 << 20),
        );
        assert_eq!(ios.len(), 10);
    }

    /// The jobs whose options fix the answers take the fast path and get
    /// exactly the I/Os (and random draws) of the general path, over
    /// extra passes, loops and a region that is no multiple of the block
    /// size; jobs whose answers can change do not take it.
    #[test]
    fn the_fast_path_issues_what_the_general_path_does() {
        let cases: &[&[(&str, &str)]] = &[
            &[("rw", "randread")],
            &[("rw", "read")],
            &[("rw", "write"), ("bs", "3k")],
            &[("rw", "read:8k")],
            &[("rw", "randwrite"), ("bs", "3k"), ("norandommap", "1")],
            &[("rw", "randread"), ("random_generator", "lfsr")],
            &[("rw", "randread"), ("random_distribution", "zipf:1.2")],
            &[("rw", "randtrim"), ("bs", "8k")],
            &[("rw", "randread"), ("number_ios", "77")],
            &[("rw", "randread"), ("bsrange", "4k-4k")],
            &[("rw", "randread"), ("loops", "3")],
            &[("rw", "randread"), ("fsync", "4")],
        ];
        let region = vec![Region {
            start: 4096,
            len: (1 << 20) + 1536,
        }];
        let lim = Limits {
            bytes: 1 << 20,
            io_size: Some(5 << 19),
            size: 1 << 20,
        };
        for opts in cases {
            let s = spec(opts);
            let mut fast = Workload::new(&s, &region, lim, 7);
            let mut general = Workload::new(&s, &region, lim, 7);
            assert!(fast.fast.is_some(), "{opts:?} takes the fast path");
            general.fast = None;
            let mut got = Vec::new();
            let mut want = Vec::new();
            for (w, out) in [(&mut fast, &mut got), (&mut general, &mut want)] {
                for _ in 0..s.io.loops.max(1) {
                    w.start_loop();
                    out.extend(drain(w));
                }
                // As the worker does: a pass that issues nothing ends them.
                while w.wants_extra_pass() {
                    w.start_extra_pass();
                    let more = drain(w);
                    if more.is_empty() {
                        break;
                    }
                    out.extend(more);
                }
            }
            assert!(want.len() >= 77, "{opts:?}: {} I/Os", want.len());
            assert_eq!(got, want, "{opts:?}");
            assert_eq!(fast.total_bytes, general.total_bytes, "{opts:?}");
        }
        for opts in [
            &[("rw", "randrw")][..],
            &[("rw", "randread"), ("bsrange", "4k-16k")],
            &[("rw", "randread"), ("bssplit", "4k/50:8k/50")],
            &[("rw", "randread:4")],
            &[("rw", "randread"), ("percentage_random", "50")],
            &[("rw", "randwrite"), ("fsync", "4")],
            &[("rw", "trimwrite")],
            &[("rw", "read"), ("zonemode", "strided"), ("zonesize", "64k")],
        ] {
            let w = Workload::new(&spec(opts), &one(1 << 20), limits(1 << 20), 1);
            assert!(w.fast.is_none(), "{opts:?} takes the general path");
        }
        let two = vec![
            Region {
                start: 0,
                len: 1 << 20
            };
            2
        ];
        let w = Workload::new(&spec(&[("rw", "read")]), &two, limits(2 << 20), 1);
        assert!(w.fast.is_none(), "two files take the general path");
    }
}
