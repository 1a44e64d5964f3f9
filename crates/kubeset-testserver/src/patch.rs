//! The three classic patch formats: JSON patch (RFC 6902), JSON merge patch
//! (RFC 7386) and Kubernetes strategic merge patch.
//!
//! Strategic merge knows the list-map keys of the common built-in types by
//! field name ([`merge_key`]) instead of reading them from the OpenAPI
//! schema; lists it does not know are replaced whole, as for CRDs.

use serde_json::{Map, Value};

/// Why a patch could not be applied. `BadRequest` maps to HTTP 400,
/// `Invalid` to 422, as kube-apiserver does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatchError {
    /// The patch document itself is malformed.
    BadRequest(String),
    /// The patch is well-formed but cannot be applied to this object.
    Invalid(String),
}

/// Applies an RFC 7386 JSON merge patch.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Value::Object(t) = target {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn parse_pointer(path: &str) -> Result<Vec<String>, PatchError> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| PatchError::BadRequest(format!("invalid JSON pointer \"{path}\"")))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn navigate<'a>(
    doc: &'a mut Value,
    tokens: &[String],
    path: &str,
) -> Result<&'a mut Value, PatchError> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(t)
                .ok_or_else(|| PatchError::Invalid(format!("doc is missing path: \"{path}\"")))?,
            Value::Array(a) => {
                let i: usize = t.parse().map_err(|_| {
                    PatchError::Invalid(format!("invalid array index in \"{path}\""))
                })?;
                a.get_mut(i).ok_or_else(|| {
                    PatchError::Invalid(format!("doc is missing path: \"{path}\""))
                })?
            }
            _ => {
                return Err(PatchError::Invalid(format!(
                    "doc is missing path: \"{path}\""
                )));
            }
        };
    }
    Ok(cur)
}

fn get_at(doc: &mut Value, path: &str) -> Result<Value, PatchError> {
    let tokens = parse_pointer(path)?;
    navigate(doc, &tokens, path).map(|v| v.clone())
}

fn remove_at(doc: &mut Value, path: &str) -> Result<Value, PatchError> {
    let tokens = parse_pointer(path)?;
    let Some((last, parent)) = tokens.split_last() else {
        return Ok(std::mem::take(doc));
    };
    let missing = || {
        PatchError::Invalid(format!(
            "unable to remove nonexistent key: {last}: missing value"
        ))
    };
    match navigate(doc, parent, path)? {
        Value::Object(m) => m.remove(last).ok_or_else(missing),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i < a.len() {
                Ok(a.remove(i))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

fn add_at(doc: &mut Value, path: &str, value: Value) -> Result<(), PatchError> {
    let tokens = parse_pointer(path)?;
    let Some((last, parent)) = tokens.split_last() else {
        *doc = value;
        return Ok(());
    };
    match navigate(doc, parent, path)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
                return Ok(());
            }
            let i: usize = last
                .parse()
                .map_err(|_| PatchError::Invalid(format!("invalid array index in \"{path}\"")))?;
            if i > a.len() {
                return Err(PatchError::Invalid(format!(
                    "Unable to access invalid index: {i}: invalid index referenced"
                )));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(PatchError::Invalid(format!(
            "doc is missing path: \"{path}\""
        ))),
    }
}

/// The `test` operation as kube-apiserver's json-patch library (evanphx
/// v4) runs it: a key missing from an object that exists, and a key whose
/// value is `null`, both equal `null` (so `test /metadata/finalizers null`
/// passes on an object without finalizers, as kube-rs's finalizer helper
/// expects); a missing parent or an index out of range is an error.
fn test_at(doc: &mut Value, path: &str, want: Option<&Value>) -> Result<(), PatchError> {
    let failed = || PatchError::Invalid(format!("testing value {path} failed: test failed"));
    let tokens = parse_pointer(path)?;
    let want = want.filter(|v| !v.is_null());
    let have = match tokens.split_last() {
        None => Some(&*doc),
        Some((last, parent)) => {
            let parent = navigate(doc, parent, path).map_err(|_| {
                PatchError::Invalid(format!(
                    "test operation does not apply: is missing path: {path}"
                ))
            })?;
            match parent {
                Value::Object(m) => m.get(last).filter(|v| !v.is_null()),
                Value::Array(a) => {
                    let i = last.parse::<usize>().ok().filter(|i| *i < a.len());
                    let i = i.ok_or_else(|| {
                        PatchError::Invalid(format!(
                            "error in test for path: '{path}': Unable to access invalid index: {last}"
                        ))
                    })?;
                    Some(&a[i]).filter(|v| !v.is_null())
                }
                _ => return Err(failed()),
            }
        }
    };
    if have == want { Ok(()) } else { Err(failed()) }
}

/// Applies an RFC 6902 JSON patch (a list of operations), all or nothing.
pub(crate) fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| PatchError::BadRequest("json patch must be a list of operations".into()))?;
    let mut doc = target.clone();
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| PatchError::Invalid(format!("operation missing path: {op}")))?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| PatchError::BadRequest(format!("operation missing value: {op}")))
        };
        let from = || {
            op.get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| PatchError::BadRequest(format!("operation missing from: {op}")))
        };
        match kind {
            "add" => add_at(&mut doc, path, value()?)?,
            "remove" => {
                remove_at(&mut doc, path)?;
            }
            "replace" => {
                remove_at(&mut doc, path).map_err(|_| {
                    PatchError::Invalid(format!(
                        "replace operation does not apply: doc is missing key: {path}: missing value"
                    ))
                })?;
                add_at(&mut doc, path, value()?)?;
            }
            "move" => {
                let v = remove_at(&mut doc, from()?)?;
                add_at(&mut doc, path, v)?;
            }
            "copy" => {
                let v = get_at(&mut doc, from()?)?;
                add_at(&mut doc, path, v)?;
            }
            "test" => test_at(&mut doc, path, op.get("value"))?,
            other => {
                return Err(PatchError::Invalid(format!("Unexpected kind: {other}")));
            }
        }
    }
    *target = doc;
    Ok(())
}

/// The list-map key of a list field for strategic merge, by field name, as
/// the `x-kubernetes-patch-merge-key` of the built-in types declares it.
/// `ports` is keyed by `containerPort` in containers and by `port` in
/// Services; the items tell which.
pub(crate) fn merge_key(field: &str, sample: Option<&Value>) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "schedulingGates" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "conditions" => "type",
        "hostAliases" => "ip",
        "ownerReferences" => "uid",
        "topologySpreadConstraints" => "topologyKey",
        "ports" => {
            if sample.and_then(|s| s.get("containerPort")).is_some() {
                "containerPort"
            } else {
                "port"
            }
        }
        _ => return None,
    })
}

/// Primitive lists merged as sets by strategic merge.
fn is_set_list(field: &str) -> bool {
    matches!(field, "finalizers")
}

/// Applies a strategic merge patch.
pub(crate) fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let p = patch
        .as_object()
        .ok_or_else(|| PatchError::BadRequest("strategic merge patch must be an object".into()))?;
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    merge_map(target, p)
}

fn merge_map(target: &mut Value, patch: &Map<String, Value>) -> Result<(), PatchError> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut m = patch.clone();
            m.remove("$patch");
            *target = Value::Object(m);
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Object(Map::new());
            return Ok(());
        }
        Some(other) if other != "merge" => {
            return Err(PatchError::BadRequest(format!(
                "Unknown patch type: {other}"
            )));
        }
        _ => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return Ok(());
    };
    // Primitive-list deletions.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/")
            && let (Some(Value::Array(list)), Some(del)) = (t.get_mut(field), v.as_array())
        {
            list.retain(|x| !del.contains(x));
        }
    }
    for (k, v) in patch {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        match v {
            Value::Object(pm) => {
                let slot = t.entry(k.clone()).or_insert(Value::Object(Map::new()));
                merge_map(slot, pm)?;
                if let Value::Object(m) = slot
                    && pm.get("$patch").and_then(Value::as_str) == Some("delete")
                    && m.is_empty()
                {
                    t.remove(k);
                }
            }
            Value::Array(items) => {
                let key = merge_key(k, items.first());
                match (key, t.get_mut(k)) {
                    (Some(key), Some(Value::Array(live))) => merge_keyed_list(live, items, key)?,
                    (None, Some(Value::Array(live))) if is_set_list(k) => {
                        for item in items {
                            if !live.contains(item) {
                                live.push(item.clone());
                            }
                        }
                    }
                    _ => {
                        let cleaned: Vec<Value> = items
                            .iter()
                            .filter(|i| i.get("$patch").is_none())
                            .cloned()
                            .collect();
                        t.insert(k.clone(), Value::Array(cleaned));
                    }
                }
            }
            other => {
                t.insert(k.clone(), other.clone());
            }
        }
    }
    Ok(())
}

fn merge_keyed_list(live: &mut Vec<Value>, items: &[Value], key: &str) -> Result<(), PatchError> {
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        *live = items
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .cloned()
            .collect();
        return Ok(());
    }
    for item in items {
        let Some(kv) = item.get(key) else {
            return Err(PatchError::BadRequest(format!(
                "map: {item} does not contain declared merge key: {key}"
            )));
        };
        let pos = live.iter().position(|l| l.get(key) == Some(kv));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                live.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                if let Some(m) = item.as_object() {
                    merge_map(&mut live[i], m)?;
                }
            }
            (None, false) => {
                let mut fresh = Value::Object(Map::new());
                if let Some(m) = item.as_object() {
                    merge_map(&mut fresh, m)?;
                }
                live.push(fresh);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7386_examples() {
        let mut t = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut t, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(t, json!({"a": "z", "c": {"d": "e"}}));
        let mut t = json!({"a": ["b"]});
        merge_patch(&mut t, &json!({"a": ["c"]}));
        assert_eq!(t, json!({"a": ["c"]}));
    }

    #[test]
    fn json_patch_ops() {
        let mut t = json!({"a": {"b": [1, 2]}, "x": 1});
        json_patch(
            &mut t,
            &json!([
                {"op": "add", "path": "/a/b/-", "value": 3},
                {"op": "add", "path": "/a/b/0", "value": 0},
                {"op": "replace", "path": "/x", "value": 2},
                {"op": "copy", "from": "/x", "path": "/y"},
                {"op": "move", "from": "/y", "path": "/z"},
                {"op": "remove", "path": "/a/b/1"},
                {"op": "test", "path": "/z", "value": 2},
                {"op": "add", "path": "/a~1b", "value": true}
            ]),
        )
        .unwrap();
        assert_eq!(
            t,
            json!({"a": {"b": [0, 2, 3]}, "x": 2, "z": 2, "a/b": true})
        );
    }

    #[test]
    fn json_patch_is_atomic() {
        let mut t = json!({"x": 1});
        let err = json_patch(
            &mut t,
            &json!([{"op": "replace", "path": "/x", "value": 5}, {"op": "test", "path": "/x", "value": 1}]),
        )
        .unwrap_err();
        assert!(matches!(err, PatchError::Invalid(_)));
        assert_eq!(t, json!({"x": 1}));
        assert!(matches!(
            json_patch(&mut t, &json!({"op": "add"})),
            Err(PatchError::BadRequest(_))
        ));
    }

    #[test]
    fn json_patch_test_treats_a_missing_key_as_null() {
        let mut t = json!({"metadata": {"name": "a", "labels": {"x": null}}, "list": [1]});
        let ok = |t: &mut Value, p: Value| json_patch(t, &p).is_ok();
        // kube-rs's finalizer add on an object without finalizers.
        assert!(ok(
            &mut t,
            json!([{"op": "test", "path": "/metadata/finalizers", "value": null},
                   {"op": "add", "path": "/metadata/finalizers", "value": ["f"]}])
        ));
        assert_eq!(t["metadata"]["finalizers"], json!(["f"]));
        assert!(ok(
            &mut t,
            json!([{"op": "test", "path": "/metadata/labels/x", "value": null}])
        ));
        assert!(ok(
            &mut t,
            json!([{"op": "test", "path": "/metadata/missing"}])
        ));
        assert!(!ok(
            &mut t,
            json!([{"op": "test", "path": "/metadata/missing", "value": 1}])
        ));
        assert!(!ok(
            &mut t,
            json!([{"op": "test", "path": "/metadata/name", "value": null}])
        ));
        assert!(!ok(
            &mut t,
            json!([{"op": "test", "path": "/nothing/here", "value": null}])
        ));
        assert!(!ok(
            &mut t,
            json!([{"op": "test", "path": "/list/3", "value": null}])
        ));
        assert!(ok(
            &mut t,
            json!([{"op": "test", "path": "/list/0", "value": 1}])
        ));
    }

    #[test]
    fn strategic_merge_containers_by_name() {
        let mut t = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ], "tolerations": [{"key": "k"}]}});
        strategic_merge(
            &mut t,
            &json!({"spec": {"containers": [
                {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}]},
                {"name": "c", "image": "c:1"},
                {"name": "b", "$patch": "delete"}
            ], "tolerations": [{"key": "z"}]}}),
        )
        .unwrap();
        assert_eq!(
            t,
            json!({"spec": {"containers": [
                {"name": "a", "image": "a:2", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
                {"name": "c", "image": "c:1"}
            ], "tolerations": [{"key": "z"}]}})
        );
    }

    #[test]
    fn strategic_merge_ports_and_finalizers() {
        let mut t = json!({"metadata": {"finalizers": ["a"]}, "spec": {"ports": [{"port": 80, "name": "http"}]}});
        strategic_merge(
            &mut t,
            &json!({"metadata": {"finalizers": ["b"]}, "spec": {"ports": [{"port": 80, "name": "web"}, {"port": 443}]}}),
        )
        .unwrap();
        assert_eq!(
            t,
            json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"ports": [{"port": 80, "name": "web"}, {"port": 443}]}})
        );
        strategic_merge(&mut t, &json!({"$deleteFromPrimitiveList/metadata": [], "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})).unwrap();
        assert_eq!(t["metadata"]["finalizers"], json!(["b"]));
    }
}
