//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod compat;

mod engines;
mod examples_run;
mod loopdev;
mod safety;
mod seed_workloads;
