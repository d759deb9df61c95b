//! Which file the next I/O goes to (`file_service_type`), among the files
//! that are open (`openfiles` limits how many are at once; a finished file
//! is closed and the next unopened one takes its place).
//!
//! The chooser knows nothing about offsets; the workload tells it when a
//! file has nothing left in this pass. With a skewed choice (zipf, pareto,
//! normal) a finished file is started over instead, as fio does, so the
//! skew shapes how much each file gets: the workload asks
//! `restarts_files`. Open and close requests are queued
//! as events for the worker, in vectors sized once.

use super::dist::BlockPicker;
use super::rng::Rng;
use crate::job::spec::{FileService, RandomDistribution};

/// A file the worker must open or may close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileEvent {
    Open(u32),
    Close(u32),
}

#[derive(Clone, Debug)]
pub struct FileChooser {
    kind: FileService,
    nfiles: usize,
    /// Files that may be used now (all of them unless `openfiles`).
    active: Vec<usize>,
    max_open: usize,
    /// Next file (in order) not yet opened in this pass.
    next_unopened: usize,
    done: Vec<bool>,
    /// Position in `active` of the current file.
    cur: usize,
    /// I/Os left before switching (roundrobin:N, random:N).
    left: u32,
    picker: Option<FilePicker>,
    events: Vec<FileEvent>,
}

impl FileChooser {
    pub fn new(kind: FileService, nfiles: usize, openfiles: u32, seed: u64) -> Self {
        let max_open = if openfiles == 0 {
            nfiles
        } else {
            (openfiles as usize).min(nfiles)
        }
        .max(1);
        let dist = match kind {
            FileService::Zipf(t) => Some(RandomDistribution::Zipf {
                theta: t,
                center: None,
            }),
            FileService::Pareto(h) => Some(RandomDistribution::Pareto { h, center: None }),
            FileService::Normal(d) | FileService::Gauss(d) => Some(RandomDistribution::Normal {
                dev: d,
                center: None,
            }),
            _ => None,
        };
        let picker = dist.map(|d| FilePicker::new(&d, nfiles, seed));
        let mut c = FileChooser {
            kind,
            nfiles,
            active: Vec::with_capacity(max_open),
            max_open,
            next_unopened: 0,
            done: vec![false; nfiles],
            cur: 0,
            left: 0,
            picker,
            events: Vec::with_capacity(2 * nfiles + 2),
        };
        c.reset();
        c
    }

    /// True when some files stay closed until others finish.
    pub fn limits_open(&self) -> bool {
        self.max_open < self.nfiles
    }

    /// Files open at the start of a pass.
    pub fn initially_open(&self) -> &[usize] {
        &self.active
    }

    /// New pass: every file has work again; the first files reopen.
    pub fn reset(&mut self) {
        self.done.iter_mut().for_each(|d| *d = false);
        if self.limits_open() {
            for &f in &self.active {
                self.events.push(FileEvent::Close(f as u32));
            }
        }
        self.active.clear();
        self.next_unopened = 0;
        self.cur = 0;
        self.left = 0;
        self.fill();
    }

    fn fill(&mut self) {
        while self.active.len() < self.max_open && self.next_unopened < self.nfiles {
            let f = self.next_unopened;
            self.next_unopened += 1;
            if self.limits_open() {
                self.events.push(FileEvent::Open(f as u32));
            }
            self.active.push(f);
        }
    }

    /// Open/close requests since the last call.
    pub fn events(&mut self) -> &mut Vec<FileEvent> {
        &mut self.events
    }

    /// Whether a file with nothing left starts over instead of finishing
    /// (a skewed choice: the job ends with its byte or I/O count).
    pub fn restarts_files(&self) -> bool {
        self.picker.is_some()
    }

    pub fn all_done(&self) -> bool {
        self.active.is_empty()
    }

    /// Marks `file` finished for this pass; it is closed and replaced.
    pub fn file_done(&mut self, file: usize) {
        if self.done[file] {
            return;
        }
        self.done[file] = true;
        if let Some(pos) = self.active.iter().position(|f| *f == file) {
            self.active.remove(pos);
            if self.limits_open() {
                self.events.push(FileEvent::Close(file as u32));
            }
            if pos < self.cur {
                self.cur -= 1;
            }
            if self.cur >= self.active.len() {
                self.cur = 0;
            }
            // The next file starts a fresh run.
            self.left = 0;
            self.fill();
        }
    }

    /// The file for the next I/O (None when every file is done).
    #[inline]
    pub fn choose(&mut self, rng: &mut Rng) -> Option<usize> {
        if self.active.is_empty() {
            return None;
        }
        let n = self.active.len();
        match self.kind {
            FileService::RoundRobin(per) => {
                if self.cur >= n {
                    self.cur = 0;
                }
                if self.left == 0 {
                    self.left = per.max(1);
                }
                let f = self.active[self.cur];
                self.left -= 1;
                if self.left == 0 {
                    self.cur = (self.cur + 1) % n;
                }
                Some(f)
            }
            FileService::Sequential(_) => Some(self.active[0]),
            FileService::Random(per) => {
                if self.left == 0 || self.cur >= n {
                    self.cur = rng.below(n as u64) as usize;
                    self.left = per.max(1);
                }
                self.left -= 1;
                Some(self.active[self.cur])
            }
            FileService::Zipf(_)
            | FileService::Pareto(_)
            | FileService::Normal(_)
            | FileService::Gauss(_) => {
                let want = self
                    .picker
                    .as_ref()
                    .map(|p| p.pick(rng) as usize)
                    .unwrap_or(0);
                // A finished file hands its turn to the next open one.
                Some(
                    self.active
                        .iter()
                        .copied()
                        .find(|f| *f >= want)
                        .unwrap_or(self.active[0]),
                )
            }
        }
    }
}

/// Ranges per file: a skewed choice draws over `nfiles << FILE_SHIFT`
/// ranges, unscattered, and the file is the range's top bits, as fio's
/// `file_service_type` distributions do; zipf and pareto start their
/// hottest range at a random place (so the hot share of the first file
/// varies with where it falls), normal at the middle.
const FILE_SHIFT: u32 = 10;

#[derive(Clone, Debug)]
struct FilePicker {
    shape: BlockPicker,
    ranges: u64,
    rotate: u64,
}

impl FilePicker {
    fn new(dist: &RandomDistribution, nfiles: usize, seed: u64) -> Self {
        let ranges = (nfiles.max(1) as u64) << FILE_SHIFT;
        let rotate = match dist {
            RandomDistribution::Normal { .. } => 0,
            _ => Rng::stream(seed, 0xF1E5).below(ranges),
        };
        FilePicker {
            shape: BlockPicker::new(dist, ranges, 1, seed),
            ranges,
            rotate,
        }
    }

    #[inline]
    fn pick(&self, rng: &mut Rng) -> u64 {
        ((self.shape.rank(rng) + self.rotate) % self.ranges) >> FILE_SHIFT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(kind: FileService, nfiles: usize, openfiles: u32, n: usize) -> Vec<usize> {
        let mut c = FileChooser::new(kind, nfiles, openfiles, 1);
        let mut rng = Rng::new(1);
        (0..n).map(|_| c.choose(&mut rng).unwrap()).collect()
    }

    #[test]
    fn roundrobin_with_runs() {
        assert_eq!(
            order(FileService::RoundRobin(1), 3, 0, 6),
            [0, 1, 2, 0, 1, 2]
        );
        assert_eq!(
            order(FileService::RoundRobin(2), 3, 0, 7),
            [0, 0, 1, 1, 2, 2, 0]
        );
    }

    #[test]
    fn finished_files_are_skipped_and_replaced() {
        let mut c = FileChooser::new(FileService::RoundRobin(1), 3, 1, 1);
        let mut rng = Rng::new(1);
        assert_eq!(
            c.events().drain(..).collect::<Vec<_>>(),
            [FileEvent::Open(0)]
        );
        assert_eq!(c.choose(&mut rng), Some(0));
        assert_eq!(c.choose(&mut rng), Some(0));
        c.file_done(0);
        assert_eq!(
            c.events().drain(..).collect::<Vec<_>>(),
            [FileEvent::Close(0), FileEvent::Open(1)]
        );
        assert_eq!(c.choose(&mut rng), Some(1));
        c.file_done(1);
        c.file_done(2);
        assert_eq!(c.choose(&mut rng), None);
        assert!(c.all_done());
    }

    #[test]
    fn roundrobin_continues_after_a_file_finishes() {
        let mut c = FileChooser::new(FileService::RoundRobin(1), 3, 0, 1);
        let mut rng = Rng::new(1);
        assert_eq!(c.choose(&mut rng), Some(0));
        c.file_done(1);
        let next: Vec<usize> = (0..4).map(|_| c.choose(&mut rng).unwrap()).collect();
        assert_eq!(next, [2, 0, 2, 0]);
    }

    /// Per-file shares of `n` choices.
    fn shares(kind: FileService, nfiles: usize, n: usize, seed: u64) -> Vec<f64> {
        let mut c = FileChooser::new(kind, nfiles, 0, seed);
        let mut rng = Rng::new(seed);
        let mut counts = vec![0usize; nfiles];
        for _ in 0..n {
            counts[c.choose(&mut rng).unwrap()] += 1;
        }
        let mut v: Vec<f64> = counts.iter().map(|c| *c as f64 / n as f64).collect();
        v.sort_by(|a, b| b.total_cmp(a));
        v
    }

    #[test]
    fn skewed_choices_favour_files_as_fio_does() {
        // fio 3.33, eight files: zipf:1.2 gives the hottest file 85-91 %,
        // pareto:0.9 splits most between two files, normal:20 between the
        // middle two.
        for seed in 1..6 {
            let z = shares(FileService::Zipf(1.2), 8, 20_000, seed);
            assert!(z[0] > 0.45 && z[0] + z[1] > 0.85, "zipf {z:?}");
            let p = shares(FileService::Pareto(0.9), 8, 20_000, seed);
            assert!(p[0] + p[1] > 0.8, "pareto {p:?}");
            let g = shares(FileService::Normal(20.0), 8, 20_000, seed);
            assert!(g[0] + g[1] > 0.6 && g[0] + g[1] < 0.95, "normal {g:?}");
        }
        let c = FileChooser::new(FileService::Zipf(1.2), 8, 0, 1);
        assert!(c.restarts_files());
        let c = FileChooser::new(FileService::Random(1), 8, 0, 1);
        assert!(!c.restarts_files());
    }

    #[test]
    fn random_and_zipf_use_every_file() {
        for kind in [FileService::Random(1), FileService::Zipf(1.2)] {
            let v = order(kind, 4, 0, 2000);
            for f in 0..4 {
                assert!(v.contains(&f), "{kind:?} never chose file {f}");
            }
        }
    }
}
