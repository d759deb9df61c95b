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
    pub help: bool,
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
                match name.as_str() {
                    "help" => f.help = true,
                    "size" => {
                        let v = value(&mut p, "size")?;
                        let b = parse_size(&v, 1024).map_err(|e| format!("--size: {e}"))?;
                        if b == 0 {
                            return Err("--size: must be more than 0".into());
                        }
                        f.size = Some(b);
                    }
                    "runtime" => {
                        let v = value(&mut p, "runtime")?;
                        let us = parse_time_us(&v, TimeUnit::Sec)
                            .map_err(|e| format!("--runtime: {e}"))?;
                        if us < 1000 {
                            return Err("--runtime: must be at least 1ms".into());
                        }
                        f.runtime_us = Some(us);
                    }
                    "passes" => f.passes = Some(parse_u32(&value(&mut p, "passes")?, "passes", 1)?),
                    "warmup" => {
                        let v = value(&mut p, "warmup")?;
                        f.warmup_us = Some(
                            parse_time_us(&v, TimeUnit::Sec)
                                .map_err(|e| format!("--warmup: {e}"))?,
                        );
                    }
                    "no-warmup" => f.warmup_us = Some(0),
                    "json" => f.json = Some(PathBuf::from(value(&mut p, "json")?)),
                    "html" => f.html = Some(PathBuf::from(value(&mut p, "html")?)),
                    "no-report" => f.no_report = true,
                    "engine" | "ioengine" => f.engine = Some(value(&mut p, "engine")?),
                    "buffered" => f.buffered = true,
                    "print-jobfile" => f.print_jobfile = true,
                    "eta" => {
                        let v = value(&mut p, "eta")?;
                        f.eta = ProgressMode::parse(&v)?;
                    }
                    "eta-newline" => f.eta_newline = true,
                    other => {
                        return Err(format!(
                            "unknown option '--{other}' for iomark {cmd} (see iomark {cmd} --help)"
                        ))
                    }
                }
            }
        }
    }
    Ok(f)
}

/// Help text for the shared options.
pub const SHARED_HELP: &str = "\
  --size SIZE        test file size (k/m/g suffixes, e.g. 256m)
  --runtime TIME     run time of each measured pass (e.g. 2s, 500ms)
  --passes N         measured passes per test; the table shows their median
  --warmup TIME      length of the discarded warm-up pass before each test
  --no-warmup        skip the warm-up pass
  --engine NAME      I/O engine (default: io_uring or libaio when available,
                     else psync)
  --buffered         use buffered I/O instead of direct I/O
  --json FILE        where to write the JSON results (default: a new
                     iomark-<command>-<date>-<time>.json in the current
                     directory)
  --html FILE        where to write the HTML report (default: beside the JSON)
  --no-report        write neither file
  --print-jobfile    print the fio job file of one pass and exit
  --eta WHEN         live progress line: auto (on a terminal), always, never
  --eta-newline      print each progress update on its own line
";
