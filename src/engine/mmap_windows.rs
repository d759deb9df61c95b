//! `mmap` on Windows: when a file is opened, the part of it the job uses
//! (from the start of its region, rounded down to the 64 KiB allocation
//! granularity, to the size it was laid out to) is mapped with
//! `CreateFileMappingW` + `MapViewOfFile` (`sys::View`): shared and
//! writable when the job writes, read-only otherwise. A read copies from
//! the view into the I/O buffer, a write copies the buffer into the
//! view. `fsync`/`fdatasync` write the view's changed pages to the file
//! (`FlushViewOfFile`) and the file's buffers to the storage
//! (`FlushFileBuffers`). The view is unmapped and its section closed
//! when the file is closed.
//!
//! The file must already have its full size (the registry entry says
//! `Layout::Full`, as on Unix). Hot path: one bounds check and a copy.

use std::io;

use super::file::{open_file, sync_op};
use super::{Engine, EngineError, EngineKind, IoUnit, Op, OpenFile, Queued, RawFd};
use crate::job::JobSpec;
use crate::sys::{MapAccess, View};

/// One mapped file: the file's bytes `start..end` from `base`.
struct Map {
    view: Option<View>,
    base: *mut u8,
    start: u64,
    end: u64,
}

pub struct MmapEngine {
    maps: Vec<Map>,
}

// SAFETY: the views belong to this engine, used by one thread at a time.
unsafe impl Send for MmapEngine {}

/// A disk or volume (`\\.\PhysicalDriveN`, `\\.\C:`) cannot be mapped
/// on Windows (sections are made of files only): refused before the job
/// starts.
pub fn preflight(spec: &JobSpec) -> Result<(), EngineError> {
    if let Some(d) = spec
        .file
        .filenames
        .iter()
        .find(|f| crate::sys::is_device_path(std::path::Path::new(f)))
    {
        return Err(EngineError::Unfit(format!(
            "ioengine=mmap cannot map '{d}': Windows maps files only, not disks or volumes \
             (use windowsaio, psync or sync)"
        )));
    }
    Ok(())
}

impl MmapEngine {
    pub fn new(_spec: &JobSpec) -> Self {
        MmapEngine { maps: Vec::new() }
    }
}

impl Engine for MmapEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Mmap
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        let fd = open_file(f, f.flags)?;
        let fail = |e: io::Error| {
            let _ = crate::sys::close(fd);
            e
        };
        if f.size == 0 {
            return Err(fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "mmap needs a file with a known, non-zero size",
            )));
        }
        let access = if f.flags & crate::sys::O_ACCMODE == crate::sys::O_RDONLY {
            MapAccess::Read
        } else {
            MapAccess::Write
        };
        // The window the job uses (the whole file when its region does
        // not lie below its size).
        let start = if f.start < f.size { f.start } else { 0 };
        let view = View::map(Some(fd), start, (f.size - start) as usize, access).map_err(|e| {
            fail(io::Error::new(
                e.kind(),
                format!("mmap: cannot map the file: {e}"),
            ))
        })?;
        self.maps.push(Map {
            base: view.ptr(),
            view: Some(view),
            start,
            end: f.size,
        });
        Ok((fd, self.maps.len() - 1))
    }

    fn close(&mut self, fd: RawFd, data: usize, _size: u64) -> io::Result<()> {
        if let Some(m) = self.maps.get_mut(data) {
            // Unmapped before the file's handle closes.
            m.view = None;
            m.base = std::ptr::null_mut();
            m.end = m.start;
        }
        super::file::close_fd(fd)
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        let m = &self.maps[io.file_data];
        io.result = match io.op {
            Op::Read | Op::Write => {
                let inside = io.offset >= m.start
                    && io
                        .offset
                        .checked_add(io.len)
                        .is_some_and(|end| end <= m.end);
                if !inside {
                    -(libc::EINVAL as i64)
                } else {
                    // SAFETY: the range lies inside the view (checked
                    // above) and the buffer holds `len` bytes.
                    unsafe {
                        let at = m.base.add((io.offset - m.start) as usize);
                        if io.op == Op::Read {
                            std::ptr::copy_nonoverlapping(at, io.buf, io.len as usize);
                        } else {
                            std::ptr::copy_nonoverlapping(io.buf, at, io.len as usize);
                        }
                    }
                    io.len as i64
                }
            }
            Op::Fsync | Op::Fdatasync => match &m.view {
                Some(v) => crate::sys::ret_or_errno(v.sync(io.fd)),
                None => -(libc::EBADF as i64),
            },
            // Linux only: refused before the job starts (`engine::platform`).
            Op::SyncFileRange | Op::Trim => sync_op(io),
        };
        Queued::Completed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::IoUnit;
    use crate::sys::{AsRawFd, OwnedFd};

    /// A directory handle and a file of `len` bytes (byte i is i % 251)
    /// in it.
    fn file(len: usize) -> (tempfile::TempDir, OwnedFd) {
        let t = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(t.path().join("m.dat"), data).unwrap();
        let dir = crate::sys::open_at(
            crate::sys::AT_FDCWD,
            &std::ffi::CString::new(t.path().as_os_str().as_encoded_bytes()).unwrap(),
            crate::sys::O_PATH | crate::sys::O_DIRECTORY,
            0,
        )
        .unwrap();
        (t, dir)
    }

    fn open(
        e: &mut MmapEngine,
        dir: &OwnedFd,
        flags: i32,
        start: u64,
        size: u64,
    ) -> (RawFd, usize) {
        let path = std::path::Path::new("m.dat");
        e.open(&OpenFile {
            path,
            dir: dir.as_raw_fd(),
            name: c"m.dat",
            flags,
            size,
            start,
            is_blockdev: false,
        })
        .unwrap()
    }

    fn io(e: &mut MmapEngine, op: Op, fd: RawFd, data: usize, off: u64, buf: &mut [u8]) -> i64 {
        // SAFETY: `buf` is borrowed, valid and unshared, for the unit's life.
        let mut u = unsafe { IoUnit::new(0, buf.as_mut_ptr(), buf.len() as u64) };
        u.op = op;
        u.fd = fd;
        u.file_data = data;
        u.offset = off;
        u.len = buf.len() as u64;
        assert_eq!(e.queue(&mut u), Queued::Completed);
        u.result
    }

    #[test]
    fn writes_reach_the_file_and_reads_see_them() {
        let (t, dir) = file(256 << 10);
        let spec = crate::job::JobSpec::default();
        let mut e = MmapEngine::new(&spec);
        let (fd, data) = open(&mut e, &dir, crate::sys::O_RDWR, 0, 256 << 10);
        let mut w = vec![0xa5u8; 4096];
        assert_eq!(io(&mut e, Op::Write, fd, data, 200 << 10, &mut w), 4096);
        let mut r = vec![0u8; 4096];
        assert_eq!(io(&mut e, Op::Read, fd, data, 200 << 10, &mut r), 4096);
        assert_eq!(r, w);
        assert_eq!(io(&mut e, Op::Read, fd, data, 4096, &mut r), 4096);
        assert!(r
            .iter()
            .enumerate()
            .all(|(i, b)| *b == ((4096 + i) % 251) as u8));
        assert_eq!(io(&mut e, Op::Fsync, fd, data, 0, &mut []), 0);
        // Past the mapped size: EINVAL, nothing copied.
        assert_eq!(
            io(&mut e, Op::Read, fd, data, (256 << 10) - 100, &mut r),
            -(libc::EINVAL as i64)
        );
        e.close(fd, data, 256 << 10).unwrap();
        // Unmapped and closed: the file holds the write.
        let got = std::fs::read(t.path().join("m.dat")).unwrap();
        assert_eq!(&got[200 << 10..(200 << 10) + 4096], &w[..]);
        assert_eq!(got[(200 << 10) - 1], (((200 << 10) - 1) % 251) as u8);
        std::fs::remove_file(t.path().join("m.dat")).unwrap();
    }

    #[test]
    fn a_region_off_the_granularity_is_mapped_from_below_it() {
        let (t, dir) = file(512 << 10);
        let spec = crate::job::JobSpec::default();
        let mut e = MmapEngine::new(&spec);
        // The region starts at 100 KiB: the view at 64 KiB.
        let (fd, data) = open(&mut e, &dir, crate::sys::O_RDWR, 100 << 10, 512 << 10);
        assert_eq!(e.maps[data].start, 100 << 10);
        let mut r = vec![0u8; 8192];
        assert_eq!(io(&mut e, Op::Read, fd, data, 100 << 10, &mut r), 8192);
        assert!(r
            .iter()
            .enumerate()
            .all(|(i, b)| *b == (((100 << 10) + i) % 251) as u8));
        let mut w = vec![7u8; 8192];
        assert_eq!(io(&mut e, Op::Write, fd, data, 500 << 10, &mut w), 8192);
        // Below the region: not mapped.
        assert_eq!(
            io(&mut e, Op::Read, fd, data, 96 << 10, &mut r),
            -(libc::EINVAL as i64)
        );
        e.close(fd, data, 512 << 10).unwrap();
        let got = std::fs::read(t.path().join("m.dat")).unwrap();
        assert_eq!(&got[500 << 10..(500 << 10) + 8192], &w[..]);
        assert_eq!(got.len(), 512 << 10);
    }

    #[test]
    fn disks_and_volumes_are_refused_before_the_job() {
        for f in ["\\\\.\\PhysicalDrive1", "\\\\.\\D\\:"] {
            let spec = crate::job::test_spec(&[("ioengine", "mmap"), ("filename", f)]);
            let e = crate::engine::preflight(&spec).unwrap_err().to_string();
            assert!(e.contains("cannot map") && e.contains("windowsaio"), "{e}");
        }
        let spec = crate::job::test_spec(&[("ioengine", "mmap"), ("filename", "x.dat")]);
        assert!(crate::engine::preflight(&spec).is_ok());
    }

    #[test]
    fn a_read_only_file_is_mapped_read_only() {
        let (t, dir) = file(64 << 10);
        let spec = crate::job::JobSpec::default();
        let mut e = MmapEngine::new(&spec);
        let (fd, data) = open(&mut e, &dir, crate::sys::O_RDONLY, 0, 64 << 10);
        let mut r = vec![0u8; 4096];
        assert_eq!(io(&mut e, Op::Read, fd, data, 8192, &mut r), 4096);
        assert_eq!(r[0], (8192 % 251) as u8);
        e.close(fd, data, 64 << 10).unwrap();
        drop(t);
    }

    /// A job's (reads, writes) and error.
    fn counts(r: &crate::run::RunResult, job: usize) -> (u64, u64, i32) {
        let o = &r.jobs[job].outcome;
        (o.stats.dir[0].ios, o.stats.dir[1].ios, o.error)
    }

    #[test]
    fn a_job_writes_through_the_view_and_verifies_and_psync_reads_it_back() {
        let t = tempfile::tempdir().unwrap();
        let f = crate::job::opt_path(&t.path().join("v.dat"));
        let text = format!(
            "[global]\nfilename={f}\nsize=1m\nbs=4k\nverify=crc32c\n\
             [m]\nioengine=mmap\nrw=write\n\
             [p]\nstonewall\nioengine=psync\nrw=write\nverify_only=1\n\
             [r]\nstonewall\nioengine=mmap\nrw=randrw\nverify=0\n"
        );
        let r = crate::run::session::testing::run_text(&text, None);
        // m: 256 writes through the view, then 256 verifying reads.
        assert_eq!(counts(&r, 0), (256, 256, 0));
        // p: psync finds the blocks m wrote, each with its checksum.
        assert_eq!(counts(&r, 1), (256, 0, 0));
        // r: a random mix of 256 blocks over the file.
        let (rd, wr, err) = counts(&r, 2);
        assert_eq!((rd + wr, err), (256, 0));
        assert!(rd > 0 && wr > 0, "{rd} {wr}");
    }
}
