//! Which file the next I/O goes to (`file_service_type`), among the files
//! that are open (`openfiles` limits how many are at once; a finished file
//! is closed and the next unopened one takes its place).
//!
//! The chooser knows nothing about offsets; the workload tells it when a
//! file has nothing left in this pass. Open and close requests are queued
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
    picker: Option<BlockPicker>,
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
        let picker = dist.map(|d| BlockPicker::new(&d, nfiles as u64, 1, seed));
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
