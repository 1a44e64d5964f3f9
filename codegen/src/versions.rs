//! Several Kubernetes versions in one tree: which of the merged versions
//! have each definition, property and path ([`Versions`], filled by
//! [`crate::merge`]), and the [`Gate`]s lowering makes of those sets. The
//! emitters write a gate as a `#[cfg]` on the cargo features `v1_33`,
//! `v1_34`, … (at most one is on; none means the newest). Data only: this
//! module imports no other module of the crate, so the specs as read can
//! hold a [`Versions`].

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;

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
    /// Properties `(definition, JSON name)` some but not all of the
    /// versions that have them require: the versions that do (v1.36 no
    /// longer requires `RoleRef.apiGroup`; v1.33–v1.35 do).
    pub required: BTreeMap<(String, String), BTreeSet<String>>,
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

    /// Where a property's required-ness differs between the versions that
    /// have it: the gates of its two forms, `(required, optional)`, each
    /// within `within` (the property's own gate, `None` for every
    /// version). `None` when every version that has it agrees.
    pub fn required_split(
        &self,
        definition: &str,
        json: &str,
        within: Option<&Gate>,
    ) -> Option<(Gate, Gate)> {
        let requiring = self
            .required
            .get(&(definition.to_owned(), json.to_owned()))?;
        let have: BTreeSet<String> = match within {
            Some(g) => g.have.clone(),
            None => self.all.iter().cloned().collect(),
        };
        let required: BTreeSet<String> = have.intersection(requiring).cloned().collect();
        let optional: BTreeSet<String> = have.difference(requiring).cloned().collect();
        if required.is_empty() || optional.is_empty() {
            return None;
        }
        Some((self.gate(Some(&required))?, self.gate(Some(&optional))?))
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
    fn a_required_split_gates_both_forms_within_the_field() {
        let mut v = Versions {
            all: vec!["v1.33".into(), "v1.34".into(), "v1.35".into()],
            ..Versions::default()
        };
        let key = ("A".to_owned(), "x".to_owned());
        v.required.insert(key, ["v1.33".to_owned()].into());
        let (required, optional) = v.required_split("A", "x", None).unwrap();
        assert_eq!(required, gate(&["v1.33"]));
        assert_eq!(optional, gate(&["v1.34", "v1.35"]));
        // Within a field only v1.34 and v1.35 have, nothing differs.
        assert!(
            v.required_split("A", "x", Some(&gate(&["v1.34", "v1.35"])))
                .is_none()
        );
        assert!(v.required_split("A", "y", None).is_none());
    }
}
