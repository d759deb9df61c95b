//! I/O type, block sizes, offsets, randomness and queue depth.

use super::{boolean, opt, per_ddir, size, uint, uint_in, Category::*, Kind, OptDef};
use crate::job::spec::{
    BlockSizes, RandomDistribution, RandomGenerator, RwPattern, RwSequencer, SubmitMode, ZoneMode,
};
use crate::job::value::{
    parse_choice, parse_percent, parse_size_range, parse_split, split_per_ddir,
};

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

fn parse_distribution(v: &str) -> Result<RandomDistribution, String> {
    let v = v.trim();
    let (kind, arg) = match v.split_once(':') {
        Some((k, a)) => (k.trim(), Some(a.trim())),
        None => (v, None),
    };
    let num = |what: &str| -> Result<f64, String> {
        let a = arg.ok_or_else(|| format!("'{v}' needs a value, e.g. {what}"))?;
        a.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{a}' is not a number (in '{v}')"))
    };
    Ok(match kind {
        "random" => RandomDistribution::Random,
        "zipf" => {
            let t = num("zipf:1.2")?;
            if t <= 0.0 || t == 1.0 {
                return Err(format!("zipf theta must be positive and not 1 (got '{v}')"));
            }
            RandomDistribution::Zipf(t)
        }
        "pareto" => {
            let h = num("pareto:0.2")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto power must be between 0 and 1 (got '{v}')"));
            }
            RandomDistribution::Pareto(h)
        }
        "normal" | "gauss" => {
            let d = num("normal:10")?;
            if !(0.0..=100.0).contains(&d) {
                return Err(format!("normal deviation must be 0 to 100 (got '{v}')"));
            }
            RandomDistribution::Normal(d)
        }
        "zoned" | "zoned_abs" => {
            let a = arg.ok_or_else(|| format!("'{v}' needs zones, e.g. zoned:60/10:40/90"))?;
            if a.contains(',') {
                return Err(format!(
                    "'{v}': per-direction zones are not supported; give one zone list"
                ));
            }
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
                return Err(format!(
                    "zone access percentages in '{v}' must add up to 100"
                ));
            }
            if kind == "zoned" {
                // A zone without a range ("20/") covers what the others
                // leave of the file.
                if zones.iter().filter(|(_, r)| r.is_empty()).count() > 1 {
                    return Err(format!("only one zone in '{v}' may leave out its range"));
                }
                let mut zs = Vec::new();
                let mut range_total = 0.0;
                for (p, r) in &zones {
                    let r = if r.is_empty() { 0.0 } else { parse_percent(r)? };
                    range_total += r;
                    zs.push((*p, r));
                }
                if range_total > 100.0 + 1e-6 {
                    return Err(format!("zone ranges in '{v}' add up to more than 100%"));
                }
                for (z, (_, r)) in zs.iter_mut().zip(&zones) {
                    if r.is_empty() {
                        z.1 = 100.0 - range_total;
                    }
                }
                RandomDistribution::Zoned(zs)
            } else {
                let mut zs = Vec::new();
                for (p, r) in zones {
                    zs.push((p, crate::job::value::parse_size(&r, 1024)?));
                }
                RandomDistribution::ZonedAbs(zs)
            }
        }
        _ => {
            return Err(format!(
                "'{v}' is not one of: random, zipf:T, pareto:H, normal:D, zoned:…, zoned_abs:…"
            ))
        }
    })
}

pub const OPTS: &[OptDef] = &[
    opt("rw", Io, Kind::Choice(RW_CHOICES), "I/O pattern; an optional ':N' suffix sets the offset modifier", |s, v| {
        let (pat, nr) = match v.split_once(':') {
            Some((p, n)) => (p, Some(n)),
            None => (v, None),
        };
        s.io.rw = parse_choice(pat, RwPattern::CHOICES)?;
        s.io.rw_nr = match nr {
            Some(n) if n.trim_start().starts_with('-') => {
                return Err(format!(
                    "'{v}': negative offset modifiers (backwards I/O) are not supported by iomark yet"
                ));
            }
            Some(n) => {
                let n = size(s, n)?;
                if n == 0 {
                    return Err(format!("'{v}': the ':N' modifier must be at least 1"));
                }
                n
            }
            None => 0,
        };
        Ok(())
    })
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
                cur[i] = BlockSizes::Range { lo: b, hi: b };
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
                s.io.bs[i] = BlockSizes::Range { lo, hi };
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
    opt("random_generator", Io, Kind::Choice(&[("tausworthe", "a fast generator with a long period"), ("lfsr", "a generator that visits each block exactly once"), ("tausworthe64", "a 64-bit variant for very large ranges")]), "Generator for random offsets", |s, v| {
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
    opt("random_distribution", Io, Kind::Str, "Distribution of random offsets: random, zipf:T, pareto:H, normal:D, zoned:…, zoned_abs:…", |s, v| {
        s.io.random_distribution = parse_distribution(v)?;
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
    opt("iodepth_batch_submit", Io, Kind::Int, "How many I/Os to submit at once (0 means 1)", |s, v| {
        s.io.iodepth_batch_submit = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .alias(&["iodepth_batch"])
    .default("1"),
    opt("iodepth_batch_complete_min", Io, Kind::Int, "Wait for at least this many completions at once", |s, v| {
        s.io.iodepth_batch_complete_min = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .alias(&["iodepth_batch_complete"])
    .default("1"),
    opt("iodepth_batch_complete_max", Io, Kind::Int, "Reap at most this many completions at once (0: iodepth)", |s, v| {
        s.io.iodepth_batch_complete_max = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .default("0"),
    opt("iodepth_low", Io, Kind::Int, "When the queue is full, drain it to this depth before queueing again", |s, v| {
        s.io.iodepth_low = uint_in(v, 0, 65536)? as u32;
        Ok(())
    })
    .default("0"),
    opt("io_submit_mode", Io, Kind::Choice(&[("inline", "the job thread submits and reaps"), ("offload", "a separate thread submits")]), "Who submits the I/O", |s, v| {
        s.io.io_submit_mode = parse_choice(v, &[("inline", SubmitMode::Inline), ("offload", SubmitMode::Offload)])?;
        Ok(())
    })
    .default("inline"),
    opt("serialize_overlap", Io, Kind::Bool, "Do not issue an I/O that overlaps one in flight", |s, v| {
        s.io.serialize_overlap = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("zonemode", Zones, Kind::Choice(&[("none", "no zones"), ("strided", "I/O in zones of zonerange, zonesize each, skipping zoneskip")]), "How the target is divided into zones", |s, v| {
        s.io.zonemode = match v.trim() {
            "none" => ZoneMode::None,
            "strided" => ZoneMode::Strided,
            "zbd" => return Err("'zbd' (zoned block devices) is not supported by iomark; use none or strided".into()),
            _ => return Err(format!("'{v}' is not one of: none, strided")),
        };
        Ok(())
    })
    .default("none"),
    opt("zonesize", Zones, Kind::Size, "How much to do in each zone", |s, v| {
        s.io.zonesize = size(s, v)?;
        if s.io.zonemode == ZoneMode::None && s.io.zonesize > 0 {
            s.io.zonemode = ZoneMode::Strided;
        }
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
    opt("ioengine", Engine, Kind::Str, "How I/O is issued: sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, or a file-operation engine", |s, v| {
        let name = v.trim();
        crate::engine::check_name(name)?;
        s.io.ioengine = name.to_string();
        Ok(())
    })
    .default("psync")
    .early(),
];

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::*;

    fn set(spec: &mut JobSpec, k: &str, v: &str) -> Result<(), String> {
        apply(spec, lookup(k).unwrap(), Some(v))
    }

    #[test]
    fn rw_with_modifier() {
        let mut s = JobSpec::default();
        set(&mut s, "rw", "randread:8").unwrap();
        assert_eq!((s.io.rw, s.io.rw_nr), (RwPattern::RandRead, 8));
        set(&mut s, "readwrite", "write:4k").unwrap();
        assert_eq!((s.io.rw, s.io.rw_nr), (RwPattern::Write, 4096));
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
    fn mixes_and_distributions() {
        let mut s = JobSpec::default();
        set(&mut s, "rwmixwrite", "30").unwrap();
        assert_eq!(s.io.rwmixread, 70.0);
        set(&mut s, "random_distribution", "zipf:1.2").unwrap();
        assert_eq!(s.io.random_distribution, RandomDistribution::Zipf(1.2));
        set(&mut s, "random_distribution", "zoned:60/10:30/20:10/70").unwrap();
        set(&mut s, "random_distribution", "zoned:50/5:30/15:20/").unwrap();
        assert_eq!(
            s.io.random_distribution,
            RandomDistribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
        assert!(set(&mut s, "random_distribution", "zoned:50/:50/").is_err());
        assert!(set(&mut s, "rw", "read:-8k").is_err());
        assert!(set(&mut s, "random_distribution", "zoned:60/10:30/20").is_err());
        assert!(set(&mut s, "random_distribution", "pareto:3").is_err());
    }
}
