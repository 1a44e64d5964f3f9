//! The client layer of kubeset: [`Client`], the typed [`Api<K>`], the
//! [`dynamic`] client and [`discovery`].
//!
//! Use it through the `kubeset` crate, which re-exports everything here
//! (and `kubeset-runtime` under its `runtime` feature); this crate exists so
//! that the runtime can build on the client without a dependency cycle.
//!
//! ```no_run
//! use kubeset_client::{Api, Client, api::core::v1::ConfigMap, params::ListParams};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(client, "default");
//! let names: Vec<_> = cms.list(&ListParams::default()).await?.items
//!     .into_iter().filter_map(|cm| cm.metadata.name).collect();
//! # Ok(()) }
//! ```
//!
//! Or client-go style through the generated [`Clientset`], with typed
//! subresource methods (naming rules in [`clientset`]):
//!
//! ```no_run
//! use kubeset_client::{Client, Clientset, clientset::core_v1::PodLogParams};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let cs = Clientset::new(Client::try_default().await?);
//! let pods = cs.core_v1().pods("default");
//! let pod = pods.get("web-0").await?;
//! let log = pods.logs("web-0", &PodLogParams::default().tail_lines(20)).await?;
//! let scale = cs.apps_v1().deployments("default").get_scale("web").await?;
//! # let _ = (pod, log, scale);
//! # Ok(()) }
//! ```

pub mod admission;
mod api_typed;
pub mod apply;
mod client;
pub mod conversion;
#[cfg(feature = "apiextensions-v1")]
pub mod crd;
mod entry;
// Generated (`cargo xtask codegen`) and formatted by the generator
// (prettyplease), not rustfmt; docs carry the spec's prose.
#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
pub mod clientset;
pub mod discovery;
pub mod dynamic;
pub mod params;
mod partial;
mod patch;
#[cfg(feature = "protobuf")]
pub mod protobuf;
mod scale;
mod url;
#[cfg(feature = "ws")]
pub mod ws;

pub use api_typed::{Api, Deleted};
pub use client::{Client, ClientError};
pub use clientset::Clientset;
#[cfg(feature = "apiextensions-v1")]
pub use crd::{CustomResourceExt, merge_crds};
pub use entry::{CommitError, Entry, MODIFY_ATTEMPTS, OccupiedEntry, VacantEntry};
pub use partial::{
    PARTIAL_METADATA_ACCEPT, PARTIAL_METADATA_LIST_ACCEPT, PartialObjectMeta, PartialObjectMetaExt,
};
pub use patch::Patch;
pub use scale::ScaleSubresource;

#[cfg(feature = "apiextensions-v1")]
pub use kubeset_api::schema::{self, JsonSchema};
pub use kubeset_api::{
    ByteString, ClusterResourceScope, HasSpec, HasStatus, KUBERNETES_VERSION, List, Metadata,
    NamespaceResourceScope, Resource, ResourceExt, ResourceScope, api, apiextensions_apiserver,
    apimachinery, kube_aggregator, resources,
};
pub use kubeset_derive::{CustomResource, JsonSchema, Resource};

/// What the code `#[derive(CustomResource)]` writes refers to (its
/// `FooApply` holds `serde_json::Value`s); not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}
pub use kubeset_rest as rest;
pub use kubeset_rest::ApplyConflict;
pub use kubeset_rest::config::{Config, ConfigError, KubeConfigOptions};
pub use kubeset_rest::{ApiError, Error, ResumableWatch, StatusReason, WatchEvent, WatchStream};
