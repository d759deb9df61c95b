//! Non-uniform offset distributions (`random_distribution`) and the same
//! shapes used to choose files (`file_service_type=zipf|pareto|normal`).
//!
//! zipf, pareto and normal draw a *rank* (0 = most popular) and then
//! scatter ranks over the block range with a keyed permutation, so hot
//! blocks are spread over the file rather than packed at its start; a
//! centre value (`zipf:1.2:0.25`) rotates the result so the hottest block
//! sits at that fraction of the range. zoned and zoned_abs pick a zone by
//! its share of accesses and a uniform block inside it, without scatter.
//!
//! Everything here is set up once per file; `pick` does arithmetic only.

use super::rng::Rng;
use crate::job::spec::RandomDistribution;

/// A keyed pseudo-random permutation of `0..n` (a small Feistel network
/// with cycle walking): every rank maps to a distinct block.
#[derive(Clone, Debug)]
pub struct Scatter {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Scatter {
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut r = Rng::new(seed ^ 0x5CA7_7E85);
        Scatter {
            n,
            half_bits,
            keys: [r.next_u64(), r.next_u64(), r.next_u64(), r.next_u64()],
        }
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The position of `x` (< n) in the permutation.
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        if self.n <= 1 {
            return 0;
        }
        // The Feistel domain is at most 4n, so this loops ~2 times on average.
        let mut y = self.round_trip(x);
        while y >= self.n {
            y = self.round_trip(y);
        }
        y
    }
}

/// Zipf ranks `0..n` with exponent `theta` by rejection-inversion
/// (Hörmann and Derflinger): constant time and memory for any `n`.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1) as f64;
        let s = theta;
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.h_int(1.5) - 1.0;
        z.h_n = z.h_int(n + 0.5);
        z.cut = 2.0 - z.h_int_inv(z.h_int(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// Integral of x^-s, shifted so it is 0 at x = 1.
    fn h_int(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }

    fn h_int_inv(&self, y: f64) -> f64 {
        let mut t = y * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        (helper1(t) * y).exp()
    }

    /// A rank in `0..n` (0 is the most likely).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.f64() * (self.h_x1 - self.h_n);
            let x = self.h_int_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.h_int(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// ln(1 + x) / x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[derive(Clone, Debug)]
enum Shape {
    Uniform,
    Zipf(Zipf),
    /// rank = (n - 1) * u^pow
    Pareto {
        pow: f64,
    },
    /// Mean of 12 uniform draws over the range plus a uniform jitter of
    /// `width` blocks: a bell curve about 1/12 of the range wide.
    Normal {
        width: u64,
    },
    /// Cumulative access share (0..100) and block range of each zone.
    Zones(Vec<(f64, u64, u64)>),
}

/// Picks blocks `0..n` of one file (or files `0..n`) with a distribution.
#[derive(Clone, Debug)]
pub struct BlockPicker {
    n: u64,
    shape: Shape,
    scatter: Option<Scatter>,
    /// Rotation applied after scattering.
    shift: u64,
}

impl BlockPicker {
    /// `unit` converts `zoned_abs` sizes to blocks.
    pub fn new(dist: &RandomDistribution, n: u64, unit: u64, seed: u64) -> Self {
        let n = n.max(1);
        let mut rng = Rng::stream(seed, 0xD157);
        let at = |c: f64| ((c * n as f64) as u64).min(n - 1);
        let random_shift = rng.below(n);
        let (shape, scattered, shift) = match dist {
            RandomDistribution::Random => (Shape::Uniform, false, 0),
            RandomDistribution::Zipf { theta, center } => (
                Shape::Zipf(Zipf::new(n, *theta)),
                true,
                center.map(at).unwrap_or(random_shift),
            ),
            RandomDistribution::Pareto { h, center } => (
                Shape::Pareto {
                    pow: h.ln() / (1.0 - h).ln(),
                },
                true,
                center.map(at).unwrap_or(random_shift),
            ),
            RandomDistribution::Normal { dev, center } => {
                // The bell is centred mid-range; a centre rotates it.
                let c = center.unwrap_or(0.5);
                let rot = ((c - 0.5).rem_euclid(1.0) * n as f64) as u64 % n;
                (
                    Shape::Normal {
                        width: (dev / 100.0 * n as f64) as u64,
                    },
                    true,
                    rot,
                )
            }
            RandomDistribution::Zoned(zones) => {
                let mut v = Vec::with_capacity(zones.len());
                let (mut acc, mut pos) = (0.0, 0.0);
                for (access, range) in zones {
                    acc += access;
                    let lo = (pos / 100.0 * n as f64) as u64;
                    pos += range;
                    let hi = ((pos / 100.0 * n as f64) as u64).clamp(lo + 1, n);
                    v.push((acc, lo.min(n - 1), hi));
                }
                (Shape::Zones(v), false, 0)
            }
            RandomDistribution::ZonedAbs(zones) => {
                let mut v = Vec::with_capacity(zones.len());
                let (mut acc, mut pos) = (0.0, 0u64);
                for (access, bytes) in zones {
                    acc += access;
                    let lo = pos.min(n - 1);
                    pos = pos.saturating_add((bytes / unit.max(1)).max(1));
                    v.push((acc, lo, pos.clamp(lo + 1, n)));
                }
                (Shape::Zones(v), false, 0)
            }
        };
        let scatter = scattered.then(|| Scatter::new(n, seed));
        // Make rank 0 land exactly on `shift`.
        let shift = match &scatter {
            Some(s) => (shift + n - s.apply(0)) % n,
            None => shift,
        };
        BlockPicker {
            n,
            shape,
            scatter,
            shift,
        }
    }

    pub fn range(&self) -> u64 {
        self.n
    }

    /// A rank in `0..n` before scattering (0 the most likely for zipf and
    /// pareto, the middle for normal).
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        let n = self.n;
        match &self.shape {
            Shape::Uniform => rng.below(n),
            Shape::Zipf(z) => z.sample(rng),
            Shape::Pareto { pow } => (((n - 1) as f64) * rng.f64().powf(*pow)) as u64,
            Shape::Normal { width } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += rng.below(n + 1);
                }
                let mut v = sum.div_ceil(12);
                if *width > 0 {
                    let j = rng.below(*width) as i64 - (*width / 2) as i64;
                    v = (v as i64 + j).clamp(0, n as i64 - 1) as u64;
                }
                v.min(n - 1)
            }
            Shape::Zones(zones) => {
                let p = rng.percent();
                let (_, lo, hi) = zones
                    .iter()
                    .find(|(acc, _, _)| p < *acc)
                    .or(zones.last())
                    .copied()
                    .unwrap_or((100.0, 0, n));
                lo + rng.below(hi - lo)
            }
        }
    }

    /// The next block (or file) index in `0..n`.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        let r = self.rank(rng);
        match &self.scatter {
            Some(s) => (s.apply(r) + self.shift) % self.n,
            None => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of all picks that land on the `top` most picked blocks.
    fn top_share(p: &BlockPicker, draws: usize, top: usize) -> f64 {
        let mut rng = Rng::new(42);
        let mut counts = vec![0u32; p.range() as usize];
        for _ in 0..draws {
            counts[p.pick(&mut rng) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts[..top].iter().map(|c| *c as f64).sum::<f64>() / draws as f64
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let s = Scatter::new(n, 7);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = s.apply(x);
                assert!(!seen[y as usize], "n={n}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn zipf_matches_the_analytic_head() {
        // P(rank 0) = 1 / sum(k^-theta).
        for theta in [0.8, 1.2, 2.0] {
            let n = 1024u64;
            let h: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
            let d = RandomDistribution::Zipf {
                theta,
                center: None,
            };
            let p = BlockPicker::new(&d, n, 4096, 1);
            let got = top_share(&p, 200_000, 1);
            assert!(
                (got - 1.0 / h).abs() < 0.01,
                "theta {theta}: {got} vs {}",
                1.0 / h
            );
        }
    }

    #[test]
    fn pareto_puts_most_accesses_on_few_blocks() {
        let d = RandomDistribution::Pareto {
            h: 0.2,
            center: None,
        };
        let p = BlockPicker::new(&d, 1000, 4096, 1);
        // 80% of accesses go to 20% of the blocks.
        let got = top_share(&p, 200_000, 200);
        assert!((got - 0.8).abs() < 0.02, "{got}");
    }

    #[test]
    fn normal_is_a_bell_about_a_twelfth_wide() {
        let d = RandomDistribution::Normal {
            dev: 0.0,
            center: None,
        };
        let p = BlockPicker::new(&d, 1000, 4096, 1);
        // Central quarter = +-1.5 sigma = 86.6% of the mass.
        let got = top_share(&p, 200_000, 250);
        assert!((got - 0.866).abs() < 0.02, "{got}");
    }

    #[test]
    fn centre_puts_the_hottest_block_there() {
        let d = RandomDistribution::Zipf {
            theta: 1.5,
            center: Some(0.25),
        };
        let p = BlockPicker::new(&d, 1000, 4096, 9);
        let mut rng = Rng::new(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..10_000 {
            counts[p.pick(&mut rng) as usize] += 1;
        }
        let hottest = (0..1000).max_by_key(|i| counts[*i]).unwrap();
        assert_eq!(hottest, 250);
    }

    #[test]
    fn zones_get_their_shares() {
        let d = RandomDistribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)]);
        let p = BlockPicker::new(&d, 1000, 4096, 1);
        let mut rng = Rng::new(5);
        let first = (0..100_000).filter(|_| p.pick(&mut rng) < 100).count();
        assert!((59_000..61_000).contains(&first), "{first}");
        let d = RandomDistribution::ZonedAbs(vec![(50.0, 40960), (50.0, 1 << 30)]);
        let p = BlockPicker::new(&d, 1000, 4096, 1);
        let first = (0..100_000).filter(|_| p.pick(&mut rng) < 10).count();
        assert!((49_000..51_000).contains(&first), "{first}");
    }
}
