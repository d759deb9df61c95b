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

/// `si_code` of a signal sent by a process (kill, raise).
#[cfg(target_os = "linux")]
const SI_USER: i32 = libc::SI_USER;
#[cfg(any(target_os = "macos", target_os = "freebsd"))]
const SI_USER: i32 = 0x10001;

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the handler only makes async-signal-safe calls (poll, open,
    // dup2, close, fstatat, unlinkat, getpid, _exit) and touches atomics;
    // errno is restored for the code it interrupted.
    unsafe {
        let errno = *crate::sys::errno_location();
        guard_std_streams();
        let own_write = sig == crate::sys::SIGPIPE
            && !info.is_null()
            && (*info).si_code == SI_USER
            && (*info).si_pid() == libc::getpid();
        if !own_write {
            let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
            let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= 4
                || (n == 3 && !REPORTING.load(Ordering::SeqCst))
                || ENDING.load(Ordering::SeqCst)
            {
                hard_exit();
            }
        }
        *crate::sys::errno_location() = errno;
    }
}

/// Windows: a console control event (Ctrl-C, Ctrl-Break: SIGINT; the
/// console closed, log-off, shutdown: SIGHUP), on a thread the system
/// starts. Counted as a signal is; for the closing events the process
/// ends when this returns, so it waits (up to 4 s, within the system's
/// 5 s) for the run to write its report and exit, then removes the test
/// files the run created.
#[cfg(windows)]
fn on_console_event(sig: i32, closing: bool) {
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 4 || (n == 3 && !REPORTING.load(Ordering::SeqCst)) {
        // SAFETY: removes only the registered files, then exits.
        unsafe { hard_exit() }
    }
    if closing {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(4);
        while std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe { unlink_registered() };
    }
}

/// Points standard output and error at /dev/null when writing to them
/// can only fail (poll says error or hang-up). Async-signal-safe.
///
/// # Safety
/// Replaces the process's standard descriptors under every thread: call
/// only where nothing relies on them being the originals (the signal
/// handler, before it writes to them).
#[cfg(unix)]
unsafe fn guard_std_streams() {
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
                let null = libc::open(
                    c"/dev/null".as_ptr(),
                    crate::sys::O_WRONLY | crate::sys::O_CLOEXEC,
                );
                if null >= 0 {
                    libc::dup2(null, fd);
                    libc::close(null);
                }
            }
        }
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
    // SAFETY: _exit ends the process; the caller allows that.
    #[cfg(unix)]
    unsafe {
        libc::_exit(code)
    };
    #[cfg(windows)]
    crate::sys::console::exit_now(code)
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
        #[cfg(windows)]
        {
            // Opened without following a link, checked to be the file the
            // run created and deleted through that handle.
            let _ = crate::sys::unlink_at(e.dir, &e.name, false, Some((dev, ino).into()));
        }
        // SAFETY: a C struct of plain data, for which all zero bytes are
        // valid.
        #[cfg(unix)]
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat into a stat buffer with a NUL-terminated name.
        #[cfg(unix)]
        let found = unsafe {
            libc::fstatat(e.dir, e.name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0
        };
        #[cfg(unix)]
        if found
            && st.st_mode as u32 & crate::sys::S_IFMT == crate::sys::S_IFREG
            && (st.st_dev as u64, st.st_ino as u64) == (dev, ino)
        {
            // SAFETY: a NUL-terminated name in a directory the caller
            // keeps open while it is registered.
            unsafe { libc::unlinkat(e.dir, e.name.as_ptr(), 0) };
        }
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
    ONCE.call_once(|| {
        #[cfg(windows)]
        crate::sys::console::install(on_console_event);
        // SAFETY: installing a handler that is async-signal-safe (above).
        #[cfg(unix)]
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            for sig in STOP_SIGNALS {
                libc::sigaction(sig, &sa, ptr::null_mut());
            }
        }
    });
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
    #[cfg(unix)]
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
    #[cfg(unix)]
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
