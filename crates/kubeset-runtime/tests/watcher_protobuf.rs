//! The watcher in protobuf (feature `protobuf`) against the embedded
//! server: a reflector's store follows creates, changes and deletes read
//! from `;stream=watch` frames; a server that refuses protobuf (406) is
//! watched in JSON at once, without an error item.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::{DeleteParams, PostParams};
use kubeset_client::rest::content::WireFormat;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Api, Client};
use kubeset_runtime::{Backoff, InitialList, WatcherConfig, watcher};
use kubeset_testserver::TestServer;

use common::cm;

fn protobuf_client(server: &TestServer) -> Client {
    let config = RestConfig::new(server.url())
        .with_qps_burst(-1.0, 0)
        .with_request_deadline(Duration::from_secs(10))
        .with_wire_format(WireFormat::Protobuf);
    Client::new(RestClient::new(config).expect("client builds"), "default")
}

/// The next item of `events`: an error item, the stream's end or
/// `deadline` fails the test.
async fn next<S, T, E>(events: &mut S, deadline: tokio::time::Instant) -> T
where
    S: futures::Stream<Item = Result<T, E>> + Unpin,
    E: std::fmt::Debug,
{
    tokio::time::timeout_at(deadline, events.next())
        .await
        .expect("events within 30 s")
        .expect("the watcher never ends")
        .expect("no error item")
}

/// Reads `events` until `store` holds its initial state.
async fn until_ready<S, T, E>(
    events: &mut S,
    store: &kubeset_runtime::Store<ConfigMap>,
    deadline: tokio::time::Instant,
) where
    S: futures::Stream<Item = Result<T, E>> + Unpin,
    E: std::fmt::Debug,
{
    while !store.is_ready() {
        next(events, deadline).await;
    }
}

#[tokio::test]
async fn a_reflector_syncs_over_protobuf() {
    let server = TestServer::start().await.expect("test server starts");
    let c = protobuf_client(&server);
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "default");
    for name in ["a", "b"] {
        cms.create(&PostParams::default(), &cm("default", name, "1"))
            .await
            .unwrap();
    }
    let faults = server.replica(0).expect("one replica").faults();
    // The first watch (the streaming list) is refused in protobuf: asked
    // again in JSON at once. A JSON watcher would yield the 406.
    faults.fail_next(1, 406, None);
    let config = || {
        WatcherConfig::default().backoff(
            Backoff::default().with_bounds(Duration::from_millis(50), Duration::from_millis(200)),
        )
    };
    let writer = kubeset_runtime::Writer::<ConfigMap>::default();
    let store = writer.store();
    let mut events = Box::pin(kubeset_runtime::reflector(
        writer,
        watcher(cms.clone(), config()),
    ));
    let state = |store: &kubeset_runtime::Store<ConfigMap>| -> BTreeMap<String, String> {
        store
            .state()
            .iter()
            .map(|o| {
                let v = o.data.as_ref().and_then(|d| d.get("v")).cloned();
                (
                    o.metadata.name.clone().unwrap_or_default(),
                    v.unwrap_or_default(),
                )
            })
            .collect()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    until_ready(&mut events, &store, deadline).await;
    let want = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(state(&store), want(&[("a", "1"), ("b", "1")]));

    // The watch that follows is protobuf (nothing refuses it now).
    cms.create(&PostParams::default(), &cm("default", "c", "1"))
        .await
        .unwrap();
    let mut a = cms.get("a").await.unwrap();
    a.data = Some([("v".to_owned(), "2".to_owned())].into());
    cms.replace("a", &PostParams::default(), &a).await.unwrap();
    cms.delete("b", &DeleteParams::default()).await.unwrap();
    let target = want(&[("a", "2"), ("c", "1")]);
    while state(&store) != target {
        next(&mut events, deadline).await;
    }

    // A second watcher, nothing refused: its streaming list, ended by the
    // initial-events-end BOOKMARK read from protobuf, fills its store.
    let writer = kubeset_runtime::Writer::<ConfigMap>::default();
    let second = writer.store();
    let mut events = Box::pin(kubeset_runtime::reflector(writer, watcher(cms, config())));
    until_ready(&mut events, &second, deadline).await;
    assert_eq!(state(&second), target);
}

#[tokio::test]
async fn a_paginated_list_in_protobuf() {
    let server = TestServer::start().await.expect("test server starts");
    let c = protobuf_client(&server);
    let cms: Api<ConfigMap> = Api::namespaced(c, "default");
    let names = ["p1", "p2", "p3", "p4", "p5"];
    for name in names {
        cms.create(&PostParams::default(), &cm("default", name, "1"))
            .await
            .unwrap();
    }
    // Three pages of two. The first page is asked in protobuf and refused
    // (415): asked again in JSON at once, where a JSON watcher would yield
    // the 415. The next two pages are protobuf, their items kept as
    // objects of their own until the reflector takes them.
    server
        .replica(0)
        .expect("one replica")
        .faults()
        .fail_next(1, 415, None);
    let config = WatcherConfig::default()
        .initial_list(InitialList::Paginated)
        .page_size(2);
    let writer = kubeset_runtime::Writer::<ConfigMap>::default();
    let store = writer.store();
    let mut events = Box::pin(kubeset_runtime::reflector(writer, watcher(cms, config)));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    until_ready(&mut events, &store, deadline).await;
    let mut listed: Vec<String> = store
        .state()
        .iter()
        .map(|o| o.metadata.name.clone().unwrap_or_default())
        .collect();
    listed.sort();
    assert_eq!(listed, names);
    assert!(
        store
            .state()
            .iter()
            .all(|o| o.data.as_ref().and_then(|d| d.get("v")).map(String::as_str) == Some("1"))
    );
}
