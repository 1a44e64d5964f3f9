//! kubeset: a Kubernetes client for Rust.
//!
//! - [`Client`]: one connection pool to an API server (or several, with
//!   failover), built from a [`Config`] (kubeconfig, in-cluster).
//! - [`Api<K>`]: the typed verbs for any kind `K` implementing [`Resource`]
//!   — the generated models in [`api`], [`apimachinery`],
//!   [`apiextensions_apiserver`], [`kube_aggregator`], or your own
//!   `#[derive(Resource)]` structs. Scope is checked by the type system:
//!   [`Api::namespaced`] only compiles for namespaced kinds.
//! - Custom resources: `#[derive(CustomResource, JsonSchema)]` on a spec
//!   struct (kube-rs's `#[kube(...)]` keys) generates the kind, its
//!   structural schema ([`schema`]) and [`CustomResourceExt::crd`]; several
//!   versions merge with [`merge_crds`]; `runtime::wait` waits for
//!   `Established` (example `crd_print`; attribute tables and the shapes
//!   checked against a real API server in the `kubeset-derive` README).
//! - [`dynamic`]: the same verbs on untyped objects addressed by
//!   group/version/resource, and [`discovery`] of what a server serves.
//! - `runtime` (feature `runtime`): watcher, cached store with indexers,
//!   work-queue controller and leader election (the `kubeset-runtime`
//!   crate).
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
//!
//! The crate only re-exports: the client layer lives in `kubeset-client`,
//! the models in `kubeset-api`, the REST layer in `kubeset-rest` (also as
//! [`rest`]).

pub use kubeset_client::*;

#[cfg(feature = "runtime")]
#[doc(inline)]
pub use kubeset_runtime as runtime;
