//! A realistic operator on kubeset: a custom resource (`Greeter`) owning a
//! ConfigMap and a Secret, a finalizer with external cleanup, status
//! conditions, aggregated Events, leader election, and a `/metrics`
//! endpoint. The logic is in `operator.rs`; the suite runs it against a
//! real kube-apiserver (`tests/tests/suite/toolkit_operator.rs`).
//!
//! Against the cluster of your kubeconfig (creates the CRD if missing):
//!
//! ```text
//! cargo run -p kubeset --features runtime,leader,events,metrics --example greeter -- [NAMESPACE] [METRICS_ADDR]
//! kubectl apply -f - <<<'{"apiVersion":"greeter.kubeset.dev/v1","kind":"Greeter","metadata":{"name":"hello"},"spec":{"greeting":"hi"}}'
//! curl -s localhost:9464/metrics | grep controller_runtime_reconcile_total
//! ```
//!
//! Run it twice (a second `METRICS_ADDR`, and `POD_NAME` set to tell them
//! apart) and the second is a warm standby: its watches and caches run
//! from the start, only reconciling waits for the Lease
//! (`Controller::leader_elected`), so after a `kill -9` of the leader it
//! takes over in one Lease expiry (15 s by default) without relisting.

// Some of its helpers are used only by the suite's test.
#[allow(dead_code)]
mod operator;

use std::sync::Arc;

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::params::PostParams;
use kubeset::runtime::metrics::Metrics;
use kubeset::runtime::metrics::prometheus_client::registry::Registry;
use kubeset::runtime::{LeaseConfig, RetryBackoff, WatcherConfig};
use kubeset::{Api, CustomResourceExt as _};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let namespace = args.next().unwrap_or_else(|| "default".to_owned());
    let metrics_addr = args.next().unwrap_or_else(|| "127.0.0.1:9464".to_owned());
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let client = operator::client_with_metrics(&kubeset::Config::infer().await?, &metrics)?;

    let crds: Api<CustomResourceDefinition> = Api::cluster(client.clone());
    match crds
        .create(&PostParams::default(), &operator::Greeter::crd())
        .await
    {
        Ok(_) => println!("created the Greeter CRD"),
        Err(e) if e.is_already_exists() => {}
        Err(e) => return Err(e.into()),
    }

    let listener = tokio::net::TcpListener::bind(&metrics_addr).await?;
    println!("metrics on http://{}/metrics", listener.local_addr()?);
    tokio::spawn(kubeset::runtime::metrics::serve_listener(
        listener,
        Arc::new(registry),
    ));

    let identity = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("greeter-{}", std::process::id()));
    let options = operator::Options {
        retry: RetryBackoff::default(),
        watcher: WatcherConfig::default(),
        metrics: metrics.controller("greeter"),
    };
    let ctx = Arc::new(operator::Context::new(client));
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    operator::run(
        ctx,
        &namespace,
        options,
        LeaseConfig::new(&namespace, "greeter-operator", &identity),
        stop,
        |report| match report {
            Ok((obj, action)) => println!("reconciled {obj}: {action:?}"),
            Err(e) => {
                let mut msg = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    msg.push_str(&format!(": {s}"));
                    source = s.source();
                }
                eprintln!("{msg}");
            }
        },
    )
    .await;
    Ok(())
}
