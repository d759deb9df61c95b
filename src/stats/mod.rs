//! Statistics a worker collects for its job: per-direction counters and
//! latency histograms, sync latencies, queue-depth and latency
//! distributions, bandwidth/IOPS samples and CPU usage.
//!
//! Each worker owns its `JobStats` and updates it without locks; the run
//! merges them once at the end (per job, per group, for group_reporting).
//! Nothing here formats output: that is `report`.

pub mod disk;
/// The latency histogram, a module of its own below `engine` (which
/// keeps one for times to first byte); named here as well.
pub use crate::histogram;
pub mod inflate;
pub mod latency_target;
pub mod live;
pub mod logs;
pub mod recorder;
pub mod samples;
pub mod steady;
pub mod timeline;
pub mod wire;

use serde::{Deserialize, Serialize};

use histogram::Histogram;
pub use samples::SampleStats;

/// Figures for one direction (read, write or trim).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    pub bytes: u64,
    pub ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub slat: Histogram,
    pub clat: Histogram,
    pub lat: Histogram,
    /// Time to first byte (engines that talk to a server: from a request
    /// sent to its answer's first byte), kept only by such engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<Box<Histogram>>,
    /// Per-interval bandwidth (KiB/s) and IOPS samples.
    pub bw_samples: SampleStats,
    pub iops_samples: SampleStats,
    /// Milliseconds over which this direction's I/O was measured.
    pub runtime_ms: u64,
    /// Latencies per I/O priority (fio's `prios`): kept when the job
    /// issues this direction's I/O at more than one priority
    /// (`cmdprio*`), or when merged jobs ran at different priorities;
    /// empty otherwise. See `PrioStat`.
    #[serde(default)]
    pub prios: Vec<PrioStat>,
}

/// The latencies of the I/Os of one priority: completion latencies, or
/// total latencies when the job reports those (`lat_percentiles`,
/// `JobStats::prio_lat`), as fio keeps them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrioStat {
    /// The priority value (`job::ioprio`).
    pub ioprio: u16,
    pub lat: Histogram,
}

/// What the I/Os of a stream that keeps no per-priority statistics ran
/// at, and which of its latencies stand for them.
#[derive(Clone, Copy, Debug)]
struct PrioSource {
    ioprio: u16,
    total_lat: bool,
}

impl DirStats {
    /// Adds the figures of a stream that ran in parallel with this one
    /// (another job of the group, or another direction for
    /// `unified_rw_reporting`): counts and histograms add up, interval
    /// samples add as parallel rates, the runtime is the longer one.
    pub fn merge(&mut self, o: &DirStats) {
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.short_ios += o.short_ios;
        self.drop_ios += o.drop_ios;
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        if let Some(t) = &o.ttfb {
            self.add_ttfb(t);
        }
        self.bw_samples.add_parallel(&o.bw_samples);
        self.iops_samples.add_parallel(&o.iops_samples);
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
    }

    /// Adds `o`'s latencies per priority to this stream's, as fio sums
    /// them: a stream without per-priority statistics stands for its
    /// latencies at its one priority (`mine`, `theirs`), and only
    /// priorities that saw I/O are added. Call before `merge`.
    fn merge_prios(&mut self, mine: PrioSource, o: &DirStats, theirs: PrioSource) {
        if self.prios.is_empty() {
            let own = if mine.total_lat {
                &self.lat
            } else {
                &self.clat
            };
            if own.count() > 0 {
                self.prios.push(PrioStat {
                    ioprio: mine.ioprio,
                    lat: own.clone(),
                });
            }
        }
        if o.prios.is_empty() {
            let all = if theirs.total_lat { &o.lat } else { &o.clat };
            self.add_prio(theirs.ioprio, all);
        } else {
            for p in &o.prios {
                self.add_prio(p.ioprio, &p.lat);
            }
        }
    }

    fn add_prio(&mut self, ioprio: u16, lat: &Histogram) {
        if lat.count() == 0 {
            return;
        }
        match self.prios.iter_mut().find(|p| p.ioprio == ioprio) {
            Some(p) => p.lat.merge(lat),
            None => self.prios.push(PrioStat {
                ioprio,
                lat: lat.clone(),
            }),
        }
    }

    /// Adds times to first byte.
    pub fn add_ttfb(&mut self, t: &Histogram) {
        match &mut self.ttfb {
            Some(own) => own.merge(t),
            None => self.ttfb = Some(Box::new(t.clone())),
        }
    }

    /// How many priorities saw I/O (fio shows them from two on).
    pub fn prios_with_samples(&self) -> usize {
        self.prios.iter().filter(|p| p.lat.count() > 0).count()
    }

    /// Copies `o` into `self`; allocates only when the per-priority
    /// statistics are laid out differently (the first copy).
    pub fn copy_from(&mut self, o: &DirStats) {
        self.bytes = o.bytes;
        self.ios = o.ios;
        self.short_ios = o.short_ios;
        self.drop_ios = o.drop_ios;
        self.slat.copy_from(&o.slat);
        self.clat.copy_from(&o.clat);
        self.lat.copy_from(&o.lat);
        match (&mut self.ttfb, &o.ttfb) {
            (Some(a), Some(b)) => a.copy_from(b),
            (a, b) => a.clone_from(b),
        }
        self.bw_samples = o.bw_samples;
        self.iops_samples = o.iops_samples;
        self.runtime_ms = o.runtime_ms;
        let same = self.prios.len() == o.prios.len()
            && self
                .prios
                .iter()
                .zip(&o.prios)
                .all(|(a, b)| a.ioprio == b.ioprio);
        if same {
            for (a, b) in self.prios.iter_mut().zip(&o.prios) {
                a.lat.copy_from(&b.lat);
            }
        } else {
            self.prios = o.prios.clone();
        }
    }
}

/// Buckets of fio's "IO depths" line: 1, 2, 4, 8, 16, 32, >=64.
pub const DEPTH_BUCKETS: usize = 7;

/// Index of the depth bucket for a queue depth.
#[inline]
pub fn depth_bucket(depth: u32) -> usize {
    // 0..=1 => 0, 2..=3 => 1, 4..=7 => 2, ... 32..=63 => 5, 64.. => 6:
    // the highest bit set, without a chain of comparisons per I/O.
    ((31 - (depth | 1).leading_zeros()) as usize).min(6)
}

/// Buckets of fio's "submit"/"complete" lines: 0, 4, 8, 16, 32, 64, >=64
/// (the count of I/Os per submit or reap call, by upper bound).
#[inline]
pub fn batch_bucket(n: u32) -> usize {
    // 0 => 0, 1..=4 => 1, 5..=8 => 2, 9..=16 => 3, ... 33..=64 => 5,
    // 65.. => 6: the rounded-up power of two, without a chain of
    // comparisons per I/O.
    if n == 0 {
        return 0;
    }
    let ceil_log2 = 32 - (n - 1).leading_zeros();
    (ceil_log2.saturating_sub(1) as usize).clamp(1, 6)
}

/// Upper bounds of the latency distribution buckets per unit:
/// 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 (and for ms 2000, >=2000).
pub const LAT_EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// Latency distribution: nsec[10], usec[10], msec[12].
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LatDist {
    pub nsec: [u64; 10],
    pub usec: [u64; 10],
    pub msec: [u64; 12],
}

/// `edge_index` of every value below 1000, worked out at compile time: a
/// latency takes one load instead of a walk along the edges.
static EDGE_INDEX: [u8; 1000] = {
    let mut t = [0u8; 1000];
    let mut v = 0;
    while v < 1000 {
        let mut i = 0;
        while i < 9 && v as u64 >= LAT_EDGES[i] {
            i += 1;
        }
        t[v] = i as u8;
        v += 1;
    }
    t
};

/// The first bucket whose bound exceeds `v` (the last one from 750 on).
#[inline]
fn edge_index(v: u64) -> usize {
    match EDGE_INDEX.get(v as usize) {
        Some(&i) => i as usize,
        None => 9,
    }
}

impl LatDist {
    /// Counts one latency (ns) in the first bucket whose bound exceeds it.
    #[inline]
    pub fn add(&mut self, ns: u64) {
        if ns < 1000 {
            self.nsec[edge_index(ns)] += 1;
        } else if ns < 1_000_000 {
            self.usec[edge_index(ns / 1000)] += 1;
        } else {
            let ms = ns / 1_000_000;
            let i = if ms < 1000 {
                edge_index(ms)
            } else if ms < 2000 {
                10
            } else {
                11
            };
            self.msec[i] += 1;
        }
    }

    pub fn merge(&mut self, o: &LatDist) {
        self.nsec.iter_mut().zip(o.nsec).for_each(|(a, b)| *a += b);
        self.usec.iter_mut().zip(o.usec).for_each(|(a, b)| *a += b);
        self.msec.iter_mut().zip(o.msec).for_each(|(a, b)| *a += b);
    }

    pub fn total(&self) -> u64 {
        self.nsec.iter().chain(&self.usec).chain(&self.msec).sum()
    }
}

/// Everything measured for one job (or a merge of jobs). Serializable
/// exactly (`wire`), so results from other hosts merge as local ones do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobStats {
    pub dir: [DirStats; 3],
    /// Latencies of fsync/fdatasync/sync_file_range.
    pub sync_lat: Histogram,
    pub sync_ios: u64,
    /// Synchronous writes (`fsync`/`fdatasync`=N): from the start of the
    /// first write after a sync to the end of the sync that makes it
    /// durable, one sample per sync (iomark's own).
    pub write_sync_lat: Histogram,
    pub depth: [u64; DEPTH_BUCKETS],
    pub submit: [u64; DEPTH_BUCKETS],
    pub complete: [u64; DEPTH_BUCKETS],
    pub submit_calls: u64,
    pub complete_calls: u64,
    /// Number of I/O units counted in the depth distribution.
    pub depth_total: u64,
    pub lat_dist: LatDist,
    /// CPU time in microseconds.
    pub usr_us: u64,
    pub sys_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Measured run time of the job (after ramp), ms; summed over the
    /// clones of a merged report (fio's `job_runtime`).
    pub runtime_ms: u64,
    /// Wall time from job start to end, ms (fio's "elapsed" is in s).
    pub elapsed_ms: u64,
    /// Queue depth the job ran at last (changed by `latency_target`).
    pub latency_depth: u32,
    /// Errors tolerated with `continue_on_error`, and the first one.
    pub total_err: u64,
    pub first_error: i32,
    /// Steady-state outcome, when `steadystate` was set.
    pub steady: Option<steady::SteadyResult>,
    /// Throughput over time, sampled by the progress thread (iomark's own).
    pub timeline: timeline::Timeline,
    /// `zonemode=zbd`: zones whose write pointer was reset.
    #[serde(default)]
    pub zone_resets: u64,
    /// Requests the engine sent again after the server answered busy
    /// (the http engine's 503 SlowDown and kin), over the job.
    #[serde(default)]
    pub retries: u64,
    /// Objects the http engine's LIST requests listed (`http_op=list`).
    #[serde(default)]
    pub objects_listed: u64,
    /// The job's own I/O priority (`prio`/`prioclass`, 0 when not set):
    /// what its I/Os ran at unless `cmdprio*` gave them another.
    #[serde(default)]
    pub ioprio: u16,
    /// The per-priority statistics hold total latencies, not completion
    /// latencies (`lat_percentiles`).
    #[serde(default)]
    pub prio_lat: bool,
}

impl JobStats {
    /// Whether some direction keeps latencies per priority.
    pub fn keeps_prios(&self) -> bool {
        self.dir.iter().any(|d| !d.prios.is_empty())
    }

    fn prio_source(&self) -> PrioSource {
        PrioSource {
            ioprio: self.ioprio,
            total_lat: self.prio_lat,
        }
    }

    /// Adds another clone's (or job's, or host's) figures: counts and
    /// histograms add up exactly. Latencies per priority are kept as fio
    /// keeps them for a group: when either side keeps them, or when the
    /// two ran at different priorities.
    pub fn merge(&mut self, o: &JobStats) {
        if self.total_ios() == 0 && !self.keeps_prios() {
            // Nothing measured yet (an empty total): take the other's
            // priority rather than splitting on a default.
            self.ioprio = o.ioprio;
            self.prio_lat = o.prio_lat;
        }
        if self.keeps_prios() || o.keeps_prios() || self.ioprio != o.ioprio {
            let (mine, theirs) = (self.prio_source(), o.prio_source());
            for (a, b) in self.dir.iter_mut().zip(o.dir.iter()) {
                a.merge_prios(mine, b, theirs);
            }
        }
        for (a, b) in self.dir.iter_mut().zip(o.dir.iter()) {
            a.merge(b);
        }
        self.sync_lat.merge(&o.sync_lat);
        self.write_sync_lat.merge(&o.write_sync_lat);
        self.sync_ios += o.sync_ios;
        for i in 0..DEPTH_BUCKETS {
            self.depth[i] += o.depth[i];
            self.submit[i] += o.submit[i];
            self.complete[i] += o.complete[i];
        }
        self.submit_calls += o.submit_calls;
        self.complete_calls += o.complete_calls;
        self.depth_total += o.depth_total;
        self.lat_dist.merge(&o.lat_dist);
        self.usr_us += o.usr_us;
        self.sys_us += o.sys_us;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
        self.runtime_ms += o.runtime_ms;
        self.elapsed_ms = self.elapsed_ms.max(o.elapsed_ms);
        self.latency_depth = self.latency_depth.max(o.latency_depth);
        self.total_err += o.total_err;
        if self.first_error == 0 {
            self.first_error = o.first_error;
        }
        if self.steady.is_none() {
            self.steady = o.steady.clone();
        }
        self.timeline.merge(&o.timeline);
        self.zone_resets += o.zone_resets;
        self.retries += o.retries;
        self.objects_listed += o.objects_listed;
    }

    pub fn total_ios(&self) -> u64 {
        self.dir.iter().map(|d| d.ios).sum()
    }

    /// Read, write and trim merged into one direction
    /// (`unified_rw_reporting`).
    pub fn mixed(&self) -> DirStats {
        let mut m = self.dir[0].clone();
        if self.keeps_prios() {
            let src = self.prio_source();
            m.merge_prios(src, &self.dir[1], src);
            m.merge_prios(src, &self.dir[2], src);
        }
        m.merge(&self.dir[1]);
        m.merge(&self.dir[2]);
        m
    }

    /// Records one completed data I/O of direction `d` (0 read, 1 write,
    /// 2 trim), issued at the priority counted at index `prio` of the
    /// direction's per-priority statistics (when it keeps them).
    /// Latencies are recorded when their flag in `rec` is set; the
    /// latency distribution follows completion latency. No allocation.
    #[inline]
    pub fn record_io(
        &mut self,
        d: usize,
        bytes: u64,
        short: bool,
        lat: IoLatency,
        rec: RecordFlags,
        prio: u16,
    ) {
        let total_lat = self.prio_lat;
        let ds = &mut self.dir[d];
        if !ds.prios.is_empty() {
            record_prio(ds, total_lat, lat, rec, prio);
        }
        ds.bytes += bytes;
        ds.ios += 1;
        if short {
            ds.short_ios += 1;
        }
        if rec.slat {
            ds.slat.record(lat.slat);
        }
        if rec.clat {
            ds.clat.record(lat.clat);
        }
        if rec.dist {
            self.lat_dist.add(lat.clat);
        }
        if rec.lat {
            ds.lat.record(lat.lat);
        }
    }

    /// Copies `o` into `self` without allocating (status snapshots).
    pub fn copy_from(&mut self, o: &JobStats) {
        for (a, b) in self.dir.iter_mut().zip(o.dir.iter()) {
            a.copy_from(b);
        }
        self.sync_lat.copy_from(&o.sync_lat);
        self.write_sync_lat.copy_from(&o.write_sync_lat);
        self.sync_ios = o.sync_ios;
        self.depth = o.depth;
        self.submit = o.submit;
        self.complete = o.complete;
        self.submit_calls = o.submit_calls;
        self.complete_calls = o.complete_calls;
        self.depth_total = o.depth_total;
        self.lat_dist = o.lat_dist.clone();
        self.usr_us = o.usr_us;
        self.sys_us = o.sys_us;
        self.ctx = o.ctx;
        self.majf = o.majf;
        self.minf = o.minf;
        self.runtime_ms = o.runtime_ms;
        self.elapsed_ms = o.elapsed_ms;
        self.latency_depth = o.latency_depth;
        self.total_err = o.total_err;
        self.first_error = o.first_error;
        self.zone_resets = o.zone_resets;
        self.retries = o.retries;
        self.objects_listed = o.objects_listed;
        self.ioprio = o.ioprio;
        self.prio_lat = o.prio_lat;
    }

    /// Clears every figure, keeping the histogram allocations (end of
    /// ramp, latency-target restarts). The latency depth is kept.
    pub fn reset(&mut self) {
        for d in &mut self.dir {
            d.bytes = 0;
            d.ios = 0;
            d.short_ios = 0;
            d.drop_ios = 0;
            d.slat.clear();
            d.clat.clear();
            d.lat.clear();
            if let Some(t) = &mut d.ttfb {
                t.clear();
            }
            d.bw_samples = SampleStats::default();
            d.iops_samples = SampleStats::default();
            d.runtime_ms = 0;
            d.prios.iter_mut().for_each(|p| p.lat.clear());
        }
        self.sync_lat.clear();
        self.write_sync_lat.clear();
        self.sync_ios = 0;
        self.depth = [0; DEPTH_BUCKETS];
        self.submit = [0; DEPTH_BUCKETS];
        self.complete = [0; DEPTH_BUCKETS];
        self.submit_calls = 0;
        self.complete_calls = 0;
        self.depth_total = 0;
        self.lat_dist = LatDist::default();
        self.usr_us = 0;
        self.sys_us = 0;
        self.ctx = 0;
        self.majf = 0;
        self.minf = 0;
        self.runtime_ms = 0;
        self.elapsed_ms = 0;
        self.total_err = 0;
        self.first_error = 0;
        self.steady = None;
        self.zone_resets = 0;
        self.retries = 0;
        self.objects_listed = 0;
    }
}

/// Records the latency of an I/O of the priority counted at `prio` of
/// `ds` (total latency when `total_lat`); out of line, as only jobs with
/// per-I/O priorities get here.
#[inline(never)]
fn record_prio(ds: &mut DirStats, total_lat: bool, lat: IoLatency, rec: RecordFlags, prio: u16) {
    if let Some(p) = ds.prios.get_mut(prio as usize) {
        match (total_lat, rec.lat, rec.clat) {
            (true, true, _) => p.lat.record(lat.lat),
            (false, _, true) => p.lat.record(lat.clat),
            _ => {}
        }
    }
}

/// The three latencies of one I/O, in ns.
#[derive(Clone, Copy, Debug, Default)]
pub struct IoLatency {
    pub slat: u64,
    pub clat: u64,
    pub lat: u64,
}

/// Which latencies a job records (`disable_*`, `gtod_reduce`, engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordFlags {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
    /// Count the I/O in the latency distribution.
    pub dist: bool,
}

/// CPU usage of the calling thread.
/// The calling thread's usage (Linux, FreeBSD); the process's on macOS,
/// which has no per-thread `getrusage`.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
const RUSAGE_THREAD: i32 = libc::RUSAGE_THREAD;
#[cfg(all(unix, not(any(target_os = "linux", target_os = "freebsd"))))]
const RUSAGE_THREAD: i32 = libc::RUSAGE_SELF;

#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadUsage {
    pub usr_us: u64,
    pub sys_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

impl ThreadUsage {
    /// On Windows: the thread's user and kernel times (`GetThreadTimes`);
    /// context switches and faults are not kept per thread there.
    #[cfg(windows)]
    pub fn now() -> Self {
        let (usr_us, sys_us) = crate::sys::thread_times_us();
        ThreadUsage {
            usr_us,
            sys_us,
            ..ThreadUsage::default()
        }
    }

    #[cfg(unix)]
    pub fn now() -> Self {
        // SAFETY: a C struct of plain data, for which all zero bytes are valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage fills the zeroed struct.
        if unsafe { libc::getrusage(RUSAGE_THREAD, &mut ru) } != 0 {
            return ThreadUsage::default();
        }
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        ThreadUsage {
            usr_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            majf: ru.ru_majflt as u64,
            minf: ru.ru_minflt as u64,
        }
    }

    pub fn since(self, start: ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            usr_us: self.usr_us.saturating_sub(start.usr_us),
            sys_us: self.sys_us.saturating_sub(start.sys_us),
            ctx: self.ctx.saturating_sub(start.ctx),
            majf: self.majf.saturating_sub(start.majf),
            minf: self.minf.saturating_sub(start.minf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_index_is_the_first_bound_above() {
        for v in 0..3000u64 {
            let want = LAT_EDGES.iter().position(|e| v < *e).unwrap_or(9);
            assert_eq!(edge_index(v), want, "{v}");
        }
        assert_eq!(edge_index(u64::MAX), 9);
    }

    #[test]
    fn depth_and_batch_buckets_are_fios_ranges() {
        // fio's depth buckets: 1, 2, 4, 8, 16, 32, >=64 (0 counts as 1).
        let depth = |d: u32| match d {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        // fio's submit/complete buckets: 0, 4, 8, 16, 32, 64, >=64.
        let batch = |n: u32| match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        for v in (0..=4200).chain([u32::MAX - 1, u32::MAX]) {
            assert_eq!(depth_bucket(v), depth(v), "depth {v}");
            assert_eq!(batch_bucket(v), batch(v), "batch {v}");
        }
    }

    #[test]
    fn latency_distribution_buckets() {
        let mut d = LatDist::default();
        d.add(1); // <2ns
        d.add(3_000); // 2..4 us -> "4"
        d.add(760_000); // 750..1000 us -> "1000"
        d.add(1_500_000_000); // 1.5 s -> "2000"
        d.add(3_000_000_000); // >= 2 s
        assert_eq!(d.nsec[0], 1);
        assert_eq!(d.usec[1], 1);
        assert_eq!(d.usec[9], 1);
        assert_eq!(d.msec[10], 1);
        assert_eq!(d.msec[11], 1);
        assert_eq!(d.total(), 5);
    }

    #[test]
    fn four_clones_merged_equal_one_job_fed_everything() {
        let rec = RecordFlags {
            slat: true,
            clat: true,
            lat: true,
            dist: true,
        };
        let mut clones: Vec<JobStats> = (0..4).map(|_| JobStats::default()).collect();
        let mut all = JobStats::default();
        let mut x = 987654321u64;
        for i in 0..50_000usize {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let clat = (x >> 33) % 20_000_000;
            let lat = IoLatency {
                slat: clat / 7,
                clat,
                lat: clat + clat / 7,
            };
            let d = (x >> 20) as usize % 2;
            clones[i % 4].record_io(d, 4096, false, lat, rec, 0);
            all.record_io(d, 4096, false, lat, rec, 0);
        }
        let mut merged = JobStats::default();
        for c in &clones {
            merged.merge(c);
        }
        let list = crate::job::spec::DEFAULT_PERCENTILES;
        for d in 0..2 {
            let (m, a) = (&merged.dir[d], &all.dir[d]);
            assert_eq!(m.clat, a.clat);
            assert_eq!(m.slat, a.slat);
            assert_eq!(m.lat, a.lat);
            assert_eq!(m.clat.percentiles(&list), a.clat.percentiles(&list));
            assert_eq!((m.ios, m.bytes), (a.ios, a.bytes));
        }
        assert_eq!(merged.lat_dist, all.lat_dist);
    }

    const REC: RecordFlags = RecordFlags {
        slat: true,
        clat: true,
        lat: true,
        dist: true,
    };

    /// Stats of a job at priority `own` whose directions keep latencies
    /// for `values` (the job's own first); none when `values` is empty.
    fn prio_job(own: u16, values: &[u16]) -> JobStats {
        let mut s = JobStats {
            ioprio: own,
            ..JobStats::default()
        };
        for d in &mut s.dir {
            d.prios = values
                .iter()
                .map(|v| PrioStat {
                    ioprio: *v,
                    lat: Histogram::new(),
                })
                .collect();
        }
        s
    }

    /// Feeds `n` I/Os spread over directions 0 and 1 and over `nprios`
    /// priority indexes, with latencies from `seed`.
    fn feed(s: &mut JobStats, n: usize, nprios: u16, seed: u64) {
        let mut x = seed;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let clat = (x >> 33) % 5_000_000 + 1;
            let lat = IoLatency {
                slat: clat / 9,
                clat,
                lat: clat + clat / 9,
            };
            let d = (x >> 13) as usize % 2;
            let p = ((x >> 7) % nprios as u64) as u16;
            s.record_io(d, 4096, false, lat, REC, p);
        }
    }

    #[test]
    fn per_priority_latencies_merge_exactly() {
        let values = [0u16, 0x2000, 0x6003];
        let mut clones: Vec<JobStats> = (0..4).map(|_| prio_job(0, &values)).collect();
        for (i, c) in clones.iter_mut().enumerate() {
            feed(c, 5_000 + i * 100, 3, i as u64 + 1);
        }
        // One stats fed every clone's I/Os.
        let mut all = prio_job(0, &values);
        for i in 0..4 {
            feed(&mut all, 5_000 + i * 100, 3, i as u64 + 1);
        }
        let mut merged = JobStats::default();
        for c in &clones {
            merged.merge(c);
        }
        let list = crate::job::spec::DEFAULT_PERCENTILES;
        for d in 0..2 {
            let (m, a) = (&merged.dir[d], &all.dir[d]);
            assert_eq!(m.prios, a.prios, "direction {d}");
            let n: u64 = m.prios.iter().map(|p| p.lat.count()).sum();
            assert_eq!(n, m.ios, "every I/O in one priority");
            for (p, q) in m.prios.iter().zip(&a.prios) {
                assert_eq!(p.lat.percentiles(&list), q.lat.percentiles(&list));
                assert_eq!(
                    p.lat.summary.stddev().to_bits(),
                    q.lat.summary.stddev().to_bits()
                );
            }
        }
        assert_eq!(merged.dir[0].prios_with_samples(), 3);
        // The mixed direction holds both directions' I/Os per priority.
        let mixed = merged.mixed();
        for (i, p) in mixed.prios.iter().enumerate() {
            let want = merged.dir[0].prios[i].lat.count() + merged.dir[1].prios[i].lat.count();
            assert_eq!((p.ioprio, p.lat.count()), (values[i], want));
        }
    }

    #[test]
    fn jobs_at_different_priorities_keep_each_ones_latencies() {
        // Two jobs without per-I/O priorities, at 2/3 and 3/0, then a
        // third at 2/3 again: fio's group keeps them apart.
        let mut a = prio_job(0x4003, &[]);
        let mut b = prio_job(0x6000, &[]);
        let mut c = prio_job(0x4003, &[]);
        feed(&mut a, 300, 1, 1);
        feed(&mut b, 200, 1, 2);
        feed(&mut c, 100, 1, 3);
        let mut g = a.clone();
        g.merge(&b);
        g.merge(&c);
        for d in 0..2 {
            let p = &g.dir[d].prios;
            assert_eq!(p.len(), 2);
            let mut first = a.dir[d].clat.clone();
            first.merge(&c.dir[d].clat);
            assert_eq!((p[0].ioprio, &p[0].lat), (0x4003, &first));
            assert_eq!((p[1].ioprio, &p[1].lat), (0x6000, &b.dir[d].clat));
        }
        // The same priority everywhere keeps nothing per priority.
        let mut same = a.clone();
        same.merge(&c);
        assert!(!same.keeps_prios());
        // Total latencies when the jobs report those.
        let (mut x, mut y) = (prio_job(0, &[]), prio_job(0x2000, &[]));
        x.prio_lat = true;
        y.prio_lat = true;
        feed(&mut x, 50, 1, 4);
        feed(&mut y, 50, 1, 5);
        x.merge(&y);
        assert_eq!(x.dir[0].prios[1].lat, y.dir[0].lat);
        // An empty total takes the first job's priority.
        let mut empty = JobStats::default();
        empty.merge(&a);
        assert!(!empty.keeps_prios());
        assert_eq!(empty.ioprio, 0x4003);
    }

    #[test]
    fn a_job_with_per_io_priorities_merges_with_one_without() {
        let mut a = prio_job(0, &[0, 0x2000]);
        feed(&mut a, 1000, 2, 7);
        let mut b = prio_job(0, &[]);
        feed(&mut b, 500, 1, 8);
        let mut g = a.clone();
        g.merge(&b);
        for d in 0..2 {
            let p = &g.dir[d].prios;
            let mut own = a.dir[d].prios[0].lat.clone();
            own.merge(&b.dir[d].clat);
            assert_eq!(p[0].lat, own);
            assert_eq!(p[1].lat, a.dir[d].prios[1].lat);
        }
        // A direction without per-priority statistics adds into the
        // job's own priority in the mixed direction.
        let mut r = prio_job(0x4000, &[]);
        r.dir[0].prios = vec![
            PrioStat {
                ioprio: 0x4000,
                lat: Histogram::new(),
            },
            PrioStat {
                ioprio: 0x2001,
                lat: Histogram::new(),
            },
        ];
        feed(&mut r, 2000, 2, 9);
        let m = r.mixed();
        assert_eq!(
            m.prios[0].lat.count(),
            r.dir[0].prios[0].lat.count() + r.dir[1].clat.count()
        );
        assert_eq!(m.prios[1].lat, r.dir[0].prios[1].lat);
    }

    #[test]
    fn reset_and_copy_keep_the_priority_layout() {
        let mut a = prio_job(0, &[0, 0x2000]);
        feed(&mut a, 100, 2, 1);
        let mut snap = JobStats::default();
        snap.copy_from(&a);
        assert_eq!(snap.dir, a.dir);
        feed(&mut a, 100, 2, 2);
        // Same layout: copied in place.
        let before = snap.dir[0].prios.as_ptr();
        snap.copy_from(&a);
        assert_eq!(snap.dir[0].prios.as_ptr(), before);
        assert_eq!(snap.dir, a.dir);
        a.reset();
        assert_eq!(a.dir[0].prios.len(), 2);
        assert!(a
            .dir
            .iter()
            .all(|d| d.prios.iter().all(|p| p.lat.count() == 0)));
    }

    #[test]
    fn depth_and_batch_buckets() {
        assert_eq!(depth_bucket(1), 0);
        assert_eq!(depth_bucket(16), 4);
        assert_eq!(depth_bucket(100), 6);
        assert_eq!(batch_bucket(0), 0);
        assert_eq!(batch_bucket(1), 1);
        assert_eq!(batch_bucket(4), 1);
        assert_eq!(batch_bucket(5), 2);
    }

    #[test]
    fn times_to_first_byte_merge_copy_and_clear_only_where_kept() {
        let mut a = DirStats::default();
        let mut t = Histogram::new();
        t.record(1_000);
        t.record(3_000);
        let b = DirStats {
            ttfb: Some(Box::new(t)),
            ..DirStats::default()
        };
        a.merge(&DirStats::default());
        assert!(a.ttfb.is_none(), "a file job's streams keep none");
        a.merge(&b);
        a.merge(&b);
        let kept = a.ttfb.as_deref().unwrap();
        assert_eq!(
            (kept.count(), kept.summary.min, kept.summary.max),
            (4, 1_000, 3_000)
        );
        let mut c = DirStats::default();
        c.copy_from(&a);
        assert_eq!(c.ttfb, a.ttfb);
        c.copy_from(&DirStats::default());
        assert!(c.ttfb.is_none());
        let mut js = JobStats::default();
        js.dir[0] = a;
        js.reset();
        assert_eq!(js.dir[0].ttfb.as_deref().map(Histogram::count), Some(0));
        let wire = wire::encode(&b);
        let back: DirStats = wire::decode(&wire).unwrap();
        assert_eq!(back, b, "ranks send it to rank 0");
        let none: DirStats = wire::decode(&wire::encode(&DirStats::default())).unwrap();
        assert!(none.ttfb.is_none());
    }
}
