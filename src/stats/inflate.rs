//! Compressed logs back to text (`iomark --inflate-log=FILE.fz`): the
//! `.fz` files that `log_store_compressed=1` makes, by iomark (`logs`)
//! or by fio, are zlib streams one after another, each holding binary
//! samples; this turns them into the lines the uncompressed log holds.
//!
//! A sample is, little-endian: time (u64, ms), value (i64), direction
//! (u32; bit 31 set when an offset follows, bit 30 when the priority is
//! the full value), priority (u16), two bytes of padding, block size
//! (u64), and the offset (u64) with bit 31. The first sample's flags
//! hold for the whole file, as fio reads it.
//!
//! Bounded memory whatever the file inflates to: the output is made and
//! handed on a piece at a time.

/// Bit 31 of the direction word: an offset follows.
const OFFSET_FLAG: u32 = 1 << 31;
/// Bit 30: the priority column is the full priority value.
const PRIO_FLAG: u32 = 1 << 30;
const BASE_SAMPLE: usize = 32;
const OFFSET_SAMPLE: usize = 40;
/// Inflated bytes handled at a time.
const CHUNK: usize = 1 << 20;

/// The layout of a file's samples, from its first one.
/// What is wrong with a compressed log (one line, for "cannot inflate
/// FILE: ...").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadLog(pub String);

impl From<String> for BadLog {
    fn from(why: String) -> Self {
        BadLog(why)
    }
}

#[derive(Clone, Copy, Debug)]
struct Layout {
    offset: bool,
    prio_hex: bool,
}

impl Layout {
    fn of(first: &[u8]) -> Result<Layout, BadLog> {
        let ddir = u32::from_le_bytes(first[16..20].try_into().expect("4 bytes"));
        if ddir & !(OFFSET_FLAG | PRIO_FLAG) > 2 {
            return Err(format!(
                "its first sample has direction word {ddir:#x}: not a bandwidth, IOPS or latency \
                 log of fio's format (histogram logs are not compressed by iomark)"
            )
            .into());
        }
        Ok(Layout {
            offset: ddir & OFFSET_FLAG != 0,
            prio_hex: ddir & PRIO_FLAG != 0,
        })
    }

    fn size(self) -> usize {
        if self.offset {
            OFFSET_SAMPLE
        } else {
            BASE_SAMPLE
        }
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Appends the text line of one sample.
fn line(out: &mut String, s: &[u8], layout: Layout) {
    use std::fmt::Write;
    let time = u64_at(s, 0);
    let value = u64_at(s, 8) as i64;
    let ddir =
        u32::from_le_bytes(s[16..20].try_into().expect("4 bytes")) & !(OFFSET_FLAG | PRIO_FLAG);
    let prio = u16::from_le_bytes([s[20], s[21]]);
    let bs = u64_at(s, 24);
    let _ = write!(out, "{time}, {value}, {ddir}, {bs}, ");
    if layout.offset {
        let _ = write!(out, "{}, ", u64_at(s, 32));
    }
    let _ = if layout.prio_hex {
        writeln!(out, "0x{prio:04x}")
    } else {
        // Without log_prio the column says whether the I/O had the
        // real-time class (class 1 in the top bits of the stored value).
        writeln!(out, "{}", u16::from(prio >> 13 == 1))
    };
}

/// Inflates `data` (a whole `.fz` file), handing the text to `emit` a
/// piece at a time; `emit` returns false to stop (its output failed).
/// Errors say what is wrong with the file.
pub fn inflate(data: &[u8], emit: &mut dyn FnMut(&str) -> bool) -> Result<(), BadLog> {
    let mut rest = data;
    let mut layout: Option<Layout> = None;
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    let mut text = String::new();
    let mut streams = 0usize;
    while !rest.is_empty() {
        let mut z = flate2::Decompress::new(true);
        loop {
            let (in0, out0) = (z.total_in(), z.total_out());
            let status = z
                .decompress(
                    &rest[in0 as usize..],
                    &mut buf,
                    flate2::FlushDecompress::None,
                )
                .map_err(|_| {
                    format!(
                        "it is not a compressed log (bad zlib data in stream {}, after byte {})",
                        streams + 1,
                        data.len() - rest.len() + in0 as usize
                    )
                })?;
            let made = (z.total_out() - out0) as usize;
            pending.extend_from_slice(&buf[..made]);
            if layout.is_none() && pending.len() >= BASE_SAMPLE {
                layout = Some(Layout::of(&pending)?);
            }
            if let Some(l) = layout {
                let whole = pending.len() / l.size() * l.size();
                text.clear();
                for s in pending[..whole].chunks_exact(l.size()) {
                    line(&mut text, s, l);
                }
                pending.drain(..whole);
                if !text.is_empty() && !emit(&text) {
                    return Ok(());
                }
            }
            if status == flate2::Status::StreamEnd {
                break;
            }
            if z.total_in() == in0 && made == 0 {
                return Err(format!(
                    "it ends in the middle of zlib stream {} (a truncated file?)",
                    streams + 1
                )
                .into());
            }
        }
        streams += 1;
        rest = &rest[z.total_in() as usize..];
    }
    if !pending.is_empty() {
        return Err(format!(
            "it ends with {} bytes that are not a whole sample",
            pending.len()
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::logs::{LineFormat, LogFile};

    /// What iomark writes compressed inflates to what it writes plain.
    #[test]
    fn inflates_what_the_log_writer_compresses() {
        let dir = tempfile::tempdir().unwrap();
        // (offset, log_prio, the I/Os' priority values).
        for (offset, prio_hex, prios) in [
            (false, false, [0u16, 0]),
            (true, false, [0x2003, 0]),
            (true, false, [0x4005, 0x2000]),
            (true, true, [0x4005, 0x4005]),
            (false, true, [0x2001, 0x6007]),
        ] {
            let fmt = LineFormat {
                offset,
                prio_hex,
                time_base_ms: 0,
            };
            let (plain, packed) = (dir.path().join("p.log"), dir.path().join("p.log.fz"));
            for (path, compressed) in [(&plain, false), (&packed, true)] {
                let mut f = LogFile::open_as(path.clone(), false, compressed).unwrap();
                // Enough samples for several zlib streams (each flush is one).
                for i in 0..40_000u64 {
                    let prio = prios[(i % 2) as usize];
                    f.line_at(i, i * 7 + 1, (i % 3) as usize, 4096, i * 4096, prio, &fmt);
                }
                f.finish().unwrap();
            }
            let data = std::fs::read(&packed).unwrap();
            let mut out = String::new();
            inflate(&data, &mut |t| {
                out.push_str(t);
                true
            })
            .unwrap();
            assert_eq!(out, std::fs::read_to_string(&plain).unwrap(), "{fmt:?}");
        }
    }

    #[test]
    fn an_empty_log_is_no_lines_and_garbage_is_an_error() {
        let mut z = flate2::Compress::new(flate2::Compression::default(), true);
        let mut empty = Vec::with_capacity(64);
        z.compress_vec(&[], &mut empty, flate2::FlushCompress::Finish)
            .unwrap();
        let mut n = 0;
        inflate(&empty, &mut |_| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 0);
        let e = inflate(b"0, 1, 0, 4096, 0\n", &mut |_| true).unwrap_err();
        assert!(e.0.starts_with("it is not a compressed log"), "{e}");
        let mut cut = Vec::with_capacity(256);
        let mut z = flate2::Compress::new(flate2::Compression::default(), true);
        z.compress_vec(&[0u8; 64], &mut cut, flate2::FlushCompress::Finish)
            .unwrap();
        cut.truncate(cut.len() - 3);
        let e = inflate(&cut, &mut |_| true).unwrap_err();
        assert!(e.0.contains("ends in the middle"), "{e}");
    }
}
