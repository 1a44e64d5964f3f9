//! Where the API server is and how to authenticate to it: kubeconfig files
//! (merged with client-go's rules), the in-cluster service account, exec
//! credential plugins, the legacy `auth-provider`s `gcp` (its cached
//! `access-token` or its `cmd-path`; Google application default
//! credentials with the feature `oauth`) and `oidc` (feature `oidc`), and
//! the rustls configuration.
//!
//! ```no_run
//! # async fn f() -> Result<(), kubeset_rest::config::ConfigError> {
//! let config = kubeset_rest::config::Config::infer().await?;
//! let tls = config.tls.client_config()?;
//! # Ok(()) }
//! ```

mod auth;
mod error;
mod exec;
mod gcp;
#[cfg(feature = "oauth")]
mod gcp_adc;
mod incluster;
mod jsonpath;
mod kubeconfig;
#[cfg(feature = "oidc")]
mod oidc;
mod plugin;
mod resolve;
mod rest;
mod rfc3339;
mod secret;
mod tls;

use std::{collections::BTreeMap, fmt, sync::Arc, time::Duration};

use http::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

pub use self::{
    auth::{BasicAuth, ServiceAccountToken, StaticToken, TokenFile},
    error::{ConfigError, MAX_FILE_BYTES},
    exec::{
        DEFAULT_EXEC_TIMEOUT, ExecAuthenticator, MAX_EXEC_OUTPUT, MAX_EXEC_TIMEOUT,
        MIN_EXEC_TIMEOUT,
    },
    incluster::{InClusterOptions, SERVICE_ACCOUNT_DIR},
    kubeconfig::{
        AuthInfo, AuthProvider, Cluster, Context, ExecConfig, ExecEnvVar, Kubeconfig,
        NamedAuthInfo, NamedCluster, NamedContext, NamedExtension,
    },
    secret::Secret,
    tls::{ClientIdentity, TlsSettings, provider},
};
use crate::{auth::Authenticator, content::WireFormat};

/// Which context, cluster and user to use from a kubeconfig; `None` means
/// the current context and the cluster and user it names. kube-rs's
/// `KubeConfigOptions`, field for field, so it is built as a struct literal
/// (`KubeConfigOptions { context: Some(c), ..Default::default() }`) or with
/// the builders. The exec plugin's time limit is set on the loaded
/// [`Config`] ([`Config::with_exec_timeout`]).
///
/// ```
/// use kubeset_rest::config::KubeConfigOptions;
/// let options = KubeConfigOptions {
///     context: Some("kind-dev".to_owned()),
///     cluster: None,
///     user: None,
/// };
/// assert_eq!(options, KubeConfigOptions::default().with_context("kind-dev"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeConfigOptions {
    /// Context name (`--context`).
    pub context: Option<String>,
    /// Cluster name overriding the context's (`--cluster`).
    pub cluster: Option<String>,
    /// User name overriding the context's (`--user`).
    pub user: Option<String>,
}

impl KubeConfigOptions {
    /// Uses the named context.
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Uses the named cluster instead of the context's.
    #[must_use]
    pub fn with_cluster(mut self, cluster: impl Into<String>) -> Self {
        self.cluster = Some(cluster.into());
        self
    }

    /// Uses the named user instead of the context's.
    #[must_use]
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }
}

/// Identity to impersonate (`Impersonate-*` headers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Impersonation {
    /// `Impersonate-User`.
    pub user: Option<String>,
    /// `Impersonate-Uid`.
    pub uid: Option<String>,
    /// `Impersonate-Group`, one header per group.
    pub groups: Vec<String>,
    /// `Impersonate-Extra-<key>`.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// A resolved client configuration: where the API server is, how to trust
/// it and how to authenticate. Secrets are redacted in `Debug` and
/// `Display`.
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    /// The API server, without a trailing `/` in its path.
    pub cluster_url: Url,
    /// Namespace used when a request does not name one.
    pub default_namespace: String,
    /// TLS settings; [`TlsSettings::client_config`] builds the rustls config.
    pub tls: TlsSettings,
    /// Skip verifying the server's certificate (kube-rs's
    /// `Config::accept_invalid_certs`; the kubeconfig's
    /// `insecure-skip-tls-verify`). Either this or
    /// [`TlsSettings::insecure_skip_verify`] turns verification off.
    pub accept_invalid_certs: bool,
    /// Supplies the `Authorization` header, if any.
    pub authenticator: Option<Arc<dyn Authenticator>>,
    /// Identity to impersonate.
    pub impersonate: Impersonation,
    /// Proxy for all requests.
    pub proxy_url: Option<Url>,
    /// Client-side rate limit: queries per second (client-go default 5).
    pub qps: f32,
    /// Client-side rate limit: burst (client-go default 10).
    pub burst: u32,
    /// The time budget of one call: for `send` the whole call (rate
    /// limiter, attempts, backoff, `Retry-After` sleeps, failover), for
    /// watches and streams until the response headers; see
    /// [`RestConfig::with_timeout`](crate::RestConfig::with_timeout).
    /// `None`: no budget (a server may still not ask for a wait above
    /// [`MAX_SERVER_WAIT`](crate::budget::MAX_SERVER_WAIT)).
    pub timeout: Option<Duration>,
    /// `User-Agent`; `None` lets the request layer choose.
    pub user_agent: Option<String>,
    /// Further API servers of the same cluster, for failover.
    pub extra_endpoints: Vec<Url>,
    /// Discover the cluster's API servers from the `kubernetes`
    /// EndpointSlices (see [`RestConfig::with_endpoint_discovery`](crate::RestConfig::with_endpoint_discovery)).
    /// Off by default.
    pub endpoint_discovery: bool,
    /// Budget of one call over all endpoints when several are known
    /// ([`RestConfig::with_request_deadline`](crate::RestConfig::with_request_deadline)); `None`: `timeout`, else 10 s.
    pub request_deadline: Option<Duration>,
    /// Silence after which a resumable watch moves to the next endpoint
    /// ([`RestConfig::with_watch_idle_timeout`](crate::RestConfig::with_watch_idle_timeout)); `None`: 60 s.
    pub watch_idle_timeout: Option<Duration>,
    /// The longest wait for the next bytes of a response, streamed or not
    /// ([`RestConfig::with_read_timeout`](crate::RestConfig::with_read_timeout)); `None`: none.
    pub read_timeout: Option<Duration>,
    /// The largest non-streaming body read
    /// ([`RestConfig::with_max_response_body`](crate::RestConfig::with_max_response_body)); `None`: 1 GiB.
    pub max_response_body: Option<usize>,
    /// What the client speaks for built-in kinds
    /// ([`with_wire_format`](Self::with_wire_format)); default
    /// [`WireFormat::Json`], as client-go's `ContentConfig` and kube-rs
    /// (which has only JSON).
    pub wire_format: WireFormat,
    /// The exec credential plugin of the kubeconfig user, if any (the
    /// authenticator and/or the client identity); see
    /// [`with_exec_timeout`](Self::with_exec_timeout).
    exec: Option<Arc<ExecAuthenticator>>,
    /// The kubeconfig user's `auth-provider: gcp`, if any (its `cmd-path`
    /// runs with the exec timeout).
    gcp: Option<Arc<gcp::GcpAuthenticator>>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("cluster_url", &self.cluster_url.as_str())
            .field("default_namespace", &self.default_namespace)
            .field("tls", &self.tls)
            .field("accept_invalid_certs", &self.accept_invalid_certs)
            .field("authenticator", &self.authenticator)
            .field("impersonate", &self.impersonate)
            .field("proxy_url", &self.proxy_url.as_ref().map(redact_url))
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("timeout", &self.timeout)
            .field("user_agent", &self.user_agent)
            .field(
                "extra_endpoints",
                &self
                    .extra_endpoints
                    .iter()
                    .map(Url::as_str)
                    .collect::<Vec<_>>(),
            )
            .field("endpoint_discovery", &self.endpoint_discovery)
            .field("request_deadline", &self.request_deadline)
            .field("watch_idle_timeout", &self.watch_idle_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_response_body", &self.max_response_body)
            .field("wire_format", &self.wire_format)
            .field("exec_timeout", &self.exec_timeout())
            .finish()
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match &self.authenticator {
            None => "none".to_owned(),
            Some(a) => format!("{a:?}"),
        };
        write!(
            f,
            "server {}, namespace {}, auth {}",
            self.cluster_url, self.default_namespace, auth
        )
    }
}

/// A URL with its password (if any) replaced.
fn redact_url(url: &Url) -> String {
    let mut u = url.clone();
    if u.password().is_some() {
        let _ = u.set_password(Some("redacted"));
    }
    u.to_string()
}

/// Parses a server URL as kubeconfig's `server` and the CLI's `--server`
/// are read: `host:port` alone means https (as in client-go), a trailing
/// `/` of the path is trimmed, and a host the URL standard would turn into
/// an IPv4 address it does not look like is refused (Go takes `12345` for
/// a DNS name; neither is what the author meant).
///
/// ```
/// use kubeset_rest::config::parse_server;
/// assert_eq!(parse_server("10.0.0.1:6443").unwrap().as_str(), "https://10.0.0.1:6443/");
/// assert!(parse_server("12345").is_err());
/// ```
pub fn parse_server(server: &str) -> Result<Url, ConfigError> {
    let server = server.trim();
    let text = if server.contains("://") {
        server.to_owned()
    } else {
        format!("https://{server}")
    };
    let mut url = Url::parse(&text).map_err(|reason| ConfigError::ServerNotUrl {
        server: server.to_owned(),
        reason,
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigError::ServerScheme {
            server: server.to_owned(),
        });
    }
    match url.host() {
        None => {
            return Err(ConfigError::ServerNoHost {
                server: server.to_owned(),
            });
        }
        Some(url::Host::Ipv4(ip)) => {
            let written = written_host(&text);
            if !written.eq_ignore_ascii_case(&ip.to_string()) {
                return Err(ConfigError::ServerNumericHost {
                    server: server.to_owned(),
                    written: written.to_owned(),
                    ip,
                });
            }
        }
        Some(_) => {}
    }
    let trimmed = url.path().trim_end_matches('/').to_owned();
    url.set_path(&trimmed);
    Ok(url)
}

/// The host of a `scheme://[user@]host[:port]/…` URL as written.
fn written_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    host_port.split_once(':').map_or(host_port, |(h, _)| h)
}

impl Config {
    /// A configuration for `cluster_url` with client-go's defaults: namespace
    /// `default`, no authentication, QPS 5, burst 10.
    pub fn new(cluster_url: Url) -> Self {
        Self {
            cluster_url,
            default_namespace: "default".to_owned(),
            tls: TlsSettings::default(),
            accept_invalid_certs: false,
            authenticator: None,
            impersonate: Impersonation::default(),
            proxy_url: None,
            qps: 5.0,
            burst: 10,
            timeout: None,
            user_agent: None,
            extra_endpoints: Vec::new(),
            endpoint_discovery: false,
            request_deadline: None,
            watch_idle_timeout: None,
            read_timeout: None,
            max_response_body: None,
            wire_format: WireFormat::Json,
            exec: None,
            gcp: None,
        }
    }

    /// Speaks `format` for built-in kinds: client-go's `ContentConfig`
    /// (`ContentType: application/vnd.kubernetes.protobuf` with
    /// `AcceptContentTypes: application/vnd.kubernetes.protobuf,
    /// application/json`). Carried into [`rest_config`](Self::rest_config),
    /// so a client built from this configuration
    /// ([`RestClient::wire_format`](crate::RestClient::wire_format))
    /// negotiates it. [`WireFormat::Protobuf`] takes effect only with the
    /// `protobuf` cargo feature of `kubeset-client` (`kubeset`'s
    /// `protobuf`), and only for built-in kinds: custom resources, kinds
    /// without a protobuf codec and servers that answer `406`/`415` get
    /// JSON, as with client-go. Without the feature the client speaks JSON.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use kubeset_rest::{RestClient, config::Config, content::WireFormat};
    /// let config = Config::new("https://10.0.0.1:6443".parse()?)
    ///     .with_wire_format(WireFormat::Protobuf);
    /// let client = RestClient::new(config.rest_config()?)?;
    /// assert_eq!(client.wire_format(), WireFormat::Protobuf);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_wire_format(mut self, format: WireFormat) -> Self {
        self.wire_format = format;
        self
    }

    /// How long the exec credential plugin may run, if this configuration
    /// has one (a kubeconfig user with `exec`, or with `auth-provider: gcp`
    /// and its `cmd-path`).
    pub fn exec_timeout(&self) -> Option<Duration> {
        let gcp = || self.gcp.as_ref().and_then(|g| g.timeout());
        self.exec.as_ref().map(|e| e.timeout()).or_else(gcp)
    }

    /// Lets the exec credential plugin, if this configuration has one (or
    /// the `cmd-path` of an `auth-provider: gcp`), run
    /// for at most `timeout` (default [`DEFAULT_EXEC_TIMEOUT`], 180 s);
    /// then it and its process group are killed and the call fails with
    /// [`ConfigError::ExecTimeout`]. Set on a loaded configuration
    /// ([`infer`](Self::infer), [`from_kubeconfig`](Self::from_kubeconfig)); outside
    /// [`MIN_EXEC_TIMEOUT`]..=[`MAX_EXEC_TIMEOUT`] (1 s to 1 h) it fails with
    /// [`ConfigError::ExecTimeoutOutOfRange`]. The plugin's credential is
    /// fetched afresh on the next call. client-go and kube-rs have no such
    /// setting (and no timeout).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeset_rest::config::ConfigError> {
    /// use std::time::Duration;
    /// let config = kubeset_rest::config::Config::infer()
    ///     .await?
    ///     .with_exec_timeout(Duration::from_secs(20))?;
    /// # Ok(()) }
    /// ```
    pub fn with_exec_timeout(mut self, timeout: Duration) -> Result<Self, ConfigError> {
        if let Some(old) = self.gcp.take() {
            let new = Arc::new(old.with_timeout(exec::check_exec_timeout(timeout)?));
            if self
                .authenticator
                .as_ref()
                .is_some_and(|a| std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(&old)))
            {
                self.authenticator = Some(new.clone());
            }
            self.gcp = Some(new);
        }
        let Some(old) = self.exec.take() else {
            exec::check_exec_timeout(timeout)?;
            return Ok(self);
        };
        let new = Arc::new(old.with_timeout(timeout)?);
        if self
            .authenticator
            .as_ref()
            .is_some_and(|a| std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(&old)))
        {
            self.authenticator = Some(new.clone());
        }
        if let Some(ClientIdentity::Exec(e)) = &self.tls.client_identity
            && Arc::ptr_eq(e, &old)
        {
            self.tls.client_identity = Some(ClientIdentity::Exec(new.clone()));
        }
        self.exec = Some(new);
        Ok(self)
    }

    /// kubeconfig (`KUBECONFIG` or `~/.kube/config`) if there is one, else
    /// in-cluster; if neither works, an error that gives both reasons.
    pub async fn infer() -> Result<Self, ConfigError> {
        match Self::from_kubeconfig_sync(&KubeConfigOptions::default()) {
            Err(kubeconfig @ ConfigError::KubeconfigNotFound { .. }) => {
                Self::incluster().map_err(|incluster| ConfigError::Infer {
                    kubeconfig: Box::new(kubeconfig),
                    incluster: Box::new(incluster),
                })
            }
            other => other,
        }
    }

    /// Loads the kubeconfig from the environment ([`Kubeconfig::from_env`])
    /// and resolves the requested context; async, as kube-rs's
    /// `Config::from_kubeconfig` ([`from_kubeconfig_sync`](Self::from_kubeconfig_sync)
    /// outside a runtime).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeset_rest::config::ConfigError> {
    /// use kubeset_rest::config::{Config, KubeConfigOptions};
    /// let options = KubeConfigOptions { context: Some("kind-dev".into()), ..Default::default() };
    /// let config = Config::from_kubeconfig(&options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn from_kubeconfig(options: &KubeConfigOptions) -> Result<Self, ConfigError> {
        Self::from_kubeconfig_sync(options)
    }

    /// [`from_kubeconfig`](Self::from_kubeconfig) without `async`: reads the
    /// files and resolves the context on the calling thread.
    pub fn from_kubeconfig_sync(options: &KubeConfigOptions) -> Result<Self, ConfigError> {
        Self::from_custom_kubeconfig_sync(Kubeconfig::from_env()?, options)
    }

    /// Resolves a context of an already loaded kubeconfig; async, as
    /// kube-rs's `Config::from_custom_kubeconfig`
    /// ([`from_custom_kubeconfig_sync`](Self::from_custom_kubeconfig_sync)
    /// outside a runtime, and for what it resolves).
    pub async fn from_custom_kubeconfig(
        kubeconfig: Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<Self, ConfigError> {
        Self::from_custom_kubeconfig_sync(kubeconfig, options)
    }

    /// Resolves a context of an already loaded kubeconfig, as client-go's
    /// `clientcmd.DirectClientConfig.ClientConfig`: the context
    /// ([`KubeConfigOptions::context`], else `current-context`), its
    /// cluster and user (each overridable by the options), the server URL,
    /// proxy and trust of the cluster, the user's credentials (client
    /// certificate; `tokenFile` over `token`; basic auth; exec plugin) and
    /// impersonation. Errors name the file, the entry and the field.
    pub fn from_custom_kubeconfig_sync(
        kubeconfig: Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<Self, ConfigError> {
        let resolve::Selection {
            context,
            cluster,
            user,
        } = resolve::select(&kubeconfig, options)?;
        let mut config = Config::new(resolve::server(&cluster)?);
        if let Some(ns) = resolve::namespace(&context.value) {
            config.default_namespace = ns;
        }
        config.proxy_url = resolve::proxy(&cluster)?;
        let trust = resolve::trust(&cluster)?;
        let cluster_info = resolve::cluster_info(&config.cluster_url, &cluster.value, &trust);
        config.tls.root_certs = trust.root_certs;
        config.tls.insecure_skip_verify = trust.insecure_skip_verify;
        config.accept_invalid_certs = trust.insecure_skip_verify;
        config.tls.server_name = trust.server_name;

        config.tls.client_identity = resolve::client_certificate(&user)?;
        resolve::auth_provider(&mut config, &user)?;
        resolve::credentials(&mut config, &user, cluster_info)?;
        config.impersonate = resolve::impersonation(&user.value);
        resolve::check_headers(&config, &user)?;
        Ok(config)
    }

    /// Headers sent with every request: the impersonation headers.
    pub fn default_headers(&self) -> Result<HeaderMap, ConfigError> {
        let mut headers = HeaderMap::new();
        let value = |field: &str, v: &str| {
            HeaderValue::try_from(v).map_err(|_| ConfigError::InvalidHeader {
                entry: "impersonation".to_owned(),
                field: field.to_owned(),
            })
        };
        if let Some(u) = &self.impersonate.user {
            headers.insert("impersonate-user", value("as", u)?);
        }
        if let Some(u) = &self.impersonate.uid {
            headers.insert("impersonate-uid", value("as-uid", u)?);
        }
        for g in &self.impersonate.groups {
            headers.append("impersonate-group", value("as-groups", g)?);
        }
        for (k, vs) in &self.impersonate.extra {
            let name = HeaderName::try_from(format!("impersonate-extra-{}", percent_encode(k)))
                .map_err(|_| ConfigError::InvalidHeader {
                    entry: "impersonation".to_owned(),
                    field: format!("as-user-extra key {k:?}"),
                })?;
            for v in vs {
                headers.append(name.clone(), value("as-user-extra", v)?);
            }
        }
        Ok(headers)
    }
}

/// Percent-encodes a header-name suffix the way client-go does for
/// `Impersonate-Extra-` keys (everything but unreserved characters).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_lose_trailing_slashes() {
        let u = |s: &str| parse_server(s).unwrap().to_string();
        assert_eq!(u("https://h:6443"), "https://h:6443/");
        assert_eq!(u("https://h:6443/"), "https://h:6443/");
        assert_eq!(u("https://h/prefix//"), "https://h/prefix");
        assert_eq!(u(" https://[::1]:6443/ "), "https://[::1]:6443/");
        assert_eq!(u("127.0.0.1:6443"), "https://127.0.0.1:6443/");
        assert_eq!(u("http://h:8080"), "http://h:8080/");
        assert!(parse_server("h:6443 with space").is_err());
        assert!(parse_server("ftp://h").is_err());
        assert!(parse_server("https://").is_err());
        // Numbers the URL standard reads as IPv4 addresses are refused.
        for bad in [
            "12345",
            "https://12345:6443",
            "127.1",
            "0x7f.0.0.1",
            "010.0.0.1",
            "https://u@4294967295",
        ] {
            let err = parse_server(bad).unwrap_err().to_string();
            assert!(
                err.contains("would be dialled as the IPv4 address"),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parse_server("12345").unwrap_err().to_string(),
            "\"12345\": the host \"12345\" would be dialled as the IPv4 address 0.0.48.57; write the address in dotted form, or a DNS name"
        );
        assert_eq!(u("https://u@10.0.0.1:6443/x"), "https://u@10.0.0.1:6443/x");
    }

    #[test]
    fn impersonation_headers() {
        let mut c = Config::new(Url::parse("https://h").unwrap());
        c.impersonate = Impersonation {
            user: Some("jane".to_owned()),
            uid: Some("42".to_owned()),
            groups: vec!["a".to_owned(), "b".to_owned()],
            extra: BTreeMap::from([(
                "example.com/scopes".to_owned(),
                vec!["x".to_owned(), "y".to_owned()],
            )]),
        };
        let h = c.default_headers().unwrap();
        assert_eq!(h["impersonate-user"], "jane");
        assert_eq!(h["impersonate-uid"], "42");
        let groups: Vec<_> = h.get_all("impersonate-group").iter().collect();
        assert_eq!(groups, ["a", "b"]);
        let extra: Vec<_> = h
            .get_all("impersonate-extra-example.com%2Fscopes")
            .iter()
            .collect();
        assert_eq!(extra, ["x", "y"]);
        c.impersonate.user = Some("bad\nvalue".to_owned());
        assert!(matches!(
            c.default_headers(),
            Err(ConfigError::InvalidHeader { .. })
        ));
    }
}
