//! CRD conversion webhooks, the rules (the calls are [`call`]): a CRD with `conversion.strategy:
//! Webhook` keeps its objects in its storage version, as kube-apiserver's
//! apiextensions-apiserver does; a write in another version is converted
//! to it before it is stored, and a read in another version converts what
//! is stored. The `None` strategy shares storage across versions and only
//! rewrites `apiVersion` ([`crate::store::as_version`]).
//!
//! The review is upstream's (`webhook_converter.go`): a
//! `ConversionReview` of the first version of `conversionReviewVersions`
//! the server knows (`v1`, `v1beta1`), with `desiredAPIVersion`, a fresh
//! `uid` and only the objects not already in the desired version (none:
//! no call). The answer is checked as upstream checks it ([`read_answer`],
//! [`merge`]): its `uid` (`v1` only), `result.status`, the count of
//! `convertedObjects`, each one's `apiVersion` and `kind`, its name,
//! namespace and uid; its metadata is then the original's but for
//! `labels` and `annotations`, which the webhook may change.
//!
//! The store converts under its lock without calling out: a write runs
//! with a [`Memo`] of the conversions fetched so far (a task-local), and
//! one it lacks is recorded ([`Memo::take_missing`]) and fails the write
//! before anything is stored; [`call`] fetches it and
//! runs the write again. Conversions are remembered by the object's
//! content with metadata reduced to labels and annotations (what a
//! webhook may change), so a write run again finds them whatever
//! timestamps and uid the run made up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

pub(crate) use crate::resources::ConversionWebhook as Webhook;
use crate::resources::Resource;
use crate::status::ApiError;

pub(crate) mod call;

/// How long one conversion call may take: kube-apiserver's webhook
/// client's fixed 30 s (a CRD has no `timeoutSeconds`), sent as
/// `?timeout=30s` as kube-apiserver sends it.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// Conversions a write may remember (a write needs at most three).
const MEMO_CAP: usize = 64;

/// An object's `apiVersion`.
pub(crate) fn api_version(v: &Value) -> &str {
    v.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

/// `group/version, Kind=Kind`, as Go prints a GroupVersionKind: the
/// source of a conversion in its error messages.
pub(crate) fn gvk(v: &Value) -> String {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    format!("{}, Kind={kind}", api_version(v))
}

/// A failed conversion as the client sees it: upstream's converter
/// returns a plain Go error, which kube-apiserver answers as a 500 with no
/// reason and the error's text as the message.
pub(crate) fn failed(message: &str) -> ApiError {
    ApiError::client_mistake_500(message)
}

/// A list (or a watch's initial objects) whose conversion failed, as
/// kube-apiserver answers it: its watch cache of the version `res` cannot
/// hold the objects, so it is not ready (429 `TooManyRequests`, retry
/// after a second, the conversion's error in the message).
pub(crate) fn not_ready(res: &Resource, e: &ApiError) -> ApiError {
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: format!(
            "storage is (re)initializing: failed to list {}, Kind={}: {}",
            res.api_version(),
            res.kind,
            e.message
        ),
        details: Some(json!({"retryAfterSeconds": 1})),
    }
}

/// The `ConversionReview` sent for `objects` to `desired`.
pub(crate) fn review(version: &str, objects: &[&Value], desired: &str, uid: &str) -> Value {
    json!({
        "apiVersion": format!("apiextensions.k8s.io/{version}"),
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    })
}

/// The converted objects of the answer `body` to the review `uid` of
/// `version`, `Err` in upstream's words (without its prefix).
pub(crate) fn read_answer(body: &[u8], uid: &str, version: &str) -> Result<Vec<Value>, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("{e}"))?;
    if version == "v1" {
        let (av, kind) = (api_version(&v), v["kind"].as_str().unwrap_or_default());
        if av != "apiextensions.k8s.io/v1" || kind != "ConversionReview" {
            // Go prints a group-version without a group as `/version`.
            let gv = if av.contains('/') {
                av.to_owned()
            } else {
                format!("/{av}")
            };
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {gv}, Kind={kind}"
            ));
        }
    }
    let r = &v["response"];
    if !r.is_object() {
        return Err("no response provided".into());
    }
    let got = r["uid"].as_str().unwrap_or_default();
    if version == "v1" && got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let status = r["result"]["status"].as_str().unwrap_or_default();
    if status != "Success" {
        return match r["result"]["message"].as_str() {
            Some(m) if !m.is_empty() => Err(m.to_owned()),
            _ => Err(format!(
                "response.result.status was '{status}', not 'Success'"
            )),
        };
    }
    match &r["convertedObjects"] {
        Value::Array(a) => Ok(a.clone()),
        Value::Null => Ok(Vec::new()),
        other => Err(format!("convertedObjects is not a list: {other}")),
    }
}

/// What upstream's checks of a converted object found wrong, by the
/// check that found it (its messages name them differently).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// Not an object, or another version or kind than asked for.
    Type(String),
    /// Another name, namespace or uid (`validateConvertedObject`).
    Object(String),
    /// Metadata that cannot be restored (`restoreObjectMeta`).
    Metadata(String),
}

impl Invalid {
    /// The message of a single object's failed conversion.
    pub(crate) fn single(&self, source: &str) -> String {
        match self {
            Invalid::Type(w) => {
                format!("conversion webhook for {source} returned invalid object at index 0: {w}")
            }
            Invalid::Object(w) => {
                format!("conversion webhook for {source} returned invalid object: {w}")
            }
            Invalid::Metadata(w) => {
                format!("conversion webhook for {source} returned invalid metadata: {w}")
            }
        }
    }

    /// The message of a list's failed conversion at `index` (upstream
    /// counts it from 1 here, having moved past the object).
    pub(crate) fn in_list(&self, source: &str, index: usize) -> String {
        match self {
            Invalid::Type(w) | Invalid::Object(w) => format!(
                "conversion webhook for {source} returned invalid converted object at index {index}: {w}"
            ),
            Invalid::Metadata(w) => format!(
                "conversion webhook for {source} returned invalid metadata in object at index {index}: {w}"
            ),
        }
    }
}

/// The object `converted` the webhook answered for `original`, checked
/// as upstream checks it (`desired` version, same kind, name, namespace
/// and uid) and given the original's metadata but for its own labels and
/// annotations; `Err` says what was wrong.
pub(crate) fn merge(original: &Value, converted: Value, desired: &str) -> Result<Value, Invalid> {
    let Value::Object(mut out) = converted else {
        return Err(Invalid::Type(
            "the converted object is not an object".into(),
        ));
    };
    let got = out.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if got != desired {
        return Err(Invalid::Type(format!(
            "invalid groupVersion (expected {desired}, received {got})"
        )));
    }
    let kind = |m: Option<&Value>| m.and_then(Value::as_str).unwrap_or("").to_owned();
    let (want, have) = (kind(original.get("kind")), kind(out.get("kind")));
    if want != have {
        return Err(Invalid::Type(format!(
            "invalid kind (expected {want}, received {have})"
        )));
    }
    let meta = |v: Option<&Value>, k: &str| {
        v.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    for (field, word) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (a, b) = (
            meta(original.get("metadata"), field),
            meta(out.get("metadata"), field),
        );
        if a != b {
            return Err(Invalid::Object(format!(
                "must have the same {word}: {a} != {b}"
            )));
        }
    }
    let answered = match out.remove("metadata") {
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(Invalid::Metadata(format!(
                "invalid metadata of type {} in converted object",
                type_name(&other)
            )));
        }
        None => {
            return Err(Invalid::Metadata(
                "missing metadata in converted object".into(),
            ));
        }
    };
    let mut metadata = match original.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for field in ["labels", "annotations"] {
        match answered.get(field) {
            None | Some(Value::Null) => {
                metadata.remove(field);
            }
            Some(Value::Object(m)) => {
                if let Some((k, v)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(Invalid::Metadata(format!(
                        "metadata.{field}[{k}] must be a string, but is {} in converted object",
                        type_name(v)
                    )));
                }
                metadata.insert(field.into(), Value::Object(m.clone()));
            }
            Some(other) => {
                return Err(Invalid::Metadata(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    type_name(other)
                )));
            }
        }
    }
    out.insert("metadata".into(), Value::Object(metadata));
    Ok(Value::Object(out))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The key a conversion of `obj` to `target` is remembered by: the
/// object with its metadata reduced to what a webhook may change.
fn key(obj: &Value, target: &str) -> String {
    let mut reduced = Map::new();
    if let Value::Object(m) = obj {
        for (k, v) in m {
            if k == "metadata" {
                let keep: Map<String, Value> = ["labels", "annotations"]
                    .iter()
                    .filter_map(|f| v.get(*f).map(|x| ((*f).to_owned(), x.clone())))
                    .collect();
                reduced.insert(k.clone(), Value::Object(keep));
            } else {
                reduced.insert(k.clone(), v.clone());
            }
        }
    }
    format!("{target}\n{}", Value::Object(reduced))
}

/// The conversions one write has fetched, and those it lacked.
#[derive(Default)]
pub(crate) struct Memo {
    known: Mutex<HashMap<String, Value>>,
    missing: Mutex<Vec<(Value, String)>>,
    committed: AtomicBool,
}

tokio::task_local! {
    /// The conversions of the write being run ([`Memo`]).
    static MEMO: Arc<Memo>;
}

impl Memo {
    /// Runs `f` (a write) with this memo in reach of the store.
    pub(crate) async fn scope<F: std::future::Future>(self: &Arc<Self>, f: F) -> F::Output {
        MEMO.scope(Arc::clone(self), f).await
    }

    /// Remembers that `original` converts to `converted` (`target`).
    pub(crate) fn insert(&self, original: &Value, target: &str, converted: Value) {
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.len() < MEMO_CAP {
            known.insert(key(original, target), converted);
        }
    }

    /// The conversions the last run lacked (object, target version),
    /// each once.
    pub(crate) fn take_missing(&self) -> Vec<(Value, String)> {
        let mut m = self.missing.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(Value, String)> = Vec::new();
        for (obj, target) in m.drain(..) {
            let k = key(&obj, &target);
            if !out.iter().any(|(o, t)| key(o, t) == k) {
                out.push((obj, target));
            }
        }
        out
    }

    /// Whether the last run stored something (then it is not run again).
    pub(crate) fn committed(&self) -> bool {
        self.committed.swap(false, Ordering::SeqCst)
    }

    fn lookup(&self, obj: &Value, target: &str) -> Option<Value> {
        let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let mut converted = known.get(&key(obj, target))?.clone();
        drop(known);
        // Checked when it was fetched; this run's object may have made up
        // another name or uid (a `generateName`, a create run again).
        if let Some(m) = converted.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in ["name", "namespace", "uid"] {
                match obj.get("metadata").and_then(|om| om.get(k)) {
                    Some(v) => m.insert(k.into(), v.clone()),
                    None => m.remove(k),
                };
            }
        }
        merge(obj, converted, target).ok()
    }

    fn miss(&self, obj: &Value, target: &str) {
        let mut m = self.missing.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() < MEMO_CAP {
            m.push((obj.clone(), target.to_owned()));
        }
    }
}

/// What the store makes of a conversion it needs.
pub(crate) enum Converted {
    /// Converted (or already in the version).
    Done(Value),
    /// Not known yet: recorded for the write's driver.
    Missing(Value),
    /// Not within a client's write (a controller's own): left as it is.
    Unconverted(Value),
}

/// `obj` in `target` from the running write's memo.
pub(crate) fn from_memo(obj: Value, target: &str) -> Converted {
    if api_version(&obj) == target {
        return Converted::Done(obj);
    }
    let found = MEMO.try_with(|m| match m.lookup(&obj, target) {
        Some(v) => Some(v),
        None => {
            m.miss(&obj, target);
            None
        }
    });
    match found {
        Ok(Some(v)) => Converted::Done(v),
        Ok(None) => Converted::Missing(obj),
        Err(_) => Converted::Unconverted(obj),
    }
}

/// Whether the store is within a client's write (a memo in reach).
pub(crate) fn in_write() -> bool {
    MEMO.try_with(|_| ()).is_ok()
}

/// Notes that the running write stored its object.
pub(crate) fn note_commit() {
    let _ = MEMO.try_with(|m| m.committed.store(true, Ordering::SeqCst));
}

/// The object `obj` of `res` to store, in its storage version: `Err`
/// (nothing stored) when the conversion is not fetched yet.
pub(crate) fn to_storage(res: &Resource, obj: Value) -> Result<Value, ApiError> {
    let Some(hook) = &res.conversion else {
        return Ok(obj);
    };
    match from_memo(obj, &hook.storage) {
        Converted::Done(v) | Converted::Unconverted(v) => Ok(v),
        Converted::Missing(_) => Err(ApiError::internal(
            "the conversion to the storage version is not fetched yet",
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Invalid, key, merge, read_answer};

    fn person(version: &str) -> serde_json::Value {
        json!({"apiVersion": format!("conv.kubeset.dev/{version}"), "kind": "Person",
               "metadata": {"name": "ada", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
                            "labels": {"a": "1"}},
               "spec": {"name": "Ada"}})
    }

    #[test]
    fn merge_keeps_the_original_metadata_but_labels_and_annotations() {
        let mut answered = person("v2");
        answered["metadata"]["resourceVersion"] = json!("999");
        answered["metadata"]["labels"] = json!({"b": "2"});
        answered["metadata"]["annotations"] = json!({"c": "3"});
        let out = merge(&person("v1"), answered, "conv.kubeset.dev/v2").expect("merged");
        assert_eq!(out["metadata"]["resourceVersion"], "5");
        assert_eq!(out["metadata"]["labels"], json!({"b": "2"}));
        assert_eq!(out["metadata"]["annotations"], json!({"c": "3"}));
        assert_eq!(out["apiVersion"], "conv.kubeset.dev/v2");
    }

    #[test]
    fn merge_refuses_what_upstream_refuses() {
        let orig = person("v1");
        let e = merge(&orig, person("v3"), "conv.kubeset.dev/v2").expect_err("version");
        assert_eq!(
            e.single("conv.kubeset.dev/v1, Kind=Person"),
            "conversion webhook for conv.kubeset.dev/v1, Kind=Person returned invalid object at index 0: \
             invalid groupVersion (expected conv.kubeset.dev/v2, received conv.kubeset.dev/v3)"
        );
        let mut other = person("v2");
        other["kind"] = json!("Robot");
        let e = merge(&orig, other, "conv.kubeset.dev/v2").expect_err("kind");
        assert_eq!(
            e,
            Invalid::Type("invalid kind (expected Person, received Robot)".into())
        );
        let mut renamed = person("v2");
        renamed["metadata"]["name"] = json!("bob");
        let e = merge(&orig, renamed, "conv.kubeset.dev/v2").expect_err("name");
        assert_eq!(
            e.in_list("X", 1),
            "conversion webhook for X returned invalid converted object at index 1: \
             must have the same name: ada != bob"
        );
        let mut bad = person("v2");
        bad["metadata"]["labels"] = json!({"x": 1});
        let e = merge(&orig, bad, "conv.kubeset.dev/v2").expect_err("label");
        assert_eq!(
            e,
            Invalid::Metadata(
                "metadata.labels[x] must be a string, but is float64 in converted object".into()
            )
        );
        let e = merge(&orig, json!([1]), "conv.kubeset.dev/v2").expect_err("array");
        assert_eq!(
            e,
            Invalid::Type("the converted object is not an object".into())
        );
    }

    #[test]
    fn answers_are_checked_before_their_objects() {
        let uid = "abc";
        let ok = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": {"status": "Success"}, "convertedObjects": [{}]}});
        let body = serde_json::to_vec(&ok).expect("json");
        assert_eq!(read_answer(&body, uid, "v1").expect("read").len(), 1);
        assert_eq!(
            read_answer(&body, "other", "v1").expect_err("uid"),
            "expected response.uid=\"other\", got \"abc\""
        );
        // v1beta1 answers are not checked for their uid, as upstream.
        assert!(read_answer(&body, "other", "v1beta1").is_ok());
        let failed = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": {"status": "Failure", "message": "no"}}});
        let body = serde_json::to_vec(&failed).expect("json");
        assert_eq!(read_answer(&body, uid, "v1").expect_err("failure"), "no");
        assert!(read_answer(b"not json", uid, "v1").is_err());
        assert_eq!(
            read_answer(b"{}", uid, "v1").expect_err("kind"),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind="
        );
    }

    #[test]
    fn the_memo_key_ignores_what_a_run_makes_up() {
        let a = person("v1");
        let mut b = a.clone();
        b["metadata"]["uid"] = json!("u2");
        b["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(key(&a, "x"), key(&b, "x"));
        b["metadata"]["labels"] = json!({});
        assert_ne!(key(&a, "x"), key(&b, "x"));
        assert_ne!(key(&a, "x"), key(&a, "y"));
    }
}
