//! The store's writes: create and read-modify-write, the generic
//! registry's path through the kind's [`Strategy`] hooks in
//! kube-apiserver's order (`rest.BeforeCreate`, `rest.BeforeUpdate`; see
//! [`crate::registry`]), under the store's one lock.

use std::sync::MutexGuard;

use serde_json::{Value, json};

use super::{
    EventType, State, Store, WriteCtx, as_version, in_version, live_in_version, meta_mut, meta_str,
    set_meta,
};
use crate::admission;
use crate::admission::policy::{Operation, Request};
use crate::apply::{self, Scope, Writer};
use crate::conversion;
use crate::limits;
use crate::owners;
use crate::registry::{self, Strategy};
use crate::resources::Resource;
use crate::status::ApiError;
use crate::util;
use crate::validation;

impl Store {
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
            return Err(ApiError::client_mistake_500(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        // kube-apiserver's `EnsureObjectNamespaceMatchesRequestNamespace`,
        // before admission: a body without a namespace takes the request's,
        // so validation (an Event's `involvedObject.namespace`) sees it.
        let body_ns = meta_str(&obj, "namespace").to_owned();
        if res.namespaced {
            if !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            if body_ns.is_empty()
                && let Some(m) = meta_mut(&mut obj)
            {
                m.insert("namespace".into(), Value::String(ns.to_owned()));
            }
        } else if let Some(m) = meta_mut(&mut obj) {
            m.remove("namespace");
        }
        let mut name = meta_str(&obj, "name").to_owned();
        let gen_name = meta_str(&obj, "generateName");
        if name.is_empty() && !gen_name.is_empty() {
            name = ctx
                .admission
                .made_up("name", || validation::generate_name(gen_name));
        }
        let strategy = registry::of(res);
        validation::check_new_name(res, strategy.name_rule(), &obj, &name)?;
        if res.has_status()
            && !strategy.keeps_status_on_create()
            && let Value::Object(m) = &mut obj
        {
            m.remove("status");
        }
        dedup_owners(&mut obj, ctx);
        admission::admit(res, &name, &mut obj, None, &ctx.admission)?;
        let now = ctx
            .admission
            .made_up("creationTimestamp", util::now_rfc3339);
        let uid = ctx.admission.made_up("uid", util::uid);
        let mut obj = stamp_new(res, strategy, (ns, &name), obj, (&uid, &now));
        let scope = Scope::Main {
            status_separate: res.has_status(),
        };
        record(ctx, res, scope, &now, None, &mut obj);
        strategy.after_record(&mut obj);
        // After the field manager, as kube-apiserver's create handler:
        // what a mutating policy sets is owned by no one.
        self.policies(None, res, Operation::Create, Some(&mut obj), None, ctx)?;
        self.insert_new(self.lock(), res, ns, &name, obj, ctx)
    }

    /// Runs the admission policies on a write ([`admission::policies`]:
    /// the mutating ones may change `object`), under the caller's lock
    /// `st` or its own; their warnings join the write's.
    fn policies(
        &self,
        st: Option<&State>,
        res: &Resource,
        operation: Operation,
        object: Option<&mut Value>,
        old: Option<&Value>,
        ctx: &WriteCtx,
    ) -> Result<(), ApiError> {
        let Some(obj) = object.as_deref().or(old) else {
            return Ok(());
        };
        let (namespace, name) = (
            meta_str(obj, "namespace").to_owned(),
            meta_str(obj, "name").to_owned(),
        );
        let req = Request {
            res,
            operation,
            namespace: &namespace,
            name: &name,
            object: None,
            old,
            dry_run: ctx.dry_run,
        };
        match st {
            Some(st) => admission::policies(st, &req, object, &ctx.admission),
            None => admission::policies(&*self.lock(), &req, object, &ctx.admission),
        }
    }

    /// Inserts a new object under `st`, the caller's lock, and (unless a
    /// dry run) wakes the watches once it is released.
    fn insert_new(
        &self,
        mut st: MutexGuard<'_, State>,
        res: &Resource,
        ns: &str,
        name: &str,
        obj: Value,
        ctx: &WriteCtx,
    ) -> Result<Value, ApiError> {
        let out = Self::insert_locked(&mut st, res, ns, name, obj, ctx)?;
        if !ctx.dry_run {
            self.unlock_and_notify(st);
        }
        Ok(out)
    }

    /// Inserts a new object under the caller's lock (so that a check for
    /// its absence and the insert are one step).
    pub(super) fn insert_locked(
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
        if res.namespaced && st.namespace_terminating(ns) {
            return Err(ApiError::namespace_terminating(res, name, ns));
        }
        if st
            .stored(res, if res.namespaced { ns } else { "" }, name)
            .is_some()
        {
            return Err(ApiError::already_exists(res, name));
        }
        let strategy = registry::of(res);
        let mut siblings = st.all(res).map(|(_, v)| v.value());
        strategy.before_insert(res, name, &mut obj, &mut siblings)?;
        drop(siblings);
        limits::check_object(res, name, &obj)?;
        if ctx.dry_run {
            return Ok(obj);
        }
        let mut obj = conversion::to_storage(res, obj)?;
        if strategy.defines_resources() {
            st.crd_changed(&mut obj);
        }
        Ok(as_version(res, st.commit(res, EventType::Added, obj)))
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
        let Some(live) = st.live(res, ns, name) else {
            // Still under the lock: two applies creating the same object
            // cannot both find it missing; the second one updates it, as
            // kube-apiserver's create-on-update retries as an update.
            let desired = f(None)?;
            return self.create_on_update(st, res, ns, name, ctx, desired);
        };
        let live = live_in_version(res, live)?;
        let desired = f(Some(&live))?;
        let target = Target {
            res,
            ns,
            name,
            scope,
        };
        let mut new = self.before_update(&st, &target, ctx, &live, desired)?;
        if unchanged(&new, &live) {
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
        let new = conversion::to_storage(res, new)?;
        let out = self.commit_update(&mut st, res, new);
        self.unlock_and_notify(st);
        Ok(as_version(res, out))
    }

    /// An update of a missing object that creates it (an apply's
    /// `AllowCreateOnUpdate`), under the caller's lock `st`.
    fn create_on_update(
        &self,
        st: MutexGuard<'_, State>,
        res: &Resource,
        ns: &str,
        name: &str,
        ctx: &WriteCtx,
        mut desired: Value,
    ) -> Result<Value, ApiError> {
        admission::admit(res, name, &mut desired, None, &ctx.admission)?;
        let mut obj = new_from_apply(res, (ns, name), desired, &ctx.admission)?;
        self.policies(Some(&st), res, Operation::Create, Some(&mut obj), None, ctx)?;
        self.insert_new(st, res, ns, name, obj, ctx)
    }

    /// `rest.BeforeUpdate` of `desired` over `live`, in kube-apiserver's
    /// order: identity kept, `PrepareForUpdate` (the status/spec split of
    /// `scope`), admission, the kind's defaults and `ValidateUpdate`
    /// (whole-object writes), the field manager, the policies, then
    /// `generation` on a spec change.
    fn before_update(
        &self,
        st: &State,
        at: &Target<'_>,
        ctx: &WriteCtx,
        live: &Value,
        desired: Value,
    ) -> Result<Value, ApiError> {
        let Target {
            res,
            ns,
            name,
            scope,
        } = *at;
        if !desired.is_object() {
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
        let mut new = in_version(res, desired);
        keep_identity(res, ns, name, live, &mut new)?;
        dedup_owners(&mut new, ctx);
        prepare_for_update(scope, live, &mut new);
        admission::admit(res, name, &mut new, Some(live), &ctx.admission)?;
        if let Scope::Main { .. } = scope {
            let strategy = registry::of(res);
            strategy.on_update(&mut new);
            let causes = strategy.validate_update(live, &mut new);
            ApiError::invalid_if_any(res, name, &causes)?;
        }
        // The field manager before the policies, as kube-apiserver's
        // update transformers: what a mutating policy sets is owned by no
        // one.
        if !ctx.applied {
            record(ctx, res, scope, &util::now_rfc3339(), Some(live), &mut new);
        }
        self.policies(
            Some(st),
            res,
            Operation::Update,
            Some(&mut new),
            Some(live),
            ctx,
        )?;
        if spec_changed(live, &new)
            && let Some(g) = live.pointer("/metadata/generation").and_then(Value::as_i64)
        {
            set_meta(&mut new, "generation", json!(g + 1));
        }
        // A client's write of the main resource: not `/finalize` or another
        // subresource (written as `status_separate: false`), nor a
        // controller's internal write.
        let client_main = matches!(
            scope,
            Scope::Main {
                status_separate: true
            }
        ) && ctx.admission.verb.is_some();
        if client_main {
            registry::of(res).prepare_for_update(live, &mut new);
        }
        Ok(new)
    }

    /// Stores an update to `new`; an object that is being
    /// deleted and holds no finalizers any more is removed instead, as
    /// kube-apiserver removes it (`errEmptiedFinalizers`): the update is
    /// not stored, so watchers see one DELETED event carrying the stored
    /// state (its finalizers still there) and no MODIFIED; the update is
    /// answered with the object as written, its emptied `finalizers` gone,
    /// at the stored resourceVersion.
    fn commit_update(&self, st: &mut State, res: &Resource, mut new: Value) -> Value {
        let finalizers_empty = new
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty());
        let deleting = new.pointer("/metadata/deletionTimestamp").is_some();
        let strategy = registry::of(res);
        if strategy.defines_resources() {
            st.crd_changed(&mut new);
        }
        if !(deleting && finalizers_empty) || strategy.held_by_spec(&new) {
            return st.commit(res, EventType::Modified, new);
        }
        let (ns, name) = (meta_str(&new, "namespace"), meta_str(&new, "name"));
        let stored = st.live(res, ns, name);
        let stored_rv = stored
            .as_ref()
            .and_then(|s| s.pointer("/metadata/resourceVersion"))
            .cloned();
        let deleted = st.commit(
            res,
            EventType::Deleted,
            stored.unwrap_or_else(|| new.clone()),
        );
        self.after_delete(st, res, &deleted);
        if let Some(m) = meta_mut(&mut new) {
            m.remove("finalizers");
            if let Some(rv) = stored_rv {
                m.insert("resourceVersion".to_owned(), rv);
            }
        }
        new
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

/// The object an update addresses, and the part of it the write may change.
#[derive(Clone, Copy)]
struct Target<'a> {
    res: &'a Resource,
    ns: &'a str,
    name: &'a str,
    scope: Scope,
}

/// `PrepareForUpdate`'s status/spec split: a status write keeps all but
/// the desired `status` (and the field manager's `managedFields`) of
/// `live`; a main write to a kind with a status subresource keeps
/// `live`'s `status`.
fn prepare_for_update(scope: Scope, live: &Value, new: &mut Value) {
    match scope {
        Scope::Status => {
            let status = new.get("status").cloned();
            let mf = new.pointer("/metadata/managedFields").cloned();
            *new = live.clone();
            if let Value::Object(o) = new {
                match status {
                    Some(s) => o.insert("status".into(), s),
                    None => o.remove("status"),
                };
            }
            if let Some(mf) = mf {
                set_meta(new, "managedFields", mf);
            }
        }
        Scope::Main {
            status_separate: true,
        }
        | Scope::Scale => {
            if let Value::Object(o) = new {
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
}

/// Identity and server-owned metadata of an updated object stay the live
/// object's (`name`, `namespace`, `uid`, timestamps, `generation`); a body
/// naming another name, uid or namespace is refused as kube-apiserver
/// refuses it.
fn keep_identity(
    res: &Resource,
    ns: &str,
    name: &str,
    live: &Value,
    new: &mut Value,
) -> Result<(), ApiError> {
    if let Some(m) = meta_mut(new) {
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
        let live_uid = meta_str(live, "uid");
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
    Ok(())
}

/// Repeated owner references of a written object dropped, the write
/// warned ([`owners`]).
fn dedup_owners(obj: &mut Value, ctx: &WriteCtx) {
    let patch = matches!(
        ctx.admission.verb,
        Some(admission::Verb::Patch | admission::Verb::Apply)
    );
    if let Some(w) = owners::dedup(obj, patch) {
        ctx.admission.warnings.extend([w]);
    }
}

/// The object an apply creates: the new name validated, then stamped.
fn new_from_apply(
    res: &Resource,
    (ns, name): (&str, &str),
    obj: Value,
    opts: &admission::Options,
) -> Result<Value, ApiError> {
    let strategy = registry::of(res);
    validation::check_new_name(res, strategy.name_rule(), &obj, name)?;
    let now = opts.made_up("creationTimestamp", util::now_rfc3339);
    let uid = opts.made_up("uid", util::uid);
    let mut obj = stamp_new(res, strategy, (ns, name), obj, (&uid, &now));
    strategy.after_record(&mut obj);
    Ok(obj)
}

/// What the server writes on every new object, as kube-apiserver's
/// `BeforeCreate` does: the name and namespace it is stored under, a fresh
/// `uid`, `creationTimestamp` (`now`), no `resourceVersion`, deletion
/// fields or `selfLink`, `generation` 1 where tracked, and the kind's
/// defaults.
fn stamp_new(
    res: &Resource,
    strategy: &dyn Strategy,
    (ns, name): (&str, &str),
    obj: Value,
    (uid, now): (&str, &str),
) -> Value {
    let mut obj = in_version(res, obj);
    if let Some(m) = meta_mut(&mut obj) {
        m.insert("name".into(), Value::String(name.to_owned()));
        if res.namespaced {
            m.insert("namespace".into(), Value::String(ns.to_owned()));
        }
        m.insert("uid".into(), Value::String(uid.to_owned()));
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
    if strategy.tracks_generation(res, &obj) {
        set_meta(&mut obj, "generation", json!(1));
    }
    // Idempotent for a request body (defaulted while decoded); what the
    // server creates itself (controllers-lite's pods) gets them here.
    strategy.on_decode(&mut obj);
    strategy.on_create(res, &mut obj);
    obj
}

/// Whether an update leaves `live` as it is: `new` equals it but for
/// `metadata.resourceVersion`, which `new` does not carry (a main write
/// drops it) or carries unchanged (a status write starts from `live`);
/// compared in place: a write that changes nothing copies nothing. As
/// kube-apiserver, which stores nothing and keeps the resourceVersion when
/// the new object's bytes equal the stored ones.
fn unchanged(new: &Value, live: &Value) -> bool {
    let (Value::Object(n), Value::Object(l)) = (new, live) else {
        return false;
    };
    n.len() == l.len()
        && n.iter().all(|(k, v)| match (k.as_str(), v, l.get(k)) {
            ("metadata", Value::Object(nm), Some(Value::Object(lm))) => {
                let live_rv = lm.get("resourceVersion");
                let (new_rv, rv_keys) = match nm.get("resourceVersion") {
                    Some(rv) => (Some(rv), 0),
                    None => (live_rv, usize::from(live_rv.is_some())),
                };
                new_rv == live_rv
                    && nm.len() + rv_keys == lm.len()
                    && nm.iter().all(|(k, v)| lm.get(k) == Some(v))
            }
            (_, v, Some(lv)) => v == lv,
            _ => false,
        })
}

/// The field manager's record of `ctx`'s write of `obj` (`scope` of `res`,
/// at `now`) over `live` (none for a create).
fn record(
    ctx: &WriteCtx,
    res: &Resource,
    scope: Scope,
    now: &str,
    live: Option<&Value>,
    obj: &mut Value,
) {
    let writer = Writer {
        manager: &ctx.manager,
        api_version: &res.api_version(),
        now,
        scope,
        res,
    };
    apply::record_update(live, obj, &writer);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::unchanged;

    #[test]
    fn unchanged_ignores_only_the_live_resource_version() {
        let live = json!({"metadata": {"name": "a", "resourceVersion": "7"}, "spec": {"x": 1}});
        assert!(unchanged(
            &json!({"metadata": {"name": "a"}, "spec": {"x": 1}}),
            &live
        ));
        // A status write starts from the live object: the same
        // resourceVersion is no change, another one is.
        assert!(unchanged(
            &json!({"metadata": {"name": "a", "resourceVersion": "7"}, "spec": {"x": 1}}),
            &live
        ));
        assert!(!unchanged(
            &json!({"metadata": {"name": "a", "resourceVersion": "6"}, "spec": {"x": 1}}),
            &live
        ));
        assert!(!unchanged(
            &json!({"metadata": {"name": "a"}, "spec": {"x": 2}}),
            &live
        ));
        assert!(!unchanged(
            &json!({"metadata": {"name": "a", "labels": {}}, "spec": {"x": 1}}),
            &live
        ));
        assert!(!unchanged(&json!({"metadata": {"name": "a"}}), &live));
        let no_rv = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        assert!(unchanged(&no_rv, &no_rv));
    }
}
