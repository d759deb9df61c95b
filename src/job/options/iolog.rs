//! I/O traces: recording a job's I/O (`write_iolog`) and replaying a
//! recorded trace (`read_iolog` and the `replay_*` options). The traces
//! themselves are read and written by `workload::iolog`.

use super::{boolean, opt, size, uint, unsupported, Category::*, Kind, OptDef};
use crate::job::spec::{Ddir, REPLAY_SKIP_SYNC};
use crate::job::JobError;

fn name(v: &str) -> Result<Option<String>, JobError> {
    if v.is_empty() {
        return Err("needs a file name".into());
    }
    Ok(Some(v.to_string()))
}

pub const OPTS: &[OptDef] = &[
    opt(
        "write_iolog",
        Logs,
        Kind::Str,
        "Record every I/O the job issues to this file (iolog version 3, appended)",
        |s, v| {
            s.log.write_iolog = name(v)?;
            Ok(())
        },
    ),
    opt(
        "read_iolog",
        Logs,
        Kind::Str,
        "Replay the I/O recorded in this iolog (version 2 or 3) instead of generating it; ':' separates one file per clone, '-' is standard input",
        |s, v| {
            s.log.read_iolog = name(v)?;
            Ok(())
        },
    ),
    opt(
        "replay_no_stall",
        Logs,
        Kind::Bool,
        "Replay as fast as possible, ignoring the trace's timing (order is kept)",
        |s, v| {
            s.log.replay_no_stall = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "replay_time_scale",
        Logs,
        Kind::Int,
        "Replay at this percentage of the trace's speed (200: twice as fast)",
        |s, v| {
            let n = uint(v)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            s.log.replay_time_scale = n;
            Ok(())
        },
    )
    .default("100"),
    opt(
        "replay_redirect",
        Logs,
        Kind::Str,
        "Replay every I/O of the trace onto this one file or device",
        |s, v| {
            s.log.replay_redirect = name(v)?;
            Ok(())
        },
    ),
    opt(
        "replay_align",
        Logs,
        Kind::Size,
        "Round replayed offsets down to a multiple of this power of two",
        |s, v| {
            let a = size(s, v)?;
            if a != 0 && !a.is_power_of_two() {
                return Err(format!("'{v}' must be a power of two").into());
            }
            s.log.replay_align = a;
            Ok(())
        },
    ),
    opt(
        "replay_scale",
        Logs,
        Kind::Int,
        "Divide replayed offsets by this factor",
        |s, v| {
            let n = uint(v)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            s.log.replay_scale = n;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "replay_skip",
        Logs,
        Kind::List,
        "Leave these kinds of trace records out of the replay: a comma list of read, write, trim, sync",
        |s, v| {
            let mut mask = 0u8;
            for w in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                mask |= match w {
                    "read" => 1 << Ddir::Read.idx(),
                    "write" => 1 << Ddir::Write.idx(),
                    "trim" => 1 << Ddir::Trim.idx(),
                    "sync" => REPLAY_SKIP_SYNC,
                    other => {
                        return Err(format!(
                            "unknown kind '{other}' (expected read, write, trim or sync)"
                        ).into())
                    }
                };
            }
            s.log.replay_skip = mask;
            Ok(())
        },
    ),
    unsupported(
        "read_iolog_chunked",
        Logs,
        "Read the replayed trace in pieces while running",
        "iomark reads the whole trace before the job starts",
    ),
    unsupported(
        "merge_blktrace_file",
        Logs,
        "Merge several blktrace traces into one before replaying",
        "iomark does not replay blktrace traces",
    ),
    unsupported(
        "merge_blktrace_scalars",
        Logs,
        "Time scale of each merged blktrace trace",
        "iomark does not replay blktrace traces",
    ),
    unsupported(
        "merge_blktrace_iters",
        Logs,
        "Iterations of each merged blktrace trace",
        "iomark does not replay blktrace traces",
    ),
];

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::{Ddir, JobSpec, REPLAY_SKIP_SYNC};

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
            ("write_iolog", "w.log"),
            ("read_iolog", "a.log:b.log"),
            ("replay_no_stall", "1"),
            ("replay_time_scale", "50"),
            ("replay_redirect", "/dev/loop0"),
            ("replay_align", "4k"),
            ("replay_scale", "8"),
            ("replay_skip", "write,sync"),
        ])
        .unwrap();
        let l = &s.log;
        assert_eq!(l.write_iolog.as_deref(), Some("w.log"));
        assert_eq!(l.read_iolog.as_deref(), Some("a.log:b.log"));
        assert!(l.replay_no_stall);
        assert_eq!(l.replay_time_scale, 50);
        assert_eq!(l.replay_redirect.as_deref(), Some("/dev/loop0"));
        assert_eq!(l.replay_align, 4096);
        assert_eq!(l.replay_scale, 8);
        assert_eq!(l.replay_skip, 1 << Ddir::Write.idx() | REPLAY_SKIP_SYNC);
    }

    #[test]
    fn bad_values_are_rejected() {
        for (k, v) in [
            ("replay_time_scale", "0"),
            ("replay_scale", "0"),
            ("replay_align", "3000"),
            ("replay_skip", "reads"),
            ("write_iolog", ""),
        ] {
            assert!(set(&[(k, v)]).is_err(), "{k}={v} accepted");
        }
        let e = set(&[("merge_blktrace_file", "x")]).unwrap_err();
        assert!(e.message.contains("not supported"), "{e}");
    }
}
