//! Failover: the time from the death of the API server a kubeset client is
//! using to its next successful GET, with three replicas of the embedded
//! server. Two faults: `refused` (the replica closes its listener and
//! every connection) and `hung` (it accepts and reads but never answers,
//! also on open keep-alive connections).
//!
//! kube-rs and client-go have no failover across API servers: with one
//! endpoint they fail until it comes back, so they have no figure here.

use std::time::{Duration, Instant};

use kubeset::api::core::v1::ConfigMap;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client};
use kubeset_testserver::TestServer;

use crate::roundtrip::{NAME, NAMESPACE};
use crate::{Error, Record};

/// Replicas of the embedded server.
pub const REPLICAS: usize = 3;

/// The request budget of the client (kubeset's default, Patroni's read
/// timeout): spread over three endpoints it gives each 3.33 s, which is
/// how long a hung server holds a request.
pub const BUDGET: Duration = Duration::from_secs(10);

/// The two faults measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Connections refused (listener closed, open connections dropped).
    Refused,
    /// Requests accepted but never answered.
    Hung,
}

impl Fault {
    /// Its name in records.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Refused => "refused",
            Fault::Hung => "hung",
        }
    }
}

/// Measure `trials` failovers for each fault. Each trial: GETs succeed on
/// the endpoint the client prefers; that replica gets the fault; the time
/// from the fault to the end of the next successful GET is one sample;
/// the replica is brought back. Records: `failover` with `variant` the
/// fault, `samples_s` the trials.
pub async fn run(trials: usize) -> Result<Vec<Record>, Error> {
    let server = TestServer::builder()
        .replicas(REPLICAS)
        .start()
        .await
        .map_err(|source| Error::Server { source })?;
    crate::roundtrip::create_configmap(&server).await?;
    let urls = server.urls();
    let rest = RestClient::new(
        RestConfig::new(&urls[0])
            .with_endpoints(urls[1..].iter().cloned())
            .with_qps_burst(-1.0, 0)
            .with_request_deadline(BUDGET),
    )
    .map_err(|source| Error::Kubeset { source })?;
    let api: Api<ConfigMap> = Api::namespaced(Client::new(rest.clone(), NAMESPACE), NAMESPACE);
    let get = || async {
        api.get(NAME)
            .await
            .map(drop)
            .map_err(|source| Error::Kubeset { source })
    };

    let mut out = Vec::new();
    for fault in [Fault::Refused, Fault::Hung] {
        let mut samples = Vec::with_capacity(trials);
        for _ in 0..trials.max(1) {
            // Warm: keep-alive connections to the preferred endpoint.
            for _ in 0..20 {
                get().await?;
            }
            let preferred = rest.endpoints().into_iter().next().unwrap_or_default();
            let replica = server
                .replicas()
                .into_iter()
                .find(|r| r.url().trim_end_matches('/') == preferred.trim_end_matches('/'))
                .ok_or(Error::NoReplica { url: preferred })?;
            let faults = replica.faults();
            let start = Instant::now();
            match fault {
                Fault::Refused => faults.down().await,
                Fault::Hung => faults.hang(),
            }
            get().await?;
            samples.push(start.elapsed().as_secs_f64());
            faults.up().await.map_err(|source| Error::Io {
                path: "replica listener".into(),
                source,
            })?;
        }
        let mut r = Record::timed("failover", "kubeset", samples.len() as u64, samples);
        r.variant = Some(fault.name().to_owned());
        out.push(r);
    }
    server.shutdown().await;
    Ok(out)
}
