//! The one store all replicas share: objects, the global resourceVersion
//! counter, the event history watches resume from, and the resource table
//! (which grows and shrinks with CustomResourceDefinitions).
//!
//! **Invariant:** every mutation happens under one mutex, bumps the global
//! counter once and appends exactly one event; watchers read the history
//! after being woken through a `tokio::sync::watch` channel.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use crate::admission;
use crate::apply::{self, Scope, Writer};
use crate::conversion::{self, Converted};
use crate::resources::{self, Resource};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::util;

mod answer;
mod delete;
mod stored;
mod write;

pub(crate) use self::answer::{Writing, event_line, list_json, partial_list_json, protobuf_list};
pub(crate) use self::stored::Stored;

/// Watch event types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One change, as kept in the history.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) rv: u64,
    pub(crate) kind: EventType,
    pub(crate) key: (String, String),
    pub(crate) namespace: String,
    pub(crate) object: Arc<Stored>,
    pub(crate) old: Option<Arc<Stored>>,
}

/// The objects of one storage key, by namespace and name. Shared with the
/// history's events and the list snapshots, so a write stores its object
/// once and a watch's initial state copies none.
type Objects = BTreeMap<(String, String), Arc<Stored>>;

struct State {
    rv: u64,
    builtin: Vec<Arc<Resource>>,
    crds: BTreeMap<String, Vec<Arc<Resource>>>,
    objects: BTreeMap<(String, String), Objects>,
    history: VecDeque<Arc<Event>>,
    history_cap: usize,
    compacted: u64,
}

/// The stored objects a paginated list walks through, shared with the
/// store.
type Snapshot = Arc<Vec<Arc<Stored>>>;

/// Saved list snapshots for `continue` tokens.
struct Pages {
    next_id: u64,
    order: VecDeque<u64>,
    snapshots: HashMap<u64, (Snapshot, u64)>,
}

const MAX_PAGE_SNAPSHOTS: usize = 256;

/// Who writes and how.
#[derive(Debug, Clone)]
pub(crate) struct WriteCtx {
    /// Field manager recorded in managedFields.
    pub(crate) manager: String,
    /// `dryRun=All`: validate and compute, never commit.
    pub(crate) dry_run: bool,
    /// The write is a server-side apply that computed `managedFields`
    /// itself; otherwise [`Store::modify`] records an Update.
    pub(crate) applied: bool,
    /// What admission is asked (`fieldValidation`) and collects
    /// (warnings).
    pub(crate) admission: admission::Options,
}

/// The shared store.
pub(crate) struct Store {
    state: Mutex<State>,
    pages: Mutex<Pages>,
    notify: tokio::sync::watch::Sender<u64>,
    /// Writes run through the webhook passes ([`Store::webhook_writes`]).
    webhook_writes: std::sync::atomic::AtomicU64,
}

fn meta_str<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn meta_mut(v: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = v.as_object_mut()?;
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

fn set_meta(v: &mut Value, key: &str, value: Value) {
    if let Some(m) = meta_mut(v) {
        m.insert(key.to_owned(), value);
    }
}

/// A stored object as a read returns it: [`in_version`], then pruned and
/// defaulted by a custom resource's schema, as the real server's storage
/// decoder does ([`admission::on_read`]).
///
/// A resource with a conversion webhook is converted from the running
/// write's memo ([`conversion::from_memo`]); outside a client's write, or
/// before the conversion is fetched, the object stays in the version it
/// is stored in (unpruned: [`crate::conversion::call`] converts reads).
pub(crate) fn as_version(res: &Resource, v: Value) -> Value {
    if res.conversion.is_some() {
        return match conversion::from_memo(v, &res.api_version()) {
            Converted::Done(mut v) => {
                admission::on_read(res, &mut v);
                v
            }
            Converted::Missing(v) | Converted::Unconverted(v) => v,
        };
    }
    let mut v = in_version(res, v);
    admission::on_read(res, &mut v);
    v
}

/// The live object `live` in the version of a client's write to `res`:
/// `Err` (the write stops, nothing stored) while its conversion is not
/// fetched yet.
fn live_in_version(res: &Resource, live: Value) -> Result<Value, ApiError> {
    let live = as_version(res, live);
    if res.conversion.is_some()
        && conversion::in_write()
        && conversion::api_version(&live) != res.api_version()
    {
        return Err(ApiError::internal(
            "the conversion of the stored object is not fetched yet",
        ));
    }
    Ok(live)
}

/// Sets `apiVersion`/`kind` to the resource's version (CRD versions share
/// storage without conversion, as with the `None` strategy). An object of
/// a resource with a conversion webhook that a controller writes (not a
/// client: no memo) stays in the storage version it was read in.
fn in_version(res: &Resource, v: Value) -> Value {
    if let Some(hook) = &res.conversion
        && !conversion::in_write()
        && conversion::api_version(&v) == hook.storage
    {
        return v;
    }
    let mut v = crate::events::from_storage(res, v);
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), Value::String(res.api_version()));
        m.insert("kind".into(), Value::String(res.kind.clone()));
    }
    v
}

impl admission::policy::Lookup for State {
    fn objects(&self, group: &str, plural: &str) -> Vec<Cow<'_, Value>> {
        self.objects
            .get(&(group.to_owned(), plural.to_owned()))
            .map(|m| m.values().map(|v| v.value()).collect())
            .unwrap_or_default()
    }

    fn kind(&self, api_version: &str, kind: &str) -> Option<Arc<Resource>> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        self.builtin
            .iter()
            .chain(self.crds.values().flatten())
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }
}

impl State {
    fn all_resources(&self) -> Vec<Arc<Resource>> {
        let mut out = self.builtin.clone();
        for rs in self.crds.values() {
            out.extend(rs.iter().cloned());
        }
        out
    }

    fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.builtin
            .iter()
            .chain(self.crds.values().flatten())
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    fn bump(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn push_event(&mut self, ev: Event) {
        self.history.push_back(Arc::new(ev));
        while self.history.len() > self.history_cap {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
    }

    /// Whether namespace `ns` is being deleted (Terminating).
    fn namespace_terminating(&self, ns: &str) -> bool {
        self.objects
            .get(&(String::new(), "namespaces".to_owned()))
            .and_then(|m| m.get(&(String::new(), ns.to_owned())))
            .is_some_and(|n| n.value().pointer("/metadata/deletionTimestamp").is_some())
    }

    fn namespace_exists(&self, ns: &str) -> bool {
        self.objects
            .get(&(String::new(), "namespaces".to_owned()))
            .is_some_and(|m| m.contains_key(&(String::new(), ns.to_owned())))
    }

    /// Stores `obj` with a fresh resourceVersion and records the event,
    /// whose old object is the one stored before. Returns the object as
    /// stored.
    fn commit(&mut self, res: &Resource, kind: EventType, mut obj: Value) -> Value {
        conversion::note_commit();
        let rv = self.bump();
        obj = crate::events::to_storage(res, obj);
        set_meta(&mut obj, "resourceVersion", Value::String(rv.to_string()));
        let ns = meta_str(&obj, "namespace").to_owned();
        let name = meta_str(&obj, "name").to_owned();
        let key = res.storage_key();
        let stored = Arc::new(Stored::new(&key, &obj));
        let bucket = self.objects.entry(key.clone()).or_default();
        let old = if kind == EventType::Deleted {
            bucket.remove(&(ns.clone(), name))
        } else {
            bucket.insert((ns.clone(), name), Arc::clone(&stored))
        };
        self.push_event(Event {
            rv,
            kind,
            key,
            namespace: ns,
            object: stored,
            old,
        });
        obj
    }

    fn stored(&self, res: &Resource, ns: &str, name: &str) -> Option<&Arc<Stored>> {
        self.objects
            .get(&res.storage_key())
            .and_then(|m| m.get(&(ns.to_owned(), name.to_owned())))
    }

    /// Every object stored under `res`'s storage key, by namespace and name.
    fn all(&self, res: &Resource) -> impl Iterator<Item = (&(String, String), &Arc<Stored>)> {
        self.objects.get(&res.storage_key()).into_iter().flatten()
    }

    /// The live object `ns/name` of `res`, as stored.
    fn live(&self, res: &Resource, ns: &str, name: &str) -> Option<Value> {
        self.stored(res, ns, name).map(|s| s.to_value())
    }

    /// Registers the resources a CRD serves and marks it Established.
    fn crd_changed(&mut self, crd: &mut Value) {
        let name = meta_str(crd, "name").to_owned();
        let served = resources::from_crd(crd);
        if let Some(names) = crd.pointer("/spec/names").cloned() {
            let now = util::now_rfc3339();
            crd["status"] = json!({
                "acceptedNames": names,
                "storedVersions": crd.pointer("/spec/versions")
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().filter(|v| v["storage"].as_bool() == Some(true)).map(|v| v["name"].clone()).collect::<Vec<_>>())
                    .unwrap_or_default(),
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now}
                ]
            });
        }
        self.crds.insert(name, served);
    }

    /// Deletes every object of a storage key (optionally in one namespace).
    fn purge(&mut self, key: &(String, String), res: &Resource, ns: Option<&str>) {
        let victims: Vec<Value> = self
            .objects
            .get(key)
            .map(|m| {
                m.iter()
                    .filter(|((n, _), _)| ns.is_none_or(|x| x == n))
                    .map(|(_, v)| v.to_value())
                    .collect()
            })
            .unwrap_or_default();
        for v in victims {
            self.commit(res, EventType::Deleted, v);
        }
    }
}

/// A page of a list and where to continue.
pub(crate) struct Page {
    /// The page's objects as stored (shared, not copied): [`list_json`]
    /// writes them into the answer, [`as_served`] parses them.
    pub(crate) items: Vec<Arc<Stored>>,
    pub(crate) rv: u64,
    pub(crate) continue_token: Option<String>,
    pub(crate) remaining: Option<usize>,
}

impl Store {
    /// A store with the built-in resources and `history_cap` kept events.
    pub(crate) fn new(history_cap: usize) -> Self {
        let (notify, _) = tokio::sync::watch::channel(0);
        Self {
            state: Mutex::new(State {
                rv: 0,
                builtin: resources::builtin(),
                crds: BTreeMap::new(),
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                history_cap: history_cap.max(1),
                compacted: 0,
            }),
            pages: Mutex::new(Pages {
                next_id: 1,
                order: VecDeque::new(),
                snapshots: HashMap::new(),
            }),
            notify,
            webhook_writes: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether a stored webhook may be called for a write of `res`
    /// (subresource `sub`) in `ns` by one of `operations`
    /// ([`admission::webhook::may_match`]): only then does the write go
    /// through [`crate::webhooks`]'s passes.
    pub(crate) fn webhooks_may_match(
        &self,
        res: &Resource,
        ns: &str,
        sub: &str,
        operations: &[admission::policy::Operation],
    ) -> bool {
        admission::webhook::may_match(&*self.lock(), res, ns, sub, operations)
    }

    /// Counts a write run through the webhook passes.
    pub(crate) fn count_webhook_write(&self) {
        self.webhook_writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many writes went through the webhook passes.
    pub(crate) fn webhook_writes(&self) -> u64 {
        self.webhook_writes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-written
        // in a way that matters for a test server: keep serving.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self, rv: u64) {
        self.notify.send_replace(rv);
    }

    /// Releases the lock, then wakes the watches at the resourceVersion the
    /// write under it reached.
    fn unlock_and_notify(&self, st: MutexGuard<'_, State>) {
        let rv = st.rv;
        drop(st);
        self.notify(rv);
    }

    /// Wakes when the resourceVersion moves.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.notify.subscribe()
    }

    /// The current resourceVersion.
    pub(crate) fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    /// Every served resource.
    pub(crate) fn resources(&self) -> Vec<Arc<Resource>> {
        self.lock().all_resources()
    }

    /// The resource served at `group/version/plural`.
    pub(crate) fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.lock().lookup(group, version, plural)
    }

    /// Events after `rv`, or `Err(oldest)` when `rv` is older than the history.
    pub(crate) fn events_since(&self, rv: u64) -> Result<Vec<Arc<Event>>, u64> {
        let st = self.lock();
        if rv < st.compacted {
            return Err(st.compacted + 1);
        }
        let start = st.history.partition_point(|e| e.rv <= rv);
        Ok(st.history.iter().skip(start).cloned().collect())
    }

    /// Reads one object.
    pub(crate) fn get(&self, res: &Resource, ns: &str, name: &str) -> Result<Value, ApiError> {
        let st = self.lock();
        st.live(res, ns, name)
            .map(|v| as_version(res, v))
            .ok_or_else(|| ApiError::not_found(res, name))
    }

    /// One object as stored (in its storage version), if it exists.
    pub(crate) fn get_stored(&self, res: &Resource, ns: &str, name: &str) -> Option<Value> {
        let ns = if res.namespaced { ns } else { "" };
        self.lock().live(res, ns, name)
    }

    /// All matching objects at one resourceVersion.
    pub(crate) fn list_all(
        &self,
        res: &Resource,
        ns: Option<&str>,
        label: &LabelSelector,
        field: &FieldSelector,
    ) -> (Vec<Value>, u64) {
        let (stored, rv) = self.matching(res, ns, label, field);
        let items = stored
            .iter()
            .map(|v| as_version(res, v.to_value()))
            .collect();
        (items, rv)
    }

    /// The matching objects as stored (shared, not copied) at one
    /// resourceVersion.
    fn matching(
        &self,
        res: &Resource,
        ns: Option<&str>,
        label: &LabelSelector,
        field: &FieldSelector,
    ) -> (Vec<Arc<Stored>>, u64) {
        let st = self.lock();
        let items = st
            .all(res)
            .filter(|((n, _), v)| ns.is_none_or(|x| x == n) && v.matches(label, field))
            .map(|(_, v)| Arc::clone(v))
            .collect();
        (items, st.rv)
    }

    /// Every object stored under `res`'s storage key, as stored, with its
    /// namespace, at one resourceVersion: a watch's initial state, shared
    /// by the watches that start at that resourceVersion
    /// ([`crate::fanout::Watches`]), filtered and converted per watch.
    pub(crate) fn watch_snapshot(&self, res: &Resource) -> (Vec<(String, Arc<Stored>)>, u64) {
        let st = self.lock();
        let items = st
            .all(res)
            .map(|((ns, _), v)| (ns.clone(), Arc::clone(v)))
            .collect();
        (items, st.rv)
    }

    /// A page of a list; `continue_from` is a token from an earlier page.
    pub(crate) fn list_page(
        &self,
        res: &Resource,
        ns: Option<&str>,
        label: &LabelSelector,
        field: &FieldSelector,
        limit: Option<usize>,
        continue_from: Option<&str>,
    ) -> Result<Page, ApiError> {
        let (all, rv, offset) = match continue_from {
            Some(tok) => {
                let (id, offset) = decode_token(tok).ok_or_else(|| {
                    ApiError::bad_request(format!("continue key is not valid: {tok}"))
                })?;
                let pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
                let (all, rv) = pages.snapshots.get(&id).cloned().ok_or_else(|| {
                    ApiError::expired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
                })?;
                (all, rv, offset)
            }
            None => {
                let (items, rv) = self.matching(res, ns, label, field);
                (Arc::new(items), rv, 0)
            }
        };
        let end = match limit {
            Some(l) if l > 0 => offset.saturating_add(l).min(all.len()),
            _ => all.len(),
        };
        // A paginated list of many objects keeps only the stored
        // objects' handles between pages.
        let items = all.get(offset..end).unwrap_or_default().to_vec();
        if end >= all.len() {
            return Ok(Page {
                items,
                rv,
                continue_token: None,
                remaining: None,
            });
        }
        let remaining = all.len() - end;
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        let id = match continue_from.and_then(decode_token) {
            Some((id, _)) => id,
            None => {
                let id = pages.next_id;
                pages.next_id += 1;
                pages.snapshots.insert(id, (all, rv));
                pages.order.push_back(id);
                while pages.order.len() > MAX_PAGE_SNAPSHOTS {
                    if let Some(old) = pages.order.pop_front() {
                        pages.snapshots.remove(&old);
                    }
                }
                id
            }
        };
        Ok(Page {
            items,
            rv,
            continue_token: Some(encode_token(id, end)),
            remaining: Some(remaining),
        })
    }

    /// Creates or replaces an object the server itself owns (system
    /// namespaces, the `kubernetes` Service, its Endpoints and slices).
    pub(crate) fn put_system(&self, group: &str, version: &str, plural: &str, obj: Value) {
        let Some(res) = self.lookup(group, version, plural) else {
            return;
        };
        let ns = meta_str(&obj, "namespace").to_owned();
        let name = meta_str(&obj, "name").to_owned();
        let ctx = WriteCtx {
            manager: "kube-apiserver".into(),
            dry_run: false,
            applied: false,
            admission: admission::Options::default(),
        };
        let scope = Scope::Main {
            status_separate: false,
        };
        let res2 = res.clone();
        let desired = obj.clone();
        let result = self.modify(&res, &ns, &name, scope, &ctx, move |live| {
            let mut d = desired;
            if live.is_none() {
                let writer = Writer {
                    manager: "kube-apiserver",
                    api_version: &res2.api_version(),
                    now: &util::now_rfc3339(),
                    scope,
                    res: &res2,
                };
                apply::record_update(None, &mut d, &writer);
            }
            Ok(d)
        });
        if let Err(e) = result {
            tracing::warn!(message = %e.message, "could not write a system object");
        }
    }
}

/// `items` parsed as a read of `res` returns them ([`as_version`]).
pub(crate) fn as_served(res: &Resource, items: &[Arc<Stored>]) -> Vec<Value> {
    items
        .iter()
        .map(|v| as_version(res, v.to_value()))
        .collect()
}

/// A 409 when `obj` names a `resourceVersion` other than `live`'s; a 500
/// (as kube-apiserver's versioner fails to parse it) when it is not a
/// number.
pub(crate) fn check_rv(
    res: &Resource,
    name: &str,
    obj: &Value,
    live: &Value,
) -> Result<(), ApiError> {
    let want = rv_of(obj);
    if !want.is_empty() && want.parse::<u64>().is_err() {
        return Err(ApiError::client_mistake_500(format!(
            "metadata.resourceVersion {want:?} is not a number: a resourceVersion is only ever one the server returned"
        )));
    }
    if !want.is_empty() && want != rv_of(live) {
        return Err(ApiError::modified(res, name));
    }
    Ok(())
}

pub(crate) fn rv_of(v: &Value) -> &str {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn encode_token(id: u64, offset: usize) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{{\"s\":{id},\"o\":{offset}}}"))
}

fn decode_token(tok: &str) -> Option<(u64, usize)> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(tok)
        .ok()?;
    let v: Value = serde_json::from_slice(&raw).ok()?;
    Some((
        v.get("s")?.as_u64()?,
        usize::try_from(v.get("o")?.as_u64()?).ok()?,
    ))
}
