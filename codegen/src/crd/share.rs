//! Structurally identical nested types of one module become one type.
//!
//! Two generated types of the same `<group>::<version>` module are
//! identical when they are the same kind of type (struct, string enum,
//! untagged enum) with the same fields (JSON and Rust names, types with
//! references compared by what they became, required, boxed, default) or
//! the same variants, and keep unknown fields alike. Descriptions and
//! validation notes do not count: the type keeps those of the member whose
//! name it keeps. Kinds are never merged (each is its own resource), but
//! their fields point at the shared types.
//!
//! The merge works bottom-up until nothing changes (a parent becomes
//! identical once its children are), so Argo's many copies of a container
//! become one `…Container` type per module.
//!
//! **Naming rule:** the merged type takes the shortest of its members'
//! names, the first in byte order among equally short ones. Every member's
//! name was already unique in the module (`Lowerer::claim`), so the kept
//! name cannot clash with another type; the dropped names are not reused.
//! Members and names follow from the CRDs alone (sorted by group and kind
//! before lowering), not from the order of the input files, so the output
//! is the same for the same CRDs.

use std::collections::BTreeMap;

use crate::ir::{Field, Ir, Ty, TypeDef, TypeKind};

/// Merges the identical nested types of `ir` (module docs) and points every
/// reference at the kept one.
pub fn share(ir: &mut Ir) {
    let mut canon: BTreeMap<String, String> = BTreeMap::new();
    loop {
        // signature → members (in key order).
        let mut classes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (key, t) in ir.types.iter().filter(|(_, t)| mergeable(t)) {
            classes
                .entry(signature(t, &canon))
                .or_default()
                .push(key.as_str());
        }
        let mut next = BTreeMap::new();
        for members in classes.values().filter(|m| m.len() > 1) {
            let keep = members
                .iter()
                .min_by(|a, b| {
                    let (na, nb) = (&ir.types[**a].name, &ir.types[**b].name);
                    (na.len(), na).cmp(&(nb.len(), nb))
                })
                .copied()
                .unwrap_or_default();
            for m in members.iter().filter(|m| **m != keep) {
                next.insert((*m).to_owned(), keep.to_owned());
            }
        }
        if next == canon {
            break;
        }
        canon = next;
    }
    if canon.is_empty() {
        return;
    }
    for gone in canon.keys() {
        ir.types.remove(gone);
    }
    for t in ir.types.values_mut() {
        match &mut t.kind {
            TypeKind::Struct { fields } => {
                for f in fields {
                    redirect(&mut f.ty, &canon);
                }
            }
            TypeKind::Untagged { variants } => {
                for (_, ty) in variants {
                    redirect(ty, &canon);
                }
            }
            _ => {}
        }
    }
}

/// A nested type of a version module (not a kind, not a reused model).
fn mergeable(t: &TypeDef) -> bool {
    t.modules.len() == 2 && t.gvk.is_none() && t.resource.is_none()
}

fn redirect(ty: &mut Ty, canon: &BTreeMap<String, String>) {
    match ty {
        Ty::Vec(inner) | Ty::Map(inner) => redirect(inner, canon),
        Ty::Ref(key) => {
            if let Some(to) = canon.get(key) {
                key.clone_from(to);
            }
        }
        _ => {}
    }
}

fn ty_sig(ty: &Ty, canon: &BTreeMap<String, String>, out: &mut String) {
    match ty {
        Ty::Vec(inner) => {
            out.push('[');
            ty_sig(inner, canon, out);
            out.push(']');
        }
        Ty::Map(inner) => {
            out.push('{');
            ty_sig(inner, canon, out);
            out.push('}');
        }
        Ty::Ref(key) => {
            out.push('@');
            out.push_str(canon.get(key).unwrap_or(key));
        }
        other => out.push_str(&format!("{other:?}")),
    }
}

fn field_sig(f: &Field, canon: &BTreeMap<String, String>, out: &mut String) {
    out.push_str(&format!(
        "({:?} {:?} {} {} {:?} ",
        f.json, f.rust, f.required, f.boxed, f.default
    ));
    ty_sig(&f.ty, canon, out);
    out.push(')');
}

/// What two identical types have in common (module docs), references
/// written as what they became so far.
fn signature(t: &TypeDef, canon: &BTreeMap<String, String>) -> String {
    let mut out = format!("{:?} {:?} ", t.modules, t.unknown_fields);
    match &t.kind {
        TypeKind::Struct { fields } => {
            out.push_str("struct ");
            for f in fields {
                field_sig(f, canon, &mut out);
            }
        }
        TypeKind::Enum { variants, other } => {
            out.push_str(&format!("enum {variants:?} {other:?}"));
        }
        TypeKind::Untagged { variants } => {
            out.push_str("untagged ");
            for (name, ty) in variants {
                out.push_str(&format!("({name:?} "));
                ty_sig(ty, canon, &mut out);
                out.push(')');
            }
        }
        // Never under a version module; kept apart by their key.
        TypeKind::Opaque | TypeKind::HandWritten { .. } | TypeKind::Reuse { .. } => {
            out.push_str(&format!("other {}", t.definition));
        }
    }
    out
}
