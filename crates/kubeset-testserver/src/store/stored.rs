//! An object as the store keeps it: its JSON text and its labels, parsed
//! again only where a read needs the whole object.
//!
//! A `serde_json::Value` costs many times its JSON (a map node per
//! object, a `String` per key and value): a pod of the scale bench's
//! generator, as stored (10.8 KB of JSON), is 112.6 KB of `Value` heap in
//! 855 allocations, and the bench's server seeded with 10,000 pods held
//! 1,305 MB RSS as values against 146 MB as text. Lists and
//! selectors read only the labels without parsing; a get, a list's page, a
//! watch event and a write parse the object they answer with. Text printed
//! from a `Value` parses back to an equal `Value` (serde_json's numbers
//! round-trip, keys keep their order), so every answer is as before.
//!
//! The kinds the server reads on its own writes stay parsed
//! ([`keeps_parsed`]): namespaces (a namespaced write's namespace
//! selector) and the admission configuration (every write's policies and
//! webhooks), few objects read often.

use std::borrow::Cow;

use serde_json::Value;

use crate::selectors::{FieldSelector, LabelSelector};

/// Containers nested deeper than this are kept parsed: serde_json's
/// parser refuses text nested 128 deep (its recursion limit), and an
/// object can grow past what one request body could carry (a JSON patch
/// adds a whole nested value at a nested path, again and again).
const MAX_TEXT_DEPTH: usize = 100;

/// Whether `v` nests containers deeper than `limit` (without recursion:
/// the walk stops at the limit, whatever the depth).
fn deeper_than(v: &Value, limit: usize) -> bool {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let is_container = matches!(v, Value::Array(_) | Value::Object(_));
        if is_container && depth >= limit {
            return true;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, depth + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// The storage keys whose objects are kept parsed.
pub(crate) fn keeps_parsed((group, plural): &(String, String)) -> bool {
    group == "admissionregistration.k8s.io" || (group.is_empty() && plural == "namespaces")
}

/// One stored object.
#[derive(Debug)]
pub(crate) struct Stored(Body);

#[derive(Debug)]
enum Body {
    Parsed(Value),
    Text {
        json: Box<str>,
        /// `metadata.labels` with string values, for label selectors.
        labels: Box<[(Box<str>, Box<str>)]>,
    },
}

impl Stored {
    /// `obj` stored under the storage key `key`.
    pub(crate) fn new(key: &(String, String), obj: &Value) -> Self {
        if keeps_parsed(key) || deeper_than(obj, MAX_TEXT_DEPTH) {
            return Self(Body::Parsed(obj.clone()));
        }
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())))
            .collect();
        Self(Body::Text {
            json: obj.to_string().into_boxed_str(),
            labels,
        })
    }

    /// The object: borrowed when kept parsed, parsed from its text
    /// otherwise.
    pub(crate) fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Body::Parsed(v) => Cow::Borrowed(v),
            Body::Text { json, .. } => {
                Cow::Owned(serde_json::from_str(json).expect("the store's own JSON text parses"))
            }
        }
    }

    /// The object, owned.
    pub(crate) fn to_value(&self) -> Value {
        self.value().into_owned()
    }

    /// Whether the object satisfies both selectors; the object is parsed
    /// only for a field selector.
    pub(crate) fn matches(&self, label: &LabelSelector, field: &FieldSelector) -> bool {
        match &self.0 {
            Body::Parsed(v) => label.matches(v) && field.matches(v),
            Body::Text { labels, .. } => {
                label.matches_by(|key| labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v))
                    && (field.is_empty() || field.matches(&self.value()))
            }
        }
    }

    /// The length of the object's JSON text.
    pub(crate) fn json_len(&self) -> usize {
        match &self.0 {
            Body::Parsed(v) => serde_json::to_vec(v).map_or(0, |b| b.len()),
            Body::Text { json, .. } => json.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Stored;
    use crate::selectors::{FieldSelector, LabelSelector};

    fn key(group: &str, plural: &str) -> (String, String) {
        (group.to_owned(), plural.to_owned())
    }

    #[test]
    fn text_parses_back_to_the_same_object() {
        let obj = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "labels": {"app": "x", "tier": "web"}, "z": 1, "b": -2},
            "spec": {"f": 0.1, "big": u64::MAX, "neg": i64::MIN, "e": 1e300, "s": "\u{e9}\"\n", "n": null, "a": [true, {}]}
        });
        let stored = Stored::new(&key("", "pods"), &obj);
        assert_eq!(stored.to_value(), obj);
        assert_eq!(stored.to_value().to_string(), obj.to_string());
        assert_eq!(stored.json_len(), obj.to_string().len());
    }

    #[test]
    fn an_object_nested_past_the_parser_limit_is_kept_and_read_back() {
        // 150 nested arrays: printable, but past serde_json's parse limit.
        let mut deep = json!("leaf");
        for _ in 0..150 {
            deep = json!([deep]);
        }
        let obj =
            json!({"metadata": {"name": "a", "labels": {"app": "x"}}, "spec": {"deep": deep}});
        assert!(serde_json::from_str::<serde_json::Value>(&obj.to_string()).is_err());
        let stored = Stored::new(&key("example.com", "widgets"), &obj);
        assert_eq!(stored.to_value(), obj);
        let app = LabelSelector::parse("app=x").unwrap_or_default();
        assert!(stored.matches(&app, &FieldSelector::default()));
    }

    #[test]
    fn the_depth_check_counts_containers() {
        let flat = json!({"a": [1, 2], "b": {"c": "d"}});
        assert!(!super::deeper_than(&flat, 2));
        assert!(super::deeper_than(&flat, 1));
        assert!(!super::deeper_than(&json!("scalar"), 0));
    }

    #[test]
    fn label_selectors_read_the_kept_labels() {
        let obj = json!({"metadata": {"name": "a", "labels": {"app": "x", "n": 1}}});
        for k in [key("", "pods"), key("", "namespaces")] {
            let stored = Stored::new(&k, &obj);
            let sel = |s: &str| LabelSelector::parse(s).unwrap_or_default();
            let any = FieldSelector::default();
            assert!(stored.matches(&sel("app=x"), &any));
            assert!(stored.matches(&sel("app in (x,y),!n"), &any));
            assert!(!stored.matches(&sel("app!=x"), &any));
            assert!(!stored.matches(&sel("missing"), &any));
            let name = |n: &str| FieldSelector::parse(&format!("metadata.name={n}")).ok();
            assert!(stored.matches(&sel(""), &name("a").unwrap_or_default()));
            assert!(!stored.matches(&sel(""), &name("b").unwrap_or_default()));
        }
    }
}
