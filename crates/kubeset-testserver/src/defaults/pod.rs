//! A pod spec's defaults, as k8s.io/kubernetes v1.35's `SetDefaults_*`
//! of `pkg/apis/core/v1/defaults.go` write them on every decode: for a
//! Pod, and for every pod template (Deployments, ReplicaSets,
//! StatefulSets, DaemonSets, Jobs, CronJobs, ReplicationControllers,
//! PodTemplates). Checked against kube-apiserver v1.35.4 by the
//! differential suite (`tests/differential/45-defaults.cases`,
//! `46-defaults-kinds.cases`).

use serde_json::{Map, Value, json};

/// Sets `key` of `m` to `v` when it is missing or null.
fn or_insert(m: &mut Map<String, Value>, key: &str, v: Value) {
    match m.get(key) {
        Some(x) if !x.is_null() => {}
        _ => {
            m.insert(key.to_owned(), v);
        }
    }
}

/// The objects of the list at `key` of `m`.
fn items<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    super::objects_mut(m.get_mut(key))
}

/// A pod template (`{metadata, spec}`): Go's `ObjectMeta` is a struct, so
/// a template without metadata is answered with `metadata: {}`; its spec
/// gets [`pod_spec`].
pub(super) fn template(t: &mut Value) {
    let Some(m) = t.as_object_mut() else { return };
    or_insert(m, "metadata", json!({}));
    if let Some(spec) = m.get_mut("spec").and_then(Value::as_object_mut) {
        pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and what it reaches: containers, volumes, probes.
pub(super) fn pod_spec(spec: &mut Map<String, Value>) {
    for (k, v) in [
        ("dnsPolicy", json!("ClusterFirst")),
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
    ] {
        or_insert(spec, k, v);
    }
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, key) {
            container(c);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

/// `SetDefaults_Container` (and its ports, env, probes, lifecycle).
fn container(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let policy = pull_policy(image);
    or_insert(c, "imagePullPolicy", json!(policy));
    or_insert(c, "terminationMessagePath", json!("/dev/termination-log"));
    or_insert(c, "terminationMessagePolicy", json!("File"));
    // A Go struct, never omitted.
    or_insert(c, "resources", json!({}));
    for p in items(c, "ports") {
        or_insert(p, "protocol", json!("TCP"));
    }
    for e in items(c, "env") {
        let Some(from) = e.get_mut("valueFrom").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(f) = from.get_mut("fieldRef").and_then(Value::as_object_mut) {
            or_insert(f, "apiVersion", json!("v1"));
        }
        if let Some(f) = from.get_mut("fileKeyRef").and_then(Value::as_object_mut) {
            or_insert(f, "optional", json!(false));
        }
    }
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(key).and_then(Value::as_object_mut) {
            probe(p);
        }
    }
    if let Some(l) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for key in ["postStart", "preStop"] {
            if let Some(h) = l.get_mut(key).and_then(Value::as_object_mut) {
                http_get(h);
            }
        }
    }
}

/// `IfNotPresent`, or `Always` for an image whose tag is `latest` or that
/// has neither tag nor digest (`parsers.ParseImageName`'s default tag).
fn pull_policy(image: &str) -> &'static str {
    if image.is_empty() {
        return "IfNotPresent";
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.rsplit_once(':').map(|(_, t)| t);
    match tag {
        Some("latest") => "Always",
        None if !digest => "Always",
        _ => "IfNotPresent",
    }
}

/// `SetDefaults_Probe` and its handlers': an HTTP GET's path and scheme,
/// a gRPC check's `service` (the empty name: the server's overall health).
fn probe(p: &mut Map<String, Value>) {
    for (k, v) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        or_insert(p, k, json!(v));
    }
    http_get(p);
    if let Some(g) = p.get_mut("grpc").and_then(Value::as_object_mut) {
        or_insert(g, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction`: path `/`, scheme `HTTP`.
fn http_get(handler: &mut Map<String, Value>) {
    if let Some(h) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        or_insert(h, "path", json!("/"));
        or_insert(h, "scheme", json!("HTTP"));
    }
}

/// `SetDefaults_Volume` and its sources': a volume without a source is
/// an `emptyDir`; an image's pull policy as a container's; file modes 0644 (420); a projected token's hour; a
/// downward API item's field apiVersion; an ephemeral claim's
/// `volumeMode`; the in-tree drivers' ([`volume_source`]).
fn volume(v: &mut Map<String, Value>) {
    if !v.iter().any(|(k, x)| k != "name" && !x.is_null()) {
        v.insert("emptyDir".into(), json!({}));
    }
    if let Some(i) = v.get_mut("image").and_then(Value::as_object_mut) {
        let reference = i.get("reference").and_then(Value::as_str).unwrap_or("");
        let policy = pull_policy(reference);
        or_insert(i, "pullPolicy", json!(policy));
    }
    volume_source(v);
    for key in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(key).and_then(Value::as_object_mut) {
            or_insert(s, "defaultMode", json!(420));
        }
    }
    if let Some(d) = v.get_mut("downwardAPI").and_then(Value::as_object_mut) {
        field_refs(d);
    }
    if let Some(p) = v.get_mut("projected").and_then(Value::as_object_mut) {
        for src in items(p, "sources") {
            if let Some(d) = src.get_mut("downwardAPI").and_then(Value::as_object_mut) {
                field_refs(d);
            }
            if let Some(t) = src
                .get_mut("serviceAccountToken")
                .and_then(Value::as_object_mut)
            {
                or_insert(t, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(t) = v
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(Value::as_object_mut)
    {
        // A Go struct, never omitted.
        or_insert(t, "metadata", json!({}));
        if let Some(spec) = t.get_mut("spec").and_then(Value::as_object_mut) {
            claim_spec(spec);
        }
    }
}

/// The field apiVersion of a downward API's items.
fn field_refs(d: &mut Map<String, Value>) {
    for item in items(d, "items") {
        if let Some(f) = item.get_mut("fieldRef").and_then(Value::as_object_mut) {
            or_insert(f, "apiVersion", json!("v1"));
        }
    }
}

/// The defaults a Pod's volume and a PersistentVolume share
/// (`zz_generated.defaults.go`): a hostPath's unset type and the in-tree
/// drivers' (iSCSI, RBD, Azure Disk, ScaleIO).
pub(super) fn volume_source(v: &mut Map<String, Value>) {
    let table = [
        ("hostPath", vec![("type", json!(""))]),
        ("iscsi", vec![("iscsiInterface", json!("default"))]),
        (
            "rbd",
            vec![
                ("pool", json!("rbd")),
                ("user", json!("admin")),
                ("keyring", json!("/etc/ceph/keyring")),
            ],
        ),
        (
            "azureDisk",
            vec![
                ("cachingMode", json!("ReadWrite")),
                ("fsType", json!("ext4")),
                ("readOnly", json!(false)),
                ("kind", json!("Shared")),
            ],
        ),
        (
            "scaleIO",
            vec![
                ("storageMode", json!("ThinProvisioned")),
                ("fsType", json!("xfs")),
            ],
        ),
    ];
    for (source, pairs) in table {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            for (k, x) in pairs {
                or_insert(s, k, x);
            }
        }
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: a filesystem volume.
pub(super) fn claim_spec(spec: &mut Map<String, Value>) {
    or_insert(spec, "volumeMode", json!("Filesystem"));
}

/// A Pod's own defaults beyond its spec's (`SetDefaults_Pod`): requests
/// taken from limits, service links on, host ports on the host network.
pub(crate) fn pod(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for key in ["initContainers", "containers"] {
        for c in items(spec, key) {
            requests_from_limits(c);
        }
    }
    pod_spec(spec);
    or_insert(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork") == Some(&json!(true)) {
        for key in ["initContainers", "containers"] {
            for c in items(spec, key) {
                host_ports(c);
            }
        }
    }
}

/// On the host network, a container port's `hostPort` is its
/// `containerPort` unless set (a Pod's default, not a template's).
fn host_ports(c: &mut Map<String, Value>) {
    for p in items(c, "ports") {
        let unset = p.get("hostPort").is_none_or(|h| h.is_null() || h == 0);
        if unset && let Some(port) = p.get("containerPort").cloned() {
            p.insert("hostPort".into(), port);
        }
    }
}

/// What kube-apiserver's default admission plugins add to a new Pod
/// (`Priority`: priority 0 and `PreemptLowerPriority`;
/// `DefaultTolerationSeconds`: 300 s for the not-ready and unreachable
/// taints unless the pod tolerates them).
pub(crate) fn pod_admission(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("priorityClassName").is_none_or(|p| p == "") {
        or_insert(spec, "priority", json!(0));
    }
    or_insert(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    default_tolerations(spec);
}

/// A new Pod's status as its registry's `PrepareForCreate` writes it:
/// `Pending`, with the pod's QoS class.
pub(crate) fn pending_status(obj: &mut Value) {
    let qos = qos_class(obj);
    obj["status"] = json!({"phase": "Pending", "qosClass": qos});
}

/// The pod's QoS class (`GetPodQOS`): `Guaranteed` when every container
/// has CPU and memory limits and requests equal to them, `BestEffort`
/// when none has any request or limit, else `Burstable`.
pub(super) fn qos_class(obj: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .filter_map(|k| obj.pointer(&format!("/spec/{k}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let part = |c: &Value, which: &str| {
        c.pointer(&format!("/resources/{which}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let any = containers
        .iter()
        .any(|c| !part(c, "requests").is_empty() || !part(c, "limits").is_empty());
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let (req, lim) = (part(c, "requests"), part(c, "limits"));
        ["cpu", "memory"]
            .iter()
            .all(|r| lim.get(*r).is_some() && req.get(*r).is_none_or(|v| Some(v) == lim.get(*r)))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A container's limits copied into its requests where a request is
/// missing.
fn requests_from_limits(c: &mut Map<String, Value>) {
    let Some(limits) = c
        .get("resources")
        .and_then(|r| r.get("limits"))
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let requests = res.entry("requests").or_insert_with(|| json!({}));
    if let Some(r) = requests.as_object_mut() {
        for (k, v) in limits {
            r.entry(k).or_insert(v);
        }
    }
}

/// `DefaultTolerationSeconds`: `NoExecute` tolerations of 300 s for the
/// node taints `not-ready` and `unreachable`, each unless the pod already
/// tolerates that taint (its key, or no key with `Exists`).
fn default_tolerations(spec: &mut Map<String, Value>) {
    let existing: Vec<Value> = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let tolerates = |key: &str| {
        existing.iter().any(|t| {
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            let tkey = t.get("key").and_then(Value::as_str).unwrap_or("");
            let op = t.get("operator").and_then(Value::as_str).unwrap_or("");
            (effect.is_empty() || effect == "NoExecute")
                && (tkey == key || (tkey.is_empty() && op == "Exists"))
        })
    };
    let mut added = existing.clone();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        if !tolerates(key) {
            added.push(json!({"key": key, "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
    spec.insert("tolerations".into(), Value::Array(added));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(pull_policy("registry:5000/nginx:1"), "IfNotPresent");
        assert_eq!(pull_policy("nginx@sha256:abc"), "IfNotPresent");
        assert_eq!(pull_policy(""), "IfNotPresent");
    }

    #[test]
    fn a_pod_tolerating_every_taint_gets_no_default_toleration() {
        let mut spec = Map::new();
        spec.insert("tolerations".into(), json!([{"operator": "Exists"}]));
        default_tolerations(&mut spec);
        assert_eq!(spec["tolerations"], json!([{"operator": "Exists"}]));
        let mut spec = Map::new();
        default_tolerations(&mut spec);
        assert_eq!(spec["tolerations"].as_array().map(Vec::len), Some(2));
    }
}
