//! The apply configuration `#[derive(CustomResource)]` writes beside the
//! root type: `FooApply` (the generator's rule, `Foo` → `FooApply`).
//!
//! The derive sees the spec struct's tokens only, not the types of its
//! fields, so it cannot write an all-optional copy of the spec's nested
//! structs. `spec` and `status` are therefore JSON (`serde_json::Value`)
//! holding exactly what the manager sets: `with_spec(json!({…}))`, or
//! `try_with_spec(&partial)` with any `Serialize` value — the spec struct
//! itself when its fields are `Option`s skipped when `None`, or a struct
//! of the fields the manager owns. `metadata` is the generated
//! `ObjectMetaApply`; `apiVersion` and `kind` are written by `Serialize`.
//! `extract::<FooApply>` reads a manager's fields back.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Path};

/// What the apply type needs of the derive's input.
pub(crate) struct ApplyFacts<'a> {
    /// The facade crate (`::kubeset`).
    pub krate: &'a Path,
    /// The serde crate.
    pub serde: &'a Path,
    /// The root type (`Foo`).
    pub root: &'a Ident,
    /// The root type's visibility, the apply type's too.
    pub vis: &'a syn::Visibility,
    /// `group/version`.
    pub api_version: String,
    /// The kind.
    pub kind: &'a str,
    /// Namespaced: `new(name, namespace)`, else `new(name)`.
    pub namespaced: bool,
    /// The root type has a `status`.
    pub has_status: bool,
}

/// `FooApply`: the struct, its builders and its serde impls.
pub(crate) fn apply_type(f: &ApplyFacts<'_>) -> TokenStream {
    let ApplyFacts {
        krate,
        serde,
        root,
        kind,
        vis,
        ..
    } = f;
    let api_version = &f.api_version;
    let name = format_ident!("{}Apply", root.to_string().trim_end_matches('_'));
    let serde_str = quote!(#serde).to_string().replace(' ', "");
    let meta = quote!(#krate::apimachinery::pkg::apis::meta::v1::ObjectMetaApply);
    let value = quote!(#krate::__private::serde_json::Value);
    let doc = format!(
        " Apply configuration of [`{root}`] for server-side apply: `metadata`, and `spec`{} as JSON holding only what the field manager sets. `Serialize` writes `apiVersion: {api_version}` and `kind: {kind}`.",
        if f.has_status { "/`status`" } else { "" }
    );
    let new_fn = new_fn(f, &meta);
    let spec_builders = json_builders(&format_ident!("spec"), krate, serde);
    let (status_field, status_builders) = if f.has_status {
        (
            quote! {
                /// The status this manager sets (applied with `Api::apply_status`).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub status: ::core::option::Option<#value>,
            },
            json_builders(&format_ident!("status"), krate, serde),
        )
    } else {
        (quote!(), quote!())
    };
    let serialize = serialize_impl(f, &name);
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::default::Default, ::core::cmp::PartialEq, #serde::Deserialize)]
        #[serde(crate = #serde_str)]
        #vis struct #name {
            /// The metadata this manager sets (name, namespace, labels, …).
            #[serde(default)]
            pub metadata: ::core::option::Option<#meta>,
            /// The spec fields this manager sets, as JSON.
            #[serde(default)]
            pub spec: ::core::option::Option<#value>,
            #status_field
        }

        #[allow(dead_code)]
        impl #name {
            #new_fn

            /// Sets `metadata`.
            #[must_use]
            pub fn with_metadata(mut self, metadata: #meta) -> Self {
                self.metadata = ::core::option::Option::Some(metadata);
                self
            }

            /// Sets label `key` to `value` in `metadata.labels`.
            #[must_use]
            pub fn with_label(mut self, key: impl ::core::convert::Into<::std::string::String>, value: impl ::core::convert::Into<::std::string::String>) -> Self {
                self.metadata = ::core::option::Option::Some(self.metadata.take().unwrap_or_default().with_labels([(key, value.into())]));
                self
            }

            /// Sets annotation `key` to `value` in `metadata.annotations`.
            #[must_use]
            pub fn with_annotation(mut self, key: impl ::core::convert::Into<::std::string::String>, value: impl ::core::convert::Into<::std::string::String>) -> Self {
                self.metadata = ::core::option::Option::Some(self.metadata.take().unwrap_or_default().with_annotations([(key, value.into())]));
                self
            }

            #spec_builders
            #status_builders
        }

        #serialize
    }
}

/// `new(name[, namespace])`: the metadata's name (and namespace) set.
fn new_fn(f: &ApplyFacts<'_>, meta: &TokenStream) -> TokenStream {
    let kind = f.kind;
    let (params, set_ns, doc) = if f.namespaced {
        (
            quote!(name: impl ::core::convert::Into<::std::string::String>, namespace: impl ::core::convert::Into<::std::string::String>),
            quote!(.with_namespace(namespace)),
            format!(" The apply configuration of {kind} `name` in `namespace`."),
        )
    } else {
        (
            quote!(name: impl ::core::convert::Into<::std::string::String>),
            quote!(),
            format!(" The apply configuration of {kind} `name`."),
        )
    };
    quote! {
        #[doc = #doc]
        #[must_use]
        pub fn new(#params) -> Self {
            Self {
                metadata: ::core::option::Option::Some(<#meta as ::core::default::Default>::default().with_name(name) #set_ns),
                ..::core::default::Default::default()
            }
        }
    }
}

/// `Serialize`: `apiVersion` and `kind` written by construction, the set
/// parts after them.
fn serialize_impl(f: &ApplyFacts<'_>, name: &Ident) -> TokenStream {
    let (serde, kind, api_version) = (f.serde, f.kind, &f.api_version);
    let name_str = name.to_string();
    let (status_count, status_write) = if f.has_status {
        (
            quote!(+ usize::from(self.status.is_some())),
            quote! {
                if let ::core::option::Option::Some(v) = &self.status {
                    s.serialize_field("status", v)?;
                }
            },
        )
    } else {
        (quote!(), quote!())
    };
    quote! {
    impl #serde::Serialize for #name {
        fn serialize<S: #serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
            use #serde::ser::SerializeStruct as _;
            let len = 2 + usize::from(self.metadata.is_some()) + usize::from(self.spec.is_some()) #status_count;
            let mut s = serializer.serialize_struct(#name_str, len)?;
            s.serialize_field("apiVersion", #api_version)?;
            s.serialize_field("kind", #kind)?;
            if let ::core::option::Option::Some(v) = &self.metadata {
                s.serialize_field("metadata", v)?;
            }
            if let ::core::option::Option::Some(v) = &self.spec {
                s.serialize_field("spec", v)?;
            }
            #status_write
            s.end()
        }
    }
    }
}

/// `with_<field>(json)` and `try_with_<field>(&impl Serialize)`.
fn json_builders(field: &Ident, krate: &Path, serde: &Path) -> TokenStream {
    let json = quote!(#krate::__private::serde_json);
    let value = quote!(#json::Value);
    let with = format_ident!("with_{field}");
    let try_with = format_ident!("try_with_{field}");
    let doc = format!(
        " Sets `{field}` to `value` (e.g. `serde_json::json!({{…}})`): exactly the fields this manager owns."
    );
    let try_doc = format!(
        " Sets `{field}` to `value` as JSON: every field it serializes is owned, so skip the ones the manager does not set (`Option`s with `skip_serializing_if`). Fails when `value` does not serialize to JSON."
    );
    quote! {
        #[doc = #doc]
        #[must_use]
        pub fn #with(mut self, value: impl ::core::convert::Into<#value>) -> Self {
            self.#field = ::core::option::Option::Some(value.into());
            self
        }

        #[doc = #try_doc]
        pub fn #try_with<T: #serde::Serialize + ?::core::marker::Sized>(mut self, value: &T) -> ::core::result::Result<Self, #json::Error> {
            self.#field = ::core::option::Option::Some(#json::to_value(value)?);
            ::core::result::Result::Ok(self)
        }
    }
}
