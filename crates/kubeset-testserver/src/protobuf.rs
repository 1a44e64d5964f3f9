//! Protobuf content negotiation, as kube-apiserver does it: request
//! bodies in `application/vnd.kubernetes.protobuf` are read for built-in
//! kinds (a custom resource's is `415 Unsupported Media Type`, the server
//! speaks only JSON for them), and responses are written in protobuf when
//! the `Accept` header prefers it and the object's kind has a codec
//! (`kubeset_api::protobuf::dynamic`), else in JSON. A request accepting
//! only protobuf for an object that has none is `406 Not Acceptable`.
//! A watch that prefers protobuf for a built-in kind is served as
//! kube-apiserver serves it ([`WATCH_CONTENT_TYPE`], [`watch_frame`]);
//! custom resources and Table watches stay JSON (clients pick the decoder
//! by the response's `Content-Type`).
//!
//! Lists and watch events are encoded from the objects' stored JSON text,
//! one object at a time, read straight into the kind's model
//! ([`list_response`], [`watch_frame_of_text`]); the other answers (one
//! object, a Status, an object the store keeps parsed) are converted from
//! their JSON ([`encode_response`], [`watch_frame`]).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use kubeset_api::protobuf::{CONTENT_TYPE, Unknown, dynamic, wire};
use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;
use crate::wire::{Body, Query, full};

/// The media types the server writes for an object without a codec.
const JSON_ONLY: &str = "application/json, application/yaml";

/// Largest response body converted (the store's objects are far smaller;
/// a larger one stays JSON rather than being buffered twice).
const MAX_CONVERTED: usize = 64 << 20;

fn base(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or("").trim()
}

/// A request body in protobuf, as JSON for the rest of the server; other
/// bodies pass unchanged. Returns the content type the body now has.
pub(crate) fn decode_body(
    res: &Resource,
    content_type: String,
    body: Bytes,
) -> Result<(String, Bytes), ApiError> {
    if base(&content_type) != CONTENT_TYPE {
        return Ok((content_type, body));
    }
    if res.custom {
        return Err(ApiError::unsupported_media_type(&content_type));
    }
    let obj = dynamic::to_json(&body)
        .map_err(|e| ApiError::bad_request(format!("the object provided is unrecognized: {e}")))?;
    let json = serde_json::to_vec(&obj).unwrap_or_default();
    Ok(("application/json".to_owned(), Bytes::from(json)))
}

/// What the client accepts, read before the request is consumed.
pub(crate) struct Negotiation {
    /// Protobuf is preferred over every JSON-compatible type.
    prefers_protobuf: bool,
    /// Protobuf is the only acceptable type.
    only_protobuf: bool,
    /// A watch: its stream is written by `watch.rs`.
    watch: bool,
}

impl Negotiation {
    /// Reads `Accept` (clauses by `q`, ties in order) and whether the
    /// request is a watch.
    pub(crate) fn of<B>(req: &Request<B>) -> Self {
        let query = Query::parse(req.uri().query());
        let watch = matches!(query.get("watch"), Some("true" | "1"))
            || req.uri().path().split('/').any(|s| s == "watch");
        let clauses = accept_clauses(req.headers());
        let first = clauses.first();
        Self {
            prefers_protobuf: first.is_some_and(|c| c.protobuf),
            only_protobuf: !clauses.is_empty() && clauses.iter().all(|c| c.protobuf),
            watch,
        }
    }
}

struct Clause {
    q: f32,
    protobuf: bool,
}

/// The acceptable clauses (q > 0) that name a type the server writes, by
/// descending `q`.
fn accept_clauses(headers: &HeaderMap) -> Vec<Clause> {
    let values = headers.get_all(header::ACCEPT);
    clauses_of(values.iter().filter_map(|v| v.to_str().ok()))
}

fn clauses_of<'a>(values: impl Iterator<Item = &'a str>) -> Vec<Clause> {
    let mut out: Vec<Clause> = Vec::new();
    for value in values {
        for clause in value.split(',').take(64) {
            let mut parts = clause.split(';');
            let ty = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let mut q = 1.0f32;
            let mut plain = true;
            for p in parts {
                match p.trim().split_once('=') {
                    Some(("q", v)) => q = v.trim().parse().unwrap_or(0.0),
                    // `as=Table`, `stream=watch`, …: served as before.
                    _ => plain = false,
                }
            }
            let protobuf = ty == CONTENT_TYPE && plain;
            let known = ty == CONTENT_TYPE
                || matches!(
                    ty.as_str(),
                    "application/json" | "application/yaml" | "application/*" | "*/*"
                );
            if q > 0.0 && known {
                out.push(Clause { q, protobuf });
            }
        }
    }
    out.sort_by(|a, b| b.q.total_cmp(&a.q));
    out
}

/// The Content-Type of a protobuf watch, as kube-apiserver writes it.
pub(crate) const WATCH_CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// Whether a watch of `res` with this `Accept` is served in protobuf: the
/// client prefers protobuf and the kind is built in with a codec.
pub(crate) fn watch_in_protobuf(res: &Resource, accept: &str) -> bool {
    let prefers = clauses_of(std::iter::once(accept))
        .first()
        .is_some_and(|c| c.protobuf);
    prefers && !res.custom && dynamic::kind(&res.api_version(), &res.kind).is_some()
}

/// One watch event (`{"type", "object"}`) as a kube-apiserver protobuf
/// watch frame: a 4-byte big-endian length, then a bare `metav1.WatchEvent`
/// (no magic, no envelope) whose `object` is a `RawExtension` holding the
/// object's own `k8s\0` + `runtime.Unknown` bytes. `None` when the object
/// has no codec or does not fit its model.
pub(crate) fn watch_frame(event: &Value) -> Option<Vec<u8>> {
    let event_type = event.get("type")?.as_str()?;
    let object = dynamic::from_json(event.get("object")?).ok()??;
    frame(event_type, &object)
}

/// The watch frame of an event of `event_type` whose object is the JSON
/// text `json` of `codec`'s kind (its stored text), as [`watch_frame`]
/// writes the parsed event, with no `Value` in between. `None` when the
/// text does not fit the model.
pub(crate) fn watch_frame_of_text(
    codec: &dynamic::Kind,
    event_type: &str,
    json: &str,
) -> Option<Vec<u8>> {
    let object = codec.encode_json(json.as_bytes()).ok()?;
    frame(event_type, &object)
}

/// A 4-byte big-endian length, then the `metav1.WatchEvent` of
/// `event_type` and the enveloped `object`.
fn frame(event_type: &str, object: &[u8]) -> Option<Vec<u8>> {
    let mut msg = Vec::with_capacity(object.len() + 24 + event_type.len());
    wire::put_raw(&mut msg, 1, event_type.as_bytes());
    wire::put_record(&mut msg, 2, |b| wire::put_raw(b, 1, object));
    let mut frame = Vec::with_capacity(msg.len() + 4);
    frame.extend_from_slice(&u32::try_from(msg.len()).ok()?.to_be_bytes());
    frame.extend(msg);
    Some(frame)
}

/// Whether the Accept header `accept` prefers protobuf (as
/// [`Negotiation`] reads the request's).
pub(crate) fn prefers_protobuf(accept: &str) -> bool {
    clauses_of(std::iter::once(accept))
        .first()
        .is_some_and(|c| c.protobuf)
}

/// A list answer of a built-in kind in protobuf, written item by item
/// from each item's JSON text as the JSON answer holds it: `envelope` is
/// the list without its items (as `store::list_json` takes it), and
/// `next_item` writes the next item's text into the buffer it is given
/// (empty), `false` when there is none. What [`encode_response`] makes
/// of the JSON answer, without the JSON answer or a `Value` of it: one
/// item's text and the output are held at a time.
///
/// `None` when the kind has no codec or an item does not fit its model:
/// the answer is then written in JSON, and [`encode_response`] answers
/// as it does (406, or JSON). An answer past [`MAX_CONVERTED`] is the
/// 500 a JSON answer past it was.
pub(crate) fn list_response(
    res: &Resource,
    envelope: &Value,
    mut next_item: impl FnMut(&mut Vec<u8>) -> bool,
) -> Option<Response<Body>> {
    if res.custom {
        return None;
    }
    let api_version = res.api_version();
    let item_codec = dynamic::kind(&api_version, &res.kind)?;
    let list_kind = envelope.get("kind")?.as_str()?;
    let list_codec = dynamic::kind(&api_version, list_kind)?;
    // The list's own fields (its `ListMeta`) as the model encodes them.
    let head = list_codec.encode(envelope).ok()?;
    let head = Unknown::parse(&head).ok()?;
    let mut raw = head.raw.to_vec();
    let mut item = Vec::new();
    while next_item(&mut item) {
        let message = item_codec.message_from_json(&item).ok()?;
        item.clear();
        // `items` is field 2 of every list kind (`metadata` is field 1).
        wire::put_raw(&mut raw, 2, &message);
        if raw.len() > MAX_CONVERTED {
            return Some(error(500, "InternalError", "response too large to convert"));
        }
    }
    let mut body = Vec::with_capacity(raw.len() + 64);
    Unknown { raw: &raw, ..head }.write(&mut body);
    let mut r = Response::new(full(body));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    Some(r)
}

/// Re-encodes a JSON response in protobuf when negotiated; answers 406
/// when only protobuf is acceptable and the object has no codec.
pub(crate) async fn encode_response(n: &Negotiation, resp: Response<Body>) -> Response<Body> {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/json");
    // `only_protobuf` implies `prefers_protobuf`. A watch's stream is
    // written by `watch.rs`; its refusal is a Status like any other.
    let stream = n.watch && resp.status().is_success();
    if stream || !is_json || !n.prefers_protobuf {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = match http_body_util::Limited::new(body, MAX_CONVERTED)
        .collect()
        .await
    {
        Ok(c) => c.to_bytes(),
        Err(_) => return error(500, "InternalError", "response too large to convert"),
    };
    let encoded = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(|v| v.get("kind").is_some())
        .map(|v| dynamic::from_json(&v));
    match encoded {
        Some(Ok(Some(pb))) => {
            parts
                .headers
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, full(pb))
        }
        Some(Ok(None)) if n.only_protobuf => error(
            406,
            "NotAcceptable",
            &format!("only the following media types are accepted: {JSON_ONLY}"),
        ),
        _ => Response::from_parts(parts, full(bytes)),
    }
}

fn error(code: u16, reason: &'static str, message: &str) -> Response<Body> {
    let status = ApiError {
        code,
        reason,
        message: message.to_owned(),
        details: None,
    }
    .to_status();
    let mut r = Response::new(full(serde_json::to_vec(&status).unwrap_or_default()));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiation(accept: &str) -> Negotiation {
        let req = Request::builder()
            .uri("/api/v1/namespaces/default/configmaps")
            .header(header::ACCEPT, accept)
            .body(())
            .unwrap();
        Negotiation::of(&req)
    }

    #[test]
    fn accept_clauses_by_preference() {
        let n = negotiation("application/vnd.kubernetes.protobuf, application/json");
        assert!(n.prefers_protobuf && !n.only_protobuf && !n.watch);
        let n = negotiation("application/json;q=0.9, application/vnd.kubernetes.protobuf");
        assert!(n.prefers_protobuf);
        let n = negotiation("application/json, application/vnd.kubernetes.protobuf");
        assert!(!n.prefers_protobuf);
        let n = negotiation("application/vnd.kubernetes.protobuf");
        assert!(n.only_protobuf);
        let n = negotiation("application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
        assert!(!n.prefers_protobuf && !n.only_protobuf);
        let n = negotiation("");
        assert!(!n.prefers_protobuf && !n.only_protobuf);
        let n = negotiation("application/vnd.kubernetes.protobuf;stream=watch");
        assert!(!n.prefers_protobuf);
    }

    #[test]
    fn watch_frames_as_kube_apiserver_writes_them() {
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "resourceVersion": "7"},
        });
        let frame = watch_frame(&serde_json::json!({"type": "ADDED", "object": cm})).unwrap();
        let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(len, frame.len() - 4);
        // type = 1 "ADDED", object = 2 { raw = 1 k8s\0… }.
        assert_eq!(&frame[4..11], b"\x0a\x05ADDED");
        let object = dynamic::from_json(&cm).unwrap().unwrap();
        assert_eq!(&frame[frame.len() - object.len()..], &object[..]);
        assert_eq!(frame[11], 0x12);
        let crd =
            serde_json::json!({"type": "ADDED", "object": {"apiVersion": "x.io/v1", "kind": "X"}});
        assert!(watch_frame(&crd).is_none());
    }
}
