//! `FieldsV1`: the managed-fields set, kept as raw JSON.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The field set of a `managedFields` entry, kept as the raw JSON text the
/// server sent. It is usually the largest part of an object (38 % of a
/// real PodList) and clients rarely read it, so it is not parsed into a
/// tree; use [`FieldsV1::to_value`] or [`FieldsV1::parse`] when needed.
///
/// Read from JSON, the text was checked by the parser. Read from protobuf
/// (where it is the bytes of Go's `FieldsV1.Raw`), it is only checked to
/// be UTF-8: like Go, kubeset checks that it is JSON when it is written as
/// JSON or parsed, and an object whose field set is not JSON fails there
/// with an error naming `FieldsV1`. Encoding it to protobuf sends the bytes
/// back as they came. (This is half of a protobuf list's bytes; checking
/// it eagerly was a fifth of the decode.)
///
/// Reading it needs a `serde_json` deserializer (`from_slice`, `from_str`,
/// `from_reader`, `from_value`).
#[derive(Clone)]
pub struct FieldsV1(Text);

#[derive(Clone)]
enum Text {
    /// Checked to be JSON.
    Json(Box<RawValue>),
    /// Taken from the wire as sent; checked when written as JSON. (Present
    /// without the `protobuf` feature too, so that the type's size does
    /// not depend on it.)
    #[cfg_attr(not(feature = "protobuf"), allow(dead_code))]
    Unchecked(Box<str>),
}

impl FieldsV1 {
    /// Wraps JSON text after checking that it is valid JSON.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        RawValue::from_string(json.to_owned()).map(|raw| Self(Text::Json(raw)))
    }

    /// Wraps text read from protobuf without checking that it is JSON.
    #[cfg(feature = "protobuf")]
    pub(crate) fn from_wire(text: &str) -> Self {
        Self(Text::Unchecked(text.into()))
    }

    /// From a JSON value.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(|raw| Self(Text::Json(raw)))
    }

    /// The JSON text, exactly as received.
    pub fn as_json(&self) -> &str {
        match &self.0 {
            Text::Json(raw) => raw.get(),
            Text::Unchecked(text) => text,
        }
    }

    /// Parses the text into a JSON tree.
    pub fn to_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(self.as_json())
    }

    /// Parses the text into any type.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.as_json())
    }
}

impl Default for FieldsV1 {
    fn default() -> Self {
        // `{}` is valid JSON; the fallback keeps this total.
        Self::from_json("{}").unwrap_or_else(|_| Self(Text::Json(RawValue::NULL.to_owned())))
    }
}

/// Equal when the JSON is equal; the texts are compared first and parsed
/// only when they differ (whitespace, key order).
impl PartialEq for FieldsV1 {
    fn eq(&self, other: &Self) -> bool {
        self.as_json() == other.as_json()
            || matches!((self.to_value(), other.to_value()), (Ok(a), Ok(b)) if a == b)
    }
}

impl fmt::Debug for FieldsV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldsV1").field(&self.as_json()).finish()
    }
}

impl Serialize for FieldsV1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Text::Json(raw) => raw.serialize(serializer),
            Text::Unchecked(text) => serde_json::from_str::<&RawValue>(text)
                .map_err(|e| serde::ser::Error::custom(format_args!("FieldsV1 is not JSON: {e}")))?
                .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for FieldsV1 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(|raw| Self(Text::Json(raw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_raw_text_and_parses_on_demand() {
        let text = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}"#;
        let f: FieldsV1 = serde_json::from_str(text).unwrap();
        assert_eq!(f.as_json(), text);
        assert_eq!(serde_json::to_string(&f).unwrap(), text);
        let v = f.to_value().unwrap();
        assert!(v["f:metadata"]["f:labels"]["f:app"].is_object());
        // From a serde_json::Value (the dynamic client's path).
        let g: FieldsV1 = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(g.to_value().unwrap(), v);
        assert_eq!(FieldsV1::default().as_json(), "{}");
        let spaced =
            FieldsV1::from_json("{ \"f:metadata\" : { \"f:labels\": {\".\":{},\"f:app\":{}} } }")
                .unwrap();
        assert_eq!(spaced, f);
        assert_ne!(FieldsV1::from_json("{\"f:spec\":{}}").unwrap(), f);
        assert!(FieldsV1::from_json("{").is_err());
    }

    #[cfg(feature = "protobuf")]
    #[test]
    fn text_from_the_wire_is_checked_when_written() {
        let text = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}"#;
        let wire = FieldsV1::from_wire(text);
        assert_eq!(wire.as_json(), text);
        assert_eq!(serde_json::to_string(&wire).unwrap(), text);
        assert_eq!(wire, FieldsV1::from_json(text).unwrap());
        assert!(wire.to_value().unwrap()["f:metadata"].is_object());

        let bad = FieldsV1::from_wire(r#"{"f:spec":"#);
        assert_eq!(bad.as_json(), r#"{"f:spec":"#);
        let err = serde_json::to_string(&bad).unwrap_err().to_string();
        assert!(err.starts_with("FieldsV1 is not JSON: "), "{err}");
        assert!(bad.to_value().is_err());
        assert_ne!(bad, wire);
    }
}
