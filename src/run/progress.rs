//! The live progress line and the throughput timeline, both fed from the
//! workers' published counters (`worker::Progress`, relaxed atomics) by the
//! run's watch loop — never from the I/O hot path.
//!
//! The line follows fio's layout:
//! `Jobs: 2 (f=2): [r(1),W(1)][45.0%][r=10.1MiB/s,w=100MiB/s][r=2586,w=100 IOPS][eta 00m:05s]`
//! — running jobs and their open files, one state letter per job (run-length
//! encoded), share done, rates since the last update, and time left. It is
//! redrawn in place (`\r`) about once a second, or printed on its own line
//! with `--eta-newline`. With `--eta=auto` it is shown only when its stream
//! is a terminal; it goes to stderr when stdout carries JSON or terse output
//! so that stdout holds only the requested format.
//!
//! Commands that run several tests, each in several passes (`quick`,
//! `suite`, `sweep`), hand each pass's place in the command to the run
//! as a [`PassContext`]; the line then names the test and the pass and
//! adds the whole command's time left, in at most 80 columns for the
//! usual test names (a longer name is shortened with `…`):
//! `[2/8 rnd4k-q32t1-read pass 1/3][45%][r=186MiB/s 47.7k IOPS][eta 1s, all 1m40s]`
//! — test k of n and its name, `pass k/n` or `warm-up` (the discarded
//! pass before the measured ones), this pass's share done, rates since
//! the last update, this pass's time left and the command's (this pass's
//! plus the estimate for the passes after it, [`PassContext::after_s`]).
//! That line is drawn on standard error, its first update a quarter of a
//! second into the pass, and erased (`\r`, erase to end of line) when
//! the pass ends.
//!
//! Lines are written through `output::draw_line`: any other text printed
//! while a line stands drawn in place clears it first (see `output`).
//!
//! The timeline samples every job's cumulative bytes and I/Os on a fixed
//! grid (see `stats::timeline`); `Reporter::finish` hands them back per job.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::output;
use super::plan::Plan;
use super::worker::{state, Progress};
use crate::job::spec::RwPattern;
use crate::stats::timeline::{Timeline, TimelinePoint};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgressMode {
    #[default]
    Auto,
    Always,
    Never,
}

impl ProgressMode {
    /// Parses the value of `--eta`.
    pub fn parse(v: &str) -> Result<ProgressMode, crate::job::JobError> {
        match v {
            "auto" => Ok(ProgressMode::Auto),
            "always" => Ok(ProgressMode::Always),
            "never" => Ok(ProgressMode::Never),
            _ => Err(format!("--eta: '{v}' is not one of: auto, always, never").into()),
        }
    }
}

/// Where a run stands in a command of several tests and passes, for the
/// progress line (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct PassContext {
    /// The test's name (its job file section).
    pub test: String,
    /// The test's number, from 1, and how many the command runs.
    pub test_no: u32,
    pub tests: u32,
    /// The measured pass's number, from 1, and how many the test has;
    /// `pass` is 0 for the warm-up pass before them.
    pub pass: u32,
    pub passes: u32,
    /// Estimated seconds the command still runs after this pass: the
    /// later passes (warm-up and measured) with their set-up and file
    /// layout. Never negative.
    pub after_s: f64,
}

impl PassContext {
    /// `[2/8 name pass 1/3]`, or `[2/8 name warm-up]`, with the name
    /// cut to at most `max_name` characters (`…` marking the cut).
    fn label(&self, max_name: usize) -> String {
        let n = self.test.chars().count();
        let name = if n > max_name {
            let keep: String = self.test.chars().take(max_name.saturating_sub(1)).collect();
            format!("{keep}…")
        } else {
            self.test.clone()
        };
        let pass = if self.pass == 0 {
            String::from("warm-up")
        } else {
            format!("pass {}/{}", self.pass, self.passes)
        };
        format!("[{}/{} {name} {pass}]", self.test_no, self.tests)
    }
}

/// The width a pass's progress line keeps within (it is shortened by
/// cutting the test's name, down to `MIN_NAME` characters).
pub const PASS_LINE_WIDTH: usize = 80;
const MIN_NAME: usize = 8;

/// How soon a pass's line is first drawn.
const PASS_FIRST_DRAW_MS: u64 = 250;

/// How the progress line and the timeline behave.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressConfig {
    pub mode: ProgressMode,
    /// Print each update on its own line instead of redrawing in place.
    pub newline: bool,
    /// With `newline`: only start a new line after this long (0 = every
    /// update); updates in between redraw in place.
    pub newline_every_ms: u64,
    /// Time between updates of the line.
    pub interval_ms: u64,
    /// Write the line to stderr (stdout carries machine-readable output).
    pub to_stderr: bool,
    /// Timeline sampling interval (0 = no timeline).
    pub timeline_ms: u64,
    /// The pass of a multi-test command this run is (None: a plain run,
    /// fio's line).
    pub pass: Option<std::sync::Arc<PassContext>>,
}

/// Interval of the throughput timeline written to iomark's JSON.
pub const TIMELINE_MS: u64 = 250;

impl Default for ProgressConfig {
    fn default() -> Self {
        ProgressConfig {
            mode: ProgressMode::Auto,
            newline: false,
            newline_every_ms: 0,
            interval_ms: 1000,
            to_stderr: false,
            timeline_ms: TIMELINE_MS,
            pass: None,
        }
    }
}

/// Counters of the same run elsewhere (the other ranks of a run over many
/// hosts, summed, for the batch now running): the line's rates include
/// them, so rank 0 shows what all clients do together.
#[derive(Debug, Default)]
pub struct RemoteCounters {
    pub bytes: [std::sync::atomic::AtomicU64; 3],
    pub ios: [std::sync::atomic::AtomicU64; 3],
}

pub struct Reporter {
    /// Other ranks' counters, added to this run's (see `RemoteCounters`).
    pub remote: Option<Arc<RemoteCounters>>,
    cfg: ProgressConfig,
    enabled: bool,
    start: Instant,
    last_print: Instant,
    last_newline: Instant,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    printed: bool,
    width: usize,
    /// When each job was first seen started, and whether its final
    /// timeline sample was taken.
    started: Vec<Option<Instant>>,
    finalized: Vec<bool>,
    timelines: Vec<Timeline>,
    next_grid: u32,
}

impl Reporter {
    pub fn new(cfg: ProgressConfig, jobs: usize) -> Self {
        let enabled = match cfg.mode {
            ProgressMode::Always => true,
            ProgressMode::Never => false,
            ProgressMode::Auto => {
                if cfg.to_stderr {
                    std::io::stderr().is_terminal()
                } else {
                    std::io::stdout().is_terminal()
                }
            }
        };
        let now = Instant::now();
        let timeline_ms = cfg.timeline_ms;
        Reporter {
            remote: None,
            cfg,
            enabled,
            start: now,
            last_print: now,
            last_newline: now,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            printed: false,
            width: 0,
            started: vec![None; jobs],
            finalized: vec![false; jobs],
            timelines: (0..jobs)
                .map(|_| Timeline {
                    interval_ms: timeline_ms,
                    points: Vec::new(),
                })
                .collect(),
            next_grid: 0,
        }
    }

    /// Called by the watch loop every few tens of milliseconds.
    pub fn tick(&mut self, plan: &Plan, progresses: &[Arc<Progress>]) {
        self.sample(progresses);
        let mut interval = Duration::from_millis(self.cfg.interval_ms.max(100));
        if self.cfg.pass.is_some() && self.last_print == self.start {
            // A pass's line shows up promptly, not a second into it.
            interval = interval.min(Duration::from_millis(PASS_FIRST_DRAW_MS));
        }
        if !self.enabled || self.last_print.elapsed() < interval {
            return;
        }
        let line = self.line(plan, progresses);
        self.print(&line);
    }

    fn print(&mut self, line: &str) {
        let new_line = self.cfg.newline
            && (self.cfg.newline_every_ms == 0
                || self.last_newline.elapsed() >= Duration::from_millis(self.cfg.newline_every_ms));
        // fio's line pads over the longer line it replaces; a pass's line
        // erases the rest of the line instead.
        let pad = if self.cfg.pass.is_some() {
            // (Nothing to erase when each update has a line of its own.)
            String::from(if new_line { "" } else { "\x1b[K" })
        } else {
            " ".repeat(self.width.saturating_sub(line.len()))
        };
        let text = if new_line {
            self.last_newline = Instant::now();
            self.width = 0;
            format!("\r{line}{pad}\n")
        } else {
            self.width = line.len();
            format!("\r{line}{pad}")
        };
        let r = output::draw_line(self.cfg.to_stderr, &text, !new_line);
        if r.is_err() {
            // A closed stream: stop drawing rather than failing the run.
            self.enabled = false;
        }
        self.printed = !new_line;
    }

    /// Timeline samples: a baseline when a job is first seen running, one
    /// per grid tick while it runs, and a final one when it has ended.
    fn sample(&mut self, progresses: &[Arc<Progress>]) {
        if self.cfg.timeline_ms == 0 {
            return;
        }
        let el = self.start.elapsed().as_millis() as u64;
        let grid = (el / self.cfg.timeline_ms) as u32;
        let on_grid = grid >= self.next_grid;
        if on_grid {
            self.next_grid = grid + 1;
        }
        for (i, p) in progresses.iter().enumerate() {
            if self.finalized[i] {
                continue;
            }
            let st = p.state.load(Ordering::Relaxed);
            let active = matches!(st, state::RAMP | state::RUNNING | state::FSYNC);
            let ended = st >= state::DONE;
            let first = self.started[i].is_none() && (active || ended);
            if first {
                self.started[i] = Some(Instant::now());
            }
            if !(first || ended || (active && on_grid)) {
                continue;
            }
            let last = self.timelines[i].points.last().map(|p| p.index);
            let index = match last {
                Some(l) if grid <= l => l + 1,
                _ => grid,
            };
            let point = TimelinePoint {
                index,
                t_ms: el,
                bytes: [0, 1, 2].map(|d| p.bytes[d].load(Ordering::Relaxed)),
                ios: [0, 1, 2].map(|d| p.ios[d].load(Ordering::Relaxed)),
            };
            self.timelines[i].points.push(point);
            if ended {
                self.finalized[i] = true;
            }
        }
    }

    /// How much of job `i` is done (0 to 1) and its time left in s:
    /// by time for time-based jobs, else by bytes (bounded by runtime).
    fn share(
        &self,
        i: usize,
        job: &crate::run::plan::PlannedJob,
        p: &Progress,
        st: u8,
    ) -> (f64, f64) {
        let since = self.started[i]
            .map(|t| t.elapsed().as_secs_f64())
            .unwrap_or(0.0);
        let planned_rt = match p.planned_runtime_us.load(Ordering::Relaxed) {
            0 => (job.spec.time.runtime_us + job.spec.time.ramp_time_us) as f64 / 1e6,
            us => us as f64 / 1e6,
        };
        let planned = p.planned_bytes.load(Ordering::Relaxed) as f64;
        let moved: u64 = (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum();
        let by_time = planned_rt > 0.0 && (job.spec.time.time_based || planned == 0.0);
        if st >= state::DONE {
            (1.0, 0.0)
        } else if st == state::NOT_STARTED || st == state::SETUP {
            (0.0, if planned_rt > 0.0 { planned_rt } else { 0.0 })
        } else if by_time {
            let f = (since / planned_rt).min(1.0);
            (f, (planned_rt - since).max(0.0))
        } else if planned > 0.0 {
            let f = (moved as f64 / planned).min(1.0);
            let left = if f > 0.0 { since * (1.0 - f) / f } else { 0.0 };
            let left = if planned_rt > 0.0 {
                left.min((planned_rt - since).max(0.0))
            } else {
                left
            };
            (f, left)
        } else {
            (0.0, 0.0)
        }
    }

    /// The rates since the last line, per direction: bandwidth and IOPS
    /// texts (`r=…`); the counters become the next line's base.
    fn rates(&mut self, bytes: [u64; 3], ios: [u64; 3], dt: f64) -> (Vec<String>, Vec<String>) {
        let rate = |d: usize, v: &[u64; 3], last: &[u64; 3]| (v[d] - last[d].min(v[d])) as f64 / dt;
        let mut bw = Vec::new();
        let mut iops = Vec::new();
        for (d, tag) in [(0, "r"), (1, "w"), (2, "t")] {
            if bytes[d] > 0 {
                bw.push(format!(
                    "{tag}={}",
                    human_rate(rate(d, &bytes, &self.last_bytes))
                ));
                iops.push(format!(
                    "{tag}={}",
                    human_count(rate(d, &ios, &self.last_ios))
                ));
            }
        }
        if bw.is_empty() {
            bw.push("r=0B/s".into());
            iops.push("r=0".into());
        }
        self.last_bytes = bytes;
        self.last_ios = ios;
        (bw, iops)
    }

    fn line(&mut self, plan: &Plan, progresses: &[Arc<Progress>]) -> String {
        let now = Instant::now();
        let dt = now.duration_since(self.last_print).as_secs_f64().max(1e-3);
        self.last_print = now;
        let mut bytes = [0u64; 3];
        let mut ios = [0u64; 3];
        let mut running = 0;
        let mut files = 0;
        let mut states: Vec<char> = Vec::with_capacity(plan.jobs.len());
        let mut done_frac = 0.0;
        // Time left: per phase the longest job, summed over phases.
        let mut phase_left: Vec<f64> = vec![0.0; plan.phases() as usize];
        for (i, (job, p)) in plan.jobs.iter().zip(progresses).enumerate() {
            for d in 0..3 {
                bytes[d] += p.bytes[d].load(Ordering::Relaxed);
                ios[d] += p.ios[d].load(Ordering::Relaxed);
            }
            let st = p.state.load(Ordering::Relaxed);
            let c = match st {
                state::NOT_STARTED => 'P',
                state::SETUP => 'I',
                state::RAMP => '/',
                state::RUNNING => running_char(job.spec.io.rw),
                state::FSYNC => 'F',
                state::DONE => '_',
                _ => 'X',
            };
            if matches!(st, state::RAMP | state::RUNNING | state::FSYNC) {
                running += 1;
                files += job.files.len().max(1);
            }
            states.push(c);
            let (frac, left) = self.share(i, job, p, st);
            done_frac += frac;
            let ph = job.phase as usize;
            if ph < phase_left.len() {
                phase_left[ph] = phase_left[ph].max(left);
            }
        }
        if let Some(r) = &self.remote {
            for d in 0..3 {
                bytes[d] += r.bytes[d].load(Ordering::Relaxed);
                ios[d] += r.ios[d].load(Ordering::Relaxed);
            }
        }
        let n = plan.jobs.len().max(1) as f64;
        let (bw, iops) = self.rates(bytes, ios, dt);
        let left = phase_left.iter().sum::<f64>();
        if let Some(pass) = &self.cfg.pass {
            let rates: Vec<String> = bw
                .iter()
                .zip(&iops)
                .map(|(b, i)| format!("{b} {} IOPS", &i[2..]))
                .collect();
            return pass_line(pass, done_frac / n, &rates.join(", "), left);
        }
        let eta = left.round() as u64;
        format!(
            "Jobs: {running} (f={files}): [{}][{:.1}%][{}][{} IOPS][eta {}]",
            run_length(&states),
            done_frac / n * 100.0,
            bw.join(","),
            iops.join(","),
            eta_text(eta)
        )
    }

    /// Clears the line (when redrawn in place) and returns each job's
    /// timeline, indexed like the plan's jobs.
    pub fn finish(&mut self, progresses: &[Arc<Progress>]) -> Vec<Timeline> {
        self.sample(progresses);
        if self.enabled && self.printed {
            let blank = if self.cfg.pass.is_some() {
                output::CLEAR_LINE.to_string()
            } else {
                format!("\r{}\r", " ".repeat(self.width))
            };
            let _ = output::draw_line(self.cfg.to_stderr, &blank, false);
            self.printed = false;
        }
        std::mem::take(&mut self.timelines)
    }
}

/// A pass's line: where the command stands, this pass's share done
/// (`frac`, 0 to 1), its rates, its time left (`left`, seconds) and the
/// command's; shortened to `PASS_LINE_WIDTH` by cutting the test's name.
fn pass_line(pass: &PassContext, frac: f64, rates: &str, left: f64) -> String {
    let left = left.max(0.0);
    let all = left + pass.after_s.max(0.0);
    let tail = format!(
        "[{:.0}%][{rates}][eta {}, all {}]",
        (frac * 100.0).clamp(0.0, 100.0).floor(),
        short_time(left.round() as u64),
        short_time(all.round() as u64)
    );
    let full = pass.label(usize::MAX);
    let over = (full.chars().count() + tail.chars().count()).saturating_sub(PASS_LINE_WIDTH);
    let name = pass.test.chars().count();
    let label = if over > 0 && name > MIN_NAME {
        pass.label(name.saturating_sub(over).max(MIN_NAME))
    } else {
        full
    };
    format!("{label}{tail}")
}

/// A compact time: `5s`, `1m40s`, `2h05m`, `3d04h`.
pub fn short_time(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d{h:02}h")
    } else if h > 0 {
        format!("{h}h{m:02}m")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

/// `rrW_` → `r(2),W(1),_(1)`.
fn run_length(states: &[char]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < states.len() {
        let c = states[i];
        let mut n = 1;
        while i + n < states.len() && states[i + n] == c {
            n += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{c}({n})"));
        i += n;
    }
    out
}

/// `MMm:SSs`, with hours and days in front when needed, as fio shows it.
pub fn eta_text(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d:{h:02}h:{m:02}m:{s:02}s")
    } else if h > 0 {
        format!("{h:02}h:{m:02}m:{s:02}s")
    } else {
        format!("{m:02}m:{s:02}s")
    }
}

fn running_char(rw: RwPattern) -> char {
    match rw {
        RwPattern::Read => 'R',
        RwPattern::Write => 'W',
        RwPattern::Trim => 'D',
        RwPattern::RandRead => 'r',
        RwPattern::RandWrite => 'w',
        RwPattern::RandTrim => 'd',
        RwPattern::ReadWrite => 'M',
        RwPattern::RandRw => 'm',
        RwPattern::TrimWrite | RwPattern::RandTrimWrite => 'T',
    }
}

pub fn human_rate(bps: f64) -> String {
    let units = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
    let mut v = bps;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v >= 100.0 || i == 0 {
        format!("{:.0}{}", v, units[i])
    } else {
        format!("{:.1}{}", v, units[i])
    }
}

pub fn human_count(n: f64) -> String {
    if n >= 1e6 {
        format!("{:.1}M", n / 1e6)
    } else if n >= 1e4 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{:.0}", n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_run_length_encoded() {
        assert_eq!(run_length(&['r', 'r', 'W', '_']), "r(2),W(1),_(1)");
        assert_eq!(run_length(&[]), "");
    }

    #[test]
    fn eta_has_minutes_and_seconds() {
        assert_eq!(eta_text(5), "00m:05s");
        assert_eq!(eta_text(125), "02m:05s");
        assert_eq!(eta_text(3725), "01h:02m:05s");
        assert_eq!(eta_text(90000), "1d:01h:00m:00s");
    }

    fn ctx(test: &str, pass: u32, after_s: f64) -> PassContext {
        PassContext {
            test: test.into(),
            test_no: 2,
            tests: 8,
            pass,
            passes: 3,
            after_s,
        }
    }

    #[test]
    fn a_pass_line_names_test_and_pass_and_the_command_eta() {
        let l = pass_line(
            &ctx("rnd4k-q32t1-write", 1, 98.6),
            0.456,
            "w=186MiB/s 47.7k IOPS",
            1.4,
        );
        assert_eq!(
            l,
            "[2/8 rnd4k-q32t1-write pass 1/3][45%][w=186MiB/s 47.7k IOPS][eta 1s, all 1m40s]"
        );
        let w = pass_line(&ctx("seq1m-q8t1-read", 0, 0.0), 1.2, "r=0B/s 0 IOPS", -3.0);
        assert_eq!(
            w,
            "[2/8 seq1m-q8t1-read warm-up][100%][r=0B/s 0 IOPS][eta 0s, all 0s]"
        );
    }

    #[test]
    fn a_long_test_name_is_cut_to_keep_the_line_in_80_columns() {
        let rates = "w=1023MiB/s 999.9k IOPS";
        let l = pass_line(&ctx("ars-64k-randwrite-q16t16", 2, 600.0), 0.5, rates, 30.0);
        assert_eq!(l.chars().count(), PASS_LINE_WIDTH, "{l}");
        assert!(l.starts_with("[2/8 ars-64k-randw… pass 2/3][50%]"), "{l}");
        // Never below a readable stem, even when that leaves the line long.
        let huge = format!("r=1023MiB/s 999.9k IOPS, {rates}");
        let l = pass_line(&ctx("ars-64k-randwrite-q16t16", 2, 0.0), 0.5, &huge, 1.0);
        assert!(l.starts_with("[2/8 ars-64k… pass 2/3]"), "{l}");
    }

    #[test]
    fn short_times_are_compact() {
        assert_eq!(short_time(0), "0s");
        assert_eq!(short_time(59), "59s");
        assert_eq!(short_time(100), "1m40s");
        assert_eq!(short_time(3725), "1h02m");
        assert_eq!(short_time(90061), "1d01h");
    }

    #[test]
    fn rates_are_human_readable() {
        assert_eq!(human_rate(512.0), "512B/s");
        assert_eq!(human_rate(10.5 * 1048576.0), "10.5MiB/s");
        assert_eq!(human_count(25_600.0), "25.6k");
        assert_eq!(human_count(950.0), "950");
    }
}
