//! Every option the installed fio knows (job options from `--cmdhelp=all`,
//! engine options from `--enghelp`, and their aliases) is in iomark's
//! option table: implemented, or listed as unsupported with a reason.

use std::process::Command;

use iomark::job::options::lookup;

use crate::common::fio_output;
use crate::require_fio;

fn fio(args: &[&str]) -> String {
    let o = fio_output(Command::new("fio").args(args));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Option names from help listings: lines `  name   : help text`.
fn listed_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect()
}

/// The `alias:` line of a detailed help page.
fn aliases(detail: &str) -> Vec<String> {
    detail
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("alias:"))
        .flat_map(|a| a.split([',', ' ']))
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn every_fio_option_and_alias_is_in_the_table() {
    require_fio!();
    let mut names: Vec<(String, String)> = Vec::new();
    for n in listed_names(&fio(&["--cmdhelp=all"])) {
        for a in aliases(&fio(&[&format!("--cmdhelp={n}")])) {
            names.push((a, format!("alias of {n}")));
        }
        names.push((n, "job option".into()));
    }
    let job_options = names.len();
    let engines: Vec<String> = fio(&["--enghelp"])
        .lines()
        .filter(|l| l.starts_with('\t'))
        .map(|l| l.trim().to_string())
        .collect();
    for e in &engines {
        for n in listed_names(&fio(&[&format!("--enghelp={e}")])) {
            for a in aliases(&fio(&[&format!("--enghelp={e},{n}")])) {
                names.push((a, format!("alias of {e} option {n}")));
            }
            names.push((n, format!("{e} option")));
        }
    }
    assert!(
        job_options > 150 && !engines.is_empty(),
        "fio's help output was not understood ({job_options} job options, {} engines)",
        engines.len()
    );
    let missing: Vec<String> = names
        .iter()
        .filter(|(n, _)| lookup(n).is_none())
        .map(|(n, what)| format!("{n} ({what})"))
        .collect();
    assert!(
        missing.is_empty(),
        "not in iomark's option table: {missing:?}"
    );
}
