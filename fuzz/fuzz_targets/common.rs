//! Shared by the fuzz targets: the same entry point the generated-input
//! tests drive (`iomark::cli::parse_only`, everything `--parse-only`
//! checks), and what must hold for every input.

use std::ffi::OsString;

/// Standard input becomes /dev/null, so a fuzzed path such as /dev/stdin
/// is refused (a character device) instead of waiting for a terminal.
fn detach_stdin() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: plain libc calls on descriptors this process owns.
        unsafe {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
            if fd >= 0 {
                libc::dup2(fd, 0);
                libc::close(fd);
            }
        }
    });
}

/// Parses and checks `args` with `stdin` as the `-` job file; a panic is
/// the fuzzer's finding, and so is an error that is not one line.
pub fn check(args: Vec<OsString>, stdin: &[u8]) {
    detach_stdin();
    if let Err(e) = iomark::cli::parse_only(args, stdin) {
        assert!(
            !e.is_empty() && !e.contains('\n') && !e.contains('\r'),
            "error is not one line: {e:?}"
        );
    }
}
