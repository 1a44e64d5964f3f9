//! Status/ApiError decoding of an error response and the typed decoding of
//! a success body (a failed `Status` inside it becomes the error): no
//! panic, the code stays the HTTP one or the Status's, the message is
//! bounded by what the server sent.
#![no_main]

use kubeset_api::api::core::v1::Pod;
use kubeset_rest::fuzz_hooks::{api_error, decode_body};
use libfuzzer_sys::fuzz_target;

/// The longest made-up message `generic` writes, plus quoting overhead.
const MESSAGE_SLACK: usize = 4 * 2048 + 256;

fuzz_target!(|data: &[u8]| {
    let [a, b, c, body @ ..] = data else {
        return;
    };
    let code = 400 + u16::from_le_bytes([*a, *b]) % 200;
    let content_type = match c % 4 {
        0 => None,
        1 => Some("application/json"),
        2 => Some("text/plain"),
        _ => Some("text/html; charset=utf-8"),
    };
    let err = api_error(code, content_type, None, body);
    assert!(err.code != 0, "a zero code from {code}");
    assert!(
        err.message.len() <= body.len() + MESSAGE_SLACK,
        "a {}-byte message from a {}-byte body",
        err.message.len(),
        body.len()
    );
    let _ = err.to_string();
    let _ = decode_body::<Pod>(200, content_type, body).map_err(|e| e.to_string());
});
