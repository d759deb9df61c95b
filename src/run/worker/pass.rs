//! One pass of the data I/O loop: until the workload has nothing more
//! (or the job must stop), take its next I/O, pace it, fill its buffer,
//! issue it through the queue and keep the queue at its depth. This is
//! the hot path: no allocation, lock or system call but the I/O and the
//! clock read.

use super::account::ddir_of;
use super::queue::{IoQueue, Issued};
use super::{PassEnd, Worker};
use crate::engine::Op;
use crate::job::spec::ThinkBlocksType;
use crate::workload::{Exhausted, NextIo};

impl Worker<'_> {
    /// Issues I/O until the pass is done or the job must stop.
    pub(super) fn run_pass(&mut self, q: &mut IoQueue) -> PassEnd {
        if self.plain {
            return self.run_plain_pass(q);
        }
        self.stamp = None;
        loop {
            q.forget_commit();
            // The last completion's time when it is as good as a reading
            // now (see `Worker::stamp`).
            let now = match self.stamp.take() {
                Some(t) => t,
                None => self.clock.now(),
            };
            if self.stopping(now) {
                return PassEnd::Stopped;
            }
            if self.phase.ramp_over(now) {
                self.end_ramp(now, q);
            }
            if self.retry.is_none() && self.backlog_due() {
                self.run_backlog(q);
                continue;
            }
            let retried = self.retry.is_some();
            let Some(next) = self.next_io(q, now) else {
                q.drain(self);
                if let Some((errno, msg)) = self.workload.take_failure() {
                    self.err.fail(errno, msg);
                    return PassEnd::Stopped;
                }
                return PassEnd::Done;
            };
            if self.workload.zbd_pending() && !self.zone_resets(q) {
                return PassEnd::Stopped;
            }
            if !self.workload.file_events().is_empty() {
                self.file_events(q);
                if self.err.failed() {
                    return PassEnd::Stopped;
                }
            }
            if !self.pace_io(q, &next, now, retried) {
                return PassEnd::Stopped;
            }
            let Some(idx) = q.take_unit(self) else {
                return PassEnd::Stopped;
            };
            let now = self.clock.now();
            q.prep(idx, &next, &self.files.list[next.file as usize], now);
            self.before_queue(q, idx, &next, now, retried);
            if let (Some(f), false, Some(_)) = (self.pace.flow.as_mut(), retried, ddir_of(next.op))
            {
                f.issued();
            }
            let issued =
                if next.op == Op::Trim && self.workload.zbd_trim_is_reset(next.file, next.offset) {
                    // zonemode=zbd: the trim was a zone reset, done above
                    q.complete_now(idx, self)
                } else {
                    q.issue(idx, self)
                };
            match issued {
                Issued::Completed(done) => {
                    if self.pace.thinker.due(ThinkBlocksType::Complete, 1, done) {
                        self.think(q);
                    }
                }
                Issued::Queued => {}
                Issued::Busy => {
                    // Issue the same I/O again once something completed.
                    self.retry = Some(next);
                    continue;
                }
                Issued::Refused => return PassEnd::Stopped,
            }
            if self.pace.thinker.due(ThinkBlocksType::Issue, 1, now) {
                self.think(q);
            }
            q.keep_depth(self);
        }
    }

    /// `run_pass` for a plain job (`Worker::plain`): the same I/O in the
    /// same order, without the checks whose answer its options fix at
    /// set-up (verify backlog, rate and replay times, flow group, zones,
    /// pauses, overlaps, the trace record).
    fn run_plain_pass(&mut self, q: &mut IoQueue) -> PassEnd {
        self.stamp = None;
        loop {
            q.forget_commit();
            let now = match self.stamp.take() {
                Some(t) => t,
                None => self.clock.now(),
            };
            if self.stopping(now) {
                return PassEnd::Stopped;
            }
            if self.phase.ramp_over(now) {
                self.end_ramp(now, q);
            }
            let retried = self.retry.is_some();
            let next = match self.retry.take() {
                Some(n) => n,
                None => match self.workload.next_io() {
                    Ok(n) => n,
                    Err(_) => {
                        q.drain(self);
                        if let Some((errno, msg)) = self.workload.take_failure() {
                            self.err.fail(errno, msg);
                            return PassEnd::Stopped;
                        }
                        return PassEnd::Done;
                    }
                },
            };
            if !self.workload.file_events().is_empty() {
                self.file_events(q);
                if self.err.failed() {
                    return PassEnd::Stopped;
                }
            }
            if ddir_of(next.op).is_none() {
                // Syncs wait for the I/O before them.
                q.drain(self);
            } else {
                q.wait_for_overlaps(&next, self);
            }
            let Some(idx) = q.take_unit(self) else {
                return PassEnd::Stopped;
            };
            let now = self.clock.now();
            q.prep(idx, &next, &self.files.list[next.file as usize], now);
            if next.op == Op::Write && self.filler.per_write() {
                let buf = q.unit_mut(idx).data();
                if retried {
                    self.filler.fill_write_again(buf, next.offset);
                } else {
                    self.filler.fill_write(buf, next.offset);
                }
            }
            match q.issue(idx, self) {
                Issued::Completed(_) | Issued::Queued => {}
                Issued::Busy => {
                    self.retry = Some(next);
                    continue;
                }
                Issued::Refused => return PassEnd::Stopped,
            }
            q.keep_depth(self);
        }
    }

    /// The I/O the engine was busy for, or the workload's next; `None`
    /// when the pass is done.
    #[inline]
    fn next_io(&mut self, q: &mut IoQueue, now: u64) -> Option<NextIo> {
        if let Some(mask) = self.pace.ready_mask(now) {
            self.workload.set_ready(mask);
        }
        if let Some(n) = self.retry.take() {
            return Some(n);
        }
        loop {
            match self.workload.next_io() {
                Ok(n) => return Some(n),
                Err(Exhausted::ZoneWait) if self.zone_wait(q) => {}
                Err(_) => return None,
            }
        }
    }

    /// `zonemode=zbd`: the next write needs a zone another job is
    /// writing (or an open zone while all are being filled): completes
    /// this job's I/O, so that it holds no zone, then waits a little for
    /// the others'. False when the job must stop instead.
    #[cold]
    fn zone_wait(&mut self, q: &mut IoQueue) -> bool {
        q.drain(self);
        self.stamp = None;
        let now = self.clock.now();
        if self.err.failed() || self.stopping(now) {
            return false;
        }
        self.workload.zbd_wait();
        true
    }

    /// `zonemode=zbd`: the zone resets the workload asked for, once the
    /// I/O in flight is done (as fio waits for it); counted as the job's
    /// `zone_resets`. False when a reset failed (the job fails).
    #[cold]
    fn zone_resets(&mut self, q: &mut IoQueue) -> bool {
        q.drain(self);
        let (job, files) = (self.job, &self.files.list);
        let mut failed: Option<(i32, String)> = None;
        let n = self.workload.take_zone_resets(&mut |fi, start, len| {
            let fd = files[fi as usize].fd;
            if let Err(e) = crate::run::zoned::reset(job, fi as usize, fd, start, len) {
                failed.get_or_insert((
                    e.raw_os_error().unwrap_or(libc::EIO),
                    format!(
                        "resetting the zone at {start} of '{}' failed: {e}",
                        job.files[fi as usize].path.display()
                    ),
                ));
            }
        });
        if self.phase.measuring {
            self.stats.zone_resets += n;
        }
        match failed {
            Some((errno, msg)) => {
                self.err.fail(errno, msg);
                false
            }
            None => true,
        }
    }

    /// Write contents and the trace record of an I/O about to be queued;
    /// a retry (after `Busy`) refills the same contents, records nothing.
    #[inline]
    fn before_queue(&mut self, q: &mut IoQueue, idx: u32, next: &NextIo, now: u64, retry: bool) {
        let u = q.unit_mut(idx);
        let stamped = match self.vfy.as_deref_mut() {
            Some(vs) => vs.before_queue(u, next, now, retry, &mut self.clock),
            None => false,
        };
        if next.op == Op::Write && !stamped && self.filler.per_write() {
            let buf = u.data();
            if retry {
                self.filler.fill_write_again(buf, next.offset);
            } else {
                self.filler.fill_write(buf, next.offset);
            }
        }
        if let Some(log) = self.iolog.as_mut().filter(|_| !retry) {
            log.io(next.op, next.file, next.offset, next.len, now);
        }
    }
}
