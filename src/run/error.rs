//! The run layer's errors: why a session cannot run its jobs (one line
//! for the user, nothing written to any target), and the data-safety
//! checks' refusals. A job clone that fails once the run is under way
//! reports an errno and a message instead (`files::FileError`,
//! `worker::setup::SetupError`).

use crate::engine::EngineError;

/// The data-safety checks refuse a target (see `safety`): one line
/// naming the path, what is at stake and the option that allows it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Why a session cannot run its jobs.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A job cannot be planned as written: its files and their sizes,
    /// offsets, `opendir`, `wait_for`, `write_iolog`, NUMA nodes, the
    /// trace it replays.
    #[error("{0}")]
    Plan(String),
    /// The data-safety checks refuse the run.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A job's engine cannot run it here (`engine::preflight`).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// `--readonly` and a job that writes, trims, appends, truncates,
    /// creates or deletes (`what` says which, and by which option).
    #[error("job '{job}' {what} but --readonly was given")]
    ReadOnly { job: String, what: String },
    /// The safety verdict the session's hooks settled on (every refusing
    /// rank's, on rank 0 of a run spread over several hosts).
    #[error("{0}")]
    Verdict(String),
    /// Another rank of a run spread over several hosts refused; it says
    /// why (rank 0, once for all), this rank says nothing.
    #[error("another rank refused the run")]
    RefusedElsewhere,
    /// An I/O scheduler cannot be switched.
    #[error("{0}")]
    Scheduler(String),
}
