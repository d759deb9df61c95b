//! `iomark history` (list, import, export, check, delete) and
//! `iomark trend`: the results history from the command line. Parsing
//! and printing only; the store is `history`.

use std::ffi::OsString;
use std::path::PathBuf;

use serde_json::json;

use crate::history::{self, export, time, trend, Filter, Run, Store};
use crate::suite::{args, fail, print, write_file};

/// The options that select runs, shared by the history commands.
#[derive(Default)]
struct Select {
    filter: Filter,
    db: Option<PathBuf>,
}

/// The selection options' help rows.
const SELECT_HELP: &[(&str, &str)] = &[
    ("--label NAME", "runs with this label"),
    ("--host TEXT", "runs on a host whose name contains TEXT"),
    (
        "--device TEXT",
        "runs on a device whose name, model or serial contains TEXT",
    ),
    (
        "--test TEXT",
        "runs with a test whose key or name contains TEXT (and only those tests)",
    ),
    ("--kind KIND", "quick, suite, sweep or job"),
    (
        "--since DATE",
        "runs from DATE (YYYY-MM-DD[THH:MM], or an age: 30d, 12h)",
    ),
    ("--until DATE", "runs up to DATE"),
    ("--last N", "the latest N runs"),
    (
        "--history-db FILE",
        "the history (default: $IOMARK_HISTORY_DB, else $XDG_DATA_HOME/iomark/history.sqlite)",
    ),
];

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Takes a selection option; Ok(false) when `name` is not one.
fn select_option(s: &mut Select, name: &str, p: &mut lexopt::Parser) -> Result<bool, String> {
    let f = &mut s.filter;
    match name {
        "label" => f.label = Some(args::value(p, name)?),
        "host" => f.host = Some(args::value(p, name)?),
        "device" => f.device = Some(args::value(p, name)?),
        "test" => f.test = Some(args::value(p, name)?),
        "kind" => f.kind = Some(args::value(p, name)?),
        "since" => {
            f.since = Some(
                time::parse_date(&args::value(p, name)?, now(), false)
                    .map_err(|e| format!("--since: {e}"))?,
            )
        }
        "until" => {
            f.until = Some(
                time::parse_date(&args::value(p, name)?, now(), true)
                    .map_err(|e| format!("--until: {e}"))?,
            )
        }
        "last" => f.last = Some(args::parse_u32(&args::value(p, name)?, name, 1)? as usize),
        "history-db" => s.db = Some(args::value(p, name)?.into()),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Parses `argv`: selection options, then `extra` for the command's own.
fn parse(
    argv: Vec<OsString>,
    cmd: &str,
    extra: &mut dyn FnMut(&str, &mut lexopt::Parser) -> Result<bool, String>,
) -> Result<(Select, Vec<String>, bool), String> {
    use lexopt::Arg;
    let mut s = Select::default();
    let mut pos = Vec::new();
    let mut help = false;
    let mut p = lexopt::Parser::from_args(argv);
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let name = match arg {
            Arg::Short('h') | Arg::Long("help") => {
                help = true;
                continue;
            }
            Arg::Short('o') => "output".to_string(),
            Arg::Short(c) => {
                return Err(format!("unknown option '-{c}' (see iomark {cmd} --help)"))
            }
            Arg::Value(v) => {
                pos.push(
                    v.into_string()
                        .map_err(|_| "arguments must be valid UTF-8".to_string())?,
                );
                continue;
            }
            Arg::Long(name) => name.to_string(),
        };
        {
            {
                // The command's own options first (import's --label).
                if !extra(&name, &mut p)? && !select_option(&mut s, &name, &mut p)? {
                    return Err(format!(
                        "unknown option '--{name}' for iomark {cmd} (see iomark {cmd} --help)"
                    ));
                }
            }
        }
    }
    Ok((s, pos, help))
}

/// Opens the history; `create`: also when it does not exist yet.
fn open(db: Option<&std::path::Path>, create: bool) -> Result<Store, String> {
    let path = history::db_path(db).map_err(|e| e.to_string())?;
    if !create && !path.exists() {
        return Err(format!(
            "there is no results history at '{}' yet (quick, suite and sweep record their runs there)",
            path.display()
        ));
    }
    Store::open(&path).map_err(|e| e.to_string())
}

pub fn usage() -> String {
    use super::{help, text};
    let mut s = String::from(
        "Usage: iomark history [SELECTION] [--json]\n\
         \x20      iomark history import FILE… [--label NAME]\n\
         \x20      iomark history export --format csv|jsonl|influx [SELECTION] [-o FILE]\n\
         \x20      iomark history check | delete ID…\n\n",
    );
    s.push_str(&text::wrap(
        "The results history: quick, suite and sweep record every run (unless given \
         the flag no-history), job runs when given a label or the flag history. Each run keeps its label, time, host, \
         target (device model, serial, firmware, filesystem, mount options, kernel), tool and \
         version, job file and its digest, and every test's figures with each pass's and the \
         merged latency histogram. The list shows the runs oldest first. import adds result \
         files (iomark quick/suite/sweep results, iomark or fio JSON and json+), export writes \
         one line per run and test (CSV, JSON lines, or InfluxDB line protocol for Grafana), \
         check verifies the database, delete removes runs.",
        0,
        text::WIDTH,
    ));
    s.push_str("\nSelection:\n");
    s.push_str(&text::options(SELECT_HELP, args::OPTION_COLUMN + 2));
    s.push_str("\nOptions:\n");
    s.push_str(&text::options(
        &[
            ("--json", "the list as JSON"),
            ("--format FMT", "export: csv, jsonl or influx"),
            (
                "-o, --output FILE",
                "export: write to FILE instead of standard output",
            ),
            ("--label NAME", "import: the label of files that have none"),
            ("-h, --help", "this help"),
        ],
        args::OPTION_COLUMN + 2,
    ));
    s.push_str("\nExamples:\n");
    for (cmd, what) in [
        (
            "iomark history --device nvme --since 30d",
            "the last month's runs on NVMe devices",
        ),
        (
            "iomark history import old/*.json --label before",
            "add earlier results",
        ),
        (
            "iomark history export --format influx > runs.lp",
            "for InfluxDB and Grafana",
        ),
    ] {
        s.push_str(&help::example(cmd, what));
    }
    s
}

pub fn main(argv: Vec<OsString>) -> i32 {
    let verb = argv.first().and_then(|a| a.to_str()).unwrap_or("");
    match verb {
        "import" => import(argv[1..].to_vec()),
        "export" => export_cmd(argv[1..].to_vec()),
        "check" => check(argv[1..].to_vec()),
        "delete" => delete(argv[1..].to_vec()),
        "list" => list(argv[1..].to_vec()),
        _ => list(argv),
    }
}

fn list(argv: Vec<OsString>) -> i32 {
    let mut as_json = false;
    let parsed = parse(argv, "history", &mut |n, _| {
        if n == "json" {
            as_json = true;
            return Ok(true);
        }
        Ok(false)
    });
    let (sel, pos, help) = match parsed {
        Ok(x) => x,
        Err(e) => return fail("history", &e),
    };
    if help {
        return print("history", &usage());
    }
    if let Some(p) = pos.first() {
        return fail(
            "history",
            &format!("unknown command '{p}' (list, import, export, check, delete)"),
        );
    }
    let runs = match open(sel.db.as_deref(), false)
        .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => return fail("history", &e),
    };
    if as_json {
        let v: Vec<serde_json::Value> = runs.iter().map(run_json).collect();
        return print(
            "history",
            &crate::report::json::to_string(&json!({"runs": v})),
        );
    }
    print("history", &list_text(&runs, sel.filter.test.is_some()))
}

fn run_json(r: &Run) -> serde_json::Value {
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
            "iops": t.value.iops.is_finite().then_some(t.value.iops),
            "lat_mean_ns": t.value.lat_mean_ns.is_finite().then_some(t.value.lat_mean_ns),
            "lat_p99_ns": t.value.lat_p99_ns.is_finite().then_some(t.value.lat_p99_ns),
            "passes": t.passes.len(),
        })).collect::<Vec<_>>(),
    })
}

fn list_text(runs: &[Run], with_tests: bool) -> String {
    use crate::suite::table;
    if runs.is_empty() {
        return "no run in the history matches\n".into();
    }
    let lw = runs
        .iter()
        .map(|r| r.label.as_deref().unwrap_or("-").chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 16);
    let dw = runs
        .iter()
        .map(|r| r.device_shown().chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 26);
    let mut s = format!(
        "{:>5}  {:<16}  {:<lw$}  {:<5}  {:<10}  {:<dw$}  tests\n",
        "run", "time", "label", "kind", "host", "device"
    );
    let cut = |v: &str, n: usize| -> String {
        if v.chars().count() <= n {
            v.to_string()
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
            for t in &r.tests {
                s.push_str(&format!(
                    "         {:<30} {:>9} MiB/s {:>9} IOPS  p99 {}\n",
                    cut(&format!("{} {}", t.name, t.dir), 30),
                    table::mib(t.value.bw_bytes),
                    table::iops(t.value.iops),
                    table::latency(t.value.lat_p99_ns)
                ));
            }
        }
    }
    s.push_str(&format!("{} run(s)\n", runs.len()));
    s
}

fn import(argv: Vec<OsString>) -> i32 {
    let mut label: Option<String> = None;
    let parsed = parse(argv, "history import", &mut |n, p| {
        if n == "label" {
            label = Some(
                history::check_label(&args::value(p, n)?).map_err(|e| format!("--label: {e}"))?,
            );
            return Ok(true);
        }
        Ok(false)
    });
    let (sel, files, help) = match parsed {
        Ok(x) => x,
        Err(e) => return fail("history import", &e),
    };
    if help {
        return print("history import", &usage());
    }
    if files.is_empty() {
        return fail("history import", "give the result files to import");
    }
    // Every file is read before anything is written: one bad file, nothing imported.
    let mut runs = Vec::new();
    for f in &files {
        let path = PathBuf::from(f);
        match history::run::load(&path) {
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
            Err(e) => return fail("history import", &e),
        }
    }
    let mut store = match open(sel.db.as_deref(), true) {
        Ok(s) => s,
        Err(e) => return fail("history import", &e),
    };
    let mut out = String::new();
    for r in &runs {
        match store.record(r) {
            Ok(rec) if rec.new => out.push_str(&format!(
                "#{}  {}  ({} tests)\n",
                rec.id,
                r.source,
                r.tests.len()
            )),
            Ok(rec) => out.push_str(&format!(
                "#{}  {}  (already in the history)\n",
                rec.id, r.source
            )),
            Err(e) => return fail("history import", &e.to_string()),
        }
    }
    out.push_str(&format!(
        "{} file(s) in {}\n",
        runs.len(),
        store.path().display()
    ));
    print("history import", &out)
}

fn export_cmd(argv: Vec<OsString>) -> i32 {
    let mut format: Option<export::Format> = None;
    let mut output: Option<PathBuf> = None;
    let parsed = parse(argv, "history export", &mut |n, p| {
        match n {
            "format" => format = Some(export::Format::parse(&args::value(p, n)?)?),
            "output" => output = Some(args::value(p, n)?.into()),
            _ => return Ok(false),
        }
        Ok(true)
    });
    let (sel, pos, help) = match parsed {
        Ok(x) => x,
        Err(e) => return fail("history export", &e),
    };
    if help {
        return print("history export", &usage());
    }
    if !pos.is_empty() {
        return fail("history export", "export takes no file names (use -o FILE)");
    }
    let Some(format) = format else {
        return fail("history export", "give --format csv, jsonl or influx");
    };
    let runs = match open(sel.db.as_deref(), false)
        .and_then(|s| s.runs(&sel.filter).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => return fail("history export", &e),
    };
    let text = export::render(&runs, format);
    match output {
        Some(p) => match write_file(&p, &text) {
            Ok(()) => 0,
            Err(e) => fail("history export", &e),
        },
        None => print("history export", &text),
    }
}

fn check(argv: Vec<OsString>) -> i32 {
    let (sel, pos, help) = match parse(argv, "history check", &mut |_, _| Ok(false)) {
        Ok(x) => x,
        Err(e) => return fail("history check", &e),
    };
    if help {
        return print("history check", &usage());
    }
    if !pos.is_empty() {
        return fail("history check", "check takes no arguments");
    }
    let store = match open(sel.db.as_deref(), false) {
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
                store.path().display()
            ),
        ),
        Ok((p, _, _)) => fail(
            "history check",
            &format!("{}: {}", store.path().display(), p.join("; ")),
        ),
        Err(e) => fail("history check", &e.to_string()),
    }
}

fn delete(argv: Vec<OsString>) -> i32 {
    let (sel, pos, help) = match parse(argv, "history delete", &mut |_, _| Ok(false)) {
        Ok(x) => x,
        Err(e) => return fail("history delete", &e),
    };
    if help {
        return print("history delete", &usage());
    }
    let ids: Result<Vec<i64>, String> = pos
        .iter()
        .map(|p| {
            p.trim_start_matches('#')
                .parse::<i64>()
                .map_err(|_| format!("'{p}' is not a run id"))
        })
        .collect();
    let ids = match ids {
        Ok(i) if !i.is_empty() => i,
        Ok(_) => {
            return fail(
                "history delete",
                "give the ids of the runs to delete (#N, as iomark history lists)",
            )
        }
        Err(e) => return fail("history delete", &e),
    };
    let mut store = match open(sel.db.as_deref(), false) {
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

pub fn trend_usage() -> String {
    use super::{help, text};
    let mut s = String::from(
        "Usage: iomark trend --test TEXT [--metric M] [SELECTION] [--html FILE] [--json]\n\n",
    );
    s.push_str(&text::wrap(
        &format!(
            "One metric of one test over time, per device (model, serial and host), from the \
             results history: each run's figure and the range of its passes, and the change \
             points of the series. Change points (binary segmentation): every split of a \
             device's runs into a before and an after of two runs or more is tried; the split \
             with the largest Welch t (logarithms of the per-run values) counts when the {}% \
             interval of the change lies wholly beyond ±threshold; then each side is searched \
             again. Metrics: bw, iops, lat (mean latency), p99, or any percentile pNN from each \
             run's merged latency histogram (exact over all its passes).",
            (1.0 - trend::CHANGE_ALPHA) * 100.0
        ),
        0,
        text::WIDTH,
    ));
    s.push_str("\nOptions:\n");
    let mut rows: Vec<(&str, &str)> = vec![
        (
            "--test TEXT",
            "the test: a part of its key or name that names one test",
        ),
        ("--metric M", "bw, iops (default), lat, p99 or pNN"),
        ("--threshold PCT", "the smallest change point (default 5)"),
        ("--html FILE", "also write the chart as an HTML page"),
        ("--json", "the series as JSON"),
    ];
    rows.extend(
        SELECT_HELP
            .iter()
            .filter(|(k, _)| !k.starts_with("--test"))
            .copied(),
    );
    rows.push(("-h, --help", "this help"));
    s.push_str(&text::options(&rows, args::OPTION_COLUMN + 2));
    s.push_str("\nExamples:\n");
    for (cmd, what) in [
        (
            "iomark trend --test rnd4k-q1t1-read",
            "IOPS of CrystalDiskMark's RND4K Q1T1 read over time",
        ),
        (
            "iomark trend --test rnd4k-q32t1-write --metric p99.9 --html t.html",
            "its 99.9th percentile latency, charted",
        ),
    ] {
        s.push_str(&help::example(cmd, what));
    }
    s
}

pub fn trend_main(argv: Vec<OsString>) -> i32 {
    let mut metric = trend::Metric::Figure(1);
    let mut threshold = 5.0;
    let mut html: Option<PathBuf> = None;
    let mut as_json = false;
    let parsed = parse(argv, "trend", &mut |n, p| {
        match n {
            "metric" => metric = trend::Metric::parse(&args::value(p, n)?)?,
            "threshold" => {
                let v = args::value(p, n)?;
                threshold = v
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("--threshold: '{v}' is not a percentage"))?;
            }
            "html" => html = Some(args::value(p, n)?.into()),
            "json" => as_json = true,
            _ => return Ok(false),
        }
        Ok(true)
    });
    let (sel, pos, help) = match parsed {
        Ok(x) => x,
        Err(e) => return fail("trend", &e),
    };
    if help {
        return print("trend", &trend_usage());
    }
    if !pos.is_empty() {
        return fail(
            "trend",
            "trend takes no arguments (name the test with --test)",
        );
    }
    let Some(want) = sel.filter.test.clone() else {
        return fail(
            "trend",
            "name the test with --test (iomark history --test TEXT lists them)",
        );
    };
    let runs = match open(sel.db.as_deref(), false)
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
            "test": key, "name": name, "metric": metric.title(),
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
