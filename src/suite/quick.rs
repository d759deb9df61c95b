//! `iomark quick [PATH]`: a short 4 KiB random read and write benchmark of
//! the filesystem at PATH (default: the current directory). It removes its
//! test file afterwards.

use std::ffi::OsString;

pub fn main(args: Vec<OsString>) -> i32 {
    let mut path = std::path::PathBuf::from(".");
    for a in args {
        let s = a.to_string_lossy().to_string();
        if s == "--help" || s == "-h" {
            println!("Usage: iomark quick [PATH]\n\nRuns a short 4 KiB random read and random write test in PATH (default: .)");
            return 0;
        }
        if s.starts_with('-') {
            eprintln!("iomark quick: unknown option '{s}'");
            return 1;
        }
        path = s.into();
    }
    if !path.is_dir() {
        eprintln!("iomark quick: '{}' is not a directory", path.display());
        return 1;
    }
    let dir = path.to_string_lossy().to_string();
    let argv: Vec<OsString> = [
        "--directory",
        &dir,
        "--filename_format=iomark-quick.$jobnum.tmp",
        "--size=64m",
        "--bs=4k",
        "--ioengine=psync",
        "--runtime=5",
        "--time_based",
        "--unlink=1",
        "--name=randread",
        "--rw=randread",
        "--name=randwrite",
        "--rw=randwrite",
        "--stonewall",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    match crate::cli::parse(argv) {
        Ok(cmd) => crate::cli::commands::execute(cmd),
        Err(e) => {
            eprintln!("iomark quick: {e}");
            1
        }
    }
}
