//! Emits the protobuf codecs of the joined structs into `kubeset-api`:
//! `src/protobuf/generated/<module path with _>/<type>.rs`, one
//! `impl crate::protobuf::Message` per struct (non-generic per-struct code
//! calling the shared helpers of `crate::protobuf::wire`), one directory
//! per group-version behind its cargo feature. The hand-written
//! `src/protobuf/mod.rs` declares `mod generated` behind the `protobuf`
//! feature.

use std::collections::BTreeMap;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::join::{Codec, Codecs, Elem, FieldCodec, Shape};
use crate::emit::{GENERATED_MARKER, Output, format};
use crate::error::CodegenError;
use crate::ir::Ir;
use crate::names;
use crate::names::ident;

pub use super::{FEATURE, GENERATED_DIR};

fn preamble(line: &str) -> String {
    format!("{GENERATED_MARKER}\n// {line}\n")
}

/// Reads `<spec_dir>/proto/` (if any), joins it to `ir` with the Go
/// value-field table at `go_values` (read only when there are proto files)
/// and adds the codec files to `out`: the one call of `cargo xtask codegen`.
pub fn emit_dir(
    spec_dir: &std::path::Path,
    go_values: &std::path::Path,
    ir: &Ir,
    spec_label: &str,
    out: &mut Output,
) -> Result<(), CodegenError> {
    let codecs = match super::load(spec_dir)? {
        Some(set) => {
            let text =
                std::fs::read_to_string(go_values).map_err(|source| super::ProtoError::Read {
                    path: go_values.to_owned(),
                    source,
                })?;
            let label = go_values
                .file_name()
                .unwrap_or(go_values.as_os_str())
                .to_string_lossy()
                .into_owned();
            let values = super::GoValues::parse(&label, &text)?;
            Some(super::join::join(ir, &set, &values, &label)?)
        }
        None => None,
    };
    emit(ir, codecs.as_ref(), spec_label, out)
}

/// Adds the codec files to `out` (only `mod.rs`, empty, when the version
/// has no proto files).
pub fn emit(
    ir: &Ir,
    codecs: Option<&Codecs>,
    spec_label: &str,
    out: &mut Output,
) -> Result<(), CodegenError> {
    // Leaf module directory → (feature, type files).
    // (type file, its version gate).
    type Files = Vec<(String, TokenStream)>;
    let mut modules: BTreeMap<String, (Option<String>, Files)> = BTreeMap::new();
    for (definition, codec) in codecs.map(|c| &c.types).into_iter().flatten() {
        let Some(t) = ir.types.get(definition) else {
            continue;
        };
        let dir = t.modules.join("_");
        let file = names::snake_case(&t.name);
        let path = format!("{GENERATED_DIR}/{dir}/{file}.rs");
        let modules_path = t.modules.iter().map(|m| ident(m));
        let ty = ident(&t.name);
        let tokens = impl_message(&quote!(crate:: #(#modules_path ::)* #ty), codec);
        let pre = preamble(&format!(
            "Source: message `{}` of {spec_label}/proto, definition `{definition}`.",
            codec.message
        ));
        out.files.insert(path.clone(), format(&path, tokens, &pre)?);
        let entry = modules
            .entry(dir)
            .or_insert((t.feature.clone(), Vec::new()));
        entry.1.push((file, crate::versions::cfg(t.gate.as_ref())));
    }
    let mut top = Vec::new();
    for (dir, (feature, files)) in &modules {
        let id = ident(dir);
        let cfg = feature.as_ref().map(|f| quote!(#[cfg(feature = #f)]));
        top.push(quote!(#cfg mod #id;));
        let items = files.iter().map(|(f, cfg)| {
            let f = ident(f);
            quote!(#cfg mod #f;)
        });
        let path = format!("{GENERATED_DIR}/{dir}/mod.rs");
        let tokens = quote!(#(#items)*);
        let pre = preamble(&format!("Source: {spec_label}/proto."));
        out.files.insert(path.clone(), format(&path, tokens, &pre)?);
    }
    let kinds_path = format!("{GENERATED_DIR}/kinds.rs");
    let kinds = kinds(ir, codecs);
    let pre = preamble(&format!("Source: {spec_label}/proto."));
    out.files
        .insert(kinds_path.clone(), format(&kinds_path, kinds, &pre)?);
    top.push(quote!(
        pub(crate) mod kinds;
    ));
    let path = format!("{GENERATED_DIR}/mod.rs");
    let doc = if codecs.is_some() {
        " Generated protobuf codecs, one module per group-version."
    } else {
        " No proto files for this version: the models are JSON-only."
    };
    let tokens = quote! {
        #![doc = #doc]
        #(#top)*
    };
    let pre = preamble(&format!("Source: {spec_label}/proto."));
    out.files.insert(path.clone(), format(&path, tokens, &pre)?);
    Ok(())
}

/// The table of every top-level kind with a codec (one
/// `apiVersion`/`kind` each), sorted by both, for
/// `crate::protobuf::dynamic`.
fn kinds(ir: &Ir, codecs: Option<&Codecs>) -> TokenStream {
    let mut rows: Vec<(String, String, TokenStream)> = Vec::new();
    for definition in codecs.map(|c| c.types.keys()).into_iter().flatten() {
        let Some(t) = ir.types.get(definition) else {
            continue;
        };
        let Some(g) = &t.gvk else {
            continue;
        };
        let api_version = if g.group.is_empty() {
            g.version.clone()
        } else {
            format!("{}/{}", g.group, g.version)
        };
        let modules = t.modules.iter().map(|m| ident(m));
        let ty = ident(&t.name);
        let path = quote!(crate:: #(#modules ::)* #ty);
        let cfg = t.feature.as_ref().map(|f| quote!(#[cfg(feature = #f)]));
        let kind = &g.kind;
        let versions = crate::versions::cfg(t.gate.as_ref());
        let row = quote! {
            #cfg
            #versions
            Kind::of::<#path>(#api_version, #kind),
        };
        rows.push((api_version, g.kind.clone(), row));
    }
    rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let rows = rows.into_iter().map(|(_, _, r)| r);
    quote! {
        //! Every top-level kind with a protobuf codec, by apiVersion and kind.

        use crate::protobuf::dynamic::Kind;

        /// Sorted by apiVersion, then kind.
        pub(crate) static KINDS: &[Kind] = &[#(#rows)*];
    }
}

fn impl_message(ty: &TokenStream, codec: &Codec) -> TokenStream {
    if codec.opaque || codec.fields.is_empty() {
        return quote! {
            impl crate::protobuf::Message for #ty {
                fn encode_fields(&self, _buf: &mut Vec<u8>) {}
                fn merge_field(&mut self, _number: u32, _value: w::Value<'_>, _budget: &mut w::Budget) -> Result<(), crate::protobuf::DecodeError> {
                    Ok(())
                }
            }
            use crate::protobuf::wire as w;
        };
    }
    let encodes = by_number(&codec.fields).into_iter().map(encode_field);
    let dispatch = dispatch(&codec.fields);
    quote! {
        use crate::protobuf::wire as w;

        impl crate::protobuf::Message for #ty {
            fn encode_fields(&self, buf: &mut Vec<u8>) {
                #(#encodes)*
            }
            fn merge_field(&mut self, number: u32, value: w::Value<'_>, budget: &mut w::Budget) -> Result<(), crate::protobuf::DecodeError> {
                // Only fields that allocate or nest need the budget.
                let _ = budget;
                #dispatch
                Ok(())
            }
        }
    }
}

/// Fields in the order Go writes them: by field number (gogo-protobuf's
/// marshaller sorts them; the `.proto` files list some out of order, e.g.
/// `OwnerReference.apiVersion = 5` first).
fn by_number(fields: &[FieldCodec]) -> Vec<&FieldCodec> {
    let mut sorted: Vec<&FieldCodec> = fields.iter().collect();
    sorted.sort_by_key(|f| f.number);
    sorted
}

/// The dispatch on the field number: a `match`, or an `if` for one field.
fn dispatch(fields: &[FieldCodec]) -> TokenStream {
    if let [f] = fields
        && f.gate.is_none()
    {
        let n = Literal::u32_unsuffixed(f.number);
        let read = decode_field(f);
        return quote! {
            if number == #n {
                #read;
            }
        };
    }
    let arms = fields.iter().map(|f| {
        let n = Literal::u32_unsuffixed(f.number);
        let read = decode_field(f);
        let cfg = crate::versions::cfg(f.gate.as_ref());
        quote!(#cfg #n => #read,)
    });
    quote! {
        match number {
            #(#arms)*
            _ => {}
        }
    }
}

/// `put(buf, n, v)` for one element `v: &T`.
fn put_elem(elem: &Elem, n: &TokenStream, v: &TokenStream) -> TokenStream {
    match elem {
        Elem::Scalar(s) => {
            let f = ident(&format!("put_{}", s.helper()));
            quote!(w::#f(buf, #n, #v))
        }
        Elem::Message => quote!(w::put_message(buf, #n, #v)),
        Elem::Time { micro: false } => quote!(w::put_time(buf, #n, #v)),
        Elem::Time { micro: true } => quote!(w::put_micro_time(buf, #n, #v)),
        Elem::Wrapped(s) => {
            let f = ident(&format!("put_{}", s.helper()));
            quote!(w::put_wrapped(buf, #n, #v, w::#f))
        }
    }
}

fn encode_field(f: &FieldCodec) -> TokenStream {
    let cfg = crate::versions::cfg(f.gate.as_ref());
    let encode = encode_one(f);
    quote! {
        #cfg
        #encode
    }
}

fn encode_one(f: &FieldCodec) -> TokenStream {
    let n = Literal::u32_unsuffixed(f.number);
    let n = quote!(#n);
    if let Shape::Embedded(inner) = &f.shape {
        let encodes = by_number(inner).into_iter().map(encode_field);
        return quote! {
            w::put_embedded(buf, #n, |buf| {
                #(#encodes)*
            });
        };
    }
    let name = ident(&f.rust);
    // `v` is `&T` (`&Box<T>` derefs to `&T` for messages).
    let v = if f.boxed { quote!(&**v) } else { quote!(v) };
    let put = match &f.shape {
        Shape::One(e) => put_elem(e, &n, &v),
        Shape::Repeated(e) => {
            let one = put_elem(e, &n, &quote!(v));
            quote!(for v in v { #one; })
        }
        Shape::Embedded(_) => quote!(),
        Shape::Map(e) => {
            let two = quote!(2);
            let one = put_elem(e, &two, &quote!(v));
            quote!(w::put_map(buf, #n, v, |buf, v| #one))
        }
    };
    if f.zero_is_unset {
        // A Go value field: Go writes its zero when unset (and reads it
        // back as unset), so kubeset writes the same bytes.
        quote! {
            {
                let zero = Default::default();
                let v = self.#name.as_ref().unwrap_or(&zero);
                #put;
            }
        }
    } else if f.required {
        quote! {
            {
                let v = &self.#name;
                #put;
            }
        }
    } else {
        quote! {
            if let Some(v) = &self.#name {
                #put;
            }
        }
    }
}

/// An expression reading one element from `value` (with `budget`).
fn read_elem(elem: &Elem) -> TokenStream {
    match elem {
        Elem::Scalar(s) => {
            let f = ident(s.helper());
            quote!(w::#f(value)?)
        }
        Elem::Message => quote!(w::message(value, budget)?),
        Elem::Time { micro: false } => quote!(w::time(value)?.unwrap_or_default()),
        Elem::Time { micro: true } => quote!(w::micro_time(value)?.unwrap_or_default()),
        Elem::Wrapped(s) => {
            let f = ident(s.helper());
            quote!(w::wrapped(value, w::#f, budget)?)
        }
    }
}

/// A `Result` reading a map entry's value.
fn read_entry_value(elem: &Elem) -> TokenStream {
    match elem {
        Elem::Scalar(s) => {
            let f = ident(s.helper());
            quote!(w::#f(value))
        }
        Elem::Message => quote!(w::message(value, budget)),
        Elem::Wrapped(s) => {
            let f = ident(s.helper());
            quote!(w::wrapped(value, w::#f, budget))
        }
        Elem::Time { .. } => {
            let read = read_elem(elem);
            quote!(Ok(#read))
        }
    }
}

fn decode_field(f: &FieldCodec) -> TokenStream {
    if let Shape::Embedded(inner) = &f.shape {
        let dispatch = dispatch(inner);
        return quote! {
            w::embedded(value, budget, &mut |number, value, budget| {
                let _ = budget;
                #dispatch
                Ok(())
            })?
        };
    }
    let name = ident(&f.rust);
    let target = quote!(self.#name);
    match &f.shape {
        Shape::One(Elem::Message) => {
            let place = match (f.required, f.boxed) {
                (true, false) => quote!(&mut #target),
                (true, true) => quote!(&mut *#target),
                (false, false) => quote!(#target.get_or_insert_with(Default::default)),
                // A new box is charged to the budget.
                (false, true) => return quote!(w::merge_boxed(&mut #target, value, budget)?),
            };
            quote!(w::merge(#place, value, budget)?)
        }
        Shape::One(Elem::Time { micro }) if !f.required => {
            let read = if *micro {
                quote!(w::micro_time(value)?)
            } else {
                quote!(w::time(value)?)
            };
            quote!(#target = #read)
        }
        Shape::One(e) => {
            let read = read_elem(e);
            if f.zero_is_unset {
                return quote!(#target = w::nonzero(#read));
            }
            if f.required {
                quote!(#target = #read)
            } else {
                quote!(#target = Some(#read))
            }
        }
        Shape::Repeated(e) => {
            let list = if f.required {
                quote!(#target)
            } else {
                quote!(#target.get_or_insert_with(Vec::new))
            };
            match e {
                Elem::Scalar(s) if s.packable() => {
                    let read = ident(s.helper());
                    let packed = if *s == super::Scalar::Double {
                        quote!(w::Packed::Fixed64)
                    } else {
                        quote!(w::Packed::Varint)
                    };
                    let list = if f.required {
                        quote!(&mut #target)
                    } else {
                        list
                    };
                    quote!(w::repeated(#list, value, w::#read, #packed, budget)?)
                }
                _ => {
                    let read = read_elem(e);
                    let list = if f.required {
                        quote!(&mut #target)
                    } else {
                        list
                    };
                    quote!({
                        let v = #read;
                        w::push(#list, v, budget)?;
                    })
                }
            }
        }
        Shape::Embedded(_) => quote!(),
        Shape::Map(e) => {
            let map = if f.required {
                quote!(#target)
            } else {
                quote!(#target.get_or_insert_with(Default::default))
            };
            let read = read_entry_value(e);
            quote! {
                {
                    let (k, v) = w::entry(value, budget, |value, budget| {
                        let _ = budget;
                        #read
                    })?;
                    #map.insert(k, v);
                }
            }
        }
    }
}
