//! Rank 0 puts every rank's results back together: one `RunResult` per
//! host (the ranks of one host merged), in rank order of their first
//! rank. The clones keep the plan of rank 0 (every rank planned the same
//! jobs) with their global clone numbers.

use super::hooks::{PhaseRecord, RankResult};
use crate::report::cluster::{Host, PhaseFigures};
use crate::run::{JobRun, RunResult};

/// The hosts of a run from rank 0's own `result` (the plan) and every
/// rank's outcomes (`all`, in rank order; `all[0]` is rank 0's).
pub fn hosts(result: &RunResult, all: Vec<RankResult>, names: &[String]) -> Vec<Host> {
    let mut out: Vec<Host> = Vec::new();
    for (rank, rr) in all.into_iter().enumerate() {
        let name = names.get(rank).cloned().unwrap_or_default();
        let i = match out.iter().position(|h| h.hostname == name) {
            Some(i) => i,
            None => {
                // The host as its own (first) rank found it.
                let context = crate::run::RunContext {
                    global_options: result.context.global_options.clone(),
                    environment: rr.environment.clone(),
                    warnings: rr
                        .warnings
                        .iter()
                        .map(|(k, j, m)| crate::host::Warning::of_kind(k, j.clone(), m.clone()))
                        .collect(),
                };
                out.push(Host {
                    hostname: name,
                    ranks: Vec::new(),
                    result: RunResult {
                        start_unix: rr.start_unix,
                        fake_clock: result.fake_clock,
                        context: std::sync::Arc::new(context),
                        ..RunResult::default()
                    },
                });
                out.len() - 1
            }
        };
        let h = &mut out[i];
        h.ranks.push(rank as u32);
        let r = &mut h.result;
        r.interrupted |= rr.interrupted;
        r.start_unix = r.start_unix.min(rr.start_unix);
        for d in rr.disks {
            if !r.disks.iter().any(|x| x.name == d.name) {
                r.disks.push(d);
            }
        }
        if rank == 0 {
            r.overcommit = result.overcommit.clone();
        }
        for (j, outcome) in result.jobs.iter().zip(rr.outcomes) {
            let mut job = j.job.clone();
            // Rank r runs global clones r × numjobs + local clone.
            let n = job.spec.ctl.numjobs;
            job.clone = rank as u32 * n + job.clone % n.max(1);
            r.jobs.push(JobRun { job, outcome });
        }
    }
    out
}

/// Each batch over all ranks: when the first and the last rank finished
/// it (from the common start), and every rank's counters until then.
pub fn phases(all: &[RankResult]) -> Vec<PhaseFigures> {
    let batches = all.iter().map(|r| r.phases.len()).max().unwrap_or(0);
    (0..batches)
        .filter_map(|b| {
            let recs: Vec<&PhaseRecord> = all.iter().filter_map(|r| r.phases.get(b)).collect();
            let first = recs.iter().map(|p| p.duration_ms).min()?;
            let last = recs.iter().map(|p| p.duration_ms).max()?;
            // What was done during ramp_time is not measured.
            let ramp = recs.iter().map(|p| p.ramp_ms).max()?;
            let mut f = PhaseFigures {
                phase: b as u32 + 1,
                first_done_ms: first,
                last_done_ms: last,
                ramp_ms: ramp,
                ..PhaseFigures::default()
            };
            for p in &recs {
                let (b0, n0) = p.at(ramp);
                let (b1, n1) = p.at(first.max(ramp));
                let (b2, n2) = p.at(u64::MAX);
                for d in 0..3 {
                    f.all_running.0[d] += b1[d] - b0[d];
                    f.all_running.1[d] += n1[d] - n0[d];
                    f.until_last.0[d] += b2[d] - b0[d];
                    f.until_last.1[d] += n2[d] - n0[d];
                }
            }
            Some(f)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::hooks::Sample;

    fn rec(duration_ms: u64, points: &[(u64, u64)]) -> PhaseRecord {
        PhaseRecord {
            batch: 1,
            duration_ms,
            ramp_ms: 0,
            samples: points
                .iter()
                .map(|&(t_ms, b)| Sample {
                    t_ms,
                    bytes: [b, 0, 0],
                    ios: [b / 4096, 0, 0],
                })
                .collect(),
        }
    }

    #[test]
    fn all_running_counts_every_rank_until_the_first_is_done() {
        let all = vec![
            RankResult {
                phases: vec![rec(1000, &[(0, 0), (500, 4096 * 50), (1000, 4096 * 100)])],
                ..RankResult::default()
            },
            RankResult {
                phases: vec![rec(2000, &[(0, 0), (1000, 4096 * 40), (2000, 4096 * 100)])],
                ..RankResult::default()
            },
        ];
        let p = phases(&all);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].first_done_ms, p[0].last_done_ms), (1000, 2000));
        // Rank 0 all of its 100, rank 1 the 40 it had done by 1 s.
        assert_eq!(p[0].all_running.1[0], 140);
        assert_eq!(p[0].until_last.1[0], 200);
        // Between samples, read linearly: 20 at 0.5 s on rank 1.
        assert_eq!(all[1].phases[0].at(500).1[0], 20);
    }

    #[test]
    fn what_ranks_did_during_ramp_time_is_not_counted() {
        let ramped = |duration, points: &[(u64, u64)]| PhaseRecord {
            ramp_ms: 500,
            ..rec(duration, points)
        };
        let all = vec![
            RankResult {
                phases: vec![ramped(
                    1000,
                    &[(0, 0), (500, 4096 * 50), (1000, 4096 * 100)],
                )],
                ..RankResult::default()
            },
            RankResult {
                phases: vec![ramped(
                    1500,
                    &[(0, 0), (500, 4096 * 40), (1500, 4096 * 140)],
                )],
                ..RankResult::default()
            },
        ];
        let p = &phases(&all)[0];
        assert_eq!(p.ramp_ms, 500);
        // From 0.5 s: rank 0's last 50, rank 1's 50 of its next 100 by 1 s.
        assert_eq!(p.all_running.1[0], 100);
        assert_eq!(p.until_last.1[0], 150);
    }
}
