//! Client emitter: the `Clientset` of `kubeset-client` (one accessor per
//! group-version, one per resource) and the typed subresource methods on
//! `Api<Kind>`, generated from the spec's paths; plus the forwarding cargo
//! features of `kubeset-client` and of the facade `kubeset`.
//!
//! Naming rules (also written into the generated module docs):
//! - group-version accessor: the model feature with `-` → `_`
//!   (`core-v1` → `core_v1()`, struct `CoreV1`);
//! - resource accessor: the kind in snake_case with the plural's ending
//!   (`pods`, `network_policies`, `certificate_signing_requests`); namespaced
//!   resources get `<name>(namespace)` and `<name>_all()`, cluster-scoped
//!   ones `<name>()`;
//! - subresource method: `<verb>_<subresource>` with `get`, `replace` (PUT),
//!   `patch`, `create` (POST), except the client-go names in [`RENAMES`].

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::emit::{DEFAULT_FEATURES, FEATURES_BEGIN, FEATURES_END, GENERATED_MARKER};
use crate::error::CodegenError;
use crate::ir::{Ir, OperationResponse, Ty, TypeDef};
use crate::names;

/// The directory of `kubeset-client` the client emitter owns.
pub const CLIENT_DIR: &str = "src/clientset";

/// Subresource methods named as client-go names them:
/// (subresource, HTTP method, Rust method).
pub const RENAMES: &[(&str, &str, &str)] = &[
    ("log", "get", "logs"),
    ("eviction", "post", "evict"),
    ("binding", "post", "bind"),
    ("finalize", "put", "finalize"),
];

/// Subresource names made of several words (the spec writes them in one).
const SUBRESOURCE_WORDS: &[(&str, &str)] = &[("ephemeralcontainers", "ephemeral_containers")];

/// Query parameters covered by `PostParams`/`PatchParams` or never sent.
const COMMON_QUERY: &[&str] = &[
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "force",
    "pretty",
];

/// The generated client content.
#[derive(Debug, Clone, Default)]
pub struct ClientOutput {
    /// Files by path relative to the `kubeset-client` crate directory.
    pub files: BTreeMap<String, String>,
    /// The features block of `kubeset-client/Cargo.toml` (inside `[features]`).
    pub client_features: String,
    /// The features block of `kubeset/Cargo.toml` (inside `[features]`).
    pub facade_features: String,
}

fn ident(name: &str) -> Ident {
    syn::parse_str::<Ident>(name).unwrap_or_else(|_| Ident::new_raw(name, Span::call_site()))
}

fn format(file: &str, tokens: TokenStream, source: &str) -> Result<String, CodegenError> {
    let parsed: syn::File = syn::parse2(tokens).map_err(|source| CodegenError::InvalidOutput {
        file: file.to_owned(),
        source,
    })?;
    Ok(format!(
        "{GENERATED_MARKER}\n// Source: {source}.\n\n{}",
        prettyplease::unparse(&parsed)
    ))
}

/// `core-v1` → `CoreV1`.
fn camel(feature: &str) -> String {
    feature
        .split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The accessor name of a resource: the kind's snake_case words with the
/// plural's ending (`NetworkPolicy`/`networkpolicies` → `network_policies`).
pub fn resource_method(kind: &str, plural: &str) -> String {
    let snake = names::snake_case(kind);
    let words: Vec<&str> = snake.split('_').collect();
    let (last, head) = match words.split_last() {
        Some(x) => x,
        None => return names::field_name(plural),
    };
    let prefix: String = head.concat();
    let name = match plural.strip_prefix(&prefix) {
        Some(tail) if tail.starts_with(&last[..1.min(last.len())]) => {
            let mut parts: Vec<&str> = head.to_vec();
            parts.push(tail);
            parts.join("_")
        }
        _ => plural.to_owned(),
    };
    names::field_name(&name)
}

/// The method name of a subresource operation.
pub fn subresource_method(sub: &str, method: &str) -> String {
    if let Some((_, _, name)) = RENAMES.iter().find(|(s, m, _)| *s == sub && *m == method) {
        return (*name).to_owned();
    }
    let verb = match method {
        "get" => "get",
        "put" => "replace",
        "patch" => "patch",
        "post" => "create",
        other => other,
    };
    let words = SUBRESOURCE_WORDS
        .iter()
        .find(|(s, _)| *s == sub)
        .map(|(_, w)| (*w).to_owned())
        .unwrap_or_else(|| names::field_name(sub));
    format!("{verb}_{words}")
}

fn sentence(text: Option<&str>, fallback: &str) -> String {
    let text = text
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(fallback);
    let mut c = text.chars();
    let mut s = match c.next() {
        Some(f) => f.to_uppercase().to_string() + c.as_str(),
        None => String::new(),
    };
    if !s.ends_with('.') {
        s.push('.');
    }
    s
}

/// The first sentence of a description.
fn first_sentence(text: Option<&str>) -> Option<String> {
    let text = text?.trim();
    let end = [text.find(". "), text.find(".\n")]
        .into_iter()
        .flatten()
        .min()
        .map(|i| i + 1)
        .unwrap_or(text.len());
    Some(text[..end].to_owned())
}

fn type_tokens(t: &TypeDef) -> TokenStream {
    let mut path = quote!(kubeset_api);
    for m in &t.modules {
        let m = ident(m);
        path = quote!(#path::#m);
    }
    let name = ident(&t.name);
    quote!(#path::#name)
}

fn api_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// A resource the clientset serves, with the model type it uses.
struct Served<'a> {
    method: String,
    plural: &'a str,
    namespaced: bool,
    group: &'a str,
    version: &'a str,
    ty: &'a TypeDef,
}

/// Why an operation is not generated.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Skipped {
    route: String,
    why: &'static str,
    methods: String,
}

struct GroupVersion<'a> {
    groups: BTreeSet<String>,
    served: Vec<Served<'a>>,
    methods: Vec<TokenStream>,
    params: Vec<TokenStream>,
    /// Other group-version features the subresource methods' types need.
    needs: BTreeSet<String>,
}

/// Emits the clientset files and the two features blocks.
pub fn emit(ir: &Ir, spec_label: &str) -> Result<ClientOutput, CodegenError> {
    // (group, version, kind) → the model type served as a resource.
    let mut kinds: BTreeMap<(&str, &str, &str), &TypeDef> = BTreeMap::new();
    for t in ir.types.values() {
        if let (Some(gvk), Some(_), Some(_)) = (&t.gvk, &t.resource, &t.feature) {
            kinds.insert((&gvk.group, &gvk.version, &gvk.kind), t);
        }
    }
    let mut gvs: BTreeMap<String, GroupVersion<'_>> = BTreeMap::new();
    let mut parent_of: BTreeMap<(&str, &str, &str), &TypeDef> = BTreeMap::new();
    for r in &ir.resources {
        let Some(t) = kinds.get(&(r.group.as_str(), r.version.as_str(), r.kind.as_str())) else {
            continue;
        };
        if t.resource.as_ref().map(|rr| rr.plural.as_str()) != Some(r.plural.as_str()) {
            continue;
        }
        let Some(feature) = &t.feature else { continue };
        parent_of.insert((&r.group, &r.version, &r.plural), t);
        let gv = gvs.entry(feature.clone()).or_insert_with(|| GroupVersion {
            groups: BTreeSet::new(),
            served: Vec::new(),
            methods: Vec::new(),
            params: Vec::new(),
            needs: BTreeSet::new(),
        });
        gv.groups.insert(if r.group.is_empty() {
            format!("core/{}", r.version)
        } else {
            format!("{}/{}", r.group, r.version)
        });
        gv.served.push(Served {
            method: resource_method(&r.kind, &r.plural),
            plural: &r.plural,
            namespaced: r.namespaced,
            group: &r.group,
            version: &r.version,
            ty: t,
        });
    }
    let mut skipped: Vec<Skipped> = Vec::new();
    for op in &ir.subresource_operations {
        let route = format!(
            "{}{}/{}/{{name}}/{}",
            api_prefix(&op.group, &op.version),
            if op.namespaced {
                "/namespaces/{namespace}"
            } else {
                ""
            },
            op.plural,
            op.subresource
        );
        let skip = |why| Skipped {
            route: route.clone(),
            why,
            methods: op.method.to_uppercase(),
        };
        let route = format!("{} {route}", op.method.to_uppercase());
        let Some(parent) =
            parent_of.get(&(op.group.as_str(), op.version.as_str(), op.plural.as_str()))
        else {
            skipped.push(skip("the parent resource has no model type"));
            continue;
        };
        if op.action == "connect" {
            skipped.push(skip(
                "connect: needs a protocol upgrade (SPDY/WebSocket) or proxies arbitrary traffic",
            ));
            continue;
        }
        if op.subresource == "status" {
            // Served for every kind by Api::get_status/replace_status/patch_status.
            continue;
        }
        if !matches!(op.method.as_str(), "get" | "put" | "post" | "patch") {
            skipped.push(skip("no typed method for this HTTP method"));
            continue;
        }
        let response_ty = match &op.response {
            OperationResponse::Definition(d) => match ir.types.get(d) {
                Some(t) => Some(t),
                None => {
                    skipped.push(skip("the response type is not in the spec"));
                    continue;
                }
            },
            OperationResponse::Text => None,
            OperationResponse::Untyped => {
                skipped.push(skip("the spec names no response type"));
                continue;
            }
        };
        let request_ty = match (&op.request, op.method.as_str()) {
            (_, "get" | "patch") => None,
            (Some(d), _) => match ir.types.get(d) {
                Some(t) => Some(t),
                None => {
                    skipped.push(skip("the request type is not in the spec"));
                    continue;
                }
            },
            (None, _) => {
                skipped.push(skip("the spec names no request body"));
                continue;
            }
        };
        let Some(feature) = &parent.feature else {
            continue;
        };
        let mut features = BTreeSet::new();
        for t in [request_ty, response_ty].into_iter().flatten() {
            if let Some(f) = t.feature.as_ref().filter(|f| *f != feature) {
                features.insert(f.clone());
            }
        }
        let name = subresource_method(&op.subresource, &op.method);
        let extra: Vec<_> = op
            .query
            .iter()
            .filter(|q| !COMMON_QUERY.contains(&q.name.as_str()))
            .collect();
        let description = sentence(op.description.as_deref(), &format!("{name}."));
        let doc = format!(" {description}\n\n `{route}`");
        let method_ident = ident(&name);
        let resp = response_ty
            .map(type_tokens)
            .unwrap_or_else(|| quote!(String));
        let sub = op.subresource.as_str();
        let gv = gvs
            .get_mut(feature)
            .ok_or_else(|| CodegenError::InvalidOutput {
                file: format!("{CLIENT_DIR}/{feature}"),
                source: syn::Error::new(Span::call_site(), "group-version without resources"),
            })?;
        // The group-version's feature turns on the features its methods'
        // types need (`core-v1` → `policy-v1` for `evict`), so no method is
        // missing for lack of a feature.
        gv.needs.extend(features);
        let cfg = quote!();
        let method = match op.method.as_str() {
            "get" => {
                let params_ty = if extra.is_empty() {
                    None
                } else {
                    let struct_name =
                        format_ident!("{}{}Params", parent.name, camel(&op.subresource));
                    let fields = extra.iter().map(|q| {
                        let f = ident(&names::field_name(&q.name));
                        let ty = match q.ty {
                            Ty::Bool => quote!(bool),
                            Ty::I64 => quote!(i64),
                            _ => quote!(String),
                        };
                        let doc =
                            format!(" `{}`: {}", q.name, q.description.as_deref().unwrap_or(""));
                        quote! { #[doc = #doc] pub #f: Option<#ty>, }
                    });
                    let setters = extra.iter().map(|q| {
                        let f = ident(&names::field_name(&q.name));
                        let doc = format!(" Sets `{}`.", q.name);
                        match q.ty {
                            Ty::Bool => quote! { #[doc = #doc] pub fn #f(mut self, value: bool) -> Self { self.#f = Some(value); self } },
                            Ty::I64 => quote! { #[doc = #doc] pub fn #f(mut self, value: i64) -> Self { self.#f = Some(value); self } },
                            _ => quote! { #[doc = #doc] pub fn #f(mut self, value: impl Into<String>) -> Self { self.#f = Some(value.into()); self } },
                        }
                    });
                    let pushes = extra.iter().map(|q| {
                        let f = ident(&names::field_name(&q.name));
                        let wire = &q.name;
                        quote! { if let Some(v) = &self.#f { out.push((#wire, v.to_string())); } }
                    });
                    let struct_doc =
                        format!(" Query parameters of [`Api::{name}`](crate::Api) (`{route}`).");
                    gv.params.push(quote! {
                        #[doc = #struct_doc]
                        #cfg
                        #[derive(Debug, Clone, Default, PartialEq, Eq)]
                        #[must_use]
                        pub struct #struct_name { #(#fields)* }
                        #cfg
                        impl #struct_name { #(#setters)* }
                        #cfg
                        impl crate::params::QueryParams for #struct_name {
                            fn query_pairs(&self, out: &mut Vec<(&'static str, String)>) {
                                #(#pushes)*
                            }
                        }
                    });
                    Some(struct_name)
                };
                match (&params_ty, response_ty) {
                    (Some(p), None) => {
                        let stream_ident = format_ident!("{}_stream", names::field_name(sub));
                        let stream_doc = format!(
                            " {description} As a byte stream, chunks as they arrive (for `follow`).\n\n `{route}`"
                        );
                        quote! {
                            pub async fn #method_ident(&self, name: &str, params: &#p) -> Result<String, crate::Error> {
                                self.get_subresource_text(#sub, name, params).await
                            }
                            #[doc = #stream_doc]
                            pub async fn #stream_ident(
                                &self,
                                name: &str,
                                params: &#p,
                            ) -> Result<
                                impl futures::Stream<Item = Result<bytes::Bytes, crate::Error>> + Send + 'static,
                                crate::Error,
                            > {
                                self.get_subresource_stream(#sub, name, params).await
                            }
                        }
                    }
                    (None, None) => quote! {
                        pub async fn #method_ident(&self, name: &str) -> Result<String, crate::Error> {
                            self.get_subresource_text(#sub, name, &()).await
                        }
                    },
                    (Some(p), Some(_)) => quote! {
                        pub async fn #method_ident(&self, name: &str, params: &#p) -> Result<#resp, crate::Error> {
                            self.get_subresource_with(#sub, name, params).await
                        }
                    },
                    (None, Some(_)) => quote! {
                        pub async fn #method_ident(&self, name: &str) -> Result<#resp, crate::Error> {
                            self.get_subresource(#sub, name).await
                        }
                    },
                }
            }
            "patch" => quote! {
                pub async fn #method_ident<P: serde::Serialize>(
                    &self,
                    name: &str,
                    params: &crate::params::PatchParams,
                    patch: &crate::Patch<P>,
                ) -> Result<#resp, crate::Error> {
                    self.patch_subresource(#sub, name, params, patch).await
                }
            },
            verb => {
                let req = request_ty.map(type_tokens).unwrap_or_else(|| quote!(()));
                let call = if verb == "put" {
                    quote!(replace_subresource)
                } else {
                    quote!(create_subresource)
                };
                quote! {
                    pub async fn #method_ident(
                        &self,
                        name: &str,
                        params: &crate::params::PostParams,
                        body: &#req,
                    ) -> Result<#resp, crate::Error> {
                        self.#call(#sub, name, params, body).await
                    }
                }
            }
        };
        let parent_ty = type_tokens(parent);
        gv.methods.push(quote! {
            #cfg
            impl crate::Api<#parent_ty> {
                #[doc = #doc]
                #method
            }
        });
    }
    // One line per path and reason, with its methods.
    let mut grouped: BTreeMap<(String, &'static str), Vec<String>> = BTreeMap::new();
    for s in skipped {
        grouped.entry((s.route, s.why)).or_default().push(s.methods);
    }

    let mut out = ClientOutput::default();
    let mut mods = Vec::new();
    let mut accessors = Vec::new();
    let mut seen_methods: BTreeMap<String, String> = BTreeMap::new();
    for (feature, gv) in &gvs {
        let module = feature.replace('-', "_");
        let struct_name = format_ident!("{}", camel(feature));
        let mod_ident = ident(&module);
        let groups: Vec<&str> = gv.groups.iter().map(String::as_str).collect();
        let groups = groups.join("`, `");
        let mod_doc = format!(
            " `{groups}`: the resources and their subresource methods (cargo feature `{feature}`)."
        );
        let mut resource_methods = Vec::new();
        let mut names_here: BTreeMap<String, &str> = BTreeMap::new();
        for s in &gv.served {
            let ty = type_tokens(s.ty);
            let m = ident(&s.method);
            let summary = first_sentence(s.ty.description.as_deref())
                .map(|d| format!("\n\n {d}"))
                .unwrap_or_default();
            let base = api_prefix(s.group, s.version);
            let mut names = vec![s.method.clone()];
            if s.namespaced {
                let all = format_ident!("{}_all", s.method);
                names.push(format!("{}_all", s.method));
                let doc = format!(
                    " `{}` in `namespace` (`{base}/namespaces/{{namespace}}/{}`).{summary}",
                    s.ty.name, s.plural
                );
                let doc_all = format!(
                    " `{}` in every namespace (`{base}/{}`): for list and watch.",
                    s.ty.name, s.plural
                );
                resource_methods.push(quote! {
                    #[doc = #doc]
                    pub fn #m(&self, namespace: &str) -> crate::Api<#ty> {
                        crate::Api::namespaced(self.client.clone(), namespace)
                    }
                    #[doc = #doc_all]
                    pub fn #all(&self) -> crate::Api<#ty> {
                        crate::Api::all(self.client.clone())
                    }
                });
            } else {
                let doc = format!(
                    " `{}` (`{base}/{}`, cluster-scoped).{summary}",
                    s.ty.name, s.plural
                );
                resource_methods.push(quote! {
                    #[doc = #doc]
                    pub fn #m(&self) -> crate::Api<#ty> {
                        crate::Api::cluster(self.client.clone())
                    }
                });
            }
            for n in names {
                if let Some(first) = names_here.insert(n.clone(), s.plural) {
                    return Err(CodegenError::NameCollision {
                        scope: feature.clone(),
                        rust: n,
                        first: first.to_owned(),
                        second: s.plural.to_owned(),
                    });
                }
            }
        }
        if let Some(first) = seen_methods.insert(module.clone(), feature.clone()) {
            return Err(CodegenError::NameCollision {
                scope: "clientset".into(),
                rust: module,
                first,
                second: feature.clone(),
            });
        }
        let struct_doc = format!(
            " The resources of `{groups}`: one accessor per resource, each an [`Api`](crate::Api)."
        );
        let methods = &gv.methods;
        let params = &gv.params;
        let tokens = quote! {
            #![doc = #mod_doc]
            #[doc = #struct_doc]
            #[derive(Debug, Clone)]
            pub struct #struct_name {
                client: crate::Client,
            }
            impl #struct_name {
                /// The group-version's accessors over `client`.
                pub fn new(client: crate::Client) -> Self {
                    Self { client }
                }
                #(#resource_methods)*
            }
            #(#params)*
            #(#methods)*
        };
        let file = format!("{CLIENT_DIR}/{module}.rs");
        let text = format(&file, tokens, &format!("paths of {spec_label}"))?;
        out.files.insert(file, text);
        let mod_decl_doc = format!(" `{groups}` (cargo feature `{feature}`).");
        mods.push(quote! {
            #[doc = #mod_decl_doc]
            #[cfg(feature = #feature)]
            pub mod #mod_ident;
        });
        let acc_doc = format!(" The resources of `{groups}`.");
        accessors.push(quote! {
            #[doc = #acc_doc]
            #[cfg(feature = #feature)]
            pub fn #mod_ident(&self) -> #mod_ident::#struct_name {
                #mod_ident::#struct_name::new(self.client.clone())
            }
        });
    }
    let mut module_doc = String::from(
        " The generated clientset: [`Clientset`] → one accessor per group-version\n \
         (`core_v1()`, `apps_v1()`, …) → one accessor per resource, returning an\n \
         [`Api`](crate::Api) (`pods(\"ns\")`, `pods_all()`, `nodes()`).\n\n \
         # Naming\n\n \
         - group-version: the model feature with `-` → `_` (`core-v1` → `core_v1()`,\n   struct `CoreV1`); each sits behind its cargo feature;\n \
         - resource: the kind in snake_case with the plural's ending (`pods`,\n   `network_policies`, `certificate_signing_requests`); namespaced resources\n   have `<name>(namespace)` and `<name>_all()` (every namespace), cluster-scoped\n   ones `<name>()`;\n \
         - subresource methods on `Api<Kind>`: `<verb>_<subresource>` with `get`,\n   `replace` (PUT), `patch` and `create` (POST) (`get_scale`, `replace_scale`,\n   `patch_scale`, `create_token`, `replace_approval`,\n   `replace_ephemeral_containers`, `patch_resize`), except the client-go names\n",
    );
    for (sub, method, name) in RENAMES {
        module_doc.push_str(&format!(
            "   `{name}` ({} `{sub}`),\n",
            method.to_uppercase()
        ));
    }
    module_doc.push_str(
        "   and `status`, served for every kind by `Api::get_status`, `replace_status`\n   and `patch_status`.\n\n \
         A group-version's feature also turns on the group-versions its\n \
         subresource methods' types live in (`core-v1` → `policy-v1` for `evict`,\n \
         `autoscaling-v1` for `get_scale`, `authentication-v1` for `create_token`).\n\n \
         A plain-text GET with parameters also gets `<subresource>_stream`, a byte\n \
         stream (`log_stream` for `follow`).\n\n \
         Request and response types come from the operation in the spec; a GET\n \
         with query parameters beyond the common ones takes a generated\n \
         `<Kind><Subresource>Params` struct; writes take `PostParams`/`PatchParams`.\n \
         Eviction and binding answer `Status`: kube-apiserver returns that, not\n \
         the object the spec names.\n\n # Not generated\n\n",
    );
    let mut skipped_doc = String::new();
    for ((route, why), methods) in &grouped {
        skipped_doc.push_str(&format!(" - `{route}` ({}): {why}\n", methods.join(", ")));
    }
    let module_doc = format!("{module_doc}{skipped_doc}")
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned())
        .map(|l| format!(" {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    let tokens = quote! {
        #![doc = #module_doc]
        #(#mods)*
        /// Typed access to every built-in resource, client-go style:
        /// `clientset.core_v1().pods("ns").get("web-0")`.
        #[derive(Debug, Clone)]
        pub struct Clientset {
            client: crate::Client,
        }
        impl Clientset {
            /// A clientset over `client` (cheap: clones share the connection pool).
            pub fn new(client: crate::Client) -> Self {
                Self { client }
            }
            /// The client every accessor uses.
            pub fn client(&self) -> &crate::Client {
                &self.client
            }
            #(#accessors)*
        }
        impl From<crate::Client> for Clientset {
            fn from(client: crate::Client) -> Self {
                Self::new(client)
            }
        }
    };
    let file = format!("{CLIENT_DIR}/mod.rs");
    let text = format(&file, tokens, &format!("paths of {spec_label}"))?;
    out.files.insert(file, text);
    let needs: BTreeMap<String, BTreeSet<String>> = gvs
        .iter()
        .map(|(f, gv)| (f.clone(), gv.needs.clone()))
        .collect();
    out.client_features = features_block(ir, |f| format!("kubeset-api/{f}"), Some(&needs));
    out.facade_features = features_block(ir, |f| format!("kubeset-client/{f}"), None);
    Ok(out)
}

/// The forwarding features: `default`, `api-default`, `all` and one per
/// group-version. With `needs` (the client crate), a feature also turns on
/// the models' feature dependencies and the features its subresource
/// methods' types need. `default` also names the hand-written `http2`
/// feature: HTTP/2 unless a user turns default features off, as client-go.
fn features_block(
    ir: &Ir,
    forward: impl Fn(&str) -> String,
    needs: Option<&BTreeMap<String, BTreeSet<String>>>,
) -> String {
    let quoted = |v: &[String]| {
        v.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let existing: BTreeSet<&str> = ir.features.keys().map(String::as_str).collect();
    let defaults: Vec<String> = DEFAULT_FEATURES
        .iter()
        .filter(|f| existing.contains(**f))
        .map(|f| (*f).to_owned())
        .collect();
    let all: Vec<String> = existing.iter().map(|f| (*f).to_owned()).collect();
    let mut s = String::new();
    s.push_str(FEATURES_BEGIN);
    s.push('\n');
    s.push_str("default = [\"api-default\", \"http2\"]\n");
    s.push_str("# The model crate's default group-versions.\n");
    s.push_str(&format!("api-default = [{}]\n", quoted(&defaults)));
    s.push_str(&format!("all = [{}]\n", quoted(&all)));
    for (f, deps) in &ir.features {
        let mut list = vec![forward(f)];
        if let Some(needs) = needs {
            let mut more: BTreeSet<String> = deps.clone();
            if let Some(n) = needs.get(f) {
                more.extend(n.iter().cloned());
            }
            list.extend(more);
        }
        s.push_str(&format!("{f} = [{}]\n", quoted(&list)));
    }
    s.push_str(FEATURES_END);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_method_names() {
        assert_eq!(resource_method("Pod", "pods"), "pods");
        assert_eq!(
            resource_method("NetworkPolicy", "networkpolicies"),
            "network_policies"
        );
        assert_eq!(
            resource_method("CertificateSigningRequest", "certificatesigningrequests"),
            "certificate_signing_requests"
        );
        assert_eq!(resource_method("Endpoints", "endpoints"), "endpoints");
        assert_eq!(resource_method("IPAddress", "ipaddresses"), "ip_addresses");
        assert_eq!(resource_method("Odd", "strange"), "strange");
    }

    #[test]
    fn subresource_method_names() {
        assert_eq!(subresource_method("log", "get"), "logs");
        assert_eq!(subresource_method("scale", "put"), "replace_scale");
        assert_eq!(subresource_method("token", "post"), "create_token");
        assert_eq!(
            subresource_method("ephemeralcontainers", "patch"),
            "patch_ephemeral_containers"
        );
        assert_eq!(subresource_method("finalize", "put"), "finalize");
    }
}
