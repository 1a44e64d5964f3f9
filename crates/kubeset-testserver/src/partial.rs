//! `meta.k8s.io` `PartialObjectMetadata` answers, which metadata-only
//! clients (kube-rs's `get_metadata`, client-go's metadata client) ask
//! for with `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//! (`as=PartialObjectMetadataList` for a list): as kube-apiserver's
//! handlers transform an answer, an object becomes its `metadata` under
//! `kind: PartialObjectMetadata`, a list its list metadata and such items;
//! the wrong one of the two for the answer, or an `as=` the server does
//! not serve with nothing else acceptable, is `406 NotAcceptable`.
//!
//! Pure: the Accept header and the answer in, the answer (or the refusal)
//! out.

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::status::ApiError;

/// Bound on the Accept clauses read (a header is hostile input).
const MAX_CLAUSES: usize = 64;

/// What the Accept header asks a resource answer to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The answer itself (no `as=`, or a `Table`, written elsewhere).
    Whole,
    /// `as=PartialObjectMetadata` at `meta.k8s.io/{version}`.
    Object(&'static str),
    /// `as=PartialObjectMetadataList` at `meta.k8s.io/{version}`.
    List(&'static str),
    /// Only `as=` targets the server does not serve.
    NotAcceptable,
}

/// The first acceptable clause's target (by descending `q`, ties in
/// order). A clause with an `as=` the server does not serve is skipped,
/// as kube-apiserver skips it; when every clause was skipped for that,
/// the answer is [`Target::NotAcceptable`]. Anything else (no header,
/// media types without `as=`) is [`Target::Whole`], as before.
pub(crate) fn target(accept: &str) -> Target {
    let mut clauses: Vec<(f32, Option<Target>)> = accept
        .split(',')
        .take(MAX_CLAUSES)
        .filter(|c| !c.trim().is_empty())
        .map(clause)
        .filter(|(q, _)| *q > 0.0)
        .collect();
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut refused = false;
    for (_, t) in clauses {
        match t {
            Some(t) => return t,
            None => refused = true,
        }
    }
    if refused {
        Target::NotAcceptable
    } else {
        Target::Whole
    }
}

/// One clause's `q` and target (`None`: an `as=` not served).
fn clause(text: &str) -> (f32, Option<Target>) {
    let mut parts = text.split(';');
    let _media_type = parts.next();
    let (mut q, mut as_, mut group, mut version) = (1.0f32, None, None, None);
    for p in parts {
        match p.trim().split_once('=') {
            Some(("q", v)) => q = v.trim().parse().unwrap_or(0.0),
            Some(("as", v)) => as_ = Some(v.trim()),
            Some(("g", v)) => group = Some(v.trim()),
            Some(("v", v)) => version = Some(v.trim()),
            _ => {}
        }
    }
    let Some(as_) = as_ else {
        return (q, Some(Target::Whole));
    };
    let version = match version {
        Some("v1") => "v1",
        Some("v1beta1") => "v1beta1",
        _ => return (q, None),
    };
    if group != Some("meta.k8s.io") {
        return (q, None);
    }
    let t = match as_ {
        "Table" => Target::Whole,
        "PartialObjectMetadata" => Target::Object(version),
        "PartialObjectMetadataList" => Target::List(version),
        _ => return (q, None),
    };
    (q, Some(t))
}

/// The media types a refusal names, as kube-apiserver's.
const ACCEPTED: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";

fn not_acceptable(message: String) -> ApiError {
    ApiError {
        code: 406,
        reason: "NotAcceptable",
        message,
        details: None,
    }
}

/// The refusal of [`Target::NotAcceptable`].
pub(crate) fn refusal() -> ApiError {
    not_acceptable(ACCEPTED.to_owned())
}

fn is_list(v: &Value) -> bool {
    v.get("items").is_some_and(Value::is_array)
        && v.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
}

fn kind_of(v: &Value) -> &str {
    v.get("kind").and_then(Value::as_str).unwrap_or("object")
}

/// One object's metadata as a `PartialObjectMetadata` of `version`.
pub(crate) fn object(v: &Value, version: &str) -> Value {
    of_metadata(v.get("metadata").cloned(), version)
}

/// The `PartialObjectMetadata` of `version` holding `metadata` (`None`:
/// the object had none, an empty one).
pub(crate) fn of_metadata(metadata: Option<Value>, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata.unwrap_or_else(|| json!({})),
    })
}

/// An object's top-level `metadata` member's text, found in its JSON
/// text without building anything (the parser only checks what it reads
/// past): what [`object`] takes from the parsed object. `None` when it
/// has none (or the text is not an object).
pub(crate) fn metadata_text(text: &str) -> Option<&str> {
    #[derive(serde::Deserialize)]
    struct OnlyMetadata<'a> {
        // `null` too is kept as it is, as `object` keeps it.
        #[serde(borrow, default, deserialize_with = "present")]
        metadata: Option<&'a RawValue>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
        serde::Deserialize::deserialize(d).map(Some)
    }
    // Not an array: a struct is read from one too (its members in order).
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<OnlyMetadata<'_>>(text)
        .ok()
        .and_then(|o| o.metadata)
        .map(RawValue::get)
}

/// Writes the `PartialObjectMetadata` of `version` whose `metadata` is
/// the JSON text `metadata` (`None`: an empty one) as [`of_metadata`]'s
/// value prints (its members in the map's order, which the tests check),
/// the metadata's text copied.
pub(crate) fn write_object(metadata: Option<&str>, version: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"apiVersion\":\"meta.k8s.io/");
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(b"\",\"kind\":\"PartialObjectMetadata\",\"metadata\":");
    out.extend_from_slice(metadata.unwrap_or("{}").as_bytes());
    out.push(b'}');
}

/// The answer `v` as `target` asks: `Ok(None)` to send it as it is (a
/// `Status` always is), `Ok(Some(partial))`, or the 406 refusal.
pub(crate) fn transform(v: &Value, target: Target) -> Result<Option<Value>, ApiError> {
    if kind_of(v) == "Status" {
        return Ok(None);
    }
    match target {
        Target::Whole => Ok(None),
        Target::NotAcceptable => Err(refusal()),
        Target::Object(_) if is_list(v) => Err(not_acceptable(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            kind_of(v)
        ))),
        Target::Object(version) => Ok(Some(object(v, version))),
        Target::List(_) if !is_list(v) => Err(not_acceptable(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            kind_of(v)
        ))),
        Target::List(version) => {
            let items: Vec<Value> = v["items"]
                .as_array()
                .map(|items| items.iter().map(|i| object(i, version)).collect())
                .unwrap_or_default();
            Ok(Some(json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": format!("meta.k8s.io/{version}"),
                "metadata": v.get("metadata").cloned().unwrap_or_else(|| json!({})),
                "items": items,
            })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers_name_their_target() {
        let pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert_eq!(target(pom), Target::Object("v1"));
        assert_eq!(
            target("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1"),
            Target::List("v1beta1")
        );
        // client-go's metadata client: protobuf first, then JSON.
        let both = format!(
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,{pom}"
        );
        assert_eq!(target(&both), Target::Object("v1"));
        assert_eq!(target(""), Target::Whole);
        assert_eq!(target("application/json"), Target::Whole);
        assert_eq!(
            target("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
            Target::Whole
        );
        let foo = "application/json;as=Foo;g=meta.k8s.io;v=v1";
        assert_eq!(target(foo), Target::NotAcceptable);
        assert_eq!(target(&format!("{foo}, application/json")), Target::Whole);
        let wrong_group = "application/json;as=PartialObjectMetadata;g=apps;v=v1";
        assert_eq!(target(wrong_group), Target::NotAcceptable);
        assert_eq!(
            target(&format!("{pom};q=0.5, application/json")),
            Target::Whole
        );
    }

    /// The metadata copied from an object's text is printed as the
    /// parsed object's `PartialObjectMetadata`.
    #[test]
    fn metadata_from_the_text_is_the_printed_partial_object() {
        let objs = [
            json!({"apiVersion": "v1", "kind": "Pod", "spec": {"metadata": 1},
                "metadata": {"name": "a", "labels": {"k": "\u{e9}\"\n"}, "n": [1.5, null]}}),
            json!({"kind": "Pod", "metadata": null}),
            json!({"kind": "Pod"}),
        ];
        for obj in objs {
            let text = obj.to_string();
            for version in ["v1", "v1beta1"] {
                let mut out = Vec::new();
                write_object(metadata_text(&text), version, &mut out);
                assert_eq!(
                    String::from_utf8(out).ok(),
                    Some(object(&obj, version).to_string())
                );
            }
        }
        assert_eq!(metadata_text("[1]"), None);
        assert_eq!(metadata_text(" {\"metadata\": {}}"), Some("{}"));
    }

    #[test]
    fn objects_and_lists_become_their_metadata() {
        let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "labels": {"x": "y"}}, "data": {"k": "v"}});
        let list = json!({"kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "7", "continue": "c"}, "items": [cm.clone()]});
        let partial = transform(&cm, Target::Object("v1")).unwrap().unwrap();
        assert_eq!(
            partial,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "a", "labels": {"x": "y"}}})
        );
        let partial_list = transform(&list, Target::List("v1")).unwrap().unwrap();
        assert_eq!(partial_list["kind"], "PartialObjectMetadataList");
        assert_eq!(partial_list["metadata"]["continue"], "c");
        assert_eq!(partial_list["items"][0], partial);

        let e = transform(&list, Target::Object("v1")).unwrap_err();
        assert_eq!((e.code, e.reason), (406, "NotAcceptable"));
        assert!(
            e.message.contains("is a list (ConfigMapList)"),
            "{}",
            e.message
        );
        let e = transform(&cm, Target::List("v1")).unwrap_err();
        assert!(
            e.message.contains("is not a list (ConfigMap)"),
            "{}",
            e.message
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "code": 404});
        assert_eq!(transform(&status, Target::Object("v1")).unwrap(), None);
        assert_eq!(transform(&cm, Target::Whole).unwrap(), None);
    }
}
