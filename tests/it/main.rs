//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod job_language;
mod seed_workloads;
