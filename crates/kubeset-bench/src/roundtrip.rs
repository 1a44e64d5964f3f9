//! GET of a small ConfigMap on loopback keep-alive against the embedded
//! API server: sequential latency and 64-way concurrent throughput, for
//! kubeset's `Api<ConfigMap>::get` and kube-rs's, and two transport floors
//! (a plain `reqwest::Client` and hyper-util's legacy client) doing the same
//! GET and decoding the body into the same `ConfigMap` type.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::header::{ACCEPT, HeaderValue};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use kubeset::api::core::v1::ConfigMap;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PostParams;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;

use crate::proc::self_cpu_s;
use crate::stats::{median, percentile};
use crate::{Error, Record};

/// Namespace of the object every client reads.
pub const NAMESPACE: &str = "default";
/// Name of the object every client reads.
pub const NAME: &str = "bench";

/// How many requests to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Sequential requests (latency samples), after as many warm-up ones.
    pub sequential: usize,
    /// Concurrent workers.
    pub concurrency: usize,
    /// Requests in the concurrent phase (over all workers).
    pub total: usize,
}

/// Start the embedded API server (one plain-HTTP replica on `port`, 0 for
/// any) and create the ConfigMap the clients read.
pub async fn serve(port: u16) -> Result<TestServer, Error> {
    let server = TestServer::builder()
        .base_port(port)
        .start()
        .await
        .map_err(|source| Error::Server { source })?;
    create_configmap(&server).await?;
    Ok(server)
}

/// Create the ConfigMap every client reads (three data keys).
pub async fn create_configmap(server: &TestServer) -> Result<(), Error> {
    let cms = kubeset_api(&server.url())?;
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(NAME.to_owned()),
            namespace: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(
            [("mode", "bench"), ("replicas", "3"), ("log-level", "info")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm)
        .await
        .map_err(|source| Error::Kubeset { source })?;
    Ok(())
}

fn kubeset_api(url: &str) -> Result<Api<ConfigMap>, Error> {
    let rest = RestClient::new(RestConfig::new(url).with_qps_burst(-1.0, 0))
        .map_err(|source| Error::Kubeset { source })?;
    Ok(Api::namespaced(Client::new(rest, NAMESPACE), NAMESPACE))
}

fn kube_api(url: &str) -> Result<kube::Api<k8s_openapi::api::core::v1::ConfigMap>, Error> {
    let client = crate::kube_client(url)?;
    Ok(kube::Api::namespaced(client, NAMESPACE))
}

async fn measure<F, Fut>(name: &str, plan: Plan, get: F) -> Result<Vec<Record>, Error>
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send,
{
    for _ in 0..plan.sequential.clamp(1, 200) {
        get().await?;
    }
    let mut lat = Vec::with_capacity(plan.sequential);
    let cpu = self_cpu_s();
    let start = Instant::now();
    for _ in 0..plan.sequential.max(1) {
        let t = Instant::now();
        get().await?;
        lat.push(t.elapsed().as_secs_f64());
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut seq = Record::timed("get-sequential", name, lat.len() as u64, vec![elapsed]);
    seq.p50_us = Some(median(&lat) * 1e6);
    seq.p99_us = Some(percentile(&lat, 99.0) * 1e6);
    seq.cpu_s = cpu_since(cpu);

    let next = Arc::new(AtomicUsize::new(0));
    let cpu = self_cpu_s();
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(plan.concurrency);
    for _ in 0..plan.concurrency.max(1) {
        let (get, next, total) = (get.clone(), next.clone(), plan.total);
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                get().await?;
            }
            Ok::<(), Error>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|source| Error::Join { source })??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let mut conc = Record::timed("get-concurrent", name, plan.total as u64, vec![elapsed]);
    conc.cpu_s = cpu_since(cpu);
    Ok(vec![seq, conc])
}

fn cpu_since(before: Option<f64>) -> Option<f64> {
    Some(self_cpu_s()? - before?)
}

/// The Accept header kubeset sends; the transport floors send it too.
const ACCEPT_JSON: &str = "application/json, */*";

/// The URL of the object every client reads.
fn object_url(url: &str) -> String {
    format!(
        "{}/api/v1/namespaces/{NAMESPACE}/configmaps/{NAME}",
        url.trim_end_matches('/')
    )
}

/// What a transport floor does with a response: a 2xx status, then the
/// body decoded into kubeset's `ConfigMap` as kubeset decodes it.
fn decode(peer: Peer, status: http::StatusCode, body: &[u8]) -> Result<(), Error> {
    if !status.is_success() {
        return Err(Error::Status {
            peer: peer.name(),
            status: status.as_u16(),
        });
    }
    kubeset::rest::from_json::<ConfigMap>(body)
        .map(drop)
        .map_err(|source| Error::Json {
            peer: peer.name(),
            source,
        })
}

/// The clients measured by [`run`]: two Kubernetes clients and two
/// transport floors (no Kubernetes client does less than its HTTP stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// kubeset's `Api<ConfigMap>::get`, rate limiter off.
    Kubeset,
    /// kube-rs's `kube::Api<ConfigMap>::get`.
    KubeRs,
    /// Transport floor: a plain `reqwest::Client` (the reqwest build
    /// kubeset uses), URL parsed once.
    Reqwest,
    /// Transport floor: hyper-util's legacy client, HTTP/1 (`build_http`),
    /// URI parsed once.
    Hyper,
}

impl Peer {
    /// The name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Kubeset => "kubeset",
            Peer::KubeRs => "kube-rs",
            Peer::Reqwest => "reqwest",
            Peer::Hyper => "hyper",
        }
    }

    /// The peer named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [Peer::Kubeset, Peer::KubeRs, Peer::Reqwest, Peer::Hyper]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// Measure one client against the server at `url` (which must hold the
/// ConfigMap [`serve`] creates). Records: `get-sequential` (p50/p99) and
/// `get-concurrent` (`items` requests in `median_s`), each with the CPU
/// time this process spent in that phase. Run each client in its own
/// process so that CPU times are its own.
pub async fn run(url: &str, peer: Peer, plan: Plan) -> Result<Vec<Record>, Error> {
    match peer {
        Peer::Kubeset => {
            let ours = kubeset_api(url)?;
            measure(peer.name(), plan, move || {
                let api = ours.clone();
                async move {
                    api.get(NAME)
                        .await
                        .map(drop)
                        .map_err(|source| Error::Kubeset { source })
                }
            })
            .await
        }
        Peer::KubeRs => {
            let theirs = kube_api(url)?;
            measure(peer.name(), plan, move || {
                let api = theirs.clone();
                async move {
                    api.get(NAME)
                        .await
                        .map(drop)
                        .map_err(|source| Error::Kube { source })
                }
            })
            .await
        }
        Peer::Reqwest => {
            // reqwest is built with `rustls-no-provider` (as kubeset uses
            // it); a plain client needs the process-wide provider. Err:
            // one is installed already, which is as good.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::builder()
                .build()
                .map_err(|source| Error::Reqwest { source })?;
            let url = client
                .get(object_url(url))
                .build()
                .map_err(|source| Error::Reqwest { source })?
                .url()
                .clone();
            let accept = HeaderValue::from_static(ACCEPT_JSON);
            measure(peer.name(), plan, move || {
                let request = client.get(url.clone()).header(ACCEPT, accept.clone());
                async move {
                    let resp = request
                        .send()
                        .await
                        .map_err(|source| Error::Reqwest { source })?;
                    let status = resp.status();
                    let body = resp
                        .bytes()
                        .await
                        .map_err(|source| Error::Reqwest { source })?;
                    decode(peer, status, &body)
                }
            })
            .await
        }
        Peer::Hyper => {
            let object = object_url(url);
            let uri: http::Uri = object.parse().map_err(|source| Error::BadUrl {
                url: object.clone(),
                source,
            })?;
            let client: HyperClient<_, Empty<Bytes>> =
                HyperClient::builder(TokioExecutor::new()).build_http();
            let accept = HeaderValue::from_static(ACCEPT_JSON);
            measure(peer.name(), plan, move || {
                let mut request = http::Request::new(Empty::new());
                *request.uri_mut() = uri.clone();
                request.headers_mut().insert(ACCEPT, accept.clone());
                let response = client.request(request);
                async move {
                    let resp = response
                        .await
                        .map_err(|source| Error::HyperClient { source })?;
                    let status = resp.status();
                    let body = resp
                        .into_body()
                        .collect()
                        .await
                        .map_err(|source| Error::Hyper { source })?
                        .to_bytes();
                    decode(peer, status, &body)
                }
            })
            .await
        }
    }
}
