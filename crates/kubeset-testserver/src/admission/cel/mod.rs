//! CEL validation rules (`x-kubernetes-validations`) of custom resources,
//! as kube-apiserver's apiextensions `schema/cel` package evaluates them.
//!
//! # The CEL crate
//!
//! Expressions are parsed and interpreted by the [`cel`] crate (cel-rust,
//! 0.15): the CEL grammar, the standard library and its macros (`has`,
//! `all`, `exists`, `exists_one`, `map`, `filter`), optional values (for
//! `optionalOldSelf`), and cel-go's strings extension; `matches` is
//! ours ([`regex`], RE2 syntax on the regex crate, as Go's RE2). It is
//! the maintained Rust CEL implementation (cel-rust organisation, regular releases); it has no
//! type checker and no cost estimator, so both are here ([`check`]), on
//! the parsed expression and the schema: the checks kube-apiserver's
//! compiler makes that real CRDs meet (undeclared references, undefined
//! fields of a closed object) and the static cost estimate that refuses a
//! rule too expensive at CRD creation. Its build cost, measured on this
//! workspace's 2-core machine (loaded by other builds): cel and its
//! dependencies (without chrono) take about 95 s of CPU for a release
//! build (6 min wall),
//! 14 small crates beyond what the workspace had (antlr4rust, whose
//! generated parser is the largest, borsh, uuid, bit-set, ...) plus
//! chrono and chrono-tz for `duration()`/`timestamp()`; the debug rlib of
//! cel is 19 MB.
//! Its costs at run time, in a debug build: parsing is about 3.8 ms a rule
//! (the HTTPRoute CRD's ~180 rules: 290 ms, 100 ms when parsed before, as
//! parsed rules are kept by their text); cel-rust's `matches` compiles its
//! pattern at every evaluation (about 1 ms), so ours ([`regex`]) replaces
//! it with patterns cached per thread.
//!
//! # What is evaluated
//!
//! At every schema node that has rules, on every non-null value of the
//! object ([`validate`]): `self` is the value, typed by the schema
//! ([`value`]); `oldSelf` the old value correlated with it on an update
//! (same property, same `listType=map` key). A transition rule (one that
//! uses `oldSelf`) is skipped where there is no old value, unless it sets
//! `optionalOldSelf`, when `oldSelf` is an optional. A failing rule gives
//! its `message` (or `messageExpression`'s value, or `failed rule: RULE`)
//! at the node's path (plus `fieldPath`), as the cause `reason` names
//! (`FieldValueInvalid` by default). On an update a failure of a rule that
//! does not use `oldSelf`, on a value equal to its old one, is a warning,
//! not an error (ratcheting).
//!
//! The Kubernetes CEL libraries are added function by function: [`lists`]
//! (`isSorted`, `sum`, `min`, `max`), [`regex`] (`matches`, `find`, `findAll`),
//! [`quantity`], [`url`], [`ip`] (`ip`, `cidr`, `isIP`, `isCIDR`),
//! [`format`] (`format.dns1123Label()`, ..., `format.named(name)`,
//! `validate`), [`sets`] (`sets.contains`, `sets.equivalent`,
//! `sets.intersects`), [`semver`] (`semver`, `isSemver`, `major`, ...).
//!
//! Not done: runtime cost accounting (the static estimate bounds every
//! accepted rule; it follows cel-go's model but is not cel-go's, so a rule
//! near a limit may be judged differently), rules inside `allOf`, the
//! authorizer, the image library (`image(s)`, `isImage`),
//! `indexOf`/`lastIndexOf` on lists, type checking beyond
//! references (a rule comparing a string with an int compiles here and
//! fails when run). Expressions nest at most 32 levels (cel-go: 250).

pub(crate) mod check;
mod format;
mod ip;
mod lists;
mod quantity;
mod regex;
mod semver;
mod sets;
mod stack;
mod url;
pub(crate) mod value;

pub(crate) use stack::on_compile_stack;

use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program};
use serde_json::Value as Json;

use super::schema::{Additional, ListType, Node, Problem, Sink};
use super::validate::Cause;
use crate::util::TextCache;

/// The longest a `messageExpression`'s value may be
/// (`MaxEvaluatedMessageExpressionSizeBytes`).
pub(crate) const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The environment every rule is compiled and run in.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    // The strings library is declared once, by the crate itself: an error
    // here is a bug of this build, and the rules run without it.
    let _ = env.add_extension(cel::extensions::strings);
    Arc::new(env)
});

/// How kube-apiserver names the root of a resource in a cause.
const NIL: &str = "<nil>";

/// The cause reasons a rule may name.
const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// One compiled rule of a schema node.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    program: Arc<Program>,
    source: String,
    message: String,
    message_expression: Option<Arc<Program>>,
    reason: Option<&'static str>,
    field_path: Option<String>,
    uses_old_self: bool,
    optional_old_self: bool,
}

impl Rule {
    /// The text errors name the rule by: its message, or the rule.
    fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.source.trim()
        } else {
            &self.message
        }
    }
}

/// The longest expression accepted, in characters (cel-go's
/// `expressionSizeCodePointLimit` as kube-apiserver sets it).
const MAX_EXPRESSION_CHARS: usize = 100_000;

/// The deepest nesting of brackets and conditionals accepted. cel-rust's
/// parser recurses for each level (about 130 KiB of stack a level in a
/// debug build), so nesting is bounded here and rules are compiled on a
/// thread with [`COMPILE_STACK`] bytes of stack. kube-apiserver allows
/// more (cel-go's parser stops at 250 levels); the real CRDs of
/// `../shared/crds` nest at most 6.
const MAX_NESTING: usize = 32;

/// The stack of the thread a schema's rules are compiled on.
pub(crate) const COMPILE_STACK: usize = 64 << 20;

/// The most parsed expressions kept for reuse.
const PARSED_CACHE_ENTRIES: usize = 4096;

/// Parsed expressions by their text: real CRDs repeat rules (HTTPRoute's
/// filter rules at two places, in two versions), and a test suite
/// registers the same CRDs in every server it starts. Bounded: emptied
/// when full.
static PARSED: TextCache<Arc<Program>> = TextCache::new(PARSED_CACHE_ENTRIES);

/// `source` parsed before, from [`PARSED`].
pub(crate) fn parsed(source: &str) -> Option<Arc<Program>> {
    PARSED.get(source)
}

/// `source` parsed, from [`PARSED`] when it was parsed before.
pub(crate) fn parse(source: &str) -> Result<Arc<Program>, cel::ParseErrors> {
    PARSED.get_or_build(source, || ENV.compile(source).map(Arc::new))
}

/// Refuses an expression too long or too deeply nested to parse safely.
pub(crate) fn bounded(source: &str) -> Result<(), String> {
    if source.chars().count() > MAX_EXPRESSION_CHARS {
        return Err(format!(
            "expression code point size exceeds limit: size: {}, limit {MAX_EXPRESSION_CHARS}",
            source.chars().count()
        ));
    }
    let (mut depth, mut deepest, mut quote) = (0usize, 0usize, None);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{' | '?') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_NESTING {
        return Err(format!(
            "max recursion depth exceeded: nesting {deepest} over {MAX_NESTING}"
        ));
    }
    Ok(())
}

/// Compiles the rules of node `n` (schema `v` at `path`), reporting each
/// that does not compile, or costs too much, as the real server does.
pub(crate) fn compile(
    v: &Json,
    n: &Node,
    path: &str,
    cardinality: f64,
    problems: &mut Sink,
) -> Vec<Rule> {
    let Some(rules) = v.get("x-kubernetes-validations").and_then(Json::as_array) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let at = format!("{path}.x-kubernetes-validations[{i}]");
        if let Some(rule) = compile_one(r, n, &at, cardinality, problems) {
            out.push(rule);
        }
    }
    out
}

fn compile_one(
    r: &Json,
    n: &Node,
    at: &str,
    cardinality: f64,
    problems: &mut Sink,
) -> Option<Rule> {
    let text = |k: &str| r.get(k).and_then(Json::as_str).unwrap_or_default();
    let source = text("rule");
    if source.trim().is_empty() {
        problems.push(Problem::new(
            format!("{at}.rule"),
            "FieldValueRequired",
            "Required value".into(),
        ));
        return None;
    }
    let message = text("message").trim().to_owned();
    if message.contains('\n') {
        problems.push(Problem::invalid(
            format!("{at}.message"),
            text("message"),
            "message must not contain line breaks",
        ));
    }
    let reason = reason_of(r, at, problems);
    let field_path = r
        .get("fieldPath")
        .and_then(Json::as_str)
        .map(|p| p.trim_start_matches('.').to_owned());
    if let Some(p) = &field_path
        && !check::field_path_valid(n, p)
    {
        problems.push(Problem::invalid(
            format!("{at}.fieldPath"),
            text("fieldPath"),
            "fieldPath must be a valid path: does not refer to a valid field",
        ));
    }
    if let Err(why) = bounded(source) {
        problems.push(Problem::invalid(
            format!("{at}.rule"),
            source,
            &format!("compilation failed: {why}"),
        ));
        return None;
    }
    let program = match parse(source) {
        Ok(p) => p,
        Err(e) => {
            problems.push(Problem::invalid(
                format!("{at}.rule"),
                source,
                &format!("compilation failed: ERROR: <input>: {e}"),
            ));
            return None;
        }
    };
    let uses_old_self = program.references().has_variable("oldSelf");
    if let Some(list) = problems.uncorrelatable.as_ref().filter(|_| uses_old_self) {
        let why = format!(
            "oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"
        );
        problems.push(Problem::invalid(format!("{at}.rule"), source, &why));
        return None;
    }
    let optional_old_self = r
        .get("optionalOldSelf")
        .and_then(Json::as_bool)
        .unwrap_or(false);
    let checked = check::check(program.expression(), n, optional_old_self);
    if let Err(e) = &checked {
        problems.push(Problem::invalid(
            format!("{at}.rule"),
            source,
            &format!("compilation failed: ERROR: <input>: {e}"),
        ));
        return None;
    }
    let cost = checked.unwrap_or_default();
    check::cost_problems("rule", cost, cardinality, &format!("{at}.rule"), problems);
    let message_expression =
        message_expression_of(r, n, at, cardinality, optional_old_self, problems);
    if r.get("optionalOldSelf").is_some() && !uses_old_self {
        problems.push(Problem::invalid(
            format!("{at}.optionalOldSelf"),
            "true",
            "may not be set if oldSelf is not used in rule",
        ));
    }
    Some(Rule {
        program,
        source: source.to_owned(),
        message,
        message_expression,
        reason,
        field_path,
        uses_old_self,
        optional_old_self,
    })
}

/// A rule's `reason`, one of [`REASONS`] (any other is a problem).
fn reason_of(r: &Json, at: &str, problems: &mut Sink) -> Option<&'static str> {
    let x = r.get("reason").and_then(Json::as_str)?;
    if let Some(k) = REASONS.iter().find(|k| **k == x) {
        return Some(*k);
    }
    let allowed = REASONS
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    problems.push(Problem::new(
        format!("{at}.reason"),
        "FieldValueNotSupported",
        format!("Unsupported value: \"{x}\": supported values: {allowed}"),
    ));
    None
}

/// A rule's `messageExpression`, compiled and checked as its rule is.
fn message_expression_of(
    r: &Json,
    n: &Node,
    at: &str,
    cardinality: f64,
    optional_old_self: bool,
    problems: &mut Sink,
) -> Option<Arc<Program>> {
    match r.get("messageExpression").and_then(Json::as_str) {
        Some(m) if bounded(m).is_err() => {
            let why = bounded(m).err().unwrap_or_default();
            problems.push(Problem::invalid(
                format!("{at}.messageExpression"),
                m,
                &format!("messageExpression compilation failed: {why}"),
            ));
            None
        }
        Some(m) => match parse(m) {
            Ok(p) => {
                match check::check(p.expression(), n, optional_old_self) {
                    Ok(c) => {
                        let at = format!("{at}.messageExpression");
                        check::cost_problems("messageExpression", c, cardinality, &at, problems);
                    }
                    Err(e) => problems.push(Problem::invalid(
                        format!("{at}.messageExpression"),
                        m,
                        &format!("messageExpression compilation failed: ERROR: <input>: {e}"),
                    )),
                }
                Some(p)
            }
            Err(e) => {
                problems.push(Problem::invalid(
                    format!("{at}.messageExpression"),
                    m,
                    &format!("messageExpression compilation failed: ERROR: <input>: {e}"),
                ));
                None
            }
        },
        None => None,
    }
}

/// What evaluating the rules of an object found.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The causes of the 422.
    pub(crate) causes: Vec<Cause>,
    /// Failures ratcheted into warnings.
    pub(crate) warnings: Vec<String>,
}

/// Evaluates every rule of `root` on `obj`, `old` being the stored object
/// on an update.
pub(crate) fn validate(root: &Node, obj: &Json, old: Option<&Json>) -> Outcome {
    let mut out = Outcome::default();
    walk(root, obj, old, "", true, false, &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[allow(clippy::too_many_arguments)]
fn walk(
    n: &Node,
    v: &Json,
    old: Option<&Json>,
    path: &str,
    root: bool,
    parent_equal: bool,
    out: &mut Outcome,
) {
    if v.is_null() {
        return;
    }
    let equal = old.map_or(parent_equal, |o| o == v);
    if !n.rules.is_empty() {
        rules(n, v, old, path, root, equal, out);
    }
    match v {
        Json::Object(m) => {
            let old_m = old.and_then(Json::as_object);
            for (k, x) in m {
                let s = match n.properties.get(k) {
                    Some(s) => s,
                    None => match &n.additional {
                        Additional::Schema(s) => s,
                        _ => continue,
                    },
                };
                let sub = if n.additional_is_map(k) {
                    format!("{path}[{k}]")
                } else {
                    join(path, k)
                };
                let o = old_m.and_then(|o| o.get(k));
                walk(s, x, o, &sub, s.embedded, equal, out);
            }
        }
        Json::Array(a) => {
            let Some(items) = n.items.as_deref() else {
                return;
            };
            let olds = correlate(n, old);
            for (i, x) in a.iter().enumerate() {
                let o = olds.as_ref().and_then(|os| {
                    os.iter()
                        .find(|(k, _)| Some(k) == map_key(n, x).as_ref())
                        .map(|(_, o)| *o)
                });
                walk(
                    items,
                    x,
                    o,
                    &format!("{path}[{i}]"),
                    items.embedded,
                    equal,
                    out,
                );
            }
        }
        _ => {}
    }
}

/// The values of a `listType=map` item's keys.
type MapKey = Vec<Option<Json>>;

/// The key of a `listType=map` item.
fn map_key(n: &Node, x: &Json) -> Option<MapKey> {
    let ListType::Map(keys) = &n.list_type else {
        return None;
    };
    let m = x.as_object()?;
    Some(keys.iter().map(|k| m.get(k).cloned()).collect())
}

/// Old items by key: only `listType=map` items correlate.
fn correlate<'a>(n: &Node, old: Option<&'a Json>) -> Option<Vec<(MapKey, &'a Json)>> {
    let a = old?.as_array()?;
    Some(a.iter().filter_map(|x| Some((map_key(n, x)?, x))).collect())
}

thread_local! {
    /// The functions every rule may call, registered once per thread; a
    /// node's evaluation binds `self` and `oldSelf` in a scope of it.
    pub(crate) static BASE: Context<'static, 'static> = {
        let mut ctx = Context::with_env(Arc::clone(&ENV));
        register_libraries(&mut ctx);
        ctx
    };
}

/// Where a node's rules report: its path (`<nil>` at the root, as the
/// real server names a nil `field.Path`), its type's name, whether its
/// value equals its old one.
struct Site<'a> {
    path: &'a str,
    type_name: &'static str,
    ratchet: bool,
}

/// Runs the rules of node `n` on `v`.
fn rules(
    n: &Node,
    v: &Json,
    old: Option<&Json>,
    path: &str,
    root: bool,
    equal: bool,
    out: &mut Outcome,
) {
    let conv = |x: &Json| {
        if root {
            value::root_to_cel(n, x)
        } else {
            value::to_cel(Some(n), x)
        }
    };
    let this = conv(v);
    let old_val = old.map(conv);
    let site = Site {
        path: if path.is_empty() { NIL } else { path },
        type_name: n.ty.name(),
        ratchet: equal && old.is_some(),
    };
    BASE.with(|base| {
        let mut plain = base.new_inner_scope();
        plain.add_variable_from_value("self", this.clone());
        if let Some(o) = &old_val {
            plain.add_variable_from_value("oldSelf", o.clone());
        }
        let mut optional = base.new_inner_scope();
        if n.rules.iter().any(|r| r.optional_old_self) {
            optional.add_variable_from_value("self", this);
            optional.add_variable_from_value("oldSelf", value::optional(old_val));
        }
        for rule in &n.rules {
            if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
                continue; // a transition rule waits for an old value
            }
            let ctx = if rule.optional_old_self {
                &optional
            } else {
                &plain
            };
            one_rule(rule, ctx, &site, path, out);
        }
    });
}

/// Evaluates one rule in `ctx` and reports its failure.
fn one_rule(rule: &Rule, ctx: &Context<'_, '_>, site: &Site<'_>, path: &str, out: &mut Outcome) {
    match rule.program.execute(ctx) {
        Ok(cel::Value::Bool(true)) => return,
        Ok(cel::Value::Bool(false)) => {}
        Ok(other) => {
            let text = format!(
                "no such overload: rule evaluated to {} evaluating rule: {}",
                other.type_of(),
                rule.error_string()
            );
            return out.causes.push(invalid(site.path, site.type_name, &text));
        }
        Err(e) => {
            let text = format!("{} evaluating rule: {}", go_error(&e), rule.error_string());
            return out.causes.push(invalid(site.path, site.type_name, &text));
        }
    }
    let detail = rule
        .message_expression
        .as_ref()
        .and_then(|m| message(m, ctx))
        .unwrap_or_else(|| {
            if rule.message.is_empty() {
                format!("failed rule: {}", rule.source.trim())
            } else {
                rule.message.clone()
            }
        });
    let at = match &rule.field_path {
        Some(p) => join(path, p),
        None => site.path.to_owned(),
    };
    let cause = for_reason(&at, site.type_name, &detail, rule.reason);
    if !rule.uses_old_self && site.ratchet {
        out.warnings
            .push(format!("{}: {}", cause.field, cause.message));
    } else {
        out.causes.push(cause);
    }
}

/// A `messageExpression`'s value, when it is a usable message.
fn message(m: &Program, ctx: &Context<'_, '_>) -> Option<String> {
    match m.execute(ctx) {
        Ok(cel::Value::String(s)) => {
            let t = s.trim();
            (!t.is_empty() && !t.contains('\n') && t.len() <= MAX_MESSAGE_BYTES)
                .then(|| t.to_owned())
        }
        _ => None,
    }
}

/// cel-go's text for the errors a rule meets at run time.
pub(crate) fn go_error(e: &cel::ExecutionError) -> String {
    match e {
        cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        // A Kubernetes library's error is its text, as cel-go's
        // `types.WrapErr` keeps it (`semver('v1')`: `Invalid character(s)
        // found in major number "v1"`).
        cel::ExecutionError::FunctionError { message, .. } => message.clone(),
        other => {
            let s = other.to_string();
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_lowercase().chain(c).collect())
                .unwrap_or_default()
        }
    }
}

fn invalid(path: &str, type_name: &str, detail: &str) -> Cause {
    Cause {
        field: path.to_owned(),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: \"{type_name}\": {detail}"),
    }
}

/// `fieldErrorForReason`.
fn for_reason(path: &str, type_name: &str, detail: &str, reason: Option<&'static str>) -> Cause {
    let (reason, message) = match reason {
        Some(r @ "FieldValueForbidden") => (r, format!("Forbidden: {detail}")),
        Some(r @ "FieldValueRequired") => (r, format!("Required value: {detail}")),
        Some(r @ "FieldValueDuplicate") => (r, format!("Duplicate value: \"{type_name}\"")),
        _ => return invalid(path, type_name, detail),
    };
    Cause {
        field: path.to_owned(),
        reason,
        message,
    }
}

/// The Kubernetes CEL libraries cel-rust does not have.
fn register_libraries(ctx: &mut Context<'_, '_>) {
    lists::register(ctx);
    regex::register(ctx);
    quantity::register(ctx);
    url::register(ctx);
    ip::register(ctx);
    format::register(ctx);
    sets::register(ctx);
    semver::register(ctx);
}

impl Node {
    /// Whether key `k` of this object is a map key (an
    /// `additionalProperties` value), named `path[k]`.
    fn additional_is_map(&self, k: &str) -> bool {
        !self.properties.contains_key(k) && matches!(self.additional, Additional::Schema(_))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::schema::Schema;

    fn schema(v: Json) -> Schema {
        Schema::compile(&v).unwrap_or_else(|p| panic!("{p:?}"))
    }

    fn fields(o: &Outcome) -> Vec<(&str, &str)> {
        o.causes
            .iter()
            .map(|c| (c.field.as_str(), c.reason))
            .collect()
    }

    #[test]
    fn a_failing_rule_is_a_cause_at_its_node() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min above max"},
                {"rule": "self.name.startsWith('a')", "reason": "FieldValueForbidden", "fieldPath": ".name"}],
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"},
                "name": {"type": "string", "maxLength": 10}}}}}),
        );
        let ok = validate(
            &s.root,
            &json!({"spec": {"min": 1, "max": 2, "name": "ab"}}),
            None,
        );
        assert!(ok.causes.is_empty(), "{ok:?}");
        let bad = validate(
            &s.root,
            &json!({"spec": {"min": 3, "max": 2, "name": "b"}}),
            None,
        );
        assert_eq!(
            fields(&bad),
            [
                ("spec", "FieldValueInvalid"),
                ("spec.name", "FieldValueForbidden")
            ]
        );
        assert_eq!(
            bad.causes[0].message,
            "Invalid value: \"object\": min above max"
        );
        assert_eq!(
            bad.causes[1].message,
            "Forbidden: failed rule: self.name.startsWith('a')"
        );
    }

    #[test]
    fn transition_rules_need_an_old_value_unless_optional() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string", "maxLength": 5,
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]},
                "b": {"type": "string", "maxLength": 5, "x-kubernetes-validations": [
                    {"rule": "oldSelf.hasValue() || self == 'new'", "optionalOldSelf": true}]}}}}}),
        );
        let new = json!({"spec": {"a": "x", "b": "new"}});
        assert!(validate(&s.root, &new, None).causes.is_empty());
        let changed = json!({"spec": {"a": "y", "b": "new"}});
        assert_eq!(
            fields(&validate(&s.root, &changed, Some(&new))),
            [("spec.a", "FieldValueInvalid")]
        );
        let created = json!({"spec": {"a": "x", "b": "other"}});
        assert_eq!(
            fields(&validate(&s.root, &created, None)),
            [("spec.b", "FieldValueInvalid")]
        );
    }

    #[test]
    fn an_unchanged_value_failing_a_rule_is_a_warning() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"n": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 5"}]},
                "m": {"type": "integer"}}}}}),
        );
        let old = json!({"spec": {"n": 9, "m": 1}});
        let o = validate(&s.root, &json!({"spec": {"n": 9, "m": 2}}), Some(&old));
        assert!(o.causes.is_empty());
        assert_eq!(
            o.warnings,
            ["spec.n: Invalid value: \"integer\": failed rule: self < 5"]
        );
    }

    #[test]
    fn the_kubernetes_libraries() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "[1, 2, 3].isSorted() && [1, 2].sum() == 3 && [4, 2].min() == 2"},
                {"rule": "'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]').size() == 2"},
                {"rule": "quantity(self.q).isGreaterThan(quantity('1Gi')) && quantity('1500m').asApproximateFloat() == 1.5"},
                {"rule": "isIP(self.ip) && ip(self.ip).family() == 4 && cidr('10.0.0.0/8').containsIP(self.ip)"},
                {"rule": "isURL(self.u) && url(self.u).getHostname() == 'example.com' && url(self.u).getPort() == '8080'"}],
            "properties": {"q": {"type": "string", "maxLength": 20}, "ip": {"type": "string", "maxLength": 40},
                "u": {"type": "string", "maxLength": 100}}}}}),
        );
        let ok =
            json!({"spec": {"q": "2Gi", "ip": "10.1.2.3", "u": "https://example.com:8080/x?a=b"}});
        let o = validate(&s.root, &ok, None);
        assert!(o.causes.is_empty(), "{o:?}");
        let bad = json!({"spec": {"q": "1Mi", "ip": "192.168.0.1", "u": "https://other.org/"}});
        assert_eq!(validate(&s.root, &bad, None).causes.len(), 3);
    }

    #[test]
    fn the_format_sets_and_semver_libraries() {
        let s = schema(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "!format.dns1123Label().validate(self.name).hasValue()", "fieldPath": ".name"},
                {"rule": "format.named(self.format).value().validate(self.value).orValue([]) == self.errors",
                 "fieldPath": ".value"},
                {"rule": "!format.named('nope').hasValue() && format.named('uuid').hasValue()"},
                {"rule": "sets.contains(self.l, ['a']) && sets.equivalent([1, 2.0], [2, 1u]) && !sets.intersects([1], [2])"},
                {"rule": "isSemver(self.v) && semver(self.v).major() == 1 && semver(self.v).isLessThan(semver('1.10.0'))",
                 "fieldPath": ".v"},
                {"rule": "isSemver('v1.2', true) && !isSemver('v1.2') && semver('01.2.3', true).compareTo(semver('1.2.3')) == 0"},
                {"rule": "quantity('1Gi').isGreaterThan(quantity('1Mi')) && quantity('1').compareTo(quantity('2')) == -1"}],
            "properties": {"name": {"type": "string", "maxLength": 70}, "format": {"type": "string", "maxLength": 30},
                "value": {"type": "string", "maxLength": 100},
                "errors": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 300}},
                "l": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 5}},
                "v": {"type": "string", "maxLength": 30}}}}}),
        );
        let ok = json!({"spec": {"name": "my-name", "format": "uri", "value": "example.com",
            "errors": ["parse \"example.com\": invalid URI for request"], "l": ["b", "a"], "v": "1.9.0-rc.1"}});
        let o = validate(&s.root, &ok, None);
        assert!(o.causes.is_empty(), "{o:?}");
        let bad = json!({"spec": {"name": "a.b", "format": "dns1035Label", "value": "1a",
            "errors": [], "l": ["b"], "v": "1.10.0"}});
        assert_eq!(
            fields(&validate(&s.root, &bad, None)),
            [
                ("spec.name", "FieldValueInvalid"),
                ("spec.value", "FieldValueInvalid"),
                ("spec", "FieldValueInvalid"),
                ("spec.v", "FieldValueInvalid")
            ]
        );
    }

    #[test]
    fn a_rule_that_does_not_compile_or_costs_too_much_is_a_problem() {
        let bad = |rules: Json, items: Json| {
            Schema::compile(
                &json!({"type": "object", "properties": {"l": {"type": "array",
                "items": items, "x-kubernetes-validations": rules}}}),
            )
            .expect_err("refused")
            .into_iter()
            .map(|p| (p.path, p.reason))
            .collect::<Vec<_>>()
        };
        let s = json!({"type": "string"});
        assert_eq!(
            bad(json!([{"rule": "self.all(x, "}]), s.clone()),
            [(
                ".properties[l].x-kubernetes-validations[0].rule".to_owned(),
                "FieldValueInvalid"
            )]
        );
        assert_eq!(
            bad(json!([{"rule": "nope == 1"}]), s.clone()),
            [(
                ".properties[l].x-kubernetes-validations[0].rule".to_owned(),
                "FieldValueInvalid"
            )]
        );
        let costly = bad(json!([{"rule": "self.all(a, self.all(b, a == b))"}]), s);
        assert_eq!(
            costly[0],
            (
                ".properties[l].x-kubernetes-validations[0].rule".to_owned(),
                "FieldValueForbidden"
            )
        );
        assert_eq!(costly.last().map(|p| p.0.as_str()), Some(""));
    }

    #[test]
    fn the_real_crds_compile() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/crds");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return; // the shared specs are not beside this checkout
        };
        let mut rules = 0;
        for e in entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        {
            let crd: Json =
                serde_norway::from_str(&std::fs::read_to_string(e.path()).unwrap_or_default())
                    .unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                let s = Schema::compile(&v["schema"]["openAPIV3Schema"])
                    .unwrap_or_else(|p| panic!("{}: {p:?}", e.path().display()));
                rules += usize::from(s.has_rules);
            }
        }
        assert!(rules > 0);
    }
}

#[cfg(test)]
mod hostile {
    use serde_json::json;

    use crate::admission::schema::Schema;

    fn compile(rule: &str) -> Result<Schema, Vec<crate::admission::schema::Problem>> {
        Schema::compile(&json!({"type": "object",
            "properties": {"a": {"type": "string", "maxLength": 5}},
            "x-kubernetes-validations": [{"rule": rule}]}))
    }

    /// The outcome of `s` (a schema from `compile`) on `{"a": "x"}`.
    fn run(s: &Schema) -> super::Outcome {
        super::validate(&s.root, &json!({"a": "x"}), None)
    }

    #[test]
    fn nesting_is_bounded_and_what_is_accepted_runs() {
        for depth in [33, 5_000, 40_000] {
            let rule = format!("{}true{}", "(".repeat(depth), ")".repeat(depth));
            let p = compile(&rule).expect_err("too deep");
            assert_eq!(p[0].path, ".x-kubernetes-validations[0].rule");
            assert!(
                p[0].message.contains("max recursion depth exceeded"),
                "{}",
                p[0].message
            );
        }
        let lists = format!("{}1{}.size() > 0", "[".repeat(32), "]".repeat(32));
        let s = compile(&lists).expect("32 levels compile");
        assert!(run(&s).causes.is_empty());
    }

    #[test]
    fn length_is_bounded() {
        let rule = vec!["self.a == 'x'"; 10_000].join(" && ");
        let p = compile(&rule).expect_err("too long");
        assert!(p[0].message.contains("exceeds limit"), "{}", p[0].message);
        let rule = vec!["self.a == 'x'"; 1_000].join(" && ");
        let s = compile(&rule).expect("a long flat rule compiles");
        assert!(run(&s).causes.is_empty());
    }

    #[test]
    fn a_bad_pattern_at_run_time_is_a_cause() {
        let s = compile("self.a.matches('(')").expect("compiles: the pattern is checked when run");
        let o = run(&s);
        assert_eq!(o.causes.len(), 1);
        assert!(
            o.causes[0].message.contains("evaluating rule"),
            "{}",
            o.causes[0].message
        );
    }
}
