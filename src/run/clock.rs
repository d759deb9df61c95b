//! The worker's clock: monotonic nanoseconds since the run started, or a
//! fake clock that advances a fixed step per reading so reports can be
//! snapshot-tested deterministically.
//!
//! The real clock reads the CPU's time-stamp counter when the kernel itself
//! trusts it (clocksource "tsc", invariant TSC), converted to nanoseconds
//! with a factor calibrated once against CLOCK_MONOTONIC; otherwise it
//! calls clock_gettime(CLOCK_MONOTONIC) through the vDSO. Either way a
//! reading costs no system call; the counter read is several times cheaper,
//! which matters when every I/O is timed two or three times.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Which hardware or kernel source the real clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The CPU time-stamp counter, calibrated.
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC).
    Monotonic,
}

#[derive(Clone, Copy, Debug)]
pub struct TscCal {
    tsc0: u64,
    mono0: u64,
    /// Nanoseconds per tick, as a 32.32 fixed-point number.
    mult: u64,
}

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> u64 {
    0
}

/// Whether the kernel uses the TSC and the CPU says it is invariant.
fn tsc_trusted() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    if std::env::var_os("IOMARK_CLOCK").is_some_and(|v| v == "clock_gettime") {
        return false;
    }
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if cs.trim() != "tsc" {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    flags.split_whitespace().any(|f| f == "constant_tsc")
        && flags.split_whitespace().any(|f| f == "nonstop_tsc")
}

/// Calibrates the counter against CLOCK_MONOTONIC over ~20 ms.
fn calibrate() -> Option<TscCal> {
    if !tsc_trusted() {
        return None;
    }
    let (m0, t0) = (mono_ns(), rdtsc());
    let mut m1 = m0;
    let mut t1 = t0;
    while m1 < m0 + 20_000_000 {
        std::thread::sleep(Duration::from_millis(2));
        m1 = mono_ns();
        t1 = rdtsc();
    }
    let ticks = t1.checked_sub(t0).filter(|t| *t > 0)?;
    let mult = (((m1 - m0) as u128) << 32) / ticks as u128;
    Some(TscCal {
        tsc0: t1,
        mono0: m1,
        mult: u64::try_from(mult).ok()?,
    })
}

fn calibration() -> Option<TscCal> {
    static CAL: OnceLock<Option<TscCal>> = OnceLock::new();
    *CAL.get_or_init(calibrate)
}

/// The source the real clock uses on this machine.
pub fn source() -> Source {
    if calibration().is_some() {
        Source::Tsc
    } else {
        Source::Monotonic
    }
}

/// Current time in ns on the CLOCK_MONOTONIC scale, from `cal` when given.
#[inline]
fn now_ns(cal: Option<&TscCal>) -> u64 {
    match cal {
        Some(c) => {
            let d = rdtsc().wrapping_sub(c.tsc0) as i64;
            if d <= 0 {
                c.mono0
                    .saturating_sub((((-d) as u128 * c.mult as u128) >> 32) as u64)
            } else {
                c.mono0 + ((d as u128 * c.mult as u128) >> 32) as u64
            }
        }
        None => mono_ns(),
    }
}

#[derive(Clone, Debug)]
pub enum Clock {
    Real { cal: Option<TscCal>, base_ns: u64 },
    Fake { now: u64, step: u64 },
}

impl Clock {
    /// A real clock whose zero is the instant `base`.
    pub fn real(base: Instant) -> Self {
        let cal = calibration();
        let base_ns = now_ns(cal.as_ref()).saturating_sub(base.elapsed().as_nanos() as u64);
        Clock::Real { cal, base_ns }
    }

    pub fn fake(step_ns: u64) -> Self {
        Clock::Fake {
            now: 0,
            step: step_ns,
        }
    }

    pub fn is_fake(&self) -> bool {
        matches!(self, Clock::Fake { .. })
    }

    #[inline]
    pub fn now(&mut self) -> u64 {
        match self {
            Clock::Real { cal, base_ns } => now_ns(cal.as_ref()).saturating_sub(*base_ns),
            Clock::Fake { now, step } => {
                *now += *step;
                *now
            }
        }
    }

    /// Waits until `t` (ns): sleeps, then spins for the last stretch.
    pub fn sleep_until(&mut self, t: u64) {
        if let Clock::Fake { now, .. } = self {
            *now = (*now).max(t);
            return;
        }
        loop {
            let now = self.now();
            if now >= t {
                break;
            }
            let left = t - now;
            if left > 100_000 {
                std::thread::sleep(Duration::from_nanos(left - 50_000));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Busy-waits until `t` (thinktime_spin).
    pub fn spin_until(&mut self, t: u64) {
        if let Clock::Fake { now, .. } = self {
            *now = (*now).max(t);
            return;
        }
        while self.now() < t {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_clock_tracks_monotonic_time() {
        let base = Instant::now();
        let mut c = Clock::real(base);
        let a = c.now();
        std::thread::sleep(Duration::from_millis(30));
        let b = c.now();
        let wall = base.elapsed().as_nanos() as u64;
        assert!(b > a);
        assert!(b - a >= 29_000_000, "slept 30 ms, clock moved {} ns", b - a);
        // Readings agree with Instant within a millisecond.
        assert!(b.abs_diff(wall) < 1_000_000, "clock {b} vs instant {wall}");
    }

    #[test]
    fn sleep_until_reaches_the_target() {
        let mut c = Clock::real(Instant::now());
        let t = c.now() + 2_000_000;
        c.sleep_until(t);
        assert!(c.now() >= t);
    }

    #[test]
    fn fake_clock_is_deterministic() {
        let mut c = Clock::fake(1000);
        assert_eq!((c.now(), c.now()), (1000, 2000));
        c.sleep_until(10_000);
        assert_eq!(c.now(), 11_000);
    }
}
