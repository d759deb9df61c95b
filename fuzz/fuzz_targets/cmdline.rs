//! Fuzzes the command-line parser: the input, split at NUL bytes, is a
//! job file for `-` followed by the arguments (`iomark --parse-only ARGS`).
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|b| *b == 0);
    let stdin = parts.next().unwrap_or_default();
    let mut args: Vec<OsString> = vec!["--parse-only".into()];
    args.extend(parts.map(|a| OsString::from_vec(a.to_vec())));
    common::check(args, stdin);
});
