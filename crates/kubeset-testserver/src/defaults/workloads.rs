//! The apps kinds' defaults (`pkg/apis/apps/v1/defaults.go` and, for a
//! ReplicationController, `pkg/apis/core/v1/defaults.go` of
//! k8s.io/kubernetes v1.35), written on every decode, each with its pod
//! template's ([`super::pod`]); a DaemonSet's template generation and a
//! Node's status and taint. Checked against kube-apiserver v1.35.4 by
//! the differential suite (`tests/differential/45-defaults.cases`,
//! `46-defaults-kinds.cases`).

use serde_json::{Value, json};

use super::pod;

/// Sets each missing (or null) `(key, value)` of the object at `ptr` of
/// `obj`.
pub(super) fn set_missing(obj: &mut Value, ptr: &str, pairs: Vec<(&str, Value)>) {
    if let Some(m) = obj.pointer_mut(ptr).and_then(Value::as_object_mut) {
        for (k, v) in pairs {
            if m.get(k).is_none_or(Value::is_null) {
                m.insert(k.to_owned(), v);
            }
        }
    }
}

/// The pod template at `ptr`.
pub(super) fn template_at(obj: &mut Value, ptr: &str) {
    if let Some(t) = obj.pointer_mut(ptr) {
        pod::template(t);
    }
}

/// The update strategy at `/spec/{key}` as a Deployment's and a
/// DaemonSet's defaulting leave it: type `RollingUpdate` unless given,
/// and for that type a `rollingUpdate` with `limits` where unset.
fn rolling_update(obj: &mut Value, key: &str, limits: [(&str, Value); 2]) {
    let at = format!("/spec/{key}");
    set_missing(obj, "/spec", vec![(key, json!({}))]);
    set_missing(obj, &at, vec![("type", json!("RollingUpdate"))]);
    if obj.pointer(&format!("{at}/type")) == Some(&json!("RollingUpdate")) {
        set_missing(obj, &at, vec![("rollingUpdate", json!({}))]);
        set_missing(obj, &format!("{at}/rollingUpdate"), Vec::from(limits));
    }
}

/// `SetDefaults_Deployment`: one replica, a 25 % / 25 % rolling update
/// (when the strategy is `RollingUpdate`, the default), 10 old
/// ReplicaSets kept, a 600 s progress deadline.
pub(crate) fn deployment(obj: &mut Value) {
    set_missing(
        obj,
        "/spec",
        vec![
            ("replicas", json!(1)),
            ("revisionHistoryLimit", json!(10)),
            ("progressDeadlineSeconds", json!(600)),
        ],
    );
    let limits = [("maxUnavailable", json!("25%")), ("maxSurge", json!("25%"))];
    rolling_update(obj, "strategy", limits);
    template_at(obj, "/spec/template");
}

/// `SetDefaults_DaemonSet`: a rolling update of one unavailable pod and
/// no surge, 10 revisions kept.
pub(crate) fn daemon_set(obj: &mut Value) {
    set_missing(obj, "/spec", vec![("revisionHistoryLimit", json!(10))]);
    let limits = [("maxUnavailable", json!(1)), ("maxSurge", json!(0))];
    rolling_update(obj, "updateStrategy", limits);
    template_at(obj, "/spec/template");
}

/// `SetDefaults_ReplicaSet` (and a ReplicationController's, whose
/// selector and labels default to its template's labels).
pub(crate) fn replica_set(obj: &mut Value, controller: bool) {
    set_missing(obj, "/spec", vec![("replicas", json!(1))]);
    if controller {
        let labels = obj.pointer("/spec/template/metadata/labels").cloned();
        if let Some(l) = labels.filter(|l| l.as_object().is_some_and(|m| !m.is_empty())) {
            set_missing(obj, "/spec", vec![("selector", l.clone())]);
            set_missing(obj, "/metadata", vec![("labels", l)]);
        }
    }
    template_at(obj, "/spec/template");
}

/// `SetDefaults_StatefulSet`: one replica, ordered pod management, 10
/// revisions kept, claims retained; a rolling update (from partition 0)
/// when no strategy is given, and partition 0 in a given
/// `rollingUpdate` (a `RollingUpdate` type given without one stays
/// without); each claim template a claim's defaults, and its kind (the
/// real server writes `apiVersion` and `kind` in each). The service name
/// is a Go string never omitted.
pub(crate) fn stateful_set(obj: &mut Value) {
    set_missing(
        obj,
        "/spec",
        vec![
            ("serviceName", json!("")),
            ("replicas", json!(1)),
            ("podManagementPolicy", json!("OrderedReady")),
            ("updateStrategy", json!({})),
            ("revisionHistoryLimit", json!(10)),
            ("persistentVolumeClaimRetentionPolicy", json!({})),
        ],
    );
    let strategy = "/spec/updateStrategy";
    if obj
        .pointer("/spec/updateStrategy/type")
        .is_none_or(|t| t.is_null() || t == "")
    {
        set_missing(
            obj,
            strategy,
            vec![
                ("type", json!("RollingUpdate")),
                ("rollingUpdate", json!({})),
            ],
        );
    }
    if obj.pointer("/spec/updateStrategy/type") == Some(&json!("RollingUpdate")) {
        let partition = vec![("partition", json!(0))];
        set_missing(obj, "/spec/updateStrategy/rollingUpdate", partition);
    }
    let retain = || json!("Retain");
    set_missing(
        obj,
        "/spec/persistentVolumeClaimRetentionPolicy",
        vec![("whenDeleted", retain()), ("whenScaled", retain())],
    );
    template_at(obj, "/spec/template");
    let claims = obj
        .pointer_mut("/spec/volumeClaimTemplates")
        .and_then(Value::as_array_mut);
    for claim in claims.into_iter().flatten() {
        super::storage::claim(claim);
        let kind = vec![
            ("apiVersion", json!("v1")),
            ("kind", json!("PersistentVolumeClaim")),
        ];
        set_missing(claim, "", kind);
    }
}

/// A Node's status: its allocatable resources default to its capacity
/// (`SetDefaults_NodeStatus`), and the Go structs it never omits (the
/// kubelet's endpoint, port 0; the node's info, empty strings).
pub(crate) fn node(obj: &mut Value) {
    let capacity = obj.pointer("/status/capacity").cloned();
    set_missing(obj, "", vec![("status", json!({}))]);
    if let Some(c) = capacity.filter(|c| c.as_object().is_some_and(|m| !m.is_empty())) {
        set_missing(obj, "/status", vec![("allocatable", c)]);
    }
    let endpoint = json!({"kubeletEndpoint": {}});
    let pairs = vec![("daemonEndpoints", endpoint), ("nodeInfo", json!({}))];
    set_missing(obj, "/status", pairs);
    let port = vec![("kubeletEndpoint", json!({}))];
    set_missing(obj, "/status/daemonEndpoints", port);
    let port = vec![("Port", json!(0))];
    set_missing(obj, "/status/daemonEndpoints/kubeletEndpoint", port);
    let info = [
        "machineID",
        "systemUUID",
        "bootID",
        "kernelVersion",
        "osImage",
        "containerRuntimeVersion",
        "kubeletVersion",
        "kubeProxyVersion",
        "operatingSystem",
        "architecture",
    ];
    let info = info.into_iter().map(|k| (k, json!(""))).collect();
    set_missing(obj, "/status/nodeInfo", info);
}

/// The status a new workload is answered with: its Go status struct's
/// non-omitempty counters at zero (kube-apiserver resets the status of a
/// new object and writes the zero struct).
pub(crate) fn new_status(obj: &mut Value, plural: &str) {
    let zero: &[&str] = match plural {
        "statefulsets" => &["replicas", "availableReplicas"],
        "daemonsets" => &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        ],
        "replicasets" | "replicationcontrollers" => &["replicas"],
        // A Job's, a CronJob's, a Deployment's: `{}`.
        _ => &[],
    };
    let Some(m) = obj.as_object_mut() else { return };
    let status = m.entry("status").or_insert_with(|| json!({}));
    if let Some(s) = status.as_object_mut() {
        for k in zero {
            s.entry(*k).or_insert(json!(0));
        }
    }
}

/// The annotation apps/v1 shows a DaemonSet's template generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// A new DaemonSet's template generation 1 (unless the body names a
/// later one), shown as the annotation `deprecated.daemonset.template.generation`
/// (its creator owns it).
pub(crate) fn template_generation(obj: &mut Value) {
    let given = generation_of(obj).filter(|g| *g >= 1).unwrap_or(1);
    set_template_generation(obj, given);
}

/// An update's template generation: the live one, one more when the pod
/// template changed (the daemonset registry's `PrepareForUpdate`).
pub(crate) fn next_template_generation(live: &Value, new: &mut Value) {
    let Some(g) = generation_of(live) else { return };
    let changed = live.pointer("/spec/template") != new.pointer("/spec/template");
    set_template_generation(new, if changed { g.saturating_add(1) } else { g });
}

/// The template generation an object's annotation names.
fn generation_of(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/annotations")?
        .get(TEMPLATE_GENERATION)?
        .as_str()?
        .parse()
        .ok()
}

/// Writes template generation `g` as the annotation.
fn set_template_generation(obj: &mut Value, g: i64) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let ann = meta.entry("annotations").or_insert_with(|| json!({}));
    if ann.is_null() {
        *ann = json!({});
    }
    if let Some(a) = ann.as_object_mut() {
        a.insert(TEMPLATE_GENERATION.into(), json!(g.to_string()));
    }
}

/// `TaintNodesByCondition`: a new Node is tainted `not-ready:NoSchedule`
/// until its kubelet reports it ready.
pub(crate) fn not_ready_taint(obj: &mut Value) {
    let taint = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
    let Some(m) = obj.as_object_mut() else { return };
    let spec = m.entry("spec").or_insert_with(|| json!({}));
    let Some(s) = spec.as_object_mut() else {
        return;
    };
    let taints = s.entry("taints").or_insert_with(|| json!([]));
    if let Some(t) = taints.as_array_mut()
        && !t.iter().any(|x| x.get("key") == taint.get("key"))
    {
        t.push(taint);
    }
}
