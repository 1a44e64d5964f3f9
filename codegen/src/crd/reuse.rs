//! Built-in models for CRD schemas that match them: a CRD's pod template,
//! containers, volumes, affinity, tolerations … become
//! `kubeset::api::core::v1::…` instead of generated copies.
//!
//! # The rule
//!
//! A CRD object schema `S` (one with properties) is matched against each
//! built-in struct `B` of the catalogue ([`Builtins`]: the lowered
//! Kubernetes spec, the facade's default group-versions, kinds left out).
//! `S` may use `B` when `B` deserializes every object valid for `S` and
//! writes it back with the same content:
//!
//! - every property of `S` is a field of `B` (a CRD generator may drop
//!   fields of newer Kubernetes versions, never add its own), with a
//!   compatible type, recursively: the same JSON type (an `int32` field
//!   needs `format: int32`; a `number` takes integers; `byte` needs
//!   `format: byte`, `Time` needs `format: date-time`), arrays by their
//!   items, maps by their values, `IntOrString` only for
//!   `x-kubernetes-int-or-string`, `Quantity` for that or a string, a
//!   `serde_json::Value` or `RawExtension` for anything;
//! - every field `B` requires is required (and not nullable) in `S`;
//! - `S` keeps no unknown fields (`x-kubernetes-preserve-unknown-fields`),
//!   is no embedded resource and has no `additionalProperties` where `B`
//!   has a struct (the struct would drop them);
//! - list types and map keys agree where both sides give them;
//! - an object without properties is pruned to `{}` by the server: any
//!   struct without required fields holds that.
//!
//! Descriptions, validations and defaults do not take part. `S` must
//! have at least half of a struct's fields. Of the matching structs, the
//! ones the property name names best win (`tolerations` → `Toleration`
//! before `securityContext` → `PodSecurityContext` or `resources` →
//! `ResourceRequirements`, before an unrelated name, which must then
//! match exactly: the same fields), then the one with the fewest fields
//! beyond `S`'s; a tie between two is no match (`NodeSelectorRequirement`
//! and `LabelSelectorRequirement` are the same shape: the parent decides).
//!
//! A struct named after a built-in kind (its name is the kind's and more:
//! `CustomResourceDefinitionCondition`, `PersistentVolumeClaimCondition`,
//! `PodCondition`, `HorizontalPodAutoscalerBehavior`) belongs to that
//! kind: it is used by a shape alone, or by a name it merely ends with,
//! only where the node's JSON path names the kind
//! (`….horizontalPodAutoscalerConfig.behavior`). So cert-manager's and
//! KEDA's `.status.conditions[]`, whose `lastTransitionTime` is optional
//! (no meta/v1 `Condition`), get a type of their own instead of another
//! kind's condition. What a template holds (`PodTemplateSpec`,
//! `PersistentVolumeClaimTemplate`: `PodSecurityContext`, `PodDNSConfig`)
//! is made to be embedded and is not held back, nor is a struct the
//! property names exactly (`conditions` → `Condition`).
//! The walk is top-down: a matched node's children are not visited.
//!
//! What does not match is reported when it was close ([`NearMiss`]: a
//! node of four or more properties of which at least 80 % are fields of
//! one built-in struct): the property not in the built-in type or the
//! conflicting types, so that a user sees why `kubeset::api` was not used.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::error::CodegenError;
use crate::ir::{Ir, Ty, TypeKind};
use crate::schema::{INT_OR_STRING, Reused, Reuser, TIME};
use crate::spec::{AdditionalProperties, Schema};

/// The facade's default group-versions (`kubeset`'s `api-default`): the
/// built-in models a user crate has without turning features on. The
/// facade's `api-default` is generated from the model crate's default
/// features, so this is that list ([`crate::emit::DEFAULT_FEATURES`]).
pub const DEFAULT_FEATURES: &[&str] = crate::emit::DEFAULT_FEATURES;

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";

/// A node reported as close to a built-in type without matching it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NearMiss {
    /// Where the schema comes from: `CRD x version v1`.
    pub origin: String,
    /// JSON path of the node.
    pub path: String,
    /// The built-in type, a full Rust path.
    pub builtin: String,
    /// How many of the node's properties are fields of the built-in type.
    pub matching: usize,
    /// How many properties the node has.
    pub properties: usize,
    /// Why it does not match.
    pub reasons: Vec<String>,
}

impl std::fmt::Display for NearMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = format!(
            "{} at {}: near {} ({} of {} properties are its fields), not used: {}",
            self.origin,
            self.path,
            self.builtin,
            self.matching,
            self.properties,
            self.reasons.join("; ")
        );
        f.write_str(&crate::names::escape_text(&text))
    }
}

/// One built-in struct a CRD node may become.
#[derive(Debug)]
struct Candidate {
    definition: String,
    path: String,
    /// The type name, lowercase.
    name: String,
    fields: BTreeSet<String>,
    /// The built-in kind the type is named after (lowercase; the longest
    /// kind name its name starts with: `persistentvolumeclaim` for
    /// `PersistentVolumeClaimCondition`), unless a template holds it
    /// (`PodSecurityContext` is part of every `PodTemplateSpec`).
    owner: Option<String>,
}

/// The built-in models a CRD schema may reuse: the lowered Kubernetes
/// spec (for the fields' Rust types) and its schemas (for the list hints).
#[derive(Debug)]
pub struct Builtins {
    ir: Ir,
    schemas: BTreeMap<String, Schema>,
    candidates: Vec<Candidate>,
    /// The most fields a candidate has: a node with more properties
    /// matches nothing (checked first, so that a hostile node of many
    /// properties costs nothing).
    max_fields: usize,
}

impl Builtins {
    /// The catalogue of a release directory of the spec root
    /// (`<specs>/kubernetes/v1.35`, as `cargo xtask codegen` reads it):
    /// the structs of `features` (and of apimachinery), kinds left out.
    pub fn from_spec_dir(dir: &Path, features: &[&str]) -> Result<Self, CodegenError> {
        let input = crate::load(dir, crate::InputFormat::Both)?;
        let schemas = input.definitions.clone();
        let ir = crate::ir::lower(input)?;
        Ok(Self::new(ir, schemas, features))
    }

    /// The catalogue of a lowered spec and the schemas it was lowered from.
    pub fn new(ir: Ir, schemas: BTreeMap<String, Schema>, features: &[&str]) -> Self {
        let in_templates = in_templates(&ir);
        let kinds: BTreeSet<&str> = ir
            .types
            .values()
            .filter(|t| t.gvk.is_some() && t.resource.is_some())
            .map(|t| t.name.as_str())
            .collect();
        let candidates = ir
            .types
            .iter()
            .filter(|(_, t)| t.gvk.is_none() && t.resource.is_none())
            .filter(|(_, t)| t.feature.as_deref().is_none_or(|f| features.contains(&f)))
            .filter_map(|(definition, t)| {
                let TypeKind::Struct { fields } = &t.kind else {
                    return None;
                };
                (!fields.is_empty()).then(|| Candidate {
                    definition: definition.clone(),
                    path: format!("kubeset::{}::{}", t.modules.join("::"), t.name),
                    name: t.name.to_ascii_lowercase(),
                    fields: fields.iter().map(|f| f.json.clone()).collect(),
                    owner: (!in_templates.contains(definition.as_str()))
                        .then(|| named_after(&t.name, &kinds))
                        .flatten(),
                })
            })
            .collect::<Vec<Candidate>>();
        let max_fields = candidates.iter().map(|c| c.fields.len()).max().unwrap_or(0);
        Self {
            ir,
            schemas,
            candidates,
            max_fields,
        }
    }

    /// How many built-in structs a CRD node may become.
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    /// Whether the catalogue is empty.
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }
}

/// How well a candidate fits a node: the name tier, then fewer extra fields.
type Score = (usize, std::cmp::Reverse<usize>);

/// The matcher one lowering uses: the catalogue, a memo of the checks
/// made (by schema node and definition) and the near misses found.
#[derive(Debug)]
pub struct Matcher<'b> {
    builtins: &'b Builtins,
    memo: HashMap<(usize, String), bool>,
    /// Near misses so far.
    pub near_misses: Vec<NearMiss>,
    /// Nodes reused so far: (origin, path, Rust path).
    pub reused: Vec<(String, String, String)>,
}

impl<'b> Matcher<'b> {
    /// A matcher over `builtins`.
    pub fn new(builtins: &'b Builtins) -> Self {
        Self {
            builtins,
            memo: HashMap::new(),
            near_misses: Vec::new(),
            reused: Vec::new(),
        }
    }

    fn struct_fits(&mut self, s: &Schema, definition: &str, depth: usize) -> Result<(), String> {
        let key = (std::ptr::from_ref(s) as usize, definition.to_owned());
        if let Some(&ok) = self.memo.get(&key) {
            return if ok {
                Ok(())
            } else {
                Err(format!("not a {}", short(definition)))
            };
        }
        let result = self.struct_fits_uncached(s, definition, depth);
        self.memo.insert(key, result.is_ok());
        result
    }

    fn struct_fits_uncached(
        &mut self,
        s: &Schema,
        definition: &str,
        depth: usize,
    ) -> Result<(), String> {
        let builtins = self.builtins;
        let Some(TypeKind::Struct { fields }) = builtins.ir.types.get(definition).map(|t| &t.kind)
        else {
            return Err(format!("{} is no struct", short(definition)));
        };
        if s.preserve_unknown_fields || s.embedded_resource {
            return Err("keeps unknown fields".into());
        }
        if s.additional_properties.is_some() {
            return Err("has additionalProperties".into());
        }
        if !is_object(s) {
            return Err(format!("{} is an object", short(definition)));
        }
        let required: BTreeSet<&str> = s.required.iter().map(String::as_str).collect();
        for f in fields.iter().filter(|f| f.required) {
            let nullable = s.properties.get(&f.json).is_some_and(|p| p.nullable);
            if !required.contains(f.json.as_str()) || nullable {
                return Err(format!("`{}` is required by {}", f.json, short(definition)));
            }
        }
        let hints = builtins.schemas.get(definition);
        for (name, prop) in &s.properties {
            let Some(field) = fields.iter().find(|f| &f.json == name) else {
                return Err(format!("`{name}` is not a field of {}", short(definition)));
            };
            if let Some(hint) = hints.and_then(|h| h.properties.get(name)) {
                lists_agree(prop, hint).map_err(|e| format!("`{name}`: {e}"))?;
            }
            self.fits(prop, &field.ty, depth + 1)
                .map_err(|e| format!("`{name}`: {e}"))?;
        }
        Ok(())
    }

    /// Whether every value valid for `s` deserializes into `ty` (a field
    /// type of the built-in IR) and is written back the same.
    fn fits(&mut self, s: &Schema, ty: &Ty, depth: usize) -> Result<(), String> {
        if depth > crate::schema::MAX_SCHEMA_DEPTH {
            return Err("nested too deep".into());
        }
        if matches!(ty, Ty::Value) {
            return Ok(());
        }
        if s.int_or_string {
            return match ty {
                Ty::Ref(d) if d == INT_OR_STRING || d == QUANTITY || d == RAW_EXTENSION => Ok(()),
                _ => Err("int-or-string".into()),
            };
        }
        if s.reference.is_some() || !s.all_of.is_empty() {
            return Err("a $ref or allOf".into());
        }
        if s.ty.is_none() && s.properties.is_empty() {
            // Anything (or alternatives): only an untyped built-in holds it.
            return match ty {
                Ty::Ref(d) if d == RAW_EXTENSION => Ok(()),
                _ => Err("untyped".into()),
            };
        }
        let json = s.ty.as_deref().unwrap_or("object");
        let format = s.format.as_deref();
        let ok = match ty {
            Ty::String => json == "string",
            Ty::Bool => json == "boolean",
            Ty::I32 => json == "integer" && format == Some("int32"),
            Ty::I64 => json == "integer",
            Ty::F64 => json == "number" || json == "integer",
            Ty::Bytes => json == "string" && format == Some("byte"),
            Ty::Value => true,
            Ty::Vec(items) => {
                return match (json, s.items.as_deref()) {
                    ("array", Some(i)) => self.fits(i, items, depth + 1),
                    _ => Err("not an array with items".into()),
                };
            }
            Ty::Map(values) => return self.map_fits(s, values, depth),
            Ty::Ref(d) => return self.ref_fits(s, d, depth),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{json}{} where the built-in type is {}",
                format.map(|f| format!(" ({f})")).unwrap_or_default(),
                ty_name(ty)
            ))
        }
    }

    fn map_fits(&mut self, s: &Schema, values: &Ty, depth: usize) -> Result<(), String> {
        if !is_object(s) || !s.properties.is_empty() || s.preserve_unknown_fields {
            return Err("not a map".into());
        }
        match &s.additional_properties {
            Some(AdditionalProperties::Schema(v)) => self.fits(v, values, depth + 1),
            Some(AdditionalProperties::Bool(true)) => self.fits(&Schema::default(), values, depth),
            // Pruned to `{}`.
            _ => Ok(()),
        }
    }

    fn ref_fits(&mut self, s: &Schema, definition: &str, depth: usize) -> Result<(), String> {
        let json = s.ty.as_deref().unwrap_or("object");
        let date_time = json == "string" && s.format.as_deref() == Some("date-time");
        match definition {
            RAW_EXTENSION => return Ok(()),
            QUANTITY if json == "string" => return Ok(()),
            TIME | MICRO_TIME if date_time => return Ok(()),
            FIELDS_V1 if is_object(s) => return Ok(()),
            _ => {}
        }
        match self.builtins.ir.types.get(definition).map(|t| &t.kind) {
            Some(TypeKind::Struct { .. }) => {}
            Some(TypeKind::Opaque) if is_object(s) => return Ok(()),
            _ => return Err(format!("not a {}", short(definition))),
        }
        if is_object(s)
            && s.properties.is_empty()
            && s.additional_properties.is_none()
            && !s.preserve_unknown_fields
        {
            // Pruned to `{}`: fine when the struct requires nothing.
            let requires = matches!(
                self.builtins.ir.types.get(definition).map(|t| &t.kind),
                Some(TypeKind::Struct { fields }) if fields.iter().any(|f| f.required)
            );
            return if requires {
                Err(format!("{} requires fields", short(definition)))
            } else {
                Ok(())
            };
        }
        self.struct_fits(s, definition, depth)
    }

    /// The built-in struct for the object node `s` at `path`, when one
    /// matches (module docs); a close miss is recorded.
    fn find(&mut self, s: &Schema, path: &str, origin: &str) -> Option<(String, String)> {
        if s.properties.is_empty() || s.preserve_unknown_fields || s.embedded_resource {
            return None;
        }
        let builtins = self.builtins;
        if s.properties.len() > builtins.max_fields {
            return None;
        }
        let wanted: Vec<&str> = s.properties.keys().map(String::as_str).collect();
        let segment = last_segment(path);
        let context = path.to_ascii_lowercase();
        // (name tier, fewest extra fields) → the candidates there.
        let mut best: Option<(Score, Vec<&Candidate>)> = None;
        for c in &builtins.candidates {
            if c.fields.len() > wanted.len() * 2 || !wanted.iter().all(|w| c.fields.contains(*w)) {
                continue;
            }
            let extra = c.fields.len() - wanted.len();
            let tier = name_tier(&segment, &c.name);
            if (tier == 0 && extra > 0) || (tier < 2 && !owner_named(c, &context)) {
                continue;
            }
            let score = (tier, std::cmp::Reverse(extra));
            if best.as_ref().is_some_and(|(b, _)| *b > score) {
                continue;
            }
            if self.struct_fits(s, &c.definition, 0).is_err() {
                continue;
            }
            match &mut best {
                Some((b, list)) if *b == score => list.push(c),
                _ => best = Some((score, vec![c])),
            }
        }
        if let Some((_, list)) = best {
            if let [one] = list.as_slice() {
                self.reused
                    .push((origin.to_owned(), path.to_owned(), one.path.clone()));
                return Some((one.definition.clone(), one.path.clone()));
            }
            return None;
        }
        self.near_miss(s, path, origin);
        None
    }

    /// Records the closest built-in struct when at least 80 % of the
    /// node's (four or more) properties are its fields.
    fn near_miss(&mut self, s: &Schema, path: &str, origin: &str) {
        let n = s.properties.len();
        if n < 4 {
            return;
        }
        let builtins = self.builtins;
        let closest = builtins
            .candidates
            .iter()
            .map(|c| {
                let common = s
                    .properties
                    .keys()
                    .filter(|k| c.fields.contains(*k))
                    .count();
                (common, std::cmp::Reverse(c.fields.len()), c)
            })
            .filter(|(common, _, c)| common * 5 >= n * 4 && c.fields.len() <= n * 2)
            .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.path.cmp(&a.2.path)));
        let Some((common, _, c)) = closest else {
            return;
        };
        let mut reasons = Vec::new();
        let extra: Vec<&str> = s
            .properties
            .keys()
            .filter(|k| !c.fields.contains(*k))
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            reasons.push(format!("not its fields: {}", extra.join(", ")));
        }
        if let (true, Err(e)) = (
            extra.is_empty(),
            self.struct_fits_uncached(s, &c.definition, 0),
        ) {
            reasons.push(e);
        }
        // One reason per conflicting common property, at most 8.
        if let Some(TypeKind::Struct { fields }) =
            builtins.ir.types.get(&c.definition).map(|t| &t.kind)
        {
            for (name, prop) in &s.properties {
                if reasons.len() >= 8 {
                    break;
                }
                if let Some(f) = fields.iter().find(|f| &f.json == name)
                    && let Err(e) = self.fits(prop, &f.ty, 1)
                {
                    reasons.push(format!("`{name}`: {e}"));
                }
            }
        }
        reasons.dedup();
        if reasons.is_empty() {
            reasons.push("another built-in type matches as well (ambiguous)".into());
        }
        self.near_misses.push(NearMiss {
            origin: origin.to_owned(),
            path: path.to_owned(),
            builtin: c.path.clone(),
            matching: common,
            properties: n,
            reasons,
        });
    }
}

impl Reuser for Matcher<'_> {
    fn reuse(&mut self, schema: &Schema, path: &str, origin: &str) -> Option<Reused> {
        let (definition, path) = self.find(schema, path, origin)?;
        Some(Reused { definition, path })
    }

    fn forget(&mut self) {
        // The schemas of the next version are other allocations.
        self.memo.clear();
    }
}

/// The types a template holds (`PodTemplateSpec`,
/// `PersistentVolumeClaimTemplate`: a non-kind struct named `…Template` or
/// `…TemplateSpec`), following every reference.
fn in_templates(ir: &Ir) -> BTreeSet<&str> {
    let mut stack: Vec<&str> = ir
        .types
        .values()
        .filter(|t| {
            t.gvk.is_none() && (t.name.ends_with("Template") || t.name.ends_with("TemplateSpec"))
        })
        .map(|t| t.definition.as_str())
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        if let Some(TypeKind::Struct { fields }) = ir.types.get(d).map(|t| &t.kind) {
            for f in fields {
                push_refs(&f.ty, &mut stack);
            }
        }
    }
    seen
}

/// The longest of `kinds` that `name` starts with and is longer than,
/// lowercase.
fn named_after(name: &str, kinds: &BTreeSet<&str>) -> Option<String> {
    kinds
        .iter()
        .filter(|k| name.len() > k.len() && name.starts_with(**k))
        .max_by_key(|k| k.len())
        .map(|k| k.to_ascii_lowercase())
}

fn push_refs<'a>(ty: &'a Ty, stack: &mut Vec<&'a str>) {
    match ty {
        Ty::Vec(inner) | Ty::Map(inner) => push_refs(inner, stack),
        Ty::Ref(d) => stack.push(d),
        _ => {}
    }
}

/// Whether a candidate named after a kind (`owner`) may serve at a node
/// whose lowercase JSON path is `context`: only when the path names the
/// kind (KEDA's `.spec.advanced.horizontalPodAutoscalerConfig.behavior`
/// may be `HorizontalPodAutoscalerBehavior`; cert-manager's
/// `.status.conditions[]` may not be `CustomResourceDefinitionCondition`).
fn owner_named(c: &Candidate, context: &str) -> bool {
    c.owner.as_deref().is_none_or(|kind| context.contains(kind))
}

fn is_object(s: &Schema) -> bool {
    match s.ty.as_deref() {
        Some("object") => true,
        None => !s.properties.is_empty(),
        _ => false,
    }
}

/// `x-kubernetes-list-type` and `-list-map-keys` agree where both give them.
fn lists_agree(crd: &Schema, builtin: &Schema) -> Result<(), String> {
    if let (Some(a), Some(b)) = (&crd.list_type, &builtin.list_type)
        && a != b
    {
        return Err(format!("list type {a} where the built-in type has {b}"));
    }
    if !crd.list_map_keys.is_empty()
        && !builtin.list_map_keys.is_empty()
        && crd.list_map_keys != builtin.list_map_keys
    {
        return Err("other list map keys".into());
    }
    Ok(())
}

/// The property a node is the value of, lowercase, without the array
/// and map marks: `.spec.template.spec.containers[]` → `containers`.
fn last_segment(path: &str) -> String {
    let trimmed = path.trim_end_matches(['[', ']', '{', '}']);
    trimmed
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Property names too general to name a type (`spec` would name
/// `ReplicationControllerSpec`).
const GENERAL_NAMES: &[&str] = &["spec", "status", "config", "data", "item", "items", "value"];

/// How well a property name names a type: 2 when they are the same (a
/// plural `s` aside: `tolerations`, `Toleration`), 1 when one starts or
/// ends with the other, three letters or more (`securityContext`,
/// `PodSecurityContext`; `resources`, `ResourceRequirements`;
/// `livenessProbe`, `Probe`), else 0 (also for [`GENERAL_NAMES`]).
fn name_tier(segment: &str, type_name: &str) -> usize {
    let singular = segment.strip_suffix('s').unwrap_or(segment);
    if segment.is_empty() || GENERAL_NAMES.contains(&segment) {
        return 0;
    }
    if segment == type_name || singular == type_name {
        return 2;
    }
    let related = |a: &str, b: &str| a.len() >= 3 && (b.starts_with(a) || b.ends_with(a));
    if related(segment, type_name) || related(singular, type_name) || related(type_name, segment) {
        return 1;
    }
    0
}

fn short(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

fn ty_name(ty: &Ty) -> String {
    match ty {
        Ty::String => "string".into(),
        Ty::Bool => "boolean".into(),
        Ty::I32 => "int32".into(),
        Ty::I64 => "int64".into(),
        Ty::F64 => "number".into(),
        Ty::Bytes => "bytes".into(),
        Ty::Value => "any".into(),
        Ty::Vec(_) => "an array".into(),
        Ty::Map(_) => "a map".into(),
        Ty::Ref(d) => short(d).to_owned(),
    }
}
