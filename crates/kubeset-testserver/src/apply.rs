//! Server-side apply and `managedFields`, as kube-apiserver's field
//! manager keeps them (k8s.io/apimachinery `util/managedfields/internal`
//! over structured-merge-diff, the walks in `typed.rs`):
//!
//! - **An update** (create, PUT, every patch but apply) compares the old
//!   object with the new one; the writer's entry gains what was added or
//!   modified, every other entry loses what changed or was removed. An
//!   object stored without `managedFields` stays without them (the real
//!   server's "skip non-applied" rule), unless it is being created.
//!   `managedFields` in the body of a main-resource write replace the live
//!   ones (`[]` resets them).
//! - **An apply** merges the configuration into the live object by its
//!   shape (`shape.rs`: list items by key or value, atomic lists whole),
//!   removes what the applier owned before and no longer applies when
//!   nobody else owns it, and refuses to change a field another manager
//!   owns unless `force`. A live object without managedFields first gets a
//!   `before-first-apply` entry for what it holds.
//! - Entries are identified by manager, operation, subresource and (for
//!   updates) apiVersion, stripped of the fields no one owns (`metadata.name`,
//!   `uid`, …), and written sorted as the real server sorts them: applies
//!   first, then by time (an entry that did not change keeps its time; an
//!   applier that changed nothing gets none), manager, apiVersion and
//!   subresource.

use serde_json::{Value, json};

use crate::fieldset::{self, Path, Pe, Set};
use crate::resources::Resource;
use crate::shape::{self, Shape};
use crate::smd::{self, Comparison};
use crate::status::ApiError;

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
    /// The `Scale` of the `scale` subresource (its `status` is not written).
    Scale,
}

impl Scope {
    fn subresource(self) -> Option<&'static str> {
        match self {
            Scope::Status => Some("status"),
            Scope::Scale => Some("scale"),
            Scope::Main { .. } => None,
        }
    }

    /// Whether a change at `p` counts for this scope (the registry's reset
    /// fields do not: `status` through the main resource, `spec` through
    /// `status`).
    fn tracks(self, p: &[Pe]) -> bool {
        let first = p.first().and_then(Pe::as_field);
        match self {
            Scope::Status => first != Some("spec"),
            Scope::Scale => first != Some("status"),
            Scope::Main { status_separate } => !(status_separate && first == Some("status")),
        }
    }

    fn filter(self, set: &mut Set) {
        set.retain(|p| self.tracks(p));
    }
}

/// The value at a path of map keys.
pub(crate) fn get_path<'a>(v: &'a Value, p: &[String]) -> Option<&'a Value> {
    p.iter().try_fold(v, |cur, k| cur.get(k))
}

/// Fields no entry keeps (the real server's strip set).
fn stripped(p: &[Pe]) -> bool {
    let names: Vec<Option<&str>> = p.iter().map(Pe::as_field).collect();
    match names.as_slice() {
        [Some("apiVersion" | "kind" | "metadata")] => true,
        [Some("metadata"), Some(second)] => matches!(
            *second,
            "name"
                | "namespace"
                | "creationTimestamp"
                | "selfLink"
                | "uid"
                | "clusterName"
                | "generation"
                | "managedFields"
                | "resourceVersion"
        ),
        _ => false,
    }
}

fn strip(mut set: Set) -> Set {
    set.retain(|p| !stripped(p));
    set
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    applied: bool,
    api_version: String,
    subresource: Option<String>,
    time: Option<String>,
    fields: Set,
}

impl Entry {
    /// Whether two entries are the same manager's (an applier's across
    /// apiVersions).
    fn same(&self, o: &Entry) -> bool {
        self.manager == o.manager
            && self.applied == o.applied
            && self.subresource == o.subresource
            && (self.applied || self.api_version == o.api_version)
    }

    /// How a conflict names it: `"m"`, `"m" with subresource "status"`,
    /// `"m" using apps/v1` for an updater.
    fn display(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(" with subresource {sub:?}"));
        }
        if !self.applied {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// Reads `managedFields`; any malformed entry makes the whole list
/// unreadable (the real server then starts from none).
fn decode(list: Option<&Value>) -> Result<Vec<Entry>, String> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or("managedFields is not a list")?;
    let mut out: Vec<Entry> = Vec::new();
    for e in list {
        let s = |k: &str| e.get(k).and_then(Value::as_str);
        let applied = match s("operation") {
            Some("Apply") => true,
            Some("Update") => false,
            _ => return Err("operation must be `Apply` or `Update`".into()),
        };
        let api_version = s("apiVersion")
            .filter(|v| !v.is_empty())
            .ok_or("apiVersion must not be empty")?;
        if s("fieldsType") != Some("FieldsV1") {
            return Err("fieldsType must be FieldsV1".into());
        }
        let fields = match e.get("fieldsV1") {
            Some(f) => fieldset::from_fields_v1(f)?,
            None => Set::new(),
        };
        let entry = Entry {
            manager: s("manager").unwrap_or_default().to_owned(),
            applied,
            api_version: api_version.to_owned(),
            subresource: s("subresource")
                .filter(|v| !v.is_empty())
                .map(str::to_owned),
            time: s("time").map(str::to_owned),
            fields,
        };
        out.retain(|o| !o.same(&entry));
        out.push(entry);
    }
    Ok(out)
}

fn live_entries(obj: Option<&Value>) -> Vec<Entry> {
    decode(obj.and_then(|o| o.pointer("/metadata/managedFields"))).unwrap_or_default()
}

fn take_managed_fields(obj: &mut Value) -> Option<Value> {
    obj.get_mut("metadata")?
        .as_object_mut()?
        .remove("managedFields")
}

/// Writes the entries, sorted as the real server sorts them.
fn write_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    // RFC 3339 times of one format order as strings; no time is oldest.
    entries.sort_by(|a, b| {
        let seconds = |e: &Entry| {
            e.time
                .as_deref()
                .map(|t| t.get(..19).unwrap_or(t).to_owned())
        };
        (
            !a.applied,
            seconds(a),
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                !b.applied,
                seconds(b),
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let list: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": if e.applied { "Apply" } else { "Update" },
                "apiVersion": e.api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": fieldset::to_fields_v1(&e.fields),
            });
            if let Some(t) = e.time {
                v["time"] = json!(t);
            }
            if let Some(s) = e.subresource {
                v["subresource"] = json!(s);
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
    /// The owner as the real server prints it: `"m"`, `"m" using v1`.
    pub(crate) manager: String,
    /// The field, as `.spec.ports[name="a"].port`.
    pub(crate) field: String,
}

/// Why an apply failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApplyError {
    /// Fields other managers own (409).
    Conflicts(Vec<Conflict>),
    /// The configuration is not an object of its kind's shape (the real
    /// server's structured-merge-diff error, a 500).
    Shape(String),
    /// The configuration carries `managedFields` (400).
    ManagedFields,
}

impl ApplyError {
    /// The Status answered for it.
    pub(crate) fn into_api(self, res: &Resource, name: &str) -> ApiError {
        match self {
            ApplyError::Conflicts(c) => {
                let pairs: Vec<(&str, &str)> = c
                    .iter()
                    .map(|c| (c.manager.as_str(), c.field.as_str()))
                    .collect();
                ApiError::apply_conflicts(res, name, &pairs)
            }
            // A plain error in kube-apiserver: a 500 with no reason.
            ApplyError::Shape(msg) => ApiError {
                code: 500,
                reason: "",
                message: format!(
                    "failed to create typed patch object (/{name}; {}/{}, Kind={}): {msg}",
                    res.group, res.version, res.kind
                ),
                details: None,
            },
            ApplyError::ManagedFields => {
                ApiError::bad_request("metadata.managedFields must be nil")
            }
        }
    }
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
    /// The resource written (its shape, and whether it is custom).
    pub(crate) res: &'a Resource,
}

impl Writer<'_> {
    fn entry(&self, applied: bool, fields: Set) -> Entry {
        Entry {
            manager: self.manager.to_owned(),
            applied,
            api_version: self.api_version.to_owned(),
            subresource: self.scope.subresource().map(str::to_owned),
            time: Some(self.now.to_owned()),
            fields,
        }
    }

    /// What changed from `old` to `new`, within the scope.
    fn compare(&self, old: &Value, new: &Value, shape: &Shape) -> Comparison {
        let mut c = smd::compare(old, new, shape);
        for s in [&mut c.added, &mut c.modified, &mut c.removed] {
            self.scope.filter(s);
        }
        c
    }
}

/// The object a create starts from: Go's zero value of the kind, whose
/// `spec` and `status` structs exist (empty) for a built-in kind.
fn zero_object(w: &Writer<'_>, shape: &Shape) -> Value {
    let mut zero = json!({"apiVersion": w.api_version, "kind": w.res.kind, "metadata": {}});
    if !w.res.custom {
        for part in ["spec", "status"] {
            if shape.declares(part) {
                zero[part] = json!({});
            }
        }
        crate::registry::of(w.res).go_zero(&mut zero);
    }
    zero
}

/// Every other entry loses what changed or was removed; the writer's
/// (`me`) gains its `fields`. Returns the conflicts: fields of other
/// entries that changed.
fn hand_over(entries: &mut Vec<Entry>, c: &Comparison, me: Option<Entry>) -> Vec<Conflict> {
    let changed: Set = c.added.union(&c.modified).cloned().collect();
    let mut conflicts = Vec::new();
    for e in entries.iter_mut() {
        for p in e.fields.intersection(&changed) {
            conflicts.push(Conflict {
                manager: e.display(),
                field: fieldset::display(p),
            });
        }
        e.fields
            .retain(|p| !changed.contains(p) && !c.removed.contains(p));
    }
    entries.retain(|e| !e.fields.is_empty());
    if let Some(me) = me.filter(|m| !m.fields.is_empty()) {
        match entries.iter_mut().find(|e| e.same(&me)) {
            Some(prev) => {
                prev.fields.extend(me.fields);
                prev.time = me.time;
            }
            None => entries.push(me),
        }
    }
    conflicts.sort_by(|a, b| (&a.manager, &a.field).cmp(&(&b.manager, &b.field)));
    conflicts
}

/// Records a non-apply write (create: `old` is `None`; update, patch) by
/// `w.manager` in `new`'s `managedFields`.
pub(crate) fn record_update(old: Option<&Value>, new: &mut Value, w: &Writer<'_>) {
    let shape = shape::of(w.res);
    let from_body = take_managed_fields(new);
    let mut entries = match (w.scope, from_body) {
        (Scope::Main { .. }, Some(Value::Array(a))) if a.is_empty() => Vec::new(),
        (Scope::Main { .. }, Some(body)) => match decode(Some(&body)) {
            Ok(e) if !e.is_empty() => e,
            _ => live_entries(old),
        },
        _ => live_entries(old),
    };
    if entries.is_empty() && old.is_some() {
        return;
    }
    let zero;
    let before = match old {
        Some(o) => o,
        None => {
            zero = zero_object(w, &shape);
            &zero
        }
    };
    let mut before = before.clone();
    take_managed_fields(&mut before);
    let c = w.compare(&before, new, &shape);
    let mine = strip(c.added.union(&c.modified).cloned().collect());
    hand_over(&mut entries, &c, Some(w.entry(false, mine)));
    write_entries(new, entries);
}

/// Puts back the live object's top-level fields the scope does not write
/// (`status` through the main resource, `spec` through `status`), as the
/// registry's strategy does before the object is stored.
fn reset_untracked(merged: &mut Value, live: &Value, scope: Scope) {
    let (Value::Object(m), Value::Object(l)) = (merged, live) else {
        return;
    };
    let keys: Vec<String> = m.keys().chain(l.keys()).cloned().collect();
    for k in keys {
        if scope.tracks(&[Pe::field(&k)]) {
            continue;
        }
        match l.get(&k) {
            Some(v) => m.insert(k, v.clone()),
            None => m.remove(&k),
        };
    }
}

/// Server-side apply of `applied` onto `base` (the live object, or a
/// skeleton for a create). Returns the new object with its
/// `managedFields`.
pub(crate) fn apply(
    base: &Value,
    applied: &Value,
    w: &Writer<'_>,
    force: bool,
) -> Result<Value, ApplyError> {
    if applied
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApplyError::ManagedFields);
    }
    let shape = shape::of(w.res);
    let mut set = smd::to_field_set(applied, &shape, true).map_err(|e| ApplyError::Shape(e.0))?;
    w.scope.filter(&mut set);
    let mut live = base.clone();
    let mut entries = live_entries(Some(base));
    take_managed_fields(&mut live);
    if entries.is_empty() && live.pointer("/metadata/uid").is_some() {
        let before = Writer {
            manager: "before-first-apply",
            ..*w
        };
        let c = w.compare(&zero_object(w, &shape), &live, &shape);
        let owned = strip(c.added.union(&c.modified).cloned().collect());
        hand_over(&mut entries, &c, Some(before.entry(false, owned)));
    }
    let me = w.entry(true, set.clone());
    let last = entries
        .iter()
        .position(|e| e.same(&me))
        .map(|i| entries.remove(i));
    let mut merged = smd::merge(&live, applied, &shape).map_err(|e| ApplyError::Shape(e.0))?;
    reset_untracked(&mut merged, &live, w.scope);
    if let Some(last) = &last {
        let owned: Set = entries
            .iter()
            .flat_map(|e| e.fields.iter().cloned())
            .chain(set.iter().cloned())
            .collect();
        let owned = fieldset::with_named_parents(&owned);
        let mut gone: Set = fieldset::with_named_parents(&last.fields)
            .difference(&owned)
            .cloned()
            .collect();
        w.scope.filter(&mut gone);
        smd::remove(&mut merged, &shape, &gone);
    }
    let c = w.compare(&live, &merged, &shape);
    let conflicts = hand_over(&mut entries, &c, None);
    if !conflicts.is_empty() && !force {
        return Err(ApplyError::Conflicts(conflicts));
    }
    let changed = merged != live;
    let time = if changed {
        me.time.clone()
    } else {
        last.and_then(|l| l.time)
    };
    let mine = strip(set);
    if !mine.is_empty() {
        entries.push(Entry {
            time,
            fields: mine,
            ..me
        });
    }
    let mut out = if changed { merged } else { live };
    write_entries(&mut out, entries);
    Ok(out)
}

/// The `apiVersion` of every `Scale`.
const SCALE_API_VERSION: &str = "autoscaling/v1";

/// A write through the `scale` subresource, as kube-apiserver's scale
/// handler makes it (its `ToSubresource`/`FromSubresource`): the `Scale`
/// (`scale`, built from `parent`) is owned by the parent's owners of the
/// replicas (`replicas`, the parent's path) at the Scale's apiVersion,
/// `op` writes it as the `scale` subresource (an apply or an update,
/// recording its managedFields), and the `Scale`'s owners of
/// `.spec.replicas` become owners of the parent's path again at the
/// parent's apiVersion — a writer through the Scale with subresource
/// `scale`, so its next write there is its own, not a conflict — with the
/// time the parent had for them (none). Returns the replicas and the
/// parent's new `managedFields` (`None`: none left).
pub(crate) fn through_scale<E>(
    parent: &Value,
    scale: &Value,
    replicas: &[String],
    w: &Writer<'_>,
    op: impl FnOnce(&Value, &Writer<'_>) -> Result<Value, E>,
) -> Result<(i64, Option<Value>), E> {
    let rp: Path = replicas.iter().map(|k| Pe::field(k)).collect();
    let sp: Path = vec![Pe::field("spec"), Pe::field("replicas")];
    let parent_entries = live_entries(Some(parent));
    let owners: Vec<Entry> = parent_entries
        .iter()
        .filter(|e| e.fields.contains(&rp))
        .map(|e| Entry {
            fields: Set::from([sp.clone()]),
            api_version: SCALE_API_VERSION.to_owned(),
            ..e.clone()
        })
        .collect();
    let mut scale = scale.clone();
    write_entries(&mut scale, owners.clone());
    let mut scale_res = w.res.clone();
    "autoscaling".clone_into(&mut scale_res.group);
    "v1".clone_into(&mut scale_res.version);
    "Scale".clone_into(&mut scale_res.kind);
    scale_res.custom = false;
    scale_res.schema = None;
    let sw = Writer {
        api_version: SCALE_API_VERSION,
        scope: Scope::Scale,
        res: &scale_res,
        ..*w
    };
    let written = op(&scale, &sw)?;
    let n = written
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut entries: Vec<Entry> = parent_entries
        .iter()
        .cloned()
        .map(|mut e| {
            e.fields.remove(&rp);
            e
        })
        .collect();
    for e in live_entries(Some(&written)) {
        if !e.fields.contains(&sp) {
            continue;
        }
        // The parent's apiVersion; the subresource is the writer's own
        // (`scale` for one through the Scale, kept for the parent's owners).
        let mut back = Entry {
            fields: Set::from([rp.clone()]),
            api_version: w.api_version.to_owned(),
            ..e
        };
        back.time = parent_entries
            .iter()
            .find(|p| p.same(&back))
            .and_then(|p| p.time.clone());
        match entries.iter_mut().find(|x| x.same(&back)) {
            Some(x) => x.fields.extend(back.fields),
            None => entries.push(back),
        }
    }
    let mut out = json!({"metadata": {}});
    write_entries(&mut out, entries);
    Ok((n, out.pointer("/metadata/managedFields").cloned()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::resources;

    fn res(group: &str, plural: &str) -> Arc<Resource> {
        resources::builtin()
            .into_iter()
            .find(|r| r.group == group && r.plural == plural)
            .expect("a built-in resource")
    }

    fn writer<'a>(res: &'a Resource, manager: &'a str, now: &'a str) -> Writer<'a> {
        Writer {
            manager,
            api_version: if res.group.is_empty() {
                "v1"
            } else {
                "apps/v1"
            },
            now,
            scope: Scope::Main {
                status_separate: res.has_status(),
            },
            res,
        }
    }

    fn fields(obj: &Value, manager: &str) -> Value {
        obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == manager)
            .map(|e| e["fieldsV1"].clone())
            .unwrap_or(Value::Null)
    }

    const T: &str = "2026-01-01T00:00:00Z";

    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "uid": "u"},
            "spec": {"template": {"spec": {"containers": containers}}}})
    }

    #[test]
    fn two_appliers_of_a_keyed_list_merge_and_conflict_on_an_element() {
        let d = res("apps", "deployments");
        let base =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let one = deployment(json!([{"name": "c", "image": "i"}]));
        let o1 = apply(&base, &one, &writer(&d, "one", T), false).unwrap();
        let o2 = apply(
            &o1,
            &deployment(json!([{"name": "side", "image": "j"}])),
            &writer(&d, "two", T),
            false,
        )
        .unwrap();
        let names: Vec<&Value> = o2["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["name"])
            .collect();
        assert_eq!(names, [&json!("c"), &json!("side")]);
        assert_eq!(
            fields(&o2, "two")["f:spec"]["f:template"]["f:spec"]["f:containers"],
            json!({"k:{\"name\":\"side\"}": {".": {}, "f:image": {}, "f:name": {}}})
        );
        let err = apply(
            &o2,
            &deployment(json!([{"name": "c", "image": "x"}])),
            &writer(&d, "two", T),
            false,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ApplyError::Conflicts(vec![Conflict {
                manager: "\"one\"".into(),
                field: ".spec.template.spec.containers[name=\"c\"].image".into(),
            }])
        );
    }

    #[test]
    fn an_applier_that_drops_an_item_removes_it_unless_another_owns_the_item() {
        let cm = res("", "configmaps");
        let base = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let with = |f: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "finalizers": f}});
        let o1 = apply(
            &base,
            &with(json!(["x", "y"])),
            &writer(&cm, "one", T),
            false,
        )
        .unwrap();
        let o2 = apply(&o1, &with(json!(["y"])), &writer(&cm, "two", T), false).unwrap();
        let o3 = apply(&o2, &with(json!(["x"])), &writer(&cm, "one", T), false).unwrap();
        // "y" stays: "two" applies it too.
        assert_eq!(o3["metadata"]["finalizers"], json!(["x", "y"]));
        let o4 = apply(&o3, &with(json!([])), &writer(&cm, "two", T), false).unwrap();
        assert_eq!(o4["metadata"]["finalizers"], json!(["x"]));
        assert_eq!(
            fields(&o4, "one"),
            json!({"f:metadata": {"f:finalizers": {"v:\"x\"": {}}}})
        );
    }

    #[test]
    fn an_update_records_what_it_adds_and_takes_what_it_changes() {
        let cm = res("", "configmaps");
        let mut created = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}}});
        record_update(None, &mut created, &writer(&cm, "creator", T));
        assert_eq!(
            fields(&created, "creator"),
            json!({"f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
        );
        created["metadata"]["uid"] = json!("u");
        let mut changed = created.clone();
        changed["metadata"]["labels"]["x"] = json!("2");
        record_update(Some(&created), &mut changed, &writer(&cm, "label", T));
        assert_eq!(
            fields(&changed, "creator"),
            json!({"f:metadata": {"f:labels": {}}})
        );
        // An object stored without managedFields gets none from an update.
        let mut bare =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "uid": "u"}});
        let old = bare.clone();
        bare["data"] = json!({"k": "v"});
        record_update(Some(&old), &mut bare, &writer(&cm, "editor", T));
        assert!(bare["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn entries_are_sorted_applies_first_then_by_time_then_by_manager() {
        let mut obj =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "uid": "u"}});
        let entry = |m: &str, op: &str, t: Option<&str>| {
            let mut e = json!({"manager": m, "operation": op, "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {format!("f:{m}"): {}}}});
            if let Some(t) = t {
                e["time"] = json!(t);
            }
            e
        };
        obj["metadata"]["managedFields"] = json!([
            entry("b", "Update", Some("2026-01-01T00:00:02Z")),
            entry("z", "Update", Some("2026-01-01T00:00:01Z")),
            entry("a", "Update", Some("2026-01-01T00:00:02Z")),
            entry("y", "Apply", Some("2026-01-01T00:00:05Z")),
            entry("x", "Apply", None),
        ]);
        let entries = live_entries(Some(&obj));
        write_entries(&mut obj, entries);
        let order: Vec<&str> = obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["x", "y", "z", "a", "b"]);
    }

    #[test]
    fn a_scale_apply_conflicts_with_the_owner_of_the_replicas() {
        let d = res("apps", "deployments");
        let mut live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "uid": "u"}, "spec": {"replicas": 1}});
        record_update(None, &mut live, &writer(&d, "creator", T));
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "d", "uid": "u"}, "spec": {"replicas": 1}});
        let config = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": 3}});
        let path = ["spec".to_owned(), "replicas".to_owned()];
        let w = writer(&d, "m", T);
        let err = through_scale(&live, &scale, &path, &w, |s, sw| {
            apply(s, &config, sw, false)
        })
        .unwrap_err();
        assert!(matches!(&err, ApplyError::Conflicts(c) if c[0].field == ".spec.replicas"));
        let (n, mf) = through_scale(&live, &scale, &path, &w, |s, sw| {
            apply(s, &config, sw, true)
        })
        .unwrap();
        assert_eq!(n, 3);
        let m = mf.unwrap();
        assert_eq!(m[0]["manager"], "m");
        assert_eq!(m[0]["subresource"], "scale");
        assert_eq!(m[0]["apiVersion"], "apps/v1");
        assert!(m[0].get("time").is_none());
        assert_eq!(m[0]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    }

    #[test]
    fn hostile_configurations_are_refused_with_a_reason_never_a_panic() {
        let d = res("apps", "deployments");
        let live =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let shape_error = |c: Value| {
            let mut config =
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
            config["spec"] = c;
            match apply(&live, &config, &writer(&d, "m", T), false) {
                Err(ApplyError::Shape(msg)) => msg,
                other => panic!("{other:?}"),
            }
        };
        let containers = |c: Value| json!({"template": {"spec": {"containers": c}}});
        // A keyed item without its key, an item that is no object, one key twice.
        assert!(shape_error(containers(json!([{"image": "i"}]))).contains("omits all key fields"));
        assert!(shape_error(containers(json!(["c"]))).contains("expected a map"));
        assert!(
            shape_error(containers(json!([{"name": "c"}, {"name": "c"}])))
                .contains("duplicate entries")
        );
        // A list where a map is, a map where a list is, an object for a scalar.
        assert!(shape_error(json!({"template": []})).contains("expected map"));
        assert!(shape_error(containers(json!({"name": "c"}))).contains("expected list"));
        assert!(shape_error(json!({"replicas": {"a": 1}})).contains("expected integer"));
        // A key whose value is itself an object is still one element.
        let cm = res("", "configmaps");
        let odd = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "ownerReferences": [{"uid": {"x": [1, 2]}, "name": "o", "kind": "K", "apiVersion": "v1"}]}});
        let base = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let out = apply(&base, &odd, &writer(&cm, "m", T), false).unwrap();
        assert!(
            fields(&out, "m")["f:metadata"]["f:ownerReferences"]
                .as_object()
                .unwrap()
                .contains_key("k:{\"uid\":{\"x\":[1,2]}}")
        );
    }
}
