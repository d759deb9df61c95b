//! Errors in job descriptions: one line, naming where the problem is
//! (`file:line:` for job files) and what was expected.

use std::fmt;
use std::path::Path;

/// Where an option assignment came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Job file path, or `None` for the command line.
    pub file: Option<String>,
    pub line: usize,
}

impl Origin {
    pub fn file(path: &Path, line: usize) -> Self {
        Origin {
            file: Some(path.display().to_string()),
            line,
        }
    }

    pub fn cli() -> Self {
        Origin {
            file: None,
            line: 0,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{}:{}", file, self.line),
            None => write!(f, "command line"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    pub origin: Option<Origin>,
    pub message: String,
}

impl JobError {
    pub fn plain(message: String) -> Self {
        JobError {
            origin: None,
            message,
        }
    }

    pub fn at(origin: &Origin, message: String) -> Self {
        let origin = if origin.file.is_some() {
            Some(origin.clone())
        } else {
            None
        };
        JobError { origin, message }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Some(o) => write!(f, "{o}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for JobError {}
