//! `RawExtension` and `Patch`: JSON the spec leaves open.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An embedded object of any kind (`ControllerRevision.data`, admission
/// reviews), as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawExtension(pub serde_json::Value);

/// The body of a PATCH request. The content type tells the server how to
/// read it; [`Patch::content_type`] gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Patch {
    /// RFC 6902 JSON patch: a list of operations
    /// (`application/json-patch+json`).
    Json(Vec<serde_json::Value>),
    /// RFC 7386 merge patch (`application/merge-patch+json`).
    Merge(serde_json::Value),
    /// Kubernetes strategic merge patch
    /// (`application/strategic-merge-patch+json`).
    StrategicMerge(serde_json::Value),
    /// Server-side apply: a full object (`application/apply-patch+yaml`,
    /// JSON being valid YAML).
    Apply(serde_json::Value),
}

impl Default for Patch {
    fn default() -> Self {
        Self::Merge(serde_json::Value::Object(serde_json::Map::new()))
    }
}

impl Patch {
    /// The `Content-Type` of the request.
    pub fn content_type(&self) -> &'static str {
        match self {
            Self::Json(_) => "application/json-patch+json",
            Self::Merge(_) => "application/merge-patch+json",
            Self::StrategicMerge(_) => "application/strategic-merge-patch+json",
            Self::Apply(_) => "application/apply-patch+yaml",
        }
    }
}

impl Serialize for Patch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Json(ops) => ops.serialize(serializer),
            Self::Merge(v) | Self::StrategicMerge(v) | Self::Apply(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Patch {
    /// An array reads as a JSON patch, anything else as a merge patch.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Array(ops) => Self::Json(ops),
            other => Self::Merge(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_bodies() {
        let p: Patch = serde_json::from_str(r#"[{"op":"remove","path":"/a"}]"#).unwrap();
        assert_eq!(p.content_type(), "application/json-patch+json");
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"[{"op":"remove","path":"/a"}]"#
        );
        let m: Patch = serde_json::from_str(r#"{"a":null}"#).unwrap();
        assert_eq!(m, Patch::Merge(serde_json::json!({"a": null})));
        let s = Patch::StrategicMerge(serde_json::json!({"b": 1}));
        assert_eq!(s.content_type(), "application/strategic-merge-patch+json");
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"b":1}"#);
        let r: RawExtension = serde_json::from_str(r#"{"kind":"X"}"#).unwrap();
        assert_eq!(r.0["kind"], "X");
    }
}
