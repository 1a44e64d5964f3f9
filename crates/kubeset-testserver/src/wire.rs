//! The wire plumbing every handler shares: the response body type and
//! its constructors, query decoding, the one request-body decoder and the
//! one response encoder. The lowest layer of the HTTP side: it imports
//! only [`crate::status`], so that routing ([`crate::http`]), the verbs,
//! subresources and streams all import it downward.

use std::io;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use serde_json::Value;

use crate::status::ApiError;

/// Response body: whole or streamed.
pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub(crate) fn json_response(code: u16, v: &Value) -> Response<Body> {
    json_body_response(code, serde_json::to_vec(v).unwrap_or_default())
}

/// A response whose body is JSON text already written.
pub(crate) fn json_body_response(code: u16, body: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

pub(crate) fn error_response(e: &ApiError) -> Response<Body> {
    if e.reason == crate::status::PAGE_NOT_FOUND {
        return text_response(404, "404 page not found\n");
    }
    json_response(e.code, &e.to_status())
}

pub(crate) fn text_response(code: u16, text: &'static str) -> Response<Body> {
    let mut r = Response::new(full(text));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Decodes a query component (`+` is a space).
pub(crate) fn percent_decode(s: &str) -> String {
    decode(s, true)
}

/// Decodes a URL path as Go's `url.URL.Path` is, before it is split at `/`
/// (so `%2e%2e` is the name `..`, and `a%2Fb` two segments).
pub(crate) fn percent_decode_path(s: &str) -> String {
    decode(s, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decoded query parameters.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(q: Option<&str>) -> Self {
        Self(
            q.unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (percent_decode(k), percent_decode(v)),
                    None => (percent_decode(p), String::new()),
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `k`, in order (`dryRun=All&dryRun=All`).
    pub(crate) fn all<'a>(&'a self, k: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Appends `k=v` (a legacy watch path's `watch=true`).
    pub(crate) fn push(&mut self, k: &str, v: &str) {
        self.0.push((k.to_owned(), v.to_owned()));
    }

    pub(crate) fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | ""))
    }
}

/// Refuses request bodies this server cannot decode (CBOR) before they
/// are read; protobuf bodies are turned into JSON by
/// [`crate::protobuf::decode_body`] first.
pub(crate) fn check_content_type(content_type: &str) -> Result<(), ApiError> {
    if content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(content_type));
    }
    Ok(())
}

/// Request-body decoding: the one place a request body becomes an object
/// (JSON, or YAML when the content type says so).
pub(crate) fn decode_object(bytes: &[u8], content_type: &str) -> Result<Value, ApiError> {
    check_content_type(content_type)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Ok(v),
        Err(json_err) => {
            if content_type.contains("yaml") {
                serde_norway::from_slice::<Value>(bytes)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
            } else {
                Err(ApiError::bad_request(format!(
                    "Object 'Kind' is missing in '{}': {json_err}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                )))
            }
        }
    }
}

/// Response encoding: the one place an object, list, Table or Status
/// answering a resource request becomes a response (`accept`: the
/// request's Accept header; this writes JSON, and
/// [`crate::protobuf::encode_response`] re-encodes it when protobuf was
/// negotiated). An Accept asking `as=PartialObjectMetadata(List)` gets
/// the metadata only, or 406 ([`crate::partial`]).
pub(crate) fn respond(code: u16, v: &Value, accept: &str) -> Response<Body> {
    match crate::partial::transform(v, crate::partial::target(accept)) {
        Ok(None) => json_response(code, v),
        Ok(Some(partial)) => json_response(code, &partial),
        Err(e) => json_response(e.code, &e.to_status()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&x"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(q.flag("watch"));
        assert!(q.flag("x"));
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
