//! Untyped objects addressed by group, version and resource at run time
//! (client-go's dynamic client).
//!
//! [`Api<DynamicObject>`](crate::Api) built with [`Api::dynamic`](crate::Api::dynamic)
//! has the same verbs as a typed API.

use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_api::resources::ResourceInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a kind is served: enough to build URLs and fill `apiVersion`/`kind`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ApiResource {
    /// API group, empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Lowercase plural used in URLs.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

impl ApiResource {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource of a kind known at compile time.
    pub fn of<K: kubeset_api::Resource>() -> Self {
        ApiResource {
            group: K::GROUP.to_owned(),
            version: K::VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            plural: K::PLURAL.to_owned(),
            namespaced: <K::Scope as kubeset_api::ResourceScope>::NAMESPACED,
        }
    }
}

impl ApiResource {
    /// kube-rs's `ApiResource::erase::<K>(&())`: the same as
    /// [`of`](Self::of) (kubeset's kinds are static, the argument is
    /// kube-rs's dynamic type).
    pub fn erase<K: kubeset_api::Resource>(_: &()) -> Self {
        Self::of::<K>()
    }
}

impl From<&ResourceInfo> for ApiResource {
    fn from(info: &ResourceInfo) -> Self {
        ApiResource {
            group: info.group.to_owned(),
            version: info.version.to_owned(),
            kind: info.kind.to_owned(),
            plural: info.plural.to_owned(),
            namespaced: info.namespaced,
        }
    }
}

/// Any Kubernetes object: typed metadata, everything else as JSON.
///
/// # Numbers
///
/// Integers up to `u64::MAX` are kept exactly; anything larger (and every
/// fraction or exponent) is an `f64` in [`Value`], as kube-apiserver
/// itself keeps them: it stores a custom resource's integers beyond
/// `int64` as float64, so `18446744073709551617` written is
/// `18446744073709552000` read, from kubectl too. (serde_json's
/// `arbitrary_precision` would keep the digits, but cargo's feature
/// unification would turn it on for every crate in a build that uses
/// serde_json, changing their `Value`s; kubeset does not enable it.)
/// Converting to a typed object with an integer field there fails with
/// [`ParseDynamicObjectError::IntegerOutOfRange`], naming the field; typed
/// decoding of responses (`Api<K>`) names the field too. The CLI prints
/// such numbers in kubectl's notation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicObject {
    /// `apiVersion`; empty in list items, where the server omits it.
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// `kind`; empty in list items.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, `data`, …).
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

impl DynamicObject {
    /// A new object of `resource`'s kind named `name`.
    pub fn new(name: &str, resource: &ApiResource) -> Self {
        DynamicObject {
            api_version: resource.api_version(),
            kind: resource.kind.clone(),
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            data: Map::new(),
        }
    }

    /// Sets the namespace.
    #[must_use]
    pub fn within(mut self, namespace: &str) -> Self {
        self.metadata.namespace = Some(namespace.to_owned());
        self
    }

    /// Sets a top-level field (`spec`, `data`, …).
    #[must_use]
    pub fn with(mut self, field: &str, value: Value) -> Self {
        self.data.insert(field.to_owned(), value);
        self
    }

    /// kube-rs's `DynamicObject::data(json)`: every top-level field but
    /// `apiVersion`, `kind` and `metadata` at once, replacing those set
    /// before. A value that is not a JSON object sets none (kube-rs's
    /// object would fail to serialize).
    #[must_use]
    pub fn data(mut self, data: Value) -> Self {
        self.data = match data {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        self
    }

    /// kube-rs's `ResourceExt::name_any` for a `DynamicObject`: the name,
    /// else `generateName`, else `""`.
    pub fn name_any(&self) -> String {
        self.metadata
            .name
            .clone()
            .or_else(|| self.metadata.generate_name.clone())
            .unwrap_or_default()
    }

    /// The object's name, or `""`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The object's namespace, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }

    /// The object's resourceVersion, or `""`.
    pub fn resource_version(&self) -> &str {
        self.metadata
            .resource_version
            .as_deref()
            .unwrap_or_default()
    }

    /// A label's value.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.metadata.labels.as_ref()?.get(key).map(String::as_str)
    }

    /// Converts into a typed object (e.g. after discovery told what it is);
    /// kube-rs's name and error type name. The error names the field it
    /// failed at, and says so when the field is an integer field and the
    /// value an integer beyond `int64` (see [`DynamicObject`]'s numbers).
    pub fn try_parse<K: serde::de::DeserializeOwned>(self) -> Result<K, ParseDynamicObjectError> {
        let value =
            serde_json::to_value(self).map_err(|source| ParseDynamicObjectError::Serde {
                type_name: std::any::type_name::<K>(),
                path: ".".to_owned(),
                source,
            })?;
        serde_json::from_value::<K>(value.clone()).map_err(|first| {
            let Err(e) = serde_path_to_error::deserialize::<_, K>(&value) else {
                return ParseDynamicObjectError::Serde {
                    type_name: std::any::type_name::<K>(),
                    path: ".".to_owned(),
                    source: first,
                };
            };
            let (path, source) = (e.path().clone(), e.into_inner());
            let text = path.to_string();
            match at_path(&value, &path) {
                Some(Value::Number(n)) if n.as_i64().is_none() && is_integral(n) => {
                    ParseDynamicObjectError::IntegerOutOfRange {
                        type_name: std::any::type_name::<K>(),
                        path: text,
                        value: n.as_f64().unwrap_or(f64::NAN),
                    }
                }
                _ => ParseDynamicObjectError::Serde {
                    type_name: std::any::type_name::<K>(),
                    path: text,
                    source,
                },
            }
        })
    }
}

/// The value `path` leads to in `value`.
fn at_path<'v>(value: &'v Value, path: &serde_path_to_error::Path) -> Option<&'v Value> {
    use serde_path_to_error::Segment;
    path.iter().try_fold(value, |v, segment| match segment {
        Segment::Seq { index } => v.get(*index),
        Segment::Map { key } => v.get(key),
        Segment::Enum { .. } | Segment::Unknown => Some(v),
    })
}

/// Whether `n` is a whole number (an integer, or a float without fraction).
fn is_integral(n: &serde_json::Number) -> bool {
    n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Why [`DynamicObject::try_parse`] failed (kube-rs's
/// `ParseDynamicObjectError`, with the field named).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseDynamicObjectError {
    /// The Rust type has an integer field there, and the object holds an
    /// integer beyond `int64`: kube-apiserver keeps such integers as
    /// float64 (`18446744073709551617` comes back as
    /// `18446744073709552000`), and a Rust integer cannot hold them. Decode
    /// the field as `f64` or `serde_json::Value`, or keep the object
    /// dynamic: [`DynamicObject`] keeps the number as the server sent it.
    #[error(
        "{type_name}: field {path} holds {value}, an integer beyond int64 that kube-apiserver keeps as a float64; the type's integer field cannot hold it (use f64 or serde_json::Value for it)"
    )]
    IntegerOutOfRange {
        /// The Rust type asked for.
        type_name: &'static str,
        /// The field (`spec.replicas`, `spec.ports[2].port`).
        path: String,
        /// The number as the object holds it.
        value: f64,
    },
    /// Any other mismatch between the object and the type.
    #[error("{type_name}: field {path}: {source}")]
    Serde {
        /// The Rust type asked for.
        type_name: &'static str,
        /// The field (`.` for the object itself).
        path: String,
        /// serde_json's reason.
        #[source]
        source: serde_json::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Widget {
        spec: WidgetSpec,
    }

    #[derive(Debug, serde::Deserialize)]
    struct WidgetSpec {
        replicas: i64,
        #[serde(default)]
        sizes: Vec<u32>,
        #[serde(default)]
        weight: Option<f64>,
    }

    /// A Widget as kube-apiserver answers it: `spec` from the JSON text.
    fn widget(spec: &str) -> DynamicObject {
        let text = format!(
            r#"{{"apiVersion":"x/v1","kind":"Widget","metadata":{{"name":"w"}},"spec":{spec}}}"#
        );
        serde_json::from_str(&text).unwrap()
    }

    /// Why the Widget with this `spec` does not parse.
    fn parse_err(spec: &str) -> ParseDynamicObjectError {
        widget(spec).try_parse::<Widget>().unwrap_err()
    }

    #[test]
    fn integers_beyond_int64_are_floats_in_the_value_and_refused_by_integer_fields() {
        let obj = widget(r#"{"replicas":18446744073709552000,"weight":18446744073709552000}"#);
        assert_eq!(
            obj.data["spec"]["replicas"].as_f64(),
            Some(18446744073709552000.0)
        );
        assert!(obj.data["spec"]["replicas"].as_u64().is_none());
        let err = obj.try_parse::<Widget>().unwrap_err();
        assert!(
            matches!(&err, ParseDynamicObjectError::IntegerOutOfRange { path, value, .. }
                if path == "spec.replicas" && *value == 18446744073709552000.0),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(
                "field spec.replicas holds 18446744073709552000, an integer beyond int64"
            ),
            "{err}"
        );
        // Between i64::MAX and u64::MAX: exact in the Value, too large for i64.
        let err = parse_err(r#"{"replicas":9223372036854776000}"#);
        assert!(
            matches!(&err, ParseDynamicObjectError::IntegerOutOfRange { path, .. } if path == "spec.replicas"),
            "{err:?}"
        );
        // An f64 field takes the same number.
        let ok = widget(r#"{"replicas":1,"weight":18446744073709552000}"#)
            .try_parse::<Widget>()
            .unwrap();
        assert_eq!(
            (ok.spec.replicas, ok.spec.weight),
            (1, Some(1.8446744073709552e19))
        );
        assert!(ok.spec.sizes.is_empty());
    }

    #[test]
    fn other_mismatches_name_the_field() {
        let err = parse_err(r#"{"replicas":1,"sizes":[1,-2]}"#);
        assert!(
            matches!(&err, ParseDynamicObjectError::Serde { path, .. } if path == "spec.sizes[1]"),
            "{err:?}"
        );
        let err = parse_err(r#"{"replicas":1.5}"#);
        assert!(
            matches!(&err, ParseDynamicObjectError::Serde { path, .. } if path == "spec.replicas"),
            "a fraction is no integer beyond int64: {err:?}"
        );
        assert!(
            err.to_string()
                .contains("field spec.replicas: invalid type: floating point `1.5`"),
            "{err}"
        );
    }
}
