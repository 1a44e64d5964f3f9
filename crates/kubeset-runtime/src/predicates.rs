//! Predicates: drop changes a controller does not care about, on any
//! watched stream (kube-rs's `predicates` and `WatchStreamExt`; the
//! controller-runtime equivalents are `GenerationChangedPredicate`,
//! `LabelChangedPredicate`, `AnnotationChangedPredicate`).
//!
//! A predicate maps an object to a hash of the property it watches
//! (`None`: "always let it through"). The filter remembers the last value
//! per object and lets an object through only when the value changed, the
//! object is new, or it was recreated (another UID). Deletions always pass.
//!
//! ```no_run
//! use futures::StreamExt as _;
//! use kubeset_client::{Api, api::core::v1::ConfigMap};
//! use kubeset_runtime::{WatchStreamExt as _, WatcherConfig, predicates, watcher};
//! # async fn run(cms: Api<ConfigMap>) {
//! let mut changed = watcher(cms, WatcherConfig::default())
//!     .applied_objects()
//!     .predicate_filter(predicates::labels)
//!     .boxed();
//! while let Some(cm) = changed.next().await {
//!     // only when the labels changed
//! #   let _ = cm;
//! }
//! # }
//! ```

use std::borrow::Borrow;
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use futures::{Stream, StreamExt as _, future};
use kubeset_client::Resource;

use crate::store::ObjectKey;
use crate::watcher::Event;

/// A property of objects of kind `K` whose changes matter (see the module
/// docs). Any `Fn(&K) -> Option<u64>` is one.
pub trait Predicate<K> {
    /// The hash of the watched property, `None` to always pass.
    fn hash_property(&self, obj: &K) -> Option<u64>;

    /// Both properties: passes when either changed.
    fn combine<P: Predicate<K>>(self, other: P) -> Combine<Self, P>
    where
        Self: Sized,
    {
        Combine(self, other)
    }

    /// This property, or `other`'s when this one is `None` (e.g.
    /// generation, falling back to resourceVersion for kinds without one).
    fn fallback<P: Predicate<K>>(self, other: P) -> Fallback<Self, P>
    where
        Self: Sized,
    {
        Fallback(self, other)
    }
}

impl<K, F: Fn(&K) -> Option<u64>> Predicate<K> for F {
    fn hash_property(&self, obj: &K) -> Option<u64> {
        self(obj)
    }
}

/// Two predicates at once ([`Predicate::combine`]).
#[derive(Debug, Clone, Copy)]
pub struct Combine<A, B>(A, B);

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Combine<A, B> {
    fn hash_property(&self, obj: &K) -> Option<u64> {
        match (self.0.hash_property(obj), self.1.hash_property(obj)) {
            (None, None) => None,
            (a, b) => Some(hash(&(a, b))),
        }
    }
}

/// A predicate with a fallback ([`Predicate::fallback`]).
#[derive(Debug, Clone, Copy)]
pub struct Fallback<A, B>(A, B);

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Fallback<A, B> {
    fn hash_property(&self, obj: &K) -> Option<u64> {
        self.0
            .hash_property(obj)
            .or_else(|| self.1.hash_property(obj))
    }
}

fn hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// `metadata.generation`: spec changes only (status and metadata writes
/// do not bump it). `None` for kinds without a generation.
pub fn generation<K: Resource>(obj: &K) -> Option<u64> {
    obj.metadata().generation.map(|g| g as u64)
}

/// `metadata.labels`.
pub fn labels<K: Resource>(obj: &K) -> Option<u64> {
    Some(hash(&obj.metadata().labels))
}

/// `metadata.annotations`.
pub fn annotations<K: Resource>(obj: &K) -> Option<u64> {
    Some(hash(&obj.metadata().annotations))
}

/// `metadata.finalizers`.
pub fn finalizers<K: Resource>(obj: &K) -> Option<u64> {
    Some(hash(&obj.metadata().finalizers))
}

/// `metadata.resourceVersion`: every change.
pub fn resource_version<K: Resource>(obj: &K) -> Option<u64> {
    obj.metadata().resource_version.as_deref().map(hash)
}

/// The last value seen per object, with its UID.
#[derive(Debug)]
pub(crate) struct PredicateState<K, P> {
    predicate: P,
    seen: HashMap<ObjectKey, (Option<String>, u64)>,
    _kind: PhantomData<fn(&K)>,
}

impl<K: Resource, P: Predicate<K>> PredicateState<K, P> {
    pub(crate) fn new(predicate: P) -> Self {
        PredicateState {
            predicate,
            seen: HashMap::new(),
            _kind: PhantomData,
        }
    }

    /// Whether a change of `obj` passes; records its value.
    pub(crate) fn admit(&mut self, obj: &K) -> bool {
        let Some(value) = self.predicate.hash_property(obj) else {
            return true;
        };
        let uid = obj.metadata().uid.clone();
        let key = ObjectKey::of(obj);
        match self.seen.insert(key, (uid.clone(), value)) {
            Some((old_uid, old)) => old != value || old_uid != uid,
            None => true,
        }
    }

    pub(crate) fn forget(&mut self, obj: &K) {
        self.seen.remove(&ObjectKey::of(obj));
    }

    /// Whether an event passes: deletions and list markers always do.
    pub(crate) fn admit_event<T: Borrow<K>>(&mut self, ev: &Event<T>) -> bool {
        match ev {
            Event::Apply(o) | Event::InitApply(o) => self.admit(o.borrow()),
            Event::Delete(o) => {
                self.forget(o.borrow());
                true
            }
            Event::Init | Event::InitDone => true,
        }
    }
}

/// Adapters on watcher streams (kube-rs's `WatchStreamExt`).
pub trait WatchStreamExt: Stream + Sized {
    /// kube-rs's `default_backoff()`, for code written for it: there it
    /// wraps a watcher, whose errors would otherwise be retried at once,
    /// in a backoff. kubeset's [`watcher`](crate::watcher()) backs off
    /// after each error itself ([`WatcherConfig::backoff`](crate::WatcherConfig::backoff),
    /// kube-rs's default schedule), so the stream is returned as is: the
    /// same pacing, without a second delay on top.
    fn default_backoff(self) -> Self {
        self
    }

    /// The objects created or changed (`Apply`, `InitApply`); errors pass.
    fn applied_objects<K, E>(self) -> impl Stream<Item = Result<K, E>>
    where
        Self: Stream<Item = Result<Event<K>, E>>,
    {
        self.filter_map(|ev| {
            future::ready(match ev {
                Ok(Event::Apply(o) | Event::InitApply(o)) => Some(Ok(o)),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            })
        })
    }

    /// Each event's object changed in place by `f` before it goes on
    /// (kube-rs's `WatchStreamExt::modify`, controller-runtime's
    /// `TransformFunc` on a stream); errors pass. For a cache, prefer
    /// [`StoreConfig::transform`](crate::StoreConfig::transform), which
    /// runs as each object is stored.
    fn modify<K, E>(self, mut f: impl FnMut(&mut K)) -> impl Stream<Item = Result<Event<K>, E>>
    where
        Self: Stream<Item = Result<Event<K>, E>>,
    {
        self.map(move |ev| ev.map(|ev| ev.modify(&mut f)))
    }

    /// The objects created, changed or deleted; errors pass.
    fn touched_objects<K, E>(self) -> impl Stream<Item = Result<K, E>>
    where
        Self: Stream<Item = Result<Event<K>, E>>,
    {
        self.filter_map(|ev| {
            future::ready(match ev {
                Ok(Event::Apply(o) | Event::InitApply(o) | Event::Delete(o)) => Some(Ok(o)),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            })
        })
    }

    /// Only the objects whose `predicate` value changed (see the module
    /// docs); errors pass. Works on `K` and `Arc<K>` items.
    fn predicate_filter<K, T, E, P>(self, predicate: P) -> impl Stream<Item = Result<T, E>>
    where
        Self: Stream<Item = Result<T, E>>,
        T: Borrow<K>,
        K: Resource,
        P: Predicate<K>,
    {
        let mut state = PredicateState::<K, P>::new(predicate);
        self.filter(move |item| {
            future::ready(match item {
                Ok(o) => state.admit(o.borrow()),
                Err(_) => true,
            })
        })
    }
}

impl<S: Stream> WatchStreamExt for S {}

#[cfg(test)]
mod tests {
    use kubeset_client::api::core::v1::ConfigMap;
    use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn cm(uid: &str, generation: i64, app: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                uid: Some(uid.into()),
                generation: Some(generation),
                labels: Some([("app".to_owned(), app.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn passes_new_changed_and_recreated_objects_only() {
        let mut s = PredicateState::new(generation::<ConfigMap>);
        assert!(s.admit(&cm("u1", 1, "x")), "new");
        assert!(!s.admit(&cm("u1", 1, "y")), "labels are not the generation");
        assert!(s.admit(&cm("u1", 2, "y")), "generation changed");
        assert!(s.admit(&cm("u2", 2, "y")), "recreated: another UID");
        assert!(s.admit_event(&Event::Delete(cm("u2", 2, "y"))));
        assert!(s.admit(&cm("u2", 2, "y")), "forgotten after delete");
    }

    #[test]
    fn combine_and_fallback() {
        let mut s = PredicateState::new(generation::<ConfigMap>.combine(labels::<ConfigMap>));
        assert!(s.admit(&cm("u", 1, "x")));
        assert!(s.admit(&cm("u", 1, "y")), "labels changed");
        assert!(!s.admit(&cm("u", 1, "y")));
        let mut no_gen = cm("u", 1, "x");
        no_gen.metadata.generation = None;
        no_gen.metadata.resource_version = Some("5".into());
        let p = generation::<ConfigMap>.fallback(resource_version::<ConfigMap>);
        assert_eq!(p.hash_property(&no_gen), resource_version(&no_gen));
    }
}
