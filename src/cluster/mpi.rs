//! The MPI transport (the `mpi` cargo feature): point-to-point messages
//! on MPI_COMM_WORLD, none of which waits.
//!
//! - Sending is `MPI_Isend` of a buffer the transport keeps until
//!   `MPI_Test` says the send is complete (a result of 100 KiB is above
//!   every transport's eager limit: a blocking send would wait for the
//!   receiver, however long it hangs).
//! - Receiving is `MPI_Improbe` (is a message there?) then `MPI_Imrecv`
//!   into a buffer of its size, handed over once `MPI_Test` says it has
//!   arrived whole (a blocking receive would wait for a sender that
//!   stopped in mid-message).
//!
//! MPI is initialized for several threads (the watch thread polls while
//! the main thread sends); every MPI call is made under one lock, held
//! for that call only, so a library that offers only serialized threading
//! is used correctly too, and no thread ever waits on the lock for longer
//! than one non-blocking call.

use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

use mpi::environment::Universe;
use mpi::ffi;
use mpi::Threading;

use super::transport::Transport;

/// How long a rank waits in `MPI_Abort` for the launcher to end it
/// before it leaves by itself (the launcher's own grace is 1 s).
const ABORT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// The one tag every message of iomark carries.
const TAG: c_int = 7;

/// A send or a receive under way, with the buffer MPI reads or fills.
struct Pending {
    req: ffi::MPI_Request,
    buf: Vec<u8>,
    /// The sender (receives) or the receiver (sends).
    peer: u32,
    /// `MPI_Test` said it completed (its request is then freed).
    complete: bool,
}

struct World {
    sends: Vec<Pending>,
    recvs: Vec<Pending>,
    // Dropped last: finalizes MPI.
    _universe: Universe,
}

/// See the module documentation.
pub struct Mpi {
    rank: u32,
    size: u32,
    inner: Mutex<World>,
}

// SAFETY: MPI was initialized with at least MPI_THREAD_SERIALIZED
// (checked in `init`) and every MPI call is made with `inner` locked, so
// no two threads call MPI at once; the request handles and buffers in
// `World` are only touched under that lock.
unsafe impl Send for Mpi {}
// SAFETY: as above.
unsafe impl Sync for Mpi {}

impl Mpi {
    /// Initializes MPI; one line when it cannot be.
    pub fn init() -> Result<Mpi, String> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or("MPI cannot be initialized (was it initialized already?)")?;
        if !matches!(level, Threading::Serialized | Threading::Multiple) {
            return Err(format!(
                "the MPI library offers only {level:?} threading; iomark needs Serialized or Multiple"
            ));
        }
        let (mut rank, mut size) = (0, 0);
        // SAFETY: MPI is initialized; both calls fill one int. Errors
        // are returned, not fatal: a message to a rank that died (a
        // connection refused) must not end this rank too; such a send
        // is dropped (see `done`), and the rank is found lost.
        unsafe {
            ffi::MPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut rank);
            ffi::MPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut size);
            ffi::MPI_Comm_set_errhandler(ffi::RSMPI_COMM_WORLD, ffi::RSMPI_ERRORS_RETURN);
        }
        Ok(Mpi {
            rank: rank as u32,
            size: size as u32,
            inner: Mutex::new(World {
                sends: Vec::new(),
                recvs: Vec::new(),
                _universe: universe,
            }),
        })
    }

    fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether the request of `p` has completed (`MPI_Test`, once). A
/// request that failed (its peer died) counts as complete: a send is
/// then dropped, a receive handed over as it is (and not decoded).
fn done(p: &mut Pending) -> bool {
    if !p.complete {
        let mut flag: c_int = 0;
        // SAFETY: a live request handle; MPI_Test completes (and frees)
        // it or leaves it as it is; the status is ignored.
        let rc = unsafe { ffi::MPI_Test(&mut p.req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
        p.complete = flag != 0 || rc != 0;
    }
    p.complete
}

impl World {
    /// Drops the completed sends (their buffers are no longer read).
    fn reap_sends(&mut self) {
        self.sends.retain_mut(|p| !done(p));
    }

    /// Starts receiving every message that has announced itself.
    fn probe(&mut self) {
        loop {
            let mut flag: c_int = 0;
            // SAFETY: MPI_Status is plain data, filled by MPI_Improbe.
            let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
            // SAFETY: reads an MPI constant that MPI_Init has set.
            let mut msg: ffi::MPI_Message = unsafe { ffi::RSMPI_MESSAGE_NULL };
            // SAFETY: out-parameters of the right types.
            unsafe {
                ffi::MPI_Improbe(
                    ffi::RSMPI_ANY_SOURCE,
                    TAG,
                    ffi::RSMPI_COMM_WORLD,
                    &mut flag,
                    &mut msg,
                    &mut status,
                )
            };
            if flag == 0 {
                return;
            }
            let mut count: c_int = 0;
            // SAFETY: the status MPI_Improbe filled; bytes are MPI_UINT8_T.
            unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) };
            let mut p = Pending {
                // SAFETY: a null request, replaced by MPI_Imrecv.
                req: unsafe { ffi::RSMPI_REQUEST_NULL },
                buf: vec![0u8; count.max(0) as usize],
                peer: status.MPI_SOURCE as u32,
                complete: false,
            };
            // SAFETY: the buffer holds `count` bytes and stays where it is
            // (a Vec's heap block does not move with the Vec) until the
            // request completes; the matched message is received once.
            unsafe {
                ffi::MPI_Imrecv(
                    p.buf.as_mut_ptr() as *mut c_void,
                    count,
                    ffi::RSMPI_UINT8_T,
                    &mut msg,
                    &mut p.req,
                )
            };
            self.recvs.push(p);
        }
    }
}

impl Transport for Mpi {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn send(&self, to: u32, data: Vec<u8>) {
        let mut w = self.world();
        let mut p = Pending {
            // SAFETY: a null request, replaced by MPI_Isend.
            req: unsafe { ffi::RSMPI_REQUEST_NULL },
            buf: data,
            peer: to,
            complete: false,
        };
        // SAFETY: the buffer stays alive and unmoved in `sends` until
        // MPI_Test says the send is complete.
        unsafe {
            ffi::MPI_Isend(
                p.buf.as_ptr() as *const c_void,
                p.buf.len() as c_int,
                ffi::RSMPI_UINT8_T,
                to as c_int,
                TAG,
                ffi::RSMPI_COMM_WORLD,
                &mut p.req,
            )
        };
        w.sends.push(p);
        w.reap_sends();
    }

    fn poll(&self) -> Option<(u32, Vec<u8>)> {
        let mut w = self.world();
        w.reap_sends();
        w.probe();
        // The first complete message whose sender has no earlier one on
        // the way: each sender's messages are handed over in order.
        let mut i = None;
        for k in 0..w.recvs.len() {
            let peer = w.recvs[k].peer;
            if w.recvs[..k].iter().any(|p| p.peer == peer) {
                continue;
            }
            if done(&mut w.recvs[k]) {
                i = Some(k);
                break;
            }
        }
        let p = w.recvs.remove(i?);
        Some((p.peer, p.buf))
    }

    fn sending(&self) -> usize {
        let mut w = self.world();
        w.reap_sends();
        w.sends.len()
    }

    fn abort(&self, code: i32) -> ! {
        // The launcher answers the abort with a stop signal to every
        // rank, this one included: leave then, not a second later when
        // it kills (this thread waits in MPI_Abort, and the others may
        // wait for its lock).
        crate::run::signals::exit_on_signal();
        // And if no signal comes (the launcher was already ending the
        // job when the abort began, and its signal came before), leave
        // shortly: the abort has told the launcher by then.
        std::thread::spawn(move || {
            std::thread::sleep(ABORT_GRACE);
            crate::run::signals::clean_up_now();
            // SAFETY: ends the process without running exit handlers
            // (MPI's could wait for the abort this replaces).
            unsafe { libc::_exit(code) }
        });
        // Under the lock (another thread holds it for one non-blocking
        // call at most); MPI_Abort does not return.
        let _w = self.world();
        // SAFETY: MPI is initialized; MPI_Abort ends every rank.
        unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code) };
        std::process::exit(code)
    }
}
