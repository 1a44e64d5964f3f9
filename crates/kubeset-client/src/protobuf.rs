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

use std::sync::Arc;

use http::{HeaderValue, header};
use kubeset_api::List;
use kubeset_api::protobuf::dynamic::Typed;
use kubeset_rest::content::{PROTOBUF, PROTOBUF_ACCEPT, WireFormat};
use kubeset_rest::watch::{BoxError, ObjectDecoder, is_protobuf};
use kubeset_rest::{Error, Response, RestClient};
use serde::de::DeserializeOwned;

/// What a protobuf decode can fail with.
pub use kubeset_api::protobuf::DecodeError;
/// The codecs by kind and by type (`dynamic::typed::<K>()`).
pub use kubeset_api::protobuf::dynamic;

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

/// A server that cannot speak protobuf for this request: `406 Not
/// Acceptable`, `415 Unsupported Media Type` (asked again in JSON).
fn refused_status(code: u16) -> bool {
    matches!(code, 406 | 415)
}

/// Whether a protobuf request failed because the server refuses protobuf
/// (`406`/`415`): ask again in JSON.
pub fn refused(e: &Error) -> bool {
    e.api_error().is_some_and(|a| refused_status(a.code))
}

/// A request in protobuf (`body` encoded by the caller) or, on fallback,
/// in JSON: `build(protobuf)` makes it either way.
pub(crate) async fn send<K: 'static, T: Decode<K> + DeserializeOwned>(
    codec: &Typed<K>,
    build: impl Fn(bool) -> Result<kubeset_rest::Request, Error>,
) -> Result<T, Error> {
    send_with(
        build(true)?,
        || build(false),
        |bytes| T::decode(codec, bytes),
    )
    .await
}

/// `request` sent asking for protobuf: a protobuf answer is read by
/// `decode`, a JSON one as `T`, and a server that refuses protobuf
/// (`406`/`415`) is asked again in JSON (the request `json` makes). An
/// error answer in either format is the same typed error. For callers that
/// keep objects undecoded, such as the runtime's watcher reading a list
/// page with [`Typed::list_objects`].
pub async fn send_with<T: DeserializeOwned>(
    request: kubeset_rest::Request,
    json: impl FnOnce() -> Result<kubeset_rest::Request, Error>,
    decode: impl FnOnce(&[u8]) -> Result<T, Error>,
) -> Result<T, Error> {
    let req = request.header(header::ACCEPT, HeaderValue::from_static(PROTOBUF_ACCEPT));
    let resp = req.send_raw().await?;
    if refused_status(resp.status.as_u16()) {
        return json()?.send_json().await;
    }
    if !is_protobuf(resp.content_type()) {
        return resp.json();
    }
    if resp.is_success() {
        return decode(&resp.body);
    }
    Err(status_error(resp))
}

/// A stream opened in protobuf by `open` with `K`'s watch decoder or, when
/// the server refuses protobuf, by `json`.
pub(crate) async fn or_json<K: 'static, S, P, J>(
    codec: Typed<K>,
    open: impl FnOnce(Arc<dyn ObjectDecoder<K>>) -> P,
    json: impl FnOnce() -> J,
) -> Result<S, Error>
where
    P: Future<Output = Result<S, Error>>,
    J: Future<Output = Result<S, Error>>,
{
    match open(decoder_of(codec)).await {
        Err(e) if refused(&e) => json().await,
        opened => opened,
    }
}

/// The error of a protobuf error response: its `Status`, read as JSON by
/// the REST layer's one decoding of errors.
fn status_error(mut resp: Response) -> Error {
    if let Ok(status) = dynamic::status_json(&resp.body) {
        resp.body = serde_json::to_vec(&status).unwrap_or_default().into();
        resp.set_content_type(HeaderValue::from_static("application/json"));
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

/// The object decoder of a protobuf watch of `K` (the
/// [`ObjectDecoder`] that [`WatchStream::from_protobuf_bytes`] and
/// [`Request::watch_protobuf`](kubeset_rest::Request::watch_protobuf)
/// take): objects decoded straight into `K` by its generated codec.
/// `None` when `K` is not a built-in model with a codec.
///
/// [`WatchStream::from_protobuf_bytes`]: kubeset_rest::WatchStream::from_protobuf_bytes
///
/// ```
/// use kubeset_client::api::core::v1::Pod;
/// assert!(kubeset_client::protobuf::watch_decoder::<Pod>().is_some());
/// assert!(kubeset_client::protobuf::watch_decoder::<serde_json::Value>().is_none());
/// ```
pub fn watch_decoder<K: 'static>() -> Option<Arc<dyn ObjectDecoder<K>>> {
    dynamic::typed::<K>().map(decoder_of)
}

fn decoder_of<K: 'static>(codec: Typed<K>) -> Arc<dyn ObjectDecoder<K>> {
    watch_decoder_with(move |bytes| Ok(codec.decode(bytes)?))
}

/// A protobuf watch decoder whose objects `object` reads from their bytes
/// (`k8s\0` + envelope), e.g. kept undecoded until needed (the runtime's
/// watcher); `ERROR` statuses and resourceVersions are read by the
/// generated codecs.
pub fn watch_decoder_with<T, F>(object: F) -> Arc<dyn ObjectDecoder<T>>
where
    F: Fn(&[u8]) -> Result<T, BoxError> + Send + Sync + 'static,
    T: 'static,
{
    Arc::new(Frames(object))
}

struct Frames<F>(F);

impl<T, F> ObjectDecoder<T> for Frames<F>
where
    F: Fn(&[u8]) -> Result<T, BoxError> + Send + Sync,
{
    fn object(&self, bytes: &[u8]) -> Result<T, BoxError> {
        (self.0)(bytes)
    }

    fn status(&self, bytes: &[u8]) -> Result<serde_json::Value, BoxError> {
        Ok(dynamic::status_json(bytes)?)
    }

    fn resource_version(&self, bytes: &[u8]) -> Option<String> {
        dynamic::resource_version(bytes)
    }
}
