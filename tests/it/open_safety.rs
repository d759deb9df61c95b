//! Safety at open time: what the check approved before the run must
//! still hold when a later job opens its files (no link swapped in, no
//! file that appeared meanwhile, no mount that appeared meanwhile), a
//! device stacked on the target (a loop device at an offset, on a loop
//! device) counts, and FIFOs or character devices are refused as
//! targets unless `allow_special_files=1`, whose open then still stops on
//! Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::loopdev::{LoopDev, Mount};

/// Whether the file carries iomark's mark (`user.iomark`).
fn marked(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let mut v = [0u8; 8];
    // SAFETY: NUL-terminated path and name; an 8-byte buffer; lgetxattr
    // does not follow a link.
    let r = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"user.iomark".as_ptr(),
            v.as_mut_ptr().cast(),
            v.len(),
        )
    };
    r > 0
}

/// Waits for a child, killing it (and failing) after `limit`.
fn wait_for(mut child: Child, limit: Duration) -> Output {
    let t0 = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("iomark still running after {limit:?}: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn spawn(dir: &Path, args: &[&str]) -> Child {
    iomark()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iomark")
}

/// A two-job file: the first job's `exec_postrun` (it runs while the
/// plan's check is long done) does `meddle`; the second job, after a
/// stonewall, writes `later.dat`.
fn race_job(dir: &Path, meddle: &str) -> PathBuf {
    let job = dir.join("race.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nrw=write\nbs=4k\nsize=64k\n\n\
             [first]\nfilename={d}/first.dat\nexec_postrun={meddle}\n\n\
             [second]\nstonewall\nfilename={d}/later.dat\n",
            d = dir.display()
        ),
    )
    .unwrap();
    job
}

const PRECIOUS: &[u8] = b"customer records, not a benchmark file\n";

#[test]
fn a_link_swapped_in_after_the_check_is_not_followed() {
    let dir = tempdir();
    let d = dir.path();
    let victim = d.join("victim.dat");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let job = race_job(
        d,
        &format!("ln -s {} {}/later.dat", victim.display(), d.display()),
    );
    let o = run_in(d, &[job.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let refusal: Vec<&str> = err.lines().filter(|l| l.contains("refusing")).collect();
    assert_eq!(refusal.len(), 1, "{err}");
    assert!(
        refusal[0].starts_with("iomark: job 'second': refusing to open '")
            && refusal[0].contains("later.dat': it is now a symbolic link to '")
            && refusal[0].contains("victim.dat"),
        "{err}"
    );
    // The victim is untouched and not marked as iomark's.
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
    assert!(!marked(&victim));
    // The report is still complete: the second job failed (ELOOP).
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 64 << 10);
    assert_eq!(j["jobs"][1]["error"], libc::ELOOP);
    assert_eq!(j["jobs"][1]["write"]["io_bytes"], 0);
    // What iomark did create is marked.
    assert!(marked(&d.join("first.dat")));
}

#[test]
fn a_file_created_by_someone_else_after_the_check_is_refused() {
    let dir = tempdir();
    let d = dir.path();
    let later = d.join("later.dat");
    // Another program creates the file while the first job runs.
    let job = race_job(
        d,
        &format!("printf 'customer records' > {}", later.display()),
    );
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("refusing to open '")
            && err.contains("later.dat': it did not exist when the run was checked")
            && err.contains("iomark did not create"),
        "{err}"
    );
    assert_eq!(std::fs::read(&later).unwrap(), b"customer records");
    assert!(!marked(&later));

    // A hard link to a precious file is refused the same way.
    std::fs::remove_file(&later).unwrap();
    let victim = d.join("victim.dat");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let job = race_job(d, &format!("ln {} {}", victim.display(), later.display()));
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("did not exist when the run was checked"));
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);

    // Without anyone meddling, the same job file runs and both jobs
    // create (and mark) their files.
    std::fs::remove_file(&later).unwrap();
    let job = race_job(d, "true");
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&later).unwrap().len(), 64 << 10);
    assert!(marked(&later));
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[test]
fn a_fifo_or_character_device_target_is_refused_at_once() {
    let dir = tempdir();
    let d = dir.path();
    let fifo = d.join("pipe");
    mkfifo(&fifo);
    let name = format!("--filename={}", fifo.display());
    for rw in ["--rw=read", "--rw=write"] {
        let child = spawn(d, &["--name=p", &name, rw, "--size=64k"]);
        let o = wait_for(child, Duration::from_secs(20));
        assert_eq!(o.status.code(), Some(1), "{rw}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.starts_with("iomark: refusing to use '")
                && err.contains("it is a FIFO (named pipe)")
                && err.contains("allow_special_files=1"),
            "{err}"
        );
        assert!(stdout(&o).is_empty());
    }
    // A character device that is not storage.
    if Path::new("/dev/urandom").exists() {
        let o = run_in(
            d,
            &[
                "--name=c",
                "--filename=/dev/urandom",
                "--rw=read",
                "--size=4k",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("is a character device (1:9)"));
    } else {
        missing("/dev/urandom does not exist");
    }
    // /dev/null and /dev/zero work as with fio.
    let j = run_json(
        d,
        &[
            "--name=n",
            "--filename=/dev/null",
            "--rw=write",
            "--size=64k",
        ],
    );
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 64 << 10);
    let j = run_json(
        d,
        &[
            "--name=z",
            "--filename=/dev/zero",
            "--rw=read",
            "--size=64k",
        ],
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 64 << 10);
}

#[test]
fn an_allowed_fifo_waits_for_a_writer_and_ctrl_c_stops_the_wait() {
    let dir = tempdir();
    let d = dir.path();
    let fifo = d.join("pipe");
    mkfifo(&fifo);
    let name = format!("--filename={}", fifo.display());
    let mut child = spawn(
        d,
        &[
            "--name=p",
            &name,
            "--rw=read",
            "--size=64k",
            "--allow_special_files=1",
            "--output-format=json",
        ],
    );
    // Give it time to reach the open, where it waits for a writer.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "iomark did not wait for the FIFO's writer"
    );
    // SAFETY: signalling the child started above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = wait_for(child, Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("waiting for a writer to open FIFO"), "{err}");
    // The report is still written, valid JSON.
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["jobs"][0]["error"], libc::EINTR);
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output_bounded()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Loop devices and ext4 can be used here (else says why, see `missing`).
fn can_stack() -> bool {
    if !is_root() {
        missing("loop devices and mounts need root");
        return false;
    }
    for tool in ["losetup", "mkfs.ext4", "mount"] {
        if !have(tool) {
            missing(&format!("{tool} is not installed"));
            return false;
        }
    }
    true
}

/// A loop device over another device, starting `offset` bytes into it.
fn stack_on(dev: &LoopDev, offset: u64) -> LoopDev {
    let out = Command::new("losetup")
        .args(["-f", "--show", "-o", &offset.to_string(), dev.as_str()])
        .output_bounded()
        .expect("run losetup");
    assert!(
        out.status.success(),
        "losetup -o {offset} {}: {}",
        dev.as_str(),
        String::from_utf8_lossy(&out.stderr)
    );
    LoopDev {
        path: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
        image: dev.path.clone(),
    }
}

fn mkfs(dev: &LoopDev) {
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F", dev.as_str()])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mkfs.ext4 {}", dev.as_str());
}

/// The first `len` bytes of a file are all zero.
fn zeroed(path: &Path, len: usize) -> bool {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, 0).unwrap();
    b.iter().all(|x| *x == 0)
}

fn write_dev(dev: &LoopDev, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["--name=w", "--rw=write", "--bs=64k", "--size=1m"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.push(format!("--filename={}", dev.as_str()));
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run_args(dir: &Path, args: &[String]) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(dir, &a)
}

fn kernel_name(dev: &LoopDev) -> String {
    dev.path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_mounted_loop_device_stacked_on_the_target_is_found() {
    if !can_stack() {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let Some(a) = LoopDev::new(d, 24 << 20) else {
        missing("cannot attach a loop device");
        return;
    };
    // B starts 1 MiB into A: A's own first blocks stay zero.
    let b = stack_on(&a, 1 << 20);
    mkfs(&b);
    let mnt = d.join("mnt-b");
    let Some(m) = Mount::new(&b.path, &mnt) else {
        missing("cannot mount ext4 on a loop device");
        return;
    };
    let o = run_args(d, &write_dev(&a, &["--allow_destroy_data=1"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}, which is on it, is mounted on {}",
            kernel_name(&b),
            mnt.display()
        )) && err.contains("allow_mounted_write=1"),
        "{err}"
    );
    assert!(zeroed(&a.image, 1 << 20));
    drop(m);
    // Unmounted, B's filesystem is still data on A.
    let o = run_args(d, &write_dev(&a, &[]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}, which is on it, holds an ext2/3/4 filesystem",
            kernel_name(&b)
        )) && err.contains("allow_destroy_data=1"),
        "{err}"
    );
    // Stacked twice: C on B on A, C mounted.
    let c = stack_on(&b, 1 << 20);
    mkfs(&c);
    let mnt_c = d.join("mnt-c");
    let Some(_mc) = Mount::new(&c.path, &mnt_c) else {
        missing("cannot mount ext4 on a loop device");
        return;
    };
    let o = run_args(d, &write_dev(&a, &["--allow_destroy_data=1"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}, which is on {} (on it), is mounted on {}",
            kernel_name(&c),
            kernel_name(&b),
            mnt_c.display()
        )),
        "{err}"
    );
    assert!(zeroed(&a.image, 1 << 20));
}

#[test]
fn a_mount_that_appears_between_check_and_open_is_refused() {
    if !can_stack() {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let Some(a) = LoopDev::new(d, 24 << 20) else {
        missing("cannot attach a loop device");
        return;
    };
    let b = stack_on(&a, 1 << 20);
    mkfs(&b);
    let mnt = d.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    // Unmounts whatever the job mounted, also when the test fails.
    let _m = Mount { dir: mnt.clone() };
    let job = d.join("mount.fio");
    std::fs::write(
        &job,
        format!(
            "[first]\nioengine=null\nrw=write\nsize=64k\nexec_postrun=mount {b} {m}\n\n\
             [second]\nstonewall\nfilename={a}\nrw=write\nbs=64k\nsize=1m\nallow_destroy_data=1\n",
            b = b.as_str(),
            m = mnt.display(),
            a = a.as_str()
        ),
    )
    .unwrap();
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "refusing to write to block device '{}'",
            a.as_str()
        )) && err.contains(&format!("is mounted on {}", mnt.display()))
            && err.contains("checked again after opening it"),
        "{err}"
    );
    assert!(zeroed(&a.image, 1 << 20));
}
