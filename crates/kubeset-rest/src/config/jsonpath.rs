//! The JSONPath subset of `auth-provider: gcp`'s `token-key` and
//! `expiry-key`: a path of field names and array indices, written as
//! client-go's templates (`{.credential.access_token}`) or as kube-rs also
//! accepts them (`credential.access_token`, `$.credential.access_token`).
//!
//! client-go evaluates these with its full template language; gcloud and
//! every kubeconfig seen in practice use plain paths. Anything else
//! (wildcards, `..`, filters, slices, unions, `range`, text around the
//! braces) is refused when the kubeconfig is loaded, naming the key.

use std::fmt;

use serde_json::Value;

/// The longest path accepted, in bytes.
const MAX_PATH_BYTES: usize = 1024;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
}

/// A parsed path; `Display` shows it as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

impl JsonPath {
    /// Parses `text`; the error says what is not supported.
    pub(super) fn parse(text: &str) -> Result<Self, String> {
        let unsupported = |what: &str| {
            format!(
                "{text:?}: {what}; only field names and array indices are supported \
                 ({{.a.b}}, {{.a['b-c']}}, {{.a[0]}})"
            )
        };
        if text.len() > MAX_PATH_BYTES {
            return Err(format!("longer than {MAX_PATH_BYTES} bytes"));
        }
        let trimmed = text.trim();
        let inner = match trimmed.strip_prefix('{') {
            Some(rest) => rest
                .strip_suffix('}')
                .ok_or_else(|| unsupported("text after the template"))?,
            None if trimmed.ends_with('}') => return Err(unsupported("text before the template")),
            None => trimmed,
        };
        if inner.contains(['{', '}']) {
            return Err(unsupported("more than one template"));
        }
        let inner = inner.trim();
        let inner = inner.strip_prefix('$').unwrap_or(inner);
        if inner.is_empty() {
            return Err(unsupported("an empty path"));
        }
        let field = |name: &str| {
            if name.is_empty() {
                Err(unsupported("an empty field name"))
            } else if name.contains(['*', '?', '@', '(', ')', ',', ':', ' ', '\'', '"']) {
                Err(unsupported(&format!("the field {name:?}")))
            } else {
                Ok(Step::Field(name.to_owned()))
            }
        };
        let mut steps = Vec::new();
        // kube-rs accepts `a.b` for `.a.b`.
        let mut rest = match inner.starts_with(['.', '[']) {
            true => inner,
            false => {
                let len = field_len(inner);
                steps.push(field(&inner[..len])?);
                &inner[len..]
            }
        };
        while !rest.is_empty() {
            if rest.starts_with("..") {
                return Err(unsupported("recursive descent (..)"));
            }
            if let Some(after) = rest.strip_prefix('.') {
                let len = field_len(after);
                steps.push(field(&after[..len])?);
                rest = &after[len..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after
                    .find(']')
                    .ok_or_else(|| unsupported("an unclosed ["))?;
                steps.push(
                    bracket(&after[..end]).ok_or_else(|| {
                        unsupported(&format!("the subscript [{}]", &after[..end]))
                    })?,
                );
                rest = &after[end + 1..];
            } else {
                return Err(unsupported(&format!("{rest:?}")));
            }
        }
        Ok(Self {
            text: text.to_owned(),
            steps,
        })
    }

    /// The string at the path in `value`; the error says where the path
    /// stopped (never the value found).
    pub(super) fn string_in<'a>(&self, value: &'a Value) -> Result<&'a str, String> {
        let mut at = value;
        for step in &self.steps {
            let next = match step {
                Step::Field(name) => at.as_object().and_then(|o| o.get(name)),
                Step::Index(i) => at.as_array().and_then(|a| a.get(*i)),
            };
            at = next.ok_or_else(|| match step {
                Step::Field(name) => format!("{self}: no field {name:?}"),
                Step::Index(i) => format!("{self}: no element [{i}]"),
            })?;
        }
        at.as_str()
            .ok_or_else(|| format!("{self}: the value is not a string"))
    }
}

/// The length of the field name at the start of `s` (up to `.` or `[`).
fn field_len(s: &str) -> usize {
    s.find(['.', '[']).unwrap_or(s.len())
}

/// `['name']`, `["name"]` or `[N]`.
fn bracket(inside: &str) -> Option<Step> {
    let inside = inside.trim();
    for quote in ['\'', '"'] {
        if let Some(name) = inside
            .strip_prefix(quote)
            .and_then(|s| s.strip_suffix(quote))
        {
            return (!name.contains(quote)).then(|| Step::Field(name.to_owned()));
        }
    }
    if inside.is_empty() || !inside.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    inside.parse().ok().map(Step::Index)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_paths_in_every_spelling_find_the_same_string() {
        let doc = json!({"credential": {"access_token": "t", "list": ["x", {"k-y": "v"}]}});
        for path in [
            "{.credential.access_token}",
            " {$.credential.access_token} ",
            ".credential.access_token",
            "credential.access_token",
            "$.credential.access_token",
            "{.credential['access_token']}",
            "{[\"credential\"].access_token}",
        ] {
            let p = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(p.string_in(&doc), Ok("t"), "{path}");
        }
        let p = JsonPath::parse("{.credential.list[1]['k-y']}").unwrap();
        assert_eq!(p.string_in(&doc), Ok("v"));
        let p = JsonPath::parse("{.credential.list[0]}").unwrap();
        assert_eq!(p.string_in(&doc), Ok("x"));
    }

    #[test]
    fn a_missing_step_or_a_non_string_is_named() {
        let doc = json!({"a": {"n": 1, "l": []}});
        let err = |p: &str| JsonPath::parse(p).unwrap().string_in(&doc).unwrap_err();
        assert_eq!(err("{.a.b}"), "\"{.a.b}\": no field \"b\"");
        assert_eq!(err("{.a.l[3]}"), "\"{.a.l[3]}\": no element [3]");
        assert_eq!(err("{.a.n}"), "\"{.a.n}\": the value is not a string");
        assert_eq!(err("{.a.n.x}"), "\"{.a.n.x}\": no field \"x\"");
    }

    #[test]
    fn the_rest_of_jsonpath_is_refused_naming_what() {
        for (path, what) in [
            ("{..access_token}", "recursive descent"),
            ("{.items[*].name}", "subscript [*]"),
            ("{.items[?(@.a)]}", "subscript [?(@.a)"),
            ("{.items[0:2]}", "subscript [0:2]"),
            ("{.items[-1]}", "subscript [-1]"),
            ("{.a.*}", "the field \"*\""),
            ("{.a}{.b}", "more than one template"),
            ("token: {.a}", "text before the template"),
            ("{.a} s", "text after the template"),
            ("{range .items[*]}", "the field \"range \""),
            ("{}", "an empty path"),
            ("{.a[0}", "unclosed"),
            ("{.a.}", "an empty field name"),
        ] {
            let err = JsonPath::parse(path).expect_err(path);
            assert!(err.contains(what), "{path}: {err}");
        }
        let long = format!("{{.{}}}", "a".repeat(2000));
        assert!(JsonPath::parse(&long).unwrap_err().contains("longer than"));
    }
}
