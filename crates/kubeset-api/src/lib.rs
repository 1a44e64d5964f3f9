//! Typed Kubernetes API models, generated from the OpenAPI specs by
//! `cargo xtask codegen`.
//!
//! Module paths follow the definition names of the spec with the `io.k8s.`
//! prefix dropped, dots as `::` and `-` as `_`: `io.k8s.api.core.v1.Pod` is
//! `api::core::v1::Pod`. Each group-version is a cargo feature
//! (`core-v1`, `apps-v1`, …, `all`); `apimachinery` and [`resources`] are
//! always compiled.
//!
//! Top-level objects (`Pod`, `PodList`, …) write `apiVersion` and `kind` on
//! output and ignore them on input; kinds served as REST resources
//! implement [`Resource`].

// Generated modules are formatted by the generator (prettyplease), not
// rustfmt. Their docs are the spec's prose, which is not Markdown: its
// indentation makes no list.
#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
pub mod api;
#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
pub mod apiextensions_apiserver;
#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
pub mod apimachinery;
#[rustfmt::skip]
#[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
pub mod kube_aggregator;
mod resource;
pub mod resources;
mod serde_util;
pub mod types;

pub use resource::{ClusterResourceScope, NamespaceResourceScope, Resource, ResourceScope};
pub use types::{ByteString, List};
