//! The report of a run spread over several hosts (MPI ranks), laid out as
//! fio's client mode lays out a run on several servers: each host's jobs
//! as that host reports them, then one "All clients" entry per reporting
//! group, merged over every clone of every host.
//!
//! Merges are exact: counters are summed and latency histograms merged
//! bucket by bucket (`JobStats::merge`), so the "All clients" percentiles
//! are those of every I/O of every host (fio's client mode has none).
//!
//! - JSON / json+: `client_stats` holds each host's job entries (as in
//!   `jobs`, plus `hostname` and `port`, which is 0), then the "All
//!   clients" entries (without job options, `eta`, `elapsed` and the
//!   latency-target keys, as fio writes them; their `hostname` is the last
//!   host's, as fio's is one of its clients'). The top-level `jobs` holds
//!   one entry per job section merged over all hosts, so tools that read
//!   plain `jobs` see the totals; `disk_util` lists every host's disks
//!   with the host; `iomark.cluster` gives the ranks and each host's ranks,
//!   environment and warnings (the top-level `iomark` environment is the
//!   first host's).
//! - Normal text: each host's report introduced by `<hostname> ` (fio's
//!   prefix for what a server prints), then the "All clients" blocks
//!   (fio's, with percentiles) and the run status of each group over all
//!   hosts, "Run status group N (all clients)" (which fio does not
//!   write).
//! - Terse: each host's job lines (with its disks), then one "All
//!   clients" line per group.
//!
//! Built from results only: nothing here reads the system or talks to
//! other hosts (gathering the results is `cluster`'s business).

use std::fmt::Write;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::hosts::{self, HostBrief, JobBrief, PhaseBrief, Spread};
use super::{clone_entry, group_reports, json as fio_json, normal, terse};
use super::{JobReport, Outputs, Report};
use crate::run::{JobRun, RunResult};

/// The name of the entries merged over all hosts.
pub const ALL_CLIENTS: &str = "All clients";

/// What one host ran: its ranks' clones merged into one result by the
/// caller, jobs in plan order (the same job specs on every host).
#[derive(Debug, Clone)]
pub struct Host {
    pub hostname: String,
    pub ranks: Vec<u32>,
    /// The process id of its first rank (its report's `pid`).
    pub pid: u32,
    pub result: RunResult,
}

/// The run as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterInfo {
    /// Number of ranks (processes) in the run.
    pub ranks: u32,
    /// Each batch (stonewall phase) over all ranks: the figures while
    /// every rank was running and until the last was done.
    pub phases: Vec<PhaseFigures>,
    /// Ranks whose results the report holds.
    pub reported: u32,
    /// Ranks whose results it does not hold, and why.
    pub missing: Vec<MissingRanks>,
    /// What stopped the run early (a signal, a lost rank), if anything.
    pub stopped: Option<String>,
    /// What merging every rank's results cost rank 0: its time decoding
    /// and merging them (ns), and its peak resident memory then (bytes).
    pub merge_ns: u64,
    pub peak_rss_bytes: Option<u64>,
    /// Every host kept in brief (more hosts than `--mpi-host-detail`):
    /// one line per host and phase in the text, a summary per host in
    /// the JSON, no per-host json+ entries.
    pub condensed: bool,
}

/// Ranks whose results are missing from the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MissingRanks {
    pub ranks: Vec<u32>,
    pub hostnames: Vec<String>,
    pub reason: String,
}

/// A batch of a run over many ranks, from the common start (rank 0's
/// release from the start barrier): until the first rank finished it
/// (every rank running: the load the storage carried from all clients at
/// once) and until the last did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseFigures {
    /// 1 for the first batch.
    pub phase: u32,
    /// Ranks that ran clones in it.
    pub ranks: u32,
    /// When the first and the last rank were done (ns from the start).
    pub first_done_ns: u64,
    pub last_done_ns: u64,
    /// The phase's `ramp_time`: the figures count from its end.
    pub ramp_ms: u64,
    /// How far apart the ranks left the start barrier (ns).
    pub start_skew_ns: u64,
    /// Bytes and I/Os per direction of all ranks until the first was done
    /// (`None` when the phase was stopped before every rank knew it).
    pub all_running: Option<([u64; 3], [u64; 3])>,
    /// ... and until the last was done.
    pub until_last: ([u64; 3], [u64; 3]),
    /// Stopped early (a signal, a lost rank).
    pub interrupted: bool,
}

/// Per second over `ns` (0 for no time).
fn per_s(v: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        v as f64 * 1e9 / ns as f64
    }
}

impl PhaseFigures {
    /// From the end of the ramp until the first rank was done, and until
    /// the last was (ns).
    pub fn spans_ns(&self) -> (u64, u64) {
        let ramp = self.ramp_ms * 1_000_000;
        (
            self.first_done_ns.saturating_sub(ramp),
            self.last_done_ns.saturating_sub(ramp),
        )
    }
}

fn phase_json(p: &PhaseFigures) -> Value {
    let part = |(bytes, ios): ([u64; 3], [u64; 3]), ns: u64| {
        let mut m = Map::new();
        m.insert("runtime_ms".into(), json!(ns / 1_000_000));
        m.insert("runtime_ns".into(), json!(ns));
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            m.insert(
                (*name).into(),
                json!({
                    "io_bytes": bytes[d],
                    "total_ios": ios[d],
                    "bw_bytes": per_s(bytes[d], ns) as u64,
                    "iops": per_s(ios[d], ns),
                }),
            );
        }
        Value::Object(m)
    };
    let (all_ns, last_ns) = p.spans_ns();
    let mut m = Map::new();
    m.insert("phase".into(), json!(p.phase));
    m.insert("ranks".into(), json!(p.ranks));
    m.insert("first_done_ms".into(), json!(p.first_done_ns / 1_000_000));
    m.insert("last_done_ms".into(), json!(p.last_done_ns / 1_000_000));
    m.insert("first_done_ns".into(), json!(p.first_done_ns));
    m.insert("last_done_ns".into(), json!(p.last_done_ns));
    m.insert("ramp_ms".into(), json!(p.ramp_ms));
    m.insert("start_skew_ns".into(), json!(p.start_skew_ns));
    if let Some(a) = p.all_running {
        m.insert("all_running".into(), part(a, all_ns));
    }
    m.insert("until_last_done".into(), part(p.until_last, last_ns));
    if p.interrupted {
        m.insert("interrupted".into(), json!(true));
    }
    Value::Object(m)
}

/// `Phase 1 over 3 ranks: first done at 1.204s, last at 2.511s` and the
/// rates of each direction while all ran and until the last was done.
fn phase_text(p: &PhaseFigures, kb_base: u64) -> String {
    let mut out = format!(
        "Phase {} over {} ranks: first done at {:.3}s, last at {:.3}s{}\n",
        p.phase,
        p.ranks,
        p.first_done_ns as f64 / 1e9,
        p.last_done_ns as f64 / 1e9,
        if p.interrupted {
            " (stopped early)"
        } else {
            ""
        }
    );
    if p.start_skew_ns > SKEW_SHOWN_NS {
        let _ = writeln!(
            out,
            "  the ranks started {:.1} ms apart",
            p.start_skew_ns as f64 / 1e6
        );
    }
    let (all_ns, last_ns) = p.spans_ns();
    let mut parts = Vec::new();
    if let Some(a) = p.all_running {
        parts.push(("while all ran", a, all_ns));
    }
    parts.push(("until the last", p.until_last, last_ns));
    for (label, (bytes, ios), ns) in parts {
        for (d, name) in ["READ", "WRITE", "TRIM"].iter().enumerate() {
            if ios[d] == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "  {label:>14}: {name:>5}: bw={}, iops={}, io={}",
                super::fmt::bw_pair(per_s(bytes[d], ns) as u64, kb_base),
                super::fmt::num2str(per_s(ios[d], ns), 4, 1000, ""),
                super::fmt::bytes_pair(bytes[d], kb_base)
            );
        }
    }
    out
}

/// A start skew above this (1 ms) is shown in the text report.
pub const SKEW_SHOWN_NS: u64 = 1_000_000;

/// `Missing: rank 3 (host b): sent nothing for 3 s during phase 1`.
fn missing_text(c: &ClusterInfo) -> String {
    let mut out = String::new();
    if let Some(why) = &c.stopped {
        let _ = writeln!(out, "Stopped early: {why}");
    }
    for m in &c.missing {
        let ranks: Vec<String> = m.ranks.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "Missing: rank{} {} (host{} {}): {}",
            if m.ranks.len() == 1 { "" } else { "s" },
            ranks.join(", "),
            if m.hostnames.len() == 1 { "" } else { "s" },
            m.hostnames.join(", "),
            m.reason
        );
    }
    out
}

/// One host's report, as it would report alone.
#[derive(Clone, Debug)]
pub struct HostReport {
    pub hostname: String,
    pub ranks: Vec<u32>,
    pub report: Report,
}

/// Everything the formats need for a run over several hosts.
#[derive(Clone, Debug)]
pub struct ClusterReport {
    pub hosts: Vec<HostReport>,
    /// "All clients": one entry per reporting group, every clone of every
    /// host of the group merged. Its groups are the run status over all
    /// hosts (shares and ranges taken over every host's entries).
    pub all_clients: Report,
    /// One entry per job section, every clone of every host merged (the
    /// JSON `jobs`), with the same groups.
    pub jobs: Report,
    pub info: ClusterInfo,
    /// Every host in brief, by host (whole or not: the summary's source).
    pub briefs: Vec<HostBrief>,
    /// The operator's summary: per phase and direction, the slowest and
    /// fastest host and the spread over hosts.
    pub spreads: Vec<Spread>,
}

/// Merges clone `jr` of host `host` into `entries[at]`, or with `at`
/// `None` adds it as a new entry, made with `new`. An error keeps the
/// host's name in its message.
fn merge_clone(
    entries: &mut Vec<JobReport>,
    at: Option<usize>,
    host: &Host,
    jr: &JobRun,
    new: impl FnOnce(&mut JobReport),
) {
    let (i, had_error) = match at {
        Some(i) => {
            let had = entries[i].error != 0;
            entries[i].add_clone(&jr.outcome, jr.clones);
            (i, had)
        }
        None => {
            let mut e = clone_entry(jr, host.result.start_unix, host.result.fake_clock);
            new(&mut e);
            entries.push(e);
            (entries.len() - 1, false)
        }
    };
    let e = &mut entries[i];
    if !had_error && e.error != 0 && !host.hostname.is_empty() {
        let msg = e
            .error_msg
            .clone()
            .unwrap_or_else(|| normal::errno_text(e.error));
        e.error_msg = Some(format!("{}: {msg}", host.hostname));
    }
}

/// The spec an "All clients" entry is reported with: its group's first
/// job's, without a description (fio writes none).
fn summary_spec(jr: &JobRun) -> Arc<crate::job::spec::JobSpec> {
    if jr.job.spec.description.is_empty() {
        return jr.job.spec.clone();
    }
    let mut s = (*jr.job.spec).clone();
    s.description.clear();
    Arc::new(s)
}

/// A host whose results are whole, in brief (for the summary).
pub fn brief_of(h: &Host) -> HostBrief {
    let jobs = &h.result.jobs;
    let mut phases: Vec<u32> = jobs.iter().map(|j| j.job.phase).collect();
    phases.sort_unstable();
    phases.dedup();
    HostBrief {
        host: 0,
        hostname: h.hostname.clone(),
        ranks: h.ranks.clone(),
        pid: h.pid,
        interrupted: h.result.interrupted,
        warnings: Vec::new(),
        phases: phases
            .into_iter()
            .map(|ph| {
                let of = jobs.iter().filter(|j| j.job.phase == ph);
                PhaseBrief::of(ph + 1, of.map(|j| &j.outcome))
            })
            .collect(),
        jobs: Vec::new(),
    }
}

/// Builds the reports of a run over `hosts` (in the order given).
pub fn build(hosts: &[Host], info: &ClusterInfo) -> ClusterReport {
    let briefs = hosts.iter().map(brief_of).collect();
    build_with(hosts, None, briefs, info)
}

/// The run status ranges of the hosts kept in brief: each host's entry
/// per job section (per group with `group_reporting`), as its own report
/// would have it.
fn add_brief_ranges(groups: &mut [super::GroupReport], briefs: &[HostBrief], plan: &RunResult) {
    let grouped = |g: u32| {
        plan.jobs
            .iter()
            .any(|j| j.job.group == g && j.job.spec.stat.group_reporting)
    };
    for b in briefs {
        let mut entries: Vec<JobBrief> = Vec::new();
        for j in &b.jobs {
            match entries
                .iter_mut()
                .find(|e| grouped(j.group) && e.group == j.group)
            {
                Some(e) => {
                    for d in 0..3 {
                        e.bytes[d] += j.bytes[d];
                        e.runtime_ms[d] = e.runtime_ms[d].max(j.runtime_ms[d]);
                    }
                }
                None => entries.push(j.clone()),
            }
        }
        let bw = |bytes: u64, run: u64| {
            if run == 0 {
                0
            } else {
                (bytes as u128 * 1000 / run as u128) as u64
            }
        };
        for e in &entries {
            let Some(g) = groups.iter_mut().find(|g| g.id == e.group) else {
                continue;
            };
            for d in 0..3 {
                let (bytes, run) = (e.bytes[d], e.runtime_ms[d]);
                g.dir[d].add(bytes, bw(bytes, run), run);
                if g.unified == super::UNIFIED_BOTH {
                    g.dir[3].add(bytes, bw(bytes, run), run);
                }
            }
            if g.unified == super::UNIFIED_MIXED {
                // The entry's mixed figures, as a whole host's would be
                // (`DirStats::mixed`): every direction's bytes over the
                // longest direction's run time.
                let bytes = e.bytes.iter().sum();
                let run = e.runtime_ms.iter().copied().max().unwrap_or(0);
                g.dir[3].add(bytes, bw(bytes, run), run);
            }
        }
    }
    for g in groups.iter_mut() {
        g.dir.iter_mut().for_each(super::GroupDir::close);
    }
}

/// Builds the reports of a run over `hosts` kept whole (in the order
/// given) and the merged jobs of the hosts kept in brief (`rest`);
/// `briefs` holds every host in brief.
pub fn build_with(
    hosts: &[Host],
    rest: Option<&Host>,
    briefs: Vec<HostBrief>,
    info: &ClusterInfo,
) -> ClusterReport {
    let host_reports: Vec<HostReport> = hosts
        .iter()
        .map(|h| HostReport {
            hostname: h.hostname.clone(),
            ranks: h.ranks.clone(),
            report: {
                let mut r = super::build(&h.result);
                if !h.result.fake_clock {
                    // Its own process, not rank 0's.
                    r.jobs.iter_mut().for_each(|j| j.pid = h.pid);
                }
                r
            },
        })
        .collect();
    let mut all: Vec<JobReport> = Vec::new();
    let mut per_job: Vec<JobReport> = Vec::new();
    // The job section of each entry of `per_job`.
    let mut sections: Vec<usize> = Vec::new();
    for h in hosts.iter().chain(rest) {
        for jr in h.result.jobs.iter().filter(|j| j.job.spec.stat.stats) {
            let at = all.iter().position(|e| e.groupid == jr.job.group);
            merge_clone(&mut all, at, h, jr, |e| {
                e.name = ALL_CLIENTS.into();
                e.spec = summary_spec(jr);
                e.pid = 0;
            });
            let at = sections.iter().position(|s| *s == jr.job.job_index);
            if at.is_none() {
                sections.push(jr.job.job_index);
            }
            merge_clone(&mut per_job, at, h, jr, |e| e.pid = 0);
        }
    }
    let fake = hosts.iter().chain(rest).any(|h| h.result.fake_clock);
    all.iter_mut().for_each(|e| e.finish(fake));
    per_job.iter_mut().for_each(|e| e.finish(fake));
    // The run status over all hosts: every host's reported entries.
    let host_entries: Vec<JobReport> = host_reports
        .iter()
        .flat_map(|h| h.report.jobs.iter().cloned())
        .collect();
    let mut groups = group_reports(
        hosts
            .iter()
            .chain(rest)
            .flat_map(|h| h.result.jobs.iter().map(|j| &j.job)),
        &host_entries,
    );
    if let Some(r) = rest {
        let kept: Vec<&Vec<u32>> = hosts.iter().map(|h| &h.ranks).collect();
        let brief: Vec<HostBrief> = briefs
            .iter()
            .filter(|b| !kept.contains(&&b.ranks))
            .cloned()
            .collect();
        add_brief_ranges(&mut groups, &brief, &r.result);
    }
    // Rank 0's own session stands in for the first host when every host
    // is kept in brief.
    let stand_in = match (host_reports.first(), rest) {
        (None, Some(r)) => Some(super::build(&r.result)),
        _ => None,
    };
    let first = host_reports
        .first()
        .map(|h| &h.report)
        .or(stand_in.as_ref());
    let base = Report {
        jobs: Vec::new(),
        groups,
        global_options: first.map(|r| r.global_options.clone()).unwrap_or_default(),
        disks: Vec::new(),
        now_unix_ms: if fake {
            crate::stats::live::FAKE_UNIX_S * 1000
        } else {
            super::unix_now_ms()
        },
        interrupted: host_reports.iter().any(|h| h.report.interrupted)
            || briefs.iter().any(|b| b.interrupted),
        fake_clock: fake,
        overcommit: first.map(|r| r.overcommit.clone()).unwrap_or_default(),
        environment: first.map(|r| r.environment.clone()).unwrap_or_default(),
        warnings: first.map(|r| r.warnings.clone()).unwrap_or_default(),
        label: None,
    };
    ClusterReport {
        hosts: host_reports,
        all_clients: Report {
            jobs: all,
            ..base.clone()
        },
        jobs: Report {
            jobs: per_job,
            ..base
        },
        info: info.clone(),
        spreads: hosts::spreads(&briefs),
        briefs,
    }
}

/// Every requested format, concatenated in the order `report::render`
/// writes them: terse, JSON (or json+), normal text.
pub fn render(c: &ClusterReport, out: &Outputs) -> String {
    let mut s = String::new();
    if let Some(v) = out.terse {
        s.push_str(&terse_lines(c, v));
    }
    if out.json || out.json_plus {
        s.push_str(&fio_json::to_string(&document(c, out.json_plus)));
    }
    if out.normal {
        s.push_str(&normal_text(c));
    }
    s
}

/// Each host's lines, then the "All clients" lines.
pub fn terse_lines(c: &ClusterReport, version: u32) -> String {
    let mut s = String::new();
    for h in &c.hosts {
        s.push_str(&terse::render(&h.report, version));
    }
    for r in &c.all_clients.jobs {
        s.push_str(&terse::job_line(r, &c.all_clients, version));
    }
    s
}

/// The JSON document in fio's client-mode layout (json+ with `plus`).
pub fn document(c: &ClusterReport, plus: bool) -> Value {
    let mut top = fio_json::head(&c.jobs);
    let mut clients: Vec<Value> = Vec::new();
    for h in &c.hosts {
        let entry = fio_json::Entry::Client {
            hostname: &h.hostname,
        };
        for r in &h.report.jobs {
            clients.push(fio_json::job_entry(r, &h.report, plus, entry));
        }
    }
    let last = c.hosts.last().map(|h| h.hostname.as_str()).unwrap_or("");
    for r in &c.all_clients.jobs {
        let entry = fio_json::Entry::AllClients { hostname: last };
        clients.push(fio_json::job_entry(r, &c.all_clients, plus, entry));
    }
    top.insert("client_stats".into(), Value::Array(clients));
    top.insert("jobs".into(), fio_json::job_entries(&c.jobs, plus));
    let disks: Vec<Value> = c
        .hosts
        .iter()
        .flat_map(|h| {
            h.report
                .disks
                .iter()
                .map(|d| fio_json::disk_entry(d, Some(&h.hostname)))
        })
        .collect();
    top.insert("disk_util".into(), Value::Array(disks));
    if c.jobs.interrupted {
        top.insert("interrupted".into(), json!(true));
    }
    let mut iomark = fio_json::iomark_object(&c.jobs);
    iomark["cluster"] = cluster_object(c);
    top.insert("iomark".into(), iomark);
    Value::Object(top)
}

/// `iomark.cluster`: the ranks, and each host with its ranks, environment
/// and warnings.
fn cluster_object(c: &ClusterReport) -> Value {
    let brief_of = |ranks: &Vec<u32>| c.briefs.iter().find(|b| &b.ranks == ranks);
    let hosts: Vec<Value> = if c.info.condensed {
        c.briefs.iter().map(brief_json).collect()
    } else {
        c.hosts
            .iter()
            .map(|h| {
                let own = super::env::iomark_section(&h.report);
                let mut m = Map::new();
                m.insert("hostname".into(), json!(h.hostname));
                m.insert("ranks".into(), json!(h.ranks));
                m.insert("environment".into(), own["environment"].clone());
                m.insert("warnings".into(), own["warnings"].clone());
                if let Some(b) = brief_of(&h.ranks) {
                    m.insert("phases".into(), hosts::phases_json(b));
                }
                Value::Object(m)
            })
            .collect()
    };
    let phases: Vec<Value> = c.info.phases.iter().map(phase_json).collect();
    let missing: Vec<Value> = c
        .info
        .missing
        .iter()
        .map(|m| json!({"ranks": m.ranks, "hostnames": m.hostnames, "reason": m.reason}))
        .collect();
    let mut m = Map::new();
    m.insert("ranks".into(), json!(c.info.ranks));
    m.insert("ranks_reported".into(), json!(c.info.reported));
    m.insert(
        "host_detail".into(),
        json!(if c.info.condensed { "brief" } else { "full" }),
    );
    m.insert("summary".into(), hosts::summary_json(&c.spreads));
    m.insert("hosts".into(), Value::Array(hosts));
    m.insert("phases".into(), Value::Array(phases));
    m.insert("missing".into(), Value::Array(missing));
    if let Some(why) = &c.info.stopped {
        m.insert("stopped".into(), json!(why));
    }
    m.insert(
        "merge".into(),
        json!({
            "rank0_ns": c.info.merge_ns,
            "rank0_peak_rss_bytes": c.info.peak_rss_bytes,
        }),
    );
    Value::Object(m)
}

/// A host kept in brief in `iomark.cluster.hosts`.
fn brief_json(b: &HostBrief) -> Value {
    let warnings: Vec<Value> = b
        .warnings
        .iter()
        .map(|(k, j, m)| json!({"kind": k, "job": j, "message": m}))
        .collect();
    let errors: Vec<Value> = b
        .jobs
        .iter()
        .filter(|j| j.error != 0)
        .map(|j| {
            json!({
                "job": j.job,
                "clone": j.error_clone,
                "error": j.error,
                "message": j.error_msg,
            })
        })
        .collect();
    let mut m = Map::new();
    m.insert("hostname".into(), json!(b.hostname));
    m.insert("ranks".into(), json!(b.ranks));
    m.insert("pid".into(), json!(b.pid));
    m.insert("warnings".into(), Value::Array(warnings));
    m.insert("phases".into(), hosts::phases_json(b));
    m.insert("errors".into(), Value::Array(errors));
    if b.interrupted {
        m.insert("interrupted".into(), json!(true));
    }
    Value::Object(m)
}

/// The normal text: the summary over the hosts, each host's report after
/// `<hostname> ` (one line per phase and direction when the hosts are
/// kept in brief), then the "All clients" blocks and the run status over
/// all hosts.
pub fn normal_text(c: &ClusterReport) -> String {
    let mut out = String::new();
    let kb_base = c
        .all_clients
        .groups
        .first()
        .map(|g| g.kb_base)
        .unwrap_or(1024);
    if c.briefs.len() > 1 {
        out.push_str(&hosts::summary_text(&c.spreads, kb_base));
        out.push('\n');
    }
    if c.info.condensed {
        for b in &c.briefs {
            out.push_str(&hosts::host_text(b, kb_base));
        }
    }
    for h in &c.hosts {
        let body = normal::render(&h.report);
        let _ = write!(out, "<{}> ", h.hostname);
        if !body.starts_with('\n') {
            out.push('\n');
        }
        out.push_str(&body);
    }
    let all = &c.all_clients;
    for r in &all.jobs {
        out.push_str(&normal::all_clients_block(r, all));
    }
    for g in &all.groups {
        out.push('\n');
        out.push_str(&normal::group_block_of(g, "all clients"));
    }
    if !c.info.phases.is_empty() {
        out.push('\n');
    }
    for p in &c.info.phases {
        out.push_str(&phase_text(p, kb_base));
    }
    let missing = missing_text(&c.info);
    if !missing.is_empty() {
        out.push('\n');
        out.push_str(&missing);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A null job list run on the fake clock.
    fn run(text: &str) -> RunResult {
        crate::run::session::testing::run_text(text, Some(1000))
    }

    fn hosts(text: &str, names: &[&str]) -> Vec<Host> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| Host {
                hostname: n.to_string(),
                ranks: vec![i as u32],
                pid: 0,
                result: run(text),
            })
            .collect()
    }

    const TWO_GROUPS: &str = "[global]\nioengine=null\nsize=256k\nbs=4k\n\
                              [r]\nrw=randread\nnumjobs=2\n[w]\nrw=write\nstonewall\n";

    /// Hosts kept in brief give the run status over all clients that
    /// the same hosts kept whole give, the mixed line of
    /// `unified_rw_reporting=mixed` (and `both`) included.
    #[test]
    fn hosts_in_brief_give_the_run_status_of_whole_hosts() {
        for unified in ["mixed", "both", "none"] {
            let text = format!(
                "[global]\nioengine=null\nsize=256k\nbs=4k\nunified_rw_reporting={unified}\n\
                 [m]\nrw=randrw\n[w]\nrw=write\nsize=128k\n"
            );
            let h = hosts(&text, &["h1", "h2", "h3"]);
            let info = ClusterInfo {
                ranks: 3,
                ..Default::default()
            };
            let whole = build(&h, &info);
            let briefs: Vec<HostBrief> = h
                .iter()
                .map(|x| HostBrief {
                    jobs: x
                        .result
                        .jobs
                        .iter()
                        .map(|j| {
                            let d = &j.outcome.stats.dir;
                            JobBrief {
                                job: j.job.job_index as u32,
                                group: j.job.group,
                                clones: 1,
                                bytes: [0, 1, 2].map(|i| d[i].bytes),
                                runtime_ms: [0, 1, 2].map(|i| d[i].runtime_ms),
                                ..JobBrief::default()
                            }
                        })
                        .collect(),
                    ..brief_of(x)
                })
                .collect();
            let brief = build_with(
                &[],
                Some(&h[0]),
                briefs,
                &ClusterInfo {
                    condensed: true,
                    ..info
                },
            );
            let status = |c: &ClusterReport| -> String {
                c.all_clients
                    .groups
                    .iter()
                    .map(|g| normal::group_block_of(g, "all clients"))
                    .collect()
            };
            let (w, b) = (status(&whole), status(&brief));
            assert_eq!(b, w, "unified_rw_reporting={unified}");
            assert_eq!(
                w.matches("MIXED: bw=").count(),
                if unified == "none" { 0 } else { 1 },
                "{w}"
            );
        }
    }

    #[test]
    fn one_all_clients_entry_per_group_and_one_entry_per_job() {
        let h = hosts(TWO_GROUPS, &["h1", "h2", "h3"]);
        let c = build(
            &h,
            &ClusterInfo {
                ranks: 3,
                ..Default::default()
            },
        );
        assert_eq!(c.hosts.len(), 3);
        // Without group_reporting each host reports each clone.
        assert_eq!(c.hosts[0].report.jobs.len(), 3);
        let all = &c.all_clients.jobs;
        assert_eq!(all.len(), 2, "one per group");
        assert_eq!((all[0].groupid, all[0].nr_jobs), (0, 6));
        assert_eq!((all[1].groupid, all[1].nr_jobs), (1, 3));
        assert!(all.iter().all(|e| e.name == ALL_CLIENTS && e.pid == 0));
        assert_eq!(all[0].stats.dir[0].ios, 6 * 64);
        assert_eq!(all[1].stats.dir[1].ios, 3 * 64);
        let jobs = &c.jobs.jobs;
        assert_eq!(
            jobs.iter()
                .map(|j| (j.name.as_str(), j.nr_jobs))
                .collect::<Vec<_>>(),
            vec![("r", 6), ("w", 3)]
        );
        // The run status spans every host: 3 hosts × 2 clones × 256 KiB.
        let g0 = c.all_clients.group(0).unwrap();
        assert_eq!(g0.dir[0].io_bytes, 6 * 256 * 1024);
        assert_eq!(c.jobs.groups, c.all_clients.groups);
    }

    /// Hosts whose clones ran at different priorities: "All clients"
    /// keeps each priority's latencies, the sum of its hosts' exactly,
    /// and reports them as fio's `prios`.
    #[test]
    fn all_clients_keep_each_prioritys_latencies_exactly() {
        let mut h = hosts(TWO_GROUPS, &["h1", "h2", "h3"]);
        let prio = [0x4003u16, 0x6000, 0x4003];
        for (host, p) in h.iter_mut().zip(prio) {
            for jr in &mut host.result.jobs {
                jr.outcome.stats.ioprio = p;
            }
        }
        let c = build(
            &h,
            &ClusterInfo {
                ranks: 3,
                ..Default::default()
            },
        );
        let all = &c.all_clients.jobs[0];
        let reads = &all.stats.dir[0];
        assert_eq!(reads.prios.len(), 2);
        for (i, want) in [(0usize, 0x4003u16), (1, 0x6000)] {
            let mut sum = crate::stats::histogram::Histogram::new();
            for (host, p) in h.iter().zip(prio) {
                for jr in host.result.jobs.iter().filter(|j| j.job.group == 0) {
                    if p == want {
                        sum.merge(&jr.outcome.stats.dir[0].clat);
                    }
                }
            }
            assert_eq!(reads.prios[i].ioprio, want);
            assert_eq!(reads.prios[i].lat, sum, "priority {want:#x}");
        }
        assert_eq!(
            reads.prios[0].lat.count() + reads.prios[1].lat.count(),
            reads.ios
        );
        let doc = document(&c, false);
        let entry = doc["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["jobname"] == ALL_CLIENTS && e["groupid"] == 0)
            .unwrap();
        let p = entry["read"]["prios"].as_array().expect("prios");
        assert_eq!(
            (p[0]["prioclass"].as_u64(), p[0]["prio"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(
            p[1]["clat_ns"]["N"].as_u64(),
            Some(reads.prios[1].lat.count())
        );
        // Each host alone ran at one priority: no prios there.
        assert!(c.hosts[0]
            .report
            .jobs
            .iter()
            .all(|j| !j.stats.keeps_prios()));
    }

    #[test]
    fn a_failed_clone_names_its_host_and_the_others_still_merge() {
        let mut h = hosts(TWO_GROUPS, &["h1", "h2"]);
        let o = &mut h[1].result.jobs[2].outcome;
        o.error = libc::ENOSPC;
        o.error_msg = Some("No space left on device".into());
        let c = build(
            &h,
            &ClusterInfo {
                ranks: 2,
                ..Default::default()
            },
        );
        let w = &c.all_clients.jobs[1];
        assert_eq!(w.error, libc::ENOSPC);
        assert_eq!(w.error_msg.as_deref(), Some("h2: No space left on device"));
        assert_eq!(w.stats.dir[1].ios, 2 * 64, "both hosts' I/O counted");
        assert_eq!(c.jobs.jobs[1].error_msg, w.error_msg);
        assert_eq!(c.all_clients.jobs[0].error, 0);
        // The host's own report keeps its own words.
        assert_eq!(
            c.hosts[1].report.jobs[2].error_msg.as_deref(),
            Some("No space left on device")
        );
        let text = normal_text(&c);
        assert!(text.contains("All clients: (groupid=1, jobs=2): err=28 (h2: No space"));
    }

    #[test]
    fn group_reporting_hosts_report_their_group_and_all_clients_the_sum() {
        let text = "[global]\nioengine=null\nsize=256k\nbs=4k\ngroup_reporting\n\
                    description=a test\n[g]\nrw=randread\nnumjobs=2\n";
        let c = build(
            &hosts(text, &["a", "b"]),
            &ClusterInfo {
                ranks: 4,
                ..Default::default()
            },
        );
        for h in &c.hosts {
            assert_eq!(h.report.jobs.len(), 1);
            assert_eq!(h.report.jobs[0].nr_jobs, 2);
        }
        let all = &c.all_clients.jobs;
        assert_eq!((all.len(), all[0].nr_jobs), (1, 4));
        assert!(all[0].spec.description.is_empty(), "fio writes none");
        assert_eq!(c.jobs.jobs[0].spec.description, "a test");
        let s = render(
            &c,
            &Outputs {
                terse: Some(3),
                ..Outputs::default()
            },
        );
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 3, "{s}");
        assert!(lines[0].starts_with("3;iomark-") && lines[0].contains(";g;0;0;"));
        assert!(lines[2].contains(";All clients;0;0;"), "{}", lines[2]);
        assert!(!lines[2].contains("a test"));
        assert!(lines[0].ends_with(";a test"));
    }

    #[test]
    fn all_clients_json_entries_leave_out_what_fio_leaves_out() {
        let c = build(
            &hosts(TWO_GROUPS, &["h1", "h2"]),
            &ClusterInfo {
                ranks: 2,
                ..Default::default()
            },
        );
        let doc = document(&c, true);
        let cs = doc["client_stats"].as_array().unwrap();
        assert_eq!(cs.len(), 3 + 3 + 2);
        let host = &cs[0];
        assert_eq!(
            (host["hostname"].as_str(), host["port"].as_u64()),
            (Some("h1"), Some(0))
        );
        assert!(host.get("job options").is_some());
        let all = &cs[6];
        assert_eq!(all["jobname"], ALL_CLIENTS);
        assert_eq!(all["hostname"], "h2", "the last host's, as fio");
        for k in [
            "job options",
            "eta",
            "elapsed",
            "latency_depth",
            "latency_target",
            "latency_percentile",
            "latency_window",
        ] {
            assert!(all.get(k).is_none(), "{k}");
        }
        // Exact percentiles and json+ bins, which fio's All clients lacks.
        assert!(all["read"]["clat_ns"]["percentile"].is_object());
        assert_eq!(all["read"]["clat_ns"]["bins"]["1004"], 4 * 64);
        assert_eq!(doc["disk_util"], json!([]));
        assert_eq!(doc["iomark"]["cluster"]["ranks"], 2);
        assert_eq!(doc["iomark"]["cluster"]["hosts"][1]["hostname"], "h2");
        assert_eq!(doc["iomark"]["cluster"]["hosts"][1]["ranks"], json!([1]));
        assert!(doc["iomark"]["cluster"]["hosts"][0]["environment"]["host"].is_object());
    }

    #[test]
    fn no_host_or_a_host_without_jobs_still_renders() {
        let every = Outputs {
            terse: Some(5),
            json: true,
            json_plus: true,
            normal: true,
        };
        let c = build(
            &[],
            &ClusterInfo {
                ranks: 0,
                ..Default::default()
            },
        );
        let s = render(&c, &every);
        assert!(s.contains("\"client_stats\" : []"), "{s}");
        // A host whose rank ran nothing (it failed before its jobs).
        let mut h = hosts("[a]\nioengine=null\nsize=64k\n", &["h1", "h2"]);
        h[1].result.jobs.clear();
        let c = build(
            &h,
            &ClusterInfo {
                ranks: 2,
                ..Default::default()
            },
        );
        assert_eq!(c.all_clients.jobs[0].nr_jobs, 1);
        let s = render(&c, &every);
        assert!(s.contains("<h2> \n"), "{s}");
        let t = terse_lines(&c, 5);
        assert_eq!(t.lines().count(), 2, "{t}");
    }

    #[test]
    fn phases_show_their_start_skew_above_a_millisecond_and_missing_ranks() {
        let ms = 1_000_000;
        let phase = |skew_ns: u64| PhaseFigures {
            phase: 1,
            ranks: 3,
            first_done_ns: 1000 * ms,
            last_done_ns: 1500 * ms,
            start_skew_ns: skew_ns,
            all_running: Some(([0, 4096 * 100, 0], [0, 100, 0])),
            until_last: ([0, 4096 * 150, 0], [0, 150, 0]),
            ..PhaseFigures::default()
        };
        let info = |skew_ns: u64| ClusterInfo {
            ranks: 4,
            phases: vec![phase(skew_ns)],
            reported: 3,
            missing: vec![MissingRanks {
                ranks: vec![2],
                hostnames: vec!["h2".into()],
                reason: "sent nothing for 3 s during phase 1".into(),
            }],
            stopped: Some("rank 2 (host h2) sent nothing for 3 s during phase 1".into()),
            ..ClusterInfo::default()
        };
        let c = build(
            &hosts("[a]\nioengine=null\nsize=64k\n", &["h1"]),
            &info(2 * ms),
        );
        let text = normal_text(&c);
        assert!(text.contains("Phase 1 over 3 ranks: first done at 1.000s, last at 1.500s"));
        assert!(
            text.contains("  the ranks started 2.0 ms apart\n"),
            "{text}"
        );
        assert!(text.contains("while all ran: WRITE: bw=400KiB/s"), "{text}");
        assert!(
            text.contains("Missing: rank 2 (host h2): sent nothing for 3 s"),
            "{text}"
        );
        assert!(text.contains("Stopped early: rank 2 (host h2)"), "{text}");
        let c = build(
            &hosts("[a]\nioengine=null\nsize=64k\n", &["h1"]),
            &info(ms / 2),
        );
        assert!(!normal_text(&c).contains("started"));
        let doc = document(&c, false);
        let p = &doc["iomark"]["cluster"]["phases"][0];
        assert_eq!(p["start_skew_ns"], ms / 2);
        assert_eq!(p["all_running"]["runtime_ns"], 1000 * ms);
        assert_eq!(p["until_last_done"]["write"]["bw_bytes"], 4096 * 100);
        let cl = &doc["iomark"]["cluster"];
        assert_eq!(cl["ranks_reported"], 3);
        assert_eq!(cl["missing"][0]["ranks"], json!([2]));
        assert!(cl["stopped"].as_str().unwrap().starts_with("rank 2"));
    }

    #[test]
    fn host_disks_carry_the_host() {
        let mut h = hosts("[a]\nioengine=null\nsize=64k\n", &["h1", "h2"]);
        for (i, host) in h.iter_mut().enumerate() {
            host.result.disks = vec![crate::stats::disk::DiskReport {
                name: format!("vd{i}"),
                delta: Default::default(),
                util: 12.5,
                aggr: None,
            }];
        }
        let c = build(
            &h,
            &ClusterInfo {
                ranks: 2,
                ..Default::default()
            },
        );
        let doc = document(&c, false);
        let d = doc["disk_util"].as_array().unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0]["name"].as_str(), d[0]["hostname"].as_str()),
            (Some("vd0"), Some("h1"))
        );
        assert_eq!(
            (d[1]["name"].as_str(), d[1]["hostname"].as_str()),
            (Some("vd1"), Some("h2"))
        );
        assert_eq!(d[1]["port"], 0);
        let text = normal_text(&c);
        let h2 = text.find("<h2> ").unwrap();
        let vd1 = text.find("  vd1: ios=0/0").unwrap();
        let all = text.find("All clients:").unwrap();
        assert!(h2 < vd1 && vd1 < all, "{text}");
        // Terse: each host's line carries its own disk; All clients none.
        let t = terse_lines(&c, 3);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains(";vd0;") && !lines[0].contains(";vd1;"));
        assert!(lines[1].contains(";vd1;"));
        assert!(!lines[2].contains(";vd"));
    }
}
