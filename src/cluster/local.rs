//! Ranks as threads of one process, for tests: each rank's messages go
//! through a channel. A rank can be made silent (as a hung process is).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::Transport;

type Msg = (u32, i32, Vec<u8>);

/// One rank's end.
pub struct Local {
    rank: u32,
    peers: Vec<Sender<Msg>>,
    inbox: Mutex<Receiver<Msg>>,
    /// When set, this rank sends nothing (a hung rank).
    pub mute: Arc<AtomicBool>,
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
                mute: Arc::new(AtomicBool::new(false)),
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

    fn send(&self, to: u32, tag: i32, data: &[u8]) {
        if !self.mute.load(Ordering::SeqCst) {
            let _ = self.peers[to as usize].send((self.rank, tag, data.to_vec()));
        }
    }

    fn poll(&self) -> Option<Msg> {
        self.inbox.lock().ok()?.try_recv().ok()
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the run with code {code}", self.rank)
    }
}
