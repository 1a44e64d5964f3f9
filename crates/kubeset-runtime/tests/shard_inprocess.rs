//! A Sharder and a sharded controller in one process against the
//! embedded server: readiness, metrics, release on shutdown, and a
//! running reconcile cancelled when its shard goes.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::Api;
use kubeset_client::api::coordination::v1::{Lease, LeaseSpec};
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{ListParams, PostParams};
use kubeset_runtime::metrics::prometheus_client::{encoding::text::encode, registry::Registry};
use kubeset_runtime::shard::{GROUP_LABEL, ShardConfig, ShardMetrics, Sharder};
use kubeset_runtime::{Action, Controller, WatcherConfig};
use kubeset_testserver::TestServer;
use tokio_util::sync::CancellationToken;

use common::{client, cm, eventually};

const LIMIT: Duration = Duration::from_secs(30);

fn config(identity: &str) -> ShardConfig {
    ShardConfig::new("default", "g", identity)
        .shards(8)
        .durations(
            Duration::from_secs(3),
            Duration::from_secs(2),
            Duration::from_millis(200),
        )
}

async fn shard_holders(api: &Api<Lease>) -> Vec<Option<String>> {
    api.list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter(|l| {
            l.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("g-shard-"))
        })
        .map(|l| {
            l.spec
                .and_then(|s| s.holder_identity)
                .filter(|h| !h.is_empty())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_replica_joins_when_warm_takes_every_shard_and_releases_them() {
    let server = TestServer::start().await.expect("server starts");
    let c = client(&server.urls());
    let mut registry = Registry::default();
    let metrics = ShardMetrics::register(&mut registry);
    let (warm_tx, warm_rx) = tokio::sync::oneshot::channel::<()>();
    let sharder = Sharder::new(c.clone(), config("a"))
        .expect("valid")
        .with_metrics(metrics)
        .ready_after(async {
            let _ = warm_rx.await;
        });
    let gate = sharder.gate();
    let mut ready = sharder.ready();
    let stop = CancellationToken::new();
    let task = tokio::spawn(sharder.run(stop.clone().cancelled_owned()));
    let leases: Api<Lease> = Api::namespaced(c, "default");

    // A Lease that looks like a member but is not of the group (no label):
    // if it counted, some shards would go to "zed" and never be held.
    let stranger = Lease {
        metadata: ObjectMeta {
            name: Some("g-member-zed".to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("zed".to_owned()),
            ..LeaseSpec::default()
        }),
    };
    leases
        .create(&PostParams::default(), &stranger)
        .await
        .expect("create");
    let group = ListParams::default().labels(&format!("{GROUP_LABEL}=g"));

    assert!(!*ready.borrow(), "not ready before the cache is warm");
    assert!(
        leases.list(&group).await.expect("list").items.is_empty(),
        "no Lease before joining"
    );
    warm_tx.send(()).expect("the sharder waits");
    tokio::time::timeout(LIMIT, ready.wait_for(|r| *r))
        .await
        .expect("ready")
        .expect("open");
    assert!(
        eventually(LIMIT, || gate.held().len() == 8).await,
        "holds all 8 shards: {:?}",
        gate.held()
    );
    let holders = shard_holders(&leases).await;
    assert_eq!(holders, vec![Some("a".to_owned()); 8]);
    let labelled = leases.list(&group).await.expect("list").items.len();
    assert_eq!(
        labelled, 9,
        "8 shard Leases and a's membership carry the group label"
    );

    let mut text = String::new();
    encode(&mut text, &registry).expect("encodes");
    assert!(
        text.contains(r#"controller_runtime_shards_held{group="g",identity="a"} 8"#),
        "{text}"
    );
    assert!(text.contains(r#"controller_runtime_shard_handoffs_total{group="g",identity="a",direction="acquired"} 8"#), "{text}");
    assert!(
        text.contains("controller_runtime_shard_takeover_seconds_count"),
        "{text}"
    );

    stop.cancel();
    task.await.expect("the sharder stops");
    assert!(gate.held().is_empty());
    assert!(!*ready.borrow(), "not ready after leaving");
    assert_eq!(
        shard_holders(&leases).await,
        vec![None; 8],
        "every shard released"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_reconcile_is_cancelled_when_its_shard_goes() {
    let server = TestServer::start().await.expect("server starts");
    let c = client(&server.urls());
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "default");
    for i in 0..5 {
        cms.create(
            &PostParams::default(),
            &cm("default", &format!("cm-{i}"), "x"),
        )
        .await
        .expect("create");
    }
    let sharder = Sharder::new(c.clone(), config("a")).expect("valid");
    let gate = sharder.gate();
    let stop_sharder = CancellationToken::new();
    let sharder = tokio::spawn(sharder.run(stop_sharder.clone().cancelled_owned()));

    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (s2, d2) = (started.clone(), dropped.clone());
    let stop_controller = CancellationToken::new();
    let results = Controller::new(cms, WatcherConfig::default())
        .sharded(gate.clone())
        .concurrency(8)
        .graceful_shutdown_on(stop_controller.clone().cancelled_owned())
        .run(
            move |_cm: Arc<ConfigMap>, _: Arc<()>| {
                let (s, guard) = (s2.clone(), Guard(d2.clone()));
                async move {
                    s.fetch_add(1, Ordering::SeqCst);
                    let _guard = guard;
                    // A reconcile that never ends by itself.
                    std::future::pending::<()>().await;
                    Ok::<_, std::io::Error>(Action::await_change())
                }
            },
            |_, _, _| Action::await_change(),
            Arc::new(()),
        )
        .collect::<Vec<_>>();
    let results = tokio::spawn(results);
    assert!(
        eventually(LIMIT, || started.load(Ordering::SeqCst) == 5).await,
        "all 5 start once the shards are held"
    );
    assert_eq!(dropped.load(Ordering::SeqCst), 0);

    // Leaving revokes every shard: the reconciles are dropped, and only
    // then are the Leases released.
    stop_sharder.cancel();
    sharder.await.expect("the sharder stops");
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        5,
        "every running reconcile was cancelled"
    );
    let leases: Api<Lease> = Api::namespaced(c, "default");
    assert_eq!(
        shard_holders(&leases).await,
        vec![None; 8],
        "released after the reconciles drained"
    );

    stop_controller.cancel();
    let reported = results.await.expect("the controller stops");
    assert!(
        reported.is_empty(),
        "a revoked reconcile is neither a result nor an error: {reported:?}"
    );
    assert_eq!(
        started.load(Ordering::SeqCst),
        5,
        "nothing restarted without a shard"
    );
}
