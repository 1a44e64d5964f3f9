//! Writes per second of a Gateway API HTTPRoute through the embedded
//! server's store (no HTTP): `cargo run --release -p kubeset-testserver
//! --example admission_cost -- <httproutes CRD yaml> [N]`.

use std::time::Instant;

use kubeset_testserver::TestServer;
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("the HTTPRoute CRD manifest");
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let crd: Value =
        serde_norway::from_str(&std::fs::read_to_string(path).expect("read")).expect("yaml");
    let s = TestServer::start().await.expect("start");
    s.register_crd(crd).expect("register");
    let route = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"parentRefs": [{"name": "gw", "sectionName": "https"}],
            "hostnames": ["a.example.com", "b.example.com"],
            "rules": [
                {"matches": [{"path": {"type": "PathPrefix", "value": "/api"}, "headers": [{"name": "x-v", "value": "2"}]}],
                 "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"add": [{"name": "x-a", "value": "1"}]}}],
                 "backendRefs": [{"name": "api", "port": 8080, "weight": 90}, {"name": "api-canary", "port": 8080, "weight": 10}]},
                {"backendRefs": [{"name": "web", "port": 80}]}]}});
    for round in 0..3 {
        let t = Instant::now();
        for i in 0..n {
            let mut r = route.clone();
            r["metadata"]["name"] = json!(format!("r{round}-{i}"));
            s.create(r).expect("create");
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "round {round}: {n} HTTPRoute creates in {secs:.3} s: {:.0}/s, {:.1} µs each",
            n as f64 / secs,
            secs * 1e6 / n as f64
        );
    }
    s.shutdown().await;
}
