//! fio's example job files (Debian `fio-examples`, read from
//! /usr/share/doc/fio/examples at test time, never copied here) each parse,
//! or fail with exactly one line naming the engine or option iomark does
//! not support. Nothing may panic, hang, or write to the directory.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::common::*;

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// Extra arguments some examples need, taken from the usage notes at the
/// top of each file (they are meant to be run with --section and an
/// engine given on the command line).
fn extra_args(name: &str) -> &'static [&'static str] {
    match name {
        "xnvme-compare.fio" | "xnvme-zoned.fio" => &[
            "--section=default",
            "--ioengine=io_uring",
            "--sqthread_poll=1",
            // A device the notes ask for; --parse-only never opens it.
            "--filename=/dev/never-opened-by-parse-only",
        ],
        _ => &[],
    }
}

fn run_with_timeout(dir: &Path, args: &[&str], limit: Duration) -> Output {
    output_within(iomark().args(args).current_dir(dir), limit)
        .unwrap_or_else(|e| panic!("iomark {args:?}: {e}"))
}

/// Whether a one-line error names something iomark does not support.
fn names_unsupported(line: &str) -> bool {
    line.contains(" is not supported by iomark")
        || line.contains("are not supported by iomark")
        // An engine that only exists as an external plugin (cpp_null).
        || line.contains("unknown ioengine '")
}

#[test]
fn every_fio_example_parses_or_names_what_is_unsupported() {
    let _serial = cpu_heavy();
    let Ok(rd) = std::fs::read_dir(EXAMPLES) else {
        crate::common::missing(&format!(
            "{EXAMPLES} is missing (apt-get install fio-examples)"
        ));
        return;
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .fio files in {EXAMPLES}");
    let dir = tempdir();
    let mut parsed = 0;
    let mut unsupported = 0;
    let mut problems = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let path = f.to_string_lossy().into_owned();
        let mut args = vec!["--parse-only", path.as_str()];
        args.extend_from_slice(extra_args(&name));
        let o = run_with_timeout(dir.path(), &args, Duration::from_secs(20));
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().collect();
        match o.status.code() {
            Some(0) if err.is_empty() => parsed += 1,
            Some(1) if lines.len() == 1 && names_unsupported(lines[0]) => unsupported += 1,
            code => problems.push(format!("{name}: exit {code:?}: {err}")),
        }
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "--parse-only wrote files: {left:?}");
    eprintln!(
        "fio examples: {} files, {parsed} parse, {unsupported} name an unsupported engine or option",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(parsed >= 5, "only {parsed} examples parse");
}
