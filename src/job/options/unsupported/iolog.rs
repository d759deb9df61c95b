//! Unsupported I/O log options: recording the I/Os a job issues and
//! replaying recorded I/O logs or blktrace files.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NOT_YET: &str = "recording and replaying I/O logs is not implemented yet";
const BLKTRACE: &str = "merging blktrace files is not supported";

pub const OPTS: &[OptDef] = &[
    // Recording.
    unsupported(
        "write_iolog",
        Logs,
        "Record every I/O the job issues in this file, for later replay",
        NOT_YET,
    ),
    // Replaying.
    unsupported(
        "read_iolog",
        Logs,
        "Replay the I/Os recorded in this I/O log or blktrace file instead of the workload",
        NOT_YET,
    ),
    unsupported(
        "read_iolog_chunked",
        Logs,
        "Read the replayed log a piece at a time instead of all at once",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "replay_no_stall",
        Logs,
        "Replay as fast as possible, ignoring the recorded timestamps",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "replay_time_scale",
        Logs,
        "Replay at this percentage of the recorded speed",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "replay_redirect",
        Logs,
        "Send every replayed I/O to this device, whatever device it was recorded on",
        NOT_YET,
    ),
    unsupported(
        "replay_align",
        Logs,
        "Round replayed offsets down to a multiple of this power of two",
        NOT_YET,
    )
    .kind(Kind::Size),
    unsupported(
        "replay_scale",
        Logs,
        "Divide replayed offsets by this factor",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "replay_skip",
        Logs,
        "Kinds of replayed I/O to leave out: read, write, trim, sync",
        NOT_YET,
    ),
    // Merging several blktrace files into one replay.
    unsupported(
        "merge_blktrace_file",
        Logs,
        "Merge the read_iolog blktrace files into this file and replay the result",
        BLKTRACE,
    ),
    unsupported(
        "merge_blktrace_scalars",
        Logs,
        "Time scale, in percent, for each merged blktrace file (':'-separated)",
        BLKTRACE,
    ),
    unsupported(
        "merge_blktrace_iters",
        Logs,
        "How many times to repeat each merged blktrace file (':'-separated)",
        BLKTRACE,
    ),
];
