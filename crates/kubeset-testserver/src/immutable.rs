//! Fields an update may not change, refused with kube-apiserver v1.35's
//! 422 `Invalid` Status: the same causes (field, reason, message) in the
//! same order as its validation produces them (pinned by
//! `tests/validation.rs`, `tests/golden/immutable.json`).
//!
//! | kind | rule |
//! | --- | --- |
//! | Service | `spec.clusterIPs[0]` (and `clusterIP`) may not change once set; an update that leaves both empty keeps the allocated ones |
//! | Job | `spec.selector`, `spec.completions` (except elastic Indexed Jobs), `spec.template` (except the scheduling directives of a suspended Job that never started); the selector must match the template's labels and, unless `manualSelector`, be the generated one |
//! | Deployment, ReplicaSet, DaemonSet | `spec.selector` (apps/v1), which must match the template's labels |
//! | ConfigMap, Secret | with `immutable: true`: `data`, `binaryData` (ConfigMap), `immutable` itself; Secret `type` always |
//!
//! Values in messages are written as apimachinery's `field.Invalid` writes
//! them: strings quoted, lists and objects as compact JSON. A Job
//! template's value is the one exception: upstream prints its internal Go
//! struct, which this server does not have; it prints the JSON.

use serde_json::{Value, json};

use crate::selectors::{LabelSelector, selector_to_string};
use crate::services;

/// One cause: field, reason, message.
pub(crate) type Cause = (String, &'static str, String);

/// A value as `field.Invalid` prints it.
fn shown(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// A label selector as Go's JSON writes it (`matchLabels` first).
pub(crate) fn shown_selector(v: &Value) -> String {
    let Some(m) = v.as_object() else {
        return shown(v);
    };
    let parts: Vec<String> = ["matchLabels", "matchExpressions"]
        .iter()
        .filter_map(|k| {
            m.get(*k)
                .map(|x| format!("{}:{}", shown(&json!(k)), shown(x)))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn invalid(field: &str, value: String, detail: &str) -> Cause {
    (
        field.to_owned(),
        "FieldValueInvalid",
        format!("Invalid value: {value}: {detail}"),
    )
}

/// `ValidateImmutableField` of the value at `ptr`.
pub(crate) fn unchanged(live: &Value, new: &Value, ptr: &str, field: &str) -> Vec<Cause> {
    let (old, now) = (live.pointer(ptr), new.pointer(ptr));
    if old == now {
        return Vec::new();
    }
    let now = now.cloned().unwrap_or(Value::Null);
    let value = if ptr.ends_with("selector") {
        shown_selector(&now)
    } else {
        shown(&now)
    };
    vec![invalid(field, value, "field is immutable")]
}

/// "`selector` does not match template `labels`" when the selector of
/// `new` does not select its pod template.
pub(crate) fn selector_matches_template(new: &Value) -> Vec<Cause> {
    let Some(sel) = new.pointer("/spec/selector").filter(|s| s.is_object()) else {
        return Vec::new();
    };
    let labels = new
        .pointer("/spec/template/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    let matches = LabelSelector::parse(&selector_to_string(sel))
        .is_ok_and(|s| s.matches(&json!({"metadata": {"labels": labels}})));
    if matches {
        return Vec::new();
    }
    vec![invalid(
        "spec.template.metadata.labels",
        shown(&labels),
        "`selector` does not match template `labels`",
    )]
}

/// ClusterIP carry-over (`patchAllocatedValues`, `normalizeClusterIPs`)
/// and the rule that the first cluster IP may not change.
pub(crate) fn service(live: &Value, new: &mut Value) -> Vec<Cause> {
    services::drop_type_dependent(live, new);
    let ip = |o: &Value| {
        o.pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let ips = |o: &Value| o.pointer("/spec/clusterIPs").cloned().unwrap_or(json!([]));
    let (old_ip, old_ips) = (ip(live), ips(live));
    let external = new.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return Vec::new();
    };
    let (new_ip, new_ips) = (
        spec.get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        spec.get("clusterIPs").cloned().unwrap_or(json!([])),
    );
    if external || old_ip.is_empty() {
        return Vec::new();
    }
    if new_ip.is_empty() {
        spec.insert("clusterIP".into(), json!(old_ip));
        if new_ips.as_array().is_none_or(Vec::is_empty) {
            if old_ips.as_array().is_some_and(|a| !a.is_empty()) {
                spec.insert("clusterIPs".into(), old_ips);
            }
            return Vec::new();
        }
    }
    let new_ip = if new_ip.is_empty() {
        old_ip.clone()
    } else {
        new_ip
    };
    let new_ips = if new_ip != old_ip && new_ips == old_ips {
        let ips = json!([new_ip]);
        spec.insert("clusterIPs".into(), ips.clone());
        ips
    } else {
        new_ips
    };
    let first = new_ips.get(0).and_then(Value::as_str).unwrap_or(&new_ip);
    if first == old_ip {
        return Vec::new();
    }
    vec![invalid(
        "spec.clusterIPs[0]",
        shown(&new_ips),
        "may not change once set",
    )]
}

/// `ValidateJob` then `ValidateJobUpdate`, as the Job strategy runs
/// them: the generated-selector check, the selector-template match (once
/// per `ValidateJobSpec` call: twice), then completions, selector and
/// template immutability.
pub(crate) fn job(live: &Value, new: &Value) -> Vec<Cause> {
    let manual = new.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true);
    let mut causes = Vec::new();
    if !manual && new.pointer("/spec/template/metadata/labels").is_some() {
        let uid = new
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        let want = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
        let sel = new
            .pointer("/spec/selector")
            .cloned()
            .unwrap_or(Value::Null);
        if sel != want {
            causes.push(invalid(
                "spec.selector",
                shown_selector(&sel),
                "`selector` not auto-generated",
            ));
        }
    }
    let mismatch = selector_matches_template(new);
    causes.extend(mismatch.iter().cloned());
    causes.extend(mismatch);
    if !elastic_indexed(live, new) {
        causes.extend(unchanged(
            live,
            new,
            "/spec/completions",
            "spec.completions",
        ));
    }
    causes.extend(unchanged(live, new, "/spec/selector", "spec.selector"));
    let (old_t, new_t) = (template_fixed(live), template_fixed(new));
    if old_t != new_t {
        let t = new
            .pointer("/spec/template")
            .cloned()
            .unwrap_or(Value::Null);
        causes.push(invalid("spec.template", shown(&t), "field is immutable"));
    }
    causes
}

/// An Indexed Job that scales `completions` with `parallelism`.
fn elastic_indexed(live: &Value, new: &Value) -> bool {
    let get = |o: &Value, k: &str| o.pointer(&format!("/spec/{k}")).cloned();
    let indexed = |o: &Value| get(o, "completionMode") == Some(json!("Indexed"));
    indexed(new)
        && get(new, "completions") == get(new, "parallelism")
        && get(live, "completions") == get(live, "parallelism")
}

/// The part of a Job's template an update may not change: all of it,
/// except, while the Job is suspended and never started, the labels,
/// annotations and scheduling directives (`nodeSelector`, `tolerations`,
/// `affinity`, `schedulingGates`).
fn template_fixed(job: &Value) -> Value {
    let mut t = job
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let suspended = job.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    if suspended && job.pointer("/status/startTime").is_none() {
        if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("labels");
            m.remove("annotations");
        }
        if let Some(s) = t.get_mut("spec").and_then(Value::as_object_mut) {
            for k in ["nodeSelector", "tolerations", "affinity", "schedulingGates"] {
                s.remove(k);
            }
        }
    }
    t
}

/// The keys a Secret's `type` requires (`ValidateSecret`, which
/// `ValidateSecretUpdate` runs after the immutability checks, so an
/// update to a type the data does not satisfy is told both).
pub(crate) fn secret_type_keys(secret: &Value) -> Vec<Cause> {
    let data = secret.get("data").and_then(Value::as_object);
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    let required: &[&str] = match secret.get("type").and_then(Value::as_str) {
        Some("kubernetes.io/tls") => &["tls.crt", "tls.key"],
        Some("kubernetes.io/ssh-auth") => &["ssh-privatekey"],
        Some("kubernetes.io/dockercfg") => &[".dockercfg"],
        Some("kubernetes.io/dockerconfigjson") => &[".dockerconfigjson"],
        Some("kubernetes.io/basic-auth") if !has("username") && !has("password") => {
            &["username", "password"]
        }
        _ => &[],
    };
    required
        .iter()
        .filter(|k| !has(k))
        .map(|k| {
            (
                format!("data[{k}]"),
                "FieldValueRequired",
                "Required value".to_owned(),
            )
        })
        .collect()
}

/// `immutable: true` ConfigMaps and Secrets: `immutable` may not be
/// unset, and the `keys` may not change.
pub(crate) fn locked_data(live: &Value, new: &Value, keys: &[&str]) -> Vec<Cause> {
    if live.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let forbidden = |f: &str| {
        (
            f.to_owned(),
            "FieldValueForbidden",
            "Forbidden: field is immutable when `immutable` is set".to_owned(),
        )
    };
    let mut causes = Vec::new();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        causes.push(forbidden("immutable"));
    }
    for k in keys {
        if live.get(*k) != new.get(*k) {
            causes.push(forbidden(k));
        }
    }
    causes
}
