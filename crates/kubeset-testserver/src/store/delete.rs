//! The store's deletes: preconditions, the policies, a namespace's
//! `Terminating`, finalizers and the propagation policy
//! ([`crate::deletion`]), then what the kind's strategy says a deletion
//! takes along ([`crate::registry::Cascade`]).

use std::sync::MutexGuard;

use serde_json::{Value, json};

use super::{EventType, State, Store, as_version, meta_mut, meta_str, set_meta};
use crate::admission;
use crate::admission::policy::Request;
use crate::deletion::{self, DeleteOptions};
use crate::registry::{self, Cascade};
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::util;

impl Store {
    /// The delete of a namespace its `spec.finalizers` hold (the namespace
    /// controller's `kubernetes`, set on create): marked Terminating
    /// (`deletionTimestamp`, `status.phase`) and answered; its objects stay
    /// readable, creates in it are refused, until the namespace controller
    /// (controllers-lite, [`crate::controllers`]) has emptied it and
    /// finalized it (`namespaces/finalize`), as kube-apiserver's registry
    /// and kube-controller-manager do. Without controllers-lite it stays
    /// Terminating, as on a kube-apiserver without a controller manager.
    fn terminate_namespace(
        &self,
        mut st: MutexGuard<'_, State>,
        res: &Resource,
        live: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if live.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok(as_version(res, live));
        }
        let mut new = live.clone();
        set_meta(
            &mut new,
            "deletionTimestamp",
            Value::String(util::now_rfc3339()),
        );
        new["status"] = json!({"phase": "Terminating"});
        if dry_run {
            return Ok(as_version(res, new));
        }
        let out = st.commit(res, EventType::Modified, new);
        self.unlock_and_notify(st);
        Ok(as_version(res, out))
    }

    /// Side effects of a deletion: namespaces take their objects along,
    /// CRDs their resources and objects.
    pub(super) fn after_delete(&self, st: &mut State, res: &Resource, obj: &Value) {
        let name = meta_str(obj, "name").to_owned();
        let cascade = registry::of(res).cascade();
        if cascade == Cascade::NamespaceContents {
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
        if cascade == Cascade::DefinedResources
            && let Some(rs) = st.crds.remove(&name)
            && let Some(r) = rs.first()
        {
            st.purge(&r.storage_key(), r, None);
        }
    }

    /// What the webhooks of a DELETE of `name` are sent and which match
    /// ([`admission::webhook::Pass::delete`]); `None` when it does not
    /// exist (the delete itself answers 404).
    pub(crate) fn webhooks_for_delete(
        &self,
        res: &Resource,
        ns: &str,
        name: &str,
        pass: &admission::webhook::Pass,
        dry_run: bool,
    ) -> Option<()> {
        let ns = if res.namespaced { ns } else { "" };
        let st = self.lock();
        let live = as_version(res, st.live(res, ns, name)?);
        let req = Request::delete(res, ns, name, &live, dry_run);
        pass.delete(&*st, &req);
        Some(())
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
            .ok_or_else(|| ApiError::not_found(res, name))?;
        // Checked in apimachinery's order, each worded as its `Preconditions.Check`.
        for (field, shown) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
            let Some(want) = preconditions.get(field).and_then(Value::as_str) else {
                continue;
            };
            let have = meta_str(&live, field);
            if want != have {
                return Err(ApiError::conflict(
                    res,
                    name,
                    &format!(
                        "Precondition failed: {shown} in precondition: {want}, {shown} in object meta: {have}"
                    ),
                ));
            }
        }
        let req = Request::delete(res, ns, name, &live, dry_run);
        // A delete has no way to send warnings here: only `Deny` shows.
        if let Some(e) = admission::policy::admit(&*st, &req).denied {
            return Err(e);
        }
        if registry::of(res).held_by_spec(&live) {
            return self.terminate_namespace(st, res, live, dry_run);
        }
        let existing = live
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let finalizers = deletion::finalizers_after(&existing, opts.propagation);
        let pending = live.pointer("/metadata/deletionTimestamp").is_some();
        if pending && !finalizers.is_empty() && finalizers == existing {
            return Ok(as_version(res, live));
        }
        if dry_run {
            // The answer is the object as this delete would leave it:
            // marked when finalizers hold it, else as it was.
            let out = if finalizers.is_empty() {
                live
            } else {
                marked(live, finalizers, pending)
            };
            return Ok(as_version(res, out));
        }
        let out = if !finalizers.is_empty() {
            let new = marked(live.clone(), finalizers, pending);
            st.commit(res, EventType::Modified, new)
        } else {
            // Held only by the policy's finalizer, which this delete clears.
            let mut last = live.clone();
            if let Some(m) = meta_mut(&mut last) {
                m.remove("finalizers");
            }
            let out = st.commit(res, EventType::Deleted, last);
            self.after_delete(&mut st, res, &out);
            out
        };
        self.unlock_and_notify(st);
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
}

/// `live` as a delete that finalizers hold leaves it: marked with
/// `deletionTimestamp` (and a bumped tracked generation, the registry's
/// `markAsDeleting`, so a controller sees the deletion as a new generation
/// to reconcile) unless it already was, holding `finalizers`.
fn marked(live: Value, finalizers: Vec<Value>, pending: bool) -> Value {
    let mut new = live;
    if !pending {
        set_meta(
            &mut new,
            "deletionTimestamp",
            Value::String(util::now_rfc3339()),
        );
        set_meta(&mut new, "deletionGracePeriodSeconds", json!(0));
        if let Some(g) = new
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
        {
            set_meta(&mut new, "generation", json!(g + 1));
        }
    }
    set_meta(&mut new, "finalizers", Value::Array(finalizers));
    new
}
