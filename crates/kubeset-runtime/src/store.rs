//! A local cache of objects, fed by a watcher.
//!
//! [`Store<K>`] is the read side (cheap to clone, shared between tasks);
//! [`Writer<K>`] the single write side that applies watcher [`Event`]s.
//! Objects are held as `Arc<K>`: readers clone pointers under a read lock
//! held for a map lookup, never for I/O.
//!
//! **Invariant:** the indexes always describe exactly the objects in the
//! map; every apply, delete and swap updates both under one write lock.
//!
//! A relist (`Init` … `InitDone`) builds the new state aside and swaps it in
//! one step. Objects whose resourceVersion did not change reuse the cached
//! `Arc`, so during a relist only the changed objects exist twice.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::{Stream, StreamExt as _};
use kubeset_client::Resource;
use serde::Serialize;
use tokio::sync::watch;

use crate::memory::{self, CacheMemory, MemoryBudget, MemoryBudgetExceeded};
use crate::watcher::Event;

/// Where an object lives: namespace (none for cluster-scoped kinds) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The namespace, `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// A key in a namespace.
    pub fn namespaced(namespace: &str, name: &str) -> Self {
        ObjectKey {
            namespace: Some(namespace.to_owned()),
            name: name.to_owned(),
        }
    }

    /// A key of a cluster-scoped object.
    pub fn cluster(name: &str) -> Self {
        ObjectKey {
            namespace: None,
            name: name.to_owned(),
        }
    }

    /// The key of an object (empty name if it has none).
    pub fn of<K: Resource>(obj: &K) -> Self {
        let meta = obj.metadata();
        ObjectKey {
            namespace: meta.namespace.clone().filter(|ns| !ns.is_empty()),
            name: meta.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// An index function: the index values an object is filed under.
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// A change made to each object before it is stored
/// ([`StoreConfig::transform`]).
type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

struct Index<K> {
    func: IndexFn<K>,
    entries: HashMap<String, HashSet<ObjectKey>>,
}

impl<K> Index<K> {
    /// An index by `func` of no objects yet.
    fn empty(func: IndexFn<K>) -> Self {
        Index {
            func,
            entries: HashMap::new(),
        }
    }

    fn add(&mut self, key: &ObjectKey, obj: &K) {
        for value in (self.func)(obj) {
            self.entries.entry(value).or_default().insert(key.clone());
        }
    }

    fn remove(&mut self, key: &ObjectKey, obj: &K) {
        for value in (self.func)(obj) {
            if let Some(set) = self.entries.get_mut(&value) {
                set.remove(key);
                if set.is_empty() {
                    self.entries.remove(&value);
                }
            }
        }
    }
}

/// A cached object and its estimated bytes (0 when not counted).
struct Slot<K> {
    obj: Arc<K>,
    bytes: u64,
}

impl<K> Clone for Slot<K> {
    fn clone(&self) -> Self {
        Slot {
            obj: self.obj.clone(),
            bytes: self.bytes,
        }
    }
}

struct Inner<K> {
    objects: HashMap<ObjectKey, Slot<K>>,
    indexes: HashMap<String, Index<K>>,
}

impl<K> Inner<K> {
    /// Files `slot` under `key`; returns the bytes of the one it replaced.
    fn insert(&mut self, key: ObjectKey, slot: Slot<K>) -> u64 {
        let old = self.objects.get(&key);
        if let Some(old) = old {
            for idx in self.indexes.values_mut() {
                idx.remove(&key, &old.obj);
            }
        }
        let old_bytes = old.map_or(0, |o| o.bytes);
        for idx in self.indexes.values_mut() {
            idx.add(&key, &slot.obj);
        }
        self.objects.insert(key, slot);
        old_bytes
    }

    fn remove(&mut self, key: &ObjectKey) -> Option<Slot<K>> {
        let old = self.objects.remove(key)?;
        for idx in self.indexes.values_mut() {
            idx.remove(key, &old.obj);
        }
        Some(old)
    }
}

/// What a cache holds, shared by its readers and its writer; gives its
/// bytes back to the budget when the last of them is gone.
struct Counters {
    objects: AtomicU64,
    bytes: AtomicU64,
    budget: Option<MemoryBudget>,
}

/// Sets `counter` to `f` of its value (relaxed, as every use of the
/// counters: they are figures to read, ordering nothing).
fn update(counter: &AtomicU64, f: impl Fn(u64) -> u64) {
    // The closure always answers `Some`: the update cannot fail.
    let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(f(n)));
}

impl Drop for Counters {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.release(*self.bytes.get_mut());
        }
    }
}

/// The read side of a cache. Clones share the same cache.
pub struct Store<K> {
    inner: Arc<RwLock<Inner<K>>>,
    ready: watch::Receiver<bool>,
    counters: Arc<Counters>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            inner: self.inner.clone(),
            ready: self.ready.clone(),
            counters: self.counters.clone(),
        }
    }
}

impl<K> fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("len", &self.len())
            .field("ready", &*self.ready.borrow())
            .finish()
    }
}

impl<K> Store<K> {
    fn read(&self) -> RwLockReadGuard<'_, Inner<K>> {
        // A panic while holding the lock cannot leave the maps half
        // updated in a way readers could not survive; keep serving.
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner<K>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The object at `key` (an [`ObjectKey`] or an
    /// [`ObjectRef`](crate::ObjectRef), as kube-rs's `Store::get`: the
    /// kind of `store.get(&ObjectRef::new(name).within(ns))` is inferred).
    pub fn get(&self, key: &(impl StoreKey<K> + ?Sized)) -> Option<Arc<K>> {
        self.read().objects.get(key.key()).map(|s| s.obj.clone())
    }

    /// Every cached object, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.read()
            .objects
            .values()
            .map(|s| s.obj.clone())
            .collect()
    }

    /// Objects held and their estimated bytes: during a relist the new
    /// objects beside the old state count too; bytes are 0 unless the
    /// cache counts them ([`StoreConfig::count_memory`]). Two atomic
    /// loads, no lock.
    ///
    /// ```
    /// use kubeset_client::api::core::v1::ConfigMap;
    /// use kubeset_runtime::{Event, StoreConfig, Writer};
    ///
    /// let mut writer = Writer::new(StoreConfig::<ConfigMap>::new().count_memory());
    /// let store = writer.store();
    /// writer.apply(Event::Apply(ConfigMap::default()));
    /// let held = store.memory();
    /// assert_eq!(held.objects, 1);
    /// assert!(held.bytes >= std::mem::size_of::<ConfigMap>() as u64);
    /// ```
    pub fn memory(&self) -> CacheMemory {
        CacheMemory {
            objects: self.counters.objects.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
        }
    }

    /// Every key, in no particular order.
    pub fn keys(&self) -> Vec<ObjectKey> {
        self.read().objects.keys().cloned().collect()
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first object matching `pred`.
    pub fn find(&self, mut pred: impl FnMut(&K) -> bool) -> Option<Arc<K>> {
        self.read()
            .objects
            .values()
            .find(|s| pred(&s.obj))
            .map(|s| s.obj.clone())
    }

    /// Objects filed under `value` in the index `index` (empty when either
    /// is unknown).
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        let inner = self.read();
        let Some(keys) = inner.indexes.get(index).and_then(|i| i.entries.get(value)) else {
            return Vec::new();
        };
        keys.iter()
            .filter_map(|k| inner.objects.get(k).map(|s| s.obj.clone()))
            .collect()
    }

    /// The values of index `index` that have objects.
    pub fn index_values(&self, index: &str) -> Vec<String> {
        self.read()
            .indexes
            .get(index)
            .map(|i| i.entries.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether a first complete state has been swapped in.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// Waits until a first complete state has been swapped in, as
    /// kube-rs's `Store::wait_until_ready`.
    ///
    /// # Errors
    ///
    /// [`WriterDropped`] when the [`Writer`] (the reflector feeding this
    /// store) was dropped before the store became ready: it never will.
    /// A store that was ready once stays ready, its writer gone or not.
    pub async fn wait_until_ready(&self) -> Result<(), WriterDropped> {
        let mut rx = self.ready.clone();
        rx.wait_for(|r| *r)
            .await
            .map(|_| ())
            .map_err(|_| WriterDropped)
    }
}

/// [`Store::wait_until_ready`]'s error (kube-rs's
/// `reflector::store::WriterDropped`): the store's [`Writer`] was dropped
/// before a first complete state was swapped in.
///
/// ```
/// use kubeset_runtime::reflector::store::WriterDropped;
/// assert_eq!(WriterDropped.to_string(), "writer was dropped before store became ready");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("writer was dropped before store became ready")]
pub struct WriterDropped;

/// What [`Store::get`] looks up: an [`ObjectKey`], or an
/// [`ObjectRef`](crate::ObjectRef) of the store's kind (so its kind
/// parameter is inferred, as with kube-rs's `Store::get(&ObjectRef<K>)`).
pub trait StoreKey<K> {
    /// The key.
    fn key(&self) -> &ObjectKey;
}

impl<K> StoreKey<K> for ObjectKey {
    fn key(&self) -> &ObjectKey {
        self
    }
}

/// Settings of a [`Writer`].
#[derive(Clone, Default)]
#[must_use]
pub struct StoreConfig<K> {
    drop_managed_fields: bool,
    transform: Option<Transform<K>>,
    indexes: Vec<(String, IndexFn<K>)>,
    size: Option<fn(&K) -> u64>,
    budget: Option<MemoryBudget>,
}

impl<K> fmt::Debug for StoreConfig<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.indexes.iter().map(|(n, _)| n).collect();
        f.debug_struct("StoreConfig")
            .field("drop_managed_fields", &self.drop_managed_fields)
            .field("transform", &self.transform.is_some())
            .field("indexes", &names)
            .field("count_memory", &self.size.is_some())
            .field("budget", &self.budget)
            .finish()
    }
}

/// Name of the index added by [`StoreConfig::index_by_namespace`].
pub const NAMESPACE_INDEX: &str = "namespace";

impl<K: Resource + 'static> StoreConfig<K> {
    /// No indexes, `managedFields` kept.
    pub fn new() -> Self {
        StoreConfig {
            drop_managed_fields: false,
            transform: None,
            indexes: Vec::new(),
            size: None,
            budget: None,
        }
    }

    /// Drop `metadata.managedFields` before caching (often a third of an
    /// object's size, rarely read by controllers).
    pub fn drop_managed_fields(mut self) -> Self {
        self.drop_managed_fields = true;
        self
    }

    /// Changes each object in place before it is stored (after
    /// [`drop_managed_fields`](Self::drop_managed_fields)):
    /// controller-runtime's cache `TransformFunc`, kube-rs's
    /// `modify`. The cache, its indexes, its memory count and the
    /// controller's reconciles all see the transformed object, so clear
    /// only what none of them reads. Runs once per stored version.
    ///
    /// ```
    /// # use kubeset_client::api::core::v1::Pod;
    /// use kubeset_runtime::StoreConfig;
    /// // Keep no container environment or annotations in the cache.
    /// let config = StoreConfig::<Pod>::new().transform(|pod| {
    ///     pod.metadata.annotations = None;
    ///     for c in pod.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
    ///         c.env = None;
    ///     }
    /// });
    /// # let _ = config;
    /// ```
    pub fn transform(mut self, f: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(f));
        self
    }

    /// Estimates the bytes of each object as it is cached
    /// ([`memory::estimate`], a deep-size walk; see [`crate::memory`]),
    /// for [`Store::memory`] and the controller's `kubeset_cache_bytes`.
    pub fn count_memory(mut self) -> Self
    where
        K: Serialize,
    {
        self.size = Some(memory::estimate::<K>);
        self
    }

    /// Counts memory ([`count_memory`](Self::count_memory)) and charges it
    /// to `budget`, which other caches may share: an object that would
    /// cross it is refused and the reflector fails with
    /// [`WatcherError::MemoryBudget`](crate::WatcherError::MemoryBudget)
    /// naming the kind, the objects and the bytes, then ends (the store
    /// keeps its last state; a relist in progress is dropped). A `WARN`
    /// log says when the budget is 80 % used.
    pub fn memory_budget(mut self, budget: &MemoryBudget) -> Self
    where
        K: Serialize,
    {
        self.budget = Some(budget.clone());
        self.count_memory()
    }

    /// Adds an index named `name` filing each object under the values `f`
    /// returns.
    pub fn index(
        mut self,
        name: &str,
        f: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.indexes.push((name.to_owned(), Arc::new(f)));
        self
    }

    /// Adds the index [`NAMESPACE_INDEX`] (cluster-scoped objects under `""`).
    pub fn index_by_namespace(self) -> Self {
        self.index(NAMESPACE_INDEX, |o: &K| {
            vec![o.metadata().namespace.clone().unwrap_or_default()]
        })
    }

    /// Adds an index named `label:<key>` by the value of label `key`
    /// (objects without the label are not filed).
    pub fn index_by_label(self, key: &str) -> Self {
        let name = label_index(key);
        let key = key.to_owned();
        self.index(&name, move |o: &K| {
            o.metadata()
                .labels
                .as_ref()
                .and_then(|l| l.get(&key))
                .map(|v| vec![v.clone()])
                .unwrap_or_default()
        })
    }
}

/// The name of the index added by [`StoreConfig::index_by_label`].
pub fn label_index(key: &str) -> String {
    format!("label:{key}")
}

/// The write side of a cache: applies watcher events.
pub struct Writer<K> {
    store: Store<K>,
    ready: watch::Sender<bool>,
    drop_managed_fields: bool,
    transform: Option<Transform<K>>,
    size: Option<fn(&K) -> u64>,
    /// The state being built during a relist.
    building: Option<HashMap<ObjectKey, Slot<K>>>,
    /// Bytes of the building state, and of its objects not shared with
    /// the current one (what the relist adds until the swap).
    building_bytes: u64,
    building_extra: u64,
    building_new: u64,
}

impl<K> fmt::Debug for Writer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("store", &self.store)
            .field("building", &self.building.as_ref().map(HashMap::len))
            .finish()
    }
}

impl<K> Drop for Writer<K> {
    /// A relist in progress dies with its writer: its new objects' bytes
    /// go back (the store's own go back with its last handle).
    fn drop(&mut self) {
        let c = &self.store.counters;
        if let Some(budget) = &c.budget {
            budget.release(self.building_extra);
        }
        let (extra, new) = (self.building_extra, self.building_new);
        update(&c.bytes, |n| n.saturating_sub(extra));
        update(&c.objects, |n| n.saturating_sub(new));
    }
}

impl<K: Resource + 'static> Default for Writer<K> {
    fn default() -> Self {
        Self::new(StoreConfig::new())
    }
}

/// An applied event, or the budget's refusal with the refused object.
type Applied<K> = Result<Event<Arc<K>>, (MemoryBudgetExceeded, Event<Arc<K>>)>;

/// The table slot of an entry, at hashbrown's largest load (7/8), and
/// the key's strings (a block each, see [`memory::allocation`]).
fn entry_bytes<K>(key: &ObjectKey) -> u64 {
    let slot = std::mem::size_of::<(ObjectKey, Slot<K>)>() + 1;
    let block = |s: &String| memory::allocation(s.len());
    let strings = block(&key.name) + key.namespace.as_ref().map_or(0, block);
    (slot * 8 / 7 + strings) as u64
}

impl<K: Resource + 'static> Writer<K> {
    /// An empty cache with these settings.
    pub fn new(config: StoreConfig<K>) -> Self {
        let (tx, rx) = watch::channel(false);
        let indexes = config
            .indexes
            .into_iter()
            .map(|(name, func)| (name, Index::empty(func)))
            .collect();
        Writer {
            store: Store {
                inner: Arc::new(RwLock::new(Inner {
                    objects: HashMap::new(),
                    indexes,
                })),
                ready: rx,
                counters: Arc::new(Counters {
                    objects: AtomicU64::new(0),
                    bytes: AtomicU64::new(0),
                    budget: config.budget,
                }),
            },
            ready: tx,
            drop_managed_fields: config.drop_managed_fields,
            transform: config.transform,
            size: config.size,
            building: None,
            building_bytes: 0,
            building_extra: 0,
            building_new: 0,
        }
    }

    /// A read handle on this cache.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    fn prepare(&self, mut obj: K) -> K {
        if self.drop_managed_fields {
            obj.metadata_mut().managed_fields = None;
        }
        if let Some(transform) = &self.transform {
            transform(&mut obj);
        }
        obj
    }

    /// The estimated bytes of `obj` filed under `key` (0 when not counted).
    fn cost(&self, key: &ObjectKey, obj: &K) -> u64 {
        self.size
            .map_or(0, |size| size(obj) + entry_bytes::<K>(key))
    }

    /// Counts `objects` more and `add` − `sub` bytes, charging the budget
    /// the difference; refuses (counting nothing) what would cross it.
    fn account(&self, objects: i64, add: u64, sub: u64) -> Result<(), MemoryBudgetExceeded> {
        let c = &self.store.counters;
        if let Some(budget) = &c.budget {
            if add > sub {
                match budget.charge(add - sub) {
                    Ok(used) if budget.should_warn(used) => {
                        let held = self.store.memory();
                        tracing::warn!(
                            kind = K::KIND,
                            objects = held.objects,
                            bytes = held.bytes,
                            used,
                            limit = budget.limit(),
                            "a cache's memory budget is 80 % used"
                        );
                    }
                    Ok(_) => {}
                    Err(used) => {
                        let held = self.store.memory();
                        return Err(MemoryBudgetExceeded {
                            kind: K::KIND,
                            objects: held.objects.saturating_add_signed(objects),
                            bytes: (held.bytes + add).saturating_sub(sub),
                            used,
                            limit: budget.limit(),
                        });
                    }
                }
            } else {
                budget.release(sub - add);
            }
        }
        update(&c.objects, |n| n.saturating_add_signed(objects));
        update(&c.bytes, |n| (n + add).saturating_sub(sub));
        Ok(())
    }

    /// Drops a relist in progress, and what it added.
    fn drop_building(&mut self) {
        let Some(building) = self.building.take() else {
            return;
        };
        let new = i64::try_from(self.building_new).unwrap_or(i64::MAX);
        let _ = self.account(-new, 0, self.building_extra);
        self.building_bytes = 0;
        self.building_extra = 0;
        self.building_new = 0;
        drop(building);
    }

    /// Applies one event; returns the event with its object as the cached
    /// `Arc` (the previous cached state for `Delete`, when known). With a
    /// memory budget, prefer [`try_apply`](Self::try_apply): here an
    /// object the budget refuses is logged (`ERROR`) and left out.
    pub fn apply(&mut self, event: Event<K>) -> Event<Arc<K>> {
        let fallback = event.object().map(|o| ObjectKey::of(o));
        match self.try_apply_inner(event) {
            Ok(ev) => ev,
            Err((e, obj)) => {
                tracing::error!(error = %e, key = ?fallback, "object left out of the cache");
                obj
            }
        }
    }

    /// Applies one event, or refuses it when it would cross the cache's
    /// [`MemoryBudget`] (a refused `InitApply` drops the relist in
    /// progress; the store keeps its last complete state).
    pub fn try_apply(&mut self, event: Event<K>) -> Result<Event<Arc<K>>, MemoryBudgetExceeded> {
        self.try_apply_inner(event).map_err(|(e, _)| e)
    }

    /// `try_apply`, handing back the refused object as an event too.
    fn try_apply_inner(&mut self, event: Event<K>) -> Applied<K> {
        match event {
            Event::Init => {
                self.drop_building();
                self.building = Some(HashMap::new());
                Ok(Event::Init)
            }
            Event::InitApply(obj) => self.init_apply(obj),
            Event::InitDone => {
                let objects = self.building.take().unwrap_or_default();
                self.swap(objects);
                self.ready.send_replace(true);
                Ok(Event::InitDone)
            }
            Event::Apply(obj) => {
                let obj = self.prepare(obj);
                let key = ObjectKey::of(&obj);
                let bytes = self.cost(&key, &obj);
                let obj = Arc::new(obj);
                let old = self.store.read().objects.get(&key).map(|s| s.bytes);
                let new = i64::from(old.is_none());
                if let Err(e) = self.account(new, bytes, old.unwrap_or(0)) {
                    return Err((e, Event::Apply(obj)));
                }
                let slot = Slot {
                    obj: obj.clone(),
                    bytes,
                };
                self.store.write().insert(key, slot);
                Ok(Event::Apply(obj))
            }
            Event::Delete(obj) => {
                let key = ObjectKey::of(&obj);
                let old = self.store.write().remove(&key);
                if let Some(old) = &old {
                    let _ = self.account(-1, 0, old.bytes);
                }
                let obj = old.map_or_else(|| Arc::new(self.prepare(obj)), |s| s.obj);
                Ok(Event::Delete(obj))
            }
        }
    }

    fn init_apply(&mut self, obj: K) -> Applied<K> {
        let obj = self.prepare(obj);
        let key = ObjectKey::of(&obj);
        // Reuse the cached Arc when nothing changed: a relist then holds
        // only the changed objects twice.
        let cached = self
            .store
            .read()
            .objects
            .get(&key)
            .filter(|old| {
                let rv = old.obj.metadata().resource_version.as_deref();
                rv.is_some() && rv == obj.metadata().resource_version.as_deref()
            })
            .cloned();
        let slot = match cached {
            Some(slot) => slot,
            None => {
                let bytes = self.cost(&key, &obj);
                let obj = Arc::new(obj);
                if let Err(e) = self.account(1, bytes, 0) {
                    self.drop_building();
                    return Err((e, Event::InitApply(obj)));
                }
                self.building_extra += bytes;
                self.building_new += 1;
                Slot { obj, bytes }
            }
        };
        self.building_bytes += slot.bytes;
        let obj = slot.obj.clone();
        if let Some(old) = self
            .building
            .get_or_insert_with(HashMap::new)
            .insert(key, slot)
        {
            // The list named one key twice: the later copy wins.
            self.building_bytes -= old.bytes;
        }
        Ok(Event::InitApply(obj))
    }

    /// Replaces the whole state; indexes are rebuilt before the lock is
    /// taken, and the old state is dropped after it is released.
    fn swap(&mut self, objects: HashMap<ObjectKey, Slot<K>>) {
        let funcs: Vec<(String, IndexFn<K>)> = self
            .store
            .read()
            .indexes
            .iter()
            .map(|(n, i)| (n.clone(), i.func.clone()))
            .collect();
        let mut indexes: HashMap<String, Index<K>> = funcs
            .into_iter()
            .map(|(name, func)| (name, Index::empty(func)))
            .collect();
        for idx in indexes.values_mut() {
            for (key, slot) in &objects {
                idx.add(key, &slot.obj);
            }
        }
        let new_len = objects.len() as u64;
        let old = {
            let mut inner = self.store.write();
            let old_objects = std::mem::replace(&mut inner.objects, objects);
            let old_indexes = std::mem::replace(&mut inner.indexes, indexes);
            (old_objects, old_indexes)
        };
        // Held before: the old state and the relist's new objects; now:
        // the new state.
        let held = self.store.memory();
        let before = held.bytes;
        let _ = self.account(
            new_len as i64 - held.objects as i64,
            self.building_bytes,
            before,
        );
        self.building_bytes = 0;
        self.building_extra = 0;
        self.building_new = 0;
        drop(old);
    }
}

/// A new cache: its reader and the [`Writer`] that fills it (kube-rs's
/// `reflector::store()`), with the default [`StoreConfig`] (no indexes).
///
/// ```
/// use kubeset_client::api::core::v1::ConfigMap;
/// let (reader, writer) = kubeset_runtime::reflector::store::<ConfigMap>();
/// assert!(reader.is_empty());
/// # drop(writer);
/// ```
pub fn store<K: Resource + 'static>() -> (Store<K>, Writer<K>) {
    let writer = Writer::default();
    (writer.store(), writer)
}

/// Applies every event of `events` to `writer` and passes them on with
/// their objects as the cached `Arc`s. Errors are passed on untouched.
/// When the cache's [`MemoryBudget`] refuses an object, the stream yields
/// that error (as `E`, e.g. [`WatcherError::MemoryBudget`](crate::WatcherError::MemoryBudget))
/// and ends, dropping the watch.
pub fn reflector<K, E, S>(
    writer: Writer<K>,
    events: S,
) -> impl Stream<Item = Result<Event<Arc<K>>, E>>
where
    K: Resource + 'static,
    E: From<MemoryBudgetExceeded>,
    S: Stream<Item = Result<Event<K>, E>>,
{
    let state = Some((writer, Box::pin(events)));
    futures::stream::unfold(state, |state| async move {
        let (mut writer, mut events) = state?;
        let item = match events.next().await? {
            Ok(ev) => match writer.try_apply(ev) {
                Ok(ev) => Ok(ev),
                Err(e) => return Some((Err(E::from(e)), None)),
            },
            Err(e) => Err(e),
        };
        Some((item, Some((writer, events))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeset_client::api::core::v1::ConfigMap;
    use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn cm(ns: &str, name: &str, rv: &str, app: Option<&str>) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(ns.to_owned()),
                name: Some(name.to_owned()),
                resource_version: Some(rv.to_owned()),
                labels: app.map(|a| [("app".to_owned(), a.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn names(mut v: Vec<Arc<ConfigMap>>) -> Vec<String> {
        v.sort_by_key(|o| ObjectKey::of(&**o));
        v.iter().map(|o| ObjectKey::of(&**o).to_string()).collect()
    }

    fn writer() -> Writer<ConfigMap> {
        Writer::new(
            StoreConfig::new()
                .index_by_namespace()
                .index_by_label("app")
                .index("rv", |o: &ConfigMap| {
                    o.metadata.resource_version.clone().into_iter().collect()
                }),
        )
    }

    #[test]
    fn indexes_follow_apply_delete_and_swap() {
        let mut w = writer();
        let s = w.store();
        assert!(!s.is_ready());
        w.apply(Event::Init);
        w.apply(Event::InitApply(cm("a", "x", "1", Some("web"))));
        w.apply(Event::InitApply(cm("b", "y", "2", Some("db"))));
        assert!(s.is_empty(), "nothing visible before InitDone");
        w.apply(Event::InitDone);
        assert!(s.is_ready());
        assert_eq!(names(s.by_index(NAMESPACE_INDEX, "a")), ["a/x"]);
        assert_eq!(names(s.by_index(&label_index("app"), "web")), ["a/x"]);

        // An update moves the object between index values.
        w.apply(Event::Apply(cm("a", "x", "3", Some("db"))));
        assert!(s.by_index(&label_index("app"), "web").is_empty());
        assert_eq!(names(s.by_index(&label_index("app"), "db")), ["a/x", "b/y"]);
        assert!(s.by_index("rv", "1").is_empty());
        assert_eq!(names(s.by_index("rv", "3")), ["a/x"]);

        w.apply(Event::Delete(cm("b", "y", "4", Some("db"))));
        assert_eq!(names(s.by_index(&label_index("app"), "db")), ["a/x"]);
        assert!(s.by_index(NAMESPACE_INDEX, "b").is_empty());
        assert_eq!(s.index_values(NAMESPACE_INDEX), ["a"]);

        // A relist replaces everything, indexes included.
        w.apply(Event::Init);
        w.apply(Event::InitApply(cm("c", "z", "5", None)));
        assert_eq!(s.len(), 1, "old state served until InitDone");
        w.apply(Event::InitDone);
        assert_eq!(names(s.state()), ["c/z"]);
        assert!(s.by_index(&label_index("app"), "db").is_empty());
        assert_eq!(s.index_values(NAMESPACE_INDEX), ["c"]);
        assert_eq!(
            s.get(&ObjectKey::namespaced("c", "z"))
                .map(|o| o.metadata.resource_version.clone()),
            Some(Some("5".to_owned()))
        );
        assert!(s.by_index("nope", "x").is_empty());
    }

    #[test]
    fn relist_reuses_unchanged_objects() {
        let mut w = writer();
        let s = w.store();
        w.apply(Event::Init);
        w.apply(Event::InitApply(cm("a", "x", "1", None)));
        w.apply(Event::InitApply(cm("a", "y", "1", None)));
        w.apply(Event::InitDone);
        let x = s.get(&ObjectKey::namespaced("a", "x")).unwrap();
        let y = s.get(&ObjectKey::namespaced("a", "y")).unwrap();
        w.apply(Event::Init);
        w.apply(Event::InitApply(cm("a", "x", "1", None)));
        w.apply(Event::InitApply(cm("a", "y", "2", None)));
        w.apply(Event::InitDone);
        assert!(Arc::ptr_eq(
            &x,
            &s.get(&ObjectKey::namespaced("a", "x")).unwrap()
        ));
        assert!(!Arc::ptr_eq(
            &y,
            &s.get(&ObjectKey::namespaced("a", "y")).unwrap()
        ));
    }

    #[test]
    fn drops_managed_fields_when_asked() {
        let mut obj = cm("a", "x", "1", None);
        obj.metadata.managed_fields = Some(vec![Default::default()]);
        let mut keep = Writer::<ConfigMap>::default();
        keep.apply(Event::Apply(obj.clone()));
        let mut drop = Writer::new(StoreConfig::new().drop_managed_fields());
        drop.apply(Event::Apply(obj));
        let key = ObjectKey::namespaced("a", "x");
        assert!(
            keep.store()
                .get(&key)
                .unwrap()
                .metadata
                .managed_fields
                .is_some()
        );
        assert!(
            drop.store()
                .get(&key)
                .unwrap()
                .metadata
                .managed_fields
                .is_none()
        );
    }

    #[test]
    fn a_relist_refused_or_abandoned_gives_its_bytes_back() {
        let budget = MemoryBudget::new(1 << 20);
        let mut w = Writer::new(StoreConfig::<ConfigMap>::new().memory_budget(&budget));
        let s = w.store();
        w.apply(Event::Apply(cm("a", "x", "1", None)));
        let one = budget.used();
        assert_eq!((s.memory().objects, s.memory().bytes), (1, one));
        w.apply(Event::Init);
        w.apply(Event::InitApply(cm("a", "x", "1", None)));
        assert_eq!(budget.used(), one, "an unchanged object is shared");
        w.apply(Event::InitApply(cm("a", "y", "2", None)));
        assert_eq!(s.memory().objects, 2);
        assert!(budget.used() > one);
        drop(w);
        assert_eq!(
            budget.used(),
            one,
            "the abandoned relist gave its bytes back"
        );
        assert_eq!(s.memory().objects, 1);
        drop(s);
        assert_eq!(budget.used(), 0, "the last handle gave the rest");

        let small = MemoryBudget::new(one * 3 / 2);
        let mut w = Writer::new(StoreConfig::<ConfigMap>::new().memory_budget(&small));
        w.try_apply(Event::Apply(cm("a", "x", "1", None)))
            .expect("fits");
        let e = w
            .try_apply(Event::Apply(cm("a", "y", "1", None)))
            .expect_err("crosses");
        assert_eq!((e.kind, e.objects, e.limit), ("ConfigMap", 2, one * 3 / 2));
        assert_eq!(w.store().len(), 1, "refused, not cached");
        assert_eq!(small.used(), one);
    }

    #[test]
    fn keys_display_like_kubectl() {
        assert_eq!(ObjectKey::namespaced("ns", "a").to_string(), "ns/a");
        assert_eq!(ObjectKey::cluster("n1").to_string(), "n1");
    }

    #[tokio::test]
    async fn wait_until_ready_fails_only_when_the_writer_goes_first() {
        let w = writer();
        let s = w.store();
        drop(w);
        assert_eq!(s.wait_until_ready().await, Err(super::WriterDropped));

        let mut w = writer();
        let s = w.store();
        w.apply(Event::Init);
        w.apply(Event::InitDone);
        drop(w);
        assert_eq!(
            s.wait_until_ready().await,
            Ok(()),
            "ready once, ready for good"
        );
    }
}
