//! The server's own table (`meta.k8s.io/v1` `Table`, asked for with
//! kubectl's `Accept` header), printed as kubectl prints it: every kind
//! gets the columns its API server defines — a custom resource its CRD's
//! `additionalPrinterColumns` — instead of columns the client guesses.
//!
//! kubectl's rules (`printers.printTable`): priority-0 columns, all of them
//! with `-o wide`; the header in upper case; `NAMESPACE` first with `-A`
//! (from each row's object); a string cell cut at its first line break with
//! `...`; other cells as Go's `fmt.Sprint`; a missing cell empty.

use kubeset::dynamic::DynamicObject;
use serde::Deserialize;
use serde_json::Value;

use crate::gonum::GoNumber;

/// What `kubectl get` sends to be answered with a `Table`.
pub const ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// A `Table` as the server sent it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Table {
    kind: String,
    #[serde(default)]
    metadata: TableMeta,
    #[serde(default)]
    column_definitions: Vec<ColumnDefinition>,
    #[serde(default)]
    rows: Vec<Row>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TableMeta {
    #[serde(default)]
    resource_version: String,
}

#[derive(Debug, Deserialize)]
struct ColumnDefinition {
    name: String,
    #[serde(default)]
    priority: i32,
}

#[derive(Debug, Deserialize)]
struct Row {
    #[serde(default)]
    cells: Vec<Value>,
    #[serde(default)]
    object: Value,
}

/// How the table is printed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-o wide`: every column.
    pub wide: bool,
    /// `-A` on a namespaced resource: a `NAMESPACE` column first.
    pub namespace: bool,
    /// `get all`: names as `kind/name` (`deployment.apps/web`).
    pub kind: Option<String>,
}

impl Table {
    /// The table in a response body; `None` when the server answered
    /// something else (a plain list: a server without tables).
    pub fn parse(body: &[u8]) -> Option<Self> {
        let table: Self = serde_json::from_slice(body).ok()?;
        (table.kind == "Table").then_some(table)
    }

    /// The table a watch event carries (`get -w`: each event's object is a
    /// `Table` of its one row), read from the decoded event without
    /// writing it out again; `None` for a plain object.
    pub fn from_object(obj: &DynamicObject) -> Option<Self> {
        if obj.kind != "Table" {
            return None;
        }
        Some(Self {
            kind: obj.kind.clone(),
            metadata: TableMeta {
                resource_version: obj.metadata.resource_version.clone().unwrap_or_default(),
            },
            column_definitions: field(obj, "columnDefinitions")?,
            rows: field(obj, "rows")?,
        })
    }

    /// The table's `resourceVersion` (a list's: where a watch starts).
    pub fn resource_version(&self) -> &str {
        &self.metadata.resource_version
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header and the rows as cells (for [`crate::output::align`]).
    pub fn rows(&self, options: &Options) -> Vec<Vec<String>> {
        let shown: Vec<usize> = (0..self.column_definitions.len())
            .filter(|&i| options.wide || self.column_definitions[i].priority == 0)
            .collect();
        let mut header = Vec::new();
        if options.namespace {
            header.push("NAMESPACE".to_owned());
        }
        header.extend(
            shown
                .iter()
                .map(|&i| self.column_definitions[i].name.to_uppercase()),
        );
        let mut out = vec![header];
        for row in &self.rows {
            let mut cells = Vec::new();
            if options.namespace {
                let ns = row.object.pointer("/metadata/namespace");
                cells.push(ns.and_then(Value::as_str).unwrap_or_default().to_owned());
            }
            let first = cells.len();
            cells.extend(
                shown
                    .iter()
                    .map(|&i| row.cells.get(i).map(cell).unwrap_or_default()),
            );
            if let (Some(kind), Some(name)) = (&options.kind, cells.get_mut(first)) {
                *name = format!("{kind}/{name}");
            }
            out.push(cells);
        }
        out
    }
}

/// One cell as kubectl prints it.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => match s.find(['\n', '\r', '\u{c}']) {
            Some(at) => format!("{}...", &s[..at]),
            None => s.clone(),
        },
        other => sprint(other),
    }
}

/// Go's `fmt.Sprint` of a decoded JSON value.
fn sprint(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => GoNumber::of(n).display(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(sprint).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", sprint(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// A field of a `Table` object's body; a missing one is empty.
fn field<T: serde::de::DeserializeOwned + Default>(obj: &DynamicObject, name: &str) -> Option<T> {
    obj.data
        .get(name)
        .map_or(Some(T::default()), |v| T::deserialize(v).ok())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn table() -> Table {
        serde_json::from_value(json!({
            "kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "columnDefinitions": [
                {"name": "Name", "type": "string", "priority": 0},
                {"name": "Ready", "type": "string", "priority": 0},
                {"name": "Restarts", "type": "integer", "priority": 0},
                {"name": "Node", "type": "string", "priority": 1},
            ],
            "rows": [
                {"cells": ["web-0", "1/1", 0, "n1"], "object": {"metadata": {"namespace": "a"}}},
                {"cells": ["web-1", "two\nlines", 1.5], "object": {"metadata": {"namespace": "b"}}},
            ],
        }))
        .unwrap()
    }

    #[test]
    fn columns_by_priority_and_cells_as_kubectl() {
        let t = table();
        assert_eq!(
            t.rows(&Options::default()),
            [
                vec!["NAME", "READY", "RESTARTS"],
                vec!["web-0", "1/1", "0"],
                vec!["web-1", "two...", "1.5"],
            ]
        );
        let wide = t.rows(&Options {
            wide: true,
            namespace: true,
            kind: None,
        });
        assert_eq!(wide[0], ["NAMESPACE", "NAME", "READY", "RESTARTS", "NODE"]);
        assert_eq!(wide[1], ["a", "web-0", "1/1", "0", "n1"]);
        // A row with fewer cells than columns: the missing one is empty.
        assert_eq!(wide[2], ["b", "web-1", "two...", "1.5", ""]);
        let all = t.rows(&Options {
            kind: Some("pod".into()),
            ..Options::default()
        });
        assert_eq!(all[1][0], "pod/web-0");
    }

    #[test]
    fn only_a_table_is_a_table() {
        assert!(Table::parse(br#"{"kind": "PodList", "items": []}"#).is_none());
        assert!(Table::parse(b"not json").is_none());
        let t = Table::parse(br#"{"kind": "Table", "columnDefinitions": [], "rows": []}"#).unwrap();
        assert!(t.is_empty());
        assert_eq!(
            sprint(&json!({"a": [1, true], "b": null})),
            "map[a:[1 true] b:<nil>]"
        );
    }
}
