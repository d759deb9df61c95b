//! `io_uring_cmd`: NVMe read, write, deallocate (trim) and flush commands
//! sent through io_uring straight to an NVMe namespace's generic
//! character device (`/dev/ngXnY`), bypassing the block layer.
//!
//! The ring has big entries (128-byte submissions carrying the 72-byte
//! NVMe command, 32-byte completions), as the kernel's NVMe passthrough
//! requires. Each file is identified when it is opened (Identify
//! Namespace): its namespace id and LBA format turn offsets and lengths
//! into starting blocks and block counts, so block sizes and offsets must
//! be multiples of the LBA data size. On a namespace formatted with
//! extended LBAs (each block's metadata inline after its data) a block
//! takes its data and metadata size in the buffer, and block sizes,
//! offsets and the namespace's size count in those units (`bs=4104` is
//! one block of 4096 + 8), as fio's engine does; the exception is
//! `pi_act=1` where the metadata is only the PI, which then does not
//! travel. A completion's result is the NVMe
//! status; a failed command reports the errno the kernel's block layer
//! gives that status, and its message names the status
//! ([`Engine::error_detail`]).
//!
//! No command carries an I/O priority: Linux fails a passthrough entry
//! whose `ioprio` is set with EINVAL, so `cmdprio*` is refused with this
//! engine (`job::validate`).
//!
//! The ring itself (set-up, submission, completion) is the driver shared
//! with `io_uring` ([`super::ring`]); this file builds the NVMe commands
//! and turns their status into outcomes.
//!
//! Options: those of the ring as for `io_uring` (`fixedbufs`: buffers
//! registered once, commands flagged to use them; `registerfiles`,
//! `sqthread_poll`, `sqthread_poll_cpu`, `hipri`, `nonvectored`: 0 sends
//! the data as an iovec, `force_async`), and the NVMe ones:
//!
//! - protection information on a namespace formatted with it: `pi_act`
//!   (PRACT, default 1: the controller inserts and strips the PI; with
//!   metadata larger than the PI a metadata buffer is still sent), `pi_chk`
//!   (the PRCHK bits: guard, application tag, reference tag), `apptag`,
//!   `apptag_mask` (PI type 3 has no reference tag: there `pi_chk` checks
//!   the guard and application tag only), `md_per_io_size` (the separate
//!   metadata buffer of each
//!   I/O, at least its largest block count times the metadata size). With
//!   `pi_act=0` iomark writes the PI of every block (16-bit guard: the T10
//!   DIF CRC over the block's data and the metadata before the PI, the
//!   application tag, the block's LBA as reference tag) and checks what
//!   it reads back (with extended LBAs, in each block's inline metadata).
//!   Whatever `pi_chk` asks the device to check, the PI written is valid:
//!   commands always carry the reference tag (the first block's LBA,
//!   types 1 and 2; type 3 has none) and application tag the controller
//!   inserts with PRACT;
//! - data placement: `dataplacement=fdp` (or `fdp=1`) writes carry a
//!   placement identifier (the reclaim unit handles the namespace lists
//!   with I/O Management Receive, `plids` choosing among them by index),
//!   `dataplacement=streams` a stream id (`plids` are the ids);
//!   `plid_select` picks each write's identifier in turn, at random, or by
//!   offset from `dp_scheme`'s ranges.
//!
//! Not handled (each refused when the file is opened, with one line):
//! protection information with storage tags or a 32-bit guard,
//! iomark-generated PI for a 64-bit guard (`pi_act=1` works there), and
//! `verify` where the PI travels inline with the data (extended LBAs: it
//! replaces bytes verify wrote; fio refuses the same).

use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;

use io_uring::{cqueue, opcode, squeue, types};

use super::ring;
use super::{Caps, Completion, Engine, EngineError, EngineKind, IoUnit, Op, OpenFile, Queued};
use crate::host::nvme::{self, Cmd, Namespace};
use crate::job::spec::{pi_chk_bits, Placement, PlidSelect, VerifyKind};
use crate::job::JobSpec;

/// The job's ring (128-byte submission, 32-byte completion entries).
type Ring = ring::Ring<squeue::Entry128, cqueue::Entry32>;

/// Status codes of iomark's own PI checks (outside the NVMe status space).
const PI_GUARD: u16 = 0xf001;
const PI_APP: u16 = 0xf002;
const PI_REF: u16 = 0xf003;

/// What the engine knows about one open namespace.
#[derive(Debug)]
struct NsFile {
    path: PathBuf,
    nsid: u32,
    shift: u32,
    /// Metadata bytes that travel with each block (0: none).
    ms: u32,
    /// Extended LBAs: the bytes of one block in the data buffer (its data
    /// and then its metadata, inline); 0: the metadata, if any, goes in a
    /// separate buffer and the data buffer holds whole blocks of data.
    stride: u64,
    /// The PI's place in a block's metadata, and its type (0: no PI).
    pi_off: u32,
    pi_type: u8,
    /// Directive identifiers writes carry (FDP placement ids or stream
    /// ids), and the next in turn.
    dspecs: Vec<u16>,
    next: usize,
    /// `dp_scheme`: (start, end, identifier) by byte offset.
    scheme: Vec<(u64, u64, u16)>,
}

/// Block `b` of an I/O on `file` whose data buffer is `buf` and whose
/// separate metadata buffer is `md`: its data and its metadata (inline
/// after the data with extended LBAs).
///
/// # Safety
/// `buf` must hold the I/O's blocks and, for a format with separate
/// metadata, `md` their metadata; no other reference to either may be
/// alive while the slices are.
unsafe fn block_parts<'a>(
    file: &NsFile,
    buf: *mut u8,
    md: *mut u8,
    b: usize,
) -> (&'a [u8], &'a mut [u8]) {
    let lba = 1usize << file.shift;
    let ms = file.ms as usize;
    // SAFETY: the caller's buffers hold block `b`: its data and its
    // metadata, which do not overlap.
    unsafe {
        let (d, m) = if file.stride != 0 {
            let d = buf.add(b * file.stride as usize);
            (d, d.add(lba))
        } else {
            (buf.add(b * lba), md.add(b * ms))
        };
        (
            std::slice::from_raw_parts(d, lba),
            std::slice::from_raw_parts_mut(m, ms),
        )
    }
}

/// Checks what the job does fits the namespace: whole blocks, the
/// metadata buffer, a format iomark can handle; returns the metadata
/// bytes that travel with each block, the PI's place in them and,
/// with extended LBAs, a block's bytes in the data buffer (else 0).
fn fit(
    spec: &JobSpec,
    path: &std::path::Path,
    ns: &Namespace,
    start: u64,
) -> io::Result<(u32, u32, u64)> {
    let bad = |m: String| Err(io::Error::new(io::ErrorKind::InvalidInput, m));
    let n = &spec.engine.nvme;
    let lba = ns.lba_size as u64;
    // PRACT with metadata that is only the PI: the controller inserts
    // and strips it, no metadata travels.
    let ms = ns.moved_md(n.pi_act);
    let inline = ns.extended && ms > 0;
    let stride = ns.block_stride(n.pi_act);
    let io = &spec.io;
    for (d, bs) in io.bs.iter().enumerate() {
        if bs.min() % stride == 0 && bs.max() % stride == 0 {
            continue;
        }
        let what = ["", " (writes)", " (trims)"][d];
        if !inline {
            // extended LBAs whose metadata (only the PI) PRACT keeps
            let why = if ns.extended {
                format!(
                    "; with pi_act=1 its {} bytes of PI per block stay in the controller \
                     (pi_act=0 moves {} bytes a block)",
                    ns.ms,
                    lba + ns.ms as u64
                )
            } else {
                String::new()
            };
            return bad(format!(
                "block size {}{what} is not a multiple of the namespace's LBA data size \
                 ({lba} bytes){why}",
                bs.min()
            ));
        }
        let hint = if bs.min() == bs.max() && bs.min() % lba == 0 {
            format!("; bs={} moves as many blocks", bs.min() / lba * stride)
        } else {
            String::new()
        };
        return bad(format!(
            "block size {}{what} is not a multiple of {stride} bytes: '{}' has extended \
             LBAs ({lba} bytes of data and {ms} of metadata inline per block){hint}",
            bs.min(),
            path.display()
        ));
    }
    if !start.is_multiple_of(stride) {
        return bad(format!(
            "offset {start} is not a multiple of {stride} bytes, the size of a block of \
             '{}'",
            path.display()
        ));
    }
    let pi = ns.pi;
    if pi.pi_type != 0 && pi.guard == 0xff {
        return bad(
            "protection information with storage tags or a 32-bit guard is not \
                    handled"
                .into(),
        );
    }
    if pi.pi_type != 0 && pi.guard == 2 && !n.pi_act {
        return bad(
            "pi_act=0 (iomark writes the PI) needs a 16-bit guard; this namespace \
                    has a 64-bit one: use pi_act=1"
                .into(),
        );
    }
    if inline && pi.pi_type != 0 && spec.verify.verify != VerifyKind::None {
        return bad(format!(
            "verify cannot check '{}': its protection information travels inline with \
             the data (extended LBAs) and replaces part of what verify wrote{}",
            path.display(),
            if ms == pi.size {
                " (with pi_act=1 the controller adds it: verify works there)"
            } else {
                ""
            }
        ));
    }
    if ms > 0 && !inline {
        let max = io.bs[0].max().max(io.bs[1].max());
        let need = max / lba * ms as u64;
        if n.md_per_io_size < need {
            return bad(format!(
                "'{}' has {ms} bytes of metadata per block: md_per_io_size should be at \
                 least {need} bytes",
                path.display()
            ));
        }
    }
    let pi_off = if pi.pi_type == 0 || pi.first {
        0
    } else {
        ns.ms.saturating_sub(pi.size)
    };
    Ok((ms, pi_off, if inline { stride } else { 0 }))
}

/// What a submitted command needs at its completion.
#[derive(Clone, Copy, Debug, Default)]
struct InFlight {
    file: usize,
    slba: u64,
    blocks: u32,
    buf: usize,
    read: bool,
    /// What a success returns: the bytes moved (0 for a flush).
    done: u64,
}

/// Sets up the ring (its depth, `hipri`, `sqthread_poll`) with big
/// entries.
fn build_ring(spec: &JobSpec) -> Result<Ring, EngineError> {
    Ring::new(spec).map_err(|err| EngineError::Setup {
        errno: err.raw_os_error().unwrap_or(libc::EIO),
        msg: format!(
            "ioengine=io_uring_cmd: io_uring_setup with 128-byte submission and 32-byte \
             completion entries failed for iodepth={}: {err} (NVMe passthrough through \
             io_uring needs Linux 5.19 or later; use --ioengine=io_uring on the block device)",
            spec.io.iodepth
        ),
    })
}

/// Checks the job's NVMe options fit together and that the ring can be
/// set up here.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    let e = &spec.engine;
    let n = &e.nvme;
    let unfit = |why: String| Err(EngineError::Unfit(why));
    if e.sqthread_poll_cpu.is_some() && !e.sqthread_poll {
        return unfit("sqthread_poll_cpu only applies with sqthread_poll=1".into());
    }
    if n.placement == Placement::Streams && n.plids.is_empty() {
        return unfit("dataplacement=streams needs the stream ids in plids".into());
    }
    if n.plid_select == PlidSelect::Scheme && n.dp_scheme.is_none() {
        return unfit("plid_select=scheme needs dp_scheme=FILE".into());
    }
    if n.placement == Placement::None && (!n.plids.is_empty() || n.dp_scheme.is_some()) {
        return unfit("plids and dp_scheme apply with dataplacement=fdp or streams".into());
    }
    if let Some(f) = &n.dp_scheme {
        read_scheme(f).map_err(EngineError::Unfit)?;
    }
    build_ring(spec).map(drop)
}

/// `dp_scheme`'s lines `start, end, index`.
fn read_scheme(path: &str) -> Result<Vec<(u64, u64, u16)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("dp_scheme: cannot read '{path}': {e}"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed = (f.len() == 3)
            .then(|| Some((f[0].parse().ok()?, f[1].parse().ok()?, f[2].parse().ok()?)))
            .flatten();
        match parsed {
            Some(e) => out.push(e),
            None => {
                return Err(format!(
                    "dp_scheme: '{path}' line {}: expected 'start, end, index', got '{line}'",
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}

pub struct IoUringCmdEngine {
    /// First: dropping it waits for the commands that point into the
    /// vectors below.
    ring: Ring,
    fixed_bufs: bool,
    vectored: bool,
    /// Per unit: its iovec, its deallocate range, its metadata buffer
    /// (`md_size` bytes each), what is in flight, its last NVMe status.
    iovecs: Vec<libc::iovec>,
    ranges: Vec<[u32; 4]>,
    md: Vec<u8>,
    md_size: usize,
    units: Vec<InFlight>,
    status: Vec<u16>,
    files: Vec<NsFile>,
    /// The job's options the open checks need.
    spec: JobSpec,
    rng: u64,
}

// SAFETY: the iovecs and commands point into the worker's buffer pool
// and the engine's own vectors; the engine is used by one thread at a time.
unsafe impl Send for IoUringCmdEngine {}

impl IoUringCmdEngine {
    pub fn new(spec: &JobSpec) -> Result<Self, EngineError> {
        let e = &spec.engine;
        Ok(IoUringCmdEngine {
            ring: build_ring(spec)?,
            fixed_bufs: e.fixedbufs,
            // fio's default (-1) sends plain commands, as does 1
            vectored: e.nonvectored == 0,
            iovecs: Vec::new(),
            ranges: Vec::new(),
            md: Vec::new(),
            md_size: e.nvme.md_per_io_size as usize,
            units: Vec::new(),
            status: Vec::new(),
            files: Vec::new(),
            spec: spec.clone(),
            rng: 0x9e37_79b9_7f4a_7c15 ^ spec.name.len() as u64,
        })
    }

    /// The directive identifier of the next write to `f` at `offset`.
    fn dspec(&mut self, f: usize, offset: u64) -> u16 {
        let sel = self.spec.engine.nvme.plid_select;
        let file = &mut self.files[f];
        match sel {
            PlidSelect::Scheme => file
                .scheme
                .iter()
                .find(|(s, e, _)| (*s..*e).contains(&offset))
                .and_then(|&(_, _, i)| file.dspecs.get(i as usize).copied())
                .unwrap_or(0),
            PlidSelect::RoundRobin => {
                let d = file.dspecs[file.next % file.dspecs.len()];
                file.next = (file.next + 1) % file.dspecs.len();
                d
            }
            PlidSelect::Random => {
                // xorshift64*: a uniform choice, no allocation
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                file.dspecs[(r % file.dspecs.len() as u64) as usize]
            }
        }
    }

    /// The NVMe command for a read, write, trim or flush of `io`.
    #[inline]
    fn command(&mut self, io: &IoUnit) -> Cmd {
        let f = io.file_data.saturating_sub(1);
        let (nsid, shift, ms, stride) = {
            let file = &self.files[f];
            (file.nsid, file.shift, file.ms, file.stride)
        };
        let (slba, blocks) = match std::num::NonZeroU64::new(stride) {
            None => (io.offset >> shift, (io.len >> shift) as u32),
            Some(s) => (io.offset / s, (io.len / s) as u32),
        };
        let mut c = Cmd {
            nsid,
            ..Cmd::default()
        };
        let i = io.idx as usize;
        match io.op {
            Op::Read | Op::Write => {
                c.opcode = if io.op == Op::Write {
                    nvme::OP_WRITE
                } else {
                    nvme::OP_READ
                };
                c.cdw10 = slba as u32;
                c.cdw11 = (slba >> 32) as u32;
                c.cdw12 = blocks.saturating_sub(1) & 0xffff;
                if self.vectored {
                    let iov = &mut self.iovecs[i];
                    iov.iov_base = io.buf.cast();
                    iov.iov_len = io.len as usize;
                    c.addr = iov as *const libc::iovec as u64;
                    c.data_len = 1;
                } else {
                    c.addr = io.buf as u64;
                    c.data_len = io.len as u32;
                }
                if ms > 0 && stride == 0 {
                    c.metadata = self.md[i * self.md_size..].as_mut_ptr() as u64;
                    c.metadata_len = blocks * ms;
                }
                self.protect(&mut c, io, f, slba, blocks);
                let placement = self.spec.engine.nvme.placement;
                if io.op == Op::Write && placement != Placement::None {
                    let dtype = match placement {
                        Placement::Fdp => nvme::DTYPE_FDP,
                        _ => nvme::DTYPE_STREAMS,
                    };
                    c.cdw12 |= dtype << 20;
                    c.cdw13 = (self.dspec(f, io.offset) as u32) << 16;
                }
                self.units[i] = InFlight {
                    file: f,
                    slba,
                    blocks,
                    buf: io.buf as usize,
                    read: io.op == Op::Read,
                    done: io.len,
                };
            }
            Op::Trim => {
                // one range: attributes, length in blocks, starting block
                let r = &mut self.ranges[i];
                *r = [0, blocks, slba as u32, (slba >> 32) as u32];
                c.opcode = nvme::OP_DSM;
                c.cdw11 = 1 << 2; // deallocate
                c.addr = r.as_ptr() as u64;
                c.data_len = 16;
                self.units[i] = InFlight {
                    done: io.len,
                    ..InFlight::default()
                };
            }
            _ => {
                c.opcode = nvme::OP_FLUSH;
                self.units[i] = InFlight::default();
            }
        }
        c
    }

    /// The protection information bits and tags of a read or write, and
    /// the PI iomark writes itself (`pi_act=0`).
    #[inline]
    fn protect(&mut self, c: &mut Cmd, io: &IoUnit, f: usize, slba: u64, blocks: u32) {
        let (pi_type, pi_off) = {
            let file = &self.files[f];
            (file.pi_type, file.pi_off)
        };
        if pi_type == 0 {
            return;
        }
        let n = &self.spec.engine.nvme;
        // Type 3 defines no reference tag: the device checks the guard
        // and application tag only (a controller may refuse the bit).
        c.cdw12 |= if pi_type == 3 {
            n.pi_chk & !pi_chk_bits::REFTAG
        } else {
            n.pi_chk
        };
        if n.pi_act {
            c.cdw12 |= nvme::PRINFO_PRACT;
        }
        // The reference and application tags go with every command,
        // whatever is checked: with PRACT the controller writes them into
        // the PI it makes (a type 1 reference tag must be the block's
        // LBA, or every later checked read of it fails).
        if pi_type != 3 {
            c.cdw14 = slba as u32;
        }
        c.cdw15 = ((n.apptag_mask as u32) << 16) | n.apptag as u32;
        if n.pi_act || io.op != Op::Write {
            return;
        }
        let apptag = n.apptag;
        let md = self.md[io.idx as usize * self.md_size..].as_mut_ptr();
        let file = &self.files[f];
        for b in 0..blocks as usize {
            // SAFETY: the unit's buffer holds the write's blocks, its
            // metadata buffer (separate formats) their metadata.
            let (d, m) = unsafe { block_parts(file, io.buf, md, b) };
            let pi = pi_off as usize;
            // Valid PI whatever pi_chk asks the device to check: a later
            // checked read (the kernel's, nvme-cli's) checks it all.
            let guard = nvme::crc_t10dif(0, d);
            let guard = nvme::crc_t10dif(guard, &m[..pi]);
            m[pi..pi + 2].copy_from_slice(&guard.to_be_bytes());
            m[pi + 2..pi + 4].copy_from_slice(&apptag.to_be_bytes());
            let rt = if pi_type != 3 {
                (slba as u32).wrapping_add(b as u32)
            } else {
                0
            };
            m[pi + 4..pi + 8].copy_from_slice(&rt.to_be_bytes());
        }
    }

    /// Checks the PI of a read iomark asked to check itself (`pi_act=0`):
    /// 0, or the code of the first field that differs.
    fn check_pi(&self, idx: usize) -> u16 {
        let u = self.units[idx];
        let file = &self.files[u.file];
        let n = &self.spec.engine.nvme;
        if !u.read || n.pi_act || file.pi_type == 0 {
            return 0;
        }
        let pi = file.pi_off as usize;
        let md = self.md[idx * self.md_size..].as_ptr() as *mut u8;
        for b in 0..u.blocks as usize {
            // SAFETY: the unit's buffer held the read's blocks, its
            // metadata buffer their metadata; both are only read here.
            let (d, m) = unsafe { block_parts(file, u.buf as *mut u8, md, b) };
            let m: &[u8] = m;
            let app = u16::from_be_bytes([m[pi + 2], m[pi + 3]]);
            let rt = u32::from_be_bytes([m[pi + 4], m[pi + 5], m[pi + 6], m[pi + 7]]);
            // an application tag of all ones turns checking off
            if app == 0xffff && (file.pi_type != 3 || rt == u32::MAX) {
                continue;
            }
            if n.pi_chk & pi_chk_bits::GUARD != 0 {
                let g = nvme::crc_t10dif(nvme::crc_t10dif(0, d), &m[..pi]);
                if g != u16::from_be_bytes([m[pi], m[pi + 1]]) {
                    return PI_GUARD;
                }
            }
            if n.pi_chk & pi_chk_bits::APPTAG != 0
                && app & n.apptag_mask != n.apptag & n.apptag_mask
            {
                return PI_APP;
            }
            if n.pi_chk & pi_chk_bits::REFTAG != 0
                && file.pi_type != 3
                && rt != (u.slba as u32).wrapping_add(b as u32)
            {
                return PI_REF;
            }
        }
        0
    }

    /// A command's outcome as bytes done or `-errno`, keeping the status.
    fn result(&mut self, idx: usize, res: i32) -> i64 {
        let status = match res {
            0 => self.check_pi(idx),
            r if r > 0 => r as u16,
            r => {
                self.status[idx] = 0;
                return r as i64;
            }
        };
        self.status[idx] = status;
        match status {
            0 => self.units[idx].done as i64,
            PI_GUARD | PI_APP | PI_REF => -(libc::EIO as i64),
            s => -(nvme::status_errno(s) as i64),
        }
    }

    /// The directive identifiers of namespace `ns` the job's writes use.
    fn directives(&self, fd: RawFd, ns: &Namespace) -> io::Result<Vec<u16>> {
        let n = &self.spec.engine.nvme;
        match n.placement {
            Placement::None => Ok(Vec::new()),
            Placement::Streams => Ok(n.plids.clone()),
            Placement::Fdp => {
                let all = nvme::placement_ids(fd, ns.nsid).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "dataplacement=fdp: the namespace lists no reclaim unit handles \
                             (I/O Management Receive failed: {e}); is FDP enabled on its \
                             endurance group?"
                        ),
                    )
                })?;
                if all.is_empty() {
                    return Err(io::Error::other(
                        "dataplacement=fdp: the namespace has no reclaim unit handles",
                    ));
                }
                if n.plids.is_empty() || n.plid_select == PlidSelect::Scheme {
                    return Ok(all);
                }
                n.plids
                    .iter()
                    .map(|&i| {
                        all.get(i as usize).copied().ok_or_else(|| {
                            io::Error::new(
                                io::ErrorKind::InvalidInput,
                                format!(
                                    "plids: placement identifier index {i} must be smaller than \
                                     {} (the namespace's reclaim unit handles)",
                                    all.len()
                                ),
                            )
                        })
                    })
                    .collect()
            }
        }
    }

    /// Identifies the namespace open at `fd` and keeps what the commands
    /// need; returns the file's engine data (its index + 1).
    fn adopt(&mut self, fd: RawFd, path: &std::path::Path, start: u64) -> io::Result<usize> {
        let ns = nvme::identify_namespace(fd).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "ioengine=io_uring_cmd needs an NVMe generic character device (/dev/ngXnY): \
                     Identify Namespace failed: {e}"
                ),
            )
        })?;
        let (ms, pi_off, stride) = fit(&self.spec, path, &ns, start)?;
        let dspecs = self.directives(fd, &ns)?;
        let scheme = match &self.spec.engine.nvme.dp_scheme {
            Some(p) => read_scheme(p).map_err(io::Error::other)?,
            None => Vec::new(),
        };
        let file = NsFile {
            path: path.to_path_buf(),
            nsid: ns.nsid,
            shift: ns.lba_size.trailing_zeros(),
            ms,
            stride,
            pi_off,
            pi_type: ns.pi.pi_type,
            dspecs,
            next: 0,
            scheme,
        };
        if let Some(i) = self.files.iter().position(|f| f.path == file.path) {
            self.files[i] = file;
            return Ok(i + 1);
        }
        self.files.push(file);
        Ok(self.files.len())
    }
}

impl Engine for IoUringCmdEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUringCmd
    }

    fn caps(&self) -> Caps {
        Caps {
            registers_buffers: self.fixed_bufs,
            ..EngineKind::IoUringCmd.info().caps
        }
    }

    fn init(&mut self, depth: u32, pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1) as usize;
        self.ring.init(depth, self.fixed_bufs.then_some(pool))?;
        self.iovecs = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            };
            depth
        ];
        self.ranges = vec![[0; 4]; depth];
        self.md = vec![0; depth * self.md_size];
        self.units = vec![InFlight::default(); depth];
        self.status = vec![0; depth];
        Ok(())
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        // O_DIRECT and O_CREAT mean nothing to a character device.
        let flags = f.flags & !(libc::O_DIRECT | libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
        let fd = super::file::open_fd(f.path, flags)?;
        match self.adopt(fd, f.path, f.start) {
            Ok(data) => Ok((fd, data)),
            Err(e) => {
                let _ = super::file::close_fd(fd);
                Err(e)
            }
        }
    }

    fn files_opened(&mut self, fds: &[RawFd]) -> io::Result<()> {
        self.ring.register_files(fds)
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let cmd = self.command(io).to_sqe_bytes();
        let op = if self.vectored && matches!(io.op, Op::Read | Op::Write) {
            nvme::NVME_URING_CMD_IO_VEC
        } else {
            nvme::NVME_URING_CMD_IO
        };
        let fixed = self.fixed_bufs && matches!(io.op, Op::Read | Op::Write) && !self.vectored;
        let build = |e: opcode::UringCmd80| {
            let e = e.cmd(cmd);
            if fixed {
                e.buf_index(Some(0)).build()
            } else {
                e.build()
            }
        };
        let entry = if self.ring.fixed_files() {
            build(opcode::UringCmd80::new(types::Fixed(io.file), op))
        } else {
            build(opcode::UringCmd80::new(types::Fd(io.fd), op))
        };
        // SAFETY: the command's buffers (data, iovec, metadata, range)
        // stay valid until the completion is reaped.
        unsafe { self.ring.push(entry, io.idx) }
    }

    fn commit(&mut self) -> io::Result<u32> {
        self.ring.commit()
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        let reaped = self.ring.reap(min, max, out);
        // The ring gives the kernel's result: the NVMe status (or -errno).
        for c in out.iter_mut() {
            c.result = self.result(c.idx as usize, c.result as i32);
        }
        reaped
    }

    fn error_detail(&self, idx: u32) -> Option<String> {
        match *self.status.get(idx as usize)? {
            0 => None,
            PI_GUARD => Some("protection information guard differs from the data's".into()),
            PI_APP => Some("protection information application tag differs".into()),
            PI_REF => Some("protection information reference tag differs".into()),
            s => Some(format!("NVMe status {}", nvme::describe_status(s))),
        }
    }

    fn pending(&self) -> u32 {
        self.ring.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_are_read_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s");
        std::fs::write(&p, "0, 4096, 0\n4096,8192,3\n\n").unwrap();
        assert_eq!(
            read_scheme(p.to_str().unwrap()).unwrap(),
            [(0, 4096, 0), (4096, 8192, 3)]
        );
        std::fs::write(&p, "0, 4096\n").unwrap();
        let e = read_scheme(p.to_str().unwrap()).unwrap_err();
        assert!(
            e.contains("line 1") && e.contains("start, end, index"),
            "{e}"
        );
    }

    /// A namespace of `lba` + `ms` bytes per block, metadata inline
    /// (extended LBAs), with PI type `pi` (0: none) of 8 bytes.
    fn extended(lba: u32, ms: u32, pi: u8) -> Namespace {
        Namespace {
            nsid: 1,
            blocks: 1000,
            lba_size: lba,
            ms,
            extended: true,
            pi: nvme::Protection {
                pi_type: pi,
                first: false,
                size: if pi == 0 { 0 } else { 8 },
                guard: 0,
            },
            ..Namespace::default()
        }
    }

    fn job(bs: u64, pi_act: bool) -> JobSpec {
        let mut s = JobSpec::default();
        s.io.ioengine = EngineKind::IoUringCmd;
        for b in s.io.bs.iter_mut() {
            *b = crate::job::spec::BlockSizes::Range { lo: bs, hi: bs };
        }
        s.engine.nvme.pi_act = pi_act;
        s
    }

    #[test]
    fn extended_lbas_count_data_and_metadata() {
        let p = std::path::Path::new("/dev/ng0n1");
        let ns = extended(4096, 8, 0);
        // a block of data and its metadata, inline; no metadata buffer
        assert_eq!(fit(&job(4104, true), p, &ns, 0).unwrap(), (8, 0, 4104));
        assert_eq!(fit(&job(16416, true), p, &ns, 8208).unwrap().2, 4104);
        assert_eq!(ns.passthrough_bytes(true), 4_104_000);
        let e = fit(&job(4096, true), p, &ns, 0).unwrap_err().to_string();
        assert!(
            e.contains("block size 4096 is not a multiple of 4104 bytes")
                && e.contains("bs=4104 moves as many blocks"),
            "{e}"
        );
        let e = fit(&job(4104, true), p, &ns, 4096).unwrap_err().to_string();
        assert!(e.contains("offset 4096 is not a multiple of 4104"), "{e}");
        // PI that is the whole metadata: with PRACT it does not travel
        let ns = extended(512, 8, 1);
        assert_eq!(fit(&job(4096, true), p, &ns, 0).unwrap(), (0, 0, 0));
        assert_eq!(ns.passthrough_bytes(true), 512_000);
        let e = fit(&job(520, true), p, &ns, 0).unwrap_err().to_string();
        assert!(e.contains("pi_act=0 moves 520 bytes a block"), "{e}");
        assert_eq!(fit(&job(520, false), p, &ns, 0).unwrap(), (8, 0, 520));
        assert_eq!(ns.passthrough_bytes(false), 520_000);
        // verify's data would lose the bytes the PI takes
        let mut v = job(520, false);
        v.verify.verify = VerifyKind::Crc32c;
        let e = fit(&v, p, &ns, 0).unwrap_err().to_string();
        assert!(e.contains("verify cannot check"), "{e}");
        let mut v = job(4096, true);
        v.verify.verify = VerifyKind::Crc32c;
        assert!(fit(&v, p, &ns, 0).is_ok());
    }

    #[test]
    fn inline_metadata_follows_each_blocks_data() {
        let file = NsFile {
            path: PathBuf::new(),
            nsid: 1,
            shift: 9,
            ms: 8,
            stride: 520,
            pi_off: 0,
            pi_type: 1,
            dspecs: Vec::new(),
            next: 0,
            scheme: Vec::new(),
        };
        let mut buf = vec![0u8; 1040];
        let base = buf.as_mut_ptr();
        // SAFETY: buf holds two blocks of 520 bytes.
        let (d, m) = unsafe { block_parts(&file, base, std::ptr::null_mut(), 1) };
        assert_eq!((d.len(), m.len()), (512, 8));
        assert_eq!(d.as_ptr() as usize - base as usize, 520);
        assert_eq!(m.as_ptr() as usize - base as usize, 1032);
    }

    #[test]
    fn option_combinations_are_checked_before_the_run() {
        let mut s = JobSpec::default();
        s.io.ioengine = EngineKind::IoUringCmd;
        s.engine.nvme.placement = Placement::Streams;
        let e = preflight(&s).unwrap_err().to_string();
        assert!(e.contains("stream ids"), "{e}");
        s.engine.nvme.placement = Placement::None;
        s.engine.nvme.plids = vec![1];
        let e = preflight(&s).unwrap_err().to_string();
        assert!(e.contains("dataplacement"), "{e}");
    }
}
