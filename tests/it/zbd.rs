//! `zonemode=zbd` on zones emulated on a regular file (`zonesize`,
//! `zonecapacity`): iomark does the I/O fio 3.33 does — the same I/O
//! counts and the same zone resets (fio's JSON has no zone resets before
//! 3.34: its text line "; N zone resets" is read) — and refuses what fio
//! refuses. Zoned devices themselves are tested in the guest suite
//! (`guest.rs`).

use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// (reads, writes, zone resets) of a run's JSON and text output.
fn figures(json: &str, text: &str) -> (u64, u64, u64) {
    let start = json.find("{\n").unwrap_or(0);
    // (a job without I/O has no text block to split at: the JSON is
    // followed by the rest of the report)
    let doc: Value = serde_json::Deserializer::from_str(&json[start..])
        .into_iter()
        .next()
        .expect("a JSON document")
        .expect("JSON");
    let job = &doc["jobs"][0];
    let resets = text
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once("; ")?;
            rest.strip_suffix(" zone resets")?.parse().ok()
        })
        .unwrap_or(u64::MAX);
    (
        job["read"]["total_ios"].as_u64().unwrap_or(0),
        job["write"]["total_ios"].as_u64().unwrap_or(0),
        resets,
    )
}

/// Runs `job` with iomark and fio on 16 MiB files of their own and
/// returns both tools' figures.
fn both(job: &[&str]) -> ((u64, u64, u64), (u64, u64, u64)) {
    let dir = tempdir();
    let run = |tool: &str, file: &str| {
        std::fs::write(dir.path().join(file), vec![0u8; 16 << 20]).unwrap();
        let mut c = if tool == "iomark" {
            let mut c = iomark();
            c.arg("--allow_destroy_data=1");
            c
        } else {
            Command::new("fio")
        };
        let o = c
            .arg(format!("--filename={file}"))
            .args(job)
            .arg("--output-format=json,normal")
            .current_dir(dir.path())
            .output_bounded()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{tool} {job:?}: {}", stderr(&o));
        // json first, then the text report
        let split = out.find("\nz: (groupid").unwrap_or(out.len());
        figures(&out[..split], &out[split..])
    };
    (run("iomark", "a"), run("fio", "b"))
}

const ZONES: &[&str] = &[
    "--name=z",
    "--size=16m",
    "--zonemode=zbd",
    "--zonesize=4m",
    "--zonecapacity=3m",
    "--bs=4k",
];

fn case(extra: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = ZONES.to_vec();
    for e in extra {
        v.push(Box::leak(e.to_string().into_boxed_str()));
    }
    v
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn the_same_io_and_zone_resets_as_fio() {
    crate::require_fio!();
    // (options, expected iomark figures: reads, writes, zone resets)
    type Expected = (u64, u64, u64);
    let cases: &[(&[&str], Expected)] = &[
        // 4 zones with 3 MiB capacity: 3072 writes, the gap skipped
        (&["--rw=write"], (0, 3072, 0)),
        // every zone rewritten after the first loop: 8 resets
        (&["--rw=write", "--loops=3"], (0, 9216, 8)),
        // the random map hits each zone 1024 times: each reset once
        (&["--rw=randwrite"], (0, 4096, 4)),
        // two open zones at a time
        (&["--rw=randwrite", "--max_open_zones=2"], (0, 4096, 2)),
        // the region rounded to whole zones (offset up, end down)
        (&["--rw=write", "--offset=1m", "--size=15m"], (0, 2304, 0)),
        // verification: full zones are not reset, so the job ends there
        (&["--rw=randwrite", "--verify=crc32c"], (3072, 3072, 0)),
        // past half the region's capacity written, every write resets its
        // zone first (7 resets without the threshold)
        (
            &[
                "--rw=write",
                "--io_size=32m",
                "--zone_reset_threshold=0.5",
                "--zone_reset_frequency=1",
            ],
            (0, 8192, 12),
        ),
        // ... or every second write, past a quarter
        (
            &[
                "--rw=write",
                "--io_size=32m",
                "--zone_reset_threshold=0.25",
                "--zone_reset_frequency=0.5",
            ],
            (0, 8192, 28),
        ),
        // a job limit below the global one; a global limit beyond the
        // device's (none for a file) with ignore_zone_limits
        (
            &[
                "--rw=write",
                "--io_size=24m",
                "--max_open_zones=2",
                "--job_max_open_zones=1",
            ],
            (0, 6144, 4),
        ),
        (
            &[
                "--rw=write",
                "--io_size=24m",
                "--max_open_zones=3",
                "--ignore_zone_limits=1",
            ],
            (0, 6144, 4),
        ),
        // reads of empty zones: none, unless read_beyond_wp (no writes,
        // so no zone-reset line in either report)
        (&["--rw=read", "--bs=64k"], (0, 0, u64::MAX)),
        (
            &["--rw=read", "--bs=64k", "--read_beyond_wp=1"],
            (256, 0, u64::MAX),
        ),
    ];
    for (extra, want) in cases {
        let job = case(extra);
        let (ours, fio) = both(&job);
        assert_eq!(ours, fio, "{extra:?}: iomark {ours:?}, fio {fio:?}");
        assert_eq!(ours, *want, "{extra:?}");
    }
}

#[test]
fn what_fio_refuses_is_refused_in_one_line() {
    let dir = tempdir();
    std::fs::write(dir.path().join("f"), vec![0u8; 8 << 20]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--zonemode=zbd", "--rw=write"],
            "zonesize is needed to emulate zones",
        ),
        (
            &[
                "--zonemode=zbd",
                "--zonesize=1m",
                "--zonecapacity=2m",
                "--rw=write",
            ],
            "zonecapacity 2097152 is larger than zonesize 1048576",
        ),
        (
            &["--zonemode=zbd", "--zonesize=16m", "--rw=write"],
            "is smaller than zonesize",
        ),
        (
            &[
                "--zonemode=zbd",
                "--zonesize=1m",
                "--job_max_open_zones=2",
                "--rw=write",
            ],
            "job_max_open_zones cannot be used without a global open zones limit",
        ),
        (
            &[
                "--zonemode=zbd",
                "--zonesize=1m",
                "--rw=write",
                "--offset=512k",
                "--size=1m",
            ],
            "io_size must be at least one zone",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["--name=z", "--filename=f", "--allow_destroy_data=1"];
        all.extend_from_slice(args);
        let o = run_in(dir.path(), &all);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} ran");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // a new file has no size yet to cut into zones, as with fio
    let o = run_in(
        dir.path(),
        &[
            "--name=z",
            "--filename=new",
            "--zonemode=zbd",
            "--zonesize=1m",
            "--size=4m",
            "--rw=write",
        ],
    );
    assert!(
        stderr(&o).contains("'new' (0 bytes) is smaller than zonesize"),
        "{}",
        stderr(&o)
    );
}
