//! The worker's clock: monotonic nanoseconds since the run started, or a
//! fake clock that advances a fixed step per reading so reports can be
//! snapshot-tested deterministically.
//!
//! Unless the job sets `clocksource`, the real clock reads the CPU's
//! time-stamp counter when the kernel itself trusts it (clocksource "tsc",
//! invariant TSC), converted to nanoseconds with a factor calibrated once
//! against CLOCK_MONOTONIC; otherwise it calls
//! clock_gettime(CLOCK_MONOTONIC) through the vDSO. Either way a reading
//! costs no system call; the counter read is several times cheaper, which
//! matters when every I/O is timed two or three times. `clocksource=cpu`
//! uses the counter even where the kernel does not trust it (with a
//! warning), `clock_gettime` never uses it, and `gettimeofday` reads the
//! wall clock in microseconds.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::job::spec::ClockSource;

/// Which hardware or kernel source the real clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The CPU time-stamp counter, calibrated.
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC).
    Monotonic,
    /// gettimeofday(2): wall-clock microseconds.
    Gettimeofday,
}

#[derive(Clone, Copy, Debug)]
pub struct TscCal {
    tsc0: u64,
    mono0: u64,
    /// Nanoseconds per tick, as a 32.32 fixed-point number.
    mult: u64,
}

/// CLOCK_MONOTONIC now, in ns (one clock for every process of a host);
/// the performance counter (`QueryPerformanceCounter`) on Windows.
pub use crate::sys::mono_ns;
use crate::sys::wall_ns;

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
    if !cfg!(target_arch = "x86_64") {
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

/// The counter's calibration, made once per process; None where there is
/// no counter to read.
fn calibration() -> Option<TscCal> {
    static CAL: OnceLock<Option<TscCal>> = OnceLock::new();
    *CAL.get_or_init(calibrate)
}

/// Whether the kernel trusts the counter (checked once per process).
/// `IOMARK_CLOCK=clock_gettime` in the environment says no.
fn trusted() -> bool {
    static TRUSTED: OnceLock<bool> = OnceLock::new();
    *TRUSTED.get_or_init(|| {
        std::env::var_os("IOMARK_CLOCK").is_none_or(|v| v != "clock_gettime") && tsc_trusted()
    })
}

/// The clock a job asking for `want` reads on this machine, with a warning
/// when that is not quite what it asked for.
pub fn resolve(want: ClockSource) -> (Source, Option<&'static str>) {
    match want {
        ClockSource::Auto if trusted() && calibration().is_some() => (Source::Tsc, None),
        ClockSource::Auto | ClockSource::ClockGettime => (Source::Monotonic, None),
        ClockSource::Gettimeofday => (Source::Gettimeofday, None),
        ClockSource::Cpu if calibration().is_none() => (
            Source::Monotonic,
            Some("clocksource=cpu: this CPU has no time-stamp counter; timing with clock_gettime"),
        ),
        ClockSource::Cpu if !trusted() => (
            Source::Tsc,
            Some("clocksource=cpu: the kernel does not trust this CPU's time-stamp counter; latencies may be wrong"),
        ),
        ClockSource::Cpu => (Source::Tsc, None),
    }
}

/// The source the real clock uses on this machine when no job sets one.
pub fn source() -> Source {
    resolve(ClockSource::Auto).0
}

#[derive(Clone, Copy, Debug)]
pub enum Reader {
    Tsc(TscCal),
    Monotonic,
    Wall,
}

/// Current time in ns: on the CLOCK_MONOTONIC scale from the counter or
/// clock_gettime, on the wall-clock scale from gettimeofday.
#[inline]
fn now_ns(r: &Reader) -> u64 {
    match r {
        Reader::Tsc(c) => {
            let d = rdtsc().wrapping_sub(c.tsc0) as i64;
            if d <= 0 {
                c.mono0
                    .saturating_sub((((-d) as u128 * c.mult as u128) >> 32) as u64)
            } else {
                c.mono0 + ((d as u128 * c.mult as u128) >> 32) as u64
            }
        }
        Reader::Monotonic => mono_ns(),
        Reader::Wall => wall_ns(),
    }
}

#[derive(Clone, Debug)]
pub enum Clock {
    Real { reader: Reader, base_ns: u64 },
    Fake { now: u64, step: u64 },
}

impl Clock {
    /// A real clock reading `source`, whose zero is the instant `base`.
    pub fn real(base: Instant, source: Source) -> Self {
        let reader = match (source, calibration()) {
            (Source::Tsc, Some(cal)) => Reader::Tsc(cal),
            (Source::Gettimeofday, _) => Reader::Wall,
            _ => Reader::Monotonic,
        };
        let base_ns = now_ns(&reader).saturating_sub(base.elapsed().as_nanos() as u64);
        Clock::Real { reader, base_ns }
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
        // The usual reader first, in line; the others are calls anyway.
        if let Clock::Real {
            reader: r @ Reader::Tsc(_),
            base_ns,
        } = self
        {
            return now_ns(r).saturating_sub(*base_ns);
        }
        self.now_other()
    }

    #[inline(never)]
    fn now_other(&mut self) -> u64 {
        match self {
            Clock::Real { reader, base_ns } => now_ns(reader).saturating_sub(*base_ns),
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
    fn every_real_clock_tracks_monotonic_time() {
        for source in [Source::Tsc, Source::Monotonic, Source::Gettimeofday] {
            let base = Instant::now();
            let mut c = Clock::real(base, source);
            let a = c.now();
            std::thread::sleep(Duration::from_millis(30));
            let b = c.now();
            let wall = base.elapsed().as_nanos() as u64;
            assert!(b > a, "{source:?}");
            assert!(
                b - a >= 29_000_000,
                "{source:?}: slept 30 ms, clock moved {} ns",
                b - a
            );
            // Readings agree with Instant within a millisecond.
            assert!(
                b.abs_diff(wall) < 1_000_000,
                "{source:?}: clock {b} vs instant {wall}"
            );
        }
    }

    #[test]
    fn clocksource_picks_the_reader() {
        assert_eq!(
            resolve(ClockSource::ClockGettime),
            (Source::Monotonic, None)
        );
        assert_eq!(
            resolve(ClockSource::Gettimeofday),
            (Source::Gettimeofday, None)
        );
        let (cpu, _) = resolve(ClockSource::Cpu);
        let expect = if cfg!(target_arch = "x86_64") {
            Source::Tsc
        } else {
            Source::Monotonic
        };
        assert_eq!(cpu, expect);
        let c = Clock::real(Instant::now(), Source::Gettimeofday);
        assert!(matches!(
            c,
            Clock::Real {
                reader: Reader::Wall,
                ..
            }
        ));
    }

    #[test]
    fn sleep_until_reaches_the_target() {
        let mut c = Clock::real(Instant::now(), source());
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
