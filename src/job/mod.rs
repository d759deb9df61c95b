//! The job language: job files and command-line options become validated
//! `JobSpec`s through one option table.
//!
//! This module owns reading and interpreting job descriptions. It does no
//! I/O to targets and knows nothing about how jobs run.

pub mod engine_kind;
pub mod errno;
pub mod error;
pub mod expr;
pub mod ioprio;
pub mod jobfile;
pub mod options;
pub mod pattern;
#[cfg(test)]
mod robustness_tests;
pub mod spec;
pub mod validate;
pub mod value;

use std::path::PathBuf;

pub use engine_kind::EngineKind;
pub use error::{JobError, Origin};
pub use jobfile::{Entry, Section};
pub use spec::JobSpec;

/// One `key[=value]` from the command line or a job file.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    pub key: String,
    /// The value after `${VAR}` and keyword expansion; `None` for a bare key.
    pub value: Option<String>,
    pub origin: Origin,
    /// `${VAR}`s in the value that were not set, named in errors.
    pub unset_vars: Vec<String>,
}

impl Assignment {
    /// A command-line assignment; `value` is expanded like a job file's.
    /// A value that expands to more than `jobfile::MAX_VALUE` bytes, or to
    /// control characters, is refused.
    pub fn cli(key: &str, value: Option<&str>) -> Result<Self, JobError> {
        let (value, unset_vars) = match value {
            Some(v) => {
                let e = jobfile::expand(v);
                if e.too_long {
                    return Err(jobfile::too_long_message(key).into());
                }
                let what = format!("the value of '{key}'");
                if let Some(why) = jobfile::bad_text(&what, &e.text) {
                    return Err(why.into());
                }
                (Some(e.text), e.unset)
            }
            None => (None, Vec::new()),
        };
        Ok(Assignment {
            key: key.to_string(),
            value,
            origin: Origin::cli(),
            unset_vars,
        })
    }
}

impl From<&Entry> for Assignment {
    fn from(e: &Entry) -> Self {
        Assignment {
            key: e.key.clone(),
            value: e.value.clone(),
            origin: e.origin.clone(),
            unset_vars: e.unset_vars.clone(),
        }
    }
}

/// Where jobs come from, in the order fio reads them: command-line globals,
/// command-line jobs, then job files (each file its own group).
#[derive(Clone, Debug, Default)]
pub struct JobSources {
    pub global: Vec<Assignment>,
    /// `--name=X` jobs with the options that followed each. A job named
    /// `global` is a global section: it applies to the jobs after it.
    pub cli_jobs: Vec<(String, Vec<Assignment>)>,
    pub files: Vec<(PathBuf, Vec<Section>)>,
    /// `--section` filters; empty means all. They select command-line jobs
    /// as well as job file sections, as fio does.
    pub sections: Vec<String>,
}

impl JobSources {
    /// Whether a job (not a global section) of this name is selected.
    pub fn selects(&self, name: &str) -> bool {
        self.sections.is_empty() || self.sections.iter().any(|s| s == name)
    }
}

/// The jobs to run, plus the global options for the JSON echo.
#[derive(Clone, Debug, Default)]
pub struct JobList {
    pub jobs: Vec<JobSpec>,
    /// Where each job was defined (parallel to `jobs`), for the errors of
    /// the checks that run after parsing.
    pub origins: Vec<Origin>,
    /// Options of global sections as (canonical name, value as written),
    /// a later value replacing an earlier one in place.
    pub global_options: Vec<(String, String)>,
    /// Jobs counted with their `numjobs` clones.
    clones: u64,
    /// Bytes of option values the jobs hold, clones counted.
    value_bytes: u64,
}

/// Sets `key` in an ordered option echo: a repeated key keeps its first
/// position and takes the last value, as in fio's JSON.
fn echo_set(echo: &mut Vec<(String, String)>, key: &str, value: &str) {
    match echo.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value.to_string(),
        None => echo.push((key.to_string(), value.to_string())),
    }
}

/// Most jobs iomark runs, `numjobs` clones counted: fio's limit (its
/// `--max-jobs` default). More is refused before anything runs.
pub const MAX_JOBS: u32 = 4096;

/// Most bytes of option values all jobs may hold together, each clone
/// counted with its own copy (a long `filename` list in `[global]` is
/// copied into every job): 64 MiB.
pub const MAX_JOB_VALUE_BYTES: u64 = 64 << 20;

/// The options applied to a job so far, each once (the last assignment
/// wins): where it was written and the length of its value.
type Applied = Vec<(&'static options::OptDef, Origin, usize)>;

/// Engine-specific options given to a job whose engine does not take
/// them are reported at the line that set them.
fn check_engine_options(job: &JobSpec, applied: &Applied) -> Result<(), JobError> {
    for (def, origin, _) in applied {
        if let Some(m) = validate::engine_mismatch(def, job.io.ioengine) {
            return Err(JobError::at(origin, m));
        }
    }
    Ok(())
}

/// Applies a section's assignments: `kb_base` and `ioengine` first (other
/// values depend on them), then the rest in order.
///
/// An unknown option is reported before any other value is looked at,
/// except a bad or unsupported `ioengine`: when the engine cannot be used,
/// that is the error worth reading first.
fn apply_all(
    spec: &mut JobSpec,
    items: &[Assignment],
    echo: &mut Vec<(String, String)>,
    applied: &mut Applied,
) -> Result<(), JobError> {
    let mut resolved = Vec::with_capacity(items.len());
    let mut unknown = None;
    for a in items {
        match options::lookup(&a.key) {
            Some(def) => resolved.push((def, a)),
            None => {
                unknown.get_or_insert_with(|| {
                    JobError::at(&a.origin, options::unknown_option_message(&a.key))
                });
            }
        }
    }
    for pass_early in [true, false] {
        if !pass_early {
            if let Some(e) = unknown {
                return Err(e);
            }
        }
        for (def, a) in resolved.iter().filter(|(d, _)| d.early == pass_early) {
            options::apply(spec, def, a.value.as_deref()).map_err(|m| {
                JobError::at(
                    &a.origin,
                    String::from(m) + &jobfile::unset_note(&a.unset_vars),
                )
            })?;
            if !spec.set_options.contains(&def.name) {
                spec.set_options.push(def.name);
            }
            let len = a.value.as_ref().map_or(0, String::len);
            match applied.iter_mut().find(|(d, _, _)| d.name == def.name) {
                Some(slot) => *slot = (def, a.origin.clone(), len),
                None => applied.push((def, a.origin.clone(), len)),
            }
        }
    }
    for (def, a) in &resolved {
        if let Some(v) = &a.value {
            let v = if def.secret { spec::Secret::SHOWN } else { v };
            echo_set(echo, def.name, v);
        }
    }
    Ok(())
}

/// Builds every job, applying globals, sections and clones' settings, then
/// validates each.
///
/// Command-line options before the first `--name` are global for every
/// job; a job file's `[global]` sections apply to the jobs below them in
/// that file only; each job file after the first (or after command-line
/// jobs) starts a new group, as if its first job had `stonewall`.
pub fn build_jobs(src: &JobSources) -> Result<JobList, JobError> {
    let mut list = JobList::default();
    let mut base = JobSpec::default();
    let mut base_applied = Applied::new();
    let mut echo = Vec::new();
    apply_all(&mut base, &src.global, &mut echo, &mut base_applied)?;
    for (k, v) in echo {
        echo_set(&mut list.global_options, &k, &v);
    }

    for (name, items) in &src.cli_jobs {
        if name == "global" {
            let mut echo = Vec::new();
            apply_all(&mut base, items, &mut echo, &mut base_applied)?;
            for (k, v) in echo {
                echo_set(&mut list.global_options, &k, &v);
            }
            continue;
        }
        if !src.selects(name) {
            continue;
        }
        let mut job = base.clone();
        job.name = name.clone();
        let mut applied = base_applied.clone();
        let mut echo = vec![("name".to_string(), name.clone())];
        apply_all(&mut job, items, &mut echo, &mut applied)?;
        job.job_options = echo;
        check_engine_options(&job, &applied)?;
        let origin = items
            .first()
            .map(|a| a.origin.clone())
            .unwrap_or_else(Origin::cli);
        finish(job, &origin, &applied, &mut list)?;
    }

    for (_path, sections) in &src.files {
        let mut global = base.clone();
        let mut global_applied = base_applied.clone();
        let mut first_in_file = true;
        for section in sections {
            let items: Vec<Assignment> = section.entries.iter().map(Assignment::from).collect();
            if section.is_global() {
                let mut echo = Vec::new();
                apply_all(&mut global, &items, &mut echo, &mut global_applied)?;
                for (k, v) in echo {
                    echo_set(&mut list.global_options, &k, &v);
                }
                continue;
            }
            if !src.selects(&section.name) {
                continue;
            }
            let mut job = global.clone();
            job.name = section.name.clone();
            let mut applied = global_applied.clone();
            let mut echo = Vec::new();
            apply_all(&mut job, &items, &mut echo, &mut applied)?;
            job.job_options = echo;
            check_engine_options(&job, &applied)?;
            if first_in_file && !list.jobs.is_empty() {
                // Each job file is its own group, run after the previous one.
                job.ctl.stonewall = true;
            }
            first_in_file = false;
            finish(job, &section.origin, &applied, &mut list)?;
        }
    }
    if list.jobs.is_empty() {
        let why = if src.sections.is_empty() {
            "no jobs defined: give a job file, or options with --name=NAME".to_string()
        } else {
            format!(
                "no job matches --section={}",
                src.sections.join(" --section=")
            )
        };
        return Err(JobError::plain(why));
    }
    Ok(list)
}

/// Validates a job and adds it to the list, refusing it when the jobs so
/// far (clones counted) would be more than `MAX_JOBS` or would hold more
/// than `MAX_JOB_VALUE_BYTES` of option values.
fn finish(
    job: JobSpec,
    origin: &Origin,
    applied: &Applied,
    list: &mut JobList,
) -> Result<(), JobError> {
    let job = validate::validate(job).map_err(|m| JobError::at(origin, m.into()))?;
    let clones = u64::from(job.ctl.numjobs);
    let total = list.clones + clones;
    if total > u64::from(MAX_JOBS) {
        return Err(JobError::at(
            origin,
            format!(
                "job '{}' makes {total} jobs (numjobs clones counted); iomark runs at most {MAX_JOBS}, as fio",
                job.name
            ),
        ));
    }
    let bytes: u64 = applied.iter().map(|(_, _, n)| *n as u64).sum::<u64>() + job.name.len() as u64;
    let value_bytes = list.value_bytes + bytes * clones;
    if value_bytes > MAX_JOB_VALUE_BYTES {
        return Err(JobError::at(
            origin,
            format!(
                "job '{}' brings the option values the jobs hold to more than {} MiB (every clone keeps its own copy)",
                job.name,
                MAX_JOB_VALUE_BYTES >> 20
            ),
        ));
    }
    list.clones = total;
    list.value_bytes = value_bytes;
    list.jobs.push(job);
    list.origins.push(origin.clone());
    Ok(())
}

impl JobList {
    /// Runs `check` (a check that needs more than the job language, e.g.
    /// the workload's) on every job; its error names where the job was
    /// defined.
    pub fn check_each<E: std::fmt::Display>(
        &self,
        check: impl Fn(&JobSpec) -> Result<(), E>,
    ) -> Result<(), JobError> {
        for (job, origin) in self.jobs.iter().zip(&self.origins) {
            check(job).map_err(|m| JobError::at(origin, m.to_string()))?;
        }
        Ok(())
    }
}

/// A path as a test writes it into filename= or directory=: a colon (a
/// Windows drive's, C:) escaped, as fio's ':' separator wants it.
#[cfg(test)]
pub(crate) fn opt_path(p: &std::path::Path) -> String {
    p.to_str().expect("a UTF-8 path").replace(':', "\\:")
}

/// A job named "t" with the given options applied in order; for unit tests
/// of the modules that consume `JobSpec`s.
#[cfg(test)]
pub(crate) fn test_spec(opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec {
        name: "t".into(),
        ..JobSpec::default()
    };
    for (k, v) in opts {
        let def = options::lookup(k).unwrap_or_else(|| panic!("unknown option {k}"));
        options::apply(&mut s, def, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        s.set_options.push(def.name);
    }
    s
}
