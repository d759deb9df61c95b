//! Rank 0 puts every rank's results back together: one `RunResult` per
//! host (the ranks of one host merged), in rank order of their first
//! rank. The clones keep the plan of rank 0 (every rank planned the same
//! jobs) with their global clone numbers.

use super::hooks::RankResult;
use crate::report::cluster::Host;
use crate::run::{JobRun, RunResult};

/// The hosts of a run from rank 0's own `result` (the plan) and every
/// rank's outcomes (`all`, in rank order; `all[0]` is rank 0's).
pub fn hosts(result: &RunResult, all: Vec<RankResult>, names: &[String]) -> Vec<Host> {
    let mut out: Vec<Host> = Vec::new();
    let per_rank = result.jobs.len();
    for (rank, rr) in all.into_iter().enumerate() {
        let name = names.get(rank).cloned().unwrap_or_default();
        let i = match out.iter().position(|h| h.hostname == name) {
            Some(i) => i,
            None => {
                out.push(Host {
                    hostname: name,
                    ranks: Vec::new(),
                    result: RunResult {
                        start_unix: rr.start_unix,
                        fake_clock: result.fake_clock,
                        context: result.context.clone(),
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
        for (j, outcome) in result.jobs.iter().zip(rr.outcomes).take(per_rank) {
            let mut job = j.job.clone();
            // Rank r runs global clones r × numjobs + local clone.
            let n = job.spec.ctl.numjobs;
            job.clone = rank as u32 * n + job.clone % n.max(1);
            r.jobs.push(JobRun { job, outcome });
        }
    }
    out
}
