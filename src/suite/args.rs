//! Command-line options shared by the benchmarking subcommands (`quick`,
//! `suite`, `sweep`): where to run, how big and how long, how many
//! passes, which engine, where the reports go, progress display.
//! Parsing only; each command decides what the values mean for it.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::job::value::{parse_size, parse_time_us, TimeUnit};
use crate::run::progress::ProgressMode;

#[derive(Clone, Debug, Default)]
pub struct RunFlags {
    pub positionals: Vec<String>,
    pub size: Option<u64>,
    pub runtime_us: Option<u64>,
    pub passes: Option<u32>,
    pub warmup_us: Option<u64>,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub no_report: bool,
    pub engine: Option<String>,
    pub buffered: bool,
    pub print_jobfile: bool,
    pub eta: ProgressMode,
    pub eta_newline: bool,
    /// `--mpi`: run as one rank of an MPI job (also detected under mpirun).
    pub mpi: bool,
    /// `--mpi-timeout`: seconds before a silent rank stops every rank.
    pub mpi_timeout_s: Option<u64>,
    pub help: bool,
    /// `--label`: names the run in its results and in the history.
    pub label: Option<String>,
    /// `--no-history`: do not record the run in the results history.
    pub no_history: bool,
    /// `--history-db`: the history database to record the run in.
    pub history_db: Option<PathBuf>,
}

impl RunFlags {
    /// Whether and where the run is recorded in the history.
    pub fn record_options(&self) -> crate::history::RecordOptions {
        crate::history::RecordOptions {
            enabled: !self.no_history,
            db: self.history_db.clone(),
        }
    }
}

/// The next value of an option, as UTF-8.
pub fn value(p: &mut lexopt::Parser, opt: &str) -> Result<String, String> {
    let v = p
        .value()
        .map_err(|_| format!("option '--{opt}' needs a value"))?;
    v.into_string()
        .map_err(|_| format!("--{opt}: the value is not valid UTF-8"))
}

pub fn parse_u32(v: &str, opt: &str, min: u32) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!(
            "--{opt}: '{v}' is not a whole number of at least {min}"
        )),
    }
}

/// One shared option: name, aliases, the value's placeholder (None for
/// a switch), one line of help, and what it sets.
pub struct SharedFlag {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub value: Option<&'static str>,
    pub help: &'static str,
    pub apply: fn(&mut RunFlags, &str) -> Result<(), String>,
}

const fn shared(
    name: &'static str,
    value: Option<&'static str>,
    help: &'static str,
    apply: fn(&mut RunFlags, &str) -> Result<(), String>,
) -> SharedFlag {
    SharedFlag {
        name,
        aliases: &[],
        value,
        help,
        apply,
    }
}

/// The options `quick`, `suite` and `sweep` share: parsing and help
/// come from here.
pub const SHARED: &[SharedFlag] = &[
    shared("size", Some("SIZE"), "test file size (k/m/g suffixes, e.g. 256m)", |f, v| {
        let b = parse_size(v, 1024).map_err(|e| format!("--size: {e}"))?;
        if b == 0 {
            return Err("--size: must be more than 0".into());
        }
        f.size = Some(b);
        Ok(())
    }),
    shared("runtime", Some("TIME"), "run time of each measured pass (e.g. 2s, 500ms)", |f, v| {
        let us = parse_time_us(v, TimeUnit::Sec).map_err(|e| format!("--runtime: {e}"))?;
        if us < 1000 {
            return Err("--runtime: must be at least 1ms".into());
        }
        f.runtime_us = Some(us);
        Ok(())
    }),
    shared("passes", Some("N"), "measured passes per test; the table shows their median", |f, v| {
        f.passes = Some(parse_u32(v, "passes", 1)?);
        Ok(())
    }),
    shared("warmup", Some("TIME"), "length of the discarded warm-up pass before each test", |f, v| {
        f.warmup_us = Some(parse_time_us(v, TimeUnit::Sec).map_err(|e| format!("--warmup: {e}"))?);
        Ok(())
    }),
    shared("no-warmup", None, "skip the warm-up pass", |f, _| {
        f.warmup_us = Some(0);
        Ok(())
    }),
    SharedFlag {
        aliases: &["ioengine"],
        ..shared("engine", Some("NAME"), "I/O engine (default: io_uring or libaio when available, else psync)", |f, v| {
            f.engine = Some(v.to_string());
            Ok(())
        })
    },
    shared("buffered", None, "use buffered I/O instead of direct I/O", |f, _| {
        f.buffered = true;
        Ok(())
    }),
    shared("json", Some("FILE"), "where to write the JSON results (default: a new iomark-<command>-<date>-<time>.json in the current directory)", |f, v| {
        f.json = Some(PathBuf::from(v));
        Ok(())
    }),
    shared("html", Some("FILE"), "where to write the HTML report (default: beside the JSON)", |f, v| {
        f.html = Some(PathBuf::from(v));
        Ok(())
    }),
    shared("no-report", None, "write neither file (not with --json or --html)", |f, _| {
        f.no_report = true;
        Ok(())
    }),
    shared("print-jobfile", None, "print the fio job file of one pass and exit", |f, _| {
        f.print_jobfile = true;
        Ok(())
    }),
    shared("eta", Some("WHEN"), "live progress line: auto (on a terminal), always, never", |f, v| {
        f.eta = ProgressMode::parse(v)?;
        Ok(())
    }),
    shared("eta-newline", None, "print each progress update on its own line", |f, _| {
        f.eta_newline = true;
        Ok(())
    }),
    shared("mpi", None, "run as one rank of an MPI job (detected under mpirun): each rank its own test file, rank 0 reports the sum", |f, _| {
        f.mpi = true;
        Ok(())
    }),
    shared("mpi-timeout", Some("N"), "give up on a silent MPI rank after N seconds (60)", |f, v| {
        f.mpi_timeout_s = Some(u64::from(parse_u32(v, "mpi-timeout", 1)?));
        Ok(())
    }),
    shared("label", Some("NAME"), "name the run (in the JSON results and the history; compare --base @NAME)", |f, v| {
        f.label = Some(crate::history::check_label(v).map_err(|e| format!("--label: {e}"))?);
        Ok(())
    }),
    shared("no-history", None, "do not record the run in the results history", |f, _| {
        f.no_history = true;
        Ok(())
    }),
    shared("history-db", Some("FILE"), "the results history to record in (default: $IOMARK_HISTORY_DB, else $XDG_DATA_HOME/iomark/history.sqlite)", |f, v| {
        f.history_db = Some(PathBuf::from(v));
        Ok(())
    }),
    shared("help", None, "this help", |f, _| {
        f.help = true;
        Ok(())
    }),
];

fn find_shared(name: &str) -> Option<&'static SharedFlag> {
    SHARED
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
}

/// Parses the shared options; `extra` gets the chance to handle any other
/// long option first (returning Ok(true) when it did).
pub fn parse(
    args: Vec<OsString>,
    cmd: &str,
    extra: &mut dyn FnMut(&str, &mut lexopt::Parser) -> Result<bool, String>,
) -> Result<RunFlags, String> {
    use lexopt::Arg;
    let mut f = RunFlags::default();
    let mut p = lexopt::Parser::from_args(args);
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Short('h') => f.help = true,
            Arg::Short(c) => {
                return Err(format!("unknown option '-{c}' (see iomark {cmd} --help)"))
            }
            Arg::Value(v) => f.positionals.push(
                v.into_string()
                    .map_err(|_| "arguments must be valid UTF-8".to_string())?,
            ),
            Arg::Long(name) => {
                let name = name.to_string();
                if extra(&name, &mut p)? {
                    continue;
                }
                let Some(flag) = find_shared(&name) else {
                    return Err(format!(
                        "unknown option '--{name}' for iomark {cmd} (see iomark {cmd} --help)"
                    ));
                };
                let v = match flag.value {
                    Some(_) => value(&mut p, flag.name)?,
                    None => String::new(),
                };
                (flag.apply)(&mut f, &v)?;
            }
        }
    }
    if f.no_report {
        // Both said: which one is meant is not for iomark to guess.
        for (given, flag) in [(&f.json, "--json"), (&f.html, "--html")] {
            if given.is_some() {
                return Err(format!(
                    "--no-report and {flag} contradict each other (one writes no report, the \
                     other names where to write it): give one of them"
                ));
            }
        }
    }
    Ok(f)
}

/// Help lines for the shared options (the `Options:` part of the help of
/// `quick`, `suite` and `sweep`); `first` goes before them.
pub fn shared_help(first: &[(&str, &str)]) -> String {
    let mut rows: Vec<(String, String)> = first
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    for f in SHARED {
        let left = match f.value {
            Some(v) => format!("--{} {v}", f.name),
            None => format!("--{}", f.name),
        };
        // -h too, as everywhere.
        let left = if f.name == "help" {
            format!("-h, {left}")
        } else {
            left
        };
        rows.push((left, f.help.to_string()));
    }
    crate::cli::text::options(&rows, OPTION_COLUMN)
}

/// The option column of the subcommands' help pages.
pub const OPTION_COLUMN: usize = 18;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(args: &[&str]) -> RunFlags {
        parse(
            args.iter().map(OsString::from).collect(),
            "quick",
            &mut |_, _| Ok(false),
        )
        .unwrap()
    }

    #[test]
    fn every_shared_flag_parses_and_is_in_the_help() {
        let help = shared_help(&[]);
        for f in SHARED {
            assert!(help.contains(&format!("--{}", f.name)), "{help}");
            let arg = match f.value {
                Some("SIZE") => format!("--{}=4m", f.name),
                Some("TIME") => format!("--{}=2s", f.name),
                Some("N") => format!("--{}=2", f.name),
                Some("WHEN") => format!("--{}=never", f.name),
                Some(_) => format!("--{}=x", f.name),
                None => format!("--{}", f.name),
            };
            parse_ok(&[&arg]);
        }
        let f = parse_ok(&[
            "--size=4m",
            "--runtime",
            "2s",
            "--ioengine=psync",
            "--no-warmup",
            "p",
        ]);
        assert_eq!(f.size, Some(4 << 20));
        assert_eq!(f.runtime_us, Some(2_000_000));
        assert_eq!(f.engine.as_deref(), Some("psync"));
        assert_eq!(f.warmup_us, Some(0));
        assert_eq!(f.positionals, vec!["p".to_string()]);
        assert!(help.starts_with("  --size SIZE"), "{help}");
        assert!(help.lines().all(|l| l.len() <= 80), "{help}");
    }

    #[test]
    fn no_report_with_a_report_file_is_a_contradiction() {
        for extra in ["--json=-", "--html=r.html"] {
            let e = parse(
                ["--no-report", extra].iter().map(OsString::from).collect(),
                "quick",
                &mut |_, _| Ok(false),
            )
            .expect_err("refused");
            assert!(e.contains("contradict each other"), "{e}");
        }
    }
}
