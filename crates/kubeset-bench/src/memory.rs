//! Memory of an informer-style cache: one process lists every Pod into an
//! in-memory store, then applies watch updates until it has seen a given
//! number of `MODIFIED` events, and reports its peak RSS (`VmHWM`).
//!
//! Two of kubeset's variants are two controllers' caches of all Pods in one
//! process: [`Variant::TwoCaches`] (each its own watch and store) and
//! [`Variant::Shared`] (one [`SharedCaches`] cache both read). Each
//! controller is a subscriber of its cache that must see every update.
//!
//! The server side ([`serve_pods`]) seeds the embedded API server with a
//! PodList and, when told on stdin (`update N`), patches N pods (one
//! annotation each, so each is one `MODIFIED` event carrying the whole pod).

use std::collections::BTreeSet;
use std::io::{BufRead as _, Write as _};
use std::time::Instant;

use futures::{Stream, StreamExt as _};
use kubeset::api::core::v1::Pod;
use kubeset::params::PatchParams;
use kubeset::rest::content::WireFormat;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client, Patch};
use kubeset_runtime::{
    Event, SharedCache, SharedCaches, StoreConfig, WatcherConfig, Writer, metadata_watcher,
    reflector, watcher,
};
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

use crate::proc::self_peak_rss_kib;
use crate::{Error, Record};

/// Transport errors a cache tolerates before giving up (watchers retry).
const MAX_ERRORS: usize = 20;

fn kubeset_client(url: &str) -> Result<Client, Error> {
    kubeset_client_as(url, WireFormat::Json)
}

pub(crate) fn kubeset_client_as(url: &str, format: WireFormat) -> Result<Client, Error> {
    let config = RestConfig::new(url)
        .with_qps_burst(-1.0, 0)
        .with_wire_format(format);
    let rest = RestClient::new(config).map_err(|source| Error::Kubeset { source })?;
    Ok(Client::new(rest, "default"))
}

/// Start the embedded API server seeded with the pods of `podlist` (JSON,
/// as `gen_podlist.py` writes it; their namespaces are created first).
/// Returns the server and the `(namespace, name)` of every pod.
pub async fn seed(podlist: &[u8]) -> Result<(TestServer, Vec<(String, String)>), Error> {
    let list: Value = serde_json::from_slice(podlist).map_err(|source| Error::Json {
        peer: "seed",
        source,
    })?;
    let Some(Value::Array(items)) = list.get("items").cloned() else {
        return Err(Error::NotAList);
    };
    drop(list);
    let server = TestServer::builder()
        .start()
        .await
        .map_err(|source| Error::Server { source })?;
    let namespaces: BTreeSet<String> = items
        .iter()
        .filter_map(|p| p.pointer("/metadata/namespace").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    for ns in namespaces {
        // "default" exists already; others are new.
        let _ = server
            .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    }
    let mut keys = Vec::with_capacity(items.len());
    for mut pod in items {
        pod["apiVersion"] = json!("v1");
        pod["kind"] = json!("Pod");
        if let Some(meta) = pod["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
            meta.remove("uid");
        }
        let ns = pod
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_owned();
        let name = pod
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        server
            .create(pod)
            .map_err(|source| Error::Server { source })?;
        keys.push((ns, name));
    }
    Ok((server, keys))
}

/// `kubeset-bench serve-pods FILE`: seed, print the URL, then on each
/// stdin line `update N` merge-patch N pods over HTTP (round-robin over the
/// list; the `bench/update` annotation changes each time) and print
/// `updated N`. Ends when stdin closes.
pub async fn serve_pods(podlist: &[u8]) -> Result<(), Error> {
    let (server, keys) = seed(podlist).await?;
    println!("{}", server.url());
    let _ = std::io::stdout().flush();
    let client = kubeset_client(&server.url())?;
    let mut updates = update_commands();
    let mut generation = 0u64;
    let mut next = 0usize;
    while let Some(n) = updates.recv().await {
        generation += 1;
        for _ in 0..n {
            let Some((ns, name)) = keys.get(next % keys.len().max(1)) else {
                break;
            };
            next += 1;
            let api: Api<Pod> = Api::namespaced(client.clone(), ns);
            let patch =
                json!({"metadata": {"annotations": {"bench/update": generation.to_string()}}});
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|source| Error::Kubeset { source })?;
        }
        println!("updated {n}");
        let _ = std::io::stdout().flush();
    }
    server.shutdown().await;
    Ok(())
}

/// The `N` of each `update N` line of stdin (other lines are passed over),
/// read on a thread of its own; ends when stdin closes.
pub(crate) fn update_commands() -> tokio::sync::mpsc::UnboundedReceiver<usize> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let n = line
                .strip_prefix("update ")
                .and_then(|n| n.trim().parse::<usize>().ok());
            if n.is_some_and(|n| tx.send(n).is_err()) {
                break;
            }
        }
    });
    rx
}

/// What a kubeset cache keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Whole pods.
    Full,
    /// Whole pods without `metadata.managedFields` (the store drops them).
    NoManagedFields,
    /// Metadata only (`PartialObjectMetadata`, managedFields dropped).
    Metadata,
    /// Two controllers, each with its own cache (watch and store) of whole
    /// pods.
    TwoCaches,
    /// Two controllers sharing one cache of whole pods (`SharedCaches`).
    Shared,
    /// Whole pods, the client negotiating protobuf
    /// (`RestConfig::with_wire_format(WireFormat::Protobuf)`): the
    /// watcher's streaming list and its watch come in protobuf.
    Protobuf,
}

impl Variant {
    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::NoManagedFields => "no-managed-fields",
            Variant::Metadata => "metadata",
            Variant::TwoCaches => "two-caches",
            Variant::Shared => "shared",
            Variant::Protobuf => "protobuf",
        }
    }

    /// The variant named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Variant::Full,
            Variant::NoManagedFields,
            Variant::Metadata,
            Variant::TwoCaches,
            Variant::Shared,
            Variant::Protobuf,
        ]
        .into_iter()
        .find(|v| v.name() == name)
    }
}

/// How [`drain`] reads its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drain {
    /// The process's only stream: prints `synced` at the initial list.
    Announce,
    /// One of several subscribers (the caller prints `synced`); a second
    /// initial list is a resync after falling behind, which loses the
    /// count of updates: an error, not a hang.
    Subscriber,
}

/// Counts events: notes the initial list (see [`Drain`]), then returns
/// after `updates` applied events (or an error after too many failed
/// watcher steps). Returns the elapsed seconds.
async fn drain<S, T, E>(events: S, updates: usize, mode: Drain) -> Result<f64, Error>
where
    S: Stream<Item = Result<T, E>>,
    T: IsEvent,
    E: std::fmt::Display,
{
    let started = Instant::now();
    let mut events = std::pin::pin!(events);
    let (mut synced, mut seen, mut errors) = (false, 0usize, 0usize);
    while let Some(ev) = events.next().await {
        match ev {
            Ok(ev) if ev.is_init_done() => {
                if synced && mode == Drain::Subscriber {
                    eprintln!("cache: a subscriber fell behind and was resynced");
                    return Err(Error::Cache {
                        seen,
                        want: updates,
                    });
                }
                synced = true;
                if mode == Drain::Announce {
                    println!("synced");
                    let _ = std::io::stdout().flush();
                }
                if updates == 0 {
                    break;
                }
            }
            Ok(ev) if synced && ev.is_apply() => {
                seen += 1;
                if seen >= updates {
                    break;
                }
            }
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                eprintln!("cache: watcher step failed: {e}");
                if errors > MAX_ERRORS {
                    return Err(Error::Cache {
                        seen,
                        want: updates,
                    });
                }
            }
        }
    }
    if seen < updates {
        return Err(Error::Cache {
            seen,
            want: updates,
        });
    }
    Ok(started.elapsed().as_secs_f64())
}

/// The two watcher event types [`drain`] (and the scale row) read.
pub(crate) trait IsEvent {
    fn is_init_done(&self) -> bool;
    fn is_apply(&self) -> bool;
}

impl<K> IsEvent for Event<K> {
    fn is_init_done(&self) -> bool {
        matches!(self, Event::InitDone)
    }
    fn is_apply(&self) -> bool {
        matches!(self, Event::Apply(_))
    }
}

impl<K> IsEvent for kube::runtime::watcher::Event<K> {
    fn is_init_done(&self) -> bool {
        matches!(self, kube::runtime::watcher::Event::InitDone)
    }
    fn is_apply(&self) -> bool {
        matches!(self, kube::runtime::watcher::Event::Apply(_))
    }
}

fn record(implementation: &str, variant: &str, items: usize, elapsed: f64) -> Record {
    let mut r = Record::timed("cache-memory", implementation, items as u64, vec![elapsed]);
    r.peak_rss_kib = self_peak_rss_kib();
    r.variant = Some(variant.to_owned());
    r
}

/// A kubeset cache (`kubeset_runtime` watcher + reflector store, default
/// watcher settings) of every Pod at `url`.
pub async fn cache_kubeset(url: &str, variant: Variant, updates: usize) -> Result<Record, Error> {
    let format = if variant == Variant::Protobuf {
        WireFormat::Protobuf
    } else {
        WireFormat::Json
    };
    let api: Api<Pod> = Api::all(kubeset_client_as(url, format)?);
    let config = WatcherConfig::default();
    let (elapsed, len) = match variant {
        Variant::Metadata => {
            let writer = Writer::new(StoreConfig::new().drop_managed_fields());
            let store = writer.store();
            let t = drain(
                reflector(writer, metadata_watcher(api, config)),
                updates,
                Drain::Announce,
            )
            .await?;
            (t, store.len())
        }
        Variant::Full | Variant::NoManagedFields | Variant::Protobuf => {
            let store_config = if variant != Variant::NoManagedFields {
                StoreConfig::new()
            } else {
                StoreConfig::new().drop_managed_fields()
            };
            let writer = Writer::new(store_config);
            let store = writer.store();
            let t = drain(
                reflector(writer, watcher(api, config)),
                updates,
                Drain::Announce,
            )
            .await?;
            (t, store.len())
        }
        Variant::TwoCaches | Variant::Shared => {
            return two_controllers(api, config, variant, updates).await;
        }
    };
    Ok(record("kubeset", variant.name(), len, elapsed))
}

/// A kube-rs cache (`kube::runtime::reflector` over `watcher`, default
/// `watcher::Config`) of every Pod at `url`.
pub async fn cache_kube(url: &str, updates: usize) -> Result<Record, Error> {
    let (reader, events) = crate::kube_pod_cache(url)?;
    let elapsed = drain(events, updates, Drain::Announce).await?;
    Ok(record("kube-rs", "full", reader.len(), elapsed))
}

/// Two controllers' caches of every Pod: with [`Variant::Shared`] both
/// come from one [`SharedCaches`] (one watch, one store), else each is a
/// [`SharedCache`] of its own (two watches, two stores). Each controller
/// subscribes to its cache and must see every update; `synced` is printed
/// once both stores hold the initial list. The record's `items` are the
/// objects one controller sees.
async fn two_controllers(
    api: Api<Pod>,
    config: WatcherConfig,
    variant: Variant,
    updates: usize,
) -> Result<Record, Error> {
    let factory = SharedCaches::new();
    let caches: Vec<SharedCache<Pod>> = (0..2)
        .map(|_| match variant {
            Variant::Shared => factory.get(api.clone(), config.clone(), StoreConfig::new()),
            _ => SharedCache::start(
                api.clone(),
                config.clone(),
                StoreConfig::new(),
                kubeset_runtime::shared::DEFAULT_CAPACITY,
            ),
        })
        .collect();
    let controllers: Vec<_> = caches
        .iter()
        .map(|cache| {
            let events = cache.subscribe().map(Ok::<_, std::convert::Infallible>);
            tokio::spawn(drain(events, updates, Drain::Subscriber))
        })
        .collect();
    for cache in &caches {
        // The cache's own task holds the writer for as long as the cache
        // lives: a dropped writer cannot happen here.
        cache.store().wait_until_ready().await.unwrap_or(());
    }
    println!("synced");
    let _ = std::io::stdout().flush();
    let mut elapsed = 0f64;
    for controller in controllers {
        let t = controller.await.map_err(|_| Error::Cache {
            seen: 0,
            want: updates,
        })??;
        elapsed = elapsed.max(t);
    }
    let watches = match variant {
        Variant::Shared => factory.len(),
        _ => caches.len(),
    };
    eprintln!("cache: two controllers over {watches} watch(es)");
    let items = caches.first().map_or(0, |c| c.store().len());
    Ok(record("kubeset", variant.name(), items, elapsed))
}
