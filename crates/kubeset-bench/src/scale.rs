//! The scale row: a cache of every Pod of a large cluster, started cold.
//!
//! A client process builds its client, lists and watches every Pod into
//! its cache, prints `synced`, then applies `UPDATES` watch updates (the
//! server patches that many pods) and prints one [`ScaleRecord`]: time to
//! synced, CPU seconds, RSS before the client existed, at synced, its peak
//! (`VmHWM`) and once the last update is applied, and — for kubeset — the
//! cache's own estimate of its bytes (`Store::memory`), to be read
//! against the RSS growth.
//!
//! With [`EMPTY_CACHE_ENV`] set, a kubeset client watches with a label
//! selector no pod has ([`EMPTY_SELECTOR`]): the same process, client,
//! connection and watch with an empty cache, whose RSS growth is the part
//! of a full cache's growth that is not the cache (run with `UPDATES` 0,
//! it prints its record as soon as it has synced).
//!
//! The server side ([`serve_scale`]) seeds the embedded API server by
//! streaming the generator's PodList from its file (one pod in memory at a
//! time, so a 100,000-pod list of about 1 GB is never parsed whole), then
//! answers `update N` on stdin by merge-patching N pods, a few at a time.
//! Clients run one at a time (see `xtask/src/bench/scale.rs`).

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt as _};
use kubeset::api::core::v1::Pod;
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PatchParams;
use kubeset::rest::content::WireFormat;
use kubeset::{Api, Client, Patch};
use kubeset_runtime::{
    InitialList, StoreConfig, WatcherConfig, Writer, metadata_watcher, reflector, watcher,
};
use kubeset_testserver::TestServer;
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Error;
use crate::memory::IsEvent;
use crate::proc::{self_cpu_s, self_peak_rss_kib, self_rss_kib};

/// Watch events the seeded server keeps: a client may fall this far
/// behind the patches before its watch expires (each event holds a pod
/// and its previous state, about 60 KB at the generator's shape).
const HISTORY: usize = 10_000;
/// Patches in flight at once while the server applies `update N`.
const PATCH_CONCURRENCY: usize = 8;
/// Longest a client waits for its cache (list plus updates) before it
/// gives up with an error.
const DEADLINE: Duration = Duration::from_secs(30 * 60);
/// Failed watcher steps a client tolerates (watchers retry).
const MAX_ERRORS: usize = 20;
/// Set (to anything) in a kubeset client's environment, its cache stays
/// empty: it watches with [`EMPTY_SELECTOR`].
pub const EMPTY_CACHE_ENV: &str = "KUBESET_BENCH_SCALE_EMPTY";
/// A label selector no pod of the generator's lists has.
pub const EMPTY_SELECTOR: &str = "kubeset-bench/empty-cache=true";

/// One client's figures, the record the Go peer prints in the same shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScaleRecord {
    /// Always `scale`.
    pub bench: &'static str,
    /// `kubeset`, `kube-rs` (the Go peer writes `client-go`).
    #[serde(rename = "impl")]
    pub implementation: &'static str,
    /// What the cache keeps and how it is read (see [`Variant`]).
    pub variant: String,
    /// Objects in the cache at the end.
    pub items: u64,
    /// Updates applied after synced.
    pub updates: u64,
    /// Seconds from before the client was built to the cache synced.
    pub sync_s: f64,
    /// Seconds from synced to the last update applied.
    pub updates_s: f64,
    /// CPU seconds (user + system) of the whole process.
    pub cpu_s: Option<f64>,
    /// RSS (KiB) before the client was built.
    pub base_rss_kib: Option<u64>,
    /// RSS (KiB) when the cache synced.
    pub synced_rss_kib: Option<u64>,
    /// Peak RSS (KiB, `VmHWM`) over the whole run.
    pub peak_rss_kib: Option<u64>,
    /// RSS (KiB) once the last update was applied.
    pub steady_rss_kib: Option<u64>,
    /// The cache's own estimate of its bytes (`Store::memory().bytes`),
    /// kubeset only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
}

/// What a kubeset client of the scale row keeps, and how it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Whole pods, JSON, the default watcher (`InitialList::Auto`: a
    /// streaming list where the server supports one, as the embedded server
    /// and kube-apiserver 1.35 do).
    Json,
    /// Whole pods, JSON, paginated list (500 a page, as kube-rs's default
    /// list).
    Paged,
    /// Whole pods, protobuf list and watch (default watcher).
    Protobuf,
    /// `PartialObjectMetadata`, managedFields dropped.
    Metadata,
    /// A typed projection ([`PodPlacement`]), managedFields dropped.
    Projection,
}

impl Variant {
    /// Every variant, in the order of the report.
    pub const ALL: [Variant; 5] = [
        Variant::Json,
        Variant::Paged,
        Variant::Protobuf,
        Variant::Metadata,
        Variant::Projection,
    ];

    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Json => "json",
            Variant::Paged => "json-paged",
            Variant::Protobuf => "protobuf",
            Variant::Metadata => "metadata",
            Variant::Projection => "projection",
        }
    }

    /// The variant named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a placement-watching controller reads of a Pod: its metadata, its
/// node, its containers' images and its phase (the projection of
/// `examples/projection_memory.rs` in kubeset-runtime).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct PodPlacement {
    /// The pod's metadata.
    pub metadata: ObjectMeta,
    /// `spec.nodeName` and the containers' images.
    #[serde(default)]
    pub spec: PlacementSpec,
    /// `status.phase`.
    #[serde(default)]
    pub status: PlacementStatus,
}

/// The part of a Pod's spec [`PodPlacement`] reads.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSpec {
    /// The node the pod runs on.
    pub node_name: Option<String>,
    /// Its containers, images only.
    #[serde(default)]
    pub containers: Vec<ContainerImage>,
}

/// A container's image.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct ContainerImage {
    /// The image.
    pub image: Option<String>,
}

/// The part of a Pod's status [`PodPlacement`] reads.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct PlacementStatus {
    /// The pod's phase.
    pub phase: Option<String>,
}

kubeset_runtime::projection!(PodPlacement => Pod);

/// Calls `each` with every element of a JSON list's `items`, read from
/// `reader` one element at a time.
struct Items<'f, F>(&'f mut F);

impl<'de, F: FnMut(Value) -> Result<(), String>> Visitor<'de> for Items<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list object with an items array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                map.next_value_seed(Elements(self.0))?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if found {
            Ok(())
        } else {
            Err(A::Error::custom("no items array"))
        }
    }
}

struct Elements<'f, F>(&'f mut F);

impl<'de, F: FnMut(Value) -> Result<(), String>> DeserializeSeed<'de> for Elements<'_, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(Value) -> Result<(), String>> Visitor<'de> for Elements<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<Value>()? {
            (self.0)(item).map_err(A::Error::custom)?;
        }
        Ok(())
    }
}

/// Start the embedded API server (a watch history of `HISTORY` events)
/// and create every pod of the PodList file at `path`, read one pod at a
/// time; namespaces are created as they are first named. Returns the
/// server and each pod's `(namespace, name)`.
pub async fn seed_streaming(path: &Path) -> Result<(TestServer, Vec<(String, String)>), Error> {
    let server = TestServer::builder()
        .history(HISTORY)
        .start()
        .await
        .map_err(|source| Error::Server { source })?;
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    let mut namespaces = BTreeSet::new();
    let mut keys = Vec::new();
    let mut create = |mut pod: Value| -> Result<(), String> {
        pod["apiVersion"] = json!("v1");
        pod["kind"] = json!("Pod");
        if let Some(meta) = pod["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
            meta.remove("uid");
        }
        let field = |p: &Value, at: &str| p.pointer(at).and_then(Value::as_str).map(str::to_owned);
        let ns = field(&pod, "/metadata/namespace").unwrap_or_else(|| "default".to_owned());
        let name = field(&pod, "/metadata/name").unwrap_or_default();
        if namespaces.insert(ns.clone()) {
            // "default" exists already: its error is expected.
            let _ = server
                .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
        }
        server
            .create(pod)
            .map_err(|e| format!("pod {ns}/{name}: {e}"))?;
        keys.push((ns, name));
        Ok(())
    };
    serde::Deserializer::deserialize_map(&mut de, Items(&mut create))
        .and_then(|()| de.end())
        .map_err(|source| Error::Json {
            peer: "seed",
            source,
        })?;
    Ok((server, keys))
}

/// Merge-patch `n` pods of `keys` starting at `*next` (round robin), the
/// annotation `bench/update` set to `generation`; [`PATCH_CONCURRENCY`]
/// at once.
async fn patch_pods(
    client: &Client,
    keys: &[(String, String)],
    next: &mut usize,
    n: usize,
    generation: u64,
) -> Result<(), Error> {
    if keys.is_empty() {
        return Ok(());
    }
    let patch = json!({"metadata": {"annotations": {"bench/update": generation.to_string()}}});
    let picks: Vec<&(String, String)> = (0..n).map(|i| &keys[(*next + i) % keys.len()]).collect();
    *next += n;
    let mut done = futures::stream::iter(picks)
        .map(|(ns, name)| {
            let api: Api<Pod> = Api::namespaced(client.clone(), ns);
            let patch = &patch;
            async move {
                api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
        })
        .buffer_unordered(PATCH_CONCURRENCY);
    while let Some(r) = done.next().await {
        r.map_err(|source| Error::Kubeset { source })?;
    }
    Ok(())
}

/// `kubeset-bench serve-scale FILE`: seed (see [`seed_streaming`]), print
/// the URL, then on each stdin line `update N` patch N pods and print
/// `updated N`. Ends when stdin closes.
pub async fn serve_scale(path: &Path) -> Result<(), Error> {
    let started = Instant::now();
    let (server, keys) = seed_streaming(path).await?;
    eprintln!(
        "serve-scale: {} pods seeded in {:.1} s",
        keys.len(),
        started.elapsed().as_secs_f64()
    );
    println!("{}", server.url());
    let _ = std::io::stdout().flush();
    let client = crate::memory::kubeset_client_as(&server.url(), WireFormat::Json)?;
    let mut updates = crate::memory::update_commands();
    let (mut generation, mut next) = (0u64, 0usize);
    while let Some(n) = updates.recv().await {
        generation += 1;
        patch_pods(&client, &keys, &mut next, n, generation).await?;
        println!("updated {n}");
        let _ = std::io::stdout().flush();
    }
    server.shutdown().await;
    Ok(())
}

/// What [`follow`] saw: seconds to the initial list and from it to the
/// last update, and the RSS at both.
struct Followed {
    sync_s: f64,
    synced_rss_kib: Option<u64>,
    updates_s: f64,
    /// RSS once the last update was applied, read while the watch is
    /// still open (as the Go peer reads it with its informer running): a
    /// controller's watch never closes, and closing it gives memory back
    /// (the connection and the allocator's pages freed with it).
    steady_rss_kib: Option<u64>,
}

/// Reads a cache's event stream: prints `synced` at the end of the initial
/// list, then counts applied objects up to `updates`. A second initial
/// list (the watch expired and the cache relisted) loses the count: an
/// error, as is the [`DEADLINE`].
async fn follow<S, T, E>(events: S, started: Instant, updates: usize) -> Result<Followed, Error>
where
    S: Stream<Item = Result<T, E>>,
    T: IsEvent,
    E: fmt::Display,
{
    let mut events = std::pin::pin!(events);
    let mut synced: Option<(Instant, Option<u64>)> = None;
    let (mut seen, mut errors) = (0usize, 0usize);
    let mut steady_rss_kib = None;
    let read = async {
        while let Some(ev) = events.next().await {
            match ev {
                Ok(ev) if ev.is_init_done() => {
                    if synced.is_some() {
                        eprintln!("scale: the cache relisted (its watch fell behind)");
                        return false;
                    }
                    synced = Some((Instant::now(), self_rss_kib()));
                    println!("synced");
                    let _ = std::io::stdout().flush();
                }
                Ok(ev) if synced.is_some() && ev.is_apply() => seen += 1,
                Ok(_) => {}
                Err(e) => {
                    errors += 1;
                    eprintln!("scale: watcher step failed: {e}");
                    if errors > MAX_ERRORS {
                        return false;
                    }
                }
            }
            if synced.is_some() && seen >= updates {
                steady_rss_kib = self_rss_kib();
                return true;
            }
        }
        false
    };
    let complete = tokio::time::timeout(DEADLINE, read).await.unwrap_or(false);
    match synced {
        Some((at, synced_rss_kib)) if complete => Ok(Followed {
            sync_s: at.duration_since(started).as_secs_f64(),
            synced_rss_kib,
            updates_s: at.elapsed().as_secs_f64(),
            steady_rss_kib,
        }),
        _ => Err(Error::Cache {
            seen,
            want: updates,
        }),
    }
}

fn finish(
    implementation: &'static str,
    variant: String,
    items: usize,
    updates: usize,
    followed: &Followed,
    base_rss_kib: Option<u64>,
    cache_bytes: Option<u64>,
) -> ScaleRecord {
    let peak_rss_kib = self_peak_rss_kib();
    ScaleRecord {
        bench: "scale",
        implementation,
        variant,
        items: items as u64,
        updates: updates as u64,
        sync_s: followed.sync_s,
        updates_s: followed.updates_s,
        cpu_s: self_cpu_s(),
        base_rss_kib,
        synced_rss_kib: followed.synced_rss_kib,
        peak_rss_kib,
        steady_rss_kib: followed.steady_rss_kib,
        cache_bytes,
    }
}

/// A kubeset cache of every Pod at `url` (`kubeset_runtime` watcher +
/// reflector, its store counting its bytes), as [`Variant`] says.
pub async fn run_kubeset(
    url: &str,
    variant: Variant,
    updates: usize,
) -> Result<ScaleRecord, Error> {
    let base = self_rss_kib();
    let started = Instant::now();
    let format = match variant {
        Variant::Protobuf => WireFormat::Protobuf,
        _ => WireFormat::Json,
    };
    let api: Api<Pod> = Api::all(crate::memory::kubeset_client_as(url, format)?);
    let config = match variant {
        Variant::Paged => WatcherConfig::default().initial_list(InitialList::Paginated),
        _ => WatcherConfig::default(),
    };
    let config = if std::env::var_os(EMPTY_CACHE_ENV).is_some() {
        config.labels(EMPTY_SELECTOR)
    } else {
        config
    };
    let (followed, items, bytes) = match variant {
        Variant::Metadata => {
            let writer = Writer::new(StoreConfig::new().drop_managed_fields().count_memory());
            let store = writer.store();
            let events = reflector(writer, metadata_watcher(api, config));
            let f = follow(events, started, updates).await?;
            (f, store.len(), store.memory().bytes)
        }
        Variant::Projection => {
            let api: Api<PodPlacement> = kubeset_runtime::projection::api(&api);
            let writer = Writer::new(StoreConfig::new().drop_managed_fields().count_memory());
            let store = writer.store();
            let f = follow(reflector(writer, watcher(api, config)), started, updates).await?;
            (f, store.len(), store.memory().bytes)
        }
        Variant::Json | Variant::Paged | Variant::Protobuf => {
            let writer = Writer::new(StoreConfig::new().count_memory());
            let store = writer.store();
            let f = follow(reflector(writer, watcher(api, config)), started, updates).await?;
            (f, store.len(), store.memory().bytes)
        }
    };
    Ok(finish(
        "kubeset",
        variant.name().to_owned(),
        items,
        updates,
        &followed,
        base,
        Some(bytes),
    ))
}

/// A kube-rs cache (`kube::runtime::reflector` over `watcher`, default
/// `watcher::Config`: a paginated list) of every Pod at `url`.
pub async fn run_kube(url: &str, updates: usize) -> Result<ScaleRecord, Error> {
    let base = self_rss_kib();
    let started = Instant::now();
    let (reader, events) = crate::kube_pod_cache(url)?;
    let followed = follow(events, started, updates).await?;
    Ok(finish(
        "kube-rs",
        "json-paged".to_owned(),
        reader.len(),
        updates,
        &followed,
        base,
        None,
    ))
}
