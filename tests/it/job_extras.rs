//! Options around a job's I/O: the access pattern it announces
//! (`fadvise_hint`), the errors it carries on after (`ignore_error`,
//! `error_dump`), and the commands it runs before and after
//! (`exec_prerun`, `exec_postrun`).

#[cfg(target_os = "linux")]
use std::os::unix::io::AsRawFd;
#[cfg(target_os = "linux")]
use std::path::Path;

use crate::common::{run_in, stderr, tempdir};

/// Pages of `path` in the page cache (mincore over a read-only mapping).
// posix_fadvise read-ahead, seen through mincore (Linux).
#[cfg(target_os = "linux")]
fn resident_pages(path: &Path) -> usize {
    let f = std::fs::File::open(path).expect("open");
    let len = f.metadata().expect("stat").len() as usize;
    // SAFETY: a private read-only mapping of an open file, unmapped below;
    // mincore writes one byte per page into `vec`.
    unsafe {
        let base = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let mut vec = vec![0u8; len.div_ceil(page)];
        assert_eq!(libc::mincore(base, len, vec.as_mut_ptr()), 0, "mincore");
        libc::munmap(base, len);
        vec.iter().filter(|b| **b & 1 == 1).count()
    }
}

/// Whether the directory's filesystem keeps everything in memory.
// posix_fadvise read-ahead, seen through mincore (Linux).
#[cfg(target_os = "linux")]
fn memory_backed(dir: &Path) -> bool {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statfs writes the struct.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs fills the struct for a NUL-terminated path.
    unsafe { libc::statfs(c.as_ptr(), &mut st) };
    st.f_type == libc::TMPFS_MAGIC || st.f_type == 0x858458f6
    // ramfs
}

// posix_fadvise read-ahead, seen through mincore (Linux).
#[cfg(target_os = "linux")]
#[test]
fn fadvise_hint_decides_read_ahead() {
    let dir = tempdir();
    if memory_backed(dir.path()) {
        crate::common::missing("the scratch directory is in memory, so nothing is read ahead");
        return;
    }
    let file = dir.path().join("data");
    let fname = format!("--filename={}", file.display());
    let o = run_in(
        dir.path(),
        &[
            "--name=lay",
            &fname,
            "--rw=write",
            "--bs=1m",
            "--size=8m",
            "--end_fsync=1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // One 4 KiB buffered read after the cache is dropped.
    let read_once = |rw: &str, hint: &str| {
        let h = format!("--fadvise_hint={hint}");
        let r = format!("--rw={rw}");
        let o = run_in(
            dir.path(),
            &[
                "--name=r",
                &fname,
                &r,
                "--bs=4k",
                "--number_ios=1",
                "--invalidate=1",
                &h,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        resident_pages(&file)
    };
    let random = read_once("read", "random");
    let sequential = read_once("read", "sequential");
    let none = read_once("read", "0");
    let by_pattern = read_once("randread", "1");
    let seen = format!(
        "random {random}, sequential {sequential}, none {none}, randread with 1 {by_pattern}"
    );
    // Random advice turns read-ahead off: only the page read is cached.
    assert_eq!((random, by_pattern), (1, 1), "{seen}");
    // Sequential advice (and no advice) lets the kernel read ahead.
    assert!(sequential >= 4 && none >= 4, "{seen}");
}

/// `ignore_error` turns the listed errors into counted ones the job
/// carries on after; `error_dump` decides whether each is printed.
// /dev/full makes the errors.
#[cfg(target_os = "linux")]
#[test]
fn ignore_error_counts_and_error_dump_prints() {
    let dir = tempdir();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--name=full",
            "--filename=/dev/full",
            "--rw=write",
            "--size=16k",
        ];
        args.extend_from_slice(extra);
        args.push("--output-format=json");
        let o = run_in(dir.path(), &args);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let dumped = stderr(&o)
            .lines()
            .filter(|l| l.contains("write error on '/dev/full'") && l.ends_with("carrying on)"))
            .count();
        (j["jobs"][0].clone(), dumped)
    };
    let (j, dumped) = run(&["--ignore_error=,ENOSPC"]);
    assert_eq!(j["error"], libc::ENOSPC);
    assert_eq!(j["total_err"], 4);
    assert_eq!(j["first_error"], libc::ENOSPC);
    assert_eq!(j["write"]["total_ios"], 4);
    assert_eq!(dumped, 4);
    let (j, dumped) = run(&["--ignore_error=,EIO:28", "--error_dump=0"]);
    assert_eq!((j["total_err"].as_u64(), dumped), (Some(4), 0));
    // A read list does not cover writes: ENOSPC stops the job at once.
    let (j, dumped) = run(&["--ignore_error=ENOSPC"]);
    assert_eq!((j["write"]["total_ios"].as_u64(), dumped), (Some(1), 0));
    assert_eq!(
        (j["total_err"].as_u64(), j["first_error"].as_i64()),
        (Some(0), Some(0))
    );
    // Nor does continue_on_error, for which ENOSPC is not a non-fatal
    // error: the job counts it (it counts write errors) and stops.
    let (j, _) = run(&["--continue_on_error=write"]);
    assert_eq!(j["write"]["total_ios"], 1);
    assert_eq!(
        (j["total_err"].as_u64(), j["first_error"].as_i64()),
        (Some(1), Some(28))
    );
}

/// On Windows exec_prerun and exec_postrun are cmd.exe command lines,
/// as fio's `system()` runs them there (they were run by `/bin/sh`,
/// which Windows has not): their output is saved beside, a failing
/// prerun fails the job before any I/O.
#[cfg(windows)]
#[test]
fn exec_prerun_and_postrun_are_cmd_command_lines_on_windows() {
    let dir = tempdir();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--name=hook",
            "--ioengine=null",
            "--rw=read",
            "--size=64k",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let o = run(&[
        "--exec_prerun=echo before>>trail& echo to-stderr 1>&2",
        "--exec_postrun=echo after>>trail",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout holds only JSON");
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 16);
    let trail = std::fs::read_to_string(dir.path().join("trail")).unwrap();
    assert_eq!(trail.lines().collect::<Vec<_>>(), ["before", "after"]);
    let saved = std::fs::read_to_string(dir.path().join("hook.prerun.txt")).unwrap();
    assert_eq!(saved.trim_end(), "to-stderr");

    let o = run(&["--exec_prerun=exit 3"]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on failure");
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 0);
    assert!(
        stderr(&o).contains("exec_prerun 'exit 3' failed (exit code: 3)"),
        "{}",
        stderr(&o)
    );
}

/// Each clone runs exec_prerun before its I/O and exec_postrun after it,
/// their output saved beside; a failing prerun fails the job before any
/// I/O, a failing postrun only warns.
// sh command lines and a symbolic link.
#[cfg(unix)]
#[test]
fn exec_prerun_and_postrun_run_around_each_clone() {
    let dir = tempdir();
    let base = [
        "--name=hook",
        "--ioengine=null",
        "--rw=read",
        "--size=64k",
        "--output-format=json",
    ];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let o = run(&[
        "--numjobs=2",
        "--exec_prerun=echo before >> trail; echo to-stderr >&2",
        "--exec_postrun=echo after >> trail",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout holds only JSON");
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 16);
    let trail = std::fs::read_to_string(dir.path().join("trail")).unwrap();
    let mut lines: Vec<&str> = trail.lines().collect();
    assert_eq!(lines.len(), 4, "{trail}");
    assert_eq!(
        &lines[..2],
        ["before", "before"],
        "both clones start after their prerun"
    );
    lines.sort();
    assert_eq!(lines, ["after", "after", "before", "before"]);
    let saved = std::fs::read_to_string(dir.path().join("hook.prerun.txt")).unwrap();
    assert_eq!(saved, "to-stderr\n");

    let o = run(&["--exec_prerun=exit 3"]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on failure");
    assert_eq!(j["jobs"][0]["error"], libc::ECANCELED);
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 0);
    assert!(
        stderr(&o).contains("exec_prerun 'exit 3' failed (exit status: 3)"),
        "{}",
        stderr(&o)
    );

    let o = run(&["--exec_postrun=exit 4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: job 'hook': exec_postrun 'exit 4' failed"),
        "{}",
        stderr(&o)
    );

    // The output file is never written through a link put in its place.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::remove_file(dir.path().join("hook.prerun.txt")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("hook.prerun.txt")).unwrap();
    let o = run(&["--exec_prerun=echo overwritten"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot create hook.prerun.txt for exec_prerun"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// Jobs sharing a flow_id issue I/O in proportion to their `flow`
/// weights, as fio's do; a job that is done stops holding the others back.
#[test]
fn flow_weights_set_the_ratio_of_ios() {
    let dir = tempdir();
    // `free` is alone in its group, so nothing holds it back but its rate.
    let job = "[global]\nioengine=null\nbs=8k\nsize=64m\ntime_based\nruntime=1\nflow_sleep=100\n\
               [a]\nrw=write\nflow=3\n[b]\nrw=randread\nflow=1\n[c]\nrw=read\nflow=2\n\
               [free]\nrw=read\nflow_id=7\nflow=5\nrate_iops=2000\n";
    std::fs::write(dir.path().join("flow.fio"), job).unwrap();
    let ratios = |j: &serde_json::Value| -> Vec<f64> {
        let ios: Vec<f64> = j["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                x["read"]["total_ios"].as_f64().unwrap() + x["write"]["total_ios"].as_f64().unwrap()
            })
            .collect();
        assert!(ios.iter().all(|n| *n > 1000.0), "{ios:?}");
        assert!((ios[3] - 2000.0).abs() < 100.0, "{ios:?}");
        vec![ios[0] / ios[1], ios[2] / ios[1]]
    };
    let ours = ratios(&crate::common::run_json(dir.path(), &["flow.fio"]));
    assert!(
        (ours[0] - 3.0).abs() < 0.15 && (ours[1] - 2.0).abs() < 0.1,
        "{ours:?}"
    );
    if crate::common::fio_for_comparison() {
        // What fio 3.33 does with the same file, for the log: on a quiet
        // machine its ratios are the same, but with two CPU hogs beside CI
        // its flow control gave [0.30, 0.20], so fio's figures are shown,
        // not asserted (iomark's above hold under that load).
        let theirs = ratios(&crate::common::fio_json(dir.path(), &["flow.fio"]));
        eprintln!("flow ratios: iomark {ours:?}, fio {theirs:?} (want [3, 2])");
    }
    // A short job in the group ends; the long one then runs alone.
    let job = "[global]\nioengine=null\nbs=4k\nflow=1\n[short]\nrw=write\nsize=1m\n[long]\nrw=read\nsize=8m\n";
    std::fs::write(dir.path().join("done.fio"), job).unwrap();
    let j = crate::common::run_json(dir.path(), &["done.fio"]);
    assert_eq!(j["jobs"][0]["write"]["total_ios"], 256);
    assert_eq!(j["jobs"][1]["read"]["total_ios"], 2048);
}

/// numa_cpu_nodes and numa_mem_policy apply to the job's thread, which a
/// prerun command (a child of that thread) inherits and can show.
// NUMA and CPU placement read from /proc.
#[cfg(target_os = "linux")]
#[test]
fn numa_placement_applies_to_the_job_thread() {
    let dir = tempdir();
    let show = "--exec_prerun=grep Cpus_allowed_list /proc/self/status; grep -m1 heap /proc/self/numa_maps";
    let placed = |extra: &[&str]| {
        let mut args = vec!["--name=n", "--ioengine=null", "--size=64k", show];
        args.extend_from_slice(extra);
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(dir.path().join("n.prerun.txt")).unwrap()
    };
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    if node0.is_empty() || !Path::new("/proc/self/numa_maps").exists() {
        crate::common::missing("no NUMA information in sysfs/procfs");
        return;
    }
    let out = placed(&[
        "--cpus_allowed=0",
        "--numa_cpu_nodes=0",
        "--numa_mem_policy=interleave:0",
    ]);
    assert!(
        out.contains(&format!("Cpus_allowed_list:\t{node0}\n")),
        "{out}"
    );
    assert!(out.contains(" interleave:0 heap"), "{out}");
    let out = placed(&["--numa_mem_policy=bind:all"]);
    assert!(out.contains(" bind:"), "{out}");
    // Nodes the machine lacks are refused before the run starts.
    let o = run_in(
        dir.path(),
        &[
            "--name=n",
            "--ioengine=null",
            "--size=64k",
            "--numa_cpu_nodes=4095",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("NUMA node 4095 does not exist"),
        "{}",
        stderr(&o)
    );
}

/// Every buffer memory type runs a direct-I/O job that checks what it
/// wrote; `mem=mmap:FILE` maps that file; `lockmem` pins memory while
/// the job runs; huge pages without a reserve fail with a clear error.
// io_uring fixed buffers, shared and huge-page memory.
#[cfg(target_os = "linux")]
#[test]
fn buffer_memory_types_and_lockmem() {
    let dir = tempdir();
    let data = format!("--filename={}", dir.path().join("data").display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--name=m",
            data.as_str(),
            "--ioengine=io_uring",
            "--fixedbufs=1",
            "--direct=1",
            "--iodepth=4",
            "--rw=randwrite",
            "--bs=16k",
            "--size=1m",
            "--verify=crc32c",
        ];
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    for mem in [
        "--mem=malloc",
        "--iomem=shm",
        "--mem=mmap",
        "--mem=mmapshared",
    ] {
        let o = run(&[mem]);
        assert!(o.status.success(), "{mem}: {}", stderr(&o));
    }
    // mem=mmap:FILE maps the file privately, as fio does: the pages are
    // the job's own copies, which io_uring registers; the file the job
    // created is there while it runs and goes when it ends, as in fio.
    let buffers = dir.path().join("buffers");
    let map = format!("--mem=mmap:{}", buffers.display());
    let seen = format!("--exec_postrun=stat -c %s {}", buffers.display());
    let o = run(&[map.as_str(), seen.as_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let size = std::fs::read_to_string(dir.path().join("m.postrun.txt")).unwrap();
    assert!(
        size.trim().parse::<u64>().unwrap() >= 4 * 16384,
        "the mapped file while the job ran: {size}"
    );
    assert!(!buffers.exists(), "the job's buffer file was left behind");
    // io_uring cannot register a shared mapping of a file as fixed buffers.
    let shared = format!("--mem=mmapshared:{}", buffers.display());
    let o = run(&[shared.as_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a shared mapping of a file"),
        "{}",
        stderr(&o)
    );
    let o = run(&[shared.as_str(), "--fixedbufs=0"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = run(&[
        "--lockmem=8m",
        "--exec_postrun=grep VmLck /proc/$PPID/status",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let vmlck = std::fs::read_to_string(dir.path().join("m.postrun.txt")).unwrap();
    let kib: u64 = vmlck
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(kib >= 8192, "lockmem=8m, but {vmlck}");

    let free_huge = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    let o = run(&["--mem=mmaphuge"]);
    if free_huge == 0 {
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("mem=mmaphuge: cannot map"),
            "{}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("nr_hugepages"), "{}", stderr(&o));
    }
    let o = run_in(
        dir.path(),
        &[
            "--name=m",
            "--ioengine=null",
            "--size=1m",
            "--mem=cudamalloc",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("option 'mem'"), "{}", stderr(&o));
}

/// A random map too large for memory (64 PiB in 512-byte blocks) fails
/// the job with a clear error, or with softrandommap the job goes on
/// without one, as fio does.
#[test]
fn softrandommap_goes_on_without_the_map() {
    let dir = tempdir();
    let args = |soft: &'static str| {
        vec![
            "--name=big",
            "--ioengine=null",
            "--rw=randread",
            "--bs=512",
            "--size=64p",
            "--number_ios=1000",
            soft,
            "--output-format=json",
        ]
    };
    let o = run_in(dir.path(), &args("--softrandommap=0"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no memory for the random map"),
        "{}",
        stderr(&o)
    );
    let o = run_in(dir.path(), &args("--softrandommap=1"));
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 1000);
    assert!(
        stderr(&o).contains("carrying on without one (softrandommap)"),
        "{}",
        stderr(&o)
    );
}

/// write_hint sets the file's lifetime hint, which the kernel reports
/// back with F_GET_RW_HINT.
// Linux's write-life hints (F_GET_RW_HINT).
#[cfg(target_os = "linux")]
#[test]
fn write_hint_is_set_on_the_file() {
    let dir = tempdir();
    let path = dir.path().join("hinted");
    let fname = format!("--filename={}", path.display());
    for (hint, value) in [("short", 2u64), ("extreme", 5)] {
        let h = format!("--write_hint={hint}");
        let o = run_in(
            dir.path(),
            &["--name=w", &fname, "--rw=write", "--size=64k", &h],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let f = std::fs::File::open(&path).unwrap();
        let mut got: u64 = 0;
        const F_GET_RW_HINT: libc::c_int = 1035;
        // SAFETY: the kernel writes a u64 through the pointer.
        let r = unsafe { libc::fcntl(f.as_raw_fd(), F_GET_RW_HINT, &mut got as *mut u64) };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        assert_eq!(got, value, "write_hint={hint}");
    }
}

/// opendir adds every regular file below a directory (recursively) to the
/// job's targets, after any filename; the I/O equals fio's.
#[test]
fn opendir_uses_every_file_below_the_directory() {
    let dir = tempdir();
    let root = dir.path().join("tree");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for (name, kib) in [("a", 64usize), ("sub/b", 128), ("sub/c", 64)] {
        std::fs::write(root.join(name), vec![0x33u8; kib << 10]).unwrap();
    }
    let od = format!("--opendir={}", root.display());
    let also_a = format!("--filename={}", crate::common::opt_path(root.join("a")));
    let reads = |j: &serde_json::Value| -> Vec<(u64, u64)> {
        j["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["read"]["io_bytes"].as_u64().unwrap(),
                    x["read"]["total_ios"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // (extra options, (bytes, I/Os) read by each clone)
    type Case<'a> = (&'a [&'a str], Vec<(u64, u64)>);
    let cases: [Case; 4] = [
        (&[], vec![(256 << 10, 64)]),
        (&["--size=96k"], vec![(96 << 10, 24)]),
        (&[also_a.as_str()], vec![(320 << 10, 80)]),
        (&["--numjobs=2"], vec![(256 << 10, 64); 2]),
    ];
    for (extra, want) in cases {
        let mut args = vec!["--name=o", od.as_str(), "--rw=read", "--bs=4k"];
        args.extend_from_slice(extra);
        assert_eq!(
            reads(&crate::common::run_json(dir.path(), &args)),
            want,
            "{extra:?}"
        );
        if crate::common::fio_for_comparison() {
            assert_eq!(
                reads(&crate::common::fio_json(dir.path(), &args)),
                want,
                "fio {extra:?}"
            );
        }
    }
    let o = run_in(dir.path(), &["--name=o", "--opendir=missing", "--rw=read"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim(),
        "iomark: job 'o': opendir 'missing': no such file"
    );
}

/// ioscheduler switches the target's disk to that scheduler for the run
/// (a prerun command sees it) and back afterwards; a scheduler the disk
/// does not offer is refused before any I/O.
// A loop device's I/O scheduler.
#[cfg(target_os = "linux")]
#[test]
fn ioscheduler_switches_for_the_run_and_restores() {
    let dir = tempdir();
    let Some(dev) = crate::loopdev::LoopDev::new(dir.path(), 8 << 20) else {
        return;
    };
    let name = dev.path.file_name().unwrap().to_string_lossy().into_owned();
    let sched = format!("/sys/block/{name}/queue/scheduler");
    let current = |s: &str| {
        s.split_whitespace()
            .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
            .map(str::to_string)
    };
    let offered = std::fs::read_to_string(&sched).unwrap_or_default();
    let before = current(&offered);
    let Some(other) = offered
        .split_whitespace()
        .find(|w| !w.starts_with('['))
        .map(str::to_string)
    else {
        crate::common::missing(&format!("{name} offers one scheduler only ({offered})"));
        return;
    };
    let fname = format!("--filename={}", dev.path.display());
    let want = format!("--ioscheduler={other}");
    let show = format!("--exec_prerun=cat {sched}");
    let o = run_in(
        dir.path(),
        &["--name=s", &fname, "--rw=read", "--size=1m", &want, &show],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let during = std::fs::read_to_string(dir.path().join("s.prerun.txt")).unwrap();
    assert_eq!(
        current(&during).as_deref(),
        Some(other.as_str()),
        "{during}"
    );
    let after = std::fs::read_to_string(&sched).unwrap();
    assert_eq!(current(&after), before, "restored: {after}");
    let o = run_in(
        dir.path(),
        &[
            "--name=s",
            &fname,
            "--rw=read",
            "--size=1m",
            "--ioscheduler=nosuch",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("ioscheduler 'nosuch' is not available for {name}")),
        "{}",
        stderr(&o)
    );
}

/// `--max-jobs=N` runs every clone, at most N at a time (fio's meaning:
/// an upper bound, not a refusal). Each clone's bandwidth log, stamped
/// with Unix time, gives the span it ran; without the flag all four
/// overlap, with `--max-jobs=2` no instant sees more than two.
#[test]
fn max_jobs_runs_every_clone_at_most_n_at_once() {
    let most_at_once = |extra: &[&str]| -> (usize, serde_json::Value) {
        let dir = tempdir();
        let mut args = vec![
            "--name=z",
            "--numjobs=4",
            "--ioengine=null",
            "--rw=read",
            "--size=1m",
            "--time_based",
            "--runtime=300ms",
            "--write_bw_log=z",
            "--log_avg_msec=50",
            "--log_unix_epoch=1",
            "--eta=never",
            "--output-format=json",
        ];
        args.extend(extra);
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let spans: Vec<(u64, u64)> = (1..=4)
            .map(|n| {
                let text =
                    std::fs::read_to_string(dir.path().join(format!("z_bw.{n}.log"))).unwrap();
                let t: Vec<u64> = text
                    .lines()
                    .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
                    .collect();
                assert!(!t.is_empty(), "clone {n} logged nothing");
                (t[0], *t.last().unwrap())
            })
            .collect();
        let most = spans
            .iter()
            .map(|(start, _)| {
                spans
                    .iter()
                    .filter(|(a, b)| a <= start && start <= b)
                    .count()
            })
            .max()
            .unwrap();
        (most, json)
    };
    let (all, _) = most_at_once(&[]);
    assert_eq!(all, 4);
    let (limited, json) = most_at_once(&["--max-jobs=2"]);
    assert_eq!(limited, 2);
    let jobs = json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    for j in jobs {
        assert!(j["read"]["io_bytes"].as_u64().unwrap() > 0, "{j}");
        assert_eq!(j["error"], 0, "{j}");
    }
}
