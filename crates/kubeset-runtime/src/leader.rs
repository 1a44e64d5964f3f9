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

use std::fmt;
use std::future::Future;
use std::time::Duration;

use kubeset_client::api::coordination::v1::{Lease, LeaseSpec};
use kubeset_client::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kubeset_client::params::PostParams;
use kubeset_client::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

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

/// A candidate for leadership of one Lease.
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaseConfig,
    observed: Option<(Record, Instant)>,
    leading: watch::Sender<bool>,
    /// Labels written on the Lease (the shards' group, to list them).
    labels: Option<(String, String)>,
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
        }
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
        let replaced = self
            .bounded(
                "update",
                self.api
                    .replace(&self.config.name, &PostParams::default(), &updated),
            )
            .await?;
        match replaced {
            Ok(new) => {
                self.observed = Some((Record::of(&new), Instant::now()));
                Ok(true)
            }
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(false),
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
        let put = self
            .bounded(
                "update",
                self.api
                    .replace(&self.config.name, &PostParams::default(), &released),
            )
            .await?;
        match put {
            Ok(_) => Ok(()),
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
            Err(e) => Err(self.err("update", e)),
        }
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
    }

    /// Campaigns, leads and renews until `shutdown` completes; then releases
    /// the Lease if held. Losing the Lease (no renew within the deadline)
    /// publishes `false` and campaigns again.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            // Campaign.
            loop {
                match self.try_acquire_or_renew().await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => tracing::debug!(error = %e, "acquiring the lease failed"),
                }
                tokio::select! {
                    () = &mut shutdown => return,
                    () = tokio::time::sleep(self.jittered_retry()) => {}
                }
            }
            tracing::info!(identity = %self.config.identity, lease = %self.config.name, "started leading");
            self.set_leading(true);
            // Lead: renew every retry period until the deadline passes.
            let mut last_renew = Instant::now();
            loop {
                tokio::select! {
                    () = &mut shutdown => {
                        self.set_leading(false);
                        if let Err(e) = self.release().await {
                            tracing::warn!(error = %e, "releasing the lease failed");
                        }
                        return;
                    }
                    () = tokio::time::sleep(self.config.retry_period) => {}
                }
                let renewed = tokio::time::timeout_at(
                    last_renew + self.config.renew_deadline,
                    self.try_acquire_or_renew(),
                )
                .await;
                // client-go retries a failed renew (a 409 Conflict because
                // someone wrote the Lease, a Lease that reads as held by
                // another, a transport error) every retry period until the
                // renew deadline: a single lost compare-and-swap is no
                // reason to stop leading.
                match renewed {
                    Ok(Ok(true)) => last_renew = Instant::now(),
                    Ok(Ok(false)) => {
                        tracing::debug!(identity = %self.config.identity, "renew lost a race; retrying until the renew deadline");
                    }
                    Ok(Err(e)) => tracing::debug!(error = %e, "renewing the lease failed"),
                    Err(_) => {}
                }
                if Instant::now() >= last_renew + self.config.renew_deadline {
                    break;
                }
            }
            tracing::info!(identity = %self.config.identity, lease = %self.config.name, "stopped leading");
            self.set_leading(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_seconds_round_up_and_stay_positive() {
        assert_eq!(seconds_ceil(Duration::from_secs(15)), 15);
        assert_eq!(seconds_ceil(Duration::from_millis(1500)), 2);
        assert_eq!(seconds_ceil(Duration::ZERO), 1);
        assert_eq!(seconds_ceil(Duration::MAX), i32::MAX);
    }
}
