//! Server-like mixes. These are models, not traces: each stands for the
//! I/O shape of a class of server, with its parameters chosen as follows.
//!
//! - **database (OLTP data files)**: random reads and writes of whole
//!   pages. 8 KiB is the page size of PostgreSQL, SQL Server and Oracle's
//!   default block (InnoDB uses 16 KiB); 70 % reads / 30 % writes is the
//!   mix storage vendors and test plans conventionally call "OLTP"; four
//!   workers with 16 requests in flight each stand for a connection pool
//!   under load; direct I/O because database engines manage their own
//!   cache (InnoDB's O_DIRECT, for one).
//! - **database log (WAL / redo)**: sequential 8 KiB appends, each made
//!   durable with `fdatasync` before the next, one writer — a commit is
//!   acknowledged only once its log record is on stable storage, so this
//!   measures commit latency, the figure that bounds transactions/s.
//! - **web server**: 95 % reads of static content (pages, scripts,
//!   images) in sizes from 4 KiB to 256 KiB, 5 % writes (logs, uploads),
//!   eight workers with a few requests each — many clients, little depth
//!   per client.
//! - **file server**: whole-file transfers of documents and media, so
//!   larger blocks (64 KiB to 1 MiB, some 4 KiB metadata-sized), two reads
//!   for every write as on a general-purpose share, four clients with 8
//!   requests in flight.
//!
//! All four share one test file, with direct I/O, 10 s per test.

use super::{Preset, PresetTest};

pub const SERVER_MIX: Preset = Preset {
    name: "server-mix",
    summary: "Server mixes: OLTP database (8K 70/30), database log (8K append + fdatasync), web server (95% reads, 4K-256K), file server (67% reads, 64K-1M)",
    about: "Models of server I/O: an OLTP database's data files (8 KiB \
            random, 70% reads, 4 workers x QD16), its write-ahead log (8 KiB \
            sequential appends, fdatasync after each), a web server (95% \
            reads of 4-256 KiB, 8 workers x QD4) and a file server (67% \
            reads of 4 KiB-1 MiB, 4 clients x QD8). Direct I/O; see the \
            iomark source (suite/presets/server_mix.rs) for why these \
            parameters.",
    shared_file: Some("iomark-servermix.tmp"),
    size: "1g",
    runtime_s: 10,
    passes: 1,
    warmup_s: 2,
    direct: true,
    engines: &[],
    global: &[],
    tests: &[
        PresetTest {
            section: "database-oltp",
            label: "database OLTP",
            options: &[
                ("rw", "randrw"),
                ("rwmixread", "70"),
                ("bs", "8k"),
                ("iodepth", "16"),
                ("numjobs", "4"),
            ],
        },
        PresetTest {
            section: "database-log",
            label: "database log",
            options: &[("rw", "write"), ("bs", "8k"), ("iodepth", "1"), ("numjobs", "1"), ("fdatasync", "1")],
        },
        PresetTest {
            section: "web-server",
            label: "web server",
            options: &[
                ("rw", "randrw"),
                ("rwmixread", "95"),
                ("bssplit", "4k/20:16k/30:64k/30:256k/20"),
                ("iodepth", "4"),
                ("numjobs", "8"),
            ],
        },
        PresetTest {
            section: "file-server",
            label: "file server",
            options: &[
                ("rw", "randrw"),
                ("rwmixread", "67"),
                ("bssplit", "4k/10:64k/30:256k/30:1m/30"),
                ("iodepth", "8"),
                ("numjobs", "4"),
            ],
        },
    ],
};
