//! Rank 0's share of merging every rank's results, for 100, 1,000 and
//! 10,000 simulated ranks at 20 ranks per host, and 1,000 and 10,000
//! hosts of one rank each, without MPI: the other ranks'
//! results travel up the tree of hosts as they would (each one encoded
//! as a rank sends it, merged by its parent), then rank 0 is measured
//! receiving its children's messages, decoding and merging them, putting
//! the hosts back together and writing the json+ report.
//!
//! Past 100 hosts (`--mpi-host-detail`'s default) the hosts travel in
//! brief from their leaders up, as the ranks send them. A last row
//! merges 10,000 ranks the way a flat gather would, every rank sending
//! rank 0 its own results, for comparison. Every row checks the merged
//! I/O count and latency histogram against the sum of every rank's.
//!
//! `cargo bench --bench scale_out` prints one table row per size: rank
//! 0's time (merge, and merge plus report; wall and this thread's CPU)
//! and the most heap it held above what it held before the first message
//! arrived (a counting allocator), while merging and with the report. The figures go in docs/scale-out.md; run it on a quiet
//! machine.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use iomark::cluster::{merge, sim};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = NOW.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on unchanged to the system allocator; the
// counters beside it allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grew(new_size - layout.size());
        } else {
            NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller keeps GlobalAlloc's contract, which System's
        // shares.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Rank 0's own session: the plan the hosts are rebuilt with (one job of
/// a clone per rank, as the simulated results are).
fn own_result() -> iomark::run::RunResult {
    let text = "[t]\nioengine=null\nrw=randread\nbs=4k\nsize=1m\n";
    let path = std::path::PathBuf::from("scale.fio");
    let secs = iomark::job::jobfile::parse_jobfile_text(text, &path).expect("parses");
    let src = iomark::job::JobSources {
        files: vec![(path, secs)],
        ..Default::default()
    };
    let list = iomark::workload::checked_jobs(&src).expect("checks");
    let opts = iomark::run::session::SessionOptions {
        run: iomark::run::RunOptions {
            quiet: true,
            ..Default::default()
        },
        ..Default::default()
    };
    iomark::run::session::Session::new(list, opts)
        .prepare()
        .expect("prepares")
        .run()
        .expect("runs")
}

/// This thread's CPU time, s (less disturbed than wall time by other work
/// on the machine); not measured off Unix.
#[cfg(not(unix))]
fn cpu_s() -> f64 {
    f64::NAN
}

/// This thread's CPU time, s (less disturbed than wall time by other work
/// on the machine).
#[cfg(unix)]
fn cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

fn main() {
    let own = own_result();
    let env = iomark::host::Environment::capture(&[]);
    println!(
        "ranks  hosts  kept   messages  received MiB  merge ms (cpu)  merge+report ms (cpu)  peak MiB: merge, +report  report MiB  (others' work s)"
    );
    let detail = iomark::cluster::HOST_DETAIL;
    for (ranks, hosts, flat) in [
        (100u32, 5u32, false),
        (1_000, 50, false),
        (10_000, 500, false),
        (1_000, 1_000, false),
        (10_000, 10_000, false),
        (10_000, 500, true),
    ] {
        let h = sim::hosts(ranks, hosts);
        let brief = hosts > detail;
        let t = Instant::now();
        let (inputs, mine) = if flat {
            // For comparison: every rank sending rank 0 its own results.
            (sim::flat_messages(&h, &env), sim::rank_result(0, &h, &env))
        } else {
            sim::to_rank_0(&h, &env, brief)
        };
        let others = t.elapsed().as_secs_f64();
        let received: usize = inputs.iter().map(Vec::len).sum();
        let base = NOW.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let (t0, c0) = (Instant::now(), cpu_s());
        let g = sim::rank_0_merge(&inputs, mine);
        let m = merge::merged(&own, g, &h, &[], None, detail);
        let merge_ms = t0.elapsed().as_secs_f64() * 1e3;
        let merge_cpu = (cpu_s() - c0) * 1e3;
        let merge_peak = PEAK.load(Ordering::Relaxed) - base;
        let c = iomark::report::cluster::build_with(
            &m.hosts,
            m.rest.as_ref(),
            m.briefs.clone(),
            &m.info,
        );
        let doc = iomark::report::cluster::document(&c, true);
        let text = iomark::report::json::to_string(&doc);
        let total_ms = t0.elapsed().as_secs_f64() * 1e3;
        let total_cpu = (cpu_s() - c0) * 1e3;
        let peak = PEAK.load(Ordering::Relaxed) - base;
        assert_eq!(m.info.reported, ranks);
        assert_eq!(m.briefs.len(), hosts as usize);
        // Exact: the merged I/O count and completion latency histogram are
        // the sum of every rank's.
        let mut want = iomark::stats::histogram::Histogram::new();
        let mut ios = 0;
        for r in 0..ranks {
            let o = sim::outcome(r);
            ios += o.stats.dir[0].ios;
            want.merge(&o.stats.dir[0].clat);
        }
        let all = &c.all_clients.jobs[0].stats.dir[0];
        assert_eq!(all.ios, ios);
        assert_eq!(all.clat.buckets(), want.buckets());
        assert_eq!(all.clat.summary, want.summary);
        println!(
            "{ranks:>5}  {hosts:>5}  {:>5}  {:>8}  {:>12.1}  {merge_ms:>8.0} ({merge_cpu:>3.0})  {total_ms:>15.0} ({total_cpu:>4.0})  {:>12.1} {:>9.1}  {:>10.1}  ({others:.1}){}",
            if brief { "brief" } else { "whole" },
            inputs.len(),
            mib(received),
            mib(merge_peak),
            mib(peak),
            mib(text.len()),
            if flat { "  flat: no tree" } else { "" },
        );
        drop((text, doc, c, m, inputs));
    }
}
