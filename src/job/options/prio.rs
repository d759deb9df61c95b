//! Per-I/O priorities of the libaio and io_uring engines
//! (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_hint`,
//! `cmdprio_bssplit`). Each takes one value for reads and writes, or
//! `READ,WRITE` (a third, trim, value is accepted and ignored: trims take
//! no priority). Which I/O gets which priority is the workload's
//! business (`workload::prio`); the job's own priority is `prio` and
//! `prioclass` (options/control.rs). io_uring_cmd cannot take them: Linux
//! fails NVMe passthrough entries that carry a priority with EINVAL (seen
//! in the guest suite, with fio 3.33 as well), so `job::validate` refuses
//! them there with that reason.

use super::{opt, per_ddir, uint_in, Category::*, Kind, OptDef};
use crate::job::engine_kind::EngineKind;
use crate::job::ioprio::{MAX_CLASS, MAX_HINT, MAX_LEVEL};
use crate::job::spec::PrioSplit;
use crate::job::value::{parse_size, split_per_ddir};
use crate::job::JobError;

const URING_AIO: &[EngineKind] = &[EngineKind::IoUring, EngineKind::Libaio];

/// Sets the read and write values of `cur` from `READ[,WRITE[,TRIM]]`.
fn per_rw(cur: &mut [u32; 2], v: &str, lo: u32, hi: u32) -> Result<(), JobError> {
    let mut all = [cur[0], cur[1], 0];
    per_ddir(&mut all, v, |p| {
        uint_in(p, lo.into(), hi.into()).map(|n| n as u32)
    })?;
    *cur = [all[0], all[1]];
    Ok(())
}

pub const OPTS: &[OptDef] = &[
    opt(
        "cmdprio_percentage",
        Engine,
        Kind::Percent,
        "Percentage of I/Os issued with the priority of cmdprio_class, cmdprio and cmdprio_hint (READ,WRITE values allowed)",
        |s, v| per_rw(&mut s.engine.cmdprio.percentage, v, 0, 100),
    )
    .default("0")
    .engines(URING_AIO),
    opt(
        "cmdprio_class",
        Engine,
        Kind::Int,
        "Priority class of the I/Os cmdprio_percentage or cmdprio_bssplit picks: 1 realtime (the default), 2 best effort, 3 idle (READ,WRITE values allowed)",
        |s, v| per_rw(&mut s.engine.cmdprio.class, v, 1, MAX_CLASS),
    )
    .engines(URING_AIO),
    opt(
        "cmdprio",
        Engine,
        Kind::Int,
        "Priority level of the I/Os cmdprio_percentage or cmdprio_bssplit picks, 0 (highest, the default) to 7 (READ,WRITE values allowed)",
        |s, v| per_rw(&mut s.engine.cmdprio.level, v, 0, MAX_LEVEL),
    )
    .engines(URING_AIO),
    opt(
        "cmdprio_hint",
        Engine,
        Kind::Int,
        "Priority hint of the I/Os cmdprio_percentage or cmdprio_bssplit picks, 0 (none, the default) to 1023, e.g. a command duration limit index (READ,WRITE values allowed)",
        |s, v| per_rw(&mut s.engine.cmdprio.hint, v, 0, MAX_HINT),
    )
    .engines(URING_AIO),
    opt(
        "cmdprio_bssplit",
        Engine,
        Kind::Str,
        "Percentage of the I/Os of each block size issued with a priority: BS/PCT[/CLASS/LEVEL[/HINT]]:… (READ,WRITE lists allowed); excludes cmdprio_percentage",
        |s, v| {
            s.engine.cmdprio.bssplit = parse_bssplit(v, s.kb_base())?;
            Ok(())
        },
    )
    .engines(URING_AIO),
];

/// `cmdprio_bssplit`: per direction, entries `BS/PCT` (the priority of
/// `cmdprio_class`, `cmdprio` and `cmdprio_hint`), `BS/PCT/CLASS/LEVEL` or
/// `BS/PCT/CLASS/LEVEL/HINT`, separated by `:`. Entries with no share
/// (`BS`, `BS/`, `BS/0`) are left out; the shares of one block size may
/// not add up to more than 100. An empty value removes the option.
pub fn parse_bssplit(v: &str, kb_base: u64) -> Result<Option<[Vec<PrioSplit>; 2]>, JobError> {
    if v.trim().is_empty() {
        return Ok(None);
    }
    let parts = split_per_ddir(v)?;
    let mut out: [Vec<PrioSplit>; 2] = [Vec::new(), Vec::new()];
    for (d, part) in parts.iter().take(2).enumerate() {
        if let Some(p) = part {
            out[d] = parse_bssplit_list(p, kb_base)?;
        }
    }
    Ok(Some(out))
}

fn parse_bssplit_list(s: &str, kb_base: u64) -> Result<Vec<PrioSplit>, JobError> {
    let mut out: Vec<PrioSplit> = Vec::new();
    for entry in s.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let e = parse_entry(entry, kb_base).map_err(|m| format!("entry '{entry}': {m}"))?;
        if e.perc > 0 {
            out.push(e);
        }
    }
    // Sorted by block size; entries of one size keep their order.
    out.sort_by_key(|e| e.bs);
    for e in &out {
        let total: u32 = out.iter().filter(|x| x.bs == e.bs).map(|x| x.perc).sum();
        if total > 100 {
            return Err(format!(
                "the shares of block size {} add up to {total}%, more than 100%",
                e.bs
            )
            .into());
        }
    }
    Ok(out)
}

fn parse_entry(entry: &str, kb_base: u64) -> Result<PrioSplit, JobError> {
    let fields: Vec<&str> = entry.split('/').map(str::trim).collect();
    let bs = parse_size(fields[0], kb_base)?;
    if bs == 0 {
        return Err("the block size must be larger than zero".into());
    }
    let num = |i: usize, what: &str, hi: u32| -> Result<u32, JobError> {
        let f = fields[i].strip_suffix('%').unwrap_or(fields[i]);
        uint_in(f, 0, hi.into())
            .map(|n| n as u32)
            .map_err(|e| format!("{what}: {e}").into())
    };
    let perc = match fields.get(1) {
        None => 0,
        Some(&"") => 0,
        Some(_) => num(1, "percentage", 100)?,
    };
    let prio = match fields.len() {
        1 | 2 => None,
        4 => Some((num(2, "class", MAX_CLASS)?, num(3, "level", MAX_LEVEL)?, 0)),
        5 => Some((
            num(2, "class", MAX_CLASS)?,
            num(3, "level", MAX_LEVEL)?,
            num(4, "hint", MAX_HINT)?,
        )),
        _ => {
            return Err(
                "expected BS/PERCENT, BS/PERCENT/CLASS/LEVEL or BS/PERCENT/CLASS/LEVEL/HINT".into(),
            )
        }
    };
    Ok(PrioSplit { bs, perc, prio })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{apply, lookup};
    use crate::job::spec::JobSpec;

    fn set(s: &mut JobSpec, k: &str, v: &str) -> Result<(), JobError> {
        apply(s, lookup(k).unwrap(), Some(v))
    }

    fn split(bs: u64, perc: u32, prio: Option<(u32, u32, u32)>) -> PrioSplit {
        PrioSplit { bs, perc, prio }
    }

    #[test]
    fn percentage_one_value_or_per_direction() {
        let mut s = JobSpec::default();
        set(&mut s, "cmdprio_percentage", "30").unwrap();
        assert_eq!(s.engine.cmdprio.percentage, [30, 30]);
        set(&mut s, "cmdprio_percentage", "10,60").unwrap();
        assert_eq!(s.engine.cmdprio.percentage, [10, 60]);
        // An empty field keeps the value; a trim value is ignored.
        set(&mut s, "cmdprio_percentage", ",20,90").unwrap();
        assert_eq!(s.engine.cmdprio.percentage, [10, 20]);
        for bad in ["101", "-1", "x", "10,200", "1,2,3,4"] {
            assert!(set(&mut s, "cmdprio_percentage", bad).is_err(), "{bad}");
        }
        assert!(s.engine.cmdprio.in_use());
    }

    #[test]
    fn class_level_and_hint_ranges() {
        let mut s = JobSpec::default();
        set(&mut s, "cmdprio_class", "2,3").unwrap();
        set(&mut s, "cmdprio", "7").unwrap();
        set(&mut s, "cmdprio_hint", "1,0").unwrap();
        let c = &s.engine.cmdprio;
        assert_eq!((c.class, c.level, c.hint), ([2, 3], [7, 7], [1, 0]));
        // Class 0 is no class: fio's cmdprio_class starts at 1.
        for (k, bad) in [
            ("cmdprio_class", "0"),
            ("cmdprio_class", "4"),
            ("cmdprio", "8"),
            ("cmdprio_hint", "1024"),
        ] {
            assert!(set(&mut s, k, bad).is_err(), "{k}={bad}");
        }
        assert!(!s.engine.cmdprio.in_use(), "no share, no per-I/O priority");
    }

    #[test]
    fn bssplit_forms() {
        let mut s = JobSpec::default();
        set(
            &mut s,
            "cmdprio_bssplit",
            "64k/40:4k/10/1/2:16k/0:8k/5/2/3/4",
        )
        .unwrap();
        let want = vec![
            split(4096, 10, Some((1, 2, 0))),
            split(8192, 5, Some((2, 3, 4))),
            split(65536, 40, None),
        ];
        assert_eq!(s.engine.cmdprio.bssplit, Some([want.clone(), want]));
        // Per direction: reads, then writes; a trim list is ignored.
        set(&mut s, "cmdprio_bssplit", "4k/50,8k/20/3/0:8k/30,1m/100").unwrap();
        assert_eq!(
            s.engine.cmdprio.bssplit,
            Some([
                vec![split(4096, 50, None)],
                vec![split(8192, 20, Some((3, 0, 0))), split(8192, 30, None)]
            ])
        );
        // Only writes get priorities; `4k` and `4k/` have no share.
        set(&mut s, "cmdprio_bssplit", ",4k:8k/:16k/25%").unwrap();
        assert_eq!(
            s.engine.cmdprio.bssplit,
            Some([vec![], vec![split(16384, 25, None)]])
        );
        set(&mut s, "cmdprio_bssplit", "").unwrap();
        assert_eq!(s.engine.cmdprio.bssplit, None);
        set(&mut s, "kb_base", "1000").unwrap();
        set(&mut s, "cmdprio_bssplit", "4k/10").unwrap();
        assert_eq!(s.engine.cmdprio.bssplit.as_ref().unwrap()[0][0].bs, 4000);
    }

    #[test]
    fn bad_bssplits_are_refused() {
        for bad in [
            "4k/60:4k/50",
            "4k/101",
            "4k/10/1",
            "4k/10/4/0",
            "4k/10/1/8",
            "4k/10/1/0/1024",
            "4k/10/1/0/0/0",
            "0/10",
            "x/10",
            "4k/ten",
            "4k/10,8k/10,1k/10,2k/10",
        ] {
            let mut s = JobSpec::default();
            let e = set(&mut s, "cmdprio_bssplit", bad).unwrap_err();
            assert!(
                e.message.starts_with("option 'cmdprio_bssplit': "),
                "{bad}: {e}"
            );
        }
        let mut s = JobSpec::default();
        let e = set(&mut s, "cmdprio_bssplit", "4k/60:4k/50").unwrap_err();
        assert!(e.message.contains("add up to 110%"), "{e}");
    }
}
