//! fio's example job files (Debian's fio-examples, read from
//! /usr/share/doc/fio/examples at test time, never copied) run to
//! completion under iomark, from a temporary copy scaled down to MiBs and
//! about a second per job:
//!
//! - `size`, `filesize`, `io_size`/`io_limit`, `offset` are capped
//!   (4 MiB, 1 MiB, 8 MiB, 1 MiB); `number_ios` and `nrfiles` at 1000,
//!   `loops` at 2, `numjobs` at 4, `thinktime` at 1 ms;
//! - `runtime`/`timeout` become 1 s and a leading `[global]` caps every
//!   job at 2 s; `ramp_time`, `startdelay` and steady-state windows
//!   shrink; `fill_device` becomes a 4 MiB file;
//! - `directory` becomes the temporary directory and absolute file names
//!   move into it; `threads=1` (a tiobench profile option that examples
//!   use to mean `thread`) becomes `thread=1`.
//!
//! Skipped, with the reason printed:
//! - examples naming a device under /dev (they need that hardware), except
//!   those whose device is a placeholder (`DEVICE_AS_FILE`);
//! - examples iomark rejects at `--parse-only` with a one-line error
//!   (engines or options it does not implement: network, RDMA, NVMe
//!   passthrough, zoned devices, GPUs, object stores, …) — those errors
//!   are checked by the foundation's parse test;
//! - `SKIP` below, for the reasons given there.
//!
//! Examples that read a file they expect to exist (`EXISTING_FILE`) get a
//! 4 MiB one.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::*;

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// Examples whose device is only a placeholder: they run on a 4 MiB
/// regular file instead (basic-verify writes and reads back /dev/XXX).
const DEVICE_AS_FILE: &[(&str, &str)] = &[("basic-verify.fio", "/dev/XXX")];

/// Examples that read an existing file and give no size (fio fails on
/// them too when the file is missing): the test lays out a 4 MiB file.
const EXISTING_FILE: &[(&str, &str)] = &[("butterfly.fio", "testfile")];

/// Examples that parse but cannot run here, and why.
const SKIP: &[(&str, &str)] = &[
    (
        "http-s3.fio",
        "needs Amazon S3 (s3.eu-central-1.amazonaws.com) and credentials: tests/it/s3.rs runs the http engine against a local S3 server",
    ),
    (
        "http-s3-crypto.fio",
        "needs Amazon S3 and credentials (and SSE-C, which iomark refuses in one line): tests/it/s3.rs runs the http engine against a local S3 server",
    ),
    (
        "http-s3-storage-class.fio",
        "needs Amazon S3 and credentials: tests/it/s3.rs runs the http engine against a local S3 server",
    ),
    (
        "http-webdav.fio",
        "needs a WebDAV server on localhost:80 (and names its objects with filename_format, which iomark refuses for http in one line)",
    ),
    (
        "uring-cmd-ng.fio",
        "needs an NVMe generic character device: the guest suite runs it (tests/guest)",
    ),
    (
        "uring-cmd-zoned.fio",
        "needs a zoned NVMe generic character device: the guest suite runs it (tests/guest)",
    ),
];

fn parse_bytes(v: &str) -> Option<u64> {
    let t = v.trim().to_ascii_lowercase();
    let t = t.trim_end_matches(['b', 'i']);
    let (num, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1u64 << 10),
        'm' => (&t[..t.len() - 1], 1 << 20),
        'g' => (&t[..t.len() - 1], 1 << 30),
        't' => (&t[..t.len() - 1], 1 << 40),
        'p' => (&t[..t.len() - 1], 1 << 50),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .map(|n| n.saturating_mul(mult))
}

fn capped(v: &str, cap: u64) -> String {
    match parse_bytes(v) {
        Some(b) if b > cap => cap.to_string(),
        Some(_) => v.to_string(),
        None => v.to_string(),
    }
}

fn capped_int(v: &str, cap: u64) -> String {
    match v.trim().parse::<u64>() {
        Ok(n) if n > cap => cap.to_string(),
        _ => v.to_string(),
    }
}

/// Rewrites one example for a quick run in the current directory;
/// `Err` says why it cannot run here.
fn scale(text: &str) -> Result<String, String> {
    let mut out = String::from("[global]\nruntime=2s\n\n");
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') || t.starts_with('#') || t.starts_with(';') || !t.contains('=') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let (k, v) = t.split_once('=').unwrap_or((t, ""));
        let key = k.trim().to_ascii_lowercase();
        // Drop trailing comments.
        let v = v.split(['#', ';']).next().unwrap_or("").trim();
        let new = match key.as_str() {
            "size" if !v.ends_with('%') => capped(v, 4 << 20),
            "filesize" => v
                .split('-')
                .map(|p| capped(p, 1 << 20))
                .collect::<Vec<_>>()
                .join("-"),
            "io_size" | "io_limit" => capped(v, 8 << 20),
            "offset" if !v.ends_with('%') => capped(v, 1 << 20),
            "number_ios" => capped_int(v, 1000),
            "nrfiles" => capped_int(v, 1000),
            "loops" => capped_int(v, 2),
            "numjobs" => capped_int(v, 4),
            "runtime" | "timeout" => "1s".into(),
            "ramp_time" | "ss_ramp" => "200ms".into(),
            "ss_dur" => "1s".into(),
            "startdelay" => "0".into(),
            "thinktime" => capped_int(v, 1000),
            "directory" => ".".into(),
            // `threads` belongs to fio's tiobench profile; these examples
            // mean `thread` (iomark always runs jobs as threads).
            "threads" => {
                out.push_str(&format!("thread={v}\n"));
                continue;
            }
            "fill_device" | "fill_fs" => {
                out.push_str("size=4m\n");
                "0".into()
            }
            "filename" => {
                let mut names = Vec::new();
                for f in v.split(':') {
                    if f.starts_with("/dev/") && f != "/dev/null" && f != "/dev/zero" {
                        return Err(format!("needs the device {f}"));
                    }
                    names.push(if f.starts_with('/') && !f.starts_with("/dev/") {
                        Path::new(f)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| "file".into())
                    } else {
                        f.to_string()
                    });
                }
                names.join(":")
            }
            _ => {
                out.push_str(line);
                out.push('\n');
                continue;
            }
        };
        out.push_str(&format!("{}={new}\n", k.trim()));
    }
    Ok(out)
}

fn run_with_timeout(
    mut cmd: Command,
    dir: &Path,
    limit: Duration,
) -> Result<(i32, String), String> {
    let out = std::fs::File::create(dir.join("out.txt")).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(dir.join("err.txt")).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut child = cmd
        .current_dir(dir)
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn()
        .map_err(|e| e.to_string())?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t0.elapsed() > limit {
            kill_group(&mut child);
            let _ = child.wait();
            return Err(format!("still running after {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(dir.join("err.txt")).unwrap_or_default();
    Ok((status.code().unwrap_or(-1), stderr))
}

enum Result2 {
    Ran,
    Skipped(String),
}

fn run_example(path: &Path) -> Result<Result2, String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if let Some((_, why)) = SKIP.iter().find(|(n, _)| *n == name) {
        return Ok(Result2::Skipped(why.to_string()));
    }
    let mut text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    if let Some((_, dev)) = DEVICE_AS_FILE.iter().find(|(n, _)| *n == name) {
        text = text.replace(&format!("filename={dev}"), "filename=device.img\nsize=4m");
    }
    let scaled = match scale(&text) {
        Ok(s) => s,
        Err(why) => return Ok(Result2::Skipped(why)),
    };
    let dir = tempdir();
    std::fs::write(dir.path().join("job.fio"), &scaled).map_err(|e| e.to_string())?;
    if let Some((_, file)) = EXISTING_FILE.iter().find(|(n, _)| *n == name) {
        std::fs::write(dir.path().join(file), vec![0x5au8; 4 << 20]).map_err(|e| e.to_string())?;
    }
    let mut parse = iomark();
    parse.args(["--parse-only", "job.fio"]);
    let (code, stderr) = run_with_timeout(parse, dir.path(), Duration::from_secs(20))?;
    if code != 0 {
        let first = stderr.lines().next().unwrap_or("").to_string();
        return Ok(Result2::Skipped(format!("not supported: {first}")));
    }
    let mut run = iomark();
    run.args(["--output-format=json", "job.fio"]);
    let (code, stderr) = run_with_timeout(run, dir.path(), Duration::from_secs(90))?;
    if code != 0 {
        return Err(format!("exit code {code}: {}", stderr.trim()));
    }
    let out = std::fs::read_to_string(dir.path().join("out.txt")).unwrap_or_default();
    let json: serde_json::Value =
        serde_json::from_str(&out).map_err(|e| format!("output is not JSON: {e}"))?;
    if json["jobs"].as_array().is_none_or(|j| j.is_empty()) {
        return Err("the JSON report lists no jobs".into());
    }
    Ok(Result2::Ran)
}

#[test]
fn fio_examples_run_to_completion() {
    let _serial = cpu_heavy();
    let mut paths: Vec<_> = match std::fs::read_dir(EXAMPLES) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "fio"))
            .collect(),
        Err(_) => {
            missing(&format!(
                "{EXAMPLES} is missing (apt-get install fio-examples)"
            ));
            return;
        }
    };
    paths.sort();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let ran = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                match run_example(p) {
                    Ok(Result2::Ran) => {
                        ran.fetch_add(1, Ordering::Relaxed);
                        eprintln!("example ran     {name}");
                    }
                    Ok(Result2::Skipped(why)) => eprintln!("example skipped {name}: {why}"),
                    Err(e) => {
                        eprintln!("example FAILED  {name}: {e}");
                        failures.lock().unwrap().push(format!("{name}: {e}"));
                    }
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "{} example(s) failed:\n{}",
        f.len(),
        f.join("\n")
    );
    assert!(ran.load(Ordering::Relaxed) > 0, "no example ran");
}

#[test]
fn scaling_caps_sizes_times_and_moves_files() {
    let s = scale(
        "[a]\nsize=128g\nruntime=60\nfilename=/tmp/x:/scratch/y\nnumjobs=16 ; many\nnrfiles=31250\n",
    )
    .unwrap();
    assert!(s.contains("nrfiles=1000\n"), "{s}");
    assert!(s.contains("size=4194304\n"), "{s}");
    assert!(s.contains("runtime=1s\n"), "{s}");
    assert!(s.contains("filename=x:y\n"), "{s}");
    assert!(s.contains("numjobs=4\n"), "{s}");
    assert!(scale("[a]\nfilename=/dev/sdb\n").is_err());
}
