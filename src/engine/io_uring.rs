//! `io_uring`: Linux io_uring through the `io-uring` crate, on the ring
//! driver shared with `io_uring_cmd` ([`super::ring`]). Reads and writes
//! are pushed to the submission ring by `queue` and submitted with one
//! `io_uring_enter` per batch by `commit`; `reap` drains the completion
//! ring, waiting in the kernel only for the minimum asked. This file
//! builds the entries and explains a ring the kernel refuses.
//!
//! Options: `fixedbufs` (the worker's buffer pool is registered once and
//! I/O uses READ_FIXED/WRITE_FIXED), `registerfiles` (descriptors are
//! registered; implied by `sqthread_poll`), `sqthread_poll` and
//! `sqthread_poll_cpu` (a kernel thread polls the submission ring),
//! `hipri` (polled completions, IOPOLL), `nonvectored` (READ/WRITE rather
//! than READV/WRITEV; -1 picks what the kernel supports), `force_async`
//! (every Nth request is forced to the async worker pool), `uncached` and
//! `nowait` (per-I/O RWF flags). Every read and write carries its I/O
//! priority (`sqe->ioprio`: the job's, or its own with `cmdprio*`).
//! fsync and fdatasync are io_uring operations; trims run synchronously
//! once nothing is in flight.
//!
//! io_uring can be switched off (seccomp, `kernel.io_uring_disabled`), so
//! `preflight` probes it before a run and names the fallback engines.

use std::io;

use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};

use super::file::sync_op;
use super::ring::{self, with_fd, RwSqe};
use super::{Caps, Completion, Engine, EngineError, EngineKind, IoUnit, Op, Queued};
use crate::job::JobSpec;

const RWF_NOWAIT: i32 = 0x8;
const RWF_UNCACHED: i32 = 0x80;

/// The largest ring `io_uring_setup` accepts (the kernel's
/// IORING_MAX_ENTRIES since Linux 5.4); the ring is the job's iodepth
/// rounded up to a power of two, so this is also the deepest iodepth.
pub const MAX_ENTRIES: u32 = 32768;

/// The errno symbol of the errors `io_uring_setup` is documented to
/// return (and of a seccomp filter's usual answers).
fn errno_symbol(e: &io::Error) -> String {
    let n = crate::sys::errno_of(e).unwrap_or(0);
    let name = match n {
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::ENOSYS => "ENOSYS",
        libc::EINVAL => "EINVAL",
        libc::ENOMEM => "ENOMEM",
        libc::EFAULT => "EFAULT",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EBUSY => "EBUSY",
        libc::ENXIO => "ENXIO",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EAGAIN => "EAGAIN",
        _ => return format!("errno {n}"),
    };
    name.to_string()
}

/// Why the ring for `spec` could not be set up, as one line naming the
/// real cause: a ring too large for the kernel, io_uring switched off
/// (naming the fallback engines), or the errno the kernel gave.
fn setup_error(spec: &JobSpec, entries: u32, e: &io::Error) -> String {
    let depth = spec.io.iodepth;
    let errno = errno_symbol(e);
    let reason = crate::sys::error_text(e);
    let off = |why: &str| {
        format!(
            "ioengine=io_uring is not available here: io_uring_setup failed with {errno} \
             ({reason}): {why}; use --ioengine=libaio or --ioengine=psync instead"
        )
    };
    // A plain two-entry ring tells "io_uring is off" from "this ring is refused".
    let plain_ring_works = || IoUring::new(2).is_ok();
    match crate::sys::errno_of(e) {
        Some(libc::ENOSYS) => off("this kernel does not provide io_uring"),
        Some(libc::EPERM | libc::EACCES) if !plain_ring_works() => {
            off("it is switched off by a seccomp profile or the kernel.io_uring_disabled sysctl")
        }
        Some(libc::EINVAL | libc::ENOMEM) if entries > MAX_ENTRIES => format!(
            "iodepth={depth} is too deep for ioengine=io_uring: its ring would need {entries} \
             entries and io_uring_setup refuses more than {MAX_ENTRIES} ({errno}); use \
             iodepth={MAX_ENTRIES} or less"
        ),
        Some(libc::ENOMEM) => format!(
            "io_uring_setup could not get the memory for a ring of {entries} entries \
             (iodepth={depth}): ENOMEM ({reason}); lower iodepth or raise the locked-memory \
             limit (ulimit -l)"
        ),
        _ if spec.engine.sqthread_poll || spec.engine.hipri => format!(
            "io_uring setup with sqthread_poll/hipri failed with {errno} ({reason}) \
             for iodepth={depth}"
        ),
        _ => format!("io_uring_setup failed with {errno} ({reason}) for iodepth={depth}"),
    }
}

/// The job's ring (64-byte submission, 16-byte completion entries).
type Ring = ring::Ring<squeue::Entry, cqueue::Entry>;

/// Sets up the ring a job runs on, or says why the kernel refused it.
fn build_ring(spec: &JobSpec) -> Result<Ring, EngineError> {
    Ring::new(spec).map_err(|err| EngineError::Setup {
        errno: crate::sys::errno_of(&err).unwrap_or(libc::EIO),
        msg: setup_error(spec, ring::entries(spec), &err),
    })
}

/// Checks that io_uring works here and that the job's io_uring options
/// fit together: the job's own ring is set up once (and dropped), so a
/// depth the kernel refuses is found before anything is laid out.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    let e = &spec.engine;
    let unfit = |why: &str| Err(EngineError::Unfit(why.into()));
    if e.sqthread_poll_cpu.is_some() && !e.sqthread_poll {
        return unfit("sqthread_poll_cpu only applies with sqthread_poll=1");
    }
    if e.hipri && !spec.sync.direct {
        return unfit("hipri (polled completions) with ioengine=io_uring needs direct=1");
    }
    build_ring(spec).map(drop)
}

pub struct IoUringEngine {
    /// First: dropping it waits for the requests that point into `iovecs`.
    ring: Ring,
    fixed_bufs: bool,
    iopoll: bool,
    vectored: bool,
    /// One iovec per unit for READV/WRITEV.
    iovecs: Vec<libc::iovec>,
    rw_flags: i32,
    nonvectored: i32,
    /// The opcodes of a read and of a write, in the form `init` chose.
    ops: [u8; 2],
    /// `IOSQE_FIXED_FILE` when files are registered, else 0.
    sqe_flags: u8,
}

// SAFETY: the iovecs point into the worker's buffer pool, which outlives
// the engine; the engine is used by one thread at a time.
unsafe impl Send for IoUringEngine {}

impl IoUringEngine {
    pub fn new(spec: &JobSpec) -> Result<Self, EngineError> {
        let e = &spec.engine;
        let ring = build_ring(spec)?;
        let mut rw_flags = 0;
        if e.nowait {
            rw_flags |= RWF_NOWAIT;
        }
        if e.uncached != 0 {
            rw_flags |= RWF_UNCACHED;
        }
        Ok(IoUringEngine {
            ring,
            fixed_bufs: e.fixedbufs,
            iopoll: e.hipri,
            vectored: false,
            iovecs: Vec::new(),
            rw_flags,
            nonvectored: e.nonvectored,
            ops: [opcode::Read::CODE, opcode::Write::CODE],
            sqe_flags: 0,
        })
    }

    /// A read or write as its submission entry: the opcode of the form
    /// chosen at set-up (fixed buffer, vectored or plain), the file by
    /// registered index or descriptor, the job's RWF flags and the I/O's
    /// priority (every read and write carries it: a kernel submission
    /// thread, `sqthread_poll`, does not run at the job's).
    #[inline]
    fn rw_sqe(&mut self, io: &IoUnit) -> RwSqe {
        let (addr, len) = if self.vectored {
            let iov = &mut self.iovecs[io.idx as usize];
            iov.iov_base = io.buf.cast();
            iov.iov_len = io.len as usize;
            (iov as *const libc::iovec as u64, 1)
        } else {
            (io.buf as u64, io.len as u32)
        };
        RwSqe {
            opcode: self.ops[(io.op == Op::Write) as usize],
            flags: self.sqe_flags,
            ioprio: io.prio.value,
            fd: if self.sqe_flags != 0 {
                io.file as i32
            } else {
                io.fd
            },
            off: io.offset,
            addr,
            len,
            rw_flags: self.rw_flags,
            user_data: 0,
            // READ_FIXED and WRITE_FIXED use buffer 0, the pool.
            buf_index: 0,
            personality: 0,
            file_index: 0,
            addr3: 0,
            pad: 0,
        }
    }
}

impl Engine for IoUringEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
    }

    fn caps(&self) -> Caps {
        Caps {
            registers_buffers: self.fixed_bufs,
            ..EngineKind::IoUring.info().caps
        }
    }

    fn init(&mut self, depth: u32, pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1) as usize;
        self.ring.init(depth, self.fixed_bufs.then_some(pool))?;
        // Fixed buffers have their own opcodes, never vectored.
        self.vectored = !self.fixed_bufs
            && match self.nonvectored {
                0 => true,
                n if n > 0 => false,
                _ => {
                    // Auto: non-vectored when the kernel has READ/WRITE.
                    let mut probe = Probe::new();
                    match self.ring.submitter().register_probe(&mut probe) {
                        Ok(()) => {
                            !(probe.is_supported(opcode::Read::CODE)
                                && probe.is_supported(opcode::Write::CODE))
                        }
                        Err(_) => true,
                    }
                }
            };
        self.ops = if self.fixed_bufs {
            [opcode::ReadFixed::CODE, opcode::WriteFixed::CODE]
        } else if self.vectored {
            [opcode::Readv::CODE, opcode::Writev::CODE]
        } else {
            [opcode::Read::CODE, opcode::Write::CODE]
        };
        self.sqe_flags = if self.ring.fixed_files() {
            squeue::Flags::FIXED_FILE.bits()
        } else {
            0
        };
        if self.vectored {
            self.iovecs = vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                depth
            ];
        }
        Ok(())
    }

    fn files_opened(&mut self, fds: &[std::os::fd::RawFd]) -> io::Result<()> {
        self.ring.register_files(fds)
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let entry = match io.op {
            Op::Read | Op::Write => {
                let sqe = self.rw_sqe(io);
                // SAFETY: the buffer, iovec and descriptor stay valid
                // until the completion is reaped.
                return unsafe { self.ring.push_rw(sqe, io.idx) };
            }
            Op::Fsync | Op::Fdatasync if !self.iopoll => {
                let flags = if io.op == Op::Fdatasync {
                    types::FsyncFlags::DATASYNC
                } else {
                    types::FsyncFlags::empty()
                };
                with_fd!(self.ring.fixed_files(), io, |fd| opcode::Fsync::new(fd)
                    .flags(flags)
                    .build())
            }
            Op::SyncFileRange if !self.iopoll => {
                let (off, len, f) = (io.offset, io.len as u32, io.sfr_flags);
                with_fd!(self.ring.fixed_files(), io, |fd| {
                    opcode::SyncFileRange::new(fd, len)
                        .offset(off)
                        .flags(f)
                        .build()
                })
            }
            _ => {
                // Trims (and syncs on a polled ring) run synchronously
                // once nothing is queued or in flight.
                if !self.ring.idle() {
                    return Queued::Busy;
                }
                io.result = sync_op(io);
                return Queued::Completed;
            }
        };
        // SAFETY: the buffer, iovec and descriptor stay valid until the
        // completion is reaped.
        unsafe { self.ring.push(entry, io.idx) }
    }

    fn commit(&mut self) -> io::Result<u32> {
        self.ring.commit()
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        self.ring.reap(min, max, out)
    }

    fn pending(&self) -> u32 {
        self.ring.pending()
    }

    fn reap_waited(&self) -> bool {
        self.ring.waited()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(depth: u32) -> JobSpec {
        let mut s = JobSpec::default();
        s.io.iodepth = depth;
        s
    }

    #[test]
    fn a_ring_too_large_names_the_deepest_iodepth() {
        let s = spec(65536);
        assert_eq!(ring::entries(&s), 65536);
        let m = setup_error(&s, 65536, &crate::sys::from_errno(libc::EINVAL));
        assert!(m.contains("iodepth=65536 is too deep"), "{m}");
        assert!(m.contains("use iodepth=32768 or less"), "{m}");
        assert!(!m.contains("not available"), "{m}");
        // 20000 rounds up to 32768: the largest ring there is.
        assert_eq!(ring::entries(&spec(20000)), MAX_ENTRIES);
        assert_eq!(ring::entries(&spec(u32::MAX)), u32::MAX);
    }

    /// Reads and writes are written into their slots as the kernel's
    /// `struct io_uring_sqe`: byte for byte what the io-uring crate's
    /// builders make, in each form (plain, vectored, fixed buffers;
    /// descriptor or registered file; RWF flags, priority).
    #[test]
    fn read_and_write_entries_are_the_crates_byte_for_byte() {
        fn bytes<T>(v: &T) -> [u8; 64] {
            assert_eq!(std::mem::size_of::<T>(), 64);
            // SAFETY: a 64-byte plain-data struct (both are
            // `struct io_uring_sqe`).
            unsafe { std::mem::transmute_copy(v) }
        }
        let mut pool = vec![0u8; 8 * 4096];
        for (fixedbufs, nonvectored, registerfiles, nowait) in [
            (false, 1, false, false),
            (false, 0, false, true),
            (true, 1, false, false),
            (false, 1, true, false),
            (true, 0, true, true),
        ] {
            let mut sp = spec(8);
            sp.engine.fixedbufs = fixedbufs;
            sp.engine.nonvectored = nonvectored;
            sp.engine.registerfiles = registerfiles;
            sp.engine.nowait = nowait;
            let mut eng = IoUringEngine::new(&sp).unwrap();
            eng.init(8, (pool.as_mut_ptr(), pool.len())).unwrap();
            for op in [Op::Read, Op::Write] {
                // SAFETY: `pool` outlives the unit; nothing is submitted.
                let mut u = unsafe { IoUnit::new(3, pool.as_mut_ptr().add(3 * 4096), 4096) };
                u.op = op;
                u.fd = 7;
                u.file = 2;
                u.offset = 0x1234_5000;
                u.set_len(3072);
                u.prio.value = 0x4003;
                let got = eng.rw_sqe(&u);
                let (buf, len, off) = (u.buf, 3072u32, u.offset);
                let flags = if nowait { RWF_NOWAIT } else { 0 };
                let iov = &eng
                    .iovecs
                    .get(3)
                    .map_or(std::ptr::null(), |v| v as *const _);
                // The crate's builder, finished alike in every form.
                macro_rules! built {
                    ($b:expr) => {
                        $b.offset(off).rw_flags(flags).ioprio(0x4003).build()
                    };
                }
                let want = with_fd!(registerfiles, u, |fd| match (fixedbufs, nonvectored, op) {
                    (true, _, Op::Read) => built!(opcode::ReadFixed::new(fd, buf, len, 0)),
                    (true, _, _) => built!(opcode::WriteFixed::new(fd, buf, len, 0)),
                    (false, 0, Op::Read) => built!(opcode::Readv::new(fd, *iov, 1)),
                    (false, 0, _) => built!(opcode::Writev::new(fd, *iov, 1)),
                    (false, _, Op::Read) => built!(opcode::Read::new(fd, buf, len)),
                    (false, _, _) => built!(opcode::Write::new(fd, buf, len)),
                });
                let what = (fixedbufs, nonvectored, registerfiles, nowait, op);
                assert_eq!(bytes(&got), bytes(&want), "{what:?}");
                if nonvectored == 0 && !fixedbufs {
                    assert_eq!(eng.iovecs[3].iov_base, buf.cast());
                    assert_eq!(eng.iovecs[3].iov_len, 3072);
                }
            }
        }
    }

    /// A ring made on one thread (the worker, or an offload submitter's
    /// parent) runs on the thread that first submits: it becomes the
    /// ring's one issuer, with its fd registered there. Reads return the
    /// file's bytes both times.
    #[test]
    fn a_ring_made_on_one_thread_submits_on_another() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let data: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let fd = file.as_raw_fd();
        let mut eng = IoUringEngine::new(&spec(4)).unwrap();
        let run = move || {
            let mut buf = vec![0u8; 4096];
            eng.init(4, (buf.as_mut_ptr(), buf.len())).unwrap();
            let mut got = Vec::new();
            for offset in [4096u64, 0] {
                // SAFETY: `buf` outlives the unit and the engine's use of it.
                let mut u = unsafe { IoUnit::new(0, buf.as_mut_ptr(), 4096) };
                u.fd = fd;
                u.offset = offset;
                u.set_len(4096);
                assert_eq!(eng.queue(&mut u), Queued::Queued);
                assert_eq!(eng.commit().unwrap(), 1);
                let mut out = Vec::with_capacity(4);
                assert_eq!(eng.reap(1, 4, &mut out).unwrap(), 1);
                assert_eq!(
                    out[0],
                    Completion {
                        idx: 0,
                        result: 4096
                    }
                );
                got.push(buf.clone());
            }
            drop(eng);
            got
        };
        let got = std::thread::spawn(run).join().unwrap();
        assert_eq!(got[0], data[4096..]);
        assert_eq!(got[1], data[..4096]);
        drop(file);
    }

    #[test]
    fn io_uring_missing_names_the_fallback_engines() {
        let m = setup_error(&spec(1), 1, &crate::sys::from_errno(libc::ENOSYS));
        assert!(m.contains("not available here"), "{m}");
        assert!(m.contains("ENOSYS"), "{m}");
        assert!(
            m.contains("--ioengine=libaio") && m.contains("--ioengine=psync"),
            "{m}"
        );
    }

    #[test]
    fn other_setup_errors_name_their_errno() {
        let m = setup_error(&spec(8), 8, &crate::sys::from_errno(libc::EMFILE));
        assert!(m.contains("EMFILE") && m.contains("iodepth=8"), "{m}");
        assert!(!m.contains("not available"), "{m}");
        let m = setup_error(&spec(8), 8, &crate::sys::from_errno(libc::ENOMEM));
        assert!(m.contains("ENOMEM") && m.contains("ulimit -l"), "{m}");
    }
}
