//! Sharded controllers in several processes (feature `shard`).
//!
//! The test binary is also the replica: run with `KUBESET_SHARD_REPLICA`
//! set, it is one process of an example sharded operator (a Sharder and
//! a ConfigMap controller whose reconcile does 20 ms of I/O and writes
//! `done=<want>` back). Without it, `main` runs the scenario against the
//! embedded API server (always), and against the realkube instance named
//! by `KUBESET_REALKUBE_ENV` (skipped with a printed reason when unset):
//!
//! 1. 200 ConfigMaps, 2 replicas: every object converges.
//! 2. A third replica joins and every object changes: converges again,
//!    and the newcomer holds shards.
//! 3. `kill -9` of one replica, every object changes: its shards are held
//!    by the others within the Lease protocol's bound (lease duration +
//!    two retry periods + the renew deadline, at which a round's requests
//!    time out), every object converges.
//! 4. SIGTERM of another: it releases its shards; the last one holds all.
//!
//! The replica is the example operator's (`examples/sharded/replica.rs`,
//! included through `replicas/mod.rs`, the harness `leader_warm.rs`
//! shares). Every reconcile appends a start line and (from a drop guard,
//! so also when it is cancelled) an end line to its replica's log (read
//! by `examples/sharded/spans.rs`); a killed
//! replica's open reconciles end at the kill. The test checks that no two
//! reconciles of one key overlapped in time (one machine, one clock).
//!
//! The replicas use `ShardFilter::Auto`: the embedded server and a 1.36
//! kube-apiserver with `ShardedListAndWatch` on filter by `shardSelector`
//! (each replica caches its shards only, re-watching as they move); a
//! server without the feature leaves the filter to the replicas. The test
//! checks that the replicas chose what the server offers.

mod common;
mod replicas;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use kubeset_client::Api;
use kubeset_client::api::coordination::v1::Lease;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::ListParams;
use kubeset_runtime::shard::{ShardFilter, shard_of, uid_hash};
use tokio::time::Instant;

use replicas::spans::{self, Span, overlaps};
use replicas::{CONVERGE_LIMIT, Run, Target, replica, replica_client};

const OBJECTS: usize = 200;
const SHARDS: u32 = 64;
const GROUP: &str = "sharded";
const LEASE: Duration = Duration::from_secs(8);
const RENEW: Duration = Duration::from_secs(5);
const RETRY: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------- replica

async fn run_replica() {
    let (identity, namespace, span_log) = replicas::replica_env();
    let settings = replica::Settings {
        identity,
        namespace,
        group: GROUP.to_owned(),
        labels: None,
        shards: SHARDS,
        durations: (LEASE, RENEW, RETRY),
        // The server filters when it can (1.36+ with ShardedListAndWatch on).
        mode: replica::Mode::Sharded(ShardFilter::Auto),
        concurrency: 8,
        work: Duration::from_millis(20),
        span_log: Some(span_log),
    };
    replica::run(replica_client().await, settings)
        .await
        .expect("the replica runs");
}

// ------------------------------------------------------------------- test

fn shard_where(cm: &ConfigMap) -> String {
    let uid = cm.metadata.uid.as_deref().unwrap_or_default();
    format!("shard {}", shard_of(uid_hash(uid), SHARDS))
}

async fn set_want(api: &Api<ConfigMap>, want: u32) {
    replicas::set_want(api, OBJECTS, want).await;
}

async fn converged(api: &Api<ConfigMap>, want: u32) -> BTreeMap<String, usize> {
    replicas::converged(api, OBJECTS, want, shard_where).await
}

/// shard → holder of the shard Leases.
async fn holders(leases: &Api<Lease>) -> BTreeMap<u32, String> {
    let prefix = format!("{GROUP}-shard-");
    leases
        .list(&ListParams::default())
        .await
        .expect("list leases")
        .items
        .into_iter()
        .filter_map(|l| {
            let shard = l
                .metadata
                .name
                .as_deref()?
                .strip_prefix(&prefix)?
                .parse()
                .ok()?;
            let holder = l.spec?.holder_identity.filter(|h| !h.is_empty())?;
            Some((shard, holder))
        })
        .collect()
}

/// Waits until all shards are held by members of `live`; returns when.
async fn all_held_by(leases: &Api<Lease>, live: &[&str], limit: Duration) -> Option<Instant> {
    let end = Instant::now() + limit;
    loop {
        let h = holders(leases).await;
        if h.len() == SHARDS as usize && h.values().all(|v| live.contains(&v.as_str())) {
            return Some(Instant::now());
        }
        if Instant::now() >= end {
            eprintln!("holders at the limit: {h:?}");
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn read_spans(dir: &Path, killed: &HashMap<String, u128>) -> Vec<Span> {
    spans::read_spans(dir, killed).expect("the span logs read")
}

/// Phases 1 and 2: two replicas converge, a third joins while every
/// object changes (hand-offs during reconciles).
async fn two_then_three(run: &mut Run<'_>, api: &Api<ConfigMap>, leases: &Api<Lease>) {
    let name = run.target.name;
    let t0 = Instant::now();
    run.spawn("a");
    run.spawn("b");
    let by = converged(api, 1).await;
    println!(
        "[{name}] 2 replicas: converged in {:?}; last writes {by:?}",
        t0.elapsed()
    );
    all_held_by(leases, &["a", "b"], CONVERGE_LIMIT)
        .await
        .expect("a and b hold every shard");
    // Both hold shards once the first to start has handed the other its
    // share (it may have held all of them before the other was a member).
    let end = Instant::now() + CONVERGE_LIMIT;
    loop {
        let h = holders(leases).await;
        if ["a", "b"].iter().all(|id| h.values().any(|v| v == id)) {
            break;
        }
        assert!(Instant::now() < end, "a and b both hold shards: {h:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    run.spawn("c");
    let joined = Instant::now();
    let end = joined + CONVERGE_LIMIT;
    while !holders(leases).await.values().any(|v| v == "c") {
        assert!(Instant::now() < end, "c never got a shard");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "[{name}] c held a shard {:?} after it started",
        joined.elapsed()
    );
    // The rebalance is still going on: shards move while these reconcile.
    set_want(api, 2).await;
    let by = converged(api, 2).await;
    all_held_by(leases, &["a", "b", "c"], CONVERGE_LIMIT)
        .await
        .expect("every shard held");
    let h = holders(leases).await;
    let count = |id: &str| h.values().filter(|v| *v == id).count();
    println!(
        "[{name}] 3 replicas: converged; last writes {by:?}; shards a {} b {} c {}",
        count("a"),
        count("b"),
        count("c")
    );
}

/// Phase 3: `kill -9` of b while every object changes; returns the
/// takeover time.
async fn kill_one(run: &mut Run<'_>, api: &Api<ConfigMap>, leases: &Api<Lease>) -> Duration {
    let name = run.target.name;
    let b_shards = holders(leases).await.values().filter(|v| *v == "b").count();
    run.kill9("b");
    let killed = Instant::now();
    set_want(api, 3).await;
    // The protocol's bound: b's last write is before the kill; the others
    // see it within one retry period, take over in the first round after
    // it has been unchanged for the lease duration, and a round's requests
    // time out at the renew deadline.
    let bound = LEASE + RETRY * 2 + RENEW;
    let taken = all_held_by(leases, &["a", "c"], bound + CONVERGE_LIMIT)
        .await
        .expect("a and c take every shard over");
    let takeover = taken - killed;
    println!(
        "[{name}] kill -9 of b ({b_shards} shards): taken over in {takeover:?} (bound {bound:?})"
    );
    assert!(
        takeover <= bound,
        "takeover {takeover:?} exceeds lease duration + 2 retry periods + renew deadline {bound:?}"
    );
    let by = converged(api, 3).await;
    assert!(
        !by.contains_key("b"),
        "b's objects were reconciled by a and c: {by:?}"
    );
    takeover
}

/// Phase 4: SIGTERM of a, which releases its shards; c takes them all.
async fn terminate_one(run: &mut Run<'_>, api: &Api<ConfigMap>, leases: &Api<Lease>) {
    let name = run.target.name;
    run.terminate("a");
    let released = Instant::now();
    all_held_by(leases, &["c"], CONVERGE_LIMIT)
        .await
        .expect("c takes every shard");
    println!(
        "[{name}] SIGTERM of a: c holds all {SHARDS} shards {:?} later",
        released.elapsed()
    );
    set_want(api, 4).await;
    let by = converged(api, 4).await;
    assert_eq!(by.get("c"), Some(&OBJECTS), "c wrote every object: {by:?}");
}

/// No two reconciles of a key overlapped; every key was reconciled for
/// every `want`.
fn check_logs(name: &str, dir: &Path, killed: &HashMap<String, u128>) {
    let spans = read_spans(dir, killed);
    let bad = overlaps(&spans);
    let per: BTreeMap<&str, usize> = spans.iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s.replica.as_str()).or_insert(0) += 1;
        m
    });
    println!(
        "[{name}] {} reconciles {per:?}, {} overlapping",
        spans.len(),
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "reconciles of one key overlapped:\n{}",
        bad.join("\n")
    );
    for want in 1..=4 {
        let keys: std::collections::BTreeSet<&str> = spans
            .iter()
            .filter(|s| s.want == want.to_string())
            .map(|s| s.key.as_str())
            .collect();
        assert_eq!(
            keys.len(),
            OBJECTS,
            "every object was reconciled towards want={want}"
        );
    }
}

/// The check itself, on made-up spans: touching is fine, overlapping
/// (across replicas or within one) is not, other keys do not matter.
fn the_overlap_check_sees_overlaps() {
    let span = |replica: &str, key: &str, start, end| Span {
        replica: replica.to_owned(),
        key: key.to_owned(),
        want: "1".to_owned(),
        start,
        end,
    };
    let fine = [
        span("a", "k", 0, 10),
        span("b", "k", 10, 20),
        span("a", "j", 5, 15),
    ];
    assert!(overlaps(&fine).is_empty());
    let bad = [
        span("a", "k", 0, 10),
        span("b", "k", 30, 40),
        span("c", "k", 9, 12),
    ];
    assert_eq!(overlaps(&bad).len(), 1, "{:?}", overlaps(&bad));
    let open = [span("a", "k", 0, u128::MAX), span("b", "k", 50, 60)];
    assert_eq!(
        overlaps(&open).len(),
        1,
        "a reconcile left open overlaps what follows"
    );
}

async fn scenario(target: &Target) {
    let t0 = Instant::now();
    let api: Api<ConfigMap> = Api::namespaced(target.client.clone(), &target.namespace);
    let leases: Api<Lease> = Api::namespaced(target.client.clone(), &target.namespace);
    replicas::create_objects(&api, OBJECTS).await;
    let mut run = Run::new(target, "shard");
    let dir = run.dir.clone();
    two_then_three(&mut run, &api, &leases).await;
    let chosen = run.stderr("a");
    let server = chosen.contains("server_filter=true");
    println!(
        "[{}] shard filter: {}",
        target.name,
        if server { "server" } else { "client" }
    );
    assert_eq!(
        server, target.server_filter,
        "the replicas' probe: {chosen}"
    );
    kill_one(&mut run, &api, &leases).await;
    terminate_one(&mut run, &api, &leases).await;
    run.kill9("c");
    let killed = run.killed.clone();
    drop(run);
    check_logs(target.name, &dir, &killed);
    println!("[{}] {:?} in all", target.name, t0.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if std::env::var_os("KUBESET_SHARD_REPLICA").is_some() {
        // Hand-offs and lapses, into <dir>/<identity>.stderr.
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(std::io::stderr)
            .init();
        rt.block_on(run_replica());
        return;
    }
    // `cargo test -- --list` and filters: this binary has one test.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("shard_across_processes: test");
        return;
    }
    if args
        .iter()
        .any(|a| !a.starts_with('-') && !"shard_across_processes".contains(a.as_str()))
    {
        return;
    }
    the_overlap_check_sees_overlaps();
    rt.block_on(async {
        let (_server, target) = replicas::embedded().await;
        scenario(&target).await;
        if let Some(target) = replicas::realkube("shard").await {
            scenario(&target).await;
            target.cleanup().await;
        }
    });
    println!("test shard_across_processes ... ok");
}
