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

/// What clears a progress line drawn in place before other text.
const CLEAR: &str = "\r\x1b[K";

/// Every place `needle` occurs in `text` starts a line: at the start, or
/// after a newline, or after the sequence that clears a progress line.
fn starts_lines(text: &str, needle: &str) -> Result<usize, String> {
    let mut n = 0;
    for (i, _) in text.match_indices(needle) {
        let before = &text[..i];
        if !(before.is_empty() || before.ends_with('\n') || before.ends_with(CLEAR)) {
            let from = before.len().saturating_sub(120);
            return Err(format!(
                "{needle:?} lands on a line: {:?}",
                &text[from..i + 40]
            ));
        }
        n += 1;
    }
    Ok(n)
}

/// A job in two stonewalled phases: the second lays out its file while
/// the first one's progress line stands drawn.
const TWO_PHASES: &[&str] = &[
    "--eta=always",
    "--eta-interval=200ms",
    "--name=a",
    "--rw=randread",
    "--size=4m",
    "--runtime=1200ms",
    "--time_based",
    "--name=b",
    "--stonewall",
    "--rw=randread",
    "--size=4m",
    "--runtime=600ms",
    "--time_based",
];

#[test]
fn a_notice_clears_the_plain_line_which_is_otherwise_fios() {
    // Text report: line and notices on stdout; JSON: both on stderr.
    for json in [false, true] {
        let dir = tempdir();
        let mut args = TWO_PHASES.to_vec();
        if json {
            args.push("--output-format=json");
        }
        let o = run_in(dir.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = if json { stderr(&o) } else { stdout(&o) };
        // The second job's layout comes while the first one's line is
        // drawn, yet starts a line of its own.
        assert_eq!(
            starts_lines(&text, "b: Laying out IO file"),
            Ok(1),
            "json={json}: {text:?}"
        );
        assert!(
            text.contains(&format!("{CLEAR}b: Laying out")),
            "the notice came while a line was drawn: {text:?}"
        );
        // fio's line, byte for byte: `\r`, the line, spaces over a longer
        // line it replaces; the clearing sequence only before the notice;
        // blanked with spaces at the end.
        let mut lines = 0;
        for chunk in text.split('\r').filter(|c| c.starts_with("Jobs: ")) {
            let line = chunk.trim_end_matches('\n').trim_end_matches(' ');
            assert!(check_line(line), "json={json}: {chunk:?}");
            assert!(!chunk.contains('\x1b'), "{chunk:?}");
            lines += 1;
        }
        assert!(lines >= 3, "json={json}: {text:?}");
        assert_eq!(text.matches('\x1b').count(), 1, "json={json}: {text:?}");
        let end = text.rfind("Jobs: ").unwrap();
        let tail = &text[end..];
        let blank = tail.split('\r').nth(1).unwrap();
        assert!(
            !blank.is_empty() && blank.bytes().all(|b| b == b' '),
            "{tail:?}"
        );
        if json {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
            assert_eq!(v["jobs"].as_array().unwrap().len(), 2);
        }
    }
}

/// One pass's progress line of quick/suite/sweep, taken apart:
/// `[k/n NAME pass p/m|warm-up][P%][RATES][eta T, all T]`.
#[derive(Debug)]
struct PassLine {
    test_no: u32,
    tests: u32,
    name: String,
    /// None: the warm-up.
    pass: Option<(u32, u32)>,
    eta_s: u64,
    all_s: u64,
}

/// Seconds of `5s`, `1m40s`, `1h02m`.
fn short_secs(t: &str) -> Option<u64> {
    let (mut total, mut num) = (0u64, String::new());
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().ok()?;
        num.clear();
        total += n * match c {
            'd' => 86400,
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
    }
    num.is_empty().then_some(total)
}

fn pass_line(l: &str) -> Option<PassLine> {
    let parts: Vec<&str> = l
        .strip_prefix('[')?
        .strip_suffix(']')?
        .split("][")
        .collect();
    let [ctx, pct, rates, eta] = parts[..] else {
        return None;
    };
    let (k, rest) = ctx.split_once(' ')?;
    let (test_no, tests) = k.split_once('/')?;
    let (name, pass) = if let Some(name) = rest.strip_suffix(" warm-up") {
        (name, None)
    } else {
        let (name, p) = rest.rsplit_once(" pass ")?;
        let (p, m) = p.split_once('/')?;
        (name, Some((p.parse().ok()?, m.parse().ok()?)))
    };
    let pct: u32 = pct.strip_suffix('%')?.parse().ok()?;
    let rates_ok = rates.split(", ").all(|r| {
        (r.starts_with("r=") || r.starts_with("w=")) && r.contains("B/s ") && r.ends_with(" IOPS")
    });
    let (e, a) = eta.strip_prefix("eta ")?.split_once(", all ")?;
    let line = PassLine {
        test_no: test_no.parse().ok()?,
        tests: tests.parse().ok()?,
        name: name.to_string(),
        pass,
        eta_s: short_secs(e)?,
        all_s: short_secs(a)?,
    };
    (pct <= 100 && rates_ok && line.all_s >= line.eta_s).then_some(line)
}

#[test]
fn the_pass_line_parser_rejects_other_text() {
    let l =
        pass_line("[2/8 rnd4k-q32t1-read pass 1/3][45%][r=186MiB/s 47.7k IOPS][eta 1s, all 1m40s]")
            .unwrap();
    assert_eq!(
        (l.test_no, l.tests, l.pass, l.eta_s, l.all_s),
        (2, 8, Some((1, 3)), 1, 100)
    );
    assert_eq!(l.name, "rnd4k-q32t1-read");
    assert!(pass_line("[2/8 x warm-up][5%][w=1.0MiB/s 256 IOPS][eta 0s, all 3s]").is_some());
    assert!(pass_line("[2/8 x warm-up][5%][w=1.0MiB/s][eta 0s, all 3s]").is_none());
    assert!(pass_line("[2/8 x pass 1][5%][w=1.0MiB/s 256 IOPS][eta 0s, all 3s]").is_none());
    assert!(pass_line("[2/8 x warm-up][5%][w=1.0MiB/s 256 IOPS][eta 5s, all 3s]").is_none());
    assert!(
        pass_line("Jobs: 1 (f=1): [r(1)][45.0%][r=10.5MiB/s][r=2688 IOPS][eta 00m:01s]").is_none()
    );
}

#[test]
fn quick_shows_test_pass_warm_up_and_the_commands_eta_on_one_line() {
    let dir = tempdir();
    // 8 tests × (0.5 s warm-up + 2 × 0.7 s): 15.2 s of I/O.
    let o = run_in(
        dir.path(),
        &[
            "quick",
            "--size=8m",
            "--runtime=700ms",
            "--passes=2",
            "--warmup=500ms",
            "--eta=always",
            "--no-report",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // The table stays on stdout, untouched by the line.
    let out = stdout(&o);
    assert!(!out.contains('\r') && !out.contains('\x1b'), "{out:?}");
    for l in crate::front_quick::LABELS {
        assert!(out.lines().any(|r| r.starts_with(l)), "{l}: {out}");
    }
    // Every drawn line is `\r`, the line, erase to the end of the line:
    // nothing follows it on its line but the sequence that clears it.
    let mut lines = Vec::new();
    for chunk in err.split('\r').filter(|c| c.starts_with('[')) {
        let line = chunk
            .strip_suffix("\x1b[K")
            .unwrap_or_else(|| panic!("text after a progress line: {chunk:?}"));
        assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
        lines.push(pass_line(line).unwrap_or_else(|| panic!("bad line: {line:?}")));
    }
    // Notices and warnings start lines of their own; the line is cleared
    // at the end.
    starts_lines(&err, "iomark").unwrap();
    let chunks: Vec<&str> = err.split('\r').collect();
    let last = chunks.iter().rposition(|c| c.starts_with('[')).unwrap();
    assert!(
        chunks
            .get(last + 1)
            .is_some_and(|c| c.starts_with("\x1b[K")),
        "the last line is not cleared: {err:?}"
    );
    let names = [
        "seq1m-q8t1-read",
        "seq1m-q1t1-read",
        "rnd4k-q32t1-read",
        "rnd4k-q1t1-read",
        "seq1m-q8t1-write",
        "seq1m-q1t1-write",
        "rnd4k-q32t1-write",
        "rnd4k-q1t1-write",
    ];
    for (k, name) in names.iter().enumerate() {
        let of: Vec<&PassLine> = lines.iter().filter(|l| l.name == *name).collect();
        assert!(!of.is_empty(), "no line for {name}: {lines:?}");
        assert!(
            of.iter().all(|l| l.test_no == k as u32 + 1 && l.tests == 8),
            "{of:?}"
        );
        assert!(of.iter().all(|l| l.eta_s <= 1), "{of:?}");
    }
    // Warm-up marked; measured passes numbered of 2, in order.
    assert!(lines.iter().any(|l| l.pass.is_none()), "{lines:?}");
    for p in [1, 2] {
        assert!(lines.iter().any(|l| l.pass == Some((p, 2))), "{lines:?}");
    }
    let order: Vec<(u32, u32)> = lines
        .iter()
        .map(|l| (l.test_no, l.pass.map_or(0, |p| p.0)))
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    // The command's time left: at first all the planned I/O (a quarter
    // of a second done), then less, down to the last pass alone.
    let all: Vec<u64> = lines.iter().map(|l| l.all_s).collect();
    assert!(all[0] >= 14 && all[0] <= 120, "{all:?}");
    assert!(*all.last().unwrap() <= 2, "{all:?}");
    // A pass that runs late on a loaded machine (or under Wine) moves
    // the estimate up a little (15, 14, 16 seen): a quarter of the first
    // estimate and 2 s more are allowed, not a second command's worth.
    let bound = all[0] + all[0] / 4 + 2;
    assert!(all.iter().all(|a| *a <= bound), "{all:?}");
    let half = all.len() / 2;
    assert!(all[half..].iter().all(|a| *a < all[0]), "{all:?}");
}

#[test]
fn with_json_on_stdout_the_table_and_the_line_share_stderr_cleanly() {
    let dir = tempdir();
    let o = run_in(
        dir.path(),
        &[
            "sweep",
            "--iodepth=1,2",
            "--size=4m",
            "--runtime=600ms",
            "--eta=always",
            "--json",
            "-",
            "--html",
            "s.html",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is only JSON");
    assert_eq!(v["kind"], "sweep");
    let lines: Vec<PassLine> = err
        .split('\r')
        .filter(|c| c.starts_with('['))
        .map(|c| pass_line(c.strip_suffix("\x1b[K").expect("erased")).expect("a pass line"))
        .collect();
    assert!(
        lines.iter().any(|l| l.test_no == 1 && l.tests == 2),
        "{err:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.test_no == 2 && l.pass == Some((1, 1))),
        "{err:?}"
    );
    // The table rows printed between the tests start lines of their own.
    let rows = starts_lines(&err, "randread 4k QD").unwrap();
    assert!(rows >= 2, "{err:?}");
    starts_lines(&err, "iomark").unwrap();
}
