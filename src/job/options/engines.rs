//! Options that belong to particular I/O engines (`hipri`, `fixedbufs`,
//! `userspace_reap`, …). Each lists its engines, so using one with another
//! engine is an error, and `--enghelp=ENGINE` lists them.

use super::{boolean, opt, size, uint_in, Category::*, Kind, OptDef};
use crate::job::engine_kind::EngineKind;
use crate::job::spec::{Placement, PlidSelect, StatType};
use crate::job::value::parse_choice;
use crate::job::JobError;

/// io_uring and its passthrough variant share their ring options.
const URING: &[EngineKind] = &[EngineKind::IoUring, EngineKind::IoUringCmd];
const URING_PVSYNC2: &[EngineKind] = &[
    EngineKind::IoUring,
    EngineKind::IoUringCmd,
    EngineKind::Pvsync2,
];
const CMD: &[EngineKind] = &[EngineKind::IoUringCmd];

pub const OPTS: &[OptDef] = &[
    opt(
        "hipri",
        Engine,
        Kind::Switch,
        "Polled completions: with io_uring and io_uring_cmd, a device with poll queues (io_uring needs direct=1); with pvsync2, RWF_HIPRI",
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
    .engines(&[EngineKind::IoUring, EngineKind::Pvsync2]),
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
                _ => return Err(format!("'{v}' must be -1, 0 or 1").into()),
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
    opt(
        "cmd_type",
        Engine,
        Kind::Choice(&[("nvme", "NVMe I/O commands")]),
        "Kind of passthrough command io_uring_cmd sends",
        |_, v| parse_choice(v, &[("nvme", ())]),
    )
    .default("nvme")
    .engines(CMD),
    opt(
        "pi_act",
        Engine,
        Kind::Int,
        "Protection information action: 1, the controller inserts and strips the PI; 0, iomark writes and checks it",
        |s, v| {
            s.engine.nvme.pi_act = uint_in(v, 0, 1)? == 1;
            Ok(())
        },
    )
    .default("1")
    .engines(CMD),
    opt(
        "pi_chk",
        Engine,
        Kind::List,
        "Protection information fields the controller checks: GUARD, REFTAG, APPTAG (comma-separated)",
        |s, v| {
            s.engine.nvme.pi_chk = parse_pi_chk(v)?;
            Ok(())
        },
    )
    .engines(CMD),
    opt(
        "md_per_io_size",
        Engine,
        Kind::Size,
        "Bytes of separate metadata buffer per I/O (namespaces formatted with metadata)",
        |s, v| {
            s.engine.nvme.md_per_io_size = size(s, v)?;
            Ok(())
        },
    )
    .default("0")
    .engines(CMD),
    opt(
        "apptag",
        Engine,
        Kind::Int,
        "Application tag of the protection information",
        |s, v| {
            s.engine.nvme.apptag = uint_in(v, 0, 0xffff)? as u16;
            Ok(())
        },
    )
    .default("0x1234")
    .engines(CMD),
    opt(
        "apptag_mask",
        Engine,
        Kind::Int,
        "Which bits of the application tag are checked",
        |s, v| {
            s.engine.nvme.apptag_mask = uint_in(v, 0, 0xffff)? as u16;
            Ok(())
        },
    )
    .default("0xffff")
    .engines(CMD),
    opt(
        "fdp",
        Engine,
        Kind::Bool,
        "Writes carry flexible data placement directives (dataplacement=fdp)",
        |s, v| {
            let on = boolean(v)?;
            let p = &mut s.engine.nvme.placement;
            if on {
                *p = Placement::Fdp;
            } else if *p == Placement::Fdp {
                *p = Placement::None;
            }
            Ok(())
        },
    )
    .default("0")
    .engines(CMD),
    opt(
        "dataplacement",
        Engine,
        Kind::Choice(&[
            ("none", "no placement directive"),
            ("fdp", "flexible data placement: a placement identifier per write"),
            ("streams", "streams: a stream identifier per write"),
        ]),
        "Data placement directive of the writes",
        |s, v| {
            s.engine.nvme.placement = parse_choice(
                v,
                &[
                    ("none", Placement::None),
                    ("fdp", Placement::Fdp),
                    ("streams", Placement::Streams),
                ],
            )?;
            Ok(())
        },
    )
    .default("none")
    .engines(CMD),
    opt(
        "plid_select",
        Engine,
        Kind::Choice(&[
            ("roundrobin", "the job's placement identifiers in turn"),
            ("random", "one of them at random"),
            ("scheme", "by the write's offset, from dp_scheme"),
        ]),
        "How each write's placement identifier is chosen",
        |s, v| {
            s.engine.nvme.plid_select = parse_choice(
                v,
                &[
                    ("roundrobin", PlidSelect::RoundRobin),
                    ("random", PlidSelect::Random),
                    ("scheme", PlidSelect::Scheme),
                ],
            )?;
            Ok(())
        },
    )
    .alias(&["fdp_pli_select"])
    .default("roundrobin")
    .engines(CMD),
    opt(
        "plids",
        Engine,
        Kind::List,
        "Placement identifier indices (FDP, as `nvme fdp status` lists them) or stream ids the writes use: 0,2-4",
        |s, v| {
            s.engine.nvme.plids = parse_id_list(v)?;
            Ok(())
        },
    )
    .alias(&["fdp_pli"])
    .engines(CMD),
    opt(
        "dp_scheme",
        Engine,
        Kind::Str,
        "File of 'start, end, index' lines: writes in [start, end) use that placement identifier index",
        |s, v| {
            s.engine.nvme.dp_scheme = (!v.is_empty()).then(|| v.to_string());
            Ok(())
        },
    )
    .engines(CMD),
];

/// `pi_chk`: GUARD, REFTAG and APPTAG, comma-separated, as PRCHK bits.
fn parse_pi_chk(v: &str) -> Result<u32, JobError> {
    use crate::job::spec::pi_chk_bits as bits;
    let mut out = 0;
    for w in v.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        out |= parse_choice(
            w,
            &[
                ("GUARD", bits::GUARD),
                ("REFTAG", bits::REFTAG),
                ("APPTAG", bits::APPTAG),
            ],
        )?;
    }
    Ok(out)
}

/// `plids`: numbers and ranges, comma-separated (`0,2-4`), in order.
fn parse_id_list(v: &str) -> Result<Vec<u16>, JobError> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let num = |t: &str| -> Result<u16, JobError> {
            t.trim()
                .parse::<u16>()
                .map_err(|_| format!("'{t}' is not an identifier (0 to 65535)").into())
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("'{part}' is an empty range").into());
        }
        out.extend(lo..=hi);
        if out.len() > 128 {
            return Err("at most 128 identifiers".into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::*;

    fn set(spec: &mut JobSpec, k: &str, v: Option<&str>) -> Result<(), crate::job::JobError> {
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

    #[test]
    fn nvme_options() {
        let mut s = JobSpec::default();
        assert!(s.engine.nvme.pi_act);
        set(&mut s, "pi_act", Some("0")).unwrap();
        assert!(!s.engine.nvme.pi_act);
        assert!(set(&mut s, "pi_act", Some("2")).is_err());
        set(&mut s, "pi_chk", Some("GUARD,REFTAG")).unwrap();
        assert_eq!(s.engine.nvme.pi_chk, (1 << 28) | (1 << 26));
        assert!(set(&mut s, "pi_chk", Some("GUARDS")).is_err());
        set(&mut s, "apptag", Some("0x8888")).unwrap();
        set(&mut s, "apptag_mask", Some("0x00ff")).unwrap();
        assert_eq!(
            (s.engine.nvme.apptag, s.engine.nvme.apptag_mask),
            (0x8888, 0xff)
        );
        assert!(set(&mut s, "apptag", Some("0x10000")).is_err());
        set(&mut s, "md_per_io_size", Some("8k")).unwrap();
        assert_eq!(s.engine.nvme.md_per_io_size, 8192);
        set(&mut s, "fdp", Some("1")).unwrap();
        assert_eq!(s.engine.nvme.placement, Placement::Fdp);
        set(&mut s, "fdp", Some("0")).unwrap();
        assert_eq!(s.engine.nvme.placement, Placement::None);
        set(&mut s, "dataplacement", Some("streams")).unwrap();
        assert_eq!(s.engine.nvme.placement, Placement::Streams);
        set(&mut s, "fdp_pli", Some("0,2-4,7")).unwrap();
        assert_eq!(s.engine.nvme.plids, [0, 2, 3, 4, 7]);
        assert!(set(&mut s, "plids", Some("4-2")).is_err());
        assert!(set(&mut s, "plids", Some("x")).is_err());
        set(&mut s, "fdp_pli_select", Some("random")).unwrap();
        assert_eq!(s.engine.nvme.plid_select, PlidSelect::Random);
        set(&mut s, "cmd_type", Some("nvme")).unwrap();
        assert!(set(&mut s, "cmd_type", Some("bsg")).is_err());
    }
}
