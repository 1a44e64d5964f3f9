//! Fault injection, TLS, token auth, the admin endpoint and the kubeconfig,
//! over real sockets.

mod common;

use std::time::{Duration, Instant};

use common::*;
use kubeset_testserver::{Mode, TestServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn cm(name: &str) -> Value {
    json!({"metadata": {"name": name}, "data": {"v": "1"}})
}

#[tokio::test]
async fn replicas_share_one_store() {
    let s = TestServer::builder().replicas(3).start().await.unwrap();
    let urls = s.urls();
    assert_eq!(urls.len(), 3);
    let ports: std::collections::BTreeSet<u16> =
        s.replicas().iter().map(|r| r.addr().port()).collect();
    assert_eq!(ports.len(), 3, "distinct ports");
    let c = client();
    let (code, _) = post(
        &c,
        &format!("{}/api/v1/namespaces/default/configmaps", urls[1]),
        &cm("shared"),
    )
    .await;
    assert_eq!(code, 201);
    for u in &urls {
        let (code, _) = get(
            &c,
            &format!("{u}/api/v1/namespaces/default/configmaps/shared"),
        )
        .await;
        assert_eq!(code, 200);
    }
}

#[tokio::test]
async fn down_refuses_connections_drops_watches_and_up_rebinds_the_same_port() {
    let s = TestServer::builder().replicas(2).start().await.unwrap();
    let c = client();
    let r0 = s.replica(0).unwrap();
    let f = r0.faults();
    let base0 = format!("{}/api/v1/namespaces/default/configmaps", r0.url());
    let w = Lines::open(&c, &format!("{base0}?watch=true")).await;

    f.down().await;
    assert_eq!(f.mode(), Mode::Down);
    let err = tokio::net::TcpStream::connect(r0.addr()).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    let (_, _errored) = w.drain_to_end().await; // ends instead of hanging
    // The other replica still serves, and writes made now are visible later.
    let base1 = format!("{}/api/v1/namespaces/default/configmaps", s.urls()[1]);
    let (code, _) = post(&c, &base1, &cm("while-down")).await;
    assert_eq!(code, 201);

    f.up().await.unwrap();
    assert_eq!(f.mode(), Mode::Up);
    assert_eq!(s.replica(0).unwrap().addr(), r0.addr());
    let (code, _) = get(&c, &format!("{base0}/while-down")).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn hang_accepts_but_never_answers_until_up() {
    let s = TestServer::start().await.unwrap();
    let f = s.faults(0).unwrap();
    let addr = s.replica(0).unwrap().addr();
    // An open keep-alive connection hangs on its next request too.
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    f.hang();
    assert_eq!(f.mode(), Mode::Hang);
    let quick = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = quick
        .get(format!("{}/version", s.url()))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(450));
    // TCP connects (the listener is open) but no bytes come back.
    let mut fresh = tokio::net::TcpStream::connect(addr).await.unwrap();
    fresh
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    conn.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), fresh.read(&mut buf))
            .await
            .is_err()
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), conn.read(&mut buf))
            .await
            .is_err()
    );
    f.up().await.unwrap();
    // The waiting request is answered once the replica resumes.
    let n = tokio::time::timeout(TIMEOUT, conn.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert!(
        std::str::from_utf8(&buf[..n])
            .unwrap()
            .starts_with("HTTP/1.1 200")
    );
    let (code, _) = get(&client(), &format!("{}/version", s.url())).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn latency_delays_requests() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    s.faults(0).unwrap().latency(Duration::from_millis(300));
    let started = Instant::now();
    let (code, _) = get(&c, &format!("{}/version", s.url())).await;
    assert_eq!(code, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
    s.faults(0).unwrap().latency(Duration::ZERO);
}

#[tokio::test]
async fn fail_next_answers_status_with_retry_after_then_recovers() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    s.faults(0)
        .unwrap()
        .fail_next(2, 429, Some(Duration::from_secs(1)));
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    for _ in 0..2 {
        let (code, headers, body) = send(&c, reqwest::Method::GET, &url, "", None).await;
        assert_eq!(code, 429);
        assert_eq!(headers.get("retry-after").unwrap(), "1");
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "TooManyRequests");
    }
    let (code, _) = get(&c, &url).await;
    assert_eq!(code, 200);
    s.faults(0).unwrap().fail_next(1, 503, None);
    let (code, headers, body) = send(&c, reqwest::Method::GET, &url, "", None).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (503, Some("ServiceUnavailable"))
    );
    assert!(headers.get("retry-after").is_none());
}

#[tokio::test]
async fn cut_watches_ends_streams_mid_line() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    post(&c, &base, &cm("a")).await;
    let mut w = Lines::open(&c, &format!("{base}?watch=true")).await;
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    s.faults(0).unwrap().cut_watches();
    let (rest, errored) = w.drain_to_end().await;
    assert!(!rest.is_empty(), "a partial line arrived");
    assert!(!rest.contains(&b'\n'), "and it is not terminated");
    assert!(serde_json::from_slice::<Value>(&rest).is_err());
    assert!(errored, "the body ends with an error, not a clean end");
    // New watches work again.
    let mut w = Lines::open(&c, &format!("{base}?watch=true")).await;
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
}

#[tokio::test]
async fn malformed_next_returns_broken_json() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    s.faults(0).unwrap().malformed_next(1);
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let resp = c.get(&url).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers().get("content-type").unwrap(),
        "application/json"
    );
    let bytes = resp.bytes().await.unwrap();
    assert!(serde_json::from_slice::<Value>(&bytes).is_err());
    let (code, l) = get(&c, &url).await;
    assert_eq!(code, 200);
    assert_eq!(l["kind"], "ConfigMapList");
}

#[tokio::test]
async fn admin_endpoint_controls_replicas() {
    let s = TestServer::builder()
        .replicas(2)
        .admin(true, 0)
        .start()
        .await
        .unwrap();
    let c = client();
    let admin = s.admin_url().unwrap();
    let (code, list) = get(&c, &format!("{admin}/replicas")).await;
    assert_eq!(code, 200);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[1]["url"], s.urls()[1]);
    assert_eq!(list[0]["mode"], "up");

    let (code, r) = post(&c, &format!("{admin}/replicas/1/down"), &json!({})).await;
    assert_eq!((code, r["mode"].as_str()), (200, Some("down")));
    let err = tokio::net::TcpStream::connect(s.replica(1).unwrap().addr())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    let (code, _) = post(&c, &format!("{admin}/replicas/1/up"), &json!({})).await;
    assert_eq!(code, 200);
    let (code, _) = get(&c, &format!("{}/version", s.urls()[1])).await;
    assert_eq!(code, 200);

    let (code, _) = post(
        &c,
        &format!("{admin}/replicas/0/fail?count=1&code=500&retryAfter=2"),
        &json!({}),
    )
    .await;
    assert_eq!(code, 200);
    let (code, headers, _) = send(
        &c,
        reqwest::Method::GET,
        &format!("{}/version", s.url()),
        "",
        None,
    )
    .await;
    assert_eq!(
        (
            code,
            headers.get("retry-after").map(|h| h.to_str().unwrap())
        ),
        (500, Some("2"))
    );
    let (code, _) = post(
        &c,
        &format!("{admin}/replicas/0/malformed?count=1"),
        &json!({}),
    )
    .await;
    assert_eq!(code, 200);
    let (_, broken) = get(&c, &format!("{}/version", s.url())).await;
    assert!(broken.is_string(), "not JSON: {broken}");
    let (code, r) = post(&c, &format!("{admin}/replicas/0/latency?ms=50"), &json!({})).await;
    assert_eq!((code, r["latencyMs"].as_u64()), (200, Some(50)));
    let (code, _) = post(&c, &format!("{admin}/replicas/0/reset"), &json!({})).await;
    assert_eq!(code, 200);
    let (code, _) = post(&c, &format!("{admin}/replicas/7/down"), &json!({})).await;
    assert_eq!(code, 404);
    let (code, _) = post(&c, &format!("{admin}/replicas/0/latency"), &json!({})).await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn tls_with_bearer_token() {
    let s = TestServer::builder()
        .replicas(2)
        .tls(true)
        .token(Some("s3cret".into()))
        .start()
        .await
        .unwrap();
    assert!(s.url().starts_with("https://127.0.0.1:"));
    let ca = s.ca_pem().unwrap();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
    let c = tls_client(ca, TIMEOUT);
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let resp = c.get(&url).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let st: Value = resp.json().await.unwrap();
    assert_eq!(
        (st["kind"].as_str(), st["reason"].as_str()),
        (Some("Status"), Some("Unauthorized"))
    );
    let resp = c.get(&url).bearer_auth("wrong").send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let resp = c.get(&url).bearer_auth("s3cret").send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.version(),
        reqwest::Version::HTTP_2,
        "ALPN negotiates h2"
    );
    // localhost is covered by the certificate too.
    let local = s.urls()[1].replace("127.0.0.1", "localhost");
    let resp = c.get(format!("{local}/healthz")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200, "health is public");
    // A client that does not trust the CA fails the handshake.
    let other = TestServer::builder().tls(true).start().await.unwrap();
    let untrusting = tls_client(other.ca_pem().unwrap(), TIMEOUT);
    assert!(
        untrusting
            .get(format!("{}/healthz", s.url()))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn kubeconfig_is_loadable_yaml() {
    let s = TestServer::builder()
        .replicas(3)
        .tls(true)
        .token(Some("tok\"en".into()))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    s.write_kubeconfig(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(v["kind"], "Config");
    assert_eq!(v["current-context"], "kubeset");
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 3);
    for (cl, url) in clusters.iter().zip(s.urls()) {
        assert_eq!(cl["cluster"]["server"], url.as_str());
        let ca = cl["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap();
        use base64::Engine;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .unwrap();
        assert_eq!(pem, s.ca_pem().unwrap().as_bytes());
    }
    assert_eq!(v["users"][0]["user"]["token"], "tok\"en");
    let ctx = v["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "kubeset")
        .unwrap();
    assert_eq!(ctx["context"]["cluster"], "kubeset-0");
    // Without TLS or token: no CA data, empty user.
    let plain = TestServer::start().await.unwrap();
    let v: Value = serde_norway::from_str(&plain.kubeconfig_yaml()).unwrap();
    assert!(
        v["clusters"][0]["cluster"]
            .get("certificate-authority-data")
            .is_none()
    );
    assert_eq!(v["users"][0]["user"], json!({}));
}

#[tokio::test]
async fn shutdown_closes_every_port() {
    let s = TestServer::builder()
        .replicas(2)
        .admin(true, 0)
        .start()
        .await
        .unwrap();
    let addrs: Vec<_> = s.replicas().iter().map(|r| r.addr()).collect();
    s.shutdown().await;
    for a in addrs {
        assert!(tokio::net::TcpStream::connect(a).await.is_err());
    }
}

#[tokio::test]
async fn a_watch_resumes_on_another_replica_without_losing_events() {
    let s = TestServer::builder().replicas(2).start().await.unwrap();
    let c = client();
    let urls = s.urls();
    let path = "/api/v1/namespaces/default/configmaps";
    let mut w = Lines::open(
        &c,
        &format!("{}{path}?watch=true&allowWatchBookmarks=true", urls[0]),
    )
    .await;
    post(&c, &format!("{}{path}", urls[1]), &cm("a")).await;
    let e = w.next_non_bookmark().await.unwrap();
    assert_eq!(e["object"]["metadata"]["name"], "a");
    let last = rv(&e["object"]);

    s.faults(0).unwrap().down().await;
    let _ = w.drain_to_end().await;
    post(&c, &format!("{}{path}", urls[1]), &cm("b")).await;
    patch(
        &c,
        &format!("{}{path}/a", urls[1]),
        "application/merge-patch+json",
        &json!({"data": {"v": "2"}}),
    )
    .await;

    let mut w = Lines::open(
        &c,
        &format!("{}{path}?watch=true&resourceVersion={last}", urls[1]),
    )
    .await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("b"))
    );
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("MODIFIED"), Some("a"))
    );
}

#[tokio::test]
async fn a_hung_replica_pauses_its_watches_until_up() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    let mut w = Lines::open(&c, &format!("{base}?watch=true")).await;
    let f = s.faults(0).unwrap();
    f.hang();
    // Write through the store directly: the hung replica cannot take requests.
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "during-hang", "namespace": "default"}}))
        .unwrap();
    // Nothing arrives on the open watch while hung.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(400), w.next())
            .await
            .is_err()
    );
    f.up().await.unwrap();
    let e = w.next().await.unwrap();
    assert_eq!(e["object"]["metadata"]["name"], "during-hang");
}
