//! The four walks of structured-merge-diff over an object and its
//! [`Shape`]: the field set an apply configuration owns
//! ([`to_field_set`]), what changed between two objects ([`compare`]),
//! an apply configuration merged into the live object ([`merge`]), and
//! fields taken out of an object ([`remove`]). Lists and maps are walked
//! item by item where their shape says so, and as one leaf where it says
//! atomic; an empty or null list or map on both sides is a leaf too (so
//! `{}` and `null` stay apart).

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use crate::fieldset::{Path, Pe, Set, has_prefix};
use crate::shape::{ListKind, Shape};

/// A value that does not fit its shape: the path and what is wrong, as
/// structured-merge-diff words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShapeError(pub(crate) String);

fn err(at: &[Pe], what: impl std::fmt::Display) -> ShapeError {
    ShapeError(format!("{}: {what}", crate::fieldset::display(at)))
}

/// The path element of a list item: its value in a set, its keys (or
/// their defaults) in a map list.
pub(crate) fn item_pe(
    kind: &ListKind,
    item: &Value,
    at: &[Pe],
    i: usize,
) -> Result<Pe, ShapeError> {
    match kind {
        ListKind::Set => match item {
            Value::Object(_) | Value::Array(_) => Err(err(
                at,
                format_args!("element {i}: expected a scalar in a set"),
            )),
            v => Ok(Pe::value(v)),
        },
        ListKind::Map(keys) => {
            let Value::Object(m) = item else {
                return Err(err(at, format_args!("element {i}: expected a map")));
            };
            let fields: Vec<(&str, &Value)> = keys
                .iter()
                .filter_map(|(k, default)| m.get(k).or(default.as_ref()).map(|v| (k.as_str(), v)))
                .collect();
            if fields.is_empty() {
                return Err(err(
                    at,
                    format_args!(
                        "element {i}: associative list with keys has an element that omits all key fields {:?} (and doesn't have default values for any key fields)",
                        keys.iter().map(|k| k.0.as_str()).collect::<Vec<_>>()
                    ),
                ));
            }
            Ok(Pe::key(fields))
        }
        ListKind::Atomic => Ok(Pe::field(&format!("[{i}]"))),
    }
}

/// Whether a node is walked as one leaf: a scalar, an atomic list or map,
/// a value of another type than its shape, or empty on both sides.
fn is_leaf(shape: &Shape, l: Option<&Value>, r: Option<&Value>) -> bool {
    let empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    let fits = |v: Option<&Value>, list: bool| match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(_)) => list,
        Some(Value::Object(_)) => !list,
        _ => false,
    };
    match shape {
        Shape::Object { atomic: false, .. } => {
            !fits(l, false) || !fits(r, false) || (empty(l) && empty(r))
        }
        Shape::List { kind, .. } if *kind != ListKind::Atomic => {
            !fits(l, true) || !fits(r, true) || (empty(l) && empty(r))
        }
        _ => true,
    }
}

/// The fields an apply configuration sets. `strict` refuses a field a
/// closed struct does not declare and a list item without its keys or
/// given twice (as kube-apiserver does for the applied object).
pub(crate) fn to_field_set(v: &Value, shape: &Shape, strict: bool) -> Result<Set, ShapeError> {
    let mut out = Set::new();
    field_set_walk(v, shape, strict, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn field_set_walk(
    v: &Value,
    shape: &Shape,
    strict: bool,
    at: &mut Path,
    out: &mut Set,
) -> Result<(), ShapeError> {
    let resolved = shape.resolve(Some(v));
    if strict {
        check_type(resolved, v, at)?;
    }
    match (resolved, v) {
        // Null, and a granular map or list, own nothing themselves (the
        // parent makes a null or empty map a member).
        (Shape::Object { atomic: false, .. } | Shape::List { .. }, Value::Null) => {}
        (shape @ Shape::Object { atomic: false, .. }, Value::Object(m)) => {
            for (k, child) in m {
                let child_shape = match shape.field(k) {
                    Some(s) => s,
                    None if strict => {
                        at.push(Pe::field(k));
                        return Err(err(at, "field not declared in schema"));
                    }
                    None => &Shape::Deduced,
                };
                at.push(Pe::field(k));
                field_set_walk(child, child_shape, strict, at, out)?;
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !shape.declares(k) {
                    out.insert(at.clone());
                }
                at.pop();
            }
        }
        (Shape::List { item, kind }, Value::Array(items)) if *kind != ListKind::Atomic => {
            let mut seen = HashSet::new();
            for (i, child) in items.iter().enumerate() {
                let pe = match item_pe(kind, child, at, i) {
                    Ok(pe) => pe,
                    Err(e) if strict => return Err(e),
                    Err(_) => continue,
                };
                if !seen.insert(pe.clone()) {
                    if strict {
                        return Err(err(
                            at,
                            format_args!("duplicate entries for key {}", pe.display()),
                        ));
                    }
                    continue;
                }
                at.push(pe);
                field_set_walk(child, item, strict, at, out)?;
                out.insert(at.clone());
                at.pop();
            }
        }
        _ => {
            if !at.is_empty() {
                out.insert(at.clone());
            }
        }
    }
    Ok(())
}

/// A value of another JSON type than its shape's: structured-merge-diff
/// refuses it in an apply configuration.
fn check_type(shape: &Shape, v: &Value, at: &[Pe]) -> Result<(), ShapeError> {
    let expected = match shape {
        Shape::Scalar(s) if !s.fits(v) => s.name(),
        Shape::Object { .. } if !v.is_object() && !v.is_null() => "map",
        Shape::List { .. } if !v.is_array() && !v.is_null() => "list",
        _ => return Ok(()),
    };
    Err(err(at, format_args!("expected {expected}, got {v}")))
}

/// What changed from `lhs` to `rhs`: fields added, removed and modified.
#[derive(Debug, Default, Clone)]
pub(crate) struct Comparison {
    /// Present in `rhs` only (and containers that appeared).
    pub(crate) added: Set,
    /// Present in both, different (leaves only).
    pub(crate) modified: Set,
    /// Present in `lhs` only.
    pub(crate) removed: Set,
}

/// Compares two objects of one shape.
pub(crate) fn compare(lhs: &Value, rhs: &Value, shape: &Shape) -> Comparison {
    let mut c = Comparison::default();
    compare_walk(Some(lhs), Some(rhs), shape, &mut Vec::new(), &mut c);
    c
}

fn compare_walk(
    l: Option<&Value>,
    r: Option<&Value>,
    shape: &Shape,
    at: &mut Path,
    c: &mut Comparison,
) {
    let shape = shape.resolve(r.filter(|v| !v.is_null()).or(l));
    if is_leaf(shape, l, r) {
        match (l, r) {
            (None, Some(_)) => c.added.insert(at.clone()),
            (Some(_), None) => c.removed.insert(at.clone()),
            (Some(a), Some(b)) if a != b => c.modified.insert(at.clone()),
            _ => false,
        };
        return;
    }
    match shape {
        Shape::Object { .. } => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let keys: Vec<&String> = lm
                .iter()
                .flat_map(|m| m.keys())
                .chain(
                    rm.iter()
                        .flat_map(|m| m.keys())
                        .filter(|k| !lm.is_some_and(|m| m.contains_key(*k))),
                )
                .collect();
            for k in keys {
                let child = shape.field(k).unwrap_or(&Shape::Deduced);
                at.push(Pe::field(k));
                compare_walk(
                    lm.and_then(|m| m.get(k)),
                    rm.and_then(|m| m.get(k)),
                    child,
                    at,
                    c,
                );
                at.pop();
            }
        }
        Shape::List { item, kind } => compare_items(l, r, item, kind, at, c),
        _ => {}
    }
    match (l, r) {
        (None, Some(_)) => c.added.insert(at.clone()),
        (Some(_), None) => c.removed.insert(at.clone()),
        _ => false,
    };
}

/// A list's items (none when `v` is not a list), each with its path
/// element.
fn items<'a>(
    v: Option<&'a Value>,
    kind: &ListKind,
    at: &[Pe],
) -> impl Iterator<Item = (Result<Pe, ShapeError>, &'a Value)> {
    let items = v.and_then(Value::as_array).into_iter().flatten();
    items
        .enumerate()
        .map(move |(i, item)| (item_pe(kind, item, at, i), item))
}

/// Items by path element, in first-seen order, duplicates kept together.
fn group<'a>(
    v: Option<&'a Value>,
    kind: &ListKind,
    at: &[Pe],
) -> (Vec<Pe>, HashMap<Pe, Vec<&'a Value>>) {
    let mut order = Vec::new();
    let mut out: HashMap<Pe, Vec<&Value>> = HashMap::new();
    for (pe, item) in items(v, kind, at) {
        let Ok(pe) = pe else {
            continue;
        };
        let slot = out.entry(pe.clone()).or_default();
        if slot.is_empty() {
            order.push(pe);
        }
        slot.push(item);
    }
    (order, out)
}

fn compare_items(
    l: Option<&Value>,
    r: Option<&Value>,
    item: &Shape,
    kind: &ListKind,
    at: &mut Path,
    c: &mut Comparison,
) {
    let (mut order, lg) = group(l, kind, at);
    let (r_order, rg) = group(r, kind, at);
    order.extend(r_order.into_iter().filter(|pe| !lg.contains_key(pe)));
    for pe in order {
        let ll = lg.get(&pe).map_or(&[][..], Vec::as_slice);
        let rl = rg.get(&pe).map_or(&[][..], Vec::as_slice);
        at.push(pe);
        match (ll.len(), rl.len()) {
            (0 | 1, 0 | 1) => compare_walk(ll.first().copied(), rl.first().copied(), item, at, c),
            (2.., 2..) => {
                if ll != rl {
                    c.modified.insert(at.clone());
                }
            }
            (2.., _) => {
                if let Some(r0) = rl.first() {
                    compare_walk(None, Some(r0), item, at, c);
                }
                c.removed.insert(at.clone());
            }
            (_, _) => {
                if let Some(l0) = ll.first() {
                    compare_walk(Some(l0), None, item, at, c);
                }
                c.added.insert(at.clone());
            }
        }
        at.pop();
    }
}

/// Merges an apply configuration (`rhs`) into the live object (`lhs`):
/// the configuration's leaves win, maps merge key by key, granular lists
/// item by item (live items keep their places, new ones follow the
/// configuration's order). A configuration listing one item twice fails.
pub(crate) fn merge(lhs: &Value, rhs: &Value, shape: &Shape) -> Result<Value, ShapeError> {
    Ok(merge_walk(Some(lhs), Some(rhs), shape, &mut Vec::new())?.unwrap_or(Value::Null))
}

fn merge_walk(
    l: Option<&Value>,
    r: Option<&Value>,
    shape: &Shape,
    at: &mut Path,
) -> Result<Option<Value>, ShapeError> {
    let shape = shape.resolve(r.filter(|v| !v.is_null()).or(l));
    if is_leaf(shape, l, r) {
        return Ok(r.or(l).cloned());
    }
    match shape {
        Shape::Object { .. } => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let mut out = Map::new();
            for (k, lv) in lm.into_iter().flatten() {
                let child = shape.field(k).unwrap_or(&Shape::Deduced);
                at.push(Pe::field(k));
                if let Some(v) = merge_walk(Some(lv), rm.and_then(|m| m.get(k)), child, at)? {
                    out.insert(k.clone(), v);
                }
                at.pop();
            }
            for (k, rv) in rm
                .into_iter()
                .flatten()
                .filter(|(k, _)| !lm.is_some_and(|m| m.contains_key(*k)))
            {
                let child = shape.field(k).unwrap_or(&Shape::Deduced);
                at.push(Pe::field(k));
                if let Some(v) = merge_walk(None, Some(rv), child, at)? {
                    out.insert(k.clone(), v);
                }
                at.pop();
            }
            Ok(Some(Value::Object(out)))
        }
        Shape::List { item, kind } => {
            merge_items(l, r, item, kind, at).map(|v| Some(Value::Array(v)))
        }
        _ => Ok(r.or(l).cloned()),
    }
}

/// A list's items in order with their path elements, and each element's
/// item (`None`: duplicated).
type Indexed<'a> = (Vec<(Pe, &'a Value)>, HashMap<Pe, Option<&'a Value>>);

/// Indexes a list's items by path element; `unique` refuses duplicates,
/// else a duplicated item is not merged (it stands for nothing).
fn index<'a>(
    v: Option<&'a Value>,
    kind: &ListKind,
    at: &[Pe],
    unique: bool,
) -> Result<Indexed<'a>, ShapeError> {
    let mut pes = Vec::new();
    let mut seen: HashMap<Pe, Option<&Value>> = HashMap::new();
    for (pe, item) in items(v, kind, at) {
        let pe = pe?;
        if let Some(slot) = seen.get_mut(&pe) {
            if unique {
                return Err(err(
                    at,
                    format_args!("duplicate entries for key {}", pe.display()),
                ));
            }
            *slot = None;
        } else {
            seen.insert(pe.clone(), Some(item));
        }
        pes.push((pe, item));
    }
    Ok((pes, seen))
}

fn merge_items(
    l: Option<&Value>,
    r: Option<&Value>,
    item: &Shape,
    kind: &ListKind,
    at: &mut Path,
) -> Result<Vec<Value>, ShapeError> {
    let (rp, ro) = index(r, kind, at, true)?;
    let (lp, lo) = index(l, kind, at, false)?;
    let mut shared: VecDeque<&Pe> = rp
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| lo.contains_key(*pe))
        .collect();
    let mut next = shared.pop_front();
    let mut merged: HashSet<&Pe> = HashSet::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    let one =
        |lv: Option<&Value>, rv: Option<&Value>, pe: &Pe, out: &mut Vec<Value>, at: &mut Path| {
            at.push(pe.clone());
            let v = merge_walk(lv, rv, item, at);
            at.pop();
            v.map(|v| out.extend(v))
        };
    while li < lp.len() || ri < rp.len() {
        if li < lp.len() && ri < rp.len() {
            let pe = &lp[li].0;
            if *pe == rp[ri].0 {
                merged.insert(pe);
                one(lo[pe], ro[pe], pe, &mut out, at)?;
                li += 1;
                ri += 1;
                next = shared.pop_front();
                continue;
            }
            if ro.contains_key(pe) && next.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lp.len() {
            let (pe, lv) = &lp[li];
            if !ro.contains_key(pe) {
                one(Some(lv), None, pe, &mut out, at)?;
                li += 1;
                continue;
            } else if merged.contains(pe) {
                li += 1;
            }
        }
        if ri < rp.len() {
            let pe = &rp[ri].0;
            merged.insert(pe);
            one(lo.get(pe).copied().flatten(), ro[pe], pe, &mut out, at)?;
            ri += 1;
            if next == Some(pe) {
                next = shared.pop_front();
            }
        }
    }
    Ok(out)
}

/// Removes the members of `set` from `v` (a member takes its subtree; a
/// map or list left empty goes too).
pub(crate) fn remove(v: &mut Value, shape: &Shape, set: &Set) {
    remove_walk(v, shape, &mut Vec::new(), set);
}

/// Whether `set` holds a path under `at` (not `at` itself).
fn has_below(set: &Set, at: &Path) -> bool {
    set.range(at.clone()..)
        .find(|p| *p != at)
        .is_some_and(|p| has_prefix(p, at))
}

fn remove_walk(v: &mut Value, shape: &Shape, at: &mut Path, set: &Set) {
    let shape = shape.resolve(Some(v));
    if is_leaf(shape, Some(v), Some(v)) {
        return;
    }
    match (shape, v) {
        (Shape::Object { .. }, Value::Object(m)) => {
            m.retain(|k, child| {
                at.push(Pe::field(k));
                let keep = if set.contains(at) {
                    false
                } else if has_below(set, at) {
                    let was_empty = is_empty_container(child);
                    remove_walk(child, shape.field(k).unwrap_or(&Shape::Deduced), at, set);
                    was_empty || !is_empty_container(child)
                } else {
                    true
                };
                at.pop();
                keep
            });
        }
        (Shape::List { item, kind }, Value::Array(items)) => {
            let mut i = 0;
            items.retain_mut(|child| {
                let pe = item_pe(kind, child, at, i);
                i += 1;
                let Ok(pe) = pe else { return true };
                at.push(pe);
                let keep = if set.contains(at) {
                    false
                } else {
                    if has_below(set, at) {
                        remove_walk(child, item, at, set);
                    }
                    true
                };
                at.pop();
                keep
            });
        }
        _ => {}
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::shape::from_schema;

    fn widget() -> Shape {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"},
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}}}});
        from_schema(&serde_json::from_value(schema).unwrap())
    }

    #[test]
    fn a_configuration_of_the_wrong_type_or_with_unknown_fields_is_refused() {
        let w = widget();
        let e = to_field_set(&json!({"spec": {"size": "big"}}), &w, true).unwrap_err();
        assert_eq!(e.0, ".spec.size: expected integer, got \"big\"");
        let e = to_field_set(&json!({"spec": {"nope": 1}}), &w, true).unwrap_err();
        assert_eq!(e.0, ".spec.nope: field not declared in schema");
        let e = to_field_set(&json!({"spec": {"set": ["a", "a"]}}), &w, true).unwrap_err();
        assert_eq!(e.0, ".spec.set: duplicate entries for key [=\"a\"]");
        // Not strict (a stored object): the unknown field is deduced.
        assert!(to_field_set(&json!({"spec": {"nope": 1}}), &w, false).is_ok());
    }

    #[test]
    fn a_deep_unknown_value_is_walked_as_deduced_maps() {
        let free = from_schema(
            &serde_json::from_value(
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            )
            .unwrap(),
        );
        let mut deep = json!([1]);
        for _ in 0..120 {
            deep = json!({"a": deep});
        }
        let set = to_field_set(&deep, &free, true).unwrap();
        // Every map key is a member; the innermost list is one atomic leaf.
        assert_eq!(set.len(), 120);
        assert_eq!(set.iter().map(Vec::len).max(), Some(120));
        let merged = merge(&deep, &json!({"b": 1}), &free).unwrap();
        assert_eq!(compare(&deep, &merged, &free).added.len(), 1);
    }
}
