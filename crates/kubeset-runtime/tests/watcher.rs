//! The watcher's protocol against the embedded server: streaming list,
//! fallback to pages, 410 relist, idle guard, metadata-only requests.

mod common;

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kubeset_client::Api;
use kubeset_client::api::core::v1::{ConfigMap, Secret};
use kubeset_client::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubeset_client::params::{ListParams, PostParams};
use kubeset_runtime::{
    Action, Backoff, Controller, Event, InitialList, ObjectKey, WatcherConfig, WatcherError,
    watcher,
};
use kubeset_testserver::TestServer;
use tokio::sync::Mutex;

use common::{client, cm, eventually, versions};

fn fast() -> WatcherConfig {
    WatcherConfig::default().backoff(
        Backoff::default().with_bounds(Duration::from_millis(50), Duration::from_millis(200)),
    )
}

async fn next<K>(s: &mut (impl Stream<Item = Result<Event<K>, WatcherError>> + Unpin)) -> Event<K> {
    // Errors are skipped (the watcher retries), but not forever.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let item = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("an event within 20 s")
            .expect("the watcher never ends");
        if let Ok(ev) = item {
            return ev;
        }
    }
}

fn name(ev: &Event<ConfigMap>) -> Option<String> {
    ev.object().and_then(|o| o.metadata.name.clone())
}

async fn seed(server: &TestServer, n: usize) -> Api<ConfigMap> {
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    for i in 0..n {
        api.create(
            &PostParams::default(),
            &cm("default", &format!("c{i:02}"), "x"),
        )
        .await
        .expect("create");
    }
    api
}

/// Reads one initial state: the names of its objects, in order.
async fn initial_state(
    s: &mut (impl Stream<Item = Result<Event<ConfigMap>, WatcherError>> + Unpin),
) -> Vec<String> {
    assert_eq!(next(s).await, Event::Init);
    let mut names = Vec::new();
    loop {
        match next(s).await {
            Event::InitApply(o) => names.push(o.metadata.name.unwrap_or_default()),
            Event::InitDone => return names,
            other => panic!("unexpected {other:?} during init"),
        }
    }
}

#[tokio::test]
async fn streaming_and_paginated_initial_lists_then_changes() {
    let server = TestServer::start().await.expect("server");
    let api = seed(&server, 12).await;
    let want: Vec<String> = (0..12).map(|i| format!("c{i:02}")).collect();
    for how in [
        InitialList::Streaming,
        InitialList::Paginated,
        InitialList::Auto,
    ] {
        let mut s = Box::pin(watcher(api.clone(), fast().initial_list(how).page_size(5)));
        let mut got = initial_state(&mut s).await;
        got.sort();
        assert_eq!(got, want, "{how:?}");
        let mut changed = cm("default", "c00", "y");
        changed.metadata.resource_version = None;
        api.replace("c00", &PostParams::default(), &changed)
            .await
            .expect("replace");
        let ev = next(&mut s).await;
        assert!(matches!(ev, Event::Apply(_)), "{how:?}: {ev:?}");
        assert_eq!(name(&ev).as_deref(), Some("c00"));
        api.delete("c00", &Default::default())
            .await
            .expect("delete");
        let ev = next(&mut s).await;
        assert!(matches!(ev, Event::Delete(_)), "{how:?}: {ev:?}");
        api.create(&PostParams::default(), &cm("default", "c00", "x"))
            .await
            .expect("recreate");
        assert!(matches!(next(&mut s).await, Event::Apply(_)));
    }
}

#[tokio::test]
async fn falls_back_to_pages_when_streaming_is_rejected() {
    let server = TestServer::start().await.expect("server");
    let api = seed(&server, 7).await;
    // The first request (the streaming list) gets 422 Invalid, as a server
    // without the WatchList feature answers.
    server.faults(0).expect("replica").fail_next(1, 422, None);
    let mut s = Box::pin(watcher(api.clone(), fast().page_size(3)));
    let mut got = initial_state(&mut s).await;
    got.sort();
    assert_eq!(got.len(), 7);
    // And it keeps working as a list+watch.
    api.create(&PostParams::default(), &cm("default", "late", "x"))
        .await
        .expect("create");
    assert_eq!(name(&next(&mut s).await).as_deref(), Some("late"));
}

#[tokio::test]
async fn expired_version_relists_and_missed_deletes_disappear() {
    let server = TestServer::builder()
        .replicas(2)
        .history(5)
        .start()
        .await
        .expect("server");
    let urls = server.urls();
    let watched: Api<ConfigMap> = Api::namespaced(client(&urls[..1]), "default");
    let api: Api<ConfigMap> = Api::namespaced(client(&urls[1..]), "default");
    for i in 0..4 {
        api.create(
            &PostParams::default(),
            &cm("default", &format!("c{i:02}"), "x"),
        )
        .await
        .expect("create");
    }
    let mut s = Box::pin(watcher(
        watched,
        fast().initial_list(InitialList::Paginated),
    ));
    assert_eq!(initial_state(&mut s).await.len(), 4);
    // Replica 0 pauses its watch while replica 1 takes more writes than
    // the server's history (5 events) holds.
    let f = server.faults(0).expect("replica");
    f.hang();
    for i in 0..3 {
        api.delete(&format!("c{i:02}"), &Default::default())
            .await
            .expect("delete");
    }
    for i in 0..10 {
        api.create(
            &PostParams::default(),
            &cm("default", &format!("n{i}"), "x"),
        )
        .await
        .expect("create");
    }
    f.up().await.expect("up");
    // The paused watch resumes into 410 Expired and the watcher starts
    // over: a new Init whose state has the deletes (no phantom objects).
    loop {
        if next(&mut s).await == Event::Init {
            break;
        }
    }
    let mut names = Vec::new();
    loop {
        match next(&mut s).await {
            Event::InitApply(o) => names.push(o.metadata.name.unwrap_or_default()),
            Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    names.sort();
    let mut truth: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect();
    truth.sort();
    assert_eq!(names, truth);
    assert_eq!(names.len(), 11);
    assert!(!names.contains(&"c00".to_owned()));
}

#[tokio::test]
async fn idle_guard_reopens_a_watch_on_a_hung_server() {
    let server = TestServer::builder()
        .replicas(2)
        .start()
        .await
        .expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    let mut s = Box::pin(watcher(
        api.clone(),
        fast().idle_timeout(Duration::from_secs(1)),
    ));
    assert!(initial_state(&mut s).await.is_empty());
    // Replica 0 hangs: its open watch goes silent; the guard reopens the
    // watch, which fails over to replica 1.
    server.faults(0).expect("replica").hang();
    let writer: Api<ConfigMap> = Api::namespaced(client(&server.urls()[1..]), "default");
    writer
        .create(&PostParams::default(), &cm("default", "after-hang", "x"))
        .await
        .expect("create on replica 1");
    let ev = next(&mut s).await;
    assert_eq!(name(&ev).as_deref(), Some("after-hang"), "{ev:?}");
}

#[tokio::test]
async fn controller_follows_owned_and_mapped_objects() {
    let server = TestServer::start().await.expect("server");
    let c = client(&server.urls());
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(c.clone(), "default");
    let parent = cms
        .create(&PostParams::default(), &cm("default", "parent", "x"))
        .await
        .expect("parent");
    cms.create(&PostParams::default(), &cm("default", "other", "x"))
        .await
        .expect("other");
    let owner = OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "parent".into(),
        uid: parent.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: None,
    };

    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let ctl = Controller::new(cms.clone(), fast())
        .owns(secrets.clone(), fast())
        .watches(
            Api::<ConfigMap>::namespaced(c.clone(), "kube-public"),
            fast(),
            // A ConfigMap in kube-public named after one in default triggers it.
            |o: ConfigMap| {
                vec![ObjectKey::namespaced(
                    "default",
                    o.metadata.name.as_deref().unwrap_or_default(),
                )]
            },
        )
        .graceful_shutdown_on(async move {
            let _ = stopped.await;
        });
    let task = tokio::spawn(ctl.run_until_shutdown(
        |o: Arc<ConfigMap>, log: Arc<Mutex<Vec<String>>>| async move {
            log.lock()
                .await
                .push(o.metadata.name.clone().unwrap_or_default());
            Ok::<_, std::convert::Infallible>(Action::await_change())
        },
        log.clone(),
    ));
    let count = |n: &'static str| {
        let log = log.clone();
        move || {
            log.try_lock()
                .map(|l| l.iter().filter(|x| *x == n).count())
                .unwrap_or(0)
        }
    };
    assert!(
        eventually(Duration::from_secs(10), || count("parent")() >= 1
            && count("other")() >= 1)
        .await
    );
    let before = count("parent")();
    secrets
        .create(
            &PostParams::default(),
            &Secret {
                metadata: ObjectMeta {
                    name: Some("child".into()),
                    owner_references: Some(vec![owner]),
                    ..ObjectMeta::default()
                },
                ..Secret::default()
            },
        )
        .await
        .expect("child");
    assert!(
        eventually(Duration::from_secs(10), || count("parent")() > before).await,
        "an owned object's change reconciles its owner"
    );
    let before_other = count("other")();
    Api::<ConfigMap>::namespaced(c.clone(), "kube-public")
        .create(&PostParams::default(), &cm("kube-public", "other", "x"))
        .await
        .expect("mapped");
    assert!(
        eventually(Duration::from_secs(10), || count("other")() > before_other).await,
        "a mapped watch reconciles the mapped key"
    );
    stop.send(()).expect("running");
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stops")
        .expect("ok");
    let final_state = versions(&cms.list(&ListParams::default()).await.expect("list").items);
    assert_eq!(final_state.len(), 2);
}

#[tokio::test]
async fn failed_reconciles_are_retried_with_growing_delays() {
    let server = TestServer::start().await.expect("server");
    let cms = seed(&server, 1).await;
    let times: Arc<Mutex<Vec<tokio::time::Instant>>> = Arc::default();
    let ctl = Controller::new(cms, fast()).retry_backoff(kubeset_runtime::RetryBackoff {
        base: Duration::from_millis(100),
        max: Duration::from_secs(10),
    });
    let task = tokio::spawn(ctl.run_until_shutdown(
        |_o: Arc<ConfigMap>, times: Arc<Mutex<Vec<tokio::time::Instant>>>| async move {
            let mut t = times.lock().await;
            t.push(tokio::time::Instant::now());
            if t.len() < 4 {
                Err(std::io::Error::other("not yet"))
            } else {
                Ok(Action::await_change())
            }
        },
        times.clone(),
    ));
    assert!(
        eventually(Duration::from_secs(15), || times
            .try_lock()
            .map(|t| t.len() >= 4)
            .unwrap_or(false))
        .await
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t = times.lock().await.clone();
    assert_eq!(t.len(), 4, "success stops the retries");
    let gaps: Vec<Duration> = t.windows(2).map(|w| w[1] - w[0]).collect();
    // 100 ms, 200 ms, 400 ms: lower bounds hold whatever the load.
    assert!(gaps[0] >= Duration::from_millis(100), "{gaps:?}");
    assert!(gaps[1] >= Duration::from_millis(200), "{gaps:?}");
    assert!(gaps[2] >= Duration::from_millis(400), "{gaps:?}");
    assert!(gaps[2] < Duration::from_secs(5), "{gaps:?}");
    task.abort();
}

/// A kind whose `spec` is required: BOOKMARKs (metadata only) must not be
/// decoded as it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, kubeset_client::Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    kind = "Gizmo",
    plural = "gizmos",
    namespaced,
    crate = "kubeset_client"
)]
struct Gizmo {
    #[serde(default)]
    metadata: ObjectMeta,
    spec: GizmoSpec,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct GizmoSpec {
    size: u32,
}

/// Serves Gizmos with an open schema (any spec is stored).
fn register_gizmos(server: &TestServer) {
    server
        .register_crd(serde_json::json!({
            "metadata": {"name": "gizmos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        }))
        .expect("crd");
}

#[tokio::test]
async fn bookmarks_do_not_need_the_kinds_required_fields() {
    let server = TestServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .start()
        .await
        .expect("server");
    register_gizmos(&server);
    let api: Api<Gizmo> = Api::namespaced(client(&server.urls()), "default");
    let g = |name: &str, size| Gizmo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: GizmoSpec { size },
    };
    api.create(&PostParams::default(), &g("a", 1))
        .await
        .expect("create");
    let mut s = Box::pin(watcher(api.clone(), fast()));
    let mut errors = 0;
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    // Periodic bookmarks (every 50 ms) flow throughout; no item may be an error.
    while seen.len() < 4 {
        if seen.len() == 3 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            api.create(&PostParams::default(), &g("b", 2))
                .await
                .expect("create");
        }
        let item = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("events in time")
            .expect("never ends");
        match item {
            Ok(ev) => seen.push(ev.map(|o| (o.metadata.name.unwrap_or_default(), o.spec.size))),
            Err(e) => {
                errors += 1;
                eprintln!("{e}");
            }
        }
    }
    assert_eq!(errors, 0);
    assert_eq!(
        seen,
        [
            Event::Init,
            Event::InitApply(("a".to_owned(), 1)),
            Event::InitDone,
            Event::Apply(("b".to_owned(), 2)),
        ]
    );
}

/// A Gizmo whose `spec.size` is a string: it does not decode as [`Gizmo`].
#[tokio::test]
async fn an_object_that_does_not_decode_is_reported_and_skipped() {
    let server = TestServer::start().await.expect("server");
    register_gizmos(&server);
    let c = client(&server.urls());
    let raw: Api<serde_json::Value> = Api::dynamic(
        c.clone(),
        &kubeset_client::dynamic::ApiResource::of::<Gizmo>(),
        Some("default"),
    );
    let put = |name: &'static str, size: serde_json::Value| {
        let raw = raw.clone();
        async move {
            raw.create(
                &PostParams::default(),
                &serde_json::json!({"metadata": {"name": name}, "spec": {"size": size}}),
            )
            .await
            .expect("create");
        }
    };
    put("bad-listed", "big".into()).await;
    put("good-listed", 1.into()).await;
    let api: Api<Gizmo> = Api::namespaced(c, "default");
    let store_writer = kubeset_runtime::Writer::<Gizmo>::default();
    let store = store_writer.store();
    let mut s = Box::pin(kubeset_runtime::reflector(
        store_writer,
        watcher(api, fast()),
    ));
    let mut errors = Vec::new();
    let mut applied = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut created_later = false;
    while !applied.contains(&"good-later".to_owned()) {
        if store.is_ready() && !created_later {
            created_later = true;
            put("bad-later", "huge".into()).await;
            put("good-later", 2.into()).await;
        }
        let item = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("events in time: a bad object must not stall the watch")
            .expect("never ends");
        match item {
            Ok(ev) => {
                if let Some(o) = ev.object() {
                    applied.push(o.metadata.name.clone().unwrap_or_default());
                }
            }
            Err(e) => errors.push(e),
        }
    }
    assert_eq!(applied, ["good-listed", "good-later"]);
    let reports: Vec<_> = errors
        .iter()
        .map(|e| match e {
            WatcherError::Decode {
                name,
                namespace,
                resource_version,
                path,
                ..
            } => {
                assert!(resource_version.is_some(), "{e}");
                assert_eq!(namespace.as_deref(), Some("default"));
                assert!(
                    e.to_string().contains(name.as_deref().unwrap_or("?")),
                    "the message names the object: {e}"
                );
                let reason = std::error::Error::source(e).map(ToString::to_string);
                (name.clone().unwrap_or_default(), path.clone(), reason)
            }
            other => panic!("unexpected error {other}"),
        })
        .collect();
    assert_eq!(reports.len(), 2, "{reports:?}");
    for ((name, path, reason), want) in reports.iter().zip(["bad-listed", "bad-later"]) {
        assert_eq!((name.as_str(), path.as_str()), (want, "spec.size"));
        assert!(
            reason
                .as_deref()
                .is_some_and(|r| r.contains("invalid type")),
            "{reason:?}"
        );
    }
    assert_eq!(store.len(), 2, "the cache holds the good objects only");
}
