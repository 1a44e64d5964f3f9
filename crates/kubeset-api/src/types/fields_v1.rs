//! `FieldsV1`: the managed-fields set, kept as raw JSON.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The field set of a `managedFields` entry, kept as the raw JSON text the
/// server sent. It is usually the largest part of an object (38 % of a
/// real PodList) and clients rarely read it, so it is not parsed into a
/// tree; use [`FieldsV1::to_value`] or [`FieldsV1::parse`] when needed.
///
/// Reading it needs a `serde_json` deserializer (`from_slice`, `from_str`,
/// `from_reader`, `from_value`).
#[derive(Clone)]
pub struct FieldsV1(Box<RawValue>);

impl FieldsV1 {
    /// Wraps JSON text after checking that it is valid JSON.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        RawValue::from_string(json.to_owned()).map(Self)
    }

    /// From a JSON value.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self)
    }

    /// The JSON text, exactly as received.
    pub fn as_json(&self) -> &str {
        self.0.get()
    }

    /// Parses the text into a JSON tree.
    pub fn to_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// Parses the text into any type.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl Default for FieldsV1 {
    fn default() -> Self {
        // `{}` is valid JSON; the fallback keeps this total.
        Self::from_json("{}").unwrap_or_else(|_| Self(RawValue::NULL.to_owned()))
    }
}

/// Equal when the JSON is equal; the texts are compared first and parsed
/// only when they differ (whitespace, key order).
impl PartialEq for FieldsV1 {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
            || matches!((self.to_value(), other.to_value()), (Ok(a), Ok(b)) if a == b)
    }
}

impl fmt::Debug for FieldsV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldsV1").field(&self.0.get()).finish()
    }
}

impl Serialize for FieldsV1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FieldsV1 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
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
}
