//! Pattern values: `buffer_pattern` (hex numbers, "strings", 'file
//! names' and decimal integers, side by side) and `verify_pattern` (the
//! same, plus `%o` for the block's offset). Parsing only: filling and
//! checking buffers is `workload`'s.

use super::spec::VerifyPattern;
use crate::job::JobError;

/// Longest pattern, in bytes (a file is cut to fit).
pub const MAX_PATTERN: usize = 512;

/// Bytes `%o` takes in a verify pattern.
pub const OFFSET_BYTES: usize = 8;

/// Parses a `buffer_pattern` value: any sequence of `0x` hex numbers,
/// `"strings"`, `'file names'` (the file's bytes) and decimal integers
/// (little-endian; negative numbers take four bytes, others the fewest
/// bytes that hold them), written next to each other without spaces.
pub fn parse_pattern(v: &str) -> Result<Vec<u8>, JobError> {
    let mut out = Vec::new();
    let b = v.as_bytes();
    let mut i = 0;
    if b.is_empty() {
        return Err("the pattern is empty".into());
    }
    while i < b.len() {
        let room = MAX_PATTERN - out.len();
        if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
            let start = i + 2;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_hexdigit() {
                end += 1;
            }
            if end == start {
                return Err(format!("'{v}': '0x' must be followed by hex digits").into());
            }
            let digits = &v[start..end];
            let padded;
            let digits = if digits.len() % 2 == 1 {
                padded = format!("0{digits}");
                padded.as_str()
            } else {
                digits
            };
            let bytes: Vec<u8> = (0..digits.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&digits[k..k + 2], 16).unwrap_or(0))
                .collect();
            push_limited(&mut out, &bytes, v)?;
            i = end;
        } else if b[i] == b'"' {
            let Some(len) = v[i + 1..].find('"') else {
                return Err(format!("'{v}': a string is missing its closing '\"'").into());
            };
            push_limited(&mut out, &b[i + 1..i + 1 + len], v)?;
            i += len + 2;
        } else if b[i] == b'\'' {
            let Some(len) = v[i + 1..].find('\'') else {
                return Err(format!("'{v}': a file name is missing its closing \"'\"").into());
            };
            let name = &v[i + 1..i + 1 + len];
            let data = read_pattern_file(name, room.max(1))
                .map_err(|why| format!("cannot read pattern file '{name}': {why}"))?;
            if data.is_empty() {
                return Err(format!("pattern file '{name}' is empty").into());
            }
            // A file longer than the room left is cut, as documented.
            out.extend_from_slice(&data[..data.len().min(room)]);
            i += len + 2;
        } else if b[i] == b'-' || b[i].is_ascii_digit() {
            let start = i;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let text = &v[start..i];
            let n: i32 = text
                .parse()
                .map_err(|_| format!("'{v}': '{text}' is not a 32-bit integer"))?;
            let bytes = n.to_le_bytes();
            let keep = if n < 0 {
                4
            } else {
                (4 - (n.leading_zeros() as usize) / 8).max(1)
            };
            push_limited(&mut out, &bytes[..keep], v)?;
        } else {
            return Err(format!(
                "'{v}': expected 0x<hex>, \"text\", 'file' or a decimal number at '{}'",
                &v[i..]
            )
            .into());
        }
    }
    if out.is_empty() {
        return Err("the pattern is empty".into());
    }
    Ok(out)
}

/// The first `limit` bytes of a pattern file. Only that much is read, so
/// a device such as /dev/urandom works and /dev/zero cannot fill memory;
/// the file is opened without blocking, and FIFOs, sockets and
/// directories are refused.
fn read_pattern_file(name: &str, limit: usize) -> Result<Vec<u8>, JobError> {
    use crate::sys::ext::{FileTypeExt, OpenOptionsExt};
    use std::io::Read;
    let reason = |e: std::io::Error| super::jobfile::io_reason(&e);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(crate::sys::O_NONBLOCK | crate::sys::O_CLOEXEC)
        .open(name)
        .map_err(reason)?;
    let ft = file.metadata().map_err(reason)?.file_type();
    if ft.is_dir() {
        return Err("is a directory".into());
    }
    if ft.is_fifo() || ft.is_socket() {
        return Err("is a pipe or socket, not a file or device".into());
    }
    let mut data = Vec::with_capacity(limit);
    file.take(limit as u64)
        .read_to_end(&mut data)
        .map_err(reason)?;
    Ok(data)
}

fn push_limited(out: &mut Vec<u8>, bytes: &[u8], v: &str) -> Result<(), JobError> {
    if out.len() + bytes.len() > MAX_PATTERN {
        return Err(format!("'{v}' is longer than {MAX_PATTERN} bytes").into());
    }
    out.extend_from_slice(bytes);
    Ok(())
}

/// Parses a `verify_pattern` value.
pub fn parse_verify_pattern(v: &str) -> Result<VerifyPattern, JobError> {
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
        return Err(format!("'{v}' is longer than {MAX_PATTERN} bytes").into());
    }
    Ok(out)
}

fn push_segment(out: &mut VerifyPattern, seg: &str, whole: &str) -> Result<(), JobError> {
    if seg.is_empty() {
        return Ok(());
    }
    let bytes = parse_pattern(seg).map_err(|e| format!("{e} (in '{whole}')"))?;
    out.bytes.extend_from_slice(&bytes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_syntax() {
        assert_eq!(
            parse_pattern("0xdeadbeef").unwrap(),
            [0xde, 0xad, 0xbe, 0xef]
        );
        assert_eq!(parse_pattern("0x123").unwrap(), [0x01, 0x23]);
        assert_eq!(parse_pattern("\"abcd\"").unwrap(), b"abcd");
        assert_eq!(parse_pattern("12").unwrap(), [12]);
        assert_eq!(parse_pattern("300").unwrap(), [0x2c, 0x01]);
        assert_eq!(parse_pattern("0").unwrap(), [0]);
        assert_eq!(parse_pattern("-12").unwrap(), [0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(
            parse_pattern("0xdeadface\"abcd\"-12").unwrap(),
            [0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff]
        );
        for bad in [
            "",
            "abc",
            "0x",
            "0xzz",
            "\"open",
            "\"a\" 0x01",
            "2147483648",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_pattern(&format!("0x{}", "ab".repeat(513))).is_err());
    }

    #[test]
    fn pattern_from_file_is_cut_to_fit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p");
        std::fs::write(&f, vec![7u8; 1000]).unwrap();
        let p = parse_pattern(&format!("0x01'{}'", f.display())).unwrap();
        assert_eq!(p.len(), MAX_PATTERN);
        assert_eq!(&p[..2], &[1, 7]);
        assert!(parse_pattern("'/nonexistent/iomark'").is_err());
    }
}
