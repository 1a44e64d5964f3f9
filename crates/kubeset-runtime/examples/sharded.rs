//! A sharded operator: run it as several processes and they split the
//! ConfigMaps labelled `sharded=yes` of a namespace between them.
//!
//! ```sh
//! # against the cluster of the current kubeconfig, namespace default:
//! cargo run -p kubeset-runtime --features shard --example sharded -- replica-a &
//! cargo run -p kubeset-runtime --features shard --example sharded -- replica-b &
//! kubectl create configmap demo --from-literal=want=1 && kubectl label configmap demo sharded=yes
//! kubectl get leases -l shard.kubeset.dev/group=sharded-example   # who holds what
//! ```
//!
//! Each reconcile writes `done=<want>` and `by=<replica>` annotations
//! after 20 ms of pretend work. SIGTERM or Ctrl-C releases the shards at
//! once; `kill -9` leaves them to expire (lease duration). The runtime's
//! `tests/shard.rs` runs the same operator as several processes and checks
//! that no two reconciles of an object overlapped.

use std::sync::Arc;
use std::time::Duration;

use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PatchParams;
use kubeset_client::rest::RestClient;
use kubeset_client::{Api, Client, Patch};
use kubeset_runtime::shard::{ShardConfig, ShardFilter, Sharder};
use kubeset_runtime::{Action, Controller, WatcherConfig};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
#[error("patching {name}")]
struct Failed {
    name: String,
    #[source]
    source: kubeset_client::Error,
}

async fn reconcile(
    cm: Arc<ConfigMap>,
    ctx: Arc<(Api<ConfigMap>, String)>,
) -> Result<Action, Failed> {
    let (api, me) = &*ctx;
    let name = cm.metadata.name.clone().unwrap_or_default();
    let want = cm
        .data
        .as_ref()
        .and_then(|d| d.get("want"))
        .cloned()
        .unwrap_or_default();
    let done = cm.metadata.annotations.as_ref().and_then(|a| a.get("done"));
    if done == Some(&want) {
        return Ok(Action::await_change());
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let patch = serde_json::json!({"metadata": {"annotations": {"done": want, "by": me}}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Failed { name, source })?;
    Ok(Action::await_change())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .init();
    let identity = std::env::args()
        .nth(1)
        .ok_or("usage: sharded <replica-name>")?;
    // The Leases need more than client-go's default 5 requests/s (see the
    // "Load" section of kubeset_runtime::shard).
    let config = kubeset_client::Config::infer().await?;
    let rest = config.rest_config()?.with_qps_burst(50.0, 100);
    let client = Client::new(RestClient::new(rest)?, config.default_namespace.clone());
    let namespace = client.default_namespace().to_owned();
    let sharder = Sharder::new(
        client.clone(),
        ShardConfig::new(&namespace, "sharded-example", &identity),
    )?;
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let stop = CancellationToken::new();
    // On Kubernetes 1.36+ with ShardedListAndWatch on, the API server
    // sends each replica only its shards' objects; elsewhere every replica
    // caches everything and filters here.
    let controller = Controller::new_sharded(
        api.clone(),
        WatcherConfig::default().labels("sharded=yes"),
        sharder.gate(),
        ShardFilter::Auto,
    )
    .graceful_shutdown_on(stop.clone().cancelled_owned());
    let store = controller.store();
    // Join only with a synced cache.
    let sharder = sharder.ready_after(async move { store.wait_until_ready().await.unwrap_or(()) });
    let sharder = tokio::spawn(sharder.run(stop.clone().cancelled_owned()));
    let on_signal = stop.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        on_signal.cancel();
    });
    controller
        .run_until_shutdown(reconcile, Arc::new((api, identity)))
        .await;
    sharder.await?;
    Ok(())
}
