//! Entry points for the fuzz targets in `fuzz/` (hidden, not API: they
//! change whenever the parsers do). Each runs one pure parser of the
//! request path exactly as the router does.

use serde_json::Value;

use crate::fields::{FieldSet, PODS, Unknown};
use crate::{
    selectors::{FieldSelector, LabelSelector, selector_to_string},
    wire::{Query, decode_object, percent_decode},
};

/// The router's percent-decoding of one query component.
pub fn decode_component(s: &str) -> String {
    percent_decode(s)
}

/// The value of `key` in the query string `q`, as the router reads it.
pub fn query_value(q: &str, key: &str) -> Option<String> {
    Query::parse(Some(q)).get(key).map(str::to_owned)
}

/// Parses a `labelSelector` and, when it parses, matches it against `obj`.
/// `Err` carries the message the server would send.
pub fn label_selector(s: &str, obj: &Value) -> Result<bool, String> {
    LabelSelector::parse(s)
        .map(|sel| sel.matches(obj))
        .map_err(|e| e.0)
}

/// Parses a `fieldSelector` as the server does for pods (the kind with the
/// most field labels) and, when it parses, matches it against `obj`.
pub fn field_selector(s: &str, obj: &Value) -> Result<bool, String> {
    let pods = FieldSet::builtin(PODS, Unknown::NotSupported);
    FieldSelector::parse_for(pods, s)
        .map(|sel| sel.matches(obj))
        .map_err(|e| e.0)
}

/// The string form of a `LabelSelector` object, as the scale subresource
/// reports it.
pub fn selector_string(sel: &Value) -> String {
    selector_to_string(sel)
}

/// A request body decoded as the write paths do (JSON, or YAML when the
/// content type says so); `Err` is the 400's message.
pub fn request_object(body: &[u8], content_type: &str) -> Result<Value, String> {
    decode_object(body, content_type).map_err(|e| e.message)
}
