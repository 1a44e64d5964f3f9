//! One replica of the sharded example operator: a [`Sharder`] and a
//! ConfigMap controller whose reconcile does `work` of pretend I/O, then
//! writes `done=<want>` and `by=<replica>` back.
//!
//! One copy, three users: the example's `main.rs`, the runtime's
//! `tests/shard.rs` (its replica processes) and through the example's
//! binary the bench row `cargo xtask bench --only shard`.
//!
//! - With a span log, every reconcile that does work appends
//!   `start <id> <replica> <name> <want> <ns>` and, from a drop guard (so
//!   also when it is cancelled), `end <id> <ns>`; `spans.rs` reads them.
//! - SIGUSR1 prints one JSON line to stdout: the cache's objects, their
//!   estimated bytes (`kubeset_runtime::memory::estimate`, the walk
//!   `StoreConfig::count_memory` counts) and the shards held.
//! - SIGTERM or Ctrl-C stops it gracefully (shards released at once);
//!   `kill -9` leaves the shards to expire.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PatchParams;
use kubeset_client::{Api, Client, Patch};
use kubeset_runtime::shard::{ShardConfig, ShardError, ShardFilter, ShardGate, Sharder};
use kubeset_runtime::{Action, Controller, Store, WatcherConfig};
use tokio_util::sync::CancellationToken;

/// What one replica runs.
pub struct Settings {
    /// This replica's identity (unique among the live replicas).
    pub identity: String,
    /// Namespace of the ConfigMaps and the Leases.
    pub namespace: String,
    /// The Lease group (the controller's name).
    pub group: String,
    /// Label selector of the ConfigMaps, if any.
    pub labels: Option<String>,
    /// Virtual shards.
    pub shards: u32,
    /// Lease duration, renew deadline, retry period.
    pub durations: (Duration, Duration, Duration),
    /// Where the shard filter runs.
    pub filter: ShardFilter,
    /// Reconciles at once.
    pub concurrency: usize,
    /// The pretend I/O of a reconcile.
    pub work: Duration,
    /// The span log, if any.
    pub span_log: Option<PathBuf>,
}

/// Nanoseconds since the epoch (the span log's clock: one machine).
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// Appends whole lines to the span log (one write each).
#[derive(Clone)]
struct Log(Arc<Mutex<std::fs::File>>);

impl Log {
    fn line(&self, s: &str) {
        let mut f = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = f.write_all(format!("{s}\n").as_bytes());
    }
}

/// Writes the end line when the reconcile finishes or is cancelled.
struct EndLine {
    log: Log,
    id: String,
}

impl Drop for EndLine {
    fn drop(&mut self) {
        self.log.line(&format!("end {} {}", self.id, now_ns()));
    }
}

struct Ctx {
    api: Api<ConfigMap>,
    identity: String,
    work: Duration,
    log: Option<Log>,
    seq: AtomicU64,
}

/// A failed write of a reconcile.
#[derive(Debug, thiserror::Error)]
#[error("patching {name} failed")]
pub struct ReconcileFailed {
    name: String,
    #[source]
    source: kubeset_client::Error,
}

async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, ReconcileFailed> {
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
    let _end = ctx.log.as_ref().map(|log| {
        let n = ctx.seq.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}#{n}", ctx.identity);
        log.line(&format!(
            "start {id} {} {name} {want} {}",
            ctx.identity,
            now_ns()
        ));
        EndLine {
            log: log.clone(),
            id,
        }
    });
    tokio::time::sleep(ctx.work).await;
    let patch =
        serde_json::json!({"metadata": {"annotations": {"done": want, "by": ctx.identity}}});
    ctx.api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| ReconcileFailed { name, source })?;
    Ok(Action::await_change())
}

/// Why a replica could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The shard settings were refused.
    #[error("shard settings")]
    Shard {
        /// Why.
        #[source]
        source: ShardError,
    },
    /// The span log did not open.
    #[error("opening the span log {path}")]
    Log {
        /// The path tried.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A signal handler could not be installed.
    #[error("installing a signal handler")]
    Signal {
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// On SIGUSR1, one JSON line to stdout: the cache and the shards held.
fn print_stats_on_usr1(store: Store<ConfigMap>, gate: ShardGate) -> Result<(), ReplicaError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut usr1 =
        signal(SignalKind::user_defined1()).map_err(|source| ReplicaError::Signal { source })?;
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let objects = store.state();
            let bytes: u64 = objects
                .iter()
                .map(|o| kubeset_runtime::memory::estimate(&**o))
                .sum();
            let line = serde_json::json!({
                "objects": objects.len(),
                "bytes": bytes,
                "shards": gate.held().len(),
            });
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    });
    Ok(())
}

/// Runs one replica until SIGTERM or Ctrl-C.
pub async fn run(client: Client, settings: Settings) -> Result<(), ReplicaError> {
    let log = match &settings.span_log {
        Some(path) => Some(Log(Arc::new(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| ReplicaError::Log {
                    path: path.clone(),
                    source,
                })?,
        )))),
        None => None,
    };
    let (lease, renew, retry) = settings.durations;
    let config = ShardConfig::new(&settings.namespace, &settings.group, &settings.identity)
        .shards(settings.shards)
        .durations(lease, renew, retry);
    let sharder =
        Sharder::new(client.clone(), config).map_err(|source| ReplicaError::Shard { source })?;
    let api: Api<ConfigMap> = Api::namespaced(client, &settings.namespace);
    let mut watch = WatcherConfig::default();
    if let Some(labels) = &settings.labels {
        watch = watch.labels(labels);
    }
    let stop = CancellationToken::new();
    let controller = Controller::new_sharded(api.clone(), watch, sharder.gate(), settings.filter)
        .concurrency(settings.concurrency)
        .graceful_shutdown_on(stop.clone().cancelled_owned());
    let store = controller.store();
    print_stats_on_usr1(store.clone(), sharder.gate())?;
    // Join only with a synced cache.
    let sharder = sharder.ready_after(async move { store.wait_until_ready().await.unwrap_or(()) });
    let mut ready = sharder.ready();
    let sharder = tokio::spawn(sharder.run(stop.clone().cancelled_owned()));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| ReplicaError::Signal { source })?;
    let on_signal = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        on_signal.cancel();
    });
    tokio::spawn(async move {
        if ready.wait_for(|r| *r).await.is_ok() {
            tracing::info!("replica ready");
        }
    });
    let ctx = Arc::new(Ctx {
        api,
        identity: settings.identity,
        work: settings.work,
        log,
        seq: AtomicU64::new(0),
    });
    controller.run_until_shutdown(reconcile, ctx).await;
    let _ = sharder.await;
    Ok(())
}
