//! Where this process stands among the processes of one run: its rank
//! among the ranks of a run spread over many hosts (one of one alone),
//! its host, what its logs and traces add to their names, and the token
//! that marks the files the run creates. A value handed down from
//! whoever started the run (the launch) to the planner, never a process
//! global: two runs in one process (tests, suites) each have their own.

use std::sync::Arc;

/// See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub rank: u32,
    pub ranks: u32,
    /// This host's name (empty: look it up when a name needs it).
    pub hostname: String,
    /// What this rank adds to the names of the logs and traces it writes
    /// (`NAME.TAG`): its host, and its rank when the host runs several.
    /// Empty for a run on one host alone.
    pub tag: String,
    /// The token of this run, the same on every rank and random per run
    /// (a run alone draws its own): files the run creates carry it
    /// (`user.iomark.run`), a file that carries it (made by another rank
    /// of this run after the safety check, such as one shared file) may
    /// be used, and a file the run made is removed only while it carries
    /// it. `None`: the files carry no token.
    pub run_token: Option<Arc<str>>,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            rank: 0,
            ranks: 1,
            hostname: String::new(),
            tag: String::new(),
            run_token: Some(new_token().into()),
        }
    }
}

/// A random token for a run (32 hex digits).
pub fn new_token() -> String {
    let mut b = [0u8; 16];
    crate::sys::random_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Placement {
    /// The run's token (see the field).
    pub fn run_token(&self) -> Option<&str> {
        self.run_token.as_deref()
    }

    /// Whether this is one rank of several.
    pub fn is_spread(&self) -> bool {
        self.ranks > 1
    }
}
