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

/// Creates `names` in `default`.
async fn create_all(api: &Api<ConfigMap>, names: impl IntoIterator<Item = String>) {
    for n in names {
        api.create(&PostParams::default(), &cm("default", &n, "x"))
            .await
            .expect("create");
    }
}

#[tokio::test]
async fn a_change_is_reconciled_before_the_rest_of_an_initial_list_burst() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    create_all(&api, (0..40).map(|i| format!("listed-{i:02}"))).await;
    // One reconcile at a time; the first one waits at the gate until the
    // change is in the queue.
    let order = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (seen, open) = (order.clone(), gate.clone());
    let controller = Controller::new(api.clone(), WatcherConfig::default()).concurrency(1);
    let store = controller.store();
    let mut results = Box::pin(controller.run(
        move |o: Arc<ConfigMap>, _: Arc<()>| {
            let first = {
                let mut seen = seen.lock().expect("lock");
                seen.push(o.name_any());
                seen.len() == 1
            };
            let open = open.clone();
            async move {
                if first {
                    open.acquire().await.expect("gate").forget();
                }
                Ok::<_, std::io::Error>(Action::await_change())
            }
        },
        |_, _, _| Action::await_change(),
        Arc::new(()),
    ));
    // Drive the controller until the first reconcile is at the gate.
    let drive = tokio::spawn(async move {
        let mut n = 0;
        while let Some(item) = results.next().await {
            item.expect("reconciled");
            n += 1;
            if n == 41 {
                break;
            }
        }
        n
    });
    let at_gate = common::eventually(Duration::from_secs(20), || {
        order.lock().expect("lock").len() == 1
    })
    .await;
    assert!(at_gate, "the first listed object is being reconciled");
    // A change made now arrives by the watch. The controller queues it in
    // the same step that caches it, so once its store holds it, it is
    // queued, with 39 listed objects, before the gate opens.
    create_all(&api, ["changed".to_owned()]).await;
    let queued = common::eventually(Duration::from_secs(20), || {
        store
            .get(&ObjectRef::<ConfigMap>::new("changed").within("default"))
            .is_some()
    })
    .await;
    assert!(queued, "the change reached the controller");
    gate.add_permits(1);
    let n = tokio::time::timeout(Duration::from_secs(30), drive)
        .await
        .expect("every object reconciled within 30 s")
        .expect("driver");
    assert_eq!(n, 41);
    let order = order.lock().expect("lock").clone();
    assert!(order[0].starts_with("listed-"), "{order:?}");
    assert_eq!(
        order[1], "changed",
        "the change goes before the 39 listed objects still queued: {order:?}"
    );
}

/// Runs a one-at-a-time controller over 12 listed objects and 3 "hot"
/// ones, where every reconcile triggers a hot one again and waits until
/// the controller has queued that trigger (a change is always waiting);
/// returns how many reconciles it took until every listed object was
/// reconciled once.
async fn listed_objects_under_steady_changes(config: kubeset_runtime::Config) -> usize {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    create_all(&api, (0..12).map(|i| format!("listed-{i:02}"))).await;
    create_all(&api, (0..3).map(|i| format!("hot-{i}"))).await;
    type Taken = tokio::sync::oneshot::Sender<()>;
    let (tx, rx) = futures::channel::mpsc::unbounded::<(ObjectRef<ConfigMap>, Taken)>();
    // The runner queues a trigger in the same step that takes it from
    // this stream, so `taken` fires when the change is queued.
    let triggers = rx.map(|(hot, taken): (_, Taken)| {
        let _ = taken.send(());
        hot
    });
    let n = Arc::new(AtomicU32::new(0));
    let mut results = Box::pin(
        Controller::new(api, WatcherConfig::default())
            .with_config(config.concurrency(1))
            .reconcile_on(triggers)
            .run(
                move |_o: Arc<ConfigMap>, n: Arc<AtomicU32>| {
                    let i = n.fetch_add(1, Ordering::SeqCst);
                    let hot = ObjectRef::new(&format!("hot-{}", i % 3)).within("default");
                    let (taken, queued) = tokio::sync::oneshot::channel();
                    tx.unbounded_send((hot, taken)).expect("send");
                    async move {
                        let _ = queued.await;
                        Ok::<_, std::io::Error>(Action::await_change())
                    }
                },
                |_, _, _| Action::await_change(),
                n,
            ),
    );
    let mut listed = std::collections::BTreeSet::new();
    let mut reconciles = 0;
    while listed.len() < 12 {
        let item = tokio::time::timeout(Duration::from_secs(20), results.next())
            .await
            .expect("a reconcile within 20 s (a listed object starved)")
            .expect("runs");
        let (obj, _) = item.expect("reconciled");
        reconciles += 1;
        assert!(
            reconciles <= 2000,
            "starved: {} of 12 listed objects in 2000 reconciles",
            listed.len()
        );
        if obj.name.starts_with("listed-") {
            listed.insert(obj.name.clone());
        }
    }
    reconciles
}

#[tokio::test]
async fn listed_objects_still_complete_under_steady_changes() {
    // With aging every listed object is reconciled although a change is
    // always waiting: a waiting tier gains 10 points per reconcile that
    // passes it over, so it is served once in every 12 reconciles (the
    // hot objects' own initial-list entries take a few of those turns).
    // With strict priorities (`aging(0)`) no listed object is reconciled
    // while changes keep coming, and the 2000-reconcile guard fails this.
    let took = listed_objects_under_steady_changes(kubeset_runtime::Config::default()).await;
    assert!(took <= 13 * 12, "12 listed objects took {took} reconciles");
}

#[tokio::test]
async fn a_reconcile_past_its_timeout_is_cancelled_reported_and_retried() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    create_all(&api, ["slow".to_owned(), "fast".to_owned()]).await;
    let mut results = Box::pin(
        Controller::new(api, WatcherConfig::default())
            .with_config(
                kubeset_runtime::Config::default().reconcile_timeout(Duration::from_millis(100)),
            )
            .run(
                |o: Arc<ConfigMap>, _: Arc<()>| async move {
                    if o.name_any() == "slow" {
                        std::future::pending::<()>().await;
                    }
                    Ok::<_, std::io::Error>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                Arc::new(()),
            ),
    );
    let mut timeouts = 0;
    let mut fast = 0;
    while timeouts < 2 {
        let item = tokio::time::timeout(Duration::from_secs(20), results.next())
            .await
            .expect("an item within 20 s")
            .expect("runs");
        match item {
            Ok((obj, _)) => {
                assert_eq!(obj.name, "fast");
                fast += 1;
            }
            Err(Error::ReconcileTimeout { object, timeout }) => {
                assert_eq!(
                    (object.name.as_str(), timeout),
                    ("slow", Duration::from_millis(100))
                );
                assert_eq!(
                    Error::<std::io::Error>::ReconcileTimeout { object, timeout }.to_string(),
                    "reconciling ConfigMap.v1./slow.default took longer than 100ms; cancelled"
                );
                timeouts += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(fast, 1, "the other object is reconciled once, undisturbed");
}
