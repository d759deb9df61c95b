//! Reports: the model every output format is written from (jobs merged as
//! `group_reporting` asks, group summaries) and the formats themselves.
//!
//! Formats only read the model; they never measure or recompute what the
//! run measured.

pub mod env;
pub mod fmt;
pub mod json;
pub mod normal;

use std::sync::Arc;

use crate::job::spec::JobSpec;
use crate::run::RunResult;
use crate::stats::JobStats;

/// One reported job: a clone, or a group of clones merged.
#[derive(Clone, Debug)]
pub struct JobReport {
    pub name: String,
    pub groupid: u32,
    /// Clones merged into this report.
    pub nr_jobs: u32,
    pub error: i32,
    pub error_msg: Option<String>,
    pub stats: JobStats,
    pub spec: Arc<JobSpec>,
    pub start_unix_ms: u64,
}

impl JobReport {
    /// Bytes per second for a direction.
    pub fn bw_bytes(&self, d: usize) -> u64 {
        let ds = &self.stats.dir[d];
        if ds.runtime_ms == 0 {
            0
        } else {
            (ds.bytes as u128 * 1000 / ds.runtime_ms as u128) as u64
        }
    }

    pub fn iops(&self, d: usize) -> f64 {
        let ds = &self.stats.dir[d];
        if ds.runtime_ms == 0 {
            0.0
        } else {
            ds.ios as f64 * 1000.0 / ds.runtime_ms as f64
        }
    }
}

/// Per-direction figures of a reporting group.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate bandwidth in bytes/s (all bytes over the longest run).
    pub agg_bw: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run: u64,
    pub max_run: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupReport {
    pub id: u32,
    pub dir: [GroupDir; 3],
    pub kb_base: u64,
    pub unit_base: u32,
}

/// Everything the formats need.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub jobs: Vec<JobReport>,
    pub groups: Vec<GroupReport>,
    pub global_options: Vec<(String, String)>,
    pub start_unix: u64,
    pub interrupted: bool,
}

impl Report {
    pub fn group(&self, id: u32) -> Option<&GroupReport> {
        self.groups.iter().find(|g| g.id == id)
    }
}

/// Builds the report model from a run's results.
pub fn build(result: &RunResult, global_options: &[(String, String)]) -> Report {
    let mut jobs: Vec<JobReport> = Vec::new();
    let grouped: Vec<u32> = result
        .jobs
        .iter()
        .filter(|j| j.job.spec.stat.group_reporting)
        .map(|j| j.job.group)
        .collect();
    for jr in &result.jobs {
        let spec = &jr.job.spec;
        if !spec.stat.stats {
            continue;
        }
        let o = &jr.outcome;
        if grouped.contains(&jr.job.group) {
            if let Some(existing) = jobs.iter_mut().find(|r| r.groupid == jr.job.group) {
                existing.stats.merge(&o.stats);
                existing.nr_jobs += 1;
                if existing.error == 0 && o.error != 0 {
                    existing.error = o.error;
                    existing.error_msg = o.error_msg.clone();
                }
                continue;
            }
        }
        jobs.push(JobReport {
            name: spec.name.clone(),
            groupid: jr.job.group,
            nr_jobs: 1,
            error: o.error,
            error_msg: o.error_msg.clone(),
            stats: o.stats.clone(),
            spec: spec.clone(),
            start_unix_ms: o.start_unix_ms,
        });
    }
    let mut groups: Vec<GroupReport> = Vec::new();
    for jr in &result.jobs {
        let gid = jr.job.group;
        if !groups.iter().any(|g| g.id == gid) {
            groups.push(GroupReport {
                id: gid,
                kb_base: jr.job.spec.ctl.kb_base,
                unit_base: jr.job.spec.ctl.unit_base,
                ..GroupReport::default()
            });
        }
    }
    for g in &mut groups {
        for d in 0..3 {
            let mut gd = GroupDir::default();
            let mut first = true;
            // Bandwidth extremes are per job as reported (merged when
            // group_reporting is on), as fio does.
            for j in jobs.iter().filter(|j| j.groupid == g.id) {
                let ds = &j.stats.dir[d];
                if ds.ios == 0 {
                    continue;
                }
                let bw = j.bw_bytes(d);
                gd.io_bytes += ds.bytes;
                if first {
                    gd.min_bw = bw;
                    gd.max_bw = bw;
                    gd.min_run = ds.runtime_ms;
                    gd.max_run = ds.runtime_ms;
                    first = false;
                } else {
                    gd.min_bw = gd.min_bw.min(bw);
                    gd.max_bw = gd.max_bw.max(bw);
                    gd.min_run = gd.min_run.min(ds.runtime_ms);
                    gd.max_run = gd.max_run.max(ds.runtime_ms);
                }
            }
            if gd.max_run > 0 {
                gd.agg_bw = (gd.io_bytes as u128 * 1000 / gd.max_run as u128) as u64;
            }
            g.dir[d] = gd;
        }
    }
    Report {
        jobs,
        groups,
        global_options: global_options.to_vec(),
        start_unix: result.start_unix,
        interrupted: result.interrupted,
    }
}
