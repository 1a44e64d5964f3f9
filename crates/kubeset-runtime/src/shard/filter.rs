//! Where the shard filter runs: the API server (`shardSelector`,
//! KEP-5866) or this process, and the watch that follows the held shards.

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use kubeset_client::rest::Verb;
use kubeset_client::{Api, Resource};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use tokio::sync::watch;

use crate::gate::ShardGate;
use crate::gate::hash::shard_selector;
use crate::watcher::{Event, WatcherConfig, WatcherError, watcher};

/// Where [`Controller::new_sharded`](crate::Controller::new_sharded)
/// filters objects by shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShardFilter {
    /// Every replica lists and watches every object; reconciles are
    /// filtered here. The cache holds everything, so a replica is a warm
    /// standby for every shard.
    Client,
    /// The list and watch carry `shardSelector` for the shards held and
    /// are reopened whenever that set changes: the cache holds about `1/N`
    /// of the objects, and a shard taken over is listed then (a cold
    /// standby for it). Needs Kubernetes 1.36+ with `ShardedListAndWatch`
    /// on; an older server ignores the parameter (nothing breaks, the
    /// reconciles are still filtered, the cache holds everything).
    Server,
    /// [`Server`](Self::Server) when a probe finds the server filtering
    /// ([`server_filters`]), else [`Client`](Self::Client).
    #[default]
    Auto,
}

/// The probe's view of a list: only `metadata.shardInfo` is read.
#[derive(Deserialize)]
struct ProbeList {
    #[serde(default)]
    metadata: ProbeMeta,
}

#[derive(Deserialize, Default)]
struct ProbeMeta {
    #[serde(rename = "shardInfo")]
    shard_info: Option<IgnoredAny>,
}

/// The selector of the whole hash space: every object matches it.
const EVERYTHING: &str =
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";

/// Whether the API server applies `shardSelector` to lists of `api`'s
/// kind: a list of at most one object with a selector of the whole hash
/// space, answered with `metadata.shardInfo` (echoing the selector) by a
/// 1.36+ server with `ShardedListAndWatch` on. A server without the
/// feature ignores the parameter and answers without it (kube-apiserver
/// 1.36 with the gate off and 1.35 alike), so this never errs on the
/// answer's content, only on the request.
///
/// ```no_run
/// # use kubeset_client::{Api, Client, api::core::v1::ConfigMap};
/// # async fn f(client: Client) -> Result<(), kubeset_client::Error> {
/// let on = kubeset_runtime::shard::server_filters(&Api::<ConfigMap>::all(client)).await?;
/// println!("server-side shard filter: {on}");
/// # Ok(()) }
/// ```
pub async fn server_filters<K: Resource>(api: &Api<K>) -> Result<bool, kubeset_client::Error> {
    let list: ProbeList = api
        .request(Verb::Get, None)
        .param("limit", "1")
        .param("shardSelector", EVERYTHING)
        .send_json()
        .await?;
    Ok(list.metadata.shard_info.is_some())
}

/// Decides `filter` for `api`: `Auto` probes, retrying failed probes
/// with `config`'s backoff (as the watcher retries a failed list).
async fn resolve<K: Resource>(api: &Api<K>, config: &WatcherConfig, filter: ShardFilter) -> bool {
    match filter {
        ShardFilter::Client => false,
        ShardFilter::Server => true,
        ShardFilter::Auto => {
            let mut backoff = config.backoff.clone();
            loop {
                match server_filters(api).await {
                    Ok(on) => {
                        tracing::info!(server_filter = on, "shard filter chosen");
                        return on;
                    }
                    Err(error) => {
                        let delay = backoff.next_delay();
                        tracing::warn!(%error, ?delay, "probing the server-side shard filter failed; retrying");
                        tokio::time::sleep(delay).await;
                    }
                }
            }
        }
    }
}

/// The primary watch of a sharded controller: `watcher(api, config)` for
/// the client-side filter; for the server-side one, a watcher with the
/// `shardSelector` of the shards `gate` holds, replaced by a new one
/// (a relist: `Init` … `InitDone`, which the store swaps in whole) each
/// time the held set changes, and an empty state while nothing is held.
pub(crate) fn sharded_watcher<K>(
    api: Api<K>,
    config: WatcherConfig,
    gate: ShardGate,
    filter: ShardFilter,
) -> impl Stream<Item = Result<Event<K>, WatcherError>> + Send + 'static
where
    K: Resource + DeserializeOwned + Send + 'static,
{
    stream::once(async move {
        if resolve(&api, &config, filter).await {
            following(api, config, gate).boxed()
        } else {
            watcher(api, config).boxed()
        }
    })
    .flatten()
}

struct Following<K> {
    api: Api<K>,
    config: WatcherConfig,
    shards: u32,
    held: watch::Receiver<Vec<u32>>,
    /// `false` once the sharder (the sender) is gone: the last set stays.
    live: bool,
    inner: Option<BoxStream<'static, Result<Event<K>, WatcherError>>>,
}

impl<K> Following<K>
where
    K: Resource + DeserializeOwned + Send + 'static,
{
    /// The watch of the shards held now.
    fn open(&mut self) -> BoxStream<'static, Result<Event<K>, WatcherError>> {
        let held = self.held.borrow_and_update().clone();
        tracing::debug!(?held, "watching the shards held");
        match shard_selector(held, self.shards) {
            Some(sel) => watcher(self.api.clone(), self.config.clone().shards(&sel)).boxed(),
            // The server refuses an empty selector; nothing held is an
            // empty state, then quiet until a shard is acquired.
            None => stream::iter([Ok(Event::Init), Ok(Event::InitDone)])
                .chain(stream::pending())
                .boxed(),
        }
    }
}

fn following<K>(
    api: Api<K>,
    config: WatcherConfig,
    gate: ShardGate,
) -> impl Stream<Item = Result<Event<K>, WatcherError>> + Send + 'static
where
    K: Resource + DeserializeOwned + Send + 'static,
{
    let state = Following {
        api,
        config,
        shards: gate.shards(),
        held: gate.subscribe(),
        live: true,
        inner: None,
    };
    stream::unfold(state, |mut s| async move {
        loop {
            let mut inner = match s.inner.take() {
                Some(inner) => inner,
                None => s.open(),
            };
            let changed = if s.live {
                tokio::select! {
                    biased;
                    changed = s.held.changed() => changed,
                    item = inner.next() => {
                        s.inner = Some(inner);
                        return item.map(|item| (item, s));
                    }
                }
            } else {
                let item = inner.next().await;
                s.inner = Some(inner);
                return item.map(|item| (item, s));
            };
            match changed {
                // Reopen for the new set (the old watch is dropped here;
                // a half-delivered relist is restarted by the next `Init`).
                Ok(()) => {}
                Err(_) => {
                    s.live = false;
                    s.inner = Some(inner);
                }
            }
        }
    })
}
