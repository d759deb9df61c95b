//! Dates for the history: ISO 8601 in UTC for exports, and the dates a
//! user gives to `--since`/`--until` (`2026-11-01`, `2026-11-01T08:30`,
//! local time; or `30d`, `12h`: that long ago).

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `2026-11-26T00:30:38Z`.
pub fn iso_utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `2026-11-26 00:30` in local time, for tables.
pub fn short_local(secs: i64) -> String {
    let Some(c) = crate::sys::calendar(secs, false) else {
        return iso_utc(secs);
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

/// Local time to Unix seconds: the same fields read as UTC, less the
/// local offset at that instant (Windows has no `mktime` in the C
/// library iomark links).
#[cfg(windows)]
fn local_to_unix(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    let days = days_from_civil(y, mo, d);
    let as_utc = days * 86_400 + h * 3600 + mi * 60 + s;
    let c = crate::sys::calendar(as_utc, false)?;
    let local = days_from_civil(i64::from(c.year), i64::from(c.month), i64::from(c.day)) * 86_400
        + i64::from(c.hour) * 3600
        + i64::from(c.minute) * 60
        + i64::from(c.second);
    Some(as_utc - (local - as_utc))
}

/// Local time to Unix seconds (mktime).
#[cfg(unix)]
fn local_to_unix(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    // SAFETY: a zeroed tm is valid; mktime reads and normalises it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (y - 1900) as libc::c_int;
    tm.tm_mon = (mo - 1) as libc::c_int;
    tm.tm_mday = d as libc::c_int;
    tm.tm_hour = h as libc::c_int;
    tm.tm_min = mi as libc::c_int;
    tm.tm_sec = s as libc::c_int;
    tm.tm_isdst = -1;
    // SAFETY: mktime reads and normalises the tm it is given.
    let t = unsafe { libc::mktime(&mut tm) };
    (t != -1).then_some(t as i64)
}

/// A date given on the command line, as Unix seconds: `YYYY-MM-DD`,
/// `YYYY-MM-DDTHH:MM[:SS]` (or with a space), local time; or an age
/// (`30d`, `12h`, `90m`) before `now`. `end_of_day`: a bare date means
/// its last second (for `--until`).
pub fn parse_date(v: &str, now: i64, end_of_day: bool) -> Result<i64, String> {
    let v = v.trim();
    let bad = || {
        format!("'{v}' is not a date (YYYY-MM-DD, YYYY-MM-DDTHH:MM, or an age such as 30d or 12h)")
    };
    if let Some(unit) = v.chars().last().filter(|c| "dhm".contains(*c)) {
        if let Ok(n) = v[..v.len() - 1].parse::<u32>() {
            let mult = match unit {
                'd' => 86400,
                'h' => 3600,
                _ => 60,
            };
            return Ok(now - i64::from(n) * mult);
        }
    }
    let (date, time) = match v.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (v, None),
    };
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let dp: Vec<&str> = date.split('-').collect();
    let [y, mo, d] = dp.as_slice() else {
        return Err(bad());
    };
    let (y, mo, d) = (num(y)?, num(mo)?, num(d)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    // A day the month does not have (2026-02-30) is refused.
    if civil_from_days(days_from_civil(y, mo, d)) != (y, mo, d) {
        return Err(bad());
    }
    let (h, mi, s) = match time {
        None if end_of_day => (23, 59, 59),
        None => (0, 0, 0),
        Some(t) => {
            let tp: Vec<&str> = t.split(':').collect();
            let (h, mi, s) = match tp.as_slice() {
                [h, m] => (num(h)?, num(m)?, 0),
                [h, m, s] => (num(h)?, num(m)?, num(s)?),
                _ => return Err(bad()),
            };
            if h > 23 || mi > 59 || s > 59 || h < 0 || mi < 0 || s < 0 {
                return Err(bad());
            }
            (h, mi, s)
        }
    };
    local_to_unix(y, mo, d, h, mi, s).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_in_utc() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
    }

    #[test]
    fn dates_and_ages_parse() {
        assert_eq!(
            parse_date("30d", 1_000_000, false),
            Ok(1_000_000 - 30 * 86400)
        );
        assert_eq!(parse_date("2h", 10_000, false), Ok(10_000 - 7200));
        let a = parse_date("2026-11-01", 0, false).unwrap();
        let b = parse_date("2026-11-01T00:00", 0, false).unwrap();
        assert_eq!(a, b);
        let e = parse_date("2026-11-01", 0, true).unwrap();
        assert_eq!(e - a, 86399);
        assert_eq!(
            parse_date("2026-11-01 01:02:03", 0, false).unwrap() - a,
            3723
        );
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-02-30",
            "2026-11-01T25:00",
            "x d",
            "",
        ] {
            assert!(parse_date(bad, 0, false).is_err(), "{bad}");
        }
    }
}
