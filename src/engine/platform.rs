//! What this operating system cannot do for a job, said before anything
//! is laid out: engines that exist elsewhere only, options whose calls
//! are Linux's (CPU placement, I/O priorities, write hints, ...), and on
//! Windows the targets and memory types iomark does not handle there
//! (System V memory).
//! Each refusal is one line naming the platform, as an unknown option's.

use crate::job::JobSpec;
use crate::sys::OS_NAME;

/// Options that only Linux honours (their calls are Linux's).
#[cfg(not(target_os = "linux"))]
const LINUX_ONLY: &[&str] = &[
    "cpus_allowed",
    "cpumask",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "write_hint",
    "sync_file_range",
    "ioscheduler",
    "thp",
    "hipri",
    "hipri_percentage",
    "uncached",
    "nowait",
];

/// Why `spec` cannot run on this system, in one line (the caller names
/// the job); None when it can.
pub fn refusal(spec: &JobSpec) -> Option<String> {
    let info = spec.io.ioengine.info();
    if !info.here {
        return Some(format!(
            "ioengine={} is not available on {OS_NAME} (available here: {})",
            info.kind,
            available().join(", ")
        ));
    }
    option_refusal(spec)
}

/// The engines this system has, in `--enghelp` order.
pub fn available() -> Vec<&'static str> {
    crate::job::EngineKind::ALL
        .iter()
        .filter(|k| k.info().here)
        .map(|k| k.name())
        .collect()
}

#[cfg(target_os = "linux")]
fn option_refusal(_spec: &JobSpec) -> Option<String> {
    None
}

#[cfg(not(target_os = "linux"))]
fn option_refusal(spec: &JobSpec) -> Option<String> {
    use crate::job::spec::{Ddir, MemType, StatType};
    if let Some(o) = spec.set_options.iter().find(|o| LINUX_ONLY.contains(o)) {
        return Some(format!(
            "option '{o}' is not available on {OS_NAME} (Linux only)"
        ));
    }
    if spec.io.rw.has(Ddir::Trim) {
        return Some(format!(
            "trims (rw={}) are not available on {OS_NAME} (Linux only)",
            spec.io.rw.name()
        ));
    }
    if spec.engine.stat_type == StatType::Statx {
        return Some(format!(
            "stat_type=statx is not available on {OS_NAME} (Linux only)"
        ));
    }
    if matches!(spec.buf.mem, MemType::ShmHuge | MemType::MmapHuge(_)) {
        return Some(format!(
            "mem={} is not available on {OS_NAME} (huge pages: Linux only)",
            spec.buf.mem.name()
        ));
    }
    if cfg!(windows) && matches!(spec.buf.mem, MemType::Shm) {
        return Some(format!(
            "mem=shm is not available on {OS_NAME} (System V shared memory: use malloc or mmap)"
        ));
    }
    #[cfg(unix)]
    if spec.io.rw.writes() {
        if let Some(d) = spec.file.filenames.iter().find(|f| is_raw_device(f)) {
            return Some(format!(
                "refusing to write to '{d}': writing to a disk device is not available on \
                 {OS_NAME} yet (iomark cannot yet check there that it holds no filesystem or \
                 partitions); reading it works"
            ));
        }
    }
    None
}

/// Whether `name` is a block or character device other than the null
/// device: a disk on macOS (/dev/diskN, /dev/rdiskN) or FreeBSD (whose
/// disks are character devices), where the Linux mount and holder
/// probing that guards writes does not exist.
#[cfg(all(unix, not(target_os = "linux")))]
fn is_raw_device(name: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    if name == "/dev/null" {
        return false;
    }
    std::fs::metadata(name)
        .map(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
        .unwrap_or(false)
}
