//! The worker's side of verification: stamping verified writes,
//! recording them, reading them back (after each loop, or every
//! `verify_backlog` writes), checking reads, and reporting failures
//! (`verify_fatal`, `verify_dump`, `continue_on_error`).
//!
//! The format and the checks are `workload::verify`'s. Per I/O this only
//! fills and checks buffers and records a written block in a store
//! reserved at setup: no allocation, lock or system call unless a check
//! fails (describing and dumping a failure allocates and writes files).

use super::{PassEnd, Worker};
use crate::engine::{Op, Queued};
use crate::job::spec::{ContinueOn, Ddir, JobSpec, VerifyKind};
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
    backlog: u64,
    batch: u64,
    /// Blocks the backlog still asks to check.
    owed: u64,
    /// Time-based: the files start over in rounds.
    rounds: bool,
    /// The workload's pass count when the last round began.
    pass: u32,
    /// Per I/O unit: how its read is checked, the write number it holds.
    unit_check: Vec<Check>,
    unit_numberio: Vec<u64>,
    next_numberio: u64,
    /// When the job started (header time stamps count from here).
    t0: u64,
    fatal: bool,
    dump: bool,
    /// What a verify failure does to the job.
    fate: super::ErrorFate,
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
            backlog,
            batch,
            owed: 0,
            rounds: spec.time.time_based,
            // The first round starts with the job's first loop.
            pass: workload.passes().wrapping_add(1),
            unit_check: vec![Check::None; depth as usize],
            unit_numberio: vec![0; depth as usize],
            next_numberio: 0,
            t0: 0,
            fatal: o.verify_fatal,
            dump: o.verify_dump,
            fate: match super::error_fate(
                continue_on,
                &spec.ctl.ignore_error,
                Op::Read,
                libc::EILSEQ,
            ) {
                super::ErrorFate::CarryOn if o.verify_fatal => super::ErrorFate::CountAndStop,
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
        self.backlog > 0
    }

    /// What to add to the job's error message at the end.
    pub(super) fn summary(&self) -> Option<String> {
        (self.failures > 1).then(|| format!("({} verify failures in all)", self.failures))
    }
}

impl Worker<'_> {
    /// Fills a write with verification data and sets how a read's
    /// contents are checked. Returns false when the buffer filler must
    /// make the write's contents instead.
    #[inline]
    pub(super) fn verify_before_queue(
        &mut self,
        idx: u32,
        next: &NextIo,
        now: u64,
        retry: bool,
    ) -> bool {
        let Some(vs) = self.vfy.as_deref_mut() else {
            return false;
        };
        let i = idx as usize;
        vs.unit_check[i] = if next.op == Op::Read && vs.check_reads && !vs.diskless {
            Check::Header
        } else {
            Check::None
        };
        if next.op != Op::Write || !vs.v.stamps() {
            return false;
        }
        let numberio = if retry {
            vs.next_numberio - 1
        } else {
            vs.next_numberio += 1;
            vs.next_numberio - 1
        };
        vs.unit_numberio[i] = numberio;
        let s = Stamp {
            seed: vs.v.seed_for(numberio),
            numberio,
            time_ns: now.saturating_sub(vs.t0),
        };
        let u = &mut self.units[i];
        // SAFETY: the unit's buffer holds `len` <= buf_cap bytes.
        vs.v.stamp(unsafe { u.data() }, next.offset, s);
        // The write's latency starts once its contents are ready.
        let t = self.clock.now();
        u.start_ns = t;
        u.issue_ns = t;
        true
    }

    /// After a data I/O completed with `bytes`: records a verified write,
    /// checks a read.
    #[inline]
    pub(super) fn verify_completed(&mut self, idx: u32, bytes: u64) {
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        let i = idx as usize;
        let u = &self.units[i];
        match u.op {
            Op::Write if vs.log_writes && bytes == u.len => {
                vs.history.add(Piece::new(
                    u.file,
                    u.offset,
                    u.len as u32,
                    vs.unit_numberio[i],
                ));
                let pending = vs.history.pending() as u64;
                if vs.backlog > 0 && vs.owed == 0 && pending >= vs.backlog {
                    vs.owed = vs.batch;
                }
                let pass = self.workload.passes();
                if vs.rounds && vs.backlog > 0 && pass != vs.pass {
                    // A time-based job's files started over: check what
                    // the last round left before it is all rewritten.
                    vs.pass = pass;
                    vs.owed = vs.owed.max(pending);
                }
            }
            Op::Read if vs.unit_check[i] != Check::None => {
                let check = vs.unit_check[i];
                vs.unit_check[i] = Check::None;
                self.check_read(idx, check, bytes);
            }
            _ => {}
        }
    }

    fn check_read(&mut self, idx: u32, check: Check, bytes: u64) {
        let i = idx as usize;
        let (file, offset, len) = {
            let u = &self.units[i];
            (u.file, u.offset, u.len)
        };
        if bytes < len {
            let msg = format!(
                "verify: short read in '{}' at offset {offset}: {bytes} of {len} bytes",
                self.job.files[file as usize].path.display()
            );
            self.fail(libc::EIO, msg);
            return;
        }
        let job = self.job;
        let path = &job.files[file as usize].path;
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        let exp = Expect {
            offset,
            write: match check {
                Check::Written(seed, n) => Some((seed, n)),
                _ => None,
            },
        };
        // SAFETY: the unit's buffer holds `len` <= buf_cap bytes.
        let buf = unsafe { self.units[i].data() };
        let fatal = vs.fatal;
        let mut bad: Vec<Mismatch> = Vec::new();
        let n = vs.v.check(buf, &exp, |m| {
            bad.push(m.clone());
            !fatal
        });
        if n == 0 {
            return;
        }
        vs.failures += n as u64;
        let m = &bad[0];
        let mut msg = format!(
            "verify failed in '{}' at offset {} (length {}): {}",
            path.display(),
            offset + m.at as u64,
            m.len,
            m.problem
        );
        if vs.dump {
            let names: Vec<String> = bad
                .iter()
                .flat_map(|m| dump(&vs.v, buf, &exp, m, path, offset))
                .collect();
            if !names.is_empty() {
                msg.push_str(&format!(" (saved as {})", names.join(", ")));
            }
        }
        let fate = vs.fate;
        self.on_error(fate, libc::EILSEQ, msg);
    }

    /// `verify_backlog`: checks the blocks it asks for, once the writes
    /// in flight are done.
    #[inline]
    pub(super) fn backlog_due(&self) -> bool {
        self.vfy
            .as_deref()
            .is_some_and(|vs| vs.owed > 0 && vs.history.pending() > 0)
    }

    pub(super) fn run_backlog(&mut self) {
        self.drain();
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        vs.history.arrange();
        while self.error == 0 {
            let Some(vs) = self.vfy.as_deref_mut() else {
                return;
            };
            if vs.owed == 0 {
                break;
            }
            let Some(p) = vs.history.take_next() else {
                break;
            };
            vs.owed -= 1;
            let now = self.clock.now();
            if self.stopping(now) {
                break;
            }
            self.issue_check(p, true);
        }
        self.drain();
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
    pub(super) fn read_back(&mut self) {
        let Some(vs) = self.vfy.as_deref_mut() else {
            return;
        };
        if !(vs.after_write || vs.dry_run) || vs.history.pending() == 0 {
            return;
        }
        self.drain();
        let t0 = self.clock.now();
        if self.stopping(t0) {
            return;
        }
        let spec = &self.job.spec;
        if spec.sync.invalidate && !self.engine.caps().diskless {
            super::files::invalidate(self.job, &self.files);
        }
        let written = !self.vfy.as_deref().is_some_and(|vs| vs.dry_run);
        if let Some(vs) = self.vfy.as_deref_mut() {
            vs.history.arrange();
        }
        while self.error == 0 {
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
            self.issue_check(p, written);
        }
        self.drain();
        let end = self.clock.now();
        if let Some(vs) = self.vfy.as_deref_mut() {
            vs.history.clear();
            vs.verify_ns += end.saturating_sub(t0);
        }
    }

    /// Queues the read of one written block, to be checked on completion.
    fn issue_check(&mut self, p: Piece, written: bool) {
        let f = p.file as usize;
        if self.files[f].fd < 0 && self.files[f].data == 0 && !self.engine.caps().diskless {
            self.drain();
            match super::files::open_one(self.job, self.engine.as_mut(), f, self.open_flags) {
                Ok(of) => self.files[f] = of,
                Err(e) => {
                    self.fail(e.errno, e.msg);
                    return;
                }
            }
        }
        let next = NextIo {
            op: Op::Read,
            file: p.file,
            offset: p.offset,
            len: p.len as u64,
        };
        loop {
            let idx = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.commit();
                    self.reap(self.complete_min.max(1));
                    if self.error != 0 {
                        return;
                    }
                    continue;
                }
            };
            let now = self.clock.now();
            self.prep(idx, &next, now);
            if let Some(vs) = self.vfy.as_deref_mut() {
                vs.unit_check[idx as usize] = if vs.diskless {
                    Check::None
                } else if written {
                    Check::Written(vs.v.seed_for(p.numberio), p.numberio as u16)
                } else {
                    Check::Header
                };
            }
            if let Some(log) = self.iolog.as_mut() {
                log.io(Op::Read, p.file, p.offset, p.len as u64, now);
            }
            let r = {
                let u = &mut self.units[idx as usize];
                self.engine.queue(u)
            };
            match r {
                Queued::Completed => {
                    self.complete_inline(idx);
                }
                Queued::Queued => {
                    self.busy[idx as usize] = true;
                    self.uncommitted.push(idx);
                    if self.uncommitted.len() as u32 >= self.batch_submit
                        || self.inflight + self.uncommitted.len() as u32 >= self.depth
                    {
                        self.commit();
                    }
                    if self.inflight + self.uncommitted.len() as u32 >= self.depth {
                        self.reap(self.complete_min.max(1));
                    }
                }
                Queued::Busy => {
                    self.free.push(idx);
                    self.commit();
                    if self.inflight == 0 {
                        self.fail(
                            libc::EIO,
                            format!(
                                "{} engine refused an I/O with nothing in flight",
                                self.engine.name()
                            ),
                        );
                        return;
                    }
                    self.reap(1);
                    continue;
                }
            }
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
        if std::fs::write(&name, data).is_ok() {
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
