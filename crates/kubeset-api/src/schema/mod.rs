//! OpenAPI v3 **structural** schemas from Rust types, for the schemas of
//! CustomResourceDefinitions.
//!
//! [`JsonSchema`] gives a type's schema as the [`JSONSchemaProps`] model the
//! API server reads; `#[derive(JsonSchema)]` (crate `kubeset-derive`,
//! re-exported by `kubeset`) writes it from a struct or enum and its serde
//! attributes. The output follows the API server's structural-schema rules
//! (every node typed, `properties` and `additionalProperties` never
//! together, `oneOf`/`anyOf` branches carrying only `required` and
//! discriminating `enum`s, the properties they name hoisted to the node
//! itself), so a CRD built from it is accepted and nothing written through
//! the type is pruned.
//!
//! Where serde writes values of different JSON types at one place (an
//! externally tagged enum with both unit and data variants, an untagged
//! enum of a string and an object) no structural schema can describe it:
//! [`union`] then gives a node with `x-kubernetes-preserve-unknown-fields`
//! and no type, which the server accepts and does not prune, but does not
//! validate. `i64`-or-`String` unions become `x-kubernetes-int-or-string`.
//!
//! The impls here cover Rust's scalars, `String`, `Option` (not required,
//! `nullable`), `Vec`/sets, `BTreeMap`/`HashMap` with `String` keys,
//! `serde_json::Value`, and kubeset's own types: `Quantity`, `IntOrString`,
//! `Time`, `MicroTime`, `ByteString`, `FieldsV1`, `RawExtension`.
//!
//! The generated models' impls are generated too (`codegen/src/emit_schema.rs`
//! writes `generated/`): each is the schema the API server publishes for
//! that definition, made structural (references inlined when the schema is
//! built; Go zero-value defaults and `x-kubernetes-patch-*` dropped, see
//! that file). Each also has a [`JsonSchema::DEFINITION`]: its upstream
//! name and properties, from which [`openapi::components`] writes OpenAPI
//! documents that refer to definitions by `$ref`, as kube-apiserver
//! publishes them. The apimachinery models (`ObjectMeta`, `OwnerReference`,
//! `LabelSelector`, `Condition`, …) come with this module; every other
//! group-version's needs the cargo feature `schemas` (as kube-rs users turn
//! on k8s-openapi's `schemars`): it adds about 0.8 s to a build of
//! kubeset-api with every group-version, 0.3 s with the default ones.
//! Types in a reference cycle (`JSONSchemaProps`, so
//! `CustomResourceDefinition`) have none. The server's schemas carry its
//! descriptions: a CRD embedding a `PodTemplateSpec` is about 1 MB, within
//! the server's 1.5 MiB object limit but worth knowing ([`strip_descriptions`]
//! drops them).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

pub use crate::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, ValidationRule,
};
use crate::types::{ByteString, FieldsV1, IntOrString, MicroTime, Quantity, RawExtension, Time};

#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
mod generated;
#[doc(hidden)]
pub mod bridge;
mod cel;
pub mod openapi;

pub use cel::{Message, Reason, Rule, validate_rule};
pub use openapi::{Definition, Wrap, definition};

/// A type with an OpenAPI v3 structural schema. Derive it with
/// `#[derive(JsonSchema)]`; see the module docs for what is covered.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no structural schema (`JsonSchema`)",
    label = "no schema for this type",
    note = "derive `JsonSchema` for it, or give the field `#[schema(with = \"path::to::fn\")]`; a generated model outside apimachinery needs the cargo feature `schemas`"
)]
pub trait JsonSchema {
    /// Whether a struct field of this type may be absent (`Option<T>`):
    /// such fields are not `required`.
    const OPTIONAL: bool = false;

    /// The OpenAPI definition this type is published as (a generated
    /// model, or one of kubeset's named types: `Quantity`, `Time`, …), for
    /// documents that refer to it by name ([`openapi`]); `None` for types
    /// that are only ever inlined.
    const DEFINITION: Option<Definition> = None;

    /// The schema of a value of this type.
    fn json_schema() -> JSONSchemaProps;
}

/// A node of the given `type`.
pub fn typed(type_: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some(type_.to_owned()),
        ..JSONSchemaProps::default()
    }
}

/// A node of the given `type` and `format`.
pub fn formatted(type_: &str, format: &str) -> JSONSchemaProps {
    JSONSchemaProps {
        format: Some(format.to_owned()),
        ..typed(type_)
    }
}

/// A JSON value for `enum` and `default` (`value("a")`, `value(3)`).
pub fn value(v: impl Into<Value>) -> JSON {
    JSON(v.into())
}

/// A string node that takes only `values`.
pub fn string_enum(values: &[&str]) -> JSONSchemaProps {
    JSONSchemaProps {
        enum_: Some(
            values
                .iter()
                .map(|v| JSON(Value::String((*v).to_owned())))
                .collect(),
        ),
        ..typed("string")
    }
}

/// A node that takes any value and keeps it (no type,
/// `x-kubernetes-preserve-unknown-fields`).
pub fn any_value() -> JSONSchemaProps {
    JSONSchemaProps {
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..JSONSchemaProps::default()
    }
}

/// An integer or a string (`x-kubernetes-int-or-string`).
pub fn int_or_string() -> JSONSchemaProps {
    JSONSchemaProps {
        x_kubernetes_int_or_string: Some(true),
        ..JSONSchemaProps::default()
    }
}

/// An array of `items`.
pub fn array(items: JSONSchemaProps) -> JSONSchemaProps {
    JSONSchemaProps {
        items: Some(JSONSchemaPropsOrArray::Schema(Box::new(items))),
        ..typed("array")
    }
}

/// An object with any keys whose values are `values`.
pub fn map(values: JSONSchemaProps) -> JSONSchemaProps {
    JSONSchemaProps {
        additional_properties: Some(JSONSchemaPropsOrBool::Schema(Box::new(values))),
        ..typed("object")
    }
}

/// Builds an object node property by property (what `#[derive(JsonSchema)]`
/// writes for a struct).
#[derive(Debug, Clone)]
#[must_use]
pub struct ObjectSchema {
    schema: JSONSchemaProps,
}

impl Default for ObjectSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectSchema {
    /// An object with no properties yet.
    pub fn new() -> Self {
        Self {
            schema: typed("object"),
        }
    }

    /// Adds property `name`; `required` puts it in the `required` list.
    pub fn property(mut self, name: &str, schema: JSONSchemaProps, required: bool) -> Self {
        self.schema
            .properties
            .get_or_insert_with(BTreeMap::new)
            .insert(name.to_owned(), schema);
        if required {
            push_required(&mut self.schema, name);
        }
        self
    }

    /// Merges the schema of a `#[serde(flatten)]` field: its properties,
    /// `required`, branches and validations join this object's; a map
    /// (`additionalProperties`) or a node that keeps unknown fields makes
    /// this object keep unknown fields (serde puts every other key there).
    /// An optional flattened field (`optional`) adds nothing to `required`.
    pub fn flatten(mut self, child: JSONSchemaProps, optional: bool) -> Self {
        let s = &mut self.schema;
        if child.additional_properties.is_some()
            || child.x_kubernetes_preserve_unknown_fields == Some(true)
            || child.type_.as_deref() != Some("object")
        {
            s.x_kubernetes_preserve_unknown_fields = Some(true);
        }
        for (name, prop) in child.properties.unwrap_or_default() {
            s.properties
                .get_or_insert_with(BTreeMap::new)
                .entry(name)
                .or_insert(prop);
        }
        if !optional {
            for name in child.required.unwrap_or_default() {
                push_required(s, &name);
            }
            // Two flattened enums are two independent choices: the second
            // one's branches go into `allOf`, not into the first's `oneOf`.
            for (branches, exclusive) in [(child.one_of, true), (child.any_of, false)] {
                let Some(branches) = branches else { continue };
                let slot = if exclusive {
                    &mut s.one_of
                } else {
                    &mut s.any_of
                };
                if slot.is_none() {
                    *slot = Some(branches);
                } else {
                    let (one_of, any_of) = if exclusive {
                        (Some(branches), None)
                    } else {
                        (None, Some(branches))
                    };
                    s.all_of.get_or_insert_with(Vec::new).push(JSONSchemaProps {
                        one_of,
                        any_of,
                        ..JSONSchemaProps::default()
                    });
                }
            }
        }
        extend(
            &mut s.x_kubernetes_validations,
            child.x_kubernetes_validations,
        );
        self
    }

    /// The object node.
    pub fn build(self) -> JSONSchemaProps {
        self.schema
    }
}

fn push_required(schema: &mut JSONSchemaProps, name: &str) {
    let required = schema.required.get_or_insert_with(Vec::new);
    if !required.iter().any(|r| r == name) {
        required.push(name.to_owned());
    }
}

fn extend<T>(into: &mut Option<Vec<T>>, from: Option<Vec<T>>) {
    if let Some(from) = from {
        into.get_or_insert_with(Vec::new).extend(from);
    }
}

/// Sets `description` from a doc comment (trimmed lines joined; empty
/// docs leave it unset).
pub fn describe(schema: &mut JSONSchemaProps, doc: &str) {
    let text = doc
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned();
    if !text.is_empty() {
        schema.description = Some(text);
    }
}

/// Adds a CEL rule (`x-kubernetes-validations`), with its message when
/// given. [`validate_rule`] adds a [`Rule`] with every field.
pub fn validate(schema: &mut JSONSchemaProps, rule: &str, message: Option<&str>) {
    schema
        .x_kubernetes_validations
        .get_or_insert_with(Vec::new)
        .push(ValidationRule {
            rule: rule.to_owned(),
            message: message.map(str::to_owned),
            ..ValidationRule::default()
        });
}

/// One schema for values that are any of `variants` (an enum's variants,
/// each as serde writes it).
///
/// Objects merge: every property of every variant is hoisted to the node
/// (properties of one name merged the same way), `required` keeps what all
/// variants require, and each variant becomes a branch of `oneOf`
/// (`exclusive`, tagged enums) or `anyOf` (untagged) holding its own
/// `required` list and the single-value `enum` of its discriminator (the
/// tag). Strings merge their `enum`s; arrays merge their items; integers
/// and numbers give numbers; integers and strings give
/// `x-kubernetes-int-or-string`; anything else mixed gives [`any_value`].
pub fn union(variants: Vec<JSONSchemaProps>, exclusive: bool) -> JSONSchemaProps {
    let Some(first) = variants.first() else {
        return any_value();
    };
    if variants.iter().all(|v| v == first) {
        return variants.into_iter().next().unwrap_or_default();
    }
    let nullable = variants.iter().any(|v| v.nullable == Some(true));
    let mut merged = merge_typed(variants, exclusive);
    if nullable {
        merged.nullable = Some(true);
    }
    merged
}

fn merge_typed(mut variants: Vec<JSONSchemaProps>, exclusive: bool) -> JSONSchemaProps {
    if variants
        .iter()
        .all(|v| v.x_kubernetes_int_or_string == Some(true))
    {
        return int_or_string();
    }
    let types: BTreeSet<Option<&str>> = variants.iter().map(|v| v.type_.as_deref()).collect();
    let types: Vec<Option<&str>> = types.into_iter().collect();
    match types.as_slice() {
        [Some("object")] => merge_objects(variants, exclusive),
        [Some("array")] => {
            let items = variants
                .iter_mut()
                .map(|v| match v.items.take() {
                    Some(JSONSchemaPropsOrArray::Schema(s)) => *s,
                    _ => any_value(),
                })
                .collect();
            array(union(items, false))
        }
        [Some(t)] => merge_scalars(t, &variants),
        [Some("integer"), Some("number")] => typed("number"),
        [Some("integer"), Some("string")] => int_or_string(),
        _ if variants.iter().all(|v| {
            v.type_.as_deref() == Some("integer")
                || v.type_.as_deref() == Some("string")
                || v.x_kubernetes_int_or_string == Some(true)
        }) =>
        {
            int_or_string()
        }
        _ => any_value(),
    }
}

fn merge_scalars(type_: &str, variants: &[JSONSchemaProps]) -> JSONSchemaProps {
    let mut out = typed(type_);
    if variants.iter().all(|v| v.enum_.is_some()) {
        let mut values: Vec<JSON> = Vec::new();
        for v in variants.iter().flat_map(|v| v.enum_.iter().flatten()) {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
        out.enum_ = Some(values);
    }
    let format = variants[0].format.clone();
    if variants.iter().all(|v| v.format == format) {
        out.format = format;
    }
    out
}

fn merge_objects(variants: Vec<JSONSchemaProps>, exclusive: bool) -> JSONSchemaProps {
    let maps = variants
        .iter()
        .filter(|v| v.additional_properties.is_some())
        .count();
    if maps == variants.len() {
        let values = variants
            .into_iter()
            .map(|v| match v.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(s)) => *s,
                _ => any_value(),
            })
            .collect();
        return map(union(values, false));
    }
    if maps > 0 {
        return JSONSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..typed("object")
        };
    }
    let mut by_name: BTreeMap<String, Vec<JSONSchemaProps>> = BTreeMap::new();
    let mut branches = Vec::with_capacity(variants.len());
    let mut common: Option<Vec<String>> = None;
    let mut preserve = false;
    let rules = variant_rules(&variants);
    for v in variants {
        preserve |= v.x_kubernetes_preserve_unknown_fields == Some(true);
        let required = v.required.unwrap_or_default();
        common = Some(match common {
            None => required.clone(),
            Some(c) => c.into_iter().filter(|r| required.contains(r)).collect(),
        });
        let mut branch = JSONSchemaProps::default();
        for (name, prop) in v.properties.unwrap_or_default() {
            if let Some(values) = prop.enum_.as_ref().filter(|e| e.len() == 1) {
                let discriminator = JSONSchemaProps {
                    enum_: Some(values.clone()),
                    ..JSONSchemaProps::default()
                };
                branch
                    .properties
                    .get_or_insert_with(BTreeMap::new)
                    .insert(name.clone(), discriminator);
            }
            by_name.entry(name).or_default().push(prop);
        }
        if !required.is_empty() {
            branch.required = Some(required);
        }
        branches.push(branch);
    }
    let mut out = typed("object");
    out.properties = Some(
        by_name
            .into_iter()
            .map(|(name, props)| (name, union(props, false)))
            .collect(),
    );
    out.required = common.filter(|c| !c.is_empty());
    if preserve {
        out.x_kubernetes_preserve_unknown_fields = Some(true);
    }
    let guarded: Vec<ValidationRule> = rules
        .into_iter()
        .zip(&branches)
        .flat_map(|(rules, branch)| {
            let guard = variant_guard(branch);
            rules
                .into_iter()
                .map(move |r| guard_rule(r, guard.as_deref()))
        })
        .collect();
    if !guarded.is_empty() {
        out.x_kubernetes_validations = Some(guarded);
    }
    let distinct = branches.iter().all(|b| *b != JSONSchemaProps::default());
    if distinct && branches.len() > 1 {
        if exclusive {
            out.one_of = Some(branches);
        } else {
            out.any_of = Some(branches);
        }
    }
    out
}

/// The CEL rules each variant would lose in the merge: its own (a
/// struct variant's `#[schema(validation)]`, a flattened struct's), and
/// those of its properties whose schema differs between variants (their
/// merged node cannot hold one variant's rules), rewritten to the
/// variant's node (`self` → `self.field`, `fieldPath` prefixed).
fn variant_rules(variants: &[JSONSchemaProps]) -> Vec<Vec<ValidationRule>> {
    let differs = |name: &str| {
        let mut schemas = variants
            .iter()
            .filter_map(|v| v.properties.as_ref()?.get(name));
        let first = schemas.next();
        schemas.any(|s| Some(s) != first)
    };
    variants
        .iter()
        .map(|v| {
            let mut rules = v.x_kubernetes_validations.clone().unwrap_or_default();
            for (name, prop) in v.properties.iter().flatten() {
                let Some(own) = prop.x_kubernetes_validations.as_ref() else {
                    continue;
                };
                let Some(field) = cel_field(name).filter(|_| differs(name)) else {
                    continue;
                };
                rules.extend(own.iter().map(|r| ValidationRule {
                    rule: reroot(&r.rule, &field),
                    field_path: Some(format!(".{field}{}", r.field_path.as_deref().unwrap_or(""))),
                    ..r.clone()
                }));
            }
            rules
        })
        .collect()
}

/// When a variant is the one written: its tag has its value, or (untagged)
/// its required properties are present; `None` when nothing tells.
fn variant_guard(branch: &JSONSchemaProps) -> Option<String> {
    let tags: Vec<String> = branch
        .properties
        .iter()
        .flatten()
        .filter_map(|(name, p)| {
            let value = p.enum_.as_ref()?.first()?;
            let literal = serde_json::to_string(&value.0).ok()?;
            Some(format!("self.{} == {literal}", cel_field(name)?))
        })
        .collect();
    let conditions = if tags.is_empty() {
        branch
            .required
            .iter()
            .flatten()
            .map(|r| cel_field(r).map(|f| format!("has(self.{f})")))
            .collect::<Option<Vec<_>>>()?
    } else {
        tags
    };
    (!conditions.is_empty()).then(|| conditions.join(" && "))
}

fn guard_rule(rule: ValidationRule, guard: Option<&str>) -> ValidationRule {
    match guard {
        Some(g) => ValidationRule {
            rule: format!("!({g}) || ({})", rule.rule),
            ..rule
        },
        None => rule,
    }
}

/// CEL's reserved words: a property so named is `__word__` in a rule.
pub const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as the API server's CEL environment names it
/// (`__dash__`, `__dot__`, `__slash__`, `__underscores__`, reserved words
/// as `__word__`); `None` when it has no CEL name.
///
/// ```
/// use kubeset_api::schema::cel_field;
/// assert_eq!(cel_field("x-y").as_deref(), Some("x__dash__y"));
/// assert_eq!(cel_field("namespace").as_deref(), Some("__namespace__"));
/// assert_eq!(cel_field("1st"), None);
/// ```
pub fn cel_field(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || "_.-/".contains(c));
    if !first_ok
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c))
    {
        return None;
    }
    if CEL_RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    Some(
        name.replace("__", "__underscores__")
            .replace('.', "__dot__")
            .replace('-', "__dash__")
            .replace('/', "__slash__"),
    )
}

/// `rule` evaluated one level up: every `self`/`oldSelf` outside string
/// literals and member access becomes `self.field`/`oldSelf.field`.
fn reroot(rule: &str, field: &str) -> String {
    let mut out = String::with_capacity(rule.len() + 16);
    let mut chars = rule.char_indices().peekable();
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some((_, e)) = chars.next() {
                    out.push(e);
                }
            } else if c == q {
                quote = None;
            }
            prev = Some(c);
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            out.push(c);
            prev = Some(c);
            continue;
        }
        let starts_word = c.is_ascii_alphabetic() || c == '_';
        let after_ident = prev.is_some_and(|p| p.is_ascii_alphanumeric() || p == '_' || p == '.');
        if starts_word && !after_ident {
            let word: String = rule[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            for _ in 1..word.chars().count() {
                chars.next();
            }
            out.push_str(&word);
            if word == "self" || word == "oldSelf" {
                out.push('.');
                out.push_str(field);
            }
            prev = word.chars().last();
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

macro_rules! scalar {
    ($($t:ty => $type_:literal, $format:expr, $min:expr;)*) => {$(
        impl JsonSchema for $t {
            fn json_schema() -> JSONSchemaProps {
                let format: Option<&str> = $format;
                JSONSchemaProps {
                    format: format.map(str::to_owned),
                    minimum: $min,
                    ..typed($type_)
                }
            }
        }
    )*};
}

scalar! {
    bool => "boolean", None, None;
    String => "string", None, None;
    i8 => "integer", Some("int32"), None;
    i16 => "integer", Some("int32"), None;
    i32 => "integer", Some("int32"), None;
    i64 => "integer", Some("int64"), None;
    isize => "integer", Some("int64"), None;
    u8 => "integer", Some("int32"), Some(0.0);
    u16 => "integer", Some("int32"), Some(0.0);
    u32 => "integer", Some("int64"), Some(0.0);
    u64 => "integer", Some("int64"), Some(0.0);
    usize => "integer", Some("int64"), Some(0.0);
    f32 => "number", Some("float"), None;
    f64 => "number", Some("double"), None;
    ByteString => "string", Some("byte"), None;
}

impl<T: JsonSchema> JsonSchema for Option<T> {
    const OPTIONAL: bool = true;

    /// `T`'s schema, [`nullable`].
    fn json_schema() -> JSONSchemaProps {
        nullable(T::json_schema())
    }
}

/// `s`, `nullable` (the schema of an `Option`). An `enum` moves into
/// `anyOf: [{enum}, {enum: [null]}]`: the server checks a node's own
/// `enum` even for `null` and never matches `null` there (measured on
/// v1.35), while the `anyOf` form takes `null` and still rejects other
/// values.
pub fn nullable(mut s: JSONSchemaProps) -> JSONSchemaProps {
    s.nullable = Some(true);
    if let Some(values) = s.enum_.take() {
        let branches = vec![
            JSONSchemaProps {
                enum_: Some(values),
                ..JSONSchemaProps::default()
            },
            JSONSchemaProps {
                enum_: Some(vec![JSON(Value::Null)]),
                ..JSONSchemaProps::default()
            },
        ];
        match s.any_of {
            None => s.any_of = Some(branches),
            Some(_) => s.all_of.get_or_insert_with(Vec::new).push(JSONSchemaProps {
                any_of: Some(branches),
                ..JSONSchemaProps::default()
            }),
        }
    }
    s
}

impl<T: JsonSchema + ?Sized> JsonSchema for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;
    fn json_schema() -> JSONSchemaProps {
        T::json_schema()
    }
}

impl<T: JsonSchema + ?Sized> JsonSchema for std::sync::Arc<T> {
    const OPTIONAL: bool = T::OPTIONAL;
    fn json_schema() -> JSONSchemaProps {
        T::json_schema()
    }
}

impl<T: JsonSchema> JsonSchema for Vec<T> {
    fn json_schema() -> JSONSchemaProps {
        array(T::json_schema())
    }
}

/// Sets are lists of unique scalars: `x-kubernetes-list-type: set`.
impl<T: JsonSchema> JsonSchema for BTreeSet<T> {
    fn json_schema() -> JSONSchemaProps {
        JSONSchemaProps {
            x_kubernetes_list_type: Some("set".to_owned()),
            ..array(T::json_schema())
        }
    }
}

/// As `BTreeSet`.
impl<T: JsonSchema, S> JsonSchema for HashSet<T, S> {
    fn json_schema() -> JSONSchemaProps {
        BTreeSet::<T>::json_schema()
    }
}

impl<T: JsonSchema> JsonSchema for BTreeMap<String, T> {
    fn json_schema() -> JSONSchemaProps {
        map(T::json_schema())
    }
}

impl<T: JsonSchema, S> JsonSchema for HashMap<String, T, S> {
    fn json_schema() -> JSONSchemaProps {
        map(T::json_schema())
    }
}

/// Any JSON: kept as written (`x-kubernetes-preserve-unknown-fields`).
impl JsonSchema for Value {
    fn json_schema() -> JSONSchemaProps {
        any_value()
    }
}

/// Any object: kept as written.
impl JsonSchema for serde_json::Map<String, Value> {
    fn json_schema() -> JSONSchemaProps {
        JSONSchemaProps {
            x_kubernetes_preserve_unknown_fields: Some(true),
            ..typed("object")
        }
    }
}

impl JsonSchema for Time {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::TIME);
    fn json_schema() -> JSONSchemaProps {
        formatted("string", "date-time")
    }
}

impl JsonSchema for MicroTime {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::MICRO_TIME);
    fn json_schema() -> JSONSchemaProps {
        formatted("string", "date-time")
    }
}

impl JsonSchema for IntOrString {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::INT_OR_STRING);
    fn json_schema() -> JSONSchemaProps {
        int_or_string()
    }
}

/// Any object, kept as written (managed fields' field sets).
impl JsonSchema for FieldsV1 {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::FIELDS_V1);
    fn json_schema() -> JSONSchemaProps {
        serde_json::Map::<String, Value>::json_schema()
    }
}

/// Any object, kept as written (an embedded object of any kind).
impl JsonSchema for RawExtension {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::RAW_EXTENSION);
    fn json_schema() -> JSONSchemaProps {
        serde_json::Map::<String, Value>::json_schema()
    }
}

/// `x-kubernetes-int-or-string`, as the API server's own schema for
/// quantities (a number or `"500m"`).
impl JsonSchema for Quantity {
    const DEFINITION: Option<Definition> = Some(generated::hand_written::QUANTITY);
    fn json_schema() -> JSONSchemaProps {
        int_or_string()
    }
}

/// Removes every `description` below and at `schema` (a CRD embedding
/// several pod templates can pass the server's 1.5 MiB object limit with
/// them). For `#[schema(with = "...")]`-style use:
/// `strip_descriptions(PodTemplateSpec::json_schema())`.
pub fn strip_descriptions(mut schema: JSONSchemaProps) -> JSONSchemaProps {
    strip(&mut schema);
    schema
}

fn strip(s: &mut JSONSchemaProps) {
    s.description = None;
    let children = s
        .properties
        .iter_mut()
        .flat_map(|p| p.values_mut())
        .chain(s.pattern_properties.iter_mut().flat_map(|p| p.values_mut()))
        .chain(s.all_of.iter_mut().flatten())
        .chain(s.one_of.iter_mut().flatten())
        .chain(s.any_of.iter_mut().flatten())
        .chain(s.not.as_deref_mut());
    for c in children {
        strip(c);
    }
    match &mut s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => strip(i),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => items.iter_mut().for_each(strip),
        None => {}
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &mut s.additional_properties {
        strip(a);
    }
}

/// A scalar `default` of a generated model's property.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A string.
    Str(&'static str),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Self {
        match s {
            Scalar::Str(s) => Value::from(s),
            Scalar::Int(i) => Value::from(i),
            Scalar::Bool(b) => Value::from(b),
        }
    }
}

/// One property of a generated model's schema (see [`Model`]).
#[derive(Debug, Clone, Copy)]
pub struct Prop {
    /// JSON name.
    pub name: &'static str,
    /// The schema of its type (the referenced model's impl for a `$ref`).
    pub schema: fn() -> JSONSchemaProps,
    /// In the object's `required` list.
    pub required: bool,
    /// The spec's description of the property (over the type's own).
    pub description: Option<&'static str>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<&'static str>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type`.
    pub map_type: Option<&'static str>,
    /// `default`.
    pub default: Option<Scalar>,
    /// `enum`: the values the spec lists (published in OpenAPI documents
    /// for `kubectl explain`, not enforced by [`Model::build`]: a built-in
    /// server takes values newer than the spec).
    pub enum_values: &'static [&'static str],
    /// The named definition the property's type refers to, as `$ref` in
    /// OpenAPI documents (the type itself, or its items or map values,
    /// see [`Prop::wrap`]).
    pub reference: Option<Definition>,
    /// Where [`Prop::reference`] sits in the property's type.
    pub wrap: Wrap,
    /// A required property that Go keeps unset when it is absent: the
    /// server publishes no zero `default` for it, which Go's OpenAPI
    /// generator writes for exactly the fields Go's JSON always encodes (a
    /// struct that is not a pointer, `{}`; a scalar that is neither a
    /// pointer nor `omitempty`, `""`, `0`, `false`). Set for struct and
    /// plain scalar properties only: the model holds a required property
    /// without `Option`, so decoding an object that lacks it fills in the
    /// zero that Go's pointer (`spec.selector` of a Deployment) leaves nil.
    pub unset_when_absent: bool,
}

impl Prop {
    /// A property of no name and no facts, to fill the rest of a literal
    /// with (`..Prop::NONE`).
    pub const NONE: Prop = Prop {
        name: "",
        schema: any_value,
        required: false,
        description: None,
        list_type: None,
        list_map_keys: &[],
        map_type: None,
        default: None,
        enum_values: &[],
        reference: None,
        wrap: Wrap::One,
        unset_when_absent: false,
    };
}

/// The schema of a generated model as data: what the generated
/// `JsonSchema` impls (module `generated`, cargo feature `schemas`) hold,
/// built by one function instead of code per type.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// The definition's description.
    pub description: Option<&'static str>,
    /// The definition's `x-kubernetes-map-type`.
    pub map_type: Option<&'static str>,
    /// An object without properties (kept whole:
    /// `x-kubernetes-preserve-unknown-fields`).
    pub opaque: bool,
    /// Its properties, in JSON name order.
    pub properties: &'static [Prop],
}

impl Model {
    /// The object node: each property's type schema with the property's
    /// own facts set on it.
    pub fn build(&self) -> JSONSchemaProps {
        let mut s = ObjectSchema::new();
        for p in self.properties {
            let mut node = (p.schema)();
            if let Some(d) = p.description {
                node.description = Some(d.to_owned());
            }
            if let Some(t) = p.list_type {
                node.x_kubernetes_list_type = Some(t.to_owned());
            }
            if !p.list_map_keys.is_empty() {
                node.x_kubernetes_list_map_keys =
                    Some(p.list_map_keys.iter().map(|k| (*k).to_owned()).collect());
            }
            if let Some(t) = p.map_type {
                node.x_kubernetes_map_type = Some(t.to_owned());
            }
            if let Some(d) = p.default {
                node.default = Some(JSON(d.into()));
            }
            s = s.property(p.name, node, p.required);
        }
        let mut s = s.build();
        s.description = self.description.map(str::to_owned);
        s.x_kubernetes_map_type = self.map_type.map(str::to_owned);
        if self.opaque {
            s.x_kubernetes_preserve_unknown_fields = Some(true);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::pkg::apis::meta::v1::Condition;

    fn s(v: &str) -> JSON {
        JSON(Value::String(v.to_owned()))
    }

    #[test]
    fn strings_merge_their_enums() {
        let u = union(vec![string_enum(&["A"]), string_enum(&["B"])], true);
        assert_eq!(u.type_.as_deref(), Some("string"));
        assert_eq!(u.enum_, Some(vec![s("A"), s("B")]));
        assert_eq!(u.one_of, None);
    }

    #[test]
    fn objects_hoist_properties_and_branch_on_required_and_tag() {
        let a = ObjectSchema::new()
            .property("kind", string_enum(&["A"]), true)
            .property("x", typed("string"), true)
            .build();
        let b = ObjectSchema::new()
            .property("kind", string_enum(&["B"]), true)
            .property("y", typed("integer"), false)
            .build();
        let u = union(vec![a, b], true);
        let props = u.properties.as_ref().unwrap();
        assert_eq!(
            props.keys().collect::<Vec<_>>(),
            vec!["kind", "x", "y"],
            "every variant's properties are hoisted"
        );
        assert_eq!(props["kind"].enum_, Some(vec![s("A"), s("B")]));
        assert_eq!(u.required, Some(vec!["kind".to_owned()]));
        let one_of = u.one_of.unwrap();
        assert_eq!(one_of.len(), 2);
        assert_eq!(
            one_of[0].required,
            Some(vec!["kind".to_owned(), "x".to_owned()])
        );
        assert_eq!(
            one_of[1].properties.as_ref().unwrap()["kind"].enum_,
            Some(vec![s("B")])
        );
        assert_eq!(one_of[1].type_, None, "branches carry no type");
    }

    #[test]
    fn variant_rules_survive_the_merge_guarded_by_the_variant() {
        let mut scale = ObjectSchema::new()
            .property("type", string_enum(&["Scale"]), true)
            .property("replicas", typed("integer"), true)
            .build();
        validate(&mut scale, "self.replicas < 10", Some("at most 9"));
        let run = ObjectSchema::new()
            .property("type", string_enum(&["Run"]), true)
            .build();
        let u = union(vec![scale, run], true);
        let rules = u
            .x_kubernetes_validations
            .expect("the variant's rule is kept");
        assert_eq!(
            rules[0].rule,
            "!(self.type == \"Scale\") || (self.replicas < 10)"
        );
        assert_eq!(rules[0].message.as_deref(), Some("at most 9"));
        // Adjacently tagged: the content's rule moves up, rerooted.
        let content = |rule: &str| {
            let mut c = ObjectSchema::new()
                .property("size", typed("integer"), true)
                .build();
            validate(&mut c, rule, None);
            c
        };
        let a = ObjectSchema::new()
            .property("kind", string_enum(&["A"]), true)
            .property(
                "content",
                content("self.size > 0 && 'self' != oldSelf.x"),
                true,
            )
            .build();
        let b = ObjectSchema::new()
            .property("kind", string_enum(&["B"]), true)
            .property("content", typed("string"), true)
            .build();
        let rules = union(vec![a, b], true).x_kubernetes_validations.unwrap();
        assert_eq!(
            rules[0].rule,
            "!(self.kind == \"A\") || (self.content.size > 0 && 'self' != oldSelf.content.x)"
        );
        assert_eq!(rules[0].field_path.as_deref(), Some(".content"));
        // Untagged: guarded by the variant's required properties.
        let mut x = ObjectSchema::new()
            .property("host-name", typed("string"), true)
            .build();
        validate(&mut x, "size(self) > 0", None);
        let y = ObjectSchema::new()
            .property("url", typed("string"), true)
            .build();
        let rules = union(vec![x, y], false).x_kubernetes_validations.unwrap();
        assert_eq!(
            rules[0].rule,
            "!(has(self.host__dash__name)) || (size(self) > 0)"
        );
        assert_eq!(cel_field("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(
            cel_field("a__b.c").as_deref(),
            Some("a__underscores__b__dot__c")
        );
    }

    #[test]
    fn mixed_types_become_int_or_string_or_any() {
        let u = union(vec![typed("integer"), typed("string")], false);
        assert_eq!(u.x_kubernetes_int_or_string, Some(true));
        let u = union(vec![typed("string"), typed("object")], false);
        assert_eq!(u, any_value());
        let u = union(vec![typed("integer"), typed("number")], false);
        assert_eq!(u.type_.as_deref(), Some("number"));
    }

    #[test]
    fn option_is_optional_nullable_and_enum_takes_null() {
        const { assert!(<Option<String> as JsonSchema>::OPTIONAL) };
        const { assert!(!<String as JsonSchema>::OPTIONAL) };
        struct E;
        impl JsonSchema for E {
            fn json_schema() -> JSONSchemaProps {
                string_enum(&["A"])
            }
        }
        let o = Option::<E>::json_schema();
        assert_eq!(o.nullable, Some(true));
        assert_eq!(o.enum_, None);
        let any_of = o.any_of.unwrap();
        assert_eq!(any_of[0].enum_, Some(vec![s("A")]));
        assert_eq!(any_of[1].enum_, Some(vec![JSON(Value::Null)]));
    }

    #[test]
    fn flatten_merges_properties_and_maps_keep_unknown_fields() {
        let inner = ObjectSchema::new()
            .property("a", typed("string"), true)
            .build();
        let o = ObjectSchema::new()
            .property("b", typed("string"), false)
            .flatten(inner.clone(), false)
            .build();
        assert_eq!(o.required, Some(vec!["a".to_owned()]));
        assert_eq!(o.properties.unwrap().len(), 2);
        let choice = |tag: &str| {
            union(
                vec![
                    ObjectSchema::new()
                        .property(tag, string_enum(&["A"]), true)
                        .build(),
                    ObjectSchema::new()
                        .property(tag, string_enum(&["B"]), true)
                        .build(),
                ],
                true,
            )
        };
        let two = ObjectSchema::new()
            .flatten(choice("x"), false)
            .flatten(choice("y"), false)
            .build();
        assert_eq!(two.one_of.as_ref().map(Vec::len), Some(2));
        let all_of = two.all_of.expect("the second choice in allOf");
        assert_eq!(all_of[0].one_of.as_ref().map(Vec::len), Some(2));
        let o = ObjectSchema::new().flatten(inner, true).build();
        assert_eq!(
            o.required, None,
            "an optional flattened field requires nothing"
        );
        let o = ObjectSchema::new()
            .flatten(BTreeMap::<String, String>::json_schema(), false)
            .build();
        assert_eq!(o.x_kubernetes_preserve_unknown_fields, Some(true));
    }

    /// The generated impls carry the server's facts: list maps with their
    /// keys (a defaulted key keeps its default), atomic maps, `required`,
    /// descriptions; a kind's own `metadata` is optional when embedded.
    #[cfg(all(feature = "schemas", feature = "core-v1"))]
    #[test]
    fn generated_models_carry_the_published_facts() {
        use crate::api::core::v1::{Container, PodTemplateSpec};
        let props = |s: &JSONSchemaProps| s.properties.clone().unwrap_or_default();
        let c = Container::json_schema();
        assert_eq!(c.required, Some(vec!["name".to_owned()]));
        let ports = &props(&c)["ports"];
        assert_eq!(ports.x_kubernetes_list_type.as_deref(), Some("map"));
        assert_eq!(
            ports.x_kubernetes_list_map_keys,
            Some(vec!["containerPort".to_owned(), "protocol".to_owned()])
        );
        let Some(JSONSchemaPropsOrArray::Schema(port)) = &ports.items else {
            panic!("ports: {ports:?}")
        };
        assert_eq!(props(port)["protocol"].default, Some(value("TCP")));
        assert_eq!(
            props(port)["containerPort"].default,
            None,
            "Go zero defaults are dropped"
        );
        assert_eq!(
            props(&c)["resources"].properties.as_ref().map(|p| p.len()),
            Some(3)
        );
        let t = PodTemplateSpec::json_schema();
        let meta = &props(&t)["metadata"];
        assert_eq!(meta.type_.as_deref(), Some("object"));
        assert!(props(meta).contains_key("labels"));
        assert!(
            crate::apimachinery::pkg::apis::meta::v1::LabelSelector::json_schema()
                .x_kubernetes_map_type
                .as_deref()
                == Some("atomic")
        );
        let pod = crate::api::core::v1::Pod::json_schema();
        assert_eq!(pod.required, None, "an embedded Pod needs no metadata");
        assert!(props(&pod).contains_key("apiVersion"));
        let bare = strip_descriptions(t);
        assert!(
            !serde_json::to_string(&bare)
                .unwrap()
                .contains("\"description\"")
        );
    }

    #[test]
    fn kubeset_types() {
        let c = Condition::json_schema();
        let mut required = c.required.clone().unwrap_or_default();
        required.sort();
        assert_eq!(
            required,
            ["lastTransitionTime", "message", "reason", "status", "type"]
        );
        assert_eq!(
            c.properties.unwrap()["lastTransitionTime"]
                .format
                .as_deref(),
            Some("date-time")
        );
        assert_eq!(
            Quantity::json_schema().x_kubernetes_int_or_string,
            Some(true)
        );
        assert_eq!(u32::json_schema().minimum, Some(0.0));
    }
}
