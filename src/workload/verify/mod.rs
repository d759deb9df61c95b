//! Verification data: what a verified write puts in its block and how a
//! block read back is checked (`verify`, `verify_interval`,
//! `verify_offset`, `verify_pattern`).
//!
//! A block is cut into intervals (`verify_interval`, else the whole
//! block). Each interval starts with a 40-byte header, all fields
//! little-endian — magic `0xacca` (u16), method number (u16), interval
//! length (u32), random seed (u64), offset of the interval in the file
//! (u64), write time since the job started (u32 seconds, u32
//! nanoseconds), job number (u16), write number (u16), and a crc32c of
//! the 36 bytes before it (u32) — followed by the method's checksum of the
//! rest of the interval. This is the layout fio 3.33 writes, so files
//! written by either tool check with the other (see `checksum` for the
//! exceptions). The data is pseudo-random from the seed, or
//! `verify_pattern`. With `verify_offset`, the header and checksum swap
//! places with the data that far into the interval.
//!
//! `verify=pattern` writes only the pattern (no header) and compares it;
//! `verify=meta` checks the header (and the pattern, when one is set).
//!
//! Nothing here does I/O or allocates, except for describing a failure
//! and building the expected contents for `verify_dump`.

pub mod checksum;
pub mod history;
pub mod pattern;

use std::fmt;

use super::buffers::{fill_random, mix};
use super::rng::Rng;
use crate::job::spec::{JobSpec, VerifyKind, VerifyPattern};
use checksum::MAX_AREA;

pub const MAGIC: u16 = 0xacca;
/// Bytes of the header before the checksum area.
pub const HEADER: usize = 40;
/// Offset of the header's own crc.
const HEADER_CRC_AT: usize = 36;

/// Checks the verify options of a job; returns a one-line reason.
pub fn check_job(spec: &JobSpec) -> Result<(), super::WorkloadError> {
    let v = &spec.verify;
    // Without a method, verify_only has nothing to check; fio then counts
    // the job's writes as done without issuing them.
    if v.verify_only && !v.enabled() {
        let what = if spec.io.rw.has(crate::job::spec::Ddir::Write) {
            "fio would count this job's writes as done without issuing them and check nothing"
        } else {
            "fio would just read"
        };
        return Err(super::WorkloadError::Options(format!(
            "verify_only=1 needs verify= set to the method the data was written with \
             (e.g. verify=crc32c): without one there is nothing to verify ({what})"
        )));
    }
    // verify=null checks nothing, so the layout options do not matter.
    if !v.enabled() || v.verify == VerifyKind::Null {
        return Ok(());
    }
    if v.verify == VerifyKind::Pattern && v.verify_pattern.is_empty() {
        return Err(super::WorkloadError::Options(
            "verify=pattern needs verify_pattern".into(),
        ));
    }
    if v.verify_only && spec.time.time_based {
        return Err(super::WorkloadError::Options(
            "verify_only cannot be used with time_based".into(),
        ));
    }
    let hdr = header_size(v.verify);
    if hdr == 0 {
        if v.verify_offset > 0 {
            return Err(super::WorkloadError::Options(format!(
                "verify_offset has no header to move with verify={}",
                checksum::name(v.verify)
            )));
        }
        return Ok(());
    }
    let min_bs = spec.io.bs.iter().map(|b| b.min()).min().unwrap_or(4096);
    let interval = if v.verify_interval > 0 {
        v.verify_interval.min(min_bs)
    } else {
        min_bs
    };
    if interval <= hdr as u64 {
        return Err(super::WorkloadError::Options(format!(
            "verify={} needs blocks (or verify_interval) larger than its {hdr}-byte header, not {interval} bytes",
            checksum::name(v.verify)
        )));
    }
    if v.verify_offset > 0 {
        if v.verify_offset < hdr as u64 {
            return Err(super::WorkloadError::Options(format!(
                "verify_offset must be at least the {hdr}-byte header of verify={}",
                checksum::name(v.verify)
            )));
        }
        if v.verify_offset + hdr as u64 > interval {
            return Err(super::WorkloadError::Options(format!(
                "verify_offset={} leaves no room for the {hdr}-byte header in {interval}-byte blocks",
                v.verify_offset
            )));
        }
    }
    Ok(())
}

/// Warnings for a verifying job: options it sets that verification
/// overrides (write contents come from the verifier), and verify_async.
pub fn notes(spec: &JobSpec) -> Vec<String> {
    let v = &spec.verify;
    if !v.enabled() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let stamps = v.verify != VerifyKind::Null && spec.io.rw.has(crate::job::spec::Ddir::Write);
    let content = [
        "zero_buffers",
        "refill_buffers",
        "scramble_buffers",
        "buffer_pattern",
        "buffer_compress_percentage",
        "buffer_compress_chunk",
        "dedupe_percentage",
        "dedupe_mode",
        "dedupe_working_set_percentage",
    ];
    let ignored: Vec<&str> = content
        .iter()
        .copied()
        .filter(|n| stamps && spec.set_options.contains(n))
        .collect();
    if !ignored.is_empty() {
        out.push(format!(
            "job '{}': {} {} no effect with verify={}: writes carry verification data{}",
            spec.name,
            ignored.join(", "),
            if ignored.len() == 1 { "has" } else { "have" },
            checksum::name(v.verify),
            if v.verify_pattern.is_empty() {
                " (use verify_pattern for chosen contents)"
            } else {
                ""
            }
        ));
    }
    if v.verify_async > 0 {
        out.push(format!(
            "job '{}': verify_async={}: iomark checks blocks in the job's own thread (same checks, no extra threads)",
            spec.name, v.verify_async
        ));
    }
    out
}

/// Header plus checksum area of a method (0 without a header).
pub fn header_size(kind: VerifyKind) -> usize {
    checksum::layout(kind).map_or(0, |(_, area)| HEADER + area)
}

/// What the writer of a block stamped into it, besides its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub seed: u64,
    pub numberio: u64,
    /// Write time since the job started.
    pub time_ns: u64,
}

/// What a block read back must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Offset of the block in the file.
    pub offset: u64,
    /// The write that made it, when this run wrote it: its seed and
    /// number are checked too.
    pub write: Option<(u64, u16)>,
}

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Start and length of the interval within the block.
    pub at: usize,
    pub len: usize,
    pub problem: Problem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    Magic {
        got: u16,
    },
    Method {
        want: u16,
        got: u16,
    },
    Length {
        want: u32,
        got: u32,
    },
    Seed {
        want: u64,
        got: u64,
    },
    Offset {
        want: u64,
        got: u64,
    },
    NumberIo {
        want: u16,
        got: u16,
    },
    HeaderCrc {
        want: u32,
        got: u32,
    },
    Checksum {
        kind: VerifyKind,
        want: String,
        got: String,
    },
    /// At this position in the interval.
    Pattern {
        pos: usize,
        want: u8,
        got: u8,
    },
}

impl Problem {
    /// Whether the header itself is wrong (then the expected contents
    /// are unknown).
    pub fn in_header(&self) -> bool {
        !matches!(self, Problem::Checksum { .. } | Problem::Pattern { .. })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let method = |c: u16| {
            checksum::kind_of_code(c)
                .map_or_else(|| format!("unknown ({c})"), |k| checksum::name(k).into())
        };
        match self {
            Problem::Magic { got } => {
                write!(f, "bad header magic: expected {MAGIC:04x}, got {got:04x}")
            }
            Problem::Method { want, got } => {
                write!(
                    f,
                    "header names verify={} where {} was expected",
                    method(*got),
                    method(*want)
                )
            }
            Problem::Length { want, got } => {
                write!(f, "bad header length: expected {want}, got {got}")
            }
            Problem::Seed { want, got } => {
                write!(f, "bad header seed: expected {want:x}, got {got:x}")
            }
            Problem::Offset { want, got } => {
                write!(f, "bad header offset: expected {want}, got {got}")
            }
            Problem::NumberIo { want, got } => {
                write!(f, "bad header write number: expected {want}, got {got}")
            }
            Problem::HeaderCrc { want, got } => {
                write!(f, "bad header crc: stored {got:08x}, computed {want:08x}")
            }
            Problem::Checksum { kind, want, got } => {
                write!(
                    f,
                    "{} mismatch: expected {want}, got {got}",
                    checksum::name(*kind)
                )
            }
            Problem::Pattern { pos, want, got } => write!(
                f,
                "pattern mismatch {pos} bytes into the interval: expected {want:02x}, got {got:02x}"
            ),
        }
    }
}

/// Writes and checks one job's verification data.
#[derive(Clone, Debug)]
pub struct Verifier {
    kind: VerifyKind,
    /// Method number in the header; 0 without a header.
    code: u16,
    /// Header plus checksum area.
    hdr: usize,
    interval: usize,
    /// Where the header goes in each interval (0: at the start).
    hdr_at: usize,
    pattern: VerifyPattern,
    /// The job's number, stamped into headers.
    job: u16,
    salt: u64,
}

impl Verifier {
    /// `None` when the job does not verify. `job` is the job's number.
    pub fn new(spec: &JobSpec, job: u16, seed: u64) -> Option<Verifier> {
        let v = &spec.verify;
        if !v.enabled() {
            return None;
        }
        let code = checksum::layout(v.verify).map_or(0, |l| l.0);
        Some(Verifier {
            kind: v.verify,
            code,
            hdr: header_size(v.verify),
            interval: v.verify_interval as usize,
            hdr_at: v.verify_offset as usize,
            pattern: v.verify_pattern.clone(),
            job,
            salt: mix(seed ^ 0x7665_7269_6679),
        })
    }

    pub fn kind(&self) -> VerifyKind {
        self.kind
    }

    /// Whether writes carry verification data (`verify=null` writes
    /// ordinary buffers and checks nothing).
    pub fn stamps(&self) -> bool {
        self.kind != VerifyKind::Null
    }

    /// The seed of the job's `numberio`-th write (0 with a pattern).
    pub fn seed_for(&self, numberio: u64) -> u64 {
        if self.pattern.is_empty() {
            mix(self.salt ^ numberio.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        } else {
            0
        }
    }

    /// Intervals of a block of `len` bytes: (start, length). A last piece
    /// too short for a header joins the one before it.
    fn intervals(&self, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let step = if self.interval > 0 && self.interval < len {
            self.interval
        } else {
            len.max(1)
        };
        let (full, rest) = (len / step, len % step);
        let n = if rest > 0 && rest >= self.hdr.max(1) {
            full + 1
        } else {
            full
        };
        (0..n).map(move |i| {
            let at = i * step;
            (at, if i + 1 == n { len - at } else { step })
        })
    }

    /// Fills a block about to be written at `offset`.
    pub fn stamp(&self, buf: &mut [u8], offset: u64, s: Stamp) {
        if self.pattern.is_empty() {
            fill_random(buf, &mut Rng::new(s.seed));
        } else {
            pattern::fill(&self.pattern, buf, offset);
        }
        if self.hdr == 0 {
            return;
        }
        let mut area = [0u8; MAX_AREA];
        for (at, len) in self.intervals(buf.len()) {
            let iv = &mut buf[at..at + len];
            let h = &mut iv[..HEADER];
            h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
            h[2..4].copy_from_slice(&self.code.to_le_bytes());
            h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
            h[8..16].copy_from_slice(&s.seed.to_le_bytes());
            h[16..24].copy_from_slice(&(offset + at as u64).to_le_bytes());
            h[24..28].copy_from_slice(&((s.time_ns / 1_000_000_000) as u32).to_le_bytes());
            h[28..32].copy_from_slice(&((s.time_ns % 1_000_000_000) as u32).to_le_bytes());
            h[32..34].copy_from_slice(&self.job.to_le_bytes());
            h[34..36].copy_from_slice(&(s.numberio as u16).to_le_bytes());
            let crc = checksum::header_crc(&h[..HEADER_CRC_AT]);
            h[HEADER_CRC_AT..HEADER].copy_from_slice(&crc.to_le_bytes());
            let n = checksum::compute(self.kind, &iv[self.hdr..], &mut area);
            iv[HEADER..HEADER + n].copy_from_slice(&area[..n]);
            self.swap(iv);
        }
    }

    /// Swaps the header with the data at `verify_offset` (its own inverse).
    fn swap(&self, iv: &mut [u8]) {
        if self.hdr_at > 0 {
            let (a, b) = iv.split_at_mut(self.hdr_at);
            a[..self.hdr].swap_with_slice(&mut b[..self.hdr]);
        }
    }

    /// Checks a block read back. `on_fail` gets each failed interval and
    /// returns whether to go on checking the block's other intervals.
    /// The buffer is left with headers in place (as before `swap`).
    /// Returns the number of failed intervals.
    pub fn check(
        &self,
        buf: &mut [u8],
        exp: &Expect,
        mut on_fail: impl FnMut(&Mismatch) -> bool,
    ) -> u32 {
        if self.kind == VerifyKind::Null {
            return 0;
        }
        let mut failed = 0;
        for (at, len) in self.intervals(buf.len()) {
            let iv = &mut buf[at..at + len];
            let problem = if self.hdr == 0 {
                self.check_pattern(iv, at, 0, exp.offset)
            } else {
                self.swap(iv);
                self.check_interval(iv, at, exp)
            };
            if let Some(problem) = problem {
                failed += 1;
                if !on_fail(&Mismatch { at, len, problem }) {
                    break;
                }
            }
        }
        failed
    }

    fn check_pattern(&self, iv: &[u8], at: usize, skip: usize, offset: u64) -> Option<Problem> {
        let (pos, want, got) = pattern::compare(&self.pattern, &iv[skip..], at + skip, offset)?;
        Some(Problem::Pattern {
            pos: pos + skip,
            want,
            got,
        })
    }

    fn check_interval(&self, iv: &[u8], at: usize, exp: &Expect) -> Option<Problem> {
        let u16_at = |i: usize| u16::from_le_bytes([iv[i], iv[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(iv[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_le_bytes(iv[i..i + 8].try_into().unwrap_or([0; 8]));
        if u16_at(0) != MAGIC {
            return Some(Problem::Magic { got: u16_at(0) });
        }
        if u32_at(4) != iv.len() as u32 {
            return Some(Problem::Length {
                want: iv.len() as u32,
                got: u32_at(4),
            });
        }
        if let Some((seed, _)) = exp.write {
            if u64_at(8) != seed {
                return Some(Problem::Seed {
                    want: seed,
                    got: u64_at(8),
                });
            }
        }
        let want_off = exp.offset + at as u64;
        if u64_at(16) != want_off {
            return Some(Problem::Offset {
                want: want_off,
                got: u64_at(16),
            });
        }
        if let Some((_, n)) = exp.write {
            if u16_at(34) != n {
                return Some(Problem::NumberIo {
                    want: n,
                    got: u16_at(34),
                });
            }
        }
        let crc = checksum::header_crc(&iv[..HEADER_CRC_AT]);
        if crc != u32_at(HEADER_CRC_AT) {
            return Some(Problem::HeaderCrc {
                want: crc,
                got: u32_at(HEADER_CRC_AT),
            });
        }
        if self.kind == VerifyKind::Meta {
            // The header only, and the pattern after it when there is one.
            if self.pattern.is_empty() {
                return None;
            }
            return self.check_pattern(iv, at, HEADER, exp.offset);
        }
        if u16_at(2) != self.code {
            return Some(Problem::Method {
                want: self.code,
                got: u16_at(2),
            });
        }
        let mut area = [0u8; MAX_AREA];
        let n = checksum::compute(self.kind, &iv[self.hdr..], &mut area);
        if area[..n] != iv[HEADER..HEADER + n] {
            return Some(Problem::Checksum {
                kind: self.kind,
                want: checksum::describe(self.kind, &iv[HEADER..HEADER + n]),
                got: checksum::describe(self.kind, &area[..n]),
            });
        }
        None
    }

    /// The interval of a failed check as read from the device (`buf` as
    /// `check` left it).
    pub fn received(&self, buf: &[u8], m: &Mismatch) -> Vec<u8> {
        let mut v = buf[m.at..m.at + m.len].to_vec();
        if self.hdr > 0 {
            self.swap(&mut v);
        }
        v
    }

    /// The interval as it was written, rebuilt from what the header (or
    /// the expectation) says; `None` when the header is unusable.
    pub fn expected(&self, buf: &[u8], exp: &Expect, m: &Mismatch) -> Option<Vec<u8>> {
        if m.problem.in_header() {
            return None;
        }
        let mut block = vec![0u8; buf.len()];
        let stamp = if self.hdr == 0 {
            Stamp {
                seed: 0,
                numberio: 0,
                time_ns: 0,
            }
        } else {
            let h = &buf[m.at..m.at + HEADER];
            let f64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
            let f32_at =
                |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap_or([0; 4])) as u64;
            let numberio = u16::from_le_bytes([h[34], h[35]]) as u64;
            Stamp {
                seed: exp.write.map_or(f64_at(8), |w| w.0),
                numberio,
                time_ns: f32_at(24) * 1_000_000_000 + f32_at(28),
            }
        };
        let job = if self.hdr == 0 {
            self.job
        } else {
            u16::from_le_bytes([buf[m.at + 32], buf[m.at + 33]])
        };
        let me = Verifier {
            job,
            ..self.clone()
        };
        me.stamp(&mut block, exp.offset, stamp);
        Some(block[m.at..m.at + m.len].to_vec())
    }
}

#[cfg(test)]
mod tests;
