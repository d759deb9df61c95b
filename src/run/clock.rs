//! The worker's clock: monotonic nanoseconds since the run started (read
//! through the vDSO, no syscall), or a fake clock that advances a fixed
//! step per reading so reports can be snapshot-tested deterministically.

use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub enum Clock {
    Real(Instant),
    Fake { now: u64, step: u64 },
}

impl Clock {
    pub fn real(base: Instant) -> Self {
        Clock::Real(base)
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
            Clock::Real(base) => base.elapsed().as_nanos() as u64,
            Clock::Fake { now, step } => {
                *now += *step;
                *now
            }
        }
    }

    /// Waits until `t` (ns); spins for the last stretch when `spin` is set.
    pub fn sleep_until(&mut self, t: u64) {
        match self {
            Clock::Real(base) => {
                let target = *base + Duration::from_nanos(t);
                loop {
                    let now = Instant::now();
                    if now >= target {
                        break;
                    }
                    let left = target - now;
                    if left > Duration::from_micros(100) {
                        std::thread::sleep(left - Duration::from_micros(50));
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
            Clock::Fake { now, .. } => {
                if *now < t {
                    *now = t;
                }
            }
        }
    }

    /// Busy-waits until `t` (thinktime_spin).
    pub fn spin_until(&mut self, t: u64) {
        match self {
            Clock::Real(_) => {
                while self.now() < t {
                    std::hint::spin_loop();
                }
            }
            Clock::Fake { now, .. } => {
                if *now < t {
                    *now = t;
                }
            }
        }
    }
}
