//! Overcommit: a batch of clones started together that needs more CPUs
//! than the process may use. Clones bound by the CPU (the null engine, or
//! I/O the page cache or a memory filesystem serves) then take turns on
//! the CPUs: the figures stay true (a group's I/O over the wall-clock time
//! it took), but per-clone rates and latencies include waiting for a CPU,
//! and the run measures the CPUs rather than the storage. The run says so
//! once, on stderr and in the JSON `iomark.warnings`.

use crate::host::Environment;
use crate::job::JobSpec;

use super::plan::Plan;

/// One batch that ran more CPU-bound clones than allowed CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overcommit {
    /// The first CPU-bound job of the batch.
    pub job: String,
    pub clones: usize,
    pub cpus: usize,
}

impl Overcommit {
    pub fn message(&self) -> String {
        format!(
            "{} CPU-bound clones (job '{}' first) run together on {} allowed CPU{}: they take \
             turns on the CPUs, so each clone's rate and latency include time spent waiting \
             for a CPU, and the totals measure the CPUs more than the storage",
            self.clones,
            self.job,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" }
        )
    }
}

/// CPUs this process may run on (sched_getaffinity), at least 1.
pub fn allowed_cpus() -> usize {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // fills it for the calling thread.
    #[cfg(target_os = "linux")]
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (libc::CPU_COUNT(&set) as usize).max(1);
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether a clone of `spec` keeps a CPU busy all the time: no pacing,
/// and I/O that memory serves (judged from the environment the run found
/// before it started).
fn cpu_bound(spec: &JobSpec, env: &Environment) -> bool {
    let t = &spec.time;
    let paced = t.rate.iter().chain(&t.rate_iops).any(|r| *r > 0)
        || t.thinktime_us > 0
        || t.thinktime_spin_us > 0;
    if paced {
        return false;
    }
    spec.io.ioengine.info().caps.diskless || crate::host::memory_served(spec, env)
}

/// Remembers, per job, whether its clones are CPU-bound.
#[derive(Default)]
pub struct Checker {
    known: std::collections::HashMap<usize, bool>,
}

impl Checker {
    /// The overcommit of the clones `batch` (indexes into `plan.jobs`)
    /// started together, if any.
    pub fn check(
        &mut self,
        plan: &Plan,
        batch: &[usize],
        cpus: usize,
        env: &Environment,
    ) -> Option<Overcommit> {
        let mut first = None;
        let mut clones = 0;
        for &i in batch {
            let job = &plan.jobs[i];
            let bound = *self
                .known
                .entry(job.job_index)
                .or_insert_with(|| cpu_bound(&job.spec, env));
            if bound {
                clones += 1;
                first.get_or_insert_with(|| job.spec.name.clone());
            }
        }
        (clones > cpus).then(|| Overcommit {
            job: first.unwrap_or_default(),
            clones,
            cpus,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_cpu_is_allowed() {
        assert!(allowed_cpus() >= 1);
    }

    #[test]
    fn the_message_names_the_counts() {
        let o = Overcommit {
            job: "m".into(),
            clones: 256,
            cpus: 2,
        };
        let m = o.message();
        assert!(
            m.contains("256 CPU-bound clones") && m.contains("on 2 allowed CPUs:"),
            "{m}"
        );
    }
}
