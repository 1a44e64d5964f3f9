//! The public handles of one replica: [`ReplicaHandle`] (its address)
//! and [`Faults`] (its fault controls, `down`/`up` included, which close
//! and reopen its listener). Out of `lib.rs`, above [`crate::server`]
//! whose replicas they hold.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::faults::{FaultState, Mode};
use crate::server::Replica;

/// One replica of a [`TestServer`](crate::TestServer).
#[derive(Clone)]
pub struct ReplicaHandle {
    replica: Arc<Replica>,
}

impl std::fmt::Debug for ReplicaHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaHandle")
            .field("url", &self.url())
            .finish()
    }
}

impl ReplicaHandle {
    pub(crate) fn new(replica: Arc<Replica>) -> Self {
        Self { replica }
    }

    /// Index of the replica.
    pub fn index(&self) -> usize {
        self.replica.index
    }

    /// `http://127.0.0.1:<port>` or `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.replica.url()
    }

    /// The socket address it listens on (kept across `down`/`up`).
    pub fn addr(&self) -> SocketAddr {
        self.replica.addr
    }

    /// Its fault controls.
    pub fn faults(&self) -> Faults {
        Faults {
            replica: self.replica.clone(),
        }
    }
}

/// Fault injection for one replica. Cloning shares the same replica.
#[derive(Clone)]
pub struct Faults {
    replica: Arc<Replica>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults")
            .field("replica", &self.replica.index)
            .field("mode", &self.mode())
            .finish()
    }
}

impl Faults {
    pub(crate) fn state(&self) -> &FaultState {
        &self.replica.faults
    }

    /// Index of the replica.
    pub fn index(&self) -> usize {
        self.replica.index
    }

    /// URL of the replica.
    pub fn url(&self) -> String {
        self.replica.url()
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.replica.faults.mode()
    }

    /// Closes the listener (connections are refused) and drops every open
    /// connection and watch of this replica.
    pub async fn down(&self) {
        self.replica.down().await;
    }

    /// Reopens the same port after [`down`](Self::down), or ends a
    /// [`hang`](Self::hang).
    pub async fn up(&self) -> std::io::Result<()> {
        self.replica.up().await
    }

    /// Accept connections but never answer (also on open connections and
    /// watches) until [`up`](Self::up) or [`down`](Self::down).
    pub fn hang(&self) {
        if self.mode() == Mode::Up {
            self.replica.faults.set_mode(Mode::Hang);
        }
    }

    /// Delay every request by `d` (zero to stop).
    pub fn latency(&self, d: Duration) {
        self.replica.faults.set_latency(d);
    }

    /// Answer the next `count` requests with `status` (a `Status` body with
    /// the usual reason) and, if given, `Retry-After` in whole seconds.
    pub fn fail_next(&self, count: u32, status: u16, retry_after: Option<Duration>) {
        self.replica
            .faults
            .set_fail(count, status, retry_after.map(|d| d.as_secs()));
    }

    /// Cut every open watch stream of this replica in the middle of a line.
    pub fn cut_watches(&self) {
        self.replica.faults.cut_watches();
    }

    /// Answer the next `count` requests with a truncated JSON body.
    pub fn malformed_next(&self, count: u32) {
        self.replica.faults.set_malformed(count);
    }

    /// Back to normal: up, no latency, no pending failures.
    pub async fn reset(&self) -> std::io::Result<()> {
        self.latency(Duration::ZERO);
        self.fail_next(0, 0, None);
        self.malformed_next(0);
        self.up().await
    }

    /// Requests this replica has served (counted after hang and latency).
    pub fn requests_served(&self) -> u64 {
        self.replica.faults.served()
    }
}
