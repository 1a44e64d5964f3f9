//! Go's zero value of the workload kinds beyond their empty `spec` and
//! `status`: the structs and lists their types never omit (a pod
//! template's `metadata` and `containers`, a strategy), which the field
//! manager's comparison of a create starts from, so their creator owns
//! their members but not the nodes themselves (no `"."` entry), as
//! kube-apiserver records it. Each sets `zero`'s `spec` (a PodTemplate's
//! `template`).

use serde_json::{Value, json};

/// A pod template's zero value.
fn template() -> Value {
    json!({"metadata": {}, "spec": {"containers": null}})
}

/// A Pod's.
pub(crate) fn pod(zero: &mut Value) {
    zero["spec"] = json!({"containers": null});
}

/// A PersistentVolumeClaim's.
pub(crate) fn claim(zero: &mut Value) {
    zero["spec"] = json!({"resources": {}});
}

/// A PodTemplate's: its `template`, no `spec`.
pub(crate) fn pod_template(zero: &mut Value) {
    zero["template"] = template();
}

/// A Deployment's.
pub(crate) fn deployment(zero: &mut Value) {
    zero["spec"] = json!({"template": template(), "strategy": {}, "selector": null});
}

/// A StatefulSet's.
pub(crate) fn stateful_set(zero: &mut Value) {
    zero["spec"] = json!({"template": template(), "updateStrategy": {},
        "selector": null, "serviceName": ""});
}

/// A DaemonSet's.
pub(crate) fn daemon_set(zero: &mut Value) {
    zero["spec"] = json!({"template": template(), "updateStrategy": {}, "selector": null});
}

/// A ReplicaSet's.
pub(crate) fn replica_set(zero: &mut Value) {
    zero["spec"] = json!({"template": template(), "selector": null});
}

/// A Job's.
pub(crate) fn job(zero: &mut Value) {
    zero["spec"] = json!({"template": template()});
}

/// A CronJob's.
pub(crate) fn cron_job(zero: &mut Value) {
    zero["spec"] = json!({"jobTemplate": {"metadata": {}, "spec": {"template": template()}}});
}
