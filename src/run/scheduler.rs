//! `ioscheduler`: switches the disks under the jobs' files to the asked
//! I/O scheduler for the run, and back to the previous one afterwards
//! (also after Ctrl-C or a failed job).

use std::path::PathBuf;

use crate::job::JobSpec;
use crate::report::env;

/// The schedulers a disk offers and the one in use (`[bracketed]`).
fn read(dir: &std::path::Path) -> Option<(Vec<String>, String)> {
    let s = std::fs::read_to_string(dir.join("queue/scheduler")).ok()?;
    let mut all = Vec::new();
    let mut current = None;
    for w in s.split_whitespace() {
        match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(c) => {
                current = Some(c.to_string());
                all.push(c.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    Some((all, current?))
}

/// The disks switched, with the scheduler each had before.
#[derive(Default)]
pub struct Switched(Vec<(PathBuf, String)>);

impl Switched {
    /// Switches the disks under every job's targets that asks for a
    /// scheduler. Targets without a disk (tmpfs, pipes, character
    /// devices) are passed over, as fio does.
    pub fn apply(jobs: &[JobSpec]) -> Result<Switched, String> {
        let mut done = Switched::default();
        let mut wanted: Vec<(PathBuf, String, String)> = Vec::new();
        for j in jobs {
            let Some(want) = &j.file.ioscheduler else {
                continue;
            };
            for p in env::job_targets(j) {
                let t = env::target(&p);
                let (Some(dir), Some(dev)) = (t.sys_dir, t.device) else {
                    continue;
                };
                match wanted.iter().find(|(d, _, _)| *d == dir) {
                    Some((_, w, other)) if w != want => {
                        return Err(format!(
                            "jobs '{other}' and '{}' ask for different I/O schedulers on {dev} ({w}, {want})",
                            j.name
                        ))
                    }
                    Some(_) => continue,
                    None => wanted.push((dir.clone(), want.clone(), j.name.clone())),
                }
                let Some((offered, before)) = read(&dir) else {
                    continue;
                };
                if !offered.contains(want) {
                    return Err(format!(
                        "job '{}': ioscheduler '{want}' is not available for {dev} (it offers: {})",
                        j.name,
                        offered.join(", ")
                    ));
                }
                if before == *want {
                    continue;
                }
                std::fs::write(dir.join("queue/scheduler"), want).map_err(|e| {
                    format!(
                        "job '{}': cannot switch {dev} to the {want} scheduler: {e}",
                        j.name
                    )
                })?;
                done.0.push((dir, before));
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
