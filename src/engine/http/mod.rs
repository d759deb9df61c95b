//! The `http` engine: objects over HTTP(S), as fio's `http` engine names
//! them, with `iodepth` requests in flight.
//!
//! A job's `filename` is an object path (`/bucket/key` for path-style S3,
//! `/key` when `http_host` names the bucket). With `http_object_mode=block`
//! (the default) each block is its own object, `FILENAME_OFFSET_LENGTH`;
//! with `range` the file is one object and reads are ranged GETs. Writes
//! are PUTs, reads GETs (a missing object reads as zeroes, as in fio),
//! trims DELETEs (a missing object is no error). With `http_op=head` a
//! read is a HEAD of the object a GET would read (a missing object is an
//! error), with `http_op=list` one page of ListObjectsV2 over the path's
//! key as a prefix, each page going on where the last ended; neither
//! moves object data, so each counts as a read of 0 bytes.
//!
//! At `iodepth=1` each request runs inside `queue` on the job's thread.
//! Deeper, `iodepth` sender threads each keep their own connection alive
//! and take one request at a time: `commit` hands the queued requests to
//! idle senders, `reap` collects what they finished. A request allocates
//! (its URL, its signature): the network does anyway, and the job's
//! thread only passes a few words per request.
//!
//! Credentials never leave this module: requests carry them in a
//! signature (S3) or an Authorization header (WebDAV), and messages name
//! the method and the object path, never the URL.

mod creds;
mod request;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{
    Caps, Completion, Engine, EngineError, EngineKind, IoUnit, Op, OpenFile, Queued, SideCounters,
};
use crate::histogram::Histogram;
use crate::job::spec::{HttpMode, HttpOp};
use crate::job::JobSpec;
use crate::sys::RawFd;

pub use request::{Client, Listing, Removed};

/// One object path of the job (a file of its file table).
#[derive(Debug)]
pub struct Target {
    /// The path as given (`/bucket/key`), for URLs and messages.
    pub path: String,
    /// The file's size: a ranged read never asks past it.
    pub size: u64,
}

/// A buffer pointer that crosses to a sender thread.
#[derive(Clone, Copy)]
struct BufPtr(*mut u8);

// SAFETY: the pointer refers to the buffer of an I/O unit the worker
// does not touch between `commit` handing it to a sender and `reap`
// returning its completion; only that sender uses it meanwhile.
unsafe impl Send for BufPtr {}

/// One request for a sender thread.
struct Req {
    idx: u32,
    op: Op,
    target: Arc<Target>,
    offset: u64,
    len: u64,
    buf: BufPtr,
}

/// A finished request: the sender that is free again and the outcome.
struct Done {
    sender: u32,
    idx: u32,
    result: Result<u64, String>,
}

pub struct HttpEngine {
    client: Arc<Client>,
    depth: u32,
    /// What reads ask (`http_op`).
    op: HttpOp,
    /// Where the next LIST page of each path starts (at `iodepth=1`;
    /// deeper, each sender walks listings of its own).
    listing: Listing,
    files: Vec<Arc<Target>>,
    senders: Vec<Sender<Req>>,
    threads: Vec<JoinHandle<()>>,
    done_rx: Option<Receiver<Done>>,
    /// Senders with no request.
    idle: Vec<u32>,
    /// Queued, not yet committed.
    pending: Vec<Req>,
    /// The message of each failed request, by unit (cold).
    errors: HashMap<u32, String>,
    /// CPU time the senders used, by sender: user µs, system µs,
    /// context switches (each sender updates its own after each request).
    cpu: Arc<Vec<[AtomicU64; 3]>>,
    /// Times to first byte by direction (read, write, trim), recorded
    /// by whichever thread sent the request.
    ttfb: Arc<Mutex<[Histogram; 3]>>,
}

/// Records a request's time to first byte in its direction.
fn record_ttfb(ttfb: &Mutex<[Histogram; 3]>, op: Op, t: Duration) {
    let d = match op {
        Op::Read => 0,
        Op::Write => 1,
        _ => 2,
    };
    let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
    // A poisoned lock only means a sender panicked; the figures stand.
    let mut h = ttfb.lock().unwrap_or_else(|e| e.into_inner());
    h[d].record(ns);
}

/// The calling thread's CPU time (user µs, system µs) and context
/// switches. Zero where threads have no times of their own (macOS: there
/// the job's figures are the whole process's, senders included).
fn thread_cpu() -> [u64; 3] {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    {
        // SAFETY: a C struct of plain data, for which all zero bytes are valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage fills the zeroed struct.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
            return [0; 3];
        }
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        [
            us(ru.ru_utime),
            us(ru.ru_stime),
            (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
        ]
    }
    #[cfg(windows)]
    {
        let (u, k) = crate::sys::thread_times_us();
        [u, k, 0]
    }
    #[cfg(not(any(target_os = "linux", target_os = "freebsd", windows)))]
    {
        [0; 3]
    }
}

/// Checks before the run that a job can be sent: its object paths and
/// its credentials (S3). One line naming the problem.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    let o = &spec.engine.http;
    if spec.file.filenames.is_empty()
        && spec.file.filename_format != JobSpec::default().file.filename_format
    {
        return Err(EngineError::Unfit(
            "filename_format with ioengine=http is not supported by iomark: give the object path with filename= (/bucket/key for path-style S3)".into(),
        ));
    }
    if spec.file.filenames.is_empty() {
        return Err(EngineError::Unfit(
            "ioengine=http needs filename= the object path, starting with '/' (/bucket/key for path-style S3)".into(),
        ));
    }
    for p in &spec.file.filenames {
        if !p.starts_with('/') || p.len() < 2 {
            return Err(EngineError::Unfit(format!(
                "object path '{p}' must start with '/' (/bucket/key for path-style S3, /key when http_host names the bucket)"
            )));
        }
        if o.mode == HttpMode::S3 && request::split_bucket(p).is_none() {
            return Err(EngineError::Unfit(format!(
                "object path '{p}' names no object: S3 needs /bucket/key (or /key with the bucket in http_host)"
            )));
        }
    }
    if o.mode == HttpMode::S3 {
        creds::resolve(o).map_err(EngineError::Unfit)?;
    }
    if let Some(m) = o.op.method() {
        op_fits(spec, m)?;
    }
    if o.user.is_some() != o.pass.is_some() {
        return Err(EngineError::Unfit(
            "http_user and http_pass go together: give both or neither".into(),
        ));
    }
    consent(spec)
}

/// `http_op=head|list`: reads only, no data to check, LIST on S3 only.
fn op_fits(spec: &JobSpec, method: &str) -> Result<(), EngineError> {
    let o = &spec.engine.http;
    let op = method.to_ascii_lowercase();
    if spec.io.rw.writes() {
        return Err(EngineError::Unfit(format!(
            "http_op={op} makes the job's reads {method} requests: give it a job that only reads (rw=read or randread), not rw={}",
            spec.io.rw.name()
        )));
    }
    if spec.verify.enabled() {
        return Err(EngineError::Unfit(format!(
            "http_op={op} moves no object data, so there is nothing to verify: drop verify="
        )));
    }
    if o.op == HttpOp::List && o.mode != HttpMode::S3 {
        return Err(EngineError::Unfit(
            "http_op=list sends ListObjectsV2, an S3 request: it needs http_mode=s3".into(),
        ));
    }
    Ok(())
}

/// Consent: a job that writes or trims S3 objects may overwrite or
/// delete only objects iomark wrote (they carry its mark), unless
/// `allow_destroy_data=1`. Asks the server before the run.
fn consent(spec: &JobSpec) -> Result<(), EngineError> {
    let o = &spec.engine.http;
    if o.mode != HttpMode::S3
        || !spec.io.rw.writes()
        || spec.verify.verify_only
        || spec.file.allow_destroy_data
    {
        return Ok(());
    }
    let client = Client::new(spec).map_err(EngineError::Unfit)?;
    for p in &spec.file.filenames {
        if let Some(found) = client.foreign_object(p).map_err(EngineError::Unfit)? {
            let verb = if spec.io.rw.has(crate::job::spec::Ddir::Write) {
                "overwrite"
            } else {
                "delete"
            };
            return Err(EngineError::Unfit(format!(
                "object {found} was not written by iomark: refusing to {verb} it (allow_destroy_data=1 allows it)"
            )));
        }
    }
    Ok(())
}

impl HttpEngine {
    pub fn new(spec: &JobSpec) -> Result<Self, EngineError> {
        let client = Client::new(spec).map_err(EngineError::Unfit)?;
        let depth = spec.io.iodepth.max(1);
        Ok(HttpEngine {
            client: Arc::new(client),
            depth,
            op: spec.engine.http.op,
            listing: Listing::default(),
            files: Vec::new(),
            senders: Vec::new(),
            threads: Vec::new(),
            done_rx: None,
            idle: Vec::with_capacity(depth as usize),
            pending: Vec::with_capacity(depth as usize),
            errors: HashMap::new(),
            cpu: Arc::new(Vec::new()),
            ttfb: Arc::new(Mutex::new(std::array::from_fn(|_| Histogram::empty()))),
        })
    }

    fn start_senders(&mut self) -> io::Result<()> {
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        self.cpu = Arc::new(
            (0..self.depth)
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
        );
        for s in 0..self.depth {
            let (tx, rx) = mpsc::channel::<Req>();
            let client = Arc::clone(&self.client);
            let cpu = Arc::clone(&self.cpu);
            let ttfb = Arc::clone(&self.ttfb);
            let done = done_tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("iomark-http-{s}"))
                .spawn(move || {
                    let mine = &cpu[s as usize];
                    let start = thread_cpu();
                    let mut listing = Listing::default();
                    while let Ok(r) = rx.recv() {
                        // SAFETY: see `BufPtr`: the unit's buffer holds
                        // `len` bytes and is this request's alone until
                        // its completion is reaped.
                        let buf =
                            unsafe { std::slice::from_raw_parts_mut(r.buf.0, r.len as usize) };
                        let result = client
                            .execute(r.op, &r.target, r.offset, buf, &mut listing)
                            .map(|(n, first)| {
                                record_ttfb(&ttfb, r.op, first);
                                n
                            });
                        // Counted before the completion is sent: the job
                        // reads these once its last request is reaped.
                        let now = thread_cpu();
                        for i in 0..3 {
                            mine[i].store(now[i].saturating_sub(start[i]), Ordering::Relaxed);
                        }
                        if done
                            .send(Done {
                                sender: s,
                                idx: r.idx,
                                result,
                            })
                            .is_err()
                        {
                            return;
                        }
                    }
                })?;
            self.senders.push(tx);
            self.threads.push(t);
            self.idle.push(s);
        }
        self.done_rx = Some(done_rx);
        Ok(())
    }

    fn outcome(&mut self, idx: u32, r: Result<u64, String>) -> i64 {
        match r {
            Ok(n) => n as i64,
            Err(m) => {
                self.errors.insert(idx, m);
                -(libc::EIO as i64)
            }
        }
    }
}

impl Drop for HttpEngine {
    fn drop(&mut self) {
        // Closing the request channels ends the senders once their
        // current request is done (each has a deadline).
        self.senders.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Engine for HttpEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Http
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: self.depth <= 1,
            // A HEAD or a LIST page moves no object data: its result
            // (0) is the whole of it.
            payload_results: self.op != HttpOp::Data,
            ..EngineKind::Http.info().caps
        }
    }

    fn init(&mut self, _depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        if self.depth > 1 && self.senders.is_empty() {
            self.start_senders()?;
        }
        Ok(())
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        let path = f.path.to_str().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "object path is not UTF-8")
        })?;
        if let Some(i) = self.files.iter().position(|t| t.path == path) {
            return Ok((-1, i));
        }
        self.files.push(Arc::new(Target {
            path: path.to_string(),
            size: f.size,
        }));
        Ok((-1, self.files.len() - 1))
    }

    fn close(&mut self, _fd: RawFd, _data: usize, _size: u64) -> io::Result<()> {
        Ok(())
    }

    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        if !io.op.is_data() {
            // Objects have no cache to flush: a sync is done at once.
            io.result = 0;
            return Queued::Completed;
        }
        let Some(target) = self.files.get(io.file_data).cloned() else {
            io.result = -(libc::EBADF as i64);
            return Queued::Completed;
        };
        if self.depth <= 1 {
            let (op, offset) = (io.op, io.offset);
            let r = self
                .client
                .execute(op, &target, offset, io.data(), &mut self.listing)
                .map(|(n, first)| {
                    record_ttfb(&self.ttfb, op, first);
                    n
                });
            io.result = self.outcome(io.idx, r);
            return Queued::Completed;
        }
        if self.pending.len() >= self.idle.len() {
            return Queued::Busy;
        }
        self.pending.push(Req {
            idx: io.idx,
            op: io.op,
            target,
            offset: io.offset,
            len: io.len(),
            buf: BufPtr(io.buf_ptr()),
        });
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<u32> {
        let n = self.pending.len() as u32;
        for r in self.pending.drain(..) {
            let s = self.idle.pop().expect("a sender per queued request");
            self.senders[s as usize]
                .send(r)
                .map_err(|_| io::Error::other("an http sender thread ended"))?;
        }
        Ok(n)
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let Some(rx) = self.done_rx.take() else {
            return Ok(0);
        };
        let max = max.max(1) as usize;
        // Never wait for more than is in flight.
        let in_flight = self.depth as usize - self.idle.len();
        let min = (min as usize).min(in_flight);
        while out.len() < max {
            let d = if out.len() < min {
                rx.recv().ok()
            } else {
                rx.try_recv().ok()
            };
            let Some(d) = d else { break };
            self.idle.push(d.sender);
            let result = self.outcome(d.idx, d.result);
            out.push(Completion { idx: d.idx, result });
        }
        self.done_rx = Some(rx);
        Ok(out.len() as u32)
    }

    fn pending(&self) -> u32 {
        self.pending.len() as u32
    }

    fn error_detail(&self, idx: u32) -> Option<String> {
        self.errors.get(&idx).cloned()
    }

    fn side_counters(&self) -> SideCounters {
        let sum = |i: usize| -> u64 { self.cpu.iter().map(|c| c[i].load(Ordering::Relaxed)).sum() };
        SideCounters {
            usr_us: sum(0),
            sys_us: sum(1),
            ctx: sum(2),
            retries: self.client.retried.load(Ordering::Relaxed),
            listed: self.client.listed.load(Ordering::Relaxed),
        }
    }

    fn first_byte(&self) -> Option<super::FirstBytes> {
        Some(Arc::clone(&self.ttfb))
    }

    fn restart_side(&mut self) {
        let mut h = self.ttfb.lock().unwrap_or_else(|e| e.into_inner());
        h.iter_mut().for_each(Histogram::clear);
        self.client.listed.store(0, Ordering::Relaxed);
    }
}

/// One `http_verbose` line on standard error, control characters escaped
/// (object names are the user's).
fn say(line: &str) {
    use std::io::Write;
    let text = format!("{}\n", crate::job::error::printable(line));
    let _ = io::stderr().lock().write_all(text.as_bytes());
}
