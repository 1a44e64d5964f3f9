//! Issue 29, `kubeset serve` as a target, over real sockets: a slow
//! request head, a dripping body and a connection that never starts TLS
//! are closed; connections past the bound are closed at once; the admin
//! endpoint speaks TLS when the API does; a watcher that never reads is
//! ended while one that reads gets every event; HTTP/2 announces
//! kube-apiserver's 100 streams and closes a connection idle without
//! streams; requests past the in-flight limit get `429` and `Retry-After`.
//!
//! Timeouts are configured short; the tests assert only that a connection
//! was closed (or answered), never how fast.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Hang guard for "the server closes it": far longer than any configured
/// timeout here.
const GUARD: Duration = Duration::from_secs(30);
const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(600);

fn port_of(url: &str) -> String {
    url.rsplit("//").next().expect("host:port").to_owned()
}

async fn connect(url: &str) -> TcpStream {
    TcpStream::connect(port_of(url)).await.expect("connect")
}

/// Reads until the server closes the connection (EOF or reset); returns
/// what it sent. Panics if it is still open after [`GUARD`].
async fn read_until_closed<R: AsyncRead + Unpin>(stream: &mut R) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(GUARD, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the server kept the connection open");
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_head_is_closed() {
    let s = TestServer::builder()
        .header_timeout(SHORT)
        .idle_timeout(SHORT)
        .handshake_timeout(LONG)
        .body_timeout(LONG)
        .start()
        .await
        .unwrap();
    // Half a head, then nothing (slowloris).
    let mut half = connect(&s.url()).await;
    half.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
        .await
        .unwrap();
    // Nothing at all: hyper's HTTP/1-or-2 sniffing has no timeout of its own.
    let mut silent = connect(&s.url()).await;
    // One byte of the HTTP/2 preface.
    let mut preface = connect(&s.url()).await;
    preface.write_all(b"PRI * HT").await.unwrap();
    for (what, conn) in [
        ("half a head", &mut half),
        ("silence", &mut silent),
        ("part of the h2 preface", &mut preface),
    ] {
        let got = read_until_closed(conn).await;
        assert!(
            !got.starts_with(b"HTTP/1.1 200"),
            "{what}: answered {:?}",
            String::from_utf8_lossy(&got)
        );
    }
    // An idle keep-alive connection after a full request is closed too
    // (after the idle timeout).
    let mut idle = connect(&s.url()).await;
    idle.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_until_closed(&mut idle).await;
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // A normal client is unaffected.
    let (code, _) = get(&client(), &format!("{}/version", s.url())).await;
    assert_eq!(code, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dripping_body_is_cut_with_a_timeout_status() {
    let s = TestServer::builder()
        .header_timeout(LONG)
        .body_timeout(SHORT)
        .start()
        .await
        .unwrap();
    let (mut rd, mut wr) = connect(&s.url()).await.into_split();
    wr.write_all(
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n\
          Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a",
    )
    .await
    .unwrap();
    // One more byte now and then (1 byte/s in the report; faster here).
    let drip = async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if wr.write_all(b" ").await.is_err() {
                break;
            }
        }
    };
    let got = tokio::select! {
        got = read_until_closed(&mut rd) => got,
        () = drip => Vec::new(),
    };
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    let body = text.split("\r\n\r\n").nth(1).expect("a body");
    let status: Value = serde_json::from_str(body.trim()).expect("a Status");
    assert_eq!(status["reason"], "Timeout", "{status}");
    assert_eq!(status["code"], 504);
    // Nothing was created from the half body.
    let (code, _) = get(
        &client(),
        &format!("{}/api/v1/namespaces/default/configmaps/a", s.url()),
    )
    .await;
    assert_eq!(code, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_starts_tls_is_closed() {
    let s = TestServer::builder()
        .tls(true)
        .handshake_timeout(SHORT)
        .header_timeout(LONG)
        .start()
        .await
        .unwrap();
    let mut silent = connect(&s.url()).await;
    let mut partial = connect(&s.url()).await;
    // The first bytes of a TLS record header, then nothing.
    partial.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    for conn in [&mut silent, &mut partial] {
        let got = read_until_closed(conn).await;
        assert!(!got.starts_with(b"HTTP/"), "{got:?}");
    }
    // A real TLS client still gets in.
    let c = tls_client(s.ca_pem().expect("ca"), TIMEOUT);
    let (code, _) = get(&c, &format!("{}/version", s.url())).await;
    assert_eq!(code, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_bound_are_closed_at_once() {
    let s = TestServer::builder()
        .max_connections(3)
        .header_timeout(LONG)
        .start()
        .await
        .unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect(&s.url()).await);
    }
    // The accept loop takes them in order: wait until it holds all three.
    tokio::time::timeout(GUARD, async {
        while s.open_connections() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("three connections admitted");
    let mut extra = connect(&s.url()).await;
    let _ = extra
        .write_all(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    let got = read_until_closed(&mut extra).await;
    assert!(got.is_empty(), "answered past the bound: {got:?}");
    // Held connections still work, and a freed slot is taken again.
    held[0]
        .write_all(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let got = read_until_closed(&mut held[0]).await;
    assert!(got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    drop(held);
    tokio::time::timeout(GUARD, async {
        while s.open_connections() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("slots freed");
    let (code, _) = get(&client(), &format!("{}/version", s.url())).await;
    assert_eq!(code, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_endpoint_is_tls_when_the_api_is() {
    const TOKEN: &str = "admin-tls-token";
    let s = TestServer::builder()
        .tls(true)
        .token(Some(TOKEN.into()))
        .admin(true, 0)
        .start()
        .await
        .unwrap();
    let admin = s.admin_url().expect("admin url");
    assert!(admin.starts_with("https://"), "{admin}");
    // Plain HTTP gets no HTTP answer (and so the token never crosses in
    // clear).
    let mut plain = connect(&admin).await;
    plain
        .write_all(
            format!("GET /kubeconfig HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let got = read_until_closed(&mut plain).await;
    assert!(
        !got.starts_with(b"HTTP/"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // Over TLS with the API's CA: the same endpoints, behind the token.
    let c = tls_client(s.ca_pem().expect("ca"), TIMEOUT);
    let resp = c
        .get(format!("{admin}/kubeconfig"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("admin over TLS");
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.text().await.unwrap().contains(TOKEN));
    let resp = c.get(format!("{admin}/replicas")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // Without TLS the endpoint stays plain HTTP.
    let plain_server = TestServer::builder().admin(true, 0).start().await.unwrap();
    let url = plain_server.admin_url().expect("admin url");
    assert!(url.starts_with("http://"), "{url}");
    let (code, _) = get(&client(), &format!("{url}/healthz")).await;
    assert_eq!(code, 200);
}

/// A ConfigMap of about `size` bytes.
fn configmap(name: &str, size: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"blob": "x".repeat(size)},
    })
}

/// Reads a watch until it has seen `want` (ADDED events, each once).
async fn read_names(url: String, want: BTreeSet<String>) -> BTreeSet<String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let c = reqwest::Client::builder().build().expect("client");
    let resp = c.get(&url).send().await.expect("watch");
    assert_eq!(resp.status().as_u16(), 200);
    let mut chunks = resp.bytes_stream();
    let mut seen = BTreeSet::new();
    let mut buf = Vec::new();
    while seen != want {
        let chunk = chunks.next().await.expect("stream open").expect("chunk");
        // Scan only the new bytes: a reader that rescans a 900 KB line per
        // 4 KiB chunk falls behind and is (rightly) ended as slow.
        let from = buf.len();
        buf.extend_from_slice(&chunk);
        let Some(nl) = buf[from..].iter().rposition(|b| *b == b'\n') else {
            continue;
        };
        let rest = buf.split_off(from + nl + 1);
        let lines = std::mem::replace(&mut buf, rest);
        for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let ev: Value = serde_json::from_slice(line).expect("event");
            assert_eq!(ev["type"], "ADDED", "{}", ev["type"]);
            let name = ev["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(seen.insert(name.clone()), "{name} twice");
        }
    }
    seen
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(GUARD, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: not after {GUARD:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_never_reads_is_ended_and_a_reader_gets_every_event() {
    let s = TestServer::builder()
        .watch_queue_bytes(64 * 1024)
        .slow_watcher_timeout(Duration::from_secs(2))
        .start()
        .await
        .unwrap();
    // More than the kernel's socket buffers and hyper's can hold for a
    // client that does not read: 12 × 900 KB.
    for i in 0..12 {
        s.create(configmap(&format!("big-{i}"), 900_000)).unwrap();
    }
    let watch = format!(
        "{}/api/v1/namespaces/default/configmaps?watch=true",
        s.url()
    );
    // The stuck watcher: a small receive window, never read.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut stuck = sock
        .connect(port_of(&s.url()).parse().unwrap())
        .await
        .unwrap();
    stuck
        .write_all(
            b"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await
        .unwrap();
    // The reader, on its own connection, reading all along (a client
    // without a total timeout: the stream is long-lived).
    let want: BTreeSet<String> = (0..12)
        .map(|i| format!("big-{i}"))
        .chain((0..20).map(|i| format!("small-{i}")))
        .collect();
    let reader = tokio::spawn(read_names(watch, want.clone()));
    wait_for("two watches", || s.open_watches() == 2).await;
    // The stuck one is ended (only the reader is left) ...
    wait_for("the stuck watcher ended", || s.open_watches() == 1).await;
    // ... while the reader gets every initial object and every change
    // made after, each once.
    for i in 0..20 {
        s.create(configmap(&format!("small-{i}"), 100)).unwrap();
    }
    let seen = tokio::time::timeout(GUARD, reader)
        .await
        .expect("every event")
        .expect("reader");
    assert_eq!(seen, want);
    // The stuck connection was closed by the server: reading it now
    // drains what the kernel held, then ends.
    let got = read_until_closed(&mut stuck).await;
    assert!(got.starts_with(b"HTTP/1.1 200"));
}

/// A response's body read to its end (hang-guarded).
async fn h2_body(resp: http::Response<h2::RecvStream>) -> Vec<u8> {
    let mut body = resp.into_body();
    let mut got = Vec::new();
    tokio::time::timeout(GUARD, async {
        while let Some(chunk) = body.data().await {
            let chunk = chunk.expect("a data frame");
            let _ = body.flow_control().release_capacity(chunk.len());
            got.extend_from_slice(&chunk);
        }
    })
    .await
    .expect("the body ended");
    got
}

/// `GET path` on an HTTP/2 connection: the response head.
async fn h2_get(
    send: &h2::client::SendRequest<bytes::Bytes>,
    url: &str,
    path: &str,
) -> http::Response<h2::RecvStream> {
    let req = http::Request::get(format!("{url}{path}"))
        .body(())
        .expect("a request");
    let mut send = send.clone().ready().await.expect("a stream");
    let (resp, _) = send.send_request(req, true).expect("sent");
    tokio::time::timeout(GUARD, resp)
        .await
        .expect("answered")
        .expect("a response")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_announces_kube_apiservers_streams_and_closes_a_connection_idle_without_streams() {
    let s = TestServer::builder()
        .idle_timeout(SHORT)
        .header_timeout(LONG)
        .start()
        .await
        .unwrap();
    let url = s.url();
    let (send, conn) = h2::client::handshake(connect(&url).await)
        .await
        .expect("an HTTP/2 connection");
    let conn = tokio::spawn(conn);
    let version = h2_get(&send, &url, "/version").await;
    assert_eq!(version.status(), 200);
    h2_body(version).await;
    // kube-apiserver's 100 (hyper's default is 200).
    assert_eq!(send.current_max_send_streams(), 100);
    // An open watch stream keeps the connection past the idle timeout.
    let watch = h2_get(
        &send,
        &url,
        "/api/v1/namespaces/default/configmaps?watch=true",
    )
    .await;
    assert_eq!(watch.status(), 200);
    tokio::time::sleep(SHORT * 4).await;
    let again = h2_get(&send, &url, "/version").await;
    assert_eq!(
        again.status(),
        200,
        "the connection with a watch open was closed"
    );
    h2_body(again).await;
    // Without it (the stream reset), the server sends GOAWAY and closes.
    // `send` stays: the client would close a connection it can no longer use.
    drop(watch);
    let ended = tokio::time::timeout(GUARD, conn).await;
    assert!(ended.is_ok(), "the idle HTTP/2 connection stayed open");
    drop(send);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_the_in_flight_limit_are_answered_429_with_retry_after() {
    let s = TestServer::builder()
        .max_mutating_requests_inflight(1)
        .max_requests_inflight(1)
        .header_timeout(LONG)
        .body_timeout(LONG)
        .start()
        .await
        .unwrap();
    let url = s.url();
    let c = client();
    // Watches are long-running and not counted against the one read-only slot.
    let mut watches = Vec::new();
    for _ in 0..3 {
        let w = c
            .get(format!(
                "{url}/api/v1/namespaces/default/configmaps?watch=true"
            ))
            .send()
            .await
            .expect("a watch");
        assert_eq!(w.status(), 200);
        watches.push(w);
    }
    // A create whose body is still coming holds the one mutating slot.
    let mut held = connect(&url).await;
    held.write_all(
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n\
          Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a",
    )
    .await
    .unwrap();
    let create = |name: &str| {
        c.post(format!("{url}/api/v1/namespaces/default/configmaps"))
            .json(&json!({"metadata": {"name": name}}))
            .send()
    };
    // Once the server has taken it, another create is refused at once.
    let refused = tokio::time::timeout(GUARD, async {
        loop {
            let r = create("a").await.expect("an answer");
            if r.status() == 429 {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("no 429 past the in-flight limit");
    let header = |r: &reqwest::Response, h: &str| {
        r.headers()
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header(&refused, "retry-after"), "1");
    assert_eq!(
        header(&refused, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        refused.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );
    // Reads have their own slots; the watches took none.
    let (code, _) = get(&c, &format!("{url}/api/v1/namespaces/default/configmaps")).await;
    assert_eq!(code, 200);
    // The slot is free again once that request is gone.
    drop(held);
    let created = tokio::time::timeout(GUARD, async {
        loop {
            let r = create("b").await.expect("an answer");
            if r.status() != 429 {
                return r.status();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the slot was never given back");
    assert_eq!(created, 201);
    drop(watches);
}
