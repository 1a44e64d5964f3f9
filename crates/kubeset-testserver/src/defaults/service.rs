//! A Service's defaults: `SetDefaults_Service` of k8s.io/kubernetes
//! v1.35's `pkg/apis/core/v1/defaults.go`, written on every decode, and
//! the IP families its registry chooses for a new Service
//! (`pkg/registry/core/service/storage/alloc.go`, `initIPFamilyFields`,
//! on a single-stack IPv4 cluster). Checked against kube-apiserver v1.35.4
//! by the differential suite (`tests/differential/46-defaults-kinds.cases`).

use serde_json::{Map, Value, json};

use super::objects_mut;

/// Whether `m` lacks `key` (or holds null, or the empty string).
fn unset(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).is_none_or(|v| v.is_null() || v == "")
}

/// `SetDefaults_Service`: no session affinity (and then no affinity
/// config; a `ClientIP` affinity's timeout 3 h), type `ClusterIP`, each
/// port TCP to the same port of the pods, the cluster-wide traffic
/// policies, and for a load balancer node ports allocated and each
/// ingress IP's mode `VIP`.
pub(crate) fn service(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if unset(spec, "sessionAffinity") {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.pointer("/clientIP/timeoutSeconds"));
            if timeout.is_none_or(Value::is_null) {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    if unset(spec, "type") {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    ports(spec);
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let (lb, node_port) = (ty == "LoadBalancer", ty == "NodePort");
    let external = lb || node_port || (ty == "ClusterIP" && external_ips);
    if external && unset(spec, "externalTrafficPolicy") {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    let internal = lb || node_port || ty == "ClusterIP";
    if internal && spec.get("internalTrafficPolicy").is_none_or(Value::is_null) {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if lb
        && spec
            .get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
    if lb {
        ingress_modes(obj);
    }
}

/// Each port's protocol `TCP` and target port (when unset, 0 or "") its
/// port.
fn ports(spec: &mut Map<String, Value>) {
    for p in objects_mut(spec.get_mut("ports")) {
        if unset(p, "protocol") {
            p.insert("protocol".into(), json!("TCP"));
        }
        let target = p.get("targetPort");
        if target.is_none_or(|t| t.is_null() || t == 0 || t == "") {
            let port = p.get("port").cloned().unwrap_or(json!(0));
            p.insert("targetPort".into(), port);
        }
    }
}

/// A load balancer's ingress points with an IP get the mode `VIP`.
fn ingress_modes(obj: &mut Value) {
    for i in objects_mut(obj.pointer_mut("/status/loadBalancer/ingress")) {
        if !unset(i, "ip") && i.get("ipMode").is_none_or(Value::is_null) {
            i.insert("ipMode".into(), json!("VIP"));
        }
    }
}

/// A new Service's IP families, as its registry chooses them on an IPv4
/// cluster (none for `ExternalName`): the policy `SingleStack`, or
/// `RequireDualStack` for a headless Service without selector, which
/// gets both families; else the cluster's family, IPv4. And its status,
/// a Go struct: `loadBalancer: {}`.
pub(crate) fn families(obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        let status = o.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            s.entry("loadBalancer").or_insert_with(|| json!({}));
        }
    }
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        return;
    }
    let no_selector = spec
        .get("selector")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    let open_headless =
        spec.get("clusterIP").and_then(Value::as_str) == Some("None") && no_selector;
    if spec.get("ipFamilyPolicy").is_none_or(Value::is_null) {
        let policy = if open_headless {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        spec.insert("ipFamilyPolicy".into(), json!(policy));
    }
    let families = spec
        .get("ipFamilies")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut families = if families.is_empty() {
        vec![json!("IPv4")]
    } else {
        families
    };
    let single = spec.get("ipFamilyPolicy") == Some(&json!("SingleStack"));
    if open_headless && families.len() < 2 && !single {
        let other = if families[0] == "IPv4" {
            "IPv6"
        } else {
            "IPv4"
        };
        families.push(json!(other));
    }
    spec.insert("ipFamilies".into(), Value::Array(families));
}
