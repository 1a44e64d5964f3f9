//! The admission-cost row of `cargo xtask bench`: writes per second of a
//! Gateway API HTTPRoute (its CRD's schema and CEL rules checked on every
//! create) over HTTP, on the embedded server with and without the CRD's
//! CEL rules and on a real kube-apiserver (realkube, when
//! `KUBESET_REALKUBE_ENV` names one); and the embedded server's start time
//! with 10 CRDs installed. Prints a JSON array of records on stdout.
//!
//! `cargo run --release -p kubeset-testserver --example admission_bench --
//! CRD_DIR WRITES ROUNDS` (`CRD_DIR`: the shared CRDs, HTTPRoute's among
//! them).

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

/// Requests in flight at once, on every server.
const CONCURRENCY: usize = 8;
/// CRDs the start time is measured with.
const START_CRDS: usize = 10;
/// The HTTPRoute CRD's file in the CRD directory.
const HTTPROUTE: &str = "httproutes.gateway.networking.k8s.io.yaml";

type Error = Box<dyn std::error::Error>;

/// A route exercising the rules a real one does: matches, a filter,
/// weighted backends, two hostnames.
fn route(name: &str) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": name},
        "spec": {"parentRefs": [{"name": "gw", "sectionName": "https"}],
            "hostnames": ["a.example.com", "b.example.com"],
            "rules": [
                {"matches": [{"path": {"type": "PathPrefix", "value": "/api"},
                    "headers": [{"name": "x-v", "value": "2"}]}],
                 "filters": [{"type": "RequestHeaderModifier",
                    "requestHeaderModifier": {"add": [{"name": "x-a", "value": "1"}]}}],
                 "backendRefs": [{"name": "api", "port": 8080, "weight": 90},
                    {"name": "api-canary", "port": 8080, "weight": 10}]},
                {"backendRefs": [{"name": "web", "port": 80}]}]}})
}

fn read_crd(path: &Path) -> Result<Value, Error> {
    Ok(serde_norway::from_str(&std::fs::read_to_string(path)?)?)
}

/// `crd` without any `x-kubernetes-validations`.
fn without_rules(mut crd: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("x-kubernetes-validations");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut crd);
    crd
}

/// Creates `n` routes named `{prefix}-{i}` at `collection`, `CONCURRENCY`
/// at a time: writes per second. Every create must answer 201.
async fn writes(
    client: &reqwest::Client,
    token: Option<&str>,
    collection: &str,
    prefix: &str,
    n: usize,
) -> Result<f64, Error> {
    let started = Instant::now();
    let results: Vec<Result<(), String>> = futures::stream::iter(0..n)
        .map(|i| async move {
            let mut req = client
                .post(collection)
                .json(&route(&format!("{prefix}-{i}")));
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            let resp = req.send().await.map_err(|e| chain(&e))?;
            // The body is always read: over HTTP/2 a response dropped
            // unread resets its stream, and h2 ends a connection after
            // 1,024 such resets ("too_many_internal_resets").
            let code = resp.status().as_u16();
            let body = resp.text().await.map_err(|e| chain(&e))?;
            match code {
                201 => Ok(()),
                code => Err(format!("{code}: {body}")),
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
        return Err(format!("a create failed: {e}").into());
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// Writes per second on a fresh embedded server serving `crd`, the median
/// of `rounds`.
async fn embedded(crd: &Value, n: usize, rounds: usize) -> Result<f64, Error> {
    let s = TestServer::start().await?;
    s.register_crd(crd.clone())?;
    let client = common::client();
    let url = format!(
        "{}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes",
        s.url()
    );
    writes(&client, None, &url, "warm", n.min(200)).await?;
    let mut rates = Vec::new();
    for r in 0..rounds {
        rates.push(writes(&client, None, &url, &format!("r{r}"), n).await?);
    }
    s.shutdown().await;
    Ok(median(rates))
}

/// Writes per second on the realkube instance, in a namespace of its own
/// (deleted after), the median of `rounds`; and its version.
async fn real(
    env: &std::collections::BTreeMap<String, String>,
    crd: &Value,
    n: usize,
    rounds: usize,
) -> Result<(f64, String), Error> {
    let ca = std::fs::read_to_string(&env["KUBESET_REALKUBE_CA"])?;
    let client = common::tls_client(&ca, common::TIMEOUT);
    let token = env["KUBESET_REALKUBE_ADMIN_TOKEN"].as_str();
    let base = common::realkube_server(env);
    let send = |method: reqwest::Method, url: String, body: Option<Value>| {
        let mut req = client.request(method, url).bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send()
    };
    let crds = format!("{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let code = send(reqwest::Method::POST, crds, Some(crd.clone()))
        .await?
        .status();
    if !(code.is_success() || code.as_u16() == 409) {
        return Err(format!("creating the HTTPRoute CRD: {code}").into());
    }
    let ns = format!("admission-bench-{}", std::process::id());
    send(
        reqwest::Method::POST,
        format!("{base}/api/v1/namespaces"),
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
    )
    .await?;
    let url = format!("{base}/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/httproutes");
    // The real server serves a new CRD within seconds: a hang guard.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !send(reqwest::Method::GET, url.clone(), None)
        .await?
        .status()
        .is_success()
    {
        if Instant::now() > deadline {
            return Err("HTTPRoutes are not served after 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    writes(&client, Some(token), &url, "warm", n.min(200)).await?;
    let mut rates = Vec::new();
    for r in 0..rounds {
        rates.push(writes(&client, Some(token), &url, &format!("r{r}"), n).await?);
    }
    send(
        reqwest::Method::DELETE,
        format!("{base}/api/v1/namespaces/{ns}"),
        None,
    )
    .await?;
    let version: Value = send(reqwest::Method::GET, format!("{base}/version"), None)
        .await?
        .json()
        .await?;
    let version = version["gitVersion"]
        .as_str()
        .unwrap_or("unknown")
        .to_owned();
    Ok((median(rates), version))
}

/// `START_CRDS` CRDs: those of `dir`, then copies of them in other groups
/// until there are enough.
fn start_crds(dir: &Path) -> Result<Vec<Value>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let shared: Vec<Value> = files
        .iter()
        .map(|f| read_crd(f))
        .collect::<Result<_, _>>()?;
    if shared.is_empty() {
        return Err(format!("no CRDs in {}", dir.display()).into());
    }
    let mut out = Vec::new();
    for i in 0..START_CRDS {
        let mut crd = shared[i % shared.len()].clone();
        if i >= shared.len() {
            let group = format!(
                "copy{i}.{}",
                crd["spec"]["group"].as_str().unwrap_or_default()
            );
            let plural = crd["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            crd["metadata"]["name"] = json!(format!("{plural}.{group}"));
            crd["spec"]["group"] = json!(group);
        }
        out.push(crd);
    }
    Ok(out)
}

/// Milliseconds from nothing to a server with `crds` installed that has
/// answered a first request, each of `rounds`, in order: the first
/// compiles the CRDs' schemas, the later ones find them compiled (the
/// process's cache, as in a test binary whose tests each start a server).
async fn start_times(crds: &[Value], rounds: usize) -> Result<Vec<f64>, Error> {
    let client = common::client();
    let mut out = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let s = TestServer::start().await?;
        for crd in crds {
            s.register_crd(crd.clone())?;
        }
        let url = format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            s.url()
        );
        let code = client.get(url).send().await?.status();
        out.push(t.elapsed().as_secs_f64() * 1e3);
        s.shutdown().await;
        if !code.is_success() {
            return Err(format!("listing CRDs: {code}").into());
        }
    }
    Ok(out)
}

/// `e` and its causes, `: `-separated (reqwest's own message is only
/// "error sending request").
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: admission_bench CRD_DIR WRITES ROUNDS";
    let dir = PathBuf::from(args.first().ok_or(usage)?);
    let n: usize = args.get(1).ok_or(usage)?.parse()?;
    let rounds: usize = args.get(2).ok_or(usage)?.parse()?;
    // First, while nothing is compiled in the process: the first start
    // pays for the schemas and rules.
    let mut times = start_times(&start_crds(&dir)?, rounds.max(10) * 2).await?;
    let crd = read_crd(&dir.join(HTTPROUTE))?;
    let mut records = vec![
        json!({"bench": "admission-writes", "server": "embedded", "rules": true,
            "writes": n, "rounds": rounds, "concurrency": CONCURRENCY,
            "writes_per_sec": embedded(&crd, n, rounds).await?}),
        json!({"bench": "admission-writes", "server": "embedded", "rules": false,
            "writes": n, "rounds": rounds, "concurrency": CONCURRENCY,
            "writes_per_sec": embedded(&without_rules(crd.clone()), n, rounds).await?}),
    ];
    if let Some(env) = common::realkube_env() {
        let (rate, version) = real(&env, &crd, n, rounds).await?;
        records.push(
            json!({"bench": "admission-writes", "server": "kube-apiserver", "rules": true,
            "writes": n, "rounds": rounds, "concurrency": CONCURRENCY,
            "version": version, "writes_per_sec": rate}),
        );
    }
    let first = times.remove(0);
    times.sort_by(f64::total_cmp);
    records.push(
        json!({"bench": "admission-start", "crds": START_CRDS, "rounds": times.len(),
        "first_ms": first, "min_ms": times[0], "median_ms": times[times.len() / 2],
        "p90_ms": times[(times.len() * 9 / 10).min(times.len() - 1)],
        "max_ms": times[times.len() - 1]}),
    );
    println!("{}", serde_json::to_string_pretty(&records)?);
    Ok(())
}
