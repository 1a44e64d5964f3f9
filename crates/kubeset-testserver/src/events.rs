//! One Event store for core/v1 `events` and `events.k8s.io/v1` `events`,
//! as kube-apiserver keeps them: objects are stored in the core shape and
//! converted on the way in and out, with the field mapping of
//! k8s.io/kubernetes v1.35 `pkg/apis/events/v1/conversion.go`:
//!
//! | core/v1 | events.k8s.io/v1 |
//! |---|---|
//! | `involvedObject` | `regarding` |
//! | `message` | `note` |
//! | `source` | `deprecatedSource` |
//! | `firstTimestamp` / `lastTimestamp` / `count` | `deprecatedFirstTimestamp` / `deprecatedLastTimestamp` / `deprecatedCount` |
//! | `reportingComponent` | `reportingController` |
//!
//! Every other field (`eventTime`, `series`, `action`, `reason`, `type`,
//! `related`, `reportingInstance`, metadata) is the same in both.

use serde_json::{Map, Value};

use crate::resources::Resource;

/// core/v1 name → events.k8s.io/v1 name.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

fn rename(m: &mut Map<String, Value>, from_core: bool) {
    for (core, v1) in RENAMED {
        let (from, to) = if from_core { (core, v1) } else { (v1, core) };
        if let Some(v) = m.remove(*from) {
            m.insert((*to).to_owned(), v);
        }
    }
}

/// An Event in the stored (core) shape, from either API.
pub(crate) fn to_storage(res: &Resource, mut v: Value) -> Value {
    if res.is_events_v1()
        && let Value::Object(m) = &mut v
    {
        rename(m, false);
        m.insert("apiVersion".into(), Value::String("v1".into()));
    }
    v
}

/// A stored Event as `res`'s API serves it (`apiVersion`/`kind` are set by
/// the caller).
pub(crate) fn from_storage(res: &Resource, mut v: Value) -> Value {
    let stored_core = v.get("apiVersion").and_then(Value::as_str) == Some("v1");
    if res.is_events_v1()
        && stored_core
        && let Value::Object(m) = &mut v
    {
        rename(m, true);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip() {
        let v1 = crate::resources::builtin()
            .into_iter()
            .find(|r| r.is_events_v1())
            .expect("events.k8s.io is served");
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"name": "p"}, "message": "m", "source": {"component": "k"}, "count": 2, "reason": "R"});
        let out = from_storage(&v1, core.clone());
        assert_eq!(out["regarding"]["name"], "p");
        assert_eq!(out["note"], "m");
        assert_eq!(out["deprecatedSource"]["component"], "k");
        assert_eq!(out["deprecatedCount"], 2);
        assert_eq!(out["reason"], "R");
        let mut back = to_storage(&v1, out);
        back["kind"] = json!("Event");
        assert_eq!(back, core);
    }
}
