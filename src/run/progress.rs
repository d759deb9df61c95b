//! The live progress line, fio-style:
//! `Jobs: 1 (f=1): [w(1)][45.0%][w=100MiB/s][w=25.6k IOPS][eta 00m:05s]`,
//! refreshed about once a second on a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::plan::Plan;
use super::worker::{state, Progress};
use crate::job::spec::RwPattern;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgressMode {
    #[default]
    Auto,
    Always,
    Never,
}

pub struct Reporter {
    enabled: bool,
    newline: bool,
    start: Instant,
    last: Instant,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    printed: bool,
    width: usize,
}

impl Reporter {
    pub fn new(mode: ProgressMode, newline: bool) -> Self {
        let enabled = match mode {
            ProgressMode::Always => true,
            ProgressMode::Never => false,
            ProgressMode::Auto => std::io::stdout().is_terminal(),
        };
        let now = Instant::now();
        Reporter {
            enabled,
            newline,
            start: now,
            last: now,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            printed: false,
            width: 0,
        }
    }

    pub fn tick(&mut self, plan: &Plan, progresses: &[Arc<Progress>]) {
        if !self.enabled || self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        let line = self.line(plan, progresses);
        let mut out = std::io::stdout().lock();
        if self.newline {
            let _ = writeln!(out, "{line}");
        } else {
            let pad = self.width.saturating_sub(line.len());
            let _ = write!(out, "\r{line}{}", " ".repeat(pad));
            self.width = line.len();
        }
        let _ = out.flush();
        self.printed = true;
    }

    fn line(&mut self, plan: &Plan, progresses: &[Arc<Progress>]) -> String {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64().max(1e-3);
        self.last = now;
        let mut bytes = [0u64; 3];
        let mut ios = [0u64; 3];
        let mut running = 0;
        let mut states = String::new();
        let mut done_frac = 0.0;
        let mut eta_s: f64 = 0.0;
        for (job, p) in plan.jobs.iter().zip(progresses) {
            for d in 0..3 {
                bytes[d] += p.bytes[d].load(Ordering::Relaxed);
                ios[d] += p.ios[d].load(Ordering::Relaxed);
            }
            let st = p.state.load(Ordering::Relaxed);
            let c = match st {
                state::NOT_STARTED => 'P',
                state::SETUP => 'I',
                state::RAMP => '/',
                state::RUNNING => {
                    running += 1;
                    running_char(job.spec.io.rw)
                }
                state::FSYNC => 'F',
                state::DONE => '_',
                _ => 'X',
            };
            states.push(c);
            // Share done: by time for runtime-bound jobs, else by bytes.
            let elapsed = self.start.elapsed().as_secs_f64();
            let rt = p.planned_runtime_us.load(Ordering::Relaxed) as f64 / 1e6;
            let planned = p.planned_bytes.load(Ordering::Relaxed) as f64;
            let moved: u64 = (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum();
            let frac = if st >= state::DONE {
                1.0
            } else if rt > 0.0 && (job.spec.time.time_based || planned == 0.0) {
                (elapsed / rt).min(1.0)
            } else if planned > 0.0 {
                (moved as f64 / planned).min(1.0)
            } else {
                0.0
            };
            done_frac += frac;
            if frac > 0.0 && frac < 1.0 {
                eta_s = eta_s.max(elapsed * (1.0 - frac) / frac);
            }
        }
        let n = plan.jobs.len().max(1) as f64;
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
        self.last_bytes = bytes;
        self.last_ios = ios;
        let eta = eta_s.round() as u64;
        format!(
            "Jobs: {running} (f={running}): [{states}][{:.1}%][{}][{} IOPS][eta {:02}m:{:02}s]",
            done_frac / n * 100.0,
            bw.join(","),
            iops.join(","),
            eta / 60,
            eta % 60
        )
    }

    pub fn finish(&mut self) {
        if self.printed && !self.newline {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r{}\r", " ".repeat(self.width));
            let _ = out.flush();
        }
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
