//! `zonemode=zbd` around the workload: the planner's checks and zone
//! geometry (what fio 3.33 refuses is refused here, in one line, before
//! anything runs), the alignment of each file's region to whole zones,
//! and, when a job starts, its zones as the device reports them (or
//! emulated ones on a regular file or a device that is not zoned), handed
//! to the workload (`workload::zbd`).

use crate::sys::AsRawFd;

use super::error::RunError;
use super::plan::{PlannedJob, TargetKind};
use crate::host::zones::{self, Access, Cond, Model};
use crate::job::spec::{Ddir, ZoneMode};
use crate::workload::zbd::{ZbdCfg, ZbdDevice, ZbdFile, ZoneState};
use std::sync::{Arc, Mutex, Weak};

/// fio's limit on open zones.
const MAX_OPEN_ZONES: u32 = 4096;

/// A file's zones as planned: their size and capacity, how the device is
/// zoned, how to reach it, and the open-zone limit that applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZbdGeom {
    pub zone_size: u64,
    /// Capacity of emulated zones (`zonecapacity`, else the zone size).
    pub capacity: u64,
    pub model: Model,
    /// `None`: emulated zones.
    pub access: Option<Access>,
    /// Zones open at once (0: not tracked).
    pub max_open: u32,
}

fn refuse(job: &PlannedJob, why: String) -> RunError {
    RunError::Plan(format!("job '{}': zonemode=zbd: {why}", job.spec.name))
}

/// Checks a `zonemode=zbd` job and gives each file its zone geometry and
/// a region of whole zones (moving its start up and its end down to zone
/// boundaries, with a notice, as fio does).
pub fn plan_job(job: &mut PlannedJob) -> Result<(), RunError> {
    let spec = job.spec.clone();
    let io = &spec.io;
    if io.zonemode != ZoneMode::Zbd {
        return Ok(());
    }
    let trims = io.rw.has(Ddir::Trim);
    if trims && !matches!(io.bs[2], crate::job::spec::BlockSizes::Range { lo, hi } if lo == hi) {
        return Err(refuse(
            job,
            "bsrange and bssplit are not allowed for trims (a trim resets a whole zone)".into(),
        ));
    }
    if io.zoneskip > 0 {
        return Err(refuse(job, "zoneskip is not supported by iomark".into()));
    }
    let writes = io.rw.has(Ddir::Write) && !spec.verify.verify_only;
    for i in 0..job.files.len() {
        let geom = geometry(job, i, writes)?;
        if trims && io.bs[2].min() != geom.zone_size {
            return Err(refuse(
                job,
                format!(
                    "'{}': the trim block size {} is not the zone size {} (a trim resets a zone)",
                    job.files[i].path.display(),
                    io.bs[2].min(),
                    geom.zone_size
                ),
            ));
        }
        align_region(job, i, geom.zone_size)?;
        job.files[i].zbd = Some(geom);
    }
    Ok(())
}

/// The zone geometry of file `i` of `job`.
fn geometry(job: &PlannedJob, i: usize, writes: bool) -> Result<ZbdGeom, RunError> {
    let spec = &job.spec;
    let f = &job.files[i];
    let probed = match f.kind {
        TargetKind::Block | TargetKind::Nvme => zones::probe(&f.path).map_err(|e| {
            refuse(
                job,
                format!("cannot read the zones of '{}': {e}", f.path.display()),
            )
        })?,
        _ => None,
    };
    let Some((dev, access)) = probed else {
        return emulated(job, i);
    };
    if dev.zone_size == 0 {
        return Err(refuse(
            job,
            format!("'{}' reports a zone size of 0", f.path.display()),
        ));
    }
    if spec.io.zonesize != 0 && spec.io.zonesize != dev.zone_size {
        return Err(refuse(
            job,
            format!(
                "zonesize {} does not match the zone size of '{}' ({})",
                spec.io.zonesize,
                f.path.display(),
                dev.zone_size
            ),
        ));
    }
    if f.kind == TargetKind::Block && dev.model == Model::HostManaged && writes && !spec.sync.direct
    {
        return Err(refuse(
            job,
            format!(
                "writing to the host-managed zoned device '{}' needs direct=1",
                f.path.display()
            ),
        ));
    }
    let max_open = open_limit(job, &dev)?;
    Ok(ZbdGeom {
        zone_size: dev.zone_size,
        capacity: dev.zone_size,
        model: dev.model,
        access: Some(access),
        max_open,
    })
}

/// Zones emulated on a target that is not zoned: `zonesize` (and
/// `zonecapacity`) are needed.
fn emulated(job: &PlannedJob, i: usize) -> Result<ZbdGeom, RunError> {
    let spec = &job.spec;
    let f = &job.files[i];
    let (size, cap) = (spec.io.zonesize, spec.io.zbd.zonecapacity);
    let shown = f.path.display();
    if size == 0 {
        return Err(refuse(
            job,
            format!("'{shown}' is not a zoned device: zonesize is needed to emulate zones on it"),
        ));
    }
    if size < 512 {
        return Err(refuse(job, "zonesize must be at least 512 bytes".into()));
    }
    if cap > size {
        return Err(refuse(
            job,
            format!("zonecapacity {cap} is larger than zonesize {size}"),
        ));
    }
    // the file as it is before the run (as fio, which sizes zones first)
    let file_size = match f.kind {
        TargetKind::Regular | TargetKind::Missing => f.existing_size,
        _ => f.needed_size.max(f.existing_size),
    };
    if file_size < size {
        return Err(refuse(
            job,
            format!("'{shown}' ({file_size} bytes) is smaller than zonesize {size}"),
        ));
    }
    let max_open = spec.io.zbd.max_open_zones;
    if max_open > MAX_OPEN_ZONES {
        return Err(refuse(
            job,
            format!("max_open_zones is larger than {MAX_OPEN_ZONES}"),
        ));
    }
    if spec.io.zbd.job_max_open_zones > 0 && max_open == 0 {
        return Err(refuse(
            job,
            "job_max_open_zones cannot be used without a global open zones limit".into(),
        ));
    }
    Ok(ZbdGeom {
        zone_size: size,
        capacity: if cap == 0 { size } else { cap },
        model: Model::None,
        access: None,
        max_open,
    })
}

/// The open-zone limit of a zoned device: the job's, which must not
/// exceed the device's (unless `ignore_zone_limits`), else the device's.
fn open_limit(job: &PlannedJob, dev: &zones::Zoned) -> Result<u32, RunError> {
    let z = &job.spec.io.zbd;
    let user = z.max_open_zones;
    let limit = if dev.model != Model::HostManaged || z.ignore_zone_limits || dev.max_open == 0 {
        user
    } else if user == 0 {
        dev.max_open
    } else if user <= dev.max_open {
        user
    } else {
        return Err(refuse(
            job,
            format!(
                "max_open_zones ({user}) is larger than the device's limit ({})",
                dev.max_open
            ),
        ));
    };
    if z.job_max_open_zones > 0 && limit == 0 {
        return Err(refuse(
            job,
            "job_max_open_zones cannot be used without a global open zones limit".into(),
        ));
    }
    Ok(limit)
}

/// Moves the region of file `i` to whole zones (a writing job's start up
/// to the next zone boundary, its end down to one), saying so once the
/// region is known to hold a zone.
fn align_region(job: &mut PlannedJob, i: usize, zone: u64) -> Result<(), RunError> {
    let writes = job.spec.io.rw != crate::job::spec::RwPattern::Read
        && job.spec.io.rw != crate::job::spec::RwPattern::RandRead;
    let r = job.files[i].region;
    if !writes || r.len == 0 {
        return Ok(());
    }
    let shown = job.files[i].path.display().to_string();
    let too_small = || refuse(job, format!("'{shown}': io_size must be at least one zone"));
    let (mut start, mut len) = (r.start, r.len);
    let mut notes = Vec::new();
    if start % zone != 0 {
        let up = start.div_ceil(zone) * zone;
        if up >= start + len {
            return Err(too_small());
        }
        notes.push(format!("{shown}: rounded up offset from {start} to {up}"));
        len -= up - start;
        start = up;
    }
    let end = (start + len) / zone * zone;
    if end != start + len {
        if end <= start {
            return Err(too_small());
        }
        notes.push(format!(
            "{shown}: rounded down io_size from {len} to {}",
            end - start
        ));
        len = end - start;
    }
    for n in notes {
        note(&n);
    }
    job.files[i].region.start = start;
    job.files[i].region.len = len;
    Ok(())
}

fn note(msg: &str) {
    crate::run::output::stderr_line(&format!("iomark: {msg}"));
}

/// The zone state of each device (or file with emulated zones) in use,
/// by path: every job and clone that uses it shares one state, made from
/// the device's report when the first of them starts.
static DEVICES: Mutex<Vec<(std::path::PathBuf, Weak<ZbdDevice>)>> = Mutex::new(Vec::new());

/// The shared zone state of `path`, made by `make` when no running job
/// holds one.
fn shared_device(
    path: &std::path::Path,
    make: impl FnOnce() -> std::io::Result<Arc<ZbdDevice>>,
) -> std::io::Result<Arc<ZbdDevice>> {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut reg = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|(_, w)| w.strong_count() > 0);
    if let Some(dev) = reg
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(dev);
    }
    let dev = make()?;
    reg.push((key, Arc::downgrade(&dev)));
    Ok(dev)
}

/// The workload's view of a job's zones, taken when it starts: each
/// file's zones as its device reports them when the first job using it
/// starts (or empty emulated ones), shared with the other jobs.
pub fn zone_files(job: &PlannedJob) -> std::io::Result<Vec<ZbdFile>> {
    let spec = &job.spec;
    let io = &spec.io;
    let mut out = Vec::new();
    for f in &job.files {
        let Some(g) = &f.zbd else {
            continue;
        };
        let size = f.needed_size.max(f.existing_size);
        let dev = shared_device(&f.path, || {
            let states = match g.access {
                Some(access) => {
                    let dev = std::fs::File::open(&f.path)?;
                    zones::report(dev.as_raw_fd(), access, g.zone_size, size)?
                        .into_iter()
                        .map(state)
                        .collect()
                }
                None => {
                    let n = size.div_ceil(g.zone_size);
                    (0..n)
                        .map(|k| {
                            let s = k * g.zone_size;
                            ZoneState::new(s, g.capacity, s, true, false)
                        })
                        .collect()
                }
            };
            Ok(ZbdDevice::new(states, g.max_open))
        })?;
        let cfg = ZbdCfg {
            min_bs: [0, 1, 2].map(|d| io.bs[d].min().max(1)),
            verify: spec.verify.verify != crate::job::spec::VerifyKind::None,
            random: io.rw.is_random(),
            mixed: io.rw.has(Ddir::Read) && io.rw.has(Ddir::Write),
            read_beyond_wp: io.zbd.read_beyond_wp,
            max_open: g.max_open,
            job_max_open: io.zbd.job_max_open_zones,
            reset_threshold: io.zbd.zone_reset_threshold,
            reset_frequency: io.zbd.zone_reset_frequency,
            device_resets: g.access.is_some(),
        };
        out.push(ZbdFile::new(
            dev,
            g.zone_size,
            f.region.start,
            f.region.len,
            cfg,
        ));
    }
    Ok(out)
}

/// A reported zone as the workload tracks it: full zones (and
/// conventional ones) have their write pointer at their capacity.
fn state(z: zones::Zone) -> ZoneState {
    let offline = matches!(z.cond, Cond::Offline | Cond::ReadOnly);
    let wp = match z.cond {
        Cond::NotWp | Cond::Full => z.start + z.capacity,
        _ if offline => z.start,
        _ => z.wp,
    };
    let mut s = ZoneState::new(z.start, z.capacity, wp, z.seq, offline);
    s.was_open = matches!(z.cond, Cond::ImplicitOpen | Cond::ExplicitOpen);
    s
}

/// Resets `[start, start + len)` of file `f` of `job` on its device.
pub fn reset(
    job: &PlannedJob,
    file: usize,
    fd: crate::sys::RawFd,
    start: u64,
    len: u64,
) -> std::io::Result<()> {
    let f = &job.files[file];
    let Some(g) = &f.zbd else {
        return Ok(());
    };
    let Some(access) = g.access else {
        return Ok(());
    };
    if fd >= 0 {
        return zones::reset(fd, access, start, len, g.zone_size);
    }
    let dev = std::fs::OpenOptions::new().write(true).open(&f.path)?;
    zones::reset(dev.as_raw_fd(), access, start, len, g.zone_size)
}
