//! The connection bounds shared by the replicas and the admin endpoint
//! ([`Connections`]: slots and requests in flight) and the handle a
//! request holds on its connection ([`ConnHandle`]). Plain state, below
//! [`crate::server`] (which accepts and serves connections) and the
//! handlers that read it.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::bounds::Bounds;
use crate::inflight::InFlight;

/// The connections of one server: its bounds, the slots left, and the
/// requests in flight.
pub(crate) struct Connections {
    pub(crate) bounds: Bounds,
    slots: Arc<Semaphore>,
    pub(crate) in_flight: InFlight,
}

/// One admitted connection; its slot is free again when dropped.
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Connections {
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            slots: Arc::new(Semaphore::new(bounds.max_connections.max(1))),
            in_flight: InFlight::new(bounds.max_read_only_inflight, bounds.max_mutating_inflight),
        }
    }

    /// Connections holding a slot now.
    pub(crate) fn open(&self) -> usize {
        self.bounds
            .max_connections
            .max(1)
            .saturating_sub(self.slots.available_permits())
    }

    /// A slot for a new connection, or `None` when `max_connections` are open.
    pub(crate) fn admit(&self) -> Option<Slot> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => Some(Slot { _permit: permit }),
            Err(_) => {
                tracing::warn!(
                    max = self.bounds.max_connections,
                    "connection refused: too many open connections"
                );
                None
            }
        }
    }
}

/// Closes the HTTP/1.x connection a request came on, whatever hyper has
/// buffered for it (in the request's extensions; not on HTTP/2, where a
/// connection carries other streams).
#[derive(Clone)]
pub(crate) struct ConnHandle(CancellationToken);

impl ConnHandle {
    /// The handle that closes a connection by cancelling `token`.
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self(token)
    }

    /// Drops the connection: the socket is closed, its buffers freed.
    pub(crate) fn close(&self) {
        self.0.cancel();
    }
}
