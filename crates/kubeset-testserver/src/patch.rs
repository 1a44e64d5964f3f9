//! The three classic patch formats: JSON patch (RFC 6902), JSON merge patch
//! (RFC 7386) and Kubernetes strategic merge patch.
//!
//! Strategic merge knows the list-map keys of the common built-in types by
//! field name ([`merge_key`]) instead of reading them from the OpenAPI
//! schema; lists it does not know are replaced whole, as for CRDs. A
//! merged list is ordered as kube-apiserver orders it (the patch's items,
//! or its `$setElementOrder`, before the live items it keeps; see
//! [`order_merged`]).

use serde_json::{Map, Value};

/// Why a patch could not be applied. `BadRequest` maps to HTTP 400,
/// `Invalid` to 422, as kube-apiserver does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatchError {
    /// The patch document itself is malformed.
    BadRequest(String),
    /// The patch is well-formed but cannot be applied to this object.
    Invalid(String),
    /// A mistake kube-apiserver's patch library reports as a plain error,
    /// so the real server answers 500 with no reason (an unknown `$patch`
    /// directive).
    Unknown(String),
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

/// Most bytes a JSON patch's `copy` operations may add together: twice the
/// largest object the store keeps (a bound on memory; upstream bounds the
/// same with `AccumulatedCopySizeLimit`).
const MAX_COPIED: usize = 2 * crate::limits::MAX_OBJECT;

/// The length of `v` in JSON, counted up to just past `limit`.
fn encoded_len(v: &Value, limit: usize) -> usize {
    struct Count(usize, usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            if self.0 > self.1 {
                return Err(std::io::Error::other("past the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0, limit);
    // An error is only the limit passed: the count says so.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// A pointer as kube-apiserver's json-patch library (evanphx v4) splits
/// it: the tokens between the first `/` and the last one name the parents,
/// the last one the key, and whatever comes before the first `/` is
/// ignored (so `data/k` is `/k`). `None` for a pointer without `/` (the
/// whole document is not a place an operation can write).
fn split_pointer(path: &str) -> Option<(Vec<String>, String)> {
    let mut tokens: Vec<String> = path.split('/').skip(1).map(unescape).collect();
    let key = tokens.pop()?;
    Some((tokens, key))
}

/// An array index as the library reads it (Go's `strconv.Atoi`); negative
/// counts from the end, within `-len` (`len` for an add, which may append).
fn index(key: &str, len: usize) -> Result<usize, PatchError> {
    let bad = || PatchError::Invalid(format!("Unable to access invalid index: {key}"));
    let i: i64 = key
        .parse()
        .map_err(|_| PatchError::Invalid(format!("value was not a proper array index: '{key}'")))?;
    let len = i64::try_from(len).map_err(|_| bad())?;
    let i = if i < 0 { i + len } else { i };
    if (0..len).contains(&i) {
        usize::try_from(i).map_err(|_| bad())
    } else {
        Err(bad())
    }
}

/// The container (object or array) the parents of a pointer lead to.
fn container<'a>(doc: &'a mut Value, parents: &[String]) -> Option<&'a mut Value> {
    let mut cur = doc;
    for t in parents {
        cur = match cur {
            Value::Object(m) => m.get_mut(t)?,
            Value::Array(a) => {
                let i = index(t, a.len()).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
    }
    (cur.is_object() || cur.is_array()).then_some(cur)
}

/// The container of `path` for operation `op`, or its error.
fn find<'a>(
    doc: &'a mut Value,
    path: &str,
    op: &str,
) -> Result<(&'a mut Value, String), PatchError> {
    let missing = || {
        PatchError::Invalid(format!(
            "{op} operation does not apply: doc is missing path: \"{path}\""
        ))
    };
    let (parents, key) = split_pointer(path).ok_or_else(missing)?;
    let con = container(doc, &parents).ok_or_else(missing)?;
    Ok((con, key))
}

/// The value at `key` of a container: a missing key of an object is
/// `None` (null), an index out of range an error.
fn get<'a>(con: &'a Value, key: &str) -> Result<Option<&'a Value>, PatchError> {
    match con {
        Value::Object(m) => Ok(m.get(key).filter(|v| !v.is_null())),
        Value::Array(a) => Ok(Some(&a[index(key, a.len())?])),
        _ => Ok(None),
    }
}

fn add(con: &mut Value, key: String, value: Value) -> Result<(), PatchError> {
    match con {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) if key == "-" => a.push(value),
        Value::Array(a) => {
            let i = index(&key, a.len() + 1)?;
            a.insert(i, value);
        }
        _ => {}
    }
    Ok(())
}

fn remove(con: &mut Value, key: &str) -> Result<Value, PatchError> {
    match con {
        Value::Object(m) => m.remove(key).ok_or_else(|| {
            PatchError::Invalid(format!(
                "Unable to remove nonexistent key: {key}: missing value"
            ))
        }),
        Value::Array(a) => {
            let i = index(key, a.len())?;
            Ok(a.remove(i))
        }
        _ => Ok(Value::Null),
    }
}

/// `replace`: the key must be readable (an object's missing key is, as
/// null: so replacing it adds it, as the library does).
fn replace(con: &mut Value, key: String, value: Value) -> Result<(), PatchError> {
    get(con, &key)?;
    match con {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) => {
            let i = index(&key, a.len())?;
            a[i] = value;
        }
        _ => {}
    }
    Ok(())
}

/// The `test` operation as the library runs it: a missing key and a key
/// whose value is `null` both equal `null` (so `test /metadata/finalizers
/// null` passes on an object without finalizers, as kube-rs's finalizer
/// helper expects); a missing parent or an index out of range is an
/// error; the empty path tests the whole document.
fn test(doc: &mut Value, path: &str, want: Option<&Value>) -> Result<(), PatchError> {
    let failed = || PatchError::Invalid(format!("testing value {path} failed: test failed"));
    let want = want.filter(|v| !v.is_null());
    if path.is_empty() {
        return if want == Some(&*doc) {
            Ok(())
        } else {
            Err(failed())
        };
    }
    let (con, key) = find(doc, path, "test")?;
    if get(con, &key)? == want {
        Ok(())
    } else {
        Err(failed())
    }
}

/// Applies a JSON patch (a list of operations), all or nothing, as
/// kube-apiserver's json-patch library (evanphx v4) does, which is more
/// lenient than RFC 6902: an operation without `value` uses `null`, a
/// path without a leading `/` drops its first token, negative indices
/// count from the end, and `replace` of (or `copy` from) a missing key of
/// an object reads it as `null`. Every failure is 422 (`Invalid`), as
/// upstream answers it.
pub(crate) fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| PatchError::BadRequest("json patch must be a list of operations".into()))?;
    let mut doc = target.clone();
    let mut copied = 0usize;
    for op in ops {
        apply_op(&mut doc, op, &mut copied)?;
    }
    *target = doc;
    Ok(())
}

fn apply_op(doc: &mut Value, op: &Value, copied: &mut usize) -> Result<(), PatchError> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("unknown");
    let path = op
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| PatchError::Invalid(format!("operation missing path: {op}")))?;
    let value = || op.get("value").cloned().unwrap_or(Value::Null);
    let from = || {
        op.get("from")
            .and_then(Value::as_str)
            .ok_or_else(|| PatchError::Invalid(format!("operation missing from: {op}")))
    };
    match kind {
        "add" => {
            let (con, key) = find(doc, path, "add")?;
            add(con, key, value())
        }
        "remove" => {
            let (con, key) = find(doc, path, "remove")?;
            remove(con, &key).map(drop)
        }
        "replace" => {
            let (con, key) = find(doc, path, "replace")?;
            replace(con, key, value())
        }
        "move" => {
            let (con, key) = find(doc, from()?, "move")?;
            get(con, &key)?;
            let v = remove(con, &key)?;
            let (con, key) = find(doc, path, "move")?;
            add(con, key, v)
        }
        "copy" => {
            let (con, key) = find(doc, from()?, "copy")?;
            let v = get(con, &key)?.unwrap_or(&Value::Null);
            *copied = copied.saturating_add(encoded_len(v, MAX_COPIED));
            let v = v.clone();
            if *copied > MAX_COPIED {
                return Err(PatchError::Invalid(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPIED}"
                )));
            }
            let (con, key) = find(doc, path, "copy")?;
            add(con, key, v)
        }
        "test" => test(doc, path, op.get("value")),
        other => Err(PatchError::Invalid(format!("Unexpected kind: {other}"))),
    }
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
            return Err(PatchError::Unknown(format!(
                "unknown strategic merge patch directive: $patch: {other}"
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
    // `$retainKeys`: the original keeps only the keys it lists (a
    // Deployment's strategy switched to Recreate loses its rollingUpdate).
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        t.retain(|k, _| keep.iter().any(|x| x.as_str() == Some(k.as_str())));
    }
    // Primitive-list deletions.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/")
            && let (Some(Value::Array(list)), Some(del)) = (t.get_mut(field), v.as_array())
        {
            list.retain(|x| !del.contains(x));
        }
    }
    // Lists with a `$setElementOrder` first, as upstream's
    // `mergePatchIntoOriginal`; their patch lists are then done.
    let mut done = std::collections::HashSet::new();
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$setElementOrder/")
            && set_element_order(t, field, v, patch.get(field))?
        {
            done.insert(field);
        }
    }
    for (k, v) in patch {
        if k.starts_with('$') || done.contains(k.as_str()) {
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
                let merged = merge_list(k, t.remove(k), items)?;
                t.insert(k.clone(), merged);
            }
            other => {
                t.insert(k.clone(), other.clone());
            }
        }
    }
    Ok(())
}

/// What tells the items of a merged list apart.
#[derive(Debug, Clone, Copy)]
enum Ident<'a> {
    /// Maps, by the value of their merge key.
    Key(&'a str),
    /// Primitives (a set such as `finalizers`), by themselves.
    Value,
}

impl Ident<'_> {
    /// The identity of `item` as text (a map without its key has none).
    fn of(self, item: &Value) -> Option<String> {
        let v = match self {
            Ident::Key(k) => item.get(k)?,
            Ident::Value => item,
        };
        Some(v.to_string())
    }

    /// The first position of each identity in `list`.
    fn positions(self, list: &[Value]) -> std::collections::HashMap<String, usize> {
        let mut at = std::collections::HashMap::with_capacity(list.len());
        for (i, x) in list.iter().enumerate() {
            if let Some(id) = self.of(x) {
                at.entry(id).or_insert(i);
            }
        }
        at
    }
}

/// How the list field `field` merges: by merge key, as a set, or (`None`)
/// not at all (replaced whole). `sample`: an item, to tell a container's
/// `ports` from a Service's.
fn list_ident(field: &str, sample: Option<&Value>) -> Option<Ident<'static>> {
    merge_key(field, sample)
        .map(Ident::Key)
        .or_else(|| is_set_list(field).then_some(Ident::Value))
}

/// The patch's items without the ones carrying a `$patch` directive.
fn without_directives(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter(|i| i.get("$patch").is_none())
        .cloned()
        .collect()
}

/// The value of list field `field` after merging the patch's `items` into
/// the `live` value: by key or as a set into a live list, else the items
/// replace it.
fn merge_list(field: &str, live: Option<Value>, items: &[Value]) -> Result<Value, PatchError> {
    let sample = items.first();
    match (list_ident(field, sample), live) {
        (Some(ident), Some(Value::Array(live))) => {
            merge_items(live, items, ident).map(Value::Array)
        }
        _ => Ok(Value::Array(without_directives(items))),
    }
}

/// Merges `items` into `live` as upstream's `mergeSlice`: a set gains the
/// items it lacks; a keyed list first loses the items a `$patch: delete`
/// names (or is replaced by the patch's items on `$patch: replace`), then
/// each item merges into the live one of its key or is added. The result
/// is ordered by [`order_merged`].
fn merge_items(
    live: Vec<Value>,
    items: &[Value],
    ident: Ident<'_>,
) -> Result<Vec<Value>, PatchError> {
    let Ident::Key(key) = ident else {
        let mut seen = std::collections::HashSet::new();
        let merged: Vec<Value> = live
            .iter()
            .chain(items)
            .filter(|x| seen.insert(x.to_string()))
            .cloned()
            .collect();
        return Ok(order_merged(merged, items, &live, ident));
    };
    let no_key = |item: &Value| {
        PatchError::BadRequest(format!(
            "map: {item} does not contain declared merge key: {key}"
        ))
    };
    let mut plain = Vec::new();
    let mut deleted = std::collections::HashSet::new();
    let mut replace = false;
    for item in items {
        match item.get("$patch").map(|d| d.as_str().unwrap_or("")) {
            None => plain.push(item.clone()),
            Some("delete") => {
                deleted.insert(ident.of(item).ok_or_else(|| no_key(item))?);
            }
            Some("replace") => replace = true,
            Some(other) => {
                return Err(PatchError::BadRequest(format!(
                    "Unknown patch type: {other}"
                )));
            }
        }
    }
    if replace {
        return Ok(plain);
    }
    let live: Vec<Value> = live
        .into_iter()
        .filter(|l| ident.of(l).is_none_or(|id| !deleted.contains(&id)))
        .collect();
    let mut merged = live.clone();
    let mut at = ident.positions(&merged);
    for item in &plain {
        let id = ident.of(item).ok_or_else(|| no_key(item))?;
        let Some(m) = item.as_object() else {
            continue;
        };
        match at.get(&id) {
            Some(&i) => merge_map(&mut merged[i], m)?,
            None => {
                let mut fresh = Value::Object(Map::new());
                merge_map(&mut fresh, m)?;
                at.insert(id, merged.len());
                merged.push(fresh);
            }
        }
    }
    Ok(order_merged(merged, &plain, &live, ident))
}

/// Orders a merged list as upstream's `normalizeElementOrder`: the items
/// that `order` names (the patch's list, or its `$setElementOrder`) in
/// that order, the others (kept from the live list) in the live order,
/// then interleaved so that each keeps its relative order: a kept item
/// goes before a named one only when both are in the live list and it came
/// first there. So new items lead, and a patch that only changes items
/// moves nothing.
fn order_merged(
    merged: Vec<Value>,
    order: &[Value],
    live: &[Value],
    ident: Ident<'_>,
) -> Vec<Value> {
    let order_at = ident.positions(order);
    let live_at = ident.positions(live);
    // (position in `order`, position in the live list, item)
    let mut named = Vec::new();
    let mut kept = Vec::new();
    for x in merged {
        let id = ident.of(&x);
        let o = id.as_ref().and_then(|id| order_at.get(id).copied());
        let l = id.as_ref().and_then(|id| live_at.get(id).copied());
        match o {
            Some(o) => named.push((o, l, x)),
            None => kept.push((l, x)),
        }
    }
    named.sort_by_key(|(o, ..)| *o);
    kept.sort_by_key(|(l, _)| l.unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(named.len() + kept.len());
    let mut named = named.into_iter().peekable();
    let mut kept = kept.into_iter().peekable();
    loop {
        let kept_first = match (kept.peek(), named.peek()) {
            (Some((Some(k), _)), Some((_, Some(n), _))) => k < n,
            (Some(_), None) => true,
            (_, Some(_)) => false,
            (None, None) => break,
        };
        let next = if kept_first {
            kept.next().map(|(_, x)| x)
        } else {
            named.next().map(|(.., x)| x)
        };
        out.extend(next);
    }
    out
}

/// `$setElementOrder/field: order` (and the patch's list `items` of the
/// same field, if any) applied to `t`, as upstream's
/// `mergePatchIntoOriginal`: the list is merged as usual, then the items
/// that `order` names are put in its order before (or among) the kept
/// live ones. `false` when there is no list to order.
fn set_element_order(
    t: &mut Map<String, Value>,
    field: &str,
    order: &Value,
    items: Option<&Value>,
) -> Result<bool, PatchError> {
    let bad = || {
        PatchError::BadRequest(
            "invalid patch: $setElementOrder and its list must be lists".to_owned(),
        )
    };
    let order = order.as_array().ok_or_else(bad)?;
    let live = match t.get(field) {
        None => Vec::new(),
        Some(Value::Array(l)) => l.clone(),
        Some(_) => return Err(bad()),
    };
    let merged = match items {
        None if !t.contains_key(field) => return Ok(false),
        None => live.clone(),
        Some(Value::Array(items)) => match merge_list(field, t.get(field).cloned(), items)? {
            Value::Array(m) => m,
            _ => return Err(bad()),
        },
        Some(_) => return Err(bad()),
    };
    let sample = order.first().or(merged.first());
    let ident = list_ident(field, sample).unwrap_or(Ident::Value);
    t.insert(
        field.to_owned(),
        Value::Array(order_merged(merged, order, &live, ident)),
    );
    Ok(true)
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
                {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}]},
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
            json!({"metadata": {"finalizers": ["b", "a"]}, "spec": {"ports": [{"port": 80, "name": "web"}, {"port": 443}]}})
        );
        strategic_merge(&mut t, &json!({"$deleteFromPrimitiveList/metadata": [], "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})).unwrap();
        assert_eq!(t["metadata"]["finalizers"], json!(["b"]));
    }

    fn names(v: &Value) -> Vec<&str> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn strategic_merge_puts_new_items_before_the_kept_ones() {
        // As kube-apiserver: the patch's new items lead, live ones follow
        // in their order; a changed live item keeps its place.
        let mut t2 = json!({"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]});
        strategic_merge(
            &mut t2,
            &json!({"containers": [{"name": "z"}, {"name": "b", "x": 1}, {"name": "y"}]}),
        )
        .unwrap();
        assert_eq!(names(&t2["containers"]), ["z", "a", "b", "y", "c"]);
        assert_eq!(t2["containers"][2]["x"], 1);
        let mut f = json!({"finalizers": ["a", "b"]});
        strategic_merge(&mut f, &json!({"finalizers": ["c", "a"]})).unwrap();
        assert_eq!(f["finalizers"], json!(["c", "a", "b"]));
    }

    #[test]
    fn strategic_merge_set_element_order() {
        let mut t = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"containers": [
            {"name": "c", "image": "i"}, {"name": "e", "image": "i"}, {"name": "f"}
        ]}});
        strategic_merge(
            &mut t,
            &json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"]},
                    "spec": {"$setElementOrder/containers": [{"name": "e"}, {"name": "c"}],
                             "containers": [{"name": "c", "image": "k"}]}}),
        )
        .unwrap();
        assert_eq!(t["metadata"]["finalizers"], json!(["b", "a"]));
        assert_eq!(names(&t["spec"]["containers"]), ["e", "c", "f"]);
        assert_eq!(t["spec"]["containers"][1]["image"], "k");
        // An order without a list to order changes nothing; one that is
        // not a list is refused.
        let mut u = json!({"metadata": {}});
        strategic_merge(
            &mut u,
            &json!({"metadata": {"$setElementOrder/finalizers": ["x"]}}),
        )
        .unwrap();
        assert_eq!(u, json!({"metadata": {}}));
        assert!(matches!(
            strategic_merge(&mut t, &json!({"$setElementOrder/x": "no"})),
            Err(PatchError::BadRequest(_))
        ));
    }

    #[test]
    fn json_patch_is_as_lenient_as_kube_apiserver() {
        let run = |t: &Value, p: Value| {
            let mut t = t.clone();
            json_patch(&mut t, &p).map(|()| t)
        };
        let t = json!({"data": {"k": "v"}, "tags": ["a", "b"]});
        // No value: null.
        assert_eq!(
            run(&t, json!([{"op": "add", "path": "/data"}])).unwrap()["data"],
            Value::Null
        );
        // No leading slash: the first token is dropped.
        assert_eq!(
            run(
                &t,
                json!([{"op": "replace", "path": "data/k", "value": "x"}])
            )
            .unwrap(),
            json!({"data": {"k": "v"}, "tags": ["a", "b"], "k": "x"})
        );
        assert!(run(&t, json!([{"op": "add", "path": "data", "value": 1}])).is_err());
        assert!(run(&t, json!([{"op": "add", "path": "", "value": 1}])).is_err());
        // Negative indices count from the end.
        let add = |i: &str| {
            run(
                &t,
                json!([{"op": "add", "path": format!("/tags/{i}"), "value": "c"}]),
            )
        };
        assert_eq!(add("-1").unwrap()["tags"], json!(["a", "b", "c"]));
        assert_eq!(add("-3").unwrap()["tags"], json!(["c", "a", "b"]));
        assert_eq!(add("+1").unwrap()["tags"], json!(["a", "c", "b"]));
        assert!(add("-4").is_err());
        assert!(add("3").is_err());
        assert_eq!(
            run(&t, json!([{"op": "remove", "path": "/tags/-1"}])).unwrap()["tags"],
            json!(["a"])
        );
        assert_eq!(
            run(
                &t,
                json!([{"op": "replace", "path": "/tags/-2", "value": "z"}])
            )
            .unwrap()["tags"],
            json!(["z", "b"])
        );
        assert!(run(&t, json!([{"op": "remove", "path": "/tags/-"}])).is_err());
        // A missing key of an object reads as null for replace and copy,
        // not for move or remove.
        assert_eq!(
            run(
                &t,
                json!([{"op": "replace", "path": "/data/m", "value": "w"}])
            )
            .unwrap()["data"],
            json!({"k": "v", "m": "w"})
        );
        assert_eq!(
            run(
                &t,
                json!([{"op": "copy", "from": "/data/m", "path": "/data/j"}])
            )
            .unwrap()["data"],
            json!({"k": "v", "j": null})
        );
        assert!(
            run(
                &t,
                json!([{"op": "move", "from": "/data/m", "path": "/data/j"}])
            )
            .is_err()
        );
        assert!(run(&t, json!([{"op": "remove", "path": "/data/m"}])).is_err());
        assert!(
            run(
                &t,
                json!([{"op": "replace", "path": "/tags/2", "value": 1}])
            )
            .is_err()
        );
        assert!(run(&t, json!([{"op": "copy", "path": "/data/j"}])).is_err());
    }

    #[test]
    fn json_patch_copies_are_bounded() {
        // Each copy doubles the object: refused once the copies pass the
        // bound (after about a dozen), long before memory runs out.
        let mut t = json!({"a": {"v": "x".repeat(1000)}});
        let grow: Vec<Value> = (0..30)
            .map(|i| json!({"op": "copy", "from": "/a", "path": format!("/a/c{i}")}))
            .collect();
        let e = json_patch(&mut t, &Value::Array(grow)).unwrap_err();
        assert!(matches!(e, PatchError::Invalid(m) if m.contains("accumulated size")));
        // Many small copies are fine.
        let small: Vec<Value> = (0..1000)
            .map(|_| json!({"op": "copy", "from": "/a", "path": "/b"}))
            .collect();
        assert!(json_patch(&mut t, &Value::Array(small)).is_ok());
    }
}
