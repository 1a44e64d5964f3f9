//! Built-in kinds read as kube-apiserver reads them: into their Go type.
//!
//! kube-apiserver decodes a request body (and the result of a patch) into
//! the kind's Go struct and stores it as protobuf, so what it keeps and
//! answers is what that struct can hold. The embedded server does the
//! same with the kind's compiled model (`kubeset_api`) and its protobuf
//! codec, a round trip JSON → model → protobuf → model → JSON:
//! - **A value of the wrong type** (a number for a string, invalid base64
//!   for bytes, a string for a list) or an object of the wrong shape is
//!   refused: `400 BadRequest` for a body, `422 Invalid` on the field
//!   `patch` for a patch.
//! - **Empty and null fields are dropped** (protobuf keeps no empty map or
//!   list; Go's `omitempty`): `annotations: {}`, `data: null` or an
//!   emptied `finalizers` leave no key behind.
//! - **A required field Go keeps nil stays absent**: the model holds a
//!   required field without `Option` and fills in its zero; where Go's
//!   field is a pointer (a Deployment's `spec.selector`) or an `omitempty`
//!   scalar, which the kind's OpenAPI v3 schema shows by publishing no zero
//!   `default`, the zero is taken out again when the object lacked the
//!   field. Fields Go always writes (a non-pointer struct such as
//!   `spec.template`) stay filled in.
//! - **Unknown fields are dropped**, with a `unknown field "spec.x"`
//!   warning, as `fieldValidation=Warn` (the default) words it; with
//!   `Strict` the request is refused (400 for a body, 422 for a patch),
//!   with `Ignore` nothing is said. A key whose value is empty (`{}`, `[]`,
//!   `null`, `""`, `0`, `false`) and that the model drops is taken as an
//!   empty known field.
//!
//! Custom resources and kinds without a codec pass unchanged.

use kubeset_api::protobuf::dynamic;
use kubeset_api::schema::{Definition, Wrap};
use serde_json::{Map, Value};

pub(crate) use crate::admission::FieldValidation;
use crate::resources::Resource;
use crate::shape::{self, Scalar, Shape};
use crate::status::ApiError;

/// Where the object came from: the answer to a failed decode differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A create or update body.
    Body,
    /// The object a patch produced.
    Patch,
}

/// `obj` as its kind's Go type holds it, with the warnings to send.
pub(crate) fn decode(
    res: &Resource,
    obj: Value,
    source: Source,
    fv: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    if res.custom {
        return Ok((obj, Vec::new()));
    }
    let Some(codec) = dynamic::kind(&res.api_version(), &res.kind) else {
        return Ok((obj, Vec::new()));
    };
    let fail = |why: String| refuse(res, &obj, source, why);
    let Value::Object(input) = &obj else {
        return Err(fail(format!(
            "json: cannot unmarshal {} into Go value of type {}",
            json_type(&obj),
            res.kind
        )));
    };
    let mut stripped = obj.clone();
    null_map_strings(&shape::of(res), &mut stripped);
    drop_nulls(&mut stripped);
    if let Value::Object(m) = &mut stripped {
        m.insert("apiVersion".into(), Value::String(res.api_version()));
        m.insert("kind".into(), Value::String(res.kind.clone()));
    }
    let bytes = codec.encode(&stripped).map_err(|e| fail(e.to_string()))?;
    let mut out = dynamic::to_json(&bytes).map_err(|e| fail(e.to_string()))?;
    let mut unknown = Vec::new();
    if let Value::Object(o) = &mut out {
        // apiVersion and kind stay as sent (or missing).
        for k in ["apiVersion", "kind"] {
            match input.get(k) {
                Some(v) => o.insert(k.to_owned(), v.clone()),
                None => o.remove(k),
            };
        }
        unknown_fields(input, o, "", &mut unknown);
        keep_managed_fields_reset(input, o);
    }
    if let Some(def) = shape::builtin_definition(&res.api_version(), &res.kind) {
        unset_absent(def, &stripped, &mut out);
    }
    crate::registry::of(res).on_decode(&mut out);
    let warnings: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    match fv {
        FieldValidation::Ignore => Ok((out, Vec::new())),
        FieldValidation::Warn => Ok((out, warnings)),
        FieldValidation::Strict if warnings.is_empty() => Ok((out, Vec::new())),
        FieldValidation::Strict => Err(fail(format!(
            "strict decoding error: {}",
            warnings.join(", ")
        ))),
    }
}

/// The answer to an object its kind's type cannot hold.
fn refuse(res: &Resource, obj: &Value, source: Source, why: String) -> ApiError {
    match source {
        Source::Body => ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: {why}",
            kind = res.kind,
            v = res.api_version()
        )),
        Source::Patch => {
            let mut shown = obj.to_string();
            if shown.len() > 256 {
                let cut = (0..=256).rev().find(|i| shown.is_char_boundary(*i));
                shown.truncate(cut.unwrap_or(0));
                shown.push('…');
            }
            ApiError::invalid_patch(shown, &why)
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Removes every key whose value is `null` (Go leaves such a field at its
/// zero value, which the model reads as absent).
/// A `null` value of a map of strings (`data: {j: null}`, as a JSON patch
/// copying a missing key leaves it) becomes `""`: Go's JSON decoder sets
/// the key to the zero value and keeps it. A struct field's `null` is left
/// for [`drop_nulls`].
fn null_map_strings(shape: &Shape, v: &mut Value) {
    match (shape, v) {
        (Shape::Object { fields, rest, .. }, Value::Object(m)) => {
            for (k, x) in m.iter_mut() {
                match (fields.get(k), rest) {
                    (Some(f), _) => null_map_strings(f, x),
                    (None, Some(r)) if x.is_null() && **r == Shape::Scalar(Scalar::String) => {
                        *x = Value::String(String::new());
                    }
                    (None, Some(r)) => null_map_strings(r, x),
                    (None, None) => {}
                }
            }
        }
        (Shape::List { item, .. }, Value::Array(a)) => {
            a.iter_mut().for_each(|x| null_map_strings(item, x));
        }
        _ => {}
    }
}

fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Removes from `out` each required field that `input` lacks and that Go
/// keeps unset ([`Prop::unset_when_absent`]: a pointer, as a Deployment's
/// `spec.selector`, or an `omitempty` scalar), which the model's round
/// trip filled in with its zero. The fields Go always writes (a struct
/// that is not a pointer, as `spec.template`) stay filled in, as Go's JSON
/// writes them. Walks only the nodes both objects have.
///
/// [`Prop::unset_when_absent`]: kubeset_api::schema::Prop::unset_when_absent
fn unset_absent(def: Definition, input: &Value, out: &mut Value) {
    let (Value::Object(i), Value::Object(o)) = (input, out) else {
        return;
    };
    for p in def.model.properties {
        let Some(ov) = o.get_mut(p.name) else {
            continue;
        };
        let Some(iv) = i.get(p.name) else {
            if p.unset_when_absent {
                o.remove(p.name);
            }
            continue;
        };
        let Some(inner) = p.reference else {
            continue;
        };
        match (p.wrap, iv, ov) {
            (Wrap::One, iv, ov) => unset_absent(inner, iv, ov),
            (Wrap::List, Value::Array(ia), Value::Array(oa)) if ia.len() == oa.len() => {
                for (x, y) in ia.iter().zip(oa) {
                    unset_absent(inner, x, y);
                }
            }
            (Wrap::Map, Value::Object(im), Value::Object(om)) => {
                for (k, y) in om.iter_mut() {
                    if let Some(x) = im.get(k) {
                        unset_absent(inner, x, y);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `metadata.managedFields: []` asks the field manager to reset them
/// (kube-apiserver's Go object keeps the empty, non-nil slice): the round
/// trip through the model would drop it as empty, so it is put back.
fn keep_managed_fields_reset(input: &Map<String, Value>, out: &mut Map<String, Value>) {
    let asked = input
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|mf| mf.as_array().is_some_and(Vec::is_empty));
    if let (true, Some(Value::Object(meta))) = (asked, out.get_mut("metadata")) {
        meta.insert("managedFields".into(), Value::Array(Vec::new()));
    }
}

/// Most unknown fields named (the warnings are cut at 4 KiB anyway).
const MAX_UNKNOWN: usize = 64;

/// Whether a dropped value may have been an empty known field: Go's
/// `omitempty` drops zero scalars too (`resourceVersion: ""`, `0`, `false`).
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// The paths (Go's style: `spec.containers[0].x`) of the keys of `input`
/// the model dropped.
fn unknown_fields(
    input: &Map<String, Value>,
    out: &Map<String, Value>,
    at: &str,
    found: &mut Vec<String>,
) {
    for (k, v) in input {
        let path = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        if found.len() >= MAX_UNKNOWN {
            return;
        }
        match (v, out.get(k)) {
            (_, None) if !is_empty(v) => found.push(path),
            (Value::Object(i), Some(Value::Object(o))) => unknown_fields(i, o, &path, found),
            (Value::Array(i), Some(Value::Array(o))) if i.len() == o.len() => {
                for (n, (x, y)) in i.iter().zip(o).enumerate() {
                    if let (Value::Object(x), Value::Object(y)) = (x, y) {
                        unknown_fields(x, y, &format!("{path}[{n}]"), found);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A JSON body read again to find its duplicate keys, as Go's strict
/// decoder reports them (`duplicate field "data"`): `None` when it has
/// none (or is not JSON), else the object with each repeated key's values
/// merged as Go decodes them into one field (objects merged key by key,
/// anything else replaced by the later value) and the repeated keys'
/// paths.
pub(crate) fn duplicates(body: &[u8], content_type: &str) -> Option<(Value, Vec<String>)> {
    if !content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .ends_with("json")
    {
        return None;
    }
    let found = std::cell::RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(body);
    let v = serde::de::DeserializeSeed::deserialize(
        Dups {
            path: String::new(),
            found: &found,
        },
        &mut de,
    )
    .ok()?;
    let found = found.into_inner();
    (!found.is_empty()).then_some((v, found))
}

/// Most duplicate paths reported (a body of many repeats says enough).
const MAX_DUPLICATES: usize = 64;

/// Reads a JSON value, noting repeated keys under `path`.
struct Dups<'a> {
    path: String,
    found: &'a std::cell::RefCell<Vec<String>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Dups<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Dups<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Dups {
            path: format!("{}[{}]", self.path, out.len()),
            found: self.found,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                k.clone()
            } else {
                format!("{}.{k}", self.path)
            };
            let v = map.next_value_seed(Dups {
                path: path.clone(),
                found: self.found,
            })?;
            match out.get_mut(&k) {
                Some(old) => {
                    let mut found = self.found.borrow_mut();
                    if found.len() < MAX_DUPLICATES {
                        found.push(path);
                    }
                    merge_repeated(old, v);
                }
                None => {
                    out.insert(k, v);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// A repeated key's later value decoded into the earlier one, as Go does.
fn merge_repeated(old: &mut Value, new: Value) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, v) in n {
                match o.get_mut(&k) {
                    Some(x) => merge_repeated(x, v),
                    None => {
                        o.insert(k, v);
                    }
                }
            }
        }
        (old, new) => *old = new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn builtin(group: &str, plural: &str) -> std::sync::Arc<Resource> {
        crate::resources::builtin()
            .into_iter()
            .find(|r| r.group == group && r.plural == plural)
            .expect("a built-in resource")
    }

    fn cm() -> std::sync::Arc<Resource> {
        builtin("", "configmaps")
    }

    /// Go's pointers stay nil when absent; its value structs are written.
    #[test]
    fn absent_pointers_stay_absent_and_value_structs_are_filled_in() {
        let deploy = |spec: Value| {
            let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "a"}, "spec": spec});
            let (out, _) = decode(
                &builtin("apps", "deployments"),
                obj,
                Source::Body,
                FieldValidation::Warn,
            )
            .unwrap();
            out["spec"].clone()
        };
        // `selector` (`*LabelSelector`) absent or null: left out;
        // `template` (a `PodTemplateSpec` value) is written as Go writes it.
        let spec = deploy(json!({"replicas": 1}));
        assert!(spec.get("selector").is_none(), "{spec}");
        assert!(spec.get("template").is_some_and(Value::is_object), "{spec}");
        assert!(deploy(json!({"selector": null})).get("selector").is_none());
        // Sent, even empty: kept (a non-nil pointer to an empty struct).
        assert_eq!(deploy(json!({"selector": {}}))["selector"], json!({}));
        let sel = json!({"matchLabels": {"a": "b"}});
        assert_eq!(deploy(json!({"selector": sel}))["selector"], sel);
        // A scalar pointer (`*SideEffectClass`) in a list's items: left out
        // where absent, kept where sent.
        let hooks = json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": "h"},
            "webhooks": [{"name": "a.example.com", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://a.example.com"}},
                {"name": "b.example.com", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://b.example.com"}, "sideEffects": "None"}]});
        let res = builtin(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
        );
        let (out, _) = decode(&res, hooks.clone(), Source::Body, FieldValidation::Warn).unwrap();
        assert!(out["webhooks"][0].get("sideEffects").is_none(), "{out}");
        assert_eq!(out["webhooks"][1]["sideEffects"], "None");
        // The same for a validating configuration.
        let mut hooks = hooks;
        hooks["kind"] = json!("ValidatingWebhookConfiguration");
        let res = builtin(
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        );
        let (out, _) = decode(&res, hooks, Source::Body, FieldValidation::Warn).unwrap();
        assert!(out["webhooks"][0].get("sideEffects").is_none(), "{out}");
        assert_eq!(out["webhooks"][1]["sideEffects"], "None");
    }

    #[test]
    fn round_trip_drops_empties_and_unknown_fields() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "annotations": {}, "labels": {"x": "1"}, "finalizers": []},
            "data": null, "frob": 1, "binaryData": {}});
        let (out, w) = decode(&cm(), obj, Source::Body, FieldValidation::Warn).unwrap();
        assert_eq!(
            out,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}}})
        );
        assert_eq!(w, ["unknown field \"frob\""]);
    }

    #[test]
    fn duplicate_keys_are_merged_and_named() {
        let body = br#"{"data":{"k":"v"},"data":{"j":"w"},"metadata":{"name":"a","name":"b"},"l":[{"x":1,"x":2}]}"#;
        let (v, found) = duplicates(body, "application/json").unwrap();
        assert_eq!(
            v,
            json!({"data": {"k": "v", "j": "w"}, "metadata": {"name": "b"}, "l": [{"x": 2}]})
        );
        assert_eq!(found, ["data", "metadata.name", "l[0].x"]);
        assert!(duplicates(br#"{"a":1}"#, "application/json").is_none());
        assert!(duplicates(b"a: 1\na: 2", "application/yaml").is_none());
        assert!(duplicates(b"{", "application/json").is_none());
    }

    #[test]
    fn unknown_fields_are_named_by_path_and_bounded() {
        let mut obj =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "x": 1}});
        for i in 0..1000 {
            obj[format!("u{i:04}")] = json!(1);
        }
        let (_, w) = decode(&cm(), obj.clone(), Source::Body, FieldValidation::Warn).unwrap();
        assert_eq!(w.len(), MAX_UNKNOWN);
        assert_eq!(w[0], "unknown field \"metadata.x\"");
        let e = decode(&cm(), obj.clone(), Source::Body, FieldValidation::Strict).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        let e = decode(&cm(), obj.clone(), Source::Patch, FieldValidation::Strict).unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        let (_, w) = decode(&cm(), obj, Source::Body, FieldValidation::Ignore).unwrap();
        assert!(w.is_empty());
        // Wrong types: 400 for a body, 422 on `patch` for a patch.
        let bad = json!({"metadata": {"name": "a"}, "data": {"k": 5}});
        let e = decode(&cm(), bad.clone(), Source::Body, FieldValidation::Warn).unwrap_err();
        assert_eq!(e.code, 400);
        let e = decode(&cm(), bad, Source::Patch, FieldValidation::Warn).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(e.details.unwrap()["causes"][0]["field"], "patch");
        assert_eq!(
            decode(&cm(), json!([1]), Source::Body, FieldValidation::Warn)
                .unwrap_err()
                .code,
            400
        );
    }
}
