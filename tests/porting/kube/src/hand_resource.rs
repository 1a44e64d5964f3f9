//! A kind the models lack, implemented by hand as kubectl-view-allocations
//! implements metrics.k8s.io's `PodMetrics`: k8s-openapi's `Resource`
//! (with `URL_PATH_SEGMENT`) and `Metadata` written out, then read through
//! a typed `Api<PodMetrics>`. The embedded server serves the kind from a
//! CRD in a group of the test's own, with `pods` as its plural as
//! metrics-server serves it.

use k8s_openapi::Metadata;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{BoxError, server, within};

/// One container's usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Usage {
    cpu: String,
    memory: String,
}

/// One container of the pod.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Container {
    name: String,
    usage: Usage,
}

/// kubectl-view-allocations' `PodMetrics`, field for field.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PodMetrics {
    metadata: kube::api::ObjectMeta,
    containers: Vec<Container>,
    timestamp: String,
    window: String,
}

// The two impls as kubectl-view-allocations writes them (its group is
// metrics.k8s.io; this one is the test's own).
impl k8s_openapi::Resource for PodMetrics {
    const GROUP: &'static str = "metrics.porting.example.com";
    const KIND: &'static str = "PodMetrics";
    const VERSION: &'static str = "v1beta1";
    const API_VERSION: &'static str = "metrics.porting.example.com/v1beta1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::Metadata for PodMetrics {
    type Ty = kube::api::ObjectMeta;

    fn metadata(&self) -> &Self::Ty {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut Self::Ty {
        &mut self.metadata
    }
}

/// The CRD that serves the kind (metrics-server's API is not a CRD; the
/// embedded server has no aggregation).
fn definition() -> Result<CustomResourceDefinition, BoxError> {
    let string = json!({"type": "string"});
    let usage = json!({"type": "object", "properties": {"cpu": string, "memory": string}});
    let container = json!({"type": "object", "properties": {"name": string, "usage": usage}});
    let schema = json!({
        "type": "object",
        "properties": {
            "containers": {"type": "array", "items": container},
            "timestamp": string,
            "window": string,
        },
    });
    Ok(serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "pods.metrics.porting.example.com"},
        "spec": {
            "group": "metrics.porting.example.com",
            "scope": "Namespaced",
            "names": {"plural": "pods", "singular": "pod", "kind": "PodMetrics", "listKind": "PodMetricsList"},
            "versions": [{
                "name": "v1beta1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    }))?)
}

fn usage(cpu: &str, memory: &str) -> serde_json::Value {
    json!({"cpu": cpu, "memory": memory})
}

#[tokio::test]
async fn hand_written_resource_and_metadata_pair() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &definition()?).await?;
    let established = await_condition(
        crds,
        "pods.metrics.porting.example.com",
        conditions::is_crd_established(),
    );
    within("the CRD's Established condition", established).await??;

    // Written through the dynamic Api, addressed by the hand-written impl
    // (metrics-server's objects are read-only; kubectl-view-allocations
    // only lists them).
    let resource = ApiResource::erase::<PodMetrics>(&());
    assert_eq!(
        (resource.plural.as_str(), resource.kind.as_str()),
        ("pods", "PodMetrics")
    );
    let dynamic: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let written = DynamicObject::new("web-0", &resource).data(json!({
        "containers": [{"name": "app", "usage": usage("250m", "64Mi")}],
        "timestamp": "2026-01-01T00:00:00Z",
        "window": "30s",
    }));
    dynamic.create(&PostParams::default(), &written).await?;

    // Read as kubectl-view-allocations reads them: the typed Api of the
    // hand-written kind, across namespaces.
    let metrics: Api<PodMetrics> = Api::all(client.clone());
    let listed = metrics.list(&ListParams::default()).await?;
    let names: Vec<String> = listed.items.iter().map(|m| m.name_any()).collect();
    assert_eq!(names, ["web-0"]);
    let one = &listed.items[0];
    assert_eq!(one.metadata().namespace.as_deref(), Some("default"));
    assert_eq!(
        one.containers,
        [Container {
            name: "app".to_owned(),
            usage: Usage {
                cpu: "250m".to_owned(),
                memory: "64Mi".to_owned()
            }
        }]
    );
    assert_eq!(
        (one.timestamp.as_str(), one.window.as_str()),
        ("2026-01-01T00:00:00Z", "30s")
    );

    // The namespaced Api, and the metadata through both traits' accessors.
    let in_default: Api<PodMetrics> = Api::namespaced(client, "default");
    let mut got = in_default.get("web-0").await?;
    got.metadata_mut()
        .labels
        .get_or_insert_with(Default::default)
        .insert("app".to_owned(), "web".to_owned());
    assert_eq!(got.labels()["app"], "web");
    assert!(got.uid().is_some(), "read back from the server: {got:?}");
    assert_eq!(
        <PodMetrics as kube::Resource>::url_path(&(), Some("default")),
        "/apis/metrics.porting.example.com/v1beta1/namespaces/default/pods"
    );
    Ok(())
}
