//! Client emitter: the `Clientset` of `kubeset-client` (one accessor per
//! group-version, one per resource) and the typed subresource methods on
//! `Api<Kind>`, plus the forwarding cargo features of `kubeset-client` and
//! of the facade `kubeset`. What is generated, and under which names, is
//! decided by the client pass [`ir::client`](crate::ir::client) (names from
//! [`names`]); this module only writes it.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::{DEFAULT_FEATURES, FEATURES_BEGIN, FEATURES_END, GENERATED_MARKER, doc_lines};
use crate::error::CodegenError;
use crate::ir::Ir;
use crate::ir::client::{
    Accessor, Call, Clientset, GroupVersion, MethodResponse, ModelType, OperationMethod, ParamType,
    ParamsStruct,
};
use crate::names::{self, ident};
use crate::versions;

/// The directory of `kubeset-client` the client emitter owns.
pub const CLIENT_DIR: &str = "src/clientset";

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

/// The naming rules and what is left out, the head of the clientset's
/// module docs (the client-go renames and the skipped operations follow).
const NAMING_DOC: &str = "\
The generated clientset: [`Clientset`] → one accessor per group-version
(`core_v1()`, `apps_v1()`, …) → one accessor per resource, returning an
[`Api`](crate::Api) (`pods(\"ns\")`, `pods_all()`, `nodes()`).

# Naming

- group-version: the model feature with `-` → `_` (`core-v1` → `core_v1()`,
  struct `CoreV1`); each sits behind its cargo feature;
- resource: the kind in snake_case with the plural's ending (`pods`,
  `network_policies`, `certificate_signing_requests`); namespaced resources
  have `<name>(namespace)` and `<name>_all()` (every namespace), cluster-scoped
  ones `<name>()`;
- subresource methods on `Api<Kind>`: `<verb>_<subresource>` with `get`,
  `replace` (PUT), `patch` and `create` (POST) (`get_scale`, `replace_scale`,
  `patch_scale`, `create_token`, `replace_approval`,
  `replace_ephemeral_containers`, `patch_resize`), except the client-go names
";

const AFTER_RENAMES_DOC: &str = "  \
  and `status`, served for every kind by `Api::get_status`, `replace_status`
  and `patch_status`.

A group-version's feature also turns on the group-versions its
subresource methods' types live in (`core-v1` → `policy-v1` for `evict`,
`autoscaling-v1` for `get_scale`, `authentication-v1` for `create_token`).

A plain-text GET with parameters also gets `<subresource>_stream`, a byte
stream (`log_stream` for `follow`).

Request and response types come from the operation in the spec; a GET
with query parameters beyond the common ones takes a generated
`<Kind><Subresource>Params` struct; writes take `PostParams`/`PatchParams`.
Eviction and binding answer `Status`: kube-apiserver returns that, not
the object the spec names.

# Not generated

";

/// Outer doc attributes, one per line (`///`).
fn doc(text: &str) -> TokenStream {
    let lines = doc_lines(text);
    quote!(#(#[doc = #lines])*)
}

/// Inner doc attributes, one per line (`//!`).
fn inner_doc(text: &str) -> TokenStream {
    let lines = doc_lines(text);
    quote!(#(#![doc = #lines])*)
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

/// `kubeset_api::api::core::v1::Pod`.
fn type_tokens(t: &ModelType) -> TokenStream {
    let modules = t.modules.iter().map(|m| ident(m));
    let name = ident(&t.name);
    quote!(kubeset_api:: #(#modules ::)* #name)
}

/// Emits the clientset files and the two features blocks.
pub fn emit(ir: &Ir, spec_label: &str) -> Result<ClientOutput, CodegenError> {
    let set = crate::ir::client::clientset(ir)?;
    let source = format!("paths of {spec_label}");
    let mut out = ClientOutput::default();
    for (feature, gv) in &set.group_versions {
        let file = format!("{CLIENT_DIR}/{}.rs", gv.module);
        let text = format(&file, group_version_file(feature, gv), &source)?;
        out.files.insert(file, text);
    }
    let file = format!("{CLIENT_DIR}/mod.rs");
    let text = format(&file, root_file(&set), &source)?;
    out.files.insert(file, text);
    let needs: BTreeMap<String, BTreeSet<String>> = set
        .group_versions
        .iter()
        .map(|(f, gv)| (f.clone(), gv.needs.clone()))
        .collect();
    out.client_features = features_block(ir, |f| format!("kubeset-api/{f}"), Some(&needs));
    out.facade_features = features_block(ir, |f| format!("kubeset-client/{f}"), None);
    Ok(out)
}

fn groups_text(gv: &GroupVersion) -> String {
    gv.groups
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("`, `")
}

/// One group-version's file: its struct with the resource accessors, the
/// parameter structs and the subresource methods.
fn group_version_file(feature: &str, gv: &GroupVersion) -> TokenStream {
    let groups = groups_text(gv);
    let mod_doc = inner_doc(&format!(
        "`{groups}`: the resources and their subresource methods (cargo feature `{feature}`)."
    ));
    let struct_doc = doc(&format!(
        "The resources of `{groups}`: one accessor per resource, each an [`Api`](crate::Api)."
    ));
    let struct_name = ident(&gv.struct_name);
    let accessors = gv.accessors.iter().map(accessor_tokens);
    let params = gv.params.iter().map(params_tokens);
    let methods = gv.methods.iter().map(|m| {
        let cfg = versions::cfg(m.gate.as_ref());
        let item = method_tokens(m);
        quote!(#cfg #item)
    });
    quote! {
        #mod_doc
        #struct_doc
        #[derive(Debug, Clone)]
        pub struct #struct_name {
            client: crate::Client,
        }
        impl #struct_name {
            /// The group-version's accessors over `client`.
            pub fn new(client: crate::Client) -> Self {
                Self { client }
            }
            #(#accessors)*
        }
        #(#params)*
        #(#methods)*
    }
}

/// The gate of a whole group-version: the union of its accessors' (none
/// when one of them is in every version).
fn group_version_gate(gv: &GroupVersion) -> Option<versions::Gate> {
    let mut gates = gv.accessors.iter().map(|a| a.gate.clone());
    let first = gates.next()??;
    gates.try_fold(first, |acc, g| versions::union(Some(&acc), g.as_ref()))
}

fn accessor_tokens(a: &Accessor) -> TokenStream {
    let ty = type_tokens(&a.ty);
    let m = ident(&a.name);
    let (kind, base, plural) = (&a.ty.name, &a.prefix, &a.plural);
    let cfg = versions::cfg(a.gate.as_ref());
    let summary = a
        .summary
        .as_ref()
        .map(|d| format!("\n\n{d}"))
        .unwrap_or_default();
    let Some(all) = &a.all_namespaces else {
        let doc = doc(&format!(
            "`{kind}` (`{base}/{plural}`, cluster-scoped).{summary}"
        ));
        return quote! {
            #doc
            #cfg
            pub fn #m(&self) -> crate::Api<#ty> {
                crate::Api::cluster(self.client.clone())
            }
        };
    };
    let all = ident(all);
    let doc_ns = doc(&format!(
        "`{kind}` in `namespace` (`{base}/namespaces/{{namespace}}/{plural}`).{summary}"
    ));
    let doc_all = doc(&format!(
        "`{kind}` in every namespace (`{base}/{plural}`): for list and watch."
    ));
    quote! {
        #doc_ns
        #cfg
        pub fn #m(&self, namespace: &str) -> crate::Api<#ty> {
            crate::Api::namespaced(self.client.clone(), namespace)
        }
        #doc_all
        #cfg
        pub fn #all(&self) -> crate::Api<#ty> {
            crate::Api::all(self.client.clone())
        }
    }
}

/// A query-parameter struct with its setters and `QueryParams` impl.
fn params_tokens(p: &ParamsStruct) -> TokenStream {
    let name = ident(&p.name);
    let fields = p.fields.iter().map(|f| {
        let (id, ty) = (ident(&f.rust), param_type(f.ty));
        let doc = doc(&format!("`{}`: {}", f.wire, f.description));
        quote! { #doc pub #id: Option<#ty>, }
    });
    let setters = p.fields.iter().map(|f| {
        let id = ident(&f.rust);
        let doc = doc(&format!("Sets `{}`.", f.wire));
        match f.ty {
            ParamType::String => quote! {
                #doc
                pub fn #id(mut self, value: impl Into<String>) -> Self { self.#id = Some(value.into()); self }
            },
            ty => {
                let ty = param_type(ty);
                quote! { #doc pub fn #id(mut self, value: #ty) -> Self { self.#id = Some(value); self } }
            }
        }
    });
    let pushes = p.fields.iter().map(|f| {
        let (id, wire) = (ident(&f.rust), &f.wire);
        quote! { if let Some(v) = &self.#id { out.push((#wire, v.to_string())); } }
    });
    let doc = doc(&format!(
        "Query parameters of [`Api::{}`](crate::Api) (`{}`).",
        p.method, p.route
    ));
    let cfg = versions::cfg(p.gate.as_ref());
    quote! {
        #doc
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        #[must_use]
        #cfg
        pub struct #name { #(#fields)* }
        #cfg
        impl #name { #(#setters)* }
        #cfg
        impl crate::params::QueryParams for #name {
            fn query_pairs(&self, out: &mut Vec<(&'static str, String)>) {
                #(#pushes)*
            }
        }
    }
}

fn param_type(ty: ParamType) -> TokenStream {
    match ty {
        ParamType::Bool => quote!(bool),
        ParamType::I64 => quote!(i64),
        ParamType::String => quote!(String),
    }
}

/// `impl Api<Parent> { <method> }`.
fn method_tokens(m: &OperationMethod) -> TokenStream {
    let parent = type_tokens(&m.parent);
    let doc = doc(&format!("{}\n\n`{}`", m.description, m.route));
    let body = method_body(m);
    quote! {
        impl crate::Api<#parent> {
            #doc
            #body
        }
    }
}

fn method_body(m: &OperationMethod) -> TokenStream {
    let name = ident(&m.name);
    let sub = m.subresource.as_str();
    let resp = match &m.response {
        MethodResponse::Object(t) => type_tokens(t),
        MethodResponse::Text => quote!(String),
    };
    match &m.call {
        Call::Get { params, stream } => get_body(m, params.as_deref(), stream.as_deref()),
        Call::Patch => quote! {
            pub async fn #name<P: serde::Serialize>(
                &self,
                name: &str,
                params: &crate::params::PatchParams,
                patch: &crate::Patch<P>,
            ) -> Result<#resp, crate::Error> {
                self.patch_subresource(#sub, name, params, patch).await
            }
        },
        Call::Replace { request } | Call::Create { request } => {
            let req = type_tokens(request);
            let call = if matches!(m.call, Call::Replace { .. }) {
                quote!(replace_subresource)
            } else {
                quote!(create_subresource)
            };
            quote! {
                pub async fn #name(
                    &self,
                    name: &str,
                    params: &crate::params::PostParams,
                    body: &#req,
                ) -> Result<#resp, crate::Error> {
                    self.#call(#sub, name, params, body).await
                }
            }
        }
    }
}

/// A GET: typed or plain text, with or without a parameter struct; a text
/// GET with parameters also gets its byte-stream twin.
fn get_body(m: &OperationMethod, params: Option<&str>, stream: Option<&str>) -> TokenStream {
    let name = ident(&m.name);
    let sub = m.subresource.as_str();
    let params = params.map(ident);
    match (&m.response, params) {
        (MethodResponse::Text, Some(p)) => {
            let stream = stream.map(|s| {
                let s = ident(s);
                let doc = doc(&format!(
                    "{} As a byte stream, chunks as they arrive (for `follow`).\n\n`{}`",
                    m.description, m.route
                ));
                quote! {
                    #doc
                    pub async fn #s(
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
            });
            quote! {
                pub async fn #name(&self, name: &str, params: &#p) -> Result<String, crate::Error> {
                    self.get_subresource_text(#sub, name, params).await
                }
                #stream
            }
        }
        (MethodResponse::Text, None) => quote! {
            pub async fn #name(&self, name: &str) -> Result<String, crate::Error> {
                self.get_subresource_text(#sub, name, &()).await
            }
        },
        (MethodResponse::Object(t), Some(p)) => {
            let resp = type_tokens(t);
            quote! {
                pub async fn #name(&self, name: &str, params: &#p) -> Result<#resp, crate::Error> {
                    self.get_subresource_with(#sub, name, params).await
                }
            }
        }
        (MethodResponse::Object(t), None) => {
            let resp = type_tokens(t);
            quote! {
                pub async fn #name(&self, name: &str) -> Result<#resp, crate::Error> {
                    self.get_subresource(#sub, name).await
                }
            }
        }
    }
}

/// `mod.rs`: the module docs, one `pub mod` per group-version and the
/// `Clientset` with one accessor per group-version.
fn root_file(set: &Clientset) -> TokenStream {
    let mut mods = Vec::new();
    let mut accessors = Vec::new();
    for (feature, gv) in &set.group_versions {
        let groups = groups_text(gv);
        let (module, struct_name) = (ident(&gv.module), ident(&gv.struct_name));
        let mod_doc = doc(&format!("`{groups}` (cargo feature `{feature}`)."));
        let versions = versions::cfg(group_version_gate(gv).as_ref());
        mods.push(quote! {
            #mod_doc
            #[cfg(feature = #feature)]
            #versions
            pub mod #module;
        });
        let acc_doc = doc(&format!("The resources of `{groups}`."));
        accessors.push(quote! {
            #acc_doc
            #[cfg(feature = #feature)]
            #versions
            pub fn #module(&self) -> #module::#struct_name {
                #module::#struct_name::new(self.client.clone())
            }
        });
    }
    let module_doc = inner_doc(&module_doc(set));
    quote! {
        #module_doc
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
    }
}

/// The clientset's module docs: the naming rules, the client-go renames
/// and every operation left out, with why.
fn module_doc(set: &Clientset) -> String {
    let mut text = String::from(NAMING_DOC);
    for (sub, method, name) in names::RENAMES {
        text.push_str(&format!(
            "  `{name}` ({} `{sub}`),\n",
            method.to_uppercase()
        ));
    }
    text.push_str(AFTER_RENAMES_DOC);
    for ((route, why), methods) in &set.skipped {
        text.push_str(&format!("- `{route}` ({}): {why}\n", methods.join(", ")));
    }
    text
}

/// The forwarding features: `default`, `api-default`, `all` and one per
/// group-version. With `needs` (the client crate), a feature also turns on
/// the models' feature dependencies and the features its subresource
/// methods' types need. `default` also names the hand-written `http2`
/// feature (HTTP/2 unless a user turns default features off, as
/// client-go) and `jiff` (`Time` ⇄ `jiff::Timestamp`, which k8s-openapi
/// always has: a port from it finds the conversions with no new feature).
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
    s.push_str("default = [\"api-default\", \"http2\", \"jiff\"]\n");
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
    if needs.is_some() && !ir.versions.is_empty() {
        s.push_str("# The Kubernetes version of the models (at most one; none is the newest).\n");
        for v in &ir.versions {
            let f = versions::Gate::feature(v);
            s.push_str(&format!("{f} = [{}]\n", quoted(&[forward(&f)])));
        }
    }
    s.push_str(FEATURES_END);
    s.push('\n');
    s
}
