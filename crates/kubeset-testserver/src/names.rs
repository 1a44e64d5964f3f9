//! apimachinery's name rules (k8s.io/apimachinery v0.35
//! `pkg/util/validation` and `pkg/api/validation`), as pure functions of
//! the string with the real server's message texts: DNS-1123 labels and
//! subdomains, DNS-1035 labels, path segments, label values, qualified
//! names, and `maskTrailingDash` for prefixes. A leaf: [`crate::validation`]
//! applies them to objects, and the CRD schema compiler's CEL format
//! library (`admission::cel::format`) to strings.

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

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
pub(crate) fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

pub(crate) fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

pub(crate) fn problems(rule: NameRule, name: &str) -> Vec<String> {
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
pub(crate) fn label_value_problems(v: &str) -> Vec<String> {
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
/// As Go's, it drops the two last bytes and appends `a`; on bytes, so a
/// multi-byte character before the dash cannot make it panic.
pub(crate) fn mask_trailing_dash(prefix: &str) -> String {
    let b = prefix.as_bytes();
    if b.len() > 1 && b.ends_with(b"-") {
        format!("{}a", String::from_utf8_lossy(&b[..b.len() - 2]))
    } else {
        prefix.to_owned()
    }
}

const QUALIFIED_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a
/// name of at most 63 characters. `what` names the key in the message of
/// a key with more than one `/`.
pub(crate) fn qualified_name_problems(v: &str, what: &str) -> Vec<String> {
    let parts: Vec<&str> = v.split('/').collect();
    let mut out = Vec::new();
    let name = match parts.as_slice() {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                if prefix.len() > 253 {
                    out.push("prefix part must be no more than 253 bytes".to_owned());
                }
                if !is_subdomain(prefix) {
                    out.push(format!("prefix part {SUBDOMAIN_MSG}"));
                }
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid {what} {QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        out.push("name part must be no more than 63 bytes".to_owned());
    }
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !ok {
        out.push(format!("name part {QUALIFIED_MSG}"));
    }
    out
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
        assert_eq!(mask_trailing_dash("é-"), "\u{fffd}a");
        assert_eq!(
            qualified_name_problems(&"n".repeat(64), "label key"),
            ["name part must be no more than 63 bytes"]
        );
    }
}
