//! `iomark completions SHELL`: completion scripts for bash, zsh and fish,
//! generated from the run flag table, the command table (with each
//! command's options, read from its help page) and the job option table
//! (`--NAME=`, with the valid words of options that take one).

use std::ffi::OsString;
use std::fmt::Write;

use super::flags::{self, Complete, Flag, Value};
use super::text;
use crate::job::options::{self, Kind, OptDef};

pub fn usage() -> String {
    let mut s = String::from(
        "Usage: iomark completions SHELL\n\n\
         Prints a completion script for SHELL (bash, zsh or fish). It completes\n\
         the commands, the run flags, the job options (as --NAME=) and the\n\
         values of those that take one of a set of words.\n\n\
         Examples:\n",
    );
    for (cmd, what) in [
        (
            "iomark completions bash > /etc/bash_completion.d/iomark",
            "bash, for every user",
        ),
        (
            "iomark completions zsh > ~/.zfunc/_iomark",
            "zsh (with ~/.zfunc in fpath, before compinit)",
        ),
        (
            "iomark completions fish > ~/.config/fish/completions/iomark.fish",
            "fish",
        ),
    ] {
        s.push_str(&super::help::example(cmd, what));
    }
    s
}

/// Parses the arguments after `completions`; the script, or the help.
pub fn command(rest: &[OsString]) -> Result<String, String> {
    let args: Vec<&str> = rest.iter().map(|a| a.to_str().unwrap_or("")).collect();
    match args.as_slice() {
        ["-h" | "--help"] => Ok(usage()),
        ["bash"] => Ok(bash()),
        ["zsh"] => Ok(zsh()),
        ["fish"] => Ok(fish()),
        [] => Err("completions: name a shell: bash, zsh or fish".into()),
        [_] => Err(format!(
            "completions: unknown shell '{}' (shells: {})",
            rest[0].to_string_lossy().replace(char::is_control, "?"),
            flags::SHELLS.join(", ")
        )),
        _ => Err("completions: give one SHELL (bash, zsh or fish)".into()),
    }
}

/// A run flag as completion offers it: `--name=` when it takes a value.
fn flag_word(f: &Flag) -> String {
    match f.value {
        Value::Switch | Value::Optional(_) => format!("--{}", f.name),
        Value::Required(_) => format!("--{}=", f.name),
    }
}

/// The run flags completion offers (long forms, then short ones).
pub fn run_flag_words() -> Vec<String> {
    let mut w: Vec<String> = flags::shown().map(flag_word).collect();
    w.extend(flags::shown().filter_map(|f| f.short.map(|c| format!("-{c}"))));
    w
}

/// Implemented job options, by name.
fn job_options() -> Vec<&'static OptDef> {
    let mut v: Vec<&OptDef> = options::all().filter(|d| d.is_supported()).collect();
    v.sort_by_key(|d| d.name);
    v
}

/// A job option as completion offers it: `--NAME=`, or `--NAME` for
/// switches (`--time_based`).
fn job_word(d: &OptDef) -> String {
    if matches!(d.kind, Kind::Switch) {
        format!("--{}", d.name)
    } else {
        format!("--{}=", d.name)
    }
}

/// The words a value can be, when it is one of a set.
fn choices(d: &OptDef) -> Option<Vec<&'static str>> {
    match d.kind {
        Kind::Choice(c) => Some(c.iter().map(|(v, _)| *v).collect()),
        Kind::Bool => Some(vec!["0", "1"]),
        _ => None,
    }
}

/// `(command, its option words)` for the commands with options.
fn command_words() -> Vec<(&'static str, Vec<String>)> {
    flags::COMMANDS
        .iter()
        .map(|c| {
            let words = text::option_names(&(c.help)())
                .into_iter()
                .map(|n| format!("--{n}"))
                .collect();
            (c.name, words)
        })
        .collect()
}

fn engines() -> Vec<&'static str> {
    crate::job::engine_kind::EngineKind::ALL
        .iter()
        .map(|k| k.name())
        .collect()
}

/// The value words of run flags and job options: `(options, words)`;
/// `words` is `None` for a file name.
fn value_cases() -> Vec<(Vec<String>, Option<Vec<String>>)> {
    let own = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let mut out = Vec::new();
    for f in flags::shown() {
        let words = match f.complete {
            Complete::Nothing => continue,
            Complete::File => None,
            Complete::Choices(c) => own(c),
            Complete::JobOption => own(&job_options().iter().map(|d| d.name).collect::<Vec<_>>()),
            Complete::Engine => own(&engines()),
        };
        out.push((vec![format!("--{}", f.name)], words));
    }
    for d in job_options() {
        let names: Vec<String> = std::iter::once(d.name)
            .chain(d.aliases.iter().copied())
            .map(|n| format!("--{n}"))
            .collect();
        if d.name == "ioengine" {
            out.push((names, own(&engines())));
        } else if let Some(c) = choices(d) {
            out.push((names, own(&c)));
        } else if matches!(
            d.name,
            "filename" | "directory" | "opendir" | "read_iolog" | "write_iolog"
        ) {
            out.push((names, None));
        }
    }
    out
}

fn sh_quote_words(words: &[String]) -> String {
    words.join(" ")
}

/// bash: `complete -F _iomark iomark`.
pub fn bash() -> String {
    let mut s = String::from(
        "# bash completion for iomark, generated by `iomark completions bash`.\n\
         # Install: iomark completions bash > /etc/bash_completion.d/iomark\n\n",
    );
    let commands: Vec<String> = flags::COMMANDS.iter().map(|c| c.name.to_string()).collect();
    let _ = writeln!(s, "_iomark_commands='{}'", sh_quote_words(&commands));
    let _ = writeln!(
        s,
        "_iomark_run_flags='{}'",
        sh_quote_words(&run_flag_words())
    );
    let jobs: Vec<String> = job_options().iter().map(|d| job_word(d)).collect();
    let _ = writeln!(s, "_iomark_job_options='{}'", sh_quote_words(&jobs));
    s.push_str(
        "\n_iomark_values() {\n\
         \x20   # The words the value of option $1 can be; 'FILE' for file names.\n\
         \x20   case \"$1\" in\n",
    );
    for (names, words) in value_cases() {
        let w = match words {
            Some(w) => sh_quote_words(&w),
            None => "FILE".into(),
        };
        let _ = writeln!(s, "        {}) echo '{w}' ;;", names.join("|"));
    }
    s.push_str("    esac\n}\n\n_iomark() {\n");
    s.push_str(
        "    local line=\"${COMP_LINE:0:COMP_POINT}\"\n\
         \x20   local cur=\"${line##*[[:space:]]}\"\n\
         \x20   local sub=\"\" words=\"\"\n\
         \x20   if ((COMP_CWORD > 1)); then sub=\"${COMP_WORDS[1]}\"; fi\n\
         \x20   case \"$sub\" in\n",
    );
    for (name, words) in command_words() {
        if name == "completions" {
            let _ = writeln!(
                s,
                "        completions) words='{} --help' ;;",
                flags::SHELLS.join(" ")
            );
        } else if name == "help" {
            let _ = writeln!(s, "        help) words=\"$_iomark_commands\" ;;");
        } else {
            let _ = writeln!(s, "        {name}) words='{}' ;;", sh_quote_words(&words));
        }
    }
    s.push_str(
        "    esac\n\
         \x20   if [[ -n $words ]]; then\n\
         \x20       if [[ $sub == help || $sub == completions || $cur == -* ]]; then\n\
         \x20           COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\
         \x20       else\n\
         \x20           COMPREPLY=($(compgen -f -- \"$cur\"))\n\
         \x20       fi\n\
         \x20       return 0\n\
         \x20   fi\n\
         \x20   case \"$cur\" in\n\
         \x20       --*=*)\n\
         \x20           local opt=\"${cur%%=*}\" val=\"${cur#*=}\" values\n\
         \x20           values=$(_iomark_values \"$opt\")\n\
         \x20           if [[ $values == FILE ]]; then\n\
         \x20               COMPREPLY=($(compgen -f -- \"$val\"))\n\
         \x20           else\n\
         \x20               COMPREPLY=($(compgen -W \"$values\" -- \"$val\"))\n\
         \x20           fi\n\
         \x20           # Readline replaces only what follows '=' when '=' breaks words.\n\
         \x20           if [[ $COMP_WORDBREAKS != *=* ]]; then\n\
         \x20               COMPREPLY=(\"${COMPREPLY[@]/#/$opt=}\")\n\
         \x20           fi\n\
         \x20           ;;\n\
         \x20       -*)\n\
         \x20           COMPREPLY=($(compgen -W \"$_iomark_run_flags $_iomark_job_options\" -- \"$cur\"))\n\
         \x20           if [[ ${COMPREPLY[*]} == *= || ${COMPREPLY[*]} == *=\\ * ]]; then\n\
         \x20               compopt -o nospace 2>/dev/null\n\
         \x20           fi\n\
         \x20           ;;\n\
         \x20       *)\n\
         \x20           if ((COMP_CWORD == 1)); then\n\
         \x20               COMPREPLY=($(compgen -W \"$_iomark_commands\" -- \"$cur\"))\n\
         \x20           fi\n\
         \x20           COMPREPLY+=($(compgen -f -- \"$cur\"))\n\
         \x20           ;;\n\
         \x20   esac\n\
         \x20   return 0\n\
         }\n\
         complete -F _iomark iomark\n",
    );
    s
}

/// zsh: a `#compdef` function.
pub fn zsh() -> String {
    let mut s = String::from(
        "#compdef iomark\n\
         # zsh completion for iomark, generated by `iomark completions zsh`.\n\
         # Install: iomark completions zsh > ~/.zfunc/_iomark, with\n\
         # fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc.\n\n\
         _iomark() {\n\
         \x20 local -a commands run_flags job_options cands\n",
    );
    s.push_str("  commands=(\n");
    for c in flags::COMMANDS {
        let _ = writeln!(s, "    '{}:{}'", c.name, zsh_text(c.summary));
    }
    s.push_str("  )\n  run_flags=(\n");
    for f in flags::shown() {
        let _ = writeln!(s, "    '{}:{}'", flag_word(f), zsh_text(f.help));
        if let Some(c) = f.short {
            let _ = writeln!(s, "    '-{c}:{}'", zsh_text(f.help));
        }
    }
    s.push_str("  )\n  job_options=(\n");
    for d in job_options() {
        let _ = writeln!(s, "    '{}:{}'", job_word(d), zsh_text(d.help));
    }
    s.push_str(
        "  )\n\
         \x20 local cur=${words[CURRENT]}\n\
         \x20 if (( CURRENT > 2 )); then\n\
         \x20   case ${words[2]} in\n",
    );
    for (name, ws) in command_words() {
        let list = match name {
            "completions" => format!("{} --help", flags::SHELLS.join(" ")),
            "help" => flags::COMMANDS
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(" "),
            _ => ws.join(" "),
        };
        let _ = writeln!(s, "      ({name}) cands=({list}) ;;");
    }
    s.push_str(
        "    esac\n\
         \x20   if (( ${#cands} )); then\n\
         \x20     if [[ ${words[2]} == (help|completions) || $cur == -* ]]; then\n\
         \x20       compadd -a cands\n\
         \x20     else\n\
         \x20       _files\n\
         \x20     fi\n\
         \x20     return\n\
         \x20   fi\n\
         \x20 fi\n\
         \x20 case $cur in\n\
         \x20   --*=*)\n\
         \x20     local opt=${cur%%=*}\n\
         \x20     local -a values\n\
         \x20     case $opt in\n",
    );
    for (names, words) in value_cases() {
        let body = match words {
            Some(w) => format!(
                "values=({})",
                w.iter().map(|x| zsh_word(x)).collect::<Vec<_>>().join(" ")
            ),
            None => "compset -P '*='; _files; return".into(),
        };
        let _ = writeln!(s, "        ({}) {body} ;;", names.join("|"));
    }
    s.push_str(
        "      esac\n\
         \x20     compset -P '*='\n\
         \x20     compadd -a values\n\
         \x20     ;;\n\
         \x20   -*)\n\
         \x20     _describe -t run-flags 'run flag' run_flags -S ''\n\
         \x20     _describe -t job-options 'job option' job_options -S ''\n\
         \x20     ;;\n\
         \x20   *)\n\
         \x20     (( CURRENT == 2 )) && _describe -t commands 'command' commands\n\
         \x20     _files\n\
         \x20     ;;\n\
         \x20 esac\n\
         }\n\n\
         _iomark \"$@\"\n",
    );
    s
}

/// Help text inside a zsh `'word:description'` item.
fn zsh_text(t: &str) -> String {
    t.replace('\'', "'\\''").replace(':', "\\:")
}

fn zsh_word(w: &str) -> String {
    if w.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-.,/".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// fish: `complete -c iomark …` lines.
pub fn fish() -> String {
    let mut s = String::from(
        "# fish completion for iomark, generated by `iomark completions fish`.\n\
         # Install: iomark completions fish > ~/.config/fish/completions/iomark.fish\n\n",
    );
    let cmds: Vec<&str> = flags::COMMANDS.iter().map(|c| c.name).collect();
    let not_sub = format!("not __fish_seen_subcommand_from {}", cmds.join(" "));
    for c in flags::COMMANDS {
        let _ = writeln!(
            s,
            "complete -c iomark -n __fish_use_subcommand -f -a {} -d {}",
            c.name,
            fish_quote(c.summary)
        );
    }
    s.push_str("\n# Run flags.\n");
    for f in flags::shown() {
        let mut line = format!("complete -c iomark -n '{not_sub}' -l {}", f.name);
        if let Some(c) = f.short {
            let _ = write!(line, " -s {c}");
        }
        let words: Option<Vec<&str>> = match f.complete {
            Complete::Nothing | Complete::File => None,
            Complete::Choices(c) => Some(c.to_vec()),
            Complete::JobOption => Some(job_options().iter().map(|d| d.name).collect()),
            Complete::Engine => Some(engines()),
        };
        match (f.value, f.complete, words) {
            (Value::Switch, _, _) => {}
            (_, Complete::File, _) => line.push_str(" -r -F"),
            (Value::Required(_), _, None) => line.push_str(" -x"),
            (Value::Required(_), _, Some(w)) => {
                let _ = write!(line, " -x -a {}", fish_quote(&w.join(" ")));
            }
            (Value::Optional(_), _, None) => {}
            (Value::Optional(_), _, Some(w)) => {
                let _ = write!(line, " -a {}", fish_quote(&w.join(" ")));
            }
        }
        let _ = writeln!(s, "{line} -d {}", fish_quote(f.help));
    }
    s.push_str("\n# Job options.\n");
    for d in job_options() {
        let mut line = format!("complete -c iomark -n '{not_sub}' -l {}", d.name);
        let words = if d.name == "ioengine" {
            Some(engines())
        } else {
            choices(d)
        };
        if let Some(w) = words {
            let _ = write!(line, " -x -a {}", fish_quote(&w.join(" ")));
        } else if !matches!(d.kind, Kind::Switch) {
            line.push_str(" -r");
        }
        let _ = writeln!(s, "{line} -d {}", fish_quote(d.help));
    }
    s.push_str("\n# Commands' options.\n");
    for (name, words) in command_words() {
        match name {
            "completions" => {
                let _ = writeln!(
                    s,
                    "complete -c iomark -n '__fish_seen_subcommand_from completions' -f -a {}",
                    fish_quote(&flags::SHELLS.join(" "))
                );
            }
            "help" => {
                let _ = writeln!(
                    s,
                    "complete -c iomark -n '__fish_seen_subcommand_from help' -f -a {}",
                    fish_quote(&cmds.join(" "))
                );
            }
            _ => {
                for w in words {
                    let _ = writeln!(
                        s,
                        "complete -c iomark -n '__fish_seen_subcommand_from {name}' -l {}",
                        w.trim_start_matches('-')
                    );
                }
            }
        }
    }
    s
}

fn fish_quote(t: &str) -> String {
    format!("'{}'", t.replace('\\', "\\\\").replace('\'', "\\'"))
}
