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

/// `metadata.name` rule of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// RFC 1123 subdomain, at most 253 characters: almost every kind, and
    /// every custom resource.
    Subdomain,
    /// RFC 1123 label, at most 63: namespaces, statefulsets.
    Label,
    /// RFC 1035 label (starts with a letter), at most 63: services (while
    /// the alpha gate `RelaxedServiceNameValidation` is off, as by default).
    Label1035,
    /// Only a valid path segment: the four RBAC kinds.
    PathSegment,
}

/// The rule kube-apiserver applies to `res`'s names.
pub(crate) fn name_rule(res: &Resource) -> NameRule {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "namespaces") | ("apps", "statefulsets") => NameRule::Label,
        ("", "services") => NameRule::Label1035,
        (
            "rbac.authorization.k8s.io",
            "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings",
        ) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

/// `path.IsValidPathSegmentName`.
pub(crate) fn path_segment_problems(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

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

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

fn problems(rule: NameRule, name: &str) -> Vec<String> {
    let max = |n: usize| format!("must be no more than {n} characters");
    let mut out = Vec::new();
    match rule {
        NameRule::Subdomain => {
            if name.len() > 253 {
                out.push(max(253));
            }
            if !is_subdomain(name) {
                out.push(SUBDOMAIN_MSG.to_owned());
            }
        }
        NameRule::Label => {
            if name.len() > 63 {
                out.push(max(63));
            }
            if !is_label(name) {
                out.push(if is_subdomain(name) {
                    "must not contain dots".to_owned()
                } else {
                    LABEL_MSG.to_owned()
                });
            }
        }
        NameRule::Label1035 => {
            if name.len() > 63 {
                out.push(max(63));
            }
            if !(is_label(name) && name.as_bytes()[0].is_ascii_lowercase()) {
                out.push(LABEL1035_MSG.to_owned());
            }
        }
        NameRule::PathSegment => out = path_segment_problems(name),
    }
    out
}

/// `IsValidLabelValue`.
fn label_value_problems(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    if v.len() > 63 {
        out.push("must be no more than 63 bytes".to_owned());
    }
    let b = v.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    let ok = b.is_empty()
        || (b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(inner));
    if !ok {
        out.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_owned());
    }
    out
}

/// `maskTrailingDash`: a prefix may end in `-` (the random part follows).
fn mask_trailing_dash(prefix: &str) -> String {
    match prefix.strip_suffix('-') {
        Some(_) if prefix.len() > 1 => format!("{}a", &prefix[..prefix.len() - 2]),
        _ => prefix.to_owned(),
    }
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
/// `name` (already generated when only `generateName` was given).
pub(crate) fn check_new_name(res: &Resource, obj: &Value, name: &str) -> Result<(), ApiError> {
    let rule = name_rule(res);
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
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_as_apimachinery() {
        assert!(problems(NameRule::Subdomain, "a.b-c").is_empty());
        assert_eq!(problems(NameRule::Subdomain, "UPPER"), [SUBDOMAIN_MSG]);
        assert_eq!(problems(NameRule::Subdomain, &"a".repeat(254)).len(), 1);
        assert_eq!(problems(NameRule::Label, "a.b"), ["must not contain dots"]);
        assert_eq!(problems(NameRule::Label, "a_b"), [LABEL_MSG]);
        assert_eq!(problems(NameRule::Label1035, "1ab"), [LABEL1035_MSG]);
        assert!(problems(NameRule::PathSegment, "UPPER:x").is_empty());
        assert_eq!(
            path_segment_problems("a/b%"),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert_eq!(mask_trailing_dash("web-"), "wea");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(generate_name(&"b".repeat(300)).len(), 63);
    }
}
