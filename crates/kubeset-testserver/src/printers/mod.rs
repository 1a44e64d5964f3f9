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

mod cluster;
mod network;
mod storage;
mod workloads;

pub(crate) use cluster::{
    BINDING_COLS, DATA_COLS, EVENT_COLS, HOLDER_COLS, HPA_COLS, NODE_COLS, PDB_COLS, SECRET_COLS,
    STATUS_COLS, count, event, hpa, node, pdb, role_binding,
};
pub(crate) use network::{
    INGRESS_CLASS_COLS, INGRESS_COLS, SVC_COLS, ingress, ingress_class, service,
};
pub(crate) use storage::{PV_COLS, PVC_COLS, SC_COLS, pv, pvc, storage_class_row};
pub(crate) use workloads::{
    CRONJOB_COLS, DEPLOY_COLS, DS_COLS, JOB_COLS, POD_COLS, RS_COLS, cronjob, daemonset,
    deployment, job, pod, ready_of, replicaset,
};

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
#[derive(Clone, Copy)]
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
        ..named(cols, cells, tail)
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
