//! Measures the memory of caching many Pods.
//!
//! ```text
//! python3 ../shared/bench/gen_podlist.py 10000 /tmp/podlist_10k.json
//! cargo run --release -p kubeset --features runtime --example cache_pods -- serve /tmp/podlist_10k.json &
//! /usr/bin/time -v target/release/examples/cache_pods cache http://127.0.0.1:PORT full
//! /usr/bin/time -v target/release/examples/cache_pods cache http://127.0.0.1:PORT no-managed-fields
//! /usr/bin/time -v target/release/examples/cache_pods cache http://127.0.0.1:PORT metadata
//! /usr/bin/time -v target/release/examples/cache_pods cache http://127.0.0.1:PORT two-caches
//! /usr/bin/time -v target/release/examples/cache_pods cache http://127.0.0.1:PORT shared
//! ```
//!
//! `two-caches` and `shared` are the caches of two controllers over all
//! Pods: two watches and stores, or one [`SharedCaches`] cache both read
//! (the count printed is the sum of both stores' lengths). Measured (dev
//! build, 3,000 pods of `gen_podlist.py`, 35 MB of JSON, maximum RSS):
//! one cache 77 MB, two caches 128 MB, two controllers sharing one cache
//! 72 MB (the second reader costs a broadcast subscription, not a copy).
//! `cargo xtask bench` measures the same as its `two-caches` and `shared`
//! memory rows, with watch updates.
//!
//! [`SharedCaches`]: kubeset::runtime::SharedCaches
//!
//! `serve` loads a PodList into an embedded API server (its own process, so
//! the cache's peak RSS is measured alone) and prints its URL; `cache`
//! fills a store with a paginated list (pages of 500) and exits.
//!
//! Measured (release, 10,000 pods of `gen_podlist.py`, 118 MB of JSON,
//! loaded 2-core machine, `/usr/bin/time -v` maximum RSS): full 408 MB,
//! managedFields dropped 393 MB, metadata-only 54 MB. heaptrack puts the
//! full case's heap at ~37 KB a pod, of which ~28 KB are `Vec` buffers of
//! large inline structs (`Volume` is 3,208 bytes, `Container` 2,144,
//! `EnvVar` 360, and serde grows vectors by doubling, so `volumes: [3]`
//! holds 4 × 3,208 bytes), 2.4 KB the `Arc<Pod>` itself, ~2 KB B-tree
//! nodes (labels, annotations, resources) and ~1.5 KB strings. The
//! runtime's own share is a page in flight: list pages stay raw JSON and
//! are decoded one object at a time.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kubeset::api::core::v1::Pod;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::runtime::{
    InitialList, StoreConfig, WatcherConfig, Writer, metadata_watcher, reflector, watcher,
};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

async fn serve(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let list: Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let server = TestServer::builder().start().await?;
    let namespaces: BTreeSet<String> = items
        .iter()
        .filter_map(|p| p.pointer("/metadata/namespace").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    for ns in namespaces {
        let _ = server
            .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    }
    let n = items.len();
    for mut pod in items {
        pod["apiVersion"] = json!("v1");
        pod["kind"] = json!("Pod");
        if let Some(meta) = pod["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
            meta.remove("uid");
        }
        server.create(pod)?;
    }
    println!("{} ({n} pods)", server.url());
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

async fn cache(url: &str, mode: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::new(
        RestClient::new(RestConfig::new(url).with_qps_burst(-1.0, 0))?,
        "default",
    );
    let api: Api<Pod> = Api::all(client);
    let config = WatcherConfig::default().initial_list(InitialList::Paginated);
    let started = Instant::now();
    let len = match mode {
        // Two controllers' caches of all Pods: each its own, or one shared.
        "two-caches" | "shared" => {
            let caches = kubeset::runtime::SharedCaches::new();
            let mut stores = Vec::new();
            let mut streams = Vec::new();
            for _ in 0..2 {
                let cache = if mode == "shared" {
                    caches.get(api.clone(), config.clone(), StoreConfig::new())
                } else {
                    kubeset::runtime::SharedCache::start(
                        api.clone(),
                        config.clone(),
                        StoreConfig::new(),
                        1024,
                    )
                };
                stores.push(cache.store());
                streams.push(Box::pin(cache.subscribe()));
            }
            for store in &stores {
                store.wait_until_ready().await?;
            }
            println!(
                "{mode}: {} caches running",
                if mode == "shared" { caches.len() } else { 2 }
            );
            stores.iter().map(|s| s.len()).sum()
        }
        "metadata" => {
            let writer = Writer::new(StoreConfig::new().drop_managed_fields());
            let store = writer.store();
            let mut events = Box::pin(reflector(writer, metadata_watcher(api, config)));
            while !store.is_ready() {
                events.next().await;
            }
            store.len()
        }
        _ => {
            let store_config = if mode == "no-managed-fields" {
                StoreConfig::new().drop_managed_fields()
            } else {
                StoreConfig::new()
            };
            let writer = Writer::new(store_config);
            let store = writer.store();
            let mut events = Box::pin(reflector(writer, watcher(api, config)));
            while !store.is_ready() {
                events.next().await;
            }
            store.len()
        }
    };
    println!("{mode}: {len} objects cached in {:?}", started.elapsed());
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(args.get(2).map_or("podlist_10k.json", String::as_str)).await,
        Some("cache") => {
            let url = args.get(2).ok_or("cache needs a URL")?;
            cache(url, args.get(3).map_or("full", String::as_str)).await
        }
        _ => Err(
            "usage: cache_pods serve PODLIST.json | cache URL [full|no-managed-fields|metadata|two-caches|shared]"
                .into(),
        ),
    }
}
