//! Zoned devices: whether a target is zoned (host-managed or host-aware),
//! its zones (start, size, capacity, write pointer, condition) and its
//! open-zone limit, and resetting a zone's write pointer. Block devices
//! go through the kernel's zone ioctls (`BLKREPORTZONE`, `BLKRESETZONE`)
//! and sysfs; NVMe generic character devices through passthrough (Zone
//! Management Receive and Send, see [`super::nvme`]).
//!
//! Everything here is in bytes. It runs when a job starts and when a
//! zone is reset, never per I/O.

// NVMe passthrough and zoned devices are Linux's: elsewhere the calls
// answer "not supported" and their arguments go unused.
#![cfg_attr(not(target_os = "linux"), allow(unused_variables, dead_code))]

use crate::sys::ext::{FileTypeExt, MetadataExt};
use crate::sys::{AsRawFd, RawFd};
use std::io;
use std::path::Path;

use super::nvme;

/// `_IOWR(0x12, 130, struct blk_zone_report)`.
const BLKREPORTZONE: libc::c_ulong = 0xC010_1282;
/// `_IOW(0x12, 131, struct blk_zone_range)`.
const BLKRESETZONE: libc::c_ulong = 0x4010_1283;

/// How a device is zoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Not zoned: zones are emulated (`zonesize`), nothing is reset on
    /// the device.
    None,
    HostAware,
    HostManaged,
}

/// A zone's condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// A conventional zone: no write pointer.
    NotWp,
    Empty,
    ImplicitOpen,
    ExplicitOpen,
    Closed,
    ReadOnly,
    Full,
    Offline,
}

/// One zone, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub len: u64,
    pub capacity: u64,
    pub wp: u64,
    /// Sequential zone (writes at its write pointer only).
    pub seq: bool,
    pub cond: Cond,
}

/// What a zoned device is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zoned {
    pub model: Model,
    pub zone_size: u64,
    /// Zones the device lets be open at once (0: no limit).
    pub max_open: u32,
}

/// How to reach a device's zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Block,
    /// An NVMe generic character device: namespace id and LBA shift.
    Nvme {
        nsid: u32,
        shift: u32,
    },
}

/// Whether `path` is a zoned block device or a zoned NVMe namespace's
/// generic character device, and how (`None`: not zoned).
pub fn probe(path: &Path) -> io::Result<Option<(Zoned, Access)>> {
    let m = std::fs::metadata(path)?;
    if m.file_type().is_block_device() {
        let sys = sys_queue(m.rdev());
        let model = match super::read_trim(sys.join("zoned")).as_deref() {
            Some("host-managed") => Model::HostManaged,
            Some("host-aware") => Model::HostAware,
            _ => return Ok(None),
        };
        let sectors: u64 = super::read_trim(sys.join("chunk_sectors"))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let max_open = super::read_trim(sys.join("max_open_zones"))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let z = Zoned {
            model,
            zone_size: sectors * 512,
            max_open,
        };
        return Ok(Some((z, Access::Block)));
    }
    if m.file_type().is_char_device() && nvme::is_generic(m.rdev()) {
        let f = nvme::open_probe(path)?;
        let ns = nvme::identify_namespace(f.as_raw_fd())?;
        let Some(g) = ns.zoned else {
            return Ok(None);
        };
        let shift = ns.lba_size.trailing_zeros();
        let z = Zoned {
            model: Model::HostManaged,
            zone_size: g.zone_blocks << shift,
            max_open: g.max_open,
        };
        return Ok(Some((
            z,
            Access::Nvme {
                nsid: ns.nsid,
                shift,
            },
        )));
    }
    Ok(None)
}

/// The queue directory in sysfs of block device `rdev`.
fn sys_queue(rdev: u64) -> std::path::PathBuf {
    let dir = format!(
        "/sys/dev/block/{}:{}",
        crate::sys::major_minor(rdev).0,
        crate::sys::major_minor(rdev).1
    );
    let p = Path::new(&dir);
    // a partition's queue is its disk's
    if p.join("partition").exists() {
        p.join("../queue")
    } else {
        p.join("queue")
    }
}

/// Every zone of the device open at `fd`, from the start.
pub fn report(fd: RawFd, access: Access, zone_size: u64, dev_size: u64) -> io::Result<Vec<Zone>> {
    let n = dev_size.div_ceil(zone_size.max(1)) as usize;
    match access {
        Access::Block => report_block(fd, n),
        Access::Nvme { nsid, shift } => {
            let zones = nvme::report_zones(fd, nsid, 0, zone_size >> shift, n)?;
            Ok(zones
                .iter()
                .map(|z| {
                    let cond = match z.state {
                        1 => Cond::Empty,
                        2 => Cond::ImplicitOpen,
                        3 => Cond::ExplicitOpen,
                        4 => Cond::Closed,
                        0xd => Cond::ReadOnly,
                        0xe => Cond::Full,
                        _ => Cond::Offline,
                    };
                    Zone {
                        start: z.start << shift,
                        len: zone_size,
                        capacity: z.capacity << shift,
                        wp: z.wp << shift,
                        seq: z.ztype == 2,
                        cond,
                    }
                })
                .collect())
        }
    }
}

/// `BLKREPORTZONE` in batches of 4096 zones.
fn report_block(fd: RawFd, max: usize) -> io::Result<Vec<Zone>> {
    const BATCH: usize = 4096;
    let mut out = Vec::new();
    let mut sector = 0u64;
    while out.len() < max {
        let want = (max - out.len()).min(BATCH);
        // header: sector u64, nr_zones u32, flags u32; then 64-byte zones
        let mut buf = vec![0u64; 2 + 8 * want];
        buf[0] = sector;
        buf[1] = want as u64; // nr_zones in the low half, flags 0
                              // SAFETY: the buffer holds the header and `want` zone records.
        #[cfg(target_os = "linux")]
        let r = unsafe { libc::ioctl(fd, BLKREPORTZONE as _, buf.as_mut_ptr()) };
        #[cfg(not(target_os = "linux"))]
        let r = crate::sys::not_supported();
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = (buf[1] & 0xffff_ffff) as usize;
        let has_cap = (buf[1] >> 32) & 1 != 0;
        for i in 0..got.min(want) {
            let z = &buf[2 + 8 * i..2 + 8 * (i + 1)];
            let (start, len, wp) = (z[0] * 512, z[1] * 512, z[2] * 512);
            let b = z[3].to_le_bytes();
            let cond = match b[1] {
                0 => Cond::NotWp,
                1 => Cond::Empty,
                2 => Cond::ImplicitOpen,
                3 => Cond::ExplicitOpen,
                4 => Cond::Closed,
                0xd => Cond::ReadOnly,
                0xe => Cond::Full,
                _ => Cond::Offline,
            };
            out.push(Zone {
                start,
                len,
                capacity: if has_cap { z[4] * 512 } else { len },
                wp,
                seq: b[0] != 1,
                cond,
            });
        }
        match out.last() {
            Some(l) if got >= want => sector = (l.start + l.len) / 512,
            _ => break,
        }
    }
    Ok(out)
}

/// Resets the write pointers of the zones in `[start, start + len)`.
pub fn reset(fd: RawFd, access: Access, start: u64, len: u64, zone_size: u64) -> io::Result<()> {
    match access {
        Access::Block => {
            let range = [start / 512, len / 512];
            // SAFETY: BLKRESETZONE reads a struct of two u64s.
            #[cfg(target_os = "linux")]
            let r = unsafe { libc::ioctl(fd, BLKRESETZONE as _, range.as_ptr()) };
            #[cfg(not(target_os = "linux"))]
            let r = crate::sys::not_supported();
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
        Access::Nvme { nsid, shift } => {
            let mut z = start;
            while z < start + len {
                nvme::zone_send(fd, nsid, z >> shift, nvme::ZoneAction::Reset)?;
                z += zone_size.max(1);
            }
            Ok(())
        }
    }
}
