//! Host probing: what iomark learns about the machine and the storage
//! under the jobs, in one place.
//!
//! - the host: kernel, CPU model and count, memory, CPU governor
//!   ([`Host`]);
//! - each target path: its mount, filesystem type and options, block
//!   device (and the disks under a dm/md device), model, size, I/O
//!   scheduler and rotational flag ([`Target`]), and the schedulers its
//!   disk offers ([`schedulers`]);
//! - the NUMA topology ([`numa`]);
//! - NVMe namespaces through passthrough: Identify, zones, reclaim unit
//!   handles, the block device of a generic character device ([`nvme`]);
//! - the cache-honesty judgement made from these ([`cache_warnings`]).
//!
//! A run probes once, before it starts (`run::session`), and keeps what it
//! found ([`Environment`]) in its result; reports render from that and
//! read nothing themselves. A value that cannot be found is left out,
//! never guessed. Nothing here runs on the I/O path.
//!
//! The data-safety checks (`run::safety`) read the mount table and the
//! block devices themselves, at the moment they decide: what they approve
//! must be true then, not when the host was described.

mod cache;
pub(crate) mod mounts;
pub mod numa;
pub mod nvme;
mod target;
pub mod zones;

use std::path::{Path, PathBuf};

pub use cache::{cache_warnings, memory_served, wine_warning, Warning, WINE_WARNING};
pub use target::{schedulers, target, Target};

use crate::job::spec::JobSpec;

/// The host, independent of any target.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub machine: String,
    pub cpu_model: String,
    pub cpus: u64,
    pub ram_bytes: u64,
    pub mem_available_bytes: u64,
    pub cpu_governor: Option<String>,
}

/// The host and the targets under a set of jobs, as found before a run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    pub host: Host,
    /// One per distinct target path, in the order the jobs name them.
    pub targets: Vec<Target>,
}

impl Environment {
    /// Describes the host and every path in `paths` (each once).
    pub fn capture(paths: &[PathBuf]) -> Environment {
        let mut targets: Vec<Target> = Vec::new();
        for p in paths {
            let shown = p.display().to_string();
            if !targets.iter().any(|t| t.path == shown) {
                targets.push(target(p));
            }
        }
        Environment {
            host: host(),
            targets,
        }
    }

    /// Describes the host and the targets of `jobs`.
    pub fn of_jobs<'a>(jobs: impl IntoIterator<Item = &'a JobSpec>) -> Environment {
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut stores: Vec<Target> = Vec::new();
        for j in jobs {
            for p in job_targets(j) {
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
            if let Some(t) = object_store(j) {
                if !stores.iter().any(|s| s.path == t.path) {
                    stores.push(t);
                }
            }
        }
        let mut env = Environment::capture(&paths);
        env.targets.extend(stores);
        env
    }

    /// What was found under `path` (as a job names it).
    pub fn target(&self, path: &Path) -> Option<&Target> {
        let shown = path.display().to_string();
        self.targets.iter().find(|t| t.path == shown)
    }

    /// The targets under `paths`, each filesystem and device once (the
    /// first path that leads to it describes it).
    pub fn distinct(&self, paths: &[PathBuf]) -> Vec<&Target> {
        let mut seen = std::collections::BTreeSet::new();
        paths
            .iter()
            .filter_map(|p| self.target(p))
            .filter(|t| seen.insert((t.mount_point.clone(), t.device.clone())))
            .collect()
    }
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(unix)]
fn c_chars(a: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = a
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `MemTotal`/`MemAvailable` from /proc/meminfo, in bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    s.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kib * 1024)
    })
}

/// The most memory this process has held at once (`VmHWM`, its peak
/// resident set), in bytes; `None` where the system does not say.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find_map(|l| {
        let kib: u64 = l
            .strip_prefix("VmHWM:")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        Some(kib * 1024)
    })
}

/// This host's name (uname's nodename; empty when unknown).
pub fn hostname() -> String {
    uname().0
}

/// (host name, kernel "sysname release version", machine) as uname(2)
/// gives them; on Windows the computer name, "Windows" and the
/// architecture.
#[cfg(windows)]
fn uname() -> (String, String, String) {
    let name = std::env::var("COMPUTERNAME").unwrap_or_default();
    (
        name,
        "Windows".to_string(),
        std::env::consts::ARCH.to_string(),
    )
}

#[cfg(unix)]
fn uname() -> (String, String, String) {
    // SAFETY: a C struct of plain data, for which all zero bytes are valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills the zeroed struct.
    if unsafe { libc::uname(&mut u) } == 0 {
        (
            c_chars(&u.nodename),
            format!(
                "{} {} {}",
                c_chars(&u.sysname),
                c_chars(&u.release),
                c_chars(&u.version)
            ),
            c_chars(&u.machine),
        )
    } else {
        Default::default()
    }
}

/// Describes the host.
pub fn host() -> Host {
    let (hostname, kernel, machine) = uname();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = ["model name", "Processor", "cpu model", "Hardware", "cpu"]
        .iter()
        .find_map(|k| {
            cpuinfo.lines().find_map(|l| {
                let (key, v) = l.split_once(':')?;
                (key.trim() == *k && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
        .unwrap_or_default();
    let cpus = crate::sys::online_cpus() as u64;
    Host {
        hostname,
        kernel,
        machine,
        cpu_model,
        cpus,
        ram_bytes: meminfo("MemTotal").unwrap_or_else(crate::sys::ram_bytes),
        mem_available_bytes: meminfo("MemAvailable").unwrap_or(0),
        cpu_governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
    }
}

/// The paths a job does I/O on (its files, or its directory), none for
/// the null engine. Path arithmetic only: nothing is read.
pub fn job_targets(spec: &JobSpec) -> Vec<PathBuf> {
    if spec.io.ioengine.info().caps.diskless {
        return Vec::new();
    }
    let dirs: Vec<PathBuf> = if spec.file.directories.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        spec.file.directories.iter().map(PathBuf::from).collect()
    };
    if spec.file.filenames.is_empty() {
        return dirs;
    }
    spec.file
        .filenames
        .iter()
        .map(|f| spec.file.path_of(f, false, 0))
        .collect()
}

/// The object store a job of the `http` engine talks to, as a target:
/// its endpoint and bucket (`http://host:port/bucket`), so that results,
/// the history and reports name what was measured. The store is not a
/// filesystem: nothing is probed, and no credential is part of the name.
pub fn object_store(spec: &JobSpec) -> Option<Target> {
    use crate::job::engine_kind::EngineKind;
    use crate::job::spec::{HttpMode, Https};
    if spec.io.ioengine != EngineKind::Http {
        return None;
    }
    let o = &spec.engine.http;
    let scheme = if o.https == Https::Off {
        "http"
    } else {
        "https"
    };
    // A user name or password written into the host stays out of it.
    let host = o.host.rsplit('@').next().unwrap_or_default();
    let first = spec.file.filenames.first()?;
    let bucket = first.trim_start_matches('/').split('/').next()?;
    let url = format!("{scheme}://{host}/{bucket}");
    Some(Target {
        path: url.clone(),
        fs_type: Some(
            match o.mode {
                HttpMode::S3 => "s3",
                HttpMode::Webdav => "webdav",
            }
            .into(),
        ),
        device: Some(url),
        ..Target::default()
    })
}

/// The paths a job's report describes: its files' (see [`job_targets`]),
/// or its object store's name.
pub fn report_targets(spec: &JobSpec) -> Vec<PathBuf> {
    match object_store(spec) {
        Some(t) => vec![PathBuf::from(t.path)],
        None => job_targets(spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // Mount and device probing is Linux's.
    #[cfg(target_os = "linux")]
    fn the_current_directory_has_a_filesystem() {
        let t = target(Path::new("."));
        assert!(t.fs_type.is_some(), "{t:?}");
        assert!(t.mount_point.is_some(), "{t:?}");
        let h = host();
        assert!(h.cpus >= 1);
        assert!(h.ram_bytes > 0);
        assert!(h.kernel.starts_with("Linux"), "{}", h.kernel);
    }

    #[test]
    fn an_environment_describes_each_path_once_and_finds_it_again() {
        let a = PathBuf::from(".");
        let b = PathBuf::from("./x-not-there");
        let env = Environment::capture(&[a.clone(), b.clone(), a.clone()]);
        assert_eq!(env.targets.len(), 2, "{env:?}");
        assert_eq!(
            env.target(&b).map(|t| t.path.as_str()),
            Some("./x-not-there")
        );
        // Both lie on one filesystem: described once.
        assert_eq!(env.distinct(&[a, b]).len(), 1);
        assert!(env.target(Path::new("/elsewhere")).is_none());
    }

    #[test]
    fn null_jobs_have_no_targets() {
        let mut spec = JobSpec::default();
        spec.file.filenames = vec!["f".into(), "/abs/g".into()];
        spec.file.directories = vec!["/d".into()];
        assert_eq!(
            job_targets(&spec),
            vec![PathBuf::from("/d/f"), PathBuf::from("/d/abs/g")]
        );
        spec.io.ioengine = crate::job::engine_kind::EngineKind::Null;
        assert!(job_targets(&spec).is_empty());
    }

    #[test]
    fn an_object_store_is_named_by_its_endpoint_and_bucket_without_credentials() {
        use crate::job::spec::{HttpMode, Https};
        let mut spec = JobSpec::default();
        spec.file.filenames = vec!["/bkt/dir/obj".into()];
        assert!(object_store(&spec).is_none(), "a file job has no store");
        spec.io.ioengine = crate::job::engine_kind::EngineKind::Http;
        spec.engine.http.host = "user:pw@127.0.0.1:8333".into();
        spec.engine.http.mode = HttpMode::S3;
        spec.engine.http.https = Https::Insecure;
        let t = object_store(&spec).expect("a store");
        assert_eq!(t.path, "https://127.0.0.1:8333/bkt");
        assert_eq!(t.device.as_deref(), Some("https://127.0.0.1:8333/bkt"));
        assert_eq!(t.fs_type.as_deref(), Some("s3"));
        assert_eq!(report_targets(&spec), vec![PathBuf::from(&t.path)]);
        let env = Environment::of_jobs([&spec]);
        assert_eq!(env.targets, vec![t], "nothing local is probed");
    }
}
