//! A sharded operator: run it as several processes and they split the
//! ConfigMaps labelled `sharded=yes` of a namespace between them.
//!
//! ```sh
//! # against the cluster of the current kubeconfig, namespace default:
//! cargo run -p kubeset-runtime --features shard --example sharded -- replica-a &
//! cargo run -p kubeset-runtime --features shard --example sharded -- replica-b &
//! kubectl create configmap demo --from-literal=want=1 && kubectl label configmap demo sharded=yes
//! kubectl get leases -l shard.kubeset.dev/group=sharded-example   # who holds what
//! kill -USR1 %1   # replica-a prints its cache: objects, estimated bytes, shards held
//! ```
//!
//! Each reconcile writes `done=<want>` and `by=<replica>` annotations
//! after 20 ms of pretend work (`replica.rs`). SIGTERM or Ctrl-C releases
//! the shards at once; `kill -9` leaves them to expire (lease duration).
//! The runtime's `tests/shard.rs` runs the same replica code as several
//! processes and checks that no two reconciles of an object overlapped;
//! `cargo xtask bench --only shard` runs this binary as 1, 2 and 4
//! replicas.
//!
//! Settings from the environment (all optional):
//!
//! - `SHARDED_FILTER`: `auto` (default), `server` or `client`
//!   ([`ShardFilter`]);
//! - `SHARDED_MODE`: `shard` (default), or plain leader election on the
//!   Lease `sharded-example-leader`: `leader-warm` (every replica's cache
//!   synced, only reconciles gated: `Controller::leader_elected`) or
//!   `leader-cold` (the controller starts after winning);
//! - `SHARDED_CONCURRENCY`: reconciles at once (default 4);
//! - `SHARDED_DURATIONS`: `lease,renew,retry` in seconds (default
//!   `15,10,2`);
//! - `SHARDED_SPAN_LOG`: a file to append every reconcile's start and end
//!   to;
//! - `SHARDED_QPS`: the client's requests per second (default 50, burst
//!   twice that; `0`: no client-side limit).

mod replica;
// The writer half is the replica's; the readers are the tests' and bench's.
#[allow(dead_code)]
mod spans;

use std::time::Duration;

use kubeset_client::Client;
use kubeset_client::rest::RestClient;
use kubeset_runtime::shard::{DEFAULT_SHARDS, ShardFilter};

use replica::{Mode, Settings};

/// A setting that did not parse, named.
#[derive(Debug, thiserror::Error)]
#[error("{name}={value:?}: {why}")]
struct BadSetting {
    name: &'static str,
    value: String,
    why: &'static str,
}

fn setting(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn bad(name: &'static str, value: &str, why: &'static str) -> BadSetting {
    BadSetting {
        name,
        value: value.chars().take(64).collect(),
        why,
    }
}

fn settings(identity: String, namespace: String) -> Result<Settings, BadSetting> {
    let filter = match setting("SHARDED_FILTER").as_deref() {
        None | Some("auto") => ShardFilter::Auto,
        Some("server") => ShardFilter::Server,
        Some("client") => ShardFilter::Client,
        Some(v) => return Err(bad("SHARDED_FILTER", v, "auto, server or client")),
    };
    let mode = match setting("SHARDED_MODE").as_deref() {
        None | Some("shard") => Mode::Sharded(filter),
        Some("leader-warm") => Mode::Leader { warm: true },
        Some("leader-cold") => Mode::Leader { warm: false },
        Some(v) => return Err(bad("SHARDED_MODE", v, "shard, leader-warm or leader-cold")),
    };
    let concurrency = match setting("SHARDED_CONCURRENCY") {
        None => 4,
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| bad("SHARDED_CONCURRENCY", &v, "a number from 1 to 1024"))?,
    };
    let durations = match setting("SHARDED_DURATIONS") {
        None => (
            Duration::from_secs(15),
            Duration::from_secs(10),
            Duration::from_secs(2),
        ),
        Some(v) => {
            let secs: Vec<u64> = v
                .split(',')
                .map(|s| {
                    s.trim()
                        .parse::<u64>()
                        .ok()
                        .filter(|n| (1..=3600).contains(n))
                })
                .collect::<Option<_>>()
                .ok_or_else(|| bad("SHARDED_DURATIONS", &v, "seconds from 1 to 3600"))?;
            let [lease, renew, retry] = secs[..] else {
                return Err(bad("SHARDED_DURATIONS", &v, "three: lease,renew,retry"));
            };
            (
                Duration::from_secs(lease),
                Duration::from_secs(renew),
                Duration::from_secs(retry),
            )
        }
    };
    Ok(Settings {
        identity,
        namespace,
        group: "sharded-example".to_owned(),
        labels: Some("sharded=yes".to_owned()),
        shards: DEFAULT_SHARDS,
        durations,
        mode,
        concurrency,
        work: Duration::from_millis(20),
        span_log: setting("SHARDED_SPAN_LOG").map(Into::into),
    })
}

/// The client's limit: `SHARDED_QPS`, default 50 (burst 100); 0 is none.
fn qps() -> Result<(f32, u32), BadSetting> {
    let qps = match setting("SHARDED_QPS") {
        None => 50,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= 100_000)
            .ok_or_else(|| bad("SHARDED_QPS", &v, "a number from 0 to 100000"))?,
    };
    Ok(if qps == 0 {
        (-1.0, 0)
    } else {
        (qps as f32, qps * 2)
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::stderr)
        .init();
    let identity = std::env::args()
        .nth(1)
        .ok_or("usage: sharded <replica-name>")?;
    // The Leases need more than client-go's default 5 requests/s (see the
    // "Load" section of kubeset_runtime::shard).
    let config = kubeset_client::Config::infer().await?;
    let (qps, burst) = qps()?;
    let rest = config.rest_config()?.with_qps_burst(qps, burst);
    let client = Client::new(RestClient::new(rest)?, config.default_namespace.clone());
    let namespace = client.default_namespace().to_owned();
    // On Kubernetes 1.36+ with ShardedListAndWatch on, `auto` has the API
    // server send each replica only its shards' objects; elsewhere every
    // replica caches everything and filters here.
    replica::run(client, settings(identity, namespace)?).await?;
    Ok(())
}
