//! Which optional scalars are Go values (not pointers) with `omitempty`:
//! `specs/kubernetes-<version>.go-values`, written from Go's own types by
//! `cargo xtask go-values`.
//!
//! Go's protobuf encoder writes such a field even when it is zero
//! (`nodePort: 0`, `hostNetwork: false`, `generateName: ""`) while its JSON
//! omits it; the codecs read that zero as unset, so an object decodes the
//! same from either format. Every other field keeps the presence it has on
//! the wire: a pointer's zero is meaningful (`replicas: 0`).
//!
//! The file is checked against the join, so a stale one fails the run: every
//! joined struct must be listed, and every listed field of a struct the IR
//! has must be one of its JSON fields.

use std::collections::{BTreeMap, BTreeSet};

use super::ProtoError;
use super::join::Codecs;
use crate::ir::{Ir, TypeKind};

/// The parsed file: definition → JSON names of its Go value fields.
#[derive(Debug, Clone, Default)]
pub struct GoValues {
    structs: BTreeMap<String, BTreeSet<String>>,
}

impl GoValues {
    /// Parses the file's text (`label` names it in errors): one line per Go
    /// struct, its OpenAPI definition then its value fields' JSON names;
    /// `#` starts a comment line.
    pub fn parse(label: &str, text: &str) -> Result<Self, ProtoError> {
        let mut structs = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_ascii_whitespace();
            let definition = words.next().unwrap_or_default();
            if !definition.starts_with("io.k8s.") {
                return Err(ProtoError::GoValues {
                    file: label.to_owned(),
                    reason: format!("line {}: {definition:?} is not a definition", n + 1),
                });
            }
            let fields = words.map(str::to_owned).collect();
            if structs.insert(definition.to_owned(), fields).is_some() {
                return Err(ProtoError::GoValues {
                    file: label.to_owned(),
                    reason: format!("line {}: {definition} is listed twice", n + 1),
                });
            }
        }
        Ok(Self { structs })
    }

    /// Whether a zero in `definition`'s field `json` means unset.
    pub fn zero_is_unset(&self, definition: &str, json: &str) -> bool {
        self.structs
            .get(definition)
            .is_some_and(|fields| fields.contains(json))
    }

    /// Fails when the file does not describe these codecs: a joined struct
    /// it does not list, or a listed field its struct does not have.
    pub fn check(&self, label: &str, ir: &Ir, codecs: &Codecs) -> Result<(), ProtoError> {
        let stale = |reason: String| ProtoError::GoValues {
            file: label.to_owned(),
            reason: format!("{reason} (regenerate it with `cargo xtask go-values`)"),
        };
        if let Some((definition, _)) = codecs
            .types
            .iter()
            .find(|(d, c)| !c.opaque && !self.structs.contains_key(*d))
        {
            return Err(stale(format!("{definition} is joined but not listed")));
        }
        for (definition, listed) in &self.structs {
            let Some(TypeKind::Struct { fields }) = ir.types.get(definition).map(|t| &t.kind)
            else {
                continue;
            };
            // TypeMeta's apiVersion and kind are a kind's `Resource`
            // constants, not struct fields.
            let missing = listed.iter().find(|j| {
                !matches!(j.as_str(), "apiVersion" | "kind")
                    && !fields.iter().any(|f| &f.json == *j)
            });
            if let Some(json) = missing {
                return Err(stale(format!("{definition} has no field {json:?}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_refuses_bad_ones() {
        let v = GoValues::parse(
            "f",
            "# comment\n\nio.k8s.api.core.v1.ServicePort name nodePort\nio.k8s.api.core.v1.Pod\n",
        )
        .unwrap();
        assert!(v.zero_is_unset("io.k8s.api.core.v1.ServicePort", "nodePort"));
        assert!(!v.zero_is_unset("io.k8s.api.core.v1.ServicePort", "port"));
        assert!(!v.zero_is_unset("io.k8s.api.core.v1.Pod", "spec"));
        let err = GoValues::parse("f", "Pod spec\n").unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("\"Pod\""), "{err}");
        let err = GoValues::parse("f", "io.k8s.a.B\nio.k8s.a.B x\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("twice"), "{err}");
    }
}
