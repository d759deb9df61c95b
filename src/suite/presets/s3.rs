//! Object presets (`s3-put`, `s3-get`, `s3-mixed`, `s3-list`,
//! `s3-stat`): PUT, GET, LIST and HEAD of objects through the `http`
//! engine against an S3 endpoint and bucket the user names
//! (`--endpoint`, `--bucket`), in the spirit of warp.
//!
//! - Each block is one object (`http_object_mode=block`), so `bs` is the
//!   object size: fixed (1 MiB), or mixed as `bssplit` draws it (4 KiB to
//!   4 MiB, weighted like a store of documents and media).
//! - Reads need objects: a `prep` test writes the 1 MiB set once (with
//!   crc32c headers), then the GET test reads it back and checks each
//!   object, so a GET that found no object (which the engine reads as
//!   zeroes, as fio does) fails the run instead of counting as data.
//! - Mixed sizes are GET in the test that PUT them: the job writes the
//!   set and reads it back (`verify`), each GET asking for an object of
//!   the size its PUT drew. A separate read job would draw its sizes
//!   from another stream (fio's read and write size streams differ, and
//!   so do iomark's, which are fio's), asking for objects nobody wrote.
//! - `s3-mixed` (70 % GET / 30 % PUT) has fixed sizes only: with drawn
//!   sizes its GETs would ask for objects no PUT made, and iomark does not
//!   pass zeroes off as data.
//!
//! - `s3-list` and `s3-stat` prepare `--objects` objects of 4 KiB (their
//!   size is that count times 4 KiB), then send LIST pages
//!   (`http_op=list`) or HEADs (`http_op=head`) over them: requests that
//!   move no object data and count as reads of 0 bytes.
//!
//! Every object lives under the run's own prefix (`iomark-STAMP-PID/`);
//! `suite_cmd` creates and removes the bucket (or, with
//! `--use-existing-bucket`, only what is under that prefix).

use super::{comment_block, time_text, Preset, PresetTest, Render};
use crate::job::EngineKind;

/// Mixed object sizes: many small objects, most bytes in large ones.
const MIXED: &str = "4k/25:64k/25:1m/40:4m/10";

/// A test of an object preset over object set `$set` (see [`render`]):
/// its options, then `time_based` when marked `timed` (a prep test writes
/// its set once).
macro_rules! object_test {
    ($section:literal, $label:literal, $set:literal, timed, [$($o:expr),* $(,)?]) => {
        PresetTest {
            section: $section,
            label: $label,
            options: &[$($o,)* ("time_based", ""), ("object_set", $set)],
        }
    };
    ($section:literal, $label:literal, $set:literal, [$($o:expr),* $(,)?]) => {
        PresetTest {
            section: $section,
            label: $label,
            options: &[$($o,)* ("object_set", $set)],
        }
    };
}

/// An object preset: the http engine, 64 MiB per object set, 10 s per
/// test, one pass, no warm-up.
const fn object_preset(
    name: &'static str,
    summary: &'static str,
    about: &'static str,
    tests: &'static [PresetTest],
) -> Preset {
    Preset {
        name,
        summary,
        about,
        shared_file: None,
        size: "64m",
        runtime_s: 10,
        passes: 1,
        warmup_s: 0,
        direct: false,
        engines: &[EngineKind::Http],
        global: &[],
        tests,
    }
}

const PREP_FIXED: PresetTest = object_test!(
    "prep-1m",
    "prep 1MiB",
    "fixed",
    [("rw", "write"), ("bs", "1m")]
);

pub const S3_PUT: Preset = object_preset(
    "s3-put",
    "Object PUTs: 1MiB objects, then mixed sizes (4KiB-4MiB), QD8, in a bucket of its own",
    "PUT throughput and latency of an S3 store: whole objects of 1 MiB, \
     then of mixed sizes (25% 4 KiB, 25% 64 KiB, 40% 1 MiB, 10% 4 MiB), \
     8 requests in flight. Time to first byte is the server's answer \
     after the body was sent. The run creates its bucket and removes it \
     with every object it wrote.",
    &[
        object_test!(
            "put-1m",
            "1MiB",
            "put-1m",
            timed,
            [("rw", "write"), ("bs", "1m")]
        ),
        object_test!(
            "put-mixed",
            "4KiB-4MiB",
            "put-mixed",
            timed,
            [("rw", "write"), ("bssplit", MIXED)]
        ),
    ],
);

pub const S3_GET: Preset = object_preset(
    "s3-get",
    "Object GETs of a prepared set: 1MiB objects, then mixed sizes (4KiB-4MiB) PUT and GET back, QD8, checked",
    "GET throughput, latency and time to first byte of an S3 store. \
     A set of 1 MiB objects is first written by a prep test, then \
     read back whole for the run time with 8 requests in flight and \
     checked (crc32c), so a missing object fails the run. Mixed sizes \
     (25% 4 KiB, 25% 64 KiB, 40% 1 MiB, 10% 4 MiB) are PUT and then \
     GET back in one test, each GET asking for the object its PUT \
     wrote, at that size, and checking it.",
    &[
        PREP_FIXED,
        object_test!(
            "get-1m",
            "1MiB",
            "fixed",
            timed,
            [("rw", "read"), ("bs", "1m"), ("verify", "crc32c")]
        ),
        object_test!(
            "put-get-mixed",
            "4KiB-4MiB",
            "mixed",
            [("rw", "write"), ("bssplit", MIXED), ("verify", "crc32c")]
        ),
    ],
);

pub const S3_MIXED: Preset = object_preset(
    "s3-mixed",
    "Object mix: 70% GET / 30% PUT of 1MiB objects, then of 64KiB, QD8, on a prepared set",
    "A read-mostly object workload: 70% GETs and 30% PUTs of whole \
     objects over a set a prep test wrote first, at two fixed sizes \
     (1 MiB, 64 KiB), 8 requests in flight. Sizes drawn at random are \
     not offered here: GETs would ask for objects no PUT made.",
    &[
        PREP_FIXED,
        object_test!(
            "mixed-1m",
            "70/30 1MiB",
            "fixed",
            timed,
            [("rw", "rw"), ("rwmixread", "70"), ("bs", "1m")]
        ),
        object_test!(
            "prep-64k",
            "prep 64KiB",
            "small",
            [("rw", "write"), ("bs", "64k")]
        ),
        object_test!(
            "mixed-64k",
            "70/30 64KiB",
            "small",
            timed,
            [("rw", "rw"), ("rwmixread", "70"), ("bs", "64k")]
        ),
    ],
);

/// The size of each object `s3-list` and `s3-stat` prepare.
pub const COUNTED_OBJECT: u64 = 4096;

/// How many objects `s3-list` and `s3-stat` prepare unless `--objects`
/// says.
pub const DEFAULT_OBJECTS: u64 = 1000;

/// The set `s3-list` and `s3-stat` write first: `--objects` objects of
/// 4 KiB.
const PREP_COUNTED: PresetTest = object_test!(
    "prep-objects",
    "prep 4KiB",
    "counted",
    [("rw", "write"), ("bs", "4k")]
);

pub const S3_LIST: Preset = object_preset(
    "s3-list",
    "Object listing: ListObjectsV2 pages of 1000 keys over a prepared set of --objects objects (default 1000), QD8",
    "LIST throughput and latency of an S3 store: a prep test writes \
     --objects objects of 4 KiB (default 1000), then ListObjectsV2 walks \
     their prefix for the run time, one page of up to 1000 keys a \
     request, each of 8 requests in flight on a listing of its own \
     that starts over after its last page. IOPS are pages per second; \
     no object data moves (0 bytes); the objects listed, in all and \
     per second, are counted.",
    &[
        PREP_COUNTED,
        object_test!(
            "list",
            "1000 keys/page",
            "counted",
            timed,
            [("rw", "read"), ("bs", "4k"), ("http_op", "list")]
        ),
    ],
);

pub const S3_STAT: Preset = object_preset(
    "s3-stat",
    "Object metadata: HEAD of random objects of a prepared set of --objects objects (default 1000), QD8",
    "HEAD (stat) throughput and latency of an S3 store: a prep test \
     writes --objects objects of 4 KiB (default 1000), then HEAD \
     requests ask for the metadata of objects of the set at random for \
     the run time, 8 in flight. IOPS are HEADs per second; no object \
     data moves (0 bytes); a missing object fails the run.",
    &[
        PREP_COUNTED,
        object_test!(
            "stat",
            "4KiB",
            "counted",
            timed,
            [("rw", "randread"), ("bs", "4k"), ("http_op", "head")]
        ),
    ],
);

/// Whether a preset's size is a count of objects (`--objects`):
/// `s3-list` and `s3-stat`, whose tests send HEAD or LIST requests.
pub fn counts_objects(p: &Preset) -> bool {
    p.tests
        .iter()
        .any(|t| t.options.iter().any(|(k, _)| *k == "http_op"))
}

/// Where an object preset runs: the store, its bucket and the run's own
/// prefix in it.
#[derive(Clone, Debug)]
pub struct Store {
    /// `host` or `host:port`.
    pub host: String,
    pub https: bool,
    pub bucket: String,
    /// The run's prefix, without slashes (`iomark-STAMP-PID`).
    pub prefix: String,
}

/// The fio job file of an object preset. A test's `object_set` (not a
/// job option) names the objects it writes or reads: tests with the same
/// set share their objects. Prep tests write their set once (no run
/// time); the others run `runtime` when time-based, else once over the
/// set with the run time as a limit.
pub fn render(p: &Preset, r: &Render, store: &Store) -> String {
    let mut out = format!("; iomark preset '{}': {}\n;\n", p.name, p.summary);
    out.push_str(&comment_block(p.about));
    out.push_str(
        "; Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the\n\
         ; shared credentials file; they are not written here. Under fio, give\n\
         ; them with http_s3_keyid= and http_s3_key=, and create the bucket first.\n",
    );
    for c in &r.comments {
        out.push_str(&format!("; {c}\n"));
    }
    out.push_str("\n[global]\nioengine=http\nhttp_mode=s3\n");
    out.push_str(&format!("http_host={}\n", store.host));
    out.push_str(&format!(
        "https={}\n",
        if store.https { "on" } else { "off" }
    ));
    let size = r.size.clone().unwrap_or_else(|| p.size.to_string());
    out.push_str(&format!("size={size}\niodepth=8\n"));
    out.push_str("group_reporting\nlat_percentiles=1\nstonewall\n");
    let runtime = r
        .runtime
        .clone()
        .unwrap_or_else(|| time_text(p.runtime_s * 1_000_000));
    for t in p.tests {
        out.push_str(&format!("\n[{}]\n", t.section));
        for (k, v) in t.options {
            if *k == "object_set" {
                out.push_str(&format!(
                    "filename=/{}/{}/{v}\n",
                    store.bucket, store.prefix
                ));
                continue;
            }
            if v.is_empty() {
                out.push_str(&format!("{k}\n"));
            } else {
                out.push_str(&format!("{k}={v}\n"));
            }
        }
        if t.section.starts_with("prep-") {
            // The set is written whole, with the headers its reads check.
            out.push_str("verify=crc32c\ndo_verify=0\n");
        } else {
            out.push_str(&format!("runtime={runtime}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        Store {
            host: "127.0.0.1:8333".into(),
            https: false,
            bucket: "bkt".into(),
            prefix: "iomark-x".into(),
        }
    }

    #[test]
    fn object_presets_render_job_files_iomark_accepts() {
        for p in [&S3_PUT, &S3_GET, &S3_MIXED, &S3_LIST, &S3_STAT] {
            let text = render(
                p,
                &Render {
                    size: Some("4m".into()),
                    runtime: Some("1s".into()),
                    ..Render::default()
                },
                &store(),
            );
            assert!(!text.contains("object_set"), "{text}");
            let sections =
                crate::job::jobfile::parse_jobfile_text(&text, std::path::Path::new("p.fio"))
                    .unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.name));
            let src = crate::job::JobSources {
                files: vec![("p.fio".into(), sections)],
                ..Default::default()
            };
            let list = crate::workload::checked_jobs(&src)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.name));
            assert_eq!(list.jobs.len(), p.tests.len(), "{}", p.name);
            for (j, t) in list.jobs.iter().zip(p.tests) {
                assert!(
                    j.file.filenames[0].starts_with("/bkt/iomark-x/"),
                    "{}",
                    t.section
                );
                if t.section.starts_with("prep-") {
                    assert!(!j.time.time_based, "{}", t.section);
                } else {
                    assert_eq!(j.time.runtime_us, 1_000_000, "{}", t.section);
                }
            }
        }
    }
}
