//! Checks that need the whole job: options that only make sense with
//! certain engines, and combinations that cannot work. Checks that need
//! to know how jobs run (`workload::check_job`) run after parsing, through
//! `JobList::check_each`.

use super::engine_kind::EngineKind;
use super::options;
use super::spec::JobSpec;
use crate::job::JobError;

/// The error for an engine-specific option used with another engine.
pub fn engine_mismatch(def: &options::OptDef, engine: EngineKind) -> Option<String> {
    if (def.engines.is_empty() && def.fio_engines.is_empty()) || def.engines.contains(&engine) {
        return None;
    }
    // Per-I/O priorities cannot reach an NVMe passthrough command.
    let why = if engine == EngineKind::IoUringCmd && def.name.starts_with("cmdprio") {
        ": Linux fails NVMe passthrough commands that carry an I/O priority (EINVAL); \
         use libaio or io_uring on the namespace's block device"
    } else {
        ""
    };
    Some(format!(
        "option '{}' only applies to ioengine={} (this job uses ioengine={engine}){why}",
        def.name,
        def.engine_names(","),
    ))
}

/// Validates a fully assigned job, returning it or a one-line reason.
pub fn validate(job: JobSpec) -> Result<JobSpec, JobError> {
    for name in &job.set_options {
        let Some(def) = options::lookup(name) else {
            continue;
        };
        if let Some(e) = engine_mismatch(def, job.io.ioengine) {
            return Err(e.into());
        }
    }
    if job.name.is_empty() {
        return Err("the job has no name".into());
    }
    Ok(job)
}
