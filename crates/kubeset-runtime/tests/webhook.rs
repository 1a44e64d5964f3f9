//! The webhook server over real TLS sockets: bounds (body size, handler
//! deadline, malformed reviews), typed validate/mutate answers, certificate
//! reload (bad files kept out, good ones swapped in, open connections
//! kept and then closed after their response), graceful shutdown, and
//! `caBundle` registration against the embedded API server.

mod common;

use kubeset_runtime as rt;

#[path = "webhook_scenarios/certs.rs"]
mod certs;
use certs::TestCerts;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64_free::decode_base64;
use kubeset_client::Api;
use kubeset_client::admission::{AdmissionRequest, Operation};
use kubeset_client::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::PostParams;
use kubeset_runtime::webhook::{
    Denied, LeafCert, Mutated, SelfSignedCa, SideEffects, Webhook, WebhookServer, set_ca_bundle,
};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_util::sync::CancellationToken;

/// A base64 decoder for the test's reading of `patch` (the crate under
/// test encodes with the models' `ByteString`; decoding it the same way
/// would prove nothing).
mod base64_free {
    pub fn decode_base64(s: &str) -> Vec<u8> {
        let value = |c: u8| -> u32 {
            match c {
                b'A'..=b'Z' => u32::from(c - b'A'),
                b'a'..=b'z' => u32::from(c - b'a') + 26,
                b'0'..=b'9' => u32::from(c - b'0') + 52,
                b'+' => 62,
                b'/' => 63,
                _ => panic!("not base64: {c}"),
            }
        };
        let mut out = Vec::new();
        let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
        for chunk in bytes.chunks(4) {
            let mut n = 0u32;
            for (i, &c) in chunk.iter().enumerate() {
                n |= value(c) << (18 - 6 * i);
            }
            let take = chunk.len() * 6 / 8;
            out.extend_from_slice(&n.to_be_bytes()[1..1 + take]);
        }
        out
    }
}

struct Running {
    addr: std::net::SocketAddr,
    stats: kubeset_runtime::webhook::TlsStats,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

async fn start(webhook: Webhook, certs: &TestCerts) -> Running {
    let server: WebhookServer = webhook
        .bind("127.0.0.1:0", certs.files())
        .await
        .expect("webhook binds");
    let stop = CancellationToken::new();
    Running {
        addr: server.local_addr(),
        stats: server.tls_stats(),
        task: tokio::spawn(server.run(stop.clone().cancelled_owned())),
        stop,
    }
}

/// One TLS connection trusting only the test's CA.
async fn connect(addr: std::net::SocketAddr, ca_pem: &str) -> TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA added");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.expect("tcp connect");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("TLS handshake")
}

fn served_leaf(stream: &TlsStream<TcpStream>) -> Vec<u8> {
    stream
        .get_ref()
        .1
        .peer_certificates()
        .expect("peer certificates")[0]
        .to_vec()
}

fn leaf_der(leaf: &LeafCert) -> Vec<u8> {
    CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes())
        .expect("leaf PEM")
        .to_vec()
}

#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn closes(&self) -> bool {
        self.head
            .to_ascii_lowercase()
            .contains("\r\nconnection: close")
    }
}

/// POSTs `body` (chunked when `chunked`) and reads one response.
async fn post(stream: &mut TlsStream<TcpStream>, path: &str, body: &[u8], chunked: bool) -> Answer {
    let mut request =
        format!("POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n");
    if chunked {
        request.push_str("transfer-encoding: chunked\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        for piece in body.chunks(1000) {
            let size = format!("{:x}\r\n", piece.len());
            stream.write_all(size.as_bytes()).await.expect("write");
            stream.write_all(piece).await.expect("write");
            stream.write_all(b"\r\n").await.expect("write");
        }
        // The server may answer 413 before the last chunk; a failed
        // write of the terminator is then expected.
        let _ = stream.write_all(b"0\r\n\r\n").await;
    } else {
        request.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        stream.write_all(request.as_bytes()).await.expect("write");
        let _ = stream.write_all(body).await;
    }
    read_answer(stream).await
}

async fn read_answer(stream: &mut TlsStream<TcpStream>) -> Answer {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.expect("read head");
        assert!(
            n > 0,
            "connection closed before a response: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status: u16 = head[9..12].parse().expect("status code");
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .expect("content-length");
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.expect("read body");
        assert!(n > 0, "connection closed inside the body");
        body.extend_from_slice(&chunk[..n]);
    }
    Answer { status, head, body }
}

fn review(operation: &str, object: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "uid-1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "cm",
            "namespace": "ns",
            "operation": operation,
            "userInfo": {"username": "tester"},
            "object": object,
            "dryRun": false
        }
    }))
    .expect("review JSON")
}

fn cm_json(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}, "data": data})
}

fn typed_webhook() -> Webhook {
    Webhook::new()
        .validate::<ConfigMap, _>("/validate", |req: AdmissionRequest<ConfigMap>| async move {
            let cm = req.object.unwrap_or_default();
            if cm.data.unwrap_or_default().contains_key("password") {
                return Err(Denied::new("no passwords in ConfigMaps").with_warning("use a Secret"));
            }
            Ok(vec!["validated".to_owned()])
        })
        .mutate_for::<ConfigMap, _>(
            "/mutate",
            &[Operation::Create],
            |req: AdmissionRequest<ConfigMap>| async move {
                let mut cm = req.object.unwrap_or_default();
                cm.metadata
                    .labels
                    .get_or_insert_default()
                    .insert("app.kubernetes.io/team".to_owned(), "a".to_owned());
                Ok(Mutated::new(cm).with_warning("labelled"))
            },
        )
}

#[tokio::test]
async fn validate_and_mutate_answer_typed_reviews() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let server = start(typed_webhook(), &certs).await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;

    let denied = post(
        &mut conn,
        "/validate",
        &review("CREATE", cm_json(json!({"password": "x"}))),
        false,
    )
    .await;
    assert_eq!(denied.status, 200, "{}", denied.text());
    let response = &denied.json()["response"];
    assert_eq!(response["uid"], "uid-1");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    assert_eq!(response["status"]["message"], "no passwords in ConfigMaps");
    assert_eq!(response["warnings"], json!(["use a Secret"]));

    let allowed = post(
        &mut conn,
        "/validate",
        &review("CREATE", cm_json(json!({"k": "v"}))),
        false,
    )
    .await;
    let response = &allowed.json()["response"];
    assert_eq!(response["allowed"], true);
    assert_eq!(response["warnings"], json!(["validated"]));
    assert!(response.get("patch").is_none());

    let mutated = post(
        &mut conn,
        "/mutate",
        &review("CREATE", cm_json(json!({"k": "v"}))),
        false,
    )
    .await;
    let response = &mutated.json()["response"];
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    let patch: Value =
        serde_json::from_slice(&decode_base64(response["patch"].as_str().expect("patch")))
            .expect("patch JSON");
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/metadata/labels", "value": {"app.kubernetes.io/team": "a"}}])
    );

    // UPDATE is not registered at /mutate: denied, naming what is missing.
    let unhandled = post(
        &mut conn,
        "/mutate",
        &review("UPDATE", cm_json(json!({}))),
        false,
    )
    .await;
    let message = unhandled.json()["response"]["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("no handler for UPDATE of ConfigMap"),
        "{message}"
    );

    let missing = post(&mut conn, "/nowhere", b"{}", false).await;
    assert_eq!(missing.status, 404);
    server.stop.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn bodies_over_the_limit_are_413_declared_or_chunked() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let server = start(typed_webhook().max_body_size(4096), &certs).await;
    let big = review("CREATE", cm_json(json!({"k": "x".repeat(8192)})));

    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let declared = post(&mut conn, "/validate", &big, false).await;
    assert_eq!(declared.status, 413);
    assert!(
        declared.text().contains("limit of 4096 bytes"),
        "{}",
        declared.text()
    );

    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let chunked = post(&mut conn, "/validate", &big, true).await;
    assert_eq!(chunked.status, 413);
    assert!(
        chunked.text().contains("limit of 4096 bytes"),
        "{}",
        chunked.text()
    );

    // Under the limit, the same server answers.
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let small = post(
        &mut conn,
        "/validate",
        &review("CREATE", cm_json(json!({}))),
        true,
    )
    .await;
    assert_eq!(small.status, 200, "{}", small.text());
    server.stop.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn a_handler_past_its_deadline_is_denied_with_a_message() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let webhook = Webhook::new()
        .deadline(Duration::from_millis(300))
        .validate::<ConfigMap, _>("/slow", |_req: AdmissionRequest<ConfigMap>| async {
            std::future::pending::<()>().await;
            Ok(vec![])
        });
    let server = start(webhook, &certs).await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let answer = post(
        &mut conn,
        "/slow",
        &review("CREATE", cm_json(json!({}))),
        false,
    )
    .await;
    assert_eq!(answer.status, 200);
    let response = &answer.json()["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["uid"], "uid-1");
    let message = response["status"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("did not answer within 300ms"), "{message}");
    server.stop.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn malformed_reviews_are_400_naming_the_path() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let server = start(typed_webhook(), &certs).await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;

    let bad_object = post(
        &mut conn,
        "/validate",
        &review("CREATE", cm_json(json!(["not", "a", "map"]))),
        false,
    )
    .await;
    assert_eq!(bad_object.status, 400);
    assert!(
        bad_object.text().contains("at request.object.data"),
        "{}",
        bad_object.text()
    );

    let bad_operation = post(
        &mut conn,
        "/validate",
        &review("SMASH", cm_json(json!({}))),
        false,
    )
    .await;
    assert_eq!(bad_operation.status, 400);
    assert!(
        bad_operation.text().contains("at request.operation"),
        "{}",
        bad_operation.text()
    );

    let not_json = post(&mut conn, "/validate", b"{\"request\": ", false).await;
    assert_eq!(not_json.status, 400, "{}", not_json.text());
    server.stop.cancel();
    server.task.await.expect("server task");
}

/// Writes `bytes` to `path` by rename (as a Secret volume update does).
fn replace_file(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("swap");
    std::fs::write(&tmp, bytes).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

#[tokio::test]
async fn certificates_reload_without_dropping_open_connections() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let first = std::fs::read_to_string(&certs.cert).expect("cert");
    let server = start(typed_webhook(), &certs).await;
    let body = review("CREATE", cm_json(json!({})));

    let mut old_conn = connect(server.addr, certs.ca.cert_pem()).await;
    let before = post(&mut old_conn, "/validate", &body, false).await;
    assert_eq!(before.status, 200);
    assert!(!before.closes());

    // A certificate file that is not PEM: the old pair stays, the error names the file.
    replace_file(&certs.cert, b"not a certificate");
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    assert_eq!(
        served_leaf(&conn),
        CertificateDer::from_pem_slice(first.as_bytes())
            .unwrap()
            .to_vec()
    );
    assert_eq!(post(&mut conn, "/validate", &body, false).await.status, 200);
    let error = server.stats.last_error().expect("a reload error");
    assert!(error.contains("tls.crt"), "{error}");
    assert_eq!(server.stats.generation(), 0);

    // A certificate whose key is another one: kept out too.
    let stray = certs.ca.issue(&["127.0.0.1"]).expect("leaf");
    replace_file(&certs.cert, stray.cert_pem.as_bytes());
    let _conn = connect(server.addr, certs.ca.cert_pem()).await;
    let error = server.stats.last_error().expect("a reload error");
    assert!(error.contains("does not fit the certificate"), "{error}");
    assert_eq!(server.stats.generation(), 0);
    assert_eq!(server.stats.failed_reloads(), 2);

    // A good pair: new connections get it.
    let leaf = certs.rotate();
    let mut new_conn = connect(server.addr, certs.ca.cert_pem()).await;
    assert_eq!(served_leaf(&new_conn), leaf_der(&leaf));
    assert_eq!(server.stats.generation(), 1);
    let fresh = post(&mut new_conn, "/validate", &body, false).await;
    assert_eq!(fresh.status, 200);
    assert!(!fresh.closes());

    // The connection made with the old certificate still works, and is
    // told to close after this answer.
    let after = post(&mut old_conn, "/validate", &body, false).await;
    assert_eq!(after.status, 200);
    assert_eq!(after.json()["response"]["allowed"], true);
    assert!(after.closes(), "{}", after.head);
    let handshakes = server.stats.handshakes_per_generation();
    assert_eq!(handshakes.len(), 2);
    assert!(handshakes[1] >= 1, "{handshakes:?}");
    server.stop.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn shutdown_answers_the_request_in_flight_first() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let (entered_tx, entered_rx) = tokio::sync::oneshot::channel::<()>();
    let entered = Arc::new(std::sync::Mutex::new(Some(entered_tx)));
    let release = Arc::new(tokio::sync::Notify::new());
    let (entered2, release2) = (entered.clone(), release.clone());
    let webhook = Webhook::new().validate::<ConfigMap, _>(
        "/hold",
        move |_req: AdmissionRequest<ConfigMap>| {
            let entered = entered2.clone();
            let release = release2.clone();
            async move {
                let released = release.notified();
                if let Some(tx) = entered.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                released.await;
                Ok(vec![])
            }
        },
    );
    let server = start(webhook, &certs).await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let body = review("CREATE", cm_json(json!({})));
    let request = tokio::spawn(async move { post(&mut conn, "/hold", &body, false).await });
    entered_rx.await.expect("the handler runs");
    server.stop.cancel();
    release.notify_one();
    let answer = request.await.expect("request task");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["response"]["allowed"], true);
    server.task.await.expect("server stops");
}

#[tokio::test]
async fn ca_bundle_is_set_on_every_webhook_of_a_configuration() {
    let api_server = kubeset_testserver::TestServer::start()
        .await
        .expect("server starts");
    let client = common::client(&api_server.urls());
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "ca-bundle-test"},
        "webhooks": (["a", "b"].map(|n| json!({
            "name": format!("{n}.example.com"),
            "clientConfig": {"url": "https://127.0.0.1:1/validate"},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        })))
    }))
    .expect("configuration");
    configs
        .create(&PostParams::default(), &config)
        .await
        .expect("create");

    let ca = SelfSignedCa::generate("bundle-ca").expect("CA");
    let stored =
        set_ca_bundle::<ValidatingWebhookConfiguration>(&client, "ca-bundle-test", ca.cert_pem())
            .await
            .expect("caBundle set");
    let read = configs.get("ca-bundle-test").await.expect("get");
    assert_eq!(read, stored);
    for webhook in read.webhooks.expect("webhooks") {
        let bundle = webhook.client_config.ca_bundle.expect("caBundle").0;
        assert_eq!(bundle, ca.cert_pem().as_bytes());
    }
}

#[tokio::test]
async fn dry_runs_are_refused_by_paths_with_side_effects_and_panics_are_denials() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let webhook = Webhook::new()
        .validate::<ConfigMap, _>("/audit", |_req: AdmissionRequest<ConfigMap>| async {
            Ok(vec!["recorded".to_owned()])
        })
        .side_effects("/audit", SideEffects::Some)
        .validate::<ConfigMap, _>("/dry", |req: AdmissionRequest<ConfigMap>| async move {
            Ok(vec![format!("dry_run={}", req.dry_run)])
        })
        .validate::<ConfigMap, _>("/panics", |_req: AdmissionRequest<ConfigMap>| async {
            panic!("handler bug");
        });
    let server = start(webhook, &certs).await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    let mut dry: Value = serde_json::from_slice(&review("CREATE", cm_json(json!({})))).unwrap();
    dry["request"]["dryRun"] = json!(true);
    let dry = serde_json::to_vec(&dry).unwrap();

    let refused = post(&mut conn, "/audit", &dry, false).await.json();
    assert_eq!(refused["response"]["allowed"], false);
    let message = refused["response"]["status"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("has side effects and refuses a dry-run request"),
        "{message}"
    );
    let wet = post(
        &mut conn,
        "/audit",
        &review("CREATE", cm_json(json!({}))),
        false,
    )
    .await
    .json();
    assert_eq!(wet["response"]["warnings"], json!(["recorded"]));

    let seen = post(&mut conn, "/dry", &dry, false).await.json();
    assert_eq!(seen["response"]["warnings"], json!(["dry_run=true"]));

    let panicked = post(&mut conn, "/panics", &dry, false).await.json();
    assert_eq!(panicked["response"]["allowed"], false);
    let message = panicked["response"]["status"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("the webhook handler at /panics failed"),
        "{message}"
    );
    server.stop.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn a_body_that_does_not_arrive_is_408() {
    let certs = TestCerts::new("webhook-test-ca", &["127.0.0.1", "localhost"]);
    let server = start(
        typed_webhook().body_timeout(Duration::from_millis(300)),
        &certs,
    )
    .await;
    let mut conn = connect(server.addr, certs.ca.cert_pem()).await;
    // Headers promising 100 bytes, then 10 of them and nothing more.
    let head =
        "POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n{\"request\"";
    conn.write_all(head.as_bytes()).await.expect("write");
    let answer = read_answer(&mut conn).await;
    assert_eq!(answer.status, 408);
    assert!(
        answer.text().contains("did not arrive within 300ms"),
        "{}",
        answer.text()
    );
    server.stop.cancel();
    server.task.await.expect("server task");
}
