//! The recorder's core/v1 fallback, against a scripted loopback API server
//! that does not serve `events.k8s.io` (the embedded server and
//! kube-apiserver both do).

mod common;

use std::sync::{Arc, Mutex};

use kubeset_client::api::core::v1::ObjectReference;
use kubeset_runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

type Log = Arc<Mutex<Vec<(String, String, Value)>>>;

/// Reads one request (headers, then `content-length` bytes of body).
async fn read_request(conn: &mut TcpStream) -> Option<(String, String, Value)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut words = head.split_whitespace();
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    Some((
        method,
        path.split('?').next().unwrap_or_default().to_owned(),
        body,
    ))
}

/// 404 (no Status body, as for an unserved group) for events.k8s.io;
/// core/v1 Events are echoed back.
async fn serve(listener: TcpListener, log: Log) {
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            return;
        };
        let log = log.clone();
        tokio::spawn(async move {
            while let Some((method, path, body)) = read_request(&mut conn).await {
                log.lock()
                    .expect("lock")
                    .push((method.clone(), path.clone(), body.clone()));
                let (status, reply) = if path.starts_with("/apis/events.k8s.io/") {
                    ("404 Not Found", "404 page not found".to_owned())
                } else {
                    let code = if method == "POST" {
                        "201 Created"
                    } else {
                        "200 OK"
                    };
                    let mut obj = body;
                    obj["apiVersion"] = "v1".into();
                    obj["kind"] = "Event".into();
                    (code, obj.to_string())
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n{reply}",
                    if status.starts_with('4') {
                        "text/plain"
                    } else {
                        "application/json"
                    },
                    reply.len()
                );
                if conn.write_all(resp.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}

#[tokio::test]
async fn falls_back_to_core_v1_when_events_k8s_io_is_not_served() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let log: Log = Arc::default();
    let server = tokio::spawn(serve(listener, log.clone()));
    let recorder = Recorder::new(
        common::client(&[url]),
        Reporter {
            controller: "example.com/ctl".into(),
            instance: Some("ctl-0".into()),
        },
    );
    let pod = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some("web".into()),
        namespace: Some("ns".into()),
        uid: Some("u-1".into()),
        ..ObjectReference::default()
    };
    let ev = Event {
        type_: EventType::Warning,
        reason: "Failed".into(),
        note: Some("it broke".into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    for _ in 0..3 {
        recorder.publish(&ev, &pod).await.expect("publish");
    }
    server.abort();
    let log = log.lock().expect("lock").clone();
    let calls: Vec<(&str, &str)> = log
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    let name = log[1].2["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    assert!(name.starts_with("web."), "{name}");
    let patch_path = format!("/api/v1/namespaces/ns/events/{name}");
    assert_eq!(
        calls,
        [
            ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"),
            ("POST", "/api/v1/namespaces/ns/events"),
            ("PATCH", patch_path.as_str()),
            ("PATCH", patch_path.as_str()),
        ],
        "one probe of events.k8s.io, then core/v1 only"
    );
    let created = &log[1].2;
    assert_eq!(created["involvedObject"]["uid"], "u-1");
    assert_eq!(created["reportingComponent"], "example.com/ctl");
    assert_eq!(created["reportingInstance"], "ctl-0");
    assert_eq!(created["source"]["component"], "example.com/ctl");
    assert_eq!(
        (created["message"].as_str(), created["count"].as_i64()),
        (Some("it broke"), Some(1))
    );
    assert_eq!(log[2].2["count"], 2);
    assert_eq!(log[3].2["count"], 3);
    assert_eq!(log[3].2["series"]["count"], 3);
}
