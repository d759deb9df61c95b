//! Time-series log files in fio's formats: bandwidth (`write_bw_log`),
//! IOPS (`write_iops_log`), latency (`write_lat_log`: slat, clat and lat
//! files) and completion-latency histograms (`write_hist_log` with
//! `log_hist_msec`).
//!
//! Each line is `time_ms, value, ddir, block_size[, offset], priority`
//! (histogram lines: `time_ms, ddir, block_size, bin0, bin1, …`). Files are
//! named `PREFIX_TYPE.N.log`, N being the job's number in the run (1-based),
//! or `PREFIX_TYPE.log` with `per_job_logs=0` (clones then append to one
//! file).
//!
//! Hot-path rule: recording a line never allocates. Lines are formatted
//! into a buffer reserved at setup and written to the file in large
//! chunks, so the write system call happens once per many I/Os.
//!
//! This module only writes what the recorder hands it; it measures nothing.
//!
//! A log that cannot be created or written fails its job with the errno
//! of the failure (ENOSPC for a full filesystem, not a generic EIO) and a
//! message in the same words; writes are checked up to close(2).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use crate::job::spec::JobSpec;
use crate::stats::histogram::{Histogram, NR};

/// Reserved buffer per file; flushed when less than `SLACK` is free.
const BUF_BYTES: usize = 256 * 1024;
const SLACK: usize = 48 * 1024;

/// A log file that could not be created or written: the errno the job
/// reports (`err=`, from [`LogError::errno`]) and the message naming the
/// file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// Creating or writing (`what`) the file failed.
    #[error("cannot {what} log file '{}': {reason}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        errno: i32,
        reason: String,
    },
    /// A compressed block could not be made (`log_store_compressed`).
    #[error("cannot compress log file '{}'", path.display())]
    Compress { path: PathBuf },
}

impl LogError {
    fn io(what: &'static str, path: &std::path::Path, e: &std::io::Error) -> LogError {
        LogError::Io {
            what,
            path: path.to_path_buf(),
            errno: crate::sys::errno_of(e).unwrap_or(libc::EIO),
            reason: crate::job::jobfile::io_reason(e),
        }
    }

    /// The errno the job reports.
    pub fn errno(&self) -> i32 {
        match self {
            LogError::Io { errno, .. } => *errno,
            LogError::Compress { .. } => libc::EIO,
        }
    }
}

/// One log file being written.
pub struct LogFile {
    /// None once closed by `finish`.
    file: Option<File>,
    path: PathBuf,
    buf: Vec<u8>,
    error: Option<LogError>,
    /// `log_store_compressed`: samples are stored in fio's binary layout
    /// and each flush writes them as one zlib stream (what
    /// `fio --inflate-log` reads back).
    zlib: Option<Zlib>,
}

/// Writes `data` to the log file, keeping the first error for `finish`.
fn write_or_note(
    file: &mut Option<File>,
    path: &std::path::Path,
    error: &mut Option<LogError>,
    data: &[u8],
) {
    let Some(file) = file.as_mut() else {
        return;
    };
    if let Err(e) = file.write_all(data) {
        error.get_or_insert_with(|| LogError::io("write", path, &e));
    }
}

/// Closes `file`, returning close(2)'s error (NFS reports failed writes
/// there); EINTR means it is closed.
fn close_checked(file: File) -> std::io::Result<()> {
    use crate::sys::IntoRawFd;
    let fd = file.into_raw_fd();
    // close(2); CloseHandle on Windows.
    if let Err(e) = crate::sys::close(fd) {
        if crate::sys::errno_of(&e) != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(())
}

/// A reusable zlib compressor and its output buffer (no allocation per
/// flush).
struct Zlib {
    c: flate2::Compress,
    out: Vec<u8>,
}

impl std::fmt::Debug for LogFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogFile").field("path", &self.path).finish()
    }
}

/// fio's binary sample: time, value, direction (with the offset flag in
/// the top bit) and priority, block size, and the offset when logged.
const OFFSET_FLAG: u32 = 1 << 31;
/// Set when the priority column holds the full value (`log_prio`).
const PRIO_FLAG: u32 = 1 << 30;

impl LogFile {
    /// Creates (truncates) the file, or opens it for appending when
    /// `append` is set (clones sharing one file).
    pub fn open(path: PathBuf, append: bool) -> Result<LogFile, LogError> {
        Self::open_as(path, append, false)
    }

    /// As `open`; `compressed` stores the samples as fio's `.fz` logs.
    pub fn open_as(path: PathBuf, append: bool, compressed: bool) -> Result<LogFile, LogError> {
        let reason = |e: std::io::Error| LogError::io("create", &path, &e);
        // Always append: clones sharing a file (per_job_logs=0) each write
        // whole chunks at the end, so lines never overwrite each other.
        // Never through a link or into a file with other hard links (see
        // `crate::outfile`); a new log starts empty.
        let out =
            crate::outfile::open(&path, crate::outfile::Named::Iomark, true).map_err(reason)?;
        if !append {
            out.file.set_len(0).map_err(reason)?;
        }
        let file = out.file;
        Ok(LogFile {
            file: Some(file),
            path,
            buf: Vec::with_capacity(BUF_BYTES),
            error: None,
            zlib: compressed.then(|| Zlib {
                c: flate2::Compress::new(flate2::Compression::default(), true),
                // Deflate's bound for BUF_BYTES of input, with room to spare.
                out: Vec::with_capacity(BUF_BYTES + BUF_BYTES / 8 + 1024),
            }),
        })
    }

    #[inline]
    fn maybe_flush(&mut self) {
        if self.buf.capacity() - self.buf.len() < SLACK {
            self.flush();
        }
    }

    /// Writes the buffered lines to the file.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let data: &[u8] = match self.zlib.as_mut() {
            None => &self.buf,
            Some(z) => {
                z.out.clear();
                z.c.reset();
                let r =
                    z.c.compress_vec(&self.buf, &mut z.out, flate2::FlushCompress::Finish);
                if !matches!(r, Ok(flate2::Status::StreamEnd)) {
                    if self.error.is_none() {
                        self.error = Some(LogError::Compress {
                            path: self.path.clone(),
                        });
                    }
                    self.buf.clear();
                    return;
                }
                &z.out
            }
        };
        write_or_note(&mut self.file, &self.path, &mut self.error, data);
        self.buf.clear();
    }

    /// Appends one line of an averaged window: no block size, offset or
    /// priority (0, as fio writes them).
    #[inline]
    pub fn line(&mut self, t_ms: u64, value: u64, ddir: usize, fmt: &LineFormat) {
        self.line_at(t_ms, value, ddir, 0, 0, 0, fmt);
    }

    /// Appends one line of an I/O of priority `prio`, with its offset
    /// when `log_offset` is set.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn line_at(
        &mut self,
        t_ms: u64,
        value: u64,
        ddir: usize,
        bs: u64,
        offset: u64,
        prio: u16,
        fmt: &LineFormat,
    ) {
        let b = &mut self.buf;
        let t = t_ms + fmt.time_base_ms;
        if self.zlib.is_some() {
            let flag =
                if fmt.offset { OFFSET_FLAG } else { 0 } | if fmt.prio_hex { PRIO_FLAG } else { 0 };
            b.extend_from_slice(&t.to_le_bytes());
            b.extend_from_slice(&value.to_le_bytes());
            b.extend_from_slice(&(ddir as u32 | flag).to_le_bytes());
            // The full value, as fio stores it (its --inflate-log reduces
            // it to the real-time bit when log_prio is off).
            b.extend_from_slice(&prio.to_le_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&bs.to_le_bytes());
            if fmt.offset {
                b.extend_from_slice(&offset.to_le_bytes());
            }
            self.maybe_flush();
            return;
        }
        // Writing into a Vec with spare capacity cannot fail or allocate.
        let _ = if fmt.offset {
            write!(b, "{t}, {value}, {ddir}, {bs}, {offset}, ")
        } else {
            write!(b, "{t}, {value}, {ddir}, {bs}, ")
        };
        let column = fmt.prio_column(prio);
        let _ = if fmt.prio_hex {
            writeln!(b, "0x{column:04x}")
        } else {
            writeln!(b, "{column}")
        };
        self.maybe_flush();
    }

    /// Appends one histogram line: the bins of `now - last` (coarsened by
    /// summing `1 << coarseness` neighbours).
    #[allow(clippy::too_many_arguments)]
    pub fn hist_line(
        &mut self,
        t_ms: u64,
        ddir: usize,
        bs: u64,
        now: &Histogram,
        last: &[u64],
        coarseness: u32,
        time_base_ms: u64,
    ) {
        let b = &mut self.buf;
        let _ = write!(b, "{}, {ddir}, {bs}", t_ms + time_base_ms);
        let step = 1usize << coarseness;
        let cur = now.buckets();
        let mut i = 0;
        while i < NR {
            let end = (i + step).min(NR);
            let sum: u64 = (i..end).map(|k| cur[k].saturating_sub(last[k])).sum();
            let _ = write!(b, ", {sum}");
            i = end;
        }
        b.push(b'\n');
        self.maybe_flush();
    }

    /// Flushes and closes the file; the first error of the writes and
    /// the close, if any.
    pub fn finish(&mut self) -> Result<(), LogError> {
        self.flush();
        if let Some(z) = self.zlib.as_mut().filter(|z| z.c.total_out() == 0) {
            // An empty log is still one (empty) zlib stream, as fio writes it.
            z.out.clear();
            let _ =
                z.c.compress_vec(&[], &mut z.out, flate2::FlushCompress::Finish);
            write_or_note(&mut self.file, &self.path, &mut self.error, &z.out);
        }
        if let Some(f) = self.file.take() {
            if let Err(e) = close_checked(f) {
                self.error
                    .get_or_insert_with(|| LogError::io("write", &self.path, &e));
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The parts of a line that depend on the job's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineFormat {
    pub offset: bool,
    /// `log_prio`: the priority column holds the I/O's full priority
    /// value in hex; otherwise 1 for the real-time class and 0 for the
    /// rest.
    pub prio_hex: bool,
    /// Added to every time stamp (`log_unix_epoch`: the Unix time in ms
    /// when measuring began).
    pub time_base_ms: u64,
}

impl LineFormat {
    pub fn new(spec: &JobSpec) -> LineFormat {
        LineFormat {
            offset: spec.log.log_offset,
            prio_hex: spec.log.log_prio,
            time_base_ms: 0,
        }
    }

    /// The priority column for an I/O of priority `value`.
    #[inline]
    pub fn prio_column(&self, value: u16) -> u32 {
        if self.prio_hex {
            u32::from(value)
        } else {
            u32::from(crate::job::ioprio::class(value) == crate::job::ioprio::CLASS_RT)
        }
    }
}

/// Which log a file holds; gives the `_TYPE` part of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    Slat,
    Clat,
    Lat,
    ClatHist,
}

impl LogKind {
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Slat => "slat",
            LogKind::Clat => "clat",
            LogKind::Lat => "lat",
            LogKind::ClatHist => "clat_hist",
        }
    }
}

/// `name` with the tag `tag` (`NAME.TAG`; `name` alone without a tag).
pub fn tagged(name: &str, tag: &str) -> String {
    if tag.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{tag}")
    }
}

/// The file name for a log: `PREFIX_TYPE.N.log` or, without per-job logs,
/// `PREFIX_TYPE.log` (each then `.TAG` on a rank of a run over many
/// hosts: `LogOpts::file_tag`). An empty prefix means the job's name.
pub fn log_path(spec: &JobSpec, prefix: &str, kind: LogKind, number: u32) -> PathBuf {
    let p = untagged_log_path(spec, prefix, kind, number);
    PathBuf::from(tagged(&p.to_string_lossy(), &spec.log.file_tag))
}

fn untagged_log_path(spec: &JobSpec, prefix: &str, kind: LogKind, number: u32) -> PathBuf {
    let prefix = if prefix.is_empty() {
        spec.name.as_str()
    } else {
        prefix
    };
    let fz = if spec.log.log_store_compressed && kind != LogKind::ClatHist {
        ".fz"
    } else {
        ""
    };
    if spec.log.per_job_logs {
        PathBuf::from(format!("{prefix}_{}.{number}.log{fz}", kind.suffix()))
    } else {
        PathBuf::from(format!("{prefix}_{}.log{fz}", kind.suffix()))
    }
}

/// Window accumulator for averaged logging (`log_avg_msec`), per
/// direction.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    sum: u64,
    count: u64,
    max: u64,
}

impl Window {
    #[inline]
    fn add(&mut self, v: u64) {
        self.sum += v;
        self.count += 1;
        self.max = self.max.max(v);
    }
}

/// The log files of one job clone and the state of their windows.
#[derive(Debug)]
pub struct JobLogs {
    fmt: LineFormat,
    bw: Option<LogFile>,
    iops: Option<LogFile>,
    /// slat, clat, lat.
    lat: [Option<LogFile>; 3],
    hist: Option<LogFile>,
    /// `log_avg_msec` in ns; 0 logs every I/O.
    avg_ns: u64,
    max_value: bool,
    ddirs: [bool; 3],
    /// Averaged mode: start of the current window and the counters then.
    win_start: u64,
    win_bytes: [u64; 3],
    win_ios: [u64; 3],
    win_lat: [[Window; 3]; 3],
    /// Histogram logging.
    hist_ns: u64,
    hist_coarse: u32,
    hist_last_t: [u64; 3],
    hist_last: [Box<[u64]>; 3],
    epoch: u64,
    /// Clock whose time stamps lines carry (`log_unix_epoch`,
    /// `log_alternate_epoch`); `None`: time since measuring began.
    epoch_clock: Option<i32>,
}

impl JobLogs {
    /// Opens the log files a job asks for; `None` when it asks for none.
    /// `number` is the job's 1-based number in the run; `first_clone`
    /// says whether this clone creates a shared (`per_job_logs=0`) file.
    pub fn open(
        spec: &JobSpec,
        number: u32,
        first_clone: bool,
    ) -> Result<Option<JobLogs>, LogError> {
        let l = &spec.log;
        let want_hist = l.write_hist_log.is_some() && l.log_hist_msec > 0;
        if l.write_bw_log.is_none()
            && l.write_iops_log.is_none()
            && l.write_lat_log.is_none()
            && l.write_hist_log.is_none()
        {
            return Ok(None);
        }
        let append = !l.per_job_logs && !first_clone;
        let open = |prefix: &Option<String>, kind: LogKind| -> Result<Option<LogFile>, LogError> {
            match prefix {
                Some(p) => LogFile::open_as(
                    log_path(spec, p, kind, number),
                    append,
                    l.log_store_compressed && kind != LogKind::ClatHist,
                )
                .map(Some),
                None => Ok(None),
            }
        };
        let hist = open(&l.write_hist_log, LogKind::ClatHist)?;
        Ok(Some(JobLogs {
            fmt: LineFormat::new(spec),
            bw: open(&l.write_bw_log, LogKind::Bw)?,
            iops: open(&l.write_iops_log, LogKind::Iops)?,
            lat: [
                open(&l.write_lat_log, LogKind::Slat)?,
                open(&l.write_lat_log, LogKind::Clat)?,
                open(&l.write_lat_log, LogKind::Lat)?,
            ],
            // Created even without log_hist_msec (then left empty), as fio.
            hist,
            avg_ns: l.log_avg_msec * 1_000_000,
            max_value: l.log_max_value,
            ddirs: [
                spec.io.rw.has(crate::job::spec::Ddir::Read),
                spec.io.rw.has(crate::job::spec::Ddir::Write),
                spec.io.rw.has(crate::job::spec::Ddir::Trim),
            ],
            win_start: 0,
            win_bytes: [0; 3],
            win_ios: [0; 3],
            win_lat: [[Window::default(); 3]; 3],
            hist_ns: if want_hist {
                l.log_hist_msec * 1_000_000
            } else {
                0
            },
            hist_coarse: l.log_hist_coarseness,
            hist_last_t: [0; 3],
            hist_last: [
                vec![0u64; NR].into_boxed_slice(),
                vec![0u64; NR].into_boxed_slice(),
                vec![0u64; NR].into_boxed_slice(),
            ],
            epoch: 0,
            epoch_clock: (l.log_unix_epoch || l.log_alternate_epoch)
                .then_some(l.log_alternate_epoch_clock_id),
        }))
    }

    /// The clock whose time (ms) stamps lines, if not time since start.
    pub fn epoch_clock(&self) -> Option<i32> {
        self.epoch_clock
    }

    /// Starts the logs' time axis at `now` (the start of measuring);
    /// `unix_ms` is the `epoch_clock` time then, in ms.
    pub fn start(&mut self, now: u64, unix_ms: Option<u64>) {
        self.epoch = now;
        self.win_start = now;
        self.win_bytes = [0; 3];
        self.win_ios = [0; 3];
        self.win_lat = [[Window::default(); 3]; 3];
        self.hist_last_t = [now; 3];
        for h in &mut self.hist_last {
            h.iter_mut().for_each(|b| *b = 0);
        }
        self.fmt.time_base_ms = unix_ms.unwrap_or(0);
    }

    #[inline]
    fn t_ms(&self, now: u64) -> u64 {
        now.saturating_sub(self.epoch) / 1_000_000
    }

    /// Records one completed I/O of priority `prio`. `lats` holds slat,
    /// clat and lat in ns with `None` for those not measured.
    #[inline]
    pub fn io(
        &mut self,
        now: u64,
        d: usize,
        bytes: u64,
        offset: u64,
        prio: u16,
        lats: [Option<u64>; 3],
    ) {
        if self.avg_ns == 0 {
            let t = self.t_ms(now);
            let fmt = self.fmt;
            if let Some(f) = &mut self.bw {
                let clat = lats[1].unwrap_or(0).max(1);
                let v = (bytes as u128 * 1_000_000 / clat as u128) as u64;
                f.line_at(t, v, d, bytes, offset, prio, &fmt);
            }
            if let Some(f) = &mut self.iops {
                f.line_at(t, 1, d, bytes, offset, prio, &fmt);
            }
            for (k, f) in self.lat.iter_mut().enumerate() {
                if let (Some(f), Some(v)) = (f, lats[k]) {
                    f.line_at(t, v, d, bytes, offset, prio, &fmt);
                }
            }
        } else {
            self.win_bytes[d] += bytes;
            self.win_ios[d] += 1;
            for (k, v) in lats.iter().enumerate() {
                if let Some(v) = v {
                    self.win_lat[k][d].add(*v);
                }
            }
        }
    }

    /// The next time (ns) at which `tick` has something to do.
    pub fn next_due(&self) -> u64 {
        let mut t = u64::MAX;
        if self.avg_ns > 0 {
            t = t.min(self.win_start + self.avg_ns);
        }
        if self.hist_ns > 0 {
            for (d, last) in self.hist_last_t.iter().enumerate() {
                if self.ddirs[d] {
                    t = t.min(last + self.hist_ns);
                }
            }
        }
        t
    }

    /// Closes the averaging window and the histogram windows that have
    /// ended by `now`. `clat` holds the job's completion-latency histograms.
    pub fn tick(&mut self, now: u64, clat: [&Histogram; 3], bs: [u64; 3]) {
        if self.avg_ns > 0 && now >= self.win_start + self.avg_ns {
            self.close_window(now);
        }
        if self.hist_ns > 0 {
            for d in 0..3 {
                if self.ddirs[d] && now >= self.hist_last_t[d] + self.hist_ns {
                    self.hist_window(now, d, clat[d], bs[d]);
                }
            }
        }
    }

    fn hist_window(&mut self, now: u64, d: usize, clat: &Histogram, bs: u64) {
        let t = self.t_ms(now);
        if let Some(f) = &mut self.hist {
            f.hist_line(
                t,
                d,
                bs,
                clat,
                &self.hist_last[d],
                self.hist_coarse,
                self.fmt.time_base_ms,
            );
        }
        self.hist_last[d].copy_from_slice(clat.buckets());
        self.hist_last_t[d] = now;
    }

    fn close_window(&mut self, now: u64) {
        let spent_ms = (now.saturating_sub(self.win_start) / 1_000_000).max(1);
        let t = self.t_ms(now);
        let fmt = self.fmt;
        for d in 0..3 {
            if !self.ddirs[d] {
                continue;
            }
            if let Some(f) = &mut self.bw {
                let kib_s = self.win_bytes[d] * 1000 / spent_ms / 1024;
                f.line(t, kib_s, d, &fmt);
            }
            if let Some(f) = &mut self.iops {
                f.line(t, self.win_ios[d] * 1000 / spent_ms, d, &fmt);
            }
            for k in 0..3 {
                let w = self.win_lat[k][d];
                if let (Some(f), true) = (&mut self.lat[k], w.count > 0) {
                    let v = if self.max_value {
                        w.max
                    } else {
                        w.sum / w.count
                    };
                    f.line(t, v, d, &fmt);
                }
            }
        }
        self.win_start = now;
        self.win_bytes = [0; 3];
        self.win_ios = [0; 3];
        self.win_lat = [[Window::default(); 3]; 3];
    }

    /// Ends the logs at `now`: a last averaged window if any I/O fell in
    /// it, a last histogram line per direction with new samples, then
    /// flushes. Returns the first write error.
    pub fn finish(
        &mut self,
        now: u64,
        clat: [&Histogram; 3],
        bs: [u64; 3],
    ) -> Result<(), LogError> {
        if self.avg_ns > 0 && self.win_ios.iter().any(|n| *n > 0) {
            self.close_window(now);
        }
        if self.hist_ns > 0 {
            for d in 0..3 {
                let changed = clat[d]
                    .buckets()
                    .iter()
                    .zip(self.hist_last[d].iter())
                    .any(|(a, b)| a != b);
                if self.ddirs[d] && changed {
                    self.hist_window(now, d, clat[d], bs[d]);
                }
            }
        }
        let mut first_err = Ok(());
        let files = self
            .bw
            .iter_mut()
            .chain(self.iops.iter_mut())
            .chain(self.lat.iter_mut().flatten())
            .chain(self.hist.iter_mut());
        for f in files {
            if let Err(e) = f.finish() {
                if first_err.is_ok() {
                    first_err = Err(e);
                }
            }
        }
        first_err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            name: "job".into(),
            ..JobSpec::default()
        }
    }

    #[test]
    fn names_follow_fio() {
        let mut s = spec();
        assert_eq!(
            log_path(&s, "", LogKind::Bw, 1),
            PathBuf::from("job_bw.1.log")
        );
        assert_eq!(
            log_path(&s, "x", LogKind::ClatHist, 3),
            PathBuf::from("x_clat_hist.3.log")
        );
        s.log.per_job_logs = false;
        assert_eq!(
            log_path(&s, "x", LogKind::Iops, 3),
            PathBuf::from("x_iops.log")
        );
    }

    /// The priority column holds each I/O's own priority: 1 for the
    /// real-time class (0 otherwise), or with `log_prio` the value.
    #[test]
    fn priority_column() {
        let mut s = spec();
        let f = LineFormat::new(&s);
        assert_eq!(
            [0, 0x2000, 0x2007, 0x4003, 0x6000].map(|v| f.prio_column(v)),
            [0, 1, 1, 0, 0]
        );
        s.log.log_prio = true;
        let f = LineFormat::new(&s);
        assert!(f.prio_hex);
        assert_eq!(f.prio_column(0x4003), 0x4003);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.log");
        let mut l = LogFile::open(path.clone(), false).unwrap();
        l.line_at(1, 10, 0, 4096, 0, 0x2001, &f);
        l.line_at(2, 11, 1, 4096, 0, 0, &f);
        // An averaged window's line has no priority.
        l.line(3, 12, 0, &f);
        l.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "1, 10, 0, 4096, 0x2001\n2, 11, 1, 4096, 0x0000\n3, 12, 0, 0, 0x0000\n"
        );
    }
}
