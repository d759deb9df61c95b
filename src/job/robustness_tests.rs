//! Hostile input never panics or hangs the job language: every option's
//! parser gets odd values, and the job file reader gets random text built
//! from job-file fragments. (A stand-in for a fuzz target that runs in
//! every `cargo test`; a panic fails the test.)

use std::path::Path;

use super::jobfile::parse_jobfile_text;
use super::options::{self, apply};
use super::spec::JobSpec;
use super::{build_jobs, JobSources};

const ODD_VALUES: &[&str] = &[
    "",
    " ",
    "-",
    "--",
    "nan",
    "inf",
    "-inf",
    "NaN%",
    "1e309",
    "1e-309",
    "99999999999999999999999999",
    "-9223372036854775808",
    "18446744073709551616",
    "0x",
    "0xffffffffffffffffffff",
    "０",
    "４k",
    "4k\u{0}",
    "1:2:3:4:5",
    ",,,",
    ",,",
    "/",
    "//",
    "%",
    "%%",
    "1-",
    "-1",
    ":",
    "::",
    "1/",
    "/1",
    "4k/",
    "4k/nan",
    "4k/-5:8k/105",
    "zipf:nan",
    "zipf:inf",
    "zipf:-1",
    "pareto:nan",
    "normal:inf",
    "zoned:nan/nan",
    "zoned:50/:50/",
    "zoned_abs:100/",
    "random:0",
    "sequential:-1",
    "iops:nan",
    "bw:inf%",
    "write:nan",
    "wait_before:1",
    "()",
    "(",
    ")",
    "(1",
    "1)",
    "(1/0)",
    "(0/0)",
    "(1e308*1e308)",
    "(2^1024)",
    "(-1)",
    "(0x)",
    "(-(-(-1)))",
    "(1%0)",
    "0-0",
    "4096-0",
    "0-4095",
    "4095-0",
    "1k,2k,3k,4k",
    "read:",
    "read:0",
    "randread:nan",
    "$",
    "${",
    "${}",
    "$ncpus$ncpus",
];

fn nested(n: usize) -> Vec<String> {
    vec![
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("({}1)", "-".repeat(n)),
        format!("({}2)", "2^".repeat(n)),
        "9".repeat(n),
        "k".repeat(n),
        format!("{}:", "1:".repeat(n)),
    ]
}

#[test]
fn option_parsers_survive_odd_values() {
    let long = nested(100_000);
    let values: Vec<&str> = ODD_VALUES
        .iter()
        .copied()
        .chain(long.iter().map(String::as_str))
        .collect();
    let mut non_finite = Vec::new();
    for d in options::all() {
        for v in &values {
            let mut spec = JobSpec::default();
            if apply(&mut spec, d, Some(v)).is_ok() {
                let dbg = without_strings(&format!("{spec:?}"));
                if dbg.contains("NaN") || dbg.contains("inf") {
                    non_finite.push(format!("{}={v:?}", d.name));
                }
            }
        }
    }
    assert!(
        non_finite.is_empty(),
        "accepted as non-finite numbers: {non_finite:?}"
    );
}

/// Debug output with the contents of string literals removed, so only
/// numbers (where a non-finite f64 shows as NaN or inf) remain.
fn without_strings(dbg: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    for c in dbg.chars() {
        if in_str {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => escaped = false,
            }
        } else if c == '"' {
            in_str = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

#[test]
fn job_files_of_random_fragments_never_panic() {
    let fragments: &[&str] = &[
        "[global]",
        "[job]",
        "[",
        "]",
        "[]",
        "[a] ; c",
        "bs",
        "bs=",
        "=",
        "rw",
        "rw=randrw",
        "size=1m",
        "size=(1+2",
        "numjobs=",
        "include",
        "include x.fio",
        ";",
        "#",
        " ",
        "\t",
        "${HOME}",
        "$ncpus",
        "$mb_memory*2",
        "8*$pagesize",
        "time_based",
        "ioengine=null",
        "ioengine=net",
        "verify=md5",
        "stonewall",
        "kb_base=1000",
        "4k",
        "-",
        ":",
        ",",
        "/",
        "%",
        "\u{feff}",
        "é",
        "\r",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let mut text = String::new();
        let lines = rng.next() % 12;
        for _ in 0..lines {
            for _ in 0..(1 + rng.next() % 3) {
                text.push_str(rng.pick(fragments));
            }
            text.push('\n');
        }
        if let Ok(sections) = parse_jobfile_text(&text, Path::new("fuzz.fio")) {
            let src = JobSources {
                files: vec![("fuzz.fio".into(), sections)],
                ..JobSources::default()
            };
            let _ = build_jobs(&src);
        }
    }
}

#[test]
fn suggestions_stay_cheap_for_huge_names() {
    let name = "x".repeat(100_000);
    let start = std::time::Instant::now();
    let _ = options::suggest(&name);
    // Generous bound: this guards against quadratic work, not speed.
    assert!(start.elapsed().as_secs() < 5);
}

fn build(text: &str) -> Result<usize, String> {
    let sections = parse_jobfile_text(text, Path::new("t.fio")).map_err(|e| e.to_string())?;
    let src = JobSources {
        files: vec![("t.fio".into(), sections)],
        ..JobSources::default()
    };
    build_jobs(&src)
        .map(|l| l.jobs.len())
        .map_err(|e| e.to_string())
}

#[test]
fn jobs_are_counted_with_their_clones() {
    let sections = |n: usize| "[j]\nnumjobs=1\n".repeat(n);
    assert_eq!(build(&sections(4096)), Ok(4096));
    assert_eq!(
        build(&sections(4097)),
        Err("t.fio:8193: job 'j' makes 4097 jobs (numjobs clones counted); iomark runs at most 4096, as fio".into())
    );
    assert_eq!(build("[a]\nnumjobs=4096\n"), Ok(1));
    assert!(build("[a]\nnumjobs=4096\n[b]\n")
        .unwrap_err()
        .contains("makes 4097 jobs"));
}

#[test]
fn option_values_copied_into_clones_are_bounded() {
    let long = "x".repeat(8000);
    // 8 kB of values in 4096 clones: 32 MB, taken.
    let ok = format!("[global]\nfilename={long}\n[a]\nnumjobs=4096\n");
    assert_eq!(build(&ok), Ok(1));
    // Three times that is more than 64 MiB.
    let big = format!(
        "[global]\nfilename={long}\ndescription={long}\ndirectory={long}\n[a]\nnumjobs=4096\n"
    );
    assert_eq!(
        build(&big),
        Err("t.fio:5: job 'a' brings the option values the jobs hold to more than 64 MiB (every clone keeps its own copy)".into())
    );
    // An option set many times counts once.
    let repeated = format!(
        "[global]\n{}[a]\nnumjobs=4096\n",
        format!("filename={long}\n").repeat(50)
    );
    assert_eq!(build(&repeated), Ok(1));
}
