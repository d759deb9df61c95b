//! Caching and durability: direct I/O, cache invalidation and syncs.

use super::{boolean, opt, size, unsupported, Category::*, Kind, OptDef};
use crate::job::value::parse_choice;

pub const OPTS: &[OptDef] = &[
    opt(
        "direct",
        Sync,
        Kind::Bool,
        "Use direct I/O (O_DIRECT), bypassing the page cache",
        |s, v| {
            s.sync.direct = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "buffered",
        Sync,
        Kind::Bool,
        "Use buffered I/O (the opposite of direct)",
        |s, v| {
            s.sync.direct = !boolean(v)?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "invalidate",
        Sync,
        Kind::Bool,
        "Drop the files' pages from the page cache before starting",
        |s, v| {
            s.sync.invalidate = boolean(v)?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "sync",
        Sync,
        Kind::Choice(&[
            ("none", "no synchronous flag"),
            ("0", "same as none"),
            ("sync", "open with O_SYNC"),
            ("1", "same as sync"),
            ("dsync", "open with O_DSYNC"),
        ]),
        "Open files for synchronous I/O",
        |s, v| {
            s.sync.sync_flags = parse_choice(
                v,
                &[
                    ("none", 0),
                    ("0", 0),
                    ("sync", crate::sys::O_SYNC),
                    ("1", crate::sys::O_SYNC),
                    ("dsync", crate::sys::O_DSYNC),
                ],
            )?;
            Ok(())
        },
    )
    .default("none"),
    opt(
        "fsync",
        Sync,
        Kind::Int,
        "Issue an fsync after this many writes (0: never)",
        |s, v| {
            s.sync.fsync = size(s, v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "fdatasync",
        Sync,
        Kind::Int,
        "Issue an fdatasync after this many writes (0: never)",
        |s, v| {
            s.sync.fdatasync = size(s, v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "end_fsync",
        Sync,
        Kind::Bool,
        "fsync the files when the job's writes are done",
        |s, v| {
            s.sync.end_fsync = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "fsync_on_close",
        Sync,
        Kind::Bool,
        "fsync each file before closing it",
        |s, v| {
            s.sync.fsync_on_close = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "sync_file_range",
        Sync,
        Kind::Str,
        "Call sync_file_range every N writes: wait_before,write,wait_after:N",
        |s, v| {
            let (flags, n) = v
                .rsplit_once(':')
                .ok_or_else(|| format!("'{v}' must be FLAGS:N, e.g. write:32"))?;
            let mut bits = 0u32;
            for f in flags.split(',').map(str::trim) {
                bits |= match f {
                    // SYNC_FILE_RANGE_WAIT_BEFORE, _WRITE, _WAIT_AFTER
                    // (Linux's values; the option is Linux's alone).
                    "wait_before" => 1,
                    "write" => 2,
                    "wait_after" => 4,
                    _ => {
                        return Err(format!(
                            "'{f}' is not one of: wait_before, write, wait_after"
                        ).into())
                    }
                };
            }
            let n = size(s, n)?;
            if n == 0 {
                return Err("the write count must be at least 1".into());
            }
            s.sync.sync_file_range = Some((bits, n));
            Ok(())
        },
    ),
    unsupported(
        "write_barrier",
        Sync,
        "Make every Nth write a barrier write",
        "barrier writes need a SCSI generic (sg) target, which iomark does not drive; use fsync or fdatasync for ordering points",
    ),
];
