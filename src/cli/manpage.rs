//! `iomark --man`: the manual page `iomark(1)` in roff, generated from
//! the tables: the run flags (`flags::FLAGS`), the commands with their
//! options (each command's table in `cli::cmd`), the job options
//! (`job::options`), the exit statuses and the examples of `--help`.

use std::fmt::Write;

use super::{flags, help, text};
use crate::job::options;

/// Text escaped for roff: backslashes, minus signs (so options copy and
/// search as typed), characters outside ASCII as `\[uXXXX]`, and a
/// leading `.` or `'` that would read as a request.
pub fn escape(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => {
                let _ = write!(out, "\\[u{:04X}]", c as u32);
            }
        }
    }
    if out.starts_with('.') || out.starts_with('\'') {
        out.insert_str(0, "\\&");
    }
    out
}

fn bold(t: &str) -> String {
    format!("\\fB{}\\fR", escape(t))
}

fn italic(t: &str) -> String {
    format!("\\fI{}\\fR", escape(t))
}

/// A flag's synopsis: names in bold, the value's placeholder in italics.
pub fn flag_synopsis(f: &flags::Flag) -> String {
    let mut s = String::new();
    if let Some(c) = f.short {
        let _ = write!(s, "{}, ", bold(&format!("-{c}")));
    }
    s.push_str(&bold(&format!("--{}", f.name)));
    match f.value {
        flags::Value::Switch => {}
        flags::Value::Required(v) => {
            let _ = write!(s, "={}", italic(v));
        }
        flags::Value::Optional(v) => {
            let _ = write!(s, "[={}]", italic(v));
        }
    }
    s
}

/// A paragraph: one input line, escaped.
fn para(out: &mut String, t: &str) {
    out.push_str(&escape(t));
    out.push('\n');
}

fn tagged(out: &mut String, tag: &str, body: &str) {
    out.push_str(".TP\n");
    out.push_str(tag);
    out.push('\n');
    para(out, body);
}

/// A one-line help as a sentence: capitalized, with a full stop.
fn sentence(t: &str) -> String {
    let mut s = capitalized(t);
    if !s.ends_with('.') {
        s.push('.');
    }
    s
}

fn capitalized(t: &str) -> String {
    let mut c = t.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Whether `name` is one of the options quick, suite and sweep share.
fn is_shared(name: &str) -> bool {
    super::cmd::bench::shared()
        .iter()
        .any(|o| o.flag.name == name)
}

/// The whole page.
#[allow(clippy::too_many_lines)]
pub fn render() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut m = String::new();
    let _ = writeln!(
        m,
        ".TH IOMARK 1 \"\" \"iomark {version}\" \"User Commands\""
    );
    m.push_str(".SH NAME\n");
    para(
        &mut m,
        "iomark - a storage I/O benchmark that runs fio job files",
    );
    m.push_str(".SH SYNOPSIS\n");
    for (i, (cmd, _)) in help::RUN_SYNOPSIS.iter().enumerate() {
        if i > 0 {
            m.push_str(".br\n");
        }
        let (name, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
        let _ = writeln!(m, "{} {}", bold(name), escape(rest));
    }
    m.push_str(".SH DESCRIPTION\n");
    para(
        &mut m,
        "iomark measures how fast a disk, filesystem or array is: IOPS, bandwidth and latency \
         percentiles for the workloads you describe. It runs fio job files and fio-style command \
         lines (same option names, defaults and units), does the same I/O fio does for the same \
         job, and reports in fio's formats (normal, terse, json, json+ and fio's log files).",
    );
    m.push_str(".PP\n");
    para(
        &mut m,
        "Options before the first --name apply to every job; each --name=JOB starts a job, and \
         --name=global starts options for the jobs after it. --opt=value and --opt value both \
         work. Job files given as arguments run one after another, each as its own group. \
         Errors and warnings go to standard error; standard output holds only the report.",
    );
    m.push_str(".PP\n");
    para(
        &mut m,
        "iomark refuses to write to a device, partition or file it did not create when that \
         would destroy data (a mounted device, a filesystem or partition table signature) \
         unless allow_destroy_data=1 is given.",
    );
    m.push_str(".SH COMMANDS\n");
    para(
        &mut m,
        "A first argument naming a command runs it; a job file named like a command runs as \
         iomark ./NAME. iomark help COMMAND shows the same text as iomark COMMAND --help.",
    );
    // The options quick, suite and sweep share are described once.
    let pages = super::cmd::pages();
    for c in flags::COMMANDS {
        tagged(
            &mut m,
            &format!("{} {}", bold(&format!("iomark {}", c.name)), escape(c.args)),
            c.summary,
        );
        let Some(page) = pages.iter().find(|p| p.name == c.name) else {
            // help and completions: described above and by their pages.
            continue;
        };
        m.push_str(".RS\n");
        let mut has_shared = false;
        for (_, shared, flags) in &page.sections {
            // A shared section's own options (suite's --list) go with
            // the command; the shared ones are described once below.
            has_shared |= *shared;
            for f in flags {
                if *shared && is_shared(f.name) {
                    continue;
                }
                tagged(&mut m, &bold(&f.synopsis()), &f.help);
            }
        }
        if has_shared {
            m.push_str(".PP\n");
            para(&mut m, "and the options of quick, suite and sweep below.");
        }
        m.push_str(".RE\n");
    }
    m.push_str(".SS \"Options of quick, suite and sweep\"\n");
    for f in super::cmd::bench::shared() {
        tagged(&mut m, &bold(&f.flag.synopsis()), &f.flag.help);
    }
    m.push_str(".SH OPTIONS\n");
    para(
        &mut m,
        "The run flags below shape a fio-style run; job options (next section) describe the jobs.",
    );
    for cat in flags::Category::ALL {
        let _ = writeln!(m, ".SS \"{}\"", escape(cat.title()));
        for f in flags::shown().filter(|f| f.category == cat) {
            tagged(&mut m, &flag_synopsis(f), &sentence(f.long_help()));
        }
    }
    let refused: Vec<String> = flags::FLAGS
        .iter()
        .filter(|f| matches!(f.support, flags::Support::No(_)))
        .map(|f| format!("--{}", f.name))
        .collect();
    m.push_str(".PP\n");
    para(
        &mut m,
        &format!(
            "fio's {} are not provided: using one is an error that gives the reason.",
            refused.join(", ")
        ),
    );
    m.push_str(".SH \"JOB OPTIONS\"\n");
    para(
        &mut m,
        "fio's job options, as --NAME=VALUE on the command line or NAME=VALUE in a job file. \
         iomark --cmdhelp=NAME describes one (type, default, valid values); iomark --enghelp=ENGINE \
         lists an engine's own options. fio's options that iomark does not implement are \
         known to it and refused with the reason; iomark --cmdhelp lists them too.",
    );
    for (left, what) in help::JOB_SYNTAX {
        tagged(&mut m, &bold(left), &sentence(what));
    }
    for cat in help::CATEGORIES {
        let mut defs: Vec<_> = options::all()
            .filter(|d| d.category == cat && d.is_supported())
            .collect();
        if defs.is_empty() {
            continue;
        }
        defs.sort_by_key(|d| d.name);
        let _ = writeln!(m, ".SS \"{}\"", escape(cat.title()));
        for d in defs {
            let mut tag = bold(d.name);
            for a in d.aliases {
                let _ = write!(tag, ", {}", bold(a));
            }
            tagged(&mut m, &tag, &sentence(d.help));
            if d.name == "ioengine" {
                // The engines themselves, under the option that picks one.
                m.push_str(".RS\n");
                for (name, about) in crate::job::engine_kind::EngineKind::CHOICES {
                    tagged(&mut m, &bold(name), &sentence(about));
                }
                m.push_str(".RE\n");
            }
        }
    }
    m.push_str(".SH \"EXIT STATUS\"\n");
    for (code, what) in help::EXIT_STATUS {
        tagged(&mut m, &bold(code), what);
    }
    m.push_str(".SH EXAMPLES\n");
    for (cmd, what) in help::EXAMPLES {
        m.push_str(".PP\n");
        para(&mut m, &format!("{}:", capitalized(what)));
        m.push_str(".RS\n.nf\n");
        // The page indents examples by 14 columns.
        for line in help::example_command_within(cmd, 0, text::WIDTH - 14).lines() {
            para(&mut m, line);
        }
        m.push_str(".fi\n.RE\n");
    }
    m.push_str(".PP\n");
    para(
        &mut m,
        "Each command's help page (iomark help COMMAND) has examples of its own.",
    );
    m.push_str(".SH \"SEE ALSO\"\n");
    m.push_str("\\fBfio\\fR(1)\n");
    m
}
