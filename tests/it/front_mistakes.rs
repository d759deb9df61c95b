//! A newcomer's mistakes (the ten of the front-door issue and one more),
//! one row each: what was typed (in a directory set up as the row says),
//! the exit code, and the one line on stderr that answers it; where the
//! answer gives advice, the advice is a command that works.

use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// Where a row runs.
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    /// An empty directory with no results history.
    Empty,
    /// A file named `iomark-quick.tmp` that iomark did not create.
    Leftover,
    /// A history with one quick run in it (also its `q.json`).
    OneRun,
    /// An empty directory on a tmpfs (/dev/shm).
    Tmpfs,
}

struct Mistake {
    setup: Setup,
    args: &'static [&'static str],
    code: i32,
    /// The whole of stderr: one line.
    answer: &'static str,
    /// A command the answer tells the user to run: it succeeds.
    then: &'static [&'static str],
}

const SMALL_QUICK: &[&str] = &[
    "quick",
    "--size=4m",
    "--runtime=100ms",
    "--passes=1",
    "--no-warmup",
    "--eta=never",
];

const MISTAKES: &[Mistake] = &[
    // 1. A mistyped command.
    Mistake {
        setup: Setup::Empty,
        args: &["quik"],
        code: 1,
        answer: "iomark: 'quik' is neither a command nor a job file (did you mean 'iomark quick'?)",
        then: &["quick", "--print-jobfile"],
    },
    // 2. A test file left by a killed run: the advice is to delete it,
    // not an option quick does not take.
    Mistake {
        setup: Setup::Leftover,
        args: &["quick", "--size=4m", "--runtime=100ms"],
        code: 1,
        answer: "iomark quick: test file 'iomark-quick.tmp' already exists; iomark only removes \
                 files it creates, so it will not use it (delete it if an interrupted run left \
                 it, or choose another directory)",
        then: &[],
    },
    // 3. A job option given to quick anyway.
    Mistake {
        setup: Setup::Empty,
        args: &["quick", "allow_destroy_data=1"],
        code: 1,
        answer: "iomark quick: 'allow_destroy_data=1' is not a directory; this command takes a \
                 directory and its own --options, not job options (see its --help)",
        then: &["quick", "--help"],
    },
    // 4. trend without --test: the tests it could draw, by key.
    Mistake {
        setup: Setup::OneRun,
        args: &["trend"],
        code: 1,
        answer: "iomark trend: name the test with --test; the history has 8: \
                 seq1m-q8t1-read/read, seq1m-q1t1-read/read, rnd4k-q32t1-read/read, \
                 rnd4k-q1t1-read/read, seq1m-q8t1-write/write, seq1m-q1t1-write/write, \
                 rnd4k-q32t1-write/write, rnd4k-q1t1-write/write",
        then: &["trend", "--test", "rnd4k-q1t1-write/write"],
    },
    // 5. A benchmark of RAM: said once, not once per test.
    Mistake {
        setup: Setup::Tmpfs,
        args: SMALL_QUICK,
        code: 0,
        answer: "iomark: warning: 'iomark-quick.tmp' is on tmpfs (memory): results measure RAM, \
                 not a storage device",
        then: &[],
    },
    // 6. history before any run: an empty history, as JSON too (below).
    Mistake {
        setup: Setup::Empty,
        args: &["history", "--json"],
        code: 0,
        answer: "iomark history: there is no results history at '{db}' yet (quick, suite and \
                 sweep record their runs there)",
        then: &[],
    },
    // 7. A unit that is not one.
    Mistake {
        setup: Setup::Empty,
        args: &["quick", "--units", "GB"],
        code: 1,
        answer: "iomark quick: --units: 'GB' is not a unit (MB for MB/s of 1,000,000 bytes, MiB \
                 for MiB/s of 1,048,576 bytes)",
        then: &[],
    },
    // 8. A size without a unit, meant as megabytes.
    Mistake {
        setup: Setup::Empty,
        args: &["quick", "--size=64"],
        code: 1,
        answer: "iomark quick: --size: '64' is 64 bytes (a size without a unit counts bytes), too \
                 small for a test file; give a unit, e.g. --size=64m",
        then: &["quick", "--size=64m", "--print-jobfile"],
    },
    // 9. compare with one run.
    Mistake {
        setup: Setup::OneRun,
        args: &["compare", "q.json"],
        code: 1,
        answer: "iomark compare: give BASE and NEW, or --base RUN… --new RUN… (see --help)",
        then: &["compare", "q.json", "q.json"],
    },
    // 10. suite without a preset.
    Mistake {
        setup: Setup::Empty,
        args: &["suite"],
        code: 1,
        answer: "iomark suite: name a preset (iomark suite --list shows them)",
        then: &["suite", "--list"],
    },
    // 11. A command's options before the command (fio's place for them).
    Mistake {
        setup: Setup::Empty,
        args: &["--units", "MB", "quick", "--print-jobfile"],
        code: 1,
        answer: "iomark: 'quick' comes first, its options after it: iomark quick --units MB \
                 --print-jobfile",
        then: &["quick", "--units", "MB", "--print-jobfile"],
    },
];

/// A directory set up as `setup` says; None when it cannot be here.
fn prepare(setup: Setup) -> Option<tempfile::TempDir> {
    let dir = match setup {
        Setup::Tmpfs => {
            let shm = Path::new("/dev/shm");
            let is_tmpfs = std::fs::read_to_string("/proc/self/mountinfo")
                .map(|m| {
                    m.lines()
                        .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "))
                })
                .unwrap_or(false);
            if !cfg!(target_os = "linux") {
                // A Linux mistake: Windows has no tmpfs to be misled by.
                return None;
            }
            if !shm.is_dir() || !is_tmpfs {
                missing("/dev/shm is not a tmpfs here");
                return None;
            }
            tempfile::tempdir_in(shm).unwrap()
        }
        _ => tempdir(),
    };
    match setup {
        Setup::Leftover => std::fs::write(dir.path().join("iomark-quick.tmp"), b"mine").unwrap(),
        Setup::OneRun => {
            let mut a = SMALL_QUICK.to_vec();
            a.extend(["--json", "q.json", "--html", "q.html"]);
            let o = run_with_history(dir.path(), &a);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        _ => {}
    }
    Some(dir)
}

/// The files in `dir` but the history's (SQLite's -wal and -shm come
/// and go with readers), sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("history.sqlite"))
        .collect();
    v.sort();
    v
}

#[test]
fn each_newcomer_mistake_has_a_one_line_answer_that_leads_somewhere() {
    for (i, m) in MISTAKES.iter().enumerate() {
        let Some(dir) = prepare(m.setup) else {
            continue;
        };
        let d = dir.path();
        let before = files(d);
        let o = run_with_history(d, m.args);
        let err = stderr(&o);
        let want = m
            .answer
            .replace("{db}", &history_db(d).display().to_string());
        assert_eq!(
            err.trim_end(),
            want,
            "mistake {} ({:?}): stdout {}",
            i + 1,
            m.args,
            stdout(&o)
        );
        assert_eq!(o.status.code(), Some(m.code), "mistake {}: {err}", i + 1);
        if m.args[0] == "history" {
            let v: Value = serde_json::from_slice(&o.stdout).expect("history's JSON");
            assert_eq!(v, serde_json::json!({"runs": []}));
        }
        // A refused command leaves the directory as it was.
        if m.code != 0 {
            assert_eq!(before, files(d), "mistake {} left files", i + 1);
        }
        if m.setup == Setup::Leftover {
            assert_eq!(std::fs::read(d.join("iomark-quick.tmp")).unwrap(), b"mine");
        }
        if !m.then.is_empty() {
            let o = run_with_history(d, m.then);
            assert!(
                o.status.success(),
                "mistake {}: the advice {:?} fails: {}",
                i + 1,
                m.then,
                stderr(&o)
            );
        }
    }
}
