//! The job file reader: turns fio's ini-like text into ordered sections of
//! `key[=value]` entries, each remembering its file and line.
//!
//! It handles `[section]` headers (several `[global]` sections included),
//! `;` and `#` comments (whole lines, and trailing ones after a value),
//! keys without values, `include FILE` (nested, relative to the including
//! file, no sections inside), `${VAR}` environment expansion (unset names
//! are remembered for error messages) and the `$pagesize`, `$mb_memory`
//! and `$ncpus` keywords (with fio's arithmetic on them). It does not
//! interpret option names or values: that is the option table's job.

use std::path::{Path, PathBuf};

use super::error::{JobError, Origin};

/// One `key` or `key=value` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    /// The value after `${VAR}` and keyword expansion.
    pub value: Option<String>,
    pub origin: Origin,
    /// `${VAR}`s in the value that were not set (expanded to nothing), so an
    /// error about the value can name them.
    pub unset_vars: Vec<String>,
}

/// A `[name]` section with its entries in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub origin: Origin,
    pub entries: Vec<Entry>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

const MAX_INCLUDE_DEPTH: usize = 16;
const MAX_LINE: usize = 8192;

/// Reads a job file from disk.
pub fn read_jobfile(path: &Path) -> Result<Vec<Section>, JobError> {
    let text = std::fs::read(path).map_err(|e| {
        JobError::plain(format!(
            "cannot read job file '{}': {}",
            path.display(),
            io_reason(&e)
        ))
    })?;
    let text = String::from_utf8_lossy(&text);
    parse_jobfile_text(&text, path)
}

pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_lowercase(),
                None => s,
            }
        }
    }
}

/// Parses job file text; `path` names it in errors and anchors includes.
pub fn parse_jobfile_text(text: &str, path: &Path) -> Result<Vec<Section>, JobError> {
    let mut sections: Vec<Section> = Vec::new();
    let mut stack = vec![canonical(path)];
    parse_into(text, path, &mut sections, false, &mut stack)?;
    Ok(sections)
}

fn parse_into(
    text: &str,
    path: &Path,
    sections: &mut Vec<Section>,
    in_include: bool,
    stack: &mut Vec<PathBuf>,
) -> Result<(), JobError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (idx, raw) in text.lines().enumerate() {
        let origin = Origin::file(path, idx + 1);
        if raw.len() > MAX_LINE {
            return Err(JobError::at(
                &origin,
                format!("line is longer than {MAX_LINE} bytes"),
            ));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            if in_include {
                return Err(JobError::at(
                    &origin,
                    "an included file may not contain [sections]".to_string(),
                ));
            }
            let name = section_name(line).map_err(|m| JobError::at(&origin, m))?;
            sections.push(Section {
                name: name.to_string(),
                origin,
                entries: Vec::new(),
            });
            continue;
        }
        if let Some(target) = include_target(line) {
            if sections.is_empty() {
                return Err(JobError::at(
                    &origin,
                    "'include' appears before any [section] header".to_string(),
                ));
            }
            let target = expand(strip_comment(target).trim());
            if target.text.is_empty() {
                return Err(JobError::at(
                    &origin,
                    format!("include needs a file name{}", unset_note(&target.unset)),
                ));
            }
            let inc = resolve_include(path, &target.text);
            let inc_text = std::fs::read(&inc).map_err(|e| {
                JobError::at(
                    &origin,
                    format!(
                        "cannot read included file '{}': {}",
                        inc.display(),
                        io_reason(&e)
                    ),
                )
            })?;
            let key = canonical(&inc);
            if stack.contains(&key) {
                return Err(JobError::at(
                    &origin,
                    format!("'{}' includes itself", inc.display()),
                ));
            }
            if stack.len() > MAX_INCLUDE_DEPTH {
                return Err(JobError::at(
                    &origin,
                    format!("includes are nested more than {MAX_INCLUDE_DEPTH} deep"),
                ));
            }
            stack.push(key);
            parse_into(
                &String::from_utf8_lossy(&inc_text),
                &inc,
                sections,
                true,
                stack,
            )?;
            stack.pop();
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(JobError::at(
                &origin,
                format!("'{line}' appears before any [section] header"),
            ));
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(strip_comment(v).trim())),
            None => (strip_comment(line).trim(), None),
        };
        if key.is_empty() {
            return Err(JobError::at(
                &origin,
                format!("'{line}' has no option name before '='"),
            ));
        }
        let (value, unset_vars) = match value.map(expand) {
            Some(e) => (Some(e.text), e.unset),
            None => (None, Vec::new()),
        };
        section.entries.push(Entry {
            key: key.to_string(),
            value,
            origin,
            unset_vars,
        });
    }
    Ok(())
}

/// The name inside a `[name]` header; a comment may follow the header.
fn section_name(line: &str) -> Result<&str, String> {
    let Some(end) = line.find(']') else {
        return Err(format!(
            "section header '{line}' is missing its closing ']'"
        ));
    };
    let name = line[1..end].trim();
    let rest = line[end + 1..].trim_start();
    if !(rest.is_empty() || rest.starts_with(';') || rest.starts_with('#')) {
        return Err(format!(
            "section header '{line}' has text after its closing ']'"
        ));
    }
    if name.is_empty() {
        return Err("empty section name '[]'".to_string());
    }
    if name.contains('[') {
        return Err(format!("section header '{line}' has a stray '['"));
    }
    Ok(name)
}

fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    if rest.is_empty() || rest.starts_with([';', '#']) {
        return Some("");
    }
    if rest.starts_with(char::is_whitespace) && !rest.trim_start().starts_with('=') {
        Some(rest.trim())
    } else {
        None
    }
}

/// A path's identity for include-cycle detection.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn resolve_include(from: &Path, target: &str) -> PathBuf {
    let t = Path::new(target);
    if t.is_absolute() {
        return t.to_path_buf();
    }
    match from.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            let candidate = dir.join(t);
            if candidate.exists() || !t.exists() {
                candidate
            } else {
                t.to_path_buf()
            }
        }
        _ => t.to_path_buf(),
    }
}

/// Removes a trailing `;` or `#` comment that follows whitespace, so values
/// such as `filename=a#b` keep their characters.
fn strip_comment(v: &str) -> &str {
    let b = v.as_bytes();
    for i in 0..b.len() {
        if (b[i] == b';' || b[i] == b'#') && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            return &v[..i];
        }
    }
    v
}

/// A value after `${VAR}` and keyword expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    pub text: String,
    /// Variables that were referenced but not set (they expand to nothing).
    pub unset: Vec<String>,
}

/// The note appended to an error about a value that used unset variables.
pub fn unset_note(unset: &[String]) -> String {
    match unset {
        [] => String::new(),
        [one] => format!(" (environment variable {one} is not set)"),
        many => format!(" (environment variables {} are not set)", many.join(", ")),
    }
}

/// Expands `${VAR}` and the `$pagesize`, `$mb_memory` and `$ncpus`
/// keywords; see `expand`.
pub fn expand_vars(v: &str) -> String {
    expand(v).text
}

/// Expands `${VAR}` from the environment (an unset or empty variable
/// becomes the empty string, as the HOWTO says; unset names are recorded
/// so errors can mention them) and the reserved keywords `$pagesize`,
/// `$mb_memory` and `$ncpus`.
///
/// As with fio, a value that used a keyword and contains `+`, `*` or `/`
/// is computed as whole-number arithmetic, so `size=8*$mb_memory` works
/// without parentheses. A value whose only operator is `-` is left alone,
/// so ranges such as `cpus_allowed=1-$ncpus` keep their meaning; write
/// `($mb_memory-100)` to subtract.
pub fn expand(v: &str) -> Expanded {
    let mut unset = Vec::new();
    if !v.contains('$') {
        return Expanded {
            text: v.to_string(),
            unset,
        };
    }
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    let mut keyword_used = false;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix('{') {
            if let Some(end) = body.find('}') {
                let name = &body[..end];
                match std::env::var(name) {
                    Ok(val) => out.push_str(&val),
                    Err(_) => unset.push(name.to_string()),
                }
                rest = &body[end + 1..];
                continue;
            }
        }
        let mut matched = false;
        for (kw, val) in [
            ("pagesize", sysinfo_pagesize as fn() -> u64),
            ("mb_memory", sysinfo_mb_memory),
            ("ncpus", sysinfo_ncpus),
        ] {
            if let Some(tail) = after.strip_prefix(kw) {
                out.push_str(&val().to_string());
                rest = tail;
                matched = true;
                keyword_used = true;
                break;
            }
        }
        if !matched {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if keyword_used && out.contains(['+', '*', '/']) {
        if let Some(n) = keyword_arithmetic(&out) {
            out = n;
        }
    }
    Expanded { text: out, unset }
}

/// Computes `8*4096`-style text (plain numbers only) to a whole number.
fn keyword_arithmetic(text: &str) -> Option<String> {
    let plain = |suffix: &str| if suffix.is_empty() { Some(1.0) } else { None };
    let v = super::expr::eval(&format!("({text})"), &plain).ok()?;
    Some(format!("{}", v.trunc() as i64))
}

pub fn sysinfo_pagesize() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as u64
    } else {
        4096
    }
}

pub fn sysinfo_mb_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        (pages as u64 * size as u64) >> 20
    } else {
        0
    }
}

pub fn sysinfo_ncpus() -> u64 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Section>, JobError> {
        parse_jobfile_text(text, Path::new("t.fio"))
    }

    #[test]
    fn sections_comments_and_bare_keys() {
        let s = parse("; c\n[global]\nbs=4k ; note\n# c\n[job1]\ntime_based\nrw = randread\n[global]\n[job1]\n").unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "job1", "global", "job1"]);
        assert_eq!(s[0].entries[0].value.as_deref(), Some("4k"));
        assert_eq!(s[1].entries[0].key, "time_based");
        assert_eq!(s[1].entries[0].value, None);
        assert_eq!(s[1].entries[1].value.as_deref(), Some("randread"));
        assert_eq!(s[1].entries[1].origin.line, 7);
    }

    #[test]
    fn values_keep_inner_hashes() {
        let s = parse("[a]\nfilename=/tmp/a#b\n").unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("/tmp/a#b"));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("[a]\nbs=4k\n[oops\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:3: section header '[oops' is missing its closing ']'"
        );
        let e = parse("bs=4k\n").unwrap_err();
        assert!(e.to_string().starts_with("t.fio:1:"));
    }

    #[test]
    fn headers_may_carry_comments() {
        let s = parse("[a] ; first job\n[ b ]#second\n").unwrap();
        assert_eq!(s[0].name, "a");
        assert_eq!(s[1].name, "b");
        assert!(parse("[a] b\n").is_err());
        assert!(parse("[a[b]\n").is_err());
    }

    #[test]
    fn unset_variables_are_recorded() {
        let s = parse("[a]\nbs=${IOMARK_JF_UNSET_A}4k${IOMARK_JF_UNSET_B}\n").unwrap();
        let e = &s[0].entries[0];
        assert_eq!(e.value.as_deref(), Some("4k"));
        assert_eq!(e.unset_vars, ["IOMARK_JF_UNSET_A", "IOMARK_JF_UNSET_B"]);
        assert_eq!(
            unset_note(&e.unset_vars),
            " (environment variables IOMARK_JF_UNSET_A, IOMARK_JF_UNSET_B are not set)"
        );
    }

    #[test]
    fn keyword_arithmetic_is_computed() {
        let page = sysinfo_pagesize();
        assert_eq!(expand_vars("2*$pagesize"), (2 * page).to_string());
        assert_eq!(expand_vars("$pagesize/2+1"), (page / 2 + 1).to_string());
        assert_eq!(expand_vars("(3*$pagesize)"), (3 * page).to_string());
        // A lone '-' stays a range; units are left to the option parser.
        assert_eq!(expand_vars("1-$ncpus"), format!("1-{}", sysinfo_ncpus()));
        assert_eq!(expand_vars("$pagesize*2k"), format!("{page}*2k"));
        // Without a keyword nothing is computed.
        assert_eq!(expand_vars("4*2"), "4*2");
    }

    #[test]
    fn env_and_keywords_expand() {
        std::env::set_var("IOMARK_TEST_BS", "8k");
        assert_eq!(expand_vars("${IOMARK_TEST_BS}"), "8k");
        assert_eq!(expand_vars("${IOMARK_SURELY_UNSET_VAR}"), "");
        assert_eq!(expand_vars("$ncpus"), sysinfo_ncpus().to_string());
        assert_eq!(expand_vars("a$b"), "a$b");
    }

    #[test]
    fn includes_are_spliced_into_the_section() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inc.fio"), "iodepth=4\n").unwrap();
        std::fs::write(dir.path().join("main.fio"), "[a]\ninclude inc.fio\nbs=4k\n").unwrap();
        let s = read_jobfile(&dir.path().join("main.fio")).unwrap();
        let keys: Vec<&str> = s[0].entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["iodepth", "bs"]);
        std::fs::write(dir.path().join("bad.fio"), "[x]\n").unwrap();
        std::fs::write(dir.path().join("main2.fio"), "[a]\ninclude bad.fio\n").unwrap();
        assert!(read_jobfile(&dir.path().join("main2.fio")).is_err());
        std::fs::write(dir.path().join("loop.fio"), "include loop.fio\n").unwrap();
        std::fs::write(dir.path().join("main3.fio"), "[a]\ninclude loop.fio\n").unwrap();
        let e = read_jobfile(&dir.path().join("main3.fio")).unwrap_err();
        assert!(e.to_string().ends_with("loop.fio' includes itself"), "{e}");
    }
}
