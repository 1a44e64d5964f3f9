//! One replica of the sharded example operator: a [`Sharder`] and a
//! ConfigMap controller whose reconcile does `work` of pretend I/O, then
//! writes `done=<want>` and `by=<replica>` back. [`Mode::Leader`] runs the
//! same controller under plain leader election instead: warm
//! ([`Controller::leader_elected`]: cache synced on every replica, only
//! reconciles gated) or cold (the controller started after winning the
//! Lease, the old way).
//!
//! One copy, four users: the example's `main.rs`, the runtime's
//! `tests/shard.rs` and `tests/leader_warm.rs` (their replica processes)
//! and through the example's binary the bench row
//! `cargo xtask bench --only shard`.
//!
//! - With a span log (`spans.rs`), every reconcile that does work appends
//!   `start <id> <replica> <name> <want> <ns>` and, from a drop guard (so
//!   also when it is cancelled), `end <id> <ns>`; a leader-election
//!   replica also `leading <replica> <ns>` when it becomes leader and
//!   `list <replica> <ns>` whenever its cache begins a (re)list.
//! - SIGUSR1 prints one JSON line to stdout: the cache's objects, their
//!   estimated bytes (`kubeset_runtime::memory::estimate`, the walk
//!   `StoreConfig::count_memory` counts) and the shards held.
//! - SIGTERM or Ctrl-C stops it gracefully (shards released at once);
//!   `kill -9` leaves the shards to expire.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PatchParams;
use kubeset_client::{Api, Client, Patch};
use kubeset_runtime::shard::{ShardConfig, ShardError, ShardFilter, ShardGate, Sharder};
use kubeset_runtime::{
    Action, Controller, Event, LeaderElector, LeaseConfig, Store, StoreConfig, WatchStreamExt as _,
    WatcherConfig, Writer, reflector, watcher,
};
use tokio_util::sync::CancellationToken;

use super::spans::SpanLog;

/// How the replicas share the work.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Sharded on Leases, the filter where it says.
    Sharded(ShardFilter),
    /// One leader on the Lease `<group>-leader`; `warm`: every replica's
    /// cache synced and only reconciles gated, else the controller starts
    /// after winning.
    Leader {
        /// Warm standby (`Controller::leader_elected`) or cold.
        warm: bool,
    },
}

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
    /// Sharded or leader-elected.
    pub mode: Mode,
    /// Reconciles at once.
    pub concurrency: usize,
    /// The pretend I/O of a reconcile.
    pub work: Duration,
    /// The span log, if any.
    pub span_log: Option<PathBuf>,
}

struct Ctx {
    api: Api<ConfigMap>,
    identity: String,
    work: Duration,
    log: Option<SpanLog>,
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
        log.start(format!("{}#{n}", ctx.identity), &ctx.identity, &name, &want)
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

/// On SIGUSR1, one JSON line to stdout: the cache and the shards held
/// (leader election: 1 while leading).
fn print_stats_on_usr1(
    store: Store<ConfigMap>,
    held: impl Fn() -> usize + Send + 'static,
) -> Result<(), ReplicaError> {
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
                "shards": held(),
            });
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    });
    Ok(())
}

/// Cancels `stop` on SIGTERM or Ctrl-C.
fn stop_on_signal(stop: CancellationToken) -> Result<(), ReplicaError> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| ReplicaError::Signal { source })?;
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        stop.cancel();
    });
    Ok(())
}

/// Runs one replica until SIGTERM or Ctrl-C.
pub async fn run(client: Client, settings: Settings) -> Result<(), ReplicaError> {
    let log = match &settings.span_log {
        Some(path) => Some(SpanLog::open(path).map_err(|source| ReplicaError::Log {
            path: path.clone(),
            source,
        })?),
        None => None,
    };
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &settings.namespace);
    let mut watch = WatcherConfig::default();
    if let Some(labels) = &settings.labels {
        watch = watch.labels(labels);
    }
    let stop = CancellationToken::new();
    stop_on_signal(stop.clone())?;
    let ctx = Arc::new(Ctx {
        api: api.clone(),
        identity: settings.identity.clone(),
        work: settings.work,
        log,
        seq: AtomicU64::new(0),
    });
    match settings.mode {
        Mode::Sharded(filter) => sharded(client, &settings, watch, filter, stop, ctx).await,
        Mode::Leader { warm } => leader(client, &settings, watch, warm, stop, ctx).await,
    }
}

async fn sharded(
    client: Client,
    settings: &Settings,
    watch: WatcherConfig,
    filter: ShardFilter,
    stop: CancellationToken,
    ctx: Arc<Ctx>,
) -> Result<(), ReplicaError> {
    let (lease, renew, retry) = settings.durations;
    let config = ShardConfig::new(&settings.namespace, &settings.group, &settings.identity)
        .shards(settings.shards)
        .durations(lease, renew, retry);
    let sharder = Sharder::new(client, config).map_err(|source| ReplicaError::Shard { source })?;
    let controller = Controller::new_sharded(ctx.api.clone(), watch, sharder.gate(), filter)
        .concurrency(settings.concurrency)
        .graceful_shutdown_on(stop.clone().cancelled_owned());
    let store = controller.store();
    let gate: ShardGate = sharder.gate();
    print_stats_on_usr1(store.clone(), move || gate.held().len())?;
    // Join only with a synced cache.
    let sharder = sharder.ready_after(async move { store.wait_until_ready().await.unwrap_or(()) });
    let mut ready = sharder.ready();
    let sharder = tokio::spawn(sharder.run(stop.cancelled_owned()));
    tokio::spawn(async move {
        if ready.wait_for(|r| *r).await.is_ok() {
            tracing::info!("replica ready");
        }
    });
    controller.run_until_shutdown(reconcile, ctx).await;
    let _ = sharder.await;
    Ok(())
}

/// A controller of the ConfigMaps whose watch logs every (re)list it
/// begins (the `Init` of each list, seen in the stream itself, so none is
/// missed).
fn listing_controller(
    api: &Api<ConfigMap>,
    watch: WatcherConfig,
    log: Option<SpanLog>,
    identity: String,
) -> Controller<ConfigMap> {
    let writer = Writer::new(StoreConfig::new());
    let store = writer.store();
    let events = watcher(api.clone(), watch).inspect(move |ev| {
        if matches!(ev, Ok(Event::Init)) {
            tracing::info!("cache list began");
            if let Some(log) = &log {
                log.event("list", &identity);
            }
        }
    });
    Controller::for_stream(reflector(writer, events).touched_objects(), store)
}

/// Plain leader election on `<group>-leader`, warm or cold.
async fn leader(
    client: Client,
    settings: &Settings,
    watch: WatcherConfig,
    warm: bool,
    stop: CancellationToken,
    ctx: Arc<Ctx>,
) -> Result<(), ReplicaError> {
    let (lease, renew, retry) = settings.durations;
    let name = format!("{}-leader", settings.group);
    let config = LeaseConfig::new(&settings.namespace, &name, &settings.identity)
        .durations(lease, renew, retry);
    let elector = LeaderElector::new(client, config);
    let mut leading = elector.subscribe();
    let (log, me) = (ctx.log.clone(), settings.identity.clone());
    tokio::spawn(async move {
        while leading.changed().await.is_ok() {
            if *leading.borrow_and_update() {
                tracing::info!("leading");
                if let Some(log) = &log {
                    log.event("leading", &me);
                }
            }
        }
    });
    let leads = elector.subscribe();
    let held = move || usize::from(*leads.borrow());
    let (log, me) = (ctx.log.clone(), settings.identity.clone());
    if warm {
        let controller = listing_controller(&ctx.api, watch, log, me);
        print_stats_on_usr1(controller.store(), held)?;
        let mut ready = elector.warm();
        tokio::spawn(async move {
            if ready.wait_for(|w| *w).await.is_ok() {
                tracing::info!("replica warm");
            }
        });
        controller
            .concurrency(settings.concurrency)
            .graceful_shutdown_on(stop.cancelled_owned())
            .leader_elected(elector)
            .run_until_shutdown(reconcile, ctx)
            .await;
        return Ok(());
    }
    // Cold, the old way: everything starts after winning the Lease and
    // stops when it is lost.
    let mut lost = elector.subscribe();
    let task = tokio::spawn(elector.run(stop.clone().cancelled_owned()));
    tracing::info!("replica campaigning (cold)");
    let won = tokio::select! {
        () = stop.cancelled() => false,
        r = lost.wait_for(|l| *l) => r.is_ok(),
    };
    if won {
        let until = stop.child_token();
        let on_loss = until.clone();
        tokio::spawn(async move {
            let _ = lost.wait_for(|l| !*l).await;
            on_loss.cancel();
        });
        let controller = listing_controller(&ctx.api, watch, log, me);
        print_stats_on_usr1(controller.store(), held)?;
        controller
            .concurrency(settings.concurrency)
            .graceful_shutdown_on(until.cancelled_owned())
            .run_until_shutdown(reconcile, ctx)
            .await;
    }
    let _ = task.await;
    Ok(())
}
