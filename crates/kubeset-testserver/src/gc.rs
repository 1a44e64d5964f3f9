//! The garbage collector's propagation of deletes ([`propagate`], one pass
//! of controllers-lite), over the store: `orphan` removes the owner's
//! reference from every dependent, then the finalizer; `foregroundDeletion`
//! deletes the dependents (in the foreground too) and removes the finalizer
//! once none is left. The server's half (which finalizers a DELETE leaves)
//! is [`crate::deletion`].

use serde_json::Value;

use crate::apply::Scope;
use crate::deletion::{DeleteOptions, FOREGROUND, ORPHAN, Propagation};
use crate::resources::Resource;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{Store, WriteCtx};

/// Every object of the store with its resource.
fn everything(store: &Store) -> Vec<(std::sync::Arc<Resource>, Value)> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for r in store.resources() {
        let key = r.storage_key();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let (items, _) = store.list_all(
            &r,
            None,
            &LabelSelector::default(),
            &FieldSelector::default(),
        );
        out.extend(items.into_iter().map(|o| (r.clone(), o)));
    }
    out
}

fn meta<'a>(o: &'a Value, k: &str) -> &'a str {
    o.pointer(&format!("/metadata/{k}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn owned_by(o: &Value, uid: &str) -> bool {
    o.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid))
}

fn gc_ctx() -> WriteCtx {
    WriteCtx {
        manager: "kube-controller-manager".into(),
        dry_run: false,
        applied: false,
        admission: crate::admission::Options::default(),
    }
}

/// Keeps the items of the metadata list `key` of a live object that `f`
/// accepts.
fn edit_list(
    store: &Store,
    res: &Resource,
    o: &Value,
    key: &str,
    f: impl Fn(&Value) -> bool,
) -> bool {
    let main = Scope::Main {
        status_separate: res.has_status(),
    };
    store
        .modify(
            res,
            meta(o, "namespace"),
            meta(o, "name"),
            main,
            &gc_ctx(),
            |live| {
                let mut new = live
                    .ok_or_else(|| ApiError::not_found(res, meta(o, "name")))?
                    .clone();
                if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut)
                    && let Some(Value::Array(list)) = m.get_mut(key)
                {
                    list.retain(|x| f(x));
                    // Both lists are `omitempty`: an emptied one is dropped.
                    if list.is_empty() {
                        m.remove(key);
                    }
                }
                Ok(new)
            },
        )
        .is_ok()
}

/// One pass of the collector over owners held by `orphan` or
/// `foregroundDeletion`; whether anything changed.
pub(crate) fn propagate(store: &Store) -> bool {
    let all = everything(store);
    let mut changed = false;
    for (res, owner) in &all {
        if owner.pointer("/metadata/deletionTimestamp").is_none() {
            continue;
        }
        let finalizers = owner
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let uid = meta(owner, "uid");
        let dependents: Vec<&(std::sync::Arc<Resource>, Value)> =
            all.iter().filter(|(_, o)| owned_by(o, uid)).collect();
        if finalizers.iter().any(|f| f == ORPHAN) {
            for (r, d) in &dependents {
                changed |= edit_list(store, r, d, "ownerReferences", |x| x["uid"] != uid);
            }
            changed |= edit_list(store, res, owner, "finalizers", |f| f != ORPHAN);
        } else if finalizers.iter().any(|f| f == FOREGROUND) {
            if dependents.is_empty() {
                changed |= edit_list(store, res, owner, "finalizers", |f| f != FOREGROUND);
                continue;
            }
            let foreground = DeleteOptions {
                propagation: Some(Propagation::Foreground),
                ..DeleteOptions::default()
            };
            for (r, d) in dependents {
                if d.pointer("/metadata/deletionTimestamp").is_none() {
                    changed |= store
                        .delete(r, meta(d, "namespace"), meta(d, "name"), &foreground)
                        .is_ok();
                }
            }
        }
    }
    changed
}
