//! Shared helpers for the integration tests: running the iomark binary and
//! fio, temporary directories, JSON parsing.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// The iomark binary built for these tests.
pub fn iomark() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iomark"))
}

/// Runs iomark with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    iomark()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run iomark")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs iomark with JSON output and returns the parsed document; panics
/// with stderr when it fails.
pub fn run_json(dir: &Path, args: &[&str]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--output-format=json");
    let o = run_in(dir, &all);
    assert!(o.status.success(), "iomark {args:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON from iomark {args:?}: {e}\n{}", stdout(&o)))
}

/// Whether Debian's fio is installed.
pub fn have_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Runs fio with JSON output in `dir`.
pub fn fio_json(dir: &Path, args: &[&str]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--output-format=json");
    let o = Command::new("fio")
        .args(&all)
        .current_dir(dir)
        .output()
        .expect("run fio");
    assert!(
        o.status.success(),
        "fio {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // fio may print notices before the JSON document.
    let text = String::from_utf8_lossy(&o.stdout);
    let start = text.find("{\n").unwrap_or(0);
    serde_json::from_str(&text[start..])
        .unwrap_or_else(|e| panic!("invalid JSON from fio {args:?}: {e}"))
}

/// Returns early from a test (with a message) when fio is missing.
#[macro_export]
macro_rules! require_fio {
    () => {
        if !$crate::common::have_fio() {
            eprintln!("skipped: fio is not installed (apt-get install fio)");
            return;
        }
    };
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iomark-test")
        .tempdir_in(scratch_root())
        .expect("temp dir")
}

/// A directory on a real filesystem (not tmpfs) for tests that need
/// O_DIRECT; falls back to the system temp dir.
pub fn scratch_root() -> std::path::PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("test-scratch");
    if std::fs::create_dir_all(&target).is_ok() {
        target
    } else {
        std::env::temp_dir()
    }
}
