//! kube-apiserver's Table columns per kind (k8s.io/kubernetes v1.35
//! `pkg/printers/internalversion/printers.go`: column names, types,
//! priorities and how each cell is worked out from the object), the
//! default table of kinds without a printer (Name, Created At), and CRD
//! `additionalPrinterColumns`. A printer is the kind's own columns and
//! cells plus a [`Tail`] that kinds share (Age; Age, Containers, Images,
//! Selector for the workloads). Pinned against the real server by
//! `tests/validation.rs` (`tests/golden/tables.json`). Column descriptions
//! are left empty except Name's (kubectl does not show them).

use serde_json::{Value, json};

use crate::resources::Resource;
use crate::util;

/// One column: name, type, priority (1: only with `-o wide`).
pub(crate) struct Col {
    pub(crate) name: &'static str,
    pub(crate) ty: &'static str,
    pub(crate) priority: u8,
}

const fn c(name: &'static str, ty: &'static str, priority: u8) -> Col {
    Col { name, ty, priority }
}

/// A string column.
const fn st(name: &'static str) -> Col {
    c(name, "string", 0)
}

/// An integer column.
const fn int(name: &'static str) -> Col {
    c(name, "integer", 0)
}

/// A string column shown only with `-o wide`.
const fn wide(name: &'static str) -> Col {
    c(name, "string", 1)
}

const NAME: Col = st("Name");
const AGE: Col = st("Age");
const CONTAINERS: Col = wide("Containers");
const IMAGES: Col = wide("Images");
const SELECTOR: Col = wide("Selector");

pub(crate) fn s<'a>(o: &'a Value, ptr: &str) -> &'a str {
    o.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn i(o: &Value, ptr: &str) -> i64 {
    o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

pub(crate) fn or_none(v: &str) -> String {
    if v.is_empty() {
        "<none>".into()
    } else {
        v.to_owned()
    }
}

fn age(o: &Value) -> Value {
    json!(util::age(s(o, "/metadata/creationTimestamp")))
}

fn arr<'a>(o: &'a Value, ptr: &str) -> &'a [Value] {
    o.pointer(ptr)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `Containers` and `Images` of a pod template spec at `ptr`.
fn containers_images(o: &Value, ptr: &str) -> [Value; 2] {
    let cs = arr(o, &format!("{ptr}/containers"));
    let names: Vec<&str> = cs.iter().map(|c| s(c, "/name")).collect();
    let images: Vec<&str> = cs.iter().map(|c| s(c, "/image")).collect();
    [json!(names.join(",")), json!(images.join(","))]
}

/// `metav1.FormatLabelSelector`.
fn label_selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel.filter(|v| v.is_object()) else {
        return "<none>".into();
    };
    let text = crate::selectors::selector_to_string(sel);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

/// `labels.FormatLabels` of a string map (sorted by key).
fn format_labels(m: Option<&Value>) -> String {
    let Some(m) = m.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut kv: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    kv.sort();
    kv.join(",")
}

pub(crate) fn pod(o: &Value) -> Vec<Value> {
    let total = arr(o, "/spec/containers").len();
    let statuses = arr(o, "/status/containerStatuses");
    let ready = statuses
        .iter()
        .filter(|c| c["ready"].as_bool() == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let mut reason = s(o, "/status/phase").to_owned();
    if !s(o, "/status/reason").is_empty() {
        reason = s(o, "/status/reason").to_owned();
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        reason = "Terminating".into();
    }
    let gates = arr(o, "/spec/readinessGates");
    let gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conds = arr(o, "/status/conditions");
        let ok = gates
            .iter()
            .filter(|g| {
                conds
                    .iter()
                    .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
            })
            .count();
        format!("{ok}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        age(o),
        json!(or_none(s(o, "/status/podIP"))),
        json!(or_none(s(o, "/spec/nodeName"))),
        json!(or_none(s(o, "/status/nominatedNodeName"))),
        json!(gates),
    ]
}

pub(crate) fn ready_of(o: &Value) -> Value {
    json!(format!(
        "{}/{}",
        i(o, "/status/readyReplicas"),
        i(o, "/spec/replicas")
    ))
}

pub(crate) fn deployment(o: &Value) -> Vec<Value> {
    vec![
        ready_of(o),
        json!(i(o, "/status/updatedReplicas")),
        json!(i(o, "/status/availableReplicas")),
    ]
}

pub(crate) fn replicaset(o: &Value) -> Vec<Value> {
    vec![
        json!(i(o, "/spec/replicas")),
        json!(i(o, "/status/replicas")),
        json!(i(o, "/status/readyReplicas")),
    ]
}

pub(crate) fn daemonset(o: &Value) -> Vec<Value> {
    vec![
        json!(i(o, "/status/desiredNumberScheduled")),
        json!(i(o, "/status/currentNumberScheduled")),
        json!(i(o, "/status/numberReady")),
        json!(i(o, "/status/updatedNumberScheduled")),
        json!(i(o, "/status/numberAvailable")),
        json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
    ]
}

fn has_condition(o: &Value, ty: &str) -> bool {
    arr(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == ty && c["status"] == "True")
}

/// `printJob`: Status, Completions, Duration.
pub(crate) fn job(o: &Value) -> Vec<Value> {
    let succeeded = i(o, "/status/succeeded");
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(n) => format!("{succeeded}/{n}"),
        None => match i(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let start = util::parse_rfc3339(s(o, "/status/startTime"));
    let duration = match (start, util::parse_rfc3339(s(o, "/status/completionTime"))) {
        (None, _) => String::new(),
        (Some(a), None) => util::human_duration(util::now_secs().saturating_sub(a)),
        (Some(a), Some(b)) => util::human_duration(b.saturating_sub(a)),
    };
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    vec![json!(status), json!(completions), json!(duration)]
}

/// `printCronJob`: Schedule, Timezone, Suspend, Active, Last Schedule.
pub(crate) fn cronjob(o: &Value) -> Vec<Value> {
    let last = match s(o, "/status/lastScheduleTime") {
        "" => "<none>".to_owned(),
        t => util::age(t),
    };
    let suspend = match o.pointer("/spec/suspend").and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    vec![
        json!(s(o, "/spec/schedule")),
        json!(or_none(s(o, "/spec/timeZone"))),
        json!(suspend),
        json!(arr(o, "/status/active").len()),
        json!(last),
    ]
}

/// `printIngress`: Class, Hosts (three, then `+ N more...`), Address
/// (load-balancer IPs or host names, sorted, unique), Ports.
pub(crate) fn ingress(o: &Value) -> Vec<Value> {
    let rules = arr(o, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if hosts.len() == 3 {
            more = true;
        }
        if !more && !s(r, "/host").is_empty() {
            hosts.push(s(r, "/host"));
        }
    }
    let hosts = match (hosts.is_empty(), more) {
        (true, _) => "*".to_owned(),
        (false, false) => hosts.join(","),
        (false, true) => format!("{} + {} more...", hosts.join(","), rules.len() - 3),
    };
    let mut address: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
        .iter()
        .map(|g| match s(g, "/ip") {
            "" => s(g, "/hostname"),
            ip => ip,
        })
        .filter(|a| !a.is_empty())
        .collect();
    address.sort_unstable();
    address.dedup();
    let ports = if arr(o, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        json!(or_none(s(o, "/spec/ingressClassName"))),
        json!(hosts),
        json!(address.join(",")),
        json!(ports),
        age(o),
    ]
}

/// `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(o: &Value, ptr: &str) -> String {
    let modes = arr(o, ptr);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.iter().any(|x| x == m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// Status phase, or Terminating once deletion started.
fn phase(o: &Value) -> Value {
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        json!("Terminating")
    } else {
        json!(s(o, "/status/phase"))
    }
}

fn unset_or(o: &Value, ptr: &str) -> Value {
    json!(match s(o, ptr) {
        "" => "<unset>",
        v => v,
    })
}

/// A storage quantity as the Table shows it (`Quantity.String()`; the
/// text as written, `0` when missing).
fn quantity(o: &Value, ptr: &str) -> Value {
    json!(match s(o, ptr) {
        "" => "0",
        q => q,
    })
}

/// `printPersistentVolumeClaim`: capacity and access modes from the
/// status once a volume is named.
pub(crate) fn pvc(o: &Value) -> Vec<Value> {
    let bound = !s(o, "/spec/volumeName").is_empty();
    let (capacity, modes) = if bound {
        (
            quantity(o, "/status/capacity/storage"),
            json!(access_modes(o, "/status/accessModes")),
        )
    } else {
        (json!(""), json!(""))
    };
    vec![
        phase(o),
        json!(s(o, "/spec/volumeName")),
        capacity,
        modes,
        json!(storage_class(o)),
        unset_or(o, "/spec/volumeAttributesClassName"),
        age(o),
        unset_or(o, "/spec/volumeMode"),
    ]
}

/// `printPersistentVolume`.
pub(crate) fn pv(o: &Value) -> Vec<Value> {
    let claim = match o.pointer("/spec/claimRef") {
        Some(c) if c.is_object() => format!("{}/{}", s(c, "/namespace"), s(c, "/name")),
        _ => String::new(),
    };
    vec![
        quantity(o, "/spec/capacity/storage"),
        json!(access_modes(o, "/spec/accessModes")),
        json!(s(o, "/spec/persistentVolumeReclaimPolicy")),
        phase(o),
        json!(claim),
        json!(storage_class(o)),
        unset_or(o, "/spec/volumeAttributesClassName"),
        json!(s(o, "/status/reason")),
        age(o),
        unset_or(o, "/spec/volumeMode"),
    ]
}

/// `printStorageClass`: `(default)` after the default class's name.
pub(crate) fn storage_class_row(o: &Value) -> Vec<Value> {
    let default = [
        "storageclass.kubernetes.io~1is-default-class",
        "storageclass.beta.kubernetes.io~1is-default-class",
    ]
    .iter()
    .any(|a| s(o, &format!("/metadata/annotations/{a}")) == "true");
    let name = s(o, "/metadata/name");
    let or = |ptr: &str, default: &'static str| match s(o, ptr) {
        "" => default,
        v => v,
    };
    vec![
        json!(if default {
            format!("{name} (default)")
        } else {
            name.to_owned()
        }),
        json!(s(o, "/provisioner")),
        json!(or("/reclaimPolicy", "Delete")),
        json!(or("/volumeBindingMode", "Immediate")),
        json!(
            o.pointer("/allowVolumeExpansion")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
        age(o),
    ]
}

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

/// `printIngressClass`: Controller, Parameters (`Kind.group/name`).
pub(crate) fn ingress_class(o: &Value) -> Vec<Value> {
    let params = match o.pointer("/spec/parameters").filter(|p| p.is_object()) {
        None => "<none>".to_owned(),
        Some(p) => {
            let kind = match s(p, "/apiGroup") {
                "" => s(p, "/kind").to_owned(),
                g => format!("{}.{g}", s(p, "/kind")),
            };
            format!("{kind}/{}", s(p, "/name"))
        }
    };
    vec![json!(s(o, "/spec/controller")), json!(params)]
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
    // `current/target`, with ` (avg)` for an averaged Object/External one.
    let value_or_average = |source: &str| {
        let target = |f: &str| spec.pointer(&format!("/{source}/target/{f}"));
        let current = |f: &str| status.and_then(|st| st.pointer(&format!("/{source}/current/{f}")));
        match q(target("averageValue")) {
            Some(avg) => format!(
                "{}/{avg} (avg)",
                q(current("averageValue")).unwrap_or_else(unknown)
            ),
            None => format!(
                "{}/{}",
                q(current("value")).unwrap_or_else(unknown),
                q(target("value")).unwrap_or_default()
            ),
        }
    };
    // `name: current/target` of a (container) resource metric.
    let resource = |source: &str, label: String| {
        let target = |f: &str| spec.pointer(&format!("/{source}/target/{f}"));
        let current = |f: &str| status.and_then(|st| st.pointer(&format!("/{source}/current/{f}")));
        match q(target("averageValue")) {
            Some(avg) => format!(
                "{label}: {}/{avg}",
                q(current("averageValue")).unwrap_or_else(unknown)
            ),
            None => format!(
                "{label}: {}/{}",
                pct(current("averageUtilization")).unwrap_or_else(unknown),
                pct(target("averageUtilization")).unwrap_or_else(|| "<auto>".into())
            ),
        }
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

/// The beta annotation, else `spec.storageClassName`.
fn storage_class(o: &Value) -> &str {
    match s(
        o,
        "/metadata/annotations/volume.beta.kubernetes.io~1storage-class",
    ) {
        "" => s(o, "/spec/storageClassName"),
        a => a,
    }
}

pub(crate) fn service(o: &Value) -> Vec<Value> {
    let ty = s(o, "/spec/type");
    let external = match ty {
        "ExternalName" => s(o, "/spec/externalName").to_owned(),
        "LoadBalancer" => {
            let ips: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
                .iter()
                .map(|g| {
                    if s(g, "/ip").is_empty() {
                        s(g, "/hostname")
                    } else {
                        s(g, "/ip")
                    }
                })
                .collect();
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ => {
            let ips: Vec<&str> = arr(o, "/spec/externalIPs")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            or_none(&ips.join(","))
        }
    };
    let ports: Vec<String> = arr(o, "/spec/ports")
        .iter()
        .map(|p| {
            let proto = if s(p, "/protocol").is_empty() {
                "TCP"
            } else {
                s(p, "/protocol")
            };
            // As upstream's printer: a node port only when > 0.
            match p["nodePort"].as_i64().filter(|np| *np > 0) {
                Some(np) => format!("{}:{np}/{proto}", i(p, "/port")),
                None => format!("{}/{proto}", i(p, "/port")),
            }
        })
        .collect();
    vec![
        json!(ty),
        json!(or_none(s(o, "/spec/clusterIP"))),
        json!(external),
        json!(or_none(&ports.join(","))),
        age(o),
        json!(format_labels(o.pointer("/spec/selector"))),
    ]
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

/// Turns one object into its row's cells.
pub(crate) type Cells = Box<dyn Fn(&Value) -> Vec<Value> + Send + Sync>;

/// What follows a kind's own columns.
#[derive(Clone, Copy)]
pub(crate) enum Tail {
    /// Nothing: the kind's columns are all of them.
    None,
    /// Age.
    Age,
    /// Age, then (wide) the Containers and Images of the pod template
    /// spec at `template`, and the Selector at `selector`, if any: the
    /// columns every workload printer ends with.
    Workload {
        template: &'static str,
        selector: Option<&'static str>,
    },
}

impl Tail {
    fn cols(self) -> &'static [Col] {
        match self {
            Tail::None => &[],
            Tail::Age => &[AGE],
            Tail::Workload { selector: None, .. } => &[AGE, CONTAINERS, IMAGES],
            Tail::Workload { .. } => &[AGE, CONTAINERS, IMAGES, SELECTOR],
        }
    }

    fn cells(self, o: &Value, row: &mut Vec<Value>) {
        match self {
            Tail::None => {}
            Tail::Age => row.push(age(o)),
            Tail::Workload { template, selector } => {
                row.push(age(o));
                row.extend(containers_images(o, template));
                if let Some(p) = selector {
                    row.push(json!(label_selector(o.pointer(p))));
                }
            }
        }
    }
}

/// A kind's printer: its columns after Name (Name first unless `named`
/// is false: Events, and StorageClasses, whose name cell says
/// `(default)`), its cells for them, then the tail's.
pub(crate) struct Printer {
    named: bool,
    cols: &'static [Col],
    cells: fn(&Value) -> Vec<Value>,
    tail: Tail,
}

/// A printer whose first column is not Name (Events, StorageClasses).
pub(crate) const fn unnamed(
    cols: &'static [Col],
    cells: fn(&Value) -> Vec<Value>,
    tail: Tail,
) -> Printer {
    Printer {
        named: false,
        cols,
        cells,
        tail,
    }
}

/// A printer whose first column is Name.
pub(crate) const fn named(
    cols: &'static [Col],
    cells: fn(&Value) -> Vec<Value>,
    tail: Tail,
) -> Printer {
    Printer {
        named: true,
        cols,
        cells,
        tail,
    }
}

/// The tail of a workload whose pod template is at `spec.template`.
pub(crate) const fn workload(selector: Option<&'static str>) -> Tail {
    Tail::Workload {
        template: "/spec/template/spec",
        selector,
    }
}
pub(crate) const WORKLOAD: Tail = workload(Some("/spec/selector"));

pub(crate) const POD_COLS: &[Col] = &[
    st("Ready"),
    st("Status"),
    st("Restarts"),
    AGE,
    wide("IP"),
    wide("Node"),
    wide("Nominated Node"),
    wide("Readiness Gates"),
];
pub(crate) const DEPLOY_COLS: &[Col] = &[st("Ready"), st("Up-to-date"), st("Available")];
pub(crate) const RS_COLS: &[Col] = &[int("Desired"), int("Current"), int("Ready")];
pub(crate) const DS_COLS: &[Col] = &[
    int("Desired"),
    int("Current"),
    int("Ready"),
    int("Up-to-date"),
    int("Available"),
    st("Node Selector"),
];
pub(crate) const JOB_COLS: &[Col] = &[st("Status"), st("Completions"), st("Duration")];
pub(crate) const CRONJOB_COLS: &[Col] = &[
    st("Schedule"),
    st("Timezone"),
    c("Suspend", "boolean", 0),
    int("Active"),
    st("Last Schedule"),
];
pub(crate) const SVC_COLS: &[Col] = &[
    st("Type"),
    st("Cluster-IP"),
    st("External-IP"),
    st("Port(s)"),
    AGE,
    SELECTOR,
];
pub(crate) const INGRESS_COLS: &[Col] =
    &[st("Class"), st("Hosts"), st("Address"), st("Ports"), AGE];
pub(crate) const PVC_COLS: &[Col] = &[
    st("Status"),
    st("Volume"),
    st("Capacity"),
    st("Access Modes"),
    st("StorageClass"),
    st("VolumeAttributesClass"),
    AGE,
    wide("VolumeMode"),
];
pub(crate) const PV_COLS: &[Col] = &[
    st("Capacity"),
    st("Access Modes"),
    st("Reclaim Policy"),
    st("Status"),
    st("Claim"),
    st("StorageClass"),
    st("VolumeAttributesClass"),
    st("Reason"),
    AGE,
    wide("VolumeMode"),
];
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
pub(crate) const SC_COLS: &[Col] = &[
    NAME,
    st("Provisioner"),
    st("ReclaimPolicy"),
    st("VolumeBindingMode"),
    st("AllowVolumeExpansion"),
    AGE,
];
pub(crate) const BINDING_COLS: &[Col] = &[
    st("Role"),
    AGE,
    wide("Users"),
    wide("Groups"),
    wide("ServiceAccounts"),
];
pub(crate) const INGRESS_CLASS_COLS: &[Col] = &[st("Controller"), st("Parameters")];
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

/// Column definitions and a function from object to cells (Name included).
pub(crate) fn columns(res: &Resource, printer: Option<Printer>) -> (Vec<Value>, Cells) {
    let def = |name: &str, ty: &str, format: &str, priority: u8, description: &str| json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority});
    let name_desc = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
    let name_of = |o: &Value| json!(s(o, "/metadata/name"));
    if let Some(p) = printer {
        let name_col = p.named.then_some(&NAME);
        let defs = name_col
            .into_iter()
            .chain(p.cols)
            .chain(p.tail.cols())
            .map(|c| {
                let is_name = c.name == "Name";
                def(
                    c.name,
                    c.ty,
                    if is_name { "name" } else { "" },
                    c.priority,
                    if is_name { name_desc } else { "" },
                )
            })
            .collect();
        return (
            defs,
            Box::new(move |o| {
                let mut row = Vec::new();
                if p.named {
                    row.push(name_of(o));
                }
                row.extend((p.cells)(o));
                p.tail.cells(o, &mut row);
                row
            }),
        );
    }
    if res.custom {
        return crd_columns(res, name_desc);
    }
    // The default table convertor of kinds without a printer.
    (
        vec![
            def("Name", "string", "name", 0, name_desc),
            def(
                "Created At",
                "date",
                "",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            ),
        ],
        Box::new(move |o| vec![name_of(o), json!(s(o, "/metadata/creationTimestamp"))]),
    )
}

/// A CRD's `additionalPrinterColumns` (`jsonPath` evaluated on the simple
/// `.a.b[0].c` subset), or Name and Age when it has none.
fn crd_columns(res: &Resource, name_desc: &'static str) -> (Vec<Value>, Cells) {
    let cols: Vec<Value> = if res.printer_columns.is_empty() {
        vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
    } else {
        res.printer_columns.clone()
    };
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": name_desc, "priority": 0}),
    ];
    defs.extend(cols.iter().map(|c| {
        json!({"name": c["name"], "type": c["type"], "format": c.get("format").cloned().unwrap_or(json!("")),
               "description": c.get("description").cloned().unwrap_or(json!("")), "priority": c.get("priority").cloned().unwrap_or(json!(0))})
    }));
    let columns: Vec<(String, String)> = cols
        .iter()
        .map(|c| (s(c, "/jsonPath").to_owned(), s(c, "/type").to_owned()))
        .collect();
    (
        defs,
        Box::new(move |o| {
            let mut row = vec![json!(s(o, "/metadata/name"))];
            row.extend(
                columns
                    .iter()
                    .map(|(path, ty)| json_path(o, path).map_or(Value::Null, |v| crd_cell(ty, v))),
            );
            row
        }),
    )
}

/// A custom resource's cell as apiextensions-apiserver's table convertor
/// writes it: a `string` column prints any value (Go's `%v`), a `date`
/// column the age of its timestamp (`<invalid>` when unreadable), the
/// other types their value when it has that type, else nothing.
fn crd_cell(ty: &str, v: Value) -> Value {
    match (ty, v) {
        (_, Value::Null) => Value::Null,
        ("string", Value::String(s)) => Value::String(s),
        ("string", other) => Value::String(go_value_text(&other)),
        ("date", Value::String(t)) => match util::parse_rfc3339(&t) {
            Some(_) => Value::String(util::age(&t)),
            None => json!("<invalid>"),
        },
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            #[allow(clippy::cast_possible_truncation)]
            None => n.as_f64().map_or(Value::Null, |f| json!(f as i64)),
        },
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => Value::Bool(b),
        _ => Value::Null,
    }
}

/// Go's `fmt.Sprintf("%v", v)` of a decoded JSON value: `map[a:1 b:x]`,
/// `[1 2]`, `<nil>`.
fn go_value_text(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_i64().map_or_else(|| n.to_string(), |i| i.to_string()),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(go_value_text).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", go_value_text(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// `.a.b`, `.a[0].b`, `.a['x.y']` on an object.
fn json_path(o: &Value, path: &str) -> Option<Value> {
    let mut cur = o;
    let mut rest = path.trim().trim_start_matches('{').trim_end_matches('}');
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            cur = cur.get(&r[..end])?;
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            cur = cur.get(r[..end].parse::<usize>().ok()?)?;
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            cur = cur.get(&r[..end])?;
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(cur.clone())
}
