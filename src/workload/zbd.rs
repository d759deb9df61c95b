//! `zonemode=zbd`: I/O on zoned devices as fio 3.33 does it. Each file of
//! the job has its zones (start, capacity, write pointer, whether it is
//! sequential, open); the workload's offsets are then adjusted:
//!
//! - a write goes to the write pointer of the zone its offset falls in,
//!   when that zone can be open (`max_open_zones`, `job_max_open_zones`,
//!   else the device's limit); otherwise to another open zone of the job's
//!   region (the one at the same relative place in the list of open
//!   zones), or a new zone is opened after it. A full zone is reset
//!   (rewritten from its start) when a write needs it, and so is a zone
//!   `zone_reset_threshold`/`zone_reset_frequency` pick. A zone is closed
//!   when a write reaches its capacity. Writes are cut at the capacity to
//!   a multiple of the smallest block size;
//! - a read reads written data only (unless `read_beyond_wp`): an offset
//!   past the write pointer is folded into the zone's data, or moves to the
//!   nearest zone holding some; its length is cut at the write pointer;
//! - sequential writes skip from a zone's capacity to its end.
//!
//! Write pointers advance when a write is issued. Resets are asked of the
//! worker ([`ZbdFile::take_resets`]), which waits for the I/O in flight,
//! resets the zone on the device and counts it (`zone_resets`). This
//! module does no I/O itself.

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
        }
    }

    fn cap_end(&self) -> u64 {
        self.start + self.capacity
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
}

/// One file's zones and the job's place in them.
#[derive(Clone, Debug)]
pub struct ZbdFile {
    zones: Vec<ZoneState>,
    zone_size: u64,
    /// The region's zones: `[min, max)`.
    min: usize,
    max: usize,
    io_start: u64,
    io_size: u64,
    open: Vec<usize>,
    /// Bytes written in the region's zones (all, and sequential only).
    swd: u64,
    wp_swd: u64,
    write_cnt: u32,
    resets: Vec<(u64, u64)>,
    /// Zone resets done so far.
    pub reset_count: u64,
    cfg: ZbdCfg,
}

impl ZbdFile {
    /// The zones of a device (or emulated ones), all of `zone_size`
    /// bytes, and the job's region in it (zone-aligned by the planner).
    pub fn new(zones: Vec<ZoneState>, zone_size: u64, start: u64, len: u64, cfg: ZbdCfg) -> Self {
        let mut f = ZbdFile {
            zones,
            zone_size: zone_size.max(1),
            min: 0,
            max: 0,
            io_start: start,
            io_size: len,
            open: Vec::new(),
            swd: 0,
            wp_swd: 0,
            write_cnt: 0,
            resets: Vec::new(),
            reset_count: 0,
            cfg,
        };
        f.min = f.idx(start);
        f.max = f.idx(start + len);
        // Zones the device reports open count against the limits; those
        // past them are reset, as fio does.
        for zi in f.min..f.max {
            if f.zones[zi].was_open && !f.open_zone(zi) {
                f.reset_zone(zi);
            }
        }
        f
    }

    fn idx(&self, offset: u64) -> usize {
        ((offset / self.zone_size) as usize).min(self.zones.len())
    }

    fn zone_end(&self, zi: usize) -> u64 {
        self.zones
            .get(zi + 1)
            .map(|z| z.start)
            .unwrap_or(self.zones[zi].start + self.zone_size)
    }

    fn valid(&self, offset: u64) -> bool {
        offset.wrapping_sub(self.io_start) < self.io_size
    }

    fn full(&self, zi: usize, need: u64) -> bool {
        let z = &self.zones[zi];
        z.seq && z.wp + need > z.cap_end()
    }

    /// Zone resets the worker must do before the next I/O: (start, len).
    pub fn take_resets(&mut self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.resets.drain(..)
    }

    /// The zones, as tracked now.
    pub fn zones(&self) -> &[ZoneState] {
        &self.zones
    }

    /// At the start of each pass of a writing job: the bytes written are
    /// counted again, and with verification the region is reset first
    /// (a reset while writing would lose data the verify needs).
    pub fn pass_start(&mut self, writes: bool) {
        if !writes {
            return;
        }
        let (mut swd, mut wp_swd) = (0, 0);
        for z in &self.zones[self.min..self.max] {
            swd += z.wp - z.start;
            if z.seq {
                wp_swd += z.wp - z.start;
            }
        }
        (self.swd, self.wp_swd) = (swd, wp_swd);
        if self.cfg.verify {
            for zi in self.min..self.max {
                if self.zones[zi].seq {
                    self.close(zi);
                    self.reset_zone(zi);
                }
            }
        }
        self.reset_write_cnt();
    }

    fn reset_write_cnt(&mut self) {
        let f = self.cfg.reset_frequency;
        self.write_cnt = if f > 0.0 {
            (1.0 / f).min(u32::MAX as f64) as u32
        } else {
            u32::MAX
        };
    }

    /// Resets zone `zi`'s write pointer (asking the worker to reset it on
    /// the device); an empty zone is left as it is.
    fn reset_zone(&mut self, zi: usize) {
        let z = self.zones[zi];
        let data = z.wp - z.start;
        if data == 0 {
            return;
        }
        if self.cfg.device_resets {
            self.resets.push((z.start, self.zone_end(zi) - z.start));
        }
        self.swd = self.swd.saturating_sub(data);
        self.wp_swd = self.wp_swd.saturating_sub(data);
        self.zones[zi].wp = z.start;
        self.reset_count += 1;
    }

    fn close(&mut self, zi: usize) {
        if !self.zones[zi].open {
            return;
        }
        if let Some(i) = self.open.iter().position(|&o| o == zi) {
            self.open.remove(i);
        }
        self.zones[zi].open = false;
    }

    /// Opens zone `zi` for writing if the limits allow (true when it is
    /// open, or open-zone accounting is off).
    fn open_zone(&mut self, zi: usize) -> bool {
        let min_bs = self.cfg.min_bs[1];
        let z = self.zones[zi];
        if z.offline || (self.cfg.verify && self.full(zi, min_bs)) {
            return false;
        }
        if self.cfg.max_open == 0 {
            return true;
        }
        if z.open {
            // filled by writes already issued: full, not open
            return z.wp < z.cap_end();
        }
        let n = self.open.len() as u32;
        if (self.cfg.job_max_open > 0 && n >= self.cfg.job_max_open) || n >= self.cfg.max_open {
            return false;
        }
        self.open.push(zi);
        self.zones[zi].open = true;
        true
    }

    /// The open zone at the same relative place as `offset` in the region.
    fn pick_open(&self, offset: u64) -> usize {
        ((offset - self.io_start) as u128 * self.open.len() as u128 / self.io_size.max(1) as u128)
            as usize
    }

    /// An open zone (opening one if it must) with room for a smallest
    /// block, for a write whose own zone could not be opened.
    fn convert_to_open_zone(&mut self, offset: u64) -> Option<usize> {
        let min_bs = self.cfg.min_bs[1];
        let tracked = self.cfg.max_open > 0 || self.cfg.job_max_open > 0;
        let mut zi = if tracked {
            self.open
                .get(self.pick_open(offset))
                .or(self.open.first())
                .copied()
                .unwrap_or(self.idx(offset))
        } else {
            self.idx(offset)
        };
        zi = zi.clamp(self.min, self.max - 1);
        let mut examine = true;
        if self.zones[zi].seq && !(tracked || self.zones[zi].offline) {
            // no limits: this zone itself
        } else if self.zones[zi].seq && self.open.is_empty() {
            examine = false;
        } else {
            let start = self.pick_open(offset);
            let n = self.open.len();
            let found = (0..n)
                .map(|i| self.open[(start + i) % n])
                .find(|&o| (self.min..self.max).contains(&o))?;
            zi = found;
        }
        if examine && self.zones[zi].wp + min_bs <= self.zones[zi].cap_end() {
            return Some(zi);
        }
        // The zone is full: open the next ones (wrapping in the region).
        for _ in 0..(self.io_size / self.zone_size) {
            zi += 1;
            if zi >= self.max || !self.valid(self.zones[zi].start) {
                zi = self.min;
            }
            if !self.zones[zi].seq || self.zones[zi].open {
                continue;
            }
            if self.open_zone(zi) {
                return Some(zi);
            }
        }
        // Or one already open with room left.
        self.open
            .iter()
            .copied()
            .filter(|o| (self.min..self.max).contains(o))
            .find(|&o| self.zones[o].wp + min_bs <= self.zones[o].cap_end())
    }

    /// Where a write of `len` bytes at `offset` really goes: its zone's
    /// write pointer, and the length that fits before the zone's capacity.
    pub fn write(&mut self, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let min_bs = self.cfg.min_bs[1];
        let mut zi = self.idx(offset);
        if !self.zones[zi].seq {
            return Ok(self.conventional_write(zi, offset, len));
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
        if !self.open_zone(zi) {
            zi = self.convert_to_open_zone(offset).ok_or(ZbdEnd::Done)?;
        }
        if self.cfg.reset_frequency > 0.0
            && self.wp_swd as f64 >= self.io_size as f64 * self.cfg.reset_threshold
            && self.count_down()
        {
            self.zones[zi].reset_due = true;
        }
        if self.zones[zi].reset_due || self.full(zi, min_bs) {
            self.zones[zi].reset_due = false;
            self.reset_zone(zi);
            if self.zones[zi].capacity < min_bs {
                return Err(ZbdEnd::Fail(
                    libc::EINVAL,
                    format!(
                        "zone capacity {} is smaller than the smallest block size {min_bs}",
                        self.zones[zi].capacity
                    ),
                ));
            }
        }
        let at = self.zones[zi].wp;
        if !self.valid(at) {
            return Err(ZbdEnd::Fail(
                libc::EINVAL,
                format!("zonemode=zbd: the write pointer {at} lies outside the job's region"),
            ));
        }
        let room = self.zones[zi].cap_end() - at;
        let len = len.min(room) / min_bs * min_bs;
        if len < min_bs {
            return Err(ZbdEnd::Fail(
                libc::EIO,
                format!("zone remainder {room} is smaller than the smallest block size {min_bs}"),
            ));
        }
        self.issued_write(zi, at, len);
        Ok((at, len))
    }

    /// One fewer write until the next frequency-driven reset; true when
    /// it is due (and the count starts again).
    fn count_down(&mut self) -> bool {
        self.write_cnt = self.write_cnt.saturating_sub(1);
        if self.write_cnt == 0 {
            self.reset_write_cnt();
            return true;
        }
        false
    }

    /// The write pointer moves past a write being issued; a zone filled
    /// to its capacity is closed.
    fn issued_write(&mut self, zi: usize, at: u64, len: u64) {
        let cap_end = self.zones[zi].cap_end();
        let end = (at + len).min(cap_end);
        let z = &mut self.zones[zi];
        if z.wp <= end {
            self.swd += end - z.wp;
            self.wp_swd += end - z.wp;
        }
        z.wp = end;
        if at + len >= cap_end {
            self.close(zi);
        }
    }

    /// A write in a conventional zone must not run into a sequential one.
    fn conventional_write(&self, zi: usize, offset: u64, len: u64) -> (u64, u64) {
        let min_bs = self.cfg.min_bs[1];
        let next = zi + 1;
        let Some(n) = self.zones.get(next).filter(|z| z.seq) else {
            return (offset, len);
        };
        if offset + len <= n.start {
            return (offset, len);
        }
        let (off, new_len) = if offset + min_bs > n.start {
            let off = self.zones[zi].start + n.start - offset;
            (off, len.min(n.start - off))
        } else {
            (offset, n.start - offset)
        };
        (off, new_len / min_bs * min_bs)
    }

    /// Where a read of `len` bytes at `offset` goes: inside written data.
    pub fn read(&mut self, offset: u64, len: u64) -> Result<(u64, u64), ZbdEnd> {
        let min_bs = self.cfg.min_bs[0];
        let orig = self.idx(offset);
        let mut zi = orig;
        let z = self.zones[zi];
        if !z.seq || (!z.offline && self.cfg.read_beyond_wp) {
            return Ok((offset, len));
        }
        let mut offset = offset;
        let mut range = if z.offline { 0 } else { z.wp - z.start };
        if range < min_bs || (!self.cfg.random && offset + min_bs > z.wp) {
            zi = self.find_zone(min_bs, zi).ok_or(ZbdEnd::Done)?;
            let z = self.zones[zi];
            range = z.wp - z.start;
            if !self.cfg.random {
                offset = z.start;
            }
        }
        let z = self.zones[zi];
        if range <= len {
            offset = z.start;
        } else if self.cfg.random {
            let rel = (offset - self.zones[orig].start) % (range - len);
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
    fn find_zone(&self, need: u64, zi: usize) -> Option<usize> {
        let has = |i: usize| {
            let z = &self.zones[i];
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
        self.cfg.mixed && self.swd == 0 && !self.cfg.read_beyond_wp
    }

    /// Sequential writes: from a zone's capacity on, the next position is
    /// the zone's end (`None`: no skip).
    pub fn seq_skip(&self, last_end: u64) -> Option<u64> {
        let zi = self.idx(last_end);
        let z = self.zones.get(zi)?;
        (z.capacity < self.zone_size && last_end >= z.cap_end()).then(|| self.zone_end(zi))
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

    fn empty(n: u64) -> Vec<ZoneState> {
        (0..n)
            .map(|i| ZoneState::new(i * ZS, CAP, i * ZS, true, false))
            .collect()
    }

    #[test]
    fn writes_go_to_the_write_pointer_and_full_zones_are_reset() {
        let mut f = ZbdFile::new(empty(4), ZS, 0, 4 * ZS, cfg(8));
        // an offset deep in zone 1 writes at its write pointer
        assert_eq!(f.write(ZS + 100 * 4096, 4096), Ok((ZS, 4096)));
        assert_eq!(f.write(ZS + 7 * 4096, 4096), Ok((ZS + 4096, 4096)));
        // fill zone 1 to its capacity: it closes
        for i in 2..192 {
            assert_eq!(f.write(ZS, 4096), Ok((ZS + i * 4096, 4096)));
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
        let mut f = ZbdFile::new(empty(2), ZS, 0, 2 * ZS, cfg(0));
        for _ in 0..191 {
            f.write(0, 4096).unwrap();
        }
        assert_eq!(f.write(0, 8192), Ok((CAP - 4096, 4096)));
    }

    #[test]
    fn the_open_limit_sends_writes_to_open_zones() {
        let mut f = ZbdFile::new(empty(8), ZS, 0, 8 * ZS, cfg(2));
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
        let mut f = ZbdFile::new(empty(4), ZS, 0, 4 * ZS, cfg(8));
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
        let mut none = ZbdFile::new(empty(4), ZS, 0, 4 * ZS, cfg(8));
        assert_eq!(none.read(0, 4096), Err(ZbdEnd::Done));
    }

    #[test]
    fn sequential_writes_skip_from_capacity_to_zone_end() {
        let f = ZbdFile::new(empty(2), ZS, 0, 2 * ZS, cfg(0));
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
        let f = ZbdFile::new(z, ZS, 0, 4 * ZS, cfg(2));
        assert_eq!(f.reset_count, 2);
        assert_eq!(f.zones().iter().filter(|z| z.open).count(), 2);
    }
}
