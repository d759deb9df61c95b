//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod engines;
mod loopdev;
mod safety;
mod seed_workloads;

mod front_compare;
mod front_progress;
mod front_quick;
mod front_report;
mod front_suite;
mod front_sweep;
mod html_check;
