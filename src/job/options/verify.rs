//! Verification: what writes carry so that reads can check them, when the
//! check happens and what a failure does. The data format and the checks
//! themselves live in `workload::verify`; the worker runs them.

use super::{boolean, opt, size, uint, Category::*, Kind, OptDef};
use crate::job::spec::VerifyKind;
use crate::job::value::parse_choice;
use crate::job::JobError;

const METHODS: &[(&str, VerifyKind)] = &[
    ("0", VerifyKind::None),
    ("none", VerifyKind::None),
    ("md5", VerifyKind::Md5),
    ("crc64", VerifyKind::Crc64),
    ("crc32", VerifyKind::Crc32),
    ("crc32c-intel", VerifyKind::Crc32cIntel),
    ("crc32c", VerifyKind::Crc32c),
    ("crc16", VerifyKind::Crc16),
    ("crc7", VerifyKind::Crc7),
    ("sha1", VerifyKind::Sha1),
    ("sha256", VerifyKind::Sha256),
    ("sha512", VerifyKind::Sha512),
    ("sha3-224", VerifyKind::Sha3_224),
    ("sha3-256", VerifyKind::Sha3_256),
    ("sha3-384", VerifyKind::Sha3_384),
    ("sha3-512", VerifyKind::Sha3_512),
    ("xxhash", VerifyKind::XxHash),
    ("meta", VerifyKind::Meta),
    ("pattern", VerifyKind::Pattern),
    ("null", VerifyKind::Null),
];

pub const OPTS: &[OptDef] = &[
    opt(
        "verify",
        Verify,
        Kind::Choice(&[
            ("0", "no verification"),
            ("md5", "md5 of each block's data, in a header at its start"),
            ("crc64", "crc64 of each block's data"),
            ("crc32c", "crc32c of each block's data (hardware assisted where the CPU has it)"),
            ("crc32c-intel", "the same as crc32c"),
            ("crc32", "crc32 of each block's data"),
            ("crc16", "crc16 of each block's data"),
            ("crc7", "crc7 of each block's data"),
            ("xxhash", "xxhash (32-bit) of each block's data"),
            ("sha1", "sha1 of each block's data"),
            ("sha256", "sha256 of each block's data"),
            ("sha512", "sha512 of each block's data"),
            ("sha3-224", "sha3-224 of each block's data"),
            ("sha3-256", "sha3-256 of each block's data"),
            ("sha3-384", "sha3-384 of each block's data"),
            ("sha3-512", "sha3-512 of each block's data"),
            ("meta", "the header only (offset, length, write number), plus verify_pattern when set"),
            ("pattern", "verify_pattern only, with no header"),
            ("null", "read back but check nothing"),
        ]),
        "Write checkable data and check it on read: each block (or verify_interval) starts with a header naming its offset and a checksum of its data; write jobs read everything back after writing, read jobs check what they read",
        |s, v| {
            s.verify.verify = parse_choice(v, METHODS)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "do_verify",
        Verify,
        Kind::Bool,
        "Read back and check the written data after each loop of a write job (with verify set)",
        |s, v| {
            s.verify.do_verify = boolean(v)?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "verify_only",
        Verify,
        Kind::Switch,
        "Write nothing: read back and check the blocks this job would write, as an earlier run wrote them",
        |s, v| {
            s.verify.verify_only = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "verify_backlog",
        Verify,
        Kind::Int,
        "Check written blocks while writing, whenever this many are waiting, instead of all at the end",
        |s, v| {
            s.verify.verify_backlog = uint(v)?;
            Ok(())
        },
    ),
    opt(
        "verify_backlog_batch",
        Verify,
        Kind::Int,
        "Blocks to check each time verify_backlog triggers (default: verify_backlog), oldest first",
        |s, v| {
            s.verify.verify_backlog_batch = uint(v)?;
            Ok(())
        },
    ),
    opt(
        "verify_offset",
        Verify,
        Kind::Size,
        "Put the verification header this many bytes into each block (it swaps places with the data there)",
        |s, v| {
            let n = size(s, v)?;
            if n < 40 {
                return Err(format!("'{v}' is below the 40-byte header").into());
            }
            s.verify.verify_offset = n;
            Ok(())
        },
    ),
    opt(
        "verify_interval",
        Verify,
        Kind::Size,
        "Put a verification header every this many bytes instead of once per block (at least 80)",
        |s, v| {
            let n = size(s, v)?;
            if n < 80 {
                return Err(format!("'{v}' is below the minimum of 80").into());
            }
            s.verify.verify_interval = n;
            Ok(())
        },
    ),
    opt(
        "verify_pattern",
        Verify,
        Kind::Str,
        "Write this pattern instead of random data and check it: buffer_pattern's syntax, plus %o for the block's offset (8 bytes)",
        |s, v| {
            s.verify.verify_pattern = crate::job::pattern::parse_verify_pattern(v)?;
            Ok(())
        },
    ),
    opt(
        "verify_fatal",
        Verify,
        Kind::Bool,
        "Stop at the first bad interval, even with continue_on_error (by default every interval of a bad block is checked and reported)",
        |s, v| {
            s.verify.verify_fatal = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "verify_dump",
        Verify,
        Kind::Bool,
        "On a failure, save what was read and what was expected as FILE.OFFSET.received and FILE.OFFSET.expected in the current directory",
        |s, v| {
            s.verify.verify_dump = boolean(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "verify_async",
        Verify,
        Kind::Int,
        "Accepted for job files: iomark checks blocks in the job's own thread, with the same checks and results (no extra threads are started)",
        |s, v| {
            s.verify.verify_async = uint(v)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "verify_state_save",
        Verify,
        Kind::Bool,
        "Save the write state of a stopped job for a later check: iomark never does, so only 0 is accepted",
        |_, v| state_off(v, "save"),
    )
    .default("0"),
    opt(
        "verify_state_load",
        Verify,
        Kind::Bool,
        "Check only what a saved write state says was written: iomark saves none, so only 0 is accepted",
        |_, v| state_off(v, "load"),
    )
    .default("0"),
];

/// The write-state options: iomark does not keep a state, so only "off".
fn state_off(v: &str, what: &str) -> Result<(), JobError> {
    if boolean(v)? {
        return Err(format!(
            "iomark does not {what} the write state of a stopped job; only 0 is accepted"
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::job::options::{apply, lookup};
    use crate::job::spec::{JobSpec, VerifyKind};

    fn set(k: &str, v: &str) -> Result<JobSpec, crate::job::JobError> {
        let mut s = JobSpec::default();
        apply(&mut s, lookup(k).unwrap(), Some(v))?;
        Ok(s)
    }

    #[test]
    fn methods_and_limits() {
        assert_eq!(
            set("verify", "sha3-384").unwrap().verify.verify,
            VerifyKind::Sha3_384
        );
        assert_eq!(set("verify", "0").unwrap().verify.verify, VerifyKind::None);
        assert_eq!(
            set("verify", "CRC32C").unwrap().verify.verify,
            VerifyKind::Crc32c
        );
        for (k, v) in [
            ("verify", "crc33"),
            ("verify_interval", "60"),
            ("verify_offset", "8"),
            ("verify_pattern", "%x"),
            ("verify_backlog", "-1"),
            ("verify_fatal", "maybe"),
        ] {
            assert!(set(k, v).is_err(), "{k}={v} accepted");
        }
        let e = set("verify_state_load", "1").unwrap_err();
        assert!(e.message.contains("only 0 is accepted"), "{e}");
        assert_eq!(set("verify_state_save", "0").unwrap(), JobSpec::default());
        let e = set("verify_async_cpus", "0").unwrap_err();
        assert!(e.message.contains("not supported"), "{e}");
    }
}
