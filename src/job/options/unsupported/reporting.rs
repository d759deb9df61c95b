//! Unsupported reporting options: time-series log files (bandwidth, IOPS,
//! latency, histograms), their format and compression, and extra
//! statistics (disk utilisation, trim block errors).

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NOT_YET: &str = "not implemented yet";
const COMPRESSED: &str = "iomark writes log files uncompressed; compress them afterwards";

pub const OPTS: &[OptDef] = &[
    // Which logs to write.
    unsupported(
        "write_bw_log",
        Logs,
        "Write a bandwidth log with this file name prefix",
        NOT_YET,
    ),
    unsupported(
        "write_iops_log",
        Logs,
        "Write an IOPS log with this file name prefix",
        NOT_YET,
    ),
    unsupported(
        "write_lat_log",
        Logs,
        "Write submission, completion and total latency logs with this file name prefix",
        NOT_YET,
    ),
    unsupported(
        "write_hist_log",
        Logs,
        "Write a completion latency histogram log with this file name prefix",
        NOT_YET,
    ),
    unsupported(
        "per_job_logs",
        Logs,
        "Give each job's logs their own file names (otherwise jobs of the same name share one)",
        NOT_YET,
    )
    .kind(Kind::Bool),
    // What the log entries hold.
    unsupported(
        "log_avg_msec",
        Logs,
        "Write one averaged log entry per this many milliseconds instead of one per I/O",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "log_max_value",
        Logs,
        "Log the maximum of each averaging window instead of the mean",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "log_hist_msec",
        Logs,
        "Write one histogram log entry per this many milliseconds",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "log_hist_coarseness",
        Logs,
        "Merge histogram log bins: each step from 0 to 6 halves their number",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "log_offset",
        Logs,
        "Add each I/O's offset to the log entries",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "log_prio",
        Logs,
        "Add each I/O's priority to the log entries",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "log_entries",
        Logs,
        "Number of log entries to allocate up front",
        NOT_YET,
    )
    .kind(Kind::Int),
    // Timestamps in logs.
    unsupported(
        "log_unix_epoch",
        Logs,
        "Write Unix timestamps in the logs instead of time since the job started",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "log_alternate_epoch",
        Logs,
        "Write timestamps from the clock chosen by log_alternate_epoch_clock_id",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "log_alternate_epoch_clock_id",
        Logs,
        "clock_gettime clock id used for log timestamps with log_alternate_epoch",
        NOT_YET,
    )
    .kind(Kind::Int),
    // Compressed logs.
    unsupported(
        "log_compression",
        Logs,
        "Compress logs in memory in chunks of this size while running",
        COMPRESSED,
    )
    .kind(Kind::Size),
    unsupported(
        "log_compression_cpus",
        Logs,
        "CPUs that may compress logs in the background",
        COMPRESSED,
    )
    .kind(Kind::List),
    unsupported(
        "log_store_compressed",
        Logs,
        "Store the log files compressed",
        COMPRESSED,
    )
    .kind(Kind::Bool),
    // Extra statistics.
    unsupported(
        "disk_util",
        Stats,
        "Report the utilisation of the devices under the job's files",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "block_error_percentiles",
        Stats,
        "Report a histogram of how many trims it took until blocks failed",
        "trim block error statistics are not supported",
    )
    .kind(Kind::Bool),
];
