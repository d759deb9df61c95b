//! The basic access patterns every storage evaluation starts from, each
//! read and write:
//!
//! - sequential 1 MiB at queue depth 8 — streaming throughput (backups,
//!   media, large copies), limited by the interface or the media;
//! - random 4 KiB at queue depth 1 — pure latency, one request at a time,
//!   as a single-threaded application sees the device;
//! - random 4 KiB at queue depth 32 — peak IOPS, what parallel flash can
//!   do when given enough work (32 is a common NCQ/NVMe sweet spot and
//!   the depth datasheets quote);
//! - random 1 MiB at queue depth 8 — large random transfers (object
//!   stores, VM images), between the two extremes.
//!
//! Direct I/O, one shared 1 GiB file, 10 s per test.

use super::{Preset, PresetTest};

const fn t(
    section: &'static str,
    label: &'static str,
    options: &'static [(&'static str, &'static str)],
) -> PresetTest {
    PresetTest {
        section,
        label,
        options,
    }
}

pub const PATTERNS: Preset = Preset {
    name: "patterns",
    summary: "Basic patterns: sequential 1M QD8; random 4K QD1; random 4K QD32; random 1M QD8 — read and write",
    about: "The four access patterns a storage evaluation starts from, read \
            and write: sequential large blocks (streaming throughput), random \
            4 KiB one at a time (latency), random 4 KiB with 32 in flight \
            (peak IOPS), random large blocks (large scattered transfers). \
            Direct I/O on one shared file.",
    shared_file: Some("iomark-patterns.tmp"),
    size: "1g",
    runtime_s: 10,
    passes: 1,
    warmup_s: 2,
    direct: true,
    engines: &[],
    global: &[],
    tests: &[
        t("seq-read-1m-qd8", "seq 1M QD8", &[("rw", "read"), ("bs", "1m"), ("iodepth", "8")]),
        t("seq-write-1m-qd8", "seq 1M QD8", &[("rw", "write"), ("bs", "1m"), ("iodepth", "8")]),
        t("rand-read-4k-qd1", "rand 4K QD1", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "1")]),
        t("rand-write-4k-qd1", "rand 4K QD1", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "1")]),
        t("rand-read-4k-qd32", "rand 4K QD32", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "32")]),
        t("rand-write-4k-qd32", "rand 4K QD32", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "32")]),
        t("rand-read-1m-qd8", "rand 1M QD8", &[("rw", "randread"), ("bs", "1m"), ("iodepth", "8")]),
        t("rand-write-1m-qd8", "rand 1M QD8", &[("rw", "randwrite"), ("bs", "1m"), ("iodepth", "8")]),
    ],
};
