//! What a completion does: the worker's side of the queue's
//! [`Completions`] contract. A finished I/O goes into the job's
//! statistics and the recorder (histograms, logs, latency target), its
//! bytes into the progress counters and the minimum-rate check, a
//! verified one into verification; a failed one into the error state.
//! What the recorder asks for (a new depth, a stop, a failure) is applied
//! after the completion.
//!
//! Per I/O: no allocation, lock or system call (errors are cold).

use std::sync::atomic::Ordering;

use super::errors::errno_name;
use super::queue::{Completions, IoQueue};
use super::short::{self, Short};
use super::Worker;
use crate::engine::{IoUnit, Op};
use crate::job::spec::ThinkBlocksType;
use crate::stats::recorder::Action;
use crate::stats::JobStats;

/// Bytes and I/Os done since the start (ramp included), per direction:
/// what `rate_min`/`rate_iops_min` and the verify rounds look at.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Done {
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
}

/// The direction index of a data operation (`None` for syncs).
#[inline]
pub(super) fn ddir_of(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        Op::Trim => Some(2),
        _ => None,
    }
}

impl Completions for Worker<'_> {
    #[inline]
    fn now(&mut self) -> u64 {
        self.clock.now()
    }

    #[inline]
    fn tally(&mut self) -> Option<&mut JobStats> {
        self.phase.measuring.then_some(&mut self.stats)
    }

    #[inline]
    fn failed(&self) -> bool {
        self.err.failed()
    }

    fn fail(&mut self, errno: i32, msg: String) {
        self.err.fail(errno, msg);
    }

    #[inline(always)]
    fn settle(&mut self, q: &mut IoQueue, idx: u32, result: i64) -> Option<i64> {
        let u = q.unit(idx);
        // The usual case: the whole transfer, in one piece.
        if result as u64 == u.len() && u.moved() == 0 {
            return Some(result);
        }
        self.settle_rest(q, idx, result)
    }

    #[inline]
    fn account(&mut self, q: &mut IoQueue, idx: u32, result: i64, now: u64, queued: bool) {
        let u = q.unit(idx);
        if u.op == Op::Write {
            // zonemode=zbd: the zone is free for other jobs
            self.workload
                .zbd_completed(u.file, u.offset, u.len(), result >= 0);
        }
        if result < 0 {
            let detail = q.engine().error_detail(idx);
            self.io_failed(q.unit(idx), (-result) as i32, detail);
            return;
        }
        let u = q.unit(idx);
        let Some(di) = ddir_of(u.op) else {
            let lat = now.saturating_sub(u.start_ns);
            self.account_sync(u.op, lat, now);
            return;
        };
        if u.op == Op::Write && self.sync_cover == 0 {
            self.sync_cover = u.start_ns.max(1);
        }
        let bytes = result as u64;
        let (len, offset, start_ns, issue_ns, prio) =
            (u.len(), u.offset, u.start_ns, u.issue_ns, u.prio);
        self.count_done(di, bytes);
        self.verify_completed(q, idx, bytes);
        if !self.phase.measuring {
            return;
        }
        // stats hook: histograms, logs, max_latency, latency_target.
        let a = self.rec.io(
            &mut self.stats,
            now,
            di,
            bytes,
            len,
            offset,
            start_ns,
            issue_ns,
            queued,
            prio,
        );
        if a != Action::Continue {
            self.pending = a;
        }
    }

    #[inline]
    fn after_inline(&mut self, q: &mut IoQueue, now: u64) {
        self.after_completion(q, now);
    }

    #[inline(always)]
    fn after_reap(&mut self, q: &mut IoQueue, n: u32, now: u64) {
        self.after_completion(q, now);
        if !self.pace.thinking
            && self
                .pace
                .thinker
                .due(ThinkBlocksType::Complete, n as u64, now)
        {
            self.think(q);
        }
    }
}

impl Worker<'_> {
    /// Adds a finished transfer to the totals and the progress counters.
    #[inline]
    pub(super) fn count_done(&mut self, di: usize, bytes: u64) {
        self.done.bytes[di] += bytes;
        self.done.ios[di] += 1;
        // This worker is the counters' only writer: a plain load and
        // store (no lock-prefixed read-modify-write per I/O); readers
        // see each value whole, at most one I/O behind.
        let p = self.progress;
        let (b, n) = (&p.bytes[di], &p.ios[di]);
        b.store(b.load(Ordering::Relaxed) + bytes, Ordering::Relaxed);
        n.store(n.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// A sync finished: fsync counts as a sync I/O, the others are
    /// timed; a sync after writes also times write-plus-sync.
    fn account_sync(&mut self, op: Op, lat: u64, now: u64) {
        let covered = std::mem::take(&mut self.sync_cover);
        if !self.phase.measuring {
            return;
        }
        if op == Op::Fsync {
            self.rec.sync_io(&mut self.stats, lat);
        } else {
            self.stats.sync_lat.record(lat);
        }
        if covered != 0 && op != Op::SyncFileRange {
            self.stats
                .write_sync_lat
                .record(now.saturating_sub(covered));
        }
    }

    /// An I/O failed with `errno`. It still counts as issued (no bytes),
    /// as in fio; the error state says what else it does.
    #[cold]
    fn io_failed(&mut self, u: &IoUnit, errno: i32, detail: Option<String>) {
        if let Some(di) = ddir_of(u.op) {
            if self.phase.measuring {
                self.stats.dir[di].ios += 1;
            }
        }
        if let Some(fate) = self.err.io_failed(u.op, errno) {
            let mut msg = self.io_error_msg(u, errno);
            if let Some(d) = detail {
                msg.push_str(&format!(" ({d})"));
            }
            self.err.on_error(fate, errno, msg, &mut self.stats);
        }
    }

    fn io_error_msg(&mut self, u: &IoUnit, errno: i32) -> String {
        let eof = self.err.take_eof();
        let resid = if eof > 0 && errno == libc::EIO {
            format!(" (0 of {eof} bytes moved: nothing more there, the file is shorter than the job expects)")
        } else {
            String::new()
        };
        let why = match errno {
            libc::EPERM if u.prio.per_io => crate::job::ioprio::eperm_reason(u.prio.value),
            _ => "",
        };
        format!(
            "{} error on '{}' at offset {}{resid}: {}{why}",
            match u.op {
                Op::Read => "read",
                Op::Write => "write",
                Op::Trim => "trim",
                _ => "sync",
            },
            self.job.files[u.file as usize].path.display(),
            u.offset,
            errno_name(errno)
        )
    }

    /// stats hook: applies what the recorder asked for after completions
    /// (depth change, stop, failure) and runs its periodic work; checks
    /// the minimum rate. In line, the test that nothing of that is due
    /// (most completions); the work itself is one call away.
    #[inline(always)]
    pub(super) fn after_completion(&mut self, q: &mut IoQueue, now: u64) {
        if self.stamps {
            self.stamp = Some(now);
        }
        let quiet = self.pace.min_rate.is_none()
            && (!self.phase.measuring
                || (self.pending == Action::Continue && !self.rec.due(now, &self.progress.link)));
        if !quiet {
            self.after_completion_rest(q, now);
        }
    }

    /// [`Worker::after_completion`] when something may be due.
    #[inline(never)]
    fn after_completion_rest(&mut self, q: &mut IoQueue, now: u64) {
        if let Some(m) = &mut self.pace.min_rate {
            if m.due(now) {
                if let Err(msg) = m.check(now, self.done.bytes, self.done.ios) {
                    self.err.fail(libc::EIO, msg.to_string());
                }
            }
        }
        if !self.phase.measuring {
            return;
        }
        if self.rec.due(now, &self.progress.link) {
            let a = self.rec.tick(&mut self.stats, now, &self.progress.link);
            if a != Action::Continue {
                self.pending = a;
            }
        }
        if self.pending != Action::Continue {
            let a = std::mem::replace(&mut self.pending, Action::Continue);
            self.apply_action(q, a);
        }
    }

    fn apply_action(&mut self, q: &mut IoQueue, a: Action) {
        match a {
            Action::Continue => {}
            Action::Depth {
                depth,
                quiesce,
                reset,
            } => {
                if reset {
                    q.restart_side();
                }
                if quiesce {
                    q.drain(self);
                }
                q.set_depth(depth);
            }
            Action::Stop => self.phase.stop(),
            Action::Fail(errno, _) => {
                let msg = self.rec.fail_message();
                self.err.fail(errno, msg);
            }
        }
    }
}

impl Worker<'_> {
    /// [`Completions::settle`] for a completion that is short, failed, a
    /// sync, or the rest of a short one.
    #[inline(never)]
    fn settle_rest(&mut self, q: &mut IoQueue, idx: u32, result: i64) -> Option<i64> {
        let u = q.unit(idx);
        if !short::is_short(u.op, u.len(), result) || q.engine().caps().payload_results {
            return Some(self.reassemble(q, idx, result));
        }
        match self.short_transfer(q, idx, result) {
            Short::Account(r) => Some(r),
            Short::Requeued => None,
        }
    }
}
