//! Leader election on a real kube-apiserver, through failover clients (each
//! candidate knows every API server, in its own order): exactly one leader
//! at a time, takeover within the lease duration after the leader is killed
//! without releasing, and a quick handover after a graceful release.

use std::time::Duration;

use kubeset::api::coordination::v1::Lease;
use kubeset::rest::RestClient;
use kubeset::runtime::{LeaderElector, LeaseConfig};
use kubeset::{Api, Client};
use kubeset_tests::{Identity, RealKube, error_chain};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

const LEASE: Duration = Duration::from_secs(6);
const RENEW: Duration = Duration::from_secs(4);
const RETRY: Duration = Duration::from_millis(500);
/// client-go jitters the retry period by up to 1.2×.
const JITTERED_RETRY: Duration = Duration::from_millis(1100);
/// Scheduling and request slack on a loaded 2-core machine.
const SLACK: Duration = Duration::from_secs(4);

/// A client of every server of the instance, starting at `first`.
fn failover_client(kube: &RealKube, first: usize) -> Client {
    let servers = &kube.env.servers;
    let mut order: Vec<String> = servers.iter().skip(first).cloned().collect();
    order.extend(servers.iter().take(first).cloned());
    let config = kube
        .config(Some(&order[0]), Identity::Admin)
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_endpoints(order[1..].iter().cloned())
        .with_request_deadline(Duration::from_secs(10));
    Client::new(RestClient::new(rest).expect("client"), "default")
}

struct Candidate {
    id: &'static str,
    leading: watch::Receiver<bool>,
    task: JoinHandle<()>,
    stop: Option<oneshot::Sender<()>>,
    alive: bool,
}

fn spawn(kube: &RealKube, ns: &str, id: &'static str, first: usize) -> Candidate {
    let elector = LeaderElector::new(
        failover_client(kube, first),
        LeaseConfig::new(ns, "runtime-leader", id).durations(LEASE, RENEW, RETRY),
    );
    let leading = elector.subscribe();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(elector.run(async move {
        let _ = stopped.await;
    }));
    Candidate {
        id,
        leading,
        task,
        stop: Some(stop),
        alive: true,
    }
}

/// Ids of the live candidates that say they lead.
fn leaders(cands: &[Candidate]) -> Vec<&'static str> {
    cands
        .iter()
        .filter(|c| c.alive && *c.leading.borrow())
        .map(|c| c.id)
        .collect()
}

async fn holder(api: &Api<Lease>) -> Option<String> {
    api.get("runtime-leader")
        .await
        .unwrap_or_else(|e| panic!("reading the lease: {}", error_chain(&e)))
        .spec
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

/// Samples every 50 ms for `span` (or until `until` holds): never two
/// leaders. Answers the leaders seen last.
async fn watch_leaders(
    cands: &[Candidate],
    span: Duration,
    until: impl Fn(&[&'static str]) -> bool,
) -> Vec<&'static str> {
    let end = Instant::now() + span;
    loop {
        let now = leaders(cands);
        assert!(now.len() <= 1, "two leaders at once: {now:?}");
        if until(&now) || Instant::now() >= end {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_takeover_after_kill_and_handover_on_release() {
    let ctx = crate::common::connect!("runtime-leader");
    let kube = ctx.kube.clone();
    let servers = kube.env.servers.len();
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), &ctx.ns);

    // Two candidates, each preferring another server.
    let mut cands = vec![
        spawn(&kube, &ctx.ns, "a", 0),
        spawn(&kube, &ctx.ns, "b", 1 % servers),
    ];
    let first = watch_leaders(&cands, Duration::from_secs(30), |l| l.len() == 1).await;
    assert_eq!(first.len(), 1, "nobody leads after 30 s");
    // Several lease durations of exactly one leader, the Lease's holder.
    let steady = watch_leaders(&cands, LEASE * 2, |_| false).await;
    assert_eq!(steady, first, "leadership moved without a failure");
    assert_eq!(holder(&leases).await.as_deref(), Some(first[0]));

    // Kill the leader without release (abort: no more renews, no release).
    let dead = cands
        .iter()
        .position(|c| c.id == first[0])
        .expect("leader is a candidate");
    cands[dead].task.abort();
    cands[dead].alive = false;
    let killed = Instant::now();
    let next = watch_leaders(&cands, LEASE * 4, |l| l.len() == 1).await;
    let took = killed.elapsed();
    assert_eq!(next.len(), 1, "no takeover within {:?}", LEASE * 4);
    assert_ne!(next[0], first[0]);
    eprintln!("runtime leader: takeover after a kill in {took:?}");
    // The follower had observed the last renew at most a (jittered) retry
    // period before the kill; it notices expiry at its next attempt.
    assert!(
        took <= LEASE + JITTERED_RETRY * 2 + SLACK,
        "took over too late: {took:?}"
    );
    assert_eq!(holder(&leases).await.as_deref(), Some(next[0]));

    // A new candidate waits while the leader renews …
    cands.push(spawn(&kube, &ctx.ns, "c", 2 % servers));
    let waiting = watch_leaders(&cands, LEASE + RETRY * 2, |_| false).await;
    assert_eq!(waiting, next, "c must not take a renewed lease");
    // … and takes over quickly when the leader shuts down gracefully.
    let graceful = cands
        .iter()
        .position(|c| c.id == next[0])
        .expect("leader is a candidate");
    let stopped = Instant::now();
    if let Some(stop) = cands[graceful].stop.take() {
        stop.send(()).expect("leader still running");
    }
    let task = std::mem::replace(&mut cands[graceful].task, tokio::spawn(async {}));
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the leader returns after releasing")
        .expect("leader task");
    assert!(
        !*cands[graceful].leading.borrow(),
        "it published that it stopped"
    );
    cands[graceful].alive = false;
    let after = watch_leaders(&cands, LEASE * 2, |l| l.len() == 1).await;
    let handover = stopped.elapsed();
    assert_eq!(after, vec!["c"], "c leads after the release");
    eprintln!("runtime leader: handover after a release in {handover:?}");
    // A released Lease is taken at the next attempt, not after expiry.
    assert!(handover < LEASE, "handover after release took {handover:?}");
    let lease = leases
        .get("runtime-leader")
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("c"));
    assert_eq!(
        spec.lease_transitions,
        Some(2),
        "two changes of holder: {} → {} → c",
        first[0],
        next[0]
    );
    for c in &cands {
        c.task.abort();
    }
}
