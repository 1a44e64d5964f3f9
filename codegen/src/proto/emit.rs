//! Emits the protobuf codecs of the joined structs into `kubeset-api`:
//! `src/protobuf/generated/<module path with _>/<type>.rs`, one
//! `impl crate::protobuf::Message` per struct, one directory per
//! group-version behind its cargo feature. Each field is one call to a
//! helper of `crate::protobuf::field` (generic over the element type only,
//! never inlined), so the per-struct code LLVM optimises stays a `match`
//! of calls: inlining the wire helpers into every `merge_field` made the
//! `protobuf` feature cost 8–10× kubeset-api's release build. The hand-written
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
        let api_version = g.api_version();
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
    // Only boxed messages go without the field helpers.
    let helpers = codec.fields.iter().any(|f| !f.boxed).then(|| {
        quote!(
            use crate::protobuf::field as f;
        )
    });
    quote! {
        #helpers
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

/// `put(buf, n, v)` for one element `v: &T` (the boxed message fields'
/// path, which the [`field_call`] helpers do not take).
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

/// The helper of `crate::protobuf::field` for a field's shape and
/// presence: `prefix` + `""`/`opt_` (plain or `Option`) + the shape's
/// name. A Go value field is an `Option` whose zero Go writes and reads as
/// unset (`nonzero` to read, `put_or_zero` to write, for single values; a
/// list or map of zero length is not written either way).
fn field_call(f: &FieldCodec, write: bool) -> TokenStream {
    let shape = match &f.shape {
        Shape::One(_) => "",
        Shape::Repeated(_) => "list",
        Shape::Map(_) => "map",
        Shape::Embedded(_) => unreachable!("embedded fields are dispatched inline"),
    };
    let name = match (f.required, f.zero_is_unset && shape.is_empty(), write) {
        (true, _, true) if shape.is_empty() => "put".to_owned(),
        (true, _, true) => format!("put_{shape}"),
        (true, _, false) if shape.is_empty() => "one".to_owned(),
        (true, _, false) => shape.to_owned(),
        (false, true, true) => "put_or_zero".to_owned(),
        (false, true, false) => "nonzero".to_owned(),
        (false, false, true) if shape.is_empty() => "put_opt".to_owned(),
        (false, false, true) => format!("put_opt_{shape}"),
        (false, false, false) if shape.is_empty() => "opt".to_owned(),
        (false, false, false) => format!("opt_{shape}"),
    };
    let helper = ident(&name);
    quote!(f::#helper)
}

fn encode_one(f: &FieldCodec) -> TokenStream {
    let n = Literal::u32_unsuffixed(f.number);
    let n = quote!(#n);
    if let Shape::Embedded(inner) = &f.shape {
        let encodes = by_number(inner).into_iter().map(encode_field);
        return quote! {
            f::put_embedded(buf, #n, &|buf| {
                #(#encodes)*
            });
        };
    }
    let name = ident(&f.rust);
    if !f.boxed {
        let call = field_call(f, true);
        return quote!(#call(buf, #n, &self.#name););
    }
    // A boxed message (`JSONSchemaProps`' recursion): `&Box<T>` derefs to
    // `&T`.
    let v = quote!(&**v);
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
    if f.required {
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
    if f.boxed {
        // A boxed message: merged in place, a new box charged.
        return if f.required {
            quote!(w::merge(&mut *#target, value, budget)?)
        } else {
            quote!(w::merge_boxed(&mut #target, value, budget)?)
        };
    }
    let call = field_call(f, false);
    quote!(#call(&mut #target, value, budget)?)
}
