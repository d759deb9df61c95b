//! `verify_pattern`: the `buffer_pattern` syntax plus `%o`, which stands
//! for the 8-byte little-endian offset of the block being written. The
//! pattern repeats from the first byte of each block; filling and
//! comparing use a stack copy with the offset put in, so neither
//! allocates.

use crate::job::spec::VerifyPattern;
use crate::workload::buffers::{fill_pattern, parse_pattern, MAX_PATTERN};

/// Bytes `%o` takes in the pattern.
const OFFSET_BYTES: usize = 8;

/// Parses a `verify_pattern` value.
pub fn parse(v: &str) -> Result<VerifyPattern, String> {
    let mut out = VerifyPattern::default();
    let b = v.as_bytes();
    let (mut seg, mut i, mut quote) = (0, 0, None);
    while i < b.len() {
        match (quote, b[i]) {
            (None, q @ (b'"' | b'\'')) => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            (None, b'%') if b.get(i + 1) == Some(&b'o') => {
                push_segment(&mut out, &v[seg..i], v)?;
                out.offset_at.push(out.bytes.len());
                out.bytes.extend_from_slice(&[0; OFFSET_BYTES]);
                i += 2;
                seg = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    push_segment(&mut out, &v[seg..], v)?;
    if out.bytes.is_empty() {
        return Err("the pattern is empty".into());
    }
    if out.bytes.len() > MAX_PATTERN {
        return Err(format!("'{v}' is longer than {MAX_PATTERN} bytes"));
    }
    Ok(out)
}

fn push_segment(out: &mut VerifyPattern, seg: &str, whole: &str) -> Result<(), String> {
    if seg.is_empty() {
        return Ok(());
    }
    let bytes = parse_pattern(seg).map_err(|e| format!("{e} (in '{whole}')"))?;
    out.bytes.extend_from_slice(&bytes);
    Ok(())
}

/// The pattern with `offset` put in, on the stack.
struct Instance {
    bytes: [u8; MAX_PATTERN],
    len: usize,
}

fn instance(p: &VerifyPattern, offset: u64) -> Instance {
    let mut i = Instance {
        bytes: [0; MAX_PATTERN],
        len: p.bytes.len(),
    };
    i.bytes[..i.len].copy_from_slice(&p.bytes);
    for &at in &p.offset_at {
        i.bytes[at..at + OFFSET_BYTES].copy_from_slice(&offset.to_le_bytes());
    }
    i
}

/// Fills a block written at `offset` with the pattern.
pub fn fill(p: &VerifyPattern, buf: &mut [u8], offset: u64) {
    let i = instance(p, offset);
    fill_pattern(buf, &i.bytes[..i.len]);
}

/// Compares `data`, which starts `phase` bytes into a block written at
/// `offset`, with the pattern; returns the first differing position in
/// `data` with the expected and the actual byte.
pub fn compare(
    p: &VerifyPattern,
    data: &[u8],
    phase: usize,
    offset: u64,
) -> Option<(usize, u8, u8)> {
    let i = instance(p, offset);
    let pat = &i.bytes[..i.len];
    let mut k = phase % pat.len();
    for (at, &got) in data.iter().enumerate() {
        if got != pat[k] {
            return Some((at, pat[k], got));
        }
        k += 1;
        if k == pat.len() {
            k = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_go_where_percent_o_stands() {
        let p = parse("0xff%o\"abcd\"-12").unwrap();
        assert_eq!(p.bytes.len(), 1 + 8 + 4 + 4);
        assert_eq!(p.offset_at, [1]);
        let mut buf = [0u8; 40];
        fill(&p, &mut buf, 0x1000);
        assert_eq!(&buf[..9], &[0xff, 0, 0x10, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&buf[9..13], b"abcd");
        assert_eq!(&buf[17..19], &[0xff, 0]);
        assert_eq!(compare(&p, &buf[5..], 5, 0x1000), None);
        assert_eq!(compare(&p, &buf, 0, 0x2000), Some((2, 0x20, 0x10)));
        assert_eq!(parse("%o").unwrap().offset_at, [0]);
        // Inside quotes, %o is text.
        assert_eq!(parse("\"%o\"").unwrap().bytes, b"%o");
    }

    #[test]
    fn bad_patterns_are_rejected() {
        for bad in ["", "xyz", "%o%q", "0x", "\"open"] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
        let long = format!("0x{}%o", "ab".repeat(510));
        assert!(parse(&long).is_err());
    }
}
