//! The batch kinds' defaults: `SetDefaults_Job` and `SetDefaults_CronJob`
//! of k8s.io/kubernetes v1.35's `pkg/apis/batch/v1/defaults.go`, written
//! on every decode, and the Job registry's selector generation
//! (`pkg/registry/batch/job/strategy.go`, `PrepareForCreate`). Checked
//! against kube-apiserver v1.35.4 by the differential suite
//! (`tests/differential/46-defaults-kinds.cases`).

use serde_json::{Map, Value, json};

use super::objects_mut;
use super::workloads::{set_missing, template_at};

/// The labels the Job registry puts on a Job's pods: the legacy and the
/// `batch.kubernetes.io/` name of each, `true` for the uid's.
const JOB_LABELS: [(&str, bool); 4] = [
    ("job-name", false),
    ("batch.kubernetes.io/job-name", false),
    ("controller-uid", true),
    ("batch.kubernetes.io/controller-uid", true),
];

/// `SetDefaults_Job`: one completion and one pod when neither is given
/// (else one pod), 6 retries (or, with a per-index limit, no overall
/// limit), `NonIndexed`, not suspended, pods replaced once terminated or
/// failed (only once failed under a pod failure policy), no manual
/// selector, the Job's labels taken from its template when it has none;
/// and the template's pod defaults.
pub(crate) fn job(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let unset = |m: &Map<String, Value>, k: &str| m.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i32::MAX
    };
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_missing(
        obj,
        "/spec",
        vec![
            ("parallelism", json!(1)),
            ("backoffLimit", json!(backoff)),
            ("completionMode", json!("NonIndexed")),
            ("suspend", json!(false)),
            ("podReplacementPolicy", json!(replacement)),
            ("manualSelector", json!(false)),
        ],
    );
    failure_policy(obj);
    labels_from_template(obj);
    template_at(obj, "/spec/template");
}

/// A pod failure policy's condition patterns match a `True` status unless
/// they name one (`SetDefaults_PodFailurePolicyOnPodConditionsPattern`).
fn failure_policy(obj: &mut Value) {
    let rules = obj
        .pointer_mut("/spec/podFailurePolicy/rules")
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        for p in objects_mut(rule.get_mut("onPodConditions")) {
            if p.get("status").is_none_or(|s| s.is_null() || s == "") {
                p.insert("status".into(), json!("True"));
            }
        }
    }
}

/// A Job without labels of its own takes its pod template's.
fn labels_from_template(obj: &mut Value) {
    let Some(labels) = obj.pointer("/spec/template/metadata/labels").cloned() else {
        return;
    };
    let own = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty());
    if labels.is_object()
        && !own
        && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.insert("labels".into(), labels);
    }
}

/// The Job registry's `generateSelector`, unless `manualSelector`: the
/// four job labels on the pod template (those the template already has
/// kept, validation judges them) and `batch.kubernetes.io/controller-uid`
/// in the selector; then, as the stored Job is read back and defaulted,
/// the Job's labels from its template when it has none.
pub(crate) fn generate_selector(obj: &mut Value) {
    if obj.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let meta = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (name, uid) = (meta("name"), meta("uid"));
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if let Some(labels) = object_at(template, &["metadata", "labels"]) {
        for (k, is_uid) in JOB_LABELS {
            let v = if is_uid { &uid } else { &name };
            labels.entry(k).or_insert_with(|| json!(v));
        }
    }
    let selector = spec.entry("selector").or_insert_with(|| json!({}));
    if let Some(m) = object_at(selector, &["matchLabels"]) {
        m.entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| json!(uid));
    }
    labels_from_template(obj);
}

/// The object at the path `keys` under `v`, created (with the objects on
/// the way, replacing a null) when missing; `None` when something on the
/// way is not an object.
fn object_at<'a>(v: &'a mut Value, keys: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for key in keys {
        if cur.is_null() {
            *cur = json!({});
        }
        cur = cur.as_object_mut()?.entry(*key).or_insert(Value::Null);
    }
    if cur.is_null() {
        *cur = json!({});
    }
    cur.as_object_mut()
}

/// `SetDefaults_CronJob`: concurrency allowed, not suspended, 3
/// successful and 1 failed jobs kept; its job template's `metadata: {}` (a
/// Go struct) and pod template. (A job template's own spec is not
/// defaulted: `SetDefaults_Job` is a Job's, not a JobSpec's.)
pub(crate) fn cron_job(obj: &mut Value) {
    set_missing(
        obj,
        "/spec",
        vec![
            ("concurrencyPolicy", json!("Allow")),
            ("suspend", json!(false)),
            ("successfulJobsHistoryLimit", json!(3)),
            ("failedJobsHistoryLimit", json!(1)),
        ],
    );
    set_missing(obj, "/spec/jobTemplate", vec![("metadata", json!({}))]);
    template_at(obj, "/spec/jobTemplate/spec/template");
}
