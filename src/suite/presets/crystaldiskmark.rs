//! CrystalDiskMark's test sets, in fio terms.
//!
//! CrystalDiskMark (Windows, driving DiskSpd) names tests by block size,
//! queue depth (Q) and threads (T): "SEQ1M Q8T1" is sequential 1 MiB I/O
//! with 8 requests in flight from one thread. Its threads share one test
//! file (1 GiB by default), each test runs 5 s, and reads run before
//! writes. Tn maps to fio's `numjobs=n` on a shared `filename`, Qn to
//! `iodepth=n` with an asynchronous engine and direct I/O.
//!
//! Unlike CrystalDiskMark, iomark reports the median of the measured
//! passes with their spread, not the best pass.

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

/// The default profile: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1.
pub const DEFAULT: Preset = Preset {
    name: "crystaldiskmark",
    summary: "CrystalDiskMark's default set: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write",
    about: "Sequential 1 MiB transfers at queue depth 8 and 1, random 4 KiB \
            transfers at queue depth 32 and 1, one thread each, all on one \
            shared 1 GiB test file with direct I/O; reads first, then writes. \
            These are the tests CrystalDiskMark runs by default, so results \
            line up with the figures people quote for consumer drives.",
    shared_file: Some("iomark-cdm.tmp"),
    size: "1g",
    runtime_s: 5,
    passes: 5,
    warmup_s: 5,
    direct: true,
    engines: &[],
    global: &[],
    tests: &[
        t("seq1m-q8t1-read", "SEQ1M Q8T1", &[("rw", "read"), ("bs", "1m"), ("iodepth", "8"), ("numjobs", "1")]),
        t("seq1m-q1t1-read", "SEQ1M Q1T1", &[("rw", "read"), ("bs", "1m"), ("iodepth", "1"), ("numjobs", "1")]),
        t("rnd4k-q32t1-read", "RND4K Q32T1", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "32"), ("numjobs", "1")]),
        t("rnd4k-q1t1-read", "RND4K Q1T1", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "1"), ("numjobs", "1")]),
        t("seq1m-q8t1-write", "SEQ1M Q8T1", &[("rw", "write"), ("bs", "1m"), ("iodepth", "8"), ("numjobs", "1")]),
        t("seq1m-q1t1-write", "SEQ1M Q1T1", &[("rw", "write"), ("bs", "1m"), ("iodepth", "1"), ("numjobs", "1")]),
        t("rnd4k-q32t1-write", "RND4K Q32T1", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "32"), ("numjobs", "1")]),
        t("rnd4k-q1t1-write", "RND4K Q1T1", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "1"), ("numjobs", "1")]),
    ],
};

/// The "NVMe SSD" profile: deeper queues and more threads, which NVMe
/// drives need before they reach their rated figures.
pub const NVME: Preset = Preset {
    name: "crystaldiskmark-nvme",
    summary: "CrystalDiskMark's NVMe SSD set: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1, read and write",
    about: "CrystalDiskMark's profile for NVMe drives: sequential 1 MiB at \
            queue depth 8, sequential 128 KiB at queue depth 32, random 4 KiB \
            from 16 threads at queue depth 32 each (512 requests in flight), \
            and random 4 KiB at queue depth 1 — the latency-bound case no \
            amount of parallelism helps. One shared 1 GiB test file, direct \
            I/O, reads first.",
    shared_file: Some("iomark-cdm.tmp"),
    size: "1g",
    runtime_s: 5,
    passes: 5,
    warmup_s: 5,
    direct: true,
    engines: &[],
    global: &[],
    tests: &[
        t("seq1m-q8t1-read", "SEQ1M Q8T1", &[("rw", "read"), ("bs", "1m"), ("iodepth", "8"), ("numjobs", "1")]),
        t("seq128k-q32t1-read", "SEQ128K Q32T1", &[("rw", "read"), ("bs", "128k"), ("iodepth", "32"), ("numjobs", "1")]),
        t("rnd4k-q32t16-read", "RND4K Q32T16", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "32"), ("numjobs", "16")]),
        t("rnd4k-q1t1-read", "RND4K Q1T1", &[("rw", "randread"), ("bs", "4k"), ("iodepth", "1"), ("numjobs", "1")]),
        t("seq1m-q8t1-write", "SEQ1M Q8T1", &[("rw", "write"), ("bs", "1m"), ("iodepth", "8"), ("numjobs", "1")]),
        t("seq128k-q32t1-write", "SEQ128K Q32T1", &[("rw", "write"), ("bs", "128k"), ("iodepth", "32"), ("numjobs", "1")]),
        t("rnd4k-q32t16-write", "RND4K Q32T16", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "32"), ("numjobs", "16")]),
        t("rnd4k-q1t1-write", "RND4K Q1T1", &[("rw", "randwrite"), ("bs", "4k"), ("iodepth", "1"), ("numjobs", "1")]),
    ],
};
