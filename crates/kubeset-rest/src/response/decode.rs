//! Turning response bodies into values or typed errors (client-go's
//! `transformResponse`, `Result.Into` and `NewGenericServerResponse`).

use std::time::{Duration, SystemTime};

use http::HeaderMap;
use serde::de::DeserializeOwned;

use crate::{
    error::{ApiError, Error},
    status::{StatusBody, StatusReason},
    url::go_quote,
    verb::Verb,
};

/// At most this much of a text body goes into an error message.
const MAX_UNSTRUCTURED_TEXT: usize = 2048;

/// Bodies up to this size are checked for a failed `Status` before being
/// decoded as the requested type.
const STATUS_SNIFF_LIMIT: usize = 64 * 1024;

/// Whether `body` contains `"Status"` (a failed `Status` does: its
/// `kind`). By its `S`, with memchr's one-byte search: capitals are rare in
/// Kubernetes JSON, and a two-byte `memmem` searcher costs more than the
/// whole scan of a small object.
fn mentions_status(body: &[u8]) -> bool {
    const NEEDLE: &[u8] = b"\"Status\"";
    memchr::memchr_iter(b'S', body).any(|i| i > 0 && body[i - 1..].starts_with(NEEDLE))
}

/// client-go's success range: 200–206.
pub(crate) fn is_success(code: u16) -> bool {
    (200..=206).contains(&code)
}

/// Whether a body with this Content-Type may be quoted in an error message:
/// none, or `text/*`.
pub(crate) fn is_text(content_type: Option<&str>) -> bool {
    let Some(ct) = content_type.map(str::trim).filter(|c| !c.is_empty()) else {
        return true;
    };
    let media = ct.split(';').next().unwrap_or("").trim();
    media.len() > 5 && media[..5].eq_ignore_ascii_case("text/")
}

/// `Retry-After` as integer seconds (client-go; negative means 0) or as an
/// HTTP-date (our addition), relative to `now`.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = value.parse::<i64>() {
        return Some(Duration::from_secs(u64::try_from(secs).unwrap_or(0)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The error for a non-success response.
pub(crate) fn error_for(
    code: u16,
    verb: Verb,
    content_type: Option<&str>,
    retry_after: Option<Duration>,
    body: &[u8],
) -> ApiError {
    if let Some(status) = StatusBody::parse(body).filter(StatusBody::is_failure) {
        let mut err = ApiError::from_status(status, code);
        if err.retry_after.is_none() {
            err.retry_after = retry_after;
        }
        return err;
    }
    let server_message = if is_text(content_type) {
        let cut = &body[..body.len().min(MAX_UNSTRUCTURED_TEXT)];
        String::from_utf8_lossy(cut).trim().to_owned()
    } else {
        "unknown".to_owned()
    };
    let mut err = generic(code, verb, server_message);
    err.retry_after = retry_after;
    err
}

/// client-go's `NewGenericServerResponse` for a body that said nothing
/// usable.
pub(crate) fn generic(code: u16, verb: Verb, server_message: String) -> ApiError {
    use StatusReason as R;
    let (reason, message) = match code {
        409 => (
            if verb == Verb::Post {
                R::AlreadyExists
            } else {
                R::Conflict
            },
            "the server reported a conflict".to_owned(),
        ),
        404 => (
            R::NotFound,
            "the server could not find the requested resource".to_owned(),
        ),
        400 => (
            R::BadRequest,
            "the server rejected our request for an unknown reason".to_owned(),
        ),
        401 => (
            R::Unauthorized,
            "the server has asked for the client to provide credentials".to_owned(),
        ),
        403 => (R::Forbidden, server_message),
        406 => (
            R::NotAcceptable,
            if server_message.is_empty() || server_message == "unknown" {
                "the server was unable to respond with a content type that the client supports"
                    .to_owned()
            } else {
                server_message
            },
        ),
        415 => (R::UnsupportedMediaType, server_message),
        405 => (
            R::MethodNotAllowed,
            "the server does not allow this method on the requested resource".to_owned(),
        ),
        422 => (
            R::Invalid,
            "the server rejected our request due to an error in our request".to_owned(),
        ),
        503 => (
            R::ServiceUnavailable,
            "the server is currently unable to handle the request".to_owned(),
        ),
        504 => (
            R::Timeout,
            "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        ),
        429 => (
            R::TooManyRequests,
            "the server has received too many requests and has asked us to try again later"
                .to_owned(),
        ),
        c if c >= 500 => (
            R::InternalError,
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                go_quote(&server_message)
            ),
        ),
        c => (
            R::Unknown(String::new()),
            format!("the server responded with the status code {c} but did not return more information"),
        ),
    };
    ApiError::new(reason, code, message)
}

/// Decode a successful body into `T` (client-go's `Result.Into`).
pub(crate) fn decode_json<'a, T: DeserializeOwned>(
    code: u16,
    content_type: impl FnOnce() -> Option<&'a str>,
    body: &[u8],
) -> Result<T, Error> {
    if body.is_empty() {
        return Err(Error::EmptyBody {
            code,
            content_type: content_type().unwrap_or("").to_owned(),
        });
    }
    if body.len() <= STATUS_SNIFF_LIMIT
        && mentions_status(body)
        && let Some(status) = StatusBody::parse(body).filter(StatusBody::is_failure)
    {
        return Err(ApiError::from_status(status, code).into());
    }
    from_json(body)
        .map_err(|e| crate::field_path::name_the_field::<T>(body, e))
        .map_err(|source| Error::Decode {
            type_name: std::any::type_name::<T>(),
            source,
        })
}

/// Decode JSON bytes into `T` the way every kubeset response body and watch
/// event is decoded.
///
/// The body's UTF-8 is checked once, then parsed as text: serde_json's byte
/// reader would check every string again as it copies it out, about an
/// eighth of the instructions of decoding a `PodList`. Bytes that are not
/// UTF-8 go to serde_json's byte reader, so the error (or the value, when
/// the bad bytes sit in a part `T` ignores) is the same as `from_slice`'s.
///
/// The elements of the top-level object's arrays (a list's `items`) may
/// cost at most 64 bytes of `size_of` per body byte (plus 1 MiB), the rule
/// of kubeset-api's protobuf decoder, so a body of empty items cannot ask
/// for gigabytes: it is refused before the rest is allocated. Objects in
/// arrays nested deeper (a Pod's containers) are counted by a scan of the
/// body before it is decoded, at 4 KiB each against 256 bytes per body
/// byte (plus 1 MiB): a Pod of 100,000 `{}` containers is refused before
/// anything is allocated.
///
/// # Errors
///
/// serde_json's error: syntax, a value that does not fit `T`, or a list
/// past the memory limit.
pub fn from_json<T: DeserializeOwned>(body: &[u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(body) {
        Ok(text) => finish(serde_json::Deserializer::from_str(text), body),
        Err(_) => finish(serde_json::Deserializer::from_slice(body), body),
    }
}

/// `T` from `de` with the list budget ([`super::budget`]), then only
/// white space may follow, as `serde_json::from_str` checks.
fn finish<'de, R: serde_json::de::Read<'de>, T: DeserializeOwned>(
    mut de: serde_json::Deserializer<R>,
    body: &[u8],
) -> serde_json::Result<T> {
    super::budget::nested_objects::<serde_json::Error>(body)?;
    let len = body.len();
    let value = super::budget::decode(&mut de, len)?;
    de.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_found_by_its_capital() {
        for yes in [
            &b"\"Status\""[..],
            br#"{"kind":"Status"}"#,
            br#"{"S":"SS","kind":"Status","status":"Failure"}"#,
        ] {
            assert!(mentions_status(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b""[..],
            b"S",
            b"Status\"",
            br#"{"kind":"Statu"}"#,
            br#"{"kind":"StatusList"}"#,
            br#"{"kind":"ConfigMap","S":"xStatus"}"#,
        ] {
            assert!(!mentions_status(no), "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn from_json_matches_from_slice() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Named {
            name: String,
        }
        let ok = r#"{"name":"caf\u00e9 é","other":[1,2]}"#.as_bytes();
        assert_eq!(
            from_json::<Named>(ok).unwrap(),
            serde_json::from_slice::<Named>(ok).unwrap()
        );
        // Not UTF-8 inside the decoded string: serde_json's byte reader
        // names the position.
        let bad = b"{\"name\":\"a\xff\"}";
        let err = from_json::<Named>(bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            serde_json::from_slice::<Named>(bad)
                .unwrap_err()
                .to_string()
        );
        assert_eq!(err.line(), 1);
        // Not UTF-8 in a part the type ignores: decoded as from_slice does.
        let ignored = b"{\"name\":\"a\",\"x\":\"\xff\"}";
        assert_eq!(
            from_json::<Named>(ignored).map_err(|e| e.to_string()),
            serde_json::from_slice::<Named>(ignored).map_err(|e| e.to_string())
        );
        // Syntax errors keep their position.
        let err = from_json::<Named>(b"{\"name\": }").unwrap_err();
        assert_eq!((err.line(), err.column()), (1, 10));
    }

    #[test]
    fn text_content_types() {
        assert!(is_text(None));
        assert!(is_text(Some("")));
        assert!(is_text(Some("text/plain; charset=utf-8")));
        assert!(is_text(Some("TEXT/html")));
        assert!(!is_text(Some("application/json")));
        assert!(!is_text(Some("text")));
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h, now), None);
        h.insert(http::header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(3)));
        h.insert(http::header::RETRY_AFTER, "0".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert(http::header::RETRY_AFTER, "-4".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        h.insert(http::header::RETRY_AFTER, later.parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        h.insert(http::header::RETRY_AFTER, earlier.parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert(http::header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn status_failure_wins_with_verbatim_message() {
        let body = br#"{"kind":"Status","status":"Failure","message":"pods \"x\" not found","reason":"NotFound","code":404,"details":{"name":"x"}}"#;
        let e = error_for(404, Verb::Get, Some("application/json"), None, body);
        assert!(e.from_status);
        assert!(e.is_not_found());
        assert_eq!(e.to_string(), "pods \"x\" not found");
        assert_eq!(e.details, Some(serde_json::json!({"name": "x"})));
        // apiVersion is optional; Success or no kind fall back to generic.
        let ok = br#"{"kind":"Status","status":"Success","message":"m"}"#;
        let e = error_for(404, Verb::Get, Some("application/json"), None, ok);
        assert!(!e.from_status);
        assert_eq!(
            e.message,
            "the server could not find the requested resource"
        );
        let e = error_for(404, Verb::Get, Some("application/json"), None, b"{}");
        assert!(!e.from_status);
    }

    #[test]
    fn success_bodies() {
        let failure =
            br#"{"kind":"Status","status":"Failure","message":"m","reason":"Conflict","code":409}"#;
        let err = decode_json::<serde_json::Value>(200, || None, failure).unwrap_err();
        assert!(err.is_conflict(), "{err:?}");
        let ok = br#"{"kind":"Status","status":"Success"}"#;
        let v: serde_json::Value = decode_json(200, || None, ok).unwrap();
        assert_eq!(v["status"], "Success");
        let err = decode_json::<serde_json::Value>(204, || Some("text/plain"), b"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "0-length response with status code: 204 and content type: text/plain"
        );
        let err = decode_json::<u32>(200, || None, b"\"x\"").unwrap_err();
        assert_eq!(err.to_string(), "decoding the response body as u32");
    }

    #[test]
    fn retry_after_seconds_in_details() {
        let body = br#"{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":3}}"#;
        let e = error_for(429, Verb::Get, None, Some(Duration::from_secs(9)), body);
        assert_eq!(e.retry_after, Some(Duration::from_secs(3)));
        assert!(e.is_retryable());
    }
}
