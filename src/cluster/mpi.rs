//! The MPI transport (the `mpi` cargo feature): point-to-point messages
//! on MPI_COMM_WORLD, polled with `MPI_Improbe`. MPI is initialized for
//! several threads (the heartbeat thread sends while the main thread
//! polls); every call goes through one lock, so a library that offers
//! only serialized threading is used correctly too.

use std::sync::Mutex;

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;

use super::Transport;

struct World {
    world: SimpleCommunicator,
    // Dropped last: finalizes MPI.
    _universe: Universe,
}

/// See the module documentation.
pub struct Mpi {
    rank: u32,
    size: u32,
    inner: Mutex<World>,
}

// SAFETY: MPI was initialized with at least MPI_THREAD_SERIALIZED (checked
// in `init`), and every MPI call is made with `inner` locked, so no two
// threads call MPI at once.
unsafe impl Send for Mpi {}
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
        let world = universe.world();
        Ok(Mpi {
            rank: world.rank() as u32,
            size: world.size() as u32,
            inner: Mutex::new(World {
                world,
                _universe: universe,
            }),
        })
    }
}

impl Transport for Mpi {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn send(&self, to: u32, tag: i32, data: &[u8]) {
        if let Ok(w) = self.inner.lock() {
            w.world.process_at_rank(to as i32).send_with_tag(data, tag);
        }
    }

    fn poll(&self) -> Option<(u32, i32, Vec<u8>)> {
        let w = self.inner.lock().ok()?;
        let probed = w.world.any_process().immediate_matched_probe()?;
        let (data, status) = probed.matched_receive_vec::<u8>();
        Some((status.source_rank() as u32, status.tag(), data))
    }

    fn abort(&self, code: i32) -> ! {
        match self.inner.lock() {
            Ok(w) => w.world.abort(code),
            Err(_) => std::process::exit(code),
        }
    }
}
