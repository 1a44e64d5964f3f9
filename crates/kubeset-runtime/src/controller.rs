//! The controller: a reconcile function driven by a work queue, with
//! kube-rs's `Controller` shape.
//!
//! Triggers come from the primary kind (every change of an object queues
//! its key), from owned kinds (a change of a child queues the owner named
//! in its `ownerReferences`), from any mapped watch or key stream, and from
//! [`Controller::reconcile_all_on`]. The queue ([`WorkQueue`]) deduplicates
//! keys, never hands out a key that is being reconciled (a trigger during a
//! reconcile queues it again once that reconcile ends), and delays keys
//! ([`Action::requeue`], [`Config::debounce`], per-key failure backoff). At
//! most [`Config::concurrency`] reconciles run at once.
//!
//! [`Controller::run`] returns a stream of what happened, as kube-rs does:
//! `Ok((ObjectRef, Action))` after each successful reconcile,
//! [`Error::ReconcilerFailed`] after each failed one (after `error_policy`
//! chose what to do), and [`Error::QueueError`] for a watch failure of the
//! primary kind, including an object that did not decode (which is
//! skipped; the watch and every other object carry on). Nothing runs
//! unless the stream is polled.
//!
//! The reconcile function receives the object from the primary
//! [`Store`]; keys whose object is gone (deleted) are dropped without a
//! call (use a [`finalizer`](crate::finalizer()) for cleanup).

use std::borrow::Borrow;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{BoxStream, FuturesUnordered, SelectAll};
use futures::{Stream, StreamExt as _, future};
use kubeset_client::dynamic::DynamicObject;
use kubeset_client::{Api, Resource, ResourceScope};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::metrics::ControllerMetrics;
use crate::object_ref::ObjectRef;
use crate::predicates::{Predicate, PredicateState};
pub use crate::queue::{DEFAULT_AGING, Priority, RetryBackoff, WorkQueue};
use crate::shared::SharedCache;
use crate::store::{ObjectKey, Store, StoreConfig, Writer, reflector};
use crate::watcher::{Event, WatcherConfig, WatcherError, metadata_watcher, watcher};

/// What to do with a key after a reconcile (returned by the reconcile
/// function on success and by `error_policy` on failure): kube-rs's
/// opaque `Action`, plus [`Action::backoff`] and a [`Priority`] for the
/// requeue (controller-runtime's `Result.Priority`).
///
/// ```
/// use std::time::Duration;
/// use kubeset_runtime::{Action, Priority};
///
/// let later = Action::requeue(Duration::from_secs(300)).with_priority(Priority::RESYNC);
/// assert_eq!(later.requeue_after(), Some(Duration::from_secs(300)));
/// assert_eq!(later.priority(), Some(Priority::RESYNC));
/// assert_eq!(Action::await_change().requeue_after(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    next: Next,
    priority: Option<Priority>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Requeue(Duration),
    AwaitChange,
    Backoff,
}

impl Action {
    /// Reconcile again after `after` (unless a change comes first).
    pub fn requeue(after: Duration) -> Self {
        Action {
            next: Next::Requeue(after),
            priority: None,
        }
    }

    /// Reconcile again only when something changes.
    pub fn await_change() -> Self {
        Action {
            next: Next::AwaitChange,
            priority: None,
        }
    }

    /// Reconcile again after the controller's per-key exponential delay
    /// ([`RetryBackoff`]: client-go's `AddRateLimited`; kube-rs has no
    /// equivalent). Counts as a failure in a row even from the reconcile.
    pub fn backoff() -> Self {
        Action {
            next: Next::Backoff,
            priority: None,
        }
    }

    /// Requeues at `priority` (without it, a requeue keeps the priority
    /// the key was reconciled at, as controller-runtime does).
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The delay of a [`requeue`](Self::requeue) (kube-rs keeps it
    /// private; here it is readable for tests).
    pub fn requeue_after(&self) -> Option<Duration> {
        match self.next {
            Next::Requeue(after) => Some(after),
            Next::AwaitChange | Next::Backoff => None,
        }
    }

    /// Whether this is [`Action::backoff`].
    pub fn is_backoff(&self) -> bool {
        self.next == Next::Backoff
    }

    /// The priority set by [`with_priority`](Self::with_priority).
    pub fn priority(&self) -> Option<Priority> {
        self.priority
    }
}

/// Settings of a controller's runner (kube-rs's `controller::Config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct Config {
    /// At most this many reconciles at once (at least 1; default 4).
    pub concurrency: usize,
    /// A triggered key waits this long for further triggers before it is
    /// reconciled; each trigger in the window starts it again (default 0:
    /// none). Requeues and backoffs are not debounced.
    pub debounce: Duration,
    /// Points a waiting priority tier gains per reconcile that passes it
    /// over (see [`WorkQueue`]; default [`DEFAULT_AGING`], 0: strict).
    pub aging: u32,
    /// A reconcile running longer is cancelled (its future dropped at its
    /// next `.await`), reported as [`Error::ReconcileTimeout`] and retried
    /// with the per-key backoff (controller-runtime's
    /// `ReconciliationTimeout`; default none).
    pub reconcile_timeout: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            concurrency: 4,
            debounce: Duration::ZERO,
            aging: DEFAULT_AGING,
            reconcile_timeout: None,
        }
    }
}

impl Config {
    /// Sets the concurrency (at least 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Sets the debounce window.
    pub fn debounce(mut self, window: Duration) -> Self {
        self.debounce = window;
        self
    }

    /// Sets the aging of waiting priorities (0: strict priorities).
    ///
    /// ```
    /// use kubeset_runtime::Config;
    /// assert_eq!(Config::default().aging(0).aging, 0);
    /// ```
    pub fn aging(mut self, points_per_pass: u32) -> Self {
        self.aging = points_per_pass;
        self
    }

    /// Cancels reconciles that run longer than `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kubeset_runtime::Config;
    /// let c = Config::default().reconcile_timeout(Duration::from_secs(90));
    /// assert_eq!(c.reconcile_timeout, Some(Duration::from_secs(90)));
    /// ```
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }
}

/// What the stream of [`Controller::run`] reports as a failure.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// The reconcile function failed for `object`; `error_policy` decided
    /// when to retry.
    #[error("reconciling {object} failed: {source}")]
    ReconcilerFailed {
        /// The object.
        object: ObjectRef<DynamicObject>,
        /// The reconcile function's error.
        #[source]
        source: E,
    },
    /// The watch of the primary kind failed (it carries on by itself), or
    /// one of its objects did not decode and was skipped. After
    /// [`WatcherError::MemoryBudget`] the watch does not carry on: the
    /// controller stops as on shutdown (running reconciles finish).
    #[error("the primary watch failed: {source}")]
    QueueError {
        /// The watcher's error.
        #[source]
        source: WatcherError,
    },
    /// The reconcile of `object` ran past [`Config::reconcile_timeout`]
    /// and was cancelled; it is retried with the per-key backoff
    /// (`error_policy` is not called: there is no error of type `E`).
    #[error("reconciling {object} took longer than {timeout:?}; cancelled")]
    ReconcileTimeout {
        /// The object.
        object: ObjectRef<DynamicObject>,
        /// The timeout.
        timeout: Duration,
    },
}

type ShutdownFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
type Triggers = SelectAll<BoxStream<'static, Vec<(ObjectKey, Priority)>>>;
type Primary<K> = BoxStream<'static, Result<Event<Arc<K>>, WatcherError>>;

/// A controller for kind `K`: see the module docs.
#[must_use]
pub struct Controller<K> {
    primary: Primary<K>,
    store: Store<K>,
    triggers: Triggers,
    config: Config,
    retry: RetryBackoff,
    shutdown: Option<ShutdownFuture>,
    metrics: ControllerMetrics,
    /// Features `shard`, `leader`: reconcile only objects of the shards
    /// held (leadership: the one shard).
    gate: Gate,
    /// Feature `leader`: the elector [`leader_elected`](Self::leader_elected) runs.
    #[cfg(feature = "leader")]
    elector: Option<crate::LeaderElector>,
}

impl<K> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("store", &self.store)
            .field("config", &self.config)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl<K> Controller<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
{
    /// A controller of the objects of `api`, cached with default settings.
    pub fn new(api: Api<K>, config: WatcherConfig) -> Self {
        Self::with_store(api, config, StoreConfig::new())
    }

    /// A controller whose primary cache uses `store_config` (indexes,
    /// dropping managedFields).
    pub fn with_store(api: Api<K>, config: WatcherConfig, store_config: StoreConfig<K>) -> Self {
        let writer = Writer::new(store_config);
        let store = writer.store();
        Self::from_parts(reflector(writer, watcher(api, config)).boxed(), store)
    }

    /// A controller fed by `trigger` (objects, e.g. a predicate-filtered
    /// watcher) that reads objects from `reader` (kube-rs's `for_stream`;
    /// the store must be fed by a reflector of the same kind).
    pub fn for_stream<T>(
        trigger: impl Stream<Item = Result<T, WatcherError>> + Send + 'static,
        reader: Store<K>,
    ) -> Self
    where
        T: Borrow<K> + Send + 'static,
    {
        Self::from_parts(futures::stream::empty().boxed(), reader).triggers(
            trigger.filter_map(|r| future::ready(r.ok().map(|o| vec![ObjectKey::of(o.borrow())]))),
        )
    }

    /// A controller over a shared cache (see [`crate::shared`]): no watch
    /// of its own; other controllers and tasks read the same store.
    pub fn for_shared(cache: &SharedCache<K>) -> Self {
        Self::from_parts(cache.subscribe().map(Ok).boxed(), cache.store())
    }

    fn from_parts(primary: Primary<K>, store: Store<K>) -> Self {
        Controller {
            primary,
            store,
            triggers: SelectAll::new(),
            config: Config::default(),
            retry: RetryBackoff::default(),
            shutdown: None,
            metrics: ControllerMetrics::disabled(),
            gate: Gate::default(),
            #[cfg(feature = "leader")]
            elector: None,
        }
    }

    /// The primary cache, also what reconcile reads from.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// Only changes of the primary kind whose `predicate` value changed
    /// trigger a reconcile (the cache still sees every change; deletions
    /// always pass). E.g. [`predicates::generation`](crate::predicates::generation)
    /// ignores status-only writes.
    pub fn with_predicate<P>(mut self, predicate: P) -> Self
    where
        P: Predicate<K> + Send + 'static,
    {
        let mut state = PredicateState::<K, P>::new(predicate);
        self.primary = self
            .primary
            .filter(move |r| {
                future::ready(match r {
                    Ok(ev) => state.admit_event(ev),
                    Err(_) => true,
                })
            })
            .boxed();
        self
    }

    /// Reconciles the owner (of kind `K`) of every changed object of
    /// `api`, found in its `ownerReferences`. Only metadata is watched.
    pub fn owns<C>(self, api: Api<C>, config: WatcherConfig) -> Self
    where
        C: Resource + Send + 'static,
    {
        self.owns_stream(metadata_watcher(api, config).touched_objects_ok())
    }

    /// Reconciles the owner (of kind `K`) of every object `trigger` yields
    /// (kube-rs's `owns_stream`).
    pub fn owns_stream<C: Resource>(
        self,
        trigger: impl Stream<Item = Result<C, WatcherError>> + Send + 'static,
    ) -> Self {
        self.triggers(trigger.filter_map(|child| {
            future::ready(
                child
                    .ok()
                    .map(|c| owners_of::<K, C>(&c))
                    .filter(|o| !o.is_empty()),
            )
        }))
    }

    /// Reconciles the objects `mapper` names for every changed object of
    /// `api`: [`ObjectRef<K>`]s, as kube-rs's (so `ObjectRef::new(name)`
    /// infers the controller's kind), or [`ObjectKey`]s. The mapper takes
    /// the object by value, as kube-rs's (`|secret: Secret| …`): each
    /// decoded object is moved into it, never cloned (`O` needs no
    /// `Clone`).
    pub fn watches<O, I>(
        self,
        api: Api<O>,
        config: WatcherConfig,
        mapper: impl Fn(O) -> I + Send + Sync + 'static,
    ) -> Self
    where
        O: Resource + DeserializeOwned + Send + 'static,
        I: IntoIterator,
        I::Item: Into<ObjectRef<K>>,
    {
        self.watches_stream(watcher(api, config).touched_objects_ok(), mapper)
    }

    /// Reconciles the keys `mapper` returns for every object `trigger`
    /// yields (kube-rs's `watches_stream`).
    pub fn watches_stream<O, I>(
        self,
        trigger: impl Stream<Item = Result<O, WatcherError>> + Send + 'static,
        mapper: impl Fn(O) -> I + Send + Sync + 'static,
    ) -> Self
    where
        O: Send + 'static,
        I: IntoIterator,
        I::Item: Into<ObjectRef<K>>,
    {
        self.triggers(trigger.filter_map(move |o| {
            let keys: Vec<ObjectKey> = match o {
                Ok(o) => mapper(o).into_iter().map(|r| r.into().into_key()).collect(),
                Err(_) => Vec::new(),
            };
            future::ready((!keys.is_empty()).then_some(keys))
        }))
    }

    /// Reconciles every batch of keys `stream` yields (any other trigger:
    /// timers, webhooks, channels), at [`Priority::NORMAL`].
    pub fn triggers(self, stream: impl Stream<Item = Vec<ObjectKey>> + Send + 'static) -> Self {
        self.triggers_at(Priority::NORMAL, stream)
    }

    /// Reconciles every batch of keys `stream` yields at `priority`.
    ///
    /// ```no_run
    /// # use kubeset_client::{Api, api::core::v1::ConfigMap};
    /// # use kubeset_runtime::{Controller, ObjectKey, Priority, WatcherConfig};
    /// # fn f(api: Api<ConfigMap>, urgent: futures::channel::mpsc::Receiver<Vec<ObjectKey>>) {
    /// let controller = Controller::new(api, WatcherConfig::default())
    ///     .triggers_at(Priority::new(100), urgent);
    /// # }
    /// ```
    pub fn triggers_at(
        mut self,
        priority: Priority,
        stream: impl Stream<Item = Vec<ObjectKey>> + Send + 'static,
    ) -> Self {
        self.triggers.push(
            stream
                .map(move |keys| keys.into_iter().map(|k| (k, priority)).collect())
                .boxed(),
        );
        self
    }

    /// Reconciles each object `trigger` names (kube-rs's `reconcile_on`).
    pub fn reconcile_on(self, trigger: impl Stream<Item = ObjectRef<K>> + Send + 'static) -> Self {
        self.triggers(trigger.map(|r| vec![r.into_key()]))
    }

    /// Reconciles every cached object each time `trigger` yields (kube-rs's
    /// `reconcile_all_on`; e.g. a config reload, a timer), at
    /// [`Priority::RESYNC`]: changes go first.
    pub fn reconcile_all_on(self, trigger: impl Stream<Item = ()> + Send + 'static) -> Self {
        let store = self.store.clone();
        self.triggers_at(Priority::RESYNC, trigger.map(move |()| store.keys()))
    }

    /// Sets the runner's settings (kube-rs's `with_config`).
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// At most `n` reconciles at once (at least 1; default 4).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.config = self.config.concurrency(n);
        self
    }

    /// Sets the per-key backoff after failed reconciles (the wait of an
    /// action with [`Action::is_backoff`]).
    pub fn retry_backoff(mut self, retry: RetryBackoff) -> Self {
        self.retry = retry;
        self
    }

    /// Reconciles only objects whose shard `gate` holds (feature
    /// `shard`, see [`crate::shard`]): a key of another shard is dropped
    /// when it comes up, a running reconcile is cancelled when its shard
    /// is revoked or its deadline passes, and the keys of a newly acquired
    /// shard are queued. Children (`owns`, `watches`) map to the parent's
    /// key, so they follow the parent's shard. The cache still holds every
    /// object (the filter is client-side); [`new_sharded`](Self::new_sharded)
    /// can have the API server filter instead.
    ///
    /// ```no_run
    /// # use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
    /// # use kubeset_runtime::{Controller, WatcherConfig};
    /// use kubeset_runtime::shard::{ShardConfig, Sharder};
    /// # fn f(client: Client) -> Result<(), kubeset_runtime::shard::ShardError> {
    /// let sharder = Sharder::new(client.clone(), ShardConfig::new("default", "greeter", "pod-a"))?;
    /// let controller = Controller::new(Api::<ConfigMap>::default_namespaced(client), WatcherConfig::default())
    ///     .sharded(sharder.gate());
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "shard")]
    pub fn sharded(self, gate: crate::shard::ShardGate) -> Self {
        self.gated(gate)
    }

    /// Reconciles through `gate`; queues the keys of each new tenure.
    #[cfg(feature = "leader")]
    fn gated(mut self, gate: crate::gate::ShardGate) -> Self {
        let keys = acquired_keys(gate.clone(), self.store.clone());
        self.gate = Some(gate);
        self.triggers_at(Priority::INITIAL_LIST, keys)
    }

    /// Runs under leader election with a **warm standby** (feature
    /// `leader`; controller-runtime's warm replicas): the watches and the
    /// cache run from the start on every replica, and only reconciling
    /// waits for leadership. [`run`](Self::run) runs `elector` too: it
    /// campaigns once the primary cache has synced
    /// ([`LeaderElector::ready_after`](crate::LeaderElector::ready_after);
    /// [`LeaderElector::warm`](crate::LeaderElector::warm) says when), keys
    /// that come up while not leading are dropped, and on acquiring every
    /// key of the cache is queued at once, so a takeover costs the Lease
    /// expiry and no relist. On losing the Lease (no renew within the
    /// renew deadline) running reconciles are cancelled at their next poll
    /// before another candidate can acquire it (the timing argument is in
    /// [`crate::leader`]). When the stream ends (shutdown, after running
    /// reconciles finished) or is dropped, the elector releases the Lease.
    ///
    /// Replaces `sharded` (feature `shard`; one gate per controller).
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
    /// use kubeset_runtime::{Action, Controller, LeaderElector, LeaseConfig, WatcherConfig};
    /// # async fn f(client: Client) {
    /// let elector = LeaderElector::new(client.clone(), LeaseConfig::new("default", "my-controller", "pod-a"));
    /// let mut warm = elector.warm(); // a readiness probe: the cache has synced
    /// let controller = Controller::new(Api::<ConfigMap>::default_namespaced(client), WatcherConfig::default())
    ///     .leader_elected(elector)
    ///     .shutdown_on_signal();
    /// tokio::spawn(async move { let _ = warm.wait_for(|w| *w).await; });
    /// controller
    ///     .run_until_shutdown(
    ///         |_cm: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, std::convert::Infallible>(Action::await_change()) },
    ///         Arc::new(()),
    ///     )
    ///     .await;
    /// # }
    /// ```
    #[cfg(feature = "leader")]
    pub fn leader_elected(mut self, elector: crate::LeaderElector) -> Self {
        let store = self.store.clone();
        let elector = elector.ready_after(async move {
            // A cache whose writer is gone never syncs: never campaign.
            if store.wait_until_ready().await.is_err() {
                std::future::pending::<()>().await;
            }
        });
        let gate = elector.gate();
        self.elector = Some(elector);
        self.gated(gate)
    }

    /// A sharded controller of the objects of `api` in one call: its
    /// primary watch filtered by `filter` (server-side `shardSelector` for
    /// the shards `gate` holds, reopened when they change, or client-side;
    /// see [`ShardFilter`](crate::shard::ShardFilter)), then
    /// [`sharded`](Self::sharded) by `gate`. Feature `shard`.
    ///
    /// ```no_run
    /// # use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
    /// # use kubeset_runtime::{Controller, WatcherConfig};
    /// use kubeset_runtime::shard::{ShardConfig, ShardFilter, Sharder};
    /// # fn f(client: Client) -> Result<(), kubeset_runtime::shard::ShardError> {
    /// let sharder = Sharder::new(client.clone(), ShardConfig::new("default", "greeter", "pod-a"))?;
    /// let controller = Controller::new_sharded(
    ///     Api::<ConfigMap>::default_namespaced(client),
    ///     WatcherConfig::default(),
    ///     sharder.gate(),
    ///     ShardFilter::Auto,
    /// );
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "shard")]
    pub fn new_sharded(
        api: Api<K>,
        config: WatcherConfig,
        gate: crate::shard::ShardGate,
        filter: crate::shard::ShardFilter,
    ) -> Self {
        let writer = Writer::new(StoreConfig::new());
        let store = writer.store();
        let events = crate::shard::sharded_watcher(api, config, gate.clone(), filter);
        Self::from_parts(reflector(writer, events).boxed(), store).sharded(gate)
    }

    /// Records this controller's metrics (see [`crate::metrics`]).
    pub fn with_metrics(mut self, metrics: ControllerMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Stops when `signal` completes: no new reconciles start, running ones
    /// finish, then the stream of [`run`](Self::run) ends.
    pub fn graceful_shutdown_on(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Stops gracefully on SIGTERM or Ctrl-C (SIGINT), as kube-rs's
    /// `shutdown_on_signal`. Unlike kube-rs, a second signal does not
    /// abort running reconciles; Tokio keeps its handler installed for the
    /// rest of the process, so a second Ctrl-C does not kill it either.
    pub fn shutdown_on_signal(self) -> Self {
        self.graceful_shutdown_on(async {
            let ctrl_c = tokio::signal::ctrl_c();
            #[cfg(unix)]
            {
                use tokio::signal::unix::{SignalKind, signal};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => {
                        tokio::select! {
                            _ = ctrl_c => {}
                            _ = term.recv() => {}
                        }
                    }
                    Err(_) => {
                        let _ = ctrl_c.await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = ctrl_c.await;
            }
        })
    }

    /// Runs the controller as a stream (see the module docs): `reconcile`
    /// gets the cached object and the shared context and returns the next
    /// [`Action`]; on `Err`, `error_policy` gets the object, the error and
    /// the context and returns the [`Action`] (kube-rs's signature;
    /// [`Action::backoff`] gives client-go's per-key exponential retry).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use futures::StreamExt as _;
    /// use kubeset_client::{Api, api::core::v1::ConfigMap};
    /// use kubeset_runtime::{Action, Controller, WatcherConfig};
    ///
    /// #[derive(Debug, thiserror::Error)]
    /// #[error("failed")]
    /// struct Failed;
    ///
    /// # async fn run(cms: Api<ConfigMap>) {
    /// Controller::new(cms, WatcherConfig::default())
    ///     .shutdown_on_signal()
    ///     .run(
    ///         |_cm: Arc<ConfigMap>, _ctx: Arc<()>| async { Ok::<_, Failed>(Action::await_change()) },
    ///         |_cm, _err: &Failed, _ctx| Action::backoff(),
    ///         Arc::new(()),
    ///     )
    ///     .for_each(|res| async move {
    ///         match res {
    ///             Ok((obj, _action)) => println!("reconciled {obj}"),
    ///             Err(e) => eprintln!("{e}: {:?}", std::error::Error::source(&e)),
    ///         }
    ///     })
    ///     .await;
    /// # }
    /// ```
    pub fn run<Ctx, E, R, Fut, P>(
        self,
        reconcile: R,
        error_policy: P,
        ctx: Arc<Ctx>,
    ) -> impl Stream<Item = Result<(ObjectRef<K>, Action), Error<E>>> + Send
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + 'static,
    {
        let runner = Runner {
            shutdown: self
                .shutdown
                .unwrap_or_else(|| Box::pin(std::future::pending())),
            primary: self.primary,
            store: self.store,
            triggers: self.triggers,
            config: self.config,
            retry: self.retry,
            metrics: self.metrics,
            gate: self.gate,
            queue: WorkQueue::with_aging(self.config.aging),
            inflight: FuturesUnordered::new(),
            stopping: false,
            store_synced: false,
            init_keys: Vec::new(),
            out: VecDeque::new(),
            reconcile,
            error_policy,
            ctx,
        };
        let reports = futures::stream::unfold(runner, |mut r| async move {
            let item = r.next().await?;
            Some((item, r))
        });
        #[cfg(feature = "leader")]
        let reports = crate::leader::alongside(self.elector, reports);
        reports
    }
}

impl<K> Controller<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
{
    /// Today's simpler style, kept beside kube-rs's: runs until shutdown
    /// and drops the result stream; a failed reconcile is logged (WARN)
    /// and retried with the per-key backoff ([`Action::backoff`]). Use
    /// [`run`](Self::run) to see the results.
    pub async fn run_until_shutdown<Ctx, E, R, Fut>(self, reconcile: R, ctx: Arc<Ctx>)
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        R: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        self.run(reconcile, |_, _: &E, _| Action::backoff(), ctx)
            .for_each(|_| future::ready(()))
            .await;
    }
}

/// The owners of kind `K` named in `child`'s ownerReferences.
fn owners_of<K: Resource, C: Resource>(child: &C) -> Vec<ObjectKey> {
    let namespaced = <K::Scope as ResourceScope>::NAMESPACED;
    let meta = child.metadata();
    meta.owner_references
        .iter()
        .flatten()
        .filter(|o| o.kind == K::KIND && o.api_version == K::API_VERSION)
        .map(|o| ObjectKey {
            namespace: if namespaced {
                meta.namespace.clone()
            } else {
                None
            },
            name: o.name.clone(),
        })
        .collect()
}

/// Objects of any event, errors dropped (trigger streams log nothing the
/// primary would not: a child's watch failure only delays a trigger).
trait TouchedOk<T> {
    fn touched_objects_ok(self) -> impl Stream<Item = Result<T, WatcherError>> + Send + 'static;
}

impl<T, S> TouchedOk<T> for S
where
    T: Send + 'static,
    S: Stream<Item = Result<Event<T>, WatcherError>> + Send + 'static,
{
    fn touched_objects_ok(self) -> impl Stream<Item = Result<T, WatcherError>> + Send + 'static {
        self.filter_map(|ev| {
            future::ready(match ev {
                Ok(Event::Apply(o) | Event::InitApply(o) | Event::Delete(o)) => Some(Ok(o)),
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(error = %e, "trigger watch failed");
                    None
                }
            })
        })
    }
}

/// One item of [`Controller::run`]'s stream.
type Report<K, E> = Result<(ObjectRef<K>, Action), Error<E>>;

/// What a reconcile ended with (`None`: cancelled at the timeout).
struct Done<K, E> {
    key: ObjectKey,
    obj: Arc<K>,
    result: Option<Result<Action, E>>,
    /// Its shard was revoked (feature `shard`): cancelled, not retried.
    revoked: bool,
    started: Instant,
    priority: Priority,
}

type Inflight<K, E> = Pin<Box<dyn Future<Output = Done<K, E>> + Send>>;

struct Runner<K, Ctx, E: std::error::Error + 'static, R, P> {
    primary: Primary<K>,
    store: Store<K>,
    triggers: Triggers,
    config: Config,
    retry: RetryBackoff,
    metrics: ControllerMetrics,
    gate: Gate,
    shutdown: ShutdownFuture,
    queue: WorkQueue,
    inflight: FuturesUnordered<Inflight<K, E>>,
    stopping: bool,
    /// Whether the store holds its first complete state (or its writer is
    /// gone). Until then queued keys wait: an object triggered before the
    /// initial list is committed (a `for_stream` trigger sees `InitApply`
    /// first, a `watches` trigger may be faster than the primary list) is
    /// not in the store yet, and would be dropped as deleted. kube-rs's
    /// controller waits for its store in the same way.
    store_synced: bool,
    /// Keys of a relist in progress, with their priority: queued once the
    /// new state is visible.
    init_keys: Vec<(ObjectKey, Priority)>,
    out: VecDeque<Report<K, E>>,
    reconcile: R,
    error_policy: P,
    ctx: Arc<Ctx>,
}

impl<K, Ctx, E, R, Fut, P> Runner<K, Ctx, E, R, P>
where
    K: Resource + Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    E: std::error::Error + Send + 'static,
    R: Fn(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    P: Fn(Arc<K>, &E, Arc<Ctx>) -> Action,
{
    /// Starts what may start, then waits for the next thing to report.
    async fn next(&mut self) -> Option<Report<K, E>> {
        loop {
            if let Some(item) = self.out.pop_front() {
                return Some(item);
            }
            if !self.stopping && self.store_synced {
                self.start_ready();
            }
            if self.stopping && self.inflight.is_empty() {
                return None;
            }
            if self.metrics.enabled() {
                self.metrics.queue_depth(&self.queue.ready_by_priority());
                self.metrics.cache(self.store.memory());
            }
            let due = self.queue.next_due();
            tokio::select! {
                () = &mut self.shutdown, if !self.stopping => self.stopping = true,
                Some(done) = self.inflight.next(), if !self.inflight.is_empty() => self.finish(done),
                Some(ev) = self.primary.next(), if !self.stopping => self.primary_event(ev),
                Some(keys) = self.triggers.next(), if !self.stopping && !self.triggers.is_empty() => {
                    for (key, priority) in keys {
                        self.trigger(key, priority);
                    }
                }
                () = sleep_until(due), if !self.stopping && due.is_some() => {}
                _ = self.store.wait_until_ready(), if !self.store_synced => self.store_synced = true,
            }
        }
    }

    fn start_ready(&mut self) {
        self.queue.promote(Instant::now());
        while self.inflight.len() < self.config.concurrency {
            let Some((key, waited, priority)) = self.queue.pop_with_wait() else {
                break;
            };
            self.metrics.queue_wait(waited);
            let Some(obj) = self.store.get(&key) else {
                self.queue.done(&key);
                self.queue.forget(&key);
                continue;
            };
            let Some(fence) = admit(&self.gate, &*obj) else {
                // Another replica's shard.
                self.queue.done(&key);
                self.queue.forget(&key);
                continue;
            };
            let fut = guarded(fence, (self.reconcile)(obj.clone(), self.ctx.clone()));
            let timeout = self.config.reconcile_timeout;
            let started = Instant::now();
            self.inflight.push(Box::pin(async move {
                let (result, revoked) = match timeout {
                    Some(limit) => match tokio::time::timeout(limit, fut).await {
                        Ok(r) => {
                            let revoked = r.is_none();
                            (r, revoked)
                        }
                        Err(_) => (None, false),
                    },
                    None => {
                        let r = fut.await;
                        let revoked = r.is_none();
                        (r, revoked)
                    }
                };
                Done {
                    key,
                    obj,
                    result,
                    revoked,
                    started,
                    priority,
                }
            }));
        }
        self.metrics.active(self.queue.active_len());
    }

    fn trigger(&mut self, key: ObjectKey, priority: Priority) {
        self.metrics.queue_add();
        if self.config.debounce.is_zero() {
            self.queue.add_with(key, priority);
        } else {
            self.queue
                .add_debounced_with(key, Instant::now() + self.config.debounce, priority);
        }
    }

    /// The priority of an object of a (re)list: unchanged since the cached
    /// state (the reflector kept its `Arc`) is a resync, else a listed one.
    fn listed_priority(&self, obj: &Arc<K>) -> Priority {
        match self.store.get(&ObjectKey::of(&**obj)) {
            Some(cached) if Arc::ptr_eq(&cached, obj) => Priority::RESYNC,
            _ => Priority::INITIAL_LIST,
        }
    }

    fn primary_event(&mut self, ev: Result<Event<Arc<K>>, WatcherError>) {
        match ev {
            Ok(Event::Init) => self.init_keys.clear(),
            Ok(Event::InitApply(obj)) => {
                let priority = self.listed_priority(&obj);
                self.init_keys.push((ObjectKey::of(&*obj), priority));
            }
            Ok(Event::InitDone) => {
                for (key, priority) in std::mem::take(&mut self.init_keys) {
                    self.trigger(key, priority);
                }
            }
            Ok(Event::Apply(obj) | Event::Delete(obj)) => {
                self.trigger(ObjectKey::of(&*obj), Priority::NORMAL);
            }
            Err(source) => {
                self.metrics.watch_error(&source);
                if matches!(source, WatcherError::MemoryBudget { .. }) {
                    tracing::error!(error = %source, details = ?std::error::Error::source(&source), "primary cache stopped; the controller stops");
                    self.stopping = true;
                } else {
                    tracing::warn!(error = %source, details = ?std::error::Error::source(&source), "primary watch failed");
                }
                self.out.push_back(Err(Error::QueueError { source }));
            }
        }
    }

    fn finish(&mut self, done: Done<K, E>) {
        let Done {
            key,
            obj,
            result,
            revoked,
            started,
            priority,
        } = done;
        let requeued = self.queue.done(&key);
        self.metrics.active(self.queue.active_len());
        if revoked {
            // The new holder of the shard reconciles it.
            tracing::debug!(key = ?key, "reconcile cancelled: its shard is no longer held");
            self.queue.forget(&key);
            return;
        }
        let object = ObjectRef::from_obj(&*obj);
        let action = match &result {
            Some(Ok(action)) => *action,
            Some(Err(e)) => (self.error_policy)(obj, e, self.ctx.clone()),
            None => Action::backoff(),
        };
        let ok = matches!(result, Some(Ok(_)));
        self.requeue(key, action, ok, requeued, priority);
        let label = match (&result, action.next) {
            (Some(Err(_)) | None, _) => "error",
            (Some(Ok(_)), Next::Requeue(_)) => "requeue_after",
            (Some(Ok(_)), Next::Backoff) => "requeue",
            (Some(Ok(_)), Next::AwaitChange) => "success",
        };
        self.metrics.reconciled(started.elapsed(), label);
        self.out.push_back(match result {
            Some(Ok(action)) => Ok((object, action)),
            Some(Err(source)) => {
                tracing::warn!(object = %object, error = %source, ?action, "reconcile failed");
                Err(Error::ReconcilerFailed {
                    object: object.erase(),
                    source,
                })
            }
            None => {
                let timeout = self.config.reconcile_timeout.unwrap_or_default();
                self.metrics.reconcile_timeout();
                tracing::warn!(object = %object, ?timeout, "reconcile timed out; cancelled");
                Err(Error::ReconcileTimeout {
                    object: object.erase(),
                    timeout,
                })
            }
        });
    }

    /// Schedules `key` again as `action` says, at its priority or the one
    /// the key was reconciled at (unless a trigger already requeued it).
    fn requeue(&mut self, key: ObjectKey, action: Action, ok: bool, requeued: bool, was: Priority) {
        let priority = action.priority.unwrap_or(was);
        match action.next {
            Next::Backoff => {
                let n = self.queue.fail(&key);
                self.metrics.retry();
                if !requeued {
                    let at = Instant::now() + self.retry.delay(n);
                    self.queue.add_at_with(key, at, priority);
                }
            }
            Next::Requeue(after) => {
                if ok {
                    self.queue.forget(&key);
                }
                if !requeued {
                    self.queue
                        .add_at_with(key, Instant::now() + after, priority);
                }
            }
            Next::AwaitChange => {
                if ok {
                    self.queue.forget(&key);
                }
            }
        }
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The keys of the objects in `store` whose shard `gate` newly holds,
/// each time a tenure starts ([`Controller::sharded`](crate::Controller::sharded)'s
/// trigger). Tenures, not the held set: a shard that lapsed and was
/// re-acquired between two looks had its keys dropped meanwhile.
#[cfg(feature = "leader")]
fn acquired_keys<K>(
    gate: crate::gate::ShardGate,
    store: crate::Store<K>,
) -> impl futures::Stream<Item = Vec<crate::ObjectKey>> + Send + 'static
where
    K: kubeset_client::Resource + Send + Sync + 'static,
{
    let rx = gate.subscribe_tenures();
    let keys = futures::stream::unfold(
        (rx, Vec::<(u32, u64)>::new(), gate, store),
        |(mut rx, before, gate, store)| async move {
            rx.changed().await.ok()?;
            let now = rx.borrow_and_update().clone();
            let new: Vec<u32> = now
                .iter()
                .filter(|t| !before.contains(t))
                .map(|(s, _)| *s)
                .collect();
            let keys = if new.is_empty() {
                Vec::new()
            } else {
                store
                    .state()
                    .iter()
                    .filter(|o| {
                        let uid = o.metadata().uid.as_deref().unwrap_or_default();
                        new.contains(&gate.shard_of_uid(uid))
                    })
                    .map(|o| crate::ObjectKey::of(&**o))
                    .collect()
            };
            Some((keys, (rx, now, gate, store)))
        },
    );
    futures::StreamExt::filter(keys, |keys: &Vec<crate::ObjectKey>| {
        std::future::ready(!keys.is_empty())
    })
}

/// Features `shard`, `leader`: the gate of [`Controller::sharded`] or
/// [`Controller::leader_elected`], if any.
#[cfg(feature = "leader")]
type Gate = Option<crate::gate::ShardGate>;
#[cfg(not(feature = "leader"))]
type Gate = ();
#[cfg(feature = "leader")]
type Admitted = Option<crate::gate::Fence>;
#[cfg(not(feature = "leader"))]
type Admitted = ();

/// `None` when `obj`'s shard is not held (never without a gate).
#[cfg(feature = "leader")]
fn admit<K: Resource>(gate: &Gate, obj: &K) -> Option<Admitted> {
    match gate {
        None => Some(None),
        Some(g) => g
            .admit(obj.metadata().uid.as_deref().unwrap_or_default())
            .map(Some),
    }
}
#[cfg(not(feature = "leader"))]
fn admit<K: Resource>(_gate: &Gate, _obj: &K) -> Option<Admitted> {
    Some(())
}

/// Runs `fut` inside the fence: `None` if its shard was revoked first.
#[cfg(feature = "leader")]
async fn guarded<F: Future>(fence: Admitted, fut: F) -> Option<F::Output> {
    match fence {
        Some(fence) => fence.guard(fut).await,
        None => Some(fut.await),
    }
}
#[cfg(not(feature = "leader"))]
async fn guarded<F: Future>((): Admitted, fut: F) -> Option<F::Output> {
    Some(fut.await)
}
