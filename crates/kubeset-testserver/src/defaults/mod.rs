//! Defaults the real server writes, per kind, as k8s.io/kubernetes v1.35
//! does: [`on_decode`] those of its `SetDefaults_*` functions, applied to
//! every written object of a built-in kind as it is decoded (create,
//! update, every patch's result, an apply's merged object), so that the
//! writer of an update owns them in `managedFields` as kube-apiserver
//! records them; [`on_create`] those of the registries' `PrepareForCreate`
//! and the default admission plugins, for a new object (checked against
//! kube-apiserver by `tests/validation.rs`, whose Table goldens show them,
//! and the differential suite's `45-defaults.cases` and
//! `46-defaults-kinds.cases`); [`after_record`] and [`prepare_for_update`]
//! what the registries write after the field manager, owned by no one.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::resources::Resource;

mod batch;
mod pod;
mod service;
mod storage;
mod workloads;

/// The `SetDefaults_*` of `res`'s kind on a decoded object `obj`: a pod
/// spec's (a Pod's and every pod template's), the workloads' own, the
/// storage kinds', a Namespace's name label, a Node's allocatable
/// resources.
pub(crate) fn on_decode(res: &Resource, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") => namespace(obj),
        ("", "persistentvolumeclaims") => storage::claim(obj),
        ("", "persistentvolumes") => storage::volume(obj),
        ("storage.k8s.io", "storageclasses") => storage::storage_class(obj),
        ("", "pods") => pod::pod(obj),
        ("", "services") => service::service(obj),
        ("", "podtemplates") => {
            if let Some(t) = obj.get_mut("template") {
                pod::template(t);
            }
        }
        ("", "replicationcontrollers") => workloads::replica_set(obj, true),
        ("", "nodes") => workloads::node(obj),
        ("apps", "deployments") => workloads::deployment(obj),
        ("apps", "replicasets") => workloads::replica_set(obj, false),
        ("apps", "statefulsets") => workloads::stateful_set(obj),
        ("apps", "daemonsets") => workloads::daemon_set(obj),
        ("batch", "jobs") => batch::job(obj),
        ("batch", "cronjobs") => batch::cron_job(obj),
        _ => {}
    }
}

/// Go's zero value of a workload kind beyond its empty `spec` and
/// `status`: the structs and lists its type never omits (a pod template's
/// `metadata` and `containers`, a strategy), which the field manager's
/// comparison of a create starts from, so their creator owns their
/// members but not the nodes themselves (no `"."` entry), as
/// kube-apiserver records it.
pub(crate) fn go_zero(res: &Resource, zero: &mut Value) {
    let template = json!({"metadata": {}, "spec": {"containers": null}});
    let spec = match (res.group.as_str(), res.plural.as_str()) {
        ("", "pods") => json!({"containers": null}),
        ("", "persistentvolumeclaims") => json!({"resources": {}}),
        ("", "podtemplates") => {
            zero["template"] = template;
            return;
        }
        ("apps", "deployments") => json!({"template": template, "strategy": {}, "selector": null}),
        ("apps", "statefulsets") => json!({"template": template, "updateStrategy": {},
            "selector": null, "serviceName": ""}),
        ("apps", "daemonsets") => {
            json!({"template": template, "updateStrategy": {}, "selector": null})
        }
        ("apps", "replicasets") => json!({"template": template, "selector": null}),
        ("batch", "jobs") => json!({"template": template}),
        ("batch", "cronjobs") => {
            json!({"jobTemplate": {"metadata": {}, "spec": {"template": template}}})
        }
        _ => return,
    };
    zero["spec"] = spec;
}

/// Applies the defaults of `res`'s kind to the new object `obj` (which has
/// its `uid` already: a Job's generated selector names it).
pub(crate) fn on_create(res: &Resource, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") => namespace(obj),
        ("", "pods") => {
            let qos = pod::qos_class(obj);
            obj["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        ("apps", "daemonsets") => {
            workloads::template_generation(obj);
            workloads::new_status(obj, &res.plural);
        }
        ("apps", "statefulsets" | "replicasets" | "deployments")
        | ("", "replicationcontrollers")
        | ("batch", "cronjobs" | "jobs") => workloads::new_status(obj, &res.plural),
        ("", "secrets") => secret(obj),
        ("autoscaling", "horizontalpodautoscalers") => hpa(obj),
        _ => {}
    }
}

/// What a registry's `PrepareForCreate` sets after the field manager has
/// recorded the write, so owned by no one: a namespace's `spec.finalizers`
/// and `status.phase`, a Job's generated selector, a Service's IP
/// families, a PersistentVolume's phase transition time.
///
/// Also what kube-apiserver's default admission plugins add to a new
/// object, after the field manager has recorded the request: a Pod's
/// priority and default tolerations, a claim's or volume's protection
/// finalizer (`StorageObjectInUseProtection`), a new Node's `not-ready`
/// taint (`TaintNodesByCondition`).
pub(crate) fn after_record(res: &Resource, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") => namespace_finalizer(obj),
        ("batch", "jobs") => batch::generate_selector(obj),
        ("", "services") => service::families(obj),
        ("", "pods") => pod::pod_admission(obj),
        ("", "persistentvolumeclaims") => add_finalizer(obj, "kubernetes.io/pvc-protection"),
        ("", "persistentvolumes") => {
            add_finalizer(obj, "kubernetes.io/pv-protection");
            storage::phase_transition(obj);
        }
        ("", "nodes") => workloads::not_ready_taint(obj),
        _ => {}
    }
}

/// What a registry's `PrepareForUpdate` keeps or derives from the live
/// object `live` in an update's result `new`, after the field manager has
/// recorded the write: a Namespace's `spec.finalizers` (changed only
/// through `/finalize`), a DaemonSet's template generation (one more when
/// its pod template changed).
pub(crate) fn prepare_for_update(res: &Resource, live: &Value, new: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") => {
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
        ("apps", "daemonsets") => workloads::next_template_generation(live, new),
        _ => {}
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
fn namespace(obj: &mut Value) {
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
fn namespace_finalizer(obj: &mut Value) {
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
fn hpa(obj: &mut Value) {
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

/// What the real server does to every written object while decoding it,
/// update and patch included: a Secret's `stringData` moves into `data`
/// (the v1 to internal conversion).
pub(crate) fn on_update(res: &Resource, obj: &mut Value) {
    if res.group.is_empty() && res.plural == "secrets" {
        string_data(obj);
    }
}

/// As the Secret conversion and defaulting do: `stringData` is merged into
/// `data` (base64) and dropped, `type` defaults to `Opaque`.
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
