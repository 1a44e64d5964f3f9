//! The RFC 6902 JSON patch from one JSON value to another (pure).

use serde::Serialize;
use serde_json::{Map, Value};

/// One RFC 6902 operation (`{"op":"add","path":"/a/b","value":1}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    /// Adds a member (or sets it; RFC 6902 `add` on an object replaces).
    Add {
        /// The JSON pointer.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Removes a member.
    Remove {
        /// The JSON pointer.
        path: String,
    },
    /// Replaces a value that exists.
    Replace {
        /// The JSON pointer.
        path: String,
        /// The new value.
        value: Value,
    },
}

/// The operations that turn `before` into `after`: objects are compared
/// member by member (recursing into members present on both sides);
/// anything else that differs — arrays included — is replaced whole. An
/// array is not diffed element by element: a changed list is one
/// `replace` (correct, if larger than a minimal patch).
///
/// ```
/// use kubeset_runtime::webhook::{PatchOp, json_diff};
/// use serde_json::json;
/// let ops = json_diff(
///     &json!({"metadata": {"name": "x"}, "data": {"a": "1"}}),
///     &json!({"metadata": {"name": "x", "labels": {"team": "a"}}, "data": {}}),
/// );
/// assert_eq!(ops, vec![
///     PatchOp::Remove { path: "/data/a".into() },
///     PatchOp::Add { path: "/metadata/labels".into(), value: json!({"team": "a"}) },
/// ]);
/// ```
pub fn json_diff(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    let mut path = String::new();
    diff_into(&mut ops, &mut path, before, after);
    ops
}

fn diff_into(ops: &mut Vec<PatchOp>, path: &mut String, before: &Value, after: &Value) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => diff_objects(ops, path, b, a),
        _ if before == after => {}
        _ => ops.push(PatchOp::Replace {
            path: path.clone(),
            value: after.clone(),
        }),
    }
}

fn diff_objects(
    ops: &mut Vec<PatchOp>,
    path: &mut String,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) {
    let len = path.len();
    for (key, old) in before {
        push_token(path, key);
        match after.get(key) {
            None => ops.push(PatchOp::Remove { path: path.clone() }),
            Some(new) => diff_into(ops, path, old, new),
        }
        path.truncate(len);
    }
    for (key, new) in after {
        if !before.contains_key(key) {
            push_token(path, key);
            ops.push(PatchOp::Add {
                path: path.clone(),
                value: new.clone(),
            });
            path.truncate(len);
        }
    }
}

/// `/` and the key with `~` as `~0` and `/` as `~1` (RFC 6901).
fn push_token(path: &mut String, key: &str) {
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A strict RFC 6902 applier for add/remove/replace (written for these
    /// tests): `replace` and `remove` need the member, `add` its parent.
    fn apply(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
        for op in ops {
            match op {
                PatchOp::Add { path, value } => set(doc, path, value.clone(), false)?,
                PatchOp::Replace { path, value } => set(doc, path, value.clone(), true)?,
                PatchOp::Remove { path } => {
                    let (parent, key) = split(path)?;
                    let map = pointer_object(doc, parent)?;
                    map.remove(&key).ok_or(format!("remove: no {path}"))?;
                }
            }
        }
        Ok(())
    }

    fn set(doc: &mut Value, path: &str, value: Value, must_exist: bool) -> Result<(), String> {
        if path.is_empty() {
            *doc = value;
            return Ok(());
        }
        let (parent, key) = split(path)?;
        let map = pointer_object(doc, parent)?;
        if must_exist && !map.contains_key(&key) {
            return Err(format!("replace: no {path}"));
        }
        map.insert(key, value);
        Ok(())
    }

    fn split(path: &str) -> Result<(&str, String), String> {
        let at = path.rfind('/').ok_or(format!("bad path {path}"))?;
        let key = path[at + 1..].replace("~1", "/").replace("~0", "~");
        Ok((&path[..at], key))
    }

    fn pointer_object<'a>(
        doc: &'a mut Value,
        parent: &str,
    ) -> Result<&'a mut Map<String, Value>, String> {
        doc.pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .ok_or(format!("no object at {parent:?}"))
    }

    fn round_trip(before: Value, after: Value) -> Vec<PatchOp> {
        let ops = json_diff(&before, &after);
        let mut doc = before.clone();
        apply(&mut doc, &ops).unwrap_or_else(|e| panic!("{e}: {ops:?}"));
        assert_eq!(doc, after, "patch {ops:?}");
        ops
    }

    #[test]
    fn equal_values_need_no_patch() {
        let v = json!({"a": [1, {"b": null}], "c": {"d": "e"}});
        assert!(round_trip(v.clone(), v).is_empty());
    }

    #[test]
    fn add_remove_replace_nested() {
        let ops = round_trip(
            json!({"metadata": {"name": "x", "labels": {"a": "1", "b": "2"}}, "data": {"k": "v"}, "gone": true}),
            json!({"metadata": {"name": "x", "labels": {"a": "9", "c": "3"}}, "data": {"k": "v"}, "new": [1]}),
        );
        assert_eq!(ops.len(), 5, "{ops:?}");
    }

    #[test]
    fn keys_with_slash_and_tilde_are_escaped() {
        let ops = round_trip(
            json!({"metadata": {"labels": {"app.kubernetes.io/name": "a", "x~y": "1"}}}),
            json!({"metadata": {"labels": {"app.kubernetes.io/name": "b"}}}),
        );
        assert!(ops.contains(&PatchOp::Replace {
            path: "/metadata/labels/app.kubernetes.io~1name".into(),
            value: json!("b")
        }));
        assert!(ops.contains(&PatchOp::Remove {
            path: "/metadata/labels/x~0y".into()
        }));
    }

    #[test]
    fn arrays_are_replaced_whole_and_types_may_change() {
        let ops = round_trip(
            json!({"spec": {"list": [1, 2, 3], "n": 1, "o": {"a": 1}}}),
            json!({"spec": {"list": [1, 3], "n": "one", "o": [1]}}),
        );
        assert!(ops.contains(&PatchOp::Replace {
            path: "/spec/list".into(),
            value: json!([1, 3])
        }));
        assert_eq!(ops.len(), 3);
    }

    #[test]
    fn root_of_another_type_is_replaced() {
        let ops = round_trip(json!([1]), json!({"a": 1}));
        assert_eq!(
            ops,
            vec![PatchOp::Replace {
                path: String::new(),
                value: json!({"a": 1})
            }]
        );
    }

    #[test]
    fn serializes_as_rfc_6902() {
        let ops = json_diff(&json!({"a": 1, "b": 2}), &json!({"a": 2, "c": 3}));
        assert_eq!(
            serde_json::to_value(&ops).unwrap(),
            json!([
                {"op": "replace", "path": "/a", "value": 2},
                {"op": "remove", "path": "/b"},
                {"op": "add", "path": "/c", "value": 3}
            ])
        );
    }
}
