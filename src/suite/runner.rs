//! Runs a suite: the sections of one job file, each as a discarded
//! warm-up pass followed by N measured passes, through `pipeline` (one
//! `run::session` per pass; the caller announces the warnings and notes
//! of the whole job file once). Each pass's run is told where it stands
//! in the command (`run::progress::PassContext`: test k of n, pass or
//! warm-up, and the time the later passes should take, from `eta`) for
//! its progress line.
//!
//! It refuses to start when a test file it would create already exists
//! (it removes only files it created), removes each test's files once no
//! later test uses them, and removes the rest on the way out — also after
//! a stop signal or a closed standard output (the run stops within a
//! second; the interrupted pass is dropped and what was measured is
//! returned, marked interrupted), after a failed job, on an early error
//! return, and on a hard exit (third signal: see `run::signals`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::{eta, pipeline};
use crate::cluster::Client;
use crate::launch::{Launch, Refused};
use crate::results::dataset::{items_of_doc, Metrics, Params};
use crate::run::progress::PassContext;
use crate::run::{output, signals, RunOptions};

#[derive(Clone, Debug)]
pub struct SuiteTest {
    /// The job file section.
    pub section: String,
    /// Label for tables.
    pub label: String,
}

pub struct SuiteRun<'a> {
    pub jobfile: &'a str,
    /// Name of the job file in error messages.
    pub jobfile_name: &'a str,
    pub tests: &'a [SuiteTest],
    pub passes: u32,
    /// Warm-up pass length (0: none).
    pub warmup_us: u64,
    pub run_opts: RunOptions,
    /// Print on standard error, once each, the warnings a pass finds
    /// that were not known before the run (CPU overcommit), as a job run
    /// prints them; the caller announced the others (`Ready::announce`).
    pub announce: bool,
}

/// One direction of one test over its passes.
#[derive(Clone, Debug)]
pub struct DirOutcome {
    pub dir: String,
    pub passes: Vec<Metrics>,
}

#[derive(Clone, Debug)]
pub struct TestOutcome {
    pub test: SuiteTest,
    pub params: Params,
    pub dirs: Vec<DirOutcome>,
    /// The fio-format documents of the measured passes.
    pub runs: Vec<Value>,
    /// Under MPI, on rank 0: each client's (host's, or rank's on one
    /// host) own figures, pass by pass (empty on one host alone).
    pub clients: Vec<ClientOutcome>,
}

/// One client's figures of one test.
#[derive(Clone, Debug)]
pub struct ClientOutcome {
    pub client: Client,
    pub dirs: Vec<ClientDir>,
}

/// One direction of one client over the passes.
#[derive(Clone, Debug)]
pub struct ClientDir {
    pub dir: String,
    pub passes: Vec<Metrics>,
    /// The I/Os of each pass.
    pub ios: Vec<u64>,
}

/// The range of one direction's figures over the clients (each client's
/// median over the passes).
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// "host" or "rank".
    pub unit: &'static str,
    pub clients: usize,
    pub iops: (f64, f64),
    pub bw_bytes: (f64, f64),
}

/// The spread of direction `dir` over `clients` (None with fewer than
/// two: a run on one host alone, or on one rank).
pub fn client_spread(clients: &[ClientOutcome], dir: &str) -> Option<Spread> {
    if clients.len() < 2 {
        return None;
    }
    let mut iops = Vec::new();
    let mut bw = Vec::new();
    for c in clients {
        // A client that did no I/O in this direction counts as 0.
        let (i, b) = match c.dirs.iter().find(|d| d.dir == dir) {
            Some(d) => (
                crate::results::stats::summarize(
                    &d.passes.iter().map(|m| m.iops).collect::<Vec<_>>(),
                )
                .median,
                crate::results::stats::summarize(
                    &d.passes.iter().map(|m| m.bw_bytes).collect::<Vec<_>>(),
                )
                .median,
            ),
            None => (0.0, 0.0),
        };
        iops.push(i);
        bw.push(b);
    }
    let range = |v: &[f64]| {
        let s = crate::results::stats::summarize(v);
        (s.min, s.max)
    };
    let first = clients.first()?;
    Some(Spread {
        unit: first.client.unit,
        clients: clients.len(),
        iops: range(&iops),
        bw_bytes: range(&bw),
    })
}

/// Adds a pass's client figures to a test's.
fn add_clients(to: &mut Vec<ClientOutcome>, pass: &[pipeline::ClientPass]) {
    for cp in pass {
        let i = match to.iter().position(|c| c.client == cp.client) {
            Some(i) => i,
            None => {
                to.push(ClientOutcome {
                    client: cp.client.clone(),
                    dirs: Vec::new(),
                });
                to.len() - 1
            }
        };
        for (dir, m, n) in &cp.dirs {
            let dirs = &mut to[i].dirs;
            let d = match dirs.iter().position(|d| d.dir == *dir) {
                Some(j) => &mut dirs[j],
                None => {
                    dirs.push(ClientDir {
                        dir: dir.clone(),
                        passes: Vec::new(),
                        ios: Vec::new(),
                    });
                    dirs.last_mut().expect("just pushed")
                }
            };
            d.passes.push(*m);
            d.ios.push(*n);
        }
    }
}

#[derive(Debug, Default)]
pub struct SuiteOutcome {
    pub tests: Vec<TestOutcome>,
    pub interrupted: bool,
    /// The first failure (a job error), when one stopped the suite.
    pub error: Option<String>,
}

/// Metrics of each direction of a pass document, with several job entries
/// (clones reported separately) combined: bandwidth and IOPS summed, mean
/// latency weighted by IOPS, p99 the largest (an upper bound).
pub fn pass_metrics(doc: &Value) -> (Params, Vec<(String, Metrics)>) {
    let items = items_of_doc(doc);
    let params = items
        .first()
        .map(|(i, _)| i.params.clone())
        .unwrap_or_default();
    let mut out: Vec<(String, Metrics)> = Vec::new();
    for (item, _) in items {
        let m = item.samples[0];
        match out.iter_mut().find(|(d, _)| *d == item.dir) {
            None => out.push((item.dir.clone(), m)),
            Some((_, acc)) => {
                let w = acc.iops + m.iops;
                if w > 0.0 {
                    acc.lat_mean_ns = (acc.lat_mean_ns * acc.iops + m.lat_mean_ns * m.iops) / w;
                }
                acc.bw_bytes += m.bw_bytes;
                acc.iops += m.iops;
                acc.lat_p99_ns = acc.lat_p99_ns.max(m.lat_p99_ns);
            }
        }
    }
    (params, out)
}

/// The warnings and notes a run found as it ran: each kind and job once
/// (the cache warnings known before the run were announced up front).
/// A text already printed for another job is not printed again.
struct Announced(Vec<(String, String)>, Vec<String>);

impl Announced {
    fn new(known: &[crate::host::Warning]) -> Announced {
        Announced(
            known
                .iter()
                .map(|w| (w.kind.to_string(), w.job.clone()))
                .collect(),
            known.iter().map(|w| w.message.clone()).collect(),
        )
    }

    /// Prints the warnings of a pass's document not printed before:
    /// "iomark: note: …" for CPU overcommit and notes (as a job run
    /// prints them), "iomark: warning: …" for the others.
    fn pass(&mut self, doc: &Value) {
        let list = doc.pointer("/iomark/warnings").and_then(Value::as_array);
        for w in list.into_iter().flatten() {
            let kind = w["kind"].as_str().unwrap_or("").to_string();
            let job = w["job"].as_str().unwrap_or("").to_string();
            if self.0.iter().any(|(k, j)| *k == kind && *j == job) {
                continue;
            }
            let word = match kind.as_str() {
                "cpu-overcommit" | "note" => "note",
                _ => "warning",
            };
            let message = w["message"].as_str().unwrap_or("").to_string();
            if !self.1.contains(&message) {
                output::stderr_line(&format!("iomark: {word}: {message}"));
                self.1.push(message);
            }
            self.0.push((kind, job));
        }
    }
}

/// Why a suite will not start over an existing file.
pub fn existing_file_message(f: &std::path::Path) -> String {
    format!(
        "test file '{}' already exists; iomark only removes files it creates, so it \
         will not use it (delete it if an interrupted run left it, or choose another \
         directory)",
        f.display()
    )
}

/// The test files this run creates. Removed as `remove_unless` says and,
/// whatever happened, when dropped; kept registered with `signals` so a
/// hard exit removes them too. Each is removed through the handle of its
/// directory, opened when the run was checked, and only while its name
/// still is the file the run created (`run::owned::remove`).
struct TestFiles(Vec<TestFile>);

/// A test file: its path (for messages), its directory's handle and its
/// name there.
struct TestFile {
    path: PathBuf,
    dir: Option<Arc<crate::sys::OwnedFd>>,
    name: std::ffi::CString,
}

impl TestFiles {
    /// The test files among the files of `plan` whose paths `files` lists.
    fn new(plan: &crate::run::plan::Plan, files: Vec<PathBuf>) -> TestFiles {
        let mut list = Vec::new();
        for path in files {
            let Some(pf) = plan
                .jobs
                .iter()
                .flat_map(|j| &j.files)
                .find(|f| f.path == path)
            else {
                continue;
            };
            let (Some(dir), Ok(name)) = (pf.seen.dir.as_ref(), crate::run::dirs::file_name(&path))
            else {
                continue;
            };
            // A directory the run creates is not there yet: its files
            // are removed when the run ends, not on a hard exit.
            list.push(TestFile {
                path,
                dir: dir.get(false).ok(),
                name,
            });
        }
        let t = TestFiles(list);
        t.register();
        t
    }

    /// Tells `signals` which files a hard exit removes.
    fn register(&self) {
        use crate::sys::AsRawFd;
        let entries: Vec<(i32, std::ffi::CString)> = self
            .0
            .iter()
            .filter_map(|f| Some((f.dir.as_ref()?.as_raw_fd(), f.name.clone())))
            .collect();
        signals::set_cleanup(&entries);
    }

    /// Removes the files `keep` does not want kept.
    fn remove_unless(&mut self, keep: impl Fn(&PathBuf) -> bool) {
        use crate::sys::AsRawFd;
        self.0.retain(|f| {
            if keep(&f.path) {
                return true;
            }
            let Some(dir) = &f.dir else {
                return false;
            };
            if let Err(why) = crate::run::owned::remove(dir.as_raw_fd(), &f.name, None) {
                output::stderr_line(&format!(
                    "iomark: warning: left test file '{}' in place: {why}",
                    f.path.display(),
                ));
            }
            false
        });
        self.register();
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        self.remove_unless(|_| false);
        signals::clear_cleanup();
        crate::run::dirs::remove_made_dirs();
    }
}

/// Under MPI a stop signal ends every rank (an aborted MPI job), and the
/// launcher kills a rank a second after asking it to stop, maybe before
/// its destructors run: this removes the rank's test files (those
/// registered with `signals`) as soon as a signal arrives, while the
/// workers, which stop on the signal, still hold them open.
struct RemoveOnSignal {
    done: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RemoveOnSignal {
    fn start() -> RemoveOnSignal {
        use std::sync::atomic::Ordering;
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        let thread = std::thread::Builder::new()
            .name("iomark:cleanup".into())
            .spawn(move || {
                while !d.load(Ordering::SeqCst) {
                    if signals::received() {
                        signals::clean_up_now();
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            })
            .ok();
        RemoveOnSignal { done, thread }
    }
}

impl Drop for RemoveOnSignal {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs the suite; `on_test` is called after each test's last pass.
pub fn run_suite(
    s: &SuiteRun,
    on_test: &mut dyn FnMut(&TestOutcome),
) -> Result<SuiteOutcome, String> {
    run_suite_on(s, &Launch::alone(), on_test).map_err(|r| match r {
        Refused::Say(line) => line,
        // Alone, nobody else says anything.
        Refused::Quiet => "refused".into(),
    })
}

/// [`run_suite`] on `launch` (this host alone, or this rank of many).
/// Every rank runs every pass; after each, the ranks agree whether one
/// failed, and all stop together if so. A stop signal on any rank stops
/// the pass on every rank: rank 0 reports what it measured, each rank
/// removes its own test files.
#[allow(clippy::too_many_lines)]
pub fn run_suite_on(
    s: &SuiteRun,
    launch: &Launch,
    on_test: &mut dyn FnMut(&TestOutcome),
) -> Result<SuiteOutcome, Refused> {
    let sections = pipeline::sections(s.jobfile, s.jobfile_name)?;
    // Plan everything first: bad options fail before any I/O, and we learn
    // which files are ours to remove.
    let all = pipeline::prepare_on(launch, &sections, s.jobfile_name, None, &[], &s.run_opts)?;
    let (created, existing) = pipeline::plan_files(all.plan());
    if let Some(f) = existing.first() {
        return Err(existing_file_message(f).into());
    }
    signals::install();
    let sections_run: Vec<String> = s.tests.iter().map(|t| t.section.clone()).collect();
    let mut forecast =
        eta::Forecast::of_plan(all.plan(), &sections_run, s.passes, s.warmup_us, &created);
    let mut pass_no = 0;
    let mut announced = Announced::new(all.ready().warnings());
    let mut created = TestFiles::new(all.plan(), created);
    let _sweeper = launch.ranks().map(|_| RemoveOnSignal::start());
    let files_of = |section: &str| -> Vec<PathBuf> {
        all.plan()
            .jobs
            .iter()
            .filter(|j| j.spec.name == section)
            .flat_map(|j| j.files.iter().map(|f| f.path.clone()))
            .collect()
    };
    let mut out = SuiteOutcome::default();
    'tests: for (ti, test) in s.tests.iter().enumerate() {
        let mut runs = Vec::new();
        let mut passes: Vec<(String, Vec<Metrics>)> = Vec::new();
        let mut params = Params::default();
        let mut clients = Vec::new();
        let warm = if s.warmup_us > 0 { 1 } else { 0 };
        for pass in 0..(warm + s.passes) {
            if launch.stopping() {
                out.interrupted = true;
                break 'tests;
            }
            let extra: Vec<(&str, String)> = if pass < warm {
                vec![("runtime", crate::results::units::time_text(s.warmup_us))]
            } else {
                Vec::new()
            };
            let began = Instant::now();
            let opts = RunOptions {
                pass: Some(Arc::new(PassContext {
                    test: test.section.clone(),
                    test_no: ti as u32 + 1,
                    tests: s.tests.len() as u32,
                    pass: (pass + 1).saturating_sub(warm),
                    passes: s.passes,
                    after_s: forecast.after(pass_no),
                })),
                ..s.run_opts.clone()
            };
            let prepared = pipeline::prepare_on(
                launch,
                &sections,
                s.jobfile_name,
                Some(&test.section),
                &extra,
                &opts,
            );
            let prepared = match prepared {
                Ok(p) => p,
                // Stopped between two passes.
                Err(_) if launch.stopping() => {
                    out.interrupted = true;
                    break 'tests;
                }
                Err(e) => return Err(e),
            };
            let r = pipeline::run_on(prepared)?;
            if s.announce {
                announced.pass(&r.doc);
            }
            forecast.record(pass_no, began.elapsed().as_secs_f64(), r.io_s);
            pass_no += 1;
            if r.interrupted {
                out.interrupted = true;
                break 'tests;
            }
            // Every rank stops after this pass when any rank failed.
            let error = launch.agree_stop(r.errors.first().map(String::as_str));
            if let Some(e) = error {
                out.error = Some(e);
                break 'tests;
            }
            if pass < warm {
                continue;
            }
            let (p, dirs) = pass_metrics(&r.doc);
            params = p;
            for (d, m) in dirs {
                match passes.iter_mut().find(|(x, _)| *x == d) {
                    Some((_, v)) => v.push(m),
                    None => passes.push((d, vec![m])),
                }
            }
            add_clients(&mut clients, &r.clients);
            runs.push(r.doc);
        }
        let outcome = TestOutcome {
            test: test.clone(),
            params,
            dirs: passes
                .into_iter()
                .map(|(dir, passes)| DirOutcome { dir, passes })
                .collect(),
            runs,
            clients,
        };
        on_test(&outcome);
        out.tests.push(outcome);
        // Free space early: drop files no later test uses.
        let later: Vec<PathBuf> = s.tests[ti + 1..]
            .iter()
            .flat_map(|t| files_of(&t.section))
            .collect();
        created.remove_unless(|f| later.contains(f));
    }
    drop(created);
    // Each pass erases its line when it ends; nothing stays drawn.
    output::clear_line();
    Ok(out)
}
