//! Controller runtime for kubeset: what a controller needs beyond CRUD.
//!
//! - [`watcher()`]: a stream of [`Event`]s that never loses a change across
//!   disconnects, expired versions (410) and server restarts.
//! - [`store`]: a cache of `Arc<K>` keyed by namespace/name with indexers,
//!   fed by a [`reflector`](store::reflector); swaps whole states atomically.
//! - [`controller`]: reconcile over a deduplicating work queue with
//!   per-key backoff, bounded concurrency and graceful shutdown.
//! - [`leader`]: leader election on a `coordination.k8s.io/v1` Lease with
//!   client-go's semantics.

pub mod backoff;
pub mod controller;
pub mod leader;
pub mod metadata;
pub mod store;
pub mod watcher;

pub use backoff::Backoff;
pub use controller::{Action, Controller, RetryBackoff, WorkQueue};
pub use leader::{LeaderElector, LeaderError, LeaseConfig};
pub use metadata::PartialObjectMetadata;
pub use store::{ObjectKey, Store, StoreConfig, Writer, reflector};
pub use watcher::{Event, InitialList, WatcherConfig, WatcherError, metadata_watcher, watcher};
