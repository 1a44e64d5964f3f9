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
//!
//! ```no_run
//! use std::sync::Arc;
//! use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
//! use kubeset_runtime::{Action, Controller, WatcherConfig};
//!
//! # async fn demo(stop: tokio::sync::oneshot::Receiver<()>) -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(client, "default");
//! Controller::new(cms, WatcherConfig::default())
//!     .concurrency(4)
//!     .graceful_shutdown_on(async { let _ = stop.await; })
//!     .run(
//!         |cm: Arc<ConfigMap>, _ctx: Arc<()>| async move {
//!             println!("reconciling {:?}", cm.metadata.name);
//!             Ok::<_, std::convert::Infallible>(Action::await_change())
//!         },
//!         Arc::new(()),
//!     )
//!     .await;
//! # Ok(()) }
//! ```
//!
//! # Architecture invariants
//!
//! - The watcher never ends and never skips: every failure is an `Err` item
//!   followed by a retry from the last resourceVersion it handed out, or a
//!   full relist (`Init` … `InitDone`) when that version is gone.
//! - A store shows either the previous complete state or the new one,
//!   never a half-built relist; its indexes change under the same lock as
//!   its objects.
//! - The controller never runs two reconciles of one key at once and
//!   never drops a trigger that arrives during a reconcile.

pub mod backoff;
pub mod controller;
pub mod leader;
pub mod metadata;
pub mod store;
pub mod wait;
pub mod watcher;

pub use backoff::Backoff;
pub use controller::{Action, Controller, RetryBackoff, WorkQueue};
pub use leader::{LeaderElector, LeaderError, LeaseConfig};
pub use metadata::PartialObjectMetadata;
pub use store::{ObjectKey, Store, StoreConfig, Writer, reflector};
pub use watcher::{Event, InitialList, WatcherConfig, WatcherError, metadata_watcher, watcher};
