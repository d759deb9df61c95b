//! The worker's side of verification: stamping verified writes,
//! recording them, reading them back (after each loop, or every
//! `verify_backlog` writes), checking reads, and reporting failures
//! (`verify_fatal`, `verify_dump`, `continue_on_error`).
//!
//! The format and the checks are `workload::verify`'s. Per I/O this only
//! fills and checks buffers and records a written block in a store
//! reserved at setup: no allocation, lock or system call unless a check
//! fails (describing and dumping a failure allocates and writes files).

use super::errors::{error_fate, ErrorFate};
use super::queue::{IoQueue, Issued};
use super::{PassEnd, Worker};
use crate::engine::{IoUnit, Op};
use crate::job::spec::{ContinueOn, Ddir, JobSpec, VerifyKind};
use crate::run::clock::Clock;
use crate::workload::verify::history::{History, Piece};
use crate::workload::verify::{Expect, Mismatch, Stamp, Verifier};
use crate::workload::{Limits, NextIo, Workload};

/// How the read in an I/O unit is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Check {
    None,
    /// Offset and length only (read jobs, `verify_only`).
    Header,
    /// A block this run wrote: also its seed and write number.
    Written(u64, u16),
}

/// Largest number of written blocks reserved for at setup.
const MAX_RESERVE: u64 = 1 << 22;

/// `verify_backlog`: written blocks are read back as the job goes,
/// `batch` of them once `every` wait.
struct Backlog {
    /// 0: no backlog.
    every: u64,
    batch: u64,
    /// Blocks the backlog still asks to check.
    owed: u64,
    /// Time-based: the files start over in rounds.
    rounds: bool,
    /// The workload's pass count when the last round began.
    pass: u32,
}

impl Backlog {
    /// A write was recorded; `pending` wait, the workload is in `pass`.
    #[inline]
    fn written(&mut self, pending: u64, pass: u32) {
        if self.every == 0 {
            return;
        }
        if self.owed == 0 && pending >= self.every {
            self.owed = self.batch;
        }
        if self.rounds && pass != self.pass {
            // A time-based job's files started over: check what the last
            // round left before it is all rewritten.
            self.pass = pass;
            self.owed = self.owed.max(pending);
        }
    }
}

pub(super) struct VerifyState {
    v: Verifier,
    history: History,
    /// Written blocks are read back after each loop (`do_verify`).
    after_write: bool,
    /// A block may be written more than once while it waits.
    repeats: bool,
    /// Completed writes are recorded for that.
    log_writes: bool,
    /// `verify_only` of a writing job: the writes are only worked out.
    dry_run: bool,
    /// The main workload's reads are checked (read jobs).
    check_reads: bool,
    /// The engine moves no data: checks pretend to pass.
    diskless: bool,
    backlog: Backlog,
    /// Per I/O unit: how its read is checked, the write number it holds.
    unit_check: Vec<Check>,
    unit_numberio: Vec<u64>,
    next_numberio: u64,
    /// When the job started (header time stamps count from here).
    t0: u64,
    fatal: bool,
    dump: bool,
    /// What a verify failure does to the job.
    fate: ErrorFate,
    /// Failed intervals so far.
    failures: u64,
    /// Time spent reading back after the write phase.
    pub(super) verify_ns: u64,
}

impl VerifyState {
    /// Verification state for a job, `None` when it does not verify.
    pub(super) fn new(
        spec: &JobSpec,
        workload: &Workload,
        limits: Limits,
        number: u16,
        seed: u64,
        depth: u32,
        diskless: bool,
    ) -> Option<Box<VerifyState>> {
        let v = Verifier::new(spec, number, seed)?;
        let o = &spec.verify;
        let writes = spec.io.rw.has(Ddir::Write);
        let after_write = writes && o.do_verify;
        let dry_run = writes && o.verify_only;
        let backlog = if after_write && !dry_run {
            o.verify_backlog
        } else {
            0
        };
        let batch = match o.verify_backlog_batch {
            0 => backlog,
            b => b,
        };
        // A time-based job never gets to the read-back: keep nothing
        // unless the backlog checks as it goes.
        let log_writes = after_write && !dry_run && (!spec.time.time_based || backlog > 0);
        let capacity = if backlog > 0 {
            backlog + batch.min(backlog) + depth as u64
        } else if log_writes || dry_run {
            let bs = spec.io.bs[Ddir::Write.idx()].min().max(1);
            (limits.bytes / bs + depth as u64).min(MAX_RESERVE)
        } else {
            0
        };
        let continue_on = ContinueOn::from_name(&spec.ctl.continue_on_error);
        let sorted = !workload.writes_never_repeat();
        let repeats = sorted || spec.time.time_based;
        Some(Box::new(VerifyState {
            history: History::new(sorted, backlog > 0 && repeats, capacity as usize),
            after_write,
            repeats,
            log_writes,
            dry_run,
            check_reads: !writes && v.kind() != VerifyKind::Null,
            diskless,
            backlog: Backlog {
                every: backlog,
                batch,
                owed: 0,
                rounds: spec.time.time_based,
                // The first round starts with the job's first loop.
                pass: workload.passes().wrapping_add(1),
            },
            unit_check: vec![Check::None; depth as usize],
            unit_numberio: vec![0; depth as usize],
            next_numberio: 0,
            t0: 0,
            fatal: o.verify_fatal,
            dump: o.verify_dump,
            fate: match error_fate(continue_on, &spec.ctl.ignore_error, Op::Read, libc::EILSEQ) {
                ErrorFate::CarryOn if o.verify_fatal => ErrorFate::CountAndStop,
                f => f,
            },
            failures: 0,
            verify_ns: 0,
            v,
        }))
    }

    /// `verify_only` of a writing job: nothing is written.
    pub(super) fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// The job skips `io_size`'s extra passes: they would overwrite the
    /// blocks before they are read back.
    pub(super) fn reads_back(&self) -> bool {
        self.after_write || self.dry_run
    }

    pub(super) fn start(&mut self, now: u64) {
        self.t0 = now;
    }

    /// Whether writes to a block still in flight must wait (as
    /// `serialize_overlap`): blocks can be written again (time-based
    /// rounds, offsets that repeat) and an overlapping pair could land in
    /// either order, so the check would not know what to expect.
    pub(super) fn needs_serial_writes(&self) -> bool {
        self.log_writes && self.repeats
    }

    /// Whether the backlog read blocks back during the write phase.
    pub(super) fn reads_while_writing(&self) -> bool {
        self.backlog.every > 0
    }

    /// What to add to the job's error message at the end.
    pub(super) fn summary(&self) -> Option<String> {
        (self.failures > 1).then(|| format!("({} verify failures in all)", self.failures))
    }
}

/// What a failed check does to the job.
pub(super) enum Failure {
    /// The read came back short: the job fails with EIO.
    Short(String),
    /// The contents differ: an EILSEQ, with the job's verify fate.
    Mismatch(ErrorFate, String),
}

/// Per I/O unit: stamping a write, recording it, checking a read.
impl VerifyState {
    /// Fills a write in `u` with verification data and sets how a read's
    /// contents are checked. Returns false when the buffer filler must
    /// make the write's contents instead.
    #[inline]
    pub(super) fn before_queue(
        &mut self,
        u: &mut IoUnit,
        next: &NextIo,
        now: u64,
        retry: bool,
        clock: &mut Clock,
    ) -> bool {
        let i = u.idx as usize;
        self.unit_check[i] = if next.op == Op::Read && self.check_reads && !self.diskless {
            Check::Header
        } else {
            Check::None
        };
        if next.op != Op::Write || !self.v.stamps() {
            return false;
        }
        let numberio = if retry {
            self.next_numberio - 1
        } else {
            self.next_numberio += 1;
            self.next_numberio - 1
        };
        self.unit_numberio[i] = numberio;
        let s = Stamp {
            seed: self.v.seed_for(numberio),
            numberio,
            time_ns: now.saturating_sub(self.t0),
        };
        self.v.stamp(u.data(), next.offset, s);
        // The write's latency starts once its contents are ready.
        let t = clock.now();
        u.start_ns = t;
        u.issue_ns = t;
        true
    }

    /// The read-back of block `p` goes in unit `idx`: how to check it.
    fn expect_read(&mut self, idx: u32, p: &Piece, written: bool) {
        self.unit_check[idx as usize] = if self.diskless {
            Check::None
        } else if written {
            Check::Written(self.v.seed_for(p.numberio), p.numberio as u16)
        } else {
            Check::Header
        };
    }

    /// After a data I/O in `u` completed with `bytes`: records a verified
    /// write; returns how a read is to be checked.
    #[inline]
    fn completed(&mut self, u: &IoUnit, bytes: u64, workload: &Workload) -> Check {
        let i = u.idx as usize;
        match u.op {
            Op::Write if self.log_writes && bytes == u.len() => {
                self.history.add(Piece::new(
                    u.file,
                    u.offset,
                    u.len() as u32,
                    self.unit_numberio[i],
                ));
                self.backlog
                    .written(self.history.pending() as u64, workload.passes());
                Check::None
            }
            Op::Read => std::mem::replace(&mut self.unit_check[i], Check::None),
            _ => Check::None,
        }
    }

    /// Checks the read in `u` of `path`, of which `bytes` arrived.
    fn check_read(
        &mut self,
        u: &mut IoUnit,
        check: Check,
        bytes: u64,
        path: &std::path::Path,
    ) -> Result<(), Failure> {
        let (offset, len) = (u.offset, u.len());
        if bytes < len {
            return Err(Failure::Short(format!(
                "verify: short read in '{}' at offset {offset}: {bytes} of {len} bytes",
                path.display()
            )));
        }
        let exp = Expect {
            offset,
            write: match check {
                Check::Written(seed, n) => Some((seed, n)),
                _ => None,
            },
        };
        let buf = u.data();
        let fatal = self.fatal;
        let mut bad: Vec<Mismatch> = Vec::new();
        let n = self.v.check(buf, &exp, |m| {
            bad.push(m.clone());
            !fatal
        });
        if n == 0 {
            return Ok(());
        }
        self.failures += n as u64;
        let m = &bad[0];
        let mut msg = format!(
            "verify failed in '{}' at offset {} (length {}): {}",
            path.display(),
            offset + m.at as u64,
            m.len,
            m.problem
        );
        if self.dump {
            let names: Vec<String> = bad
                .iter()
                .flat_map(|m| dump(&self.v, buf, &exp, m, path, offset))
                .collect();
            if !names.is_empty() {
                msg.push_str(&format!(" (saved as {})", names.join(", ")));
            }
        }
        Err(Failure::Mismatch(self.fate, msg))
    }

    /// `verify_backlog`: the next block it still asks to check.
    fn take_owed(&mut self) -> Option<Piece> {
        if self.backlog.owed == 0 {
            return None;
        }
        let p = self.history.take_next()?;
        self.backlog.owed -= 1;
        Some(p)
    }
}

/// The worker's side: when verification reads, through the I/O queue.
impl Worker<'_> {
    /// After a data I/O completed with `bytes`: records a verified write,
    /// checks a read.
    #[inline]
    pub(super) fn verify_completed(&mut self, q: &mut IoQueue, idx: u32, bytes: u64) {
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        let u = q.unit_mut(idx);
        let check = vs.completed(u, bytes, &self.workload);
        if check == Check::None {
            return;
        }
        let path = &self.job.files[u.file as usize].path;
        match vs.check_read(u, check, bytes, path) {
            Ok(()) => {}
            Err(Failure::Short(msg)) => self.err.fail(libc::EIO, msg),
            Err(Failure::Mismatch(fate, msg)) => {
                self.err.on_error(fate, libc::EILSEQ, msg, &mut self.stats)
            }
        }
    }

    /// `verify_backlog`: checks the blocks it asks for, once the writes
    /// in flight are done.
    #[inline]
    pub(super) fn backlog_due(&self) -> bool {
        self.vfy
            .as_deref()
            .is_some_and(|vs| vs.backlog.owed > 0 && vs.history.pending() > 0)
    }

    pub(super) fn run_backlog(&mut self, q: &mut IoQueue) {
        q.drain(self);
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        vs.history.arrange();
        while !self.err.failed() {
            let Some(p) = self.vfy.as_deref_mut().and_then(VerifyState::take_owed) else {
                break;
            };
            let now = self.clock.now();
            if self.stopping(now) {
                break;
            }
            self.issue_check(q, p, true);
        }
        q.drain(self);
    }

    /// `verify_only` of a writing job: works out the pass's writes
    /// without doing them.
    pub(super) fn dry_run_pass(&mut self) -> PassEnd {
        while let Ok(next) = self.workload.next_io() {
            self.workload.file_events().clear();
            if next.op != Op::Write {
                continue;
            }
            if let Some(vs) = self.vfy.as_deref_mut() {
                let n = vs.next_numberio;
                vs.next_numberio += 1;
                vs.history
                    .add(Piece::new(next.file, next.offset, next.len as u32, n));
            }
        }
        self.workload.file_events().clear();
        PassEnd::Done
    }

    /// Reads back and checks what the pass wrote (`do_verify`, or the
    /// blocks `verify_only` worked out). Skipped when the job is stopping.
    pub(super) fn read_back(&mut self, q: &mut IoQueue) {
        let Some(vs) = self.vfy.as_deref() else {
            return;
        };
        if !(vs.after_write || vs.dry_run) || vs.history.pending() == 0 {
            return;
        }
        let written = !vs.dry_run;
        q.drain(self);
        let t0 = self.clock.now();
        if self.stopping(t0) {
            return;
        }
        if self.job.spec.sync.invalidate && !q.engine().caps().diskless {
            crate::run::files::invalidate(self.job, &self.files.list);
        }
        if let Some(vs) = self.vfy.as_deref_mut() {
            vs.history.arrange();
        }
        // As fio's, the priority draws start over for the read-back.
        q.restart_prio();
        while !self.err.failed() {
            let Some(p) = self
                .vfy
                .as_deref_mut()
                .and_then(|vs| vs.history.take_next())
            else {
                break;
            };
            let now = self.clock.now();
            if self.stopping(now) {
                break;
            }
            self.issue_check(q, p, written);
        }
        q.drain(self);
        let end = self.clock.now();
        if let Some(vs) = self.vfy.as_deref_mut() {
            vs.history.clear();
            vs.verify_ns += end.saturating_sub(t0);
        }
    }

    /// Queues the read of one written block, to be checked on completion.
    fn issue_check(&mut self, q: &mut IoQueue, p: Piece, written: bool) {
        let f = p.file as usize;
        let file = &self.files.list[f];
        if file.fd < 0 && file.data == 0 && !q.engine().caps().diskless {
            q.drain(self);
            if !self.reopen(q, f) {
                return;
            }
        }
        let next = NextIo {
            op: Op::Read,
            file: p.file,
            offset: p.offset,
            len: p.len as u64,
        };
        let mut logged = false;
        loop {
            let Some(idx) = q.take_unit(self) else {
                if self.err.failed() {
                    return;
                }
                continue;
            };
            let now = self.clock.now();
            q.prep(idx, &next, &self.files.list[f], now);
            if let Some(vs) = self.vfy.as_deref_mut() {
                vs.expect_read(idx, &p, written);
            }
            if let Some(log) = self.iolog.as_mut().filter(|_| !logged) {
                log.io(Op::Read, p.file, p.offset, p.len as u64, now);
                logged = true;
            }
            match q.issue(idx, self) {
                Issued::Busy => continue,
                Issued::Refused => return,
                Issued::Queued | Issued::Completed(_) => {}
            }
            q.keep_depth(self);
            return;
        }
    }
}

/// Saves the received and expected contents of a failed interval in the
/// current directory; returns the names written.
fn dump(
    v: &Verifier,
    buf: &[u8],
    exp: &Expect,
    m: &Mismatch,
    path: &std::path::Path,
    offset: u64,
) -> Vec<String> {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "block".into());
    let stem = format!("{base}.{}", offset + m.at as u64);
    let mut out = Vec::new();
    let mut save = |name: String, data: &[u8]| {
        // Never through a link or a hard link (see `crate::outfile`).
        if crate::outfile::write_new(std::path::Path::new(&name), data).is_ok() {
            out.push(name);
        }
    };
    let received = v.received(buf, m);
    match v.expected(buf, exp, m) {
        Some(expected) => {
            save(format!("{stem}.received"), &received);
            save(format!("{stem}.expected"), &expected);
        }
        None => save(format!("{stem}.hdr_fail"), &received),
    }
    out
}
