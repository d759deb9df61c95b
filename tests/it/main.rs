//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.
//!
//! The portable modules also build for Windows and run under Wine
//! (`.ci/portable`); the modules below marked Linux drive Linux itself
//! and build there only. Inside the portable modules, single tests and
//! helpers with a Unix premise carry their own `cfg` and reason.

mod common;

mod bad_inputs;
mod cluster_report;
// Per-I/O priorities of libaio and io_uring, on loop devices, against fio.
#[cfg(target_os = "linux")]
mod cmdprio;
// The same jobs under fio 3.33 and iomark side by side.
#[cfg(target_os = "linux")]
mod compat;
mod consent;
// Swaps directories for symbolic links in a loop (Unix links and modes).
#[cfg(target_os = "linux")]
mod consent_race;
// fio-plot (Python) and Debian's fio tools reading iomark's output.
#[cfg(target_os = "linux")]
mod consumers;
mod engines;
// Debian's fio example files (/usr/share/doc), mostly Linux engines.
#[cfg(target_os = "linux")]
mod examples_run;
// Full filesystems, read-only mounts, setpriv: loop devices and mounts.
#[cfg(target_os = "linux")]
mod faults;
// Debian's fio example files (/usr/share/doc).
#[cfg(target_os = "linux")]
mod fio_examples;
// The option names the installed fio knows.
#[cfg(target_os = "linux")]
mod fio_option_names;
mod generated_inputs;
// A QEMU guest with emulated NVMe.
#[cfg(target_os = "linux")]
mod guest;
mod help;
mod job_extras;
mod job_language;
mod logs;
// Loop devices (losetup).
#[cfg(target_os = "linux")]
mod loopdev;
// Links, mounts, FIFOs and character devices swapped in at open time.
#[cfg(target_os = "linux")]
mod open_safety;
// CPU affinity, nice and I/O priority read back from /proc and ioprio_get.
#[cfg(target_os = "linux")]
mod placement;
mod reports;
// The http engine against SeaweedFS's S3 gateway (a Linux binary).
#[cfg(target_os = "linux")]
mod s3;
// Filesystem and partition signatures on loop devices.
#[cfg(target_os = "linux")]
mod safety;
mod seed_workloads;
mod session;
// Signatures built on loop devices.
#[cfg(target_os = "linux")]
mod signatures;
mod truth;
mod verify;
mod zbd;

mod buffers;
mod iolog;

mod front_compare;
mod front_history;
mod front_mistakes;
mod front_pages;
mod front_progress;
mod front_quick;
mod front_report;
mod front_suite;
mod front_sweep;
mod front_units;
mod html_check;
// MPI: Open MPI's mpirun, network namespaces.
#[cfg(target_os = "linux")]
mod mpi;
#[cfg(target_os = "linux")]
mod mpi_faults;
#[cfg(target_os = "linux")]
mod mpi_hosts;
#[cfg(target_os = "linux")]
mod mpi_suite;
// Faults made by Linux: signals, /dev/full, /proc, tmpfs, a closed pipe
// (exit 141), a pseudo-terminal.
#[cfg(target_os = "linux")]
mod output_faults;
