//! Protobuf ↔ JSON by `apiVersion` and `kind`, for code that holds
//! objects as JSON (the embedded API server, the dynamic client): the
//! envelope names the kind, a generated table finds its model, the model
//! converts. Kinds without a codec (custom resources, and kinds behind a
//! cargo feature that is off) are not found.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{DecodeError, Message, Unknown};

/// A conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum DynamicError {
    /// The bytes are not a valid encoding.
    #[error("invalid protobuf: {source}")]
    Decode {
        /// The cause.
        #[from]
        source: DecodeError,
    },
    /// No compiled model has a codec for this kind.
    #[error("no protobuf codec for {api_version}/{kind}")]
    UnknownKind {
        /// The apiVersion.
        api_version: String,
        /// The kind.
        kind: String,
    },
    /// The JSON is not a valid object of the kind.
    #[error("{kind}: {source}")]
    Json {
        /// The Rust type.
        kind: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

/// One kind's codec: JSON object ↔ protobuf bytes with the envelope.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// `apiVersion` (`v1`, `apps/v1`).
    pub api_version: &'static str,
    /// `kind`.
    pub kind: &'static str,
    decode: fn(&[u8]) -> Result<Value, DynamicError>,
    encode: fn(&Value) -> Result<Vec<u8>, DynamicError>,
}

impl Kind {
    pub(crate) const fn of<T>(api_version: &'static str, kind: &'static str) -> Self
    where
        T: Message + Default + Serialize + DeserializeOwned,
    {
        Self {
            api_version,
            kind,
            decode: decode_as::<T>,
            encode: encode_as::<T>,
        }
    }

    /// The object (the message bytes inside the envelope) as JSON, with
    /// `apiVersion` and `kind` set.
    pub fn decode(&self, raw: &[u8]) -> Result<Value, DynamicError> {
        let mut v = (self.decode)(raw)?;
        if let Value::Object(m) = &mut v {
            m.insert("apiVersion".into(), self.api_version.into());
            m.insert("kind".into(), self.kind.into());
        }
        Ok(v)
    }

    /// A JSON object of this kind, encoded with the envelope.
    pub fn encode(&self, obj: &Value) -> Result<Vec<u8>, DynamicError> {
        let raw = (self.encode)(obj)?;
        let mut buf = Vec::with_capacity(raw.len() + 64);
        Unknown {
            api_version: self.api_version.to_owned(),
            kind: self.kind.to_owned(),
            raw: &raw,
            ..Unknown::default()
        }
        .write(&mut buf);
        Ok(buf)
    }
}

fn decode_as<T: Message + Default + Serialize>(raw: &[u8]) -> Result<Value, DynamicError> {
    let obj: T = super::decode(raw)?;
    // A model always serializes to a JSON value.
    serde_json::to_value(&obj).map_err(|source| DynamicError::Json {
        kind: std::any::type_name::<T>(),
        source,
    })
}

fn encode_as<T: Message + DeserializeOwned>(obj: &Value) -> Result<Vec<u8>, DynamicError> {
    let typed: T = serde_json::from_value(obj.clone()).map_err(|source| DynamicError::Json {
        kind: std::any::type_name::<T>(),
        source,
    })?;
    Ok(super::encode(&typed))
}

/// Meta kinds written in every group's version (`DeleteOptions` of
/// `apps/v1` is `meta/v1`'s); looked up by kind when the apiVersion is not
/// in the table.
const ANY_VERSION: &[&str] = &["DeleteOptions"];

/// The codec of `api_version`/`kind`, if a compiled model has one.
pub fn kind(api_version: &str, kind: &str) -> Option<&'static Kind> {
    let table = super::generated::kinds::KINDS;
    let exact = table
        .binary_search_by(|k| (k.api_version, k.kind).cmp(&(api_version, kind)))
        .ok()
        .map(|i| &table[i]);
    exact.or_else(|| {
        ANY_VERSION
            .contains(&kind)
            .then(|| {
                table
                    .iter()
                    .find(|k| k.api_version == "v1" && k.kind == kind)
            })
            .flatten()
    })
}

/// Decodes `k8s\0` + envelope + object into JSON (with `apiVersion` and
/// `kind` from the envelope).
pub fn to_json(bytes: &[u8]) -> Result<Value, DynamicError> {
    let u = Unknown::parse(bytes)?;
    if !u.content_encoding.is_empty() {
        return Err(DecodeError::ContentEncoding {
            encoding: u.content_encoding,
        }
        .into());
    }
    let k = kind(&u.api_version, &u.kind).ok_or_else(|| DynamicError::UnknownKind {
        api_version: u.api_version.clone(),
        kind: u.kind.clone(),
    })?;
    let mut v = k.decode(u.raw)?;
    if let Value::Object(m) = &mut v {
        // The apiVersion as sent (a meta kind of another group).
        m.insert("apiVersion".into(), u.api_version.into());
    }
    Ok(v)
}

/// Encodes a JSON object by its own `apiVersion` and `kind`; `Ok(None)`
/// when no compiled model has a codec for it (it stays JSON).
pub fn from_json(obj: &Value) -> Result<Option<Vec<u8>>, DynamicError> {
    let field = |f: &str| obj.get(f).and_then(Value::as_str).unwrap_or("");
    match kind(field("apiVersion"), field("kind")) {
        Some(k) => k.encode(obj).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        let t = super::super::generated::kinds::KINDS;
        assert!(
            t.windows(2)
                .all(|w| (w[0].api_version, w[0].kind) < (w[1].api_version, w[1].kind))
        );
        assert!(kind("v1", "Status").is_some());
        assert!(kind("example.com/v1", "Foo").is_none());
    }

    #[cfg(feature = "core-v1")]
    #[test]
    fn json_round_trips_by_kind() {
        let cm = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "default"},
            "data": {"a": "b"},
        });
        let bytes = from_json(&cm).unwrap().expect("ConfigMap has a codec");
        assert!(bytes.starts_with(super::super::MAGIC));
        assert_eq!(to_json(&bytes).unwrap(), cm);
        let crd = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Foo"});
        assert!(from_json(&crd).unwrap().is_none());
        assert!(matches!(to_json(b"{}"), Err(DynamicError::Decode { .. })));
    }
}
