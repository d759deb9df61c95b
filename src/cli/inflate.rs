//! `iomark --inflate-log=FILE`: a compressed (`.fz`) log, by iomark or
//! fio, printed as the text lines of the uncompressed log (see
//! `stats::inflate`).

use std::path::Path;

use crate::run::output::{self, Console};
use crate::run::signals;

/// The largest compressed log read (it is held in memory; what it
/// inflates to is not).
pub const MAX_BYTES: u64 = 4 << 30;

/// Prints the log; the exit status.
pub fn main(path: &Path) -> i32 {
    let fail = |why: &str| {
        output::stderr_line(&format!(
            "iomark: --inflate-log: cannot read '{}': {why}",
            path.display()
        ));
        1
    };
    let data = match crate::job::jobfile::read_bounded(path, MAX_BYTES) {
        Ok(d) => d,
        Err(why) => return fail(&why.message),
    };
    let mut console = Console::default();
    let r = crate::stats::inflate::inflate(&data, &mut |text| {
        console.print(text);
        !console.failed()
    });
    if let Some(m) = console.failure() {
        output::stderr_line(&format!("iomark: {m}"));
        return 1;
    }
    if console.failed() {
        // The reader went away: quietly, as for any output.
        return signals::exit_code().unwrap_or(1);
    }
    match r {
        Ok(()) => 0,
        Err(why) => fail(&why.0),
    }
}
