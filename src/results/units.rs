//! Units and labels of results, shared by the terminal tables, the HTML
//! report and the history: latency, bandwidth and IOPS text, the
//! bandwidth unit of a report ([`BwUnit`]: MB/s for CrystalDiskMark-style
//! results, MiB/s otherwise), fio's size and time text, and
//! CrystalDiskMark test labels.

/// `123ns`, `45.6µs`, `1.23ms`, `1.50s`.
pub fn latency(ns: f64) -> String {
    if !ns.is_finite() {
        "-".into()
    } else if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1}µs", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

pub fn mib(bytes_per_s: f64) -> String {
    BwUnit::Mib.text(bytes_per_s)
}

/// The bandwidth unit of a report (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwUnit {
    /// MB/s: 1,000,000 bytes per second.
    Mb,
    /// MiB/s: 1,048,576 bytes per second.
    Mib,
}

impl BwUnit {
    /// MB/s when one of the tests is a CrystalDiskMark test, else MiB/s.
    pub fn of_tests<'a>(mut names: impl Iterator<Item = &'a str>) -> BwUnit {
        if names.any(|n| cdm_label(n).is_some()) {
            BwUnit::Mb
        } else {
            BwUnit::Mib
        }
    }

    /// `--units`: `MB` (or `MB/s`, `mb`) or `MiB` (or `MiB/s`, `mib`).
    pub fn parse(v: &str) -> Result<BwUnit, String> {
        let low = v.trim().to_ascii_lowercase();
        match low.strip_suffix("/s").unwrap_or(&low) {
            "mb" => Ok(BwUnit::Mb),
            "mib" => Ok(BwUnit::Mib),
            _ => Err(format!(
                "--units: '{}' is not a unit (MB for MB/s of 1,000,000 bytes, MiB for MiB/s of 1,048,576 bytes)",
                crate::job::error::printable(v)
            )),
        }
    }

    pub fn bytes(self) -> f64 {
        match self {
            BwUnit::Mb => 1e6,
            BwUnit::Mib => 1048576.0,
        }
    }

    /// "MB/s" or "MiB/s".
    pub fn name(self) -> &'static str {
        match self {
            BwUnit::Mb => "MB/s",
            BwUnit::Mib => "MiB/s",
        }
    }

    /// What the unit is, for the line that introduces a table.
    pub fn meaning(self) -> &'static str {
        match self {
            BwUnit::Mb => "MB/s of 1,000,000 bytes (as CrystalDiskMark shows)",
            BwUnit::Mib => "MiB/s of 1,048,576 bytes (as fio's figures)",
        }
    }

    /// A bandwidth in this unit: 2 decimals below 100, 1 above, "-" when
    /// unknown.
    pub fn text(self, bytes_per_s: f64) -> String {
        if !bytes_per_s.is_finite() {
            return "-".into();
        }
        let v = bytes_per_s / self.bytes();
        if v >= 100.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    }
}

pub fn iops(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Writes a byte count as a fio size (`1g`, `512m`, `4k`, or bytes).
pub fn size_text(bytes: u64) -> String {
    for (shift, s) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{s}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Writes microseconds as a fio time (`2s`, `500ms`, `250us`).
pub fn time_text(us: u64) -> String {
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// "SEQ1M Q8T1" from a CrystalDiskMark test name as a label
/// (`SEQ1M Q8T1`) or a job file section (`seq1m-q8t1-read`).
pub fn cdm_label(name: &str) -> Option<String> {
    let up = name.trim().to_uppercase();
    let up = up
        .strip_suffix("-READ")
        .or_else(|| up.strip_suffix("-WRITE"))
        .unwrap_or(&up)
        .replace('-', " ");
    let mut parts = up.split_whitespace();
    let (kind, queue) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let size = kind
        .strip_prefix("SEQ")
        .or_else(|| kind.strip_prefix("RND"))?;
    let digits = size.strip_suffix('K').or_else(|| size.strip_suffix('M'))?;
    let (q, t) = queue.strip_prefix('Q')?.split_once('T')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (all_digits(digits) && all_digits(q) && all_digits(t)).then(|| format!("{kind} {queue}"))
}

/// The method of an object request in direction `dir` (`read` → GET).
pub fn method(dir: &str) -> &str {
    match dir {
        "read" => "GET",
        "write" => "PUT",
        "trim" => "DELETE",
        d => d,
    }
}
