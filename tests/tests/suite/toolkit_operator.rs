//! The greeter example operator (crates/kubeset/examples/greeter) against
//! a real kube-apiserver, checking the claims of issue 17: owned objects
//! restored after deletion, cleanup run once on delete, a repeated failure
//! aggregated into one Event (series.count ≥ 5), and a bad object
//! reported with its name and skipped while a good one created after it
//! is reconciled.

#[path = "../../../crates/kubeset/examples/greeter/operator.rs"]
#[allow(dead_code)]
mod operator;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kubeset::api::core::v1::{ConfigMap, Secret};
use kubeset::api::events::v1::Event as EventsV1;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::dynamic::ApiResource;
use kubeset::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset::runtime::controller::Error as ControllerError;
use kubeset::runtime::metrics::Metrics;
use kubeset::runtime::metrics::prometheus_client::registry::Registry;
use kubeset::runtime::{LeaseConfig, RetryBackoff, WatcherConfig, WatcherError};
use kubeset::{Api, CustomResourceExt as _, Patch, ResourceExt as _};
use kubeset_tests::{eventually, meta};
use operator::{Greeter, GreeterSpec};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::common::connect;

const LONG: Duration = Duration::from_secs(90);

async fn ensure_crd(crds: &Api<CustomResourceDefinition>) {
    // The operator's own CRD, with `spec` opened up
    // (`x-kubernetes-preserve-unknown-fields`): as if a newer version of the
    // CRD accepted objects this operator's type cannot decode, so that the
    // test can store one and watch the operator report and skip it.
    let mut crd = Greeter::crd();
    for v in &mut crd.spec.versions {
        let open = serde_json::from_value(json!({
            "type": "object", "x-kubernetes-preserve-unknown-fields": true
        }))
        .expect("a schema");
        let root = v
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .expect("the derive writes a schema");
        root.properties
            .get_or_insert_default()
            .insert("spec".to_owned(), open);
    }
    match crds.create(&PostParams::default(), &crd).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating the CRD: {}", kubeset_tests::error_chain(&e)),
    }
    eventually(LONG, "the Greeter CRD to be established", || async {
        let c = crds.get("greeters.greeter.kubeset.dev").await.ok()?;
        let conds = c.status?.conditions?;
        conds
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
            .then_some(())
    })
    .await;
}

async fn scrape(addr: std::net::SocketAddr) -> String {
    let mut conn = tokio::net::TcpStream::connect(addr).await.expect("connect");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let mut out = String::new();
    conn.read_to_string(&mut out).await.expect("read");
    out
}

fn ready(g: &Greeter) -> bool {
    g.status
        .as_ref()
        .is_some_and(|s| kubeset::runtime::status::is_condition_true(&s.conditions, "Ready"))
}

#[tokio::test]
async fn greeter_operator_claims_hold_on_a_real_server() {
    let ctx = connect!("toolkit-operator");
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let config = ctx
        .kube
        .config(None, kubeset_tests::Identity::Admin)
        .expect("config");
    let client = operator::client_with_metrics(&config, &metrics).expect("client");
    let ns = ctx.ns.clone();
    ensure_crd(&Api::cluster(client.clone())).await;

    // A Greeter whose greeting is a number: stored (the schema is open),
    // but it does not decode as `Greeter`.
    let raw: Api<serde_json::Value> =
        Api::dynamic(client.clone(), &ApiResource::of::<Greeter>(), Some(&ns));
    let bad = json!({"metadata": {"name": "bad"}, "spec": {"greeting": 42}});
    eventually(LONG, "greeters to be served", || async {
        match raw.create(&PostParams::default(), &bad).await {
            Ok(_) => Some(()),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("create bad: {}", kubeset_tests::error_chain(&e)),
        }
    })
    .await;

    // The operator, leader-elected, with metrics.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let metrics_addr = listener.local_addr().expect("addr");
    let serving = tokio::spawn(kubeset::runtime::metrics::serve_listener(
        listener,
        Arc::new(registry),
    ));
    let op = Arc::new(operator::Context::new(client.clone()));
    let decode_reports: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn({
        let (op, ns, decode_reports) = (op.clone(), ns.clone(), decode_reports.clone());
        async move {
            let options = operator::Options {
                retry: RetryBackoff {
                    base: Duration::from_millis(50),
                    max: Duration::from_secs(1),
                },
                watcher: WatcherConfig::default(),
                metrics: metrics.controller("greeter"),
            };
            let lease = LeaseConfig::new(&ns, "greeter-operator", "suite");
            operator::run(
                op,
                &ns,
                options,
                lease,
                async {
                    let _ = stop_rx.await;
                },
                move |r| {
                    if let Err(ControllerError::QueueError {
                        source: WatcherError::Decode { name, path, .. },
                    }) = &r
                    {
                        let mut d = decode_reports.lock().expect("lock");
                        d.push((name.clone().unwrap_or_default(), path.clone()));
                    }
                },
            )
            .await;
        }
    });

    // A good Greeter created after the bad one is reconciled.
    let greeters: Api<Greeter> = Api::namespaced(client.clone(), &ns);
    let hello = Greeter {
        metadata: meta("hello"),
        spec: GreeterSpec {
            greeting: "hi".into(),
            fail: false,
        },
        status: None,
    };
    let created = Instant::now();
    greeters
        .create(&PostParams::default(), &hello)
        .await
        .expect("create hello");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    eventually(LONG, "hello to be Ready with its ConfigMap", || async {
        let g = greeters.get("hello").await.ok()?;
        let cm = cms.get_opt("hello-greeting").await.ok()??;
        (ready(&g) && cm.data?.get("greeting").map(String::as_str) == Some("hi")).then_some(())
    })
    .await;
    println!(
        "hello reconciled {:?} after its creation",
        created.elapsed()
    );
    let g = greeters.get("hello").await.expect("get hello");
    assert_eq!(g.finalizers(), [operator::FINALIZER]);
    assert_eq!(
        op.external.greeting(&format!("{ns}/hello")).as_deref(),
        Some("hi")
    );
    assert_eq!(
        decode_reports.lock().expect("lock").first().cloned(),
        Some(("bad".to_owned(), "spec.greeting".to_owned())),
        "the bad object is reported with its name and the field"
    );

    // Owned objects come back after deletion.
    for (what, gone) in [
        (
            "ConfigMap",
            cms.delete("hello-greeting", &DeleteParams::default())
                .await
                .map(drop),
        ),
        (
            "Secret",
            secrets
                .delete("hello-token", &DeleteParams::default())
                .await
                .map(drop),
        ),
    ] {
        gone.unwrap_or_else(|e| panic!("delete the {what}: {e}"));
    }
    eventually(
        LONG,
        "the ConfigMap and the Secret to be restored",
        || async {
            let cm = cms.get_opt("hello-greeting").await.ok()??;
            let secret = secrets.get_opt("hello-token").await.ok()??;
            (cm.metadata.deletion_timestamp.is_none()
                && secret.metadata.deletion_timestamp.is_none())
            .then_some(())
        },
    )
    .await;

    // A repeated failure is one Event with a series, not one Event each.
    greeters
        .patch(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"fail": true}})),
        )
        .await
        .expect("make hello fail");
    let events: Api<EventsV1> = Api::namespaced(client.clone(), &ns);
    let rejected = || async {
        let list = events
            .list(&ListParams::default())
            .await
            .expect("list events");
        list.items
            .into_iter()
            .filter(|e| {
                e.reason.as_deref() == Some("GreetingRejected")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("hello")
            })
            .collect::<Vec<_>>()
    };
    let count = eventually(LONG, "a GreetingRejected series of 5", || async {
        let found = rejected().await;
        let count = found.first()?.series.as_ref()?.count;
        (count >= 5).then_some(count)
    })
    .await;
    let found = rejected().await;
    assert_eq!(found.len(), 1, "one Event for the whole series: {found:#?}");
    let ev = &found[0];
    assert_eq!(ev.type_.as_deref(), Some("Warning"));
    assert_eq!(ev.reporting_controller.as_deref(), Some(operator::MANAGER));
    assert!(
        ev.reporting_instance
            .as_deref()
            .is_some_and(|i| !i.is_empty())
    );
    let regarding = ev.regarding.as_ref().expect("regarding");
    assert_eq!(
        (
            regarding.kind.as_deref(),
            regarding.api_version.as_deref(),
            regarding.uid.as_deref()
        ),
        (
            Some("Greeter"),
            Some("greeter.kubeset.dev/v1"),
            g.metadata.uid.as_deref()
        )
    );
    println!("GreetingRejected: one Event, series.count {count}");

    // Delete: cleanup runs once, then the finalizer goes and so does hello.
    greeters
        .delete("hello", &DeleteParams::default())
        .await
        .expect("delete hello");
    eventually(LONG, "hello to be gone", || async {
        greeters
            .get_opt("hello")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    // A later object reconciled is a barrier: anything queued for hello ran.
    let probe = Greeter {
        metadata: meta("probe"),
        ..hello.clone()
    };
    greeters
        .create(&PostParams::default(), &probe)
        .await
        .expect("create probe");
    eventually(LONG, "probe to be Ready", || async {
        ready(&greeters.get("probe").await.ok()?).then_some(())
    })
    .await;
    assert_eq!(
        op.external.cleanups(&format!("{ns}/hello")),
        1,
        "cleanup ran once"
    );
    assert_eq!(op.external.greeting(&format!("{ns}/hello")), None);

    let text = scrape(metrics_addr).await;
    for want in [
        "controller_runtime_reconcile_total{controller=\"greeter\",result=\"error\"}",
        "controller_runtime_reconcile_total{controller=\"greeter\",result=\"requeue_after\"}",
        "kubeset_watch_errors_total{controller=\"greeter\",reason=\"decode\"} 1",
        "workqueue_retries_total{name=\"greeter\"}",
        "controller_runtime_reconcile_time_seconds_bucket{",
        "rest_client_requests_total{code=\"200\",method=\"GET\"",
        "rest_client_request_duration_seconds_count{verb=\"PATCH\"}",
    ] {
        assert!(text.contains(want), "metrics lack {want}:\n{text}");
    }

    let _ = stop_tx.send(());
    tokio::time::timeout(LONG, running)
        .await
        .expect("the operator stops")
        .expect("no panic");
    serving.abort();
    let lease = Api::<kubeset::api::coordination::v1::Lease>::namespaced(client, &ns)
        .get("greeter-operator")
        .await
        .expect("the lease");
    let holder = lease
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    assert!(
        holder.is_empty(),
        "released on shutdown, held by {holder:?}"
    );
}
