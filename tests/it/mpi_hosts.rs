//! A run over two or three hosts (network namespaces with their own host
//! names, started by mpirun through a launch agent as ssh would): each
//! host's ranks merged there first, a host stopped mid-phase, a rank
//! killed (`IOMARK_TEST_TRIES=N` repeats each kill N times), a link cut,
//! the figures while all ranks ran, `--mpi-stonewall`, and both hosts
//! against one S3 server (SeaweedFS, as in `s3.rs`), killed mid-phase too.

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, missing, tempdir, Bounded};
use crate::mpi::{json_of, mpi_iomark, mpirun, rank_pid};

/// Three "hosts" named imk1, imk2 and imk3 (their UTS names), each a network
/// namespace on a bridge with this namespace; removed when dropped. One
/// test of this process at a time has them. The namespaces, links and
/// subnet are this process's own (see [`Net`]), so that two test runs on
/// one machine (two worktrees, say) do not take each other's.
struct Hosts(#[allow(dead_code)] MutexGuard<'static, ()>);

static NETNS: Mutex<()> = Mutex::new(());

/// How many hosts the harness has (a test's hostfile names the first
/// ones it needs).
const HOSTS: usize = 3;

/// The names and addresses of this process's hosts.
struct Net {
    /// The network namespaces of imk1, imk2, imk3.
    ns: [String; HOSTS],
    /// Their veth links' names in this namespace.
    veth: [String; HOSTS],
    bridge: String,
    /// 10.79.N: a /24 no interface of the machine has an address in
    /// when the process first needs it.
    prefix: String,
}

impl Net {
    fn get() -> &'static Net {
        static NET: std::sync::OnceLock<Net> = std::sync::OnceLock::new();
        NET.get_or_init(|| {
            let pid = std::process::id();
            let used = Command::new("ip")
                .args(["-o", "-4", "addr", "show"])
                .output_bounded()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let third = (0..250)
                .map(|i| (pid + i) % 250 + 1)
                .find(|n| !used.contains(&format!(" 10.79.{n}.")))
                .unwrap_or(pid % 250 + 1);
            Net {
                ns: ["a", "b", "c"].map(|x| format!("imk{pid}{x}")),
                veth: ["a", "b", "c"].map(|x| format!("vimk{pid}{x}")),
                bridge: format!("imkbr{pid}"),
                prefix: format!("10.79.{third}"),
            }
        })
    }

    /// The address of host `i` (0: imk1, 1: imk2, 2: imk3).
    fn addr(&self, i: usize) -> String {
        format!("{}.1{}", self.prefix, i + 1)
    }

    fn subnet(&self) -> String {
        format!("{}.0/24", self.prefix)
    }

    fn teardown(&self) -> String {
        let mut s = String::new();
        for (ns, veth) in self.ns.iter().zip(&self.veth) {
            s += &format!("ip netns del {ns}; ip link del {veth}; ");
        }
        s + &format!("ip link del {}", self.bridge)
    }
}

fn sh(script: &str) -> bool {
    Command::new("sh")
        .args(["-c", script])
        .output_bounded()
        .is_ok_and(|o| o.status.success())
}

impl Hosts {
    fn up() -> Option<Hosts> {
        if !common::is_root() {
            missing("network namespaces need root");
            return None;
        }
        let guard = NETNS.lock().unwrap_or_else(|e| e.into_inner());
        let n = Net::get();
        // The kernel removes a deleted namespace's veth pair in the
        // background: the previous test's may still be there for a
        // moment ("File exists"), so the set-up is tried again after a
        // clean-up, a few times.
        let mut ok = false;
        for _ in 0..10 {
            let _ = sh(&format!("{{ {}; }} 2>/dev/null", n.teardown()));
            let mut script = format!(
                "set -e
                ip link add {br} type bridge
                ip addr add {p}.1/24 dev {br}
                ip link set {br} up
",
                br = n.bridge,
                p = n.prefix
            );
            for i in 0..HOSTS {
                script += &format!(
                    "ip netns add {ns}
                    ip link add {veth} type veth peer name eth0 netns {ns}
                    ip link set {veth} master {br} up
                    ip -n {ns} addr add {addr}/24 dev eth0
                    ip -n {ns} link set eth0 up
                    ip -n {ns} link set lo up
",
                    ns = n.ns[i],
                    veth = n.veth[i],
                    br = n.bridge,
                    addr = n.addr(i)
                );
            }
            ok = sh(&script);
            if ok {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        let h = Hosts(guard);
        if !ok {
            missing("cannot set up network namespaces (ip netns, veth, bridge)");
            return None;
        }
        Some(h)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let _ = sh(&format!("{{ {}; }} 2>/dev/null", Net::get().teardown()));
    }
}

/// mpirun's arguments to start one rank on each of two hosts through
/// `agent`.
fn two_host_args(dir: &Path) -> Vec<String> {
    host_args(dir, 1)
}

/// mpirun's arguments to start `slots` ranks on each of two hosts (the
/// first host's first) through `agent`.
fn host_args(dir: &Path, slots: u32) -> Vec<String> {
    hosts_args(dir, 2, slots)
}

/// mpirun's arguments to start `slots` ranks on each of the first
/// `count` hosts (imk1's first, then imk2's, ...) through `agent`.
fn hosts_args(dir: &Path, count: usize, slots: u32) -> Vec<String> {
    let n = Net::get();
    let agent = dir.join("agent.sh");
    let cases: String = (0..HOSTS)
        .map(|i| format!("{}) ns={} h=imk{} ;; ", n.addr(i), n.ns[i], i + 1))
        .collect();
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n\
             while [ $# -gt 0 ]; do case \"$1\" in -*) shift ;; *) break ;; esac; done\n\
             host=$1; shift\n\
             case \"$host\" in {cases}*) exit 1 ;; esac\n\
             exec ip netns exec \"$ns\" unshare --uts sh -c \"hostname $h; $*\"\n",
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hosts = dir.join("hosts");
    let list: String = (0..count)
        .map(|i| format!("{} slots={slots}\n", n.addr(i)))
        .collect();
    std::fs::write(&hosts, list).unwrap();
    [
        "--hostfile",
        &hosts.to_string_lossy(),
        "--mca",
        "plm_rsh_agent",
        &agent.to_string_lossy(),
        "--mca",
        "btl_tcp_if_include",
        &n.subnet(),
        "--mca",
        "oob_tcp_if_include",
        &n.subnet(),
        "-wdir",
        &dir.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn two_hosts_report_each_host_and_all_clients_and_log_apart() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let d = tempdir();
    let args = two_host_args(d.path());
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(
        &bin,
        d.path(),
        2,
        &extra,
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--write_bw_log=w",
            "--output-format=json+",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    let cs = v["client_stats"].as_array().expect("client_stats");
    let host_of = |c: &serde_json::Value| c["hostname"].as_str().unwrap_or("").to_string();
    let hosts: Vec<String> = cs
        .iter()
        .filter(|c| c["jobname"] == "w")
        .map(host_of)
        .collect();
    assert_eq!(hosts, ["imk1", "imk2"], "{v}");
    let all = cs
        .iter()
        .find(|c| c["jobname"] == "All clients")
        .expect("All clients");
    assert_eq!(all["write"]["total_ios"], 128, "{all}");
    // The merged latency histogram holds every I/O of both hosts.
    let bins: u64 = all["write"]["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins")
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(bins, 128);
    assert_eq!(v["iomark"]["cluster"]["ranks"], 2);
    // Each host is described as it found itself, not as rank 0 did.
    for h in v["iomark"]["cluster"]["hosts"].as_array().unwrap() {
        assert_eq!(h["environment"]["host"]["hostname"], h["hostname"], "{h}");
    }
    // Each host wrote its own log, named after it.
    assert!(d.path().join("w_bw.1.log.imk1").exists());
    assert!(d.path().join("w_bw.1.log.imk2").exists());
}

/// A job file whose size is 4 MiB on rank 0 and 8 MiB on rank 1, at
/// 8 MiB/s each: rank 0 is done after 0.5 s, rank 1 after 1 s.
fn uneven(dir: &Path) -> Vec<String> {
    std::fs::write(
        dir.join("u.fio"),
        "[global]\nioengine=psync\nrw=write\nbs=4k\n[u]\nsize=${SZ}\nrate=8m\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run.sh"),
        "SZ=4m; [ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && SZ=8m; export SZ; exec \"$@\"\n",
    )
    .unwrap();
    vec![
        "sh".into(),
        dir.join("run.sh").to_string_lossy().into_owned(),
    ]
}

/// The `phases` of a run's JSON.
fn phase(v: &serde_json::Value) -> &serde_json::Value {
    &v["iomark"]["cluster"]["phases"][0]
}

#[test]
fn figures_while_all_ranks_ran_and_until_the_last_was_done() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let mut cmd = uneven(d.path());
    cmd.push(bin.to_string_lossy().into_owned());
    let o = mpirun(
        Path::new(&cmd[0]),
        d.path(),
        2,
        &[],
        &[&cmd[1], &cmd[2], "u.fio", "--output-format=json"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    let p = phase(&v);
    let first = p["first_done_ms"].as_u64().unwrap();
    let last = p["last_done_ms"].as_u64().unwrap();
    assert!((450..800).contains(&first), "{p}");
    assert!((950..1400).contains(&last), "{p}");
    // Until the last was done: every byte of both ranks (12 MiB).
    assert_eq!(p["until_last_done"]["write"]["io_bytes"], 12 << 20, "{p}");
    // While both ran: rank 0's 4 MiB and about as much of rank 1's, so
    // about twice one rank's rate (16 MiB/s), not the 12 MiB/s average.
    let all_bw = p["all_running"]["write"]["bw_bytes"].as_u64().unwrap() as f64;
    let mib = (1u64 << 20) as f64;
    assert!(all_bw > 14.0 * mib && all_bw < 18.0 * mib, "{p}");
    // Nobody was stopped: rank 1 did all of its 8 MiB.
    let cs = v["client_stats"].as_array().unwrap();
    let ios: Vec<u64> = cs
        .iter()
        .filter(|c| c["jobname"] == "u")
        .map(|c| c["write"]["total_ios"].as_u64().unwrap())
        .collect();
    assert_eq!(ios, [1024, 2048], "{v}");
}

#[test]
fn mpi_stonewall_ends_the_phase_on_every_rank_when_the_first_is_done() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    let cmd = uneven(d.path());
    let o = mpirun(
        Path::new(&cmd[0]),
        d.path(),
        2,
        &[],
        &[
            &cmd[1],
            &bin.to_string_lossy(),
            "u.fio",
            "--mpi-stonewall",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    let cs = v["client_stats"].as_array().unwrap();
    let ios: Vec<u64> = cs
        .iter()
        .filter(|c| c["jobname"] == "u")
        .map(|c| c["write"]["total_ios"].as_u64().unwrap())
        .collect();
    // Rank 0 did its 1024 writes; rank 1 stopped soon after, far short of
    // its 2048, and without an error.
    assert_eq!(ios[0], 1024, "{v}");
    assert!(ios[1] > 800 && ios[1] < 1400, "{v}");
    assert!(cs.iter().all(|c| c["error"] == 0), "{v}");
    let p = phase(&v);
    let (first, last) = (
        p["first_done_ms"].as_u64().unwrap(),
        p["last_done_ms"].as_u64().unwrap(),
    );
    assert!(last - first < 300, "{p}");
}

#[test]
fn ranks_share_one_file_each_writing_its_own_region() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let d = tempdir();
    // N-to-1: one file, created by rank 0 during the run, extended and
    // used by the others; rank r writes [r MiB, r+1 MiB).
    let o = mpirun(
        &bin,
        d.path(),
        3,
        &[],
        &[
            "--name=n",
            "--ioengine=psync",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--offset_increment=1m",
            "--filename=shared.dat",
            "--write_iolog=trace",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    let per_host: Vec<u64> = v["client_stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["jobname"] == "n")
        .map(|c| c["write"]["total_ios"].as_u64().unwrap())
        .collect();
    assert_eq!(per_host, [16, 16, 16], "{v}");
    assert_eq!(
        std::fs::metadata(d.path().join("shared.dat"))
            .unwrap()
            .len(),
        3 << 20
    );
    // Each rank's trace (named with its host and rank) holds its writes:
    // all inside its own MiB.
    let host = String::from_utf8(
        Command::new("uname")
            .arg("-n")
            .output_bounded()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for r in 0..3u64 {
        let trace =
            std::fs::read_to_string(d.path().join(format!("trace.{}.{r}", host.trim()))).unwrap();
        let offsets: Vec<u64> = trace
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.get(2) == Some(&"write")).then(|| f[3].parse().unwrap())
            })
            .collect();
        assert_eq!(offsets.len(), 16, "{trace}");
        assert!(
            offsets.iter().all(|o| o / (1 << 20) == r),
            "rank {r}: {offsets:?}"
        );
    }
}

#[test]
fn without_the_mpi_feature_mpi_says_how_to_build_it() {
    let _serial = common::cpu_heavy();
    let d = tempdir();
    for env in [None, Some(("OMPI_COMM_WORLD_RANK", "0"))] {
        let mut c = common::iomark();
        c.current_dir(d.path());
        if let Some((k, val)) = env {
            c.env(k, val);
        } else {
            c.arg("--mpi");
        }
        let o = c
            .args(["--name=x", "--ioengine=null", "--size=1m"])
            .output_bounded()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("cargo build --release --features mpi"),
            "{err}"
        );
        assert!(common::stdout(&o).is_empty());
    }
}

/// The JSON document of `out` (after the text's "Starting" line) and the
/// text after it.
fn json_then_text(out: &[u8]) -> (Value, String) {
    let start = out
        .iter()
        .position(|&b| b == b'{')
        .expect("a JSON document");
    let out = &out[start..];
    let mut it = serde_json::Deserializer::from_slice(out).into_iter::<Value>();
    let v = it.next().expect("a JSON document").expect("valid JSON");
    let rest = String::from_utf8_lossy(&out[it.byte_offset()..]).into_owned();
    (v, rest)
}

/// The pid a host's block of the text report shows.
fn pid_of(text: &str, host: &str) -> String {
    let at = text
        .find(&format!("<{host}>"))
        .unwrap_or_else(|| panic!("no <{host}> block: {text}"));
    let rest = &text[at..];
    let p = rest.find(" pid=").expect("a pid") + 5;
    rest[p..].chars().take_while(char::is_ascii_digit).collect()
}

#[test]
fn two_hosts_of_two_ranks_merge_on_each_host_first() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let d = tempdir();
    let args = host_args(d.path(), 2);
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mpirun(
        &bin,
        d.path(),
        4,
        &extra,
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--output-format=json+,normal",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (v, text) = json_then_text(&o.stdout);
    let cs = v["client_stats"].as_array().expect("client_stats");
    // One entry per host: its two ranks merged there, exactly.
    let per_host: Vec<(String, u64)> = cs
        .iter()
        .filter(|c| c["jobname"] == "w")
        .map(|c| {
            (
                c["hostname"].as_str().unwrap().to_string(),
                c["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per_host,
        [("imk1".to_string(), 128), ("imk2".to_string(), 128)],
        "{v}"
    );
    let all = cs.iter().find(|c| c["jobname"] == "All clients").unwrap();
    assert_eq!(all["write"]["total_ios"], 256);
    let bins: u64 = all["write"]["clat_ns"]["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(bins, 256);
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["hosts"][0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(c["hosts"][1]["ranks"], serde_json::json!([2, 3]));
    assert_eq!(c["phases"][0]["ranks"], 4);
    assert_eq!(c["ranks_reported"], 4);
    assert!(c["merge"]["rank0_ns"].as_u64() > Some(0), "{c}");
    // The text: each host's block says it merged two clones, with its
    // own process's pid (not rank 0's).
    let imk2 = &text[text.find("<imk2>").expect("<imk2>")..];
    assert!(imk2.contains("w: (groupid=0, jobs=2)"), "{text}");
    assert_ne!(pid_of(&text, "imk1"), pid_of(&text, "imk2"), "{text}");
}

#[test]
fn a_host_stopped_mid_phase_is_named_and_the_other_ranks_report() {
    let _serial = common::timing_alone();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let d = tempdir();
    let out = d.path().join("out.json");
    let mut args = host_args(d.path(), 2);
    // Open MPI's daemon on a host, told to end its ranks, waits twice
    // this many seconds (1 by default) before it kills one still alive
    // then; iomark's ranks leave by themselves and end a stopped rank of
    // their host, but may still be alive at that moment. The test is
    // about iomark's part: without that wait.
    args.extend(["--mca", "odls_base_sigkill_timeout", "0"].map(String::from));
    args.extend(["-np".into(), "4".into(), bin.to_string_lossy().into_owned()]);
    args.extend(crate::mpi_faults::LONG.map(String::from));
    args.push(format!("--output={}", out.display()));
    // Not under `timeout`: its process group keeps mpirun from ending
    // the ranks it started through the agent promptly.
    let mut child = Command::new("mpirun")
        .arg("--allow-run-as-root")
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let t0 = Instant::now();
    let mut leader = None;
    while leader.is_none() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
        leader = rank_pid(&bin, 3, child.id() as i32).and(rank_pid(&bin, 2, child.id() as i32));
    }
    let leader = leader.expect("rank 2 started");
    std::thread::sleep(Duration::from_secs(2));
    // The first rank of host imk2: its own rank 3 hangs below rank 0 now.
    // SAFETY: kill has no memory precondition.
    unsafe { libc::kill(leader, libc::SIGSTOP) };
    let stopped = Instant::now();
    while child.try_wait().unwrap().is_none() && stopped.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = stopped.elapsed();
    eprintln!("host imk2's first rank stopped: mpirun ended {took:?} later");
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    // SAFETY: as above.
    unsafe { libc::kill(leader, libc::SIGKILL) };
    let err = common::stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("iomark: rank 2 (host imk2) sent nothing for 3 s during phase 1"),
        "{err}"
    );
    // 20 runs with two busy loops beside: 2.98-4.23 s.
    assert!(took < crate::mpi_faults::STOP_BOUND, "took {took:?}: {err}");
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("a report");
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["ranks_reported"], 3, "{c}");
    assert_eq!(c["missing"][0]["ranks"], serde_json::json!([2]), "{c}");
    assert_eq!(c["missing"][0]["hostnames"], serde_json::json!(["imk2"]));
    let hosts: Vec<(&str, &Value)> = c["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["hostname"].as_str().unwrap(), &h["ranks"]))
        .collect();
    assert_eq!(
        hosts,
        [
            ("imk1", &serde_json::json!([0, 1])),
            ("imk2", &serde_json::json!([3]))
        ]
    );
}

/// Three hosts of two ranks (0, 1 on imk1; 2, 3 on imk2; 4, 5 on imk3),
/// `victim` killed (SIGKILL) mid-phase, the report to a file: mpirun's
/// status and stderr, and the report, or why there is none.
fn kill_mid_phase(victim: u32) -> Result<(std::process::Output, Value), String> {
    let bin = mpi_iomark().expect("checked by the caller");
    let d = tempdir();
    let out = d.path().join("out.json");
    let mut args = hosts_args(d.path(), 3, 2);
    args.extend(["-np".into(), "6".into(), bin.to_string_lossy().into_owned()]);
    args.extend(
        [
            "--mpi-timeout=20",
            "--name=t",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--time_based",
            "--runtime=20",
            "--output-format=json",
        ]
        .map(String::from),
    );
    args.push(format!("--output={}", out.display()));
    let mut child = Command::new("mpirun")
        .arg("--allow-run-as-root")
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let t0 = Instant::now();
    let mut pids = None;
    while pids.is_none() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
        pids = (0..6)
            .map(|r| rank_pid(&bin, r, child.id() as i32))
            .collect::<Option<Vec<i32>>>();
    }
    let pids = pids.expect("every rank started");
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill has no memory precondition.
    unsafe { libc::kill(pids[victim as usize], libc::SIGKILL) };
    let killed = Instant::now();
    while child.try_wait().unwrap().is_none() && killed.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = killed.elapsed();
    eprintln!("rank {victim} killed: mpirun ended {took:?} later");
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    for &p in &pids {
        // SAFETY: as above.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    let err = common::stderr(&o);
    // The launcher ends the job on a rank that died: well before the
    // 20 s the other ranks would wait for a silent one.
    if took >= Duration::from_secs(10) {
        return Err(format!("took {took:?}: {err}"));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    match serde_json::from_str(&text) {
        Ok(v) => Ok((o, v)),
        Err(e) => Err(format!(
            "no report ({e}), exit {:?}: {text}\n{err}",
            o.status
        )),
    }
}

/// The report after `victim` was killed: every other rank reported, the
/// dead one alone missing, named with its host; mpirun failed.
fn check_killed(victim: u32, host: &str) -> Result<(), String> {
    let (o, v) = kill_mid_phase(victim)?;
    let err = common::stderr(&o);
    let c = &v["iomark"]["cluster"];
    let missing = c["missing"].as_array().cloned().unwrap_or_default();
    let named = missing.len() == 1
        && missing[0]["ranks"] == serde_json::json!([victim])
        && missing[0]["hostnames"] == serde_json::json!([host])
        && missing[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("its process is gone"));
    // What the others did is there.
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
    if o.status.success() || c["ranks_reported"] != 5 || !named || ios == 0 {
        return Err(format!(
            "rank {victim} killed: exit {:?}, cluster {c}, read I/Os {ios}\n{err}",
            o.status
        ));
    }
    Ok(())
}

/// `check_killed` of each victim, `IOMARK_TEST_TRIES` times (1 unless
/// set: 10 to count how often each holds); every failure is printed,
/// and the test fails on any.
fn kill_tries(victims: &[(u32, &str)]) {
    let tries: u32 = std::env::var("IOMARK_TEST_TRIES")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let mut failed = Vec::new();
    for &(victim, host) in victims {
        let mut ok = 0;
        for _ in 0..tries {
            match check_killed(victim, host) {
                Ok(()) => ok += 1,
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    failed.push(e);
                }
            }
        }
        eprintln!("rank {victim} killed: {ok} of {tries} gave the report");
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn a_killed_rank_below_rank_0_is_named_and_every_other_rank_reports() {
    let _serial = common::timing_alone();
    let Some(_) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    // Rank 1 hangs below rank 0 on its host; rank 2 leads host imk2 (its
    // rank 3 then hangs below rank 0).
    kill_tries(&[(1, "imk1"), (2, "imk2")]);
}

#[test]
fn a_killed_leaf_rank_is_named_and_its_parent_is_not_missing() {
    let _serial = common::timing_alone();
    let Some(_) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    // Ranks 3 and 5: below their hosts' leaders, themselves below rank 0.
    kill_tries(&[(5, "imk3"), (3, "imk2")]);
}

/// Two hosts of two ranks: the summary names the slowest and the fastest
/// host with their figures and the spread over hosts, and with
/// `--mpi-host-detail=1` every host is kept in brief: no per-host
/// `client_stats`, per-phase figures per host that add up to the merged
/// total exactly, and one line per host and phase in the text.
#[test]
fn the_summary_names_slowest_and_fastest_host_and_hosts_in_brief_add_up() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let d = tempdir();
    let args = host_args(d.path(), 2);
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let job = [
        "--name=r",
        "--ioengine=psync",
        "--rw=randread",
        "--bs=4k",
        "--size=256k",
        "--output-format=json,normal",
    ];
    for brief in [false, true] {
        let mut j: Vec<&str> = job.to_vec();
        if brief {
            j.push("--mpi-host-detail=1");
        }
        let o = mpirun(&bin, d.path(), 4, &extra, &j);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let (v, text) = json_then_text(&o.stdout);
        let c = &v["iomark"]["cluster"];
        let s = &c["summary"][0];
        assert_eq!(
            (s["phase"].as_u64(), s["direction"].as_str()),
            (Some(1), Some("read")),
            "{c}"
        );
        assert_eq!(s["hosts"], 2);
        let mut names = [
            s["slowest"]["hostname"].as_str().unwrap_or(""),
            s["fastest"]["hostname"].as_str().unwrap_or(""),
        ];
        names.sort_unstable();
        assert!(names == ["imk1", "imk2"] || names[0] == names[1], "{s}");
        assert!(s["bw_bytes"]["min"].as_u64() <= s["bw_bytes"]["max"].as_u64());
        assert!(s["clat_p99_ns"]["min"].as_u64().unwrap_or(0) > 0, "{s}");
        assert!(
            text.contains("Hosts, phase 1 read (2 hosts):\n  slowest: imk"),
            "{text}"
        );
        assert!(text.contains("  min/median/max: bw="), "{text}");
        let hosts = c["hosts"].as_array().expect("hosts");
        assert_eq!(hosts.len(), 2);
        let ios: u64 = hosts
            .iter()
            .map(|h| h["phases"][0]["read"]["total_ios"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(ios, 4 * 64, "{c}");
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 4 * 64);
        let per_host = v["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["jobname"] == "r")
            .count();
        if brief {
            assert_eq!(c["host_detail"], "brief");
            assert_eq!(per_host, 0, "{v}");
            assert!(
                text.contains("<imk2> ranks 2-3: phase 1 read: bw="),
                "{text}"
            );
            assert_eq!(hosts[1]["ranks"], serde_json::json!([2, 3]));
        } else {
            assert_eq!(c["host_detail"], "full");
            assert_eq!(per_host, 2, "{v}");
        }
    }
}

/// Brings a link back up when dropped, whatever the test did.
struct LinkBack(String);

impl Drop for LinkBack {
    fn drop(&mut self) {
        sh(&format!("ip link set {} up", self.0));
    }
}

/// imk2's link cut mid-phase: the ranks name its ranks missing, rank 0
/// writes the report and ends the job, and `mpirun` (with the keepalive
/// flags the README gives) is gone within `--mpi-timeout` + 5 s.
#[test]
fn a_cut_link_ends_mpirun_within_the_timeout_and_the_report_names_the_host() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let d = tempdir();
    let out = d.path().join("out.json");
    let mut args = host_args(d.path(), 2);
    // The flags the README gives: a short keepalive (mpirun gives up on
    // the cut host's daemon ~3 s after the cut), and 2 s between the
    // SIGTERM that then stops every rank and the SIGKILL, in which rank 0
    // writes the report. (With the default 1 s, rank 0 was killed before
    // it had written anything; a keepalive idle time above the timeout
    // let mpirun hang: it had data in flight to the cut host by then.)
    for (k, v) in [
        ("oob_tcp_keepalive_time", "1"),
        ("oob_tcp_keepalive_intvl", "1"),
        ("oob_tcp_keepalive_probes", "2"),
        ("odls_base_sigkill_timeout", "2"),
    ] {
        args.extend(["--mca".into(), k.into(), v.into()]);
    }
    args.extend(["-np".into(), "4".into(), bin.to_string_lossy().into_owned()]);
    args.extend(crate::mpi_faults::LONG.map(String::from));
    args.push(format!("--output={}", out.display()));
    // To files, not pipes: the cut host's daemon, orphaned, keeps
    // mpirun's pipes open after mpirun is gone.
    let log = |n: &str| std::fs::File::create(d.path().join(n)).unwrap();
    let mut child = Command::new("mpirun")
        .arg("--allow-run-as-root")
        .args(&args)
        .stdout(log("stdout"))
        .stderr(log("stderr"))
        .spawn()
        .expect("mpirun starts");
    let t0 = Instant::now();
    let mut pids = None;
    while pids.is_none() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
        pids = (0..4)
            .map(|r| rank_pid(&bin, r, child.id() as i32))
            .collect::<Option<Vec<i32>>>();
    }
    let pids = pids.expect("every rank started");
    std::thread::sleep(Duration::from_secs(2));
    let veth = Net::get().veth[1].clone();
    let back = LinkBack(veth.clone());
    assert!(sh(&format!("ip link set {veth} down")), "cut {veth}");
    let cut = Instant::now();
    while child.try_wait().unwrap().is_none() && cut.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = cut.elapsed();
    let _ = child.kill();
    let status = child.wait().unwrap();
    drop(back);
    for &p in &pids {
        // SAFETY: kill has no memory precondition.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    let err = std::fs::read_to_string(d.path().join("stderr")).unwrap_or_default();
    eprintln!("link cut: mpirun ended {took:?} later");
    assert!(took < Duration::from_secs(3 + 5), "took {took:?}: {err}");
    assert!(!status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("no report ({e}): {text}\n{err}"));
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["ranks_reported"], 2, "{c}");
    let missing: Vec<u64> = c["missing"]
        .as_array()
        .expect("missing ranks")
        .iter()
        .flat_map(|m| {
            assert_eq!(m["hostnames"], serde_json::json!(["imk2"]), "{c}");
            m["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_u64().unwrap())
        })
        .collect();
    assert_eq!(missing, [2, 3], "{c}");
    assert!(!err.contains("could not be written"), "{err}");
}

/// A SeaweedFS server in this namespace that the hosts reach over the
/// bridge (it listens on every address; this process lists its objects
/// at 127.0.0.1), and the `[global]` of a job against its S3 gateway.
fn store_for_hosts() -> Option<(crate::s3::Weed, String)> {
    let w = crate::s3::Weed::start_bound("0.0.0.0", &[])?;
    let global = format!(
        "[global]\nioengine=http\nhttp_mode=s3\nhttp_host={}.1:{}\n\
         http_s3_keyid={}\nhttp_s3_key={}\n",
        Net::get().prefix,
        w.s3,
        crate::s3::KEYID,
        crate::s3::SECRET
    );
    Some((w, global))
}

/// The `client_stats` entries of job `name`: (host, entry).
fn per_host<'a>(v: &'a Value, name: &str) -> Vec<(&'a str, &'a Value)> {
    v["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .filter(|c| c["jobname"] == name)
        .map(|c| (c["hostname"].as_str().unwrap_or(""), c))
        .collect()
}

/// Two hosts of two ranks against one S3 server: every rank PUTs its own
/// 16 objects and reads each back to verify it. Each host's figures are
/// its two ranks' requests and bytes exactly, "All clients" both hosts',
/// the server lists the 64 objects the job wrote (none shared), and a
/// trim run over both hosts leaves nothing.
#[test]
fn two_hosts_share_one_s3_server_and_the_counts_match_its_listing() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    let Some((w, global)) = store_for_hosts() else {
        return;
    };
    w.bucket("hosts");
    let d = tempdir();
    let args = host_args(d.path(), 2);
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    // One object path; global clone r (rank r) 64 KiB further on: 16
    // objects of 4 KiB a rank.
    let objects = "filename=/hosts/obj\nbs=4k\nsize=64k\noffset_increment=64k\niodepth=4\n";
    let put = format!("{global}{objects}[put]\nrw=write\nverify=crc32c\n");
    std::fs::write(d.path().join("put.fio"), put).unwrap();
    let o = mpirun(
        &bin,
        d.path(),
        4,
        &extra,
        &["put.fio", "--output-format=json,normal"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (v, text) = json_then_text(&o.stdout);
    // Per rank: 16 PUTs and the 16 GETs of the verify, 4 KiB each.
    let rank = 16u64;
    let hosts = per_host(&v, "put");
    let names: Vec<&str> = hosts.iter().map(|h| h.0).collect();
    assert_eq!(names, ["imk1", "imk2"], "{v}");
    for (h, e) in &hosts {
        for dir in ["write", "read"] {
            assert_eq!(e[dir]["total_ios"], 2 * rank, "{h} {dir}: {e}");
            assert_eq!(e[dir]["io_bytes"], 2 * rank * 4096, "{h} {dir}: {e}");
            assert_eq!(e[dir]["ttfb_ns"]["N"], 2 * rank, "{h} {dir}: {e}");
        }
        assert_eq!(e["error"], 0, "{h}: {e}");
    }
    let all = per_host(&v, "All clients");
    assert_eq!(all.len(), 1, "{v}");
    for dir in ["write", "read"] {
        assert_eq!(all[0].1[dir]["total_ios"], 4 * rank, "{dir}: {v}");
        assert_eq!(all[0].1[dir]["io_bytes"], 4 * rank * 4096, "{dir}: {v}");
        assert_eq!(v["jobs"][0][dir]["total_ios"], 4 * rank, "{dir}: {v}");
    }
    assert!(v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|j| j["error"] == 0));
    assert_eq!(all[0].1["error"], 0, "{v}");
    let c = &v["iomark"]["cluster"];
    assert_eq!(c["hosts"][0]["ranks"], serde_json::json!([0, 1]), "{c}");
    assert_eq!(c["hosts"][1]["ranks"], serde_json::json!([2, 3]), "{c}");
    assert_eq!(c["ranks_reported"], 4, "{c}");
    for h in ["imk1", "imk2"] {
        let block = &text[text.find(&format!("<{h}>")).expect(h)..];
        assert!(block.contains("put: (groupid=0, jobs=2)"), "{text}");
    }
    // The server's own listing: rank r's objects at [r * 64 KiB,
    // (r + 1) * 64 KiB), 64 of them, none written twice.
    let listed = w.list("hosts");
    let want: Vec<(String, u64)> = {
        let mut v: Vec<_> = (0..4 * rank)
            .map(|i| (format!("obj_{}_4096", i * 4096), 4096))
            .collect();
        v.sort();
        v
    };
    assert_eq!(listed, want, "the server's listing");
    let bytes: u64 = listed.iter().map(|o| o.1).sum();
    assert_eq!(bytes, 4 * rank * 4096);
    // The clean-up, over both hosts: each rank deletes its own objects.
    let del = format!("{global}{objects}[del]\nrw=trim\n");
    std::fs::write(d.path().join("del.fio"), del).unwrap();
    let o = mpirun(
        &bin,
        d.path(),
        4,
        &extra,
        &["del.fio", "--output-format=json"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = json_of(&o);
    for (h, e) in per_host(&v, "del") {
        assert_eq!(e["trim"]["total_ios"], 2 * rank, "{h}: {e}");
        assert_eq!(e["error"], 0, "{h}: {e}");
    }
    assert_eq!(w.list("hosts"), vec![], "nothing left behind");
}

/// The S3 server killed while both hosts of two ranks write to it: every
/// rank's failed PUT is named in one line (with `--mpi-per-rank`; merged
/// per host, each host's first failing rank), the run fails, and the
/// report holds what every host measured until then.
#[test]
fn the_s3_server_killed_mid_phase_names_each_failure_and_keeps_the_figures() {
    let _serial = common::cpu_heavy();
    let Some(bin) = mpi_iomark() else { return };
    let Some(_hosts) = Hosts::up() else { return };
    for per_rank in [false, true] {
        let Some((mut w, global)) = store_for_hosts() else {
            return;
        };
        w.bucket("killed");
        let d = tempdir();
        let args = host_args(d.path(), 2);
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        // Rank r writes objects at [r * 4 MiB, (r + 1) * 4 MiB).
        let job = format!(
            "{global}filename=/killed/o\nbs=4k\nsize=4m\noffset_increment=4m\niodepth=4\n\
             [w]\nrw=randwrite\ntime_based\nruntime=60s\n"
        );
        std::fs::write(d.path().join("w.fio"), job).unwrap();
        let killer = std::thread::spawn(move || {
            // Killed once every rank has some objects on the server.
            let t0 = Instant::now();
            let mut per_rank = [0usize; 4];
            while per_rank.iter().any(|&n| n < 4) && t0.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(200));
                per_rank = [0; 4];
                for (name, _) in w.list("killed") {
                    let off: u64 = name
                        .split('_')
                        .nth(1)
                        .and_then(|o| o.parse().ok())
                        .unwrap_or(u64::MAX);
                    if let Some(n) = per_rank.get_mut((off >> 22) as usize) {
                        *n += 1;
                    }
                }
            }
            w.kill();
            per_rank
        });
        let t0 = Instant::now();
        let mut a = vec!["w.fio", "--output-format=json"];
        if per_rank {
            a.push("--mpi-per-rank");
        }
        let o = mpirun(&bin, d.path(), 4, &extra, &a);
        let listed = killer.join().unwrap();
        let took = t0.elapsed();
        let err = common::stderr(&o);
        eprintln!("per rank {per_rank}: {took:?}, listed {listed:?}\n{err}");
        assert!(listed.iter().all(|&n| n >= 4), "listed {listed:?}");
        assert!(took < Duration::from_secs(45), "it went on for {took:?}");
        assert!(!o.status.success(), "{err}");
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("iomark")).collect();
        let named: Vec<(&str, u32)> = if per_rank {
            vec![("imk1", 0), ("imk1", 1), ("imk2", 2), ("imk2", 3)]
        } else {
            vec![("imk1", 0), ("imk2", 2)]
        };
        assert_eq!(ours.len(), named.len(), "{err}");
        for (line, (h, r)) in ours.iter().zip(&named) {
            assert!(
                line.contains(&format!("job 'w' on {h} (rank {r}, clone {r}): "))
                    && line.contains("write error on '/killed/o'")
                    && line.contains("PUT /killed/o_"),
                "{err}"
            );
        }
        let v = json_of(&o);
        let entries = per_host(&v, "w");
        assert_eq!(entries.len(), named.len(), "{v}");
        // Each entry's requests: those issued (`total_ios`, as fio
        // counts them) and those completed (their latencies, and 4 KiB
        // each in `io_bytes`); the difference is what failed, at least
        // one request and at most `iodepth` of each rank.
        let (mut issued, mut done) = (0, 0);
        let ranks = if per_rank { 1 } else { 2 };
        for ((h, e), (host, _)) in entries.iter().zip(&named) {
            assert_eq!(h, host, "{v}");
            assert_ne!(e["error"], 0, "{h}: {e}");
            let ios = e["write"]["total_ios"].as_u64().unwrap();
            let n = e["write"]["clat_ns"]["N"].as_u64().unwrap();
            assert!(n > 0, "{h}: {e}");
            assert_eq!(e["write"]["io_bytes"], n * 4096, "{h}: {e}");
            assert!((ranks..=ranks * 4).contains(&(ios - n)), "{h}: {e}");
            issued += ios;
            done += n;
        }
        let all = &per_host(&v, "All clients")[0].1["write"];
        assert_eq!(all["total_ios"], issued, "{v}");
        assert_eq!(all["clat_ns"]["N"], done, "{v}");
        assert_eq!(all["io_bytes"], done * 4096, "{v}");
        assert_ne!(per_host(&v, "All clients")[0].1["error"], 0, "{v}");
        assert_eq!(v["iomark"]["cluster"]["ranks_reported"], 4, "{v}");
    }
}
