//! The reopen rule of the resumable watch against hostile servers over
//! real sockets (issue 29): a server that replays the same event and ends
//! every stream is backed off, and the replay never reaches the caller;
//! an `ERROR` event that is not a Status says what it was. The backoff is
//! shortened (no jitter) so the schedule is known; elapsed time is only
//! bounded from below by the waits the rule must make, and reopens are
//! counted per new event, never against the machine's speed.

mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use kubeset_rest::backoff::Backoff;
use kubeset_rest::{Error, RestClient, RestConfig, ResumableWatch, WatchEvent};
use serde_json::Value;
use support::{Reply, Server};

fn base(url: String) -> RestConfig {
    RestConfig::new(url)
        .with_qps_burst(-1.0, 0)
        .without_backoff()
}

fn line(kind: &str, name: &str, rv: u32) -> Vec<u8> {
    format!(
        "{{\"type\":\"{kind}\",\"object\":{{\"metadata\":{{\"name\":\"{name}\",\"resourceVersion\":\"{rv}\"}}}}}}\n"
    )
    .into_bytes()
}

/// A stream of these lines, then a clean end.
fn stream_of(lines: &[Vec<u8>]) -> Reply {
    Reply::Chunked {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        chunks: lines.iter().map(|l| (Duration::ZERO, l.clone())).collect(),
        finish: true,
    }
}

const MS: fn(u64) -> Duration = Duration::from_millis;

/// 20 ms doubling to 320 ms, no jitter.
fn short_backoff() -> Backoff {
    Backoff::reflector()
        .with_bounds(MS(20), MS(320))
        .with_jitter(0.0)
}

async fn open(server: &Server, rv: &str) -> ResumableWatch<Value> {
    let c = RestClient::new(base(server.url())).unwrap();
    c.get()
        .resource("pods")
        .param("watch", "true")
        .param("resourceVersion", rv)
        .watch_resumable::<Value>()
        .await
        .unwrap()
        .with_backoff(short_backoff())
}

fn rv_of(ev: &WatchEvent<Value>) -> String {
    let obj = match ev {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => o,
        other => panic!("{other:?}"),
    };
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Requests so far whose `resourceVersion` is `rv`.
fn opened_from(server: &Server, rv: &str) -> usize {
    let want = format!("resourceVersion={rv}");
    let from = |t: &str| t.split(['?', '&']).any(|p| p == want);
    server.requests().iter().filter(|r| from(&r.target)).count()
}

async fn next_within(w: &mut ResumableWatch<Value>) -> WatchEvent<Value> {
    tokio::time::timeout(Duration::from_secs(60), w.next())
        .await
        .expect("an event within the hang guard")
        .expect("the watch goes on")
        .expect("not an error")
}

#[tokio::test]
async fn a_server_replaying_one_event_per_stream_is_backed_off_and_the_replay_dropped() {
    let replay = stream_of(&[line("ADDED", "a", 5)]);
    let both = || stream_of(&[line("ADDED", "a", 5), line("MODIFIED", "a", 6)]);
    // Six streams that only replay rv 5, one with the new rv 6, six that
    // replay both, one with rv 7.
    let mut script = vec![replay; 6];
    script.push(both());
    script.extend((0..6).map(|_| both()));
    script.push(stream_of(&[
        line("MODIFIED", "a", 6),
        line("MODIFIED", "a", 7),
    ]));
    script.push(Reply::Hang);
    let server = Server::start(script).await;
    let mut w = open(&server, "5").await;
    let started = Instant::now();

    // The first event the caller sees is the new version: the replays of
    // rv 5 in the first seven streams are dropped.
    let first = next_within(&mut w).await;
    assert!(matches!(first, WatchEvent::Modified(_)), "{first:?}");
    assert_eq!(rv_of(&first), "6");
    assert_eq!(opened_from(&server, "5"), 7);
    assert_eq!(w.replays(), 7);
    // Six streams in a row without a new version: each reopen waited its
    // delay (20 + 40 + 80 + 160 + 320 + 320 ms), none was skipped.
    assert!(started.elapsed() >= MS(940), "{:?}", started.elapsed());

    // The new version reset the schedule: the next six unhealthy streams
    // wait it again from 20 ms; then rv 7 arrives, once.
    let second = Instant::now();
    let next = next_within(&mut w).await;
    assert_eq!(rv_of(&next), "7");
    assert!(second.elapsed() >= MS(940), "{:?}", second.elapsed());
    assert_eq!(opened_from(&server, "6"), 7);
    assert_eq!(w.replays(), 7 + 6 * 2 + 1);
    assert_eq!(w.resource_version(), Some("7"));
    assert_eq!(w.resumes(), 13);
}

#[tokio::test]
async fn a_server_that_cuts_after_each_new_event_reopens_once_per_event() {
    // Each stream replays the last version, brings one new one, then the
    // connection drops (no end chunk): the version moved, so each reopen
    // is at once and each new event arrives exactly once.
    let mut script = Vec::new();
    for rv in 6..=25u32 {
        script.push(Reply::Chunked {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            chunks: vec![
                (Duration::ZERO, line("ADDED", "a", rv - 1)),
                (Duration::ZERO, line("MODIFIED", "a", rv)),
            ],
            finish: false,
        });
    }
    script.push(Reply::Hang);
    let server = Server::start(script).await;
    let mut w = open(&server, "5").await.with_backoff(Backoff::reflector());
    for rv in 6..=25u32 {
        let ev = next_within(&mut w).await;
        assert_eq!(rv_of(&ev), rv.to_string());
    }
    // One stream (so one reopen) per new event, no more.
    assert_eq!(server.requests().len(), 20);
    for rv in 5..25u32 {
        assert_eq!(opened_from(&server, &rv.to_string()), 1, "from {rv}");
    }
    assert_eq!(w.replays(), 20);
}

#[tokio::test]
async fn an_error_event_that_is_not_a_status_says_what_it_was() {
    let pod = br#"{"type":"ERROR","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"},"status":{"phase":"Running"}}}"#;
    let mut body = pod.to_vec();
    body.push(b'\n');
    let server = Server::start(vec![stream_of(&[body])]).await;
    let c = RestClient::new(base(server.url())).unwrap();
    let got: Vec<_> = c
        .get()
        .resource("pods")
        .param("watch", "true")
        .watch::<Value>()
        .await
        .unwrap()
        .collect()
        .await;
    let Some(Ok(WatchEvent::Error(e))) = got.first() else {
        panic!("{got:?}");
    };
    assert_eq!(e.code, 500);
    assert!(e.message.contains("kind \"Pod\""), "{}", e.message);
    assert!(e.message.contains(r#""phase":"Running""#), "{}", e.message);
    // Through a resumable watch it ends the watch with that message.
    let mut body = pod.to_vec();
    body.push(b'\n');
    let server = Server::start(vec![stream_of(&[body])]).await;
    let mut w = open(&server, "5").await;
    match w.next().await {
        Some(Err(Error::Api(e))) => assert!(e.message.contains("Pod"), "{e}"),
        other => panic!("{other:?}"),
    }
}
