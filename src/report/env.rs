//! iomark's own additions to the JSON document, under the top-level
//! "iomark" key so fio's layout stays untouched:
//!
//! - `environment`: the host (kernel, CPU model and count, RAM, CPU
//!   governor) and, for each target, its filesystem, mount options, block
//!   device, device model, I/O scheduler and rotational flag — so a result
//!   says what it measured;
//! - `warnings`: cache honesty — buffered jobs whose working set fits in
//!   free RAM (the page cache probably served them), and targets on
//!   memory-backed filesystems;
//! - `timeline`: per-job throughput over time, parallel to `jobs`.
//!
//! Everything here is read from /proc and /sys after (or before) a run; a
//! value that cannot be found is left out, never guessed. Nothing here
//! runs on the I/O path.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::Report;
use crate::job::spec::JobSpec;
use crate::job::value::SizeOrPercent;

/// The host, independent of any target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub machine: String,
    pub cpu_model: String,
    pub cpus: u64,
    pub ram_bytes: u64,
    pub mem_available_bytes: u64,
    pub cpu_governor: Option<String>,
}

/// What lies under one target path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Target {
    pub path: String,
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_source: Option<String>,
    pub mount_options: Option<String>,
    /// The whole disk (for a partition, its parent; for dm/md, itself).
    pub device: Option<String>,
    /// Disks under a dm/md device.
    pub slaves: Vec<String>,
    pub device_model: Option<String>,
    pub device_size_bytes: Option<u64>,
    pub scheduler: Option<String>,
    pub rotational: Option<bool>,
    /// The disk's /sys/block directory.
    pub sys_dir: Option<PathBuf>,
}

impl Target {
    /// tmpfs, ramfs and friends keep data in memory.
    pub fn memory_backed(&self) -> bool {
        matches!(
            self.fs_type.as_deref(),
            Some("tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs")
        )
    }
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn c_chars(a: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = a
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `MemTotal`/`MemAvailable` from /proc/meminfo, in bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    s.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kib * 1024)
    })
}

pub fn host() -> Host {
    // SAFETY: uname fills the zeroed struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::uname(&mut u) } == 0;
    let (hostname, kernel, machine) = if ok {
        (
            c_chars(&u.nodename),
            format!(
                "{} {} {}",
                c_chars(&u.sysname),
                c_chars(&u.release),
                c_chars(&u.version)
            ),
            c_chars(&u.machine),
        )
    } else {
        Default::default()
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = ["model name", "Processor", "cpu model", "Hardware", "cpu"]
        .iter()
        .find_map(|k| {
            cpuinfo.lines().find_map(|l| {
                let (key, v) = l.split_once(':')?;
                (key.trim() == *k && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
        .unwrap_or_default();
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as u64;
    Host {
        hostname,
        kernel,
        machine,
        cpu_model,
        cpus,
        ram_bytes: meminfo("MemTotal").unwrap_or(0),
        mem_available_bytes: meminfo("MemAvailable").unwrap_or(0),
        cpu_governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
    }
}

/// Decodes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = i + 4 <= b.len()
            && b[i] == b'\\'
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c));
        if octal {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Mount {
    point: String,
    options: String,
    fs_type: String,
    source: String,
    super_options: String,
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let lf: Vec<&str> = left.split(' ').collect();
            let rf: Vec<&str> = right.split(' ').collect();
            if lf.len() < 6 || rf.len() < 3 {
                return None;
            }
            Some(Mount {
                point: unescape(lf[4]),
                options: lf[5].to_string(),
                fs_type: rf[0].to_string(),
                source: unescape(rf[1]),
                super_options: rf[2].to_string(),
            })
        })
        .collect()
}

/// The mount holding `path` (canonical): the last (topmost) entry with
/// the longest mount point that is a prefix of it.
fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.point) && best.is_none_or(|b| m.point.len() >= b.point.len()) {
            best = Some(m);
        }
    }
    best
}

/// The /sys/block directory of the disk behind `major:minor`.
fn sys_disk(major: u32, minor: u32) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if dir.join("partition").exists() {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir)
    }
}

fn disk_model(disk: &Path) -> Option<String> {
    let model = read_trim(disk.join("device/model"));
    let vendor = read_trim(disk.join("device/vendor"));
    match (vendor, model) {
        (Some(v), Some(m)) if !v.starts_with("0x") && !m.starts_with(&v) => {
            Some(format!("{v} {m}"))
        }
        (_, Some(m)) => Some(m),
        (v, None) => {
            let driver = std::fs::read_link(disk.join("device/driver"))
                .ok()
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
            match (driver, v) {
                (Some(d), Some(v)) => Some(format!("{d} (vendor {v})")),
                (Some(d), None) => Some(d),
                (None, v) => v,
            }
        }
    }
}

fn fill_device(t: &mut Target, disk: &Path) {
    let name = disk
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    t.device = Some(name);
    t.sys_dir = Some(disk.to_path_buf());
    t.device_size_bytes = read_trim(disk.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .map(|s| s * 512);
    t.scheduler = read_trim(disk.join("queue/scheduler")).map(|s| {
        s.split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .unwrap_or(&s)
            .to_string()
    });
    t.rotational = read_trim(disk.join("queue/rotational")).map(|s| s == "1");
    t.device_model = disk_model(disk);
    // dm/md: describe the disks underneath.
    if let Ok(rd) = std::fs::read_dir(disk.join("slaves")) {
        let mut slaves: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        slaves.sort();
        if let Some(first) = slaves.first() {
            let sdisk = std::fs::canonicalize(format!("/sys/class/block/{first}"))
                .ok()
                .map(|d| {
                    if d.join("partition").exists() {
                        d.parent().map(Path::to_path_buf).unwrap_or(d)
                    } else {
                        d
                    }
                });
            if let Some(sd) = sdisk {
                if t.device_model.is_none() {
                    t.device_model = disk_model(&sd);
                }
                if t.rotational.is_none() {
                    t.rotational = read_trim(sd.join("queue/rotational")).map(|s| s == "1");
                }
            }
        }
        t.slaves = slaves;
    }
}

fn dev_of(path: &Path) -> Option<(u64, bool)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if m.file_type().is_block_device() {
        Some((m.rdev(), true))
    } else {
        Some((m.dev(), false))
    }
}

/// Describes the filesystem and device under `path` (a file, directory or
/// block device). A missing file is described through its directory.
pub fn target(path: &Path) -> Target {
    let mut t = Target {
        path: path.display().to_string(),
        ..Target::default()
    };
    let mut p = path.to_path_buf();
    if !p.exists() {
        p = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
    }
    let canon = std::fs::canonicalize(&p).unwrap_or(p.clone());
    let Some((dev, is_block)) = dev_of(&canon) else {
        return t;
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|s| parse_mountinfo(&s))
        .unwrap_or_default();
    if !is_block {
        if let Some(m) = mount_of(&mounts, &canon) {
            t.fs_type = Some(m.fs_type.clone());
            t.mount_point = Some(m.point.clone());
            t.mount_source = Some(m.source.clone());
            // Per-mount options, then the filesystem's own not already listed.
            let mut opts: Vec<&str> = m.options.split(',').collect();
            for o in m.super_options.split(',') {
                if !o.is_empty() && !opts.contains(&o) {
                    opts.push(o);
                }
            }
            t.mount_options = Some(opts.join(","));
        }
    }
    let disk = sys_disk(major, minor).or_else(|| {
        // Filesystems with anonymous device numbers (btrfs, overlay…):
        // try the mount source when it is a block device.
        let src = t.mount_source.as_deref()?;
        let (d, blk) = dev_of(Path::new(src))?;
        if blk {
            sys_disk(libc::major(d), libc::minor(d))
        } else {
            None
        }
    });
    if let Some(d) = disk {
        fill_device(&mut t, &d);
    }
    t
}

fn opt<T: Into<Value>>(m: &mut Map<String, Value>, k: &str, v: Option<T>) {
    if let Some(v) = v {
        m.insert(k.into(), v.into());
    }
}

pub fn host_json(h: &Host) -> Value {
    let mut m = Map::new();
    m.insert("hostname".into(), json!(h.hostname));
    m.insert("kernel".into(), json!(h.kernel));
    m.insert("machine".into(), json!(h.machine));
    m.insert("cpu_model".into(), json!(h.cpu_model));
    m.insert("cpus".into(), json!(h.cpus));
    m.insert("ram_bytes".into(), json!(h.ram_bytes));
    m.insert("mem_available_bytes".into(), json!(h.mem_available_bytes));
    opt(&mut m, "cpu_governor", h.cpu_governor.clone());
    Value::Object(m)
}

pub fn target_json(t: &Target) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), json!(t.path));
    opt(&mut m, "fs_type", t.fs_type.clone());
    opt(&mut m, "mount_point", t.mount_point.clone());
    opt(&mut m, "mount_source", t.mount_source.clone());
    opt(&mut m, "mount_options", t.mount_options.clone());
    opt(&mut m, "device", t.device.clone());
    if !t.slaves.is_empty() {
        m.insert("slaves".into(), json!(t.slaves));
    }
    opt(&mut m, "device_model", t.device_model.clone());
    opt(&mut m, "device_size_bytes", t.device_size_bytes);
    opt(&mut m, "scheduler", t.scheduler.clone());
    opt(&mut m, "rotational", t.rotational);
    if t.memory_backed() {
        m.insert("memory_backed".into(), json!(true));
    }
    Value::Object(m)
}

/// The environment record for a set of target paths (duplicates and
/// paths on the same filesystem and device are described once).
pub fn environment_json(paths: &[PathBuf]) -> Value {
    let h = host();
    let mut seen = BTreeSet::new();
    let mut targets = Vec::new();
    for p in paths {
        let t = target(p);
        let key = (t.mount_point.clone(), t.device.clone());
        if seen.insert(key) {
            targets.push(target_json(&t));
        }
    }
    json!({
        "host": host_json(&h),
        "targets": targets,
    })
}

/// The paths a job does I/O on (its files, or its directory), none for
/// the null engine.
pub fn job_targets(spec: &JobSpec) -> Vec<PathBuf> {
    if spec.io.ioengine.info().caps.diskless {
        return Vec::new();
    }
    let dirs: Vec<PathBuf> = if spec.file.directories.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        spec.file.directories.iter().map(PathBuf::from).collect()
    };
    if spec.file.filenames.is_empty() {
        return dirs;
    }
    spec.file
        .filenames
        .iter()
        .map(|f| {
            let p = PathBuf::from(f);
            if p.is_absolute() {
                p
            } else {
                dirs[0].join(p)
            }
        })
        .collect()
}

/// A cache-honesty warning.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// "page-cache", "memory-filesystem" or "cpu-overcommit".
    pub kind: &'static str,
    pub job: String,
    pub message: String,
}

/// `64.0MiB`, `22.6GiB`: binary units with one decimal.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes}B")
    } else {
        format!("{v:.1}{}", units[i])
    }
}

/// Bytes a job's clones touch, when the job says (size or filesize) or its
/// files exist; None when unknown.
fn working_set(spec: &JobSpec) -> Option<u64> {
    let per_clone = match spec.file.size {
        Some(SizeOrPercent::Bytes(b)) if b > 0 => b,
        _ => match spec.file.filesize {
            Some((_, hi)) if hi > 0 => hi * spec.file.nrfiles.max(1) as u64,
            _ => {
                let files = job_targets(spec);
                let sizes: Vec<u64> = files
                    .iter()
                    .filter_map(|p| std::fs::metadata(p).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .collect();
                if sizes.is_empty() || sizes.len() != files.len() {
                    return None;
                }
                return Some(sizes.iter().sum());
            }
        },
    };
    // Clones share named files; otherwise each has its own.
    let clones = if spec.file.filenames.is_empty() {
        spec.ctl.numjobs.max(1) as u64
    } else {
        1
    };
    Some(per_clone.saturating_mul(clones))
}

/// Cache-honesty warnings for a set of jobs, once per job name.
pub fn cache_warnings<'a>(specs: impl IntoIterator<Item = &'a JobSpec>) -> Vec<Warning> {
    let avail = meminfo("MemAvailable").unwrap_or(0);
    let mut out: Vec<Warning> = Vec::new();
    let mut seen_fs = BTreeSet::new();
    // Many jobs share a directory: describe each path once.
    let mut known: std::collections::HashMap<PathBuf, Target> = Default::default();
    for spec in specs {
        if out.iter().any(|w| w.job == spec.name) {
            continue;
        }
        let rw = spec.io.rw;
        let data = rw.has(crate::job::spec::Ddir::Read) || rw.has(crate::job::spec::Ddir::Write);
        if spec.io.ioengine.info().caps.diskless || !data {
            continue;
        }
        for p in job_targets(spec) {
            let t = known.entry(p.clone()).or_insert_with(|| target(&p));
            if t.memory_backed() && seen_fs.insert(t.mount_point.clone()) {
                out.push(Warning {
                    kind: "memory-filesystem",
                    job: spec.name.clone(),
                    message: format!(
                        "'{}' is on {} (memory): results measure RAM, not a storage device",
                        p.display(),
                        t.fs_type.as_deref().unwrap_or("a memory filesystem")
                    ),
                });
            }
        }
        if spec.sync.direct || avail == 0 {
            continue;
        }
        if let Some(ws) = working_set(spec) {
            if ws < avail {
                out.push(Warning {
                    kind: "page-cache",
                    job: spec.name.clone(),
                    message: format!(
                        "job '{}': buffered I/O (direct=0) over {} fits in the {} of free RAM: \
                         the page cache likely served it, so the figures may not reflect the \
                         device (use direct=1, or a size larger than RAM)",
                        spec.name,
                        human(ws),
                        human(avail)
                    ),
                });
            }
        }
    }
    out
}

pub fn warnings_json(w: &[Warning]) -> Value {
    Value::Array(
        w.iter()
            .map(|w| json!({"kind": w.kind, "job": w.job, "message": w.message}))
            .collect(),
    )
}

fn timeline_json(report: &Report) -> Option<Value> {
    if report.jobs.iter().all(|j| j.stats.timeline.is_empty()) {
        return None;
    }
    let interval = report
        .jobs
        .iter()
        .map(|j| j.stats.timeline.interval_ms)
        .max()
        .unwrap_or(0);
    let jobs: Vec<Value> = report
        .jobs
        .iter()
        .map(|j| {
            let r = j.stats.timeline.rates();
            let mut m = Map::new();
            m.insert("jobname".into(), json!(j.name));
            let start = j.stats.timeline.points.first().map(|p| p.t_ms).unwrap_or(0);
            m.insert("start_ms".into(), json!(start));
            m.insert("t_ms".into(), json!(r.t_ms));
            for (d, name) in ["read", "write", "trim"].iter().enumerate() {
                if j.stats.dir[d].ios == 0 && r.iops[d].iter().all(|v| *v == 0.0) {
                    continue;
                }
                let kib: Vec<f64> = r.bw_bytes[d].iter().map(|b| (b / 1024.0).round()).collect();
                let iops: Vec<f64> = r.iops[d]
                    .iter()
                    .map(|v| (v * 10.0).round() / 10.0)
                    .collect();
                m.insert(name.to_string(), json!({"bw": kib, "iops": iops}));
            }
            Value::Object(m)
        })
        .collect();
    Some(json!({"interval_ms": interval, "jobs": jobs}))
}

/// The "iomark" object of a JSON document: environment, warnings and
/// timeline (the timeline's `jobs` run parallel to the document's `jobs`).
pub fn iomark_section(report: &Report) -> Value {
    let mut paths: Vec<PathBuf> = Vec::new();
    for j in &report.jobs {
        for p in job_targets(&j.spec) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let mut m = Map::new();
    let mut env = environment_json(&paths);
    if report.fake_clock {
        // A deterministic run (--fake-clock) reports no figure that moves
        // between two runs of the same job.
        env["host"]["mem_available_bytes"] = json!(0);
    }
    m.insert("environment".into(), env);
    let mut warnings = cache_warnings(report.jobs.iter().map(|j| j.spec.as_ref()));
    warnings.extend(report.overcommit.iter().map(|o| Warning {
        kind: "cpu-overcommit",
        job: o.job.clone(),
        message: o.message(),
    }));
    m.insert("warnings".into(), warnings_json(&warnings));
    if let Some(t) = timeline_json(report) {
        m.insert("timeline".into(), t);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_parsed_and_unescaped() {
        let text = "36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/sda1 rw,errors=remount-ro\n\
                    22 27 0:21 / / rw,relatime - ext4 /dev/vda rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].point, "/mnt/my disk");
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/sda1");
        assert_eq!(m[0].super_options, "rw,errors=remount-ro");
        let best = mount_of(&m, Path::new("/mnt/my disk/x")).unwrap();
        assert_eq!(best.point, "/mnt/my disk");
        let root = mount_of(&m, Path::new("/home")).unwrap();
        assert_eq!(root.point, "/");
    }

    #[test]
    fn the_current_directory_has_a_filesystem() {
        let t = target(Path::new("."));
        assert!(t.fs_type.is_some(), "{t:?}");
        assert!(t.mount_point.is_some(), "{t:?}");
        let h = host();
        assert!(h.cpus >= 1);
        assert!(h.ram_bytes > 0);
        assert!(h.kernel.starts_with("Linux"), "{}", h.kernel);
    }

    #[test]
    fn small_buffered_jobs_get_a_page_cache_warning() {
        let mut spec = JobSpec {
            name: "small".into(),
            ..JobSpec::default()
        };
        spec.file.size = Some(SizeOrPercent::Bytes(1 << 20));
        spec.io.rw = crate::job::spec::RwPattern::RandRead;
        let w = cache_warnings([&spec]);
        assert!(w.iter().any(|w| w.kind == "page-cache"), "{w:?}");
        spec.sync.direct = true;
        let w = cache_warnings([&spec]);
        assert!(!w.iter().any(|w| w.kind == "page-cache"), "{w:?}");
    }
}
