//! The subcommands' front door: one flag table per command (`quick`,
//! `suite`, `sweep`, `report`, `compare`, `history`, `trend`), each the
//! single source of its parsing, its `--help` page, its man page section
//! and its shell completions (`completions`).
//!
//! A table is a `Spec<T>`: the usage lines, the description, sections of
//! options (`Opt<T>`: name, value, one line of help, what completion
//! offers for the value, and the function that applies it to the
//! command's typed options `T`), the positional arguments and the
//! examples. `parse` turns argv into a `T` with the one generic loop
//! below (over lexopt, as the fio-style command line); the commands' run
//! code receives `T`, never argv. The fio-style job command line keeps its
//! own ordered parser (`cli::parse`).

pub mod bench;
pub mod compare;
pub mod history;
pub mod quick;
pub mod report;
pub mod suite;
pub mod sweep;
pub mod trend;

use std::ffi::OsString;

use super::{help, text};
use bench::RunFlags;

/// What shell completion offers for a value or a positional argument.
#[derive(Clone, Copy, Debug)]
pub enum Complete {
    /// Free text: nothing to offer.
    Nothing,
    /// A file name.
    File,
    /// A directory.
    Dir,
    /// One of these words (the function reads them from their registry:
    /// presets, engines, …).
    Words(fn() -> Vec<&'static str>),
}

fn unit_words() -> Vec<&'static str> {
    vec!["MB", "MiB"]
}

/// `--units MB|MiB`: the bandwidth unit shown (default: the unit the
/// results were recorded in: MB/s for CrystalDiskMark-style results,
/// MiB/s for fio jobs).
pub fn units_opt<T>(apply: Apply<T>) -> Opt<T> {
    opt(
        "units",
        "UNIT",
        "bandwidth in MB/s (10^6 B) or MiB/s (2^20 B); default: as recorded",
        Complete::Words(unit_words),
        apply,
    )
}

/// Reads `--units`.
pub fn parse_units(v: &str) -> Result<crate::results::units::BwUnit, String> {
    crate::results::units::BwUnit::parse(v)
}

/// One option as help, the man page and completion see it.
#[derive(Clone, Debug)]
pub struct Flag {
    pub name: &'static str,
    pub short: Option<char>,
    /// Other names it answers to (not shown).
    pub aliases: &'static [&'static str],
    /// The value's placeholder; None for a switch.
    pub value: Option<&'static str>,
    /// Takes every following argument up to the next option
    /// (`--base RUN…`).
    pub many: bool,
    /// One line of help.
    pub help: String,
    pub complete: Complete,
}

impl Flag {
    /// The left column of its help line: `-o, --output FILE`.
    pub fn synopsis(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.short {
            s.push_str(&format!("-{c}, "));
        }
        s.push_str("--");
        s.push_str(self.name);
        if let Some(v) = self.value {
            s.push(' ');
            s.push_str(v);
            if self.many {
                s.push('…');
            }
        }
        s
    }

    fn answers(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// What an option does to the command's options.
pub type Apply<T> = fn(&mut T, &str) -> Result<(), String>;

pub struct Opt<T> {
    pub flag: Flag,
    pub apply: Apply<T>,
}

/// An option with a value.
pub fn opt<T>(
    name: &'static str,
    value: &'static str,
    help: impl Into<String>,
    complete: Complete,
    apply: Apply<T>,
) -> Opt<T> {
    Opt {
        flag: Flag {
            name,
            short: None,
            aliases: &[],
            value: Some(value),
            many: false,
            help: help.into(),
            complete,
        },
        apply,
    }
}

/// A switch (its apply is given an empty value).
pub fn switch<T>(name: &'static str, help: impl Into<String>, apply: Apply<T>) -> Opt<T> {
    Opt {
        flag: Flag {
            name,
            short: None,
            aliases: &[],
            value: None,
            many: false,
            help: help.into(),
            complete: Complete::Nothing,
        },
        apply,
    }
}

impl<T> Opt<T> {
    pub fn short(mut self, c: char) -> Self {
        self.flag.short = Some(c);
        self
    }

    pub fn aliases(mut self, a: &'static [&'static str]) -> Self {
        self.flag.aliases = a;
        self
    }

    pub fn many(mut self) -> Self {
        self.flag.many = true;
        self
    }
}

/// `-h, --help`: every command has it; the parser answers it itself.
pub fn help_opt<T>() -> Opt<T> {
    switch("help", "this help", |_, _| Ok(())).short('h')
}

/// Where in a command's options the shared ones go.
pub type RunOf<T> = fn(&mut T) -> &mut RunFlags;

/// A group of options under a title in the help page.
pub struct Section<T> {
    /// "Options", "Selection", "Sweep options (comma-separated lists)".
    pub title: &'static str,
    /// The command's own options.
    pub opts: Vec<Opt<T>>,
    /// After them, the options `quick`, `suite` and `sweep` share (one
    /// table, `bench::shared`, described once in the man page) and where
    /// in `T` they go.
    pub run: Option<(Vec<Opt<RunFlags>>, RunOf<T>)>,
}

impl<T> Section<T> {
    pub fn new(title: &'static str, opts: Vec<Opt<T>>) -> Self {
        Section {
            title,
            opts,
            run: None,
        }
    }

    /// `opts`, then the shared options, set in `get(T)`.
    pub fn with_run(title: &'static str, opts: Vec<Opt<T>>, get: RunOf<T>) -> Self {
        Section {
            title,
            opts,
            run: Some((bench::shared(), get)),
        }
    }

    /// Its options' flags, in order.
    fn flags(&self) -> impl Iterator<Item = &Flag> {
        let run = self.run.iter().flat_map(|(o, _)| o.iter().map(|o| &o.flag));
        self.opts.iter().map(|o| &o.flag).chain(run)
    }
}

/// A positional argument: its name in the usage and what completion
/// offers for it. The last one stands for any further ones.
#[derive(Clone, Copy, Debug)]
pub struct Pos {
    pub name: &'static str,
    pub complete: Complete,
}

/// Checks the positional arguments and any option against another, once
/// every argument is read (not when help is asked for).
pub type Finish<T> = fn(&mut T, Vec<OsString>) -> Result<(), String>;

/// Positional arguments as text.
pub fn strings(pos: Vec<OsString>) -> Result<Vec<String>, String> {
    pos.into_iter()
        .map(|v| {
            v.into_string()
                .map_err(|_| "arguments must be valid UTF-8".to_string())
        })
        .collect()
}

/// A command's table.
pub struct Spec<T> {
    /// As it is typed and named in messages: "quick", "history import".
    pub name: &'static str,
    /// The usage lines, each after "iomark ".
    pub usage: Vec<String>,
    /// What it does, one paragraph (newlines keep breaks).
    pub about: String,
    /// Lists that are not options (the presets), before the options.
    pub lists: Vec<(&'static str, Vec<(String, String)>)>,
    pub sections: Vec<Section<T>>,
    /// Text after the options (exit statuses, defaults).
    pub after: String,
    pub positionals: Vec<Pos>,
    pub examples: Vec<(&'static str, &'static str)>,
    pub finish: Finish<T>,
}

/// A command's table without its types: what help, the man page and
/// completion read.
pub struct Page {
    pub name: &'static str,
    pub usage: Vec<String>,
    pub about: String,
    pub lists: Vec<(&'static str, Vec<(String, String)>)>,
    /// (title, shared, flags)
    pub sections: Vec<(&'static str, bool, Vec<Flag>)>,
    pub after: String,
    pub positionals: Vec<Pos>,
    pub examples: Vec<(&'static str, &'static str)>,
}

impl<T> Spec<T> {
    pub fn page(&self) -> Page {
        Page {
            name: self.name,
            usage: self.usage.clone(),
            about: self.about.clone(),
            lists: self.lists.clone(),
            sections: self
                .sections
                .iter()
                .map(|s| (s.title, s.run.is_some(), s.flags().cloned().collect()))
                .collect(),
            after: self.after.clone(),
            positionals: self.positionals.clone(),
            examples: self.examples.clone(),
        }
    }

    /// Every option's flag, in order: `apply` takes an index into it.
    fn flags(&self) -> Vec<&Flag> {
        self.sections.iter().flat_map(|s| s.flags()).collect()
    }

    /// Applies option `i` (of `flags`) with value `v`.
    fn apply(&self, t: &mut T, mut i: usize, v: &str) -> Result<(), String> {
        for s in &self.sections {
            if let Some(o) = s.opts.get(i) {
                return (o.apply)(t, v);
            }
            i -= s.opts.len();
            if let Some((opts, get)) = &s.run {
                if let Some(o) = opts.get(i) {
                    return (o.apply)(get(t), v);
                }
                i -= opts.len();
            }
        }
        unreachable!("an option index from flags()")
    }
}

/// "unknown option '--X' for iomark CMD", with the nearest name when
/// one is close.
fn unknown(cmd: &str, flags: &[&Flag], name: &str) -> String {
    let names = flags
        .iter()
        .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()));
    let shown = crate::job::value::excerpt(name);
    match crate::job::value::near_choice(name, names) {
        Some(n) => format!("unknown option '--{shown}' for iomark {cmd} (did you mean '--{n}'?)"),
        None => format!("unknown option '--{shown}' for iomark {cmd} (see iomark {cmd} --help)"),
    }
}

/// What the command line asked of a command.
pub enum Parsed<T> {
    /// `-h` or `--help` anywhere.
    Help,
    Run(T),
}

fn utf8(v: OsString, what: &str) -> Result<String, String> {
    v.into_string()
        .map_err(|_| format!("{what}: the value is not valid UTF-8"))
}

/// A command line read against a table: each option given, as its
/// index in the table and its value, in order; the positional arguments;
/// whether help was asked for.
struct Read {
    given: Vec<(usize, String)>,
    positionals: Vec<OsString>,
    help: bool,
}

/// The one loop over the arguments, for every command (not generic, so
/// compiled once).
fn read(cmd: &str, flags: &[&Flag], argv: Vec<OsString>) -> Result<Read, String> {
    use lexopt::Arg;
    let mut p = lexopt::Parser::from_args(argv);
    let mut r = Read {
        given: Vec::new(),
        positionals: Vec::new(),
        help: false,
    };
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let i = match arg {
            Arg::Value(v) => {
                r.positionals.push(v);
                continue;
            }
            Arg::Short(c) => flags
                .iter()
                .position(|f| f.short == Some(c))
                .ok_or_else(|| format!("unknown option '-{c}' (see iomark {cmd} --help)"))?,
            Arg::Long(name) => {
                let name = name.to_string();
                flags
                    .iter()
                    .position(|f| f.answers(&name))
                    .ok_or_else(|| unknown(cmd, flags, &name))?
            }
        };
        let f = flags[i];
        if f.name == "help" {
            r.help = true;
            continue;
        }
        match f.value {
            None => r.given.push((i, String::new())),
            Some(what) if f.many => {
                let vals = p
                    .values()
                    .map_err(|_| format!("--{} needs at least one {what}", f.name))?;
                for v in vals {
                    r.given.push((i, utf8(v, &format!("--{}", f.name))?));
                }
            }
            Some(_) => {
                let v = p
                    .value()
                    .map_err(|_| format!("option '--{}' needs a value", f.name))?;
                r.given.push((i, utf8(v, &format!("--{}", f.name))?));
            }
        }
    }
    Ok(r)
}

/// Parses a command's arguments into `start` (its defaults) with its
/// table; every error is one line.
pub fn parse<T>(spec: &Spec<T>, mut start: T, argv: Vec<OsString>) -> Result<Parsed<T>, String> {
    let r = read(spec.name, &spec.flags(), argv)?;
    if r.help {
        return Ok(Parsed::Help);
    }
    for (i, v) in &r.given {
        spec.apply(&mut start, *i, v)?;
    }
    (spec.finish)(&mut start, r.positionals)?;
    Ok(Parsed::Run(start))
}

/// The option column of the commands' help pages.
pub const OPTION_COLUMN: usize = 20;

impl Page {
    /// The `--help` page.
    pub fn help(&self) -> String {
        let mut s = String::new();
        for (i, u) in self.usage.iter().enumerate() {
            s.push_str(if i == 0 { "Usage: " } else { "       " });
            s.push_str("iomark ");
            s.push_str(u);
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&text::wrap(&self.about, 0, text::WIDTH));
        for (title, rows) in &self.lists {
            s.push_str(&format!("\n{title}:\n"));
            s.push_str(&text::options(rows, OPTION_COLUMN));
        }
        for (title, _, flags) in &self.sections {
            s.push_str(&format!("\n{title}:\n"));
            let rows: Vec<(String, &str)> = flags
                .iter()
                .map(|f| (f.synopsis(), f.help.as_str()))
                .collect();
            s.push_str(&text::options(&rows, OPTION_COLUMN));
        }
        if !self.after.is_empty() {
            s.push('\n');
            s.push_str(&text::wrap(&self.after, 0, text::WIDTH));
        }
        s.push_str("\nExamples:\n");
        for (cmd, what) in &self.examples {
            s.push_str(&help::example(cmd, what));
        }
        s
    }

    /// Every option of the page.
    pub fn flags(&self) -> impl Iterator<Item = &Flag> {
        self.sections.iter().flat_map(|(_, _, f)| f)
    }
}

/// Every subcommand's pages, by name (`history` has one per verb, named
/// "history import" …, after its own).
pub fn pages() -> Vec<Page> {
    let mut v = vec![
        quick::spec().page(),
        suite::spec().page(),
        sweep::spec().page(),
        report::spec().page(),
        compare::spec().page(),
    ];
    v.push(history::page());
    v.push(trend::spec().page());
    v
}

/// A command's `--help` page (empty for a name that is none).
pub fn help_page(name: &str) -> String {
    pages()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| p.help())
        .unwrap_or_default()
}

/// Runs subcommand `name` with its arguments; the exit code.
pub fn main(name: &str, argv: Vec<OsString>) -> i32 {
    match name {
        "quick" => quick::main(argv),
        "suite" => suite::main(argv),
        "sweep" => sweep::main(argv),
        "report" => report::main(argv),
        "compare" => compare::main(argv),
        "history" => history::main(argv),
        "trend" => trend::main(argv),
        other => crate::suite::fail(other, "no such command"),
    }
}

/// Parses subcommand `name`'s arguments with its table and runs nothing:
/// what `cli::parse_only` (and so the fuzz targets) checks of a
/// subcommand. The error is the line iomark would print after
/// `iomark NAME: `.
pub fn check(name: &str, argv: Vec<OsString>) -> Result<(), String> {
    fn one<T>(spec: Spec<T>, start: T, argv: Vec<OsString>) -> Result<(), String> {
        parse(&spec, start, argv).map(|_| ())
    }
    match name {
        "quick" => one(quick::spec(), Default::default(), argv),
        "suite" => one(suite::spec(), Default::default(), argv),
        "sweep" => one(sweep::spec(), Default::default(), argv),
        "report" => one(report::spec(), Default::default(), argv),
        "compare" => one(compare::spec(), Default::default(), argv),
        "history" => history::check(argv),
        "trend" => one(trend::spec(), Default::default(), argv),
        other => Err(format!("no such command '{other}'")),
    }
}

/// Parses with `spec` and runs `run` on the options: help on `--help`,
/// one line and exit status 1 on a bad argument (before any MPI ranks
/// join: said once for all of them).
pub fn drive<T>(spec: &Spec<T>, start: T, argv: Vec<OsString>, run: fn(T) -> i32) -> i32 {
    match parse(spec, start, argv) {
        Ok(Parsed::Help) => crate::suite::print(spec.name, &spec.page().help()),
        Ok(Parsed::Run(t)) => run(t),
        // Under MPI, said once for every rank.
        Err(e) => crate::suite::fail_early(spec.name, &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    fn quick(a: &[&str]) -> Result<quick::QuickOpts, String> {
        match parse(&quick::spec(), quick::QuickOpts::default(), args(a))? {
            Parsed::Run(o) => Ok(o),
            Parsed::Help => Err("help".into()),
        }
    }

    /// A value each placeholder accepts.
    fn sample(f: &Flag) -> String {
        if let Complete::Words(w) = f.complete {
            return w()[0].to_string();
        }
        match f.value.unwrap_or("") {
            "SIZE" => "4m".into(),
            "TIME" => "2s".into(),
            "N" | "PCT" => "2".into(),
            "A" => "0.1".into(),
            "DATE" => "2024-01-02".into(),
            "NAME" => "lab".into(),
            "URL" => "http://127.0.0.1:8333".into(),
            _ => "x".into(),
        }
    }

    /// Every table: names, aliases and short forms unique; every option
    /// on its help page, which fits 80 columns; every option takes a
    /// sample value (each of its words, when it has a set).
    #[test]
    fn every_table_is_consistent_and_every_option_parses() {
        // The parsers' tables (history's one page shows every verb's).
        let mut all: Vec<Page> = pages()
            .into_iter()
            .filter(|p| p.name != "history")
            .collect();
        all.extend(history::verb_pages());
        for page in &all {
            let mut names = std::collections::HashSet::new();
            for f in page.flags() {
                for n in std::iter::once(f.name).chain(f.aliases.iter().copied()) {
                    assert!(names.insert(format!("--{n}")), "{}: --{n} twice", page.name);
                }
                if let Some(c) = f.short {
                    assert!(names.insert(format!("-{c}")), "{}: -{c} twice", page.name);
                }
                assert!(!f.help.is_empty() && !f.help.ends_with('.'), "{}", f.name);
            }
            assert!(
                names.contains("--help") && names.contains("-h"),
                "{}",
                page.name
            );
        }
        for page in pages() {
            let help = page.help();
            assert!(help.lines().all(|l| l.len() <= 80), "{help}");
            for f in page.flags() {
                assert!(help.contains(&f.synopsis()), "{}: {}", page.name, f.name);
            }
        }
        // Each option of each command, through the command's parser.
        fn each<T: Clone>(spec: &Spec<T>, start: T) {
            let flags = spec.flags();
            for (i, f) in flags.iter().enumerate() {
                let values: Vec<String> = match (f.value, f.complete) {
                    (None, _) => vec![String::new()],
                    (Some(_), Complete::Words(w)) => w().iter().map(|s| s.to_string()).collect(),
                    (Some(_), _) => vec![sample(f)],
                };
                for v in values {
                    let r = spec.apply(&mut start.clone(), i, &v);
                    assert!(r.is_ok(), "{} --{} {v}: {r:?}", spec.name, f.name);
                }
            }
        }
        each(&quick::spec(), quick::QuickOpts::default());
        each(&suite::spec(), suite::SuiteOpts::default());
        each(&sweep::spec(), sweep::SweepOpts::default());
        each(&report::spec(), report::ReportOpts::default());
        each(&compare::spec(), compare::CompareOpts::default());
        each(&trend::spec(), trend::TrendOpts::default());
    }

    #[test]
    fn the_parser_reads_both_value_forms_aliases_and_positionals() {
        let o = quick(&[
            "--size=4m",
            "--runtime",
            "2s",
            "--ioengine=psync",
            "--no-warmup",
            "p",
        ])
        .unwrap();
        assert_eq!(o.run.size, Some(4 << 20));
        assert_eq!(o.run.runtime_us, Some(2_000_000));
        assert_eq!(o.run.engine.as_deref(), Some("psync"));
        assert_eq!(o.run.warmup_us, Some(0));
        assert_eq!(o.path.as_deref(), Some("p"));
        assert_eq!(
            quick(&["a", "--help", "--bogus=1"]).unwrap_err(),
            "unknown option '--bogus' for iomark quick (see iomark quick --help)"
        );
        assert_eq!(quick(&["-h"]).unwrap_err(), "help");
        let c = match parse(
            &compare::spec(),
            compare::CompareOpts::default(),
            args(&["--base", "a", "b", "--new", "c", "--threshold=3%"]),
        )
        .unwrap()
        {
            Parsed::Run(c) => c,
            Parsed::Help => panic!("help"),
        };
        assert_eq!(
            (c.base, c.new, c.rules.threshold),
            (
                vec!["a".to_string(), "b".into()],
                vec!["c".to_string()],
                3.0
            )
        );
    }

    /// `parse_only` (the fuzz targets' entry) parses subcommands too.
    #[test]
    fn parse_only_checks_subcommand_arguments() {
        let po = |a: &[&str]| crate::cli::parse_only(args(a), b"");
        assert_eq!(po(&["suite", "ars", "--size=4m"]), Ok(0));
        assert_eq!(po(&["history", "export", "--format=csv"]), Ok(0));
        assert_eq!(
            po(&["quick", "--passes=0"]).unwrap_err(),
            "quick: --passes: '0' is not a whole number of at least 1"
        );
        assert_eq!(
            po(&["history", "import", "--host=x", "a.json"]).unwrap_err(),
            "history: unknown option '--host' for iomark history import (see iomark history import --help)"
        );
        assert!(po(&["sweep", "--rw=sideways"])
            .unwrap_err()
            .starts_with("sweep: "));
        // Without --test, trend parses: its runner lists the tests.
        assert_eq!(po(&["trend"]), Ok(0));
        assert!(po(&["trend", "x"])
            .unwrap_err()
            .starts_with("trend: trend takes no arguments"));
    }

    /// Every bad input is one line naming what is wrong.
    #[test]
    fn bad_input_is_one_clear_line() {
        for (a, want) in [
            (&["--pases=2"][..], "unknown option '--pases' for iomark quick (did you mean '--passes'?)"),
            (&["-x"][..], "unknown option '-x' (see iomark quick --help)"),
            (&["--size"][..], "option '--size' needs a value"),
            (&["--passes=0"][..], "--passes: '0' is not a whole number of at least 1"),
            (&["--buffered=1"][..], "unexpected argument for option '--buffered': \"1\""),
            (&["a", "b"][..], "give at most one PATH (see iomark quick --help)"),
            (&["--no-report", "--json=-"][..], "--no-report and --json contradict each other (one writes no report, the other names where to write it): give one of them"),
        ] {
            let e = quick(a).unwrap_err();
            assert_eq!(e, want, "{a:?}");
            assert_eq!(e.lines().count(), 1);
        }
        let e = match parse(
            &compare::spec(),
            compare::CompareOpts::default(),
            args(&["--base"]),
        ) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert_eq!(e, "--base needs at least one RUN");
    }
}
