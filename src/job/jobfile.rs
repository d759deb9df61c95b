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
//!
//! No input makes it use unbounded memory or time, hang or panic: job
//! files and includes must be regular files (or already-open pipes) and are
//! read through a bounded reader; one job file with its includes is at
//! most 16 MiB, 262,144 lines and 1,024 includes nested 16 deep; values
//! are at most 64 KiB after expansion; a NUL byte, a control character or
//! text that is not UTF-8 is an error naming file:line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// How deeply `include` may nest.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Longest line of a job file, in bytes.
pub const MAX_LINE: usize = 8192;
/// Most bytes read for one job file, its includes counted in (and the
/// growth of values by `${VAR}` expansion): 16 MiB.
pub const MAX_JOBFILE_BYTES: u64 = 16 << 20;
/// Most section headers and option lines in one job file with its
/// includes.
pub const MAX_JOBFILE_LINES: usize = 1 << 18;
/// Most `include` lines followed for one job file.
pub const MAX_INCLUDES: usize = 1024;
/// Longest value after `${VAR}` expansion, in bytes.
pub const MAX_VALUE: usize = 64 << 10;

/// What one job file (with its includes) may still use, so that no input
/// makes the reader use unbounded memory or time.
struct Budget {
    bytes: u64,
    lines: usize,
    includes: usize,
}

impl Budget {
    fn new() -> Self {
        Budget {
            bytes: MAX_JOBFILE_BYTES,
            lines: MAX_JOBFILE_LINES,
            includes: MAX_INCLUDES,
        }
    }

    fn take_bytes(&mut self, n: usize, origin: &Origin) -> Result<(), JobError> {
        match self.bytes.checked_sub(n as u64) {
            Some(left) => {
                self.bytes = left;
                Ok(())
            }
            None => Err(JobError::at(origin, too_big_message())),
        }
    }

    fn take_line(&mut self, origin: &Origin) -> Result<(), JobError> {
        if self.lines == 0 {
            return Err(JobError::at(
                origin,
                format!(
                    "the job file (with its includes) has more than {MAX_JOBFILE_LINES} sections and options"
                ),
            ));
        }
        self.lines -= 1;
        Ok(())
    }
}

fn too_big_message() -> String {
    format!(
        "the job file (with its includes and expanded variables) is larger than {} MiB",
        MAX_JOBFILE_BYTES >> 20
    )
}

/// Reads a job file from disk: a regular file, or a pipe that is already
/// open (`/dev/stdin`, a shell's `<(…)`); at most 16 MiB.
pub fn read_jobfile(path: &Path) -> Result<Vec<Section>, JobError> {
    let mut budget = Budget::new();
    let text = read_bounded(path, budget.bytes).map_err(|why| {
        JobError::plain(format!("cannot read job file '{}': {why}", path.display()))
    })?;
    budget.bytes -= text.len() as u64;
    parse_jobfile_bytes_within(&text, path, &mut budget)
}

/// Reads at most `limit` bytes of standard input as a job file (`-`).
pub fn read_jobfile_from(
    input: &mut dyn std::io::Read,
    name: &Path,
) -> Result<Vec<Section>, JobError> {
    let mut budget = Budget::new();
    let text = read_at_most(input, budget.bytes).map_err(|why| {
        JobError::plain(format!("cannot read job file from standard input: {why}"))
    })?;
    budget.bytes -= text.len() as u64;
    parse_jobfile_bytes_within(&text, name, &mut budget)
}

/// Reads all of `input`, refusing more than `limit` bytes.
pub fn read_at_most(input: &mut dyn std::io::Read, limit: u64) -> Result<Vec<u8>, JobError> {
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(input, limit + 1), &mut buf)
        .map_err(|e| io_reason(&e))?;
    if buf.len() as u64 > limit {
        return Err(format!("is larger than {} MiB", limit >> 20).into());
    }
    Ok(buf)
}

/// Opens `path` without blocking (a FIFO with no writer would hang an
/// ordinary open) and reads it if it is a regular file or an already open
/// anonymous pipe. Directories, devices, sockets and named FIFOs are
/// refused: they are never input files (job files, traces, results),
/// and some never end. The error is the reason alone, for the caller to
/// put after the file's name.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, JobError> {
    read_at_most(&mut open_readable(path)?, limit)
}

/// Opens `path` to read it as `read_bounded` does: a regular file or an
/// anonymous pipe, nothing else.
pub fn open_readable(path: &Path) -> Result<std::fs::File, JobError> {
    use crate::sys::ext::{FileTypeExt, OpenOptionsExt};
    use crate::sys::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(crate::sys::O_NONBLOCK | crate::sys::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            // Windows refuses to open a directory as a file (access
            // denied): say what it is, as on Unix.
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                "is a directory".to_string()
            } else {
                io_reason(&e)
            }
        })?;
    let ft = file.metadata().map_err(|e| io_reason(&e))?.file_type();
    let not_regular = |what: &str| format!("is {what}, not a regular file");
    if ft.is_dir() {
        return Err("is a directory".into());
    } else if ft.is_char_device() {
        return Err(not_regular("a character device").into());
    } else if ft.is_block_device() {
        return Err(not_regular("a block device").into());
    } else if ft.is_socket() {
        return Err(not_regular("a socket").into());
    } else if ft.is_fifo() {
        let fd = file.as_raw_fd();
        let anonymous = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .is_ok_and(|l| l.as_os_str().as_encoded_bytes().starts_with(b"pipe:"));
        if !anonymous {
            return Err(not_regular("a named pipe (FIFO)").into());
        }
        if let Err(e) = crate::sys::set_blocking(fd) {
            return Err(io_reason(&e).into());
        }
    }
    Ok(file)
}

pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ if e.to_string().contains(" (os error") => crate::sys::error_text(e).to_lowercase(),
        _ => e.to_string(),
    }
}

/// Parses job file text; `path` names it in errors and anchors includes.
pub fn parse_jobfile_text(text: &str, path: &Path) -> Result<Vec<Section>, JobError> {
    parse_jobfile_bytes(text.as_bytes(), path)
}

/// Parses a job file's bytes (at most 16 MiB); `path` names it in errors
/// and anchors includes. Lines must be UTF-8 text without NUL bytes or
/// control characters (comments may hold any text but NUL).
pub fn parse_jobfile_bytes(bytes: &[u8], path: &Path) -> Result<Vec<Section>, JobError> {
    let mut budget = Budget::new();
    budget.take_bytes(bytes.len(), &Origin::file(path, 1))?;
    parse_jobfile_bytes_within(bytes, path, &mut budget)
}

fn parse_jobfile_bytes_within(
    bytes: &[u8],
    path: &Path,
    budget: &mut Budget,
) -> Result<Vec<Section>, JobError> {
    let mut sections: Vec<Section> = Vec::new();
    let mut stack = vec![canonical(path)];
    parse_into(bytes, path, &mut sections, false, &mut stack, budget)?;
    Ok(sections)
}

/// Why text (`what`: "the line", "the value of 'bs'") cannot be used:
/// a NUL byte, a control character or bytes that are not UTF-8.
pub fn bad_text(what: &str, text: &str) -> Option<String> {
    if text.contains('\0') {
        return Some(format!("{what} contains a NUL byte"));
    }
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\t') {
        return Some(format!(
            "{what} contains a control character (U+{:04X})",
            c as u32
        ));
    }
    if text.contains(char::REPLACEMENT_CHARACTER) {
        return Some(format!("{what} is not valid UTF-8 text"));
    }
    None
}

fn parse_into(
    bytes: &[u8],
    path: &Path,
    sections: &mut Vec<Section>,
    in_include: bool,
    stack: &mut Vec<PathBuf>,
    budget: &mut Budget,
) -> Result<(), JobError> {
    let file: Arc<str> = path.display().to_string().into();
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let mut lines = bytes.split(|b| *b == b'\n').peekable();
    let mut idx = 0;
    while let Some(raw) = lines.next() {
        idx += 1;
        if raw.is_empty() && lines.peek().is_none() {
            break;
        }
        let origin = Origin::in_file(&file, idx);
        if raw.len() > MAX_LINE {
            return Err(JobError::at(
                &origin,
                format!("line is longer than {MAX_LINE} bytes"),
            ));
        }
        let raw = String::from_utf8_lossy(raw);
        if raw.contains('\0') {
            // Even in a comment: fio would cut the line there.
            return Err(JobError::at(&origin, "the line contains a NUL byte".into()));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(why) = bad_text("the line", strip_comment(line)) {
            return Err(JobError::at(&origin, why));
        }
        if line.starts_with('[') {
            if in_include {
                return Err(JobError::at(
                    &origin,
                    "an included file may not contain [sections]".to_string(),
                ));
            }
            let name = section_name(line).map_err(|m| JobError::at(&origin, m.into()))?;
            budget.take_line(&origin)?;
            sections.push(Section {
                name: name.to_string(),
                origin,
                entries: Vec::new(),
            });
            continue;
        }
        if let Some(target) = include_target(line) {
            include(target, path, sections, stack, budget, &origin)?;
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
        budget.take_line(&origin)?;
        let (value, unset_vars) = match value {
            Some(v) => {
                let e = expand(v);
                if e.too_long {
                    return Err(JobError::at(&origin, too_long_message(key)));
                }
                budget.take_bytes(e.text.len().saturating_sub(v.len()), &origin)?;
                let what = format!("the value of '{key}'");
                if let Some(why) = bad_text(&what, &e.text).filter(|_| e.text != v) {
                    return Err(JobError::at(
                        &origin,
                        format!("{why} after ${{VAR}} expansion"),
                    ));
                }
                (Some(e.text), e.unset)
            }
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

/// The error for a value that `${VAR}` expansion made too long.
pub fn too_long_message(key: &str) -> String {
    format!("the value of '{key}' is longer than {MAX_VALUE} bytes after ${{VAR}} expansion")
}

/// Follows an `include FILE` line of the file `from`.
fn include(
    target: &str,
    from: &Path,
    sections: &mut Vec<Section>,
    stack: &mut Vec<PathBuf>,
    budget: &mut Budget,
    origin: &Origin,
) -> Result<(), JobError> {
    if sections.is_empty() {
        return Err(JobError::at(
            origin,
            "'include' appears before any [section] header".to_string(),
        ));
    }
    let target = expand(strip_comment(target).trim());
    if target.too_long {
        return Err(JobError::at(origin, too_long_message("include")));
    }
    if target.text.is_empty() {
        return Err(JobError::at(
            origin,
            format!("include needs a file name{}", unset_note(&target.unset)),
        ));
    }
    if budget.includes == 0 {
        return Err(JobError::at(
            origin,
            format!("the job file follows more than {MAX_INCLUDES} includes"),
        ));
    }
    budget.includes -= 1;
    let inc = resolve_include(from, &target.text);
    let key = canonical(&inc);
    if stack.contains(&key) {
        return Err(JobError::at(
            origin,
            format!("'{}' includes itself", inc.display()),
        ));
    }
    if stack.len() > MAX_INCLUDE_DEPTH {
        return Err(JobError::at(
            origin,
            format!("includes are nested more than {MAX_INCLUDE_DEPTH} deep"),
        ));
    }
    let text = read_bounded(&inc, budget.bytes).map_err(|why| {
        let why = if why.message.starts_with("is larger than") {
            too_big_message()
        } else {
            format!("cannot read included file '{}': {why}", inc.display())
        };
        JobError::at(origin, why)
    })?;
    budget.bytes -= text.len() as u64;
    stack.push(key);
    parse_into(&text, &inc, sections, true, stack, budget)?;
    stack.pop();
    Ok(())
}

/// The name inside a `[name]` header; a comment may follow the header.
fn section_name(line: &str) -> Result<&str, JobError> {
    let Some(end) = line.find(']') else {
        return Err(format!("section header '{line}' is missing its closing ']'").into());
    };
    let name = line[1..end].trim();
    let rest = line[end + 1..].trim_start();
    if !(rest.is_empty() || rest.starts_with(';') || rest.starts_with('#')) {
        return Err(format!("section header '{line}' has text after its closing ']'").into());
    }
    if name.is_empty() {
        return Err("empty section name '[]'".to_string().into());
    }
    if name.contains('[') {
        return Err(format!("section header '{line}' has a stray '['").into());
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
    /// The expansion would be longer than `MAX_VALUE`; `text` is cut.
    pub too_long: bool,
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
            too_long: false,
        };
    }
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    let mut keyword_used = false;
    let mut too_long = false;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let mut piece = None;
        if let Some(body) = after.strip_prefix('{') {
            if let Some(end) = body.find('}') {
                let name = &body[..end];
                match std::env::var(name) {
                    Ok(val) => piece = Some(val),
                    Err(_) => {
                        unset.push(name.to_string());
                        piece = Some(String::new());
                    }
                }
                rest = &body[end + 1..];
            }
        }
        if piece.is_none() {
            for (kw, val) in [
                ("pagesize", sysinfo_pagesize as fn() -> u64),
                ("mb_memory", sysinfo_mb_memory),
                ("ncpus", sysinfo_ncpus),
            ] {
                if let Some(tail) = after.strip_prefix(kw) {
                    piece = Some(val().to_string());
                    rest = tail;
                    keyword_used = true;
                    break;
                }
            }
        }
        let piece = piece.unwrap_or_else(|| {
            rest = after;
            "$".to_string()
        });
        if out.len() + piece.len() + rest.len() > MAX_VALUE {
            too_long = true;
            break;
        }
        out.push_str(&piece);
    }
    if too_long {
        return Expanded {
            text: out,
            unset,
            too_long,
        };
    }
    out.push_str(rest);
    if keyword_used && out.contains(['+', '*', '/']) {
        if let Some(n) = keyword_arithmetic(&out) {
            out = n;
        }
    }
    Expanded {
        text: out,
        unset,
        too_long,
    }
}

/// Computes `8*4096`-style text (plain numbers only) to a whole number.
/// Text that is not such arithmetic is left alone; arithmetic that
/// overflows is put in parentheses, so the option's own parser reports it
/// (never a wrapped or saturated number).
fn keyword_arithmetic(text: &str) -> Option<String> {
    use super::expr::{eval, ExprError, Num};
    let plain = |suffix: &str| suffix.is_empty().then_some(Num::Int(1));
    let wrapped = format!("({text})");
    match eval(&wrapped, &plain) {
        Ok(Num::Int(i)) => Some(i.to_string()),
        Ok(Num::Float(f)) if f.abs() < 9.0e18 => Some((f.trunc() as i64).to_string()),
        Ok(Num::Float(_)) => Some(wrapped),
        Err(ExprError::TooLarge(_)) => Some(wrapped),
        Err(_) => None,
    }
}

pub fn sysinfo_pagesize() -> u64 {
    crate::sys::page_size()
}

pub fn sysinfo_mb_memory() -> u64 {
    crate::sys::ram_bytes() >> 20
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

    #[test]
    fn nul_bytes_and_control_characters_are_errors() {
        let e = |t: &[u8]| {
            parse_jobfile_bytes(t, Path::new("t.fio"))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(e(b"[jo\0b]\n"), "t.fio:1: the line contains a NUL byte");
        assert_eq!(e(b"[a]\n; c\0\n"), "t.fio:2: the line contains a NUL byte");
        assert_eq!(
            e(b"[a]\nfilename=a\x1bb\n"),
            "t.fio:2: the line contains a control character (U+001B)"
        );
        assert_eq!(
            e(b"[a]\nfilename=a\xffb\n"),
            "t.fio:2: the line is not valid UTF-8 text"
        );
        // CRLF endings, tabs and odd bytes in comments are fine.
        let s = parse_jobfile_bytes(b"[a]\r\nbs=\t4k\r\n; \xff\x1b\n", Path::new("t.fio")).unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("4k"));
        std::env::set_var("IOMARK_JF_NEWLINE", "a\nb");
        assert_eq!(
            e(b"[a]\ndescription=${IOMARK_JF_NEWLINE}\n"),
            "t.fio:2: the value of 'description' contains a control character (U+000A) after ${VAR} expansion"
        );
    }

    #[test]
    // Windows caps an environment variable at 32767 characters.
    #[cfg(unix)]
    fn expansion_and_keyword_arithmetic_are_bounded() {
        std::env::set_var("IOMARK_JF_BIG", "x".repeat(40_000));
        let e = parse("[a]\nfilename=${IOMARK_JF_BIG}${IOMARK_JF_BIG}\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:2: the value of 'filename' is longer than 65536 bytes after ${VAR} expansion"
        );
        assert!(expand(&"${IOMARK_JF_BIG}".repeat(1000)).too_long);
        // Overflowing keyword arithmetic is left for the option to refuse.
        assert_eq!(
            expand_vars("$pagesize*(2^200)"),
            format!("({}*(2^200))", sysinfo_pagesize())
        );
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn job_files_must_be_regular_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        let err = |path: &Path| read_jobfile(path).unwrap_err().to_string();
        assert_eq!(
            err(Path::new("/dev/zero")),
            "cannot read job file '/dev/zero': is a character device, not a regular file"
        );
        let fifo = p("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(err(&fifo).ends_with("is a named pipe (FIFO), not a regular file"));
        let big = p("big.fio");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_JOBFILE_BYTES + 1).unwrap();
        assert!(
            err(&big).ends_with("is larger than 16 MiB"),
            "{}",
            err(&big)
        );
        std::fs::write(p("inc.fio"), format!("[a]\ninclude {}\n", fifo.display())).unwrap();
        assert!(err(&p("inc.fio")).contains("cannot read included file"));
        std::fs::write(p("dev.fio"), "[a]\ninclude /dev/zero\n").unwrap();
        assert!(err(&p("dev.fio")).ends_with("is a character device, not a regular file"));
    }

    #[test]
    fn a_directory_is_named_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_jobfile(dir.path()).unwrap_err().to_string();
        assert!(e.ends_with("': is a directory"), "{e}");
        std::fs::write(dir.path().join("inc.fio"), "[a]\ninclude .\n").unwrap();
        let e = read_jobfile(&dir.path().join("inc.fio"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot read included file '") && e.ends_with("': is a directory"),
            "{e}"
        );
    }

    #[test]
    fn include_chains_and_fan_out_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        for i in 0..20 {
            std::fs::write(p(&format!("c{i}.fio")), format!("include c{}.fio\n", i + 1)).unwrap();
        }
        std::fs::write(p("c20.fio"), "bs=4k\n").unwrap();
        std::fs::write(p("deep.fio"), "[a]\ninclude c0.fio\n").unwrap();
        let e = read_jobfile(&p("deep.fio")).unwrap_err().to_string();
        assert!(e.ends_with("includes are nested more than 16 deep"), "{e}");
        std::fs::write(p("empty.fio"), "").unwrap();
        std::fs::write(p("fan.fio"), "include empty.fio\n".repeat(40)).unwrap();
        std::fs::write(
            p("wide.fio"),
            format!("[a]\n{}", "include fan.fio\n".repeat(40)),
        )
        .unwrap();
        let e = read_jobfile(&p("wide.fio")).unwrap_err().to_string();
        assert!(
            e.ends_with("the job file follows more than 1024 includes"),
            "{e}"
        );
        let lines = format!("[a]\n{}", "bs=4k\n".repeat(MAX_JOBFILE_LINES));
        let e = parse(&lines).unwrap_err().to_string();
        assert!(
            e.ends_with("has more than 262144 sections and options"),
            "{e}"
        );
    }
}
