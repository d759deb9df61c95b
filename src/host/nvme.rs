//! NVMe namespaces through the kernel's passthrough interface: what a
//! namespace is (Identify: size, LBA format, metadata, protection
//! information, zoned command set, zone limits), its zones (Zone
//! Management Receive and Send), its reclaim unit handles (I/O Management
//! Receive), which block device stands for a generic character device
//! (`/dev/ngXnY`), and the names of NVMe status codes.
//!
//! The same 72-byte command layout serves the ioctls here
//! (`NVME_IOCTL_ADMIN_CMD`, `NVME_IOCTL_IO_CMD`) and the `io_uring_cmd`
//! engine's submissions (`NVME_URING_CMD_IO`), so both build commands the
//! same way ([`Cmd`]). Only the engine's per-I/O commands are on the hot
//! path; everything else runs at set-up.

// NVMe passthrough and zoned devices are Linux's: elsewhere the calls
// answer "not supported" and their arguments go unused.
#![cfg_attr(not(target_os = "linux"), allow(unused_variables, dead_code))]

use crate::sys::RawFd;
use std::io;
use std::path::{Path, PathBuf};

/// `_IOWR('N', 0x41, struct nvme_passthru_cmd)`.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;
/// `_IOWR('N', 0x43, struct nvme_passthru_cmd)`.
const NVME_IOCTL_IO_CMD: libc::c_ulong = 0xC048_4E43;
/// `_IO('N', 0x40)`: the namespace id of a namespace's device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;
/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: an I/O command through
/// io_uring, the data buffer in `addr`.
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// The same with `addr` pointing at an iovec array (`data_len` of them).
pub const NVME_URING_CMD_IO_VEC: u32 = 0xC048_4E81;

/// NVM command set opcodes.
pub const OP_FLUSH: u8 = 0x00;
pub const OP_WRITE: u8 = 0x01;
pub const OP_READ: u8 = 0x02;
pub const OP_DSM: u8 = 0x09;
const OP_IO_MGMT_RECV: u8 = 0x12;
const OP_ZONE_MGMT_SEND: u8 = 0x79;
const OP_ZONE_MGMT_RECV: u8 = 0x7a;
const OP_ADMIN_IDENTIFY: u8 = 0x06;

/// Bits of command dword 12 of reads and writes.
pub const PRINFO_PRACT: u32 = 1 << 29;
pub const PRINFO_PRCHK_GUARD: u32 = 1 << 28;
pub const PRINFO_PRCHK_APP: u32 = 1 << 27;
pub const PRINFO_PRCHK_REF: u32 = 1 << 26;
/// Directive types (command dword 12 bits 20-23).
pub const DTYPE_STREAMS: u32 = 1;
pub const DTYPE_FDP: u32 = 2;

/// An NVMe command as the kernel's passthrough interfaces take it
/// (`struct nvme_passthru_cmd` for ioctls, `struct nvme_uring_cmd` for
/// io_uring: the same 72 bytes; the last word is the ioctl's result).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    pub result: u32,
}

const _: () = assert!(std::mem::size_of::<Cmd>() == 72);

impl Cmd {
    /// The command as the 80 bytes of a big submission entry's command
    /// area (the kernel reads the first 72).
    #[inline]
    pub fn to_sqe_bytes(&self) -> [u8; 80] {
        let mut out = [0u8; 80];
        // SAFETY: Cmd is plain old data of 72 bytes, no padding (checked
        // by its layout: every field is naturally aligned).
        let bytes: &[u8; 72] = unsafe { &*(self as *const Cmd as *const [u8; 72]) };
        out[..72].copy_from_slice(bytes);
        out
    }
}

/// Runs an admin (`admin = true`) or I/O command synchronously on `fd`:
/// `Ok(result dword)`, or the error: an errno, or the NVMe status the
/// device answered (as [`status_error`]).
pub fn passthru(fd: RawFd, cmd: &mut Cmd, admin: bool) -> io::Result<u32> {
    let req = if admin {
        NVME_IOCTL_ADMIN_CMD
    } else {
        NVME_IOCTL_IO_CMD
    };
    // SAFETY: the command and the buffer it points at live for the call.
    #[cfg(target_os = "linux")]
    let r = unsafe { libc::ioctl(fd, req as _, cmd as *mut Cmd) };
    #[cfg(not(target_os = "linux"))]
    let r = crate::sys::not_supported();
    match r {
        0 => Ok(cmd.result),
        r if r < 0 => Err(io::Error::last_os_error()),
        status => Err(status_error(status as u16)),
    }
}

/// An NVMe status as an I/O error: the errno the kernel's block layer
/// gives it (see [`status_errno`]) and a message naming it.
pub fn status_error(status: u16) -> io::Error {
    io::Error::new(
        io::Error::from_raw_os_error(status_errno(status)).kind(),
        format!("NVMe status {}", describe_status(status)),
    )
}

/// `0x1b9 (Zone Boundary Error)`: an NVMe status (status code type in
/// bits 8-10, status code in bits 0-7; the "do not retry" and "more"
/// bits are dropped) with its name.
pub fn describe_status(status: u16) -> String {
    let s = status & 0x7ff;
    format!("{s:#x} ({})", status_name(s))
}

/// The name of an NVMe status (type and code), as the specification
/// names it.
pub fn status_name(status: u16) -> &'static str {
    match status & 0x7ff {
        0x000 => "Successful Completion",
        0x001 => "Invalid Command Opcode",
        0x002 => "Invalid Field in Command",
        0x003 => "Command ID Conflict",
        0x004 => "Data Transfer Error",
        0x005 => "Commands Aborted due to Power Loss Notification",
        0x006 => "Internal Error",
        0x007 => "Command Abort Requested",
        0x008 => "Command Aborted due to SQ Deletion",
        0x00b => "Invalid Namespace or Format",
        0x00d => "Invalid SGL Segment Descriptor",
        0x00f => "Data SGL Length Invalid",
        0x015 => "Invalid Use of Controller Memory Buffer",
        0x016 => "PRP Offset Invalid",
        0x018 => "Host Identifier Inconsistent Format",
        0x01c => "Invalid Controller Data Queue",
        0x020 => "Namespace is Write Protected",
        0x080 => "LBA Out of Range",
        0x081 => "Capacity Exceeded",
        0x082 => "Namespace Not Ready",
        0x083 => "Reservation Conflict",
        0x084 => "Format In Progress",
        0x10b => "Invalid Queue Deletion",
        0x11c => "Namespace Not Attached",
        0x180 => "Conflicting Attributes",
        0x181 => "Invalid Protection Information",
        0x182 => "Attempted Write to Read Only Range",
        0x1b8 => "Zoned Boundary Error",
        0x1b9 => "Zone Is Full",
        0x1ba => "Zone Is Read Only",
        0x1bb => "Zone Is Offline",
        0x1bc => "Zone Invalid Write",
        0x1bd => "Too Many Active Zones",
        0x1be => "Too Many Open Zones",
        0x1bf => "Invalid Zone State Transition",
        0x1c0 => "Invalid Placement Handle",
        0x280 => "Write Fault",
        0x281 => "Unrecovered Read Error",
        0x282 => "End-to-end Guard Check Error",
        0x283 => "End-to-end Application Tag Check Error",
        0x284 => "End-to-end Reference Tag Check Error",
        0x285 => "Compare Failure",
        0x286 => "Access Denied",
        0x287 => "Deallocated or Unwritten Logical Block",
        0x300 => "Internal Path Error",
        0x370 => "Host Pathing Error",
        _ => match (status >> 8) & 7 {
            0 => "Generic Command Status",
            1 => "Command Specific Status",
            2 => "Media and Data Integrity Error",
            3 => "Path Related Status",
            _ => "Vendor Specific Status",
        },
    }
}

/// The errno Linux's block layer gives an NVMe status (what a read or a
/// write through `/dev/nvmeXnY` would have failed with), so that
/// `continue_on_error` and `ignore_error` mean the same on both devices.
pub fn status_errno(status: u16) -> i32 {
    match status & 0x7ff {
        0x000 => 0,
        0x081 => libc::ENOSPC,
        0x001 | 0x002 | 0x080 | 0x180 | 0x00b => libc::EOPNOTSUPP,
        0x1bd => ETOOMANYREFS,
        0x1be => libc::EOVERFLOW,
        0x282..=0x284 => libc::EILSEQ,
        0x281 => ENODATA,
        0x083 => EBADE,
        0x020 | 0x182 => libc::ENOLINK,
        _ => libc::EIO,
    }
}

/// Linux's errno values for two NVMe statuses (libc names them on Linux
/// only; NVMe passthrough is Linux's).
const ETOOMANYREFS: i32 = 109;
const EBADE: i32 = 52;
const ENODATA: i32 = 61;

/// The namespace id of the NVMe device open at `fd`.
pub fn namespace_id(fd: RawFd) -> io::Result<u32> {
    // SAFETY: NVME_IOCTL_ID takes no argument.
    #[cfg(target_os = "linux")]
    let r = unsafe { libc::ioctl(fd, NVME_IOCTL_ID as _) };
    #[cfg(not(target_os = "linux"))]
    let r = crate::sys::not_supported();
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as u32)
    }
}

/// Identify data (4 KiB) of CNS `cns` for namespace `nsid` in command
/// set `csi`.
fn identify(fd: RawFd, nsid: u32, cns: u32, csi: u32) -> io::Result<Vec<u8>> {
    let mut buf = PageBuf::new(4096);
    let mut cmd = Cmd {
        opcode: OP_ADMIN_IDENTIFY,
        nsid,
        addr: buf.addr(),
        data_len: 4096,
        cdw10: cns,
        cdw11: csi << 24,
        ..Cmd::default()
    };
    passthru(fd, &mut cmd, true)?;
    Ok(buf.bytes().to_vec())
}

fn le16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn le32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn le64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]))
}

/// Protection information as a namespace is formatted with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Protection {
    /// 1, 2 or 3 (0: none).
    pub pi_type: u8,
    /// The PI is the first bytes of the metadata (else the last).
    pub first: bool,
    /// Bytes of PI in each block's metadata (8: 16-bit guard).
    pub size: u32,
    /// Guard format: 0 = 16-bit CRC, 2 = 64-bit CRC (others unsupported).
    pub guard: u8,
}

/// What Identify says about a namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespace {
    pub nsid: u32,
    /// Size in logical blocks.
    pub blocks: u64,
    /// Bytes of data per logical block.
    pub lba_size: u32,
    /// Bytes of metadata per logical block (0: none).
    pub ms: u32,
    /// Metadata is sent at the end of each block's data (extended LBA),
    /// not in a separate buffer.
    pub extended: bool,
    pub pi: Protection,
    /// The index of the namespace's LBA format.
    pub format: usize,
    /// Zoned (ZNS command set).
    pub zoned: Option<ZoneGeometry>,
}

impl Namespace {
    pub fn bytes(&self) -> u64 {
        self.blocks.saturating_mul(self.lba_size as u64)
    }

    /// Metadata bytes per block that travel between host and controller
    /// (0: none): with `pi_act` (PRACT) and metadata that is only the PI,
    /// the controller inserts and strips the PI and none travels.
    pub fn moved_md(&self, pi_act: bool) -> u32 {
        if self.pi.pi_type != 0 && pi_act && self.ms == self.pi.size {
            0
        } else {
            self.ms
        }
    }

    /// Bytes each block takes in a passthrough command's data buffer:
    /// the data, and with extended LBAs the metadata that travels inline
    /// after it.
    pub fn block_stride(&self, pi_act: bool) -> u64 {
        let inline = if self.extended {
            self.moved_md(pi_act)
        } else {
            0
        };
        self.lba_size as u64 + inline as u64
    }

    /// The namespace's size as passthrough commands address it: its
    /// blocks times [`Namespace::block_stride`].
    pub fn passthrough_bytes(&self, pi_act: bool) -> u64 {
        self.blocks.saturating_mul(self.block_stride(pi_act))
    }
}

/// A zoned namespace's zone size and limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneGeometry {
    /// Zone size in logical blocks.
    pub zone_blocks: u64,
    /// Open and active zones the device allows at once (0: no limit).
    pub max_open: u32,
    pub max_active: u32,
}

/// Identifies the namespace open at `fd` (a generic character device or
/// a block device of an NVMe namespace).
pub fn identify_namespace(fd: RawFd) -> io::Result<Namespace> {
    let nsid = namespace_id(fd)?;
    let ns = identify(fd, nsid, 0x00, 0)?;
    let nlbaf = ns[25] as usize;
    let flbas = ns[26] as usize;
    let format = if nlbaf < 16 {
        flbas & 0xf
    } else {
        (flbas & 0xf) | (((flbas >> 5) & 3) << 4)
    };
    let lbaf = le32(&ns, 128 + 4 * format);
    let lbads = (lbaf >> 16) & 0xff;
    if !(9..=20).contains(&lbads) {
        return Err(io::Error::other(format!(
            "namespace {nsid} reports an LBA data size of 2^{lbads} bytes"
        )));
    }
    let ms = lbaf & 0xffff;
    let dps = ns[29];
    let mut out = Namespace {
        nsid,
        blocks: le64(&ns, 0),
        lba_size: 1 << lbads,
        ms,
        extended: ms > 0 && flbas & 0x10 != 0,
        format,
        ..Namespace::default()
    };
    if ms > 0 && dps & 7 != 0 {
        out.pi = Protection {
            pi_type: dps & 7,
            first: dps & 8 != 0,
            size: 8,
            guard: 0,
        };
        // Extended LBA formats (a 64-bit guard): the NVM command set's
        // identify namespace, where the controller has it.
        if let Ok(nvm) = identify(fd, nsid, 0x05, 0) {
            let elbaf = le32(&nvm, 16 + 4 * format);
            out.pi.guard = ((elbaf >> 7) & 3) as u8;
            if elbaf & 0x7f != 0 || out.pi.guard == 1 {
                out.pi.guard = 0xff; // storage tags, 32-bit guard
            } else if out.pi.guard == 2 {
                out.pi.size = 16;
            }
        }
    }
    out.zoned = zone_geometry(fd, nsid, format);
    Ok(out)
}

/// The zone size and limits of namespace `nsid`, when it is zoned (its
/// command set is ZNS: Identify for CSI 2 answers).
fn zone_geometry(fd: RawFd, nsid: u32, format: usize) -> Option<ZoneGeometry> {
    let z = identify(fd, nsid, 0x05, 2).ok()?;
    let limit = |v: u32| if v == u32::MAX { 0 } else { v + 1 };
    let zone_blocks = le64(&z, 2816 + 16 * format);
    (zone_blocks > 0).then(|| ZoneGeometry {
        zone_blocks,
        max_active: limit(le32(&z, 4)),
        max_open: limit(le32(&z, 8)),
    })
}

/// One zone, as Zone Management Receive reports it (in logical blocks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub capacity: u64,
    pub wp: u64,
    /// Zone type (2: sequential write required).
    pub ztype: u8,
    /// Zone state: 1 empty, 2 implicitly open, 3 explicitly open, 4
    /// closed, 0xd read only, 0xe full, 0xf offline.
    pub state: u8,
}

/// Reports up to `max` zones of namespace `nsid` (zones of
/// `zone_blocks` blocks) from the zone at block `slba` on.
pub fn report_zones(
    fd: RawFd,
    nsid: u32,
    slba: u64,
    zone_blocks: u64,
    max: usize,
) -> io::Result<Vec<Zone>> {
    let mut out = Vec::new();
    let mut next = slba;
    while out.len() < max {
        let want = (max - out.len()).min(1024);
        let len = 64 + 64 * want;
        let mut buf = vec![0u8; len];
        let mut cmd = Cmd {
            opcode: OP_ZONE_MGMT_RECV,
            nsid,
            addr: buf.as_mut_ptr() as u64,
            data_len: len as u32,
            cdw10: next as u32,
            cdw11: (next >> 32) as u32,
            cdw12: (len as u32 >> 2) - 1,
            // report zones, all states, partial report (count what fits)
            cdw13: 1 << 16,
            ..Cmd::default()
        };
        passthru(fd, &mut cmd, false)?;
        let n = (le64(&buf, 0) as usize).min(want);
        for i in 0..n {
            let d = &buf[64 + 64 * i..128 + 64 * i];
            out.push(Zone {
                ztype: d[0] & 0xf,
                state: d[1] >> 4,
                capacity: le64(d, 8),
                start: le64(d, 16),
                wp: le64(d, 24),
            });
        }
        match out.last() {
            Some(last) if n == want => next = last.start + zone_blocks,
            _ => break,
        }
    }
    Ok(out)
}

/// Zone send actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAction {
    Close = 1,
    Finish = 2,
    Open = 3,
    Reset = 4,
}

/// Applies `action` to the zone starting at block `zslba`.
pub fn zone_send(fd: RawFd, nsid: u32, zslba: u64, action: ZoneAction) -> io::Result<()> {
    let mut cmd = Cmd {
        opcode: OP_ZONE_MGMT_SEND,
        nsid,
        cdw10: zslba as u32,
        cdw11: (zslba >> 32) as u32,
        cdw13: action as u32,
        ..Cmd::default()
    };
    passthru(fd, &mut cmd, false).map(drop)
}

/// A zeroed buffer of `len` bytes at a page boundary (the kernel maps
/// a passthrough command's buffer page by page; some controllers refuse
/// a small transfer split over two pages).
struct PageBuf {
    mem: Vec<u8>,
    off: usize,
    len: usize,
}

impl PageBuf {
    fn new(len: usize) -> PageBuf {
        let mem = vec![0u8; len + 4096];
        let off = (4096 - mem.as_ptr() as usize % 4096) % 4096;
        PageBuf { mem, off, len }
    }

    fn addr(&mut self) -> u64 {
        self.mem[self.off..].as_mut_ptr() as u64
    }

    fn bytes(&self) -> &[u8] {
        &self.mem[self.off..self.off + self.len]
    }
}

/// Reclaim unit handle status (I/O Management Receive, operation 1) of
/// namespace `nsid`: `len` bytes of it.
fn ruh_status(fd: RawFd, nsid: u32, len: usize) -> io::Result<PageBuf> {
    let mut buf = PageBuf::new(len);
    let mut cmd = Cmd {
        opcode: OP_IO_MGMT_RECV,
        nsid,
        addr: buf.addr(),
        data_len: len as u32,
        cdw10: 1,
        cdw11: (len as u32 >> 2) - 1,
        ..Cmd::default()
    };
    passthru(fd, &mut cmd, false)?;
    Ok(buf)
}

/// The placement identifiers of the reclaim unit handles namespace
/// `nsid` may use, in the order the device lists them (the indices
/// `plids` names): the header first for their number, then them all.
pub fn placement_ids(fd: RawFd, nsid: u32) -> io::Result<Vec<u16>> {
    let head = ruh_status(fd, nsid, 16)?;
    let n = le16(head.bytes(), 14) as usize;
    if n == 0 {
        return Ok(Vec::new());
    }
    let all = ruh_status(fd, nsid, 16 + 32 * n)?;
    let b = all.bytes();
    Ok((0..n).map(|i| le16(b, 16 + 32 * i)).collect())
}

/// Whether the character device `rdev` is an NVMe generic device
/// (`/dev/ngXnY`: sysfs class `nvme-generic`).
pub fn is_generic(rdev: u64) -> bool {
    let dir = format!(
        "/sys/dev/char/{}:{}",
        crate::sys::major_minor(rdev).0,
        crate::sys::major_minor(rdev).1
    );
    std::fs::read_link(Path::new(&dir).join("subsystem"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n == "nvme-generic"))
        .unwrap_or(false)
}

/// The block device of the same namespace as the generic character
/// device `rdev` whose namespace id is `nsid`: the block device under the
/// same controller (or subsystem) with that namespace id, else the
/// kernel's name for it (`ngXnY` → `nvmeXnY`) when it has that id.
pub fn block_device_of(rdev: u64, nsid: u32) -> Option<PathBuf> {
    let sys = format!(
        "/sys/dev/char/{}:{}",
        crate::sys::major_minor(rdev).0,
        crate::sys::major_minor(rdev).1
    );
    let me = std::fs::canonicalize(&sys).ok()?;
    let name = me.file_name()?.to_string_lossy().into_owned();
    let has_nsid = |dir: &Path| {
        super::read_trim(dir.join("nsid")).and_then(|s| s.parse::<u32>().ok()) == Some(nsid)
    };
    // The class directory's parent is the controller (or the subsystem
    // for a multipath head): look there for a disk with our nsid.
    if let Some(owner) = me.parent().and_then(Path::parent) {
        if let Ok(rd) = std::fs::read_dir(owner) {
            let mut names: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| is_disk_name(n))
                .collect();
            names.sort();
            for n in names {
                if has_nsid(&owner.join(&n)) {
                    // a hidden path (nvmeXcYnZ) stands for its head nvmeXnZ
                    let head = match n.split_once('c') {
                        Some((a, b)) => format!("{a}{}", &b[b.find('n')?..]),
                        None => n,
                    };
                    return Some(PathBuf::from("/dev").join(head));
                }
            }
        }
    }
    let guess = name.strip_prefix("ng").map(|r| format!("nvme{r}"))?;
    has_nsid(&Path::new("/sys/block").join(&guess)).then(|| PathBuf::from("/dev").join(guess))
}

/// `nvmeXnY` or `nvmeXcYnZ`.
fn is_disk_name(n: &str) -> bool {
    let Some(rest) = n.strip_prefix("nvme") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match rest.split_once('n') {
        Some((ctrl, ns)) => {
            digits(ns)
                && match ctrl.split_once('c') {
                    Some((a, b)) => digits(a) && digits(b),
                    None => digits(ctrl),
                }
        }
        None => false,
    }
}

/// The CRC-16 of T10 DIF (polynomial 0x8BB7, no reflection, initial 0),
/// the 16-bit guard of NVMe protection information, continued from `crc`.
pub fn crc_t10dif(mut crc: u16, data: &[u8]) -> u16 {
    for &b in data {
        crc = (crc << 8) ^ T10DIF[((crc >> 8) as u8 ^ b) as usize];
    }
    crc
}

const T10DIF: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000 != 0 {
                (c << 1) ^ 0x8bb7
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// Opens `path` read-only for probing (non-blocking, close-on-exec).
pub fn open_probe(path: &Path) -> io::Result<std::fs::File> {
    use crate::sys::ext::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(crate::sys::O_NONBLOCK | crate::sys::O_CLOEXEC)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_the_kernels_72_bytes_in_order() {
        let c = Cmd {
            opcode: OP_WRITE,
            nsid: 1,
            cdw10: 0x1122_3344,
            cdw12: 7 | PRINFO_PRACT,
            timeout_ms: 9,
            ..Cmd::default()
        };
        let b = c.to_sqe_bytes();
        assert_eq!(b[0], 1);
        assert_eq!(&b[4..8], &1u32.to_le_bytes());
        assert_eq!(&b[40..44], &0x1122_3344u32.to_le_bytes());
        assert_eq!(&b[48..52], &(7 | (1u32 << 29)).to_le_bytes());
        assert_eq!(&b[64..68], &9u32.to_le_bytes());
        assert!(b[72..].iter().all(|&x| x == 0));
    }

    #[test]
    // The requests are unsigned longs: 64 bits here, 32 on Windows (where
    // the cast is one to the same type).
    #[allow(clippy::unnecessary_cast)]
    fn ioctl_numbers_are_the_kernels() {
        // _IOC(dir, 'N', nr, size): dir 3 (read|write) << 30, size << 16.
        let iowr = |nr: u32| (3u32 << 30) | (72 << 16) | ((b'N' as u32) << 8) | nr;
        assert_eq!(NVME_IOCTL_ADMIN_CMD as u32, iowr(0x41));
        assert_eq!(NVME_IOCTL_IO_CMD as u32, iowr(0x43));
        assert_eq!(NVME_URING_CMD_IO, iowr(0x80));
        assert_eq!(NVME_URING_CMD_IO_VEC, iowr(0x81));
    }

    #[test]
    fn statuses_have_names_and_the_block_layers_errno() {
        assert_eq!(describe_status(0x1b9), "0x1b9 (Zone Is Full)");
        // the do-not-retry bit (0x4000) is not part of the status
        assert_eq!(
            describe_status(0x4282),
            "0x282 (End-to-end Guard Check Error)"
        );
        assert_eq!(status_errno(0x282), libc::EILSEQ);
        assert_eq!(status_errno(0x81), libc::ENOSPC);
        assert_eq!(status_errno(0x1be), libc::EOVERFLOW);
        assert_eq!(status_errno(0x2ff), libc::EIO);
        assert_eq!(status_name(0x2ff), "Media and Data Integrity Error");
    }

    #[test]
    fn the_t10_dif_crc_of_the_standard_check_string() {
        // CRC-16/T10-DIF check value for "123456789".
        assert_eq!(crc_t10dif(0, b"123456789"), 0xd0db);
        // continuing over two parts is the CRC of the whole
        let a = crc_t10dif(0, b"12345");
        assert_eq!(crc_t10dif(a, b"6789"), 0xd0db);
    }

    #[test]
    fn disk_names() {
        for ok in ["nvme0n1", "nvme12n3", "nvme0c1n2"] {
            assert!(is_disk_name(ok), "{ok}");
        }
        for bad in ["nvme0", "ng0n1", "nvme0n1p1", "nvmexn1", "nvme0c1"] {
            assert!(!is_disk_name(bad), "{bad}");
        }
    }
}
