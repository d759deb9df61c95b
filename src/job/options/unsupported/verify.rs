//! Unsupported verification options: background verify threads' CPUs,
//! fio's experimental verification, and the trim-then-verify options.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const TRIM_VERIFY: &str = "iomark does not trim written blocks to check they read back as zeroes";

pub const OPTS: &[OptDef] = &[
    unsupported(
        "experimental_verify",
        Verify,
        "Use the experimental verification method",
        "iomark has only the standard verification",
    )
    .kind(Kind::Bool),
    unsupported(
        "verify_async_cpus",
        Verify,
        "CPUs the background verification threads may use",
        "iomark checks blocks in the job's own thread (see verify_async), so there are no verify threads to place",
    )
    .kind(Kind::List),
    // Trims that are checked by verification.
    unsupported(
        "trim_percentage",
        Verify,
        "Share of verified blocks to trim",
        TRIM_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "trim_verify_zero",
        Verify,
        "Check that trimmed blocks read back as zeroes",
        TRIM_VERIFY,
    )
    .kind(Kind::Bool),
    unsupported(
        "trim_backlog",
        Verify,
        "Trim after every this many blocks written",
        TRIM_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "trim_backlog_batch",
        Verify,
        "How many blocks to trim each time trim_backlog triggers",
        TRIM_VERIFY,
    )
    .kind(Kind::Int),
];
