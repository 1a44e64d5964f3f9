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
//! included here). Every reconcile appends a start line and (from a drop
//! guard, so also when it is cancelled) an end line to its replica's log
//! (read by `examples/sharded/spans.rs`); a killed
//! replica's open reconciles end at the kill. The test checks that no two
//! reconciles of one key overlapped in time (one machine, one clock).
//!
//! The replicas use `ShardFilter::Auto`: the embedded server and a 1.36
//! kube-apiserver with `ShardedListAndWatch` on filter by `shardSelector`
//! (each replica caches its shards only, re-watching as they move); a
//! server without the feature leaves the filter to the replicas. The test
//! checks that the replicas chose what the server offers.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kubeset_client::api::coordination::v1::Lease;
use kubeset_client::api::core::v1::{ConfigMap, Namespace};
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::params::{DeleteParams, ListParams, PatchParams, PostParams};
use kubeset_client::{Api, Client, Patch};
use kubeset_runtime::shard::{ShardFilter, shard_of, uid_hash};
use kubeset_testserver::TestServer;
use tokio::time::Instant;

const OBJECTS: usize = 200;
const SHARDS: u32 = 64;
const GROUP: &str = "sharded";
const LEASE: Duration = Duration::from_secs(8);
const RENEW: Duration = Duration::from_secs(5);
const RETRY: Duration = Duration::from_secs(1);
/// A failure bound for convergence (never a performance assertion).
const CONVERGE_LIMIT: Duration = Duration::from_secs(90);

// ---------------------------------------------------------------- replica

/// The example operator's replica (`examples/sharded/replica.rs`): this
/// binary runs it when `KUBESET_SHARD_REPLICA` is set.
#[path = "../examples/sharded/replica.rs"]
mod replica;
/// Its span logs, read back.
#[path = "../examples/sharded/spans.rs"]
mod spans;

use replica::now_ns;
use spans::{Span, overlaps};

async fn replica_client() -> Client {
    if let Ok(url) = std::env::var("KUBESET_SHARD_URL") {
        return common::client(&[url]);
    }
    let path = std::env::var("KUBESET_SHARD_KUBECONFIG").expect("a URL or a kubeconfig");
    common::kubeconfig_client(&path).await
}

async fn run_replica(identity: String) {
    let settings = replica::Settings {
        identity,
        namespace: std::env::var("KUBESET_SHARD_NS").expect("KUBESET_SHARD_NS"),
        group: GROUP.to_owned(),
        labels: None,
        shards: SHARDS,
        durations: (LEASE, RENEW, RETRY),
        // The server filters when it can (1.36+ with ShardedListAndWatch on).
        filter: ShardFilter::Auto,
        concurrency: 8,
        work: Duration::from_millis(20),
        span_log: Some(
            std::env::var("KUBESET_SHARD_LOG")
                .expect("KUBESET_SHARD_LOG")
                .into(),
        ),
    };
    replica::run(replica_client().await, settings)
        .await
        .expect("the replica runs");
}

// ------------------------------------------------------------------- test

struct Target {
    name: &'static str,
    client: Client,
    /// Environment for a replica to reach the server.
    env: Vec<(String, String)>,
    namespace: String,
    /// Whether the server applies `shardSelector` (the replicas' probe
    /// must find the same).
    server_filter: bool,
}

struct Replica {
    identity: String,
    child: Child,
}

struct Run<'a> {
    target: &'a Target,
    dir: PathBuf,
    replicas: Vec<Replica>,
    /// identity → when it was killed (ns since the epoch).
    killed: HashMap<String, u128>,
}

impl Run<'_> {
    fn spawn(&mut self, identity: &str) {
        let exe = std::env::current_exe().expect("the test binary");
        let stderr = std::fs::File::create(self.dir.join(format!("{identity}.stderr")))
            .expect("stderr file");
        let child = Command::new(exe)
            .env("KUBESET_SHARD_REPLICA", identity)
            .env("KUBESET_SHARD_NS", &self.target.namespace)
            .env(
                "KUBESET_SHARD_LOG",
                self.dir.join(format!("{identity}.log")),
            )
            .envs(self.target.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("a replica starts");
        self.replicas.push(Replica {
            identity: identity.to_owned(),
            child,
        });
    }

    fn kill9(&mut self, identity: &str) {
        let r = self
            .replicas
            .iter_mut()
            .find(|r| r.identity == identity)
            .expect("a replica of that name");
        r.child.kill().expect("SIGKILL");
        let _ = r.child.wait();
        self.killed.insert(identity.to_owned(), now_ns());
    }

    fn terminate(&mut self, identity: &str) {
        let r = self
            .replicas
            .iter_mut()
            .find(|r| r.identity == identity)
            .expect("a replica of that name");
        let status = Command::new("kill")
            .args(["-TERM", &r.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let exit = r.child.wait().expect("the replica exits");
        assert!(
            exit.success(),
            "{identity} exits cleanly on SIGTERM: {exit}"
        );
        // It ran its reconciles to an end (cancelled or finished).
        self.killed.insert(identity.to_owned(), now_ns());
    }
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        for r in &mut self.replicas {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

async fn set_want(api: &Api<ConfigMap>, want: u32) {
    for i in 0..OBJECTS {
        let patch = serde_json::json!({"data": {"want": want.to_string()}});
        api.patch(
            &format!("cm-{i:03}"),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .expect("patch");
    }
}

/// Waits until every ConfigMap's `done` is `want`; returns who did the
/// last write of each.
async fn converged(api: &Api<ConfigMap>, want: u32) -> BTreeMap<String, usize> {
    let end = Instant::now() + CONVERGE_LIMIT;
    loop {
        let list = api.list(&ListParams::default()).await.expect("list");
        let want_s = want.to_string();
        let done = list
            .items
            .iter()
            .filter(|cm| {
                cm.metadata.annotations.as_ref().and_then(|a| a.get("done")) == Some(&want_s)
            })
            .count();
        if done == OBJECTS && list.items.len() == OBJECTS {
            let mut by = BTreeMap::new();
            for cm in &list.items {
                let who = cm
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("by"))
                    .cloned()
                    .unwrap_or_default();
                *by.entry(who).or_insert(0) += 1;
            }
            return by;
        }
        if Instant::now() >= end {
            let stuck: Vec<String> = list
                .items
                .iter()
                .filter(|cm| {
                    cm.metadata.annotations.as_ref().and_then(|a| a.get("done")) != Some(&want_s)
                })
                .map(|cm| {
                    let uid = cm.metadata.uid.as_deref().unwrap_or_default();
                    format!(
                        "{} (shard {})",
                        cm.metadata.name.as_deref().unwrap_or_default(),
                        shard_of(uid_hash(uid), SHARDS)
                    )
                })
                .collect();
            panic!(
                "{done} of {OBJECTS} converged to {want} after {CONVERGE_LIMIT:?}; not: {stuck:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
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

async fn create_objects(api: &Api<ConfigMap>) {
    for i in 0..OBJECTS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{i:03}")),
                ..ObjectMeta::default()
            },
            data: Some([("want".to_owned(), "1".to_owned())].into()),
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create");
    }
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
    let dir = std::env::temp_dir().join(format!(
        "kubeset-shard-{}-{}",
        target.name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("log dir");
    let api: Api<ConfigMap> = Api::namespaced(target.client.clone(), &target.namespace);
    let leases: Api<Lease> = Api::namespaced(target.client.clone(), &target.namespace);
    create_objects(&api).await;
    let mut run = Run {
        target,
        dir: dir.clone(),
        replicas: Vec::new(),
        killed: HashMap::new(),
    };
    two_then_three(&mut run, &api, &leases).await;
    let chosen = std::fs::read_to_string(dir.join("a.stderr")).unwrap_or_default();
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

async fn embedded() {
    let server = TestServer::start().await.expect("server starts");
    let url = server.urls()[0].clone();
    let target = Target {
        name: "embedded",
        client: common::client(std::slice::from_ref(&url)),
        env: vec![("KUBESET_SHARD_URL".to_owned(), url)],
        namespace: "default".to_owned(),
        server_filter: true,
    };
    scenario(&target).await;
}

async fn realkube() {
    let Some(env) = common::realkube_env() else {
        println!(
            "realkube: skipped, KUBESET_REALKUBE_ENV is not set (see tests/realkube/README.md)"
        );
        return;
    };
    let kubeconfig = env["KUBESET_REALKUBE_KUBECONFIG"].clone();
    let client = common::kubeconfig_client(&kubeconfig).await;
    let namespace = format!("shard-{}-{:x}", std::process::id(), now_ns() & 0x00ff_ffff);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let target = Target {
        name: "realkube",
        client,
        env: vec![("KUBESET_SHARD_KUBECONFIG".to_owned(), kubeconfig)],
        namespace: namespace.clone(),
        server_filter: env
            .get("KUBESET_REALKUBE_FEATURE_GATES")
            .is_some_and(|g| g.contains("ShardedListAndWatch=true")),
    };
    scenario(&target).await;
    let _ = namespaces
        .delete(&namespace, &DeleteParams::default())
        .await;
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(identity) = std::env::var("KUBESET_SHARD_REPLICA") {
        // Hand-offs and lapses, into <dir>/<identity>.stderr.
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(std::io::stderr)
            .init();
        rt.block_on(run_replica(identity));
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
        embedded().await;
        realkube().await;
    });
    println!("test shard_across_processes ... ok");
}
