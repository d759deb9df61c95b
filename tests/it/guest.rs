//! The guest suite: NVMe passthrough, zoned namespaces and flexible data
//! placement, tested on QEMU's emulated NVMe inside a throw-away guest
//! (this machine's own kernel has none of them).
//!
//! `tests/guest/run.sh` boots the guest with the iomark binary under test
//! and Debian's fio 3.33; `tests/guest/suite.sh` runs the cases there and
//! brings back what each command printed. This test decides: every case
//! the guest ran has a check here, every check here had its case run, and
//! each check compares iomark with fio on the same device (or with what
//! the device reports: zone write pointers, reclaim unit handles). It
//! prints one line per case and a summary line that `.ci/run` repeats:
//!
//! ```text
//! guest suite: tests run: 12 (passed: 12, failed: 0), boot 9.8 s, suite 61.0 s, wall 72.4 s
//! ```
//!
//! Without root, QEMU or Debian's archive the test is skipped (it fails
//! under `IOMARK_STRICT_TESTS=1`). `IOMARK_GUEST_LONG=1` adds the longer
//! zoned cases; `IOMARK_GUEST_REUSE=1` checks the last run's results again
//! without booting (while writing checks).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// One case's directory, as the guest left it.
struct Case {
    dir: PathBuf,
}

/// The device names the guest's kernel gave the namespaces, as the suite
/// wrote them into `devices.env` (`IMK_CONV_BDEV=/dev/nvme2n1`, …): the
/// kernel numbers the controllers in the order their probes finish, which
/// differs from boot to boot, so no check assumes a number.
fn devices(out: &Path) -> Result<Vec<(String, String)>, String> {
    let t = std::fs::read_to_string(out.join("devices.env"))
        .map_err(|e| format!("devices.env: {e}"))?;
    Ok(t.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

impl Case {
    /// The device the guest found for `var` (`IMK_CONV_BDEV`, …).
    fn device(&self, var: &str) -> Result<String, String> {
        let out = self
            .dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.dir);
        devices(out)?
            .into_iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("devices.env has no {var}"))
    }

    fn text(&self, file: &str) -> Result<String, String> {
        std::fs::read_to_string(self.dir.join(file)).map_err(|e| format!("{file}: {e}"))
    }

    /// The exit status of the command run as `label`.
    fn rc(&self, label: &str) -> Result<i32, String> {
        let t = self.text(&format!("{label}.rc"))?;
        t.trim()
            .parse()
            .map_err(|_| format!("{label}.rc: '{}'", t.trim()))
    }

    /// Fails unless `label` exited 0, with its stderr.
    fn ok(&self, label: &str) -> Result<(), String> {
        match self.rc(label)? {
            0 => Ok(()),
            n => Err(format!(
                "{} exited {n}: {}",
                self.text(&format!("{label}.cmd"))
                    .unwrap_or_default()
                    .trim(),
                self.text(&format!("{label}.err"))
                    .unwrap_or_default()
                    .trim()
            )),
        }
    }

    fn out(&self, label: &str) -> Result<String, String> {
        self.text(&format!("{label}.out"))
    }

    /// The JSON document `label` printed (fio may print notices first, a
    /// text report may follow).
    fn json(&self, label: &str) -> Result<Value, String> {
        self.ok(label)?;
        self.json_of_failed(label)
    }

    /// `label`'s JSON report, whatever its exit status.
    fn json_of_failed(&self, label: &str) -> Result<Value, String> {
        let t = self.out(label)?;
        let start = t.find("{\n").unwrap_or(0);
        serde_json::Deserializer::from_str(&t[start..])
            .into_iter::<Value>()
            .next()
            .unwrap_or_else(|| Err(serde::de::Error::custom("empty")))
            .map_err(|e| format!("{label}.out: not JSON: {e}"))
    }

    /// The zone resets of `label`'s text report ("; N zone resets").
    fn zone_resets(&self, label: &str) -> Result<u64, String> {
        let t = self.out(label)?;
        t.lines()
            .find_map(|l| {
                l.split_once("; ")?
                    .1
                    .strip_suffix(" zone resets")?
                    .parse()
                    .ok()
            })
            .ok_or_else(|| format!("{label}: no 'zone resets' in its text report"))
    }

    /// The zones `blkzone report` printed into LABEL.zones:
    /// (start, capacity, write pointer from the zone's start, condition:
    /// em, oi, oe, cl, fu…), in 512-byte sectors.
    fn zones(&self, label: &str) -> Result<Vec<(u64, u64, u64, String)>, String> {
        let t = self.text(&format!("{label}.zones"))?;
        let hex = |l: &str, k: &str| -> Option<u64> {
            let v = l.split(k).nth(1)?.split([',', ' ']).next()?;
            u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()
        };
        t.lines()
            .filter(|l| l.contains("start:"))
            .map(|l| {
                let cond = l.split("zcond:").nth(1).unwrap_or("");
                let cond = cond.split(['(', ')']).nth(1).unwrap_or("").to_string();
                match (hex(l, "start: "), hex(l, "cap "), hex(l, "wptr ")) {
                    (Some(s), Some(c), Some(w)) => Ok((s, c, w, cond)),
                    _ => Err(format!("{label}.zones: '{l}'")),
                }
            })
            .collect()
    }
}

/// (job, direction, `total_ios`, `io_bytes`) of each direction of each job.
type Counts = Vec<(String, &'static str, u64, u64)>;

/// `total_ios` and `io_bytes` of each direction of each job.
fn counts(doc: &Value) -> Counts {
    let mut v = Vec::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let name = job["jobname"].as_str().unwrap_or("?").to_string();
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            v.push((
                name.clone(),
                dir,
                d["total_ios"].as_u64().unwrap_or(0),
                d["io_bytes"].as_u64().unwrap_or(0),
            ));
        }
    }
    v
}

/// iomark's and fio's counts are equal, job by job and direction by
/// direction; returns iomark's.
fn same_counts(c: &Case) -> Result<Counts, String> {
    let ours = counts(&c.json("iomark")?);
    let fio = counts(&c.json("fio")?);
    if ours != fio {
        return Err(format!("iomark did {ours:?}, fio {fio:?}"));
    }
    if ours.iter().all(|(_, _, n, _)| *n == 0) {
        return Err("no I/O at all".into());
    }
    Ok(ours)
}

/// The I/Os of direction `dir` summed over the jobs.
fn ios(v: &Counts, dir: &str) -> u64 {
    v.iter().filter(|c| c.1 == dir).map(|c| c.2).sum()
}

fn expect(what: &str, got: u64, want: u64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: {got}, expected {want}"))
    }
}

// --- checks, one per case of tests/guest/suite.sh ---------------------------

fn env(c: &Case) -> Result<(), String> {
    for l in ["fio", "nvme", "iomark", "lsblk"] {
        c.ok(l)?;
    }
    // Each of the four namespaces was found, by a name of its own, with
    // its character device and controller of the same number.
    let mut seen = Vec::new();
    for ns in ["CONV", "PI", "ZNS", "FDP"] {
        let b = c.device(&format!("IMK_{ns}_BDEV"))?;
        let g = c.device(&format!("IMK_{ns}_CDEV"))?;
        let ctrl = c.device(&format!("IMK_{ns}_CTRL"))?;
        let num = b
            .strip_prefix("/dev/nvme")
            .and_then(|r| r.split_once('n'))
            .filter(|(x, y)| {
                !x.is_empty()
                    && !y.is_empty()
                    && x.chars().chain(y.chars()).all(|ch| ch.is_ascii_digit())
            })
            .ok_or_else(|| format!("IMK_{ns}_BDEV={b}: not /dev/nvmeXnY"))?;
        if g != format!("/dev/ng{}n{}", num.0, num.1) || ctrl != format!("/dev/nvme{}", num.0) {
            return Err(format!("IMK_{ns}: {b}, {g}, {ctrl} do not belong together"));
        }
        if seen.contains(&b) {
            return Err(format!("{b} found for two namespaces"));
        }
        seen.push(b);
    }
    // The PI controller's other namespaces, block and character device
    // of the same numbers.
    for ns in ["PI2", "PI3", "EXT", "EXTPI", "TYPE2", "TYPE3"] {
        let b = c.device(&format!("IMK_{ns}_BDEV"))?;
        let g = c.device(&format!("IMK_{ns}_CDEV"))?;
        if b.strip_prefix("/dev/nvme") != g.strip_prefix("/dev/ng") || seen.contains(&b) {
            return Err(format!("IMK_{ns}: {b} and {g}"));
        }
        seen.push(b);
    }
    if !c.out("fio")?.contains("fio-3.33") {
        return Err(format!("fio in the guest is {}", c.out("fio")?.trim()));
    }
    let q = c.out("lsblk")?;
    if !q.contains("zoned=host-managed max_open=8") {
        return Err(format!("no host-managed namespace with 8 open zones:\n{q}"));
    }
    let zones = c.text("before.zones")?;
    expect(
        "zones of the ZNS namespace",
        zones.lines().count() as u64,
        32,
    )
}

fn conv_bdev_randwrite_verify(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes", ios(&n, "write"), 2048)?;
    expect("verify reads", ios(&n, "read"), 2048)
}

fn fio_uring_cmd_randread(c: &Case) -> Result<(), String> {
    let n = counts(&c.json("fio")?);
    expect("fio's reads through /dev/ngXnY", ios(&n, "read"), 2048)
}

/// RUAMW (blocks a handle's reclaim unit can still take) per placement
/// identifier, from `nvme fdp status`.
fn ruamw(c: &Case) -> Result<Vec<u64>, String> {
    c.ok("status")?;
    let mut out = Vec::new();
    for l in c.out("status")?.lines() {
        if l.contains("(RUAMW)") {
            let v = l.rsplit(':').next().unwrap_or("").trim();
            out.push(v.parse().map_err(|_| format!("RUAMW '{v}'"))?);
        }
    }
    Ok(out)
}

/// The handles' RUAMW are `want` (iomark wrote where it was asked, and
/// nowhere else).
fn placed(c: &Case, want: &[u64]) -> Result<(), String> {
    let got = ruamw(c)?;
    if got != want {
        return Err(format!(
            "RUAMW per placement identifier: {got:?}, expected {want:?}"
        ));
    }
    Ok(())
}

fn fdp_env(c: &Case) -> Result<(), String> {
    c.ok("configs")?;
    placed(c, &[1024; 8])
}

fn fdp_roundrobin(c: &Case) -> Result<(), String> {
    expect("writes", ios(&counts(&c.json("iomark")?), "write"), 512)?;
    // 256 blocks each to handles 1 and 3
    placed(c, &[1024, 768, 1024, 768, 1024, 1024, 1024, 1024])
}

fn fdp_random(c: &Case) -> Result<(), String> {
    expect("writes", ios(&counts(&c.json("iomark")?), "write"), 256)?;
    let got = ruamw(c)?;
    let used = (2048 - got[4] - got[5], got[4] < 1024 && got[5] < 1024);
    if used != (256, true) || got[..4] != [1024, 768, 1024, 768] || got[6..] != [1024, 1024] {
        return Err(format!(
            "256 writes over handles 4 and 5 at random: RUAMW {got:?}"
        ));
    }
    Ok(())
}

fn fdp_scheme(c: &Case) -> Result<(), String> {
    expect("writes", ios(&counts(&c.json("iomark")?), "write"), 256)?;
    // the first 512 KiB by index 6, the next by index 7
    let got = ruamw(c)?;
    if got[6..] != [896, 896] {
        return Err(format!(
            "RUAMW of handles 6 and 7: {:?}, expected [896, 896]",
            &got[6..]
        ));
    }
    refused(c, "badindex", &["index 8 must be smaller than 8"])
}

fn streams(c: &Case) -> Result<(), String> {
    // QEMU's controller takes the streams directive without acting on it:
    // the writes complete (where they land cannot be seen here).
    expect("writes", ios(&counts(&c.json("iomark")?), "write"), 16)?;
    refused(
        c,
        "noids",
        &["dataplacement=streams needs the stream ids in plids"],
    )
}

fn uring_cmd_randread(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("reads", ios(&n, "read"), 2048)
}

fn uring_cmd_randwrite_verify(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes", ios(&n, "write"), 2048)?;
    expect("verify reads", ios(&n, "read"), 2048)
}

fn uring_cmd_same_io(c: &Case) -> Result<(), String> {
    same_counts(c).map(drop)
}

fn uring_cmd_zipf_rate_logs(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("reads", ios(&n, "read"), 1024)?;
    let files = c.out("files")?;
    for log in ["iomark_bw.1.log", "iomark_lat.1.log", "iomark_clat.1.log"] {
        if !files.lines().any(|l| l == log) {
            return Err(format!("no {log} among {files:?}"));
        }
    }
    let iops = c.json("iomark")?["jobs"][0]["read"]["iops"]
        .as_f64()
        .unwrap_or(0.0);
    if iops > 4000.0 * 1.1 {
        return Err(format!("rate_iops=4000 gave {iops:.0} IOPS"));
    }
    Ok(())
}

/// `label` failed (non-zero exit) and its stderr holds every one of `want`.
/// (class, level, count) of each entry of a job's `prios` in direction
/// `dir`, and the sorted keys of each entry and of its latency object.
type Prios = (Vec<(u64, u64, u64)>, Vec<Vec<String>>);

fn prios(doc: &Value, dir: &str) -> Result<Prios, String> {
    let job = &doc["jobs"][0];
    let a = job[dir]["prios"]
        .as_array()
        .ok_or_else(|| format!("no {dir} prios array"))?;
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        k.sort();
        k
    };
    let mut counts = Vec::new();
    let mut names = Vec::new();
    for p in a {
        let lat = p
            .get("clat_ns")
            .or_else(|| p.get("lat_ns"))
            .ok_or("a prios entry without latencies")?;
        let num = |v: &Value| v.as_u64().ok_or("a prios entry without a number");
        counts.push((num(&p["prioclass"])?, num(&p["prio"])?, num(&lat["N"])?));
        names.push(keys(p));
        names.push(keys(lat));
    }
    Ok((counts, names))
}

/// iomark's and fio's `prios` of direction `dir` (labels `ours`,
/// `theirs`) are the same: two priorities, the I/Os of each counted
/// alike, every I/O in one of them; returns the counts.
fn same_prios(
    c: &Case,
    ours: &str,
    theirs: &str,
    dir: &str,
) -> Result<Vec<(u64, u64, u64)>, String> {
    let (o, f) = (c.json(ours)?, c.json(theirs)?);
    let (po, ko) = prios(&o, dir)?;
    let (pf, kf) = prios(&f, dir)?;
    if po != pf {
        return Err(format!("{ours}: prios {po:?}, {theirs}: {pf:?}"));
    }
    if ko != kf {
        return Err(format!("{ours}: prios keys {ko:?}, {theirs}: {kf:?}"));
    }
    if po.len() != 2 {
        return Err(format!("{ours}: {} priorities, expected 2", po.len()));
    }
    let n: u64 = po.iter().map(|p| p.2).sum();
    expect(
        &format!("{ours}: I/Os over the priorities"),
        n,
        o["jobs"][0][dir]["total_ios"].as_u64().unwrap_or(0),
    )?;
    Ok(po)
}

fn cmdprio_uring_cmd(c: &Case) -> Result<(), String> {
    refused(
        c,
        "iomark",
        &[
            "'cmdprio_percentage' only applies to ioengine=io_uring,libaio",
            "(EINVAL)",
        ],
    )?;
    if c.text("iomark.err")?.trim().lines().count() != 1 {
        return Err("iomark: the refusal is not one line".into());
    }
    // why: fio's prioritized commands fail with EINVAL
    let fio = c.json_of_failed("fio")?;
    expect(
        "fio's error",
        fio["jobs"][0]["error"].as_u64().unwrap_or(0),
        libc::EINVAL as u64,
    )?;
    // a job priority is not sent with the commands: the job runs
    c.ok("jobprio")?;
    let n = counts(&c.json("jobprio")?);
    expect("reads at a job priority", ios(&n, "read"), 256)
}

fn cmdprio_bdev(c: &Case) -> Result<(), String> {
    for e in ["libaio", "io_uring"] {
        let (ours, theirs) = (format!("iomark-{e}"), format!("fio-{e}"));
        let p = same_prios(c, &ours, &theirs, "read")?;
        expect(&format!("{e}: idle class"), p[1].0, 3)?;
    }
    let p = same_prios(c, "iomark-w", "fio-w", "write")?;
    expect("bssplit: best-effort class", p[1].0, 2)?;
    expect("bssplit: level", p[1].1, 5)
}

fn refused(c: &Case, label: &str, want: &[&str]) -> Result<(), String> {
    let err = c.text(&format!("{label}.err"))?;
    if c.rc(label)? == 0 {
        return Err(format!("{label}: succeeded, expected a refusal"));
    }
    for w in want {
        if !err.contains(w) {
            return Err(format!("{label}: stderr lacks '{w}': {}", err.trim()));
        }
    }
    Ok(())
}

fn uring_cmd_nvme_status(c: &Case) -> Result<(), String> {
    refused(c, "iomark", &["NVMe status 0x1bc (Zone Invalid Write)"])?;
    refused(c, "nowait", &["option 'nowait' only applies to ioengine="])
}

fn pi(c: &Case) -> Result<(), String> {
    let pract = counts(&c.json("pract")?);
    expect("writes with PRACT", ios(&pract, "write"), 1024)?;
    expect("verify reads with PRACT", ios(&pract, "read"), 1024)?;
    let host = counts(&c.json("host")?);
    expect("writes with iomark's PI", ios(&host, "write"), 1024)?;
    let read = counts(&c.json("hostread")?);
    expect("reads checking iomark's PI", ios(&read, "read"), 1024)?;
    let err = c.text("wrongtag.err")?.to_lowercase();
    if c.rc("wrongtag")? == 0 || !err.contains("application tag") {
        return Err(format!("a wrong apptag was not caught: {err}"));
    }
    let masked = counts(&c.json("masked")?);
    expect("reads with a masked apptag", ios(&masked, "read"), 16)?;
    let err = c.text("unmasked.err")?.to_lowercase();
    if c.rc("unmasked")? == 0 || !err.contains("application tag") {
        return Err(format!("apptag_mask=0xff00 let 0x11 for 0x42 pass: {err}"));
    }
    refused(c, "smallmd", &["md_per_io_size should be at least 8 bytes"])
}

/// Default-option PI writes on three type 1 formats: a kernel read and
/// nvme-cli verifies (guard, application and reference tags) all pass.
fn pi_default(c: &Case) -> Result<(), String> {
    for v in ["PI", "PI2", "PI3"] {
        let n = counts(&c.json(v)?);
        expect(&format!("{v}: writes"), ios(&n, "write"), 256)?;
        c.ok(&format!("{v}-kread"))?;
        for lba in [256, 257, 300, 401, 511] {
            c.ok(&format!("{v}-verify-{lba}"))?;
        }
    }
    Ok(())
}

/// A kernel read (`LABEL-kread`) and every nvme-cli verify of the
/// sampled blocks (`LABEL-verify-LBA`) passed.
fn pi_valid(c: &Case, label: &str, lbas: &[u64]) -> Result<(), String> {
    c.ok(&format!("{label}-kread"))?;
    for lba in lbas {
        c.ok(&format!("{label}-verify-{lba}"))?;
    }
    Ok(())
}

/// How fio 3.33's run `label` went and what nvme-cli and the kernel
/// found of its writes, in words (for the log: fio has no PI options).
fn fio_pi_view(c: &Case, label: &str, lbas: &[u64]) -> String {
    let err = c
        .json_of_failed(label)
        .map(|d| d["jobs"][0]["error"].as_i64().unwrap_or(-1))
        .unwrap_or(-1);
    let writes = c
        .json_of_failed(label)
        .map(|d| ios(&counts(&d), "write"))
        .unwrap_or(0);
    let valid = lbas
        .iter()
        .filter(|l| c.rc(&format!("{label}-verify-{l}")) == Ok(0))
        .count();
    let kread = match c.rc(&format!("{label}-kread")) {
        Ok(0) => "passes",
        _ => "fails",
    };
    format!(
        "fio 3.33: {writes} writes, error {err}; nvme verify {valid} of {} sampled blocks \
         valid; kernel read {kread}",
        lbas.len()
    )
}

/// PI types 2 and 3: iomark's writes with the default options and with
/// each pi_act/pi_chk leave PI that the kernel and nvme-cli find valid.
fn pi_types(c: &Case) -> Result<(), String> {
    const LBAS: [u64; 6] = [256, 257, 300, 401, 511, 767];
    for v in ["TYPE2", "TYPE3"] {
        let mut labels = vec![v.to_string()];
        for a in [
            "act1-guard_reftag_apptag",
            "act0-none",
            "act0-guard",
            "act0-reftag",
            "act0-apptag",
            "act0-guard_reftag_apptag",
        ] {
            labels.push(format!("{v}-{a}"));
        }
        for l in &labels {
            let n = counts(&c.json(l)?);
            expect(&format!("{l}: writes"), ios(&n, "write"), 256)?;
            pi_valid(c, l, &LBAS)?;
        }
        let n = counts(&c.json(&format!("{v}-read"))?);
        expect(&format!("{v}: reads checking the PI"), ios(&n, "read"), 256)?;
        say(&format!(
            "pi-types {v}: {}",
            fio_pi_view(c, &format!("{v}-fio"), &LBAS)
        ));
    }
    Ok(())
}

/// Extended LBAs without PI: iomark and fio 3.33 do the same I/O with
/// blocks of data + metadata, verified; a data-only block size and an
/// offset between blocks are refused.
fn ext_lba(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes of 4104 bytes", ios(&n, "write"), 1024)?;
    expect("verify reads", ios(&n, "read"), 1024)?;
    let (a, b) = (counts(&c.json("iomark4")?), counts(&c.json("fio4")?));
    if a != b {
        return Err(format!("bs=16416: iomark did {a:?}, fio {b:?}"));
    }
    expect("writes of 4 blocks", ios(&a, "write"), 256)?;
    expect("verify reads of 4 blocks", ios(&a, "read"), 256)?;
    refused(
        c,
        "databs",
        &["block size 4096 is not a multiple of 4104 bytes", "bs=4104"],
    )?;
    refused(c, "offset", &["offset 4096 is not a multiple of 4104"])?;
    refused(
        c,
        "unchecked",
        &["gives its block device no capacity", "allow_destroy_data=1"],
    )?;
    if c.text("unchecked.err")?.trim().lines().count() != 1 {
        return Err("unchecked: the refusal is not one line".into());
    }
    Ok(())
}

/// Extended LBAs with PI type 1 (512 + 8): with pi_act=1 the PI stays in
/// the controller (bs counts data), with pi_act=0 iomark writes it
/// inline; the kernel and nvme-cli find it valid either way.
fn ext_lba_pi(c: &Case) -> Result<(), String> {
    const LBAS: [u64; 5] = [2048, 2049, 2500, 3001, 4095];
    let n = counts(&c.json("act1")?);
    expect("pi_act=1: writes of 4k", ios(&n, "write"), 256)?;
    expect("pi_act=1: verify reads", ios(&n, "read"), 256)?;
    pi_valid(c, "act1", &LBAS)?;
    let n = counts(&c.json("act0")?);
    expect("pi_act=0: writes of 520", ios(&n, "write"), 2048)?;
    pi_valid(c, "act0", &LBAS)?;
    let n = counts(&c.json("act0read")?);
    expect("pi_act=0: reads checking the PI", ios(&n, "read"), 1024)?;
    let n = counts(&c.json("act0nochk")?);
    expect("pi_act=0 without pi_chk: writes", ios(&n, "write"), 512)?;
    pi_valid(c, "act0nochk", &LBAS)?;
    refused(
        c,
        "act1bs",
        &["block size 520 is not a multiple", "pi_act=0 moves 520"],
    )?;
    refused(c, "verify", &["verify cannot check"])?;
    let fio = c.json_of_failed("fio0")?;
    let ours = counts(&c.json("act0")?);
    if counts(&fio) != ours {
        say(&format!(
            "ext-lba-pi: fio 3.33 did {:?}, iomark {ours:?}",
            counts(&fio)
        ));
    }
    say(&format!("ext-lba-pi: {}", fio_pi_view(c, "fio0", &LBAS)));
    Ok(())
}

fn ng_safety(c: &Case) -> Result<(), String> {
    // The refusals name the namespace's block device, whatever number
    // the guest's kernel gave it.
    let bdev = c.device("IMK_CONV_BDEV")?;
    let name = bdev.trim_start_matches("/dev/");
    refused(c, "sig", &["swap area", "allow_destroy_data=1", name])?;
    refused(c, "inuse", &["in use as swap", "allow_mounted_write=1"])?;
    c.ok("consent")?;
    refused(c, "psync", &["ioengine=io_uring_cmd", &bdev])?;
    refused(c, "bdev", &["NVMe generic character device"])
}

/// iomark's and fio's counts and zone resets are the same; returns
/// (counts, resets).
fn same_zbd(c: &Case) -> Result<(Counts, u64), String> {
    let n = same_counts(c)?;
    let (ours, fio) = (c.zone_resets("iomark")?, c.zone_resets("fio")?);
    if ours != fio {
        return Err(format!("zone resets: iomark {ours}, fio {fio}"));
    }
    let json = c.json("iomark")?["jobs"][0]["zone_resets"].as_u64();
    if json != Some(ours) {
        return Err(format!("JSON zone_resets {json:?}, text {ours}"));
    }
    Ok((n, ours))
}

/// Every write of `trace` (an iolog v3) went to its zone's write pointer
/// (zones of 8192 sectors, 6144 of capacity, all empty at the start),
/// except a write at the start of a full zone (reset first); returns the
/// resets seen.
fn writes_at_write_pointers(c: &Case, trace: &str) -> Result<u64, String> {
    let (zone, cap) = (4u64 << 20, 3u64 << 20);
    let mut wp: std::collections::HashMap<u64, u64> = Default::default();
    let mut resets = 0;
    for l in c.text(trace)?.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 5 || f[2] != "write" {
            continue;
        }
        let (off, len): (u64, u64) = (f[3].parse().unwrap_or(0), f[4].parse().unwrap_or(0));
        let z = off / zone * zone;
        let at = wp.entry(z).or_insert(z);
        if off == z && *at >= z + cap {
            resets += 1;
        } else if off != *at {
            return Err(format!("write at {off}, zone {z}'s write pointer at {at}"));
        }
        *at = off + len;
        if *at > z + cap {
            return Err(format!("write at {off}+{len} past zone {z}'s capacity"));
        }
    }
    Ok(resets)
}

fn zbd_seq_write(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    // 8 zones of 3 MiB twice: 384 writes of 64k per loop, 8 resets
    expect("writes", ios(&n, "write"), 768)?;
    expect("zone resets", resets, 8)?;
    expect(
        "resets in the trace",
        writes_at_write_pointers(c, "iomark-seq.iolog")?,
        8,
    )?;
    let z = c.zones("iomark")?;
    let full = z.iter().take(8).filter(|z| z.3 == "fu").count() as u64;
    expect("full zones of the region", full, 8)?;
    expect(
        "zones written past the region",
        z[8..].iter().filter(|z| z.2 != 0).count() as u64,
        0,
    )
}

fn zbd_rand_write(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    // 4 zones of 256 blocks of 16k each, 192 fit: each reset once
    expect("writes", ios(&n, "write"), 1024)?;
    expect("zone resets", resets, 4)?;
    expect(
        "resets in the trace",
        writes_at_write_pointers(c, "iomark-rnd.iolog")?,
        4,
    )?;
    // each zone ends with 64 blocks (1 MiB) written
    for (_, _, w, _) in c.zones("iomark")?.iter().take(4) {
        expect("sectors written in the zone", *w, 2048)?;
    }
    Ok(())
}

fn zbd_max_open(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes", ios(&n, "write"), 2048)?;
    writes_at_write_pointers(c, "iomark-mo.iolog")?;
    at_most_open(c, 2)
}

fn zbd_job_max_open(c: &Case) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes", ios(&n, "write"), 2048)?;
    writes_at_write_pointers(c, "iomark-jm.iolog")?;
    at_most_open(c, 3)
}

fn zbd_ignore_limits(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    // 4 zones of 48 writes of 64k (3 MiB of capacity each)
    expect("writes", ios(&n, "write"), 192)?;
    expect("zone resets", resets, 0)
}

/// Each tool's run left at most `max` zones partly written or open, as
/// `blkzone report` shows them.
fn at_most_open(c: &Case, max: usize) -> Result<(), String> {
    for tool in ["iomark", "fio"] {
        let z = c.zones(tool)?;
        let partial = z.iter().filter(|z| z.2 > 0 && z.2 < z.1).count();
        let open = z.iter().filter(|z| z.3 == "oi" || z.3 == "oe").count();
        if partial > max {
            return Err(format!(
                "{tool}: {partial} zones partly written with an open limit of {max}"
            ));
        }
        if open > max {
            return Err(format!(
                "{tool}: {open} zones open with an open limit of {max}"
            ));
        }
    }
    Ok(())
}

/// Several jobs on one zoned device (one group report): iomark and fio
/// did the same writes without an error, each left at most `max_open`
/// zones open, and each tool's resets account for its zones exactly:
/// the data `blkzone report` shows plus a full zone (`per_zone` bytes)
/// per reset is every byte written. The resets themselves depend on the
/// order in which the jobs' writes meet (fio's own runs of the same job
/// differ from one another), so each tool's must lie between the fewest
/// the data needs (`min_resets`) and the most it allows (one per full
/// zone's worth of writes).
fn shared_zones(
    c: &Case,
    writes: u64,
    max_open: usize,
    per_zone: u64,
    min_resets: u64,
) -> Result<(), String> {
    let n = same_counts(c)?;
    expect("writes", ios(&n, "write"), writes)?;
    let bytes: u64 = n.iter().filter(|c| c.1 == "write").map(|c| c.3).sum();
    let mut resets = Vec::new();
    for tool in ["iomark", "fio"] {
        let doc = c.json(tool)?;
        let err = doc["jobs"][0]["error"].as_i64();
        if err != Some(0) {
            return Err(format!("{tool}: error {err:?}"));
        }
        let r = c.zone_resets(tool)?;
        // (a full zone's write pointer is reported at its end)
        let data: u64 = c.zones(tool)?.iter().map(|z| z.2.min(z.1) * 512).sum();
        if data + r * per_zone != bytes {
            return Err(format!(
                "{tool}: {data} bytes in the zones and {r} resets of {per_zone} bytes, \
                 {bytes} bytes written"
            ));
        }
        if r < min_resets || r > bytes / per_zone {
            return Err(format!(
                "{tool}: {r} zone resets, from {min_resets} to {} possible",
                bytes / per_zone
            ));
        }
        resets.push(r);
    }
    let json = c.json("iomark")?["jobs"][0]["zone_resets"].as_u64();
    if json != Some(resets[0]) {
        return Err(format!("JSON zone_resets {json:?}, text {}", resets[0]));
    }
    let (ours, fio) = (resets[0], resets[1]);
    let name = c.dir.file_name().unwrap_or_default().to_string_lossy();
    say(&format!("{name}: zone resets iomark {ours}, fio {fio}"));
    at_most_open(c, max_open)
}

fn zbd_jobs_uring(c: &Case) -> Result<(), String> {
    // 2 jobs of 256 writes of 64k on 8 zones of 3 MiB (48 writes each)
    shared_zones(c, 512, 4, 3 << 20, 3)
}

fn zbd_jobs_psync(c: &Case) -> Result<(), String> {
    shared_zones(c, 512, 4, 3 << 20, 3)
}

fn zbd_two_sections(c: &Case) -> Result<(), String> {
    // 2 sections of 4 MiB of 40k writes; 76 fit a zone
    shared_zones(c, 2 * 103, 8, 76 * (40 << 10), 0)
}

fn zbd_many_jobs(c: &Case) -> Result<(), String> {
    // 8 jobs of 32 writes of 512k: 128 MiB on 96 MiB of zone capacity
    shared_zones(c, 256, 8, 3 << 20, 11)
}

/// Trims of 4 written zones (one per zone, then random ones over 8
/// zones): each is a zone reset, as fio's; every zone ends empty. (fio
/// 3.33 reports zone resets on its write line only: a trim job's are
/// in iomark's JSON.)
fn zbd_trim(c: &Case) -> Result<(), String> {
    for (ours, fio) in [("iomark", "fio"), ("iomark-rand", "fio-rand")] {
        let (a, b) = (counts(&c.json(ours)?), counts(&c.json(fio)?));
        if a != b {
            return Err(format!("{ours}: {a:?}, {fio}: {b:?}"));
        }
        expect(&format!("{ours}: trims"), ios(&a, "trim"), 4)?;
        expect(&format!("{ours}: writes"), ios(&a, "write"), 0)?;
        for tool in [ours, fio] {
            let written = c.zones(tool)?.iter().filter(|z| z.2 != 0).count() as u64;
            expect(&format!("{tool}: zones holding data"), written, 0)?;
        }
        let json = c.json(ours)?["jobs"][0]["zone_resets"].as_u64();
        expect("JSON zone_resets", json.unwrap_or(0), 4)?;
    }
    refused(
        c,
        "smallbs",
        &["trim block size 65536 is not the zone size 4194304"],
    )
}

fn zbd_uring_cmd(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    expect("writes", ios(&n, "write"), 384)?;
    expect("zone resets", resets, 4)
}

fn zbd_verify_read(c: &Case) -> Result<(), String> {
    let (n, _) = same_zbd(c)?;
    expect("writes", ios(&n, "write"), 3072)?;
    expect("verify reads", ios(&n, "read"), 3072)?;
    let ours = counts(&c.json("iomarkread")?);
    let fio = counts(&c.json("fioread")?);
    if ours != fio {
        return Err(format!(
            "reads of written data: iomark {ours:?}, fio {fio:?}"
        ));
    }
    Ok(())
}

fn zbd_refusals(c: &Case) -> Result<(), String> {
    refused(
        c,
        "toomany",
        &["max_open_zones (9) is larger than the device's limit (8)"],
    )?;
    refused(
        c,
        "zonesize",
        &["zonesize 1048576 does not match the zone size"],
    )?;
    refused(c, "buffered", &["needs direct=1"])
}

fn zbd_long_seq(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    // 32 zones of 48 writes of 64k, twice; every zone reset once
    expect("writes", ios(&n, "write"), 3072)?;
    expect("zone resets", resets, 32)
}

fn zbd_long_rand_cmd(c: &Case) -> Result<(), String> {
    let (n, resets) = same_zbd(c)?;
    // 8 zones, 64 writes of 64k each per loop, 48 fit: resets every
    // loop (their number depends only on the counts per zone)
    expect("writes", ios(&n, "write"), 2048)?;
    if resets < 8 {
        return Err(format!("{resets} zone resets over 4 loops"));
    }
    Ok(())
}

fn examples(c: &Case) -> Result<(), String> {
    for ex in ["uring-cmd-ng", "uring-cmd-zoned"] {
        let ours = counts(&c.json(&format!("iomark-{ex}"))?);
        let fio = counts(&c.json(&format!("fio-{ex}"))?);
        if ours != fio {
            return Err(format!("{ex}: iomark {ours:?}, fio {fio:?}"));
        }
    }
    Ok(())
}

type Check = fn(&Case) -> Result<(), String>;

const CHECKS: &[(&str, Check)] = &[
    ("env", env),
    ("conv-bdev-randwrite-verify", conv_bdev_randwrite_verify),
    ("fio-uring-cmd-randread", fio_uring_cmd_randread),
    ("uring-cmd-randread", uring_cmd_randread),
    ("uring-cmd-randwrite-verify", uring_cmd_randwrite_verify),
    ("uring-cmd-fixedbufs-sqpoll", uring_cmd_same_io),
    ("uring-cmd-vectored-batches", uring_cmd_same_io),
    ("uring-cmd-hipri", uring_cmd_same_io),
    ("uring-cmd-zipf-rate-logs", uring_cmd_zipf_rate_logs),
    ("uring-cmd-nvme-status", uring_cmd_nvme_status),
    ("cmdprio-uring-cmd", cmdprio_uring_cmd),
    ("cmdprio-bdev", cmdprio_bdev),
    ("zbd-seq-write", zbd_seq_write),
    ("zbd-rand-write", zbd_rand_write),
    ("zbd-max-open", zbd_max_open),
    ("zbd-job-max-open", zbd_job_max_open),
    ("zbd-ignore-limits", zbd_ignore_limits),
    ("zbd-uring-cmd", zbd_uring_cmd),
    ("zbd-verify-read", zbd_verify_read),
    ("zbd-jobs-uring", zbd_jobs_uring),
    ("zbd-jobs-psync", zbd_jobs_psync),
    ("zbd-two-sections", zbd_two_sections),
    ("zbd-many-jobs", zbd_many_jobs),
    ("zbd-trim", zbd_trim),
    ("zbd-refusals", zbd_refusals),
    ("zbd-long-seq", zbd_long_seq),
    ("zbd-long-rand-cmd", zbd_long_rand_cmd),
    ("examples", examples),
    ("pi", pi),
    ("pi-default", pi_default),
    ("pi-types", pi_types),
    ("ext-lba", ext_lba),
    ("ext-lba-pi", ext_lba_pi),
    ("ng-safety", ng_safety),
    ("fdp-env", fdp_env),
    ("fdp-roundrobin", fdp_roundrobin),
    ("fdp-random", fdp_random),
    ("fdp-scheme", fdp_scheme),
    ("streams", streams),
];

/// Cases only the long suite runs (`IOMARK_GUEST_LONG=1`).
const LONG_ONLY: &[&str] = &["zbd-long-seq", "zbd-long-rand-cmd", "examples"];

fn say(line: &str) {
    // Past the harness's capture, so CI's log has the list.
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// Runs the guest; `Err` is a reason the suite could not run here.
fn boot(out: &Path, long: bool) -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(root.join("tests/guest/run.sh"));
    cmd.arg("--iomark")
        .arg(env!("CARGO_BIN_EXE_iomark"))
        .arg("--out")
        .arg(out);
    if long {
        cmd.arg("--long");
    }
    // The guest itself is stopped at IOMARK_GUEST_TIMEOUT (900 s); this
    // bounds the set-up too.
    let o = match output_within(&mut cmd, std::time::Duration::from_secs(1800)) {
        Ok(o) => o,
        Err(Ran::NotStarted(e)) => return Err(format!("tests/guest/run.sh: {e}")),
        Err(hung) => panic!("tests/guest/run.sh: {hung}"),
    };
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let timing = String::from_utf8_lossy(&o.stdout).trim().to_string();
    match o.status.code() {
        Some(0) => Ok(timing),
        // Set-up: no QEMU, no archive, no root.
        Some(2) => Err(err.lines().last().unwrap_or("set-up failed").to_string()),
        _ => panic!("the guest did not run the suite to its end: {timing}\n{err}"),
    }
}

#[test]
fn nvme_guest_suite() {
    let _serial = cpu_heavy();
    if !is_root() {
        missing("the guest suite needs root (it installs QEMU when missing)");
        return;
    }
    let long = std::env::var("IOMARK_GUEST_LONG").is_ok_and(|v| v == "1");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/guest/out");
    // IOMARK_GUEST_REUSE=1: check the cases of the last run again (while
    // writing checks), without booting.
    let reuse = std::env::var("IOMARK_GUEST_REUSE").is_ok_and(|v| v == "1");
    let booted = if reuse {
        std::fs::read_to_string(out.join("timing.txt"))
            .map(|t| t.trim().to_string())
            .map_err(|e| format!("IOMARK_GUEST_REUSE=1 but no earlier run: {e}"))
    } else {
        boot(&out, long)
    };
    let timing = match booted {
        Ok(t) => t,
        Err(why) => {
            missing(&format!("the guest could not be set up: {why}"));
            return;
        }
    };
    let ran: Vec<String> = std::fs::read_to_string(out.join("cases.txt"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    let mut failed = Vec::new();
    let mut passed = 0;
    for name in &ran {
        let case = Case {
            dir: out.join("cases").join(name),
        };
        let verdict = match CHECKS.iter().find(|(n, _)| n == name) {
            Some((_, check)) => check(&case),
            None => Err("the guest ran it but nothing here checks it".into()),
        };
        match verdict {
            Ok(()) => {
                passed += 1;
                say(&format!("guest test {name} ... ok"));
            }
            Err(why) => {
                say(&format!("guest test {name} ... FAILED: {why}"));
                failed.push(name.clone());
            }
        }
    }
    for (name, _) in CHECKS {
        if !ran.iter().any(|r| r == name) && (long || !LONG_ONLY.contains(name)) {
            say(&format!(
                "guest test {name} ... FAILED: the guest did not run it"
            ));
            failed.push(name.to_string());
        }
    }
    let boot_line = timing
        .strip_prefix("guest: ")
        .unwrap_or(&timing)
        .to_string();
    if let Ok(devs) = devices(&out) {
        let names: Vec<String> = devs
            .iter()
            .filter_map(|(k, v)| {
                let ns = k.strip_prefix("IMK_")?.strip_suffix("_BDEV")?;
                Some(format!(
                    "{}={}",
                    ns.to_lowercase(),
                    v.trim_start_matches("/dev/")
                ))
            })
            .collect();
        say(&format!("guest devices: {}", names.join(" ")));
    }
    say(&format!(
        "guest suite: tests run: {} (passed: {passed}, failed: {}), {boot_line}",
        passed + failed.len(),
        failed.len()
    ));
    assert!(failed.is_empty(), "guest cases failed: {failed:?}");
}
