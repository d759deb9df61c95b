//! Statistics and reporting: percentiles, latency recording, averaging
//! windows, group reporting, steady state and latency targets.

use super::{boolean, opt, per_ddir, time_us, uint_in, Category::*, Kind, OptDef};
use crate::job::spec::SteadyState;
use crate::job::value::{parse_percent, TimeUnit};
use crate::job::JobError;

fn parse_percentile_list(v: &str) -> Result<Vec<f64>, JobError> {
    let mut out = Vec::new();
    for p in v.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let x: f64 = p
            .parse()
            .map_err(|_| format!("'{p}' is not a percentile"))?;
        if !(0.0..=100.0).contains(&x) {
            return Err(format!("percentile '{p}' is out of range (expected 0 to 100)").into());
        }
        out.push(x);
    }
    if out.is_empty() {
        return Err(format!("'{v}' lists no percentiles").into());
    }
    if out.len() > 20 {
        return Err(format!(
            "'{v}' lists {} percentiles; at most 20 are allowed",
            out.len()
        )
        .into());
    }
    out.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Ok(out)
}

/// The most decimals any entry of a percentile list was written with.
fn percentile_precision(v: &str) -> u32 {
    v.split(':')
        .map(|p| p.trim().split_once('.').map_or(0, |(_, d)| d.len() as u32))
        .max()
        .unwrap_or(0)
}

fn parse_steadystate(v: &str) -> Result<Option<SteadyState>, JobError> {
    let v = v.trim();
    if v.is_empty() || v == "0" || v == "none" {
        return Ok(None);
    }
    let (kind, limit) = v
        .split_once(':')
        .ok_or_else(|| format!("'{v}' must be CRITERION:LIMIT, e.g. iops:5% or bw_slope:0.1%"))?;
    let percent = limit.trim().ends_with('%');
    let num: f64 = limit
        .trim()
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| format!("'{limit}' is not a number (in '{v}')"))?;
    if num < 0.0 {
        return Err(format!("the limit in '{v}' must not be negative").into());
    }
    Ok(Some(match kind.trim() {
        "iops" => SteadyState::Iops {
            limit: num,
            percent,
        },
        "iops_slope" => SteadyState::IopsSlope {
            limit: num,
            percent,
        },
        "bw" => SteadyState::Bw {
            limit: num,
            percent,
        },
        "bw_slope" => SteadyState::BwSlope {
            limit: num,
            percent,
        },
        other => {
            return Err(format!("'{other}' is not one of: iops, iops_slope, bw, bw_slope").into())
        }
    }))
}

pub const OPTS: &[OptDef] = &[
    opt("disk_util", Stats, Kind::Bool, "Report the disk statistics of the devices under the job's files", |s, v| {
        s.stat.disk_util = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("group_reporting", Stats, Kind::Switch, "Report the jobs of a group as one (clones merged)", |s, v| {
        s.stat.group_reporting = boolean(v)?;
        Ok(())
    }),
    opt("stats", Stats, Kind::Bool, "Collect and report statistics for this job", |s, v| {
        s.stat.stats = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("unified_rw_reporting", Stats, Kind::Choice(&[("none", "report each direction separately"), ("0", "same as none"), ("mixed", "report all directions as one"), ("1", "same as mixed"), ("both", "report each direction and the total"), ("2", "same as both")]), "Merge read, write and trim figures", |s, v| {
        s.stat.unified_rw_reporting = crate::job::value::parse_choice(
            v,
            &[("none", 0), ("0", 0), ("mixed", 1), ("1", 1), ("both", 2), ("2", 2)],
        )?;
        Ok(())
    })
    .default("none"),
    opt("percentile_list", Stats, Kind::List, "Percentiles to report, separated by ':' (e.g. 50:99:99.9)", |s, v| {
        s.stat.percentile_list = parse_percentile_list(v)?;
        s.stat.percentile_precision = percentile_precision(v);
        Ok(())
    })
    .alias(&["clat_percentile_list"])
    .default("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"),
    opt("clat_percentiles", Stats, Kind::Bool, "Report completion latency percentiles", |s, v| {
        s.stat.clat_percentiles = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("lat_percentiles", Stats, Kind::Bool, "Report total latency percentiles", |s, v| {
        s.stat.lat_percentiles = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("slat_percentiles", Stats, Kind::Bool, "Report submission latency percentiles", |s, v| {
        s.stat.slat_percentiles = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("disable_lat", Stats, Kind::Bool, "Do not measure total latency", |s, v| {
        s.stat.disable_lat = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("disable_clat", Stats, Kind::Bool, "Do not measure completion latency", |s, v| {
        s.stat.disable_clat = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("disable_slat", Stats, Kind::Bool, "Do not measure submission latency", |s, v| {
        s.stat.disable_slat = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("disable_bw_measurement", Stats, Kind::Bool, "Do not sample bandwidth and IOPS over time", |s, v| {
        s.stat.disable_bw = boolean(v)?;
        Ok(())
    })
    .alias(&["disable_bw"])
    .default("0"),
    opt("gtod_reduce", Stats, Kind::Bool, "Measure no latencies, only totals (fewer clock reads)", |s, v| {
        let on = boolean(v)?;
        s.stat.gtod_reduce = on;
        if on {
            s.stat.disable_lat = true;
            s.stat.disable_clat = true;
            s.stat.disable_slat = true;
            s.stat.disable_bw = true;
            s.stat.clat_percentiles = false;
            s.stat.lat_percentiles = false;
            s.stat.slat_percentiles = false;
        }
        Ok(())
    })
    .default("0"),
    opt("significant_figures", Stats, Kind::Int, "Significant figures of the sizes, rates and IOPS in the text report (1-10)", |s, v| {
        s.stat.significant_figures = uint_in(v, 1, 10)? as u32;
        Ok(())
    })
    .default("4"),
    opt("bwavgtime", Stats, Kind::Int, "Interval in milliseconds for bandwidth samples", |s, v| {
        s.stat.bwavgtime_ms = uint_in(v, 1, u32::MAX as u64)?;
        Ok(())
    })
    .default("500"),
    opt("iopsavgtime", Stats, Kind::Int, "Interval in milliseconds for IOPS samples", |s, v| {
        s.stat.iopsavgtime_ms = uint_in(v, 1, u32::MAX as u64)?;
        Ok(())
    })
    .default("500"),
    opt("steadystate", Stats, Kind::Str, "Stop when a criterion holds over ss_dur: iops, iops_slope, bw or bw_slope with a limit (e.g. iops:2%)", |s, v| {
        s.stat.steadystate = parse_steadystate(v)?;
        Ok(())
    })
    .alias(&["ss"]),
    opt("steadystate_duration", Stats, Kind::Time(TimeUnit::Sec), "Window over which the steady-state criterion is checked", |s, v| {
        s.stat.ss_dur_us = time_us(v, TimeUnit::Sec)?;
        Ok(())
    })
    .alias(&["ss_dur"])
    .default("0"),
    opt("steadystate_ramp_time", Stats, Kind::Time(TimeUnit::Sec), "Wait this long before collecting steady-state data", |s, v| {
        s.stat.ss_ramp_us = time_us(v, TimeUnit::Sec)?;
        Ok(())
    })
    .alias(&["ss_ramp"])
    .default("0"),
    opt("latency_target", Stats, Kind::Time(TimeUnit::Usec), "Find the highest queue depth that keeps latency under this target", |s, v| {
        s.stat.latency_target_us = time_us(v, TimeUnit::Usec)?;
        Ok(())
    })
    .default("0"),
    opt("latency_window", Stats, Kind::Time(TimeUnit::Usec), "Window over which latency_target is checked", |s, v| {
        s.stat.latency_window_us = time_us(v, TimeUnit::Usec)?;
        Ok(())
    })
    .default("0"),
    opt("latency_percentile", Stats, Kind::Percent, "Share of I/Os that must meet latency_target", |s, v| {
        s.stat.latency_percentile = parse_percent(v)?;
        Ok(())
    })
    .default("100"),
    opt("latency_run", Stats, Kind::Bool, "Keep adjusting the queue depth for the whole run", |s, v| {
        s.stat.latency_run = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("max_latency", Stats, Kind::Time(TimeUnit::Usec), "Fail the job if an I/O takes longer than this (read,write,trim allowed)", |s, v| {
        per_ddir(&mut s.stat.max_latency_us, v, |p| {
            // As in fio, a limit below a microsecond is one microsecond,
            // not none.
            let us = time_us(p, TimeUnit::Usec)?;
            let nonzero = !p.trim().starts_with('(') && p.chars().any(|c| matches!(c, '1'..='9'));
            Ok(if us == 0 && nonzero { 1 } else { us })
        })
    })
    .default("0"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_lists_sort_and_bound() {
        assert_eq!(parse_percentile_list("99:50").unwrap(), vec![50.0, 99.0]);
        assert!(parse_percentile_list("101").is_err());
        assert!(parse_percentile_list("").is_err());
        assert_eq!(percentile_precision("50:90"), 0);
        assert_eq!(percentile_precision("50:99.5:99.125"), 3);
    }

    #[test]
    fn steadystate_forms() {
        assert_eq!(
            parse_steadystate("iops:5%").unwrap(),
            Some(SteadyState::Iops {
                limit: 5.0,
                percent: true
            })
        );
        assert!(parse_steadystate("speed:5").is_err());
    }

    #[test]
    fn max_latency_below_a_microsecond_is_one() {
        use crate::job::options::{apply, lookup};
        let mut s = crate::job::JobSpec::default();
        let def = lookup("max_latency").unwrap();
        apply(&mut s, def, Some("1ns")).unwrap();
        assert_eq!(s.stat.max_latency_us, [1, 1, 1]);
        apply(&mut s, def, Some("0")).unwrap();
        assert_eq!(s.stat.max_latency_us, [0, 0, 0]);
    }
}
