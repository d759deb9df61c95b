//! What a running worker shares with the run's monitor (the main thread):
//! a stop request (steady state reached), and status snapshots for
//! `--status-interval`.
//!
//! Snapshots follow a request/serve protocol that keeps the worker's hot
//! path lock-free: the monitor bumps `want`; the worker notices it at its
//! next completion, copies its statistics into a buffer it allocated at
//! setup (a mutex held for that copy only), and stores the served number.
//! The monitor then reads the copy.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use super::{JobStats, ThreadUsage};

/// With the fake clock, wall-clock figures (dates, Unix time stamps) use
/// this instant so reports are the same on every run.
pub const FAKE_UNIX_S: u64 = 1_700_000_000;

/// Per-job link between a worker and the monitor.
#[derive(Debug, Default)]
pub struct JobLink {
    /// The monitor asks the job to end now (steady state attained).
    pub stop: AtomicBool,
    /// The job's 1-based number in the run (log file names).
    pub number: AtomicU32,
    /// Whether status snapshots will be requested (set before start).
    pub snapshots: AtomicBool,
    /// Snapshot requests made and served.
    pub want: AtomicU64,
    pub served: AtomicU64,
    /// The latest snapshot (allocated by the worker at setup).
    pub snapshot: Mutex<Option<JobStats>>,
}

impl JobLink {
    /// Asks for a new snapshot; returns the request number.
    pub fn request(&self) -> u64 {
        self.want.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Whether the snapshot for request `n` (or a later one) is ready.
    pub fn served(&self, n: u64) -> bool {
        self.served.load(Ordering::Acquire) >= n
    }

    /// A copy of the latest snapshot.
    pub fn take_snapshot(&self) -> Option<JobStats> {
        self.snapshot.lock().ok().and_then(|g| g.clone())
    }

    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

thread_local! {
    // Already const: clippy 1.96 says otherwise for Windows targets.
    #[allow(clippy::missing_const_for_thread_local)]
    static TIMED: Cell<bool> = const { Cell::new(false) };
}

/// How many timed phases have started in this process.
pub static TIMED_PHASES: AtomicU64 = AtomicU64::new(0);

/// Marks the calling worker thread as inside (or outside) its timed phase:
/// from the start of I/O to the end of the last completion. Tests use this
/// to check that the hot path never allocates (a counting allocator asks
/// `in_timed_phase`). Costs one thread-local store.
pub fn set_timed_phase(on: bool) {
    if on {
        TIMED_PHASES.fetch_add(1, Ordering::Relaxed);
    }
    TIMED.with(|t| t.set(on));
}

/// Whether the calling thread is inside a worker's timed phase. Safe to
/// call from a global allocator (no allocation, no destructor).
pub fn in_timed_phase() -> bool {
    TIMED.try_with(|t| t.get()).unwrap_or(false)
}

/// Clock readings (ns, worker clock) that bound a job's figures.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    /// When the job started (before ramp).
    pub started: u64,
    /// When measuring started (end of ramp).
    pub measured_from: u64,
    /// Now, or when the job's I/O ended.
    pub until: u64,
}

/// Fills in the time and CPU figures of `stats` for `span`: the job's
/// runtime (ms, rounded down), each active direction's runtime (µs rounded
/// up to ms, at least 1), the elapsed time and CPU usage.
pub fn finalize(stats: &mut JobStats, span: Span, usage: ThreadUsage) {
    let measured = span.until.saturating_sub(span.measured_from);
    let runtime_ms = measured / 1_000_000;
    let dir_ms = (measured / 1000).div_ceil(1000).max(1);
    for d in stats.dir.iter_mut() {
        d.runtime_ms = if d.ios > 0 { dir_ms } else { 0 };
    }
    stats.runtime_ms = runtime_ms;
    stats.elapsed_ms = span.until.saturating_sub(span.started) / 1_000_000;
    stats.usr_us = usage.usr_us;
    stats.sys_us = usage.sys_us;
    stats.ctx = usage.ctx;
    stats.majf = usage.majf;
    stats.minf = usage.minf;
}

/// A job that read back what it wrote after its write phase: the reads'
/// runtime is that read-back (plus the main phase when it read too), the
/// writes' runtime the main phase alone; `measured_ns` covers both.
pub fn split_read_back(
    stats: &mut JobStats,
    measured_ns: u64,
    read_back_ns: u64,
    main_reads: bool,
) {
    let ms = |ns: u64| (ns / 1000).div_ceil(1000).max(1);
    let main = measured_ns.saturating_sub(read_back_ns);
    let read = if main_reads {
        measured_ns
    } else {
        read_back_ns
    };
    if stats.dir[0].ios > 0 {
        stats.dir[0].runtime_ms = ms(read);
    }
    if stats.dir[1].ios > 0 {
        stats.dir[1].runtime_ms = ms(main);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_round_like_fio() {
        let mut s = JobStats::default();
        s.dir[0].ios = 5;
        finalize(
            &mut s,
            Span {
                started: 0,
                measured_from: 1_000_000,
                until: 2_001_000_000 + 300_000,
            },
            ThreadUsage::default(),
        );
        // 2000.3 ms measured: job runtime 2000, read runtime 2001.
        assert_eq!(s.runtime_ms, 2000);
        assert_eq!(s.dir[0].runtime_ms, 2001);
        assert_eq!(s.dir[1].runtime_ms, 0);
        assert_eq!(s.elapsed_ms, 2001);
    }

    #[test]
    fn snapshot_protocol() {
        let l = JobLink::default();
        let n = l.request();
        assert!(!l.served(n));
        *l.snapshot.lock().unwrap() = Some(JobStats::default());
        l.served.store(n, Ordering::Release);
        assert!(l.served(n));
        assert!(l.take_snapshot().is_some());
    }
}
