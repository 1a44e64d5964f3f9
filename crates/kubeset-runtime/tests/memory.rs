//! Counted cache memory against a counting global allocator: the store's
//! estimate ([`Store::memory`], a deep-size walk) of real objects read
//! from the embedded server, against the bytes the allocator really takes
//! for what the decode and the cache keep: each block's chunk, not the
//! bytes asked for. Its own test binary with one test: the allocator
//! counts every allocation of the process.

mod common;

use std::alloc::System;
use std::sync::atomic::{AtomicIsize, Ordering};

use kubeset_client::api::core::v1::{ConfigMap, Pod};
use kubeset_client::params::{ListParams, PostParams};
use kubeset_client::{Api, Resource};
use kubeset_runtime::{Event, StoreConfig, Writer};
use kubeset_testserver::TestServer;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

#[global_allocator]
static ALLOCATOR: Allocator<System> = Allocator::system();

/// Chunk bytes of the blocks allocated since tracking was enabled and
/// live now (less the frees of blocks from before, if any), and the most
/// at once.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// The chunk glibc's malloc (64-bit) takes for a block of `size` bytes,
/// written out here from glibc's `request2size` rather than taken from
/// the runtime: the request and the 8-byte size header, rounded up to 16,
/// at least 32.
fn chunk(size: usize) -> isize {
    (size + 8).next_multiple_of(16).max(32) as isize
}

/// Counts the chunk of every block allocated and freed while tracking is
/// on (the allocator's hooks give each block's requested size).
struct Chunks;

impl AllocationTracker for Chunks {
    fn allocated(&self, _addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        let now = LIVE.fetch_add(chunk(size), Ordering::Relaxed) + chunk(size);
        PEAK.fetch_max(now, Ordering::Relaxed);
    }

    fn deallocated(
        &self,
        _addr: usize,
        size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        LIVE.fetch_sub(chunk(size), Ordering::Relaxed);
    }
}

/// The estimate is within this fraction of the counted bytes.
const MARGIN: f64 = 0.10;

/// A pod shaped as the shared generator's (`gen_podlist.py`): two
/// containers with ports, env, resources, probes and mounts, three
/// volumes, labels and annotations.
fn pod(i: usize) -> Pod {
    let container = |name: &str, port: u16| {
        serde_json::json!({
            "name": name,
            "image": format!("registry.example.com/team/{name}:v1.{}.{}", i % 40, i % 10),
            "ports": [{"containerPort": port, "name": "http", "protocol": "TCP"}],
            "env": (0..5).map(|e| serde_json::json!({"name": format!("ENV_{e}"), "value": format!("value-{i}-{e}")})).collect::<Vec<_>>(),
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
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": format!("pod-{i:04}"),
            "namespace": "default",
            "labels": {"app": format!("app-{}", i % 17), "pod-template-hash": format!("{:010x}", i * 7919), "tier": "backend"},
            "annotations": {"kubernetes.io/psp": "eks.privileged", "prometheus.io/scrape": "true", "checksum/config": format!("{:064x}", i)},
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
        }
    }))
    .expect("a pod")
}

/// A ConfigMap with `i % 5 + 1` data entries and two labels.
fn config_map(i: usize) -> ConfigMap {
    let mut cm = common::cm("default", &format!("cm-{i:04}"), &format!("v{i}"));
    cm.data = Some(
        (0..=i % 5)
            .map(|k| (format!("key-{k}"), "x".repeat(20 + 37 * k)))
            .collect(),
    );
    cm.metadata
        .labels
        .get_or_insert_default()
        .insert("team".into(), format!("t{}", i % 3));
    cm
}

/// Creates `objects` on the server and reads them back as JSON, as a
/// watch delivers them (server-set metadata included).
async fn served<K>(api: &Api<K>, objects: Vec<K>) -> Vec<String>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    for o in &objects {
        api.create(&PostParams::default(), o).await.expect("create");
    }
    let list = api.list(&ListParams::default()).await.expect("list");
    list.items
        .iter()
        .map(|o| serde_json::to_string(o).expect("encodes"))
        .collect()
}

/// Decodes every body into a counting cache; returns the chunk bytes the
/// allocator gave to what was kept and the cache's estimate.
fn counted<K>(bodies: &[String]) -> (u64, u64)
where
    K: Resource + Serialize + DeserializeOwned + 'static,
{
    // Warm what a running cache has warm: the sizes the walk learns.
    for b in bodies.iter().take(2) {
        let o: K = serde_json::from_str(b).expect("decodes");
        let _ = kubeset_runtime::memory::estimate(&o);
    }
    let mut writer = Writer::new(StoreConfig::<K>::new().count_memory());
    let store = writer.store();
    // Only blocks allocated from here on are counted (and their frees).
    let _ = AllocationRegistry::set_global_tracker(Chunks);
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    AllocationRegistry::enable_tracking();
    for b in bodies {
        let o: K = serde_json::from_str(b).expect("decodes");
        writer.apply(Event::Apply(o));
    }
    // The peak of live bytes since the reset: the kept objects, plus the
    // one decode in flight and the table's last growth (both small).
    let real = PEAK.load(Ordering::Relaxed) as u64;
    AllocationRegistry::disable_tracking();
    let held = store.memory();
    assert_eq!(held.objects, bodies.len() as u64);
    drop(writer);
    (real, held.bytes)
}

fn within_margin(what: &str, (real, estimate): (u64, u64)) {
    let off = (estimate as f64 - real as f64) / real as f64;
    eprintln!(
        "{what}: counted {real} bytes, estimated {estimate} ({:+.1} %)",
        off * 100.0
    );
    assert!(
        off.abs() <= MARGIN,
        "{what}: estimate {estimate} is {:+.1} % off the {real} bytes counted",
        off * 100.0
    );
}

#[test]
fn the_estimate_is_within_10_percent_of_the_chunks_a_counting_allocator_gives() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (pods, cms) = rt.block_on(async {
        let server = TestServer::start().await.expect("server");
        let client = common::client(&server.urls());
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let p = served(&pods, (0..200).map(pod).collect()).await;
        let c = served(&cms, (0..400).map(config_map).collect()).await;
        (p, c)
    });
    drop(rt);
    within_margin("200 pods", counted::<Pod>(&pods));
    within_margin("400 config maps", counted::<ConfigMap>(&cms));
}
