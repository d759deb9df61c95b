//! Signatures of data on a block device, looked for where they live.
//!
//! On Linux, first every type libblkid (util-linux's prober, through
//! `sys::blkid`) knows: on the whole device (each format where it lives,
//! the start or the end), in each partition of a table it finds
//! (present, or by its GPT backup header), and at 1 MiB and 2 MiB (a
//! partition whose table is gone). Then, everywhere, iomark's own list
//! below: on other systems it is the check, and on Linux it stays where
//! libblkid has no check or a stricter one — bcachefs (libblkid 2.39 on),
//! 0x55AA alone (a boot sector with no table), magic-only GPT, MD 1.x,
//! ZFS and LUKS2 secondary headers (libblkid wants a valid GPT CRC, an
//! MD superblock naming its own offset, four ZFS uberblocks: a damaged
//! one is still data). The safety check (`safety`) refuses to write to a
//! device where one is found.
//!
//! | family | where iomark's own list looks for it |
//! | --- | --- |
//! | ext2/3/4, XFS, btrfs, F2FS, NTFS, exFAT, FAT, squashfs, ISO 9660, bcachefs | start; at 1 MiB |
//! | swap, LVM physical volume, LUKS1/LUKS2 primary header | start |
//! | LUKS2 secondary header | 16 KiB, 32 KiB … 4 MiB |
//! | MD RAID 1.1 / 1.2 | 0 / 4 KiB |
//! | MD RAID 0.90 / 1.0 | 64 KiB below the end (aligned) / 8 KiB below the end (4 KiB-aligned) |
//! | ZFS | uberblocks of labels L0, L1 (first 512 KiB) and L2, L3 (last 512 KiB, 256 KiB-aligned) |
//! | bcache | 4 KiB (magic at 4 KiB + 24) |
//! | GPT | LBA 1 (512 or 4096-byte sectors); backup header at the last LBA |
//! | MBR / boot sector | 510 |
//!
//! Only reads; a device smaller than an offset is not looked at there.

use crate::sys::ext::FileExt;
use std::path::Path;

/// How much of the start of a device is read (two ZFS labels).
pub const HEAD_BYTES: usize = 512 << 10;
/// Where a filesystem of an unpartitioned device often starts.
const FS_AT: u64 = 1 << 20;
/// How much is read there (a btrfs superblock is at 64 KiB in).
const FS_WINDOW: usize = 128 << 10;
/// How much of the end of a device is read.
const TAIL_BYTES: u64 = 1 << 20;
/// The offsets of LUKS2's secondary header.
const LUKS2_SECONDARY: [u64; 9] = [
    0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000,
];
const MD_MAGIC: u32 = 0xa92b_4efc;
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;
const ZFS_LABEL: u64 = 256 << 10;
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
/// bcachefs's superblock magic (at 4 KiB + 24, as bcache's).
const BCHFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

fn at(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    buf.get(off..off + magic.len()) == Some(magic)
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    buf.get(off..off + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn be16(buf: &[u8], off: usize) -> Option<u16> {
    buf.get(off..off + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
}

fn u64_either(buf: &[u8], off: usize) -> Option<(u64, u64)> {
    let b = buf.get(off..off + 8)?;
    let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    Some((v, v.swap_bytes()))
}

/// A filesystem whose superblock is in `buf` (the start of a device or
/// of where one may begin).
fn filesystem(buf: &[u8]) -> Option<&'static str> {
    if at(buf, 1024 + 56, &[0x53, 0xEF]) {
        return Some("an ext2/3/4 filesystem");
    }
    if at(buf, 0, b"XFSB") {
        return Some("an XFS filesystem");
    }
    if at(buf, 65536 + 64, b"_BHRfS_M") {
        return Some("a btrfs filesystem");
    }
    if le32(buf, 1024) == Some(0xF2F5_2010) {
        return Some("an F2FS filesystem");
    }
    if at(buf, 3, b"NTFS    ") {
        return Some("an NTFS filesystem");
    }
    if at(buf, 3, b"EXFAT   ") {
        return Some("an exFAT filesystem");
    }
    if at(buf, 54, b"FAT1") || at(buf, 82, b"FAT32   ") {
        return Some("a FAT filesystem");
    }
    if at(buf, 0, b"hsqs") {
        return Some("a squashfs filesystem");
    }
    if at(buf, 32769, b"CD001") {
        return Some("an ISO 9660 filesystem");
    }
    // libblkid knows bcachefs from util-linux 2.39 on (Debian 12 has 2.38).
    if at(buf, 4096 + 24, &BCHFS_MAGIC) {
        return Some("a bcachefs filesystem");
    }
    None
}

/// ZFS uberblocks (magic 0x00bab10c, either byte order) in the ring of
/// the label that starts at `label` in `buf` (128–256 KiB into it).
fn zfs_label(buf: &[u8], label: usize) -> bool {
    let mut o = label + (128 << 10);
    let end = (label + (256 << 10)).min(buf.len());
    while o + 8 <= end {
        if let Some((a, b)) = u64_either(buf, o) {
            if a == ZFS_UBERBLOCK_MAGIC || b == ZFS_UBERBLOCK_MAGIC {
                return true;
            }
        }
        o += 1024;
    }
    false
}

/// The first well-known signature at the start of a device (`buf`: its
/// first bytes, up to [`HEAD_BYTES`]), named for the error message.
pub fn find_signature(buf: &[u8]) -> Option<&'static str> {
    // Filesystems and volumes first: several also carry 0x55AA.
    if let Some(fs) = filesystem(buf) {
        return Some(fs);
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if at(buf, page - 10, b"SWAPSPACE2") || at(buf, page - 10, b"SWAP-SPACE") {
            return Some("a swap area");
        }
    }
    for sector in 0..4 {
        let o = sector * 512;
        if at(buf, o, b"LABELONE") && at(buf, o + 24, b"LVM2") {
            return Some("an LVM physical volume");
        }
    }
    if at(buf, 0, b"LUKS\xba\xbe") {
        return Some("a LUKS encrypted volume");
    }
    if le32(buf, 0) == Some(MD_MAGIC) {
        return Some("an MD RAID member (superblock 1.1)");
    }
    if le32(buf, 4096) == Some(MD_MAGIC) {
        return Some("an MD RAID member (superblock 1.2)");
    }
    if at(buf, 4096 + 24, &BCACHE_MAGIC) {
        return Some("a bcache device");
    }
    if zfs_label(buf, 0) || zfs_label(buf, 256 << 10) {
        return Some("a ZFS pool member");
    }
    if at(buf, 512, b"EFI PART") || at(buf, 4096, b"EFI PART") {
        return Some("a GPT partition table");
    }
    if at(buf, 510, &[0x55, 0xAA]) {
        return Some("an MBR partition table or boot sector");
    }
    None
}

/// A LUKS2 secondary header at one of its offsets (`read(off, len)`
/// gives the device's bytes there).
fn luks2_secondary(read: &dyn Fn(u64, usize) -> Option<Vec<u8>>) -> bool {
    LUKS2_SECONDARY.iter().any(|&off| {
        read(off, 8).is_some_and(|b| at(&b, 0, b"SKUL\xba\xbe") && be16(&b, 6) == Some(2))
    })
}

/// What the end of a device of `size` bytes holds; `tail` is its last
/// bytes (up to [`TAIL_BYTES`]).
fn find_at_end(tail: &[u8], size: u64) -> Option<&'static str> {
    let start = size - tail.len() as u64;
    let rel = |off: u64| off.checked_sub(start).map(|o| o as usize);
    // MD 0.90: 64 KiB below the end, rounded down to 64 KiB, in the
    // host's byte order.
    if size >= 128 << 10 {
        if let Some(o) = rel((size & !0xFFFF) - 0x10000) {
            let v = le32(tail, o);
            if v == Some(MD_MAGIC) || v == Some(MD_MAGIC.swap_bytes()) {
                return Some("an MD RAID member (superblock 0.90, at its end)");
            }
        }
    }
    // MD 1.0: 8 KiB below the end, rounded down to 4 KiB.
    if size >= 16 << 10 {
        let sectors = size / 512;
        if let Some(o) = rel(((sectors - 16) & !7) * 512) {
            if le32(tail, o) == Some(MD_MAGIC) && le32(tail, o + 4) == Some(1) {
                return Some("an MD RAID member (superblock 1.0, at its end)");
            }
        }
    }
    for lba in [512u64, 4096] {
        if let Some(o) = size.checked_sub(lba).and_then(rel) {
            if at(tail, o, b"EFI PART") {
                return Some("a GPT partition table (its backup header, at its end)");
            }
        }
    }
    // ZFS labels L2 and L3: the last two 256 KiB labels of the size
    // rounded down to 256 KiB.
    let aligned = size & !(ZFS_LABEL - 1);
    if aligned >= 4 * ZFS_LABEL {
        for label in [aligned - 2 * ZFS_LABEL, aligned - ZFS_LABEL] {
            if rel(label).is_some_and(|o| zfs_label(tail, o)) {
                return Some("a ZFS pool member (labels at its end)");
            }
        }
    }
    None
}

/// The largest sector size a device has: every read of a device is
/// made of whole sectors at offsets that are multiples of it, into
/// memory aligned to it, as Windows demands of disks and volumes.
const SECTOR: u64 = 4096;

/// `len` bytes at `off` of a device of `size` bytes, read as whole
/// sectors (see [`SECTOR`]; the device's end is a sector boundary).
fn read_sectors(f: &std::fs::File, off: u64, len: usize, size: u64) -> std::io::Result<Vec<u8>> {
    let start = off - off % SECTOR;
    let end = (off + len as u64).next_multiple_of(SECTOR).min(size);
    let span = (end - start) as usize;
    let mut raw = vec![0u8; span + SECTOR as usize];
    let skip = raw.as_ptr().align_offset(SECTOR as usize);
    let buf = &mut raw[skip..skip + span];
    f.read_exact_at(buf, start)?;
    let from = (off - start) as usize;
    Ok(buf[from..from + len].to_vec())
}

/// The first signature on the device at `path` of `size` bytes, looked
/// for where each lives, described for a message ("an MD RAID member
/// (superblock 1.0, at its end)"). On Linux, first what libblkid finds
/// on the device itself and in each partition of a partition table it
/// finds (present, or by its backup), then iomark's own list (see the
/// module documentation), then the partition table itself; elsewhere,
/// iomark's own list. Filesystems starting inside a device with no
/// table before them are [`probe_inside`].
pub fn probe_device(path: &Path, size: u64) -> std::io::Result<Option<String>> {
    let f = std::fs::File::open(path)?;
    #[cfg(target_os = "linux")]
    let blkid = libblkid::Device::probe(&f, size)?;
    #[cfg(target_os = "linux")]
    if let Some(sig) = blkid.as_ref().and_then(|d| d.first_on_it()) {
        return Ok(Some(sig));
    }
    if let Some(sig) = own_list(&f, size)? {
        return Ok(Some(sig));
    }
    #[cfg(target_os = "linux")]
    if let Some(sig) = blkid.as_ref().and_then(|d| d.table()) {
        return Ok(Some(sig));
    }
    Ok(None)
}

/// iomark's own list, at the start, at LUKS2's secondary header offsets
/// and at the end.
fn own_list(f: &std::fs::File, size: u64) -> std::io::Result<Option<String>> {
    let read = |off: u64, len: usize| -> Option<Vec<u8>> {
        let len = len.min(size.saturating_sub(off) as usize);
        if len == 0 {
            return None;
        }
        read_sectors(f, off, len, size).ok()
    };
    let head = read_sectors(f, 0, HEAD_BYTES.min(size as usize), size)?;
    if let Some(sig) = find_signature(&head) {
        return Ok(Some(sig.to_string()));
    }
    if luks2_secondary(&read) {
        return Ok(Some(
            "a LUKS2 encrypted volume (its secondary header)".to_string(),
        ));
    }
    let tail_len = TAIL_BYTES.min(size);
    if let Some(tail) = read(size - tail_len, tail_len as usize) {
        if let Some(sig) = find_at_end(&tail, size) {
            return Ok(Some(sig.to_string()));
        }
    }
    Ok(None)
}

/// Where a filesystem or volume often starts inside a device whose
/// partition table is gone (the first partition of an MBR or GPT disk
/// partitioned by today's tools, or by older ones with 2 MiB alignment).
pub const INSIDE: [u64; 2] = [1 << 20, 2 << 20];

/// A signature starting inside the device at `path` (of `size` bytes)
/// with no partition table before it: on Linux, whatever libblkid finds
/// at each offset of [`INSIDE`]; everywhere, the filesystems of iomark's
/// own list at 1 MiB. The caller looks for everything else first
/// ([`probe_device`], devices stacked there), so that the more precise
/// finding is the one named.
pub fn probe_inside(path: &Path, size: u64) -> std::io::Result<Option<String>> {
    let f = std::fs::File::open(path)?;
    #[cfg(target_os = "linux")]
    if let Some(sig) = libblkid::inside(&f, size)? {
        return Ok(Some(sig));
    }
    if size <= FS_AT {
        return Ok(None);
    }
    let b = read_sectors(&f, FS_AT, FS_WINDOW.min((size - FS_AT) as usize), size)?;
    Ok(filesystem(&b)
        .map(|fs| format!("{fs} starting at 1 MiB (with no partition table before it)")))
}

/// What libblkid finds, named for messages.
#[cfg(target_os = "linux")]
mod libblkid {
    use crate::sys::blkid::{self, Found};
    use std::os::fd::AsRawFd;

    /// A size or offset for messages: "1 MiB", "36 KiB", "4097 bytes".
    fn shown(n: u64) -> String {
        if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
            format!("{} MiB", n >> 20)
        } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
            format!("{} KiB", n >> 10)
        } else {
            format!("{n} bytes")
        }
    }

    /// The phrase for a signature libblkid names `f.name` ("an MD RAID
    /// member"), and a detail of it ("superblock 1.2").
    pub(super) fn family(f: &Found) -> (String, Option<String>) {
        let n = f.name.as_str();
        let v = f
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty());
        if f.table {
            let s = match n {
                "gpt" => "a GPT partition table".to_string(),
                "dos" => "an MBR partition table".to_string(),
                _ => format!("a partition table ({n})"),
            };
            return (s, None);
        }
        let fixed = match n {
            "ext2" | "ext3" | "ext4" | "ext4dev" => "an ext2/3/4 filesystem",
            "jbd" => "an ext3/4 external journal",
            "xfs" => "an XFS filesystem",
            "xfs_external_log" => "an XFS external log",
            "btrfs" => "a btrfs filesystem",
            "f2fs" => "an F2FS filesystem",
            "ntfs" => "an NTFS filesystem",
            "exfat" => "an exFAT filesystem",
            "vfat" => "a FAT filesystem",
            "squashfs" | "squashfs3" => "a squashfs filesystem",
            "iso9660" => "an ISO 9660 filesystem",
            "udf" => "a UDF filesystem",
            "swap" => "a swap area",
            "swsuspend" => "a swap area holding a hibernation image",
            "LVM2_member" | "LVM1_member" => "an LVM physical volume",
            "zfs_member" => "a ZFS pool member",
            "bcache" => "a bcache device",
            "bcachefs" => "a bcachefs filesystem",
            "hfsplus" => "an HFS+ filesystem",
            "hfs" => "an HFS filesystem",
            "jfs" => "a JFS filesystem",
            "reiserfs" => "a ReiserFS filesystem",
            "reiser4" => "a Reiser4 filesystem",
            "apfs" => "an APFS container",
            "BitLocker" => "a BitLocker encrypted volume",
            "linux_raid_member" => {
                // The format of major version 0 is known as 0.90 (its
                // minor version), 1.x by where it lives ("1.2").
                let sb = v.map(|v| match v.split('.').next() {
                    Some("0") => "0.90".to_string(),
                    _ => v.split('.').take(2).collect::<Vec<_>>().join("."),
                });
                return (
                    "an MD RAID member".to_string(),
                    sb.map(|v| format!("superblock {v}")),
                );
            }
            "crypto_LUKS" => {
                return (
                    match v {
                        Some(v) => format!("a LUKS{v} encrypted volume"),
                        None => "a LUKS encrypted volume".to_string(),
                    },
                    None,
                )
            }
            _ => "",
        };
        if !fixed.is_empty() {
            return (fixed.to_string(), None);
        }
        let s = match f.usage.as_deref() {
            Some("filesystem") => format!("a {n} filesystem"),
            Some("raid") => format!("a {n} RAID member"),
            Some("crypto") => format!("a {n} encrypted volume"),
            _ => format!("a {n} signature"),
        };
        (s, None)
    }

    /// `f`, found in a window of `size` bytes, for a message: the
    /// family, `place` ("starting at 1 MiB"), then in brackets its
    /// detail, where in the window it is when that is the end, what else
    /// the caller says (`note`) and libblkid's own name.
    pub(super) fn describe(f: &Found, size: u64, place: &str, note: Option<&str>) -> String {
        let (family, detail) = family(f);
        let mut notes: Vec<String> = detail.into_iter().collect();
        if let Some(at) = f.magic_at {
            if size > 2 << 20 && at >= size - (1 << 20) {
                notes.push(if f.table {
                    "its backup header, at its end".to_string()
                } else {
                    "at its end".to_string()
                });
            } else if f.name == "crypto_LUKS" && at > 0 {
                notes.push(format!("its secondary header, at {}", shown(at)));
            }
        }
        let mut s = family;
        if !place.is_empty() {
            s.push(' ');
            s.push_str(place);
        }
        let mut tail = notes.join(", ");
        if let Some(n) = note {
            if !tail.is_empty() {
                tail.push_str("; ");
            }
            tail.push_str(n);
        }
        if !tail.is_empty() {
            tail.push_str("; ");
        }
        let version = f
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty());
        match version {
            Some(v) => tail.push_str(&format!("libblkid: {} {v}", f.name)),
            None => tail.push_str(&format!("libblkid: {}", f.name)),
        }
        format!("{s} ({tail})")
    }

    /// The fallback when libblkid cannot be loaded: one warning a run.
    fn unavailable(why: &str) {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            crate::run::output::stderr_line(&format!(
                "iomark: warning: {} could not be loaded ({why}): block devices are checked \
                 against iomark's own list of signatures only",
                blkid::LIBRARY
            ))
        });
    }

    fn io(e: blkid::BlkidError) -> std::io::Error {
        std::io::Error::other(e)
    }

    /// What libblkid finds on a whole device.
    pub(super) struct Device {
        size: u64,
        found: Vec<Found>,
        /// Within each partition of the table found: (start, size, found).
        parts: Vec<(u64, u64, Vec<Found>)>,
    }

    impl Device {
        /// Probes the whole device `f` of `size` bytes, and each
        /// partition of the table found there. `None`: libblkid cannot be
        /// loaded (warned once).
        pub(super) fn probe(f: &std::fs::File, size: u64) -> std::io::Result<Option<Device>> {
            if let Err(why) = blkid::available() {
                unavailable(&why.to_string());
                return Ok(None);
            }
            let fd = f.as_raw_fd();
            let found = blkid::probe(fd, 0, 0).map_err(io)?;
            let mut parts = Vec::new();
            if found.iter().any(|x| x.table) {
                for (start, len) in blkid::partitions(fd).map_err(io)? {
                    if start == 0 || start >= size {
                        continue;
                    }
                    let len = len.min(size - start);
                    let inner = blkid::probe(fd, start, len).map_err(io)?;
                    parts.push((start, len, inner));
                }
            }
            Ok(Some(Device { size, found, parts }))
        }

        /// The first signature on the device itself, or else in one of
        /// its partitions.
        pub(super) fn first_on_it(&self) -> Option<String> {
            if let Some(f) = self.found.iter().find(|f| !f.table) {
                return Some(describe(f, self.size, "", None));
            }
            let table = self.found.iter().find(|f| f.table)?;
            let (tname, _) = family(table);
            for (i, (start, len, inner)) in self.parts.iter().enumerate() {
                if let Some(f) = inner.iter().find(|f| !f.table).or(inner.first()) {
                    let place = format!("in partition {} at {}", i + 1, shown(*start));
                    let note = format!("of {tname}");
                    return Some(describe(f, *len, &place, Some(&note)));
                }
            }
            None
        }

        /// The partition table found, if any.
        pub(super) fn table(&self) -> Option<String> {
            let t = self.found.iter().find(|f| f.table)?;
            Some(describe(t, self.size, "", None))
        }
    }

    /// The first signature libblkid finds starting at one of the offsets
    /// of [`super::INSIDE`] of the device `f` of `size` bytes.
    pub(super) fn inside(f: &std::fs::File, size: u64) -> std::io::Result<Option<String>> {
        if blkid::available().is_err() {
            return Ok(None);
        }
        for off in super::INSIDE {
            if off >= size {
                continue;
            }
            let found = blkid::probe(f.as_raw_fd(), off, size - off).map_err(io)?;
            if let Some(x) = found.iter().find(|x| !x.table).or(found.first()) {
                let place = format!("starting at {}", shown(off));
                return Ok(Some(describe(
                    x,
                    size - off,
                    &place,
                    Some("with no partition table before it"),
                )));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(off: usize, bytes: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; HEAD_BYTES];
        b[off..off + bytes.len()].copy_from_slice(bytes);
        b
    }

    #[test]
    fn device_reads_are_whole_aligned_sectors_giving_the_bytes_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.img");
        let size = 3 * SECTOR + 512;
        let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        for (off, len) in [
            (0, 10),
            (510, 2),
            (4095, 2),
            (5000, 3000),
            (size - 512, 512),
        ] {
            let got = read_sectors(&f, off, len, size).unwrap();
            assert_eq!(
                got,
                data[off as usize..(off as usize + len)],
                "at {off}+{len}"
            );
        }
        // A signature found at the end of a device whose size is not a
        // multiple of the 4 KiB read unit.
        let mut img = vec![0u8; size as usize];
        img[510] = 0x55;
        img[511] = 0xAA;
        std::fs::write(&path, &img).unwrap();
        let found = probe_device(&path, size).unwrap();
        assert!(found.is_some_and(|s| s.contains("MBR")));
    }

    #[test]
    fn zeroes_hold_no_signature() {
        assert_eq!(find_signature(&vec![0u8; HEAD_BYTES]), None);
        assert_eq!(find_signature(&[]), None);
        assert_eq!(find_signature(&[0u8; 100]), None);
        let size = 8u64 << 20;
        assert_eq!(find_at_end(&vec![0u8; TAIL_BYTES as usize], size), None);
    }

    #[test]
    fn well_known_signatures_are_named() {
        let cases: &[(usize, &[u8], &str)] = &[
            (1080, &[0x53, 0xEF], "ext2/3/4"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (1024, &[0x10, 0x20, 0xF5, 0xF2], "F2FS"),
            (3, b"NTFS    ", "NTFS"),
            (82, b"FAT32   ", "FAT"),
            (32769, b"CD001", "ISO 9660"),
            (4086, b"SWAPSPACE2", "swap"),
            (
                512,
                b"LABELONE\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0LVM2 001",
                "LVM",
            ),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (0, &[0xfc, 0x4e, 0x2b, 0xa9], "superblock 1.1"),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "superblock 1.2"),
            (4096 + 24, &BCACHE_MAGIC, "bcache"),
            (131072 + 2048, &[0x0c, 0xb1, 0xba, 0, 0, 0, 0, 0], "ZFS"),
            (393216 + 1024, &[0, 0, 0, 0, 0, 0xba, 0xb1, 0x0c], "ZFS"),
            (512, b"EFI PART", "GPT"),
            (510, &[0x55, 0xAA], "MBR"),
        ];
        for (off, magic, name) in cases {
            let sig = find_signature(&with(*off, magic));
            assert!(sig.is_some_and(|s| s.contains(name)), "{name}: got {sig:?}");
        }
    }

    #[test]
    fn signatures_at_the_end_are_found_where_they_live() {
        // A size that is not a multiple of 64 KiB, as real devices are.
        let size: u64 = (64 << 20) + (36 << 10) + 512;
        let tail_start = size - TAIL_BYTES;
        let put = |off: u64, bytes: &[u8]| {
            let mut t = vec![0u8; TAIL_BYTES as usize];
            let o = (off - tail_start) as usize;
            t[o..o + bytes.len()].copy_from_slice(bytes);
            t
        };
        let md = MD_MAGIC.to_le_bytes();
        let md090 = (size & !0xFFFF) - 0x10000;
        let sig = find_at_end(&put(md090, &md), size);
        assert!(sig.is_some_and(|s| s.contains("0.90")), "{sig:?}");
        let md10 = ((size / 512 - 16) & !7) * 512;
        let mut sb = md.to_vec();
        sb.extend_from_slice(&1u32.to_le_bytes());
        let sig = find_at_end(&put(md10, &sb), size);
        assert!(sig.is_some_and(|s| s.contains("1.0")), "{sig:?}");
        let sig = find_at_end(&put(size - 512, b"EFI PART"), size);
        assert!(sig.is_some_and(|s| s.contains("backup")), "{sig:?}");
        let aligned = size & !(ZFS_LABEL - 1);
        for label in [aligned - 2 * ZFS_LABEL, aligned - ZFS_LABEL] {
            let ub = ZFS_UBERBLOCK_MAGIC.to_le_bytes();
            let sig = find_at_end(&put(label + (128 << 10) + 5 * 1024, &ub), size);
            assert!(sig.is_some_and(|s| s.contains("ZFS")), "{sig:?}");
        }
        // The magic a sector away from where it lives is nothing.
        assert_eq!(find_at_end(&put(md090 + 512, &md), size), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn libblkid_findings_are_named_with_where_they_are() {
        use crate::sys::blkid::Found;
        let found = |name: &str, version: Option<&str>, magic_at: Option<u64>, table: bool| Found {
            name: name.to_string(),
            table,
            usage: None,
            version: version.map(str::to_string),
            magic_at,
        };
        let size = 64u64 << 20;
        let md = found(
            "linux_raid_member",
            Some("0.90.0"),
            Some(size - (64 << 10)),
            false,
        );
        assert_eq!(
            libblkid::describe(&md, size, "", None),
            "an MD RAID member (superblock 0.90, at its end; libblkid: linux_raid_member 0.90.0)"
        );
        let md = found("linux_raid_member", Some("1.2"), Some(4096), false);
        assert_eq!(
            libblkid::describe(
                &md,
                size,
                "starting at 1 MiB",
                Some("with no partition table before it")
            ),
            "an MD RAID member starting at 1 MiB (superblock 1.2; with no partition table before \
             it; libblkid: linux_raid_member 1.2)"
        );
        let luks = found("crypto_LUKS", Some("2"), Some(0x4000), false);
        assert!(libblkid::describe(&luks, size, "", None)
            .starts_with("a LUKS2 encrypted volume (its secondary header, at 16 KiB;"));
        let gpt = found("gpt", None, Some(size - 512), true);
        assert_eq!(
            libblkid::describe(&gpt, size, "", None),
            "a GPT partition table (its backup header, at its end; libblkid: gpt)"
        );
        let other = Found {
            usage: Some("filesystem".to_string()),
            ..found("nilfs2", None, None, false)
        };
        assert_eq!(
            libblkid::describe(&other, size, "", None),
            "a nilfs2 filesystem (libblkid: nilfs2)"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn libblkid_probes_a_window_of_a_file() {
        if crate::sys::blkid::available().is_err() {
            // libblkid1 is part of every Debian; the test needs it.
            panic!(
                "libblkid.so.1 cannot be loaded: {:?}",
                crate::sys::blkid::available()
            );
        }
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        let size = 8u64 << 20;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        f.set_len(size).unwrap();
        // An MD 1.2 superblock at 4 KiB of a partition at 1 MiB: magic,
        // major version 1, its own offset (8 sectors).
        let sb = (1u64 << 20) + 4096;
        std::os::unix::fs::FileExt::write_all_at(&f, &MD_MAGIC.to_le_bytes(), sb).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &1u32.to_le_bytes(), sb + 4).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &8u64.to_le_bytes(), sb + 144).unwrap();
        let fd = f.as_raw_fd();
        assert_eq!(crate::sys::blkid::probe(fd, 0, 0).unwrap(), vec![]);
        let got = crate::sys::blkid::probe(fd, 1 << 20, size - (1 << 20)).unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].name, "linux_raid_member");
        assert_eq!(got[0].version.as_deref(), Some("1.2"));
        assert_eq!(got[0].magic_at, Some(4096));
        // The same bytes a sector away are nothing to libblkid.
        assert_eq!(
            crate::sys::blkid::probe(fd, (1 << 20) + 512, 0).unwrap(),
            vec![]
        );
    }
}
