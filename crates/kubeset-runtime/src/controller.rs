//! The controller: a reconcile function driven by a work queue.
//!
//! Triggers come from the primary kind (every change of an object queues
//! its key), from owned kinds (a change of a child queues the owner named
//! in its `ownerReferences`), and from any mapped watch or key stream. The
//! queue ([`WorkQueue`]) deduplicates keys, never hands out a key that is
//! being reconciled (a trigger during a reconcile queues it again once that
//! reconcile ends), and delays keys whose reconcile failed with per-key
//! exponential backoff. At most `concurrency` reconciles run at once.
//!
//! The reconcile function receives the object from the primary
//! [`Store`]; keys whose object is gone (deleted) are dropped.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{BoxStream, FuturesUnordered, SelectAll};
use futures::{Stream, StreamExt as _};
use kubeset_client::{Api, Resource, ResourceScope};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::store::{ObjectKey, Store, StoreConfig, Writer, reflector};
use crate::watcher::{Event, WatcherConfig, metadata_watcher, watcher};

/// What to do with a key after a successful reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reconcile again after this long (unless a change comes first).
    Requeue(Duration),
    /// Reconcile again only when something changes.
    AwaitChange,
}

impl Action {
    /// Reconcile again after `after`.
    pub fn requeue(after: Duration) -> Self {
        Action::Requeue(after)
    }

    /// Reconcile again on the next change only.
    pub fn await_change() -> Self {
        Action::AwaitChange
    }
}

/// A deduplicating, delaying work queue of keys (client-go's workqueue
/// semantics: a key is queued at most once, and never handed out while it
/// is being processed).
#[derive(Debug, Default)]
pub struct WorkQueue {
    ready: VecDeque<ObjectKey>,
    queued: HashSet<ObjectKey>,
    delayed: BTreeMap<(Instant, u64), ObjectKey>,
    delayed_at: HashMap<ObjectKey, (Instant, u64)>,
    seq: u64,
    active: HashSet<ObjectKey>,
    dirty: HashSet<ObjectKey>,
    failures: HashMap<ObjectKey, u32>,
}

impl WorkQueue {
    /// Queues `key` now (no-op if queued; remembered if active).
    pub fn add(&mut self, key: ObjectKey) {
        if self.active.contains(&key) {
            self.dirty.insert(key);
            return;
        }
        if let Some(at) = self.delayed_at.remove(&key) {
            self.delayed.remove(&at);
        }
        if self.queued.insert(key.clone()) {
            self.ready.push_back(key);
        }
    }

    /// Queues `key` at `at` (an earlier schedule or a queued key wins).
    pub fn add_at(&mut self, key: ObjectKey, at: Instant) {
        if self.queued.contains(&key) || self.dirty.contains(&key) {
            return;
        }
        if let Some(prev) = self.delayed_at.get(&key) {
            if prev.0 <= at {
                return;
            }
            let prev = *prev;
            self.delayed.remove(&prev);
        }
        self.seq += 1;
        let slot = (at, self.seq);
        self.delayed.insert(slot, key.clone());
        self.delayed_at.insert(key, slot);
    }

    /// Moves every key due at `now` to the ready queue.
    pub fn promote(&mut self, now: Instant) {
        while let Some(entry) = self.delayed.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.delayed_at.remove(&key);
            if self.active.contains(&key) {
                self.dirty.insert(key);
            } else if self.queued.insert(key.clone()) {
                self.ready.push_back(key);
            }
        }
    }

    /// When the next delayed key is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.keys().next().map(|(at, _)| *at)
    }

    /// Takes the next ready key and marks it active.
    pub fn pop(&mut self) -> Option<ObjectKey> {
        let key = self.ready.pop_front()?;
        self.queued.remove(&key);
        self.active.insert(key.clone());
        Some(key)
    }

    /// Marks `key` no longer active; requeues it if it was triggered
    /// meanwhile. Returns whether it was requeued.
    pub fn done(&mut self, key: &ObjectKey) -> bool {
        self.active.remove(key);
        if self.dirty.remove(key) {
            self.add(key.clone());
            true
        } else {
            false
        }
    }

    /// Counts a failure of `key` and returns how many in a row.
    pub fn fail(&mut self, key: &ObjectKey) -> u32 {
        let n = self.failures.entry(key.clone()).or_insert(0);
        *n = n.saturating_add(1);
        *n
    }

    /// Forgets the failures of `key`.
    pub fn forget(&mut self, key: &ObjectKey) {
        self.failures.remove(key);
    }

    /// Keys waiting (ready or delayed), not counting active ones.
    pub fn len(&self) -> usize {
        self.ready.len() + self.delayed.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Per-key failure backoff: `base · 2^(failures−1)`, capped at `max`
/// (client-go's item exponential failure rate limiter: 5 ms to 1000 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryBackoff {
    /// Delay after the first failure.
    pub base: Duration,
    /// Largest delay.
    pub max: Duration,
}

impl Default for RetryBackoff {
    fn default() -> Self {
        RetryBackoff {
            base: Duration::from_millis(5),
            max: Duration::from_secs(1000),
        }
    }
}

impl RetryBackoff {
    /// The delay after `failures` failures in a row (at least 1).
    pub fn delay(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(40);
        let factor = 1u64 << exp;
        let nanos = u64::try_from(self.base.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(nanos.saturating_mul(factor)).min(self.max)
    }
}

type ShutdownFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A controller for kind `K`: see the module docs.
#[must_use]
pub struct Controller<K> {
    primary: BoxStream<'static, Event<ObjectKey>>,
    store: Store<K>,
    triggers: SelectAll<BoxStream<'static, Vec<ObjectKey>>>,
    concurrency: usize,
    retry: RetryBackoff,
    shutdown: Option<ShutdownFuture>,
}

impl<K> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("store", &self.store)
            .field("concurrency", &self.concurrency)
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
        let primary = reflector(writer, watcher(api, config))
            .filter_map(|ev| async move {
                match ev {
                    Ok(ev) => Some(ev.map(|o| ObjectKey::of(&*o))),
                    Err(e) => {
                        tracing::warn!(error = %e, "primary watch failed");
                        None
                    }
                }
            })
            .boxed();
        Controller {
            primary,
            store,
            triggers: SelectAll::new(),
            concurrency: 4,
            retry: RetryBackoff::default(),
            shutdown: None,
        }
    }

    /// The primary cache, also what reconcile reads from.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// Reconciles the owner (of kind `K`) of every changed object of
    /// `api`, found in its `ownerReferences`. Only metadata is watched.
    pub fn owns<C>(self, api: Api<C>, config: WatcherConfig) -> Self
    where
        C: Resource + Send + 'static,
    {
        let namespaced = <K::Scope as ResourceScope>::NAMESPACED;
        let keys = metadata_watcher(api, config).filter_map(move |ev| async move {
            let ev = ev.ok()?;
            let child = ev.object()?;
            let meta = &child.metadata;
            let owners: Vec<ObjectKey> = meta
                .owner_references
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
                .collect();
            (!owners.is_empty()).then_some(owners)
        });
        self.triggers(keys)
    }

    /// Reconciles the keys `mapper` returns for every changed object of `api`.
    pub fn watches<O>(
        self,
        api: Api<O>,
        config: WatcherConfig,
        mapper: impl Fn(&O) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) -> Self
    where
        O: Resource + DeserializeOwned + Send + 'static,
    {
        let mapper = Arc::new(mapper);
        let keys = watcher(api, config).filter_map(move |ev| {
            let mapper = mapper.clone();
            async move {
                let ev = ev.ok()?;
                let keys = mapper(ev.object()?);
                (!keys.is_empty()).then_some(keys)
            }
        });
        self.triggers(keys)
    }

    /// Reconciles every batch of keys `stream` yields (any other trigger:
    /// timers, webhooks, channels).
    pub fn triggers(mut self, stream: impl Stream<Item = Vec<ObjectKey>> + Send + 'static) -> Self {
        self.triggers.push(stream.boxed());
        self
    }

    /// At most `n` reconciles at once (at least 1; default 4).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Sets the per-key backoff after failed reconciles.
    pub fn retry_backoff(mut self, retry: RetryBackoff) -> Self {
        self.retry = retry;
        self
    }

    /// Stops when `signal` completes: no new reconciles start, running ones
    /// finish, then [`run`](Self::run) returns.
    pub fn graceful_shutdown_on(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Runs until shutdown. `reconcile` gets the cached object and the
    /// shared context; an `Err` requeues the key with backoff (and is logged).
    pub async fn run<Ctx, E, F, Fut>(self, reconcile: F, ctx: Arc<Ctx>)
    where
        Ctx: Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let Controller {
            mut primary,
            store,
            mut triggers,
            concurrency,
            retry,
            shutdown,
        } = self;
        let mut shutdown = shutdown.unwrap_or_else(|| Box::pin(std::future::pending()));
        let mut queue = WorkQueue::default();
        let mut inflight = FuturesUnordered::new();
        let mut stopping = false;
        // Keys of a relist in progress: queued once the new state is visible.
        let mut init_keys: Vec<ObjectKey> = Vec::new();
        loop {
            if !stopping {
                queue.promote(Instant::now());
                while inflight.len() < concurrency {
                    let Some(key) = queue.pop() else { break };
                    let Some(obj) = store.get(&key) else {
                        queue.done(&key);
                        queue.forget(&key);
                        continue;
                    };
                    let fut = reconcile(obj, ctx.clone());
                    inflight.push(async move { (key, fut.await) });
                }
            }
            if stopping && inflight.is_empty() {
                return;
            }
            let due = queue.next_due();
            tokio::select! {
                () = &mut shutdown, if !stopping => stopping = true,
                Some((key, result)) = inflight.next(), if !inflight.is_empty() => {
                    let requeued = queue.done(&key);
                    match result {
                        Ok(action) => {
                            queue.forget(&key);
                            if let (Action::Requeue(after), false) = (action, requeued) {
                                queue.add_at(key, Instant::now() + after);
                            }
                        }
                        Err(e) => {
                            let n = queue.fail(&key);
                            let after = retry.delay(n);
                            tracing::warn!(%key, error = %e, failures = n, ?after, "reconcile failed");
                            if !requeued {
                                queue.add_at(key, Instant::now() + after);
                            }
                        }
                    }
                }
                Some(ev) = primary.next(), if !stopping => match ev {
                    Event::Init => init_keys.clear(),
                    Event::InitApply(key) => init_keys.push(key),
                    Event::InitDone => {
                        for key in init_keys.drain(..) {
                            queue.add(key);
                        }
                    }
                    Event::Apply(key) | Event::Delete(key) => queue.add(key),
                },
                Some(keys) = triggers.next(), if !stopping && !triggers.is_empty() => {
                    for key in keys {
                        queue.add(key);
                    }
                }
                () = sleep_until(due), if !stopping && due.is_some() => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: &str) -> ObjectKey {
        ObjectKey::namespaced("ns", n)
    }

    #[test]
    fn queue_dedups_and_never_hands_out_an_active_key() {
        let mut q = WorkQueue::default();
        q.add(k("a"));
        q.add(k("b"));
        q.add(k("a"));
        assert_eq!(q.len(), 2);
        let a = q.pop().unwrap();
        assert_eq!(a, k("a"));
        q.add(k("a"));
        q.add(k("a"));
        assert_eq!(q.pop(), Some(k("b")));
        assert_eq!(q.pop(), None, "a is active, its new trigger waits");
        assert!(
            q.done(&k("a")),
            "triggered while active: queued again, once"
        );
        assert_eq!(q.pop(), Some(k("a")));
        assert_eq!(q.pop(), None);
        assert!(!q.done(&k("a")));
        assert!(!q.done(&k("b")));
        assert!(q.is_empty());
    }

    #[test]
    fn delayed_keys_keep_the_earliest_schedule_and_yield_to_immediate_adds() {
        let mut q = WorkQueue::default();
        let t = Instant::now();
        q.add_at(k("a"), t + Duration::from_secs(10));
        q.add_at(k("a"), t + Duration::from_secs(5));
        q.add_at(k("a"), t + Duration::from_secs(20));
        assert_eq!(q.next_due(), Some(t + Duration::from_secs(5)));
        q.promote(t + Duration::from_secs(4));
        assert_eq!(q.pop(), None);
        q.promote(t + Duration::from_secs(5));
        assert_eq!(q.pop(), Some(k("a")));
        q.done(&k("a"));
        q.add_at(k("b"), t + Duration::from_secs(30));
        q.add(k("b"));
        assert_eq!(q.next_due(), None, "an immediate add cancels the delay");
        assert_eq!(q.pop(), Some(k("b")));
    }

    #[test]
    fn retry_backoff_doubles_to_the_cap() {
        let r = RetryBackoff::default();
        assert_eq!(r.delay(1), Duration::from_millis(5));
        assert_eq!(r.delay(2), Duration::from_millis(10));
        assert_eq!(r.delay(11), Duration::from_millis(5120));
        assert_eq!(r.delay(30), Duration::from_secs(1000));
        assert_eq!(r.delay(u32::MAX), Duration::from_secs(1000));
        let mut q = WorkQueue::default();
        assert_eq!(q.fail(&k("a")), 1);
        assert_eq!(q.fail(&k("a")), 2);
        q.forget(&k("a"));
        assert_eq!(q.fail(&k("a")), 1);
    }
}
