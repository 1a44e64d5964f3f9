//! Entry points for the fuzz targets in `fuzz/` (hidden, not API: they
//! change whenever the decoders do). Each runs one pure decoder of a
//! server's response exactly as the request path does.

use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderValue, header::RETRY_AFTER};
use serde::de::DeserializeOwned;

use crate::{ApiError, Error, Verb, response::decode};

/// What `from_json` charges each object in an array nested below the
/// top-level object's values: the models' element types must fit in it
/// (checked by `kubeset-client/tests/nested_budget.rs`).
pub const NESTED_ELEMENT: usize = crate::response::NESTED_ELEMENT;

/// `Retry-After: value`, relative to `now`; `None` for a value that is no
/// header value at all or that the client ignores.
pub fn retry_after(value: &[u8], now: SystemTime) -> Option<Duration> {
    let mut headers = HeaderMap::new();
    headers.insert(RETRY_AFTER, HeaderValue::from_bytes(value).ok()?);
    decode::retry_after(&headers, now)
}

/// The typed error for a non-success response to a GET.
pub fn api_error(
    code: u16,
    content_type: Option<&str>,
    retry_after: Option<Duration>,
    body: &[u8],
) -> ApiError {
    decode::error_for(code, Verb::Get, content_type, retry_after, body)
}

/// A successful response body decoded as `T` (a failed `Status` in it
/// becomes the error).
///
/// # Errors
///
/// As [`crate::Response::json`].
pub fn decode_body<T: DeserializeOwned>(
    code: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<T, Error> {
    decode::decode_json(code, || content_type, body)
}
