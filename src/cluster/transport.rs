//! How a rank reaches the others: a [`Transport`] moves whole messages
//! (bytes) between ranks and never waits. Sending queues the message and
//! returns; receiving hands over a message only once it has fully
//! arrived. Whoever needs an answer polls, in a loop that also checks
//! that the ranks it waits for are alive (`node`), so no call can hang a
//! rank on a peer that stopped.
//!
//! Two transports: MPI point-to-point messages in the `mpi` build
//! (`mpi.rs`: `MPI_Isend`, `MPI_Improbe` + `MPI_Imrecv`, `MPI_Test`), and
//! in-process channels ([`Local`]) for tests and the scale simulation, on
//! which a rank can be made to hang.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// See the module documentation. Implementations are thread safe: the
/// watch thread of a rank polls and sends while its main thread does.
pub trait Transport: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Queues `data` for rank `to`; returns at once.
    fn send(&self, to: u32, data: Vec<u8>);
    /// A message that has fully arrived, if any: (from, data). Returns at
    /// once.
    fn poll(&self) -> Option<(u32, Vec<u8>)>;
    /// Messages this rank sent that have not left it yet.
    fn sending(&self) -> usize;
    /// Ends every rank at once (the launcher kills them all), with `code`.
    fn abort(&self, code: i32) -> !;
}

type Msg = (u32, Vec<u8>);

/// One rank's end of in-process channels between ranks (threads).
pub struct Local {
    rank: u32,
    peers: Vec<Sender<Msg>>,
    inbox: Mutex<Receiver<Msg>>,
    /// When set, this rank neither sends nor receives anything: it hangs
    /// as a stopped process does.
    pub hung: Arc<AtomicBool>,
}

impl Local {
    /// `n` connected ranks.
    pub fn ranks(n: u32) -> Vec<Local> {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| channel::<Msg>()).unzip();
        rxs.into_iter()
            .enumerate()
            .map(|(i, rx)| Local {
                rank: i as u32,
                peers: txs.clone(),
                inbox: Mutex::new(rx),
                hung: Arc::new(AtomicBool::new(false)),
            })
            .collect()
    }
}

impl Transport for Local {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.peers.len() as u32
    }

    fn send(&self, to: u32, data: Vec<u8>) {
        if !self.hung.load(Ordering::SeqCst) {
            if let Some(p) = self.peers.get(to as usize) {
                let _ = p.send((self.rank, data));
            }
        }
    }

    fn poll(&self) -> Option<Msg> {
        if self.hung.load(Ordering::SeqCst) {
            return None;
        }
        self.inbox.lock().ok()?.try_recv().ok()
    }

    fn sending(&self) -> usize {
        0
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the run with code {code}", self.rank)
    }
}
