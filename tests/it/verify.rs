//! Data verification: write jobs read back and check what they wrote,
//! `verify_only` checks an earlier run's file, corruption is found and
//! reported (exit 1, err=EILSEQ, one line naming the offset), the backlog
//! interleaves checks with writes, and files written by fio check with
//! iomark and the other way round.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;
use crate::require_fio;

/// The platform's EILSEQ (84 on Linux, 42 in Windows' C runtime).
const EILSEQ: u64 = libc::EILSEQ as u64;

fn job(path: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--name=v".into(),
        format!("--filename={}", opt_path(path)),
        "--bs=4k".into(),
        "--size=256k".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(dir: &Path, args: &[String]) -> Value {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(dir, &a)
}

/// (io_bytes, total_ios) of a direction of the first job.
fn done(j: &Value, d: &str) -> (u64, u64) {
    let x = &j["jobs"][0][d];
    (
        x["io_bytes"].as_u64().unwrap(),
        x["total_ios"].as_u64().unwrap(),
    )
}

/// Runs iomark expecting failure; returns (JSON, stderr lines that are
/// not warnings).
fn run_failing(dir: &Path, args: &[String]) -> (Value, Vec<String>) {
    let o = iomark()
        .args(args)
        .arg("--output-format=json")
        .current_dir(dir)
        .output_bounded()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).expect("JSON report on failure");
    let lines = stderr(&o)
        .lines()
        .filter(|l| !l.contains("warning:"))
        .map(String::from)
        .collect();
    (j, lines)
}

fn flip(path: &Path, at: u64) {
    let mut data = std::fs::read(path).unwrap();
    data[at as usize] ^= 0x5a;
    std::fs::write(path, data).unwrap();
}

#[test]
fn every_method_reads_back_what_it_wrote() {
    let dir = tempdir();
    let f = dir.path().join("f");
    for m in [
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
        "null",
    ] {
        for extra in [
            &[][..],
            &["--verify_interval=1k", "--verify_offset=300"][..],
        ] {
            let mut a = vec!["--rw=randwrite".to_string(), format!("--verify={m}")];
            a.extend(extra.iter().map(|s| s.to_string()));
            let args: Vec<&str> = a.iter().map(String::as_str).collect();
            let j = run(dir.path(), &job(&f, &args));
            assert_eq!(j["jobs"][0]["error"], 0, "{m} {extra:?}");
            assert_eq!(done(&j, "read"), (256 << 10, 64), "{m} {extra:?}");
            assert_eq!(done(&j, "write"), (256 << 10, 64), "{m} {extra:?}");
        }
    }
    // A pattern, with the block offset in it.
    let j = run(
        dir.path(),
        &job(
            &f,
            &[
                "--rw=write",
                "--verify=pattern",
                "--verify_pattern=0xab%o\"x\"",
            ],
        ),
    );
    assert_eq!(done(&j, "read"), (256 << 10, 64));
    let data = std::fs::read(&f).unwrap();
    assert_eq!(&data[4096..4100], &[0xab, 0x00, 0x10, 0x00]);
}

#[test]
fn a_corrupted_byte_fails_verify_only_naming_its_offset() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let write = job(&f, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    let j = run(dir.path(), &write);
    assert_eq!(done(&j, "read"), (0, 0), "do_verify=0 reads nothing back");
    let check = job(&f, &["--rw=write", "--verify=crc32c", "--verify_only"]);
    let j = run(dir.path(), &check);
    assert_eq!(done(&j, "read"), (256 << 10, 64));
    assert_eq!(done(&j, "write"), (0, 0), "verify_only wrote");

    flip(&f, 20_000);
    let (j, lines) = run_failing(dir.path(), &check);
    assert_eq!(j["jobs"][0]["error"], EILSEQ);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("verify failed") && lines[0].contains("at offset 16384"),
        "{lines:?}"
    );
    assert!(lines[0].contains("crc32c mismatch"), "{lines:?}");
    // The job stopped at the bad block.
    assert_eq!(done(&j, "read"), (20 << 10, 5));
}

#[test]
fn fatal_dump_and_continue_on_error() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let base = ["--rw=write", "--verify=md5", "--verify_interval=1k"];
    let mut w = base.to_vec();
    w.push("--do_verify=0");
    run(dir.path(), &job(&f, &w));
    // Two bad intervals in the block at 4096, one in the block at 65536.
    for at in [5000, 7000, 66000] {
        flip(&f, at);
    }
    let only = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.push("--verify_only");
        a.extend_from_slice(extra);
        job(&f, &a)
    };
    // Every interval of the bad block is checked, then the job ends.
    let (_, lines) = run_failing(dir.path(), &only(&[]));
    assert!(
        lines[0].contains("at offset 4096 (length 1024)"),
        "{lines:?}"
    );
    assert!(lines[0].contains("(2 verify failures in all)"), "{lines:?}");
    let (_, lines) = run_failing(dir.path(), &only(&["--verify_fatal=1"]));
    assert!(!lines[0].contains("in all"), "{lines:?}");
    // continue_on_error=verify counts each bad block and goes on.
    let (j, lines) = run_failing(dir.path(), &only(&["--continue_on_error=verify"]));
    let job0 = &j["jobs"][0];
    assert_eq!(job0["total_err"], 2);
    assert_eq!(job0["first_error"], EILSEQ);
    assert_eq!(job0["error"], EILSEQ);
    assert_eq!(done(&j, "read"), (256 << 10, 64));
    // error_dump (on by default) prints each bad block as it is found,
    // then the first one again with the count.
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].contains("at offset 4096") && lines[0].ends_with("(error 1, carrying on)"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("at offset 65536") && lines[1].ends_with("(error 2, carrying on)"),
        "{lines:?}"
    );
    assert!(lines[2].contains("(3 verify failures in all)"), "{lines:?}");
    let (_, lines) = run_failing(
        dir.path(),
        &only(&["--continue_on_error=verify", "--error_dump=0"]),
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("(3 verify failures in all)"), "{lines:?}");
    // verify_dump saves what was read and what was written, side by side.
    let (_, lines) = run_failing(dir.path(), &only(&["--verify_dump=1", "--verify_fatal=1"]));
    assert!(lines[0].contains("f.4096.received"), "{lines:?}");
    let got = std::fs::read(dir.path().join("f.4096.received")).unwrap();
    let want = std::fs::read(dir.path().join("f.4096.expected")).unwrap();
    assert_eq!((got.len(), want.len()), (1024, 1024));
    let diff: Vec<usize> = (0..1024).filter(|i| got[*i] != want[*i]).collect();
    assert_eq!(diff, [5000 - 4096]);
}

fn iolog_ops(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            let op = p.get(p.len().checked_sub(3)?)?;
            matches!(*op, "read" | "write").then(|| {
                let block = p[p.len() - 2].parse::<u64>().unwrap() / 4096;
                format!("{}{block}", &op[..1])
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn verify_backlog_checks_while_writing() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let log = dir.path().join("log");
    let l = format!("--write_iolog={}", log.display());
    for (extra, want) in [
        (
            &["--verify_backlog=4"][..],
            "w0 w1 w2 w3 r0 r1 r2 r3 w4 w5 w6 w7 r4 r5 r6 r7",
        ),
        (
            &["--verify_backlog=4", "--verify_backlog_batch=2"][..],
            "w0 w1 w2 w3 r0 r1 w4 w5 r2 r3 w6 w7 r4 r5 r6 r7",
        ),
        (
            &["--verify_backlog=4", "--verify_backlog_batch=6"][..],
            "w0 w1 w2 w3 r0 r1 r2 r3 w4 r4 w5 r5 w6 w7",
        ),
        (
            &["--verify_backlog=4", "--do_verify=0"][..],
            "w0 w1 w2 w3 w4 w5",
        ),
    ] {
        let _ = std::fs::remove_file(&log);
        let mut a = vec!["--rw=write", "--verify=crc32c", "--size=32k", &l];
        a.extend_from_slice(extra);
        let j = run(dir.path(), &job(&f, &a));
        let ops = iolog_ops(&log);
        assert!(ops.starts_with(want), "{extra:?}: {ops}");
        let reads = if extra.contains(&"--do_verify=0") {
            0
        } else {
            8
        };
        assert_eq!(done(&j, "read").1, reads, "{extra:?}");
    }
    // Random writes come back in write order; with norandommap, sorted and
    // each block once (the newest write of it).
    let _ = std::fs::remove_file(&log);
    run(
        dir.path(),
        &job(&f, &["--rw=randwrite", "--verify=crc32c", "--size=32k", &l]),
    );
    let ops = iolog_ops(&log);
    let (w, r) = ops.split_at(ops.find('r').unwrap());
    assert_eq!(w.trim().replace('w', ""), r.trim().replace('r', ""));
    let _ = std::fs::remove_file(&log);
    run(
        dir.path(),
        &job(
            &f,
            &[
                "--rw=randwrite",
                "--norandommap",
                "--verify=crc32c",
                "--size=32k",
                &l,
            ],
        ),
    );
    let ops = iolog_ops(&log);
    let reads: Vec<u64> = ops
        .split(' ')
        .filter_map(|o| o.strip_prefix('r'))
        .map(|b| b.parse().unwrap())
        .collect();
    let mut want: Vec<u64> = ops
        .split(' ')
        .filter_map(|o| o.strip_prefix('w'))
        .map(|b| b.parse().unwrap())
        .collect();
    want.sort();
    want.dedup();
    assert_eq!(reads, want, "{ops}");
}

#[test]
fn engines_verify_at_depth() {
    let dir = tempdir();
    let f = dir.path().join("f");
    // The platform's queued engines.
    #[cfg(target_os = "linux")]
    let engines = if crate::common::io_uring_available() {
        vec!["psync", "libaio", "io_uring"]
    } else {
        vec!["psync", "libaio"]
    };
    #[cfg(windows)]
    let engines = vec!["psync", "windowsaio"];
    for engine in engines {
        // The read-back and the backlog go through the same queue as the
        // writes: batches, polled completions, iodepth_low.
        for extra in [
            &[][..],
            &["--verify_backlog=8"][..],
            &[
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_min=0",
                "--iodepth_low=4",
            ][..],
            &[
                "--verify_backlog=8",
                "--iodepth_batch_submit=3",
                "--iodepth_batch_complete_min=2",
                "--iodepth_batch_complete_max=5",
                "--iodepth_low=2",
            ][..],
        ] {
            let e = format!("--ioengine={engine}");
            let mut a = vec![
                e.as_str(),
                "--rw=randwrite",
                "--direct=1",
                "--iodepth=16",
                "--size=1m",
                "--verify=crc32c",
            ];
            a.extend_from_slice(extra);
            let args = job(&f, &a);
            let sa: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut full = sa.clone();
            full.push("--output-format=json");
            let o = run_in(dir.path(), &full);
            assert!(o.status.success(), "{engine} {extra:?}: {}", stderr(&o));
            let j: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(done(&j, "read"), (1 << 20, 256), "{engine} {extra:?}");
            assert_eq!(done(&j, "write"), (1 << 20, 256), "{engine} {extra:?}");
        }
    }
}

#[test]
fn time_based_rounds_check_blocks_written_again() {
    // A 16-block file rewritten round after round, with 16 writes in
    // flight: each check expects the newest write of its block.
    let dir = tempdir();
    let f = dir.path().join("f");
    // The platform's queued engine.
    let queued = if cfg!(windows) {
        "--ioengine=windowsaio"
    } else {
        "--ioengine=libaio"
    };
    for extra in [
        &["--ioengine=psync", "--verify_backlog=64"][..],
        &[queued, "--iodepth=16", "--verify_backlog=16"][..],
        &[
            queued,
            "--iodepth=16",
            "--verify_backlog=5",
            "--norandommap",
        ][..],
    ] {
        let mut a = vec![
            "--rw=randwrite",
            "--size=64k",
            "--direct=1",
            "--verify=crc32c",
            "--time_based",
            "--runtime=300ms",
        ];
        a.extend_from_slice(extra);
        let j = run(dir.path(), &job(&f, &a));
        assert_eq!(j["jobs"][0]["error"], 0, "{extra:?}");
        assert!(done(&j, "read").1 > 16, "{extra:?}: {:?}", done(&j, "read"));
    }
}

#[test]
fn read_jobs_check_what_they_read() {
    let dir = tempdir();
    let f = dir.path().join("f");
    run(
        dir.path(),
        &job(&f, &["--rw=write", "--verify=sha1", "--do_verify=0"]),
    );
    let j = run(dir.path(), &job(&f, &["--rw=randread", "--verify=sha1"]));
    assert_eq!(done(&j, "read"), (256 << 10, 64));
    // Data without headers fails at once.
    run(dir.path(), &job(&f, &["--rw=write"]));
    let (j, lines) = run_failing(dir.path(), &job(&f, &["--rw=read", "--verify=sha1"]));
    assert_eq!(j["jobs"][0]["error"], EILSEQ);
    assert!(lines[0].contains("bad header magic"), "{lines:?}");
}

#[test]
fn impossible_settings_are_one_line_errors() {
    let dir = tempdir();
    let f = dir.path().join("f");
    for (extra, want) in [
        (&["--verify=pattern"][..], "needs verify_pattern"),
        (
            &["--verify=md5", "--verify_state_save=1"][..],
            "only 0 is accepted",
        ),
        (&["--verify=md5", "--verify_offset=4090"][..], "no room"),
        (&["--verify_async_cpus=0"][..], "not supported"),
    ] {
        let mut a = vec!["--rw=write"];
        a.extend_from_slice(extra);
        let args = job(&f, &a);
        let o = iomark()
            .args(&args)
            .current_dir(dir.path())
            .output_bounded()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    assert!(!f.exists(), "a rejected job wrote its file");
}

/// verify_only=1 with no verify method has nothing to check: it is one
/// line on stderr before any I/O, on every engine (it used to issue the
/// job's writes on a read-only descriptor: EBADF, or a crash with mmap),
/// and the target is left as it was.
#[test]
fn verify_only_without_a_method_is_refused_before_any_io() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let kept = vec![0x5au8; 256 << 10];
    for engine in ["psync", "mmap", "libaio", "null"] {
        for rw in ["write", "randrw", "read"] {
            for existing in [false, true] {
                let _ = std::fs::remove_file(&f);
                if existing {
                    std::fs::write(&f, &kept).unwrap();
                }
                let mut args = job(
                    &f,
                    &[
                        &format!("--ioengine={engine}"),
                        &format!("--rw={rw}"),
                        "--verify_only=1",
                    ],
                );
                if existing {
                    args.push("--allow_destroy_data=1".into());
                }
                let o = iomark()
                    .args(&args)
                    .current_dir(dir.path())
                    .output_bounded()
                    .unwrap();
                let what = format!("{engine} rw={rw} existing={existing}");
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(1), "{what}: {err}");
                assert_eq!(err.lines().count(), 1, "{what}: {err}");
                assert!(err.starts_with("iomark: "), "{what}: {err}");
                assert!(
                    err.contains("verify_only=1 needs verify=")
                        && err.contains("nothing to verify"),
                    "{what}: {err}"
                );
                assert!(stdout(&o).is_empty(), "{what}");
                if existing {
                    assert!(
                        std::fs::read(&f).unwrap() == kept,
                        "{what}: the file changed"
                    );
                } else {
                    assert!(!f.exists(), "{what}: the file was created");
                }
            }
        }
    }
    // With a method, verify_only reads what an earlier run wrote.
    std::fs::remove_file(&f).unwrap();
    run(dir.path(), &job(&f, &["--rw=write", "--verify=crc32c"]));
    let j = run(
        dir.path(),
        &job(&f, &["--rw=write", "--verify=crc32c", "--verify_only=1"]),
    );
    assert_eq!(done(&j, "read"), (256 << 10, 64));
    assert_eq!(done(&j, "write"), (0, 0));
}

fn fio_run(dir: &Path, args: &[String]) -> std::process::Output {
    fio_output(
        Command::new("fio")
            .args(args)
            .arg("--output-format=json")
            .current_dir(dir),
    )
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn read_back_counts_match_fio() {
    require_fio!();
    let dir = tempdir();
    for extra in [
        &["--rw=write"][..],
        &["--rw=randwrite"][..],
        &["--rw=write", "--loops=2"][..],
        &["--rw=randwrite", "--verify_backlog=8"][..],
        &[
            "--rw=randwrite",
            "--verify_backlog=8",
            "--verify_backlog_batch=3",
        ][..],
        &["--rw=write", "--do_verify=0"][..],
        &["--rw=write", "--io_size=512k"][..],
        &["--rw=randrw", "--rwmixread=100"][..],
    ] {
        let mut a = vec!["--verify=crc32c"];
        a.extend_from_slice(extra);
        let ours = run(dir.path(), &job(&dir.path().join("a"), &a));
        let o = fio_run(dir.path(), &job(&dir.path().join("b"), &a));
        assert!(o.status.success(), "fio {extra:?}");
        let text = String::from_utf8_lossy(&o.stdout);
        let theirs: Value = serde_json::from_str(&text[text.find("{\n").unwrap()..]).unwrap();
        for d in ["read", "write"] {
            assert_eq!(done(&ours, d), done(&theirs, d), "{extra:?} {d}");
        }
    }
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn files_check_across_iomark_and_fio() {
    require_fio!();
    let dir = tempdir();
    let f = dir.path().join("f");
    for m in [
        "crc32c", "md5", "sha1", "xxhash", "crc64", "crc16", "sha3-256", "meta",
    ] {
        let v = format!("--verify={m}");
        let base = ["--rw=randwrite", v.as_str(), "--verify_interval=1k"];
        let mut w = base.to_vec();
        w.push("--do_verify=0");
        let mut only = base.to_vec();
        only.push("--verify_only");
        // fio writes, iomark checks.
        let o = fio_run(dir.path(), &job(&f, &w));
        assert!(o.status.success(), "fio {m}");
        let j = run(dir.path(), &job(&f, &only));
        assert_eq!(done(&j, "read"), (256 << 10, 64), "{m}");
        // iomark writes, fio checks.
        let _ = std::fs::remove_file(&f);
        run(dir.path(), &job(&f, &w));
        let o = fio_run(dir.path(), &job(&f, &only));
        assert!(o.status.success(), "fio failed to check iomark's {m} file");
    }
    // A byte fio's file has wrong is found.
    let _ = std::fs::remove_file(&f);
    let w = job(&f, &["--rw=write", "--verify=crc32c", "--do_verify=0"]);
    assert!(fio_run(dir.path(), &w).status.success());
    flip(&f, 100_000);
    let (j, lines) = run_failing(
        dir.path(),
        &job(&f, &["--rw=write", "--verify=crc32c", "--verify_only"]),
    );
    assert_eq!(j["jobs"][0]["error"], EILSEQ);
    assert!(lines[0].contains("at offset 98304"), "{lines:?}");
    // A pattern with the offset in it reads back in fio.
    let _ = std::fs::remove_file(&f);
    let p = ["--rw=write", "--verify=pattern", "--verify_pattern=0x5a%o"];
    let mut w = p.to_vec();
    w.push("--do_verify=0");
    run(dir.path(), &job(&f, &w));
    let mut only = p.to_vec();
    only.push("--verify_only");
    assert!(fio_run(dir.path(), &job(&f, &only)).status.success());
}
