//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
//! semantics.
//!
//! - A candidate acquires the Lease when it does not exist, has no holder,
//!   or its record has not changed for `lease_duration` **as observed
//!   locally** (the holder's clock is never trusted).
//! - The leader renews every `retry_period`; a failed renew (conflict,
//!   error, timeout) is retried every `retry_period`, and only if no renew
//!   succeeds within `renew_deadline` does it stop leading (before anyone
//!   else may acquire, as `renew_deadline < lease_duration`).
//! - On shutdown the leader releases the Lease (empty holder, duration 1 s)
//!   so another candidate takes over at once.
//! - Writes are compare-and-swap on `resourceVersion`: a conflict is a lost
//!   race, never two leaders.
//!
//! Leadership is published on a `tokio::sync::watch` channel
//! ([`LeaderElector::subscribe`]): `true` while leading.
//!
//! # Warm standby
//!
//! [`Controller::leader_elected`](crate::Controller::leader_elected) runs
//! a controller under an elector in one call, as controller-runtime's
//! warm replicas (v0.22) do: the watches and the cache run from the start
//! on every replica, and **only reconciling** waits for leadership. The
//! elector campaigns only once the controller's cache has synced
//! ([`LeaderElector::ready_after`], [`LeaderElector::warm`]), so a cold
//! replica never wins; keys that come up while not leading are dropped
//! and, on acquiring, every key of the (warm) cache is queued at once.
//! Taking over costs the Lease expiry, not a relist.
//!
//! Leadership is the one-shard case of the sharder's gate
//! (`shard::ShardGate`, built without the feature `shard` too, unexported
//! then): the same fences cancel running reconciles, with the same timing
//! argument. Let `D` be the lease
//! duration, `R` the renew deadline and `ε` the largest difference of the
//! candidates' clock rates over one `D`:
//!
//! - The elector takes the instant `t` **before** it reads the Lease; the
//!   compare-and-swap write based on that read lands after `t`. After a
//!   successful write, reconciles may start or run until `t + R`; the gate
//!   closes at that instant by itself, whether or not the elector's loop
//!   runs (a stalled task, a renew stuck in a slow request). Every
//!   reconcile runs inside a fence checked before each poll: after the
//!   deadline, or once the elector stops leading, it is dropped at its
//!   next poll.
//! - Another candidate takes the Lease over only after seeing its record
//!   unchanged for `D` on its own clock, counted from the first time it
//!   saw it — after the write, so after `t`: no earlier than
//!   `t + D·(1 − ε)`.
//! - So the old leader's reconciles have stopped before the new leader's
//!   start when `R + c < D·(1 − ε)`, `c` being how long a reconcile's last
//!   step runs before its next poll. client-go's defaults (`D` 15 s,
//!   `R` 10 s) leave 5 s for `c` and the skew.
//! - On shutdown the elector stops the gate, waits for the fences to drop
//!   (at most until its deadline) and only then releases the Lease; if
//!   they did not drop, it lets the Lease expire instead.
//!
//! As with shards, a request already on the wire when its reconcile is
//! cancelled can still reach the API server: write with the
//! resourceVersion you read, or server-side apply with one field manager
//! per controller.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kubeset_client::api::coordination::v1::{Lease, LeaseSpec};
use kubeset_client::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kubeset_client::params::PostParams;
use kubeset_client::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::gate::ShardGate;

/// Settings of a [`LeaderElector`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct LeaseConfig {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This candidate's identity (unique per process, e.g. the pod name).
    pub identity: String,
    /// How long a Lease is valid after its last observed change.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before stepping down.
    pub renew_deadline: Duration,
    /// Interval between attempts.
    pub retry_period: Duration,
}

impl LeaseConfig {
    /// client-go's defaults: 15 s lease, 10 s renew deadline, 2 s retry.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        LeaseConfig {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Sets the three durations; they should satisfy
    /// `lease_duration > renew_deadline > retry_period`.
    pub fn durations(mut self, lease: Duration, renew_deadline: Duration, retry: Duration) -> Self {
        self.lease_duration = lease;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry;
        self
    }
}

/// Why a Lease operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// Reading or writing the Lease failed.
    #[error("lease {namespace}/{name}: {action} failed: {source}")]
    Api {
        /// Namespace of the Lease.
        namespace: String,
        /// Name of the Lease.
        name: String,
        /// What was attempted (`get`, `create`, `update`).
        action: &'static str,
        /// The request layer's error.
        #[source]
        source: kubeset_client::Error,
    },
    /// The API server did not answer in time.
    #[error("lease {namespace}/{name}: {action} timed out after {after:?}")]
    Timeout {
        /// Namespace of the Lease.
        namespace: String,
        /// Name of the Lease.
        name: String,
        /// What was attempted.
        action: &'static str,
        /// The time allowed.
        after: Duration,
    },
}

/// The parts of a Lease record whose change proves the holder is alive.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: Option<String>,
    renew_time: Option<String>,
    acquire_time: Option<String>,
    transitions: Option<i32>,
    resource_version: Option<String>,
}

impl Record {
    fn of(lease: &Lease) -> Self {
        let spec = lease.spec.as_ref();
        Record {
            holder: spec
                .and_then(|s| s.holder_identity.clone())
                .filter(|h| !h.is_empty()),
            renew_time: spec.and_then(|s| s.renew_time.map(|t| t.to_string())),
            acquire_time: spec.and_then(|s| s.acquire_time.map(|t| t.to_string())),
            transitions: spec.and_then(|s| s.lease_transitions),
            resource_version: lease.metadata.resource_version.clone(),
        }
    }
}

type Warmup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A candidate for leadership of one Lease.
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaseConfig,
    observed: Option<(Record, Instant)>,
    leading: watch::Sender<bool>,
    /// Labels written on the Lease (the shards' group, to list them).
    labels: Option<(String, String)>,
    /// Open while leading ([`run`](Self::run)): the one-shard case of the
    /// sharder's gate, until `R` after the read of the last good write.
    gate: ShardGate,
    /// What must complete before campaigning (the cache's sync); in a
    /// mutex only so that the elector stays `Sync` (never contended).
    ready_after: Option<std::sync::Mutex<Warmup>>,
    /// `true` once `ready_after` completed.
    warm: watch::Sender<bool>,
    #[cfg(feature = "metrics")]
    metrics: Option<LeaderMetrics>,
}

impl fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .field("leading", &*self.leading.borrow())
            .finish_non_exhaustive()
    }
}

fn seconds_ceil(d: Duration) -> i32 {
    let secs = d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0));
    i32::try_from(secs.max(1)).unwrap_or(i32::MAX)
}

impl LeaderElector {
    /// A candidate using `client`.
    pub fn new(client: Client, config: LeaseConfig) -> Self {
        let api = Api::namespaced(client, &config.namespace);
        let (leading, _) = watch::channel(false);
        LeaderElector {
            api,
            config,
            observed: None,
            leading,
            labels: None,
            gate: ShardGate::new(1),
            ready_after: None,
            warm: watch::channel(false).0,
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// Campaigns only once `warm` completes, e.g. the cache's
    /// `store.wait_until_ready()`, so a replica whose cache is cold never
    /// wins ([`Controller::leader_elected`](crate::Controller::leader_elected)
    /// sets this for its primary cache). Several calls: all must complete.
    ///
    /// ```no_run
    /// # async fn f(client: kubeset_client::Client, store: kubeset_runtime::Store<kubeset_client::api::core::v1::ConfigMap>) {
    /// use kubeset_runtime::{LeaderElector, LeaseConfig};
    /// let elector = LeaderElector::new(client, LeaseConfig::new("default", "my-controller", "pod-a"))
    ///     .ready_after(async move { store.wait_until_ready().await.unwrap_or(()) });
    /// let mut warm = elector.warm();
    /// tokio::spawn(elector.run(std::future::pending()));
    /// let _ = warm.wait_for(|w| *w).await; // a readiness probe may pass now
    /// # }
    /// ```
    #[must_use]
    pub fn ready_after(mut self, warm: impl Future<Output = ()> + Send + 'static) -> Self {
        let before = self.ready_after.take().map(|b| {
            b.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        self.ready_after = Some(std::sync::Mutex::new(match before {
            None => Box::pin(warm),
            Some(before) => Box::pin(async move {
                futures::future::join(before, warm).await;
            }),
        }));
        self
    }

    /// `true` once this replica is warm: what [`ready_after`](Self::ready_after)
    /// waits for has completed (at once without it) and
    /// [`run`](Self::run) campaigns. A readiness signal: a warm standby
    /// takes over in a Lease expiry.
    pub fn warm(&self) -> watch::Receiver<bool> {
        self.warm.subscribe()
    }

    /// Records leadership and warmth into `metrics`.
    #[cfg(feature = "metrics")]
    #[must_use]
    pub fn with_metrics(mut self, metrics: LeaderMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The gate reconciles run through while this candidate leads (see the
    /// module docs).
    pub(crate) fn gate(&self) -> ShardGate {
        self.gate.clone()
    }

    /// Writes the label `key=value` on the Lease (on create, and on the
    /// next update of a Lease without it).
    #[cfg(feature = "shard")]
    pub(crate) fn with_label(mut self, key: &str, value: &str) -> Self {
        self.labels = Some((key.to_owned(), value.to_owned()));
        self
    }

    fn label(&self, metadata: &mut ObjectMeta) {
        if let Some((k, v)) = &self.labels {
            let labels = metadata.labels.get_or_insert_with(Default::default);
            if labels.get(k) != Some(v) {
                labels.insert(k.clone(), v.clone());
            }
        }
    }

    /// `true` while this candidate leads; changes on start and stop.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.leading.subscribe()
    }

    /// Whether this candidate currently leads.
    pub fn is_leader(&self) -> bool {
        *self.leading.borrow()
    }

    /// The settings.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    fn err(&self, action: &'static str, source: kubeset_client::Error) -> LeaderError {
        LeaderError::Api {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            action,
            source,
        }
    }

    async fn bounded<T>(
        &self,
        action: &'static str,
        fut: impl Future<Output = Result<T, kubeset_client::Error>>,
    ) -> Result<Result<T, kubeset_client::Error>, LeaderError> {
        let after = self.config.renew_deadline.max(Duration::from_millis(100));
        tokio::time::timeout(after, fut)
            .await
            .map_err(|_| LeaderError::Timeout {
                namespace: self.config.namespace.clone(),
                name: self.config.name.clone(),
                action,
                after,
            })
    }

    fn spec(&self, previous: Option<&LeaseSpec>) -> LeaseSpec {
        let now = MicroTime::now();
        let mine = previous
            .and_then(|s| s.holder_identity.as_deref())
            .is_some_and(|h| h == self.config.identity);
        // client-go: every change of holder (a released Lease has none)
        // is a transition; a new Lease starts at 0.
        let transitions = match previous {
            None => 0,
            Some(s) if mine => s.lease_transitions.unwrap_or(0),
            Some(s) => s.lease_transitions.unwrap_or(0).saturating_add(1),
        };
        LeaseSpec {
            holder_identity: Some(self.config.identity.clone()),
            lease_duration_seconds: Some(seconds_ceil(self.config.lease_duration)),
            acquire_time: if mine {
                previous.and_then(|s| s.acquire_time)
            } else {
                Some(now)
            },
            renew_time: Some(now),
            lease_transitions: Some(transitions),
            ..previous.cloned().unwrap_or_default()
        }
    }

    /// One attempt: create, take over or renew the Lease. `Ok(true)` when
    /// this candidate holds it afterwards.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, LeaderError> {
        let got = self
            .bounded("get", self.api.get_opt(&self.config.name))
            .await?;
        let current = got.map_err(|e| self.err("get", e))?;
        self.acquire_or_renew_from(current).await
    }

    /// Records `lease` (read by someone else, e.g. a list) as observed now
    /// if its record changed, so that its expiry counts from the first
    /// time this candidate saw it, not from the first time it wanted it.
    #[cfg(feature = "shard")]
    pub(crate) fn observe(&mut self, lease: &Lease) {
        let record = Record::of(lease);
        if self
            .observed
            .as_ref()
            .is_none_or(|(seen, _)| *seen != record)
        {
            self.observed = Some((record, Instant::now()));
        }
    }

    /// Whether the observed record names a holder other than this
    /// candidate that has not expired (as observed locally).
    #[cfg(feature = "shard")]
    pub(crate) fn held_by_other(&self) -> bool {
        self.observed.as_ref().is_some_and(|(record, at)| {
            record
                .holder
                .as_deref()
                .is_some_and(|h| h != self.config.identity)
                && *at + self.config.lease_duration > Instant::now()
        })
    }

    /// [`try_acquire_or_renew`](Self::try_acquire_or_renew) on a Lease
    /// already read (`None`: it does not exist); the write is a
    /// compare-and-swap on the read's resourceVersion.
    pub(crate) async fn acquire_or_renew_from(
        &mut self,
        current: Option<Lease>,
    ) -> Result<bool, LeaderError> {
        let now = Instant::now();
        let Some(lease) = current else {
            let mut metadata = ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..ObjectMeta::default()
            };
            self.label(&mut metadata);
            let lease = Lease {
                metadata,
                spec: Some(self.spec(None)),
            };
            let created = self
                .bounded("create", self.api.create(&PostParams::default(), &lease))
                .await?;
            return match created {
                Ok(created) => {
                    self.observed = Some((Record::of(&created), now));
                    Ok(true)
                }
                Err(e) if e.is_already_exists() || e.is_conflict() => Ok(false),
                Err(e) => Err(self.err("create", e)),
            };
        };
        let record = Record::of(&lease);
        let observed_at = match &self.observed {
            Some((seen, at)) if *seen == record => *at,
            _ => {
                self.observed = Some((record.clone(), now));
                now
            }
        };
        let mine = record.holder.as_deref() == Some(self.config.identity.as_str());
        if record.holder.is_some() && !mine && observed_at + self.config.lease_duration > now {
            return Ok(false);
        }
        let mut metadata = lease.metadata;
        self.label(&mut metadata);
        let updated = Lease {
            spec: Some(self.spec(lease.spec.as_ref())),
            metadata,
        };
        match self.replace(&updated).await? {
            Some(new) => {
                self.observed = Some((Record::of(&new), Instant::now()));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Writes `lease` over the stored one: the stored Lease, or `None`
    /// when another candidate wrote it first (a conflict) or it is gone.
    async fn replace(&self, lease: &Lease) -> Result<Option<Lease>, LeaderError> {
        let put = self
            .bounded(
                "update",
                self.api
                    .replace(&self.config.name, &PostParams::default(), lease),
            )
            .await?;
        match put {
            Ok(new) => Ok(Some(new)),
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(None),
            Err(e) => Err(self.err("update", e)),
        }
    }

    /// Gives the Lease up if this candidate holds it: empty holder, so the
    /// next candidate acquires without waiting.
    pub async fn release(&mut self) -> Result<(), LeaderError> {
        let got = self
            .bounded("get", self.api.get_opt(&self.config.name))
            .await?;
        match got.map_err(|e| self.err("get", e))? {
            Some(lease) => self.release_from(lease).await,
            None => Ok(()),
        }
    }

    /// [`release`](Self::release) of a Lease already read.
    pub(crate) async fn release_from(&mut self, lease: Lease) -> Result<(), LeaderError> {
        let spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        let now = MicroTime::now();
        let released = Lease {
            spec: Some(LeaseSpec {
                holder_identity: None,
                lease_duration_seconds: Some(1),
                acquire_time: Some(now),
                renew_time: Some(now),
                ..spec
            }),
            metadata: lease.metadata,
        };
        // Released, or another candidate holds it now: either is done.
        self.replace(&released).await.map(drop)
    }

    fn jittered_retry(&self) -> Duration {
        // client-go: JitterUntil(retryPeriod, 1.2).
        let r: f64 = rand::random();
        self.config.retry_period + self.config.retry_period.mul_f64(1.2 * r)
    }

    fn set_leading(&self, on: bool) {
        self.leading.send_if_modified(|v| {
            let changed = *v != on;
            *v = on;
            changed
        });
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.metrics {
            m.leading(&self.config.name, on);
        }
    }

    fn set_warm(&self) {
        self.warm.send_replace(true);
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.metrics {
            m.warm(&self.config.name, &self.config.identity);
            m.leading(&self.config.name, self.is_leader());
        }
    }

    /// One attempt as [`try_acquire_or_renew`](Self::try_acquire_or_renew);
    /// on success the gate stays open until `R` after the instant taken
    /// before the read. Returns that instant when it succeeded.
    async fn attempt(&mut self) -> Option<Instant> {
        let t = Instant::now();
        match self.try_acquire_or_renew().await {
            Ok(true) => {
                self.gate.extend(0, t + self.config.renew_deadline);
                Some(t)
            }
            Ok(false) => None,
            Err(e) => {
                tracing::debug!(error = %e, "acquiring or renewing the lease failed");
                None
            }
        }
    }

    /// Stops reconciling now: running reconciles are cancelled at their
    /// next poll.
    fn stop_leading(&self) {
        self.gate.revoke(0);
        self.set_leading(false);
    }

    /// Waits until the controller is warm (if asked), then campaigns,
    /// leads and renews until `shutdown` completes. Losing the Lease (no
    /// renew within the deadline) closes the gate, publishes `false` and
    /// campaigns again. On shutdown while leading it closes the gate,
    /// waits for running reconciles to be dropped (at most until its
    /// deadline) and then releases the Lease (else lets it expire).
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        if let Some(warm) = self.ready_after.take() {
            let warm = warm
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            tokio::select! {
                () = &mut shutdown => return,
                () = warm => {}
            }
        }
        self.set_warm();
        loop {
            // Campaign.
            let mut last_renew = loop {
                if let Some(t) = self.attempt().await {
                    break t;
                }
                tokio::select! {
                    () = &mut shutdown => return,
                    () = tokio::time::sleep(self.jittered_retry()) => {}
                }
            };
            tracing::info!(identity = %self.config.identity, lease = %self.config.name, "started leading");
            self.set_leading(true);
            // Lead: renew every retry period until the deadline passes.
            loop {
                tokio::select! {
                    () = &mut shutdown => return self.step_down(last_renew).await,
                    () = tokio::time::sleep(self.config.retry_period) => {}
                }
                let deadline = last_renew + self.config.renew_deadline;
                // client-go retries a failed renew (a 409 Conflict because
                // someone wrote the Lease, a Lease that reads as held by
                // another, a transport error) every retry period until the
                // renew deadline: one lost compare-and-swap is no reason to
                // stop leading.
                if let Ok(Some(t)) = tokio::time::timeout_at(deadline, self.attempt()).await {
                    last_renew = t;
                }
                if Instant::now() >= last_renew + self.config.renew_deadline {
                    break;
                }
            }
            tracing::info!(identity = %self.config.identity, lease = %self.config.name, "stopped leading");
            self.stop_leading();
        }
    }

    /// Shutdown while leading: stop reconciling, wait for the running
    /// reconciles to be dropped, release.
    async fn step_down(mut self, last_renew: Instant) {
        self.stop_leading();
        let deadline = last_renew + self.config.renew_deadline;
        if !self.gate.drain(0, deadline).await {
            tracing::warn!(lease = %self.config.name, "reconciles still running at the renew deadline; the lease is left to expire");
            return;
        }
        if let Err(e) = self.release().await {
            tracing::warn!(error = %e, "releasing the lease failed");
        }
    }
}

/// `reports` with `elector` running beside it (spawned at the first poll):
/// when `reports` ends or is dropped, the elector is shut down (it stops
/// the gate, waits for reconciles to be dropped and releases the Lease);
/// at the end the stream waits for that.
pub(crate) fn alongside<S>(
    elector: Option<LeaderElector>,
    reports: S,
) -> impl futures::Stream<Item = S::Item> + Send
where
    S: futures::Stream + Send,
    S::Item: Send,
{
    use futures::StreamExt as _;
    let Some(elector) = elector else {
        return reports.left_stream();
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let on_drop = stop.clone().drop_guard();
    futures::stream::once(async move {
        let task = tokio::spawn(elector.run(stop.cancelled_owned()));
        let tail = futures::stream::once(async move {
            drop(on_drop);
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "the leader elector's task failed");
            }
        })
        .filter_map(|()| std::future::ready(None));
        reports.chain(tail)
    })
    .flatten()
    .right_stream()
}

/// Leader election's metrics (feature `metrics`): client-go's
/// `leader_election_master_status` and the warm-replica gauge. Cheap to
/// clone; give them to [`LeaderElector::with_metrics`].
///
/// | metric | type | labels |
/// |---|---|---|
/// | `leader_election_master_status` | gauge (1 leading, 0 not) | `name` (the Lease) |
/// | `controller_runtime_warm_replica` | gauge (1 once the cache synced and the elector campaigns) | `name`, `identity` |
///
/// ```
/// use kubeset_runtime::metrics::prometheus_client::registry::Registry;
/// use kubeset_runtime::leader::LeaderMetrics;
/// let mut registry = Registry::default();
/// let metrics = LeaderMetrics::register(&mut registry);
/// # let _ = metrics;
/// ```
#[cfg(feature = "metrics")]
#[derive(Debug, Clone)]
pub struct LeaderMetrics {
    leading: prometheus_client::metrics::family::Family<
        Vec<(&'static str, String)>,
        prometheus_client::metrics::gauge::Gauge,
    >,
    warm: prometheus_client::metrics::family::Family<
        Vec<(&'static str, String)>,
        prometheus_client::metrics::gauge::Gauge,
    >,
}

#[cfg(feature = "metrics")]
impl LeaderMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut prometheus_client::registry::Registry) -> Self {
        let m = LeaderMetrics {
            leading: Default::default(),
            warm: Default::default(),
        };
        registry.register(
            "leader_election_master_status",
            "Whether this candidate leads the Lease (1) or not (0)",
            m.leading.clone(),
        );
        registry.register(
            "controller_runtime_warm_replica",
            "Whether this replica's cache has synced, so it may take over in a Lease expiry",
            m.warm.clone(),
        );
        m
    }

    fn leading(&self, name: &str, on: bool) {
        self.leading
            .get_or_create(&vec![("name", name.to_owned())])
            .set(i64::from(on));
    }

    fn warm(&self, name: &str, identity: &str) {
        self.warm
            .get_or_create(&vec![
                ("name", name.to_owned()),
                ("identity", identity.to_owned()),
            ])
            .set(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeset_client::rest::{RestClient, RestConfig};

    fn client(url: &str) -> Client {
        let config = RestConfig::new(url.to_owned())
            .with_qps_burst(-1.0, 0)
            .with_request_deadline(Duration::from_secs(5));
        Client::new(RestClient::new(config).expect("client builds"), "default")
    }

    async fn leads(rx: &mut watch::Receiver<bool>, limit: Duration) -> Option<Instant> {
        tokio::time::timeout(limit, rx.wait_for(|l| *l))
            .await
            .ok()?
            .ok()?;
        Some(Instant::now())
    }

    /// The gate's promise, against the embedded server: a leader whose
    /// loop stalls (no renew, no release) has its running reconcile
    /// cancelled by its renew deadline, before another candidate can
    /// acquire the Lease (the lease duration after it first saw the
    /// leader's last record).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reconciles_stop_before_another_candidate_can_lead() {
        let (d, r, p) = (
            Duration::from_secs(3),
            Duration::from_secs(2),
            Duration::from_millis(250),
        );
        let server = kubeset_testserver::TestServer::start()
            .await
            .expect("server starts");
        let url = server.urls()[0].clone();
        let candidate = |id: &str| {
            LeaderElector::new(
                client(&url),
                LeaseConfig::new("default", "gate", id).durations(d, r, p),
            )
        };
        let a = candidate("a");
        let gate = a.gate();
        let mut a_leads = a.subscribe();
        let a_task = tokio::spawn(a.run(std::future::pending()));
        leads(&mut a_leads, Duration::from_secs(10))
            .await
            .expect("a leads");
        let fence = gate
            .admit("some-uid")
            .expect("the gate is open while leading");
        let reconcile = tokio::spawn(async move {
            let out = fence.guard(std::future::pending::<()>()).await;
            (out, Instant::now())
        });
        // Renewals keep it open past one renew deadline.
        tokio::time::sleep(r + p * 2).await;
        assert!(!reconcile.is_finished(), "renewed, the reconcile runs on");

        a_task.abort();
        let stalled = Instant::now();
        let b = candidate("b");
        let mut b_leads = b.subscribe();
        let b_task = tokio::spawn(b.run(std::future::pending()));
        let (out, ended) = reconcile.await.expect("the reconcile task");
        assert_eq!(out, None, "cancelled, not completed");
        assert!(
            ended <= stalled + r + Duration::from_millis(500),
            "cancelled by the renew deadline: {:?} after the stall",
            ended - stalled
        );
        assert!(gate.admit("some-uid").is_none(), "closed by itself");
        let b_led = leads(&mut b_leads, d + Duration::from_secs(10))
            .await
            .expect("b takes over");
        assert!(
            b_led >= stalled + d,
            "b led {:?} after the stall, before a lease duration",
            b_led - stalled
        );
        assert!(ended < b_led, "a's reconcile ended before b led");
        b_task.abort();
    }

    #[test]
    fn lease_seconds_round_up_and_stay_positive() {
        assert_eq!(seconds_ceil(Duration::from_secs(15)), 15);
        assert_eq!(seconds_ceil(Duration::from_millis(1500)), 2);
        assert_eq!(seconds_ceil(Duration::ZERO), 1);
        assert_eq!(seconds_ceil(Duration::MAX), i32::MAX);
    }
}
