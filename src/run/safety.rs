//! Refusing to destroy data iomark did not create. Before any job starts,
//! every block device a job writes to or trims is checked:
//!
//! - **in use**: the device, one of its partitions, or a device stacked on
//!   it (holders: device-mapper, LVM, MD) is mounted or used as swap, or
//!   the kernel refuses an exclusive open (some driver holds it). Allowed
//!   only with `allow_mounted_write=1`.
//! - **holds data**: the start of the device carries a well-known
//!   filesystem, volume or partition-table signature (ext2/3/4, XFS,
//!   btrfs, FAT, NTFS, exFAT, F2FS, ISO 9660, squashfs, swap, LVM, LUKS,
//!   MD RAID, ZFS, GPT, MBR). Allowed only with `allow_destroy_data=1`.
//!
//! Regular files get the same care: a job that would overwrite, trim,
//! truncate or delete an existing, non-empty regular file that iomark did
//! not create is refused unless `allow_destroy_data=1`. iomark marks the
//! files it creates with the extended attribute `user.iomark`, so its own
//! test files can be reused freely from run to run.
//!
//! The check only reads (the first 256 KiB of the device, /proc and
//! /sys, extended attributes); it never writes. Its error is one line
//! naming the target, the reason and the option that overrides it.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::plan::{Plan, TargetKind};

/// How much of the start of a device is read for signatures.
const PROBE_BYTES: usize = 256 << 10;

/// The extended attribute that marks files iomark created.
const MARK: &std::ffi::CStr = c"user.iomark";

/// Marks a file as created by iomark (best effort: filesystems without
/// user extended attributes simply keep no mark).
pub fn mark_created(path: &Path) {
    let Ok(c) = crate::engine::file::cstring(path) else {
        return;
    };
    // SAFETY: valid NUL-terminated path and name; a one-byte value.
    unsafe {
        libc::setxattr(c.as_ptr(), MARK.as_ptr(), b"1".as_ptr().cast(), 1, 0);
    }
}

/// Whether iomark created this file (it carries the mark).
pub fn created_by_iomark(path: &Path) -> bool {
    let Ok(c) = crate::engine::file::cstring(path) else {
        return false;
    };
    let mut v = [0u8; 8];
    // SAFETY: valid NUL-terminated path and name; the buffer is 8 bytes.
    let r = unsafe { libc::getxattr(c.as_ptr(), MARK.as_ptr(), v.as_mut_ptr().cast(), v.len()) };
    r > 0
}

/// Whether a job changes or removes existing data in its regular files,
/// and how (for the refusal message).
fn destroys_file_data(spec: &crate::job::JobSpec) -> Option<&'static str> {
    let engine = spec.io.ioengine.as_str();
    if engine == "filedelete" || spec.file.unlink || spec.file.unlink_each_loop {
        return Some("delete");
    }
    if engine == "ftruncate" {
        return Some("truncate");
    }
    // verify_only reads what an earlier run wrote.
    if spec.io.rw.writes()
        && !spec.verify.verify_only
        && !spec.file.file_append
        && !matches!(engine, "null" | "filecreate" | "filestat")
    {
        return Some("overwrite");
    }
    None
}

/// Checks every existing regular file a job would destroy data in.
fn check_regular_files(plan: &Plan) -> Result<(), String> {
    let mut checked: HashSet<&Path> = HashSet::new();
    for job in &plan.jobs {
        let spec = &job.spec;
        if spec.file.allow_destroy_data {
            continue;
        }
        let Some(verb) = destroys_file_data(spec) else {
            continue;
        };
        for f in job.files.iter().filter(|f| f.kind == TargetKind::Regular) {
            if !checked.insert(&f.path) || created_by_iomark(&f.path) {
                continue;
            }
            // Deleting an empty file loses nothing; overwriting one neither.
            if f.existing_size == 0 {
                continue;
            }
            return Err(format!(
                "refusing to {verb} '{}' (job '{}'): the file already exists and iomark did not \
                 create it; set allow_destroy_data=1 if you really want it {}",
                f.path.display(),
                spec.name,
                match verb {
                    "delete" => "deleted",
                    "truncate" => "truncated",
                    _ => "overwritten",
                }
            ));
        }
    }
    Ok(())
}

/// Checks every block device and regular file the plan would destroy
/// data in.
pub fn check(plan: &Plan) -> Result<(), String> {
    check_regular_files(plan)?;
    let mut checked: HashSet<&Path> = HashSet::new();
    let mut mounts: Option<HashMap<Dev, String>> = None;
    for job in &plan.jobs {
        let spec = &job.spec;
        // verify_only reads what an earlier run wrote.
        if !spec.io.rw.writes() || spec.verify.verify_only {
            continue;
        }
        for f in job.files.iter().filter(|f| f.kind == TargetKind::Block) {
            if !checked.insert(&f.path) {
                continue;
            }
            let dev = f.path.display();
            let refuse = |why: String, option: &str| {
                format!(
                    "refusing to write to block device '{dev}' (job '{}'): {why}; \
                     set {option}=1 if you really want it overwritten",
                    spec.name
                )
            };
            if !spec.file.allow_mounted_write {
                let m = mounts.get_or_insert_with(mounted_devices);
                if let Some(why) = in_use(&f.path, m) {
                    return Err(refuse(why, "allow_mounted_write"));
                }
            }
            if !spec.file.allow_destroy_data {
                let head = read_head(&f.path)
                    .map_err(|e| format!("cannot read '{dev}' to check it holds no data: {e}"))?;
                if let Some(sig) = find_signature(&head) {
                    return Err(refuse(format!("it holds {sig}"), "allow_destroy_data"));
                }
            }
        }
    }
    Ok(())
}

/// A device number as (major, minor).
type Dev = (u32, u32);

fn dev_of(rdev: u64) -> Dev {
    (libc::major(rdev), libc::minor(rdev))
}

fn parse_dev(s: &str) -> Option<Dev> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Mounted devices (by number, and by the source path's device number,
/// since btrfs shows an anonymous number) and active swap devices, each
/// with a description ("mounted on /boot").
fn mounted_devices() -> HashMap<Dev, String> {
    let mut out = HashMap::new();
    if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") {
        for (dev, source, target) in parse_mountinfo(&text) {
            let what = format!("mounted on {target}");
            if let Some(d) = dev {
                out.entry(d).or_insert_with(|| what.clone());
            }
            if source.starts_with('/') {
                if let Ok(m) = std::fs::metadata(&source) {
                    if m.file_type().is_block_device() {
                        out.entry(dev_of(m.rdev())).or_insert(what);
                    }
                }
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string("/proc/swaps") {
        for line in text.lines().skip(1) {
            let Some(name) = line.split_whitespace().next() else {
                continue;
            };
            if let Ok(m) = std::fs::metadata(unescape_octal(name)) {
                if m.file_type().is_block_device() {
                    out.insert(dev_of(m.rdev()), "in use as swap".to_string());
                }
            }
        }
    }
    out
}

/// Undoes the `\040`-style escapes of /proc mount tables.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// (device number, mount source, mount point) of each mountinfo line.
fn parse_mountinfo(text: &str) -> Vec<(Option<Dev>, String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() < 7 {
            continue;
        }
        let dev = parse_dev(fields[2]);
        let target = unescape_octal(fields[4]);
        let source = fields
            .iter()
            .position(|f| *f == "-")
            .and_then(|i| fields.get(i + 2))
            .map(|s| unescape_octal(s))
            .unwrap_or_default();
        out.push((dev, source, target));
    }
    out
}

/// The device, its partitions and everything stacked on them, each with
/// its kernel name, from /sys.
fn related_devices(dev: Dev) -> Vec<(Dev, String)> {
    let mut seen = HashSet::new();
    let mut todo = vec![dev];
    let mut out = Vec::new();
    while let Some(d) = todo.pop() {
        if !seen.insert(d) {
            continue;
        }
        let dir = Path::new("/sys/dev/block").join(format!("{}:{}", d.0, d.1));
        let name = std::fs::canonicalize(&dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| format!("{}:{}", d.0, d.1));
        out.push((d, name));
        // Partitions are subdirectories holding a `partition` file.
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let p = e.path();
                if p.join("partition").exists() {
                    if let Some(pd) = std::fs::read_to_string(p.join("dev"))
                        .ok()
                        .and_then(|s| parse_dev(&s))
                    {
                        todo.push(pd);
                    }
                }
            }
        }
        if let Ok(rd) = std::fs::read_dir(dir.join("holders")) {
            for e in rd.flatten() {
                let dev_file = Path::new("/sys/class/block")
                    .join(e.file_name())
                    .join("dev");
                if let Some(hd) = std::fs::read_to_string(dev_file)
                    .ok()
                    .and_then(|s| parse_dev(&s))
                {
                    todo.push(hd);
                }
            }
        }
    }
    out
}

/// Why a block device is in use, if it is.
fn in_use(path: &Path, mounts: &HashMap<Dev, String>) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = dev_of(meta.rdev());
    for (i, (d, name)) in related_devices(dev).into_iter().enumerate() {
        if let Some(what) = mounts.get(&d) {
            return Some(if i == 0 {
                format!("it is {what}")
            } else {
                format!("{name}, which is on it, is {what}")
            });
        }
    }
    // The kernel refuses an exclusive open of a device that a filesystem
    // or a driver (device-mapper, MD) holds, even one mounted elsewhere.
    let c = crate::engine::file::cstring(path).ok()?;
    // SAFETY: a read-only open of a NUL-terminated path, closed at once.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_EXCL | libc::O_CLOEXEC) };
    if fd < 0 {
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EBUSY) {
            return Some(
                "it is in use (mounted, or held by device-mapper, LVM or MD RAID)".to_string(),
            );
        }
        return None;
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    None
}

fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::with_capacity(PROBE_BYTES);
    f.take(PROBE_BYTES as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

fn at(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    buf.get(off..off + magic.len()) == Some(magic)
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    buf.get(off..off + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The first well-known signature found at the start of a device, named
/// for the error message.
pub fn find_signature(buf: &[u8]) -> Option<&'static str> {
    // Filesystems and volumes first: several also carry 0x55AA.
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
    if le32(buf, 0) == Some(0xa92b_4efc) || le32(buf, 4096) == Some(0xa92b_4efc) {
        return Some("an MD RAID member");
    }
    // ZFS: uberblocks (magic 0x00bab10c, either byte order) fill
    // 128-256 KiB of the first label.
    let mut o = 128 << 10;
    while o + 8 <= buf.len().min(256 << 10) {
        let b = &buf[o..o + 8];
        let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        if v == 0x00ba_b10c || v.swap_bytes() == 0x00ba_b10c {
            return Some("a ZFS pool member");
        }
        o += 1024;
    }
    if at(buf, 512, b"EFI PART") || at(buf, 4096, b"EFI PART") {
        return Some("a GPT partition table");
    }
    if at(buf, 510, &[0x55, 0xAA]) {
        return Some("an MBR partition table or boot sector");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(off: usize, bytes: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; PROBE_BYTES];
        b[off..off + bytes.len()].copy_from_slice(bytes);
        b
    }

    #[test]
    fn zeroes_hold_no_signature() {
        assert_eq!(find_signature(&vec![0u8; PROBE_BYTES]), None);
        assert_eq!(find_signature(&[]), None);
        assert_eq!(find_signature(&[0u8; 100]), None);
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
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "MD RAID"),
            (131072 + 2048, &[0x0c, 0xb1, 0xba, 0, 0, 0, 0, 0], "ZFS"),
            (512, b"EFI PART", "GPT"),
            (510, &[0x55, 0xAA], "MBR"),
        ];
        for (off, magic, name) in cases {
            let sig = find_signature(&with(*off, magic));
            assert!(sig.is_some_and(|s| s.contains(name)), "{name}: got {sig:?}");
        }
    }

    #[test]
    fn mountinfo_lines_give_device_source_and_target() {
        let text = "22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:45 / /mnt/my\\040disk rw - btrfs /dev/sdb1 rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m[0], (Some((252, 0)), "/dev/vda".into(), "/".into()));
        assert_eq!(m[1].1, "/dev/sdb1");
        assert_eq!(m[1].2, "/mnt/my disk");
    }

    #[test]
    fn the_root_filesystem_device_counts_as_mounted() {
        // Read-only: looks for the device mounted on "/" and checks that
        // it is seen as in use. Skipped where / is not on a block device.
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let Some((_, source, _)) = parse_mountinfo(&text)
            .into_iter()
            .find(|(_, s, t)| t == "/" && s.starts_with("/dev/"))
        else {
            return;
        };
        let Ok(meta) = std::fs::metadata(&source) else {
            return;
        };
        if !meta.file_type().is_block_device() {
            return;
        }
        let why = in_use(Path::new(&source), &mounted_devices());
        assert!(why.is_some_and(|w| w.contains("mounted on /")), "{source}");
    }
}
