//! The embedded server's request parsing: query strings, percent-decoding,
//! label and field selectors (matched against a fixed object), request
//! bodies (JSON/YAML), and the selector a scale subresource prints. No
//! panic on any input; a printed `matchLabels` selector parses back and
//! matches the labels it came from.
#![no_main]

use kubeset_fuzz::split2;
use kubeset_testserver::fuzz_hooks::{
    decode_component, field_selector, label_selector, query_value, request_object, selector_string,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// `sel.matchLabels` when it is the whole selector and every key and value
/// is 1–16 lowercase letters or digits.
fn simple_match_labels(sel: &Value) -> Option<&Map<String, Value>> {
    let obj = sel.as_object()?;
    let labels = obj.get("matchLabels")?.as_object()?;
    let plain = |s: &str| {
        (1..=16).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    let only = obj.len() == 1 && !labels.is_empty();
    (only
        && labels
            .iter()
            .all(|(k, v)| plain(k) && v.as_str().is_some_and(plain)))
    .then_some(labels)
}

fuzz_target!(|data: &[u8]| {
    let (head, body) = split2(data);
    let object = json!({
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web", "tier": "a"}}
    });
    if let Ok(q) = std::str::from_utf8(head) {
        let _ = decode_component(q);
        for key in ["labelSelector", "fieldSelector", "watch", "limit"] {
            if let Some(v) = query_value(q, key) {
                let _ = label_selector(&v, &object);
                let _ = field_selector(&v, &object);
            }
        }
        let _ = label_selector(q, &object);
        let _ = field_selector(q, &object);
    }
    for content_type in ["application/json", "application/yaml"] {
        if let Ok(v) = request_object(body, content_type)
            && let Some(sel) = v.get("selector")
        {
            let printed = selector_string(sel);
            let parsed = label_selector(&printed, &object);
            // matchLabels alone, of plain names and values: the printed
            // selector must parse and match an object with those labels.
            if let Some(labels) = simple_match_labels(sel) {
                let carrier = json!({"metadata": {"labels": labels}});
                assert_eq!(label_selector(&printed, &carrier), Ok(true), "{printed:?}");
                assert!(parsed.is_ok(), "{printed:?}: {parsed:?}");
            }
        }
    }
});
