//! Value parsers for fio's option types: sizes with unit suffixes, times,
//! booleans, ranges, splits, percentages and `( )` arithmetic.
//!
//! Every parser takes the option's text value (already `${VAR}`-expanded)
//! and returns a typed value or a message that names the expected form. The
//! caller adds the option name and the file:line.

use super::expr::{self, Num};
use crate::job::JobError;

/// How `k`, `m`, `g` … scale a number: fio's `kb_base`.
///
/// With 1024 (the default) `k` is 1024 and `ki`/`kib` is 1000; with 1000
/// the two swap, as fio documents.
pub fn unit_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    let s = s.trim();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let mut chars = s.chars();
    let letter = chars.next()?;
    let rest: String = chars.collect();
    let pow = match letter {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        'e' => 6,
        _ => return None,
    };
    let swapped = match rest.as_str() {
        "" | "b" => false,
        "i" | "ib" => true,
        _ => return None,
    };
    let base: u64 = match (kb_base, swapped) {
        (1000, false) | (1024, true) => 1000,
        _ => 1024,
    };
    base.checked_pow(pow)
}

/// Splits "12.5kib" into ("12.5", "kib"), "0x1000" into ("0x1000", "").
fn split_number(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    if b.len() > 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        let end = 2 + b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        return (&s[..end], &s[end..]);
    }
    let end = b
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    (&s[..end], &s[end..])
}

/// A plain number (`12`, `1.5`, `0x1000`) times `mult`, divided by `div`,
/// rounded to the nearest whole number, computed exactly.
enum Scaled {
    NotANumber,
    TooLarge,
    Value(u64),
}

/// Fraction digits kept; later ones cannot change a result that fits in
/// 64 bits by more than the rounding, and keeping no more than this many
/// means a value that fits never overflows the 128-bit arithmetic.
const MAX_FRACTION_DIGITS: usize = 16;

fn scale(num: &str, mult: u128, div: u128) -> Scaled {
    let (numer, den) = if let Some(hex) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Scaled::NotANumber;
        }
        match u128::from_str_radix(hex, 16) {
            Ok(v) => (v.checked_mul(mult), div),
            Err(_) => return Scaled::TooLarge,
        }
    } else {
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        let all_digits = |t: &str| t.bytes().all(|c| c.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
            return Scaled::NotANumber;
        }
        let frac = &frac[..frac.len().min(MAX_FRACTION_DIGITS)];
        let int = int.trim_start_matches('0');
        let Ok(int) = (if int.is_empty() {
            Ok(0)
        } else {
            int.parse::<u128>()
        }) else {
            return Scaled::TooLarge;
        };
        let frac_v = if frac.is_empty() {
            0
        } else {
            frac.parse::<u128>().unwrap_or(0)
        };
        let ten_k = 10u128.pow(frac.len() as u32);
        let numer = int
            .checked_mul(ten_k)
            .and_then(|v| v.checked_add(frac_v))
            .and_then(|v| v.checked_mul(mult));
        (numer, ten_k * div)
    };
    let Some(numer) = numer else {
        return Scaled::TooLarge;
    };
    let (q, r) = (numer / den, numer % den);
    let q = if r >= den - r { q + 1 } else { q };
    match u64::try_from(q) {
        Ok(v) => Scaled::Value(v),
        Err(_) => Scaled::TooLarge,
    }
}

fn too_large(text: &str) -> String {
    format!("'{text}' {}", expr::TOO_LARGE)
}

/// A size or count in bytes with an optional unit suffix (`4k`, `1MiB`,
/// `0x1000`, `1.5g`), or a `( )` arithmetic expression. A value that does
/// not fit in 64 bits is an error, never a wrapped or saturated number.
pub fn parse_size(s: &str, kb_base: u64) -> Result<u64, JobError> {
    let s = s.trim();
    if s.starts_with('(') {
        let v = expr::eval(s, &|suffix| {
            unit_multiplier(suffix, kb_base).map(|m| Num::Int(m.into()))
        })?;
        return num_to_u64(v, 1, s);
    }
    if s.starts_with('-') {
        return Err(format!("'{s}' must not be negative").into());
    }
    let (num, suffix) = split_number(s);
    let not_a_size = || {
        format!("'{s}' is not a size (expected a number with an optional k/m/g/t/p suffix, e.g. 4k or 1g)")
    };
    if num.is_empty() {
        return Err(not_a_size().into());
    }
    let mult = unit_multiplier(suffix, kb_base).ok_or_else(|| {
        format!("'{s}' has an unknown unit '{suffix}' (expected b, k, m, g, t or p, optionally with i or ib)")
    })?;
    match scale(num, mult.into(), 1) {
        Scaled::Value(v) => Ok(v),
        Scaled::TooLarge => Err(too_large(s).into()),
        Scaled::NotANumber => Err(not_a_size().into()),
    }
}

/// A computed value divided by `div` and rounded, as a `u64`; out of
/// range is an error naming `text`.
fn num_to_u64(v: Num, div: u64, text: &str) -> Result<u64, JobError> {
    match v {
        Num::Int(i) if i < 0 => Err(format!("'{text}' must not be negative").into()),
        Num::Int(i) => {
            let (d, i) = (i128::from(div), i);
            let q = i / d + i128::from(i % d >= d - i % d);
            u64::try_from(q).map_err(|_| too_large(text).into())
        }
        Num::Float(f) => {
            let f = f / div as f64;
            if f < 0.0 {
                Err(format!("'{text}' must not be negative").into())
            } else if f.round() >= 18_446_744_073_709_551_616.0 {
                Err(too_large(text).into())
            } else {
                Ok(f.round() as u64)
            }
        }
    }
}

/// A plain integer (no units), possibly in hex or an expression. Values
/// outside the 64-bit signed range are errors.
pub fn parse_int(s: &str) -> Result<i64, JobError> {
    let s = s.trim();
    let out_of_range = |negative: bool| {
        if negative {
            format!("'{s}' is too small")
        } else {
            too_large(s)
        }
    };
    if s.starts_with('(') {
        let v = expr::eval(s, &|suffix| suffix.is_empty().then_some(Num::Int(1)))?;
        return match v {
            Num::Int(i) => i64::try_from(i).map_err(|_| out_of_range(i < 0).into()),
            Num::Float(f) => {
                let r = f.round();
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                    Ok(r as i64)
                } else {
                    Err(out_of_range(r < 0.0).into())
                }
            }
        };
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let not_whole = || format!("'{s}' is not a whole number");
    let magnitude: i128 =
        if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(not_whole().into());
            }
            i128::from_str_radix(hex, 16).map_err(|_| out_of_range(neg))?
        } else {
            if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit()) {
                return Err(not_whole().into());
            }
            body.parse::<i128>().map_err(|_| out_of_range(neg))?
        };
    let v = if neg { -magnitude } else { magnitude };
    i64::try_from(v).map_err(|_| out_of_range(neg).into())
}

/// Unit of a bare number for a time option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Sec,
    Msec,
    Usec,
}

impl TimeUnit {
    fn nsec(self) -> u64 {
        match self {
            TimeUnit::Sec => 1_000_000_000,
            TimeUnit::Msec => 1_000_000,
            TimeUnit::Usec => 1_000,
        }
    }
}

fn time_suffix_nsec(suffix: &str) -> Option<u64> {
    Some(match suffix.to_ascii_lowercase().trim() {
        "d" => 86_400_000_000_000,
        "h" => 3_600_000_000_000,
        "m" | "min" => 60_000_000_000,
        "s" | "sec" => 1_000_000_000,
        "ms" | "msec" => 1_000_000,
        "us" | "usec" => 1_000,
        "ns" | "nsec" => 1,
        _ => return None,
    })
}

/// The longest time any option takes: 100 years, in microseconds. Times
/// are added and turned into nanoseconds when jobs run, and this keeps
/// those sums far inside 64 bits.
pub const MAX_TIME_US: u64 = 100 * 365 * 86_400 * 1_000_000;

/// A time with an optional unit (`d h m s ms us ns`); a bare number is in
/// `unit`. Returns microseconds. Inside `( )` bare numbers are
/// microseconds, as fio documents. Times over 100 years are errors.
pub fn parse_time_us(s: &str, unit: TimeUnit) -> Result<u64, JobError> {
    let s = s.trim();
    let us = if s.starts_with('(') {
        // Bare numbers are microseconds; units scale only their own number.
        let v = expr::eval(s, &|suffix| {
            if suffix.is_empty() {
                Some(Num::Int(1))
            } else {
                time_suffix_nsec(suffix).map(|n| match n % 1_000 {
                    0 => Num::Int((n / 1_000).into()),
                    _ => Num::Float(n as f64 / 1_000.0),
                })
            }
        })?;
        match num_to_u64(v, 1, s) {
            Ok(us) => us,
            Err(_) if v.as_f64() >= 0.0 => u64::MAX,
            Err(e) => return Err(e),
        }
    } else {
        if s.starts_with('-') {
            return Err(format!("'{s}' must not be negative").into());
        }
        let (num, suffix) = split_number(s);
        let not_a_time = || {
            format!(
                "'{s}' is not a time (expected a number with an optional unit: us, ms, s, m, h, d)"
            )
        };
        if num.is_empty() {
            return Err(not_a_time().into());
        }
        let mult = if suffix.is_empty() {
            unit.nsec()
        } else {
            time_suffix_nsec(suffix).ok_or_else(|| {
                format!("'{s}' has an unknown time unit '{suffix}' (expected us, ms, s, m, h or d)")
            })?
        };
        match scale(num, mult.into(), 1_000) {
            Scaled::Value(v) => v,
            Scaled::TooLarge => u64::MAX,
            Scaled::NotANumber => return Err(not_a_time().into()),
        }
    };
    if us > MAX_TIME_US {
        return Err(format!("'{s}' is too long (at most 100 years)").into());
    }
    Ok(us)
}

/// fio booleans: 1 or 0 (also in hex or as an expression); true/false,
/// yes/no and on/off are accepted as well. Other numbers are rejected, as
/// fio rejects them (its booleans have the range 0 to 1).
pub fn parse_bool(s: &str) -> Result<bool, JobError> {
    let t = s.trim().to_ascii_lowercase();
    match t.as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => match parse_int(&t) {
            Ok(0) => Ok(false),
            Ok(1) => Ok(true),
            Ok(_) => Err(format!("'{s}' is out of range (expected 1 or 0)").into()),
            Err(_) => Err(format!("'{s}' is not a boolean (expected 1 or 0)").into()),
        },
    }
}

/// A percentage `0..=100`, written `50` or `50%`; fractions allowed.
pub fn parse_percent(s: &str) -> Result<f64, JobError> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t);
    let v: f64 = if t.starts_with('(') {
        expr::eval(t, &|suffix| suffix.is_empty().then_some(Num::Int(1)))?.as_f64()
    } else {
        t.parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("'{s}' is not a percentage (expected a number from 0 to 100)"))?
    };
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("'{s}' is out of range (expected 0 to 100)").into());
    }
    Ok(v)
}

/// A size that may instead be given as a percentage (`size=50%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeOrPercent {
    Bytes(u64),
    Percent(f64),
}

pub fn parse_size_or_percent(s: &str, kb_base: u64) -> Result<SizeOrPercent, JobError> {
    let t = s.trim();
    if t.ends_with('%') {
        return parse_percent(t).map(SizeOrPercent::Percent);
    }
    parse_size(t, kb_base).map(SizeOrPercent::Bytes)
}

/// A range `lo-hi` or `lo:hi` of sizes; a single value gives `lo == hi`.
/// Swaps the ends when given backwards, as fio does.
pub fn parse_size_range(s: &str, kb_base: u64) -> Result<(u64, u64), JobError> {
    let t = s.trim();
    let parts: Vec<&str> = split_range(t);
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!("'{s}' is not a range (expected LOW-HIGH, e.g. 4k-16k)").into());
    }
    let (lo, hi) = match parts.as_slice() {
        [one] => {
            let v = parse_size(one, kb_base)?;
            (v, v)
        }
        [a, b] => (parse_size(a, kb_base)?, parse_size(b, kb_base)?),
        _ => return Err(format!("'{s}' is not a range (expected LOW-HIGH, e.g. 4k-16k)").into()),
    };
    Ok(if lo <= hi { (lo, hi) } else { (hi, lo) })
}

/// Splits on the range separators (`-` or `:`) outside parentheses; a
/// leading `-` is a sign, not a separator.
fn split_range(s: &str) -> Vec<&str> {
    let mut depth = 0i32;
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '-' | ':' if depth == 0 && i > start => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Values given per direction: `A` (all), `A,B` (read, write; trim takes
/// read's), `A,B,C`; an empty field keeps the previous (default) value.
pub fn split_per_ddir(s: &str) -> Result<[Option<&str>; 3], JobError> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err(
            format!("'{s}' has more than three comma-separated values (read,write,trim)").into(),
        );
    }
    let f = |i: usize| parts.get(i).map(|p| p.trim()).filter(|p| !p.is_empty());
    Ok(match parts.len() {
        1 => [f(0), f(0), f(0)],
        2 => [f(0), f(1), f(0)],
        _ => [f(0), f(1), f(2)],
    })
}

/// One `bssplit` entry: block size (or a range) and its share in percent
/// (0 means "share the remainder evenly").
#[derive(Clone, Debug, PartialEq)]
pub struct SplitEntry {
    pub lo: u64,
    pub hi: u64,
    pub perc: f64,
}

/// `4k/50:64k/40:1m/` — entries separated by `:`, each `SIZE[/PCT]`. Entries
/// without a percentage share what is left equally. Sizes may be ranges
/// written `4k-8k` (with `-`).
pub fn parse_split(s: &str, kb_base: u64) -> Result<Vec<SplitEntry>, JobError> {
    let mut out = Vec::new();
    for part in s.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (size, perc) = match part.split_once('/') {
            Some((a, b)) => (a, b.trim()),
            None => (part, ""),
        };
        let (lo, hi) = match size.split_once('-') {
            Some((a, b)) => (parse_size(a, kb_base)?, parse_size(b, kb_base)?),
            None => {
                let v = parse_size(size, kb_base)?;
                (v, v)
            }
        };
        let perc = if perc.is_empty() {
            0.0
        } else {
            parse_percent(perc).map_err(|e| format!("in split entry '{part}': {e}"))?
        };
        out.push(SplitEntry { lo, hi, perc });
    }
    if out.is_empty() {
        return Err(
            format!("'{s}' is an empty split (expected SIZE/PERCENT:SIZE/PERCENT…)").into(),
        );
    }
    let total: f64 = out.iter().map(|e| e.perc).sum();
    if total > 100.0 + 1e-9 {
        return Err(format!("'{s}' has shares adding up to {total}%, more than 100%").into());
    }
    let unset = out.iter().filter(|e| e.perc == 0.0).count();
    if unset > 0 {
        // Whole shares are split in whole percent, as fio splits them
        // (`4k:8k:16k` gives 33 % each; draws beyond 99 % take the last
        // entry), so the same job draws the same sizes.
        let each = if total.fract() == 0.0 {
            ((100.0 - total) / unset as f64).floor()
        } else {
            (100.0 - total) / unset as f64
        };
        for e in out.iter_mut().filter(|e| e.perc == 0.0) {
            e.perc = each;
        }
    } else if (total - 100.0).abs() > 1e-6 {
        return Err(format!("'{s}' has shares adding up to {total}%, not 100%").into());
    }
    Ok(out)
}

/// Names longer than this get no suggestion: no option is that long, and
/// edit distances on huge input would be slow.
pub const MAX_SUGGEST_LEN: usize = 64;

/// The candidate with the smallest edit distance to `name` (ties go to
/// the alphabetically first), with that distance.
pub fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<(usize, &'a str)> {
    if name.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let mut best: Option<(usize, &'a str)> = None;
    for key in candidates {
        let d = edit_distance(name, key);
        if best.is_none_or(|(bd, bk)| d < bd || (d == bd && key < bk)) {
            best = Some((d, key));
        }
    }
    best
}

fn edit_distance(a: &str, b: &str) -> usize {
    // Optimal string alignment distance: insert, delete, substitute, swap.
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The choice a mistyped word most likely meant: the closest by edit
/// distance, when at most a third of the word differs (2 letters for
/// words of 4 to 8 letters, 1 for shorter ones). Numbers get none: '9'
/// is not a typo of '2'.
pub fn near_choice<'a>(word: &str, choices: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.trim().to_ascii_lowercase();
    let len = w.chars().count();
    if w.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let limit = if len < 4 { 1 } else { (len / 3).max(2) };
    closest(&w, choices)
        .filter(|(d, _)| *d > 0 && *d <= limit && *d < len)
        .map(|(_, c)| c)
}

/// How many characters of a value an error line quotes at most.
pub const EXCERPT_CHARS: usize = 80;

/// `s` as an error line quotes it: whole when it has at most
/// [`EXCERPT_CHARS`] characters, else its start, "…" and its length.
pub fn excerpt(s: &str) -> std::borrow::Cow<'_, str> {
    excerpt_to(s, EXCERPT_CHARS)
}

fn excerpt_to(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = s.chars().count();
    if n <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let head: String = s.chars().take(max.saturating_sub(20).max(8)).collect();
    std::borrow::Cow::Owned(format!("{head}… ({} bytes)", s.len()))
}

/// `msg` with every occurrence of the (long) value `v` shortened to its
/// [`excerpt`].
pub fn clip_value(msg: String, v: &str) -> String {
    if v.chars().count() <= EXCERPT_CHARS {
        return msg;
    }
    msg.replace(v, &excerpt(v))
}

/// `line` with every single-quoted part longer than `max` characters
/// shortened (a guard for lines that quote whatever they were given).
pub fn clip_quoted(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if line.len() <= max {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len().min(4096));
    let mut rest = line;
    let mut changed = false;
    while let Some(open) = rest.find('\'') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find('\'') else {
            break;
        };
        let inner = &rest[..close];
        let cut = excerpt_to(inner, max);
        changed |= matches!(cut, std::borrow::Cow::Owned(_));
        out.push_str(&cut);
        out.push('\'');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}

/// Parses one of a fixed set of words, with an error listing them.
pub fn parse_choice<T: Copy>(s: &str, choices: &[(&str, T)]) -> Result<T, JobError> {
    let t = s.trim();
    choices
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(t))
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            let mut msg = format!("'{s}' is not one of: {}", names.join(", "));
            if let Some(near) = near_choice(t, names.iter().copied()) {
                msg.push_str(&format!(" (did you mean '{near}'?)"));
            }
            msg.into()
        })
}

/// Formats a byte count the way fio does in its text reports: `4096B`,
/// `16.0MiB`, with the unit base chosen by `kb_base`.
pub fn human_bytes(n: u64, base1000: bool) -> String {
    let (base, units): (f64, [&str; 6]) = if base1000 {
        (1000.0, ["B", "kB", "MB", "GB", "TB", "PB"])
    } else {
        (1024.0, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
    };
    let mut v = n as f64;
    let mut i = 0;
    while v >= base && i < units.len() - 1 && (v / base).fract() == 0.0 {
        v /= base;
        i += 1;
    }
    format!("{}{}", v as u64, units[i])
}

/// A NUMA node list (`numa_cpu_nodes`, `numa_mem_policy`): `all`, or
/// numbers and ranges. Whether the nodes exist is checked before the run,
/// so a job file for a larger machine still parses.
pub fn parse_nodes(v: &str) -> Result<super::spec::Nodes, JobError> {
    if v.trim() == "all" {
        return Ok(super::spec::Nodes::All);
    }
    parse_index_list(v, "NUMA node").map(super::spec::Nodes::List)
}

/// A list of numbers and ranges such as `0,2-3` (CPUs, NUMA nodes, and
/// the kernel's own lists in sysfs), sorted, without repeats; `what`
/// names the items in errors.
pub fn parse_index_list(v: &str, what: &str) -> Result<Vec<usize>, JobError> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{part}' is not a {what} number or range"))
        };
        let (a, b) = (num(a)?, num(b)?);
        if a > b || b >= 4096 {
            return Err(format!("'{part}' is not a valid {what} range").into());
        }
        out.extend(a..=b);
    }
    if out.is_empty() {
        return Err(format!("'{v}' selects no {what}s").into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base() {
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("4K", 1024), Ok(4096));
        assert_eq!(parse_size("4kb", 1024), Ok(4096));
        assert_eq!(parse_size("4KiB", 1024), Ok(4000));
        assert_eq!(parse_size("1mi", 1024), Ok(1_000_000));
        assert_eq!(parse_size("1k", 1000), Ok(1000));
        assert_eq!(parse_size("1ki", 1000), Ok(1024));
        assert_eq!(parse_size("1t", 1024), Ok(1 << 40));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
        assert_eq!(parse_size("4096b", 1024), Ok(4096));
        assert_eq!(parse_size("1.5g", 1024), Ok(1_610_612_736));
        assert!(parse_size("4q", 1024).is_err());
        assert!(parse_size("4k5", 1024).is_err());
        assert!(parse_size("-4k", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
    }

    #[test]
    fn arithmetic_in_sizes() {
        assert_eq!(parse_size("((1+1)*4k)", 1024), Ok(8192));
        assert_eq!(parse_size("(2^10)", 1024), Ok(1024));
        assert!(parse_size("(1+", 1024).is_err());
    }

    #[test]
    fn sizes_are_exact_and_overflow_is_an_error() {
        assert_eq!(parse_size("16383p", 1024), Ok(16383 << 50));
        assert_eq!(parse_size("18446744073709551615", 1024), Ok(u64::MAX));
        assert_eq!(parse_size("0xffffffffffffffff", 1024), Ok(u64::MAX));
        assert_eq!(parse_size("(2^64-1)", 1024), Ok(u64::MAX));
        assert_eq!(parse_size("(2^53+1)", 1024), Ok((1 << 53) + 1));
        assert_eq!(parse_size("9007199254740993", 1024), Ok((1 << 53) + 1));
        assert_eq!(parse_size("0.5k", 1024), Ok(512));
        assert_eq!(parse_size("1.0000000000000000000001k", 1024), Ok(1024));
        assert_eq!(parse_size("(1.5*1k)", 1024), Ok(1536));
        for v in [
            "16384p",
            "16e",
            "18446744073709551616",
            "0x10000000000000000",
            "0x1ffffffffffffffffffffffffffffffffffff",
            "99999999999999999999999999999999999999999999999999k",
            "20000000000000000000.5",
            "(2^64)",
            "(2^63*2)",
            "(16384*1p)",
            "(2^200)",
            "(9999999999999999999999999999999999999.0*99999999)",
        ] {
            assert_eq!(
                parse_size(v, 1024),
                Err(format!("'{v}' is too large").into()),
                "{v}"
            );
        }
        assert_eq!(
            parse_size_range("4k-99999999999999999999k", 1024),
            Err("'99999999999999999999k' is too large".into())
        );
        assert!(parse_size("(0-1)", 1024)
            .unwrap_err()
            .message
            .contains("negative"));
    }

    #[test]
    fn whole_numbers_keep_their_range() {
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_int("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_int("0x7fffffffffffffff"), Ok(i64::MAX));
        assert_eq!(parse_int("(2^62)"), Ok(1 << 62));
        for v in [
            "9223372036854775808",
            "0x8000000000000000",
            "(2^63)",
            "(2^70)",
            "(2.0^70)",
        ] {
            assert_eq!(
                parse_int(v),
                Err(format!("'{v}' is too large").into()),
                "{v}"
            );
        }
        assert_eq!(
            parse_int("(-(2^70))"),
            Err("'(-(2^70))' is too small".into())
        );
        assert_eq!(
            parse_int("-9223372036854775809"),
            Err("'-9223372036854775809' is too small".into())
        );
        assert!(parse_int("12x").is_err());
        assert!(parse_int("--1").is_err());
        assert!(parse_int("+-1").is_err());
        assert_eq!(parse_int("+5"), Ok(5));
    }

    #[test]
    fn times_over_100_years_are_errors() {
        assert_eq!(parse_time_us("36500d", TimeUnit::Sec), Ok(MAX_TIME_US));
        assert_eq!(parse_time_us("1500ns", TimeUnit::Sec), Ok(2));
        assert_eq!(parse_time_us("(1500ns+1us)", TimeUnit::Sec), Ok(3));
        assert_eq!(parse_time_us("(1s+500ms)", TimeUnit::Sec), Ok(1_500_000));
        for v in [
            "36501d",
            "1000000d",
            "99999999999999999999",
            "9999999999999999",
            "(2^60)",
            "(2^70)",
            "(99999999999999999999d)",
        ] {
            assert_eq!(
                parse_time_us(v, TimeUnit::Sec),
                Err(format!("'{v}' is too long (at most 100 years)").into()),
                "{v}"
            );
        }
        assert!(parse_time_us("-1", TimeUnit::Sec)
            .unwrap_err()
            .message
            .contains("negative"));
        assert!(parse_time_us("(0-1s)", TimeUnit::Sec)
            .unwrap_err()
            .message
            .contains("negative"));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_us("10", TimeUnit::Sec), Ok(10_000_000));
        assert_eq!(parse_time_us("1m", TimeUnit::Sec), Ok(60_000_000));
        assert_eq!(parse_time_us("500ms", TimeUnit::Sec), Ok(500_000));
        assert_eq!(parse_time_us("100us", TimeUnit::Sec), Ok(100));
        assert_eq!(parse_time_us("1h", TimeUnit::Sec), Ok(3_600_000_000));
        assert_eq!(parse_time_us("1d", TimeUnit::Sec), Ok(86_400_000_000));
        assert_eq!(parse_time_us("10", TimeUnit::Usec), Ok(10));
        assert_eq!(parse_time_us("10", TimeUnit::Msec), Ok(10_000));
        assert_eq!(parse_time_us("5sec", TimeUnit::Sec), Ok(5_000_000));
        assert_eq!(parse_time_us("(1000*2)", TimeUnit::Sec), Ok(2000));
        assert!(parse_time_us("10x", TimeUnit::Sec).is_err());
    }

    #[test]
    fn ranges_and_splits() {
        assert_eq!(parse_size_range("4k-16k", 1024), Ok((4096, 16384)));
        assert_eq!(parse_size_range("16k:4k", 1024), Ok((4096, 16384)));
        assert_eq!(parse_size_range("8k", 1024), Ok((8192, 8192)));
        assert!(parse_size_range("4k-8k-16k", 1024).is_err());
        assert!(parse_size_range("4k-", 1024).is_err());
        let s = parse_split("4k/50:64k/", 1024).unwrap();
        assert_eq!(s[1].perc, 50.0);
        assert!(parse_split("4k/60:8k/60", 1024).is_err());
        assert!(parse_split("4k/50:8k/20", 1024).is_err());
        assert_eq!(
            split_per_ddir("4k,8k").unwrap(),
            [Some("4k"), Some("8k"), Some("4k")]
        );
        assert_eq!(split_per_ddir(",8k").unwrap(), [None, Some("8k"), None]);
    }

    #[test]
    fn bools_and_percents() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert_eq!(parse_bool("yes"), Ok(true));
        assert_eq!(parse_bool("0x1"), Ok(true));
        assert!(parse_bool("maybe").is_err());
        assert!(parse_bool("2").is_err());
        assert!(parse_bool("-1").is_err());
        assert!(parse_percent("10%%").is_err());
        assert_eq!(parse_percent("(100/4)"), Ok(25.0));
        assert_eq!(parse_percent("(10*2)%"), Ok(20.0));
        assert_eq!(parse_percent("50%"), Ok(50.0));
        assert!(parse_percent("150").is_err());
    }

    #[test]
    fn misspelt_choices_get_the_nearest_word() {
        let words = ["read", "write", "randread", "randwrite", "rw"];
        assert_eq!(
            near_choice("randwrte", words.iter().copied()),
            Some("randwrite")
        );
        assert_eq!(near_choice("RANDREAD ", words.iter().copied()), None);
        assert_eq!(near_choice("sideways", words.iter().copied()), None);
        assert_eq!(near_choice("9", ["2", "3"].iter().copied()), None);
        assert_eq!(near_choice("x", ["0", "1"].iter().copied()), None);
        assert_eq!(
            parse_choice("randwrte", &[("read", 0), ("randwrite", 1)]),
            Err("'randwrte' is not one of: read, randwrite (did you mean 'randwrite'?)".into())
        );
        assert_eq!(
            parse_choice("up", &[("read", 0), ("randwrite", 1)]),
            Err("'up' is not one of: read, randwrite".into())
        );
    }

    #[test]
    fn long_values_are_quoted_in_part() {
        let v = "a".repeat(5000);
        let e = excerpt(&v);
        assert!(e.chars().count() <= EXCERPT_CHARS, "{e}");
        assert!(e.ends_with("… (5000 bytes)"), "{e}");
        assert_eq!(excerpt("4k"), "4k");
        let msg = clip_value(format!("option 'bs': '{v}' is not a size"), &v);
        assert!(msg.len() < 120, "{msg}");
        let line = format!("cannot access '{v}': file name too long, 'short'");
        let c = clip_quoted(&line, 256);
        assert!(c.len() < 300 && c.ends_with("too long, 'short'"), "{c}");
        assert_eq!(clip_quoted("a 'b' c", 256), "a 'b' c");
    }
}
