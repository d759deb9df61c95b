//! The front door: one-command benchmarks and what to do with results.
//!
//! - `quick`: CrystalDiskMark's default set with short defaults;
//! - `suite`: named presets (`presets/`), printable as fio job files;
//! - `sweep`: block size / queue depth / job count sweeps with a knee;
//! - `report`: a self-contained HTML report of any fio or iomark JSON;
//! - `compare`: before/after with a noise-aware verdict.
//!
//! Benchmarks generate a fio job file and run it through the normal job
//! pipeline (`pipeline`), several passes per test (`runner`), then write
//! a results bundle (`bundle`) and its HTML report (`report::html`). This module
//! owns no I/O logic of its own: everything that touches the target goes
//! through the job pipeline.
//!
//! Each runner owns its request (`QuickOpts`, `SuiteOpts`, `SweepOpts`,
//! `ReportOpts`, `CompareOpts`, the shared `RunFlags`); `cli` parses into
//! them. Results are read back by `results` and drawn by `report`.

pub mod bundle;
pub mod compare;
pub mod eta;
pub mod flags;
pub mod pipeline;
pub mod presets;
pub mod probe;
pub mod quick;
pub mod report_cmd;
pub mod runner;
pub mod suite_cmd;
pub mod sweep;
pub mod table;

// The HTML and SVG renderers live with the other report formats; these
// names keep `super::html` / `super::svg` working for the modules here
// that still use them (compare).
pub use crate::report::{html, svg};

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::host;
use crate::launch::{Launch, Refused};
pub use crate::report::out::{fail, print, write_file};
use crate::run::output::{self, Console};
use crate::run::{signals, RunOptions};
pub use flags::RunFlags;
use runner::{SuiteOutcome, SuiteRun, SuiteTest};

/// Exit code of a command that ran but found a problem in the results
/// (compare: a regression).
pub const EXIT_REGRESSION: i32 = 2;

pub use crate::results::MAX_INPUT_BYTES;

/// [`fail`] for an error found before the ranks joined: under MPI, said
/// once for every rank.
pub fn fail_early(cmd: &str, msg: &str) -> i32 {
    crate::launch::fail_once(&format!("iomark {cmd}: {msg}"))
}

/// [`fail`] said once for every rank (by rank 0).
pub fn fail_on(launch: &Launch, cmd: &str, msg: &str) -> i32 {
    launch.say(&format!("iomark {cmd}: {msg}"));
    1
}

/// [`print`] by rank 0 alone.
pub fn print_on(launch: &Launch, cmd: &str, text: &str) -> i32 {
    if launch.is_root() {
        print(cmd, text)
    } else {
        0
    }
}

/// Local date and time as `YYYYmmdd-HHMMSS`.
pub fn local_stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let Some(c) = crate::sys::calendar(now, false) else {
        return "00000000-000000".to_string();
    };
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// New report names in the current directory that exist neither as JSON
/// nor as HTML: `iomark-KIND-STAMP[-N].json/.html`.
pub fn fresh_names(kind: &str) -> (PathBuf, PathBuf) {
    let stamp = local_stamp();
    for n in 1.. {
        let base = if n == 1 {
            format!("iomark-{kind}-{stamp}")
        } else {
            format!("iomark-{kind}-{stamp}-{n}")
        };
        let (j, h) = (
            PathBuf::from(format!("{base}.json")),
            PathBuf::from(format!("{base}.html")),
        );
        if !j.exists() && !h.exists() {
            return (j, h);
        }
    }
    unreachable!("an unused name exists")
}

/// `--json -` / `--html -`: the report goes to standard output.
pub const STDOUT: &str = "-";

/// Where the JSON and HTML reports go: the flags, else fresh names. A
/// report sent to standard output (`-`) leaves the other one its fresh
/// name.
pub fn report_paths(kind: &str, f: &RunFlags) -> (PathBuf, PathBuf) {
    let std_out = |p: &PathBuf| p.as_os_str() == STDOUT;
    match (&f.json, &f.html) {
        (Some(j), Some(h)) => (j.clone(), h.clone()),
        (Some(j), None) if std_out(j) => (j.clone(), fresh_names(kind).1),
        (None, Some(h)) if std_out(h) => (fresh_names(kind).0, h.clone()),
        (Some(j), None) => (j.clone(), j.with_extension("html")),
        (None, Some(h)) => (h.with_extension("json"), h.clone()),
        (None, None) => fresh_names(kind),
    }
}

/// Whether one of the reports goes to standard output (the table then
/// goes to standard error); both cannot.
fn report_to_stdout(f: &RunFlags) -> Result<bool, String> {
    let std_out = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| p.as_os_str() == STDOUT);
    match (std_out(&f.json), std_out(&f.html)) {
        (true, true) => Err("--json - and --html - cannot both go to standard output".into()),
        (j, h) => Ok(j || h),
    }
}

/// The directory to benchmark and how: engine, direct I/O, notes.
pub struct Target {
    /// As given (for messages).
    pub shown: String,
    /// Absolute, for the job file (None: the current directory).
    pub directory: Option<String>,
    pub path: PathBuf,
    pub engine: probe::EngineChoice,
    pub direct: bool,
    pub notes: Vec<String>,
    pub warnings: Vec<Value>,
}

/// Checks PATH, picks the engine and finds out whether direct I/O works.
pub fn target(
    path: Option<&str>,
    flags: &RunFlags,
    want_direct: bool,
    engines: &[crate::job::EngineKind],
) -> Result<Target, String> {
    let shown = path.unwrap_or(".").to_string();
    let p = PathBuf::from(&shown);
    if !p.is_dir() {
        // A job option given as PATH (allow_destroy_data=1, bs=4k): these
        // commands take their own --options, not a job file's.
        if !p.exists() && shown.contains('=') && !shown.starts_with('-') {
            return Err(format!(
                "'{shown}' is not a directory; this command takes a directory and its own \
                 --options, not job options (see its --help)"
            ));
        }
        return Err(format!("'{shown}' is not a directory"));
    }
    // Windows: the absolute path as the user would write it (a drive
    // letter, not the `\\?\` form canonicalize gives), its colons
    // escaped for the job file as fio's Windows users write them (`C\:`).
    #[cfg(windows)]
    let abs = crate::sys::absolute(&p);
    #[cfg(unix)]
    let abs = std::fs::canonicalize(&p)
        .map_err(|e| format!("'{shown}': {}", crate::job::jobfile::io_reason(&e)))?;
    let abs_s = abs.to_string_lossy().to_string();
    #[cfg(windows)]
    let abs_s = abs_s.replace(':', "\\:");
    if cfg!(unix) && abs_s.contains(':') {
        return Err(format!(
            "'{abs_s}' contains ':', which fio job files use to separate file names; \
             use a directory without ':'"
        ));
    }
    let engine = probe::pick_engine(flags.engine.as_deref(), engines)?;
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    if let Some(n) = &engine.note {
        notes.push(n.clone());
    }
    let mut direct = want_direct && !flags.buffered;
    if direct && !engine.kind.info().caps.diskless && !probe::direct_io_works(&abs)? {
        direct = false;
        let msg = format!(
            "the filesystem at '{shown}' does not support direct I/O: running buffered, so \
             the results likely measure the page cache, not the device"
        );
        warnings.push(json!({"kind": "no-direct-io", "job": "", "message": msg}));
    }
    Ok(Target {
        directory: path.map(|_| abs_s),
        shown,
        path: abs,
        engine,
        direct,
        notes,
        warnings,
    })
}

/// A benchmark ready to run: the job file, its tests and how to report.
pub struct Bench<'a> {
    pub kind: &'static str,
    pub title: String,
    pub jobfile: String,
    pub tests: Vec<SuiteTest>,
    pub passes: u32,
    pub warmup_us: u64,
    pub settings: Value,
    pub target: Target,
    /// Sweeps only: called once after the run with the outcome and the
    /// JSON report's path (None with --no-report); prints the sweep's
    /// summary, writes its charts and returns the "sweep" object.
    #[allow(clippy::type_complexity)]
    pub sweep: Option<Box<dyn Fn(&SuiteOutcome, Option<&Path>, &mut BenchOut) -> Value>>,
    /// Where it runs: this host alone, or this rank of many.
    pub launch: &'a Launch,
}

/// Where a benchmark's results go besides the report files: the table on
/// standard output, and the report files that could not be written.
#[derive(Debug, Default)]
pub struct BenchOut {
    pub console: Console,
    /// "cannot write 'PATH': reason", one per file.
    pub failures: Vec<String>,
    /// The report files opened when the command started (see
    /// [`BenchOut::reserve`]).
    reserved: Vec<output::ReportFile>,
}

impl BenchOut {
    /// Opens a report file now, before the run, so that it is written at
    /// the end through this handle and never through a link planted
    /// meanwhile (`by_user`: the user named it; else iomark made up its
    /// name and no link is followed). Unused, it is removed.
    pub fn reserve(&mut self, path: &Path, by_user: bool) -> Result<(), String> {
        if path == Path::new(STDOUT) {
            return Ok(());
        }
        let f = if by_user {
            output::ReportFile::create(path)
        } else {
            output::ReportFile::create_generated(path)
        }
        .map_err(|e| {
            format!(
                "cannot write '{}': {}",
                path.display(),
                crate::job::jobfile::io_reason(&e)
            )
        })?;
        if f.replaces() {
            output::stderr_line(&format!("iomark: replacing existing '{}'", path.display()));
        }
        self.reserved.push(f);
        Ok(())
    }

    /// Writes a report file, printing "LABEL PATH" once it is written:
    /// through the file reserved for it, else one opened now whose name
    /// iomark made up (charts beside the results).
    pub fn file(&mut self, label: &str, path: &Path, text: &str) {
        if path == Path::new(STDOUT) {
            match output::stdout(text) {
                Ok(()) => self.console.print(&format!("{label}standard output\n")),
                Err(e) => self.failures.push(format!(
                    "cannot write to standard output: {}",
                    output::reason(&e)
                )),
            }
            return;
        }
        let f = match self.reserved.iter().position(|r| r.path() == path) {
            Some(i) => Ok(self.reserved.remove(i)),
            None => output::ReportFile::create_generated(path),
        };
        let r = f.and_then(|mut f| {
            f.write(text);
            f.finish()
        });
        match r {
            Ok(()) => self.console.print(&format!("{label}{}\n", path.display())),
            Err(e) => self.failures.push(format!(
                "cannot write '{}': {}",
                path.display(),
                crate::job::jobfile::io_reason(&e)
            )),
        }
    }
}

/// The one-paragraph description of the target printed before a run.
fn describe_target(tg: Option<&host::Target>) -> String {
    let Some(tg) = tg else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some(fs) = &tg.fs_type {
        parts.push(fs.clone());
    }
    if let Some(d) = &tg.device {
        let mut s = format!("on {d}");
        if let Some(m) = &tg.device_model {
            s.push_str(&format!(" ({m})"));
        }
        parts.push(s);
    }
    parts.join(" ")
}

/// Joins the ranks of an MPI job when asked (`--mpi`) or started by an
/// MPI launcher; this host alone otherwise. Err: the exit code.
pub fn join(cmd: &str, flags: &RunFlags) -> Result<Launch, i32> {
    let opts = crate::launch::Options {
        mpi: flags.mpi,
        timeout: flags.mpi_timeout_s.map(std::time::Duration::from_secs),
        ..Default::default()
    };
    Launch::join(&opts).map_err(|e| fail(cmd, &e))
}

/// A result each rank reached alone, agreed by every rank: an error on
/// any rank is an error on every rank, said once by rank 0 (naming each
/// failing rank and its host). Err: the exit code.
pub fn agreed<T>(cmd: &str, launch: &Launch, what: &str, r: Result<T, String>) -> Result<T, i32> {
    launch.agree(what, r).map_err(|e| match e {
        Refused::Say(text) => fail(cmd, &text),
        Refused::Quiet => 1,
    })
}

/// The line that says a benchmark runs on many ranks.
fn ranks_line(r: &crate::cluster::Ranks) -> String {
    let hosts = &r.hosts.names;
    format!(
        "on {} MPI rank{} on {} host{} ({}), each with its own test file: figures are \
         their sum, with the range over the {}",
        r.size(),
        if r.size() == 1 { "" } else { "s" },
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        hosts.join(", "),
        if hosts.len() > 1 { "hosts" } else { "ranks" }
    )
}

/// A rank other than 0: runs every pass with the others, prints nothing
/// but its own errors that rank 0 cannot know, and exits with its status.
fn follow(b: &Bench, name: &str, run_opts: RunOptions) -> i32 {
    let run = SuiteRun {
        jobfile: &b.jobfile,
        jobfile_name: name,
        tests: &b.tests,
        passes: b.passes,
        warmup_us: b.warmup_us,
        run_opts,
        announce: false,
    };
    match runner::run_suite_on(&run, b.launch, &mut |_| {}) {
        Ok(o) => match signals::exit_code() {
            Some(code) => code,
            None => i32::from(o.error.is_some() || o.interrupted),
        },
        Err(Refused::Quiet) => 1,
        Err(Refused::Say(e)) => {
            // Rank 0 cannot know this rank's own failure: say it here.
            output::stderr_line(&format!(
                "iomark {}: rank {}: {e}",
                b.kind,
                b.launch.place().rank
            ));
            1
        }
    }
}

/// Records a benchmark's results in the history, saying where (or, on
/// standard error, why not: the results files stay as written).
fn record(
    cmd: &str,
    opts: &crate::history::RecordOptions,
    doc: &Value,
    text: &str,
    json_path: &Path,
    no_report: bool,
    out: &mut BenchOut,
) {
    let source = if no_report || json_path == Path::new(STDOUT) {
        format!("iomark {cmd}")
    } else {
        std::fs::canonicalize(json_path)
            .unwrap_or_else(|_| json_path.to_path_buf())
            .display()
            .to_string()
    };
    match crate::history::record_document(opts, doc, text, &source, None) {
        Ok(line) => out.console.print(&format!("History:      {line}\n")),
        Err(e) => output::stderr_line(&format!(
            "iomark {cmd}: the run was not recorded in the results history: {e}{}",
            if no_report {
                ""
            } else {
                " (the results files are written)"
            }
        )),
    }
}

/// A preset's run as `quick` and `suite` make it: the settings every
/// preset report records (from the target and the values in force), then
/// [`run_bench`].
pub struct PresetBench<'a> {
    pub kind: &'static str,
    pub title: String,
    pub preset: &'static presets::Preset,
    pub jobfile: String,
    pub target: Target,
    /// The size setting as the command records it: its key and value.
    pub size: (&'static str, Value),
    pub runtime_us: u64,
    pub passes: u32,
    pub warmup_us: u64,
    pub launch: &'a Launch,
}

/// Runs a preset's benchmark (see [`PresetBench`]); returns the exit code.
pub fn run_preset_bench(p: PresetBench, flags: &RunFlags) -> i32 {
    let mut settings = serde_json::Map::new();
    settings.insert("preset".into(), json!(p.preset.name));
    settings.insert("path".into(), json!(p.target.path.display().to_string()));
    settings.insert("ioengine".into(), json!(p.target.engine.kind.name()));
    settings.insert("direct".into(), json!(p.target.direct));
    settings.insert(p.size.0.into(), p.size.1);
    settings.insert("runtime_us".into(), json!(p.runtime_us));
    settings.insert("passes".into(), json!(p.passes));
    settings.insert("warmup_us".into(), json!(p.warmup_us));
    let bench = Bench {
        kind: p.kind,
        title: p.title,
        jobfile: p.jobfile,
        tests: p.preset.suite_tests(),
        passes: p.passes,
        warmup_us: p.warmup_us,
        settings: Value::Object(settings),
        target: p.target,
        sweep: None,
        launch: p.launch,
    };
    run_bench(bench, flags)
}

/// Runs a benchmark: table on stdout as tests finish, JSON and HTML
/// reports, test files removed; returns the exit code. Under MPI every
/// rank runs it on its own test file; rank 0 alone prints and reports.
pub fn run_bench(b: Bench, flags: &RunFlags) -> i32 {
    let name = format!("iomark-{}.fio", b.kind);
    let (to_stdout, all, run_opts) = match prepare_bench(&b, flags, &name) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if !b.launch.is_root() {
        return follow(&b, &name, run_opts);
    }
    // The benchmarked directory, described once for the table's heading
    // and the results bundle.
    let env = if b.target.engine.kind == crate::job::EngineKind::Http {
        // An object store: named by its endpoint and bucket, not probed.
        let mut env = host::Environment::capture(&[]);
        let url = b.target.path.display().to_string();
        env.targets.push(host::Target {
            path: url.clone(),
            fs_type: Some("s3".into()),
            device: Some(url),
            ..host::Target::default()
        });
        env
    } else {
        host::Environment::capture(std::slice::from_ref(&b.target.path))
    };
    let (json_path, html_path) = report_paths(b.kind, flags);
    let mut out = match open_reports(b.kind, flags, to_stdout, &json_path, &html_path) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let unit = flags
        .units
        .unwrap_or_else(|| table::BwUnit::of_tests(b.tests.iter().map(|t| t.label.as_str())));
    let notes = print_heading(&b, &env, unit, &mut out);
    // The cache warnings and notes of every test, once (each pass's
    // result carries its own for the JSON).
    all.ready().announce();
    let outcome = match run_tests(&b, &name, run_opts, unit, &mut out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    say_how_it_ended(b.kind, &outcome);
    // A third signal now waits until the reports are written.
    let writing = signals::Reporting::start();
    let paths = (json_path.as_path(), html_path.as_path());
    if let Err(code) = write_results(&b, flags, &env, notes, &outcome, paths, &mut out) {
        return code;
    }
    drop(writing);
    bench_exit(b.kind, &out, &outcome)
}

/// What every rank checks before any rank runs: where the reports go,
/// the job file, the plan and its test files. Returns whether a report
/// goes to standard output, the prepared jobs and the run's options, or
/// the exit code.
fn prepare_bench(
    b: &Bench,
    flags: &RunFlags,
    name: &str,
) -> Result<(bool, crate::launch::Prepared, RunOptions), i32> {
    let (cmd, launch) = (b.kind, b.launch);
    // What every rank finds alike, rank 0 says.
    let fail_all = |e: &str| fail_on(launch, cmd, e);
    let to_stdout = report_to_stdout(flags).map_err(|e| fail_all(&e))?;
    // Validate the whole job file before anything else.
    let sections = pipeline::sections(&b.jobfile, name).map_err(|e| fail_all(&e))?;
    // A test file left behind (an interrupted run, another program): said
    // in this command's words before the checks of the run refuse it in
    // a job file's (whose advice, allow_destroy_data=1, is no option
    // here).
    let existing = pipeline::existing_files(launch, &sections, name)
        .first()
        .map(|f| runner::existing_file_message(f));
    match launch.agree(
        "every rank to check its test files",
        existing.map_or(Ok(()), Err),
    ) {
        Ok(()) => {}
        Err(Refused::Say(e)) => return Err(fail(cmd, &e)),
        Err(Refused::Quiet) => return Err(1),
    }
    // The progress line (one per pass, naming test and pass) goes to
    // standard error, beside the notices: standard output has the table.
    let run_opts = RunOptions {
        progress: if launch.is_root() {
            flags.eta
        } else {
            crate::run::progress::ProgressMode::Never
        },
        eta_newline: flags.eta_newline,
        progress_to_stderr: true,
        quiet: true,
        ..RunOptions::default()
    };
    let all = match pipeline::prepare_on(launch, &sections, name, None, &[], &run_opts) {
        Ok(a) => a,
        Err(Refused::Quiet) => return Err(1),
        Err(Refused::Say(e)) => return Err(fail_all(&e)),
    };
    Ok((to_stdout, all, run_opts))
}

/// Where the table goes, with the report files opened now (written at
/// the end through these handles).
fn open_reports(
    cmd: &str,
    flags: &RunFlags,
    to_stdout: bool,
    json_path: &Path,
    html_path: &Path,
) -> Result<BenchOut, i32> {
    let mut out = if to_stdout {
        BenchOut {
            console: Console::on_stderr(),
            ..BenchOut::default()
        }
    } else {
        BenchOut::default()
    };
    if !flags.no_report {
        let named = |p: &Option<PathBuf>, q: &Path| p.as_deref() == Some(q);
        for (path, by_user) in [
            (json_path, named(&flags.json, json_path)),
            (html_path, named(&flags.html, html_path)),
        ] {
            out.reserve(path, by_user).map_err(|e| fail(cmd, &e))?;
        }
    }
    Ok(out)
}

/// The width of the table's label column.
fn label_width(b: &Bench) -> usize {
    b.tests
        .iter()
        .map(|t| t.label.chars().count() + 6)
        .max()
        .unwrap_or(10)
        .max(10)
}

/// The lines above the table (what runs where, how) and the target's
/// notes and warnings on standard error; returns the notes the results
/// bundle keeps.
fn print_heading(
    b: &Bench,
    env: &host::Environment,
    unit: table::BwUnit,
    out: &mut BenchOut,
) -> Vec<String> {
    out.console.print(&format!(
        "iomark {}: {} in {} [{}]\n",
        b.kind,
        b.title,
        b.target.shown,
        if b.target.engine.kind == crate::job::EngineKind::Http {
            "S3 object store".to_string()
        } else {
            describe_target(env.target(&b.target.path))
        }
    ));
    let warm = if b.warmup_us > 0 {
        format!(" after a {} warm-up", presets::time_text(b.warmup_us))
    } else {
        String::new()
    };
    out.console.print(&format!(
        "{} test(s), {} measured pass(es) each{}, engine {}, {}; median of the passes \
         shown, in {}\n",
        b.tests.len(),
        b.passes,
        warm,
        b.target.engine.kind,
        if b.target.engine.kind == crate::job::EngineKind::Http {
            "whole objects"
        } else if b.target.direct {
            "direct I/O"
        } else {
            "buffered I/O"
        },
        unit.meaning()
    ));
    // Under Wine the table's figures are not Windows figures: said with
    // them, not only on standard error.
    if let Some(w) = host::wine_warning() {
        out.console.print(&format!("warning: {}\n", w.message));
    }
    let mut notes = b.target.notes.clone();
    if let Some(r) = b.launch.ranks() {
        let line = ranks_line(r);
        out.console.print(&format!("{line}\n"));
        notes.push(line);
    }
    for n in &b.target.notes {
        output::stderr_line(&format!("iomark: note: {n}"));
    }
    for w in &b.target.warnings {
        output::stderr_line(&format!(
            "iomark: warning: {}",
            w["message"].as_str().unwrap_or("")
        ));
    }
    notes
}

/// Runs the tests, printing the table's rows as each test finishes.
fn run_tests(
    b: &Bench,
    name: &str,
    run_opts: RunOptions,
    unit: table::BwUnit,
    out: &mut BenchOut,
) -> Result<SuiteOutcome, i32> {
    let label_w = label_width(b);
    let object = b.target.engine.kind == crate::job::EngineKind::Http;
    let header = if object {
        table::object_header(label_w, unit)
    } else {
        table::header(label_w, unit)
    };
    out.console.print(&format!("\n{header}"));
    let run = SuiteRun {
        jobfile: &b.jobfile,
        jobfile_name: name,
        tests: &b.tests,
        passes: b.passes,
        warmup_us: b.warmup_us,
        run_opts,
        // Rank 0 (or this host alone) says what the passes find.
        announce: true,
    };
    let mut print_row = |t: &runner::TestOutcome| {
        let mut rows = String::new();
        for d in &t.dirs {
            if object {
                let o = object_figures(&t.runs, &d.dir);
                let op = o.op.unwrap_or_else(|| table::method(&d.dir).to_string());
                rows.push_str(&table::object_row(
                    &format!("{} {op}", t.test.label),
                    label_w,
                    &d.passes,
                    &o.p50,
                    &o.ttfb99,
                    unit,
                ));
                if !o.listed.is_empty() {
                    rows.push_str(&table::listed_row(label_w, &o.listed));
                }
                continue;
            }
            rows.push_str(&table::row(
                &format!("{} {}", t.test.label, d.dir),
                label_w,
                &d.passes,
                unit,
            ));
            if let Some(sp) = runner::client_spread(&t.clients, &d.dir) {
                rows.push_str(&table::spread_row(label_w, &sp, unit));
            }
        }
        out.console.print(&rows);
    };
    match runner::run_suite_on(&run, b.launch, &mut print_row) {
        Ok(o) => Ok(o),
        Err(Refused::Say(e)) => Err(fail(b.kind, &e)),
        Err(Refused::Quiet) => Err(1),
    }
}

/// What the table shows of an object test's direction besides its
/// passes' figures.
struct ObjectFigures {
    /// The request's name (`GET`, `HEAD`, `LIST`, ...), when a pass
    /// document names it.
    op: Option<String>,
    /// p50 latency and p99 time to first byte, by pass (NaN where a pass
    /// has none).
    p50: Vec<f64>,
    ttfb99: Vec<f64>,
    /// LIST: (objects listed, per second), by pass.
    listed: Vec<(u64, f64)>,
}

/// [`ObjectFigures`] of direction `dir` in each pass document.
fn object_figures(runs: &[Value], dir: &str) -> ObjectFigures {
    use crate::results::dataset::{items_of_doc, Detail};
    let mut o = ObjectFigures {
        op: None,
        p50: Vec::new(),
        ttfb99: Vec::new(),
        listed: Vec::new(),
    };
    for doc in runs {
        for (it, d) in items_of_doc(doc) {
            if it.dir == dir {
                o.op.get_or_insert_with(|| it.op());
                o.p50.push(Detail::at(&d.percentiles, 50.0));
                o.ttfb99.push(Detail::at(&d.ttfb, 99.0));
            }
        }
        let listed = doc["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|j| {
                let s = &j[dir];
                Some((
                    s["objects_listed"].as_u64()?,
                    s["objects_listed_per_s"].as_f64()?,
                ))
            });
        o.listed.extend(listed);
    }
    o
}

/// Says on standard error that the run was interrupted or failed.
fn say_how_it_ended(cmd: &str, outcome: &SuiteOutcome) {
    // A closed standard output ends the run quietly (exit 141).
    let quiet = signals::which() == crate::sys::SIGPIPE;
    if outcome.interrupted && !quiet {
        let measured = outcome.tests.iter().any(|t| !t.runs.is_empty());
        output::stderr_line(&format!(
            "iomark {cmd}: interrupted{}; test files removed, {}",
            if measured {
                ""
            } else {
                " before the first test finished"
            },
            if measured {
                "partial results follow"
            } else {
                "no results (the reports record the settings and environment only)"
            }
        ));
    }
    if let Some(e) = &outcome.error {
        output::stderr_line(&format!("iomark {cmd}: {e}; test files removed"));
    }
}

/// The results bundle and its HTML report, written to `paths` (JSON,
/// HTML) unless no report was asked, and the run recorded in the results
/// history when it completed; an exit code when the report could not be
/// made.
fn write_results(
    b: &Bench,
    flags: &RunFlags,
    env: &host::Environment,
    notes: Vec<String>,
    outcome: &SuiteOutcome,
    (json_path, html_path): (&Path, &Path),
    out: &mut BenchOut,
) -> Result<(), i32> {
    let cmd = b.kind;
    let report_path = (!flags.no_report).then_some(json_path);
    let sweep = b.sweep.as_ref().map(|f| f(outcome, report_path, out));
    let history = flags.record_options();
    if flags.no_report && !history.enabled {
        return Ok(());
    }
    let info = bundle::BundleInfo {
        kind: b.kind,
        label: flags.label.clone(),
        title: b.title.clone(),
        settings: b.settings.clone(),
        jobfile: b.jobfile.clone(),
        notes,
        warnings: b.target.warnings.clone(),
        environment: crate::report::env::environment_json(
            env,
            std::slice::from_ref(&b.target.path),
        ),
        sweep,
        cluster: b.launch.ranks().map(bundle::cluster_json),
    };
    let doc = bundle::build(info, outcome);
    let text = crate::report::json::to_string(&doc);
    out.console.print("\n");
    if !flags.no_report {
        let html = match crate::results::dataset::from_value(&doc, &json_path.display().to_string())
        {
            Ok(ds) => html::report_page_in(&b.title, &[ds], &[], flags.units, ""),
            Err(e) => return Err(fail(cmd, &e.to_string())),
        };
        out.file("JSON results: ", json_path, &text);
        out.file("HTML report:  ", html_path, &html);
    }
    // Only a complete run goes into the history: an interrupted or
    // failed one would be a false point in its trends.
    if history.enabled && outcome.error.is_none() && !outcome.interrupted {
        record(cmd, &history, &doc, &text, json_path, flags.no_report, out);
    } else if history.enabled && outcome.error.is_some() {
        output::stderr_line(&format!(
            "iomark {cmd}: the failed run is not recorded in the results history"
        ));
    }
    Ok(())
}

/// The exit code of a benchmark, after one line for the report files
/// that could not be written.
fn bench_exit(cmd: &str, out: &BenchOut, outcome: &SuiteOutcome) -> i32 {
    if let Some(first) = out.failures.first() {
        let more = match out.failures.len() - 1 {
            0 => String::new(),
            n => format!(" ({n} more report file(s) not written)"),
        };
        fail(cmd, &format!("{first}{more}"));
    }
    if let Some(m) = out.console.failure() {
        fail(cmd, &m);
    }
    if let Some(code) = signals::exit_code() {
        return code;
    }
    let failed = !out.failures.is_empty() || out.console.failed();
    if outcome.error.is_some() || failed {
        return 1;
    }
    0
}
