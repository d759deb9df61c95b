//! `iomark sweep`: run one test per combination of rw patterns, block
//! sizes, queue depths and job counts (the Cartesian product of the
//! lists given), each `--repeat` times, and show how bandwidth and IOPS
//! change with the swept value: a table, SVG charts and — for queue depth
//! and job count sweeps — the knee.
//!
//! **Knee**: along one series (all other parameters fixed), with T(x) the
//! median IOPS at swept value x, the knee is the smallest x with
//! T(x) ≥ 90 % × max T — read from the whole curve, so a late rise (IOPS
//! up 48 % between QD16 and QD64 after a flat step at QD32) moves it. When
//! only the last point reaches 90 % of the best, the series is "still
//! scaling" there and no knee is reported; none either with fewer than two
//! points or no I/O.

use std::path::Path;

use serde_json::{json, Value};

use super::presets::{self, Defaults, Render};
use super::runner::{SuiteOutcome, SuiteTest};
use super::table::BwUnit;
use super::{Bench, RunFlags};
use crate::job::value::parse_size;
use crate::report::sweep_charts::group;
pub use crate::report::sweep_charts::{sweep_charts, KNEE_RULE, KNEE_SHARE};
use crate::results::stats;

pub const DEFAULT_IODEPTHS: &str = "1,2,4,8,16,32,64,128,256";
pub const SIZE: u64 = 1 << 30;
pub const RUNTIME_US: u64 = 2_000_000;
pub const TEST_FILE: &str = "iomark-sweep.tmp";
/// The most combinations one sweep runs.
pub const MAX_POINTS: usize = 1000;

/// The patterns a sweep takes.
pub const RW: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
];

/// One swept combination.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub rw: String,
    pub bs: String,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub numjobs: u32,
}

impl Point {
    pub fn section(&self) -> String {
        format!(
            "{}-{}-qd{}-j{}",
            self.rw, self.bs, self.iodepth, self.numjobs
        )
    }

    pub fn label(&self) -> String {
        format!(
            "{} {} QD{} J{}",
            self.rw, self.bs, self.iodepth, self.numjobs
        )
    }
}

fn list(v: &str, opt: &str) -> Result<Vec<String>, String> {
    let items: Vec<String> = v
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(format!("--{opt}: give at least one value"));
    }
    Ok(items)
}

/// The swept lists, validated.
#[derive(Clone, Debug)]
pub struct Dims {
    pub rw: Vec<String>,
    pub bs: Vec<(String, u64)>,
    pub iodepth: Vec<u32>,
    pub numjobs: Vec<u32>,
}

impl Dims {
    pub fn parse(rw: &str, bs: &str, iodepth: &str, numjobs: &str) -> Result<Dims, String> {
        let rw = list(rw, "rw")?;
        if let Some(bad) = rw.iter().find(|r| !RW.contains(&r.as_str())) {
            return Err(format!("--rw: '{bad}' is not one of: {}", RW.join(", ")));
        }
        let bs = list(bs, "bs")?
            .into_iter()
            .map(|b| {
                let n = parse_size(&b, 1024).map_err(|e| format!("--bs: {e}"))?;
                if n == 0 || n % 512 != 0 {
                    return Err(format!("--bs: '{b}' is not a multiple of 512 bytes"));
                }
                Ok((b.to_lowercase(), n))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let nums = |v: &str, opt: &str, max: u32| -> Result<Vec<u32>, String> {
            list(v, opt)?
                .iter()
                .map(|x| match x.parse::<u32>() {
                    Ok(n) if n >= 1 && n <= max => Ok(n),
                    _ => Err(format!(
                        "--{opt}: '{x}' is not a whole number from 1 to {max}"
                    )),
                })
                .collect()
        };
        Ok(Dims {
            rw,
            bs,
            iodepth: nums(iodepth, "iodepth", 65536)?,
            numjobs: nums(numjobs, "numjobs", 1024)?,
        })
    }

    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for rw in &self.rw {
            for (bs, bytes) in &self.bs {
                for nj in &self.numjobs {
                    for qd in &self.iodepth {
                        out.push(Point {
                            rw: rw.clone(),
                            bs: bs.clone(),
                            bs_bytes: *bytes,
                            iodepth: *qd,
                            numjobs: *nj,
                        });
                    }
                }
            }
        }
        out
    }

    /// The dimension on the x axis: the numeric one with the most
    /// values (queue depth first on ties).
    pub fn x(&self) -> &'static str {
        let cands = [
            ("iodepth", self.iodepth.len()),
            ("numjobs", self.numjobs.len()),
            ("bs", self.bs.len()),
        ];
        cands
            .iter()
            .fold(
                ("iodepth", 0),
                |best, c| if c.1 > best.1 { *c } else { best },
            )
            .0
    }
}

fn x_of(p: &Point, x: &str) -> f64 {
    match x {
        "numjobs" => p.numjobs as f64,
        "bs" => p.bs_bytes as f64,
        _ => p.iodepth as f64,
    }
}

/// The parameters other than the swept one, naming a series.
fn series_of(p: &Point, x: &str, dir: &str) -> String {
    let mut parts = vec![p.rw.clone()];
    if x != "bs" {
        parts.push(format!("bs={}", p.bs));
    }
    if x != "iodepth" {
        parts.push(format!("iodepth={}", p.iodepth));
    }
    if x != "numjobs" {
        parts.push(format!("numjobs={}", p.numjobs));
    }
    if p.rw.contains("rw") || p.rw == "readwrite" {
        parts.push(dir.to_string());
    }
    parts.join(" ")
}

/// Where a series of (x, median IOPS), sorted by x, stops scaling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Knee {
    /// The smallest x reaching `KNEE_SHARE` of the best (`best` at
    /// `best_x`); `y` is its median IOPS.
    At {
        x: f64,
        y: f64,
        best_x: f64,
        best: f64,
    },
    /// Only the last point reaches it: more might still scale.
    StillScaling { last_x: f64 },
    /// Fewer than two points, or no I/O at all.
    None,
}

/// The knee of a series (see the module doc for the rule).
pub fn knee(points: &[(f64, f64)]) -> Knee {
    if points.len() < 2 {
        return Knee::None;
    }
    let (best_x, best) = points
        .iter()
        .copied()
        .filter(|p| p.1.is_finite())
        .fold((f64::NAN, 0.0), |b, p| if p.1 > b.1 { p } else { b });
    if best <= 0.0 {
        return Knee::None;
    }
    // A relative tolerance so that exactly 90 % counts as reaching it.
    let bar = best * KNEE_SHARE * (1.0 - 1e-12);
    let Some(i) = points.iter().position(|p| p.1 >= bar) else {
        return Knee::None;
    };
    let (x, y) = points[i];
    if i + 1 == points.len() {
        return Knee::StillScaling { last_x: x };
    }
    Knee::At { x, y, best_x, best }
}

impl Knee {
    /// The knee's x, when there is one.
    pub fn x(&self) -> Option<f64> {
        match self {
            Knee::At { x, .. } => Some(*x),
            _ => None,
        }
    }

    /// The knee in words, `x` naming the swept option: "iodepth 64 (93%
    /// of the best median IOPS: 64,000 at iodepth 128)".
    pub fn note(&self, x_name: &str) -> String {
        match *self {
            Knee::None => "no knee (fewer than two points, or no I/O)".into(),
            Knee::StillScaling { last_x } => format!(
                "still scaling at {x_name} {last_x}: no smaller value reaches 90% of its IOPS"
            ),
            Knee::At {
                x, best_x, best, ..
            } if x == best_x => format!(
                "{x_name} {x} ({} IOPS, the best of the series)",
                thousands(best)
            ),
            Knee::At { x, y, best_x, best } => format!(
                "{x_name} {x} ({:.0}% of the best median IOPS: {} at {x_name} {best_x})",
                (y / best * 100.0).floor(),
                thousands(best)
            ),
        }
    }
}

/// A whole number with thousands separators: 64,000.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn med(v: &[f64]) -> Value {
    let s = stats::summarize(v);
    json!({"median": s.median, "min": s.min, "max": s.max, "n": s.n})
}

/// The "sweep" object of the results bundle.
pub fn sweep_object(dims: &Dims, points: &[Point], out: &SuiteOutcome) -> Value {
    let x = dims.x();
    let mut pts = Vec::new();
    for t in &out.tests {
        let Some(p) = points.iter().find(|p| p.section() == t.test.section) else {
            continue;
        };
        for d in &t.dirs {
            let get = |f: fn(&crate::results::dataset::Metrics) -> f64| -> Vec<f64> {
                d.passes.iter().map(f).filter(|v| v.is_finite()).collect()
            };
            pts.push(json!({
                "section": t.test.section,
                "rw": p.rw, "bs": p.bs, "bs_bytes": p.bs_bytes,
                "iodepth": p.iodepth, "numjobs": p.numjobs,
                "direction": d.dir,
                "series": series_of(p, x, &d.dir),
                "x": x_of(p, x),
                "bw_bytes": med(&get(|m| m.bw_bytes)),
                "iops": med(&get(|m| m.iops)),
                "lat_mean_ns": med(&get(|m| m.lat_mean_ns)),
                "lat_p99_ns": med(&get(|m| m.lat_p99_ns)),
            }));
        }
    }
    let mut knees = Vec::new();
    if x == "iodepth" || x == "numjobs" {
        for (name, series) in group(&pts) {
            let curve: Vec<(f64, f64)> = series
                .iter()
                .map(|p| {
                    (
                        p["x"].as_f64().unwrap_or(0.0),
                        p["iops"]["median"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect();
            let k = knee(&curve);
            let note = match k {
                Knee::None if curve.len() < 2 => "one point only: no knee".to_string(),
                _ => k.note(x),
            };
            let mut entry = json!({"series": name, "knee": k.x(), "note": note});
            if let Knee::At { best_x, best, .. } = k {
                entry["best"] = json!(best_x);
                entry["best_iops"] = json!(best);
            }
            knees.push(entry);
        }
    }
    json!({
        "x": x,
        "values": {
            "rw": dims.rw,
            "bs": dims.bs.iter().map(|b| b.0.clone()).collect::<Vec<_>>(),
            "iodepth": dims.iodepth,
            "numjobs": dims.numjobs,
        },
        "knee_rule": KNEE_RULE,
        "points": pts,
        "knees": knees,
    })
}

/// Runs `iomark sweep` as asked (parsed by `cli::cmd::sweep`).
pub fn main(opts: SweepOpts) -> i32 {
    let launch = match super::join("sweep", &opts.run) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let code = run(opts, &launch);
    launch.end(code)
}

/// `sweep` once the ranks (if any) have joined.
#[allow(clippy::too_many_lines)]
fn run(opts: SweepOpts, launch: &crate::launch::Launch) -> i32 {
    let SweepOpts {
        run: flags,
        rw,
        bs,
        iodepth: qd,
        numjobs: nj,
        dims,
        repeat,
        svg: svg_files,
        path,
    } = opts;
    let (flags, dims) = (&flags, &dims);
    let points = dims.points();
    let target = match super::agreed(
        "sweep",
        launch,
        "every rank to check PATH",
        super::target(path.as_deref(), flags, true, &[]),
    ) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut target = target;
    if target.engine.note.is_some() && dims.iodepth.iter().any(|q| *q > 1) {
        target.notes.push(
            "with psync every queue depth runs at depth 1: the queue depth sweep shows no scaling"
                .into(),
        );
    }
    let size = flags.size.unwrap_or(SIZE);
    let runtime = flags.runtime_us.unwrap_or(RUNTIME_US);
    let passes = repeat.or(flags.passes).unwrap_or(1);
    let warmup = flags.warmup_us.unwrap_or(0);
    let tests: Vec<(String, Vec<(String, String)>)> = points
        .iter()
        .map(|p| {
            (
                p.section(),
                vec![
                    ("rw".into(), p.rw.clone()),
                    ("bs".into(), p.bs.clone()),
                    ("iodepth".into(), p.iodepth.to_string()),
                    ("numjobs".into(), p.numjobs.to_string()),
                ],
            )
        })
        .collect();
    let head = format!(
        "; iomark sweep: rw={} bs={} iodepth={} numjobs={}\n\
         ; One section per combination, run one after another; `iomark sweep` runs\n\
         ; each {} time(s) and charts the medians. Runs unchanged under fio.\n",
        rw, bs, qd, nj, passes
    );
    let jobfile = presets::render_jobfile(
        &head,
        &Defaults {
            shared_file: Some(TEST_FILE),
            size: "1g",
            runtime_us: runtime,
            global: &[],
        },
        &tests,
        &Render {
            directory: target.directory.clone(),
            ioengine: target.engine.kind.name().to_string(),
            direct: target.direct,
            size: Some(presets::size_text(size)),
            runtime: Some(presets::time_text(runtime)),
            // Under MPI each rank its own file.
            file_name: launch.ranks().map(|_| launch.own_file(TEST_FILE)),
            comments: Vec::new(),
        },
    );
    if flags.print_jobfile {
        return super::print_on(launch, "sweep", &jobfile);
    }
    let suite_tests: Vec<SuiteTest> = points
        .iter()
        .map(|p| SuiteTest {
            section: p.section(),
            label: p.label(),
        })
        .collect();
    let settings = json!({
        "path": target.path.display().to_string(),
        "ioengine": target.engine.kind.name(),
        "direct": target.direct,
        "size_bytes": size,
        "runtime_us": runtime,
        "passes": passes,
        "warmup_us": warmup,
        "rw": rw, "bs": bs, "iodepth": qd, "numjobs": nj,
    });
    let dims2 = dims.clone();
    let points2 = points.clone();
    let finish =
        move |out: &SuiteOutcome, json_path: Option<&Path>, to: &mut super::BenchOut| -> Value {
            let sw = sweep_object(&dims2, &points2, out);
            if let Some(knees) = sw["knees"].as_array().filter(|k| !k.is_empty()) {
                let mut text = format!("\nKnee ({KNEE_RULE}):\n");
                for k in knees {
                    text.push_str(&format!(
                        "  {}: {}\n",
                        k["series"].as_str().unwrap_or(""),
                        k["note"].as_str().unwrap_or("")
                    ));
                }
                to.console.print(&text);
            }
            if let Some(p) = json_path.filter(|_| svg_files) {
                for (suffix, svg) in sweep_charts(&sw, BwUnit::Mib) {
                    let stem = p.with_extension("");
                    let path = std::path::PathBuf::from(format!("{}-{suffix}.svg", stem.display()));
                    to.file("Chart: ", &path, &svg);
                }
            }
            sw
        };
    let bench = Bench {
        kind: "sweep",
        title: format!("sweep of {} over {}", rw, dims.x()),
        jobfile,
        tests: suite_tests,
        passes,
        warmup_us: warmup,
        settings,
        target,
        sweep: Some(Box::new(finish)),
        launch,
    };
    super::run_bench(bench, flags)
}

/// What `iomark sweep` was asked: the lists as given (for the job file's
/// comment) and as checked (`dims`).
#[derive(Clone, Debug)]
pub struct SweepOpts {
    pub run: RunFlags,
    pub rw: String,
    pub bs: String,
    pub iodepth: String,
    pub numjobs: String,
    /// The lists, checked: every combination is one test.
    pub dims: Dims,
    /// `--repeat`: measured passes per point (as `--passes`).
    pub repeat: Option<u32>,
    /// `--svg`: the charts as SVG files too.
    pub svg: bool,
    pub path: Option<String>,
}

impl Default for SweepOpts {
    fn default() -> Self {
        let (rw, bs, iodepth, numjobs) = ("randread", "4k", DEFAULT_IODEPTHS, "1");
        SweepOpts {
            run: RunFlags::default(),
            rw: rw.into(),
            bs: bs.into(),
            iodepth: iodepth.into(),
            numjobs: numjobs.into(),
            dims: Dims::parse(rw, bs, iodepth, numjobs).expect("the defaults are valid"),
            repeat: None,
            svg: false,
            path: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_read_from_the_whole_curve() {
        // Flat from QD16 to QD32 (+7 %), then up 48 % at QD64: the first
        // step under 10 % would say QD16; 90 % of the best says QD64.
        let late = [
            (1.0, 10_000.0),
            (2.0, 19_000.0),
            (4.0, 34_000.0),
            (8.0, 39_000.0),
            (16.0, 43_000.0),
            (32.0, 46_000.0),
            (64.0, 63_640.0),
            (128.0, 64_000.0),
            (256.0, 63_000.0),
        ];
        let k = knee(&late);
        assert_eq!(k.x(), Some(64.0));
        assert_eq!(
            k.note("iodepth"),
            "iodepth 64 (99% of the best median IOPS: 64,000 at iodepth 128)"
        );
        // A curve that saturates early.
        let early = [
            (1.0, 100.0),
            (2.0, 190.0),
            (4.0, 360.0),
            (8.0, 380.0),
            (16.0, 390.0),
        ];
        assert_eq!(knee(&early).x(), Some(4.0));
        // Exactly 90 % of the best counts.
        assert_eq!(
            knee(&[(1.0, 90.0), (2.0, 100.0), (4.0, 95.0)]).x(),
            Some(1.0)
        );
        // A peak in the middle: the best is the knee.
        let peak = knee(&[(1.0, 10.0), (2.0, 100.0), (4.0, 60.0)]);
        assert_eq!(peak.x(), Some(2.0));
        assert!(peak.note("numjobs").contains("the best of the series"));
        // Only the last point is near the best: still scaling.
        let still = [(1.0, 100.0), (2.0, 200.0), (4.0, 400.0)];
        assert_eq!(knee(&still), Knee::StillScaling { last_x: 4.0 });
        assert!(knee(&still)
            .note("iodepth")
            .starts_with("still scaling at iodepth 4"));
        assert_eq!(knee(&[(1.0, 5.0)]), Knee::None);
        assert_eq!(knee(&[(1.0, 0.0), (2.0, 0.0)]), Knee::None);
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
    }

    #[test]
    fn dims_expand_to_every_combination() {
        let d = Dims::parse("randread,randwrite", "4k,64k", "1,4", "1").unwrap();
        let p = d.points();
        assert_eq!(p.len(), 8);
        assert_eq!(d.x(), "iodepth");
        assert_eq!(p[0].section(), "randread-4k-qd1-j1");
        assert_eq!(p[1].iodepth, 4);
        assert!(Dims::parse("randread", "3000", "1", "1").is_err());
        assert!(Dims::parse("sideways", "4k", "1", "1").is_err());
        assert!(Dims::parse("read", "4k", "0", "1").is_err());
        let b = Dims::parse("read", "4k,8k,64k", "1", "1").unwrap();
        assert_eq!(b.x(), "bs");
    }
}
