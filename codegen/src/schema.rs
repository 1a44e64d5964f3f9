//! The one lowering of a JSON schema into IR types, shared by both inputs:
//! the definitions of the built-in specs ([`crate::ir::lower`]) and a CRD's
//! `openAPIV3Schema` ([`crate::crd`]).
//!
//! Nested objects become structs named by their path (`Certificate` +
//! `spec` + `privateKey` → `CertificateSpecPrivateKey`; array items and map
//! values take the name of their field), in the module of the definition
//! they come from. A name already taken in that module gets the first free
//! numeric suffix (`…2`, `…3`) in the order the schema is walked
//! (properties in byte order, depth first), so the result is deterministic.
//!
//! [`Mode::BuiltIn`] keeps the built-in output as it was: only inline
//! objects (which it used to refuse) are new there. [`Mode::Crd`] adds
//! string enums, untagged `oneOf`/`anyOf`, `date-time` → `Time`, embedded
//! resources, kept unknown fields, scalar defaults and the validation notes,
//! and turns what it cannot express into a [`Warning`] with a
//! `serde_json::Value` fallback instead of an error.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::error::CodegenError;
use crate::ir::{Field, Ty, TypeDef, TypeKind, Variant};
use crate::names;
use crate::spec::{self, AdditionalProperties, Schema};

/// `IntOrString`'s definition name.
pub const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
/// `Time`'s definition name.
pub const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
/// `ObjectMeta`'s definition name.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Which input is lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The built-in specs: strict (unsupported constructs are errors) and
    /// without the CRD-only constructs, so the committed output is stable.
    BuiltIn,
    /// A CRD schema: every construct real CRDs use, warnings instead of errors.
    Crd,
}

/// A construct the generator could not express; the field became a
/// `serde_json::Value`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    /// Where the schema comes from: `CRD certificates.cert-manager.io version v1`.
    pub origin: String,
    /// JSON path of the construct below the kind (`.spec.privateKey`).
    pub path: String,
    /// What could not be expressed.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names come from the CRD: no control or bidirectional characters
        // reach the terminal.
        let text = format!("{} at {}: {}", self.origin, self.path, self.message);
        f.write_str(&names::escape_text(&text))
    }
}

/// Where the types of one definition go.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Definition (or `<group>.<version>.<Kind>`) the schema comes from.
    pub definition: String,
    /// Module segments of its types.
    pub modules: Vec<String>,
    /// Cargo feature of the module.
    pub feature: Option<String>,
    /// Source file recorded in the types.
    pub source: String,
    /// Origin named by warnings.
    pub origin: String,
}

/// How deep schemas may nest (objects, arrays, maps, alternatives):
/// deeper ones are refused with [`CodegenError::SchemaTooDeep`] before any
/// work that grows with the depth. Parsed manifests cannot reach it
/// (their JSON nesting is limited to [`crate::crd::MAX_NESTING`]); it
/// bounds the recursion for schemas built in memory.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// A built-in model an object schema may become instead of a new struct
/// (CRD input, [`crate::crd::reuse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reused {
    /// Its definition name (`io.k8s.api.core.v1.Container`), the key of
    /// its [`TypeKind::Reuse`] in the IR.
    pub definition: String,
    /// Its full Rust path (`kubeset::api::core::v1::Container`).
    pub path: String,
}

/// What decides whether an object schema becomes a built-in model.
pub trait Reuser: std::fmt::Debug {
    /// The built-in model for the object `schema` at `path` (below the
    /// kind of `origin`), if one matches.
    fn reuse(&mut self, schema: &Schema, path: &str, origin: &str) -> Option<Reused>;
    /// Forgets what it remembered of earlier schemas (called when the
    /// scope changes: their memory may be reused).
    fn forget(&mut self);
}

/// Lowers schemas into [`Ty`]s, collecting the nested types it creates.
#[derive(Debug)]
pub struct Lowerer<'a> {
    mode: Mode,
    reuser: Option<&'a mut dyn Reuser>,
    definitions: &'a BTreeMap<String, Schema>,
    scope: Scope,
    taken: BTreeSet<(Vec<String>, String)>,
    /// The next numeric suffix to try per wanted name, so that claiming
    /// many colliding names stays linear.
    next_suffix: BTreeMap<(Vec<String>, String), usize>,
    /// Nesting of the schema being lowered.
    depth: usize,
    /// Nested types created so far, by key (`<definition>#<JSON path>`).
    pub types: BTreeMap<String, TypeDef>,
    /// Warnings so far.
    pub warnings: Vec<Warning>,
}

/// The JSON kind of a `oneOf` alternative, to tell them apart.
fn schema_kind(schema: &Schema) -> &'static str {
    if schema.int_or_string {
        return "any";
    }
    if schema.reference.is_some() || !schema.properties.is_empty() {
        return "object";
    }
    match schema.ty.as_deref() {
        Some("string") => "string",
        Some("boolean") => "boolean",
        Some("integer") => "integer",
        Some("number") => "number",
        Some("array") => "array",
        Some("object") => "object",
        _ => "any",
    }
}

impl<'a> Lowerer<'a> {
    /// A lowerer; `definitions` resolves `$ref`s, `taken` holds the Rust
    /// paths (modules, type name) that already exist.
    pub fn new(
        mode: Mode,
        definitions: &'a BTreeMap<String, Schema>,
        taken: BTreeSet<(Vec<String>, String)>,
    ) -> Self {
        let taken = taken
            .into_iter()
            .map(|(m, name)| (m, names::snake_case(&name)))
            .collect();
        Self {
            mode,
            reuser: None,
            definitions,
            scope: Scope::default(),
            taken,
            next_suffix: BTreeMap::new(),
            depth: 0,
            types: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Sets where the next types go.
    pub fn set_scope(&mut self, scope: Scope) {
        self.scope = scope;
        if let Some(r) = self.reuser.as_deref_mut() {
            r.forget();
        }
    }

    /// Lets `reuser` turn object schemas into built-in models (CRD mode).
    pub fn set_reuser(&mut self, reuser: &'a mut dyn Reuser) {
        self.reuser = Some(reuser);
    }

    /// Claims a type name in the current module: `want`, else the first
    /// free `want2`, `want3`, … (a reserved name such as `String`,
    /// [`names::is_reserved_type`], is never free).
    pub fn claim(&mut self, want: &str) -> String {
        let modules = self.scope.modules.clone();
        let slot = (modules.clone(), want.to_owned());
        let mut n = self.next_suffix.get(&slot).copied().unwrap_or(1);
        loop {
            let name = if n == 1 {
                want.to_owned()
            } else {
                format!("{want}{n}")
            };
            // One file per type: compare the file names.
            if !names::is_reserved_type(&name)
                && self
                    .taken
                    .insert((modules.clone(), names::snake_case(&name)))
            {
                self.next_suffix.insert(slot, n + 1);
                return name;
            }
            n += 1;
        }
    }

    fn unsupported(&mut self, path: &str, reason: &str) -> Result<Ty, CodegenError> {
        match self.mode {
            Mode::BuiltIn => Err(CodegenError::UnsupportedSchema {
                definition: self.scope.definition.clone(),
                property: path.trim_start_matches('.').to_owned(),
                reason: reason.to_owned(),
            }),
            Mode::Crd => {
                self.warnings.push(Warning {
                    origin: self.scope.origin.clone(),
                    path: path.to_owned(),
                    message: format!("{reason}; kept as serde_json::Value"),
                });
                Ok(Ty::Value)
            }
        }
    }

    fn reference(&mut self, schema: &Schema, path: &str) -> Option<Result<Ty, CodegenError>> {
        let reference = schema
            .reference
            .as_deref()
            .or(match schema.all_of.as_slice() {
                [one] => one.reference.as_deref(),
                _ => None,
            })?;
        let unresolved = || CodegenError::UnresolvedRef {
            definition: self.scope.definition.clone(),
            reference: reference.to_owned(),
        };
        let found = spec::ref_name(reference).filter(|n| self.definitions.contains_key(*n));
        Some(match (found, self.mode) {
            (Some(name), _) => Ok(Ty::Ref(name.to_owned())),
            (None, Mode::BuiltIn) => Err(unresolved()),
            (None, Mode::Crd) => self.unsupported(path, &format!("unresolved $ref {reference:?}")),
        })
    }

    /// The type of the value at `path`; nested types are named `name`.
    /// Schemas nested deeper than [`MAX_SCHEMA_DEPTH`] are an error.
    pub fn ty(&mut self, schema: &Schema, path: &str, name: &str) -> Result<Ty, CodegenError> {
        if self.depth >= MAX_SCHEMA_DEPTH {
            return Err(CodegenError::SchemaTooDeep {
                definition: self.scope.definition.clone(),
                path: shorten(path),
                limit: MAX_SCHEMA_DEPTH,
            });
        }
        self.depth += 1;
        let ty = self.ty_at_depth(schema, path, name);
        self.depth -= 1;
        ty
    }

    fn ty_at_depth(&mut self, schema: &Schema, path: &str, name: &str) -> Result<Ty, CodegenError> {
        if let Some(r) = self.reference(schema, path) {
            return r;
        }
        let crd = self.mode == Mode::Crd;
        // An `allOf` of constraints on a typed node (what the derive writes
        // for a second flattened enum: `allOf: [{oneOf: …}]`) narrows the
        // values, not the type; CRDs ignore any `allOf` on a typed node.
        let ignorable = schema.ty.is_some() && (crd || schema.all_of.iter().all(constraints_only));
        if !schema.all_of.is_empty() && !ignorable {
            return self.unsupported(path, "allOf other than a single $ref");
        }
        if schema.int_or_string {
            return Ok(Ty::Ref(INT_OR_STRING.into()));
        }
        if crd && schema.embedded_resource {
            return self.object(schema, path, name);
        }
        let alternatives = if schema.one_of.is_empty() {
            &schema.any_of
        } else {
            &schema.one_of
        };
        if crd && schema.ty.is_none() && schema.properties.is_empty() && !alternatives.is_empty() {
            return self.untagged(alternatives, path, name);
        }
        Ok(match schema.ty.as_deref() {
            Some("string") => match schema.format.as_deref() {
                _ if crd && self.string_enum(schema).is_some() => {
                    return Ok(self.enum_type(schema, path, name));
                }
                Some("byte") => Ty::Bytes,
                Some("date-time") if crd => Ty::Ref(TIME.into()),
                _ => Ty::String,
            },
            Some("boolean") => Ty::Bool,
            Some("integer") => match schema.format.as_deref() {
                Some("int32") => Ty::I32,
                _ => Ty::I64,
            },
            Some("number") => Ty::F64,
            Some("array") => match schema.items.as_deref() {
                Some(items) => Ty::Vec(Box::new(self.ty(items, &format!("{path}[]"), name)?)),
                None if crd => Ty::Vec(Box::new(self.unsupported(path, "array without items")?)),
                None => return self.unsupported(path, "array without items"),
            },
            Some("object") => self.object(schema, path, name)?,
            None if crd && !schema.properties.is_empty() => self.object(schema, path, name)?,
            None => Ty::Value,
            Some(other) => return self.unsupported(path, &format!("type {other:?}")),
        })
    }

    fn object(&mut self, schema: &Schema, path: &str, name: &str) -> Result<Ty, CodegenError> {
        let crd = self.mode == Mode::Crd;
        match &schema.additional_properties {
            Some(AdditionalProperties::Schema(values)) if schema.properties.is_empty() => {
                return Ok(Ty::Map(Box::new(self.ty(
                    values,
                    &format!("{path}{{}}"),
                    name,
                )?)));
            }
            Some(AdditionalProperties::Bool(true)) if crd && schema.properties.is_empty() => {
                return Ok(Ty::Map(Box::new(Ty::Value)));
            }
            _ => {}
        }
        let embedded = crd && schema.embedded_resource;
        if schema.properties.is_empty() && !embedded {
            // Without properties: kept whole (pruned to `{}` by the server
            // unless it preserves unknown fields).
            return Ok(Ty::Value);
        }
        if let Some(reused) = self.reuse(schema, path) {
            return Ok(reused);
        }
        let type_name = self.claim(name);
        let key = format!("{}#{path}", self.scope.definition);
        self.struct_type(schema, path, &type_name, &key, &[])?;
        Ok(Ty::Ref(key))
    }

    /// Lowers an object schema into a struct stored under `key`; `skip`
    /// names properties left out (a kind's `apiVersion` and `kind`).
    pub fn struct_type(
        &mut self,
        schema: &Schema,
        path: &str,
        type_name: &str,
        key: &str,
        skip: &[&str],
    ) -> Result<(), CodegenError> {
        let crd = self.mode == Mode::Crd;
        let defaults = implied_properties(crd, schema, path);
        // The schema's own properties by reference (a CRD may have
        // hundreds of thousands): only the implied ones are new.
        let mut properties: Vec<(&str, &Schema)> = schema
            .properties
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let before = properties.len();
        properties.extend(
            defaults
                .iter()
                .filter(|(k, _)| !schema.properties.contains_key(*k))
                .map(|(k, v)| (*k, v)),
        );
        if properties.len() != before {
            properties.sort_unstable_by_key(|(k, _)| *k);
        }
        let rust_names = rust_field_names(properties.iter().map(|(k, _)| *k));
        let required: BTreeSet<&str> = schema.required.iter().map(String::as_str).collect();
        // Children are named after the type; a reserved name's `_` is
        // not carried into theirs (`Self_` → `SelfSpec`).
        let base = type_name.trim_end_matches('_');
        let mut fields = Vec::with_capacity(properties.len());
        for (json, prop) in properties {
            if skip.contains(&json) {
                continue;
            }
            let child_path = format!("{path}.{json}");
            let child_name = format!("{base}{}", names::upper_camel(json));
            // A kind's and an embedded object's metadata is ObjectMeta.
            let meta = json == "metadata" && (path.is_empty() || schema.embedded_resource);
            let ty = if crd && meta {
                Ty::Ref(OBJECT_META.into())
            } else {
                self.ty(prop, &child_path, &child_name)?
            };
            let required = required.contains(json);
            let default = if crd {
                self.usable_default(prop, &ty)
            } else {
                None
            };
            fields.push(Field {
                json: json.to_owned(),
                rust: rust_names[json].clone(),
                ty,
                required: required && !(crd && prop.nullable),
                boxed: false,
                description: description_of(prop),
                notes: if crd { notes(prop) } else { Vec::new() },
                default,
                list: crate::ir::ListSemantics::of(prop),
                gate: None,
            });
        }
        let unknown_fields = (crd && schema.preserve_unknown_fields).then(|| {
            let taken: BTreeSet<&str> = fields.iter().map(|f| f.rust.as_str()).collect();
            (1..)
                .map(|n| match n {
                    1 => "unknown_fields".to_owned(),
                    n => format!("unknown_fields_{n}"),
                })
                .find(|n| !taken.contains(n.as_str()))
                .unwrap_or_default()
        });
        self.types.insert(
            key.to_owned(),
            TypeDef {
                description: if path.is_empty() {
                    schema.description.clone()
                } else {
                    description_of(schema)
                },
                unknown_fields,
                notes: if crd && !path.is_empty() {
                    notes(schema)
                } else {
                    Vec::new()
                },
                ..self.scoped_type(
                    key.to_owned(),
                    type_name.to_owned(),
                    TypeKind::Struct { fields },
                )
            },
        );
        Ok(())
    }

    /// The string values of an `enum` on a string (a `null` entry of a
    /// nullable enum is dropped), `None` when it has none or a non-string.
    fn string_enum<'s>(&self, schema: &'s Schema) -> Option<Vec<&'s str>> {
        let values: Vec<&str> = schema
            .enum_values
            .iter()
            .filter(|v| !v.is_null())
            .map(Value::as_str)
            .collect::<Option<_>>()?;
        (!values.is_empty()).then_some(values)
    }

    fn enum_type(&mut self, schema: &Schema, path: &str, name: &str) -> Ty {
        let values = self.string_enum(schema).unwrap_or_default();
        let mut used = BTreeSet::new();
        let mut seen = BTreeSet::new();
        // Next suffix per variant base: many values of one base stay linear.
        let mut next: BTreeMap<String, usize> = BTreeMap::new();
        let mut variants = Vec::new();
        for v in values {
            if !seen.insert(v) {
                continue;
            }
            let base = variant_name(v);
            let start = next.get(&base).copied().unwrap_or(1);
            let (n, rust) = (start..)
                .map(|n| match n {
                    1 => (n, base.clone()),
                    n => (n, format!("{base}{n}")),
                })
                .find(|(_, name)| !used.contains(name))
                .unwrap_or_default();
            next.insert(base, n + 1);
            used.insert(rust.clone());
            variants.push(Variant {
                json: v.to_owned(),
                rust,
            });
        }
        let other = (1..)
            .map(|n| match n {
                1 => "Other".to_owned(),
                n => format!("Other{n}"),
            })
            .find(|n| !used.contains(n))
            .unwrap_or_default();
        let type_name = self.claim(name);
        let key = format!("{}#{path}", self.scope.definition);
        self.insert_type(key.clone(), type_name, TypeKind::Enum { variants, other });
        Ty::Ref(key)
    }

    fn untagged(
        &mut self,
        alternatives: &[Schema],
        path: &str,
        name: &str,
    ) -> Result<Ty, CodegenError> {
        // Distinguishable before lowering, so that a refusal leaves no
        // half-made types behind.
        let mut kinds = BTreeSet::new();
        for alt in alternatives {
            let kind = schema_kind(alt);
            if kind == "any" || !kinds.insert(kind) {
                return self.unsupported(
                    path,
                    "oneOf/anyOf alternatives that are not distinguishable by JSON type",
                );
            }
        }
        let mut variants = Vec::new();
        for (i, alt) in alternatives.iter().enumerate() {
            let ty = self.ty(alt, &format!("{path}<{i}>"), &format!("{name}{}", i + 1))?;
            // Named by the JSON kind (distinct, checked above), not by the
            // lowered type: a string enum or a `date-time` lowers to a
            // named type as an object does.
            let variant = match schema_kind(alt) {
                "string" => "String",
                "boolean" => "Bool",
                "integer" => "Int",
                "number" => "Number",
                "array" => "List",
                _ => "Object",
            };
            variants.push((variant.to_owned(), ty));
        }
        let type_name = self.claim(name);
        let key = format!("{}#{path}", self.scope.definition);
        self.insert_type(key.clone(), type_name, TypeKind::Untagged { variants });
        Ok(Ty::Ref(key))
    }

    /// The built-in model for an object schema, when the reuser finds one
    /// (CRD mode): a [`TypeKind::Reuse`] under its definition name.
    fn reuse(&mut self, schema: &Schema, path: &str) -> Option<Ty> {
        if self.mode != Mode::Crd {
            return None;
        }
        let reused = self
            .reuser
            .as_deref_mut()?
            .reuse(schema, path, &self.scope.origin)?;
        let name = reused
            .path
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        self.types
            .entry(reused.definition.clone())
            .or_insert_with(|| {
                let kind = TypeKind::Reuse { path: reused.path };
                TypeDef::new(reused.definition.clone(), name, kind)
            });
        Some(Ty::Ref(reused.definition))
    }

    fn insert_type(&mut self, key: String, name: String, kind: TypeKind) {
        let t = self.scoped_type(key.clone(), name, kind);
        self.types.insert(key, t);
    }

    /// A type lowered from a schema nested in the scope's definition: in
    /// its module, behind its feature, from its source file.
    fn scoped_type(&self, key: String, name: String, kind: TypeKind) -> TypeDef {
        TypeDef {
            modules: self.scope.modules.clone(),
            feature: self.scope.feature.clone(),
            source: self.scope.source.clone(),
            inline_of: Some(self.scope.definition.clone()),
            ..TypeDef::new(key, name, kind)
        }
    }

    /// The `default` of a field when it fits the field's Rust type.
    fn usable_default(&self, schema: &Schema, ty: &Ty) -> Option<Value> {
        let d = schema.default.as_ref()?;
        let fits = match ty {
            Ty::String => d.is_string(),
            Ty::Bool => d.is_boolean(),
            Ty::I32 => d.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
            Ty::I64 => d.is_i64(),
            Ty::F64 => d.is_number(),
            Ty::Ref(key) => {
                d.is_string()
                    && matches!(
                        self.types.get(key).map(|t| &t.kind),
                        Some(TypeKind::Enum { .. })
                    )
            }
            _ => false,
        };
        fits.then(|| d.clone())
    }
}

/// Properties a schema has without listing them (CRD input): a kind's
/// `metadata` (at the root, `path` empty), an embedded resource's
/// `apiVersion`, `kind` and `metadata`.
fn implied_properties(crd: bool, schema: &Schema, path: &str) -> Vec<(&'static str, Schema)> {
    let typed = |ty: &str| Schema {
        ty: Some(ty.into()),
        ..Schema::default()
    };
    let mut out = Vec::new();
    if crd && path.is_empty() && !schema.embedded_resource {
        out.push(("metadata", typed("object")));
    }
    if crd && schema.embedded_resource {
        out.push(("apiVersion", typed("string")));
        out.push(("kind", typed("string")));
        out.push((
            "metadata",
            Schema {
                reference: Some(format!("#/components/schemas/{OBJECT_META}")),
                ..Schema::default()
            },
        ));
    }
    out
}

/// A JSON path for an error message: at most 200 bytes, the end kept.
fn shorten(path: &str) -> String {
    const MAX: usize = 200;
    if path.len() <= MAX {
        return path.to_owned();
    }
    let mut start = path.len() - MAX;
    while !path.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &path[start..])
}

/// Rust field names for JSON property names: [`names::field_name`], and
/// when two collide (`mirrorPercent`, `mirror_percent`) the one already
/// spelled that way keeps it, else the first in byte order; the others get
/// `_2`, `_3`, … in byte order.
pub fn rust_field_names<'n>(json: impl Iterator<Item = &'n str>) -> BTreeMap<&'n str, String> {
    let mut sorted: Vec<&str> = json.collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut by_rust: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for j in &sorted {
        by_rust.entry(names::field_name(j)).or_default().push(j);
    }
    let mut taken: BTreeSet<String> = by_rust.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (rust, mut group) in by_rust {
        if let Some(exact) = group.iter().position(|j| *j == rust) {
            let j = group.remove(exact);
            group.insert(0, j);
        }
        out.insert(group[0], rust.clone());
        // One counter for the whole group: linear however many collide.
        let mut n = 2;
        for j in &group[1..] {
            let renamed = loop {
                // `self_` → `self_2`, not `self__2` (`non_snake_case`).
                let candidate = if rust.ends_with('_') {
                    format!("{rust}{n}")
                } else {
                    format!("{rust}_{n}")
                };
                n += 1;
                if !taken.contains(&candidate) {
                    break candidate;
                }
            };
            taken.insert(renamed.clone());
            out.insert(*j, renamed);
        }
    }
    out
}

/// A Rust variant name for an enum value: `PathPrefix` stays,
/// `RSA` → `Rsa`, `HTTP/1.1` → `Http11`, `""` → `Empty`, `3DES` → `V3Des`.
pub fn variant_name(value: &str) -> String {
    let mut out = String::new();
    for word in value.split(|c: char| !c.is_ascii_alphanumeric()) {
        out.push_str(&names::upper_camel(&names::snake_case(word)));
    }
    if out.is_empty() {
        return if value.is_empty() {
            "Empty".into()
        } else {
            "Symbol".into()
        };
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    if out == "Self" {
        out.push('_');
    }
    out
}

/// Whether `schema` only constrains values (`oneOf`/`anyOf`/`required`,
/// `enum`, validations) and says nothing of their type.
fn constraints_only(schema: &Schema) -> bool {
    schema.reference.is_none()
        && schema.ty.is_none()
        && schema.properties.is_empty()
        && schema.items.is_none()
        && schema.additional_properties.is_none()
        && !schema.int_or_string
        && !schema.preserve_unknown_fields
        && schema.all_of.iter().all(constraints_only)
        && schema
            .one_of
            .iter()
            .chain(&schema.any_of)
            .all(constraints_only)
}

/// The description of a schema, or of its single `allOf`.
pub fn description_of(schema: &Schema) -> Option<String> {
    schema
        .description
        .clone()
        .or_else(|| schema.all_of.first().and_then(|s| s.description.clone()))
}

fn number(n: &serde_json::Number) -> String {
    n.to_string()
}

/// Validation and shape notes for the doc comment of a field (CRD input).
pub fn notes(schema: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &schema.default {
        out.push(format!("Default: `{d}`."));
    }
    if schema.nullable {
        out.push("Nullable: `null` is a valid value.".into());
    }
    let typed_formats = ["int32", "int64", "date-time", "byte", "double"];
    if let Some(f) = schema
        .format
        .as_ref()
        .filter(|f| !typed_formats.contains(&f.as_str()))
    {
        out.push(format!("Format: `{f}`."));
    }
    if !schema.enum_values.is_empty() {
        let values: Vec<String> = schema
            .enum_values
            .iter()
            .map(|v| format!("`{v}`"))
            .collect();
        out.push(format!("Allowed values: {}.", values.join(", ")));
    }
    if let Some(p) = &schema.pattern {
        out.push(format!("Pattern: `{p}`."));
    }
    let bounds = [
        ("Minimum length", schema.min_length),
        ("Maximum length", schema.max_length),
        ("Minimum items", schema.min_items),
        ("Maximum items", schema.max_items),
        ("Minimum properties", schema.min_properties),
        ("Maximum properties", schema.max_properties),
    ];
    for (what, v) in bounds {
        if let Some(v) = v {
            out.push(format!("{what}: {v}."));
        }
    }
    if let Some(m) = &schema.minimum {
        let op = if schema.exclusive_minimum { ">" } else { ">=" };
        out.push(format!("Value {op} {}.", number(m)));
    }
    if let Some(m) = &schema.maximum {
        let op = if schema.exclusive_maximum { "<" } else { "<=" };
        out.push(format!("Value {op} {}.", number(m)));
    }
    match schema.list_type.as_deref() {
        Some("map") => out.push(format!(
            "List type `map`, keyed by {}.",
            schema
                .list_map_keys
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(t) => out.push(format!("List type `{t}`.")),
        None => {}
    }
    if let Some(t) = &schema.map_type {
        out.push(format!("Map type `{t}`."));
    }
    for (word, alternatives) in [
        ("Exactly one", &schema.one_of),
        ("At least one", &schema.any_of),
    ] {
        let sets: Vec<String> = alternatives
            .iter()
            .filter(|a| !a.required.is_empty())
            .map(|a| {
                a.required
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
            .collect();
        if !sets.is_empty() && (schema.ty.is_some() || !schema.properties.is_empty()) {
            out.push(format!("{word} of: {}.", sets.join(", ")));
        }
    }
    for rule in &schema.validations {
        let mut line = format!("Validation: `{}`", rule.rule.trim());
        if let Some(m) = rule
            .message
            .as_deref()
            .or(rule.message_expression.as_deref())
        {
            line.push_str(&format!(" ({})", m.trim()));
        }
        line.push('.');
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_collisions_rename_deterministically() {
        let names = rust_field_names(["mirror_percent", "mirrorPercent", "type", "a"].into_iter());
        assert_eq!(names["mirror_percent"], "mirror_percent");
        assert_eq!(names["mirrorPercent"], "mirror_percent_2");
        assert_eq!(names["type"], "type_");
        // Without an exact spelling, the first in byte order keeps the name.
        let names = rust_field_names(["fooBar", "foo-bar"].into_iter());
        assert_eq!(names["foo-bar"], "foo_bar");
        assert_eq!(names["fooBar"], "foo_bar_2");
        // A suffix already in use is skipped.
        let names = rust_field_names(["xY", "x_y", "x_y_2"].into_iter());
        assert_eq!(names["xY"], "x_y_3");
    }

    #[test]
    fn built_in_mode_ignores_an_all_of_of_constraints_only() {
        let schema: Schema = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
            "allOf": [{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}]
        }))
        .unwrap();
        let definitions = BTreeMap::new();
        let mut l = Lowerer::new(Mode::BuiltIn, &definitions, BTreeSet::new());
        assert!(matches!(l.ty(&schema, ".spec", "Spec"), Ok(Ty::Ref(_))));
        let typed: Schema = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "allOf": [{"properties": {"c": {"type": "integer"}}}]
        }))
        .unwrap();
        assert!(
            l.ty(&typed, ".other", "Other").is_err(),
            "an allOf that adds properties is still refused"
        );
    }

    #[test]
    fn enum_values_make_variant_names() {
        for (value, want) in [
            ("PathPrefix", "PathPrefix"),
            ("RSA", "Rsa"),
            ("HTTP/1.1", "Http11"),
            ("", "Empty"),
            ("3DES", "V3Des"),
            ("digital signature", "DigitalSignature"),
            ("*", "Symbol"),
            ("Self", "Self_"),
        ] {
            assert_eq!(variant_name(value), want, "{value:?}");
        }
    }

    fn object(props: &[(&str, Schema)]) -> Schema {
        Schema {
            ty: Some("object".into()),
            properties: props
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            ..Schema::default()
        }
    }

    fn string() -> Schema {
        Schema {
            ty: Some("string".into()),
            ..Schema::default()
        }
    }

    #[test]
    fn nested_objects_are_named_by_path_and_collisions_get_suffixes() {
        let defs = BTreeMap::new();
        let mut l = Lowerer::new(Mode::BuiltIn, &defs, BTreeSet::new());
        l.set_scope(Scope {
            definition: "d".into(),
            modules: vec!["m".into()],
            ..Scope::default()
        });
        let schema = object(&[
            ("foo", object(&[("bar", object(&[("y", string())]))])),
            ("fooBar", object(&[("x", string())])),
        ]);
        let ty = l.ty(&schema, ".spec", "KindSpec").expect("lowers");
        assert_eq!(ty, Ty::Ref("d#.spec".into()));
        let names: BTreeMap<&str, &str> = l
            .types
            .iter()
            .map(|(k, t)| (k.as_str(), t.name.as_str()))
            .collect();
        assert_eq!(names["d#.spec"], "KindSpec");
        assert_eq!(names["d#.spec.foo"], "KindSpecFoo");
        assert_eq!(names["d#.spec.foo.bar"], "KindSpecFooBar");
        assert_eq!(names["d#.spec.fooBar"], "KindSpecFooBar2");
        // The built-in mode keeps enums as strings and refuses what it cannot express.
        let e = Schema {
            enum_values: vec!["A".into()],
            ..string()
        };
        assert_eq!(l.ty(&e, ".e", "E").expect("lowers"), Ty::String);
        let bad = Schema {
            ty: Some("array".into()),
            ..Schema::default()
        };
        assert!(matches!(
            l.ty(&bad, ".bad", "Bad"),
            Err(CodegenError::UnsupportedSchema { .. })
        ));
    }

    #[test]
    fn crd_mode_warns_and_falls_back_instead_of_failing() {
        let defs = BTreeMap::new();
        let mut l = Lowerer::new(Mode::Crd, &defs, BTreeSet::new());
        l.set_scope(Scope {
            definition: "d".into(),
            modules: vec!["m".into()],
            origin: "CRD x version v1".into(),
            ..Scope::default()
        });
        let bad = Schema {
            ty: Some("tuple".into()),
            ..Schema::default()
        };
        assert_eq!(l.ty(&bad, ".spec.t", "T").expect("falls back"), Ty::Value);
        assert_eq!(
            l.warnings[0].to_string(),
            "CRD x version v1 at .spec.t: type \"tuple\"; kept as serde_json::Value"
        );
        let time = Schema {
            format: Some("date-time".into()),
            ..string()
        };
        assert_eq!(
            l.ty(&time, ".t", "T").expect("lowers"),
            Ty::Ref(TIME.into())
        );
    }
}
