//! Apply configurations: for every generated struct `Foo` a `FooApply`
//! beside it (file `foo_apply.rs`, named by [`names::apply_type`]), every
//! field optional, nested structs as their own apply types, `with_*`
//! builders (lists append, maps insert), the kind's `new(name[, namespace])`
//! and `with_label`/`with_annotation`, and a `new(keys…)` on the item type
//! of keyed lists (`listType=map`), so an item carries only its keys and
//! what the manager owns. `Serialize`/`Deserialize` are the models' written
//! out impls ([`super::serde_impls`]) with every field optional; a kind's
//! `Serialize` writes `apiVersion` and `kind` by construction.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::error::CodegenError;
use crate::ir::{Field, Ir, ListSemantics, Ty, TypeDef, TypeKind};
use crate::names::{self, ident};

/// Cargo feature of `kubeset-api` the apply types are compiled behind.
pub const FEATURE: &str = "apply";

/// Key fields of the item types of keyed lists: definition → the JSON
/// names of its keys, for the types every keyed list of which agrees on
/// the keys (a type used with two different key sets gets no keyed
/// constructor).
pub(crate) fn item_keys(ir: &Ir) -> BTreeMap<String, Vec<String>> {
    let mut seen: BTreeMap<&str, BTreeSet<&[String]>> = BTreeMap::new();
    for t in ir.types.values() {
        let TypeKind::Struct { fields } = &t.kind else {
            continue;
        };
        for f in fields {
            if let (Some(ListSemantics::Map { keys }), Ty::Vec(item)) = (&f.list, &f.ty)
                && let Ty::Ref(d) = item.as_ref()
            {
                seen.entry(d).or_default().insert(keys);
            }
        }
    }
    seen.into_iter()
        .filter_map(
            |(d, sets)| match sets.into_iter().collect::<Vec<_>>().as_slice() {
                [one] if keyed_constructor_fits(ir, d, one) => Some((d.to_owned(), one.to_vec())),
                _ => None,
            },
        )
        .collect()
}

/// A keyed constructor is written when every key is a scalar field of a
/// struct that is not a kind (a kind has `new(name, …)`).
fn keyed_constructor_fits(ir: &Ir, definition: &str, keys: &[String]) -> bool {
    let Some(t) = ir.types.get(definition) else {
        return false;
    };
    let TypeKind::Struct { fields } = &t.kind else {
        return false;
    };
    t.resource.is_none()
        && keys.iter().all(|k| {
            fields
                .iter()
                .any(|f| &f.json == k && matches!(f.ty, Ty::String | Ty::I32 | Ty::I64 | Ty::Bool))
        })
}

/// Refuses a struct whose apply type's name or file is another type's.
pub(crate) fn check_names(ir: &Ir) -> Result<(), CodegenError> {
    let taken: BTreeMap<(&[String], String), &str> = ir
        .types
        .values()
        .map(|t| {
            (
                (t.modules.as_slice(), t.name.clone()),
                t.definition.as_str(),
            )
        })
        .collect();
    for t in ir.types.values() {
        if !matches!(t.kind, TypeKind::Struct { .. }) {
            continue;
        }
        let apply = names::apply_type(&t.name);
        if let Some(other) = taken.get(&(t.modules.as_slice(), apply.clone())) {
            return Err(CodegenError::NameCollision {
                scope: t.modules.join("::"),
                rust: apply,
                first: t.definition.clone(),
                second: (*other).to_owned(),
            });
        }
    }
    Ok(())
}

/// Whether definition `d` gets an apply type.
fn has_apply(ir: &Ir, d: &str) -> bool {
    matches!(
        ir.types.get(d).map(|t| &t.kind),
        Some(TypeKind::Struct { .. })
    )
}

/// Where the apply types are written: how they name other types and how
/// they (de)serialize. [`Paths::builtin`] for kubeset-api; the CRD
/// emitter has its own (facade paths, serde derives).
pub(crate) struct Paths<'a> {
    /// The path of a referenced definition's apply type (or of the
    /// definition itself when it has none).
    pub apply_ref: &'a dyn Fn(&str) -> TokenStream,
    /// The path of a definition's model, for the docs.
    pub model: &'a dyn Fn(&str) -> TokenStream,
    /// The base64 type.
    pub bytes: TokenStream,
    /// The impls of `Serialize` and `Deserialize` (and field attributes)
    /// of the apply struct.
    pub serde: Serde,
}

/// How an apply struct (de)serializes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Serde {
    /// kubeset-api's written-out impls ([`super::serde_impls`]).
    WrittenOut,
    /// serde's derives with field attributes (a user crate has only the
    /// facade), a kind's `Serialize` written out with `apiVersion` and
    /// `kind`.
    Derived,
}

impl Paths<'_> {
    /// The path of `d`'s apply type in kubeset-api, or of `d` itself when
    /// it has none.
    pub(crate) fn builtin_ref(ir: &Ir, d: &str) -> TokenStream {
        match ir.types.get(d) {
            Some(t) if has_apply(ir, d) => {
                let modules = t.modules.iter().map(|m| ident(m));
                let name = ident(&names::apply_type(&t.name));
                quote!(crate:: #(#modules ::)* #name)
            }
            _ => super::type_path(ir, d),
        }
    }

    fn ty(&self, ty: &Ty) -> TokenStream {
        super::rust_ty_with(ty, &self.bytes, self.apply_ref)
    }
}

/// The file (path relative to the crate) and text of `t`'s apply type,
/// `None` when `t` is not a struct.
pub(super) fn file(
    ir: &Ir,
    t: &TypeDef,
    keys: &BTreeMap<String, Vec<String>>,
) -> Option<(String, TokenStream)> {
    let apply_ref = |d: &str| Paths::builtin_ref(ir, d);
    let model = |d: &str| super::type_path(ir, d);
    let paths = Paths {
        apply_ref: &apply_ref,
        model: &model,
        bytes: quote!(crate::ByteString),
        serde: Serde::WrittenOut,
    };
    let (name, tokens) = tokens(t, keys, &paths)?;
    let path = format!(
        "src/{}/{}.rs",
        t.modules.join("/"),
        names::snake_case(&name)
    );
    Some((path, tokens))
}

/// The name and items of `t`'s apply type, `None` when `t` is not a
/// struct: the struct, its builders and constructor, its serde impls.
pub(crate) fn tokens(
    t: &TypeDef,
    keys: &BTreeMap<String, Vec<String>>,
    paths: &Paths<'_>,
) -> Option<(String, TokenStream)> {
    let TypeKind::Struct { fields } = &t.kind else {
        return None;
    };
    let fields = &one_form_each(fields);
    let name = names::apply_type(&t.name);
    let model = (paths.model)(&t.definition);
    let model_doc = model.to_string().replace(' ', "");
    let ty = ident(&name);
    let doc = format!(
        " Apply configuration of [`{}`]({model_doc}) for server-side apply: every field optional, so a field manager sets (and owns) only what it means to.",
        t.name
    );
    let struct_fields = fields.iter().map(|f| field_tokens(paths, f, &model_doc));
    let builders = fields.iter().map(|f| builder(paths, f, &model_doc));
    let constructor =
        kind_constructor(paths, t, fields).or_else(|| keyed_constructor(paths, t, fields, keys));
    let optional: Vec<Field> = fields
        .iter()
        .map(|f| Field {
            required: false,
            ..f.clone()
        })
        .collect();
    let (derive, unknown, serde) = match paths.serde {
        Serde::WrittenOut => (
            quote!(),
            quote!(),
            super::serde_impls::impls(&name, &optional, t.gvk.as_ref()),
        ),
        Serde::Derived => derived_serde(t, &name, &optional),
    };
    let attr = (paths.serde == Serde::Derived).then(|| quote!(#[serde(default)]));
    Some((
        name,
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, Default, PartialEq, #derive)]
            #attr
            pub struct #ty {
                #(#struct_fields)*
                #unknown
            }
            impl #ty {
                #constructor
                #(#builders)*
            }
            #serde
        },
    ))
}

/// The fields with one entry per name: a field required in some versions
/// and optional in others has two forms in the model (one per gate) but
/// one in the apply type, where every field is optional, under the union
/// of their gates.
fn one_form_each(fields: &[Field]) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::with_capacity(fields.len());
    for f in fields {
        match out.iter_mut().find(|o| o.rust == f.rust) {
            Some(o) => o.gate = crate::versions::union(o.gate.as_ref(), f.gate.as_ref()),
            None => out.push(f.clone()),
        }
    }
    out
}

/// The server-side apply note of a list field.
fn list_note(f: &Field) -> Option<String> {
    let note = match (&f.list, &f.ty) {
        (Some(ListSemantics::Atomic), _) => {
            "Server-side apply: an atomic list, replaced whole and owned by one manager.".to_owned()
        }
        (Some(ListSemantics::Set), _) => {
            "Server-side apply: a set, each item owned on its own.".to_owned()
        }
        (Some(ListSemantics::Map { keys }), _) => format!(
            "Server-side apply: a list of type `map` keyed by {}: items merge with other managers' by these keys, so an item carries its keys and the fields this manager owns.",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, _) => return None,
    };
    Some(note)
}

fn field_tokens(paths: &Paths<'_>, f: &Field, model: &str) -> TokenStream {
    let name = ident(&f.rust);
    let mut ty = paths.ty(&f.ty);
    if f.boxed {
        ty = quote!(Box<#ty>);
    }
    let mut lines = vec![format!(" `{}`: see [`{model}::{}`].", f.json, f.rust)];
    if let Some(note) = list_note(f) {
        lines.push(String::new());
        lines.push(format!(" {note}"));
    }
    let attrs = (paths.serde == Serde::Derived).then(|| {
        let json = &f.json;
        let rename = (f.rust != f.json).then(|| quote!(rename = #json,));
        quote!(#[serde(#rename skip_serializing_if = "Option::is_none")])
    });
    let cfg = crate::versions::cfg(f.gate.as_ref());
    quote! {
        #(#[doc = #lines])*
        #attrs
        #cfg
        pub #name: Option<#ty>,
    }
}

/// serde's derives for a CRD's apply struct: `Serialize` derived but for a
/// kind (written out, `apiVersion` and `kind` first), `Deserialize`
/// derived; the unknown fields a non-kind type keeps
/// (`x-kubernetes-preserve-unknown-fields`) flattened as in the model.
fn derived_serde(
    t: &TypeDef,
    name: &str,
    fields: &[Field],
) -> (TokenStream, TokenStream, TokenStream) {
    let ty = ident(name);
    let Some(r) = t.gvk.as_ref().filter(|_| t.resource.is_some()) else {
        let unknown = t.unknown_fields.as_ref().map(|u| {
            let u = ident(u);
            quote! {
                /// Fields the schema does not list, kept as they are.
                #[serde(flatten)]
                pub #u: std::collections::BTreeMap<String, serde_json::Value>,
            }
        });
        return (
            quote!(serde::Serialize, serde::Deserialize),
            quote!(#unknown),
            quote!(),
        );
    };
    let api_version = r.api_version();
    let kind = &r.kind;
    let entries = fields.iter().map(|f| {
        let (n, json) = (ident(&f.rust), &f.json);
        quote! {
            if let Some(v) = &self.#n {
                map.serialize_entry(#json, v)?;
            }
        }
    });
    let ser = super::kind_serialize(&ty, &api_version, kind, quote!(#(#entries)*));
    (quote!(serde::Deserialize), quote!(), ser)
}

fn builder(paths: &Paths<'_>, f: &Field, model: &str) -> TokenStream {
    let cfg = crate::versions::cfg(f.gate.as_ref());
    let method = builder_method(paths, f, model);
    quote! {
        #cfg
        #method
    }
}

fn builder_method(paths: &Paths<'_>, f: &Field, model: &str) -> TokenStream {
    let field = ident(&f.rust);
    let method = ident(&names::builder_method(&f.rust));
    let see = format!(" See [`{model}::{}`].", f.rust);
    match &f.ty {
        Ty::Vec(item) if !f.boxed => {
            let item = paths.ty(item);
            let doc = format!(" Appends `values` to `{}`.", f.json);
            quote! {
                #[doc = #doc]
                #[doc = ""]
                #[doc = #see]
                #[must_use]
                pub fn #method(mut self, values: impl IntoIterator<Item = #item>) -> Self {
                    self.#field.get_or_insert_with(Vec::new).extend(values);
                    self
                }
            }
        }
        Ty::Map(value) if !f.boxed => {
            let value = paths.ty(value);
            let doc = format!(" Inserts `entries` into `{}`.", f.json);
            quote! {
                #[doc = #doc]
                #[doc = ""]
                #[doc = #see]
                #[must_use]
                pub fn #method<K: Into<String>, V: Into<#value>>(mut self, entries: impl IntoIterator<Item = (K, V)>) -> Self {
                    self.#field
                        .get_or_insert_with(Default::default)
                        .extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
                    self
                }
            }
        }
        _ => {
            let ty = paths.ty(&f.ty);
            let doc = format!(" Sets `{}`.", f.json);
            let value = if f.boxed {
                quote!(Box::new(value.into()))
            } else {
                quote!(value.into())
            };
            quote! {
                #[doc = #doc]
                #[doc = ""]
                #[doc = #see]
                #[must_use]
                pub fn #method(mut self, value: impl Into<#ty>) -> Self {
                    self.#field = Some(#value);
                    self
                }
            }
        }
    }
}

/// A served kind's `new(name[, namespace])` and its metadata builders
/// `with_label`/`with_annotation` (unless a field takes their names).
fn kind_constructor(paths: &Paths<'_>, t: &TypeDef, fields: &[Field]) -> Option<TokenStream> {
    let r = t.resource.as_ref()?;
    let meta = fields.iter().find(|f| f.json == "metadata")?;
    let Ty::Ref(meta_def) = &meta.ty else {
        return None;
    };
    let meta_ty = (paths.apply_ref)(meta_def);
    let kind = &t.name;
    let (params, set_ns, doc) = if r.namespaced {
        (
            quote!(name: impl Into<String>, namespace: impl Into<String>),
            quote!(.with_namespace(namespace)),
            format!(
                " The apply configuration of {kind} `name` in `namespace`; `Serialize` writes its `apiVersion` and `kind`."
            ),
        )
    } else {
        (
            quote!(name: impl Into<String>),
            quote!(),
            format!(
                " The apply configuration of {kind} `name`; `Serialize` writes its `apiVersion` and `kind`."
            ),
        )
    };
    let taken = |m: &str| fields.iter().any(|f| names::builder_method(&f.rust) == m);
    // `with_label`, `with_annotation`: one entry of a metadata map, unless
    // a field's builder has that name.
    let map_entry = |entry: &str, map: &str| {
        let method = format_ident!("with_{entry}");
        let map = format_ident!("{map}");
        let doc = format!(" Sets {entry} `key` to `value` in `metadata.{map}`.");
        (!taken(&method.to_string())).then(|| {
            quote! {
                #[doc = #doc]
                #[must_use]
                pub fn #method(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
                    self.metadata
                        .get_or_insert_with(Default::default)
                        .#map
                        .get_or_insert_with(Default::default)
                        .insert(key.into(), value.into());
                    self
                }
            }
        })
    };
    let label = map_entry("label", "labels");
    let annotation = map_entry("annotation", "annotations");
    let rest = (fields.len() > 1).then(|| quote!(..Self::default()));
    Some(quote! {
        #[doc = #doc]
        #[must_use]
        pub fn new(#params) -> Self {
            Self {
                metadata: Some(#meta_ty::default().with_name(name) #set_ns),
                #rest
            }
        }
        #label
        #annotation
    })
}

/// `new(keys…)` of the item type of keyed lists.
fn keyed_constructor(
    paths: &Paths<'_>,
    t: &TypeDef,
    fields: &[Field],
    keys: &BTreeMap<String, Vec<String>>,
) -> Option<TokenStream> {
    let keys = keys.get(&t.definition)?;
    let key_fields: Vec<&Field> = keys
        .iter()
        .filter_map(|k| fields.iter().find(|f| &f.json == k))
        .collect();
    let params = key_fields.iter().map(|f| {
        let n = ident(&f.rust);
        let ty = super::rust_ty_with(&f.ty, &paths.bytes, &|_| quote!());
        quote!(#n: impl Into<#ty>)
    });
    let sets = key_fields.iter().map(|f| {
        let n = ident(&f.rust);
        quote!(#n: Some(#n.into()),)
    });
    // Every field a key: nothing left to default.
    let rest = (key_fields.len() < fields.len()).then(|| quote!(..Self::default()));
    let doc = format!(
        " An item of a keyed list (`listType=map`) identified by {}: only its keys set.",
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A key only some versions have: the constructor is theirs (the
    // older versions' lists had fewer keys; their items have no `new`).
    let cfg = crate::versions::cfg(key_fields.iter().find_map(|f| f.gate.as_ref()));
    Some(quote! {
        #[doc = #doc]
        #[must_use]
        #cfg
        pub fn new(#(#params),*) -> Self {
            Self {
                #(#sets)*
                #rest
            }
        }
    })
}
