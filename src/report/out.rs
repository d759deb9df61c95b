//! What a command says and writes: an error line on standard error, a
//! text on standard output (quiet when the reader went away), a report
//! file written whole or not at all.

use std::path::Path;

use crate::run::output::{self, Console};
use crate::run::signals;

pub fn fail(cmd: &str, msg: &str) -> i32 {
    output::stderr_line(&format!("iomark {cmd}: {msg}"));
    1
}

/// Prints `text` (usage, a job file) on standard output: 0, or the code
/// of its failure (141, quietly, when the reader went away).
pub fn print(cmd: &str, text: &str) -> i32 {
    let mut c = Console::default();
    c.print(text);
    match c.failure() {
        Some(m) => fail(cmd, &m),
        None => signals::exit_code().filter(|_| c.failed()).unwrap_or(0),
    }
}

/// Writes a report file, saying so when it replaces one. The file is
/// flushed, synced and closed before this says it was written; one that
/// could not be written completely is removed (see `run::output`).
pub fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let failed = |e: std::io::Error| {
        format!(
            "cannot write '{}': {}",
            path.display(),
            crate::job::jobfile::io_reason(&e)
        )
    };
    let mut f = output::ReportFile::create(path).map_err(failed)?;
    if f.replaces() {
        output::stderr_line(&format!("iomark: replacing existing '{}'", path.display()));
    }
    f.write(text);
    f.finish().map_err(failed)
}
