//! Answers written from the stored text: a list's body and a watch
//! event's line carry each object's JSON as the store keeps it, so an
//! answer of many objects costs its own bytes, not a parsed copy of every
//! object (a generator pod is 10.8 KB of text and 112.6 KB as a `Value`:
//! an unpaged list of 10,000 built 1.1 GB of values before answering).
//!
//! An object is parsed only where the answer is not its stored text: a
//! custom resource whose schema prunes and defaults what is read, or
//! stored in another version than the one asked; a version converted by
//! a webhook; `events.k8s.io/v1` Events (stored in the core shape). Every
//! answer is byte for byte what printing the parsed answer gave: the
//! stored text is that printing ([`Stored`]), and the list's own members
//! are printed in its map's order.

use std::sync::Arc;

use http::Response;
use serde_json::Value;

use super::{Stored, as_version, stored};
use crate::partial;
use crate::resources::Resource;
use crate::wire::Body;

/// How the objects of one resource are written into an answer.
pub(crate) enum Writing {
    /// Their stored text as it is, when its `apiVersion` and `kind`
    /// members are these (the object is stored in the version asked).
    Text { api_version: String, kind: String },
    /// Parsed and converted ([`as_version`]) one at a time.
    Parsed,
}

impl Writing {
    /// How `res`'s objects are written: from their text unless a read of
    /// `res` transforms them beyond its `apiVersion` and `kind`.
    pub(crate) fn of(res: &Resource) -> Self {
        let transformed = res.conversion.is_some() || res.compiled.is_some() || res.is_events_v1();
        if transformed {
            return Self::Parsed;
        }
        let (api_version, kind) = stored::type_members(&res.api_version(), &res.kind);
        Self::Text { api_version, kind }
    }

    /// Writes `obj` as a read of `res` shows it, from its text when it
    /// can; `false` when it must be parsed ([`Writing::Parsed`], or
    /// stored in another version) and nothing was written.
    pub(crate) fn write_text(&self, obj: &Stored, out: &mut Vec<u8>) -> bool {
        match self {
            Self::Text { api_version, kind } => obj.write_if_typed(api_version, kind, out),
            Self::Parsed => false,
        }
    }

    /// The text [`Writing::write_text`] writes, borrowed; `None` when the
    /// object must be parsed.
    pub(crate) fn text<'a>(&self, obj: &'a Stored) -> Option<&'a str> {
        match self {
            Self::Text { api_version, kind } => obj.typed_text(api_version, kind),
            Self::Parsed => None,
        }
    }
}

/// One list item as a JSON list answer holds it: a built-in kind's
/// without `apiVersion` and `kind` (kube-apiserver's typed lists leave
/// them out), a custom resource's with them.
fn write_item(res: &Resource, how: &Writing, obj: &Stored, out: &mut Vec<u8>) {
    let written = match how {
        Writing::Text { .. } if !res.custom => obj.write_untyped(out),
        _ => how.write_text(obj, out),
    };
    if written {
        return;
    }
    let mut v = as_version(res, obj.to_value());
    if !res.custom
        && let Value::Object(m) = &mut v
    {
        m.remove("apiVersion");
        m.remove("kind");
    }
    // A `Value` always prints.
    let _ = serde_json::to_writer(&mut *out, &v);
}

/// A list answer's JSON: `envelope` (the list without its items: `kind`,
/// `apiVersion`, `metadata`, and an `items` member whose value is
/// ignored) printed in its map's order, `items` written from `items`,
/// converted to `res`'s version one at a time.
pub(crate) fn list_json(res: &Resource, envelope: &Value, items: &[Arc<Stored>]) -> Vec<u8> {
    let how = Writing::of(res);
    let size: usize = items.iter().map(|o| o.json_len() + 1).sum();
    write_list(envelope, items, size + 256, |obj, out| {
        write_item(res, &how, obj, out);
    })
}

/// `envelope` printed in its map's order with its `items` member's value
/// replaced by `[…]` of each of `items` as `write_one` writes it (into
/// a buffer of `capacity` bytes to start with).
fn write_list(
    envelope: &Value,
    items: &[Arc<Stored>],
    capacity: usize,
    mut write_one: impl FnMut(&Stored, &mut Vec<u8>),
) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    let Value::Object(members) = envelope else {
        let _ = serde_json::to_writer(&mut out, envelope);
        return out;
    };
    let value = |k: &str, v: &Value, out: &mut Vec<u8>| {
        if k != "items" {
            let _ = serde_json::to_writer(out, v);
            return;
        }
        out.push(b'[');
        for (j, obj) in items.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            write_one(obj, out);
        }
        out.push(b']');
    };
    stored::write_members(members, &mut out, value, |_, _, _| {});
    out
}

/// A list answer in protobuf ([`crate::protobuf::list_response`]: each
/// item's text as [`list_json`] writes it, read into the model one at a
/// time); `None` when it is written in JSON.
pub(crate) fn protobuf_list(
    res: &Resource,
    envelope: &Value,
    items: &[Arc<Stored>],
) -> Option<Response<Body>> {
    let how = Writing::of(res);
    let mut items = items.iter();
    crate::protobuf::list_response(res, envelope, |out| match items.next() {
        Some(obj) => {
            write_item(res, &how, obj, out);
            true
        }
        None => false,
    })
}

/// A `PartialObjectMetadataList` answer's JSON (`as=` at `meta.k8s.io/`
/// `version`): `envelope` as [`list_json`] takes it, transformed as
/// [`partial::transform`] transforms the whole list, each item's
/// metadata read from its stored text without the rest of the object
/// (parsed whole only where [`Writing`] says it must be).
pub(crate) fn partial_list_json(
    res: &Resource,
    envelope: &Value,
    items: &[Arc<Stored>],
    version: &'static str,
) -> Vec<u8> {
    let how = Writing::of(res);
    let partial = match partial::transform(envelope, partial::Target::List(version)) {
        Ok(Some(p)) => p,
        _ => envelope.clone(),
    };
    write_list(
        &partial,
        items,
        256 + items.len() * 1024,
        |obj, out| match how.text(obj) {
            Some(text) => partial::write_object(partial::metadata_text(text), version, out),
            None => {
                let metadata = as_version(res, obj.to_value())
                    .get_mut("metadata")
                    .map(Value::take);
                let _ = serde_json::to_writer(&mut *out, &partial::of_metadata(metadata, version));
            }
        },
    )
}

/// A watch event's JSON line (`{"type":…,"object":…}`, as
/// [`crate::watch`] prints a parsed event) with the object written from
/// its stored text; `None` when it must be parsed.
pub(crate) fn event_line(how: &Writing, kind: &str, obj: &Stored) -> Option<Vec<u8>> {
    let mut line = Vec::with_capacity(obj.json_len() + 32);
    line.extend_from_slice(b"{\"type\":");
    let _ = serde_json::to_writer(&mut line, kind);
    line.extend_from_slice(b",\"object\":");
    if !how.write_text(obj, &mut line) {
        return None;
    }
    line.extend_from_slice(b"}\n");
    Some(line)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::header;
    use http_body_util::BodyExt;
    use kubeset_api::protobuf::{CONTENT_TYPE, dynamic};

    use super::*;
    use crate::protobuf;

    fn pods() -> (Arc<Resource>, Vec<Value>, Vec<Arc<Stored>>) {
        let res = crate::resources::builtin()
            .into_iter()
            .find(|r| r.group.is_empty() && r.plural == "pods")
            .expect("served");
        let objs: Vec<Value> = (0..3)
            .map(|i| {
                serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("p{i}"), "resourceVersion": "5",
                        "labels": {"a": "\u{e9}\"\n"}, "annotations": {"x": ""}},
                    "spec": {"containers": [{"name": "c", "image": "i",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1500m", "memory": "1Gi"}},
                        "livenessProbe": {"httpGet": {"port": "http"}}}],
                        "activeDeadlineSeconds": 2_147_483_647},
                    "status": {"phase": "Running", "startTime": "2024-01-02T03:04:05Z"}})
            })
            .collect();
        let stored = objs
            .iter()
            .map(|o| Arc::new(super::Stored::new(&res.storage_key(), o)))
            .collect();
        (res, objs, stored)
    }

    async fn body_of(r: Response<Body>) -> Bytes {
        r.into_body()
            .collect()
            .await
            .expect("a full body")
            .to_bytes()
    }

    /// A protobuf list written item by item from the stored text is byte
    /// for byte the conversion of the whole parsed JSON list; a watch
    /// frame from the text is the frame of the parsed event.
    #[tokio::test]
    async fn answers_from_the_text_are_the_converted_answers() {
        let (res, objs, stored) = pods();
        let envelope = serde_json::json!({"kind": "PodList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "9", "continue": "c", "remainingItemCount": 4},
            "items": []});
        let body = super::list_json(&res, &envelope, &stored);
        let whole: Value = serde_json::from_slice(&body).unwrap();
        let converted = dynamic::from_json(&whole).unwrap().unwrap();
        let r = protobuf_list(&res, &envelope, &stored).expect("pods have a codec");
        assert_eq!(r.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        assert_eq!(body_of(r).await, converted);

        let codec = dynamic::kind("v1", "Pod").unwrap();
        for (obj, stored) in objs.iter().zip(&stored) {
            let how = super::Writing::of(&res);
            let text = how.text(stored).expect("stored as text, in its version");
            let event = serde_json::json!({"type": "MODIFIED", "object": obj});
            assert_eq!(
                protobuf::watch_frame_of_text(codec, "MODIFIED", text),
                protobuf::watch_frame(&event)
            );
        }
        // Not the model's (a string for a number): no answer from the text.
        let bad = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "x"}, "spec": {"activeDeadlineSeconds": "soon"}});
        let bad = vec![Arc::new(super::Stored::new(&res.storage_key(), &bad))];
        assert!(protobuf_list(&res, &envelope, &bad).is_none());
    }

    /// A `PartialObjectMetadataList` written from each item's metadata is
    /// byte for byte the transformed whole list.
    #[test]
    fn metadata_lists_from_the_text_are_the_transformed_lists() {
        let (res, _, stored) = pods();
        let envelope = serde_json::json!({"kind": "PodList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "9"}, "items": []});
        let whole: Value =
            serde_json::from_slice(&super::list_json(&res, &envelope, &stored)).unwrap();
        let target = crate::partial::Target::List("v1");
        let transformed = crate::partial::transform(&whole, target).unwrap().unwrap();
        let body = super::partial_list_json(&res, &envelope, &stored, "v1");
        assert_eq!(String::from_utf8(body).ok(), Some(transformed.to_string()));
    }
}
