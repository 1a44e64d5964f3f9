//! `meta.k8s.io/v1` Table rendering, which `kubectl get` asks for with
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.

use serde_json::{Value, json};

use crate::printers;
use crate::registry;
use crate::resources::Resource;

/// Whether the Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table"))
}

fn row(obj: &Value, cells: Vec<Value>, include: &str) -> Value {
    let object = match include {
        "None" => Value::Null,
        "Object" => obj.clone(),
        _ => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    };
    json!({"cells": cells, "object": object})
}

/// A Table of `items` with `res`'s printer columns.
pub(crate) fn table(
    res: &Resource,
    items: &[Value],
    rv: &str,
    continue_token: Option<&str>,
    include: &str,
) -> Value {
    let mut meta = json!({"resourceVersion": rv});
    if let Some(c) = continue_token {
        meta["continue"] = json!(c);
    }
    let (defs, cells) = printers::columns(res, registry::of(res).printer());
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": defs,
        "rows": items.iter().map(|o| row(o, cells(&crate::events::to_storage(res, o.clone())), include)).collect::<Vec<_>>(),
    })
}
