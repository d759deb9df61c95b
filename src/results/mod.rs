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

/// Why a results file or a log could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read as text: missing, unreadable, larger
    /// than [`MAX_INPUT_BYTES`], or not UTF-8.
    #[error("cannot read '{path}': {why}")]
    Unreadable { path: String, why: String },
    /// The text is not a result file or log of a kind this reads; `at`
    /// names the file (and line).
    #[error("{at}: {why}")]
    Malformed { at: String, why: String },
}

impl ReadError {
    pub(crate) fn malformed(at: impl Into<String>, why: impl Into<String>) -> Self {
        ReadError::Malformed {
            at: at.into(),
            why: why.into(),
        }
    }
}

impl From<ReadError> for String {
    fn from(e: ReadError) -> String {
        e.to_string()
    }
}

/// Reads a results file or log as text, at most [`MAX_INPUT_BYTES`].
fn read_text(path: &std::path::Path) -> Result<String, ReadError> {
    let unreadable = |why: String| ReadError::Unreadable {
        path: path.display().to_string(),
        why,
    };
    let bytes = crate::job::jobfile::read_bounded(path, MAX_INPUT_BYTES)
        .map_err(|why| unreadable(why.to_string()))?;
    String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))
}

/// The largest result or log file `report` and `compare` read.
pub const MAX_INPUT_BYTES: u64 = 4 << 30;
