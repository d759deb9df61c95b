//! When the next I/O may go: its rate slot (`rate`, `rate_iops`), its
//! time in a replayed trace (`read_iolog`), the job's share of its flow
//! group (`flow`), pauses (`thinktime`), and the minimum rate it must
//! keep (`rate_min`, `rate_iops_min`, checked as I/Os complete). The
//! policies are `workload::pacing`'s; this part waits for them, reaping
//! completions while it waits.

use super::account::ddir_of;
use super::queue::IoQueue;
use super::Worker;
use crate::job::JobSpec;
use crate::run::flow::FlowMember;
use crate::workload::pacing::{MinRate, Pacer, Thinker};
use crate::workload::NextIo;

/// See the module docs.
pub(super) struct Pacing {
    pub pacer: Pacer,
    /// Some direction is rate limited.
    paced: bool,
    pub thinker: Thinker,
    /// Inside a pause (completions reaped then do not start another).
    pub thinking: bool,
    pub min_rate: Option<MinRate>,
    /// This job's place in its flow group (`flow`).
    pub flow: Option<FlowMember>,
}

impl Pacing {
    pub fn new(spec: &JobSpec, seed: u64, flow: Option<FlowMember>) -> Pacing {
        Pacing {
            pacer: Pacer::new(spec, seed),
            paced: spec
                .time
                .rate
                .iter()
                .chain(&spec.time.rate_iops)
                .any(|r| *r > 0),
            thinker: Thinker::new(spec),
            thinking: false,
            min_rate: MinRate::new(spec),
            flow,
        }
    }

    /// Whether the job ever waits between I/Os by its own choice (rate,
    /// pauses, flow group).
    pub fn waits(&self) -> bool {
        self.paced || self.thinker.total_ns > 0 || self.thinker.spin_ns > 0 || self.flow.is_some()
    }

    /// The job begins at `begin`.
    pub fn start(&mut self, begin: u64) {
        self.pacer.start(begin);
        self.thinker.start(begin);
        if let Some(m) = &mut self.min_rate {
            m.start(begin);
        }
    }

    /// The directions whose rate allows an I/O at `now` (all when none
    /// is limited).
    #[inline]
    pub fn ready_mask(&self, now: u64) -> Option<u8> {
        self.paced.then(|| self.pacer.ready_mask(now))
    }
}

impl Worker<'_> {
    /// Waits until `next` may go: a data I/O waits for its rate slot or
    /// trace time (reaping meanwhile) and its flow group, then, with
    /// `serialize_overlap`, for the I/O it overlaps; a sync waits for the
    /// I/O before it. A `retried` I/O was paced already. False when the
    /// job must stop instead.
    #[inline]
    pub(super) fn pace_io(
        &mut self,
        q: &mut IoQueue,
        next: &NextIo,
        now: u64,
        retried: bool,
    ) -> bool {
        let Some(d) = ddir_of(next.op) else {
            // Syncs wait for the I/O before them.
            q.drain(self);
            return true;
        };
        let mut at = 0;
        if !retried && self.pace.pacer.active(d) {
            at = self.pace.pacer.schedule(d, next.len, now);
        }
        if !retried {
            if let Some(due) = self.workload.replay_due_ns(now) {
                at = at.max(due);
            }
        }
        if at > now {
            q.commit(self);
            while q.inflight() > 0 && self.clock.now() < at {
                q.reap(1, self);
            }
            if !self.wait_until(at.min(self.phase.end_ns())) {
                return false;
            }
        }
        if !retried
            && self.pace.flow.as_ref().is_some_and(FlowMember::ahead)
            && !self.hold_for_flow(q)
        {
            return false;
        }
        q.wait_for_overlaps(next, self);
        true
    }

    /// Waits while this job is ahead of its share in its flow group,
    /// pausing `flow_sleep` (or yielding) between checks; false when the
    /// job must stop instead.
    #[cold]
    fn hold_for_flow(&mut self, q: &mut IoQueue) -> bool {
        q.commit(self);
        let pause = self.job.spec.ctl.flow_sleep_us;
        while self.pace.flow.as_ref().is_some_and(FlowMember::ahead) {
            let now = self.clock.now();
            if self.stopping(now) {
                return false;
            }
            q.reap(0, self);
            if pause > 0 {
                std::thread::sleep(std::time::Duration::from_micros(pause));
            } else {
                std::thread::yield_now();
            }
        }
        true
    }

    /// Pauses for `thinktime` (after letting in-flight I/O complete).
    pub(super) fn think(&mut self, q: &mut IoQueue) {
        let (total, spin) = (self.pace.thinker.total_ns, self.pace.thinker.spin_ns);
        self.pace.thinking = true;
        q.drain(self);
        self.pace.thinking = false;
        let now = self.clock.now();
        if spin > 0 {
            self.clock.spin_until(now + spin);
        }
        // Like fio, a pause is not cut short by the end of the runtime.
        self.clock.sleep_until(now + total);
        if self.job.spec.time.rate_ignore_thinktime {
            self.pace.pacer.shift(total);
        }
        let t = self.clock.now();
        self.pace.thinker.paused(t);
        self.stamp = None;
        q.forget_commit();
    }
}
