//! Fault injection: a job whose target fails at run time (ENOSPC on a full
//! filesystem, EROFS on a read-only mount, EACCES for an unprivileged
//! user, EIO from an ext4 filesystem shut down mid-run, a target truncated
//! or deleted mid-run) ends with fio's errno in its `error`, while a
//! second job on a healthy target finishes with error 0 and its I/O
//! counted; the JSON report is complete and iomark exits non-zero. Each
//! case runs under fio too (same job file, same set-up) and the `error`
//! values and exit statuses must agree.
//!
//! Needs root, losetup, mkfs.ext4 and setpriv (else `common::missing`).
//! Every case makes its own small loop device, filesystem and mount, and
//! guards tear them down (and stop the benchmark) even when it panics.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::loopdev::{LoopDev, Mount};

const ENOENT: u64 = 2;
const EIO: u64 = 5;
const EACCES: u64 = 13;
const ENOSPC: u64 = 28;
const EROFS: u64 = 30;

/// The healthy job every run has: 1 MiB written to a file outside the
/// faulting filesystem.
const HEALTHY: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    Iomark,
    Fio,
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output_bounded()
        .is_ok_and(|o| o.status.success())
}

/// The tools to run a case with: iomark, and fio when it is installed.
fn tools() -> Vec<Tool> {
    if fio_for_comparison() {
        vec![Tool::Iomark, Tool::Fio]
    } else {
        vec![Tool::Iomark]
    }
}

/// A small ext4 filesystem on a loop device, mounted in a temporary
/// directory. Fields drop in order: unmounted, detached, removed.
struct Ext4 {
    mount: Mount,
    dev: LoopDev,
    dir: tempfile::TempDir,
}

impl Ext4 {
    /// `size` bytes, mounted with `options` ("rw", "ro").
    fn new(size: u64, options: &str) -> Option<Ext4> {
        if !have("mkfs.ext4") {
            missing("mkfs.ext4 is not installed (apt-get install e2fsprogs)");
            return None;
        }
        let dir = tempdir();
        let dev = LoopDev::with_image(dir.path(), "fs.img", size, false)?;
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&dev.path)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfs.ext4 {}", dev.as_str());
        let mount = Mount::with_options(&dev.path, &dir.path().join("mnt"), options)?;
        Some(Ext4 { mount, dev, dir })
    }

    fn file(&self, name: &str) -> PathBuf {
        self.mount.dir.join(name)
    }

    /// Reads the loop device completed since it was attached.
    fn reads(&self) -> u64 {
        let name = self.dev.path.file_name().unwrap().to_string_lossy();
        let stat = fs::read_to_string(format!("/sys/block/{name}/stat")).expect("device stat");
        stat.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// Waits until the running job has read `n` more blocks from the
    /// device: its I/O has started.
    fn wait_for_reads(&self, run: &mut Running, n: u64) {
        let base = self.reads();
        let t0 = Instant::now();
        while self.reads() < base + n {
            if let Some(s) = run.child.try_wait().unwrap() {
                panic!("{:?} ended ({s}) before its I/O was seen", run.tool);
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "no I/O seen on {} after 60 s",
                self.dev.as_str()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Shuts the filesystem down as a failing disk would (ext4's
    /// EXT4_IOC_SHUTDOWN, without flushing the log): I/O on it fails with
    /// EIO from then on.
    fn shut_down(&self) {
        use std::os::fd::AsRawFd;
        // _IOR('X', 125, __u32)
        const EXT4_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587d;
        const EXT4_GOING_FLAGS_NOLOGFLUSH: u32 = 2;
        let d = fs::File::open(&self.mount.dir).expect("open the mount point");
        let flag = EXT4_GOING_FLAGS_NOLOGFLUSH;
        // SAFETY: the ioctl reads one u32 from a live local.
        let r = unsafe { libc::ioctl(d.as_raw_fd(), EXT4_IOC_SHUTDOWN, &flag) };
        assert_eq!(r, 0, "shutdown: {}", std::io::Error::last_os_error());
    }
}

/// A benchmark running in the background; killed if still running when
/// dropped (a failed assertion must not leave it holding the mount).
struct Running {
    tool: Tool,
    child: Child,
    dir: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a run left: exit code, the parsed JSON report, stderr.
struct Done {
    tool: Tool,
    code: Option<i32>,
    json: Value,
    stderr: String,
}

/// Starts `tool` on `job.fio` in `dir` with JSON output; `as_nobody`
/// drops to uid/gid 65534 first (with `bin` as the iomark binary).
fn start(tool: Tool, dir: &Path, extra: &[&str], as_nobody: Option<&Path>) -> Running {
    let iomark = PathBuf::from(env!("CARGO_BIN_EXE_iomark"));
    let program = match tool {
        Tool::Iomark => as_nobody.map_or(iomark, Path::to_path_buf),
        Tool::Fio => PathBuf::from("fio"),
    };
    let mut cmd = match as_nobody {
        Some(_) => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&program);
            c
        }
        None => Command::new(&program),
    };
    cmd.arg("job.fio")
        .arg("--output-format=json")
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::from(fs::File::create(dir.join("out.json")).unwrap()))
        .stderr(Stdio::from(fs::File::create(dir.join("err.txt")).unwrap()));
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("start {program:?}: {e}"));
    Running {
        tool,
        child,
        dir: dir.to_path_buf(),
    }
}

impl Running {
    /// Waits (at most two minutes, then kills it) for the run to end.
    fn finish(mut self) -> Done {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(120) {
                // Killed, so that a hung tool does not outlive the test.
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{:?} still running after 120 s: killed", self.tool);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = fs::read_to_string(self.dir.join("out.json")).unwrap();
        let stderr = fs::read_to_string(self.dir.join("err.txt")).unwrap();
        // fio prints its error lines before the document; iomark's stdout
        // is the document alone.
        let doc = match self.tool {
            Tool::Iomark => &out[..],
            Tool::Fio => &out[out.find("{\n").unwrap_or(0)..],
        };
        let json = serde_json::from_str(doc).unwrap_or_else(|e| {
            panic!(
                "{:?}: the report is not valid JSON ({e}):\n{out}\n{stderr}",
                self.tool
            )
        });
        Done {
            tool: self.tool,
            code: status.code(),
            json,
            stderr,
        }
    }
}

/// Runs a job file to the end.
fn run(tool: Tool, dir: &Path, job: &str, extra: &[&str]) -> Done {
    fs::write(dir.join("job.fio"), job).unwrap();
    start(tool, dir, extra, None).finish()
}

/// The job file of a case: `[victim]` (the fault) then `[healthy]`.
fn two_jobs(victim: &str, healthy: &Path) -> String {
    format!(
        "[victim]\n{victim}\n[healthy]\nfilename={}\nrw=write\nbs=64k\nsize={HEALTHY}\n",
        healthy.display()
    )
}

fn jobs(d: &Done) -> &Vec<Value> {
    d.json["jobs"].as_array().expect("a jobs array")
}

/// The checks every case makes on one run: a complete report of both
/// jobs, the victim's error, the healthy job's I/O, a failing exit code.
fn check(d: &Done, errno: u64) {
    let t = d.tool;
    assert_ne!(d.code, Some(0), "{t:?} exited 0: {}", d.stderr);
    assert!(
        d.code.is_some(),
        "{t:?} was killed by a signal: {}",
        d.stderr
    );
    let j = jobs(d);
    assert_eq!(j.len(), 2, "{t:?}: {}", d.json);
    assert_eq!(j[0]["jobname"], "victim");
    assert_eq!(j[1]["jobname"], "healthy");
    for job in j {
        for key in [
            "groupid",
            "job_runtime",
            "usr_cpu",
            "iodepth_level",
            "latency_ns",
        ] {
            assert!(job.get(key).is_some(), "{t:?}: no {key} in {job}");
        }
        for dir in ["read", "write", "trim"] {
            for key in ["io_bytes", "total_ios", "bw", "runtime"] {
                assert!(job[dir][key].is_u64(), "{t:?}: {dir}.{key} in {job}");
            }
            assert!(job[dir]["iops"].is_number(), "{t:?}: {dir}.iops in {job}");
            for key in ["slat_ns", "clat_ns", "lat_ns"] {
                assert!(job[dir][key].is_object(), "{t:?}: {dir}.{key} in {job}");
            }
        }
    }
    assert_eq!(j[0]["error"], errno, "{t:?}: victim's error\n{}", d.stderr);
    assert_eq!(j[1]["error"], 0, "{t:?}: healthy job's error\n{}", d.stderr);
    assert_eq!(
        j[1]["write"]["io_bytes"], HEALTHY,
        "{t:?}: healthy job's I/O"
    );
    assert_eq!(j[1]["write"]["total_ios"], HEALTHY / (64 << 10));
    if t == Tool::Iomark {
        // Errors go to stderr, one line naming the job.
        let line = d
            .stderr
            .lines()
            .find(|l| l.starts_with("iomark: job 'victim': "))
            .unwrap_or_else(|| panic!("no error line for victim: {}", d.stderr));
        let lower = line.to_lowercase();
        let reason = std::io::Error::from_raw_os_error(errno as i32).to_string();
        // Its first words: "no such file", "permission denied", …
        let words: Vec<String> = reason
            .split(" (os error")
            .next()
            .unwrap()
            .to_lowercase()
            .split_whitespace()
            .take(3)
            .map(str::to_string)
            .collect();
        let said = words.join(" ");
        assert!(lower.contains(&said), "{line} does not say {said}");
        assert!(!d.stderr.contains("panicked"), "{}", d.stderr);
    }
}

/// Checks each run, then that iomark and fio agree on the victim's error
/// and the exit status; returns the runs for case-specific checks.
fn compare(runs: Vec<Done>, errno: u64) -> Vec<Done> {
    // The fault table (cargo test faults -- --nocapture shows it).
    let thread = std::thread::current();
    let case = thread.name().unwrap_or("?");
    for d in &runs {
        println!(
            "{case}: {:?} error={} exit={:?}",
            d.tool,
            jobs(d).first().map_or(Value::Null, |j| j["error"].clone()),
            d.code
        );
    }
    for d in &runs {
        check(d, errno);
    }
    if let [ours, theirs] = &runs[..] {
        assert_eq!(jobs(ours)[0]["error"], jobs(theirs)[0]["error"]);
        assert_eq!(ours.code, theirs.code, "exit status: iomark vs fio");
        // The report has every field fio's has, job by job.
        for (a, b) in jobs(ours).iter().zip(jobs(theirs)) {
            for key in b.as_object().unwrap().keys() {
                assert!(a.get(key).is_some(), "iomark's job lacks {key}");
            }
        }
    }
    runs
}

#[test]
fn enospc_on_a_full_filesystem() {
    let mut runs = Vec::new();
    for tool in tools() {
        let Some(fs) = Ext4::new(8 << 20, "rw") else {
            return;
        };
        let victim = format!(
            "filename={}\nrw=write\nbs=64k\nsize=16m",
            fs.file("full").display()
        );
        let job = two_jobs(&victim, &fs.dir.path().join("healthy.dat"));
        runs.push(run(tool, fs.dir.path(), &job, &[]));
    }
    for d in compare(runs, ENOSPC) {
        // It wrote until the filesystem was full.
        let w = jobs(&d)[0]["write"]["io_bytes"].as_u64().unwrap();
        assert!(w > 1 << 20 && w < 8 << 20, "{:?} wrote {w}", d.tool);
    }
}

#[test]
fn erofs_on_a_read_only_mount() {
    let mut runs = Vec::new();
    for tool in tools() {
        let Some(fs) = Ext4::new(8 << 20, "ro") else {
            return;
        };
        let victim = format!(
            "filename={}\nrw=write\nbs=64k\nsize=1m",
            fs.file("new").display()
        );
        let job = two_jobs(&victim, &fs.dir.path().join("healthy.dat"));
        runs.push(run(tool, fs.dir.path(), &job, &[]));
    }
    for d in compare(runs, EROFS) {
        assert_eq!(jobs(&d)[0]["write"]["io_bytes"], 0);
    }
}

/// A world-readable directory in the system temp dir (the test scratch
/// directory may be out of reach of other users), removed when dropped.
fn public_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("iomark-faults")
        .tempdir()
        .expect("temp dir");
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    d
}

#[test]
fn eacces_for_an_unprivileged_user() {
    if !is_root() {
        missing("running a job as another user needs root");
        return;
    }
    if !have("setpriv") {
        missing("setpriv is not installed (apt-get install util-linux)");
        return;
    }
    let mut runs = Vec::new();
    for tool in tools() {
        // pub/iomark: a copy nobody can run; pub/root/target: root's,
        // 0644, in a directory nobody can search but not write;
        // pub/own: nobody's, for the healthy job and the reports.
        let base = public_dir();
        let bin = base.path().join("iomark");
        fs::copy(env!("CARGO_BIN_EXE_iomark"), &bin).unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        let root = base.path().join("root");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let target = root.join("target");
        fs::write(&target, vec![0x5au8; 1 << 20]).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        let own = base.path().join("own");
        fs::create_dir(&own).unwrap();
        std::os::unix::fs::chown(&own, Some(65534), Some(65534)).unwrap();
        let victim = format!("filename={}\nrw=write\nbs=64k\nsize=1m", target.display());
        fs::write(
            own.join("job.fio"),
            two_jobs(&victim, &own.join("healthy.dat")),
        )
        .unwrap();
        // The file exists and iomark did not make it: say it may be
        // overwritten, so the open (not the safety check) decides.
        let extra: &[&str] = match tool {
            Tool::Iomark => &["--allow_destroy_data=1"],
            Tool::Fio => &[],
        };
        let d = start(tool, &own, extra, Some(&bin)).finish();
        assert!(
            fs::read(&target).unwrap().iter().all(|b| *b == 0x5a),
            "{tool:?} changed root's file"
        );
        runs.push(d);
    }
    for d in compare(runs, EACCES) {
        assert_eq!(jobs(&d)[0]["write"]["io_bytes"], 0);
    }
}

/// Runs `victim` (which must read the device) with each tool on a new
/// 16 MiB filesystem, applies `fault` once the victim has done `reads`
/// reads, and returns the runs.
fn mid_run(
    victim: impl Fn(&Ext4) -> String,
    reads: u64,
    fault: impl Fn(&Ext4),
) -> Option<Vec<Done>> {
    let mut runs = Vec::new();
    for tool in tools() {
        let fs = Ext4::new(16 << 20, "rw")?;
        let dir = fs.dir.path();
        let job = two_jobs(&victim(&fs), &dir.join("healthy.dat"));
        fs::write(dir.join("job.fio"), job).unwrap();
        let mut running = start(tool, dir, &[], None);
        fs.wait_for_reads(&mut running, reads);
        fault(&fs);
        runs.push(running.finish());
    }
    Some(runs)
}

#[test]
fn eio_from_a_filesystem_shut_down_mid_run() {
    // Random direct reads and writes (1000 a second, to stay light on a
    // shared machine) for up to 30 s; the shutdown ends it.
    let victim = |fs: &Ext4| {
        format!(
            "filename={}\nrw=randrw\nbs=4k\nsize=2m\ndirect=1\nrate_iops=1000\ntime_based\nruntime=30",
            fs.file("f").display()
        )
    };
    let Some(runs) = mid_run(victim, 200, Ext4::shut_down) else {
        return;
    };
    for d in compare(runs, EIO) {
        let v = &jobs(&d)[0];
        assert!(v["read"]["io_bytes"].as_u64().unwrap() >= 100 * 4096, "{v}");
        assert!(v["job_runtime"].as_u64().unwrap() < 29_000, "{v}");
    }
}

#[test]
fn eio_from_a_target_truncated_mid_run() {
    // Random direct reads (1000 a second) for up to 30 s; after the
    // truncation a read gets no data, which ends the job with EIO in both
    // tools.
    let victim = |fs: &Ext4| {
        format!(
            "filename={}\nrw=randread\nbs=4k\nsize=2m\ndirect=1\nrate_iops=1000\ntime_based\nruntime=30",
            fs.file("f").display()
        )
    };
    let truncate = |fs: &Ext4| {
        let f = fs::OpenOptions::new()
            .write(true)
            .open(fs.file("f"))
            .unwrap();
        f.set_len(0).unwrap();
    };
    let Some(runs) = mid_run(victim, 200, truncate) else {
        return;
    };
    for d in compare(runs, EIO) {
        let v = &jobs(&d)[0];
        assert!(v["read"]["io_bytes"].as_u64().unwrap() >= 100 * 4096, "{v}");
        assert!(v["job_runtime"].as_u64().unwrap() < 29_000, "{v}");
    }
}

#[test]
fn enoent_for_a_target_deleted_mid_run() {
    // Two 2 MiB files read one after the other, one open at a time, at
    // 100 reads/s: the second is deleted while the first is being read
    // (5 s of it), so opening it fails.
    let victim = |fs: &Ext4| {
        format!(
            "filename={}:{}\nrw=read\nbs=4k\nsize=4m\ndirect=1\nopenfiles=1\n\
             file_service_type=sequential\nrate_iops=100",
            fs.file("a").display(),
            fs.file("b").display()
        )
    };
    let delete = |fs: &Ext4| fs::remove_file(fs.file("b")).unwrap();
    let Some(runs) = mid_run(victim, 20, delete) else {
        return;
    };
    for d in compare(runs, ENOENT) {
        // All of the first file was read, nothing of the second.
        assert_eq!(jobs(&d)[0]["read"]["io_bytes"], 2 << 20, "{:?}", d.tool);
    }
}

#[test]
fn fill_device_as_root_writes_into_the_reserve_until_enospc_as_fio() {
    // As root, fio writes until ENOSPC, the root reserve included; the
    // job ends cleanly (no error). Same filesystem size, same I/O.
    let mut done = Vec::new();
    for tool in tools() {
        let Some(fs) = Ext4::new(32 << 20, "rw") else {
            return;
        };
        let job = format!(
            "[fill]\nfilename={}\nrw=write\nbs=64k\nfill_device=1\n",
            fs.file("fill").display()
        );
        let (_, user_free) = nix_free(&fs.mount.dir);
        let d = run(tool, fs.dir.path(), &job, &[]);
        let j = &jobs(&d)[0];
        assert_eq!(j["error"], 0, "{tool:?}: {}", d.stderr);
        let bytes = j["write"]["io_bytes"].as_u64().unwrap();
        let ios = j["write"]["total_ios"].as_u64().unwrap();
        // A 32 MiB ext4 keeps 5 % for root: more than what was free to
        // users was written, and none is left to them.
        assert!(bytes > user_free, "{tool:?}: {bytes} of {user_free}");
        assert_eq!(nix_free(&fs.mount.dir).1, 0, "{tool:?}");
        done.push((tool, bytes, ios));
    }
    if let [(_, b1, n1), (_, b2, n2)] = done[..] {
        assert_eq!((b1, n1), (b2, n2), "iomark vs fio (bytes, writes)");
    }
    eprintln!("fill_device: {done:?}");
}

/// Free bytes of the filesystem at `dir` (all, then those for users).
fn nix_free(dir: &Path) -> (u64, u64) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs is plain data; all zeroes is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct to fill, both live.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    assert_eq!(rc, 0);
    let b = st.f_frsize as u64;
    (st.f_bfree as u64 * b, st.f_bavail as u64 * b)
}
