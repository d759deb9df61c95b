//! Shared helpers for the integration tests: running the iomark binary and
//! fio, temporary directories, JSON parsing.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The iomark binary built for these tests. It never records in the
/// real user's results history: every command of this test process
/// shares one in a temporary directory ([`shared_history`]), unless a
/// test gives it its own ([`history_in`]).
pub fn iomark() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iomark"));
    c.env("IOMARK_HISTORY_DB", shared_history())
        .env_remove("XDG_DATA_HOME");
    c
}

static SHARED_HISTORY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

extern "C" fn remove_shared_history() {
    if let Some(p) = SHARED_HISTORY.get().and_then(|p| p.parent()) {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// The results history of this test process: a file in a temporary
/// directory (named without "iomark", which some tests look for in
/// the output), removed when the process exits.
pub fn shared_history() -> &'static Path {
    SHARED_HISTORY.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("it-history-")
            .tempdir()
            .expect("temp dir")
            .keep();
        // SAFETY: registers a plain function to run at exit.
        unsafe { libc::atexit(remove_shared_history) };
        dir.join("history.sqlite")
    })
}

/// The results history of the tests in `dir`, as [`history_in`] sets it.
pub fn history_db(dir: &Path) -> std::path::PathBuf {
    dir.join("history.sqlite")
}

/// Gives `cmd` the results history of `dir` (see [`history_db`]).
pub fn history_in<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    cmd.env("IOMARK_HISTORY_DB", history_db(dir))
}

/// iomark run to its end in `dir`, with the results history of `dir`
/// (see [`history_in`]), under the tools' deadline.
pub fn run_with_history(dir: &Path, args: &[&str]) -> Output {
    let mut c = iomark();
    history_in(&mut c, dir)
        .args(args)
        .current_dir(dir)
        .output_bounded()
        .expect("run iomark")
}

/// A path as written into a job option's value (filename=, directory=,
/// read_iolog=...): on Windows a drive's colon escaped (`C\:`), as fio's
/// ':' separator wants; elsewhere the path as it is.
pub fn opt_path(p: impl AsRef<Path>) -> String {
    let s = p.as_ref().display().to_string();
    if cfg!(windows) {
        s.replace(':', "\\:")
    } else {
        s
    }
}

/// Runs iomark with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    output_of(iomark().args(args).current_dir(dir))
}

/// Runs `cmd` (iomark) to its end, under [`TOOL_DEADLINE`] (a run that
/// outlives it fails the test). Under Wine, starting a process now and
/// then fails with ERROR_INTERNAL_ERROR (1359) before the program runs
/// (seen once in ~170 starts in a CI run); that start is tried again, at
/// most twice. Anything the program itself does is returned as it is.
pub fn output_of(cmd: &mut Command) -> Output {
    let mut tries = 0;
    loop {
        tries += 1;
        match output_within(cmd, TOOL_DEADLINE) {
            Err(Ran::NotStarted(e))
                if cfg!(windows) && e.raw_os_error() == Some(1359) && tries < 3 =>
            {
                std::thread::sleep(Duration::from_millis(200));
            }
            r => return r.unwrap_or_else(|e| panic!("iomark: {e}")),
        }
    }
}

/// How long any program a test runs (iomark, fio, mpirun, QEMU's
/// harness, Chromium) may take before the test takes it for hung: far
/// beyond what any of them needs on a loaded 2-core machine, short of
/// hanging CI.
pub const TOOL_DEADLINE: Duration = Duration::from_secs(300);

/// Why [`output_within`] gives no plain result.
#[derive(Debug)]
pub enum Ran {
    /// The program could not be started.
    NotStarted(std::io::Error),
    /// Still running at the deadline: it was killed with its process
    /// group; what it printed until then.
    Hung(Duration, Output),
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ran::NotStarted(e) => write!(f, "could not be started: {e}"),
            Ran::Hung(limit, o) => write!(
                f,
                "still running after {} s: killed with its process group; stderr until then: {}",
                limit.as_secs(),
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        }
    }
}

/// Runs `cmd` as [`Command::output`] does (stdin empty, stdout and stderr
/// captured), in a process group of its own, under a deadline: at `limit`
/// the group is killed and `Err(Ran::Hung)` returned. When the program
/// ends, what it left running in its group is killed too, so nothing it
/// started outlives the test or keeps the output pipes open.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Result<Output, Ran> {
    run_within(cmd.stdout(Stdio::piped()), limit)
}

/// [`output_within`] for a command whose stdout the caller has set (a
/// file, /dev/full, a closed pipe): that stdout is kept; the `Output`
/// has stderr only.
pub fn output_within_own_stdout(cmd: &mut Command, limit: Duration) -> Result<Output, Ran> {
    run_within(cmd, limit)
}

fn run_within(cmd: &mut Command, limit: Duration) -> Result<Output, Ran> {
    use std::io::Read;
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(Ran::NotStarted)?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as _));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as _));
    let t0 = Instant::now();
    let mut hung = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for a child") {
            break s;
        }
        if t0.elapsed() > limit {
            hung = true;
            kill_group(&mut child);
            break child.wait().expect("wait for a killed child");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    kill_group(&mut child);
    let o = Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    if hung {
        Err(Ran::Hung(limit, o))
    } else {
        Ok(o)
    }
}

/// Kills `child`'s process group (the child itself when it has been
/// reaped but others of its group live on); elsewhere than on Unix, the
/// child.
pub fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    // SAFETY: kill(2) on the process group the child was started in (its
    // id); ESRCH when nothing of it is left.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = child.kill();
}

/// [`Command::output`] under [`TOOL_DEADLINE`] (see [`output_within`]):
/// the way every test runs a program to its end, so that none can hang
/// the suite.
pub trait Bounded {
    /// Runs the command to its end, or kills it with its process group
    /// at [`TOOL_DEADLINE`] (an error of kind `TimedOut`, with what it
    /// printed on stderr until then).
    fn output_bounded(&mut self) -> std::io::Result<Output>;

    /// [`Bounded::output_bounded`] keeping the stdout the caller set
    /// (see [`output_within_own_stdout`]).
    fn output_bounded_own_stdout(&mut self) -> std::io::Result<Output>;
}

impl Bounded for Command {
    fn output_bounded(&mut self) -> std::io::Result<Output> {
        let r = output_within(self, TOOL_DEADLINE);
        as_io(self, r)
    }

    fn output_bounded_own_stdout(&mut self) -> std::io::Result<Output> {
        let r = output_within_own_stdout(self, TOOL_DEADLINE);
        as_io(self, r)
    }
}

fn as_io(cmd: &Command, r: Result<Output, Ran>) -> std::io::Result<Output> {
    match r {
        Ok(o) => Ok(o),
        Err(Ran::NotStarted(e)) => Err(e),
        Err(hung) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("{:?}: {hung}", cmd.get_program()),
        )),
    }
}

/// Runs `cmd` under [`TOOL_DEADLINE`]; panics, naming `what`, when it
/// cannot start or hangs.
pub fn tool_output(what: &str, cmd: &mut Command) -> Output {
    output_within(cmd, TOOL_DEADLINE).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Runs `cmd` (a fio command) under a deadline of `limit`. fio 3.33 now
/// and then never finishes a run (seen waiting on a futex after its I/O
/// when writing compressed logs, for 16 minutes): such a run is killed with
/// its process group and run again, at most three times in all. The
/// caller's directory is as fio left it; a run fio repeats there writes
/// the same files again.
pub fn fio_output_within(cmd: &mut Command, limit: Duration) -> Output {
    for attempt in 1..=3 {
        match output_within(cmd, limit) {
            Ok(o) => return o,
            Err(Ran::Hung(..)) => {
                let line = format!(
                    "fio hung (attempt {attempt} of 3, killed after {} s); running it again\n",
                    limit.as_secs()
                );
                use std::io::Write;
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            Err(e) => panic!("fio: {e}"),
        }
    }
    panic!("fio hung three times in a row ({} s each)", limit.as_secs());
}

/// [`fio_output_within`] with a deadline of 120 s, far beyond the few
/// seconds any fio run in these tests takes.
pub fn fio_output(cmd: &mut Command) -> Output {
    fio_output_within(cmd, Duration::from_secs(120))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the command wrote on stderr; on Windows without the warning
/// every run under Wine carries (a fact of Wine, not of Windows).
pub fn stderr(o: &Output) -> String {
    let s = String::from_utf8_lossy(&o.stderr).into_owned();
    if cfg!(windows) {
        without_wine_warning(&s)
    } else {
        s
    }
}

/// `text` without the line of iomark's warning that it runs under Wine.
pub fn without_wine_warning(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| !l.starts_with("iomark: warning: running under Wine:"))
        .collect()
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

/// Whether Debian's fio is installed. Never on Windows: fio 3.33 side
/// by side is a comparison made on Linux (tests needing it are ignored
/// there, see [`fio_for_comparison`]).
pub fn have_fio() -> bool {
    if cfg!(windows) {
        return false;
    }
    output_within(
        Command::new("fio").arg("--version"),
        Duration::from_secs(30),
    )
    .map(|o| o.status.success())
    .unwrap_or(false)
}

/// Runs fio with JSON output in `dir`.
pub fn fio_json(dir: &Path, args: &[&str]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--output-format=json");
    let o = fio_output(Command::new("fio").args(&all).current_dir(dir));
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

/// Returns early from a test when fio is missing (fails it in strict
/// mode, see `missing`).
#[macro_export]
macro_rules! require_fio {
    () => {
        if !$crate::common::have_fio() {
            $crate::common::missing("fio is not installed (apt-get install fio)");
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

/// Whether a test whose tool or privilege is missing must fail rather
/// than skip: under CI (`CI` set to anything but `false`/`0`) or with
/// `IOMARK_STRICT_TESTS=1`.
pub fn strict() -> bool {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    set("CI") || set("IOMARK_STRICT_TESTS")
}

/// The line prefix `missing` prints on a skip; `.ci/run` counts these
/// lines in the test output.
pub const SKIP_MARKER: &str = "iomark-test skipped:";

/// A test (or a part of it) cannot run here because `why` (a tool or
/// privilege is missing): fails under `strict()`, else prints
/// `SKIP_MARKER`, the test's name and `why` on stderr, past the test
/// harness's output capture so that a passing run still shows it.
/// Callers return (or leave out the part) after it.
pub fn missing(why: &str) {
    if strict() {
        panic!("cannot run this test: {why} (strict mode: CI or IOMARK_STRICT_TESTS is set)");
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    // One write, so parallel tests do not interleave within the line.
    let line = format!("{SKIP_MARKER} {test}: {why}\n");
    use std::io::Write;
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether fio can be run for a comparison inside a test that also
/// checks iomark alone; when it cannot, the comparison is reported as
/// skipped through `missing`.
/// On Windows the comparison is left out quietly (see [`have_fio`]):
/// the test's checks of iomark alone run there.
pub fn fio_for_comparison() -> bool {
    if have_fio() {
        return true;
    }
    if cfg!(windows) {
        return false;
    }
    missing("fio is not installed (apt-get install fio): the comparison with fio is left out");
    false
}

#[cfg(target_os = "linux")]
/// Whether this kernel lets us create an io_uring; when it does not, says
/// so through `missing` (the io_uring part of the test is left out).
pub fn io_uring_available() -> bool {
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup with zeroed parameters; the fd is closed.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 2, params.as_mut_ptr()) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        missing(&format!(
            "io_uring is not available here ({e}; seccomp or kernel.io_uring_disabled?)"
        ));
        return false;
    }
    // SAFETY: closing the ring just created.
    unsafe { libc::close(fd as i32) };
    true
}

/// Whether the tests run as root (loop devices, mounts).
#[cfg(unix)]
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(target_os = "linux")]
/// Whether this process may give I/O the real-time priority class
/// (CAP_SYS_NICE or CAP_SYS_ADMIN in its effective set); when it may
/// not, says so through `missing`.
pub fn realtime_io_priority_allowed() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    // CAP_SYS_ADMIN is bit 21, CAP_SYS_NICE bit 23.
    if eff & (1 << 21 | 1 << 23) != 0 {
        return true;
    }
    missing("the real-time I/O priority class needs CAP_SYS_NICE or CAP_SYS_ADMIN");
    false
}

/// The serial group of the tests (all in this one process): a test whose
/// verdict rests on a time it measures takes [`timing_alone`], a test
/// that keeps the CPUs busy for long takes [`cpu_heavy`]; the first runs
/// only while none of the others does, the heavy ones share. (Other load
/// on the machine is what each timed check's margin is for.)
static SERIAL_GROUP: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that times something (a runtime, a rate, a stop within
/// a timeout, a comparison of two timed runs), for the whole test: no
/// [`cpu_heavy`] test and no other timing test runs meanwhile. Take it
/// once, at the start of the test, never while holding [`cpu_heavy`].
pub fn timing_alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    SERIAL_GROUP.write().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that loads the CPUs for seconds on end (an emulated
/// guest, fio and iomark side by side, many runs at once), for the whole
/// test: it runs beside other such tests but never beside a
/// [`timing_alone`] one. Take it once, at the start of the test.
pub fn cpu_heavy() -> std::sync::RwLockReadGuard<'static, ()> {
    SERIAL_GROUP.read().unwrap_or_else(|e| e.into_inner())
}
