//! Server-side apply and `managedFields` bookkeeping.
//!
//! Ownership is tracked per leaf field: a path of map keys down to a value
//! that is not a non-empty map (lists are atomic, as for fields without a
//! list-map key in real Kubernetes). Every write records which manager set
//! which fields; an apply that would change a field another manager owns is
//! a conflict unless `force=true`, which moves the ownership.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field path: map keys from the object root.
pub(crate) type Path = Vec<String>;

/// Which part of the object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The main resource; `status_separate` when `status` is a subresource
    /// and so is not written through the main resource.
    Main {
        /// Whether `status` is owned by the status subresource.
        status_separate: bool,
    },
    /// The `status` subresource.
    Status,
}

impl Scope {
    fn subresource(self) -> Option<&'static str> {
        match self {
            Scope::Status => Some("status"),
            Scope::Main { .. } => None,
        }
    }

    fn tracks(self, p: &Path) -> bool {
        let first = p.first().map(String::as_str);
        if matches!(first, Some("apiVersion" | "kind")) {
            return false;
        }
        if first == Some("metadata") {
            let second = p.get(1).map(String::as_str);
            if matches!(
                second,
                Some(
                    "name"
                        | "namespace"
                        | "uid"
                        | "resourceVersion"
                        | "generation"
                        | "creationTimestamp"
                        | "managedFields"
                        | "selfLink"
                        | "deletionTimestamp"
                        | "deletionGracePeriodSeconds"
                        | "generateName"
                ) | None
            ) {
                return false;
            }
        }
        match self {
            Scope::Status => first == Some("status"),
            Scope::Main { status_separate } => !(status_separate && first == Some("status")),
        }
    }
}

/// Leaf paths of a value, filtered by scope.
pub(crate) fn leaf_paths(v: &Value, scope: Scope) -> BTreeSet<Path> {
    fn walk(v: &Value, prefix: &mut Path, out: &mut BTreeSet<Path>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    prefix.push(k.clone());
                    walk(child, prefix, out);
                    prefix.pop();
                }
            }
            _ => {
                if !prefix.is_empty() {
                    out.insert(prefix.clone());
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(v, &mut Vec::new(), &mut out);
    out.retain(|p| scope.tracks(p));
    out
}

pub(crate) fn get_path<'a>(v: &'a Value, p: &[String]) -> Option<&'a Value> {
    p.iter().try_fold(v, |cur, k| cur.get(k))
}

fn set_path(v: &mut Value, p: &[String], value: Value) {
    let mut cur = v;
    for k in p {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else { return };
        cur = m.entry(k.clone()).or_insert(Value::Null);
    }
    *cur = value;
}

fn remove_path(v: &mut Value, p: &[String]) {
    let Some((last, parent)) = p.split_last() else {
        return;
    };
    let mut cur = &mut *v;
    for k in parent {
        match cur.get_mut(k) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Value::Object(m) = cur {
        m.remove(last);
        if m.is_empty() && !parent.is_empty() {
            remove_path(v, parent);
        }
    }
}

/// Whether an apply changes the value an owned path `p` covers, checked at
/// the longer of the owned and the applied path.
fn differs(base: &Value, applied: &Value, p: &[String], q: &[String]) -> bool {
    let longer = if q.len() >= p.len() { q } else { p };
    get_path(base, longer) != get_path(applied, longer)
}

fn overlaps(a: &[String], b: &[String]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Encodes paths as `fieldsV1`: `{"f:spec":{"f:replicas":{}}}`.
pub(crate) fn to_fields_v1(paths: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for p in paths {
        let mut cur = &mut root;
        for k in p {
            let key = if k == "." {
                k.clone()
            } else {
                format!("f:{k}")
            };
            let entry = cur.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = entry else { break };
            cur = m;
        }
    }
    Value::Object(root)
}

/// Decodes `fieldsV1`; keyed entries (`k:`, `v:`, `i:`) make their parent a leaf.
pub(crate) fn from_fields_v1(v: &Value) -> BTreeSet<Path> {
    fn walk(v: &Value, prefix: &mut Path, out: &mut BTreeSet<Path>) {
        let Some(m) = v.as_object() else { return };
        let fields: Vec<(&str, &Value)> = m
            .iter()
            .filter_map(|(k, c)| k.strip_prefix("f:").map(|n| (n, c)))
            .collect();
        let has_keyed = m
            .keys()
            .any(|k| k.starts_with("k:") || k.starts_with("v:") || k.starts_with("i:"));
        if (fields.is_empty() || has_keyed) && !prefix.is_empty() {
            out.insert(prefix.clone());
            return;
        }
        if m.contains_key(".") && !prefix.is_empty() {
            let mut dot = prefix.clone();
            dot.push(".".into());
            out.insert(dot);
        }
        for (name, child) in fields {
            prefix.push(name.to_owned());
            walk(child, prefix, out);
            prefix.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: String,
    subresource: Option<String>,
    fields: BTreeSet<Path>,
}

fn read_entries(obj: Option<&Value>) -> Vec<Entry> {
    let Some(list) = obj
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .map(|e| {
            let s = |k: &str| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            Entry {
                manager: s("manager"),
                operation: s("operation"),
                api_version: s("apiVersion"),
                time: s("time"),
                subresource: e
                    .get("subresource")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
            }
        })
        .collect()
}

fn write_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    for e in &mut entries {
        // A map's own entry (`".": {}`) goes with the map.
        e.fields.retain(|p| match p.split_last() {
            Some((last, parent)) if last == "." => {
                get_path(obj, parent).is_some_and(Value::is_object)
            }
            _ => true,
        });
    }
    let list: Vec<Value> = entries
        .into_iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&e.fields),
            });
            if let (Some(s), Value::Object(m)) = (e.subresource, &mut v) {
                m.insert("subresource".into(), Value::String(s));
            }
            v
        })
        .collect();
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// One field another manager owns and an apply wanted to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// The owning manager.
    pub(crate) manager: String,
    /// The API version the owner used.
    pub(crate) api_version: String,
    /// The field, as `.spec.replicas`.
    pub(crate) field: String,
}

fn dotted(p: &[String]) -> String {
    p.iter().map(|k| format!(".{k}")).collect()
}

/// Identity of an apply or update.
pub(crate) struct Writer<'a> {
    /// The field manager.
    pub(crate) manager: &'a str,
    /// The apiVersion of the request.
    pub(crate) api_version: &'a str,
    /// The RFC 3339 time of the write.
    pub(crate) now: &'a str,
    /// The part of the object written.
    pub(crate) scope: Scope,
    /// Whether the object is a custom resource (untyped: no field of it
    /// exists before it is written).
    pub(crate) custom: bool,
}

/// Server-side apply of `applied` onto `base` (the live object, or a skeleton
/// for a create). Returns the new object with its `managedFields`, or the
/// conflicts when `force` is false.
pub(crate) fn apply(
    base: &Value,
    applied: &Value,
    w: &Writer<'_>,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let mut entries = read_entries(Some(base));
    let sub = w.scope.subresource().map(str::to_owned);
    let mine = |e: &Entry| e.manager == w.manager && e.operation == "Apply" && e.subresource == sub;
    let wanted = leaf_paths(applied, w.scope);
    let previous: BTreeSet<Path> = entries
        .iter()
        .filter(|e| mine(e))
        .flat_map(|e| e.fields.clone())
        .collect();

    let mut conflicts = Vec::new();
    for e in entries.iter().filter(|e| !mine(e)) {
        for p in &e.fields {
            for q in wanted.iter().filter(|q| overlaps(p, q)) {
                if differs(base, applied, p, q) {
                    conflicts.push(Conflict {
                        manager: e.manager.clone(),
                        api_version: e.api_version.clone(),
                        field: dotted(p),
                    });
                    break;
                }
            }
        }
    }
    if !conflicts.is_empty() && !force {
        conflicts.dedup();
        return Err(conflicts);
    }
    if force {
        for e in entries.iter_mut().filter(|e| !mine(e)) {
            e.fields.retain(|p| {
                !wanted
                    .iter()
                    .any(|q| overlaps(p, q) && differs(base, applied, p, q))
            });
        }
    }

    let mut out = base.clone();
    for p in &wanted {
        if let Some(v) = get_path(applied, p) {
            set_path(&mut out, p, v.clone());
        }
    }
    for p in previous.difference(&wanted) {
        let owned_elsewhere = entries
            .iter()
            .filter(|e| !mine(e))
            .any(|e| e.fields.iter().any(|q| overlaps(p, q)));
        if !owned_elsewhere {
            remove_path(&mut out, p);
        }
    }
    entries.retain(|e| !mine(e));
    entries.push(Entry {
        manager: w.manager.to_owned(),
        operation: "Apply".into(),
        api_version: w.api_version.to_owned(),
        time: w.now.to_owned(),
        subresource: sub,
        fields: wanted,
    });
    write_entries(&mut out, entries);
    Ok(out)
}

/// The maps a non-apply write adds, each as its own entry (`path + "."`,
/// written `".": {}`), as kube-apiserver's comparison of the old and new
/// object records every node the new one adds. A typed built-in's `spec`
/// and `status` exist (empty) in the object it starts from, so only a
/// custom resource's are added.
fn added_maps(old: Option<&Value>, new: &Value, w: &Writer<'_>) -> BTreeSet<Path> {
    fn walk(
        v: &Value,
        old: Option<&Value>,
        p: &mut Path,
        w: &Writer<'_>,
        out: &mut BTreeSet<Path>,
    ) {
        let Value::Object(m) = v else { return };
        for (k, child) in m {
            p.push(k.clone());
            let typed = !w.custom && matches!(p[0].as_str(), "spec" | "status");
            if child.as_object().is_some_and(|c| !c.is_empty()) {
                if !typed && w.scope.tracks(p) && old.and_then(|o| get_path(o, p)).is_none() {
                    let mut dot = p.clone();
                    dot.push(".".into());
                    out.insert(dot);
                }
                walk(child, old, p, w, out);
            }
            p.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(new, old, &mut Vec::new(), w, &mut out);
    out
}

/// Records a non-apply write (create, update, patch) by `w.manager`: it
/// takes the fields it changed from everyone else.
pub(crate) fn record_update(old: Option<&Value>, new: &mut Value, w: &Writer<'_>) {
    let mut entries = read_entries(old);
    let now_paths = leaf_paths(new, w.scope);
    let old_paths = old.map(|o| leaf_paths(o, w.scope)).unwrap_or_default();
    let changed: BTreeSet<Path> = now_paths
        .iter()
        .filter(|p| old.and_then(|o| get_path(o, p)) != get_path(new, p))
        .cloned()
        .collect();
    let mut changed = changed;
    changed.extend(added_maps(old, new, w));
    let removed: BTreeSet<Path> = old_paths.difference(&now_paths).cloned().collect();
    if changed.is_empty() && removed.is_empty() {
        write_entries(new, entries);
        return;
    }
    let sub = w.scope.subresource().map(str::to_owned);
    for e in &mut entries {
        e.fields
            .retain(|p| !changed.iter().chain(removed.iter()).any(|q| overlaps(p, q)));
    }
    if let Some(e) = entries
        .iter_mut()
        .find(|e| e.manager == w.manager && e.operation == "Update" && e.subresource == sub)
    {
        e.fields.extend(changed);
        e.time = w.now.to_owned();
        e.api_version = w.api_version.to_owned();
    } else {
        entries.push(Entry {
            manager: w.manager.to_owned(),
            operation: "Update".into(),
            api_version: w.api_version.to_owned(),
            time: w.now.to_owned(),
            subresource: sub,
            fields: changed,
        });
    }
    write_entries(new, entries);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w<'a>(m: &'a str) -> Writer<'a> {
        Writer {
            manager: m,
            api_version: "apps/v1",
            now: "2026-01-01T00:00:00Z",
            scope: Scope::Main {
                status_separate: true,
            },
            custom: false,
        }
    }

    #[test]
    fn fields_v1_round_trip() {
        let v = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"replicas": 1, "template": {}}, "status": {"r": 1}});
        let paths = leaf_paths(
            &v,
            Scope::Main {
                status_separate: true,
            },
        );
        let f = to_fields_v1(&paths);
        assert_eq!(
            f,
            json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:replicas": {}, "f:template": {}}})
        );
        assert_eq!(from_fields_v1(&f), paths);
    }

    #[test]
    fn apply_conflict_force_and_removal() {
        let base =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let a1 = json!({"metadata": {"name": "d"}, "spec": {"replicas": 1, "paused": false}});
        let o1 = apply(&base, &a1, &w("alice"), false).unwrap();
        assert_eq!(o1["spec"]["replicas"], 1);
        // Same value: shared ownership, no conflict.
        let o2 = apply(&o1, &json!({"spec": {"replicas": 1}}), &w("bob"), false).unwrap();
        // Different value: conflict.
        let err = apply(&o2, &json!({"spec": {"replicas": 3}}), &w("carol"), false).unwrap_err();
        assert_eq!(err.len(), 2);
        assert_eq!(err[0].field, ".spec.replicas");
        let o3 = apply(&o2, &json!({"spec": {"replicas": 3}}), &w("carol"), true).unwrap();
        assert_eq!(o3["spec"]["replicas"], 3);
        // alice stops applying paused: removed since nobody else owns it.
        let o4 = apply(&o3, &json!({"metadata": {"name": "d"}}), &w("alice"), false).unwrap();
        assert!(o4["spec"].get("paused").is_none());
        assert_eq!(o4["spec"]["replicas"], 3);
    }

    #[test]
    fn update_takes_ownership() {
        let base = json!({"metadata": {"name": "d"}});
        let o1 = apply(&base, &json!({"spec": {"replicas": 1}}), &w("alice"), false).unwrap();
        let mut o2 = o1.clone();
        o2["spec"]["replicas"] = json!(5);
        record_update(Some(&o1), &mut o2, &w("kubectl-edit"));
        let err = apply(&o2, &json!({"spec": {"replicas": 2}}), &w("alice"), false).unwrap_err();
        assert_eq!(err[0].manager, "kubectl-edit");
    }

    #[test]
    fn an_update_owns_the_maps_it_adds() {
        let fields = |o: &Value| o["metadata"]["managedFields"][0]["fieldsV1"].clone();
        let mut cm = json!({"metadata": {"name": "a", "labels": {"l": "1"}}, "data": {"k": "v"}});
        record_update(None, &mut cm, &w("creator"));
        assert_eq!(
            fields(&cm),
            json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
        );
        // A typed object's spec exists before it is written; a custom
        // resource's does not.
        let mut d = json!({"metadata": {"name": "d"}, "spec": {"replicas": 1}});
        record_update(None, &mut d, &w("creator"));
        assert_eq!(fields(&d), json!({"f:spec": {"f:replicas": {}}}));
        let mut cr = d.clone();
        cr["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        let custom = Writer {
            custom: true,
            ..w("creator")
        };
        record_update(None, &mut cr, &custom);
        assert_eq!(fields(&cr), json!({"f:spec": {".": {}, "f:replicas": {}}}));
        // The entry survives a round trip and goes with its map.
        let mut next = cm.clone();
        next.as_object_mut().unwrap().remove("data");
        record_update(Some(&cm), &mut next, &w("editor"));
        assert_eq!(
            fields(&next),
            json!({"f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
        );
    }
}
