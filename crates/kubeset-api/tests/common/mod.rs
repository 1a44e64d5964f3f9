//! Round-trip check shared by the fixture tests.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Object members whose value is `null` are dropped: the API server writes
/// some unset optional fields as `null` (Pod conditions' `lastProbeTime`),
/// and a `null` and an absent field mean the same to it. The models read
/// both as `None` and write neither.
fn drop_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Deserializes `json` into `T`, serializes it back and requires equal JSON
/// (as values: key order does not matter; `null` members as absent), then
/// checks that a second round trip through `serde_json::Value` gives the
/// same again.
#[cfg(not(feature = "protobuf"))]
pub fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(json: &str) {
    json_round_trip::<T>(json);
}

/// [`json_round_trip`], then JSON → model → protobuf (with the `k8s\0`
/// envelope) → model → JSON, equal to the input.
#[cfg(feature = "protobuf")]
pub fn round_trip<T>(json: &str)
where
    T: DeserializeOwned
        + Serialize
        + PartialEq
        + std::fmt::Debug
        + Default
        + Clone
        + kubeset_api::Resource
        + kubeset_api::protobuf::Message,
{
    let typed = json_round_trip::<T>(json);
    let bytes = kubeset_api::protobuf::encode_object(&typed);
    let back: T = kubeset_api::protobuf::decode_object(&bytes).expect("protobuf decodes");
    let (a, b) = (
        serde_json::to_value(&typed).expect("serializes"),
        serde_json::to_value(&back).expect("serializes"),
    );
    if !same_on_the_wire(&a, &b) {
        panic!(
            "protobuf round trip changed the object\n--- before\n{}\n--- after\n{}",
            serde_json::to_string_pretty(&a).unwrap_or_default(),
            serde_json::to_string_pretty(&b).unwrap_or_default()
        );
    }
    // Re-encoding what was decoded gives the same bytes.
    assert_eq!(kubeset_api::protobuf::encode_object(&back), bytes);
    // The list of one, through the generic `List<T>` codec.
    let list = kubeset_api::List {
        items: vec![typed.clone()],
        ..Default::default()
    };
    let list_bytes = kubeset_api::protobuf::encode(&list);
    let back: kubeset_api::List<T> =
        kubeset_api::protobuf::decode(&list_bytes).expect("list decodes");
    assert_eq!(back.items.len(), 1);
    assert_eq!(
        kubeset_api::protobuf::encode(&back.items[0]),
        kubeset_api::protobuf::encode(&typed)
    );
}

/// Equal as protobuf can carry them, which is Go's own equality: an empty
/// list or map is an absent one (`[]`/`{}` in `before` may be missing in
/// `after`), and an opaque type (no properties in the spec, an empty Go
/// struct, an empty message) carries nothing (the fixtures' placeholder
/// `{"opaque": "value"}` becomes `{}`).
#[cfg(feature = "protobuf")]
fn same_on_the_wire(before: &serde_json::Value, after: &serde_json::Value) -> bool {
    use serde_json::Value;
    let empty = |v: &Value| match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            if a.is_empty() && b.len() == 1 && b.get("opaque") == Some(&Value::from("value")) {
                return true;
            }
            b.iter().all(|(k, bv)| match a.get(k) {
                Some(av) => same_on_the_wire(bv, av),
                None => empty(bv),
            }) && a.keys().all(|k| b.contains_key(k))
        }
        (Value::Array(b), Value::Array(a)) => {
            b.len() == a.len() && b.iter().zip(a).all(|(b, a)| same_on_the_wire(b, a))
        }
        _ => before == after,
    }
}

fn json_round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(json: &str) -> T {
    let mut input: serde_json::Value = serde_json::from_str(json).expect("fixture is JSON");
    drop_nulls(&mut input);
    let typed: T = serde_json::from_str(json).expect("fixture deserializes");
    let output = serde_json::to_value(&typed).expect("serializes");
    if output != input {
        panic!(
            "round trip changed the object\n--- input\n{}\n--- output\n{}",
            serde_json::to_string_pretty(&input).unwrap_or_default(),
            serde_json::to_string_pretty(&output).unwrap_or_default()
        );
    }
    let again: T = serde_json::from_value(output).expect("deserializes from a Value");
    assert_eq!(again, typed);
    typed
}
