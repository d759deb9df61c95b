//! Errors in job descriptions: one line, naming where the problem is
//! (`file:line:` for job files) and what was expected.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Where an option assignment came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Job file path, or `None` for the command line. Shared by every
    /// line of a file, so a long path is stored once.
    pub file: Option<Arc<str>>,
    pub line: usize,
}

impl Origin {
    pub fn file(path: &Path, line: usize) -> Self {
        Origin {
            file: Some(path.display().to_string().into()),
            line,
        }
    }

    /// A line of a file whose name is already shared.
    pub fn in_file(file: &Arc<str>, line: usize) -> Self {
        Origin {
            file: Some(file.clone()),
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
            Some(file) => write!(f, "{}:{}", one_line(file), self.line),
            None => write!(f, "command line"),
        }
    }
}

/// An error in a job description: the message, and where the problem
/// is (a job file's `file:line`; none for the command line). Displayed
/// as one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(origin.as_ref(), message))]
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

/// A value parser's refusal (no origin yet: the caller that knows where
/// the value came from adds it).
impl From<String> for JobError {
    fn from(message: String) -> Self {
        JobError::plain(message)
    }
}

impl From<&str> for JobError {
    fn from(message: &str) -> Self {
        JobError::plain(message.to_string())
    }
}

impl From<crate::job::expr::ExprError> for JobError {
    fn from(e: crate::job::expr::ExprError) -> Self {
        JobError::plain(String::from(e))
    }
}

/// The message alone, for callers that still carry text (the origin,
/// if any, is the caller's to add).
impl From<JobError> for String {
    fn from(e: JobError) -> Self {
        e.message
    }
}

/// `origin: message`, on one line.
fn render(origin: Option<&Origin>, message: &str) -> String {
    match origin {
        Some(o) => format!("{o}: {}", one_line(message)),
        None => one_line(message).into_owned(),
    }
}

/// `s` with control characters other than tab (newlines, NUL, escapes)
/// written as `\n`, `\0`, `\u{1b}`, so an error quoting user input stays
/// one line and cannot drive the terminal.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, true, |c| format!("\\u{{{c:x}}}"))
}

/// `s` for a terminal, on one line: every control character (line
/// breaks, tabs, NUL, escapes) written as `\n`, `\r`, `\t`, `\0` or
/// `\x1b`, so that a name read back from a file (a job name, a label, a
/// host) can neither drive the terminal nor forge a line of a table.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, false, |c| format!("\\x{c:02x}"))
}

/// `s` with its control characters escaped: `\n`, `\r`, `\0`, a tab
/// kept or written `\t`, any other as `other` gives its code.
fn escape_controls(s: &str, keep_tab: bool, other: fn(u32) -> String) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' if keep_tab => out.push('\t'),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&other(c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_stay_on_one_line() {
        let e = JobError::at(
            &Origin::file(Path::new("a\nb.fio"), 3),
            "'x\ny\0\u{1b}[2J' is bad".into(),
        );
        assert_eq!(e.to_string(), "a\\nb.fio:3: 'x\\ny\\0\\u{1b}[2J' is bad");
        assert_eq!(one_line("plain ünïcode\ttab"), "plain ünïcode\ttab");
    }

    #[test]
    fn printable_text_has_no_control_character() {
        assert_eq!(printable("plain ünïcode"), "plain ünïcode");
        assert_eq!(
            printable("a\u{1b}[2J\0b\nc\td\u{7f}\u{9b}"),
            "a\\x1b[2J\\0b\\nc\\td\\x7f\\x9b"
        );
    }
}
