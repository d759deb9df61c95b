//! Every engine runs the same small job matrix (read/write × sequential/
//! random × iodepth 1 and 16 for async engines, direct I/O where the
//! target allows it) on a regular file and on a loop device, and does
//! exactly size/bs I/Os. Engine options work, io_uring's absence is a
//! clear error, and where fio is installed the I/O counts match fio's.

use std::path::Path;

use serde_json::Value;

use crate::common::*;
#[cfg(target_os = "linux")]
use crate::loopdev::LoopDev;
use crate::require_fio;

const SIZE: u64 = 1 << 20;
const BS: u64 = 4096;
const RWS: [&str; 4] = ["read", "write", "randread", "randwrite"];

fn dir_of(rw: &str) -> &'static str {
    if rw.contains("read") {
        "read"
    } else if rw.contains("trim") {
        "trim"
    } else {
        "write"
    }
}

/// Asserts the job did `ios` I/Os of `bytes` in `dir` and none elsewhere.
fn assert_counts(j: &Value, dir: &str, ios: u64, bytes: u64, what: &str) {
    let job = &j["jobs"][0];
    assert_eq!(job["error"], 0, "{what}: error in {job}");
    for d in ["read", "write", "trim"] {
        let (want_ios, want_bytes) = if d == dir { (ios, bytes) } else { (0, 0) };
        assert_eq!(job[d]["total_ios"], want_ios, "{what}: {d} total_ios");
        assert_eq!(job[d]["io_bytes"], want_bytes, "{what}: {d} io_bytes");
    }
}

#[cfg(target_os = "linux")]
use crate::common::io_uring_available;

struct Matrix<'a> {
    engine: &'a str,
    depths: &'a [u32],
    direct: bool,
    rws: &'a [&'a str],
    extra: &'a [&'a str],
}

impl Matrix<'_> {
    fn run_on(&self, dir: &Path, target: &str, block: bool) {
        for rw in self.rws {
            for depth in self.depths {
                let args = [
                    "--name=matrix".to_string(),
                    format!("--ioengine={}", self.engine),
                    format!("--rw={rw}"),
                    format!("--bs={BS}"),
                    format!("--size={SIZE}"),
                    format!("--iodepth={depth}"),
                    format!("--direct={}", u8::from(self.direct)),
                    format!("--filename={target}"),
                ];
                let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
                args.extend_from_slice(self.extra);
                if block {
                    // The device is this test's own scratch image.
                    args.push("--allow_destroy_data=1");
                }
                let j = run_json(dir, &args);
                let what = format!("{} {rw} iodepth={depth} on {target}", self.engine);
                assert_counts(&j, dir_of(rw), SIZE / BS, SIZE, &what);
            }
        }
    }

    /// Runs on a regular file and, where loop devices can be made (on
    /// Linux), on one.
    fn run(&self, on_block: bool) {
        let dir = tempdir();
        self.run_on(dir.path(), "data.bin", false);
        #[cfg(target_os = "linux")]
        if on_block {
            if let Some(dev) = LoopDev::new(dir.path(), 4 * SIZE) {
                self.run_on(dir.path(), dev.as_str(), true);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = on_block;
    }
}

const SYNC_DEPTH: &[u32] = &[1];
const ASYNC_DEPTHS: &[u32] = &[1, 16];

fn sync_matrix(engine: &str) {
    Matrix {
        engine,
        depths: SYNC_DEPTH,
        direct: true,
        rws: &RWS,
        extra: &[],
    }
    .run(true);
}

#[test]
fn matrix_sync() {
    sync_matrix("sync");
}

#[test]
fn matrix_psync() {
    sync_matrix("psync");
}

// A Unix engine.
#[cfg(unix)]
#[test]
fn matrix_vsync() {
    sync_matrix("vsync");
}

// A Unix engine.
#[cfg(unix)]
#[test]
fn matrix_pvsync() {
    sync_matrix("pvsync");
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn matrix_pvsync2() {
    sync_matrix("pvsync2");
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn matrix_libaio() {
    Matrix {
        engine: "libaio",
        depths: ASYNC_DEPTHS,
        direct: true,
        rws: &RWS,
        extra: &[],
    }
    .run(true);
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn matrix_io_uring() {
    if !io_uring_available() {
        return;
    }
    Matrix {
        engine: "io_uring",
        depths: ASYNC_DEPTHS,
        direct: true,
        rws: &RWS,
        extra: &[],
    }
    .run(true);
}

// A Unix engine.
#[cfg(unix)]
#[test]
fn matrix_posixaio() {
    Matrix {
        engine: "posixaio",
        depths: ASYNC_DEPTHS,
        direct: true,
        rws: &RWS,
        extra: &[],
    }
    .run(true);
}

#[test]
fn matrix_mmap() {
    // Direct I/O means nothing to a memory mapping.
    Matrix {
        engine: "mmap",
        depths: SYNC_DEPTH,
        direct: false,
        rws: &RWS,
        extra: &[],
    }
    .run(true);
}

#[test]
fn mmap_files_laid_out_again_each_loop_are_full_size() {
    // unlink_each_loop lays the files out again before each loop; mmap
    // cannot extend a file, so with create_on_open it must still get a
    // full-size file (a file created empty when opened made the mapped
    // writes die of SIGBUS).
    let dir = tempdir();
    let j = run_json(
        dir.path(),
        &[
            "--name=m",
            "--ioengine=mmap",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--loops=2",
            "--unlink_each_loop=1",
            "--create_on_open=1",
            "--filename=f",
        ],
    );
    assert_counts(&j, "write", 32, 128 << 10, "mmap, 2 loops");
}

/// Each job on a file of its own (a directory of its own): under Wine,
/// which keeps no alternate data streams, a file an earlier run made is
/// not known as iomark's (see .ci/portable).
#[cfg(windows)]
#[test]
fn matrix_windowsaio() {
    for rw in RWS {
        for depth in ASYNC_DEPTHS {
            Matrix {
                engine: "windowsaio",
                depths: &[*depth],
                direct: true,
                rws: &[rw],
                extra: &[],
            }
            .run(false);
        }
    }
}

/// Windows' form of `syncs_wait_for_queued_writes`: a flush waits for
/// the overlapped writes in flight.
#[cfg(windows)]
#[test]
fn windowsaio_syncs_wait_for_queued_writes() {
    let dir = tempdir();
    let j = run_json(
        dir.path(),
        &[
            "--name=s",
            "--ioengine=windowsaio",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--iodepth=16",
            "--fsync=4",
            "--filename=data.bin",
        ],
    );
    assert_counts(&j, "write", 256, SIZE, "windowsaio");
    // One flush per 4 writes (fio leaves out the one after the last).
    let syncs = j["jobs"][0]["sync"]["total_ios"].as_u64().unwrap();
    assert!((63..=64).contains(&syncs), "windowsaio: {syncs} syncs");
}

#[test]
fn matrix_null() {
    Matrix {
        engine: "null",
        depths: ASYNC_DEPTHS,
        direct: false,
        rws: &RWS,
        extra: &[],
    }
    .run(false);
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn matrix_falloc_on_files() {
    // Block devices only support punching holes, so regular files only.
    Matrix {
        engine: "falloc",
        depths: SYNC_DEPTH,
        direct: true,
        rws: &RWS,
        extra: &[],
    }
    .run(false);
}

#[test]
fn matrix_ftruncate_writes_on_files() {
    Matrix {
        engine: "ftruncate",
        depths: SYNC_DEPTH,
        direct: false,
        rws: &["write", "randwrite"],
        extra: &[],
    }
    .run(false);
    // Sequential writes leave the file at the last block's offset.
    let dir = tempdir();
    run_json(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=ftruncate",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--filename=f",
        ],
    );
    let len = std::fs::metadata(dir.path().join("f")).unwrap().len();
    assert_eq!(len, 60 << 10);
}

#[test]
fn ftruncate_refuses_reads_before_starting() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=t",
            "--ioengine=ftruncate",
            "--rw=read",
            "--size=64k",
            "--filename=f",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("ftruncate") && err.contains("rw=read"),
        "{err}"
    );
    assert!(!dir.path().join("f").exists(), "nothing is laid out");
}

// /dev/null with Linux's engines.
#[cfg(target_os = "linux")]
#[test]
fn character_devices_take_writes() {
    let dir = tempdir();
    for engine in ["psync", "libaio", "posixaio"] {
        let j = run_json(
            dir.path(),
            &[
                "--name=null-dev",
                &format!("--ioengine={engine}"),
                "--rw=write",
                "--bs=4k",
                "--size=1m",
                "--iodepth=4",
                "--filename=/dev/null",
            ],
        );
        assert_counts(&j, "write", 256, SIZE, engine);
    }
}

/// Runs one job with each engine option in turn and checks its counts.
// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
fn options_work(engine: &str, direct: bool, option_sets: &[&[&str]]) {
    let dir = tempdir();
    for opts in option_sets {
        let mut args = vec![
            "--name=opt".to_string(),
            format!("--ioengine={engine}"),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--size=1m".into(),
            "--iodepth=8".into(),
            format!("--direct={}", u8::from(direct)),
            "--filename=data.bin".into(),
        ];
        args.extend(opts.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let j = run_json(dir.path(), &args);
        assert_counts(&j, "read", 256, SIZE, &format!("{engine} {opts:?}"));
    }
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn io_uring_options_work() {
    if !io_uring_available() {
        return;
    }
    options_work(
        "io_uring",
        true,
        &[
            &["--fixedbufs"],
            &["--registerfiles"],
            &["--sqthread_poll", "--sqthread_poll_cpu=0"],
            &["--nonvectored=0"],
            &["--nonvectored=1", "--force_async=2"],
            &["--fixedbufs", "--registerfiles", "--sqthread_poll"],
            &["--iodepth_batch_submit=4", "--iodepth_batch_complete_min=2"],
        ],
    );
    options_work("io_uring", false, &[&["--uncached=1"]]);
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn libaio_options_work() {
    options_work(
        "libaio",
        true,
        &[
            &[
                "--userspace_reap",
                "--iodepth_batch_complete_min=0",
                "--iodepth_batch_complete_max=8",
            ],
            &["--iodepth_batch_submit=4", "--iodepth_batch_complete_min=2"],
            &["--nowait=1"],
        ],
    );
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn pvsync2_and_mmap_options_work() {
    options_work(
        "pvsync2",
        true,
        &[&["--hipri"], &["--hipri", "--hipri_percentage=50"]],
    );
    // RWF_NOWAIT reads succeed when the data is cached: the first job
    // reads the file into the cache, the second must not have to wait.
    options_work(
        "pvsync2",
        false,
        &[
            &["--uncached=1"],
            &["--invalidate=0"],
            &["--nowait=1", "--invalidate=0"],
        ],
    );
    options_work("mmap", false, &[&["--thp=0"]]);
}

#[test]
fn engine_options_belong_to_their_engines() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &["--name=t", "--ioengine=psync", "--fixedbufs", "--size=4k"],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("fixedbufs") && err.contains("io_uring"),
        "{err}"
    );
    let o = run_in(dir.path(), &["--enghelp=io_uring"]);
    let help = stdout(&o);
    for name in [
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "hipri",
        "force_async",
    ] {
        assert!(help.contains(name), "{name} missing from {help}");
    }
    let o = run_in(dir.path(), &["--enghelp=libaio"]);
    assert!(stdout(&o).contains("userspace_reap"));
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn syncs_wait_for_queued_writes() {
    let uring = io_uring_available();
    let dir = tempdir();
    for engine in ["io_uring", "libaio", "posixaio", "mmap"] {
        if engine == "io_uring" && !uring {
            continue;
        }
        let j = run_json(
            dir.path(),
            &[
                "--name=s",
                &format!("--ioengine={engine}"),
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                "--iodepth=16",
                "--fsync=4",
                "--filename=data.bin",
            ],
        );
        assert_counts(&j, "write", 256, SIZE, engine);
        // One fsync per 4 writes (fio leaves out the one after the last).
        let syncs = j["jobs"][0]["sync"]["total_ios"].as_u64().unwrap();
        assert!((63..=64).contains(&syncs), "{engine}: {syncs} syncs");
    }
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn trims_run_on_async_engines() {
    let dir = tempdir();
    for engine in ["libaio", "posixaio"] {
        let j = run_json(
            dir.path(),
            &[
                "--name=t",
                &format!("--ioengine={engine}"),
                "--rw=trim",
                "--bs=64k",
                "--size=1m",
                "--iodepth=4",
                "--filename=data.bin",
            ],
        );
        assert_counts(&j, "trim", 16, SIZE, engine);
    }
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn trims_between_queued_writes_wait_their_turn() {
    // trimwrite alternates a trim and a write of the same block: each trim
    // finds writes in flight, is refused as busy, and is issued again
    // once they completed. No I/O may be lost on the way.
    let uring = io_uring_available();
    let dir = tempdir();
    for engine in ["libaio", "io_uring", "posixaio"] {
        if engine == "io_uring" && !uring {
            continue;
        }
        let j = run_json(
            dir.path(),
            &[
                "--name=tw",
                &format!("--ioengine={engine}"),
                "--rw=trimwrite",
                "--bs=64k",
                "--size=1m",
                "--iodepth=4",
                "--filename=data.bin",
            ],
        );
        let job = &j["jobs"][0];
        assert_eq!(job["error"], 0, "{engine}");
        let (t, w) = (&job["trim"], &job["write"]);
        assert!(t["total_ios"].as_u64().unwrap() > 0, "{engine}");
        assert_eq!(t["total_ios"], w["total_ios"], "{engine}");
        assert_eq!(t["io_bytes"], w["io_bytes"], "{engine}");
        // Trims run synchronously: no submission latency, as in fio.
        assert_eq!(t["slat_ns"]["N"], 0, "{engine}");
        assert_eq!(w["slat_ns"]["N"], w["total_ios"], "{engine}");
    }
}

/// A seccomp filter making io_uring_setup fail with `errno` (EPERM is
/// what Docker's default profile does).
// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[cfg(target_arch = "x86_64")]
fn deny_io_uring(errno: i32) -> std::io::Result<()> {
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    let f = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    let filter = [
        // Load the syscall number.
        f(0x20, 0, 0, 0),
        // Is it io_uring_setup?
        f(0x15, 0, 1, libc::SYS_io_uring_setup as u32),
        f(0x06, 0, 0, SECCOMP_RET_ERRNO | errno as u32),
        f(0x06, 0, 0, SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: installs a seccomp filter in the child before exec.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const libc::sock_fprog) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[cfg(target_arch = "x86_64")]
#[test]
fn io_uring_unavailable_is_one_clear_line() {
    use std::os::unix::process::CommandExt;
    let dir = tempdir();
    // Switched off (seccomp or sysctl: EPERM), absent (ENOSYS): the
    // fallback engines are named; any other errno is named as it is.
    for (errno, words) in [
        (
            libc::EPERM,
            &[
                "not available",
                "EPERM",
                "seccomp",
                "--ioengine=libaio",
                "psync",
            ][..],
        ),
        (
            libc::ENOSYS,
            &["not available", "ENOSYS", "--ioengine=libaio", "psync"][..],
        ),
        (libc::EMFILE, &["io_uring_setup failed with EMFILE"][..]),
    ] {
        let mut cmd = iomark();
        cmd.args([
            "--name=u",
            "--ioengine=io_uring",
            "--rw=write",
            "--size=1m",
            "--filename=never.bin",
        ])
        .current_dir(dir.path());
        // SAFETY: the closure only makes prctl calls between fork and exec.
        unsafe { cmd.pre_exec(move || deny_io_uring(errno)) };
        let o = cmd.output_bounded().expect("run iomark");
        assert_eq!(o.status.code(), Some(1), "errno {errno}");
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("iomark: job 'u': "), "{err}");
        for word in words {
            assert!(err.contains(word), "{word} missing: {err}");
        }
        assert!(stdout(&o).is_empty());
        assert!(
            !dir.path().join("never.bin").exists(),
            "nothing is laid out"
        );
    }
}

/// An iodepth whose ring the kernel refuses (more than 32768 entries) is
/// said as such, with the deepest iodepth that works, before anything is
/// laid out (it used to say io_uring was not available here).
// Linux engines (io_uring, libaio, pvsync2, falloc; trims).
#[cfg(target_os = "linux")]
#[test]
fn io_uring_too_deep_names_the_deepest_iodepth() {
    if !io_uring_available() {
        return;
    }
    let dir = tempdir();
    for depth in ["32769", "65536"] {
        let o = run_in(
            dir.path(),
            &[
                "--name=u",
                "--ioengine=io_uring",
                &format!("--iodepth={depth}"),
                "--rw=write",
                "--size=1m",
                "--filename=never.bin",
            ],
        );
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "iodepth={depth} is too deep for ioengine=io_uring"
            )),
            "{err}"
        );
        assert!(err.contains("use iodepth=32768 or less"), "{err}");
        assert!(!err.contains("not available"), "{err}");
        assert!(
            !dir.path().join("never.bin").exists(),
            "nothing is laid out"
        );
    }
    // The deepest ring works.
    let j = run_json(
        dir.path(),
        &[
            "--name=u",
            "--ioengine=io_uring",
            "--iodepth=32768",
            "--rw=write",
            "--bs=512",
            "--size=64k",
            "--filename=deep.bin",
        ],
    );
    assert_counts(&j, "write", 128, 64 << 10, "iodepth=32768");
}

#[test]
fn file_operation_engines_count_blocks_and_time_each_file() {
    let dir = tempdir();
    let d = opt_path(dir.path());
    for engine in ["filecreate", "filestat", "filedelete"] {
        let sub = dir.path().join(engine);
        std::fs::create_dir(&sub).unwrap();
        let j = run_json(
            dir.path(),
            &[
                "--name=fo",
                &format!("--ioengine={engine}"),
                "--filesize=16k",
                "--bs=4k",
                "--nrfiles=10",
                &format!("--directory={d}/{engine}"),
            ],
        );
        assert_counts(&j, "read", 40, 160 << 10, engine);
        assert_eq!(
            j["jobs"][0]["read"]["clat_ns"]["N"], 10,
            "{engine}: one sample per file"
        );
        let left = std::fs::read_dir(&sub).unwrap().count();
        let sizes: Vec<u64> = std::fs::read_dir(&sub)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect();
        match engine {
            "filecreate" => assert!(left == 10 && sizes.iter().all(|s| *s == 0), "{sizes:?}"),
            "filestat" => assert!(left == 10 && sizes.iter().all(|s| *s == 16 << 10)),
            _ => assert_eq!(left, 0, "filedelete removes the files"),
        }
    }
}

/// Runs the same job under fio and iomark (in separate directories) and
/// compares what each did, per direction; returns both documents.
fn same_counts_as_fio(args: &[&str]) -> (Value, Value) {
    same_counts_as_fio_syncs(args, true)
}

fn same_counts_as_fio_syncs(args: &[&str], compare_syncs: bool) -> (Value, Value) {
    let fdir = tempdir();
    let idir = tempdir();
    let f = fio_json(fdir.path(), args);
    let i = run_json(idir.path(), args);
    for d in ["read", "write", "trim"] {
        for k in ["total_ios", "io_bytes"] {
            assert_eq!(
                i["jobs"][0][d][k], f["jobs"][0][d][k],
                "{d} {k} differs from fio for {args:?}"
            );
        }
    }
    // fio skips the sync due after the very last write; the workload
    // currently issues it (a known difference outside the engines).
    let syncs = |j: &Value| j["jobs"][0]["sync"]["total_ios"].as_u64().unwrap_or(0);
    assert!(
        !compare_syncs || syncs(&i).abs_diff(syncs(&f)) <= 1,
        "sync count {} differs from fio's {} for {args:?}",
        syncs(&i),
        syncs(&f)
    );
    (f, i)
}

// Linux engines, against fio 3.33.
#[cfg(target_os = "linux")]
#[test]
fn async_and_mmap_engines_match_fio_counts() {
    require_fio!();
    let uring = io_uring_available();
    for engine in ["libaio", "io_uring", "posixaio", "mmap"] {
        if engine == "io_uring" && !uring {
            continue;
        }
        for (rw, extra) in [
            ("read", "--iodepth=16"),
            ("randwrite", "--fsync=8"),
            ("write", "--iodepth=4"),
        ] {
            // fio queues io_uring and posixaio syncs without waiting for
            // them, and issues extra syncs meanwhile (its count varies from
            // run to run); iomark issues exactly one per `fsync` writes.
            let queued_syncs = matches!(engine, "io_uring" | "posixaio");
            same_counts_as_fio_syncs(
                &[
                    "--name=cmp",
                    &format!("--ioengine={engine}"),
                    &format!("--rw={rw}"),
                    "--bs=8k",
                    "--size=2m",
                    "--iodepth=8",
                    extra,
                    "--filename=cmp.bin",
                ],
                !queued_syncs,
            );
        }
    }
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn file_operation_engines_match_fio_counts() {
    require_fio!();
    for engine in ["filecreate", "filestat", "filedelete"] {
        let (f, i) = same_counts_as_fio(&[
            "--name=fo",
            &format!("--ioengine={engine}"),
            "--filesize=16k",
            "--bs=4k",
            "--nrfiles=6",
        ]);
        assert_eq!(
            i["jobs"][0]["read"]["clat_ns"]["N"], f["jobs"][0]["read"]["clat_ns"]["N"],
            "{engine}: timed operations"
        );
    }
    for (engine, rw) in [
        ("ftruncate", "write"),
        ("falloc", "write"),
        ("falloc", "read"),
        ("falloc", "trim"),
    ] {
        same_counts_as_fio(&[
            "--name=fo",
            &format!("--ioengine={engine}"),
            &format!("--rw={rw}"),
            "--size=256k",
            "--bs=4k",
            "--filename=fo.bin",
        ]);
    }
}

/// direct=1 with a block size the target cannot take fails before any I/O
/// with a line naming the value and the alignment.
#[test]
fn direct_io_with_unaligned_block_size_is_refused_clearly() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=u",
            "--rw=randwrite",
            "--bs=3000",
            "--direct=1",
            "--size=1m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bs=3000 is not a multiple of"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["jobs"][0]["error"], libc::EINVAL);
    assert_eq!(j["jobs"][0]["write"]["total_ios"], 0);
}
