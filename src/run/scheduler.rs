//! `ioscheduler`: switches the disks under the jobs' files to the asked
//! I/O scheduler for the run, and back to the previous one afterwards
//! (also after Ctrl-C or a failed job).

use std::path::PathBuf;

use super::error::RunError;
use crate::host::{self, Environment};
use crate::job::JobSpec;

/// The disks switched, with the scheduler each had before.
#[derive(Default)]
pub struct Switched(Vec<(PathBuf, String)>);

impl Switched {
    /// Switches the disks under every job's targets that asks for a
    /// scheduler, finding them in `env` (the run's description of its
    /// targets, whose scheduler is updated to the one switched to).
    /// Targets without a disk (tmpfs, pipes, character devices) are
    /// passed over, as fio does. Restored when dropped.
    pub fn apply(jobs: &[JobSpec], env: &mut Environment) -> Result<Switched, RunError> {
        let mut done = Switched::default();
        let mut wanted: Vec<(PathBuf, String, String)> = Vec::new();
        for j in jobs {
            let Some(want) = &j.file.ioscheduler else {
                continue;
            };
            for p in host::job_targets(j) {
                let t = match env.target(&p) {
                    Some(t) => t.clone(),
                    None => host::target(&p),
                };
                let (Some(dir), Some(dev)) = (t.sys_dir, t.device) else {
                    continue;
                };
                match wanted.iter().find(|(d, _, _)| *d == dir) {
                    Some((_, w, other)) if w != want => {
                        return Err(RunError::Scheduler(format!(
                            "jobs '{other}' and '{}' ask for different I/O schedulers on {dev} ({w}, {want})",
                            j.name
                        )))
                    }
                    Some(_) => continue,
                    None => wanted.push((dir.clone(), want.clone(), j.name.clone())),
                }
                let Some((offered, before)) = host::schedulers(&dir) else {
                    continue;
                };
                if !offered.contains(want) {
                    return Err(RunError::Scheduler(format!(
                        "job '{}': ioscheduler '{want}' is not available for {dev} (it offers: {})",
                        j.name,
                        offered.join(", ")
                    )));
                }
                if before != *want {
                    std::fs::write(dir.join("queue/scheduler"), want).map_err(|e| {
                        RunError::Scheduler(format!(
                            "job '{}': cannot switch {dev} to the {want} scheduler: {e}",
                            j.name
                        ))
                    })?;
                    done.0.push((dir.clone(), before));
                }
                for t in env
                    .targets
                    .iter_mut()
                    .filter(|t| t.sys_dir.as_ref() == Some(&dir))
                {
                    t.scheduler = Some(want.clone());
                }
            }
        }
        Ok(done)
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        for (dir, before) in self.0.drain(..).rev() {
            if let Err(e) = std::fs::write(dir.join("queue/scheduler"), &before) {
                super::output::stderr_line(&format!(
                    "iomark: warning: cannot restore the {before} scheduler of {}: {e}",
                    dir.display()
                ));
            }
        }
    }
}
