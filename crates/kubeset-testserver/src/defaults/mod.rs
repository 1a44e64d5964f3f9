//! Defaults the real server writes, per kind, as k8s.io/kubernetes v1.35
//! does: the rule bodies, as `pkg/apis/<group>/v1/defaults.go` and the
//! registries' strategies hold them; which kind gets which is its
//! strategy's ([`crate::registry::Strategy`]), whose hooks call them:
//!
//! - `on_decode`: the `SetDefaults_*` functions ([`pod`], [`workloads`],
//!   [`batch`], [`service`], [`storage`], [`namespace`]), applied to every
//!   written object of a built-in kind as it is decoded (create, update,
//!   every patch's result, an apply's merged object), so that the writer
//!   of an update owns them in `managedFields` as kube-apiserver records
//!   them;
//! - `go_zero`: Go's zero value the field manager compares a create
//!   against ([`zero`]);
//! - `on_create`: the registries' `PrepareForCreate` and the default
//!   admission plugins' values for a new object (checked against
//!   kube-apiserver by `tests/validation.rs`, whose Table goldens show
//!   them, and the differential suite's `45-defaults.cases` and
//!   `46-defaults-kinds.cases`);
//! - `after_record` and `prepare_for_update`: what the registries write
//!   after the field manager, owned by no one;
//! - `on_update`: the v1 to internal conversion of an update
//!   ([`string_data`]).

use base64::Engine as _;
use serde_json::{Map, Value, json};

pub(crate) mod batch;
pub(crate) mod pod;
pub(crate) mod service;
pub(crate) mod storage;
pub(crate) mod workloads;
pub(crate) mod zero;

/// The objects of the list `list` (none when it is missing or not a list).
pub(crate) fn objects_mut(
    list: Option<&mut Value>,
) -> impl Iterator<Item = &mut Map<String, Value>> {
    list.and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// A PodTemplate's `SetDefaults_*`: its template's, as every pod
/// template's.
pub(crate) fn pod_template(obj: &mut Value) {
    if let Some(t) = obj.get_mut("template") {
        pod::template(t);
    }
}

/// The namespace registry's `PrepareForUpdate`: an update's result `new`
/// keeps the live object's `spec.finalizers` (changed only through
/// `/finalize`).
pub(crate) fn keep_namespace_finalizers(live: &Value, new: &mut Value) {
    let kept = live.pointer("/spec/finalizers").cloned();
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        match kept {
            Some(f) => spec.insert("finalizers".into(), f),
            None => spec.remove("finalizers"),
        };
    } else if let (Some(f), Some(m)) = (kept, new.as_object_mut()) {
        m.insert("spec".into(), json!({ "finalizers": f }));
    }
}

/// Appends finalizer `f` unless `obj` has it.
fn add_finalizer(obj: &mut Value, f: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let list = meta.entry("finalizers").or_insert_with(|| json!([]));
    if let Some(a) = list.as_array_mut()
        && !a.iter().any(|x| x == f)
    {
        a.push(json!(f));
    }
}

/// `SetDefaults_Namespace` and its status's: the label
/// `kubernetes.io/metadata.name` is the name (when it is known: a
/// `generateName` namespace gets it on create), the phase `Active`. A
/// decoding default, so the writer owns it, and a write cannot remove it.
pub(crate) fn namespace(obj: &mut Value) {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(name) = name
    {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if labels.is_null() {
            *labels = json!({});
        }
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
    }
    workloads::set_missing(obj, "", vec![("status", json!({}))]);
    workloads::set_missing(obj, "/status", vec![("phase", json!("Active"))]);
}

/// The namespace registry's `PrepareForCreate`: the `kubernetes`
/// finalizer appended to `spec.finalizers` unless there, the phase
/// `Active`.
pub(crate) fn namespace_finalizer(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else { return };
    m.insert("status".into(), json!({"phase": "Active"}));
    let spec = m.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let Some(s) = spec.as_object_mut() else {
        return;
    };
    let list = s.entry("finalizers").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Some(a) = list.as_array_mut()
        && !a.iter().any(|f| f == "kubernetes")
    {
        a.push(json!("kubernetes"));
    }
}

/// A HorizontalPodAutoscaler as `SetDefaults_HorizontalPodAutoscaler`
/// leaves it: `minReplicas` 1 and, in autoscaling/v2, no metrics meaning
/// the CPU at 80 % utilization (checked against kube-apiserver 1.35).
pub(crate) fn hpa(obj: &mut Value) {
    workloads::set_missing(obj, "/spec", vec![("minReplicas", json!(1))]);
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

/// As the Secret conversion and defaulting do: `stringData` is merged into
/// `data` (base64) and dropped, `type` defaults to `Opaque`.
pub(crate) fn secret(obj: &mut Value) {
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
pub(crate) fn string_data(obj: &mut Value) {
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
