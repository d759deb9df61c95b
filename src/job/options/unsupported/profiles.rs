//! Options of fio's built-in workload profiles (`profile=act`,
//! `profile=tiobench`). iomark has its own presets instead; these names are
//! listed so a job file using them gets a clear error. (The tiobench
//! profile's `size` is not listed: it shares its name with the job option;
//! nor is its `threads`, which job files write for `thread` and which is
//! accepted with a warning, see the control options.)

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const ACT: &str =
    "it belongs to fio's act profile; profiles are not supported (see the iomark presets)";
const TIOBENCH: &str =
    "it belongs to fio's tiobench profile; profiles are not supported (see the iomark presets)";

pub const OPTS: &[OptDef] = &[
    // The act (Aerospike Certification Tool) profile.
    unsupported("device-names", Misc, "act profile: devices to test", ACT),
    unsupported("load", Misc, "act profile: load multiplier", ACT).kind(Kind::Int),
    unsupported(
        "test-duration",
        Misc,
        "act profile: how long the whole test runs",
        ACT,
    )
    .kind(Kind::Time(crate::job::value::TimeUnit::Sec)),
    unsupported(
        "threads-per-queue",
        Misc,
        "act profile: reader threads per device",
        ACT,
    )
    .kind(Kind::Int),
    unsupported(
        "read-req-num-512-blocks",
        Misc,
        "act profile: 512-byte blocks per read",
        ACT,
    )
    .kind(Kind::Int),
    unsupported(
        "large-block-op-kbytes",
        Misc,
        "act profile: size of the large writes in KiB",
        ACT,
    )
    .kind(Kind::Int),
    unsupported("prep", Misc, "act profile: run the preparation phase", ACT).kind(Kind::Switch),
    // The tiobench profile.
    unsupported(
        "block",
        Misc,
        "tiobench profile: block size in bytes",
        TIOBENCH,
    )
    .kind(Kind::Int),
    unsupported(
        "numruns",
        Misc,
        "tiobench profile: number of runs",
        TIOBENCH,
    )
    .kind(Kind::Int),
    unsupported(
        "dir",
        Misc,
        "tiobench profile: directory to test in",
        TIOBENCH,
    ),
];
