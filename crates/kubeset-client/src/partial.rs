//! kube-rs's `PartialObjectMeta<K>` (`kube::api::PartialObjectMeta`): an
//! object's type and metadata only, as the API server answers when asked
//! for `PartialObjectMetadata`, with `Api::get_metadata`,
//! `get_metadata_opt`, `list_metadata` and `watch_metadata`.
//!
//! The runtime's metadata watcher caches
//! `kubeset::runtime::PartialObjectMetadata<K>` instead: the same metadata
//! without `types`, which every cached object would otherwise carry as two
//! more strings (`meta.k8s.io/v1`, `PartialObjectMetadata`). `From`
//! converts between the two.

use std::fmt;
use std::marker::PhantomData;

use http::HeaderValue;
use http::header::ACCEPT;
use kubeset_api::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_api::{List, Metadata, Resource};
use kubeset_rest::{Error, Verb, WatchStream};
use serde::{Deserialize, Serialize};

use crate::Api;
use crate::admission::TypeMeta;
use crate::params::{ListParams, WatchParams};
use crate::url::with_params;

/// The `Accept` header asking for one object's metadata only.
pub const PARTIAL_METADATA_ACCEPT: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/// The `Accept` header asking for a list of metadata only.
pub const PARTIAL_METADATA_LIST_ACCEPT: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// An object of kind `K` reduced to its type and metadata (kube-rs's
/// `PartialObjectMeta<K>`, fields and all). Decodes from a
/// `PartialObjectMetadata` answer or from a full object (its other
/// fields skipped without being built); addresses the same resource as
/// `K`.
///
/// ```
/// use kubeset_client::PartialObjectMeta;
/// use kubeset_client::api::core::v1::Pod;
/// let meta: PartialObjectMeta<Pod> = serde_json::from_str(
///     r#"{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{"name":"web"}}"#,
/// ).unwrap();
/// assert_eq!(meta.metadata.name.as_deref(), Some("web"));
/// assert_eq!(meta.types.map(|t| t.kind).as_deref(), Some("PartialObjectMetadata"));
/// ```
pub struct PartialObjectMeta<K> {
    /// `apiVersion` and `kind` as the server sent them, when it did.
    pub types: Option<TypeMeta>,
    /// The object's metadata.
    pub metadata: ObjectMeta,
    /// The kind, for the type only (kube-rs's field of the same name).
    pub _phantom: PhantomData<fn() -> K>,
}

impl<K> PartialObjectMeta<K> {
    /// Metadata without type fields.
    pub fn new(metadata: ObjectMeta) -> Self {
        PartialObjectMeta {
            types: None,
            metadata,
            _phantom: PhantomData,
        }
    }
}

impl<K> Default for PartialObjectMeta<K> {
    fn default() -> Self {
        Self::new(ObjectMeta::default())
    }
}

impl<K> Clone for PartialObjectMeta<K> {
    fn clone(&self) -> Self {
        PartialObjectMeta {
            types: self.types.clone(),
            metadata: self.metadata.clone(),
            _phantom: PhantomData,
        }
    }
}

impl<K> PartialEq for PartialObjectMeta<K> {
    fn eq(&self, other: &Self) -> bool {
        self.types == other.types && self.metadata == other.metadata
    }
}

impl<K> fmt::Debug for PartialObjectMeta<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartialObjectMeta")
            .field("types", &self.types)
            .field("metadata", &self.metadata)
            .finish()
    }
}

/// The wire form: `apiVersion`, `kind`, `metadata`; other fields skipped.
#[derive(Serialize, Deserialize)]
struct Wire {
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default)]
    metadata: ObjectMeta,
}

impl<'de, K> Deserialize<'de> for PartialObjectMeta<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(d)?;
        let types = match (wire.api_version, wire.kind) {
            (None, None) => None,
            (api_version, kind) => Some(TypeMeta {
                api_version: api_version.unwrap_or_default(),
                kind: kind.unwrap_or_default(),
            }),
        };
        Ok(PartialObjectMeta {
            types,
            metadata: wire.metadata,
            _phantom: PhantomData,
        })
    }
}

impl<K> Serialize for PartialObjectMeta<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            api_version: self.types.as_ref().map(|t| t.api_version.clone()),
            kind: self.types.as_ref().map(|t| t.kind.clone()),
            metadata: self.metadata.clone(),
        }
        .serialize(s)
    }
}

impl<K: Resource> Resource for PartialObjectMeta<K> {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::PLURAL;
    const API_VERSION: &'static str = K::API_VERSION;
    type Scope = K::Scope;
}

impl<K> Metadata for PartialObjectMeta<K> {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ObjectMeta {}
}

/// kube-rs's `PartialObjectMetaExt`: `ObjectMeta` into a
/// [`PartialObjectMeta`], for [`Api::patch_metadata`] (a request) or as a
/// server would answer it (a response). Sealed.
///
/// ```
/// use kubeset_client::{PartialObjectMetaExt, api::core::v1::Pod};
/// use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// let patch = ObjectMeta { name: Some("web".into()), ..ObjectMeta::default() }
///     .into_request_partial::<Pod>();
/// assert_eq!(patch.types.map(|t| (t.api_version, t.kind)), Some(("v1".into(), "Pod".into())));
/// ```
pub trait PartialObjectMetaExt: sealed::Sealed {
    /// With `K`'s `apiVersion` and `kind` (the body of a metadata patch).
    fn into_request_partial<K: Resource>(self) -> PartialObjectMeta<K>;
    /// With `meta.k8s.io/v1` `PartialObjectMetadata` (what a server sends).
    fn into_response_partial<K>(self) -> PartialObjectMeta<K>;
}

impl PartialObjectMetaExt for ObjectMeta {
    fn into_request_partial<K: Resource>(self) -> PartialObjectMeta<K> {
        PartialObjectMeta {
            types: Some(TypeMeta {
                api_version: K::API_VERSION.to_owned(),
                kind: K::KIND.to_owned(),
            }),
            metadata: self,
            _phantom: PhantomData,
        }
    }

    fn into_response_partial<K>(self) -> PartialObjectMeta<K> {
        PartialObjectMeta {
            types: Some(TypeMeta {
                api_version: "meta.k8s.io/v1".to_owned(),
                kind: "PartialObjectMetadata".to_owned(),
            }),
            metadata: self,
            _phantom: PhantomData,
        }
    }
}

/// Metadata-only calls (kube-rs's `Api::get_metadata`, `list_metadata`,
/// `watch_metadata`, `patch_metadata`), in their own `impl` block.
impl<K: Resource + serde::Serialize + serde::de::DeserializeOwned + 'static> Api<K> {
    /// Patches `name` and answers its type and metadata only (kube-rs's
    /// `Api::patch_metadata`; the body is typically
    /// `ObjectMeta { .. }.into_request_partial::<K>()`).
    pub async fn patch_metadata<P: Serialize>(
        &self,
        name: &str,
        params: &crate::params::PatchParams,
        patch: &crate::Patch<P>,
    ) -> Result<PartialObjectMeta<K>, Error> {
        self.patch_request(name, params, patch, &[])
            .header(ACCEPT, HeaderValue::from_static(PARTIAL_METADATA_ACCEPT))
            .send_json()
            .await
    }
}

/// Metadata-only reads, in their own `impl` block.
impl<K: Resource + 'static> Api<K> {
    /// `name`'s type and metadata only.
    ///
    /// ```no_run
    /// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_client::Error> {
    /// use kubeset_client::{Api, api::core::v1::Pod, params::ListParams};
    /// let pods: Api<Pod> = Api::default_namespaced(client);
    /// let meta = pods.get_metadata("web").await?;
    /// let names: Vec<_> = pods.list_metadata(&ListParams::default()).await?
    ///     .items.into_iter().filter_map(|p| p.metadata.name).collect();
    /// # let _ = (meta, names); Ok(()) }
    /// ```
    pub async fn get_metadata(&self, name: &str) -> Result<PartialObjectMeta<K>, Error> {
        self.request(Verb::Get, Some(name))
            .header(ACCEPT, HeaderValue::from_static(PARTIAL_METADATA_ACCEPT))
            .send_json()
            .await
    }

    /// As [`get_metadata`](Self::get_metadata), `None` when there is no
    /// such object.
    pub async fn get_metadata_opt(
        &self,
        name: &str,
    ) -> Result<Option<PartialObjectMeta<K>>, Error> {
        match self.get_metadata(name).await {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The metadata of the objects `params` selects (one page when
    /// `params.limit` is set).
    pub async fn list_metadata(
        &self,
        params: &ListParams,
    ) -> Result<List<PartialObjectMeta<K>>, Error> {
        let req = self.request(Verb::Get, None).header(
            ACCEPT,
            HeaderValue::from_static(PARTIAL_METADATA_LIST_ACCEPT),
        );
        with_params(req, params).send_json().await
    }

    /// Watches the metadata of the objects `params` selects from
    /// `resource_version` (`"0"`: from any version).
    pub async fn watch_metadata(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<PartialObjectMeta<K>>, Error> {
        // Bounded as `Api::watch` bounds it: a watch without a timeout gets
        // one drawn as client-go draws it.
        self.watch_request(&params.bounded(), resource_version)
            .header(ACCEPT, HeaderValue::from_static(PARTIAL_METADATA_ACCEPT))
            .watch()
            .await
    }
}
