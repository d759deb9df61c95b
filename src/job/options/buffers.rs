//! Buffer contents: zeros, patterns, refill and scramble, compressibility
//! and duplicate blocks. The contents themselves are made by
//! `workload::buffers`.

use super::{boolean, opt, size, uint_in, Category::*, Kind, OptDef};
use crate::job::pattern::parse_pattern;
use crate::job::spec::DedupeMode;
use crate::job::value::parse_choice;

/// The largest `iomem_align` (the buffer pool's start is aligned to it;
/// the padding is address space, never touched).
pub const MAX_IOMEM_ALIGN: u64 = 1 << 30;
/// The largest `hugepage-size` (16 GiB pages are the largest any CPU has).
const MAX_HUGEPAGE_SIZE: u64 = 16 << 30;

pub const OPTS: &[OptDef] = &[
    opt(
        "zero_buffers",
        Buffers,
        Kind::Switch,
        "Fill write buffers with zeros instead of random data",
        |s, v| {
            s.buf.zero_buffers = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "refill_buffers",
        Buffers,
        Kind::Switch,
        "Generate new random contents for every write",
        |s, v| {
            s.buf.refill_buffers = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "scramble_buffers",
        Buffers,
        Kind::Bool,
        "Stamp each write's offset and a counter into its buffer so repeated buffers do not deduplicate",
        |s, v| {
            s.buf.scramble_buffers = boolean(v)?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "buffer_pattern",
        Buffers,
        Kind::Str,
        "Fill write buffers with this pattern: 0x hex, \"text\", 'file' and decimal numbers, written together",
        |s, v| {
            s.buf.buffer_pattern = parse_pattern(v)?;
            Ok(())
        },
    ),
    opt(
        "buffer_compress_percentage",
        Buffers,
        Kind::Int,
        "Make write contents compress by about this percentage (random data followed by fixed data)",
        |s, v| {
            s.buf.buffer_compress_percentage = uint_in(v, 0, 100)? as u32;
            Ok(())
        },
    ),
    opt(
        "buffer_compress_chunk",
        Buffers,
        Kind::Size,
        "Size of each random-then-fixed region for buffer_compress_percentage (0: the whole block)",
        |s, v| {
            s.buf.buffer_compress_chunk = size(s, v)?;
            Ok(())
        },
    )
    .default("512"),
    opt(
        "dedupe_percentage",
        Buffers,
        Kind::Int,
        "Make this percentage of writes carry the same contents as an earlier write",
        |s, v| {
            s.buf.dedupe_percentage = uint_in(v, 0, 100)? as u32;
            Ok(())
        },
    ),
    opt(
        "dedupe_mode",
        Buffers,
        Kind::Choice(&[
            ("repeat", "duplicate the most recent new contents"),
            (
                "working_set",
                "duplicate a random one of the first new contents (see dedupe_working_set_percentage)",
            ),
        ]),
        "Where duplicate write contents come from",
        |s, v| {
            s.buf.dedupe_mode = parse_choice(
                v,
                &[
                    ("repeat", DedupeMode::Repeat),
                    ("working_set", DedupeMode::WorkingSet),
                ],
            )?;
            Ok(())
        },
    )
    .default("repeat"),
    opt(
        "dedupe_working_set_percentage",
        Buffers,
        Kind::Int,
        "For dedupe_mode=working_set: the working set's size as a percentage of the job's files",
        |s, v| {
            s.buf.dedupe_working_set_percentage = uint_in(v, 0, 100)? as u32;
            Ok(())
        },
    )
    .default("5"),
    opt(
        "dedupe_global",
        Buffers,
        Kind::Bool,
        "Share the duplicate contents (dedupe_mode=working_set) with the other jobs that set this",
        |s, v| {
            s.buf.dedupe_global = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "iomem_align",
        Buffers,
        Kind::Size,
        "Align I/O buffers in memory to this many bytes (at least 4096)",
        |s, v| {
            let a = size(s, v)?;
            if a != 0 && !a.is_power_of_two() {
                return Err(format!("'{v}' must be a power of two").into());
            }
            if a > MAX_IOMEM_ALIGN {
                return Err(format!(
                    "'{v}' is more than 1g, the largest buffer alignment iomark accepts"
                ).into());
            }
            s.buf.iomem_align = a;
            Ok(())
        },
    )
    .alias(&["mem_align"])
    .default("0"),
    opt(
        "mem",
        Buffers,
        Kind::Str,
        "Memory the I/O buffers come from: malloc, shm, shmhuge, mmap[:FILE], mmaphuge[:FILE], mmapshared[:FILE]",
        |s, v| {
            use crate::job::spec::MemType as M;
            let (kind, file) = match v.split_once(':') {
                Some((k, f)) if !f.is_empty() => (k, Some(std::path::PathBuf::from(f))),
                _ => (v, None),
            };
            let mem = match kind {
                "malloc" => M::Malloc,
                "shm" => M::Shm,
                "shmhuge" => M::ShmHuge,
                "mmap" => M::Mmap(file.clone()),
                "mmaphuge" => M::MmapHuge(file.clone()),
                "mmapshared" => M::MmapShared(file.clone()),
                "cudamalloc" => {
                    return Err("cudamalloc needs GPU memory (with the rdma engine), which iomark does not support".into())
                }
                _ => {
                    return Err(format!(
                        "'{kind}' is not one of: malloc, shm, shmhuge, mmap, mmaphuge, mmapshared"
                    ).into())
                }
            };
            if file.is_some() && !matches!(mem, M::Mmap(_) | M::MmapHuge(_) | M::MmapShared(_)) {
                return Err(format!("only the mmap types take a file name, not {kind}").into());
            }
            s.buf.mem = mem;
            Ok(())
        },
    )
    .alias(&["iomem"])
    .default("malloc"),
    opt(
        "hugepage-size",
        Buffers,
        Kind::Size,
        "Huge page size for mem=shmhuge and mmaphuge (a multiple of 4096)",
        |s, v| {
            let h = size(s, v)?;
            if h == 0 || h % 4096 != 0 {
                return Err(format!("'{v}' is not a multiple of 4096").into());
            }
            if h > MAX_HUGEPAGE_SIZE {
                return Err(format!(
                    "'{v}' is more than 16g, the largest huge page size there is"
                ).into());
            }
            s.buf.hugepage_size = h;
            Ok(())
        },
    )
    .default("2m"),
    opt(
        "lockmem",
        Buffers,
        Kind::Size,
        "Pin this much memory per job with mlock while it runs, to leave less for the page cache",
        |s, v| {
            s.buf.lockmem = size(s, v)?;
            Ok(())
        },
    )
    .default("0"),
];

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::{DedupeMode, JobSpec};

    fn set(opts: &[(&str, &str)]) -> Result<JobSpec, crate::job::JobError> {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            apply(&mut s, lookup(k).unwrap(), Some(v))?;
        }
        Ok(s)
    }

    #[test]
    fn each_option_parses() {
        let s = set(&[
            ("zero_buffers", "1"),
            ("refill_buffers", "1"),
            ("scramble_buffers", "0"),
            ("buffer_pattern", "0xab\"c\""),
            ("buffer_compress_percentage", "70"),
            ("buffer_compress_chunk", "4k"),
            ("dedupe_percentage", "30"),
            ("dedupe_mode", "working_set"),
            ("dedupe_working_set_percentage", "20"),
            ("iomem_align", "64k"),
        ])
        .unwrap();
        let b = &s.buf;
        assert!(b.zero_buffers && b.refill_buffers && !b.scramble_buffers);
        assert_eq!(b.buffer_pattern, vec![0xab, b'c']);
        assert_eq!(b.buffer_compress_percentage, 70);
        assert_eq!(b.buffer_compress_chunk, 4096);
        assert_eq!(b.dedupe_percentage, 30);
        assert_eq!(b.dedupe_mode, DedupeMode::WorkingSet);
        assert_eq!(b.dedupe_working_set_percentage, 20);
        assert_eq!(b.iomem_align, 65536);
    }

    #[test]
    fn bad_values_are_rejected() {
        for (k, v) in [
            ("buffer_compress_percentage", "101"),
            ("dedupe_percentage", "-1"),
            ("dedupe_mode", "sometimes"),
            ("buffer_pattern", "xyz"),
            ("iomem_align", "3000"),
            ("iomem_align", "8e"),
            ("iomem_align", "2g"),
            ("hugepage-size", "32g"),
        ] {
            assert!(set(&[(k, v)]).is_err(), "{k}={v} accepted");
        }
    }
}
