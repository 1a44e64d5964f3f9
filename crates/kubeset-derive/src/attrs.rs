//! The attributes the schema derive reads: serde's (names, skipping,
//! flattening, enum representation) and our `#[schema(...)]`, plus doc
//! comments.

use proc_macro2::TokenStream;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Path};

/// serde's `rename_all` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn parse(lit: &LitStr) -> syn::Result<Self> {
        Ok(match lit.value().as_str() {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            other => {
                return Err(syn::Error::new(
                    lit.span(),
                    format!("unknown rename rule `{other}`"),
                ));
            }
        })
    }

    /// Renames a field (written in snake_case), as serde does.
    pub fn field(self, name: &str) -> String {
        match self {
            Self::Lower | Self::Snake => name.to_owned(),
            Self::Upper | Self::ScreamingSnake => name.to_ascii_uppercase(),
            Self::Pascal => name
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect(),
            Self::Camel => {
                let pascal = Self::Pascal.field(name);
                let mut c = pascal.chars();
                c.next()
                    .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
                    .unwrap_or_default()
            }
            Self::Kebab => name.replace('_', "-"),
            Self::ScreamingKebab => name.replace('_', "-").to_ascii_uppercase(),
        }
    }

    /// Renames a variant (written in PascalCase), as serde does.
    pub fn variant(self, name: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, ch) in name.char_indices() {
                if ch.is_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            }
            out
        };
        match self {
            Self::Pascal => name.to_owned(),
            Self::Lower => name.to_ascii_lowercase(),
            Self::Upper => name.to_ascii_uppercase(),
            Self::Camel => {
                let mut c = name.chars();
                c.next()
                    .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
                    .unwrap_or_default()
            }
            Self::Snake => snake(),
            Self::ScreamingSnake => snake().to_ascii_uppercase(),
            Self::Kebab => snake().replace('_', "-"),
            Self::ScreamingKebab => snake().replace('_', "-").to_ascii_uppercase(),
        }
    }
}

/// The doc comment of an item, lines joined.
pub fn docs(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            lines.push(s.value());
        }
    }
    lines.join("\n")
}

/// What serde says about a field or variant.
#[derive(Default)]
pub struct SerdeItem {
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub default: bool,
    pub skip: bool,
    pub skip_serializing_if: bool,
    pub skip_deserializing: bool,
    pub flatten: bool,
    pub with: Option<proc_macro2::Span>,
    pub untagged: bool,
}

/// What serde says about a struct or enum.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    pub rename_all_fields: Option<RenameRule>,
    pub tag: Option<String>,
    pub content: Option<String>,
    pub untagged: bool,
    pub transparent: bool,
    pub default: bool,
}

/// `key = "x"` or `key(serialize = "x", deserialize = "y")`: the
/// serialized side is the one in the schema.
fn serialized(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    if meta.input.peek(syn::Token![=]) {
        return meta.value()?.parse();
    }
    let mut out = None;
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("serialize") {
            out = Some(lit);
        }
        Ok(())
    })?;
    out.ok_or_else(|| meta.error("give `serialize = \"...\"`"))
}

/// `rename = "x"` or `rename(serialize = "x", …)`: the serialized name.
fn name_value(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(serialized(meta)?.value())
}

/// `rename_all = "camelCase"` or `rename_all(serialize = "…", …)`.
fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<RenameRule> {
    RenameRule::parse(&serialized(meta)?)
}

/// Calls `f` with each key of every `#[name(...)]` attribute in `attrs`.
fn each_key(
    attrs: &[Attribute],
    name: &str,
    mut f: impl FnMut(ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        attr.parse_nested_meta(&mut f)?;
    }
    Ok(())
}

/// Skips the value of a serde key we do not need.
pub fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn key(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// Reads `#[serde(...)]` of a field or variant.
pub fn serde_item(attrs: &[Attribute]) -> syn::Result<SerdeItem> {
    let mut out = SerdeItem::default();
    each_key(attrs, "serde", |meta| {
        match key(&meta).as_str() {
            "rename" => out.rename = Some(name_value(&meta)?),
            "rename_all" => out.rename_all = Some(rename_rule(&meta)?),
            "default" => {
                out.default = true;
                skip_value(&meta)?;
            }
            "skip" | "skip_serializing" => out.skip = true,
            "skip_deserializing" => out.skip_deserializing = true,
            "skip_serializing_if" => {
                out.skip_serializing_if = true;
                skip_value(&meta)?;
            }
            "flatten" => out.flatten = true,
            "untagged" => out.untagged = true,
            "with" | "serialize_with" => {
                out.with = Some(
                    meta.path
                        .get_ident()
                        .map_or_else(proc_macro2::Span::call_site, proc_macro2::Ident::span),
                );
                skip_value(&meta)?;
            }
            _ => skip_value(&meta)?,
        }
        Ok(())
    })?;
    Ok(out)
}

/// Reads `#[serde(...)]` of a struct or enum.
pub fn serde_container(attrs: &[Attribute]) -> syn::Result<SerdeContainer> {
    let mut out = SerdeContainer::default();
    each_key(attrs, "serde", |meta| {
        match key(&meta).as_str() {
            "rename_all" => out.rename_all = Some(rename_rule(&meta)?),
            "rename_all_fields" => out.rename_all_fields = Some(rename_rule(&meta)?),
            "tag" => out.tag = Some(name_value(&meta)?),
            "content" => out.content = Some(name_value(&meta)?),
            "untagged" => out.untagged = true,
            "transparent" => out.transparent = true,
            "default" => {
                out.default = true;
                skip_value(&meta)?;
            }
            _ => skip_value(&meta)?,
        }
        Ok(())
    })?;
    if out.untagged && out.tag.is_some() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "conflicting attributes: `#[serde(untagged)]` and `#[serde(tag = ...)]`",
        ));
    }
    if out.content.is_some() && out.tag.is_none() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "`#[serde(content = ...)]` needs `tag = ...`",
        ));
    }
    Ok(out)
}

/// `#[schema(...)]` of a field or container: statements that change the
/// schema `s` (a `JSONSchemaProps`), and a replacement schema function.
#[derive(Default)]
pub struct SchemaAttrs {
    /// Statements applied to `s`.
    pub edits: Vec<TokenStream>,
    /// `with = path`: a `fn() -> JSONSchemaProps` used instead of the type's.
    pub with: Option<Path>,
    /// `description = "..."`, overriding the doc comment.
    pub description: Option<String>,
    /// `crate = "path"` (containers only).
    pub krate: Option<Path>,
}

fn lit_value(lit: &Lit, krate: &Path) -> syn::Result<TokenStream> {
    let value = match lit {
        Lit::Str(s) => quote!(#s),
        Lit::Int(i) => quote!(#i as i64),
        Lit::Bool(b) => quote!(#b),
        other => {
            return Err(syn::Error::new(
                other.span(),
                "enum values are string, integer or bool literals",
            ));
        }
    };
    Ok(quote!(#krate::schema::value(#value)))
}

/// `key = [lit, lit, ...]`.
fn lit_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Lit>> {
    let input = meta.value()?;
    let content;
    syn::bracketed!(content in input);
    let items = syn::punctuated::Punctuated::<Lit, syn::Token![,]>::parse_terminated(&content)?;
    Ok(items.into_iter().collect())
}

fn str_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<String>> {
    lit_list(meta)?
        .into_iter()
        .map(|l| match l {
            Lit::Str(s) => Ok(s.value()),
            other => Err(syn::Error::new(other.span(), "expected a string literal")),
        })
        .collect()
}

fn number(meta: &ParseNestedMeta<'_>) -> syn::Result<f64> {
    let expr: Expr = meta.value()?.parse()?;
    let (neg, lit) = match &expr {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
        e => (false, e),
    };
    let v = match lit {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>()?,
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>()?,
        other => return Err(syn::Error::new_spanned(other, "expected a number")),
    };
    Ok(if neg { -v } else { v })
}

fn cel(meta: &ParseNestedMeta<'_>, krate: &Path) -> syn::Result<TokenStream> {
    if meta.input.peek(syn::Token![=]) {
        let rule: LitStr = meta.value()?.parse()?;
        return Ok(quote!(#krate::schema::validate(&mut s, #rule, None);));
    }
    let mut rule: Option<LitStr> = None;
    let mut others: Vec<(syn::Ident, LitStr)> = Vec::new();
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        let k = key(&inner);
        match k.as_str() {
            "rule" => rule = Some(lit),
            "message" | "message_expression" | "reason" | "field_path" => {
                others.push((syn::Ident::new(&k, inner.path.span()), lit));
            }
            _ => {
                return Err(inner.error(
                    "expected `rule`, `message`, `message_expression`, `reason` or `field_path`",
                ));
            }
        }
        Ok(())
    })?;
    let rule = rule.ok_or_else(|| meta.error("`validation(...)` needs `rule = \"...\"`"))?;
    if rule.value().trim().is_empty() {
        return Err(syn::Error::new(rule.span(), "an empty CEL rule"));
    }
    let fields = others.iter().map(|(k, v)| quote!(#k: Some(#v.to_owned()),));
    Ok(quote! {
        s.x_kubernetes_validations.get_or_insert_with(Vec::new).push(#krate::schema::ValidationRule {
            rule: #rule.to_owned(),
            #(#fields)*
            ..::core::default::Default::default()
        });
    })
}

/// Reads `#[schema(...)]`.
pub fn schema_attrs(attrs: &[Attribute], krate: &Path) -> syn::Result<SchemaAttrs> {
    let mut out = SchemaAttrs::default();
    let mut int_or_string: Option<proc_macro2::Span> = None;
    let mut typed_edit = false;
    each_key(attrs, "schema", |meta| {
        let k = key(&meta);
        let edit = match k.as_str() {
            "crate" => {
                let lit: LitStr = meta.value()?.parse()?;
                out.krate = Some(lit.parse()?);
                return Ok(());
            }
            "with" => {
                let lit: LitStr = meta.value()?.parse()?;
                out.with = Some(lit.parse()?);
                return Ok(());
            }
            "description" => {
                let lit: LitStr = meta.value()?.parse()?;
                out.description = Some(lit.value());
                return Ok(());
            }
            "pattern" | "format" | "list_type" | "map_type" => {
                let lit: LitStr = meta.value()?.parse()?;
                typed_edit |= k == "pattern" || k == "format";
                let field = syn::Ident::new(
                    match k.as_str() {
                        "pattern" => "pattern",
                        "format" => "format",
                        "list_type" => "x_kubernetes_list_type",
                        _ => "x_kubernetes_map_type",
                    },
                    meta.path.span(),
                );
                quote!(s.#field = Some(#lit.to_owned());)
            }
            "min_length" | "max_length" | "min_items" | "max_items" | "min_properties"
            | "max_properties" => {
                let lit: syn::LitInt = meta.value()?.parse()?;
                let n = lit.base10_parse::<i64>()?;
                let field = syn::Ident::new(&k, meta.path.span());
                quote!(s.#field = Some(#n);)
            }
            "minimum" | "maximum" | "multiple_of" => {
                let n = number(&meta)?;
                typed_edit = true;
                let field = syn::Ident::new(&k, meta.path.span());
                quote!(s.#field = Some(#n);)
            }
            "unique_items" => {
                return Err(meta.error(
                        "the API server forbids `uniqueItems` (quadratic cost): use `list_type = \"set\"`",
                    ));
            }
            "exclusive_minimum" | "exclusive_maximum" | "nullable" => {
                let field = syn::Ident::new(&k, meta.path.span());
                quote!(s.#field = Some(true);)
            }
            "preserve_unknown_fields" => {
                quote!(s.x_kubernetes_preserve_unknown_fields = Some(true);)
            }
            "embedded_resource" => quote!(s.x_kubernetes_embedded_resource = Some(true);),
            "int_or_string" => {
                int_or_string = Some(meta.path.span());
                quote!(s = #krate::schema::int_or_string();)
            }
            "map_keys" => {
                let keys = str_list(&meta)?;
                quote!(s.x_kubernetes_list_map_keys = Some(vec![#(#keys.to_owned()),*]);)
            }
            "enum" => {
                let values = lit_list(&meta)?
                    .iter()
                    .map(|l| lit_value(l, krate))
                    .collect::<syn::Result<Vec<_>>>()?;
                quote!(s.enum_ = Some(vec![#(#values),*]);)
            }
            "validation" => cel(&meta, krate)?,
            _ => {
                return Err(meta.error(
                        "unknown key: expected one of `pattern`, `format`, `min_length`, `max_length`, \
                         `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`, `multiple_of`, \
                         `min_items`, `max_items`, `min_properties`, `max_properties`, \
                         `enum`, `validation`, `list_type`, `map_keys`, `map_type`, `nullable`, \
                         `int_or_string`, `preserve_unknown_fields`, `embedded_resource`, `with`, \
                         `description`, `crate`",
                    ));
            }
        };
        out.edits.push(edit);
        Ok(())
    })?;
    if let Some(span) = int_or_string.filter(|_| typed_edit || out.with.is_some()) {
        return Err(syn::Error::new(
            span,
            "conflicting attributes: `int_or_string` replaces the schema; \
             `with`, `pattern`, `format` and `minimum`/`maximum` do not apply to it",
        ));
    }
    Ok(out)
}

/// The `crate = "path"` of a container's `#[schema(...)]` (default
/// `::kubeset`), read before the other keys, whose code names it.
pub fn schema_crate(attrs: &[Attribute]) -> syn::Result<Path> {
    let mut krate = None;
    each_key(attrs, "schema", |meta| {
        if meta.path.is_ident("crate") {
            let lit: LitStr = meta.value()?.parse()?;
            krate = Some(lit.parse()?);
            Ok(())
        } else {
            skip_value(&meta)
        }
    })?;
    Ok(krate.unwrap_or_else(|| syn::parse_quote!(::kubeset)))
}

#[cfg(test)]
mod tests {
    use super::RenameRule::*;

    #[test]
    fn serde_rename_rules() {
        let fields = [
            (Lower, "max_count"),
            (Upper, "MAX_COUNT"),
            (Pascal, "MaxCount"),
            (Camel, "maxCount"),
            (Snake, "max_count"),
            (ScreamingSnake, "MAX_COUNT"),
            (Kebab, "max-count"),
            (ScreamingKebab, "MAX-COUNT"),
        ];
        for (rule, want) in fields {
            assert_eq!(rule.field("max_count"), want, "{rule:?}");
        }
        let variants = [
            (Lower, "deepblue"),
            (Upper, "DEEPBLUE"),
            (Pascal, "DeepBlue"),
            (Camel, "deepBlue"),
            (Snake, "deep_blue"),
            (ScreamingSnake, "DEEP_BLUE"),
            (Kebab, "deep-blue"),
            (ScreamingKebab, "DEEP-BLUE"),
        ];
        for (rule, want) in variants {
            assert_eq!(rule.variant("DeepBlue"), want, "{rule:?}");
        }
    }
}
