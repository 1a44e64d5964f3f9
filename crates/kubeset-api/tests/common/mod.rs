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
pub fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(json: &str) {
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
}
