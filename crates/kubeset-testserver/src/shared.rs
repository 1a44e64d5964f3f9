//! What every replica shares ([`Shared`]): the store, the watch fan-out,
//! the connection bounds, the container runtime and the OpenAPI specs.
//! Plain state, below the router and the handlers that read it.

use std::sync::Arc;
use std::time::Duration;

use crate::conns::Connections;
use crate::fanout::Watches;
use crate::openapi;
use crate::store::Store;
use crate::stream::Runtime;

/// What every replica shares.
pub(crate) struct Shared {
    pub(crate) store: Arc<Store>,
    pub(crate) token: Option<String>,
    pub(crate) bookmark_interval: Duration,
    /// OpenAPI specs read at start, if a directory was given.
    pub(crate) openapi: Option<Arc<openapi::Specs>>,
    /// The simulated container runtime (exec, attach, port-forward), if on.
    pub(crate) runtime: Option<Arc<Runtime>>,
    /// Connection bounds and slots, shared with the admin endpoint.
    pub(crate) conns: Arc<Connections>,
    /// What the watches share (initial states, the open count).
    pub(crate) watches: Arc<Watches>,
}
