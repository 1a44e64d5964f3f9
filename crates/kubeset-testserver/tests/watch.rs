//! Watch semantics over real sockets.

mod common;

use std::time::{Duration, Instant};

use common::*;
use kubeset_testserver::TestServer;
use serde_json::json;

fn cm(name: &str, app: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "labels": {"app": app}}, "data": {"v": "1"}})
}

#[tokio::test]
async fn initial_state_then_changes() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    post(&c, &base, &cm("a", "x")).await;
    let mut w = Lines::open(&c, &format!("{base}?watch=true")).await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("a"))
    );
    assert_eq!(
        e["object"]["kind"], "ConfigMap",
        "watch objects carry their kind"
    );
    let (_, b) = post(&c, &base, &cm("b", "x")).await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("b"))
    );
    assert_eq!(rv(&e["object"]), rv(&b));
    patch(
        &c,
        &format!("{base}/b"),
        "application/merge-patch+json",
        &json!({"data": {"v": "2"}}),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "MODIFIED");
    assert_eq!(e["object"]["data"]["v"], "2");
    delete(&c, &format!("{base}/b")).await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "DELETED");
    assert_eq!(e["object"]["metadata"]["name"], "b");
}

#[tokio::test]
async fn resume_from_resource_version_and_selector_transitions() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (_, a) = post(&c, &base, &cm("a", "web")).await;
    // Changes after `a` was created, made before the watch starts.
    post(&c, &base, &cm("b", "web")).await;
    post(&c, &base, &cm("c", "db")).await;
    let mut w = Lines::open(
        &c,
        &format!(
            "{base}?watch=1&resourceVersion={}&labelSelector=app%3Dweb",
            rv(&a)
        ),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("b"))
    );
    // a leaves the selector: DELETED for this watcher, carrying the object
    // as it was (its old labels and data) at the change's resourceVersion,
    // as kube-apiserver sends it (checked against v1.35.4); c enters: ADDED.
    let (_, moved) = patch(
        &c,
        &format!("{base}/a"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "db"}}, "data": {"v": "2"}}),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("DELETED"), Some("a"))
    );
    assert_eq!(e["object"]["metadata"]["labels"]["app"], "web", "{e}");
    assert_eq!(e["object"]["data"]["v"], "1", "{e}");
    assert_eq!(rv(&e["object"]), rv(&moved));
    patch(
        &c,
        &format!("{base}/c"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "web"}}}),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("c"))
    );
    // Other namespaces and resources are not seen.
    post(
        &c,
        &format!("{}/api/v1/namespaces/kube-system/configmaps", s.url()),
        &cm("z", "web"),
    )
    .await;
    post(
        &c,
        &format!("{}/api/v1/namespaces/default/secrets", s.url()),
        &cm("s", "web"),
    )
    .await;
    post(&c, &base, &cm("d", "web")).await;
    let e = w.next().await.unwrap();
    assert_eq!(e["object"]["metadata"]["name"], "d");
}

#[tokio::test]
async fn too_old_resource_version_is_410_expired() {
    let s = TestServer::builder().history(5).start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let (_, first) = post(&c, &base, &cm("first", "x")).await;
    for i in 0..10 {
        post(&c, &base, &cm(&format!("n{i}"), "x")).await;
    }
    let mut w = Lines::open(
        &c,
        &format!("{base}?watch=true&resourceVersion={}", rv(&first)),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["kind"], "Status");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    assert!(
        e["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too old resource version")
    );
    assert!(w.next().await.is_none(), "the stream ends after the error");
    // A recent version still resumes.
    let recent = s.resource_version();
    let mut w = Lines::open(&c, &format!("{base}?watch=true&resourceVersion={recent}")).await;
    post(&c, &base, &cm("later", "x")).await;
    assert_eq!(
        w.next().await.unwrap()["object"]["metadata"]["name"],
        "later"
    );
}

#[tokio::test]
async fn send_initial_events_ends_with_annotated_bookmark_and_bookmarks_repeat() {
    let s = TestServer::builder()
        .bookmark_interval(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    post(&c, &base, &cm("a", "x")).await;
    post(&c, &base, &cm("b", "x")).await;
    let mut w = Lines::open(
        &c,
        &format!("{base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"),
    )
    .await;
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    let bm = w.next().await.unwrap();
    assert_eq!(bm["type"], "BOOKMARK");
    assert_eq!(
        bm["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(bm["object"]["kind"], "ConfigMap");
    // Periodic bookmarks carry the latest version and no annotation.
    let (_, c1) = post(&c, &base, &cm("c", "x")).await;
    assert_eq!(w.next_non_bookmark().await.unwrap()["type"], "ADDED");
    // A periodic bookmark may already be in flight; wait for one past `c`.
    loop {
        let bm = w.next().await.unwrap();
        assert_eq!(bm["type"], "BOOKMARK");
        assert!(bm["object"]["metadata"].get("annotations").is_none());
        if rv(&bm["object"]) >= rv(&c1) {
            break;
        }
    }
}

#[tokio::test]
async fn legacy_watch_paths() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    post(
        &c,
        &format!("{}/apis/apps/v1/namespaces/default/deployments", s.url()),
        // Valid as kube-apiserver validates it: a selector its template matches.
        &json!({"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}},
        }}),
    )
    .await;
    let mut w = Lines::open(
        &c,
        &format!(
            "{}/apis/apps/v1/watch/namespaces/default/deployments",
            s.url()
        ),
    )
    .await;
    assert_eq!(w.next().await.unwrap()["object"]["metadata"]["name"], "d");
    let mut w = Lines::open(
        &c,
        &format!(
            "{}/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=5",
            s.url()
        ),
    )
    .await;
    post(
        &c,
        &format!("{}/api/v1/namespaces/default/configmaps", s.url()),
        &cm("x", "y"),
    )
    .await;
    assert_eq!(w.next().await.unwrap()["object"]["metadata"]["name"], "x");
}

#[tokio::test]
async fn timeout_seconds_ends_the_stream() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let started = Instant::now();
    let w = Lines::open(
        &c,
        &format!(
            "{}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
            s.url()
        ),
    )
    .await;
    let (rest, errored) = w.drain_to_end().await;
    let took = started.elapsed();
    assert!(!errored, "clean end");
    assert!(rest.is_empty());
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test]
async fn watch_one_object_by_name_and_table_events() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    post(&c, &base, &cm("a", "x")).await;
    let resp = c
        .get(format!("{base}?watch=true&fieldSelector=metadata.name%3Db"))
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut buf = Vec::new();
    let mut resp = resp;
    post(&c, &base, &cm("a2", "x")).await;
    post(&c, &base, &cm("b", "x")).await;
    while !buf.contains(&b'\n') {
        let chunk = tokio::time::timeout(TIMEOUT, resp.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        buf.extend_from_slice(&chunk);
    }
    let line = buf.split(|b| *b == b'\n').next().unwrap();
    let e: serde_json::Value = serde_json::from_slice(line).unwrap();
    assert_eq!(e["type"], "ADDED");
    assert_eq!(e["object"]["kind"], "Table");
    assert_eq!(e["object"]["rows"][0]["cells"][0], "b");
}
