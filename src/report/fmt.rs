//! Number and time formatting shared by the text formats: values squeezed
//! into a few characters with a unit prefix (`33.8MiB/s`, `12.3k`), and the
//! latency unit (nsec/usec/msec) chosen from the spread of the values.

/// Formats `v` the way fio's `num2str` does: the integer part of `v` is
/// divided by 1000 (or 1024 when `base` is 1024) until it has at most
/// `width` digits; the remainder of the last division supplies as many
/// decimals as still fit. Then the prefix (`k`/`M`/… or `Ki`/`Mi`/…) and
/// `unit` are appended. Integer arithmetic throughout, so the digits equal
/// fio's for the same value (`35487000` → `33.8MiB/s`).
pub fn num2str(v: f64, width: usize, base: u64, unit: &str) -> String {
    let pow2 = base == 1024;
    let prefixes: [&str; 7] = if pow2 {
        ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    } else {
        ["", "k", "M", "G", "T", "P", "E"]
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    };
    let mut post = 0usize;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if decimal_len(num) <= width {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let room = width as i64 - decimal_len(num) as i64;
    if room <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let decimals = (room - 1) as usize;
    // The fraction is printed on its own and its digits after the point
    // kept; one that rounds up to 1 carries into the integer part
    // (69.9995 MiB shows as 70.0MiB, 9.9996 as 10.00), as fio 3.33 does.
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    let digits = frac.get(2..).unwrap_or("");
    format!("{num}.{digits}{}{unit}", prefixes[post])
}

fn decimal_len(v: u64) -> usize {
    let mut n = 1;
    let mut v = v / 10;
    while v > 0 {
        n += 1;
        v /= 10;
    }
    n
}

/// How a report prints sizes and rates: `kb_base` (IEC or SI prefixes
/// first), `unit_base` (bytes or bits) and `significant_figures`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    pub pow2: bool,
    pub bits: bool,
    pub width: usize,
}

impl Units {
    pub fn new(kb_base: u64, unit_base: u32, sig_figs: u32) -> Units {
        Units {
            pow2: kb_base != 1000,
            bits: unit_base == 1,
            width: sig_figs.clamp(1, 10) as usize,
        }
    }

    fn base(&self, alt: bool) -> u64 {
        if self.pow2 != alt {
            1024
        } else {
            1000
        }
    }

    /// A rate in bytes/s, in the primary (`alt` false) or other base.
    pub fn rate(&self, bytes_per_s: u64, alt: bool) -> String {
        if self.bits {
            num2str(
                bytes_per_s.saturating_mul(8) as f64,
                self.width,
                self.base(alt),
                "bit/s",
            )
        } else {
            num2str(bytes_per_s as f64, self.width, self.base(alt), "B/s")
        }
    }

    /// An amount of bytes, in the primary or other base.
    pub fn bytes(&self, bytes: u64, alt: bool) -> String {
        num2str(bytes as f64, self.width, self.base(alt), "B")
    }

    /// `33.8MiB/s (35.5MB/s)`.
    pub fn rate_pair(&self, bytes_per_s: u64) -> String {
        format!(
            "{} ({})",
            self.rate(bytes_per_s, false),
            self.rate(bytes_per_s, true)
        )
    }

    /// `67.7MiB (71.0MB)`.
    pub fn bytes_pair(&self, bytes: u64) -> String {
        format!("{} ({})", self.bytes(bytes, false), self.bytes(bytes, true))
    }
}

/// Bandwidth as fio prints it: `33.8MiB/s (35.5MB/s)`; the order follows
/// `kb_base` (IEC first for 1024).
pub fn bw_pair(bytes_per_s: u64, kb_base: u64) -> String {
    Units::new(kb_base, 0, 4).rate_pair(bytes_per_s)
}

/// A byte amount as fio prints it: `67.7MiB (71.0MB)`.
pub fn bytes_pair(bytes: u64, kb_base: u64) -> String {
    Units::new(kb_base, 0, 4).bytes_pair(bytes)
}

/// The unit a latency summary is shown in, from its min, max and stddev
/// (all in ns): returns (divisor, name).
pub fn lat_unit(min: u64, max: u64, stddev: f64) -> (f64, &'static str) {
    if min > 2_000_000 && max > 99_999_000 && stddev > 1_000_000.0 {
        (1e6, "msec")
    } else if min > 2000 && max > 99_999 && stddev > 1000.0 {
        (1e3, "usec")
    } else {
        (1.0, "nsec")
    }
}

/// The unit percentiles are shown in, from the smallest and largest value.
pub fn pct_unit(minv: u64, maxv: u64) -> (u64, &'static str) {
    if minv > 2_000_000 && maxv > 99_999_999 {
        (1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1000, "usec")
    } else {
        (1, "nsec")
    }
}

/// Local time in C's `ctime` layout: `Sun Nov 22 01:45:11 2026`.
pub fn ctime(unix_s: u64) -> String {
    ctime_in(unix_s, false)
}

/// `ctime` layout in local time, or in UTC when `utc` is set (fixed
/// output for the fake clock, whatever the time zone).
pub fn ctime_in(unix_s: u64, utc: bool) -> String {
    let Some(c) = crate::sys::calendar(unix_s as i64, utc) else {
        return String::new();
    };
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[c.weekday as usize % 7],
        MONTHS[(c.month as usize + 11) % 12],
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.year
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeezes_numbers() {
        assert_eq!(num2str(8662.0, 4, 1000, ""), "8662");
        assert_eq!(num2str(12345.0, 4, 1000, ""), "12.3k");
        assert_eq!(num2str(35_487_000.0, 4, 1024, "B/s"), "33.8MiB/s");
        assert_eq!(num2str(35_487_000.0, 4, 1000, "B/s"), "35.5MB/s");
        assert_eq!(num2str(0.0, 4, 1024, "B"), "0B");
        assert_eq!(num2str(4096.0, 4, 1024, "B"), "4096B");
        assert_eq!(num2str(16.0 * 1048576.0, 4, 1024, "B"), "16.0MiB");
        // Values from fio 3.33 runs.
        assert_eq!(num2str(4096.0, 4, 1000, ""), "4096");
        assert_eq!(num2str(4_096_000.0, 4, 1000, ""), "4096k");
        assert_eq!(num2str(18_027.0, 6, 1000, ""), "18027");
        assert_eq!(num2str(14_876_321.0, 6, 1000, ""), "14876k");
        assert_eq!(num2str(67_108_864.0, 4, 1024, "B"), "64.0MiB");
        assert_eq!(num2str(4_194_304.0, 4, 1000, "B"), "4194kB");
        assert_eq!(num2str(8_159_232.0, 4, 1000, "B"), "8159kB");
        assert_eq!(num2str(16_777_216_000.0, 4, 1024, "B/s"), "15.6GiB/s");
        assert_eq!(num2str(8_388_608_000.0, 4, 1000, "bit/s"), "8389Mbit/s");
        assert_eq!(num2str(65536.0, 4, 1024, "B"), "64.0KiB");
        // Fractions rounding up to 1 carry (checked against fio 3.33).
        assert_eq!(num2str(73_399_296.0, 4, 1024, "B"), "70.0MiB");
        assert_eq!(num2str(104_856_576.0, 4, 1024, "B"), "100.0MiB");
        assert_eq!(num2str(10_484_736.0, 4, 1024, "B"), "10.00MiB");
    }

    #[test]
    fn units_follow_kb_and_unit_base() {
        let u = Units::new(1024, 0, 4);
        assert_eq!(u.rate_pair(35_487_000), "33.8MiB/s (35.5MB/s)");
        let u = Units::new(1000, 0, 4);
        assert_eq!(u.rate_pair(4_080_000_000), "4080MB/s (3891MiB/s)");
        let u = Units::new(1024, 1, 4);
        assert_eq!(u.rate_pair(1_048_576_000), "8000Mibit/s (8389Mbit/s)");
        assert_eq!(ctime_in(0, true), "Thu Jan  1 00:00:00 1970");
    }

    #[test]
    fn latency_units() {
        assert_eq!(lat_unit(21_000, 18_027_000, 441_800.0).1, "usec");
        assert_eq!(lat_unit(100, 5000, 10.0).1, "nsec");
        assert_eq!(pct_unit(26_000, 16_909_000).1, "usec");
    }
}
