//! Fuzzes the job-file reader and everything after it: the input is the
//! text of a job file given as `-` (`iomark --parse-only -`).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    common::check(vec!["--parse-only".into(), "-".into()], data);
});
