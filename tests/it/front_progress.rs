//! The live progress line: fio's layout, on when asked, off on a pipe by
//! default, on stderr when stdout carries JSON.

use crate::common::*;

/// Checks one progress line against
/// `Jobs: N (f=F): [S(n),…][P%][r=RATE,…][r=N,… IOPS][eta MMm:SSs]`.
fn check_line(l: &str) -> bool {
    let Some(rest) = l.strip_prefix("Jobs: ") else {
        return false;
    };
    let Some((n, rest)) = rest.split_once(" (f=") else {
        return false;
    };
    let Some((f, rest)) = rest.split_once("): [") else {
        return false;
    };
    if n.parse::<u32>().is_err() || f.parse::<u32>().is_err() {
        return false;
    }
    let parts: Vec<&str> = rest.trim_end_matches(']').split("][").collect();
    if parts.len() != 5 {
        return false;
    }
    let states_ok = parts[0].split(',').all(|s| {
        let b = s.as_bytes();
        b.len() >= 4 && b[1] == b'(' && s.ends_with(')') && s[2..s.len() - 1].parse::<u32>().is_ok()
    });
    let pct_ok = parts[1]
        .strip_suffix('%')
        .and_then(|p| p.parse::<f64>().ok())
        .is_some_and(|p| (0.0..=100.0).contains(&p));
    let bw_ok = parts[2]
        .split(',')
        .all(|x| (x.starts_with("r=") || x.starts_with("w=")) && x.ends_with("B/s"));
    let iops_ok = parts[3].ends_with(" IOPS") && parts[3].starts_with("r=");
    let eta_ok = parts[4].strip_prefix("eta ").is_some_and(|e| {
        let b = e.as_bytes();
        e.len() == 7 && b[2] == b'm' && b[3] == b':' && b[6] == b's'
    });
    states_ok && pct_ok && bw_ok && iops_ok && eta_ok
}

#[test]
fn the_line_checker_rejects_other_text() {
    assert!(check_line(
        "Jobs: 1 (f=1): [r(1)][45.0%][r=10.5MiB/s][r=2688 IOPS][eta 00m:01s]"
    ));
    assert!(!check_line(
        "Jobs: 1 (f=1): [r(1)][45.0%][r=10.5MiB/s][eta 00m:01s]"
    ));
    assert!(!check_line("random text"));
}

const JOB: &[&str] = &[
    "--name=p",
    "--rw=randread",
    "--size=4m",
    "--runtime=2500ms",
    "--time_based",
    "--eta-interval=500ms",
];

#[test]
fn eta_always_prints_fio_style_lines() {
    let dir = tempdir();
    let mut args = JOB.to_vec();
    args.extend(["--eta=always", "--eta-newline"]);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out
        .split(['\r', '\n'])
        .map(str::trim_end)
        .filter(|l| l.starts_with("Jobs:"))
        .collect();
    assert!(lines.len() >= 2, "{out}");
    for l in &lines {
        assert!(check_line(l), "bad progress line: {l:?}");
    }
    assert!(lines.iter().any(|l| l.contains("[r(1)]")), "{lines:?}");
    // The report follows the progress lines.
    assert!(out.contains("Run status group 0"), "{out}");
}

#[test]
fn progress_is_off_on_a_pipe_and_with_eta_never() {
    let dir = tempdir();
    for extra in [None, Some("--eta=never")] {
        let mut args = JOB.to_vec();
        args.push("--runtime=1200ms");
        args.extend(extra);
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stdout(&o).contains("Jobs:"), "{extra:?}");
        assert!(!stderr(&o).contains("Jobs:"), "{extra:?}");
    }
}

#[test]
fn with_json_on_stdout_progress_goes_to_stderr() {
    let dir = tempdir();
    let mut args = JOB.to_vec();
    args.extend(["--eta=always", "--output-format=json"]);
    let o = run_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is only JSON");
    assert_eq!(v["jobs"][0]["jobname"], "p");
    assert!(stderr(&o).contains("Jobs: "), "{}", stderr(&o));
    // iomark's additions: the timeline runs parallel to the jobs.
    let tl = &v["iomark"]["timeline"];
    assert_eq!(tl["jobs"].as_array().unwrap().len(), 1);
    let t = tl["jobs"][0]["t_ms"].as_array().unwrap();
    assert!(t.len() >= 5, "{tl}");
    assert_eq!(
        tl["jobs"][0]["read"]["bw"].as_array().unwrap().len(),
        t.len()
    );
}
