//! Shared caches against the embedded server: one watch for several
//! controllers, reference counted.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::Api;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PostParams;
use kubeset_runtime::{Action, Controller, SharedCaches, StoreConfig, WatcherConfig};
use kubeset_testserver::TestServer;

use common::{client, cm, eventually};

type Seen = Arc<Mutex<BTreeSet<String>>>;

fn names(seen: &Seen) -> BTreeSet<String> {
    seen.lock().map(|s| s.clone()).unwrap_or_default()
}

#[tokio::test]
async fn two_controllers_share_one_cache_until_the_last_handle_goes() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    for n in ["a", "b"] {
        api.create(&PostParams::default(), &cm("default", n, "x"))
            .await
            .expect("create");
    }
    let caches = SharedCaches::new();
    let one = caches.get(api.clone(), WatcherConfig::default(), StoreConfig::new());
    let two = caches.get(api.clone(), WatcherConfig::default(), StoreConfig::new());
    let other = caches.get(
        api.clone(),
        WatcherConfig::default().labels("app=y"),
        StoreConfig::new(),
    );
    assert_eq!(
        caches.len(),
        2,
        "same selectors share; other selectors do not"
    );

    let run = |cache: &kubeset_runtime::SharedCache<ConfigMap>, seen: Seen| {
        let ctl = Controller::for_shared(cache);
        tokio::spawn(ctl.run_until_shutdown(
            |o: Arc<ConfigMap>, seen: Seen| async move {
                if let Ok(mut s) = seen.lock() {
                    s.insert(o.metadata.name.clone().unwrap_or_default());
                }
                Ok::<_, std::convert::Infallible>(Action::await_change())
            },
            seen,
        ))
    };
    let (seen1, seen2): (Seen, Seen) = Default::default();
    let t1 = run(&one, seen1.clone());
    let t2 = run(&two, seen2.clone());
    let both = |want: &[&str]| {
        let want: BTreeSet<String> = want.iter().map(|s| (*s).to_owned()).collect();
        let (seen1, seen2) = (seen1.clone(), seen2.clone());
        move || names(&seen1) == want && names(&seen2) == want
    };
    assert!(eventually(Duration::from_secs(20), both(&["a", "b"])).await);
    api.create(&PostParams::default(), &cm("default", "c", "x"))
        .await
        .expect("create");
    assert!(eventually(Duration::from_secs(20), both(&["a", "b", "c"])).await);
    let store = one.store();
    assert_eq!(store.len(), 3);
    let (a1, a2) = (
        store.get(&kubeset_runtime::ObjectKey::namespaced("default", "a")),
        two.store()
            .get(&kubeset_runtime::ObjectKey::namespaced("default", "a")),
    );
    assert!(
        Arc::ptr_eq(&a1.expect("a"), &a2.expect("a")),
        "one object, held once"
    );

    // A late subscriber sees the current state first.
    let mut late = Box::pin(two.subscribe());
    let mut initial = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(10), late.next())
        .await
        .expect("events")
    {
        if matches!(ev, kubeset_runtime::Event::InitDone) {
            break;
        }
        if let Some(o) = ev.object() {
            initial.push(o.metadata.name.clone().unwrap_or_default());
        }
    }
    initial.sort();
    assert_eq!(initial, ["a", "b", "c"]);

    drop(late);
    t1.abort();
    t2.abort();
    let _ = (t1.await, t2.await);
    drop((one, two, other, store));
    assert_eq!(caches.len(), 0, "the last handle stops the watch");
}

/// The objects of the first whole initial state a subscription yields.
async fn first_initial_state(
    events: &mut (impl futures::Stream<Item = kubeset_runtime::Event<Arc<ConfigMap>>> + Unpin),
) -> BTreeSet<String> {
    let mut objects = BTreeSet::new();
    let mut started = false;
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(60), events.next())
        .await
        .expect("events")
    {
        match ev {
            kubeset_runtime::Event::Init => {
                started = true;
                objects.clear();
            }
            kubeset_runtime::Event::InitApply(o) => {
                assert!(started, "an initial object before its Init");
                objects.insert(o.metadata.name.clone().unwrap_or_default());
            }
            kubeset_runtime::Event::InitDone => {
                assert!(started, "InitDone before its Init");
                return objects;
            }
            _ => {}
        }
    }
    panic!("the subscription ended before a whole initial state");
}

#[tokio::test]
async fn a_subscriber_that_joins_during_the_first_list_sees_every_object() {
    let server = TestServer::start().await.expect("server");
    let api: Api<ConfigMap> = Api::namespaced(client(&server.urls()), "default");
    let want: BTreeSet<String> = (0..150).map(|i| format!("cm-{i:03}")).collect();
    for n in &want {
        api.create(&PostParams::default(), &cm("default", n, "x"))
            .await
            .expect("create");
    }
    // One object per page: the first list takes 150 requests, so the
    // second subscriber most likely joins while it runs. Whenever it joins,
    // it must see a whole initial state.
    let caches = SharedCaches::new();
    let cache = caches.get(
        api.clone(),
        WatcherConfig::default().page_size(1),
        StoreConfig::new(),
    );
    let mut first = Box::pin(cache.subscribe());
    let mut seen_first_object = false;
    while !seen_first_object {
        let ev = tokio::time::timeout(Duration::from_secs(60), first.next())
            .await
            .expect("events")
            .expect("a first event");
        seen_first_object = matches!(ev, kubeset_runtime::Event::InitApply(_));
    }
    let mut late = Box::pin(cache.subscribe());
    assert_eq!(first_initial_state(&mut late).await, want);
}
