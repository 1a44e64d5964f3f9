//! Several Kubernetes versions in one tree: the spec directories of the
//! versions beside the pinned one are merged into one [`Input`] (the
//! union of their definitions, properties and paths, the newest version's
//! text winning), and the set of versions that have each definition,
//! property and path is kept in [`Versions`]. Lowering turns those sets
//! into [`Gate`]s on the IR; the emitters write a gate as a `#[cfg]` on
//! the cargo features `v1_33`, `v1_34`, … (at most one is on; none means
//! the newest).
//!
//! No property changes type between the merged versions (checked: the
//! merge refuses a property whose schema differs in type).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::CodegenError;
use crate::spec::{Input, Schema};

/// Which of the merged versions have each item; an item every version
/// has is absent from the maps. Empty (no gates) for a single version.
#[derive(Debug, Clone, Default)]
pub struct Versions {
    /// Every merged version, oldest first (`v1.33`, `v1.34`, `v1.35`).
    pub all: Vec<String>,
    /// Definitions not in every version.
    pub definitions: BTreeMap<String, BTreeSet<String>>,
    /// Properties `(definition, JSON name)` not in every version that has
    /// their definition.
    pub fields: BTreeMap<(String, String), BTreeSet<String>>,
    /// Paths not in every version.
    pub paths: BTreeMap<String, BTreeSet<String>>,
}

impl Versions {
    fn gate(&self, have: Option<&BTreeSet<String>>) -> Option<Gate> {
        have.map(|have| Gate {
            have: have.clone(),
            all: self.all.clone(),
        })
    }

    /// The gate of a definition.
    pub fn definition(&self, definition: &str) -> Option<Gate> {
        self.gate(self.definitions.get(definition))
    }

    /// The gate of a property (beyond its definition's).
    pub fn field(&self, definition: &str, json: &str) -> Option<Gate> {
        self.gate(self.fields.get(&(definition.to_owned(), json.to_owned())))
    }

    /// The gate of a set of paths: none when one of them is in every
    /// version, else the union of their versions.
    pub fn paths<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> Option<Gate> {
        let mut union = BTreeSet::new();
        for p in paths {
            union.extend(self.paths.get(p)?.iter().cloned());
        }
        if union.is_empty() || union.len() == self.all.len() {
            return None;
        }
        self.gate(Some(&union))
    }
}

/// The versions that have an item not every merged version has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// The versions that have it.
    pub have: BTreeSet<String>,
    /// Every merged version, oldest first.
    pub all: Vec<String>,
}

impl Gate {
    /// The cargo feature selecting a version: `v1.33` → `v1_33`.
    pub fn feature(version: &str) -> String {
        version.replace('.', "_")
    }

    /// The condition, on the version features: at most one of them is on
    /// and none means the newest, so an item the newest has is
    /// `not(any(<features of the versions without it>))` and any other
    /// `any(<features of the versions with it>)`.
    pub fn condition(&self) -> TokenStream {
        let newest = self.has_newest();
        let list: Vec<String> = if newest {
            self.all
                .iter()
                .filter(|v| !self.have.contains(*v))
                .map(|v| Self::feature(v))
                .collect()
        } else {
            self.have.iter().map(|v| Self::feature(v)).collect()
        };
        let one = match list.as_slice() {
            [f] => quote!(feature = #f),
            _ => quote!(any(#(feature = #list),*)),
        };
        if newest { quote!(not(#one)) } else { one }
    }

    /// Whether the newest merged version has the item.
    pub fn has_newest(&self) -> bool {
        self.all.last().is_some_and(|n| self.have.contains(n))
    }

    /// `#[cfg(<condition>)]`.
    pub fn cfg(&self) -> TokenStream {
        let c = self.condition();
        quote!(#[cfg(#c)])
    }

    /// The versions, for documentation: `v1.34, v1.35`.
    pub fn list(&self) -> String {
        self.have.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// `#[cfg(...)]` of an optional gate (nothing for `None`).
pub fn cfg(gate: Option<&Gate>) -> TokenStream {
    gate.map(Gate::cfg).unwrap_or_default()
}

/// The union of two gates of one item set (`None`: every version).
pub fn union(a: Option<&Gate>, b: Option<&Gate>) -> Option<Gate> {
    let (a, b) = (a?, b?);
    let have: BTreeSet<String> = a.have.union(&b.have).cloned().collect();
    (have.len() < a.all.len()).then(|| Gate {
        have,
        all: a.all.clone(),
    })
}

/// The release directories to merge for `dir` (`…/kubernetes/v1.35`):
/// its sibling `v1.<n>` directories up to and including it, oldest first.
/// A directory not named `v1.<n>` is used alone.
pub fn siblings(dir: &Path) -> Vec<(String, PathBuf)> {
    let minor = |name: &str| name.strip_prefix("v1.").and_then(|m| m.parse::<u32>().ok());
    let own = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let (Some(own_minor), Some(parent)) = (minor(own), dir.parent()) else {
        return vec![(own.to_owned(), dir.to_owned())];
    };
    let mut out: Vec<(u32, String, PathBuf)> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let m = minor(&name)?;
            (m <= own_minor && e.path().is_dir()).then(|| (m, name, e.path()))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, n, p)| (n, p)).collect()
}

/// Merges the inputs of several versions (oldest first; the last is the
/// newest) into one: the newest's definitions and paths, plus those only
/// older versions have (from the newest of them), and the properties only
/// older versions have added to the definitions; [`Input::versions`]
/// records who has what.
pub fn merge(inputs: Vec<(String, Input)>) -> Result<Input, CodegenError> {
    let all: Vec<String> = inputs.iter().map(|(v, _)| v.clone()).collect();
    let mut iter = inputs.into_iter().rev();
    let Some((_, mut out)) = iter.next() else {
        return Ok(Input::default());
    };
    let newest = out.clone();
    let older: Vec<(String, Input)> = iter.collect();
    for (_, input) in &older {
        for (name, schema) in &input.definitions {
            match out.definitions.get_mut(name) {
                None => {
                    out.definitions.insert(name.clone(), schema.clone());
                    if let Some(s) = input.sources.get(name) {
                        out.sources.insert(name.clone(), s.clone());
                    }
                }
                Some(merged) => add_properties(name, merged, schema)?,
            }
        }
        for (path, item) in &input.paths {
            out.paths
                .entry(path.clone())
                .or_insert_with(|| item.clone());
        }
    }
    let mut versions = Versions {
        all: all.clone(),
        ..Versions::default()
    };
    if all.len() > 1 {
        let mut every: Vec<(&String, &Input)> = older.iter().map(|(v, i)| (v, i)).collect();
        every.push((all.last().expect("one version"), &newest));
        record(&mut versions, &out, &every);
    }
    out.versions = versions;
    Ok(out)
}

/// Adds to `merged` the properties of `older` it lacks.
fn add_properties(name: &str, merged: &mut Schema, older: &Schema) -> Result<(), CodegenError> {
    for (prop, schema) in &older.properties {
        match merged.properties.get(prop) {
            Some(m) if m.ty != schema.ty || m.reference != schema.reference => {
                return Err(CodegenError::VersionConflict {
                    definition: name.to_owned(),
                    property: prop.clone(),
                });
            }
            Some(_) => {}
            None => {
                merged.properties.insert(prop.clone(), schema.clone());
                if older.required.contains(prop) {
                    merged.required.push(prop.clone());
                }
            }
        }
    }
    Ok(())
}

/// Fills the version sets of `merged`'s items from `every` version's input.
fn record(versions: &mut Versions, merged: &Input, every: &[(&String, &Input)]) {
    let all = every.len();
    for (name, schema) in &merged.definitions {
        let has: Vec<(&String, &Schema)> = every
            .iter()
            .filter_map(|(v, i)| i.definitions.get(name).map(|s| (*v, s)))
            .collect();
        if has.len() < all {
            versions.definitions.insert(
                name.clone(),
                has.iter().map(|(v, _)| (*v).clone()).collect(),
            );
        }
        for prop in schema.properties.keys() {
            let with: BTreeSet<String> = has
                .iter()
                .filter(|(_, s)| s.properties.contains_key(prop))
                .map(|(v, _)| (*v).clone())
                .collect();
            if with.len() < has.len() {
                versions.fields.insert((name.clone(), prop.clone()), with);
            }
        }
    }
    for path in merged.paths.keys() {
        let with: BTreeSet<String> = every
            .iter()
            .filter(|(_, i)| i.paths.contains_key(path))
            .map(|(v, _)| (*v).clone())
            .collect();
        if with.len() < all {
            versions.paths.insert(path.clone(), with);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(have: &[&str]) -> Gate {
        Gate {
            have: have.iter().map(|s| (*s).to_owned()).collect(),
            all: vec!["v1.33".into(), "v1.34".into(), "v1.35".into()],
        }
    }

    #[test]
    fn conditions_name_the_fewest_features() {
        let c = |g: Gate| g.condition().to_string();
        assert_eq!(
            c(gate(&["v1.35"])),
            r#"not (any (feature = "v1_33" , feature = "v1_34"))"#
        );
        assert_eq!(c(gate(&["v1.34", "v1.35"])), r#"not (feature = "v1_33")"#);
        assert_eq!(c(gate(&["v1.33"])), r#"feature = "v1_33""#);
        assert_eq!(
            c(gate(&["v1.33", "v1.34"])),
            r#"any (feature = "v1_33" , feature = "v1_34")"#
        );
    }

    #[test]
    fn merging_keeps_the_newest_and_records_the_rest() {
        let parse = |s: &str| serde_json::from_str::<Schema>(s).unwrap();
        let mut old = Input::default();
        old.definitions.insert(
            "A".into(),
            parse(r#"{"properties":{"x":{"type":"string"},"gone":{"type":"string"}}}"#),
        );
        old.definitions.insert("Old".into(), parse("{}"));
        let mut new = Input::default();
        new.definitions.insert(
            "A".into(),
            parse(r#"{"description":"new","properties":{"x":{"type":"string"},"y":{"type":"integer"}}}"#),
        );
        let merged = merge(vec![("v1.1".into(), old), ("v1.2".into(), new)]).unwrap();
        let a = &merged.definitions["A"];
        assert_eq!(a.description.as_deref(), Some("new"));
        assert_eq!(a.properties.keys().collect::<Vec<_>>(), ["gone", "x", "y"]);
        let v = &merged.versions;
        assert_eq!(v.definition("Old").unwrap().list(), "v1.1");
        assert!(v.definition("A").is_none());
        assert_eq!(v.field("A", "y").unwrap().list(), "v1.2");
        assert_eq!(v.field("A", "gone").unwrap().list(), "v1.1");
        assert!(v.field("A", "x").is_none());
    }

    #[test]
    fn a_changed_type_is_refused() {
        let parse = |s: &str| serde_json::from_str::<Schema>(s).unwrap();
        let mut old = Input::default();
        old.definitions.insert(
            "A".into(),
            parse(r#"{"properties":{"x":{"type":"string"}}}"#),
        );
        let mut new = Input::default();
        new.definitions.insert(
            "A".into(),
            parse(r#"{"properties":{"x":{"type":"integer"}}}"#),
        );
        assert!(matches!(
            merge(vec![("v1.1".into(), old), ("v1.2".into(), new)]),
            Err(CodegenError::VersionConflict { .. })
        ));
    }
}
