//! Memory of a projection cache against the full cache: 10,000 Pods shaped
//! as the shared generator's (`gen_podlist.py`) served by the embedded API
//! server in a child process (its memory not counted), each cache filled by a real reflector (list and watch over
//! HTTP), then measured two ways: the peak heap bytes above the process's
//! state before the fill (a counting global allocator: the cache plus the
//! list page being decoded, a peak as RSS is) and the cache's own estimate
//! of what it keeps (`Store::memory`).
//!
//! ```text
//! cargo run -p kubeset-runtime --example projection_memory [-- PODS]
//! ```
//!
//! Byte counts, not times: a debug build gives the same figures.

use std::alloc::System;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::Pod;
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Api, Client, Resource};
use kubeset_runtime::projection;
use kubeset_runtime::{StoreConfig, WatcherConfig, Writer, reflector, watcher};
use kubeset_testserver::TestServer;
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

/// What a placement-watching controller reads of a Pod: its metadata, its
/// node, its phase and its containers' images.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct PodPlacement {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: PlacementSpec,
    #[serde(default)]
    status: PlacementStatus,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct PlacementSpec {
    node_name: Option<String>,
    #[serde(default)]
    containers: Vec<ContainerImage>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct ContainerImage {
    image: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct PlacementStatus {
    phase: Option<String>,
}

kubeset_runtime::projection!(PodPlacement => Pod);

/// A pod shaped as the shared generator's: two containers with ports,
/// env, resources, probes and mounts, three volumes, labels, annotations
/// and an owner.
fn pod(i: usize) -> Value {
    let container = |name: &str, port: u16| {
        json!({
            "name": name,
            "image": format!("registry.example.com/team/{name}:v1.{}.{}", i % 40, i % 10),
            "ports": [{"containerPort": port, "name": "http", "protocol": "TCP"}],
            "env": (0..5).map(|e| json!({"name": format!("ENV_{e}"), "value": format!("value-{i}-{e}")})).collect::<Vec<_>>(),
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/config"},
                {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
            ],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("pod-{i:05}"),
            "namespace": "default",
            "labels": {"app": format!("app-{}", i % 17), "pod-template-hash": format!("{:010x}", i * 7919), "tier": "backend"},
            "annotations": {"kubernetes.io/psp": "eks.privileged", "prometheus.io/scrape": "true", "checksum/config": format!("{i:064x}")},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("app-{}-{:010x}", i % 17, i), "uid": format!("0d1ba2e4-2b1d-4b7c-9d0e-{i:012}"), "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "containers": [container("app", 8080), container("sidecar", 9090)],
            "volumes": [
                {"name": "config", "configMap": {"name": format!("app-{}-config", i % 17), "defaultMode": 420}},
                {"name": "data", "emptyDir": {}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
                ]}}
            ],
            "nodeName": format!("ip-10-0-{}-{}.eu-west-1.compute.internal", i % 64, i % 250),
            "serviceAccountName": "default",
            "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30
        },
        "status": {"phase": "Running", "podIP": format!("10.1.{}.{}", i / 250 % 250, i % 250)}
    })
}

/// One cache's figures.
struct Row {
    name: &'static str,
    objects: u64,
    estimate: u64,
    heap: u64,
}

/// Fill a cache of `api` with `config` by a reflector, stop the
/// reflector, and measure what the kept cache holds.
async fn measure<K>(name: &'static str, api: Api<K>, config: StoreConfig<K>) -> Row
where
    K: Resource + serde::de::DeserializeOwned + Send + Sync + 'static,
{
    ALLOCATOR.reset_peak_memory();
    let writer = Writer::new(config);
    let store = writer.store();
    let task = tokio::spawn(async move {
        reflector(writer, watcher(api, WatcherConfig::default()))
            .for_each(|_| async {})
            .await;
    });
    // The task holds the writer: the store becomes ready or the reflector
    // ended, and then the measurement below shows an empty cache.
    store.wait_until_ready().await.unwrap_or(());
    let heap = ALLOCATOR.get_peak_memory() as u64;
    task.abort();
    let _ = task.await;
    let memory = store.memory();
    let row = Row {
        name,
        objects: memory.objects,
        estimate: memory.bytes,
        heap,
    };
    drop(store);
    row
}

/// The child process: seed the embedded server, print its URL, serve
/// until stdin closes (so the server's memory is not counted).
async fn serve(pods: usize) {
    let server = TestServer::start().await.expect("server");
    for i in 0..pods {
        server.create(pod(i)).expect("create a pod");
    }
    println!("{}", server.url());
    tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
    })
    .await
    .expect("stdin reader");
    server.shutdown().await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve") {
        let pods = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10_000);
        return serve(pods).await;
    }
    let pods: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let mut child = std::process::Command::new(std::env::current_exe().expect("own path"))
        .args(["serve", &pods.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("server process");
    let mut url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut url,
    )
    .expect("the server's URL");
    let rest =
        RestClient::new(RestConfig::new(url.trim()).with_qps_burst(-1.0, 0)).expect("client");
    let full: Api<Pod> = Api::namespaced(Client::new(rest, "default"), "default");
    let view: Api<PodPlacement> = projection::api(&full);

    // A first fill warms what a running process has warm (the client's
    // pool), then each variant in turn.
    let _ = measure("warm-up", view.clone(), StoreConfig::new()).await;
    let rows = [
        measure("full Pod", full.clone(), StoreConfig::new().count_memory()).await,
        measure(
            "full Pod, drop_managed_fields",
            full.clone(),
            StoreConfig::new().drop_managed_fields().count_memory(),
        )
        .await,
        measure(
            "projection",
            view.clone(),
            StoreConfig::new().count_memory(),
        )
        .await,
        measure(
            "projection, drop_managed_fields",
            view.clone(),
            StoreConfig::new().drop_managed_fields().count_memory(),
        )
        .await,
    ];
    let base = rows[0].heap.max(1) as f64;
    println!(
        "| cache ({pods} pods) | objects | estimate (MB) | peak heap (MB) | estimate/pod | peak vs full |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.1} | {:.1} | {} | {:.2}× |",
            r.name,
            r.objects,
            r.estimate as f64 / 1e6,
            r.heap as f64 / 1e6,
            r.estimate / r.objects.max(1),
            r.heap as f64 / base
        );
    }
    drop(child.stdin.take());
    let _ = child.wait();
}
