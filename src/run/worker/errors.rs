//! A job's error state: its first error (errno and message, which end
//! the job), the errors it counts and carries on after
//! (`continue_on_error`, `ignore_error`, reported as `total_err` and the
//! first of them), and `fill_device`'s "the target is full", which ends
//! the job without an error.
//!
//! What an error does depends only on its type and errno
//! ([`error_fate`]); messages are made by whoever met the error, and only
//! when it will be kept or printed (errors are cold: they may allocate).

use crate::engine::Op;
use crate::job::spec::ContinueOn;
use crate::job::JobSpec;
use crate::stats::JobStats;

/// What an error does to a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ErrorFate {
    /// Counted; the job carries on.
    CarryOn,
    /// Counted (the job counts errors of this type), and the job stops.
    CountAndStop,
    /// The job stops.
    Stop,
}

/// The fate of error `errno` on `op`, by error type (EILSEQ is a verify
/// error, a read's error a read error, any other a write error): a job
/// counts the errors of the types `continue_on_error` names or
/// `ignore_error` lists, and carries on after those in the type's list
/// (by default the non-fatal EIO and EILSEQ).
pub(super) fn error_fate(
    on: ContinueOn,
    ignore: &[Option<Vec<i32>>; 3],
    op: Op,
    errno: i32,
) -> ErrorFate {
    let kind = if errno == libc::EILSEQ {
        2
    } else if op == Op::Read {
        0
    } else {
        1
    };
    let counted = ignore[kind].is_some()
        || match on {
            ContinueOn::None => false,
            ContinueOn::Read => kind == 0,
            ContinueOn::Write => kind == 1,
            ContinueOn::Io => kind < 2,
            ContinueOn::Verify => kind == 2,
            ContinueOn::All => true,
        };
    let listed = match &ignore[kind] {
        Some(list) => list.contains(&errno),
        None => errno == libc::EIO || errno == libc::EILSEQ,
    };
    match (counted, listed) {
        (false, _) => ErrorFate::Stop,
        (true, true) => ErrorFate::CarryOn,
        (true, false) => ErrorFate::CountAndStop,
    }
}

/// The lower-case text of an errno ("no space left on device").
pub(super) fn errno_name(e: i32) -> String {
    crate::sys::error_text(&crate::sys::from_errno(e)).to_lowercase()
}

/// See the module docs.
pub(super) struct ErrorState<'a> {
    spec: &'a JobSpec,
    continue_on: ContinueOn,
    /// errno of the error that ended the job (0: none) and its message.
    error: i32,
    msg: Option<String>,
    /// Errors counted (`total_err`).
    total: u64,
    /// `fill_device` met ENOSPC: the job is done.
    filled: bool,
    /// Length of the I/O whose transfer moved zero bytes, for its error
    /// message (0: none).
    eof_len: u64,
}

impl<'a> ErrorState<'a> {
    pub fn new(spec: &'a JobSpec) -> Self {
        ErrorState {
            spec,
            continue_on: ContinueOn::from_name(&spec.ctl.continue_on_error),
            error: 0,
            msg: None,
            total: 0,
            filled: false,
            eof_len: 0,
        }
    }

    /// The job failed.
    #[inline]
    pub fn failed(&self) -> bool {
        self.error != 0
    }

    /// The job must end: it failed, or `fill_device` filled the target.
    #[inline]
    pub fn ended(&self) -> bool {
        self.error != 0 || self.filled
    }

    /// Errors counted so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Ends the job with this error, unless it already failed.
    #[cold]
    pub fn fail(&mut self, errno: i32, msg: String) {
        if self.error == 0 {
            self.error = errno;
            self.msg = Some(msg);
        }
    }

    /// An I/O `op` failed with `errno`: `None` when nothing more is to be
    /// done (`fill_device` filled the target, or the job already failed
    /// and this error is not counted), else its fate, for [`Self::on_error`].
    #[cold]
    pub fn io_failed(&mut self, op: Op, errno: i32) -> Option<ErrorFate> {
        if errno == libc::ENOSPC && op == Op::Write && self.spec.file.fill_device {
            self.filled = true;
            return None;
        }
        let fate = error_fate(self.continue_on, &self.spec.ctl.ignore_error, op, errno);
        (self.error == 0 || fate == ErrorFate::CarryOn).then_some(fate)
    }

    /// Handles an error as `fate` says: a counted one adds to the count
    /// (the first is the job's reported error, in `stats.first_error`;
    /// with `error_dump`, one the job carries on after is printed as it
    /// happens), any other stops it.
    #[cold]
    pub fn on_error(&mut self, fate: ErrorFate, errno: i32, msg: String, stats: &mut JobStats) {
        if fate != ErrorFate::Stop {
            self.total += 1;
            if self.total == 1 && self.error == 0 {
                stats.first_error = errno;
            }
        }
        if fate != ErrorFate::CarryOn {
            self.fail(errno, msg);
            return;
        }
        if self.spec.ctl.error_dump {
            crate::run::output::stderr_line(&format!(
                "iomark: job '{}': {msg} (error {}, carrying on)",
                self.spec.name, self.total
            ));
        }
        if self.total == 1 && self.error == 0 {
            self.msg = Some(msg);
        }
    }

    /// A transfer of `len` bytes moved nothing: its error message says so.
    #[cold]
    pub fn note_eof(&mut self, len: u64) {
        self.eof_len = len;
    }

    /// The length noted by [`Self::note_eof`], once (0: none).
    pub fn take_eof(&mut self) -> u64 {
        std::mem::take(&mut self.eof_len)
    }

    /// Adds `more` to the message of the job's error, if it has one.
    pub fn append(&mut self, more: &str) {
        if let Some(msg) = self.msg.as_mut() {
            msg.push(' ');
            msg.push_str(more);
        }
    }

    /// The job's error and message at its end: when it only carried on
    /// after errors, the first of them (`first_error`, or EIO).
    pub fn finish(&mut self, first_error: i32) -> (i32, Option<String>) {
        if self.error == 0 && self.total > 0 {
            self.error = if first_error != 0 {
                first_error
            } else {
                libc::EIO
            };
        }
        (self.error, self.msg.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use ErrorFate::*;

    fn fate(on: ContinueOn, op: Op, errno: i32) -> ErrorFate {
        error_fate(on, &[None, None, None], op, errno)
    }

    #[test]
    fn ignore_error_lists_replace_the_default_per_type() {
        let w = [None, Some(vec![libc::ENOSPC, 122]), None];
        // Listed write errors carry on even without continue_on_error.
        assert_eq!(
            error_fate(ContinueOn::None, &w, Op::Write, libc::ENOSPC),
            CarryOn
        );
        assert_eq!(error_fate(ContinueOn::None, &w, Op::Fsync, 122), CarryOn);
        // The list replaces the default for its type: EIO is counted, fatal.
        assert_eq!(
            error_fate(ContinueOn::All, &w, Op::Write, libc::EIO),
            CountAndStop
        );
        // Other types keep the default.
        assert_eq!(
            error_fate(ContinueOn::All, &w, Op::Read, libc::EIO),
            CarryOn
        );
        assert_eq!(
            error_fate(ContinueOn::None, &w, Op::Read, libc::ENOSPC),
            Stop
        );
        let r = [Some(vec![libc::EAGAIN]), None, None];
        assert_eq!(
            error_fate(ContinueOn::None, &r, Op::Read, libc::EAGAIN),
            CarryOn
        );
        assert_eq!(
            error_fate(ContinueOn::None, &r, Op::Write, libc::EAGAIN),
            Stop
        );
    }

    #[test]
    fn only_non_fatal_errors_of_the_named_kind_are_carried_on_after() {
        assert_eq!(fate(ContinueOn::All, Op::Write, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Io, Op::Fsync, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Verify, Op::Read, libc::EILSEQ), CarryOn);
        assert_eq!(fate(ContinueOn::Read, Op::Read, libc::EIO), CarryOn);
        assert_eq!(fate(ContinueOn::Read, Op::Write, libc::EIO), Stop);
        // A fatal error of a type the job counts is counted, then stops it.
        assert_eq!(
            fate(ContinueOn::Write, Op::Write, libc::ENOSPC),
            CountAndStop
        );
        assert_eq!(fate(ContinueOn::None, Op::Read, libc::EIO), Stop);
        assert_eq!(fate(ContinueOn::Verify, Op::Read, libc::EIO), Stop);
    }

    fn spec(continue_on: &str) -> JobSpec {
        let mut s = JobSpec::default();
        s.ctl.continue_on_error = continue_on.into();
        s.ctl.error_dump = false;
        s
    }

    #[test]
    fn the_first_error_ends_the_job_and_is_kept() {
        let s = spec("none");
        let mut e = ErrorState::new(&s);
        let mut stats = JobStats::default();
        let fate = e.io_failed(Op::Write, libc::ENOSPC).unwrap();
        e.on_error(fate, libc::ENOSPC, "first".into(), &mut stats);
        assert!(e.failed() && e.ended());
        // A later uncounted error makes no message at all.
        assert_eq!(e.io_failed(Op::Read, libc::EIO), None);
        e.fail(libc::EIO, "second".into());
        assert_eq!(e.total(), 0);
        assert_eq!(e.finish(0), (libc::ENOSPC, Some("first".into())));
    }

    #[test]
    fn errors_carried_on_after_report_the_first_of_them_at_the_end() {
        let s = spec("all");
        let mut e = ErrorState::new(&s);
        let mut stats = JobStats::default();
        for (errno, msg) in [(libc::EIO, "one"), (libc::EILSEQ, "two")] {
            let fate = e.io_failed(Op::Read, errno).unwrap();
            assert_eq!(fate, CarryOn);
            e.on_error(fate, errno, msg.into(), &mut stats);
        }
        assert!(!e.ended());
        assert_eq!((e.total(), stats.first_error), (2, libc::EIO));
        e.append("(2 verify failures in all)");
        assert_eq!(
            e.finish(stats.first_error),
            (libc::EIO, Some("one (2 verify failures in all)".into()))
        );
        // When the ramp's reset cleared the first error, EIO stands in.
        let mut e = ErrorState::new(&s);
        e.on_error(CarryOn, libc::EILSEQ, "x".into(), &mut stats);
        assert_eq!(e.finish(0).0, libc::EIO);
    }

    #[test]
    fn fill_device_ends_the_job_at_enospc_without_an_error() {
        let mut s = spec("none");
        s.file.fill_device = true;
        let mut e = ErrorState::new(&s);
        assert_eq!(e.io_failed(Op::Write, libc::ENOSPC), None);
        assert!(e.ended() && !e.failed());
        assert_eq!(e.finish(0), (0, None));
        // Only a write's ENOSPC: a read's is an error.
        let mut e = ErrorState::new(&s);
        assert_eq!(e.io_failed(Op::Read, libc::ENOSPC), Some(Stop));
    }

    #[test]
    fn a_zero_byte_transfer_is_noted_once() {
        let s = spec("none");
        let mut e = ErrorState::new(&s);
        e.note_eof(4096);
        assert_eq!(e.take_eof(), 4096);
        assert_eq!(e.take_eof(), 0);
    }
}
