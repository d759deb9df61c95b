//! I/O type, block sizes, offsets, randomness and queue depth.

use super::{boolean, opt, per_ddir, size, uint, uint_in, Category::*, Kind, OptDef};
use crate::job::engine_kind::EngineKind;
use crate::job::spec::{
    BlockSizes, BsFrom, RandomDistribution, RandomGenerator, RwPattern, RwSequencer, SubmitMode,
    ZoneMode,
};
use crate::job::value::{
    parse_choice, parse_percent, parse_size_range, parse_split, split_per_ddir,
};
use crate::job::JobError;

const RW_CHOICES: &[(&str, &str)] = &[
    ("read", "sequential reads"),
    ("write", "sequential writes"),
    ("trim", "sequential trims (block devices)"),
    ("randread", "random reads"),
    ("randwrite", "random writes"),
    ("randtrim", "random trims (block devices)"),
    ("rw", "sequential mixed reads and writes"),
    ("readwrite", "same as rw"),
    ("randrw", "random mixed reads and writes"),
    ("trimwrite", "sequential trim then write of the same blocks"),
    ("randtrimwrite", "random trim then write of the same blocks"),
];

/// Parses one direction's distribution: `random`, `zipf:T[:C]`,
/// `pareto:H[:C]`, `normal:D[:C]`, `zoned:A/R:…`, `zoned_abs:A/SIZE:…`.
#[allow(clippy::too_many_lines)]
fn parse_distribution(v: &str, kb: u64) -> Result<RandomDistribution, JobError> {
    let v = v.trim();
    // The name ends at the first ':' (or '=', as in zoned_abs=… in fio's docs).
    let (kind, arg) = match v.find([':', '=']) {
        Some(i) => (v[..i].trim(), Some(v[i + 1..].trim())),
        None => (v, None),
    };
    let value_and_center = |example: &str| -> Result<(f64, Option<f64>), JobError> {
        let a = arg.ok_or_else(|| format!("'{v}' needs a value, e.g. {example}"))?;
        let (x, c) = match a.split_once(':') {
            Some((x, c)) => (x.trim(), Some(c.trim())),
            None => (a, None),
        };
        let finite = |t: &str| {
            t.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("'{t}' is not a number (in '{v}')"))
        };
        let x = finite(x)?;
        let c = match c {
            Some(c) => {
                let c = finite(c)?;
                if !(0.0..=1.0).contains(&c) {
                    return Err(format!("the centre in '{v}' must be between 0 and 1").into());
                }
                Some(c)
            }
            None => None,
        };
        Ok((x, c))
    };
    Ok(match kind {
        "random" => RandomDistribution::Random,
        "zipf" => {
            let (theta, center) = value_and_center("zipf:1.2")?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(format!("zipf theta must be positive and not 1 (got '{v}')").into());
            }
            RandomDistribution::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = value_and_center("pareto:0.2")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto power must be between 0 and 1 (got '{v}')").into());
            }
            RandomDistribution::Pareto { h, center }
        }
        "normal" | "gauss" => {
            let (dev, center) = value_and_center("normal:10")?;
            if !(0.0..=100.0).contains(&dev) {
                return Err(format!("normal deviation must be 0 to 100 (got '{v}')").into());
            }
            RandomDistribution::Normal { dev, center }
        }
        "zoned" | "zoned_abs" => {
            let a = arg.ok_or_else(|| format!("'{v}' needs zones, e.g. zoned:60/10:40/90"))?;
            let mut access_total = 0.0;
            let mut zones = Vec::new();
            for z in a.split(':').map(str::trim).filter(|z| !z.is_empty()) {
                let (p, r) = z
                    .split_once('/')
                    .ok_or_else(|| format!("zone '{z}' must be ACCESS%/RANGE (in '{v}')"))?;
                let p = parse_percent(p)?;
                access_total += p;
                zones.push((p, r.trim().to_string()));
            }
            if zones.is_empty() || (access_total - 100.0).abs() > 1e-6 {
                return Err(format!("zone access percentages in '{v}' must add up to 100").into());
            }
            if zones.len() > 256 {
                return Err(format!("'{v}' has more than 256 zones").into());
            }
            if kind == "zoned" {
                // A zone without a range ("20/") covers what the others
                // leave of the file.
                if zones.iter().filter(|(_, r)| r.is_empty()).count() > 1 {
                    return Err(format!("only one zone in '{v}' may leave out its range").into());
                }
                let given: f64 = zones
                    .iter()
                    .filter(|(_, r)| !r.is_empty())
                    .map(|(_, r)| parse_percent(r).unwrap_or(0.0))
                    .sum();
                let unset = zones.iter().filter(|(_, r)| r.is_empty()).count();
                let mut zs = Vec::new();
                let mut range_total = 0.0;
                for (p, r) in zones {
                    let r = if r.is_empty() {
                        ((100.0 - given) / unset as f64).max(0.0)
                    } else {
                        parse_percent(&r)?
                    };
                    range_total += r;
                    zs.push((p, r));
                }
                if range_total > 100.0 + 1e-6 {
                    return Err(format!("zone ranges in '{v}' add up to more than 100%").into());
                }
                RandomDistribution::Zoned(zs)
            } else {
                let mut zs = Vec::new();
                for (p, r) in zones {
                    if r.is_empty() {
                        return Err(format!("zone '{p}/' in '{v}' needs a size").into());
                    }
                    zs.push((p, crate::job::value::parse_size(&r, kb)?));
                }
                RandomDistribution::ZonedAbs(zs)
            }
        }
        _ => {
            return Err(format!(
                "'{v}' is not one of: random, zipf:T, pareto:H, normal:D, zoned:…, zoned_abs:…"
            )
            .into())
        }
    })
}

/// `rw` with its optional `:N` suffix.
fn parse_rw(s: &mut crate::job::spec::JobSpec, v: &str) -> Result<(), JobError> {
    let (pat, nr) = match v.split_once(':') {
        Some((p, n)) => (p, Some(n.trim())),
        None => (v, None),
    };
    let rw = parse_choice(pat, RwPattern::CHOICES)?;
    let nr = match nr {
        Some(n) => {
            let (neg, mag) = match n.strip_prefix('-') {
                Some(m) => (true, m),
                None => (false, n),
            };
            let m = size(s, mag)?;
            if m == 0 {
                return Err(format!("'{v}': the ':N' modifier must not be zero").into());
            }
            if neg && rw.is_random() {
                return Err(
                    format!("'{v}': a negative ':N' only applies to sequential patterns").into(),
                );
            }
            let m = i64::try_from(m).map_err(|_| format!("'{v}': ':N' is too large"))?;
            if neg {
                -m
            } else {
                m
            }
        }
        None => 0,
    };
    s.io.rw = rw;
    s.io.rw_nr = nr;
    Ok(())
}

/// A number from 0 to 1.
fn unit_fraction(v: &str) -> Result<f64, JobError> {
    let f: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not a number"))?;
    if !(0.0..=1.0).contains(&f) {
        return Err(format!("'{v}' is out of range (expected 0 to 1)").into());
    }
    Ok(f)
}

pub const OPTS: &[OptDef] = &[
    opt("rw", Io, Kind::Choice(RW_CHOICES), "I/O pattern; an optional ':N' suffix skips N bytes after each sequential I/O (negative runs backwards) or makes N I/Os per random offset", parse_rw)
    .alias(&["readwrite"])
    .default("read"),
    opt("rw_sequencer", Io, Kind::Choice(&[("sequential", "the :N I/Os continue sequentially"), ("identical", "the :N I/Os repeat the same offset")]), "How the ':N' suffix of rw changes offsets", |s, v| {
        s.io.rw_sequencer = parse_choice(v, &[("sequential", RwSequencer::Sequential), ("identical", RwSequencer::Identical)])?;
        Ok(())
    })
    .default("sequential"),
    opt("rwmixread", Io, Kind::Percent, "Share of reads in a mixed workload, in percent", |s, v| {
        s.io.rwmixread = uint_in(v.trim_end_matches('%'), 0, 100)? as f64;
        Ok(())
    })
    .default("50"),
    opt("rwmixwrite", Io, Kind::Percent, "Share of writes in a mixed workload, in percent", |s, v| {
        s.io.rwmixread = 100.0 - uint_in(v.trim_end_matches('%'), 0, 100)? as f64;
        Ok(())
    })
    .default("50"),
    opt("bs", Io, Kind::SizeDdir, "Block size, or read,write,trim block sizes", |s, v| {
        let kb = s.kb_base();
        let mut cur = s.io.bs.clone();
        for (i, p) in split_per_ddir(v)?.iter().enumerate() {
            if let Some(p) = p {
                let b = crate::job::value::parse_size(p, kb)?;
                if b == 0 {
                    return Err("the block size must be larger than zero".into());
                }
                // A range or split given anywhere wins over bs.
                if s.io.bs_from[i] == BsFrom::Bs {
                    cur[i] = BlockSizes::Range { lo: b, hi: b };
                }
            }
        }
        s.io.bs = cur;
        Ok(())
    })
    .alias(&["blocksize"])
    .default("4096"),
    opt("bsrange", Io, Kind::Range, "Block size range LOW-HIGH, or read,write,trim ranges", |s, v| {
        let kb = s.kb_base();
        for (i, p) in split_per_ddir(v)?.iter().enumerate() {
            if let Some(p) = p {
                let (lo, hi) = parse_size_range(p, kb)?;
                if lo == 0 {
                    return Err("the block size must be larger than zero".into());
                }
                // A split given anywhere wins over a range.
                if s.io.bs_from[i] <= BsFrom::Range {
                    s.io.bs[i] = BlockSizes::Range { lo, hi };
                    s.io.bs_from[i] = BsFrom::Range;
                }
            }
        }
        Ok(())
    })
    .alias(&["blocksize_range"]),
    opt("bssplit", Io, Kind::Split, "Mix of block sizes with their shares, e.g. 4k/70:64k/30 (read,write,trim lists allowed)", |s, v| {
        let kb = s.kb_base();
        for (i, p) in split_per_ddir(v)?.iter().enumerate() {
            if let Some(p) = p {
                let split = parse_split(p, kb)?;
                if split.iter().any(|e| e.lo == 0) {
                    return Err("block sizes must be larger than zero".into());
                }
                s.io.bs[i] = BlockSizes::Split(split);
                s.io.bs_from[i] = BsFrom::Split;
            }
        }
        Ok(())
    }),
    opt("blockalign", Io, Kind::SizeDdir, "Align random offsets to this boundary (default: the minimum block size)", |s, v| {
        let kb = s.kb_base();
        per_ddir(&mut s.io.blockalign, v, |p| crate::job::value::parse_size(p, kb).map(Some))
    })
    .alias(&["ba"]),
    opt("bs_unaligned", Io, Kind::Switch, "Allow block sizes that are not multiples of the sector size", |s, v| {
        s.io.bs_unaligned = boolean(v)?;
        Ok(())
    })
    .alias(&["blocksize_unaligned"]),
    opt("bs_is_seq_rand", Io, Kind::Bool, "Read bs values as sequential,random instead of read,write", |s, v| {
        s.io.bs_is_seq_rand = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("norandommap", Io, Kind::Switch, "Pick random offsets without tracking which blocks were done", |s, v| {
        s.io.norandommap = boolean(v)?;
        Ok(())
    }),
    opt("softrandommap", Io, Kind::Bool, "Go on without the random map (as with norandommap) when there is no memory for it, instead of failing", |s, v| {
        s.io.softrandommap = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("randrepeat", Io, Kind::Bool, "Seed the random generators the same way each run", |s, v| {
        s.io.randrepeat = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("allrandrepeat", Io, Kind::Bool, "Seed every random generator (not only offsets) repeatably", |s, v| {
        s.io.allrandrepeat = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("randseed", Io, Kind::Int, "Seed for the random generators", |s, v| {
        s.io.randseed = Some(uint(v)?);
        Ok(())
    }),
    opt("random_generator", Io, Kind::Choice(&[("tausworthe", "a fast pseudo-random generator (iomark uses 64-bit xoshiro256** for both tausworthe kinds, so any device size is covered)"), ("lfsr", "a shift register that visits each block exactly once per pass, without a random map"), ("tausworthe64", "the same as tausworthe in iomark")]), "Generator for random offsets", |s, v| {
        s.io.random_generator = parse_choice(
            v,
            &[
                ("tausworthe", RandomGenerator::Tausworthe),
                ("lfsr", RandomGenerator::Lfsr),
                ("tausworthe64", RandomGenerator::Tausworthe64),
            ],
        )?;
        Ok(())
    })
    .default("tausworthe"),
    opt("random_distribution", Io, Kind::Str, "Distribution of random offsets: random, zipf:T[:C], pareto:H[:C], normal:D[:C], zoned:…, zoned_abs:… (read,write,trim lists allowed)", |s, v| {
        let kb = s.kb_base();
        let parts = split_per_ddir(v)?;
        let mut cur = s.io.random_distribution.clone();
        for (i, p) in parts.iter().enumerate() {
            if let Some(p) = p {
                cur[i] = parse_distribution(p, kb)?;
            }
        }
        s.io.random_distribution = cur;
        Ok(())
    })
    .default("random"),
    opt("percentage_random", Io, Kind::Percent, "Share of random I/O in a random workload (read,write,trim allowed)", |s, v| {
        per_ddir(&mut s.io.percentage_random, v, parse_percent)
    })
    .default("100"),
    opt("percentage_sequential", Io, Kind::Percent, "Share of sequential I/O in a random workload (the complement of percentage_random)", |s, v| {
        per_ddir(&mut s.io.percentage_random, v, |p| parse_percent(p).map(|x| 100.0 - x))
    }),
    opt("iodepth", Io, Kind::Int, "Number of I/Os to keep in flight (async engines)", |s, v| {
        s.io.iodepth = uint_in(v, 1, 65536)? as u32;
        Ok(())
    })
    .default("1"),
    opt("iodepth_batch_submit", Io, Kind::Int, "How many I/Os to queue before submitting them together (0: iodepth)", |s, v| {
        s.io.iodepth_batch_submit = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .alias(&["iodepth_batch"])
    .default("1"),
    opt("iodepth_batch_complete_min", Io, Kind::Int, "Wait for at least this many completions when reaping (0: only collect what is done, never wait)", |s, v| {
        s.io.iodepth_batch_complete_min = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .alias(&["iodepth_batch_complete"])
    .default("1"),
    opt("iodepth_batch_complete_max", Io, Kind::Int, "Collect at most this many completions per reap (0: the same as iodepth_batch_complete_min, at least 1)", |s, v| {
        s.io.iodepth_batch_complete_max = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .default("0"),
    opt("iodepth_low", Io, Kind::Int, "When the queue is full, let it drain to this depth before queueing again (0: iodepth)", |s, v| {
        s.io.iodepth_low = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .default("0"),
    opt("io_submit_mode", Io, Kind::Choice(&[("inline", "the job thread submits and reaps"), ("offload", "iodepth submitter threads issue the I/O, so the job keeps its rate whatever the device does")]), "Who submits the I/O", |s, v| {
        s.io.io_submit_mode = parse_choice(v, &[("inline", SubmitMode::Inline), ("offload", SubmitMode::Offload)])?;
        Ok(())
    })
    .default("inline"),
    opt("serialize_overlap", Io, Kind::Bool, "Do not issue an I/O that overlaps one in flight", |s, v| {
        s.io.serialize_overlap = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("zonemode", Zones, Kind::Choice(&[("none", "no zones"), ("strided", "I/O in zones of zonerange, zonesize each, skipping zoneskip"), ("zbd", "zoned block devices: writes at each zone's write pointer (zones of zonesize emulated on other targets)")]), "How the target is divided into zones", |s, v| {
        s.io.zonemode = crate::job::value::parse_choice(
            v,
            &[("none", ZoneMode::None), ("strided", ZoneMode::Strided), ("zbd", ZoneMode::Zbd)],
        )?;
        Ok(())
    })
    .default("none"),
    opt("zonecapacity", Zones, Kind::Size, "zonemode=zbd: usable bytes of each emulated zone (at most zonesize)", |s, v| {
        s.io.zbd.zonecapacity = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("read_beyond_wp", Zones, Kind::Bool, "zonemode=zbd: reads may go past a zone's write pointer", |s, v| {
        s.io.zbd.read_beyond_wp = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("max_open_zones", Zones, Kind::Int, "zonemode=zbd: zones all jobs may write to at once (0: the device's limit)", |s, v| {
        s.io.zbd.max_open_zones = uint_in(v, 0, 4096)? as u32;
        Ok(())
    })
    .default("0"),
    opt("job_max_open_zones", Zones, Kind::Int, "zonemode=zbd: zones this job may write to at once (0: no job limit)", |s, v| {
        s.io.zbd.job_max_open_zones = uint_in(v, 0, 4096)? as u32;
        Ok(())
    })
    .default("0"),
    opt("ignore_zone_limits", Zones, Kind::Bool, "zonemode=zbd: do not take the device's open-zone limit (max_open_zones may exceed it)", |s, v| {
        s.io.zbd.ignore_zone_limits = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("zone_reset_threshold", Zones, Kind::Float, "zonemode=zbd: share of the region's bytes written above which zones are reset (0 to 1)", |s, v| {
        s.io.zbd.zone_reset_threshold = unit_fraction(v)?;
        Ok(())
    })
    .default("0"),
    opt("zone_reset_frequency", Zones, Kind::Float, "zonemode=zbd: past the threshold, reset the zone written to once per 1/N writes (0 to 1)", |s, v| {
        s.io.zbd.zone_reset_frequency = unit_fraction(v)?;
        Ok(())
    })
    .default("0"),
    opt("zonesize", Zones, Kind::Size, "How much to do in each zone", |s, v| {
        s.io.zonesize = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("zonerange", Zones, Kind::Size, "Size of a zone", |s, v| {
        s.io.zonerange = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("zoneskip", Zones, Kind::Size, "How much to skip after each zone's I/O", |s, v| {
        s.io.zoneskip = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("loops", Io, Kind::Int, "Run the workload this many times", |s, v| {
        s.io.loops = uint_in(v, 1, u32::MAX as u64)?;
        Ok(())
    })
    .alias(&["loop"])
    .default("1"),
    opt("ioengine", Engine, Kind::Choice(EngineKind::CHOICES), "How I/O is issued (the engine; --enghelp lists them)", |s, v| {
        s.io.ioengine = EngineKind::parse(v.trim())?;
        Ok(())
    })
    .default(EngineKind::DEFAULT.name())
    .early(),
];

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::*;

    fn set(spec: &mut JobSpec, k: &str, v: &str) -> Result<(), crate::job::JobError> {
        apply(spec, lookup(k).unwrap(), Some(v))
    }

    #[test]
    fn rw_with_modifier() {
        let mut s = JobSpec::default();
        set(&mut s, "rw", "randread:8").unwrap();
        assert_eq!((s.io.rw, s.io.rw_nr), (RwPattern::RandRead, 8));
        set(&mut s, "readwrite", "write:4k").unwrap();
        assert_eq!((s.io.rw, s.io.rw_nr), (RwPattern::Write, 4096));
        set(&mut s, "rw", "read:-8k").unwrap();
        assert_eq!((s.io.rw, s.io.rw_nr), (RwPattern::Read, -8192));
        assert!(set(&mut s, "rw", "randread:-8").is_err());
        assert!(set(&mut s, "rw", "read:0").is_err());
        assert!(set(&mut s, "rw", "sideways").is_err());
    }

    #[test]
    fn bs_per_direction() {
        let mut s = JobSpec::default();
        set(&mut s, "bs", "4k,64k").unwrap();
        assert_eq!(
            s.io.bs[1],
            BlockSizes::Range {
                lo: 65536,
                hi: 65536
            }
        );
        assert_eq!(s.io.bs[2], BlockSizes::Range { lo: 4096, hi: 4096 });
        set(&mut s, "bsrange", "1k-8k").unwrap();
        assert_eq!(s.io.bs[0], BlockSizes::Range { lo: 1024, hi: 8192 });
        set(&mut s, "bssplit", "4k/50:64k/50").unwrap();
        assert!(matches!(s.io.bs[0], BlockSizes::Split(_)));
        assert!(set(&mut s, "bs", "0").is_err());
    }

    #[test]
    fn a_split_or_range_wins_over_bs_wherever_it_stands() {
        let r = |lo, hi| BlockSizes::Range { lo, hi };
        let mut s = JobSpec::default();
        set(&mut s, "bsrange", "4k-16k").unwrap();
        set(&mut s, "bs", "8k").unwrap();
        assert_eq!(s.io.bs, [r(4096, 16384), r(4096, 16384), r(4096, 16384)]);
        set(&mut s, "bssplit", ",4k/50:16k/50").unwrap();
        set(&mut s, "bsrange", "1k-2k").unwrap();
        assert_eq!(s.io.bs[0], r(1024, 2048));
        assert!(matches!(s.io.bs[1], BlockSizes::Split(_)));
        assert_eq!(s.io.bs_from, [BsFrom::Range, BsFrom::Split, BsFrom::Range]);
        // Per direction: bs still sets a direction nothing else set.
        let mut s = JobSpec::default();
        set(&mut s, "bsrange", ",4k-16k").unwrap();
        set(&mut s, "bs", "8k").unwrap();
        assert_eq!(s.io.bs, [r(8192, 8192), r(4096, 16384), r(8192, 8192)]);
    }

    #[test]
    fn mixes_and_distributions() {
        let mut s = JobSpec::default();
        set(&mut s, "rwmixwrite", "30").unwrap();
        assert_eq!(s.io.rwmixread, 70.0);
        set(&mut s, "random_distribution", "zipf:1.2").unwrap();
        assert_eq!(
            s.io.random_distribution[0],
            RandomDistribution::Zipf {
                theta: 1.2,
                center: None
            }
        );
        set(&mut s, "random_distribution", "normal:10:0.25,pareto:0.3").unwrap();
        assert_eq!(
            s.io.random_distribution[0],
            RandomDistribution::Normal {
                dev: 10.0,
                center: Some(0.25)
            }
        );
        assert_eq!(
            s.io.random_distribution[1],
            RandomDistribution::Pareto {
                h: 0.3,
                center: None
            }
        );
        set(&mut s, "random_distribution", "zoned:60/10:30/20:10/70").unwrap();
        set(&mut s, "random_distribution", "zoned:50/5:30/15:20/").unwrap();
        assert_eq!(
            s.io.random_distribution[2],
            RandomDistribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
        set(&mut s, "random_distribution", "zoned_abs=60/20G:40/100G").unwrap();
        assert!(set(&mut s, "random_distribution", "zoned:50/:50/").is_err());
        assert!(set(&mut s, "random_distribution", "zipf:inf").is_err());
        assert!(set(&mut s, "random_distribution", "zoned:60/10:30/20").is_err());
        assert!(set(&mut s, "random_distribution", "pareto:3").is_err());
        assert!(set(&mut s, "random_distribution", "zipf:1.2:2").is_err());
    }
}
