//! I/O traces: recording with write_iolog, replaying with read_iolog, and
//! exchanging traces with fio.

use std::path::Path;

use serde_json::Value;

use crate::common::{fio_json, opt_path, run_in, run_json, stderr, tempdir};

/// The I/O records of an iolog (version 2 or 3) without timestamps:
/// (file, action, offset, length).
fn io_records(path: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(path).expect("read iolog");
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    let v3 = header == "fio version 3 iolog";
    assert!(v3 || header == "fio version 2 iolog", "header {header:?}");
    lines
        .map(|l| {
            l.split_whitespace()
                .skip(usize::from(v3))
                .collect::<Vec<_>>()
        })
        .filter(|f| f.len() == 4)
        .map(|f| {
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// (total_ios, io_bytes) for read, write and trim of the first job.
fn totals(v: &Value) -> Vec<(u64, u64)> {
    let j = &v["jobs"][0];
    ["read", "write", "trim"]
        .iter()
        .map(|d| {
            (
                j[d]["total_ios"].as_u64().unwrap_or(0),
                j[d]["io_bytes"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn arg(k: &str, v: impl AsRef<Path>) -> String {
    // filename and read_iolog are ':'-separated lists (a drive's colon
    // escaped on Windows); write_iolog and replay_redirect name one file
    // as it is.
    if k == "filename" || k == "read_iolog" {
        format!("--{k}={}", opt_path(v))
    } else {
        format!("--{k}={}", v.as_ref().display())
    }
}

#[test]
fn recorded_trace_replays_exactly() {
    let dir = tempdir();
    let d = dir.path();
    let (a, b) = (d.join("a.log"), d.join("b.log"));
    let data = d.join("data");
    let first = run_json(
        d,
        &[
            "--name=rec",
            &arg("filename", &data),
            "--size=1m",
            "--rw=randwrite",
            "--bssplit=4k/50:16k/30:64k/20",
            "--fsync=8",
            &arg("write_iolog", &a),
        ],
    );
    let second = run_json(
        d,
        &[
            "--name=play",
            &arg("read_iolog", &a),
            &arg("write_iolog", &b),
            "--replay_no_stall=1",
        ],
    );
    let ra = io_records(&a);
    let rb = io_records(&b);
    assert!(ra.len() > 30, "{} records", ra.len());
    assert!(ra.iter().any(|r| r.1 == "sync"));
    let sizes: std::collections::HashSet<u64> = ra.iter().map(|r| r.3).collect();
    assert!(sizes.len() >= 3, "sizes {sizes:?}");
    assert_eq!(ra, rb, "the replay issued other I/O than recorded");
    assert_eq!(totals(&first), totals(&second));
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains(" add\n") && text.contains(" open\n") && text.contains(" close\n"));
}

#[test]
fn a_job_file_can_replay_what_an_earlier_job_recorded() {
    let dir = tempdir();
    let d = dir.path();
    let job = format!(
        "[rec]\nfilename={data}\nsize=256k\nrw=randrw\nwrite_iolog={a}\n\
         [play]\nstonewall\nread_iolog={a_list}\nreplay_no_stall=1\nwrite_iolog={b}\n",
        data = opt_path(d.join("data")),
        a = d.join("a.log").display(),
        a_list = opt_path(d.join("a.log")),
        b = d.join("b.log").display(),
    );
    std::fs::write(d.join("chain.fio"), job).unwrap();
    let v = run_json(d, &["chain.fio"]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for dir in ["read", "write"] {
        assert_eq!(jobs[0][dir]["io_bytes"], jobs[1][dir]["io_bytes"], "{dir}");
    }
    assert_eq!(io_records(&d.join("a.log")), io_records(&d.join("b.log")));
}

#[test]
fn replay_redirect_sends_all_io_to_one_file() {
    let dir = tempdir();
    let d = dir.path();
    let trace = d.join("t.log");
    std::fs::write(
        &trace,
        "fio version 2 iolog\n/nonexistent/a add\n/nonexistent/b add\n\
         /nonexistent/a open\n/nonexistent/b open\n\
         /nonexistent/a write 0 4096\n/nonexistent/b write 8192 8192\n\
         /nonexistent/a close\n/nonexistent/b close\n",
    )
    .unwrap();
    let target = d.join("target");
    let out = d.join("out.log");
    let v = run_json(
        d,
        &[
            "--name=r",
            &arg("read_iolog", &trace),
            &arg("replay_redirect", &target),
            &arg("write_iolog", &out),
        ],
    );
    assert_eq!(totals(&v)[1], (2, 12288));
    let t = target.display().to_string();
    assert_eq!(
        io_records(&out),
        vec![
            (t.clone(), "write".into(), 0, 4096),
            (t, "write".into(), 8192, 8192)
        ]
    );
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 16384);
}

#[test]
fn replay_follows_the_trace_timing() {
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("data");
    std::fs::write(&data, vec![1u8; 16384]).unwrap();
    let trace = d.join("t.log");
    let p = data.display();
    // Reads spread over 1.6 s of trace time.
    std::fs::write(
        &trace,
        format!(
            "fio version 3 iolog\n0 {p} add\n0 {p} open\n0 {p} read 0 4096\n\
             800000 {p} read 4096 4096\n1600000 {p} read 8192 4096\n1600001 {p} close\n"
        ),
    )
    .unwrap();
    let runtime = |extra: &str| {
        let v = run_json(d, &["--name=r", &arg("read_iolog", &trace), extra]);
        assert_eq!(totals(&v)[0], (3, 12288));
        v["jobs"][0]["job_runtime"].as_u64().unwrap()
    };
    // Four times as fast: at least 0.4 s.
    let scaled = runtime("--replay_time_scale=400");
    assert!(scaled >= 390, "replay took {scaled} ms");
    let fast = runtime("--replay_no_stall=1");
    assert!(
        fast < scaled,
        "no_stall took {fast} ms, timed took {scaled} ms"
    );
}

#[test]
#[cfg_attr(windows, ignore = "compares with fio 3.33, which runs on Linux")]
fn fio_and_iomark_replay_each_others_traces() {
    crate::require_fio!();
    let dir = tempdir();
    let d = dir.path();
    // A trace recorded by fio, replayed by both.
    let fio_log = d.join("fio.log");
    let fio_rec = fio_json(
        d,
        &[
            "--name=rec",
            &arg("filename", d.join("f1")),
            "--size=512k",
            "--rw=randrw",
            "--bs=4k",
            &arg("write_iolog", &fio_log),
        ],
    );
    let ours = run_json(
        d,
        &[
            "--name=r",
            &arg("read_iolog", &fio_log),
            "--replay_no_stall=1",
            // fio created the file the trace writes to.
            "--allow_destroy_data=1",
        ],
    );
    assert_eq!(totals(&ours), totals(&fio_rec));
    // A trace recorded by iomark, replayed by fio.
    let our_log = d.join("iomark.log");
    let our_rec = run_json(
        d,
        &[
            "--name=rec",
            &arg("filename", d.join("f2")),
            "--size=512k",
            "--rw=randrw",
            "--bs=8k",
            "--fdatasync=4",
            &arg("write_iolog", &our_log),
        ],
    );
    let theirs = fio_json(
        d,
        &[
            "--name=r",
            &arg("read_iolog", &our_log),
            "--replay_no_stall=1",
        ],
    );
    assert_eq!(totals(&theirs), totals(&our_rec));
}

#[test]
fn bad_traces_are_clear_errors() {
    let dir = tempdir();
    let d = dir.path();
    let v1 = d.join("v1.log");
    std::fs::write(&v1, "0, 0, 4096\n").unwrap();
    let cases = [
        (
            vec!["--name=r".to_string(), arg("read_iolog", &v1)],
            "version 1",
        ),
        (
            vec!["--name=r".to_string(), arg("read_iolog", d.join("none"))],
            "cannot read read_iolog",
        ),
        (
            vec![
                "--name=r".into(),
                arg("read_iolog", &v1),
                "--replay_skip=all".into(),
            ],
            "replay_skip",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // One trace for several clones at once.
    let o = run_in(
        d,
        &[
            "--name=w",
            "--size=64k",
            "--rw=write",
            "--numjobs=2",
            "--write_iolog=y.log",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("numjobs"), "{}", stderr(&o));
    // Replaying a trace that a job of the same phase is writing.
    let job = "[w]\nfilename=data\nsize=64k\nrw=write\nwrite_iolog=x.log\n[r]\nread_iolog=x.log\n";
    std::fs::write(d.join("same.fio"), job).unwrap();
    let o = run_in(d, &["same.fio"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("stonewall"), "{}", stderr(&o));
    assert!(!d.join("data").exists(), "a rejected job wrote its file");
}

#[test]
fn clones_replay_their_own_traces() {
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("data");
    std::fs::write(&data, vec![0u8; 65536]).unwrap();
    let p = data.display();
    let one = d.join("one.log");
    let two = d.join("two.log");
    std::fs::write(
        &one,
        format!("fio version 2 iolog\n{p} add\n{p} read 0 4096\n"),
    )
    .unwrap();
    std::fs::write(
        &two,
        format!("fio version 2 iolog\n{p} add\n{p} read 0 8192\n{p} read 8192 8192\n"),
    )
    .unwrap();
    let traces = format!("--read_iolog={}:{}", opt_path(&one), opt_path(&two));
    let v = run_json(d, &["--name=r", &traces, "--numjobs=2"]);
    let jobs = v["jobs"].as_array().unwrap();
    let bytes: Vec<u64> = jobs
        .iter()
        .map(|j| j["read"]["io_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, vec![4096, 16384]);
}

// A loop device.
#[cfg(target_os = "linux")]
#[test]
fn a_replay_redirected_onto_a_device_holding_data_is_refused() {
    use std::os::unix::fs::FileExt;
    let dir = tempdir();
    let d = dir.path();
    let Some(dev) = crate::loopdev::LoopDev::new(d, 4 << 20) else {
        return;
    };
    // An ext4 superblock magic.
    let img = std::fs::OpenOptions::new()
        .write(true)
        .open(&dev.image)
        .unwrap();
    img.write_at(&[0x53, 0xEF], 1080).unwrap();
    let trace = d.join("t.log");
    std::fs::write(&trace, "fio version 2 iolog\n/x add\n/x write 0 4096\n").unwrap();
    let redirect = arg("replay_redirect", &dev.path);
    let o = run_in(d, &["--name=r", &arg("read_iolog", &trace), &redirect]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("allow_destroy_data"), "{}", stderr(&o));
    // The same when the trace is recorded by an earlier job of the run.
    let job = format!(
        "[rec]\nfilename=data\nsize=64k\nrw=write\nwrite_iolog=a.log\n\
         [play]\nstonewall\nread_iolog=a.log\nreplay_redirect={}\n",
        dev.path.display()
    );
    std::fs::write(d.join("chain.fio"), job).unwrap();
    let o = run_in(d, &["chain.fio", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("allow_destroy_data"), "{}", stderr(&o));
    let mut head = vec![0u8; 1024];
    std::fs::File::open(&dev.image)
        .unwrap()
        .read_exact_at(&mut head, 0)
        .unwrap();
    assert!(head.iter().all(|b| *b == 0), "the device was written");
}
