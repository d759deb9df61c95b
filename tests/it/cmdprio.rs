//! Per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`) against fio 3.33, on regular files and on a loop
//! device, with libaio and io_uring: the JSON `prios` arrays (keys,
//! classes, levels, counts), the text report's priority lines, the
//! priority column of the logs, merged reports, and the kernel refusing
//! a real-time priority to a process without the privilege for it.
//!
//! Most jobs here use the real-time class (cmdprio's default), which
//! needs CAP_SYS_NICE or CAP_SYS_ADMIN.
//!
//! iomark draws which I/Os get a priority as fio does (same generator,
//! same seeds), so jobs whose I/O sequence is the same in both give the
//! very same counts per priority; jobs that mix directions or block
//! sizes with iomark's own generator give shares within a few percent.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::*;
use crate::loopdev::LoopDev;
use crate::require_fio;

/// (class, level, count) of each entry of a direction's `prios`.
fn prios(job: &Value, dir: &str) -> Vec<(u64, u64, u64)> {
    let Some(a) = job[dir]["prios"].as_array() else {
        return Vec::new();
    };
    a.iter()
        .map(|p| {
            let lat = p.get("clat_ns").or_else(|| p.get("lat_ns")).unwrap();
            (
                p["prioclass"].as_u64().unwrap(),
                p["prio"].as_u64().unwrap(),
                lat["N"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The keys of each `prios` entry and of its latency object.
fn prio_keys(job: &Value, dir: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    job[dir]["prios"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let lat = p.get("clat_ns").or_else(|| p.get("lat_ns")).unwrap();
                    (keys(p), keys(lat))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn total_ios(job: &Value, dir: &str) -> u64 {
    job[dir]["total_ios"].as_u64().unwrap()
}

/// Runs the same job (`args` after `--name=j`) under fio and iomark, in
/// their own directories; `target` replaces `TARGET` in the arguments.
/// iomark also gets `ours` (options fio does not know).
fn both(args: &str, target: Option<&str>, ours: &[&str]) -> (Value, Value) {
    let (d1, d2) = (tempdir(), tempdir());
    let mut a: Vec<String> = vec!["--name=j".into()];
    a.extend(
        args.split_whitespace()
            .map(|s| s.replace("TARGET", target.unwrap_or("f"))),
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let fio = fio_json(d1.path(), &a);
    let mut b = a.clone();
    b.extend_from_slice(ours);
    let iom = run_json(d2.path(), &b);
    (fio["jobs"][0].clone(), iom["jobs"][0].clone())
}

/// The engines to compare: libaio, and io_uring when the kernel has it.
fn engines() -> Vec<&'static str> {
    let mut e = vec!["libaio"];
    if io_uring_available() {
        e.push("io_uring");
    }
    e
}

#[test]
fn prios_are_fios_draw_for_draw_on_files_and_a_loop_device() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    let dir = tempdir();
    let dev = LoopDev::new(dir.path(), 16 << 20);
    let mut targets = vec![None];
    if let Some(d) = &dev {
        targets.push(Some(d.as_str()));
    }
    // fio takes an engine's options after the engine.
    let job = "--filename=TARGET --size=4m --bs=4k --rw=randread --direct=1 --iodepth=8";
    for engine in engines() {
        for t in &targets {
            let args = format!(
                "{job} --ioengine={engine} --cmdprio_percentage=30 --cmdprio_class=1 --cmdprio=2"
            );
            let (f, o) = both(&args, *t, &[]);
            let what = format!("{engine} on {}", t.unwrap_or("a file"));
            let (pf, po) = (prios(&f, "read"), prios(&o, "read"));
            assert_eq!(po, pf, "{what}: prios (class, level, N)");
            assert_eq!(po.len(), 2, "{what}: {po:?}");
            assert_eq!((po[0].0, po[0].1, po[1].0, po[1].1), (0, 0, 1, 2), "{what}");
            assert_eq!(prio_keys(&o, "read"), prio_keys(&f, "read"), "{what}: keys");
            let n: u64 = po.iter().map(|p| p.2).sum();
            assert_eq!(
                n,
                total_ios(&o, "read"),
                "{what}: every I/O in one priority"
            );
            let share = po[1].2 as f64 * 100.0 / n as f64;
            assert!((share - 30.0).abs() < 4.0, "{what}: {share}% prioritized");
            assert!(o["write"].get("prios").is_none(), "{what}: no writes");
        }
    }
}

/// Per-direction values over a random mix: the same priorities, each
/// direction's share within a few percent of the one asked for (the
/// direction sequence is iomark's own), and the totals exact.
#[test]
fn per_direction_shares_and_classes_match_fio() {
    require_fio!();
    for engine in engines() {
        let args = format!(
            "--filename=TARGET --size=4m --bs=4k --rw=randrw --direct=1 --iodepth=8 --ioengine={engine} \
             --prio=3 --cmdprio_percentage=25,60 --cmdprio_class=2,3 --cmdprio=1,7"
        );
        let (f, o) = both(&args, None, &[]);
        for (dir, pct, class, level) in [("read", 25.0, 2, 1), ("write", 60.0, 3, 7)] {
            let (pf, po) = (prios(&f, dir), prios(&o, dir));
            let names = |p: &[(u64, u64, u64)]| p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
            assert_eq!(names(&po), names(&pf), "{engine} {dir}");
            assert_eq!(names(&po), [(2, 3), (class, level)], "{engine} {dir}");
            assert_eq!(prio_keys(&o, dir), prio_keys(&f, dir), "{engine} {dir}");
            let n: u64 = po.iter().map(|p| p.2).sum();
            assert_eq!(n, total_ios(&o, dir), "{engine} {dir}");
            for (tool, p) in [("fio", &pf), ("iomark", &po)] {
                let share = p[1].2 as f64 * 100.0 / p.iter().map(|x| x.2).sum::<u64>() as f64;
                assert!((share - pct).abs() < 6.0, "{engine} {dir} {tool}: {share}%");
            }
        }
        let all = |j: &Value| total_ios(j, "read") + total_ios(j, "write");
        assert_eq!(all(&o), all(&f), "{engine}: I/Os");
    }
}

#[test]
fn bssplit_priorities_match_fio() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    let args = "--filename=TARGET --size=32m --bssplit=4k/50:16k/50 --rw=randwrite --norandommap --direct=1 \
                --iodepth=8 --ioengine=libaio --cmdprio_class=2 --cmdprio=5 \
                --cmdprio_bssplit=4k/30/1/0:4k/20:16k/100/3/0";
    let (f, o) = both(args, None, &[]);
    let (pf, po) = (prios(&f, "write"), prios(&o, "write"));
    let names = |p: &[(u64, u64, u64)]| p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
    assert_eq!(names(&po), names(&pf));
    assert_eq!(names(&po), [(0, 0), (1, 0), (2, 5), (3, 0)]);
    assert_eq!(prio_keys(&o, "write"), prio_keys(&f, "write"));
    let n: u64 = po.iter().map(|p| p.2).sum();
    assert_eq!(n, total_ios(&o, "write"));
    // Every 16k write is idle class (3/0), the 4k ones the others: the
    // bytes written say so exactly (without a random map, no write is
    // cut to fit a hole, so every one is 4k or 16k). Of the 4k writes, 30% get 1/0 and
    // 20% 2/5 (iomark's own block size draws: within a few percent).
    for (tool, j, p) in [("fio", &f, &pf), ("iomark", &o, &po)] {
        let (n16, n4) = (p[3].2, p[0].2 + p[1].2 + p[2].2);
        let bytes = j["write"]["io_bytes"].as_u64().unwrap();
        assert_eq!(n4 * 4096 + n16 * 16384, bytes, "{tool}: {p:?}");
        for (i, pct) in [(1, 30.0), (2, 20.0)] {
            let share = p[i].2 as f64 * 100.0 / n4 as f64;
            assert!((share - pct).abs() < 5.0, "{tool}: {share}% at {:?}", p[i]);
        }
    }
}

/// A group of clones: the counts per priority add up over the clones
/// (and are fio's, whose draws are the same), and so do they in the
/// mixed direction of `unified_rw_reporting`.
#[test]
fn merged_reports_keep_exact_counts_per_priority() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    let base = "--filename=TARGET --size=2m --bs=4k --rw=randread --direct=1 --iodepth=4 \
                --ioengine=libaio --cmdprio_percentage=25 --numjobs=2";
    let (f, o) = both(&format!("{base} --group_reporting"), None, &[]);
    assert_eq!(prios(&o, "read"), prios(&f, "read"));
    let d = tempdir();
    let alone = format!("--name=j {}", base.replace("TARGET", "f"));
    let clones = run_json(d.path(), &alone.split_whitespace().collect::<Vec<_>>());
    let jobs = clones["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let sum: Vec<u64> = (0..2)
        .map(|i| jobs.iter().map(|j| prios(j, "read")[i].2).sum())
        .collect();
    let group: Vec<u64> = prios(&o, "read").iter().map(|p| p.2).collect();
    assert_eq!(group, sum);

    let mix = "--filename=TARGET --size=2m --bs=4k --rw=randrw --direct=1 --iodepth=4 \
               --ioengine=io_uring --cmdprio_percentage=40";
    if !io_uring_available() {
        return;
    }
    let d = tempdir();
    let m = format!(
        "--name=j {} --unified_rw_reporting=both",
        mix.replace("TARGET", "f")
    );
    let both = run_json(d.path(), &m.split_whitespace().collect::<Vec<_>>())["jobs"][0].clone();
    let (r, w, x) = (
        prios(&both, "read"),
        prios(&both, "write"),
        prios(&both, "mixed"),
    );
    assert_eq!(x.len(), 2);
    for i in 0..2 {
        assert_eq!(
            x[i],
            (r[i].0, r[i].1, r[i].2 + w[i].2),
            "mixed = read + write"
        );
    }
    let (f, o) = both_mixed(mix);
    assert_eq!(prio_keys(&o, "mixed"), prio_keys(&f, "mixed"));
    let n: u64 = prios(&o, "mixed").iter().map(|p| p.2).sum();
    assert_eq!(n, total_ios(&o, "mixed"));
}

fn both_mixed(job: &str) -> (Value, Value) {
    both(&format!("{job} --unified_rw_reporting=mixed"), None, &[])
}

/// Two jobs of a group at different `prio`/`prioclass` (and no
/// per-I/O priorities): fio reports the group's latencies per priority.
#[test]
fn a_group_of_jobs_at_different_priorities_reports_each() {
    require_fio!();
    let job = "[global]\nfilename=f\nsize=1m\nbs=4k\nrw=randread\nioengine=psync\n\
               group_reporting\n[a]\nprio=3\n[b]\nprioclass=3\n";
    let (d1, d2) = (tempdir(), tempdir());
    for d in [&d1, &d2] {
        std::fs::write(d.path().join("g.fio"), job).unwrap();
    }
    let f = fio_json(d1.path(), &["g.fio"]);
    let o = run_json(d2.path(), &["g.fio"]);
    let (f, o) = (&f["jobs"][0], &o["jobs"][0]);
    assert_eq!(prios(o, "read"), [(2, 3, 256), (3, 0, 256)]);
    assert_eq!(prios(o, "read"), prios(f, "read"));
    assert_eq!(prio_keys(o, "read"), prio_keys(f, "read"));
}

/// The lines the text report names priorities on: the summaries and the
/// percentile headers with their shares.
fn prio_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" prio "))
        .map(|l| {
            let l = l.trim();
            // Up to the unit, which depends on the latencies measured.
            match l.find(" percentiles") {
                Some(i) => l[..i].to_string(),
                None => l[..l.find(" (").unwrap_or(l.len())].to_string(),
            }
        })
        .collect()
}

#[test]
fn text_report_names_priorities_as_fio_does() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    let (d1, d2) = (tempdir(), tempdir());
    let args = [
        "--name=j",
        "--filename=f",
        "--size=2m",
        "--bs=4k",
        "--rw=randread",
        "--direct=1",
        "--iodepth=4",
        "--ioengine=libaio",
        "--prioclass=2",
        "--prio=4",
        "--cmdprio_percentage=35",
    ];
    let f = fio_output(Command::new("fio").args(args).current_dir(d1.path()));
    let o = run_in(d2.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (lf, lo) = (prio_lines(&stdout(&f)), prio_lines(&stdout(&o)));
    assert_eq!(lo, lf);
    // Same draws, so the same shares to the hundredth.
    assert_eq!(lo.len(), 4, "{lo:?}");
    assert_eq!(&lo[..2], ["clat prio 2/4", "clat prio 1/0"]);
    assert!(lo[2].starts_with("clat prio 2/4 (") && lo[2].ends_with("% of IOs)"));
}

/// The count of lines per priority column value in a log.
fn column_counts(path: &Path) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    for l in std::fs::read_to_string(path).unwrap().lines() {
        let col = l.rsplit(", ").next().unwrap().to_string();
        *m.entry(col).or_insert(0) += 1;
    }
    m
}

#[test]
fn logs_carry_each_ios_priority() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    for log_prio in ["1", "0"] {
        let (d1, d2) = (tempdir(), tempdir());
        let args = format!(
            "--name=j --filename=f --size=1m --bs=4k --rw=randwrite --direct=1 --iodepth=4 \
             --ioengine=libaio --prio=3 --cmdprio_percentage=40 --write_lat_log=l --log_prio={log_prio}"
        );
        let a: Vec<&str> = args.split_whitespace().collect();
        let f = fio_json(d1.path(), &a);
        let o = run_json(d2.path(), &a);
        let (cf, co) = (
            column_counts(&d1.path().join("l_clat.1.log")),
            column_counts(&d2.path().join("l_clat.1.log")),
        );
        assert_eq!(co, cf, "log_prio={log_prio}");
        let p = prios(&o["jobs"][0], "write");
        assert_eq!(p, prios(&f["jobs"][0], "write"));
        let want: Vec<(String, u64)> = if log_prio == "1" {
            vec![("0x2000".into(), p[1].2), ("0x4003".into(), p[0].2)]
        } else {
            vec![("0".into(), p[0].2), ("1".into(), p[1].2)]
        };
        assert_eq!(
            co.into_iter().collect::<Vec<_>>(),
            want,
            "log_prio={log_prio}"
        );
    }
}

/// Runs `cmd` without CAP_SYS_NICE and CAP_SYS_ADMIN (dropped from the
/// bounding set, so not regained at exec).
fn unprivileged(tool: &str, dir: &Path, args: &[&str]) -> Option<Output> {
    let o = Command::new("setpriv")
        .args(["--bounding-set=-sys_nice,-sys_admin", tool])
        .args(args)
        .current_dir(dir)
        .output_bounded();
    match o {
        Ok(o) => Some(o),
        Err(e) => {
            missing(&format!(
                "cannot run setpriv (apt-get install util-linux): {e}"
            ));
            None
        }
    }
}

fn json_of(o: &Output) -> Value {
    let t = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&t[t.find('{').unwrap_or(0)..]).expect("a JSON report")
}

/// The real-time class needs CAP_SYS_NICE or CAP_SYS_ADMIN: without
/// them the kernel refuses those I/Os (and `prioclass=1`), which fails
/// the job with EPERM in both tools; iomark says why.
#[test]
fn a_real_time_priority_needs_the_privilege_for_it() {
    require_fio!();
    if !realtime_io_priority_allowed() {
        return;
    }
    if !is_root() {
        missing("dropping capabilities is tested as root");
        return;
    }
    let iom = env!("CARGO_BIN_EXE_iomark");
    let mut cases: Vec<Vec<&str>> = engines()
        .into_iter()
        .map(|e| match e {
            "libaio" => vec!["--ioengine=libaio", "--direct=1", "--cmdprio_percentage=50"],
            _ => vec![
                "--ioengine=io_uring",
                "--direct=1",
                "--cmdprio_percentage=50",
            ],
        })
        .collect();
    cases.push(vec!["--ioengine=psync", "--prioclass=1"]);
    for extra in cases {
        let mut args = vec![
            "--name=j",
            "--filename=f",
            "--size=256k",
            "--bs=4k",
            "--rw=randread",
            "--output-format=json",
        ];
        args.extend_from_slice(&extra);
        let (d1, d2) = (tempdir(), tempdir());
        let Some(f) = unprivileged("fio", d1.path(), &args) else {
            return;
        };
        let Some(o) = unprivileged(iom, d2.path(), &args) else {
            return;
        };
        assert_eq!(
            json_of(&f)["jobs"][0]["error"],
            libc::EPERM,
            "fio {extra:?}"
        );
        assert_eq!(
            json_of(&o)["jobs"][0]["error"],
            libc::EPERM,
            "iomark {extra:?}"
        );
        assert!(!o.status.success());
        let e = stderr(&o);
        assert!(
            e.contains("needs CAP_SYS_NICE or CAP_SYS_ADMIN"),
            "{extra:?}: {e}"
        );
    }
    // With the privilege, the same job runs.
    let d = tempdir();
    let ok = run_json(
        d.path(),
        &[
            "--name=j",
            "--filename=f",
            "--size=256k",
            "--rw=randread",
            "--ioengine=psync",
            "--prioclass=1",
        ],
    );
    assert_eq!(ok["jobs"][0]["error"], 0);
}

#[test]
fn bad_cmdprio_options_are_refused_with_one_line() {
    for (args, says) in [
        (
            vec![
                "--ioengine=libaio",
                "--cmdprio_percentage=10",
                "--cmdprio_bssplit=4k/10",
            ],
            "cannot be used together",
        ),
        (
            vec!["--ioengine=psync", "--cmdprio_percentage=10"],
            "io_uring,libaio",
        ),
        // Linux refuses a priority on passthrough commands
        (
            vec!["--ioengine=io_uring_cmd", "--cmdprio_percentage=10"],
            "NVMe passthrough commands that carry an I/O priority (EINVAL)",
        ),
        (
            vec!["--ioengine=libaio", "--cmdprio_bssplit=4k/60:4k/50"],
            "more than 100%",
        ),
        (
            vec!["--ioengine=libaio", "--cmdprio_class=0"],
            "cmdprio_class",
        ),
        (
            vec!["--ioengine=io_uring", "--cmdprio_percentage=101"],
            "cmdprio_percentage",
        ),
    ] {
        let d = tempdir();
        let mut a = vec!["--name=j", "--filename=f", "--size=64k", "--rw=read"];
        a.extend_from_slice(&args);
        let o = run_in(d.path(), &a);
        let e = stderr(&o);
        assert!(!o.status.success(), "{args:?} was accepted");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(!d.path().join("f").exists(), "{args:?}: a file was written");
    }
}
