//! The storage kinds' defaults, written on every decode as k8s.io/kubernetes
//! v1.35's `pkg/apis/core/v1/defaults.go` and `pkg/apis/storage/v1`
//! write them: a PersistentVolumeClaim's (also a StatefulSet's claim
//! templates'), a PersistentVolume's, a StorageClass's. Checked against
//! kube-apiserver v1.35.4 by the differential suite
//! (`tests/differential/45-defaults.cases`, `46-defaults-kinds.cases`).

use serde_json::{Value, json};

use super::workloads::set_missing;
use super::{add_finalizer, pod};

/// `SetDefaults_PersistentVolumeClaim` and its spec's: `Pending`, a
/// filesystem volume.
pub(crate) fn claim(obj: &mut Value) {
    set_missing(obj, "", vec![("status", json!({}))]);
    set_missing(obj, "/status", vec![("phase", json!("Pending"))]);
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        pod::claim_spec(spec);
    }
}

/// `SetDefaults_PersistentVolume`: `Pending`, retained when released, a
/// filesystem volume, and its source's defaults as a Pod volume's.
pub(crate) fn volume(obj: &mut Value) {
    set_missing(obj, "", vec![("status", json!({}))]);
    set_missing(obj, "/status", vec![("phase", json!("Pending"))]);
    set_missing(
        obj,
        "/spec",
        vec![
            ("persistentVolumeReclaimPolicy", json!("Retain")),
            ("volumeMode", json!("Filesystem")),
        ],
    );
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        pod::volume_source(spec);
    }
}

/// `StorageObjectInUseProtection`'s finalizer on a new claim.
pub(crate) fn claim_protection(obj: &mut Value) {
    add_finalizer(obj, "kubernetes.io/pvc-protection");
}

/// `StorageObjectInUseProtection`'s finalizer on a new volume.
pub(crate) fn volume_protection(obj: &mut Value) {
    add_finalizer(obj, "kubernetes.io/pv-protection");
}

/// The PersistentVolume registry's `PrepareForCreate`: the phase's
/// transition time is the creation time.
pub(crate) fn phase_transition(obj: &mut Value) {
    let now = obj.pointer("/metadata/creationTimestamp").cloned();
    if let Some(t) = now {
        set_missing(obj, "", vec![("status", json!({}))]);
        set_missing(obj, "/status", vec![("lastPhaseTransitionTime", t)]);
    }
}

/// `SetDefaults_StorageClass`: volumes deleted with their claims, bound
/// at once.
pub(crate) fn storage_class(obj: &mut Value) {
    set_missing(
        obj,
        "",
        vec![
            ("reclaimPolicy", json!("Delete")),
            ("volumeBindingMode", json!("Immediate")),
        ],
    );
}
