//! Help texts generated from the option table: `--help`, `--cmdhelp`,
//! `--enghelp`, and `--showcmd` (job files as a command line).

use std::fmt::Write;

use crate::job::engine_kind::{self, EngineKind};
use crate::job::options::{self, Category, Kind, Support};
use crate::job::JobSources;

pub fn usage() -> String {
    format!(
        "iomark {} — a storage I/O benchmark that runs fio job files

Usage:
  iomark quick [PATH]                  benchmark the filesystem at PATH (default: .)
  iomark suite --list | NAME [PATH]    named test sets (crystaldiskmark, ars, …)
  iomark sweep [PATH] --iodepth=1,2,…  bandwidth/IOPS against block size, queue
                                       depth or job count, with the knee
  iomark report RESULTS.json… -o FILE  self-contained HTML report (fio or iomark JSON)
  iomark compare BASE.json NEW.json    before/after with a noise-aware verdict
  iomark [OPTIONS] [JOBFILE...]        run fio job files and/or command-line jobs
  iomark --name=JOB --rw=randread --bs=4k --size=1g [--option=value…]

  `iomark COMMAND --help` describes each command. A job file named like a
  command runs as `iomark ./NAME`.

Run options:
  --output=FILE              write the report to FILE instead of stdout
  --output-format=FMT        normal, terse, json, json+ (comma-separated)
  --minimal                  terse output (same as --output-format=terse)
  --terse-version=N          terse format version (2, 3, 4, 5; default 3)
  --append-terse             terse output in addition to the others
  --eta=auto|always|never    live progress line (auto: only on a terminal)
  --eta-newline[=TIME]       print each progress line on its own line (with
                             TIME: a new line only that often)
  --eta-interval=TIME        time between progress updates (default 1s)
  --status-interval=TIME     print full reports periodically while running
  --section=NAME             run only the job of this name (repeatable)
  --parse-only               check the job description and exit
  --showcmd                  print job files as an iomark command line
  --readonly                 refuse to run jobs that write or trim
  --cmdhelp[=OPTION]         list job options, or describe one
  --enghelp[=ENGINE[,OPT]]   list engines, or an engine's options
  --version, --help

Job options are fio's: see `iomark --cmdhelp`. Options before the first
--name apply to every job; --name=global starts options for the jobs
after it; --opt=value and --opt value both work. Exit codes: 0 success,
1 bad input or a job failed, 2 compare found a regression, 130/143
interrupted by SIGINT/SIGTERM.
",
        env!("CARGO_PKG_VERSION")
    )
}

const CATEGORIES: [Category; 14] = [
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
