//! [`RestConfig`] (the settings) and [`RestClient`] (one connection pool
//! plus the state shared by its requests: backoff, rate limiter, hooks).

use std::{
    fmt,
    sync::{Arc, Mutex},
    time::Duration,
};

use http::HeaderMap;

use crate::{
    auth::Authenticator,
    backoff::{BackoffSettings, Sleeper, UrlBackoff},
    desc::{
        Base, DEFAULT_ACCEPT, DEFAULT_CONTENT_TYPE, DEFAULT_MAX_RETRIES, Defaults, Prepared,
        to_http,
    },
    error::Error,
    failover::{DEFAULT_DISCOVERY_TTL, Endpoint, Endpoints, Keepalive},
    metrics::Metrics,
    rate_limit::{AdaptiveLimiter, DEFAULT_BURST, DEFAULT_QPS, RateLimiter},
    warning::{LogWarnings, WarningHandler},
};

pub(crate) mod build;

/// The default idle timeout of a resumable watch.
pub const DEFAULT_WATCH_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default limit of a non-streaming response body: 1 GiB, far above
/// any real list (kube-apiserver pages lists; an unpaged list of 100,000
/// small pods is about 400 MiB).
pub const DEFAULT_MAX_RESPONSE_BODY: usize = 1 << 30;

/// Settings of a [`RestClient`]; a by-value builder.
#[must_use]
#[derive(Clone)]
pub struct RestConfig {
    base_url: String,
    api_path: String,
    content_type: String,
    accept: String,
    timeout: Option<Duration>,
    user_agent: Option<String>,
    qps_burst: (f32, u32),
    rate_limiter: Option<Arc<dyn RateLimiter>>,
    adaptive: Option<Arc<AdaptiveLimiter>>,
    backoff: Option<BackoffSettings>,
    max_retries: u32,
    warning_handler: Arc<dyn WarningHandler>,
    metrics: Option<Arc<dyn Metrics>>,
    authenticator: Option<Arc<dyn Authenticator>>,
    tls: Option<rustls::ClientConfig>,
    default_headers: HeaderMap,
    proxy: Option<String>,
    /// `None`: tokio's timer (as [`TokioSleeper`](crate::backoff::TokioSleeper)),
    /// called only for waits that are not zero.
    sleeper: Option<Arc<dyn Sleeper>>,
    endpoints: Vec<String>,
    discovery: bool,
    discovery_ttl: Duration,
    request_deadline: Option<Duration>,
    keepalive: Option<Keepalive>,
    watch_idle_timeout: Duration,
    read_timeout: Option<Duration>,
    max_response_body: usize,
    pub(crate) wire_format: crate::content::WireFormat,
}

impl fmt::Debug for RestConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Default headers may carry impersonation data; print names only.
        let header_names: Vec<_> = self.default_headers.keys().collect();
        f.debug_struct("RestConfig")
            .field("base_url", &self.base_url)
            .field("api_path", &self.api_path)
            .field("content_type", &self.content_type)
            .field("timeout", &self.timeout)
            .field("user_agent", &self.user_agent)
            .field("backoff", &self.backoff)
            .field("max_retries", &self.max_retries)
            .field("authenticator", &self.authenticator)
            .field("custom_tls", &self.tls.is_some())
            .field("default_headers", &header_names)
            .field("proxy", &self.proxy)
            .field("endpoints", &self.endpoints)
            .field("discovery", &self.discovery)
            .field("request_deadline", &self.request_deadline)
            .field("read_timeout", &self.read_timeout)
            .field("max_response_body", &self.max_response_body)
            .field("wire_format", &self.wire_format)
            .finish_non_exhaustive()
    }
}

impl Default for RestConfig {
    /// No base URL yet, API path `/api/v1`, JSON, QPS 5 / burst 10,
    /// backoff from the environment, 10 retries, warnings logged.
    fn default() -> Self {
        Self {
            base_url: String::new(),
            api_path: "/api/v1".to_owned(),
            content_type: DEFAULT_CONTENT_TYPE.to_owned(),
            accept: DEFAULT_ACCEPT.to_owned(),
            timeout: None,
            user_agent: None,
            qps_burst: (DEFAULT_QPS, DEFAULT_BURST),
            rate_limiter: None,
            adaptive: None,
            backoff: BackoffSettings::from_env(),
            max_retries: DEFAULT_MAX_RETRIES,
            warning_handler: Arc::new(LogWarnings),
            metrics: None,
            authenticator: None,
            tls: None,
            default_headers: HeaderMap::new(),
            proxy: None,
            sleeper: None,
            endpoints: Vec::new(),
            discovery: false,
            discovery_ttl: DEFAULT_DISCOVERY_TTL,
            request_deadline: None,
            keepalive: None,
            watch_idle_timeout: DEFAULT_WATCH_IDLE_TIMEOUT,
            read_timeout: None,
            max_response_body: DEFAULT_MAX_RESPONSE_BODY,
            wire_format: crate::content::WireFormat::Json,
        }
    }
}

impl RestConfig {
    /// Defaults with this base URL.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self::default().with_base_url(base_url)
    }

    /// The API server URL (`https://host:port`); its path, if any, prefixes
    /// every request (`https://h/p` + `/api/v1` → `/p/api/v1`).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The versioned API path joined after the base URL path (default
    /// `/api/v1`; `/apis/apps/v1` for a group; empty for none).
    pub fn with_api_path(mut self, api_path: impl Into<String>) -> Self {
        self.api_path = api_path.into();
        self
    }

    /// The Content-Type of request bodies (default `application/json`).
    pub fn with_content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = content_type.into();
        self
    }

    /// The default `Accept` header (default `application/json, */*`).
    pub fn with_accept(mut self, accept: impl Into<String>) -> Self {
        self.accept = accept.into();
        self
    }

    /// The time budget of one call (client-go's `Timeout`, Patroni's
    /// per-request deadline). For `send` it bounds the **whole call**: the
    /// rate limiter's wait, every attempt with its body, the per-host
    /// backoff, every `Retry-After` sleep and every failover round; a wait
    /// the rest of the budget cannot cover fails at once with
    /// [`Error::BudgetExhausted`] (carrying the server's last answer), an
    /// attempt cut by it with [`Error::Timeout`]. For `watch` and `stream`
    /// it bounds the same steps up to the response headers; the stream
    /// itself is bounded by the request's `timeout` (plus a grace of
    /// 1 s) and by
    /// [`with_read_timeout`](Self::with_read_timeout), not by this (a
    /// controller's watch runs for hours). A request's own `timeout` on
    /// `send` shortens it. Without a budget a server may still not make a
    /// call wait more than [`MAX_SERVER_WAIT`](crate::budget::MAX_SERVER_WAIT)
    /// per retry. With several endpoints it is the failover budget unless
    /// [`with_request_deadline`](Self::with_request_deadline) is set.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The `User-Agent` header.
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }

    /// Token-bucket rate limit. `qps == 0` means the default 5, `burst == 0`
    /// the default 10; a negative `qps` disables rate limiting.
    pub fn with_qps_burst(mut self, qps: f32, burst: u32) -> Self {
        self.qps_burst = (qps, burst);
        self
    }

    /// A custom rate limiter (wins over QPS/burst, whatever the order of
    /// the calls).
    pub fn with_rate_limiter(mut self, limiter: Arc<dyn RateLimiter>) -> Self {
        self.rate_limiter = Some(limiter);
        self
    }

    /// Adaptive flow control ([`AdaptiveLimiter`]): a cap of requests in
    /// flight per API Priority and Fairness priority level, lowered on a
    /// `429` and held for its `Retry-After`, raised while answers come
    /// back. It applies beside the static limiter of
    /// [`with_qps_burst`](Self::with_qps_burst) or
    /// [`with_rate_limiter`](Self::with_rate_limiter); turn that one off
    /// with `with_qps_burst(-1.0, 0)` to follow the server alone (what a
    /// controller wants; plain clients keep client-go's 5/10 by default).
    pub fn with_adaptive_limiter(mut self, limiter: Arc<AdaptiveLimiter>) -> Self {
        self.adaptive = Some(limiter);
        self
    }

    /// Flow control for a controller, as controller-runtime's since v0.21:
    /// no static QPS/burst limiter and a fresh [`AdaptiveLimiter`] with
    /// its defaults, so the server's API Priority and Fairness decides. A
    /// limiter set with [`with_rate_limiter`](Self::with_rate_limiter)
    /// stays, as an opt-in safety net.
    ///
    /// ```
    /// let config = kubeset_rest::RestConfig::new("https://127.0.0.1:6443")
    ///     .with_adaptive_flow_control();
    /// let client = kubeset_rest::RestClient::new(config).unwrap();
    /// # let _ = client;
    /// ```
    pub fn with_adaptive_flow_control(mut self) -> Self {
        self.qps_burst = (-1.0, 0);
        self.with_adaptive_limiter(Arc::new(AdaptiveLimiter::default()))
    }

    /// Per-host exponential backoff from `base` doubling to `max`
    /// (default: from `KUBE_CLIENT_BACKOFF_BASE`/`_DURATION`, else none).
    pub fn with_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff = Some(BackoffSettings { base, max });
        self
    }

    /// No per-host backoff, whatever the environment says.
    pub fn without_backoff(mut self) -> Self {
        self.backoff = None;
        self
    }

    /// Maximum number of retries per request (default 10).
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Where code-299 warnings go (default: logged).
    pub fn with_warning_handler(mut self, handler: Arc<dyn WarningHandler>) -> Self {
        self.warning_handler = handler;
        self
    }

    /// The metrics hook.
    pub fn with_metrics(mut self, metrics: Arc<dyn Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Supplies the `Authorization` header of each attempt.
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.authenticator = Some(authenticator);
        self
    }

    /// The TLS configuration (trust roots, client certificate). Without one,
    /// the platform's trust store is used. ALPN is set to `h2, http/1.1`
    /// when the configuration has none.
    pub fn with_tls(mut self, tls: rustls::ClientConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Headers sent with every request (e.g. `Impersonate-User`); every
    /// value of a repeated name is sent (`Impersonate-Group`). A header set
    /// on the request replaces the default of the same name.
    pub fn with_default_headers(mut self, headers: HeaderMap) -> Self {
        self.default_headers = headers;
        self
    }

    /// Send every request through this proxy URL.
    pub fn with_proxy(mut self, proxy: impl Into<String>) -> Self {
        self.proxy = Some(proxy.into());
        self
    }

    /// How waits are performed (tests and simulations record them).
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = Some(sleeper);
        self
    }

    /// Further API servers of the same cluster (`https://host:port`), tried
    /// after the base URL when it fails (see the crate's failover section).
    /// Their paths are ignored: the base URL's path prefixes every request.
    /// Duplicates are dropped. Adds to the ones given before.
    pub fn with_endpoints(mut self, endpoints: impl IntoIterator<Item = String>) -> Self {
        self.endpoints.extend(endpoints);
        self
    }

    /// Discover the API servers from the `kubernetes` EndpointSlices (or
    /// Endpoints) of the `default` namespace, refreshed every
    /// [`with_endpoint_discovery_ttl`](Self::with_endpoint_discovery_ttl)
    /// (default 9.5 s). Discovered endpoints use the base URL's scheme
    /// (`https`; `http` only when the base URL is `http`). A 403 turns
    /// discovery off for the client's life. Off by default.
    pub fn with_endpoint_discovery(mut self, on: bool) -> Self {
        self.discovery = on;
        self
    }

    /// How long a discovered endpoint set is used before it is refreshed.
    pub fn with_endpoint_discovery_ttl(mut self, ttl: Duration) -> Self {
        self.discovery_ttl = ttl;
        self
    }

    /// The total budget of one call when several endpoints are known
    /// (spread over them as [`failover`](crate::failover#one-calls-budget)
    /// says).
    /// A request's own `timeout` wins; without either, the client
    /// [`timeout`](Self::with_timeout) is used, else 10 s (Patroni's read
    /// timeout). For watches and streams it covers only the wait for the
    /// response headers, and a request `timeout` (how long the watch runs)
    /// only shortens it.
    pub fn with_request_deadline(mut self, deadline: Duration) -> Self {
        self.request_deadline = Some(deadline);
        self
    }

    /// TCP keepalive of every connection (default: 30 s idle, the system's
    /// interval and count). See [`Keepalive::patroni`].
    pub fn with_tcp_keepalive(mut self, keepalive: Keepalive) -> Self {
        self.keepalive = Some(keepalive);
        self
    }

    /// A resumable watch that receives nothing (no event, no bookmark) for
    /// this long treats its server as hung and resumes on the next endpoint
    /// (default 60 s; ask for bookmarks to keep quiet watches alive).
    pub fn with_watch_idle_timeout(mut self, idle: Duration) -> Self {
        self.watch_idle_timeout = idle;
        self
    }
}

impl RestConfig {
    /// The longest wait for the next bytes from the server on an open
    /// connection (kube-rs's `read_timeout`): the response headers, the
    /// first byte of a body, and every gap between bytes of a body,
    /// streamed (watch, logs) or not. A stalled stream then ends with a
    /// timeout error ([`TransportKind::Timeout`](crate::TransportKind::Timeout)).
    /// Default none (client-go has none; kube-rs uses 295 s); the CLI sets
    /// one. Keep it above the server's bookmark interval (about a minute)
    /// for quiet watches, and know that `logs --follow` of a quiet
    /// container is cut by it.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = Some(timeout);
        self
    }

    /// The largest body a non-streaming call (`send`, and the error body of
    /// any call) reads (default [`DEFAULT_MAX_RESPONSE_BODY`], 1 GiB). A
    /// larger one fails with [`Error::ResponseTooLarge`]: at once when its
    /// `Content-Length` says so, else when the count passes the limit while
    /// reading. Streams are bounded per event instead
    /// ([`MAX_EVENT_BYTES`](crate::watch::MAX_EVENT_BYTES)).
    pub fn with_max_response_body(mut self, limit: usize) -> Self {
        self.max_response_body = limit;
        self
    }
}

/// Logs long rate-limiter waits at info level at most once per interval.
#[derive(Debug, Default)]
struct ThrottleLog {
    last: Mutex<Option<std::time::Instant>>,
}

impl ThrottleLog {
    const INTERVAL: Duration = Duration::from_secs(1);

    fn allow(&self) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = std::time::Instant::now();
        match *last {
            Some(t) if now.saturating_duration_since(t) < Self::INTERVAL => false,
            _ => {
                *last = Some(now);
                true
            }
        }
    }
}

/// What requests share.
pub(crate) struct Inner {
    pub(crate) http: Sender,
    /// `scheme://host[:port]`, no path: requests append their path.
    pub(crate) origin: String,
    /// The configured server as an endpoint (its parsed base URL).
    pub(crate) server: Endpoint,
    /// Origin, base URL path and API prefix: where descriptions start.
    pub(crate) base: Base,
    /// What every prepared request gets: default headers, `Accept`,
    /// Content-Type, the retry limit.
    pub(crate) defaults: Defaults,
    pub(crate) wire_format: crate::content::WireFormat,
    pub(crate) timeout: Option<Duration>,
    pub(crate) rate_limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) adaptive: Option<Arc<AdaptiveLimiter>>,
    pub(crate) backoff: Option<UrlBackoff>,
    pub(crate) warning_handler: Arc<dyn WarningHandler>,
    pub(crate) metrics: Option<Arc<dyn Metrics>>,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    /// A replaced sleeper; `None`: tokio's timer, through [`Inner::sleep`].
    pub(crate) sleeper: Option<Arc<dyn Sleeper>>,
    throttle_log: ThrottleLog,
    /// The API servers, in order of preference.
    pub(crate) endpoints: Endpoints,
    /// Total budget of a failover call without its own timeout.
    pub(crate) budget: Duration,
    pub(crate) watch_idle_timeout: Duration,
    pub(crate) max_response_body: usize,
    #[cfg(feature = "ws")]
    /// What streams need (TLS, `User-Agent`); `None` over a tower service.
    pub(crate) stream: Option<crate::upgrade::StreamParts>,
}

impl Inner {
    pub(crate) fn allow_throttle_info(&self) -> bool {
        self.throttle_log.allow()
    }

    /// Whether [`Inner::sleep`] has anything to do for `wait`: a replaced
    /// sleeper sees every wait, zero too; tokio's timer is not asked to
    /// wait zero (the attempt loops skip the call, and its async state).
    pub(crate) fn sleeps(&self, wait: Duration) -> bool {
        self.sleeper.is_some() || !wait.is_zero()
    }

    /// Wait `wait` through the sleeper: a replaced one sees every wait,
    /// zero too; the default (tokio's timer, as
    /// [`TokioSleeper`](crate::backoff::TokioSleeper)) costs nothing for a
    /// zero wait (no boxed future per attempt).
    pub(crate) async fn sleep(&self, wait: Duration) {
        match &self.sleeper {
            Some(sleeper) => sleeper.sleep(wait).await,
            None if wait.is_zero() => {}
            None => tokio::time::sleep(wait).await,
        }
    }
}

/// How requests leave the client.
pub(crate) enum Sender {
    /// reqwest's pooled client (the default).
    Reqwest(reqwest::Client),
    /// A user's tower service ([`RestClient::from_service`]).
    Service(crate::service::HttpService),
}

/// A client for one API server: cheap to clone, one connection pool.
#[derive(Clone)]
pub struct RestClient {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for RestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestClient")
            .field("origin", &self.inner.origin)
            .field("api_prefix", &self.inner.base.api_prefix())
            .finish_non_exhaustive()
    }
}

impl RestClient {
    /// `scheme://host[:port]` of the API server.
    pub fn origin(&self) -> &str {
        &self.inner.origin
    }

    /// The API servers in the order the next call tries them: the one that
    /// last answered first (the base URL's origin alone without failover).
    pub fn endpoints(&self) -> Vec<String> {
        self.inner
            .endpoints
            .snapshot()
            .into_iter()
            .map(|e| e.origin)
            .collect()
    }

    /// The path every request starts from (base URL path + API path).
    pub fn api_prefix(&self) -> &str {
        self.inner.base.api_prefix()
    }

    /// Where this client's requests start (for [`RequestDesc`](crate::desc::RequestDesc)s
    /// built without it).
    pub fn base(&self) -> &Base {
        &self.inner.base
    }

    /// The `http::Request` of `prepared` at the endpoint the next call
    /// tries first, with the client's default headers, its `User-Agent` and
    /// the authenticator's `Authorization` (see [`Request::into_http`](crate::Request::into_http)).
    pub async fn http_request(
        &self,
        prepared: &Prepared,
    ) -> Result<http::Request<bytes::Bytes>, Error> {
        let origin = self
            .inner
            .endpoints
            .snapshot()
            .into_iter()
            .next()
            .map_or_else(|| self.inner.origin.clone(), |e| e.origin);
        // The `User-Agent` is one of the prepared headers.
        let mut req = to_http(prepared, &origin, &self.inner.defaults)?;
        if let Some(auth) = &self.inner.authenticator {
            match auth.authorization().await {
                Ok(Some(value)) => {
                    req.headers_mut().insert(http::header::AUTHORIZATION, value);
                }
                Ok(None) => {}
                Err(source) => return Err(Error::Auth { source }),
            }
        }
        Ok(req)
    }
}

impl RestConfig {
    /// The wire format for built-in kinds (default
    /// [`WireFormat::Json`](crate::content::WireFormat::Json)); client-go's `ContentConfig{ContentType: "application/vnd.kubernetes.protobuf"}`.
    pub fn with_wire_format(mut self, format: crate::content::WireFormat) -> Self {
        self.wire_format = format;
        self
    }
}

impl RestClient {
    /// The configured wire format.
    pub fn wire_format(&self) -> crate::content::WireFormat {
        self.inner.wire_format
    }
}
