//! One run of a job list, start to finish: the only way iomark runs jobs.
//! The plain command line, `quick`, `suite` and `sweep` all come here, so
//! a preset runs exactly what its printed job file runs.
//!
//! Given a parsed, checked job list and the run options, a [`Session`]
//! goes through these steps, in order:
//!
//! 1. **expand**: `opendir` becomes the files below the directory;
//! 2. **refuse** what the run options forbid: writes under `--readonly`,
//!    more clones than `--max-jobs`;
//! 3. **plan and decide safety** (`plan::plan`, which ends with the data
//!    safety checks): the verdict passes through
//!    [`SessionHooks::safety_verdict`];
//! 4. **describe the host** once (`host::Environment`) and judge the
//!    cache honesty of each job, and collect the run notes: the
//!    [`Ready`] session holds them, [`Ready::announce`] prints them on
//!    stderr (each once), and the result carries them for the JSON
//!    `iomark.warnings`;
//! 5. **run** ([`Ready::run`]): switch the I/O schedulers the jobs ask for
//!    (restored when the run ends, whatever happened), run the plan
//!    (each batch of clones released through
//!    [`SessionHooks::before_start`]), and hand the result, final, to
//!    [`SessionHooks::finish`].
//!
//! The [`RunResult`] carries everything reports need (the environment,
//! the warnings, the global options): reports read nothing themselves.
//! Interim reports (`--status-interval`) go through the hook in
//! `RunOptions::status` (or [`Ready::set_status`]); their results carry
//! the same context.
//!
//! Nothing here writes a report: the caller renders the result.

use std::collections::HashSet;
use std::sync::Arc;

use super::error::RunError;
use super::gate::StartGate;
use super::plan::{self, Plan};
use super::{output, scheduler, RunContext, RunOptions, RunResult};
use crate::host::{self, Environment, Warning};
use crate::job::{JobList, JobSpec};

/// The safety verdict a session's hooks settle on (see
/// [`SessionHooks::safety_verdict`]).
#[derive(Debug)]
pub enum Verdict {
    /// The run may go on (on every rank, when it is spread over many).
    Go,
    /// Refused: this error is said (this host's own, or on rank 0 of a run
    /// over many hosts, every refusing rank's, named).
    Refused(RunError),
    /// Refused by another rank, which says why: end without a word.
    RefusedElsewhere,
}

/// Whether a run goes on after a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Go,
    /// Stop the run now (as a stop signal does): nothing more starts, what
    /// runs ends and reports what it measured.
    Stop,
}

/// The points where a run meets the world outside this process. A run on
/// one host needs none of them ([`Alone`]); a run spread over several
/// hosts agrees on each here. Each is called on the thread that runs the
/// session.
pub trait SessionHooks {
    /// Safety decided: `mine` is this host's verdict (the plan with its
    /// data safety checks, or the first refusal) on `jobs`. What this
    /// returns is final: anything but `Go` ends the session before
    /// anything is written.
    fn safety_verdict(&mut self, _jobs: &[JobSpec], mine: Result<(), RunError>) -> Verdict {
        match mine {
            Ok(()) => Verdict::Go,
            Err(e) => Verdict::Refused(e),
        }
    }

    /// A batch's files are about to be laid out (`after_layout`: they
    /// have been). Ranks that share files lay them out in turn.
    fn before_layout(&mut self, _plan: &Plan, _batch: &[usize]) -> Flow {
        Flow::Go
    }
    fn after_layout(&mut self, _plan: &Plan, _batch: &[usize]) -> Flow {
        Flow::Go
    }

    /// A batch of clones (indexes into `plan.jobs`) has been started and
    /// is setting up; their start gate opens, and their clock starts,
    /// once all have set up and this has returned. Called for every batch
    /// the run starts, also one whose clones all failed before starting
    /// (`clones` is then empty). `gate` counts the clones that have set
    /// up (`StartGate::arrived`).
    fn before_start(&mut self, _plan: &Plan, _clones: &[usize], _gate: &StartGate) -> Flow {
        Flow::Go
    }

    /// Called about every 10 ms while clones run, after finished clones
    /// have been collected: `live` shows their counters and can stop them
    /// (or the whole run).
    fn tick(&mut self, _live: &super::Live<'_>) {}

    /// The result is final: every clone has ended and nothing more will
    /// be measured. Reports are written from it after this returns.
    fn finish(&mut self, _result: &mut RunResult) {}
}

/// A run on this host alone: every hook keeps what this host found.
pub struct Alone;

impl SessionHooks for Alone {}

/// How a session runs, besides the jobs themselves.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// How the run behaves: progress, notices, clock, interim reports.
    pub run: RunOptions,
    /// `--readonly`: refuse jobs that write.
    pub readonly: bool,
    /// This rank among the ranks of a run spread over many hosts (one
    /// rank of one by default).
    pub place: super::place::Placement,
}

/// A job list on its way to a run. See the module documentation.
pub struct Session {
    jobs: Vec<JobSpec>,
    global_options: Vec<(String, String)>,
    opts: SessionOptions,
    hooks: Box<dyn SessionHooks>,
}

impl Session {
    /// A session for a parsed and checked job list
    /// (`workload::checked_jobs`).
    pub fn new(list: JobList, opts: SessionOptions) -> Session {
        Session {
            jobs: list.jobs,
            global_options: list.global_options,
            opts,
            hooks: Box::new(Alone),
        }
    }

    /// Replaces the hooks (default: [`Alone`]).
    pub fn with_hooks(mut self, hooks: Box<dyn SessionHooks>) -> Session {
        self.hooks = hooks;
        self
    }

    /// Steps 1 to 4: everything before the run. Nothing is written to
    /// any target and nothing is switched; the error is one line.
    pub fn prepare(mut self) -> Result<Ready, RunError> {
        let mut untimed = Vec::new();
        for j in &mut self.jobs {
            super::files::expand_opendir(j)?;
            j.file.readonly = self.opts.readonly;
            if j.time.time_based && j.time.runtime_us == 0 {
                // As fio: time_based needs a runtime; without one the job
                // does its size once.
                j.time.time_based = false;
                untimed.push(Warning {
                    kind: "note",
                    job: j.name.clone(),
                    message: format!(
                        "job '{}': time_based has no effect without a runtime (runtime=0 or \
                         none given): the job does its size once, as fio does",
                        j.name
                    ),
                });
            }
        }
        self.refuse()?;
        let (plan, mine) = match plan::plan_at(&self.jobs, &self.opts.place) {
            Ok(p) => (Some(p), Ok(())),
            Err(e) => (None, Err(e)),
        };
        let plan = match (self.hooks.safety_verdict(&self.jobs, mine), plan) {
            (Verdict::Go, Some(p)) => p,
            (Verdict::Go, None) => {
                return Err(RunError::Verdict(
                    "the ranks agreed to go on without this rank's plan".into(),
                ))
            }
            (Verdict::Refused(e), _) => return Err(e),
            (Verdict::RefusedElsewhere, _) => return Err(RunError::RefusedElsewhere),
        };
        let environment = Environment::of_jobs(&self.jobs);
        let mut warnings = host::cache_warnings(&self.jobs, &environment);
        warnings.extend(host::wine_warning());
        warnings.extend(notes(&self.jobs));
        warnings.extend(untimed);
        Ok(Ready {
            plan,
            context: RunContext {
                global_options: self.global_options,
                environment,
                warnings,
            },
            jobs: self.jobs,
            opts: self.opts,
            hooks: self.hooks,
        })
    }

    /// What `--readonly` and `--max-jobs` forbid.
    fn refuse(&self) -> Result<(), RunError> {
        if self.opts.readonly {
            for j in &self.jobs {
                if let Some(what) = changes_files(j) {
                    return Err(RunError::ReadOnly {
                        job: j.name.clone(),
                        what,
                    });
                }
            }
        }
        Ok(())
    }
}

/// What a job does that `--readonly` forbids (writes, trims, appends,
/// truncates, creates or deletes files, or writes a buffer file), in
/// words naming the option; None for a job that only reads.
pub fn changes_files(j: &JobSpec) -> Option<String> {
    use crate::engine::Destroys;
    use crate::job::spec::MemType;
    let info = j.io.ioengine.info();
    let engine = info.kind.name();
    if j.io.rw.writes() && !j.verify.verify_only {
        let verb = if j.io.rw.has(crate::job::spec::Ddir::Write) {
            "writes"
        } else {
            "trims"
        };
        return Some(format!("{verb} (rw={})", j.io.rw.name()));
    }
    let what = match info.destroys {
        Destroys::Deletes => format!("deletes its files (ioengine={engine})"),
        Destroys::Truncates => format!("truncates its files (ioengine={engine})"),
        _ if j.file.unlink => "deletes its files (unlink=1)".into(),
        _ if j.file.unlink_each_loop => "deletes its files (unlink_each_loop=1)".into(),
        _ if j.file.file_append => "appends to its files (file_append=1)".into(),
        _ if info.reads_change_files => format!("changes its files (ioengine={engine})"),
        _ if !info.caps.diskless && !info.lays_out_files() => {
            format!("creates its files (ioengine={engine})")
        }
        _ => match &j.buf.mem {
            MemType::MmapShared(Some(f)) | MemType::MmapHuge(Some(f)) => format!(
                "writes its buffers into '{}' (mem={})",
                f.display(),
                j.buf.mem.name()
            ),
            MemType::Mmap(Some(f)) if std::fs::symlink_metadata(f).is_err() => {
                format!("creates '{}' for its buffers (mem=mmap)", f.display())
            }
            _ => return None,
        },
    };
    Some(what)
}

/// The run notes of `jobs` (`run::notes`), each text once.
fn notes(jobs: &[JobSpec]) -> Vec<Warning> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for j in jobs {
        for message in super::notes(j) {
            if seen.insert(message.clone()) {
                out.push(Warning {
                    kind: "note",
                    job: j.name.clone(),
                    message,
                });
            }
        }
    }
    out
}

/// A planned session, ready to run.
pub struct Ready {
    plan: Plan,
    context: RunContext,
    jobs: Vec<JobSpec>,
    opts: SessionOptions,
    hooks: Box<dyn SessionHooks>,
}

impl Ready {
    /// The plan (groups, clones, files) the run will follow.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The jobs, with `opendir` expanded.
    pub fn jobs(&self) -> &[JobSpec] {
        &self.jobs
    }

    /// Cache warnings and run notes, in the order they are printed.
    pub fn warnings(&self) -> &[Warning] {
        &self.context.warnings
    }

    /// The host and targets as found before the run.
    pub fn environment(&self) -> &Environment {
        &self.context.environment
    }

    /// Sets the hook that receives an interim result every
    /// `--status-interval` (its result carries the same context as the
    /// final one), for callers whose report writer exists only once the
    /// jobs are known to be good.
    pub fn set_status(&mut self, hook: super::monitor::StatusHook) {
        self.opts.run.status = Some(hook);
    }

    /// Prints the warnings and notes on stderr, one line each, each text
    /// once (the jobs of one file on tmpfs share one warning). Whoever
    /// runs a job list calls this once (a suite once for all its passes).
    pub fn announce(&self) {
        let mut shown: Vec<&str> = Vec::new();
        for w in &self.context.warnings {
            if !shown.contains(&w.message.as_str()) {
                output::stderr_line(&format!("iomark: warning: {}", w.message));
                shown.push(&w.message);
            }
        }
    }

    /// Step 5: switches the I/O schedulers, runs, restores the
    /// schedulers, and hands back the final result. Fails (one line)
    /// only when a scheduler cannot be switched, before any I/O.
    pub fn run(self) -> Result<RunResult, RunError> {
        let Ready {
            plan,
            mut context,
            jobs,
            opts,
            mut hooks,
        } = self;
        // Restored when dropped, whatever the outcome.
        let switched = scheduler::Switched::apply(&jobs, &mut context.environment)?;
        let mut result = super::run(plan, &opts.run, Arc::new(context), hooks.as_mut());
        drop(switched);
        hooks.finish(&mut result);
        Ok(result)
    }
}

/// Runs of a job file's text, for the unit tests of every layer that
/// needs a real result.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The checked jobs of a job file's text.
    pub fn list(text: &str) -> JobList {
        let path = std::path::PathBuf::from("t.fio");
        let secs = crate::job::jobfile::parse_jobfile_text(text, &path).expect("parses");
        let src = crate::job::JobSources {
            files: vec![(path, secs)],
            ..Default::default()
        };
        crate::workload::checked_jobs(&src).expect("checks")
    }

    /// The result of running `text` quietly (on a fake clock of
    /// `fake_clock_step` ns, or the real one).
    pub fn run_text(text: &str, fake_clock_step: Option<u64>) -> RunResult {
        let opts = SessionOptions {
            run: RunOptions {
                quiet: true,
                fake_clock_step,
                ..RunOptions::default()
            },
            ..SessionOptions::default()
        };
        Session::new(list(text), opts)
            .prepare()
            .expect("prepares")
            .run()
            .expect("runs")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::list;
    use super::*;

    /// Counts the hooks' calls and can refuse.
    #[derive(Default)]
    struct Count {
        verdicts: Vec<bool>,
        batches: Vec<usize>,
        finished: usize,
        refuse: bool,
    }

    struct Shared(std::sync::Arc<std::sync::Mutex<Count>>);

    impl SessionHooks for Shared {
        fn safety_verdict(&mut self, _jobs: &[JobSpec], v: Result<(), RunError>) -> Verdict {
            let mut c = self.0.lock().unwrap();
            c.verdicts.push(v.is_ok());
            if c.refuse {
                return Verdict::Refused(RunError::Verdict("refused elsewhere".into()));
            }
            match v {
                Ok(()) => Verdict::Go,
                Err(e) => Verdict::Refused(e),
            }
        }
        fn before_start(&mut self, _plan: &Plan, clones: &[usize], _gate: &StartGate) -> Flow {
            self.0.lock().unwrap().batches.push(clones.len());
            Flow::Go
        }
        fn finish(&mut self, r: &mut RunResult) {
            let mut c = self.0.lock().unwrap();
            c.finished += 1;
            assert_eq!(r.jobs.len(), 3);
        }
    }

    #[test]
    fn hooks_hear_the_verdict_each_batch_and_the_end() {
        let count = std::sync::Arc::new(std::sync::Mutex::new(Count::default()));
        let jobs = list("[global]\nioengine=null\nsize=64k\n[a]\nnumjobs=2\n[b]\nstonewall\n");
        let opts = SessionOptions {
            run: RunOptions {
                quiet: true,
                fake_clock_step: Some(1000),
                ..RunOptions::default()
            },
            ..SessionOptions::default()
        };
        let ready = Session::new(jobs, opts)
            .with_hooks(Box::new(Shared(count.clone())))
            .prepare()
            .expect("prepares");
        let r = ready.run().expect("runs");
        assert!(!r.failed());
        let c = count.lock().unwrap();
        assert_eq!(c.verdicts, vec![true]);
        // Two phases: a's two clones together, then b.
        assert_eq!(c.batches, vec![2, 1]);
        assert_eq!(c.finished, 1);
    }

    #[test]
    fn a_refused_verdict_ends_the_session_before_the_run() {
        let count = std::sync::Arc::new(std::sync::Mutex::new(Count {
            refuse: true,
            ..Count::default()
        }));
        let jobs = list("[a]\nioengine=null\nsize=64k\n");
        let e = Session::new(jobs, SessionOptions::default())
            .with_hooks(Box::new(Shared(count.clone())))
            .prepare()
            .err()
            .expect("refused");
        assert_eq!(e.to_string(), "refused elsewhere");
        assert_eq!(count.lock().unwrap().batches, Vec::<usize>::new());
    }

    #[test]
    fn readonly_refuses_before_planning() {
        let w = list("[w]\nioengine=null\nsize=64k\nrw=write\n");
        let opts = SessionOptions {
            readonly: true,
            ..SessionOptions::default()
        };
        let e = Session::new(w, opts).prepare().err().expect("refused");
        assert_eq!(
            e.to_string(),
            "job 'w' writes (rw=write) but --readonly was given"
        );
        for (opts, what) in [
            ("rw=trim", "trims (rw=trim)"),
            ("unlink=1", "deletes its files (unlink=1)"),
            (
                "unlink_each_loop=1",
                "deletes its files (unlink_each_loop=1)",
            ),
            ("file_append=1", "appends to its files (file_append=1)"),
            (
                "ioengine=filedelete",
                "deletes its files (ioengine=filedelete)",
            ),
            (
                "ioengine=filecreate",
                "creates its files (ioengine=filecreate)",
            ),
            ("ioengine=ftruncate\nrw=write", "writes (rw=write)"),
            ("ioengine=falloc", "changes its files (ioengine=falloc)"),
            (
                "mem=mmapshared:buf",
                "writes its buffers into 'buf' (mem=mmapshared)",
            ),
        ] {
            let text = format!("[j]\nsize=64k\n{opts}\n");
            let opts = SessionOptions {
                readonly: true,
                ..SessionOptions::default()
            };
            let e = Session::new(list(&text), opts)
                .prepare()
                .err()
                .expect("refused");
            assert_eq!(
                e.to_string(),
                format!("job 'j' {what} but --readonly was given")
            );
        }
    }

    #[test]
    fn time_based_without_a_runtime_does_the_size_once_with_a_note() {
        for text in [
            "[t]\nioengine=null\nsize=1m\ntime_based\n",
            "[t]\nioengine=null\nsize=1m\ntime_based\nruntime=0\n",
        ] {
            let opts = SessionOptions {
                run: RunOptions {
                    quiet: true,
                    fake_clock_step: Some(1000),
                    ..RunOptions::default()
                },
                ..SessionOptions::default()
            };
            let ready = Session::new(list(text), opts).prepare().expect("prepares");
            assert!(
                ready.warnings().iter().any(|w| w
                    .message
                    .contains("time_based has no effect without a runtime")),
                "{:?}",
                ready.warnings()
            );
            let r = ready.run().expect("runs");
            assert_eq!(r.jobs[0].outcome.stats.dir[0].bytes, 1 << 20);
        }
    }

    #[test]
    fn notes_are_kept_once_each_with_their_job() {
        let l = list("[global]\nioengine=null\nsize=64k\n[a]\nthreads=2\n[b]\n");
        let ready = Session::new(l, SessionOptions::default())
            .prepare()
            .expect("prepares");
        let notes: Vec<&Warning> = ready
            .warnings()
            .iter()
            .filter(|w| w.kind == "note")
            .collect();
        assert!(!notes.is_empty(), "{:?}", ready.warnings());
        assert!(notes.iter().all(|w| w.job == "a"), "{notes:?}");
        assert!(
            notes[0].message.contains("'threads' has no effect"),
            "{notes:?}"
        );
        // Null jobs touch no target: nothing described but the host.
        assert!(ready.environment().targets.is_empty());
        assert!(ready.environment().host.cpus >= 1);
    }
}
