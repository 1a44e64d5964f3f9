//! Controllers sharded across replicas on `coordination.k8s.io/v1` Leases
//! (feature `shard`).
//!
//! The objects of a kind are split into a fixed number of virtual shards
//! (default [`DEFAULT_SHARDS`], 64) by the 64-bit FNV-1a hash of
//! `metadata.uid` — the hash the API server's `shardSelector`
//! (`shardRange(object.metadata.uid, '0x…', '0x…')`, KEP-5866, alpha in
//! Kubernetes 1.36) computes, so a server-side filter and this one agree
//! ([`uid_hash`], [`shard_selector`]). Each shard is guarded by a Lease
//! `<group>-shard-<i>`; each live replica heartbeats a membership Lease
//! `<group>-member-<identity>`; all carry the label
//! [`GROUP_LABEL`]`=<group>`. A [`Sharder`] lists its group's Leases
//! every `retry_period`, computes the owner of every shard
//! among the live members by rendezvous hashing with bounded loads (no
//! member owns more than `ceil(shards / members)`, so loads differ by at
//! most one; a join or leave moves about the share that must move), renews the
//! shards it owns, releases the ones it no longer owns and acquires the
//! ones it owns that are free or expired. The Lease writes are those of
//! [`LeaderElector`](crate::LeaderElector) (compare-and-swap on the
//! resourceVersion read; expiry as observed locally, the holder's clock
//! never trusted).
//!
//! [`Controller::sharded`](crate::Controller::sharded) makes a controller
//! reconcile only objects (and, through `owns`/`watches`, the parents of
//! children) whose shard this replica holds.
//!
//! # At most one reconciler per object
//!
//! Let `D` be the lease duration, `R` the renew deadline, `P` the retry
//! period and `ε` the largest difference between the replicas' clock
//! *rates* over one `D` (monotonic clocks; wall clocks are never compared).
//!
//! - A replica takes the instant `t` *before* it reads the Leases; a write
//!   based on that read succeeds only if no one wrote the Lease since (the
//!   resourceVersion), so it lands after `t`. After a successful write the
//!   replica may reconcile the shard until `t + R` ([`ShardGate`]), and
//!   the gate closes at that instant by itself, whether or not the loop
//!   runs. Each reconcile runs inside a [`Fence`] that checks the gate
//!   before every poll: when the deadline passes or the shard is revoked,
//!   the reconcile's future is dropped at its next poll and never polled
//!   again.
//! - Another replica takes over an unreleased shard only after it has
//!   seen the Lease's record unchanged for `D` on its own clock, counted
//!   from when it first saw the record — after the write, so after `t`.
//!   It starts no earlier than `t + D·(1 − ε)`.
//! - So the old holder has stopped before the new one starts when
//!   `R + c < D·(1 − ε)`, where `c` is how long a reconcile's last step
//!   can keep running before its next poll (the request already sent).
//!   The defaults (`D` 15 s, `R` 10 s, `P` 2 s) leave 5 s for `c` and
//!   the skew; [`ShardConfig::validate`] refuses `R ≥ D`.
//! - A hand-off on rebalance is a release: the holder revokes the shard
//!   locally, waits for its running reconciles to be dropped (at most
//!   until its own deadline), and only then writes an empty holder, which
//!   the new owner may acquire at once. If they do not drain, it does not
//!   release, and the Lease expires as above.
//!
//! A request already on the wire when its reconcile is cancelled can
//! still reach the API server: Leases do not fence writes. Reconciles that
//! write with the resourceVersion they read (or server-side apply with a
//! field manager per controller, not per replica) stay correct even then.
//!
//! # Load on the API server
//!
//! Per replica and retry period: one LIST of the group's Leases (label
//! [`GROUP_LABEL`]) and one membership heartbeat; per held shard, one
//! compare-and-swap write whenever less than half the renew deadline
//! (at least two retry periods) is left. With 64 shards and the defaults a
//! replica holding all of them writes about 13 times a second, more than
//! client-go's default client-side limit (5 requests/s, burst 10) allows:
//! give the sharder a client with a higher limit
//! (`RestConfig::with_qps_burst`), or fewer shards. A throttled renewal
//! is safe (the shard lapses locally at its deadline) but moves shards.
//!
//! # Filtering and warm standby
//!
//! Two places can filter, chosen per controller by [`ShardFilter`] in
//! [`Controller::new_sharded`](crate::Controller::new_sharded):
//!
//! - **Client-side** ([`ShardFilter::Client`], and
//!   [`Controller::sharded`](crate::Controller::sharded) on any
//!   controller): every replica's cache holds **every** object of the kind
//!   and the watches are not narrowed; only reconciles are filtered. That
//!   is what makes a standby warm: a replica without shards keeps its
//!   cache synced, so taking a shard over costs the Lease expiry, not a
//!   relist.
//! - **Server-side** ([`ShardFilter::Server`]): the list and watch carry
//!   `shardSelector` ([`shard_selector`]) for the shards held and are
//!   reopened (one relist of the held shards) whenever that set changes,
//!   so each replica caches about `1/N` of the objects; a shard taken over
//!   is listed then (a cold standby for it). Kubernetes 1.36+ with the
//!   alpha feature gate `ShardedListAndWatch` on; the API server hashes
//!   with the same FNV-1a of the uid ([`uid_hash`]), so both filters put
//!   every object in the same shard. The reconcile gate stays: a list
//!   or watch event never lets a replica reconcile outside its shards.
//! - [`ShardFilter::Auto`] (the default) probes once ([`server_filters`]:
//!   a one-object list with a selector of the whole hash space answered
//!   with `metadata.shardInfo`) and picks the server when it filters. A
//!   server without the feature ignores the parameter (1.36 with the gate
//!   off, 1.35 and earlier alike) rather than refusing it, so a probe is
//!   the only way to tell.
//!
//! [`Sharder::ready_after`] delays joining (the membership Lease) until
//! the cache has synced, so shards only go to replicas whose cache is
//! ready; [`Sharder::ready`] says when this replica is ready and a member.
//!
//! ```no_run
//! use std::sync::Arc;
//! use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
//! use kubeset_runtime::shard::{ShardConfig, Sharder};
//! use kubeset_runtime::{Action, Controller, WatcherConfig};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default().await?;
//! let sharder = Sharder::new(client.clone(), ShardConfig::new("default", "greeter", "pod-a"))?;
//! let controller = Controller::new(Api::<ConfigMap>::namespaced(client, "default"), WatcherConfig::default())
//!     .sharded(sharder.gate());
//! let store = controller.store();
//! let sharder = sharder.ready_after(async move { store.wait_until_ready().await.unwrap_or(()) });
//! tokio::spawn(sharder.run(std::future::pending()));
//! controller
//!     .run_until_shutdown(
//!         |_cm: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, std::convert::Infallible>(Action::await_change()) },
//!         Arc::new(()),
//!     )
//!     .await;
//! # Ok(()) }
//! ```

mod filter;
mod sharder;

pub use crate::gate::hash::{shard_of, shard_range, shard_selector, uid_hash};
#[cfg(feature = "metrics")]
pub use crate::gate::metrics::ShardMetrics;
pub use crate::gate::{Fence, ShardGate};
pub(crate) use filter::sharded_watcher;
pub use filter::{ShardFilter, server_filters};
pub use sharder::{GROUP_LABEL, MAX_SHARDS, ShardConfig, ShardError, Sharder};

/// The number of virtual shards unless configured.
pub const DEFAULT_SHARDS: u32 = 64;
