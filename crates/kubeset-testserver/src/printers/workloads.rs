//! Pods and the workloads (Deployment, ReplicaSet, DaemonSet,
//! StatefulSet, Job, CronJob): their columns and cells.

use serde_json::{Value, json};

use crate::util;

use super::{AGE, Col, age, arr, c, format_labels, i, int, or_none, s, st, wide};

pub(crate) fn pod(o: &Value) -> Vec<Value> {
    let total = arr(o, "/spec/containers").len();
    let statuses = arr(o, "/status/containerStatuses");
    let ready = statuses
        .iter()
        .filter(|c| c["ready"].as_bool() == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let mut reason = s(o, "/status/phase").to_owned();
    if !s(o, "/status/reason").is_empty() {
        reason = s(o, "/status/reason").to_owned();
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        reason = "Terminating".into();
    }
    let gates = arr(o, "/spec/readinessGates");
    let gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conds = arr(o, "/status/conditions");
        let ok = gates
            .iter()
            .filter(|g| {
                conds
                    .iter()
                    .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
            })
            .count();
        format!("{ok}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        age(o),
        json!(or_none(s(o, "/status/podIP"))),
        json!(or_none(s(o, "/spec/nodeName"))),
        json!(or_none(s(o, "/status/nominatedNodeName"))),
        json!(gates),
    ]
}

pub(crate) fn ready_of(o: &Value) -> Value {
    json!(format!(
        "{}/{}",
        i(o, "/status/readyReplicas"),
        i(o, "/spec/replicas")
    ))
}

pub(crate) fn deployment(o: &Value) -> Vec<Value> {
    vec![
        ready_of(o),
        json!(i(o, "/status/updatedReplicas")),
        json!(i(o, "/status/availableReplicas")),
    ]
}

pub(crate) fn replicaset(o: &Value) -> Vec<Value> {
    vec![
        json!(i(o, "/spec/replicas")),
        json!(i(o, "/status/replicas")),
        json!(i(o, "/status/readyReplicas")),
    ]
}

pub(crate) fn daemonset(o: &Value) -> Vec<Value> {
    vec![
        json!(i(o, "/status/desiredNumberScheduled")),
        json!(i(o, "/status/currentNumberScheduled")),
        json!(i(o, "/status/numberReady")),
        json!(i(o, "/status/updatedNumberScheduled")),
        json!(i(o, "/status/numberAvailable")),
        json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
    ]
}

fn has_condition(o: &Value, ty: &str) -> bool {
    arr(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == ty && c["status"] == "True")
}

/// `printJob`: Status, Completions, Duration.
pub(crate) fn job(o: &Value) -> Vec<Value> {
    let succeeded = i(o, "/status/succeeded");
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(n) => format!("{succeeded}/{n}"),
        None => match i(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let start = util::parse_rfc3339(s(o, "/status/startTime"));
    let duration = match (start, util::parse_rfc3339(s(o, "/status/completionTime"))) {
        (None, _) => String::new(),
        (Some(a), None) => util::human_duration(util::now_secs().saturating_sub(a)),
        (Some(a), Some(b)) => util::human_duration(b.saturating_sub(a)),
    };
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    vec![json!(status), json!(completions), json!(duration)]
}

/// `printCronJob`: Schedule, Timezone, Suspend, Active, Last Schedule.
pub(crate) fn cronjob(o: &Value) -> Vec<Value> {
    let last = match s(o, "/status/lastScheduleTime") {
        "" => "<none>".to_owned(),
        t => util::age(t),
    };
    let suspend = match o.pointer("/spec/suspend").and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    vec![
        json!(s(o, "/spec/schedule")),
        json!(or_none(s(o, "/spec/timeZone"))),
        json!(suspend),
        json!(arr(o, "/status/active").len()),
        json!(last),
    ]
}

pub(crate) const POD_COLS: &[Col] = &[
    st("Ready"),
    st("Status"),
    st("Restarts"),
    AGE,
    wide("IP"),
    wide("Node"),
    wide("Nominated Node"),
    wide("Readiness Gates"),
];

pub(crate) const DEPLOY_COLS: &[Col] = &[st("Ready"), st("Up-to-date"), st("Available")];

pub(crate) const RS_COLS: &[Col] = &[int("Desired"), int("Current"), int("Ready")];

pub(crate) const DS_COLS: &[Col] = &[
    int("Desired"),
    int("Current"),
    int("Ready"),
    int("Up-to-date"),
    int("Available"),
    st("Node Selector"),
];

pub(crate) const JOB_COLS: &[Col] = &[st("Status"), st("Completions"), st("Duration")];

pub(crate) const CRONJOB_COLS: &[Col] = &[
    st("Schedule"),
    st("Timezone"),
    c("Suspend", "boolean", 0),
    int("Active"),
    st("Last Schedule"),
];
