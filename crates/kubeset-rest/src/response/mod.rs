//! A complete response and its decoding.

mod budget;
pub(crate) mod decode;

pub(crate) use budget::NESTED_ELEMENT;

use std::time::SystemTime;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

use crate::{
    error::{ApiError, Error},
    verb::Verb,
    warning::Warning,
};

/// A response whose body has been read whole.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers (the Content-Type: [`Response::content_type`]).
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
    /// Parsed `Warning` headers (all codes).
    pub warnings: Vec<Warning>,
    /// The verb of the request (decides AlreadyExists vs Conflict on 409).
    pub verb: Verb,
}

impl Response {
    /// A response with `headers`' parsed `Warning`s (parsed once, by the
    /// attempt loop).
    pub(crate) fn new(
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
        warnings: Vec<Warning>,
        verb: Verb,
    ) -> Self {
        Self {
            status,
            headers,
            body,
            warnings,
            verb,
        }
    }

    /// The Content-Type header, if present and valid UTF-8 (read from
    /// [`headers`](Self::headers), not copied per response).
    pub fn content_type(&self) -> Option<&str> {
        self.headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }

    /// Replace the Content-Type header (a body re-encoded in another
    /// format, e.g. a protobuf `Status` read back as JSON).
    pub fn set_content_type(&mut self, content_type: http::HeaderValue) {
        self.headers
            .insert(http::header::CONTENT_TYPE, content_type);
    }

    /// Whether the status is in client-go's success range, 200–206.
    pub fn is_success(&self) -> bool {
        decode::is_success(self.status.as_u16())
    }

    /// The server's error for a non-success response (`None` on success).
    pub fn api_error(&self) -> Option<ApiError> {
        if self.is_success() {
            return None;
        }
        let retry_after = decode::retry_after(&self.headers, SystemTime::now());
        Some(decode::error_for(
            self.status.as_u16(),
            self.verb,
            self.content_type(),
            retry_after,
            &self.body,
        ))
    }

    /// `Ok(self)` on success, else the decoded [`ApiError`].
    pub fn into_result(self) -> Result<Self, Error> {
        match self.api_error() {
            None => Ok(self),
            Some(e) => Err(e.into()),
        }
    }

    /// Decode the body as JSON into `T`; a non-success status gives its
    /// [`ApiError`], an empty body [`Error::EmptyBody`].
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        if let Some(e) = self.api_error() {
            return Err(e.into());
        }
        decode::decode_json(self.status.as_u16(), || self.content_type(), &self.body)
    }
}
