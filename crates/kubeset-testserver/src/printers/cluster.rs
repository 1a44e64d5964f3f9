//! Cluster-level and policy kinds (Nodes, Events, RBAC bindings,
//! PodDisruptionBudgets, HorizontalPodAutoscalers) and the one-column
//! kinds (Namespace status, ConfigMap and Secret data, Lease holder).

use serde_json::{Value, json};

use crate::util;

use super::{AGE, Col, age, arr, i, int, or_none, s, st, wide};

/// `printRoleBinding` / `printClusterRoleBinding`: the role, then (wide)
/// users, groups and `namespace/name` service accounts.
pub(crate) fn role_binding(o: &Value) -> Vec<Value> {
    let subjects = arr(o, "/subjects");
    let of = |kind: &str| {
        let names: Vec<String> = subjects
            .iter()
            .filter(|x| s(x, "/kind") == kind)
            .map(|x| match kind {
                "ServiceAccount" => format!("{}/{}", s(x, "/namespace"), s(x, "/name")),
                _ => s(x, "/name").to_owned(),
            })
            .collect();
        json!(names.join(", "))
    };
    vec![
        json!(format!(
            "{}/{}",
            s(o, "/roleRef/kind"),
            s(o, "/roleRef/name")
        )),
        age(o),
        of("User"),
        of("Group"),
        of("ServiceAccount"),
    ]
}

/// `printPodDisruptionBudget`: the two budgets (`N/A` when unset), the
/// disruptions allowed.
pub(crate) fn pdb(o: &Value) -> Vec<Value> {
    let budget = |ptr: &str| match o.pointer(ptr) {
        Some(Value::String(v)) => v.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".to_owned(),
    };
    vec![
        json!(budget("/spec/minAvailable")),
        json!(budget("/spec/maxUnavailable")),
        json!(i(o, "/status/disruptionsAllowed")),
    ]
}

/// `printHorizontalPodAutoscaler`: the scale target, the metrics as
/// `current/target` ([`hpa_metrics`]), min (`<unset>`), max and current
/// replicas. Reads autoscaling/v2 and v1 objects.
pub(crate) fn hpa(o: &Value) -> Vec<Value> {
    let min = match o.pointer("/spec/minReplicas").and_then(Value::as_i64) {
        Some(n) => n.to_string(),
        None => "<unset>".to_owned(),
    };
    vec![
        json!(format!(
            "{}/{}",
            s(o, "/spec/scaleTargetRef/kind"),
            s(o, "/spec/scaleTargetRef/name")
        )),
        json!(hpa_metrics(o)),
        json!(min),
        json!(i(o, "/spec/maxReplicas")),
        json!(i(o, "/status/currentReplicas")),
    ]
}

/// `formatHPAMetrics`: each spec metric with its status's current value
/// (`<unknown>` until the controller reports one), two at most then
/// `+ N more...`, `<none>` without metrics. A v1 object's
/// `targetCPUUtilizationPercentage` is the `cpu` utilization metric it
/// converts to.
fn hpa_metrics(o: &Value) -> String {
    let v1_cpu = o.pointer("/spec/targetCPUUtilizationPercentage").map(|t| {
        let current = o.pointer("/status/currentCPUUtilizationPercentage");
        let pct = |v: Option<&Value>| v.and_then(Value::as_i64).map(|n| format!("{n}%"));
        format!(
            "cpu: {}/{}",
            pct(current).unwrap_or_else(|| "<unknown>".into()),
            pct(Some(t)).unwrap_or_else(|| "<auto>".into())
        )
    });
    let specs = arr(o, "/spec/metrics");
    let statuses = arr(o, "/status/currentMetrics");
    let mut list: Vec<String> = v1_cpu.into_iter().collect();
    for (n, spec) in specs.iter().enumerate() {
        list.push(hpa_metric(spec, statuses.get(n)));
    }
    if list.is_empty() {
        return "<none>".to_owned();
    }
    let count = list.len();
    if count > 2 {
        list.truncate(2);
        return format!("{} + {} more...", list.join(", "), count - 2);
    }
    list.join(", ")
}

/// One metric of [`hpa_metrics`].
fn hpa_metric(spec: &Value, status: Option<&Value>) -> String {
    let unknown = || "<unknown>".to_owned();
    let q = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let pct = |v: Option<&Value>| v.and_then(Value::as_i64).map(|n| format!("{n}%"));
    let target = |source: &str, f: &str| spec.pointer(&format!("/{source}/target/{f}"));
    let current =
        |source: &str, f: &str| status.and_then(|st| st.pointer(&format!("/{source}/current/{f}")));
    // `current/target` of a metric whose target is an `averageValue`.
    let average = |source: &str| {
        let avg = q(target(source, "averageValue"))?;
        let now = q(current(source, "averageValue")).unwrap_or_else(unknown);
        Some(format!("{now}/{avg}"))
    };
    // `current/target`, with ` (avg)` for an averaged Object/External one.
    let value_or_average = |source: &str| match average(source) {
        Some(avg) => format!("{avg} (avg)"),
        None => format!(
            "{}/{}",
            q(current(source, "value")).unwrap_or_else(unknown),
            q(target(source, "value")).unwrap_or_default()
        ),
    };
    // `name: current/target` of a (container) resource metric.
    let resource = |source: &str, label: String| match average(source) {
        Some(avg) => format!("{label}: {avg}"),
        None => format!(
            "{label}: {}/{}",
            pct(current(source, "averageUtilization")).unwrap_or_else(unknown),
            pct(target(source, "averageUtilization")).unwrap_or_else(|| "<auto>".into())
        ),
    };
    match s(spec, "/type") {
        "External" => value_or_average("external"),
        "Object" => value_or_average("object"),
        "Pods" => format!(
            "{}/{}",
            q(status.and_then(|st| st.pointer("/pods/current/averageValue")))
                .unwrap_or_else(unknown),
            s(spec, "/pods/target/averageValue")
        ),
        "Resource" => resource("resource", s(spec, "/resource/name").to_owned()),
        // Named by its resource alone, as kube-apiserver 1.35 prints it.
        "ContainerResource" => resource(
            "containerResource",
            s(spec, "/containerResource/name").to_owned(),
        ),
        _ => "<unknown type>".to_owned(),
    }
}

pub(crate) fn node(o: &Value) -> Vec<Value> {
    let ready = arr(o, "/status/conditions")
        .iter()
        .find(|c| c["type"] == "Ready");
    let mut status = match ready.and_then(|c| c["status"].as_str()) {
        Some("True") => "Ready".to_owned(),
        Some("False") => "NotReady".to_owned(),
        _ => "Unknown".to_owned(),
    };
    if o.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<&str> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.keys()
                .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort_unstable();
    let addr = |ty: &str| {
        let a: Vec<&str> = arr(o, "/status/addresses")
            .iter()
            .filter(|a| a["type"] == ty)
            .map(|a| s(a, "/address"))
            .collect();
        or_none(&a.join(","))
    };
    let info = |k: &str| {
        let v = s(o, &format!("/status/nodeInfo/{k}"));
        if v.is_empty() {
            "<unknown>".to_owned()
        } else {
            v.to_owned()
        }
    };
    vec![
        json!(status),
        json!(or_none(&roles.join(","))),
        age(o),
        json!(s(o, "/status/nodeInfo/kubeletVersion")),
        json!(addr("InternalIP")),
        json!(addr("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

pub(crate) fn count(o: &Value, keys: &[&str]) -> Value {
    json!(
        keys.iter()
            .map(|k| o.get(*k).and_then(Value::as_object).map_or(0, |m| m.len()))
            .sum::<usize>()
    )
}

/// Core-shaped Event (stored form; events.k8s.io prints the same).
pub(crate) fn event(o: &Value) -> Vec<Value> {
    let seen = |ptr: &str| {
        let t = s(o, ptr);
        if t.is_empty() {
            json!("<unknown>")
        } else {
            json!(util::age(t))
        }
    };
    let last = if s(o, "/lastTimestamp").is_empty() && !s(o, "/eventTime").is_empty() {
        seen("/eventTime")
    } else {
        seen("/lastTimestamp")
    };
    let kind = s(o, "/involvedObject/kind").to_lowercase();
    let mut source = s(o, "/source/component").to_owned();
    if source.is_empty() {
        source = s(o, "/reportingComponent").to_owned();
    }
    if !s(o, "/source/host").is_empty() {
        source = format!("{source}, {}", s(o, "/source/host"));
    }
    let count = o.pointer("/count").and_then(Value::as_i64).unwrap_or(1);
    vec![
        last,
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(format!("{kind}/{}", s(o, "/involvedObject/name"))),
        json!(s(o, "/involvedObject/fieldPath")),
        json!(source),
        json!(s(o, "/message").trim()),
        seen("/firstTimestamp"),
        json!(count),
        json!(s(o, "/metadata/name")),
    ]
}

pub(crate) const NODE_COLS: &[Col] = &[
    st("Status"),
    st("Roles"),
    AGE,
    st("Version"),
    wide("Internal-IP"),
    wide("External-IP"),
    wide("OS-Image"),
    wide("Kernel-Version"),
    wide("Container-Runtime"),
];

pub(crate) const STATUS_COLS: &[Col] = &[st("Status")];

pub(crate) const DATA_COLS: &[Col] = &[st("Data")];

pub(crate) const SECRET_COLS: &[Col] = &[st("Type"), st("Data")];

pub(crate) const HOLDER_COLS: &[Col] = &[st("Holder")];

pub(crate) const HPA_COLS: &[Col] = &[
    st("Reference"),
    st("Targets"),
    st("MinPods"),
    int("MaxPods"),
    int("Replicas"),
];

pub(crate) const BINDING_COLS: &[Col] = &[
    st("Role"),
    AGE,
    wide("Users"),
    wide("Groups"),
    wide("ServiceAccounts"),
];

pub(crate) const PDB_COLS: &[Col] = &[
    st("Min Available"),
    st("Max Unavailable"),
    int("Allowed Disruptions"),
];

pub(crate) const EVENT_COLS: &[Col] = &[
    st("Last Seen"),
    st("Type"),
    st("Reason"),
    st("Object"),
    wide("Subobject"),
    wide("Source"),
    st("Message"),
    wide("First Seen"),
    wide("Count"),
    wide("Name"),
];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::hpa_metric;

    #[test]
    fn hpa_metrics_with_their_current_values() {
        let metric = |spec, status| hpa_metric(&spec, Some(&status));
        assert_eq!(
            metric(
                json!({"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "100Mi"}}}),
                json!({"type": "Resource", "resource": {"name": "memory",
                    "current": {"averageValue": "50Mi"}}}),
            ),
            "memory: 50Mi/100Mi"
        );
        assert_eq!(
            metric(
                json!({"type": "ContainerResource", "containerResource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}}),
                json!({"type": "ContainerResource", "containerResource": {"name": "cpu",
                    "current": {"averageUtilization": 30}}}),
            ),
            "cpu: 30%/60%"
        );
        assert_eq!(
            metric(
                json!({"type": "Object", "object":
                    {"target": {"type": "AverageValue", "averageValue": "5"}}}),
                json!({"type": "Object", "object": {"current": {"averageValue": "3"}}}),
            ),
            "3/5 (avg)"
        );
        assert_eq!(
            metric(
                json!({"type": "External", "external": {"target": {"type": "Value", "value": "7"}}}),
                json!({"type": "External", "external": {"current": {"value": "2"}}}),
            ),
            "2/7"
        );
        assert_eq!(
            hpa_metric(
                &json!({"type": "Resource", "resource": {"name": "cpu", "target": {}}}),
                None
            ),
            "cpu: <unknown>/<auto>"
        );
    }
}
