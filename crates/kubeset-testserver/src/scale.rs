//! The `scale` subresource (`autoscaling/v1` `Scale`) of every resource
//! whose registry declares one: the built-in workloads and custom
//! resources with `subresources.scale`. GET reads it from the parent; PUT
//! and PATCH (JSON, merge, strategic merge, and apply as a merge) change
//! only the parent's replica count.

use serde_json::{Value, json};

use crate::apply::{self, Scope};
use crate::resources::Resource;
use crate::selectors::selector_to_string;
use crate::status::ApiError;
use crate::store::WriteCtx;
use crate::subresource::{Call, Desired};
use crate::util;
use crate::verbs::check_rv;

/// Serves GET (`desired`: `None`), PUT (`Desired::Object`) and PATCH
/// (`Desired::Patch`, applied to the live `Scale`) of `call`'s scale.
pub(crate) fn serve(call: &Call<'_>, desired: Option<Desired<'_>>) -> Result<Value, ApiError> {
    let res = call.res;
    if res.scale.is_none() {
        return Err(ApiError::path_not_found());
    }
    let Some(desired) = desired else {
        return scale_of(res, &call.store.get(res, call.ns, call.name)?);
    };
    let scope = Scope::Main {
        status_separate: res.has_status(),
    };
    if let Desired::Apply { config, force } = desired {
        return apply_scale(call, config, force);
    }
    let out = call
        .store
        .modify(res, call.ns, call.name, scope, call.ctx, |live| {
            let live = live.ok_or_else(|| ApiError::not_found(res, call.name))?;
            let replicas = match desired {
                Desired::Object(body) => {
                    check_rv(res, call.name, &body, live)?;
                    replicas_of(&body)
                }
                Desired::Patch(patch) => {
                    let mut scale = scale_of(res, live)?;
                    patch(&mut scale)?;
                    replicas_of(&scale)
                }
                Desired::Apply { .. } => return Err(ApiError::method_not_allowed()),
            };
            let mut new = live.clone();
            set_replicas(res, &mut new, replicas);
            Ok(new)
        })?;
    scale_of(res, &out)
}

/// Server-side apply of a `Scale`: the apply runs on the `Scale` with the
/// parent's owners of the replicas as its owners (so it conflicts with the
/// manager that set them), and its owners go back to the parent's
/// replicas path (`apply::apply_scale`, as kube-apiserver's scale handler).
fn apply_scale(call: &Call<'_>, config: &Value, force: bool) -> Result<Value, ApiError> {
    let res = call.res;
    let paths = res.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    let scope = Scope::Main {
        status_separate: res.has_status(),
    };
    let ctx = WriteCtx {
        applied: true,
        ..call.ctx.clone()
    };
    let out = call
        .store
        .modify(res, call.ns, call.name, scope, &ctx, |live| {
            let live = live.ok_or_else(|| ApiError::not_found(res, call.name))?;
            check_rv(res, call.name, config, live)?;
            let scale = scale_of(res, live)?;
            let now = util::now_rfc3339();
            let writer = apply::Writer {
                manager: &ctx.manager,
                api_version: &res.api_version(),
                now: &now,
                scope,
                res,
            };
            let (replicas, managed) =
                apply::apply_scale(live, &scale, &paths.spec_replicas, config, &writer, force)
                    .map_err(|e| e.into_api(res, call.name))?;
            let mut new = live.clone();
            set_replicas(res, &mut new, replicas);
            match (
                new.get_mut("metadata").and_then(Value::as_object_mut),
                managed,
            ) {
                (Some(m), Some(mf)) => m.insert("managedFields".into(), mf),
                (Some(m), None) => m.remove("managedFields"),
                _ => None,
            };
            Ok(new)
        })?;
    scale_of(res, &out)
}

fn replicas_of(scale: &Value) -> i64 {
    scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The `Scale` of `obj`.
fn scale_of(res: &Resource, obj: &Value) -> Result<Value, ApiError> {
    let paths = res.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    let spec = apply::get_path(obj, &paths.spec_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = apply::get_path(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = paths
        .label_selector
        .as_ref()
        .and_then(|p| apply::get_path(obj, p))
        .map(|s| match s {
            Value::String(s) => s.clone(),
            other => selector_to_string(other),
        })
        .unwrap_or_default();
    let m = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut status_v = json!({"replicas": status});
    if !selector.is_empty() {
        status_v["selector"] = json!(selector);
    }
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m.get("name"),
            "namespace": m.get("namespace"),
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
            "creationTimestamp": m.get("creationTimestamp"),
        },
        "spec": {"replicas": spec},
        "status": status_v,
    }))
}

/// Writes `replicas` at the resource's spec replicas path, creating the
/// objects on the way.
fn set_replicas(res: &Resource, obj: &mut Value, replicas: i64) {
    let Some(paths) = &res.scale else { return };
    let mut cur = obj;
    for (i, k) in paths.spec_replicas.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(m) = cur.as_object_mut() else { return };
        if i + 1 == paths.spec_replicas.len() {
            m.insert(k.clone(), json!(replicas));
            return;
        }
        cur = m.entry(k.clone()).or_insert_with(|| json!({}));
    }
}
