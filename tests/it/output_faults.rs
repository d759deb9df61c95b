//! When the output fails or a signal comes: a closed pipe, a full device
//! or filesystem, a file that refuses writes, SIGHUP/SIGTERM/SIGPIPE, a
//! hung-up terminal, a second and a third Ctrl-C. Each ends with the
//! right exit code, at most one line on stderr naming the cause (none for
//! a closed pipe), no panic, no test file left, and a complete report
//! wherever one is promised.
//!
//! Signals are sent only after a sign that the run started (a test file
//! or a progress line appeared), and one signal is sent only once the
//! previous one was delivered (so two never merge into one).

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// How long any wait in these tests may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(90);

/// A running iomark whose stdout and stderr are collected as they come.
struct Running {
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(
    mut from: impl Read + Send + 'static,
    into: Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    })
}

impl Running {
    fn start(dir: &Path, args: &[&str]) -> Running {
        Self::start_with(iomark().args(args).current_dir(dir).stdout(Stdio::piped()))
    }

    /// `cmd` with stdout set by the caller (piped or not); stderr piped.
    fn start_with(cmd: &mut Command) -> Running {
        Self::adopt(cmd.stderr(Stdio::piped()).spawn().expect("start iomark"))
    }

    /// Collects what is left of a started child's stdout and stderr.
    fn adopt(mut child: Child) -> Running {
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        if let Some(e) = child.stderr.take() {
            readers.push(collect(e, err.clone()));
        }
        if let Some(o) = child.stdout.take() {
            readers.push(collect(o, out.clone()));
        }
        Running {
            child,
            out,
            err,
            readers,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn stderr_now(&self) -> String {
        String::from_utf8_lossy(&self.err.lock().unwrap()).into_owned()
    }

    /// Waits until stderr contains `what`.
    fn wait_stderr(&mut self, what: &str) {
        let t0 = Instant::now();
        while !self.stderr_now().contains(what) {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!(
                    "iomark ended ({st}) before '{what}':\n{}",
                    self.stderr_now()
                );
            }
            assert!(
                t0.elapsed() < LIMIT,
                "no '{what}' in:\n{}",
                self.stderr_now()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `sig` and waits until it was delivered (no longer pending).
    fn signal(&self, sig: i32) {
        send_delivered(self.pid(), sig);
    }

    /// Waits for the end (killing iomark if it hangs) and returns all.
    fn finish(mut self) -> Output {
        let t0 = Instant::now();
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > LIMIT {
                let _ = self.child.kill();
                panic!("iomark did not end:\n{}", self.stderr_now());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for r in self.readers.drain(..) {
            r.join().unwrap();
        }
        let stdout = std::mem::take(&mut *self.out.lock().unwrap());
        let stderr = std::mem::take(&mut *self.err.lock().unwrap());
        Output {
            status,
            stdout,
            stderr,
        }
    }
}

/// Sends `sig` to `pid` and waits until no thread of it has it pending:
/// the handler has taken it, so a next signal cannot merge with it.
fn send_delivered(pid: i32, sig: i32) {
    // SAFETY: signalling a child process this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill");
    let bit = 1u64 << (sig - 1);
    let t0 = Instant::now();
    loop {
        let pending = |status: &str| {
            status
                .lines()
                .filter(|l| l.starts_with("ShdPnd:") || l.starts_with("SigPnd:"))
                .filter_map(|l| u64::from_str_radix(l.split_whitespace().nth(1)?, 16).ok())
                .any(|m| m & bit != 0)
        };
        let mut any = false;
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
        for t in tasks.into_iter().flatten().flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("status")) {
                // A process that ended (zombie) keeps what was pending.
                if s.lines()
                    .any(|l| l.starts_with("State:") && l.contains('Z'))
                {
                    return;
                }
                any |= pending(&s);
            }
        }
        if !any {
            return;
        }
        assert!(t0.elapsed() < LIMIT, "signal {sig} never delivered");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn wait_for_file(p: &Path) {
    let t0 = Instant::now();
    while !p.exists() {
        assert!(t0.elapsed() < LIMIT, "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The write end of a pipe whose read end is already closed.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors that this function then owns.
    unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

fn no_panic(o: &Output) {
    let err = stderr(o);
    assert_ne!(o.status.code(), Some(101), "panicked:\n{err}");
    assert!(!err.contains("panicked"), "panicked:\n{err}");
}

/// The stderr lines that are not warnings or notes printed before a run.
fn cause_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| !l.contains("warning:") && !l.contains("note:") && !l.contains("Laying out"))
        .map(str::to_string)
        .collect()
}

fn json_file(p: &Path) -> Value {
    let text =
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()))
}

fn json_stdout(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document: {e}\n{}\n{}",
            stdout(o),
            stderr(o)
        )
    })
}

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            missing("mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            missing("cannot mount a tmpfs");
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }

    /// Mounts a 64 KiB tmpfs and fills it up.
    fn full(dir: &Path) -> Option<Tmpfs> {
        let fs = Self::mount(dir, "64k")?;
        let mut f = std::fs::File::create(dir.join("filler")).unwrap();
        let chunk = vec![0u8; 4096];
        while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
        Some(fs)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

const QUICK_FILE: &str = "iomark-quick.tmp";

/// A short quick run in `dir`: reports to q.json/q.html there.
fn quick_args(runtime: &str) -> Vec<String> {
    [
        "quick",
        "--size=8m",
        &format!("--runtime={runtime}"),
        "--passes=1",
        "--no-warmup",
        "--eta=never",
        "--json=q.json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

// 1. A closed pipe: `iomark quick | head -3`.

#[test]
fn quick_into_a_pipe_closed_mid_run_stops_quietly_with_141_and_removes_its_test_file() {
    let dir = tempdir();
    let mut child = iomark()
        .args(strs(&quick_args("5s")))
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read what `head -3` would, wait until the first test runs, close.
    let mut pipe = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while seen.iter().filter(|b| **b == b'\n').count() < 3 {
        assert_eq!(pipe.read(&mut byte).unwrap(), 1, "stdout ended early");
        seen.push(byte[0]);
    }
    let test_file = dir.path().join(QUICK_FILE);
    wait_for_file(&test_file);
    // The first table row comes after the first 5 s test: the pipe is
    // closed well before.
    drop(pipe);
    let o = Running::adopt(child).finish();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(141), "{}", stderr(&o));
    assert!(
        !stderr(&o).to_lowercase().contains("pipe"),
        "a closed pipe ends the run quietly:\n{}",
        stderr(&o)
    );
    assert!(!test_file.exists(), "test file left behind");
    // The results file still holds what was measured, marked interrupted.
    let v = json_file(&dir.path().join("q.json"));
    assert_eq!(v["interrupted"], true);
    // And the next quick starts (nothing left to refuse).
    let again = run_in(
        dir.path(),
        &[
            "quick",
            "--size=4m",
            "--runtime=50ms",
            "--passes=1",
            "--no-warmup",
            "--no-report",
        ],
    );
    assert!(again.status.success(), "{}", stderr(&again));
}

#[test]
fn output_into_a_closed_pipe_exits_141_without_a_panic_or_a_message() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let file_arg = format!("--filename={}", data.display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["--cmdhelp"],
        vec!["--version"],
        vec!["--enghelp"],
        vec!["quick", "--help"],
        vec!["suite", "--list"],
        vec![
            "--name=j",
            "--rw=write",
            "--size=256k",
            &file_arg,
            "--output-format=json",
        ],
        vec!["--name=j", "--rw=write", "--size=256k", &file_arg],
        // The header fails before anything is created.
        vec![
            "quick",
            "--size=4m",
            "--runtime=50ms",
            "--passes=1",
            "--no-warmup",
        ],
    ];
    for args in cases {
        let o = iomark()
            .args(&args)
            .current_dir(dir.path())
            .stdout(closed_pipe())
            .output_bounded_own_stdout()
            .unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {}", stderr(&o));
        assert_eq!(cause_lines(&o), Vec::<String>::new(), "{args:?}");
        assert!(!dir.path().join(QUICK_FILE).exists(), "{args:?}");
    }
}

// 2. A report that cannot be written.

#[test]
fn a_report_on_a_full_device_fails_naming_enospc() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let file_arg = format!("--filename={}", data.display());
    let job = ["--name=j", "--rw=write", "--size=256k", file_arg.as_str()];
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for format in ["json", "normal", "terse", "json+"] {
        let f = format!("--output-format={format}");
        let mut args = job.to_vec();
        args.push(&f);
        let o = iomark()
            .args(&args)
            .current_dir(dir.path())
            .stdout(full())
            .output_bounded_own_stdout()
            .unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{format}: {}", stderr(&o));
        let lines = cause_lines(&o);
        assert_eq!(lines.len(), 1, "{format}: {lines:?}");
        assert!(
            lines[0].starts_with("iomark: ")
                && lines[0].contains("standard output")
                && lines[0].contains("no space left on device"),
            "{format}: {lines:?}"
        );
    }
    // --output=/dev/full, help text, a quick run's table.
    let mut args = job.to_vec();
    args.push("--output=/dev/full");
    let o = run_in(dir.path(), &args);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(cause_lines(&o).len(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("'/dev/full': no space left on device"),
        "{}",
        stderr(&o)
    );
    let o = iomark()
        .arg("--help")
        .stdout(full())
        .output_bounded_own_stdout()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no space left on device"),
        "{}",
        stderr(&o)
    );
    let q = quick_args("50ms");
    let o = iomark()
        .args(strs(&q))
        .current_dir(dir.path())
        .stdout(full())
        .output_bounded_own_stdout()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no space left on device"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join(QUICK_FILE).exists());
    // The results file does not depend on stdout.
    assert_eq!(json_file(&dir.path().join("q.json"))["interrupted"], false);
}

#[test]
fn a_report_into_a_file_that_refuses_writes_fails_naming_eio() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let o = run_in(
        dir.path(),
        &[
            "--name=j",
            "--rw=write",
            "--size=256k",
            &format!("--filename={}", data.display()),
            "--output=/proc/version",
            "--output-format=json",
        ],
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = cause_lines(&o);
    assert_eq!(
        lines,
        vec!["iomark: cannot write output file '/proc/version': input/output error"]
    );
}

#[test]
fn a_report_on_a_full_filesystem_fails_and_leaves_no_truncated_file() {
    let dir = tempdir();
    let Some(fs) = Tmpfs::full(&dir.path().join("full")) else {
        return;
    };
    let data = dir.path().join("data");
    let out = fs.0.join("out.json");
    let o = run_in(
        dir.path(),
        &[
            "--name=j",
            "--rw=write",
            "--size=256k",
            &format!("--filename={}", data.display()),
            &format!("--output={}", out.display()),
            "--output-format=json",
        ],
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        cause_lines(&o),
        vec![format!(
            "iomark: cannot write output file '{}': no space left on device",
            out.display()
        )]
    );
    assert!(!out.exists(), "an empty or truncated report was left");
    // Standard output redirected into a file there.
    let o = iomark()
        .args([
            "--name=j",
            "--rw=write",
            "--size=256k",
            &format!("--filename={}", data.display()),
            "--output-format=json",
        ])
        .current_dir(dir.path())
        .stdout(std::fs::File::create(fs.0.join("redirect.json")).unwrap())
        .output_bounded_own_stdout()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no space left on device"),
        "{}",
        stderr(&o)
    );

    // quick: the results file cannot be written; the test file (elsewhere)
    // is still removed.
    let mut q = quick_args("50ms");
    q.retain(|a| !a.starts_with("--json"));
    q.push(format!("--json={}", fs.0.join("q.json").display()));
    let o = run_in(dir.path(), &strs(&q));
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = cause_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("iomark quick: cannot write")
            && lines[0].ends_with("no space left on device (1 more report file(s) not written)"),
        "{lines:?}"
    );
    assert!(!fs.0.join("q.json").exists() && !fs.0.join("q.html").exists());
    assert!(!dir.path().join(QUICK_FILE).exists());
}

// 3. Log files on a full filesystem.

#[test]
fn logs_on_a_full_filesystem_fail_the_job_with_enospc() {
    let dir = tempdir();
    let Some(fs) = Tmpfs::full(&dir.path().join("full")) else {
        return;
    };
    let data = dir.path().join("data");
    let o = run_in(
        &fs.0,
        &[
            "--name=j",
            "--rw=write",
            "--size=1m",
            &format!("--filename={}", data.display()),
            "--write_bw_log=j",
            "--write_lat_log=j",
            "--output-format=json",
        ],
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json_stdout(&o);
    let job = &v["jobs"][0];
    assert_eq!(job["error"], libc::ENOSPC, "{job}");
    let msg = job["error_message"].as_str().unwrap();
    assert!(msg.contains("no space left on device"), "{msg}");
    assert_eq!(
        cause_lines(&o),
        vec![format!("iomark: job 'j': {msg}")],
        "one line naming the cause"
    );
}

// 4. SIGHUP, SIGTERM and SIGPIPE stop as Ctrl-C does.

/// A time-based job that runs until stopped, with progress on stderr.
fn endless_job(dir: &Path) -> Vec<String> {
    [
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        &format!("--filename={}", dir.join("data").display()),
        "--time_based",
        "--runtime=60s",
        "--rate=2m",
        "--eta=always",
        "--eta-interval=100ms",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn sighup_sigterm_and_sigpipe_stop_a_run_with_a_complete_report() {
    for (sig, code) in [
        (libc::SIGHUP, 129),
        (libc::SIGTERM, 143),
        (libc::SIGPIPE, 141),
        (libc::SIGINT, 130),
    ] {
        let dir = tempdir();
        let mut r = Running::start(dir.path(), &strs(&endless_job(dir.path())));
        r.wait_stderr("Jobs:");
        r.signal(sig);
        let o = r.finish();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(code), "signal {sig}: {}", stderr(&o));
        let v = json_stdout(&o);
        assert_eq!(v["interrupted"], true, "signal {sig}");
        assert!(v["jobs"][0]["write"]["io_bytes"].as_u64().unwrap() > 0);
    }
}

#[test]
fn sighup_stops_quick_removes_the_test_file_and_exits_129() {
    let dir = tempdir();
    let r = Running::start(dir.path(), &strs(&quick_args("20s")));
    let test_file = dir.path().join(QUICK_FILE);
    wait_for_file(&test_file);
    r.signal(libc::SIGHUP);
    let o = r.finish();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(129), "{}", stderr(&o));
    assert!(!test_file.exists(), "test file left behind");
    assert_eq!(
        cause_lines(&o),
        vec![
            "iomark quick: interrupted before the first test finished; test files removed, no \
             results (the reports record the settings and environment only)"
        ]
    );
    assert_eq!(json_file(&dir.path().join("q.json"))["interrupted"], true);
}

/// A pseudo-terminal: (master, slave path).
fn open_pty() -> Option<(OwnedFd, PathBuf)> {
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor
    // this function owns.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            return None;
        }
        let master = OwnedFd::from_raw_fd(m);
        if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
            return None;
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(m, name.as_mut_ptr(), name.len()) != 0 {
            return None;
        }
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        Some((master, PathBuf::from(path)))
    }
}

#[test]
fn a_closed_terminal_stops_quick_cleanly_with_129() {
    use std::os::unix::process::CommandExt;
    let Some((master, slave)) = open_pty() else {
        missing("no pseudo-terminal");
        return;
    };
    let dir = tempdir();
    let tty = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&slave)
            .unwrap()
    };
    let mut cmd = iomark();
    cmd.args(strs(&quick_args("20s")))
        .current_dir(dir.path())
        .stdin(tty())
        .stdout(tty())
        .stderr(tty());
    // SAFETY: setsid and ioctl are async-signal-safe; iomark becomes a
    // session leader whose controlling terminal is the pty, as in a login.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let test_file = dir.path().join(QUICK_FILE);
    wait_for_file(&test_file);
    // Hang up: the terminal goes away (ssh dropped); iomark gets SIGHUP and
    // every later write to the terminal would fail.
    drop(master);
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("iomark did not end after the hang-up");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(129), "{status}");
    assert!(!test_file.exists(), "test file left behind");
    assert_eq!(json_file(&dir.path().join("q.json"))["interrupted"], true);
}

// A second and a third signal.

#[test]
fn a_second_signal_reports_what_was_measured_without_waiting_for_a_stuck_job() {
    let dir = tempdir();
    let pid_file = dir.path().join("postrun.pid");
    let postrun = format!(
        "--exec_postrun=echo $$ > {}; exec sleep 60",
        pid_file.display()
    );
    let r = Running::start(
        dir.path(),
        &[
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            &format!("--filename={}", dir.path().join("data").display()),
            &postrun,
            "--output-format=json",
        ],
    );
    // The job's I/O is done; its thread is stuck in exec_postrun.
    let t0 = Instant::now();
    while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
        assert!(t0.elapsed() < LIMIT, "exec_postrun never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    r.signal(libc::SIGINT);
    r.signal(libc::SIGINT);
    let o = r.finish();
    if let Ok(pid) = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse::<i32>()
    {
        // SAFETY: ending the sleep the job started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    no_panic(&o);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v = json_stdout(&o);
    assert_eq!(v["interrupted"], true);
    let job = &v["jobs"][0];
    assert_eq!(job["write"]["io_bytes"], 1 << 20, "what was measured");
    assert_eq!(job["write"]["total_ios"], 256);
    assert!(
        job["error_message"]
            .as_str()
            .is_some_and(|m| m.contains("second signal")),
        "{job}"
    );
}

#[test]
fn two_quick_ctrl_c_still_write_a_complete_report() {
    let dir = tempdir();
    let mut r = Running::start(dir.path(), &strs(&endless_job(dir.path())));
    r.wait_stderr("Jobs:");
    r.signal(libc::SIGINT);
    r.signal(libc::SIGINT);
    let o = r.finish();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v = json_stdout(&o);
    assert_eq!(v["interrupted"], true);
    assert!(v["jobs"][0]["write"]["io_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn three_ctrl_c_in_quick_exit_130_and_still_remove_the_test_file() {
    let dir = tempdir();
    let r = Running::start(dir.path(), &strs(&quick_args("20s")));
    let test_file = dir.path().join(QUICK_FILE);
    wait_for_file(&test_file);
    for _ in 0..3 {
        r.signal(libc::SIGINT);
    }
    let o = r.finish();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!test_file.exists(), "test file left behind");
}

// 5. Ctrl-C in sweep and suite (quick: front_quick.rs).

#[test]
fn ctrl_c_stops_a_sweep_removes_its_test_file_and_keeps_the_partial_results() {
    let dir = tempdir();
    let mut r = Running::start(
        dir.path(),
        &[
            "sweep",
            "--bs=4k,8k,16k",
            "--size=8m",
            "--runtime=20s",
            "--eta=never",
            "--json=s.json",
        ],
    );
    // The sweep's test file is the only other file that appears.
    let t0 = Instant::now();
    let test_file = loop {
        let found = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "tmp"));
        if let Some(f) = found {
            break f;
        }
        assert!(t0.elapsed() < LIMIT, "no test file appeared");
        if let Ok(Some(st)) = r.child.try_wait() {
            panic!("sweep ended ({st}):\n{}", r.stderr_now());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    r.signal(libc::SIGINT);
    let o = r.finish();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!test_file.exists(), "test file left behind");
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert_eq!(json_file(&dir.path().join("s.json"))["interrupted"], true);
}
