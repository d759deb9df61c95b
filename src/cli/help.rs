//! Help texts generated from the option table: `--help`, `--cmdhelp`,
//! `--enghelp`, and `--showcmd` (job files as a command line).

use std::fmt::Write;

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
  --section=NAME             run only this job file section (repeatable)
  --parse-only               check the job description and exit
  --showcmd                  print job files as an iomark command line
  --readonly                 refuse to run jobs that write or trim
  --cmdhelp[=OPTION]         list job options, or describe one
  --enghelp[=ENGINE]         list engines, or an engine's options
  --version, --help

Job options are fio's: see `iomark --cmdhelp`. Exit codes: 0 success,
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
    if !d.engines.is_empty() {
        let _ = writeln!(out, "{:>20}: {}", "engines", d.engines.join(", "));
    }
    if let Support::No(why) = d.support {
        let _ = writeln!(out, "{:>20}: not supported by iomark: {}", "status", why);
    }
    Ok(out)
}

/// `--enghelp[=ENGINE]`.
pub fn enghelp(engine: Option<&str>) -> Result<String, String> {
    let mut out = String::new();
    match engine {
        None => {
            out.push_str("Available IO engines:\n");
            for e in crate::engine::IMPLEMENTED {
                let _ = writeln!(out, "\t{e}");
            }
        }
        Some(spec) => {
            let (name, opt) = match spec.split_once(',') {
                Some((n, o)) => (n, Some(o)),
                None => (spec, None),
            };
            crate::engine::check_name(name)?;
            if let Some(o) = opt {
                return cmdhelp_one(o);
            }
            let defs: Vec<_> = options::all()
                .filter(|d| d.engines.contains(&name))
                .collect();
            if defs.is_empty() {
                let _ = writeln!(out, "engine {name} has no engine-specific options");
            }
            for d in defs {
                let note = if d.is_supported() {
                    ""
                } else {
                    " (not supported by iomark)"
                };
                let _ = writeln!(out, "{:<28}: {}{note}", d.name, d.help);
            }
        }
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

/// `--showcmd`: the command line equivalent of the job files.
pub fn showcmd(src: &JobSources) -> String {
    let mut parts = vec!["iomark".to_string()];
    let push = |parts: &mut Vec<String>, k: &str, v: &Option<String>| match v {
        Some(v) => parts.push(format!("--{k}={}", quote(v))),
        None => parts.push(format!("--{k}")),
    };
    for a in &src.global {
        push(&mut parts, &a.key, &a.value);
    }
    for (name, items) in &src.cli_jobs {
        parts.push(format!("--name={}", quote(name)));
        for a in items {
            push(&mut parts, &a.key, &a.value);
        }
    }
    for (_, sections) in &src.files {
        let mut globals: Vec<(String, Option<String>)> = Vec::new();
        for s in sections {
            if s.is_global() {
                globals.extend(s.entries.iter().map(|e| (e.key.clone(), e.value.clone())));
                continue;
            }
            parts.push(format!("--name={}", quote(&s.name)));
            for (k, v) in &globals {
                push(&mut parts, k, v);
            }
            for e in &s.entries {
                push(&mut parts, &e.key, &e.value);
            }
        }
    }
    parts.join(" ")
}
