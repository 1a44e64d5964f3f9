//! Two candidates on one Lease against the embedded server.

mod common;

use std::time::Duration;

use kubeset_client::Api;
use kubeset_client::api::coordination::v1::Lease;
use kubeset_runtime::{LeaderElector, LeaseConfig};
use kubeset_testserver::TestServer;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use common::client;

const LEASE: Duration = Duration::from_millis(1500);
const RENEW: Duration = Duration::from_millis(1000);
const RETRY: Duration = Duration::from_millis(200);

fn candidate(server: &TestServer, id: &str) -> LeaderElector {
    LeaderElector::new(
        client(&server.urls()),
        LeaseConfig::new("default", "ctl", id).durations(LEASE, RENEW, RETRY),
    )
}

async fn holder(server: &TestServer) -> Option<String> {
    let api: Api<Lease> = Api::namespaced(client(&server.urls()), "default");
    api.get("ctl")
        .await
        .ok()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
}

/// Waits until one of the receivers reads true; returns its index.
async fn first_leader(rx: &mut [watch::Receiver<bool>], limit: Duration) -> Option<usize> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Some(i) = rx.iter().position(|r| *r.borrow()) {
            return Some(i);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_and_takeover_after_a_kill() {
    let server = TestServer::start().await.expect("server starts");
    let a = candidate(&server, "a");
    let b = candidate(&server, "b");
    let mut rx = [a.subscribe(), b.subscribe()];
    let task_a = tokio::spawn(a.run(std::future::pending()));
    let task_b = tokio::spawn(b.run(std::future::pending()));

    let leader = first_leader(&mut rx, Duration::from_secs(10))
        .await
        .expect("someone leads");
    // Exactly one leads, for several lease durations.
    let watch_until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < watch_until {
        let leading = rx.iter().filter(|r| *r.borrow()).count();
        assert_eq!(leading, 1, "exactly one leader at a time");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let ids = ["a", "b"];
    assert_eq!(holder(&server).await.as_deref(), Some(ids[leader]));

    // Kill the leader without releasing: the other takes over once the
    // lease (as it observes it) expires.
    let (dead, other) = if leader == 0 {
        (task_a, task_b)
    } else {
        (task_b, task_a)
    };
    dead.abort();
    let killed = Instant::now();
    let follower = 1 - leader;
    let mut rx_f = rx[follower].clone();
    tokio::time::timeout(Duration::from_secs(10), rx_f.wait_for(|l| *l))
        .await
        .expect("takeover within 10 s")
        .expect("follower still running");
    let took = killed.elapsed();
    eprintln!("takeover after {took:?}");
    // Within the lease duration (counted from the follower's last observed
    // renew, at most a retry period before the kill) plus retry periods and
    // scheduling slack on a loaded machine.
    assert!(
        took <= LEASE + Duration::from_secs(4),
        "took over too late: {took:?}"
    );
    assert_eq!(holder(&server).await.as_deref(), Some(ids[follower]));
    other.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_on_shutdown_hands_over_at_once() {
    let server = TestServer::start().await.expect("server starts");
    let a = candidate(&server, "a");
    let mut rx_a = a.subscribe();
    let (stop_a, stopped_a) = oneshot::channel::<()>();
    let task_a = tokio::spawn(a.run(async move {
        let _ = stopped_a.await;
    }));
    tokio::time::timeout(Duration::from_secs(10), rx_a.wait_for(|l| *l))
        .await
        .expect("a leads")
        .expect("a running");

    // b starts, observes a's lease and waits.
    let b = candidate(&server, "b");
    let mut rx_b = b.subscribe();
    let task_b = tokio::spawn(b.run(std::future::pending()));
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!*rx_b.borrow(), "b waits while a renews");

    let stopped = Instant::now();
    stop_a.send(()).expect("a running");
    tokio::time::timeout(Duration::from_secs(5), task_a)
        .await
        .expect("a returns after release")
        .expect("a ok");
    assert!(!*rx_a.borrow(), "a published that it stopped");
    tokio::time::timeout(Duration::from_secs(10), rx_b.wait_for(|l| *l))
        .await
        .expect("b leads")
        .expect("b running");
    let took = stopped.elapsed();
    eprintln!("handover after release: {took:?}");
    // b waited at most one (jittered) retry period, not a lease duration.
    assert!(
        took < LEASE + Duration::from_secs(2),
        "handover took {took:?}"
    );

    let api: Api<Lease> = Api::namespaced(client(&server.urls()), "default");
    let lease = api.get("ctl").await.expect("lease");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(spec.lease_transitions, Some(1), "a→b is one transition");
    task_b.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_steps_down_when_it_cannot_renew() {
    let server = TestServer::start().await.expect("server starts");
    let a = candidate(&server, "a");
    let mut rx = a.subscribe();
    let task = tokio::spawn(a.run(std::future::pending()));
    tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|l| *l))
        .await
        .expect("a leads")
        .expect("a running");
    let faults = server.faults(0).expect("replica 0");
    faults.hang();
    let hung = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|l| !*l))
        .await
        .expect("a steps down")
        .expect("a running");
    let took = hung.elapsed();
    eprintln!("stepped down after {took:?}");
    assert!(
        took < LEASE + Duration::from_secs(2),
        "stepped down after {took:?}"
    );
    faults.up().await.expect("replica back");
    tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|l| *l))
        .await
        .expect("a leads again")
        .expect("a running");
    task.abort();
}

/// A 409 Conflict on renew (someone wrote the Lease between the leader's
/// read and its write) is retried every retry period until the renew
/// deadline, as client-go does; the leader does not step down on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renew_conflicts_are_retried_until_the_deadline() {
    let server = TestServer::builder()
        .replicas(2)
        .start()
        .await
        .expect("server starts");
    let urls = server.urls();
    // The leader talks to replica 0 only; the meddler to replica 1.
    let a = LeaderElector::new(
        client(&urls[..1]),
        LeaseConfig::new("default", "ctl", "a").durations(
            Duration::from_secs(6),
            Duration::from_secs(4),
            Duration::from_millis(200),
        ),
    );
    let mut rx = a.subscribe();
    let task = tokio::spawn(a.run(std::future::pending()));
    tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|l| *l))
        .await
        .expect("a leads")
        .expect("a running");
    // Every request of the leader now takes 300 ms: its GET answers a
    // resourceVersion, its PUT arrives 300 ms later, by when the meddler
    // has written the Lease again.
    let slow = server.faults(0).expect("replica 0");
    slow.latency(Duration::from_millis(300));
    let meddler: Api<Lease> = Api::namespaced(client(&urls[1..2]), "default");
    let window = Duration::from_millis(2500);
    let started = Instant::now();
    let mut writes = 0u32;
    let mut renew_times = std::collections::BTreeSet::new();
    while started.elapsed() < window {
        let Ok(mut lease) = meddler.get("ctl").await else {
            continue;
        };
        if let Some(t) = lease.spec.as_ref().and_then(|s| s.renew_time) {
            renew_times.insert(t.to_string());
        }
        let annotations = lease.metadata.annotations.get_or_insert_default();
        annotations.insert("meddler".to_owned(), writes.to_string());
        if meddler
            .replace("ctl", &Default::default(), &lease)
            .await
            .is_ok()
        {
            writes += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(writes >= 20, "the meddler wrote only {writes} times");
    // The meddler kept the leader from renewing for most of the window
    // (at most a few renews slipped between its writes) …
    assert!(
        renew_times.len() <= 4,
        "renews were not blocked: {renew_times:?}"
    );
    // … and the leader never stopped leading.
    assert!(
        !rx.has_changed().expect("a running"),
        "leadership flipped during conflicts"
    );
    assert!(*rx.borrow(), "a still leads");
    slow.latency(Duration::ZERO);
    // It renews again once the meddler stops.
    let renewed = Instant::now();
    let mut last = renew_times.last().cloned();
    while renewed.elapsed() < Duration::from_secs(10) {
        let now = meddler
            .get("ctl")
            .await
            .ok()
            .and_then(|l| l.spec)
            .and_then(|s| s.renew_time)
            .map(|t| t.to_string());
        if now.is_some() && now != last {
            last = None;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(last.is_none(), "no renew after the conflicts ended");
    assert!(*rx.borrow(), "a still leads");
    assert_eq!(holder(&server).await.as_deref(), Some("a"));
    task.abort();
}
