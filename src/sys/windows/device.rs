//! Disks and volumes on Windows: `\\.\PhysicalDriveN` (a whole disk),
//! `\\.\C:` and `\\?\Volume{GUID}` (a volume), and what the data-safety
//! check needs to know of them: their length and device number, the
//! sector size unbuffered I/O must be aligned to, whether a filesystem
//! is mounted on them or on a volume of theirs, and what they hold
//! (partitions, a filesystem).

use std::path::Path;

use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::Ioctl;

use super::{cname, from_wide, ioctl_out, open_at, wide, RawFd, AT_FDCWD, O_PATH, O_RDONLY};

/// Whether `path` names a raw device by its syntax: `\\.\NAME` or
/// `\\?\NAME` with no further component (`\\.\PhysicalDrive0`, `\\.\C:`,
/// `\\?\Volume{…}`), except named pipes. `\\?\C:\dir\file` is a file.
pub fn is_device_path(path: &Path) -> bool {
    let s = path.to_string_lossy().replace('/', "\\");
    let rest = match s
        .strip_prefix("\\\\.\\")
        .or_else(|| s.strip_prefix("\\\\?\\"))
    {
        Some(r) => r,
        None => return false,
    };
    !rest.is_empty() && !rest.contains('\\') && !rest.to_ascii_lowercase().starts_with("pipe")
}

/// The length in bytes of a disk or volume handle (None for anything
/// else: a file handle refuses the request).
pub(super) fn length(fd: RawFd) -> Option<u64> {
    let l: Ioctl::GET_LENGTH_INFORMATION = ioctl_out(fd, Ioctl::IOCTL_DISK_GET_LENGTH_INFO, &[])?;
    u64::try_from(l.Length).ok()
}

/// Which device a disk or volume handle is: type, disk number and
/// partition number in one value.
pub(super) fn number(fd: RawFd) -> Option<u64> {
    let n: Ioctl::STORAGE_DEVICE_NUMBER =
        ioctl_out(fd, Ioctl::IOCTL_STORAGE_GET_DEVICE_NUMBER, &[])?;
    Some(
        (u64::from(n.DeviceType) << 40)
            | (u64::from(n.DeviceNumber) << 16)
            | u64::from(n.PartitionNumber & 0xffff),
    )
}

fn open_device(path: &Path) -> Option<super::OwnedFd> {
    let c = cname(path).ok()?;
    open_at(AT_FDCWD, &c, O_PATH, 0)
        .or_else(|_| open_at(AT_FDCWD, &c, O_RDONLY, 0))
        .ok()
}

/// The logical sector size of a device: what unbuffered I/O on it must
/// be aligned to.
fn device_sector(fd: RawFd) -> Option<u64> {
    let q = Ioctl::STORAGE_PROPERTY_QUERY {
        PropertyId: Ioctl::StorageAccessAlignmentProperty,
        QueryType: Ioctl::PropertyStandardQuery,
        AdditionalParameters: [0],
    };
    // SAFETY: a plain-data struct viewed as its bytes.
    let input = unsafe {
        std::slice::from_raw_parts(
            (&q as *const Ioctl::STORAGE_PROPERTY_QUERY).cast::<u8>(),
            std::mem::size_of::<Ioctl::STORAGE_PROPERTY_QUERY>(),
        )
    };
    let a: Option<Ioctl::STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR> =
        ioctl_out(fd, Ioctl::IOCTL_STORAGE_QUERY_PROPERTY, input);
    if let Some(a) = a.filter(|a| a.BytesPerLogicalSector > 0) {
        return Some(u64::from(a.BytesPerLogicalSector));
    }
    let g: Ioctl::DISK_GEOMETRY_EX = ioctl_out(fd, Ioctl::IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, &[])?;
    (g.Geometry.BytesPerSector > 0).then_some(u64::from(g.Geometry.BytesPerSector))
}

/// The sector size of the volume holding `path` (which need not exist
/// yet: its deepest existing ancestor is asked).
fn volume_sector(path: &Path) -> Option<u64> {
    let abs = super::absolute(path);
    let mut at: &Path = &abs;
    while !at.exists() {
        at = at.parent()?;
    }
    let w = wide(at.as_os_str(), true);
    let mut root = [0u16; 1024];
    // SAFETY: a NUL-terminated path and a buffer of the length given.
    if unsafe { fs::GetVolumePathNameW(w.as_ptr(), root.as_mut_ptr(), root.len() as u32) } == 0 {
        return None;
    }
    let (mut spc, mut bps, mut free, mut total) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: a NUL-terminated root path; four out-parameters.
    let ok =
        unsafe { fs::GetDiskFreeSpaceW(root.as_ptr(), &mut spc, &mut bps, &mut free, &mut total) };
    (ok != 0 && bps > 0).then_some(u64::from(bps))
}

/// The alignment (memory, offsets and sizes) unbuffered I/O on `path`
/// needs: the sector size of the device, or of the volume holding the
/// file.
pub fn dio_alignment(path: &Path) -> Option<(u64, u64)> {
    let sector = if is_device_path(path) {
        // Every disk has sectors of 512 bytes or more: the least a
        // device that does not say (Wine's image-backed volumes) needs.
        let fd = open_device(path)?;
        device_sector(fd.0).unwrap_or(512)
    } else {
        volume_sector(path)?
    };
    Some((sector, sector))
}

/// The mount points (drive letters, folders) of a volume named by its
/// GUID path (`\\?\Volume{…}\`).
fn mount_points(volume_guid: &[u16]) -> Vec<String> {
    let mut buf = vec![0u16; 4096];
    let mut len = 0u32;
    // SAFETY: a NUL-terminated volume name and a buffer of the length
    // given; the result is a list of NUL-terminated strings.
    let ok = unsafe {
        fs::GetVolumePathNamesForVolumeNameW(
            volume_guid.as_ptr(),
            buf.as_mut_ptr(),
            buf.len() as u32,
            &mut len,
        )
    };
    if ok == 0 {
        return Vec::new();
    }
    buf.split(|c| *c == 0)
        .filter(|s| !s.is_empty())
        .map(|s| from_wide(s).to_string_lossy().into_owned())
        .collect()
}

/// Every volume of the machine: its GUID path (with the trailing
/// backslash, NUL-terminated) and the disks its extents are on.
fn volumes() -> Vec<(Vec<u16>, Vec<u32>)> {
    let mut out = Vec::new();
    let mut name = [0u16; 260];
    // SAFETY: a buffer of the length given; the search handle is closed.
    let h = unsafe { fs::FindFirstVolumeW(name.as_mut_ptr(), name.len() as u32) };
    if h == wf::INVALID_HANDLE_VALUE {
        return out;
    }
    loop {
        let end = name.iter().position(|c| *c == 0).unwrap_or(name.len());
        let guid: Vec<u16> = name[..=end.min(name.len() - 1)].to_vec();
        // The volume device itself is the GUID path without the
        // trailing backslash.
        let dev = from_wide(&name[..end.saturating_sub(1)]);
        out.push((guid, disks_of(Path::new(&dev))));
        // SAFETY: a search handle and a buffer of the length given.
        if unsafe { fs::FindNextVolumeW(h, name.as_mut_ptr(), name.len() as u32) } == 0 {
            break;
        }
    }
    // SAFETY: the search handle opened above.
    unsafe { fs::FindVolumeClose(h) };
    out
}

/// The disk numbers a volume's extents are on.
fn disks_of(volume: &Path) -> Vec<u32> {
    let Some(fd) = open_device(volume) else {
        return Vec::new();
    };
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Extents {
        n: u32,
        pad: u32,
        e: [Ioctl::DISK_EXTENT; 16],
    }
    let Some(x): Option<Extents> = ioctl_out(fd.0, fs::IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, &[])
    else {
        return Vec::new();
    };
    x.e[..(x.n as usize).min(16)]
        .iter()
        .map(|e| e.DiskNumber)
        .collect()
}

/// Whether `path` names a whole disk (`\\.\PhysicalDriveN`) rather
/// than a volume.
pub fn is_physical_drive(path: &Path) -> bool {
    physical_drive(path).is_some()
}

/// `\\.\PhysicalDriveN` → N.
fn physical_drive(path: &Path) -> Option<u32> {
    let s = path
        .to_string_lossy()
        .to_ascii_lowercase()
        .replace('/', "\\");
    s.strip_prefix("\\\\.\\physicaldrive")?.parse().ok()
}

/// The volume GUID path (`\\?\Volume{…}\`, NUL-terminated) of a volume
/// device name (`\\.\C:`, `\\?\Volume{…}`).
fn volume_guid(path: &Path) -> Option<Vec<u16>> {
    let s = path.to_string_lossy().replace('/', "\\");
    let rest = s
        .strip_prefix("\\\\.\\")
        .or_else(|| s.strip_prefix("\\\\?\\"))?;
    let mount = format!("{rest}\\");
    let w = wide(std::ffi::OsStr::new(&mount), true);
    let mut out = [0u16; 64];
    // SAFETY: a NUL-terminated mount point and a buffer of the length
    // given.
    let ok = unsafe {
        fs::GetVolumeNameForVolumeMountPointW(w.as_ptr(), out.as_mut_ptr(), out.len() as u32)
    };
    if ok == 0 {
        return None;
    }
    let end = out.iter().position(|c| *c == 0).unwrap_or(out.len());
    let mut v = out[..end].to_vec();
    v.push(0);
    Some(v)
}

/// Why writing to the device at `path` would write under a mounted
/// filesystem, if it would: a volume mounted somewhere (a drive letter
/// or a folder), or a disk one of whose volumes is.
pub fn device_in_use(path: &Path) -> Option<String> {
    if let Some(disk) = physical_drive(path) {
        for (guid, disks) in volumes() {
            if !disks.contains(&disk) {
                continue;
            }
            let at = mount_points(&guid);
            if !at.is_empty() {
                return Some(format!(
                    "volume {} on it is mounted as {}",
                    from_wide(&guid).to_string_lossy().trim_end_matches('\\'),
                    at.join(", ")
                ));
            }
        }
        return None;
    }
    let guid = volume_guid(path)?;
    let at = mount_points(&guid);
    (!at.is_empty()).then(|| format!("it is mounted as {}", at.join(", ")))
}

/// What a disk or volume holds that a write would destroy: partitions on
/// a disk, a filesystem on a volume (signatures found by reading are the
/// caller's).
pub fn device_holds(path: &Path) -> Option<String> {
    let fd = open_device(path)?;
    // Only a disk or volume is asked (Wine shows a drive letter backed
    // by an image file as that file, and would answer for the
    // filesystem the file is on): reading finds what such a file holds.
    if super::fstat(fd.0).ok()?.fmt != crate::sys::S_IFBLK {
        return None;
    }
    if physical_drive(path).is_some() {
        let n = partitions(fd.0);
        return (n > 0).then(|| format!("it holds {n} partition{}", if n == 1 { "" } else { "s" }));
    }
    let mut fsname = [0u16; 64];
    // SAFETY: buffers of the lengths given; the others may be null.
    let ok = unsafe {
        fs::GetVolumeInformationByHandleW(
            fd.0 as wf::HANDLE,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            fsname.as_mut_ptr(),
            fsname.len() as u32,
        )
    };
    let name = from_wide(&fsname).to_string_lossy().into_owned();
    (ok != 0 && !name.is_empty() && name != "RAW")
        .then(|| format!("it holds a filesystem ({name})"))
}

/// The partitions in use on a disk (MBR entries with a type, GPT
/// entries with a length).
fn partitions(fd: RawFd) -> usize {
    const MAX: usize = 128;
    let entry = std::mem::size_of::<Ioctl::PARTITION_INFORMATION_EX>();
    let head = std::mem::size_of::<Ioctl::DRIVE_LAYOUT_INFORMATION_EX>() - entry;
    let mut buf = vec![0u64; (head + MAX * entry).div_ceil(8)];
    let mut got = 0u32;
    // SAFETY: a buffer of the length given, aligned for the struct.
    let ok = unsafe {
        windows_sys::Win32::System::IO::DeviceIoControl(
            fd as wf::HANDLE,
            Ioctl::IOCTL_DISK_GET_DRIVE_LAYOUT_EX,
            std::ptr::null(),
            0,
            buf.as_mut_ptr().cast(),
            (buf.len() * 8) as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return 0;
    }
    // SAFETY: the call filled the header and PartitionCount entries.
    unsafe {
        let layout = &*(buf.as_ptr() as *const Ioctl::DRIVE_LAYOUT_INFORMATION_EX);
        let n = (layout.PartitionCount as usize).min(MAX);
        let first = layout.PartitionEntry.as_ptr();
        (0..n)
            .filter(|i| {
                let p = &*first.add(*i);
                let used = p.PartitionLength > 0;
                if p.PartitionStyle == Ioctl::PARTITION_STYLE_MBR {
                    used && p.Anonymous.Mbr.PartitionType != 0
                } else {
                    used
                }
            })
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_are_told_from_file_names() {
        for d in [
            r"\\.\PhysicalDrive0",
            r"\\.\C:",
            r"\\?\Volume{6b29fc40-ca47-1067-b31d-00dd010662da}",
            "//./PhysicalDrive3",
        ] {
            assert!(is_device_path(Path::new(d)), "{d}");
        }
        for f in [
            r"C:\data\f.dat",
            r"\\?\C:\dir\file",
            r"\\.\pipe\x",
            r"\\.\",
            "f",
        ] {
            assert!(!is_device_path(Path::new(f)), "{f}");
        }
        assert_eq!(physical_drive(Path::new(r"\\.\PhysicalDrive12")), Some(12));
        assert_eq!(physical_drive(Path::new(r"\\.\C:")), None);
    }
}
