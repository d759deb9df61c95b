//! What lies under a target path: mount, filesystem, block device,
//! model, size, I/O scheduler, rotational flag.

use std::path::{Path, PathBuf};

use super::mounts;
use super::read_trim;

/// What lies under one target path.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The path as the job names it.
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
    /// The disk's serial number (NVMe, SCSI/SATA VPD page 0x80, virtio).
    #[serde(default)]
    pub device_serial: Option<String>,
    /// The disk's firmware revision (NVMe `firmware_rev`, SCSI `rev`).
    #[serde(default)]
    pub device_firmware: Option<String>,
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

/// The schedulers the disk at `sys_dir` (its /sys/block directory)
/// offers, and the one in use (`[bracketed]` in `queue/scheduler`).
pub fn schedulers(sys_dir: &Path) -> Option<(Vec<String>, String)> {
    let s = std::fs::read_to_string(sys_dir.join("queue/scheduler")).ok()?;
    let mut all = Vec::new();
    let mut current = None;
    for w in s.split_whitespace() {
        match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(c) => {
                current = Some(c.to_string());
                all.push(c.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    Some((all, current?))
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

/// The serial number of the disk at `disk` (its /sys/block directory):
/// NVMe and some SCSI drivers expose `device/serial`, virtio `serial`,
/// SCSI/SATA disks the unit serial number VPD page (0x80: a 4-byte
/// header, then the serial as ASCII, often space-padded).
fn disk_serial(disk: &Path) -> Option<String> {
    read_trim(disk.join("device/serial"))
        .or_else(|| read_trim(disk.join("serial")))
        .or_else(|| {
            let page = std::fs::read(disk.join("device/vpd_pg80")).ok()?;
            vpd_serial(&page)
        })
}

/// The serial in a unit serial number VPD page.
fn vpd_serial(page: &[u8]) -> Option<String> {
    if page.len() < 4 || page[1] != 0x80 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let body = page.get(4..4 + len.min(page.len() - 4))?;
    let text: String = body
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect();
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The firmware revision of the disk at `disk`: NVMe `firmware_rev`,
/// SCSI/SATA `rev`.
fn disk_firmware(disk: &Path) -> Option<String> {
    read_trim(disk.join("device/firmware_rev")).or_else(|| read_trim(disk.join("device/rev")))
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
    t.device_serial = disk_serial(disk);
    t.device_firmware = disk_firmware(disk);
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
                if t.device_serial.is_none() {
                    t.device_serial = disk_serial(&sd);
                }
                if t.device_firmware.is_none() {
                    t.device_firmware = disk_firmware(&sd);
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
    use crate::sys::ext::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if m.file_type().is_char_device() && super::nvme::is_generic(m.rdev()) {
        // an NVMe generic device: described as its namespace's block device
        use crate::sys::AsRawFd;
        let f = super::nvme::open_probe(path).ok()?;
        let nsid = super::nvme::namespace_id(f.as_raw_fd()).ok()?;
        let bdev = super::nvme::block_device_of(m.rdev(), nsid)?;
        return Some((std::fs::metadata(bdev).ok()?.rdev(), true));
    }
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
    // Windows: the volume's filesystem and root (no mount table there).
    #[cfg(windows)]
    if let Some((fs, root)) = crate::sys::volume_of(&canon) {
        t.fs_type = Some(fs);
        t.mount_point = Some(root.display().to_string());
    }
    let Some((dev, is_block)) = dev_of(&canon) else {
        return t;
    };
    let (major, minor) = crate::sys::major_minor(dev);
    let mounts = mounts::read();
    if !is_block {
        if let Some(m) = mounts::mount_of(&mounts, &canon) {
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
            let (a, b) = crate::sys::major_minor(d);
            sys_disk(a, b)
        } else {
            None
        }
    });
    if let Some(d) = disk {
        fill_device(&mut t, &d);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The volume's filesystem is Windows' (GetVolumeInformationW).
    #[cfg(windows)]
    fn a_file_on_windows_names_its_volume_and_filesystem() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let t = target(&f);
        assert!(t.fs_type.as_deref().is_some_and(|s| !s.is_empty()), "{t:?}");
        let root = t.mount_point.clone().unwrap();
        let canon = std::fs::canonicalize(&f).unwrap().display().to_string();
        // canonicalize gives the \\?\ form of the same root.
        let plain = canon.trim_start_matches(r"\\?\");
        assert!(
            plain.to_lowercase().starts_with(&root.to_lowercase()),
            "{root} {plain}"
        );
    }

    #[test]
    fn a_vpd_page_gives_the_serial() {
        let mut page = vec![0x00, 0x80, 0x00, 0x0c];
        page.extend_from_slice(b"  S3Z9NB0K  ");
        assert_eq!(vpd_serial(&page).as_deref(), Some("S3Z9NB0K"));
        // Another page, a short page, an empty serial: none.
        assert_eq!(vpd_serial(&[0x00, 0x83, 0x00, 0x02, b'a', b'b']), None);
        assert_eq!(vpd_serial(&[0x00, 0x80]), None);
        assert_eq!(vpd_serial(&[0x00, 0x80, 0x00, 0x02, b' ', b' ']), None);
        // A length beyond the page is cut to it.
        assert_eq!(
            vpd_serial(&[0x00, 0x80, 0x00, 0x40, b'x', b'y']).as_deref(),
            Some("xy")
        );
    }

    #[test]
    fn serial_and_firmware_come_from_sysfs() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("device")).unwrap();
        assert_eq!(disk_serial(d.path()), None);
        std::fs::write(d.path().join("serial"), "virtio-1\n").unwrap();
        assert_eq!(disk_serial(d.path()).as_deref(), Some("virtio-1"));
        std::fs::write(d.path().join("device/serial"), "  NVME123 \n").unwrap();
        assert_eq!(disk_serial(d.path()).as_deref(), Some("NVME123"));
        std::fs::write(d.path().join("device/rev"), "0002\n").unwrap();
        assert_eq!(disk_firmware(d.path()).as_deref(), Some("0002"));
        std::fs::write(d.path().join("device/firmware_rev"), "3B2QGXA7\n").unwrap();
        assert_eq!(disk_firmware(d.path()).as_deref(), Some("3B2QGXA7"));
    }
}
