//! Unsupported reporting options: CPUs for background log compression and
//! trim block error statistics.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const COMPRESSED: &str = "iomark compresses logs (log_store_compressed) in the job's own thread as it writes them, with no background threads to place";

pub const OPTS: &[OptDef] = &[
    // Compressed logs.
    unsupported(
        "log_compression_cpus",
        Logs,
        "CPUs that may compress logs in the background",
        COMPRESSED,
    )
    .kind(Kind::List),
    unsupported(
        "block_error_percentiles",
        Stats,
        "Report a histogram of how many trims it took until blocks failed",
        "trim block error statistics are not supported",
    )
    .kind(Kind::Bool),
];
