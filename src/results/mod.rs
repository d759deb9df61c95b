//! The read side of results: a results file (fio or iomark JSON, a
//! results bundle) read into typed data (`dataset`), fio's per-interval
//! logs read into series (`logs`), the statistics of repeated passes
//! (medians, quartiles, Welch's test: `stats`) and the units results are
//! written in (`units`).
//!
//! It draws nothing (`report/` does) and runs nothing (`suite/` does); it
//! imports only the floors below it (`stats/`, `job/`, `sys/`).

pub mod dataset;
pub mod logs;
pub mod stats;
pub mod units;

/// The largest result or log file `report` and `compare` read.
pub const MAX_INPUT_BYTES: u64 = 4 << 30;
