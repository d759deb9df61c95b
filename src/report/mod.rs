//! Reports: the model every output format is written from (jobs merged as
//! `group_reporting` asks, `unified_rw_reporting` directions, group
//! summaries, disks) and the formats themselves.
//!
//! Formats only read the model; they never measure or recompute what the
//! run measured, and read nothing from the system: the host environment
//! and the warnings come from the result (`run::RunContext`), captured
//! once before the run.
//!
//! `html` (the self-contained HTML report) and `svg` (its charts) render
//! results as `results::dataset` reads them from JSON files — one run's,
//! a benchmark's passes, or several files for `report` and `compare` —
//! rather than this module's model.

pub mod cluster;
pub mod env;
pub mod fmt;
pub mod hosts;
pub mod html;
pub mod json;
pub mod log_charts;
pub mod normal;
pub mod out;
#[cfg(test)]
mod prio_tests;
pub mod svg;
pub mod sweep_charts;
pub mod terse;
pub mod text;

use std::sync::Arc;

use crate::job::spec::JobSpec;
use crate::run::plan::PlannedJob;
use crate::run::worker::Outcome;
use crate::run::{JobRun, RunResult};
use crate::stats::disk::DiskReport;
use crate::stats::{DirStats, JobStats};

/// `unified_rw_reporting` values.
pub const UNIFIED_NONE: u8 = 0;
pub const UNIFIED_MIXED: u8 = 1;
pub const UNIFIED_BOTH: u8 = 2;

/// Names of the directions in reports.
pub const DDIR_NAMES: [&str; 3] = ["read", "write", "trim"];

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
    /// Read, write and trim merged (with `unified_rw_reporting`).
    pub mixed: Option<DirStats>,
    pub spec: Arc<JobSpec>,
    pub start_unix_ms: u64,
    /// Process id shown in the text report.
    pub pid: u32,
}

/// One direction section of a job: its label and figures, and which
/// group direction its share (`per=`) is taken from.
pub struct Section<'a> {
    pub label: &'static str,
    pub stats: &'a DirStats,
    /// Index into the group's directions (3 for mixed).
    pub group_dir: usize,
}

impl JobReport {
    pub fn unified(&self) -> u8 {
        self.spec.stat.unified_rw_reporting
    }

    /// The direction sections to report, in order.
    pub fn sections(&self) -> Vec<Section<'_>> {
        let mut v = Vec::new();
        if self.unified() != UNIFIED_MIXED {
            for (d, name) in DDIR_NAMES.iter().enumerate() {
                v.push(Section {
                    label: name,
                    stats: &self.stats.dir[d],
                    group_dir: d,
                });
            }
        }
        if let Some(m) = &self.mixed {
            v.push(Section {
                label: "mixed",
                stats: m,
                group_dir: 3,
            });
        }
        v
    }
}

/// Bytes per second of a direction's figures (fio's integer arithmetic).
pub fn bw_bytes(ds: &DirStats) -> u64 {
    if ds.runtime_ms == 0 {
        0
    } else {
        (ds.bytes as u128 * 1000 / ds.runtime_ms as u128) as u64
    }
}

/// What an http job's reads are when they move no object data
/// (`http_op=head|list`), or None.
pub fn object_op(spec: &crate::job::JobSpec) -> Option<crate::job::spec::HttpOp> {
    let op = spec.engine.http.op;
    (spec.io.ioengine == crate::job::EngineKind::Http && op.method().is_some()).then_some(op)
}

/// Objects listed (`http_op=list`) per second of a direction's run time.
pub fn listed_per_s(listed: u64, ds: &DirStats) -> f64 {
    listed as f64 * 1000.0 / ds.runtime_ms.max(1) as f64
}

/// I/O per second of a direction's figures.
pub fn iops(ds: &DirStats) -> f64 {
    if ds.runtime_ms == 0 {
        0.0
    } else {
        ds.ios as f64 * 1000.0 / ds.runtime_ms as f64
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

impl GroupDir {
    fn add(&mut self, bytes: u64, bw: u64, runtime: u64) {
        if runtime == 0 {
            return;
        }
        if self.max_run == 0 {
            self.min_bw = bw;
            self.max_bw = bw;
            self.min_run = runtime;
        } else {
            self.min_bw = self.min_bw.min(bw);
            self.max_bw = self.max_bw.max(bw);
            self.min_run = self.min_run.min(runtime);
        }
        self.max_run = self.max_run.max(runtime);
        self.io_bytes += bytes;
    }

    fn close(&mut self) {
        if self.max_run > 0 {
            self.agg_bw = (self.io_bytes as u128 * 1000 / self.max_run as u128) as u64;
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupReport {
    pub id: u32,
    /// read, write, trim, mixed.
    pub dir: [GroupDir; 4],
    pub unified: u8,
    pub kb_base: u64,
    pub unit_base: u32,
    pub sig_figs: u32,
}

/// Everything the formats need.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub jobs: Vec<JobReport>,
    pub groups: Vec<GroupReport>,
    pub global_options: Vec<(String, String)>,
    pub disks: Vec<DiskReport>,
    /// Unix time (ms) the report describes (now, or fixed with a fake clock).
    pub now_unix_ms: u64,
    pub interrupted: bool,
    /// Fake clock: dates, pids and CPU figures are fixed.
    pub fake_clock: bool,
    /// Batches of CPU-bound clones that outnumbered the allowed CPUs.
    pub overcommit: Vec<crate::run::overcommit::Overcommit>,
    /// The host and targets as the run found them before it started.
    pub environment: crate::host::Environment,
    /// Cache warnings and run notes, as printed before the run.
    pub warnings: Vec<crate::host::Warning>,
    /// `--label`: the run's name (JSON `iomark.label`).
    pub label: Option<String>,
}

impl Report {
    pub fn group(&self, id: u32) -> Option<&GroupReport> {
        self.groups.iter().find(|g| g.id == id)
    }

    /// The group share base (`per=`, `bw_agg`) for a section of job `r`.
    pub fn group_agg(&self, r: &JobReport, dir: usize) -> u64 {
        self.group(r.groupid)
            .map(|g| g.dir[dir].agg_bw)
            .unwrap_or(0)
    }
}

/// Which formats to write, in the order they are written: terse (with
/// its version), JSON (or json+), normal text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub terse: Option<u32>,
    pub json: bool,
    pub json_plus: bool,
    pub normal: bool,
}

/// Every requested format for `report`, concatenated. Each part is
/// complete on its own: terse lines, one JSON document, the text report.
pub fn render(report: &Report, out: &Outputs) -> String {
    let mut s = String::new();
    if let Some(v) = out.terse {
        s.push_str(&terse::render(report, v));
    }
    if out.json || out.json_plus {
        s.push_str(&json::to_string(&json::document(report, out.json_plus)));
    }
    if out.normal {
        s.push_str(&normal::render(report));
    }
    s
}

fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A new report entry for one clone (`pid` and start time as the report
/// shows them: fixed with a fake clock).
fn clone_entry(jr: &JobRun, start_unix: u64, fake: bool) -> JobReport {
    let o = &jr.outcome;
    JobReport {
        name: jr.job.spec.name.clone(),
        groupid: jr.job.group,
        nr_jobs: jr.clones.max(1),
        error: o.error,
        error_msg: o.error_msg.clone(),
        stats: o.stats.clone(),
        mixed: None,
        spec: jr.job.spec.clone(),
        start_unix_ms: if fake {
            crate::stats::live::FAKE_UNIX_S * 1000
        } else if o.start_unix_ms == 0 {
            // The job failed before it started: show when the run began.
            start_unix * 1000
        } else {
            o.start_unix_ms
        },
        pid: if fake { 4242 } else { std::process::id() },
    }
}

impl JobReport {
    /// Merges another clone's outcome into this entry (standing for
    /// `clones` clones): figures merged exactly (`JobStats::merge`), the
    /// first error kept.
    pub fn add_clone(&mut self, o: &Outcome, clones: u32) {
        self.stats.merge(&o.stats);
        self.nr_jobs += clones.max(1);
        if self.error == 0 && o.error != 0 {
            self.error = o.error;
            self.error_msg = o.error_msg.clone();
        }
    }

    /// Fills what follows from the merged figures: the mixed direction
    /// (`unified_rw_reporting`), and with a fake clock no CPU figures.
    fn finish(&mut self, fake: bool) {
        if self.unified() != UNIFIED_NONE {
            self.mixed = Some(self.stats.mixed());
        }
        if fake {
            let s = &mut self.stats;
            (s.usr_us, s.sys_us, s.ctx, s.majf, s.minf) = (0, 0, 0, 0, 0);
        }
    }
}

/// The reporting groups of `run_jobs` (in order of first appearance),
/// their figures taken from the reported entries `jobs`.
fn group_reports<'a>(
    run_jobs: impl IntoIterator<Item = &'a PlannedJob>,
    jobs: &[JobReport],
) -> Vec<GroupReport> {
    let mut groups: Vec<GroupReport> = Vec::new();
    for j in run_jobs {
        if !groups.iter().any(|g| g.id == j.group) {
            let spec = &j.spec;
            groups.push(GroupReport {
                id: j.group,
                unified: spec.stat.unified_rw_reporting,
                kb_base: spec.ctl.kb_base,
                unit_base: spec.ctl.unit_base,
                sig_figs: spec.stat.significant_figures,
                ..GroupReport::default()
            });
        }
    }
    for g in &mut groups {
        for j in jobs.iter().filter(|j| j.groupid == g.id) {
            for d in 0..3 {
                let ds = &j.stats.dir[d];
                g.dir[d].add(ds.bytes, bw_bytes(ds), ds.runtime_ms);
                if g.unified == UNIFIED_BOTH {
                    // The mixed line's range spans every direction.
                    g.dir[3].add(ds.bytes, bw_bytes(ds), ds.runtime_ms);
                }
            }
            if g.unified == UNIFIED_MIXED {
                if let Some(m) = &j.mixed {
                    g.dir[3].add(m.bytes, bw_bytes(m), m.runtime_ms);
                }
            }
        }
        g.dir.iter_mut().for_each(GroupDir::close);
    }
    groups
}

/// The report entries of `runs`: one per clone, or per reporting group
/// for clones whose group asked for `group_reporting`; clones with
/// `stats=0` are left out.
fn entries<'a>(
    runs: impl IntoIterator<Item = &'a JobRun>,
    start_unix: u64,
    fake: bool,
) -> Vec<JobReport> {
    let runs: Vec<&JobRun> = runs.into_iter().collect();
    let grouped: Vec<u32> = runs
        .iter()
        .filter(|j| j.job.spec.stat.group_reporting)
        .map(|j| j.job.group)
        .collect();
    let mut jobs: Vec<JobReport> = Vec::new();
    for jr in runs {
        if !jr.job.spec.stat.stats {
            continue;
        }
        if grouped.contains(&jr.job.group) {
            if let Some(existing) = jobs.iter_mut().find(|r| r.groupid == jr.job.group) {
                existing.add_clone(&jr.outcome, jr.clones);
                continue;
            }
        }
        jobs.push(clone_entry(jr, start_unix, fake));
    }
    jobs.iter_mut().for_each(|j| j.finish(fake));
    jobs
}

/// Builds the report model from a run's results (and what the run
/// captured before it started: `RunResult::context`).
pub fn build(result: &RunResult) -> Report {
    let fake = result.fake_clock;
    let jobs = entries(&result.jobs, result.start_unix, fake);
    let groups = group_reports(result.jobs.iter().map(|j| &j.job), &jobs);
    Report {
        jobs,
        groups,
        global_options: result.context.global_options.clone(),
        disks: result.disks.clone(),
        now_unix_ms: if fake {
            crate::stats::live::FAKE_UNIX_S * 1000
        } else {
            unix_now_ms()
        },
        interrupted: result.interrupted,
        fake_clock: fake,
        overcommit: result.overcommit.clone(),
        environment: result.context.environment.clone(),
        warnings: result.context.warnings.clone(),
        label: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_dir_ranges() {
        let mut g = GroupDir::default();
        g.add(1000, 500, 2000);
        g.add(3000, 1500, 2002);
        g.add(0, 0, 0);
        g.close();
        assert_eq!((g.min_bw, g.max_bw), (500, 1500));
        assert_eq!((g.min_run, g.max_run), (2000, 2002));
        assert_eq!(g.io_bytes, 4000);
        assert_eq!(g.agg_bw, 4000 * 1000 / 2002);
    }
}
