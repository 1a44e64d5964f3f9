//! Name validation as kube-apiserver v1.35 does it (the rules and the
//! message texts of k8s.io/apimachinery v0.35 `pkg/util/validation`,
//! `pkg/api/validation` and `pkg/api/validation/path`; the per-kind rule
//! from each kind's `ValidateObjectMeta` call in k8s.io/kubernetes
//! `pkg/apis/*/validation`). Pinned against the real server by
//! `tests/validation.rs` and its recording `tests/golden/validation.json`.
//!
//! Two checks, in the real server's order:
//! - a name in the URL must be a valid path segment (not `.`/`..`, no `/`
//!   or `%`), for every verb: `400 BadRequest`, `Name parameter invalid`;
//! - the name of an object being created (POST, or server-side apply of a
//!   new object) must pass its kind's rule, and `generateName` the same
//!   rule as a prefix: `422 Invalid` with one cause per problem.

use serde_json::Value;

use crate::resources::Resource;
use crate::status::ApiError;
use crate::util;

pub(crate) use crate::names::{
    NameRule, label_value_problems, mask_trailing_dash, path_segment_problems, problems,
    qualified_name_problems,
};

/// The check of a name taken from the URL (every verb).
pub(crate) fn check_url_name(name: &str) -> Result<(), ApiError> {
    let problems = path_segment_problems(name);
    if problems.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Name parameter invalid: {}: {}",
        go_quote(name),
        problems.join(";")
    )))
}

/// `names.SimpleNameGenerator`: the prefix cut to 58 bytes, 5 random
/// characters appended.
pub(crate) fn generate_name(prefix: &str) -> String {
    let mut cut = prefix.len().min(58);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{}", &prefix[..cut], util::name_suffix())
}

/// `ValidateObjectMetaAccessor`'s name part for an object being created as
/// `name` (already generated when only `generateName` was given), under
/// its kind's `rule` (`crate::registry::Strategy::name_rule`).
pub(crate) fn check_new_name(
    res: &Resource,
    rule: NameRule,
    obj: &Value,
    name: &str,
) -> Result<(), ApiError> {
    let gen_name = obj
        .pointer("/metadata/generateName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    if !gen_name.is_empty() {
        for p in problems(rule, &mask_trailing_dash(gen_name)) {
            causes.push((
                "metadata.generateName",
                "FieldValueInvalid",
                format!("Invalid value: {}: {p}", go_quote(gen_name)),
            ));
        }
    }
    if name.is_empty() {
        causes.push((
            "metadata.name",
            "FieldValueRequired",
            "Required value: name or generateName is required".into(),
        ));
    } else {
        for p in problems(rule, name) {
            causes.push((
                "metadata.name",
                "FieldValueInvalid",
                format!("Invalid value: {}: {p}", go_quote(name)),
            ));
        }
    }
    if res.group.is_empty() && res.plural == "namespaces" {
        // The namespace strategy labels every namespace with
        // `kubernetes.io/metadata.name: <name>`, and that label value is
        // validated as well.
        for p in label_value_problems(name) {
            causes.push((
                "metadata.labels",
                "FieldValueInvalid",
                format!("Invalid value: {}: {p}", go_quote(name)),
            ));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(res, name, &causes))
    }
}

/// Go's `%q` for the printable ASCII and UTF-8 names we see (JSON string
/// escaping agrees with it there).
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// One cause of a 422 Invalid: field, reason, message.
pub(crate) type Cause = (String, &'static str, String);

fn invalid(field: &str, value: &str, msg: String) -> Cause {
    (
        field.to_owned(),
        "FieldValueInvalid",
        format!("Invalid value: {}: {msg}", go_quote(value)),
    )
}

fn string_map(v: Option<&Value>) -> Vec<(&str, &str)> {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, x)| (k.as_str(), x.as_str().unwrap_or_default()))
        .collect()
}

/// `ValidateLabels`, `ValidateAnnotations` (keys lowercased; 256 KiB in
/// all) and `ValidateOwnerReferences`, all on `metadata.<field>` itself.
fn meta_map_problems(meta: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    for (k, v) in string_map(meta.get("labels")) {
        for m in qualified_name_problems(k, "label key") {
            out.push(invalid("metadata.labels", k, m));
        }
        for m in label_value_problems(v) {
            out.push(invalid("metadata.labels", v, m));
        }
    }
    let annotations = string_map(meta.get("annotations"));
    for (k, _) in &annotations {
        for m in qualified_name_problems(&k.to_lowercase(), "annotation key") {
            out.push(invalid("metadata.annotations", k, m));
        }
    }
    let total: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > 256 * 1024 {
        out.push((
            "metadata.annotations".into(),
            "FieldValueTooLong",
            "Too long: may not be more than 262144 bytes".into(),
        ));
    }
    out.extend(owner_problems(meta.get("ownerReferences")));
    out
}

fn owner_problems(refs: Option<&Value>) -> Vec<Cause> {
    let refs = refs
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut out = Vec::new();
    let s = |r: &Value, k: &str| r[k].as_str().unwrap_or_default().to_owned();
    for r in refs {
        let api_version = s(r, "apiVersion");
        let version = api_version.rsplit('/').next().unwrap_or_default();
        if version.is_empty() {
            out.push(invalid(
                "metadata.ownerReferences.apiVersion",
                &api_version,
                "version must not be empty".into(),
            ));
        }
        for k in ["kind", "name", "uid"] {
            let v = s(r, k);
            if v.is_empty() {
                out.push(invalid(
                    &format!("metadata.ownerReferences.{k}"),
                    &v,
                    "must not be empty".into(),
                ));
            }
        }
    }
    let controllers: Vec<String> = refs
        .iter()
        .filter(|r| r["controller"].as_bool() == Some(true))
        .map(|r| format!("{}/{}", s(r, "kind"), s(r, "name")))
        .collect();
    if controllers.len() > 1 {
        out.push((
            "metadata.ownerReferences".into(),
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: Only one reference can have Controller set to true. Found \"true\" in references for {} and {}",
                Value::Array(refs.to_vec()),
                controllers[0],
                controllers[1]
            ),
        ));
    }
    out
}

/// `ValidateFinalizers` and, on an update, no new finalizer on an object
/// being deleted.
fn finalizer_problems(meta: &Value, old: Option<&Value>) -> Vec<Cause> {
    const STANDARD: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];
    let finalizers = util::strings(&meta["finalizers"]);
    let mut out = Vec::new();
    for (i, f) in finalizers.iter().enumerate() {
        let msgs = qualified_name_problems(f, "finalizer name");
        if msgs.is_empty() && !f.contains('/') && !STANDARD.contains(&f.as_str()) {
            out.push(invalid(
                &format!("metadata.finalizers[{i}]"),
                f,
                "name is neither a standard finalizer name nor is it fully qualified".into(),
            ));
        }
        for m in msgs {
            out.push(invalid("metadata.finalizers", f, m));
        }
    }
    if let Some(old_meta) = old.and_then(|o| o.get("metadata"))
        && old_meta.get("deletionTimestamp").is_some()
    {
        let before = util::strings(&old_meta["finalizers"]);
        let added: Vec<&String> = finalizers.iter().filter(|f| !before.contains(f)).collect();
        if !added.is_empty() {
            let shown: Vec<String> = added.iter().map(|f| go_quote(f)).collect();
            out.push((
                "metadata.finalizers".into(),
                "FieldValueForbidden",
                format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    shown.join(", ")
                ),
            ));
        }
    }
    out
}

/// `IsConfigMapKey` for each key of ConfigMap and Secret `data` (and a
/// ConfigMap's `binaryData`, whose keys may not repeat `data`'s).
fn data_key_problems(res: &Resource, obj: &Value) -> Vec<Cause> {
    if !res.group.is_empty() || !matches!(res.plural.as_str(), "configmaps" | "secrets") {
        return Vec::new();
    }
    const KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    let keys = |k: &str| -> Vec<&str> {
        obj.get(k)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect()
    };
    let mut out = Vec::new();
    let binary = keys("binaryData");
    for (field, list) in [("data", keys("data")), ("binaryData", binary.clone())] {
        for k in list {
            let path = format!("{field}[{k}]");
            if k.len() > 253 {
                out.push(invalid(
                    &path,
                    k,
                    "must be no more than 253 characters".into(),
                ));
            }
            if k.is_empty()
                || !k
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            {
                out.push(invalid(&path, k, KEY_MSG.into()));
            }
            match k {
                "." => out.push(invalid(&path, k, "must not be '.'".into())),
                ".." => out.push(invalid(&path, k, "must not be '..'".into())),
                _ if k.starts_with("..") => {
                    out.push(invalid(&path, k, "must not start with '..'".into()));
                }
                _ => {}
            }
            if field == "data" && binary.contains(&k) && res.plural == "configmaps" {
                out.push(invalid(
                    &path,
                    k,
                    "duplicate of key present in binaryData".into(),
                ));
            }
        }
    }
    out
}

/// kube-apiserver's built-in validation of an object's metadata and of
/// ConfigMap/Secret keys, with the real server's causes. On an update the
/// real server reports the metadata causes four times (finalizer names
/// twice): its update path validates ObjectMeta in several layers, and the
/// causes are kept as it sends them.
pub(crate) fn builtin_problems(res: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let empty = Value::Null;
    let meta = obj.get("metadata").unwrap_or(&empty);
    let maps = meta_map_problems(meta);
    let finalizers = finalizer_problems(meta, old);
    let mut out = Vec::new();
    if old.is_some() {
        for _ in 0..2 {
            out.extend(maps.iter().cloned());
            out.extend(finalizers.iter().cloned());
        }
        for _ in 0..2 {
            out.extend(maps.iter().cloned());
        }
    } else {
        out.extend(maps);
        out.extend(finalizers);
    }
    out.extend(data_key_problems(res, obj));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_rules_as_kube_apiserver() {
        let res = crate::resources::builtin()
            .into_iter()
            .find(|r| r.group.is_empty() && r.plural == "configmaps")
            .expect("configmaps");
        let big = "x".repeat(256 * 1024);
        let obj = serde_json::json!({"metadata": {"annotations": {"a": big}, "labels": {"ok": "v"},
            "finalizers": ["x.dev/a", "kubernetes"]}, "data": {"k": "v"}});
        let got = builtin_problems(&res, &obj, None);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].0.as_str(), got[0].1),
            ("metadata.annotations", "FieldValueTooLong")
        );
        let obj = serde_json::json!({"metadata": {"labels": {"a/b": "v!"}}});
        let old = serde_json::json!({"metadata": {}});
        // An update repeats the metadata causes four times, as the real
        // server's update path does.
        assert_eq!(builtin_problems(&res, &obj, Some(&old)).len(), 4);
        assert!(qualified_name_problems("example.com/My_Name", "label key").is_empty());
        assert_eq!(
            qualified_name_problems("/a", "label key"),
            ["prefix part must be non-empty"]
        );
    }

    #[test]
    fn generated_names_are_cut() {
        assert_eq!(generate_name(&"b".repeat(300)).len(), 63);
    }
}
