//! The command line: fio's argument stream (options before the first
//! `--name` are global, each `--name=` starts a job, positional arguments
//! are job files) plus iomark's subcommands.
//!
//! Parsing only: turns argv into a `Command`; running it is `commands`.
//! A subcommand's arguments are parsed by its own table (`cmd`).

pub mod cmd;
pub mod commands;
pub mod completions;
pub mod flags;
pub mod help;
pub mod inflate;
pub mod manpage;
pub use crate::report::text;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::job::{options, Assignment, JobSources};
use crate::run::progress::ProgressMode;

/// Output formats selected with `--output-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Formats {
    pub normal: bool,
    pub terse: bool,
    pub json: bool,
    pub json_plus: bool,
}

impl Formats {
    pub fn parse(v: &str) -> Result<Formats, String> {
        let mut f = Formats::default();
        for part in v.split(',').map(str::trim) {
            match part {
                "normal" => f.normal = true,
                "terse" => f.terse = true,
                "json" => f.json = true,
                "json+" => f.json_plus = true,
                _ => return Err(flags::not_one_of("output-format", part, flags::FORMATS)),
            }
        }
        Ok(f)
    }
}

/// Settings of a fio-style run that are not job options.
#[derive(Clone, Debug)]
pub struct RunArgs {
    pub sources: JobSources,
    pub formats: Formats,
    pub output: Option<PathBuf>,
    pub terse_version: u32,
    pub append_terse: bool,
    pub eta: ProgressMode,
    pub eta_newline: bool,
    pub eta_newline_ms: u64,
    pub eta_interval_ms: u64,
    pub status_interval_ms: u64,
    pub parse_only: bool,
    pub showcmd: bool,
    pub readonly: bool,
    pub warnings_fatal: bool,
    pub fake_clock_ns: Option<u64>,
    /// `--max-jobs`: at most this many clones run at once.
    pub max_jobs: Option<u32>,
    /// `--bandwidth-log`: aggregate bandwidth logs of all jobs.
    pub agg_bw_log: bool,
    /// `--mpi`: run as one rank of an MPI job (also when detected).
    pub mpi: bool,
    /// `--mpi-timeout`: seconds before a silent rank stops the run.
    pub mpi_timeout_s: Option<u64>,
    /// `--mpi-stonewall`: the first rank to finish a phase ends it on all.
    pub mpi_stonewall: bool,
    /// `--mpi-per-rank`: every rank's clones apart in the report.
    pub mpi_per_rank: bool,
    /// `--mpi-host-detail`: hosts kept whole, at most.
    pub mpi_host_detail: Option<u32>,
    /// `--label`: names the run (JSON `iomark.label`) and records it in
    /// the results history.
    pub label: Option<String>,
    /// `--history`: record the run in the results history.
    pub history: bool,
    /// `--no-history`: never record it (with `--label`).
    pub no_history: bool,
    /// `--history-db`: the history database.
    pub history_db: Option<PathBuf>,
}

impl RunArgs {
    /// Whether and where the run is recorded: with `--label` or
    /// `--history`, unless `--no-history`.
    pub fn record_options(&self) -> crate::history::RecordOptions {
        crate::history::RecordOptions {
            enabled: (self.history || self.label.is_some()) && !self.no_history,
            db: self.history_db.clone(),
        }
    }
}

impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            sources: JobSources::default(),
            formats: Formats {
                normal: true,
                ..Formats::default()
            },
            output: None,
            terse_version: 3,
            append_terse: false,
            eta: ProgressMode::Auto,
            eta_newline: false,
            eta_newline_ms: 0,
            eta_interval_ms: 0,
            status_interval_ms: 0,
            parse_only: false,
            showcmd: false,
            readonly: false,
            warnings_fatal: false,
            fake_clock_ns: None,
            max_jobs: None,
            agg_bw_log: false,
            mpi: false,
            mpi_timeout_s: None,
            mpi_stonewall: false,
            mpi_per_rank: false,
            mpi_host_detail: None,
            label: None,
            history: false,
            no_history: false,
            history_db: None,
        }
    }
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub enum Command {
    Run(Box<RunArgs>),
    /// Text for standard output: a help page, the version, the man page,
    /// shell completions.
    Text(String),
    /// Bare `iomark`: a short usage on standard error, exit status 1.
    Usage(String),
    CmdHelp(Option<String>),
    EngHelp(Option<String>),
    /// `--inflate-log=FILE`: a compressed log as text.
    InflateLog(PathBuf),
    /// `iomark SUBCOMMAND …` with the remaining arguments.
    Sub(String, Vec<OsString>),
}

/// Subcommands that `commands` hands to their tables (`cmd`); any other first
/// argument (besides `help` and `completions`) is read as fio-style
/// input (a job file named like a command can be given as `./NAME`).
pub const SUBCOMMANDS: &[&str] = &[
    "quick", "suite", "sweep", "compare", "report", "history", "trend",
];

/// Error text for an unknown `--name`: suggests a run flag when one is a
/// near miss (`--outputformat`), otherwise a job option.
fn unknown_option(name: &str) -> String {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    let names =
        flags::shown().flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()));
    let flag = options::closest(&norm, names);
    let suggestion = match flag {
        Some((d, f)) if d <= 1 => Some(f),
        _ => options::suggest(name).or(match flag {
            Some((d, f)) if d <= 2 => Some(f),
            _ => None,
        }),
    };
    let name = crate::job::value::excerpt(name);
    match suggestion {
        Some(s) => format!("unknown option '--{name}' (did you mean '--{s}'?)"),
        None => format!("unknown option '--{name}' (see iomark --help and iomark --cmdhelp)"),
    }
}

fn err(msg: impl Into<String>) -> String {
    msg.into()
}

fn os_to_string(v: OsString, what: &str) -> Result<String, String> {
    v.into_string()
        .map_err(|_| err(format!("{what}: the value is not valid UTF-8")))
}

/// Parses the whole command line (without argv[0]); a job file `-` is
/// read from standard input.
pub fn parse(args: Vec<OsString>) -> Result<Command, String> {
    parse_with(args, &mut std::io::stdin().lock())
}

/// Everything `iomark --parse-only` checks, in memory: parses `args` (a
/// job file `-` is read from `stdin`), then builds and checks the jobs,
/// printing nothing and touching no target. Returns the number of jobs a
/// run would start (0 for help and subcommands), or the one-line error
/// iomark would print after `iomark: `. The fuzz targets and the
/// generated-input tests drive this.
pub fn parse_only(args: Vec<OsString>, stdin: &[u8]) -> Result<usize, String> {
    match parse_with(args, &mut &stdin[..])? {
        Command::Run(run) => crate::workload::checked_jobs(&run.sources)
            .map(|list| list.jobs.len())
            .map_err(|e| e.to_string()),
        Command::CmdHelp(Some(name)) => help::cmdhelp_one(&name).map(|_| 0),
        Command::EngHelp(e) => help::enghelp(e.as_deref()).map(|_| 0),
        Command::Usage(_) => Err(help::NO_JOB.into()),
        Command::Sub(name, rest) => cmd::check(&name, rest)
            .map(|_| 0)
            .map_err(|e| format!("{name}: {e}")),
        _ => Ok(0),
    }
}

/// `parse` with standard input given; errors are one line.
pub fn parse_with(args: Vec<OsString>, stdin: &mut dyn std::io::Read) -> Result<Command, String> {
    let late = command_after_options(&args);
    parse_args(args, stdin)
        .map_err(|e| late.unwrap_or_else(|| crate::job::error::one_line(&e).into_owned()))
}

/// `iomark --units MB quick`: a command after options (which, before a
/// command, are fio's). The answer when that line fails: the command
/// first, followed by what came before it when those are its options.
fn command_after_options(args: &[OsString]) -> Option<String> {
    let words: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    if !words.first()?.starts_with('-') {
        return None;
    }
    let at = words.iter().position(|w| SUBCOMMANDS.contains(w))?;
    let cmd = words[at];
    let page = cmd::pages().into_iter().find(|p| p.name == cmd)?;
    let its_own = words[..at].iter().all(|w| match w.strip_prefix("--") {
        Some(o) => {
            let name = o.split('=').next().unwrap_or(o);
            page.flags()
                .any(|f| f.name == name || f.aliases.contains(&name))
        }
        // A value of the option before it.
        None => true,
    });
    let plain = words
        .iter()
        .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_graphic()));
    if its_own && plain && words.len() <= 12 {
        let mut line = vec!["iomark", cmd];
        line.extend(&words[..at]);
        line.extend(&words[at + 1..]);
        Some(format!(
            "'{cmd}' comes first, its options after it: {}",
            line.join(" ")
        ))
    } else {
        Some(format!(
            "'{cmd}' is a command and comes first, its options after it (see iomark {cmd} --help)"
        ))
    }
}

/// A run flag's value as text without control characters.
fn flag_text(v: OsString, what: &str) -> Result<String, String> {
    let v = os_to_string(v, what)?;
    match crate::job::jobfile::bad_text("the value", &v) {
        Some(why) => Err(format!("{what}: {why}")),
        None => Ok(v),
    }
}

/// `iomark help [COMMAND]`.
fn help_command(rest: &[OsString]) -> Result<Command, String> {
    let names = || {
        flags::COMMANDS
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match rest {
        [] => Ok(Command::Text(help::usage())),
        [one] => {
            let name = one.to_str().unwrap_or("");
            match flags::find_command(name) {
                Some(c) if SUBCOMMANDS.contains(&c.name) => {
                    Ok(Command::Sub(c.name.to_string(), vec!["--help".into()]))
                }
                Some(c) => Ok(Command::Text((c.help)())),
                None if name == "-h" || name == "--help" => Ok(Command::Text(help::usage())),
                None => Err(format!(
                    "help: unknown command '{}' (commands: {})",
                    one.to_string_lossy(),
                    names()
                )),
            }
        }
        _ => Err("help: give at most one COMMAND (see iomark help)".into()),
    }
}

fn parse_args(args: Vec<OsString>, stdin: &mut dyn std::io::Read) -> Result<Command, String> {
    if args.is_empty() {
        return Ok(Command::Usage(help::bare_usage()));
    }
    if let Some(first) = args.first().and_then(|a| a.to_str()) {
        if SUBCOMMANDS.contains(&first) {
            return Ok(Command::Sub(first.to_string(), args[1..].to_vec()));
        }
        match first {
            "help" => return help_command(&args[1..]),
            "completions" => return completions::command(&args[1..]).map(Command::Text),
            _ => {}
        }
    }
    use lexopt::Arg;
    let mut p = lexopt::Parser::from_args(args);
    let mut run = RunArgs::default();
    let mut current: Option<(String, Vec<Assignment>)> = None;
    let mut jobfiles: Vec<PathBuf> = Vec::new();
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let flag = match arg {
            Arg::Value(v) => {
                jobfiles.push(PathBuf::from(v));
                continue;
            }
            Arg::Short(c) => flags::find_short(c)
                .ok_or_else(|| format!("unknown option '-{c}' (see iomark --help)"))?,
            Arg::Long("name") => {
                let v = flag_text(p.value().map_err(|e| e.to_string())?, "--name")?;
                if v.trim().is_empty() {
                    return Err("--name needs a job name".into());
                }
                if let Some(job) = current.take() {
                    run.sources.cli_jobs.push(job);
                }
                current = Some((v, Vec::new()));
                continue;
            }
            Arg::Long(name) => match flags::find(name) {
                Some(f) => f,
                None => {
                    let name = name.to_string();
                    let a = job_option(&mut p, &name)?;
                    match &mut current {
                        Some((_, items)) => items.push(a),
                        None => run.sources.global.push(a),
                    }
                    continue;
                }
            },
        };
        if let flags::Support::No(why) = flag.support {
            return Err(format!(
                "option '--{}' is not supported by iomark: {why}",
                flag.name
            ));
        }
        let value = match flag.value {
            flags::Value::Switch => None,
            flags::Value::Optional(_) => p.optional_value(),
            flags::Value::Required(_) => Some(
                p.value()
                    .map_err(|_| format!("option '--{}' needs a value", flag.name))?,
            ),
        };
        if let Some(cmd) = (flag.apply)(&mut run, value)? {
            return Ok(cmd);
        }
    }
    if let Some(job) = current.take() {
        run.sources.cli_jobs.push(job);
    }
    if run.append_terse {
        // The selected formats plus terse.
        run.formats.terse = true;
    }
    for f in jobfiles {
        let sections = if f.as_os_str() == "-" {
            crate::job::jobfile::read_jobfile_from(stdin, std::path::Path::new("<stdin>"))
        } else {
            crate::job::jobfile::read_jobfile(&f)
        }
        .map_err(|e| near_command(&f).unwrap_or_else(|| e.to_string()))?;
        run.sources.files.push((f, sections));
    }
    Ok(Command::Run(Box::new(run)))
}

/// For a job file that does not exist and is named like a mistyped
/// command (`iomark quik`), the line that says so and names the command.
fn near_command(f: &std::path::Path) -> Option<String> {
    let name = f.to_str()?;
    if f.exists() || name.contains(['/', '\\', '.']) {
        return None;
    }
    let commands = SUBCOMMANDS.iter().copied().chain(["help", "completions"]);
    match options::closest(&name.to_ascii_lowercase(), commands) {
        Some((d, c)) if d <= 2 => Some(format!(
            "'{}' is neither a command nor a job file (did you mean 'iomark {c}'?)",
            crate::job::value::excerpt(name)
        )),
        _ => None,
    }
}

/// A job option given as `--NAME[=VALUE]` (or `--NAME VALUE`).
fn job_option(p: &mut lexopt::Parser, name: &str) -> Result<Assignment, String> {
    let def = options::lookup(name).ok_or_else(|| unknown_option(name))?;
    let value = if def.value_optional() {
        p.optional_value()
            .map(|v| os_to_string(v, name))
            .transpose()?
    } else {
        match p.optional_value() {
            Some(v) => Some(os_to_string(v, name)?),
            None => match p.value() {
                Ok(v) => Some(os_to_string(v, name)?),
                Err(_) => {
                    return Err(format!(
                        "option '{}' needs a value ({})",
                        def.name,
                        def.kind.describe()
                    ))
                }
            },
        }
    };
    Assignment::cli(name, value.as_deref()).map_err(String::from)
}

/// `--warnings-fatal`: prints the warnings about the jobs (options that
/// have no effect, or not the one they suggest; see `run::notes`) and
/// returns the error that stops the run, when there are any.
pub fn fatal_warnings(jobs: &[crate::job::JobSpec]) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    for n in jobs.iter().flat_map(crate::run::notes) {
        if seen.insert(n.clone()) {
            crate::run::output::stderr_line(&format!("iomark: warning: {n}"));
        }
    }
    (!seen.is_empty()).then(|| {
        format!(
            "{} warning{} and --warnings-fatal: nothing was run",
            seen.len(),
            if seen.len() == 1 { "" } else { "s" }
        )
    })
}
