//! Shared caches: one watch per (kind, namespace, selectors), shared by
//! every controller and task that asks for it (client-go's
//! `SharedInformerFactory`; kube-rs's is still unstable, kube-rs#1080).
//!
//! [`SharedCaches::get`] answers the same [`SharedCache`] for the same
//! kind, namespace and selectors while any handle to it is alive; the
//! watch runs in one task and stops when the last handle (including the
//! streams and controllers made from it) is dropped. Every handle reads the
//! same [`Store`] (objects behind `Arc`, indexes included), so two
//! controllers over one kind hold each object once.
//!
//! A [`subscribe`](SharedCache::subscribe)r first sees the current state
//! (`Init` … `InitDone`), then every change. One that falls behind the
//! channel (`capacity` events) sees the whole current state again instead
//! of the changes it missed, which a controller handles as a relist.
//! Watch errors are logged (WARN) in the shared task; they do not reach
//! the subscribers (a controller made with [`Controller::for_shared`]
//! reports none as `QueueError`). A cache whose
//! [`MemoryBudget`](crate::MemoryBudget) (from its `StoreConfig`, maybe
//! shared with other caches) refuses an object stops: the error is logged
//! (ERROR), its store keeps its last complete state, and its subscribers'
//! streams end.
//!
//! One factory per cluster: the key does not include the client.
//!
//! [`Controller::for_shared`]: crate::Controller::for_shared

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use futures::{Stream, StreamExt as _};
use kubeset_client::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;

use crate::store::{Store, StoreConfig, Writer, reflector};
use crate::watcher::{Event, WatcherConfig, WatcherError, watcher};

/// How many changes a subscriber may fall behind before it is resynced.
pub const DEFAULT_CAPACITY: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    kind: TypeId,
    namespace: Option<String>,
    label_selector: Option<String>,
    field_selector: Option<String>,
}

/// The factory of shared caches. Cheap to clone; clones share the caches.
#[derive(Clone, Default)]
pub struct SharedCaches {
    caches: Arc<Mutex<HashMap<CacheKey, Box<dyn Entry>>>>,
}

impl fmt::Debug for SharedCaches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self
            .caches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("SharedCaches").field("caches", &n).finish()
    }
}

impl SharedCaches {
    /// No caches yet.
    pub fn new() -> Self {
        SharedCaches::default()
    }

    /// The cache of `api`'s objects matching `config`'s selectors: the
    /// running one if any handle to it is alive, else a new one (whose
    /// store uses `store_config`; a running cache keeps its own).
    /// Must be called within a Tokio runtime.
    pub fn get<K>(
        &self,
        api: Api<K>,
        config: WatcherConfig,
        store_config: StoreConfig<K>,
    ) -> SharedCache<K>
    where
        K: Resource + DeserializeOwned + Send + Sync + 'static,
    {
        let key = CacheKey {
            kind: TypeId::of::<K>(),
            namespace: api.namespace().map(str::to_owned),
            label_selector: config.label_selector.clone(),
            field_selector: config.field_selector.clone(),
        };
        let mut caches = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
        caches.retain(|_, entry| entry.alive());
        let running = caches
            .get(&key)
            .and_then(|e| e.as_any().downcast_ref::<Weak<Inner<K>>>())
            .and_then(Weak::upgrade);
        if let Some(inner) = running {
            return SharedCache { inner };
        }
        let cache = SharedCache::start(api, config, store_config, DEFAULT_CAPACITY);
        caches.insert(key, Box::new(Arc::downgrade(&cache.inner)));
        cache
    }

    /// How many caches are running.
    pub fn len(&self) -> usize {
        let mut caches = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
        caches.retain(|_, entry| entry.alive());
        caches.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A factory entry: a `Weak<Inner<K>>` with its kind erased.
trait Entry: Send {
    fn alive(&self) -> bool;
    fn as_any(&self) -> &dyn Any;
}

impl<K: Send + Sync + 'static> Entry for Weak<Inner<K>> {
    fn alive(&self) -> bool {
        self.strong_count() > 0
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The channel's sender, shared by the handles and the task.
type SenderSlot<K> = Arc<Mutex<Option<broadcast::Sender<Event<Arc<K>>>>>>;

struct Inner<K> {
    store: Store<K>,
    /// `None` once the cache stopped at its memory budget (subscribers'
    /// streams end).
    tx: SenderSlot<K>,
    task: tokio::task::JoinHandle<()>,
}

impl<K> Drop for Inner<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A handle to a shared cache (see the module docs). Cheap to clone.
pub struct SharedCache<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedCache<K> {
    fn clone(&self) -> Self {
        SharedCache {
            inner: self.inner.clone(),
        }
    }
}

impl<K> fmt::Debug for SharedCache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedCache")
            .field("store", &self.inner.store)
            .field("handles", &Arc::strong_count(&self.inner))
            .finish()
    }
}

impl<K> SharedCache<K>
where
    K: Resource + DeserializeOwned + Send + Sync + 'static,
{
    /// A cache of its own (not registered in a factory), whose
    /// subscribers may fall `capacity` changes behind.
    pub fn start(
        api: Api<K>,
        config: WatcherConfig,
        store_config: StoreConfig<K>,
        capacity: usize,
    ) -> Self {
        let writer = Writer::new(store_config);
        let store = writer.store();
        let (sender, _) = broadcast::channel(capacity.max(1));
        let tx = Arc::new(Mutex::new(Some(sender.clone())));
        let slot = tx.clone();
        let task = tokio::spawn(async move {
            let mut events = Box::pin(reflector(writer, watcher(api, config)));
            while let Some(ev) = events.next().await {
                match ev {
                    Ok(ev) => {
                        // No subscriber is fine: the store is the state.
                        let _ = sender.send(ev);
                    }
                    Err(e @ WatcherError::MemoryBudget { .. }) => {
                        tracing::error!(error = %e, details = ?std::error::Error::source(&e), "shared cache stopped; its subscribers' streams end");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, details = ?std::error::Error::source(&e), "shared cache watch failed")
                    }
                }
            }
            // The reflector ends only at the budget: close the channel.
            slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        });
        SharedCache {
            inner: Arc::new(Inner { store, tx, task }),
        }
    }
}

impl<K: Send + Sync + 'static> SharedCache<K> {
    /// The shared store.
    pub fn store(&self) -> Store<K> {
        self.inner.store.clone()
    }

    /// How many handles exist (this one, clones, subscriptions).
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// The current state, then every change (see the module docs). The
    /// stream holds a handle: the watch runs while it is alive.
    pub fn subscribe(&self) -> impl Stream<Item = Event<Arc<K>>> + Send + 'static {
        let rx = self
            .inner
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(broadcast::Sender::subscribe);
        let Some(rx) = rx else {
            return futures::stream::empty().left_stream();
        };
        let mut pending = VecDeque::new();
        // Ready: the snapshot is a whole initial state. Not ready: the
        // first list may be under way, its `Init` already sent; `joined`
        // says whether this subscriber has its start.
        let joined = self.inner.store.is_ready();
        if joined {
            pending.extend(snapshot(&self.inner.store));
        }
        let state = (self.clone(), rx, pending, joined);
        futures::stream::unfold(
            state,
            |(cache, mut rx, mut pending, mut joined)| async move {
                loop {
                    if let Some(ev) = pending.pop_front() {
                        return Some((ev, (cache, rx, pending, joined)));
                    }
                    match rx.recv().await {
                        Ok(ev) => match admit(&mut joined, ev) {
                            Admit::Yield(ev) => return Some((ev, (cache, rx, pending, joined))),
                            Admit::Skip => {}
                            Admit::Snapshot => pending.extend(snapshot(&cache.inner.store)),
                        },
                        Err(broadcast::error::RecvError::Lagged(missed)) => {
                            tracing::debug!(missed, "shared cache subscriber lagged; resyncing it");
                            joined = true;
                            pending.extend(snapshot(&cache.inner.store));
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            },
        )
        .right_stream()
    }
}

/// What a subscriber does with a broadcast event.
#[derive(Debug, PartialEq)]
enum Admit<T> {
    /// Hand it on.
    Yield(Event<T>),
    /// Drop it: an object of an initial state whose `Init` this
    /// subscriber did not see.
    Skip,
    /// The initial state it joined late is complete: hand on the store's
    /// whole state instead (it holds that list now).
    Snapshot,
}

/// A subscriber that joined while the first list was under way (not
/// `joined`) must not see that list's tail as if it were whole: a
/// controller would queue only the objects after its join. Until it sees
/// an `Init`, it drops `InitApply`s, and at `InitDone` takes the store's
/// state.
fn admit<T>(joined: &mut bool, ev: Event<T>) -> Admit<T> {
    match ev {
        Event::Init => {
            *joined = true;
            Admit::Yield(Event::Init)
        }
        Event::InitApply(_) if !*joined => Admit::Skip,
        Event::InitDone if !*joined => {
            *joined = true;
            Admit::Snapshot
        }
        ev => Admit::Yield(ev),
    }
}

/// The whole state of `store` as a relist.
fn snapshot<K>(store: &Store<K>) -> Vec<Event<Arc<K>>> {
    let mut out = vec![Event::Init];
    out.extend(store.state().into_iter().map(Event::InitApply));
    out.push(Event::InitDone);
    out
}

#[cfg(test)]
mod tests {
    use super::{Admit, Event, admit};

    #[test]
    fn a_subscriber_that_joined_mid_list_gets_the_whole_state_at_init_done() {
        let mut joined = false;
        assert_eq!(admit(&mut joined, Event::InitApply(7)), Admit::Skip);
        assert_eq!(admit(&mut joined, Event::InitApply(8)), Admit::Skip);
        assert_eq!(admit::<i32>(&mut joined, Event::InitDone), Admit::Snapshot);
        assert!(joined);
        assert_eq!(
            admit(&mut joined, Event::Apply(9)),
            Admit::Yield(Event::Apply(9))
        );
    }

    #[test]
    fn a_subscriber_that_saw_init_gets_the_list_as_sent() {
        let mut joined = false;
        assert_eq!(
            admit::<i32>(&mut joined, Event::Init),
            Admit::Yield(Event::Init)
        );
        assert_eq!(
            admit(&mut joined, Event::InitApply(7)),
            Admit::Yield(Event::InitApply(7))
        );
        assert_eq!(
            admit::<i32>(&mut joined, Event::InitDone),
            Admit::Yield(Event::InitDone)
        );
        // A later relist is handed on as sent.
        assert_eq!(
            admit::<i32>(&mut joined, Event::Init),
            Admit::Yield(Event::Init)
        );
        assert_eq!(
            admit(&mut joined, Event::InitApply(1)),
            Admit::Yield(Event::InitApply(1))
        );
    }
}
