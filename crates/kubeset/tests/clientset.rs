//! The generated `Clientset` and subresource methods against the embedded
//! API server, over real sockets. (The embedded server serves status,
//! scale, log and eviction; binding, token, approval, finalize,
//! ephemeralcontainers and resize are tested against the real
//! kube-apiserver in `tests/tests/suite/clientset.rs`.)

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
        spec: Some(
            PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("app:1".into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }
            .into(),
        ),
        ..Pod::default()
    }
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: meta(name),
        spec: Some(
            DeploymentSpec {
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
            }
            .into(),
        ),
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
