//! The `scale` subresource (`autoscaling/v1` `Scale`) of every resource
//! whose registry declares one: the built-in workloads and custom
//! resources with `subresources.scale`. GET reads it from the parent; PUT
//! and PATCH (JSON, merge, strategic merge, and apply as a merge) change
//! only the parent's replica count.

use serde_json::{Value, json};

use super::{Call, Desired};
use crate::apply::{self, Scope};
use crate::resources::Resource;
use crate::selectors::selector_to_string;
use crate::status::ApiError;
use crate::store::WriteCtx;
use crate::store::check_rv;
use crate::util;

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
    write(call, desired)
}

/// A write through the scale (PUT, PATCH, apply), as kube-apiserver's scale
/// handler makes it: on the `Scale`, whose owners are the parent's owners
/// of the replicas; the `Scale`'s owners of `.spec.replicas` then go back to
/// the parent's replicas path (`apply::through_scale`). An apply conflicts
/// with the manager that set the replicas.
fn write(call: &Call<'_>, desired: Desired<'_>) -> Result<Value, ApiError> {
    let res = call.res;
    let paths = res.scale.as_ref().ok_or_else(ApiError::path_not_found)?;
    let scope = Scope::Main {
        status_separate: res.has_status(),
    };
    // The managedFields are computed here, not by `Store::modify`.
    let ctx = WriteCtx {
        applied: true,
        ..call.ctx.clone()
    };
    let out = call
        .store
        .modify(res, call.ns, call.name, scope, &ctx, |live| {
            let live = live.ok_or_else(|| ApiError::not_found(res, call.name))?;
            let scale = scale_of(res, live)?;
            let now = util::now_rfc3339();
            let writer = apply::Writer {
                manager: &ctx.manager,
                api_version: &res.api_version(),
                now: &now,
                scope,
                res,
            };
            let on_scale = |s: &Value, w: &apply::Writer<'_>| -> Result<Value, ApiError> {
                let replicas = match &desired {
                    Desired::Apply { config, force } => {
                        check_rv(res, call.name, config, live)?;
                        return apply::apply(s, config, w, *force)
                            .map_err(|e| e.into_api(res, call.name));
                    }
                    Desired::Object(body) => {
                        check_rv(res, call.name, body, live)?;
                        replicas_of(body)
                    }
                    Desired::Patch(patch) => {
                        let mut scale = s.clone();
                        patch(&mut scale)?;
                        replicas_of(&scale)
                    }
                };
                let mut new = s.clone();
                new["spec"] = json!({"replicas": replicas});
                apply::record_update(Some(s), &mut new, w);
                Ok(new)
            };
            let (replicas, managed) =
                apply::through_scale(live, &scale, &paths.spec_replicas, &writer, on_scale)?;
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
