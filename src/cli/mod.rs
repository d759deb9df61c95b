//! The command line: fio's argument stream (options before the first
//! `--name` are global, each `--name=` starts a job, positional arguments
//! are job files) plus iomark's subcommands.
//!
//! Parsing only: turns argv into a `Command`; running it is `commands`.

pub mod commands;
pub mod help;

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
                _ => {
                    return Err(format!(
                        "--output-format: '{part}' is not one of: normal, terse, json, json+"
                    ))
                }
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
    pub max_jobs: Option<u32>,
    /// `--bandwidth-log`: aggregate bandwidth logs of all jobs.
    pub agg_bw_log: bool,
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
        }
    }
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub enum Command {
    Run(Box<RunArgs>),
    Help,
    Version,
    CmdHelp(Option<String>),
    EngHelp(Option<String>),
    /// `iomark SUBCOMMAND …` with the remaining arguments.
    Sub(String, Vec<OsString>),
}

/// Subcommands; any other first argument is read as fio-style input (a
/// job file named like one of these can be given as `./NAME`).
pub const SUBCOMMANDS: &[&str] = &["quick", "suite", "sweep", "compare", "report"];

/// fio command-line options iomark does not provide, with the reason.
const UNSUPPORTED_CLI: &[(&str, &str)] = &[
    (
        "server",
        "client/server mode is not supported; run iomark on each host",
    ),
    (
        "client",
        "client/server mode is not supported; run iomark on each host",
    ),
    ("daemonize", "client/server mode is not supported"),
    ("remote-config", "client/server mode is not supported"),
    ("idle-prof", "CPU idleness profiling is not supported"),
    ("inflate-log", "compressed logs are not supported"),
    ("trigger-file", "triggers are not supported"),
    ("trigger-timeout", "triggers are not supported"),
    ("trigger", "triggers are not supported"),
    ("trigger-remote", "triggers are not supported"),
    ("crctest", "checksum self-tests are not supported"),
    ("merge-blktrace-only", "blktrace merging is not supported"),
    (
        "alloc-size",
        "iomark needs no shared memory pool; drop this option",
    ),
    ("debug", "fio's debug categories are not supported"),
    ("latency-log", "use write_lat_log instead"),
    ("aux-path", "iomark keeps no state files"),
    ("cpuclock-test", "iomark does not use a CPU clock source"),
];

/// iomark's own run flags (not job options), for "did you mean".
const RUN_FLAGS: &[&str] = &[
    "help",
    "version",
    "cmdhelp",
    "enghelp",
    "output",
    "output-format",
    "minimal",
    "append-terse",
    "terse-version",
    "eta",
    "eta-newline",
    "eta-interval",
    "status-interval",
    "section",
    "parse-only",
    "showcmd",
    "readonly",
    "warnings-fatal",
    "max-jobs",
    "bandwidth-log",
];

/// Error text for an unknown `--name`: suggests a run flag when one is a
/// near miss (`--outputformat`), otherwise a job option.
fn unknown_option(name: &str) -> String {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    let flag = options::closest(&norm, RUN_FLAGS.iter().copied());
    let suggestion = match flag {
        Some((d, f)) if d <= 1 => Some(f),
        _ => options::suggest(name).or(match flag {
            Some((d, f)) if d <= 2 => Some(f),
            _ => None,
        }),
    };
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
        _ => Ok(0),
    }
}

/// `parse` with standard input given; errors are one line.
pub fn parse_with(args: Vec<OsString>, stdin: &mut dyn std::io::Read) -> Result<Command, String> {
    parse_args(args, stdin).map_err(|e| crate::job::error::one_line(&e).into_owned())
}

/// A run flag's value as text without control characters.
fn flag_text(v: OsString, what: &str) -> Result<String, String> {
    let v = os_to_string(v, what)?;
    match crate::job::jobfile::bad_text("the value", &v) {
        Some(why) => Err(format!("{what}: {why}")),
        None => Ok(v),
    }
}

fn parse_args(args: Vec<OsString>, stdin: &mut dyn std::io::Read) -> Result<Command, String> {
    if let Some(first) = args.first().and_then(|a| a.to_str()) {
        if SUBCOMMANDS.contains(&first) {
            return Ok(Command::Sub(first.to_string(), args[1..].to_vec()));
        }
    }
    use lexopt::Arg;
    let mut p = lexopt::Parser::from_args(args);
    let mut run = RunArgs::default();
    let mut current: Option<(String, Vec<Assignment>)> = None;
    let mut jobfiles: Vec<PathBuf> = Vec::new();
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Short('h') => return Ok(Command::Help),
            Arg::Short(c) => return Err(format!("unknown option '-{c}' (see iomark --help)")),
            Arg::Value(v) => jobfiles.push(PathBuf::from(v)),
            Arg::Long(name) => {
                let name = name.to_string();
                match name.as_str() {
                    "help" => return Ok(Command::Help),
                    "version" => return Ok(Command::Version),
                    "cmdhelp" => {
                        let v = p
                            .optional_value()
                            .map(|v| flag_text(v, "--cmdhelp"))
                            .transpose()?;
                        return Ok(Command::CmdHelp(v.filter(|s| s != "all")));
                    }
                    "enghelp" => {
                        let v = p
                            .optional_value()
                            .map(|v| flag_text(v, "--enghelp"))
                            .transpose()?;
                        return Ok(Command::EngHelp(v));
                    }
                    "output" => {
                        run.output = Some(PathBuf::from(p.value().map_err(|e| e.to_string())?))
                    }
                    "output-format" => {
                        let v =
                            os_to_string(p.value().map_err(|e| e.to_string())?, "--output-format")?;
                        run.formats = Formats::parse(&v)?;
                    }
                    "minimal" => {
                        run.formats = Formats {
                            terse: true,
                            ..Formats::default()
                        };
                    }
                    "append-terse" => run.append_terse = true,
                    "terse-version" => {
                        let v =
                            os_to_string(p.value().map_err(|e| e.to_string())?, "--terse-version")?;
                        run.terse_version = match v.trim() {
                            "2" => 2,
                            "3" => 3,
                            "4" => 4,
                            "5" => 5,
                            _ => {
                                return Err(format!(
                                    "--terse-version: '{v}' is not one of: 2, 3, 4, 5"
                                ))
                            }
                        };
                    }
                    "eta" => {
                        let v = os_to_string(p.value().map_err(|e| e.to_string())?, "--eta")?;
                        run.eta = ProgressMode::parse(&v)?;
                    }
                    "eta-newline" => {
                        let v = p
                            .optional_value()
                            .map(|v| os_to_string(v, "--eta-newline"))
                            .transpose()?;
                        run.eta_newline = true;
                        if let Some(v) = v {
                            let us = crate::job::value::parse_time_us(
                                &v,
                                crate::job::value::TimeUnit::Sec,
                            )
                            .map_err(|e| format!("--eta-newline: {e}"))?;
                            run.eta_newline_ms = us / 1000;
                        }
                    }
                    "eta-interval" => {
                        let v =
                            os_to_string(p.value().map_err(|e| e.to_string())?, "--eta-interval")?;
                        let us =
                            crate::job::value::parse_time_us(&v, crate::job::value::TimeUnit::Msec)
                                .map_err(|e| format!("--eta-interval: {e}"))?;
                        run.eta_interval_ms = (us / 1000).max(1);
                    }
                    "status-interval" => {
                        let v = os_to_string(
                            p.value().map_err(|e| e.to_string())?,
                            "--status-interval",
                        )?;
                        let us =
                            crate::job::value::parse_time_us(&v, crate::job::value::TimeUnit::Sec)
                                .map_err(|e| format!("--status-interval: {e}"))?;
                        run.status_interval_ms = us / 1000;
                    }
                    "section" => {
                        let v = flag_text(p.value().map_err(|e| e.to_string())?, "--section")?;
                        run.sources.sections.push(v);
                    }
                    "parse-only" => run.parse_only = true,
                    "showcmd" => run.showcmd = true,
                    "readonly" => run.readonly = true,
                    "warnings-fatal" => run.warnings_fatal = true,
                    "bandwidth-log" => run.agg_bw_log = true,
                    "max-jobs" => {
                        let v = os_to_string(p.value().map_err(|e| e.to_string())?, "--max-jobs")?;
                        run.max_jobs = Some(
                            v.parse()
                                .map_err(|_| format!("--max-jobs: '{v}' is not a number"))?,
                        );
                    }
                    "fake-clock" => {
                        // Hidden: deterministic timings for snapshot tests.
                        let v =
                            os_to_string(p.value().map_err(|e| e.to_string())?, "--fake-clock")?;
                        run.fake_clock_ns =
                            Some(v.parse().map_err(|_| {
                                format!("--fake-clock: '{v}' is not a number of ns")
                            })?);
                    }
                    "name" => {
                        let v = flag_text(p.value().map_err(|e| e.to_string())?, "--name")?;
                        if v.trim().is_empty() {
                            return Err("--name needs a job name".into());
                        }
                        if let Some(job) = current.take() {
                            run.sources.cli_jobs.push(job);
                        }
                        current = Some((v, Vec::new()));
                    }
                    other => {
                        if let Some((_, why)) = UNSUPPORTED_CLI.iter().find(|(n, _)| *n == other) {
                            return Err(format!(
                                "option '--{other}' is not supported by iomark: {why}"
                            ));
                        }
                        let def = options::lookup(other).ok_or_else(|| unknown_option(other))?;
                        let value = if def.value_optional() {
                            p.optional_value()
                                .map(|v| os_to_string(v, other))
                                .transpose()?
                        } else {
                            match p.optional_value() {
                                Some(v) => Some(os_to_string(v, other)?),
                                None => match p.value() {
                                    Ok(v) => Some(os_to_string(v, other)?),
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
                        let a = Assignment::cli(other, value.as_deref())?;
                        match &mut current {
                            Some((_, items)) => items.push(a),
                            None => run.sources.global.push(a),
                        }
                    }
                }
            }
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
        .map_err(|e| e.to_string())?;
        run.sources.files.push((f, sections));
    }
    Ok(Command::Run(Box::new(run)))
}
