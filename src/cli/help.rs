//! Help texts generated from the option table: `--help`, `--cmdhelp`,
//! `--enghelp`, and `--showcmd` (job files as a command line).

use std::fmt::Write;

use super::flags;
use crate::job::engine_kind::{self, EngineKind};
use crate::job::options::{self, Category, Kind, Support};
use crate::job::JobSources;

/// The one-line answer when no job is given (bare `iomark`).
pub const NO_JOB: &str = "no job given";

/// What bare `iomark` prints (on standard error; the exit status is 1,
/// as with fio: no job is an error, and a script that forgot its
/// arguments should not look successful).
pub fn bare_usage() -> String {
    format!(
        "iomark: {NO_JOB}\n\
         Usage: iomark [OPTIONS] JOBFILE...     run fio job files\n\
         \x20      iomark --name=JOB --OPTION=V   run a job given on the command line\n\
         \x20      iomark COMMAND [ARGS]          quick, suite, sweep, report, compare,\n\
         \x20                                     history, trend\n\
         Try 'iomark quick' to benchmark the filesystem here in about a minute, and\n\
         'iomark --help' for every command, option and example.\n"
    )
}

pub fn version() -> String {
    format!("iomark-{}\n", env!("CARGO_PKG_VERSION"))
}

/// Examples for `--help` and the man page: (command, what it does).
pub const EXAMPLES: &[(&str, &str)] = &[
    ("iomark quick", "benchmark the filesystem in the current directory in about a minute"),
    (
        "iomark --name=rand --rw=randwrite --bs=4k --size=1g --iodepth=16 --ioengine=libaio --direct=1 --runtime=60 --time_based",
        "a fio command line: 4 KiB random writes at queue depth 16 for a minute",
    ),
    ("iomark job.fio --output-format=json > result.json", "a fio job file; standard output holds only the JSON"),
    ("iomark --parse-only job.fio", "check a job file without running it"),
    ("iomark --cmdhelp=bs", "describe one job option"),
    ("iomark compare --base @before --new @after", "tell a real change from noise, from the results history"),
    ("iomark trend --test rnd4k-q1t1-read --html trend.html", "a test's IOPS over time, with its change points"),
];

/// Exit statuses, for `--help` and the man page.
pub const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "success"),
    (
        "1",
        "bad input, no job given, a job failed, or a report could not be written",
    ),
    ("2", "compare found a regression"),
    ("3", "compare: the sides ran different settings (not comparable)"),
    (
        "129, 130, 143",
        "stopped by SIGHUP, SIGINT or SIGTERM; the report of what was measured is still written, marked interrupted",
    ),
    ("141", "the reader of standard output went away"),
];

/// How job options go on the command line, for `--help` and the man page.
pub const JOB_SYNTAX: &[(&str, &str)] = &[
    ("--NAME=VALUE", "a job option (--NAME VALUE works too)"),
    (
        "--name=JOB",
        "start a job: the options after it are its own; those before the first --name apply to every job",
    ),
    ("--name=global", "start options for the jobs after it"),
];

/// The synopsis lines of a fio-style run, for `--help` and the man page.
pub const RUN_SYNOPSIS: &[(&str, &str)] = &[
    (
        "iomark [OPTIONS] [JOBFILE…]",
        "run fio job files (- reads standard input)",
    ),
    (
        "iomark [OPTIONS] --name=JOB --OPTION=VALUE…",
        "run jobs given on the command line",
    ),
    ("iomark COMMAND [ARGS…]", "one of the commands below"),
];

/// `--help`: generated from the run flag and command tables.
pub fn usage() -> String {
    use super::text;
    let mut s = format!(
        "iomark {} — a storage I/O benchmark that runs fio job files\n\nUsage:\n",
        env!("CARGO_PKG_VERSION")
    );
    for (cmd, what) in RUN_SYNOPSIS {
        s.push_str(&format!("  {cmd}\n"));
        s.push_str(&text::wrap(what, 6, text::WIDTH));
    }
    s.push_str("\nCommands (iomark help COMMAND describes each):\n");
    let rows: Vec<(&str, &str)> = flags::COMMANDS
        .iter()
        .map(|c| (c.name, c.summary))
        .collect();
    s.push_str(&text::options(&rows, 11));
    for cat in flags::Category::ALL {
        let rows: Vec<(String, &str)> = flags::shown()
            .filter(|f| f.category == cat)
            .map(|f| (f.synopsis(), f.help))
            .collect();
        s.push_str(&format!("\n{}:\n", cat.title()));
        s.push_str(&text::options(&rows, text::OPTION_COLUMN));
    }
    s.push_str("\nJob options (fio's; iomark --cmdhelp lists them):\n");
    s.push_str(&text::options(JOB_SYNTAX, text::OPTION_COLUMN));
    s.push_str("\nExamples:\n");
    for (cmd, what) in EXAMPLES {
        s.push_str(&example(cmd, what));
    }
    s.push_str("\nExit status:\n");
    s.push_str(&text::options(EXIT_STATUS, 13));
    s
}

/// One example for a help page: what it does (capitalized, with a
/// colon), then the command beneath it.
pub fn example(cmd: &str, what: &str) -> String {
    let mut out = String::new();
    if !what.is_empty() {
        let mut c = what.chars();
        let first: String = c
            .next()
            .map(|f| f.to_uppercase().collect())
            .unwrap_or_default();
        out.push_str(&super::text::wrap(
            &format!("{first}{}:", c.as_str()),
            2,
            super::text::WIDTH,
        ));
    }
    out.push_str(&example_command(cmd, 4));
    out
}

/// A command line for a help page, indented by `indent`, broken with
/// `\` before a word that would pass the 80th column (continuation lines
/// indented 4 more).
pub fn example_command(cmd: &str, indent: usize) -> String {
    example_command_within(cmd, indent, super::text::WIDTH)
}

/// `example_command` for lines of at most `width` columns.
pub fn example_command_within(cmd: &str, indent: usize, width: usize) -> String {
    let mut out = " ".repeat(indent);
    let mut col = indent;
    for (i, word) in cmd.split(' ').enumerate() {
        // Bytes, as `text` counts: within the limit for any tool.
        let w = word.len();
        if i > 0 && col + 1 + w + 2 > width {
            out.push_str(" \\\n");
            out.push_str(&" ".repeat(indent + 4));
            col = indent + 4;
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += w;
    }
    out.push('\n');
    out
}

pub const CATEGORIES: [Category; 14] = [
    Category::Job,
    Category::Files,
    Category::Io,
    Category::Engine,
    Category::Timing,
    Category::Rate,
    Category::Sync,
    Category::Buffers,
    Category::Verify,
    Category::Stats,
    Category::Logs,
    Category::Cpu,
    Category::Zones,
    Category::Misc,
];

/// `--cmdhelp`: every option with its one-line help, by category.
pub fn cmdhelp_all() -> String {
    let mut out = String::new();
    for cat in CATEGORIES {
        let mut defs: Vec<_> = options::all().filter(|d| d.category == cat).collect();
        if defs.is_empty() {
            continue;
        }
        defs.sort_by_key(|d| d.name);
        let _ = writeln!(out, "{}:", cat.title());
        for d in defs {
            let mark = match d.support {
                Support::Yes => "",
                Support::No(_) => " [not supported]",
            };
            let _ = writeln!(out, "  {:<28} {}{}", d.name, d.help, mark);
        }
        out.push('\n');
    }
    out
}

/// `--cmdhelp=NAME`: one option in detail.
pub fn cmdhelp_one(name: &str) -> Result<String, String> {
    let d = options::lookup(name).ok_or_else(|| options::unknown_option_message(name))?;
    let mut out = String::new();
    let _ = writeln!(out, "{:>20}: {}", d.name, d.help);
    if !d.aliases.is_empty() {
        let _ = writeln!(out, "{:>20}: {}", "alias", d.aliases.join(", "));
    }
    let _ = writeln!(out, "{:>20}: {}", "type", d.kind.describe());
    let _ = writeln!(
        out,
        "{:>20}: {}",
        "default",
        if d.default.is_empty() {
            "no default"
        } else {
            d.default
        }
    );
    if let Kind::Choice(choices) = d.kind {
        for (i, (v, h)) in choices.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:>20}: {:<12} {}",
                if i == 0 { "valid values" } else { "" },
                v,
                h
            );
        }
    }
    let _ = writeln!(out, "{:>20}: {}", "category", d.category.title());
    let engines = d.engine_names(", ");
    if !engines.is_empty() {
        let _ = writeln!(out, "{:>20}: {}", "engines", engines);
    }
    if let Support::No(why) = d.support {
        let _ = writeln!(out, "{:>20}: not supported by iomark: {}", "status", why);
    }
    Ok(out)
}

/// `--enghelp[=ENGINE[,OPTION]]`: the engines iomark provides, or one
/// engine's options (also for engines iomark does not provide, so their
/// options can be looked up), or one of its options in detail.
pub fn enghelp(engine: Option<&str>) -> Result<String, String> {
    let mut out = String::new();
    let Some(spec) = engine else {
        out.push_str("Available IO engines:\n");
        for e in EngineKind::ALL {
            let _ = writeln!(out, "\t{e}");
        }
        return Ok(out);
    };
    let (name, opt) = match spec.split_once(',') {
        Some((n, o)) => (n.trim(), Some(o.trim())),
        None => (spec.trim(), None),
    };
    let provided = EngineKind::from_name(name).is_some();
    if !provided && !engine_kind::NOT_IMPLEMENTED.contains(&name) {
        // Unknown: the name table words the error and lists engines.
        EngineKind::parse(name)?;
    }
    let defs: Vec<_> = options::all()
        .filter(|d| d.belongs_to_engine(name))
        .collect();
    if let Some(o) = opt {
        if !defs.iter().any(|d| d.name == o || d.aliases.contains(&o)) {
            return Err(format!(
                "'{o}' is not an option of the {name} engine (see iomark --enghelp={name})"
            ));
        }
        return cmdhelp_one(o);
    }
    if !provided {
        let _ = writeln!(
            out,
            "ioengine '{name}' is not supported by iomark; its options are listed for reference"
        );
    }
    if defs.is_empty() {
        let _ = writeln!(out, "ioengine {name} has no engine-specific options");
    }
    for d in defs {
        let mark = match d.support {
            Support::Yes => "",
            Support::No(_) => " [not supported]",
        };
        let _ = writeln!(out, "{:<28}: {}{}", d.name, d.help, mark);
    }
    Ok(out)
}

fn quote(v: &str) -> String {
    if v.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:,%=+@".contains(c))
        && !v.is_empty()
    {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// `--showcmd`: the whole job description as one iomark command line that
/// re-parses to the same jobs.
///
/// Command-line options come first, as given. A single job file keeps its
/// shape: its `[global]` sections become plain options (before the first
/// job) or `--name=global` sections. With several job files (or a job file
/// after command-line jobs) a file's globals must not leak into the next
/// file, so they are repeated inside each of its jobs instead, and the
/// first job of each such file gets `--stonewall` (a new file is a new
/// group). Only the sections `--section` selects are shown.
///
/// Known limit: with repeated globals, a `kb_base` set in a job section
/// is applied before the repeated global values, while the original
/// applied the globals first.
pub fn showcmd(src: &JobSources) -> String {
    let mut parts = vec!["iomark".to_string()];
    let push = |parts: &mut Vec<String>, k: &str, v: &Option<String>| match v {
        // Credentials are not shown (the history records this line).
        Some(_) if crate::job::options::lookup(k).is_some_and(|d| d.secret) => {
            parts.push(format!("--{k}={}", quote(crate::job::spec::Secret::SHOWN)))
        }
        Some(v) => parts.push(format!("--{k}={}", quote(v))),
        None => parts.push(format!("--{k}")),
    };
    // Global sections after other options get their own `--name=global`,
    // so they are applied after them, as in the original.
    let mut named = !src.global.is_empty();
    let mut jobs_so_far = 0usize;
    for a in &src.global {
        push(&mut parts, &a.key, &a.value);
    }
    for (name, items) in &src.cli_jobs {
        if name != "global" && !src.selects(name) {
            continue;
        }
        parts.push(format!("--name={}", quote(name)));
        named = true;
        for a in items {
            push(&mut parts, &a.key, &a.value);
        }
        if name != "global" {
            jobs_so_far += 1;
        }
    }
    let inline = src.files.len() > 1 || jobs_so_far > 0;
    for (_, sections) in &src.files {
        let mut globals: Vec<(String, Option<String>)> = Vec::new();
        let mut first_in_file = true;
        for s in sections {
            if s.is_global() {
                if inline {
                    globals.extend(s.entries.iter().map(|e| (e.key.clone(), e.value.clone())));
                } else {
                    if named {
                        parts.push("--name=global".to_string());
                    }
                    for e in &s.entries {
                        push(&mut parts, &e.key, &e.value);
                    }
                    // A later global section must be its own pass too.
                    named = true;
                }
                continue;
            }
            if !src.selects(&s.name) {
                continue;
            }
            parts.push(format!("--name={}", quote(&s.name)));
            named = true;
            for (k, v) in &globals {
                push(&mut parts, k, v);
            }
            for e in &s.entries {
                push(&mut parts, &e.key, &e.value);
            }
            if first_in_file && jobs_so_far > 0 {
                parts.push("--stonewall".to_string());
            }
            first_in_file = false;
            jobs_so_far += 1;
        }
    }
    parts.join(" ")
}
