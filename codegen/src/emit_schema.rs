//! `JsonSchema` impls for the generated models (kubeset-api's
//! `schema::generated`; cargo feature `schemas` beyond apimachinery): the schema the API server
//! publishes for each definition, made structural, so that a
//! CustomResourceDefinition can embed `PodTemplateSpec`, `Toleration` or
//! `ResourceRequirements`.
//!
//! The IR gives each struct's fields, their Rust types and `required`; the
//! spec's property gives what the server publishes beside them: the
//! `description`, `x-kubernetes-list-type`/`-list-map-keys`/`-map-type` and
//! `default`. A `$ref` becomes a call of the referenced type's impl, so the
//! schema is inlined when it is built, not in the generated code.
//!
//! What is not copied, and why:
//! - defaults that are Go zero values (`""`, `0`, `false`, `{}`): the
//!   built-in server publishes them for every field without a pointer, and
//!   its JSON encoding omits them again (`omitempty`); a CRD would store
//!   them. Other scalar defaults (`protocol: TCP`) are kept: the built-in
//!   server fills them in too, and a `map` list needs them for its keys;
//! - `x-kubernetes-patch-*` (strategic merge patch does not apply to custom
//!   resources), `x-kubernetes-group-version-kind`, `x-kubernetes-unions`;
//! - a `map` list whose keys are neither required nor defaulted (the CRD
//!   validation refuses it) keeps no list type.
//!
//! Types in a reference cycle (`JSONSchemaProps`) have no finite schema;
//! they, the types that reach them and the types built on hand-written
//! types without an impl (`Patch`, `WatchEvent`) get none.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

use crate::emit::{self, Output, type_path};
use crate::error::CodegenError;
use crate::ir::{Field, Ir, Ty, TypeDef, TypeKind};
use crate::names::ident;
use crate::spec::Schema;

/// The directory of the generated impls, relative to kubeset-api.
pub const SCHEMA_DIR: &str = "src/schema/generated";

/// Hand-written types that have a `JsonSchema` impl in kubeset-api's
/// `schema` module.
const HAND_WRITTEN_WITH_SCHEMA: &[&str] = &[
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
];

/// Adds the impl files to `out`: one file per module of types (gated by
/// that module's feature) and their `mod.rs`. `definitions` are the
/// spec's schemas the IR was lowered from.
pub fn add(
    ir: &Ir,
    definitions: &BTreeMap<String, Schema>,
    spec_label: &str,
    out: &mut Output,
) -> Result<(), CodegenError> {
    let with = with_schema(ir);
    let mut modules: BTreeMap<Vec<String>, (Option<String>, Vec<TokenStream>)> = BTreeMap::new();
    for (definition, t) in &ir.types {
        if !with.contains(definition.as_str()) {
            continue;
        }
        let Some(tokens) = impl_for(ir, t, definitions.get(definition), definitions) else {
            continue;
        };
        let entry = modules
            .entry(t.modules.clone())
            .or_insert_with(|| (t.feature.clone(), Vec::new()));
        entry.1.push(tokens);
    }
    let preamble = format!(
        "{}\n// Source: {spec_label}; `JsonSchema` impls (codegen/src/emit_schema.rs).\n",
        emit::GENERATED_MARKER
    );
    let mut decls = Vec::new();
    for (path, (feature, impls)) in &modules {
        let name = path.join("_");
        let file = format!("{SCHEMA_DIR}/{name}.rs");
        let doc = format!(" `JsonSchema` for the models of `{}`.", path.join("::"));
        let tokens = quote! {
            #![doc = #doc]
            use crate::schema::{JsonSchema, JSONSchemaProps, Model, Prop};
            #(#impls)*
        };
        out.files
            .insert(file.clone(), emit::format(&file, tokens, &preamble)?);
        let id = ident(&name);
        // Modules without a feature (apimachinery: `ObjectMeta`,
        // `LabelSelector`, `Condition`) come with the trait; the others
        // also need `schemas`.
        let cfg = feature
            .as_ref()
            .map(|f| quote!(#[cfg(all(feature = "schemas", feature = #f))]));
        decls.push(quote!(#cfg mod #id;));
    }
    let file = format!("{SCHEMA_DIR}/mod.rs");
    let tokens = quote! {
        //! `JsonSchema` for the generated models, one module per group-version.
        #(#decls)*
    };
    out.files
        .insert(file.clone(), emit::format(&file, tokens, &preamble)?);
    Ok(())
}

/// The definitions that get an impl (or have a hand-written one): every
/// struct or opaque object not in a reference cycle and not built on a
/// type without one.
fn with_schema(ir: &Ir) -> BTreeSet<&str> {
    let mut with: BTreeSet<&str> = ir
        .types
        .iter()
        .filter(|(d, t)| match &t.kind {
            TypeKind::Struct { .. } | TypeKind::Opaque => !in_cycle(ir, d),
            TypeKind::HandWritten { .. } => HAND_WRITTEN_WITH_SCHEMA.contains(&d.as_str()),
            TypeKind::Enum { .. } | TypeKind::Untagged { .. } => false,
        })
        .map(|(d, _)| d.as_str())
        .collect();
    // Drop what refers to a dropped type, until nothing changes.
    loop {
        let drop: Vec<&str> = with
            .iter()
            .copied()
            .filter(|d| refs_of(ir, d).iter().any(|r| !with.contains(r.as_str())))
            .collect();
        if drop.is_empty() {
            return with;
        }
        for d in drop {
            with.remove(d);
        }
    }
}

fn refs_of(ir: &Ir, definition: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(TypeKind::Struct { fields }) = ir.types.get(definition).map(|t| &t.kind) {
        for f in fields {
            collect_refs(&f.ty, &mut out);
        }
    }
    out
}

fn collect_refs(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Ref(d) => {
            out.insert(d.clone());
        }
        Ty::Vec(t) | Ty::Map(t) => collect_refs(t, out),
        _ => {}
    }
}

/// Whether `definition` reaches itself through its fields.
fn in_cycle(ir: &Ir, definition: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<String> = refs_of(ir, definition).into_iter().collect();
    while let Some(d) = stack.pop() {
        if d == definition {
            return true;
        }
        if seen.insert(d.clone()) {
            stack.extend(refs_of(ir, &d));
        }
    }
    false
}

fn impl_for(
    ir: &Ir,
    t: &TypeDef,
    schema: Option<&Schema>,
    definitions: &BTreeMap<String, Schema>,
) -> Option<TokenStream> {
    let path = type_path(ir, &t.definition);
    let description = opt_str(t.description.as_deref());
    let map_type = opt_str(schema.and_then(|s| s.map_type.as_deref()));
    let fields: &[Field] = match &t.kind {
        TypeKind::Struct { fields } => fields,
        TypeKind::Opaque => &[],
        _ => return None,
    };
    let opaque = matches!(t.kind, TypeKind::Opaque);
    let mut props: Vec<TokenStream> = Vec::new();
    if t.gvk.is_some() {
        for name in ["apiVersion", "kind"] {
            let spec = schema.and_then(|s| s.properties.get(name));
            let description = opt_str(spec.and_then(|s| s.description.as_deref()));
            props.push(quote! {
                Prop { name: #name, schema: <String as JsonSchema>::json_schema, description: #description, ..Prop::NONE },
            });
        }
    }
    for f in fields {
        let spec = schema.and_then(|s| s.properties.get(&f.json));
        props.push(prop(ir, t.gvk.is_some(), f, spec, definitions));
    }
    // Properties in JSON name order, as the server publishes them.
    Some(quote! {
        impl JsonSchema for #path {
            fn json_schema() -> JSONSchemaProps {
                const MODEL: Model = Model {
                    description: #description,
                    map_type: #map_type,
                    opaque: #opaque,
                    properties: &[#(#props)*],
                };
                MODEL.build()
            }
        }
    })
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

fn prop(
    ir: &Ir,
    gvk: bool,
    f: &Field,
    spec: Option<&Schema>,
    definitions: &BTreeMap<String, Schema>,
) -> TokenStream {
    let name = &f.json;
    let ty = emit::rust_ty_with(&f.ty, &quote!(crate::ByteString), &|d| type_path(ir, d));
    let mut extra = Vec::new();
    // The IR makes a kind's `metadata` required; the server publishes it
    // optional, which an embedded object needs.
    if f.required && !(gvk && f.json == "metadata") {
        extra.push(quote!(required: true,));
    }
    if let Some(d) = f.description.as_deref() {
        extra.push(quote!(description: Some(#d),));
    }
    if let Some(spec) = spec {
        if let Some(list_type) = list_type(f, spec, definitions) {
            extra.push(quote!(list_type: Some(#list_type),));
            if list_type == "map" {
                let keys = spec.list_map_keys.iter();
                extra.push(quote!(list_map_keys: &[#(#keys),*],));
            }
        }
        if let Some(map_type) = spec.map_type.as_deref() {
            extra.push(quote!(map_type: Some(#map_type),));
        }
        if let Some(default) = spec.default.as_ref().and_then(kept_default) {
            extra.push(quote!(default: Some(#default),));
        }
    }
    quote! {
        Prop { name: #name, schema: <#ty as JsonSchema>::json_schema, #(#extra)* ..Prop::NONE },
    }
}

/// A default the CRD keeps: a scalar that is not Go's zero value.
fn kept_default(v: &Value) -> Option<TokenStream> {
    match v {
        Value::String(s) if !s.is_empty() => Some(quote!(crate::schema::Scalar::Str(#s))),
        Value::Bool(true) => Some(quote!(crate::schema::Scalar::Bool(true))),
        Value::Number(n) => match n.as_i64() {
            Some(0) | None => None,
            Some(i) => Some(quote!(crate::schema::Scalar::Int(#i))),
        },
        _ => None,
    }
}

/// The list type to publish: a `map` list needs every key required or
/// defaulted in its items.
fn list_type<'a>(
    f: &Field,
    spec: &'a Schema,
    definitions: &BTreeMap<String, Schema>,
) -> Option<&'a str> {
    let list_type = spec.list_type.as_deref()?;
    if list_type != "map" {
        return Some(list_type);
    }
    let Ty::Vec(item) = &f.ty else { return None };
    let Ty::Ref(item) = item.as_ref() else {
        return None;
    };
    let item = definitions.get(item)?;
    let keyed = !spec.list_map_keys.is_empty()
        && spec.list_map_keys.iter().all(|k| {
            item.required.contains(k)
                || item
                    .properties
                    .get(k)
                    .and_then(|p| p.default.as_ref())
                    .and_then(kept_default)
                    .is_some()
        });
    keyed.then_some(list_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_defaults_are_dropped() {
        assert!(kept_default(&Value::from("")).is_none());
        assert!(kept_default(&Value::from(0)).is_none());
        assert!(kept_default(&Value::from(false)).is_none());
        assert!(kept_default(&serde_json::json!({})).is_none());
        assert!(kept_default(&Value::from("TCP")).is_some());
        assert!(kept_default(&Value::from(1)).is_some());
    }
}
