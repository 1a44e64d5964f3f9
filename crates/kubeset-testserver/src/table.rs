//! `meta.k8s.io/v1` Table rendering, which `kubectl get` asks for with
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.

use serde_json::{Value, json};

use crate::util;

/// Whether the Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table"))
}

fn row(obj: &Value, include: &str) -> Value {
    let name = obj
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    let created = obj
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let object = match include {
        "None" => Value::Null,
        "Object" => obj.clone(),
        _ => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    };
    json!({"cells": [name, util::age(created)], "object": object})
}

/// A Table of `items` with Name and Age columns.
pub(crate) fn table(
    items: &[Value],
    rv: &str,
    continue_token: Option<&str>,
    include: &str,
) -> Value {
    let mut meta = json!({"resourceVersion": rv});
    if let Some(c) = continue_token {
        meta["continue"] = json!(c);
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0},
            {"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}
        ],
        "rows": items.iter().map(|o| row(o, include)).collect::<Vec<_>>(),
    })
}
