//! Where a clone does I/O in each of its files and how much a loop does:
//! the one place that turns `size`, `filesize` (one size or a range),
//! `offset` (bytes or a percentage), `offset_increment`, `offset_align`,
//! `io_size`, `file_append`, `fill_device`, the number of files and the
//! clone's number into regions, file sizes and limits, by fio 3.33's
//! layout rules:
//!
//! - a file's region starts at `offset + clone × offset_increment`; a
//!   percentage is of the file's size before the run (0 for a file that
//!   does not exist yet) and rounds the start up to `offset_align` (else
//!   the smallest block size of any direction); `file_append` starts at
//!   the file's end instead;
//! - with `filesize`, the region runs from its start to the file's size
//!   (the given size, a size drawn from the range, or the existing size
//!   when it already lies in the range), and `size` only caps the total;
//! - without it, `size` is split evenly over the files and each region is
//!   that long from its start (the file grows to hold it); with no `size`
//!   the region runs to the end of the existing file or device;
//! - `size=N%` keeps that share of each file (whole smallest blocks), and
//!   `io_size=N%` that share of each region for the loop's amount;
//! - a loop does `size` bytes, or the regions' total when that is less
//!   (or `size` is not given); `io_size` in bytes replaces it and adds
//!   passes until it is done.
//!
//! Pure arithmetic: the planner probes the targets and passes what it saw.

use std::path::Path;

use super::error::RunError;
use super::plan::TargetKind;
use crate::job::spec::{Ddir, JobSpec, RandomGenerator};
use crate::job::value::{human_bytes, SizeOrPercent};
use crate::workload::taus::{self, Taus};
use crate::workload::Limits;

/// One target as the planner found it.
#[derive(Clone, Copy, Debug)]
pub struct Probed<'p> {
    pub path: &'p Path,
    pub kind: TargetKind,
    /// Its size now, or the size an earlier job of the run gives it (0
    /// when it does not exist and nothing creates it before).
    pub size: u64,
    /// With `fill_device` and no `size`: the free bytes where it lives.
    pub free: u64,
}

/// A file's region and the size the file needs before the I/O starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRegion {
    pub start: u64,
    pub len: u64,
    pub needed: u64,
}

/// The clone's regions, in file order, and its limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub files: Vec<FileRegion>,
    pub limits: Limits,
}

/// The smallest block size of the job over all three directions (used or
/// not): what percentage offsets, `size=N%` and `filesize` ranges align to.
pub fn layout_min_bs(spec: &JobSpec) -> u64 {
    Ddir::ALL
        .iter()
        .map(|d| spec.io.bs[d.idx()].min())
        .min()
        .unwrap_or(4096)
        .max(1)
}

/// `p` percent of `x`: exact for whole percentages.
fn percent_of(x: u64, p: f64) -> u64 {
    if p.fract() == 0.0 {
        (x as u128 * p as u128 / 100) as u64
    } else {
        (x as f64 * p / 100.0) as u64
    }
}

/// Where a file's region starts.
fn start_offset(spec: &JobSpec, clone: u32, t: &Probed, bs: u64) -> u64 {
    let f = &spec.file;
    if f.file_append && matches!(t.kind, TargetKind::Regular | TargetKind::Missing) {
        return t.size;
    }
    let mut align = false;
    let inc = match f.offset_increment {
        SizeOrPercent::Percent(p) => {
            align = true;
            percent_of(t.size, p)
        }
        SizeOrPercent::Bytes(b) => b,
    };
    let base = match f.offset {
        SizeOrPercent::Percent(p) => {
            align = true;
            percent_of(t.size, p)
        }
        SizeOrPercent::Bytes(b) => b,
    };
    let off = base.saturating_add(inc.saturating_mul(clone as u64));
    if !align {
        return off;
    }
    let a = if f.offset_align > 0 {
        f.offset_align
    } else {
        bs
    };
    off.div_ceil(a).saturating_mul(a)
}

/// What the sizes of targets without one (character devices, FIFOs, a
/// diskless engine) are taken to be: `size` over the files, when given.
fn known_size(spec: &JobSpec, t: &Probed, n: u64) -> Option<u64> {
    match t.kind {
        TargetKind::Regular | TargetKind::Missing | TargetKind::Block | TargetKind::Nvme => {
            Some(t.size)
        }
        _ => match spec.file.size {
            Some(SizeOrPercent::Bytes(b)) => Some(b / n.max(1)),
            _ => None,
        },
    }
}

/// The generator `filesize` ranges are drawn from, for this clone.
fn size_draws(spec: &JobSpec, thread_number: u64, seed: u64) -> Taus {
    let io = &spec.io;
    let s = taus::job_stream_seed(io, thread_number, taus::Stream::FileSize).unwrap_or(seed);
    Taus::new(s, io.random_generator == RandomGenerator::Tausworthe64)
}

/// The regions of a clone's files and its limits. `thread_number` counts
/// the clones of the run from 1 (this clone's place among them); `seed` is
/// the clone's seed, used for `filesize` ranges when the job asks for
/// unrepeatable draws.
pub fn layout(
    spec: &JobSpec,
    clone: u32,
    thread_number: u64,
    seed: u64,
    targets: &[Probed],
) -> Result<Layout, RunError> {
    let n = targets.len() as u64;
    let bs = layout_min_bs(spec);
    let size_bytes = match spec.file.size {
        Some(SizeOrPercent::Bytes(b)) => b,
        _ => 0,
    };
    // Without filesize: size split evenly (the first files one block more
    // when it does not split into whole blocks).
    let even = size_bytes.checked_div(n).unwrap_or(0);
    let mut extra = if n > 0 {
        (size_bytes - even * n) / bs
    } else {
        0
    };
    let mut draws = size_draws(spec, thread_number, seed);
    let mut files = Vec::with_capacity(targets.len());
    let mut total = 0u64;
    for t in targets {
        let start = start_offset(spec, clone, t, bs);
        let share = if extra > 0 {
            extra -= 1;
            even + bs
        } else {
            even
        };
        let len = region_len(spec, t, n, start, share, &mut draws, bs)?;
        let (len, needed) = within_target(spec, t, start, len)?;
        total = total.saturating_add(match spec.file.io_size {
            Some(SizeOrPercent::Percent(p)) if p != 100.0 => percent_of(len, p),
            _ => len,
        });
        files.push(FileRegion { start, len, needed });
    }
    Ok(Layout {
        files,
        limits: limits(spec, size_bytes, total, bs)?,
    })
}

/// How long one file's region is: from `fill_device`, `filesize`, the
/// file's `share` of `size`, or the rest of the file; then `size=N%`.
fn region_len(
    spec: &JobSpec,
    t: &Probed,
    n: u64,
    start: u64,
    share: u64,
    draws: &mut Taus,
    bs: u64,
) -> Result<u64, RunError> {
    let f = &spec.file;
    if f.fill_device && f.size.is_none() && f.filesize.is_none() {
        return Ok(fill_len(t, start, n, bs));
    }
    let len = match f.filesize {
        Some(range) => filesize_len(spec, t, n, start, range, draws, bs)?,
        None if share > 0 => share,
        None => rest_of_file(spec, t, n, start)?,
    };
    Ok(match f.size {
        Some(SizeOrPercent::Percent(p)) if p != 100.0 => {
            // A share of the file (in whole blocks), still ending at the
            // file's end at most.
            let file = start.saturating_add(len);
            let part = percent_of(file, p).min(file - start);
            part - part % bs
        }
        _ => len,
    })
}

/// The region cut at a device's end, and the size the file needs.
fn within_target(spec: &JobSpec, t: &Probed, start: u64, len: u64) -> Result<(u64, u64), RunError> {
    let (len, needed) = if matches!(t.kind, TargetKind::Block | TargetKind::Nvme) {
        if start >= t.size {
            return Err(beyond(spec, t, start));
        }
        (len.min(t.size - start), t.size)
    } else {
        (len, start.saturating_add(len))
    };
    if len == 0 {
        return Err(RunError::Plan(format!(
            "job '{}': '{}' leaves no bytes to do I/O to",
            spec.name,
            t.path.display()
        )));
    }
    Ok((len, needed))
}

/// The loop's amount: `size` capped by the regions' total (which it is
/// when `size` is not given), or `io_size` in bytes.
fn limits(spec: &JobSpec, size: u64, total: u64, bs: u64) -> Result<Limits, RunError> {
    let size = if size == 0 || (total > 0 && size > total) {
        total
    } else {
        size
    };
    if size < bs && !spec.file.fill_device {
        return Err(RunError::Plan(format!(
            "job '{}': the smallest block size ({bs}) is larger than the {} of I/O the files leave",
            spec.name,
            human_bytes(size, false)
        )));
    }
    let io_size = match spec.file.io_size {
        Some(SizeOrPercent::Bytes(b)) if b > 0 => Some(b),
        _ => None,
    };
    Ok(Limits {
        bytes: io_size.unwrap_or(size),
        io_size,
        size,
    })
}

fn beyond(spec: &JobSpec, t: &Probed, start: u64) -> RunError {
    RunError::Plan(format!(
        "job '{}': offset {start} is beyond the end of '{}' ({})",
        spec.name,
        t.path.display(),
        human_bytes(t.size, false)
    ))
}

/// No `size` (or a share of it) and no `filesize`: from the start to the
/// end of the existing file or device.
fn rest_of_file(spec: &JobSpec, t: &Probed, n: u64, start: u64) -> Result<u64, RunError> {
    let job = &spec.name;
    let size = known_size(spec, t, n).filter(|s| *s > 0).ok_or_else(|| {
        RunError::Plan(match spec.file.size {
            Some(SizeOrPercent::Percent(p)) => format!(
                "job '{job}': size={p}% needs an existing file or device, and '{}' has no size",
                t.path.display()
            ),
            _ => format!(
                "job '{job}': no size given and '{}' {} (set size= or filesize=)",
                t.path.display(),
                if t.kind == TargetKind::Missing {
                    "does not exist"
                } else {
                    "has no known size"
                }
            ),
        })
    })?;
    if start > size {
        return Err(beyond(spec, t, start));
    }
    Ok(size - start)
}

/// `filesize`: a file whose size lies outside the range gets the given
/// size (or one drawn from the range, in whole smallest blocks); one
/// already in the range keeps its own. The region ends at the file's end.
fn filesize_len(
    spec: &JobSpec,
    t: &Probed,
    n: u64,
    start: u64,
    (lo, hi): (u64, u64),
    draws: &mut Taus,
    bs: u64,
) -> Result<u64, RunError> {
    let existing = known_size(spec, t, n).unwrap_or(u64::MAX);
    let file = if existing < lo || existing > hi {
        if start > lo {
            return Err(RunError::Plan(format!(
                "job '{}': offset {start} is beyond filesize {} of '{}'",
                spec.name,
                human_bytes(lo, false),
                t.path.display()
            )));
        }
        if lo == hi {
            lo
        } else {
            let v = draws.scaled(lo, hi - lo);
            v - v % bs
        }
    } else {
        existing
    };
    if start > file {
        return Err(beyond(spec, t, start));
    }
    Ok(file - start)
}

/// `fill_device` without a size: the device to its end, a regular file as
/// far as its share of the free space (and what it holds) goes.
fn fill_len(t: &Probed, start: u64, n: u64, bs: u64) -> u64 {
    match t.kind {
        TargetKind::Block | TargetKind::Nvme => t.size.saturating_sub(start),
        TargetKind::Regular | TargetKind::Missing => {
            (t.free.saturating_add(t.size) / n.max(1)).max(bs)
        }
        _ => FILL_UNBOUNDED,
    }
}

/// Size used with `fill_device` where nothing bounds the target.
pub const FILL_UNBOUNDED: u64 = 1 << 60;
