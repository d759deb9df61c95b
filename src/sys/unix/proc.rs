//! Process-level calls on Unix: clocks, waiting on a word, the shell,
//! standard output's descriptor.

use std::sync::atomic::AtomicU32;

use super::RawFd;

/// CLOCK_MONOTONIC now, in ns (one clock for every process of a host).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The wall clock (`gettimeofday`), in ns since the Unix epoch.
#[inline]
pub fn wall_ns() -> u64 {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes the timeval; the timezone may be null.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

/// `clock_gettime(id)` in ms (0 when the clock does not exist).
pub fn clock_ms(id: i32) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    if unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Sleeps while `word` holds `expected` (a futex on Linux; elsewhere a
/// short sleep, the caller's loop polling); may return early.
#[cfg(target_os = "linux")]
pub fn wait_on(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT reads the aligned u32 behind `word`, which lives
    // as long as this call; a spurious or early return is handled by the
    // caller's loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every thread in [`wait_on`] for `word`.
#[cfg(target_os = "linux")]
pub fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// Sleeps while `word` holds `expected` (a futex on Linux; elsewhere a
/// short sleep, the caller's loop polling); may return early.
#[cfg(not(target_os = "linux"))]
pub fn wait_on(word: &AtomicU32, expected: u32) {
    if word.load(std::sync::atomic::Ordering::Acquire) == expected {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// Wakes every thread in [`wait_on`] for `word` (they poll here).
#[cfg(not(target_os = "linux"))]
pub fn wake_all(_word: &AtomicU32) {}

/// The system's shell running the command line `cmd`, as C's `system()`
/// does: `/bin/sh -c`.
pub fn shell(cmd: &str) -> std::process::Command {
    let mut c = std::process::Command::new("/bin/sh");
    c.arg("-c").arg(cmd);
    c
}

/// Standard output's descriptor.
pub fn stdout_fd() -> RawFd {
    libc::STDOUT_FILENO
}

/// Runs the calling thread on `cpus` only (`sched_setaffinity`); a
/// failure leaves it where it was. Linux only: elsewhere the planner
/// refuses the options that ask for it.
pub fn pin_thread(cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity(0) applies to
    // this thread.
    #[cfg(target_os = "linux")]
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpus;
}

/// Sets the calling thread's nice value (`setpriority` on its thread
/// id); a failure leaves it as it was. Linux only: elsewhere the planner
/// refuses the option.
pub fn set_thread_nice(nice: i32) {
    // SAFETY: setpriority on this thread's id.
    #[cfg(target_os = "linux")]
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// Sets the calling thread's memory policy (`set_mempolicy(2)`): `mode`
/// and the node mask (`None`: no nodes). Linux only: elsewhere EINVAL
/// (the planner refuses the option before).
pub fn set_mempolicy(mode: i32, mask: Option<&[libc::c_ulong]>) -> std::io::Result<()> {
    let (ptr, maxnode) = match mask {
        None => (std::ptr::null(), 0),
        Some(m) => (m.as_ptr(), m.len() * libc::c_ulong::BITS as usize),
    };
    // SAFETY: the mask outlives the call; maxnode counts its bits.
    #[cfg(target_os = "linux")]
    if unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (mode, ptr, maxnode);
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    #[cfg(target_os = "linux")]
    Ok(())
}
