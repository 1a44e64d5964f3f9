//! `Controller::run`'s result stream and predicates against the embedded
//! server.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PostParams;
use kubeset_client::{Api, ResourceExt as _};
use kubeset_runtime::controller::Error;
use kubeset_runtime::{Action, Controller, ObjectRef, WatcherConfig, predicates};
use kubeset_testserver::TestServer;

use common::{client, cm};

type Item = Result<(ObjectRef<ConfigMap>, Action), Error<std::io::Error>>;

/// The next item naming `name` (others are skipped), within 20 s.
async fn next_for(s: &mut (impl Stream<Item = Item> + Unpin), name: &str) -> Item {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let item = tokio::time::timeout_at(deadline, s.next())
            .await
            .unwrap_or_else(|_| panic!("an item for {name} within 20 s"))
            .expect("the stream runs until shutdown");
        let named = match &item {
            Ok((obj, _)) => obj.name == name,
            Err(
                Error::ReconcilerFailed { object, .. } | Error::ReconcileTimeout { object, .. },
            ) => object.name == name,
            Err(Error::QueueError { .. }) => false,
        };
        if named {
            return item;
        }
    }
}

#[tokio::test]
async fn results_errors_and_predicates_reach_the_stream() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    for n in ["ok", "bad"] {
        api.create(&PostParams::default(), &cm("default", n, "x"))
            .await
            .expect("create");
    }
    let policy_calls = Arc::new(AtomicU32::new(0));
    let reconciles = Arc::new(AtomicU32::new(0));
    let calls = policy_calls.clone();
    let mut results = Box::pin(
        Controller::new(api.clone(), WatcherConfig::default())
            .with_predicate(predicates::labels)
            .run(
                |o: Arc<ConfigMap>, n: Arc<AtomicU32>| async move {
                    n.fetch_add(1, Ordering::SeqCst);
                    if o.name_any() == "bad" {
                        Err(std::io::Error::other("bad is bad"))
                    } else {
                        Ok(Action::await_change())
                    }
                },
                move |o, e, _| {
                    assert_eq!(
                        (o.name_any(), e.to_string()),
                        ("bad".to_owned(), "bad is bad".to_owned())
                    );
                    calls.fetch_add(1, Ordering::SeqCst);
                    Action::requeue(Duration::from_secs(3600))
                },
                reconciles.clone(),
            ),
    );
    // ok and bad are reconciled concurrently: take both, in any order.
    let (mut ok, mut bad) = (None, None);
    while ok.is_none() || bad.is_none() {
        let item = tokio::time::timeout(Duration::from_secs(20), results.next())
            .await
            .expect("results within 20 s")
            .expect("the stream runs until shutdown");
        match item {
            Ok((obj, action)) if obj.name == "ok" => ok = Some((obj, action)),
            Err(Error::ReconcilerFailed { object, source }) if object.name == "bad" => {
                bad = Some((object, source));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let (obj, action) = ok.expect("ok");
    assert_eq!(
        (obj.kind(), obj.namespace.as_deref()),
        ("ConfigMap", Some("default"))
    );
    assert_eq!(action, Action::await_change());
    let (object, source) = bad.expect("bad");
    assert_eq!(object.to_string(), "ConfigMap.v1./bad.default");
    assert_eq!(source.to_string(), "bad is bad");
    assert_eq!(
        policy_calls.load(Ordering::SeqCst),
        1,
        "error_policy saw the error"
    );

    // A data-only change passes the cache but not the labels predicate; a
    // label change does. A later object is the barrier.
    let before = reconciles.load(Ordering::SeqCst);
    let mut o = api.get("ok").await.expect("get");
    o.data
        .get_or_insert_default()
        .insert("v".into(), "changed".into());
    let o = api
        .replace("ok", &PostParams::default(), &o)
        .await
        .expect("data change");
    let mut o2 = o.clone();
    o2.labels_mut().insert("app".into(), "relabelled".into());
    api.replace("ok", &PostParams::default(), &o2)
        .await
        .expect("label change");
    next_for(&mut results, "ok")
        .await
        .expect("reconciled after the label change");
    api.create(&PostParams::default(), &cm("default", "barrier", "x"))
        .await
        .expect("create");
    next_for(&mut results, "barrier").await.expect("barrier");
    assert_eq!(
        reconciles.load(Ordering::SeqCst) - before,
        2,
        "one reconcile of ok (the label change) and one of the barrier"
    );
}

#[tokio::test]
async fn reconcile_all_on_and_reconcile_on_queue_cached_objects() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    for n in ["a", "b"] {
        api.create(&PostParams::default(), &cm("default", n, "x"))
            .await
            .expect("create");
    }
    let (all_tx, all_rx) = futures::channel::mpsc::unbounded::<()>();
    let (one_tx, one_rx) = futures::channel::mpsc::unbounded::<ObjectRef<ConfigMap>>();
    let mut results = Box::pin(
        Controller::new(api, WatcherConfig::default())
            .reconcile_all_on(all_rx)
            .reconcile_on(one_rx)
            .run(
                |_o: Arc<ConfigMap>, _: Arc<()>| async {
                    Ok::<_, std::io::Error>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                Arc::new(()),
            ),
    );
    let mut names = async |n: usize| {
        let mut out = Vec::new();
        for _ in 0..n {
            let item = tokio::time::timeout(Duration::from_secs(20), results.next())
                .await
                .expect("in time")
                .expect("runs");
            out.push(item.expect("reconciled").0.name.clone());
        }
        out.sort();
        out
    };
    assert_eq!(names(2).await, ["a", "b"], "the initial list");
    all_tx.unbounded_send(()).expect("send");
    assert_eq!(names(2).await, ["a", "b"], "everything again");
    one_tx
        .unbounded_send(ObjectRef::new("b").within("default"))
        .expect("send");
    assert_eq!(names(1).await, ["b"]);
}
