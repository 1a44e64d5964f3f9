//! The logic of `#[derive(Resource)]`, on `proc_macro2` so that unit tests
//! can call it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields, LitStr, Path};

/// Scope of the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Namespaced,
    Cluster,
}

/// Parsed `#[resource(...)]`.
struct Attrs {
    krate: Path,
    group: String,
    version: String,
    kind: String,
    plural: String,
    scope: Scope,
}

fn parse_attrs(input: &DeriveInput) -> syn::Result<Attrs> {
    let mut krate: Option<Path> = None;
    let mut group: Option<String> = None;
    let mut version: Option<String> = None;
    let mut kind: Option<String> = None;
    let mut plural: Option<String> = None;
    let mut scope: Option<Scope> = None;
    let mut found = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("resource")) {
        found = true;
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let set_str = |slot: &mut Option<String>, meta: &syn::meta::ParseNestedMeta<'_>| {
                if slot.is_some() {
                    return Err(meta.error(format!("duplicate `{key}`")));
                }
                let lit: LitStr = meta.value()?.parse()?;
                *slot = Some(lit.value());
                Ok(())
            };
            match key.as_str() {
                "group" => set_str(&mut group, &meta),
                "version" => set_str(&mut version, &meta),
                "kind" => set_str(&mut kind, &meta),
                "plural" => set_str(&mut plural, &meta),
                "crate" => {
                    if krate.is_some() {
                        return Err(meta.error("duplicate `crate`"));
                    }
                    let lit: LitStr = meta.value()?.parse()?;
                    krate = Some(lit.parse()?);
                    Ok(())
                }
                "namespaced" | "cluster" => {
                    let s = if key == "namespaced" {
                        Scope::Namespaced
                    } else {
                        Scope::Cluster
                    };
                    if scope.is_some() {
                        return Err(
                            meta.error("give exactly one of `namespaced` or `cluster`, once")
                        );
                    }
                    scope = Some(s);
                    Ok(())
                }
                _ => Err(meta.error(
                    "unknown key: expected `group`, `version`, `kind`, `plural`, `namespaced`, `cluster` or `crate`",
                )),
            }
        })?;
    }
    let span = input.ident.span();
    if !found {
        return Err(syn::Error::new(
            span,
            "missing #[resource(group = \"...\", version = \"...\", kind = \"...\", plural = \"...\", namespaced | cluster)]",
        ));
    }
    let required = |v: Option<String>, key: &str, may_be_empty: bool| {
        let v =
            v.ok_or_else(|| syn::Error::new(span, format!("#[resource] needs `{key} = \"...\"`")))?;
        if !may_be_empty && v.is_empty() {
            return Err(syn::Error::new(span, format!("`{key}` must not be empty")));
        }
        Ok(v)
    };
    let plural = required(plural, "plural", false)?;
    if plural
        .chars()
        .any(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'))
    {
        return Err(syn::Error::new(
            span,
            "`plural` must be lowercase, as in URLs",
        ));
    }
    Ok(Attrs {
        krate: match krate {
            Some(k) => k,
            None => syn::parse_quote!(::kubeset),
        },
        group: required(group, "group", true)?,
        version: required(version, "version", false)?,
        kind: required(kind, "kind", false)?,
        plural,
        scope: scope.ok_or_else(|| {
            syn::Error::new(span, "#[resource] needs one of `namespaced` or `cluster`")
        })?,
    })
}

/// Expands `#[derive(Resource)]`.
pub fn derive(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(Resource)] works on structs with a `metadata` field",
        ));
    };
    let metadata = match &data.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .find(|f| f.ident.as_ref().is_some_and(|i| i == "metadata")),
        _ => None,
    };
    let Some(metadata) = metadata else {
        return Err(syn::Error::new(
            data.fields
                .span()
                .join(input.ident.span())
                .unwrap_or(input.ident.span()),
            "#[derive(Resource)] needs a field `metadata: ObjectMeta`",
        ));
    };
    let attrs = parse_attrs(&input)?;
    let Attrs {
        krate,
        group,
        version,
        kind,
        plural,
        scope,
    } = attrs;
    let facts = Facts {
        group: &group,
        version: &version,
        kind: &kind,
        plural: &plural,
        namespaced: scope == Scope::Namespaced,
    };
    // A `metadata` of another type fails at the field, not at the derive.
    Ok(resource_impl(
        &krate,
        &input.ident,
        &input.generics,
        &facts,
        metadata.ty.span(),
    ))
}

/// What a `Resource` impl states.
pub struct Facts<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
}

/// `impl Resource for name` and `impl Metadata for name` (k8s-openapi's
/// pair, with `metadata` as the field), shared by
/// `#[derive(Resource)]` and `#[derive(CustomResource)]`.
pub fn resource_impl(
    krate: &Path,
    name: &syn::Ident,
    generics: &syn::Generics,
    facts: &Facts<'_>,
    metadata_span: proc_macro2::Span,
) -> TokenStream {
    let Facts {
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
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let meta = quote!(#krate::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    let (get, get_mut) = (
        quote_spanned!(metadata_span=> &self.metadata),
        quote_spanned!(metadata_span=> &mut self.metadata),
    );
    quote! {
        impl #impl_generics #krate::Resource for #name #ty_generics #where_clause {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            const API_VERSION: &'static str = #api_version;
            type Scope = #scope;
        }
        impl #impl_generics #krate::Metadata for #name #ty_generics #where_clause {
            type Ty = #meta;
            fn metadata(&self) -> &#meta {
                #get
            }
            fn metadata_mut(&mut self) -> &mut #meta {
                #get_mut
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(tokens: TokenStream) -> Result<String, String> {
        derive(tokens)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn namespaced_kind_in_a_group() {
        let out = expand(quote! {
            #[resource(group = "apps", version = "v1", kind = "Deployment", plural = "deployments", namespaced)]
            struct Deployment { metadata: ObjectMeta, spec: Option<Spec> }
        })
        .unwrap();
        assert!(
            out.contains("impl :: kubeset :: Resource for Deployment"),
            "{out}"
        );
        assert!(
            out.contains("const API_VERSION : & 'static str = \"apps/v1\""),
            "{out}"
        );
        assert!(
            out.contains("const PLURAL : & 'static str = \"deployments\""),
            "{out}"
        );
        assert!(
            out.contains("type Scope = :: kubeset :: NamespaceResourceScope"),
            "{out}"
        );
        assert!(out.contains("& self . metadata"), "{out}");
        assert!(
            out.contains("impl :: kubeset :: Metadata for Deployment"),
            "{out}"
        );
        assert!(
            out.contains(
                "type Ty = :: kubeset :: apimachinery :: pkg :: apis :: meta :: v1 :: ObjectMeta"
            ),
            "{out}"
        );
    }

    #[test]
    fn core_group_and_crate_override() {
        let out = expand(quote! {
            #[resource(crate = "crate", group = "", version = "v1", kind = "Node", plural = "nodes", cluster)]
            struct Node { metadata: ObjectMeta }
        })
        .unwrap();
        assert!(out.contains("impl crate :: Resource for Node"), "{out}");
        assert!(
            out.contains("const API_VERSION : & 'static str = \"v1\""),
            "{out}"
        );
        assert!(
            out.contains("type Scope = crate :: ClusterResourceScope"),
            "{out}"
        );
        assert!(
            out.contains("crate :: apimachinery :: pkg :: apis :: meta :: v1 :: ObjectMeta"),
            "{out}"
        );
    }

    #[test]
    fn generics_are_carried() {
        let out = expand(quote! {
            #[resource(group = "x.io", version = "v1", kind = "W", plural = "ws", cluster)]
            struct W<T: Clone> { metadata: ObjectMeta, t: T }
        })
        .unwrap();
        assert!(
            out.contains("impl < T : Clone > :: kubeset :: Resource for W < T >"),
            "{out}"
        );
    }

    #[test]
    fn bad_attributes_are_errors() {
        let cases = [
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "as", namespaced, cluster)] struct A { metadata: M } },
                "exactly one of",
            ),
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "as")] struct A { metadata: M } },
                "one of `namespaced` or `cluster`",
            ),
            (
                quote! { #[resource(group = "", version = "v1", plural = "as", cluster)] struct A { metadata: M } },
                "needs `kind",
            ),
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "As", cluster)] struct A { metadata: M } },
                "lowercase",
            ),
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "as", cluster, colour = "red")] struct A { metadata: M } },
                "unknown key",
            ),
            (
                quote! { #[resource(group = "", group = "x", version = "v1", kind = "A", plural = "as", cluster)] struct A { metadata: M } },
                "duplicate `group`",
            ),
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "as", cluster)] struct A { meta: M } },
                "needs a field `metadata",
            ),
            (
                quote! { #[resource(group = "", version = "v1", kind = "A", plural = "as", cluster)] enum A { B } },
                "works on structs",
            ),
            (quote! { struct A { metadata: M } }, "missing #[resource"),
            (
                quote! { #[resource(group = "", version = "", kind = "A", plural = "as", cluster)] struct A { metadata: M } },
                "`version` must not be empty",
            ),
        ];
        for (tokens, want) in cases {
            let err = expand(tokens.clone()).expect_err(&tokens.to_string());
            assert!(err.contains(want), "{tokens}: got {err:?}, want {want:?}");
        }
    }
}
