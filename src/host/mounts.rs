//! The mount table (/proc/self/mountinfo): parsing and the mount that
//! holds a path.

use std::path::Path;

pub struct Mount {
    /// The device number (major, minor) of the mounted filesystem.
    pub dev: Option<(u32, u32)>,
    pub point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Decodes the octal escapes of /proc's mount tables (`\040` for a
/// space; mountinfo and /proc/swaps).
pub fn unescape(s: &str) -> String {
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

pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let lf: Vec<&str> = left.split(' ').collect();
            let rf: Vec<&str> = right.split(' ').collect();
            if lf.len() < 6 || rf.len() < 3 {
                return None;
            }
            let dev = lf[2]
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
            Some(Mount {
                dev,
                point: unescape(lf[4]),
                options: lf[5].to_string(),
                fs_type: rf[0].to_string(),
                source: unescape(rf[1]),
                super_options: rf[2].to_string(),
            })
        })
        .collect()
}

/// The mount table of this process (empty when it cannot be read).
pub fn read() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|s| parse_mountinfo(&s))
        .unwrap_or_default()
}

/// The mount holding `path` (canonical): the last (topmost) entry with
/// the longest mount point that is a prefix of it.
pub fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.point) && best.is_none_or(|b| m.point.len() >= b.point.len()) {
            best = Some(m);
        }
    }
    best
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
        assert_eq!(m[0].dev, Some((98, 0)));
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/sda1");
        assert_eq!(m[0].super_options, "rw,errors=remount-ro");
        let best = mount_of(&m, Path::new("/mnt/my disk/x")).unwrap();
        assert_eq!(best.point, "/mnt/my disk");
        let root = mount_of(&m, Path::new("/home")).unwrap();
        assert_eq!(root.point, "/");
    }
}
