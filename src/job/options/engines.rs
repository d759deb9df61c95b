//! Options that belong to particular I/O engines (`hipri`, `fixedbufs`,
//! `userspace_reap`, …). Each lists its engines, so using one with another
//! engine is an error, and `--enghelp=ENGINE` lists them.

use super::{boolean, opt, uint_in, unsupported, Category::*, Kind, OptDef};
use crate::job::engine_kind::EngineKind;
use crate::job::spec::StatType;
use crate::job::value::parse_choice;

const URING: &[EngineKind] = &[EngineKind::IoUring];
const URING_PVSYNC2: &[EngineKind] = &[EngineKind::IoUring, EngineKind::Pvsync2];

pub const OPTS: &[OptDef] = &[
    opt(
        "hipri",
        Engine,
        Kind::Switch,
        "io_uring: use polled completions (needs direct=1 and a device with poll queues); pvsync2: set RWF_HIPRI",
        |s, v| {
            s.engine.hipri = boolean(v)?;
            Ok(())
        },
    )
    .engines(URING_PVSYNC2),
    opt(
        "hipri_percentage",
        Engine,
        Kind::Int,
        "With hipri, the percentage of pvsync2 I/Os that are high priority",
        |s, v| {
            s.engine.hipri_percentage = uint_in(v, 0, 100)? as u32;
            Ok(())
        },
    )
    .default("100")
    .engines(&[EngineKind::Pvsync2]),
    opt(
        "uncached",
        Engine,
        Kind::Int,
        "Non-zero: buffered I/O drops its pages from the cache once done (RWF_DONTCACHE)",
        |s, v| {
            s.engine.uncached = uint_in(v, 0, u32::MAX.into())? as u32;
            Ok(())
        },
    )
    .default("0")
    .engines(URING_PVSYNC2),
    opt(
        "nowait",
        Engine,
        Kind::Bool,
        "Set RWF_NOWAIT: an I/O that would block fails with EAGAIN instead",
        |s, v| {
            s.engine.nowait = boolean(v)?;
            Ok(())
        },
    )
    .default("0")
    .engines(&[EngineKind::IoUring, EngineKind::Libaio, EngineKind::Pvsync2]),
    opt(
        "fixedbufs",
        Engine,
        Kind::Switch,
        "Register the I/O buffers with the kernel once, so each I/O skips mapping them",
        |s, v| {
            s.engine.fixedbufs = boolean(v)?;
            Ok(())
        },
    )
    .engines(URING),
    opt(
        "registerfiles",
        Engine,
        Kind::Switch,
        "Register the job's files with the kernel, making each I/O's file lookup cheaper",
        |s, v| {
            s.engine.registerfiles = boolean(v)?;
            Ok(())
        },
    )
    .engines(URING),
    opt(
        "sqthread_poll",
        Engine,
        Kind::Switch,
        "A kernel thread polls the submission ring, so submitting needs no system call (implies registerfiles)",
        |s, v| {
            s.engine.sqthread_poll = boolean(v)?;
            Ok(())
        },
    )
    .engines(URING),
    opt(
        "sqthread_poll_cpu",
        Engine,
        Kind::Int,
        "CPU to run the sqthread_poll kernel thread on",
        |s, v| {
            s.engine.sqthread_poll_cpu = Some(uint_in(v, 0, u32::MAX as u64)? as u32);
            Ok(())
        },
    )
    .engines(URING),
    opt(
        "nonvectored",
        Engine,
        Kind::Int,
        "1: plain READ/WRITE commands; 0: READV/WRITEV; -1: plain ones when the kernel has them",
        |s, v| {
            let n = crate::job::value::parse_int(v)?;
            s.engine.nonvectored = match n {
                -1 => -1,
                0 => 0,
                n if n > 0 => 1,
                _ => return Err(format!("'{v}' must be -1, 0 or 1")),
            };
            Ok(())
        },
    )
    .default("-1")
    .engines(URING),
    opt(
        "force_async",
        Engine,
        Kind::Int,
        "Send every Nth request straight to the kernel's async workers (IOSQE_ASYNC); 0: never",
        |s, v| {
            s.engine.force_async = uint_in(v, 0, u32::MAX as u64)? as u32;
            Ok(())
        },
    )
    .default("0")
    .engines(URING),
    opt(
        "userspace_reap",
        Engine,
        Kind::Switch,
        "Read completions from the kernel's ring in user space when reaping without a minimum (iodepth_batch_complete_min=0)",
        |s, v| {
            s.engine.userspace_reap = boolean(v)?;
            Ok(())
        },
    )
    .engines(&[EngineKind::Libaio]),
    opt(
        "thp",
        Engine,
        Kind::Bool,
        "Ask for transparent huge pages on the file mappings (madvise MADV_HUGEPAGE)",
        |s, v| {
            s.engine.thp = boolean(v)?;
            Ok(())
        },
    )
    .default("0")
    .engines(&[EngineKind::Mmap]),
    opt(
        "stat_type",
        Engine,
        Kind::Choice(&[
            ("stat", "stat(2)"),
            ("lstat", "lstat(2), not following symbolic links"),
            ("statx", "statx(2)"),
        ]),
        "Which stat call filestat measures",
        |s, v| {
            s.engine.stat_type = parse_choice(
                v,
                &[
                    ("stat", StatType::Stat),
                    ("lstat", StatType::Lstat),
                    ("statx", StatType::Statx),
                ],
            )?;
            Ok(())
        },
    )
    .default("stat")
    .engines(&[EngineKind::FileStat]),
    unsupported(
        "cmd_type",
        Engine,
        "Kind of passthrough command for io_uring_cmd",
        "the io_uring_cmd engine is not implemented",
    )
    .fio_engines(&["io_uring_cmd"]),
];

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::*;

    fn set(spec: &mut JobSpec, k: &str, v: Option<&str>) -> Result<(), String> {
        apply(spec, lookup(k).unwrap(), v)
    }

    #[test]
    fn io_uring_switches_and_numbers() {
        let mut s = JobSpec::default();
        for k in ["fixedbufs", "registerfiles", "sqthread_poll", "hipri"] {
            set(&mut s, k, None).unwrap();
        }
        assert!(s.engine.fixedbufs && s.engine.registerfiles && s.engine.sqthread_poll);
        assert!(s.engine.hipri);
        set(&mut s, "sqthread_poll_cpu", Some("1")).unwrap();
        assert_eq!(s.engine.sqthread_poll_cpu, Some(1));
        set(&mut s, "nonvectored", Some("1")).unwrap();
        assert_eq!(s.engine.nonvectored, 1);
        assert!(set(&mut s, "nonvectored", Some("-2")).is_err());
        set(&mut s, "force_async", Some("4")).unwrap();
        assert_eq!(s.engine.force_async, 4);
        set(&mut s, "fixedbufs", Some("0")).unwrap();
        assert!(!s.engine.fixedbufs);
    }

    #[test]
    fn pvsync2_mmap_filestat_libaio() {
        let mut s = JobSpec::default();
        set(&mut s, "hipri_percentage", Some("30")).unwrap();
        assert_eq!(s.engine.hipri_percentage, 30);
        assert!(set(&mut s, "hipri_percentage", Some("101")).is_err());
        set(&mut s, "uncached", Some("1")).unwrap();
        set(&mut s, "nowait", Some("1")).unwrap();
        assert!(s.engine.nowait && s.engine.uncached == 1);
        set(&mut s, "thp", Some("1")).unwrap();
        assert!(s.engine.thp);
        set(&mut s, "stat_type", Some("statx")).unwrap();
        assert_eq!(s.engine.stat_type, StatType::Statx);
        assert!(set(&mut s, "stat_type", Some("fstat")).is_err());
        set(&mut s, "userspace_reap", None).unwrap();
        assert!(s.engine.userspace_reap);
    }
}
