//! The derives of kubeset: `#[derive(Resource)]` on a whole object,
//! `#[derive(CustomResource)]` on a spec struct (kube-rs's form), and
//! `#[derive(JsonSchema)]`, the structural OpenAPI v3 schema of a type.
//! Use them through `kubeset` (`kubeset::{Resource, CustomResource,
//! JsonSchema}`); the README of this crate has the full attribute tables
//! and the shapes checked against a real API server.
//!
//! ```ignore
//! #[derive(Resource)]
//! #[resource(group = "example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced)]
//! struct Widget {
//!     metadata: ObjectMeta,
//!     spec: WidgetSpec,
//! }
//! ```
//!
//! `#[resource]` keys: `group` (empty for the core group), `version`, `kind`, `plural`,
//! exactly one of `namespaced` or `cluster`, and optionally
//! `crate = "path"` (default `::kubeset`) naming the crate that exports
//! `Resource`, the scope markers and `apimachinery`. The struct needs a
//! field `metadata` of type `ObjectMeta`.
//!
//! ```ignore
//! #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
//! #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
//! struct WidgetSpec {
//!     #[schema(minimum = 1)]
//!     size: i32,
//! }
//! // generates `struct Widget { metadata, spec: WidgetSpec, status: Option<WidgetStatus> }`
//! // with `Resource`, `JsonSchema` and `CustomResourceExt` (`Widget::crd()`),
//! // and `WidgetApply`, its server-side apply configuration
//! // (`WidgetApply::new("w1", "ns").with_spec(json!({"size": 2}))`).
//! ```

mod apply_config;
mod attrs;
mod custom_resource;
#[cfg(test)]
mod golden;
mod json;
mod plural;
mod resource;
mod schema;

use proc_macro::TokenStream;

/// Implements `Resource` from `#[resource(...)]`; see the crate docs.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    resource::derive(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Generates the root type of a custom resource from its spec struct and
/// `#[kube(...)]` (kube-rs's keys); see the crate README.
#[proc_macro_derive(CustomResource, attributes(kube))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    custom_resource::derive(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `JsonSchema` (a structural OpenAPI v3 schema) from the type,
/// its serde attributes, doc comments and `#[schema(...)]`; see the crate
/// README.
#[proc_macro_derive(JsonSchema, attributes(schema))]
pub fn derive_json_schema(input: TokenStream) -> TokenStream {
    schema::derive(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
