//! A CustomResourceDefinition created through the typed client, then used
//! through a `#[derive(Resource)]` struct and through the dynamic client,
//! and found by discovery.

use std::time::Duration;

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::discovery::Discovery;
use kubeset::dynamic::DynamicObject;
use kubeset::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset::{Api, Patch, Resource};
use kubeset_tests::{eventually, meta};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::common::{connect, ok, typed};

const GROUP: &str = "suite.kubeset.dev";
const CRD_NAME: &str = "widgets.suite.kubeset.dev";

/// The custom resource, as a user would write it.
#[derive(Resource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[resource(
    group = "suite.kubeset.dev",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced
)]
struct Widget {
    metadata: ObjectMeta,
    spec: WidgetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<WidgetStatus>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
struct WidgetSpec {
    color: String,
    replicas: i32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
struct WidgetStatus {
    #[serde(default)]
    replicas: i32,
    #[serde(default)]
    ready: bool,
}

fn crd() -> CustomResourceDefinition {
    typed(json!({
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wdg"], "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
                },
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["color"], "properties": {
                        "color": {"type": "string", "enum": ["red", "green", "blue"]},
                        "replicas": {"type": "integer", "minimum": 0}
                    }},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "ready": {"type": "boolean"}
                    }}
                }}}
            }]
        }
    }))
}

/// Whether the CRD has the condition `Established=True`.
pub(crate) fn established(c: &CustomResourceDefinition) -> bool {
    c.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// Creates the CRD (other runs against the same server may have left it:
/// it is then reused, it is identical).
pub(crate) async fn ensure_crd(crds: &Api<CustomResourceDefinition>) {
    match crds.create(&PostParams::default(), &crd()).await {
        Ok(created) => assert_eq!(created.spec.names.kind, "Widget"),
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating the CRD: {}", kubeset_tests::error_chain(&e)),
    }
    eventually(
        Duration::from_secs(60),
        "the CRD to be established",
        || async {
            match crds.get(CRD_NAME).await {
                Ok(c) if c.metadata.deletion_timestamp.is_some() => {
                    panic!("{CRD_NAME} is being deleted by someone else")
                }
                Ok(c) => established(&c).then_some(()),
                Err(e) => panic!("{}", kubeset_tests::error_chain(&e)),
            }
        },
    )
    .await;
}

#[tokio::test]
async fn crd_typed_derived_dynamic_and_discovered() {
    let ctx = connect!("crd");
    let crds: Api<CustomResourceDefinition> = Api::cluster(ctx.client.clone());
    ensure_crd(&crds).await;

    // The derive's facts.
    assert_eq!(Widget::API_VERSION, "suite.kubeset.dev/v1");
    assert_eq!(Widget::PLURAL, "widgets");

    // Typed through the derived struct. The new resource may take a moment
    // to be served after Established on every server: retry NotFound.
    let widgets: Api<Widget> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let w = Widget {
        metadata: meta("w1"),
        spec: WidgetSpec {
            color: "red".into(),
            replicas: 1,
        },
        status: None,
    };
    let created = eventually(Duration::from_secs(30), "widgets to be served", || async {
        match widgets.create(&PostParams::default(), &w).await {
            Ok(c) => Some(c),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("create widget: {}", kubeset_tests::error_chain(&e)),
        }
    })
    .await;
    assert_eq!(created.spec, w.spec);
    assert_eq!(ok("get", widgets.get("w1").await).spec, w.spec);

    // The schema is enforced: a colour outside the enum is Invalid (422).
    let bad = Widget {
        metadata: meta("bad"),
        spec: WidgetSpec {
            color: "purple".into(),
            replicas: 1,
        },
        status: None,
    };
    let err = widgets
        .create(&PostParams::default(), &bad)
        .await
        .expect_err("schema violation");
    assert!(err.is_invalid(), "{err}");

    // Status and scale subresources of the CRD.
    let with_status = ok(
        "patch status",
        widgets
            .patch_status(
                "w1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"replicas": 1, "ready": true}})),
            )
            .await,
    );
    assert_eq!(
        with_status.status,
        Some(WidgetStatus {
            replicas: 1,
            ready: true
        })
    );
    let scale: serde_json::Value = ok(
        "patch scale",
        widgets
            .patch_subresource(
                "scale",
                "w1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 3}})),
            )
            .await,
    );
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(ok("get", widgets.get("w1").await).spec.replicas, 3);

    // Discovery finds it, with its short name and subresources.
    let found = eventually(
        Duration::from_secs(60),
        "discovery to list widgets",
        || async {
            let discovery = ok("discovery", Discovery::run(&ctx.client).await);
            discovery.resolve_kind(GROUP, "Widget").cloned()
        },
    )
    .await;
    assert_eq!(found.resource.plural, "widgets");
    assert_eq!(found.resource.version, "v1");
    assert!(found.resource.namespaced);
    assert!(found.short_names.contains(&"wdg".to_owned()), "{found:?}");
    assert!(
        found.subresources.contains(&"status".to_owned())
            && found.subresources.contains(&"scale".to_owned()),
        "{found:?}"
    );
    let by_short_name = ok("discovery", Discovery::run(&ctx.client).await)
        .resolve_name("wdg")
        .map(|r| r.resource.kind.clone());
    assert_eq!(by_short_name.as_deref(), Some("Widget"));

    // The dynamic client, addressed by what discovery found.
    let dynamic: Api<DynamicObject> =
        Api::dynamic(ctx.client.clone(), &found.resource, Some(&ctx.ns));
    let obj = DynamicObject::new("w2", &found.resource)
        .with("spec", json!({"color": "blue", "replicas": 2}));
    let made = ok(
        "dynamic create",
        dynamic.create(&PostParams::default(), &obj).await,
    );
    assert_eq!(made.data["spec"], json!({"color": "blue", "replicas": 2}));
    let listed = ok("dynamic list", dynamic.list(&ListParams::default()).await);
    let mut names: Vec<_> = listed.items.iter().map(|o| o.name().to_owned()).collect();
    names.sort();
    assert_eq!(names, ["w1", "w2"]);
    // What the dynamic client made, the typed one reads, and back.
    assert_eq!(ok("typed get", widgets.get("w2").await).spec.color, "blue");
    let w1: Widget = ok("dynamic get", dynamic.get("w1").await)
        .try_parse()
        .expect("a dynamic widget parses as the derived type");
    assert_eq!(w1.spec.replicas, 3);

    ok(
        "delete",
        dynamic.delete("w2", &DeleteParams::default()).await,
    );
    assert!(ok("get", widgets.get_opt("w2").await).is_none());
}
