//! The I/O queue: a job's I/O units and the engine they go to.
//!
//! It owns the units (one per queue slot, each with its slice of the
//! aligned buffer pool, which it keeps alive until the engine is gone),
//! the lists that say where each unit is (free, queued but not yet
//! committed, in flight), the batching rules (`iodepth`,
//! `iodepth_batch_submit`, `iodepth_batch_complete_min/max`,
//! `iodepth_low`, `serialize_overlap`) and the completions vector reserved
//! at setup. Its operations (take a unit, prepare it, issue it, commit,
//! reap, drain) are the only code that hands I/O to the engine: the data
//! pass and the verify reads both go through them.
//!
//! It does not account. What completes is handed to its owner (the
//! worker) through [`Completions`]: short transfers, statistics,
//! verification and pacing are the owner's. On the hot path it allocates
//! nothing (every list has its capacity from the start) and makes no
//! system call but the engine's.

use crate::engine::{Completion, Engine, IoPrio, IoUnit, Op, Queued};
use crate::run::files::OpenedFile;
use crate::run::memory::BufferMemory;
use crate::stats::{batch_bucket, depth_bucket, JobStats};
use crate::workload::prio::PrioChooser;
use crate::workload::NextIo;

/// What the queue needs from its owner while it works.
pub(super) trait Completions {
    /// The worker's clock (ns).
    fn now(&mut self) -> u64;
    /// The job's statistics while they are being measured (not in the
    /// ramp): submission and completion batches, queue depths.
    fn tally(&mut self) -> Option<&mut JobStats>;
    /// Whether the job has failed.
    fn failed(&self) -> bool;
    /// Fails the job (the first error is kept).
    fn fail(&mut self, errno: i32, msg: String);
    /// The transfer in unit `idx` returned `result`: the result of the
    /// whole I/O, or `None` when the rest of a short transfer was queued
    /// again (the unit stays busy).
    fn settle(&mut self, q: &mut IoQueue, idx: u32, result: i64) -> Option<i64>;
    /// Accounts a finished I/O; `queued` is false when the engine did it
    /// inside `queue` (no submission latency).
    fn account(&mut self, q: &mut IoQueue, idx: u32, result: i64, now: u64, queued: bool);
    /// After an I/O the engine completed inside `queue`.
    fn after_inline(&mut self, q: &mut IoQueue, now: u64);
    /// After a reap that collected `n` completions.
    fn after_reap(&mut self, q: &mut IoQueue, n: u32, now: u64);
}

/// The batching rules, clamped to the queue's depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Batching {
    /// I/Os allowed in flight now (a latency target may change it).
    pub depth: u32,
    /// Commit once this many are queued (`iodepth_batch_submit`).
    pub submit: u32,
    /// Reap at least / at most this many at once
    /// (`iodepth_batch_complete_min/max`).
    pub complete_min: u32,
    pub complete_max: u32,
    /// A full queue is reaped down to this many (`iodepth_low`).
    pub low: u32,
}

impl Batching {
    /// The rules for `units` units, `depth` of them usable at first; 0
    /// in an option means its default.
    pub fn new(io: &crate::job::spec::IoOpts, units: u32, depth: u32) -> Batching {
        let complete_min = io.iodepth_batch_complete_min.min(units);
        Batching {
            depth,
            submit: match io.iodepth_batch_submit {
                0 => units,
                n => n.min(units),
            },
            complete_min,
            complete_max: match io.iodepth_batch_complete_max {
                0 => complete_min.max(1),
                m => m.min(units).max(1),
            },
            low: match io.iodepth_low {
                0 => units,
                l => l.min(units),
            },
        }
    }
}

/// What became of an I/O offered to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Issued {
    /// Queued; committed once a batch is full.
    Queued,
    /// Done inside `queue` and accounted, at this time.
    Completed(u64),
    /// The engine had no room: something was reaped, offer it again.
    Busy,
    /// The engine refused it with nothing in flight: the job failed.
    Refused,
}

/// See the module docs.
pub(super) struct IoQueue {
    engine: Box<dyn Engine>,
    units: Vec<IoUnit>,
    /// Units ready to take.
    free: Vec<u32>,
    /// Per unit: queued or in flight (for `serialize_overlap`).
    busy: Vec<bool>,
    /// Queued, not yet committed.
    uncommitted: Vec<u32>,
    completions: Vec<Completion>,
    inflight: u32,
    batch: Batching,
    /// Writes wait for in-flight I/O they overlap.
    serialize: bool,
    /// `sync_file_range` flags.
    sfr_flags: u32,
    /// Each I/O's priority (`cmdprio*`, `prio`).
    prio: PrioChooser,
    /// The priority drawn for the I/O the engine was busy for: it goes
    /// with that I/O when it is offered again (one draw per I/O).
    held_prio: Option<IoPrio>,
    /// The clock reading taken when the last commit returned, until a
    /// reap takes it: a reap that follows with nothing in between and
    /// does not wait completes what it collects by then, so it times
    /// them with this reading rather than a new one.
    commit_ns: Option<u64>,
    /// Whether commits leave `commit_ns` (a real clock, a job that
    /// neither waits by choice nor verifies: as `Worker::stamps`).
    reuse_commit: bool,
    /// Dropped last: the engine may hold registrations of these buffers.
    _pool: BufferMemory,
}

impl IoQueue {
    /// Adds to `stats` what the engine did outside the job's thread over
    /// the job: its own threads' CPU time (the http engine's senders) and
    /// the requests it sent again.
    pub fn add_side_counters(&self, stats: &mut JobStats) {
        let side = self.engine.side_counters();
        stats.usr_us += side.usr_us;
        stats.sys_us += side.sys_us;
        stats.ctx += side.ctx;
        stats.retries += side.retries;
        stats.objects_listed += side.listed;
        if let Some(live) = self.engine.first_byte() {
            // A poisoned lock only means a sender panicked.
            let h = live.lock().unwrap_or_else(|e| e.into_inner());
            for (d, h) in stats.dir.iter_mut().zip(h.iter()) {
                if h.count() > 0 {
                    d.add_ttfb(h);
                }
            }
        }
    }

    /// Measuring starts again: the engine drops what it measured on its
    /// own side (times to first byte).
    pub fn restart_side(&mut self) {
        self.engine.restart_side();
    }

    /// A queue of one unit per `unit_size` bytes of `pool`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: Box<dyn Engine>,
        pool: BufferMemory,
        unit_size: usize,
        units: u32,
        batch: Batching,
        serialize: bool,
        sfr_flags: u32,
        prio: PrioChooser,
    ) -> IoQueue {
        assert!(
            units as usize * unit_size <= pool.size,
            "unit pool too small"
        );
        let list = (0..units)
            .map(|i| {
                // SAFETY: each unit's slice lies inside the pool allocation
                // (asserted above), units' slices do not overlap, and the
                // queue keeps the pool (`_pool`) as long as its units.
                let mut u = unsafe {
                    IoUnit::new(i, pool.ptr.add(i as usize * unit_size), unit_size as u64)
                };
                u.prio = prio.own();
                u
            })
            .collect();
        IoQueue {
            engine,
            units: list,
            free: (0..units).rev().collect(),
            busy: vec![false; units as usize],
            uncommitted: Vec::with_capacity(units as usize),
            completions: Vec::with_capacity(units as usize),
            inflight: 0,
            batch,
            serialize,
            sfr_flags,
            prio,
            held_prio: None,
            commit_ns: None,
            reuse_commit: true,
            _pool: pool,
        }
    }

    /// A new loop, or the read-back of what was written, starts: the
    /// priority draws start over where fio's do.
    pub fn restart_prio(&mut self) {
        self.prio.restart();
    }

    pub fn engine(&self) -> &dyn Engine {
        self.engine.as_ref()
    }

    pub fn engine_mut(&mut self) -> &mut dyn Engine {
        self.engine.as_mut()
    }

    #[inline]
    pub fn unit(&self, idx: u32) -> &IoUnit {
        &self.units[idx as usize]
    }

    #[inline]
    pub fn unit_mut(&mut self, idx: u32) -> &mut IoUnit {
        &mut self.units[idx as usize]
    }

    #[inline]
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// Whether a reap right after a commit may time its completions with
    /// the commit's clock reading (see `commit_ns`).
    pub fn reuse_commit_reading(&mut self, on: bool) {
        self.reuse_commit = on;
        self.commit_ns = None;
    }

    /// Something other than queue bookkeeping may have run since the last
    /// commit (the loop's top, a pause): its clock reading is stale.
    #[inline]
    pub fn forget_commit(&mut self) {
        self.commit_ns = None;
    }

    /// Runs at `depth` from now on (1 to the number of units).
    pub fn set_depth(&mut self, depth: u32) {
        self.batch.depth = depth.clamp(1, self.units.len() as u32);
        self.batch.low = self.batch.low.min(self.batch.depth);
    }

    /// No room for another I/O at the current depth.
    #[inline]
    fn full(&self) -> bool {
        self.inflight + self.uncommitted.len() as u32 >= self.batch.depth
    }

    /// A free unit; when there is none, commits and reaps once first.
    #[inline]
    pub fn take_unit<S: Completions>(&mut self, s: &mut S) -> Option<u32> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        self.commit(s);
        self.reap(self.batch.complete_min.max(1), s);
        self.free.pop()
    }

    /// Prepares unit `idx` for `next` on file `f`, started at `now`.
    #[inline]
    pub fn prep(&mut self, idx: u32, next: &NextIo, f: &OpenedFile, now: u64) {
        let u = &mut self.units[idx as usize];
        u.op = next.op;
        u.file = next.file;
        u.fd = f.fd;
        u.file_data = f.data;
        u.offset = next.offset;
        u.set_len(next.len);
        u.start_ns = now;
        u.issue_ns = now;
        u.result = 0;
        debug_assert_eq!(u.moved(), 0, "a short transfer left unrewound");
        u.sfr_flags = self.sfr_flags;
        // Without per-I/O priorities every unit keeps the job's (set in
        // `new`): nothing to do per I/O.
        if self.prio.per_io() {
            u.prio = match self.held_prio.take() {
                Some(p) => p,
                None => self.prio.choose(next.op, next.len),
            };
        }
        if next.op == Op::SyncFileRange {
            u.offset = 0;
            u.set_len(0);
        }
    }

    /// Offers the prepared unit `idx` to the engine; a batch that is full
    /// (`iodepth_batch_submit`, or the depth) is committed.
    #[inline]
    pub fn issue<S: Completions>(&mut self, idx: u32, s: &mut S) -> Issued {
        match self.engine.queue(&mut self.units[idx as usize]) {
            Queued::Completed => Issued::Completed(self.complete_inline(idx, s)),
            Queued::Queued => {
                self.busy[idx as usize] = true;
                self.uncommitted.push(idx);
                if self.uncommitted.len() as u32 >= self.batch.submit || self.full() {
                    self.commit(s);
                }
                Issued::Queued
            }
            Queued::Busy => {
                self.held_prio = Some(self.units[idx as usize].prio);
                self.free.push(idx);
                self.commit(s);
                if self.inflight == 0 {
                    s.fail(
                        libc::EIO,
                        format!(
                            "{} engine refused an I/O with nothing in flight",
                            self.engine.name()
                        ),
                    );
                    return Issued::Refused;
                }
                self.reap(1, s);
                Issued::Busy
            }
        }
    }

    /// Queues the rest of a short transfer in unit `idx` again; what the
    /// engine answered.
    pub fn requeue(&mut self, idx: u32) -> Queued {
        let r = self.engine.queue(&mut self.units[idx as usize]);
        if r == Queued::Queued {
            self.uncommitted.push(idx);
        }
        r
    }

    /// After an I/O was offered: a full queue is committed and reaped,
    /// at least one completion and on down to `iodepth_low`; with
    /// `iodepth_batch_complete_min=0`, whatever is done is collected.
    #[inline]
    pub fn keep_depth<S: Completions>(&mut self, s: &mut S) {
        if self.full() {
            // Right after `issue`: its commit's reading still holds when
            // nothing is left to submit.
            if !self.uncommitted.is_empty() {
                self.commit(s);
            }
            let min = self.batch.complete_min.max(1);
            loop {
                self.reap(min, s);
                if self.inflight <= self.batch.low || s.failed() {
                    break;
                }
            }
        } else if self.batch.complete_min == 0 && self.inflight > 0 {
            self.reap(0, s);
        }
    }

    /// Completes the prepared unit `idx` without the engine, as if it
    /// had moved all its bytes (a zoned trim that was a zone reset).
    #[cold]
    pub fn complete_now<S: Completions>(&mut self, idx: u32, s: &mut S) -> Issued {
        let u = &mut self.units[idx as usize];
        u.result = u.len() as i64;
        Issued::Completed(self.complete_inline(idx, s))
    }

    /// Accounts a unit the engine completed inside `queue` (a submit and
    /// a completion of one I/O at the current depth); returns the time.
    fn complete_inline<S: Completions>(&mut self, idx: u32, s: &mut S) -> u64 {
        let result = self.units[idx as usize].result;
        let Some(result) = s.settle(self, idx, result) else {
            self.busy[idx as usize] = true;
            return s.now();
        };
        let done = s.now();
        let depth = depth_bucket(self.inflight + 1);
        if let Some(st) = s.tally() {
            st.submit[1] += 1;
            st.submit_calls += 1;
            st.complete[1] += 1;
            st.complete_calls += 1;
            st.depth[depth] += 1;
            st.depth_total += 1;
        }
        s.account(self, idx, result, done, false);
        self.free.push(idx);
        s.after_inline(self, done);
        done
    }

    /// Submits what is queued.
    pub fn commit<S: Completions>(&mut self, s: &mut S) {
        if self.uncommitted.is_empty() {
            // What follows is not right after a commit.
            self.commit_ns = None;
            return;
        }
        let n = self.uncommitted.len() as u32;
        if let Err(e) = self.engine.commit() {
            let errno = crate::sys::errno_of(&e).unwrap_or(libc::EIO);
            let why = self.refusal_reason(errno);
            s.fail(errno, format!("submit failed: {e}{why}"));
            return;
        }
        let now = s.now();
        if self.reuse_commit {
            self.commit_ns = Some(now);
        }
        for &i in &self.uncommitted {
            self.units[i as usize].issue_ns = now;
        }
        self.uncommitted.clear();
        self.inflight += n;
        let depth = depth_bucket(self.inflight);
        if let Some(st) = s.tally() {
            st.submit[batch_bucket(n)] += 1;
            st.submit_calls += 1;
            st.depth[depth] += n as u64;
            st.depth_total += n as u64;
        }
    }

    /// Why the kernel may have refused the uncommitted I/O with `errno`:
    /// a real-time priority of its own without the privilege for it.
    #[cold]
    fn refusal_reason(&self, errno: i32) -> &'static str {
        if errno != libc::EPERM {
            return "";
        }
        self.uncommitted
            .iter()
            .map(|i| self.units[*i as usize].prio)
            .filter(|p| p.per_io)
            .map(|p| crate::job::ioprio::eperm_reason(p.value))
            .find(|r| !r.is_empty())
            .unwrap_or("")
    }

    /// Reaps at least `min` completions (0: only what is already done),
    /// at most `iodepth_batch_complete_max` (or `min` when larger).
    pub fn reap<S: Completions>(&mut self, min: u32, s: &mut S) {
        let committed = self.commit_ns.take();
        if self.inflight == 0 {
            return;
        }
        let max = self.batch.complete_max.max(min).min(self.inflight);
        let r = self
            .engine
            .reap(min.min(self.inflight), max, &mut self.completions);
        let n = match r {
            Ok(n) => n,
            Err(e) => {
                s.fail(
                    crate::sys::errno_of(&e).unwrap_or(libc::EIO),
                    format!("reaping completions failed: {e}"),
                );
                return;
            }
        };
        if n == 0 {
            return;
        }
        let now = match committed {
            Some(t) if !self.engine.reap_waited() => t,
            _ => s.now(),
        };
        let mut requeued = false;
        for k in 0..self.completions.len() {
            let c = self.completions[k];
            match s.settle(self, c.idx, c.result) {
                Some(result) => {
                    s.account(self, c.idx, result, now, true);
                    self.busy[c.idx as usize] = false;
                    self.free.push(c.idx);
                }
                None => requeued = true,
            }
        }
        self.inflight -= n;
        if requeued {
            // The rests of short transfers go out at once.
            self.commit(s);
        }
        if let Some(st) = s.tally() {
            st.complete[batch_bucket(n)] += 1;
            st.complete_calls += 1;
        }
        s.after_reap(self, n, now);
    }

    /// Submits what is queued and waits for everything in flight; after
    /// an error, still collects what is in flight so buffers are free.
    pub fn drain<S: Completions>(&mut self, s: &mut S) {
        self.commit(s);
        while self.inflight > 0 && !s.failed() {
            self.reap(1, s);
        }
        while self.inflight > 0 {
            let before = self.inflight;
            self.reap(1, s);
            if self.inflight == before {
                break;
            }
        }
    }

    /// With `serialize_overlap` (or verification that needs it), waits
    /// until no queued or in-flight I/O overlaps `next`.
    #[inline]
    pub fn wait_for_overlaps<S: Completions>(&mut self, next: &NextIo, s: &mut S) {
        if !self.serialize {
            return;
        }
        while self.overlaps(next) && !s.failed() {
            self.commit(s);
            self.reap(1, s);
        }
    }

    /// True when `next` overlaps an I/O that is queued or in flight.
    fn overlaps(&self, next: &NextIo) -> bool {
        let end = next.offset + next.len;
        self.busy.iter().enumerate().any(|(i, b)| {
            let u = &self.units[i];
            *b && u.file == next.file && u.offset < end && next.offset < u.offset + u.len()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Caps;
    use crate::job::spec::MemType;
    use std::sync::{Arc, Mutex};

    /// What the scripted engine was asked to do.
    #[derive(Default)]
    struct Calls {
        commits: Vec<u32>,
        reaps: Vec<(u32, u32)>,
        /// The priority of each I/O taken, in order; Busy answers.
        prios: Vec<IoPrio>,
        busy: u32,
    }

    /// An engine that takes up to `room` I/Os, answers `Busy` beyond,
    /// completes what was committed when reaped (reads fail with EIO when
    /// `fail_reads`), and logs its calls.
    struct Scripted {
        room: usize,
        fail_reads: bool,
        queued: Vec<Completion>,
        committed: usize,
        calls: Arc<Mutex<Calls>>,
        /// What `reap_waited` answers.
        waits: bool,
    }

    impl Engine for Scripted {
        fn kind(&self) -> crate::job::engine_kind::EngineKind {
            crate::job::engine_kind::EngineKind::Libaio
        }
        fn caps(&self) -> Caps {
            Caps::default()
        }
        fn queue(&mut self, io: &mut IoUnit) -> Queued {
            if self.queued.len() >= self.room {
                self.calls.lock().unwrap().busy += 1;
                return Queued::Busy;
            }
            self.calls.lock().unwrap().prios.push(io.prio);
            let result = if self.fail_reads && io.op == Op::Read {
                -(libc::EIO as i64)
            } else {
                io.len() as i64
            };
            self.queued.push(Completion {
                idx: io.idx,
                result,
            });
            Queued::Queued
        }
        fn commit(&mut self) -> std::io::Result<u32> {
            let n = (self.queued.len() - self.committed) as u32;
            self.calls.lock().unwrap().commits.push(n);
            self.committed = self.queued.len();
            Ok(n)
        }
        fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
            self.calls.lock().unwrap().reaps.push((min, max));
            out.clear();
            let n = self.committed.min(max as usize);
            out.extend(self.queued.drain(..n));
            self.committed -= n;
            Ok(n as u32)
        }
        fn reap_waited(&self) -> bool {
            self.waits
        }
    }

    /// An owner that counts what the queue hands it.
    #[derive(Default)]
    struct Owner {
        t: u64,
        stats: JobStats,
        error: i32,
        accounted: Vec<(u32, i64)>,
        /// The completion time each accounted I/O got.
        times: Vec<u64>,
        reaps: u32,
    }

    impl Completions for Owner {
        fn now(&mut self) -> u64 {
            self.t += 1;
            self.t
        }
        fn tally(&mut self) -> Option<&mut JobStats> {
            Some(&mut self.stats)
        }
        fn failed(&self) -> bool {
            self.error != 0
        }
        fn fail(&mut self, errno: i32, _msg: String) {
            if self.error == 0 {
                self.error = errno;
            }
        }
        fn settle(&mut self, _q: &mut IoQueue, _idx: u32, result: i64) -> Option<i64> {
            Some(result)
        }
        fn account(&mut self, _q: &mut IoQueue, idx: u32, result: i64, now: u64, _queued: bool) {
            if result < 0 {
                self.fail((-result) as i32, String::new());
            }
            self.accounted.push((idx, result));
            self.times.push(now);
        }
        fn after_inline(&mut self, _q: &mut IoQueue, _now: u64) {}
        fn after_reap(&mut self, _q: &mut IoQueue, _n: u32, _now: u64) {
            self.reaps += 1;
        }
    }

    /// A queue of `units` units on a scripted engine with `room`.
    fn queue(
        room: usize,
        fail_reads: bool,
        units: u32,
        batch: Batching,
    ) -> (IoQueue, Arc<Mutex<Calls>>) {
        let spec = crate::job::JobSpec::default();
        queue_with(
            room,
            fail_reads,
            units,
            batch,
            PrioChooser::new(&spec, 1, 0),
        )
    }

    /// `queue`, with the I/Os' priorities from `prio`.
    fn queue_with(
        room: usize,
        fail_reads: bool,
        units: u32,
        batch: Batching,
        prio: PrioChooser,
    ) -> (IoQueue, Arc<Mutex<Calls>>) {
        let calls = Arc::new(Mutex::new(Calls::default()));
        let engine = Scripted {
            room,
            fail_reads,
            queued: Vec::new(),
            committed: 0,
            calls: calls.clone(),
            waits: true,
        };
        let pool = BufferMemory::new(units as usize * 512, 512, &MemType::Malloc, 0).unwrap();
        let q = IoQueue::new(Box::new(engine), pool, 512, units, batch, false, 0, prio);
        (q, calls)
    }

    fn read(offset: u64) -> NextIo {
        NextIo {
            op: Op::Read,
            file: 0,
            offset,
            len: 512,
        }
    }

    fn no_file() -> OpenedFile {
        OpenedFile {
            fd: -1,
            data: 0,
            size: 1 << 20,
            open_ns: 0,
        }
    }

    fn batching(depth: u32, submit: u32, min: u32, max: u32, low: u32) -> Batching {
        Batching {
            depth,
            submit,
            complete_min: min,
            complete_max: max,
            low,
        }
    }

    /// Issues `n` reads of 512 bytes the way the pass does.
    fn issue_reads(q: &mut IoQueue, o: &mut Owner, n: u32) {
        for k in 0..n {
            let idx = q.take_unit(o).expect("a free unit");
            q.prep(idx, &read(k as u64 * 512), &no_file(), 0);
            assert_eq!(q.issue(idx, o), Issued::Queued);
            q.keep_depth(o);
        }
    }

    #[test]
    fn batching_defaults_and_clamps_follow_the_options() {
        let mut io = crate::job::JobSpec::default().io;
        // 0 means: the whole queue, (min or) 1, the whole queue.
        io.iodepth_batch_submit = 0;
        io.iodepth_batch_complete_min = 1;
        io.iodepth_batch_complete_max = 0;
        io.iodepth_low = 0;
        assert_eq!(Batching::new(&io, 8, 8), batching(8, 8, 1, 1, 8));
        io.iodepth_batch_submit = 4;
        io.iodepth_batch_complete_min = 16;
        io.iodepth_batch_complete_max = 2;
        io.iodepth_low = 3;
        assert_eq!(Batching::new(&io, 8, 6), batching(6, 4, 8, 2, 3));
        io.iodepth_batch_complete_min = 0;
        io.iodepth_batch_complete_max = 0;
        assert_eq!(Batching::new(&io, 8, 8).complete_max, 1);
    }

    #[test]
    fn submits_in_batches_and_reaps_a_full_queue_down_to_iodepth_low() {
        let (mut q, calls) = queue(8, false, 8, batching(8, 4, 1, 8, 2));
        let mut o = Owner::default();
        issue_reads(&mut q, &mut o, 8);
        // Two batches of 4; the full queue was reaped to 2 or fewer.
        assert_eq!(calls.lock().unwrap().commits, vec![4, 4]);
        assert!(q.inflight() <= 2, "inflight {}", q.inflight());
        assert_eq!(o.stats.submit_calls, 2);
        q.drain(&mut o);
        assert_eq!(q.inflight(), 0);
        assert_eq!(o.accounted.len(), 8);
        assert_eq!(q.free.len(), 8);
        assert!(q.busy.iter().all(|b| !b));
    }

    #[test]
    fn reaps_take_at_most_iodepth_batch_complete_max() {
        let (mut q, calls) = queue(4, false, 4, batching(4, 1, 1, 2, 4));
        let mut o = Owner::default();
        issue_reads(&mut q, &mut o, 4);
        q.drain(&mut o);
        let reaps = &calls.lock().unwrap().reaps;
        assert!(!reaps.is_empty());
        assert!(
            reaps.iter().all(|&(min, max)| min <= max && max <= 2),
            "{reaps:?}"
        );
        assert_eq!(o.accounted.len(), 4);
    }

    #[test]
    fn a_busy_engine_gets_the_unit_back_after_a_reap() {
        let (mut q, _) = queue(2, false, 4, batching(4, 4, 1, 4, 4));
        let mut o = Owner::default();
        issue_reads(&mut q, &mut o, 2);
        assert_eq!(q.inflight(), 0, "two queued, not committed");
        let idx = q.take_unit(&mut o).unwrap();
        q.prep(idx, &read(0), &no_file(), 0);
        // No room: the two queued are committed, one reap collects them,
        // and the unit is free for the retry.
        assert_eq!(q.issue(idx, &mut o), Issued::Busy);
        assert_eq!(o.accounted.len(), 2);
        assert_eq!(q.free.len(), 4);
        assert_eq!(o.error, 0);
    }

    /// One draw per I/O: an I/O the engine was busy for keeps the
    /// priority drawn for it when offered again, so the I/Os get the
    /// priorities a chooser gives in order (fio's sequence).
    #[test]
    fn a_busy_engine_does_not_cost_a_priority_draw() {
        let spec = crate::job::test_spec(&[
            ("ioengine", "libaio"),
            ("rw", "read"),
            ("cmdprio_percentage", "50"),
        ]);
        let mut fresh = PrioChooser::new(&spec, 1, 0);
        let want: Vec<IoPrio> = (0..12).map(|_| fresh.choose(Op::Read, 512)).collect();
        assert!(want.iter().any(|p| p.per_io) && want.iter().any(|p| !p.per_io));
        let chooser = PrioChooser::new(&spec, 1, 0);
        let (mut q, calls) = queue_with(2, false, 4, batching(4, 4, 1, 4, 4), chooser);
        let mut o = Owner::default();
        for k in 0..12u64 {
            loop {
                let idx = q.take_unit(&mut o).expect("a free unit");
                q.prep(idx, &read(k * 512), &no_file(), 0);
                if q.issue(idx, &mut o) != Issued::Busy {
                    break;
                }
            }
            q.keep_depth(&mut o);
        }
        q.drain(&mut o);
        let c = calls.lock().unwrap();
        assert!(c.busy > 0, "the engine was never busy");
        assert_eq!(c.prios, want);
        // A restart draws the same numbers again.
        q.restart_prio();
        let again: Vec<IoPrio> = (0..12).map(|_| q.prio.choose(Op::Read, 512)).collect();
        assert_eq!(again, want);
    }

    #[test]
    fn a_refusal_with_nothing_in_flight_fails_the_job() {
        let (mut q, _) = queue(0, false, 2, batching(2, 2, 1, 2, 2));
        let mut o = Owner::default();
        let idx = q.take_unit(&mut o).unwrap();
        q.prep(idx, &read(0), &no_file(), 0);
        assert_eq!(q.issue(idx, &mut o), Issued::Refused);
        assert_eq!(o.error, libc::EIO);
        assert_eq!(q.free.len(), 2);
    }

    #[test]
    fn drain_after_an_error_still_collects_every_unit() {
        let (mut q, _) = queue(8, true, 8, batching(8, 8, 1, 1, 8));
        let mut o = Owner::default();
        issue_reads(&mut q, &mut o, 5);
        q.drain(&mut o);
        assert_eq!(o.error, libc::EIO);
        assert_eq!(q.inflight(), 0);
        assert_eq!(o.accounted.len(), 5);
        assert_eq!(q.free.len(), 8);
    }

    #[test]
    fn overlapping_io_waits_when_serialized() {
        let (mut q, _) = queue(4, false, 4, batching(4, 4, 1, 4, 4));
        q.serialize = true;
        let mut o = Owner::default();
        issue_reads(&mut q, &mut o, 2);
        let mut next = read(256);
        next.op = Op::Write;
        assert!(q.overlaps(&next));
        q.wait_for_overlaps(&next, &mut o);
        assert!(!q.overlaps(&next));
        assert_eq!(o.accounted.len(), 2);
    }

    /// A reap right after a commit that did not wait completes its I/O
    /// at the commit's reading (one clock read fewer); a reap that waited,
    /// or one after something else, reads the clock again.
    #[test]
    fn a_reap_right_after_a_commit_reuses_its_reading_unless_it_waited() {
        for waits in [false, true] {
            let (mut q, _) = queue(4, false, 2, batching(2, 1, 1, 1, 2));
            let mut o = Owner::default();
            set_waits(&mut q, waits);
            issue_reads(&mut q, &mut o, 2);
            // The second issue filled the queue: committed (one reading),
            // then the oldest I/O reaped.
            assert_eq!(o.accounted.len(), 1);
            let last = 1 - o.accounted[0].0;
            let committed = q.unit(last).issue_ns;
            if waits {
                assert!(o.times[0] > committed, "{:?} vs {committed}", o.times);
            } else {
                assert_eq!(o.times[0], committed);
            }
            // After the loop's top, the reading is stale: read again.
            q.forget_commit();
            let before = o.t;
            q.drain(&mut o);
            assert_eq!(o.accounted.len(), 2);
            assert!(o.times[1] > before, "{:?} vs {before}", o.times);
        }
    }

    fn set_waits(q: &mut IoQueue, waits: bool) {
        let (room, fail_reads, calls) = (4, false, Arc::new(Mutex::new(Calls::default())));
        q.engine = Box::new(Scripted {
            room,
            fail_reads,
            queued: Vec::new(),
            committed: 0,
            calls,
            waits,
        });
    }

    #[test]
    fn a_lower_depth_lowers_iodepth_low_too() {
        let (mut q, _) = queue(8, false, 8, batching(8, 8, 1, 8, 6));
        q.set_depth(4);
        assert_eq!((q.batch.depth, q.batch.low), (4, 4));
        q.set_depth(100);
        assert_eq!((q.batch.depth, q.batch.low), (8, 4));
        q.set_depth(0);
        assert_eq!(q.batch.depth, 1);
    }
}
