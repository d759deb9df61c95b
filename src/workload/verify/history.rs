//! The blocks a job wrote that are still to be checked, and the order in
//! which they are read back.
//!
//! Blocks come back in write order when the job's offsets cannot repeat
//! (random I/O over the random map). Otherwise (sequential jobs,
//! `norandommap`, non-uniform distributions) they come back sorted by
//! file and offset, and a block later overwritten, even in part, is not
//! checked: only the newest write of any byte is.
//!
//! The store is reserved once at setup for the blocks a pass can write
//! (and, with `verify_backlog`, holds only the blocks not yet checked), so
//! recording a write does not allocate; sorting and pruning happen in
//! place when a check starts.

/// One written block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub offset: u64,
    /// The job's write number (0 for the first write).
    pub numberio: u64,
    pub file: u32,
    pub len: u32,
    /// Overwritten by a newer write (only while pruning).
    stale: bool,
}

impl Piece {
    pub fn new(file: u32, offset: u64, len: u32, numberio: u64) -> Piece {
        Piece {
            offset,
            numberio,
            file,
            len,
            stale: false,
        }
    }

    fn end(&self) -> u64 {
        self.offset + self.len as u64
    }

    fn overlaps(&self, o: &Piece) -> bool {
        self.file == o.file && self.offset < o.end() && o.offset < self.end()
    }
}

/// Written blocks waiting to be checked.
#[derive(Debug)]
pub struct History {
    pieces: Vec<Piece>,
    /// Entries before this one were handed out already.
    head: usize,
    /// Read back sorted by offset, newest write of each byte only.
    sorted: bool,
    /// Drop overwritten blocks as writes are recorded (with a backlog,
    /// when blocks can be written again): the backlog then counts
    /// distinct blocks.
    prune_on_add: bool,
}

impl History {
    /// `capacity`: blocks to reserve room for. Writes to one block must
    /// complete in the order they were recorded when `prune_on_add`.
    pub fn new(sorted: bool, prune_on_add: bool, capacity: usize) -> History {
        History {
            pieces: Vec::with_capacity(capacity),
            head: 0,
            sorted,
            prune_on_add,
        }
    }

    /// Blocks recorded and not yet handed out.
    pub fn pending(&self) -> usize {
        self.pieces.len() - self.head
    }

    /// Records a completed write (dropping the blocks it overwrites when
    /// pruning).
    #[inline]
    pub fn add(&mut self, p: Piece) {
        if self.prune_on_add {
            let head = self.head;
            let mut k = head;
            while k < self.pieces.len() {
                if self.pieces[k].overlaps(&p) {
                    self.pieces.remove(k);
                } else {
                    k += 1;
                }
            }
        }
        if self.head > 0 && self.pieces.len() == self.pieces.capacity() {
            // Reuse the room of blocks already handed out.
            self.pieces.drain(..self.head);
            self.head = 0;
        }
        self.pieces.push(p);
    }

    /// Puts the pending blocks in check order (sorting and dropping
    /// overwritten ones when the history is sorted).
    pub fn arrange(&mut self) {
        if !self.sorted {
            return;
        }
        let rest = &mut self.pieces[self.head..];
        rest.sort_unstable_by_key(|p| (p.file, p.offset, p.numberio));
        // Each overlapping pair has its later-sorted member starting
        // inside the earlier one: the older of the two is stale.
        for i in 0..rest.len() {
            let mut j = i + 1;
            while j < rest.len() && rest[j].file == rest[i].file && rest[j].offset < rest[i].end() {
                if rest[j].numberio > rest[i].numberio {
                    rest[i].stale = true;
                } else {
                    rest[j].stale = true;
                }
                j += 1;
            }
        }
        let head = self.head;
        let mut keep = head;
        for k in head..self.pieces.len() {
            if !self.pieces[k].stale {
                self.pieces[keep] = self.pieces[k];
                keep += 1;
            }
        }
        self.pieces.truncate(keep);
    }

    /// Hands out the next pending block (call `arrange` first).
    #[inline]
    pub fn take_next(&mut self) -> Option<Piece> {
        let p = self.pieces.get(self.head).copied()?;
        self.head += 1;
        if self.head == self.pieces.len() {
            self.clear();
        }
        Some(p)
    }

    /// Forgets every block.
    pub fn clear(&mut self) {
        self.pieces.clear();
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(off: u64, len: u32, n: u64) -> Piece {
        Piece::new(0, off, len, n)
    }

    fn drain(h: &mut History) -> Vec<(u64, u64)> {
        h.arrange();
        std::iter::from_fn(|| h.take_next().map(|p| (p.offset, p.numberio))).collect()
    }

    #[test]
    fn write_order_is_kept_when_offsets_cannot_repeat() {
        let mut h = History::new(false, false, 8);
        for (i, off) in [8192, 0, 4096].into_iter().enumerate() {
            h.add(p(off, 4096, i as u64));
        }
        assert_eq!(drain(&mut h), [(8192, 0), (0, 1), (4096, 2)]);
        assert_eq!(h.pending(), 0);
    }

    #[test]
    fn sorted_history_keeps_only_the_newest_write_of_each_byte() {
        let mut h = History::new(true, false, 8);
        h.add(p(8192, 4096, 0));
        h.add(p(0, 4096, 1));
        h.add(p(8192, 4096, 2));
        h.add(p(2048, 4096, 3)); // overwrites half of the block at 0
        h.add(p(16384, 8192, 4));
        h.add(p(20480, 1024, 5)); // inside the 8k block at 16384
        assert_eq!(drain(&mut h), [(2048, 3), (8192, 2), (20480, 5)]);
    }

    #[test]
    fn pruning_in_write_order_drops_blocks_written_again() {
        let mut h = History::new(false, true, 8);
        h.add(p(0, 4096, 0));
        h.add(p(4096, 4096, 1));
        h.add(p(0, 4096, 2));
        assert_eq!(drain(&mut h), [(4096, 1), (0, 2)]);
    }

    #[test]
    fn backlog_pruning_counts_distinct_blocks() {
        let mut h = History::new(true, true, 4);
        h.add(p(4096, 4096, 0));
        h.add(p(0, 4096, 1));
        h.add(p(4096, 4096, 2));
        assert_eq!(h.pending(), 2);
        h.arrange();
        assert_eq!(h.take_next().map(|p| p.offset), Some(0));
        // Room is reused without growing.
        for n in 3..20 {
            h.add(p(n * 4096, 4096, n));
            h.take_next();
        }
        assert!(h.pieces.capacity() <= 8);
    }
}
