//! Unsupported buffer options: what write buffers contain (patterns,
//! compressibility, dedupe) and how buffer memory is allocated.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NOT_YET: &str = "not implemented yet";

pub const OPTS: &[OptDef] = &[
    // Contents of write buffers.
    unsupported(
        "zero_buffers",
        Buffers,
        "Fill write buffers with zeroes instead of random data",
        NOT_YET,
    )
    .kind(Kind::Switch),
    unsupported(
        "refill_buffers",
        Buffers,
        "Generate new buffer contents for every write",
        NOT_YET,
    )
    .kind(Kind::Switch),
    unsupported(
        "scramble_buffers",
        Buffers,
        "Change a few bytes of each write buffer so blocks do not deduplicate",
        NOT_YET,
    )
    .kind(Kind::Bool),
    unsupported(
        "buffer_pattern",
        Buffers,
        "Fill write buffers with this pattern: hex (0x...), \"text\", a number or 'file'",
        NOT_YET,
    ),
    unsupported(
        "buffer_compress_percentage",
        Buffers,
        "Make write buffers compressible to about this percentage",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "buffer_compress_chunk",
        Buffers,
        "Size of the alternating random and fixed regions used for compressibility",
        NOT_YET,
    )
    .kind(Kind::Size),
    // Deduplication.
    unsupported(
        "dedupe_percentage",
        Buffers,
        "Share of writes whose buffer repeats an earlier one",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "dedupe_mode",
        Buffers,
        "Where duplicate buffers come from: repeat or working_set",
        NOT_YET,
    ),
    unsupported(
        "dedupe_working_set_percentage",
        Buffers,
        "Size of the dedupe working set, as a percentage of the file size",
        NOT_YET,
    )
    .kind(Kind::Int),
    unsupported(
        "dedupe_global",
        Buffers,
        "Share duplicate buffers between all jobs that set this",
        NOT_YET,
    )
    .kind(Kind::Bool),
    // Buffer memory.
    unsupported(
        "mem",
        Buffers,
        "Memory type for I/O buffers: malloc, shm, shmhuge, mmap, mmaphuge, mmapshared, cudamalloc",
        NOT_YET,
    )
    .alias(&["iomem"]),
    unsupported(
        "iomem_align",
        Buffers,
        "Align I/O buffers in memory to this boundary",
        NOT_YET,
    )
    .alias(&["mem_align"])
    .kind(Kind::Size),
    unsupported(
        "hugepage-size",
        Buffers,
        "Size of a huge page, for the huge-page buffer memory types",
        NOT_YET,
    )
    .kind(Kind::Size),
    unsupported(
        "lockmem",
        Buffers,
        "Pin this much memory with mlock to simulate a machine with less memory",
        NOT_YET,
    )
    .kind(Kind::Size),
];
