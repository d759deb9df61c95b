//! The front door: `--help`, `iomark help COMMAND`, `-V`, bare `iomark`,
//! the man page and the shell completions. They are generated from the
//! run flag table; these tests read each output as a user's tool would
//! (the help page's option lines, the roff source, each shell's script)
//! and check that they agree with each other and with the table.

use std::collections::BTreeSet;
#[cfg(unix)]
use std::path::Path;
#[cfg(unix)]
use std::process::Command;

use crate::common::*;

const COMMANDS: &[&str] = &[
    "quick",
    "suite",
    "sweep",
    "report",
    "compare",
    "history",
    "trend",
    "completions",
    "help",
];

fn out(args: &[&str]) -> String {
    let o = iomark().args(args).output_bounded().expect("run iomark");
    assert!(o.status.success(), "iomark {args:?}: {}", stderr(&o));
    assert!(o.stderr.is_empty(), "iomark {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The run flags the table documents (long names).
fn table_flags() -> BTreeSet<String> {
    iomark::cli::flags::shown()
        .map(|f| f.name.to_string())
        .collect()
}

/// Long flag names on the option lines (`  --name…` or `  -h, --help …`)
/// of `--help`'s run flag sections: from "Output:" to "Job options".
fn flags_in_help(help: &str) -> BTreeSet<String> {
    let start = help.find("\nOutput:\n").expect("an Output section");
    let end = help.find("\nJob options").expect("a Job options section");
    let mut set = BTreeSet::new();
    for line in help[start..end].lines().filter(|l| l.starts_with("  -")) {
        let left = line.trim_start().split("  ").next().unwrap();
        for w in left.split([' ', ',']) {
            if let Some(n) = w.strip_prefix("--") {
                let n: String = n
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                    .collect();
                set.insert(n);
            }
        }
    }
    set
}

/// Long flag names tagged in the roff source's OPTIONS section.
fn flags_in_man(roff: &str) -> BTreeSet<String> {
    let start = roff.find("\n.SH OPTIONS\n").expect("an OPTIONS section");
    let section = &roff[start + 1..];
    let end = section[1..]
        .find("\n.SH ")
        .map(|e| e + 1)
        .unwrap_or(section.len());
    let lines: Vec<&str> = section[..end].lines().collect();
    let mut set = BTreeSet::new();
    for pair in lines.windows(2).filter(|w| w[0] == ".TP") {
        for part in pair[1].split("\\fB\\-\\-").skip(1) {
            let n: String = part.split("\\fR").next().unwrap().replace("\\-", "-");
            set.insert(n);
        }
    }
    set
}

/// `--name` and `--name=` words → names; short flags left out.
fn long_names<'a>(words: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    words
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| w.trim_end_matches('=').to_string())
        .collect()
}

fn flags_in_bash(script: &str) -> BTreeSet<String> {
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("_iomark_run_flags='"))
        .expect("the run flag list");
    long_names(line.trim_end_matches('\'').split(' '))
}

fn flags_in_zsh(script: &str) -> BTreeSet<String> {
    let start = script.find("run_flags=(\n").expect("the run flag array");
    let body = &script[start..];
    let body = &body[..body.find("\n  )").unwrap()];
    long_names(
        body.lines()
            .skip(1)
            .map(|l| l.trim().trim_start_matches('\'').split(':').next().unwrap()),
    )
}

fn flags_in_fish(script: &str) -> BTreeSet<String> {
    let start = script.find("# Run flags.\n").expect("the run flag block");
    let body = &script[start..];
    let body = &body[..body.find("\n\n").unwrap_or(body.len())];
    body.lines()
        .filter_map(|l| l.split(" -l ").nth(1))
        .map(|r| r.split(' ').next().unwrap().to_string())
        .collect()
}

#[test]
fn help_man_page_and_completions_list_the_same_run_flags() {
    let want = table_flags();
    assert!(
        [
            "output",
            "output-format",
            "eta",
            "status-interval",
            "warnings-fatal",
            "max-jobs",
            "man",
            "inflate-log"
        ]
        .iter()
        .all(|f| want.contains(*f)),
        "{want:?}"
    );
    assert!(
        !want.contains("fake-clock") && !want.contains("server"),
        "{want:?}"
    );
    let help = out(&["--help"]);
    assert_eq!(flags_in_help(&help), want, "--help");
    assert_eq!(flags_in_man(&out(&["--man"])), want, "--man");
    assert_eq!(flags_in_bash(&out(&["completions", "bash"])), want, "bash");
    assert_eq!(flags_in_zsh(&out(&["completions", "zsh"])), want, "zsh");
    assert_eq!(flags_in_fish(&out(&["completions", "fish"])), want, "fish");
    // Short forms too.
    assert!(
        help.contains("  -h, --help") && help.contains("  -V, --version"),
        "{help}"
    );
}

#[test]
fn completions_know_commands_and_job_options() {
    let bash = out(&["completions", "bash"]);
    let commands = bash
        .lines()
        .find_map(|l| l.strip_prefix("_iomark_commands='"))
        .unwrap()
        .trim_end_matches('\'');
    assert_eq!(commands.split(' ').collect::<Vec<_>>(), COMMANDS);
    let jobs = bash
        .lines()
        .find_map(|l| l.strip_prefix("_iomark_job_options='"))
        .unwrap();
    let jobs: Vec<&str> = jobs.trim_end_matches('\'').split(' ').collect();
    for w in [
        "--bs=",
        "--rw=",
        "--ioengine=",
        "--iodepth=",
        "--time_based",
    ] {
        assert!(jobs.contains(&w), "{w} not in {jobs:?}");
    }
    // Options iomark refuses are not offered.
    assert!(
        !jobs.iter().any(|w| w.starts_with("--hostname")),
        "{jobs:?}"
    );
    let fish = out(&["completions", "fish"]);
    assert!(fish.contains(" -l bs -r "), "fish");
    let zsh = out(&["completions", "zsh"]);
    assert!(
        zsh.starts_with("#compdef iomark\n") && zsh.contains("'--bs=:"),
        "zsh"
    );
}

/// Completion in bash as readline drives it: COMP_LINE up to the
/// cursor, the words, and what `_iomark` offers.
// Unix shells (bash, zsh, fish) load the completion scripts.
#[cfg(unix)]
#[test]
fn bash_completes_flags_values_commands_and_command_options() {
    if Command::new("bash")
        .arg("--version")
        .output_bounded()
        .is_err()
    {
        missing("bash is not installed");
        return;
    }
    let dir = tempdir();
    let script = dir.path().join("iomark.bash");
    std::fs::write(&script, out(&["completions", "bash"])).unwrap();
    let cases: &[(&str, &str)] = &[
        ("iomark --outp", "--output= --output-format="),
        ("iomark --warn", "--warnings-fatal"),
        ("iomark --rw=randw", "randwrite"),
        ("iomark --output-format=js", "json json+"),
        ("iomark --ioengine=io_", "io_uring io_uring_cmd"),
        (
            "iomark --cmdhelp=iodep",
            "iodepth iodepth_batch_complete_max iodepth_batch_complete_min iodepth_batch_submit iodepth_low",
        ),
        ("iomark qu", "quick"),
        ("iomark quick --pas", "--passes"),
        ("iomark sweep --rep", "--repeat"),
        ("iomark completions f", "fish"),
        ("iomark help sw", "sweep"),
    ];
    let mut sh = format!("source '{}'\n", script.display());
    sh.push_str(
        "comp() {\n\
         COMP_LINE=\"$1\"; COMP_POINT=${#COMP_LINE}\n\
         read -ra COMP_WORDS <<< \"$COMP_LINE\"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n\
         COMPREPLY=(); _iomark; echo \"${COMPREPLY[*]}\"\n\
         }\n",
    );
    for (line, _) in cases {
        sh.push_str(&format!("comp '{line}'\n"));
    }
    let o = Command::new("bash")
        .arg("-c")
        .arg(&sh)
        .output_bounded()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = stdout(&o);
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got.len(), cases.len(), "{got:?}");
    for ((line, want), got) in cases.iter().zip(got) {
        assert_eq!(got, *want, "{line}");
    }
}

/// zsh and fish read their scripts without error; fish completes as
/// it would at a prompt.
// Unix shells (bash, zsh, fish) load the completion scripts.
#[cfg(unix)]
#[test]
fn zsh_and_fish_load_their_scripts() {
    let dir = tempdir();
    for (shell, args) in [("zsh", vec!["-n"]), ("fish", vec!["--no-execute"])] {
        if Command::new(shell)
            .arg("--version")
            .output_bounded()
            .is_err()
        {
            missing(&format!(
                "{shell} is not installed (apt-get install {shell})"
            ));
            continue;
        }
        let f = dir.path().join(format!("iomark.{shell}"));
        std::fs::write(&f, out(&["completions", shell])).unwrap();
        let o = Command::new(shell)
            .args(&args)
            .arg(&f)
            .output_bounded()
            .unwrap();
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{shell}: {}",
            stderr(&o)
        );
        if shell == "zsh" {
            // The completion function's choices, with zsh's completion
            // builtins replaced by stubs that print what they are given
            // (zsh itself then filters them by what was typed).
            let stubs = format!(
                "compadd() {{ [[ $1 == -a ]] && print -r -- \"${{(P)2}}\" }}\n\
                 _describe() {{ print -r -- \"describe $2\" }}\n\
                 _files() {{ print files }}\n\
                 compset() {{ }}\n\
                 try() {{ words=(\"${{(@s: :)1}}\"); CURRENT=${{#words}}; source '{}' }}\n\
                 try 'iomark --outp'; try 'iomark --rw=randw'; try 'iomark quick --pa'; \
                 try 'iomark completions b'; try 'iomark --output=fo'\n",
                f.display()
            );
            let o = Command::new("zsh")
                .arg("-f")
                .arg("-c")
                .arg(stubs)
                .output_bounded()
                .unwrap();
            let got = stdout(&o);
            let want = "describe run-flags\ndescribe job-options\n\
                        read write trim randread randwrite randtrim rw readwrite randrw trimwrite randtrimwrite\n\
                        --size --runtime --passes --warmup --no-warmup --engine --buffered --json --html \
                        --no-report --print-jobfile --eta --eta-newline --mpi --mpi-timeout --label \
                        --no-history --history-db --units --help\n\
                        bash zsh fish --help\nfiles\n";
            assert_eq!(got, want, "{}", stderr(&o));
        }
        if shell == "fish" {
            let o = Command::new("fish")
                .arg("-c")
                .arg(format!(
                    "source '{}'; complete -C 'iomark --outp'; complete -C 'iomark --eta=al'; complete -C 'iomark qu'",
                    f.display()
                ))
                .output_bounded()
                .unwrap();
            let got: Vec<String> = stdout(&o)
                .lines()
                .map(|l| l.split('\t').next().unwrap().to_string())
                .collect();
            assert_eq!(
                got,
                ["--output", "--output-format", "--eta=always", "quick"],
                "{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn completions_refuses_an_unknown_shell() {
    for (args, err) in [
        (
            &["completions"][..],
            "iomark: completions: name a shell: bash, zsh or fish\n",
        ),
        (
            &["completions", "tcsh"][..],
            "iomark: completions: unknown shell 'tcsh' (shells: bash, zsh, fish)\n",
        ),
    ] {
        let o = iomark().args(args).output_bounded().unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o), err);
        assert!(o.stdout.is_empty());
    }
}

/// Every help page: within 80 columns (counted in bytes, as a
/// byte-counting `awk 'length > 80'` does), option lines indented alike,
/// and an examples section.
#[test]
fn every_help_page_fits_80_columns_and_has_examples() {
    let mut pages = vec![(vec!["--help".to_string()], out(&["--help"]))];
    for c in COMMANDS {
        pages.push((vec![(*c).into(), "--help".into()], out(&[c, "--help"])));
        pages.push((vec![(*c).into(), "-h".into()], out(&[c, "-h"])));
        pages.push((vec!["help".into(), (*c).into()], out(&["help", c])));
    }
    for (args, page) in &pages {
        let wide: Vec<&str> = page.lines().filter(|l| l.len() > 80).collect();
        assert!(
            wide.is_empty(),
            "iomark {args:?}: lines over 80 columns: {wide:#?}"
        );
        assert!(
            page.contains("\nExamples:\n"),
            "iomark {args:?} has no examples:\n{page}"
        );
        // Option lists: every line starting with a dash is indented.
        let flush: Vec<&str> = page.lines().filter(|l| l.starts_with('-')).collect();
        assert!(
            flush.is_empty(),
            "iomark {args:?}: unindented option lines: {flush:?}"
        );
    }
}

#[test]
fn the_first_option_of_quick_suite_and_sweep_is_indented_like_the_rest() {
    for c in ["quick", "suite", "sweep"] {
        let page = out(&[c, "--help"]);
        let options = &page[page.find("\nOptions:\n").unwrap() + 10..];
        let first = options.lines().next().unwrap();
        let second = options.lines().nth(1).unwrap();
        assert!(
            first.starts_with("  --") && second.starts_with("  --"),
            "{c}: {first:?} {second:?}"
        );
    }
}

#[test]
fn help_command_shows_each_commands_help() {
    assert_eq!(out(&["help"]), out(&["--help"]));
    assert_eq!(out(&["help"]), out(&["-h"]));
    for c in COMMANDS {
        let page = out(&["help", c]);
        assert_eq!(page, out(&[c, "--help"]), "{c}");
        assert!(
            page.starts_with("Usage: iomark ") || *c == "help",
            "{c}: {page}"
        );
    }
    let o = iomark().args(["help", "nope"]).output_bounded().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "iomark: help: unknown command 'nope' (commands: quick, suite, sweep, report, compare, history, trend, completions, help)\n"
    );
}

#[test]
fn version_has_a_short_form() {
    let v = out(&["--version"]);
    assert_eq!(v, format!("iomark-{}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(out(&["-V"]), v);
}

/// Bare `iomark` is an error (status 1, as fio's): a short usage on
/// standard error pointing at `iomark quick` and `--help`.
#[test]
fn bare_iomark_points_at_quick_and_help() {
    let o = iomark().output_bounded().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let e = stderr(&o);
    assert!(e.starts_with("iomark: no job given\nUsage: iomark "), "{e}");
    assert!(
        e.contains("'iomark quick'") && e.contains("'iomark --help'"),
        "{e}"
    );
    assert!(
        e.lines().count() <= 8 && e.lines().all(|l| l.len() <= 80),
        "{e}"
    );
    // With options but no job it is still the job error, one line.
    let o = iomark().arg("--eta=never").output_bounded().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn warnings_fatal_is_in_help_and_works() {
    assert!(out(&["--help"]).contains("  --warnings-fatal "));
    let dir = tempdir();
    // 'threads' has no effect outside fio's tiobench profile: a warning.
    let args = ["--name=w", "--ioengine=null", "--size=1m", "--threads=2"];
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("iomark: warning: "), "{}", stderr(&o));
    let mut fatal = vec!["--warnings-fatal"];
    fatal.extend(args);
    let o = run_in(dir.path(), &fatal);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("iomark: warning: job 'w': 'threads' has no effect"),
        "{e}"
    );
    assert!(
        e.ends_with("iomark: 1 warning and --warnings-fatal: nothing was run\n"),
        "{e}"
    );
    // No warning, no effect.
    let o = run_in(
        dir.path(),
        &[
            "--warnings-fatal",
            "--name=w",
            "--ioengine=null",
            "--size=1m",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The man page renders with man-db (groff underneath) without a
/// warning, and shows the run flags, the job options and the sections.
// man(1) renders the page.
#[cfg(unix)]
#[test]
fn the_man_page_renders_without_warnings() {
    if Command::new("man")
        .arg("--version")
        .output_bounded()
        .is_err()
    {
        missing("man is not installed (apt-get install man-db groff-base)");
        return;
    }
    let dir = tempdir();
    let page = dir.path().join("iomark.1");
    std::fs::write(&page, out(&["--man"])).unwrap();
    let o = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&page)
        .env("MANWIDTH", "80")
        // Set at all, it keeps bold and underlining in a pipe.
        .env_remove("MAN_KEEP_FORMATTING")
        .env("PAGER", "cat")
        .output_bounded()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "man warned");
    let text = stdout(&o);
    for s in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "COMMANDS",
        "OPTIONS",
        "JOB OPTIONS",
        "EXIT STATUS",
        "EXAMPLES",
    ] {
        assert!(text.contains(&format!("\n{s}\n")), "no {s} section");
    }
    for s in [
        "--warnings-fatal",
        "--inflate-log=FILE",
        "iomark quick",
        "randwrite",
        "blocksize",
    ] {
        assert!(text.contains(s), "{s} not in the rendered page");
    }
    assert!(
        text.lines().all(|l| l.chars().count() <= 80),
        "rendered wider than 80"
    );
}

/// The preset names, from the preset registry.
#[cfg(unix)]
fn preset_names() -> BTreeSet<String> {
    iomark::suite::presets::ALL
        .iter()
        .map(|p| p.name.to_string())
        .collect()
}

/// The engine names, from the engine registry.
#[cfg(unix)]
fn engine_names() -> BTreeSet<String> {
    iomark::job::engine_kind::EngineKind::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect()
}

#[cfg(unix)]
fn word_set(line: &str) -> BTreeSet<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// A directory with one subdirectory and one file, for file and
/// directory completion.
#[cfg(unix)]
fn completion_dir() -> tempfile::TempDir {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    std::fs::write(dir.path().join("afile.json"), "{}").unwrap();
    dir
}

/// bash as readline drives it, for each line (the cursor at its end):
/// COMP_WORDS with an empty last word after a trailing space, and what
/// `_iomark` offers, as a set (file completion has no order).
#[cfg(unix)]
fn bash_complete(dir: &Path, lines: &[&str]) -> Vec<BTreeSet<String>> {
    let script = dir.join("iomark.bash");
    std::fs::write(&script, out(&["completions", "bash"])).unwrap();
    let mut sh = format!("cd '{}'; source '{}'\n", dir.display(), script.display());
    sh.push_str(
        "comp() {\n\
         COMP_LINE=\"$1\"; COMP_POINT=${#COMP_LINE}\n\
         read -ra COMP_WORDS <<< \"$COMP_LINE\"\n\
         [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n\
         COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n\
         COMPREPLY=(); _iomark; echo \"${COMPREPLY[*]}\"\n\
         }\n",
    );
    for line in lines {
        sh.push_str(&format!("comp '{line}'\n"));
    }
    let o = Command::new("bash")
        .arg("-c")
        .arg(&sh)
        .output_bounded()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got: Vec<BTreeSet<String>> = stdout(&o).lines().map(word_set).collect();
    assert_eq!(got.len(), lines.len(), "{}", stdout(&o));
    got
}

/// The subcommands' completions come from their tables: suite offers the
/// preset registry's names, value completion knows the engines, the
/// patterns, the formats and the metrics, file and directory arguments
/// complete as such, history completes per verb.
// Unix shells (bash, zsh, fish) load the completion scripts.
#[cfg(unix)]
#[test]
fn bash_completes_subcommand_arguments_and_values_from_their_tables() {
    if Command::new("bash")
        .arg("--version")
        .output_bounded()
        .is_err()
    {
        missing("bash is not installed");
        return;
    }
    let dir = completion_dir();
    let files = "adir afile.json iomark.bash";
    let cases: &[(&str, String)] = &[
        (
            "iomark suite ",
            preset_names().into_iter().collect::<Vec<_>>().join(" "),
        ),
        (
            "iomark suite crystal",
            "crystaldiskmark crystaldiskmark-nvme".into(),
        ),
        // After the preset, PATH: directories only.
        ("iomark suite ars ", "adir".into()),
        ("iomark quick ", "adir".into()),
        ("iomark quick --size 1g ", "adir".into()),
        ("iomark quick --size=1g a", "adir".into()),
        (
            "iomark quick --engine ",
            engine_names().into_iter().collect::<Vec<_>>().join(" "),
        ),
        ("iomark quick --engine=io_", "io_uring io_uring_cmd".into()),
        ("iomark quick --ioengine ps", "psync".into()),
        ("iomark quick --eta=a", "always auto".into()),
        ("iomark quick --json=af", "afile.json".into()),
        ("iomark quick --json ", files.into()),
        ("iomark quick --size ", "".into()),
        ("iomark sweep --rw=randw", "randwrite".into()),
        ("iomark sweep --rep", "--repeat".into()),
        ("iomark report ", files.into()),
        ("iomark report -o af", "afile.json".into()),
        ("iomark compare --base ", files.into()),
        ("iomark compare --thr", "--threshold".into()),
        ("iomark history ", "list import export check delete".into()),
        ("iomark history --kind s", "suite sweep".into()),
        ("iomark history export --format ", "csv jsonl influx".into()),
        ("iomark history export --format=j", "jsonl".into()),
        (
            "iomark history import --",
            "--label --history-db --help".into(),
        ),
        ("iomark history import ", files.into()),
        ("iomark history check --", "--history-db --help".into()),
        ("iomark trend --metric=p", "p99 p99.9".into()),
        ("iomark trend --te", "--test".into()),
    ];
    let lines: Vec<&str> = cases.iter().map(|(l, _)| *l).collect();
    let got = bash_complete(dir.path(), &lines);
    for ((line, want), got) in cases.iter().zip(got) {
        assert_eq!(got, word_set(want), "{line}");
    }
}

/// zsh and fish offer the preset registry's names after `suite`, and
/// the values the tables know.
// Unix shells (bash, zsh, fish) load the completion scripts.
#[cfg(unix)]
#[test]
fn zsh_and_fish_complete_presets_and_values_from_the_tables() {
    let dir = completion_dir();
    let presets = preset_names().into_iter().collect::<Vec<_>>().join(" ");
    for shell in ["zsh", "fish"] {
        if Command::new(shell)
            .arg("--version")
            .output_bounded()
            .is_err()
        {
            missing(&format!(
                "{shell} is not installed (apt-get install {shell})"
            ));
            continue;
        }
        let f = dir.path().join(format!("iomark.{shell}"));
        std::fs::write(&f, out(&["completions", shell])).unwrap();
        if shell == "zsh" {
            // zsh's completion builtins replaced by stubs that print what
            // they are given.
            let stubs = format!(
                "compadd() {{ if [[ $1 == -a ]]; then print -r -- \"${{(P)2}}\"; else shift; print -r -- \"$*\"; fi }}\n\
                 _describe() {{ print -r -- \"describe $2\" }}\n\
                 _files() {{ print -r -- \"files $*\" }}\n\
                 compset() {{ }}\n\
                 try() {{ words=(\"${{(@s: :)1}}\"); CURRENT=${{#words}}; source '{}' }}\n\
                 try 'iomark suite '; try 'iomark suite ars '; try 'iomark quick --engine=io'; \
                 try 'iomark quick --eta '; try 'iomark history export --format '; \
                 try 'iomark history '; try 'iomark report '; try 'iomark quick --size 1g '\n",
                f.display()
            );
            let o = Command::new("zsh")
                .arg("-f")
                .arg("-c")
                .arg(stubs)
                .output_bounded()
                .unwrap();
            let got: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
            let engines = iomark::job::engine_kind::EngineKind::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(" ");
            let want = [
                presets.as_str(),
                "files -/",
                engines.as_str(),
                "auto always never",
                "csv jsonl influx",
                "list import export check delete",
                "files",
                "files -/",
            ];
            assert_eq!(got.len(), want.len(), "{got:?} {}", stderr(&o));
            assert_eq!(word_set(&got[0]), preset_names(), "zsh suite");
            for (g, w) in got.iter().zip(want).skip(1) {
                assert_eq!(g.trim_end(), w, "{}", stderr(&o));
            }
        }
        if shell == "fish" {
            let o = Command::new("fish")
                .arg("-c")
                .arg(format!(
                    "source '{}'; complete -C 'iomark suite '; echo ==; \
                     complete -C 'iomark quick --engine=io_'; echo ==; \
                     complete -C 'iomark history export --format='; echo ==; \
                     complete -C 'iomark history '",
                    f.display()
                ))
                .output_bounded()
                .unwrap();
            let text = stdout(&o);
            let blocks: Vec<BTreeSet<String>> = text
                .split("==\n")
                .map(|b| {
                    b.lines()
                        .map(|l| l.split('\t').next().unwrap().to_string())
                        .collect()
                })
                .collect();
            assert_eq!(blocks.len(), 4, "{text} {}", stderr(&o));
            assert_eq!(blocks[0], preset_names(), "fish suite");
            assert_eq!(
                blocks[1],
                word_set("--engine=io_uring --engine=io_uring_cmd")
            );
            assert_eq!(
                blocks[2],
                word_set("--format=csv --format=jsonl --format=influx")
            );
            assert_eq!(blocks[3], word_set("list import export check delete"));
        }
    }
}
