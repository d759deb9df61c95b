//! Run time, ramp, start delay, think time and rate limits.

use super::{boolean, opt, per_ddir, size, time_us, uint, Category::*, Kind, OptDef};
use crate::job::spec::{ClockSource, RateProcess, ThinkBlocksType};
use crate::job::value::{parse_choice, TimeUnit};

pub const OPTS: &[OptDef] = &[
    opt(
        "runtime",
        Timing,
        Kind::Time(TimeUnit::Sec),
        "Stop the job after this long (0: no limit)",
        |s, v| {
            s.time.runtime_us = time_us(v, TimeUnit::Sec)?;
            Ok(())
        },
    )
    .alias(&["timeout"])
    .default("0"),
    opt(
        "time_based",
        Timing,
        Kind::Switch,
        "Keep running for the whole runtime, repeating the workload as needed",
        |s, v| {
            s.time.time_based = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "ramp_time",
        Timing,
        Kind::Time(TimeUnit::Sec),
        "Run this long before measuring",
        |s, v| {
            s.time.ramp_time_us = time_us(v, TimeUnit::Sec)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "startdelay",
        Timing,
        Kind::Range,
        "Wait this long before starting (a range picks a random delay)",
        |s, v| {
            let (a, b) = match v.split_once('-') {
                Some((a, b)) => (time_us(a, TimeUnit::Sec)?, time_us(b, TimeUnit::Sec)?),
                None => {
                    let t = time_us(v, TimeUnit::Sec)?;
                    (t, t)
                }
            };
            s.time.startdelay_us = (a.min(b), a.max(b));
            Ok(())
        },
    )
    .default("0"),
    opt(
        "thinktime",
        Timing,
        Kind::Time(TimeUnit::Usec),
        "Pause this long between I/Os",
        |s, v| {
            s.time.thinktime_us = time_us(v, TimeUnit::Usec)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "thinktime_spin",
        Timing,
        Kind::Time(TimeUnit::Usec),
        "Of the think time, spend this much busy-waiting",
        |s, v| {
            s.time.thinktime_spin_us = time_us(v, TimeUnit::Usec)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "thinktime_blocks",
        Timing,
        Kind::Int,
        "Do this many I/Os between think times",
        |s, v| {
            let n = uint(v)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            s.time.thinktime_blocks = n;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "thinktime_blocks_type",
        Timing,
        Kind::Choice(&[
            ("complete", "count completed I/Os"),
            ("issue", "count issued I/Os"),
        ]),
        "What thinktime_blocks counts",
        |s, v| {
            s.time.thinktime_blocks_type = parse_choice(
                v,
                &[
                    ("complete", ThinkBlocksType::Complete),
                    ("issue", ThinkBlocksType::Issue),
                ],
            )?;
            Ok(())
        },
    )
    .default("complete"),
    opt(
        "thinktime_iotime",
        Timing,
        Kind::Time(TimeUnit::Sec),
        "Do I/O for this long between think times",
        |s, v| {
            s.time.thinktime_iotime_us = time_us(v, TimeUnit::Sec)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "rate",
        Rate,
        Kind::SizeDdir,
        "Cap bandwidth at this many bytes per second (read,write,trim allowed)",
        |s, v| {
            let kb = s.kb_base();
            per_ddir(&mut s.time.rate, v, |p| {
                crate::job::value::parse_size(p, kb)
            })
        },
    ),
    opt(
        "rate_min",
        Rate,
        Kind::SizeDdir,
        "Fail the job if bandwidth drops below this",
        |s, v| {
            let kb = s.kb_base();
            per_ddir(&mut s.time.rate_min, v, |p| {
                crate::job::value::parse_size(p, kb)
            })
        },
    )
    .alias(&["ratemin"]),
    opt(
        "rate_iops",
        Rate,
        Kind::SizeDdir,
        "Cap the I/O rate at this many I/Os per second",
        |s, v| {
            let kb = s.kb_base();
            per_ddir(&mut s.time.rate_iops, v, |p| {
                crate::job::value::parse_size(p, kb)
            })
        },
    ),
    opt(
        "rate_iops_min",
        Rate,
        Kind::SizeDdir,
        "Fail the job if the I/O rate drops below this",
        |s, v| {
            let kb = s.kb_base();
            per_ddir(&mut s.time.rate_iops_min, v, |p| {
                crate::job::value::parse_size(p, kb)
            })
        },
    ),
    opt(
        "rate_process",
        Rate,
        Kind::Choice(&[
            ("linear", "evenly spaced I/Os"),
            ("poisson", "exponentially distributed gaps"),
        ]),
        "How rate-limited I/Os are spaced",
        |s, v| {
            s.time.rate_process = parse_choice(
                v,
                &[
                    ("linear", RateProcess::Linear),
                    ("poisson", RateProcess::Poisson),
                ],
            )?;
            Ok(())
        },
    )
    .default("linear"),
    opt(
        "rate_cycle",
        Rate,
        Kind::Int,
        "Window in milliseconds over which rate_min is checked",
        |s, v| {
            let ms = size(s, v)?;
            let max = crate::job::value::MAX_TIME_US / 1000;
            if ms > max {
                return Err(format!("'{v}' is out of range (expected at most {max} ms)").into());
            }
            s.time.rate_cycle_ms = ms.max(1);
            Ok(())
        },
    )
    .alias(&["ratecycle"])
    .default("1000"),
    opt(
        "rate_ignore_thinktime",
        Rate,
        Kind::Bool,
        "Keep the rate as if think time took no time",
        |s, v| {
            s.time.rate_ignore_thinktime = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "clocksource",
        Timing,
        Kind::Choice(&[
            ("gettimeofday", "gettimeofday(2), microsecond resolution"),
            ("clock_gettime", "clock_gettime(CLOCK_MONOTONIC)"),
            ("cpu", "the CPU's time-stamp counter, calibrated against CLOCK_MONOTONIC"),
        ]),
        "Clock that times the job's I/O (not set: the CPU counter when the kernel trusts it, else clock_gettime)",
        |s, v| {
            s.time.clocksource = parse_choice(
                v,
                &[
                    ("gettimeofday", ClockSource::Gettimeofday),
                    ("clock_gettime", ClockSource::ClockGettime),
                    ("cpu", ClockSource::Cpu),
                ],
            )?;
            Ok(())
        },
    ),
];
