//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod consumers;
mod engines;
mod logs;
mod loopdev;
mod reports;
mod safety;
mod seed_workloads;

mod buffers;
mod iolog;
