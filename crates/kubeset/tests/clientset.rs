//! The generated `Clientset` and subresource methods against the embedded
//! API server, over real sockets: status, scale, log, eviction, binding,
//! token, ephemeralcontainers, resize, finalize and approval. The same
//! methods run against the real kube-apiserver in
//! `tests/tests/suite/clientset.rs`; the cases here follow what it answers
//! there.

use std::collections::BTreeMap;

use futures::TryStreamExt as _;
use kubeset::api::apps::v1::{Deployment, DeploymentSpec};
use kubeset::api::autoscaling::v1::{Scale, ScaleSpec};
use kubeset::api::core::v1::{ConfigMap, Container, Pod, PodSpec, PodTemplateSpec};
use kubeset::api::policy::v1::Eviction;
use kubeset::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubeset::clientset::core_v1::PodLogParams;
use kubeset::params::{ListParams, PatchParams, PostParams, QueryParams as _};
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Client, Clientset, Patch};
use kubeset_testserver::TestServer;
use serde_json::json;

async fn setup() -> (TestServer, Clientset) {
    let server = TestServer::start().await.expect("test server starts");
    let rest = RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0))
        .expect("client builds");
    (server, Clientset::new(Client::new(rest, "default")))
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

fn pod(name: &str) -> Pod {
    Pod {
        metadata: meta(name),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("app:1".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: meta(name),
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: pod(name).spec,
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

#[tokio::test]
async fn accessors_address_namespaced_all_and_cluster_scoped_collections() {
    let (_server, cs) = setup().await;
    let post = PostParams::default();
    let cms_a = cs.core_v1().config_maps("default");
    assert_eq!(cms_a.namespace(), Some("default"));
    let cm = |name: &str| ConfigMap {
        metadata: meta(name),
        ..ConfigMap::default()
    };
    cms_a.create(&post, &cm("one")).await.unwrap();
    cs.core_v1()
        .namespaces()
        .create(
            &post,
            &kubeset::api::core::v1::Namespace {
                metadata: meta("other"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    cs.core_v1()
        .config_maps("other")
        .create(&post, &cm("two"))
        .await
        .unwrap();
    // Namespaced: only its own namespace.
    let names = |list: kubeset::List<ConfigMap>| {
        let mut v: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .filter(|n| n == "one" || n == "two")
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(cms_a.list(&ListParams::default()).await.unwrap()),
        ["one"]
    );
    // `_all`: every namespace.
    let all = cs.core_v1().config_maps_all();
    assert_eq!(all.namespace(), None);
    assert_eq!(
        names(all.list(&ListParams::default()).await.unwrap()),
        ["one", "two"]
    );
    // Cluster-scoped.
    let ns = cs.core_v1().namespaces().get("other").await.unwrap();
    assert_eq!(ns.metadata.name.as_deref(), Some("other"));
    // Another group-version, and From<Client>.
    let cs2 = Clientset::from(cs.client().clone());
    let d = cs2
        .apps_v1()
        .deployments("default")
        .create(&post, &deployment("web", 2))
        .await
        .unwrap();
    assert_eq!(d.spec.and_then(|s| s.replicas), Some(2));
}

#[tokio::test]
async fn deployment_scale_get_replace_patch() {
    let (_server, cs) = setup().await;
    let deploys = cs.apps_v1().deployments("default");
    deploys
        .create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();

    let scale: Scale = deploys.get_scale("web").await.unwrap();
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));

    let replaced = deploys
        .replace_scale(
            "web",
            &PostParams::default(),
            &Scale {
                metadata: meta("web"),
                spec: Some(ScaleSpec { replicas: Some(3) }),
                ..Scale::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(replaced.spec.and_then(|s| s.replicas), Some(3));
    let live = deploys.get("web").await.unwrap();
    assert_eq!(live.spec.and_then(|s| s.replicas), Some(3));

    let patched = deploys
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(5));
    assert_eq!(
        deploys
            .get("web")
            .await
            .unwrap()
            .spec
            .and_then(|s| s.replicas),
        Some(5)
    );

    let missing = deploys.get_scale("nope").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");
}

#[tokio::test]
async fn pod_logs_eviction_and_status() {
    let (_server, cs) = setup().await;
    let pods = cs.core_v1().pods("default");
    pods.create(&PostParams::default(), &pod("p1"))
        .await
        .unwrap();

    // The embedded server has no containers: an existing pod's log is empty.
    let params = PodLogParams::default().container("app").tail_lines(10);
    assert_eq!(pods.logs("p1", &params).await.unwrap(), "");
    let err = pods.logs("ghost", &params).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    // The byte-stream form (for `follow`): ends when the server closes.
    let chunks: Vec<_> = pods
        .log_stream("p1", &params.clone().follow(true))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 0);
    let err = match pods.log_stream("ghost", &params).await {
        Ok(_) => panic!("a missing pod has no log stream"),
        Err(e) => e,
    };
    assert!(err.is_not_found(), "{err:?}");

    // Status through the generic typed method.
    let status = pods
        .patch_status(
            "p1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        status.status.and_then(|s| s.phase).as_deref(),
        Some("Running")
    );

    let eviction = Eviction {
        metadata: meta("p1"),
        ..Eviction::default()
    };
    let answer = pods
        .evict("p1", &PostParams::default(), &eviction)
        .await
        .unwrap();
    assert_eq!(answer.status.as_deref(), Some("Success"));
    assert!(
        pods.get_opt("p1").await.unwrap().is_none(),
        "evicted pod is gone"
    );
    let err = pods
        .evict("p1", &PostParams::default(), &eviction)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[test]
fn log_params_use_the_spec_wire_names() {
    let params = PodLogParams::default()
        .container("app")
        .follow(false)
        .since_seconds(30)
        .tail_lines(5)
        .timestamps(true)
        .limit_bytes(1024)
        .insecure_skip_tls_verify_backend(true)
        .previous(true)
        .stream("Stdout");
    let mut pairs = Vec::new();
    params.query_pairs(&mut pairs);
    assert_eq!(
        pairs,
        vec![
            ("container", "app".to_owned()),
            ("follow", "false".to_owned()),
            ("insecureSkipTLSVerifyBackend", "true".to_owned()),
            ("limitBytes", "1024".to_owned()),
            ("previous", "true".to_owned()),
            ("sinceSeconds", "30".to_owned()),
            ("stream", "Stdout".to_owned()),
            ("tailLines", "5".to_owned()),
            ("timestamps", "true".to_owned()),
        ]
    );
    let mut none = Vec::new();
    PodLogParams::default().query_pairs(&mut none);
    assert!(none.is_empty());
}

/// A typed object from JSON (independent of how the model lays out its
/// optional fields).
fn typed<K: serde::de::DeserializeOwned>(value: serde_json::Value) -> K {
    serde_json::from_value(value).expect("the JSON fits the type")
}

fn api_code(err: &kubeset::Error) -> Option<u16> {
    err.api_error().map(|e| e.code)
}

#[tokio::test]
async fn pod_binding_assigns_a_node_once() {
    let (_server, cs) = setup().await;
    let pods = cs.core_v1().pods("default");
    let post = PostParams::default();
    pods.create(&post, &pod("p")).await.unwrap();

    let binding: kubeset::api::core::v1::Binding = typed(json!({
        "metadata": {"name": "p", "annotations": {"scheduler": "kubeset-test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"}
    }));
    let status = pods.bind("p", &post, &binding).await.unwrap();
    assert_eq!(status.status.as_deref(), Some("Success"));
    let bound = serde_json::to_value(pods.get("p").await.unwrap()).unwrap();
    assert_eq!(bound["spec"]["nodeName"], "node-a");
    assert_eq!(
        bound["metadata"]["annotations"]["scheduler"],
        "kubeset-test"
    );
    let scheduled = bound["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .cloned();
    assert_eq!(scheduled.map(|c| c["status"].clone()), Some(json!("True")));

    // Bound once: a second binding is a conflict, a missing pod 404.
    let again = pods.bind("p", &post, &binding).await.unwrap_err();
    assert!(again.is_conflict(), "{again:?}");
    assert!(
        again.to_string().contains("already assigned to node"),
        "{again}"
    );
    let ghost = pods.bind("ghost", &post, &binding).await.unwrap_err();
    assert!(ghost.is_not_found(), "{ghost:?}");
    let nowhere: kubeset::api::core::v1::Binding =
        typed(json!({"metadata": {"name": "q"}, "target": {"name": ""}}));
    pods.create(&post, &pod("q")).await.unwrap();
    let err = pods.bind("q", &post, &nowhere).await.unwrap_err();
    assert_eq!(api_code(&err), Some(422), "{err:?}");
}

#[tokio::test]
async fn service_account_token_is_a_jwt_naming_the_account() {
    use base64::Engine as _;
    let (_server, cs) = setup().await;
    let sas = cs.core_v1().service_accounts("default");
    let post = PostParams::default();
    sas.create(&post, &typed(json!({"metadata": {"name": "robot"}})))
        .await
        .unwrap();

    let request: kubeset::api::authentication::v1::TokenRequest = typed(json!({
        "spec": {"audiences": ["kubeset-test"], "expirationSeconds": 600}
    }));
    let answer =
        serde_json::to_value(sas.create_token("robot", &post, &request).await.unwrap()).unwrap();
    assert_eq!(answer["spec"]["audiences"], json!(["kubeset-test"]));
    let token = answer["status"]["token"].as_str().unwrap();
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "{token}");
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[1])
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
    assert_eq!(claims["aud"], json!(["kubeset-test"]));
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        600
    );
    assert!(answer["status"]["expirationTimestamp"].is_string());

    // Defaults: an hour, the server's audience.
    let answer = serde_json::to_value(
        sas.create_token("robot", &post, &typed(json!({"spec": {}})))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        answer["spec"]["audiences"].as_array().map(Vec::len),
        Some(1)
    );

    let short: kubeset::api::authentication::v1::TokenRequest =
        typed(json!({"spec": {"audiences": [], "expirationSeconds": 60}}));
    let err = sas.create_token("robot", &post, &short).await.unwrap_err();
    assert_eq!(api_code(&err), Some(422), "{err:?}");
    let err = sas
        .create_token("ghost", &post, &request)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn ephemeral_containers_are_added_never_changed() {
    let (_server, cs) = setup().await;
    let pods = cs.core_v1().pods("default");
    pods.create(&PostParams::default(), &pod("p"))
        .await
        .unwrap();

    let mut live = serde_json::to_value(pods.get_ephemeral_containers("p").await.unwrap()).unwrap();
    assert!(live["spec"].get("ephemeralContainers").is_none());
    live["spec"]["ephemeralContainers"] =
        json!([{"name": "debug", "image": "debug:1", "targetContainerName": "app"}]);
    // Other changes in the body are dropped.
    live["spec"]["containers"][0]["image"] = json!("app:2");
    let updated = serde_json::to_value(
        pods.replace_ephemeral_containers("p", &PostParams::default(), &typed(live))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(updated["spec"]["ephemeralContainers"][0]["name"], "debug");
    assert_eq!(updated["spec"]["containers"][0]["image"], "app:1");

    let patched = serde_json::to_value(
        pods.patch_ephemeral_containers(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ephemeralContainers": [
                {"name": "debug2", "image": "debug:2"}
            ]}})),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        patched["spec"]["ephemeralContainers"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // An existing one may not change; a name may not repeat a container's.
    let mut changed = patched.clone();
    changed["spec"]["ephemeralContainers"][0]["image"] = json!("debug:9");
    let err = pods
        .replace_ephemeral_containers("p", &PostParams::default(), &typed(changed))
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(422), "{err:?}");
    assert!(err.to_string().contains("may not be changed"), "{err}");
    let err = pods
        .patch_ephemeral_containers(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ephemeralContainers": [
                {"name": "app", "image": "debug:3"}
            ]}})),
        )
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(422), "{err:?}");
}

#[tokio::test]
async fn resize_changes_only_container_resources() {
    let (_server, cs) = setup().await;
    let pods = cs.core_v1().pods("default");
    let p: Pod = typed(json!({
        "metadata": {"name": "r"},
        "spec": {"containers": [{
            "name": "app", "image": "app:1",
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
        }]}
    }));
    pods.create(&PostParams::default(), &p).await.unwrap();
    let cpu = |pod: &Pod| {
        serde_json::to_value(pod).unwrap()["spec"]["containers"][0]["resources"]["requests"]["cpu"]
            .clone()
    };

    let live = pods.get_resize("r").await.unwrap();
    assert_eq!(cpu(&live), "100m");
    let resized = pods
        .patch_resize(
            "r",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"containers": [
                {"name": "app", "resources": {"requests": {"cpu": "150m"}}}
            ]}})),
        )
        .await
        .unwrap();
    assert_eq!(cpu(&resized), "150m");

    let mut other = serde_json::to_value(&resized).unwrap();
    other["spec"]["containers"][0]["image"] = json!("app:2");
    other["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("180m");
    let replaced = pods
        .replace_resize("r", &PostParams::default(), &typed(other))
        .await
        .unwrap();
    assert_eq!(cpu(&replaced), "180m");
    let replaced = serde_json::to_value(&replaced).unwrap();
    assert_eq!(replaced["spec"]["containers"][0]["image"], "app:1");
    // The stale resourceVersion of the first read: 409.
    let err = pods
        .replace_resize("r", &PostParams::default(), &live)
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
}

#[tokio::test]
async fn namespace_finalize_replaces_only_spec_finalizers() {
    let (_server, cs) = setup().await;
    let namespaces = cs.core_v1().namespaces();
    namespaces
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "fin"}})),
        )
        .await
        .unwrap();
    let mut live = serde_json::to_value(namespaces.get("fin").await.unwrap()).unwrap();
    assert_eq!(live["spec"]["finalizers"], json!(["kubernetes"]));
    live["spec"]["finalizers"] = json!([]);
    live["metadata"]["labels"] = json!({"dropped": "yes"});
    let finalized = serde_json::to_value(
        namespaces
            .finalize("fin", &PostParams::default(), &typed(live))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(finalized["spec"]["finalizers"], json!([]));
    // Only spec.finalizers is taken: the label the server sets on every
    // namespace stays, the one the request added does not arrive.
    assert_eq!(
        finalized["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "fin"}),
        "{finalized}"
    );
    let err = namespaces
        .finalize(
            "ghost",
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "ghost"}})),
        )
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[cfg(feature = "certificates-v1")]
#[tokio::test]
async fn csr_approval_sets_conditions_and_refuses_approved_with_denied() {
    let (_server, cs) = setup().await;
    let csrs = cs.certificates_v1().certificate_signing_requests();
    let csr: kubeset::api::certificates::v1::CertificateSigningRequest = typed(json!({
        "metadata": {"name": "worker"},
        "spec": {"request": "LS0tLQ==", "signerName": "example.com/test", "usages": ["client auth"]}
    }));
    let live = csrs.create(&PostParams::default(), &csr).await.unwrap();
    let mut body = serde_json::to_value(&live).unwrap();
    body["status"] = json!({"conditions": [{"type": "Approved", "reason": "Test"}]});
    body["spec"]["signerName"] = json!("example.com/other");
    let approved = serde_json::to_value(
        csrs.replace_approval("worker", &PostParams::default(), &typed(body.clone()))
            .await
            .unwrap(),
    )
    .unwrap();
    let condition = &approved["status"]["conditions"][0];
    assert_eq!(condition["type"], "Approved");
    assert_eq!(condition["status"], "True", "defaulted");
    assert!(condition["lastUpdateTime"].is_string());
    assert_eq!(
        approved["spec"]["signerName"], "example.com/test",
        "spec kept"
    );
    let read = serde_json::to_value(csrs.get_approval("worker").await.unwrap()).unwrap();
    assert_eq!(read["status"], approved["status"]);

    let mut both = approved.clone();
    both["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Denied", "status": "True"}));
    let err = csrs
        .replace_approval("worker", &PostParams::default(), &typed(both))
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(422), "{err:?}");
    let err = csrs
        .patch_approval(
            "worker",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": []}})),
        )
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(422), "removing Approved: {err:?}");
}
