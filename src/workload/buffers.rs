//! Contents of write buffers: zeros, a repeated pattern, random data,
//! random data perturbed per write (`scramble_buffers`), or generated data
//! with a chosen compressibility (`buffer_compress_percentage`,
//! `buffer_compress_chunk`) and share of duplicate blocks
//! (`dedupe_percentage`, `dedupe_mode`).
//!
//! Everything expensive happens in `BufferFiller::new` (a pool of random
//! bytes is generated once). Per write, `fill_write` only copies from that
//! pool and stamps a few words, or with `refill_buffers` regenerates the
//! random bytes with a fast generator. It never allocates, locks or makes
//! a system call. It does no I/O: the worker and the layout writer call it.

use super::rng::Rng;
use crate::job::spec::{Ddir, DedupeMode, JobSpec, VerifyKind};

pub use crate::job::pattern::MAX_PATTERN;

/// Bytes of random data generated once for pooled content; each write
/// copies from a pseudo-random position in it.
const RANDOM_POOL: usize = 1 << 20;

/// Fills `buf` with incompressible pseudo-random bytes. Bulk bytes come
/// from four independent wyrand lanes seeded by `rng` (one multiply per
/// 8 bytes, and the lanes pipeline), so refilling a buffer per write stays
/// cheap.
pub fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    const INC: u64 = 0xa076_1d64_78bd_642f;
    const XOR: u64 = 0xe703_7ed1_a0b4_28db;
    #[inline(always)]
    fn wy(s: &mut u64) -> u64 {
        *s = s.wrapping_add(INC);
        let t = (*s as u128) * ((*s ^ XOR) as u128);
        (t >> 64) as u64 ^ t as u64
    }
    let mut lanes = [
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
    ];
    let mut chunks = buf.chunks_exact_mut(32);
    for c in &mut chunks {
        for (k, lane) in lanes.iter_mut().enumerate() {
            c[k * 8..k * 8 + 8].copy_from_slice(&wy(lane).to_le_bytes());
        }
    }
    for c in chunks.into_remainder().chunks_mut(8) {
        let v = wy(&mut lanes[0]).to_le_bytes();
        let n = c.len();
        c.copy_from_slice(&v[..n]);
    }
}

/// Fills `buf` with `pat` repeated from its first byte.
pub fn fill_pattern(buf: &mut [u8], pat: &[u8]) {
    if pat.is_empty() {
        buf.fill(0);
        return;
    }
    let n = pat.len().min(buf.len());
    buf[..n].copy_from_slice(&pat[..n]);
    // Double the filled prefix until the buffer is full.
    let mut done = n;
    while done < buf.len() {
        let step = done.min(buf.len() - done);
        buf.copy_within(..step, done);
        done += step;
    }
}

/// A 64-bit mixer (the splitmix64 finaliser).
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
fn put_u64(buf: &mut [u8], at: usize, v: u64) {
    let b = v.to_le_bytes();
    let n = 8.min(buf.len().saturating_sub(at));
    buf[at..at + n].copy_from_slice(&b[..n]);
}

/// How write buffers get their contents.
enum Mode {
    /// Filled once at setup (zeros, pattern or random); writes reuse it.
    Static,
    /// Random at setup; each write stamps its offset and a sequence number
    /// into every 512-byte sector so no two writes carry identical blocks.
    Scramble,
    /// Each write's contents are generated from a content id.
    Generated(Generator),
}

/// Initial contents of the buffers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Init {
    Zero,
    Pattern,
    Random,
}

/// Generated contents: every chunk of a buffer is `(100 - compress)%`
/// random bytes followed by fixed bytes (zeros or the pattern); a write is
/// a duplicate of an earlier one (`dedupe`% of writes) or new.
struct Generator {
    /// Random bytes to copy from; empty when regenerating per write.
    pool: Vec<u8>,
    /// Fixed bytes, long enough for the largest chunk.
    fixed: Vec<u8>,
    /// Chunk size; 0 means the whole buffer is one chunk.
    chunk: usize,
    compress: usize,
    dedupe: u64,
    /// `Some(blocks)` for `dedupe_mode=working_set`.
    working_set: Option<u64>,
    /// `dedupe_global`: (this clone's index, how many share the set);
    /// the working set is then the shared one, and new contents get ids
    /// `n * k + index` so no two clones make the same new contents.
    share: Option<(u64, u64)>,
    /// Content ids handed out so far (ids are 0, 1, 2, …).
    next_unique: u64,
    /// The id of the latest write.
    last_id: u64,
    rng: Rng,
    salt: u64,
}

impl Generator {
    /// Picks the content id of the next write.
    #[inline]
    fn next_id(&mut self) -> u64 {
        if self.dedupe > 0 && self.next_unique > 0 && self.rng.below(100) < self.dedupe {
            return match (self.working_set, self.share) {
                // Repeat the most recent new contents.
                (None, _) => self.next_unique - 1,
                (Some(ws), None) => self.rng.below(self.next_unique.min(ws).max(1)),
                // Ids the sharing clones have made by now, if they keep
                // pace with this one.
                (Some(ws), Some((_, n))) => self.rng.below(ws.min(n * self.next_unique).max(1)),
            };
        }
        let id = match self.share {
            Some((k, n)) => self.next_unique * n + k,
            None => self.next_unique,
        };
        self.next_unique += 1;
        id
    }

    /// Writes the contents of `id` into `buf`.
    #[inline]
    fn fill(&self, buf: &mut [u8], id: u64) {
        let len = buf.len();
        let chunk = if self.chunk == 0 || self.chunk > len {
            len
        } else {
            self.chunk
        };
        let key = mix(id ^ self.salt);
        let stamp = mix(key ^ self.salt);
        let mut regen = Rng::new(key);
        // Start of this id's bytes in the pool (8-byte aligned); the pool
        // holds RANDOM_POOL bytes more than the largest buffer, so the
        // same id starts at the same place whatever the buffer sizes.
        let span = self.pool.len().saturating_sub(len).clamp(1, RANDOM_POOL) as u64;
        let mut src = ((key % span) & !7) as usize;
        for piece in buf.chunks_mut(chunk) {
            let r = piece.len() * (100 - self.compress) / 100;
            let (rand, fixed) = piece.split_at_mut(r);
            if !rand.is_empty() {
                if self.pool.is_empty() {
                    fill_random(rand, &mut regen);
                } else {
                    rand.copy_from_slice(&self.pool[src..src + r]);
                    src += r;
                }
                // The id in every sector keeps distinct writes distinct
                // even where their pool ranges overlap.
                let mut at = 0;
                while at < r {
                    put_u64(rand, at, stamp);
                    at += 512;
                }
            }
            let n = fixed.len();
            fixed.copy_from_slice(&self.fixed[..n]);
        }
    }
}

/// Produces write-buffer contents for one job (or one layout pass).
pub struct BufferFiller {
    mode: Mode,
    init: Init,
    pattern: Vec<u8>,
    rng: Rng,
    seq: u64,
    salt: u64,
}

/// A clone's part in the duplicate contents shared by `dedupe_global`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DedupeShare {
    /// This clone's index among the sharing clones, and their number.
    pub index: u64,
    pub count: u64,
    /// Blocks in the shared working set.
    pub blocks: u64,
}

/// Seed of the contents every `dedupe_global` clone draws from.
const SHARED_SEED: u64 = 0x676c_6f62_616c_6464;

/// Blocks in a job's dedupe working set: `dedupe_working_set_percentage`
/// of its files, in write blocks.
pub fn working_set_blocks(spec: &JobSpec, data_bytes: u64) -> u64 {
    let bs = spec.io.bs[Ddir::Write.idx()].min().max(1);
    (data_bytes / bs * spec.buf.dedupe_working_set_percentage as u64 / 100).max(1)
}

/// Purpose numbers for this module's random streams.
const STREAM_INIT: u64 = 31;
const STREAM_POOL: u64 = 32;
const STREAM_DEDUPE: u64 = 33;

impl BufferFiller {
    /// Sets up the contents for `spec`'s writes. `max_len` is the largest
    /// buffer that will be filled; `data_bytes` the size of the job's
    /// files (for `dedupe_working_set_percentage`).
    pub fn new(spec: &JobSpec, max_len: usize, data_bytes: u64, seed: u64) -> Self {
        Self::shared(spec, max_len, data_bytes, seed, None)
    }

    /// As `new`, for a clone that shares its duplicate contents with
    /// others (`dedupe_global`): the contents of an id, and so the
    /// random pool and salt, are the same in every sharing clone.
    pub fn shared(
        spec: &JobSpec,
        max_len: usize,
        data_bytes: u64,
        seed: u64,
        share: Option<DedupeShare>,
    ) -> Self {
        let b = &spec.buf;
        let content_seed = if share.is_some() { SHARED_SEED } else { seed };
        let salt = mix(content_seed ^ 0x0062_7566_6665_7273);
        let pattern = b.buffer_pattern.clone();
        let init = if !pattern.is_empty() {
            Init::Pattern
        } else if b.zero_buffers {
            Init::Zero
        } else {
            Init::Random
        };
        let generated = b.buffer_compress_percentage > 0 || b.dedupe_percentage > 0;
        let verify = !matches!(spec.verify.verify, VerifyKind::None);
        let mode = if generated || (b.refill_buffers && init == Init::Random) {
            let compress = b.buffer_compress_percentage.min(100) as usize;
            let chunk = if b.buffer_compress_percentage > 0 {
                b.buffer_compress_chunk as usize
            } else {
                0
            };
            let fixed_len = if chunk == 0 {
                max_len
            } else {
                chunk.min(max_len.max(1))
            };
            let mut fixed = vec![0u8; fixed_len.max(1)];
            if !pattern.is_empty() {
                fill_pattern(&mut fixed, &pattern);
            }
            let pool = if b.refill_buffers || compress == 100 {
                Vec::new()
            } else {
                let mut p = vec![0u8; RANDOM_POOL + max_len];
                fill_random(&mut p, &mut Rng::stream(content_seed, STREAM_POOL));
                p
            };
            let working_set = match share {
                Some(sh) => Some(sh.blocks),
                None => (b.dedupe_mode == DedupeMode::WorkingSet)
                    .then(|| working_set_blocks(spec, data_bytes)),
            };
            Mode::Generated(Generator {
                pool,
                fixed,
                chunk,
                compress,
                dedupe: b.dedupe_percentage.min(100) as u64,
                working_set,
                share: share.map(|sh| (sh.index, sh.count)),
                next_unique: 0,
                last_id: 0,
                rng: Rng::stream(seed, STREAM_DEDUPE),
                salt,
            })
        } else if init == Init::Random && b.scramble_buffers && !verify {
            Mode::Scramble
        } else {
            Mode::Static
        };
        BufferFiller {
            mode,
            init,
            pattern,
            rng: Rng::stream(seed, STREAM_INIT),
            seq: 0,
            salt,
        }
    }

    /// Fills buffers at setup (all of the worker's pool at once is fine).
    pub fn init(&mut self, buf: &mut [u8]) {
        match self.init {
            Init::Zero => buf.fill(0),
            Init::Pattern => fill_pattern(buf, &self.pattern),
            Init::Random => fill_random(buf, &mut self.rng),
        }
    }

    /// Whether `fill_write` does anything; when false the buffers keep
    /// what `init` put in them.
    #[inline]
    pub fn per_write(&self) -> bool {
        !matches!(self.mode, Mode::Static)
    }

    /// Prepares the data of one write of `buf.len()` bytes at `offset`.
    #[inline]
    pub fn fill_write(&mut self, buf: &mut [u8], offset: u64) {
        match &mut self.mode {
            Mode::Static => {}
            Mode::Scramble => {
                self.seq += 1;
                let seq = self.seq ^ self.salt;
                for (i, sector) in buf.chunks_mut(512).enumerate() {
                    let off = offset + (i as u64) * 512;
                    // The offset goes into one of the sector's eight
                    // 64-byte lines, the sequence number at its end.
                    let line = (((self.seq ^ (off >> 9)) & 7) as usize) << 6;
                    if line + 8 <= sector.len() {
                        put_u64(sector, line, off ^ self.salt);
                    }
                    let end = sector.len().saturating_sub(8);
                    put_u64(sector, end, seq);
                }
            }
            Mode::Generated(g) => {
                let id = g.next_id();
                g.last_id = id;
                g.fill(buf, id);
            }
        }
    }

    /// Fills `buf` with the same contents as the previous `fill_write`
    /// (an I/O that is queued again into another buffer).
    #[inline]
    pub fn fill_write_again(&mut self, buf: &mut [u8], offset: u64) {
        match &mut self.mode {
            Mode::Static => {}
            Mode::Scramble => {
                self.seq -= 1;
                self.fill_write(buf, offset);
            }
            Mode::Generated(g) => g.fill(buf, g.last_id),
        }
    }

    /// Fills `buf` for the layout writer: block by block (`bs` bytes) as
    /// writes would be, or with fresh initial contents when writes reuse
    /// their buffers.
    pub fn fill_layout(&mut self, buf: &mut [u8], offset: u64, bs: usize) {
        if self.per_write() {
            if matches!(self.mode, Mode::Scramble) {
                self.init(buf);
            }
            for (i, block) in buf.chunks_mut(bs.max(1)).enumerate() {
                self.fill_write(block, offset + (i * bs) as u64);
            }
        } else {
            self.init(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        crate::job::test_spec(opts)
    }

    #[test]
    fn fill_pattern_repeats_from_start() {
        let mut b = [0u8; 10];
        fill_pattern(&mut b, &[1, 2, 3]);
        assert_eq!(b, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn scramble_makes_consecutive_writes_differ() {
        let s = spec(&[("rw", "write")]);
        let mut f = BufferFiller::new(&s, 4096, 1 << 20, 1);
        let mut buf = vec![0u8; 4096];
        f.init(&mut buf);
        f.fill_write(&mut buf, 0);
        let a = buf.clone();
        f.fill_write(&mut buf, 0);
        assert_ne!(a, buf);
        // Only a few words per sector change.
        let diff = a.iter().zip(&buf).filter(|(x, y)| x != y).count();
        assert!(diff <= 16 * 8, "{diff} bytes changed");
    }

    #[test]
    fn a_retried_write_gets_the_same_contents() {
        for opts in [&[][..], &[("dedupe_percentage", "50")][..]] {
            let s = spec(opts);
            let mut f = BufferFiller::new(&s, 4096, 1 << 20, 1);
            let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
            f.init(&mut a);
            b.copy_from_slice(&a);
            f.fill_write(&mut a, 8192);
            f.fill_write_again(&mut b, 8192);
            assert_eq!(a, b, "{opts:?}");
        }
    }

    #[test]
    fn static_modes_leave_buffers_alone() {
        let s = spec(&[("rw", "write"), ("scramble_buffers", "0")]);
        assert!(!BufferFiller::new(&s, 4096, 0, 1).per_write());
        let s = spec(&[("zero_buffers", "1")]);
        assert!(!BufferFiller::new(&s, 4096, 0, 1).per_write());
        let s = spec(&[("buffer_pattern", "0xab"), ("refill_buffers", "1")]);
        let mut f = BufferFiller::new(&s, 4096, 0, 1);
        assert!(!f.per_write());
        let mut buf = vec![0u8; 100];
        f.init(&mut buf);
        assert!(buf.iter().all(|b| *b == 0xab));
    }

    fn zero_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|b| **b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn compress_percentage_sets_fixed_share() {
        for (pct, chunk) in [("25", "512"), ("60", "4k"), ("90", "0")] {
            let s = spec(&[
                ("buffer_compress_percentage", pct),
                ("buffer_compress_chunk", chunk),
            ]);
            let mut f = BufferFiller::new(&s, 65536, 1 << 20, 3);
            let mut buf = vec![0u8; 65536];
            f.fill_write(&mut buf, 0);
            let want: f64 = pct.parse::<f64>().unwrap() / 100.0;
            let got = zero_share(&buf);
            assert!((got - want).abs() < 0.01, "{pct}%: zero share {got}");
        }
    }

    #[test]
    fn dedupe_repeats_earlier_contents() {
        let s = spec(&[("dedupe_percentage", "40")]);
        let mut f = BufferFiller::new(&s, 4096, 1 << 30, 5);
        let mut seen = std::collections::HashSet::new();
        let mut dups = 0;
        let n = 5000;
        let mut buf = vec![0u8; 4096];
        for i in 0..n {
            f.fill_write(&mut buf, i * 4096);
            if !seen.insert(buf.clone()) {
                dups += 1;
            }
        }
        let share = dups as f64 / n as f64;
        assert!((share - 0.40).abs() < 0.03, "dup share {share}");
    }

    #[test]
    fn working_set_dedupe_draws_from_first_blocks() {
        let s = spec(&[
            ("dedupe_percentage", "50"),
            ("dedupe_mode", "working_set"),
            ("dedupe_working_set_percentage", "10"),
        ]);
        // 100 blocks of 4k: a working set of 10 blocks.
        let mut f = BufferFiller::new(&s, 4096, 100 * 4096, 5);
        let mut first = Vec::new();
        let mut buf = vec![0u8; 4096];
        let mut from_ws = 0;
        let mut dups = 0;
        let mut seen = std::collections::HashSet::new();
        for i in 0..2000u64 {
            f.fill_write(&mut buf, i * 4096);
            if first.len() < 10 && seen.insert(buf.clone()) {
                first.push(buf.clone());
            } else if !seen.insert(buf.clone()) {
                dups += 1;
                if first.contains(&buf) {
                    from_ws += 1;
                }
            }
        }
        assert!(dups > 800, "{dups} duplicates");
        assert_eq!(
            dups, from_ws,
            "a duplicate came from outside the working set"
        );
    }

    #[test]
    fn refill_regenerates_random_data() {
        let s = spec(&[("refill_buffers", "1")]);
        let mut f = BufferFiller::new(&s, 4096, 0, 1);
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        f.fill_write(&mut a, 0);
        f.fill_write(&mut b, 0);
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same < 64, "{same} equal bytes");
    }

    #[test]
    fn compress_with_pattern_uses_pattern_for_fixed_part() {
        let s = spec(&[
            ("buffer_compress_percentage", "50"),
            ("buffer_pattern", "0xdeadbeef"),
        ]);
        let mut f = BufferFiller::new(&s, 4096, 0, 1);
        let mut buf = vec![0u8; 4096];
        f.fill_write(&mut buf, 0);
        assert_eq!(&buf[256..260], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(&buf[768..772], &[0xde, 0xad, 0xbe, 0xef]);
    }
}
