//! What kube-apiserver's CEL compiler checks of a rule that cel-rust does
//! not: references (an undeclared identifier, a field a closed object does
//! not declare) and the static cost estimate.
//!
//! The estimate follows cel-go's cost model as kube-apiserver configures
//! it (`checker/cost.go` with the Kubernetes size estimator): every
//! identifier, selection and call costs 1; string equality and
//! `contains`/`startsWith`/`endsWith` cost a tenth of the strings' sizes,
//! `matches` the string's tenth times a quarter of the pattern's length; a
//! comprehension costs its body once per element of its range. Sizes come
//! from the schema: `maxLength`, `maxItems`, `maxProperties`, or, when
//! unbounded, what fits in a 3 MiB request (`maxRequestSizeBytes`) at the
//! element's smallest serialized size. A rule whose estimate exceeds
//! 10⁷ (`StaticEstimatedCostLimit`) is refused; so is a schema whose rules
//! add up, each times the number of values it runs on, over 10⁸
//! (`StaticEstimatedCRDCostLimit`). The factor in the message is this
//! estimate's, close to but not always cel-go's.

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

use crate::admission::schema::{Additional, Node, Problem, Sink, Type};

/// `StaticEstimatedCostLimit`: the most one rule may cost.
pub(crate) const RULE_LIMIT: f64 = 10_000_000.0;
/// `StaticEstimatedCRDCostLimit`: the most a schema's rules may cost.
pub(crate) const TOTAL_LIMIT: f64 = 100_000_000.0;
/// `maxRequestSizeBytes`: what an unbounded value can hold.
const MAX_REQUEST: f64 = 3.0 * 1024.0 * 1024.0;
/// The size of a value cel-go knows nothing of (a string made by
/// `string()`): the largest it counts.
const UNKNOWN_SIZE: f64 = u64::MAX as f64;
/// Identifiers that name types.
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];
/// Namespaces of functions (`optional.of`, `strings.quote`, ...).
const NAMESPACES: &[&str] = &["optional", "strings", "math", "lists", "sets", "format"];

/// What a sub-expression is: its cost so far, its schema node when it has
/// one, and its largest size (length, items, entries).
#[derive(Clone, Copy)]
struct Est<'a> {
    cost: f64,
    node: Option<&'a Node>,
    size: f64,
}

impl Est<'_> {
    fn plain(cost: f64) -> Self {
        Self::sized(cost, 1.0)
    }

    /// A value of no schema node, of `size` elements (or bytes).
    fn sized(cost: f64, size: f64) -> Self {
        Est {
            cost,
            node: None,
            size,
        }
    }
}

struct Scope<'a> {
    vars: Vec<(String, Option<&'a Node>, f64)>,
}

/// The largest size a value of `n` can have.
pub(crate) fn max_size(n: &Node) -> f64 {
    let bound = |b: Option<u64>| b.map(|b| b as f64);
    match n.ty {
        Type::String => bound(n.max_length).unwrap_or(MAX_REQUEST - 2.0),
        Type::Array => bound(n.max_items).unwrap_or_else(|| {
            let min = n.items.as_deref().map_or(1.0, min_serialized);
            ((MAX_REQUEST - 2.0) / (min + 1.0)).floor()
        }),
        Type::Object => bound(n.max_properties).unwrap_or_else(|| match &n.additional {
            // `"":` and the smallest value, and a comma.
            Additional::Schema(s) => ((MAX_REQUEST - 2.0) / (min_serialized(s) + 4.0)).floor(),
            Additional::Absent => n.properties.len().max(1) as f64,
        }),
        _ => 1.0,
    }
}

/// The fewest bytes a value of `n` serializes to.
fn min_serialized(n: &Node) -> f64 {
    match n.ty {
        Type::String | Type::Object | Type::Array => 2.0,
        Type::Boolean => 4.0,
        _ => 1.0,
    }
}

/// Checks `e`, a rule of node `n`, and estimates its cost.
pub(crate) fn check(e: &IdedExpr, n: &Node, optional_old_self: bool) -> Result<f64, String> {
    let size = max_size(n);
    let mut scope = Scope {
        vars: vec![("self".into(), Some(n), size)],
    };
    if !optional_old_self {
        scope.vars.push(("oldSelf".into(), Some(n), size));
    } else {
        scope.vars.push(("oldSelf".into(), None, 1.0));
    }
    Ok(walk(e, &mut scope)?.cost)
}

fn lookup<'a>(scope: &Scope<'a>, name: &str) -> Option<Est<'a>> {
    scope
        .vars
        .iter()
        .rev()
        .find(|(n, _, _)| n == name)
        .map(|(_, node, size)| Est {
            cost: 1.0,
            node: *node,
            size: *size,
        })
}

fn walk<'a>(e: &IdedExpr, scope: &mut Scope<'a>) -> Result<Est<'a>, String> {
    Ok(match &e.expr {
        Expr::Unspecified => Est::plain(0.0),
        Expr::Literal(LiteralValue::String(s)) => Est::sized(0.0, s.inner().len() as f64),
        Expr::Literal(_) => Est::plain(0.0),
        Expr::Ident(name) => match lookup(scope, name) {
            Some(est) => est,
            None if TYPE_NAMES.contains(&name.as_str()) || NAMESPACES.contains(&name.as_str()) => {
                Est::plain(1.0)
            }
            None => {
                return Err(format!(
                    "undeclared reference to '{name}' (in container '')"
                ));
            }
        },
        Expr::Select(s) => {
            let operand = walk(&s.operand, scope)?;
            let node = match operand.node {
                Some(n) => Some(field(n, &s.field)?),
                None => None,
            }
            .flatten();
            Est {
                cost: operand.cost + 1.0,
                node,
                size: node.map_or(MAX_REQUEST - 2.0, max_size),
            }
        }
        Expr::List(l) => {
            let mut cost = 10.0;
            let mut node = None;
            for x in &l.elements {
                let est = walk(x, scope)?;
                cost += est.cost;
                node = node.or(est.node);
            }
            Est::sized(cost, l.elements.len() as f64)
        }
        Expr::Map(m) => {
            let mut cost = 30.0;
            for x in &m.entries {
                if let EntryExpr::MapEntry(me) = &x.expr {
                    cost += walk(&me.key, scope)?.cost + walk(&me.value, scope)?.cost;
                }
            }
            Est::sized(cost, m.entries.len() as f64)
        }
        Expr::Struct(s) => {
            let mut cost = 40.0;
            for x in &s.entries {
                if let EntryExpr::StructField(f) = &x.expr {
                    cost += walk(&f.value, scope)?.cost;
                }
            }
            Est::plain(cost)
        }
        Expr::Call(c) => call(c, scope)?,
        Expr::Comprehension(c) => {
            let range = walk(&c.iter_range, scope)?;
            let elem = range.node.and_then(|n| match n.ty {
                Type::Array => n.items.as_deref(),
                _ => None,
            });
            let elem_size = match (range.node.map(|n| n.ty), elem) {
                (_, Some(e)) => max_size(e),
                // A map's keys: the declared key type carries no size, and
                // kube-apiserver's estimator counts them as empty.
                (Some(Type::Object), None) => 1.0,
                _ => MAX_REQUEST - 2.0,
            };
            let init = walk(&c.accu_init, scope)?;
            let mark = scope.vars.len();
            scope.vars.push((c.iter_var.clone(), elem, elem_size));
            if let Some(v2) = &c.iter_var2 {
                scope.vars.push((v2.clone(), None, MAX_REQUEST - 2.0));
            }
            scope.vars.push((c.accu_var.clone(), None, range.size));
            let body = walk(&c.loop_cond, scope)?.cost + walk(&c.loop_step, scope)?.cost;
            let result = walk(&c.result, scope)?;
            scope.vars.truncate(mark);
            Est::sized(
                range.cost + init.cost + range.size * body + result.cost,
                range.size,
            )
        }
    })
}

/// The schema of field `f` of `n`; an error when `n` is an object that
/// cannot have it.
fn field<'a>(n: &'a Node, f: &str) -> Result<Option<&'a Node>, String> {
    if let Some(c) = n.properties.get(&super::value::unescape(f)) {
        return Ok(Some(c));
    }
    if let Additional::Schema(s) = &n.additional {
        return Ok(Some(s));
    }
    // A resource's `apiVersion`, `kind` and `metadata` are fields at its
    // root whether its schema names them or not.
    let meta = matches!(f, "apiVersion" | "kind" | "metadata");
    let closed = n.ty == Type::Object
        && !n.preserve_unknown
        && !n.embedded
        && !n.properties.is_empty()
        && !meta;
    if closed {
        return Err(format!("undefined field '{f}'"));
    }
    Ok(None)
}

fn call<'a>(c: &cel::common::ast::CallExpr, scope: &mut Scope<'a>) -> Result<Est<'a>, String> {
    let target = match &c.target {
        Some(t) => Some(walk(t, scope)?),
        None => None,
    };
    let mut args = Vec::with_capacity(c.args.len());
    for a in &c.args {
        args.push(walk(a, scope)?);
    }
    let sum: f64 = target.iter().chain(args.iter()).map(|e| e.cost).sum();
    let tenth = |x: f64| (x * 0.1).ceil();
    let subject = target.or_else(|| args.first().copied());
    let subject_size = subject.map_or(1.0, |s| s.size);
    let other_size = if target.is_some() {
        args.first()
    } else {
        args.get(1)
    }
    .map_or(1.0, |s| s.size);
    let namespace = match c.target.as_deref().map(|t| &t.expr) {
        Some(Expr::Ident(n)) if NAMESPACES.contains(&n.as_str()) => Some(n.as_str()),
        _ => None,
    };
    if let (Some("sets"), [a, b]) = (namespace, args.as_slice()) {
        // Every element of one list against the other's.
        return Ok(Est::plain(sum + 1.0 + a.size * b.size));
    }
    let extra = match c.func_name.as_str() {
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => tenth(subject_size.min(other_size)),
        "contains" | "startsWith" | "endsWith" => tenth(subject_size) * tenth(other_size).max(1.0),
        "matches" | "find" | "findAll" => tenth(subject_size) * (other_size * 0.25).ceil().max(1.0),
        "@in" => other_size,
        "_+_" => tenth(subject_size + other_size),
        "lowerAscii" | "upperAscii" | "trim" | "split" | "replace" | "join" | "indexOf"
        | "lastIndexOf" => tenth(subject_size),
        "isSorted" | "sum" | "min" | "max" => subject_size,
        _ => 0.0,
    };
    let node = match c.func_name.as_str() {
        "_[_]" => subject.and_then(|s| s.node).and_then(|n| match n.ty {
            Type::Array => n.items.as_deref(),
            _ => match &n.additional {
                Additional::Schema(s) => Some(&**s),
                Additional::Absent => None,
            },
        }),
        "_?_:_" => args.get(1).and_then(|a| a.node),
        _ => None,
    };
    let size = match c.func_name.as_str() {
        "_?_:_" => args.iter().skip(1).map(|a| a.size).fold(1.0, f64::max),
        "_+_" => subject_size + other_size,
        "filter" | "map" | "lowerAscii" | "upperAscii" | "trim" | "split" | "findAll" | "find"
        | "substring" | "replace" | "join" => subject_size,
        "string" => UNKNOWN_SIZE,
        "_[_]" => node.map_or(MAX_REQUEST - 2.0, max_size),
        // Booleans and numbers.
        _ => 1.0,
    };
    Ok(Est {
        cost: sum + 1.0 + extra,
        node,
        size,
    })
}

/// The problems of a rule's `cost`, the rule running `cardinality` times.
/// `what` is `rule` or `messageExpression`.
///
/// The limit is on the cost of all the rule's evaluations: its cost times
/// the number of values it runs on (`getExpressionCost`).
pub(crate) fn cost_problems(what: &str, cost: f64, cardinality: f64, at: &str, sink: &mut Sink) {
    let cost = cost * cardinality;
    if cost > RULE_LIMIT {
        sink.problems.push(Problem::new(
            at.to_owned(),
            "FieldValueForbidden",
            format!(
                "Forbidden: estimated {what} cost exceeds budget by factor of {}{HINT}",
                factor(cost, RULE_LIMIT)
            ),
        ));
    }
    sink.costs.push((at.to_owned(), cost));
}

/// What the real server's cost messages suggest.
pub(crate) const HINT: &str = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

/// cel's `getCostErrorMessage` factor.
pub(crate) fn factor(cost: f64, limit: f64) -> String {
    let f = cost / limit;
    if f > 100.0 {
        "more than 100x".into()
    } else {
        format!("{f:.1}x")
    }
}

/// Whether `path` (a rule's `fieldPath`, without its leading dot) names a
/// field of `n`: `a.b` or `a['b']` steps through properties or map keys.
pub(crate) fn field_path_valid(n: &Node, path: &str) -> bool {
    let mut node = n;
    let mut rest = path;
    while !rest.is_empty() {
        let (name, next) = if let Some(r) = rest.strip_prefix("['") {
            match r.find("']") {
                Some(end) => (&r[..end], &r[end + 2..]),
                None => return false,
            }
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        node = match node.properties.get(name) {
            Some(c) => c,
            None => match &node.additional {
                Additional::Schema(s) => s,
                Additional::Absent => return false,
            },
        };
        rest = next.strip_prefix('.').unwrap_or(next);
    }
    true
}
