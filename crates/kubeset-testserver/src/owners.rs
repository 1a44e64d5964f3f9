//! Duplicate owner references, as kube-apiserver's handlers treat them
//! (`dedupOwnerReferencesAndAddWarning` in k8s.io/apiserver's
//! `endpoints/handlers/rest.go`): an entry equal to an earlier one is
//! dropped and the write warned; entries sharing a uid but differing in a
//! field are kept.

use serde_json::Value;

/// The warning of a create or update whose body repeats an owner reference.
const BEFORE_ADMISSION: &str = ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ";

/// The warning of a patch (also an apply): the real server dedups a
/// patch's result only after mutating admission, and says so.
const AFTER_ADMISSION: &str = ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ";

/// Drops the owner references of `obj` equal to an earlier one; when any
/// was dropped, the real server's warning naming their uids (the patch
/// wording when `patch`: a patch or an apply).
pub(crate) fn dedup(obj: &mut Value, patch: bool) -> Option<String> {
    let refs = obj
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)?;
    let duplicates = dedup_list(refs);
    if duplicates.is_empty() {
        return None;
    }
    let head = if patch {
        AFTER_ADMISSION
    } else {
        BEFORE_ADMISSION
    };
    Some(format!("{head}{}", duplicates.join(", ")))
}

/// Keeps the first of equal entries; the uids of the dropped ones, in
/// order.
fn dedup_list(refs: &mut Vec<Value>) -> Vec<String> {
    let mut kept: Vec<Value> = Vec::with_capacity(refs.len());
    let mut duplicates = Vec::new();
    for r in refs.drain(..) {
        if kept.contains(&r) {
            let uid = r.get("uid").and_then(Value::as_str).unwrap_or("");
            duplicates.push(uid.to_owned());
        } else {
            kept.push(r);
        }
    }
    *refs = kept;
    duplicates
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_first_of_equal_entries_and_entries_differing_in_a_field() {
        let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "1"});
        let other_name = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "p", "uid": "1"});
        let mut refs = vec![a.clone(), other_name.clone(), a.clone(), a.clone()];
        assert_eq!(dedup_list(&mut refs), ["1", "1"]);
        assert_eq!(refs, vec![a, other_name]);
    }

    #[test]
    fn warns_with_the_wording_of_the_verb() {
        let r = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u"});
        let mut obj = json!({"metadata": {"ownerReferences": [r.clone(), r.clone()]}});
        let w = dedup(&mut obj.clone(), false).unwrap();
        assert!(w.starts_with(".metadata.ownerReferences contains duplicate entries; "));
        assert!(w.ends_with("duplicate UID(s) observed: u"), "{w}");
        let w = dedup(&mut obj, true).unwrap();
        assert!(w.contains("duplicate entries after mutating admission happens"));
        assert_eq!(obj["metadata"]["ownerReferences"], json!([r]));
        assert_eq!(dedup(&mut obj, true), None);
        assert_eq!(dedup(&mut json!({"metadata": {}}), false), None);
    }
}
