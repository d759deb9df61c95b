//! Buffer contents: what a write job leaves in its file, measured the way
//! a storage system would see it (per-block compression, duplicate 4 KiB
//! blocks), and compared with fio where it is installed.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use crate::common::{fio_for_comparison, fio_json, opt_path, run_json, tempdir};

const BLOCK: usize = 4096;

/// Writes a 4 MiB file `name` with iomark (`fio` false) or fio and returns
/// its contents.
fn write_file(dir: &Path, name: &str, fio: bool, extra: &[&str]) -> Vec<u8> {
    let path = dir.join(name);
    let filename = format!("--filename={}", opt_path(&path));
    let mut args = vec![
        "--name=buf",
        filename.as_str(),
        "--size=4m",
        "--rw=write",
        "--bs=4k",
    ];
    args.extend_from_slice(extra);
    if fio {
        fio_json(dir, &args);
    } else {
        run_json(dir, &args);
    }
    std::fs::read(&path).expect("read the written file")
}

/// Percentage of bytes deflate saves compressing each 4 KiB block alone.
fn block_compression_saved(data: &[u8]) -> f64 {
    let mut out = 0usize;
    for block in data.chunks(BLOCK) {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(block).unwrap();
        out += e.finish().unwrap().len();
    }
    100.0 - out as f64 * 100.0 / data.len() as f64
}

/// Percentage of 4 KiB blocks that repeat an earlier block.
fn duplicate_blocks(data: &[u8]) -> f64 {
    let mut seen = HashSet::new();
    let n = data.len() / BLOCK;
    let dups = data.chunks(BLOCK).filter(|b| !seen.insert(*b)).count();
    dups as f64 * 100.0 / n as f64
}

#[test]
fn compress_percentage_gives_that_compressibility() {
    let dir = tempdir();
    for (pct, chunk) in [(30, "512"), (50, "4k"), (75, "0")] {
        let p = format!("--buffer_compress_percentage={pct}");
        let c = format!("--buffer_compress_chunk={chunk}");
        let data = write_file(dir.path(), "c", false, &[&p, &c]);
        let saved = block_compression_saved(&data);
        assert!(
            (saved - pct as f64).abs() < 4.0,
            "compress {pct}% chunk {chunk}: deflate saves {saved:.1}%"
        );
        assert!(duplicate_blocks(&data) < 0.5, "compressible blocks repeat");
    }
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn compress_percentage_matches_fio() {
    crate::require_fio!();
    let dir = tempdir();
    let args = ["--buffer_compress_percentage=60"];
    let ours = block_compression_saved(&write_file(dir.path(), "i", false, &args));
    let theirs = block_compression_saved(&write_file(dir.path(), "f", true, &args));
    assert!(
        (ours - theirs).abs() < 3.0,
        "deflate saves {ours:.1}% on iomark's file, {theirs:.1}% on fio's"
    );
}

#[test]
fn dedupe_percentage_gives_that_share_of_duplicate_blocks() {
    let dir = tempdir();
    for rw in ["write", "randwrite"] {
        let rw = format!("--rw={rw}");
        let data = write_file(dir.path(), "d", false, &["--dedupe_percentage=25", &rw]);
        let dups = duplicate_blocks(&data);
        assert!(
            (dups - 25.0).abs() < 4.0,
            "{rw}: {dups:.1}% duplicate blocks"
        );
        // The unique blocks stay incompressible.
        assert!(block_compression_saved(&data) < 2.0);
    }
    // Combined with compressibility, both hold.
    let data = write_file(
        dir.path(),
        "dc",
        false,
        &["--dedupe_percentage=40", "--buffer_compress_percentage=50"],
    );
    let (dups, saved) = (duplicate_blocks(&data), block_compression_saved(&data));
    assert!((dups - 40.0).abs() < 4.0, "{dups:.1}% duplicate blocks");
    assert!((saved - 50.0).abs() < 4.0, "deflate saves {saved:.1}%");
}

#[test]
fn dedupe_working_set_draws_duplicates_from_early_blocks() {
    let dir = tempdir();
    let data = write_file(
        dir.path(),
        "ws",
        false,
        &[
            "--dedupe_percentage=50",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=5",
        ],
    );
    let dups = duplicate_blocks(&data);
    assert!((dups - 50.0).abs() < 5.0, "{dups:.1}% duplicate blocks");
    // Every block is either new or one of the first unique blocks.
    let blocks: Vec<&[u8]> = data.chunks(BLOCK).collect();
    let distinct: HashSet<&[u8]> = blocks.iter().copied().collect();
    let ws = 1024 * 5 / 100;
    let mut first = Vec::new();
    for b in &blocks {
        if first.len() == ws {
            break;
        }
        if !first.contains(b) {
            first.push(*b);
        }
    }
    let repeats_outside = blocks
        .iter()
        .enumerate()
        .filter(|(i, b)| blocks[..*i].contains(b) && !first.contains(b))
        .count();
    assert_eq!(repeats_outside, 0, "{} distinct blocks", distinct.len());
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn dedupe_percentage_matches_fio() {
    crate::require_fio!();
    let dir = tempdir();
    let args = ["--dedupe_percentage=30"];
    let ours = duplicate_blocks(&write_file(dir.path(), "i", false, &args));
    let theirs = duplicate_blocks(&write_file(dir.path(), "f", true, &args));
    assert!(
        (ours - theirs).abs() < 4.0,
        "{ours:.1}% duplicate blocks from iomark, {theirs:.1}% from fio"
    );
}

#[test]
fn buffer_pattern_fills_every_block() {
    let dir = tempdir();
    let pf = dir.path().join("pat");
    std::fs::write(&pf, b"XYZ").unwrap();
    let pattern = format!("--buffer_pattern=0xdeadbeef\"io\"-2'{}'", pf.display());
    let data = write_file(dir.path(), "p", false, &[&pattern]);
    let want: &[u8] = &[
        0xde, 0xad, 0xbe, 0xef, b'i', b'o', 0xfe, 0xff, 0xff, 0xff, b'X', b'Y', b'Z',
    ];
    assert!(data
        .iter()
        .enumerate()
        .all(|(i, b)| *b == want[i % BLOCK % want.len()]));
    if fio_for_comparison() {
        let theirs = write_file(dir.path(), "f", true, &[&pattern]);
        assert_eq!(data, theirs, "fio wrote other bytes for the same pattern");
    }
}

#[test]
fn zero_buffers_writes_zeros_and_lays_out_zeros() {
    let dir = tempdir();
    let data = write_file(dir.path(), "z", false, &["--zero_buffers"]);
    assert!(data.iter().all(|b| *b == 0));
    // A read job lays its file out with the same contents.
    let path = dir.path().join("r");
    let f = format!("--filename={}", opt_path(&path));
    run_json(
        dir.path(),
        &["--name=r", &f, "--size=1m", "--rw=read", "--zero_buffers"],
    );
    let laid = std::fs::read(&path).unwrap();
    assert_eq!(laid.len(), 1 << 20);
    assert!(laid.iter().all(|b| *b == 0));
}

#[test]
fn scramble_makes_each_write_differ() {
    let dir = tempdir();
    // One buffer (iodepth=1) reused for every write.
    let data = write_file(dir.path(), "s", false, &[]);
    assert_eq!(duplicate_blocks(&data), 0.0, "scrambled writes repeat");
    // The perturbation is small: the file stays mostly one block's bytes.
    let first = &data[..BLOCK];
    let same = data[BLOCK..2 * BLOCK]
        .iter()
        .zip(first)
        .filter(|(a, b)| a == b)
        .count();
    assert!(same > BLOCK * 9 / 10, "only {same} bytes kept");
    let plain = write_file(dir.path(), "n", false, &["--scramble_buffers=0"]);
    assert!(duplicate_blocks(&plain) > 99.0);
}

#[test]
fn refill_buffers_writes_fresh_random_data() {
    let dir = tempdir();
    let data = write_file(dir.path(), "r", false, &["--refill_buffers"]);
    assert_eq!(duplicate_blocks(&data), 0.0);
    assert!(block_compression_saved(&data) < 1.0);
    let first = &data[..BLOCK];
    let same = data[BLOCK..2 * BLOCK]
        .iter()
        .zip(first)
        .filter(|(a, b)| a == b)
        .count();
    assert!(same < 100, "{same} bytes equal between consecutive blocks");
}

#[test]
fn bad_pattern_is_a_clear_error() {
    let dir = tempdir();
    let o = crate::common::run_in(
        dir.path(),
        &[
            "--name=x",
            "--size=1m",
            "--rw=write",
            "--buffer_pattern=0xzz",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = crate::common::stderr(&o);
    assert!(e.contains("buffer_pattern"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// Runs two write jobs (files `a` and `b`, 8 MiB each) that draw half
/// their writes from a dedupe working set, with fio or iomark; returns
/// the duplicate blocks of both files together and the share of b's
/// blocks also found in a, in percent.
fn two_job_dedupe(dir: &Path, fio: bool, global: bool) -> (f64, f64) {
    let job = format!(
        "[global]\nsize=8m\nbs=4k\nrw=write\ndedupe_percentage=50\ndedupe_mode=working_set\n\
         dedupe_working_set_percentage=50\ndedupe_global={}\n[a]\nfilename=a\n[b]\nfilename=b\n",
        u8::from(global)
    );
    std::fs::write(dir.join("dg.fio"), job).unwrap();
    if fio {
        fio_json(dir, &["dg.fio"]);
    } else {
        run_json(dir, &["dg.fio"]);
    }
    let (a, b) = (
        std::fs::read(dir.join("a")).unwrap(),
        std::fs::read(dir.join("b")).unwrap(),
    );
    let in_a: HashSet<&[u8]> = a.chunks(BLOCK).collect();
    let shared = b.chunks(BLOCK).filter(|x| in_a.contains(x)).count();
    let both = [a.as_slice(), b.as_slice()].concat();
    for f in ["a", "b"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    (
        duplicate_blocks(&both),
        shared as f64 * 100.0 / (b.len() / BLOCK) as f64,
    )
}

/// dedupe_global: two jobs share one working set, so half of all blocks
/// are duplicates and many of b's blocks repeat a's; without it, the jobs
/// share nothing. fio measured the same way gives the same shares.
#[test]
fn dedupe_global_shares_duplicates_between_jobs() {
    let dir = tempdir();
    let (dups, cross) = two_job_dedupe(dir.path(), false, true);
    assert!((dups - 50.0).abs() < 5.0, "{dups:.1}% duplicates");
    assert!(cross > 40.0, "only {cross:.1}% of b's blocks are in a");
    let (dups, cross) = two_job_dedupe(dir.path(), false, false);
    assert!((dups - 50.0).abs() < 5.0, "{dups:.1}% duplicates");
    assert_eq!(cross, 0.0);
    if fio_for_comparison() {
        let (ours, theirs) = (
            two_job_dedupe(dir.path(), false, true),
            two_job_dedupe(dir.path(), true, true),
        );
        assert!(
            (ours.0 - theirs.0).abs() < 4.0 && (ours.1 - theirs.1).abs() < 6.0,
            "iomark {ours:?}, fio {theirs:?} (duplicates %, b's blocks in a %)"
        );
    }
}
