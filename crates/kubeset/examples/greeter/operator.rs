//! The greeter operator: everything but `main`, so that the suite's test
//! (`tests/tests/suite/toolkit_operator.rs`) runs this very code against a
//! real kube-apiserver.
//!
//! A `Greeter` (custom resource) owns a ConfigMap (`<name>-greeting`) and a
//! Secret (`<name>-token`); it is registered in an "external system" (here
//! a map in memory, standing for DNS, a bucket, a SaaS account) and removed
//! from it by a finalizer's cleanup when the Greeter is deleted. Its status
//! carries a `Ready` condition; Events say what happened, aggregated into
//! series. `spec.fail: true` makes every reconcile fail (a Warning Event
//! series, per-key backoff).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kubeset::api::core::v1::{ConfigMap, Secret};
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kubeset::params::PatchParams;
use kubeset::runtime::controller::{Config, Error as ControllerError};
use kubeset::runtime::events::{Event, EventType, Recorder, Reporter};
use kubeset::runtime::finalizer::{self, finalizer};
use kubeset::runtime::metrics::ControllerMetrics;
use kubeset::runtime::status::{condition, set_condition};
use kubeset::runtime::{
    Action, Controller, LeaderElector, LeaseConfig, ObjectRef, RetryBackoff, WatcherConfig,
};
use kubeset::{Api, Client, Patch, Resource, ResourceExt as _};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The finalizer the operator puts on every Greeter.
pub const FINALIZER: &str = "greeter.kubeset.dev/cleanup";
/// The field manager of its server-side applies, and its Events' reporter.
pub const MANAGER: &str = "greeter.kubeset.dev/operator";

/// The custom resource.
#[derive(Resource, Serialize, Deserialize, Clone, Debug, Default)]
#[resource(
    group = "greeter.kubeset.dev",
    version = "v1",
    kind = "Greeter",
    plural = "greeters",
    namespaced
)]
pub struct Greeter {
    /// Standard metadata.
    pub metadata: ObjectMeta,
    /// What the user asks for.
    pub spec: GreeterSpec,
    /// What the operator observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GreeterStatus>,
}

/// The spec of a [`Greeter`].
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct GreeterSpec {
    /// The greeting to publish.
    pub greeting: String,
    /// Make every reconcile fail (to show Warning series and backoff).
    #[serde(default)]
    pub fail: bool,
}

/// The status of a [`Greeter`].
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct GreeterStatus {
    /// `Ready`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The CRD, built in code. Once `#[derive(CustomResource)]` lands this is
/// `Greeter::crd()`. The schema keeps `spec` open
/// (`x-kubernetes-preserve-unknown-fields`) so that the suite can store an
/// object the Rust type rejects.
pub fn crd() -> Result<CustomResourceDefinition, serde_json::Error> {
    serde_json::from_value(json!({
        "metadata": {"name": "greeters.greeter.kubeset.dev"},
        "spec": {
            "group": "greeter.kubeset.dev",
            "names": {"kind": "Greeter", "plural": "greeters", "singular": "greeter", "listKind": "GreeterList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}
            }]
        }
    }))
}

/// Outside the cluster: what the operator registered, and how many times
/// each Greeter's cleanup ran.
#[derive(Debug, Default)]
pub struct ExternalSystem {
    greetings: Mutex<BTreeMap<String, String>>,
    cleanups: Mutex<BTreeMap<String, u32>>,
}

impl ExternalSystem {
    /// The greeting registered for `namespace/name`.
    pub fn greeting(&self, key: &str) -> Option<String> {
        let g = self
            .greetings
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        g.get(key).cloned()
    }

    /// How many times the cleanup of `namespace/name` ran.
    pub fn cleanups(&self, key: &str) -> u32 {
        let c = self.cleanups.lock().unwrap_or_else(PoisonError::into_inner);
        c.get(key).copied().unwrap_or(0)
    }
}

/// What every reconcile shares.
#[derive(Debug)]
pub struct Context {
    /// The client.
    pub client: Client,
    /// The Event recorder.
    pub recorder: Recorder,
    /// The external system.
    pub external: ExternalSystem,
}

impl Context {
    /// A context for `client`.
    pub fn new(client: Client) -> Self {
        Context {
            recorder: Recorder::new(client.clone(), Reporter::new(MANAGER)),
            client,
            external: ExternalSystem::default(),
        }
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// A request failed.
    #[error("{what} failed")]
    Kube {
        /// What was being done.
        what: &'static str,
        /// The request's error.
        #[source]
        source: kubeset::Error,
    },
    /// `spec.fail` is set.
    #[error("greeter {name} asks to fail")]
    Rejected {
        /// The Greeter.
        name: String,
    },
    /// The finalizer's machinery failed.
    #[error("finalizer")]
    Finalizer {
        /// Its error.
        #[source]
        source: Box<finalizer::Error<OperatorError>>,
    },
}

fn kube(what: &'static str) -> impl FnOnce(kubeset::Error) -> OperatorError {
    move |source| OperatorError::Kube { what, source }
}

/// One reconcile: under the finalizer, apply or clean up.
pub async fn reconcile(g: Arc<Greeter>, ctx: Arc<Context>) -> Result<Action, OperatorError> {
    let ns = g.namespace().unwrap_or_default();
    let api: Api<Greeter> = Api::namespaced(ctx.client.clone(), &ns);
    finalizer(&api, FINALIZER, g, |ev| async {
        match ev {
            finalizer::Event::Apply(g) => apply(&g, &ctx).await,
            finalizer::Event::Cleanup(g) => cleanup(&g, &ctx).await,
        }
    })
    .await
    .map_err(|e| OperatorError::Finalizer {
        source: Box::new(e),
    })
}

async fn apply(g: &Greeter, ctx: &Context) -> Result<Action, OperatorError> {
    let (ns, name) = (g.namespace().unwrap_or_default(), g.name_any());
    if g.spec.fail {
        publish(
            ctx,
            g,
            EventType::Warning,
            "GreetingRejected",
            "spec.fail is set",
        )
        .await;
        set_ready(ctx, g, false, "Rejected", "spec.fail is set").await?;
        return Err(OperatorError::Rejected { name });
    }
    let owner = g.controller_owner_ref().map(|o| vec![o]);
    let apply = PatchParams::apply(MANAGER).force();
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("{name}-greeting"), "ownerReferences": owner},
        "data": {"greeting": g.spec.greeting},
    });
    Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns)
        .patch(&format!("{name}-greeting"), &apply, &Patch::Apply(cm))
        .await
        .map_err(kube("applying the ConfigMap"))?;
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("{name}-token"), "ownerReferences": owner},
        "stringData": {"token": format!("token-for-{name}")},
    });
    Api::<Secret>::namespaced(ctx.client.clone(), &ns)
        .patch(&format!("{name}-token"), &apply, &Patch::Apply(secret))
        .await
        .map_err(kube("applying the Secret"))?;
    ctx.external
        .greetings
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(format!("{ns}/{name}"), g.spec.greeting.clone());
    if set_ready(ctx, g, true, "Reconciled", "ConfigMap and Secret in place").await? {
        publish(
            ctx,
            g,
            EventType::Normal,
            "Reconciled",
            "ConfigMap and Secret in place",
        )
        .await;
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

async fn cleanup(g: &Greeter, ctx: &Context) -> Result<Action, OperatorError> {
    let key = format!("{}/{}", g.namespace().unwrap_or_default(), g.name_any());
    ctx.external
        .greetings
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&key);
    *ctx.external
        .cleanups
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key)
        .or_insert(0) += 1;
    publish(
        ctx,
        g,
        EventType::Normal,
        "CleanedUp",
        "removed from the external system",
    )
    .await;
    Ok(Action::await_change())
}

/// Sets the `Ready` condition; writes the status only when it changed.
async fn set_ready(
    ctx: &Context,
    g: &Greeter,
    ready: bool,
    reason: &str,
    message: &str,
) -> Result<bool, OperatorError> {
    let mut conditions = g.status.clone().unwrap_or_default().conditions;
    let new = condition("Ready", ready, reason, message, g.meta().generation);
    if !set_condition(&mut conditions, new) {
        return Ok(false);
    }
    let api: Api<Greeter> = Api::namespaced(ctx.client.clone(), &g.namespace().unwrap_or_default());
    api.patch_status(
        &g.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": conditions}})),
    )
    .await
    .map_err(kube("writing the status"))?;
    Ok(true)
}

/// Events are best effort: a failure to write one is logged, not fatal.
async fn publish(ctx: &Context, g: &Greeter, type_: EventType, reason: &str, note: &str) {
    let ev = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(note.to_owned()),
        action: "Reconcile".to_owned(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&ev, &g.object_ref()).await {
        tracing::warn!(error = %e, "publishing an event failed");
    }
}

/// What a run reports, item by item.
pub type Report = Result<(ObjectRef<Greeter>, Action), ControllerError<OperatorError>>;

/// Settings of [`run`].
#[derive(Debug, Clone)]
pub struct Options {
    /// The per-key backoff after failures.
    pub retry: RetryBackoff,
    /// The watcher settings of the Greeters and their children.
    pub watcher: WatcherConfig,
    /// Where the metrics go.
    pub metrics: ControllerMetrics,
}

/// The controller's stream (not leader-elected).
pub fn controller(
    ctx: Arc<Context>,
    namespace: &str,
    options: Options,
    stop: impl Future<Output = ()> + Send + 'static,
) -> impl Stream<Item = Report> + Send {
    let client = ctx.client.clone();
    Controller::new(
        Api::<Greeter>::namespaced(client.clone(), namespace),
        options.watcher.clone(),
    )
    .owns(
        Api::<ConfigMap>::namespaced(client.clone(), namespace),
        options.watcher.clone(),
    )
    .owns(
        Api::<Secret>::namespaced(client, namespace),
        options.watcher,
    )
    .with_config(Config::default().concurrency(2))
    .retry_backoff(options.retry)
    .with_metrics(options.metrics)
    .graceful_shutdown_on(stop)
    .run(reconcile, |_g, _e, _ctx| Action::backoff(), ctx)
}

/// Runs the controller while this process holds the Lease `lease`;
/// returns when `stop` completes (the Lease is released) or leadership is
/// lost. Each report goes to `report`.
pub async fn run(
    ctx: Arc<Context>,
    namespace: &str,
    options: Options,
    lease: LeaseConfig,
    stop: impl Future<Output = ()> + Send + 'static,
    mut report: impl FnMut(Report),
) {
    let elector = LeaderElector::new(ctx.client.clone(), lease);
    let mut leading = elector.subscribe();
    let (stopped_tx, stopped) = tokio::sync::watch::channel(false);
    let stopper = tokio::spawn(async move {
        stop.await;
        let _ = stopped_tx.send(true);
    });
    let until_stopped = |mut s: tokio::sync::watch::Receiver<bool>| async move {
        let _ = s.wait_for(|s| *s).await;
    };
    let elector_task = tokio::spawn(elector.run(until_stopped(stopped.clone())));
    let mut waiting = stopped.clone();
    let mut lost = leading.clone();
    let leader = async move { leading.wait_for(|l| *l).await.is_ok() };
    tokio::select! {
        _ = async move { waiting.wait_for(|s| *s).await.is_ok() } => {}
        true = leader => {
            let stop_or_lost = {
                let stopped = until_stopped(stopped.clone());
                async move {
                    tokio::select! {
                        _ = async move { lost.wait_for(|l| !*l).await.is_ok() } => {}
                        () = stopped => {}
                    }
                }
            };
            let mut reports = std::pin::pin!(controller(ctx, namespace, options, stop_or_lost));
            while let Some(r) = reports.next().await {
                report(r);
            }
        }
    }
    let was_stopped = *stopped.borrow();
    if was_stopped {
        // The elector releases the Lease on its way out.
        let _ = elector_task.await;
    } else {
        // Leadership lost: nothing to release.
        elector_task.abort();
        stopper.abort();
    }
}

/// A client built from `config` whose requests are measured into
/// `metrics` (`rest_client_*`).
pub fn client_with_metrics(
    config: &kubeset::Config,
    metrics: &kubeset::runtime::metrics::Metrics,
) -> Result<Client, Box<dyn std::error::Error>> {
    let rest = config.rest_config()?.with_metrics(Arc::new(metrics.rest()));
    Ok(Client::new(
        kubeset::rest::RestClient::new(rest)?,
        config.default_namespace.clone(),
    ))
}

/// Serves the OpenMetrics text of `registry` to every connection on
/// `listener` (`GET /metrics`; any path answers the same). A request is
/// read up to 8 KiB.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    registry: Arc<kubeset::runtime::metrics::prometheus_client::registry::Registry>,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            continue;
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            let _ = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await;
            let mut body = String::new();
            let status = match kubeset::runtime::metrics::prometheus_client::encoding::text::encode(
                &mut body, &registry,
            ) {
                Ok(()) => "200 OK",
                Err(_) => "500 Internal Server Error",
            };
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
        });
    }
}
