//! Structurally identical nested types of one module become one type.
//!
//! Two generated types of the same `<group>::<version>` module are
//! identical when they are the same kind of type (struct, string enum,
//! untagged enum) with the same fields (JSON and Rust names, types with
//! references compared by what they became, required, boxed, default) or
//! the same variants, and keep unknown fields alike. Descriptions and
//! validation notes do not count: the type keeps the description when
//! every member has the same one, else it lists where it is used. Kinds
//! are never merged (each is its own resource), but their fields point at
//! the shared types.
//!
//! The merge works bottom-up until nothing changes (a parent becomes
//! identical once its children are), so Argo's many copies of a container
//! become one `…Container` type per module.
//!
//! **Naming rule:** a shared type's name must fit every use, so it is made
//! of what the members' names have in common, never one member's name.
//! Names are split into words (`ScaleUpPolicies` → `Scale`, `Up`,
//! `Policies`) and the shared name is, of these candidates, the first that
//! is a valid type name and no other type's name or file in the module:
//!
//! 1. the words every member's name has, in order (a common subsequence):
//!    siblings keep their parent's name and their common part
//!    (`…BehaviorScaleUp`, `…BehaviorScaleDown` → `…BehaviorScale`; their
//!    `policies` → `…BehaviorScalePolicies`), kinds' copies what their
//!    paths share (`WorkflowSpec`, `ClusterWorkflowTemplateSpec`,
//!    `CronWorkflowSpecWorkflowSpec` → `WorkflowSpec`; two kinds' `type`
//!    enums `FlattenEnumSpecType`, `InternalSpecActionsType` → `SpecType`);
//! 2. those words and the members' two or three distinct last words joined
//!    by `Or` (`…MutexHolding`, `…MutexWaiting`, whose common part is their
//!    parent's name → `…MutexHoldingOrWaiting`);
//! 3. the words all names start and end with around the two or three
//!    words where they part (`PipelineSpecFinallyWorkspaces`,
//!    `PipelineSpecTasksWorkspaces` → `PipelineSpecFinallyOrTasksWorkspaces`).
//!
//! Classes whose common name is one of their members' are named first,
//! then larger classes before smaller ones.
//! When no candidate fits, the class is split by the members' last words
//! (Tekton's thirty `…Params` and one `PipelineRunStatusResults` of the
//! same shape: the `Params` share, the `Results` stays alone) and merged
//! again; a part that still fits no name stays unshared, each member its
//! own type. Parents are recompared each time (they may no longer be
//! identical). Every member's name was unique in the module
//! (`Lowerer::claim`) and each given name is checked against those given
//! before, so no two types meet. Members and names follow from the CRDs
//! alone (sorted by group and kind before lowering), not from the order of
//! the input files, so the output is the same for the same CRDs.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Field, Ir, Ty, TypeDef, TypeKind};

/// One shared type: the name it was given and the JSON paths of its
/// members (for `--report`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shared {
    /// The module, `group::version`.
    pub module: String,
    /// The name the shared type was given.
    pub name: String,
    /// The members' former names.
    pub members: Vec<String>,
}

/// Merges the identical nested types of `ir` (module docs), points every
/// reference at the kept one and answers what was shared.
pub fn share(ir: &mut Ir) -> Vec<Shared> {
    // key → what keeps it apart from identical types: its last word first,
    // then the key itself.
    let mut apart: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let canon = classes(ir, &apart);
        match names(ir, &canon) {
            Ok(named) => return apply(ir, &canon, &named),
            Err(unnamed) => {
                for key in unnamed {
                    let by = match (apart.get(&key), words(&ir.types[&key].name).last()) {
                        (None, Some(last)) => (*last).to_owned(),
                        _ => key.clone(),
                    };
                    apart.insert(key, by);
                }
            }
        }
    }
}

/// member key → kept key, for the identical types of `ir` (those in
/// `apart` only with the same mark), to a fixed point.
fn classes(ir: &Ir, apart: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut canon: BTreeMap<String, String> = BTreeMap::new();
    loop {
        // signature → members (in key order).
        let mut classes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (key, t) in ir.types.iter().filter(|(_, t)| mergeable(t)) {
            let mut sig = signature(t, &canon);
            if let Some(mark) = apart.get(key) {
                sig.push_str(" apart ");
                sig.push_str(mark);
            }
            classes.entry(sig).or_default().push(key.as_str());
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
            return canon;
        }
        canon = next;
    }
}

/// The name of each class (kept key → name), or the members of the
/// classes no name fits (module docs).
fn names(
    ir: &Ir,
    canon: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Vec<String>> {
    let mut members: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (m, keep) in canon {
        members.entry(keep.as_str()).or_default().push(m.as_str());
    }
    // (modules, name or file) of every type that stays as it is.
    let mut taken: BTreeSet<(&[String], String)> = BTreeSet::new();
    for (key, t) in &ir.types {
        if !canon.contains_key(key) && !members.contains_key(key.as_str()) {
            taken.insert((t.modules.as_slice(), t.name.clone()));
            taken.insert((t.modules.as_slice(), crate::names::type_file(&t.name)));
            if t.resource.is_some() {
                let list = crate::names::list_alias(&t.name);
                taken.insert((t.modules.as_slice(), crate::names::type_file(&list)));
                taken.insert((t.modules.as_slice(), list));
            }
        }
    }
    let mut named = BTreeMap::new();
    let mut unnamed = Vec::new();
    // (kept key, members' names, candidate names), the classes whose
    // common name is one of their members' first.
    let mut order: Vec<(&str, Vec<&str>, Vec<String>)> = members
        .iter()
        .map(|(keep, others)| {
            let all: Vec<&str> = std::iter::once(ir.types[*keep].name.as_str())
                .chain(others.iter().map(|m| ir.types[*m].name.as_str()))
                .collect();
            let candidates = candidate_names(&all);
            (*keep, all, candidates)
        })
        .collect();
    order.sort_by_key(|(_, all, c)| {
        (
            !c.first().is_some_and(|n| all.contains(&n.as_str())),
            std::cmp::Reverse(all.len()),
        )
    });
    for (keep, _, candidates) in order {
        let modules = ir.types[keep].modules.as_slice();
        let fits = candidates.into_iter().find(|n| {
            crate::names::type_name(n).as_deref() == Some(n.as_str())
                && !taken.contains(&(modules, n.clone()))
                && !taken.contains(&(modules, crate::names::type_file(n)))
        });
        match fits {
            Some(name) => {
                taken.insert((modules, crate::names::type_file(&name)));
                taken.insert((modules, name.clone()));
                named.insert(keep.to_owned(), name);
            }
            None => {
                unnamed.push(keep.to_owned());
                unnamed.extend(members[keep].iter().map(|m| (*m).to_owned()));
            }
        }
    }
    if unnamed.is_empty() {
        Ok(named)
    } else {
        Err(unnamed)
    }
}

/// The words of a type name: a capital starts one, as does the last
/// capital of a run followed by a small letter (`HTTPGet` → `HTTP`,
/// `Get`); digits stay with their word.
pub(crate) fn words(name: &str) -> Vec<&str> {
    let b = name.as_bytes();
    let mut starts = vec![0];
    for i in 1..b.len() {
        let (prev, cur) = (b[i - 1], b[i]);
        let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let start = cur.is_ascii_uppercase()
            && (prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower));
        if start {
            starts.push(i);
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(n, &s)| &name[s..starts.get(n + 1).copied().unwrap_or(name.len())])
        .collect()
}

/// The names a class may take, best first: the words its members' names
/// have in common ([`common_name`]); then those followed by the members'
/// distinct last words joined by `Or`, when there are two or three
/// (`…MutexHolding`, `…MutexWaiting` → `…MutexHoldingOrWaiting`, where
/// `…Mutex` is their parent's name); then the head and tail all names
/// share around the two or three words where they part
/// (`PipelineSpecFinallyWorkspaces`, `PipelineSpecTasksWorkspaces` →
/// `PipelineSpecFinallyOrTasksWorkspaces`).
fn candidate_names(names: &[&str]) -> Vec<String> {
    let Some(common) = common_name(names) else {
        return Vec::new();
    };
    let last: BTreeSet<&str> = names
        .iter()
        .filter_map(|n| words(n).last().copied())
        .collect();
    let mut out = vec![common.clone()];
    if (2..=3).contains(&last.len()) {
        let tail: Vec<&str> = last.into_iter().collect();
        let mut either = common;
        for (i, w) in tail.iter().enumerate() {
            if i > 0 {
                either.push_str("Or");
            }
            either.push_str(w);
        }
        out.push(either);
    }
    // The common head and tail around the words where the names part.
    let split: Vec<Vec<&str>> = names.iter().map(|n| words(n)).collect();
    let shortest = split.iter().map(Vec::len).min().unwrap_or(0);
    let head = (0..shortest)
        .take_while(|&i| split.iter().all(|w| w[i] == split[0][i]))
        .count();
    let tail = (0..shortest - head)
        .take_while(|&i| {
            split
                .iter()
                .all(|w| w[w.len() - 1 - i] == split[0][split[0].len() - 1 - i])
        })
        .count();
    // Every name has a word there (none is only the head and tail).
    let parting: Option<BTreeSet<&str>> = split
        .iter()
        .map(|w| (w.len() > head + tail).then(|| w[head]))
        .collect();
    if let Some(parting) = parting.filter(|p| (2..=3).contains(&p.len())) {
        let first = &split[0];
        let mut name: String = first[..head].concat();
        name.push_str(&parting.into_iter().collect::<Vec<_>>().join("Or"));
        name.push_str(&first[first.len() - tail..].concat());
        out.push(name);
    }
    out
}

/// The words every one of `names` has, in their order (a common
/// subsequence, folded name by name: the longest one of each pair); `None`
/// when they have none.
pub(crate) fn common_name(names: &[&str]) -> Option<String> {
    let mut common: Vec<&str> = words(names.first()?);
    for name in &names[1..] {
        common = lcs(&common, &words(name));
    }
    (!common.is_empty()).then(|| common.concat())
}

/// The longest common subsequence of two word lists (the earliest of
/// equally long ones).
fn lcs<'a>(a: &[&'a str], b: &[&str]) -> Vec<&'a str> {
    // len[i][j]: the answer's length for a[i..] and b[j..].
    let mut len = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            len[i][j] = if a[i] == b[j] {
                len[i + 1][j + 1] + 1
            } else {
                len[i + 1][j].max(len[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            out.push(a[i]);
            i += 1;
            j += 1;
        } else if len[i + 1][j] >= len[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Drops the members, renames the kept types and redirects references.
fn apply(
    ir: &mut Ir,
    canon: &BTreeMap<String, String>,
    named: &BTreeMap<String, String>,
) -> Vec<Shared> {
    let mut report: BTreeMap<&str, Vec<TypeDef>> = BTreeMap::new();
    for (gone, keep) in canon {
        if let Some(t) = ir.types.remove(gone) {
            report.entry(keep.as_str()).or_default().push(t);
        }
    }
    let mut shared = Vec::new();
    for (keep, gone) in report {
        let Some(t) = ir.types.get_mut(keep) else {
            continue;
        };
        let mut members: Vec<String> = gone.iter().map(|g| g.name.clone()).collect();
        members.push(t.name.clone());
        members.sort();
        if gone.iter().any(|g| g.description != t.description) {
            t.description = None;
        }
        let mut paths: Vec<String> = gone
            .iter()
            .chain(std::iter::once(&*t))
            .filter_map(|g| g.definition.split_once('#').map(|(_, p)| format!("`{p}`")))
            .collect();
        paths.sort();
        paths.dedup();
        const SHOWN: usize = 3;
        let more = paths.len().saturating_sub(SHOWN);
        paths.truncate(SHOWN);
        let mut note = format!("Shared by identical schemas at {}", paths.join(", "));
        if more > 0 {
            note.push_str(&format!(" and {more} more"));
        }
        t.notes.push(note);
        if let Some(name) = named.get(keep) {
            t.name.clone_from(name);
        }
        shared.push(Shared {
            module: t.modules.join("::"),
            name: t.name.clone(),
            members,
        });
    }
    for t in ir.types.values_mut() {
        match &mut t.kind {
            TypeKind::Struct { fields } => {
                for f in fields {
                    redirect(&mut f.ty, canon);
                }
            }
            TypeKind::Untagged { variants } => {
                for (_, ty) in variants {
                    redirect(ty, canon);
                }
            }
            _ => {}
        }
    }
    shared.sort();
    shared
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

#[cfg(test)]
mod tests {
    use super::{common_name, words};

    #[test]
    fn words_split_at_capitals_and_acronyms() {
        assert_eq!(words("HTTPGetAction"), ["HTTP", "Get", "Action"]);
        assert_eq!(words("ScaleUp2Policies"), ["Scale", "Up2", "Policies"]);
        assert_eq!(words("Foo"), ["Foo"]);
    }

    #[test]
    fn the_shared_name_is_the_common_head_and_tail() {
        let cases: [(&[&str], &str); 6] = [
            (&["BehaviorScaleUp", "BehaviorScaleDown"], "BehaviorScale"),
            (
                &["BehaviorScaleUpPolicies", "BehaviorScaleDownPolicies"],
                "BehaviorScalePolicies",
            ),
            (
                &["FooStatusConditions", "BarStatusConditions"],
                "StatusConditions",
            ),
            (&["SpecPort", "SpecPortPort"], "SpecPort"),
            (
                &["FlattenEnumSpecType", "InternalSpecActionsType"],
                "SpecType",
            ),
            (
                &[
                    "WorkflowSpec",
                    "ClusterWorkflowTemplateSpec",
                    "CronWorkflowSpecWorkflowSpec",
                ],
                "WorkflowSpec",
            ),
        ];
        for (names, want) in cases {
            assert_eq!(common_name(names).as_deref(), Some(want), "{names:?}");
        }
        assert_eq!(common_name(&["AlphaBeta", "GammaDelta"]), None);
    }
}
