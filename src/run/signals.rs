//! Ctrl-C and SIGTERM: the first asks the run to stop (workers finish
//! within a second and the report is still written, marked interrupted);
//! a second one exits at once.

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // Second signal: leave now. _exit is async-signal-safe.
        // SAFETY: terminating the process.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// Installs the handlers (idempotent).
pub fn install() {
    // SAFETY: installing a handler that only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

/// Whether a stop signal arrived.
pub fn received() -> bool {
    SIGNAL.load(Ordering::Relaxed) != 0
}

/// The signal that arrived (0 if none).
pub fn which() -> i32 {
    SIGNAL.load(Ordering::Relaxed)
}
