//! `iomark quick [PATH] [OPTIONS]`: its table. Running it is
//! `suite::quick`.

use std::ffi::OsString;

use super::bench;
use super::{Complete, Pos, Section, Spec};
pub use crate::suite::quick::QuickOpts;
use crate::suite::quick::{PASSES, RUNTIME_US, SIZE, TEST_FILE, WARMUP_US};

pub fn spec() -> Spec<QuickOpts> {
    Spec {
        name: "quick",
        usage: vec!["quick [PATH] [OPTIONS]".into()],
        about: format!(
            "Benchmarks the filesystem at PATH (default: the current directory) with \
             CrystalDiskMark's default tests — SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, \
             each read and write — on a test file ({TEST_FILE}) that is removed afterwards. \
             Each test runs a discarded {}s warm-up pass, then {} measured passes of {}s; the \
             table shows their median and the bandwidth range. The test file is {} GiB. The \
             JSON results and the HTML report are written to the current directory.",
            WARMUP_US / 1_000_000,
            PASSES,
            RUNTIME_US / 1_000_000,
            SIZE >> 30,
        ),
        lists: Vec::new(),
        sections: vec![Section::with_run(
            "Options",
            Vec::new(),
            |o: &mut QuickOpts| &mut o.run,
        )],
        after: String::new(),
        positionals: vec![Pos {
            name: "PATH",
            complete: Complete::Dir,
        }],
        examples: vec![
            (
                "iomark quick /mnt/data",
                "benchmark the filesystem mounted at /mnt/data",
            ),
            (
                "iomark quick --size=4g --passes=5",
                "a bigger test file and more passes",
            ),
            (
                "iomark quick --print-jobfile > quick.fio",
                "the fio job file of one pass (fio runs it too)",
            ),
        ],
        finish: |o, pos| {
            o.path = bench::one_path("quick", super::strings(pos)?)?;
            o.run.check()
        },
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        QuickOpts::default(),
        argv,
        crate::suite::quick::main,
    )
}
