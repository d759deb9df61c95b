//! Stop signals on Unix: one handler for SIGINT, SIGTERM, SIGHUP and
//! SIGPIPE (`sigaction`), told whether the process sent the signal to
//! itself; standard streams that can no longer be written; `_exit`.

use std::sync::OnceLock;

use crate::sys::{StopEvent, StopHandler};

/// `si_code` of a signal sent by a process (kill, raise).
#[cfg(target_os = "linux")]
const SI_USER: i32 = libc::SI_USER;
#[cfg(any(target_os = "macos", target_os = "freebsd"))]
const SI_USER: i32 = 0x10001;

static HANDLER: OnceLock<StopHandler> = OnceLock::new();

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: reads the siginfo the kernel passed (checked for null) and
    // the thread's errno, restored for the code the signal interrupted;
    // getpid is async-signal-safe.
    unsafe {
        let errno = *super::errno_location();
        let from_self =
            !info.is_null() && (*info).si_code == SI_USER && (*info).si_pid() == libc::getpid();
        if let Some(h) = HANDLER.get() {
            h(StopEvent {
                sig,
                from_self,
                closing: false,
            });
        }
        *super::errno_location() = errno;
    }
}

/// Calls `handler` on each of `signals` (the first call counts). The
/// handler runs in signal context: it must be async-signal-safe.
pub fn on_stop_signals(signals: &[i32], handler: StopHandler) {
    if HANDLER.set(handler).is_err() {
        return;
    }
    // SAFETY: installs a handler that only reads its arguments and errno
    // and calls `handler`, which the caller keeps async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        for &sig in signals {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Points standard output and error at /dev/null when writing to them
/// can only fail (poll says error or hang-up). Async-signal-safe.
///
/// # Safety
/// Replaces the process's standard descriptors under every thread: call
/// only where nothing relies on them being the originals (a stop
/// handler, before it writes to them).
pub unsafe fn guard_std_streams() {
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll on one pollfd the call may write.
        let polled = unsafe { libc::poll(&mut p, 1, 0) };
        if polled == 1 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            // SAFETY: a NUL-terminated path; the descriptors are plain
            // numbers, and the caller allows replacing `fd`.
            unsafe {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if null >= 0 {
                    libc::dup2(null, fd);
                    libc::close(null);
                }
            }
        }
    }
}

/// Ends the process at once with `code` (`_exit`: no destructors, no
/// flushing). Async-signal-safe.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process; it has no preconditions.
    unsafe { libc::_exit(code) }
}
