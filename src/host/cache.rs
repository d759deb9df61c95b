//! Cache honesty: jobs whose figures the page cache or a memory
//! filesystem probably produced, judged from the environment found
//! before the run (free memory, filesystem types) and the jobs' sizes.

use std::collections::BTreeSet;

use super::{job_targets, Environment};
use crate::job::spec::{Ddir, JobSpec};
use crate::job::value::SizeOrPercent;

/// A warning about what a result means.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// "page-cache", "memory-filesystem", "cpu-overcommit", "note" (a
    /// job that runs, but not quite as its options might suggest).
    pub kind: &'static str,
    pub job: String,
    pub message: String,
}

/// The kinds a `Warning` can have.
pub const WARNING_KINDS: [&str; 4] = ["page-cache", "memory-filesystem", "cpu-overcommit", "note"];

impl Warning {
    /// A warning of the kind named `kind` (another host's, read back):
    /// a kind this iomark does not know counts as a note.
    pub fn of_kind(kind: &str, job: String, message: String) -> Warning {
        Warning {
            kind: WARNING_KINDS
                .iter()
                .find(|k| **k == kind)
                .copied()
                .unwrap_or("note"),
            job,
            message,
        }
    }
}

/// `64.0MiB`, `22.6GiB`: binary units with one decimal.
fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes}B")
    } else {
        format!("{v:.1}{}", units[i])
    }
}

/// Bytes a job's clones touch, when the job says (size or filesize) or its
/// files exist; None when unknown.
fn working_set(spec: &JobSpec) -> Option<u64> {
    let per_clone = match spec.file.size {
        Some(SizeOrPercent::Bytes(b)) if b > 0 => b,
        _ => match spec.file.filesize {
            Some((_, hi)) if hi > 0 => hi * spec.file.nrfiles.max(1) as u64,
            _ => {
                let files = job_targets(spec);
                let sizes: Vec<u64> = files
                    .iter()
                    .filter_map(|p| std::fs::metadata(p).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .collect();
                if sizes.is_empty() || sizes.len() != files.len() {
                    return None;
                }
                return Some(sizes.iter().sum());
            }
        },
    };
    // Clones share named files; otherwise each has its own.
    let clones = if spec.file.filenames.is_empty() {
        spec.ctl.numjobs.max(1) as u64
    } else {
        1
    };
    Some(per_clone.saturating_mul(clones))
}

/// Whether the job moves data through files (not the null engine).
fn moves_data(spec: &JobSpec) -> bool {
    let rw = spec.io.rw;
    let data = rw.has(Ddir::Read) || rw.has(Ddir::Write);
    !spec.io.ioengine.info().caps.diskless && data
}

/// The page cache likely serves the job: buffered, and its working set
/// fits in the free memory `env` found.
fn page_cached(spec: &JobSpec, env: &Environment) -> Option<u64> {
    let avail = env.host.mem_available_bytes;
    // NVMe commands never go through the page cache.
    if spec.sync.direct || avail == 0 || spec.io.ioengine.info().nvme_passthrough {
        return None;
    }
    working_set(spec).filter(|ws| *ws < avail)
}

fn on_memory(spec: &JobSpec, env: &Environment) -> bool {
    job_targets(spec)
        .iter()
        .any(|p| env.target(p).is_some_and(|t| t.memory_backed()))
}

/// Whether memory, not storage, serves the job's I/O (the page cache or
/// a memory filesystem): what its cache warnings say, for one job.
pub fn memory_served(spec: &JobSpec, env: &Environment) -> bool {
    moves_data(spec) && (on_memory(spec, env) || page_cached(spec, env).is_some())
}

/// What the warning of a run under Wine says.
pub const WINE_WARNING: &str = "running under Wine: the figures are Linux's I/O through \
     Wine's emulation of Windows calls (unbuffered I/O included), not Windows figures";

/// The warning every run under Wine carries: its figures are not
/// Windows figures.
pub fn wine_warning() -> Option<Warning> {
    crate::sys::under_wine().then(|| Warning {
        kind: "wine",
        job: String::new(),
        message: WINE_WARNING.to_string(),
    })
}

/// Cache-honesty warnings for a set of jobs, once per job name (a
/// memory filesystem once per mount), from the environment found under
/// them.
pub fn cache_warnings<'a>(
    specs: impl IntoIterator<Item = &'a JobSpec>,
    env: &Environment,
) -> Vec<Warning> {
    let avail = env.host.mem_available_bytes;
    let mut out: Vec<Warning> = Vec::new();
    let mut seen_fs = BTreeSet::new();
    for spec in specs {
        if out.iter().any(|w| w.job == spec.name) || !moves_data(spec) {
            continue;
        }
        for p in job_targets(spec) {
            let Some(t) = env.target(&p) else { continue };
            if t.memory_backed() && seen_fs.insert(t.mount_point.clone()) {
                out.push(Warning {
                    kind: "memory-filesystem",
                    job: spec.name.clone(),
                    message: format!(
                        "'{}' is on {} (memory): results measure RAM, not a storage device",
                        p.display(),
                        t.fs_type.as_deref().unwrap_or("a memory filesystem")
                    ),
                });
            }
        }
        if let Some(ws) = page_cached(spec, env) {
            out.push(Warning {
                kind: "page-cache",
                job: spec.name.clone(),
                message: format!(
                    "job '{}': buffered I/O (direct=0) over {} fits in the {} of free RAM: \
                     the page cache likely served it, so the figures may not reflect the \
                     device (use direct=1, or a size larger than RAM)",
                    spec.name,
                    human(ws),
                    human(avail)
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Host, Target};
    use super::*;

    fn env(avail: u64, fs: &str) -> Environment {
        Environment {
            host: Host {
                mem_available_bytes: avail,
                ..Host::default()
            },
            targets: vec![Target {
                path: ".".into(),
                fs_type: Some(fs.into()),
                mount_point: Some("/m".into()),
                ..Target::default()
            }],
        }
    }

    #[test]
    fn small_buffered_jobs_get_a_page_cache_warning() {
        let mut spec = JobSpec {
            name: "small".into(),
            ..JobSpec::default()
        };
        spec.file.size = Some(SizeOrPercent::Bytes(1 << 20));
        spec.io.rw = crate::job::spec::RwPattern::RandRead;
        let e = env(1 << 30, "ext4");
        let w = cache_warnings([&spec], &e);
        assert!(w.iter().any(|w| w.kind == "page-cache"), "{w:?}");
        assert!(w[0].message.contains("1.0MiB") && w[0].message.contains("1.0GiB"));
        assert!(memory_served(&spec, &e));
        // Larger than free memory, or direct: no warning.
        assert!(cache_warnings([&spec], &env(1 << 19, "ext4")).is_empty());
        spec.sync.direct = true;
        assert!(cache_warnings([&spec], &e).is_empty());
        assert!(!memory_served(&spec, &e));
    }

    #[test]
    fn a_memory_filesystem_is_named_once_per_mount() {
        let mut a = JobSpec {
            name: "a".into(),
            ..JobSpec::default()
        };
        a.sync.direct = true;
        a.io.rw = crate::job::spec::RwPattern::Write;
        let b = JobSpec {
            name: "b".into(),
            ..a.clone()
        };
        let e = env(1 << 30, "tmpfs");
        let w = cache_warnings([&a, &b], &e);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].kind, w[0].job.as_str()), ("memory-filesystem", "a"));
        // Each job is still served by memory.
        assert!(memory_served(&b, &e));
        let mut null = a.clone();
        null.io.ioengine = crate::job::engine_kind::EngineKind::Null;
        assert!(!memory_served(&null, &e));
    }
}
