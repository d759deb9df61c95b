//! `iomark quick [PATH]`: "how fast is this disk?" in about a minute.
//!
//! CrystalDiskMark's default set (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1,
//! RND4K Q1T1, each read and write) on one test file in PATH, with an
//! asynchronous engine and direct I/O where available, one discarded
//! warm-up pass and several measured passes per test; the table shows
//! medians with the bandwidth spread. The JSON results and HTML report are
//! written to the current directory; the test file is removed afterwards,
//! also on Ctrl-C.

use serde_json::json;

use super::flags::RunFlags;
use super::presets::{self, crystaldiskmark};
use crate::launch::Launch;

/// Defaults chosen to finish in about a minute on an ordinary disk:
/// 8 tests × (1 s warm-up + 3 × 2 s) ≈ 56 s plus laying out the file.
pub const SIZE: u64 = 1 << 30;
pub const RUNTIME_US: u64 = 2_000_000;
pub const PASSES: u32 = 3;
pub const WARMUP_US: u64 = 1_000_000;
pub const TEST_FILE: &str = "iomark-quick.tmp";

/// Runs `iomark quick` as asked (parsed by `cli::cmd::quick`).
pub fn main(opts: QuickOpts) -> i32 {
    let QuickOpts { run: flags, path } = opts;
    let launch = match super::join("quick", &flags) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let code = run(&flags, path.as_deref(), &launch);
    launch.end(code)
}

/// `quick` once the ranks (if any) have joined.
fn run(flags: &RunFlags, path: Option<&str>, launch: &Launch) -> i32 {
    let preset = &crystaldiskmark::DEFAULT;
    let target = match super::agreed(
        "quick",
        launch,
        "every rank to check PATH",
        super::target(path, flags, preset.direct, preset.engines),
    ) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let size = flags.size.unwrap_or(SIZE);
    let runtime = flags.runtime_us.unwrap_or(RUNTIME_US);
    let passes = flags.passes.unwrap_or(PASSES);
    let warmup = flags.warmup_us.unwrap_or(WARMUP_US);
    let jobfile = presets::render(
        preset,
        &presets::Render {
            directory: target.directory.clone(),
            ioengine: target.engine.kind.name().to_string(),
            direct: target.direct,
            size: Some(presets::size_text(size)),
            runtime: Some(presets::time_text(runtime)),
            // Under MPI each rank its own file.
            file_name: Some(launch.own_file(TEST_FILE)),
            comments: vec![format!("Written by `iomark quick` for {}.", target.shown)],
        },
    );
    if flags.print_jobfile {
        return super::print_on(launch, "quick", &jobfile);
    }
    let bench = super::PresetBench {
        kind: "quick",
        title: "CrystalDiskMark-style quick test".into(),
        preset,
        jobfile,
        target,
        size: ("size_bytes", json!(size)),
        runtime_us: runtime,
        passes,
        warmup_us: warmup,
        launch,
    };
    super::run_preset_bench(bench, flags)
}

/// What `iomark quick` was asked.
#[derive(Clone, Debug, Default)]
pub struct QuickOpts {
    pub run: RunFlags,
    /// Where to test (default: the current directory).
    pub path: Option<String>,
}
