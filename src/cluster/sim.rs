//! The merge of many ranks, simulated in one process without MPI: every
//! simulated rank makes a realistic result (a job's counters, latency
//! histograms of some 150 non-empty buckets, a minute's timeline, its
//! host's environment), and the results go up the tree of hosts
//! (`tree::Tree::by_host`) as the ranks send them: each one encoded as
//! the message a rank sends (`msg::Msg`), decoded and merged by its parent
//! with the function a rank merges with (`Gathered::absorb_new`).
//!
//! The test below checks that 10,000 ranks on 500 hosts merged this way
//! give exactly what one flat merge of every rank gives; `benches/
//! scale_out.rs` measures rank 0's share (its time and peak memory).

use super::merge::{Counters, Gathered, HostPart, JobPart, PhaseSum};
use super::msg::{self, Key, Msg, Up};
use super::tree::{Hosts, RankSet, Tree};
use crate::run::worker::Outcome;
use crate::stats::histogram::Histogram;
use crate::stats::timeline::{Timeline, TimelinePoint};
use crate::stats::JobStats;

/// What a rank does with a result message it receives.
fn absorb(acc: &mut Gathered, covered: &mut RankSet, g: Gathered) -> bool {
    acc.absorb_new(covered, g)
}

/// `n` ranks on `hosts` hosts, `n / hosts` each (the first hosts one more
/// when it does not divide), in rank order as `mpirun` places them.
pub fn hosts(n: u32, hosts: u32) -> Hosts {
    let per = n / hosts;
    let extra = n % hosts;
    let mut start = 0;
    let pairs = (0..hosts)
        .map(|h| {
            let len = per + u32::from(h < extra);
            let set = RankSet::range(start, start + len);
            start += len;
            (format!("node{h:04}"), set)
        })
        .collect();
    Hosts::of(pairs)
}

/// A small deterministic generator (splitmix64).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A latency histogram of about `ios` I/Os around `mode` ns, spread over
/// some 150 buckets with a tail, as a random 4 KiB read's on a fast SSD.
fn histogram(seed: u64, ios: u64, mode: u64) -> Histogram {
    let mut h = Histogram::new();
    let centre = crate::stats::histogram::bucket_of(mode);
    let mut left = ios;
    for k in 0..150usize {
        if left == 0 {
            break;
        }
        // Most I/Os near the mode, fewer and fewer out to the tail.
        let share = (ios / (2 + (k as u64 * k as u64) / 4)).max(1) + mix(seed ^ k as u64) % 7;
        let n = share.min(left);
        let idx = (centre + k)
            .saturating_sub(20)
            .min(crate::stats::histogram::NR - 1);
        h.add_to_bucket(idx, n);
        let v = crate::stats::histogram::bucket_value(idx);
        for _ in 0..n.min(3) {
            h.summary.add(v);
        }
        h.summary.n += n - n.min(3);
        h.summary.sum += (v as u128) * (n - n.min(3)) as u128;
        h.summary.sumsq += (v as u128) * (v as u128) * (n - n.min(3)) as u128;
        left -= n;
    }
    h
}

/// What rank `r` of a 60 s random-read job on `host` might report.
pub fn outcome(r: u32) -> Outcome {
    let seed = mix(r as u64);
    let ios = 200_000 + seed % 50_000;
    let mut s = JobStats::default();
    let d = &mut s.dir[0];
    d.ios = ios;
    d.bytes = ios * 4096;
    d.runtime_ms = 60_000;
    d.clat = histogram(seed, ios, 80_000 + seed % 20_000);
    d.lat = histogram(seed ^ 1, ios, 82_000 + seed % 20_000);
    for k in 0..60u64 {
        d.bw_samples.add(ios * 4096 / 60 + mix(seed ^ k) % 100_000);
        d.iops_samples.add(ios / 60 + mix(seed ^ k) % 100);
    }
    for _ in 0..(ios % 1000) {
        s.lat_dist.add(80_000);
    }
    s.depth[0] = ios;
    s.submit[1] = ios;
    s.complete[1] = ios;
    (s.submit_calls, s.complete_calls, s.depth_total) = (ios, ios, ios);
    (s.usr_us, s.sys_us, s.ctx) = (900_000 + seed % 1000, 4_000_000, ios);
    (s.runtime_ms, s.elapsed_ms, s.latency_depth) = (60_000, 60_010, 1);
    // Ranks at three I/O priorities (prio=1..3 of the best-effort
    // class), so merged hosts keep latencies per priority.
    s.ioprio = 0x4000 | (1 + (r % 3) as u16);
    s.timeline = Timeline {
        interval_ms: 1000,
        points: (0..=60u32)
            .map(|i| TimelinePoint {
                index: i,
                t_ms: i as u64 * 1000 + seed % 7,
                bytes: [ios * 4096 * i as u64 / 60, 0, 0],
                ios: [ios * i as u64 / 60, 0, 0],
            })
            .collect(),
    };
    Outcome {
        stats: s,
        start_unix_ms: 1_700_000_000_000 + seed % 1000,
        ..Outcome::default()
    }
}

/// Rank `r`'s results, as it would send them (one clone of job 0).
pub fn rank_result(r: u32, hosts: &Hosts, environment: &crate::host::Environment) -> Gathered {
    let o = outcome(r);
    let (ios, bytes) = (o.stats.dir[0].ios, o.stats.dir[0].bytes);
    let lag = (mix(r as u64 ^ 7) % 500_000) as i64;
    let done = 60_000_000_000 + mix(r as u64 ^ 9) % 30_000_000;
    let c = |f: u64| Counters {
        bytes: [bytes * f / 100, 0, 0],
        ios: [ios * f / 100, 0, 0],
    };
    Gathered {
        hosts: vec![HostPart {
            host: hosts.host_of(r) as u32,
            ranks: RankSet::one(r),
            pid: 1000 + r,
            interrupted: false,
            start_unix: 1_700_000_000,
            disks: Vec::new(),
            environment: environment.clone(),
            warnings: Vec::new(),
            jobs: vec![JobPart {
                job: 0,
                clone: r,
                clones: 1,
                error_clone: r,
                group: 0,
                phase: 0,
                outcome: o,
            }],
            detail: false,
        }],
        phases: vec![PhaseSum {
            batch: 1,
            ranks: 1,
            first_done_ns: Some(done),
            last_done_ns: Some(done),
            ramp_ms: 0,
            lag_min_ns: Some(lag),
            lag_max_ns: Some(lag),
            all_running: Some(c(99)),
            until_last: c(100),
            interrupted: false,
        }],
        ..Gathered::default()
    }
}

/// The result messages rank 0 receives from its children when every
/// other rank sends as it would (each subtree merged on the way, every
/// hop through the encoding), and rank 0's own results. With `condense`
/// every rank that sends to another host keeps the hosts in brief
/// (`Gathered::condense`), as the ranks do past `--mpi-host-detail` hosts.
pub fn to_rank_0(
    hosts: &Hosts,
    env: &crate::host::Environment,
    condense: bool,
) -> (Vec<Vec<u8>>, Gathered) {
    let tree = Tree::by_host(hosts);
    let key = Key::Results(1);
    let inputs = tree
        .children(0)
        .iter()
        .map(|&c| subtree(&tree, c, hosts, env, (key, condense)))
        .collect();
    (inputs, rank_result(0, hosts, env))
}

/// The message rank `r` sends up: its results and its subtree's.
fn subtree(
    tree: &Tree,
    r: u32,
    hosts: &Hosts,
    env: &crate::host::Environment,
    (key, condense): (Key, bool),
) -> Vec<u8> {
    let mut acc = rank_result(r, hosts, env);
    let mut covered = RankSet::one(r);
    for &c in tree.children(r) {
        let bytes = subtree(tree, c, hosts, env, (key, condense));
        if let Some(g) = receive(&bytes) {
            absorb(&mut acc, &mut covered, g);
        }
    }
    let parent = tree.parent(r).unwrap_or(0);
    if condense && hosts.host_of(parent) != hosts.host_of(r) {
        acc.condense();
    }
    msg::encode(&Msg::Up(key, Up::Results(Box::new(acc))))
}

/// The messages rank 0 would receive if every rank sent its results to
/// it directly (no tree), for comparison.
pub fn flat_messages(hosts: &Hosts, env: &crate::host::Environment) -> Vec<Vec<u8>> {
    (1..hosts.size())
        .map(|r| {
            let g = rank_result(r, hosts, env);
            msg::encode(&Msg::Up(Key::Results(1), Up::Results(Box::new(g))))
        })
        .collect()
}

/// The results in a message, as a rank decodes them.
pub fn receive(bytes: &[u8]) -> Option<Gathered> {
    match msg::decode(bytes) {
        Ok(Msg::Up(_, Up::Results(g))) => Some(*g),
        _ => None,
    }
}

/// Rank 0's merge of `inputs` (as they arrive) into its own results.
pub fn rank_0_merge(inputs: &[Vec<u8>], own: Gathered) -> Gathered {
    let mut covered = own.ranks();
    let mut acc = own;
    for bytes in inputs {
        // Received: a copy of its own, dropped once merged.
        let got = bytes.clone();
        if let Some(g) = receive(&got) {
            absorb(&mut acc, &mut covered, g);
        }
    }
    acc
}

/// Every rank's results merged at once, in rank order.
pub fn flat(hosts: &Hosts, env: &crate::host::Environment) -> Gathered {
    let mut acc = Gathered::default();
    for r in 0..hosts.size() {
        acc.absorb(rank_result(r, hosts, env));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact figures of a merged outcome: counts and histograms.
    fn exact(
        o: &Outcome,
    ) -> (
        u64,
        u64,
        Vec<u64>,
        Vec<u64>,
        Vec<u64>,
        crate::stats::LatDist,
    ) {
        let d = &o.stats.dir[0];
        (
            d.ios,
            d.bytes,
            d.clat.buckets().to_vec(),
            d.lat.buckets().to_vec(),
            d.clat.percentiles(&[1.0, 50.0, 99.0, 99.9, 99.99]),
            o.stats.lat_dist.clone(),
        )
    }

    /// Each priority's latencies (value, buckets), in report order.
    fn prios(s: &JobStats) -> Vec<(u16, Vec<u64>)> {
        s.dir[0]
            .prios
            .iter()
            .map(|p| (p.ioprio, p.lat.buckets().to_vec()))
            .collect()
    }

    #[test]
    fn ten_thousand_ranks_on_500_hosts_merge_up_the_tree_exactly_as_flat() {
        let hosts = hosts(10_000, 500);
        let env = crate::host::Environment::default();
        let (inputs, own) = to_rank_0(&hosts, &env, false);
        // Rank 0 hears from its host's 19 other ranks and 8 host leaders.
        assert_eq!(inputs.len(), 19 + 8);
        let tree = rank_0_merge(&inputs, own);
        let flat = flat(&hosts, &env);
        assert_eq!(tree.hosts.len(), 500);
        assert_eq!(tree.ranks(), RankSet::range(0, 10_000));
        assert_eq!(tree.phases, flat.phases);
        for (t, f) in tree.hosts.iter().zip(&flat.hosts) {
            assert_eq!((t.host, &t.ranks, t.pid), (f.host, &f.ranks, f.pid));
            assert_eq!(t.jobs.len(), 1);
            assert_eq!(t.jobs[0].clones, 20);
            assert_eq!(exact(&t.jobs[0].outcome), exact(&f.jobs[0].outcome));
            let tp = prios(&t.jobs[0].outcome.stats);
            assert_eq!(tp.len(), 3, "host {}: three priorities", t.host);
            assert_eq!(tp, prios(&f.jobs[0].outcome.stats));
            assert_eq!(
                t.jobs[0].outcome.stats.timeline,
                f.jobs[0].outcome.stats.timeline
            );
        }
        // Over every rank: what "All clients" reports.
        let total = |g: &Gathered| {
            let mut s = JobStats::default();
            for h in &g.hosts {
                s.merge(&h.jobs[0].outcome.stats);
            }
            s
        };
        let (t, f) = (total(&tree), total(&flat));
        let ios: u64 = (0..10_000).map(|r| outcome(r).stats.dir[0].ios).sum();
        assert_eq!(t.dir[0].ios, ios);
        assert_eq!(t.dir[0].clat.count(), ios);
        assert_eq!(t.dir[0].clat.buckets(), f.dir[0].clat.buckets());
        let p = [50.0, 99.0, 99.9, 99.99, 99.999];
        assert_eq!(t.dir[0].clat.percentiles(&p), f.dir[0].clat.percentiles(&p));
        assert_eq!(t.dir[0].lat.summary, f.dir[0].lat.summary);
        // Each priority's latencies: the sum of its ranks' exactly.
        assert_eq!(prios(&t), prios(&f));
        for (v, buckets) in prios(&t) {
            let mut want = Histogram::new();
            for r in (0..10_000).filter(|r| 0x4000 | (1 + (r % 3) as u16) == v) {
                want.merge(&outcome(r).stats.dir[0].clat);
            }
            assert_eq!(buckets, want.buckets(), "priority {v:#x}");
        }
        assert_eq!(tree.phases[0].ranks, 10_000);
    }

    /// Past `--mpi-host-detail` hosts: 1,000 hosts of one rank each (and
    /// 60 of 5, so hosts merge at their leader first) travel in brief,
    /// and rank 0 still has every figure exactly: the jobs merged over
    /// every rank as a flat merge gives them, each host's brief as the
    /// host alone gives it.
    #[test]
    fn hosts_in_brief_keep_every_figure_exact() {
        let env = crate::host::Environment::default();
        for (n, h) in [(1_000, 1_000), (300, 60)] {
            let hosts = hosts(n, h);
            let (inputs, own) = to_rank_0(&hosts, &env, true);
            let mut tree = rank_0_merge(&inputs, own);
            tree.condense();
            let flat = flat(&hosts, &env);
            assert!(tree.hosts.is_empty());
            assert_eq!(tree.ranks(), RankSet::range(0, n));
            assert_eq!(tree.briefs.len(), h as usize);
            for (b, f) in tree.briefs.iter().zip(&flat.hosts) {
                assert_eq!(b, &f.brief(), "host {}", f.host);
            }
            let mut all = JobStats::default();
            for f in &flat.hosts {
                all.merge(&f.jobs[0].outcome.stats);
            }
            assert_eq!(tree.total.len(), 1);
            let t = &tree.total[0];
            assert_eq!((t.clone, t.clones), (0, n));
            assert_eq!(
                exact(&t.outcome),
                exact(&Outcome {
                    stats: all.clone(),
                    ..Outcome::default()
                })
            );
            assert_eq!(prios(&t.outcome.stats), prios(&all));
            assert_eq!(tree.phases, flat.phases);
            // A host in brief carries no histogram, timeline or
            // environment: well under 1 KiB a host (rank 0's own host's
            // other ranks, with 5 a host, send theirs whole).
            let bytes: usize = inputs.iter().map(Vec::len).sum();
            if h == n {
                assert!(
                    bytes < h as usize * 1024 + 64 * 1024,
                    "{bytes} bytes for {h} hosts"
                );
            }
        }
    }

    #[test]
    fn results_sent_twice_are_merged_once() {
        let hosts = hosts(4, 2);
        let env = crate::host::Environment::default();
        let mut acc = rank_result(0, &hosts, &env);
        let mut covered = RankSet::one(0);
        assert!(absorb(&mut acc, &mut covered, rank_result(1, &hosts, &env)));
        assert!(!absorb(
            &mut acc,
            &mut covered,
            rank_result(1, &hosts, &env)
        ));
        assert_eq!(acc.hosts[0].jobs[0].clones, 2);
    }
}
