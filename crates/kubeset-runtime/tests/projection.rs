//! Typed projections and the transform before storing, on the embedded
//! API server: a projection of Pod lists and watches Pods' own URLs,
//! decodes only its fields, drives a reflector and a controller, and its
//! cache is a fraction of the full one; a transform changes what the cache
//! and the reconciles see.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::Pod;
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{PatchParams, PostParams};
use kubeset_client::{Api, Patch, Resource, ResourceExt as _};
use kubeset_runtime::projection::{self, Projection};
use kubeset_runtime::{
    Action, Controller, Event, StoreConfig, WatchStreamExt as _, WatcherConfig, Writer, reflector,
    watcher,
};
use kubeset_testserver::TestServer;
use serde::{Deserialize, Serialize};
use serde_json::json;

use common::{client, eventually};

/// What a placement-watching controller reads of a Pod.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
struct PodPlacement {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: PlacementSpec,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct PlacementSpec {
    node_name: Option<String>,
    /// Only the images of the containers, nothing else of them.
    #[serde(default)]
    containers: Vec<ContainerImage>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
struct ContainerImage {
    image: Option<String>,
}

kubeset_runtime::projection!(PodPlacement => Pod);

/// Pods this many, shaped as the shared generator's.
const PODS: usize = 120;

fn pod(i: usize) -> Pod {
    let container = |name: &str, port: u16| {
        json!({
            "name": name,
            "image": format!("registry.example.com/team/{name}:v1.{}", i % 40),
            "ports": [{"containerPort": port, "name": "http", "protocol": "TCP"}],
            "env": (0..5).map(|e| json!({"name": format!("ENV_{e}"), "value": format!("value-{i}-{e}")})).collect::<Vec<_>>(),
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/config"}],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"
        })
    };
    serde_json::from_value(json!({
        "metadata": {
            "name": format!("pod-{i:04}"),
            "namespace": "default",
            "labels": {"app": format!("app-{}", i % 17), "tier": "backend"},
            "annotations": {"prometheus.io/scrape": "true", "checksum/config": format!("{i:064x}")}
        },
        "spec": {
            "containers": [container("app", 8080), container("sidecar", 9090)],
            "volumes": [{"name": "config", "configMap": {"name": format!("app-{}-config", i % 17)}}],
            "nodeName": format!("node-{}", i % 8),
            "serviceAccountName": "default",
            "restartPolicy": "Always"
        }
    }))
    .expect("a pod")
}

async fn seeded() -> (TestServer, Api<Pod>) {
    let server = TestServer::start().await.expect("server");
    let pods: Api<Pod> = Api::namespaced(client(&server.urls()), "default");
    for i in 0..PODS {
        pods.create(&PostParams::default(), &pod(i))
            .await
            .expect("create");
    }
    (server, pods)
}

/// Runs a reflector of `api` into `writer` in the background until synced.
async fn synced<K>(api: Api<K>, writer: Writer<K>) -> tokio::task::JoinHandle<()>
where
    K: Resource + serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let store = writer.store();
    let task = tokio::spawn(async move {
        reflector(writer, watcher(api, WatcherConfig::default()))
            .for_each(|_| async {})
            .await;
    });
    store
        .wait_until_ready()
        .await
        .expect("the reflector task holds the writer until synced");
    task
}

#[tokio::test]
async fn a_projection_is_a_view_of_its_kind_and_a_fraction_of_its_cache() {
    let (server, pods) = seeded().await;
    // The same URLs as the full kind.
    assert_eq!(
        PodPlacement::url_path(&(), Some("default")),
        Pod::url_path(&(), Some("default"))
    );
    assert_eq!(<PodPlacement as Projection>::Full::KIND, "Pod");
    let placements: Api<PodPlacement> = projection::api(&pods);

    let full_writer = Writer::<Pod>::new(StoreConfig::new().count_memory());
    let full = full_writer.store();
    let full_task = synced(pods.clone(), full_writer).await;
    let view_writer = Writer::<PodPlacement>::new(StoreConfig::new().count_memory());
    let view = view_writer.store();
    let view_task = synced(placements.clone(), view_writer).await;

    assert_eq!(view.state().len(), PODS);
    for i in [0, 7, PODS - 1] {
        let key = kubeset_runtime::ObjectKey::namespaced("default", &format!("pod-{i:04}"));
        let p = view.get(&key).expect("cached");
        assert_eq!(p.spec.node_name, Some(format!("node-{}", i % 8)));
        let images: Vec<_> = p
            .spec
            .containers
            .iter()
            .map(|c| c.image.clone().unwrap())
            .collect();
        assert_eq!(
            images,
            [
                format!("registry.example.com/team/app:v1.{}", i % 40),
                format!("registry.example.com/team/sidecar:v1.{}", i % 40)
            ]
        );
        // Its metadata is the server's, in full.
        assert_eq!(p.labels()["tier"], "backend");
        assert!(p.resource_version().is_some());
    }
    // A watch event reaches the projection's cache.
    let patch = json!({"metadata": {"labels": {"moved": "yes"}}});
    pods.patch("pod-0003", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch");
    let key = kubeset_runtime::ObjectKey::namespaced("default", "pod-0003");
    assert!(
        eventually(Duration::from_secs(30), || {
            view.get(&key)
                .is_some_and(|p| p.labels().get("moved").map(String::as_str) == Some("yes"))
        })
        .await,
        "the projection saw the change"
    );

    let (f, v) = (full.memory(), view.memory());
    eprintln!(
        "{PODS} pods: full cache {} bytes, projection {} bytes ({:.1} %)",
        f.bytes,
        v.bytes,
        100.0 * v.bytes as f64 / f.bytes as f64
    );
    assert_eq!((f.objects, v.objects), (PODS as u64, PODS as u64));
    // The target for the projection row: at most 0.3× the full
    // cache (the estimate is checked against a counting allocator in
    // tests/memory.rs).
    assert!(
        v.bytes * 10 <= f.bytes * 3,
        "projection {} vs full {}",
        v.bytes,
        f.bytes
    );
    full_task.abort();
    view_task.abort();
    server.shutdown().await;
}

/// Per pod: the node, the containers and whether annotations were seen.
type Seen = BTreeMap<String, (Option<String>, usize, bool)>;

#[tokio::test]
async fn a_controller_of_a_projection_with_a_transform_sees_what_it_declared() {
    let (server, pods) = seeded().await;
    let placements: Api<PodPlacement> = projection::api(&pods);
    // The transform keeps only the first container's image.
    let store_config = StoreConfig::new().transform(|p: &mut PodPlacement| {
        p.spec.containers.truncate(1);
        p.metadata.annotations = None;
    });
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let controller = Controller::with_store(placements, WatcherConfig::default(), store_config);
    let store = controller.store();
    let run = controller
        .concurrency(8)
        .graceful_shutdown_on(async move {
            let _ = rx.wait_for(|d| *d).await;
        })
        .run(
            |p: Arc<PodPlacement>, seen: Arc<Mutex<BTreeMap<_, _>>>| async move {
                let mut seen = seen.lock().unwrap();
                seen.insert(
                    p.name_any(),
                    (
                        p.spec.node_name.clone(),
                        p.spec.containers.len(),
                        p.metadata.annotations.is_some(),
                    ),
                );
                Ok::<_, std::convert::Infallible>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            seen.clone(),
        )
        .for_each(|_| async {});
    let watch_seen = seen.clone();
    let stopper = tokio::spawn(async move {
        let all = eventually(Duration::from_secs(60), || {
            watch_seen.lock().unwrap().len() == PODS
        })
        .await;
        let _ = tx.send(true);
        all
    });
    run.await;
    assert!(stopper.await.unwrap(), "every pod reconciled");
    let seen = seen.lock().unwrap().clone();
    for i in 0..PODS {
        let got = &seen[&format!("pod-{i:04}")];
        assert_eq!(
            got,
            &(Some(format!("node-{}", i % 8)), 1, false),
            "pod-{i:04}"
        );
    }
    // The cache holds the transformed objects too.
    assert!(
        store
            .state()
            .iter()
            .all(|p| p.spec.containers.len() == 1 && p.metadata.annotations.is_none())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn modify_on_a_watcher_stream_changes_each_object() {
    let (server, pods) = seeded().await;
    let mut events = Box::pin(
        watcher(
            projection::api::<PodPlacement>(&pods),
            WatcherConfig::default(),
        )
        .modify(|p: &mut PodPlacement| p.spec.node_name = Some("hidden".into())),
    );
    let mut applied = 0;
    while let Some(ev) = events.next().await {
        match ev.expect("no error") {
            Event::InitApply(p) | Event::Apply(p) => {
                assert_eq!(p.spec.node_name.as_deref(), Some("hidden"));
                applied += 1;
            }
            Event::InitDone => break,
            Event::Init | Event::Delete(_) => {}
        }
    }
    assert_eq!(applied, PODS);
    server.shutdown().await;
}
