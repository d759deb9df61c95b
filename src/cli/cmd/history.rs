//! `iomark history [list] | import | export | check | delete`: one table
//! per verb (the selection options shared), one help page for them all.
//! Running them is `history::cmd`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::bench::parse_u32;
use super::{help_opt, opt, switch, Complete, Opt, Page, Parsed, Pos, Section, Spec};
pub use crate::history::cmd::{ExportOpts, ImportOpts, ListOpts, Select, StoreOpts};
use crate::history::{export, time};

pub trait HasSelect {
    fn select(&mut self) -> &mut Select;
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn kinds() -> Vec<&'static str> {
    vec!["quick", "suite", "sweep", "job"]
}

/// `--history-db FILE`.
pub fn db_opt<T: HasSelect>() -> Opt<T> {
    opt(
        "history-db",
        "FILE",
        "the history (default: $IOMARK_HISTORY_DB, else $XDG_DATA_HOME/iomark/history.sqlite)",
        Complete::File,
        |t: &mut T, v| {
            t.select().db = Some(v.into());
            Ok(())
        },
    )
}

/// `--test TEXT` with its help.
pub fn test_opt<T: HasSelect>(help: &str) -> Opt<T> {
    opt("test", "TEXT", help, Complete::Nothing, |t: &mut T, v| {
        t.select().filter.test = Some(v.into());
        Ok(())
    })
}

/// The selection options; `with_test`: `--test` among them.
pub fn select_opts<T: HasSelect>(with_test: bool) -> Vec<Opt<T>> {
    let mut v: Vec<Opt<T>> = vec![
        opt(
            "label",
            "NAME",
            "runs with this label",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.label = Some(v.into());
                Ok(())
            },
        ),
        opt(
            "host",
            "TEXT",
            "runs on a host whose name contains TEXT",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.host = Some(v.into());
                Ok(())
            },
        ),
        opt(
            "device",
            "TEXT",
            "runs on a device whose name, model or serial contains TEXT",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.device = Some(v.into());
                Ok(())
            },
        ),
    ];
    if with_test {
        v.push(test_opt(
            "runs with a test whose key or name contains TEXT (and only those tests)",
        ));
    }
    v.extend([
        opt(
            "kind",
            "KIND",
            "quick, suite, sweep or job",
            Complete::Words(kinds),
            |t: &mut T, v| {
                t.select().filter.kind = Some(v.into());
                Ok(())
            },
        ),
        opt(
            "since",
            "DATE",
            "runs from DATE (YYYY-MM-DD[THH:MM], or an age: 30d, 12h)",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.since =
                    Some(time::parse_date(v, now(), false).map_err(|e| format!("--since: {e}"))?);
                Ok(())
            },
        ),
        opt(
            "until",
            "DATE",
            "runs up to DATE",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.until =
                    Some(time::parse_date(v, now(), true).map_err(|e| format!("--until: {e}"))?);
                Ok(())
            },
        ),
        opt(
            "last",
            "N",
            "the latest N runs",
            Complete::Nothing,
            |t: &mut T, v| {
                t.select().filter.last = Some(parse_u32(v, "last", 1)? as usize);
                Ok(())
            },
        ),
        db_opt(),
    ]);
    v
}

/// `export` before `--format` is read.
#[derive(Clone, Debug, Default)]
pub struct ExportArgs {
    pub select: Select,
    pub format: Option<export::Format>,
    pub output: Option<PathBuf>,
    pub units: Option<crate::results::units::BwUnit>,
}

macro_rules! has_select {
    ($($t:ty),*) => {$(
        impl HasSelect for $t {
            fn select(&mut self) -> &mut Select {
                &mut self.select
            }
        }
    )*};
}
has_select!(ListOpts, ImportOpts, ExportArgs, StoreOpts);

/// The verbs, for completion.
pub const VERBS: &[&str] = &["list", "import", "export", "check", "delete"];

fn verbs() -> Vec<&'static str> {
    VERBS.to_vec()
}

/// A verb's table: usage and examples are the history page's.
fn verb_spec<T>(
    name: &'static str,
    opts: Vec<Opt<T>>,
    positionals: Vec<Pos>,
    finish: super::Finish<T>,
) -> Spec<T> {
    Spec {
        name,
        usage: Vec::new(),
        about: String::new(),
        lists: Vec::new(),
        sections: vec![Section::new("Options", opts)],
        after: String::new(),
        positionals,
        examples: Vec::new(),
        finish,
    }
}

fn list_spec() -> Spec<ListOpts> {
    let mut o = select_opts::<ListOpts>(true);
    o.push(switch("json", "the list as JSON", |t: &mut ListOpts, _| {
        t.json = true;
        Ok(())
    }));
    o.push(super::units_opt(|t: &mut ListOpts, v| {
        t.units = Some(super::parse_units(v)?);
        Ok(())
    }));
    o.push(help_opt());
    verb_spec(
        "history",
        o,
        vec![Pos {
            name: "COMMAND",
            complete: Complete::Words(verbs),
        }],
        |_, pos| match pos.first() {
            Some(p) => Err(format!(
                "unknown command '{}' (list, import, export, check, delete)",
                crate::job::value::excerpt(&p.to_string_lossy())
            )),
            None => Ok(()),
        },
    )
}

fn import_spec() -> Spec<ImportOpts> {
    let o = vec![
        opt(
            "label",
            "NAME",
            "import: the label of files that have none",
            Complete::Nothing,
            |t: &mut ImportOpts, v| {
                t.label =
                    Some(crate::history::check_label(v).map_err(|e| format!("--label: {e}"))?);
                Ok(())
            },
        ),
        db_opt(),
        help_opt(),
    ];
    verb_spec(
        "history import",
        o,
        vec![Pos {
            name: "FILE",
            complete: Complete::File,
        }],
        |t, pos| {
            if pos.is_empty() {
                return Err("give the result files to import".into());
            }
            t.files = pos.into_iter().map(PathBuf::from).collect();
            Ok(())
        },
    )
}

fn formats() -> Vec<&'static str> {
    export::FORMATS.to_vec()
}

fn export_spec() -> Spec<ExportArgs> {
    let mut o = vec![
        opt(
            "format",
            "FMT",
            "export: csv, jsonl or influx",
            Complete::Words(formats),
            |t: &mut ExportArgs, v| {
                t.format = Some(export::Format::parse(v)?);
                Ok(())
            },
        ),
        opt(
            "output",
            "FILE",
            "export: write to FILE instead of standard output",
            Complete::File,
            |t: &mut ExportArgs, v| {
                t.output = Some(v.into());
                Ok(())
            },
        )
        .short('o'),
    ];
    o.extend(select_opts(true));
    o.push(super::units_opt(|t: &mut ExportArgs, v| {
        t.units = Some(super::parse_units(v)?);
        Ok(())
    }));
    o.push(help_opt());
    verb_spec("history export", o, Vec::new(), |t, pos| {
        if !pos.is_empty() {
            return Err("export takes no file names (use -o FILE)".into());
        }
        if t.format.is_none() {
            return Err("give --format csv, jsonl or influx".into());
        }
        Ok(())
    })
}

fn check_spec() -> Spec<StoreOpts> {
    verb_spec(
        "history check",
        vec![db_opt(), help_opt()],
        Vec::new(),
        |_, pos| {
            if !pos.is_empty() {
                return Err("check takes no arguments".into());
            }
            Ok(())
        },
    )
}

fn delete_spec() -> Spec<StoreOpts> {
    verb_spec(
        "history delete",
        vec![db_opt(), help_opt()],
        vec![Pos {
            name: "ID",
            complete: Complete::Nothing,
        }],
        |t, pos| {
            let ids = super::strings(pos)?
                .iter()
                .map(|p| {
                    p.trim_start_matches('#')
                        .parse::<i64>()
                        .map_err(|_| format!("'{}' is not a run id", crate::job::value::excerpt(p)))
                })
                .collect::<Result<Vec<i64>, String>>()?;
            if ids.is_empty() {
                return Err(
                    "give the ids of the runs to delete (#N, as iomark history lists)".into(),
                );
            }
            t.ids = ids;
            Ok(())
        },
    )
}

/// Each verb's table as completion reads it ("history" is the list).
pub fn verb_pages() -> Vec<Page> {
    vec![
        list_spec().page(),
        import_spec().page(),
        export_spec().page(),
        check_spec().page(),
        delete_spec().page(),
    ]
}

/// The history's one help page: the usage of every verb, the selection
/// options, then each verb's own.
pub fn page() -> Page {
    let list = list_spec().page();
    let select: Vec<super::Flag> = list
        .flags()
        .filter(|f| f.name != "json" && f.name != "help")
        .cloned()
        .collect();
    let mut own: Vec<super::Flag> = Vec::new();
    for p in verb_pages() {
        for f in p.flags() {
            let shared = select.iter().any(|s| s.name == f.name && s.help == f.help);
            if !shared
                && f.name != "help"
                && !own.iter().any(|o| o.name == f.name && o.help == f.help)
            {
                own.push(f.clone());
            }
        }
    }
    own.push(help_opt::<ListOpts>().flag);
    Page {
        name: "history",
        usage: vec![
            "history [SELECTION] [--json]".into(),
            "history import FILE… [--label NAME]".into(),
            "history export --format csv|jsonl|influx [SELECTION] [-o FILE]".into(),
            "history check | delete ID…".into(),
        ],
        about: "The results history: quick, suite and sweep record every run (unless given \
                the flag no-history), job runs when given a label or the flag history. Each run \
                keeps its label, time, host, target (device model, serial, firmware, \
                filesystem, mount options, kernel), tool and version, job file and its digest, \
                and every test's figures with each pass's and the merged latency histogram. The \
                list shows the runs oldest first. import adds result files (iomark \
                quick/suite/sweep results, iomark or fio JSON and json+), export writes one line \
                per run and test (CSV, JSON lines, or InfluxDB line protocol for Grafana), check \
                verifies the database, delete removes runs."
            .into(),
        lists: Vec::new(),
        sections: vec![("Selection", false, select), ("Options", false, own)],
        after: String::new(),
        positionals: list.positionals,
        examples: vec![
            (
                "iomark history --device nvme --since 30d",
                "the last month's runs on NVMe devices",
            ),
            (
                "iomark history import old/*.json --label before",
                "add earlier results",
            ),
            (
                "iomark history export --format influx > runs.lp",
                "for InfluxDB and Grafana",
            ),
        ],
    }
}

/// Parses with a verb's table; its help is the history page.
fn drive<T>(spec: &Spec<T>, start: T, argv: Vec<OsString>, run: impl FnOnce(T) -> i32) -> i32 {
    match super::parse(spec, start, argv) {
        Ok(Parsed::Help) => crate::suite::print(spec.name, &page().help()),
        Ok(Parsed::Run(t)) => run(t),
        Err(e) => crate::suite::fail_early(spec.name, &e),
    }
}

/// Parses a history command line without running it (see `cmd::check`).
pub fn check(argv: Vec<OsString>) -> Result<(), String> {
    fn one<T>(spec: Spec<T>, start: T, argv: Vec<OsString>) -> Result<(), String> {
        super::parse(&spec, start, argv).map(|_| ())
    }
    let verb = argv.first().and_then(|a| a.to_str()).unwrap_or("");
    let rest = || argv[1..].to_vec();
    match verb {
        "import" => one(import_spec(), ImportOpts::default(), rest()),
        "export" => one(export_spec(), ExportArgs::default(), rest()),
        "check" => one(check_spec(), StoreOpts::default(), rest()),
        "delete" => one(delete_spec(), StoreOpts::default(), rest()),
        "list" => one(list_spec(), ListOpts::default(), rest()),
        _ => one(list_spec(), ListOpts::default(), argv),
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    use crate::history::cmd as run;
    let verb = argv.first().and_then(|a| a.to_str()).unwrap_or("");
    let rest = || argv[1..].to_vec();
    match verb {
        "import" => drive(&import_spec(), ImportOpts::default(), rest(), run::import),
        "export" => drive(&export_spec(), ExportArgs::default(), rest(), |a| {
            run::export(ExportOpts {
                select: a.select,
                format: a.format.expect("checked"),
                output: a.output,
                units: a.units,
            })
        }),
        "check" => drive(&check_spec(), StoreOpts::default(), rest(), run::check),
        "delete" => drive(&delete_spec(), StoreOpts::default(), rest(), run::delete),
        "list" => drive(&list_spec(), ListOpts::default(), rest(), run::list),
        _ => drive(&list_spec(), ListOpts::default(), argv, run::list),
    }
}
