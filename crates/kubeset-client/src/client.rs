//! [`Client`]: the shared handle every API object is built on.

use std::sync::Arc;

use kubeset_rest::config::{Config, ConfigError};
use kubeset_rest::{IntoRestClient, RestClient};

/// A connection pool to an API server with its settings (rate limiter,
/// backoff, credentials) and the default namespace. Cheap to clone: clones
/// share everything.
#[derive(Debug, Clone)]
pub struct Client {
    rest: RestClient,
    default_namespace: Arc<str>,
}

/// Why a [`Client`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Neither a kubeconfig nor the in-cluster environment gave a usable config.
    #[error("could not load a client config")]
    Config {
        /// The config layer's error.
        #[source]
        source: ConfigError,
    },
    /// The config was loaded but the HTTP client could not be built from it.
    #[error("could not build the HTTP client")]
    Rest {
        /// The request layer's error.
        #[source]
        source: kubeset_rest::Error,
    },
}

impl Client {
    /// A client over an existing [`RestClient`], or, as kube-rs's
    /// `Client::new(service, namespace)`, over any tower service of
    /// `http::Request<Body>` ([`IntoRestClient`]): a `tower_test::mock`
    /// pair in a unit test, or layers of your own in front of a connection.
    /// Through a service, requests carry their path and query only and
    /// nothing is rate-limited or retried, as in kube-rs (see
    /// [`RestClient::from_service`] for a base URL and other settings).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kubeset_client::{Api, Client, api::core::v1::ConfigMap, rest::service::Body};
    /// let service = tower::service_fn(|req: http::Request<Body>| async move {
    ///     assert_eq!(req.uri(), "/api/v1/namespaces/default/configmaps/settings");
    ///     let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"}}"#;
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(Body::from(cm)))
    /// });
    /// let client = Client::new(service, "default");
    /// let cm = Api::<ConfigMap>::default_namespaced(client).get("settings").await.unwrap();
    /// assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
    /// # }
    /// ```
    pub fn new(transport: impl IntoRestClient, default_namespace: impl Into<String>) -> Self {
        Client {
            rest: transport.into_rest_client(),
            default_namespace: default_namespace.into().into(),
        }
    }

    /// Loads the config as `kubectl` would (kubeconfig from `KUBECONFIG` or
    /// `~/.kube/config`, else in-cluster) and builds a client from it.
    pub async fn try_default() -> Result<Self, ClientError> {
        let config = Config::infer()
            .await
            .map_err(|source| ClientError::Config { source })?;
        Self::try_from_config(&config)
    }

    /// Builds a client from a loaded [`Config`]: its server, credentials,
    /// limits and wire format ([`Config::with_wire_format`]; protobuf for
    /// built-in kinds needs this crate's `protobuf` feature).
    /// `Client::try_from(config)` ([`TryFrom`]) does the same with an
    /// owned `Config`, as kube-rs.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use kubeset_client::{Client, Config, rest::content::WireFormat};
    /// let config = Config::infer().await?.with_wire_format(WireFormat::Protobuf);
    /// let client = Client::try_from_config(&config)?;
    /// assert_eq!(client.rest().wire_format(), WireFormat::Protobuf);
    /// # Ok(()) }
    /// ```
    pub fn try_from_config(config: &Config) -> Result<Self, ClientError> {
        let rest_config = config
            .rest_config()
            .map_err(|source| ClientError::Config { source })?;
        let rest = RestClient::new(rest_config).map_err(|source| ClientError::Rest { source })?;
        Ok(Client::new(rest, config.default_namespace.clone()))
    }

    /// The namespace used by [`Api::default_namespaced`](crate::Api::default_namespaced).
    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    /// The request layer, for calls the typed APIs do not cover.
    pub fn rest(&self) -> &RestClient {
        &self.rest
    }
}

/// kube-rs's `Client::try_from(config)`: [`Client::try_from_config`], with
/// kube-rs's error type (the crate's [`Error`](kubeset_rest::Error), so `?`
/// works in a function returning `kubeset::Result`).
///
/// ```no_run
/// # async fn f() -> Result<(), kubeset_client::Error> {
/// use kubeset_client::{Client, Config};
/// let client = Client::try_from(Config::infer().await?)?;
/// # Ok(()) }
/// ```
impl TryFrom<Config> for Client {
    type Error = kubeset_rest::Error;

    fn try_from(config: Config) -> Result<Self, kubeset_rest::Error> {
        Ok(Client::try_from_config(&config)?)
    }
}

/// A [`ClientError`] as the crate's [`Error`](kubeset_rest::Error): a
/// configuration error becomes [`Error::Config`](kubeset_rest::Error::Config),
/// a request-layer error stays itself (kube-rs's `Client::try_default()?`
/// in a function returning `kube::Result`).
impl From<ClientError> for kubeset_rest::Error {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Config { source } => source.into(),
            ClientError::Rest { source } => source,
        }
    }
}
