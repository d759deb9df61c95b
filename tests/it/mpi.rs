//! One job across many ranks under MPI (`mpirun -np N iomark …`): what
//! every rank does, what rank 0 reports, and how a refusal, a failing or
//! a silent rank ends the run. The tests build iomark with the `mpi`
//! feature into target/mpi (once) and run it under Open MPI's `mpirun`;
//! two "hosts" are network namespaces with their own host names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, missing, tempdir, Bounded};

/// The MPI build of iomark, built on first use; `None` (and a failure in
/// strict mode) when Open MPI is missing.
pub(crate) fn mpi_iomark() -> Option<PathBuf> {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output_bounded()
            .is_ok_and(|o| o.status.success())
    };
    if !have("mpirun")
        || !Path::new("/usr/include/x86_64-linux-gnu/mpi.h").exists() && !have("mpicc")
    {
        missing("Open MPI (openmpi-bin, libopenmpi-dev) is not installed");
        return None;
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.as_ref() {
        return Some(p.clone());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("mpi");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    if std::env::var_os("IOMARK_TIMED_TEST").is_some() {
        // Set for this process only, to have its per-test times printed
        // (.ci/timed-test): not for a build.
        cmd.env_remove("RUSTC_BOOTSTRAP");
    }
    // What cargo set for this test process, not for a build: ring's
    // build script is rerun when CARGO_MANIFEST_DIR or CARGO_PKG_* differ
    // from the build's (unset under .ci/run), and with it ring, rustls,
    // ureq and iomark are built again (156-334 s in CI). Without them the
    // binary .ci/run built is found fresh in about a second.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if from_cargo_test(&k) {
            cmd.env_remove(&*k);
        }
    }
    // A build from nothing on a busy 2-core machine takes minutes.
    let out = common::output_within(
        cmd.current_dir(root)
            .args(["build", "--release", "--features", "mpi", "--target-dir"])
            .arg(&target),
        std::time::Duration::from_secs(1800),
    )
    .unwrap_or_else(|e| panic!("cargo build --features mpi: {e}"));
    assert!(
        out.status.success(),
        "building iomark with --features mpi failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = target.join("release").join("iomark");
    *built = Some(bin.clone());
    Some(bin)
}

/// Whether `var` is one of those cargo sets for a test binary it runs
/// (its package's manifest and metadata, the binaries it built, its
/// scratch directory), which a build inside the test must not see.
fn from_cargo_test(var: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_EXE_"]
        .iter()
        .any(|p| var.starts_with(p))
        || [
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ]
        .contains(&var)
}

/// `mpirun -np N iomark ARGS` in `dir` (as root: Open MPI must be told),
/// ended after two minutes whatever happens.
pub(crate) fn mpirun(bin: &Path, dir: &Path, np: u32, extra: &[&str], args: &[&str]) -> Output {
    let mut c = Command::new("timeout");
    c.current_dir(dir)
        .env("IOMARK_HISTORY_DB", common::shared_history())
        .args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe"])
        .args(["-np", &np.to_string()])
        .args(extra)
        .arg(bin)
        .args(args);
    c.output_bounded().expect("mpirun runs")
}

pub(crate) fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\nstderr:\n{}",
            common::stdout(o),
            common::stderr(o)
        )
    })
}

/// Every job entry of the report, with the total I/Os of each direction.
fn ios(entries: &Value) -> Vec<u64> {
    entries
        .as_array()
        .expect("an array")
        .iter()
        .map(|j| {
            ["read", "write", "trim"]
                .iter()
                .map(|d| j[d]["total_ios"].as_u64().unwrap_or(0))
                .sum()
        })
        .collect()
}

#[test]
fn every_rank_runs_the_job_on_its_own_file_and_rank_0_reports_all() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(
        &bin,
        d.path(),
        3,
        &[],
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    // One file per rank, named by its global clone number.
    for r in 0..3 {
        let f = d.path().join(format!("w.{r}.0"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(256 << 10),
            "{f:?}"
        );
    }
    assert!(!d.path().join("w.3.0").exists());
    let v = json_of(&o);
    // Every rank's 64 writes are in the one report, exactly once.
    let total: u64 = ios(&v["jobs"]).iter().sum();
    assert_eq!(total, 3 * 64, "{v}");
    // Only rank 0 speaks: the layout notice once, not once per rank.
    let err = common::stderr(&o);
    assert!(err.matches("Laying out IO file").count() <= 1, "{err}");
}

#[test]
fn filename_format_names_the_rank_and_the_host() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "--name=f",
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
            "--filename_format=f.$rank.$hostname.$jobnum",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let host = String::from_utf8(
        Command::new("uname")
            .arg("-n")
            .output_bounded()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let host = host.trim();
    for r in 0..2 {
        let f = d.path().join(format!("f.{r}.{host}.{r}"));
        assert!(
            f.exists(),
            "{f:?} missing; have {:?}",
            std::fs::read_dir(d.path()).unwrap().collect::<Vec<_>>()
        );
    }
}

#[test]
fn one_refusal_stops_every_rank_before_any_writes() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // Rank 1's file exists and is not iomark's: rank 1 must refuse.
    let theirs = vec![7u8; 64 << 10];
    std::fs::write(d.path().join("s.1.0"), &theirs).unwrap();
    let o = mpirun(
        &bin,
        d.path(),
        3,
        &[],
        &[
            "--name=s",
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
        ],
    );
    assert!(!o.status.success());
    let err = common::stderr(&o);
    assert!(err.contains("iomark: rank 1 on "), "{err}");
    assert!(err.contains("refusing to overwrite 's.1.0'"), "{err}");
    assert!(err.contains("no rank started"), "{err}");
    // Said once, by rank 0.
    assert_eq!(err.matches("refusing to overwrite").count(), 1, "{err}");
    // Nobody wrote: not the other ranks' files, not rank 1's.
    assert!(!d.path().join("s.0.0").exists());
    assert!(!d.path().join("s.2.0").exists());
    assert_eq!(std::fs::read(d.path().join("s.1.0")).unwrap(), theirs);
}

#[test]
fn a_silent_rank_is_named_and_every_rank_stops_in_bounded_time() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let t0 = Instant::now();
    let child = Command::new("timeout")
        .current_dir(d.path())
        .args([
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            "2",
        ])
        .arg(&bin)
        .args([
            "--mpi-timeout=2",
            "--name=h",
            "--ioengine=null",
            "--rw=randread",
            "--size=1m",
            "--runtime=3",
            "--time_based",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    // Stop rank 1 (as a hung host would be) once it runs.
    let mut stopped = None;
    while stopped.is_none() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
        stopped = rank_pid(&bin, 1, child.id() as i32);
    }
    let pid = stopped.expect("rank 1 started");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory precondition.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let o = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    // Whatever happened, do not leave a stopped process behind.
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        o.status.code() != Some(124),
        "mpirun had to be killed: {err}"
    );
    assert!(
        err.contains("rank 1 (host ") && err.contains("sent nothing for"),
        "{err}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// The parent of process `pid`.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid ...: comm may hold spaces, so cut after ')'.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The pid of the process of `bin` that is MPI rank `rank`, started
/// below process `ancestor` (other tests run the same binary at once).
pub(crate) fn rank_pid(bin: &Path, rank: u32, ancestor: i32) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let exe = std::fs::read_link(e.path().join("exe")).ok();
        if exe.as_deref() != Some(bin) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if !env.split(|&b| b == 0).any(|v| v == want.as_bytes()) {
            continue;
        }
        let mut p = pid;
        while let Some(pp) = parent(p).filter(|&pp| pp > 1) {
            if pp == ancestor {
                return Some(pid);
            }
            p = pp;
        }
    }
    None
}

#[test]
fn stonewalled_phases_start_together_on_every_rank() {
    let _serial = common::timing_alone();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // Phase 1 lasts 0.3 s on rank 0 and 1.3 s on rank 1; phase 2 lasts
    // 0.6 s everywhere. Started together, phase 2 ends together.
    std::fs::write(
        d.path().join("p.fio"),
        "[global]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\ntime_based\n\
         [p1]\nruntime=${OMPI_COMM_WORLD_RANK}300ms\n\
         [p2]\nstonewall\nruntime=600ms\n",
    )
    .unwrap();
    let o = mpirun(&bin, d.path(), 2, &[], &["p.fio", "--output-format=json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let end = |name: &str| {
        std::fs::metadata(d.path().join(name))
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let gap = |a: &str, b: &str| {
        let (a, b) = (end(a), end(b));
        a.duration_since(b)
            .or_else(|_| b.duration_since(a))
            .unwrap()
    };
    let (g1, g) = (gap("p1.0.0", "p1.1.0"), gap("p2.0.0", "p2.1.0"));
    eprintln!("phase 1 ended {g1:?} apart, phase 2 {g:?}");
    // The phases really differ in length on the two ranks (by 1 s; with
    // two busy loops beside, 20 runs: 744-1056 ms, and twice in another
    // 20 under 700 ms), by more than phase 2's bound...
    assert!(
        g1 > Duration::from_millis(400),
        "phase 1 ended {g1:?} apart"
    );
    // ... and the next phase still ends together on both (0-36 ms apart
    // in those 20 runs).
    assert!(g < Duration::from_millis(350), "phase 2 ended {g:?} apart");
}

#[test]
fn a_failing_rank_is_named_with_its_host_and_the_run_fails() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // Rank 1 reads a file shorter than the job asks: an error there only.
    std::fs::write(d.path().join("e.0.0"), vec![1u8; 64 << 10]).unwrap();
    std::fs::write(d.path().join("e.1.0"), vec![1u8; 64 << 10]).unwrap();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &[],
        &[
            "--name=e",
            "--ioengine=psync",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--filename_format=e.$rank.0",
            "--exec_prerun=test $OMPI_COMM_WORLD_RANK = 0",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(err.contains("iomark: job 'e' on "), "{err}");
    let v = json_of(&o);
    let errors: Vec<i64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["error"].as_i64().unwrap())
        .collect();
    assert!(errors.iter().any(|&e| e != 0), "{v}");
    // The rank that worked still reports its 16 reads.
    assert!(ios(&v["jobs"]).contains(&16), "{v}");
}
