//! PersistentVolumeClaims, PersistentVolumes and StorageClasses: their
//! columns and cells.

use serde_json::{Value, json};

use super::{AGE, Col, NAME, age, arr, s, st, wide};

/// `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(o: &Value, ptr: &str) -> String {
    let modes = arr(o, ptr);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.iter().any(|x| x == m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// Status phase, or Terminating once deletion started.
fn phase(o: &Value) -> Value {
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        json!("Terminating")
    } else {
        json!(s(o, "/status/phase"))
    }
}

fn unset_or(o: &Value, ptr: &str) -> Value {
    json!(match s(o, ptr) {
        "" => "<unset>",
        v => v,
    })
}

/// A storage quantity as the Table shows it (`Quantity.String()`; the
/// text as written, `0` when missing).
fn quantity(o: &Value, ptr: &str) -> Value {
    json!(match s(o, ptr) {
        "" => "0",
        q => q,
    })
}

/// `printPersistentVolumeClaim`: capacity and access modes from the
/// status once a volume is named.
pub(crate) fn pvc(o: &Value) -> Vec<Value> {
    let bound = !s(o, "/spec/volumeName").is_empty();
    let (capacity, modes) = if bound {
        (
            quantity(o, "/status/capacity/storage"),
            json!(access_modes(o, "/status/accessModes")),
        )
    } else {
        (json!(""), json!(""))
    };
    vec![
        phase(o),
        json!(s(o, "/spec/volumeName")),
        capacity,
        modes,
        json!(storage_class(o)),
        unset_or(o, "/spec/volumeAttributesClassName"),
        age(o),
        unset_or(o, "/spec/volumeMode"),
    ]
}

/// `printPersistentVolume`.
pub(crate) fn pv(o: &Value) -> Vec<Value> {
    let claim = match o.pointer("/spec/claimRef") {
        Some(c) if c.is_object() => format!("{}/{}", s(c, "/namespace"), s(c, "/name")),
        _ => String::new(),
    };
    vec![
        quantity(o, "/spec/capacity/storage"),
        json!(access_modes(o, "/spec/accessModes")),
        json!(s(o, "/spec/persistentVolumeReclaimPolicy")),
        phase(o),
        json!(claim),
        json!(storage_class(o)),
        unset_or(o, "/spec/volumeAttributesClassName"),
        json!(s(o, "/status/reason")),
        age(o),
        unset_or(o, "/spec/volumeMode"),
    ]
}

/// `printStorageClass`: `(default)` after the default class's name.
pub(crate) fn storage_class_row(o: &Value) -> Vec<Value> {
    let default = [
        "storageclass.kubernetes.io~1is-default-class",
        "storageclass.beta.kubernetes.io~1is-default-class",
    ]
    .iter()
    .any(|a| s(o, &format!("/metadata/annotations/{a}")) == "true");
    let name = s(o, "/metadata/name");
    let or = |ptr: &str, default: &'static str| match s(o, ptr) {
        "" => default,
        v => v,
    };
    vec![
        json!(if default {
            format!("{name} (default)")
        } else {
            name.to_owned()
        }),
        json!(s(o, "/provisioner")),
        json!(or("/reclaimPolicy", "Delete")),
        json!(or("/volumeBindingMode", "Immediate")),
        json!(
            o.pointer("/allowVolumeExpansion")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
        age(o),
    ]
}

/// The beta annotation, else `spec.storageClassName`.
fn storage_class(o: &Value) -> &str {
    match s(
        o,
        "/metadata/annotations/volume.beta.kubernetes.io~1storage-class",
    ) {
        "" => s(o, "/spec/storageClassName"),
        a => a,
    }
}

pub(crate) const PVC_COLS: &[Col] = &[
    st("Status"),
    st("Volume"),
    st("Capacity"),
    st("Access Modes"),
    st("StorageClass"),
    st("VolumeAttributesClass"),
    AGE,
    wide("VolumeMode"),
];

pub(crate) const PV_COLS: &[Col] = &[
    st("Capacity"),
    st("Access Modes"),
    st("Reclaim Policy"),
    st("Status"),
    st("Claim"),
    st("StorageClass"),
    st("VolumeAttributesClass"),
    st("Reason"),
    AGE,
    wide("VolumeMode"),
];

pub(crate) const SC_COLS: &[Col] = &[
    NAME,
    st("Provisioner"),
    st("ReclaimPolicy"),
    st("VolumeBindingMode"),
    st("AllowVolumeExpansion"),
    AGE,
];
