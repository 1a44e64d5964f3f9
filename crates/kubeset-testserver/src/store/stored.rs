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

/// The `apiVersion` and `kind` members an object of `api_version` and
/// `kind` has in its text, for [`Stored::write_if_typed`].
pub(crate) fn type_members(api_version: &str, kind: &str) -> (String, String) {
    let member = |k: &str, v: &str| format!("\"{k}\":{}", Value::from(v));
    (member("apiVersion", api_version), member("kind", kind))
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
        /// Where `json` holds the object's own `apiVersion` and `kind`.
        type_meta: TypeMeta,
    },
}

/// The byte ranges of the top-level `apiVersion` and `kind` members
/// (`"apiVersion":"v1"`, without a comma) in an object's text, so that
/// an answer can drop them (a built-in kind's list items) or check them
/// (a watch event in the stored version) without parsing the object.
#[derive(Debug, Default, Clone, Copy)]
struct TypeMeta([Option<(u32, u32)>; 2]);

impl TypeMeta {
    /// The member texts, each `None` when the object has no such member.
    fn members<'a>(&self, json: &'a str) -> [Option<&'a str>; 2] {
        self.0
            .map(|r| r.and_then(|(a, b)| json.get(a as usize..b as usize)))
    }
}

/// Writes the object `map` as serde_json's compact form prints it (`{`,
/// the members in the map's order as `key:value` joined by `,`, `}`),
/// each member's value by `value` (which writes it, or something in its
/// place), with the range each member took in `out`.
pub(crate) fn write_members(
    map: &serde_json::Map<String, Value>,
    out: &mut Vec<u8>,
    mut value: impl FnMut(&str, &Value, &mut Vec<u8>),
    mut member: impl FnMut(&str, usize, usize),
) {
    out.push(b'{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let start = out.len();
        // Writing into a Vec fails only on a value serde_json cannot
        // print, which a `Value` never holds.
        let _ = serde_json::to_writer(&mut *out, k);
        out.push(b':');
        value(k, v, out);
        member(k, start, out.len());
    }
    out.push(b'}');
}

/// `obj` printed as `obj.to_string()` prints it, with the ranges of its
/// `apiVersion` and `kind` members.
fn print(obj: &Value) -> (String, TypeMeta) {
    let Value::Object(map) = obj else {
        return (obj.to_string(), TypeMeta::default());
    };
    let mut out = Vec::with_capacity(256);
    let mut meta = TypeMeta::default();
    let print_value = |_: &str, v: &Value, out: &mut Vec<u8>| {
        let _ = serde_json::to_writer(out, v);
    };
    write_members(map, &mut out, print_value, |k, start, end| {
        let slot = match k {
            "apiVersion" => 0,
            "kind" => 1,
            _ => return,
        };
        meta.0[slot] = u32::try_from(start).ok().zip(u32::try_from(end).ok());
    });
    // serde_json writes valid UTF-8 only.
    let text = String::from_utf8(out).unwrap_or_else(|_| obj.to_string());
    (text, meta)
}

/// Writes the object text `json` without the members at `drop` (sorted,
/// not overlapping, each a whole member without its comma): the pieces
/// between them, each trimmed of the comma that joined it to a dropped
/// member, joined by commas. A member never starts or ends with a comma
/// (it starts with its key's quote and ends with its value's last byte).
fn write_without(json: &str, drop: &[(usize, usize)], out: &mut Vec<u8>) {
    let end = json.len().saturating_sub(1);
    let starts = std::iter::once(1).chain(drop.iter().map(|&(_, b)| b));
    let ends = drop.iter().map(|&(a, _)| a).chain(std::iter::once(end));
    out.push(b'{');
    let mut first = true;
    for (a, b) in starts.zip(ends) {
        let piece = json.get(a..b).unwrap_or_default();
        let piece = piece.strip_prefix(',').unwrap_or(piece);
        let piece = piece.strip_suffix(',').unwrap_or(piece);
        if piece.is_empty() {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(piece.as_bytes());
    }
    out.push(b'}');
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
        let (json, type_meta) = print(obj);
        Self(Body::Text {
            json: json.into_boxed_str(),
            labels,
            type_meta,
        })
    }

    /// Writes the object's text without its `apiVersion` and `kind` (as
    /// a built-in kind's list item shows it); `false`, writing nothing,
    /// when the object is kept parsed.
    pub(crate) fn write_untyped(&self, out: &mut Vec<u8>) -> bool {
        let Body::Text {
            json, type_meta, ..
        } = &self.0
        else {
            return false;
        };
        // At most two ranges, sorted in place: no allocation per item of
        // a list.
        let mut drop = [(0usize, 0usize); 2];
        let mut n = 0;
        for &(a, b) in type_meta.0.iter().flatten() {
            drop[n] = (a as usize, b as usize);
            n += 1;
        }
        let drop = &mut drop[..n];
        drop.sort_unstable();
        write_without(json, drop, out);
        true
    }

    /// Writes the object's text when its `apiVersion` and `kind` members
    /// are the texts `api_version` and `kind` (`"apiVersion":"v1"`, as
    /// [`type_members`] prints them); `false`, writing nothing, otherwise
    /// or when the object is kept parsed.
    pub(crate) fn write_if_typed(&self, api_version: &str, kind: &str, out: &mut Vec<u8>) -> bool {
        match self.typed_text(api_version, kind) {
            Some(json) => {
                out.extend_from_slice(json.as_bytes());
                true
            }
            None => false,
        }
    }

    /// The object's text when its `apiVersion` and `kind` members are
    /// the texts `api_version` and `kind` (as [`Stored::write_if_typed`]
    /// writes it); `None` otherwise or when the object is kept parsed.
    pub(crate) fn typed_text(&self, api_version: &str, kind: &str) -> Option<&str> {
        let Body::Text {
            json, type_meta, ..
        } = &self.0
        else {
            return None;
        };
        (type_meta.members(json) == [Some(api_version), Some(kind)]).then_some(&**json)
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

    #[test]
    fn the_text_is_the_printed_object_and_drops_its_type_members_anywhere() {
        let objs = [
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}),
            json!({"_a": 1, "apiVersion": "v1", "b": [{"kind": "inner"}], "kind": "X", "z": 3}),
            json!({"apiVersion": "v1", "kind": "X"}),
            json!({"kind": "X"}),
            json!({"a": {"apiVersion": "nested"}, "kind": "X"}),
            json!({"apiVersion": "v1"}),
            json!({"a": 1}),
            json!({}),
        ];
        for obj in objs {
            let stored = Stored::new(&key("", "pods"), &obj);
            let (text, _) = super::print(&obj);
            assert_eq!(text, obj.to_string());
            let mut untyped = obj.clone();
            if let Some(m) = untyped.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
            let mut out = Vec::new();
            assert!(stored.write_untyped(&mut out));
            assert_eq!(
                String::from_utf8(out).ok(),
                Some(untyped.to_string()),
                "{obj}"
            );
            let (api_version, kind) = super::type_members("v1", "X");
            let mut out = Vec::new();
            let typed =
                obj.get("apiVersion") == Some(&json!("v1")) && obj.get("kind") == Some(&json!("X"));
            assert_eq!(
                stored.write_if_typed(&api_version, &kind, &mut out),
                typed,
                "{obj}"
            );
            assert_eq!(out.is_empty(), !typed);
        }
        // Kept parsed: never written from a text.
        let ns = Stored::new(&key("", "namespaces"), &json!({"kind": "Namespace"}));
        assert!(!ns.write_untyped(&mut Vec::new()));
    }
}
