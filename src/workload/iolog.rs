//! I/O traces in the iolog text format (versions 2 and 3): recording what
//! a job issues (`write_iolog`) and replaying a recorded trace as a job's
//! workload (`read_iolog`, `replay_*`).
//!
//! A trace starts with `fio version 2 iolog` or `fio version 3 iolog`;
//! each further line is a file action (`[time] file add|open|close`) or an
//! I/O (`[time] file read|write|trim|sync|datasync offset length`; version 2
//! may also `wait` microseconds). Version 3 times are microseconds since
//! the trace started.
//!
//! Loading parses the whole trace up front, into compact records. The
//! recorder formats each line into a reused buffer and writes through a
//! large `BufWriter`: no allocation per I/O. This module does no I/O of
//! the job itself and reads no clock: times come in as arguments.

use crate::sys::ext::OsStrExt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::NextIo;
use crate::engine::Op;
use crate::job::spec::{BlockSizes, Ddir, JobSpec, LogOpts, RwPattern, REPLAY_SKIP_SYNC};

/// One replayable record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// When to issue it, in microseconds from the start of the replay
    /// (already scaled by `replay_time_scale`).
    pub at_us: u64,
    pub op: Op,
    /// Index into `Trace::files`.
    pub file: u32,
    pub offset: u64,
    pub len: u64,
}

/// A loaded trace: its files and its I/O, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub path: PathBuf,
    pub version: u8,
    pub files: Vec<PathBuf>,
    pub records: Vec<Record>,
}

impl Trace {
    /// Bytes of reads, writes and trims.
    pub fn bytes(&self) -> [u64; 3] {
        let mut b = [0u64; 3];
        for r in &self.records {
            if let Some(d) = ddir_of(r.op) {
                b[d.idx()] += r.len;
            }
        }
        b
    }

    /// Smallest and largest length per direction, when it has any.
    pub fn len_range(&self, d: Ddir) -> Option<(u64, u64)> {
        let mut it = self
            .records
            .iter()
            .filter(|r| ddir_of(r.op) == Some(d))
            .map(|r| r.len);
        let first = it.next()?;
        Some(it.fold((first, first), |(lo, hi), l| (lo.min(l), hi.max(l))))
    }

    /// End of the furthest I/O in each file.
    pub fn extent(&self, file: u32) -> u64 {
        self.records
            .iter()
            .filter(|r| r.file == file && r.op.is_data())
            .map(|r| r.offset + r.len)
            .max()
            .unwrap_or(0)
    }
}

fn ddir_of(op: Op) -> Option<Ddir> {
    match op {
        Op::Read => Some(Ddir::Read),
        Op::Write => Some(Ddir::Write),
        Op::Trim => Some(Ddir::Trim),
        _ => None,
    }
}

/// The line name of an operation.
pub fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Trim => "trim",
        Op::Fsync => "sync",
        Op::Fdatasync => "datasync",
        Op::SyncFileRange => "sync_file_range",
    }
}

fn parse_op(s: &str) -> Option<Op> {
    Some(match s {
        "read" => Op::Read,
        "write" => Op::Write,
        "trim" => Op::Trim,
        "sync" => Op::Fsync,
        "datasync" => Op::Fdatasync,
        "sync_file_range" => Op::SyncFileRange,
        _ => return None,
    })
}

/// The trace file of clone `clone`: `read_iolog` may list one per clone,
/// separated by ':', a literal colon written `\:` as in `filename=` (a
/// Windows drive's: `C\:\traces\a.log`).
pub fn trace_name(opts: &LogOpts, clone: u32) -> Option<String> {
    let all = opts.read_iolog.as_deref()?;
    let names = crate::job::options::files::split_colon_list(all);
    if names.is_empty() {
        return None;
    }
    Some(names[clone as usize % names.len()].clone())
}

/// Why a trace cannot be read (`read_iolog`) or written (`write_iolog`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read read_iolog '{name}': {why}")]
    Read { name: String, why: String },
    #[error(
        "read_iolog '{0}' is a blktrace binary trace; iomark replays only iolog version 2 and 3 text traces"
    )]
    Blktrace(String),
    #[error("read_iolog '{0}' is not a text iolog (version 2 or 3)")]
    NotText(String),
    #[error("read_iolog '{0}' is empty")]
    Empty(String),
    #[error(
        "read_iolog '{0}' does not start with 'fio version 2 iolog' or 'fio version 3 iolog' (version 1 traces are not supported)"
    )]
    NoHeader(String),
    /// A line of the trace (numbered from 1) cannot be replayed.
    #[error("{name}:{line}: {msg}")]
    Line {
        name: String,
        line: usize,
        msg: String,
    },
    #[error("read_iolog '{0}' holds no reads, writes or trims")]
    NoData(String),
    /// The `write_iolog` file cannot be opened or written (`what`).
    #[error("cannot {what} write_iolog '{}': {reason}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
}

/// The largest trace iomark reads (a trace is read whole before the run).
pub const MAX_TRACE_BYTES: u64 = 4 << 30;

/// Reads and parses a trace, applying the job's replay options
/// (`replay_redirect`, `replay_scale`, `replay_align`, `replay_skip`,
/// `replay_time_scale`). `-` reads standard input.
pub fn load(name: &str, opts: &LogOpts) -> Result<Trace, TraceError> {
    use crate::job::jobfile::{read_at_most, read_bounded};
    let bytes = if name == "-" {
        read_at_most(&mut std::io::stdin(), MAX_TRACE_BYTES)
    } else {
        read_bounded(std::path::Path::new(name), MAX_TRACE_BYTES)
    }
    .map_err(|why| TraceError::Read {
        name: name.to_string(),
        why: why.into(),
    })?;
    parse(name, &bytes, opts)
}

/// blktrace's binary magic (low byte is the version).
const BLKTRACE_MAGIC: u32 = 0x6561_7400;

/// Parses trace text (see `load`).
#[allow(clippy::too_many_lines)]
pub fn parse(name: &str, data: &[u8], opts: &LogOpts) -> Result<Trace, TraceError> {
    if data.len() >= 4 {
        let m = u32::from_ne_bytes([data[0], data[1], data[2], data[3]]);
        if m & 0xffff_ff00 == BLKTRACE_MAGIC || m.swap_bytes() & 0xffff_ff00 == BLKTRACE_MAGIC {
            return Err(TraceError::Blktrace(name.to_string()));
        }
    }
    let text = std::str::from_utf8(data).map_err(|_| TraceError::NotText(name.to_string()))?;
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim_end()).unwrap_or("");
    let version = version_of(header).ok_or_else(|| {
        if header.is_empty() {
            TraceError::Empty(name.to_string())
        } else {
            TraceError::NoHeader(name.to_string())
        }
    })?;
    let redirect = opts.replay_redirect.as_deref().map(PathBuf::from);
    let time_scale = opts.replay_time_scale.max(1);
    let mut trace = Trace {
        path: PathBuf::from(name),
        version,
        files: Vec::new(),
        records: Vec::new(),
    };
    // Timing state: the scaled schedule and the last raw timestamp.
    let mut at_us = 0u64;
    let mut last_time: Option<u64> = None;
    let mut version = version;
    for (i, line) in lines {
        let lineno = i + 1;
        let err = |msg: String| TraceError::Line {
            name: name.to_string(),
            line: lineno,
            msg,
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // A log appended to by a second run repeats its header.
        if let Some(v) = version_of(line) {
            version = v;
            continue;
        }
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        let (time, rest) = if version == 3 {
            let t = fields
                .first()
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| err("expected a timestamp first (version 3 iolog)".into()))?;
            (Some(t), &fields[1..])
        } else {
            (None, &fields[..])
        };
        if let Some(t) = time {
            // Gaps between timestamps; a timestamp going back adds none.
            if let Some(last) = last_time {
                at_us += t.saturating_sub(last) * 100 / time_scale;
            }
            last_time = Some(t);
        }
        let (fname, action) = match rest {
            [f, a, ..] => (*f, *a),
            _ => return Err(err(format!("cannot parse '{line}'"))),
        };
        let path = redirect.clone().unwrap_or_else(|| PathBuf::from(fname));
        let fileno = match trace.files.iter().position(|p| *p == path) {
            Some(i) => i,
            None => {
                trace.files.push(path);
                trace.files.len() - 1
            }
        } as u32;
        match rest.len() {
            2 => match action {
                "add" | "open" | "close" => {}
                other => return Err(err(format!("unknown file action '{other}'"))),
            },
            4 => {
                let num = |s: &str, what: &str| {
                    s.parse::<u64>()
                        .map_err(|_| err(format!("{what} '{s}' is not a number")))
                };
                let offset = num(rest[2], "offset")?;
                let len = num(rest[3], "length")?;
                if action == "wait" {
                    if version == 3 {
                        return Err(err(
                            "'wait' is not allowed in a version 3 iolog (timestamps give the timing)"
                                .into(),
                        ));
                    }
                    // Version 2: the offset field holds microseconds; very
                    // short waits are dropped.
                    if offset >= 100 {
                        at_us += offset * 100 / time_scale;
                    }
                    continue;
                }
                let op = parse_op(action)
                    .ok_or_else(|| err(format!("unknown I/O action '{action}'")))?;
                let skip_bit = match ddir_of(op) {
                    Some(d) => 1u8 << d.idx(),
                    None => REPLAY_SKIP_SYNC,
                };
                if opts.replay_skip & skip_bit != 0 {
                    continue;
                }
                let (mut offset, len) = if op.is_data() {
                    if len == 0 {
                        return Err(err(format!("{action} of length 0")));
                    }
                    (offset, len)
                } else {
                    (0, 0)
                };
                if opts.replay_scale > 1 {
                    offset /= opts.replay_scale;
                }
                if opts.replay_align > 1 {
                    offset &= !(opts.replay_align - 1);
                }
                trace.records.push(Record {
                    at_us,
                    op,
                    file: fileno,
                    offset,
                    len,
                });
            }
            _ => return Err(err(format!("cannot parse '{line}'"))),
        }
    }
    if !trace.records.iter().any(|r| r.op.is_data()) {
        return Err(TraceError::NoData(name.to_string()));
    }
    // Files named by file actions only are not part of the replay.
    let used: Vec<bool> = (0..trace.files.len() as u32)
        .map(|f| trace.records.iter().any(|r| r.file == f))
        .collect();
    if used.iter().any(|u| !u) {
        let mut map = vec![0u32; used.len()];
        let mut files = Vec::new();
        for (i, p) in trace.files.iter().enumerate() {
            if used[i] {
                map[i] = files.len() as u32;
                files.push(p.clone());
            }
        }
        for r in &mut trace.records {
            r.file = map[r.file as usize];
        }
        trace.files = files;
    }
    Ok(trace)
}

fn version_of(line: &str) -> Option<u8> {
    match line.trim_end() {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => None,
    }
}

/// Makes `spec` describe the trace's workload: the directions it has, its
/// block sizes, one pass (the trace is replayed once).
pub fn adjust_spec(spec: &mut JobSpec, trace: &Trace) {
    let has = |d| trace.len_range(d).is_some();
    let (r, w, t) = (has(Ddir::Read), has(Ddir::Write), has(Ddir::Trim));
    spec.io.rw = match (r, w, t) {
        (true, false, false) => RwPattern::Read,
        (false, true, false) => RwPattern::Write,
        (false, false, true) => RwPattern::Trim,
        (false, true, true) => RwPattern::TrimWrite,
        _ => RwPattern::ReadWrite,
    };
    for d in Ddir::ALL {
        if let Some((lo, hi)) = trace.len_range(d) {
            spec.io.bs[d.idx()] = BlockSizes::Range { lo, hi };
        }
    }
    spec.io.loops = 1;
    spec.time.time_based = false;
    spec.file.io_size = None;
    spec.file.number_ios = 0;
}

/// Replays a trace: hands out its I/O in order and says when each is due.
#[derive(Debug)]
pub struct Replay {
    trace: Arc<Trace>,
    pos: usize,
    stall: bool,
    /// Clock time (ns) of the replay's start, set by the first `due_ns`.
    base_ns: Option<u64>,
    last_at_us: u64,
}

impl Replay {
    pub fn new(trace: Arc<Trace>, no_stall: bool) -> Self {
        Replay {
            trace,
            pos: 0,
            stall: !no_stall,
            base_ns: None,
            last_at_us: 0,
        }
    }

    /// The next record as an I/O, or `None` at the end of the trace.
    #[inline]
    pub fn next_io(&mut self) -> Option<NextIo> {
        let r = self.trace.records.get(self.pos)?;
        self.pos += 1;
        self.last_at_us = r.at_us;
        Some(NextIo {
            op: r.op,
            file: r.file,
            offset: r.offset,
            len: r.len,
        })
    }

    /// When (clock ns) the I/O last returned by `next_io` is due, or
    /// `None` when replaying without stalls. The first call fixes the
    /// start of the schedule at `now`.
    #[inline]
    pub fn due_ns(&mut self, now: u64) -> Option<u64> {
        if !self.stall {
            return None;
        }
        let base = *self.base_ns.get_or_insert(now);
        Some(base + self.last_at_us * 1000)
    }
}

/// What the recorder writes for a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAction {
    Add,
    Open,
    Close,
}

/// Records a job's I/O as a version 3 iolog. Lines are formatted straight
/// into one preallocated buffer, written out when it fills.
pub struct IologWriter {
    out: File,
    path: PathBuf,
    names: Vec<Box<[u8]>>,
    t0_ns: u64,
    buf: Vec<u8>,
    error: Option<TraceError>,
}

/// Output buffer: one write system call per this many bytes of trace.
const WRITE_BUFFER: usize = 1 << 20;
/// Room kept for one more line (a path of up to 4 KiB and its numbers).
const LINE_ROOM: usize = 4096 + 128;

impl IologWriter {
    /// Opens `path` for appending, writes the header and an `add` line per
    /// file. `now_ns` is the start of the trace's time.
    pub fn create(path: &Path, files: &[PathBuf], now_ns: u64) -> Result<Self, TraceError> {
        // Never through a link or a hard link (see `crate::outfile`).
        let f = crate::outfile::open(path, crate::outfile::Named::Iomark, true)
            .map(|o| o.file)
            .map_err(|e| TraceError::Write {
                what: "open",
                path: path.to_path_buf(),
                reason: crate::job::jobfile::io_reason(&e),
            })?;
        let mut w = IologWriter {
            out: f,
            path: path.to_path_buf(),
            names: files
                .iter()
                .map(|p| p.as_os_str().as_bytes().to_vec().into_boxed_slice())
                .collect(),
            t0_ns: now_ns,
            buf: Vec::with_capacity(WRITE_BUFFER + LINE_ROOM),
            error: None,
        };
        w.buf.extend_from_slice(b"fio version 3 iolog\n");
        for i in 0..files.len() {
            w.file(i as u32, FileAction::Add, now_ns);
        }
        Ok(w)
    }

    /// Records a file action.
    pub fn file(&mut self, file: u32, action: FileAction, now_ns: u64) {
        let act: &[u8] = match action {
            FileAction::Add => b"add",
            FileAction::Open => b"open",
            FileAction::Close => b"close",
        };
        self.start_line(file, now_ns);
        self.buf.extend_from_slice(act);
        self.end_line();
    }

    /// Records one I/O at issue time. Syncs carry offset and length 0.
    #[inline]
    pub fn io(&mut self, op: Op, file: u32, offset: u64, len: u64, now_ns: u64) {
        self.start_line(file, now_ns);
        self.buf.extend_from_slice(op_name(op).as_bytes());
        self.buf.push(b' ');
        let (offset, len) = if op.is_data() { (offset, len) } else { (0, 0) };
        push_num(&mut self.buf, offset);
        self.buf.push(b' ');
        push_num(&mut self.buf, len);
        self.end_line();
    }

    #[inline]
    fn start_line(&mut self, file: u32, now_ns: u64) {
        push_num(&mut self.buf, now_ns.saturating_sub(self.t0_ns) / 1000);
        self.buf.push(b' ');
        if let Some(n) = self.names.get(file as usize) {
            self.buf.extend_from_slice(n);
        }
        self.buf.push(b' ');
    }

    #[inline]
    fn end_line(&mut self) {
        self.buf.push(b'\n');
        if self.buf.len() >= WRITE_BUFFER {
            self.write_out();
        }
    }

    /// Writes the buffered lines (after a write error they are dropped).
    fn write_out(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(&self.buf) {
                self.error = Some(TraceError::Write {
                    what: "write",
                    path: self.path.clone(),
                    reason: crate::job::jobfile::io_reason(&e),
                });
            }
        }
        self.buf.clear();
    }

    /// Writes what is buffered; returns the first write error, if any.
    pub fn finish(mut self) -> Result<(), TraceError> {
        self.write_out();
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Appends the decimal digits of `n`, two at a time.
#[inline]
fn push_num(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while n >= 100 {
        let p = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if n >= 10 {
        let p = n as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + n as u8;
    }
    out.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> LogOpts {
        LogOpts::default()
    }

    const V3: &str = "fio version 3 iolog
21 /d/f1 add
177 /d/f1 open
183 /d/f1 write 0 4096
221 /d/f1 write 45056 8192
278 /d/f1 sync 28672 0
300 /d/f1 read 4096 512
1300 /d/f1 trim 8192 4096
1400 /d/f1 close
";

    #[test]
    fn parses_version_3_with_times() {
        let t = parse("t", V3.as_bytes(), &opts()).unwrap();
        assert_eq!(t.version, 3);
        assert_eq!(t.files, vec![PathBuf::from("/d/f1")]);
        let ops: Vec<(Op, u64, u64, u64)> = t
            .records
            .iter()
            .map(|r| (r.op, r.offset, r.len, r.at_us))
            .collect();
        assert_eq!(
            ops,
            vec![
                (Op::Write, 0, 4096, 162),
                (Op::Write, 45056, 8192, 200),
                (Op::Fsync, 0, 0, 257),
                (Op::Read, 4096, 512, 279),
                (Op::Trim, 8192, 4096, 1279),
            ]
        );
        assert_eq!(t.bytes(), [512, 12288, 4096]);
        assert_eq!(t.len_range(Ddir::Write), Some((4096, 8192)));
        assert_eq!(t.extent(0), 53248);
    }

    #[test]
    fn version_2_waits_and_time_scale() {
        let text = "fio version 2 iolog
/d/a add
/d/b add
/d/a open
/d/b open
/d/a read 0 4096
/d/a wait 2000 0
/d/b write 8192 4096
/d/b wait 50 0
/d/a datasync 0 0
/d/a close
";
        let mut o = opts();
        o.replay_time_scale = 200;
        let t = parse("t", text.as_bytes(), &o).unwrap();
        assert_eq!(t.files.len(), 2);
        let v: Vec<(Op, u32, u64)> = t.records.iter().map(|r| (r.op, r.file, r.at_us)).collect();
        assert_eq!(
            v,
            vec![
                (Op::Read, 0, 0),
                (Op::Write, 1, 1000),
                (Op::Fdatasync, 0, 1000)
            ]
        );
    }

    #[test]
    fn redirect_scale_align_and_skip() {
        let mut o = opts();
        o.replay_redirect = Some("/dev/x".into());
        o.replay_scale = 2;
        o.replay_align = 4096;
        o.replay_skip = 1 << Ddir::Trim.idx() | REPLAY_SKIP_SYNC;
        let t = parse("t", V3.as_bytes(), &o).unwrap();
        assert_eq!(t.files, vec![PathBuf::from("/dev/x")]);
        let v: Vec<(Op, u64)> = t.records.iter().map(|r| (r.op, r.offset)).collect();
        assert_eq!(v, vec![(Op::Write, 0), (Op::Write, 20480), (Op::Read, 0)]);
    }

    #[test]
    fn bad_traces_are_clear_errors() {
        let o = opts();
        let cases: &[(&[u8], &str)] = &[
            (b"", "is empty"),
            (b"0, 0, 4096\n", "version 1"),
            (b"\x00\x74\x61\x65\x07\x00\x00\x00", "blktrace"),
            (
                b"fio version 3 iolog\n5 /f add\n9 /f frob 0 1\n",
                "t:3: unknown I/O action 'frob'",
            ),
            (
                b"fio version 3 iolog\n5 /f wait 10 0\n",
                "not allowed in a version 3",
            ),
            (b"fio version 2 iolog\n/f add\n/f read x 1\n", "offset 'x'"),
            (b"fio version 3 iolog\n/f add\n", "timestamp"),
            (
                b"fio version 2 iolog\n/f add\n/f open\n",
                "no reads, writes or trims",
            ),
        ];
        for (text, want) in cases {
            let e = parse("t", text, &o).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }

    #[test]
    fn appended_runs_are_read_in_order() {
        let text = format!("{V3}{V3}");
        let t = parse("t", text.as_bytes(), &opts()).unwrap();
        assert_eq!(t.records.len(), 10);
        // Time never runs backwards.
        assert!(t.records.windows(2).all(|w| w[0].at_us <= w[1].at_us));
    }

    #[test]
    fn writer_output_parses_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.log");
        let files = vec![PathBuf::from("/d/c"), PathBuf::from("/d/e")];
        let mut w = IologWriter::create(&p, &files, 1_000_000).unwrap();
        w.file(0, FileAction::Open, 1_000_000);
        w.file(1, FileAction::Open, 1_000_000);
        w.io(Op::Write, 0, 4096, 4096, 1_005_000);
        w.io(Op::Fsync, 0, 4096, 4096, 1_006_000);
        w.io(Op::Read, 1, 12345678901, 512, 3_000_000);
        w.file(0, FileAction::Close, 3_000_000);
        w.finish().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("fio version 3 iolog\n0 /d/c add\n0 /d/e add\n"));
        assert!(
            text.contains("\n5 /d/c write 4096 4096\n6 /d/c sync 0 0\n"),
            "{text}"
        );
        let t = parse("w", text.as_bytes(), &opts()).unwrap();
        let v: Vec<(Op, u32, u64, u64, u64)> = t
            .records
            .iter()
            .map(|r| (r.op, r.file, r.offset, r.len, r.at_us))
            .collect();
        assert_eq!(
            v,
            vec![
                (Op::Write, 0, 4096, 4096, 5),
                (Op::Fsync, 0, 0, 0, 6),
                (Op::Read, 1, 12345678901, 512, 2000)
            ]
        );
    }

    #[test]
    fn replay_schedule() {
        let t = Arc::new(parse("t", V3.as_bytes(), &opts()).unwrap());
        let mut r = Replay::new(t.clone(), false);
        let first = r.next_io().unwrap();
        assert_eq!((first.op, first.offset), (Op::Write, 0));
        assert_eq!(r.due_ns(10_000), Some(10_000 + 162_000));
        r.next_io().unwrap();
        assert_eq!(r.due_ns(99_999_999), Some(10_000 + 200_000));
        let mut n = Replay::new(t, true);
        n.next_io();
        assert_eq!(n.due_ns(5), None);
        assert_eq!(std::iter::from_fn(|| n.next_io()).count(), 4);
    }

    #[test]
    fn numbers_format_like_display() {
        for n in [0u64, 7, 10, 99, 100, 101, 4096, 123456789, u64::MAX] {
            let mut v = Vec::new();
            push_num(&mut v, n);
            assert_eq!(String::from_utf8(v).unwrap(), n.to_string());
        }
    }

    #[test]
    fn clone_trace_names() {
        let mut o = opts();
        o.read_iolog = Some("a.log:b.log".into());
        assert_eq!(trace_name(&o, 0).as_deref(), Some("a.log"));
        assert_eq!(trace_name(&o, 1).as_deref(), Some("b.log"));
        assert_eq!(trace_name(&o, 2).as_deref(), Some("a.log"));
        // A drive's colon, escaped as in filename=.
        o.read_iolog = Some(r"C\:\t\a.log:D\:\b.log".into());
        assert_eq!(trace_name(&o, 0).as_deref(), Some(r"C:\t\a.log"));
        assert_eq!(trace_name(&o, 1).as_deref(), Some(r"D:\b.log"));
    }
}
