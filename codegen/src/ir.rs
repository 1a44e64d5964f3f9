//! The intermediate representation: normalised names, resolved references,
//! everything in `BTreeMap` order. Emitters read only this.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::CodegenError;
use crate::names;
use crate::schema::{Lowerer, Mode, Scope};
use crate::spec::{self, Gvk, Input, Schema};

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
    /// Behind a `Box`: to break a cycle, or a large optional struct
    /// ([`crate::layout::BOX_THRESHOLD`]).
    pub boxed: bool,
    /// Description from the spec.
    pub description: Option<String>,
    /// More documentation lines: validations, defaults, list keys (CRD
    /// input only; the built-in path leaves it empty).
    pub notes: Vec<String>,
    /// The schema's `default` when the emitter can write it as the field's
    /// `Default` (a scalar or string enum value; CRD input only).
    pub default: Option<serde_json::Value>,
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
}

/// A subresource of a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubresourceIr {
    /// Verbs (`get`, `update`, `patch`, `create`, `connect`).
    pub verbs: BTreeSet<String>,
    /// Kind of the object the subresource takes or returns, when typed.
    pub kind: Option<Gvk>,
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
    pub verbs: BTreeSet<String>,
    /// Subresources by name.
    pub subresources: BTreeMap<String, SubresourceIr>,
    /// kubectl short names.
    pub short_names: Vec<String>,
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
    pub action: String,
    /// Description of the operation.
    pub description: Option<String>,
    /// Definition name of the request body, when there is one.
    pub request: Option<String>,
    /// The `200` response.
    pub response: OperationResponse,
    /// Query parameters (path-item and operation ones), in wire-name order.
    pub query: Vec<QueryParam>,
}

/// Definitions implemented by hand in `kubeset-api` (the spec cannot say
/// what they are), with their path under the crate root.
pub const HAND_WRITTEN: &[(&str, &str)] = &[
    (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        "types::Quantity",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "types::Time"),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        "types::MicroTime",
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "types::FieldsV1",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "types::Patch"),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
        "types::WatchEvent",
    ),
    (
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        "types::RawExtension",
    ),
    (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "types::IntOrString",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "types::JSON",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "types::JSONSchemaPropsOrArray",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "types::JSONSchemaPropsOrBool",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        "types::JSONSchemaPropsOrStringArray",
    ),
];

/// Short names kubectl knows, keyed by (group, plural). The spec does not
/// carry them; discovery does.
pub const SHORT_NAMES: &[(&str, &str, &[&str])] = &[
    ("", "componentstatuses", &["cs"]),
    ("", "configmaps", &["cm"]),
    ("", "endpoints", &["ep"]),
    ("", "events", &["ev"]),
    ("", "limitranges", &["limits"]),
    ("", "namespaces", &["ns"]),
    ("", "nodes", &["no"]),
    ("", "persistentvolumeclaims", &["pvc"]),
    ("", "persistentvolumes", &["pv"]),
    ("", "pods", &["po"]),
    ("", "replicationcontrollers", &["rc"]),
    ("", "resourcequotas", &["quota"]),
    ("", "serviceaccounts", &["sa"]),
    ("", "services", &["svc"]),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        &["crd", "crds"],
    ),
    ("apps", "daemonsets", &["ds"]),
    ("apps", "deployments", &["deploy"]),
    ("apps", "replicasets", &["rs"]),
    ("apps", "statefulsets", &["sts"]),
    ("autoscaling", "horizontalpodautoscalers", &["hpa"]),
    ("batch", "cronjobs", &["cj"]),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["csr"],
    ),
    ("events.k8s.io", "events", &["ev"]),
    ("networking.k8s.io", "ingresses", &["ing"]),
    ("networking.k8s.io", "networkpolicies", &["netpol"]),
    ("policy", "poddisruptionbudgets", &["pdb"]),
    ("scheduling.k8s.io", "priorityclasses", &["pc"]),
    ("storage.k8s.io", "storageclasses", &["sc"]),
];

/// Upstream quirks, each fixed by a named function that fails when the
/// quirk is gone (so a new Kubernetes version cannot silently change them).
pub mod fixups {
    use super::*;

    /// `events.k8s.io/v1` `Event.eventTime` is marked required, but events
    /// written through the core/v1 API come back with `"eventTime": null`.
    /// Make it optional so that such events round-trip.
    pub fn event_time_nullable(input: &mut Input) -> Result<(), CodegenError> {
        optionalise(
            input,
            "event_time_nullable",
            "io.k8s.api.events.v1.Event",
            "eventTime",
        )
    }

    /// `core/v1` `Event.eventTime` (optional) is fine; the events/v1 series
    /// `lastObservedTime` is required but can equally be unset on old
    /// events written through core/v1.
    pub fn event_series_last_observed_nullable(input: &mut Input) -> Result<(), CodegenError> {
        optionalise(
            input,
            "event_series_last_observed_nullable",
            "io.k8s.api.events.v1.EventSeries",
            "lastObservedTime",
        )
    }

    fn optionalise(
        input: &mut Input,
        fixup: &'static str,
        definition: &str,
        property: &str,
    ) -> Result<(), CodegenError> {
        let Some(schema) = input.definitions.get_mut(definition) else {
            return Err(CodegenError::FixupNoLongerApplies {
                fixup,
                reason: format!("{definition} is not in the spec"),
            });
        };
        let before = schema.required.len();
        schema.required.retain(|r| r != property);
        if schema.required.len() == before {
            return Err(CodegenError::FixupNoLongerApplies {
                fixup,
                reason: format!("{definition}.{property} is no longer required"),
            });
        }
        Ok(())
    }

    /// A fixup: edits the input, fails when its quirk is gone.
    pub type Fixup = fn(&mut Input) -> Result<(), CodegenError>;

    /// All fixups, in order.
    pub const ALL: &[(&str, Fixup)] = &[
        ("event_time_nullable", event_time_nullable),
        (
            "event_series_last_observed_nullable",
            event_series_last_observed_nullable,
        ),
    ];
}

fn hand_written(definition: &str) -> Option<&'static str> {
    HAND_WRITTEN
        .iter()
        .find(|(d, _)| *d == definition)
        .map(|(_, p)| *p)
}

/// Lowers a Kubernetes spec input into the IR, after [`fixups::ALL`].
pub fn lower(input: Input) -> Result<Ir, CodegenError> {
    lower_with(input, fixups::ALL)
}

/// Lowers with a chosen list of fixups (small test specs have none of
/// the upstream quirks).
pub fn lower_with(mut input: Input, fixups: &[(&str, fixups::Fixup)]) -> Result<Ir, CodegenError> {
    for (_, fixup) in fixups {
        fixup(&mut input)?;
    }
    for (definition, _) in HAND_WRITTEN {
        if !input.definitions.contains_key(*definition) {
            return Err(CodegenError::MissingHandWritten {
                definition: (*definition).to_owned(),
            });
        }
    }
    let resources = resources_from_paths(&input);
    let mut ir = Ir::default();
    let paths = definition_paths(&input)?;
    let taken = paths.values().cloned().collect();
    let mut lowerer = Lowerer::new(Mode::BuiltIn, &input.definitions, taken);
    for (definition, schema) in &input.definitions {
        let (modules, name) = paths[definition].clone();
        let gvk = match schema.gvk.as_slice() {
            [one]
                if schema.properties.contains_key("kind")
                    && schema.properties.contains_key("apiVersion") =>
            {
                Some(one.clone())
            }
            _ => None,
        };
        let resource = gvk.as_ref().and_then(|g| {
            let meta = schema.properties.get("metadata").and_then(ref_of);
            if meta != Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") {
                return None;
            }
            resources
                .iter()
                .find(|r| r.group == g.group && r.version == g.version && r.kind == g.kind)
                .map(|r| ResourceRef {
                    plural: r.plural.clone(),
                    namespaced: r.namespaced,
                })
        });
        let feature = names::feature_of(&modules);
        let source = input.sources.get(definition).cloned().unwrap_or_default();
        lowerer.set_scope(Scope {
            definition: definition.clone(),
            modules: modules.clone(),
            feature: feature.clone(),
            source: source.clone(),
            origin: format!("definition {definition}"),
        });
        let kind = if let Some(path) = hand_written(definition) {
            TypeKind::HandWritten { path }
        } else if schema.properties.is_empty() {
            TypeKind::Opaque
        } else {
            let skip: &[&str] = if gvk.is_some() {
                &["apiVersion", "kind"]
            } else {
                &[]
            };
            lowerer.struct_type(schema, "", &name, definition, skip)?;
            let mut lowered = lowerer.types.remove(definition).map(|t| t.kind);
            if let (Some(TypeKind::Struct { fields }), true) = (&mut lowered, gvk.is_some()) {
                // Top-level objects always carry metadata.
                for f in fields.iter_mut().filter(|f| f.json == "metadata") {
                    f.required = true;
                }
            }
            lowered.unwrap_or(TypeKind::Opaque)
        };
        ir.types.insert(
            definition.clone(),
            TypeDef {
                definition: definition.clone(),
                modules,
                name,
                description: schema.description.clone(),
                kind,
                gvk,
                resource,
                feature,
                source,
                inline_of: None,
                unknown_fields: None,
                notes: Vec::new(),
            },
        );
    }
    ir.types.append(&mut lowerer.types);
    mark_cycles(&mut ir);
    crate::layout::box_large_optionals(&mut ir, crate::layout::BOX_THRESHOLD)?;
    ir.features = feature_dependencies(&ir)?;
    ir.resources = resources;
    ir.subresource_operations = subresource_operations(&input);
    check_one_type_per_definition(&input, &ir)?;
    Ok(ir)
}

/// The Rust path (modules, name) of every definition; two definitions
/// whose files would collide are an error.
fn definition_paths(
    input: &Input,
) -> Result<BTreeMap<String, (Vec<String>, String)>, CodegenError> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (definition, schema) in &input.definitions {
        let (modules, name) = custom_resource_path(definition, schema)
            .or_else(|| names::rust_path(definition))
            .ok_or_else(|| CodegenError::BadDefinitionName {
                definition: definition.clone(),
            })?;
        let file_key = format!("{}::{}", modules.join("::"), names::snake_case(&name));
        if let Some(first) = seen.insert(file_key.clone(), definition.clone()) {
            return Err(CodegenError::NameCollision {
                scope: "module".into(),
                rust: file_key,
                first,
                second: definition.clone(),
            });
        }
        out.insert(definition.clone(), (modules, name));
    }
    Ok(out)
}

fn check_one_type_per_definition(input: &Input, ir: &Ir) -> Result<(), CodegenError> {
    let mut paths: BTreeMap<(Vec<String>, String), usize> = BTreeMap::new();
    for t in ir.types.values() {
        *paths
            .entry((t.modules.clone(), t.name.clone()))
            .or_default() += 1;
    }
    for definition in input.definitions.keys() {
        let count = ir
            .types
            .get(definition)
            .map(|t| {
                paths
                    .get(&(t.modules.clone(), t.name.clone()))
                    .copied()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        if count != 1 {
            return Err(CodegenError::TypeCount {
                definition: definition.clone(),
                count,
            });
        }
    }
    let own = ir.types.values().filter(|t| t.inline_of.is_none()).count();
    if own != input.definitions.len() {
        return Err(CodegenError::TypeCount {
            definition: "<all>".into(),
            count: ir.types.len(),
        });
    }
    Ok(())
}

fn ref_of(schema: &Schema) -> Option<&str> {
    if let Some(r) = &schema.reference {
        return spec::ref_name(r);
    }
    match schema.all_of.as_slice() {
        [one] => one.reference.as_deref().and_then(spec::ref_name),
        _ => None,
    }
}

/// Marks fields that hold (through `Option` but not `Vec`/map) a type that
/// contains the struct itself, so the emitter boxes them.
fn mark_cycles(ir: &mut Ir) {
    let direct: BTreeMap<String, Vec<String>> = ir
        .types
        .iter()
        .map(|(name, t)| {
            let refs = match &t.kind {
                TypeKind::Struct { fields } => fields
                    .iter()
                    .filter_map(|f| match &f.ty {
                        Ty::Ref(r) => Some(r.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (name.clone(), refs)
        })
        .collect();
    let reaches = |from: &str, target: &str| -> bool {
        let mut stack = vec![from.to_owned()];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.extend(direct.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    for (name, t) in ir.types.iter_mut() {
        if let TypeKind::Struct { fields } = &mut t.kind {
            for f in fields {
                if let Ty::Ref(r) = &f.ty {
                    f.boxed = reaches(r, name);
                }
            }
        }
    }
}

fn collect_refs(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Ref(r) => {
            out.insert(r.clone());
        }
        Ty::Vec(t) | Ty::Map(t) => collect_refs(t, out),
        _ => {}
    }
}

/// Feature → features its types refer to (cross-group references).
fn feature_dependencies(ir: &Ir) -> Result<BTreeMap<String, BTreeSet<String>>, CodegenError> {
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for t in ir.types.values() {
        if let Some(f) = &t.feature {
            features.entry(f.clone()).or_default();
        }
        let mut refs = BTreeSet::new();
        if let TypeKind::Struct { fields } = &t.kind {
            for field in fields {
                collect_refs(&field.ty, &mut refs);
            }
        }
        for target in refs {
            let Some(target_feature) = ir.types.get(&target).and_then(|t| t.feature.clone()) else {
                continue;
            };
            match &t.feature {
                None => {
                    return Err(CodegenError::UngatedReference {
                        definition: t.definition.clone(),
                        target,
                        feature: target_feature,
                    });
                }
                Some(own) if *own != target_feature => {
                    features
                        .entry(own.clone())
                        .or_default()
                        .insert(target_feature);
                }
                Some(_) => {}
            }
        }
    }
    Ok(features)
}

fn verb_of(action: &str) -> Option<&'static str> {
    Some(match action {
        "get" => "get",
        "list" => "list",
        "post" => "create",
        "put" => "update",
        "patch" => "patch",
        "delete" => "delete",
        "deletecollection" => "deletecollection",
        "watch" | "watchlist" => "watch",
        "connect" => "connect",
        _ => return None,
    })
}

/// Splits a path into (group, version, namespaced, resource, subresource).
fn parse_path(path: &str) -> Option<(String, String, bool, String, Option<String>)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => (String::new(), (*version).to_owned(), rest),
        ["apis", group, version, rest @ ..] => ((*group).to_owned(), (*version).to_owned(), rest),
        _ => return None,
    };
    let rest = match rest {
        ["watch", rest @ ..] => rest,
        rest => rest,
    };
    let (namespaced, rest) = match rest {
        ["namespaces", "{namespace}", rest @ ..] if !rest.is_empty() => (true, rest),
        rest => (false, rest),
    };
    match rest {
        [resource] => Some((group, version, namespaced, (*resource).to_owned(), None)),
        [resource, name] if name.starts_with('{') => {
            Some((group, version, namespaced, (*resource).to_owned(), None))
        }
        [resource, name, sub, ..] if name.starts_with('{') => Some((
            group,
            version,
            namespaced,
            (*resource).to_owned(),
            Some((*sub).to_owned()),
        )),
        _ => None,
    }
}

/// Derives the resource table from the paths and their `x-kubernetes-action`s.
pub fn resources_from_paths(input: &Input) -> Vec<ResourceIr> {
    let mut by_key: BTreeMap<(String, String, String), ResourceIr> = BTreeMap::new();
    for (path, item) in &input.paths {
        let Some((group, version, namespaced, plural, sub)) = parse_path(path) else {
            continue;
        };
        for op in item.operations() {
            let (Some(action), Some(gvk)) = (op.action.as_deref(), op.gvk.as_ref()) else {
                continue;
            };
            let Some(verb) = verb_of(action) else {
                continue;
            };
            let entry = by_key
                .entry((group.clone(), version.clone(), plural.clone()))
                .or_insert_with(|| ResourceIr {
                    group: group.clone(),
                    version: version.clone(),
                    plural: plural.clone(),
                    ..ResourceIr::default()
                });
            entry.namespaced |= namespaced;
            match &sub {
                None => {
                    entry.verbs.insert(verb.to_owned());
                    if entry.kind.is_empty() {
                        entry.kind = gvk.kind.clone();
                    }
                }
                Some(sub) => {
                    let s = entry.subresources.entry(sub.clone()).or_default();
                    s.verbs.insert(verb.to_owned());
                    let own = gvk.group == group && gvk.version == version;
                    let parent_kind = !entry.kind.is_empty() && entry.kind == gvk.kind && own;
                    if s.kind.is_none() && !parent_kind {
                        s.kind = Some(gvk.clone());
                    }
                }
            }
        }
    }
    let mut out: Vec<ResourceIr> = by_key
        .into_values()
        .filter(|r| !r.kind.is_empty())
        .map(|mut r| {
            r.singular = r.kind.to_ascii_lowercase();
            // A subresource typed with the parent's own kind (status) has no
            // separate kind.
            for s in r.subresources.values_mut() {
                if s.kind.as_ref().is_some_and(|k| {
                    k.kind == r.kind && k.group == r.group && k.version == r.version
                }) {
                    s.kind = None;
                }
            }
            r.short_names = SHORT_NAMES
                .iter()
                .find(|(g, p, _)| *g == r.group && *p == r.plural)
                .map(|(_, _, s)| s.iter().map(|s| (*s).to_owned()).collect())
                .unwrap_or_default();
            r
        })
        .collect();
    out.sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
    out
}

/// Where a custom resource's definition goes (a live `/openapi/v3` serves
/// CRD group-versions too, named `<reversed group>.<version>.<Kind>`): under
/// `api::<group with . and - as _>::<version>`, so `things.example.com/v1`
/// `Thing` is `api::example_com::v1::Thing` (feature `example-com-v1`).
/// Only definitions whose name is exactly what their single
/// `x-kubernetes-group-version-kind` says; others stay errors.
pub fn custom_resource_path(definition: &str, schema: &Schema) -> Option<(Vec<String>, String)> {
    let [gvk] = schema.gvk.as_slice() else {
        return None;
    };
    if !gvk.group.contains('.') {
        return None;
    }
    let reversed: Vec<&str> = gvk.group.split('.').rev().collect();
    let list_kind = format!("{}List", gvk.kind);
    let expected = format!("{}.{}.", reversed.join("."), gvk.version);
    let name = definition.strip_prefix(&expected)?;
    if name != gvk.kind && name != list_kind {
        return None;
    }
    let module = gvk.group.replace(['.', '-'], "_");
    let valid = |s: &str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !valid(&module)
        || !valid(&gvk.version)
        || !name.starts_with(|c: char| c.is_ascii_uppercase())
        || !name.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return None;
    }
    Some((
        vec!["api".to_owned(), module, gvk.version.clone()],
        name.to_owned(),
    ))
}

/// Collects the operations of every `…/{name}/<subresource>` path.
pub fn subresource_operations(input: &Input) -> Vec<SubresourceOperation> {
    let mut out = Vec::new();
    for (path, item) in &input.paths {
        if path.contains("/watch/") {
            continue;
        }
        let Some((group, version, namespaced, plural, Some(sub))) = parse_path(path) else {
            continue;
        };
        // Only `…/{name}/<sub>` itself, not `…/proxy/{path}`.
        if !path.ends_with(&format!("}}/{sub}")) {
            continue;
        }
        let methods = [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
        ];
        for (method, op) in methods {
            let Some(op) = op else { continue };
            let Some(action) = op.action.clone() else {
                continue;
            };
            let mut query: BTreeMap<String, QueryParam> = BTreeMap::new();
            for p in item.parameters.iter().chain(&op.parameters) {
                if p.location != "query" {
                    continue;
                }
                let ty = match p.json_type() {
                    Some("boolean") => Ty::Bool,
                    Some("integer") => Ty::I64,
                    _ => Ty::String,
                };
                query.insert(
                    p.name.clone(),
                    QueryParam {
                        name: p.name.clone(),
                        ty,
                        description: p.description.clone(),
                    },
                );
            }
            let request = op.request_schema().and_then(ref_of).map(str::to_owned);
            let response = match op.ok_schema() {
                Some(schema) => match ref_of(schema) {
                    Some(r) => OperationResponse::Definition(r.to_owned()),
                    None if schema.ty.as_deref() == Some("string") => OperationResponse::Text,
                    None => OperationResponse::Untyped,
                },
                None => OperationResponse::Untyped,
            };
            out.push(SubresourceOperation {
                group: group.clone(),
                version: version.clone(),
                plural: plural.clone(),
                subresource: sub.clone(),
                namespaced,
                method: method.to_owned(),
                action,
                description: op.description.clone(),
                request,
                response,
                query: query.into_values().collect(),
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.group, &a.version, &a.plural, &a.subresource, &a.method).cmp(&(
            &b.group,
            &b.version,
            &b.plural,
            &b.subresource,
            &b.method,
        ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixups_fail_once_upstream_is_fixed() {
        let mut input = Input::default();
        let err = fixups::event_time_nullable(&mut input).unwrap_err();
        assert!(matches!(
            err,
            CodegenError::FixupNoLongerApplies {
                fixup: "event_time_nullable",
                ..
            }
        ));
        input.definitions.insert(
            "io.k8s.api.events.v1.Event".into(),
            Schema {
                required: vec!["eventTime".into()],
                ..Schema::default()
            },
        );
        fixups::event_time_nullable(&mut input).unwrap();
        assert!(
            input.definitions["io.k8s.api.events.v1.Event"]
                .required
                .is_empty()
        );
        // Applied twice: the quirk is gone, the fixup says so.
        assert!(fixups::event_time_nullable(&mut input).is_err());
    }

    #[test]
    fn custom_resources_map_under_their_group() {
        let schema = |group: &str, kind: &str| Schema {
            gvk: vec![Gvk {
                group: group.into(),
                version: "v1".into(),
                kind: kind.into(),
            }],
            ..Schema::default()
        };
        let path = |d: &str, s: &Schema| custom_resource_path(d, s);
        assert_eq!(
            path(
                "dev.kubeset.oa-x1.v1.Thing",
                &schema("oa-x1.kubeset.dev", "Thing")
            ),
            Some((
                vec!["api".into(), "oa_x1_kubeset_dev".into(), "v1".into()],
                "Thing".into()
            ))
        );
        assert_eq!(
            path(
                "dev.kubeset.oa-x1.v1.ThingList",
                &schema("oa-x1.kubeset.dev", "ThingList")
            )
            .map(|p| p.1),
            Some("ThingList".into())
        );
        // The name must be what the group-version-kind says.
        assert_eq!(
            path("dev.other.v1.Thing", &schema("oa.kubeset.dev", "Thing")),
            None
        );
        // Built-in groups have no dot; groups starting with a digit make no module.
        assert_eq!(path("apps.v1.Thing", &schema("apps", "Thing")), None);
        assert_eq!(
            path("com.x.9a.v1.Thing", &schema("9a.x.com", "Thing")),
            None
        );
    }

    #[test]
    fn paths_split_into_resource_and_subresource() {
        assert_eq!(
            parse_path("/api/v1/namespaces/{namespace}/pods/{name}/log"),
            Some((
                "".into(),
                "v1".into(),
                true,
                "pods".into(),
                Some("log".into())
            ))
        );
        assert_eq!(
            parse_path("/apis/apps/v1/watch/namespaces/{namespace}/deployments"),
            Some(("apps".into(), "v1".into(), true, "deployments".into(), None))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/{name}/finalize"),
            Some((
                "".into(),
                "v1".into(),
                false,
                "namespaces".into(),
                Some("finalize".into())
            ))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}"),
            Some((
                "".into(),
                "v1".into(),
                true,
                "pods".into(),
                Some("proxy".into())
            ))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces"),
            Some(("".into(), "v1".into(), false, "namespaces".into(), None))
        );
        assert_eq!(parse_path("/apis/apps/v1/"), None);
        assert_eq!(parse_path("/version/"), None);
    }
}
