//! The run flags: one definition per flag of a fio-style run (`--output`,
//! `--eta`, `--max-jobs`, …) with its name, aliases, value, help and the
//! code that applies it; and one per command (`quick`, `suite`, …).
//!
//! These tables drive parsing (`cli::parse`), `--help`, the man page
//! (`--man`) and the shell completions (`iomark completions SHELL`), so
//! a flag added here is documented and completed everywhere. Job options
//! (`--bs`, `--rw`, …) are not run flags: they live in the job option
//! table (`job::options`). fio's run flags that iomark does not provide
//! are listed too, with the reason, so using one is a clear error.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{Command, Formats, RunArgs};
use crate::job::value::{parse_time_us, TimeUnit};
use crate::run::progress::ProgressMode;

/// What a flag does with its value: change the run, or answer at once
/// with a command of its own (`--help`, `--man`, …).
pub type Apply = fn(&mut RunArgs, Option<OsString>) -> Result<Option<Command>, String>;

/// How a flag takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// No value (`--minimal`).
    Switch,
    /// A value, as `--flag=V` or `--flag V`; the placeholder names it.
    Required(&'static str),
    /// A value only as `--flag=V`.
    Optional(&'static str),
}

/// Groups flags in `--help` and the man page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Output,
    Progress,
    Jobs,
    History,
    Info,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::Output,
        Category::Progress,
        Category::Jobs,
        Category::History,
        Category::Info,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Category::Output => "Output",
            Category::Progress => "Progress and interim reports",
            Category::Jobs => "Choosing and checking jobs",
            Category::History => "Results history",
            Category::Info => "Help and tools",
        }
    }
}

/// What shell completion offers for a flag's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Complete {
    Nothing,
    File,
    Choices(&'static [&'static str]),
    /// A job option name.
    JobOption,
    /// An I/O engine name.
    Engine,
}

/// Whether a flag is shown and provided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    /// Works, but is for iomark's own tests: not documented or completed.
    Hidden,
    /// fio has it, iomark does not: using it is an error giving the reason.
    No(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct Flag {
    pub name: &'static str,
    pub short: Option<char>,
    pub aliases: &'static [&'static str],
    pub value: Value,
    pub category: Category,
    /// One line for `--help`.
    pub help: &'static str,
    /// Paragraphs for the man page; the one-line help when empty.
    pub long_help: &'static str,
    pub complete: Complete,
    pub support: Support,
    pub apply: Apply,
}

fn refuse(_: &mut RunArgs, _: Option<OsString>) -> Result<Option<Command>, String> {
    Err("not supported".into())
}

const fn flag(
    name: &'static str,
    value: Value,
    category: Category,
    help: &'static str,
    apply: Apply,
) -> Flag {
    Flag {
        name,
        short: None,
        aliases: &[],
        value,
        category,
        help,
        long_help: "",
        complete: Complete::Nothing,
        support: Support::Yes,
        apply,
    }
}

/// A fio flag iomark does not provide.
const fn not_provided(name: &'static str, value: Value, reason: &'static str) -> Flag {
    Flag {
        support: Support::No(reason),
        ..flag(name, value, Category::Info, "", refuse)
    }
}

impl Flag {
    const fn short(mut self, c: char) -> Self {
        self.short = Some(c);
        self
    }

    const fn long(mut self, text: &'static str) -> Self {
        self.long_help = text;
        self
    }

    const fn complete(mut self, c: Complete) -> Self {
        self.complete = c;
        self
    }

    const fn hidden(mut self) -> Self {
        self.support = Support::Hidden;
        self
    }

    /// Documented in `--help`, the man page and the completions.
    pub fn is_shown(&self) -> bool {
        self.support == Support::Yes
    }

    /// `--name=VALUE`, `--name[=VALUE]` or `--name`, with `-c, ` before
    /// it when it has a short form.
    pub fn synopsis(&self) -> String {
        let short = self.short.map(|c| format!("-{c}, ")).unwrap_or_default();
        match self.value {
            Value::Switch => format!("{short}--{}", self.name),
            Value::Required(v) => format!("{short}--{}={v}", self.name),
            Value::Optional(v) => format!("{short}--{}[={v}]", self.name),
        }
    }

    pub fn long_help(&self) -> &'static str {
        if self.long_help.is_empty() {
            self.help
        } else {
            self.long_help
        }
    }
}

fn text(v: Option<OsString>, flag: &str) -> Result<String, String> {
    let v = v.ok_or_else(|| format!("option '--{flag}' needs a value"))?;
    let v = v
        .into_string()
        .map_err(|_| format!("--{flag}: the value is not valid UTF-8"))?;
    match crate::job::jobfile::bad_text("the value", &v) {
        Some(why) => Err(format!("--{flag}: {why}")),
        None => Ok(v),
    }
}

pub use crate::report::text::not_one_of;

fn time_us(v: Option<OsString>, flag: &str, unit: TimeUnit) -> Result<u64, String> {
    parse_time_us(&text(v, flag)?, unit).map_err(|e| format!("--{flag}: {e}"))
}

pub const FORMATS: &[&str] = &["normal", "terse", "json", "json+"];
const ETA: &[&str] = &["auto", "always", "never"];
const TERSE_VERSIONS: &[&str] = &["2", "3", "4", "5"];
pub const SHELLS: &[&str] = &["bash", "zsh", "fish"];

use Category::{History, Info, Jobs, Output, Progress};
use Value::{Optional, Required, Switch};

/// Every run flag, in the order `--help` shows them.
pub const FLAGS: &[Flag] = &[
    // Output.
    flag("output", Required("FILE"), Output, "write the report to FILE instead of standard output", |r, v| {
        r.output = Some(PathBuf::from(v.unwrap_or_default()));
        Ok(None)
    })
    .long("Write the report to FILE (created, or truncated by the first write) instead of standard output. Progress and warnings still go to the terminal's standard error. A link at FILE is followed only to a terminal, pipe or device (/dev/stdout), never to a regular file. A report that cannot be written completely is an error, and a partial regular file is removed.")
    .complete(Complete::File),
    flag("output-format", Required("FMT"), Output, "normal, terse, json or json+, comma-separated", |r, v| {
        r.formats = Formats::parse(&text(v, "output-format")?)?;
        Ok(None)
    })
    .long("The report formats, comma-separated: normal (fio's text report, the default), terse (fio's semicolon-separated lines, see --terse-version), json, and json+ (json with the latency histogram's bins). Several formats are written one after another.")
    .complete(Complete::Choices(FORMATS)),
    flag("minimal", Switch, Output, "terse output only (same as --output-format=terse)", |r, _| {
        r.formats = Formats { terse: true, ..Formats::default() };
        Ok(None)
    }),
    flag("terse-version", Required("N"), Output, "terse format version: 2, 3, 4 or 5 (default 3)", |r, v| {
        let v = text(v, "terse-version")?;
        r.terse_version = match v.trim() {
            "2" => 2,
            "3" => 3,
            "4" => 4,
            "5" => 5,
            _ => return Err(not_one_of("terse-version", &v, TERSE_VERSIONS)),
        };
        Ok(None)
    })
    .long("The version of the terse format: 2, 3 (the default), 4 or 5, with the fields fio writes for each.")
    .complete(Complete::Choices(TERSE_VERSIONS)),
    flag("append-terse", Switch, Output, "terse output after the other formats", |r, _| {
        r.append_terse = true;
        Ok(None)
    }),
    flag("bandwidth-log", Switch, Output, "write aggregate bandwidth logs of all jobs", |r, _| {
        r.agg_bw_log = true;
        Ok(None)
    })
    .long("Write bandwidth logs of all jobs together (agg-read_bw.log, agg-write_bw.log, agg-trim_bw.log in the current directory), in fio's log format."),
    // Progress.
    flag("eta", Required("WHEN"), Progress, "live progress line: auto (on a terminal), always or never", |r, v| {
        let v = text(v, "eta")?;
        r.eta = ProgressMode::parse(&v).map_err(|_| not_one_of("eta", &v, ETA))?;
        Ok(None)
    })
    .long("When to show the live progress line: auto (the default) shows it when standard output, or standard error for JSON and terse output, is a terminal; always and never force it on or off.")
    .complete(Complete::Choices(ETA)),
    flag("eta-newline", Optional("TIME"), Progress, "print each progress update on its own line (with TIME: a new line only that often)", |r, v| {
        r.eta_newline = true;
        if v.is_some() {
            r.eta_newline_ms = time_us(v, "eta-newline", TimeUnit::Sec)? / 1000;
        }
        Ok(None)
    }),
    flag("eta-interval", Required("TIME"), Progress, "time between progress updates (default 1s)", |r, v| {
        r.eta_interval_ms = (time_us(v, "eta-interval", TimeUnit::Msec)? / 1000).max(1);
        Ok(None)
    })
    .long("Time between progress updates (default 1s; a bare number is in milliseconds)."),
    flag("status-interval", Required("TIME"), Progress, "print the full report every TIME while running", |r, v| {
        r.status_interval_ms = time_us(v, "status-interval", TimeUnit::Sec)? / 1000;
        Ok(None)
    })
    .long("Write the full report, in the selected formats, every TIME while the jobs run (a bare number is in seconds), then the final one."),
    // Jobs.
    flag("section", Required("NAME"), Jobs, "run only the job NAME of the job files (repeatable)", |r, v| {
        r.sources.sections.push(text(v, "section")?);
        Ok(None)
    })
    .long("Run only the job section NAME of the job files; give it several times to run several sections. Global sections still apply. A name that matches no job is an error."),
    flag("parse-only", Switch, Jobs, "check the job description and exit", |r, _| {
        r.parse_only = true;
        Ok(None)
    })
    .long("Read and check the job files and options, as a run would, and exit without touching any target: exit status 0 when they are valid."),
    flag("showcmd", Switch, Jobs, "print the jobs as one iomark command line", |r, _| {
        r.showcmd = true;
        Ok(None)
    })
    .long("Print the jobs of the job files and options as one iomark command line that runs the same jobs, and exit."),
    flag("readonly", Switch, Jobs, "refuse jobs that change files; create or extend none", |r, _| {
        r.readonly = true;
        Ok(None)
    })
    .long("A safety check: refuse to start when any job writes, trims, appends, truncates, creates or deletes files (verify_only jobs only read), and never create or extend a file: a missing or short file is an error."),
    flag("warnings-fatal", Switch, Jobs, "refuse to run when a job draws a warning", |r, _| {
        r.warnings_fatal = true;
        Ok(None)
    })
    .long("Treat the warnings about the job description (options that have no effect, or not the one they suggest) as errors: print them and exit with status 1 before anything runs."),
    flag("max-jobs", Required("N"), Jobs, "run at most N job clones at once; the others wait for a turn", |r, v| {
        let v = text(v, "max-jobs")?;
        let n: u32 = v.trim().parse().map_err(|_| format!("--max-jobs: '{v}' is not a number"))?;
        if n == 0 {
            return Err("--max-jobs: must be at least 1".into());
        }
        r.max_jobs = Some(n);
        Ok(None)
    })
    .long("Run at most N job clones (numjobs counted) at the same time: the others start, in job order, as running ones finish. Clones of one job that start at different times are measured each over its own run time."),
    flag("mpi", Switch, Jobs, "run as one rank of an MPI job (detected under mpirun)", |r, _| {
        r.mpi = true;
        Ok(None)
    })
    .long("Run the jobs as one rank of an MPI job: started as `mpirun -np N iomark job.fio`, every rank runs the whole job list on its host, the ranks start each stonewall phase together, and rank 0 writes one report with every host's results and their exact merge. Under mpirun (Open MPI, MPICH, PMIx) this is detected without the flag. Needs iomark built with `cargo build --release --features mpi`."),
    flag("mpi-per-rank", Switch, Jobs, "under MPI, report every rank's clones apart, not merged per host", |r, _| {
        r.mpi_per_rank = true;
        Ok(None)
    })
    .long("Under MPI the ranks of one host merge their results before sending them on (exactly: counters summed, latency histograms merged bucket by bucket), so each host reports one entry per job and rank 0 holds one result per host whatever the number of ranks. With this flag every clone of every rank is kept apart in its host's report, as on one host; meant for small runs (rank 0 then holds every rank's results). When all ranks run on one host, they are reported apart anyway."),
    flag("mpi-host-detail", Required("N"), Jobs, "under MPI, keep every host's full results for up to N hosts (100)", |r, v| {
        let v = text(v, "mpi-host-detail")?;
        let n: u32 = v.trim().parse().map_err(|_| format!("--mpi-host-detail: '{v}' is not a number of hosts"))?;
        r.mpi_host_detail = Some(n);
        Ok(None)
    })
    .long("Under MPI, rank 0 keeps each host's full results (its report block, json+ bins, timeline and environment) for runs over up to N hosts (default 100). Past N hosts every host is kept in brief: per phase and direction its I/Os, bytes, bandwidth, IOPS and completion latency (min, max, mean, 50th to 99.99th percentile), per job section its run status figures and first error; each host's full figures are merged exactly into the All clients entries on the way up, so rank 0 holds a few hundred bytes per host. The text then gives one line per host and phase, the JSON a summary per host in iomark.cluster.hosts and no per-host client_stats entries. A larger N keeps every host's json+ bins, at some 100 KB of rank 0's memory per host."),
    flag("mpi-stonewall", Switch, Jobs, "under MPI, end each phase on every rank when the first rank ends it", |r, _| {
        r.mpi_stonewall = true;
        Ok(None)
    })
    .long("Under MPI: when the first rank finishes a stonewall phase (its clones' size or runtime done), every other rank stops that phase's clones at once, so that every figure is taken while all ranks were running (IOR's stonewalling). Without it, the report gives both: the figures while all ranks ran and until the last one finished."),
    flag("mpi-timeout", Required("SECS"), Jobs, "give up on a silent MPI rank after SECS seconds (60)", |r, v| {
        let v = text(v, "mpi-timeout")?;
        let n: u64 = v.trim().parse().map_err(|_| format!("--mpi-timeout: '{v}' is not a number of seconds"))?;
        if n == 0 {
            return Err("--mpi-timeout: must be at least 1 second".into());
        }
        r.mpi_timeout_s = Some(n);
        Ok(None)
    })
    .long("How long a rank may stay silent (every rank sends its neighbours a heartbeat twice a second, and watches theirs all the time, mid-phase too) before it is named, with its host: every rank stops, rank 0 reports what reached it with the silent rank marked missing, and every rank is gone within SECS + 1 seconds, with exit status 1. Default: 60 seconds."),
    // Results history.
    flag("label", Required("NAME"), History, "name the run and record it in the results history", |r, v| {
        let v = text(v, "label")?;
        r.label = Some(crate::history::check_label(&v).map_err(|e| format!("--label: {e}"))?);
        Ok(None)
    })
    .long("Name the run: the JSON report carries the name as \"label\" in its \"iomark\" object, and the run is recorded in the results history under it (see iomark help history), where iomark compare --base @NAME and iomark trend find it."),
    flag("history", Switch, History, "record the run in the results history", |r, _| {
        r.history = true;
        Ok(None)
    })
    .long("Record the run in the results history (done anyway with --label). quick, suite and sweep record every run unless given --no-history."),
    flag("no-history", Switch, History, "do not record the run (with --label)", |r, _| {
        r.no_history = true;
        Ok(None)
    }),
    flag("history-db", Required("FILE"), History, "the results history to record in", |r, v| {
        r.history_db = Some(PathBuf::from(text(v, "history-db")?));
        Ok(None)
    })
    .long("The SQLite database of the results history. Default: $IOMARK_HISTORY_DB, else $XDG_DATA_HOME/iomark/history.sqlite, else ~/.local/share/iomark/history.sqlite.")
    .complete(Complete::File),
    // Help and tools.
    flag("help", Switch, Info, "this help", |_, _| Ok(Some(Command::Text(super::help::usage()))))
        .short('h')
        .long("Print the help: usage, commands, run flags, examples and exit statuses. iomark help COMMAND, or iomark COMMAND --help, prints a command's."),
    flag("version", Switch, Info, "print the version", |_, _| Ok(Some(Command::Text(super::help::version()))))
        .short('V')
        .long("Print the version (iomark-VERSION, as fio prints fio-VERSION)."),
    flag("cmdhelp", Optional("OPTION"), Info, "list the job options, or describe one", |_, v| {
        let v = v.map(|v| text(Some(v), "cmdhelp")).transpose()?;
        Ok(Some(Command::CmdHelp(v.filter(|s| s != "all"))))
    })
    .long("Without a value (or with all), list every job option with its one-line help, by category; with OPTION, describe that option: aliases, type, default, valid values.")
    .complete(Complete::JobOption),
    flag("enghelp", Optional("ENGINE[,OPTION]"), Info, "list the I/O engines, or an engine's options", |_, v| {
        let v = v.map(|v| text(Some(v), "enghelp")).transpose()?;
        Ok(Some(Command::EngHelp(v)))
    })
    .long("Without a value, list the I/O engines iomark provides; with ENGINE, list that engine's own options; with ENGINE,OPTION, describe one of them.")
    .complete(Complete::Engine),
    flag("man", Switch, Info, "print the manual page (roff)", |_, _| Ok(Some(Command::Text(super::manpage::render()))))
        .long("Print this manual page, in roff, and exit; iomark --man > iomark.1 && man ./iomark.1 shows it."),
    flag("inflate-log", Required("FILE"), Info, "print a compressed (.fz) log as text", |_, v| {
        Ok(Some(Command::InflateLog(PathBuf::from(v.unwrap_or_default()))))
    })
    .long("Decompress a log written with log_store_compressed=1 (a .fz file, by iomark or fio) and print it as the text lines the uncompressed log would hold.")
    .complete(Complete::File),
    // For iomark's own tests: deterministic timings.
    flag("fake-clock", Required("NS"), Info, "", |r, v| {
        let v = text(v, "fake-clock")?;
        r.fake_clock_ns = Some(v.parse().map_err(|_| format!("--fake-clock: '{v}' is not a number of ns"))?);
        Ok(None)
    })
    .hidden(),
    // fio's, not provided.
    not_provided("server", Optional("ARGS"), "client/server mode is not supported; run one job on many hosts under MPI (mpirun -np N iomark JOB, see --mpi)"),
    not_provided("client", Required("HOST"), "client/server mode is not supported; run one job on many hosts under MPI (mpirun -np N iomark JOB, see --mpi)"),
    not_provided("daemonize", Required("PIDFILE"), "client/server mode is not supported"),
    not_provided("remote-config", Required("FILE"), "client/server mode is not supported"),
    not_provided("idle-prof", Required("OPTION"), "CPU idleness profiling is not supported"),
    not_provided("trigger-file", Required("FILE"), "triggers are not supported"),
    not_provided("trigger-timeout", Required("TIME"), "triggers are not supported"),
    not_provided("trigger", Required("CMD"), "triggers are not supported"),
    not_provided("trigger-remote", Required("CMD"), "triggers are not supported"),
    not_provided("crctest", Optional("TYPE"), "checksum self-tests are not supported"),
    not_provided("merge-blktrace-only", Switch, "blktrace merging is not supported"),
    not_provided("alloc-size", Required("KB"), "iomark needs no shared memory pool; drop this option"),
    not_provided("debug", Required("OPTIONS"), "fio's debug categories are not supported"),
    not_provided("latency-log", Switch, "use write_lat_log instead"),
    not_provided("aux-path", Required("PATH"), "iomark keeps no state files"),
    not_provided("cpuclock-test", Switch, "iomark does not use a CPU clock source"),
];

/// The flag `--name` (or an alias) names.
pub fn find(name: &str) -> Option<&'static Flag> {
    FLAGS
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
}

/// The flag `-c` names.
pub fn find_short(c: char) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.short == Some(c))
}

/// The documented flags.
pub fn shown() -> impl Iterator<Item = &'static Flag> {
    FLAGS.iter().filter(|f| f.is_shown())
}

/// A command besides the fio-style run.
#[derive(Clone, Copy, Debug)]
pub struct CommandDef {
    pub name: &'static str,
    /// What follows the name in a usage line.
    pub args: &'static str,
    pub summary: &'static str,
    /// Its `--help` page.
    pub help: fn() -> String,
}

/// Every command. A job file named like one runs as `iomark ./NAME`.
pub const COMMANDS: &[CommandDef] = &[
    CommandDef {
        name: "quick",
        args: "[PATH] [OPTIONS]",
        summary: "CrystalDiskMark's tests on the filesystem at PATH, in about a minute",
        help: || super::cmd::help_page("quick"),
    },
    CommandDef {
        name: "suite",
        args: "--list | NAME [PATH] [OPTIONS]",
        summary: "a named set of tests (crystaldiskmark, ars, patterns, …)",
        help: || super::cmd::help_page("suite"),
    },
    CommandDef {
        name: "sweep",
        args: "[PATH] [OPTIONS]",
        summary: "bandwidth and IOPS against block size, queue depth or job count",
        help: || super::cmd::help_page("sweep"),
    },
    CommandDef {
        name: "report",
        args: "RESULTS… [-o FILE]",
        summary: "one self-contained HTML report from fio or iomark results",
        help: || super::cmd::help_page("report"),
    },
    CommandDef {
        name: "compare",
        args: "BASE NEW | --base RUN… --new RUN… [OPTIONS]",
        summary: "before and after, with a verdict that tells a change from noise",
        help: || super::cmd::help_page("compare"),
    },
    CommandDef {
        name: "history",
        args: "[SELECTION] | import FILE… | export --format F | check",
        summary: "the results history: list, import, export (CSV, JSON lines, InfluxDB)",
        help: || super::cmd::help_page("history"),
    },
    CommandDef {
        name: "trend",
        args: "--test TEXT [--metric M] [--html FILE]",
        summary: "a metric of one test over time, per device, with its change points",
        help: || super::cmd::help_page("trend"),
    },
    CommandDef {
        name: "completions",
        args: "SHELL",
        summary: "shell completions for bash, zsh or fish",
        help: super::completions::usage,
    },
    CommandDef {
        name: "help",
        args: "[COMMAND]",
        summary: "this help, or a command's",
        help: super::help::usage,
    },
];

pub fn find_command(name: &str) -> Option<&'static CommandDef> {
    COMMANDS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse_with, Command};

    fn parse(args: &[&str]) -> Result<Command, String> {
        parse_with(args.iter().map(OsString::from).collect(), &mut &b""[..])
    }

    /// The run `args` describe, with a job so that it is one.
    fn run(args: &[&str]) -> RunArgs {
        let mut all = args.to_vec();
        all.push("--name=j");
        match parse(&all) {
            Ok(Command::Run(r)) => *r,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn the_table_is_consistent() {
        let mut names = std::collections::HashSet::new();
        for f in FLAGS {
            assert!(names.insert(f.name), "--{} twice", f.name);
            for a in f.aliases {
                assert!(names.insert(a), "--{a} twice");
            }
            // A run flag must not hide a job option of the same name.
            assert!(
                crate::job::options::lookup(f.name).is_none()
                    && crate::job::options::lookup(&f.name.replace('-', "_")).is_none(),
                "--{} is also a job option",
                f.name
            );
            if f.is_shown() {
                assert!(!f.help.is_empty() && !f.help.ends_with('.'), "--{}", f.name);
                assert!(
                    f.long_help().ends_with('.') || f.long_help.is_empty(),
                    "--{}",
                    f.name
                );
            }
            if let Complete::Choices(c) = f.complete {
                assert!(matches!(f.value, Required(_)), "--{}: {c:?}", f.name);
            }
        }
        let mut shorts: Vec<char> = FLAGS.iter().filter_map(|f| f.short).collect();
        shorts.sort_unstable();
        shorts.dedup();
        assert_eq!(
            shorts.len(),
            FLAGS.iter().filter(|f| f.short.is_some()).count()
        );
        for (i, c) in COMMANDS.iter().enumerate() {
            assert!(COMMANDS[..i].iter().all(|o| o.name != c.name), "{}", c.name);
            let help = (c.help)();
            assert!(
                help.contains("Usage:") && help.contains("Examples:"),
                "{}",
                c.name
            );
        }
    }

    // One test per flag: what it sets, and how a bad value is refused.

    #[test]
    fn output() {
        assert_eq!(
            run(&["--output=r.txt"]).output,
            Some(PathBuf::from("r.txt"))
        );
        assert_eq!(
            run(&["--output", "r.txt"]).output,
            Some(PathBuf::from("r.txt"))
        );
        assert!(parse(&["--output"]).unwrap_err().contains("--output"));
    }

    #[test]
    fn output_format() {
        let f = run(&["--output-format=json,terse"]).formats;
        assert!(f.json && f.terse && !f.normal && !f.json_plus);
        assert!(run(&["--output-format=json+"]).formats.json_plus);
        assert_eq!(
            parse(&["--output-format=jsno"]).unwrap_err(),
            "--output-format: 'jsno' is not one of: normal, terse, json, json+ (did you mean 'json'?)"
        );
    }

    #[test]
    fn minimal() {
        let f = run(&["--output-format=json", "--minimal"]).formats;
        assert!(f.terse && !f.json && !f.normal);
        assert!(parse(&["--minimal=1"]).is_err());
    }

    #[test]
    fn terse_version() {
        assert_eq!(run(&["--terse-version=5"]).terse_version, 5);
        assert_eq!(run(&[]).terse_version, 3);
        assert!(parse(&["--terse-version=6"])
            .unwrap_err()
            .contains("2, 3, 4, 5"));
    }

    #[test]
    fn append_terse() {
        let r = run(&["--output-format=json", "--append-terse"]);
        assert!(r.append_terse && r.formats.json && r.formats.terse);
    }

    #[test]
    fn bandwidth_log() {
        assert!(run(&["--bandwidth-log"]).agg_bw_log);
        assert!(!run(&[]).agg_bw_log);
    }

    #[test]
    fn eta() {
        assert_eq!(run(&["--eta=never"]).eta, ProgressMode::Never);
        assert_eq!(run(&["--eta", "always"]).eta, ProgressMode::Always);
        assert_eq!(
            parse(&["--eta=alwyas"]).unwrap_err(),
            "--eta: 'alwyas' is not one of: auto, always, never (did you mean 'always'?)"
        );
    }

    #[test]
    fn eta_newline() {
        let r = run(&["--eta-newline"]);
        assert!(r.eta_newline && r.eta_newline_ms == 0);
        assert_eq!(run(&["--eta-newline=2"]).eta_newline_ms, 2000);
        assert_eq!(run(&["--eta-newline=500ms"]).eta_newline_ms, 500);
        // Only `=` gives it a value: the next word is a job file.
        assert_eq!(
            parse(&["--eta-newline", "nothere.fio"]).unwrap_err(),
            "cannot read job file 'nothere.fio': no such file"
        );
    }

    #[test]
    fn eta_interval() {
        assert_eq!(run(&["--eta-interval=250"]).eta_interval_ms, 250);
        assert_eq!(run(&["--eta-interval=2s"]).eta_interval_ms, 2000);
        assert!(parse(&["--eta-interval=x"]).is_err());
    }

    #[test]
    fn status_interval() {
        assert_eq!(run(&["--status-interval=3"]).status_interval_ms, 3000);
        assert!(parse(&["--status-interval=5q"])
            .unwrap_err()
            .starts_with("--status-interval: "));
    }

    #[test]
    fn section() {
        let r = run(&["--section=a", "--section", "b"]);
        assert_eq!(r.sources.sections, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn parse_only() {
        assert!(run(&["--parse-only"]).parse_only);
    }

    #[test]
    fn showcmd() {
        assert!(run(&["--showcmd"]).showcmd);
    }

    #[test]
    fn readonly() {
        assert!(run(&["--readonly"]).readonly);
    }

    #[test]
    fn warnings_fatal() {
        assert!(run(&["--warnings-fatal"]).warnings_fatal);
        assert!(!run(&[]).warnings_fatal);
    }

    #[test]
    fn max_jobs() {
        assert_eq!(run(&["--max-jobs=2"]).max_jobs, Some(2));
        assert_eq!(
            parse(&["--max-jobs=abc"]).unwrap_err(),
            "--max-jobs: 'abc' is not a number"
        );
        assert_eq!(
            parse(&["--max-jobs=0"]).unwrap_err(),
            "--max-jobs: must be at least 1"
        );
    }

    #[test]
    fn help() {
        for a in ["--help", "-h"] {
            match parse(&["--name=x", a]) {
                Ok(Command::Text(t)) => assert!(t.contains("--output-format=FMT")),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn version() {
        for a in ["--version", "-V"] {
            match parse(&[a]) {
                Ok(Command::Text(t)) => {
                    assert_eq!(t, format!("iomark-{}\n", env!("CARGO_PKG_VERSION")))
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn cmdhelp() {
        assert!(matches!(parse(&["--cmdhelp"]), Ok(Command::CmdHelp(None))));
        assert!(matches!(
            parse(&["--cmdhelp=all"]),
            Ok(Command::CmdHelp(None))
        ));
        assert!(matches!(parse(&["--cmdhelp=bs"]), Ok(Command::CmdHelp(Some(n))) if n == "bs"));
    }

    #[test]
    fn enghelp() {
        assert!(matches!(parse(&["--enghelp"]), Ok(Command::EngHelp(None))));
        assert!(
            matches!(parse(&["--enghelp=libaio,userspace_reap"]), Ok(Command::EngHelp(Some(e))) if e == "libaio,userspace_reap")
        );
    }

    #[test]
    fn man() {
        match parse(&["--man"]) {
            Ok(Command::Text(t)) => assert!(t.starts_with(".TH IOMARK 1")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inflate_log() {
        assert!(
            matches!(parse(&["--inflate-log=a.fz"]), Ok(Command::InflateLog(p)) if p == std::path::Path::new("a.fz"))
        );
        assert!(parse(&["--inflate-log"]).is_err());
    }

    #[test]
    fn fake_clock() {
        assert_eq!(run(&["--fake-clock=1000"]).fake_clock_ns, Some(1000));
        assert!(!find("fake-clock").unwrap().is_shown());
    }

    #[test]
    fn fio_flags_iomark_does_not_provide_are_refused_with_the_reason() {
        for f in FLAGS.iter().filter(|f| matches!(f.support, Support::No(_))) {
            let arg = match f.value {
                Switch => format!("--{}", f.name),
                _ => format!("--{}=x", f.name),
            };
            let e = parse(&[&arg]).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "option '--{}' is not supported by iomark: ",
                    f.name
                )),
                "{e}"
            );
        }
    }
}
