//! API-server failover in the manner of Patroni's Kubernetes client: the
//! endpoint set, its order, discovery, the per-call time budget and the
//! TCP keepalive settings.
//!
//! **Invariants:** the endpoint list is never empty (it starts as the
//! configured servers and is only replaced by a non-empty discovered set);
//! the endpoint that last answered is first; requests hold only a path and
//! query, so any attempt can go to any endpoint.
//!
//! Failover is active when the client knows more than one endpoint or
//! discovery is on; with a single configured server and no discovery the
//! attempt loop behaves exactly as it did without this module.
//!
//! # One call's budget
//!
//! A call's total time (the request's `timeout`, else the client's
//! [`with_request_deadline`](crate::RestConfig::with_request_deadline),
//! else its [`with_timeout`](crate::RestConfig::with_timeout), else
//! [`DEFAULT_BUDGET`]) is spread over the endpoints as Patroni's
//! `_calculate_timeouts` spreads it: each endpoint gets `budget / n`; with
//! at least 1 s each, a single endpoint is tried twice (each try at
//! least 1 s); under 1 s each, only `⌊budget / 1 s⌋` endpoints are tried
//! (a call whose whole budget is under 1 s still gets one attempt on the
//! first endpoint). The connect timeout of a failover client is half the
//! share of its configured endpoint count, at least 1 s. So 3 endpoints
//! and 10 s give 3.33 s to each, and 1 endpoint and 2 s gives two tries
//! of 1 s.

use std::{
    net::IpAddr,
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::Value;
use tokio::time::Instant;

pub use crate::error::EndpointFailure;

/// The default total budget of one call when neither the request nor the
/// client sets a timeout (Patroni's read timeout, 10 s).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);

/// How long a discovered endpoint set is used before it is refreshed
/// (Patroni: `loop_wait` − 0.5 s with the default `loop_wait` of 10 s).
pub const DEFAULT_DISCOVERY_TTL: Duration = Duration::from_millis(9500);

/// The shortest time given to one endpoint.
const MIN_NODE_TIMEOUT: Duration = Duration::from_secs(1);

/// Where discovery looks first (one slice per API server replica).
pub(crate) const ENDPOINT_SLICES_PATH: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes";

/// Where discovery looks when the slices say nothing.
pub(crate) const ENDPOINTS_PATH: &str = "/api/v1/namespaces/default/endpoints/kubernetes";

/// Patroni's `_calculate_timeouts`: how to spend a total `timeout` over
/// `endpoints` API servers. Returns `(nodes, per_node_timeout,
/// per_node_retries)`:
///
/// - per node: `timeout / endpoints`;
/// - if that is at least 1 s, a node may be tried up to `3 − min(n, 2)`
///   times (so one retry only when there is a single endpoint), each try
///   getting at least 1 s, and the per-node timeout is divided by the
///   number of tries;
/// - if it is under 1 s, nodes are dropped until each gets at least 1 s
///   (`nodes = ⌊timeout / 1 s⌋`, per node `timeout / nodes`, no retries);
/// - zero nodes (and the whole `timeout` as per-node value) when even one
///   node would get less than 1 s, and when `endpoints` is 0.
///
/// `calculate_timeouts(3, 10 s)` → `(3, 3.333… s, 0)`;
/// `calculate_timeouts(1, 2 s)` → `(1, 1 s, 1)`.
pub(crate) fn calculate_timeouts(endpoints: usize, timeout: Duration) -> (usize, Duration, u32) {
    if endpoints == 0 || timeout.is_zero() {
        return (0, timeout, 0);
    }
    let n = u32::try_from(endpoints).unwrap_or(u32::MAX);
    let per_node = timeout / n;
    if per_node < MIN_NODE_TIMEOUT {
        // As many nodes as get a whole second each.
        let nodes = timeout.as_secs();
        if nodes == 0 {
            return (0, timeout, 0);
        }
        let nodes_u32 = u32::try_from(nodes).unwrap_or(u32::MAX);
        let nodes = usize::try_from(nodes).unwrap_or(usize::MAX).min(endpoints);
        return (nodes, timeout / nodes_u32, 0);
    }
    let max_tries = 3 - n.min(2);
    let mut tries = max_tries;
    while tries > 1 && per_node / tries < MIN_NODE_TIMEOUT {
        tries -= 1;
    }
    (endpoints, per_node / tries, tries - 1)
}

/// Connect timeout for a per-node timeout: `max(1 s, per_node / 2)`.
pub(crate) fn connect_timeout(per_node: Duration) -> Duration {
    (per_node / 2).max(MIN_NODE_TIMEOUT)
}

/// TCP keepalive settings of every connection of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Idle time before the first probe (`TCP_KEEPIDLE`).
    pub idle: Duration,
    /// Time between probes (`TCP_KEEPINTVL`).
    pub interval: Duration,
    /// Unanswered probes before the connection is dropped (`TCP_KEEPCNT`).
    pub retries: u32,
    /// How long sent data may stay unacknowledged (`TCP_USER_TIMEOUT`,
    /// Linux only; ignored elsewhere).
    pub user_timeout: Option<Duration>,
}

impl Keepalive {
    /// Patroni's settings from its `(ttl, loop_wait, retry_timeout)`
    /// (seconds): idle `loop_wait + retry_timeout`, interval
    /// `max(1, (ttl − idle) / 3)` (integer seconds), 3 probes, user
    /// timeout `ttl`. `(30, 10, 10)` → idle 20 s, interval 3 s, 30 000 ms.
    pub fn patroni(ttl: u64, loop_wait: u64, retry_timeout: u64) -> Self {
        let idle = loop_wait.saturating_add(retry_timeout);
        let interval = (ttl.saturating_sub(idle) / 3).max(1);
        Self {
            idle: Duration::from_secs(idle),
            interval: Duration::from_secs(interval),
            retries: 3,
            user_timeout: Some(Duration::from_secs(ttl)),
        }
    }
}

/// One API server: its origin, its backoff key and its parsed base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `scheme://host[:port]`.
    pub(crate) origin: String,
    /// `host:port`.
    pub(crate) host_key: String,
    /// `origin` parsed once; each attempt sets only its path and query.
    pub(crate) base: reqwest::Url,
}

impl Endpoint {
    /// Parse a server URL (any path is ignored: the configured base URL's
    /// path prefixes every request).
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let u = reqwest::Url::parse(url).map_err(|e| format!("server URL {url:?}: {e}"))?;
        if !matches!(u.scheme(), "http" | "https") {
            return Err(format!("server URL {url:?}: scheme must be http or https"));
        }
        let host = u
            .host_str()
            .ok_or_else(|| format!("server URL {url:?} has no host"))?;
        let port = u.port_or_known_default().unwrap_or(443);
        Self::new(u.origin().ascii_serialization(), format!("{host}:{port}"))
    }

    /// An endpoint from its origin (`scheme://host[:port]`) and backoff key.
    pub(crate) fn new(origin: String, host_key: String) -> Result<Self, String> {
        let base =
            reqwest::Url::parse(&origin).map_err(|e| format!("server URL {origin:?}: {e}"))?;
        Ok(Self {
            origin,
            host_key,
            base,
        })
    }

    /// The URL of one attempt: this endpoint with `path` and `query`
    /// (already escaped, see [`Prepared`](crate::desc::Prepared)). Only the
    /// path and query are parsed, never the host.
    pub(crate) fn url(&self, path: &str, query: &str) -> reqwest::Url {
        let mut url = self.base.clone();
        url.set_path(path);
        url.set_query((!query.is_empty()).then_some(query));
        url
    }
}

struct State {
    list: Vec<Endpoint>,
    /// When discovery last ran (successfully or not).
    refreshed: Option<Instant>,
}

/// The endpoint set of one client.
pub(crate) struct Endpoints {
    /// The configured server, then the extra ones (deduplicated).
    configured: Vec<Endpoint>,
    /// Scheme of discovered endpoints: that of the configured server.
    pub(crate) scheme: &'static str,
    discovery: AtomicBool,
    ttl: Duration,
    state: Mutex<State>,
    /// Held by the one call that refreshes; others go on with the old set.
    pub(crate) refreshing: tokio::sync::Mutex<()>,
    forbidden_logged: AtomicBool,
}

impl Endpoints {
    pub(crate) fn new(configured: Vec<Endpoint>, discovery: bool, ttl: Duration) -> Self {
        let mut unique: Vec<Endpoint> = Vec::with_capacity(configured.len());
        for e in configured {
            if !unique.iter().any(|u| u.origin == e.origin) {
                unique.push(e);
            }
        }
        let scheme = match unique.first() {
            Some(e) if e.origin.starts_with("http://") => "http",
            _ => "https",
        };
        Self {
            state: Mutex::new(State {
                list: unique.clone(),
                refreshed: None,
            }),
            configured: unique,
            scheme,
            discovery: AtomicBool::new(discovery),
            ttl,
            refreshing: tokio::sync::Mutex::new(()),
            forbidden_logged: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether calls go through the failover loop.
    pub(crate) fn active(&self) -> bool {
        self.configured.len() > 1 || self.discovery_enabled()
    }

    pub(crate) fn discovery_enabled(&self) -> bool {
        self.discovery.load(Ordering::Relaxed)
    }

    /// The current order.
    pub(crate) fn snapshot(&self) -> Vec<Endpoint> {
        self.lock().list.clone()
    }

    /// How many endpoints were configured (before discovery).
    pub(crate) fn configured_len(&self) -> usize {
        self.configured.len()
    }

    /// Put `origin` first (it just answered after another one failed).
    pub(crate) fn prefer(&self, origin: &str) {
        let mut st = self.lock();
        if let Some(i) = st.list.iter().position(|e| e.origin == origin)
            && i != 0
        {
            let e = st.list.remove(i);
            st.list.insert(0, e);
        }
    }

    /// Put `origin` last (its watch broke); no-op with one endpoint.
    pub(crate) fn demote(&self, origin: &str) {
        let mut st = self.lock();
        if let Some(i) = st.list.iter().position(|e| e.origin == origin) {
            let e = st.list.remove(i);
            st.list.push(e);
        }
    }

    /// Make the next call refresh the set (after a failover).
    pub(crate) fn mark_stale(&self) {
        self.lock().refreshed = None;
    }

    pub(crate) fn stale(&self) -> bool {
        self.discovery_enabled()
            && self
                .lock()
                .refreshed
                .is_none_or(|t| t.elapsed() >= self.ttl)
    }

    /// Replace the set with discovered origins, keeping the current first
    /// endpoint first when it is among them.
    pub(crate) fn set_discovered(&self, origins: Vec<String>) {
        let mut list: Vec<Endpoint> = origins
            .iter()
            .filter_map(|o| Endpoint::parse(o).ok())
            .collect();
        let mut st = self.lock();
        st.refreshed = Some(Instant::now());
        if list.is_empty() {
            return;
        }
        if let Some(first) = st.list.first()
            && let Some(i) = list.iter().position(|e| e.origin == first.origin)
        {
            let e = list.remove(i);
            list.insert(0, e);
        }
        st.list = list;
    }

    pub(crate) fn keep_previous(&self) {
        self.lock().refreshed = Some(Instant::now());
    }

    /// A 403 on discovery: stop discovering, use the configured servers.
    pub(crate) fn forbid(&self) {
        self.discovery.store(false, Ordering::Relaxed);
        let mut st = self.lock();
        st.list = self.configured.clone();
        st.refreshed = Some(Instant::now());
        drop(st);
        if !self.forbidden_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "API server discovery forbidden (403); using the configured servers only"
            );
        }
    }
}

/// Format an IP address for a URL authority (IPv6 in brackets).
fn host_of(ip: &str) -> Option<String> {
    match ip.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => Some(v4.to_string()),
        IpAddr::V6(v6) => Some(format!("[{v6}]")),
    }
}

/// The port named `https` with protocol TCP (the default protocol).
fn https_port(ports: Option<&Value>) -> Option<u64> {
    ports?.as_array()?.iter().find_map(|p| {
        let name = p.get("name").and_then(Value::as_str).unwrap_or("");
        let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
        if name == "https" && proto == "TCP" {
            p.get("port")
                .and_then(Value::as_u64)
                .filter(|port| (1..=65535).contains(port))
        } else {
            None
        }
    })
}

fn push_unique(out: &mut Vec<String>, scheme: &str, ip: &str, port: u64) {
    if let Some(host) = host_of(ip) {
        let url = format!("{scheme}://{host}:{port}");
        if !out.contains(&url) {
            out.push(url);
        }
    }
}

/// Origins from an `EndpointSliceList`: every ready endpoint's addresses
/// with its slice's `https`/TCP port (each slice may have its own port).
pub(crate) fn from_endpoint_slices(list: &Value, scheme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let items = list.get("items").and_then(Value::as_array);
    for slice in items.into_iter().flatten() {
        let Some(port) = https_port(slice.get("ports")) else {
            continue;
        };
        let endpoints = slice.get("endpoints").and_then(Value::as_array);
        for ep in endpoints.into_iter().flatten() {
            let ready = ep
                .pointer("/conditions/ready")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            let addrs = ep.get("addresses").and_then(Value::as_array);
            for a in addrs.into_iter().flatten().filter_map(Value::as_str) {
                push_unique(&mut out, scheme, a, port);
            }
        }
    }
    out
}

/// Origins from an `Endpoints` object: every subset's ready addresses with
/// that subset's `https`/TCP port.
pub(crate) fn from_endpoints(obj: &Value, scheme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let subsets = obj.get("subsets").and_then(Value::as_array);
    for subset in subsets.into_iter().flatten() {
        let Some(port) = https_port(subset.get("ports")) else {
            continue;
        };
        let addrs = subset.get("addresses").and_then(Value::as_array);
        for a in addrs.into_iter().flatten() {
            if let Some(ip) = a.get("ip").and_then(Value::as_str) {
                push_unique(&mut out, scheme, ip, port);
            }
        }
    }
    out
}

/// Fisher–Yates with xorshift64 seeded from std's random hash keys: load
/// spreading over a handful of servers needs no cryptographic randomness
/// (nor a `rand` dependency in every client build).
pub(crate) fn shuffle<T>(list: &mut [T]) {
    use std::hash::{BuildHasher as _, RandomState};
    let mut state = RandomState::new().hash_one(std::time::SystemTime::now()) | 1;
    for i in (1..list.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let bound = u64::try_from(i + 1).unwrap_or(u64::MAX);
        let j = usize::try_from(state % bound).unwrap_or(0);
        list.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_permutes_and_varies() {
        let mut orders = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let mut v = vec![1, 2, 3, 4];
            shuffle(&mut v);
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [1, 2, 3, 4]);
            orders.insert(v);
        }
        // 24 orders exist; a fair shuffle shows each one within 200 draws
        // with probability > 0.9997, so demanding 20 of them cannot flake.
        assert!(orders.len() >= 20, "only {} orders", orders.len());
        let mut empty: [u8; 0] = [];
        shuffle(&mut empty);
        let mut one = [7];
        shuffle(&mut one);
        assert_eq!(one, [7]);
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn check(n: usize, t: f64, want: (usize, f64, u32)) {
        let (nodes, per, retries) = calculate_timeouts(n, secs(t));
        assert_eq!(nodes, want.0, "nodes for n={n} t={t}");
        assert!(
            (per.as_secs_f64() - want.1).abs() < 1e-6,
            "per-node for n={n} t={t}: {per:?}"
        );
        assert_eq!(retries, want.2, "retries for n={n} t={t}");
    }

    #[test]
    fn budget_vectors() {
        check(1, 10.0, (1, 5.0, 1));
        check(2, 10.0, (2, 5.0, 0));
        check(3, 10.0, (3, 10.0 / 3.0, 0));
        check(5, 10.0, (5, 2.0, 0));
        check(10, 10.0, (10, 1.0, 0));
        check(1, 2.0, (1, 1.0, 1));
        for n in [2, 3, 5, 100] {
            check(n, 2.0, (2, 1.0, 0));
        }
        for n in [1, 2, 3, 10] {
            check(n, 0.5, (0, 0.5, 0));
        }
    }

    #[test]
    fn budget_edges() {
        check(0, 10.0, (0, 10.0, 0));
        check(0, 0.0, (0, 0.0, 0));
        check(3, 0.0, (0, 0.0, 0));
        // One node with 1.5 s: a retry would get under 1 s each.
        check(1, 1.5, (1, 1.5, 0));
        // 20 nodes in 10 s: 10 nodes of 1 s.
        check(20, 10.0, (10, 1.0, 0));
        // 3 nodes in 2.5 s: 2 nodes of 1.25 s.
        check(3, 2.5, (2, 1.25, 0));
        check(usize::MAX, 10.0, (10, 1.0, 0));
    }

    #[test]
    fn connect_timeouts() {
        assert_eq!(connect_timeout(secs(5.0)), secs(2.5));
        assert_eq!(connect_timeout(secs(1.0)), secs(1.0));
        assert_eq!(connect_timeout(secs(0.2)), secs(1.0));
    }

    #[test]
    fn keepalive_like_patroni() {
        let k = Keepalive::patroni(30, 10, 10);
        assert_eq!(k.idle, secs(20.0));
        assert_eq!(k.interval, secs(3.0));
        assert_eq!(k.retries, 3);
        assert_eq!(k.user_timeout, Some(Duration::from_millis(30000)));
        // ttl below idle: interval at least 1 s.
        let k = Keepalive::patroni(10, 10, 10);
        assert_eq!(k.interval, secs(1.0));
    }

    #[test]
    fn parse_slices_several_ports_ipv6_not_ready() {
        let v = serde_json::json!({"items": [
            {"addressType": "IPv4", "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
             "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": true}},
                           {"addresses": ["10.0.0.9"], "conditions": {"ready": false}}]},
            {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 7443}],
             "endpoints": [{"addresses": ["10.0.0.2", "not-an-ip"]}]},
            {"addressType": "IPv6", "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
             "endpoints": [{"addresses": ["fd00::1"]}]},
            {"ports": [{"name": "https", "port": 6443, "protocol": "UDP"}],
             "endpoints": [{"addresses": ["10.0.0.3"]}]},
            {"endpoints": [{"addresses": ["10.0.0.4"]}]}
        ]});
        assert_eq!(
            from_endpoint_slices(&v, "https"),
            [
                "https://10.0.0.1:6443",
                "https://10.0.0.2:7443",
                "https://[fd00::1]:6443"
            ]
        );
        assert!(from_endpoint_slices(&serde_json::json!({"items": []}), "https").is_empty());
        assert!(from_endpoint_slices(&serde_json::json!([1]), "https").is_empty());
    }

    #[test]
    fn parse_endpoints_subsets() {
        let v = serde_json::json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]},
            {"addresses": [{"ip": "::1"}], "ports": [{"name": "https", "port": 16443}]},
            {"addresses": [{"ip": "10.0.0.5"}], "ports": [{"name": "metrics", "port": 1}]},
            {"notReadyAddresses": [{"ip": "10.0.0.6"}], "ports": [{"name": "https", "port": 1}]}
        ]});
        assert_eq!(
            from_endpoints(&v, "http"),
            ["http://10.0.0.1:6443", "http://[::1]:16443"]
        );
    }

    #[test]
    fn order_prefer_demote_and_dedup() {
        let e = |u: &str| Endpoint::parse(u).unwrap();
        let eps = Endpoints::new(
            vec![
                e("https://a:1"),
                e("https://b:2"),
                e("https://a:1/x"),
                e("https://c:3"),
            ],
            false,
            DEFAULT_DISCOVERY_TTL,
        );
        let order = |eps: &Endpoints| -> Vec<String> {
            eps.snapshot().into_iter().map(|e| e.origin).collect()
        };
        assert!(eps.active());
        assert_eq!(order(&eps), ["https://a:1", "https://b:2", "https://c:3"]);
        eps.prefer("https://c:3");
        assert_eq!(order(&eps), ["https://c:3", "https://a:1", "https://b:2"]);
        eps.demote("https://c:3");
        assert_eq!(order(&eps), ["https://a:1", "https://b:2", "https://c:3"]);
        eps.set_discovered(vec!["https://z:9".into(), "https://a:1".into()]);
        assert_eq!(order(&eps), ["https://a:1", "https://z:9"]);
        eps.set_discovered(Vec::new());
        assert_eq!(order(&eps), ["https://a:1", "https://z:9"]);
        eps.forbid();
        assert_eq!(order(&eps), ["https://a:1", "https://b:2", "https://c:3"]);
        assert!(!eps.discovery_enabled());
        let single = Endpoints::new(vec![e("http://h")], false, DEFAULT_DISCOVERY_TTL);
        assert!(!single.active());
        assert_eq!(single.scheme, "http");
        assert_eq!(single.snapshot()[0].host_key, "h:80");
    }
}
