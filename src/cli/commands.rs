//! Executes a parsed `Command`: the fio-style run and the subcommands.
//! Returns the process exit code; every error is one line on stderr.
//! Nothing here prints with `print!`: standard output goes through
//! `run::output`, so a closed pipe or a full disk is an error, not a panic.

use super::{help, Command, RunArgs};
use crate::job;
use crate::launch::{Launch, Refused};
use crate::report;
use crate::run::error::RunError;
use crate::run::output::{self, Console, ReportFile};
use crate::run::session::SessionOptions;
use crate::run::{self, signals, RunOptions};

/// Exit codes.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAIL: i32 = 1;

fn fail(msg: &str) -> i32 {
    output::stderr_line(&format!("iomark: {msg}"));
    EXIT_FAIL
}

/// Prints `text` on standard output: 0, or the code of its failure (141,
/// quietly, when the reader went away).
pub fn print(text: &str) -> i32 {
    let mut c = Console::default();
    c.print(text);
    match c.failure() {
        Some(m) => fail(&m),
        None => signals::exit_code()
            .filter(|_| c.failed())
            .unwrap_or(EXIT_OK),
    }
}

pub fn execute(cmd: Command) -> i32 {
    match cmd {
        Command::Text(text) => print(&text),
        Command::Usage(text) => {
            // Several lines of iomark's own text: each written as a line
            // (stderr_line escapes a newline inside one).
            for line in text.trim_end().lines() {
                output::stderr_line(line);
            }
            EXIT_FAIL
        }
        Command::InflateLog(path) => super::inflate::main(&path),
        Command::CmdHelp(None) => print(&help::cmdhelp_all()),
        Command::CmdHelp(Some(name)) => match help::cmdhelp_one(&name) {
            Ok(s) => print(&s),
            Err(e) => fail(&e),
        },
        Command::EngHelp(e) => match help::enghelp(e.as_deref()) {
            Ok(s) => print(&s),
            Err(e) => fail(&e),
        },
        Command::Run(args) => run_jobs(*args),
        Command::Sub(name, rest) => super::cmd::main(&name, rest),
    }
}

/// Where the report goes: the `--output` file or standard output. Write
/// errors are kept; `finish` says what failed, in one line.
pub struct Sink {
    file: Option<ReportFile>,
    console: Console,
}

impl Sink {
    pub fn new(path: Option<&std::path::Path>) -> Result<Sink, String> {
        let file = match path {
            Some(p) => Some(ReportFile::create(p).map_err(|e| {
                format!(
                    "cannot write output file '{}': {}",
                    p.display(),
                    job::jobfile::io_reason(&e)
                )
            })?),
            None => None,
        };
        Ok(Sink {
            file,
            console: Console::default(),
        })
    }

    pub fn is_stdout(&self) -> bool {
        self.file.is_none()
    }

    pub fn write(&mut self, s: &str) {
        match &mut self.file {
            Some(f) => f.write(s),
            None => self.console.print(s),
        }
    }

    /// Ends the output (flush, sync, close for a file); the line to show
    /// when any of it failed. A closed standard output is not shown: it
    /// ends the run quietly (see `signals::note_broken_pipe`).
    pub fn finish(&mut self) -> Option<String> {
        match &mut self.file {
            Some(f) => f.finish().err().map(|e| {
                format!(
                    "cannot write output file '{}': {}",
                    f.path().display(),
                    job::jobfile::io_reason(&e)
                )
            }),
            None => self.console.failure(),
        }
    }
}

fn run_jobs(args: RunArgs) -> i32 {
    let opts = crate::launch::Options {
        mpi: args.mpi,
        timeout: args.mpi_timeout_s.map(std::time::Duration::from_secs),
        per_rank: args.mpi_per_rank,
        stonewall: args.mpi_stonewall,
        host_detail: args.mpi_host_detail,
    };
    let launch = match Launch::join(&opts) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    let code = launched(&launch, args);
    launch.end(code)
}

/// Says a refusal (on the rank that says it): the exit code.
fn refused(r: Refused) -> i32 {
    match r {
        Refused::Say(m) => fail(&m),
        Refused::Quiet => EXIT_FAIL,
    }
}

/// The job list, checked (and agreed by every rank under MPI).
fn job_list(launch: &Launch, args: &RunArgs) -> Result<crate::job::JobList, Refused> {
    let checked = crate::workload::checked_jobs(&args.sources)
        .map_err(|e| e.to_string())
        .and_then(|l| match args.warnings_fatal {
            true => super::fatal_warnings(&l.jobs).map_or(Ok(l), Err),
            false => Ok(l),
        })
        .and_then(|l| match launch.ranks() {
            Some(_) => ranks_refuse(args, &l.jobs).map(|()| l),
            None => Ok(l),
        });
    launch.agree("every rank to read its job list", checked)
}

/// The run as `args` asks, on `launch`: the exit code.
#[allow(clippy::too_many_lines)]
fn launched(launch: &Launch, args: RunArgs) -> i32 {
    let list = match job_list(launch, &args) {
        Ok(l) => l,
        Err(r) => return refused(r),
    };
    let root = launch.is_root();
    if args.showcmd {
        return if root {
            print(&format!("{}\n", help::showcmd(&args.sources)))
        } else {
            EXIT_OK
        };
    }
    if args.parse_only {
        return EXIT_OK;
    }
    let f = args.formats;
    let outputs = report::Outputs {
        terse: f.terse.then_some(args.terse_version),
        json: f.json,
        json_plus: f.json_plus,
        normal: f.normal,
    };
    let to_stdout = args.output.is_none();
    let opts = SessionOptions {
        run: RunOptions {
            fake_clock_step: args.fake_clock_ns,
            notices_to_stdout: f.normal && to_stdout && !f.json && !f.json_plus && !f.terse,
            progress: if root {
                args.eta
            } else {
                run::progress::ProgressMode::Never
            },
            eta_newline: args.eta_newline,
            eta_newline_ms: args.eta_newline_ms,
            eta_interval_ms: args.eta_interval_ms,
            progress_to_stderr: to_stdout && (f.json || f.json_plus || f.terse),
            quiet: !root,
            status: None,
            agg_bw_log: args.agg_bw_log,
            max_running: args.max_jobs,
            pass: None,
            remote: None,
        },
        readonly: args.readonly,
        place: launch.place(),
    };
    let mut prepared = match launch.prepare(list, opts) {
        Ok(r) => r,
        // Another rank refused: rank 0 says why, once for all.
        Err(RunError::RefusedElsewhere) => return EXIT_FAIL,
        Err(e) => return fail(&e.to_string()),
    };
    if !root {
        return match prepared.run() {
            Ok(l) => l.exit_code(),
            Err(e) => fail(&e.to_string()),
        };
    }
    prepared.ready().announce();
    // The output file is created only once the jobs are known to be good.
    let sink = match Sink::new(args.output.as_deref()) {
        Ok(s) => std::sync::Arc::new(std::sync::Mutex::new(s)),
        Err(e) => return fail(&e),
    };
    if args.status_interval_ms > 0 {
        let sink = sink.clone();
        prepared.ready_mut().set_status(run::monitor::StatusHook {
            every: std::time::Duration::from_millis(args.status_interval_ms),
            report: std::sync::Arc::new(move |interim: &run::RunResult| {
                let rep = report::build(interim);
                if let Ok(mut s) = sink.lock() {
                    s.write(&report::render(&rep, &outputs));
                }
            }),
        });
    }
    if f.normal {
        if let Ok(mut s) = sink.lock() {
            s.write(&header(&prepared, launch));
        }
    }
    let done = match prepared.run() {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    let done = done.with_label(args.label.clone());
    for line in done.stop_lines().iter().chain(&done.job_errors()) {
        output::stderr_line(&format!("iomark: {line}"));
    }
    let text = done.report(&outputs);
    let history = args.record_options();
    // The json+ document the history records (when it does).
    let recorded = history.enabled.then(|| done.document(true));
    let failure = {
        // A third signal now waits until the report is written.
        let _writing = signals::Reporting::start();
        match sink.lock() {
            Ok(mut s) => {
                s.write(&text);
                let f = s.finish();
                crate::launch::report_written();
                f
            }
            Err(_) => Some("cannot write the report: its writer failed".into()),
        }
    };
    if let Some(m) = &failure {
        fail(m);
    }
    if let Some(doc) = recorded {
        // Only a complete run goes into the history.
        if done.failed() || done.interrupted() || signals::received() {
            if !signals::received() {
                output::stderr_line(
                    "iomark: the failed run is not recorded in the results history",
                );
            }
        } else {
            record_run(&args, &history, &doc);
        }
    }
    match done.exit_code() {
        EXIT_OK if failure.is_some() => EXIT_FAIL,
        code => code,
    }
}

/// "Starting N threads" (on every rank: said so, with the total).
fn header(prepared: &crate::launch::Prepared, launch: &Launch) -> String {
    let mut head = report::normal::run_header(prepared.plan());
    if let Some(r) = launch.ranks() {
        let n = r.size() as usize;
        let clones = prepared.plan().jobs.len();
        head.pop();
        head.push_str(&format!(
            " on each of {n} MPI ranks ({} in all)\n",
            clones * n
        ));
    }
    head
}

/// Records a job run in the results history; a failure is said on
/// stderr and leaves the report as written (and the exit status alone).
fn record_run(args: &RunArgs, opts: &crate::history::RecordOptions, doc: &serde_json::Value) {
    let text = doc.to_string();
    let source = match &args.output {
        Some(p) => std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string(),
        None => "iomark job run".to_string(),
    };
    let jobs = help::showcmd(&args.sources);
    match crate::history::record_document(opts, doc, &text, &source, Some(&jobs)) {
        Ok(line) => {
            output::stderr_line(&format!("iomark: recorded in the results history: {line}"))
        }
        Err(e) => output::stderr_line(&format!(
            "iomark: the run was not recorded in the results history: {e} (the report is written)"
        )),
    }
}

/// What a run spread over MPI ranks cannot do (yet): said before anything
/// starts, rather than run differently from what was asked.
fn ranks_refuse(args: &RunArgs, jobs: &[crate::job::JobSpec]) -> Result<(), String> {
    if args.status_interval_ms > 0 {
        return Err("--status-interval is not supported across MPI ranks: rank 0 writes one report at the end".into());
    }
    if args.max_jobs.is_some() {
        return Err("--max-jobs is not supported across MPI ranks: the ranks start each stonewall phase together".into());
    }
    if let Some(j) = jobs.iter().find(|j| j.ctl.wait_for.is_some()) {
        return Err(format!(
            "job '{}': wait_for is not supported across MPI ranks (the ranks start each stonewall phase together): use stonewall",
            j.name
        ));
    }
    Ok(())
}
