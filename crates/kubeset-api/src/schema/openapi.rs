//! OpenAPI v3 documents from the compiled schemas, with named definitions
//! and `$ref`s as kube-apiserver publishes them (`/openapi/v3/apis/apps/v1`):
//! what `kubectl explain` reads to name a field's type
//! (`strategy <DeploymentStrategy>`, `containers <[]Container>`,
//! `limits <map[string]Quantity>`) and to print a referenced definition's
//! description under the field's own.
//!
//! [`JsonSchema::json_schema`] inlines every reference, which a
//! CustomResourceDefinition needs; [`components`] instead writes each
//! definition once, under its upstream name
//! (`io.k8s.api.apps.v1.DeploymentStrategy`), and refers to it: a property
//! of a named type is `allOf: [{$ref}]` (the form upstream uses to attach
//! the property's description), a list's items are `allOf: [{$ref}]`, a
//! map's values a bare `$ref`.
//!
//! ```
//! # #[cfg(all(feature = "schemas", feature = "apps-v1"))] {
//! use kubeset_api::schema::openapi;
//!
//! let deployment = openapi::definition("io.k8s.api.apps.v1.Deployment").unwrap();
//! let schemas = openapi::components(&[deployment]);
//! assert_eq!(
//!     schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]["allOf"][0]["$ref"],
//!     "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"
//! );
//! assert!(schemas.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
//! # }
//! ```

use serde_json::{Map, Value, json};

use super::{JSONSchemaProps, JsonSchema, Model, Prop};

/// A named definition: what a type is published as in OpenAPI documents
/// ([`JsonSchema::DEFINITION`]).
#[derive(Debug, Clone, Copy)]
pub struct Definition {
    /// The upstream definition name (`io.k8s.api.apps.v1.Deployment`).
    pub name: &'static str,
    /// Its description and properties (none for a scalar such as `Time`).
    pub model: &'static Model,
    /// The type's inlined schema (what a definition without properties
    /// is published as).
    pub schema: fn() -> JSONSchemaProps,
}

/// Where a property's [`Prop::reference`] sits in its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// The property is of the referenced type.
    One,
    /// The property is a list of it.
    List,
    /// The property is a map with string keys and values of it.
    Map,
}

/// The definition of a compiled-in model by its upstream name
/// (`io.k8s.api.core.v1.PodSpec`); `None` when the model has no schema
/// (a reference cycle) or its group-version is not compiled in (cargo
/// feature `schemas` and the group-version's own for models outside
/// apimachinery).
///
/// ```
/// let meta = kubeset_api::schema::definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
/// assert!(meta.is_some_and(|d| d.model.properties.iter().any(|p| p.name == "labels")));
/// assert!(kubeset_api::schema::definition("io.k8s.nothing.v1.Nothing").is_none());
/// ```
pub fn definition(name: &str) -> Option<Definition> {
    super::generated::definition(name)
}

/// The definition with `name` in `table` (sorted by name).
pub(crate) fn find(table: &[Definition], name: &str) -> Option<Definition> {
    table
        .binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| table[i])
}

/// `d`, which a generated model always has (checked when compiling).
#[doc(hidden)]
pub const fn expect(d: Option<Definition>) -> Definition {
    match d {
        Some(d) => d,
        None => panic!("a generated model without a definition"),
    }
}

/// The inlined schema of a generated model ([`JsonSchema::json_schema`]
/// of the generated impls).
#[doc(hidden)]
pub fn build(d: Option<Definition>) -> JSONSchemaProps {
    d.map(|d| d.model.build()).unwrap_or_default()
}

/// `components.schemas` of an OpenAPI v3 document: `roots` and every
/// definition they reach, each under its name, referring to the others
/// by `$ref`.
pub fn components(roots: &[Definition]) -> Map<String, Value> {
    let mut out = Map::new();
    let mut queue: Vec<Definition> = roots.to_vec();
    while let Some(d) = queue.pop() {
        if out.contains_key(d.name) {
            continue;
        }
        let v = definition_json(&d, &mut queue);
        out.insert(d.name.to_owned(), v);
    }
    out
}

/// One definition; the definitions it refers to are pushed on `refs`.
fn definition_json(d: &Definition, refs: &mut Vec<Definition>) -> Value {
    let m = d.model;
    let mut v = if m.properties.is_empty() {
        serde_json::to_value((d.schema)()).unwrap_or_else(|_| json!({}))
    } else {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in m.properties {
            properties.insert(p.name.to_owned(), prop_json(p, refs));
            if p.required {
                required.push(Value::from(p.name));
            }
        }
        let mut v = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            v["required"] = Value::Array(required);
        }
        if m.opaque {
            v["x-kubernetes-preserve-unknown-fields"] = Value::Bool(true);
        }
        v
    };
    if let Some(description) = m.description {
        v["description"] = Value::from(description);
    }
    if let Some(map_type) = m.map_type {
        v["x-kubernetes-map-type"] = Value::from(map_type);
    }
    v
}

/// One property: a `$ref` (wrapped as upstream does) or the inlined
/// schema of a type without a definition, with the property's facts.
fn prop_json(p: &Prop, refs: &mut Vec<Definition>) -> Value {
    let mut v = match p.reference {
        Some(r) => {
            refs.push(r);
            let target = json!({"$ref": format!("#/components/schemas/{}", r.name)});
            match p.wrap {
                Wrap::One => json!({"allOf": [target]}),
                Wrap::List => json!({"type": "array", "items": {"allOf": [target]}}),
                Wrap::Map => json!({"type": "object", "additionalProperties": target}),
            }
        }
        None => serde_json::to_value((p.schema)()).unwrap_or_else(|_| json!({})),
    };
    if let Some(d) = p.description {
        v["description"] = Value::from(d);
    }
    if let Some(t) = p.list_type {
        v["x-kubernetes-list-type"] = Value::from(t);
    }
    if !p.list_map_keys.is_empty() {
        v["x-kubernetes-list-map-keys"] = Value::from(p.list_map_keys.to_vec());
    }
    if let Some(t) = p.map_type {
        v["x-kubernetes-map-type"] = Value::from(t);
    }
    if let Some(d) = p.default {
        v["default"] = Value::from(d);
    }
    if !p.enum_values.is_empty() {
        v["enum"] = Value::from(p.enum_values.to_vec());
    }
    v
}

/// The definition of `T`, for tables of named types.
pub fn of<T: JsonSchema + ?Sized>() -> Option<Definition> {
    T::DEFINITION
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn object_meta_refers_to_its_named_types() {
        let meta = of::<ObjectMeta>().unwrap();
        assert_eq!(meta.name, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        let schemas = components(&[meta]);
        let props = &schemas[meta.name]["properties"];
        assert_eq!(
            props["creationTimestamp"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
        );
        assert_eq!(
            props["managedFields"]["items"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"
        );
        assert_eq!(props["labels"]["additionalProperties"]["type"], "string");
        // A scalar definition is its inlined schema with the upstream
        // description.
        let time = &schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"];
        assert_eq!(time["type"], "string");
        assert!(
            time["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("Time is a wrapper"))
        );
        assert!(schemas.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"));
    }

    #[test]
    fn lookup_by_name() {
        assert!(definition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector").is_some());
        assert!(definition("io.k8s.apimachinery.pkg.apis.meta.v1.Nope").is_none());
    }
}
