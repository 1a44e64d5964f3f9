//! `Serialize` and `Deserialize` of the generated structs, written out
//! instead of derived: `Deserialize` is one call into the crate's shared
//! visitor (`crate::serde_util::deserialize_struct`) plus a `DeStruct` impl
//! (JSON names, a non-generic key → index `match`, one `match` of field
//! reads), `Serialize` one
//! `serialize_struct` with `None` skipped inline. Fewer and smaller generic
//! functions than serde's derive: no field enum with its own visitor, no
//! `visit_seq`, no per-field wrapper types.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ir::{Field, Ty};
use crate::names::ident;
use crate::spec::Gvk;
use crate::versions::cfg;

/// Both impls for struct `name` with `fields` (in JSON name order);
/// `gvk` makes `Serialize` write `apiVersion` and `kind` first.
pub(super) fn impls(name: &str, fields: &[Field], gvk: Option<&Gvk>) -> TokenStream {
    let de = deserialize(name, fields);
    let ser = serialize(name, fields, gvk);
    quote! {
        #de
        #ser
    }
}

fn deserialize(name: &str, fields: &[Field]) -> TokenStream {
    let ty = ident(name);
    // Field indices follow the byte order of the JSON names.
    let mut order: Vec<&Field> = fields.iter().collect();
    order.sort_by(|a, b| a.json.cmp(&b.json));
    // Every field's name, gated or not, so that `FIELDS[index]` names the
    // field of `index` (an error message's) in every version.
    let names = order.iter().map(|f| f.json.as_str());
    let index_arms = order.iter().enumerate().map(|(i, f)| {
        let json = f.json.as_str();
        let i = proc_macro2::Literal::usize_unsuffixed(i);
        let cfg = cfg(f.gate.as_ref());
        quote!(#cfg #json => #i,)
    });
    // A gated field keeps its index in every version: the gaps are
    // never asked for.
    let gated = fields.iter().any(|f| f.gate.is_some());
    let index = if fields.is_empty() {
        quote! {
            let _ = key;
            None
        }
    } else {
        quote! {
            let index = match key {
                #(#index_arms)*
                _ => return None,
            };
            Some(index)
        }
    };
    let arms = order.iter().enumerate().map(|(i, f)| {
        let n = ident(&f.rust);
        let read = read_value(f);
        let i = proc_macro2::Literal::usize_unsuffixed(i);
        let cfg = cfg(f.gate.as_ref());
        quote!(#cfg #i => self.#n = #read,)
    });
    let body = if fields.is_empty() {
        quote! {
            let _ = (index, map);
            Ok(())
        }
    } else if gated {
        quote! {
            let _ = &map;
            match index {
                #(#arms)*
                _ => {}
            }
            Ok(())
        }
    } else if let [f] = order.as_slice() {
        let n = ident(&f.rust);
        let read = read_value(f);
        quote! {
            if index == 0 {
                self.#n = #read;
            }
            Ok(())
        }
    } else {
        quote! {
            match index {
                #(#arms)*
                _ => {}
            }
            Ok(())
        }
    };
    quote! {
        impl crate::serde_util::DeStruct for #ty {
            const NAME: &'static str = #name;
            const FIELDS: &'static [&'static str] = &[#(#names),*];
            fn index(key: &str) -> Option<usize> {
                #index
            }
            fn read<'de, A: serde::de::MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
                #body
            }
        }
        impl<'de> serde::Deserialize<'de> for #ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::serde_util::deserialize_struct(deserializer)
            }
        }
    }
}

/// The expression reading field `f`'s value from `map`. Lists go through
/// helpers that release the spare capacity left by reading them; maps
/// (but of arbitrary JSON) through helpers that read a `null` value as an
/// absent entry.
fn read_value(f: &Field) -> TokenStream {
    let map_of_typed = matches!(&f.ty, Ty::Map(v) if !matches!(v.as_ref(), Ty::Value));
    match (f.required, &f.ty) {
        (true, Ty::Vec(_)) => quote!(crate::serde_util::required_vec(map)?),
        (false, Ty::Vec(_)) => quote!(crate::serde_util::optional_vec(map)?),
        (true, _) if map_of_typed => quote!(crate::serde_util::required_map(map)?),
        (false, _) if map_of_typed => quote!(crate::serde_util::optional_map(map)?),
        (true, _) => quote!(crate::serde_util::required(map)?),
        (false, _) => quote!(map.next_value()?),
    }
}

fn serialize(name: &str, fields: &[Field], gvk: Option<&Gvk>) -> TokenStream {
    let ty = ident(name);
    let type_meta = gvk.map(|g| {
        let api_version = g.api_version();
        let kind = &g.kind;
        quote! {
            state.serialize_field("apiVersion", #api_version)?;
            state.serialize_field("kind", #kind)?;
        }
    });
    let fixed = fields
        .iter()
        .filter(|f| f.required && f.gate.is_none())
        .count()
        + if gvk.is_some() { 2 } else { 0 };
    let mut counts: Vec<TokenStream> = Vec::new();
    if fixed > 0 {
        counts.push(quote!(#fixed));
    }
    counts.extend(
        fields
            .iter()
            .filter(|f| !f.required && f.gate.is_none())
            .map(|f| {
                let n = ident(&f.rust);
                quote!(usize::from(self.#n.is_some()))
            }),
    );
    if counts.is_empty() {
        counts.push(quote!(0usize));
    }
    // A gated field adds to the count in the versions that have it.
    let gated_counts = fields.iter().filter(|f| f.gate.is_some()).map(|f| {
        let n = ident(&f.rust);
        let cfg = cfg(f.gate.as_ref());
        let add = if f.required {
            quote!(1)
        } else {
            quote!(usize::from(self.#n.is_some()))
        };
        quote! {
            #cfg
            let len = len + #add;
        }
    });
    let writes = fields.iter().map(|f| {
        let n = ident(&f.rust);
        let json = &f.json;
        let float = f.ty == Ty::F64;
        let cfg = cfg(f.gate.as_ref());
        if f.required {
            let value = if float {
                quote!(&crate::serde_util::GoFloat(self.#n))
            } else {
                quote!(&self.#n)
            };
            quote!(#cfg state.serialize_field(#json, #value)?;)
        } else {
            let value = if float {
                quote!(&crate::serde_util::GoFloat(*value))
            } else {
                quote!(value)
            };
            quote! {
                #cfg
                if let Some(value) = &self.#n {
                    state.serialize_field(#json, #value)?;
                }
            }
        }
    });
    let state_mut = if fields.is_empty() && gvk.is_none() {
        quote!()
    } else {
        quote!(mut)
    };
    quote! {
        impl serde::Serialize for #ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct as _;
                let len = #(#counts)+*;
                #(#gated_counts)*
                let #state_mut state = serializer.serialize_struct(#name, len)?;
                #type_meta
                #(#writes)*
                state.end()
            }
        }
    }
}

/// `Serialize` of a kind's struct `ty`, written out: `apiVersion` and
/// `kind` first, then what `body` puts into `map` (a `SerializeMap`).
pub(crate) fn kind_serialize(
    ty: &proc_macro2::Ident,
    api_version: &str,
    kind: &str,
    body: TokenStream,
) -> TokenStream {
    quote! {
        impl serde::Serialize for #ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("apiVersion", #api_version)?;
                map.serialize_entry("kind", #kind)?;
                #body
                map.end()
            }
        }
    }
}
