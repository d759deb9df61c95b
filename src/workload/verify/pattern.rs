//! `verify_pattern` (parsed by `job::pattern`): the `buffer_pattern`
//! syntax plus `%o`, which stands for the 8-byte little-endian offset of
//! the block being written. The pattern repeats from the first byte of each block; filling and
//! comparing use a stack copy with the offset put in, so neither
//! allocates.

#[cfg(test)]
use crate::job::pattern::parse_verify_pattern as parse;
use crate::job::pattern::OFFSET_BYTES;
use crate::job::spec::VerifyPattern;
use crate::workload::buffers::{fill_pattern, MAX_PATTERN};

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
