//! The logic of `#[derive(CustomResource)]`: from `struct FooSpec` and
//! `#[kube(...)]` (kube-rs's attribute set), the root type `Foo { metadata,
//! spec, status }` with `Resource`, `JsonSchema` and `CustomResourceExt`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::meta::ParseNestedMeta;
use syn::{Data, DeriveInput, Ident, LitBool, LitStr, Path};

use crate::json::{Scalar, flat_object};
use crate::plural::plural;

/// A printer column as the CRD holds it.
#[derive(Default)]
struct Column {
    name: String,
    type_: String,
    json_path: String,
    description: Option<String>,
    format: Option<String>,
    priority: Option<i32>,
}

/// `scale` subresource paths.
#[derive(Default)]
struct Scale {
    spec: String,
    status: String,
    selector: Option<String>,
}

/// Parsed `#[kube(...)]`.
#[derive(Default)]
struct Attrs {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
    plural: Option<String>,
    singular: Option<String>,
    namespaced: bool,
    root: Option<String>,
    status: Option<Path>,
    derives: Vec<Path>,
    /// `attr = "…"`: attributes put on the root struct as written.
    attrs: Vec<syn::Meta>,
    short_names: Vec<String>,
    categories: Vec<String>,
    selectable: Vec<String>,
    columns: Vec<Column>,
    scale: Option<Scale>,
    krate: Option<Path>,
    serde: Option<Path>,
    schema: Option<String>,
    doc: Option<String>,
    labels: Vec<(String, String)>,
    annotations: Vec<(String, String)>,
    served: Option<bool>,
    storage: Option<bool>,
    deprecated: Option<Option<String>>,
    /// `validation = "CEL"` or `validation = <expression>` (a
    /// `Rule`), in the order written.
    validations: Vec<syn::Expr>,
}

const KEYS: &str = "expected one of `group`, `version`, `kind`, `plural`, `singular`, `namespaced`, \
    `root`, `status`, `derive`, `attr`, `shortname`, `category`, `selectable`, `printcolumn`, `scale`, \
    `crates`, `crate`, `schema`, `doc`, `label`, `annotation`, `served`, `storage`, `deprecated`, \
    `validation`";

/// The attribute key `meta` starts with (`group` of `group = "..."`).
fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

fn str_value(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(lit.value())
}

fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if slot.is_some() {
        let key = key_of(meta);
        return Err(meta.error(format!("duplicate `{key}`")));
    }
    *slot = Some(value);
    Ok(())
}

fn push<T>(list: &mut Vec<T>, item: T) -> syn::Result<()> {
    list.push(item);
    Ok(())
}

/// `validation = "CEL"` or `validation = <expression giving a Rule>`. The
/// derive parses expressions without syn's `full` feature (one syn in a
/// user's build): paths, calls, method calls, literals, struct literals,
/// operators and macros, which `Rule::new(…).message(…)` and a call of the
/// user's own function are.
fn rule_expr(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Expr> {
    let input = meta.value()?;
    input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`validation` takes a CEL string or an expression giving a `Rule` \
             (`Rule::new(\"self.x > 0\").message(\"…\")`); this one does not parse \
             (closures, `if`, `match`, arrays and blocks with statements are not taken here: \
             build the `Rule` in a function and call it)",
        )
    })
}

/// `name("key", "value")`.
fn pair(meta: &ParseNestedMeta<'_>) -> syn::Result<(String, String)> {
    let content;
    syn::parenthesized!(content in meta.input);
    let k: LitStr = content.parse()?;
    content.parse::<syn::Token![,]>()?;
    let v: LitStr = content.parse()?;
    Ok((k.value(), v.value()))
}

/// A JSON attribute's keys (`allowed`), checked at compile time.
fn json_attr(lit: &LitStr, what: &str, allowed: &[&str]) -> syn::Result<Vec<(String, Scalar)>> {
    let err = |msg: String| syn::Error::new(lit.span(), format!("{what}: {msg}"));
    let fields =
        flat_object(&lit.value()).map_err(|e| err(format!("not a flat JSON object: {e}")))?;
    if let Some((k, _)) = fields.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
        return Err(err(format!("unknown key {k:?}")));
    }
    Ok(fields)
}

fn text(fields: &[(String, Scalar)], key: &str) -> Option<String> {
    fields.iter().find_map(|(k, v)| match v {
        Scalar::Str(s) if k == key => Some(s.clone()),
        _ => None,
    })
}

/// kube-rs's JSON form of a printer column.
fn column_json(lit: &LitStr) -> syn::Result<Column> {
    let keys = [
        "name",
        "type",
        "jsonPath",
        "description",
        "format",
        "priority",
    ];
    let fields = json_attr(lit, "printcolumn", &keys)?;
    let need = |k: &str| {
        text(&fields, k)
            .ok_or_else(|| syn::Error::new(lit.span(), format!("printcolumn needs {k:?}")))
    };
    let priority =
        match fields.iter().find(|(k, _)| k == "priority") {
            None => None,
            Some((_, Scalar::Int(p))) => Some(i32::try_from(*p).map_err(|_| {
                syn::Error::new(lit.span(), "printcolumn: `priority` is out of range")
            })?),
            Some(_) => {
                return Err(syn::Error::new(
                    lit.span(),
                    "printcolumn: `priority` must be an integer",
                ));
            }
        };
    Ok(Column {
        name: need("name")?,
        type_: need("type")?,
        json_path: need("jsonPath")?,
        description: text(&fields, "description"),
        format: text(&fields, "format"),
        priority,
    })
}

/// `printcolumn(name = "...", type_ = "...", json_path = "...", ...)`.
fn column_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Column> {
    let mut c = Column::default();
    meta.parse_nested_meta(|inner| {
        match key_of(&inner).as_str() {
            "name" => c.name = str_value(&inner)?,
            "type_" | "r#type" | "type" => c.type_ = str_value(&inner)?,
            "json_path" => c.json_path = str_value(&inner)?,
            "description" => c.description = Some(str_value(&inner)?),
            "format" => c.format = Some(str_value(&inner)?),
            "priority" => {
                let lit: syn::LitInt = inner.value()?.parse()?;
                c.priority = Some(lit.base10_parse()?);
            }
            _ => {
                return Err(inner.error(
                    "expected `name`, `type_`, `json_path`, `description`, `format` or `priority`",
                ));
            }
        }
        Ok(())
    })?;
    if c.name.is_empty() || c.type_.is_empty() || c.json_path.is_empty() {
        return Err(meta.error("printcolumn needs `name`, `type_` and `json_path`"));
    }
    Ok(c)
}

fn scale_json(lit: &LitStr) -> syn::Result<Scale> {
    let keys = [
        "specReplicasPath",
        "statusReplicasPath",
        "labelSelectorPath",
    ];
    let fields = json_attr(lit, "scale", &keys)?;
    let need = |k: &str| {
        text(&fields, k).ok_or_else(|| syn::Error::new(lit.span(), format!("scale needs {k:?}")))
    };
    Ok(Scale {
        spec: need("specReplicasPath")?,
        status: need("statusReplicasPath")?,
        selector: text(&fields, "labelSelectorPath"),
    })
}

fn scale_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Scale> {
    let mut s = Scale::default();
    meta.parse_nested_meta(|inner| {
        let v = str_value(&inner)?;
        match key_of(&inner).as_str() {
            "spec_replicas_path" => s.spec = v,
            "status_replicas_path" => s.status = v,
            "label_selector_path" => s.selector = Some(v),
            _ => return Err(inner.error(
                "expected `spec_replicas_path`, `status_replicas_path` or `label_selector_path`",
            )),
        }
        Ok(())
    })?;
    if s.spec.is_empty() || s.status.is_empty() {
        return Err(meta.error("scale needs `spec_replicas_path` and `status_replicas_path`"));
    }
    Ok(s)
}

fn crates(meta: &ParseNestedMeta<'_>, a: &mut Attrs) -> syn::Result<()> {
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        let path: Path = lit.parse()?;
        match key_of(&inner).as_str() {
            // kube-rs's names for the crates kubeset is.
            "kubeset" | "kube_core" | "k8s_openapi" => a.krate = Some(path),
            "serde" => a.serde = Some(path),
            "serde_json" | "std" => {}
            // schemars' `JsonSchema` is read through `schema::bridge`
            // (the facade's `derive`); its path is not needed.
            "schemars" => {}
            _ => return Err(inner.error(
                "expected `kubeset`, `kube_core`, `k8s_openapi`, `serde`, `serde_json` or `std`",
            )),
        }
        Ok(())
    })
}

fn one(meta: &ParseNestedMeta<'_>, a: &mut Attrs) -> syn::Result<()> {
    let key = key_of(meta);
    match key.as_str() {
        "group" => set(&mut a.group, str_value(meta)?, meta),
        "version" => set(&mut a.version, str_value(meta)?, meta),
        "kind" => set(&mut a.kind, str_value(meta)?, meta),
        "plural" => set(&mut a.plural, str_value(meta)?, meta),
        "singular" => set(&mut a.singular, str_value(meta)?, meta),
        "root" => set(&mut a.root, str_value(meta)?, meta),
        "doc" => set(&mut a.doc, str_value(meta)?, meta),
        "schema" => {
            let v = str_value(meta)?;
            if !["derived", "manual", "disabled"].contains(&v.as_str()) {
                return Err(meta.error("`schema` is \"derived\", \"manual\" or \"disabled\""));
            }
            set(&mut a.schema, v, meta)
        }
        "status" => {
            let lit: LitStr = meta.value()?.parse()?;
            set(&mut a.status, lit.parse()?, meta)
        }
        "namespaced" => {
            if a.namespaced {
                return Err(meta.error("duplicate `namespaced`"));
            }
            a.namespaced = true;
            Ok(())
        }
        "derive" => {
            let lit: LitStr = meta.value()?.parse()?;
            a.derives.push(lit.parse()?);
            Ok(())
        }
        "attr" => {
            let lit: LitStr = meta.value()?.parse()?;
            a.attrs.push(lit.parse()?);
            Ok(())
        }
        "shortname" => push(&mut a.short_names, str_value(meta)?),
        "category" => push(&mut a.categories, str_value(meta)?),
        "selectable" => push(&mut a.selectable, str_value(meta)?),
        "validation" => push(&mut a.validations, rule_expr(meta)?),
        "label" => push(&mut a.labels, pair(meta)?),
        "annotation" => push(&mut a.annotations, pair(meta)?),
        "printcolumn" => {
            let c = if meta.input.peek(syn::Token![=]) {
                column_json(&meta.value()?.parse()?)?
            } else {
                column_list(meta)?
            };
            a.columns.push(c);
            Ok(())
        }
        "scale" => {
            let s = if meta.input.peek(syn::Token![=]) {
                scale_json(&meta.value()?.parse()?)?
            } else {
                scale_list(meta)?
            };
            set(&mut a.scale, s, meta)
        }
        "crates" => crates(meta, a),
        "crate" => {
            let lit: LitStr = meta.value()?.parse()?;
            set(&mut a.krate, lit.parse()?, meta)
        }
        "served" | "storage" => {
            let v = if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<LitBool>()?.value
            } else {
                true
            };
            let slot = if key == "served" {
                &mut a.served
            } else {
                &mut a.storage
            };
            set(slot, v, meta)
        }
        "deprecated" => {
            let warning = if meta.input.peek(syn::Token![=]) {
                Some(str_value(meta)?)
            } else {
                None
            };
            set(&mut a.deprecated, warning, meta)
        }
        _ => Err(meta.error(format!("unknown key `{key}`: {KEYS}"))),
    }
}

fn parse(input: &DeriveInput) -> syn::Result<Attrs> {
    let mut a = Attrs::default();
    for attr in input.attrs.iter().filter(|at| at.path().is_ident("kube")) {
        attr.parse_nested_meta(|meta| one(&meta, &mut a))?;
    }
    if let Some(schema) = a.schema.as_deref().filter(|s| *s != "derived")
        && !a.validations.is_empty()
    {
        return Err(syn::Error::new(
            input.ident.span(),
            format!(
                "conflicting attributes: `#[kube(validation)]` goes into the derived schema; \
                 with `schema = \"{schema}\"` it would be dropped (put the rule in your own schema)"
            ),
        ));
    }
    Ok(a)
}

fn lowercase_name(value: &str, what: &str, span: Span) -> syn::Result<()> {
    let ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            format!("`{what}` must be a lowercase DNS label, got {value:?}"),
        ))
    }
}

/// Expands `#[derive(CustomResource)]`.
pub fn derive(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let span = input.ident.span();
    if !matches!(input.data, Data::Struct(_)) {
        return Err(syn::Error::new(
            span,
            "#[derive(CustomResource)] goes on the spec struct (`struct FooSpec`)",
        ));
    }
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            span,
            "unsupported: a generic spec struct (the CRD has one schema)",
        ));
    }
    let a = parse(&input)?;
    let need = |v: &Option<String>, key: &str| {
        v.clone()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| syn::Error::new(span, format!("#[kube] needs `{key} = \"...\"`")))
    };
    let group = need(&a.group, "group")?;
    let version = need(&a.version, "version")?;
    let kind = need(&a.kind, "kind")?;
    if !group.contains('.') {
        return Err(syn::Error::new(
            span,
            format!("a custom resource's group is a domain with a dot, got {group:?}"),
        ));
    }
    let plural = a.plural.clone().unwrap_or_else(|| plural(&kind));
    let singular = a
        .singular
        .clone()
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    lowercase_name(&plural, "plural", span)?;
    lowercase_name(&singular, "singular", span)?;
    lowercase_name(&version, "version", span)?;
    Ok(expand(
        &input,
        &a,
        &Names {
            group,
            version,
            kind,
            plural,
            singular,
        },
    ))
}

struct Names {
    group: String,
    version: String,
    kind: String,
    plural: String,
    singular: String,
}

/// What the parts of the expansion share: the paths, the spec and root
/// types and the root's doc.
struct Ctx<'a> {
    /// The facade crate (`::kubeset` unless `crate`/`crates` says).
    krate: Path,
    /// The serde crate.
    serde: Path,
    /// `krate::schema`.
    sch: TokenStream,
    /// The spec struct (the derive's input).
    spec: &'a Ident,
    /// The generated root type.
    root: Ident,
    /// The root's doc, also the schema's description.
    doc: String,
}

fn expand(input: &DeriveInput, a: &Attrs, n: &Names) -> TokenStream {
    let krate = a
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::kubeset));
    let spec = &input.ident;
    let c = Ctx {
        sch: quote!(#krate::schema),
        serde: a
            .serde
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::serde)),
        krate,
        spec,
        root: format_ident!("{}", a.root.clone().unwrap_or_else(|| n.kind.clone())),
        doc: a.doc.clone().unwrap_or_else(|| {
            format!("Auto-generated derived type for {spec} via `CustomResource`")
        }),
    };
    let apply_type = apply_type(&c, a, n, &input.vis);
    let root_type = root_type(&c, a, &input.vis);
    let serialize_impl = serialize_impl(&c.serde, &c.root, n, a.status.is_some());
    let resource_impl = resource_impl(&c, a, n);
    let spec_impls = spec_and_status_impls(&c, a.status.as_ref());
    let schema_impl = schema_impl(&c, a);
    let crd_impl = crd_impl(&c, a, n);
    quote! {
        #apply_type

        #root_type

        #serialize_impl

        #resource_impl

        #spec_impls

        #schema_impl

        #crd_impl
    }
}

/// `FooApply`, the apply configuration (`apply_config`).
fn apply_type(c: &Ctx<'_>, a: &Attrs, n: &Names, vis: &syn::Visibility) -> TokenStream {
    crate::apply_config::apply_type(&crate::apply_config::ApplyFacts {
        krate: &c.krate,
        serde: &c.serde,
        root: &c.root,
        vis,
        api_version: format!("{}/{}", n.group, n.version),
        kind: &n.kind,
        namespaced: a.namespaced,
        has_status: a.status.is_some(),
    })
}

/// `struct Foo { metadata, spec, status }` and `Foo::new(name, spec)`.
fn root_type(c: &Ctx<'_>, a: &Attrs, vis: &syn::Visibility) -> TokenStream {
    let Ctx {
        krate,
        serde,
        spec,
        root,
        doc,
        ..
    } = c;
    let serde_str = quote!(#serde).to_string().replace(' ', "");
    let meta = quote!(#krate::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    let derives = &a.derives;
    let attrs = &a.attrs;
    let (status_field, status_init) = match &a.status {
        Some(status) => (
            quote! {
                /// The observed state.
                #[serde(default)]
                pub status: Option<#status>,
            },
            quote!(status: None,),
        ),
        None => (quote!(), quote!()),
    };
    quote! {
        #[doc = #doc]
        #[derive(#serde::Deserialize, ::core::clone::Clone, ::core::fmt::Debug, #(#derives),*)]
        #[serde(crate = #serde_str)]
        #(#[#attrs])*
        #vis struct #root {
            /// Standard object metadata.
            #[serde(default)]
            pub metadata: #meta,
            /// The desired state.
            pub spec: #spec,
            #status_field
        }

        impl #root {
            /// A new object named `name` with `spec`.
            pub fn new(name: &str, spec: #spec) -> Self {
                Self {
                    metadata: #meta {
                        name: Some(name.to_owned()),
                        ..::core::default::Default::default()
                    },
                    spec,
                    #status_init
                }
            }
        }
    }
}

/// `Resource`, written by `#[derive(Resource)]`'s rule.
fn resource_impl(c: &Ctx<'_>, a: &Attrs, n: &Names) -> TokenStream {
    crate::resource::resource_impl(
        &c.krate,
        &c.root,
        &syn::Generics::default(),
        &crate::resource::Facts {
            group: &n.group,
            version: &n.version,
            kind: &n.kind,
            plural: &n.plural,
            namespaced: a.namespaced,
        },
        Span::call_site(),
    )
}

/// `HasSpec`, and `HasStatus` when the root has a status.
fn spec_and_status_impls(c: &Ctx<'_>, status: Option<&Path>) -> TokenStream {
    let Ctx {
        krate, spec, root, ..
    } = c;
    let has_status = match status {
        Some(status) => quote! {
            impl #krate::HasStatus for #root {
                type Status = #status;
                fn status(&self) -> ::core::option::Option<&#status> {
                    self.status.as_ref()
                }
                fn status_mut(&mut self) -> &mut ::core::option::Option<#status> {
                    &mut self.status
                }
            }
        },
        None => quote!(),
    };
    quote! {
        impl #krate::HasSpec for #root {
            type Spec = #spec;
            fn spec(&self) -> &#spec {
                &self.spec
            }
            fn spec_mut(&mut self) -> &mut #spec {
                &mut self.spec
            }
        }

        #has_status
    }
}

/// The root's `JsonSchema`: none (`manual`), any object (`disabled`), or
/// the object with the spec's (and status') schema and the validations.
fn schema_impl(c: &Ctx<'_>, a: &Attrs) -> TokenStream {
    let Ctx {
        sch,
        spec,
        root,
        doc,
        ..
    } = c;
    let status_prop = match &a.status {
        Some(status) => {
            quote!(.property("status", #sch::nullable((&&#sch::bridge::Probe::<#status>::NEW).schema_props()), false))
        }
        None => quote!(),
    };
    let validations = a.validations.iter().map(|v| validation(sch, v));
    // The rule types in scope of the expressions, as kube-rs's derive
    // brings them (kube 5's users write `Rule::new(…)` with no `use`).
    let rule_types = a
        .validations
        .iter()
        .any(|v| !is_str(v))
        .then(|| quote!(#[allow(unused_imports)] use #sch::{Message, Reason, Rule};));
    match a.schema.as_deref() {
        Some("manual") => quote!(),
        Some("disabled") => quote! {
            impl #sch::JsonSchema for #root {
                fn json_schema() -> #sch::JSONSchemaProps {
                    #sch::JSONSchemaProps {
                        x_kubernetes_preserve_unknown_fields: Some(true),
                        ..#sch::typed("object")
                    }
                }
            }
        },
        _ => quote! {
            impl #sch::JsonSchema for #root {
                fn json_schema() -> #sch::JSONSchemaProps {
                    // kubeset's `JsonSchema` or, with the facade's
                    // `derive`, schemars' (see `schema::bridge`).
                    #[allow(unused_imports)]
                    use #sch::bridge::{ViaKubeset as _, ViaSchemars as _, ViaSchemars08 as _};
                    let mut s = #sch::ObjectSchema::new()
                        .property("apiVersion", #sch::typed("string"), false)
                        .property("kind", #sch::typed("string"), false)
                        .property("metadata", #sch::typed("object"), false)
                        .property("spec", (&&#sch::bridge::Probe::<#spec>::NEW).schema_props(), true)
                        #status_prop
                        .build();
                    #sch::describe(&mut s, #doc);
                    #rule_types
                    #(#validations)*
                    s
                }
            }
        },
    }
}

/// Adds one `validation = …` to the root's schema `s`: a string literal
/// as the rule alone, any other expression converted into a `Rule` (a type
/// error points at the expression).
fn validation(sch: &TokenStream, v: &syn::Expr) -> TokenStream {
    if is_str(v) {
        return quote!(#sch::validate(&mut s, #v, None););
    }
    // `validate_rule` takes `impl Into<Rule>`: a wrong type is reported at
    // the argument, the expression as written.
    quote!(#sch::validate_rule(&mut s, #v);)
}

fn is_str(v: &syn::Expr) -> bool {
    matches!(
        v,
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        })
    )
}

/// `CustomResourceExt`: the CRD (from `crd_parts`), its name, the
/// `ApiResource` and the short names.
fn crd_impl(c: &Ctx<'_>, a: &Attrs, n: &Names) -> TokenStream {
    let Ctx { krate, root, .. } = c;
    let Names {
        group,
        version,
        kind,
        plural,
        ..
    } = n;
    let crd_name = format!("{plural}.{group}");
    let crd_parts = crd_parts(a, n, krate, root);
    let short_names = &a.short_names;
    let namespaced = a.namespaced;
    // `Api::get_scale`/`patch_scale`/`replace_scale`, as kube-rs has them.
    let scale_impl = a
        .scale
        .as_ref()
        .map(|_| quote!(impl #krate::ScaleSubresource for #root {}));
    quote! {
        #scale_impl

        impl #krate::crd::CustomResourceExt for #root {
            fn crd() -> #krate::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                #crd_parts.into_crd()
            }
            fn crd_name() -> &'static str {
                #crd_name
            }
            fn api_resource() -> #krate::dynamic::ApiResource {
                #krate::dynamic::ApiResource {
                    group: #group.to_owned(),
                    version: #version.to_owned(),
                    kind: #kind.to_owned(),
                    plural: #plural.to_owned(),
                    namespaced: #namespaced,
                }
            }
            fn shortnames() -> &'static [&'static str] {
                &[#(#short_names),*]
            }
        }
    }
}

/// `Serialize` writing `apiVersion` and `kind` first, as the generated
/// models and kube-rs's root types do (so `serde_json::to_string(&obj)` is a
/// complete object for `kubectl apply`); `status` only when set.
fn serialize_impl(serde: &Path, root: &Ident, n: &Names, has_status: bool) -> TokenStream {
    let api_version = format!("{}/{}", n.group, n.version);
    let kind = &n.kind;
    let name = root.to_string();
    let (count, status) = if has_status {
        (
            quote!(4 + usize::from(self.status.is_some())),
            quote! {
                match &self.status {
                    Some(status) => s.serialize_field("status", status)?,
                    None => s.skip_field("status")?,
                }
            },
        )
    } else {
        (quote!(4), quote!())
    };
    quote! {
        impl #serde::Serialize for #root {
            fn serialize<S: #serde::Serializer>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error> {
                use #serde::ser::SerializeStruct as _;
                let mut s = serializer.serialize_struct(#name, #count)?;
                s.serialize_field("apiVersion", #api_version)?;
                s.serialize_field("kind", #kind)?;
                s.serialize_field("metadata", &self.metadata)?;
                s.serialize_field("spec", &self.spec)?;
                #status
                s.end()
            }
        }
    }
}

fn opt(v: Option<&str>) -> TokenStream {
    match v {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    }
}

fn crd_parts(a: &Attrs, n: &Names, krate: &Path, root: &Ident) -> TokenStream {
    let Names {
        group,
        version,
        kind,
        plural,
        singular,
    } = n;
    let v1 = quote!(#krate::apiextensions_apiserver::pkg::apis::apiextensions::v1);
    let columns = a.columns.iter().map(|c| {
        let (name, ty, path) = (&c.name, &c.type_, &c.json_path);
        let own = |v: &Option<String>| match v {
            Some(v) => quote!(Some(#v.to_owned())),
            None => quote!(None),
        };
        let (desc, format) = (own(&c.description), own(&c.format));
        let priority = match c.priority {
            Some(p) => quote!(Some(#p)),
            None => quote!(None),
        };
        quote!(#v1::CustomResourceColumnDefinition {
            name: #name.to_owned(), type_: #ty.to_owned(), json_path: #path.to_owned(),
            description: #desc, format: #format, priority: #priority,
        })
    });
    let scale = match &a.scale {
        Some(s) => {
            let (spec, status, sel) = (&s.spec, &s.status, opt(s.selector.as_deref()));
            quote!(Some(#krate::crd::ScalePaths {
                spec_replicas_path: #spec, status_replicas_path: #status, label_selector_path: #sel,
            }))
        }
        None => quote!(None),
    };
    let (short, cats, sel) = (&a.short_names, &a.categories, &a.selectable);
    let labels = a.labels.iter().map(|(k, v)| quote!((#k, #v)));
    let annotations = a.annotations.iter().map(|(k, v)| quote!((#k, #v)));
    let namespaced = a.namespaced;
    let status = a.status.is_some();
    let served = a.served.unwrap_or(true);
    let storage = a.storage.unwrap_or(true);
    let deprecated = a.deprecated.is_some();
    let warning = opt(a.deprecated.clone().flatten().as_deref());
    quote!(#krate::crd::CrdParts {
        group: #group, version: #version, kind: #kind, plural: #plural, singular: #singular,
        short_names: &[#(#short),*], categories: &[#(#cats),*], namespaced: #namespaced,
        schema: <#root as #krate::schema::JsonSchema>::json_schema(),
        status: #status, scale: #scale,
        printer_columns: vec![#(#columns),*],
        selectable_fields: &[#(#sel),*],
        served: #served, storage: #storage, deprecated: #deprecated, deprecation_warning: #warning,
        labels: &[#(#labels),*], annotations: &[#(#annotations),*],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs that between them take every branch of the expansion: scope,
    /// status, the three schema modes, crate and serde paths, root name,
    /// doc, derives, attrs, validations, columns, scale, labels and version flags.
    fn inputs() -> Vec<(&'static str, TokenStream)> {
        vec![
            (
                "everything",
                quote! {
                    #[kube(group = "example.com", version = "v1", kind = "Gadget", namespaced)]
                    #[kube(status = "GadgetStatus", root = "Widget", derive = "PartialEq", derive = "Default")]
                    #[kube(attr = "allow(deprecated)", attr = "must_use")]
                    #[kube(shortname = "gd", shortname = "gdg", category = "all", selectable = ".spec.size")]
                    #[kube(validation = "self.spec.size > 0", validation = Rule::new("has(self.spec)").message("needs a spec"), validation = "true")]
                    #[kube(printcolumn = r#"{"name":"Size","type":"integer","jsonPath":".spec.size","priority":1}"#)]
                    #[kube(printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp", description = "age", format = "date-time"))]
                    #[kube(scale(spec_replicas_path = ".spec.size", status_replicas_path = ".status.size", label_selector_path = ".status.sel"))]
                    #[kube(label("app", "gadget"), annotation("note", "x"), doc = "A gadget.")]
                    #[kube(served = false, storage, deprecated = "use v2")]
                    #[kube(crates(kubeset = "::k", serde = "::my_serde"))]
                    pub struct GadgetSpec { size: i32 }
                },
            ),
            (
                "minimal",
                quote! {
                    #[kube(group = "example.com", version = "v1alpha1", kind = "Policy")]
                    struct PolicySpec { rule: String }
                },
            ),
            (
                "disabled_schema",
                quote! {
                    #[kube(group = "x.io", version = "v2", kind = "Blob", namespaced, plural = "blobbies", singular = "blobby")]
                    #[kube(status = "BlobStatus", schema = "disabled", crate = "crate", deprecated)]
                    pub(crate) struct BlobSpec { data: String }
                },
            ),
            (
                "manual_schema",
                quote! {
                    #[kube(group = "x.io", version = "v1", kind = "Thing", schema = "manual")]
                    #[kube(scale = r#"{"specReplicasPath":".spec.n","statusReplicasPath":".status.n"}"#)]
                    struct ThingSpec { n: i32 }
                },
            ),
        ]
    }

    /// The expansion of fixed inputs, compared with
    /// `tests/expand/custom_resource.txt`: refactoring the derive must
    /// leave it unchanged token for token.
    #[test]
    fn expansion_matches_golden() {
        crate::golden::check("custom_resource.txt", derive, inputs());
    }
}
