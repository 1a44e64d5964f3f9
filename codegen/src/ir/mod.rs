//! The intermediate representation: normalised names, resolved references,
//! everything in `BTreeMap` order. Emitters read only this.
//!
//! By stage: this file is the model; `tables` the hand-kept facts the
//! spec lacks; [`fixups`] the named corrections of upstream quirks;
//! `lowering` definitions → types; `paths` the resource table and the
//! subresource operations read from the spec's paths; [`client`] the
//! clientset's accessors and methods, a pass over the finished IR.

use std::collections::{BTreeMap, BTreeSet};

use crate::spec::Gvk;
pub use crate::versions::Gate;

pub mod client;
pub mod fixups;
mod lowering;
mod paths;
mod size;
mod tables;
mod verbs;

pub use lowering::{lower, lower_with};
pub use paths::{resources_from_paths, subresource_operations};
pub use size::{BTREE_MAP, JSON_VALUE, Layout, VEC};
pub use tables::{HAND_WRITTEN, HandWritten, RESPONSE_OVERRIDES, SHORT_NAMES, hand_written};
pub use verbs::{Action, Verb};

/// The type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    /// `String`.
    String,
    /// `bool`.
    Bool,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// Base64 bytes (`format: byte`).
    Bytes,
    /// Arbitrary JSON.
    Value,
    /// An array.
    Vec(Box<Ty>),
    /// A string-keyed map.
    Map(Box<Ty>),
    /// Another definition, by definition name.
    Ref(String),
}

/// One field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// JSON property name.
    pub json: String,
    /// Rust field name.
    pub rust: String,
    /// Field type (without `Option`/`Box`).
    pub ty: Ty,
    /// Required by the spec (plain field) or optional (`Option`).
    pub required: bool,
    /// Behind a `Box`: only to break a type cycle, as k8s-openapi does.
    pub boxed: bool,
    /// Description from the spec.
    pub description: Option<String>,
    /// More documentation lines: validations, defaults, list keys (CRD
    /// input only; the built-in path leaves it empty).
    pub notes: Vec<String>,
    /// The schema's `default` when the emitter can write it as the field's
    /// `Default` (a scalar or string enum value; CRD input only).
    pub default: Option<serde_json::Value>,
    /// How server-side apply merges a list field (`x-kubernetes-list-type`,
    /// `x-kubernetes-list-map-keys`, `x-kubernetes-patch-merge-key`);
    /// `None` for other fields and lists the schema says nothing about.
    pub list: Option<ListSemantics>,
    /// The versions that have the field, when not every version that has
    /// its type does (merged input only).
    pub gate: Option<Gate>,
}

/// How server-side apply merges the items of a list field: filled by both
/// lowerings (built-in and CRD) from the schema, read by the apply emitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListSemantics {
    /// `atomic`: the list is replaced whole, owned by one manager.
    Atomic,
    /// `set`: scalar items, each owned on its own.
    Set,
    /// `map`: items identified by the values of their key fields (JSON
    /// names, in schema order), each owned on its own.
    Map {
        /// The key fields (`x-kubernetes-list-map-keys`, else the
        /// `x-kubernetes-patch-merge-key`).
        keys: Vec<String>,
    },
}

impl ListSemantics {
    /// The semantics a schema states: `x-kubernetes-list-type` with its
    /// map keys, else a `x-kubernetes-patch-merge-key` (a keyed list in
    /// strategic merge patch), else `None`.
    pub fn of(schema: &crate::spec::Schema) -> Option<ListSemantics> {
        match schema.list_type.as_deref() {
            Some("atomic") => Some(ListSemantics::Atomic),
            Some("set") => Some(ListSemantics::Set),
            Some("map") if !schema.list_map_keys.is_empty() => Some(ListSemantics::Map {
                keys: schema.list_map_keys.clone(),
            }),
            Some("map") | None => schema.patch_merge_key.as_ref().map(|k| ListSemantics::Map {
                keys: vec![k.clone()],
            }),
            Some(_) => None,
        }
    }
}

/// One value of a string enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The JSON string.
    pub json: String,
    /// The Rust variant name.
    pub rust: String,
}

/// What a definition becomes.
#[derive(Debug, Clone)]
pub enum TypeKind {
    /// A struct with fields.
    Struct {
        /// Fields in JSON name order.
        fields: Vec<Field>,
    },
    /// An object schema without properties: kept as a JSON map.
    Opaque,
    /// A hand-written type, re-exported from this path under the crate root.
    HandWritten {
        /// Path below `crate::`, e.g. `types::Quantity`.
        path: &'static str,
    },
    /// A string `enum` (CRD input): the known values plus a fallback
    /// variant holding any other string.
    Enum {
        /// Known values, in schema order.
        variants: Vec<Variant>,
        /// Name of the fallback variant (`Other` unless a value takes it).
        other: String,
    },
    /// `oneOf`/`anyOf` of alternatives with distinct JSON types (CRD
    /// input): an untagged enum.
    Untagged {
        /// Variant name and type, in schema order.
        variants: Vec<(String, Ty)>,
    },
    /// A built-in model used as it is (CRD input: a schema that matches
    /// one, `crd/reuse.rs`); nothing is generated for it.
    Reuse {
        /// The full Rust path, e.g. `kubeset::api::core::v1::Container`.
        path: String,
    },
}

/// The REST resource a kind is served as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    /// Lowercase plural.
    pub plural: String,
    /// Whether namespaced.
    pub namespaced: bool,
}

/// One generated (or re-exported) type.
#[derive(Debug, Clone)]
pub struct TypeDef {
    /// Definition name in the spec.
    pub definition: String,
    /// Module segments below the crate root.
    pub modules: Vec<String>,
    /// Type name.
    pub name: String,
    /// Description from the spec.
    pub description: Option<String>,
    /// What it is.
    pub kind: TypeKind,
    /// The single group-version-kind of a top-level object (written as
    /// `apiVersion`/`kind` on output).
    pub gvk: Option<Gvk>,
    /// Set when the kind is served as a REST resource with `metadata: ObjectMeta`.
    pub resource: Option<ResourceRef>,
    /// Cargo feature gating the module, `None` when always compiled.
    pub feature: Option<String>,
    /// The spec file the definition was read from.
    pub source: String,
    /// Set for types lowered from a schema nested in another definition:
    /// that definition.
    pub inline_of: Option<String>,
    /// Unknown fields are kept (`x-kubernetes-preserve-unknown-fields`):
    /// the struct holds them in a flattened map under this Rust name.
    pub unknown_fields: Option<String>,
    /// More documentation lines (CRD input only).
    pub notes: Vec<String>,
    /// The versions that have the type, when not every merged one does.
    pub gate: Option<Gate>,
}

impl TypeDef {
    /// The type `name` of the spec's `definition`, of `kind`, and nothing
    /// else known yet: no module, docs, GVK, resource, feature, source file,
    /// notes or gate. The other fields are set with struct update syntax.
    ///
    /// ```
    /// use kubeset_codegen::ir::{TypeDef, TypeKind};
    /// let t = TypeDef {
    ///     feature: Some("core-v1".into()),
    ///     ..TypeDef::new("io.k8s.api.core.v1.Pod".into(), "Pod".into(), TypeKind::Opaque)
    /// };
    /// assert!(t.modules.is_empty() && t.gvk.is_none());
    /// ```
    pub fn new(definition: String, name: String, kind: TypeKind) -> Self {
        Self {
            definition,
            modules: Vec::new(),
            name,
            description: None,
            kind,
            gvk: None,
            resource: None,
            feature: None,
            source: String::new(),
            inline_of: None,
            unknown_fields: None,
            notes: Vec::new(),
            gate: None,
        }
    }
}

/// A subresource of a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubresourceIr {
    /// Verbs (`get`, `update`, `patch`, `create`, `connect`).
    pub verbs: BTreeSet<Verb>,
    /// Kind of the object the subresource takes or returns, when typed.
    pub kind: Option<Gvk>,
    /// The versions that serve it, when not every one that serves the
    /// resource does.
    pub gate: Option<Gate>,
}

/// One REST resource of a group-version, derived from the spec's paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceIr {
    /// API group, empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Lowercase plural.
    pub plural: String,
    /// Lowercase singular.
    pub singular: String,
    /// Namespaced.
    pub namespaced: bool,
    /// Verbs on the resource.
    pub verbs: BTreeSet<Verb>,
    /// Subresources by name.
    pub subresources: BTreeMap<String, SubresourceIr>,
    /// kubectl short names.
    pub short_names: Vec<String>,
    /// The versions that serve it, when not every merged one does.
    pub gate: Option<Gate>,
}

/// The whole model.
#[derive(Debug, Clone, Default)]
pub struct Ir {
    /// Types by definition name.
    pub types: BTreeMap<String, TypeDef>,
    /// Resources sorted by group, version, plural.
    pub resources: Vec<ResourceIr>,
    /// Feature → features it needs.
    pub features: BTreeMap<String, BTreeSet<String>>,
    /// Every operation on a `…/{name}/<subresource>` path, sorted by group,
    /// version, plural, subresource and method.
    pub subresource_operations: Vec<SubresourceOperation>,
    /// The Kubernetes versions merged, oldest first (one, or none for
    /// a test spec: no gates).
    pub versions: Vec<String>,
}

/// What a subresource operation answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationResponse {
    /// A definition, by name.
    Definition(String),
    /// Plain text (`type: string`, e.g. `pods/log`).
    Text,
    /// No typed `200` response in the spec.
    Untyped,
}

/// A query parameter of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParam {
    /// Wire name (`sinceSeconds`).
    pub name: String,
    /// [`Ty::String`], [`Ty::Bool`] or [`Ty::I64`].
    pub ty: Ty,
    /// Description from the spec.
    pub description: Option<String>,
}

/// One operation on a `…/{name}/<subresource>` path, as the spec writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubresourceOperation {
    /// API group of the parent resource, empty for core.
    pub group: String,
    /// API version of the parent resource.
    pub version: String,
    /// Plural of the parent resource.
    pub plural: String,
    /// Subresource name (`status`, `scale`, `log`, …).
    pub subresource: String,
    /// Whether the parent resource is namespaced.
    pub namespaced: bool,
    /// HTTP method, lowercase (`get`, `put`, `post`, `patch`, `delete`).
    pub method: String,
    /// `x-kubernetes-action` (`get`, `put`, `post`, `patch`, `connect`, …).
    pub action: Action,
    /// Description of the operation.
    pub description: Option<String>,
    /// Definition name of the request body, when there is one.
    pub request: Option<String>,
    /// The `200` response.
    pub response: OperationResponse,
    /// Query parameters (path-item and operation ones), in wire-name order.
    pub query: Vec<QueryParam>,
    /// The versions that have the operation, when not every merged one does.
    pub gate: Option<Gate>,
}
