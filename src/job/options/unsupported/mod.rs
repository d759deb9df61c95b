//! Options fio documents that iomark does not implement (yet).
//!
//! Every entry is an `unsupported(name, category, help, reason)`: the name
//! and aliases are known, so using one gives a one-line error naming the
//! option and the reason, never a silent no-op or a misleading "unknown
//! option". When an option gets implemented, its entry moves out of these
//! files into the family file beside `mod.rs` with a real setter.
//!
//! The files here are split by who is expected to implement them: engine
//! options, workload and job control, verification, I/O logs and
//! replay, reporting and logs, and fio's built-in profiles.

use super::OptDef;

mod engines;
mod profiles;
mod reporting;
mod verify;
mod workload;

/// The unsupported option tables, one per family.
pub const GROUPS: &[&[OptDef]] = &[
    workload::OPTS,
    verify::OPTS,
    reporting::OPTS,
    engines::OPTS,
    profiles::OPTS,
];
