//! The metadata-only watcher asks for `PartialObjectMetadata` on the wire:
//! a scripted HTTP server on 127.0.0.1 records the requests.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::Api;
use kubeset_client::api::core::v1::Pod;
use kubeset_runtime::{Event, InitialList, WatcherConfig, metadata_watcher};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// Serves one list page, then watches that end at once; records each
/// request's line and Accept header.
async fn scripted() -> (String, Arc<Mutex<Vec<(String, String)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).to_string();
                let line = head.lines().next().unwrap_or_default().to_owned();
                let accept = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("accept")
                            .then(|| v.trim().to_owned())
                    })
                    .unwrap_or_default();
                let is_watch = line.contains("watch=true");
                log.lock().expect("log").push((line, accept));
                let body = if is_watch {
                    String::new()
                } else {
                    r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}]}"#.to_owned()
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn metadata_watcher_sends_the_partial_object_metadata_accept_header() {
    let (url, seen) = scripted().await;
    let api: Api<Pod> = Api::all(common::client(&[url]));
    let mut s = Box::pin(metadata_watcher(
        api,
        WatcherConfig::default().initial_list(InitialList::Paginated),
    ));
    let mut got = Vec::new();
    while got.len() < 3 {
        let item = tokio::time::timeout(Duration::from_secs(15), s.next())
            .await
            .expect("events in time")
            .expect("never ends");
        got.push(
            item.expect("no errors")
                .map(|m| m.metadata.name.unwrap_or_default()),
        );
    }
    assert_eq!(
        got,
        [
            Event::Init,
            Event::InitApply("a".to_owned()),
            Event::InitDone
        ]
    );
    // Keep polling so the watch goes out (it ends at once, and reopens).
    let driver = tokio::spawn(async move { while s.next().await.is_some() {} });
    assert!(
        common::eventually(Duration::from_secs(10), || seen.lock().expect("log").len()
            >= 2)
        .await
    );
    driver.abort();
    let seen = seen.lock().expect("log").clone();
    let (list_line, list_accept) = &seen[0];
    assert!(list_line.starts_with("GET /api/v1/pods?"), "{list_line}");
    assert!(list_line.contains("limit=500"), "{list_line}");
    assert!(
        list_accept.starts_with("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
        "{list_accept}"
    );
    let (watch_line, watch_accept) = &seen[1];
    assert!(watch_line.contains("watch=true"), "{watch_line}");
    assert!(watch_line.contains("resourceVersion=5"), "{watch_line}");
    assert!(
        watch_line.contains("allowWatchBookmarks=true"),
        "{watch_line}"
    );
    assert!(watch_line.contains("timeoutSeconds=290"), "{watch_line}");
    assert!(
        watch_accept.starts_with("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
        "{watch_accept}"
    );
}
