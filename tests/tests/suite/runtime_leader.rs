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

/// Environment of a candidate process: its identity, the namespace, the
/// index of the server it prefers.
const CANDIDATE_ENV: &str = "KUBESET_LEADER_CANDIDATE";

/// The candidate process of [`two_processes_one_leader`]: this test binary
/// run again with this test alone. Prints `LEADING <id>` / `FOLLOWING <id>`
/// on every change; releases and exits when its stdin closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the candidate process two_processes_one_leader spawns"]
async fn leader_candidate_process() {
    use std::io::{BufRead as _, Write as _};
    let Ok(spec) = std::env::var(CANDIDATE_ENV) else {
        return;
    };
    let mut parts = spec.splitn(3, ' ');
    let (Some(id), Some(ns), Some(first)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("{CANDIDATE_ENV}={spec:?}: want `id namespace first`");
    };
    let kube = kubeset_tests::realkube("leader-candidate")
        .await
        .expect("realkube");
    let first: usize = first.parse().expect("server index");
    let elector = LeaderElector::new(
        failover_client(&kube, first % kube.env.servers.len()),
        LeaseConfig::new(ns, "runtime-leader-processes", id).durations(LEASE, RENEW, RETRY),
    );
    let mut leading = elector.subscribe();
    let (stop, stopped) = oneshot::channel::<()>();
    std::thread::spawn(move || {
        // Until the parent closes our stdin (or dies).
        for line in std::io::stdin().lock().lines() {
            if line.is_err() {
                break;
            }
        }
        let _ = stop.send(());
    });
    let id = id.to_owned();
    let reporter = tokio::spawn(async move {
        while leading.changed().await.is_ok() {
            let word = if *leading.borrow() {
                "LEADING"
            } else {
                "FOLLOWING"
            };
            // No panic when the parent is gone (a broken pipe).
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{word} {id}");
            let _ = out.flush();
        }
    });
    elector
        .run(async move {
            let _ = stopped.await;
        })
        .await;
    // Published `false` before releasing; let the reporter print it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    reporter.abort();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "EXITED");
    let _ = out.flush();
}

struct Process {
    child: std::process::Child,
    leading: watch::Receiver<bool>,
    exited: watch::Receiver<bool>,
}

fn spawn_process(ns: &str, id: &str, first: usize) -> Process {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "runtime_leader::leader_candidate_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CANDIDATE_ENV, format!("{id} {ns} {first}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawning a candidate process");
    let stdout = child.stdout.take().expect("stdout");
    let (lead_tx, leading) = watch::channel(false);
    let (exit_tx, exited) = watch::channel(false);
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // libtest may print `test <name> ... ` before the first line.
            if line.contains("FOLLOWING ") {
                lead_tx.send_replace(false);
            } else if line.contains("LEADING ") {
                lead_tx.send_replace(true);
            } else if line.contains("EXITED") {
                exit_tx.send_replace(true);
            }
        }
        // The process is gone: it leads no more.
        lead_tx.send_replace(false);
    });
    Process {
        child,
        leading,
        exited,
    }
}

/// Two candidate processes: exactly one leads; SIGKILL of the leader
/// (no release) → the other takes over within the lease duration; a new
/// process then waits, and takes over at once when the leader exits
/// gracefully (stdin closed → release).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_one_leader() {
    let ctx = crate::common::connect!("runtime-leader-processes");
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let mut procs = vec![
        ("a", spawn_process(&ctx.ns, "a", 0)),
        ("b", spawn_process(&ctx.ns, "b", 1)),
    ];
    let leading = |procs: &[(&'static str, Process)]| -> Vec<&'static str> {
        procs
            .iter()
            .filter(|(_, p)| *p.leading.borrow())
            .map(|(id, _)| *id)
            .collect()
    };
    let watch_procs = async |procs: &[(&'static str, Process)],
                             span: Duration,
                             stop_at_one: bool|
           -> Vec<&'static str> {
        let end = Instant::now() + span;
        loop {
            let now = leading(procs);
            assert!(now.len() <= 1, "two leader processes: {now:?}");
            if (stop_at_one && now.len() == 1) || Instant::now() >= end {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    // Process start and connection take a while on a loaded machine.
    let first = watch_procs(&procs, Duration::from_secs(60), true).await;
    assert_eq!(first.len(), 1, "no process leads after 60 s");
    let steady = watch_procs(&procs, LEASE, false).await;
    assert_eq!(steady, first);
    assert_eq!(
        api_holder(&leases).await.as_deref(),
        Some(first[0]),
        "the Lease names the leading process"
    );

    // SIGKILL the leader: no release.
    let dead = procs
        .iter()
        .position(|(id, _)| *id == first[0])
        .expect("leader");
    let (_, mut killed_proc) = procs.remove(dead);
    killed_proc.child.kill().expect("SIGKILL");
    let killed = Instant::now();
    let _ = killed_proc.child.wait();
    let next = watch_procs(&procs, LEASE * 4, true).await;
    let took = killed.elapsed();
    assert_eq!(next.len(), 1, "no takeover after the kill");
    eprintln!("runtime leader processes: takeover after SIGKILL in {took:?}");
    assert!(
        took <= LEASE + JITTERED_RETRY * 2 + SLACK,
        "took over too late: {took:?}"
    );

    // A third process waits while the leader renews, then takes over at
    // once after the leader's graceful exit.
    procs.push(("c", spawn_process(&ctx.ns, "c", 2)));
    let waiting = watch_procs(&procs, LEASE + Duration::from_secs(4), false).await;
    assert_eq!(waiting, next, "c must not take a renewed lease");
    let leader = procs
        .iter()
        .position(|(id, _)| *id == next[0])
        .expect("leader");
    let (_, mut graceful) = procs.remove(leader);
    let stopped = Instant::now();
    drop(graceful.child.stdin.take());
    tokio::time::timeout(Duration::from_secs(30), graceful.exited.wait_for(|e| *e))
        .await
        .expect("the leader exits after releasing")
        .expect("reader thread");
    let after = watch_procs(&procs, LEASE * 2, true).await;
    let handover = stopped.elapsed();
    assert_eq!(after, vec!["c"]);
    eprintln!("runtime leader processes: handover after graceful exit in {handover:?}");
    assert!(handover < LEASE, "handover took {handover:?}");
    assert_eq!(api_holder(&leases).await.as_deref(), Some("c"));
    let _ = graceful.child.wait();
    for (_, mut p) in procs {
        let _ = p.child.kill();
        let _ = p.child.wait();
    }
}

async fn api_holder(api: &Api<Lease>) -> Option<String> {
    api.get("runtime-leader-processes")
        .await
        .unwrap_or_else(|e| panic!("reading the lease: {}", error_chain(&e)))
        .spec
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}
