//! What the options `quick`, `suite` and `sweep` share set: where to
//! run, how big and how long, how many passes, which engine, where the
//! reports go, progress, MPI and the results history (parsed by
//! `cli::cmd::bench`).

use std::path::PathBuf;

use crate::run::progress::ProgressMode;

/// What the shared options set.
#[derive(Clone, Debug, Default)]
pub struct RunFlags {
    pub size: Option<u64>,
    pub runtime_us: Option<u64>,
    pub passes: Option<u32>,
    pub warmup_us: Option<u64>,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub no_report: bool,
    pub engine: Option<String>,
    pub buffered: bool,
    pub print_jobfile: bool,
    pub eta: ProgressMode,
    pub eta_newline: bool,
    /// `--mpi`: run as one rank of an MPI job (also detected under mpirun).
    pub mpi: bool,
    /// `--mpi-timeout`: seconds before a silent rank stops every rank.
    pub mpi_timeout_s: Option<u64>,
    /// `--label`: names the run in its results and in the history.
    pub label: Option<String>,
    /// `--no-history`: do not record the run in the results history.
    pub no_history: bool,
    /// `--history-db`: the history database to record the run in.
    pub history_db: Option<PathBuf>,
    /// `--units`: the bandwidth unit of the table and the HTML report
    /// (None: MB/s for CrystalDiskMark-style tests, else MiB/s).
    pub units: Option<crate::results::units::BwUnit>,
}

impl RunFlags {
    /// Whether and where the run is recorded in the history.
    pub fn record_options(&self) -> crate::history::RecordOptions {
        crate::history::RecordOptions {
            enabled: !self.no_history,
            db: self.history_db.clone(),
        }
    }

    /// The checks across options, once all are read.
    pub fn check(&self) -> Result<(), String> {
        if self.no_report {
            // Both said: which one is meant is not for iomark to guess.
            for (given, flag) in [(&self.json, "--json"), (&self.html, "--html")] {
                if given.is_some() {
                    return Err(format!(
                        "--no-report and {flag} contradict each other (one writes no report, the \
                         other names where to write it): give one of them"
                    ));
                }
            }
        }
        Ok(())
    }
}
