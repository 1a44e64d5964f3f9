//! The logic of `#[derive(JsonSchema)]`: a structural OpenAPI v3 schema
//! from a struct or enum and its serde attributes.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned as _;
use syn::{Data, DataEnum, DeriveInput, Fields, FieldsNamed, Path};

use crate::attrs::{self, RenameRule, SerdeContainer};

/// How serde writes an enum.
enum Repr<'a> {
    External,
    Internal(&'a str),
    Adjacent(&'a str, &'a str),
    Untagged,
}

/// Expands `#[derive(JsonSchema)]`.
pub fn derive(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let krate = attrs::schema_crate(&input.attrs)?;
    let container = attrs::serde_container(&input.attrs)?;
    let own = attrs::schema_attrs(&input.attrs, &krate)?;
    reject_recursion(&input)?;
    let (body, optional) = match &input.data {
        Data::Struct(data) => struct_body(&input, &data.fields, &container, &krate)?,
        Data::Enum(data) => (enum_body(&input, data, &container, &krate)?, None),
        Data::Union(_) => {
            return Err(syn::Error::new(
                input.ident.span(),
                "#[derive(JsonSchema)] does not support unions",
            ));
        }
    };
    let body = match &own.with {
        Some(f) => quote!(#f()),
        None => body,
    };
    let doc = match (&own.description, &input.data) {
        (Some(d), _) => d.clone(),
        (None, Data::Enum(e)) => attrs::docs(&input.attrs) + &variant_docs(e, &container)?,
        (None, _) => attrs::docs(&input.attrs),
    };
    let edits = &own.edits;
    let name = &input.ident;
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(syn::parse_quote!(#krate::schema::JsonSchema));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let optional = optional
        .map(|ty| quote!(const OPTIONAL: bool = <#ty as #krate::schema::JsonSchema>::OPTIONAL;));
    Ok(quote! {
        impl #impl_generics #krate::schema::JsonSchema for #name #ty_generics #where_clause {
            #optional
            fn json_schema() -> #krate::schema::JSONSchemaProps {
                #[allow(unused_mut)]
                let mut s = #body;
                #krate::schema::describe(&mut s, #doc);
                #(#edits)*
                s
            }
        }
    })
}

/// A struct's schema, and for a newtype the inner type (whose `OPTIONAL`
/// it keeps).
fn struct_body(
    input: &DeriveInput,
    fields: &Fields,
    container: &SerdeContainer,
    krate: &Path,
) -> syn::Result<(TokenStream, Option<syn::Type>)> {
    match fields {
        Fields::Named(named) if container.transparent => {
            let field = named.named.iter().next().filter(|_| named.named.len() == 1);
            let field = field.ok_or_else(|| {
                syn::Error::new(
                    named.span(),
                    "`#[serde(transparent)]` needs exactly one field",
                )
            })?;
            Ok((field_schema(field, krate)?, Some(field.ty.clone())))
        }
        Fields::Named(named) => {
            let object = object(
                named,
                container.rename_all,
                container.default,
                quote!(#krate::schema::ObjectSchema::new()),
                krate,
            )?;
            Ok((quote!(#object.build()), None))
        }
        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            let field = &unnamed.unnamed[0];
            Ok((field_schema(field, krate)?, Some(field.ty.clone())))
        }
        Fields::Unnamed(unnamed) => Err(syn::Error::new(
            unnamed.span(),
            "unsupported: a tuple struct of several fields is a JSON array of mixed items, \
             which a structural schema cannot describe; use named fields",
        )),
        Fields::Unit => Err(syn::Error::new(
            input.ident.span(),
            "unsupported: a unit struct is `null` in JSON; use an empty struct `{}`",
        )),
    }
}

/// The schema of one field's type, with its `#[schema(...)]` and docs.
fn field_schema(field: &syn::Field, krate: &Path) -> syn::Result<TokenStream> {
    let serde = attrs::serde_item(&field.attrs)?;
    let own = attrs::schema_attrs(&field.attrs, krate)?;
    if let (Some(span), None) = (serde.with, &own.with) {
        return Err(syn::Error::new(
            span,
            "`#[serde(with)]` changes the JSON of this field: give its schema with \
             `#[schema(with = \"path::to::fn\")]`",
        ));
    }
    let ty = &field.ty;
    let base = match &own.with {
        Some(f) => quote!(#f()),
        None => quote!(<#ty as #krate::schema::JsonSchema>::json_schema()),
    };
    let doc = own
        .description
        .clone()
        .unwrap_or_else(|| attrs::docs(&field.attrs));
    let edits = &own.edits;
    Ok(quote!({
        #[allow(unused_mut)]
        let mut s = #base;
        #krate::schema::describe(&mut s, #doc);
        #(#edits)*
        s
    }))
}

/// An `ObjectSchema` expression (not yet built): `start` and then each
/// field serde writes.
fn object(
    fields: &FieldsNamed,
    rule: Option<RenameRule>,
    container_default: bool,
    start: TokenStream,
    krate: &Path,
) -> syn::Result<TokenStream> {
    let mut chain = start;
    for field in &fields.named {
        let serde = attrs::serde_item(&field.attrs)?;
        if serde.skip {
            continue;
        }
        let ty = &field.ty;
        let schema = field_schema(field, krate)?;
        if serde.flatten {
            if serde.rename.is_some() || field.attrs.iter().any(|a| a.path().is_ident("schema")) {
                return Err(syn::Error::new(
                    field.span(),
                    "conflicting attributes: a `#[serde(flatten)]` field has no name or schema of its own",
                ));
            }
            chain = quote!(#chain.flatten(#schema, <#ty as #krate::schema::JsonSchema>::OPTIONAL));
            continue;
        }
        let ident = field
            .ident
            .as_ref()
            .map(|i| i.to_string().trim_start_matches("r#").to_owned())
            .unwrap_or_default();
        let name = serde
            .rename
            .clone()
            .unwrap_or_else(|| rule.map_or(ident.clone(), |r| r.field(&ident)));
        let own = attrs::schema_attrs(&field.attrs, krate)?;
        let required = if serde.default
            || container_default
            || serde.skip_serializing_if
            || serde.skip_deserializing
        {
            quote!(false)
        } else if own.with.is_some() {
            quote!(true)
        } else {
            quote!(!<#ty as #krate::schema::JsonSchema>::OPTIONAL)
        };
        chain = quote!(#chain.property(#name, #schema, #required));
    }
    Ok(chain)
}

/// The variants' doc comments as a list after the enum's own: the merged
/// schema has no per-variant node that could carry them (branches of
/// `oneOf` may not have a `description`).
fn variant_docs(data: &DataEnum, container: &SerdeContainer) -> syn::Result<String> {
    let mut out = String::new();
    for variant in &data.variants {
        let serde = attrs::serde_item(&variant.attrs)?;
        let doc = attrs::docs(&variant.attrs);
        if serde.skip || doc.trim().is_empty() {
            continue;
        }
        let ident = variant.ident.to_string();
        let name = serde.rename.unwrap_or_else(|| {
            container
                .rename_all
                .map_or(ident.clone(), |r| r.variant(&ident))
        });
        let doc = doc.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        out.push_str(&format!("\n- `{name}`: {}", doc.trim()));
    }
    Ok(if out.is_empty() {
        out
    } else {
        format!("\n{out}")
    })
}

fn repr(container: &SerdeContainer) -> Repr<'_> {
    match (&container.tag, &container.content, container.untagged) {
        (_, _, true) => Repr::Untagged,
        (Some(tag), Some(content), _) => Repr::Adjacent(tag, content),
        (Some(tag), None, _) => Repr::Internal(tag),
        _ => Repr::External,
    }
}

/// An enum's schema: a string enum when every variant is a unit written
/// externally, else the union of the variants' schemas (exclusive unless
/// untagged).
fn enum_body(
    input: &DeriveInput,
    data: &DataEnum,
    container: &SerdeContainer,
    krate: &Path,
) -> syn::Result<TokenStream> {
    let repr = repr(container);
    let s = quote!(#krate::schema);
    let mut variants = Vec::new();
    let mut unit_names = Vec::new();
    let mut all_unit = true;
    for variant in &data.variants {
        let Some(v) = VariantAttrs::read(variant, container, krate)? else {
            continue;
        };
        let payload = payload(variant, &v, &repr, krate)?;
        all_unit &= payload.is_none();
        if payload.is_none() {
            unit_names.push(v.name.clone());
        }
        variants.push(variant_schema(variant, &repr, &v.name, payload, krate)?);
    }
    if variants.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "unsupported: an enum with no (unskipped) variants has no values",
        ));
    }
    if all_unit && matches!(repr, Repr::External) {
        return Ok(quote!(#s::string_enum(&[#(#unit_names),*])));
    }
    let exclusive = !matches!(repr, Repr::Untagged);
    Ok(quote!(#s::union(vec![#(#variants),*], #exclusive)))
}

/// What the schema of one variant takes from its attributes.
struct VariantAttrs {
    /// Its name on the wire.
    name: String,
    /// How its fields are renamed.
    rule: Option<RenameRule>,
    /// Its doc comment.
    doc: String,
    /// Its own `#[schema(...)]` rules, applied to its payload.
    edits: Vec<TokenStream>,
}

impl VariantAttrs {
    /// `None` for a skipped variant.
    fn read(
        variant: &syn::Variant,
        container: &SerdeContainer,
        krate: &Path,
    ) -> syn::Result<Option<Self>> {
        let serde = attrs::serde_item(&variant.attrs)?;
        if serde.skip {
            return Ok(None);
        }
        if serde.untagged {
            return Err(syn::Error::new(
                variant.span(),
                "unsupported: `#[serde(untagged)]` on one variant; untag the whole enum",
            ));
        }
        let name = serde.rename.clone().unwrap_or_else(|| {
            let ident = variant.ident.to_string();
            container
                .rename_all
                .map_or(ident.clone(), |r| r.variant(&ident))
        });
        let rule = serde.rename_all.or(container.rename_all_fields);
        let doc = attrs::docs(&variant.attrs);
        let own = attrs::schema_attrs(&variant.attrs, krate)?;
        if own.with.is_some() {
            return Err(syn::Error::new(
                variant.span(),
                "unsupported: `#[schema(with)]` on a variant; give it to the variant's field",
            ));
        }
        Ok(Some(VariantAttrs {
            name,
            rule,
            doc,
            edits: own.edits,
        }))
    }
}

/// The object holding a variant's tag: `{tag: name}`, unfinished.
fn tag_prop(krate: &Path, tag: &str, name: &str) -> TokenStream {
    let s = quote!(#krate::schema);
    quote!(#s::ObjectSchema::new().property(#tag, #s::string_enum(&[#name]), true))
}

/// A variant's payload schema and whether it is an object of named fields
/// (`None` for a unit variant). A variant's own rules
/// (`#[schema(validation = ...)]`) go on its payload; `union` keeps them,
/// guarded by the variant's tag.
fn payload(
    variant: &syn::Variant,
    v: &VariantAttrs,
    repr: &Repr<'_>,
    krate: &Path,
) -> syn::Result<Option<(TokenStream, bool)>> {
    let s = quote!(#krate::schema);
    let (edits, doc) = (&v.edits, &v.doc);
    Ok(match &variant.fields {
        Fields::Unit => None,
        Fields::Unnamed(u) if u.unnamed.len() == 1 => {
            let inner = field_schema(&u.unnamed[0], krate)?;
            Some((
                quote!({ #[allow(unused_mut)] let mut s = #inner; #(#edits)* s }),
                false,
            ))
        }
        Fields::Unnamed(u) => {
            return Err(syn::Error::new(
                u.span(),
                "unsupported: a tuple variant of several fields is a JSON array of mixed \
                 items, which a structural schema cannot describe; use named fields",
            ));
        }
        Fields::Named(named) => {
            let start = match repr {
                Repr::Internal(tag) => tag_prop(krate, tag, &v.name),
                _ => quote!(#s::ObjectSchema::new()),
            };
            let object = object(named, v.rule, false, start, krate)?;
            Some((
                quote!({ let mut s = #object.build(); #s::describe(&mut s, #doc); #(#edits)* s }),
                true,
            ))
        }
    })
}

/// One variant's schema in the enum's representation.
fn variant_schema(
    variant: &syn::Variant,
    repr: &Repr<'_>,
    name: &str,
    payload: Option<(TokenStream, bool)>,
    krate: &Path,
) -> syn::Result<TokenStream> {
    let s = quote!(#krate::schema);
    Ok(match (repr, payload) {
        (Repr::External, None) => quote!(#s::string_enum(&[#name])),
        (Repr::External, Some((p, _))) => {
            quote!(#s::ObjectSchema::new().property(#name, #p, true).build())
        }
        (Repr::Internal(tag) | Repr::Adjacent(tag, _), None) => {
            let t = tag_prop(krate, tag, name);
            quote!(#t.build())
        }
        (Repr::Internal(_), Some((p, true))) => p,
        (Repr::Internal(tag), Some((p, false))) => {
            let t = tag_prop(krate, tag, name);
            quote!(#t.flatten(#p, false).build())
        }
        (Repr::Adjacent(tag, content), Some((p, _))) => {
            let t = tag_prop(krate, tag, name);
            quote!(#t.property(#content, #p, true).build())
        }
        (Repr::Untagged, None) => {
            return Err(syn::Error::new(
                variant.span(),
                "unsupported: a unit variant of an untagged enum is `null` in JSON",
            ));
        }
        (Repr::Untagged, Some((p, _))) => p,
    })
}

/// Whether `tokens` mention `ident` (at any depth).
fn mentions(tokens: TokenStream, ident: &syn::Ident) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == *ident || i == "Self",
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), ident),
        _ => false,
    })
}

/// A type that contains itself has an infinite structural schema (a CRD
/// schema has no `$ref`): ask for `#[schema(with = ...)]` on that field.
fn reject_recursion(input: &DeriveInput) -> syn::Result<()> {
    let fields: Vec<&syn::Field> = match &input.data {
        Data::Struct(s) => s.fields.iter().collect(),
        Data::Enum(e) => e.variants.iter().flat_map(|v| v.fields.iter()).collect(),
        Data::Union(_) => Vec::new(),
    };
    for field in fields {
        let ty = &field.ty;
        let has_with = field
            .attrs
            .iter()
            .any(|a| a.path().is_ident("schema") && mentions_with(a));
        if !has_with && mentions(quote!(#ty), &input.ident) {
            return Err(syn::Error::new(
                ty.span(),
                "unsupported: a recursive type (a CRD schema has no `$ref`, so its schema would be \
                 infinite); give this field `#[schema(with = \"path::to::fn\")]`, e.g. \
                 `kubeset::schema::any_value`",
            ));
        }
    }
    Ok(())
}

fn mentions_with(attr: &syn::Attribute) -> bool {
    let mut found = false;
    let _ = attr.parse_nested_meta(|meta| {
        found |= meta.path.is_ident("with");
        attrs::skip_value(&meta)
    });
    found
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    /// Enums in every serde representation, with skipped, renamed,
    /// documented and validated variants of every shape.
    fn enums() -> Vec<(&'static str, TokenStream)> {
        vec![
            (
                "external_units",
                quote! {
                    #[serde(rename_all = "kebab-case")]
                    enum Mode { FastLane, #[serde(rename = "slow")] Slow, #[serde(skip)] Hidden }
                },
            ),
            (
                "external_mixed",
                quote! {
                    #[serde(rename_all_fields = "camelCase")]
                    enum Source {
                        Empty,
                        #[schema(validation = "self.size() > 0")]
                        Url(String),
                        /// A Git repository.
                        Git { repo_url: String, #[serde(default)] branch: Option<String> },
                    }
                },
            ),
            (
                "internal",
                quote! {
                    #[serde(tag = "kind")]
                    enum Shape { Dot, Circle(Circle), #[serde(rename_all = "UPPERCASE")] Rect { width: u32, height: u32 } }
                },
            ),
            (
                "adjacent",
                quote! {
                    #[serde(tag = "t", content = "c")]
                    enum Msg { Ping, Text(String), Move { x: i64, y: i64 } }
                },
            ),
            (
                "untagged",
                quote! {
                    #[serde(untagged)]
                    enum Value { Number(f64), Pair { left: String, right: String } }
                },
            ),
        ]
    }

    /// The expansion of `#[derive(JsonSchema)]` on enums, compared with
    /// `tests/expand/schema_enums.txt`: refactoring the derive must leave
    /// it unchanged token for token.
    #[test]
    fn enum_expansion_matches_golden() {
        crate::golden::check("schema_enums.txt", derive, enums());
    }
}
