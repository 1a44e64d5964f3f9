//! A CRD version's `openAPIV3Schema` compiled once, when the CRD is
//! registered, into a tree of [`Node`]s: every keyword the write path reads
//! is parsed here (patterns compiled, formats resolved, bounds read as
//! numbers), so a write walks the tree and never the schema's JSON.
//!
//! The keywords are those of kube-apiserver's structural schemas
//! (apiextensions-apiserver `pkg/apiserver/schema`): the structural part
//! (`type`, `properties`, `additionalProperties`, `items`, `nullable`, the
//! `x-kubernetes-*` extensions, `default`) and the value validations
//! (`enum`, `pattern`, `format`, lengths, bounds, counts, `uniqueItems`,
//! and `allOf`/`anyOf`/`oneOf`/`not` holding only value validations).
//! CEL rules (`x-kubernetes-validations`) are compiled with their node
//! ([`super::cel`]).
//!
//! Compiled schemas are kept by their JSON ([`COMPILED`]): a CRD's schema
//! is compiled once when the CRD is checked and reused when its resources
//! are served, and a test suite that registers the same CRDs in every
//! server it starts compiles them once per process.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use regex::Regex;
use serde_json::Value;

use crate::util::TextCache;

/// The most nesting a schema may have: kube-apiserver has no such limit,
/// but a CRD is bounded by the 1.5 MiB object limit and every real one
/// nests far less (the deepest in `../shared/crds` is under 40).
pub(crate) const MAX_DEPTH: usize = 128;

/// The number of values an unbounded list or map is counted as holding
/// when a rule's cost is multiplied by the values it runs on: what fits in
/// a 3 MiB request at two bytes an item and a comma.
const UNBOUNDED: f64 = 1_048_575.0;

/// A compiled pattern is refused above this size (the regex crate's own
/// bound on compiled programs, kept explicit).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The JSON type a node declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    /// No `type`: any value (only with `x-kubernetes-preserve-unknown-fields`
    /// or inside value validations).
    Any,
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    /// The name go-openapi prints.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Any => "",
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    Set,
    /// With its `x-kubernetes-list-map-keys`.
    Map(Vec<String>),
}

/// The string formats kube-apiserver checks (the formats of
/// `apiservervalidation.StripUnsupportedFormatsPostProcess` it has a
/// checker for); any other format is documentation only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Byte,
    Date,
    DateTime,
    Duration,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uri,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    HexColor,
    RgbColor,
    BsonObjectId,
}

impl Format {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "byte" => Self::Byte,
            "date" => Self::Date,
            "date-time" | "datetime" => Self::DateTime,
            "duration" => Self::Duration,
            "email" => Self::Email,
            "hostname" => Self::Hostname,
            "ipv4" => Self::Ipv4,
            "ipv6" => Self::Ipv6,
            "cidr" => Self::Cidr,
            "mac" => Self::Mac,
            "uri" => Self::Uri,
            "uuid" => Self::Uuid,
            "uuid3" => Self::Uuid3,
            "uuid4" => Self::Uuid4,
            "uuid5" => Self::Uuid5,
            "hexcolor" => Self::HexColor,
            "rgbcolor" => Self::RgbColor,
            "bsonobjectid" => Self::BsonObjectId,
            _ => return None,
        })
    }
}

/// `additionalProperties`.
#[derive(Debug, Clone)]
pub(crate) enum Additional {
    /// Absent (or `true`): unknown keys are pruned unless preserved.
    Absent,
    /// A schema for every value: the object is a map.
    Schema(Box<Node>),
}

/// A numeric bound and whether it is exclusive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    pub(crate) value: f64,
    pub(crate) exclusive: bool,
}

/// One compiled schema node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) ty: Type,
    pub(crate) int_or_string: bool,
    pub(crate) nullable: bool,
    pub(crate) preserve_unknown: bool,
    pub(crate) embedded: bool,
    pub(crate) properties: BTreeMap<String, Node>,
    pub(crate) additional: Additional,
    pub(crate) items: Option<Box<Node>>,
    pub(crate) required: Vec<String>,
    pub(crate) enumeration: Vec<Value>,
    /// The pattern as written (for messages) and compiled.
    pub(crate) pattern: Option<(String, Regex)>,
    pub(crate) format: Option<(String, Format)>,
    pub(crate) max_length: Option<u64>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_properties: Option<u64>,
    pub(crate) min_properties: Option<u64>,
    pub(crate) maximum: Option<Bound>,
    pub(crate) minimum: Option<Bound>,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) unique_items: bool,
    pub(crate) list_type: ListType,
    pub(crate) default: Option<Value>,
    pub(crate) all_of: Vec<Node>,
    pub(crate) any_of: Vec<Node>,
    pub(crate) one_of: Vec<Node>,
    pub(crate) not: Option<Box<Node>>,
    /// The node's CEL rules (`x-kubernetes-validations`), compiled.
    pub(crate) rules: Vec<super::cel::Rule>,
}

/// A CRD version's compiled schema; compares equal to another compiled
/// from the same JSON.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    pub(crate) root: Arc<Node>,
    /// Whether any node carries CEL rules (`x-kubernetes-validations`).
    pub(crate) has_rules: bool,
    source: Arc<Value>,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.source, &other.source) || self.source == other.source
    }
}

impl Eq for Schema {}

/// A CRD version's schema, compiled on its first use ([`Lazy::get`]), not
/// when the CRD is served: a server started with many CRDs does not wait
/// for their schemas and CEL rules (Gateway API's HTTPRoute has about 90
/// rules a version). Concurrent first uses wait for one compile; the
/// result, problems included, is kept. A CRD created through the API was
/// compiled when it was admitted (its problems refuse it, as
/// kube-apiserver's do), so its first use finds it in [`COMPILED`].
#[derive(Debug, Clone)]
pub(crate) struct Lazy {
    source: Arc<Value>,
    cell: Arc<OnceLock<Result<Schema, Vec<Problem>>>>,
}

impl PartialEq for Lazy {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.source, &other.source) || self.source == other.source
    }
}

impl Eq for Lazy {}

impl Lazy {
    /// `source` (an `openAPIV3Schema`), to compile when first used: the
    /// cell made for the same JSON before ([`LAZY`]), so that the servers
    /// of a process share one compile and one copy of the source, else a
    /// new one.
    pub(crate) fn of(source: &Value) -> Self {
        let key = key_of(source);
        let mut cache = LAZY.lock().unwrap_or_else(|p| p.into_inner());
        let (map, bytes) = &mut *cache;
        if let Some(lazy) = map.get(&key) {
            return lazy.clone();
        }
        let lazy = Self {
            source: Arc::new(source.clone()),
            cell: Arc::default(),
        };
        if *bytes + key.1 > COMPILED_CACHE_BYTES {
            map.clear();
            *bytes = 0;
        }
        if key.1 <= COMPILED_CACHE_BYTES && map.insert(key, lazy.clone()).is_none() {
            *bytes += key.1;
        }
        lazy
    }

    /// The `openAPIV3Schema` it compiles.
    pub(crate) fn source(&self) -> Arc<Value> {
        Arc::clone(&self.source)
    }

    /// The compiled schema, compiled now if this is its first use; the
    /// problems that kept it from compiling otherwise.
    pub(crate) fn get(&self) -> Result<&Schema, &[Problem]> {
        self.cell
            .get_or_init(|| Schema::compile(&self.source))
            .as_ref()
            .map_err(Vec::as_slice)
    }
}

/// Why a schema did not compile: the path of the node (`properties[spec]`
/// style, as kube-apiserver's CRD messages name them), the cause's reason
/// and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) path: String,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
}

impl Problem {
    /// A problem of `reason` with its whole `message`.
    pub(crate) fn new(path: String, reason: &'static str, message: String) -> Self {
        Self {
            path,
            reason,
            message,
        }
    }

    /// `FieldValueInvalid`: `value` (a string) is wrong for `why`.
    pub(crate) fn invalid(path: String, value: &str, why: &str) -> Self {
        let value = super::validate::go_value(&Value::String(value.to_owned()));
        Self::new(
            path,
            "FieldValueInvalid",
            format!("Invalid value: {value}: {why}"),
        )
    }
}

/// What compiling a schema collects: its problems and the estimated cost
/// of each CEL rule times the number of values it runs on.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub(crate) problems: Vec<Problem>,
    pub(crate) costs: Vec<(String, f64)>,
    /// The path of the list (not `listType=map`) whose items are being
    /// compiled, if any: no value under it has an old value to compare.
    pub(crate) uncorrelatable: Option<String>,
}

impl Sink {
    pub(crate) fn push(&mut self, p: Problem) {
        self.problems.push(p);
    }
}

/// Schemas compiled before, by [`key_of`] their JSON value, and the bytes
/// of their text. Bounded by [`COMPILED_CACHE_BYTES`]: emptied when full,
/// so what it holds grows with the CRDs seen, never past the bound.
static COMPILED: LazyLock<Mutex<Compiled>> = LazyLock::new(Mutex::default);

/// The [`Lazy`] schemas made before, by [`key_of`] their JSON value, and
/// the bytes of their text; bounded as [`COMPILED`] is.
static LAZY: LazyLock<Mutex<Made>> = LazyLock::new(Mutex::default);

/// [`LAZY`]'s content: the cells by [`key_of`], and the bytes of JSON text
/// they hold.
type Made = (HashMap<(u64, usize), Lazy>, usize);

/// [`COMPILED`]'s content: the schemas by [`key_of`], and the bytes of
/// JSON text they were compiled from.
type Compiled = (HashMap<(u64, usize), Schema>, usize);

/// The JSON text the schemas in [`COMPILED`] were compiled from, at most
/// (CRD schemas are large: Gateway API's HTTPRoute is about 300 KB a
/// version).
const COMPILED_CACHE_BYTES: usize = 64 << 20;

/// The process's key of [`key_of`]'s hash: random, so that no schema can
/// be made to collide with another on purpose.
static HASH_KEY: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// A schema's key in [`COMPILED`]: a keyed hash of its JSON value, walked
/// in place (no text written: serialising a 300 KB schema to hash it was
/// most of a warm start), and the bytes of its strings and numbers (the
/// cache's measure of size).
fn key_of(source: &Value) -> (u64, usize) {
    let mut hasher = HASH_KEY.build_hasher();
    let mut bytes = 0;
    hash_value(source, &mut hasher, &mut bytes);
    (hasher.finish(), bytes)
}

/// Feeds `v` to `h`, each node tagged with its type and each string and
/// collection with its length, so that distinct values feed distinct
/// sequences. Recurses as deep as `v` is (as serialising it does).
fn hash_value(v: &Value, h: &mut impl Hasher, bytes: &mut usize) {
    fn text(h: &mut impl Hasher, s: &str, bytes: &mut usize) {
        h.write_usize(s.len());
        h.write(s.as_bytes());
        *bytes += s.len() + 2;
    }
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            h.write_u8(3);
            n.hash(h);
            *bytes += 8;
        }
        Value::String(s) => {
            h.write_u8(4);
            text(h, s, bytes);
        }
        Value::Array(items) => {
            h.write_u8(5);
            h.write_usize(items.len());
            for item in items {
                hash_value(item, h, bytes);
            }
        }
        Value::Object(map) => {
            h.write_u8(6);
            h.write_usize(map.len());
            for (k, item) in map {
                text(h, k, bytes);
                hash_value(item, h, bytes);
            }
        }
    }
}

impl Schema {
    /// Compiles `openAPIV3Schema`; every problem found is reported. A
    /// schema compiled before (the same JSON) is reused ([`COMPILED`]);
    /// one with problems is compiled again each time.
    pub(crate) fn compile(source: &Value) -> Result<Self, Vec<Problem>> {
        let key = key_of(source);
        let cached = COMPILED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .get(&key)
            .cloned();
        if let Some(schema) = cached {
            return Ok(schema);
        }
        let schema = Self::compile_uncached(source)?;
        let mut cache = COMPILED.lock().unwrap_or_else(|p| p.into_inner());
        let (map, bytes) = &mut *cache;
        if *bytes + key.1 > COMPILED_CACHE_BYTES {
            map.clear();
            *bytes = 0;
        }
        if key.1 <= COMPILED_CACHE_BYTES && map.insert(key, schema.clone()).is_none() {
            *bytes += key.1;
        }
        Ok(schema)
    }

    fn compile_uncached(source: &Value) -> Result<Self, Vec<Problem>> {
        let has_rules = has_rules(source, 0);
        let source = Arc::new(source.clone());
        let compile = |source: &Value| {
            let mut sink = Sink::default();
            let root = compile_node(source, "", 0, 1.0, &mut sink);
            (root, sink)
        };
        // CEL's parser recurses deeply: rules compile on a thread with a
        // large stack (their nesting is bounded too); without one, here.
        let (root, mut sink) = if has_rules {
            let shared = Arc::clone(&source);
            super::cel::on_compile_stack(move || compile(&shared))
                .unwrap_or_else(|_| compile(&source))
        } else {
            compile(&source)
        };
        let mut problems = std::mem::take(&mut sink.problems);
        total_cost(&sink.costs, &mut problems);
        if problems.is_empty() {
            Ok(Self {
                root: Arc::new(root),
                has_rules,
                source,
            })
        } else {
            Err(problems)
        }
    }
}

/// Whether `v` or a schema under it has `x-kubernetes-validations`.
fn has_rules(v: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (k == "x-kubernetes-validations" && x.as_array().is_some_and(|a| !a.is_empty()))
                || (k != "default" && k != "enum" && k != "example" && has_rules(x, depth + 1))
        }),
        Value::Array(a) => a.iter().any(|x| has_rules(x, depth + 1)),
        _ => false,
    }
}

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(|x| {
        x.as_u64()
            .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    })
}

fn bound(v: &Value, key: &str, exclusive: &str) -> Option<Bound> {
    v.get(key).and_then(Value::as_f64).map(|value| Bound {
        value,
        exclusive: v.get(exclusive).and_then(Value::as_bool).unwrap_or(false),
    })
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn compile_list(
    v: &Value,
    key: &str,
    path: &str,
    depth: usize,
    card: f64,
    problems: &mut Sink,
) -> Vec<Node> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .enumerate()
                .map(|(i, s)| {
                    compile_node(s, &format!("{path}.{key}[{i}]"), depth + 1, card, problems)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Patterns compiled before, by their text: a CRD repeats its patterns
/// (Gateway API's HTTPRoute has 96, 34 of them distinct), and its versions
/// and the CRDs of one project share them. Bounded: emptied when full.
static PATTERNS: TextCache<Regex> = TextCache::new(PATTERN_CACHE_ENTRIES);

/// The patterns [`PATTERNS`] holds at most.
const PATTERN_CACHE_ENTRIES: usize = 4096;

/// `p` compiled as a schema's `pattern`, from [`PATTERNS`] when it was
/// compiled before (a pattern that does not compile is not kept).
fn pattern(p: &str) -> Result<Regex, regex::Error> {
    PATTERNS.get_or_build(p, || {
        regex::RegexBuilder::new(p)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
    })
}

fn compile_pattern(v: &Value, path: &str, problems: &mut Sink) -> Option<(String, Regex)> {
    let p = v.get("pattern").and_then(Value::as_str)?;
    match pattern(p) {
        Ok(re) => Some((p.to_owned(), re)),
        Err(e) => {
            problems.push(Problem::invalid(
                format!("{path}.pattern"),
                p,
                &format!("must be a valid regular expression, but isn't: {e}"),
            ));
            None
        }
    }
}

/// The strings of the array at `key` (`required`, the list's map keys).
fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn list_type(v: &Value) -> ListType {
    match v.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(strings(v, "x-kubernetes-list-map-keys")),
        _ => ListType::Atomic,
    }
}

fn compile_node(v: &Value, path: &str, depth: usize, card: f64, problems: &mut Sink) -> Node {
    if depth > MAX_DEPTH {
        problems.push(Problem::invalid(
            path.to_owned(),
            "",
            &format!("must not nest more than {MAX_DEPTH} levels"),
        ));
        return Node::any();
    }
    let ty = match v.get("type").and_then(Value::as_str) {
        None | Some("") => Type::Any,
        Some(t) => Type::parse(t).unwrap_or_else(|| {
            problems.push(Problem::invalid(
                format!("{path}.type"),
                t,
                "must be one of: array, boolean, integer, number, object, string",
            ));
            Type::Any
        }),
    };
    let properties = v
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, s)| {
                    let p = format!("{path}.properties[{k}]");
                    (k.clone(), compile_node(s, &p, depth + 1, card, problems))
                })
                .collect()
        })
        .unwrap_or_default();
    let additional = match v.get("additionalProperties") {
        Some(s @ Value::Object(_)) => Additional::Schema(Box::new(compile_node(
            s,
            &format!("{path}.additionalProperties"),
            depth + 1,
            card * u64_of(v, "maxProperties").map_or(UNBOUNDED, |m| m as f64),
            problems,
        ))),
        _ => Additional::Absent,
    };
    let entered = problems.uncorrelatable.is_none()
        && v.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map");
    if entered {
        problems.uncorrelatable = Some(path.to_owned());
    }
    let items = v.get("items").filter(|s| s.is_object()).map(|s| {
        Box::new(compile_node(
            s,
            &format!("{path}.items"),
            depth + 1,
            card * u64_of(v, "maxItems").map_or(UNBOUNDED, |m| m as f64),
            problems,
        ))
    });
    if entered {
        problems.uncorrelatable = None;
    }
    let mut node = Node {
        ty,
        int_or_string: flag(v, "x-kubernetes-int-or-string"),
        nullable: flag(v, "nullable"),
        preserve_unknown: flag(v, "x-kubernetes-preserve-unknown-fields"),
        embedded: flag(v, "x-kubernetes-embedded-resource"),
        properties,
        additional,
        items,
        required: strings(v, "required"),
        enumeration: v
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        pattern: compile_pattern(v, path, problems),
        format: v
            .get("format")
            .and_then(Value::as_str)
            .and_then(|f| Format::parse(f).map(|p| (f.to_owned(), p))),
        max_length: u64_of(v, "maxLength"),
        min_length: u64_of(v, "minLength"),
        max_items: u64_of(v, "maxItems"),
        min_items: u64_of(v, "minItems"),
        max_properties: u64_of(v, "maxProperties"),
        min_properties: u64_of(v, "minProperties"),
        maximum: bound(v, "maximum", "exclusiveMaximum"),
        minimum: bound(v, "minimum", "exclusiveMinimum"),
        multiple_of: v.get("multipleOf").and_then(Value::as_f64),
        unique_items: flag(v, "uniqueItems"),
        list_type: list_type(v),
        default: v.get("default").cloned(),
        all_of: compile_list(v, "allOf", path, depth, card, problems),
        any_of: compile_list(v, "anyOf", path, depth, card, problems),
        one_of: compile_list(v, "oneOf", path, depth, card, problems),
        not: v.get("not").filter(|s| s.is_object()).map(|s| {
            Box::new(compile_node(
                s,
                &format!("{path}.not"),
                depth + 1,
                card,
                problems,
            ))
        }),
        rules: Vec::new(),
    };
    node.rules = super::cel::compile(v, &node, path, card, problems);
    node
}

/// The schema-wide cost limit: the rules' estimated costs, each times the
/// values it runs on, may not add up to more than
/// [`super::cel::check::TOTAL_LIMIT`]; the four costliest (of at least 1 %
/// of it) are named.
fn total_cost(costs: &[(String, f64)], problems: &mut Vec<Problem>) {
    use super::cel::check::{TOTAL_LIMIT, factor};
    let total: f64 = costs.iter().map(|(_, c)| c).sum();
    if total <= TOTAL_LIMIT {
        return;
    }
    // Those under 1 % of the limit are not named (`ObserveExpressionCost`).
    let mut costly: Vec<&(String, f64)> = costs
        .iter()
        .filter(|(_, c)| *c >= TOTAL_LIMIT / 100.0)
        .collect();
    costly.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (path, _) in costly.into_iter().take(4) {
        problems.push(Problem::new(
            path.clone(),
            "FieldValueForbidden",
            "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".into(),
        ));
    }
    problems.push(Problem::new(
        String::new(),
        "FieldValueForbidden",
        format!(
            "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of {}{}",
            factor(total, TOTAL_LIMIT),
            super::cel::check::HINT
        ),
    ));
}

impl Node {
    /// A node that accepts anything and keeps every field.
    pub(crate) fn any() -> Self {
        Self {
            ty: Type::Any,
            int_or_string: false,
            nullable: true,
            preserve_unknown: true,
            embedded: false,
            properties: BTreeMap::new(),
            additional: Additional::Absent,
            items: None,
            required: Vec::new(),
            enumeration: Vec::new(),
            pattern: None,
            format: None,
            max_length: None,
            min_length: None,
            max_items: None,
            min_items: None,
            max_properties: None,
            min_properties: None,
            maximum: None,
            minimum: None,
            multiple_of: None,
            unique_items: false,
            list_type: ListType::Atomic,
            default: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            rules: Vec::new(),
        }
    }

    /// The schema of the value under `key` of an object this node
    /// describes: a declared property, else the map's value schema.
    pub(crate) fn child(&self, key: &str) -> Option<&Node> {
        self.properties.get(key).or(match &self.additional {
            Additional::Schema(s) => Some(s),
            Additional::Absent => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_json_is_compiled_once_and_a_broken_one_each_time() {
        let v = json!({"type": "object", "properties": {"cached": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self.size() < 5"}], "maxLength": 9}}});
        let a = Schema::compile(&v).expect("compiles");
        let b = Schema::compile(&v.clone()).expect("compiles");
        assert!(
            Arc::ptr_eq(&a.root, &b.root),
            "the second compile is the first's"
        );
        let broken = json!({"type": "object", "properties": {"x": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self.nope("}]}}});
        let first = Schema::compile(&broken).expect_err("does not compile");
        let again = Schema::compile(&broken).expect_err("still reported");
        assert_eq!(first.len(), again.len());
        assert!(!first.is_empty());
    }

    #[test]
    fn every_keyword_is_compiled_once() {
        let s = Schema::compile(&json!({"type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 5, "exclusiveMaximum": true, "default": 2},
                "s": {"type": "string", "pattern": "^a+$", "format": "date-time", "maxLength": 3, "enum": ["a"]},
                "l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                      "items": {"type": "object"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}}}}}))
        .expect("compiles");
        let spec = &s.root.properties["spec"];
        let n = &spec.properties["n"];
        assert_eq!(n.ty, Type::Integer);
        assert!(n.maximum.is_some_and(|b| b.exclusive && b.value == 5.0));
        assert_eq!(n.default, Some(json!(2)));
        let st = &spec.properties["s"];
        assert!(st.pattern.as_ref().is_some_and(|(_, re)| re.is_match("aa")));
        assert_eq!(st.format.as_ref().map(|f| f.1), Some(Format::DateTime));
        assert_eq!(
            spec.properties["l"].list_type,
            ListType::Map(vec!["k".into()])
        );
        assert!(spec.child("x").is_none());
        assert!(spec.properties["m"].child("x").is_some());
        assert_eq!(s.root.required, vec!["spec".to_owned()]);
    }

    #[test]
    fn a_bad_pattern_and_a_bad_type_are_named() {
        let e = Schema::compile(&json!({"type": "object", "properties": {
            "a": {"type": "string", "pattern": "(unclosed"},
            "b": {"type": "strin"}}}))
        .expect_err("refused");
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].path, ".properties[a].pattern");
        assert_eq!(e[1].path, ".properties[b].type");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut v = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 5) {
            v = json!({"type": "object", "properties": {"a": v}});
        }
        let e = Schema::compile(&v).expect_err("too deep");
        assert!(e[0].message.contains("nest"));
    }
}
