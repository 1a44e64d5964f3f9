//! The version features (`v1_33`, `v1_34`, `v1_35`, `v1_36`, `v1_37`; none is v1.37) select
//! the models' Kubernetes version: a field or a resource the version lacks
//! is absent (a field it lacks is not read back), one only older versions
//! have is present under them. Run once per feature: `cargo test -p
//! kubeset-api --test versions [--features v1_33]`.

use kubeset_api::KUBERNETES_VERSION;
use kubeset_api::api::core::v1::PodSpec;
use kubeset_api::resources;

/// `PodSpec.hostnameOverride` is v1.34's, `PodSpec.workloadRef` v1.35's
/// only (v1.36 replaced it with `schedulingGroup`), `evictionResponders`
/// v1.37's: the JSON of another version's pod keeps only what the
/// selected version's `PodSpec` has.
#[test]
fn fields_a_version_lacks_are_not_kept() {
    let spec: PodSpec = serde_json::from_value(serde_json::json!({
        "containers": [],
        "hostnameOverride": "node-a",
        "workloadRef": {"name": "w", "podGroup": "g"},
        "schedulingGroup": {"podGroupName": "g"},
        "evictionResponders": [{"name": "acme.io/drain", "priority": 10000}],
    }))
    .unwrap();
    let back = serde_json::to_value(&spec).unwrap();
    let has = |field: &str| back.get(field).is_some();
    let (hostname_override, workload_ref, scheduling_group, eviction_responders) =
        match KUBERNETES_VERSION {
            "v1.33" => (false, false, false, false),
            "v1.34" => (true, false, false, false),
            "v1.35" => (true, true, false, false),
            "v1.36" => (true, false, true, false),
            "v1.37" => (true, false, true, true),
            other => panic!("unexpected version {other}"),
        };
    assert_eq!(has("hostnameOverride"), hostname_override, "{back}");
    assert_eq!(has("workloadRef"), workload_ref, "{back}");
    assert_eq!(has("schedulingGroup"), scheduling_group, "{back}");
    assert_eq!(has("evictionResponders"), eviction_responders, "{back}");
}

/// The discovery table is the version's: `resource.k8s.io/v1` is served
/// from v1.34, `storagemigration.k8s.io/v1alpha1` until v1.34,
/// `storagemigration.k8s.io/v1beta1` from v1.35,
/// `scheduling.k8s.io/v1alpha1` in v1.35 only, `v1alpha2` in v1.36 only,
/// `v1alpha3` and `storagemigration.k8s.io/v1` from v1.37, and
/// `networking.k8s.io/v1beta1` until v1.36.
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
        v != "v1.33" && v != "v1.34"
    );
    assert_eq!(
        served("storagemigration.k8s.io", "v1", "storageversionmigrations"),
        v == "v1.37"
    );
    assert_eq!(
        served("scheduling.k8s.io", "v1alpha1", "workloads"),
        v == "v1.35"
    );
    assert_eq!(
        served("scheduling.k8s.io", "v1alpha2", "podgroups"),
        v == "v1.36"
    );
    assert_eq!(
        served("scheduling.k8s.io", "v1alpha3", "compositepodgroups"),
        v == "v1.37"
    );
    assert_eq!(
        served("networking.k8s.io", "v1beta1", "ipaddresses"),
        v != "v1.37"
    );
    assert!(served("", "v1", "pods"));
}

/// No version feature (or `v1_37`) is the newest.
#[cfg(not(any(
    feature = "v1_33",
    feature = "v1_34",
    feature = "v1_35",
    feature = "v1_36"
)))]
#[test]
fn no_feature_is_the_newest() {
    assert_eq!(KUBERNETES_VERSION, "v1.37");
}

/// `v1_36` is v1.36.
#[cfg(feature = "v1_36")]
#[test]
fn v1_36_is_v1_36() {
    assert_eq!(KUBERNETES_VERSION, "v1.36");
}

/// What v1.37 adds compiles under it (and only under it: under an older
/// version's feature this test, which names them, is not compiled, and
/// without its `cfg` it would not build): `PodSpec.evictionResponders`
/// and its `EvictionResponder`, `scheduling.k8s.io/v1alpha3`'s
/// `CompositePodGroup`, and the fields v1.37 newly requires as plain
/// values (`Deployment.spec`, `ControllerRevision.data`) beside the ones it
/// no longer requires as `Option` (`DeploymentCondition.type`,
/// `ControllerRevision.revision`), as k8s-openapi's `v1_37` has them.
#[cfg(not(any(
    feature = "v1_33",
    feature = "v1_34",
    feature = "v1_35",
    feature = "v1_36"
)))]
#[test]
fn v1_37_has_its_additions() {
    use kubeset_api::Resource;
    use kubeset_api::api::apps::v1::{
        ControllerRevision, Deployment, DeploymentCondition, DeploymentSpec,
    };
    use kubeset_api::api::core::v1::EvictionResponder;
    use kubeset_api::api::scheduling::v1alpha3::CompositePodGroup;
    use kubeset_api::apimachinery::pkg::runtime::RawExtension;

    let spec = PodSpec {
        eviction_responders: Some(vec![EvictionResponder {
            name: "acme.io/drain".to_owned(),
            priority: 10000,
        }]),
        ..PodSpec::default()
    };
    let json = serde_json::to_value(&spec).unwrap();
    assert_eq!(json["evictionResponders"][0]["priority"], 10000, "{json}");
    assert_eq!(CompositePodGroup::API_VERSION, "scheduling.k8s.io/v1alpha3");

    let deployment = Deployment {
        spec: DeploymentSpec::default(),
        ..Deployment::default()
    };
    let json = serde_json::to_value(&deployment).unwrap();
    assert!(json.get("spec").is_some(), "{json}");
    let condition: DeploymentCondition = serde_json::from_value(serde_json::json!({})).unwrap();
    assert_eq!((condition.type_, condition.status), (None, None));
    let revision = ControllerRevision {
        data: RawExtension::default(),
        revision: None,
        ..ControllerRevision::default()
    };
    let json = serde_json::to_value(&revision).unwrap();
    assert!(json.get("revision").is_none(), "{json}");
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

/// A field one version requires and another does not has the plain type
/// under the first and `Option` under the second, as k8s-openapi's
/// modules of those versions have it: `RoleRef.apiGroup` (required until
/// v1.35), `CronJob.spec` (required from v1.36),
/// `NetworkPolicySpec.podSelector` (required in v1.33 only). The types are
/// checked by the compiler; the JSON both ways.
#[test]
fn required_fields_are_plain_in_the_versions_requiring_them() {
    use kubeset_api::api::batch::v1::{CronJob, CronJobSpec};
    use kubeset_api::api::networking::v1::NetworkPolicySpec;
    use kubeset_api::api::rbac::v1::RoleRef;

    #[cfg(not(any(feature = "v1_33", feature = "v1_34", feature = "v1_35")))]
    let (api_group, spec, selector) = (
        Some("rbac.authorization.k8s.io".to_owned()),
        CronJobSpec::default(),
        None,
    );
    #[cfg(any(feature = "v1_34", feature = "v1_35"))]
    let (api_group, spec, selector) = (
        "rbac.authorization.k8s.io".to_owned(),
        Some(CronJobSpec::default()),
        None,
    );
    #[cfg(feature = "v1_33")]
    let (api_group, spec, selector) = (
        "rbac.authorization.k8s.io".to_owned(),
        Some(CronJobSpec::default()),
        Default::default(),
    );
    let role_ref = RoleRef {
        api_group,
        kind: "Role".to_owned(),
        name: "reader".to_owned(),
    };
    let json = serde_json::to_value(&role_ref).unwrap();
    assert_eq!(json["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(serde_json::from_value::<RoleRef>(json).unwrap(), role_ref);

    let cron = CronJob {
        spec,
        ..CronJob::default()
    };
    let json = serde_json::to_value(&cron).unwrap();
    assert!(json.get("spec").is_some(), "{json}");
    assert_eq!(serde_json::from_value::<CronJob>(json).unwrap(), cron);

    let policy = NetworkPolicySpec {
        pod_selector: selector,
        ..NetworkPolicySpec::default()
    };
    let json = serde_json::to_value(&policy).unwrap();
    // Written when plain (v1.33), absent when an unset `Option`.
    let written = KUBERNETES_VERSION == "v1.33";
    assert_eq!(json.get("podSelector").is_some(), written, "{json}");
}

/// A decode error names its field in every version, after fields with a
/// form per version (`RoleRef.apiGroup`) too.
#[test]
fn a_decode_error_names_its_field() {
    use kubeset_api::api::rbac::v1::RoleRef;

    let err = serde_json::from_value::<RoleRef>(serde_json::json!({
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": 5,
        "name": "reader",
    }))
    .unwrap_err()
    .to_string();
    assert!(err.contains("RoleRef.kind"), "{err}");
}
