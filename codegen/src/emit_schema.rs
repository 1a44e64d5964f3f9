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
//! schema is inlined when it is built, not in the generated code; each
//! impl's `DEFINITION` also keeps the definition's upstream name and, per
//! property, the referenced definition and the spec's `enum` values, which
//! kubeset-api's `schema::openapi` writes as OpenAPI documents with `$ref`s
//! (what `kubectl explain` reads).
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
use crate::ir::{self, Field, HAND_WRITTEN, Ir, Ty, TypeDef, TypeKind};
use crate::names::ident;
use crate::spec::Schema;
use crate::versions;

/// The directory of the generated impls, relative to kubeset-api.
pub const SCHEMA_DIR: &str = "src/schema/generated";

/// Largest generated file: a module's impls past it are split into parts
/// (`api_core_v1.rs`, `api_core_v1_part2.rs`, …).
const MAX_FILE_BYTES: usize = 280 * 1024;

/// Adds the impl files to `out`: one file per module of types (gated by
/// that module's feature; split in parts past `MAX_FILE_BYTES`), the
/// definitions of the hand-written types (`hand_written.rs`) and their
/// `mod.rs` with the lookup by definition name. `definitions` are the
/// spec's schemas the IR was lowered from.
pub fn add(
    ir: &Ir,
    definitions: &BTreeMap<String, Schema>,
    spec_label: &str,
    out: &mut Output,
) -> Result<(), CodegenError> {
    let with = with_schema(ir);
    // Module → (feature, [(version gate, type path, impl)]).
    type Impls = Vec<(TokenStream, TokenStream, TokenStream)>;
    let mut modules: BTreeMap<Vec<String>, (Option<String>, Impls)> = BTreeMap::new();
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
        entry.1.push((
            versions::cfg(t.gate.as_ref()),
            type_path(ir, definition),
            tokens,
        ));
    }
    let preamble = format!(
        "{}\n// Source: {spec_label}; `JsonSchema` impls (codegen/src/emit_schema.rs).\n",
        emit::GENERATED_MARKER
    );
    let mut decls = Vec::new();
    let mut lookups = Vec::new();
    for (path, (feature, impls)) in &modules {
        let name = path.join("_");
        let doc = format!(" `JsonSchema` for the models of `{}`.", path.join("::"));
        let parts = module_files(&name, &doc, impls, &preamble)?;
        // Modules without a feature (apimachinery: `ObjectMeta`,
        // `LabelSelector`, `Condition`) come with the trait; the others
        // also need `schemas`.
        let cfg = feature
            .as_ref()
            .map(|f| quote!(#[cfg(all(feature = "schemas", feature = #f))]));
        for (i, (file, text)) in parts.into_iter().enumerate() {
            out.files.insert(format!("{SCHEMA_DIR}/{file}.rs"), text);
            let id = ident(&file);
            decls.push(quote!(#cfg mod #id;));
            if i == 0 {
                lookups.push(quote! {
                    #cfg
                    if let Some(d) = crate::schema::openapi::find(#id::DEFINITIONS, name) {
                        return Some(d);
                    }
                });
            }
        }
    }
    let file = format!("{SCHEMA_DIR}/hand_written.rs");
    let tokens = hand_written(ir);
    out.files
        .insert(file.clone(), emit::format(&file, tokens, &preamble)?);
    let file = format!("{SCHEMA_DIR}/mod.rs");
    let tokens = quote! {
        //! `JsonSchema` for the generated models, one module per group-version.
        pub(crate) mod hand_written;
        #(#decls)*

        /// The definition named `name` among the compiled-in ones.
        pub(crate) fn definition(name: &str) -> Option<crate::schema::Definition> {
            if let Some(d) = crate::schema::openapi::find(hand_written::DEFINITIONS, name) {
                return Some(d);
            }
            #(#lookups)*
            None
        }
    };
    out.files
        .insert(file.clone(), emit::format(&file, tokens, &preamble)?);
    Ok(())
}

/// A module's file, or its parts when it would pass [`MAX_FILE_BYTES`]:
/// `(file stem, text)`. The first part holds the module's `DEFINITIONS`
/// table (sorted by name, as `ir.types` is) for all parts.
fn module_files(
    name: &str,
    doc: &str,
    impls: &[(TokenStream, TokenStream, TokenStream)],
    preamble: &str,
) -> Result<Vec<(String, String)>, CodegenError> {
    let mut parts = 1;
    loop {
        let chunk = impls.len().div_ceil(parts).max(1);
        let stems: Vec<String> = (0..parts)
            .map(|i| match i {
                0 => name.to_owned(),
                i => format!("{name}_part{}", i + 1),
            })
            .collect();
        let mut files = Vec::new();
        for (i, group) in impls.chunks(chunk).enumerate() {
            let bodies = group.iter().map(|(_, _, t)| t);
            let table = (i == 0).then(|| {
                let entries = impls.iter().map(|(cfg, path, _)| {
                    quote!(#cfg crate::schema::openapi::expect(<#path as JsonSchema>::DEFINITION),)
                });
                quote! {
                    /// The module's definitions, sorted by name.
                    pub(super) const DEFINITIONS: &[Definition] = &[#(#entries)*];
                }
            });
            let tokens = quote! {
                #![doc = #doc]
                #[allow(unused_imports)]
                use crate::schema::{Definition, JsonSchema, JSONSchemaProps, Model, Prop};
                #table
                #(#bodies)*
            };
            let file = format!("{SCHEMA_DIR}/{}.rs", stems[i]);
            files.push((stems[i].clone(), emit::format(&file, tokens, preamble)?));
        }
        if parts >= impls.len() || files.iter().all(|(_, t)| t.len() <= MAX_FILE_BYTES) {
            return Ok(files);
        }
        parts += 1;
    }
}

/// `hand_written.rs`: the definitions of the hand-written types with an
/// impl (`Quantity`, `Time`, …): their upstream names and descriptions,
/// which their impls in `schema/mod.rs` publish.
fn hand_written(ir: &Ir) -> TokenStream {
    let mut consts = Vec::new();
    let mut names = Vec::new();
    for definition in HAND_WRITTEN
        .iter()
        .filter(|h| h.schema)
        .map(|h| h.definition)
    {
        let Some(t) = ir.types.get(definition) else {
            continue;
        };
        let path = type_path(ir, definition);
        let id = ident(&crate::names::snake_case(&t.name).to_uppercase());
        let description = opt_str(t.description.as_deref());
        consts.push(quote! {
            pub(crate) const #id: Definition = Definition {
                name: #definition,
                model: &Model { description: #description, map_type: None, opaque: false, properties: &[] },
                schema: <#path as JsonSchema>::json_schema,
            };
        });
        names.push((definition, id));
    }
    names.sort_by_key(|(d, _)| *d);
    let ids = names.iter().map(|(_, id)| id);
    quote! {
        //! The definitions of kubeset's hand-written types, as upstream names and describes them.
        use crate::schema::{Definition, JsonSchema, Model};
        #(#consts)*
        /// The definitions above, sorted by name.
        pub(crate) const DEFINITIONS: &[Definition] = &[#(#ids),*];
    }
}

/// Whether `definition` is a hand-written type with a `JsonSchema` impl
/// in kubeset-api's `schema` module.
fn has_schema_impl(definition: &str) -> bool {
    ir::hand_written(definition).is_some_and(|h| h.schema)
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
            TypeKind::HandWritten { .. } => has_schema_impl(d),
            TypeKind::Enum { .. } | TypeKind::Untagged { .. } | TypeKind::Reuse { .. } => false,
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
        props.push(prop(ir, t, f, spec, definitions));
    }
    let definition = t.definition.as_str();
    let cfg = versions::cfg(t.gate.as_ref());
    // Properties in JSON name order, as the server publishes them.
    Some(quote! {
        #cfg
        impl JsonSchema for #path {
            const DEFINITION: Option<crate::schema::Definition> = Some(crate::schema::Definition {
                name: #definition,
                model: &Model {
                    description: #description,
                    map_type: #map_type,
                    opaque: #opaque,
                    properties: &[#(#props)*],
                },
                schema: <#path as JsonSchema>::json_schema,
            });
            fn json_schema() -> JSONSchemaProps {
                crate::schema::openapi::build(Self::DEFINITION)
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
    t: &TypeDef,
    f: &Field,
    spec: Option<&Schema>,
    definitions: &BTreeMap<String, Schema>,
) -> TokenStream {
    let name = &f.json;
    let ty = emit::rust_ty_with(&f.ty, &quote!(crate::ByteString), &|d| type_path(ir, d));
    let gvk = t.gvk.is_some();
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
        if f.required
            && spec.default.is_none()
            && publishes_zero_defaults(t)
            && zero_written_by_model(ir, &f.ty)
        {
            extra.push(quote!(unset_when_absent: true,));
        }
        let values: Vec<&str> = spec.enum_values.iter().filter_map(Value::as_str).collect();
        if !values.is_empty() {
            extra.push(quote!(enum_values: &[#(#values),*],));
        }
    }
    if let Some((target, wrap)) = reference(ir, &f.ty) {
        let target = type_path(ir, target);
        let wrap = ident(wrap);
        extra.push(quote! {
            reference: <#target as JsonSchema>::DEFINITION,
            wrap: crate::schema::Wrap::#wrap,
        });
    }
    let cfg = versions::cfg(f.gate.as_ref());
    quote! {
        #cfg
        Prop { name: #name, schema: <#ty as JsonSchema>::json_schema, #(#extra)* ..Prop::NONE },
    }
}

/// The named type a field refers to and where it sits (`One`, `List`,
/// `Map`): a struct, an opaque object or a hand-written type with a
/// definition.
fn reference<'a>(ir: &Ir, ty: &'a Ty) -> Option<(&'a str, &'static str)> {
    let (target, wrap) = match ty {
        Ty::Ref(d) => (d, "One"),
        Ty::Vec(t) => match t.as_ref() {
            Ty::Ref(d) => (d, "List"),
            _ => return None,
        },
        Ty::Map(t) => match t.as_ref() {
            Ty::Ref(d) => (d, "Map"),
            _ => return None,
        },
        _ => return None,
    };
    let named = match &ir.types.get(target)?.kind {
        TypeKind::Struct { .. } | TypeKind::Opaque => true,
        TypeKind::HandWritten { .. } => has_schema_impl(target),
        TypeKind::Enum { .. } | TypeKind::Untagged { .. } | TypeKind::Reuse { .. } => false,
    };
    named.then_some((target.as_str(), wrap))
}

/// Whether the definition was read from an OpenAPI v3 document, where Go's
/// OpenAPI generator publishes the zero `default` of every field Go's JSON
/// always writes (swagger.json, OpenAPI v2, publishes no defaults).
fn publishes_zero_defaults(t: &TypeDef) -> bool {
    t.source.split('/').any(|part| part == "openapi-v3")
}

/// Whether the model, holding a required field of type `ty` without
/// `Option`, writes its zero when the field was absent: a struct (or
/// opaque object) or a plain scalar. Hand-written types (`Time`,
/// `Quantity`, `IntOrString`) have zeros of their own that Go writes too
/// (or as `null`), and lists and maps are dropped empty.
fn zero_written_by_model(ir: &Ir, ty: &Ty) -> bool {
    match ty {
        Ty::String | Ty::Bool | Ty::I32 | Ty::I64 | Ty::F64 => true,
        Ty::Ref(d) => ir
            .types
            .get(d)
            .is_some_and(|t| matches!(t.kind, TypeKind::Struct { .. } | TypeKind::Opaque)),
        Ty::Bytes | Ty::Value | Ty::Vec(_) | Ty::Map(_) => false,
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
