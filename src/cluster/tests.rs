//! The ranks' meetings end to end, with ranks as threads of this process
//! (the in-process transport): real sessions of null jobs, a hung rank,
//! ranks whose job lists differ.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::run::session::testing::list;
use crate::run::RunOptions;

/// Runs `f` on `n` ranks (threads) spread over `hosts` host names, each
/// with its joined `Ranks` and its transport's hang switch.
fn on_ranks<T: Send + 'static>(
    n: u32,
    hosts: u32,
    opts: Options,
    f: impl Fn(Ranks, Arc<std::sync::atomic::AtomicBool>) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let f = Arc::new(f);
    let handles: Vec<_> = Local::ranks(n)
        .into_iter()
        .map(|t| {
            let (f, opts) = (f.clone(), opts.clone());
            std::thread::spawn(move || {
                let hung = t.hung.clone();
                let host = format!("h{}", t.rank() * hosts / n);
                let r = Ranks::join_over(Arc::new(t), &opts, host).expect("joins");
                f(r, hung)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("rank"))
        .collect()
}

fn quiet() -> SessionOptions {
    SessionOptions {
        run: RunOptions {
            quiet: true,
            ..RunOptions::default()
        },
        ..SessionOptions::default()
    }
}

const TWO_PHASES: &str = "[global]\nioengine=null\nbs=4k\nsize=256k\n\
                          [r]\nrw=randread\nnumjobs=2\n[w]\nrw=write\nstonewall\n";

#[test]
fn every_ranks_results_reach_rank_0_merged_per_host_with_their_phases() {
    let out = on_ranks(6, 3, Options::default(), |r, _| {
        assert_eq!(r.hosts.names, ["h0", "h1", "h2"]);
        assert!(r
            .place
            .tag
            .starts_with(&r.hosts.names[r.rank() as usize / 2]));
        assert!(r.place.run_token.is_some());
        let spread = r.prepare(list(TWO_PHASES), quiet()).expect("prepares");
        let (result, merged) = spread.run().expect("runs");
        assert!(!result.failed());
        let code = r.end(0);
        (merged, code)
    });
    for (i, (m, code)) in out.iter().enumerate() {
        assert_eq!(*code, 0);
        assert_eq!(m.is_some(), i == 0);
    }
    let m = out[0].0.as_ref().unwrap();
    assert_eq!(m.hosts.len(), 3);
    for h in &m.hosts {
        // One entry per job, merged over the host's 2 ranks.
        assert_eq!(h.result.jobs.len(), 2);
        assert_eq!(h.result.jobs[0].clones, 4);
        assert_eq!(h.result.jobs[0].outcome.stats.dir[0].ios, 4 * 64);
        assert_eq!(h.result.jobs[1].outcome.stats.dir[1].ios, 2 * 64);
    }
    assert_eq!(m.info.reported, 6);
    assert!(m.info.missing.is_empty());
    assert_eq!(m.info.phases.len(), 2);
    let p = &m.info.phases[0];
    assert_eq!(p.ranks, 6);
    assert_eq!(p.until_last.1[0], 6 * 2 * 64);
    assert!(p.all_running.is_some());
    assert!(p.first_done_ns <= p.last_done_ns);
    assert_eq!(m.clients().len(), 3);
    assert_eq!(m.clients()[1].0.unit, "host");
}

#[test]
fn on_one_host_each_rank_is_kept_apart_and_is_a_client() {
    let out = on_ranks(3, 1, Options::default(), |r, _| {
        let (_, merged) = r
            .prepare(list("[a]\nioengine=null\nsize=64k\nnumjobs=2\n"), quiet())
            .expect("prepares")
            .run()
            .expect("runs");
        r.end(0);
        merged
    });
    let m = out[0].as_ref().unwrap();
    assert_eq!(m.hosts.len(), 1);
    assert_eq!(m.hosts[0].result.jobs.len(), 6, "every clone apart");
    let clients = m.clients();
    let names: Vec<&str> = clients.iter().map(|(c, _)| c.name.as_str()).collect();
    assert_eq!(names, ["rank 0", "rank 1", "rank 2"]);
    for (c, r) in &clients {
        assert_eq!(c.unit, "rank");
        assert_eq!(r.jobs.len(), 2);
        let ios: u64 = r.jobs.iter().map(|j| j.outcome.stats.dir[0].ios).sum();
        assert_eq!(ios, 2 * 16);
    }
}

#[test]
fn ranks_with_different_job_lists_are_refused_and_named() {
    let out = on_ranks(4, 2, Options::default(), |r, _| {
        let text = if r.rank() == 3 {
            "[a]\nioengine=null\nsize=64k\nnumjobs=3\n"
        } else {
            "[a]\nioengine=null\nsize=64k\n"
        };
        let e = r.prepare(list(text), quiet()).err().expect("refused");
        r.end(1);
        e
    });
    let line = out[0].to_string();
    assert!(
        line.contains("rank 3 (host h1) has job 'a': numjobs=3 rw=read")
            && line.contains("ranks 0-2 (hosts h0, h1) have job 'a': numjobs=1 rw=read"),
        "{line}"
    );
    assert!(line.ends_with("no rank started"), "{line}");
    for e in &out[1..] {
        assert!(matches!(e, RunError::RefusedElsewhere), "{e}");
    }
}

#[test]
fn a_refusal_on_one_rank_is_said_once_by_rank_0() {
    let out = on_ranks(3, 3, Options::default(), |r, _| {
        let mine = (r.rank() == 2).then(|| "no such directory".to_string());
        (r.agree("the check", mine), r.agree("the next", None), {
            let s = r.agree_stop((r.rank() == 1).then_some("job 'x': EIO"));
            r.end(0);
            s
        })
    });
    assert_eq!(
        out[0].0,
        Agreement::Refused("rank 2 on h2: no such directory; no rank started".into())
    );
    assert_eq!(out[1].0, Agreement::RefusedElsewhere);
    for (_, next, stop) in &out {
        assert_eq!(*next, Agreement::Go);
        assert_eq!(stop.as_deref(), Some("rank 1 on h1: job 'x': EIO"));
    }
}

#[test]
fn a_rank_that_hangs_mid_phase_is_named_and_the_others_report_in_bounded_time() {
    let opts = Options {
        timeout: Some(Duration::from_secs(1)),
        ..Options::default()
    };
    // A 20 s phase; rank 3 hangs 0.3 s into it.
    let job = "[t]\nioengine=null\nrw=read\nbs=4k\nsize=1m\ntime_based\nruntime=20\n";
    let out = on_ranks(6, 3, opts, move |r, hung| {
        let spread = r.prepare(list(job), quiet()).expect("prepares");
        let t0 = Instant::now();
        if r.rank() == 3 {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                hung.store(true, Ordering::SeqCst);
            });
        }
        let (result, merged) = spread.run().expect("runs");
        let took = t0.elapsed();
        let stopped = r.stopped();
        // Not `end`: with a rank lost it ends every rank at once.
        (r.rank(), took, result.interrupted, merged, stopped)
    });
    for (rank, took, interrupted, _, stopped) in &out {
        if *rank == 3 {
            continue;
        }
        assert!(*interrupted, "rank {rank}");
        // Found silent after 1 s, results within 0.65 s of that.
        assert!(*took < Duration::from_millis(3000), "rank {rank}: {took:?}");
        let (why, lost) = stopped.clone().expect("stopped");
        assert!(lost);
        assert!(
            why.starts_with("rank 3 (host h1) sent nothing for 1 s during phase 1"),
            "{why}"
        );
    }
    let m = out[0].3.as_ref().expect("rank 0 reports");
    assert_eq!(m.info.missing.len(), 1, "{:?}", m.info.missing);
    assert_eq!(m.info.missing[0].ranks, [3]);
    assert!(m.info.missing[0].reason.starts_with("sent nothing for 1 s"));
    assert_eq!(m.info.reported, 5);
    assert_eq!(m.stop_code, Some(1));
    // What the others measured is there: rank 2 (host h1) too.
    let h1 = m.hosts.iter().find(|h| h.hostname == "h1").unwrap();
    assert_eq!(h1.ranks, [2]);
    assert!(h1.result.jobs[0].outcome.stats.dir[0].ios > 0);
    assert!(m.info.phases[0].interrupted);
    assert_eq!(m.info.phases[0].all_running, None);
}

#[test]
fn a_rank_whose_run_ends_early_ends_the_others_instead_of_hanging_them() {
    // The failing hook's output (JOB.prerun.txt) goes to a temporary
    // directory: the job is named by a path there.
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a").display().to_string();
    let out = on_ranks(3, 3, Options::default(), move |r, _| {
        // Rank 1's first job fails before it starts and ends its run
        // (exitall_on_error): it never reaches the second phase.
        let fail = if r.rank() == 1 {
            "exec_prerun=false\n"
        } else {
            ""
        };
        let text = format!(
            "[global]\nioengine=null\nsize=64k\nexitall_on_error\n[{a}]\n{fail}[b]\nstonewall\n"
        );
        let t0 = Instant::now();
        let spread = r.prepare(list(&text), quiet()).expect("prepares");
        let (_, merged) = spread.run().expect("runs");
        let took = t0.elapsed();
        let why = r.stopped();
        let code = r.end(1);
        (took, why, merged, code)
    });
    for (took, why, _, _) in &out {
        assert!(*took < Duration::from_secs(5), "{took:?}");
        let (why, lost) = why.clone().expect("stopped");
        assert!(!lost);
        assert!(why.contains("rank 1 (host h1) ended its run"), "{why}");
    }
    let m = out[0].2.as_ref().unwrap();
    assert_eq!(m.info.reported, 3);
    // The jobs' own error says it failed, as on one host.
    assert_eq!(m.stop_code, None);
    assert!(m.hosts[1].result.failed());
}
