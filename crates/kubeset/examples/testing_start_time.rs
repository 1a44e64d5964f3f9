//! How long a test waits for its cluster: an embedded API server started
//! through `kubeset::testing`, a client, 10 CRDs created over HTTP and each
//! `Established`, and the first list of every new kind — the set-up an
//! envtest suite spends seconds on.
//!
//! `cargo run -p kubeset --features testing --example testing_start_time [ROUNDS]`
//! (add `--release` for an optimised build; `cargo test` runs debug).

use std::time::{Duration, Instant};

use kubeset::Api;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::{ListParams, PostParams};
use kubeset::testing::{TestServer, until, wait_for};
use serde_json::{Value, json};

/// CRDs per server.
const CRDS: usize = 10;

/// A CRD of the size operators ship: a spec with nested objects, a
/// `listType=map` list, enums, bounds and a status subresource.
fn crd(i: usize) -> Value {
    let kind = format!("Widget{i}");
    let plural = format!("widget{i}s");
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.bench.kubeset.dev")},
        "spec": {
            "group": "bench.kubeset.dev",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer", "minimum": 1, "maximum": 100},
                        "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
                        "selector": {"type": "object", "additionalProperties": {"type": "string"}},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string", "maxLength": 63},
                                "port": {"type": "integer"}}}},
                        "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "boolean"},
                        "conditions": {"type": "array", "items": {"type": "object",
                            "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}}}}}}
            }]
        }
    })
}

/// One start: the server, a client, the CRDs established, one list each.
async fn start_once() -> Result<(Duration, TestServer), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let server = TestServer::start().await?;
    let client = server.client()?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for i in 0..CRDS {
        let crd: CustomResourceDefinition = serde_json::from_value(crd(i))?;
        crds.create(&PostParams::default(), &crd).await?;
    }
    for i in 0..CRDS {
        let established = until("is Established", |c: Option<&CustomResourceDefinition>| {
            c.and_then(|c| c.status.as_ref()?.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                })
        });
        wait_for(&crds, &format!("widget{i}s.bench.kubeset.dev"), established).await?;
        let ar = ApiResource {
            group: "bench.kubeset.dev".into(),
            version: "v1".into(),
            kind: format!("Widget{i}"),
            plural: format!("widget{i}s"),
            namespaced: true,
        };
        let api: Api<DynamicObject> = Api::dynamic(client.clone(), &ar, Some("default"));
        api.list(&ListParams::default()).await?;
    }
    Ok((t.elapsed(), server))
}

/// The server alone: started and the 10 CRDs installed in its store
/// (`register_crd`, no HTTP), the first request answered.
async fn start_installed() -> Result<(Duration, TestServer), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let server = TestServer::start().await?;
    for i in 0..CRDS {
        server.register_crd(crd(i))?;
    }
    let client = server.client()?;
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let listed = crds.list(&ListParams::default()).await?;
    if listed.items.len() != CRDS {
        return Err(format!("{} CRDs listed, not {CRDS}", listed.items.len()).into());
    }
    Ok((t.elapsed(), server))
}

/// `min / median / p90 / max` of `times`, in milliseconds.
fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let n = times.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "min {:.1} ms, median {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        ms(times[0]),
        ms(times[n / 2]),
        ms(times[(n * 9 / 10).min(n - 1)]),
        ms(times[n - 1]),
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mut installed = Vec::with_capacity(rounds);
    let mut over_http = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (took, server) = start_installed().await?;
        installed.push(took);
        server.shutdown().await;
        let (took, server) = start_once().await?;
        over_http.push(took);
        server.shutdown().await;
    }
    println!(
        "{rounds} rounds, {build} build\n\
         server started + {CRDS} CRDs installed + first list answered: {}\n\
         server + client + {CRDS} CRDs created over HTTP, each Established, a list of each: {}",
        summary(&mut installed),
        summary(&mut over_http),
    );
    Ok(())
}
