//! Unsupported reporting options: compressed logs and trim block error
//! statistics.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const COMPRESSED: &str = "iomark writes log files uncompressed; compress them afterwards";

pub const OPTS: &[OptDef] = &[
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
    unsupported(
        "block_error_percentiles",
        Stats,
        "Report a histogram of how many trims it took until blocks failed",
        "trim block error statistics are not supported",
    )
    .kind(Kind::Bool),
];
