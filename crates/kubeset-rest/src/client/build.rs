//! Building a [`RestClient`] from a [`RestConfig`], in stages: where the
//! requests go ([`Topology`]), what every request carries ([`defaults`]),
//! how they are paced ([`rate_limiter`]) and how they leave (reqwest's
//! pooled client, or a user's tower service).

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http::HeaderValue;

use super::{Inner, RestClient, RestConfig, Sender, ThrottleLog};
use crate::{
    backoff::UrlBackoff,
    desc::{Base, DEFAULT_ACCEPT, DEFAULT_CONTENT_TYPE, Defaults},
    error::Error,
    failover::{DEFAULT_BUDGET, Endpoint, Endpoints, calculate_timeouts, connect_timeout},
    rate_limit::{DEFAULT_BURST, DEFAULT_QPS, RateLimiter, TokenBucket},
    service::{BoxError, HttpService},
};

/// The base URL of a client over a service that was given none: never
/// dialled (requests through the service carry the path only), it only
/// gives the descriptions a base to start from.
const SERVICE_PLACEHOLDER_URL: &str = "http://kubernetes.invalid";

impl RestClient {
    /// Build the client (parses the URL, sets up TLS and the pool).
    ///
    /// ```
    /// use kubeset_rest::{RestClient, RestConfig};
    /// let client = RestClient::new(RestConfig::new("https://127.0.0.1:6443")).unwrap();
    /// assert_eq!(client.origin(), "https://127.0.0.1:6443");
    /// ```
    pub fn new(config: RestConfig) -> Result<Self, Error> {
        if config.base_url.is_empty() {
            return Err(invalid("no base URL"));
        }
        let topology = Topology::of(&config.base_url, &config, false)?;
        let tls = tls_of(&config)?;
        let http = reqwest_client(&config, tls.clone(), &topology)?;
        Self::assemble(config, topology, Sender::Reqwest(http), Some(&tls))
    }

    /// A client that sends every request through `service` instead of its
    /// own connection pool (kube-rs's `Client::new(service, namespace)`):
    /// a `tower_test::mock` pair in a test, or a stack of tower layers over
    /// a connection of your own.
    ///
    /// With no base URL in `config` (kube-rs's behaviour) requests carry
    /// the path and query only (`/api/v1/namespaces/default/pods/p`); with
    /// one, the full URL. Rate limit, retries and backoff follow `config`
    /// ([`RestConfig::for_service`] turns them off, as kube-rs's client
    /// has none); failover endpoints are refused here, and WebSocket
    /// streams (exec, attach, port-forward) need the built-in transport.
    /// The service is buffered behind a task that the first request
    /// spawns on the current tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kubeset_rest::{RestClient, RestConfig, service::Body};
    /// let service = tower::service_fn(|req: http::Request<Body>| async move {
    ///     assert_eq!(req.uri(), "/api/v1/namespaces");
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(Body::from(r#"{"items":[]}"#)))
    /// });
    /// let client = RestClient::from_service(service, RestConfig::for_service()).unwrap();
    /// let answer = client.get().resource("namespaces").send().await.unwrap();
    /// assert_eq!(answer.status, 200);
    /// # }
    /// ```
    pub fn from_service<S, B>(service: S, config: RestConfig) -> Result<Self, Error>
    where
        S: tower::Service<http::Request<crate::service::Body>, Response = http::Response<B>>
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        if !config.endpoints.is_empty() || config.discovery {
            return Err(invalid(
                "failover endpoints need the built-in transport, not a tower service",
            ));
        }
        let relative = config.base_url.is_empty();
        let base_url = match relative {
            true => SERVICE_PLACEHOLDER_URL.to_owned(),
            false => config.base_url.clone(),
        };
        let topology = Topology::of(&base_url, &config, relative)?;
        let service = HttpService::new(service);
        Self::assemble(config, topology, Sender::Service(service), None)
    }

    /// The last stage: the shared state of every request.
    fn assemble(
        config: RestConfig,
        topology: Topology,
        http: Sender,
        #[allow(unused_variables)] tls: Option<&rustls::ClientConfig>,
    ) -> Result<Self, Error> {
        let user_agent = config
            .user_agent
            .clone()
            .unwrap_or_else(|| default_user_agent().to_owned());
        #[cfg(feature = "ws")]
        let stream = tls
            .map(|tls| crate::upgrade::StreamParts::new(tls, &user_agent, config.proxy.is_some()));
        let defaults = defaults(&config, &user_agent)?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                origin: topology.origin,
                server: topology.server,
                base: topology.base,
                defaults,
                wire_format: config.wire_format,
                timeout: config.timeout,
                rate_limiter: rate_limiter(&config),
                adaptive: config.adaptive,
                backoff: config.backoff.map(UrlBackoff::new),
                warning_handler: config.warning_handler,
                metrics: config.metrics,
                authenticator: config.authenticator,
                sleeper: config.sleeper,
                throttle_log: ThrottleLog::default(),
                endpoints: topology.endpoints,
                budget: topology.budget,
                watch_idle_timeout: config.watch_idle_timeout,
                max_response_body: config.max_response_body,
                #[cfg(feature = "ws")]
                stream,
            }),
        })
    }
}

impl RestConfig {
    /// The settings of a client over a tower service as kube-rs's
    /// `Client::new` has them: no base URL (requests carry their path),
    /// no client-side rate limit, no retries, no backoff. The rest are
    /// [`RestConfig::default`]'s.
    ///
    /// ```
    /// let config = kubeset_rest::RestConfig::for_service();
    /// # let _ = config;
    /// ```
    pub fn for_service() -> Self {
        Self::default()
            .with_qps_burst(-1.0, 0)
            .with_max_retries(0)
            .without_backoff()
    }
}

/// What a client is built over (`Client::new`'s first argument): a
/// [`RestClient`], or, as kube-rs's `Client::new(service, namespace)`, any
/// tower service of `http::Request<Body>` — a `tower_test::mock` handle,
/// a `service_fn`, a stack of layers — sent through with
/// [`RestConfig::for_service`]'s settings.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kubeset_rest::{IntoRestClient, service::Body};
/// let service = tower::service_fn(|_req: http::Request<Body>| async {
///     Ok::<_, std::convert::Infallible>(http::Response::new(Body::empty()))
/// });
/// let rest = service.into_rest_client();
/// assert_eq!(rest.origin(), "");
/// # }
/// ```
pub trait IntoRestClient {
    /// The client.
    fn into_rest_client(self) -> RestClient;
}

impl IntoRestClient for RestClient {
    fn into_rest_client(self) -> RestClient {
        self
    }
}

impl<S, B> IntoRestClient for S
where
    S: tower::Service<http::Request<crate::service::Body>, Response = http::Response<B>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn into_rest_client(self) -> RestClient {
        match RestClient::from_service(self, RestConfig::for_service()) {
            Ok(client) => client,
            // `for_service` has no endpoints and valid fixed headers: the
            // only errors `from_service` has cannot happen (a unit test
            // builds one).
            Err(e) => unreachable!("a service client's fixed settings are valid: {e}"),
        }
    }
}

/// Where requests go: the base, the configured server and the failover set.
struct Topology {
    base: Base,
    /// `scheme://host[:port]`; empty for a service given no base URL.
    origin: String,
    server: Endpoint,
    endpoints: Endpoints,
    /// Total budget of a failover call without its own timeout.
    budget: Duration,
}

impl Topology {
    /// `relative`: a service client given no base URL, whose requests
    /// carry their path and query only; its origin is empty (in errors and
    /// logs too), its base only a start for the descriptions.
    fn of(base_url: &str, config: &RestConfig, relative: bool) -> Result<Self, Error> {
        let base = Base::parse(base_url, &config.api_path)?;
        let origin = match relative {
            true => String::new(),
            false => base.origin().to_owned(),
        };
        let mut server =
            Endpoint::new(base.origin().to_owned(), base.host_key().to_owned()).map_err(invalid)?;
        server.origin.clone_from(&origin);
        let mut configured = vec![server.clone()];
        for extra in &config.endpoints {
            configured.push(Endpoint::parse(extra).map_err(invalid)?);
        }
        let endpoints = Endpoints::new(configured, config.discovery, config.discovery_ttl);
        let budget = config
            .request_deadline
            .or(config.timeout)
            .unwrap_or(DEFAULT_BUDGET);
        Ok(Self {
            base,
            origin,
            server,
            endpoints,
            budget,
        })
    }
}

/// What every prepared request gets: default headers, `Accept`,
/// Content-Type, `User-Agent`, the retry limit.
fn defaults(config: &RestConfig, user_agent: &str) -> Result<Defaults, Error> {
    let header = |what: &str, v: &str| {
        // The defaults as static values: a clone per request (and its
        // drop) is then a copy, not a reference count.
        let fixed = [DEFAULT_ACCEPT, DEFAULT_CONTENT_TYPE, default_user_agent()];
        let value = match fixed.into_iter().find(|f| *f == v) {
            Some(f) => HeaderValue::from_maybe_shared(Bytes::from_static(f.as_bytes())),
            None => HeaderValue::from_str(v),
        };
        value.map_err(|_| invalid(format!("{what} {v:?} is not a valid header value")))
    };
    // Default headers are added per request (see `Request`), not with
    // reqwest's `default_headers`, which keeps one value per name and
    // would drop all but the last `Impersonate-Group`. The `User-Agent`
    // goes into the prepared headers too (reqwest would insert it into
    // every request's map).
    let mut defaults = Defaults::new(
        config.default_headers.clone(),
        header("accept", &config.accept)?,
        header("content type", &config.content_type)?,
        config.max_retries,
    )
    .with_user_agent(header("user agent", user_agent)?);
    // The adaptive limiter learns priority levels per URL template.
    defaults.url_templates = config.metrics.is_some() || config.adaptive.is_some();
    Ok(defaults)
}

/// The configured limiter, or a token bucket from QPS/burst (a negative
/// QPS: none).
fn rate_limiter(config: &RestConfig) -> Option<Arc<dyn RateLimiter>> {
    match (&config.rate_limiter, config.qps_burst) {
        (Some(l), _) => Some(l.clone()),
        (None, (qps, _)) if qps < 0.0 => None,
        (None, (qps, burst)) => {
            let qps = if qps == 0.0 || qps.is_nan() {
                DEFAULT_QPS
            } else {
                qps
            };
            let burst = if burst == 0 { DEFAULT_BURST } else { burst };
            Some(Arc::new(TokenBucket::new(qps, burst)))
        }
    }
}

/// The configured TLS, or the default one, offering the client's ALPN
/// protocols when it names none.
fn tls_of(config: &RestConfig) -> Result<rustls::ClientConfig, Error> {
    let mut tls = match &config.tls {
        Some(tls) => tls.clone(),
        None => default_tls()?,
    };
    if tls.alpn_protocols.is_empty() {
        tls.alpn_protocols = alpn_protocols();
    }
    Ok(tls)
}

/// reqwest's pooled client with client-go's dialer and HTTP/2 settings.
fn reqwest_client(
    config: &RestConfig,
    tls: rustls::ClientConfig,
    topology: &Topology,
) -> Result<reqwest::Client, Error> {
    // client-go's dialer: 30 s to connect; with failover Patroni's
    // max(1 s, per-node timeout / 2) so a dead node is skipped quickly.
    let connect = if topology.endpoints.active() {
        let (_, per_node, _) =
            calculate_timeouts(topology.endpoints.configured_len(), topology.budget);
        connect_timeout(per_node)
    } else {
        Duration::from_secs(30)
    };
    let mut builder = reqwest::Client::builder()
        .redirect(crate::transport::redirect_policy())
        .connect_timeout(connect)
        .tls_backend_preconfigured(tls);
    // client-go's HTTP/2 health check (ReadIdleTimeout 30 s, PingTimeout
    // 15 s): a dead connection under an open watch is noticed instead of
    // hanging.
    #[cfg(feature = "http2")]
    {
        builder = builder
            .http2_keep_alive_interval(Duration::from_secs(30))
            .http2_keep_alive_timeout(Duration::from_secs(15))
            .http2_keep_alive_while_idle(true);
    }
    builder = match config.keepalive {
        // client-go's dialer: 30 s TCP keepalive.
        None => builder.tcp_keepalive(Duration::from_secs(30)),
        Some(k) => {
            let b = builder
                .tcp_keepalive(k.idle)
                .tcp_keepalive_interval(k.interval)
                .tcp_keepalive_retries(k.retries);
            #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
            let b = b.tcp_user_timeout(k.user_timeout);
            b
        }
    };
    if let Some(read) = config.read_timeout {
        builder = builder.read_timeout(read);
    }
    if let Some(proxy) = &config.proxy {
        let proxy = reqwest::Proxy::all(proxy.as_str())
            .map_err(|e| invalid(format!("proxy {proxy:?}: {e}")))?;
        builder = builder.proxy(proxy);
    }
    builder
        .build()
        .map_err(|source| Error::HttpClient { source })
}

fn invalid(reason: impl Into<String>) -> Error {
    Error::InvalidConfig {
        reason: reason.into(),
    }
}

/// The ALPN protocols the client offers: `h2` first when built with the
/// `http2` feature, else HTTP/1.1 only (a server must not pick a protocol
/// the client cannot speak).
pub(crate) fn alpn_protocols() -> Vec<Vec<u8>> {
    if cfg!(feature = "http2") {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    }
}

/// `kubeset/<version> (<os>/<arch>)`, built once.
fn default_user_agent() -> &'static str {
    static UA: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "kubeset/{} ({}/{})",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        )
    });
    &UA
}

/// The default TLS configuration (ring, platform trust store), built once
/// per process: loading the trust store is the slow part.
fn default_tls() -> Result<rustls::ClientConfig, Error> {
    static CACHED: std::sync::OnceLock<rustls::ClientConfig> = std::sync::OnceLock::new();
    if let Some(tls) = CACHED.get() {
        return Ok(tls.clone());
    }
    let tls = build_default_tls()?;
    Ok(CACHED.get_or_init(|| tls).clone())
}

fn build_default_tls() -> Result<rustls::ClientConfig, Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map(|b| b.with_no_client_auth())
        .map_err(|source| Error::Tls { source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Body;

    #[test]
    fn a_service_client_is_built_outside_a_runtime_with_relative_uris() {
        let service = tower::service_fn(|_req: http::Request<Body>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(Body::empty()))
        });
        let rest = service.into_rest_client();
        assert_eq!(rest.origin(), "");
        assert_eq!(rest.api_prefix(), "/api/v1");
    }

    #[test]
    fn a_service_client_refuses_failover_endpoints() {
        let service = tower::service_fn(|_req: http::Request<Body>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(Body::empty()))
        });
        let config = RestConfig::for_service().with_endpoints(["https://10.0.0.2".to_owned()]);
        let err = RestClient::from_service(service, config).unwrap_err();
        assert!(
            err.to_string()
                .contains("failover endpoints need the built-in transport"),
            "{err}"
        );
    }
}
