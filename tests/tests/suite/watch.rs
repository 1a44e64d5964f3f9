//! Watch: event order, bookmarks, resuming from a resourceVersion, 410
//! Gone after an etcd compaction, and sendInitialEvents (WatchList).

use std::time::Duration;

use futures::StreamExt as _;
use kubeset::api::core::v1::{ConfigMap, Event};
use kubeset::params::{
    DeleteParams, ListParams, PatchParams, PostParams, VersionMatch, WatchParams,
};
use kubeset::rest::Verb;
use kubeset::{Api, Patch, WatchEvent, WatchStream};
use kubeset_tests::etcd;
use serde_json::json;

use crate::common::{connect, ok, typed};

/// The next event within a generous time, or `None` when the stream ended.
async fn next<T: serde::de::DeserializeOwned>(
    stream: &mut WatchStream<T>,
    what: &str,
) -> Option<WatchEvent<T>> {
    match tokio::time::timeout(Duration::from_secs(30), stream.next()).await {
        Ok(Some(Ok(e))) => Some(e),
        Ok(Some(Err(e))) => panic!("{what}: {}", kubeset_tests::error_chain(&e)),
        Ok(None) => None,
        Err(_) => panic!("{what}: no event within 30 s"),
    }
}

/// `(type, name, data.v)` of an event.
fn describe(e: &WatchEvent<ConfigMap>) -> (String, String, String) {
    let (t, cm) = match e {
        WatchEvent::Added(c) => ("ADDED", c),
        WatchEvent::Modified(c) => ("MODIFIED", c),
        WatchEvent::Deleted(c) => ("DELETED", c),
        WatchEvent::Bookmark(c) => ("BOOKMARK", c),
        WatchEvent::Error(e) => return ("ERROR".into(), e.message.clone(), String::new()),
    };
    let v = cm
        .data
        .as_ref()
        .and_then(|d| d.get("v"))
        .cloned()
        .unwrap_or_default();
    (
        t.to_owned(),
        cm.metadata.name.clone().unwrap_or_default(),
        v,
    )
}

fn cm(name: &str, v: &str) -> ConfigMap {
    typed(json!({"metadata": {"name": name}, "data": {"v": v}}))
}

fn rv_of(cm: &ConfigMap) -> String {
    cm.metadata.resource_version.clone().unwrap_or_default()
}

fn ev(t: &str, name: &str, v: &str) -> (String, String, String) {
    (t.to_owned(), name.to_owned(), v.to_owned())
}

#[tokio::test]
async fn watch_sees_every_change_in_order_then_a_bookmark() {
    let ctx = connect!("watch");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let start = ok("list", cms.list(&ListParams::default()).await);
    let start_rv = start.metadata.resource_version.clone().unwrap_or_default();

    // The server sends a bookmark ~2 s before a watch's timeout.
    let mut stream = ok(
        "watch",
        cms.watch(&WatchParams::default().bookmarks().timeout(6), &start_rv)
            .await,
    );
    ok(
        "create",
        cms.create(&PostParams::default(), &cm("w", "1")).await,
    );
    ok(
        "patch",
        cms.patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"v": "2"}})),
        )
        .await,
    );
    ok("delete", cms.delete("w", &DeleteParams::default()).await);

    let mut seen = Vec::new();
    let mut last_rv = String::new();
    let mut bookmark_rv = None;
    while let Some(e) = next(&mut stream, "watch").await {
        if let WatchEvent::Bookmark(b) = &e {
            bookmark_rv = Some(rv_of(b));
            continue;
        }
        if let WatchEvent::Added(c) | WatchEvent::Modified(c) | WatchEvent::Deleted(c) = &e {
            last_rv = rv_of(c);
        }
        seen.push(describe(&e));
    }
    assert_eq!(
        seen,
        vec![
            ev("ADDED", "w", "1"),
            ev("MODIFIED", "w", "2"),
            ev("DELETED", "w", "2")
        ]
    );
    let bookmark_rv = bookmark_rv.expect("a BOOKMARK before the watch timed out");
    let (b, l): (u64, u64) = (
        bookmark_rv.parse().expect("numeric rv"),
        last_rv.parse().expect("numeric rv"),
    );
    assert!(b >= l, "bookmark rv {b} is older than the last event's {l}");
}

#[tokio::test]
async fn watch_resumes_from_a_resource_version() {
    let ctx = connect!("resume");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let a = ok(
        "create a",
        cms.create(&PostParams::default(), &cm("a", "1")).await,
    );
    ok(
        "create b",
        cms.create(&PostParams::default(), &cm("b", "1")).await,
    );
    ok(
        "create c",
        cms.create(&PostParams::default(), &cm("c", "1")).await,
    );

    // From a's version: b and c, not a.
    let mut stream = ok(
        "watch from a",
        cms.watch(&WatchParams::default(), &rv_of(&a)).await,
    );
    let first = next(&mut stream, "resume").await.map(|e| describe(&e));
    let second = next(&mut stream, "resume").await;
    assert_eq!(first, Some(ev("ADDED", "b", "1")));
    let second = second.expect("c");
    assert_eq!(describe(&second), ev("ADDED", "c", "1"));
    let WatchEvent::Added(c) = second else {
        unreachable!()
    };
    drop(stream);

    // Changes made while nobody watches arrive when resuming from the last seen version.
    ok(
        "create d",
        cms.create(&PostParams::default(), &cm("d", "1")).await,
    );
    ok("delete a", cms.delete("a", &DeleteParams::default()).await);
    let mut stream = ok(
        "watch from c",
        cms.watch(&WatchParams::default(), &rv_of(&c)).await,
    );
    let got = [
        next(&mut stream, "resume 2").await.map(|e| describe(&e)),
        next(&mut stream, "resume 2").await.map(|e| describe(&e)),
    ];
    assert_eq!(
        got,
        [Some(ev("ADDED", "d", "1")), Some(ev("DELETED", "a", "1"))]
    );
}

#[tokio::test]
async fn compacted_resource_version_is_a_typed_410() {
    let ctx = connect!("gone");
    // Events bypass the watch cache, so an old version goes to etcd.
    let events: Api<Event> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let event: Event = typed(json!({
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": ctx.ns},
        "reason": "Test",
        "message": "before compaction",
        "type": "Normal"
    }));
    let created = ok(
        "create event",
        events.create(&PostParams::default(), &event).await,
    );
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    // A watch from rv starts at rv+1, and compacting at R keeps R: two more writes.
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "write 1",
        cms.create(&PostParams::default(), &cm("x1", "1")).await,
    );
    ok(
        "write 2",
        cms.create(&PostParams::default(), &cm("x2", "1")).await,
    );
    let compacted = etcd::compact(&ctx.kube.env.etcd_url)
        .await
        .unwrap_or_else(|e| panic!("compacting etcd: {}", kubeset_tests::error_chain(&e)));
    assert!(compacted > rv.parse::<i64>().unwrap_or(i64::MAX));

    // The watch answers 200 with one ERROR event carrying the 410 Status.
    let mut stream = ok("watch", events.watch(&WatchParams::default(), &rv).await);
    match next(&mut stream, "watch from a compacted rv").await {
        Some(WatchEvent::Error(e)) => {
            assert!(e.is_gone(), "{e:?}");
            assert_eq!(e.code, 410);
            assert_eq!(e.status_reason, kubeset::StatusReason::Expired);
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }

    // The resumable watch (failover layer) ends with the 410 as its error.
    let mut pairs = Vec::new();
    WatchParams::default().watch_pairs(&rv, &mut pairs);
    let mut req = events.request(Verb::Get, None);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    let mut resumable = ok("resumable watch", req.watch_resumable::<Event>().await);
    match tokio::time::timeout(Duration::from_secs(30), resumable.next()).await {
        Ok(Some(Err(e))) => assert!(e.is_gone(), "{e}"),
        other => panic!("expected the 410 as an error, got {other:?}"),
    }
    assert!(
        tokio::time::timeout(Duration::from_secs(30), resumable.next())
            .await
            .expect("ends")
            .is_none(),
        "a resumable watch ends after an ERROR event"
    );

    // A list at that exact version is an HTTP 410, typed.
    let err = events
        .list(&ListParams::default().at(&rv).matching(VersionMatch::Exact))
        .await
        .expect_err("list at a compacted version");
    assert!(err.is_gone(), "{err}");
    assert_eq!(err.api_error().map(|e| e.code), Some(410));
}

#[tokio::test]
async fn send_initial_events_then_the_end_bookmark() {
    let ctx = connect!("watchlist");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    for name in ["i1", "i2", "i3"] {
        ok(
            "create",
            cms.create(&PostParams::default(), &cm(name, "0")).await,
        );
    }
    let mut stream = ok(
        "watch-list",
        cms.watch(&WatchParams::default().initial_events(), "")
            .await,
    );
    let mut added = Vec::new();
    let end = loop {
        match next(&mut stream, "initial events").await {
            Some(WatchEvent::Added(c)) => added.push(c.metadata.name.unwrap_or_default()),
            Some(WatchEvent::Bookmark(b)) => break b,
            other => panic!("unexpected {other:?}"),
        }
    };
    added.sort();
    assert_eq!(added, ["i1", "i2", "i3"]);
    let annotations = end.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations
            .get("k8s.io/initial-events-end")
            .map(String::as_str),
        Some("true"),
        "{annotations:?}"
    );
    // Then it goes on as a normal watch.
    ok(
        "create i4",
        cms.create(&PostParams::default(), &cm("i4", "0")).await,
    );
    match next(&mut stream, "after the initial events").await {
        Some(WatchEvent::Added(c)) => assert_eq!(c.metadata.name.as_deref(), Some("i4")),
        other => panic!("unexpected {other:?}"),
    }
}
