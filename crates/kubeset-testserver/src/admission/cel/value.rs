//! A custom resource's JSON as the CEL values its rules see, typed by the
//! schema as kube-apiserver's `UnstructuredToVal` types them: `integer` is
//! `int`, `number` is `double` (a whole JSON number included), objects are
//! maps of their fields, lists are lists. At a resource's root `metadata`
//! holds only `name` and `generateName` (`model.WithTypeAndObjectMeta`).

use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map, OptionalValue};
use serde_json::Value as Json;

use crate::admission::schema::{Additional, Node, Type};

/// `v` as a CEL value; `n` is its schema node when it has one.
pub(crate) fn to_cel(n: Option<&Node>, v: &Json) -> cel::Value {
    match v {
        Json::Null => cel::Value::Null,
        Json::Bool(b) => cel::Value::Bool(*b),
        Json::Number(x) => {
            let double = n.is_some_and(|n| n.ty == Type::Number);
            match (x.as_i64(), double) {
                (Some(i), false) => cel::Value::Int(i),
                _ => match x.as_u64() {
                    Some(u) if !double => cel::Value::UInt(u),
                    _ => cel::Value::Float(x.as_f64().unwrap_or(f64::NAN)),
                },
            }
        }
        Json::String(s) => cel::Value::String(Arc::new(s.clone())),
        Json::Array(a) => {
            let items = n.and_then(|n| n.items.as_deref());
            cel::Value::List(Arc::new(a.iter().map(|x| to_cel(items, x)).collect()))
        }
        Json::Object(m) => {
            let map: HashMap<Key, cel::Value> = m
                .iter()
                .filter_map(|(k, x)| {
                    // Declared properties are fields, named escaped; map
                    // keys are kept as they are.
                    let name = match n {
                        Some(n) if n.properties.contains_key(k) => escape(k)?,
                        _ => k.clone(),
                    };
                    Some((Key::from(name), to_cel(n.and_then(|n| child(n, k)), x)))
                })
                .collect();
            cel::Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// A property's name as a rule spells it (kube-apiserver's `cel.Escape`,
/// the same rule the derive's CEL uses): `None` when it cannot be spelled
/// (a rule cannot reach it).
pub(crate) fn escape(k: &str) -> Option<String> {
    kubeset_api::schema::cel_field(k)
}

/// A rule's field name as the property it names ([`escape`] reversed).
pub(crate) fn unescape(f: &str) -> String {
    if let Some(w) = f.strip_prefix("__").and_then(|x| x.strip_suffix("__"))
        && kubeset_api::schema::CEL_RESERVED.contains(&w)
    {
        return w.to_owned();
    }
    f.replace("__underscores__", "\u{0}")
        .replace("__dot__", ".")
        .replace("__dash__", "-")
        .replace("__slash__", "/")
        .replace("\u{0}", "__")
}

/// The schema of property `k` of an object node.
pub(crate) fn child<'a>(n: &'a Node, k: &str) -> Option<&'a Node> {
    n.properties.get(k).or(match &n.additional {
        Additional::Schema(s) => Some(s),
        Additional::Absent => None,
    })
}

/// A resource's root as its rules see it: `metadata` cut to `name` and
/// `generateName`.
pub(crate) fn root_to_cel(n: &Node, v: &Json) -> cel::Value {
    let mut v = v.clone();
    if let Some(meta) = v.get_mut("metadata").and_then(Json::as_object_mut) {
        meta.retain(|k, _| k == "name" || k == "generateName");
    }
    to_cel(Some(n), &v)
}

/// `optional.of(v)` or `optional.none()`.
pub(crate) fn optional(v: Option<cel::Value>) -> cel::Value {
    cel::Value::Opaque(Arc::new(match v {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}
