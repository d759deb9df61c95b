//! The race test: while jobs with `unlink=1` and `--output`, and `quick`
//! (its test file's clean-up and its reports) run again and again, a
//! meddler swaps their directories for links to a directory of someone
//! else's files and plants links where their files go, in a loop. Every
//! run may succeed or refuse; none may change, remove or add a file in
//! the victims' directory (hashed before and after).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;

/// Files under `dir` with their hashes, by name.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64)> {
    use std::hash::{Hash, Hasher};
    let mut out: Vec<(PathBuf, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(e.path()).unwrap_or_default().hash(&mut h);
            (e.path(), h.finish())
        })
        .collect();
    out.sort();
    out
}

/// Swaps directory `dir` for a link to `to` and back, and plants links
/// from `plants` (a name → a victim; in place of what is there when
/// `replace`, else only where nothing is) while it is back, then rests
/// `rest_ms` milliseconds at most.
struct Meddler {
    dir: PathBuf,
    to: PathBuf,
    plants: Vec<(PathBuf, PathBuf, bool)>,
    rest_ms: u64,
}

impl Meddler {
    /// One round: swap, wait, restore, plant, wait, remove the links.
    fn round(&self, n: u64) {
        let moved = self.dir.with_extension("moved");
        if std::fs::rename(&self.dir, &moved).is_ok() {
            let _ = std::os::unix::fs::symlink(&self.to, &self.dir);
            std::thread::sleep(Duration::from_micros(200 + (n * 397) % 1500));
            let _ = std::fs::remove_file(&self.dir);
            let _ = std::fs::rename(&moved, &self.dir);
        }
        for (at, victim, replace) in &self.plants {
            if *replace {
                // In place of the run's own file (or nothing).
                let _ = std::fs::remove_file(at);
            }
            let _ = std::os::unix::fs::symlink(victim, at);
        }
        std::thread::sleep(Duration::from_micros(100 + (n * 211) % 900));
        for (at, _, _) in &self.plants {
            if at
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                let _ = std::fs::remove_file(at);
            }
        }
        if self.rest_ms > 0 {
            std::thread::sleep(Duration::from_millis(1 + n % self.rest_ms));
        }
    }
}

/// Runs `meddler` rounds in a thread while `work` runs until `budget`;
/// returns the rounds done, the runs `work` made and how many succeeded.
fn race(meddler: Meddler, budget: Duration, mut work: impl FnMut() -> bool) -> (u64, u64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicU64::new(0));
    let t = {
        let (stop, rounds) = (stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let n = rounds.fetch_add(1, Ordering::Relaxed);
                meddler.round(n);
            }
        })
    };
    let t0 = Instant::now();
    let (mut runs, mut ok) = (0, 0);
    while t0.elapsed() < budget {
        ok += u64::from(work());
        runs += 1;
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    (rounds.load(Ordering::Relaxed), runs, ok)
}

#[test]
fn nothing_outside_the_run_is_touched_while_directories_swap_and_links_are_planted() {
    let dir = tempdir();
    let d = dir.path();
    let victims = d.join("victims");
    std::fs::create_dir(&victims).unwrap();
    // Someone else's files, named as the run's files are.
    for name in [
        "t.dat",
        "iomark-quick.tmp",
        "out.json",
        "out.html",
        "a.json",
        "precious.db",
    ] {
        std::fs::write(victims.join(name), format!("{name}: not iomark's\n")).unwrap();
    }
    let before = snapshot(&victims);
    for sub in ["w/sub", "q", "rep"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }

    // unlink=1 jobs and --output, with their directory swapped.
    let (rounds_a, runs_a, ok_a) = race(
        Meddler {
            dir: d.join("w/sub"),
            to: victims.clone(),
            plants: vec![
                (d.join("w/sub/t.dat"), victims.join("t.dat"), true),
                (d.join("w/a.json"), victims.join("a.json"), true),
            ],
            rest_ms: 0,
        },
        Duration::from_secs(8),
        || {
            run_in(
                d,
                &[
                    "--name=c",
                    "--filename=w/sub/t.dat",
                    "--rw=randwrite",
                    "--bs=4k",
                    "--size=64k",
                    "--unlink=1",
                    "--output=w/a.json",
                    "--output-format=json",
                ],
            )
            .status
            .success()
        },
    );

    // quick: its test file's clean-up and its reports.
    let (rounds_b, runs_b, ok_b) = race(
        Meddler {
            dir: d.join("q"),
            to: victims.clone(),
            plants: vec![
                (
                    d.join("q/iomark-quick.tmp"),
                    victims.join("iomark-quick.tmp"),
                    false,
                ),
                (d.join("rep/out.json"), victims.join("out.json"), true),
                (d.join("rep/out.html"), victims.join("out.html"), true),
            ],
            rest_ms: 12,
        },
        Duration::from_secs(12),
        || {
            let o = run_in(
                d,
                &[
                    "quick",
                    "q",
                    "--size=1m",
                    "--runtime=20ms",
                    "--passes=1",
                    "--no-warmup",
                    "--buffered",
                    "--eta=never",
                    "--json=rep/out.json",
                ],
            );
            if !o.status.success() && std::env::var_os("IOMARK_RACE_DEBUG").is_some() {
                eprintln!("quick: {}", stderr(&o).lines().last().unwrap_or(""));
            }
            o.status.success()
        },
    );

    let after = snapshot(&victims);
    let touched = before
        .iter()
        .filter(|b| !after.contains(b))
        .chain(after.iter().filter(|a| !before.contains(a)))
        .count();
    let rounds = rounds_a + rounds_b;
    eprintln!(
        "race: {rounds} iterations ({rounds_a} around {runs_a} unlink=1 runs, {ok_a} of them \
         complete; {rounds_b} around {runs_b} quick runs, {ok_b} complete); files touched \
         outside the run: {touched}"
    );
    assert!(rounds >= 200, "only {rounds} iterations");
    assert!(ok_a >= 10 && ok_b >= 3, "{ok_a} and {ok_b} runs complete");
    assert_eq!(touched, 0, "before {before:?}\nafter {after:?}");
}
