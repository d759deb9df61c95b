//! The start gate of a batch of clones (the clones a phase starts
//! together): every clone sets up, then waits here; when the last one has
//! arrived the gate takes one start time and opens for all at once. Each
//! clone measures from that shared instant, not from the moment it next
//! gets a CPU, so that with more clones than CPUs a group's runtime is the
//! wall-clock time in which its I/O was done.
//!
//! Opening is one atomic store and one futex broadcast: no lock is handed
//! from thread to thread, so releasing 256 clones on two CPUs costs no more
//! than waking them.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// See the module documentation.
#[derive(Debug)]
pub struct StartGate {
    /// Clones to wait for; `usize::MAX` until the runner knows.
    expected: AtomicUsize,
    arrived: AtomicUsize,
    /// Set by whoever opens the gate (only one does).
    opening: AtomicBool,
    /// The futex word: 0 closed, 1 open.
    open: AtomicU32,
    /// The start, in ns since `base` (valid once `open` is 1).
    start_ns: AtomicU64,
    base: Instant,
}

impl StartGate {
    /// A closed gate whose start times count from `base` (the run's clock
    /// zero, `RunShared::base`).
    pub fn new(base: Instant) -> Self {
        StartGate {
            expected: AtomicUsize::new(usize::MAX),
            arrived: AtomicUsize::new(0),
            opening: AtomicBool::new(false),
            open: AtomicU32::new(0),
            start_ns: AtomicU64::new(0),
            base,
        }
    }

    /// The runner has started `n` clones (a thread that failed to start
    /// is not waited for).
    pub fn expect(&self, n: usize) {
        self.expected.store(n, Ordering::SeqCst);
        if self.arrived.load(Ordering::SeqCst) >= n {
            self.release();
        }
    }

    /// How many clones have set up and wait (or waited) here.
    pub fn arrived(&self) -> usize {
        self.arrived.load(Ordering::SeqCst)
    }

    /// Waits until every expected clone has arrived; returns the shared
    /// start in ns since the run's clock zero.
    pub fn wait(&self) -> u64 {
        let n = self.arrived.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.expected.load(Ordering::SeqCst) {
            self.release();
        }
        while self.open.load(Ordering::Acquire) == 0 {
            crate::sys::wait_on(&self.open, 0);
        }
        self.start_ns.load(Ordering::Acquire)
    }

    fn release(&self) {
        if self.opening.swap(true, Ordering::SeqCst) {
            return;
        }
        let now = self.base.elapsed().as_nanos() as u64;
        self.start_ns.store(now, Ordering::Release);
        self.open.store(1, Ordering::Release);
        crate::sys::wake_all(&self.open);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waits_for_everyone_expected_and_gives_all_one_start() {
        let g = Arc::new(StartGate::new(Instant::now()));
        let done = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let (g, done) = (g.clone(), done.clone());
                std::thread::spawn(move || {
                    let start = g.wait();
                    done.fetch_add(1, Ordering::SeqCst);
                    start
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            done.load(Ordering::SeqCst),
            0,
            "started before the count was known"
        );
        g.expect(3);
        let starts: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(done.load(Ordering::SeqCst), 3);
        assert!(
            starts[0] >= 50_000_000,
            "start taken before the gate opened"
        );
        assert!(starts.iter().all(|s| *s == starts[0]), "{starts:?}");
    }

    #[test]
    fn opens_when_the_count_is_known_after_everyone_arrived() {
        let g = Arc::new(StartGate::new(Instant::now()));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || g.wait())
            })
            .collect();
        while g.arrived.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        g.expect(2);
        for h in hs {
            h.join().unwrap();
        }
        // Nobody is left to wait for: the gate is open.
        assert_eq!(g.open.load(Ordering::SeqCst), 1);
    }
}
