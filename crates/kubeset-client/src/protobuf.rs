//! Protobuf for [`Api`](crate::Api) (cargo feature `protobuf`): when the
//! REST client's wire format is [`WireFormat::Protobuf`] and `K` is a
//! built-in model with a codec, `get`, `list`, `create`, `replace` and
//! `watch` send `Accept: application/vnd.kubernetes.protobuf,
//! application/json` (and protobuf bodies), and decode whichever format
//! the server answered (its `Content-Type` decides, errors included: a
//! protobuf `Status` is the same [`ApiError`](kubeset_rest::ApiError) as a
//! JSON one). A server that refuses protobuf (`406`, `415`) is asked again
//! in JSON, once. Custom resources and kinds without a codec stay JSON, as
//! with client-go, whose protobuf clients fall back to JSON for them.
//!
//! The codec is found by `K`'s `TypeId`
//! ([`dynamic::typed`]), so protobuf bytes decode straight into `K` and
//! `K` encodes straight into bytes, with no `serde_json::Value` between.
//! A type that is not the generated model (a user's own struct for a
//! built-in kind, [`DynamicObject`](crate::dynamic::DynamicObject),
//! `PartialObjectMeta`) stays JSON: going through the model and a JSON
//! value would be slower than JSON itself, and would drop what the model
//! does not know.

use http::{HeaderValue, header};
use kubeset_api::List;
use kubeset_api::protobuf::dynamic::{self, Typed};
use kubeset_rest::content::{PROTOBUF, PROTOBUF_ACCEPT, WireFormat};
use kubeset_rest::{Error, Response, RestClient};
use serde::de::DeserializeOwned;

/// `K`'s codec when the client negotiates protobuf and `K` has one.
pub(crate) fn negotiated<K: 'static>(rest: &RestClient) -> Option<Typed<K>> {
    if rest.wire_format() == WireFormat::Protobuf {
        dynamic::typed::<K>()
    } else {
        None
    }
}

fn protobuf_error<K>(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::DecodeProtobuf {
        type_name: std::any::type_name::<K>(),
        source: Box::new(e),
    }
}

/// A response body in protobuf: one object or a list of them.
pub(crate) trait Decode<K>: Sized {
    /// Decodes `bytes` (`k8s\0` + envelope) with `K`'s codec.
    fn decode(codec: &Typed<K>, bytes: &[u8]) -> Result<Self, Error>;
}

impl<K: 'static> Decode<K> for K {
    fn decode(codec: &Typed<K>, bytes: &[u8]) -> Result<Self, Error> {
        codec.decode(bytes).map_err(protobuf_error::<K>)
    }
}

impl<K: 'static> Decode<K> for List<K> {
    fn decode(codec: &Typed<K>, bytes: &[u8]) -> Result<Self, Error> {
        codec.decode_list(bytes).map_err(protobuf_error::<List<K>>)
    }
}

/// Whether `content_type` is protobuf (any parameters).
pub(crate) fn is_protobuf(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| ct.split(';').next().unwrap_or("").trim() == PROTOBUF)
}

/// A request in protobuf (`body` encoded by the caller) or, on fallback,
/// in JSON: `build(protobuf)` makes it either way.
pub(crate) async fn send<K: 'static, T: Decode<K> + DeserializeOwned>(
    codec: &Typed<K>,
    build: impl Fn(bool) -> Result<kubeset_rest::Request, Error>,
) -> Result<T, Error> {
    let req = build(true)?.header(header::ACCEPT, HeaderValue::from_static(PROTOBUF_ACCEPT));
    let resp = req.send_raw().await?;
    if matches!(resp.status.as_u16(), 406 | 415) {
        return build(false)?.send_json().await;
    }
    if !is_protobuf(resp.content_type.as_deref()) {
        return resp.json();
    }
    if resp.is_success() {
        return T::decode(codec, &resp.body);
    }
    Err(status_error(resp))
}

/// The error of a protobuf error response: its `Status`, read as JSON by
/// the REST layer's one decoding of errors.
fn status_error(mut resp: Response) -> Error {
    if let Ok(status) = dynamic::to_json(&resp.body) {
        resp.body = serde_json::to_vec(&status).unwrap_or_default().into();
        resp.content_type = Some("application/json".to_owned());
    }
    match resp.into_result() {
        Err(e) => e,
        // `into_result` of a non-success status is always an error.
        Ok(r) => Error::DecodeProtobuf {
            type_name: "Status",
            source: format!("status {} without an error", r.status).into(),
        },
    }
}

/// The protobuf body of `obj` (`K`'s codec, no JSON between) with its
/// content type on `req`.
pub(crate) fn with_body<K: 'static>(
    req: kubeset_rest::Request,
    codec: &Typed<K>,
    obj: &K,
) -> kubeset_rest::Request {
    req.header(header::CONTENT_TYPE, HeaderValue::from_static(PROTOBUF))
        .body(codec.encode(obj))
}
