//! Objects in the shape the API server returns: they deserialize and
//! serialize back to equal JSON; list, watch and quirk behaviour.

#![cfg(feature = "core-v1")]

mod common;

use kubeset_api::List;
use kubeset_api::api::core::v1::{Pod, PodList, Secret};
use kubeset_api::apimachinery::pkg::apis::meta::v1::{ObjectMeta, WatchEvent};
use kubeset_api::{Metadata, Resource};

#[test]
fn pod_round_trips() {
    common::round_trip::<Pod>(include_str!("fixtures/pod.json"));
}

#[test]
fn pod_fields_are_typed() {
    let pod: Pod = serde_json::from_str(include_str!("fixtures/pod.json")).unwrap();
    assert_eq!(pod.metadata.name.as_deref(), Some("web-7d4b9c8f6-x2x9q"));
    let spec = pod.spec.as_ref().unwrap();
    let c = &spec.containers[0];
    let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
    assert_eq!(limits["cpu"].to_f64(), Some(0.5));
    let probe_port = &c
        .liveness_probe
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap()
        .port;
    assert_eq!(
        *probe_port,
        kubeset_api::types::IntOrString::String("http".into())
    );
    let managed = pod.metadata.managed_fields.as_ref().unwrap();
    let fields = managed[1].fields_v1.as_ref().unwrap().to_value().unwrap();
    assert!(fields["f:status"]["f:podIP"].is_object());
    let status = pod.status.as_ref().unwrap();
    assert_eq!(status.pod_ips.as_ref().unwrap()[0].ip, "10.244.1.17");
    assert_eq!(
        status.start_time.unwrap().unix_seconds(),
        kubeset_api::types::Time::parse("2026-11-20T09:14:03Z")
            .unwrap()
            .unix_seconds()
    );
    assert_eq!(<Pod as Resource>::API_VERSION, "v1");
    assert_eq!(<Pod as Resource>::PLURAL, "pods");
    assert_eq!(pod.metadata().namespace.as_deref(), Some("default"));
}

/// `gen_podlist.py 2` (the benchmark's input): pods whose volume sources,
/// probes, security contexts and resource blocks are boxed fields read and
/// write the same JSON as inline ones did.
#[test]
fn boxed_fields_round_trip() {
    let json = include_str!("fixtures/podlist_gen.json");
    let raw: serde_json::Value = serde_json::from_str(json).unwrap();
    // Items come without apiVersion/kind (as the API server lists them);
    // a Pod writes both.
    for item in raw["items"].as_array().unwrap() {
        let mut item = item.clone();
        item["apiVersion"] = "v1".into();
        item["kind"] = "Pod".into();
        common::round_trip::<Pod>(&item.to_string());
    }
    let list: PodList = serde_json::from_str(json).unwrap();
    assert_eq!(list.items.len(), 2);
    let spec = list.items[0].spec.as_ref().unwrap();
    let volumes = spec.volumes.as_deref().unwrap();
    assert_eq!(
        volumes[0].config_map.as_ref().unwrap().name.as_deref(),
        Some("checkout-config")
    );
    let projected = volumes[2].projected.as_ref().unwrap();
    assert_eq!(projected.sources.as_ref().unwrap().len(), 3);
    let c = &spec.containers[0];
    let probe = c.liveness_probe.as_ref().unwrap();
    assert_eq!(
        probe.http_get.as_ref().unwrap().path.as_deref(),
        Some("/healthz")
    );
    let security = c.security_context.as_ref().unwrap();
    assert_eq!(security.read_only_root_filesystem, Some(true));
}

/// A boxed field is built with `Some(Box::new(x))` or `Some(x.into())`
/// and written as the struct itself.
#[test]
fn boxed_fields_are_built_with_into() {
    use kubeset_api::api::core::v1::{
        ConfigMapVolumeSource, Container, PodSpec, Probe, SecurityContext, Volume,
    };
    let pod = Pod {
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                liveness_probe: Some(Probe {
                    period_seconds: Some(5),
                    ..Probe::default()
                }),
                security_context: Some(SecurityContext {
                    privileged: Some(false),
                    ..SecurityContext::default()
                }),
                ..Container::default()
            }],
            volumes: Some(vec![Volume {
                name: "v".into(),
                // 64 B: boxed like every optional struct above 32 B.
                config_map: Some(ConfigMapVolumeSource {
                    name: Some("cm".into()),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    let json = serde_json::to_value(&pod).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {},
            "spec": {
                "containers": [{
                    "name": "c",
                    "livenessProbe": {"periodSeconds": 5},
                    "securityContext": {"privileged": false},
                }],
                "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
            },
        })
    );
    assert_eq!(serde_json::from_value::<Pod>(json).unwrap(), pod);
}

#[cfg(feature = "apps-v1")]
#[test]
fn deployment_round_trips() {
    use kubeset_api::api::apps::v1::{Deployment, DeploymentSpec};
    use kubeset_api::types::IntOrString;
    common::round_trip::<Deployment>(include_str!("fixtures/deployment.json"));
    let d: Deployment = serde_json::from_str(include_str!("fixtures/deployment.json")).unwrap();
    // `spec` is a `DeploymentSpec` from v1.37 (required), an `Option`
    // before: `Option::from(&spec)` reads either.
    let spec: Option<&DeploymentSpec> = Option::from(&d.spec);
    let strategy = spec.unwrap().strategy.as_ref().unwrap();
    let ru = strategy.rolling_update.as_ref().unwrap();
    assert_eq!(ru.max_surge, Some(IntOrString::String("25%".into())));
    assert_eq!(ru.max_unavailable, Some(IntOrString::Int(0)));
    assert_eq!(<Deployment as Resource>::API_VERSION, "apps/v1");
    assert_eq!(<Deployment as Resource>::GROUP, "apps");
}

#[cfg(feature = "apiextensions-v1")]
#[test]
fn crd_round_trips() {
    use kubeset_api::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kubeset_api::types::JSONSchemaPropsOrBool;
    common::round_trip::<CustomResourceDefinition>(include_str!("fixtures/crd.json"));
    let crd: CustomResourceDefinition =
        serde_json::from_str(include_str!("fixtures/crd.json")).unwrap();
    let schema = crd.spec.versions[0]
        .schema
        .as_ref()
        .unwrap()
        .open_api_v3_schema
        .as_ref()
        .unwrap();
    let props = schema.properties.as_ref().unwrap();
    let status = &props["status"];
    assert_eq!(
        status.additional_properties,
        Some(JSONSchemaPropsOrBool::Bool(false))
    );
    let spec = props["spec"].properties.as_ref().unwrap();
    assert!(matches!(
        spec["labels"].additional_properties,
        Some(JSONSchemaPropsOrBool::Schema(_))
    ));
    assert_eq!(
        spec["extra"].x_kubernetes_preserve_unknown_fields,
        Some(true)
    );
    assert_eq!(
        spec["size"].default.as_ref().map(|d| d.0.clone()),
        Some(serde_json::json!(3))
    );
}

#[cfg(feature = "coordination-v1")]
#[test]
fn lease_keeps_microtime_text() {
    use kubeset_api::api::coordination::v1::Lease;
    common::round_trip::<Lease>(include_str!("fixtures/lease.json"));
    let lease: Lease = serde_json::from_str(include_str!("fixtures/lease.json")).unwrap();
    let out = serde_json::to_value(&lease).unwrap();
    assert_eq!(out["spec"]["acquireTime"], "2026-11-20T09:00:00.000000Z");
    assert_eq!(out["spec"]["renewTime"], "2026-11-20T09:14:07.381245Z");
}

#[test]
fn secret_data_is_bytes() {
    common::round_trip::<Secret>(include_str!("fixtures/secret.json"));
    let s: Secret = serde_json::from_str(include_str!("fixtures/secret.json")).unwrap();
    let data = s.data.unwrap();
    assert_eq!(data["password"].0, b"s3cr3t");
    assert_eq!(data["empty"].0, b"");
    assert_eq!(data["binary"].0, [0, 255, 16]);
}

#[test]
fn lists_read_items_without_type_meta() {
    let text = include_str!("fixtures/podlist.json");
    let list: PodList = serde_json::from_str(text).unwrap();
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.metadata.remaining_item_count, Some(1));
    let generic: List<Pod> = serde_json::from_str(text).unwrap();
    assert_eq!(generic.items, list.items);
    assert_eq!(
        generic.metadata.continue_.as_deref(),
        Some("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTg0NDgwfQ")
    );
    // Written back, lists and their items carry apiVersion and kind.
    let out = serde_json::to_value(&generic).unwrap();
    assert_eq!(out["kind"], "PodList");
    assert_eq!(out["apiVersion"], "v1");
    assert_eq!(out["items"][0]["kind"], "Pod");
    let typed = serde_json::to_value(&list).unwrap();
    assert_eq!(typed, out);
}

#[test]
fn type_meta_is_written_and_tolerated() {
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    };
    assert_eq!(
        serde_json::to_string(&pod).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}"#
    );
    // Missing, null, unknown and mismatched fields are tolerated on input.
    let p: Pod = serde_json::from_str(
        r#"{"kind":"Other","metadata":null,"spec":{"containers":null},"unknownField":[1,2]}"#,
    )
    .unwrap();
    assert_eq!(p.metadata, ObjectMeta::default());
    assert_eq!(p.spec.unwrap().containers, Vec::new());
    assert!(serde_json::from_str::<Pod>(r#"{"metadata":{"name":5}}"#).is_err());
}

#[test]
fn watch_events_decode() {
    let e: WatchEvent<Pod> = serde_json::from_str(
        r#"{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"9"}}}"#,
    )
    .unwrap();
    match &e {
        WatchEvent::Modified(p) => assert_eq!(p.metadata.resource_version.as_deref(), Some("9")),
        other => panic!("unexpected {other:?}"),
    }
    let back = serde_json::to_value(&e).unwrap();
    assert_eq!(back["type"], "MODIFIED");
    assert_eq!(back["object"]["metadata"]["name"], "a");
    // Object before type.
    let b: WatchEvent<Pod> = serde_json::from_str(
        r#"{"object":{"metadata":{"resourceVersion":"12"}},"type":"BOOKMARK"}"#,
    )
    .unwrap();
    assert!(
        matches!(b, WatchEvent::Bookmark(ref p) if p.metadata.resource_version.as_deref() == Some("12"))
    );
    let err: WatchEvent<Pod> = serde_json::from_str(
        r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#,
    )
    .unwrap();
    match err {
        WatchEvent::Error(s) => assert_eq!(s.code, Some(410)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(serde_json::from_str::<WatchEvent<Pod>>(r#"{"type":"EXPLODED","object":{}}"#).is_err());
    assert!(serde_json::from_str::<WatchEvent<Pod>>(r#"{"type":"ADDED"}"#).is_err());
}

#[cfg(feature = "events-v1")]
#[test]
fn events_v1_tolerates_null_event_time() {
    use kubeset_api::api::events::v1::Event;
    let e: Event = serde_json::from_str(
        r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"x.1"},"eventTime":null,"reason":"Started"}"#,
    )
    .unwrap();
    assert_eq!(e.event_time, None);
    assert_eq!(e.reason.as_deref(), Some("Started"));
}

#[test]
fn typed_from_value_keeps_managed_fields() {
    let v: serde_json::Value = serde_json::from_str(include_str!("fixtures/pod.json")).unwrap();
    let from_text: Pod = serde_json::from_str(include_str!("fixtures/pod.json")).unwrap();
    let from_value: Pod = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(from_value, from_text);
    let managed = from_value.metadata.managed_fields.unwrap();
    assert_eq!(
        managed[0].fields_v1.as_ref().unwrap().to_value().unwrap(),
        v["metadata"]["managedFields"][0]["fieldsV1"]
    );
}

/// A `null` value in a map of `Time` (Go writes a zero `Time` so; upstream's
/// v1.35 PodDisruptionBudget fixture has one) is an absent entry, not an
/// error for the whole object; it round-trips as the server stores it
/// (`null` members as absent).
#[cfg(feature = "policy-v1")]
#[test]
fn a_null_in_a_map_of_time_is_an_absent_entry() {
    use kubeset_api::api::policy::v1::PodDisruptionBudget;
    let json = r#"{"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
        "metadata":{"name":"pdb"},
        "status":{"currentHealthy":1,"desiredHealthy":1,"disruptionsAllowed":0,"expectedPods":1,
            "disruptedPods":{"gone":null,"web-0":"2024-01-02T03:04:05Z"}}}"#;
    let pdb: PodDisruptionBudget = serde_json::from_str(json).unwrap();
    let disrupted = pdb
        .status
        .as_ref()
        .unwrap()
        .disrupted_pods
        .as_ref()
        .unwrap();
    assert_eq!(disrupted.keys().collect::<Vec<_>>(), ["web-0"]);
    common::round_trip::<PodDisruptionBudget>(json);
}
