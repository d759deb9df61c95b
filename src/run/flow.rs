//! Flow control between jobs (`flow`, `flow_id`, `flow_sleep`): the jobs
//! of one flow group issue I/O in proportion to their weights. Each
//! member counts the I/Os it issued; a member whose count is ahead of its
//! share of the group's total (by more than a little slack) waits until
//! the others catch up. A member leaves the group when its I/O ends, so
//! the others are not held back by a job that is done.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// I/Os a member may run ahead of its share before it waits.
const SLACK: u64 = 8;

#[derive(Default)]
pub struct FlowGroup {
    /// Sum of the members' weights.
    weights: AtomicU64,
    /// I/Os issued by the current members.
    total: AtomicU64,
}

/// The run's flow groups by `flow_id`.
#[derive(Default)]
pub struct Flows(Mutex<HashMap<u32, Arc<FlowGroup>>>);

impl Flows {
    /// Joins group `id` with `weight`.
    pub fn join(&self, id: u32, weight: u64) -> FlowMember {
        let group = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id)
            .or_default()
            .clone();
        group.weights.fetch_add(weight, Ordering::Relaxed);
        FlowMember {
            group,
            weight,
            ios: 0,
        }
    }
}

/// One job's place in its flow group; leaves the group when dropped.
pub struct FlowMember {
    group: Arc<FlowGroup>,
    weight: u64,
    ios: u64,
}

impl FlowMember {
    /// Whether this member is ahead of its share and must wait.
    #[inline]
    pub fn ahead(&self) -> bool {
        let w = self.group.weights.load(Ordering::Relaxed) as u128;
        let t = self.group.total.load(Ordering::Relaxed) as u128;
        self.ios as u128 * w > self.weight as u128 * t + SLACK as u128 * w
    }

    /// Counts one issued I/O.
    #[inline]
    pub fn issued(&mut self) {
        self.ios += 1;
        self.group.total.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        self.group.weights.fetch_sub(self.weight, Ordering::Relaxed);
        self.group.total.fetch_sub(self.ios, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Members issuing whenever they are not ahead end up in proportion
    /// to their weights; a member that leaves stops holding others back.
    #[test]
    fn members_share_by_weight() {
        let flows = Flows::default();
        let mut m: Vec<FlowMember> = [3, 1, 2].iter().map(|w| flows.join(0, *w)).collect();
        for _ in 0..6000 {
            for x in m.iter_mut() {
                if !x.ahead() {
                    x.issued();
                }
            }
        }
        // The heaviest member issues one I/O a round at most, so the
        // others wait for it, each at most SLACK ahead of its share.
        let ios: Vec<u64> = m.iter().map(|x| x.ios).collect();
        let total: u64 = ios.iter().sum();
        for (i, w) in [3, 1, 2].into_iter().enumerate() {
            let share = total * w / 6;
            assert!(
                ios[i] <= share + SLACK + 1 && ios[i] + 3 * SLACK >= share,
                "{ios:?}"
            );
        }
        // Another group is independent.
        let other = flows.join(1, 1);
        assert!(!other.ahead());
        // When the fast members leave, the slow one is never ahead.
        let slow = m.remove(1);
        drop(m);
        assert!(!slow.ahead());
    }
}
