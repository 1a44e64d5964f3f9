//! The discovery table: `src/resources/generated.rs` of `kubeset-api`; the
//! one `ResourceInfo` literal both emitters write (the CRD emitter puts it
//! in each kind's `RESOURCE_INFO`); and the one `Resource` impl both write
//! out.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{RESOURCES_FILE, format, preamble};
use crate::error::CodegenError;
use crate::ir::{Ir, ResourceIr};

/// `<path> { group: …, …, short_names: &[…] }` for `r`, where `path` names
/// the `ResourceInfo` type where the literal is written.
pub(crate) fn resource_info(path: &TokenStream, r: &ResourceIr) -> TokenStream {
    let (group, version, kind, plural, singular) =
        (&r.group, &r.version, &r.kind, &r.plural, &r.singular);
    let namespaced = r.namespaced;
    let verbs = r.verbs.iter().map(|v| v.as_str());
    let subresources = r.subresources.iter().map(|(name, s)| {
        let cfg = crate::versions::cfg(s.gate.as_ref());
        quote!(#cfg #name)
    });
    let short_names = r.short_names.iter();
    quote! {
        #path {
            group: #group,
            version: #version,
            kind: #kind,
            plural: #plural,
            singular: #singular,
            namespaced: #namespaced,
            verbs: &[#(#verbs),*],
            subresources: &[#(#subresources),*],
            short_names: &[#(#short_names),*],
        }
    }
}

/// `RESOURCES` and `SUBRESOURCES`: every resource and subresource of the
/// spec's paths.
pub(super) fn emit_resources(ir: &Ir, spec_label: &str) -> Result<String, CodegenError> {
    let info = quote!(ResourceInfo);
    let entries = ir.resources.iter().map(|r| {
        let cfg = crate::versions::cfg(r.gate.as_ref());
        let row = resource_info(&info, r);
        quote!(#cfg #row)
    });
    let subs = ir.resources.iter().flat_map(|r| {
        r.subresources.iter().map(move |(name, s)| {
            let (group, version, plural) = (&r.group, &r.version, &r.plural);
            let cfg = crate::versions::cfg(s.gate.as_ref().or(r.gate.as_ref()));
            let verbs = s.verbs.iter().map(|v| v.as_str());
            let kind = match &s.kind {
                Some(k) => {
                    let (g, v, k) = (&k.group, &k.version, &k.kind);
                    quote!(Some(KindRef { group: #g, version: #v, kind: #k }))
                }
                None => quote!(None),
            };
            quote! {
                #cfg
                SubresourceInfo {
                    group: #group,
                    version: #version,
                    resource: #plural,
                    name: #name,
                    verbs: &[#(#verbs),*],
                    kind: #kind,
                },
            }
        })
    });
    let tokens = quote! {
        use super::{KindRef, ResourceInfo, SubresourceInfo};

        /// Every resource in the spec's paths, sorted by group, version and plural.
        pub static RESOURCES: &[ResourceInfo] = &[#(#entries,)*];

        /// Every subresource in the spec's paths, sorted by group, version,
        /// resource and name.
        pub static SUBRESOURCES: &[SubresourceInfo] = &[#(#subs)*];
    };
    let pre = preamble(&[format!("Source: paths of {spec_label}.")]);
    format(RESOURCES_FILE, tokens, &pre)
}

/// What a kind's `Resource` impl states.
pub(crate) struct ResourceFacts<'a> {
    /// API group, empty for core.
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Lowercase plural.
    pub plural: &'a str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

/// `impl <krate>::Resource for <name>` and `impl <krate>::Metadata for
/// <name>` (k8s-openapi's pair), written out (no derive, so a generated
/// crate needs no proc macro): the constants, and the access to the
/// `metadata` field. `krate` is `crate` inside kubeset-api and `kubeset`
/// in a CRD crate.
pub(crate) fn resource_impl(
    krate: &TokenStream,
    name: &Ident,
    facts: &ResourceFacts<'_>,
) -> TokenStream {
    let ResourceFacts {
        group,
        version,
        kind,
        plural,
        namespaced,
    } = facts;
    let api_version = if group.is_empty() {
        (*version).to_owned()
    } else {
        format!("{group}/{version}")
    };
    let scope = if *namespaced {
        quote!(#krate::NamespaceResourceScope)
    } else {
        quote!(#krate::ClusterResourceScope)
    };
    let meta = quote!(#krate::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    quote! {
        impl #krate::Resource for #name {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            const API_VERSION: &'static str = #api_version;
            type Scope = #scope;
        }

        impl #krate::Metadata for #name {
            type Ty = #meta;

            fn metadata(&self) -> &#meta {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut #meta {
                &mut self.metadata
            }
        }
    }
}
