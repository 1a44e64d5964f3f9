//! The controller runtime against real kube-apiservers: a reflector and a
//! controller follow thousands of random writes while the API server
//! serving their watches hangs, etcd is compacted under them (410 Gone,
//! relist) and that server is SIGKILLed (failover to another replica).
//! At the end the store equals the server's list exactly and the
//! controller reconciled the final version of every key.
//!
//! Runs on an instance of its own: three API servers on one etcd with
//! `--watch-cache off`, because with the watch cache on (1.35) a watch from
//! a compacted resourceVersion is still served from the cache and no 410
//! ever reaches the client.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kubeset::api::core::v1::ConfigMap;
use kubeset::params::{DeleteParams, ListParams, PostParams};
use kubeset::rest::RestClient;
use kubeset::runtime::{
    Action, Backoff, Controller, Event, InitialList, StoreConfig, WatcherConfig, Writer, reflector,
    watcher,
};
use kubeset::{Api, Client};
use kubeset_tests::instance::Instance;
use kubeset_tests::{Identity, RealKube, error_chain, etcd};
use serde_json::json;

use crate::common::typed;

const WRITERS: usize = 4;
const OPS_PER_WRITER: usize = 600;
const NAMES_PER_WRITER: usize = 40;
/// The write phase stops here even on a machine too loaded to finish.
const WRITE_BUDGET: Duration = Duration::from_secs(60);

/// A client of `servers`, in that order of preference (the first is the
/// base URL, the others failover endpoints), without client-side limits.
fn failover_client(kube: &RealKube, servers: &[String]) -> Client {
    let config = kube
        .config(Some(&servers[0]), Identity::Admin)
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_qps_burst(-1.0, 0)
        .with_endpoints(servers[1..].iter().cloned())
        .with_request_deadline(Duration::from_secs(12))
        // A hung server sends nothing: notice within 4 s.
        .with_watch_idle_timeout(Duration::from_secs(4));
    Client::new(RestClient::new(rest).expect("client"), "default")
}

/// A small deterministic generator (xorshift64*): the writes are random
/// but a failure replays the same sequence.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        usize::try_from(x >> 33).unwrap_or(0) % n.max(1)
    }
}

fn cm(name: &str, value: &str) -> ConfigMap {
    typed(json!({
        "metadata": {"name": name, "labels": {"app": "soak"}},
        "data": {"v": value},
    }))
}

/// Random creates, replaces and deletes over this writer's names.
async fn write_randomly(cms: Api<ConfigMap>, writer: usize, done: Arc<AtomicUsize>) {
    let started = Instant::now();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (writer as u64 + 1));
    let mut alive: HashSet<usize> = HashSet::new();
    for i in 0..OPS_PER_WRITER {
        if started.elapsed() > WRITE_BUDGET {
            break;
        }
        let n = rng.below(NAMES_PER_WRITER);
        let name = format!("w{writer}-{n:02}");
        let value = i.to_string();
        let result = if !alive.contains(&n) {
            cms.create(&PostParams::default(), &cm(&name, &value))
                .await
                .map(|_| {
                    alive.insert(n);
                })
        } else if rng.below(4) == 0 {
            cms.delete(&name, &DeleteParams::default()).await.map(|_| {
                alive.remove(&n);
            })
        } else {
            cms.replace(&name, &PostParams::default(), &cm(&name, &value))
                .await
                .map(|_| ())
        };
        // A write cut short by a killed server may have been applied before
        // the client failed over; the final list is the truth either way.
        if let Err(e) = result {
            if e.is_already_exists() {
                alive.insert(n);
            } else if e.is_not_found() {
                alive.remove(&n);
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
}

fn versions<'a>(objs: impl IntoIterator<Item = &'a ConfigMap>) -> BTreeMap<String, String> {
    objs.into_iter()
        .map(|o| {
            (
                o.metadata.name.clone().unwrap_or_default(),
                o.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Waits (polling) until `f` holds or `limit` passes; answers whether it did.
async fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while !f() {
        if Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// Index in `servers` of the server `client` prefers now.
fn preferred(client: &Client, servers: &[String]) -> usize {
    let first = client
        .rest()
        .endpoints()
        .first()
        .cloned()
        .unwrap_or_default();
    servers
        .iter()
        .position(|s| *s == first)
        .unwrap_or_else(|| panic!("preferred endpoint {first} not one of {servers:?}"))
}

/// Hangs (SIGSTOP) the server the watches use, lets writes go on, compacts
/// etcd past the watches' last version and waits for the reflector to
/// relist (the 410). Answers the hung server's index.
async fn hang_and_compact(
    instance: &Instance,
    watch_client: &Client,
    inits: &AtomicUsize,
    what: &str,
) -> usize {
    let servers = &instance.env.servers;
    let hung = preferred(watch_client, servers);
    let before = inits.load(Ordering::Relaxed);
    instance
        .signal(hung, "STOP")
        .unwrap_or_else(|e| panic!("{what}: {}", error_chain(&e)));
    // Writes go on through the writers' server meanwhile.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rev = etcd::compact(&instance.env.etcd_url)
        .await
        .unwrap_or_else(|e| panic!("{what}: compacting etcd: {}", error_chain(&e)));
    eprintln!("runtime soak: {what}: hung apiserver {hung}, compacted etcd at {rev}");
    let relisted = wait_for(Duration::from_secs(60), || {
        inits.load(Ordering::Relaxed) > before
    })
    .await;
    assert!(
        relisted,
        "{what}: the reflector did not relist after the compaction"
    );
    hung
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_and_controller_equal_the_server_after_kills_410s_and_failover() {
    if kubeset_tests::realkube("runtime-soak").await.is_none() {
        return;
    }
    let instance = tokio::task::spawn_blocking(|| {
        Instance::start(
            "realkube-suite-runtime",
            &[
                "--apiservers",
                "3",
                "--port",
                "16447",
                "--etcd-port",
                "23830",
                "--watch-cache",
                "off",
            ],
        )
    })
    .await
    .expect("start task")
    .unwrap_or_else(|e| panic!("starting the runtime instance: {}", error_chain(&e)));
    let servers = instance.env.servers.clone();
    assert_eq!(servers.len(), 3);
    let kube = RealKube {
        env: instance.env.clone(),
    };
    // Watches prefer server 0, writes server 2: hanging or killing the
    // watches' server does not stall the writers.
    let watch_client = failover_client(&kube, &servers);
    let write_client = failover_client(
        &kube,
        &[servers[2].clone(), servers[1].clone(), servers[0].clone()],
    );
    let ns = kubeset_tests::create_namespace(&write_client, "runtime-soak")
        .await
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    let watched: Api<ConfigMap> = Api::namespaced(watch_client.clone(), &ns);

    // Short server timeouts: watches also end and reopen on their own.
    let config = |initial| {
        WatcherConfig::default()
            .initial_list(initial)
            .page_size(25)
            .timeout_with_margin(10, Duration::from_secs(10))
            .backoff(
                Backoff::default().with_bounds(Duration::from_millis(200), Duration::from_secs(2)),
            )
    };

    // A reflector (streaming list when the server offers it, else pages).
    let writer = Writer::new(StoreConfig::new().drop_managed_fields());
    let store = writer.store();
    let inits = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let reflecting = {
        let inits = inits.clone();
        let errors = errors.clone();
        let events = reflector(writer, watcher(watched.clone(), config(InitialList::Auto)));
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            while let Some(ev) = events.next().await {
                match ev {
                    Ok(Event::Init) => {
                        inits.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                }
            }
        })
    };

    // A controller (paginated lists) recording the version it reconciled.
    let reconciled: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let controller =
        Controller::new(watched.clone(), config(InitialList::Paginated)).concurrency(2);
    let ctrl_store = controller.store();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controller = controller.graceful_shutdown_on(async move {
        let _ = stop_rx.await;
    });
    let ctrl = tokio::spawn(controller.run_until_shutdown(
        |cm: Arc<ConfigMap>, seen: Arc<Mutex<HashMap<String, String>>>| async move {
            if let Ok(mut seen) = seen.lock() {
                seen.insert(
                    cm.metadata.name.clone().unwrap_or_default(),
                    cm.metadata.resource_version.clone().unwrap_or_default(),
                );
            }
            Ok::<_, std::convert::Infallible>(Action::await_change())
        },
        reconciled.clone(),
    ));
    assert!(
        wait_for(Duration::from_secs(60), || store.is_ready()
            && ctrl_store.is_ready())
        .await,
        "the caches become ready"
    );

    let started = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            tokio::spawn(write_randomly(
                Api::namespaced(write_client.clone(), &ns),
                w,
                done.clone(),
            ))
        })
        .collect();
    let total = WRITERS * OPS_PER_WRITER;
    let reached = |share: usize| {
        let done = done.clone();
        async move {
            wait_for(WRITE_BUDGET, || {
                done.load(Ordering::Relaxed) * 100 >= total * share
            })
            .await
        }
    };

    // 1. Hang the watches' server, compact: the reflector relists (410)
    //    from another server; then the hung server resumes.
    reached(15).await;
    let hung = hang_and_compact(&instance, &watch_client, &inits, "first 410").await;
    instance
        .signal(hung, "CONT")
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    // 2. The same again, and then the hung server is SIGKILLed: its
    //    connections die and the watches fail over for good.
    reached(50).await;
    let killed = hang_and_compact(&instance, &watch_client, &inits, "second 410").await;
    instance
        .signal(killed, "KILL")
        .unwrap_or_else(|e| panic!("{}", error_chain(&e)));
    eprintln!("runtime soak: killed apiserver {killed}");

    for w in writers {
        w.await.expect("writer finishes");
    }
    let write_secs = started.elapsed().as_secs_f64();
    let writes = done.load(Ordering::Relaxed);
    assert!(writes >= 1000, "only {writes} writes in the budget");

    let truth = versions(
        &Api::<ConfigMap>::namespaced(write_client.clone(), &ns)
            .list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("final list: {}", error_chain(&e)))
            .items,
    );
    assert!(!truth.is_empty());
    let state = || versions(store.state().iter().map(|a| &**a));
    let ctrl_state = || versions(ctrl_store.state().iter().map(|a| &**a));
    wait_for(Duration::from_secs(60), || {
        state() == truth && ctrl_state() == truth
    })
    .await;
    assert_eq!(state(), truth, "the reflector's store equals the server");
    assert_eq!(
        ctrl_state(),
        truth,
        "the controller's store equals the server"
    );
    assert!(
        store
            .state()
            .iter()
            .all(|o| o.metadata.managed_fields.is_none()),
        "managedFields dropped"
    );
    let all_reconciled = wait_for(Duration::from_secs(60), || {
        reconciled
            .lock()
            .map(|r| truth.iter().all(|(k, rv)| r.get(k) == Some(rv)))
            .unwrap_or(false)
    })
    .await;
    let missing: Vec<_> = reconciled
        .lock()
        .map(|r| {
            truth
                .iter()
                .filter(|(k, rv)| r.get(*k) != Some(rv))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        all_reconciled,
        "keys not reconciled at their final version: {missing:?}"
    );
    // The initial list and at least one relist per compaction.
    let relists = inits.load(Ordering::Relaxed);
    assert!(relists >= 3, "only {relists} initial lists");
    let survivor = preferred(&watch_client, &servers);
    assert_ne!(survivor, killed, "the watches failed over");

    stop_tx.send(()).expect("controller still running");
    tokio::time::timeout(Duration::from_secs(30), ctrl)
        .await
        .expect("the controller stops")
        .expect("controller task");
    reflecting.abort();
    eprintln!(
        "runtime soak: {writes} of {total} writes in {write_secs:.1} s, {} objects at the end, \
         {relists} initial lists, {} watcher errors, watches now on apiserver {survivor}",
        truth.len(),
        errors.load(Ordering::Relaxed),
    );
    drop(instance);
}
