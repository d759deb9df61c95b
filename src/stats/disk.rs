//! Disk statistics for the devices under the jobs' files (Linux): the
//! kernel's per-device counters (`/sys/block/DEV/stat`) read before and
//! after the run, reported as differences.
//!
//! A file's device is found from its `st_dev` (or `st_rdev` for a block
//! device) through `/sys/dev/block/MAJ:MIN`; a partition counts as its
//! whole disk. Device-mapper and md devices are reported with their
//! underlying devices (`slaves`), whose averaged counters become the
//! `aggr*` figures, and the underlying devices are listed too.
//!
//! Reading happens outside the timed phase only.

use crate::sys::ext::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The counters of one device (`/sys/block/DEV/stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

impl DiskCounters {
    /// Parses the text of a `stat` file.
    pub fn parse(text: &str) -> Option<DiskCounters> {
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        if v.len() < 11 {
            return None;
        }
        Some(DiskCounters {
            ios: [v[0], v[4]],
            merges: [v[1], v[5]],
            sectors: [v[2], v[6]],
            ticks: [v[3], v[7]],
            io_ticks: v[9],
            time_in_queue: v[10],
        })
    }

    fn since(&self, before: &DiskCounters) -> DiskCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        DiskCounters {
            ios: [d(self.ios[0], before.ios[0]), d(self.ios[1], before.ios[1])],
            merges: [
                d(self.merges[0], before.merges[0]),
                d(self.merges[1], before.merges[1]),
            ],
            sectors: [
                d(self.sectors[0], before.sectors[0]),
                d(self.sectors[1], before.sectors[1]),
            ],
            ticks: [
                d(self.ticks[0], before.ticks[0]),
                d(self.ticks[1], before.ticks[1]),
            ],
            io_ticks: d(self.io_ticks, before.io_ticks),
            time_in_queue: d(self.time_in_queue, before.time_in_queue),
        }
    }
}

/// Averages over the underlying devices of a dm/md device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskAggregate {
    pub slaves: u64,
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub ticks: [u64; 2],
    pub in_queue: u64,
    /// The highest utilization among them (%).
    #[serde(with = "super::wire::f64_bits")]
    pub max_util: f64,
}

/// One reported device (serializable exactly, for results sent between
/// hosts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskReport {
    pub name: String,
    pub delta: DiskCounters,
    /// Busy time over the run's duration, in percent (at most 100).
    #[serde(with = "super::wire::f64_bits")]
    pub util: f64,
    pub aggr: Option<DiskAggregate>,
}

/// A device being watched and its counters at the start.
#[derive(Clone, Debug)]
struct Watched {
    name: String,
    stat: PathBuf,
    slaves: Vec<String>,
    before: DiskCounters,
}

/// Counters read before the run, to be compared with the end.
#[derive(Clone, Debug, Default)]
pub struct DiskWatch {
    devices: Vec<Watched>,
    started: Option<std::time::Instant>,
}

fn sys_block() -> &'static Path {
    Path::new("/sys/block")
}

/// The whole-disk name in /sys/block for a sysfs device directory
/// (a partition's parent).
fn disk_of_sysdir(dir: &Path) -> Option<String> {
    let dir = if dir.join("partition").exists() {
        dir.parent()?
    } else {
        dir
    };
    let name = dir.file_name()?.to_str()?.to_string();
    sys_block()
        .join(&name)
        .join("stat")
        .exists()
        .then_some(name)
}

/// The disk holding `path` (a file, directory or block device); for a
/// path that does not exist yet, its nearest existing parent.
pub fn disk_for_path(path: &Path) -> Option<String> {
    let mut p = path.to_path_buf();
    let meta = loop {
        match std::fs::metadata(&p) {
            Ok(m) => break m,
            Err(_) => {
                if !p.pop() || p.as_os_str().is_empty() {
                    p = PathBuf::from(".");
                    break std::fs::metadata(&p).ok()?;
                }
            }
        }
    };
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = crate::sys::major_minor(dev);
    if major == 0 {
        // Anonymous devices (tmpfs, overlayfs, …) have no disk counters.
        return None;
    }
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let dir = std::fs::canonicalize(link).ok()?;
    disk_of_sysdir(&dir)
}

/// The whole disks under a dm/md device (`slaves`).
fn slaves_of(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys_block().join(name).join("slaves")) else {
        return out;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for e in entries {
        if let Some(d) = std::fs::canonicalize(&e)
            .ok()
            .and_then(|dir| disk_of_sysdir(&dir))
        {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

fn read_counters(stat: &Path) -> Option<DiskCounters> {
    DiskCounters::parse(&std::fs::read_to_string(stat).ok()?)
}

impl DiskWatch {
    /// Starts watching the disks under `paths` (with their underlying
    /// devices, recursively), reading their counters now.
    pub fn start<'a>(paths: impl IntoIterator<Item = &'a Path>) -> DiskWatch {
        let mut w = DiskWatch::default();
        for p in paths {
            if let Some(d) = disk_for_path(p) {
                w.add(&d, 0);
            }
        }
        w.started = Some(std::time::Instant::now());
        w
    }

    fn add(&mut self, name: &str, depth: u32) {
        if depth > 8 || self.devices.iter().any(|d| d.name == name) {
            return;
        }
        let stat = sys_block().join(name).join("stat");
        let Some(before) = read_counters(&stat) else {
            return;
        };
        let slaves = slaves_of(name);
        self.devices.push(Watched {
            name: name.to_string(),
            stat,
            slaves: slaves.clone(),
            before,
        });
        for s in slaves {
            self.add(&s, depth + 1);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Reads the counters again and reports the differences.
    pub fn finish(&self) -> Vec<DiskReport> {
        let ms = self
            .started
            .map(|s| s.elapsed().as_millis() as u64)
            .unwrap_or(0)
            .max(1);
        let mut out: Vec<DiskReport> = self
            .devices
            .iter()
            .map(|d| {
                let now = read_counters(&d.stat).unwrap_or(d.before);
                let delta = now.since(&d.before);
                DiskReport {
                    name: d.name.clone(),
                    delta,
                    util: (delta.io_ticks as f64 * 100.0 / ms as f64).min(100.0),
                    aggr: None,
                }
            })
            .collect();
        for (i, d) in self.devices.iter().enumerate() {
            if d.slaves.is_empty() {
                continue;
            }
            let mut a = DiskAggregate::default();
            for s in &d.slaves {
                if let Some(r) = out.iter().find(|r| &r.name == s) {
                    a.slaves += 1;
                    for k in 0..2 {
                        a.ios[k] += r.delta.ios[k];
                        a.merges[k] += r.delta.merges[k];
                        a.ticks[k] += r.delta.ticks[k];
                    }
                    a.in_queue += r.delta.time_in_queue;
                    a.max_util = a.max_util.max(r.util);
                }
            }
            if let Some(n) = std::num::NonZeroU64::new(a.slaves) {
                for k in 0..2 {
                    a.ios[k] /= n;
                    a.merges[k] /= n;
                    a.ticks[k] /= n;
                }
                a.in_queue /= n;
                out[i].aggr = Some(a);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_stat() {
        let c = DiskCounters::parse(
            "   14786        2   812042      656     7153        0   123456     2682        0     3467     3467",
        )
        .unwrap();
        assert_eq!(c.ios, [14786, 7153]);
        assert_eq!(c.merges, [2, 0]);
        assert_eq!(c.ticks, [656, 2682]);
        assert_eq!(c.io_ticks, 3467);
        assert_eq!(c.time_in_queue, 3467);
        assert!(DiskCounters::parse("1 2 3").is_none());
    }

    #[test]
    fn md_and_dm_devices_get_averaged_slave_figures() {
        let dir = std::env::temp_dir().join(format!("iomark-disk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stat = |name: &str, ios: u64, ticks: u64| {
            let p = dir.join(name);
            std::fs::write(
                &p,
                format!(
                    "{ios} 1 8 {ticks} {ios} 2 16 {ticks} 0 {ticks} {}",
                    2 * ticks
                ),
            )
            .unwrap();
            p
        };
        let zero = DiskCounters::default();
        let dev = |name: &str, slaves: &[&str]| Watched {
            name: name.into(),
            stat: dir.join(name),
            slaves: slaves.iter().map(|s| s.to_string()).collect(),
            before: zero,
        };
        stat("md0", 100, 10);
        stat("sda", 60, 40);
        stat("sdb", 40, 20);
        let w = DiskWatch {
            devices: vec![
                dev("md0", &["sda", "sdb"]),
                dev("sda", &[]),
                dev("sdb", &[]),
            ],
            started: Some(std::time::Instant::now() - std::time::Duration::from_millis(80)),
        };
        let r = w.finish();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].delta.ios, [100, 100]);
        let a = r[0].aggr.expect("aggregate for md0");
        assert_eq!(a.slaves, 2);
        assert_eq!(a.ios, [50, 50]);
        assert_eq!(a.merges, [1, 2]);
        assert_eq!(a.ticks, [30, 30]);
        assert_eq!(a.in_queue, 60);
        // sda was busy 40 ms of about 80: the busiest slave's share.
        assert!((a.max_util - r[1].util).abs() < 1e-9 && a.max_util > r[2].util);
        assert!(r[1].aggr.is_none());
        let text = crate::report::normal::disk_lines(&r);
        assert!(
            text.starts_with("    md0: ios=100/100, merge=1/2, ticks=10/10, in_queue=20, util=")
        );
        assert!(text.contains(
            ", aggrios=50/50, aggrmerge=1/2, aggrticks=30/30, aggrin_queue=60, aggrutil="
        ));
        assert!(text.contains("\n  sda: ios=60/60"));
    }

    #[test]
    fn finds_the_disk_of_the_root_filesystem() {
        // Skips quietly where / is not on a block device (containers).
        if let Some(d) = disk_for_path(Path::new("/")) {
            assert!(sys_block().join(&d).join("stat").exists());
            assert!(!sys_block().join(&d).join("partition").exists());
        }
    }
}
