//! The job language: job files and command-line options become validated
//! `JobSpec`s through one option table.
//!
//! This module owns reading and interpreting job descriptions. It does no
//! I/O to targets and knows nothing about how jobs run.

pub mod error;
pub mod expr;
pub mod jobfile;
pub mod options;
pub mod spec;
pub mod validate;
pub mod value;

use std::path::PathBuf;

pub use error::{JobError, Origin};
pub use jobfile::{Entry, Section};
pub use spec::JobSpec;

/// One `key[=value]` from the command line or a job file.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

impl From<&Entry> for Assignment {
    fn from(e: &Entry) -> Self {
        Assignment {
            key: e.key.clone(),
            value: e.value.clone(),
            origin: e.origin.clone(),
        }
    }
}

/// Where jobs come from, in the order fio reads them: command-line globals,
/// command-line jobs, then job files (each file its own group).
#[derive(Clone, Debug, Default)]
pub struct JobSources {
    pub global: Vec<Assignment>,
    /// `--name=X` jobs with the options that followed each.
    pub cli_jobs: Vec<(String, Vec<Assignment>)>,
    pub files: Vec<(PathBuf, Vec<Section>)>,
    /// `--section` filters; empty means all.
    pub sections: Vec<String>,
}

/// The jobs to run, plus the global options for the JSON echo.
#[derive(Clone, Debug, Default)]
pub struct JobList {
    pub jobs: Vec<JobSpec>,
    pub global_options: Vec<(String, String)>,
}

/// Applies a section's assignments: `kb_base` and `ioengine` first (other
/// values depend on them), then the rest in order.
fn apply_all(
    spec: &mut JobSpec,
    items: &[Assignment],
    echo: &mut Vec<(String, String)>,
) -> Result<(), JobError> {
    let mut resolved = Vec::with_capacity(items.len());
    for a in items {
        let def = options::lookup(&a.key)
            .ok_or_else(|| JobError::at(&a.origin, options::unknown_option_message(&a.key)))?;
        resolved.push((def, a));
    }
    for pass_early in [true, false] {
        for (def, a) in resolved.iter().filter(|(d, _)| d.early == pass_early) {
            options::apply(spec, def, a.value.as_deref())
                .map_err(|m| JobError::at(&a.origin, m))?;
            spec.set_options.push(def.name);
        }
    }
    for (def, a) in &resolved {
        if let Some(v) = &a.value {
            echo.push((def.name.to_string(), v.clone()));
        }
    }
    Ok(())
}

/// Builds every job, applying globals, sections and clones' settings, then
/// validates each.
pub fn build_jobs(src: &JobSources) -> Result<JobList, JobError> {
    let mut list = JobList::default();
    let mut base = JobSpec::default();
    apply_all(&mut base, &src.global, &mut list.global_options)?;

    for (name, items) in &src.cli_jobs {
        let mut job = base.clone();
        job.name = name.clone();
        let mut echo = vec![("name".to_string(), name.clone())];
        apply_all(&mut job, items, &mut echo)?;
        job.job_options = echo;
        let origin = items
            .first()
            .map(|a| a.origin.clone())
            .unwrap_or_else(Origin::cli);
        finish(job, &origin, &mut list.jobs)?;
    }

    for (file_idx, (_path, sections)) in src.files.iter().enumerate() {
        let mut global = base.clone();
        let mut first_in_file = true;
        for section in sections {
            let items: Vec<Assignment> = section.entries.iter().map(Assignment::from).collect();
            if section.is_global() {
                let mut echo = Vec::new();
                apply_all(&mut global, &items, &mut echo)?;
                list.global_options.extend(echo);
                continue;
            }
            if !src.sections.is_empty() && !src.sections.iter().any(|s| s == &section.name) {
                continue;
            }
            let mut job = global.clone();
            job.name = section.name.clone();
            let mut echo = Vec::new();
            apply_all(&mut job, &items, &mut echo)?;
            job.job_options = echo;
            if first_in_file && (file_idx > 0 || !src.cli_jobs.is_empty()) {
                // Each job file is its own group, run after the previous one.
                job.ctl.stonewall = true;
            }
            first_in_file = false;
            finish(job, &section.origin, &mut list.jobs)?;
        }
    }
    if list.jobs.is_empty() {
        let why = if src.sections.is_empty() {
            "no jobs defined: give a job file, or options with --name=NAME"
        } else {
            "no job section matches --section"
        };
        return Err(JobError::plain(why.into()));
    }
    Ok(list)
}

fn finish(job: JobSpec, origin: &Origin, out: &mut Vec<JobSpec>) -> Result<(), JobError> {
    let job = validate::validate(job).map_err(|m| JobError::at(origin, m))?;
    out.push(job);
    Ok(())
}
