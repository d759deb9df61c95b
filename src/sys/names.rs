//! Names Windows keeps for its devices: `CON`, `PRN`, `AUX`, `NUL`,
//! `COM1`–`COM9`, `LPT1`–`LPT9` (also `COM¹`, `COM²`, `COM³`, `LPT¹`,
//! `LPT²`, `LPT³`, which Windows' code pages read as digits) and the
//! console's `CONIN$` and `CONOUT$`. A path component with such a name
//! opens the device, not a file, in any letter case, with any extension
//! (`nul.dat`, `con.txt`) and with trailing dots or spaces (`NUL.`,
//! `COM1 `): Windows reads a component's name up to its first dot or
//! colon, without the spaces before it.
//!
//! The rule is Windows' own, but it is checked here on every system so
//! that it is tested everywhere; iomark applies it on Windows only (on
//! Linux `NUL` is an ordinary file name).

use std::path::{Component, Path};

/// A reserved device name found in a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reserved<'a> {
    /// The component as written (`nul.dat`).
    pub component: &'a str,
    /// The device it names, as Windows spells it (`NUL`, `COM1`).
    pub device: &'static str,
    /// The component is the device's name alone (no extension; trailing
    /// dots, spaces or a colon aside): `NUL`, not `nul.dat`.
    pub exact: bool,
    /// It is the last component of the path (the file's own name).
    pub last: bool,
}

impl Reserved<'_> {
    /// The null device itself (`NUL`, as the last component, no
    /// extension): where output is discarded, as `/dev/null` on Unix.
    pub fn is_null_device(&self) -> bool {
        self.device == "NUL" && self.exact && self.last
    }

    /// What the device is, in words.
    pub fn what(&self) -> &'static str {
        match self.device {
            "CON" | "CONIN$" | "CONOUT$" => "the console",
            "PRN" => "the printer",
            "AUX" => "the auxiliary serial port",
            "NUL" => "the null device",
            d if d.starts_with("COM") => "a serial port",
            _ => "a parallel (printer) port",
        }
    }

    /// Why such a name cannot be a file (or directory), in one clause:
    /// "'COM1' is the name of a Windows device (a serial port), not a
    /// file name".
    pub fn reason(&self) -> String {
        let not = if self.last {
            "not a file name"
        } else {
            "not a directory name"
        };
        if self.exact {
            format!(
                "'{}' is the name of a Windows device ({}), {not}",
                self.component,
                self.what()
            )
        } else {
            format!(
                "'{}' is the Windows device {} ({}): Windows ignores the extension of a device \
                 name, so it is {not}",
                self.component,
                self.device,
                self.what()
            )
        }
    }
}

/// The devices, in Windows' spelling (superscript digits included).
const DEVICES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
    "CONIN$",
    "CONOUT$",
];

/// The device a single path component names, if it names one, and
/// whether it is the device's name alone.
pub fn device_name(component: &str) -> Option<(&'static str, bool)> {
    let end = component.find(['.', ':']).unwrap_or(component.len());
    let stem = component[..end].trim_end_matches(' ');
    let rest = &component[end..];
    let device = DEVICES
        .iter()
        .find(|d| d.len() == stem.len() && stem.eq_ignore_ascii_case(d))?;
    let exact = rest.chars().all(|c| matches!(c, '.' | ' ' | ':'));
    Some((device, exact))
}

/// The first component of `path` that is a reserved device name, if
/// any (device namespace paths such as `\\.\COM1` name devices on
/// purpose and are not looked at: their prefix is no component).
pub fn reserved_in(path: &Path) -> Option<Reserved<'_>> {
    let normal: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_str().unwrap_or("")),
            _ => None,
        })
        .collect();
    let n = normal.len();
    normal.into_iter().enumerate().find_map(|(i, c)| {
        device_name(c).map(|(device, exact)| Reserved {
            component: c,
            device,
            exact,
            last: i + 1 == n,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_in_any_case_with_any_extension() {
        for (name, device, exact) in [
            ("NUL", "NUL", true),
            ("nul", "NUL", true),
            ("Nul.", "NUL", true),
            ("NUL ", "NUL", true),
            ("NUL:", "NUL", true),
            ("nul.dat", "NUL", false),
            ("NUL.tar.gz", "NUL", false),
            ("nul .txt", "NUL", false),
            ("con.txt", "CON", false),
            ("CON", "CON", true),
            ("prn", "PRN", true),
            ("Aux.log", "AUX", false),
            ("COM1", "COM1", true),
            ("com9.json", "COM9", false),
            ("lpt3", "LPT3", true),
            ("LPT9.", "LPT9", true),
            ("com\u{b9}", "COM\u{b9}", true),
            ("LPT\u{b3}.txt", "LPT\u{b3}", false),
            ("conin$", "CONIN$", true),
            ("CONOUT$", "CONOUT$", true),
        ] {
            assert_eq!(device_name(name), Some((device, exact)), "{name}");
        }
        for name in [
            "",
            "NULL",
            "nul_bw.1.log",
            "CONSOLE",
            "COM",
            "COM0",
            "COM10",
            "LPT0",
            "lpt",
            "xnul",
            " nul",
            "aux1",
            "com\u{b4}",
            "a.nul",
            "data.con",
            "COM1x",
        ] {
            assert_eq!(device_name(name), None, "{name}");
        }
    }

    #[test]
    fn any_component_of_a_path_is_looked_at() {
        let r = reserved_in(Path::new("NUL")).unwrap();
        assert!(r.is_null_device() && r.last && r.exact);
        let r = reserved_in(Path::new("out/nul")).unwrap();
        assert!(r.is_null_device());
        let r = reserved_in(Path::new("out/nul.json")).unwrap();
        assert!(!r.is_null_device() && r.last && !r.exact);
        let r = reserved_in(Path::new("data/com1/f.dat")).unwrap();
        assert_eq!((r.component, r.device, r.last), ("com1", "COM1", false));
        let r = reserved_in(Path::new("nul/f.dat")).unwrap();
        assert!(!r.is_null_device(), "NUL as a directory is no null device");
        assert_eq!(reserved_in(Path::new("data/null/f.dat")), None);
        assert_eq!(reserved_in(Path::new("./a/b.dat")), None);
    }

    #[test]
    fn the_reason_names_the_device() {
        let r = reserved_in(Path::new("x/nul.dat")).unwrap();
        assert_eq!(
            r.reason(),
            "'nul.dat' is the Windows device NUL (the null device): Windows ignores the \
             extension of a device name, so it is not a file name"
        );
        let r = reserved_in(Path::new("COM1")).unwrap();
        assert_eq!(
            r.reason(),
            "'COM1' is the name of a Windows device (a serial port), not a file name"
        );
        let r = reserved_in(Path::new("lpt2")).unwrap();
        assert!(r.reason().contains("parallel"), "{}", r.reason());
        let r = reserved_in(Path::new("aux/f.dat")).unwrap();
        assert_eq!(
            r.reason(),
            "'aux' is the name of a Windows device (the auxiliary serial port), not a directory \
             name"
        );
    }
}
