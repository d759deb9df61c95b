//! The Ars Technica tests: the three fio runs Jim Salter proposed for
//! judging a disk "the open source way" (Ars Technica, 2020), plus the
//! synchronous-write variant of the first.
//!
//! 1. one process writing 4 KiB blocks at random, queue depth 1 — the
//!    worst case, what a busy desktop's small scattered writes feel like;
//! 2. sixteen processes writing 64 KiB blocks at random, 16 in flight
//!    each — a busy server, many clients, mid-size requests;
//! 3. one process writing 1 MiB blocks at random — large transfers, the
//!    closest to a disk's advertised throughput;
//! 4. test 1 with `fsync=1` — every write made durable before the next,
//!    as databases and mail servers do; this is where consumer drives
//!    without power-loss protection collapse.
//!
//! The original runs are buffered (`direct=0`) and end with `end_fsync=1`
//! so cached data must reach the disk within the measurement; sizes are
//! the article's (4 GiB; 256 MiB per process; 16 GiB) and so is the 60 s
//! runtime. The article used the `posixaio` engine; iomark uses it when it
//! implements it, else its usual choice.

use super::{Preset, PresetTest};
use crate::job::EngineKind;

pub const ARS: Preset = Preset {
    name: "ars",
    summary: "Ars Technica's tests: 4K random write QD1; 16×64K random write QD16; 1M random write; 4K random write with fsync=1",
    about: "Three random-write tests from Ars Technica's guide to measuring \
            disks with fio, and the fsync=1 variant of the first: 4 KiB at \
            queue depth 1 from one process; 64 KiB at queue depth 16 from \
            sixteen processes; 1 MiB from one process; 4 KiB at queue depth \
            1 syncing every write. Buffered I/O with a final fsync, as in \
            the article, 60 s each.",
    shared_file: None,
    size: "4g",
    runtime_s: 60,
    passes: 1,
    warmup_s: 0,
    direct: false,
    engines: &[EngineKind::PosixAio],
    global: &[("end_fsync", "1")],
    tests: &[
        PresetTest {
            section: "ars-4k-randwrite-qd1",
            label: "4K rand write Q1T1",
            options: &[("rw", "randwrite"), ("bs", "4k"), ("size", "4g"), ("iodepth", "1"), ("numjobs", "1")],
        },
        PresetTest {
            section: "ars-64k-randwrite-q16t16",
            label: "64K rand write Q16T16",
            options: &[("rw", "randwrite"), ("bs", "64k"), ("size", "256m"), ("iodepth", "16"), ("numjobs", "16")],
        },
        PresetTest {
            section: "ars-1m-randwrite-q1t1",
            label: "1M rand write Q1T1",
            options: &[("rw", "randwrite"), ("bs", "1m"), ("size", "16g"), ("iodepth", "1"), ("numjobs", "1")],
        },
        PresetTest {
            section: "ars-4k-randwrite-fsync",
            label: "4K rand write fsync=1",
            options: &[("rw", "randwrite"), ("bs", "4k"), ("size", "4g"), ("iodepth", "1"), ("numjobs", "1"), ("fsync", "1")],
        },
    ],
};
