//! `zonemode=zbd`: I/O on zoned devices as fio 3.33 does it. A device's
//! zones (start, capacity, write pointer, whether it is sequential, open)
//! are one state ([`ZbdDevice`]) shared by every job and clone that uses
//! the device (iomark runs jobs as threads); each job's view of it
//! ([`ZbdFile`]) adjusts the workload's offsets:
//!
//! - a write goes to the write pointer of the zone its offset falls in,
//!   when that zone can be open (`max_open_zones` for the device,
//!   `job_max_open_zones` for the job, else the device's limit);
//!   otherwise to another open zone of the job's region (the one at the
//!   same relative place in the device's list of open zones), or a new
//!   zone is opened after it. A full zone is reset (rewritten from its
//!   start) when a write needs it, and so is a zone
//!   `zone_reset_threshold`/`zone_reset_frequency` pick. A zone is closed
//!   when the write that reaches its capacity completes. Writes are cut
//!   at the capacity to a multiple of the smallest block size;
//! - a zone with writes of one job in flight is that job's until they
//!   complete (as fio's zone locks): another job that needs it, or needs
//!   an open zone while every one is being filled, is told to wait
//!   ([`ZbdEnd::Wait`]): its worker completes its own I/O and calls
//!   [`ZbdFile::wait`], then asks again;
//! - a read reads written data only (unless `read_beyond_wp`): an offset
//!   past the write pointer is folded into the zone's data, or moves to the
//!   nearest zone holding some; its length is cut at the write pointer;
//! - sequential writes skip from a zone's capacity to its end.
//!
//! Write pointers advance when a write is issued. Resets are asked of the
//! worker ([`ZbdFile::take_resets`]), which waits for the I/O in flight,
//! resets the zone on the device and counts it (`zone_resets`). This
//! module does no I/O itself.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// One zone as the workload tracks it (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneState {
    pub start: u64,
    pub capacity: u64,
    pub wp: u64,
    /// Has a write pointer (sequential zone); conventional zones do not.
    pub seq: bool,
    pub offline: bool,
    pub open: bool,
    /// The device reported it open when the job started.
    pub was_open: bool,
    reset_due: bool,
    /// The job whose writes are in flight here (0: none), and how many.
    owner: u32,
    inflight: u32,
}

impl ZoneState {
    pub fn new(start: u64, capacity: u64, wp: u64, seq: bool, offline: bool) -> ZoneState {
        ZoneState {
            start,
            capacity,
            wp,
            seq,
            offline,
            open: false,
            was_open: false,
            reset_due: false,
            owner: 0,
            inflight: 0,
        }
    }

    fn cap_end(&self) -> u64 {
        self.start + self.capacity
    }

    /// Another job than `me` has writes in flight here.
    fn busy(&self, me: u32) -> bool {
        self.inflight > 0 && self.owner != me
    }
}

/// What the job's options say about zones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZbdCfg {
    /// Smallest block size per direction.
    pub min_bs: [u64; 3],
    pub verify: bool,
    pub random: bool,
    /// Both reads and writes.
    pub mixed: bool,
    pub read_beyond_wp: bool,
    /// Zones open at once on the device (0: not tracked) and for the job.
    pub max_open: u32,
    pub job_max_open: u32,
    pub reset_threshold: f64,
    pub reset_frequency: f64,
    /// Resets are sent to the device (a zoned device, not emulated zones).
    pub device_resets: bool,
}

/// Why no I/O can be made in the zones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZbdEnd {
    /// Nothing (more) can be read or written here: the file is done.
    Done,
    /// The job fails with this errno and message.
    Fail(i32, String),
    /// Another job's writes in flight hold what this write needs: the
    /// worker completes its own I/O, calls [`ZbdFile::wait`] and asks
    /// for the same write again.
    Wait,
}

/// What a job waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    /// Zone `.0` to have no other job's writes in flight.
    Zone(usize),
    /// Any write to complete (the completion count was `.0`), or none to
    /// be in flight.
    Completion(u64),
}

/// The zones of one device, shared by the jobs that use it.
#[derive(Debug)]
pub struct ZbdDevice {
    state: Mutex<DevState>,
    done: Condvar,
}

#[derive(Debug)]
struct DevState {
    zones: Vec<ZoneState>,
    /// Open zones, in the order they were opened.
    open: Vec<usize>,
    /// The device's open-zone limit (0: not tracked).
    max_open: u32,
    /// Bytes written in the zones (all, and sequential only).
    swd: u64,
    wp_swd: u64,
    /// Writes until the next frequency-driven reset.
    write_cnt: u32,
    /// Writes in flight on the device, and completions so far.
    inflight: u64,
    completions: u64,
}

impl ZbdDevice {
    /// A device with these zones; `max_open` zones may be open at once
    /// (0: open zones are not tracked).
    pub fn new(zones: Vec<ZoneState>, max_open: u32) -> Arc<ZbdDevice> {
        Arc::new(ZbdDevice {
            state: Mutex::new(DevState {
                zones,
                open: Vec::new(),
                max_open,
                swd: 0,
                wp_swd: 0,
                write_cnt: u32::MAX,
                inflight: 0,
                completions: 0,
            }),
            done: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, DevState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The zones, as tracked now.
    pub fn zones(&self) -> Vec<ZoneState> {
        self.lock().zones.clone()
    }
}

/// Tells each job (each `ZbdFile`) apart.
static NEXT_JOB: AtomicU32 = AtomicU32::new(1);

/// One job's view of one file's zones: its region and counts.
#[derive(Debug)]
pub struct ZbdFile {
    dev: Arc<ZbdDevice>,
    zone_size: u64,
    /// The region's zones: `[min, max)`.
    min: usize,
    max: usize,
    io_start: u64,
    io_size: u64,
    /// Zones this job opened (for `job_max_open_zones`).
    job_open: u32,
    resets: Vec<(u64, u64)>,
    /// Zone resets done so far.
    pub reset_count: u64,
    cfg: ZbdCfg,
    me: u32,
    waiting: Option<Waiting>,
}

impl ZbdFile {
    /// This job's view of device `dev` (zones of `zone_size` bytes) and
    /// its region in it (zone-aligned by the planner).
    pub fn new(dev: Arc<ZbdDevice>, zone_size: u64, start: u64, len: u64, cfg: ZbdCfg) -> Self {
        let nzones = dev.lock().zones.len();
        let zone_size = zone_size.max(1);
        let idx = |o: u64| ((o / zone_size) as usize).min(nzones);
        let mut f = ZbdFile {
            dev: Arc::clone(&dev),
            zone_size,
            min: idx(start),
            max: idx(start + len),
            io_start: start,
            io_size: len,
            job_open: 0,
            resets: Vec::new(),
            reset_count: 0,
            cfg,
            me: NEXT_JOB.fetch_add(1, Ordering::Relaxed),
            waiting: None,
        };
        // Zones the device reports open count against the limits; those
        // past them are reset, as fio does.
        let mut st = dev.lock();
        for zi in f.min..f.max {
            if st.zones[zi].was_open && !st.zones[zi].open && !f.open_zone(&mut st, zi) {
                f.reset_zone(&mut st, zi);
            }
        }
        f
    }

    fn idx(&self, st: &DevState, offset: u64) -> usize {
        ((offset / self.zone_size) as usize).min(st.zones.len())
    }

    fn zone_end(&self, st: &DevState, zi: usize) -> u64 {
        st.zones
            .get(zi + 1)
            .map(|z| z.start)
            .unwrap_or(st.zones[zi].start + self.zone_size)
    }

    fn valid(&self, offset: u64) -> bool {
        offset.wrapping_sub(self.io_start) < self.io_size
    }

    fn full(&self, st: &DevState, zi: usize, need: u64) -> bool {
        let z = &st.zones[zi];
        z.seq && z.wp + need > z.cap_end()
    }

    /// Zone resets the worker must do before the next I/O: (start, len).
    pub fn take_resets(&mut self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.resets.drain(..)
    }

    /// The zones of the device, as tracked now.
    pub fn zones(&self) -> Vec<ZoneState> {
        self.dev.zones()
    }

    /// At the start of each pass of a writing job: the bytes written are
    /// counted again, and with verification the region is reset first
    /// (a reset while writing would lose data the verify needs).
    pub fn pass_start(&mut self, writes: bool) {
        if !writes {
            return;
        }
        let dev = Arc::clone(&self.dev);
        let mut st = dev.lock();
        let (mut swd, mut wp_swd) = (0, 0);
        for z in &st.zones[self.min..self.max] {
            swd += z.wp - z.start;
            if z.seq {
                wp_swd += z.wp - z.start;
            }
        }
        (st.swd, st.wp_swd) = (swd, wp_swd);
        if self.cfg.verify {
            for zi in self.min..self.max {
                if st.zones[zi].seq {
                    self.close(&mut st, zi);
                    self.reset_zone(&mut st, zi);
                }
            }
        }
        self.reset_write_cnt(&mut st);
    }

    fn reset_write_cnt(&self, st: &mut DevState) {
        let f = self.cfg.reset_frequency;
        st.write_cnt = if f > 0.0 {
            (1.0 / f).min(u32::MAX as f64) as u32
        } else {
            u32::MAX
        };
    }

    /// Resets zone `zi`'s write pointer (asking the worker to reset it on
    /// the device); an empty zone is left as it is.
    fn reset_zone(&mut self, st: &mut DevState, zi: usize) {
        let z = st.zones[zi];
        let data = z.wp - z.start;
        if data == 0 {
            return;
        }
        if self.cfg.device_resets {
            self.resets.push((z.start, self.zone_end(st, zi) - z.start));
        }
        st.swd = st.swd.saturating_sub(data);
        st.wp_swd = st.wp_swd.saturating_sub(data);
        st.zones[zi].wp = z.start;
        self.reset_count += 1;
    }

    fn close(&mut self, st: &mut DevState, zi: usize) {
        if !st.zones[zi].open {
            return;
        }
        if let Some(i) = st.open.iter().position(|&o| o == zi) {
            st.open.remove(i);
        }
        st.zones[zi].open = false;
        self.job_open = self.job_open.saturating_sub(1);
    }

    /// Opens zone `zi` for writing if the limits allow (true when it is
    /// open, or open-zone accounting is off).
    fn open_zone(&mut self, st: &mut DevState, zi: usize) -> bool {
        let min_bs = self.cfg.min_bs[1];
        let z = st.zones[zi];
        if z.offline || (self.cfg.verify && self.full(st, zi, min_bs)) {
            return false;
        }
        if st.max_open == 0 {
            return true;
        }
        if z.open {
            // filled by writes already issued: full, not open
            return z.wp < z.cap_end();
        }
        if (self.cfg.job_max_open > 0 && self.job_open >= self.cfg.job_max_open)
            || st.open.len() as u32 >= st.max_open
        {
            return false;
        }
        st.open.push(zi);
        st.zones[zi].open = true;
        self.job_open += 1;
        true
    }

    /// The open zone at the same relative place as `offset` in the region.
    fn pick_open(&self, st: &DevState, offset: u64) -> usize {
        ((offset - self.io_start) as u128 * st.open.len() as u128 / self.io_size.max(1) as u128)
            as usize
    }

    /// An open zone (opening one if it must) with room for a smallest
    /// block, for a write whose own zone could not be opened.
    fn convert_to_open_zone(&mut self, st: &mut DevState, offset: u64) -> Option<usize> {
        let min_bs = self.cfg.min_bs[1];
        let tracked = st.max_open > 0 || self.cfg.job_max_open > 0;
        let (lo, hi) = (self.min, self.max);
        let in_region = move |o: &usize| (lo..hi).contains(o);
        let mut zi = if tracked {
            st.open
                .get(self.pick_open(st, offset))
                .or(st.open.first())
                .copied()
                .unwrap_or(self.idx(st, offset))
        } else {
            self.idx(st, offset)
        };
        zi = zi.clamp(self.min, self.max - 1);
        let mut examine = true;
        if st.zones[zi].seq && !(tracked || st.zones[zi].offline) {
            // no limits: this zone itself
        } else if st.zones[zi].seq && st.open.is_empty() {
            examine = false;
        } else {
            let start = self.pick_open(st, offset);
            let n = st.open.len();
            let found = (0..n).map(|i| st.open[(start + i) % n]).find(in_region)?;
            zi = found;
        }
        if examine && st.zones[zi].wp + min_bs <= st.zones[zi].cap_end() {
            return Some(zi);
        }
        // The zone is full: open the next ones (wrapping in the region).
        for _ in 0..(self.io_size / self.zone_size) {
            zi += 1;
            if zi >= self.max || !self.valid(st.zones[zi].start) {
                zi = self.min;
            }
            if !st.zones[zi].seq || st.zones[zi].open {
                continue;
            }
            if self.open_zone(st, zi) {
                return Some(zi);
            }
        }
        // Or one already open with room left.
        st.open
            .iter()
            .copied()
            .filter(in_region)
            .find(|&o| st.zones[o].wp + min_bs <= st.zones[o].cap_end())
    }

    /// Where a write of `len` bytes at `offset` really goes: its zone's
    /// write pointer, and the length that fits before the zone's capacity.
    /// The zone is this job's until [`ZbdFile::completed`] is told of the
    /// write.
    pub fn write(&mut self, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let dev = Arc::clone(&self.dev);
        let mut st = dev.lock();
        self.write_in(&mut st, offset, len)
    }

    fn write_in(&mut self, st: &mut DevState, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let min_bs = self.cfg.min_bs[1];
        let mut zi = self.idx(st, offset);
        if !st.zones[zi].seq {
            return Ok(self.conventional_write(st, zi, offset, len));
        }
        if len > self.zone_size {
            return Err(ZbdEnd::Fail(
                libc::EINVAL,
                format!(
                    "zonemode=zbd: a write of {len} bytes exceeds the zone size ({})",
                    self.zone_size
                ),
            ));
        }
        if st.zones[zi].busy(self.me) {
            return Err(self.wait_for(Waiting::Zone(zi)));
        }
        if !self.open_zone(st, zi) {
            match self.convert_to_open_zone(st, offset) {
                Some(z) if st.zones[z].busy(self.me) => return Err(self.wait_for(Waiting::Zone(z))),
                Some(z) => zi = z,
                // Writes in flight may close zones: wait for one.
                None if st.inflight > 0 => {
                    return Err(self.wait_for(Waiting::Completion(st.completions)))
                }
                None => return Err(ZbdEnd::Done),
            }
        }
        if self.cfg.reset_frequency > 0.0
            && st.wp_swd as f64 >= self.io_size as f64 * self.cfg.reset_threshold
            && self.count_down(st)
        {
            st.zones[zi].reset_due = true;
        }
        if st.zones[zi].reset_due || self.full(st, zi, min_bs) {
            st.zones[zi].reset_due = false;
            self.reset_zone(st, zi);
            if st.zones[zi].capacity < min_bs {
                return Err(ZbdEnd::Fail(
                    libc::EINVAL,
                    format!(
                        "zone capacity {} is smaller than the smallest block size {min_bs}",
                        st.zones[zi].capacity
                    ),
                ));
            }
        }
        let at = st.zones[zi].wp;
        if !self.valid(at) {
            return Err(ZbdEnd::Fail(
                libc::EINVAL,
                format!("zonemode=zbd: the write pointer {at} lies outside the job's region"),
            ));
        }
        let room = st.zones[zi].cap_end() - at;
        let len = len.min(room) / min_bs * min_bs;
        if len < min_bs {
            return Err(ZbdEnd::Fail(
                libc::EIO,
                format!("zone remainder {room} is smaller than the smallest block size {min_bs}"),
            ));
        }
        self.issued_write(st, zi, at, len);
        Ok((at, len))
    }

    fn wait_for(&mut self, w: Waiting) -> ZbdEnd {
        self.waiting = Some(w);
        ZbdEnd::Wait
    }

    /// After [`ZbdEnd::Wait`], once this job has no I/O in flight: waits
    /// (at most 50 ms) for what the write needs, then returns for the
    /// write to be asked again.
    pub fn wait(&mut self) {
        let Some(w) = self.waiting.take() else {
            return;
        };
        let dev = Arc::clone(&self.dev);
        let mut st = dev.lock();
        let ready = |st: &DevState| match w {
            Waiting::Zone(zi) => !st.zones[zi].busy(self.me),
            Waiting::Completion(n) => st.completions != n || st.inflight == 0,
        };
        if !ready(&st) {
            st = dev
                .done
                .wait_timeout_while(st, Duration::from_millis(50), |s| !ready(s))
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        drop(st);
    }

    /// A write [`ZbdFile::write`] gave ended (`ok`: it succeeded): the
    /// zone is free for other jobs once none of this job's writes are in
    /// flight there, and a write that reached the capacity closes it.
    pub fn completed(&mut self, offset: u64, len: u64, ok: bool) {
        let dev = Arc::clone(&self.dev);
        let mut st = dev.lock();
        let zi = self.idx(&st, offset);
        let Some(z) = st.zones.get_mut(zi) else {
            return;
        };
        if !z.seq || z.owner != self.me || z.inflight == 0 {
            return;
        }
        z.inflight -= 1;
        if z.inflight == 0 {
            z.owner = 0;
        }
        let filled = ok && offset + len >= z.cap_end();
        st.inflight = st.inflight.saturating_sub(1);
        st.completions += 1;
        if filled {
            self.close(&mut st, zi);
        }
        drop(st);
        dev.done.notify_all();
    }

    /// One fewer write until the next frequency-driven reset; true when
    /// it is due (and the count starts again).
    fn count_down(&self, st: &mut DevState) -> bool {
        st.write_cnt = st.write_cnt.saturating_sub(1);
        if st.write_cnt == 0 {
            self.reset_write_cnt(st);
            return true;
        }
        false
    }

    /// The write pointer moves past a write being issued; the zone is
    /// this job's until the write completes.
    fn issued_write(&mut self, st: &mut DevState, zi: usize, at: u64, len: u64) {
        let cap_end = st.zones[zi].cap_end();
        let end = (at + len).min(cap_end);
        let wp = st.zones[zi].wp;
        if wp <= end {
            st.swd += end - wp;
            st.wp_swd += end - wp;
        }
        st.inflight += 1;
        let z = &mut st.zones[zi];
        z.wp = end;
        z.owner = self.me;
        z.inflight += 1;
    }

    /// A write in a conventional zone must not run into a sequential one.
    fn conventional_write(&self, st: &DevState, zi: usize, offset: u64, len: u64) -> (u64, u64) {
        let min_bs = self.cfg.min_bs[1];
        let next = zi + 1;
        let Some(n) = st.zones.get(next).filter(|z| z.seq) else {
            return (offset, len);
        };
        if offset + len <= n.start {
            return (offset, len);
        }
        let (off, new_len) = if offset + min_bs > n.start {
            let off = st.zones[zi].start + n.start - offset;
            (off, len.min(n.start - off))
        } else {
            (offset, n.start - offset)
        };
        (off, new_len / min_bs * min_bs)
    }

    /// A trim of the zone at `offset` (trims are a zone long): the zone
    /// is reset (counted when it held data) instead of trimmed, as fio
    /// does; a random trim of an empty zone moves to the nearest zone
    /// holding data. Conventional zones are trimmed as usual.
    pub fn trim(&mut self, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let dev = Arc::clone(&self.dev);
        let mut st = dev.lock();
        let mut zi = self.idx(&st, offset);
        if zi >= st.zones.len() || !st.zones[zi].seq {
            return Ok((offset, len));
        }
        if self.cfg.random && st.zones[zi].wp == st.zones[zi].start {
            zi = self.find_zone(&st, 1, zi).ok_or(ZbdEnd::Done)?;
        }
        if st.zones[zi].busy(self.me) {
            return Err(self.wait_for(Waiting::Zone(zi)));
        }
        let start = st.zones[zi].start;
        if !self.cfg.random && offset != start {
            return Err(ZbdEnd::Fail(
                libc::EINVAL,
                format!("zonemode=zbd: a trim at {offset} does not start a zone"),
            ));
        }
        self.reset_zone(&mut st, zi);
        Ok((start, len))
    }

    /// Whether a trim at `offset` is a zone reset (done by
    /// [`ZbdFile::take_resets`]) rather than a trim for the device.
    pub fn trim_is_reset(&self, offset: u64) -> bool {
        let st = self.dev.lock();
        let zi = self.idx(&st, offset);
        st.zones.get(zi).is_some_and(|z| z.seq)
    }

    /// Where a read of `len` bytes at `offset` goes: inside written data.
    pub fn read(&mut self, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let dev = Arc::clone(&self.dev);
        let st = dev.lock();
        let min_bs = self.cfg.min_bs[0];
        let orig = self.idx(&st, offset);
        let mut zi = orig;
        let z = st.zones[zi];
        if !z.seq || (!z.offline && self.cfg.read_beyond_wp) {
            return Ok((offset, len));
        }
        let mut offset = offset;
        let mut range = if z.offline { 0 } else { z.wp - z.start };
        if range < min_bs || (!self.cfg.random && offset + min_bs > z.wp) {
            zi = self.find_zone(&st, min_bs, zi).ok_or(ZbdEnd::Done)?;
            let z = st.zones[zi];
            range = z.wp - z.start;
            if !self.cfg.random {
                offset = z.start;
            }
        }
        let z = st.zones[zi];
        if range <= len {
            offset = z.start;
        } else if self.cfg.random {
            let rel = (offset - st.zones[orig].start) % (range - len);
            offset = z.start + rel / min_bs * min_bs;
        }
        if !z.seq {
            return Ok((offset, len));
        }
        match len.min(z.wp - offset) / min_bs * min_bs {
            0 => Err(ZbdEnd::Done),
            cut => Ok((offset, cut)),
        }
    }

    /// The nearest zone (after `zi`; for random I/O also before it) with
    /// at least `need` bytes of data.
    fn find_zone(&self, st: &DevState, need: u64, zi: usize) -> Option<usize> {
        let has = |i: usize| {
            let z = &st.zones[i];
            !z.offline && z.start + need <= z.wp
        };
        let mut up = zi + 1;
        let mut down = zi as isize - 1;
        while up < self.max || down >= self.min as isize {
            if up < self.max {
                if has(up) {
                    return Some(up);
                }
            } else if !self.cfg.random {
                break;
            }
            if self.cfg.random && down >= self.min as isize && has(down as usize) {
                return Some(down as usize);
            }
            up += 1;
            down -= 1;
        }
        None
    }

    /// Whether a read should be a write instead: a mixed job's first read
    /// when nothing is written yet (nothing could be read).
    pub fn read_needs_data(&self) -> bool {
        self.cfg.mixed && self.dev.lock().swd == 0 && !self.cfg.read_beyond_wp
    }

    /// Sequential writes: from a zone's capacity on, the next position is
    /// the zone's end (`None`: no skip).
    pub fn seq_skip(&self, last_end: u64) -> Option<u64> {
        let st = self.dev.lock();
        let zi = self.idx(&st, last_end);
        let z = st.zones.get(zi)?;
        (z.capacity < self.zone_size && last_end >= z.cap_end()).then(|| self.zone_end(&st, zi))
    }
}

impl Drop for ZbdFile {
    /// A job that ends (or fails) with writes unaccounted frees its zones.
    fn drop(&mut self) {
        let mut st = self.dev.lock();
        let mut freed = 0;
        for z in st.zones.iter_mut().filter(|z| z.owner == self.me) {
            freed += z.inflight as u64;
            z.owner = 0;
            z.inflight = 0;
        }
        if freed > 0 {
            st.inflight = st.inflight.saturating_sub(freed);
            st.completions += 1;
            drop(st);
            self.dev.done.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZS: u64 = 1 << 20;
    const CAP: u64 = 768 << 10;

    fn cfg(max_open: u32) -> ZbdCfg {
        ZbdCfg {
            min_bs: [4096; 3],
            verify: false,
            random: true,
            mixed: false,
            read_beyond_wp: false,
            max_open,
            job_max_open: 0,
            reset_threshold: 0.0,
            reset_frequency: 0.0,
            device_resets: true,
        }
    }

    fn file(zones: Vec<ZoneState>, start: u64, len: u64, c: ZbdCfg) -> ZbdFile {
        ZbdFile::new(ZbdDevice::new(zones, c.max_open), ZS, start, len, c)
    }

    fn empty(n: u64) -> Vec<ZoneState> {
        (0..n)
            .map(|i| ZoneState::new(i * ZS, CAP, i * ZS, true, false))
            .collect()
    }

    #[test]
    fn writes_go_to_the_write_pointer_and_full_zones_are_reset() {
        let mut f = file(empty(4), 0, 4 * ZS, cfg(8));
        // an offset deep in zone 1 writes at its write pointer
        assert_eq!(f.write(ZS + 100 * 4096, 4096), Ok((ZS, 4096)));
        assert_eq!(f.write(ZS + 7 * 4096, 4096), Ok((ZS + 4096, 4096)));
        // fill zone 1 to its capacity: it closes
        for i in 2..192 {
            assert_eq!(f.write(ZS, 4096), Ok((ZS + i * 4096, 4096)));
        }
        assert!(f.zones()[1].open, "closed when the last write completes");
        for i in 0..192 {
            f.completed(ZS + i * 4096, 4096, true);
        }
        assert!(!f.zones()[1].open);
        assert_eq!(f.zones()[1].wp, ZS + CAP);
        // the next write to it resets it first
        assert_eq!(f.write(ZS + 5, 4096), Ok((ZS, 4096)));
        assert_eq!(f.reset_count, 1);
        assert_eq!(f.take_resets().collect::<Vec<_>>(), [(ZS, ZS)]);
    }

    #[test]
    fn a_write_is_cut_at_the_capacity() {
        let mut f = file(empty(2), 0, 2 * ZS, cfg(0));
        for _ in 0..191 {
            f.write(0, 4096).unwrap();
        }
        assert_eq!(f.write(0, 8192), Ok((CAP - 4096, 4096)));
    }

    #[test]
    fn the_open_limit_sends_writes_to_open_zones() {
        let mut f = file(empty(8), 0, 8 * ZS, cfg(2));
        f.write(0, 4096).unwrap();
        f.write(3 * ZS, 4096).unwrap();
        // zone 6 cannot be opened: the write goes to an open zone
        let (at, _) = f.write(6 * ZS, 4096).unwrap();
        assert!(at == 4096 || at == 3 * ZS + 4096, "{at}");
        let busy = f.zones().iter().filter(|z| z.wp > z.start).count();
        assert_eq!(busy, 2);
    }

    #[test]
    fn reads_stay_in_written_data() {
        let mut f = file(empty(4), 0, 4 * ZS, cfg(8));
        for _ in 0..4 {
            f.write(2 * ZS, 4096).unwrap();
        }
        // an empty zone: the nearest with data
        let (at, len) = f.read(0, 4096).unwrap();
        assert!(
            (2 * ZS..2 * ZS + 16384).contains(&at) && len == 4096,
            "{at}"
        );
        // cut at the write pointer
        assert_eq!(f.read(2 * ZS, 64 << 10), Ok((2 * ZS, 16384)));
        let mut none = file(empty(4), 0, 4 * ZS, cfg(8));
        assert_eq!(none.read(0, 4096), Err(ZbdEnd::Done));
    }

    #[test]
    fn sequential_writes_skip_from_capacity_to_zone_end() {
        let f = file(empty(2), 0, 2 * ZS, cfg(0));
        assert_eq!(f.seq_skip(CAP), Some(ZS));
        assert_eq!(f.seq_skip(CAP - 4096), None);
    }

    #[test]
    fn open_zones_beyond_the_limit_are_reset_at_the_start() {
        let mut z = empty(4);
        for zone in &mut z {
            zone.wp += 4096;
            zone.was_open = true;
        }
        let f = file(z, 0, 4 * ZS, cfg(2));
        assert_eq!(f.reset_count, 2);
        assert_eq!(f.zones().iter().filter(|z| z.open).count(), 2);
    }

    #[test]
    fn jobs_on_one_device_share_write_pointers_and_the_open_limit() {
        let dev = ZbdDevice::new(empty(8), 2);
        let mut a = ZbdFile::new(Arc::clone(&dev), ZS, 0, 8 * ZS, cfg(2));
        let mut b = ZbdFile::new(Arc::clone(&dev), ZS, 0, 8 * ZS, cfg(2));
        assert_eq!(a.write(0, 4096), Ok((0, 4096)));
        // zone 0 is a's while its write is in flight
        assert_eq!(b.write(100, 4096), Err(ZbdEnd::Wait));
        a.completed(0, 4096, true);
        b.wait();
        // then b writes at the shared write pointer
        assert_eq!(b.write(100, 4096), Ok((4096, 4096)));
        b.completed(4096, 4096, true);
        assert_eq!(a.write(5 * ZS, 4096), Ok((5 * ZS, 4096)));
        a.completed(5 * ZS, 4096, true);
        // two zones are open on the device: b cannot open a third
        let (at, _) = b.write(7 * ZS, 4096).unwrap();
        assert!(at == 8192 || at == 5 * ZS + 4096, "{at}");
        b.completed(at, 4096, true);
        assert_eq!(dev.zones().iter().filter(|z| z.open).count(), 2);
    }

    #[test]
    fn a_job_waits_while_every_open_zone_is_being_filled() {
        let dev = ZbdDevice::new(empty(4), 1);
        let mut a = ZbdFile::new(Arc::clone(&dev), ZS, 0, 4 * ZS, cfg(1));
        let mut b = ZbdFile::new(Arc::clone(&dev), ZS, 0, 4 * ZS, cfg(1));
        for i in 0..192 {
            assert_eq!(a.write(0, 4096), Ok((i * 4096, 4096)));
        }
        // zone 0 is full by writes in flight; no other zone may open
        assert_eq!(b.write(2 * ZS, 4096), Err(ZbdEnd::Wait));
        for i in 0..192 {
            a.completed(i * 4096, 4096, true);
        }
        b.wait();
        assert_eq!(b.write(2 * ZS, 4096), Ok((2 * ZS, 4096)));
        drop(b);
        // a job that ends frees its zones
        assert_eq!(a.write(2 * ZS, 4096), Ok((2 * ZS + 4096, 4096)));
    }

    #[test]
    fn a_trim_resets_its_zone_or_moves_to_one_with_data() {
        let mut f = file(empty(4), 0, 4 * ZS, cfg(0));
        f.write(2 * ZS, 4096).unwrap();
        f.completed(2 * ZS, 4096, true);
        // random: an empty zone's trim goes to the nearest with data
        assert_eq!(f.trim(0, ZS), Ok((2 * ZS, ZS)));
        assert_eq!(f.reset_count, 1);
        assert_eq!(f.take_resets().collect::<Vec<_>>(), [(2 * ZS, ZS)]);
        assert_eq!(f.zones()[2].wp, 2 * ZS);
        assert!(f.trim_is_reset(2 * ZS));
        // nothing left to trim
        assert_eq!(f.trim(0, ZS), Err(ZbdEnd::Done));
    }
}
