//! Stop signals: SIGINT (Ctrl-C), SIGTERM, SIGHUP (closed terminal,
//! dropped ssh) and SIGPIPE are handled alike.
//!
//! - The first asks the run to stop: workers finish within a second, the
//!   report of what was measured is written (marked interrupted), test
//!   files a benchmark created are removed, and the process exits with
//!   128 + the signal's number.
//! - A second one hurries: the run stops waiting for workers after a
//!   short grace (`run::HURRY`) and reports a job still running from the
//!   bytes and I/Os it had counted. The report is still complete.
//! - A third exits at once, with the same code, after removing the test
//!   files registered with `set_cleanup` — unless the final report is
//!   being written at that moment (`Reporting`), so that it is never cut
//!   short; the process then ends once it is written (or on a fourth).
//!   A registered file is removed only through the handle of its
//!   directory (`unlinkat`), and only when `fstatat` finds there the very
//!   file the run created under that name (device and inode, recorded
//!   with `note_created` when it was made): a directory swapped or a link
//!   planted meanwhile leaves everything as it is.
//!
//! A closed standard output (EPIPE on a write) is recorded as SIGPIPE by
//! the code that saw it (`note_broken_pipe`): the run stops as on a
//! signal and the exit code is 141. A SIGPIPE raised by one of iomark's
//! own writes is otherwise not a stop request: the writer sees EPIPE and
//! decides (a job writing into a FIFO fails with EPIPE, as before).
//!
//! On every signal, standard output and error that can no longer be
//! written (a hung-up terminal, a pipe without reader) are pointed at
//! /dev/null, so a later message cannot fail or panic.

use crate::sys::RawFd;
use std::ffi::{CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// The first stop signal (0: none yet).
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Stop requests so far.
static COUNT: AtomicU32 = AtomicU32::new(0);
/// The final report is being written: a third signal waits for it.
static REPORTING: AtomicBool = AtomicBool::new(false);
/// The process has nothing left to do but be ended from outside (an MPI
/// abort in progress): a stop signal exits at once.
static ENDING: AtomicBool = AtomicBool::new(false);
/// Files to remove on a hard exit (leaked lists: a handler may be reading
/// an old one while a new one is set).
static CLEANUP: AtomicPtr<Vec<Entry>> = AtomicPtr::new(ptr::null_mut());

/// A file to remove on a hard exit: its directory's handle (and which
/// directory that is), its name, and the device and inode of the file
/// the run created there (inode 0 until it is created).
struct Entry {
    dir: RawFd,
    dir_id: (u64, u64),
    name: CString,
    dev: AtomicU64,
    ino: AtomicU64,
}

/// The signals handled.
pub const STOP_SIGNALS: [i32; 4] = [
    crate::sys::SIGINT,
    crate::sys::SIGTERM,
    crate::sys::SIGHUP,
    crate::sys::SIGPIPE,
];

/// A stop signal (on Windows a console control event: Ctrl-C and
/// Ctrl-Break are SIGINT; the console closed, log-off and shutdown are
/// SIGHUP, `closing`), counted as the module documentation says. On Unix
/// it runs in signal context: it only makes async-signal-safe calls
/// (poll, open, dup2, close, fstatat, unlinkat, _exit) and touches
/// atomics. When `closing`, the process ends once this returns, so it
/// waits (up to 4 s, within the system's 5 s) for the run to write its
/// report and exit, then removes the test files the run created.
fn on_stop(ev: crate::sys::StopEvent) {
    // SAFETY: a stop handler, before anything here writes to the streams.
    unsafe { crate::sys::guard_std_streams() };
    // A SIGPIPE raised by one of iomark's own writes: the writer decides.
    if ev.sig == crate::sys::SIGPIPE && ev.from_self {
        return;
    }
    let _ = FIRST.compare_exchange(0, ev.sig, Ordering::SeqCst, Ordering::SeqCst);
    let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 4 || (n == 3 && !REPORTING.load(Ordering::SeqCst)) || ENDING.load(Ordering::SeqCst) {
        // SAFETY: the signal path ends the run.
        unsafe { hard_exit() }
    }
    if ev.closing {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(4);
        while std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // SAFETY: the process ends when this returns.
        unsafe { unlink_registered() };
    }
}

/// Removes the registered files and exits with 128 + the first signal.
///
/// # Safety
/// As [`unlink_registered`]; and the process ends at once, without
/// unwinding or running destructors: call only on the signal path, where
/// nothing is left to flush.
unsafe fn hard_exit() -> ! {
    // SAFETY: the caller ends the run (this function's contract).
    unsafe { unlink_registered() };
    let first = FIRST.load(Ordering::SeqCst);
    let code = 128
        + if first == 0 {
            crate::sys::SIGINT
        } else {
            first
        };
    crate::sys::exit_now(code)
}

/// Removes the files registered with `set_cleanup` that are still the
/// files the run created (see the module documentation).
/// Async-signal-safe: atomics, fstatat and unlinkat only.
///
/// # Safety
/// Removes files the run may still have open: call only when the run
/// ends (a hard exit, a closing console, `clean_up_now`).
unsafe fn unlink_registered() {
    // SAFETY: lists are leaked, never freed (see `set_cleanup`), so a
    // non-null pointer refers to a live list.
    let Some(list) = (unsafe { CLEANUP.load(Ordering::SeqCst).as_ref() }) else {
        return;
    };
    for e in list.iter() {
        let ino = e.ino.load(Ordering::SeqCst);
        let dev = e.dev.load(Ordering::SeqCst);
        if ino == 0 || e.ino.load(Ordering::SeqCst) != ino {
            continue;
        }
        // Not following a link, and only while the name is still the
        // file the run created (on Windows deleted through a handle on
        // that very file).
        let _ = crate::sys::unlink_at(e.dir, &e.name, false, Some((dev, ino).into()));
    }
}

/// From now on a stop signal ends the process at once (its registered
/// files removed): it is waiting to be ended from outside (an MPI abort,
/// whose launcher sends a stop signal and kills a second later whatever
/// has not left; the thread that would act on the signal may be the one
/// waiting in the abort).
pub fn exit_on_signal() {
    ENDING.store(true, Ordering::SeqCst);
}

/// Removes the registered files now: the process is about to be stopped
/// from outside (every MPI rank aborted) and no destructor will run.
pub fn clean_up_now() {
    // SAFETY: only removes the registered files, as a hard exit does.
    unsafe { unlink_registered() }
}

/// Installs the handlers (idempotent).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| crate::sys::on_stop_signals(&STOP_SIGNALS, on_stop));
}

/// Standard output is closed (a write failed with EPIPE): stop as on
/// SIGPIPE. Does not count as a further signal when one already came.
pub fn note_broken_pipe() {
    let _ = FIRST.compare_exchange(0, crate::sys::SIGPIPE, Ordering::SeqCst, Ordering::SeqCst);
    COUNT.fetch_max(1, Ordering::SeqCst);
}

/// Whether a stop signal arrived (or standard output closed).
pub fn received() -> bool {
    COUNT.load(Ordering::Relaxed) != 0
}

/// Whether a second stop signal arrived: stop waiting for workers.
pub fn hurry() -> bool {
    COUNT.load(Ordering::Relaxed) >= 2
}

/// The first signal that arrived (0 if none).
pub fn which() -> i32 {
    FIRST.load(Ordering::Relaxed)
}

/// The exit code a stopped process returns: 128 + the first signal.
pub fn exit_code() -> Option<i32> {
    match which() {
        0 => None,
        sig => Some(128 + sig),
    }
}

/// Registers the files a hard exit removes (replacing earlier ones):
/// each a name in the directory whose handle is given, which the caller
/// keeps open while it is registered. A file is only removed once the
/// run has created it (`note_created`); what an earlier list recorded of
/// the same names is kept.
pub fn set_cleanup(files: &[(RawFd, CString)]) {
    let old = CLEANUP.load(Ordering::SeqCst);
    let list: Vec<Entry> = files
        .iter()
        .map(|(dir, name)| {
            let e = Entry {
                dir: *dir,
                dir_id: super::dirs::ident(*dir),
                name: name.clone(),
                dev: AtomicU64::new(0),
                ino: AtomicU64::new(0),
            };
            // SAFETY: an earlier list is never freed.
            if let Some(was) = unsafe { old.as_ref() }
                .and_then(|l| l.iter().find(|o| o.dir_id == e.dir_id && o.name == e.name))
            {
                e.dev
                    .store(was.dev.load(Ordering::SeqCst), Ordering::SeqCst);
                e.ino
                    .store(was.ino.load(Ordering::SeqCst), Ordering::SeqCst);
            }
            e
        })
        .collect();
    // Leaked on purpose: a handler may still read the previous list.
    CLEANUP.store(Box::into_raw(Box::new(list)), Ordering::SeqCst);
}

/// The registered entries for `name` in the directory `dir_id`.
fn entries(dir_id: (u64, u64), name: &CStr) -> impl Iterator<Item = &'static Entry> + '_ {
    // SAFETY: lists are never freed.
    let list = unsafe { CLEANUP.load(Ordering::SeqCst).as_ref() };
    list.into_iter()
        .flat_map(|l| l.iter())
        .filter(move |e| e.dir_id == dir_id && e.name.as_c_str() == name)
}

/// The run has created the file `name` in directory `dir` (device and
/// inode `dev`, `ino`): a hard exit may remove it if it is registered.
pub fn note_created(dir: RawFd, name: &CStr, dev: u64, ino: u64) {
    for e in entries(super::dirs::ident(dir), name) {
        e.ino.store(0, Ordering::SeqCst);
        e.dev.store(dev, Ordering::SeqCst);
        e.ino.store(ino, Ordering::SeqCst);
    }
}

/// The run removed the file `name` in the directory `dir_id`.
pub fn note_removed(dir_id: (u64, u64), name: &CStr) {
    for e in entries(dir_id, name) {
        e.ino.store(0, Ordering::SeqCst);
    }
}

/// No files to remove on a hard exit any more.
pub fn clear_cleanup() {
    CLEANUP.store(ptr::null_mut(), Ordering::SeqCst);
}

/// Held while the final report is written: a third signal then does not
/// exit (a fourth still does), so the report is never cut short.
pub struct Reporting(());

impl Reporting {
    pub fn start() -> Reporting {
        REPORTING.store(true, Ordering::SeqCst);
        Reporting(())
    }
}

impl Drop for Reporting {
    fn drop(&mut self) {
        REPORTING.store(false, Ordering::SeqCst);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_sigpipe_from_our_own_write_is_not_a_stop_request() {
        install();
        let before = COUNT.load(Ordering::SeqCst);
        let mut fds = [0; 2];
        // SAFETY: a pipe this test owns; writing one byte after closing
        // its read end raises SIGPIPE in this thread.
        let (r, errno) = unsafe {
            assert_eq!(libc::pipe2(fds.as_mut_ptr(), crate::sys::O_CLOEXEC), 0);
            libc::close(fds[0]);
            let r = libc::write(fds[1], b"x".as_ptr().cast(), 1);
            let errno = *crate::sys::errno_location();
            libc::close(fds[1]);
            (r, errno)
        };
        assert_eq!((r, errno), (-1, libc::EPIPE));
        // The handler ran (the signal is delivered before write returns)
        // and left the stop state alone: the writer decides.
        assert_eq!(COUNT.load(Ordering::SeqCst), before);
        assert_eq!(before, 0, "no other test sends stop signals");
    }

    #[test]
    fn the_hard_exit_removes_only_the_files_the_run_created_through_their_directory() {
        use crate::sys::ext::MetadataExt;
        use crate::sys::AsRawFd;
        let t = tempfile::tempdir().unwrap();
        let sub = t.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dir = std::fs::File::open(&sub).unwrap();
        let mine = CString::new("mine.tmp").unwrap();
        let later = CString::new("later.tmp").unwrap();
        set_cleanup(&[
            (dir.as_raw_fd(), mine.clone()),
            (dir.as_raw_fd(), later.clone()),
        ]);
        std::fs::write(sub.join("mine.tmp"), b"the run's").unwrap();
        let m = std::fs::metadata(sub.join("mine.tmp")).unwrap();
        note_created(dir.as_raw_fd(), &mine, m.dev(), m.ino());
        // Registering again keeps what was recorded.
        set_cleanup(&[
            (dir.as_raw_fd(), mine.clone()),
            (dir.as_raw_fd(), later.clone()),
        ]);
        // The directory is swapped for a link to a victim's, which holds
        // files of the same names; "later.tmp" was never created.
        let victims = t.path().join("victims");
        std::fs::create_dir(&victims).unwrap();
        std::fs::write(victims.join("mine.tmp"), b"precious").unwrap();
        std::fs::write(victims.join("later.tmp"), b"precious").unwrap();
        std::fs::rename(&sub, t.path().join("sub.old")).unwrap();
        std::os::unix::fs::symlink(&victims, &sub).unwrap();
        clean_up_now();
        clear_cleanup();
        assert_eq!(
            std::fs::read(victims.join("mine.tmp")).unwrap(),
            b"precious"
        );
        assert_eq!(
            std::fs::read(victims.join("later.tmp")).unwrap(),
            b"precious"
        );
        assert!(!t.path().join("sub.old/mine.tmp").exists());
    }
}
