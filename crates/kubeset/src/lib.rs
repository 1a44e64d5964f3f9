//! kubeset: a Kubernetes client for Rust.
//!
//! - [`Client`]: one connection pool to an API server (or several, with
//!   failover), built from a [`Config`] (kubeconfig, in-cluster).
//! - [`Api<K>`]: the typed verbs for any kind `K` implementing [`Resource`]
//!   — the generated models in [`api`], [`apimachinery`],
//!   [`apiextensions_apiserver`], [`kube_aggregator`], or your own
//!   `#[derive(Resource)]` structs. Scope is checked by the type system:
//!   [`Api::namespaced`] only compiles for namespaced kinds.
//! - [`dynamic`]: the same verbs on untyped objects addressed by
//!   group/version/resource, and [`discovery`] of what a server serves.
//!
//! ```no_run
//! use kubeset::{Api, Client, api::core::v1::ConfigMap, params::ListParams};
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(client, "default");
//! for cm in cms.list(&ListParams::default().labels("app=web")).await?.items {
//!     println!("{:?}", cm.metadata.name);
//! }
//! # Ok(()) }
//! ```

mod api_typed;
mod client;
pub mod discovery;
pub mod dynamic;
pub mod params;
mod patch;
mod url;

pub use api_typed::{Api, Deleted};
pub use client::{Client, ClientError};
pub use patch::Patch;

pub use kubeset_api::{
    ByteString, ClusterResourceScope, List, NamespaceResourceScope, Resource, ResourceScope, api,
    apiextensions_apiserver, apimachinery, kube_aggregator, resources,
};
pub use kubeset_derive::Resource;
pub use kubeset_rest as rest;
pub use kubeset_rest::config::{Config, ConfigError, KubeConfigOptions};
pub use kubeset_rest::{ApiError, Error, StatusReason, WatchEvent, WatchStream};
