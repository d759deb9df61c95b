//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod engines;
mod loopdev;
mod safety;
mod seed_workloads;

mod buffers;
mod iolog;
