//! Hundreds of random writes (six writers) interleaved with cut watches,
//! forced 410s and a replica going down, the faults stepped by the writes'
//! progress: every cache ends equal to the server, and the controller
//! reconciled the final version of every key.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::params::{DeleteParams, ListParams, PostParams};
use kubeset_client::{Api, Resource};
use kubeset_runtime::{
    Action, Backoff, Controller, Event, InitialList, ObjectKey, Store, StoreConfig, WatcherConfig,
    Writer, metadata_watcher, reflector, watcher,
};
use kubeset_testserver::TestServer;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

use common::{client, cm, eventually, versions};

const NAMESPACES: [&str; 2] = ["default", "kube-public"];
const WRITERS: usize = 6;
const OPS_PER_WRITER: usize = 120;
/// Faults are injected as the writes progress (one step per this many
/// writes), not on a clock: a loaded machine writes slower and sees the
/// same faults between the same writes' neighbours.
const WRITES_PER_FAULT_STEP: usize = 40;
/// A hang guard only: the writers finish in seconds when nothing hangs.
const WRITE_HANG_GUARD: Duration = Duration::from_secs(600);
const NAMES_PER_WRITER: usize = 60;

#[derive(Default)]
struct Seen {
    /// Last resourceVersion each key was reconciled at.
    reconciled: Mutex<HashMap<ObjectKey, String>>,
    active: Mutex<HashSet<ObjectKey>>,
    overlaps: AtomicUsize,
    running: AtomicUsize,
    max_running: AtomicUsize,
}

fn config(initial: InitialList) -> WatcherConfig {
    WatcherConfig::default()
        .initial_list(initial)
        .page_size(40)
        .timeout_with_margin(5, Duration::from_secs(5))
        .backoff(Backoff::default().with_bounds(Duration::from_millis(200), Duration::from_secs(1)))
}

/// Runs a reflector into a new store, counting relists.
fn spawn_store<K>(
    events: impl futures::Stream<Item = Result<Event<K>, kubeset_runtime::WatcherError>>
    + Send
    + 'static,
    store_config: StoreConfig<K>,
) -> (Store<K>, Arc<AtomicUsize>)
where
    K: Resource + Send + Sync + 'static,
{
    let writer = Writer::new(store_config);
    let store = writer.store();
    let inits = Arc::new(AtomicUsize::new(0));
    let count = inits.clone();
    tokio::spawn(async move {
        let mut s = std::pin::pin!(reflector(writer, events));
        while let Some(ev) = s.next().await {
            if let Ok(Event::Init) = ev {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    (store, inits)
}

async fn write_randomly(api: Api<ConfigMap>, writer: usize, done: Arc<AtomicUsize>) {
    let mut rng = StdRng::seed_from_u64(42 + writer as u64);
    let mut alive: HashSet<(usize, usize)> = HashSet::new();
    for i in 0..OPS_PER_WRITER {
        let ns_i = rng.random_range(0..NAMESPACES.len());
        let n = rng.random_range(0..NAMES_PER_WRITER);
        let ns = NAMESPACES[ns_i];
        let name = format!("w{writer}-{n}");
        let api_ns: Api<ConfigMap> = Api::namespaced(api.client().clone(), ns);
        let value = format!("{i}");
        let result = if !alive.contains(&(ns_i, n)) {
            api_ns
                .create(&PostParams::default(), &cm(ns, &name, &value))
                .await
                .map(|_| {
                    alive.insert((ns_i, n));
                })
        } else if rng.random_bool(0.25) {
            api_ns
                .delete(&name, &DeleteParams::default())
                .await
                .map(|_| {
                    alive.remove(&(ns_i, n));
                })
        } else {
            api_ns
                .replace(&name, &PostParams::default(), &cm(ns, &name, &value))
                .await
                .map(|_| ())
        };
        // Writes go through failover too; a write that failed is simply
        // not counted (the final list is the truth either way).
        if let Err(e) = result {
            if e.is_already_exists() {
                alive.insert((ns_i, n));
            } else if e.is_not_found() {
                alive.remove(&(ns_i, n));
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_and_controller_converge_after_faults() {
    let server = TestServer::builder()
        .replicas(2)
        .history(20)
        .bookmark_interval(Duration::from_millis(300))
        .start()
        .await
        .expect("server starts");
    let urls = server.urls();
    let c = client(&urls);
    let all: Api<ConfigMap> = Api::all(c.clone());

    // Three caches: streaming-list controller store, paginated store with
    // indexes and managedFields dropped, metadata-only store.
    let seen = Arc::new(Seen::default());
    let controller = Controller::with_store(
        all.clone(),
        config(InitialList::Auto),
        StoreConfig::new().index_by_namespace(),
    )
    .concurrency(3);
    let ctrl_store = controller.store();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controller = controller.graceful_shutdown_on(async move {
        let _ = stop_rx.await;
    });
    let ctrl = tokio::spawn(controller.run_until_shutdown(
        |obj: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            let key = ObjectKey::of(&*obj);
            if !seen.active.lock().unwrap().insert(key.clone()) {
                seen.overlaps.fetch_add(1, Ordering::Relaxed);
            }
            let now = seen.running.fetch_add(1, Ordering::SeqCst) + 1;
            seen.max_running.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(1)).await;
            seen.reconciled.lock().unwrap().insert(
                key.clone(),
                obj.metadata.resource_version.clone().unwrap_or_default(),
            );
            seen.running.fetch_sub(1, Ordering::SeqCst);
            seen.active.lock().unwrap().remove(&key);
            Ok::<_, std::convert::Infallible>(Action::await_change())
        },
        seen.clone(),
    ));
    let (paged, paged_inits) = spawn_store(
        watcher(all.clone(), config(InitialList::Paginated)),
        StoreConfig::new()
            .drop_managed_fields()
            .index_by_namespace()
            .index_by_label("app"),
    );
    let (meta, meta_inits) = spawn_store(
        metadata_watcher(all.clone(), config(InitialList::Auto)),
        StoreConfig::new(),
    );
    assert!(
        eventually(Duration::from_secs(20), || ctrl_store.is_ready()
            && paged.is_ready()
            && meta.is_ready())
        .await,
        "caches become ready"
    );

    // Writers on their own client, also failing over.
    let started = std::time::Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(write_randomly(Api::all(client(&urls)), w, done.clone())))
        .collect();
    let total = WRITERS * OPS_PER_WRITER;
    let f0 = server.faults(0).expect("replica 0");
    let f1 = server.faults(1).expect("replica 1");
    let mut step = 0;
    while (step + 1) * WRITES_PER_FAULT_STEP < total {
        let due = (step + 1) * WRITES_PER_FAULT_STEP;
        while done.load(Ordering::Relaxed) < due {
            assert!(
                started.elapsed() < WRITE_HANG_GUARD,
                "writers stuck at {} of {total} writes",
                done.load(Ordering::Relaxed)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        step += 1;
        match step % 8 {
            1 => f0.cut_watches(),
            3 => f1.cut_watches(),
            4 => f0.down().await,
            6 => f0.up().await.expect("replica 0 comes back"),
            7 => {
                f0.cut_watches();
                f1.cut_watches();
            }
            _ => {}
        }
    }
    f0.up().await.expect("replica 0 up");
    for w in writers {
        w.await.expect("writer finishes");
    }
    let write_secs = started.elapsed().as_secs_f64();
    let writes = done.load(Ordering::Relaxed);
    assert_eq!(writes, total, "every writer finished its writes");

    let truth = versions(
        &all.list(&ListParams::default())
            .await
            .expect("final list")
            .items,
    );
    assert!(!truth.is_empty());
    let same = |s: &dyn Fn() -> BTreeMap<ObjectKey, String>| s() == truth;
    let ctrl_state = || versions(ctrl_store.state().iter().map(|a| &**a));
    let paged_state = || versions(paged.state().iter().map(|a| &**a));
    let meta_state = || versions(meta.state().iter().map(|a| &**a));
    let converged = eventually(Duration::from_secs(30), || {
        same(&ctrl_state) && same(&paged_state) && same(&meta_state)
    })
    .await;
    assert_eq!(ctrl_state(), truth, "controller store equals the server");
    assert_eq!(paged_state(), truth, "paginated store equals the server");
    assert_eq!(meta_state(), truth, "metadata store equals the server");
    assert!(converged);

    // Indexes agree with the objects.
    for ns in NAMESPACES {
        let want = truth
            .keys()
            .filter(|k| k.namespace.as_deref() == Some(ns))
            .count();
        assert_eq!(
            paged.by_index("namespace", ns).len(),
            want,
            "namespace index of {ns}"
        );
        assert_eq!(ctrl_store.by_index("namespace", ns).len(), want);
    }
    let labelled: usize = paged
        .index_values("label:app")
        .iter()
        .map(|v| paged.by_index("label:app", v).len())
        .sum();
    assert_eq!(labelled, truth.len());
    assert!(
        paged
            .state()
            .iter()
            .all(|o| o.metadata.managed_fields.is_none())
    );

    // 410s forced relists (history of 20 events, many more writes per gap).
    assert!(
        paged_inits.load(Ordering::Relaxed) >= 2,
        "paginated store relisted"
    );
    assert!(
        meta_inits.load(Ordering::Relaxed) >= 2,
        "metadata store relisted"
    );

    // Every key alive at the end was reconciled at its final version.
    let reconciled_all = eventually(Duration::from_secs(30), || {
        let r = seen.reconciled.lock().unwrap();
        truth.iter().all(|(k, rv)| r.get(k) == Some(rv))
    })
    .await;
    assert!(reconciled_all, "controller reconciled every final version");
    assert_eq!(
        seen.overlaps.load(Ordering::Relaxed),
        0,
        "never two reconciles of one key"
    );
    assert!(
        seen.max_running.load(Ordering::SeqCst) <= 3,
        "bounded concurrency"
    );

    // Graceful shutdown returns.
    stop_tx.send(()).expect("controller still running");
    tokio::time::timeout(Duration::from_secs(10), ctrl)
        .await
        .expect("controller stops")
        .expect("controller task ok");
    eprintln!(
        "soak: {writes} of {total} writes in {write_secs:.1} s, {} objects at the end, relists paged={} meta={}",
        truth.len(),
        paged_inits.load(Ordering::Relaxed),
        meta_inits.load(Ordering::Relaxed)
    );
}
