//! Number and time formatting shared by the text formats: values squeezed
//! into a few characters with a unit prefix (`33.8MiB/s`, `12.3k`), and the
//! latency unit (nsec/usec/msec) chosen from the spread of the values.

/// Formats `v` in at most `width` characters of digits (the decimal point
/// counts), scaling by `base` (1000 or 1024) and appending the prefix
/// (`k`/`M`/… or `Ki`/`Mi`/…) and `unit`.
pub fn num2str(v: f64, width: usize, base: u64, unit: &str) -> String {
    let prefixes: [&str; 7] = if base == 1024 {
        ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    } else {
        ["", "k", "M", "G", "T", "P", "E"]
    };
    let last = prefixes.len() - 1;
    let mut val = v.max(0.0);
    let mut i = 0;
    loop {
        let int_digits = digits(val.trunc());
        if int_digits <= width || i == last {
            let decimals = if i == 0 {
                0
            } else {
                width.saturating_sub(int_digits + 1)
            };
            let mut s = format!("{:.*}", decimals, val);
            let int_len = s.split('.').next().map_or(0, str::len);
            if int_len > width && i < last {
                // Rounding carried into another digit (9999.7 -> 10000).
                val /= base as f64;
                i += 1;
                continue;
            }
            if s.len() > width && decimals > 0 {
                s = format!("{:.*}", decimals - 1, val);
            }
            return format!("{s}{}{unit}", prefixes[i]);
        }
        val /= base as f64;
        i += 1;
    }
}

fn digits(v: f64) -> usize {
    if v < 1.0 {
        1
    } else {
        (v.log10().floor() as usize) + 1
    }
}

/// Bandwidth as fio prints it: `33.8MiB/s (35.5MB/s)`; the order follows
/// `kb_base` (IEC first for 1024).
pub fn bw_pair(bytes_per_s: u64, kb_base: u64) -> String {
    let iec = num2str(bytes_per_s as f64, 4, 1024, "B/s");
    let si = num2str(bytes_per_s as f64, 4, 1000, "B/s");
    if kb_base == 1000 {
        format!("{si} ({iec})")
    } else {
        format!("{iec} ({si})")
    }
}

/// A byte amount as fio prints it: `67.7MiB (71.0MB)`.
pub fn bytes_pair(bytes: u64, kb_base: u64) -> String {
    let iec = num2str(bytes as f64, 4, 1024, "B");
    let si = num2str(bytes as f64, 4, 1000, "B");
    if kb_base == 1000 {
        format!("{si} ({iec})")
    } else {
        format!("{iec} ({si})")
    }
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
    let t = unix_s as libc::time_t;
    // SAFETY: localtime_r writes into the zeroed tm.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return String::new();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
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
    }

    #[test]
    fn latency_units() {
        assert_eq!(lat_unit(21_000, 18_027_000, 441_800.0).1, "usec");
        assert_eq!(lat_unit(100, 5000, 10.0).1, "nsec");
        assert_eq!(pct_unit(26_000, 16_909_000).1, "usec");
    }
}
