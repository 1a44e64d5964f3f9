//! The version features (`v1_33`, `v1_34`, `v1_35`, `v1_36`; none is v1.36) select
//! the models' Kubernetes version: a field or a resource the version lacks
//! is absent (a field it lacks is not read back), one only older versions
//! have is present under them. Run once per feature: `cargo test -p
//! kubeset-api --test versions [--features v1_33]`.

use kubeset_api::KUBERNETES_VERSION;
use kubeset_api::api::core::v1::PodSpec;
use kubeset_api::resources;

/// `PodSpec.hostnameOverride` is v1.34's, `PodSpec.workloadRef` v1.35's
/// only (v1.36 replaced it with `schedulingGroup`): the JSON of another
/// version's pod keeps only what the selected version's `PodSpec` has.
#[test]
fn fields_a_version_lacks_are_not_kept() {
    let spec: PodSpec = serde_json::from_value(serde_json::json!({
        "containers": [],
        "hostnameOverride": "node-a",
        "workloadRef": {"name": "w", "podGroup": "g"},
        "schedulingGroup": {"podGroupName": "g"},
    }))
    .unwrap();
    let back = serde_json::to_value(&spec).unwrap();
    let has = |field: &str| back.get(field).is_some();
    let (hostname_override, workload_ref, scheduling_group) = match KUBERNETES_VERSION {
        "v1.33" => (false, false, false),
        "v1.34" => (true, false, false),
        "v1.35" => (true, true, false),
        "v1.36" => (true, false, true),
        other => panic!("unexpected version {other}"),
    };
    assert_eq!(has("hostnameOverride"), hostname_override, "{back}");
    assert_eq!(has("workloadRef"), workload_ref, "{back}");
    assert_eq!(has("schedulingGroup"), scheduling_group, "{back}");
}

/// The discovery table is the version's: `resource.k8s.io/v1` is served
/// from v1.34, `storagemigration.k8s.io/v1alpha1` until v1.34,
/// `storagemigration.k8s.io/v1beta1` from v1.35,
/// `scheduling.k8s.io/v1alpha1` in v1.35 only and `v1alpha2` from v1.36.
#[test]
fn the_resource_table_is_the_versions() {
    let served = |group: &str, version: &str, plural: &str| {
        resources::find(group, version, plural).is_some()
    };
    let v = KUBERNETES_VERSION;
    assert_eq!(
        served("resource.k8s.io", "v1", "resourceclaims"),
        v != "v1.33"
    );
    assert_eq!(
        served(
            "storagemigration.k8s.io",
            "v1alpha1",
            "storageversionmigrations"
        ),
        v == "v1.33" || v == "v1.34"
    );
    assert_eq!(
        served(
            "storagemigration.k8s.io",
            "v1beta1",
            "storageversionmigrations"
        ),
        v == "v1.35" || v == "v1.36"
    );
    assert_eq!(
        served("scheduling.k8s.io", "v1alpha1", "workloads"),
        v == "v1.35"
    );
    assert_eq!(
        served("scheduling.k8s.io", "v1alpha2", "podgroups"),
        v == "v1.36"
    );
    assert!(served("", "v1", "pods"));
}

/// No version feature is the newest.
#[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
#[test]
fn no_feature_is_the_newest() {
    assert_eq!(KUBERNETES_VERSION, "v1.36");
}

/// `v1_35` is v1.35.
#[cfg(feature = "v1_35")]
#[test]
fn v1_35_is_v1_35() {
    assert_eq!(KUBERNETES_VERSION, "v1.35");
}

/// `v1_33` is v1.33.
#[cfg(feature = "v1_33")]
#[test]
fn v1_33_is_v1_33() {
    assert_eq!(KUBERNETES_VERSION, "v1.33");
}
