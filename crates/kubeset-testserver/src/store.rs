//! The one store all replicas share: objects, the global resourceVersion
//! counter, the event history watches resume from, and the resource table
//! (which grows and shrinks with CustomResourceDefinitions).
//!
//! **Invariant:** every mutation happens under one mutex, bumps the global
//! counter once and appends exactly one event; watchers read the history
//! after being woken through a `tokio::sync::watch` channel.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use crate::admission;
use crate::apply::{self, Scope, Writer};
use crate::defaults;
use crate::deletion::{self, DeleteOptions};
use crate::immutable;
use crate::limits;
use crate::resources::{self, Resource};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::services;
use crate::status::ApiError;
use crate::util;
use crate::validation;

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
    pub(crate) object: Arc<Value>,
    pub(crate) old: Option<Arc<Value>>,
}

type Objects = BTreeMap<(String, String), Value>;

struct State {
    rv: u64,
    builtin: Vec<Arc<Resource>>,
    crds: BTreeMap<String, Vec<Arc<Resource>>>,
    objects: BTreeMap<(String, String), Objects>,
    history: VecDeque<Arc<Event>>,
    history_cap: usize,
    compacted: u64,
}

/// Saved list snapshots for `continue` tokens.
struct Pages {
    next_id: u64,
    order: VecDeque<u64>,
    snapshots: HashMap<u64, (Arc<Vec<Value>>, u64)>,
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

/// Whether the object changed outside metadata and status.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Value::Object(m) = &mut v {
            for k in ["metadata", "status", "apiVersion", "kind"] {
                m.remove(k);
            }
        }
        v
    };
    strip(old) != strip(new)
}

/// A stored object as a read returns it: [`in_version`], then pruned and
/// defaulted by a custom resource's schema, as the real server's storage
/// decoder does ([`admission::on_read`]).
pub(crate) fn as_version(res: &Resource, v: Value) -> Value {
    let mut v = in_version(res, v);
    admission::on_read(res, &mut v);
    v
}

/// Sets `apiVersion`/`kind` to the resource's version (CRD versions share
/// storage without conversion, as with the `None` strategy).
fn in_version(res: &Resource, v: Value) -> Value {
    let mut v = crate::events::from_storage(res, v);
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), Value::String(res.api_version()));
        m.insert("kind".into(), Value::String(res.kind.clone()));
    }
    v
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

    fn namespace_exists(&self, ns: &str) -> bool {
        self.objects
            .get(&(String::new(), "namespaces".to_owned()))
            .is_some_and(|m| m.contains_key(&(String::new(), ns.to_owned())))
    }

    /// Stores `obj` with a fresh resourceVersion and records the event.
    fn commit(
        &mut self,
        res: &Resource,
        kind: EventType,
        mut obj: Value,
        old: Option<Value>,
    ) -> Value {
        let rv = self.bump();
        obj = crate::events::to_storage(res, obj);
        let old = old.map(|o| crate::events::to_storage(res, o));
        set_meta(&mut obj, "resourceVersion", Value::String(rv.to_string()));
        let ns = meta_str(&obj, "namespace").to_owned();
        let name = meta_str(&obj, "name").to_owned();
        let key = res.storage_key();
        let bucket = self.objects.entry(key.clone()).or_default();
        if kind == EventType::Deleted {
            bucket.remove(&(ns.clone(), name));
        } else {
            bucket.insert((ns.clone(), name), obj.clone());
        }
        self.push_event(Event {
            rv,
            kind,
            key,
            namespace: ns,
            object: Arc::new(obj.clone()),
            old: old.map(Arc::new),
        });
        obj
    }

    fn live(&self, res: &Resource, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&res.storage_key())
            .and_then(|m| m.get(&(ns.to_owned(), name.to_owned())))
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
                    .map(|(_, v)| v.clone())
                    .collect()
            })
            .unwrap_or_default();
        for v in victims {
            self.commit(res, EventType::Deleted, v.clone(), Some(v));
        }
    }
}

/// A page of a list and where to continue.
pub(crate) struct Page {
    pub(crate) items: Vec<Value>,
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
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-written
        // in a way that matters for a test server: keep serving.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self, rv: u64) {
        self.notify.send_replace(rv);
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
            .cloned()
            .map(|v| as_version(res, v))
            .ok_or_else(|| ApiError::not_found(res, name))
    }

    /// All matching objects at one resourceVersion.
    pub(crate) fn list_all(
        &self,
        res: &Resource,
        ns: Option<&str>,
        label: &LabelSelector,
        field: &FieldSelector,
    ) -> (Vec<Value>, u64) {
        let st = self.lock();
        let items = st
            .objects
            .get(&res.storage_key())
            .map(|m| {
                m.iter()
                    .filter(|((n, _), _)| ns.is_none_or(|x| x == n))
                    .map(|(_, v)| v)
                    .filter(|v| label.matches(v) && field.matches(v))
                    .map(|v| as_version(res, v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        (items, st.rv)
    }

    /// Every object stored under `res`'s storage key, as stored, with its
    /// namespace, at one resourceVersion: a watch's initial state, shared
    /// by the watches that start at that resourceVersion
    /// ([`crate::fanout::Watches`]), filtered and converted per watch.
    pub(crate) fn watch_snapshot(&self, res: &Resource) -> (Vec<(String, Value)>, u64) {
        let st = self.lock();
        let items = st
            .objects
            .get(&res.storage_key())
            .map(|m| {
                m.iter()
                    .map(|((ns, _), v)| (ns.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
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
                let (items, rv) = self.list_all(res, ns, label, field);
                (Arc::new(items), rv, 0)
            }
        };
        let end = match limit {
            Some(l) if l > 0 => offset.saturating_add(l).min(all.len()),
            _ => all.len(),
        };
        let items = all
            .get(offset..end)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
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

    /// Creates an object (`ns` is the namespace of the URL).
    pub(crate) fn create(
        &self,
        res: &Resource,
        ns: &str,
        mut obj: Value,
        ctx: &WriteCtx,
    ) -> Result<Value, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be an object",
            ));
        }
        if let Some(k) = obj.get("kind").and_then(Value::as_str)
            && !k.is_empty()
            && k != res.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind of the provided object ({k}) does not match the expected kind ({})",
                res.kind
            )));
        }
        if !meta_str(&obj, "resourceVersion").is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let body_ns = meta_str(&obj, "namespace").to_owned();
        if res.namespaced {
            if !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        } else if let Some(m) = meta_mut(&mut obj) {
            m.remove("namespace");
        }
        let mut name = meta_str(&obj, "name").to_owned();
        let gen_name = meta_str(&obj, "generateName");
        if name.is_empty() && !gen_name.is_empty() {
            name = validation::generate_name(gen_name);
        }
        validation::check_new_name(res, &obj, &name)?;
        if res.has_status()
            && let Value::Object(m) = &mut obj
        {
            m.remove("status");
        }
        admission::admit(res, &name, &mut obj, None, &ctx.admission)?;
        let now = util::now_rfc3339();
        let mut obj = stamp_new(res, ns, &name, obj, &now);
        let scope = Scope::Main {
            status_separate: res.has_status(),
        };
        let writer = Writer {
            manager: &ctx.manager,
            api_version: &res.api_version(),
            now: &now,
            scope,
            res,
        };
        apply::record_update(None, &mut obj, &writer);
        defaults::after_record(res, &mut obj);
        self.insert_new(res, ns, &name, obj, ctx)
    }

    fn insert_new(
        &self,
        res: &Resource,
        ns: &str,
        name: &str,
        obj: Value,
        ctx: &WriteCtx,
    ) -> Result<Value, ApiError> {
        let mut st = self.lock();
        let out = Self::insert_locked(&mut st, res, ns, name, obj, ctx)?;
        let rv = st.rv;
        drop(st);
        if !ctx.dry_run {
            self.notify(rv);
        }
        Ok(out)
    }

    /// Inserts a new object under the caller's lock (so that a check for
    /// its absence and the insert are one step).
    fn insert_locked(
        st: &mut State,
        res: &Resource,
        ns: &str,
        name: &str,
        mut obj: Value,
        ctx: &WriteCtx,
    ) -> Result<Value, ApiError> {
        if res.namespaced && !st.namespace_exists(ns) {
            return Err(ApiError::namespace_not_found(ns));
        }
        if st
            .live(res, if res.namespaced { ns } else { "" }, name)
            .is_some()
        {
            return Err(ApiError::already_exists(res, name));
        }
        let is_crd =
            res.group == "apiextensions.k8s.io" && res.plural == "customresourcedefinitions";
        if is_crd && resources::from_crd(&obj).is_empty() {
            return Err(ApiError::invalid(
                res,
                name,
                &[(
                    "spec",
                    "FieldValueRequired",
                    "Required value: group, names.plural, names.kind and versions".into(),
                )],
            ));
        }
        if res.group.is_empty() && res.plural == "services" {
            let used = services::Used::of(
                st.objects
                    .get(&res.storage_key())
                    .into_iter()
                    .flat_map(|m| m.values()),
            );
            services::allocate(res, name, &mut obj, &used)?;
        }
        limits::check_object(res, name, &obj)?;
        if ctx.dry_run {
            return Ok(obj);
        }
        if is_crd {
            st.crd_changed(&mut obj);
        }
        Ok(as_version(res, st.commit(res, EventType::Added, obj, None)))
    }

    /// Read-modify-write of one object. `f` gets the live object (or `None`
    /// when it does not exist and `create_missing` is set) and returns the
    /// desired object.
    pub(crate) fn modify(
        &self,
        res: &Resource,
        ns: &str,
        name: &str,
        scope: Scope,
        ctx: &WriteCtx,
        f: impl FnOnce(Option<&Value>) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let ns = if res.namespaced { ns } else { "" };
        let mut st = self.lock();
        let Some(live) = st.live(res, ns, name).cloned() else {
            // Still under the lock: two applies creating the same object
            // cannot both find it missing; the second one updates it, as
            // kube-apiserver's create-on-update retries as an update.
            let mut desired = f(None)?;
            admission::admit(res, name, &mut desired, None, &ctx.admission)?;
            let obj = new_from_apply(res, ns, name, desired)?;
            let out = Self::insert_locked(&mut st, res, ns, name, obj, ctx)?;
            let rv = st.rv;
            drop(st);
            if !ctx.dry_run {
                self.notify(rv);
            }
            return Ok(out);
        };
        let live = as_version(res, live);
        let new = f(Some(&live))?;
        if !new.is_object() {
            return Err(ApiError::invalid(
                res,
                name,
                &[(
                    "",
                    "FieldValueInvalid",
                    "Invalid value: the result must be an object".into(),
                )],
            ));
        }
        let mut new = in_version(res, new);
        // Identity and server-owned metadata stay.
        if let Some(m) = meta_mut(&mut new) {
            let body_name = m
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_owned();
            if body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
            let body_uid = m.get("uid").and_then(Value::as_str).unwrap_or("");
            let live_uid = meta_str(&live, "uid");
            if !body_uid.is_empty() && body_uid != live_uid {
                return Err(ApiError::conflict(
                    res,
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {body_uid}, UID in object meta: {live_uid}"
                    ),
                ));
            }
            let body_ns = m
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if res.namespaced && !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ] {
                match live.get("metadata").and_then(|lm| lm.get(k)) {
                    Some(v) => {
                        m.insert(k.into(), v.clone());
                    }
                    None => {
                        m.remove(k);
                    }
                }
            }
            m.remove("resourceVersion");
        }
        match scope {
            Scope::Status => {
                let status = new.get("status").cloned();
                let mf = new.pointer("/metadata/managedFields").cloned();
                new = live.clone();
                if let Value::Object(o) = &mut new {
                    match status {
                        Some(s) => o.insert("status".into(), s),
                        None => o.remove("status"),
                    };
                }
                if let Some(mf) = mf {
                    set_meta(&mut new, "managedFields", mf);
                }
            }
            Scope::Main {
                status_separate: true,
            } => {
                if let Value::Object(o) = &mut new {
                    match live.get("status") {
                        Some(s) => o.insert("status".into(), s.clone()),
                        None => o.remove("status"),
                    };
                }
            }
            Scope::Main {
                status_separate: false,
            } => {}
        }
        admission::admit(res, name, &mut new, Some(&live), &ctx.admission)?;
        if let Scope::Main { .. } = scope {
            defaults::on_update(res, &mut new);
            immutable::check_update(res, name, &live, &mut new)?;
        }
        if spec_changed(&live, &new)
            && let Some(g) = live.pointer("/metadata/generation").and_then(Value::as_i64)
        {
            set_meta(&mut new, "generation", json!(g + 1));
        }
        if !ctx.applied {
            let now = util::now_rfc3339();
            let writer = Writer {
                manager: &ctx.manager,
                api_version: &res.api_version(),
                now: &now,
                scope,
                res,
            };
            apply::record_update(Some(&live), &mut new, &writer);
        }
        let mut live_cmp = live.clone();
        if let Some(m) = meta_mut(&mut live_cmp) {
            m.remove("resourceVersion");
        }
        if new == live_cmp {
            return Ok(live);
        }
        limits::check_object(res, name, &new)?;
        if ctx.dry_run {
            // Nothing is stored, so the answer keeps the live version.
            if let Some(rv) = live.pointer("/metadata/resourceVersion").cloned() {
                set_meta(&mut new, "resourceVersion", rv);
            }
            return Ok(new);
        }
        let finalizers_empty = new
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty());
        let deleting = new.pointer("/metadata/deletionTimestamp").is_some();
        if res.group == "apiextensions.k8s.io" && res.plural == "customresourcedefinitions" {
            st.crd_changed(&mut new);
        }
        let out = if deleting && finalizers_empty {
            let out = st.commit(res, EventType::Modified, new, Some(live));
            let out2 = st.commit(res, EventType::Deleted, out.clone(), Some(out));
            self.after_delete(&mut st, res, &out2);
            out2
        } else {
            st.commit(res, EventType::Modified, new, Some(live))
        };
        let rv = st.rv;
        drop(st);
        self.notify(rv);
        Ok(as_version(res, out))
    }

    /// Side effects of a deletion: namespaces take their objects along,
    /// CRDs their resources and objects.
    fn after_delete(&self, st: &mut State, res: &Resource, obj: &Value) {
        let name = meta_str(obj, "name").to_owned();
        if res.group.is_empty() && res.plural == "namespaces" {
            let all = st.all_resources();
            let mut seen = Vec::new();
            for r in all.iter().filter(|r| r.namespaced) {
                let key = r.storage_key();
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key.clone());
                st.purge(&key, r, Some(&name));
            }
        }
        if res.group == "apiextensions.k8s.io"
            && res.plural == "customresourcedefinitions"
            && let Some(rs) = st.crds.remove(&name)
            && let Some(r) = rs.first()
        {
            st.purge(&r.storage_key(), r, None);
        }
    }

    /// Deletes one object, honouring preconditions, finalizers and the
    /// propagation policy ([`deletion`]): while finalizers remain (the
    /// policy's `orphan`/`foregroundDeletion` included) it is only marked
    /// with `deletionTimestamp`.
    pub(crate) fn delete(
        &self,
        res: &Resource,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let (preconditions, dry_run) = (&opts.preconditions, opts.dry_run);
        let ns = if res.namespaced { ns } else { "" };
        let mut st = self.lock();
        let live = st
            .live(res, ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(res, name))?;
        if let Some(uid) = preconditions.get("uid").and_then(Value::as_str) {
            let have = meta_str(&live, "uid");
            if uid != have {
                return Err(ApiError::conflict(
                    res,
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"
                    ),
                ));
            }
        }
        if let Some(rv) = preconditions.get("resourceVersion").and_then(Value::as_str) {
            let have = meta_str(&live, "resourceVersion");
            if rv != have {
                return Err(ApiError::conflict(
                    res,
                    name,
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {have}"
                    ),
                ));
            }
        }
        if dry_run {
            return Ok(as_version(res, live));
        }
        let existing = live
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let finalizers = deletion::finalizers_after(&existing, opts.propagation);
        let pending = live.pointer("/metadata/deletionTimestamp").is_some();
        let out = if !finalizers.is_empty() {
            if pending && finalizers == existing {
                return Ok(as_version(res, live));
            }
            let mut new = live.clone();
            if !pending {
                set_meta(
                    &mut new,
                    "deletionTimestamp",
                    Value::String(util::now_rfc3339()),
                );
                set_meta(&mut new, "deletionGracePeriodSeconds", json!(0));
                // Marking bumps a tracked generation (the registry's
                // `markAsDeleting`), so a controller sees the deletion as
                // a new generation to reconcile.
                if let Some(g) = live
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .filter(|g| *g > 0)
                {
                    set_meta(&mut new, "generation", json!(g + 1));
                }
            }
            set_meta(&mut new, "finalizers", Value::Array(finalizers));
            st.commit(res, EventType::Modified, new, Some(live))
        } else {
            // Held only by the policy's finalizer, which this delete clears.
            let mut last = live.clone();
            if let Some(m) = meta_mut(&mut last) {
                m.remove("finalizers");
            }
            let out = st.commit(res, EventType::Deleted, last, Some(live));
            self.after_delete(&mut st, res, &out);
            out
        };
        let rv = st.rv;
        drop(st);
        self.notify(rv);
        Ok(as_version(res, out))
    }

    /// Deletes every matching object; returns them as they were listed.
    pub(crate) fn delete_collection(
        &self,
        res: &Resource,
        ns: Option<&str>,
        label: &LabelSelector,
        field: &FieldSelector,
        opts: &DeleteOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let (items, _) = self.list_all(res, ns, label, field);
        let mut out = Vec::new();
        // The answer lists the objects as they were listed before each was
        // deleted or marked, as the registry's DeleteCollection returns its
        // list.
        for it in items {
            let name = meta_str(&it, "name").to_owned();
            let n = meta_str(&it, "namespace").to_owned();
            match self.delete(res, &n, &name, opts) {
                Ok(_) => out.push(it),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
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

/// Whether `metadata.generation` is tracked: objects with a spec or a
/// status subresource, except namespaces, services and leases (their
/// strategies set none; checked against kube-apiserver 1.35 by the
/// differential suite).
fn wants_generation(res: &Resource, obj: &Value) -> bool {
    let untracked = matches!(
        (res.group.as_str(), res.plural.as_str()),
        ("", "namespaces" | "services") | ("coordination.k8s.io", "leases")
    );
    !untracked && (obj.get("spec").is_some() || res.has_status())
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

/// The object an apply creates: the new name validated, then stamped.
fn new_from_apply(res: &Resource, ns: &str, name: &str, obj: Value) -> Result<Value, ApiError> {
    validation::check_new_name(res, &obj, name)?;
    let mut obj = stamp_new(res, ns, name, obj, &util::now_rfc3339());
    defaults::after_record(res, &mut obj);
    Ok(obj)
}

/// What the server writes on every new object, as kube-apiserver's
/// `BeforeCreate` does: the name and namespace it is stored under, a fresh
/// `uid`, `creationTimestamp` (`now`), no `resourceVersion`, deletion
/// fields or `selfLink`, `generation` 1 where tracked, and the kind's
/// defaults.
fn stamp_new(res: &Resource, ns: &str, name: &str, obj: Value, now: &str) -> Value {
    let mut obj = in_version(res, obj);
    if let Some(m) = meta_mut(&mut obj) {
        m.insert("name".into(), Value::String(name.to_owned()));
        if res.namespaced {
            m.insert("namespace".into(), Value::String(ns.to_owned()));
        }
        m.insert("uid".into(), Value::String(util::uid()));
        m.insert("creationTimestamp".into(), Value::String(now.to_owned()));
        for k in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            m.remove(k);
        }
    }
    if wants_generation(res, &obj) {
        set_meta(&mut obj, "generation", json!(1));
    }
    defaults::on_create(res, &mut obj);
    obj
}
