//! The report formats: normal text snapshots (deterministic through the
//! null engine and the fake clock), percentiles against json+ bins, the
//! JSON key set against fio's, terse field counts, unified and grouped
//! reporting, kb_base/unit_base, multiple formats and --output.

use serde_json::Value;

use crate::common::*;
use crate::require_fio;

/// Runs iomark with the fake clock (1 µs per clock reading) and returns
/// stdout with the version replaced, for snapshots.
fn fake(args: &[&str]) -> String {
    let dir = tempdir();
    let mut all = vec!["--fake-clock=1000"];
    all.extend_from_slice(args);
    let o = run_in(dir.path(), &all);
    assert!(o.status.success(), "iomark {args:?}: {}", stderr(&o));
    assert!(
        stderr(&o).is_empty(),
        "nothing should go to stderr: {}",
        stderr(&o)
    );
    stdout(&o).replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

#[test]
fn snapshot_one_job() {
    let out = fake(&[
        "--name=one",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--time_based",
        "--runtime=1",
    ]);
    insta::assert_snapshot!("one_job", out);
}

#[test]
fn snapshot_two_jobs_one_group() {
    let out = fake(&[
        "--ioengine=null",
        "--size=1m",
        "--name=reader",
        "--rw=read",
        "--name=writer",
        "--rw=write",
        "--bs=64k",
    ]);
    insta::assert_snapshot!("two_jobs_one_group", out);
}

#[test]
fn snapshot_group_reporting_numjobs_4() {
    let out = fake(&[
        "--name=grouped",
        "--ioengine=null",
        "--rw=randread",
        "--size=2m",
        "--numjobs=4",
        "--group_reporting",
    ]);
    insta::assert_snapshot!("group_reporting_numjobs_4", out);
}

#[test]
fn snapshot_two_stonewalled_groups() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("two.fio"),
        "[global]\nioengine=null\nsize=1m\n\n[first]\nrw=read\n\n[second]\nstonewall\nrw=randwrite\ndescription=the second group\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["--fake-clock=1000", "two.fio"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o).replace(env!("CARGO_PKG_VERSION"), "VERSION");
    assert!(out.contains("Run status group 1 (all jobs):"), "{out}");
    insta::assert_snapshot!("two_stonewalled_groups", out);
}

#[test]
fn snapshot_read_write_mix_with_fsync() {
    let out = fake(&[
        "--name=mix",
        "--ioengine=null",
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=4k",
        "--size=1m",
        "--fsync=8",
    ]);
    assert!(out.contains("fsync/fdatasync/sync_file_range:"), "{out}");
    insta::assert_snapshot!("read_write_mix_with_fsync", out);
}

#[test]
fn fake_clock_output_is_repeatable() {
    let args = [
        "--name=rep",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--numjobs=2",
        "--output-format=json,terse,normal",
    ];
    assert_eq!(fake(&args), fake(&args));
}

/// Percentile keys ("99.990000") as exact fractions num/den.
fn decimal(key: &str) -> (u128, u128) {
    let (int, frac) = key.split_once('.').unwrap_or((key, ""));
    let den = 10u128.pow(frac.len() as u32);
    let num = int.parse::<u128>().unwrap() * den + frac.parse::<u128>().unwrap_or(0);
    (num, den)
}

/// Checks every printed percentile of `lat` against its `bins`, computed
/// here from scratch: the smallest bin whose running count reaches p% of
/// the total. Percentiles whose threshold is an exact integer are skipped
/// (there the binary value of p decides, which this test does not model).
fn check_percentiles_from_bins(lat: &Value) -> usize {
    let bins = lat["bins"].as_object().expect("bins");
    let mut b: Vec<(u64, u64)> = bins
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    b.sort();
    let n: u64 = b.iter().map(|x| x.1).sum();
    assert_eq!(n, lat["N"].as_u64().unwrap(), "bins add up to N");
    let mut checked = 0;
    for (key, val) in lat["percentile"].as_object().unwrap() {
        let (num, den) = decimal(key);
        // reached when cum * 100 * den >= num * n
        if (num * n as u128).is_multiple_of(100 * den) {
            continue;
        }
        let mut cum = 0u128;
        let mut found = None;
        for (v, c) in &b {
            cum += *c as u128;
            if cum * 100 * den >= num * n as u128 {
                found = Some(*v);
                break;
            }
        }
        assert_eq!(
            Some(val.as_u64().unwrap()),
            found,
            "percentile {key} of {lat}"
        );
        checked += 1;
    }
    checked
}

#[test]
fn printed_percentiles_equal_those_from_jsonplus_bins() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=p",
            "--ioengine=psync",
            "--rw=randrw",
            "--size=2m",
            "--bs=4k",
            "--fsync=16",
            "--lat_percentiles=1",
            "--percentile_list=1:25:50:75:90:99:99.5:99.9:99.99",
            "--output-format=json+,normal",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let start = text.find("{\n").unwrap();
    let end = text.find("\n}\n").unwrap() + 2;
    let j: Value = serde_json::from_str(&text[start..end]).unwrap();
    let job = &j["jobs"][0];
    let mut checked = 0;
    for d in ["read", "write"] {
        checked += check_percentiles_from_bins(&job[d]["clat_ns"]);
        checked += check_percentiles_from_bins(&job[d]["lat_ns"]);
    }
    checked += check_percentiles_from_bins(&job["sync"]["lat_ns"]);
    assert!(checked >= 30, "only {checked} percentiles checked");
    // The text report prints the same values (scaled and rounded up).
    let read_p50 = job["read"]["clat_ns"]["percentile"]["50.000000"]
        .as_u64()
        .unwrap();
    assert!(text.contains("clat percentiles"), "{text}");
    let read_part = &text[text.find("  read: IOPS").unwrap()..text.find("  write: IOPS").unwrap()];
    let shown = if read_part.contains("clat percentiles (usec)") {
        read_p50.div_ceil(1000)
    } else {
        read_p50
    };
    let at = read_part.find("50.00th=[").expect("p50 in text") + "50.00th=[".len();
    let printed: u64 = read_part[at..at + read_part[at..].find(']').unwrap()]
        .trim()
        .parse()
        .unwrap();
    assert_eq!(printed, shown, "p50 in text:\n{read_part}");
}

#[test]
fn group_reporting_bins_are_the_sum_of_the_clones() {
    let base = [
        "--name=c",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--fsync=3",
        "--numjobs=4",
        "--output-format=json+",
    ];
    let parse = |s: String| -> Value { serde_json::from_str(&s).unwrap() };
    let separate = parse(fake(&base));
    let mut with_group = base.to_vec();
    with_group.push("--group_reporting");
    let merged = parse(fake(&with_group));
    let jobs = separate["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    let m = &merged["jobs"][0];
    for (d, key) in [
        ("read", "clat_ns"),
        ("write", "clat_ns"),
        ("sync", "lat_ns"),
    ] {
        let mut sum = std::collections::BTreeMap::<u64, u64>::new();
        let mut n = 0;
        for j in jobs {
            n += j[d][key]["N"].as_u64().unwrap();
            for (k, v) in j[d][key]["bins"].as_object().unwrap() {
                *sum.entry(k.parse().unwrap()).or_default() += v.as_u64().unwrap();
            }
        }
        let got: std::collections::BTreeMap<u64, u64> = m[d][key]["bins"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(got, sum, "{d} bins");
        assert_eq!(m[d][key]["N"].as_u64().unwrap(), n);
    }
    assert_eq!(m["jobname"], "c");
    let total: u64 = jobs
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(m["read"]["total_ios"].as_u64().unwrap(), total);
}

/// Every key path of a JSON document; the contents of option echoes,
/// percentile maps and bins count as one key.
fn key_paths(v: &Value, pre: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if ["job options", "global options", "percentile", "bins"]
                    .iter()
                    .any(|s| pre.ends_with(s))
                {
                    out.insert(format!("{pre}/*"));
                    continue;
                }
                key_paths(x, &format!("{pre}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{pre}[]"), out);
            }
        }
        _ => {
            out.insert(pre.to_string());
        }
    }
}

/// Keys iomark adds to fio's (documented in the README).
const IOMARK_ADDITIONS: &[&str] = &["/iomark version", "/interrupted", "/jobs[]/error_message"];

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn json_key_set_equals_fios() {
    require_fio!();
    let dir = tempdir();
    let jobs: &[&[&str]] = &[
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--fsync=4",
        ],
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--unified_rw_reporting=mixed",
        ],
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--rw=randrw",
            "--unified_rw_reporting=both",
            "--lat_percentiles=1",
            "--description=described",
        ],
        &[
            "--name=a",
            "--ioengine=psync",
            "--filename=keys.dat",
            "--size=1m",
            "--rw=randrw",
            "--numjobs=2",
            "--group_reporting",
        ],
        &[
            "--name=a",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--ss=iops:50%",
            "--ss_dur=1",
        ],
        // Per-I/O priorities: the prios arrays, in each direction and
        // the mixed one, with clat_ns, then lat_ns for a group.
        &[
            "--name=a",
            "--ioengine=libaio",
            "--direct=1",
            "--filename=keys.dat",
            "--size=1m",
            "--rw=randrw",
            "--iodepth=4",
            "--cmdprio_percentage=30",
            "--unified_rw_reporting=both",
        ],
        &[
            "--name=a",
            "--ioengine=libaio",
            "--direct=1",
            "--filename=keys.dat",
            "--size=1m",
            "--rw=randread",
            "--cmdprio_percentage=50",
            "--cmdprio_class=3",
            "--lat_percentiles=1",
            "--numjobs=2",
            "--group_reporting",
        ],
    ];
    for (i, args) in jobs.iter().enumerate() {
        for fmt in ["json", "json+"] {
            let mut a = args.to_vec();
            let f = format!("--output-format={fmt}");
            a.push(&f);
            let o = run_in(dir.path(), &a);
            assert!(o.status.success(), "{}", stderr(&o));
            let ours: Value = serde_json::from_slice(&o.stdout).expect("strict JSON");
            let fo = fio_output(
                std::process::Command::new("fio")
                    .args(&a)
                    .current_dir(dir.path()),
            );
            let ft = String::from_utf8_lossy(&fo.stdout);
            let theirs: Value = serde_json::from_str(&ft[ft.find("{\n").unwrap()..]).unwrap();
            let (mut k1, mut k2) = (Default::default(), Default::default());
            key_paths(&theirs, "", &mut k1);
            key_paths(&ours, "", &mut k2);
            // ... and everything inside iomark's own "iomark" object.
            k2.retain(|k: &String| {
                !IOMARK_ADDITIONS.contains(&k.as_str()) && !k.starts_with("/iomark/")
            });
            // Disks depend on where each tool found I/O; compare the rest.
            k1.retain(|k: &String| !k.starts_with("/disk_util"));
            k2.retain(|k: &String| !k.starts_with("/disk_util"));
            assert_eq!(k1, k2, "job {i} ({fmt}): fio's keys vs iomark's");
        }
    }
}

#[test]
fn terse_field_counts_match_fio_layout() {
    let args = [
        "--name=t",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--output-format=terse",
    ];
    let count = |extra: &[&str]| -> Vec<usize> {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        fake(&a).lines().map(|l| l.split(';').count()).collect()
    };
    assert_eq!(count(&[]), vec![121]);
    assert_eq!(count(&["--terse-version=2"]), vec![161]);
    assert_eq!(count(&["--terse-version=4"]), vec![162]);
    assert_eq!(count(&["--terse-version=5"]), vec![180]);
    assert_eq!(count(&["--unified_rw_reporting=mixed"]), vec![80]);
    assert_eq!(count(&["--unified_rw_reporting=both"]), vec![162]);
    assert_eq!(count(&["--description=d"]), vec![122]);
    // Version 2 puts the description on its own line.
    assert_eq!(
        count(&["--description=d", "--terse-version=2"]),
        vec![161, 2]
    );
    let line = fake(&args);
    let f: Vec<&str> = line.trim_end().split(';').collect();
    assert_eq!(f[0], "3");
    assert_eq!(f[2], "t");
    assert!(f[5].parse::<u64>().unwrap() > 0, "read KiB");
    assert!(f[17].starts_with("1.000000%="), "{}", f[17]);
    assert!(
        f[33].starts_with("99.990000%="),
        "last percentile {}",
        f[33]
    );
    assert_eq!(f[36], "0%=0", "unused percentile slots");
}

#[test]
fn terse_fields_agree_with_json() {
    let args = [
        "--name=t",
        "--ioengine=null",
        "--rw=read",
        "--size=4m",
        "--bs=8k",
        "--output-format=terse,json",
    ];
    let out = fake(&args);
    let (terse, json) = out.split_at(out.find("{\n").unwrap());
    let j: Value = serde_json::from_str(json).unwrap();
    let r = &j["jobs"][0]["read"];
    let f: Vec<&str> = terse.trim_end().split(';').collect();
    assert_eq!(f[5], r["io_kbytes"].to_string());
    assert_eq!(f[6], r["bw"].to_string());
    assert_eq!(f[8], r["runtime"].to_string());
    assert_eq!(
        f[13],
        (r["clat_ns"]["min"].as_u64().unwrap() / 1000).to_string()
    );
}

#[test]
fn unified_mixed_reports_one_direction() {
    let out = fake(&[
        "--name=u",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--unified_rw_reporting=mixed",
    ]);
    assert!(out.contains("  mixed: IOPS="), "{out}");
    assert!(!out.contains("  read: IOPS="), "{out}");
    assert!(out.contains("  MIXED: bw="), "{out}");
    assert!(out.contains("issued rwts: total=256,0,0,0"), "{out}");
    let j: Value = serde_json::from_str(&fake(&[
        "--name=u",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--unified_rw_reporting=both",
        "--output-format=json",
    ]))
    .unwrap();
    let job = &j["jobs"][0];
    let sum =
        job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap();
    assert_eq!(job["mixed"]["io_bytes"].as_u64().unwrap(), sum);
    assert_eq!(sum, 1 << 20);
}

#[test]
fn kb_base_and_unit_base_change_the_units_printed() {
    let si = fake(&[
        "--name=k",
        "--ioengine=null",
        "--size=1048576",
        "--kb_base=1000",
    ]);
    assert!(si.contains("BW=1049MB/s (1000MiB/s)(1049kB/1msec)"), "{si}");
    assert!(si.contains("io=1049kB (1024KiB)"), "{si}");
    let bits = fake(&["--name=k", "--ioengine=null", "--size=1m", "--unit_base=1"]);
    assert!(bits.contains("BW=8000Mibit/s (8389Mbit/s)"), "{bits}");
}

#[test]
fn formats_are_written_in_order_and_to_the_output_file() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--fake-clock=1000",
            "--name=f",
            "--ioengine=null",
            "--size=1m",
            "--output-format=normal,json,terse",
            "--output=out.txt",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "stdout: {}", stdout(&o));
    let text = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    let t = text.find("\n3;").expect("terse line");
    let j = text.find("\n{\n").expect("json");
    let n = text.find("f: (groupid=0").expect("normal");
    assert!(t < j && j < n, "terse, then json, then normal:\n{text}");
    // --append-terse adds terse to the selected format.
    let o = run_in(
        dir.path(),
        &[
            "--fake-clock=1000",
            "--name=f",
            "--ioengine=null",
            "--size=1m",
            "--append-terse",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains("\n3;iomark-") && out.contains("Run status group 0"),
        "{out}"
    );
}

#[test]
fn status_interval_emits_complete_json_documents() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "--name=s",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--status-interval=500ms",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let docs: Vec<Value> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("a stream of complete JSON documents");
    assert!(docs.len() >= 3, "{} documents", docs.len());
    let ios: Vec<u64> = docs
        .iter()
        .map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap())
        .collect();
    assert!(ios.windows(2).all(|w| w[0] <= w[1]), "{ios:?}");
    assert!(ios[0] > 0, "{ios:?}");
    // Each document is also separable by lines: it starts with "{" alone.
    let text = stdout(&o);
    assert_eq!(
        text.matches("\n}\n").count() + usize::from(text.starts_with("}\n")),
        docs.len()
    );
}

#[test]
fn steady_state_stops_the_job_and_is_reported() {
    let dir = tempdir();
    let j = run_json(
        dir.path(),
        &[
            "--name=ss",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=20",
            "--ss=iops:100%",
            "--ss_dur=2",
        ],
    );
    let job = &j["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["ss"], "iops:100.000000%");
    assert_eq!(ss["duration"], 2);
    assert_eq!(ss["attained"], 1);
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2);
    // It stopped long before the 20 s runtime.
    assert!(job["job_runtime"].as_u64().unwrap() < 10_000, "{job}");
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn histogram_reproduces_fios_percentiles_from_fios_bins() {
    require_fio!();
    use iomark::stats::histogram::{bucket_of_midpoint, Histogram};
    let dir = tempdir();
    let o = fio_output(
        std::process::Command::new("fio")
            .current_dir(dir.path())
            .args([
                "--name=h",
                "--ioengine=psync",
                "--filename=h.dat",
                "--rw=randrw",
                "--size=4m",
                "--fsync=8",
                "--lat_percentiles=1",
                "--percentile_list=1:5:10:25:50:75:90:95:99:99.5:99.9:99.95:99.99:100",
                "--output-format=json+",
            ]),
    );
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let j: Value = serde_json::from_str(&text[text.find("{\n").unwrap()..]).unwrap();
    let job = &j["jobs"][0];
    let mut checked = 0;
    for lat in [
        &job["read"]["clat_ns"],
        &job["read"]["lat_ns"],
        &job["write"]["clat_ns"],
        &job["write"]["lat_ns"],
        &job["sync"]["lat_ns"],
    ] {
        let mut h = Histogram::new();
        for (k, v) in lat["bins"].as_object().expect("bins") {
            let mid: u64 = k.parse().unwrap();
            let idx = bucket_of_midpoint(mid)
                .unwrap_or_else(|| panic!("fio bin {mid} is not one of iomark's midpoints"));
            h.add_to_bucket(idx, v.as_u64().unwrap());
        }
        let pm = lat["percentile"].as_object().unwrap();
        let list: Vec<f64> = pm.keys().map(|k| k.parse().unwrap()).collect();
        let fio_vals: Vec<u64> = pm.values().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(h.percentiles(&list), fio_vals, "{lat}");
        checked += list.len();
    }
    assert_eq!(checked, 5 * 14);
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn bandwidth_sample_counts_follow_fio() {
    require_fio!();
    // Sample windows are timed: not beside other CPU-heavy tests (under
    // two busy loops and a test binary's load, fio once took 1 sample).
    let _serial = timing_alone();
    let dir = tempdir();
    let args = [
        "--name=s",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1g",
        "--time_based",
        "--runtime=2",
    ];
    let fio = fio_json(dir.path(), &args);
    let ours = run_json(dir.path(), &args);
    for d in ["read", "write"] {
        for k in ["bw_samples", "iops_samples"] {
            let (a, b) = (
                fio["jobs"][0][d][k].as_i64().unwrap(),
                ours["jobs"][0][d][k].as_i64().unwrap(),
            );
            // 500 ms windows over 2 s: 3 samples (the one at the very end
            // is not taken); timing noise may shift one.
            assert!((a - b).abs() <= 1, "{d} {k}: fio {a}, iomark {b}");
            assert!((2..=4).contains(&b), "{d} {k}: {b}");
        }
    }
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn disk_stats_name_the_devices_fio_names() {
    require_fio!();
    let dir = tempdir();
    let args = [
        "--name=d",
        "--ioengine=psync",
        "--filename=disk.dat",
        "--rw=randwrite",
        "--size=2m",
        "--direct=1",
    ];
    let names = |j: &Value| -> Vec<String> {
        j["disk_util"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| d["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let fio = fio_json(dir.path(), &args);
    // iomark writes over the file fio created.
    let ours = run_json(
        dir.path(),
        &[&args[..], &["--allow_destroy_data=1"]].concat(),
    );
    assert_eq!(names(&ours), names(&fio));
    if let Some(d) = ours["disk_util"].as_array().and_then(|a| a.first()) {
        // 512 direct 4 KiB writes went to this disk.
        assert!(d["write_ios"].as_u64().unwrap() >= 512, "{d}");
        let util = d["util"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&util), "{d}");
    } else {
        crate::common::missing(
            "the scratch directory is not on a block device: no disk stats to check",
        );
    }
}

// A loop device.
#[cfg(target_os = "linux")]
#[test]
fn disk_stats_of_a_block_device_target() {
    let dir = tempdir();
    let Some(dev) = crate::loopdev::LoopDev::new(dir.path(), 8 << 20) else {
        return;
    };
    let target = format!("--filename={}", dev.as_str());
    let j = run_json(
        dir.path(),
        &[
            "--name=bd",
            "--ioengine=psync",
            &target,
            "--rw=read",
            "--bs=4k",
            "--size=4m",
            "--direct=1",
        ],
    );
    let name = dev.path.file_name().unwrap().to_str().unwrap();
    let disks = j["disk_util"].as_array().expect("disk_util");
    let d = disks
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {disks:?}"));
    assert!(d["read_ios"].as_u64().unwrap() >= 1024, "{d}");
    assert_eq!(d["write_ios"], 0, "{d}");
}
