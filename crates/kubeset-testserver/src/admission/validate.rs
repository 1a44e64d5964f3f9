//! Validation of a custom resource against its compiled schema, as
//! kube-apiserver's `customResourceStrategy.Validate` does it: the
//! OpenAPI value validations (kube-openapi's `validate` package, whose
//! errors `kubeOpenAPIResultToFieldErrors` turns into causes), then the
//! embedded resources' `apiVersion`/`kind`, then the uniqueness of
//! `listType=set` items and `listType=map` keys. Every error of the object
//! is reported, each as the real server's cause: its `field` path
//! (`spec.ports[0].port`), `reason` and message.
//!
//! On an update, errors of values that did not change are not reported
//! (CRD validation ratcheting, on by default since 1.30): a node whose new
//! value equals the old one correlated with it (same property, same
//! `listType=map` key) is skipped.
//!
//! Differences kept: go-openapi visits an object's properties in Go map
//! order (random between requests); here they are visited in key order, so
//! the causes are the real server's set in a stable order.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::format;
use super::schema::{Additional, ListType, Node, Type};

/// One cause of a 422 Invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    pub(crate) field: String,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
}

const INVALID: &str = "FieldValueInvalid";
const TYPE_INVALID: &str = "FieldValueTypeInvalid";

/// Every cause `v` fails against `root` (a resource's schema), with `old`
/// the stored object on an update.
pub(crate) fn validate(root: &Node, v: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    node(root, v, old, "", &mut out);
    embedded(root, v, old, "", &mut out);
    lists(root, v, "", &mut out);
    out
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Go's `%q`-like quoting of a string (JSON's escapes are the same for
/// what matters here).
fn quote(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A bad value as `field.Error` prints it: strings quoted, numbers and
/// booleans plain, anything else as JSON.
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Null => "\"null\"".to_owned(),
        other => other.to_string(),
    }
}

fn push(out: &mut Vec<Cause>, field: &str, reason: &'static str, message: String) {
    out.push(Cause {
        field: field.to_owned(),
        reason,
        message,
    });
}

fn invalid(out: &mut Vec<Cause>, path: &str, v: &Value, text: String) {
    push(
        out,
        path,
        INVALID,
        format!("Invalid value: {}: {text}", go_value(v)),
    );
}

/// The JSON type go-openapi infers for a value.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An `f64` that is a whole number JSON can carry exactly.
fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0
}

fn node(n: &Node, v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    if old == Some(v) {
        return; // ratcheting: unchanged values are not validated again
    }
    type_check(n, v, path, out);
    if v.is_null() {
        enumeration(n, v, path, out);
        return;
    }
    combinators(n, v, path, out);
    if let Value::String(s) = v {
        string(n, s, v, path, out);
        if let Some((name, f)) = &n.format
            && !format::check(*f, s)
        {
            push(
                out,
                path,
                TYPE_INVALID,
                format!(
                    "Invalid value: {}: {path} in body must be of type {name}: {}",
                    quote(s),
                    quote(s)
                ),
            );
        }
    }
    if let Value::Number(_) = v {
        number(n, v, path, out);
    }
    if let Value::Array(a) = v {
        array(n, a, v, old, path, out);
    }
    enumeration(n, v, path, out);
    if let Value::Object(m) = v {
        object(n, m, old, path, out);
    }
}

fn type_check(n: &Node, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let declared = if n.int_or_string {
        "integer,string"
    } else if n.ty == Type::Any {
        return;
    } else {
        n.ty.name()
    };
    let actual = type_of(v);
    let ok = match v {
        Value::Null => n.nullable,
        // go-openapi's quirk: a string or array passes the type check of
        // a non-numeric node that declares a format.
        Value::String(_) | Value::Array(_)
            if n.format.is_some() && !matches!(n.ty, Type::Integer | Type::Number) =>
        {
            true
        }
        Value::Number(x) if x.is_f64() => {
            n.ty == Type::Number
                || ((n.ty == Type::Integer || n.int_or_string)
                    && x.as_f64().is_some_and(is_json_integer))
        }
        Value::Number(_) => matches!(n.ty, Type::Integer | Type::Number) || n.int_or_string,
        Value::String(_) => n.ty == Type::String || n.int_or_string,
        _ => n.ty.name() == actual,
    };
    if !ok {
        push(
            out,
            path,
            TYPE_INVALID,
            format!(
                "Invalid value: {}: {path} in body must be of type {declared}: {}",
                quote(actual),
                quote(actual)
            ),
        );
    }
}

fn combinators(n: &Node, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let run = |s: &Node| {
        let mut r = Vec::new();
        node(s, v, None, path, &mut r);
        r
    };
    let nil = "<nil>";
    let composite = |out: &mut Vec<Cause>, text: String| {
        push(out, nil, INVALID, format!("Invalid value: \"\": {text}"));
    };
    if !n.all_of.is_empty() {
        let mut valid = 0;
        for s in &n.all_of {
            let r = run(s);
            valid += usize::from(r.is_empty());
            out.extend(r);
        }
        if valid != n.all_of.len() {
            let extra = if valid == 0 { ". None validated" } else { "" };
            composite(
                out,
                format!(
                    "{} must validate all the schemas (allOf){extra}",
                    quote(path)
                ),
            );
        }
    }
    if !n.one_of.is_empty() {
        let results: Vec<Vec<Cause>> = n.one_of.iter().map(run).collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid != 1 {
            let extra = if valid == 0 {
                "Found none valid".to_owned()
            } else {
                format!("Found {valid} valid alternatives")
            };
            composite(
                out,
                format!(
                    "{} must validate one and only one schema (oneOf). {extra}",
                    quote(path)
                ),
            );
            if valid == 0 {
                out.extend(results.into_iter().min_by_key(Vec::len).unwrap_or_default());
            }
        }
    }
    if !n.any_of.is_empty() {
        let results: Vec<Vec<Cause>> = n.any_of.iter().map(run).collect();
        if results.iter().all(|r| !r.is_empty()) {
            composite(
                out,
                format!("{} must validate at least one schema (anyOf)", quote(path)),
            );
            out.extend(results.into_iter().min_by_key(Vec::len).unwrap_or_default());
        }
    }
    if let Some(s) = &n.not
        && run(s).is_empty()
    {
        composite(
            out,
            format!("{} must not validate the schema (not)", quote(path)),
        );
    }
}

/// maxLength, minLength, pattern: the first that fails.
fn string(n: &Node, s: &str, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let len = s.chars().count() as u64;
    if let Some(max) = n.max_length
        && len > max
    {
        push(
            out,
            path,
            "FieldValueTooLong",
            format!("Too long: may not be more than {max} bytes"),
        );
    } else if let Some(min) = n.min_length
        && len < min
    {
        invalid(
            out,
            path,
            v,
            format!("{path} in body should be at least {min} chars long"),
        );
    } else if let Some((p, re)) = &n.pattern
        && !re.is_match(s)
    {
        invalid(out, path, v, format!("{path} in body should match '{p}'"));
    }
}

/// multipleOf, maximum, minimum. An integer value is checked against the
/// bounds truncated to integers, as go-openapi's native-type checks do (so
/// `multipleOf: 0.5` on an integer is a factor of 0).
fn number(n: &Node, v: &Value, path: &str, out: &mut Vec<Cause>) {
    let int = v.as_i64().or_else(|| v.as_u64().map(|u| u as i64));
    let x = v.as_f64().unwrap_or(0.0);
    let shown = |b: f64| -> String {
        if int.is_some() {
            (b.trunc() as i64).to_string()
        } else {
            b.to_string()
        }
    };
    if let Some(f) = n.multiple_of {
        let factor = if int.is_some() { f.trunc() } else { f };
        if factor <= 0.0 {
            let fv = if int.is_some() {
                Value::from(factor as i64)
            } else {
                Value::from(f)
            };
            push(
                out,
                path,
                INVALID,
                format!(
                    "Invalid value: {}: factor MultipleOf declared for {path} must be positive: {}",
                    go_value(&fv),
                    shown(factor)
                ),
            );
        } else if !is_json_integer(x / factor) {
            invalid(
                out,
                path,
                v,
                format!("{path} in body should be a multiple of {}", shown(factor)),
            );
        }
    }
    let num = |b: f64| if int.is_some() { b.trunc() } else { b };
    if let Some(b) = n.maximum {
        let m = num(b.value);
        if (b.exclusive && x >= m) || (!b.exclusive && x > m) {
            let rel = if b.exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            invalid(
                out,
                path,
                v,
                format!("{path} in body should be {rel} {}", shown(b.value)),
            );
        }
    }
    if let Some(b) = n.minimum {
        let m = num(b.value);
        if (b.exclusive && x <= m) || (!b.exclusive && x < m) {
            let rel = if b.exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            invalid(
                out,
                path,
                v,
                format!("{path} in body should be {rel} {}", shown(b.value)),
            );
        }
    }
}

fn array(n: &Node, a: &[Value], v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    if let Some(items) = &n.items {
        let olds = correlate_items(n, old);
        for (i, x) in a.iter().enumerate() {
            let o = olds.as_ref().and_then(|m| m.get(&map_key(n, x)?).copied());
            node(items, x, o, &format!("{path}[{i}]"), out);
        }
    }
    let len = a.len() as u64;
    if let Some(min) = n.min_items
        && len < min
    {
        invalid(
            out,
            path,
            &Value::from(len),
            format!("{path} in body should have at least {min} items"),
        );
    }
    if let Some(max) = n.max_items
        && len > max
    {
        push(
            out,
            path,
            "FieldValueTooMany",
            format!("Too many: {len}: must have at most {max} items"),
        );
    }
    if n.unique_items {
        let mut seen = std::collections::HashSet::new();
        if !a.iter().all(|x| seen.insert(x.to_string())) {
            invalid(
                out,
                path,
                v,
                format!("{path} in body shouldn't contain duplicates"),
            );
        }
    }
}

/// The key of a `listType=map` item, as JSON text.
fn map_key(n: &Node, x: &Value) -> Option<String> {
    let ListType::Map(keys) = &n.list_type else {
        return None;
    };
    let m = x.as_object()?;
    let k: Map<String, Value> = keys
        .iter()
        .filter_map(|k| m.get(k).map(|v| (k.clone(), v.clone())))
        .collect();
    Some(Value::Object(k).to_string())
}

/// Old items by key: only `listType=map` items correlate for ratcheting.
fn correlate_items<'a>(n: &Node, old: Option<&'a Value>) -> Option<HashMap<String, &'a Value>> {
    let a = old?.as_array()?;
    if !matches!(n.list_type, ListType::Map(_)) {
        return None;
    }
    Some(a.iter().filter_map(|x| Some((map_key(n, x)?, x))).collect())
}

fn enumeration(n: &Node, v: &Value, path: &str, out: &mut Vec<Cause>) {
    if n.enumeration.is_empty() || n.enumeration.iter().any(|e| enum_eq(e, v)) {
        return;
    }
    let values: Vec<String> = n
        .enumeration
        .iter()
        .map(|e| match e {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    push(
        out,
        path,
        "FieldValueNotSupported",
        format!(
            "Unsupported value: {}: supported values: {}",
            go_value(v),
            values.join(", ")
        ),
    );
}

/// Equality as go-openapi's enum check: numbers by value.
fn enum_eq(e: &Value, v: &Value) -> bool {
    match (e, v) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => e == v,
    }
}

fn object(n: &Node, m: &Map<String, Value>, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    let count = m.len() as u64;
    if let Some(min) = n.min_properties
        && count < min
    {
        let text = format!("{path} in body should have at least {min} properties");
        return invalid(out, path, &Value::from(count), text);
    }
    if let Some(max) = n.max_properties
        && count > max
    {
        let text = format!("Too many: {count}: must have at most {max} items");
        return push(out, path, "FieldValueTooMany", text);
    }
    let old_m = old.and_then(Value::as_object);
    if let Additional::Schema(s) = &n.additional {
        for (k, x) in m.iter().filter(|(k, _)| !n.properties.contains_key(*k)) {
            let o = old_m.and_then(|o| o.get(k));
            node(s, x, o, &child_path(path, k), out);
        }
    }
    for (k, s) in &n.properties {
        if let Some(x) = m.get(k) {
            let o = old_m.and_then(|o| o.get(k));
            node(s, x, o, &child_path(path, k), out);
        }
    }
    for k in n.required.iter().filter(|k| !m.contains_key(*k)) {
        push(
            out,
            &child_path(path, k),
            "FieldValueRequired",
            "Required value".into(),
        );
    }
}

/// `x-kubernetes-embedded-resource` objects need `apiVersion` and `kind`
/// (`schemaobjectmeta.Validate`).
fn embedded(n: &Node, v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    if old == Some(v) {
        return;
    }
    match v {
        Value::Object(m) => {
            if n.embedded && !path.is_empty() {
                for k in ["apiVersion", "kind"] {
                    if m.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
                        push(
                            out,
                            &child_path(path, k),
                            "FieldValueRequired",
                            "Required value".into(),
                        );
                    }
                }
            }
            let old_m = old.and_then(Value::as_object);
            for (k, x) in m {
                if let Some(s) = n.child(k) {
                    embedded(
                        s,
                        x,
                        old_m.and_then(|o| o.get(k)),
                        &child_path(path, k),
                        out,
                    );
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = &n.items {
                for (i, x) in a.iter().enumerate() {
                    embedded(items, x, None, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// `structurallisttype.ValidateListSetsAndMaps`: the second appearance of
/// a set item or a map key is a duplicate. Map values are named
/// `path[key]` here, as `field.Path.Key` does.
fn lists(n: &Node, v: &Value, path: &str, out: &mut Vec<Cause>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if let Some(s) = n.properties.get(k) {
                    lists(s, x, &child_path(path, k), out);
                } else if let Additional::Schema(s) = &n.additional {
                    lists(s, x, &format!("{path}[{k}]"), out);
                }
            }
        }
        Value::Array(a) => {
            match &n.list_type {
                ListType::Set => duplicates(a, path, out),
                ListType::Map(keys) => list_map(keys, a, path, out),
                ListType::Atomic => {}
            }
            if let Some(items) = &n.items {
                for (i, x) in a.iter().enumerate() {
                    lists(items, x, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn list_map(keys: &[String], a: &[Value], path: &str, out: &mut Vec<Cause>) {
    if let Some((i, x)) = a
        .iter()
        .enumerate()
        .find(|(_, x)| !x.is_object() && !x.is_null())
    {
        let text = "must be an object for an array of list-type map".to_owned();
        return invalid(out, &format!("{path}[{i}]"), x, text);
    }
    let key_values: Vec<Value> = a
        .iter()
        .map(|x| {
            let m = x.as_object();
            Value::Object(
                keys.iter()
                    .filter_map(|k| m.and_then(|m| m.get(k)).map(|v| (k.clone(), v.clone())))
                    .collect(),
            )
        })
        .collect();
    duplicates(&key_values, path, out);
}

fn duplicates(items: &[Value], path: &str, out: &mut Vec<Cause>) {
    let mut seen: HashMap<String, u32> = HashMap::new();
    for (i, x) in items.iter().enumerate() {
        let times = seen.entry(x.to_string()).or_insert(0);
        *times += 1;
        if *times == 2 {
            push(
                out,
                &format!("{path}[{i}]"),
                "FieldValueDuplicate",
                format!("Duplicate value: {}", go_value(x)),
            );
        }
    }
}
