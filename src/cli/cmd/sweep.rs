//! `iomark sweep [PATH] [OPTIONS]`: its table. Running it is
//! `suite::sweep`.

use std::ffi::OsString;

use super::bench::{self, parse_u32};
use super::{opt, switch, Complete, Pos, Section, Spec};
pub use crate::suite::sweep::SweepOpts;
use crate::suite::sweep::{Dims, DEFAULT_IODEPTHS, KNEE_RULE, MAX_POINTS, RUNTIME_US, RW, SIZE};

fn rw_words() -> Vec<&'static str> {
    RW.to_vec()
}

fn finish(o: &mut SweepOpts, pos: Vec<OsString>) -> Result<(), String> {
    o.run.check()?;
    o.path = bench::one_path("sweep", super::strings(pos)?)?;
    if o.svg && o.run.no_report {
        return Err(
            "--svg writes the charts beside the JSON results, which --no-report turns off".into(),
        );
    }
    o.dims = Dims::parse(&o.rw, &o.bs, &o.iodepth, &o.numjobs)?;
    let n = o.dims.points().len();
    if n > MAX_POINTS {
        return Err(format!(
            "{n} combinations is too many (at most {MAX_POINTS})"
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_lines)]
pub fn spec() -> Spec<SweepOpts> {
    let own = vec![
        opt(
            "rw",
            "LIST",
            format!("patterns (default randread): {}", RW.join(", ")),
            Complete::Words(rw_words),
            |o: &mut SweepOpts, v| {
                o.rw = v.into();
                Ok(())
            },
        )
        .aliases(&["readwrite"]),
        opt(
            "bs",
            "LIST",
            "block sizes (default 4k), e.g. 4k,8k,64k,1m,4m",
            Complete::Nothing,
            |o: &mut SweepOpts, v| {
                o.bs = v.into();
                Ok(())
            },
        )
        .aliases(&["blocksize"]),
        opt(
            "iodepth",
            "LIST",
            format!("queue depths (default {DEFAULT_IODEPTHS})"),
            Complete::Nothing,
            |o: &mut SweepOpts, v| {
                o.iodepth = v.into();
                Ok(())
            },
        ),
        opt(
            "numjobs",
            "LIST",
            "job counts (default 1)",
            Complete::Nothing,
            |o: &mut SweepOpts, v| {
                o.numjobs = v.into();
                Ok(())
            },
        ),
        opt(
            "repeat",
            "N",
            "measured passes per point (same as --passes; default 1)",
            Complete::Nothing,
            |o: &mut SweepOpts, v| {
                o.repeat = Some(parse_u32(v, "repeat", 1)?);
                Ok(())
            },
        ),
        switch(
            "svg",
            "also write the three charts (bandwidth, IOPS, p99 latency) as SVG files beside \
             the JSON results: NAME-bw.svg, NAME-iops.svg and NAME-lat.svg (the HTML report \
             has them)",
            |o: &mut SweepOpts, _| {
                o.svg = true;
                Ok(())
            },
        ),
    ];
    Spec {
        name: "sweep",
        usage: vec!["sweep [PATH] [OPTIONS]".into()],
        about: format!(
            "Runs one test per combination of the values below on a test file in PATH \
             (default: the current directory) and charts bandwidth and IOPS against the \
             swept value. For queue depth and job count sweeps it reports the knee: \
             {KNEE_RULE}.\n\nDefaults: {} GiB test file, {} s per pass, no warm-up.",
            SIZE >> 30,
            RUNTIME_US / 1_000_000
        ),
        lists: Vec::new(),
        sections: vec![
            Section::new("Sweep options (comma-separated lists)", own),
            Section::with_run("Options", Vec::new(), |o: &mut SweepOpts| &mut o.run),
        ],
        after: String::new(),
        positionals: vec![Pos {
            name: "PATH",
            complete: Complete::Dir,
        }],
        examples: vec![
            (
                "iomark sweep /mnt/data",
                "4 KiB random reads at queue depths 1 to 256, with the knee",
            ),
            (
                "iomark sweep --rw=read --bs=4k,64k,1m --iodepth=1",
                "sequential reads against block size",
            ),
            (
                "iomark sweep --numjobs=1,2,4,8 --iodepth=1 --repeat=3",
                "parallel jobs instead of queue depth, three passes per point",
            ),
        ],
        finish,
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        SweepOpts::default(),
        argv,
        crate::suite::sweep::main,
    )
}
