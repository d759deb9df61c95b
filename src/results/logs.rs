//! fio's per-interval log files, as written by fio and iomark, for
//! `iomark report` (read here, drawn by `report::log_charts`):
//!
//! - `write_bw_log`, `write_iops_log`, `write_lat_log`: each line is
//!   `time_ms, value, direction, block size, offset[, prio]` (value in
//!   KiB/s for bandwidth, I/Os per second for IOPS, ns for latencies);
//! - `write_hist_log`: each line is `time_ms, direction, block size, bin0,
//!   bin1, …`, the completion latencies of one `log_hist_msec` interval in
//!   fio's histogram buckets (1856 of them, or that divided by
//!   2^`log_hist_coarseness` when neighbours are merged). The report draws
//!   their 50th, 90th, 99th and 99.9th percentiles over time.
//!
//! The file name says which log it is and whose: `PREFIX_TYPE.N.log`
//! (`PREFIX_TYPE.log` with `per_job_logs=0`), PREFIX being the option's
//! value (the job name by default) and N the job's number in its run.
//! The report groups the logs of one job (same directory, prefix and
//! number) and names the group by the job.

use super::ReadError;
use std::path::Path;

use crate::stats::histogram::{bucket_start, bucket_value, NR};

/// Percentiles drawn from histogram logs.
pub const HIST_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// Points a series keeps in a chart; more (a log of every I/O) are
/// averaged over equal time windows ([`thin`]).
pub const MAX_POINTS: usize = 600;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bandwidth,
    Iops,
    /// "clat", "slat" or "lat".
    Latency(&'static str),
    /// `write_hist_log` (completion latency).
    Histogram,
}

/// What a log file's name says: whose log and of what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogName {
    pub prefix: String,
    pub kind: LogKind,
    /// The job's number in its run (none with `per_job_logs=0`).
    pub job: Option<u32>,
}

/// Reads `PREFIX_TYPE[.N].log`.
pub fn name_of(file: &str) -> Option<LogName> {
    let stem = file.strip_suffix(".log")?;
    let (stem, job) = match stem.rsplit_once('.') {
        Some((s, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (s, Some(n.parse().ok()?))
        }
        _ => (stem, None),
    };
    let types = [
        ("_clat_hist", LogKind::Histogram),
        ("_bw", LogKind::Bandwidth),
        ("_iops", LogKind::Iops),
        ("_clat", LogKind::Latency("clat")),
        ("_slat", LogKind::Latency("slat")),
        ("_lat", LogKind::Latency("lat")),
    ];
    types.iter().find_map(|(suffix, kind)| {
        let prefix = stem.strip_suffix(suffix)?;
        (!prefix.is_empty()).then(|| LogName {
            prefix: prefix.to_string(),
            kind: *kind,
            job,
        })
    })
}

#[derive(Clone, Debug, PartialEq)]
pub struct Log {
    /// The path as given (its directory tells runs apart).
    pub path: String,
    pub name: LogName,
    /// Per direction (0 read, 1 write, 2 trim): (seconds, value); for a
    /// histogram log, (seconds, percentile values in ns, as
    /// `HIST_PERCENTILES`) go to `hist` instead.
    pub dirs: [Vec<(f64, f64)>; 3],
    pub hist: [Vec<(f64, [f64; 4])>; 3],
    /// Histogram logs: fio's buckets merged per bin (2^coarseness).
    pub hist_step: usize,
    /// Times were Unix epoch milliseconds (`log_unix_epoch`), shown from
    /// the first sample.
    pub from_epoch: bool,
}

impl Log {
    pub fn file(&self) -> String {
        Path::new(&self.path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.clone())
    }

    fn dir(&self) -> String {
        Path::new(&self.path)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }
}

fn bad_line(file: &str, i: usize, line: &str) -> ReadError {
    let shown: String = line.chars().take(60).collect();
    let more = if shown.len() < line.len() { "…" } else { "" };
    ReadError::malformed(
        format!("{file}:{}", i + 1),
        format!("not a log line: '{shown}{more}'"),
    )
}

/// The bins per line of a histogram log: 1856 >> coarseness.
fn hist_step(bins: usize) -> Option<usize> {
    (0..=6).map(|c| 1usize << c).find(|s| NR / s == bins)
}

/// The `HIST_PERCENTILES` of one interval's bins (each `step` buckets
/// wide), as bin midpoints; None when the interval has no completion.
pub fn bin_percentiles(bins: &[u64], step: usize) -> Option<[f64; 4]> {
    let total: u64 = bins.iter().sum();
    if total == 0 {
        return None;
    }
    let value = |i: usize| {
        if step == 1 {
            bucket_value(i) as f64
        } else {
            let lo = bucket_start(i * step) as f64;
            let hi = bucket_start(((i + 1) * step).min(NR)) as f64;
            (lo + hi) / 2.0
        }
    };
    let mut out = [0.0; 4];
    for (o, p) in out.iter_mut().zip(HIST_PERCENTILES) {
        let need = ((total as f64 * p / 100.0).ceil() as u64).max(1);
        let mut cum = 0;
        for (i, c) in bins.iter().enumerate() {
            cum += c;
            if cum >= need {
                *o = value(i);
                break;
            }
        }
    }
    Some(out)
}

fn parse_hist(text: &str, file: &str, name: LogName) -> Result<Log, ReadError> {
    let mut log = empty(file, name);
    let mut step = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bad = || bad_line(file, i, line);
        let f: Vec<u64> = line
            .split(',')
            .map(|x| x.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        if f.len() < 4 || f[1] > 2 {
            return Err(bad());
        }
        let at = || format!("{file}:{}", i + 1);
        let s = hist_step(f.len() - 3).ok_or_else(|| {
            ReadError::malformed(
                at(),
                format!(
                    "{} histogram bins; fio's histogram logs have {NR} (or that \
                     divided by 2, 4, … 64 with log_hist_coarseness)",
                    f.len() - 3
                ),
            )
        })?;
        if step != 0 && s != step {
            return Err(ReadError::malformed(
                at(),
                format!("{} bins where earlier lines had {}", f.len() - 3, NR / step),
            ));
        }
        step = s;
        if let Some(p) = bin_percentiles(&f[3..], s) {
            log.hist[f[1] as usize].push((f[0] as f64 / 1000.0, p));
        }
    }
    if step == 0 {
        return Err(ReadError::malformed(file, "the log is empty"));
    }
    log.hist_step = step;
    Ok(log)
}

fn empty(file: &str, name: LogName) -> Log {
    Log {
        path: file.to_string(),
        name,
        dirs: Default::default(),
        hist: Default::default(),
        hist_step: 0,
        from_epoch: false,
    }
}

/// Parses a log file's text; `file` is its path (its name says what it
/// holds).
pub fn parse(text: &str, file: &str) -> Result<Log, ReadError> {
    let base = Path::new(file)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name_of(&base).ok_or_else(|| {
        ReadError::malformed(
            file,
            "not a fio log (expected NAME_bw.N.log, NAME_iops.N.log, \
             NAME_[c|s]lat.N.log or NAME_clat_hist.N.log)",
        )
    })?;
    let mut log = if name.kind == LogKind::Histogram {
        parse_hist(text, file, name)?
    } else {
        let mut log = empty(file, name);
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let bad = || bad_line(file, i, line);
            if f.len() < 3 {
                return Err(bad());
            }
            let t: f64 = f[0].parse().map_err(|_| bad())?;
            let v: f64 = f[1].parse().map_err(|_| bad())?;
            let d: usize = f[2].parse().map_err(|_| bad())?;
            if d > 2 {
                return Err(bad());
            }
            log.dirs[d].push((t / 1000.0, v));
        }
        if log.dirs.iter().all(Vec::is_empty) {
            return Err(ReadError::malformed(file, "the log is empty"));
        }
        log
    };
    from_first_sample(&mut log);
    Ok(log)
}

/// Unix epoch times (`log_unix_epoch`, past 1973) are shown from the
/// first sample.
fn from_first_sample(log: &mut Log) {
    let first = log
        .dirs
        .iter()
        .flat_map(|d| d.iter().map(|p| p.0))
        .chain(log.hist.iter().flat_map(|d| d.iter().map(|p| p.0)))
        .fold(f64::INFINITY, f64::min);
    if first.is_finite() && first > 1e8 {
        log.from_epoch = true;
        log.dirs.iter_mut().flatten().for_each(|p| p.0 -= first);
        log.hist.iter_mut().flatten().for_each(|p| p.0 -= first);
    }
}

pub fn load(path: &Path) -> Result<Log, ReadError> {
    let text = super::read_text(path)?;
    parse(&text, &path.display().to_string())
}

/// The logs of one job: same directory, prefix and job number.
#[derive(Clone, Debug)]
pub struct JobLogs {
    /// "job hj", "job hj (number 2 in its run)", with the directory
    /// when jobs of several directories share a name.
    pub title: String,
    pub logs: Vec<Log>,
}

/// Whose logs: directory, prefix, job number.
type JobKey = (String, String, Option<u32>);

/// Logs grouped by job, in the order first given; within a job,
/// bandwidth, IOPS, latency, histogram.
pub fn by_job(logs: &[Log]) -> Vec<JobLogs> {
    let key = |l: &Log| -> JobKey { (l.dir(), l.name.prefix.clone(), l.name.job) };
    let mut groups: Vec<(JobKey, Vec<Log>)> = Vec::new();
    for l in logs {
        let k = key(l);
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1.push(l.clone()),
            None => groups.push((k, vec![l.clone()])),
        }
    }
    // Several numbers for one prefix in one directory: each says its own.
    let numbered = |dir: &str, prefix: &str| {
        groups
            .iter()
            .filter(|g| g.0 .0 == dir && g.0 .1 == prefix)
            .count()
            > 1
    };
    let dirs = {
        let mut d: Vec<&String> = groups.iter().map(|g| &g.0 .0).collect();
        d.sort();
        d.dedup();
        d.len()
    };
    let order = |l: &Log| match l.name.kind {
        LogKind::Bandwidth => 0,
        LogKind::Iops => 1,
        LogKind::Latency(_) => 2,
        LogKind::Histogram => 3,
    };
    groups
        .iter()
        .map(|((dir, prefix, job), logs)| {
            let mut title = format!("job {prefix}");
            if let Some(n) = job.filter(|n| *n != 1 || numbered(dir, prefix)) {
                title.push_str(&format!(" (number {n} in its run)"));
            }
            if dirs > 1 {
                let d = if dir.is_empty() { "." } else { dir };
                title.push_str(&format!(" in {d}"));
            }
            let mut logs = logs.clone();
            logs.sort_by_key(order);
            JobLogs { title, logs }
        })
        .collect()
}

/// At most `max` points: more are averaged (time and value) over equal
/// time windows. Also returns the window (s) when it averaged.
pub fn thin(points: &[(f64, f64)], max: usize) -> (Vec<(f64, f64)>, Option<f64>) {
    if points.len() <= max || max == 0 {
        return (points.to_vec(), None);
    }
    let (t0, t1) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
            (a.0.min(p.0), a.1.max(p.0))
        });
    let w = ((t1 - t0) / max as f64).max(f64::MIN_POSITIVE);
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut acc: Option<(i64, f64, f64, f64)> = None;
    for (t, v) in points {
        let k = ((t - t0) / w).floor() as i64;
        match &mut acc {
            Some((ak, st, sv, n)) if *ak == k => {
                *st += t;
                *sv += v;
                *n += 1.0;
            }
            _ => {
                if let Some((_, st, sv, n)) = acc {
                    out.push((st / n, sv / n));
                }
                acc = Some((k, *t, *v, 1.0));
            }
        }
    }
    if let Some((_, st, sv, n)) = acc {
        out.push((st / n, sv / n));
    }
    (out, Some(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::{bucket_of, Histogram};

    #[test]
    fn names_say_whose_log_and_of_what() {
        let n = name_of("db_bw.2.log").unwrap();
        assert_eq!(
            (n.prefix.as_str(), n.kind, n.job),
            ("db", LogKind::Bandwidth, Some(2))
        );
        let n = name_of("my_job_clat_hist.1.log").unwrap();
        assert_eq!((n.prefix.as_str(), n.kind), ("my_job", LogKind::Histogram));
        assert_eq!(
            name_of("a_clat.3.log").unwrap().kind,
            LogKind::Latency("clat")
        );
        assert_eq!(
            name_of("a_lat.3.log").unwrap().kind,
            LogKind::Latency("lat")
        );
        assert_eq!(name_of("agg-read_bw.log").unwrap().job, None);
        assert_eq!(name_of("x.log"), None);
        assert_eq!(name_of("_bw.1.log"), None);
    }

    #[test]
    fn fio_log_lines_are_read_per_direction() {
        let l = parse(
            "500, 2048, 0, 4096, 0\n1000, 4096, 1, 4096, 0, 0\n",
            "d/job_bw.1.log",
        )
        .unwrap();
        assert_eq!(l.name.kind, LogKind::Bandwidth);
        assert_eq!(l.dirs[0], vec![(0.5, 2048.0)]);
        assert_eq!(l.dirs[1], vec![(1.0, 4096.0)]);
        assert_eq!(l.file(), "job_bw.1.log");
        assert!(parse("x, y, z", "job_bw.1.log").is_err());
        assert!(parse("", "job_iops.1.log").is_err());
        assert!(parse("1, 2, 0", "job.1.log").is_err());
        // Unix epoch times start at the first sample.
        let e = parse(
            "1752138245000, 10, 0\n1752138245500, 12, 0\n",
            "e_iops.1.log",
        )
        .unwrap();
        assert!(e.from_epoch);
        assert_eq!(e.dirs[0], vec![(0.0, 10.0), (0.5, 12.0)]);
    }

    /// A histogram log line of `lat` (ns, count) pairs, fio's layout
    /// coarsened by `coarse`.
    fn hist_line(t: u64, dir: u32, lat: &[(u64, u64)], coarse: u32) -> String {
        let mut h = Histogram::new();
        for (v, n) in lat {
            for _ in 0..*n {
                h.record(*v);
            }
        }
        let step = 1usize << coarse;
        let b = h.buckets();
        let bins: Vec<String> = (0..NR / step)
            .map(|i| b[i * step..(i + 1) * step].iter().sum::<u64>().to_string())
            .collect();
        format!("{t}, {dir}, 4096, {}\n", bins.join(", "))
    }

    #[test]
    fn histogram_logs_become_percentiles_over_time() {
        // 1000 completions per interval: 900 at 100 µs, 90 at 1 ms, 9 at
        // 10 ms, 1 at 50 ms; the second interval twice as slow.
        let mut text = String::new();
        for (t, k) in [(500, 1), (1000, 2)] {
            let lat = [
                (100_000 * k, 900),
                (1_000_000 * k, 90),
                (10_000_000 * k, 9),
                (50_000_000 * k, 1),
            ];
            text.push_str(&hist_line(t, 0, &lat, 0));
        }
        let l = parse(&text, "h_clat_hist.1.log").unwrap();
        assert_eq!(l.hist_step, 1);
        assert_eq!(l.hist[0].len(), 2);
        let mid = |v: u64| bucket_value(bucket_of(v)) as f64;
        assert_eq!(
            l.hist[0][0],
            (
                0.5,
                [mid(100_000), mid(100_000), mid(1_000_000), mid(10_000_000)]
            )
        );
        assert_eq!(l.hist[0][1].1[3], mid(20_000_000));
        // Coarsened bins (log_hist_coarseness=2): within a bin's width.
        let c = parse(
            &hist_line(250, 1, &[(100_000, 99), (5_000_000, 1)], 2),
            "h_clat_hist.1.log",
        )
        .unwrap();
        assert_eq!(c.hist_step, 4);
        let p50 = c.hist[1][0].1[0];
        assert!((p50 - 100_000.0).abs() / 100_000.0 < 4.0 / 64.0, "{p50}");
        let p999 = c.hist[1][0].1[3];
        assert!((p999 - 5e6).abs() / 5e6 < 4.0 / 64.0, "{p999}");
        // An empty interval draws no point; a wrong bin count is refused.
        let e = parse(&hist_line(250, 0, &[], 0), "h_clat_hist.1.log").unwrap();
        assert!(e.hist[0].is_empty());
        let err = parse("250, 0, 4096, 1, 2, 3\n", "h_clat_hist.1.log")
            .unwrap_err()
            .to_string();
        assert!(err.contains("3 histogram bins"), "{err}");
    }

    #[test]
    fn logs_are_grouped_and_named_by_job() {
        let log = |path: &str| parse("500, 1, 0\n", path).unwrap();
        let logs = [
            log("r/db_bw.1.log"),
            log("r/web_bw.2.log"),
            log("r/db_clat.1.log"),
            log("r/web_iops.2.log"),
            log("r/db_iops.1.log"),
        ];
        let g = by_job(&logs);
        let titles: Vec<&str> = g.iter().map(|g| g.title.as_str()).collect();
        assert_eq!(titles, ["job db", "job web (number 2 in its run)"]);
        let files: Vec<String> = g[0].logs.iter().map(Log::file).collect();
        assert_eq!(files, ["db_bw.1.log", "db_iops.1.log", "db_clat.1.log"]);
        // The same job in two directories: two groups, each with its own.
        let g = by_job(&[log("a/x_bw.1.log"), log("b/x_bw.1.log")]);
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].title, "job x in b");
    }

    #[test]
    fn long_logs_are_averaged_over_windows() {
        let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64 / 1000.0, 2.0)).collect();
        let (t, w) = thin(&pts, 100);
        assert!(t.len() <= 101 && t.len() >= 99, "{}", t.len());
        assert!(t.iter().all(|p| p.1 == 2.0));
        assert!((w.unwrap() - 0.09999).abs() < 1e-3);
        assert_eq!(thin(&pts[..5], 100).1, None);
    }
}
