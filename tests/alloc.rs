//! The hot path does not allocate: a counting global allocator runs
//! null-engine jobs in this process and counts the heap allocations made
//! by worker threads during their timed phase (from the start of I/O to
//! the last completion; workers mark it with
//! `iomark::stats::live::set_timed_phase`). Latencies, samples and
//! per-I/O logs are all recorded in that phase.
//!
//! A global allocator affects the whole binary, so this is its own test
//! binary without the standard harness.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static TIMED_ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on unchanged to the system allocator; the
// counter beside it allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if iomark::stats::live::in_timed_phase() {
            TIMED_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if iomark::stats::live::in_timed_phase() {
            TIMED_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if iomark::stats::live::in_timed_phase() {
            TIMED_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs iomark in this process; returns (exit code, timed allocations,
/// timed phases entered).
fn run(args: &[&str]) -> (i32, u64, u64) {
    let before = TIMED_ALLOCS.load(Ordering::Relaxed);
    let phases = iomark::stats::live::TIMED_PHASES.load(Ordering::Relaxed);
    let argv = args.iter().map(std::ffi::OsString::from).collect();
    let code = match iomark::cli::parse(argv) {
        Ok(cmd) => iomark::cli::commands::execute(cmd),
        Err(e) => panic!("{args:?}: {e}"),
    };
    (
        code,
        TIMED_ALLOCS.load(Ordering::Relaxed) - before,
        iomark::stats::live::TIMED_PHASES.load(Ordering::Relaxed) - phases,
    )
}

#[allow(clippy::too_many_lines)]
fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().unwrap().to_string();
    let out = format!("--output={d}/out.json");
    let lat_log = format!("--write_lat_log={d}/lat");
    let bw_log = format!("--write_bw_log={d}/bw");
    let iops_log = format!("--write_iops_log={d}/iops");
    let hist_log = format!("--write_hist_log={d}/hist");
    let vfile = format!("--filename={d}/verify");
    let pfile = format!("--filename={d}/prio");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "random mix with fsync, two clones",
            vec![
                "--name=mix",
                "--rw=randrw",
                "--fsync=8",
                "--numjobs=2",
                "--lat_percentiles=1",
            ],
        ),
        (
            "queue depth 16 with samples",
            vec![
                "--name=qd",
                "--rw=randread",
                "--iodepth=16",
                "--iodepth_batch_submit=4",
            ],
        ),
        (
            "per-I/O logs",
            vec!["--name=logs", "--rw=randrw", &lat_log, &bw_log, &iops_log],
        ),
        (
            "averaged and histogram logs",
            vec![
                "--name=avg",
                "--rw=randwrite",
                &lat_log,
                &bw_log,
                &hist_log,
                "--log_avg_msec=20",
                "--log_hist_msec=20",
            ],
        ),
        (
            "workload: split sizes, zipf, file service, rate, think time",
            vec![
                "--name=wl",
                "--rw=randrw",
                "--bssplit=4k/50:64k/50",
                "--random_distribution=zipf:1.1",
                "--nrfiles=4",
                "--file_service_type=random:2",
                "--rate_iops=200000",
                "--thinktime=10",
                "--thinktime_blocks=1000",
                "--fsync=16",
            ],
        ),
        (
            "workload: lfsr, strided zones, openfiles",
            vec![
                "--name=wl2",
                "--rw=randwrite",
                "--random_generator=lfsr",
                "--zonemode=strided",
                "--zonesize=64k",
                "--zonerange=1m",
                "--nrfiles=3",
                "--openfiles=1",
            ],
        ),
        (
            "verify: stamped writes, backlog read-back (null engine: no checks)",
            vec![
                "--name=vnull",
                "--rw=randwrite",
                "--verify=crc32c",
                "--verify_interval=1k",
                "--verify_backlog=64",
            ],
        ),
        (
            "verify: writes checked on a file (backlog, sorted history, final read-back)",
            vec![
                "--name=vfile",
                "--ioengine=psync",
                &vfile,
                "--size=4m",
                "--time_based=0",
                "--runtime=0",
                "--rw=randwrite",
                "--norandommap",
                "--verify=md5",
                "--verify_backlog=16",
                "--verify_backlog_batch=8",
            ],
        ),
        (
            "per-I/O priorities (libaio): per direction, per-priority latencies, log_prio",
            vec![
                "--name=prio",
                "--ioengine=libaio",
                &pfile,
                "--size=4m",
                "--rw=randrw",
                "--iodepth=8",
                "--cmdprio_percentage=30,60",
                "--cmdprio_class=2,1",
                "--prio=4",
                "--log_prio=1",
                &lat_log,
            ],
        ),
        (
            "per-I/O priorities (io_uring): by block size, total latencies",
            vec![
                "--name=priobs",
                "--ioengine=io_uring",
                &pfile,
                "--size=4m",
                "--rw=randwrite",
                "--iodepth=8",
                "--bssplit=4k/50:16k/50",
                "--cmdprio_bssplit=4k/30/1/0:4k/20:16k/100/3/0",
                "--lat_percentiles=1",
            ],
        ),
        (
            "latency target search",
            vec![
                "--name=lt",
                "--rw=randread",
                "--iodepth=32",
                "--latency_target=10ms",
                "--latency_window=20ms",
                "--latency_percentile=99",
            ],
        ),
    ];
    let mut failed = false;
    for (what, extra) in cases {
        let mut args = vec![
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=300ms",
            "--bwavgtime=50",
            "--iopsavgtime=50",
            "--output-format=json",
            &out,
        ];
        args.extend(extra);
        let (code, allocs, phases) = run(&args);
        let ok = code == 0 && allocs == 0 && phases > 0;
        println!(
            "{}: {what}: exit {code}, {allocs} allocations in {phases} timed phase(s)",
            if ok { "ok" } else { "FAILED" }
        );
        failed |= !ok;
        // The run really did I/O.
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap())
                .unwrap();
        let ios: u64 = ["read", "write"]
            .iter()
            .map(|d| json["jobs"][0][d]["total_ios"].as_u64().unwrap_or(0))
            .sum();
        if ios == 0 {
            println!("FAILED: {what}: no I/O was done");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
