//! `IntOrString`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value that is either a 32-bit integer or a string (ports, `maxSurge`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntOrString {
    /// An integer.
    Int(i32),
    /// A string, e.g. `"25%"` or a port name.
    String(String),
}

impl Default for IntOrString {
    fn default() -> Self {
        Self::Int(0)
    }
}

impl From<i32> for IntOrString {
    fn from(v: i32) -> Self {
        Self::Int(v)
    }
}

impl From<&str> for IntOrString {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}

impl From<String> for IntOrString {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Int(i) => serializer.serialize_i32(*i),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = IntOrString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_string_round_trips() {
        let i: IntOrString = serde_json::from_str("8080").unwrap();
        assert_eq!(i, IntOrString::Int(8080));
        let s: IntOrString = serde_json::from_str("\"25%\"").unwrap();
        assert_eq!(s, IntOrString::String("25%".into()));
        assert_eq!(serde_json::to_string(&i).unwrap(), "8080");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"25%\"");
        assert!(serde_json::from_str::<IntOrString>("4294967296").is_err());
        assert!(serde_json::from_str::<IntOrString>("1.5").is_err());
        assert!(serde_json::from_str::<IntOrString>("null").is_err());
    }
}
