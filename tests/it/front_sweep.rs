//! `iomark sweep`: points, knee, charts in the HTML report (laid out two
//! to a row, one on a phone), SVG files only with `--svg`.

use serde_json::Value;

use crate::common::*;
use crate::html_check;

#[test]
fn a_queue_depth_sweep_reports_a_knee_and_draws_charts() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "sweep",
            "--iodepth=1,2,4",
            "--size=8m",
            "--runtime=300ms",
            "--repeat=2",
            "--json",
            "qd.json",
            "--eta=never",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    for row in [
        "randread 4k QD1 J1",
        "randread 4k QD2 J1",
        "randread 4k QD4 J1",
    ] {
        assert!(out.lines().any(|l| l.starts_with(row)), "{row}:\n{out}");
    }
    assert!(out.contains("Knee ("), "{out}");
    assert!(out.contains("randread bs=4k numjobs=1: "), "{out}");
    assert!(!dir.path().join("iomark-sweep.tmp").exists());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("qd.json")).unwrap())
            .unwrap();
    let sw = &v["sweep"];
    assert_eq!(sw["x"], "iodepth");
    assert_eq!(sw["points"].as_array().unwrap().len(), 3);
    assert_eq!(sw["points"][0]["iops"]["n"], 2);
    let knees = sw["knees"].as_array().unwrap();
    assert_eq!(knees.len(), 1);
    let k = &knees[0];
    // The knee follows from the medians: the smallest depth reaching 90 %
    // of the best, none when only the deepest does.
    let iops: Vec<(f64, f64)> = sw["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["x"].as_f64().unwrap(),
                p["iops"]["median"].as_f64().unwrap(),
            )
        })
        .collect();
    let best = iops.iter().map(|p| p.1).fold(0.0, f64::max);
    let first = iops.iter().find(|p| p.1 >= 0.9 * best).unwrap().0;
    if first == 4.0 {
        assert!(k["knee"].is_null(), "{k}");
        assert!(
            k["note"]
                .as_str()
                .unwrap()
                .starts_with("still scaling at iodepth 4"),
            "{k}"
        );
    } else {
        assert_eq!(k["knee"].as_f64(), Some(first), "{k} {iops:?}");
        assert!(
            k["note"]
                .as_str()
                .unwrap()
                .starts_with(&format!("iodepth {first}")),
            "{k}"
        );
    }
    assert!(out.contains("reaches 90% of the best median IOPS"), "{out}");
    // The charts are in the HTML report only: nothing else is written.
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["qd.html", "qd.json"], "{out}");
    assert!(!out.contains("Chart:"), "{out}");
    let html = dir.path().join("qd.html");
    let charts = html_check::check_report(&html);
    assert!(charts >= 3);
    // A grid: the three sweep charts two to a row on a wide screen, one
    // to a row on a phone.
    let sweep_tops = |p: &Value| -> Vec<(i64, i64)> {
        p["charts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["title"].as_str().unwrap_or("").contains(" vs "))
            .map(|c| (c["top"].as_i64().unwrap(), c["width"].as_i64().unwrap()))
            .collect()
    };
    if let Some(p) = html_check::probe(&html, 1200, false) {
        let t = sweep_tops(&p);
        assert_eq!(t.len(), 3, "{p}");
        assert_eq!(t[0].0, t[1].0, "two charts side by side: {t:?}");
        assert!(t[2].0 > t[0].0, "{t:?}");
        assert!(t[0].1 * 2 <= 1000, "{t:?}");
    }
    if let Some(p) = html_check::probe(&html, 390, false) {
        let t = sweep_tops(&p);
        assert!(t[0].0 < t[1].0 && t[1].0 < t[2].0, "one per row: {t:?}");
        html_check::check_narrow(&p, "qd.html");
    }
}

#[test]
fn sweep_writes_svg_files_only_when_asked() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "sweep",
            "--iodepth=1,2",
            "--size=4m",
            "--runtime=100ms",
            "--svg",
            "--json",
            "s.json",
            "--eta=never",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    for s in ["bw", "iops", "lat"] {
        let p = dir.path().join(format!("s-{s}.svg"));
        assert!(out.contains(&format!("Chart: s-{s}.svg")), "{out}");
        html_check::check_svg_file(&p);
    }
    let o = run_in(dir.path(), &["sweep", "--svg", "--no-report"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("iomark sweep: "), "{}", stderr(&o));
    assert!(sweep_help().contains("--svg"));
}

fn sweep_help() -> String {
    let dir = tempdir();
    stdout(&run_in(dir.path(), &["sweep", "--help"]))
}

#[test]
fn a_block_size_sweep_has_no_knee() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "sweep",
            "--bs=4k,64k",
            "--iodepth=1",
            "--rw=read",
            "--size=8m",
            "--runtime=200ms",
            "--no-report",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{out}", stderr(&o));
    assert!(out.contains("read 64k QD1 J1"), "{out}");
    assert!(!out.contains("Knee"), "{out}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "--no-report leaves nothing"
    );
}

#[test]
fn sweep_rejects_bad_lists() {
    let dir = tempdir();
    for a in ["--iodepth=1,x", "--bs=1000", "--rw=sideways", "--numjobs=0"] {
        let o = run_in(dir.path(), &["sweep", a]);
        assert_eq!(o.status.code(), Some(1), "{a}");
        assert!(
            stderr(&o).starts_with("iomark sweep: "),
            "{a}: {}",
            stderr(&o)
        );
    }
}
