//! The job's open files while it runs: opened and closed as the
//! workload's file service asks (`openfiles`), laid out and opened again
//! after each loop (`unlink_each_loop`), their cached pages dropped before
//! a new loop (`invalidate`), closed (with `fsync_on_close`) at the end.
//! Opening goes through `run::files`, which keeps the safety checks.

use super::queue::IoQueue;
use super::{drops_cache, Worker};
use crate::run::files::{self, OpenedFile};
use crate::workload::fileservice::FileEvent;
use crate::workload::iolog::FileAction;

/// The job's files, by the index the workload uses.
pub(super) struct FileSet {
    pub list: Vec<OpenedFile>,
    /// Flags a file is opened with again.
    pub open_flags: i32,
}

impl Worker<'_> {
    /// Opens and closes files as the workload's file service asks
    /// (`openfiles`); in-flight I/O completes before a file is closed.
    pub(super) fn file_events(&mut self, q: &mut IoQueue) {
        let mut k = 0;
        while k < self.workload.file_events().len() {
            let ev = self.workload.file_events()[k];
            k += 1;
            match ev {
                FileEvent::Open(i) => {
                    let i = i as usize;
                    if self.files.list[i].fd < 0 && !q.engine().caps().diskless && self.reopen(q, i)
                    {
                        if let Some(log) = self.iolog.as_mut() {
                            let now = self.clock.now();
                            log.file(i as u32, FileAction::Open, now);
                        }
                    }
                }
                FileEvent::Close(i) => {
                    let i = i as usize;
                    if self.files.list[i].fd >= 0 {
                        q.drain(self);
                        self.close_file(q, i);
                    }
                }
            }
        }
        self.workload.file_events().clear();
    }

    /// Opens file `i` again; false (the job failed) when it cannot be.
    pub(super) fn reopen(&mut self, q: &mut IoQueue, i: usize) -> bool {
        match files::open_one(self.job, q.engine_mut(), i, self.files.open_flags) {
            Ok(f) => {
                self.files.list[i] = f;
                true
            }
            Err(e) => {
                self.err.fail(e.errno(), e.to_string());
                false
            }
        }
    }

    pub(super) fn close_file(&mut self, q: &mut IoQueue, i: usize) {
        let f = std::mem::replace(&mut self.files.list[i], files::CLOSED);
        if f.fd < 0 && f.data == 0 {
            return;
        }
        if let Some(log) = self.iolog.as_mut() {
            let now = self.clock.now();
            log.file(i as u32, FileAction::Close, now);
        }
        if f.fd >= 0 && self.job.spec.sync.fsync_on_close {
            crate::sys::fsync(f.fd);
        }
        let _ = q.engine_mut().close(f.fd, f.data, f.size);
    }

    /// A new loop reads from the storage again, not from what the last
    /// loop left cached (`invalidate`, fio's default).
    pub(super) fn invalidate(&mut self, q: &mut IoQueue) {
        if drops_cache(&self.job.spec, q.engine().caps()) {
            q.drain(self);
            files::invalidate(self.job, &self.files.list);
        }
    }

    /// `unlink_each_loop`: the files go away after a loop and are laid
    /// out and opened again for the next.
    pub(super) fn recreate_files(&mut self, q: &mut IoQueue) {
        q.drain(self);
        for i in 0..self.files.list.len() {
            self.close_file(q, i);
        }
        files::unlink_all(self.job);
        let mut laid = Vec::new();
        if let Err(m) = files::layout(self.job, &mut laid) {
            self.err.fail(m.errno(), m.to_string());
            return;
        }
        for i in self.workload.initially_open() {
            if !self.reopen(q, i as usize) {
                return;
            }
        }
        self.workload.file_events().clear();
    }
}
