//! The watcher against a server that replays the same event and ends every
//! watch (issue 29): the replay never reaches the consumer and the reopens
//! back off (kubeset-rest's `WatchProgress` rule, the resumable watch's).
//! A small scripted HTTP server on 127.0.0.1; the backoff is shortened
//! (no jitter) so its schedule is known; time is only bounded from below
//! by the waits the rule must make.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt as _};
use kubeset_client::Api;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_runtime::Backoff;
use kubeset_runtime::watcher::{Event, InitialList, WatcherConfig, WatcherError, watcher};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

fn cm_line(kind: &str, rv: u32) -> String {
    format!(
        r#"{{"type":"{kind}","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"a","namespace":"default","resourceVersion":"{rv}"}}}}}}"#
    ) + "\n"
}

/// Serves an empty list at rv 5, and each watch with the next script
/// entry (the last one forever), ended by closing the connection.
/// Returns its URL and the watch request targets.
async fn server(script: Vec<String>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let watches = Arc::new(Mutex::new(Vec::new()));
    let seen = watches.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let seen = seen.clone();
            let script = script.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let target = head.split(' ').nth(1).unwrap_or_default().to_owned();
                let body = if target.contains("watch=true") {
                    let mut seen = seen.lock().unwrap();
                    seen.push(target);
                    script[(seen.len() - 1).min(script.len() - 1)].clone()
                } else {
                    r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}"#.to_owned()
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}"
                );
                let _ = sock.write_all(reply.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (url, watches)
}

fn from(watches: &Mutex<Vec<String>>, rv: &str) -> usize {
    let want = format!("resourceVersion={rv}");
    let watches = watches.lock().unwrap();
    watches
        .iter()
        .filter(|t| t.split(['?', '&']).any(|p| p == want))
        .count()
}

async fn next(
    s: &mut (impl Stream<Item = Result<Event<ConfigMap>, WatcherError>> + Unpin),
) -> Event<ConfigMap> {
    tokio::time::timeout(Duration::from_secs(60), s.next())
        .await
        .expect("an event within the hang guard")
        .expect("the watcher never ends")
        .expect("no error")
}

#[tokio::test]
async fn replayed_events_are_dropped_and_the_reopens_back_off() {
    let replay = cm_line("ADDED", 5);
    let mut script = vec![replay.clone(); 6];
    script.push(replay + &cm_line("MODIFIED", 6));
    script.push(cm_line("MODIFIED", 6));
    let (url, watches) = server(script).await;
    let rest = RestClient::new(RestConfig::new(url).with_qps_burst(-1.0, 0)).unwrap();
    let api: Api<ConfigMap> =
        Api::namespaced(kubeset_client::Client::new(rest, "default"), "default");
    let backoff = Backoff::default()
        .with_bounds(Duration::from_millis(20), Duration::from_millis(320))
        .with_jitter(0.0);
    let config = WatcherConfig::default()
        .initial_list(InitialList::Paginated)
        .backoff(backoff);
    let mut events = Box::pin(watcher(api, config));
    assert_eq!(next(&mut events).await, Event::Init);
    assert_eq!(next(&mut events).await, Event::InitDone);
    let started = Instant::now();

    // The first change the consumer sees is rv 6: the ADDED at rv 5 that
    // the first seven watches replayed is dropped.
    let Event::Apply(cm) = next(&mut events).await else {
        panic!("an Apply expected");
    };
    assert_eq!(cm.metadata.resource_version.as_deref(), Some("6"));
    assert_eq!(from(&watches, "5"), 7);
    // Six watches in a row without a new version each waited their delay.
    assert!(started.elapsed() >= Duration::from_millis(940));

    // From rv 6 every watch replays it: nothing reaches the consumer, and
    // the reopens back off (20 + 40 + 80 + 160 + 320 + 320 ms before the
    // 7th): a second allows at most seven, where a storm makes hundreds.
    let quiet = tokio::time::timeout(Duration::from_secs(1), events.next()).await;
    assert!(quiet.is_err(), "a replay reached the consumer: {quiet:?}");
    let reopens = from(&watches, "6");
    assert!(
        (1..=7).contains(&reopens),
        "{reopens} watches from rv 6 in 1 s"
    );
}
