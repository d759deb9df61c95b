//! One-command benchmarks built on the job engine: the quick suite.

pub mod quick;
