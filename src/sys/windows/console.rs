//! Console control events: Ctrl-C and Ctrl-Break (SIGINT), closing the
//! console window, logging off and shutting down (SIGHUP), delivered to
//! a handler iomark sets with `SetConsoleCtrlHandler`. Windows runs the
//! handler on a thread of its own, so it may do anything a thread may;
//! for the closing events the system ends the process when the handler
//! returns (or a few seconds later), so that handler does its clean-up
//! before it returns.

use std::sync::OnceLock;

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};

/// What the handler does with a stop signal: `closing` when the process
/// ends once it returns.
pub type Handler = fn(sig: i32, closing: bool);

static HANDLER: OnceLock<Handler> = OnceLock::new();

unsafe extern "system" fn routine(event: u32) -> BOOL {
    let (sig, closing) = match event {
        CTRL_C_EVENT | CTRL_BREAK_EVENT => (super::SIGINT, false),
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => (super::SIGHUP, true),
        _ => return 0,
    };
    match HANDLER.get() {
        Some(h) => {
            h(sig, closing);
            1
        }
        None => 0,
    }
}

/// Sets `handler` for the console's control events (the first call
/// counts).
pub fn install(handler: Handler) {
    if HANDLER.set(handler).is_ok() {
        // SAFETY: registers a routine that stays valid for the process.
        unsafe { SetConsoleCtrlHandler(Some(routine), 1) };
    }
}

/// Ends the process at once with `code` (no destructors, no flushing),
/// as `_exit` does.
pub fn exit_now(code: i32) -> ! {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};
    // SAFETY: ends this process.
    unsafe { TerminateProcess(GetCurrentProcess(), code as u32) };
    std::process::abort()
}

/// Calls `handler` on the console's control events (the first call
/// counts): Ctrl-C and Ctrl-Break as SIGINT; closing the console,
/// logging off and shutting down as SIGHUP with `closing` set. The
/// `signals` are Unix's; Windows has only these events.
pub fn on_stop_signals(_signals: &[i32], handler: crate::sys::StopHandler) {
    static STOP: OnceLock<crate::sys::StopHandler> = OnceLock::new();
    if STOP.set(handler).is_ok() {
        install(|sig, closing| {
            if let Some(h) = STOP.get() {
                h(crate::sys::StopEvent {
                    sig,
                    from_self: false,
                    closing,
                });
            }
        });
    }
}

/// Nothing to do on Windows: a console handler runs on a thread of its
/// own, and writing to a closed console fails without a signal.
///
/// # Safety
/// None on Windows; Unix's form replaces the standard descriptors.
pub unsafe fn guard_std_streams() {}
