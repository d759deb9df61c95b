//! `iomark history` (list, import, export, check, delete) and
//! `iomark trend`: the results history from the command line, their
//! requests and their runner (`cli::cmd::history` and `cli::cmd::trend`
//! parse into the requests). Printing only; the store is `history`.

use std::path::PathBuf;

use serde_json::json;

use super::trend::Metric;
use crate::history::{self, export, time, trend, Filter, Run, Store};
use crate::report::out::{fail, print, write_file};
use crate::results::units::BwUnit;

/// The options that select runs, shared by the history commands and
/// `trend`.
#[derive(Clone, Debug, Default)]
pub struct Select {
    pub filter: Filter,
    pub db: Option<PathBuf>,
}

/// `iomark history [list]`.
#[derive(Clone, Debug, Default)]
pub struct ListOpts {
    pub select: Select,
    pub json: bool,
    /// `--units`; None: each run in the unit it was recorded in.
    pub units: Option<BwUnit>,
}

/// `iomark history import FILE…`.
#[derive(Clone, Debug, Default)]
pub struct ImportOpts {
    pub select: Select,
    pub files: Vec<PathBuf>,
    /// The label of files that have none.
    pub label: Option<String>,
}

/// `iomark history export`.
#[derive(Clone, Debug)]
pub struct ExportOpts {
    pub select: Select,
    pub format: export::Format,
    pub output: Option<PathBuf>,
    /// `--units`; None: each run in the unit it was recorded in.
    pub units: Option<BwUnit>,
}

/// `iomark history check` and `delete ID…`.
#[derive(Clone, Debug, Default)]
pub struct StoreOpts {
    pub select: Select,
    /// `delete`: the runs.
    pub ids: Vec<i64>,
}

/// What `iomark trend` was asked.
#[derive(Clone, Debug)]
pub struct TrendOpts {
    pub select: Select,
    pub metric: Metric,
    /// Percent: the smallest change point.
    pub threshold: f64,
    pub html: Option<PathBuf>,
    pub json: bool,
    /// `--units`; None: the unit the test was recorded in.
    pub units: Option<BwUnit>,
}

impl Default for TrendOpts {
    fn default() -> Self {
        TrendOpts {
            select: Select::default(),
            metric: Metric::Figure(1),
            threshold: 5.0,
            html: None,
            json: false,
            units: None,
        }
    }
}

/// How a command uses the history.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Reads it (read-only, never changed); it must exist.
    Read,
    /// Writes it; `create`: also when it does not exist yet.
    Write { create: bool },
}

/// Whether no history was made at `path` yet: nothing there, or an
/// empty file (a link there is not this: it is refused when opened).
fn not_made(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).map_or(true, |m| m.is_file() && m.len() == 0)
}

/// Opens the history.
fn open(db: Option<&std::path::Path>, access: Access) -> Result<Store, String> {
    let path = history::db_path(db).map_err(|e| e.to_string())?;
    if access != (Access::Write { create: true }) && not_made(&path) {
        return Err(format!(
            "there is no results history at '{}' yet (quick, suite and sweep record their runs there)",
            path.display()
        ));
    }
    match access {
        Access::Read => Store::open_read(&path),
        Access::Write { .. } => Store::open(&path),
    }
    .map_err(|e| e.to_string())
}

/// `iomark history [list]`.
pub fn list(o: ListOpts) -> i32 {
    let ListOpts {
        select: sel,
        json: as_json,
        units,
    } = o;
    // A history not made yet lists as an empty one (same exit status and
    // JSON shape), with a note on standard error saying where it will be.
    let missing = history::db_path(sel.db.as_deref())
        .ok()
        .filter(|p| not_made(p));
    let runs = match missing {
        Some(p) => {
            crate::run::output::stderr_line(&format!(
                "iomark history: there is no results history at '{}' yet (quick, suite and \
                 sweep record their runs there)",
                p.display()
            ));
            Vec::new()
        }
        None => match open(sel.db.as_deref(), Access::Read)
            .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => return fail("history", &e),
        },
    };
    if as_json {
        let v: Vec<serde_json::Value> = runs.iter().map(|r| run_json(r, units)).collect();
        return print(
            "history",
            &crate::report::json::to_string(&json!({"runs": v})),
        );
    }
    print(
        "history",
        &list_text(&runs, sel.filter.test.is_some(), units),
    )
}

fn run_json(r: &Run, units: Option<BwUnit>) -> serde_json::Value {
    let unit = units.unwrap_or_else(|| r.recorded_unit());
    json!({
        "id": r.id,
        "time": time::iso_utc(r.time),
        "timestamp": r.time,
        "label": r.label,
        "kind": r.kind,
        "title": r.title,
        "host": r.host,
        "kernel": r.kernel,
        "tool": r.tool,
        "version": r.version,
        "target": {
            "path": r.target.path, "device": r.target.device, "model": r.target.model,
            "serial": r.target.serial, "firmware": r.target.firmware,
            "fs_type": r.target.fs_type, "mount_options": r.target.mount_options,
        },
        "jobfile_digest": r.jobfile_digest,
        "source": r.source,
        "tests": r.tests.iter().map(|t| json!({
            "key": t.key, "name": t.name, "dir": t.dir,
            "bw_bytes": t.value.bw_bytes.is_finite().then_some(t.value.bw_bytes),
            "bw": t.value.bw_bytes.is_finite().then(|| t.value.bw_bytes / unit.bytes()),
            "bw_unit": unit.name(),
            "iops": t.value.iops.is_finite().then_some(t.value.iops),
            "lat_mean_ns": t.value.lat_mean_ns.is_finite().then_some(t.value.lat_mean_ns),
            "lat_p99_ns": t.value.lat_p99_ns.is_finite().then_some(t.value.lat_p99_ns),
            "passes": t.passes.len(),
        })).collect::<Vec<_>>(),
    })
}

fn list_text(runs: &[Run], with_tests: bool, units: Option<BwUnit>) -> String {
    use crate::results::units as table;
    if runs.is_empty() {
        return "no run in the history matches\n".into();
    }
    // Names as read back from the history, shown escaped: one line a run.
    let shown = |v: &str| crate::job::error::printable(v).into_owned();
    let lw = runs
        .iter()
        .map(|r| shown(r.label.as_deref().unwrap_or("-")).chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 16);
    let dw = runs
        .iter()
        .map(|r| shown(&r.device_shown()).chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 26);
    let mut s = format!(
        "{:>5}  {:<16}  {:<lw$}  {:<5}  {:<10}  {:<dw$}  tests\n",
        "run", "time", "label", "kind", "host", "device"
    );
    let cut = |v: &str, n: usize| -> String {
        let v = shown(v);
        if v.chars().count() <= n {
            v
        } else {
            let mut t: String = v.chars().take(n - 1).collect();
            t.push('…');
            t
        }
    };
    for r in runs {
        s.push_str(&format!(
            "{:>5}  {:<16}  {:<lw$}  {:<5}  {:<10}  {:<dw$}  {}\n",
            format!("#{}", r.id.unwrap_or(0)),
            time::short_local(r.time),
            cut(r.label.as_deref().unwrap_or("-"), lw),
            cut(&r.kind, 5),
            cut(&r.host, 10),
            cut(&r.device_shown(), dw),
            r.tests.len()
        ));
        if with_tests {
            let unit = units.unwrap_or_else(|| r.recorded_unit());
            for t in &r.tests {
                s.push_str(&format!(
                    "         {:<30} {:>9} {:<5} {:>9} IOPS  p99 {}\n",
                    cut(&format!("{} {}", t.name, t.dir), 30),
                    unit.text(t.value.bw_bytes),
                    unit.name(),
                    table::iops(t.value.iops),
                    table::latency(t.value.lat_p99_ns)
                ));
            }
        }
    }
    s.push_str(&format!("{} run(s)\n", runs.len()));
    s
}

/// `iomark history import FILE…`.
pub fn import(o: ImportOpts) -> i32 {
    let ImportOpts {
        select: sel,
        files,
        label,
    } = o;
    // Every file is read before anything is written: one bad file, nothing imported.
    let mut runs = Vec::new();
    for path in files {
        match history::run::load(&path) {
            Ok(r) if r.tests.is_empty() => {
                let why = format!(
                    "'{}' holds no test result (no job with I/O to record); nothing imported",
                    path.display()
                );
                return fail("history import", &why);
            }
            Ok(mut r) => {
                r.source = std::fs::canonicalize(&path)
                    .unwrap_or(path)
                    .display()
                    .to_string();
                if r.label.is_none() {
                    r.label = label.clone();
                }
                runs.push(r);
            }
            Err(e) => return fail("history import", &e.to_string()),
        }
    }
    let mut store = match open(sel.db.as_deref(), Access::Write { create: true }) {
        Ok(s) => s,
        Err(e) => return fail("history import", &e),
    };
    let mut out = String::new();
    for r in &runs {
        match store.record(r) {
            Ok(rec) if rec.new => out.push_str(&format!(
                "#{}  {}  ({} tests)\n",
                rec.id,
                crate::job::error::printable(&r.source),
                r.tests.len()
            )),
            Ok(rec) => out.push_str(&format!(
                "#{}  {}  (already in the history)\n",
                rec.id,
                crate::job::error::printable(&r.source)
            )),
            Err(e) => return fail("history import", &e.to_string()),
        }
    }
    out.push_str(&format!(
        "{} file(s) in {}\n",
        runs.len(),
        crate::job::error::printable(&store.path().display().to_string())
    ));
    print("history import", &out)
}

/// `iomark history export`.
pub fn export(o: ExportOpts) -> i32 {
    let ExportOpts {
        select: sel,
        format,
        output,
        units,
    } = o;
    let runs = match open(sel.db.as_deref(), Access::Read)
        .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => return fail("history export", &e),
    };
    // On a terminal, names read back from the history are shown escaped
    // (into a file or a pipe they go as they are, in the format's quoting).
    let to_terminal = output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let runs = if to_terminal {
        runs.iter().map(printable_run).collect()
    } else {
        runs
    };
    let text = export::render(&runs, format, units);
    match output {
        Some(p) => match write_file(&p, &text) {
            Ok(()) => 0,
            Err(e) => fail("history export", &e),
        },
        None => print("history export", &text),
    }
}

/// `r` with every text read back from the history shown escaped (see
/// `job::error::printable`), for a terminal.
fn printable_run(r: &Run) -> Run {
    let p = |v: &String| crate::job::error::printable(v).into_owned();
    let mut r = r.clone();
    for v in [
        &mut r.kind,
        &mut r.title,
        &mut r.host,
        &mut r.kernel,
        &mut r.tool,
        &mut r.version,
        &mut r.target.path,
        &mut r.target.device,
        &mut r.target.model,
        &mut r.target.serial,
        &mut r.target.firmware,
        &mut r.target.fs_type,
        &mut r.target.mount_options,
    ] {
        *v = p(v);
    }
    r.label = r.label.as_ref().map(p);
    for t in &mut r.tests {
        t.key = p(&t.key);
        t.name = p(&t.name);
        t.dir = p(&t.dir);
        t.settings = t.settings.iter().map(|(k, v)| (p(k), p(v))).collect();
    }
    r
}

/// `iomark history check`.
pub fn check(o: StoreOpts) -> i32 {
    let sel = o.select;
    let store = match open(sel.db.as_deref(), Access::Read) {
        Ok(s) => s,
        Err(e) => return fail("history check", &e),
    };
    let found = store
        .check()
        .and_then(|p| Ok((p, store.count()?, store.version()?)));
    match found {
        Ok((p, n, v)) if p.is_empty() => print(
            "history check",
            &format!(
                "{}: ok ({n} runs, schema version {v})\n",
                crate::job::error::printable(&store.path().display().to_string())
            ),
        ),
        Ok((p, _, _)) => fail(
            "history check",
            &format!("{}: {}", store.path().display(), p.join("; ")),
        ),
        Err(e) => fail("history check", &e.to_string()),
    }
}

/// `iomark history delete ID…`.
pub fn delete(o: StoreOpts) -> i32 {
    let StoreOpts { select: sel, ids } = o;
    let mut store = match open(sel.db.as_deref(), Access::Write { create: false }) {
        Ok(s) => s,
        Err(e) => return fail("history delete", &e),
    };
    match store.delete(&ids) {
        Ok(n) if n == ids.len() => print("history delete", &format!("{n} run(s) deleted\n")),
        Ok(n) => fail(
            "history delete",
            &format!(
                "{n} of {} run(s) deleted: the others are not in the history",
                ids.len()
            ),
        ),
        Err(e) => fail("history delete", &e.to_string()),
    }
}

/// What `trend` without `--test` says: the tests it could draw.
fn tests_to_name(runs: &[Run]) -> String {
    let mut keys: Vec<&str> = Vec::new();
    for t in runs.iter().flat_map(|r| &r.tests) {
        if !keys.contains(&t.key.as_str()) {
            keys.push(&t.key);
        }
    }
    const SHOWN: usize = 24;
    match keys.len() {
        0 => "name the test with --test (the history has no test yet)".into(),
        n if n <= SHOWN => format!("name the test with --test; the history has {n}: {}", keys.join(", ")),
        n => format!(
            "name the test with --test; the history has {n}: {}, … ({} more: iomark history --test TEXT)",
            keys[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

/// `iomark trend`.
pub fn trend(o: TrendOpts) -> i32 {
    let TrendOpts {
        select: sel,
        metric,
        threshold,
        html,
        json: as_json,
        units,
    } = o;
    let Some(want) = sel.filter.test.clone() else {
        let why = open(sel.db.as_deref(), Access::Read)
            .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
            .map_or_else(|e| e, |runs| tests_to_name(&runs));
        return fail("trend", &why);
    };
    let runs = match open(sel.db.as_deref(), Access::Read)
        .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => return fail("trend", &e),
    };
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in &runs {
        for t in &r.tests {
            if !keys.iter().any(|(k, _)| *k == t.key) {
                keys.push((t.key.clone(), format!("{} {}", t.name, t.dir)));
            }
        }
    }
    let (key, name) = match keys.as_slice() {
        [] => {
            return fail(
                "trend",
                &format!("no run in the history has a test matching '{want}'"),
            )
        }
        [one] => one.clone(),
        many => match many
            .iter()
            .find(|(k, n)| k.eq_ignore_ascii_case(&want) || n.eq_ignore_ascii_case(&want))
        {
            Some(one) => one.clone(),
            None => {
                let list: Vec<&str> = many.iter().map(|(k, _)| k.as_str()).collect();
                return fail(
                    "trend",
                    &format!("'{want}' matches {} tests: {}", many.len(), list.join(", ")),
                );
            }
        },
    };
    // Bandwidth in the unit the test was recorded in (MB/s for
    // CrystalDiskMark-style tests), unless --units.
    let metric = metric.in_unit(units.unwrap_or_else(|| {
        BwUnit::of_tests(
            runs.iter()
                .flat_map(|r| &r.tests)
                .filter(|t| t.key == key)
                .map(|t| t.name.as_str()),
        )
    }));
    let all = trend::series(&runs, &key, &metric, threshold);
    if all.is_empty() {
        return fail(
            "trend",
            &format!("no run has a measured {} for {key}", metric.title()),
        );
    }
    let title = format!("{name} ({key})");
    let method = format!(
        "Change points: binary segmentation; a split counts when the {}% Welch interval of the \
         change of the geometric means lies wholly beyond ±{threshold}%.",
        (1.0 - trend::CHANGE_ALPHA) * 100.0
    );
    if let Some(h) = &html {
        if let Err(e) = write_file(h, &trend::html(&title, &metric, &all, &method)) {
            return fail("trend", &e);
        }
    }
    if as_json {
        let v = json!({
            "test": key, "name": name, "metric": metric.title(), "unit": metric.unit(),
            "series": all.iter().map(|s| json!({
                "device": s.device,
                "runs": s.points.iter().map(|p| json!({
                    "id": p.id, "time": time::iso_utc(p.time), "label": p.label,
                    "value": p.value, "passes_min": p.range.map(|r| r.0), "passes_max": p.range.map(|r| r.1),
                })).collect::<Vec<_>>(),
                "change_points": s.changes.iter().map(|c| json!({
                    "before_run": s.points[c.index].id,
                    "change_pct": c.interval.change * 100.0,
                    "interval_pct": [c.interval.lo * 100.0, c.interval.hi * 100.0],
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        return print("trend", &crate::report::json::to_string(&v));
    }
    let mut text = trend::text(&title, &metric, &all);
    if let Some(h) = &html {
        text.push_str(&format!("\nHTML chart: {}\n", h.display()));
    }
    print("trend", &text)
}
