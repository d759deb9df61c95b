//! Files and targets: names, directories, sizes, offsets and the life
//! cycle of the files a job creates.

use super::{boolean, opt, size, uint_in, unsupported, Category::*, Kind, OptDef};
use crate::job::spec::{FadviseHint, FallocateMode, FileService};
use crate::job::value::{parse_choice, parse_size_or_percent, parse_size_range, SizeOrPercent};
use crate::job::JobError;

/// Splits a ':'-separated list, honouring `\:` as a literal colon.
pub fn split_colon_list(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A list of paths whose colon was not escaped before a backslash, as in
/// `C:\tmp\y`: split at that colon it would be two names, `C` and
/// `\tmp\y`, while a one-letter name followed by one starting with `\`
/// is a drive path in every real case. Refused with the escaped form.
fn refuse_unescaped_drive(v: &str) -> Result<(), JobError> {
    let b = v.as_bytes();
    let mut piece_start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b':') => i += 2,
            b':' => {
                let piece = v[piece_start..i].trim();
                let one_letter = piece.len() == 1 && piece.as_bytes()[0].is_ascii_alphabetic();
                if one_letter && b.get(i + 1) == Some(&b'\\') {
                    let escaped = format!("{}\\:{}", &v[..i], &v[i + 1..]);
                    return Err(format!(
                        "'{}' looks like a Windows drive path, but ':' separates names here; \
                         escape the drive's colon: {escaped}",
                        v.trim()
                    )
                    .into());
                }
                piece_start = i + 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn parse_file_service(v: &str) -> Result<FileService, JobError> {
    let (kind, arg) = match v.split_once(':') {
        Some((k, a)) => (k.trim(), Some(a.trim())),
        None => (v.trim(), None),
    };
    let count = |a: Option<&str>| -> Result<u32, JobError> {
        match a {
            Some(a) => Ok(uint_in(a, 1, u32::MAX as u64)? as u32),
            None => Ok(1),
        }
    };
    let float = |a: Option<&str>, def: f64| -> Result<f64, JobError> {
        match a {
            Some(a) => a
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("'{a}' is not a number").into()),
            None => Ok(def),
        }
    };
    Ok(match kind {
        "random" => FileService::Random(count(arg)?),
        "roundrobin" => FileService::RoundRobin(count(arg)?),
        "sequential" => FileService::Sequential(count(arg)?),
        "zipf" => FileService::Zipf(float(arg, 1.2)?),
        "pareto" => FileService::Pareto(float(arg, 0.2)?),
        "normal" => FileService::Normal(float(arg, 0.0)?),
        "gauss" => FileService::Gauss(float(arg, 0.0)?),
        _ => {
            return Err(format!(
                "'{v}' is not one of: random, roundrobin, sequential, zipf, pareto, normal, gauss (optionally with :N)"
            ).into())
        }
    })
}

pub const OPTS: &[OptDef] = &[
    opt("filename", Files, Kind::Str, "File or device to do I/O to; several are separated by ':'", |s, v| {
        refuse_unescaped_drive(v)?;
        let names = split_colon_list(v);
        if names.is_empty() {
            return Err("needs at least one file name".into());
        }
        s.file.filenames = names;
        Ok(())
    }),
    opt("opendir", Files, Kind::Str, "Use every regular file below this directory (recursively) as a target, besides any filename", |s, v| {
        s.file.opendir = Some(v.to_string());
        Ok(())
    }),
    opt("ioscheduler", Files, Kind::Str, "I/O scheduler the disks under the job's files switch to for the run (the previous one is restored after)", |s, v| {
        if v.is_empty() || v.contains(char::is_whitespace) {
            return Err(format!("'{v}' is not a scheduler name (like none, mq-deadline, kyber, bfq)").into());
        }
        s.file.ioscheduler = Some(v.to_string());
        Ok(())
    }),
    opt("directory", Files, Kind::Str, "Directory for the job's files, prefixed even to an absolute filename (as fio does); several are separated by ':', one per clone", |s, v| {
        refuse_unescaped_drive(v)?;
        let dirs = split_colon_list(v);
        if dirs.is_empty() {
            return Err("needs a directory".into());
        }
        s.file.directories = dirs;
        Ok(())
    }),
    opt("filename_format", Files, Kind::Str, "Pattern for generated file names ($jobname, $jobnum, $filenum, $rank, $hostname, $clientuid)", |s, v| {
        if v.trim().is_empty() {
            return Err("the format must not be empty".into());
        }
        s.file.filename_format = v.trim().to_string();
        Ok(())
    })
    .default("$jobname.$jobnum.$filenum"),
    opt("unique_filename", Files, Kind::Bool, "Prefix generated names with the client's address in client/server mode", |s, v| {
        s.file.unique_filename = boolean(v)?;
        Ok(())
    })
    .default("1"),
    unsupported(
        "lockfile",
        Files,
        "Lock files while doing I/O to them: none, exclusive, readwrite",
        "file locking between jobs is not supported by iomark",
    ),
    opt("nrfiles", Files, Kind::Int, "Number of files the job's size is spread over", |s, v| {
        s.file.nrfiles = uint_in(v, 1, 1 << 24)? as u32;
        Ok(())
    })
    .alias(&["nr_files"])
    .default("1"),
    opt("openfiles", Files, Kind::Int, "How many files to keep open at once (0: all)", |s, v| {
        s.file.openfiles = uint_in(v, 0, u32::MAX.into())? as u32;
        Ok(())
    })
    .default("0"),
    opt("file_service_type", Files, Kind::Str, "How the next file is chosen: random, roundrobin, sequential (with :N ios per switch), zipf, pareto, normal, gauss", |s, v| {
        s.file.file_service = parse_file_service(v)?;
        Ok(())
    })
    .default("roundrobin"),
    opt("size", Files, Kind::Size, "Total size of the job's files (or a percentage of an existing file or device)", |s, v| {
        let sz = parse_size_or_percent(v, s.kb_base())?;
        if sz == SizeOrPercent::Bytes(0) {
            return Err("the size must be larger than zero".into());
        }
        s.file.size = Some(sz);
        Ok(())
    }),
    opt("io_size", Files, Kind::Size, "Total amount of I/O to do, if different from size", |s, v| {
        s.file.io_size = Some(parse_size_or_percent(v, s.kb_base())?);
        Ok(())
    })
    .alias(&["io_limit"]),
    opt("filesize", Files, Kind::Range, "Size of each file, or a range to pick sizes from", |s, v| {
        s.file.filesize = Some(parse_size_range(v, s.kb_base())?);
        Ok(())
    }),
    opt("offset", Files, Kind::Size, "Start I/O at this offset in each file (bytes or percentage)", |s, v| {
        s.file.offset = parse_size_or_percent(v, s.kb_base())?;
        Ok(())
    })
    .alias(&["fileoffset"])
    .default("0"),
    opt("offset_align", Files, Kind::Size, "Round a percentage offset (or offset_increment) up to this alignment (0: the smallest block size)", |s, v| {
        s.file.offset_align = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("offset_increment", Files, Kind::Size, "Add this much to offset for each clone (numjobs)", |s, v| {
        s.file.offset_increment = parse_size_or_percent(v, s.kb_base())?;
        Ok(())
    })
    .default("0"),
    opt("number_ios", Files, Kind::Int, "Stop after this many I/Os, even if size is not reached", |s, v| {
        s.file.number_ios = size(s, v)?;
        Ok(())
    })
    .default("0"),
    opt("fill_device", Files, Kind::Bool, "Write until the device or filesystem is full (ENOSPC ends the job cleanly)", |s, v| {
        s.file.fill_device = boolean(v)?;
        Ok(())
    })
    .alias(&["fill_fs"])
    .default("0"),
    opt("file_append", Files, Kind::Bool, "Do I/O after the end of the existing file", |s, v| {
        s.file.file_append = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("create_on_open", Files, Kind::Bool, "Create files when they are opened for I/O, not before the job starts", |s, v| {
        s.file.create_on_open = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("create_only", Files, Kind::Bool, "Only lay out the files, do no I/O", |s, v| {
        s.file.create_only = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("create_serialize", Files, Kind::Bool, "Lay out the files of clones one after another", |s, v| {
        s.file.create_serialize = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("allow_file_create", Files, Kind::Bool, "Allow creating files that do not exist", |s, v| {
        s.file.allow_file_create = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("allow_mounted_write", Files, Kind::Bool, "Allow writes to a device that holds a mounted filesystem", |s, v| {
        s.file.allow_mounted_write = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("allow_destroy_data", Files, Kind::Bool, "iomark addition: allow writing over data iomark did not create (a device with a filesystem or partition table, an existing file)", |s, v| {
        s.file.allow_destroy_data = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("allow_special_files", Files, Kind::Bool, "iomark addition: allow a FIFO or a character device (other than /dev/null, /dev/zero, /dev/full) as a target; opening a FIFO waits for its other end (Ctrl-C stops the wait)", |s, v| {
        s.file.allow_special_files = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt(
        "fadvise_hint",
        Files,
        Kind::Choice(&[
            ("0", "no advice"),
            ("1", "random for random patterns, sequential otherwise"),
            ("sequential", "POSIX_FADV_SEQUENTIAL (MADV_SEQUENTIAL with mmap)"),
            ("random", "POSIX_FADV_RANDOM (MADV_RANDOM with mmap)"),
        ]),
        "Access pattern announced with posix_fadvise (posix_madvise with mmap) when a file opens",
        |s, v| {
            s.file.fadvise_hint = parse_choice(
                v,
                &[
                    ("0", FadviseHint::None),
                    ("1", FadviseHint::Workload),
                    ("sequential", FadviseHint::Sequential),
                    ("random", FadviseHint::Random),
                ],
            )?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "write_hint",
        Files,
        Kind::Choice(&[
            ("none", "no particular lifetime"),
            ("short", "data written has a short lifetime"),
            ("medium", "a medium lifetime"),
            ("long", "a long lifetime"),
            ("extreme", "a very long lifetime"),
        ]),
        "Lifetime hint for the data written to each file (fcntl F_SET_RW_HINT, set when the file opens)",
        |s, v| {
            s.file.write_hint = parse_choice(
                v,
                &[("none", 1), ("short", 2), ("medium", 3), ("long", 4), ("extreme", 5)],
            )?;
            Ok(())
        },
    ),
    opt("create_fsync", Files, Kind::Bool, "fsync each file after writing its layout", |s, v| {
        s.file.create_fsync = boolean(v)?;
        Ok(())
    })
    .default("1"),
    opt("pre_read", Files, Kind::Bool, "Read the files into the page cache before starting", |s, v| {
        s.file.pre_read = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("overwrite", Files, Kind::Bool, "Write the whole file before a write job, so it writes over existing blocks", |s, v| {
        s.file.overwrite = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("fallocate", Files, Kind::Choice(&[("none", "do not preallocate"), ("native", "fallocate(2), falling back to none"), ("posix", "posix_fallocate(3)"), ("keep", "fallocate(2) keeping the file size"), ("truncate", "ftruncate(2) to the size"), ("0", "same as none"), ("1", "same as posix")]), "How to preallocate files when laying them out", |s, v| {
        s.file.fallocate = parse_choice(
            v,
            &[
                ("none", FallocateMode::None),
                ("native", FallocateMode::Native),
                ("posix", FallocateMode::Posix),
                ("keep", FallocateMode::Keep),
                ("truncate", FallocateMode::Truncate),
                ("0", FallocateMode::None),
                ("1", FallocateMode::Posix),
            ],
        )?;
        Ok(())
    })
    .default("native"),
    opt("unlink", Files, Kind::Bool, "Remove the job's files when it finishes", |s, v| {
        s.file.unlink = boolean(v)?;
        Ok(())
    })
    .default("0"),
    opt("unlink_each_loop", Files, Kind::Bool, "Remove the job's files after each loop", |s, v| {
        s.file.unlink_each_loop = boolean(v)?;
        Ok(())
    })
    .default("0"),
];

#[cfg(test)]
mod drive_path_tests {
    use super::*;

    #[test]
    fn an_unescaped_drive_path_is_refused_with_its_escaped_form() {
        let e = refuse_unescaped_drive(r"C:\tmp\y").unwrap_err().to_string();
        assert!(e.contains(r"escape the drive's colon: C\:\tmp\y"), "{e}");
        let e = refuse_unescaped_drive(r"/data/a:d:\x")
            .unwrap_err()
            .to_string();
        assert!(e.contains(r"/data/a:d\:\x"), "{e}");
        // Escaped, a list of Unix paths, a one-letter file, a device name.
        for ok in [
            r"C\:\tmp\y",
            "/a:/b",
            "C:/tmp/y",
            "x:y",
            r"\\.\PhysicalDrive0",
            r"\\.\X\:",
        ] {
            assert!(refuse_unescaped_drive(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            split_colon_list(r"C\:\tmp\y"),
            vec![r"C:\tmp\y".to_string()]
        );
    }
}
