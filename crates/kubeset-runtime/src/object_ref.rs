//! [`ObjectRef<K>`]: a reference to an object of kind `K`, kube-rs's
//! `kube::runtime::reflector::ObjectRef`.
//!
//! It wraps the store's [`ObjectKey`] (namespace and name; reachable as
//! `r.name` and `r.namespace` through `Deref`, as kube-rs's public fields
//! are) and adds the kind and apiVersion, so logs and errors say what the
//! object is, and the `extra` facts (resourceVersion, UID) a reference from
//! an object carries. Equality and hashing use kind, apiVersion, namespace
//! and name, never `extra`: two references to one object at different
//! versions are the same queue key.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;

use kubeset_client::Resource;
use kubeset_client::dynamic::DynamicObject;

use crate::store::{ObjectKey, StoreKey};

/// Facts about the referenced object that do not take part in equality.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extra {
    /// The object's resourceVersion when the reference was taken.
    pub resource_version: Option<String>,
    /// The object's UID.
    pub uid: Option<String>,
}

/// A reference to an object of kind `K` (see the module docs).
pub struct ObjectRef<K> {
    key: ObjectKey,
    api_version: Cow<'static, str>,
    kind: Cow<'static, str>,
    /// resourceVersion and UID, when taken from an object.
    pub extra: Extra,
    _kind: PhantomData<fn() -> K>,
}

impl<K: Resource> ObjectRef<K> {
    /// A reference to the object `name` (cluster-scoped, or add
    /// [`within`](Self::within)).
    pub fn new(name: &str) -> Self {
        Self::from_key(ObjectKey::cluster(name))
    }

    /// A reference to the object at `key`.
    pub fn from_key(key: ObjectKey) -> Self {
        ObjectRef {
            key,
            api_version: Cow::Borrowed(K::API_VERSION),
            kind: Cow::Borrowed(K::KIND),
            extra: Extra::default(),
            _kind: PhantomData,
        }
    }

    /// A reference to `obj`, with its resourceVersion and UID.
    pub fn from_obj(obj: &K) -> Self {
        let meta = obj.metadata();
        ObjectRef {
            extra: Extra {
                resource_version: meta.resource_version.clone(),
                uid: meta.uid.clone(),
            },
            ..Self::from_key(ObjectKey::of(obj))
        }
    }
}

impl<K> ObjectRef<K> {
    /// The same reference in `namespace`.
    #[must_use]
    pub fn within(mut self, namespace: &str) -> Self {
        self.key.namespace = Some(namespace.to_owned()).filter(|ns| !ns.is_empty());
        self
    }

    /// The namespace and name.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The namespace and name, by value.
    pub fn into_key(self) -> ObjectKey {
        self.key
    }

    /// The kind, e.g. `ConfigMap`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The apiVersion, e.g. `v1` or `apps/v1`.
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    /// The same reference without its static kind (kube-rs's
    /// `ObjectRef::erase`), for errors and logs across kinds.
    pub fn erase(self) -> ObjectRef<DynamicObject> {
        ObjectRef {
            key: self.key,
            api_version: self.api_version,
            kind: self.kind,
            extra: self.extra,
            _kind: PhantomData,
        }
    }

    /// A `core/v1` `ObjectReference` (for Events).
    #[cfg(feature = "events")]
    pub fn to_object_reference(&self) -> kubeset_client::api::core::v1::ObjectReference {
        kubeset_client::api::core::v1::ObjectReference {
            api_version: Some(self.api_version.to_string()),
            kind: Some(self.kind.to_string()),
            name: Some(self.key.name.clone()),
            namespace: self.key.namespace.clone(),
            resource_version: self.extra.resource_version.clone(),
            uid: self.extra.uid.clone(),
            field_path: None,
        }
    }
}

impl<K> Deref for ObjectRef<K> {
    type Target = ObjectKey;

    fn deref(&self) -> &ObjectKey {
        &self.key
    }
}

impl<K> AsRef<ObjectKey> for ObjectRef<K> {
    fn as_ref(&self) -> &ObjectKey {
        &self.key
    }
}

impl AsRef<ObjectKey> for ObjectKey {
    fn as_ref(&self) -> &ObjectKey {
        self
    }
}

impl<K> From<ObjectRef<K>> for ObjectKey {
    fn from(r: ObjectRef<K>) -> Self {
        r.key
    }
}

impl<K: Resource> From<ObjectKey> for ObjectRef<K> {
    fn from(key: ObjectKey) -> Self {
        Self::from_key(key)
    }
}

impl<K> Clone for ObjectRef<K> {
    fn clone(&self) -> Self {
        ObjectRef {
            key: self.key.clone(),
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            extra: self.extra.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> PartialEq for ObjectRef<K> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.kind == other.kind && self.api_version == other.api_version
    }
}

impl<K> Eq for ObjectRef<K> {}

impl<K> Hash for ObjectRef<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
        self.kind.hash(state);
        self.api_version.hash(state);
    }
}

impl<K> fmt::Debug for ObjectRef<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectRef")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .field("namespace", &self.key.namespace)
            .field("name", &self.key.name)
            .field("extra", &self.extra)
            .finish()
    }
}

/// `Kind.version.group/name.namespace`, as kube-rs writes it
/// (`ConfigMap.v1./settings.default`).
impl<K> fmt::Display for ObjectRef<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (group, version) = match self.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", &*self.api_version),
        };
        write!(f, "{}.{version}.{group}/{}", self.kind, self.key.name)?;
        if let Some(ns) = &self.key.namespace {
            write!(f, ".{ns}")?;
        }
        Ok(())
    }
}

/// A store is read with an `ObjectRef` of its kind as with its key.
impl<K> StoreKey<K> for ObjectRef<K> {
    fn key(&self) -> &ObjectKey {
        self.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use kubeset_client::api::core::v1::ConfigMap;
    use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    #[test]
    fn equality_ignores_extra_and_display_names_the_kind() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                namespace: Some("ns".into()),
                resource_version: Some("7".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let from_obj = ObjectRef::from_obj(&cm);
        let built = ObjectRef::<ConfigMap>::new("a").within("ns");
        assert_eq!(from_obj, built);
        assert_eq!(from_obj.extra.resource_version.as_deref(), Some("7"));
        assert_eq!(
            (from_obj.name.as_str(), from_obj.namespace.as_deref()),
            ("a", Some("ns"))
        );
        assert_eq!(built.to_string(), "ConfigMap.v1./a.ns");
        let erased = built.erase();
        assert_eq!((erased.kind(), erased.api_version()), ("ConfigMap", "v1"));
        assert_eq!(ObjectKey::from(erased), ObjectKey::namespaced("ns", "a"));
    }
}
