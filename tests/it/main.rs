//! Integration tests: they drive the iomark binary on files in temporary
//! directories, and compare with fio where it is installed.

mod common;

mod bad_inputs;
mod cluster_report;
mod cmdprio;
mod compat;
mod consent;
mod consent_race;
mod consumers;
mod engines;
mod examples_run;
mod faults;
mod fio_examples;
mod fio_option_names;
mod generated_inputs;
mod guest;
mod help;
mod job_extras;
mod job_language;
mod logs;
mod loopdev;
mod open_safety;
mod placement;
mod reports;
mod safety;
mod seed_workloads;
mod session;
mod signatures;
mod truth;
mod verify;
mod zbd;

mod buffers;
mod iolog;

mod front_compare;
mod front_history;
mod front_progress;
mod front_quick;
mod front_report;
mod front_suite;
mod front_sweep;
mod html_check;
mod mpi;
mod mpi_faults;
mod mpi_hosts;
mod mpi_suite;
mod output_faults;
