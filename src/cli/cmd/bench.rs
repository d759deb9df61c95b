//! The options `quick`, `suite` and `sweep` share: where to run, how big
//! and how long, how many passes, which engine, where the reports go,
//! progress, MPI and the results history. One table (`shared`) that the
//! three commands' tables include (`Section::with_run`); each command decides what the values mean
//! for it.

use std::path::PathBuf;

use super::{opt, switch, Complete, Opt};
use crate::job::value::{parse_size, parse_time_us, TimeUnit};
use crate::run::progress::ProgressMode;
pub use crate::suite::flags::RunFlags;

/// A whole number of at least `min`.
pub fn parse_u32(v: &str, opt: &str, min: u32) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!(
            "--{opt}: '{v}' is not a whole number of at least {min}"
        )),
    }
}

/// A percentage (`5`, `5%`) in `0..max`.
pub fn parse_pct(v: &str, opt: &str, max: f64) -> Result<f64, String> {
    v.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0 && *x < max)
        .ok_or_else(|| format!("--{opt}: '{v}' is not a percentage"))
}

/// The I/O engines' names, from the engine registry.
pub fn engines() -> Vec<&'static str> {
    crate::job::engine_kind::EngineKind::ALL
        .iter()
        .map(|k| k.name())
        .collect()
}

/// `--engine`'s help: the default this platform really uses (see
/// `suite::probe::pick_engine`).
const ENGINE_HELP: &str = if cfg!(target_os = "linux") {
    "I/O engine (default: io_uring or libaio when available, else psync)"
} else if cfg!(windows) {
    "I/O engine (default: windowsaio, else psync)"
} else {
    "I/O engine (default: posixaio when available, else psync)"
};

fn eta_words() -> Vec<&'static str> {
    vec!["auto", "always", "never"]
}

/// The shared options, in their help order.
pub fn shared() -> Vec<Opt<RunFlags>> {
    vec![
        opt("size", "SIZE", "test file size (k/m/g suffixes, e.g. 256m)", Complete::Nothing, |t, v| {
            let b = parse_size(v, 1024).map_err(|e| format!("--size: {e}"))?;
            if b == 0 {
                return Err("--size: must be more than 0".into());
            }
            // `--size=64` meant as 64 MB is 64 bytes: say so here rather
            // than as a job file's error about block sizes.
            if b < 1 << 20 && v.trim().bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "--size: '{v}' is {b} bytes (a size without a unit counts bytes), too small \
                     for a test file; give a unit, e.g. --size={v}m"
                ));
            }
            t.size = Some(b);
            Ok(())
        }),
        opt("runtime", "TIME", "run time of each measured pass (e.g. 2s, 500ms)", Complete::Nothing, |t, v| {
            let us = parse_time_us(v, TimeUnit::Sec).map_err(|e| format!("--runtime: {e}"))?;
            if us < 1000 {
                return Err("--runtime: must be at least 1ms".into());
            }
            t.runtime_us = Some(us);
            Ok(())
        }),
        opt("passes", "N", "measured passes per test; the table shows their median", Complete::Nothing, |t, v| {
            t.passes = Some(parse_u32(v, "passes", 1)?);
            Ok(())
        }),
        opt("warmup", "TIME", "length of the discarded warm-up pass before each test", Complete::Nothing, |t, v| {
            t.warmup_us =
                Some(parse_time_us(v, TimeUnit::Sec).map_err(|e| format!("--warmup: {e}"))?);
            Ok(())
        }),
        switch("no-warmup", "skip the warm-up pass", |t, _| {
            t.warmup_us = Some(0);
            Ok(())
        }),
        opt("engine", "NAME", ENGINE_HELP, Complete::Words(engines), |t: &mut RunFlags, v| {
            t.engine = Some(v.to_string());
            Ok(())
        })
        .aliases(&["ioengine"]),
        switch("buffered", "use buffered I/O instead of direct I/O", |t, _| {
            t.buffered = true;
            Ok(())
        }),
        opt("json", "FILE", "where to write the JSON results (default: a new iomark-<command>-<date>-<time>.json in the current directory)", Complete::File, |t, v| {
            t.json = Some(PathBuf::from(v));
            Ok(())
        }),
        opt("html", "FILE", "where to write the HTML report (default: beside the JSON)", Complete::File, |t, v| {
            t.html = Some(PathBuf::from(v));
            Ok(())
        }),
        switch("no-report", "write neither file (not with --json or --html)", |t, _| {
            t.no_report = true;
            Ok(())
        }),
        switch("print-jobfile", "print the fio job file of one pass and exit", |t, _| {
            t.print_jobfile = true;
            Ok(())
        }),
        opt("eta", "WHEN", "live progress line: auto (on a terminal), always, never", Complete::Words(eta_words), |t, v| {
            t.eta = ProgressMode::parse(v)?;
            Ok(())
        }),
        switch("eta-newline", "print each progress update on its own line", |t, _| {
            t.eta_newline = true;
            Ok(())
        }),
        switch("mpi", "run as one rank of an MPI job (detected under mpirun): each rank its own test file, rank 0 reports the sum", |t, _| {
            t.mpi = true;
            Ok(())
        }),
        opt("mpi-timeout", "N", "give up on a silent MPI rank after N seconds (60)", Complete::Nothing, |t, v| {
            t.mpi_timeout_s = Some(u64::from(parse_u32(v, "mpi-timeout", 1)?));
            Ok(())
        }),
        opt("label", "NAME", "name the run (in the JSON results and the history; compare --base @NAME)", Complete::Nothing, |t, v| {
            t.label = Some(crate::history::check_label(v).map_err(|e| format!("--label: {e}"))?);
            Ok(())
        }),
        switch("no-history", "do not record the run in the results history", |t, _| {
            t.no_history = true;
            Ok(())
        }),
        opt("history-db", "FILE", "the results history to record in (default: $IOMARK_HISTORY_DB, else $XDG_DATA_HOME/iomark/history.sqlite)", Complete::File, |t, v| {
            t.history_db = Some(PathBuf::from(v));
            Ok(())
        }),
        super::units_opt(|t: &mut RunFlags, v| {
            t.units = Some(super::parse_units(v)?);
            Ok(())
        }),
        super::help_opt(),
    ]
}

/// At most one PATH.
pub fn one_path(cmd: &str, mut pos: Vec<String>) -> Result<Option<String>, String> {
    if pos.len() > 1 {
        return Err(format!("give at most one PATH (see iomark {cmd} --help)"));
    }
    Ok(pos.pop())
}
