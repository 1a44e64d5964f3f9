//! Read-back equality through a server that adds defaults: everything that
//! was written must come back unchanged; what the server added is allowed.

use serde::Serialize;
use serde_json::Value;

/// Where `read` differs from `written`, as JSON paths with both values;
/// empty when every field of `written` is in `read` with the same value
/// (objects: recursively; arrays: same length, element by element; `null`
/// in `written` matches an absent field).
pub fn differences(written: &Value, read: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff(written, read, "$", &mut out);
    out
}

fn diff(written: &Value, read: &Value, path: &str, out: &mut Vec<String>) {
    match (written, read) {
        (Value::Object(w), Value::Object(r)) => {
            for (key, wv) in w {
                let child = format!("{path}.{key}");
                match r.get(key) {
                    Some(rv) => diff(wv, rv, &child, out),
                    None if wv.is_null() => {}
                    None => out.push(format!("{child}: wrote {wv}, read nothing")),
                }
            }
        }
        (Value::Array(w), Value::Array(r)) if w.len() == r.len() => {
            for (i, (wv, rv)) in w.iter().zip(r).enumerate() {
                diff(wv, rv, &format!("{path}[{i}]"), out);
            }
        }
        (w, r) if w == r => {}
        (w, r) => out.push(format!("{path}: wrote {w}, read {r}")),
    }
}

/// Panics unless `read` carries everything of `written` unchanged (see
/// [`differences`]); `what` names the object in the message.
pub fn assert_subset<W: Serialize, R: Serialize>(what: &str, written: &W, read: &R) {
    let (w, r) = match (serde_json::to_value(written), serde_json::to_value(read)) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(e), _) | (_, Err(e)) => panic!("{what}: cannot serialize: {e}"),
    };
    let diffs = differences(&w, &r);
    assert!(
        diffs.is_empty(),
        "{what}: the server changed what was written:\n  {}",
        diffs.join("\n  ")
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_are_allowed_changes_are_not() {
        let written = json!({"a": 1, "b": {"c": [1, {"d": "x"}]}, "n": null});
        let read = json!({"a": 1, "b": {"c": [1, {"d": "x", "e": 2}], "f": 3}, "g": 4});
        assert!(differences(&written, &read).is_empty());

        let changed = json!({"a": 2, "b": {"c": [1]}});
        assert_eq!(
            differences(&written, &changed),
            vec![
                "$.a: wrote 1, read 2".to_owned(),
                r#"$.b.c: wrote [1,{"d":"x"}], read [1]"#.to_owned(),
            ]
        );
    }
}
