//! [`PartialObjectMetadata`]: an object reduced to its metadata, for caches
//! that only need names, labels, owners and versions. The `Accept` headers
//! that ask the API server for it are the client's
//! ([`PARTIAL_METADATA_ACCEPT`](kubeset_client::PARTIAL_METADATA_ACCEPT),
//! [`PARTIAL_METADATA_LIST_ACCEPT`](kubeset_client::PARTIAL_METADATA_LIST_ACCEPT)).

use std::fmt;
use std::marker::PhantomData;

use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::{Metadata, Resource};
use serde::{Deserialize, Serialize};

/// Only the metadata of an object of kind `K`. Decodes from either a
/// `PartialObjectMetadata` answer or a full object (other fields are
/// skipped without being built), and addresses the same resource as `K`.
#[derive(Serialize, Deserialize)]
pub struct PartialObjectMetadata<K> {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(skip)]
    _kind: PhantomData<fn() -> K>,
}

impl<K> PartialObjectMetadata<K> {
    /// Wraps metadata.
    pub fn new(metadata: ObjectMeta) -> Self {
        PartialObjectMetadata {
            metadata,
            _kind: PhantomData,
        }
    }
}

impl<K> Clone for PartialObjectMetadata<K> {
    fn clone(&self) -> Self {
        Self::new(self.metadata.clone())
    }
}

impl<K> PartialEq for PartialObjectMetadata<K> {
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata
    }
}

impl<K> fmt::Debug for PartialObjectMetadata<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartialObjectMetadata")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<K: Resource> Resource for PartialObjectMetadata<K> {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::PLURAL;
    const API_VERSION: &'static str = K::API_VERSION;
    type Scope = K::Scope;
}

impl<K> Metadata for PartialObjectMetadata<K> {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// kube-rs's `PartialObjectMeta<K>` (`kubeset::api::PartialObjectMeta`,
/// what `Api::get_metadata` answers) into the cache's form: its `types`
/// are dropped.
impl<K> From<kubeset_client::PartialObjectMeta<K>> for PartialObjectMetadata<K> {
    fn from(meta: kubeset_client::PartialObjectMeta<K>) -> Self {
        Self::new(meta.metadata)
    }
}

/// The cache's form into kube-rs's `PartialObjectMeta<K>` (no `types`).
impl<K> From<PartialObjectMetadata<K>> for kubeset_client::PartialObjectMeta<K> {
    fn from(meta: PartialObjectMetadata<K>) -> Self {
        Self::new(meta.metadata)
    }
}
