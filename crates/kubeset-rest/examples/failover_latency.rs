//! Failover latency against the embedded API server's replicas: the time
//! from the serving replica's death (refused; hung) to the next successful
//! request, and from a watch's server death to its next event. Also the
//! cost of reading each watch event's resourceVersion.
//!
//! `cargo run --release -p kubeset-rest --example failover_latency`

use std::time::{Duration, Instant};

use futures::StreamExt;
use kubeset_rest::{RestClient, RestConfig, WatchEvent, watch::resource_version};
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

const ROUNDS: usize = 10;

fn client(urls: &[String], budget: Duration) -> Result<RestClient, kubeset_rest::Error> {
    RestClient::new(
        RestConfig::new(urls[0].clone())
            .with_endpoints(urls[1..].iter().cloned())
            .with_request_deadline(budget)
            .with_qps_burst(-1.0, 0)
            .with_watch_idle_timeout(Duration::from_secs(1)),
    )
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (Some(min), Some(max)) = (samples.first(), samples.last()) else {
        return;
    };
    let median = samples[samples.len() / 2];
    println!(
        "{what}: n={} min {:.1} ms, median {:.1} ms, max {:.1} ms",
        samples.len(),
        ms(*min),
        ms(median),
        ms(*max)
    );
}

async fn get(c: &RestClient) -> Result<(), kubeset_rest::Error> {
    c.get().resource("namespaces").send_json::<Value>().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TestServer::builder()
        .replicas(2)
        .bookmark_interval(Duration::from_millis(200))
        .start()
        .await?;
    let urls = server.urls();
    let f0 = server.faults(0).ok_or("replica 0")?;

    // Refused: warm connection to replica 0, then it goes down.
    let mut refused = Vec::new();
    for _ in 0..ROUNDS {
        let c = client(&urls, Duration::from_secs(10))?;
        get(&c).await?;
        f0.down().await;
        let t = Instant::now();
        get(&c).await?;
        refused.push(t.elapsed());
        f0.up().await?;
    }
    report(
        "refused first node -> next success (budget 10 s, 2 nodes)",
        refused,
    );

    // Hung: replica 0 accepts and never answers; per-node timeout 1 s.
    let mut hung = Vec::new();
    for _ in 0..ROUNDS {
        let c = client(&urls, Duration::from_secs(2))?;
        get(&c).await?;
        f0.hang();
        let t = Instant::now();
        get(&c).await?;
        hung.push(t.elapsed());
        f0.up().await?;
    }
    report(
        "hung first node -> next success (budget 2 s, per-node 1 s)",
        hung,
    );

    // Watch: time from the serving replica's death to the next event.
    let mut watch_down = Vec::new();
    for round in 0..ROUNDS {
        let c = client(&urls, Duration::from_secs(10))?;
        let rv = server.resource_version().to_string();
        let mut w = c
            .get()
            .namespace("default")
            .resource("configmaps")
            .param("resourceVersion", &rv)
            .param("allowWatchBookmarks", "true")
            .param("watch", "true")
            .watch_resumable::<Value>()
            .await?;
        let serving = urls
            .iter()
            .position(|u| u == w.endpoint())
            .ok_or("serving replica")?;
        let faults = server.faults(serving).ok_or("faults")?;
        faults.down().await;
        let t = Instant::now();
        server.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("lat-{round}"), "namespace": "default"}}))?;
        loop {
            match w.next().await {
                Some(Ok(WatchEvent::Added(_))) => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Err("watch ended".into()),
            }
        }
        watch_down.push(t.elapsed());
        faults.up().await?;
    }
    report("watch: serving node down -> next event", watch_down);

    // resourceVersion of each event: a skipping parse of the same bytes.
    let pod = json!({"type": "MODIFIED", "object": {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "uid": "1b0c6f0e-9a0a-4d43-8d7e-0f6b1f1d2c3a",
            "resourceVersion": "123456789", "labels": {"app": "web", "tier": "frontend"},
            "annotations": {"note": "x".repeat(600)},
            "managedFields": (0..6).map(|i| json!({"manager": format!("m{i}"), "operation": "Update",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {}}}})).collect::<Vec<_>>()},
        "spec": {"containers": (0..3).map(|i| json!({"name": format!("c{i}"), "image": "registry.example/web:1.2.3",
            "env": (0..10).map(|j| json!({"name": format!("E{j}"), "value": "v".repeat(20)})).collect::<Vec<_>>(),
            "ports": [{"containerPort": 8080, "protocol": "TCP"}]})).collect::<Vec<_>>()},
        "status": {"phase": "Running", "podIP": "10.0.0.7"}}});
    let line = serde_json::to_vec(&pod)?;
    let iters = 20_000u32;
    let t = Instant::now();
    let mut n = 0usize;
    for _ in 0..iters {
        n += resource_version(&line).map_or(0, |rv| rv.len());
    }
    let rv_cost = t.elapsed() / iters;
    let t = Instant::now();
    for _ in 0..iters {
        let v: Value = serde_json::from_slice(&line)?;
        n += usize::from(v.is_object());
    }
    let full_cost = t.elapsed() / iters;
    println!(
        "resourceVersion read: {:.2} us per {} B event vs {:.2} us for a full serde_json::Value decode ({n})",
        rv_cost.as_secs_f64() * 1e6,
        line.len(),
        full_cost.as_secs_f64() * 1e6
    );
    server.shutdown().await;
    Ok(())
}
