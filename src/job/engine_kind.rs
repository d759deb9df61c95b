//! The names of I/O engines: `EngineKind`, the value of the job option
//! `ioengine`, parsed once when the option is read, and the name table
//! (each engine's fio name and one-line description), plus the fio
//! engines iomark does not implement.
//!
//! Why it lives in the job language: an engine's name is a word of the
//! job language, like `rw`'s patterns, and the job layer must parse it
//! (and name file:line when it is wrong) without knowing how engines run
//! (DESIGN.md layering rules). So this module imports nothing but std:
//! the job language, the engines and the runner all import it, and it
//! imports none of them. What each engine can do and how it is built
//! (capabilities, preflight, constructor) is the other half of its entry,
//! in `engine::registry`, reached with `kind.info()`; a `match` there on
//! every `EngineKind` makes the compiler ask for it when an engine is
//! added here.

use crate::job::JobError;
use std::fmt;

/// Declares `EngineKind` and its name table from one list, so a name,
/// its description and its variant cannot drift apart.
macro_rules! engine_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $about:literal; )+) => {
        /// An I/O engine iomark implements. `sync`, `psync`, `vsync`,
        /// `pvsync` and `pvsync2` are distinct kinds: each names its
        /// system calls.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum EngineKind {
            $( $(#[$doc])* $variant, )+
        }

        impl EngineKind {
            /// Every engine, in the order `--enghelp` lists them.
            pub const ALL: &'static [EngineKind] = &[$(EngineKind::$variant),+];

            /// `(name, description)` of every engine, for the option
            /// table's `ioengine` entry (`--cmdhelp=ioengine`).
            pub const CHOICES: &'static [(&'static str, &'static str)] = &[$(($name, $about)),+];

            /// The engine's fio name, as job files write it and reports
            /// print it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(EngineKind::$variant => $name,)+
                }
            }

            /// One line saying what the engine does.
            pub const fn about(self) -> &'static str {
                match self {
                    $(EngineKind::$variant => $about,)+
                }
            }
        }
    };
}

engine_kinds! {
    /// `read`/`write` after `lseek`.
    Sync = "sync", "read(2) and write(2), each after an lseek(2)";
    /// `pread`/`pwrite` (the default).
    Psync = "psync", "pread(2) and pwrite(2) (the default)";
    /// `readv`/`writev` after `lseek`.
    Vsync = "vsync", "readv(2) and writev(2), each after an lseek(2)";
    /// `preadv`/`pwritev`.
    Pvsync = "pvsync", "preadv(2) and pwritev(2)";
    /// `preadv2`/`pwritev2` with per-I/O flags.
    Pvsync2 = "pvsync2", "preadv2(2) and pwritev2(2), with hipri, nowait and uncached";
    /// Linux native asynchronous I/O.
    Libaio = "libaio", "Linux native asynchronous I/O (io_submit(2), io_getevents(2))";
    /// io_uring rings.
    IoUring = "io_uring", "asynchronous I/O through io_uring submission and completion rings";
    /// NVMe passthrough commands through io_uring.
    IoUringCmd = "io_uring_cmd", "NVMe read, write, deallocate and flush commands through io_uring on NVMe generic character devices (/dev/ngXnY)";
    /// Overlapped I/O on an I/O completion port (Windows).
    WindowsAio = "windowsaio", "Windows overlapped I/O on an I/O completion port (ReadFile, WriteFile, GetQueuedCompletionStatusEx)";
    /// POSIX asynchronous I/O from the C library.
    PosixAio = "posixaio", "POSIX asynchronous I/O (aio_read(3), aio_write(3))";
    /// Copies to and from a shared mapping of each file.
    Mmap = "mmap", "copies to and from a shared memory mapping of each file";
    /// Completes every I/O without doing it.
    Null = "null", "does no I/O: measures iomark's own overhead";
    /// Measures creating files.
    FileCreate = "filecreate", "measures creating each file (open(2) with O_CREAT)";
    /// Measures stat calls.
    FileStat = "filestat", "measures stat(2), lstat(2) or statx(2) of each file (stat_type)";
    /// Measures deleting files.
    FileDelete = "filedelete", "measures deleting each file (unlink(2))";
    /// Each write sets the file size.
    Ftruncate = "ftruncate", "each write sets the file size to its offset (ftruncate(2))";
    /// Block allocation as the I/O.
    Falloc = "falloc", "fallocate(2) as the I/O: writes allocate, reads allocate keeping the size, trims punch holes";
    /// Objects over HTTP: S3 or WebDAV.
    Http = "http", "objects over HTTP(S): S3 (signed with AWS Signature Version 4) or WebDAV; writes PUT, reads GET, trims DELETE, iodepth requests in flight";
}

/// fio engines that iomark does not implement, named so that using one
/// says so instead of "unknown".
pub const NOT_IMPLEMENTED: &[&str] = &[
    "cpuio",
    "net",
    "netsplice",
    "exec",
    "e4defrag",
    "splice",
    "gfapi",
    "gfapi_async",
    "mtd",
    "sg",
    "nbd",
    "rdma",
    "rados",
    "rbd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "nfs",
    "libiscsi",
    "libhdfs",
    "xnvme",
    "libzbc",
    "libcufile",
    "dfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "solarisaio",
    "spdk",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "libblkio",
    "external",
    "guasi",
    "binject",
    "dircreate",
    "dirstat",
    "dirdelete",
];

impl EngineKind {
    /// The engine a job uses when it names none (fio's default).
    pub const DEFAULT: EngineKind = EngineKind::Psync;

    /// The engine of this fio name, if iomark implements it.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Parses an `ioengine` value, with a clear reason when it cannot be
    /// used: an fio engine iomark does not implement is "not supported",
    /// anything else "unknown"; both list the engines iomark has.
    pub fn parse(name: &str) -> Result<EngineKind, JobError> {
        if let Some(k) = EngineKind::from_name(name) {
            return Ok(k);
        }
        if is_fio_only(name) {
            return Err(format!(
                "ioengine '{name}' is not supported by iomark (supported: {})",
                supported_list()
            )
            .into());
        }
        Err(format!(
            "unknown ioengine '{name}' (supported: {})",
            supported_list()
        )
        .into())
    }
}

/// Whether `name` is an fio engine iomark does not implement (an
/// `external:PATH` engine, or one of `NOT_IMPLEMENTED`, with or without
/// a `:suffix`).
pub fn is_fio_only(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    NOT_IMPLEMENTED.contains(&base) || name.starts_with("external:")
}

/// The engines iomark implements, comma-separated, in `--enghelp` order.
pub fn supported_list() -> String {
    let names: Vec<&str> = EngineKind::ALL.iter().map(|k| k.name()).collect();
    names.join(", ")
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_kind() {
        for &k in EngineKind::ALL {
            assert_eq!(EngineKind::parse(k.name()), Ok(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(EngineKind::CHOICES.len(), EngineKind::ALL.len());
        for (&k, (name, about)) in EngineKind::ALL.iter().zip(EngineKind::CHOICES) {
            assert_eq!((k.name(), k.about()), (*name, *about));
        }
    }

    #[test]
    fn names_are_distinct_and_not_also_listed_as_missing() {
        for (i, a) in EngineKind::ALL.iter().enumerate() {
            assert!(
                !EngineKind::ALL[i + 1..]
                    .iter()
                    .any(|b| b.name() == a.name()),
                "{a}"
            );
            assert!(
                !is_fio_only(a.name()),
                "{a} is implemented and listed as not"
            );
        }
    }

    #[test]
    fn the_sync_family_are_distinct_kinds() {
        let sync: Vec<_> = ["sync", "psync", "vsync", "pvsync", "pvsync2"]
            .iter()
            .map(|n| EngineKind::parse(n).unwrap())
            .collect();
        for (i, k) in sync.iter().enumerate() {
            assert!(!sync[i + 1..].contains(k));
        }
        assert_eq!(EngineKind::DEFAULT.name(), "psync");
    }

    #[test]
    fn errors_say_unknown_or_not_supported_and_list_the_engines() {
        let all = supported_list();
        assert!(all.contains("ftruncate") && all.contains("falloc"), "{all}");
        assert_eq!(
            EngineKind::parse("iouring").unwrap_err(),
            format!("unknown ioengine 'iouring' (supported: {all})").into()
        );
        for fio_only in ["net", "rbd", "external:/lib/x.so", "ime_psync:x"] {
            assert_eq!(
                EngineKind::parse(fio_only).unwrap_err(),
                format!("ioengine '{fio_only}' is not supported by iomark (supported: {all})")
                    .into()
            );
        }
        // Names are exact: case and surrounding space are the caller's.
        assert!(EngineKind::parse("PSYNC").is_err());
        assert!(EngineKind::parse(" psync").is_err());
        assert!(EngineKind::parse("").is_err());
    }
}
