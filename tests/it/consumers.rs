//! Real consumers of fio's output read iomark's: fio-plot (PyPI) draws its
//! bar graph from a queue-depth series of JSON files and its time graph
//! from bw/iops/lat logs; fio_jsonplus_clat2csv and fio2gnuplot (Debian's
//! fio package) convert json+ and bandwidth logs. Each tool is used when
//! installed (fio-plot is installed into target/pyvenv when missing); a
//! test whose tool cannot be had goes through `common::missing` (fails in
//! strict mode, else skips with a message).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::*;

fn on_path(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(tool))
            .find(|f| f.is_file())
    })
}

/// fio-plot: from PATH, from target/pyvenv, or installed there with pip.
fn fio_plot() -> Option<PathBuf> {
    static TOOL: OnceLock<Option<PathBuf>> = OnceLock::new();
    TOOL.get_or_init(|| {
        if let Some(p) = on_path("fio-plot") {
            return Some(p);
        }
        let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join("pyvenv");
        let bin = venv.join("bin").join("fio-plot");
        if bin.is_file() {
            return Some(bin);
        }
        // Both under a deadline (pip fetches from PyPI: a stalled
        // download must not hang the suite). The install took 4.5 min
        // on a 2-core machine with two busy loops beside: 15 min for it.
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output_bounded()
            .is_ok_and(|o| o.status.success())
            && output_within(
                Command::new(venv.join("bin").join("pip")).args(["install", "-q", "fio-plot"]),
                std::time::Duration::from_secs(900),
            )
            .is_ok_and(|o| o.status.success());
        (ok && bin.is_file()).then_some(bin)
    })
    .clone()
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let o = cmd
        .output_bounded()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{what} failed:\n{out}\n{err}");
    assert!(
        !err.contains("Traceback") && !out.contains("Traceback"),
        "{what} raised:\n{out}\n{err}"
    );
    out
}

fn iomark_ok(dir: &Path, args: &[&str]) {
    let o = run_in(dir, args);
    assert!(o.status.success(), "iomark {args:?}: {}", stderr(&o));
}

fn nonempty(p: &Path) -> bool {
    std::fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false)
}

#[test]
fn fio_plot_draws_bars_from_a_queue_depth_series() {
    let Some(tool) = fio_plot() else {
        missing("fio-plot is not installed and could not be installed with pip (apt-get install python3-pip python3-venv)");
        return;
    };
    let dir = tempdir();
    for qd in ["1", "2", "4", "8"] {
        let depth = format!("--iodepth={qd}");
        let out = format!("--output=randread-{qd}.json");
        iomark_ok(
            dir.path(),
            &[
                "--name=qd",
                "--ioengine=null",
                "--rw=randread",
                "--bs=4k",
                "--size=256m",
                "--numjobs=1",
                &depth,
                "--output-format=json",
                &out,
            ],
        );
    }
    run_ok(
        Command::new(&tool)
            .current_dir(dir.path())
            .env("MPLBACKEND", "Agg")
            .args(["-i", ".", "-T", "iomark", "-l", "-r", "randread"])
            .args(["-d", "1", "2", "4", "8", "-n", "1", "-o", "bars.png"]),
        "fio-plot -l",
    );
    assert!(nonempty(&dir.path().join("bars.png")));
}

#[test]
fn fio_plot_draws_a_graph_from_bw_iops_lat_logs() {
    let Some(tool) = fio_plot() else {
        missing("fio-plot is not installed and could not be installed with pip (apt-get install python3-pip python3-venv)");
        return;
    };
    let dir = tempdir();
    let prefix = "randread-iodepth-1-numjobs-1";
    let bw = format!("--write_bw_log={prefix}");
    let iops = format!("--write_iops_log={prefix}");
    let lat = format!("--write_lat_log={prefix}");
    iomark_ok(
        dir.path(),
        &[
            "--name=logs",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--log_avg_msec=250",
            &bw,
            &iops,
            &lat,
        ],
    );
    for kind in ["bw", "iops", "clat", "lat", "slat"] {
        assert!(dir.path().join(format!("{prefix}_{kind}.1.log")).is_file());
    }
    run_ok(
        Command::new(&tool)
            .current_dir(dir.path())
            .env("MPLBACKEND", "Agg")
            .args(["-i", ".", "-T", "iomark", "-g", "-t", "bw", "iops", "lat"])
            .args(["-r", "randread", "-d", "1", "-n", "1", "-o", "graph.png"]),
        "fio-plot -g",
    );
    assert!(nonempty(&dir.path().join("graph.png")));
}

#[test]
fn fio_jsonplus_clat2csv_converts_jsonplus() {
    let Some(tool) = on_path("fio_jsonplus_clat2csv") else {
        missing("fio_jsonplus_clat2csv is not installed (apt-get install fio)");
        return;
    };
    let dir = tempdir();
    iomark_ok(
        dir.path(),
        &[
            "--output-format=json+",
            "--output=plus.json",
            "--ioengine=null",
            "--size=64m",
            "--slat_percentiles=1",
            "--lat_percentiles=1",
            "--name=mixed",
            "--rw=randrw",
            "--name=reads",
            "--rw=read",
        ],
    );
    let out = run_ok(
        Command::new(&tool)
            .current_dir(dir.path())
            .args(["plus.json", "plus.csv"]),
        "fio_jsonplus_clat2csv",
    );
    assert!(out.contains("plus_job0.csv"), "{out}");
    for job in ["plus_job0.csv", "plus_job1.csv"] {
        let csv = std::fs::read_to_string(dir.path().join(job)).unwrap();
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("nsec, read_slat_ns_count"));
        assert!(lines.count() > 0, "{job} has data rows");
    }
}

#[test]
fn fio2gnuplot_reads_bandwidth_logs() {
    let Some(tool) = on_path("fio2gnuplot") else {
        missing("fio2gnuplot is not installed (apt-get install fio)");
        return;
    };
    let dir = tempdir();
    iomark_ok(
        dir.path(),
        &[
            "--name=gp",
            "--ioengine=null",
            "--rw=randrw",
            "--size=1g",
            "--time_based",
            "--runtime=1",
            "--write_bw_log=gp",
            "--log_avg_msec=100",
        ],
    );
    let mut cmd = Command::new(&tool);
    cmd.current_dir(dir.path()).args(["-b", "-k"]);
    let gnuplot = on_path("gnuplot").is_some();
    if gnuplot {
        cmd.arg("-g");
    }
    let out = run_ok(&mut cmd, "fio2gnuplot");
    assert!(out.contains("gp_bw.1.log"), "{out}");
    let global = std::fs::read_to_string(dir.path().join("result.global")).unwrap();
    let avg: f64 = global
        .lines()
        .find_map(|l| l.strip_prefix("avg="))
        .expect("avg line")
        .parse()
        .unwrap();
    assert!(avg > 0.0, "{global}");
    assert!(nonempty(&dir.path().join("gnuplot_temp_file.0")));
}
