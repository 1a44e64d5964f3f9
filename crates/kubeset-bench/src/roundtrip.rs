//! GET of a small ConfigMap on loopback keep-alive against the embedded
//! API server: sequential latency and 64-way concurrent throughput, for
//! kubeset's `Api<ConfigMap>::get` and kube-rs's.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

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
    let uri: http::Uri = url.parse().map_err(|source| Error::BadUrl {
        url: url.to_owned(),
        source,
    })?;
    let client =
        kube::Client::try_from(kube::Config::new(uri)).map_err(|source| Error::Kube { source })?;
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

/// The Rust clients measured by [`run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// kubeset's `Api<ConfigMap>::get`, rate limiter off.
    Kubeset,
    /// kube-rs's `kube::Api<ConfigMap>::get`.
    KubeRs,
}

impl Peer {
    /// The name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Kubeset => "kubeset",
            Peer::KubeRs => "kube-rs",
        }
    }

    /// The peer named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [Peer::Kubeset, Peer::KubeRs]
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
    }
}
