//! Generated hostile inputs: more than 10,000 job files and command lines
//! from a seeded generator (random bytes, NUL bytes, control characters,
//! huge numbers, deep arithmetic, include chains, loops and devices, real
//! option names with odd values). Each goes through the library's
//! `--parse-only` path in process (`iomark::cli::parse_only`, what the
//! fuzz targets call), and a few hundred through the binary.
//!
//! Asserted: no panic; no hang (a generous bound per input, so a hang
//! fails instead of blocking the test); every error is one line; inputs
//! built to be invalid are all refused; and the binary agrees with the
//! library: exit 1 with exactly `iomark: <the same error>` when it
//! refuses, exit 0 when it accepts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use iomark::job::options::{self, Kind};

use crate::common::*;

/// Inputs run in process; the binary gets every `BINARY_EVERY`-th one
/// (on Windows every 160th: a process start under Wine costs a quarter
/// of a second, and CI's time is bounded).
const INPUTS: usize = 12_000;
const BINARY_EVERY: usize = if cfg!(windows) { 160 } else { 40 };
/// Far beyond any real parse: reaching it means a hang.
const HANG_LIMIT: Duration = Duration::from_secs(30);

/// xorshift64*: small, deterministic, so a failure reproduces from its
/// index.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One generated input.
#[derive(Clone, Debug)]
struct Input {
    args: Vec<OsString>,
    stdin: Vec<u8>,
    /// Built to be invalid: it must be refused.
    must_fail: bool,
}

/// Files that job files include or name: chains, loops, devices.
struct Fixtures {
    _dir: tempfile::TempDir,
    good: Vec<String>,
    bad: Vec<String>,
}

fn fixtures() -> Fixtures {
    let dir = tempdir();
    let p = |n: &str| dir.path().join(n);
    let s = |p: PathBuf| p.display().to_string();
    let w = |n: &str, t: &str| std::fs::write(p(n), t).unwrap();
    for i in 0..20 {
        w(&format!("c{i}.fio"), &format!("include c{}.fio\n", i + 1));
    }
    w("c20.fio", "bs=4k\n");
    w("self.fio", "include self.fio\n");
    w("a.fio", "include b.fio\n");
    w("b.fio", "include a.fio\n");
    w("empty.fio", "");
    w("fan.fio", &"include empty.fio\n".repeat(40));
    w("wide.fio", &"include fan.fio\n".repeat(40));
    w("section.fio", "[x]\n");
    w("good.fio", "ioengine=null\nsize=1m\n");
    w("has-nul.fio", "size=1\0m\n");
    w("job.fio", "[j]\nioengine=null\nsize=1m\n");
    std::fs::create_dir(p("adir")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let fifo = std::ffi::CString::new(p("fifo").into_os_string().into_vec()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    }
    let good = vec![s(p("good.fio")), s(p("c15.fio")), s(p("empty.fio"))];
    let mut bad: Vec<String> = [
        "c0.fio",
        "self.fio",
        "a.fio",
        "wide.fio",
        "section.fio",
        "has-nul.fio",
        "adir",
        "fifo",
        "missing.fio",
    ]
    .iter()
    // FIFOs and device files are Unix's.
    .filter(|n| cfg!(unix) || **n != "fifo")
    .map(|n| s(p(n)))
    .collect();
    if cfg!(unix) {
        bad.extend(["/dev/zero".to_string(), "/dev/null".to_string()]);
    }
    bad.push("/".to_string());
    Fixtures {
        _dir: dir,
        good,
        bad,
    }
}

const SUFFIXES: &[&str] = &[
    "", "", "", "k", "K", "m", "g", "t", "p", "e", "ki", "KiB", "mb", "b", "s", "ms", "us", "ns",
    "min", "h", "d", "%", "q", "x", "k5", "ee", " ",
];

fn digits(r: &mut Rng, n: usize) -> String {
    (0..n.max(1))
        .map(|_| (b'0' + r.below(10) as u8) as char)
        .collect()
}

fn digits_n(r: &mut Rng, min: usize, spread: usize) -> String {
    let n = min + r.below(spread);
    digits(r, n)
}

fn number(r: &mut Rng) -> String {
    let mut s = match r.below(8) {
        0 => digits_n(r, 1, 40),
        1 => format!("0x{:x}{}", r.next(), if r.chance(50) { "ffff" } else { "" }),
        2 => format!("{}.{}", digits_n(r, 1, 5), digits_n(r, 0, 25)),
        3 => {
            let n = 15 + r.below(30);
            "9".repeat(n)
        }
        4 => "18446744073709551616".to_string(),
        5 => u64::MAX.to_string(),
        _ => digits_n(r, 1, 4),
    };
    if r.chance(10) {
        s.insert(0, '-');
    }
    s + *r.pick(SUFFIXES)
}

/// A `( )` expression, sometimes far deeper than allowed.
fn expression(r: &mut Rng, depth: usize) -> String {
    if depth == 0 || r.chance(30) {
        return match r.below(4) {
            0 => format!("2^{}", r.below(300)),
            1 => number(r),
            _ => digits_n(r, 1, 6),
        };
    }
    let op = *r.pick(&["+", "-", "*", "/", "%", "^"]);
    let a = expression(r, depth - 1);
    let b = expression(r, depth - 1);
    match r.below(3) {
        0 => format!("({a}{op}{b})"),
        1 => format!("(-{a}{op}{b})"),
        _ => format!("({a}){op}({b})"),
    }
}

fn junk(r: &mut Rng, printable: bool) -> String {
    let n = r.below(24);
    let bytes: Vec<u8> = (0..n)
        .map(|_| {
            if printable {
                b' ' + r.below(95) as u8
            } else {
                r.below(256) as u8
            }
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A value for `kind`: often plausible, often hostile.
fn value(r: &mut Rng, kind: &Kind) -> String {
    match r.below(16) {
        0 => number(r),
        1 => {
            let depth = 1 + r.below(6);
            format!("({})", expression(r, depth))
        }
        2 => {
            let n = 60 + r.below(200);
            format!("{}1{}", "(".repeat(n), ")".repeat(n))
        }
        3 => format!("{}-{}", number(r), number(r)),
        4 => format!(
            "{}/{}:{}/{}",
            number(r),
            r.below(120),
            number(r),
            r.below(120)
        ),
        5 => format!("{},{},{}", number(r), number(r), number(r)),
        6 => format!("{}%", number(r)),
        7 => junk(r, true),
        8 => match kind {
            Kind::Choice(c) if !c.is_empty() => {
                let word = r.pick(c).0;
                if r.chance(30) {
                    format!("{word}:{}", number(r))
                } else {
                    word.to_string()
                }
            }
            _ => number(r),
        },
        9 => r
            .pick(&[
                "${HOME}",
                "${IOMARK_GEN_UNSET}",
                "$ncpus",
                "$mb_memory*4",
                "$pagesize*(2^200)",
                "8*$pagesize",
                "${",
                "$",
                "1-$ncpus",
            ])
            .to_string(),
        10 => r
            .pick(&[
                "0",
                "1",
                "4k",
                "1m",
                "10s",
                "500ms",
                "50",
                "randrw",
                "null",
                "libaio",
                "md5",
                "zipf:1.2",
                "4k/50:64k/50",
                "4k-16k",
                "0-1",
                "yes",
            ])
            .to_string(),
        11 => {
            let n = 1 + r.below(60);
            "9".repeat(n) + *r.pick(SUFFIXES)
        }
        12 => format!("(2^{})", 60 + r.below(100)),
        _ => digits_n(r, 1, 3),
    }
}

/// A value of the form `kind` takes, so that most jobs built from these
/// are accepted and reach the checks after parsing.
fn plausible(r: &mut Rng, kind: &Kind) -> String {
    let n = 1 + r.below(64);
    if r.chance(15) {
        // The largest values the parser takes, for the checks after it.
        let extreme = match kind {
            Kind::Size | Kind::SizeDdir => &["(2^64-1)", "16383p", "0", "0x8000000000000000"][..],
            Kind::Time(_) => &["36500d", "0", "(2^61)ns"],
            Kind::Int => &["9223372036854775807", "4294967295", "4096", "0"],
            Kind::Range => &["1-(2^64-1)", "0-0", "16383p-1"],
            _ => &["100", "0"],
        };
        return r.pick(extreme).to_string();
    }
    match kind {
        Kind::Bool | Kind::Switch => r.pick(&["0", "1"]).to_string(),
        Kind::Size => format!("{n}{}", r.pick(&["k", "m", ""])),
        Kind::SizeDdir => format!("{n}k,{}k", 1 + r.below(64)),
        Kind::Time(_) => format!("{}{}", r.below(30), r.pick(&["", "ms", "s"])),
        Kind::Range => format!("{n}k-{}k", n + r.below(64)),
        Kind::Split => format!("{n}k/{}:{}k/", r.below(100), 1 + r.below(64)),
        Kind::Percent | Kind::Float => r.below(101).to_string(),
        Kind::Choice(c) if !c.is_empty() => r.pick(c).0.to_string(),
        Kind::Int => r.below(16).to_string(),
        _ => format!("v{n}"),
    }
}

/// A job that is valid but for what the random options make of it.
fn plausible_job(r: &mut Rng, defs: &[&'static options::OptDef]) -> Vec<u8> {
    let mut out = String::new();
    for j in 0..1 + r.below(3) {
        out += &format!("[p{j}]\nioengine=null\nsize=1m\n");
        for _ in 0..r.below(5) {
            let (name, kind) = option_name(r, defs);
            out += &format!("{name}={}\n", plausible(r, kind));
        }
    }
    out.into_bytes()
}

/// A real option name, sometimes misspelt.
fn option_name(r: &mut Rng, defs: &[&'static options::OptDef]) -> (String, &'static Kind) {
    let d = *r.pick(defs);
    let mut name = if !d.aliases.is_empty() && r.chance(20) {
        r.pick(d.aliases).to_string()
    } else {
        d.name.to_string()
    };
    if r.chance(5) && !name.is_empty() {
        let i = r.below(name.len());
        if name.is_char_boundary(i) {
            name.insert(i, 'x');
        }
    }
    (name, &d.kind)
}

fn section_name(r: &mut Rng) -> String {
    match r.below(10) {
        0 => "global".into(),
        1 => junk(r, true).replace([']', '['], ""),
        2 => format!("j{}", "x".repeat(r.below(300))),
        _ => format!("job{}", r.below(5)),
    }
}

/// A job file: sections of option lines, comments, includes, junk.
fn job_text(r: &mut Rng, defs: &[&'static options::OptDef], fx: &Fixtures) -> Vec<u8> {
    if r.chance(4) {
        let n = r.below(400);
        return (0..n).map(|_| r.below(256) as u8).collect();
    }
    let mut out = String::new();
    for _ in 0..r.below(6) {
        out += &format!("[{}]\n", section_name(r));
        for _ in 0..r.below(9) {
            match r.below(20) {
                0 => out += "; a comment\n",
                1 => out += "\n",
                2 => out += &format!("include {}\n", r.pick(&fx.good)),
                3 if r.chance(30) => out += &format!("include {}\n", r.pick(&fx.bad)),
                4 => out += &format!("{}\n", junk(r, true)),
                5 => out += &format!("{}\n", option_name(r, defs).0),
                6 => out += &format!("numjobs={}\n", 1 + r.below(5000)),
                _ => {
                    let (name, kind) = option_name(r, defs);
                    out += &format!("{name}={}\n", value(r, kind));
                }
            }
        }
    }
    out.into_bytes()
}

const RUN_FLAGS: &[&str] = &[
    "--output-format=json",
    "--output-format=xml",
    "--output-format=json,terse",
    "--terse-version=3",
    "--terse-version=9",
    "--eta=never",
    "--eta=sometimes",
    "--eta-interval=500",
    "--eta-interval=99999999999999999999999d",
    "--status-interval=(2^100)",
    "--max-jobs=abc",
    "--max-jobs=4",
    "--section=job0",
    "--showcmd",
    "--readonly",
    "--minimal",
    "--cmdhelp=bs",
    "--cmdhelp=nosuch",
    "--enghelp=null",
    "--enghelp=nosuch,bs",
    "--server",
    "--",
    "-x",
];

/// An argument of any bytes: as they are on Unix; on Windows, whose
/// arguments are UTF-16, each byte becomes the code unit of its value.
fn os_from_bytes(a: Vec<u8>) -> OsString {
    #[cfg(unix)]
    {
        std::os::unix::ffi::OsStringExt::from_vec(a)
    }
    #[cfg(windows)]
    {
        let wide: Vec<u16> = a.into_iter().map(u16::from).collect();
        std::os::windows::ffi::OsStringExt::from_wide(&wide)
    }
}

fn command_line(r: &mut Rng, defs: &[&'static options::OptDef], fx: &Fixtures) -> Input {
    let mut args: Vec<OsString> = vec!["--parse-only".into()];
    let mut stdin = Vec::new();
    for _ in 0..r.below(10) {
        match r.below(12) {
            0 => args.push(format!("--name={}", section_name(r)).into()),
            1 => args.push(r.pick(RUN_FLAGS).into()),
            2 if stdin.is_empty() => {
                args.push("-".into());
                stdin = job_text(r, defs, fx);
            }
            3 => args.push(r.pick(&fx.good).into()),
            4 if r.chance(20) => args.push(r.pick(&fx.bad).into()),
            5 => {
                let (name, _) = option_name(r, defs);
                args.push(format!("--{name}").into());
            }
            6 => {
                let bytes: Vec<u8> = (0..r.below(12)).map(|_| r.below(256) as u8).collect();
                let mut a = b"--name=".to_vec();
                a.extend(bytes);
                args.push(os_from_bytes(a));
            }
            _ => {
                let (name, kind) = option_name(r, defs);
                let v = if r.chance(50) {
                    plausible(r, kind)
                } else {
                    value(r, kind)
                };
                args.push(format!("--{name}={v}").into());
            }
        }
    }
    if r.chance(60) {
        args.insert(1, "--name=g".into());
        args.push("--ioengine=null".into());
        args.push("--size=1m".into());
    }
    Input {
        args,
        stdin,
        must_fail: false,
    }
}

/// Inputs built to be refused: a valid job plus one bad element.
fn invalid(r: &mut Rng, fx: &Fixtures) -> Input {
    const BAD_VALUES: &[(&str, &str)] = &[
        ("size", "(2^64)"),
        ("size", "16384p"),
        ("size", "18446744073709551616"),
        ("offset", "99999999999999999999k"),
        ("io_size", "(2^63*2)"),
        ("bs", "(2^64)k"),
        ("bsrange", "4k-99999999999999999999k"),
        ("runtime", "36501d"),
        ("runtime", "(2^70)"),
        ("ramp_time", "99999999999999999999"),
        ("thinktime", "(2^60)"),
        ("startdelay", "1000000d"),
        ("numjobs", "4097"),
        ("numjobs", "(2^40)"),
        ("iodepth", "(2^40)"),
        ("rate", "(2^64)"),
        ("randseed", "(2^70)"),
        ("openfiles", "4294967296"),
        ("log_avg_msec", "(2^62)"),
        ("rwmixread", "(10^20)"),
        ("rate_cycle", "16e"),
        ("size", "$pagesize*(2^200)"),
    ];
    let base = "[g]\nioengine=null\nsize=1m\n";
    let (text, args): (String, Vec<OsString>) = match r.below(6) {
        0 => {
            let (k, v) = r.pick(BAD_VALUES);
            (format!("{base}{k}={v}\n"), vec![])
        }
        1 => {
            let (k, v) = r.pick(BAD_VALUES);
            let a = vec![
                "--name=c".into(),
                "--ioengine=null".into(),
                format!("--{k}={v}").into(),
            ];
            (String::new(), a)
        }
        2 => {
            let mut t = format!("{base}rw=read\n").into_bytes();
            let at = r.below(t.len());
            t.insert(at, 0);
            return Input {
                args: vec!["--parse-only".into(), "-".into()],
                stdin: t,
                must_fail: true,
            };
        }
        3 => {
            let jobs = 2 + r.below(6);
            let each = 4096 / jobs + 1 + r.below(100);
            let mut t = String::new();
            for j in 0..jobs {
                t += &format!("[j{j}]\nioengine=null\nsize=1m\nnumjobs={each}\n");
            }
            (t, vec![])
        }
        4 => (format!("{base}include {}\n", r.pick(&fx.bad)), vec![]),
        _ => {
            let c = *r.pick(&["\n", "\u{1b}[2J", "\r", "\u{7}"]);
            (String::new(), vec![format!("--name=a{c}b").into()])
        }
    };
    let mut all: Vec<OsString> = vec!["--parse-only".into()];
    all.extend(args);
    if !text.is_empty() {
        all.push("-".into());
    }
    Input {
        args: all,
        stdin: text.into_bytes(),
        must_fail: true,
    }
}

fn generate(fx: &Fixtures) -> Vec<Input> {
    let defs: Vec<&'static options::OptDef> = options::all().collect();
    let mut r = Rng(0x5eed_1234_abcd_ef01);
    (0..INPUTS)
        .map(|i| match i % 10 {
            0 | 1 => invalid(&mut r, fx),
            2 | 3 => Input {
                args: vec!["--parse-only".into(), "-".into()],
                stdin: job_text(&mut r, &defs, fx),
                must_fail: false,
            },
            4 | 5 => Input {
                args: vec!["--parse-only".into(), "-".into()],
                stdin: plausible_job(&mut r, &defs),
                must_fail: false,
            },
            _ => command_line(&mut r, &defs, fx),
        })
        .collect()
}

/// Runs every input through `parse_only` in a worker thread; the test
/// thread waits for each with a bound, so a hang fails the test.
fn run_in_process(inputs: &[Input]) -> Vec<Result<Result<usize, String>, String>> {
    let (tx, rx) = mpsc::channel();
    let work: Vec<Input> = inputs.to_vec();
    std::thread::spawn(move || {
        for inp in work {
            let r = std::panic::catch_unwind(|| iomark::cli::parse_only(inp.args, &inp.stdin))
                .map_err(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                });
            if tx.send(r).is_err() {
                return;
            }
        }
    });
    let mut out = Vec::with_capacity(inputs.len());
    for (i, inp) in inputs.iter().enumerate() {
        match rx.recv_timeout(HANG_LIMIT) {
            Ok(Ok(r)) => out.push(Ok(r)),
            Ok(Err(p)) => panic!("input {i} panicked ({p}): {inp:?}"),
            Err(_) => panic!("input {i} did not finish within {HANG_LIMIT:?}: {inp:?}"),
        }
    }
    out
}

/// Runs the binary with a bound; `None` if it had to be killed.
fn run_binary(inp: &Input) -> Option<std::process::Output> {
    use std::io::Write;
    use std::process::Stdio;
    let spawn = || {
        iomark()
            .args(&inp.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // Wine's CreateProcess was seen failing once in about 300 starts
    // with ERROR_INTERNAL_ERROR (1359): started again once (Wine only,
    // not an outcome of iomark's).
    let mut child = match spawn() {
        Err(e) if cfg!(windows) && e.raw_os_error() == Some(1359) => spawn(),
        r => r,
    }
    .unwrap_or_else(|e| panic!("run iomark {inp:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let data = inp.stdin.clone();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let _ = writer.join();
            return Some(child.wait_with_output().unwrap());
        }
        if start.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn generated_inputs_never_panic_hang_or_pass_when_invalid() {
    let fx = fixtures();
    let inputs = generate(&fx);
    let results = run_in_process(&inputs);
    let (mut accepted, mut refused, mut must_fail) = (0, 0, 0);
    let mut failures = Vec::new();
    for (i, (inp, r)) in inputs.iter().zip(&results).enumerate() {
        match r {
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(e)) => {
                refused += 1;
                if e.is_empty() || e.contains('\n') || e.contains('\r') {
                    failures.push(format!("input {i}: error is not one line: {e:?}"));
                }
            }
            Err(_) => unreachable!("panics stop run_in_process"),
        }
        if inp.must_fail {
            must_fail += 1;
            if let Ok(Ok(n)) = r {
                failures.push(format!(
                    "input {i}: invalid input accepted ({n} jobs): {inp:?}"
                ));
            }
        }
    }
    let mut binary = 0;
    let mut binary_accepted = 0;
    // Every kind of input: the offset within each stride moves along.
    for (k, start) in (0..inputs.len()).step_by(BINARY_EVERY).enumerate() {
        let i = (start + k % 10).min(inputs.len() - 1);
        let inp = &inputs[i];
        if inp.args.iter().any(|a| a.as_encoded_bytes().contains(&0)) {
            continue;
        }
        binary += 1;
        let Some(o) = run_binary(inp) else {
            failures.push(format!("input {i}: the binary hung: {inp:?}"));
            continue;
        };
        let err = stderr(&o);
        match &results[i] {
            Ok(Err(e)) => {
                let want = format!("iomark: {e}\n");
                if o.status.code() != Some(1) || err != want {
                    failures.push(format!(
                        "input {i}: binary exit {:?}, stderr {err:?}, library said {want:?}",
                        o.status.code()
                    ));
                }
            }
            _ => {
                binary_accepted += 1;
                if o.status.code() != Some(0) {
                    failures.push(format!(
                        "input {i}: library accepted, binary exit {:?}: {err:?}",
                        o.status.code()
                    ));
                }
            }
        }
    }
    println!(
        "generated inputs: {} in process ({accepted} accepted, {refused} refused, {must_fail} built invalid and all refused), 0 panics, 0 hangs; {binary} through the binary ({binary_accepted} accepted)",
        inputs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(inputs.len() >= 10_000 && binary >= INPUTS / BINARY_EVERY * 2 / 3);
    // The generator must reach both outcomes, or it tests nothing.
    assert!(
        accepted > 500 && refused > 2000,
        "{accepted} accepted, {refused} refused"
    );
}

/// The fixture paths exist as the generator expects (a typo there would
/// quietly turn "bad include" cases into "missing file" ones).
#[test]
fn generator_fixtures_are_what_they_claim() {
    let fx = fixtures();
    for g in &fx.good {
        assert!(Path::new(g).is_file(), "{g}");
    }
    let ok = iomark::cli::parse_only(vec!["--parse-only".into(), fx.good[0].clone().into()], b"");
    assert!(
        ok.is_err(),
        "an include fragment is not a job file by itself"
    );
    let job = Path::new(&fx.good[0]).with_file_name("job.fio");
    assert_eq!(
        iomark::cli::parse_only(vec!["--parse-only".into(), job.into()], b""),
        Ok(1)
    );
}
