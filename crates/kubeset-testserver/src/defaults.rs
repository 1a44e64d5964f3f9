//! Defaults the real server writes on a new object, per kind, as
//! k8s.io/kubernetes v1.35 does in its `SetDefaults_*` functions and the
//! registries' `PrepareForCreate` (checked against kube-apiserver by
//! `tests/validation.rs`, whose Table goldens show them). Only the fields
//! a client or `kubectl get` reads are set; pod-spec defaults
//! (`terminationMessagePath`, `dnsPolicy`, …) are not.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::resources::Resource;
use crate::services;

/// Applies the defaults of `res`'s kind to the new object `obj` (which has
/// its `uid` already: a Job's generated selector names it).
pub(crate) fn on_create(res: &Resource, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") => namespace_label(obj),
        ("", "pods") => obj["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"}),
        ("", "secrets") => secret(obj),
        ("", "services") => services::defaults(obj),
        ("", "persistentvolumeclaims") => {
            or_insert(obj, "/spec", "volumeMode", json!("Filesystem"));
            obj["status"] = json!({"phase": "Pending"});
        }
        ("", "persistentvolumes") => {
            or_insert(
                obj,
                "/spec",
                "persistentVolumeReclaimPolicy",
                json!("Retain"),
            );
            or_insert(obj, "/spec", "volumeMode", json!("Filesystem"));
            obj["status"] = json!({"phase": "Pending"});
        }
        ("batch", "jobs") => job(obj),
        ("storage.k8s.io", "storageclasses") => {
            let Some(m) = obj.as_object_mut() else { return };
            m.entry("reclaimPolicy").or_insert(json!("Delete"));
            m.entry("volumeBindingMode").or_insert(json!("Immediate"));
        }
        ("autoscaling", "horizontalpodautoscalers") => hpa(obj),
        ("batch", "cronjobs") => {
            for (k, v) in [
                ("concurrencyPolicy", json!("Allow")),
                ("suspend", json!(false)),
                ("successfulJobsHistoryLimit", json!(3)),
                ("failedJobsHistoryLimit", json!(1)),
            ] {
                or_insert(obj, "/spec", k, v);
            }
        }
        _ => {}
    }
}

/// What a registry's `PrepareForCreate` sets after the field manager has
/// recorded the write, so owned by no one: a namespace's `spec.finalizers`
/// and `status.phase`.
pub(crate) fn after_record(res: &Resource, obj: &mut Value) {
    if res.group.is_empty() && res.plural == "namespaces" {
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }
}

/// `SetDefaults_Namespace`: the label `kubernetes.io/metadata.name` is the
/// name. A decoding default, so the creator owns it.
fn namespace_label(obj: &mut Value) {
    let name = obj
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if let Some(l) = labels.as_object_mut() {
        l.insert("kubernetes.io/metadata.name".into(), name);
    }
}

/// A HorizontalPodAutoscaler as `SetDefaults_HorizontalPodAutoscaler`
/// leaves it: `minReplicas` 1 and, in autoscaling/v2, no metrics meaning
/// the CPU at 80 % utilization (checked against kube-apiserver 1.35).
fn hpa(obj: &mut Value) {
    or_insert(obj, "/spec", "minReplicas", json!(1));
    if obj["apiVersion"] != "autoscaling/v2" {
        return;
    }
    let no_metrics = obj
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if obj.get("status").is_none_or(Value::is_null) {
        obj["status"] = json!({"currentMetrics": null, "desiredReplicas": 0});
    }
}

/// Sets `key` in the object at `ptr` when it is missing (and the object
/// exists).
fn or_insert(obj: &mut Value, ptr: &str, key: &str, v: Value) {
    if let Some(m) = obj.pointer_mut(ptr).and_then(Value::as_object_mut) {
        m.entry(key).or_insert(v);
    }
}

/// A Job as `SetDefaults_Job` and the registry's selector generation
/// leave it: one completion and one pod when neither is given,
/// `backoffLimit` 6, `NonIndexed`, not suspended, and (unless
/// `manualSelector`) the selector `batch.kubernetes.io/controller-uid=<uid>`
/// with the four job labels on the template, copied to the Job when it
/// has no labels of its own.
fn job(obj: &mut Value) {
    let uid = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
    }
    for (k, v) in [
        ("parallelism", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
    ] {
        spec.entry(k).or_insert(v);
    }
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    spec.insert("manualSelector".into(), json!(false));
    spec.insert(
        "selector".into(),
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
    let template = spec.entry("template").or_insert_with(|| json!({}));
    let Some(labels) = template_labels(template) else {
        return;
    };
    for (k, v) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels.insert(k.into(), json!(v));
    }
    let labels = Value::Object(labels.clone());
    let own = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty());
    if !own && let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("labels".into(), labels);
    }
}

/// The label map of a pod template, created (with the objects on the
/// way) when missing.
fn template_labels(template: &mut Value) -> Option<&mut Map<String, Value>> {
    let mut cur = template;
    for key in ["metadata", "labels"] {
        if !cur.is_object() {
            *cur = json!({});
        }
        cur = cur.as_object_mut()?.entry(key).or_insert_with(|| json!({}));
    }
    if !cur.is_object() {
        *cur = json!({});
    }
    cur.as_object_mut()
}

/// As the Secret conversion and defaulting do: `stringData` is merged into
/// `data` (base64) and dropped, `type` defaults to `Opaque`.
/// What the real server does to every written object while decoding it,
/// update and patch included: a Secret's `stringData` moves into `data`
/// (the v1 to internal conversion).
pub(crate) fn on_update(res: &Resource, obj: &mut Value) {
    if res.group.is_empty() && res.plural == "secrets" {
        string_data(obj);
    }
}

fn secret(obj: &mut Value) {
    string_data(obj);
    let Some(m) = obj.as_object_mut() else { return };
    if m.get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        m.insert("type".into(), json!("Opaque"));
    }
}

/// `stringData` merged into `data`, base64-encoded, its keys winning.
fn string_data(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else { return };
    if let Some(Value::Object(strings)) = m.remove("stringData") {
        let data = m.entry("data").or_insert_with(|| json!({}));
        if let Some(d) = data.as_object_mut() {
            for (k, v) in strings {
                let text = v.as_str().unwrap_or_default();
                let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                d.insert(k, Value::String(encoded));
            }
        }
    }
}
