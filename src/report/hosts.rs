//! Each host of a run over many hosts in brief, and the summary a
//! cluster operator reads first.
//!
//! - **A host in brief** ([`HostBrief`]): per phase and direction its
//!   I/Os, bytes, run time and completion latency (min, max, mean and the
//!   percentiles of [`PERCENTILES`], taken from the host's merged
//!   histogram: exact), and per job section its bytes and run time (for
//!   the run status) and its first error. A host made brief by the rank
//!   that sends it on keeps nothing else (no histogram, timeline or
//!   environment), so rank 0 holds a few hundred bytes per host: past
//!   `--mpi-host-detail` hosts every host is kept this way (its figures
//!   also merged, exactly, into the "All clients" entries on the way).
//! - **The summary** ([`spreads`]): per phase and direction, the slowest
//!   and the fastest host (by bandwidth) with their bandwidth, IOPS and
//!   99th percentile completion latency, and the spread over the hosts
//!   (min, median, max of each; the median of an even number of hosts is
//!   the lower middle one, a host's own figure).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::fmt::Write;

use crate::run::worker::Outcome;
use crate::stats::histogram::Histogram;

/// The percentiles a host in brief keeps (of its completion latency).
pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// The index of the 99th in [`PERCENTILES`].
const P99: usize = 2;

/// One direction of a host's phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirBrief {
    pub ios: u64,
    pub bytes: u64,
    /// The longest of the host's jobs in the phase (ms).
    pub runtime_ms: u64,
    pub clat_min_ns: u64,
    pub clat_max_ns: u64,
    /// The number and sum of the latencies (their mean, exactly).
    pub clat_n: u64,
    pub clat_sum_ns: u128,
    /// At [`PERCENTILES`] (empty without I/O).
    pub clat_pct_ns: Vec<u64>,
}

impl DirBrief {
    /// Bytes per second over its run time.
    pub fn bw(&self) -> u64 {
        if self.runtime_ms == 0 {
            0
        } else {
            (self.bytes as u128 * 1000 / self.runtime_ms as u128) as u64
        }
    }

    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }

    pub fn clat_mean_ns(&self) -> f64 {
        if self.clat_n == 0 {
            0.0
        } else {
            self.clat_sum_ns as f64 / self.clat_n as f64
        }
    }

    pub fn p99(&self) -> u64 {
        self.clat_pct_ns.get(P99).copied().unwrap_or(0)
    }
}

/// A host's jobs of one stonewall phase, merged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseBrief {
    /// 1 for the first phase.
    pub phase: u32,
    pub dirs: [DirBrief; 3],
}

impl PhaseBrief {
    /// Phase `phase` (from 1) of one host from its jobs' outcomes there:
    /// counters summed, run time the longest, latency histograms merged
    /// bucket by bucket before the percentiles are taken.
    pub fn of<'a>(phase: u32, outcomes: impl IntoIterator<Item = &'a Outcome>) -> PhaseBrief {
        let mut dirs: [DirBrief; 3] = Default::default();
        let mut lat = [Histogram::empty(), Histogram::empty(), Histogram::empty()];
        for o in outcomes {
            for (d, b) in dirs.iter_mut().enumerate() {
                let s = &o.stats.dir[d];
                b.ios += s.ios;
                b.bytes += s.bytes;
                b.runtime_ms = b.runtime_ms.max(s.runtime_ms);
                if s.clat.count() > 0 {
                    lat[d].merge(&s.clat);
                }
            }
        }
        for (b, h) in dirs.iter_mut().zip(&lat) {
            if h.count() == 0 {
                continue;
            }
            b.clat_min_ns = h.summary.min;
            b.clat_max_ns = h.summary.max;
            (b.clat_n, b.clat_sum_ns) = (h.summary.n, h.summary.sum);
            b.clat_pct_ns = h.percentiles(&PERCENTILES);
        }
        PhaseBrief { phase, dirs }
    }
}

/// A job section's share of a host: what the run status needs, and its
/// first error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobBrief {
    pub job: u32,
    pub group: u32,
    pub clones: u32,
    pub bytes: [u64; 3],
    pub runtime_ms: [u64; 3],
    /// The error of the lowest failing clone (0: none), that clone and
    /// its message.
    pub error: i32,
    pub error_clone: u32,
    pub error_msg: Option<String>,
}

/// A host in brief.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostBrief {
    /// The host's index in the run (its name filled in by rank 0).
    pub host: u32,
    pub hostname: String,
    /// Its ranks, ascending.
    pub ranks: Vec<u32>,
    pub pid: u32,
    pub interrupted: bool,
    /// Its lowest rank's warnings (kind, job, message).
    pub warnings: Vec<(String, String, String)>,
    pub phases: Vec<PhaseBrief>,
    pub jobs: Vec<JobBrief>,
}

/// `0-3,7`: ranks as ranges.
pub fn ranks_text(ranks: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j == i {
            let _ = write!(out, "{}", ranks[i]);
        } else {
            let _ = write!(out, "{}-{}", ranks[i], ranks[j]);
        }
        i = j + 1;
    }
    out
}

/// One host's figures in a phase and direction, as the summary names it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFigure {
    pub hostname: String,
    pub ranks: Vec<u32>,
    pub bw: u64,
    pub iops: f64,
    pub p99_ns: u64,
}

/// The spread of one phase and direction over the hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub phase: u32,
    /// 0 read, 1 write, 2 trim.
    pub dir: usize,
    pub hosts: usize,
    pub slowest: HostFigure,
    pub fastest: HostFigure,
    /// Min, median, max over the hosts.
    pub bw: [u64; 3],
    pub iops: [f64; 3],
    pub p99_ns: [u64; 3],
}

/// Min, median (the lower middle one), max of `v` (not empty).
fn spread_of<T: Copy + PartialOrd>(mut v: Vec<T>) -> [T; 3] {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    [v[0], v[(v.len() - 1) / 2], v[v.len() - 1]]
}

/// The summary over `hosts`: one spread per phase and direction that did
/// I/O on any host. Every host that ran the phase counts (one whose
/// direction did nothing there, with 0).
pub fn spreads(hosts: &[HostBrief]) -> Vec<Spread> {
    let mut phases: Vec<u32> = hosts
        .iter()
        .flat_map(|h| h.phases.iter().map(|p| p.phase))
        .collect();
    phases.sort_unstable();
    phases.dedup();
    let mut out = Vec::new();
    for phase in phases {
        for dir in 0..3 {
            let figs: Vec<HostFigure> = hosts
                .iter()
                .filter_map(|h| {
                    let p = h.phases.iter().find(|p| p.phase == phase)?;
                    let d = &p.dirs[dir];
                    Some(HostFigure {
                        hostname: h.hostname.clone(),
                        ranks: h.ranks.clone(),
                        bw: d.bw(),
                        iops: d.iops(),
                        p99_ns: d.p99(),
                    })
                })
                .collect();
            let any = hosts
                .iter()
                .flat_map(|h| h.phases.iter().filter(|p| p.phase == phase))
                .any(|p| p.dirs[dir].ios > 0);
            if figs.is_empty() || !any {
                continue;
            }
            // Slowest: the lowest bandwidth (the first such host in host
            // order); fastest: the highest.
            let slow = figs
                .iter()
                .enumerate()
                .min_by_key(|(i, f)| (f.bw, *i))
                .map(|(i, _)| i)
                .unwrap_or(0);
            let fast = figs
                .iter()
                .enumerate()
                .max_by_key(|(i, f)| (f.bw, std::cmp::Reverse(*i)))
                .map(|(i, _)| i)
                .unwrap_or(0);
            out.push(Spread {
                phase,
                dir,
                hosts: figs.len(),
                bw: spread_of(figs.iter().map(|f| f.bw).collect()),
                iops: spread_of(figs.iter().map(|f| f.iops).collect()),
                p99_ns: spread_of(figs.iter().map(|f| f.p99_ns).collect()),
                slowest: figs[slow].clone(),
                fastest: figs[fast].clone(),
            });
        }
    }
    out
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// A latency in the unit that suits it: `812us`, `1.25ms`, `2.00s`.
pub fn lat_text(ns: u64) -> String {
    let v = ns as f64;
    if v >= 1e9 {
        format!("{:.2}s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}us", v / 1e3)
    } else {
        format!("{ns}ns")
    }
}

fn figure_text(f: &HostFigure, kb_base: u64) -> String {
    format!(
        "{} (rank{} {}): bw={}, iops={}, p99={}",
        f.hostname,
        if f.ranks.len() == 1 { "" } else { "s" },
        ranks_text(&f.ranks),
        super::fmt::bw_pair(f.bw, kb_base),
        super::fmt::num2str(f.iops, 4, 1000, ""),
        lat_text(f.p99_ns)
    )
}

/// The summary lines:
///
/// ```text
/// Hosts, phase 1 read (3 hosts):
///   slowest: c (ranks 4-5): bw=…, iops=…, p99=…
///   fastest: a (ranks 0-1): bw=…, iops=…, p99=…
///   min/median/max: bw=… / … / …, iops=… / … / …, p99=… / … / …
/// ```
pub fn summary_text(s: &[Spread], kb_base: u64) -> String {
    let mut out = String::new();
    for p in s {
        let _ = writeln!(
            out,
            "Hosts, phase {} {} ({} host{}):",
            p.phase,
            DIRS[p.dir],
            p.hosts,
            if p.hosts == 1 { "" } else { "s" }
        );
        let _ = writeln!(out, "  slowest: {}", figure_text(&p.slowest, kb_base));
        let _ = writeln!(out, "  fastest: {}", figure_text(&p.fastest, kb_base));
        let bw: Vec<String> =
            p.bw.iter()
                .map(|b| super::fmt::bw_pair(*b, kb_base))
                .collect();
        let iops: Vec<String> = p
            .iops
            .iter()
            .map(|v| super::fmt::num2str(*v, 4, 1000, ""))
            .collect();
        let lat: Vec<String> = p.p99_ns.iter().map(|v| lat_text(*v)).collect();
        let _ = writeln!(
            out,
            "  min/median/max: bw={}, iops={}, p99={}",
            bw.join(" / "),
            iops.join(" / "),
            lat.join(" / ")
        );
    }
    out
}

fn figure_json(f: &HostFigure) -> Value {
    json!({
        "hostname": f.hostname,
        "ranks": f.ranks,
        "bw_bytes": f.bw,
        "iops": f.iops,
        "clat_p99_ns": f.p99_ns,
    })
}

/// `iomark.cluster.summary`: one object per phase and direction.
pub fn summary_json(s: &[Spread]) -> Value {
    let three = |v: [Value; 3]| {
        let [a, b, c] = v;
        json!({"min": a, "median": b, "max": c})
    };
    Value::Array(
        s.iter()
            .map(|p| {
                json!({
                    "phase": p.phase,
                    "direction": DIRS[p.dir],
                    "hosts": p.hosts,
                    "slowest": figure_json(&p.slowest),
                    "fastest": figure_json(&p.fastest),
                    "bw_bytes": three(p.bw.map(|v| json!(v))),
                    "iops": three(p.iops.map(|v| json!(v))),
                    "clat_p99_ns": three(p.p99_ns.map(|v| json!(v))),
                })
            })
            .collect(),
    )
}

/// The HTML section of a run's `iomark.cluster.summary` (`v`): one
/// table row per phase and direction, the slowest and fastest host and
/// the spread over the hosts.
pub fn summary_html(v: &Value, name: &str) -> String {
    let rows: Vec<Vec<String>> = v
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let u = |x: &Value| x.as_u64().unwrap_or(0);
            let f = |x: &Value| x.as_f64().unwrap_or(0.0);
            let who = |h: &Value| {
                let ranks: Vec<u32> = h["ranks"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|r| r.as_u64())
                            .map(|r| r as u32)
                            .collect()
                    })
                    .unwrap_or_default();
                format!(
                    "{} (ranks {}): {}, {} IOPS, p99 {}",
                    h["hostname"].as_str().unwrap_or(""),
                    ranks_text(&ranks),
                    super::html::bytes_text(u(&h["bw_bytes"])) + "/s",
                    super::fmt::num2str(f(&h["iops"]), 4, 1000, ""),
                    lat_text(u(&h["clat_p99_ns"]))
                )
            };
            let three = |k: &str, text: &dyn Fn(&Value) -> String| {
                ["min", "median", "max"]
                    .iter()
                    .map(|m| text(&p[k][*m]))
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            vec![
                format!(
                    "{} {}",
                    u(&p["phase"]),
                    p["direction"].as_str().unwrap_or("")
                ),
                u(&p["hosts"]).to_string(),
                who(&p["slowest"]),
                who(&p["fastest"]),
                three("bw_bytes", &|x| super::html::bytes_text(u(x)) + "/s"),
                three("iops", &|x| super::fmt::num2str(f(x), 4, 1000, "")),
                three("clat_p99_ns", &|x| lat_text(u(x))),
            ]
        })
        .collect();
    let mut b = format!(
        "<section class=\"hosts-summary\"><h2>Hosts — {}</h2>",
        super::svg::esc(name)
    );
    b.push_str(&super::html::table(
        &[
            "phase",
            "hosts",
            "slowest host",
            "fastest host",
            "bandwidth min / median / max",
            "IOPS min / median / max",
            "p99 completion latency min / median / max",
        ],
        &rows,
        1,
    ));
    b.push_str("</section>");
    b
}

/// A host's phases in JSON: per direction with I/O, its counters, rates
/// and completion latency.
pub fn phases_json(h: &HostBrief) -> Value {
    Value::Array(
        h.phases
            .iter()
            .map(|p| {
                let mut m = Map::new();
                m.insert("phase".into(), json!(p.phase));
                for (d, name) in DIRS.iter().enumerate() {
                    let b = &p.dirs[d];
                    if b.ios == 0 {
                        continue;
                    }
                    let pct: Map<String, Value> = PERCENTILES
                        .iter()
                        .zip(&b.clat_pct_ns)
                        .map(|(p, v)| (format!("{p:.6}"), json!(v)))
                        .collect();
                    m.insert(
                        (*name).into(),
                        json!({
                            "io_bytes": b.bytes,
                            "total_ios": b.ios,
                            "runtime_ms": b.runtime_ms,
                            "bw_bytes": b.bw(),
                            "iops": b.iops(),
                            "clat_ns": {
                                "min": b.clat_min_ns,
                                "max": b.clat_max_ns,
                                "mean": b.clat_mean_ns(),
                                "percentile": pct,
                            },
                        }),
                    );
                }
                Value::Object(m)
            })
            .collect(),
    )
}

/// A host in brief in the normal text: one line per phase and direction,
/// then its errors.
///
/// `<b> ranks 2-3: phase 1 read: bw=…, iops=…, io=…, clat p50/p99/max=…`
pub fn host_text(h: &HostBrief, kb_base: u64) -> String {
    let mut out = String::new();
    let head = format!(
        "<{}> rank{} {}",
        h.hostname,
        if h.ranks.len() == 1 { "" } else { "s" },
        ranks_text(&h.ranks)
    );
    let mut any = false;
    for p in &h.phases {
        for (d, name) in DIRS.iter().enumerate() {
            let b = &p.dirs[d];
            if b.ios == 0 {
                continue;
            }
            any = true;
            let pct = |i: usize| b.clat_pct_ns.get(i).map_or(0, |v| *v);
            let _ = writeln!(
                out,
                "{head}: phase {} {name}: bw={}, iops={}, io={}, clat p50={}, p99={}, max={}",
                p.phase,
                super::fmt::bw_pair(b.bw(), kb_base),
                super::fmt::num2str(b.iops(), 4, 1000, ""),
                super::fmt::bytes_pair(b.bytes, kb_base),
                lat_text(pct(0)),
                lat_text(pct(P99)),
                lat_text(b.clat_max_ns)
            );
        }
    }
    if !any {
        let _ = writeln!(out, "{head}: no I/O");
    }
    for j in h.jobs.iter().filter(|j| j.error != 0) {
        let msg = j
            .error_msg
            .clone()
            .unwrap_or_else(|| super::normal::errno_text(j.error));
        let _ = writeln!(
            out,
            "{head}: job {} clone {}: err={} ({msg})",
            j.job, j.error_clone, j.error
        );
    }
    if h.interrupted {
        let _ = writeln!(out, "{head}: stopped early");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::worker::Outcome;

    fn outcome(lat_ns: &[u64], runtime_ms: u64) -> Outcome {
        let mut o = Outcome::default();
        let d = &mut o.stats.dir[0];
        for v in lat_ns {
            d.clat.record(*v);
        }
        d.ios = lat_ns.len() as u64;
        d.bytes = d.ios * 4096;
        d.runtime_ms = runtime_ms;
        o
    }

    fn host(name: &str, rank: u32, lat: &[u64], ms: u64) -> HostBrief {
        HostBrief {
            hostname: name.into(),
            ranks: vec![rank],
            phases: vec![PhaseBrief::of(1, [&outcome(lat, ms)])],
            ..HostBrief::default()
        }
    }

    #[test]
    fn a_phase_merges_its_jobs_histograms_before_the_percentiles() {
        let a = outcome(&[1000; 99], 1000);
        let b = outcome(&[1_000_000], 2000);
        let p = PhaseBrief::of(1, [&a, &b]);
        let d = &p.dirs[0];
        assert_eq!((d.ios, d.bytes, d.runtime_ms), (100, 100 * 4096, 2000));
        let mut all = Histogram::new();
        all.merge(&a.stats.dir[0].clat);
        all.merge(&b.stats.dir[0].clat);
        assert_eq!(d.clat_pct_ns, all.percentiles(&PERCENTILES));
        assert_eq!((d.clat_min_ns, d.clat_max_ns), (1000, 1_000_000));
        assert_eq!(d.bw(), 100 * 4096 / 2);
        assert!(p.dirs[1].clat_pct_ns.is_empty());
    }

    #[test]
    fn the_summary_names_the_slowest_and_fastest_host_and_the_spread() {
        let hosts = vec![
            host("a", 0, &[1000; 100], 1000),
            host("b", 1, &[5000; 50], 1000),
            host("c", 2, &[2000; 200], 1000),
            host("d", 3, &[2000; 100], 1000),
        ];
        let s = spreads(&hosts);
        assert_eq!(s.len(), 1, "reads of phase 1 only");
        let p = &s[0];
        assert_eq!((p.phase, p.dir, p.hosts), (1, 0, 4));
        assert_eq!(
            (p.slowest.hostname.as_str(), p.slowest.ranks.clone()),
            ("b", vec![1])
        );
        assert_eq!(p.fastest.hostname, "c");
        // 50, 100, 100, 200 I/Os of 4 KiB in 1 s: the lower middle one.
        assert_eq!(p.bw, [50 * 4096, 100 * 4096, 200 * 4096]);
        assert_eq!(p.iops, [50.0, 100.0, 200.0]);
        assert_eq!(p.slowest.p99_ns, hosts[1].phases[0].dirs[0].p99());
        let text = summary_text(&s, 1024);
        assert!(
            text.starts_with("Hosts, phase 1 read (4 hosts):\n  slowest: b (rank 1): bw=200KiB/s"),
            "{text}"
        );
        assert!(
            text.contains("  fastest: c (rank 2): bw=800KiB/s"),
            "{text}"
        );
        assert!(text.contains("  min/median/max: bw=200KiB/s (205kB/s) / 400KiB/s (410kB/s) / 800KiB/s (819kB/s), iops=50 / 100 / 200"), "{text}");
        let j = summary_json(&s);
        assert_eq!(j[0]["slowest"]["hostname"], "b");
        assert_eq!(j[0]["bw_bytes"]["median"], 100 * 4096);
        assert_eq!(j[0]["direction"], "read");
        let html = summary_html(&j, "run 1");
        assert!(html.contains("<h2>Hosts — run 1</h2>"), "{html}");
        assert!(
            html.contains("<td class=\"l\">1 read</td><td>4</td><td>b (ranks 1): 200 KiB/s"),
            "{html}"
        );
    }

    #[test]
    fn ranks_read_as_ranges() {
        assert_eq!(ranks_text(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(ranks_text(&[5]), "5");
        assert_eq!(ranks_text(&[]), "");
    }
}
