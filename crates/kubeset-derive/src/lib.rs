//! `#[derive(Resource)]` for kubeset.
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
//! Keys: `group` (empty for the core group), `version`, `kind`, `plural`,
//! exactly one of `namespaced` or `cluster`, and optionally
//! `crate = "path"` (default `::kubeset`) naming the crate that exports
//! `Resource`, the scope markers and `apimachinery`. The struct needs a
//! field `metadata` of type `ObjectMeta`.

mod resource;

use proc_macro::TokenStream;

/// Implements `Resource` from `#[resource(...)]`; see the crate docs.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    resource::derive(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
