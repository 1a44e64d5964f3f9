//! What kube-apiserver's custom-resource decoder does to an object before
//! it is validated, in its order: pruning of the fields the schema does not
//! declare (`structuralpruning.PruneWithOptions`, the unknown fields named
//! for `fieldValidation`), then the embedded resources' `metadata` reduced
//! to ObjectMeta's fields (`schemaobjectmeta.Coerce`), then the removal of
//! `null`s a field may not hold and has no default for
//! (`PruneNonNullableNullsWithoutDefaults`), then the schema's defaults
//! (`structuraldefaulting.Default`). The same runs when a stored object is
//! read, as the real server's storage decoder does.

use serde_json::{Map, Value};

use super::schema::{Additional, Node};

/// The fields of ObjectMeta: what an embedded resource's `metadata` keeps.
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Prunes `v` (a resource: its `apiVersion`, `kind` and `metadata` stay)
/// and returns the paths of the fields dropped, as the real server names
/// them in `unknown field "spec.x"`: the pruned fields in path order, then
/// the embedded resources' unknown `metadata` fields.
pub(crate) fn prune(root: &Node, v: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    let mut meta = Vec::new();
    walk(root, v, "", true, &mut pruned, &mut meta);
    pruned.sort();
    meta.sort();
    pruned.extend(meta);
    pruned
}

fn walk(
    n: &Node,
    v: &mut Value,
    path: &str,
    resource: bool,
    pruned: &mut Vec<String>,
    meta: &mut Vec<String>,
) {
    match v {
        Value::Object(m) => {
            let keep_meta = resource || n.embedded;
            m.retain(|k, x| {
                if keep_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata" && n.embedded && !resource {
                        coerce_meta(x, &join(path, k), meta);
                    }
                    return true;
                }
                match n.child(k) {
                    Some(s) => {
                        walk(s, x, &join(path, k), false, pruned, meta);
                        true
                    }
                    None if n.preserve_unknown => true,
                    None => {
                        pruned.push(join(path, k));
                        false
                    }
                }
            });
        }
        Value::Array(a) => {
            let fallback;
            let items = match &n.items {
                Some(i) => &**i,
                None => {
                    // No item schema: an object item keeps nothing unless
                    // the list preserves unknown fields.
                    fallback = Node {
                        preserve_unknown: n.preserve_unknown,
                        ..Node::any()
                    };
                    &fallback
                }
            };
            for (i, x) in a.iter_mut().enumerate() {
                walk(items, x, &format!("{path}[{i}]"), false, pruned, meta);
            }
        }
        _ => {}
    }
}

/// An embedded resource's `metadata` keeps ObjectMeta's fields only.
fn coerce_meta(meta: &mut Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(m) = meta else { return };
    m.retain(|k, _| {
        let keep = OBJECT_META.contains(&k.as_str());
        if !keep {
            out.push(join(path, k));
        }
        keep
    });
}

/// Drops `null`s of non-nullable properties without a default, then sets
/// every default the schema gives for a missing (or such a `null`) value.
pub(crate) fn default(n: &Node, v: &mut Value) {
    match v {
        Value::Object(m) => default_object(n, m),
        Value::Array(a) => {
            if let Some(items) = &n.items {
                for x in a.iter_mut() {
                    if x.is_null()
                        && !items.nullable
                        && let Some(d) = &items.default
                    {
                        x.clone_from(d);
                    }
                    default(items, x);
                }
            }
        }
        _ => {}
    }
}

fn default_object(n: &Node, m: &mut Map<String, Value>) {
    m.retain(|k, x| {
        !(x.is_null()
            && n.properties
                .get(k)
                .is_some_and(|s| !s.nullable && s.default.is_none()))
    });
    for (k, s) in &n.properties {
        if let Some(d) = &s.default
            && m.get(k).is_none_or(|x| x.is_null() && !s.nullable)
        {
            m.insert(k.clone(), d.clone());
        }
    }
    for (k, x) in m.iter_mut() {
        if let Some(s) = n.properties.get(k) {
            default(s, x);
        } else if let Additional::Schema(s) = &n.additional {
            if x.is_null()
                && !s.nullable
                && let Some(d) = &s.default
            {
                x.clone_from(d);
            }
            default(s, x);
        }
    }
}

/// Whole numbers written with a fraction (`3.0`) become integers, as
/// they are after kube-apiserver's round trip through a Go `float64` and
/// back to JSON.
pub(crate) fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        Value::Object(m) => m.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::schema::Schema;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "n": {"type": "integer", "default": 3},
                "s": {"type": "string"},
                "o": {"type": "object", "default": {}, "properties": {"a": {"type": "string", "default": "x"}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                         "properties": {"k": {"type": "object", "properties": {"j": {"type": "string"}}}}},
                "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true},
                "l": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "string", "default": "TCP"}}}}}}}}))
        .expect("compiles")
    }

    #[test]
    fn pruning_names_each_dropped_field_and_keeps_what_is_preserved() {
        let s = schema();
        let mut v = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "extra": 1,
            "spec": {"zz": 1, "aa": 2, "free": {"any": 1, "k": {"j": "1", "bad": 2}},
                     "emb": {"apiVersion": "v1", "kind": "Y", "metadata": {"name": "n", "bogus": 1}, "other": 2},
                     "l": [{"p": "UDP", "q": 1}]}});
        let pruned = prune(&s.root, &mut v);
        assert_eq!(
            pruned,
            [
                "extra",
                "spec.aa",
                "spec.free.k.bad",
                "spec.l[0].q",
                "spec.zz",
                "spec.emb.metadata.bogus"
            ]
        );
        assert_eq!(v["spec"]["free"], json!({"any": 1, "k": {"j": "1"}}));
        assert_eq!(
            v["spec"]["emb"],
            json!({"apiVersion": "v1", "kind": "Y", "metadata": {"name": "n"}, "other": 2})
        );
        assert_eq!(v["metadata"], json!({"name": "a"}));
    }

    #[test]
    fn defaults_fill_missing_and_null_values_and_nest() {
        let s = schema();
        let mut v = json!({"spec": {"n": null, "s": null, "l": [{}, {"p": "UDP"}]}});
        default(&s.root, &mut v);
        assert_eq!(
            v["spec"],
            json!({"n": 3, "o": {"a": "x"}, "l": [{"p": "TCP"}, {"p": "UDP"}]})
        );
    }
}
