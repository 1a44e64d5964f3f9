//! Typed Kubernetes API models, generated from the OpenAPI specs by
//! `cargo xtask codegen`.
//!
//! Module paths follow the definition names of the spec with the `io.k8s.`
//! prefix dropped, dots as `::` and `-` as `_`: `io.k8s.api.core.v1.Pod` is
//! `api::core::v1::Pod`. Each group-version is a cargo feature
//! (`core-v1`, `apps-v1`, …, `all`); `apimachinery` and [`resources`] are
//! always compiled.
//!
//! With the cargo feature `protobuf`, every compiled built-in model also
//! has a protobuf codec (module `protobuf`: the encoding kube-apiserver speaks as
//! `application/vnd.kubernetes.protobuf`, field numbers from the upstream
//! `generated.proto` files).
//!
//! With the cargo feature `apply`, every compiled struct `Foo` has an apply
//! configuration `FooApply` beside it for server-side apply (apimachinery's,
//! `ObjectMetaApply` and the rest, are always compiled): every field
//! optional (a manager sets, and owns, only what it means to), nested
//! structs as their apply types, `with_*` builders (`#[must_use]`; lists
//! append, maps insert), a kind's `new(name, namespace)` (or `new(name)`)
//! and `with_label`/`with_annotation`, and `new(keys…)` on the item type of
//! keyed lists (`ContainerApply::new("app")`, `ContainerPortApply::new(80,
//! "TCP")`; the keys are documented on the list field). A kind's
//! `Serialize` writes `apiVersion` and `kind`; `Deserialize` reads what
//! `kubeset_client::apply::extract` gives back. The rule naming them,
//! `path::Foo` → `path::FooApply`, is `kubeset_codegen::names::apply_type`.
//!
//! Top-level objects (`Pod`, `PodList`, …) write `apiVersion` and `kind` on
//! output and ignore them on input; kinds served as REST resources
//! implement [`Resource`].
//!
//! Fields are shaped as k8s-openapi's: a field is boxed only where a type
//! holds itself (`JSONSchemaProps`' nested schemas); an optional struct is
//! `Option<T>`, so a struct literal written for k8s-openapi compiles as is
//! (`spec: Some(PodSpec { .. })`).

// Generated modules are formatted by the generator (prettyplease), not
// rustfmt. Their docs are the spec's prose, which is not Markdown: its
// indentation makes no list, its `[0]`/`[*]` are no links, its `<name>`
// no HTML tags and its URLs are left bare (rustdoc's lints allowed here).
macro_rules! generated_modules {
    ($($name:ident),*) => {$(
        #[rustfmt::skip]
        #[allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]
        #[allow(rustdoc::bare_urls, rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
        pub mod $name;
    )*};
}
// `kubeset_codegen::emit::TOP_LEVEL_MODULES`.
generated_modules!(api, apiextensions_apiserver, apimachinery, kube_aggregator);
#[cfg(test)]
mod layout;
mod object;
#[cfg(feature = "protobuf")]
pub mod protobuf;
mod resource;
pub mod resources;
#[cfg(feature = "apiextensions-v1")]
pub mod schema;
mod serde_util;
pub mod types;
// Generated, formatted by the generator (from five versions on, its `cfg`
// lists wrap where rustfmt would wrap them otherwise).
#[rustfmt::skip]
mod version;

pub use object::{HasSpec, HasStatus};
pub use resource::{
    ClusterResourceScope, Metadata, NamespaceResourceScope, Resource, ResourceExt, ResourceScope,
};
pub use types::{ByteString, List};
pub use version::KUBERNETES_VERSION;
