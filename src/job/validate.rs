//! Checks that need the whole job: options that only make sense with
//! certain engines, and combinations that cannot work.

use super::options;
use super::spec::JobSpec;

/// Validates a fully assigned job, returning it or a one-line reason.
pub fn validate(job: JobSpec) -> Result<JobSpec, String> {
    for name in &job.set_options {
        let Some(def) = options::lookup(name) else {
            continue;
        };
        if !def.engines.is_empty() && !def.engines.contains(&job.io.ioengine.as_str()) {
            return Err(format!(
                "option '{}' only applies to ioengine={} (this job uses ioengine={})",
                def.name,
                def.engines.join(","),
                job.io.ioengine
            ));
        }
    }
    crate::workload::check_job(&job)?;
    if job.name.is_empty() {
        return Err("the job has no name".into());
    }
    Ok(job)
}
