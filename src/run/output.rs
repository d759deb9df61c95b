//! Standard output, standard error and report files, written so that a
//! failure comes back as an error with its errno, never as a panic.
//!
//! - `stdout` writes and flushes; a reader that went away (EPIPE) is
//!   noted as SIGPIPE (see `signals`): the run stops, quietly, and the
//!   exit code is 141.
//! - `stderr_line` never fails: a message that cannot be shown is lost.
//! - The live progress line (`progress`) is drawn through `draw_line`,
//!   which remembers whether a line stands drawn in place (no newline
//!   after it). While one does, every other text — notices, warnings,
//!   table rows, reports — first clears it (`\r` and erase to the end of
//!   the line) so that it starts on a line of its own; the progress line
//!   is redrawn at its next update. When no line is drawn in place (not
//!   a terminal, `--eta=never`, `--eta-newline`) nothing is added.
//! - `ReportFile` buffers a report file; `finish` flushes, syncs (regular
//!   files) and closes it, checking each step. A regular file whose
//!   report could not be written completely is removed, so no empty or
//!   truncated report is left behind.
//! - `finish_stdout` syncs standard output when it is a regular file
//!   (`> result.json`): some filesystems only report a failed write then.

use crate::sys::IntoRawFd;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::signals;

/// A write to standard output failed (and was reported where it
/// happened): `finish_stdout` has nothing to add.
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// The stream of the progress line drawn in place, if one is: `Some(true)`
/// for standard error. Held while any text is written, so that a notice
/// from a worker thread and a redraw cannot interleave.
static LIVE_LINE: Mutex<Option<bool>> = Mutex::new(None);

/// What clears a progress line drawn in place: back to its start, erase
/// to the end of the line.
pub const CLEAR_LINE: &str = "\r\x1b[K";

fn live_line() -> MutexGuard<'static, Option<bool>> {
    LIVE_LINE.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_raw(to_stderr: bool, text: &str) -> io::Result<()> {
    if to_stderr {
        let mut e = io::stderr().lock();
        e.write_all(text.as_bytes()).and_then(|()| e.flush())
    } else {
        let mut o = io::stdout().lock();
        o.write_all(text.as_bytes()).and_then(|()| o.flush())
    }
}

/// Clears the progress line if one stands drawn in place.
fn clear_live(live: &mut Option<bool>) {
    if let Some(to_stderr) = live.take() {
        let _ = write_raw(to_stderr, CLEAR_LINE);
    }
}

/// Writes progress text (`\r` and the line, or the text that blanks it)
/// to standard error or standard output; `in_place` says whether it
/// leaves a line drawn in place, which later text must clear first.
pub fn draw_line(to_stderr: bool, text: &str, in_place: bool) -> io::Result<()> {
    let mut live = live_line();
    if *live == Some(!to_stderr) {
        // A line on the other stream (cannot happen with one run at a
        // time): clear it rather than leave it under this one.
        clear_live(&mut live);
    }
    let r = write_raw(to_stderr, text);
    *live = (in_place && r.is_ok()).then_some(to_stderr);
    r
}

/// Clears the progress line if one stands drawn in place (the end of a
/// command that draws one across several runs).
pub fn clear_line() {
    clear_live(&mut live_line());
}

/// Whether `e` says the reader of a pipe went away.
pub fn is_closed(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// The errno text of `e`, as iomark's messages write it
/// ("no space left on device").
pub fn reason(e: &io::Error) -> String {
    crate::job::jobfile::io_reason(e)
}

/// Writes all of `text` to standard output and flushes it.
pub fn stdout(text: &str) -> io::Result<()> {
    let mut live = live_line();
    clear_live(&mut live);
    let mut out = io::stdout().lock();
    let r = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    if let Err(e) = &r {
        STDOUT_FAILED.store(true, Ordering::Relaxed);
        if is_closed(e) {
            signals::note_broken_pipe();
        }
    }
    r
}

/// How many characters of one quoted part a line on standard error shows
/// at most (values are cut to 80 where they are quoted; this guards the
/// rest, such as paths that were given).
const QUOTED_MAX: usize = 256;

/// Writes one line to standard error; never fails or panics. A quoted
/// part longer than [`QUOTED_MAX`] characters is shortened, and control
/// characters (from names read back from files) are written escaped, so
/// it stays one line that cannot drive the terminal.
pub fn stderr_line(line: &str) {
    let line = crate::job::error::printable(line);
    let line = crate::job::value::clip_quoted(&line, QUOTED_MAX);
    let text = format!("{line}\n");
    let mut live = live_line();
    clear_live(&mut live);
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Syncs standard output when it is a regular file. Nothing to do (Ok)
/// when it is not, or when a write to it already failed.
pub fn finish_stdout() -> io::Result<()> {
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return Ok(());
    }
    io::stdout().lock().flush()?;
    let out = crate::sys::stdout_fd();
    let regular = crate::sys::fstat(out).is_ok_and(|st| st.is_file());
    if regular && crate::sys::fsync(out) != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Standard output for a command that prints as it goes: the first
/// failure is kept and later text is dropped.
#[derive(Debug, Default)]
pub struct Console {
    error: Option<io::Error>,
    /// Standard output carries a report (`--json -`): the text goes to
    /// standard error instead.
    to_stderr: bool,
}

impl Console {
    /// A console on standard error, for when standard output carries a
    /// document.
    pub fn on_stderr() -> Console {
        Console {
            error: None,
            to_stderr: true,
        }
    }

    pub fn print(&mut self, text: &str) {
        if self.to_stderr {
            let mut live = live_line();
            clear_live(&mut live);
            let _ = io::stderr().lock().write_all(text.as_bytes());
            return;
        }
        if self.error.is_none() {
            if let Err(e) = stdout(text) {
                self.error = Some(e);
            }
        }
    }

    /// The line to show when standard output failed; None when it did
    /// not, or when its reader went away (that ends the run quietly).
    pub fn failure(&self) -> Option<String> {
        self.error
            .as_ref()
            .filter(|e| !is_closed(e))
            .map(|e| format!("cannot write to standard output: {}", reason(e)))
    }

    /// Whether a write failed (closed or not).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// A report file being written. Opened when the command starts
/// ([`ReportFile::create`], a name the user gave) or by a name iomark
/// makes up ([`ReportFile::create_generated`]), never written through a
/// link planted later (see `crate::outfile`). An existing file is
/// truncated by the first write; a file this opened that was never
/// written is removed when finished, so a run that stops early leaves no
/// empty report.
#[derive(Debug)]
pub struct ReportFile {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    name: crate::outfile::OutName,
    pending_truncate: bool,
    wrote: bool,
    error: Option<io::Error>,
}

impl ReportFile {
    /// Opens (or creates) the file the user named; see `outfile`.
    pub fn create(path: &Path) -> io::Result<ReportFile> {
        Self::open(path, crate::outfile::Named::User)
    }

    /// Opens (or creates) a file whose name iomark made up: never through
    /// a link, never a file with other hard links.
    pub fn create_generated(path: &Path) -> io::Result<ReportFile> {
        Self::open(path, crate::outfile::Named::Iomark)
    }

    fn open(path: &Path, named: crate::outfile::Named) -> io::Result<ReportFile> {
        let f = crate::outfile::open(path, named, false)?;
        let pending_truncate = f.needs_truncate();
        Ok(ReportFile {
            path: path.to_path_buf(),
            out: Some(BufWriter::with_capacity(64 * 1024, f.file)),
            name: f.name,
            pending_truncate,
            wrote: false,
            error: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file existed before (the report replaces it).
    pub fn replaces(&self) -> bool {
        !self.name.created && self.name.regular
    }

    /// Appends `text`; the first error is kept for `finish`.
    pub fn write(&mut self, text: &str) {
        if let (None, Some(out)) = (&self.error, self.out.as_mut()) {
            if self.pending_truncate {
                self.pending_truncate = false;
                if let Err(e) = out.get_ref().set_len(0) {
                    self.error = Some(e);
                    return;
                }
            }
            self.wrote = true;
            if let Err(e) = out.write_all(text.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    /// Flushes, syncs and closes the file; the first error of all the
    /// writes and of these steps. On error a regular file is removed (if
    /// its name still is this file); one this opened and never wrote is
    /// removed too.
    pub fn finish(&mut self) -> io::Result<()> {
        let unused = !self.wrote && self.name.created;
        let r = self.close();
        if (r.is_err() && self.name.regular) || unused {
            self.name.remove();
        }
        r
    }

    fn close(&mut self) -> io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        if let Some(e) = self.error.take() {
            // Drop the unwritten rest: no second attempt.
            let (file, _) = out.into_parts();
            drop(file);
            return Err(e);
        }
        let file = out.into_inner().map_err(|e| {
            let (e, w) = e.into_parts();
            let _ = w.into_parts();
            e
        })?;
        if self.name.regular {
            file.sync_all()?;
        }
        close_checked(file)
    }
}

impl Drop for ReportFile {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Closes `file`, returning close(2)'s error (NFS reports failed writes
/// there). EINTR means it is closed.
pub fn close_checked(file: File) -> io::Result<()> {
    let fd = file.into_raw_fd();
    // close(2); CloseHandle on Windows.
    if let Err(e) = crate::sys::close(fd) {
        if crate::sys::errno_of(&e) != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(())
}

/// Writes a whole report file as `ReportFile` does.
pub fn write_file(path: &Path, text: &str) -> io::Result<()> {
    let mut f = ReportFile::create(path)?;
    f.write(text);
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // /dev/full is Linux's.
    #[cfg(target_os = "linux")]
    fn a_full_device_is_an_error_with_its_errno() {
        let e = write_file(Path::new("/dev/full"), "{}\n").unwrap_err();
        assert_eq!(crate::sys::errno_of(&e), Some(libc::ENOSPC));
        assert_eq!(reason(&e), "no space left on device");
    }

    #[test]
    fn a_written_report_is_complete() {
        let dir = std::env::temp_dir().join(format!("iomark-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.json");
        let mut f = ReportFile::create(&p).unwrap();
        f.write("{\"a\":");
        f.write("1}\n");
        f.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
