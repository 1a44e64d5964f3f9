//! The replica's loop: membership, rendezvous, shard Leases.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kubeset_client::api::coordination::v1::Lease;
use kubeset_client::params::ListParams;
use kubeset_client::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

use super::DEFAULT_SHARDS;
use crate::gate::ShardGate;
use crate::gate::hash::assign;
use crate::leader::{LeaderElector, LeaseConfig};

/// Settings of a [`Sharder`].
///
/// ```
/// use std::time::Duration;
/// use kubeset_runtime::shard::ShardConfig;
/// let config = ShardConfig::new("default", "greeter", "pod-a")
///     .shards(16)
///     .durations(Duration::from_secs(6), Duration::from_secs(4), Duration::from_secs(1));
/// assert!(config.validate().is_ok());
/// assert!(config.clone().shards(0).validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ShardConfig {
    /// Namespace of the Leases.
    pub namespace: String,
    /// Prefix of the Lease names (`<group>-shard-<i>`,
    /// `<group>-member-<identity>`): one per sharded controller.
    pub group: String,
    /// This replica's identity (unique per process, e.g. the pod name).
    pub identity: String,
    /// Number of virtual shards (1 to 4096; default 64). Every replica of
    /// a group must use the same number.
    pub shards: u32,
    /// How long a Lease is valid after its last observed change.
    pub lease_duration: Duration,
    /// A held shard is reconciled until this long after the read its last
    /// successful write was based on.
    pub renew_deadline: Duration,
    /// Interval between rounds (list, renew, acquire, release).
    pub retry_period: Duration,
}

/// The label on every Lease of a group (its value: the group), so a round
/// lists only them.
pub const GROUP_LABEL: &str = "shard.kubeset.dev/group";

/// The most shards a group may have (a Lease each).
pub const MAX_SHARDS: u32 = 4096;

impl ShardConfig {
    /// 64 shards and client-go's leader-election durations (15 s, 10 s,
    /// 2 s).
    pub fn new(namespace: &str, group: &str, identity: &str) -> Self {
        ShardConfig {
            namespace: namespace.to_owned(),
            group: group.to_owned(),
            identity: identity.to_owned(),
            shards: DEFAULT_SHARDS,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Sets the number of shards.
    pub fn shards(mut self, n: u32) -> Self {
        self.shards = n;
        self
    }

    /// Sets the durations: `lease > renew_deadline > retry` is required,
    /// and `lease − renew_deadline` is the margin for clock-rate skew and
    /// for a cancelled reconcile's last step (see the module docs).
    pub fn durations(mut self, lease: Duration, renew_deadline: Duration, retry: Duration) -> Self {
        self.lease_duration = lease;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry;
        self
    }

    fn member_lease(&self) -> String {
        format!("{}-member-{}", self.group, self.identity)
    }

    fn shard_lease(&self, shard: u32) -> String {
        format!("{}-shard-{shard}", self.group)
    }

    /// Checks the names (they become Lease names: lowercase alphanumerics,
    /// `-`, `.`) and the durations.
    pub fn validate(&self) -> Result<(), ShardError> {
        let invalid =
            |field: &'static str, reason: String| ShardError::InvalidConfig { field, reason };
        for (field, value) in [
            ("namespace", &self.namespace),
            ("group", &self.group),
            ("identity", &self.identity),
        ] {
            let bad = value.chars().find(|c| {
                !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.')
            });
            if value.is_empty() {
                return Err(invalid(field, "must not be empty".to_owned()));
            }
            if let Some(c) = bad {
                return Err(invalid(
                    field,
                    format!("{value:?} has {c:?}; a Lease name allows a-z, 0-9, '-', '.'"),
                ));
            }
        }
        if self.member_lease().len() > 253 || self.shard_lease(MAX_SHARDS).len() > 253 {
            return Err(invalid(
                "identity",
                "the Lease names would exceed 253 characters".to_owned(),
            ));
        }
        if !(1..=MAX_SHARDS).contains(&self.shards) {
            return Err(invalid(
                "shards",
                format!("{} is not in 1..={MAX_SHARDS}", self.shards),
            ));
        }
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(invalid(
                "retry_period",
                format!(
                    "{:?} must be positive and below the renew deadline {:?}",
                    self.retry_period, self.renew_deadline
                ),
            ));
        }
        if self.renew_deadline >= self.lease_duration {
            return Err(invalid(
                "renew_deadline",
                format!(
                    "{:?} must be below the lease duration {:?}",
                    self.renew_deadline, self.lease_duration
                ),
            ));
        }
        Ok(())
    }

    fn lease_config(&self, name: String) -> LeaseConfig {
        LeaseConfig::new(&self.namespace, &name, &self.identity).durations(
            self.lease_duration,
            self.renew_deadline,
            self.retry_period,
        )
    }
}

/// Why a [`Sharder`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// A setting of [`ShardConfig`] is unusable.
    #[error("shard config: {field}: {reason}")]
    InvalidConfig {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

type Ready = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A replica of a sharded controller: keeps its membership Lease, and
/// acquires, renews and releases shard Leases (see the module docs).
/// Share its [`gate`](Self::gate) with the controller, then
/// [`run`](Self::run) it.
pub struct Sharder {
    config: ShardConfig,
    api: Api<Lease>,
    gate: ShardGate,
    member: LeaderElector,
    shards: Vec<LeaderElector>,
    /// Other members' Leases: resourceVersion and when it was first seen.
    seen: HashMap<String, (Option<String>, Instant)>,
    /// Since when a shard was wanted but not held (for the takeover time).
    wanted_since: HashMap<u32, Instant>,
    /// When the read of the last successful heartbeat was taken.
    heartbeat: Option<Instant>,
    ready_after: Option<Ready>,
    ready: watch::Sender<bool>,
    #[cfg(feature = "metrics")]
    metrics: Option<super::ShardMetrics>,
}

impl fmt::Debug for Sharder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sharder")
            .field("config", &self.config)
            .field("held", &self.gate.held())
            .finish_non_exhaustive()
    }
}

/// What one round decided for a shard.
enum Plan {
    Write(Option<Lease>),
    Release(Option<Lease>),
}

impl Sharder {
    /// A replica using `client`; fails on an unusable `config`.
    pub fn new(client: Client, config: ShardConfig) -> Result<Self, ShardError> {
        config.validate()?;
        let elector = |name: String| {
            LeaderElector::new(client.clone(), config.lease_config(name))
                .with_label(GROUP_LABEL, &config.group)
        };
        let member = elector(config.member_lease());
        let shards = (0..config.shards)
            .map(|s| elector(config.shard_lease(s)))
            .collect();
        Ok(Sharder {
            api: Api::namespaced(client, &config.namespace),
            gate: ShardGate::new(config.shards),
            member,
            shards,
            seen: HashMap::new(),
            wanted_since: HashMap::new(),
            heartbeat: None,
            ready_after: None,
            ready: watch::channel(false).0,
            #[cfg(feature = "metrics")]
            metrics: None,
            config,
        })
    }

    /// The gate the controller reconciles through.
    pub fn gate(&self) -> ShardGate {
        self.gate.clone()
    }

    /// The settings.
    pub fn config(&self) -> &ShardConfig {
        &self.config
    }

    /// Joins (creates the membership Lease) only once `warm` completes,
    /// e.g. the controller's `store.wait_until_ready()`: shards go to
    /// replicas whose cache is synced.
    #[must_use]
    pub fn ready_after(mut self, warm: impl Future<Output = ()> + Send + 'static) -> Self {
        self.ready_after = Some(Box::pin(warm));
        self
    }

    /// `true` while this replica is warm and a member: set by a successful
    /// heartbeat of its membership Lease, cleared when none succeeded
    /// within the renew deadline, and on leaving (a readiness probe).
    pub fn ready(&self) -> watch::Receiver<bool> {
        self.ready.subscribe()
    }

    /// Records shards held, hand-offs and takeover times.
    #[cfg(feature = "metrics")]
    #[must_use]
    pub fn with_metrics(mut self, metrics: super::ShardMetrics) -> Self {
        self.gate.set_metrics(metrics.clone(), &self.config.group);
        self.metrics = Some(metrics);
        self
    }

    fn handoff(&self, _direction: &'static str) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.metrics {
            m.handoff(&self.config.group, &self.config.identity, _direction);
        }
    }

    fn record_held(&self) {
        #[cfg(feature = "metrics")]
        if let Some(m) = &self.metrics {
            m.held(
                &self.config.group,
                &self.config.identity,
                self.gate.held().len(),
            );
        }
    }

    /// Waits to be warm, then runs rounds every retry period until
    /// `shutdown`; then stops every shard (running reconciles cancelled),
    /// releases its Leases and leaves.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        if let Some(warm) = self.ready_after.take() {
            tokio::select! {
                () = &mut shutdown => return,
                () = warm => {}
            }
        }
        // Rounds start every retry period (not a period after the last
        // one ended), so a slow round does not stretch the takeover time.
        let mut rounds = tokio::time::interval(self.config.retry_period);
        rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                _ = rounds.tick() => {}
            }
            self.round().await;
        }
        self.leave().await;
    }

    /// One round: list the Leases, heartbeat, decide, write.
    async fn round(&mut self) {
        let t = Instant::now();
        let params = ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.config.group));
        let listed = tokio::time::timeout(self.config.renew_deadline, self.api.list(&params)).await;
        let leases = match listed {
            Ok(Ok(list)) => list.items,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "listing the Leases failed");
                return self.lapse();
            }
            Err(_) => return self.lapse(),
        };
        let (own, others, mut by_shard) = self.partition(leases);
        match self.member.acquire_or_renew_from(own).await {
            Ok(true) => self.heartbeat = Some(t),
            Ok(false) => {
                tracing::debug!("the membership Lease is held by another replica of this identity")
            }
            Err(e) => tracing::debug!(error = %e, "renewing the membership Lease failed"),
        }
        let live = self.live(&others);
        let plans = self.plan(&live, &mut by_shard);
        self.execute(plans, t).await;
        self.lapse();
    }

    /// Splits the listed Leases: this replica's membership, the other
    /// members', the shards'.
    fn partition(
        &mut self,
        leases: Vec<Lease>,
    ) -> (Option<Lease>, Vec<Lease>, HashMap<u32, Lease>) {
        let own_name = self.config.member_lease();
        let member_prefix = format!("{}-member-", self.config.group);
        let shard_prefix = format!("{}-shard-", self.config.group);
        let (mut own, mut others, mut shards) = (None, Vec::new(), HashMap::new());
        for lease in leases {
            let name = lease.metadata.name.clone().unwrap_or_default();
            if name == own_name {
                own = Some(lease);
            } else if name.starts_with(&member_prefix) {
                others.push(lease);
            } else if let Some(i) = name
                .strip_prefix(&shard_prefix)
                .and_then(|s| s.parse::<u32>().ok())
                && i < self.config.shards
            {
                if let Some(el) = self
                    .shards
                    .get_mut(usize::try_from(i).unwrap_or(usize::MAX))
                {
                    el.observe(&lease);
                }
                shards.insert(i, lease);
            }
        }
        (own, others, shards)
    }

    /// Live members (this one included): a holder, and a record that
    /// changed within the lease duration as observed here.
    fn live(&mut self, others: &[Lease]) -> Vec<String> {
        let now = Instant::now();
        let prefix = format!("{}-member-", self.config.group);
        let mut live = vec![self.config.identity.clone()];
        let mut still = HashMap::new();
        for lease in others {
            let name = lease.metadata.name.clone().unwrap_or_default();
            let rv = lease.metadata.resource_version.clone();
            let at = match self.seen.get(&name) {
                Some((seen, at)) if *seen == rv => *at,
                _ => now,
            };
            let holder = lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .filter(|h| !h.is_empty());
            // Only `<group>-member-<holder>`: a Lease of another group
            // whose name happens to start with this prefix is no member.
            let named = name.strip_prefix(&prefix) == holder.as_deref();
            if let Some(holder) = holder
                && named
                && now < at + self.config.lease_duration
                && holder != self.config.identity
            {
                live.push(holder);
            }
            still.insert(name, (rv, at));
        }
        self.seen = still;
        live.sort();
        live.dedup();
        live
    }

    fn plan(&mut self, live: &[String], by_shard: &mut HashMap<u32, Lease>) -> Vec<(u32, Plan)> {
        let me = self.config.identity.as_str();
        let renew_at = Instant::now() + self.renew_margin();
        let mut plans = Vec::new();
        let owners = assign(live, self.config.shards);
        for s in 0..self.config.shards {
            let lease = by_shard.remove(&s);
            let mine_on_record = lease
                .as_ref()
                .and_then(|l| l.spec.as_ref())
                .and_then(|sp| sp.holder_identity.as_deref())
                == Some(me);
            let held = self.gate.is_held(s);
            let want = owners.get(s as usize).copied().flatten() == Some(me);
            let el = &self.shards[usize::try_from(s).unwrap_or(usize::MAX)];
            if want && !held {
                // For the takeover time: since when it was wanted.
                self.wanted_since.entry(s).or_insert_with(Instant::now);
            }
            if want {
                // A held shard is renewed only once its deadline is near:
                // fewer writes, the same safety (the deadline is the gate).
                let due = self.gate.until(s).is_none_or(|u| u <= renew_at);
                if (held && due) || (!held && (mine_on_record || !el.held_by_other())) {
                    plans.push((s, Plan::Write(lease)));
                }
            } else {
                self.wanted_since.remove(&s);
                if held || mine_on_record {
                    plans.push((s, Plan::Release(lease)));
                }
            }
        }
        plans
    }

    /// Writes the round's decisions concurrently; a shard written
    /// successfully is held until `t + renew_deadline`.
    async fn execute(&mut self, plans: Vec<(u32, Plan)>, t: Instant) {
        let mut plans: HashMap<u32, Plan> = plans.into_iter().collect();
        let gate = self.gate.clone();
        let until = t + self.config.renew_deadline;
        let work = self.shards.iter_mut().zip(0u32..).filter_map(|(el, s)| {
            let plan = plans.remove(&s)?;
            let gate = gate.clone();
            Some(async move {
                match plan {
                    Plan::Write(lease) => (s, true, el.acquire_or_renew_from(lease).await.unwrap_or_else(|e| {
                        tracing::debug!(error = %e, shard = s, "shard Lease write failed");
                        false
                    })),
                    Plan::Release(lease) => {
                        gate.revoke(s);
                        // Only once nothing of the shard runs may another
                        // replica take it; else let the Lease expire.
                        let drained = gate.drain(s, until).await;
                        if drained && let Some(lease) = lease
                            && let Err(e) = el.release_from(lease).await
                        {
                            tracing::debug!(error = %e, shard = s, "releasing a shard Lease failed");
                        }
                        (s, false, drained)
                    }
                }
            })
        });
        let results = futures::future::join_all(work).await;
        for (s, write, ok) in results {
            if write && ok {
                if self.gate.extend(s, until) {
                    let waited = self.wanted_since.remove(&s).map(|at| at.elapsed());
                    tracing::info!(identity = %self.config.identity, shard = s, ?waited, "acquired shard");
                    self.handoff("acquired");
                    #[cfg(feature = "metrics")]
                    if let (Some(m), Some(w)) = (&self.metrics, waited) {
                        m.takeover(&self.config.group, &self.config.identity, w.as_secs_f64());
                    }
                }
            } else if !write {
                tracing::info!(identity = %self.config.identity, shard = s, drained = ok, "released shard");
                self.handoff("released");
            }
        }
    }

    /// A held shard is renewed when less than this is left of its
    /// deadline: half the renew deadline, and at least two rounds.
    fn renew_margin(&self) -> Duration {
        let r = self.config.renew_deadline;
        (r / 2).max(self.config.retry_period * 2).min(r)
    }

    /// Republishes the held set after deadlines that passed, and the
    /// readiness after the heartbeat.
    fn lapse(&mut self) {
        let before = self.gate.held();
        self.gate.publish();
        let after = self.gate.held();
        for s in before.iter().filter(|s| !after.contains(s)) {
            tracing::warn!(identity = %self.config.identity, shard = s, "shard lapsed: no renew within the deadline");
            self.gate.revoke(*s);
            self.handoff("lapsed");
        }
        self.record_held();
        let member = self
            .heartbeat
            .is_some_and(|at| at.elapsed() < self.config.renew_deadline);
        self.ready
            .send_if_modified(|r| std::mem::replace(r, member) != member);
    }

    /// Stops every shard, releases the Leases held (on record, also the
    /// lapsed ones), leaves.
    async fn leave(mut self) {
        let deadline = Instant::now() + self.config.renew_deadline;
        for s in 0..self.config.shards {
            self.gate.revoke(s);
        }
        let mut drained = vec![true; self.shards.len()];
        for (s, d) in (0u32..).zip(drained.iter_mut()) {
            *d = self.gate.drain(s, deadline).await;
        }
        let params = ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.config.group));
        let mut by_shard = match self.api.list(&params).await {
            Ok(list) => self.partition(list.items).2,
            Err(e) => {
                tracing::warn!(error = %e, "listing the Leases to release them failed; they will expire");
                HashMap::new()
            }
        };
        let me = self.config.identity.clone();
        let work = self.shards.iter_mut().zip(0u32..).filter_map(|(el, s)| {
            let lease = by_shard.remove(&s)?;
            let mine = lease
                .spec
                .as_ref()
                .and_then(|sp| sp.holder_identity.as_deref())
                == Some(me.as_str());
            // Not drained: a reconcile may still run, so let it expire.
            (mine && drained[usize::try_from(s).ok()?]).then_some(async move {
                if let Err(e) = el.release_from(lease).await {
                    tracing::debug!(error = %e, shard = s, "releasing a shard Lease failed");
                }
            })
        });
        futures::future::join_all(work).await;
        if let Err(e) = self.member.release().await {
            tracing::debug!(error = %e, "releasing the membership Lease failed");
        }
        let _ = self.ready.send(false);
        self.record_held();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ShardConfig {
        ShardConfig::new("default", "greeter", "pod-a")
    }

    #[test]
    fn the_defaults_are_valid_and_name_the_leases() {
        let c = base();
        assert!(c.validate().is_ok());
        assert_eq!(c.shards, DEFAULT_SHARDS);
        assert_eq!(c.member_lease(), "greeter-member-pod-a");
        assert_eq!(c.shard_lease(7), "greeter-shard-7");
    }

    #[test]
    fn an_unusable_config_names_its_field() {
        let field = |c: ShardConfig| match c.validate() {
            Err(ShardError::InvalidConfig { field, reason }) => {
                assert!(!reason.is_empty());
                field
            }
            Ok(()) => panic!("{c:?} was accepted"),
        };
        let mut c = base();
        c.identity = "Pod_A".to_owned();
        assert_eq!(field(c), "identity");
        let mut c = base();
        c.group = String::new();
        assert_eq!(field(c), "group");
        let mut c = base();
        c.namespace = "a/b".to_owned();
        assert_eq!(field(c), "namespace");
        let mut c = base();
        c.identity = "x".repeat(250);
        assert_eq!(field(c), "identity");
        assert_eq!(field(base().shards(0)), "shards");
        assert_eq!(field(base().shards(MAX_SHARDS + 1)), "shards");
        let s = Duration::from_secs;
        assert_eq!(
            field(base().durations(s(10), s(10), s(2))),
            "renew_deadline"
        );
        assert_eq!(field(base().durations(s(15), s(10), s(10))), "retry_period");
        assert_eq!(
            field(base().durations(s(15), s(10), Duration::ZERO)),
            "retry_period"
        );
        let msg = base()
            .shards(0)
            .validate()
            .expect_err("invalid")
            .to_string();
        assert_eq!(msg, "shard config: shards: 0 is not in 1..=4096");
    }
}
