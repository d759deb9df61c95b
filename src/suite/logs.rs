//! fio's per-interval log files (`write_bw_log`, `write_iops_log`,
//! `write_lat_log`), as written by fio and iomark, for `iomark report`:
//! each line is `time_ms, value, direction, block size, offset[, prio]`
//! (value in KiB/s for bandwidth, I/Os per interval… per second for IOPS,
//! ns for latencies). The file name says which log it is
//! (`NAME_bw.N.log`, `NAME_iops.N.log`, `NAME_clat.N.log`, …).

use std::path::Path;

use crate::report::svg::{self, Axis, Format, LineChart, Scale, Series};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bandwidth,
    Iops,
    Latency,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Log {
    pub name: String,
    pub kind: LogKind,
    /// Per direction (0 read, 1 write, 2 trim): (seconds, value).
    pub dirs: [Vec<(f64, f64)>; 3],
}

/// What a log file holds, from its name.
pub fn kind_of(name: &str) -> Option<LogKind> {
    if name.contains("_hist.") {
        None
    } else if name.contains("_bw.") {
        Some(LogKind::Bandwidth)
    } else if name.contains("_iops.") {
        Some(LogKind::Iops)
    } else if name.contains("_lat.") || name.contains("_clat.") || name.contains("_slat.") {
        Some(LogKind::Latency)
    } else {
        None
    }
}

pub fn parse(text: &str, name: &str) -> Result<Log, String> {
    let kind = kind_of(name).ok_or_else(|| {
        format!(
            "{name}: not a bandwidth, IOPS or latency log (expected NAME_bw.N.log, \
             NAME_iops.N.log or NAME_[c|s]lat.N.log; histogram logs are not supported)"
        )
    })?;
    let mut dirs: [Vec<(f64, f64)>; 3] = Default::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || format!("{name}:{}: not a log line: '{line}'", i + 1);
        if f.len() < 3 {
            return Err(bad());
        }
        let t: f64 = f[0].parse().map_err(|_| bad())?;
        let v: f64 = f[1].parse().map_err(|_| bad())?;
        let d: usize = f[2].parse().map_err(|_| bad())?;
        if d > 2 {
            return Err(bad());
        }
        dirs[d].push((t / 1000.0, v));
    }
    if dirs.iter().all(Vec::is_empty) {
        return Err(format!("{name}: the log is empty"));
    }
    Ok(Log {
        name: name.to_string(),
        kind,
        dirs,
    })
}

pub fn load(path: &Path) -> Result<Log, String> {
    let bytes = crate::job::jobfile::read_bounded(path, super::MAX_INPUT_BYTES)
        .map_err(|why| format!("cannot read '{}': {why}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("cannot read '{}': it is not UTF-8 text", path.display()))?;
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse(&text, &name)
}

/// A log's chart, bandwidth in `unit`.
pub fn chart(log: &Log, unit: super::table::BwUnit) -> String {
    let (y, div, title) = match log.kind {
        LogKind::Bandwidth => (
            Axis::new(unit.name(), Scale::Linear, Format::Number),
            // KiB/s in the log.
            unit.bytes() / 1024.0,
            "bandwidth",
        ),
        LogKind::Iops => (
            Axis::new("IOPS", Scale::Linear, Format::Number),
            1.0,
            "IOPS",
        ),
        LogKind::Latency => (
            Axis::new("latency (log)", Scale::Log10, Format::Nanos),
            1.0,
            "latency",
        ),
    };
    let series = ["read", "write", "trim"]
        .iter()
        .enumerate()
        .filter(|(d, _)| !log.dirs[*d].is_empty())
        .map(|(d, n)| Series {
            name: n.to_string(),
            points: log.dirs[d].iter().map(|(t, v)| (*t, v / div)).collect(),
            color: Some(d),
            ..Series::default()
        })
        .collect();
    svg::line_chart(&LineChart {
        title: format!("{} — {title}", log.name),
        subtitle: "one run: the one that wrote this log file".into(),
        x: Axis::new("time (s)", Scale::Linear, Format::Number),
        y,
        series,
        width: 460,
        height: 240,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_log_lines_are_read_per_direction() {
        let l = parse(
            "500, 2048, 0, 4096, 0\n1000, 4096, 1, 4096, 0, 0\n",
            "job_bw.1.log",
        )
        .unwrap();
        assert_eq!(l.kind, LogKind::Bandwidth);
        assert_eq!(l.dirs[0], vec![(0.5, 2048.0)]);
        assert_eq!(l.dirs[1], vec![(1.0, 4096.0)]);
        assert!(
            chart(&l, crate::suite::table::BwUnit::Mib).contains("<polyline")
                || chart(&l, crate::suite::table::BwUnit::Mib).contains("<circle")
        );
        assert!(parse("x, y, z", "job_bw.1.log").is_err());
        assert!(parse("1, 2, 0", "job_clat_hist.1.log").is_err());
        assert!(parse("", "job_iops.1.log").is_err());
        assert_eq!(kind_of("a_clat.2.log"), Some(LogKind::Latency));
    }
}
