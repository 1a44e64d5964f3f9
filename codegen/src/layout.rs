//! Inline sizes of the generated types.
//!
//! The models box a field only to break a type cycle, as k8s-openapi does
//! (`ir/lowering.rs`); a large optional struct stays inline, so a struct
//! literal written for k8s-openapi compiles unchanged. These estimates
//! document what that costs.
//!
//! The estimate follows rustc's layout of `repr(Rust)` structs: fields are
//! reordered by alignment, so a struct's size is the sum of its fields'
//! sizes rounded up to its largest alignment; `Option<T>` costs nothing when
//! `T` has a niche (an invalid bit pattern: a `String`'s capacity above
//! `isize::MAX`, a `bool`'s 254 unused values, an enum tag's unused values,
//! a `Box`'s null) and one alignment unit for a tag otherwise. The generated
//! `kubeset-api` test `layout::generated` checks every estimate against
//! `size_of`, so a wrong rule here fails there.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::CodegenError;
use crate::ir::{BTREE_MAP, Field, HAND_WRITTEN, Ir, JSON_VALUE, Layout, Ty, TypeKind, VEC};

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align) * align
}

/// A struct of fields with these layouts (`repr(Rust)`: no padding between
/// fields sorted by alignment).
fn struct_layout(fields: impl IntoIterator<Item = Layout>) -> Layout {
    let mut size = 0;
    let mut align = 1;
    let mut niches = 0;
    for f in fields {
        size += f.size;
        align = align.max(f.align);
        niches = niches.max(f.niches);
    }
    Layout::new(round_up(size, align), align, niches)
}

fn ty_layout(
    ty: &Ty,
    definition: &str,
    known: &BTreeMap<String, Layout>,
) -> Result<Layout, CodegenError> {
    Ok(match ty {
        Ty::String | Ty::Bytes | Ty::Vec(_) => VEC,
        Ty::Map(_) => BTREE_MAP,
        Ty::Bool => Layout::new(1, 1, 254),
        Ty::I32 => Layout::new(4, 4, 0),
        Ty::I64 | Ty::F64 => Layout::new(8, 8, 0),
        Ty::Value => JSON_VALUE,
        Ty::Ref(r) => *known
            .get(r.as_str())
            .ok_or_else(|| CodegenError::UnknownLayout {
                definition: definition.to_owned(),
                target: r.clone(),
            })?,
    })
}

fn field_layout(
    f: &Field,
    definition: &str,
    known: &BTreeMap<String, Layout>,
) -> Result<Layout, CodegenError> {
    let inner = if f.boxed {
        Layout::BOX
    } else {
        ty_layout(&f.ty, definition, known)?
    };
    Ok(if f.required { inner } else { inner.option() })
}

/// Definitions in an order where every type comes after the types it holds
/// inline (through a field that is neither boxed, nor a list or map).
fn inline_order(ir: &Ir) -> Result<Vec<String>, CodegenError> {
    fn visit(
        ir: &Ir,
        name: &str,
        done: &mut BTreeSet<String>,
        active: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) -> Result<(), CodegenError> {
        if done.contains(name) {
            return Ok(());
        }
        if !active.insert(name.to_owned()) {
            return Err(CodegenError::InlineCycle {
                definition: name.to_owned(),
            });
        }
        if let Some(TypeKind::Struct { fields }) = ir.types.get(name).map(|t| &t.kind) {
            for f in fields {
                if let (Ty::Ref(r), false) = (&f.ty, f.boxed) {
                    visit(ir, r, done, active, order)?;
                }
            }
        }
        active.remove(name);
        done.insert(name.to_owned());
        order.push(name.to_owned());
        Ok(())
    }
    let mut done = BTreeSet::new();
    let mut active = BTreeSet::new();
    let mut order = Vec::new();
    for name in ir.types.keys() {
        visit(ir, name, &mut done, &mut active, &mut order)?;
    }
    Ok(order)
}

fn type_layout(
    ir: &Ir,
    name: &str,
    known: &BTreeMap<String, Layout>,
) -> Result<Layout, CodegenError> {
    let t = ir
        .types
        .get(name)
        .ok_or_else(|| CodegenError::UnknownLayout {
            definition: name.to_owned(),
            target: name.to_owned(),
        })?;
    match &t.kind {
        TypeKind::Struct { fields } => {
            let fields = fields
                .iter()
                .map(|f| field_layout(f, name, known))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(struct_layout(fields))
        }
        // `serde_json::Map` (a `BTreeMap`) inside.
        TypeKind::Opaque => Ok(BTREE_MAP),
        TypeKind::HandWritten { path } => HAND_WRITTEN
            .iter()
            .find(|h| h.path == *path)
            .map(|h| h.layout)
            .ok_or_else(|| CodegenError::UnknownLayout {
                definition: name.to_owned(),
                target: (*path).to_owned(),
            }),
        // CRD-only kinds: the built-in path never lays them out.
        TypeKind::Enum { .. } | TypeKind::Untagged { .. } | TypeKind::Reuse { .. } => {
            Err(CodegenError::UnknownLayout {
                definition: name.to_owned(),
                target: t.name.clone(),
            })
        }
    }
}

/// The estimated layout of every type of `ir`, by definition name.
pub fn layouts(ir: &Ir) -> Result<BTreeMap<String, Layout>, CodegenError> {
    let mut known = BTreeMap::new();
    for name in inline_order(ir)? {
        let layout = type_layout(ir, &name, &known)?;
        known.insert(name, layout);
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_uses_a_niche_or_adds_a_tag() {
        assert_eq!(VEC.option().size, 24);
        assert_eq!(BTREE_MAP.option().size, 32);
        assert_eq!(Layout::new(4, 4, 0).option().size, 8);
        assert_eq!(Layout::new(0, 1, 0).option().size, 1);
        // `Option<Option<Box<T>>>` needs a tag: the box's one niche is used.
        assert_eq!(Layout::BOX.option().option().size, 16);
    }

    #[test]
    fn structs_round_up_to_their_largest_alignment() {
        let l = struct_layout([
            Layout::new(1, 1, 254),
            Layout::new(8, 4, 254),
            Layout::new(24, 8, 1),
        ]);
        assert_eq!(l, Layout::new(40, 8, 254));
        assert_eq!(struct_layout([]), Layout::new(0, 1, 0));
    }
}
