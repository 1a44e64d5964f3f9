//! Printing objects: tables (kubectl's columns for a few kinds), JSON,
//! YAML and `kind.group/name`, numbers in kubectl's notations
//! ([`gonum`]).

use kubeset::apimachinery::pkg::apis::meta::v1::Time;
use kubeset::dynamic::{ApiResource, DynamicObject};
use serde_json::{Value, json};

use crate::cli::OutputFormat;
use crate::error::CliError;
use crate::gonum::{self, GoNumber};
use crate::yaml;

/// `configmap/x` or `deployment.apps/web`, as kubectl names objects.
pub fn object_ref(resource: &ApiResource, name: &str) -> String {
    format!("{}/{name}", kind_ref(resource))
}

/// `configmap` or `deployment.apps`.
pub fn kind_ref(resource: &ApiResource) -> String {
    let kind = resource.kind.to_ascii_lowercase();
    if resource.group.is_empty() {
        kind
    } else {
        format!("{kind}.{}", resource.group)
    }
}

/// Which fields an object is printed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shown {
    /// `metadata.managedFields` too.
    pub managed_fields: bool,
}

impl Shown {
    /// What `-o FORMAT` prints: kubectl hides managedFields in json and
    /// yaml unless `--show-managed-fields` (since 1.21); a JSONPath
    /// template sees the whole object.
    pub fn of(format: Option<&OutputFormat>, show_managed_fields: bool) -> Self {
        Self {
            managed_fields: show_managed_fields
                || matches!(format, Some(OutputFormat::JsonPath(_))),
        }
    }
}

/// An object as JSON with `apiVersion` and `kind` filled in (list items
/// come without them), without `metadata.managedFields` unless `shown`.
pub fn with_type(resource: &ApiResource, obj: &DynamicObject, shown: Shown) -> Value {
    let mut value = serde_json::to_value(obj).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| resource.api_version().into());
        map.entry("kind")
            .or_insert_with(|| resource.kind.clone().into());
        if !shown.managed_fields
            && let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("managedFields");
        }
    }
    value
}

/// Renders objects in a machine format; one object alone when `single`,
/// else a `List` as kubectl prints it.
pub fn render(
    format: &OutputFormat,
    resource: &ApiResource,
    objects: &[DynamicObject],
    single: bool,
    shown: Shown,
) -> Result<String, CliError> {
    let values: Vec<Value> = objects
        .iter()
        .map(|o| with_type(resource, o, shown))
        .collect();
    let doc = match (single, values.first()) {
        (true, Some(v)) => v.clone(),
        _ => list_doc(values),
    };
    match format {
        OutputFormat::Name => Ok(objects
            .iter()
            .map(|o| object_ref(resource, o.name()) + "\n")
            .collect()),
        OutputFormat::Wide => Ok(table(resource, objects, false, true)),
        _ => encode(format, &doc),
    }
}

/// A `List` of already typed items, as kubectl prints several objects.
pub fn list_doc(items: Vec<Value>) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": items,
        "metadata": {"resourceVersion": ""},
    })
}

/// `doc` as JSON, YAML or through a JSONPath template (the table formats
/// and `name` answer an empty string: they need the objects, not a doc).
pub fn encode(format: &OutputFormat, doc: &Value) -> Result<String, CliError> {
    match format {
        OutputFormat::Json => gonum::to_json_pretty(doc)
            .map(|s| s + "\n")
            .map_err(|e| CliError::io("encoding JSON", std::io::Error::other(e))),
        OutputFormat::Yaml => Ok(yaml::to_yaml(doc)),
        OutputFormat::JsonPath(template) => Ok(template.render(doc)),
        OutputFormat::Name | OutputFormat::Wide => Ok(String::new()),
    }
}

/// The formats a list is written in item by item (see [`ListWriter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// As `-o json`.
    Json,
    /// As `-o yaml`.
    Yaml,
    /// As `-o name`.
    Name,
}

impl ListFormat {
    /// The streamed form of `-o FORMAT`, if it has one (tables and JSONPath
    /// templates need the whole list).
    pub fn of(format: Option<&OutputFormat>) -> Option<Self> {
        match format? {
            OutputFormat::Json => Some(Self::Json),
            OutputFormat::Yaml => Some(Self::Yaml),
            OutputFormat::Name => Some(Self::Name),
            OutputFormat::Wide | OutputFormat::JsonPath(_) => None,
        }
    }
}

impl From<ListFormat> for OutputFormat {
    fn from(format: ListFormat) -> Self {
        match format {
            ListFormat::Json => Self::Json,
            ListFormat::Yaml => Self::Yaml,
            ListFormat::Name => Self::Name,
        }
    }
}

/// Writes a `List` in a machine format item by item, byte for byte as
/// [`render`] prints it whole: peak memory is one item, not the list
/// three times over (objects, their JSON values, the output text).
pub struct ListWriter<'r, W: std::io::Write> {
    out: W,
    format: ListFormat,
    resource: &'r ApiResource,
    shown: Shown,
    items: usize,
    /// The reader went away (a closed pipe: `| head`); nothing more is
    /// written, and that is no error.
    closed: bool,
}

fn encode_error(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> CliError {
    CliError::io(format!("encoding {what}"), std::io::Error::other(e))
}

impl<'r, W: std::io::Write> ListWriter<'r, W> {
    /// A writer for a list of `resource`.
    pub fn new(out: W, format: ListFormat, resource: &'r ApiResource, shown: Shown) -> Self {
        Self {
            out,
            format,
            resource,
            shown,
            items: 0,
            closed: false,
        }
    }

    /// Whether the reader closed the output (stop producing items).
    pub fn closed(&self) -> bool {
        self.closed
    }

    fn write(&mut self, text: &str) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        match self.out.write_all(text.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r.map_err(|e| CliError::io("writing to stdout", e)),
        }
    }

    /// Writes one item.
    pub fn item(&mut self, obj: &DynamicObject) -> Result<(), CliError> {
        let first = self.items == 0;
        self.items += 1;
        let text = match self.format {
            ListFormat::Json => {
                let item = gonum::to_json_pretty(&with_type(self.resource, obj, self.shown))
                    .map_err(|e| encode_error("JSON", e))?;
                // JSON strings escape newlines: every one is structural.
                let head = if first {
                    "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        "
                } else {
                    ",\n        "
                };
                format!("{head}{}", item.replace('\n', "\n        "))
            }
            ListFormat::Yaml => {
                // Written as an item of the list, so long strings fold
                // where kubectl folds them there.
                let item = yaml::list_item(&with_type(self.resource, obj, self.shown));
                if first {
                    format!("apiVersion: v1\nitems:\n{item}")
                } else {
                    item
                }
            }
            ListFormat::Name => object_ref(self.resource, obj.name()) + "\n",
        };
        self.write(&text)
    }

    /// Writes the end of the list and flushes.
    pub fn finish(mut self) -> Result<(), CliError> {
        let tail = match (self.format, self.items) {
            (ListFormat::Json, 0) => {
                "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
            }
            (ListFormat::Json, _) => {
                "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
            }
            (ListFormat::Yaml, 0) => {
                "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
            }
            (ListFormat::Yaml, _) => "kind: List\nmetadata:\n  resourceVersion: \"\"\n",
            (ListFormat::Name, _) => "",
        };
        self.write(tail)?;
        match self.out.flush() {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe && !self.closed => {
                Err(CliError::io("writing to stdout", e))
            }
            _ => Ok(()),
        }
    }
}

/// A column: header and how to compute the cell.
struct Column {
    header: &'static str,
    cell: fn(&Value) -> String,
}

fn s(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => GoNumber::of(n).display(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn n(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".to_owned() } else { s }
}

fn pod_ready(v: &Value) -> String {
    let total = v
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let ready = v
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map_or(0, |cs| {
            cs.iter()
                .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
                .count()
        });
    format!("{ready}/{total}")
}

fn pod_status(v: &Value) -> String {
    if v.pointer("/metadata/deletionTimestamp").is_some() {
        return "Terminating".to_owned();
    }
    let reason = s(v, "/status/reason");
    if !reason.is_empty() {
        return reason;
    }
    let phase = s(v, "/status/phase");
    if phase.is_empty() {
        "Pending".to_owned()
    } else {
        phase
    }
}

fn pod_restarts(v: &Value) -> String {
    v.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map_or(0, |cs| {
            cs.iter()
                .map(|c| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0))
                .sum::<i64>()
        })
        .to_string()
}

fn containers(v: &Value, field: &str) -> String {
    or_none(
        v.pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .filter_map(|c| c.get(field).and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
    )
}

/// `k=v,k2=v2` of the string map at `pointer`, or `<none>`.
fn key_values(v: &Value, pointer: &str) -> String {
    or_none(
        v.pointer(pointer)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
    )
}

fn selector(v: &Value) -> String {
    key_values(v, "/spec/selector/matchLabels")
}

fn labels(v: &Value) -> String {
    key_values(v, "/metadata/labels")
}

fn map_len(v: &Value, pointer: &str) -> usize {
    v.pointer(pointer)
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len)
}

fn service_ports(v: &Value) -> String {
    or_none(
        v.pointer("/spec/ports")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                        let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                        match p.get("nodePort").and_then(Value::as_i64) {
                            Some(np) => format!("{port}:{np}/{proto}"),
                            None => format!("{port}/{proto}"),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
    )
}

/// The kind-specific columns between NAME and AGE, and the extra ones of
/// `-o wide` after AGE.
fn columns(resource: &ApiResource) -> (Vec<Column>, Vec<Column>) {
    let c = |header, cell| Column { header, cell };
    match (resource.group.as_str(), resource.plural.as_str()) {
        ("", "pods") => (
            vec![
                c("READY", pod_ready as fn(&Value) -> String),
                c("STATUS", pod_status),
                c("RESTARTS", pod_restarts),
            ],
            vec![
                c("IP", |v| or_none(s(v, "/status/podIP"))),
                c("NODE", |v| or_none(s(v, "/spec/nodeName"))),
            ],
        ),
        ("apps", "deployments") => (
            vec![
                c("READY", |v| {
                    format!(
                        "{}/{}",
                        n(v, "/status/readyReplicas"),
                        v.pointer("/spec/replicas")
                            .and_then(Value::as_i64)
                            .unwrap_or(1)
                    )
                }),
                c("UP-TO-DATE", |v| {
                    n(v, "/status/updatedReplicas").to_string()
                }),
                c("AVAILABLE", |v| {
                    n(v, "/status/availableReplicas").to_string()
                }),
            ],
            vec![
                c("CONTAINERS", |v| containers(v, "name")),
                c("IMAGES", |v| containers(v, "image")),
                c("SELECTOR", selector),
            ],
        ),
        ("", "configmaps") => (
            vec![c("DATA", |v| {
                (map_len(v, "/data") + map_len(v, "/binaryData")).to_string()
            })],
            vec![c("LABELS", labels)],
        ),
        ("", "secrets") => (
            vec![
                c("TYPE", |v| s(v, "/type")),
                c("DATA", |v| map_len(v, "/data").to_string()),
            ],
            vec![c("LABELS", labels)],
        ),
        ("", "namespaces") => (
            vec![c("STATUS", |v| s(v, "/status/phase"))],
            vec![c("LABELS", labels)],
        ),
        ("", "services") => (
            vec![
                c("TYPE", |v| s(v, "/spec/type")),
                c("CLUSTER-IP", |v| or_none(s(v, "/spec/clusterIP"))),
                c("EXTERNAL-IP", |v| {
                    or_none(
                        v.pointer("/spec/externalIPs")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(Value::as_str)
                                    .collect::<Vec<_>>()
                                    .join(",")
                            })
                            .unwrap_or_default(),
                    )
                }),
                c("PORT(S)", service_ports),
            ],
            vec![c("SELECTOR", |v| key_values(v, "/spec/selector"))],
        ),
        _ => (Vec::new(), vec![c("LABELS", labels)]),
    }
}

/// The table kubectl would print: NAMESPACE (with `all_namespaces`), NAME,
/// the kind's columns, AGE, and with `wide` a few more.
pub fn table(
    resource: &ApiResource,
    objects: &[DynamicObject],
    all_namespaces: bool,
    wide: bool,
) -> String {
    align(&table_rows(resource, objects, all_namespaces, wide, false))
}

/// The table of `kubectl get all`: names as `kind/name` (`pod/web-0`).
pub fn table_with_kinds(
    resource: &ApiResource,
    objects: &[DynamicObject],
    all_namespaces: bool,
    wide: bool,
) -> String {
    align(&table_rows(resource, objects, all_namespaces, wide, true))
}

/// One object's row as `kubectl get -w` prints a change: aligned with the
/// header, and the header line too when `with_header`.
pub fn watch_row(
    resource: &ApiResource,
    obj: &DynamicObject,
    all_namespaces: bool,
    wide: bool,
    with_header: bool,
) -> String {
    let rows = table_rows(
        resource,
        std::slice::from_ref(obj),
        all_namespaces,
        wide,
        false,
    );
    header_if(align(&rows), with_header)
}

/// An aligned table's text, its header line dropped unless `with_header`
/// (the rows of `get -w` after the first).
pub fn header_if(text: String, with_header: bool) -> String {
    if with_header {
        return text;
    }
    text.split_once('\n')
        .map(|(_, rows)| rows.to_owned())
        .unwrap_or_default()
}

/// The header and one row per object.
fn table_rows(
    resource: &ApiResource,
    objects: &[DynamicObject],
    all_namespaces: bool,
    wide: bool,
    kind_names: bool,
) -> Vec<Vec<String>> {
    let (mid, extra) = columns(resource);
    let mut headers: Vec<&str> = Vec::new();
    if all_namespaces && resource.namespaced {
        headers.push("NAMESPACE");
    }
    headers.push("NAME");
    headers.extend(mid.iter().map(|c| c.header));
    headers.push("AGE");
    if wide {
        headers.extend(extra.iter().map(|c| c.header));
    }
    let now = Time::now().unix_seconds();
    let mut rows: Vec<Vec<String>> = vec![headers.iter().map(|h| (*h).to_owned()).collect()];
    for obj in objects {
        let value = with_type(resource, obj, Shown::default());
        let mut row = Vec::new();
        if all_namespaces && resource.namespaced {
            row.push(obj.namespace().unwrap_or_default().to_owned());
        }
        row.push(if kind_names {
            object_ref(resource, obj.name())
        } else {
            obj.name().to_owned()
        });
        row.extend(mid.iter().map(|c| (c.cell)(&value)));
        row.push(match &obj.metadata.creation_timestamp {
            Some(t) => human_age(now - t.unix_seconds()),
            None => "<unknown>".to_owned(),
        });
        if wide {
            row.extend(extra.iter().map(|c| (c.cell)(&value)));
        }
        rows.push(row);
    }
    rows
}

/// Left-aligned columns separated by three spaces, as kubectl's printer.
pub fn align(rows: &[Vec<String>]) -> String {
    align_remembering(rows, &mut Vec::new())
}

/// [`align`] with column widths at least `widths`, which grow to what
/// these rows need (kubectl's tabwriter with `RememberWidths`, as
/// `get -w` prints each change).
pub fn align_remembering(rows: &[Vec<String>], widths: &mut Vec<usize>) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    if widths.len() < cols {
        widths.resize(cols, 0);
    }
    for (i, w) in widths.iter_mut().enumerate() {
        let need = rows
            .iter()
            .filter_map(|r| r.get(i))
            .map(|c| c.chars().count());
        *w = need.fold(*w, usize::max);
    }
    let widths = &*widths;
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 3;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// kubectl's `HumanDuration` of an age in seconds (`45s`, `3m20s`, `5h`,
/// `2d3h`, `400d`, `3y10d`): the server's tables' rule
/// ([`kubeset_testserver::human_duration`]), with a clock skew of a second
/// read as `0s` and more as `<invalid>`.
pub fn human_age(secs: i64) -> String {
    match u64::try_from(secs) {
        Ok(secs) => kubeset_testserver::human_duration(secs),
        Err(_) if secs < -1 => "<invalid>".to_owned(),
        Err(_) => "0s".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        }
    }

    fn streamed(format: ListFormat, objects: &[DynamicObject]) -> String {
        let mut out = Vec::new();
        let resource = cm();
        let mut w = ListWriter::new(&mut out, format, &resource, Shown::default());
        for o in objects {
            w.item(o).unwrap();
        }
        w.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn streamed_lists_print_exactly_as_whole_ones() {
        let obj = |v: Value| serde_json::from_value::<DynamicObject>(v).unwrap();
        let objects = [
            obj(
                json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}},
                "data": {"multi": "line one\nline two\n", "empty": "", "quote": "it's \"q\"",
                         "list": "- not a list", "nested": "{\"k\": [1, 2]}"}}),
            ),
            obj(json!({"metadata": {"name": "b"}, "binaryData": {}, "data": {"n": "12"}})),
            obj(json!({"metadata": {"name": "c"}})),
        ];
        for format in [ListFormat::Json, ListFormat::Yaml, ListFormat::Name] {
            for n in [0, 1, 3] {
                let whole = render(
                    &format.into(),
                    &cm(),
                    &objects[..n],
                    false,
                    Shown::default(),
                )
                .unwrap();
                assert_eq!(streamed(format, &objects[..n]), whole, "{format:?} {n}");
            }
        }
    }

    #[test]
    fn ages_like_kubectl() {
        // The rule itself is the server's (its tests); here what kubectl
        // adds for a clock ahead of ours.
        for (secs, want) in [(-5, "<invalid>"), (-1, "0s"), (0, "0s"), (200, "3m20s")] {
            assert_eq!(human_age(secs), want, "{secs}");
        }
    }

    #[test]
    fn wide_columns_print_label_maps_like_kubectl() {
        let svc = ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "Service".into(),
            plural: "services".into(),
            namespaced: true,
        };
        let o = DynamicObject::new("web", &svc).with(
            "spec",
            json!({"type": "ClusterIP", "clusterIP": "10.0.0.1",
                   "ports": [{"port": 80, "protocol": "TCP"}],
                   "selector": {"app": "web", "tier": "front"}}),
        );
        let t = table(&svc, &[o], false, true);
        let row = t.lines().nth(1).unwrap();
        assert!(row.ends_with("app=web,tier=front"), "{t}");
        assert!(row.contains("80/TCP"), "{t}");

        let mut cm_obj = DynamicObject::new("c", &cm());
        cm_obj.metadata.labels = Some([("a".to_owned(), "1".to_owned())].into());
        let bare = DynamicObject::new("d", &cm());
        let t = table(&cm(), &[cm_obj, bare], false, true);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].ends_with("LABELS"), "{t}");
        assert!(lines[1].ends_with("a=1"), "{t}");
        assert!(lines[2].ends_with("<none>"), "{t}");
    }

    #[test]
    fn names_and_tables() {
        let mut apps = cm();
        apps.group = "apps".into();
        apps.kind = "Deployment".into();
        apps.plural = "deployments".into();
        assert_eq!(object_ref(&cm(), "x"), "configmap/x");
        assert_eq!(object_ref(&apps, "web"), "deployment.apps/web");

        let mut o = DynamicObject::new("demo", &cm())
            .within("ns1")
            .with("data", json!({"a": "1", "b": "2"}));
        o.metadata.creation_timestamp = Some(Time::now());
        let t = table(&cm(), &[o.clone()], true, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "NAMESPACE   NAME   DATA   AGE");
        assert!(lines[1].starts_with("ns1         demo   2      "), "{t}");

        let shown = Shown::default();
        let out = render(&OutputFormat::Name, &cm(), &[o.clone()], false, shown).unwrap();
        assert_eq!(out, "configmap/demo\n");
        let mut item = o.clone();
        item.api_version.clear();
        item.kind.clear();
        let list: Value = serde_json::from_str(
            &render(&OutputFormat::Json, &cm(), &[item], false, shown).unwrap(),
        )
        .unwrap();
        assert_eq!(list["kind"], "List");
        assert_eq!(list["items"][0]["kind"], "ConfigMap");
        assert_eq!(list["items"][0]["apiVersion"], "v1");
        let yaml = render(&OutputFormat::Yaml, &cm(), &[o], true, shown).unwrap();
        assert!(
            yaml.contains("kind: ConfigMap") && yaml.contains("name: demo"),
            "{yaml}"
        );
    }
}
