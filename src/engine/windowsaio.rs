//! `windowsaio`: overlapped I/O on an I/O completion port (Windows).
//!
//! Files are opened for overlapped I/O and tied to the engine's port.
//! A read or write starts when it is queued (`ReadFile`/`WriteFile` with
//! the unit's own `OVERLAPPED`, which carries the offset); every started
//! transfer, finished at once or not, posts one completion packet, and
//! `reap` takes up to `max` packets in one `GetQueuedCompletionStatusEx`
//! call. `iodepth` units may be in flight. Syncs (`FlushFileBuffers`)
//! run once nothing is in flight. The `OVERLAPPED` array and the packet
//! list are allocated once in `init`.

use std::io;

use windows_sys::Win32::Foundation::{
    self as wf, RtlNtStatusToDosError, ERROR_HANDLE_EOF, ERROR_IO_PENDING, INVALID_HANDLE_VALUE,
    WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::{
    CreateIoCompletionPort, GetQueuedCompletionStatusEx, OVERLAPPED, OVERLAPPED_ENTRY,
};

use super::file::{open_file, sync_op};
use super::{Completion, Engine, EngineError, EngineKind, IoUnit, Op, OpenFile, Queued, RawFd};
use crate::job::JobSpec;
use crate::sys::{fd_of, handle};

/// NTSTATUS of a read that starts at or past the end of the file.
const STATUS_END_OF_FILE: i32 = 0xC000_0011_u32 as i32;

pub struct WindowsAioEngine {
    /// The completion port every file of the job is tied to.
    port: wf::HANDLE,
    /// One `OVERLAPPED` per I/O unit, by unit index (never moved after
    /// `init`: the system writes into them until the packet is reaped).
    ovs: Vec<OVERLAPPED>,
    /// Packets taken by one wait.
    entries: Vec<OVERLAPPED_ENTRY>,
    /// Transfers started and not yet reaped.
    inflight: u32,
}

// SAFETY: the port and the OVERLAPPED array belong to this engine, which
// one thread uses at a time.
unsafe impl Send for WindowsAioEngine {}

impl WindowsAioEngine {
    pub fn new(_spec: &JobSpec) -> Result<Self, EngineError> {
        // SAFETY: creates a new port (no file yet); checked below.
        let port =
            unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        if port.is_null() {
            return Err(EngineError::Init {
                engine: "windowsaio",
                source: io::Error::last_os_error(),
            });
        }
        Ok(WindowsAioEngine {
            port,
            ovs: Vec::new(),
            entries: Vec::new(),
            inflight: 0,
        })
    }

    /// The unit a packet's `OVERLAPPED` belongs to.
    fn unit_of(&self, ov: *const OVERLAPPED) -> u32 {
        let base = self.ovs.as_ptr() as usize;
        ((ov as usize - base) / std::mem::size_of::<OVERLAPPED>()) as u32
    }

    /// Bytes moved, or -errno, from the status the system left in `ov`.
    fn result_of(ov: &OVERLAPPED, bytes: u32) -> i64 {
        let status = ov.Internal as i32;
        if status >= 0 {
            return i64::from(bytes);
        }
        if status == STATUS_END_OF_FILE {
            return 0;
        }
        // SAFETY: a pure conversion.
        let code = unsafe { RtlNtStatusToDosError(status) } as i32;
        -i64::from(crate::sys::errno(&io::Error::from_raw_os_error(code)))
    }
}

impl Engine for WindowsAioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::WindowsAio
    }

    fn init(&mut self, depth: u32, _pool: (*mut u8, usize)) -> io::Result<()> {
        let depth = depth.max(1) as usize;
        // SAFETY: OVERLAPPED and OVERLAPPED_ENTRY are plain data; zero is
        // their initial state.
        self.ovs = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        // SAFETY: as above.
        self.entries = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        Ok(())
    }

    fn open(&mut self, f: &OpenFile) -> io::Result<(RawFd, usize)> {
        let fd = open_file(f, f.flags | crate::sys::O_OVERLAPPED)?;
        // SAFETY: ties the handle just opened to this engine's port.
        let p = unsafe { CreateIoCompletionPort(handle(fd), self.port, 0, 0) };
        if p.is_null() {
            let e = io::Error::last_os_error();
            let _ = crate::sys::close(fd);
            return Err(e);
        }
        Ok((fd, 0))
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> Queued {
        if !matches!(io.op, Op::Read | Op::Write) {
            // Syncs (and trims, refused before the run) wait for the
            // transfers in flight, then run here.
            if self.inflight > 0 {
                return Queued::Busy;
            }
            io.result = sync_op(io);
            return Queued::Completed;
        }
        let ov = &mut self.ovs[io.idx as usize];
        // SAFETY: reset to the zero state before reuse (not in flight).
        *ov = unsafe { std::mem::zeroed() };
        ov.Anonymous.Anonymous.Offset = io.offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (io.offset >> 32) as u32;
        let len = io.len.min(u32::MAX as u64) as u32;
        // SAFETY: the buffer and the OVERLAPPED stay valid until the
        // packet is reaped (the worker's pool; `ovs` is never moved).
        let ok = unsafe {
            if io.op == Op::Write {
                WriteFile(handle(io.fd), io.buf, len, std::ptr::null_mut(), ov)
            } else {
                ReadFile(handle(io.fd), io.buf, len, std::ptr::null_mut(), ov)
            }
        };
        // SAFETY: reads the thread's last error.
        if ok != 0 || unsafe { wf::GetLastError() } == ERROR_IO_PENDING {
            self.inflight += 1;
            return Queued::Queued;
        }
        // Failed at once: no packet comes.
        let e = io::Error::last_os_error();
        io.result = if e.raw_os_error() == Some(ERROR_HANDLE_EOF as i32) {
            0
        } else {
            -i64::from(crate::sys::errno(&e))
        };
        Queued::Completed
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        out.clear();
        let max = max.max(1).min(self.entries.len() as u32);
        let min = min.min(max);
        while (out.len() as u32) < max && self.inflight > 0 {
            let want = (max - out.len() as u32).min(self.inflight);
            let timeout = if (out.len() as u32) < min {
                u32::MAX
            } else {
                0
            };
            let mut got = 0u32;
            // SAFETY: `entries` has room for `want` packets.
            let ok = unsafe {
                GetQueuedCompletionStatusEx(
                    self.port,
                    self.entries.as_mut_ptr(),
                    want,
                    &mut got,
                    timeout,
                    0,
                )
            };
            if ok == 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(WAIT_TIMEOUT as i32) {
                    break;
                }
                return Err(e);
            }
            for k in 0..got as usize {
                let ent = self.entries[k];
                let idx = self.unit_of(ent.lpOverlapped);
                let result =
                    Self::result_of(&self.ovs[idx as usize], ent.dwNumberOfBytesTransferred);
                out.push(Completion { idx, result });
            }
            self.inflight -= got;
        }
        Ok(out.len() as u32)
    }
}

impl Drop for WindowsAioEngine {
    fn drop(&mut self) {
        // Wait for what is still in flight, so that no buffer or
        // OVERLAPPED is written after it is freed.
        let mut out = Vec::with_capacity(self.entries.len());
        while self.inflight > 0 {
            let n = self.inflight.min(self.entries.len() as u32);
            if self.reap(n, n, &mut out).is_err() {
                break;
            }
        }
        let _ = crate::sys::close(fd_of(self.port));
    }
}
