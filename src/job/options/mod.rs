//! The option table: one declarative entry per fio option (name, aliases,
//! type, default, help, category, engines, support) with a typed setter.
//!
//! The same table drives job files and the command line, `--cmdhelp`,
//! `--showcmd`, defaults and the "job options" echo. An option iomark does
//! not implement is still listed, marked unsupported, so using it gives a
//! clear error naming it instead of being ignored. Options are split by
//! family into the files beside this one.

use crate::job::JobError;
use std::collections::HashMap;
use std::sync::OnceLock;

use super::engine_kind::EngineKind;
use super::spec::JobSpec;
use super::value::TimeUnit;

mod buffers;
pub use buffers::MAX_IOMEM_ALIGN;
mod control;
mod engines;
pub(crate) mod files;
mod http;
mod io;
mod iolog;
mod logs;
mod prio;
mod stats;
mod sync;
#[cfg(test)]
mod table_tests;
mod timing;
mod unsupported;
mod verify;

/// Sets a field of the spec from the option's text value.
pub type Setter = fn(&mut JobSpec, &str) -> Result<(), JobError>;

/// The value type, for help output and for bare-key handling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Str,
    /// A string that may be left out (bare key): the setter gets "".
    OptStr,
    Int,
    Size,
    /// A size per direction: `read,write,trim`.
    SizeDdir,
    Time(TimeUnit),
    Bool,
    /// Bare key means "on" (`time_based`, `group_reporting`, …).
    Switch,
    Range,
    Split,
    Percent,
    Float,
    Choice(&'static [(&'static str, &'static str)]),
    List,
}

impl Kind {
    pub fn describe(&self) -> String {
        match self {
            Kind::Str => "string".into(),
            Kind::OptStr => "string (optional)".into(),
            Kind::Int => "integer".into(),
            Kind::Size => "size (integer with optional k/m/g/t/p unit)".into(),
            Kind::SizeDdir => "size, or read,write,trim sizes".into(),
            Kind::Time(u) => format!(
                "time (integer with optional unit us/ms/s/m/h/d; bare numbers in {})",
                match u {
                    TimeUnit::Sec => "seconds",
                    TimeUnit::Msec => "milliseconds",
                    TimeUnit::Usec => "microseconds",
                }
            ),
            Kind::Bool => "boolean (0 or 1)".into(),
            Kind::Switch => "switch (bare, or 0/1)".into(),
            Kind::Range => "range (LOW-HIGH)".into(),
            Kind::Split => "split (SIZE/PERCENT:SIZE/PERCENT…)".into(),
            Kind::Percent => "percentage (0-100)".into(),
            Kind::Float => "decimal number".into(),
            Kind::Choice(_) => "one of a set of words".into(),
            Kind::List => "list".into(),
        }
    }
}

/// Groups options in help output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Job,
    Files,
    Io,
    Engine,
    Timing,
    Rate,
    Sync,
    Buffers,
    Verify,
    Stats,
    Logs,
    Cpu,
    Zones,
    Misc,
}

impl Category {
    pub fn title(self) -> &'static str {
        match self {
            Category::Job => "Job description and control",
            Category::Files => "Files and targets",
            Category::Io => "I/O type, sizes and offsets",
            Category::Engine => "I/O engine",
            Category::Timing => "Run time and think time",
            Category::Rate => "Rate limits",
            Category::Sync => "Caching and sync",
            Category::Buffers => "Buffer contents",
            Category::Verify => "Verification",
            Category::Stats => "Statistics and reporting",
            Category::Logs => "Logs and traces",
            Category::Cpu => "CPU, NUMA and priority",
            Category::Zones => "Zones",
            Category::Misc => "Miscellaneous",
        }
    }
}

/// Whether iomark implements an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    /// Listed for completeness; using it is an error giving this reason.
    No(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// The default as text, "" when there is none.
    pub default: &'static str,
    pub help: &'static str,
    pub category: Category,
    /// Engines the option belongs to; empty for job options.
    pub engines: &'static [EngineKind],
    /// fio engines iomark does not implement that the option belongs to
    /// (named so `--enghelp=ENGINE` can still list their options).
    pub fio_engines: &'static [&'static str],
    pub support: Support,
    /// Applied before the other options of a section (kb_base, ioengine),
    /// since other values depend on them.
    pub early: bool,
    /// A credential: the "job options" echo and `--showcmd` show
    /// `Secret::SHOWN` instead of its value.
    pub secret: bool,
    pub set: Setter,
}

fn reject(_: &mut JobSpec, _: &str) -> Result<(), JobError> {
    Err("not supported".into())
}

/// An implemented option.
pub const fn opt(
    name: &'static str,
    cat: Category,
    kind: Kind,
    help: &'static str,
    set: Setter,
) -> OptDef {
    OptDef {
        name,
        aliases: &[],
        kind,
        default: "",
        help,
        category: cat,
        engines: &[],
        fio_engines: &[],
        support: Support::Yes,
        early: false,
        secret: false,
        set,
    }
}

/// A documented option that iomark does not implement.
pub const fn unsupported(
    name: &'static str,
    cat: Category,
    help: &'static str,
    reason: &'static str,
) -> OptDef {
    OptDef {
        name,
        aliases: &[],
        kind: Kind::Str,
        default: "",
        help,
        category: cat,
        engines: &[],
        fio_engines: &[],
        support: Support::No(reason),
        early: false,
        secret: false,
        set: reject,
    }
}

impl OptDef {
    pub const fn alias(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    pub const fn default(mut self, d: &'static str) -> Self {
        self.default = d;
        self
    }

    /// Sets the value type (for unsupported entries, whose default is `Str`,
    /// so that switches parse on the command line as fio's do).
    pub const fn kind(mut self, k: Kind) -> Self {
        self.kind = k;
        self
    }

    pub const fn engines(mut self, e: &'static [EngineKind]) -> Self {
        self.engines = e;
        self
    }

    /// The fio engines, not implemented by iomark, that take this option.
    pub const fn fio_engines(mut self, e: &'static [&'static str]) -> Self {
        self.fio_engines = e;
        self
    }

    /// Whether the option belongs to the engine named `name` (implemented
    /// or not), for `--enghelp=ENGINE`.
    pub fn belongs_to_engine(&self, name: &str) -> bool {
        match EngineKind::from_name(name) {
            Some(k) => self.engines.contains(&k),
            None => self.fio_engines.contains(&name),
        }
    }

    /// The names of the engines the option belongs to, comma-separated
    /// with `sep`; empty for job options.
    pub fn engine_names(&self, sep: &str) -> String {
        let implemented = self.engines.iter().map(|k| k.name());
        let names: Vec<&str> = implemented
            .chain(self.fio_engines.iter().copied())
            .collect();
        names.join(sep)
    }

    /// Marks the option a credential (see `secret`).
    pub const fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    pub const fn early(mut self) -> Self {
        self.early = true;
        self
    }

    pub fn is_supported(&self) -> bool {
        self.support == Support::Yes
    }

    /// Whether the command line takes this option's value only with '='.
    pub fn value_optional(&self) -> bool {
        matches!(self.kind, Kind::Switch | Kind::OptStr)
    }
}

/// Every option, grouped by family.
pub fn all() -> impl Iterator<Item = &'static OptDef> {
    [
        control::OPTS,
        files::OPTS,
        io::OPTS,
        engines::OPTS,
        http::OPTS,
        prio::OPTS,
        timing::OPTS,
        sync::OPTS,
        buffers::OPTS,
        verify::OPTS,
        stats::OPTS,
        logs::OPTS,
        iolog::OPTS,
    ]
    .into_iter()
    .chain(unsupported::GROUPS.iter().copied())
    .flat_map(|s| s.iter())
}

fn index() -> &'static HashMap<&'static str, &'static OptDef> {
    static INDEX: OnceLock<HashMap<&'static str, &'static OptDef>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut m = HashMap::new();
        for d in all() {
            m.insert(d.name, d);
            for a in d.aliases {
                m.insert(*a, d);
            }
        }
        m
    })
}

/// Finds an option by name or alias (case-sensitive, as fio).
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    index().get(name).copied()
}

/// The option a misspelt name most likely meant, if any is close enough.
///
/// Case and `-` for `_` are forgiven outright. Otherwise the closest name
/// or alias by edit distance wins, implemented options before unsupported
/// ones, and is suggested as spelled (`blocksiz` → `blocksize`, an alias
/// of `bs`, not `bs`); failing that, an implemented option that starts with (or, for
/// four letters or more, contains) what was typed (`rwmix` → `rwmixread`),
/// then such an unsupported one.
pub fn suggest(name: &str) -> Option<&'static str> {
    if name.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let norm = name.to_ascii_lowercase().replace('-', "_");
    let lower = name.to_ascii_lowercase();
    if let Some((key, _)) = index()
        .get_key_value(norm.as_str())
        .or_else(|| index().get_key_value(lower.as_str()))
    {
        return Some(key);
    }
    let limit = (name.len() / 3).max(2);
    for supported in [true, false] {
        let best = closest(
            &norm,
            index()
                .iter()
                .filter(|(_, d)| d.is_supported() == supported)
                .map(|(k, _)| *k),
        );
        if let Some((dist, key)) = best {
            if dist <= limit {
                return Some(key);
            }
        }
    }
    if norm.len() < 3 {
        return None;
    }
    for supported in [true, false] {
        let mut hits: Vec<&'static str> = all()
            .filter(|d| d.is_supported() == supported)
            .map(|d| d.name)
            .filter(|n| n.starts_with(&norm) || (norm.len() >= 4 && n.contains(&norm)))
            .collect();
        hits.sort_by_key(|n| (!n.starts_with(&norm), n.len(), *n));
        if let Some(hit) = hits.first() {
            return Some(hit);
        }
    }
    None
}

pub use super::value::closest;
use super::value::MAX_SUGGEST_LEN;

/// Error text for an option name that is not in the table.
pub fn unknown_option_message(name: &str) -> String {
    let name = &*crate::job::value::excerpt(name);
    match suggest(name) {
        Some(s) => format!("unknown option '{name}' (did you mean '{s}'?)"),
        None => format!("unknown option '{name}' (see iomark --cmdhelp for the list)"),
    }
}

/// Applies one assignment to `spec`. `value` is `None` for a bare key.
pub fn apply(spec: &mut JobSpec, def: &OptDef, value: Option<&str>) -> Result<(), JobError> {
    if let Support::No(reason) = def.support {
        return Err(format!("option '{}' is not supported by iomark: {reason}", def.name).into());
    }
    let value = match value {
        Some(v) if v.trim().is_empty() && def.kind != Kind::Str => {
            return Err(format!(
                "option '{}' needs a value ({}), not an empty one",
                def.name,
                def.kind.describe()
            )
            .into());
        }
        Some(v) => v,
        None if def.kind == Kind::OptStr => "",
        None if def.value_optional() => "1",
        None => {
            return Err(format!(
                "option '{}' needs a value ({})",
                def.name,
                def.kind.describe()
            )
            .into());
        }
    };
    (def.set)(spec, value).map_err(|e| {
        crate::job::value::clip_value(format!("option '{}': {e}", def.name), value).into()
    })
}

/// The names of options that are implemented, for tests and docs.
pub fn supported_names() -> Vec<&'static str> {
    all().filter(|d| d.is_supported()).map(|d| d.name).collect()
}

/// Builds a spec with every option's default applied; used to check that
/// the defaults in the table agree with `JobSpec::default()`.
pub fn spec_from_table_defaults() -> Result<JobSpec, JobError> {
    let mut spec = JobSpec::default();
    for d in all().filter(|d| d.is_supported() && !d.default.is_empty()) {
        (d.set)(&mut spec, d.default).map_err(|e| format!("default of '{}': {e}", d.name))?;
    }
    Ok(spec)
}

// Shared helpers for setters.

pub(crate) fn size(s: &JobSpec, v: &str) -> Result<u64, JobError> {
    super::value::parse_size(v, s.kb_base())
}

pub(crate) fn boolean(v: &str) -> Result<bool, JobError> {
    super::value::parse_bool(v)
}

pub(crate) fn uint(v: &str) -> Result<u64, JobError> {
    let n = super::value::parse_int(v)?;
    u64::try_from(n).map_err(|_| format!("'{v}' must not be negative").into())
}

pub(crate) fn uint_in(v: &str, lo: u64, hi: u64) -> Result<u64, JobError> {
    let n = uint(v)?;
    if n < lo || n > hi {
        return Err(format!("'{v}' is out of range (expected {lo} to {hi})").into());
    }
    Ok(n)
}

pub(crate) fn time_us(v: &str, unit: TimeUnit) -> Result<u64, JobError> {
    super::value::parse_time_us(v, unit)
}

/// Parses a per-direction value list, applying `f` to each given field.
pub(crate) fn per_ddir<T: Copy>(
    cur: &mut [T; 3],
    v: &str,
    f: impl Fn(&str) -> Result<T, JobError>,
) -> Result<(), JobError> {
    let parts = super::value::split_per_ddir(v)?;
    for (i, p) in parts.iter().enumerate() {
        if let Some(p) = p {
            cur[i] = f(p)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for d in all() {
            assert!(seen.insert(d.name), "duplicate option {}", d.name);
            for a in d.aliases {
                assert!(seen.insert(*a), "duplicate alias {a}");
            }
        }
    }

    #[test]
    fn table_defaults_match_spec_defaults() {
        let from_table = spec_from_table_defaults().unwrap();
        assert_eq!(from_table, JobSpec::default());
    }

    #[test]
    fn every_option_has_help() {
        for d in all() {
            assert!(!d.help.is_empty(), "{} has no help", d.name);
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("iodpeth"), Some("iodepth"));
        // The closest name as spelled: an alias rather than its option.
        assert_eq!(suggest("blocksiz"), Some("blocksize"));
        assert_eq!(suggest("BlockSize"), Some("blocksize"));
        assert_eq!(suggest("bss"), Some("bs"));
        assert_eq!(suggest("RW"), Some("rw"));
        assert_eq!(suggest("zzzzzzzzzzzz"), None);
        assert_eq!(suggest("time-based"), Some("time_based"));
        assert_eq!(suggest("ramptime"), Some("ramp_time"));
        assert_eq!(suggest("blocksz"), Some("blocksize"));
        assert_eq!(suggest("rwmix"), Some("rwmixread"));
        assert_eq!(suggest("cpus"), Some("cpus_allowed"));
        assert_eq!(suggest("lat_log"), Some("write_lat_log"));
        // Unsupported options are still suggested when nothing else fits.
        assert_eq!(suggest("verfy"), Some("verify"));
    }
}
