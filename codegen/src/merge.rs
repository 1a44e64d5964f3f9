//! The spec directories of the versions beside the pinned one merged into
//! one [`Input`]: the union of their definitions, properties and paths,
//! the newest version's text winning, with [`Input::versions`] saying
//! which version has what (see [`crate::versions`]).
//!
//! No property changes type between the merged versions (checked: the
//! merge refuses a property whose schema differs in type or in the
//! definition it refers to, a bare `$ref` and v3's one-entry `allOf` of it
//! being the same reference: v1.37 wraps `IngressRule.http`'s). Whether a
//! property is required does change (v1.36 requires `CronJob.spec` and no
//! longer `TokenRequest.spec`): the merged schema requires a property only
//! where every version that has it does, and [`Versions::required`] keeps
//! the versions that do, so lowering gives such a field its two forms (`T`
//! under the versions requiring it, `Option<T>` under the others), as
//! k8s-openapi's per-version modules have them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::CodegenError;
use crate::spec::{Input, Schema};
use crate::versions::Versions;

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
        loosen_required(&mut out, &versions);
    }
    out.versions = versions;
    Ok(out)
}

/// Adds to `merged` the properties of `older` it lacks.
fn add_properties(name: &str, merged: &mut Schema, older: &Schema) -> Result<(), CodegenError> {
    for (prop, schema) in &older.properties {
        match merged.properties.get(prop) {
            Some(m) if m.ty != schema.ty || m.referenced() != schema.referenced() => {
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

/// Keeps a property of `merged` required only where every version that
/// has the property requires it: not the ones [`Versions::required`]
/// names (filled by [`record`]).
fn loosen_required(merged: &mut Input, versions: &Versions) {
    for (name, schema) in &mut merged.definitions {
        schema.required.retain(|prop| {
            !versions
                .required
                .contains_key(&(name.clone(), prop.clone()))
        });
    }
}

/// Fills the version sets of `merged`'s items from `every` version's input,
/// and the versions requiring each property some but not all of the
/// versions having it require.
fn record(versions: &mut Versions, merged: &Input, every: &[(&String, &Input)]) {
    let all = every.len();
    for (name, schema) in &merged.definitions {
        let has: Vec<(&String, &Schema)> = every
            .iter()
            .filter_map(|(v, i)| i.definitions.get(name).map(|s| (*v, s)))
            .collect();
        if has.len() < all {
            versions
                .definitions
                .insert(name.clone(), versions_where(&has, |_| true));
        }
        for prop in schema.properties.keys() {
            let with = versions_where(&has, |s| s.properties.contains_key(prop));
            let requiring = versions_where(&has, |s| {
                s.properties.contains_key(prop) && s.required.contains(prop)
            });
            if !requiring.is_empty() && requiring.len() < with.len() {
                versions
                    .required
                    .insert((name.clone(), prop.clone()), requiring);
            }
            if with.len() < has.len() {
                versions.fields.insert((name.clone(), prop.clone()), with);
            }
        }
    }
    for path in merged.paths.keys() {
        let with = versions_where(every, |i| i.paths.contains_key(path));
        if with.len() < all {
            versions.paths.insert(path.clone(), with);
        }
    }
}

/// The versions (of `(version, item)` pairs) whose item is `like`.
fn versions_where<T>(items: &[(&String, T)], like: impl Fn(&T) -> bool) -> BTreeSet<String> {
    items
        .iter()
        .filter(|(_, item)| like(item))
        .map(|(v, _)| (*v).clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_property_is_required_only_where_every_version_requires_it() {
        let parse = |s: &str| serde_json::from_str::<Schema>(s).unwrap();
        let props = r#""properties":{"kept":{"type":"string"},"now":{"type":"string"},"dropped":{"type":"string"}}"#;
        let mut old = Input::default();
        old.definitions.insert(
            "A".into(),
            parse(&format!(r#"{{{props},"required":["kept","dropped"]}}"#)),
        );
        let mut new = Input::default();
        new.definitions.insert(
            "A".into(),
            parse(&format!(r#"{{{props},"required":["kept","now"]}}"#)),
        );
        let merged = merge(vec![("v1.1".into(), old), ("v1.2".into(), new)]).unwrap();
        assert_eq!(merged.definitions["A"].required, ["kept"]);
        let required = |p: &str| {
            let key = ("A".to_owned(), p.to_owned());
            merged
                .versions
                .required
                .get(&key)
                .map(|v| v.iter().cloned().collect::<Vec<_>>())
        };
        assert_eq!(required("now"), Some(vec!["v1.2".to_owned()]));
        assert_eq!(required("dropped"), Some(vec!["v1.1".to_owned()]));
        assert_eq!(required("kept"), None);
    }

    /// v1.37's v3 documents wrap `IngressRule.http`'s `$ref` in an `allOf`
    /// to give it a description: the same definition, not a new type.
    #[test]
    fn a_reference_wrapped_in_all_of_is_the_same_type() {
        let parse = |s: &str| serde_json::from_str::<Schema>(s).unwrap();
        let input = |prop: &str| {
            let mut input = Input::default();
            input.definitions.insert(
                "A".into(),
                parse(&format!(r#"{{"properties":{{"x":{prop}}}}}"#)),
            );
            input
        };
        let bare = r##"{"$ref":"#/components/schemas/B"}"##;
        let wrapped = r##"{"allOf":[{"$ref":"#/components/schemas/B"}],"description":"b"}"##;
        let other = r##"{"allOf":[{"$ref":"#/components/schemas/C"}]}"##;
        let merged = merge(vec![
            ("v1.1".into(), input(bare)),
            ("v1.2".into(), input(wrapped)),
        ]);
        assert_eq!(
            merged.unwrap().definitions["A"].properties["x"].referenced(),
            Some("B")
        );
        assert!(matches!(
            merge(vec![
                ("v1.1".into(), input(bare)),
                ("v1.2".into(), input(other))
            ]),
            Err(CodegenError::VersionConflict { .. })
        ));
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
