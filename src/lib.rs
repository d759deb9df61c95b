//! iomark: a storage I/O benchmark that runs fio job files and fio-style
//! command lines, does the same I/O, and reports in fio's formats.
//!
//! Data flow: `cli` / `job` parse into `JobSpec`s → `run::plan` lays out
//! groups, clones and files → `run::worker` threads drive an `engine` with
//! offsets from `workload` and record `stats` → `report` writes the
//! formats. `host` describes the machine and the storage once per run
//! (`run::session`); `suite` builds presets and comparisons on top.
//! Everything that runs a job list goes through `launch` (on this host,
//! or as one rank of many: `cluster`), which prepares, runs, merges,
//! reports and decides the exit code. `sys` is the operating system
//! underneath (Linux, macOS, FreeBSD, Windows).

//! `histogram` (the latency histogram) sits at the bottom with `sys`:
//! `stats` records into it, and engines that time their own requests
//! (the http engine's time to first byte) keep one.

// Per-direction arrays are indexed by direction number throughout.
#![allow(clippy::needless_range_loop)]

pub mod cli;
pub mod cluster;
pub mod engine;
pub mod histogram;
pub mod history;
pub mod host;
pub mod job;
pub mod launch;
pub mod outfile;
pub mod report;
pub mod results;
pub mod run;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod workload;
