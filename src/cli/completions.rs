//! `iomark completions SHELL`: completion scripts for bash, zsh and fish,
//! generated from the run flag table, the command table, each
//! subcommand's flag table (`cli::cmd`: its options, the values they
//! take, its arguments) and the job option table (`--NAME=`, with the
//! valid words of options that take one).

use std::ffi::OsString;
use std::fmt::Write;

use super::cmd;
use super::flags::{self, Complete, Flag, Value};
use crate::job::options::{self, Kind, OptDef};

pub fn usage() -> String {
    let mut s = String::from(
        "Usage: iomark completions SHELL\n\n\
         Prints a completion script for SHELL (bash, zsh or fish). It completes\n\
         the commands, the run flags, the job options (as --NAME=) and the\n\
         values of those that take one of a set of words; each command's\n\
         options, their values and its arguments (suite's presets, history's\n\
         verbs, directories for PATH, files for FILE).\n\n\
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

/// What completion offers for a value or an argument.
enum ValueKind {
    Text,
    File,
    Dir,
    Words(Vec<&'static str>),
}

fn kind(c: cmd::Complete) -> ValueKind {
    match c {
        cmd::Complete::Nothing => ValueKind::Text,
        cmd::Complete::File => ValueKind::File,
        cmd::Complete::Dir => ValueKind::Dir,
        cmd::Complete::Words(f) => ValueKind::Words(f()),
    }
}

/// A subcommand as completion sees it: its key (`quick`, and
/// `history-import` for a history verb), its options and arguments.
struct Sub {
    key: String,
    flags: Vec<cmd::Flag>,
    positionals: Vec<cmd::Pos>,
}

impl Sub {
    /// `--name` of every option, in table order.
    fn words(&self) -> Vec<String> {
        self.flags.iter().map(|f| format!("--{}", f.name)).collect()
    }

    /// Every spelling of each option that takes a value, with what
    /// completion offers for it.
    fn values(&self) -> Vec<(Vec<String>, ValueKind)> {
        self.flags
            .iter()
            .filter(|f| f.value.is_some())
            .map(|f| {
                let mut names: Vec<String> = std::iter::once(f.name)
                    .chain(f.aliases.iter().copied())
                    .map(|n| format!("--{n}"))
                    .collect();
                names.extend(f.short.map(|c| format!("-{c}")));
                (names, kind(f.complete))
            })
            .collect()
    }
}

/// Every subcommand's table, from `cli::cmd`.
fn subs() -> Vec<Sub> {
    let mut pages: Vec<cmd::Page> = cmd::pages()
        .into_iter()
        .filter(|p| p.name != "history")
        .collect();
    pages.extend(cmd::history::verb_pages());
    pages
        .into_iter()
        .map(|p| Sub {
            key: p.name.replace(' ', "-"),
            flags: p.flags().cloned().collect(),
            positionals: p.positionals,
        })
        .collect()
}

fn engines() -> Vec<&'static str> {
    cmd::bench::engines()
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
    s.push_str("    esac\n}\n\n");
    bash_subs(&mut s);
    s.push_str(
        "_iomark() {\n\
         \x20   local line=\"${COMP_LINE:0:COMP_POINT}\"\n\
         \x20   local cur=\"${line##*[[:space:]]}\"\n\
         \x20   # The words before the one completed.\n\
         \x20   local -a w\n\
         \x20   read -ra w <<< \"$line\"\n\
         \x20   if [[ -n $cur ]]; then unset 'w[${#w[@]}-1]'; fi\n\
         \x20   local sub=\"\"\n\
         \x20   if ((${#w[@]} > 1)); then sub=\"${w[1]}\"; fi\n\
         \x20   case \"$sub\" in\n",
    );
    let _ = writeln!(
        s,
        "        help) COMPREPLY=($(compgen -W \"$_iomark_commands\" -- \"$cur\")); return 0 ;;\n\
         \x20       completions) COMPREPLY=($(compgen -W '{} --help' -- \"$cur\")); return 0 ;;",
        flags::SHELLS.join(" ")
    );
    let names: Vec<String> = subs()
        .iter()
        .filter(|c| !c.key.contains('-'))
        .map(|c| c.key.clone())
        .collect();
    let _ = writeln!(
        s,
        "        {}) _iomark_sub \"$sub\"; return 0 ;;",
        names.join("|")
    );
    s.push_str(
        "    esac\n\
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
         \x20           if ((${#w[@]} == 1)); then\n\
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

/// A value kind in the scripts: the words, or `:file`, `:dir`, `:text`.
fn kind_word(k: &ValueKind) -> String {
    match k {
        ValueKind::Text => ":text".into(),
        ValueKind::File => ":file".into(),
        ValueKind::Dir => ":dir".into(),
        ValueKind::Words(w) => w.join(" "),
    }
}

/// A command's positional arguments as `(KEY N, what)`: N is the index,
/// or `*` for the last one (it stands for any after it).
fn positional_cases(c: &Sub) -> Vec<(String, ValueKind)> {
    let n = c.positionals.len();
    c.positionals
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = if i + 1 == n {
                "*".to_string()
            } else {
                i.to_string()
            };
            (at, kind(p.complete))
        })
        .collect()
}

/// A `case` pattern for `"$1 $2"`: `'KEY N'`, or `'KEY '*`.
fn case_pattern(key: &str, at: &str) -> String {
    if at == "*" {
        format!("'{key} '*")
    } else {
        format!("'{key} {at}'")
    }
}

/// bash: the subcommands' options, values and arguments, and the
/// function that completes them.
fn bash_subs(s: &mut String) {
    let subs = subs();
    s.push_str(
        "_iomark_sub_opts() {\n\
         \x20   # The options of command $1 (a history verb as history-VERB).\n\
         \x20   case \"$1\" in\n",
    );
    for c in &subs {
        let _ = writeln!(s, "        {}) echo '{}' ;;", c.key, c.words().join(" "));
    }
    s.push_str(
        "    esac\n}\n\n\
         _iomark_sub_value() {\n\
         \x20   # What the value of option $2 of command $1 is: its words, :file,\n\
         \x20   # :dir or :text; nothing for a switch.\n\
         \x20   case \"$1 $2\" in\n",
    );
    for c in &subs {
        for (names, k) in c.values() {
            let pats: Vec<String> = names.iter().map(|n| format!("'{} {n}'", c.key)).collect();
            let _ = writeln!(s, "        {}) echo '{}' ;;", pats.join("|"), kind_word(&k));
        }
    }
    s.push_str(
        "    esac\n}\n\n\
         _iomark_sub_arg() {\n\
         \x20   # What argument $2 (from 0) of command $1 is.\n\
         \x20   case \"$1 $2\" in\n",
    );
    for c in &subs {
        for (at, k) in positional_cases(c) {
            let _ = writeln!(
                s,
                "        {}) echo '{}' ;;",
                case_pattern(&c.key, &at),
                kind_word(&k)
            );
        }
    }
    let verbs: Vec<&str> = cmd::history::VERBS
        .iter()
        .copied()
        .filter(|v| *v != "list")
        .collect();
    s.push_str(
        "    esac\n}\n\n\
         _iomark_fill() {\n\
         \x20   # COMPREPLY for kind $1 (see _iomark_sub_value) and the text $2.\n\
         \x20   case \"$1\" in\n\
         \x20       :file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$2\")) ;;\n\
         \x20       :dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$2\")) ;;\n\
         \x20       :text|'') COMPREPLY=() ;;\n\
         \x20       *) COMPREPLY=($(compgen -W \"$1\" -- \"$2\")) ;;\n\
         \x20   esac\n\
         }\n\n\
         _iomark_sub() {\n\
         \x20   # Completes command $1's options, their values and its arguments\n\
         \x20   # (w: the words before the one completed, cur: that one).\n\
         \x20   local key=\"$1\" i=2 n=0 v expect=\"\"\n\
         \x20   if [[ $key == history ]] && ((${#w[@]} > 2)); then\n\
         \x20       case \"${w[2]}\" in\n",
    );
    let _ = writeln!(
        s,
        "            {}) key=\"history-${{w[2]}}\"; i=3 ;;\n\
         \x20           list) i=3 ;;",
        verbs.join("|")
    );
    s.push_str(
        "        esac\n\
         \x20   fi\n\
         \x20   for ((; i < ${#w[@]}; i++)); do\n\
         \x20       v=\"${w[i]}\"\n\
         \x20       if [[ -n $expect ]]; then expect=\"\"; continue; fi\n\
         \x20       case \"$v\" in\n\
         \x20           --*=*|-) ;;\n\
         \x20           -*) if [[ -n $(_iomark_sub_value \"$key\" \"$v\") ]]; then expect=\"$v\"; fi ;;\n\
         \x20           *) ((n++)) ;;\n\
         \x20       esac\n\
         \x20   done\n\
         \x20   if [[ -n $expect ]]; then\n\
         \x20       _iomark_fill \"$(_iomark_sub_value \"$key\" \"$expect\")\" \"$cur\"\n\
         \x20   elif [[ $cur == --*=* ]]; then\n\
         \x20       local opt=\"${cur%%=*}\"\n\
         \x20       _iomark_fill \"$(_iomark_sub_value \"$key\" \"$opt\")\" \"${cur#*=}\"\n\
         \x20       # Readline replaces only what follows '=' when '=' breaks words.\n\
         \x20       if [[ $COMP_WORDBREAKS != *=* ]]; then\n\
         \x20           COMPREPLY=(\"${COMPREPLY[@]/#/$opt=}\")\n\
         \x20       fi\n\
         \x20   elif [[ $cur == -* ]]; then\n\
         \x20       COMPREPLY=($(compgen -W \"$(_iomark_sub_opts \"$key\")\" -- \"$cur\"))\n\
         \x20   else\n\
         \x20       _iomark_fill \"$(_iomark_sub_arg \"$key\" \"$n\")\" \"$cur\"\n\
         \x20   fi\n\
         }\n\n",
    );
}

/// zsh: a `#compdef` function.
#[allow(clippy::too_many_lines)]
pub fn zsh() -> String {
    let mut s = String::from(
        "#compdef iomark\n\
         # zsh completion for iomark, generated by `iomark completions zsh`.\n\
         # Install: iomark completions zsh > ~/.zfunc/_iomark, with\n\
         # fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc.\n\n",
    );
    zsh_subs(&mut s);
    s.push_str("_iomark() {\n  local -a commands run_flags job_options cands\n");
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
    let subs = subs();
    let verbs: Vec<&str> = cmd::history::VERBS
        .iter()
        .copied()
        .filter(|v| *v != "list")
        .collect();
    s.push_str(
        "  )\n\
         \x20 local cur=${words[CURRENT]}\n\
         \x20 if (( CURRENT > 2 )); then\n\
         \x20   local key=${words[2]} first=3\n\
         \x20   if [[ $key == history ]] && (( CURRENT > 3 )); then\n\
         \x20     case ${words[3]} in\n",
    );
    let _ = writeln!(
        s,
        "        ({}) key=history-${{words[3]}}; first=4 ;;\n\
         \x20       (list) first=4 ;;",
        verbs.join("|")
    );
    s.push_str("      esac\n    fi\n    case $key in\n");
    for c in &subs {
        let _ = writeln!(s, "      ({}) cands=({}) ;;", c.key, c.words().join(" "));
    }
    let _ = writeln!(
        s,
        "      (completions) cands=({} --help) ;;\n\
         \x20     (help) cands=({}) ;;",
        flags::SHELLS.join(" "),
        flags::COMMANDS
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(" ")
    );
    s.push_str(
        "    esac\n\
         \x20   if (( ${#cands} )); then\n\
         \x20     if [[ $key == (help|completions) ]] || [[ $cur == -* && $cur != *=* ]]; then\n\
         \x20       compadd -a cands\n\
         \x20       return\n\
         \x20     fi\n\
         \x20     local opt=\"\" prev=${words[CURRENT-1]} i n=0\n\
         \x20     if [[ $cur == --*=* ]]; then\n\
         \x20       opt=${cur%%=*}\n\
         \x20       compset -P '*='\n\
         \x20     elif [[ $prev == -* && $prev != *=* ]] && _iomark_takes $key $prev; then\n\
         \x20       opt=$prev\n\
         \x20     fi\n\
         \x20     if [[ -n $opt ]]; then\n\
         \x20       _iomark_value $key $opt\n\
         \x20       return\n\
         \x20     fi\n\
         \x20     for (( i = first; i < CURRENT; i++ )); do\n\
         \x20       if [[ ${words[i]} == -* ]]; then\n\
         \x20         [[ ${words[i]} != *=* ]] && _iomark_takes $key ${words[i]} && (( i++ ))\n\
         \x20       else\n\
         \x20         (( n++ ))\n\
         \x20       fi\n\
         \x20     done\n\
         \x20     _iomark_arg $key $n\n\
         \x20     return\n\
         \x20   fi\n\
         \x20 fi\n",
    );
    s.push_str(
        "\
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

/// What zsh offers for a value or an argument.
fn zsh_offer(k: &ValueKind) -> Option<String> {
    match k {
        ValueKind::Text => None,
        ValueKind::File => Some("_files".into()),
        ValueKind::Dir => Some("_files -/".into()),
        ValueKind::Words(w) => Some(format!(
            "compadd -- {}",
            w.iter().map(|x| zsh_word(x)).collect::<Vec<_>>().join(" ")
        )),
    }
}

/// zsh: which subcommand options take a value, what their values and
/// the subcommands' arguments can be.
fn zsh_subs(s: &mut String) {
    let subs = subs();
    s.push_str("_iomark_takes() {\n  # Whether option $2 of command $1 takes a value.\n  case \"$1 $2\" in\n");
    let takes: Vec<String> = subs
        .iter()
        .flat_map(|c| {
            c.values()
                .into_iter()
                .flat_map(|(names, _)| names)
                .map(|n| format!("'{} {n}'", c.key))
                .collect::<Vec<_>>()
        })
        .collect();
    let _ = writeln!(s, "    ({}) return 0 ;;", takes.join("|"));
    s.push_str("  esac\n  return 1\n}\n\n_iomark_value() {\n  # The values of option $2 of command $1.\n  case \"$1 $2\" in\n");
    for c in &subs {
        for (names, k) in c.values() {
            if let Some(o) = zsh_offer(&k) {
                let pats: Vec<String> = names.iter().map(|n| format!("'{} {n}'", c.key)).collect();
                let _ = writeln!(s, "    ({}) {o} ;;", pats.join("|"));
            }
        }
    }
    s.push_str("  esac\n}\n\n_iomark_arg() {\n  # Argument $2 (from 0) of command $1.\n  case \"$1 $2\" in\n");
    for c in &subs {
        for (at, k) in positional_cases(c) {
            if let Some(o) = zsh_offer(&k) {
                let _ = writeln!(s, "    ({}) {o} ;;", case_pattern(&c.key, &at));
            }
        }
    }
    s.push_str("  esac\n}\n\n");
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
#[allow(clippy::too_many_lines)]
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
    let _ = writeln!(
        s,
        "complete -c iomark -n '__fish_seen_subcommand_from completions' -f -a {}",
        fish_quote(&flags::SHELLS.join(" "))
    );
    let _ = writeln!(
        s,
        "complete -c iomark -n '__fish_seen_subcommand_from help' -f -a {}",
        fish_quote(&cmds.join(" "))
    );
    let verbs: Vec<&str> = cmd::history::VERBS
        .iter()
        .copied()
        .filter(|v| *v != "list")
        .collect();
    for c in subs() {
        let cond = match c.key.split_once('-') {
            Some((cmd, verb)) => {
                format!("__fish_seen_subcommand_from {cmd}; and __fish_seen_subcommand_from {verb}")
            }
            None if c.key == "history" => format!(
                "__fish_seen_subcommand_from history; and not __fish_seen_subcommand_from {}",
                verbs.join(" ")
            ),
            None => format!("__fish_seen_subcommand_from {}", c.key),
        };
        for f in &c.flags {
            let mut line = format!("complete -c iomark -n '{cond}' -l {}", f.name);
            for a in f.aliases {
                let _ = write!(line, " -l {a}");
            }
            if let Some(ch) = f.short {
                let _ = write!(line, " -s {ch}");
            }
            if f.value.is_some() {
                match kind(f.complete) {
                    ValueKind::Text => line.push_str(" -x"),
                    ValueKind::File | ValueKind::Dir => line.push_str(" -r -F"),
                    ValueKind::Words(w) => {
                        let _ = write!(line, " -x -a {}", fish_quote(&w.join(" ")));
                    }
                }
            }
            let _ = writeln!(s, "{line} -d {}", fish_quote(&f.help));
        }
        // A first argument that is one of a set of words (suite's
        // preset, history's verb): offered until one is given.
        if let Some(ValueKind::Words(w)) = c.positionals.first().map(|p| kind(p.complete)) {
            let w = w.join(" ");
            let _ = writeln!(
                s,
                "complete -c iomark -n '{cond}; and not __fish_seen_subcommand_from {w}' -f -a {}",
                fish_quote(&w)
            );
        }
    }
    s
}

fn fish_quote(t: &str) -> String {
    format!("'{}'", t.replace('\\', "\\\\").replace('\'', "\\'"))
}
