//! Unsupported verification options: checking that data read back is the
//! data written, and the trim-then-verify options that build on it.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NO_VERIFY: &str = "data verification is not implemented yet";

pub const OPTS: &[OptDef] = &[
    // What to check and when.
    unsupported(
        "verify",
        Verify,
        "Checksum or pattern written into each block and checked on read: md5, crc32c, sha256, pattern, …",
        NO_VERIFY,
    ),
    unsupported(
        "do_verify",
        Verify,
        "Read back and check the data after the write phase",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    unsupported(
        "verify_only",
        Verify,
        "Skip the workload and only check data a previous run wrote",
        NO_VERIFY,
    )
    .kind(Kind::Switch),
    unsupported(
        "verify_backlog",
        Verify,
        "Check written blocks after every this many writes instead of at the end",
        NO_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "verify_backlog_batch",
        Verify,
        "How many blocks to check each time verify_backlog triggers",
        NO_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "experimental_verify",
        Verify,
        "Use the experimental verification method",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    // Where the verification header goes and what it holds.
    unsupported(
        "verify_offset",
        Verify,
        "Move the verification header this far into each block",
        NO_VERIFY,
    )
    .kind(Kind::Size),
    unsupported(
        "verify_interval",
        Verify,
        "Put a verification header every this many bytes instead of once per block",
        NO_VERIFY,
    )
    .kind(Kind::Size),
    unsupported(
        "verify_pattern",
        Verify,
        "Pattern written and checked by verify=pattern",
        NO_VERIFY,
    ),
    // What happens on a mismatch.
    unsupported(
        "verify_fatal",
        Verify,
        "Stop the job at the first verification failure",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    unsupported(
        "verify_dump",
        Verify,
        "Save the expected and the actual contents of a block that fails verification",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    // Offloading verification to threads.
    unsupported(
        "verify_async",
        Verify,
        "Number of threads that verify in the background",
        NO_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "verify_async_cpus",
        Verify,
        "CPUs the background verification threads may use",
        NO_VERIFY,
    )
    .kind(Kind::List),
    // Saving and loading the write state across runs.
    unsupported(
        "verify_state_save",
        Verify,
        "Save how far the writes got when the job is stopped, for a later verify run",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    unsupported(
        "verify_state_load",
        Verify,
        "Load a saved write state so verification checks only what was written",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    // Trims that are checked by verification.
    unsupported(
        "trim_percentage",
        Verify,
        "Share of verified blocks to trim",
        NO_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "trim_verify_zero",
        Verify,
        "Check that trimmed blocks read back as zeroes",
        NO_VERIFY,
    )
    .kind(Kind::Bool),
    unsupported(
        "trim_backlog",
        Verify,
        "Trim after every this many blocks written",
        NO_VERIFY,
    )
    .kind(Kind::Int),
    unsupported(
        "trim_backlog_batch",
        Verify,
        "How many blocks to trim each time trim_backlog triggers",
        NO_VERIFY,
    )
    .kind(Kind::Int),
];
