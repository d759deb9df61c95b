//! Nothing written without consent: each reproducer of the issue "read
//! jobs that write, deletion by path, guards that look only at the start"
//! as a test. Each ends in a clear one-line error or a correct run, and
//! no byte of any file the run did not create changes (hashed before and
//! after). Swaps that must happen at a precise moment are done by the
//! job's own `exec_prerun`/`exec_postrun`, which run at known points.

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

#[cfg(unix)]
const PRECIOUS: &[u8] = b"precious customer records\n";

/// A hash of a file's bytes, or None when it is gone.
fn hash(path: &Path) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let data = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    Some(h.finish())
}

fn one_line_error(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("warning: ") && !l.contains("note: "))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
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

#[cfg(target_os = "linux")]
fn have(tool: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output_bounded()
        .is_ok_and(|o| o.status.success())
}

// A UTS namespace and /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_read_job_cannot_change_the_host_name_in_a_uts_namespace() {
    if !is_root() || !have("unshare") || !have("hostname") {
        missing("needs root, unshare and hostname (util-linux, hostname)");
        return;
    }
    let dir = tempdir();
    // In a namespace of its own: the real host name is never at risk.
    for readonly in ["--readonly", "--allow_destroy_data=1"] {
        let script = format!(
            "hostname iomark-before; '{}' {readonly} --name=r \
             --filename=/proc/sys/kernel/hostname --rw=read --bs=32 --size=32 \
             '--buffer_pattern=\"pwned-by-a-read-job\"' 2>err; echo rc=$?; hostname",
            env!("CARGO_BIN_EXE_iomark")
        );
        let o = std::process::Command::new("unshare")
            .args(["--uts", "sh", "-c", &script])
            .current_dir(dir.path())
            .output_bounded()
            .expect("run unshare");
        let out = stdout(&o);
        let err = std::fs::read_to_string(dir.path().join("err")).unwrap();
        assert!(out.contains("rc=1"), "{readonly}: {out} {err}");
        assert!(
            out.trim_end().ends_with("iomark-before"),
            "{readonly}: {out}"
        );
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(
            lines[0].contains("'/proc/sys/kernel/hostname'") && lines[0].contains("procfs"),
            "{err}"
        );
    }
}

// /proc and /sys.
#[cfg(target_os = "linux")]
#[test]
fn pseudo_filesystems_are_refused_for_any_job() {
    let dir = tempdir();
    for (target, fs) in [
        ("/proc/sys/kernel/hostname", "procfs"),
        ("/sys/kernel/mm/transparent_hugepage/enabled", "sysfs"),
        ("/proc/iomark-new-file", "procfs"),
    ] {
        if !Path::new(target).parent().unwrap().exists() {
            continue;
        }
        for rw in ["read", "write"] {
            let o = run_in(
                dir.path(),
                &[
                    "--name=p",
                    &format!("--filename={target}"),
                    &format!("--rw={rw}"),
                    "--bs=4",
                    "--size=4",
                ],
            );
            let line = one_line_error(&o);
            assert!(line.contains(fs) && line.contains(target), "{line}");
        }
    }
}

#[test]
fn a_read_job_never_extends_a_short_file() {
    let dir = tempdir();
    let f = dir.path().join("u.txt");
    std::fs::write(&f, b"nineteen bytes here").unwrap();
    let before = hash(&f);
    for extra in [None, Some("--readonly")] {
        let mut args = vec![
            "--name=r",
            "--filename=u.txt",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
        ];
        args.extend(extra);
        let line = one_line_error(&run_in(dir.path(), &args));
        assert!(
            line.contains("'u.txt' is 19 bytes") && line.contains("64KiB"),
            "{line}"
        );
        assert_eq!(hash(&f), before, "{extra:?}");
    }
    // Under --readonly nothing is created either (fio: "refusing extend").
    let o = run_in(
        dir.path(),
        &[
            "--readonly",
            "--name=r",
            "--filename=new.dat",
            "--rw=read",
            "--size=64k",
        ],
    );
    assert!(one_line_error(&o).contains("--readonly forbids creating it"));
    assert!(!dir.path().join("new.dat").exists());
    // A read job may create and lay out a file of its own, as fio does.
    let j = run_json(
        dir.path(),
        &["--name=r", "--filename=new.dat", "--rw=read", "--size=64k"],
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 65536);
}

// sh command lines in exec_prerun/exec_postrun (mv, ln -s, rm) swap the files.
#[cfg(unix)]
#[test]
fn unlink_after_a_swapped_directory_removes_only_the_runs_own_file() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::create_dir(d.join("victimdir")).unwrap();
    let victim = d.join("victimdir/t.dat");
    std::fs::write(&victim, PRECIOUS).unwrap();
    // The file is laid out, then the directory is swapped for a link to
    // the victim's before the job runs and unlinks.
    let o = run_in(
        d,
        &[
            "--name=c4",
            "--filename=sub/t.dat",
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--unlink=1",
            "--exec_prerun=mv sub sub.old && ln -s victimdir sub",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
    // Its own file went, from where it is now.
    assert!(!d.join("sub.old/t.dat").exists());
}

// sh command lines in exec_prerun/exec_postrun (mv, ln -s, rm) swap the files.
#[cfg(unix)]
#[test]
fn a_directory_swapped_before_the_open_gets_no_file() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::create_dir(d.join("victimdir")).unwrap();
    let job = d.join("swap.fio");
    std::fs::write(
        &job,
        "[global]\nrw=write\nbs=4k\nsize=64k\n\n\
         [first]\nioengine=null\nexec_postrun=mv sub sub.old && ln -s victimdir sub\n\n\
         [second]\nstonewall\nfilename=sub/later.dat\n",
    )
    .unwrap();
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Created in the directory the run checked, never in the other one.
    assert_eq!(std::fs::read_dir(d.join("victimdir")).unwrap().count(), 0);
    assert!(d.join("sub.old/later.dat").exists());
}

// sh command lines in exec_prerun/exec_postrun (mv, ln -s, rm) swap the files.
#[cfg(unix)]
#[test]
fn a_file_deleted_during_the_run_is_not_created_again() {
    let dir = tempdir();
    let d = dir.path();
    // openfiles=1: the second file is opened after the first; it was
    // deleted (by the prerun, after layout) in between.
    let o = run_in(
        d,
        &[
            "--name=v",
            "--filename_format=v.$filenum",
            "--nrfiles=2",
            "--openfiles=1",
            "--rw=write",
            "--bs=4k",
            "--size=128k",
            "--exec_prerun=rm v.1",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("'v.1': no such file: it was deleted during the run"),
        "{err}"
    );
    assert!(!d.join("v.1").exists(), "re-created");
}

// A private mapping of a file shorter than the buffers: Windows cannot\nmap past a file's end without extending it, and refuses it by design.
#[cfg(unix)]
#[test]
fn mem_mmap_keeps_an_existing_files_contents() {
    let dir = tempdir();
    let d = dir.path();
    let db = d.join("user.db");
    std::fs::write(&db, PRECIOUS).unwrap();
    let j = run_json(
        d,
        &[
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--mem=mmap:user.db",
        ],
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 1 << 20);
    assert_eq!(std::fs::read(&db).unwrap(), PRECIOUS);
    for mem in ["mmapshared:user.db", "mmaphuge:user.db"] {
        let o = run_in(
            d,
            &[
                "--name=m",
                "--ioengine=null",
                "--size=1m",
                &format!("--mem={mem}"),
            ],
        );
        let line = one_line_error(&o);
        assert!(line.contains("iomark did not create it"), "{line}");
        assert_eq!(std::fs::read(&db).unwrap(), PRECIOUS);
    }
    // A file the job makes for its buffers goes when it ends, as in fio.
    let j = run_json(
        d,
        &[
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--mem=mmap:new.buf",
        ],
    );
    assert_eq!(j["jobs"][0]["error"], 0);
    assert!(!d.join("new.buf").exists());
}

// Symbolic links as Unix makes them (std::os::unix::fs::symlink).
#[cfg(unix)]
#[test]
fn logs_are_never_written_through_a_planted_link() {
    let dir = tempdir();
    let d = dir.path();
    let victim = d.join("victim.txt");
    std::fs::write(&victim, PRECIOUS).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("l_bw.1.log")).unwrap();
    let o = run_in(
        d,
        &[
            "--name=l",
            "--ioengine=null",
            "--size=1m",
            "--write_bw_log=l",
            "--output-format=json",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
}

// Symbolic links as Unix makes them (std::os::unix::fs::symlink).
#[cfg(unix)]
#[test]
fn quick_writes_its_reports_through_the_files_it_opened_at_the_start() {
    let dir = tempdir();
    let d = dir.path();
    let victim = d.join("victim.html");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let child = spawn(
        d,
        &[
            "quick",
            "--size=1m",
            "--runtime=200ms",
            "--passes=1",
            "--no-warmup",
            "--buffered",
            "--eta=never",
            "--json=r.json",
        ],
    );
    // While the run is under way (its test file is there), links take
    // the reports' places (replacing what the run opened at start, if it
    // did).
    let t0 = Instant::now();
    while !d.join("iomark-quick.tmp").exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    for name in ["r.json", "r.html"] {
        let _ = std::fs::remove_file(d.join(name));
        std::os::unix::fs::symlink(&victim, d.join(name)).unwrap();
    }
    let o = wait_for(child, Duration::from_secs(60));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
}

// Symbolic links as Unix makes them (std::os::unix::fs::symlink).
#[cfg(unix)]
#[test]
fn quick_refuses_a_report_path_linked_to_a_regular_file() {
    let dir = tempdir();
    let d = dir.path();
    let victim = d.join("victim.json");
    std::fs::write(&victim, PRECIOUS).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("r.json")).unwrap();
    let o = run_in(
        d,
        &[
            "quick",
            "--size=1m",
            "--runtime=100ms",
            "--passes=1",
            "--no-warmup",
            "--json=r.json",
        ],
    );
    let line = one_line_error(&o);
    assert!(line.contains("r.json") && line.contains("link"), "{line}");
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
    assert!(!d.join("iomark-quick.tmp").exists());
}

// Peak RSS read from /proc.
#[cfg(target_os = "linux")]
#[test]
fn iomem_align_is_bounded_and_costs_no_memory_it_does_not_use() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--iomem_align=8e",
        ],
    );
    let line = one_line_error(&o);
    assert!(
        line.contains("iomem_align") && line.contains("1g"),
        "{line}"
    );
    // 1 GiB of alignment on a 1 MiB job: its resident memory stays small.
    let child = spawn(
        dir.path(),
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--iomem_align=1g",
            "--time_based",
            "--runtime=1s",
        ],
    );
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let t0 = Instant::now();
    while let Ok(s) = std::fs::read_to_string(&status) {
        if let Some(v) = s.lines().find_map(|l| l.strip_prefix("VmHWM:")) {
            let kb: u64 = v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0);
            peak_kb = peak_kb.max(kb);
        }
        if t0.elapsed() > Duration::from_millis(800) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = wait_for(child, Duration::from_secs(30));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(peak_kb > 0 && peak_kb < 200 * 1024, "peak RSS {peak_kb} kB");
    // Planned memory over the machine's share is refused before the run.
    let o = run_in(
        dir.path(),
        &[
            "--name=big",
            "--ioengine=null",
            "--size=64p",
            "--bs=1g",
            "--iodepth=4096",
        ],
    );
    let line = one_line_error(&o);
    assert!(line.contains("of this machine's"), "{line}");
}

#[test]
fn time_based_without_a_runtime_does_the_size_once() {
    let dir = tempdir();
    let child = spawn(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--output-format=json",
        ],
    );
    let o = wait_for(child, Duration::from_secs(20));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("time_based has no effect without a runtime"),
        "{}",
        stderr(&o)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 1 << 20);
}

#[test]
fn readonly_refuses_every_job_that_changes_files() {
    let dir = tempdir();
    let d = dir.path();
    let f = d.join("data.bin");
    std::fs::write(&f, vec![7u8; 65536]).unwrap();
    let before = hash(&f);
    for (opts, what) in [
        (&["--ioengine=filedelete"][..], "deletes its files"),
        (
            &["--rw=read", "--unlink=1"][..],
            "deletes its files (unlink=1)",
        ),
        (
            &["--rw=read", "--unlink_each_loop=1"][..],
            "unlink_each_loop",
        ),
        (&["--rw=read", "--file_append=1"][..], "appends"),
        (&["--rw=trim"][..], "trims"),
        (&["--rw=randwrite"][..], "writes"),
        (&["--ioengine=ftruncate", "--rw=write"][..], "writes"),
    ] {
        let mut args = vec![
            "--readonly",
            "--name=j",
            "--filename=data.bin",
            "--bs=4k",
            "--size=64k",
            "--allow_destroy_data=1",
        ];
        args.extend_from_slice(opts);
        let line = one_line_error(&run_in(d, &args));
        assert!(
            line.contains(what) && line.contains("--readonly"),
            "{opts:?}: {line}"
        );
        assert_eq!(hash(&f), before, "{opts:?}");
    }
}

#[test]
fn bad_values_are_quoted_in_part() {
    let dir = tempdir();
    let long = "a".repeat(100_000);
    for arg in [format!("--bs={long}"), format!("--{long}=1")] {
        let o = run_in(
            dir.path(),
            &["--name=x", &arg, "--ioengine=null", "--size=1m"],
        );
        let line = one_line_error(&o);
        assert!(line.len() < 300, "{} bytes: {}", line.len(), &line[..200]);
    }
}

#[test]
fn quick_with_no_report_and_a_report_file_is_an_error() {
    let dir = tempdir();
    let o = run_in(dir.path(), &["quick", "--no-report", "--json", "-"]);
    let line = one_line_error(&o);
    assert!(line.contains("contradict"), "{line}");
    assert!(stdout(&o).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn missing_parent_directories_are_created_and_removed_when_empty() {
    let dir = tempdir();
    let d = dir.path();
    let j = run_json(
        d,
        &[
            "--name=p",
            "--filename=a/b/c.dat",
            "--rw=write",
            "--size=64k",
        ],
    );
    assert_eq!(j["jobs"][0]["error"], 0);
    assert_eq!(std::fs::metadata(d.join("a/b/c.dat")).unwrap().len(), 65536);
    let j = run_json(
        d,
        &[
            "--name=q",
            "--filename_format=x/y/$jobname.$jobnum",
            "--numjobs=2",
            "--rw=write",
            "--size=64k",
            "--unlink=1",
        ],
    );
    assert_eq!(j["jobs"][1]["error"], 0);
    // Removed with their files: the run made them and left them empty.
    assert!(!d.join("x").exists());
    if fio_for_comparison() {
        let f = tempdir();
        let o = fio_output(
            std::process::Command::new("fio")
                .args([
                    "--name=p",
                    "--filename=a/b/c.dat",
                    "--rw=write",
                    "--size=64k",
                ])
                .current_dir(f.path()),
        );
        assert!(o.status.success());
        assert_eq!(
            std::fs::metadata(f.path().join("a/b/c.dat")).unwrap().len(),
            65536
        );
    }
    // A link where a missing directory was to be made is not followed
    // (made by the job's `ln -s`, a Unix shell command).
    #[cfg(unix)]
    links_are_not_followed_to_make_directories(d);
}

#[cfg(unix)]
fn links_are_not_followed_to_make_directories(d: &Path) {
    let victims = d.join("victims");
    std::fs::create_dir(&victims).unwrap();
    let job = d.join("l.fio");
    std::fs::write(
        &job,
        "[first]\nioengine=null\nsize=64k\nexec_postrun=ln -s victims z\n\n\
         [second]\nstonewall\nrw=write\nsize=64k\nfilename=z/w/c.dat\n",
    )
    .unwrap();
    let o = run_in(d, &[job.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("not the directory iomark"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(&victims).unwrap().count(), 0);
}

/// `--output` into a file that has another hard link: refused in one
/// line, before anything is written, and the other name's file keeps
/// its bytes (on Windows the link count is the handle's,
/// `GetFileInformationByHandle`; Wine keeps Unix hard links).
#[test]
fn output_into_a_file_with_another_hard_link_is_refused() {
    let dir = tempdir();
    let d = dir.path();
    let other = d.join("notes.txt");
    std::fs::write(&other, b"24 bytes of user notes.\n").unwrap();
    std::fs::hard_link(&other, d.join("report.txt")).unwrap();
    let before = hash(&other);
    let o = run_in(
        d,
        &[
            "--name=h",
            "--ioengine=null",
            "--rw=read",
            "--size=64k",
            "--output=report.txt",
        ],
    );
    let line = one_line_error(&o);
    assert!(
        line.contains("report.txt") && line.contains("has other hard links"),
        "{line}"
    );
    assert_eq!(hash(&other), before);
    assert_eq!(std::fs::read(&other).unwrap(), b"24 bytes of user notes.\n");
}

/// Windows' device names: `--output=NUL` (and a trace written to `NUL`)
/// discards what is written, as `/dev/null` does on Linux, and makes no
/// file; any other device name, or `NUL` with an extension, as an output
/// or as a job's file or directory is refused in one line naming it
/// and why, with no file made.
#[cfg(windows)]
#[test]
fn nul_discards_and_other_windows_device_names_are_refused() {
    let dir = tempdir();
    let d = dir.path();
    let null_job = ["--name=n", "--ioengine=null", "--rw=read", "--size=64k"];
    let run = |extra: &[&str]| {
        let mut args = null_job.to_vec();
        args.extend_from_slice(extra);
        run_in(d, &args)
    };
    let names = || -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    for out in ["--output=NUL", "--output=nul", "--output=.\\Nul"] {
        let o = run(&[out, "--output-format=json"]);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{out}");
        assert!(names().is_empty(), "{out}: {:?}", names());
    }
    let o = run(&["--write_iolog=NUL"]);
    assert!(o.status.success(), "write_iolog=NUL: {}", stderr(&o));
    assert!(names().is_empty(), "write_iolog=NUL: {:?}", names());

    for (out, words) in [
        (
            "--output=con.txt",
            "'con.txt' is the Windows device CON (the console)",
        ),
        (
            "--output=nul.json",
            "'nul.json' is the Windows device NUL (the null device)",
        ),
        (
            "--output=COM1",
            "'COM1' is the name of a Windows device (a serial port)",
        ),
        (
            "--output=lpt1\\r.json",
            "'lpt1' is the name of a Windows device",
        ),
    ] {
        let line = one_line_error(&run(&[out]));
        assert!(line.contains(words), "{out}: {line}");
        assert!(names().is_empty(), "{out}: {:?}", names());
    }
    for (file, words) in [
        ("COM1", "refusing 'COM1': 'COM1' is the name of a Windows device (a serial port), not a file name"),
        ("aux.dat", "'aux.dat' is the Windows device AUX"),
        ("prn\\data.bin", "'prn' is the name of a Windows device (the printer), not a directory name"),
        ("Nul", "'Nul' is the name of a Windows device (the null device)"),
    ] {
        let o = run_in(
            d,
            &[
                "--name=w",
                "--ioengine=psync",
                "--rw=write",
                "--size=64k",
                &format!("--filename={file}"),
            ],
        );
        let line = one_line_error(&o);
        assert!(line.contains(words), "{file}: {line}");
        assert!(names().is_empty(), "{file}: {:?}", names());
    }
}
