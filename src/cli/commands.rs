//! Executes a parsed `Command`: the fio-style run and the subcommands.
//! Returns the process exit code; every error is one line on stderr.
//! Nothing here prints with `print!`: standard output goes through
//! `run::output`, so a closed pipe or a full disk is an error, not a panic.

use super::{help, Command, RunArgs};
use crate::job;
use crate::report;
use crate::run::output::{self, Console, ReportFile};
use crate::run::session::{Session, SessionOptions};
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
            output::stderr_line(text.trim_end());
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
        Command::Sub(name, rest) => match name.as_str() {
            "quick" => crate::suite::quick::main(rest),
            "suite" => crate::suite::suite_cmd::main(rest),
            "sweep" => crate::suite::sweep::main(rest),
            "compare" => crate::suite::compare::main(rest),
            "report" => crate::suite::report_cmd::main(rest),
            "history" => super::history_cmd::main(rest),
            "trend" => super::history_cmd::trend_main(rest),
            other => fail(&format!("unknown subcommand '{other}'")),
        },
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
    let list = match crate::workload::checked_jobs(&args.sources) {
        Ok(l) => l,
        Err(e) => return fail(&e.to_string()),
    };
    if args.warnings_fatal {
        if let Some(e) = super::fatal_warnings(&list.jobs) {
            return fail(&e);
        }
    }
    if args.showcmd {
        return print(&format!("{}\n", help::showcmd(&args.sources)));
    }
    if args.parse_only {
        return EXIT_OK;
    }
    let cluster = match crate::cluster::join(args.mpi, args.mpi_timeout_s) {
        Ok(c) => c.map(|c| std::sync::Arc::new(std::sync::Mutex::new(c))),
        Err(e) => return fail(&e),
    };
    let place = match &cluster {
        Some(c) => {
            let c = c.lock().expect("cluster");
            if let Err(e) = ranks_refuse(&args, &list.jobs) {
                // The same on every rank: rank 0 says it.
                return if c.rank() == 0 { fail(&e) } else { EXIT_FAIL };
            }
            c.place.clone()
        }
        None => crate::cluster::Placement::default(),
    };
    // Only rank 0 shows progress, notices and the report.
    let root = place.rank == 0;
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
        place,
    };
    let mut gathered = None;
    let mut remote = None;
    let mut hooks_box: Option<Box<dyn crate::run::session::SessionHooks>> = None;
    if let Some(c) = &cluster {
        let mut hooks = crate::cluster::hooks::ClusterHooks::new(c.clone());
        hooks.stonewall = args.mpi_stonewall;
        remote = Some(hooks.remote.clone());
        gathered = Some(hooks.gathered.clone());
        hooks_box = Some(Box::new(hooks));
    }
    let mut opts = opts;
    opts.run.remote = remote;
    let mut session = Session::new(list, opts);
    if let Some(h) = hooks_box {
        session = session.with_hooks(h);
    }
    let mut ready = match session.prepare() {
        Ok(r) => r,
        // A refusal agreed by every rank is said by rank 0 alone.
        Err(e) if e.to_string().is_empty() => return EXIT_FAIL,
        Err(e) => return fail(&e.to_string()),
    };
    if !root {
        let result = match ready.run() {
            Ok(r) => r,
            Err(e) => return fail(&e.to_string()),
        };
        return if result.interrupted || signals::received() {
            signals::exit_code().unwrap_or(128 + crate::sys::SIGINT)
        } else if result.failed() {
            EXIT_FAIL
        } else {
            EXIT_OK
        };
    }
    ready.announce();
    // The output file is created only once the jobs are known to be good.
    let sink = match Sink::new(args.output.as_deref()) {
        Ok(s) => std::sync::Arc::new(std::sync::Mutex::new(s)),
        Err(e) => return fail(&e),
    };
    if args.status_interval_ms > 0 {
        let sink = sink.clone();
        ready.set_status(run::monitor::StatusHook {
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
            let mut head = report::normal::run_header(ready.plan());
            if let Some(c) = &cluster {
                // "Starting N threads" on every rank: say so, and the total.
                let n = c.lock().expect("cluster").size() as usize;
                let clones = ready.plan().jobs.len();
                head.pop();
                head.push_str(&format!(
                    " on each of {n} MPI ranks ({} in all)\n",
                    clones * n
                ));
            }
            s.write(&head);
        }
    }
    let mut result = match ready.run() {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    let history = args.record_options();
    // The json+ document the history records (when it does).
    let mut recorded: Option<serde_json::Value> = None;
    let (result, text, failed) = match (&cluster, gathered) {
        (Some(c), Some(g)) => {
            let all = g.lock().expect("gathered").take().unwrap_or_default();
            let names = c.lock().expect("cluster").hosts.clone();
            let phases = crate::cluster::assemble::phases(&all);
            let hosts = crate::cluster::assemble::hosts(&result, all, &names);
            for h in &hosts {
                for jr in &h.result.jobs {
                    if let Some(msg) = &jr.outcome.error_msg {
                        output::stderr_line(&format!(
                            "iomark: job '{}' on {} (clone {}): {msg}",
                            jr.job.name(),
                            h.hostname,
                            jr.job.clone
                        ));
                    }
                }
            }
            let failed = result.failed() || hosts.iter().any(|h| h.result.failed());
            result.interrupted |= hosts.iter().any(|h| h.result.interrupted);
            let info = report::cluster::ClusterInfo {
                ranks: names.len() as u32,
                phases,
            };
            let mut rep = report::cluster::build(&hosts, &info);
            rep.jobs.label = args.label.clone();
            rep.all_clients.label = args.label.clone();
            let text = report::cluster::render(&rep, &outputs);
            if history.enabled {
                recorded = Some(report::cluster::document(&rep, true));
            }
            (result, text, failed)
        }
        _ => {
            for jr in &result.jobs {
                if let Some(msg) = &jr.outcome.error_msg {
                    output::stderr_line(&format!("iomark: job '{}': {msg}", jr.job.name()));
                }
            }
            let mut rep = report::build(&result);
            rep.label = args.label.clone();
            let text = report::render(&rep, &outputs);
            if history.enabled {
                recorded = Some(report::json::document(&rep, true));
            }
            let failed = result.failed();
            (result, text, failed)
        }
    };
    let failure = {
        // A third signal now waits until the report is written.
        let _writing = signals::Reporting::start();
        match sink.lock() {
            Ok(mut s) => {
                s.write(&text);
                s.finish()
            }
            Err(_) => Some("cannot write the report: its writer failed".into()),
        }
    };
    if let Some(m) = &failure {
        fail(m);
    }
    if let Some(doc) = recorded {
        // Only a complete run goes into the history.
        if failed || result.interrupted || signals::received() {
            if !signals::received() {
                output::stderr_line(
                    "iomark: the failed run is not recorded in the results history",
                );
            }
        } else {
            record_run(&args, &history, &doc);
        }
    }
    if result.interrupted || signals::received() {
        return signals::exit_code().unwrap_or(128 + crate::sys::SIGINT);
    }
    if failure.is_some() || failed {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
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
