//! Field sets as `managedFields` records them (structured-merge-diff's
//! `fieldpath`): a path is a list of elements — a field name (`f:name`), a
//! `listType=map` item by its keys (`k:{"name":"a"}`), a set item by its
//! value (`v:"x"`) or a position (`i:0`) — and a set is the paths it holds
//! as members. `FieldsV1` writes a set as a tree: a member with children
//! carries `".": {}`, a member without children is `{}`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One path element, kept in its `FieldsV1` spelling (`f:`, `k:`, `v:`,
/// `i:` and the rest), which also orders them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Pe(String);

impl Pe {
    /// A field or map key.
    pub(crate) fn field(name: &str) -> Self {
        Pe(format!("f:{name}"))
    }

    /// A `listType=map` item by its key fields (written sorted by name).
    pub(crate) fn key(mut fields: Vec<(&str, &Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = String::from("k:{");
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&Value::String((*k).to_owned()).to_string());
            out.push(':');
            out.push_str(&v.to_string());
        }
        out.push('}');
        Pe(out)
    }

    /// A set item by its value.
    pub(crate) fn value(v: &Value) -> Self {
        Pe(format!("v:{v}"))
    }

    /// The field name, if this is a field element.
    pub(crate) fn as_field(&self) -> Option<&str> {
        self.0.strip_prefix("f:")
    }

    /// How structured-merge-diff prints it in a conflict: `.name`,
    /// `[name="a",port=80]`, `[="x"]`, `[0]`.
    pub(crate) fn display(&self) -> String {
        let (tag, rest) = self.0.split_at(2);
        match tag {
            "f:" => format!(".{rest}"),
            "k:" => {
                let parsed: Option<Map<String, Value>> = serde_json::from_str(rest).ok();
                let parts: Vec<String> = parsed
                    .iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            "v:" => format!("[={rest}]"),
            "i:" => format!("[{rest}]"),
            _ => self.0.clone(),
        }
    }
}

/// A path from the object's root.
pub(crate) type Path = Vec<Pe>;

/// A set of member paths.
pub(crate) type Set = BTreeSet<Path>;

/// A path as a conflict names it: `.spec.ports[name="a"].port`.
pub(crate) fn display(p: &[Pe]) -> String {
    p.iter().map(Pe::display).collect()
}

/// Whether `p` starts with `prefix`.
pub(crate) fn has_prefix(p: &[Pe], prefix: &[Pe]) -> bool {
    p.len() >= prefix.len() && p[..prefix.len()] == *prefix
}

/// Every path of `s`, and each proper prefix that ends in a field name
/// made a member too (structured-merge-diff's
/// `EnsureNamedFieldsAreMembers`; a list item holding an owned field is
/// not made one, so pruning may take the item whole).
pub(crate) fn with_named_parents(s: &Set) -> Set {
    let mut out = s.clone();
    for p in s {
        for n in 1..p.len() {
            if p[n - 1].as_field().is_some() {
                out.insert(p[..n].to_vec());
            }
        }
    }
    out
}

/// Writes a set as `FieldsV1`.
pub(crate) fn to_fields_v1(set: &Set) -> Value {
    let mut root = Map::new();
    for p in set {
        let mut cur = &mut root;
        for pe in p {
            let node = cur
                .entry(pe.0.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = node else { break };
            cur = m;
        }
    }
    mark_members(&mut root, set, &mut Vec::new());
    Value::Object(root)
}

/// Adds `".": {}` to every member node that has children.
fn mark_members(node: &mut Map<String, Value>, set: &Set, at: &mut Path) {
    for (k, child) in node.iter_mut() {
        let Value::Object(m) = child else { continue };
        at.push(Pe(k.clone()));
        if !m.is_empty() {
            mark_members(m, set, at);
            if set.contains(at) {
                m.insert(".".into(), Value::Object(Map::new()));
            }
        }
        at.pop();
    }
}

/// Reads `FieldsV1`; anything that is not an object of objects is an error.
pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
    fn walk(m: &Map<String, Value>, at: &mut Path, out: &mut Set) -> Result<(), String> {
        for (k, child) in m {
            if k == "." {
                if !at.is_empty() {
                    out.insert(at.clone());
                }
                continue;
            }
            if !["f:", "k:", "v:", "i:"].iter().any(|t| k.starts_with(t)) {
                return Err(format!("unknown path element {k:?}"));
            }
            let Value::Object(c) = child else {
                return Err(format!("{k:?} is not an object"));
            };
            at.push(Pe(k.clone()));
            if c.is_empty() {
                out.insert(at.clone());
            } else {
                walk(c, at, out)?;
            }
            at.pop();
        }
        Ok(())
    }
    let Value::Object(m) = v else {
        return Err("fieldsV1 is not an object".into());
    };
    let mut out = Set::new();
    walk(m, &mut Vec::new(), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_v1_round_trips_members_and_items() {
        let f = json!({"f:data": {".": {}, "f:k": {}}, "f:spec": {"f:ports": {
            "k:{\"name\":\"a\"}": {".": {}, "f:port": {}}}},
            "f:metadata": {"f:finalizers": {"v:\"x\"": {}}, "f:labels": {}}});
        let set = from_fields_v1(&f).unwrap();
        assert!(set.contains(&vec![Pe::field("data")]));
        assert!(!set.contains(&vec![Pe::field("spec")]));
        assert!(set.contains(&vec![Pe::field("metadata"), Pe::field("labels")]));
        assert_eq!(to_fields_v1(&set), f);
    }

    #[test]
    fn elements_print_as_conflicts_name_them() {
        let p = vec![
            Pe::field("spec"),
            Pe::field("ports"),
            Pe::key(vec![("protocol", &json!("TCP")), ("port", &json!(80))]),
            Pe::field("name"),
        ];
        assert_eq!(display(&p), ".spec.ports[port=80,protocol=\"TCP\"].name");
        assert_eq!(p[2].0, "k:{\"port\":80,\"protocol\":\"TCP\"}");
        assert_eq!(Pe::value(&json!("x")).display(), "[=\"x\"]");
        assert!(from_fields_v1(&json!({"x": {}})).is_err());
    }
}
