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

    /// Converts into a typed object (e.g. after discovery told what it is).
    pub fn try_parse<K: serde::de::DeserializeOwned>(self) -> Result<K, serde_json::Error> {
        serde_json::to_value(self).and_then(serde_json::from_value)
    }
}
