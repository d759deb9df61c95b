//! Unsupported buffer options: what write buffers contain (patterns,
//! compressibility, dedupe) and how buffer memory is allocated.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NOT_YET: &str = "not implemented yet";

pub const OPTS: &[OptDef] = &[
    // Contents of write buffers.
    // Deduplication.
    unsupported(
        "mem",
        Buffers,
        "Memory type for I/O buffers: malloc, shm, shmhuge, mmap, mmaphuge, mmapshared, cudamalloc",
        NOT_YET,
    )
    .alias(&["iomem"]),
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
