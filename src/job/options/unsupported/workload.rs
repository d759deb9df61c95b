//! Unsupported workload, file and job-control options: the I/O pattern,
//! targets, zoned devices, error handling and process placement.

use crate::job::options::{unsupported, Category::*, OptDef};

pub const OPTS: &[OptDef] = &[
    // Targets and the life cycle of files.
    // Offsets and the random map.
    unsupported(
        "atomic",
        Io,
        "Open files with O_ATOMIC for atomic direct writes",
        "O_ATOMIC does not exist in mainline Linux",
    ),
    // Error handling.
    // Which jobs stop together, and jobs that pace each other.
    // Running commands and changing identity or resource groups.
    unsupported(
        "uid",
        Job,
        "Switch to this user ID before doing I/O",
        "run iomark as the user you want (e.g. with sudo -u)",
    ),
    unsupported(
        "gid",
        Job,
        "Switch to this group ID before doing I/O",
        "run iomark as the group you want (e.g. with sudo -g)",
    ),
    unsupported(
        "cgroup",
        Cpu,
        "Put the job into this control group, creating it if needed",
        "cgroup management is not supported; start iomark inside the cgroup (e.g. systemd-run)",
    ),
    unsupported(
        "cgroup_weight",
        Cpu,
        "I/O weight of the job's control group (100-1000)",
        "cgroup management is not supported; start iomark inside the cgroup (e.g. systemd-run)",
    ),
    unsupported(
        "cgroup_nodelete",
        Cpu,
        "Keep the control groups created for jobs after they end",
        "cgroup management is not supported; start iomark inside the cgroup (e.g. systemd-run)",
    ),
    // Timekeeping.
    unsupported(
        "gtod_cpu",
        Timing,
        "Dedicate this CPU to a thread that only reads the clock",
        "iomark reads the CPU counter or the vDSO clock and needs no clock thread",
    ),
    unsupported(
        "profile",
        Job,
        "Run one of fio's built-in workload profiles (tiobench, act)",
        "fio's built-in profiles are not supported; see the iomark presets instead",
    ),
];
