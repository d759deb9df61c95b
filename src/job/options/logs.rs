//! Time-series logs: bandwidth, IOPS, latency and latency-histogram log
//! files, their averaging windows and line format (see `stats::logs`).

use super::{boolean, opt, size, uint_in, Category::*, Kind, OptDef};

/// A log prefix: empty (bare option) means "use the job name".
fn prefix(v: &str) -> Result<Option<String>, crate::job::JobError> {
    let v = v.trim();
    if v.contains('/') && v.ends_with('/') {
        return Err(format!("'{v}' names a directory, not a log file prefix").into());
    }
    Ok(Some(v.to_string()))
}

pub const OPTS: &[OptDef] = &[
    opt("write_bw_log", Logs, Kind::OptStr, "Write a bandwidth log (PREFIX_bw.N.log; bare: the job name as prefix)", |s, v| {
        s.log.write_bw_log = prefix(v)?;
        Ok(())
    }),
    opt("write_iops_log", Logs, Kind::OptStr, "Write an IOPS log (PREFIX_iops.N.log; bare: the job name as prefix)", |s, v| {
        s.log.write_iops_log = prefix(v)?;
        Ok(())
    }),
    opt("write_lat_log", Logs, Kind::OptStr, "Write submission, completion and total latency logs (PREFIX_slat/_clat/_lat.N.log)", |s, v| {
        s.log.write_lat_log = prefix(v)?;
        Ok(())
    }),
    opt("write_hist_log", Logs, Kind::OptStr, "Write completion latency histograms every log_hist_msec (PREFIX_clat_hist.N.log)", |s, v| {
        s.log.write_hist_log = prefix(v)?;
        Ok(())
    }),
    opt("log_avg_msec", Logs, Kind::Int, "Log one averaged line per direction every this many ms (0: a line per I/O)", |s, v| {
        s.log.log_avg_msec = uint_in(v, 0, crate::job::value::MAX_TIME_US / 1000)?;
        Ok(())
    })
    .default("0"),
    opt("log_hist_msec", Logs, Kind::Int, "Interval in ms between latency histogram log lines (0: none)", |s, v| {
        s.log.log_hist_msec = uint_in(v, 0, crate::job::value::MAX_TIME_US / 1000)?;
        Ok(())
    })
    .default("0"),
    opt("log_hist_coarseness", Logs, Kind::Int, "Merge 2^N neighbouring histogram bins in the histogram log (0-6)", |s, v| {
        s.log.log_hist_coarseness = uint_in(v, 0, 6)? as u32;
        Ok(())
    })
    .default("0"),
    opt("log_max_value", Logs, Kind::Bool, "In averaged latency logs, write the window's maximum instead of its mean", |s, v| {
        s.log.log_max_value = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_offset", Logs, Kind::Bool, "Add the I/O offset column to log lines", |s, v| {
        s.log.log_offset = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_store_compressed", Logs, Kind::Bool, "Write the bw, iops and latency logs as fio's compressed binary logs (FILE.log.fz, read back with fio --inflate-log)", |s, v| {
        s.log.log_store_compressed = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_compression", Logs, Kind::Size, "Chunk size for compressing logs in memory; iomark streams logs to disk as it goes, so they never build up in memory, and writes the same files", |s, v| {
        s.log.log_compression = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("log_prio", Logs, Kind::Bool, "Write the full I/O priority (hex) in the priority column of log lines", |s, v| {
        s.log.log_prio = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_unix_epoch", Logs, Kind::Bool, "Time-stamp log lines with Unix time in ms instead of time since the start", |s, v| {
        s.log.log_unix_epoch = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_alternate_epoch", Logs, Kind::Bool, "Time-stamp log lines with the clock chosen by log_alternate_epoch_clock_id", |s, v| {
        s.log.log_alternate_epoch = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("log_alternate_epoch_clock_id", Logs, Kind::Int, "clock_gettime clock id for log_unix_epoch/log_alternate_epoch (0 realtime, 1 monotonic, ...)", |s, v| {
        s.log.log_alternate_epoch_clock_id = uint_in(v, 0, 11)? as i32;
        Ok(())
    })
    .default("0"),
    opt("per_job_logs", Logs, Kind::Bool, "Put the job number in log file names (0: clones of a job share one file)", |s, v| {
        s.log.per_job_logs = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("log_entries", Logs, Kind::Int, "Initial log size in entries (1024-1048576); iomark streams logs to disk through a fixed buffer, so logs never grow in memory whatever this is", |s, v| {
        s.log.log_entries = uint_in(v, 1024, 1 << 20)?;
        Ok(())
    })
    .default("1024"),
];

#[cfg(test)]
mod tests {
    use crate::job::spec::JobSpec;

    fn set(name: &str, v: Option<&str>) -> Result<JobSpec, crate::job::JobError> {
        let mut s = JobSpec::default();
        let d = crate::job::options::lookup(name).unwrap();
        crate::job::options::apply(&mut s, d, v)?;
        Ok(s)
    }

    #[test]
    fn log_prefixes() {
        assert_eq!(
            set("write_bw_log", None).unwrap().log.write_bw_log,
            Some(String::new())
        );
        assert_eq!(
            set("write_lat_log", Some("x")).unwrap().log.write_lat_log,
            Some("x".into())
        );
        assert!(set("write_iops_log", Some("dir/")).is_err());
    }

    #[test]
    fn log_numbers() {
        assert_eq!(
            set("log_avg_msec", Some("250")).unwrap().log.log_avg_msec,
            250
        );
        assert!(set("log_hist_coarseness", Some("7")).is_err());
        assert_eq!(
            set("log_hist_coarseness", Some("6"))
                .unwrap()
                .log
                .log_hist_coarseness,
            6
        );
        assert!(!set("per_job_logs", Some("0")).unwrap().log.per_job_logs);
        assert!(set("log_entries", Some("10")).is_err());
    }
}
