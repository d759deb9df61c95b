//! Process-level calls on Windows: clocks, waiting on a word, the
//! shell, standard output's handle.

use std::sync::atomic::{AtomicU32, Ordering};

use super::RawFd;

/// The wall clock, in ns since the Unix epoch.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The wall clock in ms since the Unix epoch: Windows has no
/// `clock_gettime`, so every clock `id` reads it.
pub fn clock_ms(_id: i32) -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Sleeps briefly while `word` holds `expected` (the caller's loop
/// polls); may return early.
pub fn wait_on(word: &AtomicU32, expected: u32) {
    if word.load(Ordering::Acquire) == expected {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// Wakes every thread in [`wait_on`] for `word` (they poll here).
pub fn wake_all(_word: &AtomicU32) {}

/// The system's shell running the command line `cmd`: `cmd.exe /C`,
/// the line passed as it is (cmd.exe parses it itself).
pub fn shell(cmd: &str) -> std::process::Command {
    use std::os::windows::process::CommandExt;
    let mut c = std::process::Command::new("cmd.exe");
    c.arg("/C").raw_arg(cmd);
    c
}

/// Standard output's handle, as a descriptor.
pub fn stdout_fd() -> RawFd {
    super::fd_of(std::os::windows::io::AsRawHandle::as_raw_handle(
        &std::io::stdout(),
    ))
}

/// Thread affinity is not set on Windows (the planner refuses the
/// options that ask for it).
pub fn pin_thread(_cpus: &[usize]) {}

/// Nice values are not set on Windows (the planner refuses the option).
pub fn set_thread_nice(_nice: i32) {}

/// No memory policies on Windows: EINVAL (the planner refuses the option
/// before).
pub fn set_mempolicy(_mode: i32, _mask: Option<&[libc::c_ulong]>) -> std::io::Result<()> {
    Err(super::super::from_errno(libc::EINVAL))
}
