//! kube-apiserver's Table columns per kind (k8s.io/kubernetes v1.35
//! `pkg/printers/internalversion/printers.go`: column names, types,
//! priorities and how each cell is worked out from the object), the
//! default table of kinds without a printer (Name, Created At), and CRD
//! `additionalPrinterColumns`. Pinned against the real server by
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

const NAME: Col = c("Name", "string", 0);
const AGE: Col = c("Age", "string", 0);
const CONTAINERS: Col = c("Containers", "string", 1);
const IMAGES: Col = c("Images", "string", 1);
const SELECTOR: Col = c("Selector", "string", 1);

fn s<'a>(o: &'a Value, ptr: &str) -> &'a str {
    o.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn i(o: &Value, ptr: &str) -> i64 {
    o.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(v: &str) -> String {
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

fn pod(o: &Value) -> Vec<Value> {
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

fn deployment(o: &Value) -> Vec<Value> {
    let [cs, is] = containers_images(o, "/spec/template/spec");
    vec![
        json!(format!(
            "{}/{}",
            i(o, "/status/readyReplicas"),
            i(o, "/spec/replicas")
        )),
        json!(i(o, "/status/updatedReplicas")),
        json!(i(o, "/status/availableReplicas")),
        age(o),
        cs,
        is,
        json!(label_selector(o.pointer("/spec/selector"))),
    ]
}

fn replicaset(o: &Value) -> Vec<Value> {
    let [cs, is] = containers_images(o, "/spec/template/spec");
    vec![
        json!(i(o, "/spec/replicas")),
        json!(i(o, "/status/replicas")),
        json!(i(o, "/status/readyReplicas")),
        age(o),
        cs,
        is,
        json!(label_selector(o.pointer("/spec/selector"))),
    ]
}

fn statefulset(o: &Value) -> Vec<Value> {
    let [cs, is] = containers_images(o, "/spec/template/spec");
    vec![
        json!(format!(
            "{}/{}",
            i(o, "/status/readyReplicas"),
            i(o, "/spec/replicas")
        )),
        age(o),
        cs,
        is,
    ]
}

fn daemonset(o: &Value) -> Vec<Value> {
    let [cs, is] = containers_images(o, "/spec/template/spec");
    vec![
        json!(i(o, "/status/desiredNumberScheduled")),
        json!(i(o, "/status/currentNumberScheduled")),
        json!(i(o, "/status/numberReady")),
        json!(i(o, "/status/updatedNumberScheduled")),
        json!(i(o, "/status/numberAvailable")),
        json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
        age(o),
        cs,
        is,
        json!(label_selector(o.pointer("/spec/selector"))),
    ]
}

fn service(o: &Value) -> Vec<Value> {
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
            match p["nodePort"].as_i64() {
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

fn node(o: &Value) -> Vec<Value> {
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

fn count(o: &Value, keys: &[&str]) -> Value {
    json!(
        keys.iter()
            .map(|k| o.get(*k).and_then(Value::as_object).map_or(0, |m| m.len()))
            .sum::<usize>()
    )
}

/// Core-shaped Event (stored form; events.k8s.io prints the same).
fn event(o: &Value) -> Vec<Value> {
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

/// Columns (after Name, which is first unless noted) and cells of a kind.
type Printer = (&'static [Col], fn(&Value) -> Vec<Value>);

const POD_COLS: &[Col] = &[
    NAME,
    c("Ready", "string", 0),
    c("Status", "string", 0),
    c("Restarts", "string", 0),
    AGE,
    c("IP", "string", 1),
    c("Node", "string", 1),
    c("Nominated Node", "string", 1),
    c("Readiness Gates", "string", 1),
];
const DEPLOY_COLS: &[Col] = &[
    NAME,
    c("Ready", "string", 0),
    c("Up-to-date", "string", 0),
    c("Available", "string", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const RS_COLS: &[Col] = &[
    NAME,
    c("Desired", "integer", 0),
    c("Current", "integer", 0),
    c("Ready", "integer", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const STS_COLS: &[Col] = &[NAME, c("Ready", "string", 0), AGE, CONTAINERS, IMAGES];
const DS_COLS: &[Col] = &[
    NAME,
    c("Desired", "integer", 0),
    c("Current", "integer", 0),
    c("Ready", "integer", 0),
    c("Up-to-date", "integer", 0),
    c("Available", "integer", 0),
    c("Node Selector", "string", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const SVC_COLS: &[Col] = &[
    NAME,
    c("Type", "string", 0),
    c("Cluster-IP", "string", 0),
    c("External-IP", "string", 0),
    c("Port(s)", "string", 0),
    AGE,
    SELECTOR,
];
const NODE_COLS: &[Col] = &[
    NAME,
    c("Status", "string", 0),
    c("Roles", "string", 0),
    AGE,
    c("Version", "string", 0),
    c("Internal-IP", "string", 1),
    c("External-IP", "string", 1),
    c("OS-Image", "string", 1),
    c("Kernel-Version", "string", 1),
    c("Container-Runtime", "string", 1),
];
const NS_COLS: &[Col] = &[NAME, c("Status", "string", 0), AGE];
const CM_COLS: &[Col] = &[NAME, c("Data", "string", 0), AGE];
const SECRET_COLS: &[Col] = &[NAME, c("Type", "string", 0), c("Data", "string", 0), AGE];
const SA_COLS: &[Col] = &[NAME, AGE];
const EVENT_COLS: &[Col] = &[
    c("Last Seen", "string", 0),
    c("Type", "string", 0),
    c("Reason", "string", 0),
    c("Object", "string", 0),
    c("Subobject", "string", 1),
    c("Source", "string", 1),
    c("Message", "string", 0),
    c("First Seen", "string", 1),
    c("Count", "string", 1),
    c("Name", "string", 1),
];
const LEASE_COLS: &[Col] = &[NAME, c("Holder", "string", 0), AGE];

fn printer(res: &Resource) -> Option<Printer> {
    Some(match (res.group.as_str(), res.plural.as_str()) {
        ("", "pods") => (POD_COLS, pod),
        ("apps", "deployments") => (DEPLOY_COLS, deployment),
        ("apps", "replicasets") => (RS_COLS, replicaset),
        ("apps", "statefulsets") => (STS_COLS, statefulset),
        ("apps", "daemonsets") => (DS_COLS, daemonset),
        ("", "services") => (SVC_COLS, service),
        ("", "nodes") => (NODE_COLS, node),
        ("", "namespaces") => (NS_COLS, |o| vec![json!(s(o, "/status/phase")), age(o)]),
        ("", "configmaps") => (CM_COLS, |o| vec![count(o, &["data", "binaryData"]), age(o)]),
        ("", "secrets") => (SECRET_COLS, |o| {
            vec![json!(s(o, "/type")), count(o, &["data"]), age(o)]
        }),
        ("", "serviceaccounts") => (SA_COLS, |o| vec![age(o)]),
        ("", "events") | ("events.k8s.io", "events") => (EVENT_COLS, event),
        ("coordination.k8s.io", "leases") => (LEASE_COLS, |o| {
            vec![json!(or_none(s(o, "/spec/holderIdentity"))), age(o)]
        }),
        _ => return None,
    })
}

/// Column definitions and a function from object to cells (Name included).
pub(crate) fn columns(res: &Resource) -> (Vec<Value>, Cells) {
    let def = |name: &str, ty: &str, format: &str, priority: u8, description: &str| json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority});
    let name_desc = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
    let name_of = |o: &Value| json!(s(o, "/metadata/name"));
    if let Some((cols, cells)) = printer(res) {
        let defs = cols
            .iter()
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
        let name_first = cols.first().is_some_and(|c| c.name == "Name");
        return (
            defs,
            Box::new(move |o| {
                let mut row = cells(o);
                if name_first {
                    row.insert(0, name_of(o));
                }
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
    let paths: Vec<String> = cols.iter().map(|c| s(c, "/jsonPath").to_owned()).collect();
    (
        defs,
        Box::new(move |o| {
            let mut row = vec![json!(s(o, "/metadata/name"))];
            row.extend(paths.iter().map(|p| json_path(o, p).unwrap_or(Value::Null)));
            row
        }),
    )
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
