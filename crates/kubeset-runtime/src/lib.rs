//! Controller runtime for kubeset: what a controller needs beyond CRUD.
//!
//! - [`watcher()`]: a stream of [`Event`]s that never loses a change across
//!   disconnects, expired versions (410) and server restarts; an object that
//!   does not decode is reported ([`WatcherError::Decode`]: namespace, name,
//!   resourceVersion, serde path and reason) and skipped, never a stall.
//! - [`store`]: a cache of `Arc<K>` keyed by namespace/name with indexers,
//!   fed by a [`reflector`](store::reflector); swaps whole states atomically.
//!   [`shared`]: one watch and store per kind and selectors for many users.
//! - [`controller`]: reconcile over a deduplicating priority work queue
//!   (changes first, aging so nothing starves) with per-key backoff,
//!   bounded concurrency, debounce, reconcile timeout, predicates and
//!   graceful shutdown; [`Controller::run`] is a stream of results.
//! - [`memory`]: what a cache costs (estimated bytes per object) and a
//!   [`MemoryBudget`] that stops a cache before the OOM killer does.
//! - [`finalizer()`], [`events`] (feature `events`), [`status`]
//!   (conditions), [`ObjectRef`], [`predicates`], [`metrics`] (feature
//!   `metrics`).
//! - [`leader`] (feature `leader`): leader election on a
//!   `coordination.k8s.io/v1` Lease with client-go's semantics, and warm
//!   standby ([`Controller::leader_elected`]: caches synced on every
//!   replica, only reconciling gated on the Lease).
//! - [`shard`] (feature `shard`): a controller's objects split across
//!   replicas by shard Leases, at most one reconciler per object.
//! - [`webhook`] (feature `webhook`): validating and mutating admission
//!   webhooks, typed per kind and operation, and CRD conversion webhooks
//!   (a hub version and its spokes), served over TLS from certificate
//!   files reloaded without a failed request.
//!
//! # Features
//!
//! None is on by default, and the runtime turns on no group-version of
//! the models: `kubeset` with `default-features = false, features =
//! ["runtime", "core-v1"]` builds only `core/v1` (and what it needs).
//! The features of this crate have the same names as the `kubeset`
//! features that turn them on, so rustc's "item is gated behind the `X`
//! feature" note names the `kubeset` feature to enable:
//!
//! | `kubeset` feature | gives | turns on |
//! |---|---|---|
//! | `runtime` | this crate without the items below | nothing |
//! | `leader` | [`leader`], [`LeaderElector`] | `coordination-v1` |
//! | `events` | [`events`] | `events-v1`, `core-v1` |
//! | `metrics` | [`metrics::Metrics`], `metrics::prometheus_client` | the `prometheus-client` crate |
//! | `shard` | [`shard`]: controllers sharded across replicas on Leases | `leader` |
//! | `webhook` | [`webhook`]: a typed admission and conversion webhook server over TLS; its certificate from files or a Secret (reloaded when they change) or self-managed (a CA and leaf renewed before expiry, `caBundle` re-registered); `caBundle` registration | `admissionregistration-v1`, `apiextensions-v1`, `core-v1` (the Secret); hyper's server, tokio-rustls, rcgen, time |
//!
//! # Porting from kube-rs
//!
//! Names and shapes follow kube-rs (`kube` 5, `kube-runtime`), so that a
//! kube-rs operator ports mostly by changing `kube::` to `kubeset::`.
//! Where client-go's behaviour is better, kubeset follows client-go and the
//! table says so.
//!
//! | kube-rs | kubeset | difference |
//! |---|---|---|
//! | `kube::ResourceExt` (`name_any`, `name_unchecked`, `namespace`, `resource_version`, `uid`, `labels(_mut)`, `annotations(_mut)`, `finalizers(_mut)`, `owner_references(_mut)`, `managed_fields(_mut)`, `creation_timestamp`) | `kubeset::ResourceExt` | same |
//! | `Resource::{meta, meta_mut, object_ref(&()), controller_owner_ref(&()), owner_ref(&()), kind(&()), plural(&()), url_path(&(), ns)}` | `Resource::{object_ref(&()), controller_owner_ref(&()), owner_ref(&()), kind(&()), …}`, `ResourceExt::{meta, meta_mut}` | the argument is always `&()` (kinds are static; no `Resource<DynamicType = …>` bound); `object_ref` needs `core-v1` |
//! | `Api::get_opt`, `Api::entry`, `api::entry::{Entry, OccupiedEntry, VacantEntry, CommitError}` | `Api::get_opt`, `Api::entry`, `kubeset::{Entry, …, CommitError}` | plus `Api::modify`: client-go's `RetryOnConflict` around get/mutate/replace |
//! | `runtime::watcher(api, watcher::Config)`, `watcher::Event::{Init, InitApply, InitDone, Apply, Delete}`, `watcher::Error` | [`watcher()`], [`watcher::Config`] (= [`WatcherConfig`]), [`Event`], [`watcher::Error`] (= [`WatcherError`]) | undecodable objects are skipped and reported (client-go's behaviour), not a stream error that restarts the watch |
//! | `runtime::metadata_watcher` | [`metadata_watcher`] | same |
//! | `runtime::reflector::{reflector, store(), Store, ObjectRef, store::Writer}` | [`reflector::{reflector, store(), Store, ObjectRef, store::Writer}`](mod@reflector) | `ObjectRef` derefs to an [`ObjectKey`] (`r.name`, `r.namespace`); `Store::get` takes either; `reflector` yields the cached `Arc<K>`s |
//! | `runtime::WatchStreamExt::{applied_objects, touched_objects, predicate_filter, default_backoff, modify}`, `watcher::Event::modify`, `watcher::Config::{labels, fields, timeout, page_size, any_semantic, streaming_lists}`, `runtime::predicates::{generation, labels, annotations, finalizers, resource_version}`, `Predicate::{combine, fallback}` | [`WatchStreamExt`], [`predicates`], [`WatcherConfig`] | same; `default_backoff` returns the stream as is (the watcher backs off itself); also [`Controller::with_predicate`] on the primary kind |
//! | `Controller::{new, for_stream, owns, owns_stream, watches, watches_stream, reconcile_on, reconcile_all_on, graceful_shutdown_on, shutdown_on_signal, with_config, store}` | [`Controller`] | `new` takes an `Api` and a [`WatcherConfig`]; `watches` mappers take `O` by value (as kube-rs's; moved, not cloned) and return `ObjectRef<K>`s (the kind inferred) or `ObjectKey`s; plus [`Controller::for_shared`] |
//! | `Controller::run(reconcile, error_policy, ctx) -> Stream<Result<(ObjectRef, Action), controller::Error>>` | [`Controller::run`] | same shape; [`controller::Error`] has named fields (`ReconcilerFailed { object, source }`, `QueueError { source }`); deleted objects' keys are dropped, not reported as `ObjectNotFound` |
//! | `controller::Action::{requeue, await_change}` | [`Action`] | plus [`Action::backoff`]: client-go's per-key exponential requeue ([`RetryBackoff`], 5 ms doubling to 1000 s), and [`Action::with_priority`] (controller-runtime's `Result.Priority`) |
//! | `controller::Config::{concurrency, debounce}` | [`Config`] | same; plus `aging` and `reconcile_timeout` (controller-runtime's `ReconciliationTimeout`) |
//! | (none; controller-runtime's priority queue) | [`Priority`], [`WorkQueue`] | changes before initial-list keys before resyncs, as controller-runtime; plus aging, so nothing starves |
//! | (none) | [`MemoryBudget`], [`Store::memory`], [`memory`] | a cache counts its estimated bytes and stops at a budget instead of meeting the OOM killer |
//! | `runtime::finalizer::{finalizer, Event::{Apply, Cleanup}, Error}` | [`finalizer::{finalizer, Event, Error}`](mod@finalizer) | same state machine and `test`-guarded JSON patches; the same error variants and messages (`ApplyFailed(e)`: `failed to apply object: {e}`) |
//! | `runtime::events::{Recorder, Reporter, Event, EventType}`, `Recorder::publish(&ev, &reference)`, `Reporter::from("name")` | [`events`] | client-go's series key, 6-minute series window and per-object spam filter (25, then 1 per 5 min); core/v1 fallback |
//! | `runtime::wait::{await_condition, conditions}` | `wait` module (issue 16) | — |
//! | (none; controller-runtime's `meta.SetStatusCondition`) | [`status::{set_condition, find_condition, is_condition_true, remove_condition}`](status) | apimachinery's rules |
//! | (none, kube-rs#1080 unstable) | [`SharedCaches`], [`SharedCache`] | client-go's `SharedInformerFactory` |
//! | (none; controller-runtime's metrics) | [`metrics`] | controller-runtime's metric names |
//! | (none) | [`leader`] | client-go's `leaderelection` |
//! | `kube::core::admission` types only (a server of your own; certificate rotation is kube-rs#776) | [`webhook`] (feature `webhook`): typed validate/mutate handlers, the JSON patch computed, TLS from files or a Secret reloaded when they change, or self-managed ([`webhook::CertRotator`]: CA overlap in the bundle); conversion through a hub ([`webhook::Conversion`]) | controller-runtime's `webhook.Server` with typed validators/defaulters, `certwatcher`, and `conversion.Hub`/`Convertible`; open-policy-agent/cert-controller's `CertRotator` (replaces CA and bundle at once) |
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
//!     .run_until_shutdown(
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
//! # Flow control
//!
//! The runtime makes no client of its own: its calls go through the
//! `Api`s you give it, so their client's limiter applies. A plain client
//! keeps client-go's static 5 QPS / burst 10; for a controller, build the
//! client with `RestConfig::with_adaptive_flow_control()` (kubeset-rest's
//! `rate_limit::AdaptiveLimiter`, no static limiter), as
//! controller-runtime turns its client-side limiter off since v0.21: the
//! server's API Priority and Fairness decides, and the limiter follows its
//! 429s, `Retry-After` and priority levels. Keep a static limiter
//! (`with_rate_limiter`) only as a safety net.
//!
//! # Paying only for what is read
//!
//! A [`projection!`](crate::projection!) of a kind caches only the fields you declare, a
//! [`StoreConfig::transform`] changes objects before they are stored, and
//! [`StoreConfig::drop_managed_fields`] drops `managedFields`; see
//! [the module](mod@projection).
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
//!
// The items of features that are off: their links go to the feature table
// (rustdoc of a build without them, e.g. `kubeset` without `leader`).
#![cfg_attr(
    not(feature = "leader"),
    doc = "\n[`leader`]: #features\n[`LeaderElector`]: #features\n[`Controller::leader_elected`]: #features"
)]
#![cfg_attr(not(feature = "events"), doc = "\n[`events`]: #features")]
#![cfg_attr(not(feature = "metrics"), doc = "\n[`metrics::Metrics`]: #features")]
#![cfg_attr(not(feature = "shard"), doc = "\n[`shard`]: #features")]
#![cfg_attr(
    not(feature = "webhook"),
    doc = "\n[`webhook`]: #features\n[`webhook::Conversion`]: #features\n[`webhook::CertRotator`]: #features"
)]

pub mod controller;
#[cfg(feature = "events")]
pub mod events;
pub mod finalizer;
#[cfg(feature = "leader")]
pub mod leader;
pub mod memory;
pub mod metadata;
pub mod metrics;
pub mod object_ref;
pub mod predicates;
pub mod projection;
mod queue;
#[cfg(feature = "shard")]
pub mod shard;
// The gate of shards and of leadership (its one-shard case), below both;
// its public items are `shard`'s.
#[cfg(feature = "leader")]
mod gate;
pub mod shared;
pub mod status;
pub mod store;
pub mod wait;
pub mod watcher;
#[cfg(feature = "webhook")]
pub mod webhook;

/// kube-rs's `kube::runtime::reflector` paths: `reflector::store` is both
/// the module (`reflector::store::Writer`) and the function
/// (`reflector::store()`), as there.
pub mod reflector {
    pub use crate::object_ref::ObjectRef;
    pub use crate::store::{self, Store, reflector, store};
}

/// kube-rs's `kube::runtime::utils` paths: the stream adapters.
pub mod utils {
    pub use crate::predicates::{self, Predicate, WatchStreamExt};
}

pub use controller::{Action, Config, Controller, Priority, RetryBackoff, WorkQueue};
pub use finalizer::finalizer;
/// The watcher's backoff ([`WatcherConfig::backoff`]): kubeset-rest's,
/// which its resumable watch uses too.
pub use kubeset_client::rest::backoff::Backoff;
#[cfg(all(feature = "leader", feature = "metrics"))]
pub use leader::LeaderMetrics;
#[cfg(feature = "leader")]
pub use leader::{LeaderElector, LeaderError, LeaseConfig};
pub use memory::MemoryBudget;
pub use metadata::PartialObjectMetadata;
pub use object_ref::ObjectRef;
pub use predicates::{Predicate, WatchStreamExt};
pub use shared::{SharedCache, SharedCaches};
pub use store::{ObjectKey, Store, StoreConfig, Writer, WriterDropped, reflector};
pub use watcher::{Event, InitialList, WatcherConfig, WatcherError, metadata_watcher, watcher};
