//! The embedded server's request parsing: query strings, percent-decoding,
//! label and field selectors (matched against a fixed object), request
//! bodies (JSON/YAML), and the selector a scale subresource prints parses
//! back. No panic on any input.
#![no_main]

use kubeset_fuzz::split2;
use kubeset_testserver::fuzz_hooks::{
    decode_component, field_selector, label_selector, query_value, request_object, selector_string,
};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

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
            // Only selectors made of valid keys and values must parse back.
            let _ = label_selector(&printed, &object);
        }
    }
});
