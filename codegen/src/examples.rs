//! Example objects: every field of a type filled with a value of the
//! right shape. Used to write round-trip fixtures that prove each field of
//! the generated models is read and written under its JSON name.

use serde_json::{Map, Value, json};

use crate::ir::{Ir, Ty, TypeKind};

/// Depth below which optional fields are still filled (recursive schemas
/// such as `JSONSchemaProps` stop there).
const MAX_DEPTH: usize = 6;

/// A full example of `definition`, with `apiVersion`/`kind` for top-level
/// kinds. `None` if the definition is unknown.
pub fn example(ir: &Ir, definition: &str) -> Option<Value> {
    ir.types.get(definition)?;
    Some(value_of_ref(ir, definition, 0))
}

fn value_of_ref(ir: &Ir, definition: &str, depth: usize) -> Value {
    let Some(t) = ir.types.get(definition) else {
        return Value::Null;
    };
    match &t.kind {
        TypeKind::HandWritten { .. } => hand_written(ir, definition, depth),
        TypeKind::Opaque => json!({"opaque": "value"}),
        TypeKind::Enum { variants, other } => Value::String(
            variants
                .first()
                .map_or_else(|| other.clone(), |v| v.json.clone()),
        ),
        TypeKind::Untagged { .. } | TypeKind::Reuse { .. } => Value::Null,
        TypeKind::Struct { fields } => {
            let mut map = Map::new();
            if let Some(g) = &t.gvk {
                let api_version = g.api_version();
                map.insert("apiVersion".into(), Value::String(api_version));
                map.insert("kind".into(), Value::String(g.kind.clone()));
            }
            for f in fields {
                if !f.required && depth >= MAX_DEPTH {
                    continue;
                }
                map.insert(f.json.clone(), value_of(ir, &f.ty, &f.json, depth + 1));
            }
            Value::Object(map)
        }
    }
}

fn value_of(ir: &Ir, ty: &Ty, name: &str, depth: usize) -> Value {
    match ty {
        Ty::String => Value::String(format!("{name}-value")),
        Ty::Bool => Value::Bool(true),
        Ty::I32 => json!(3),
        Ty::I64 => json!(7),
        Ty::F64 => json!(1.5),
        Ty::Bytes => json!("aGVsbG8="),
        Ty::Value => json!({"any": ["json", 1, true, null]}),
        Ty::Vec(t) if depth >= MAX_DEPTH => {
            let _ = t;
            json!([])
        }
        Ty::Vec(t) => Value::Array(vec![value_of(ir, t, name, depth)]),
        Ty::Map(_) if depth >= MAX_DEPTH => json!({}),
        Ty::Map(t) => json!({ "key": value_of(ir, t, name, depth) }),
        Ty::Ref(d) => value_of_ref(ir, d, depth),
    }
}

fn hand_written(ir: &Ir, definition: &str, depth: usize) -> Value {
    let short = definition.rsplit('.').next().unwrap_or_default();
    match short {
        "Quantity" => json!("1500m"),
        "Time" => json!("2024-05-01T10:00:00Z"),
        "MicroTime" => json!("2024-05-01T10:00:00.123456Z"),
        "FieldsV1" => json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}),
        "IntOrString" => json!("25%"),
        "RawExtension" => json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}),
        "Patch" => json!({"metadata": {"labels": {"a": "b"}}}),
        "WatchEvent" => json!({"type": "ADDED", "object": {"kind": "X"}}),
        "JSON" => json!({"json": [1, "two"]}),
        "JSONSchemaPropsOrStringArray" => json!(["a", "b"]),
        "JSONSchemaPropsOrBool" if depth >= MAX_DEPTH => json!(true),
        "JSONSchemaPropsOrArray" | "JSONSchemaPropsOrBool" => {
            let props = definition
                .rsplit_once('.')
                .map(|(prefix, _)| format!("{prefix}.JSONSchemaProps"))
                .unwrap_or_default();
            value_of_ref(ir, &props, depth + 1)
        }
        _ => Value::Null,
    }
}
