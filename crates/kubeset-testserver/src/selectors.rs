//! Label and field selectors, parsed from the `labelSelector` and
//! `fieldSelector` query parameters.
//!
//! Label selector grammar (as `k8s.io/apimachinery/pkg/labels` accepts it):
//! comma-separated requirements, each one of `key=value`, `key==value`,
//! `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` (exists) and
//! `!key` (does not exist). Field selectors support `=`, `==` and `!=` on
//! the kind's field labels (`fields.rs`). A `shardSelector` (`shard.rs`)
//! rides along with the field selector, so every list, watch and
//! deletecollection applies it as kube-apiserver 1.36 does.

mod shard;

use serde_json::Value;

pub(crate) use self::shard::ShardSelector;
use crate::fields::FieldSet;

/// A selector that could not be parsed; the message is shown to the client
/// in a 400 `BadRequest` Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelectorError(pub(crate) String);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    NotExists,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
}

impl Requirement {
    fn matches(&self, value: Option<&str>) -> bool {
        match (&self.op, value) {
            (Op::Eq(v), Some(x)) => v == x,
            (Op::Eq(_), None) => false,
            (Op::NotEq(v), Some(x)) => v != x,
            (Op::NotEq(_), None) => true,
            (Op::In(vs), Some(x)) => vs.iter().any(|v| v == x),
            (Op::In(_), None) => false,
            (Op::NotIn(vs), Some(x)) => !vs.iter().any(|v| v == x),
            (Op::NotIn(_), None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::NotExists, v) => v.is_none(),
        }
    }
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector {
    reqs: Vec<Requirement>,
}

/// A parsed field selector for one kind's field labels; the empty
/// selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector {
    reqs: Vec<Requirement>,
    fields: FieldSet,
    /// The request's `shardSelector`, if any.
    shard: Option<ShardSelector>,
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(v: &str) -> bool {
    v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_set(rest: &str, whole: &str) -> Result<Vec<String>, SelectorError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            SelectorError(format!(
                "unable to parse requirement: found '{rest}', expected: '('"
            ))
        })?;
    let values: Vec<String> = inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(SelectorError(format!(
            "unable to parse requirement: for 'in', 'notin' operators, values set can't be empty: {whole}"
        )));
    }
    for v in &values {
        if !valid_value(v) {
            return Err(SelectorError(format!("invalid label value: \"{v}\"")));
        }
    }
    Ok(values)
}

fn parse_requirement(part: &str) -> Result<Requirement, SelectorError> {
    let p = part.trim();
    if let Some(key) = p.strip_prefix('!') {
        let key = key.trim();
        if !valid_key(key) {
            return Err(SelectorError(format!("invalid label key \"{key}\"")));
        }
        return Ok(Requirement {
            key: key.to_owned(),
            op: Op::NotExists,
        });
    }
    for (sym, ctor) in [
        ("!=", Op::NotEq as fn(String) -> Op),
        ("==", Op::Eq as fn(String) -> Op),
        ("=", Op::Eq as fn(String) -> Op),
    ] {
        if let Some(idx) = p.find(sym) {
            let key = p[..idx].trim();
            let value = p[idx + sym.len()..].trim();
            if !valid_key(key) {
                return Err(SelectorError(format!("invalid label key \"{key}\"")));
            }
            if !valid_value(value) {
                return Err(SelectorError(format!("invalid label value: \"{value}\"")));
            }
            return Ok(Requirement {
                key: key.to_owned(),
                op: ctor(value.to_owned()),
            });
        }
    }
    let mut words = p.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or("").trim();
    let rest = words.next().unwrap_or("").trim();
    if !valid_key(key) {
        return Err(SelectorError(format!("invalid label key \"{key}\"")));
    }
    if rest.is_empty() {
        return Ok(Requirement {
            key: key.to_owned(),
            op: Op::Exists,
        });
    }
    if let Some(set) = rest.strip_prefix("notin") {
        return Ok(Requirement {
            key: key.to_owned(),
            op: Op::NotIn(parse_set(set, p)?),
        });
    }
    if let Some(set) = rest.strip_prefix("in") {
        return Ok(Requirement {
            key: key.to_owned(),
            op: Op::In(parse_set(set, p)?),
        });
    }
    Err(SelectorError(format!(
        "unable to parse requirement: found '{rest}', expected: in, notin, =, ==, !=, gt, lt"
    )))
}

impl LabelSelector {
    /// Parses the `labelSelector` parameter.
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        if s.trim().is_empty() {
            return Ok(Self::default());
        }
        let reqs = split_top(s)
            .into_iter()
            .map(parse_requirement)
            .collect::<Result<_, _>>()?;
        Ok(Self { reqs })
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        self.matches_by(|key| labels.and_then(|l| l.get(key)).and_then(Value::as_str))
    }

    /// Whether the labels `label` reads (a key's string value) satisfy
    /// every requirement.
    pub(crate) fn matches_by<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.reqs.iter().all(|r| r.matches(label(&r.key)))
    }
}

/// Converts a `LabelSelector` object (`matchLabels`, `matchExpressions`) to
/// its string form, as the scale subresource reports it.
pub(crate) fn selector_to_string(sel: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            parts.push(format!("{k}={}", v.as_str().unwrap_or_default()));
        }
    }
    if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str) {
                Some("In") => parts.push(format!("{key} in ({})", values.join(","))),
                Some("NotIn") => parts.push(format!("{key} notin ({})", values.join(","))),
                Some("Exists") => parts.push(key.to_owned()),
                Some("DoesNotExist") => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}

impl FieldSelector {
    /// Parses a `fieldSelector` on `metadata.name`/`metadata.namespace`.
    #[cfg(test)]
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        Self::parse_for(FieldSet::default(), s)
    }

    /// Parses the `fieldSelector` parameter for a kind with `fields`.
    pub(crate) fn parse_for(fields: FieldSet, s: &str) -> Result<Self, SelectorError> {
        if s.trim().is_empty() {
            return Ok(Self {
                reqs: Vec::new(),
                fields,
                shard: None,
            });
        }
        let mut reqs = Vec::new();
        for part in s.split(',') {
            let p = part.trim();
            let (key, op) = if let Some((k, v)) = p.split_once("!=") {
                (k, Op::NotEq(v.trim().to_owned()))
            } else if let Some((k, v)) = p.split_once("==") {
                (k, Op::Eq(v.trim().to_owned()))
            } else if let Some((k, v)) = p.split_once('=') {
                (k, Op::Eq(v.trim().to_owned()))
            } else {
                return Err(SelectorError(format!(
                    "invalid selector: '{s}'; can't understand '{p}'"
                )));
            };
            let key = fields.resolve(key.trim()).map_err(SelectorError)?;
            reqs.push(Requirement {
                key: key.to_owned(),
                op,
            });
        }
        Ok(Self {
            reqs,
            fields,
            shard: None,
        })
    }

    /// The same selector, also requiring `shard` (a request's
    /// `shardSelector`).
    pub(crate) fn with_shard(mut self, shard: Option<ShardSelector>) -> Self {
        self.shard = shard;
        self
    }

    /// The `shardSelector` applied, if any.
    pub(crate) fn shard(&self) -> Option<&ShardSelector> {
        self.shard.as_ref()
    }

    /// Whether the object satisfies every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if self.shard.as_ref().is_some_and(|s| !s.matches(obj)) {
            return false;
        }
        self.reqs.iter().all(|r| {
            // Absent fields read as Go's zero value ("" for a cluster-scoped
            // object's namespace).
            let v = self.fields.value(obj, &r.key);
            r.matches(Some(&v))
        })
    }

    /// Whether the selector matches every object (no requirement, no
    /// shard).
    pub(crate) fn is_empty(&self) -> bool {
        self.reqs.is_empty() && self.shard.is_none()
    }

    /// The name this selector pins with `metadata.name=`, if any.
    pub(crate) fn with_name(name: &str) -> Self {
        Self {
            reqs: vec![Requirement {
                key: "metadata.name".to_owned(),
                op: Op::Eq(name.to_owned()),
            }],
            fields: FieldSet::default(),
            shard: None,
        }
    }

    /// Adds the requirements of another selector.
    pub(crate) fn and(mut self, other: FieldSelector) -> Self {
        self.reqs.extend(other.reqs);
        self.shard = self.shard.or(other.shard);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web,db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("missing notin (db)", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("app=web,tier in (front, back)", true),
            ("app=web,tier=back", false),
            ("", true),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).unwrap();
            assert_eq!(s.matches(&o), want, "{sel}");
        }
    }

    #[test]
    fn label_errors() {
        assert!(LabelSelector::parse("app in ()").is_err());
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("a b c").is_err());
        assert!(LabelSelector::parse("app=we b").is_err());
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        assert!(FieldSelector::parse("metadata.name=a").unwrap().matches(&o));
        assert!(
            !FieldSelector::parse("metadata.name!=a")
                .unwrap()
                .matches(&o)
        );
        assert!(
            FieldSelector::parse("metadata.namespace==ns,metadata.name=a")
                .unwrap()
                .matches(&o)
        );
        assert!(FieldSelector::parse("spec.nodeName=x").is_err());
        let pods = FieldSet::builtin(crate::fields::PODS, crate::fields::Unknown::NotSupported);
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
        let sel = FieldSelector::parse_for(
            pods.clone(),
            "spec.host=n1,spec.hostNetwork=false,status.phase=",
        )
        .unwrap();
        assert!(sel.matches(&pod));
        assert_eq!(
            FieldSelector::parse_for(pods, "spec.foo=1").unwrap_err().0,
            "field label not supported: spec.foo"
        );
    }

    #[test]
    fn selector_string() {
        let s = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "t", "operator": "In", "values": ["a", "b"]}]});
        assert_eq!(selector_to_string(&s), "app=web,t in (a,b)");
    }
}
