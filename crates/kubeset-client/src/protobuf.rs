//! Protobuf for [`Api`](crate::Api) (cargo feature `protobuf`): when the
//! REST client's wire format is [`WireFormat::Protobuf`] and the Api's
//! `apiVersion`/`kind` is a built-in model with a codec, `get`, `list`, `create` and `replace`
//! send `Accept: application/vnd.kubernetes.protobuf, application/json`
//! and protobuf bodies, and decode whichever format the server answered
//! (its `Content-Type` decides, errors included: a protobuf `Status` is
//! the same [`ApiError`](kubeset_rest::ApiError) as a JSON one). A
//! server that refuses protobuf (`406`, `415`) is asked again in JSON,
//! once. Custom resources and kinds without a codec stay JSON, as with
//! client-go, whose protobuf clients fall back to JSON for them.
//!
//! `Api<K>` is generic over any `K` (no `'static` bound), so the bytes go
//! through the kind's generated model and `serde_json::Value` into `K`:
//! protobuf on the wire, not yet a faster decode. A typed path without the
//! `Value` (`kubeset_api::protobuf::dynamic::Typed<K>`, found by
//! `TypeId`) needs `K: 'static` on `Api`'s methods.

use http::{HeaderValue, header};
use kubeset_api::protobuf::dynamic::{self, Kind};
use kubeset_rest::content::{PROTOBUF, PROTOBUF_ACCEPT, WireFormat};
use kubeset_rest::{Error, Response, RestClient};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The kind's codec when the client negotiates protobuf and it has one.
pub(crate) fn negotiated(
    rest: &RestClient,
    api_version: &str,
    kind: &str,
) -> Option<&'static Kind> {
    if rest.wire_format() == WireFormat::Protobuf {
        dynamic::kind(api_version, kind)
    } else {
        None
    }
}

fn protobuf_error(type_name: &'static str, e: dynamic::DynamicError) -> Error {
    Error::DecodeProtobuf {
        type_name,
        source: Box::new(e),
    }
}

/// A request in protobuf (`body` encoded by the caller) or, on fallback,
/// in JSON: `build(protobuf)` makes it either way.
pub(crate) async fn send<T: DeserializeOwned>(
    build: impl Fn(bool) -> Result<kubeset_rest::Request, Error>,
) -> Result<T, Error> {
    let req = build(true)?.header(header::ACCEPT, HeaderValue::from_static(PROTOBUF_ACCEPT));
    let resp = req.send_raw().await?;
    if matches!(resp.status.as_u16(), 406 | 415) {
        return build(false)?.send_json().await;
    }
    let is_protobuf = resp
        .content_type
        .as_deref()
        .is_some_and(|ct| ct.split(';').next().unwrap_or("").trim() == PROTOBUF);
    if !is_protobuf {
        return resp.json();
    }
    if resp.is_success() {
        let type_name = std::any::type_name::<T>();
        let value = dynamic::to_json(&resp.body).map_err(|e| protobuf_error(type_name, e))?;
        return serde_json::from_value(value).map_err(|source| Error::Decode { type_name, source });
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

/// The protobuf body of `obj` (through its kind's model) with its content
/// type on `req`.
pub(crate) fn with_body<K: Serialize>(
    req: kubeset_rest::Request,
    codec: &Kind,
    obj: &K,
) -> Result<kubeset_rest::Request, Error> {
    let value = serde_json::to_value(obj).map_err(|source| Error::SerializeBody { source })?;
    let body = codec
        .encode(&value)
        .map_err(|e| protobuf_error(std::any::type_name::<K>(), e))?;
    Ok(req
        .header(header::CONTENT_TYPE, HeaderValue::from_static(PROTOBUF))
        .body(body))
}
