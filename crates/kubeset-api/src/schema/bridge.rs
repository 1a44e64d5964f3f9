//! The schema of a `#[derive(CustomResource)]` spec or status, whichever
//! `JsonSchema` it derives: kubeset's, or (feature `schemars-bridge`, the
//! facade's `derive`) schemars 1's, as every kube-rs project from kube-rs 2
//! on has it, or (feature `schemars08-bridge`, also the facade's `derive`)
//! schemars 0.8's, as kube-rs 1 and older projects have it. The derive
//! calls `schema_props` on a [`Probe`] through autoref specialization:
//! `(&&Probe::<T>::NEW).schema_props()` is answered by the one of
//! [`ViaSchemars`] (on `&Probe`), [`ViaKubeset`] (on `&&Probe`) and
//! [`ViaSchemars08`] (on `Probe`, reached by deref) whose bound `T` meets.
//!
//! schemars' schema is generated with its OpenAPI 3 settings (`nullable`
//! for `Option`, subschemas inlined) and then made structural as
//! kube-apiserver wants it: no `$schema`, `definitions` or `title`, a
//! `const` as a one-value `enum`, a `oneOf` of plain values (a unit enum
//! with documented variants) as one `enum`.

use std::marker::PhantomData;

use super::{JSONSchemaProps, JsonSchema};

/// A type to ask for its schema (see the module docs).
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// The probe of `T`.
    pub const NEW: Self = Probe(PhantomData);
}

/// The schema by kubeset's [`JsonSchema`].
pub trait ViaKubeset {
    /// The schema.
    fn schema_props(&self) -> JSONSchemaProps;
}

impl<T: JsonSchema + ?Sized> ViaKubeset for &&Probe<T> {
    fn schema_props(&self) -> JSONSchemaProps {
        T::json_schema()
    }
}

/// The schema by schemars' `JsonSchema` (feature `schemars-bridge`).
pub trait ViaSchemars {
    /// The schema.
    fn schema_props(&self) -> JSONSchemaProps;
}

#[cfg(feature = "schemars-bridge")]
impl<T: schemars::JsonSchema + ?Sized> ViaSchemars for &Probe<T> {
    fn schema_props(&self) -> JSONSchemaProps {
        from_schemars::<T>()
    }
}

/// The schema by schemars 0.8's `JsonSchema` (feature `schemars08-bridge`).
pub trait ViaSchemars08 {
    /// The schema.
    fn schema_props(&self) -> JSONSchemaProps;
}

#[cfg(feature = "schemars08-bridge")]
impl<T: schemars08::JsonSchema + ?Sized> ViaSchemars08 for Probe<T> {
    fn schema_props(&self) -> JSONSchemaProps {
        from_schemars08::<T>()
    }
}

/// `T`'s schemars 0.8 schema as a structural [`JSONSchemaProps`], with
/// the OpenAPI 3 settings kube-rs 1 used (subschemas inlined, `nullable`
/// for `Option`) and the same rewrite and fallback as [`from_schemars`].
#[cfg(feature = "schemars08-bridge")]
pub fn from_schemars08<T: schemars08::JsonSchema + ?Sized>() -> JSONSchemaProps {
    let generator = schemars08::r#gen::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let root = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(root).unwrap_or(serde_json::Value::Null);
    structural(&mut value);
    props_or_open(value)
}

/// The value as [`JSONSchemaProps`], or an open object whose description
/// says why it did not read as one.
#[cfg(any(feature = "schemars-bridge", feature = "schemars08-bridge"))]
fn props_or_open(value: serde_json::Value) -> JSONSchemaProps {
    match serde_json::from_value(value) {
        Ok(props) => props,
        Err(e) => JSONSchemaProps {
            type_: Some("object".to_owned()),
            x_kubernetes_preserve_unknown_fields: Some(true),
            description: Some(format!("schemars' schema is not structural here: {e}")),
            ..JSONSchemaProps::default()
        },
    }
}

/// `T`'s schemars schema as a structural [`JSONSchemaProps`]. A schema
/// that does not read as one (a keyword the model lacks) keeps what it
/// can: the object is then open (`x-kubernetes-preserve-unknown-fields`)
/// and its description says why, so `crd()` never panics.
#[cfg(feature = "schemars-bridge")]
pub fn from_schemars<T: schemars::JsonSchema + ?Sized>() -> JSONSchemaProps {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    structural(&mut value);
    props_or_open(value)
}

/// Make a schemars schema node structural in place (see the module
/// docs), and every schema under it.
#[cfg(any(feature = "schemars-bridge", feature = "schemars08-bridge", test))]
fn structural(v: &mut serde_json::Value) {
    use serde_json::Value;
    let Value::Object(map) = v else {
        return;
    };
    for key in ["$schema", "definitions", "$defs", "title"] {
        map.remove(key);
    }
    if let Some(c) = map.remove("const") {
        map.insert("enum".to_owned(), Value::Array(vec![c]));
    }
    for (key, child) in map.iter_mut() {
        match (key.as_str(), child) {
            // Maps of field names to schemas.
            ("properties" | "patternProperties", Value::Object(fields)) => {
                fields.values_mut().for_each(structural);
            }
            ("items" | "additionalProperties" | "not", child) => structural(child),
            ("allOf" | "anyOf" | "oneOf", Value::Array(branches)) => {
                branches.iter_mut().for_each(structural);
            }
            _ => {}
        }
    }
    unwrap_option(map);
    merge_one_value_enums(map);
    nullable_enum(map);
}

/// schemars' `Option<T>` where `T` is a named type: `anyOf: [T, {enum:
/// [null]}]`, as `T` with `nullable: true` (its own description kept
/// under the field's).
#[cfg(any(feature = "schemars-bridge", feature = "schemars08-bridge", test))]
fn unwrap_option(map: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let is_null = |b: &Value| {
        b.get("type") == Some(&Value::from("null"))
            || b.get("enum") == Some(&Value::Array(vec![Value::Null]))
    };
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let [a, b] = branches.as_slice() else {
        return;
    };
    let inner = match (is_null(a), is_null(b)) {
        (false, true) => a.clone(),
        (true, false) => b.clone(),
        _ => return,
    };
    let Value::Object(inner) = inner else {
        return;
    };
    map.remove("anyOf");
    for (k, v) in inner {
        map.entry(k).or_insert(v);
    }
    map.insert("nullable".to_owned(), Value::Bool(true));
}

/// A `oneOf` of one-value enums (documented unit variants) as one `enum`.
#[cfg(any(feature = "schemars-bridge", feature = "schemars08-bridge", test))]
fn merge_one_value_enums(map: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let values = map
        .get("oneOf")
        .and_then(Value::as_array)
        .and_then(|branches| {
            branches
                .iter()
                .map(|b| match b.get("enum").and_then(Value::as_array) {
                    Some(vals) if b.get("properties").is_none() => Some(vals.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
        });
    let Some(values) = values else {
        return;
    };
    map.remove("oneOf");
    let all_strings = values.iter().flatten().all(Value::is_string);
    map.insert("enum".to_owned(), Value::Array(values.concat()));
    if all_strings {
        map.entry("type").or_insert_with(|| Value::from("string"));
    }
}

/// A nullable `enum` as kubeset's [`nullable`](super::nullable) writes it:
/// the values in `anyOf: [{enum}, {enum: [null]}]`, since kube-apiserver
/// checks a node's own `enum` even for `null`.
#[cfg(any(feature = "schemars-bridge", feature = "schemars08-bridge", test))]
fn nullable_enum(map: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::{Value, json};
    let only_null = map
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|vals| vals.iter().all(Value::is_null));
    if map.get("nullable") != Some(&Value::Bool(true)) || map.contains_key("anyOf") || only_null {
        return;
    }
    if let Some(values) = map.remove("enum") {
        map.insert(
            "anyOf".to_owned(),
            json!([{"enum": values}, {"enum": [null]}]),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemars_leftovers_are_made_structural() {
        // schemars 1's OpenAPI 3 output for a spec with a `title` field, a
        // documented unit enum and an `Option` of it.
        let mut v = serde_json::json!({
            "$schema": "x", "title": "Spec", "type": "object",
            "properties": {
                "title": {"type": "string", "description": "The title."},
                "mode": {"oneOf": [
                    {"const": "Fast", "description": "quick"},
                    {"const": "Slow", "description": "careful"},
                ]},
                "maybe": {"description": "Maybe a mode.", "anyOf": [
                    {"description": "A mode.", "oneOf": [
                        {"enum": ["Fast"], "type": "string"},
                        {"enum": ["Slow"], "type": "string"},
                    ]},
                    {"enum": [null], "nullable": true},
                ]},
                "name": {"type": "string", "nullable": true},
            },
        });
        structural(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The title."},
                    "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                    "maybe": {
                        "description": "Maybe a mode.", "type": "string", "nullable": true,
                        "anyOf": [{"enum": ["Fast", "Slow"]}, {"enum": [null]}],
                    },
                    "name": {"type": "string", "nullable": true},
                },
            })
        );
    }
}
