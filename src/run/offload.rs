//! `io_submit_mode=offload`: the job thread keeps its schedule (rate,
//! think time) and hands each I/O to one of `iodepth` submitter threads,
//! each driving its own instance of the job's engine one I/O at a time.
//! A slow device then delays completions, not submissions, so latency is
//! counted from when the job meant to issue the I/O.
//!
//! It presents itself to the worker as an engine: `queue` hands the I/O
//! to an idle submitter, `reap` collects what they finished. Channels are
//! bounded (no allocation per I/O); waiting for a submitter or a
//! completion blocks on the channel. Engines whose state is tied to one
//! queue (registered buffers or files, polling threads, memory maps, file
//! operations) cannot be split this way and are refused.

use crate::sys::RawFd;
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

use crate::engine::{
    self, file, Caps, Completion, Engine, EngineError, EngineKind, IoPrio, IoUnit, Op, OpenFile,
    Queued,
};
use crate::job::spec::{JobSpec, SubmitMode};

/// One I/O for a submitter (the unit's fields, buffer by address).
#[derive(Clone, Copy)]
struct Work {
    idx: u32,
    op: Op,
    fd: RawFd,
    offset: u64,
    len: u64,
    buf: usize,
    buf_cap: u64,
    sfr_flags: u32,
    file_data: usize,
    prio: IoPrio,
}

/// A finished I/O and the submitter that is free again.
struct Done {
    idx: u32,
    result: i64,
    worker: u32,
}

pub struct OffloadEngine {
    kind: EngineKind,
    caps: Caps,
    txs: Vec<SyncSender<Work>>,
    idle: Vec<u32>,
    done: Receiver<Done>,
    threads: Vec<JoinHandle<()>>,
}

/// Why a job's engine cannot be used with offload, if it cannot: each
/// submitter opens the files on its own engine, so an engine that keeps
/// per-file state of its own (the file-op engines' measured open, mmap's
/// mapping of a fully laid-out file) or registers buffers cannot be
/// split over submitters.
fn refuse(spec: &JobSpec, caps: Caps) -> Option<String> {
    let e = &spec.engine;
    if caps.file_op || !spec.io.ioengine.info().extends_files() || caps.registers_buffers {
        Some(format!(
            "io_submit_mode=offload does not work with ioengine={}",
            spec.io.ioengine
        ))
    } else if e.fixedbufs || e.registerfiles || e.sqthread_poll {
        Some(
            "io_submit_mode=offload does not work with fixedbufs, registerfiles or sqthread_poll"
                .into(),
        )
    } else {
        None
    }
}

/// Does one I/O on a submitter's engine and waits for it.
fn execute(eng: &mut dyn Engine, w: &Work, comps: &mut Vec<Completion>) -> i64 {
    // The engine has one slot, so the unit is its slot 0.
    // SAFETY: `w` describes a unit of the submitting worker's pool (made in
    // `queue` below from a unit, whose contract `IoUnit::new` holds), and
    // that unit stays in flight, untouched, until this I/O's completion is
    // reaped.
    let mut u = unsafe { IoUnit::new(0, w.buf as *mut u8, w.buf_cap) };
    u.op = w.op;
    u.fd = w.fd;
    u.offset = w.offset;
    u.set_len(w.len);
    u.sfr_flags = w.sfr_flags;
    u.file_data = w.file_data;
    u.prio = w.prio;
    match eng.queue(&mut u) {
        Queued::Completed => u.result,
        Queued::Busy => -(libc::EAGAIN as i64),
        Queued::Queued => match eng.commit() {
            Err(e) => -(crate::sys::errno_of(&e).unwrap_or(libc::EIO) as i64),
            Ok(_) => loop {
                match eng.reap(1, 1, comps) {
                    Ok(n) if n > 0 => break comps[0].result,
                    Ok(_) => continue,
                    Err(e) => break -(crate::sys::errno_of(&e).unwrap_or(libc::EIO) as i64),
                }
            },
        },
    }
}

/// Runs one submitter: each I/O is queued and waited for on its own
/// engine. A failure inside the engine ends the submitter but still
/// answers the I/O (with EIO), so the job never waits forever.
fn submitter(mut eng: Box<dyn Engine>, rx: Receiver<Work>, done: SyncSender<Done>, worker: u32) {
    let mut comps: Vec<Completion> = Vec::with_capacity(1);
    while let Ok(w) = rx.recv() {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            execute(eng.as_mut(), &w, &mut comps)
        }));
        let (result, broken) = match r {
            Ok(res) => (res, false),
            Err(_) => (-(libc::EIO as i64), true),
        };
        let sent = done.send(Done {
            idx: w.idx,
            result,
            worker,
        });
        if sent.is_err() || broken {
            break;
        }
    }
}

impl OffloadEngine {
    /// Whether the job asks for offloaded submission.
    pub fn wanted(spec: &JobSpec) -> bool {
        spec.io.io_submit_mode == SubmitMode::Offload
    }

    /// Starts `depth` submitters, each with its own engine; `pool` is the
    /// worker's buffer pool (passed to each engine's `init`).
    pub fn start(spec: &JobSpec, depth: u32, pool: (*mut u8, usize)) -> Result<Self, EngineError> {
        let mut inner = spec.clone();
        inner.io.iodepth = 1;
        inner.io.io_submit_mode = SubmitMode::Inline;
        let probe = engine::create(&inner)?;
        let (kind, mut caps) = (probe.kind(), probe.caps());
        drop(probe);
        if let Some(why) = refuse(spec, caps) {
            return Err(EngineError::Unfit(why));
        }
        caps.sync = false;
        let depth = depth.max(1);
        let (done_tx, done) = sync_channel(depth as usize);
        let mut txs = Vec::with_capacity(depth as usize);
        let mut threads = Vec::with_capacity(depth as usize);
        for worker in 0..depth {
            let mut eng = engine::create(&inner)?;
            eng.init(1, pool).map_err(|source| EngineError::Init {
                engine: kind.name(),
                source,
            })?;
            let (tx, rx) = sync_channel(1);
            let d = done_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("iomark:submit{worker}"))
                .spawn(move || submitter(eng, rx, d, worker))
                .map_err(EngineError::Thread)?;
            txs.push(tx);
            threads.push(h);
        }
        Ok(OffloadEngine {
            kind,
            caps,
            txs,
            idle: (0..depth).rev().collect(),
            done,
            threads,
        })
    }

    fn collect(&mut self, d: Done, out: &mut Vec<Completion>) {
        self.idle.push(d.worker);
        out.push(Completion {
            idx: d.idx,
            result: d.result,
        });
    }
}

// SAFETY: the buffer addresses sent to submitters point into the worker's
// pool, which outlives the engine (the worker drops its pool last).
unsafe impl Send for OffloadEngine {}

impl Engine for OffloadEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn caps(&self) -> Caps {
        self.caps
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        if self.caps.diskless {
            return Ok((-1, 0));
        }
        file::open_file(f, f.flags).map(|fd| (fd, 0))
    }

    fn close(&mut self, fd: RawFd, _data: usize, _size: u64) -> io::Result<()> {
        if fd < 0 {
            return Ok(());
        }
        file::close_fd(fd)
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let Some(w) = self.idle.pop() else {
            return Queued::Busy;
        };
        let work = Work {
            idx: io.idx,
            op: io.op,
            fd: io.fd,
            offset: io.offset,
            len: io.len(),
            buf: io.buf_ptr() as usize,
            buf_cap: io.buf_cap(),
            sfr_flags: io.sfr_flags,
            file_data: io.file_data,
            prio: io.prio,
        };
        match self.txs[w as usize].send(work) {
            Ok(()) => Queued::Queued,
            Err(_) => {
                io.result = -(libc::EIO as i64);
                self.idle.push(w);
                Queued::Completed
            }
        }
    }

    fn commit(&mut self) -> io::Result<u32> {
        Ok(0)
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        while (out.len() as u32) < min {
            match self.done.recv() {
                Ok(d) => self.collect(d, out),
                Err(_) => return Err(crate::sys::from_errno(libc::EIO)),
            }
        }
        while (out.len() as u32) < max.max(1) {
            match self.done.try_recv() {
                Ok(d) => self.collect(d, out),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Err(crate::sys::from_errno(libc::EIO)),
            }
        }
        Ok(out.len() as u32)
    }
}

impl Drop for OffloadEngine {
    fn drop(&mut self) {
        // Closing the channels ends the submitters.
        self.txs.clear();
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}
